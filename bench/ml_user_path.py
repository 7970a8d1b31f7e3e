"""The user path for real models, side by side: `approxcc` builds of the decorated decoders
(examples/ml/<model>_decode.py: a prefill and a decode step over a KV cache) against
`jax.jit` of the same functions and the workloads' own IREE runner.

    python bench/ml_user_path.py [--models gemma3,smollm2] [--tokens 16] [--repeats 3]

Per model it builds the example once (`approxcc EXAMPLE -o BUILD --target=cpu`, skipped
when BUILD/manifest.json is newer than the example, examples/ml/kv_decoder.py and the
model code in workloads/models; a rebuild recompiles only what changed), then, in two
phases (runners freed in between):

- decode, ms/token: greedy decoding from one prompt, every runner one step in turn
  (interleaved, the order rotating from step to step): `approxcc exact`, then
  `approxcc <knob>=<label>` for each other value of each of the decode step's knobs (the
  others exact; the cache kept on the device, `on_device`), each beside its floor (the
  bytes of its variant's weights over numpy's one-pass bandwidth measured in the same
  run) and the share of it reached, `jax.jit` of the same
  decorated step (weights as device arrays), and workloads' `IreeRunner` (f32, its own
  compile of the model, the prompt through decode steps like the others);
- prefill, tokens/s at PREFILL_LEN tokens: a prompt of that many tokens through the
  prefill step (all tokens but the last written into the cache) and one decode step (the
  last token's logits), `approxcc exact` and `approxcc prefill_weights=<label>` for each
  other value of the prefill knob against `jax.jit`, interleaved per repeat (the order rotating).

Figures are medians over every generated token (decode) or repeat (prefill), each runner's
ratio to approxcc exact; "same tokens" compares each runner's tokens with it. The machine is
small and shared: read ratios, and the load average printed beside them.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from ml_decode import measure_bandwidth

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "ml"
PROMPT = "The capital of France is"
# Long enough for PREFILL_LEN tokens in either tokenizer.
PREFILL_TEXT = ("The history of the city begins with a small settlement on an island in the "
                "river, where fishermen and traders built wooden houses and a market. ") * 12


def load_example(model: str) -> ModuleType:
    sys.path.insert(0, str(EXAMPLES))   # the examples import kv_decoder beside them
    spec = importlib.util.spec_from_file_location(f"{model}_decode",
                                                  EXAMPLES / f"{model}_decode.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(model: str, out: Path) -> Path:
    sources = [EXAMPLES / f"{model}_decode.py", EXAMPLES / "kv_decoder.py",
               *(ROOT / "workloads" / "models").glob("*.py"),   # the traced model code,
               *(ROOT / "approxcc" / "ml").glob("*.py")]        # its lowering and flags
    manifest = out / "manifest.json"
    if not manifest.exists() or manifest.stat().st_mtime < max(s.stat().st_mtime
                                                                for s in sources):
        subprocess.run([str(Path(sys.executable).parent / "approxcc"), str(sources[0]), "-o",
                        str(out), "--target=cpu"], check=True)
    return manifest


class CacheStep:
    """A decode step `(token, pos, *cache) -> (logits, *cache)`, the cache kept between
    calls."""

    def __init__(self, fn: Callable[..., tuple[Any, ...]], empty: tuple[Any, ...]) -> None:
        self.fn, self.empty, self.cache = fn, empty, empty

    def reset(self) -> None:
        self.cache = self.empty

    def __call__(self, token: int, pos: int) -> np.ndarray:
        logits, *self.cache = self.fn(np.int32(token), np.int32(pos), *self.cache)
        return np.asarray(logits).reshape(-1)


class RunnerStep:
    """workloads' IreeRunner as a decode step."""

    def __init__(self, runner: Any) -> None:
        self.runner = runner

    def reset(self) -> None:
        self.runner.cache = list(self.runner._empty_cache)

    def __call__(self, token: int, pos: int) -> np.ndarray:
        return np.asarray(self.runner.decode(token, pos)).reshape(-1)


def knob_values(fn: Any) -> list[tuple[str, dict[str, int]]]:
    """("knob=label", the configuration setting it) for each value of each of the
    function's knobs, the others exact: the exact configuration first, as "exact"."""
    out = [("exact", {})]
    for knob in fn.knobs:
        out += [(f"{knob['name']}={knob['values'][knob['domain'].index(v)]}", {knob["name"]: v})
                for v in knob["domain"] if v != knob["exact"]]
    return out


def programs(manifest: Path, fn_name: str) -> dict[str, Any]:
    """`approxcc <knob>=<label>` -> a program configured with that value of one of `fn`'s
    knobs."""
    from approxcc.ml.runtime import load

    fn = load(manifest).functions[fn_name]
    return {f"approxcc {label}": load(manifest, config={
        "approxcc": "1", "knobs": {k: {"value": v} for k, v in choice.items()}})
        for label, choice in knob_values(fn)}


def weight_bytes(manifest: Path, fn_name: str) -> dict[str, float]:
    """`approxcc <knob>=<label>` -> the bytes of the weights its variant stores (all of
    them are read by a decode step: the tied embedding is the output head)."""
    data = json.loads(manifest.read_text())["functions"][fn_name]
    out = {}
    for label, choice in knob_values(SimpleNamespace(knobs=data["knobs"])):
        full = {k["name"]: choice.get(k["name"], k["exact"]) for k in data["knobs"]}
        variant = next(v for v in data["variants"] if v["choice"] == full)
        out[f"approxcc {label}"] = sum(  # int4: two codes a byte
            math.prod(a["shape"]) * (0.5 if a["dtype"] == "int4" else
                                     jnp.dtype(a["dtype"]).itemsize)
            for a in variant["weight_args"])
    return out


