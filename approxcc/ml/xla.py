"""A variant's XLA form: its `jax.export.Exported`, run by XLA on the CPU instead of IREE.

IREE's CPU code is several times slower than `jax.jit` on some functions (convolutions, a
`lax.fori_loop` solver); XLA compiles the same StableHLO. The build (`ml/build.py`) writes
each variant that has its own CPU vmfb (not one a dispatch runs) also as
`OUT/xla/<function>-<hash>.jaxexport` (`Exported.serialize()`), times both forms side by
side on the example inputs (`side_by_side`) and records under the variant's `backend.cpu`
XLA unless IREE is clearly faster (`faster`; the exact variant: XLA, what jax.jit runs),
and under `time_ms` both medians.
`APPROXCC_ML_CPU_BACKEND` (`auto`, the default; `xla`; `iree`: no XLA form, as before) or
`build_model(cpu_backend=...)` forces the choice.
The runtime (`ml/runtime.py`) runs an `xla` variant here (`XlaRunner`) on a CPU driver; a
GPU driver runs its vmfb.
"""

from __future__ import annotations

import functools
import hashlib
import os
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from approxcc.diagnostics import CompileError
from approxcc.ml.packed import from_storage
from approxcc.ml.stored_weights import load_weights

BACKEND_ENV = "APPROXCC_ML_CPU_BACKEND"
BACKENDS = ("auto", "xla", "iree")
TIME_BUDGET_S = 1.0   # the timing of one function's variants, all of them together
REPEATS = 7           # timed calls per form and variant at most (after a warm-up call)
# IREE runs a CPU variant only where it is this much faster than XLA: XLA compiles what
# jax.jit compiles, so its form runs as fast as the user's plain path, and a few timed calls
# on a busy machine differ by about this much (IREE chosen on noise made an exact variant
# 10% slower than jax.jit).
IREE_MARGIN = 0.9


def cpu_backend(option: str | None = None) -> str:
    """The build's CPU backend mode: `option`, else $APPROXCC_ML_CPU_BACKEND, else auto."""
    mode = option or os.environ.get(BACKEND_ENV) or "auto"
    if mode not in BACKENDS:
        raise CompileError(f"unknown CPU backend '{mode}' (expected {', '.join(BACKENDS)}; "
                           f"from {'cpu_backend' if option else BACKEND_ENV})")
    return mode


def save_form(out: Path, name: str, exported: Any) -> str | None:
    """Writes `exported` (a `jax.export.Exported`) as OUT/xla/<name>-<hash>.jaxexport;
    returns its path relative to `out`, or None where it was not exported for the CPU."""
    if exported is None or "cpu" not in exported.platforms:
        return None
    data = bytes(exported.serialize())
    rel = f"xla/{name}-{hashlib.sha1(data).hexdigest()[:12]}.jaxexport"
    (out / "xla").mkdir(parents=True, exist_ok=True)
    if not (out / rel).exists():
        (out / rel).write_bytes(data)
    return rel


class XlaRunner:
    """A variant's XLA form, its weights on the CPU device once; called with the inputs, it
    returns the outputs (flattened) as jax arrays."""

    def __init__(self, root: Path, variant: Mapping[str, Any]) -> None:
        import jax

        self.exported = jax.export.deserialize(bytearray((root / variant["xla"]).read_bytes()))
        device = jax.devices("cpu")[0]

        def put(stored: list[np.ndarray]) -> list[Any]:
            return [jax.device_put(from_storage(a, sig["dtype"], sig["shape"]), device)
                    for a, sig in zip(stored, variant["weight_args"], strict=True)]

        # the runner holds them: runners of the same weights (another configuration's
        # program of the same build, another build) share one copy
        self.distinct = distinct = load_weights(root / variant["weights"], f"jax {device}", put)
        # a weight jax.export dropped (unused) is not read: zeros of its type stand for it
        self.weights = [distinct[s] if s is not None else
                        jax.device_put(np.zeros(aval.shape, aval.dtype), device)
                        for s, aval in zip(variant["xla_slots"], self.exported.in_avals,
                                           strict=False)]
        self.device = device
        exported = self.exported
        # the outputs flattened when traced, not per call: a few microseconds of Python
        # between two calls cost tens in the next one (measured: XLA's worker threads go
        # idle), what set the exact build a few percent behind jax.jit
        call = jax.jit(lambda weights, *args: jax.tree.leaves(exported.call(weights, *args)))
        # called with the inputs only, in jax.jit's compiled dispatch (no Python frame)
        self.bound = functools.partial(call, self.weights)

    def __call__(self, *inputs: Any) -> list[Any]:
        """`inputs`: numpy arrays or jax.Arrays."""
        return self.bound(*inputs)


def weight_slots(kept: Sequence[int], n_stored: int, slots: Sequence[int]) -> list[int | None]:
    """Per stored weight of a variant (before jax.export's kept filtering), the index of its
    array in the variant's `.npz` (`slots`: per kept weight), None where it was dropped."""
    kept_weights = [j for j in kept if j < n_stored]
    return [slots[kept_weights.index(j)] if j in kept_weights else None
            for j in range(n_stored)]


def faster(times: Mapping[str, float]) -> str:
    """The backend of a CPU variant timed `times` (ms by backend): XLA unless IREE is
    faster by the margin."""
    return "iree" if times["iree"] < IREE_MARGIN * times["xla"] else "xla"


def side_by_side(runs: Mapping[str, Callable[[], Any]], budget_s: float,
                 repeats: int = REPEATS) -> dict[str, float]:
    """The median ms of each of `runs` (name -> a call blocking until its outputs are
    ready): one warm-up call each, then interleaved timed calls, `repeats` each at most,
    stopping once `budget_s` has passed (at least one timed call each)."""
    start = time.perf_counter()
    for run in runs.values():
        run()
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            t = time.perf_counter()
            run()
            times[name].append((time.perf_counter() - t) * 1e3)
        if time.perf_counter() - start > budget_s:
            break
    return {name: round(statistics.median(ts), 4) for name, ts in times.items()}
