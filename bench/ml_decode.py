"""`make bench-ml`: the real models as a user builds them, at the machine's limits, side by
side in one run.

For each model (SmolLM2-135M, Gemma 3 270M) the decorated example
`examples/ml/<model>_decode.py` (a decode step and two prefill steps over a KV cache) is
built with approxcc into BUILD_ROOT/<model> for the CPU (as `approxcc EXAMPLE -o
BUILD_ROOT/<model>` does; skipped while the example, the model code and approxcc.ml are
unchanged; a rebuild recompiles only what changed), and its variants are measured against
`jax.jit` of the same decorated functions:

- decode, ms/token: greedy decoding from one prompt, every runner one step in turn (the
  order rotating from step to step, so load from other processes hits them alike):
  `exact`, each other value of each of the decode step's knobs (the others exact), and
  `jax.jit`, and the exact, W8A8, W8A16, W4A16-mixed and bf16 steps once more on one thread
  (IREE's `local-sync` driver: `approxcc.ml.runtime.load(..., device="local-sync")`); beside each
  its floor (the bytes of weights a step reads — every weight of the variant but an
  embedding table it only gathers one row from; llama.cpp's: every tensor of its GGUF file)
  over the bandwidth of a numpy pass on every core, the median of passes timed among the
  steps, one a turn, so that the floor and the steps see the same load, and the share of it
  reached; IREE's decode can read faster than numpy does, so a share above 100% says the
  probe was slow;
- next-token NLL (nats/token) of 512 tokens of Wikipedia summaries, teacher-forced through
  each decode step (with a restricted vocabulary over the targets inside it, whose share is
  printed), and agreement with the exact build's greedy answers on a few prompts (the same
  first 8 tokens);
- prefill, tokens/s for a 128- and a 512-token prompt (`prefill` and `prefill_long`: the
  prompt but its last token into the cache, then a decode step of the last), exact and
  each other value of the prefill knob against `jax.jit`, interleaved; GFLOP/s (2 x tokens
  x the layers' matrix parameters, plus the head for the last position) as a share of
  numpy's float32 matmul timed in the same run;
- llama.cpp (`llama-cpp-python`, the `bench` extra) on the model's own GGUF file, same
  prompts, same thread count, when it is installed.

Usage: ``python bench/ml_decode.py [--models smollm2 gemma3] [--tokens 24] [--repeats 3]
[--json PATH]``. Figures are medians; the machine is small and shared: read ratios.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import math
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import jax
import numpy as np
from rich.console import Console
from rich.table import Table

from workloads.data import wiki
from workloads.models import MODELS, DecoderModel
from workloads.models.decode import prompt_ids
from workloads.models.gguf_file import GGUFFile
from workloads.models.weights import iter_layers, output_head

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "ml"
sys.path.insert(0, str(EXAMPLES))   # the examples and their kv_decoder
from kv_decoder import MAX_LEN, PREFILL_LENS, CachedStep, Steps  # noqa: E402
from kv_decoder import build as build_example  # noqa: E402

# Teacher-forced NLL over this many tokens of Wikipedia summaries (`nll_ids`). W8A8's
# per-token losses move with a change of 1e-6 in its inputs (an activation code rounding the
# other way, then every later one): SmolLM2's W8A8 read 2.116-2.184 nats over a 92-token
# text as norm weights were scaled by 1 +- 1e-6, so a short text's mean says nothing of
# the variant.
NLL_TOKENS = 512
PROMPTS = {
    "smollm2": ["What is the capital of France?", "Name three primary colors.",
                "What is 2 + 3?", "Who wrote Romeo and Juliet?"],
    "gemma3": ["Question: What is the capital of France?\nAnswer:",
               "The largest planet in the solar system is",
               "Water is made of hydrogen and", "The first president of the United States was"],
}
AGREE_TOKENS = 8
# Decode variants also run on one thread (IREE's `local-sync` driver, no task system): a
# small model's step is a thousand short dispatches, each handed to the task system's
# workers on `local-task` (SmolLM2's W8A16 step under iree-benchmark-module: 7.5 ms on one
# thread, 10.0 on two cores; docs/ml.md).
SYNC_VARIANTS = ("exact", "weights=w8a8", "weights=w8a16", "weights=w4a16-mixed",
                 "precision=bf16")
ONE_THREAD = ", 1 thread"
JAX = "jax.jit"
PROBE = "numpy pass"


# --- the build ------------------------------------------------------------------------

def load_example(model: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"{model}_decode",
                                                  EXAMPLES / f"{model}_decode.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(model: str, out: Path) -> Path:
    """The example's build (kv_decoder.build: reused while its inputs are unchanged)."""
    return build_example(EXAMPLES / f"{model}_decode.py", out)


