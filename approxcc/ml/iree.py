"""`iree-compile`: where it is, the flags of each target, one compile, its first error.

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
    "cpu": ["--iree-hal-target-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host",
            *FUSION_FLAGS],
    "cuda": ["--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80"],
    "rocm": ["--iree-hal-target-device=hip", "--iree-rocm-target=gfx942"],
}


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


def compile_stablehlo(compiler: str, mlir: Path, vmfb: Path, target: str) -> float:
    """Compiles a StableHLO file for `target`; its seconds, or IreeFailure."""
    start = time.perf_counter()
    cmd = [compiler, str(mlir), "--iree-input-type=stablehlo", *TARGET_FLAGS[target],
           "-o", str(vmfb)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise IreeFailure(first_error(proc.stderr))
    return time.perf_counter() - start
