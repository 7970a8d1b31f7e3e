"""Decode and prefill of the real models at the machine's limits, side by side in one run.

For each model (SmolLM2-135M, Gemma 3 270M) and variant it reports:
- decode ms/token through IREE llvm-cpu (median over greedy steps; the variants of a model
  take turns step by step, so load from other processes hits them alike), the floor (bytes
  of weights read per token over the memory bandwidth numpy reaches in the same run) and
  the share of the floor reached;
- prefill tokens/s through IREE for a 128- and a 512-token prompt (the exact model and
  W8A8; the other variants feed prompts through decode steps), their GFLOP/s (2 x tokens x
  matrix parameters of the layers, plus the output head for the last position) as a share
  of a numpy float32 matmul timed in the same run, and the same prompts under ``jax.jit``
  (XLA-CPU), interleaved with IREE;
- next-token NLL (nats/token) on a fixed text (over the tokens inside a restricted
  vocabulary, whose coverage is printed) and agreement with the exact model's greedy
  answers on a few prompts (the same first 8 tokens);
- llama.cpp (``llama-cpp-python``, the ``bench`` extra) on the model's own GGUF file, same
  prompts, same thread count, when it is installed.

Variants: ``f32`` (exact), ``bf16``/``f16`` (matrices stored narrow), ``int8`` (weight-only,
per channel, in tiles of 32 rows), ``int8g64`` (weight-only, groups of 64), ``w8a8`` (int8
weights per channel x int8 activations, int32 accumulation), ``w8a16`` (the same product
against two int8 digits of each activation), ``int4`` (groups of 32, two codes a byte);
``+vocab`` restricts the output head to the
``VOCAB`` most frequent tokens of the Wikipedia summaries, ``+skipN`` drops N layers from
the middle. Compiled vmfbs are cached under ``~/.cache/approxcc/models``. The decode runners
of a model are built together (they take turns) and freed before the prefill runners,
which are built one prompt length at a time.

Usage: ``python bench/ml_decode.py [--models smollm2 gemma3] [--variants f32 w8a8 ...]
[--tokens 24] [--repeats 3] [--json PATH]``. The machine is small and shared: read the
figures as ratios taken under whatever load there was.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import jax
import numpy as np
from rich.console import Console
from rich.table import Table

from workloads.data import wiki
from workloads.models import MODELS, DecoderModel, load_model
from workloads.models.decode import (
    JaxRunner,
    coverage,
    frequent_tokens,
    greedy,
    nll,
    prompt_ids,
    restrict_vocab,
    skip_layers,
)
from workloads.models.iree_decode import IreeRunner
from workloads.models.weights import (
    Params,
    cast_matrices,
    iter_layers,
    output_head,
    quantize_int4,
    quantize_int8,
)

TEXT = (
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. "
    "It is named after the engineer Gustave Eiffel, whose company designed and built the "
    "tower from 1887 to 1889. Locally nicknamed 'La dame de fer', it was constructed as the "
    "centerpiece of the 1889 World's Fair, and to crown the centennial anniversary of the "
    "French Revolution."
)
PROMPTS = {
    "smollm2": ["What is the capital of France?", "Name three primary colors.",
                "What is 2 + 3?", "Who wrote Romeo and Juliet?"],
    "gemma3": ["Question: What is the capital of France?\nAnswer:",
               "The largest planet in the solar system is",
               "Water is made of hydrogen and", "The first president of the United States was"],
}
AGREE_TOKENS = 8
PREFILL_LENGTHS = (128, 512)
MAX_LEN = 640            # a 512-token prompt and its answer
VOCAB = 16384
PREFILL_VARIANTS = ("f32", "w8a8")
TILE = 32                # rows of an int8 weight's tile
DEFAULT_VARIANTS = ["f32", "bf16", "f16", "int8", "w8a8", "int4", "int8+vocab", "w8a8+vocab"]


def shortlist(model: DecoderModel) -> np.ndarray:
    """About ``VOCAB`` frequent tokens, a multiple of ``TILE`` (int8's head in tiles)."""
    texts = [a.extract for a in wiki.load_summaries()[:4000]]
    n = VOCAB
    while len(ids := frequent_tokens(model, texts, n)) % TILE:
        n -= len(ids) % TILE
    return ids


def variant_model(model: DecoderModel, variant: str) -> DecoderModel:
    """``model`` rewritten as ``variant`` (``precision[+vocab][+skipN]``)."""
    precision, *knobs = variant.split("+")
    for knob in knobs:
        if knob == "vocab":
            model = restrict_vocab(model, shortlist(model))
        elif knob.startswith("skip"):
            n, middle = int(knob[4:]), model.config.n_layers // 2
            model = skip_layers(model, set(range(middle - n // 2, middle - n // 2 + n)))
        else:
            raise ValueError(f"unknown knob {knob!r} in {variant!r}")
    rewrite = {
        "f32": lambda p: p,
        "bf16": lambda p: cast_matrices(p, "bfloat16"),
        "f16": lambda p: cast_matrices(p, "float16"),
        "int8": lambda p: quantize_int8(p, block=TILE),
        "int8g64": lambda p: quantize_int8(p, group=64),
        "w8a8": lambda p: quantize_int8(p, activations="int8"),
        "w8a16": lambda p: quantize_int8(p, activations="int16"),
        "int4": lambda p: quantize_int4(p, group=32),
    }
    if precision not in rewrite:
        raise ValueError(f"unknown precision {precision!r}; known: {', '.join(rewrite)}")
    return model.with_params(rewrite[precision](model.params))


def _nbytes(tree: Any) -> int:
    return sum(np.asarray(a).nbytes for a in jax.tree_util.tree_leaves(tree))


def bytes_per_token(params: Params) -> int:
    """Bytes of weights one decode step reads: every layer weight and the output head (the
    embedding only for one row, unless it is the head)."""
    return _nbytes(params["layers"]) + _nbytes(output_head(params)) + _nbytes(
        params["final_norm"])


def prefill_flops(params: Params, tokens: int) -> float:
    """2 x tokens x the layers' matrix parameters, plus the head for the last position."""
    layer = sum(int(np.prod(np.shape(a))) for lay in iter_layers(params["layers"])
                for a in jax.tree_util.tree_leaves(lay) if np.ndim(a) >= 2)
    head = int(np.prod(getattr(output_head(params), "shape", ())))
    return 2.0 * (tokens * layer + head)


def measure_bandwidth(repeats: int = 5) -> float:
    """GB/s of one numpy pass (a sum) over 512 MiB, the best of ``repeats``."""
    a = np.ones(1 << 27, np.float32)
    best = min(_timed(a.sum) for _ in range(repeats))
    return a.nbytes / best / 1e9


def measure_matmul_peak(repeats: int = 5) -> float:
    """GFLOP/s of numpy's float32 2048^3 matmul (its BLAS), the best of ``repeats``."""
    a = np.random.default_rng(0).standard_normal((2048, 2048)).astype(np.float32)
    best = min(_timed(lambda: a @ a) for _ in range(repeats))
    return 2 * 2048**3 / best / 1e9


def _timed(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def long_prompt(model: DecoderModel, n: int) -> list[int]:
    """``n`` token ids of Wikipedia summaries (the RAG systems' passages)."""
    text = "\n".join(a.extract for a in wiki.load_summaries()[:200])
    ids = model.tokenizer.encode(text)
    return ids[:n]


@dataclass
class Row:
    model: str
    variant: str
    decode_ms: float = float("nan")
    floor_ms: float = float("nan")
    bytes_per_token: int = 0
    prefill_tok_s: dict[int, float] = field(default_factory=dict)
    prefill_gflops: dict[int, float] = field(default_factory=dict)
    jax_prefill_tok_s: dict[int, float] = field(default_factory=dict)
    nll: float = float("nan")
    coverage: float = 1.0
    agreement: float = float("nan")
    compile_s: float = 0.0

    def floor_share(self) -> float:
        return self.floor_ms / self.decode_ms


def answers(runner: Any, model: DecoderModel) -> dict[str, list[int]]:
    return {p: greedy(runner, model.tokenizer, prompt_ids(model, p), AGREE_TOKENS).ids
            for p in PROMPTS[model.name]}


def time_decode(runners: list[IreeRunner], ids: list[int], tokens: int) -> list[float]:
    """Median ms per decode step of each runner over ``tokens`` forced greedy steps, the
    runners taking turns step by step; the first step is excluded."""
    state = [(int(np.argmax(r.prefill(ids))), len(ids)) for r in runners]
    times: list[list[float]] = [[] for _ in runners]
    for _ in range(tokens):
        for i, r in enumerate(runners):
            token, pos = state[i]
            t0 = time.perf_counter()
            logits = r.decode(token, pos)
            times[i].append(time.perf_counter() - t0)
            state[i] = (int(np.argmax(logits)), pos + 1)
    return [float(np.median(t[1:] or t)) * 1e3 for t in times]


def time_prefill(runs: dict[str, Any], ids: list[int], repeats: int) -> dict[str, float]:
    """Median seconds of each ``runs[name](ids)``, taking turns; one warm-up call each."""
    for run in runs.values():
        run(ids)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            times[name].append(_timed(lambda run=run: run(ids)))
    return {name: float(np.median(t)) for name, t in times.items()}


def llama_cpp_row(model: DecoderModel, path: Path, tokens: int, repeats: int,
                  threads: int, prefill_lengths: list[int]) -> Row | None:
    """llama.cpp on the GGUF file itself (its own quantization), our token ids."""
    try:
        import llama_cpp
    except ImportError:
        return None
    # Without llama.cpp's extra buffer types (weights repacked for AMX): this VM reports
    # AMX-INT8 but faults in libggml-cpu when that path runs (a GPF in the first eval).
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
    ids = model.tokenizer.encode(TEXT)
    llm.reset()
    llm.eval(ids)
    logits = np.asarray(llm.scores[:len(ids) - 1], np.float64)
    logp = logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)
    row.nll = float(-np.mean(logp[np.arange(len(ids) - 1), ids[1:]]))
    for n in prefill_lengths:
        prompt = long_prompt(model, n)

        def run(p: list[int]) -> None:
            llm.reset()
            llm.eval(p)
        row.prefill_tok_s[n] = n / time_prefill({"llama": run}, prompt, repeats)["llama"]
    first = prompt_ids(model, PROMPTS[model.name][0])
    llm.reset()
    llm.eval(first)
    steps = []
    for _ in range(tokens):
        token = int(np.argmax(llm.scores[llm.n_tokens - 1]))
        t0 = time.perf_counter()
        llm.eval([token])
        steps.append(time.perf_counter() - t0)
    row.decode_ms = float(np.median(steps[1:])) * 1e3
    return row


def bench_model(name: str, variants: list[str], args: argparse.Namespace, bandwidth: float,
                peak: float, console: Console) -> list[Row]:
    t0 = time.perf_counter()
    model = load_model(name)
    console.print(f"{name}: loaded in {time.perf_counter() - t0:.1f} s")
    text_ids = model.tokenizer.encode(TEXT)
    rows: list[Row] = []
    runners: list[IreeRunner] = []
    exact: dict[str, list[int]] = {}
    prefill_models: dict[str, DecoderModel] = {}  # stacked, for the prefill runners
    for variant in variants:
        m = variant_model(model, variant)
        # decode only: prompts go through decode steps here; prefill is timed below
        runner = IreeRunner(m, max_len=MAX_LEN, variant=variant, prefill_len=0)
        if variant in PREFILL_VARIANTS:
            prefill_models[variant] = runner.model
        row = Row(name, variant, bytes_per_token=bytes_per_token(runner.model.params),
                  compile_s=runner.compile_s, nll=nll(m, text_ids),
                  coverage=coverage(m, text_ids))
        row.floor_ms = row.bytes_per_token / bandwidth / 1e6
        got = answers(runner, m)
        exact = exact or got
        row.agreement = sum(got[p] == exact[p] for p in got) / len(got)
        console.print(f"  {variant}: compiled in {row.compile_s:.0f} s, NLL {row.nll:.3f}")
        rows.append(row)
        runners.append(runner)
    first = prompt_ids(model, PROMPTS[name][0])
    for row, ms in zip(rows, time_decode(runners, first, args.tokens), strict=True):
        row.decode_ms = ms
        console.print(f"  {row.variant}: decode {ms:.1f} ms/token, floor {row.floor_ms:.1f} ms "
                      f"({row.floor_share():.0%}), agreement {row.agreement:.2f}")
    del runners, runner
    gc.collect()
    # prefill of 128 and 512 tokens: the exact model and W8A8, beside jax.jit
    by_variant = {row.variant: row for row in rows}
    for n in args.prefill_lengths:
        prompt = long_prompt(model, n)
        runs: dict[str, Any] = {"jax": JaxRunner(model, MAX_LEN).prefill}
        for variant, m in prefill_models.items():
            runs[variant] = IreeRunner(m, max_len=MAX_LEN, prefill_len=n,
                                       variant=variant).prefill
            by_variant[variant].compile_s += runs[variant].__self__.compile_s
        seconds = time_prefill(runs, prompt, args.repeats)
        del runs
        gc.collect()
        for row in rows:
            if row.variant in seconds:
                row.prefill_tok_s[n] = n / seconds[row.variant]
                flops = prefill_flops(prefill_models[row.variant].params, n)
                row.prefill_gflops[n] = flops / seconds[row.variant] / 1e9
            row.jax_prefill_tok_s[n] = n / seconds["jax"]
        console.print(f"  prefill {n}: " + ", ".join(f"{k} {n / s:.0f} tok/s"
                                                   for k, s in seconds.items()))
    return rows


def report(rows: list[Row], bandwidth: float, peak: float, console: Console) -> None:
    table = Table(title=f"decode (batch 1, ms/token, median) and prefill; numpy: "
                        f"{bandwidth:.1f} GB/s, f32 matmul {peak:.0f} GFLOP/s")
    for col in ("model", "variant", "decode ms", "floor ms", "of floor", "MB/token",
                "prefill128 tok/s", "prefill512 tok/s", "512: of peak", "jax 128 / 512",
                "NLL", "cover", "agree"):
        table.add_column(col, justify="right")
    for r in rows:
        p128, p512 = r.prefill_tok_s.get(128), r.prefill_tok_s.get(512)
        g512 = r.prefill_gflops.get(512)
        j128, j512 = r.jax_prefill_tok_s.get(128), r.jax_prefill_tok_s.get(512)
        table.add_row(
            r.model, r.variant, f"{r.decode_ms:.1f}",
            f"{r.floor_ms:.1f}" if r.bytes_per_token else "",
            f"{r.floor_share():.0%}" if r.bytes_per_token else "",
            f"{r.bytes_per_token / 1e6:.0f}" if r.bytes_per_token else "",
            f"{p128:.0f}" if p128 else "", f"{p512:.0f}" if p512 else "",
            f"{g512 / peak:.0%}" if g512 else "",
            f"{j128:.0f} / {j512:.0f}" if j128 and j512 else "",
            f"{r.nll:.3f}", f"{r.coverage:.2f}",
            "" if np.isnan(r.agreement) else f"{r.agreement:.2f}")
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["smollm2", "gemma3"])
    parser.add_argument("--variants", nargs="+", default=DEFAULT_VARIANTS)
    parser.add_argument("--tokens", type=int, default=24)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--prefill-lengths", type=int, nargs="*", default=list(PREFILL_LENGTHS),
                        help="prompt lengths of the prefill timings (none: decode only)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="llama.cpp threads (IREE's local-task uses every core)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.variants[0] != "f32":
        args.variants = ["f32", *[v for v in args.variants if v != "f32"]]
    console = Console(width=200)
    bandwidth, peak = measure_bandwidth(), measure_matmul_peak()
    console.print(f"numpy: {bandwidth:.1f} GB/s one pass, f32 matmul {peak:.0f} GFLOP/s")
    rows: list[Row] = []
    for name in args.models:
        rows += bench_model(name, args.variants, args, bandwidth, peak, console)
        if args.json:  # after every step: a later one may not finish
            write_json(args.json, rows, {"bandwidth_gb_s": bandwidth, "matmul_gflop_s": peak})
        model = load_model(name)
        peer = llama_cpp_row(model, MODELS[name][0](), args.tokens, args.repeats, args.threads,
                             args.prefill_lengths)
        if peer is None:
            console.print("  llama.cpp: llama-cpp-python is not installed (the bench extra)")
            continue
        console.print(f"  {peer.variant}: decode {peer.decode_ms:.1f} ms/token, prefill "
                      f"{peer.prefill_tok_s}, NLL {peer.nll:.3f}")
        rows.append(peer)
        if args.json:
            write_json(args.json, rows, {"bandwidth_gb_s": bandwidth, "matmul_gflop_s": peak})
    bandwidth_end, peak_end = measure_bandwidth(), measure_matmul_peak()
    console.print(f"numpy at the end: {bandwidth_end:.1f} GB/s, {peak_end:.0f} GFLOP/s")
    report(rows, bandwidth, peak, console)
    if args.json:
        write_json(args.json, rows, {"bandwidth_gb_s": bandwidth, "matmul_gflop_s": peak,
                                     "bandwidth_gb_s_end": bandwidth_end,
                                     "matmul_gflop_s_end": peak_end})


def write_json(path: Path, rows: list[Row], machine: dict[str, float]) -> None:
    out: dict[str, Any] = {**machine, "models": {}}
    for r in rows:
        entry = asdict(r)
        entry["prefill_tok_s"] = r.prefill_tok_s.get(512, r.prefill_tok_s.get(128))
        entry["jax_prefill_tok_s"] = r.jax_prefill_tok_s.get(512)
        entry["prefill_tok_s_by_len"] = r.prefill_tok_s
        entry["jax_prefill_tok_s_by_len"] = r.jax_prefill_tok_s
        out["models"].setdefault(r.model, {})[r.variant] = entry
    path.write_text(json.dumps(out, indent=1, default=float))


if __name__ == "__main__":
    main()
