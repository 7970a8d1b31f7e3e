"""`iree-compile`: where it is, the flags of each target and variant, one compile, its first
error.

The one lookup of the compiler in approxcc (`iree_compile()`); the driver's toolchain and
`ml/build.py` use it. Imports nothing beyond the standard library and `diagnostics`.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from approxcc.diagnostics import CompileError

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
#   data tiling would dequantize into a float copy on every call (8x slower).
CPU_MATMUL_FLAGS = {
    "tiled": ("--iree-global-opt-data-tiling", "--iree-llvmcpu-enable-ukernels=all"),
    "fused": (*FUSION_FLAGS, "--iree-opt-const-expr-hoisting=false"),
}


def target_flags(target: str, widens_weights: bool) -> list[str]:
    """`iree-compile` flags of a variant for `target`; `widens_weights`: its matmuls widen
    integer weight codes (weight-only quantization)."""
    extra = CPU_MATMUL_FLAGS["fused" if widens_weights else "tiled"] if target == "cpu" else ()
    return [*TARGET_FLAGS[target], *extra]


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
    """Compiles a StableHLO file with `flags` (`target_flags`); its seconds, or IreeFailure."""
    start = time.perf_counter()
    cmd = [compiler, str(mlir), "--iree-input-type=stablehlo", *flags, "-o", str(vmfb)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise IreeFailure(first_error(proc.stderr))
    return time.perf_counter() - start
