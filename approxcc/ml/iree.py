"""`iree-compile`: where it is, the flags of each target and variant, one compile, its first
error.

The one lookup of the compiler in approxcc (`iree_compile()`); the driver's toolchain and
`ml/build.py` use it. Imports nothing beyond the standard library, `diagnostics` and
`unsigned_int4` (the rewrite a module with unsigned int4 weights gets after IREE's import).
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from approxcc.diagnostics import CompileError
from approxcc.ml import unsigned_int4

# Without it IREE 3.13 puts the widening `convert` (bf16/f16/int8 -> f32) of a weight
# *argument* in a dispatch of its own: every call writes and re-reads an f32 copy of each
# weight, so low-precision variants run slower than f32 (Gemma's 262144x640 logits matvec in
# bf16: 0.74-1.4 s a call instead of 0.05-0.06 s). With it the widening fuses into the matvec.
FUSION_FLAGS = ("--iree-dispatch-creation-enable-aggressive-fusion",)
TARGET_FLAGS = {
    "cpu": ["--iree-hal-target-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"],
    "cuda": ["--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80"],
    "rocm": ["--iree-hal-target-device=hip", "--iree-rocm-target=gfx942"],
}
# CPU, by how a variant's matmuls read their weights (weights are globals: what IREE derives
# from one alone is hoisted into the initializer):
# - "tiled": float weights, or int8 x int8 (w8a8): data tiling, packed layouts and mmt4d
#   ukernels, the packing of a weight done once (SmolLM2's f32 decode step 2.8x faster than
#   "fused"). The global-optimization data tiling: IREE 3.13's default one
#   (--iree-opt-data-tiling) crashes on a whole decode step;
# - "fused": codes widened inside the matmul (weight-only int8/int4): the widening fused into
#   the matvec (FUSION_FLAGS), not hoisted (it would store a widened copy: no bytes saved);
#   data tiling would dequantize into a float copy on every call (8x slower);
# - "matrix": matrix-matrix products (a prompt's prefill; `MATRIX_ROWS`): data tiling on
#   IREE's default path, which compiles these (the workloads' prefill). Under `LONG_ROWS`
#   rows, workgroups of up to 1 MiB of operands (`SHORT_MATRIX_FLAGS`): by default a
#   data-tiled matmul's workgroup is 2 x 3 tiles of 8 x 8 outputs (a 128-token prompt's
#   SmolLM2 step 5% slower than with 1 MiB); from `LONG_ROWS` on IREE's default ones (there
#   faster: SmolLM2's 512-token float32 prefill 744 against 669 tokens/s, the rest level). No
#   FUSION_FLAGS: with them a norm's reduction over a 64-row tile exceeds llvm-cpu's stack
#   limit. Widened codes are not hoisted (the bytes stay saved); their dequantization is
#   spread over the rows.
#
# NO_HOISTING is what keeps a widened copy out: IREE 3.13 also miscompiles some modules with
# it (a division by a `reduce_window` over a constant, stax's AvgPool: relL2 15 against
# exact, 0.45% without it, exact's own module too; stax's ResNet-50 at 224x224, int8: 5.2,
# 0.8% without). `build` checks every CPU variant against exact on the example inputs and
# compiles a module that runs a broken one again without the flag, keeping the better
# (`accuracy`; the manifest's `flags`, `flags_tried`).
NO_HOISTING = "--iree-opt-const-expr-hoisting=false"
CPU_MATMUL_FLAGS = {
    "tiled": ("--iree-global-opt-data-tiling", "--iree-llvmcpu-enable-ukernels=all"),
    "fused": (*FUSION_FLAGS, NO_HOISTING),
    "matrix": ("--iree-opt-data-tiling", "--iree-llvmcpu-enable-ukernels=all"),
}
SHORT_MATRIX_FLAGS = ("--iree-llvmcpu-matmul-tile-bytes=1048576",)
# A module is "matrix" when one of its plain (unbatched) matmuls has this many rows: a
# decode step's have one, a prefill's one per prompt token (padded to 32 or more).
MATRIX_ROWS = 32
LONG_ROWS = 512


def target_flags(target: str, widens_weights: bool, rows: int) -> list[str]:
    """`iree-compile` flags of a variant for `target`; `widens_weights`: its matmuls widen
    integer weight codes (weight-only quantization); `rows`: the most rows of its plain
    matmuls (1 for matrix-vector products)."""
    if target != "cpu":
        return list(TARGET_FLAGS[target])
    if rows >= MATRIX_ROWS:
        hoisting = (NO_HOISTING,) if widens_weights else ()
        tiles = SHORT_MATRIX_FLAGS if rows < LONG_ROWS else ()
        return [*TARGET_FLAGS[target], *CPU_MATMUL_FLAGS["matrix"], *tiles, *hoisting]
    return [*TARGET_FLAGS[target], *CPU_MATMUL_FLAGS["fused" if widens_weights else "tiled"]]


# The CPU features under which IREE's mmt4d ukernels multiply bf16 / f16 operands as they
# are stored, accumulating in f32 (`vdpbf16ps`; `vcvtph2ps` into AVX-512 FMAs): a plain
# narrow weight then goes through data tiling like an f32 one, reading half its bytes
# (65536x640 matvec on an AVX-512 EPYC: bf16 1.34x, f16 1.47x f32's, where widening tiles
# gave 0.66x, 1.1x). Without them a data-tiled bf16 matmul falls back to generic code (0.1x
# of f32 on AVX2), so narrow floats are widened from tiles instead (`packed`).
NATIVE_NARROW_FLOATS = {"bf16": {"avx512f", "avx512_bf16"}, "f16": {"avx512f", "f16c"}}


@functools.cache
def host_cpu_features() -> frozenset[str]:
    """The flags of this machine's CPU (`--iree-llvmcpu-target-cpu=host` compiles for it),
    empty where /proc/cpuinfo does not list them."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return frozenset()
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    return frozenset(line.partition(":")[2].split())


