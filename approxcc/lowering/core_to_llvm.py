"""Core dialects → LLVM with upstream MLIR 22: the pass pipeline and the jobs after it.

xDSL's generic printout crosses to upstream `mlir-opt` as text (DESIGN: IR crosses as MLIR
text); from there on, each step is one tool invocation, as clang runs its tools.
"""

from __future__ import annotations

from approxcc.lowering.host import host_triple

# scf → cf first: convert-to-llvm has no scf patterns. reconcile removes the memref
# descriptor casts the frontend builds around C pointers once both sides are LLVM structs.
MLIR_TO_LLVM_PIPELINE = ("builtin.module(convert-scf-to-cf, convert-to-llvm, "
                         "reconcile-unrealized-casts)")


def mlir_opt_args(tool: str, src: str, dst: str) -> list[str]:
    return [tool, f"--pass-pipeline={MLIR_TO_LLVM_PIPELINE}", src, "-o", dst]


def translate_args(tool: str, src: str, dst: str) -> list[str]:
    return [tool, "--mlir-to-llvmir", src, "-o", dst]


def opt_args(tool: str, level: int, src: str, dst: str) -> list[str]:
    # With a triple, opt also gives the module the target's data layout (MLIR emits none).
    return [tool, f"-O{level}", f"-mtriple={host_triple()}", "-S", src, "-o", dst]


def llc_args(tool: str, level: int, src: str, dst: str, filetype: str = "obj") -> list[str]:
    return [tool, f"-O{level}", f"-mtriple={host_triple()}", f"-filetype={filetype}",
            "-relocation-model=pic", src, "-o", dst]
