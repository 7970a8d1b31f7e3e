"""One matrix-vector product in each weight format of ``weights.linear``, through IREE llvm-cpu.

The product is the decode step's unit of work (batch 1: every weight read once), by
default a quarter of Gemma 3 270M's output head (65536 x 640, larger than the L2 caches).
Each format is traced as the decode step traces it (``iree_decode.decode_mode`` and its
flags), its weights served as parameters; the formats take turns call by call and the
median ms per call is printed with the GB/s of weights it reads, beside numpy's one-pass
bandwidth measured in the same run (the floor: bytes over bandwidth).

``tiles-<fmt>`` (f32, bf16, f16, int8, int4-gN) are ``approxcc.ml.packed`` tiles of 32 output
rows, what approxcc's ``quantize``/``precision`` variants store for a decode step's matvecs;
the others are ``workloads.models.weights`` formats as ``iree_decode`` traces them.

``--dump DIR`` writes each format's executable sources and assembly under ``DIR/<format>``
and prints the instruction mix of its per-call dispatches: a widening matvec over
``(out, in)`` rows shows the transposes (``vpermt2ps``) and stack spills (``vmovaps``)
that make it slower than float32; over tiles of 32 rows, only loads, widenings and
multiply-adds.

Usage: ``python bench/ml_matvec.py [--rows 65536] [--cols 640] [--calls 15] [--dump DIR]
[--formats f32 int8 ...]``. Shared machine: read ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import iree.runtime as ireert
import jax
import numpy as np
from ml_decode import TILE, measure_bandwidth
from rich.console import Console
from rich.table import Table

from approxcc.ml.packed import Packed, pack, storage_bytes
from workloads.models.iree_decode import (
    MODE_FLAGS,
    compile_mlir,
    decode_mode,
    export_mlir,
    iree_compile_path,
)
from workloads.models.iree_parameters import as_parameters, parameters_module
from workloads.models.weights import (
    Weight,
    cast_matrices,
    linear,
    quantize_int4,
    quantize_int8,
)

FORMATS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "f32": lambda p: p,
    "bf16": lambda p: cast_matrices(p, "bfloat16"),
    "int8-rows": lambda p: quantize_int8(p, group=0),
    "int8g64": lambda p: quantize_int8(p, group=64),
    "int8": lambda p: quantize_int8(p, block=TILE),
    "w8a8": lambda p: quantize_int8(p, activations="int8"),
    "w8a16": lambda p: quantize_int8(p, activations="int16"),
    "int4": lambda p: quantize_int4(p, group=32),
    **{f"tiles-{fmt}": lambda p, fmt=fmt: {"w": pack(p["w"], fmt)}
       for fmt in ("f32", "bf16", "f16", "int8", "int4-g32", "int4-g128", "int4-g640")},
}
MNEMONIC = re.compile(r"^\s+([a-z][a-z0-9]*)\b", re.M)
FUNCTION = re.compile(r"^main_dispatch\w*:\s*$(.*?)^\.Lfunc_end", re.M | re.S)


def build(w: Weight, x: np.ndarray, name: str, dump: Path | None) -> tuple[Any, int]:
    """The compiled product ``x @ w.T`` (an IREE function) and the bytes of its weights."""
    mode = "reduce" if isinstance(w, Packed) else decode_mode({"w": w})
    leaves = [np.asarray(a) for a in jax.tree_util.tree_leaves(w)]
    product = (lambda w, x: w.matvec(x)) if isinstance(w, Packed) else (lambda w, x: linear(x, w))
    mlir = as_parameters(export_mlir(product, w, x, mode=mode), len(leaves))
    flags = MODE_FLAGS[mode]
    compiled = compile_mlir(mlir, f"matvec-{name}-{x.shape[1]}", flags).vmfb
    if dump:
        out = dump / name
        out.mkdir(parents=True, exist_ok=True)
        (out / "matvec.mlir").write_text(mlir)
        subprocess.run([iree_compile_path(), *flags,
                        f"--iree-hal-dump-executable-sources-to={out}",
                        f"--iree-hal-dump-executable-files-to={out}", str(out / "matvec.mlir"),
                        "-o", str(out / "matvec.vmfb")], check=True)
    config = ireert.Config("local-task")
    context = ireert.SystemContext(config=config)
    leaves = [storage_bytes(a) for a in leaves]   # int4: two codes a byte
    context.add_vm_module(parameters_module(config.vm_instance, leaves))
    module = ireert.VmModule.mmap(config.vm_instance, str(compiled))
    context.add_vm_module(module)
    return context.modules[module.name]["main"], sum(a.nbytes for a in leaves)


def instruction_mix(out: Path, top: int = 6) -> str:
    """The commonest instructions of the per-call dispatches in ``out``'s assembly."""
    counts: collections.Counter[str] = collections.Counter()
    for asm in out.glob("*.s"):
        for body in FUNCTION.findall(asm.read_text()):
            counts.update(MNEMONIC.findall(body))
    return ", ".join(f"{op} {n}" for op, n in counts.most_common(top))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=65536)
    parser.add_argument("--cols", type=int, default=640)
    parser.add_argument("--calls", type=int, default=15)
    parser.add_argument("--formats", nargs="+", default=list(FORMATS), choices=list(FORMATS))
    parser.add_argument("--dump", type=Path)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    w32 = rng.standard_normal((args.rows, args.cols)).astype(np.float32)
    x = rng.standard_normal((1, args.cols)).astype(np.float32)
    exact = x @ w32.T
    fns: dict[str, Any] = {}
    sizes: dict[str, int] = {}
    errors: dict[str, float] = {}
    for name in args.formats:
        fns[name], sizes[name] = build(FORMATS[name]({"w": w32})["w"], x, name, args.dump)
        got = np.asarray(fns[name](x).to_host())
        errors[name] = float(np.abs(got - exact).max() / np.abs(exact).max())
    bandwidth = measure_bandwidth()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(args.calls):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn(x).to_host()
            times[name].append(time.perf_counter() - t0)
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
    for name in fns:
        ms = float(np.median(times[name])) * 1e3
        floor = sizes[name] / bandwidth / 1e6
        cells = [name, f"{ms:.2f}", f"{base * 1e3 / ms:.2f}", f"{sizes[name] / 1e6:.1f}",
                 f"{sizes[name] / ms / 1e6:.1f}", f"{floor:.2f}", f"{floor / ms:.0%}",
                 f"{errors[name]:.1e}"]
        if args.dump:
            cells.append(instruction_mix(args.dump / name))
        table.add_row(*cells)
    console.print(table)


if __name__ == "__main__":
    main()