def multiplies_natively(precision: str) -> bool:
    """The CPU build multiplies `precision` ("bf16", "f16") weights as stored, through data
    tiling (else it widens them from tiles inside the matvec)."""
    return NATIVE_NARROW_FLOATS.get(precision, {"-"}) <= host_cpu_features()


def iree_compile() -> str:
    """The `iree-compile` of this Python environment (iree-base-compiler), else on PATH."""
    local = Path(sys.executable).parent / "iree-compile"
    found = str(local) if local.exists() else shutil.which("iree-compile")
    if not found:
        raise CompileError("iree-compile not found (pip install iree-base-compiler)")
    return found


class IreeFailure(Exception):
    """iree-compile rejected a module; `line` is its first error message."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line


# `file:line:col: error: message` (IREE's location is the generated .mlir, not the user's).
_IREE_ERROR = re.compile(r"^(?:.*?:\d+:\d+: )?error: (?P<message>.*)$")
# Where IREE's message goes on to print the offending op (`...: %51:2 = "stablehlo...`).
_OP_DUMP = re.compile(r':\s+(?:%\S+ = )?"[a-z_]+\.[a-z_.]+"\(.*$')


def first_error(stderr: str) -> str:
    """IREE's first error message, without its location or the op it prints."""
    for line in stderr.splitlines():
        m = _IREE_ERROR.match(line.strip())
        if m:
            return _OP_DUMP.sub("", m["message"]).strip()
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    return lines[0] if lines else "iree-compile failed without a message"


def compile_stablehlo(compiler: str, mlir: Path, vmfb: Path, flags: list[str]) -> float:
    """Compiles a StableHLO file with `flags` (`target_flags`); its seconds, or IreeFailure.
    A module with unsigned int4 weights is imported first and rewritten
    (`unsigned_int4`), then compiled from there."""
    start = time.perf_counter()
    partial = vmfb.with_suffix(".partial")   # an interrupted build leaves no vmfb behind
    source, phase = [str(mlir), "--iree-input-type=stablehlo"], []
    imported = vmfb.with_suffix(".input.mlir")
    if unsigned_int4.applies(mlir.read_text()):
        _run([compiler, *source, *flags, "--compile-to=input", "-o", str(imported)], partial)
        imported.write_text(unsigned_int4.rewrite(imported.read_text()))
        source, phase = [str(imported), "--compile-from=input"], list(unsigned_int4.FLAGS)
    try:
        _run([compiler, *source, *flags, *phase, "-o", str(partial)], partial)
    finally:
        imported.unlink(missing_ok=True)
    partial.replace(vmfb)
    return time.perf_counter() - start


def _run(cmd: list[str], partial: Path) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        partial.unlink(missing_ok=True)
        raise IreeFailure(first_error(proc.stderr))