def knob_values(knobs: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """"knob=label" -> the configuration setting it, for each value of each knob (the others
    exact), after "exact" itself."""
    out: dict[str, dict[str, int]] = {"exact": {}}
    for k in knobs:
        out |= {f"{k['name']}={k['values'][k['domain'].index(v)]}": {k["name"]: v}
                for v in k["domain"] if v != k["exact"]}
    return out


def programs(manifest: Path, fns: list[str], device: str = "auto") -> dict[str, Any]:
    """A program per value of the knobs of `fns` (the others exact), by "knob=label", on
    IREE's `device` driver."""
    from approxcc.ml.runtime import load

    data = json.loads(manifest.read_text())["functions"]
    return {label: load(manifest, config={"approxcc": "1", "knobs": {
                k: {"value": v} for k, v in choice.items()}}, device=device)
            for fn in fns for label, choice in knob_values(data[fn]["knobs"]).items()}


def bytes_read(manifest: Path, vocab_size: int, fn: str = "decode_step") -> dict[str, float]:
    """"knob=label" -> bytes of weights one call of `fn` reads: its variant's weights but an
    embedding table (vocab_size rows) that an untied, restricted head leaves to gathering."""
    data = json.loads(manifest.read_text())["functions"][fn]
    out = {}
    for label, choice in knob_values(data["knobs"]).items():
        full = {k["name"]: choice.get(k["name"], k["exact"]) for k in data["knobs"]}
        variant = next(v for v in data["variants"] if v["choice"] == full)
        sizes = [(a["shape"], math.prod(a["shape"]) * (0.5 if a["dtype"] in ("int4", "uint4") else
                                                       np.dtype(a["dtype"]).itemsize))
                 for a in variant["weight_args"]]  # int4: two codes a byte
        heads = [s for shape, s in sizes if len(shape) == 2 and shape[0] == vocab_size]
        gathered = max(heads) if len(heads) == 1 and _restricted(full, data) else 0
        out[label] = sum(s for _, s in sizes) - gathered
    return out


def _restricted(choice: dict[str, Any], fn: dict[str, Any]) -> bool:
    """The choice substitutes the step (the restricted head: the full table is gathered)."""
    return any(k["transform"] == "func_substitute" and choice[k["name"]] for k in fn["knobs"])


# --- decode ----------------------------------------------------------------------------

def rotated(names: list[str], turn: int) -> list[str]:
    """`names` starting at a different one each turn: an IREE runtime's worker threads keep
    spinning a moment after a call, slowing whichever runner comes next."""
    k = turn % len(names)
    return names[k:] + names[:k]


def interleaved_decode(steps: dict[str, CachedStep], ids: list[int], tokens: int,
                       repeats: int, probe: NumpyPass) -> dict[str, float]:
    """Median seconds per greedy step of each runner, one step each in turn, `probe` (the
    floor's bandwidth) taking its turn among them."""
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(repeats):
        seqs = {name: list(ids) for name in steps}
        for step in steps.values():
            step.prefill(ids[:-1])
        for pos in range(len(ids) - 1, len(ids) - 1 + tokens):
            for name in rotated([*steps, PROBE], pos):
                if name == PROBE:
                    probe()
                    continue
                start = time.perf_counter()
                logits = steps[name].decode(seqs[name][-1], pos)
                times[name].append(time.perf_counter() - start)
                seqs[name].append(int(np.argmax(logits)))
    return {name: float(np.median(t)) for name, t in times.items()}


def teacher_forced_nll(step: CachedStep, ids: list[int]) -> tuple[float, float]:
    """Mean next-token NLL of `ids` through decode steps, over the targets the step can
    produce (finite logit), and the share of those targets."""
    step.reset()
    losses = []
    for pos, (token, target) in enumerate(zip(ids[:-1], ids[1:], strict=True)):
        logits = step.decode(token, pos).astype(np.float64)
        if np.isfinite(logits[target]):
            losses.append(float(np.logaddexp.reduce(logits[np.isfinite(logits)])
                                - logits[target]))
    return float(np.mean(losses)), len(losses) / (len(ids) - 1)


def greedy_answer(step: CachedStep, ids: list[int], n: int) -> list[int]:
    step.prefill(ids[:-1])
    out, pos = list(ids), len(ids) - 1
    for _ in range(n):
        out.append(int(np.argmax(step.decode(out[-1], pos))))
        pos += 1
    return out[len(ids):]


# --- prefill ---------------------------------------------------------------------------

def prefill_flops(params: Any, tokens: int) -> float:
    """2 x tokens x the layers' matrix parameters, plus the head for the last position."""
    layer = sum(int(np.prod(np.shape(a))) for lay in iter_layers(params["layers"])
                for a in jax.tree_util.tree_leaves(lay) if np.ndim(a) >= 2)
    head = int(np.prod(np.shape(output_head(params))))
    return 2.0 * (tokens * layer + head)


def long_prompt(model: DecoderModel, n: int, first: int = 0) -> list[int]:
    """`n` token ids of Wikipedia summaries (the RAG systems' passages), from the `first`-th
    on."""
    text = "\n".join(a.extract for a in wiki.load_summaries()[first:first + 200])
    return model.tokenizer.encode(text)[:n]


def nll_ids(model: DecoderModel) -> list[int]:
    """The NLL's tokens: summaries past the prompts' (`long_prompt` reads at most 200)."""
    return long_prompt(model, NLL_TOKENS, first=200)


def interleaved_prefill(runs: dict[str, Callable[[list[int]], Any]], ids: list[int],
                        repeats: int) -> dict[str, float]:
    """Median seconds of each `runs[name](ids)` (one warm-up call each), taking turns."""
    for run in runs.values():
        run(ids)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for repeat in range(repeats):
        for name in rotated(list(runs), repeat):
            start = time.perf_counter()
            runs[name](ids)
            times[name].append(time.perf_counter() - start)
    return {name: float(np.median(t)) for name, t in times.items()}


# --- the machine -----------------------------------------------------------------------

class NumpyPass:
    """One numpy pass over 512 MiB: maxima of its slices on every core at once (a decode step
    reads its weights from every core; a max is the fastest numpy pass here, 26 GB/s against
    a sum's 18 on a busy machine). Each call records its GB/s. Timed between decode steps
    (`interleaved_decode`), its median is the floor's bandwidth under the load the steps
    saw: the machine's bandwidth moves by 2x within a run (best passes of 53 and 37 GB/s at
    the start and the end of one), and a best pass against median steps compares its
    quietest moment with its usual one."""

    def __init__(self) -> None:
        self.data = np.ones(1 << 27, np.float32)
        self.parts = np.array_split(self.data, os.cpu_count() or 1)
        self.pool = ThreadPoolExecutor(len(self.parts))   # numpy's reductions release the GIL
        self.gb_s: list[float] = []

    def __call__(self) -> None:
        seconds = _timed(lambda: list(self.pool.map(np.max, self.parts)))
        self.gb_s.append(self.data.nbytes / seconds / 1e9)

    def median(self) -> float:
        return float(np.median(self.gb_s))

    def close(self) -> None:
        self.pool.shutdown()


def measure_bandwidth(repeats: int = 5) -> float:
    """GB/s of the best of `repeats` numpy passes (`NumpyPass`)."""
    probe = NumpyPass()
    for _ in range(repeats):
        probe()
    probe.close()
    return max(probe.gb_s)


def measure_matmul_peak(repeats: int = 5) -> float:
    """GFLOP/s of numpy's float32 2048^3 matmul (its BLAS), the best of `repeats`."""
    a = np.random.default_rng(0).standard_normal((2048, 2048)).astype(np.float32)
    best = min(_timed(lambda: a @ a) for _ in range(repeats))
    return 2 * 2048**3 / best / 1e9


def _timed(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


# --- rows ------------------------------------------------------------------------------

@dataclass
class Row:
    model: str
    variant: str
    decode_ms: float = float("nan")
    floor_ms: float = float("nan")
    bytes_per_token: float = 0
    bandwidth_gb_s: float = float("nan")   # the floor's: median numpy pass among the steps
    prefill_tok_s: dict[int, float] = field(default_factory=dict)
    prefill_gflops: dict[int, float] = field(default_factory=dict)
    jax_prefill_tok_s: dict[int, float] = field(default_factory=dict)
    nll: float = float("nan")
    coverage: float = 1.0
    agreement: float = float("nan")

    def floor_share(self) -> float:
        return self.floor_ms / self.decode_ms

    def set_floor(self, bytes_per_token: float, bandwidth_gb_s: float) -> None:
        self.bytes_per_token, self.bandwidth_gb_s = bytes_per_token, bandwidth_gb_s
        self.floor_ms = bytes_per_token / bandwidth_gb_s / 1e6


def bench_model(name: str, args: argparse.Namespace,
                console: Console) -> tuple[list[Row], DecoderModel]:
    t0 = time.perf_counter()
    manifest = build(name, args.build_root / name)
    example = load_example(name)
    dec = example.DECODER
    model: DecoderModel = dec.model
    console.print(f"{name}: built and loaded in {time.perf_counter() - t0:.0f} s")
    rows: dict[str, Row] = {}

    params = jax.device_put(model.params)
    jit_step = jax.jit(example.decode_step)
    steps = {label: CachedStep(prog.decode_step.on_device, dec.cache)
             for label, prog in programs(manifest, ["decode_step"]).items()}
    steps |= {label + ONE_THREAD: CachedStep(prog.decode_step.on_device, dec.cache)
              for label, prog in programs(manifest, ["decode_step"], "local-sync").items()
              if label in SYNC_VARIANTS}
    steps[JAX] = CachedStep(lambda *a: jit_step(params, *a), jax.device_put(dec.cache))
    sizes = bytes_read(manifest, model.config.vocab_size)
    text_ids = nll_ids(model)
    exact: dict[str, list[int]] = {}
    for label, step in steps.items():
        row = rows[label] = Row(name, label)
        base = label.removesuffix(ONE_THREAD)
        if base != label:   # the same module and weights as `base`'s: the same numbers
            row.nll, row.coverage, row.agreement = (rows[base].nll, rows[base].coverage,
                                                    rows[base].agreement)
            continue
        row.nll, row.coverage = teacher_forced_nll(step, text_ids)
        got = {p: greedy_answer(step, prompt_ids(model, p), AGREE_TOKENS)
               for p in PROMPTS[name]}
        exact = exact or got
        row.agreement = sum(got[p] == exact[p] for p in got) / len(got)
    first = prompt_ids(model, PROMPTS[name][0])
    probe = NumpyPass()
    seconds = interleaved_decode(steps, first, args.tokens, args.repeats, probe)
    probe.close()
    console.print(f"  numpy among the decode steps: median {probe.median():.1f} GB/s (best "
                  f"{max(probe.gb_s):.1f}, {len(probe.gb_s)} passes)")
    for label, s in seconds.items():
        row = rows[label]
        row.decode_ms = s * 1e3
        base = label.removesuffix(ONE_THREAD)
        if base in sizes:
            row.set_floor(sizes[base], probe.median())
        floor = (f", floor {row.floor_ms:.1f} ms ({row.floor_share():.0%})"
                 if row.bytes_per_token else "")
        console.print(f"  {label}: decode {row.decode_ms:.1f} ms/token{floor}, NLL "
                      f"{row.nll:.3f} (cover {row.coverage:.2f}), agreement {row.agreement:.2f}")
    del steps
    gc.collect()

    decode = programs(manifest, ["decode_step"])["exact"].decode_step.on_device
    jit_fills = {fn: jax.jit(getattr(example, fn)) for fn in PREFILL_LENS}
    for fn, n in PREFILL_LENS.items():
        prompt = long_prompt(model, n + 1)   # n into the cache, the last a decode step
        runs = {label: Steps(decode, dec.cache, fills={fn: getattr(prog, fn).on_device}).prefill
                for label, prog in programs(manifest, [fn]).items()}
        runs[JAX] = Steps(lambda *a: jit_step(params, *a), dec.cache,
                          fills={fn: lambda *a, f=jit_fills[fn]: f(params, *a)}).prefill
        seconds = interleaved_prefill(runs, prompt, args.repeats)
        del runs
        gc.collect()
        flops = prefill_flops(model.params, n)
        for label, s in seconds.items():
            # the prefill knob's values share the exact decode rows: "prefill_weights=w8a8"
            row = rows.setdefault(label.replace(f"{fn}_", "prefill_"),
                                  Row(name, label.replace(f"{fn}_", "prefill_")))
            row.prefill_tok_s[n] = n / s
            row.prefill_gflops[n] = flops / s / 1e9
        for row in rows.values():
            row.jax_prefill_tok_s[n] = n / seconds[JAX]
        console.print(f"  prefill {n}: " + ", ".join(f"{k} {n / s:.0f} tok/s"
                                                   for k, s in seconds.items()))
    return list(rows.values()), model


def llama_cpp_row(model: DecoderModel, path: Path, tokens: int, repeats: int,
                  threads: int) -> Row | None:
    """llama.cpp on the GGUF file itself (its own quantization), our token ids."""
    try:
        import llama_cpp
    except ImportError:
        return None
    # Without llama.cpp's extra buffer types (weights repacked for AMX): a VM that reports
    # AMX-INT8 faulted in libggml-cpu when that path ran (a GPF in the first eval).
    defaults = llama_cpp.llama_cpp.llama_model_default_params

    def model_params() -> Any:
        params = defaults()
        params.use_extra_bufts = False
        return params

    llama_cpp.llama_cpp.llama_model_default_params = model_params
    row = Row(model.name, f"llama.cpp ({path.name.split('.')[-2].split('-')[-1]})")
    try:
        llm = llama_cpp.Llama(model_path=str(path), n_ctx=MAX_LEN + 16, n_threads=threads,
                              n_threads_batch=threads, n_batch=512, logits_all=True,
                              verbose=False)
    finally:   # one model's patch must not wrap the next one's
        llama_cpp.llama_cpp.llama_model_default_params = defaults
    ids = nll_ids(model)
    llm.reset()
    llm.eval(ids)
    logits = np.asarray(llm.scores[:len(ids) - 1], np.float64)
    logp = logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)
    row.nll = float(-np.mean(logp[np.arange(len(ids) - 1), ids[1:]]))

    def run(p: list[int]) -> None:
        llm.reset()
        llm.eval(p)

    for n in PREFILL_LENS.values():
        row.prefill_tok_s[n] = n / interleaved_prefill({"llama": run}, long_prompt(model, n),
                                                       repeats)["llama"]
    run(prompt_ids(model, PROMPTS[model.name][0]))
    steps, probe = [], NumpyPass()
    for _ in range(tokens):
        token = int(np.argmax(llm.scores[llm.n_tokens - 1]))
        probe()
        steps.append(_timed(lambda token=token: llm.eval([token])))
    probe.close()
    row.decode_ms = float(np.median(steps[1:])) * 1e3
    # every tensor of the file a step reads (the tied embedding as the output head)
    row.set_floor(GGUFFile(path).tensor_bytes(), probe.median())
    return row


def report(rows: list[Row], bandwidth: float, peak: float, console: Console) -> None:
    table = Table(title=f"decode (batch 1, ms/token, median; GB/s: the floor's, numpy among "
                        f"the steps) and prefill; numpy's best pass at the start "
                        f"{bandwidth:.1f} GB/s, f32 matmul {peak:.0f} GFLOP/s")
    for col in ("model", "variant", "decode ms", "floor ms", "of floor", "MB/token", "GB/s",
                "prefill128 tok/s", "prefill512 tok/s", "512: of peak", "jax 128 / 512",
                "NLL", "cover", "agree"):
        table.add_column(col, justify="right")
    for r in rows:
        p128, p512 = r.prefill_tok_s.get(128), r.prefill_tok_s.get(512)
        g512 = r.prefill_gflops.get(512)
        j128, j512 = r.jax_prefill_tok_s.get(128), r.jax_prefill_tok_s.get(512)
        table.add_row(
            r.model, r.variant, "" if math.isnan(r.decode_ms) else f"{r.decode_ms:.1f}",
            f"{r.floor_ms:.1f}" if r.bytes_per_token else "",
            f"{r.floor_share():.0%}" if r.bytes_per_token else "",
            f"{r.bytes_per_token / 1e6:.0f}" if r.bytes_per_token else "",
            f"{r.bandwidth_gb_s:.1f}" if r.bytes_per_token else "",
            f"{p128:.0f}" if p128 else "", f"{p512:.0f}" if p512 else "",
            f"{g512 / peak:.0%}" if g512 else "",
            f"{j128:.0f} / {j512:.0f}" if j128 and j512 else "",
            "" if math.isnan(r.nll) else f"{r.nll:.3f}", f"{r.coverage:.2f}",
            "" if math.isnan(r.agreement) else f"{r.agreement:.2f}")
    console.print(table)


def write_json(path: Path, rows: list[Row], machine: dict[str, float]) -> None:
    """Per model and variant: decode_ms, floor_ms, prefill_tok_s and jax_prefill_tok_s (512
    tokens, else 128; `..._by_len` has both), nll, and the rest of the row."""
    out: dict[str, Any] = {**machine, "models": {}}
    for r in rows:
        entry = asdict(r)
        entry["prefill_tok_s"] = r.prefill_tok_s.get(512, r.prefill_tok_s.get(128))
        entry["jax_prefill_tok_s"] = r.jax_prefill_tok_s.get(512, r.jax_prefill_tok_s.get(128))
        entry["prefill_tok_s_by_len"] = r.prefill_tok_s
        entry["jax_prefill_tok_s_by_len"] = r.jax_prefill_tok_s
        out["models"].setdefault(r.model, {})[r.variant] = entry
    path.write_text(json.dumps(out, indent=1, default=float))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["smollm2", "gemma3"])
    parser.add_argument("--tokens", type=int, default=24)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="llama.cpp threads (IREE's local-task uses every core)")
    parser.add_argument("--build-root", type=Path, default=ROOT / "build" / "bench_ml")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    console = Console(width=200)
    bandwidth, peak = measure_bandwidth(), measure_matmul_peak()
    console.print(f"numpy: {bandwidth:.1f} GB/s best pass, f32 matmul {peak:.0f} GFLOP/s")
    machine = {"bandwidth_gb_s": bandwidth, "matmul_gflop_s": peak}
    rows: list[Row] = []
    for name in args.models:
        model_rows, model = bench_model(name, args, console)
        rows += model_rows
        peer = llama_cpp_row(model, MODELS[name][0](), args.tokens, args.repeats, args.threads)
        if peer is None:
            console.print("  llama.cpp: llama-cpp-python is not installed (the bench extra)")
        else:
            console.print(f"  {peer.variant}: decode {peer.decode_ms:.1f} ms/token, prefill "
                          f"{peer.prefill_tok_s}, NLL {peer.nll:.3f}")
            rows.append(peer)
        if args.json:  # after every model: a later one may not finish
            write_json(args.json, rows, machine)
    bandwidth_end, peak_end = measure_bandwidth(), measure_matmul_peak()
    console.print(f"numpy at the end: {bandwidth_end:.1f} GB/s, {peak_end:.0f} GFLOP/s")
    report(rows, bandwidth, peak, console)
    if args.json:
        write_json(args.json, rows, {**machine, "bandwidth_gb_s_end": bandwidth_end,
                                     "matmul_gflop_s_end": peak_end})


if __name__ == "__main__":
    main()
