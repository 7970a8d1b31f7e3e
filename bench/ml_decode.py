"""Per-token decode time and quality of the real models, side by side in one run.

For each model (SmolLM2-135M, Gemma 3 270M) and weight variant (f32; bf16 and f16
matrices; int8 weight-only, group 64, dequantized inside the graph) it reports:
- IREE llvm-cpu (``iree_decode.CPU_FLAGS``: ``--iree-llvmcpu-target-cpu=host`` plus the
  aggressive dispatch fusion that keeps a bf16/f16/int8 weight from being widened to a
  float32 copy on every call; ``--baseline-flags`` drops it) and JAX/XLA-CPU ms per decode
  step (median over greedy steps);
- IREE compile time (0 when the vmfb came from ``~/.cache/approxcc/models``);
- next-token NLL (nats/token) on a fixed text, and agreement with the f32 model's greedy
  answers over a few prompts (same first 8 tokens).

Usage: ``python bench/ml_decode.py [--models smollm2 gemma3] [--variants f32 bf16 f16 int8]
[--tokens 24] [--mode reduce|dot] [--baseline-flags] [--json PATH]``. The machine is small
and shared: read the figures as ratios (the IREE runners of one model are timed
interleaved, step by step, so that load from other processes hits every variant alike).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from workloads.models import DecoderModel, load_model
from workloads.models.decode import JaxRunner, greedy, nll, prompt_ids
from workloads.models.iree_decode import (
    BASE_CPU_FLAGS,
    CPU_FLAGS,
    DEFAULT_MODE,
    IreeRunner,
)
from workloads.models.weights import Params, cast_matrices, quantize_int8

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


def variant_params(params: Params, variant: str) -> Params:
    if variant == "f32":
        return params
    if variant in ("bf16", "f16"):
        return cast_matrices(params, "bfloat16" if variant == "bf16" else "float16")
    if variant == "int8":
        return quantize_int8(params, group=64)
    raise ValueError(f"unknown variant {variant!r}")


@dataclass
class Row:
    model: str
    variant: str
    iree_ms: float
    jax_ms: float
    iree_compile_s: float
    nll: float
    agreement: float
    mode: str = DEFAULT_MODE
    flags: str = " ".join(CPU_FLAGS)


def prepare(model: DecoderModel, variant: str, exact: dict[str, list[int]], use_jax: bool,
            tokens: int, flags: tuple[str, ...], mode: str
            ) -> tuple[Row, IreeRunner, dict[str, list[int]]]:
    """Compile one variant, collect its greedy answers, NLL and JAX time (IREE time later)."""
    m = model.with_params(variant_params(model.params, variant))
    iree = IreeRunner(m, variant=variant, flags=flags, mode=mode)
    answers: dict[str, list[int]] = {}
    for prompt in PROMPTS[model.name]:
        answers[prompt] = greedy(iree, m.tokenizer, prompt_ids(m, prompt), AGREE_TOKENS).ids
    jax_ms = float("nan")
    if use_jax:
        first = prompt_ids(m, PROMPTS[model.name][0])
        jax_ms = greedy(JaxRunner(m), m.tokenizer, first, tokens, stop=False).ms_per_token
    reference = exact or answers
    agree = sum(answers[p] == reference[p] for p in answers) / len(answers)
    row = Row(model.name, variant, float("nan"), jax_ms, iree.compile_s,
              nll(m, m.tokenizer.encode(TEXT)), agree, mode, " ".join(flags))
    return row, iree, answers


def time_interleaved(runners: list[IreeRunner], ids: list[int], tokens: int) -> list[float]:
    """Median ms per decode step of each runner, forced ``tokens`` greedy steps (no early
    stop) on ``ids``, the runners taking turns step by step; the first step is excluded."""
    state = []
    for r in runners:
        state.append((int(np.argmax(r.prefill(ids))), len(ids)))
    times: list[list[float]] = [[] for _ in runners]
    for _ in range(tokens):
        for i, r in enumerate(runners):
            token, pos = state[i]
            t0 = time.perf_counter()
            logits = r.decode(token, pos)
            times[i].append(time.perf_counter() - t0)
            state[i] = (int(np.argmax(logits)), pos + 1)
    return [float(np.median(t[1:] or t)) * 1e3 for t in times]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["smollm2", "gemma3"])
    parser.add_argument("--variants", nargs="+", default=["f32", "bf16", "f16", "int8"])
    parser.add_argument("--tokens", type=int, default=24)
    parser.add_argument("--no-jax-lowp", action="store_true",
                        help="time JAX only for f32 (XLA-CPU low precision is slow)")
    parser.add_argument("--mode", choices=["reduce", "dot"], default=DEFAULT_MODE,
                        help="how weights.linear is traced for IREE")
    parser.add_argument("--baseline-flags", action="store_true",
                        help="compile without the fusion flags (issue #8's 'before')")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    console = Console()
    flags = BASE_CPU_FLAGS if args.baseline_flags else CPU_FLAGS
    rows: list[Row] = []
    for name in args.models:
        t0 = time.perf_counter()
        model = load_model(name)
        console.print(f"{name}: loaded in {time.perf_counter() - t0:.1f} s")
        exact: dict[str, list[int]] = {}
        model_rows: list[Row] = []
        runners: list[IreeRunner] = []
        for variant in args.variants:
            use_jax = variant == "f32" or not args.no_jax_lowp
            row, runner, answers = prepare(model, variant, exact, use_jax, args.tokens, flags,
                                           args.mode)
            if variant == "f32":
                exact = answers
            model_rows.append(row)
            runners.append(runner)
        first = prompt_ids(model, PROMPTS[name][0])
        times = time_interleaved(runners, first, args.tokens)
        for row, ms in zip(model_rows, times, strict=True):
            row.iree_ms = ms
            console.print(f"{row.model} {row.variant}: IREE {row.iree_ms:.1f} ms, JAX "
                          f"{row.jax_ms:.1f} ms, NLL {row.nll:.3f}, agreement "
                          f"{row.agreement:.2f} (mode {row.mode}, compile "
                          f"{row.iree_compile_s:.0f} s)")
        rows += model_rows
        del runners
    table = Table(title="decode step, greedy, batch 1 (ms/token: median)")
    for col in ("model", "variant", "IREE ms", "JAX ms", "IREE compile s", "NLL",
                "agreement"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(r.model, r.variant, f"{r.iree_ms:.1f}", f"{r.jax_ms:.1f}",
                      f"{r.iree_compile_s:.1f}", f"{r.nll:.3f}", f"{r.agreement:.2f}")
    console.print(table)
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1))


if __name__ == "__main__":
    main()
