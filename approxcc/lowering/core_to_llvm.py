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
# -g: a DISubprogram for every llvm.func and the ops' source locations as its line table
# (the compile unit named after the module's location: the source). Full, not
# LineTablesOnly: for the latter LLVM leaves out the functions' DIEs, without which
# libasan's symbolizer reports no file:line (there are no types or variables either way).
DEBUG_INFO_PASS = "ensure-debug-info-scope-on-llvm-func{emission-kind=Full}"
# the sanitizers' instrumentation, run where clang runs it: after the optimisation pipeline;
# it instruments the functions with the attribute approx-codegen-attributes gives them
SANITIZER_PASSES = {"address": "asan", "thread": "tsan-module,function(tsan)"}


def mlir_opt_args(tool: str, src: str, dst: str, debug_info: bool = False) -> list[str]:
    if not debug_info:
        return [tool, f"--pass-pipeline={MLIR_TO_LLVM_PIPELINE}", src, "-o", dst]
    pipeline = f"{MLIR_TO_LLVM_PIPELINE[:-1]}, {DEBUG_INFO_PASS})"
    return [tool, f"--pass-pipeline={pipeline}", "--mlir-print-debuginfo", src, "-o", dst]


def translate_args(tool: str, src: str, dst: str) -> list[str]:
    return [tool, "--mlir-to-llvmir", src, "-o", dst]


def opt_args(tool: str, level: int, src: str, dst: str, sanitize: str = "") -> list[str]:
    # With a triple, opt also gives the module the target's data layout (MLIR emits none).
    passes = [f"-passes=default<O{level}>,{SANITIZER_PASSES[sanitize]}"] if sanitize else \
        [f"-O{level}"]
    return [tool, *passes, f"-mtriple={host_triple()}", "-S", src, "-o", dst]


def llc_args(tool: str, level: int, src: str, dst: str, filetype: str = "obj",
             dwarf_version: int | None = None) -> list[str]:
    dwarf = [f"--dwarf-version={dwarf_version}"] if dwarf_version else []
    return [tool, f"-O{level}", f"-mtriple={host_triple()}", f"-filetype={filetype}",
            "-relocation-model=pic", *dwarf, src, "-o", dst]