def decode_runners(example: ModuleType, manifest: Path) -> dict[str, Any]:
    from workloads.models.iree_decode import IreeRunner

    dec = example.DECODER
    out = {name: CacheStep(prog.decode_step.on_device, dec.cache)
           for name, prog in programs(manifest, "decode_step").items()}
    params = jax.device_put(dec.model.params)
    jitted = jax.jit(example.decode_step)
    out["jax.jit"] = CacheStep(lambda *a: jitted(params, *a), jax.device_put(dec.cache))
    out["IreeRunner f32"] = RunnerStep(IreeRunner(dec.model, max_len=dec.cache[0].shape[0],
                                                  prefill_len=0))
    return out


def rotated(names: list[str], turn: int) -> list[str]:
    """`names` starting at a different one each turn: an IREE runtime's worker threads keep
    spinning a moment after a call, slowing whichever runner comes next, so no runner may
    always follow the same one."""
    k = turn % len(names)
    return names[k:] + names[:k]


def interleaved_decode(steps: dict[str, Any], ids: list[int], tokens: int,
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
            for name in rotated(list(steps), pos):
                step = steps[name]
                start = time.perf_counter()
                logits = step(seqs[name][-1], pos)
                times[name].append(time.perf_counter() - start)
                seqs[name].append(int(np.argmax(logits)))
        outputs = {name: seq[len(ids):] for name, seq in seqs.items()}
    return times, outputs


Prefill = Callable[[list[int]], np.ndarray]   # prompt ids -> the logits after the last


def prefill_runners(example: ModuleType, manifest: Path) -> dict[str, Prefill]:
    from kv_decoder import Steps  # beside the examples (load_example put it on the path)

    dec = example.DECODER

    def runner(fill: Any, step: Any) -> Prefill:
        return Steps(dec, fill, step).prefill

    from approxcc.ml.runtime import load

    decode = load(manifest).decode_step.on_device   # exact
    out = {name: runner(prog.prefill.on_device, decode)
           for name, prog in programs(manifest, "prefill").items()}
    params = jax.device_put(dec.model.params)
    fill, step = jax.jit(example.prefill), jax.jit(example.decode_step)
    out["jax.jit"] = runner(lambda *a: fill(params, *a), lambda *a: step(params, *a))
    return out


def interleaved_prefill(runs: dict[str, Prefill], ids: list[int], repeats: int
                        ) -> tuple[dict[str, list[float]], dict[str, int]]:
    """Each runner's seconds per prefill of `ids` (a warm-up call first), in turn."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    tokens = {name: int(np.argmax(run(ids))) for name, run in runs.items()}
    for repeat in range(repeats):
        for name in rotated(list(runs), repeat):
            run = runs[name]
            start = time.perf_counter()
            run(ids)
            times[name].append(time.perf_counter() - start)
    return times, tokens


def report(title: str, medians: dict[str, float], same: dict[str, str], unit: str,
           per_second: float = 0.0, floors: dict[str, float] | None = None) -> None:
    """One line a runner: its median, its ratio to the first (approxcc exact), and where
    `floors` has it the floor (seconds) and the share of it reached."""
    print(title)
    first = next(iter(medians))
    for name, s in medians.items():
        figure = f"{per_second / s:8.1f} tokens/s" if per_second else f"{s * 1000:8.1f} {unit}"
        speed = medians[first] / s
        floor = (f"  floor {floors[name] * 1000:5.1f} ms ({floors[name] / s:4.0%})"
                 if floors and name in floors else "")
        print(f"  {name:32s} {figure}  {speed:5.2f}x the speed of {first}{floor}  "
              f"{same[name]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="smollm2",
                        help="comma-separated: gemma3, smollm2")
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--build-root", type=Path, default=ROOT / "build" / "ml_user_path")
    args = parser.parse_args()
    for model in args.models.split(","):
        manifest = build(model, args.build_root / model)
        example = load_example(model)
        tok = example.DECODER.model.tokenizer

        steps = decode_runners(example, manifest)
        times, outputs = interleaved_decode(steps, tok.encode(PROMPT), args.tokens,
                                            args.repeats)
        first = outputs[next(iter(steps))]
        bandwidth = measure_bandwidth()
        report(f"{model} decode: {args.tokens} tokens x {args.repeats} repeats, interleaved, "
               f"load average {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs); floor: the "
               f"variant's weight bytes over numpy's one pass, {bandwidth:.1f} GB/s",
               {name: statistics.median(t) for name, t in times.items()},
               {name: f"same tokens: {sum(a == b for a, b in zip(out, first, strict=True))}/"
                      f"{args.tokens} {tok.decode(out)!r}" for name, out in outputs.items()},
               "ms/token", floors={name: size / bandwidth / 1e9 for name, size
                                   in weight_bytes(manifest, "decode_step").items()})
        del steps
        gc.collect()

        n = example.DECODER.prefill_len
        ids = tok.encode(PREFILL_TEXT)[:n]
        runs = prefill_runners(example, manifest)
        ptimes, next_tokens = interleaved_prefill(runs, ids, args.repeats)
        exact = next_tokens[next(iter(runs))]
        report(f"{model} prefill: {n} tokens x {args.repeats} repeats, interleaved, "
               f"load average {os.getloadavg()[0]:.1f}",
               {name: statistics.median(t) for name, t in ptimes.items()},
               {name: f"next token {tok.decode([t])!r} "
                      f"({'same' if t == exact else 'differs'})"
                for name, t in next_tokens.items()}, "", per_second=n)
        del runs
        gc.collect()


if __name__ == "__main__":
    main()
