"""One matrix-vector product in each weight format approxcc's knobs store, through the user
path (a decorated module built with approxcc, run by its runtime).

The product is the decode step's unit of work (batch 1: every weight read once), by
default a quarter of Gemma 3 270M's output head (65536 x 640, larger than the L2 caches).
The module (written to the build folder) is ``matvec(params, x) = x @ params["w"].T`` with a
``weights`` (quantize) and a ``precision`` knob; a format is one value of one knob, the other
exact: ``f32`` (exact), ``bf16``/``f16`` (precision), ``int8``, ``int4-gN``, ``w8a8``
(quantize). The formats take turns call by call and the median ms per call is printed with
the GB/s of weights it reads, beside numpy's one-pass bandwidth measured in the same run
(the floor: bytes over bandwidth).

``--dump DIR`` recompiles each format's StableHLO with the build's flags, writing its
executable sources and assembly under ``DIR/<format>``, and prints the instruction mix of
its per-call dispatches.

Usage: ``python bench/ml_matvec.py [--rows 65536] [--cols 640] [--calls 15] [--dump DIR]
[--formats f32 int8 ...]``. Shared machine: read ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
from ml_decode import ROOT, bytes_read, knob_values, measure_bandwidth
from rich.console import Console
from rich.table import Table

from approxcc.ml.build import build_model
from approxcc.ml.iree import iree_compile, target_flags
from approxcc.ml.runtime import load

QUANT = ["none", "int8", "int4-g32", "int4-g128", "int4-g640", "w8a8", "w8a16"]
PRECISION = ["f32", "bf16", "f16"]
FORMATS = ["f32", *PRECISION[1:], *QUANT[1:]]
MODULE = '''"""bench/ml_matvec.py's product (generated)."""
import numpy as np

from approxcc import approx

W = np.load("{w}")
X = np.load("{x}")


@approx.knob("weights", transform="quantize", values={quant})
@approx.knob("precision", transform="precision", values={precision})
def matvec(params, x):
    return x @ params["w"].T


APPROX_EXAMPLE_ARGS = {{"matvec": ({{"w": W}}, X)}}
'''
MNEMONIC = re.compile(r"^\s+([a-z][a-z0-9]*)\b", re.M)
FUNCTION = re.compile(r"^main_dispatch\w*:\s*$(.*?)^\.Lfunc_end", re.M | re.S)


def build(w: np.ndarray, x: np.ndarray, out: Path) -> Path:
    """The module for `w` and `x`, built into `out` (vmfbs kept across runs)."""
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "w.npy", w)
    np.save(out / "x.npy", x)
    source = out / "matvec.py"
    source.write_text(MODULE.format(w=out / "w.npy", x=out / "x.npy", quant=QUANT,
                                    precision=PRECISION))
    return build_model(source, out / "build").path


def label_of(fmt: str) -> str:
    return "exact" if fmt == "f32" else (f"precision={fmt}" if fmt in PRECISION
                                         else f"weights={fmt}")


def dump_variant(manifest: Path, label: str, out: Path) -> str:
    """The instruction mix of the per-call dispatches of `label`'s variant, recompiled with
    its flags and dumped under `out`."""
    fn = json.loads(manifest.read_text())["functions"]["matvec"]
    choice = {k["name"]: k["exact"] for k in fn["knobs"]} | knob_values(fn["knobs"])[label]
    variant = next(v for v in fn["variants"] if v["choice"] == choice)
    out.mkdir(parents=True, exist_ok=True)
    flags = target_flags("cpu", variant["widens"], variant["rows"])
    subprocess.run([iree_compile(), str(manifest.parent / variant["mlir"]),
                    "--iree-input-type=stablehlo", *flags,
                    f"--iree-hal-dump-executable-sources-to={out}",
                    f"--iree-hal-dump-executable-files-to={out}", "-o", str(out / "m.vmfb")],
                   check=True)
    counts: collections.Counter[str] = collections.Counter()
    for asm in out.glob("*.s"):
        for body in FUNCTION.findall(asm.read_text()):
            counts.update(MNEMONIC.findall(body))
    return ", ".join(f"{op} {n}" for op, n in counts.most_common(6))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=65536)
    parser.add_argument("--cols", type=int, default=640)
    parser.add_argument("--calls", type=int, default=15)
    parser.add_argument("--formats", nargs="+", default=FORMATS, choices=FORMATS)
    parser.add_argument("--dump", type=Path)
    parser.add_argument("--build-root", type=Path, default=ROOT / "build" / "ml_matvec")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    w32 = rng.standard_normal((args.rows, args.cols)).astype(np.float32)
    x = rng.standard_normal((1, args.cols)).astype(np.float32)
    exact = x @ w32.T
    manifest = build(w32, x, args.build_root / f"{args.rows}x{args.cols}")
    sizes = bytes_read(manifest, -1, "matvec")
    fns: dict[str, Any] = {}
    errors: dict[str, float] = {}
    for fmt in args.formats:
        choice = knob_values(json.loads(manifest.read_text())["functions"]["matvec"]["knobs"])
        prog = load(manifest, config={"approxcc": "1", "knobs": {
            k: {"value": v} for k, v in choice[label_of(fmt)].items()}})
        fns[fmt] = prog.matvec
        errors[fmt] = float(np.abs(np.asarray(fns[fmt](x)) - exact).max() / np.abs(exact).max())
    bandwidth = measure_bandwidth()
    times: dict[str, list[float]] = {fmt: [] for fmt in fns}
    for _ in range(args.calls):
        for fmt, fn in fns.items():
            t0 = time.perf_counter()
            fn(x)
            times[fmt].append(time.perf_counter() - t0)
    console = Console(width=200)
    table = Table(title=f"{args.rows}x{args.cols} matvec, IREE llvm-cpu local-task; numpy "
                        f"{bandwidth:.1f} GB/s one pass")
    columns = ["format", "ms", f"speed-up vs {args.formats[0]}", "MB", "GB/s", "floor ms",
               "of floor", "max error"]
    if args.dump:
        columns.append("per-call instruction mix")
    for col in columns:
        table.add_column(col, justify="right")
    base = float(np.median(times[args.formats[0]]))
    for fmt in fns:
        ms = float(np.median(times[fmt])) * 1e3
        size = sizes[label_of(fmt)]
        floor = size / bandwidth / 1e6
        cells = [fmt, f"{ms:.2f}", f"{base * 1e3 / ms:.2f}", f"{size / 1e6:.1f}",
                 f"{size / ms / 1e6:.1f}", f"{floor:.2f}", f"{floor / ms:.0%}",
                 f"{errors[fmt]:.1e}"]
        if args.dump:
            cells.append(dump_variant(manifest, label_of(fmt), args.dump / fmt))
        table.add_row(*cells)
    console.print(table)


if __name__ == "__main__":
    main()
