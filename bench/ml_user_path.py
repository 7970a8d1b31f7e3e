"""The user path for a real model, side by side: `approxcc build` of a decorated decoder
against `jax.jit` and the workloads' own IREE runner, and each ML knob variant against exact.

    python bench/ml_user_path.py [--models smollm2] [--tokens 16] [--repeats 3]

For each model (the decorated examples/ml/<model>_decode.py) it builds the example once
(`approxcc EXAMPLE -o BUILD --target=cpu`, skipped when BUILD/manifest.json is newer than
the example), then decodes greedily from one prompt with every runner:

- `approxcc <knob>=<label>`: the build through `approxcc.ml.runtime`, one runner per variant
  of the example's knob (the first is exact), the KV cache kept on the device
  (`on_device`);
- `jax.jit`: the same decorated step under XLA-CPU, weights as device arrays;
- `IreeRunner`: workloads/models/iree_decode.py, f32, no prefill step (the prompt through
  decode steps like the others).

The runners take turns step by step (interleaved), so load from other processes hits them
alike; ms/token is the median over the generated tokens of every repeat, each runner's
ratio to the first (approxcc exact). The machine is small and shared: read ratios, and the
load average printed beside them.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import jax
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PROMPT = "The capital of France is"

Step = Callable[[int, int], np.ndarray]   # (token, position) -> logits, the cache inside


def load_example(model: str) -> ModuleType:
    path = ROOT / "examples" / "ml" / f"{model}_decode.py"
    spec = importlib.util.spec_from_file_location(f"{model}_decode", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(model: str, out: Path) -> Path:
    example = ROOT / "examples" / "ml" / f"{model}_decode.py"
    manifest = out / "manifest.json"
    if not manifest.exists() or manifest.stat().st_mtime < example.stat().st_mtime:
        subprocess.run([str(Path(sys.executable).parent / "approxcc"), str(example), "-o",
                        str(out), "--target=cpu"], check=True)
    return manifest


class CacheStep:
    """A decode step over an explicit cache (k, v): keeps the cache between calls."""

    def __init__(self, fn: Callable[..., tuple[Any, Any, Any]], k0: Any, v0: Any) -> None:
        self.fn, self.k0, self.v0 = fn, k0, v0
        self.k, self.v = k0, v0

    def reset(self) -> None:
        self.k, self.v = self.k0, self.v0

    def __call__(self, token: int, pos: int) -> np.ndarray:
        logits, self.k, self.v = self.fn(self.k, self.v, np.int32(token), np.int32(pos))
        return np.asarray(logits).reshape(-1)


class RunnerStep:
    """workloads' IreeRunner as a Step."""

    def __init__(self, runner: Any) -> None:
        self.runner = runner

    def reset(self) -> None:
        self.runner.cache = list(self.runner._empty_cache)

    def __call__(self, token: int, pos: int) -> np.ndarray:
        return np.asarray(self.runner.decode(token, pos)).reshape(-1)


def runners(example: ModuleType, manifest: Path) -> dict[str, Any]:
    from approxcc.ml.runtime import load
    from workloads.models.iree_decode import IreeRunner

    out: dict[str, Any] = {}
    fn = next(iter(load(manifest).functions.values()))
    knob = fn.knobs[0]
    exact = knob["exact"]
    for value in [exact, *(v for v in knob["domain"] if v != exact)]:
        prog = load(manifest, config={"approxcc": "1", "knobs": {knob["name"]:
                                                                 {"value": value}}})
        label = knob["values"][knob["domain"].index(value)]
        out[f"approxcc {knob['name']}={label}"] = CacheStep(
            getattr(prog, fn.name).on_device, example.K0, example.V0)
    params = jax.device_put(example.MODEL.params)
    jitted = jax.jit(example.decode_step)
    out["jax.jit"] = CacheStep(lambda k, v, t, p: jitted(params, k, v, t, p),
                               jax.device_put(example.K0), jax.device_put(example.V0))
    out["IreeRunner f32"] = RunnerStep(IreeRunner(example.MODEL, max_len=example.MAX_LEN,
                                                  prefill_len=0))
    return out


def interleaved(steps: dict[str, Any], ids: list[int], tokens: int,
                repeats: int) -> tuple[dict[str, list[float]], dict[str, list[int]]]:
    """Greedy decoding by every runner, one step each in turn; seconds per generated token."""
    times: dict[str, list[float]] = {name: [] for name in steps}
    outputs: dict[str, list[int]] = {}
    for _ in range(repeats):
        seqs = {name: list(ids) for name in steps}
        for step in steps.values():
            step.reset()
            for pos, token in enumerate(ids[:-1]):
                step(token, pos)
        for pos in range(len(ids) - 1, len(ids) - 1 + tokens):
            for name, step in steps.items():
                start = time.perf_counter()
                logits = step(seqs[name][-1], pos)
                times[name].append(time.perf_counter() - start)
                seqs[name].append(int(np.argmax(logits)))
        outputs = {name: seq[len(ids):] for name, seq in seqs.items()}
    return times, outputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["smollm2"])
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--build-root", type=Path, default=ROOT / "build" / "ml_user_path")
    args = parser.parse_args()
    for model in args.models:
        manifest = build(model, args.build_root / model)
        example = load_example(model)
        steps = runners(example, manifest)
        ids = example.MODEL.tokenizer.encode(PROMPT)
        times, outputs = interleaved(steps, ids, args.tokens, args.repeats)
        first = next(iter(steps))
        base = statistics.median(times[first])
        load1 = os.getloadavg()[0]
        print(f"{model}: {args.tokens} tokens x {args.repeats} repeats, interleaved, "
              f"load average {load1:.1f} ({os.cpu_count()} CPUs)")
        for name in steps:
            ms = statistics.median(times[name]) * 1000
            same = sum(a == b for a, b in zip(outputs[name], outputs[first], strict=True))
            print(f"  {name:28s} {ms:8.1f} ms/token  {ms / (base * 1000):5.2f}x of "
                  f"{first}  same tokens as it: {same}/{args.tokens}  "
                  f"{example.MODEL.tokenizer.decode(outputs[name])!r}")


if __name__ == "__main__":
    main()
