"""The compiler driver: options → phases → jobs, as clang's driver does.

    source.c ─frontend─▶ approx MLIR ─approx passes─▶ core MLIR ─mlir-opt─▶ LLVM dialect
      ─mlir-translate─▶ .ll ─opt─▶ .ll ─llc─▶ .o ─cc (+ runtime/ libapproxrt)─▶ executable

In-process phases (frontend, approx passes) and tool jobs share one `Job` shape so that the
whole compilation can be printed (`-###`) or run.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

from approxcc.diagnostics import CompileError
from approxcc.driver.toolchain import RUNTIME_DIR, c_compiler, tool
from approxcc.lowering import core_to_llvm

C_SUFFIXES = {".c", ".cc", ".cpp", ".cxx", ".C"}
EMIT_KINDS = ("approx", "mlir", "llvm", "asm")


@dataclass
class Options:
    sources: list[str]
    output: str | None = None
    config: str | None = None
    tunable: bool = False            # knob parameters read at start-up (APPROX_CONFIG)
    opt_level: int = 2
    emit: str | None = None          # with -S: approx | mlir | llvm | asm
    compile_only: bool = False       # -c
    clang_args: list[str] = field(default_factory=list)   # -I -D -U -std=
    link_args: list[str] = field(default_factory=list)    # -l -L
    print_jobs: bool = False         # -###


@dataclass
class Job:
    """One step: a tool command line, or an in-process phase shown as a pseudo-command."""

    argv: list[str]
    run: Callable[[], None] | None = None  # in-process phases

    def execute(self) -> None:
        if self.run is not None:
            self.run()
            return
        proc = subprocess.run(self.argv, capture_output=True, text=True)
        if proc.returncode != 0:
            name = Path(self.argv[0]).name
            raise CompileError(f"{name} failed (exit {proc.returncode}):\n"
                               f"{proc.stderr.strip() or proc.stdout.strip()}")


def print_module(module: ModuleOp, generic: bool) -> str:
    from io import StringIO

    out = StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(module)
    return out.getvalue() + "\n"


class Compilation:
    def __init__(self, opts: Options, workdir: Path):
        self.opts = opts
        self.workdir = workdir
        self.jobs: list[Job] = []

    def temp(self, stem: str, suffix: str) -> Path:
        return self.workdir / f"{stem}{suffix}"

    def build_jobs(self) -> None:
        opts = self.opts
        objects: list[str] = []
        for src in opts.sources:
            suffix = Path(src).suffix
            if suffix in C_SUFFIXES:
                objects += self.compile_jobs(src)
            elif suffix in (".o", ".a", ".so"):
                objects.append(src)
            else:
                raise CompileError(f"unknown input file type: '{src}'")
        if opts.emit or opts.compile_only:
            return
        out = opts.output or "a.out"
        self.jobs.append(Job([compiler_for(opts.sources), *objects, runtime_object(), "-o",
                              out, *opts.link_args, "-lm"]))

    def compile_jobs(self, src: str) -> list[str]:
        """Jobs for one translation unit; returns the object files it produces: the MLIR half
        and the remainder the frontend left to the system compiler (frontend/tu_split.py)."""
        opts = self.opts
        stem = Path(src).stem
        final = opts.emit or ("obj" if opts.compile_only else None)
        approx_mlir = self.temp(stem, ".approx.mlir")
        core_mlir = self.temp(stem, ".mlir")
        state: dict[str, ModuleOp] = {}
        remainder = self.temp(f"{stem}.rest", Path(src).suffix)

        def frontend() -> None:
            from approxcc.frontend.c_parse import compile_unit

            unit = compile_unit(src, opts.clang_args)
            state["module"] = unit.module
            approx_mlir.write_text(print_module(unit.module, generic=False))
            remainder.write_text(unit.remainder)

        def approx_passes() -> None:
            from xdsl.context import Context

            from approxcc.lowering.registry import default_pipeline

            module = state["module"]
            for p in default_pipeline(opts.config, tunable=opts.tunable):
                p.apply(Context(), module)
            core_mlir.write_text(print_module(module, generic=True))

        config = [f"--config={opts.config}"] if opts.config else \
            (["--tunable"] if opts.tunable else [])
        self.jobs.append(Job(["approxcc-frontend", src, *opts.clang_args, "-o",
                              str(approx_mlir)], frontend))
        if final == "approx":
            self.jobs.append(self.copy_job(approx_mlir))
            return []
        self.jobs.append(Job(["approxcc-opt", str(approx_mlir), *config, "-o", str(core_mlir)],
                             approx_passes))
        if final == "mlir":
            self.jobs.append(self.copy_job(core_mlir))
            return []
        llvm_mlir, ll, opt_ll = (self.temp(stem, s) for s in (".llvm.mlir", ".ll", ".opt.ll"))
        self.jobs += [
            Job(core_to_llvm.mlir_opt_args(tool("mlir-opt"), str(core_mlir), str(llvm_mlir))),
            Job(core_to_llvm.translate_args(tool("mlir-translate"), str(llvm_mlir), str(ll))),
            Job(core_to_llvm.opt_args(tool("opt"), opts.opt_level, str(ll), str(opt_ll))),
        ]
        if final == "llvm":
            self.jobs.append(self.copy_job(opt_ll))
            return []
        if final == "asm":
            out = opts.output or f"{stem}.s"
            self.jobs.append(Job(core_to_llvm.llc_args(tool("llc"), opts.opt_level,
                                                       str(opt_ll), out, filetype="asm")))
            return []
        objects = [str(self.temp(stem, ".o")), str(self.temp(f"{stem}.rest", ".o"))]
        self.jobs += [
            Job(core_to_llvm.llc_args(tool("llc"), opts.opt_level, str(opt_ll), objects[0])),
            self.remainder_job(src, remainder, objects[1]),
        ]
        if final != "obj":
            return objects
        obj = opts.output or f"{stem}.o"  # -c: one object, both halves relocatably linked
        self.jobs.append(Job([compiler_for([src]), "-r", "-nostdlib", *objects, "-o", obj]))
        return [obj]

    def remainder_job(self, src: str, remainder: Path, obj: str) -> Job:
        """The system compiler on what the frontend left to it (frontend/tu_split.py); quoted
        includes are looked up beside the original source, as before."""
        return Job([compiler_for([src]), f"-O{self.opts.opt_level}", "-c",
                    *self.opts.clang_args, "-iquote", str(Path(src).parent),
                    str(remainder), "-o", obj])

    def copy_job(self, path: Path) -> Job:
        """Deliver an intermediate text file to -o (or stdout)."""
        out = self.opts.output

        def deliver() -> None:
            text = path.read_text()
            if out in (None, "-"):
                sys.stdout.write(text)
            else:
                Path(out).write_text(text)

        return Job(["approxcc-emit", str(path), "-o", out or "-"], deliver)


def compiler_for(sources: list[str]) -> str:
    """`c++` when any source is C++ (it compiles C++ and links its runtime), else `cc`."""
    from approxcc.frontend.c_parse import is_cplusplus

    if any(is_cplusplus(s) for s in sources):
        return os.environ.get("APPROXCC_CXX") or tool("c++")
    return c_compiler()


def runtime_object() -> str:
    """runtime/approxrt.c compiled once per content hash, as clang ships its runtime."""
    src = RUNTIME_DIR / "approxrt.c"
    digest = hashlib.sha256(src.read_bytes() +
                            (RUNTIME_DIR / "approxrt.h").read_bytes()).hexdigest()[:16]
    cache = Path.home() / ".cache" / "approxcc"
    obj = cache / f"approxrt-{digest}.o"
    if not obj.exists():
        cache.mkdir(parents=True, exist_ok=True)
        tmp = obj.with_suffix(f".{id(obj)}.tmp.o")
        subprocess.run([c_compiler(), "-O2", "-fPIC", "-c", str(src), "-I", str(RUNTIME_DIR),
                        "-o", str(tmp)], check=True)
        tmp.replace(obj)  # atomic: parallel builds never see a half-written object
    return str(obj)


def build(opts: Options) -> int:
    with tempfile.TemporaryDirectory(prefix="approxcc-") as tmp:
        comp = Compilation(opts, Path(tmp))
        comp.build_jobs()
        if opts.print_jobs:
            for job in comp.jobs:
                print(" " + " ".join(shlex.quote(a) for a in job.argv), file=sys.stderr)
            return 0
        for job in comp.jobs:
            job.execute()
    return 0
