"""The build's check of its variants against exact (docs/ml.md, "Checked variants").

`approxcc model.py` runs every variant its CPU build has on the example inputs
(`APPROX_EXAMPLE_ARGS`), as the runtime runs it (its vmfb, or the dispatch that runs it),
and compares its outputs with the exact function's, evaluated by JAX (`jax.jit`): a
reference that owes nothing to IREE or to the flags a variant was compiled with, so a
miscompiled exact variant is caught too. Per variant, over all outputs flattened together:

    relL2 = ||approx - exact||_2 / ||exact||_2        max |err| = max |approx - exact|

A variant past its bound (`rel_l2_bound`: `NUMERIC_REL_L2` where its knobs off exact only
round numbers, `STRUCTURAL_REL_L2` where one computes something else), or one that fails to
run or returns NaN where exact has a number, is *broken*: the build warns at the knob's
decorator, marks it in the manifest and the tuner's space leaves it out
(`approxcc.tune.space.ml_knob_space`).

Imports numpy and JAX only when called (importing approxcc does not import JAX).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from approxcc.diagnostics import CompileError

# Past these relL2s a variant is broken. The transforms that round the numbers of the same
# computation (NUMERIC: quantize, precision; and the exact variant, against JAX): 1.0, what
# an output of zeros scores, so the computation is lost (working ones sit far below:
# knob_gallery's int8 0.9%, int4-g32 13%, bf16/f16 0.06-1%). The others compute something
# else by design (a substitute, fewer layers or iterations: knob_gallery's and
# tiny_decoder's score 0.2-1.9 on their random weights): 2.0, past which no output of
# exact's size can be (||a - e|| <= ||a|| + ||e||), the scale itself is wrong. The miscompiles
# that prompted the check scored 5.2-15 (iree.NO_HOISTING). APPROXCC_ML_BROKEN_REL_L2 sets one
# bound for all.
NUMERIC_REL_L2 = 1.0
STRUCTURAL_REL_L2 = 2.0
NUMERIC = frozenset({"quantize", "precision"})
BOUND_ENV = "APPROXCC_ML_BROKEN_REL_L2"


def bound_override(given: float | None = None) -> float | None:
    """One relL2 bound for every variant: `given`, else $APPROXCC_ML_BROKEN_REL_L2, else
    None (`rel_l2_bound`'s per transform)."""
    if given is not None:
        bound, where = given, "the relL2 bound"
    else:
        text = os.environ.get(BOUND_ENV)
        if text is None:
            return None
        try:
            bound, where = float(text), f"${BOUND_ENV}"
        except ValueError:
            raise CompileError(f"${BOUND_ENV}: expected a number, got '{text}'") from None
    if not bound > 0:   # NaN too
        raise CompileError(f"{where} must be positive, got {bound}")
    return bound


def rel_l2_bound(transforms: Iterable[str], override: float | None = None) -> float:
    """The relL2 past which a variant whose knobs off exact have `transforms` is broken."""
    if override is not None:
        return override
    return STRUCTURAL_REL_L2 if any(t not in NUMERIC for t in transforms) else NUMERIC_REL_L2


@dataclass(frozen=True)
class Figures:
    """How far a variant's outputs are from exact's on the example inputs."""

    rel_l2: float | None        # None: no figure (`error` says why)
    max_abs_err: float | None
    nonfinite: int = 0          # NaN or infinite outputs where exact's differ (broken)
    masked: int = 0             # -inf outputs where exact's are finite (not in the figures)
    error: str | None = None    # why there is no figure

    def broken(self, bound: float) -> bool:
        return self.rel_l2 is None or self.rel_l2 > bound or self.nonfinite > 0

    def worst(self) -> tuple[int, float]:
        """An order of badness (smaller is better): no figure or non-finite outputs, then
        relL2."""
        if self.rel_l2 is None or self.nonfinite:
            return (1, math.inf)
        return (0, self.rel_l2)

    def to_json(self, bound: float) -> dict[str, Any]:
        """The manifest's `accuracy` of a variant (`bound`: its relL2 bound)."""
        data: dict[str, Any] = {"relL2": self.rel_l2, "max_abs_err": self.max_abs_err}
        if self.nonfinite:
            data["nonfinite"] = self.nonfinite
        if self.masked:
            data["masked"] = self.masked
        if self.error is not None:
            data["error"] = self.error
        return {**data, "bound": bound, "broken": self.broken(bound)}

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Figures:
        return Figures(data["relL2"], data["max_abs_err"], data.get("nonfinite", 0),
                       data.get("masked", 0), data.get("error"))

    def describe(self) -> str:
        """The figures as a diagnostic says them."""
        if self.error is not None:
            return self.error
        text = f"relL2 {_g(self.rel_l2)}, max |err| {_g(self.max_abs_err)}"
        if self.nonfinite:
            text += f", {self.nonfinite} NaN or infinite output(s) unlike exact's"
        if self.masked:
            text += f" ({self.masked} output(s) -inf, left out)"
        return text


def _g(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3g}"


def _round(x: float) -> float:
    return float(f"{x:.4g}")


def compare(exact: Sequence[Any], got: Sequence[Any]) -> Figures:
    """The figures of outputs `got` against `exact` (all outputs, flattened together).
    Elements that agree (the same infinity, both NaN) are equal. A -inf where exact has a
    number is *masked* (a substitute may mask outputs so, e.g. the logits outside a
    restricted vocabulary): counted, left out of relL2 and max |err|; any other NaN or
    infinity unlike exact's is *nonfinite* (broken); a variant whose every output is masked
    has no figure."""
    import numpy as np

    if len(exact) != len(got):
        return Figures(None, None, error=f"it returns {len(got)} outputs, exact {len(exact)}")
    e_parts, g_parts = [], []
    for e, g in zip(exact, got, strict=True):
        e, g = np.asarray(e), np.asarray(g)
        if e.shape != g.shape:
            return Figures(None, None, error=f"it returns an output of shape "
                                             f"{list(g.shape)}, exact {list(e.shape)}")
        e_parts.append(e.astype(np.float64).ravel())
        g_parts.append(g.astype(np.float64).ravel())
    e = np.concatenate(e_parts) if e_parts else np.zeros(0)
    g = np.concatenate(g_parts) if g_parts else np.zeros(0)
    finite = np.isfinite(e) & np.isfinite(g)
    same = (e == g) | (np.isnan(e) & np.isnan(g))
    masked = np.isneginf(g) & np.isfinite(e)
    nonfinite = int(np.count_nonzero(~same & ~masked & ~finite))
    n_masked = int(np.count_nonzero(masked))
    if n_masked and not finite.any():
        return Figures(None, None, nonfinite, n_masked,
                       error=f"every output is -inf where exact's are finite ({n_masked})")
    diff = np.where(finite, g - e, 0.0)
    norm = float(np.linalg.norm(np.where(finite, e, 0.0)))
    err = float(np.linalg.norm(diff))
    most = _round(float(np.abs(diff).max())) if diff.size else 0.0
    if norm == 0 and err > 0:   # no relative figure
        return Figures(None, most, nonfinite, n_masked,
                       error=f"exact's outputs are zero, its are not (max |err| {most:.3g})")
    return Figures(_round(err / norm) if norm else 0.0, most, nonfinite, n_masked)


def example_inputs(inputs: Sequence[Any], sigs: Sequence[Mapping[str, Any]]) -> list[Any]:
    """The example inputs of a function (`DecoratedFunction.inputs`) as arrays: an example
    given as a `jax.ShapeDtypeStruct` (a symbolic shape: no values) is zeros, each symbolic
    dimension at the least size its constraints allow (`sigs`: the manifest's inputs)."""
    import numpy as np

    arrays = []
    for x, sig in zip(inputs, sigs, strict=True):
        if isinstance(x, np.ndarray):
            arrays.append(x)
            continue
        shape = [d if isinstance(d, int) else sig["bounds"][d][0] for d in sig["shape"]]
        arrays.append(np.zeros(shape, np.dtype(sig["dtype"])))
    return arrays


def exact_outputs(fn: Callable[..., Any], weights: Any, inputs: Sequence[Any]) -> list[Any]:
    """The exact function's outputs (its leaves) on `inputs`, by `jax.jit` on the CPU."""
    import jax
    import numpy as np

    with jax.default_device(jax.devices("cpu")[0]):
        out = jax.jit(fn)(weights, *inputs)
    return [np.asarray(leaf) for leaf in jax.tree.leaves(out)]


def measure(call: Callable[[], Any], exact: Sequence[Any]) -> Figures:
    """Runs `call` (a variant on the example inputs: its output or tuple of outputs) and
    compares what it returns with `exact`; an IREE failure to run it is its `error`."""
    try:
        out = call()
    except Exception as err:  # noqa: BLE001 - IREE's run-time errors come as several types
        text = str(err).strip()
        return Figures(None, None, error="it failed on the example inputs: "
                       + (text.splitlines()[0] if text else type(err).__name__))
    return compare(exact, list(out) if isinstance(out, tuple | list) else [out])
