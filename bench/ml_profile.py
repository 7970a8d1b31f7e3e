"""Per-dispatch profile of one variant of a real model's build (`make bench-ml`'s).

Takes the variant's vmfb and weights from the build's manifest (building
examples/ml/<model>_decode.py first when needed, as bench/ml_decode.py does), writes the
weights as a parameter archive and the step's inputs as `.npy` files, runs the step under
`iree-benchmark-module` with IREE's host-execution profiling, and prints the time of each
dispatch (mean per call), grouped by what it does: the output head (the rows of the
vocabulary), the layers' matrix products, attention, norms and the rest.

Usage: ``python bench/ml_profile.py [--model gemma3] [--fn decode_step|prefill|prefill_long]
[--set weights=int8 ...] [--calls 5] [--position 100]`` (``--set KNOB=LABEL``: that value of
one of the function's knobs, the others exact).
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
from typing import Any

import iree.runtime as ireert
import ml_decode  # noqa: F401 (first: it puts examples/ml, kv_decoder's, on the path)
import numpy as np
from kv_decoder import MAX_LEN, live_positions
from ml_decode import ROOT, build
from rich.console import Console
from rich.table import Table

from approxcc.ml.build import PARAMETER_SCOPE

PRODUCTS = re.compile(r"matvec|vecmat|matmul|mmt4d|batch_matmul|contract")
VOCAB = {"gemma3": 262144, "smollm2": 49152}
POSITION = 100   # a decode step's default position: where bench/ml_decode.py's steps are


def head(vocab: int) -> re.Pattern[str]:
    """A dispatch over the output head's rows: all of them (``elementwise_49152``), its
    tiles of 16 in an mmt4d (``mmt4d_1x3072x288``) or of 32 in a packed matvec
    (``matvec_like_1536x32x576``); not another product with as many rows as the tiles
    (SmolLM2's FFN, ``matmul_512x1536x576``)."""
    return re.compile(rf"(?<![0-9]){vocab}(?![0-9])|mmt4d_\d+x{vocab // 16}x|_{vocab // 32}x32x")


def kind(name: str, vocab: int) -> str:
    """What a dispatch does, from its name (``main_dispatch_7_matvec_like_1536x576_f32``)."""
    if head(vocab).search(name):
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


def variant_of(fn: dict[str, Any], settings: list[str]) -> dict[str, Any]:
    """The manifest entry of the variant with `settings` ("knob=label"), the others exact."""
    choice = {k["name"]: k["exact"] for k in fn["knobs"]}
    for setting in settings:
        name, _, label = setting.partition("=")
        knob = next((k for k in fn["knobs"] if k["name"] == name), None)
        if knob is None or label not in map(str, knob["values"]):
            raise SystemExit(f"no knob value {setting!r}; knobs: "
                             + "; ".join(f"{k['name']}={'|'.join(map(str, k['values']))}"
                                         for k in fn["knobs"]))
        choice[name] = knob["domain"][[str(v) for v in knob["values"]].index(label)]
    return next(v for v in fn["variants"] if v["choice"] == choice)


def zeros(sig: dict[str, Any], symbolic: int) -> np.ndarray:
    """Zeros of an input's shape, `symbolic` long where a dimension is symbolic."""
    return np.zeros([symbolic if isinstance(d, str) else d for d in sig["shape"]], sig["dtype"])


def profile(root: Path, variant: dict[str, Any], inputs: list[np.ndarray], calls: int,
            work: Path) -> dict[str, tuple[float, float]]:
    """Per dispatch function of `variant`: mean ms per call spent in it (all its
    invocations in the call: one a layer for most) and its invocations per call."""
    index = ireert.ParameterIndex()
    with np.load(root / variant["weights"]) as npz:
        for i in range(len(npz.files)):
            index.add_buffer(f"p{i}", np.ascontiguousarray(npz[f"arr_{i}"]))
    archive = work / "weights.irpa"
    index.create_archive_file(str(archive))
    flags = []
    for i in variant["input_args"]:
        path = work / f"in{i}.npy"
        np.save(path, inputs[i])
        flags.append(f"--input=@{path}")
    out = work / "step.ireeprof"
    bench = Path(sys.executable).parent / "iree-benchmark-module"
    subprocess.run([str(bench), f"--module={root / variant['vmfb']['cpu']}",
                    f"--parameters={PARAMETER_SCOPE}={archive}", "--function=main",
                    "--device=local-task", "--device_profiling_mode=host-execution",
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
    return {name: (ms / n_calls, counts[name] / n_calls) for name, ms in totals.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gemma3", choices=list(VOCAB))
    parser.add_argument("--fn", default="decode_step",
                        choices=["decode_step", "prefill", "prefill_long"])
    parser.add_argument("--set", action="append", default=[], metavar="KNOB=LABEL")
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--position", type=int, default=POSITION,
                        help="a decode step's position (its attention reads the cache up to it)")
    parser.add_argument("--build-root", type=Path, default=ROOT / "build" / "bench_ml")
    args = parser.parse_args()
    manifest = build(args.model, args.build_root / args.model)
    fn = json.loads(manifest.read_text())["functions"][args.fn]
    variant = variant_of(fn, args.set)
    if "cpu" not in variant["vmfb"]:
        raise SystemExit(f"variant {variant['name']} has no CPU vmfb of its own (a dispatch "
                         "runs it)")
    inputs = [zeros(sig, live_positions(args.position, MAX_LEN)) for sig in fn["inputs"]]
    if args.fn == "decode_step":
        inputs[0], inputs[1] = np.asarray(1, np.int32), np.asarray(args.position, np.int32)
    else:
        inputs[0] = np.arange(1, 1 + inputs[0].size, dtype=np.int32)
    with tempfile.TemporaryDirectory() as tmp:
        profiled = profile(manifest.parent, variant, inputs, args.calls, Path(tmp))
    times = {name: ms for name, (ms, _) in profiled.items()}
    total = sum(times.values())
    dispatches = sum(n for _, n in profiled.values())
    groups: dict[str, float] = defaultdict(float)
    for name, ms in times.items():
        groups[kind(name, VOCAB[args.model])] += ms
    labels = ", ".join(f"{k}={v}" for k, v in variant["labels"].items())
    console = Console(width=160)
    table = Table(title=f"{args.model} {args.fn} <{labels}>: {total:.1f} ms of dispatches a "
                        f"call, {dispatches:.0f} dispatches a call of {len(times)} functions")
    for col in ("group", "ms", "share"):
        table.add_column(col, justify="right")
    for group, ms in sorted(groups.items(), key=lambda g: -g[1]):
        table.add_row(group, f"{ms:.2f}", f"{ms / total:.0%}")
    console.print(table)
    top = Table(title=f"top {args.top} dispatch functions")
    for col in ("dispatch", "ms", "share", "a call"):
        top.add_column(col, justify="right")
    for name, ms in sorted(times.items(), key=lambda t: -t[1])[:args.top]:
        top.add_row(name, f"{ms:.2f}", f"{ms / total:.0%}", f"{profiled[name][1]:.0f}")
    console.print(top)


if __name__ == "__main__":
    main()
