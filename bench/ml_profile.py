"""Per-dispatch profile of one IREE decode step or prefill of a real model.

Builds (or reads from the cache) the same vmfbs as ``bench/ml_decode.py``, writes the
weights as a parameter archive and the step's inputs as ``.npy`` files, runs the step under
``iree-benchmark-module`` with IREE's host-execution profiling, and prints the time of each
dispatch (mean per call), grouped by what it does: the output head (the rows of the
vocabulary), the layers' matrix products, attention, norms and the rest.

Usage: ``python bench/ml_profile.py [--model gemma3] [--variant f32] [--step decode|prefill]
[--prefill-len 512] [--calls 5]``.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import iree.runtime as ireert
import jax
import numpy as np
from ml_decode import MAX_LEN, long_prompt, variant_model
from rich.console import Console
from rich.table import Table

from workloads.models import load_model
from workloads.models.decode import pad_prompt
from workloads.models.iree_decode import IreeRunner
from workloads.models.iree_parameters import SCOPE

PRODUCTS = re.compile(r"matvec|vecmat|matmul|mmt4d|batch_matmul|contract")


def kind(name: str, vocab: int) -> str:
    """What a dispatch does, from its name (``main_dispatch_7_matvec_like_1536x576_f32``)."""
    if str(vocab) in name or f"{vocab // 2}" in name:
        return "output head"
    if "attention" in name or "softmax" in name:
        return "attention"
    if PRODUCTS.search(name):
        return "matrix products"
    if "pack" in name or "encode" in name or "transpose" in name:
        return "layout (pack/transpose)"
    if "reduction" in name:
        return "reductions (norms, softmax sums)"
    return "elementwise and other"


def profile(runner: IreeRunner, step: str, inputs: list[np.ndarray], calls: int,
            work: Path) -> dict[str, float]:
    """Mean ms per call of ``step`` (``prefill`` or ``decode``) spent in each dispatch
    function (all its invocations in the call: one a layer for most)."""
    index = ireert.ParameterIndex()
    for k, array in enumerate(runner.weights):
        data = np.ascontiguousarray(array)
        index.add_buffer(f"p{k}", data.view(np.uint16) if data.dtype.itemsize == 2
                         and data.dtype.kind == "V" else data)
    archive = work / "weights.irpa"
    index.create_archive_file(str(archive))
    flags = []
    for i, value in enumerate(inputs):
        path = work / f"in{i}.npy"
        np.save(path, value)
        flags.append(f"--input=@{path}")
    out = work / "step.ireeprof"
    bench = Path(sys.executable).parent / "iree-benchmark-module"
    subprocess.run([str(bench), f"--module={runner.compiled[step].vmfb}",
                    f"--parameters={SCOPE}={archive}", "--function=main", "--device=local-task",
                    "--device_profiling_mode=host-execution",
                    f"--device_profiling_output={out}", f"--benchmark_min_time={calls}x",
                    *flags], check=True, capture_output=True, text=True)
    stats = subprocess.run([str(bench.parent / "iree-profile"), "statistics", "--format=jsonl",
                            str(out)], check=True, capture_output=True, text=True).stdout
    totals: dict[str, float] = {}
    counts: dict[str, int] = {}
    for line in stats.splitlines():
        row = json.loads(line)
        if row.get("row_type") == "host_execution_function" and row.get("function_name"):
            totals[row["function_name"]] = row["total_duration_ns"] / 1e6
            counts[row["function_name"]] = row["sample_count"]
    # A dispatch of one layer runs once a layer: the calls profiled (warm-up included) are
    # the samples of the dispatches that run once a call, the fewest of any.
    n_calls = min(counts.values())
    return {name: ms / n_calls for name, ms in totals.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gemma3")
    parser.add_argument("--variant", default="f32")
    parser.add_argument("--step", choices=["decode", "prefill"], default="decode")
    parser.add_argument("--prefill-len", type=int, default=512)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    model = variant_model(load_model(args.model), args.variant)
    runner = IreeRunner(model, max_len=MAX_LEN, prefill_len=args.prefill_len,
                        variant=args.variant)
    cache = [np.asarray(c) for c in jax.tree_util.tree_leaves(runner.model.new_cache(MAX_LEN))]
    if args.step == "prefill":
        ids = long_prompt(model, args.prefill_len)
        inputs = [*cache, pad_prompt(ids, args.prefill_len)]   # the cache fill: no length
    else:
        inputs = [*cache, np.asarray(1, np.int32), np.asarray(100, np.int32)]
    with tempfile.TemporaryDirectory() as tmp:
        times = profile(runner, args.step, inputs, args.calls, Path(tmp))
    total = sum(times.values())
    vocab = model.config.vocab_size if model.vocab_ids is None else len(model.vocab_ids)
    groups: dict[str, float] = defaultdict(float)
    for name, ms in times.items():
        groups[kind(name, vocab)] += ms
    console = Console(width=160)
    title = (f"{args.model} {args.variant} {args.step}"
             f"{f' {args.prefill_len} tokens' if args.step == 'prefill' else ''}: "
             f"{total:.1f} ms of dispatches a call, {len(times)} dispatches")
    table = Table(title=title)
    for col in ("group", "ms", "share"):
        table.add_column(col, justify="right")
    for group, ms in sorted(groups.items(), key=lambda g: -g[1]):
        table.add_row(group, f"{ms:.2f}", f"{ms / total:.0%}")
    console.print(table)
    top = Table(title=f"top {args.top} dispatches")
    for col in ("dispatch", "ms", "share"):
        top.add_column(col, justify="right")
    for name, ms in sorted(times.items(), key=lambda t: -t[1])[:args.top]:
        top.add_row(name, f"{ms:.2f}", f"{ms / total:.0%}")
    console.print(top)


if __name__ == "__main__":
    main()
