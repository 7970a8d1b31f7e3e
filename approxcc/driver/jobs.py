"""Phases → jobs, as clang's driver builds them.

    source.c ─frontend─▶ .approx.mlir ─approx passes─▶ .core.mlir ─mlir-opt─▶ .llvm.mlir
      ─mlir-translate─▶ .ll ─opt─▶ .opt.ll ─llc─▶ .mlir.o ┐
    remainder (frontend/tu_split.py) .rest.c ─cc─▶ .rest.o ┴─ cc -r (+ .knobs.s) ─▶ .o (-c)
    objects ─cc (+ the approxcc runtime)─▶ executable

    source.c without annotations ─cc (the user's flags as written)─▶ .o

    model.py ─approxcc.ml.build─▶ folder of IREE variants and manifest.json

A translation unit without annotations is the system compiler's, flags as written (see
driver/passthrough.py): only annotated code goes through MLIR, unless -fapprox-mlir=all or
an IR output (-emit-mlir, -emit-llvm, --emit) asks for every function.

A compilation is a list of jobs, each a command line that does its step when pasted into a
shell (`-###` prints them, `-v` prints them as they run). Tools run as processes; the
in-process phases (frontend, approx passes, dependency file, model build) are spelled as the
`approxcc -cc1 ...` / `approxcc opt ...` commands that do the same (driver/cc1.py), and run
in this process, handing the frontend's module to the passes in memory. Intermediates are
named after their source (`a.approx.mlir`, `a.core.mlir`, `a.ll`, `a.rest.o`, ...) in a
temporary folder, in the temporary directory itself (prefixed, as clang names them) for
`-###`, or where `-save-temps` keeps them.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp

from approxcc.annotations import scan_annotations
from approxcc.diagnostics import CompileError, warn
from approxcc.driver import cc1, passthrough, program_knobs
from approxcc.driver.invocation import approxcc_command
from approxcc.driver.options import C_SUFFIXES, DependencyOptions, Options
from approxcc.driver.program_knobs import KnobRecord
from approxcc.driver.toolchain import (
    RUNTIME_DIR,
    c_compiler,
    cxx_compiler,
    ensure_runtime_archive,
    runtime_archive,
)
from approxcc.lowering import core_to_llvm
from approxcc.lowering.host import tool

# the suffix of each -S/-c output kind when -o does not name it
_DEFAULT_SUFFIX = {"approx": ".mlir", "mlir": ".mlir", "llvm": ".ll", "bc": ".bc", "asm": ".s",
                   None: ".o"}
# Tools that only ever see what approxcc generated: their failure is approxcc's bug.
_INTERNAL_TOOLS = ("mlir-opt", "mlir-translate", "opt", "llc", "llvm-as")
FAULT_VARIABLE = "APPROXCC_INJECT_FAULT"


def inject_fault(phase: str) -> None:
    """Test hook (tests/test_robustness.py): `APPROXCC_INJECT_FAULT=PHASE` makes the phase
    fail as a bug in approxcc would, which no input can otherwise cause. Phases: frontend,
    each approx pass by name, mlir-opt, mlir-translate, opt, llc, cc (the remainder), depfile,
    link, ml-build."""
    if os.environ.get(FAULT_VARIABLE) == phase:
        raise RuntimeError(f"fault injected into phase '{phase}' ({FAULT_VARIABLE})")


class ToolFailure(Exception):
    """A tool failed on input approxcc generated: an internal compiler error."""


def _reader_gone() -> bool:
    """Whether standard output is a pipe whose reader has closed it."""
    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poll.poll(0))
    except (OSError, ValueError):
        return False


@dataclass
class Job:
    """One step: its command line, and for an in-process phase the function that does in
    this process what the command line does."""

    argv: list[str]
    phase: str
    run: Callable[[], None] | None = None      # an in-process phase
    prepare: Callable[[], None] | None = None  # in-process checks before the tool runs
    to_stdout: bool = False                    # the tool's output is ours (-E without -o)
    unit: str | None = None                    # the translation unit it compiles (cc1)

    def execute(self) -> None:
        inject_fault(self.phase)
        if self.prepare is not None:
            self.prepare()
        if self.run is not None:
            try:
                self.run()
            except BrokenPipeError:
                raise
            except OSError as err:  # an output that cannot be written, as clang words it
                raise CompileError(f"unable to open output file '{err.filename}': "
                                   f"{err.strerror}") from None
            return
        sys.stdout.flush()
        proc = subprocess.run(self.argv, stdout=None if self.to_stdout else subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, errors="replace")
        if proc.returncode == 0:
            return
        if self.to_stdout and _reader_gone():
            raise BrokenPipeError("standard output closed")  # `approxcc -E ... | head`
        output = (proc.stderr.strip() or (proc.stdout or "").strip())
        if self.phase in _INTERNAL_TOOLS:
            raise ToolFailure(f"{self.phase} failed with exit code {proc.returncode}: "
                              f"{output.splitlines()[0] if output else '(no output)'}")
        if output:
            print(output, file=sys.stderr)  # the tool's own diagnostics, as clang shows them
        what = "linker" if self.phase == "link" else Path(self.argv[0]).name
        raise CompileError(f"{what} command failed with exit code {proc.returncode} (use -v "
                           f"to see invocation)")


def compiler_for(sources: list[str]) -> str:
    """`c++` when any source is C++ (it compiles C++ and links its runtime), else `cc`."""
    from approxcc.frontend.c_parse import is_cplusplus

    return cxx_compiler() if any(is_cplusplus(s) for s in sources) else c_compiler()


def _source_macros(src: str) -> list[str]:
    """The builtin macros that describe the compiled file, as they are for `src` rather
    than for the remainder's temporary file (`#line` renames only __FILE__):
    __BASE_FILE__, __TIMESTAMP__ (its modification time); the flag silences their
    redefinition."""
    base = src.replace("\\", "\\\\").replace('"', '\\"')
    stamp = time.asctime(time.localtime(os.stat(src).st_mtime))
    return ["-Wno-builtin-macro-redefined", f'-D__BASE_FILE__="{base}"',
            f'-D__TIMESTAMP__="{stamp}"']


def annotated(src: str, include_dirs: tuple[str, ...] = ()) -> bool:
    """Whether a source holds an approx annotation (a malformed one too: the frontend
    reports it), or a file it includes does (the frontend compiles those too)."""
    if not passthrough.has_annotations(src, include_dirs):
        return False
    text = Path(src).read_bytes()
    if not passthrough.marks_annotation(text):
        return True  # only included files have some
    try:
        return bool(scan_annotations(src, text.decode(errors="surrogateescape")))
    except CompileError:
        return True


@dataclass
class _Unit:
    """What the in-process phases of one translation unit hand to each other."""

    module: ModuleOp = field(default_factory=lambda: ModuleOp([]))  # the frontend's
    knobs: list[KnobRecord] = field(default_factory=list)


class Compilation:
    """The jobs of one command line. `tag` prefixes the intermediates' names when they go to
    the shared temporary directory (-###: the printed commands must be able to write them)."""

    def __init__(self, opts: Options, workdir: Path, tag: str = ""):
        self.opts = opts
        self.workdir = workdir
        self.tag = tag
        self.jobs: list[Job] = []
        self.units: dict[str, _Unit] = {}
        self.stems: set[str] = set()
        # what libclang and the system compiler see: the user's flags, then the runtime's
        # header (a system directory, as clang's own headers)
        self.parse_args = [*opts.clang_args, "-isystem", str(RUNTIME_DIR)]
        self.warned_ignored = False  # about the flags the MLIR path does not honour

    def temp(self, stem: str, suffix: str) -> Path:
        return self.workdir / f"{self.tag}{stem}{suffix}"

    def unique_stem(self, src: str) -> str:
        stem, n = Path(src).stem, 1
        while stem in self.stems:
            stem, n = f"{Path(src).stem}-{n}", n + 1
        self.stems.add(stem)
        return stem

    def default_output(self, src: str) -> str:
        return Path(src).stem + _DEFAULT_SUFFIX[self.opts.emit]

    # phases ------------------------------------------------------------------------------
    def build_jobs(self) -> list[Job]:
        """Every job of the command line, in the order they run."""
        opts = self.opts
        link_inputs: list[str] = []
        for item in opts.sources:
            if item.endswith(".py") and not item.startswith("-"):
                self.jobs.append(self.model_job(item))
            elif item.endswith(C_SUFFIXES) and not item.startswith("-"):
                if opts.preprocess_only:
                    self.jobs.append(self.preprocess_job(item))
                else:
                    link_inputs += self.compile_jobs(item)
            elif opts.links() and not opts.models():
                link_inputs.append(item)  # objects, libraries, -l, -Wl,
            elif not item.startswith("-"):
                warn(f"{item}: 'linker' input unused", flag="-Wunused-command-line-argument")
        if opts.links() and not opts.models():
            self.jobs.append(self.link_job(link_inputs))
        return self.jobs

    def preprocess_job(self, src: str) -> Job:
        out = ["-o", self.opts.output] if self.opts.output not in (None, "-") else []
        deps = self.opts.dependencies.flags() if self.opts.dependencies else []
        return Job([compiler_for([src]), "-E", *self.parse_args, *deps, src, *out], "cc",
                   to_stdout=not out)

    def all_functions(self) -> bool:
        """Whether every function goes through MLIR: -fapprox-mlir=all, or an IR output."""
        return self.opts.mlir_functions == "all" or self.opts.emit in ("approx", "mlir",
                                                                       "llvm", "bc")

    def system_compiler_job(self, src: str, stem: str) -> list[str]:
        """A unit without annotations: the system compiler with the user's flags as written;
        the object the link takes."""
        opts = self.opts
        if opts.syntax_only:
            self.jobs.append(Job([compiler_for([src]), *opts.cc_args, "-isystem",
                                  str(RUNTIME_DIR), src], "cc", unit=src))
            return []
        if opts.emit == "asm":
            out = ["-S", "-o", opts.output or self.default_output(src)]
        elif opts.compile_only:
            out = ["-c", "-o", opts.output or self.default_output(src)]
        else:
            out = ["-c", "-o", str(self.temp(stem, ".o"))]
        self.jobs.append(Job([compiler_for([src]), *opts.cc_args, "-isystem", str(RUNTIME_DIR),
                              src, *out], "cc", unit=src))
        return [] if opts.emit == "asm" or opts.compile_only else [out[-1]]

    def compile_jobs(self, src: str) -> list[str]:
        """Jobs for one translation unit: the phases up to the one -S/-c stops after, then
        what delivers its output; returns the object files it produces for the link."""
        opts = self.opts
        stem = self.unique_stem(src)
        if not self.all_functions() and \
                not annotated(src, passthrough.include_dirs(self.opts.clang_args)):
            return self.system_compiler_job(src, stem)
        self.warn_ignored_flags(src)
        t = {s: self.temp(stem, s) for s in (".approx.mlir", ".core.mlir", ".llvm.mlir", ".ll",
                                             ".opt.ll", ".mlir.o")}
        cpu = [f"-mcpu={opts.target_cpu}"] if opts.target_cpu else []
        phases = [
            lambda: self.frontend_job(src, stem),
            lambda: self.passes_job(src, stem),
            lambda: Job(core_to_llvm.mlir_opt_args(tool("mlir-opt"), str(t[".core.mlir"]),
                                                   str(t[".llvm.mlir"]), opts.debug_info()),
                        "mlir-opt"),
            lambda: Job(core_to_llvm.translate_args(tool("mlir-translate"),
                                                    str(t[".llvm.mlir"]), str(t[".ll"])),
                        "mlir-translate"),
            lambda: Job([*core_to_llvm.opt_args(tool("opt"), opts.opt_level, str(t[".ll"]),
                                                str(t[".opt.ll"]),
                                                opts.instrumenting_sanitizer()),
                         *cpu], "opt"),
        ]
        # what each output kind is made from (the last phase's output), as clang's -S/-c
        last = {"approx": (1, ".approx.mlir"), "mlir": (2, ".core.mlir"),
                "llvm": (5, ".opt.ll"), "bc": (5, ".opt.ll"), "asm": (5, ".opt.ll"),
                None: (5, ".opt.ll")}[opts.emit]
        self.jobs += [make() for make in phases[:1 if opts.syntax_only else last[0]]]
        if opts.syntax_only:
            return []
        out = opts.output or self.default_output(src)
        if opts.emit in ("approx", "mlir", "llvm"):
            self.jobs.append(self.deliver_job(t[last[1]], out))
        elif opts.emit == "bc":
            self.jobs.append(Job([tool("llvm-as"), str(t[".opt.ll"]), "-o", out], "llvm-as"))
        elif opts.emit == "asm":
            self.jobs.append(Job([*core_to_llvm.llc_args(tool("llc"), opts.opt_level,
                                                         str(t[".opt.ll"]), out, "asm",
                                                         self.dwarf_version()), *cpu],
                                 "llc"))
        else:
            return self.object_jobs(src, stem, t[".opt.ll"], t[".mlir.o"], cpu)
        return []

    def dwarf_version(self) -> int | None:
        return self.opts.dwarf_version() if self.opts.debug_info() else None

    def warn_ignored_flags(self, src: str) -> None:
        """Once per command line: the flags the functions MLIR compiles do not get."""
        if self.warned_ignored:
            return
        self.warned_ignored = True
        for flag in self.opts.ignored_on_mlir_path():
            warn(f"'{flag}' is not applied to the functions approxcc compiles through MLIR "
                 f"(in {src}); the system compiler applies it to the rest",
                 flag="-Wapprox-ignored-flag")

    def object_jobs(self, src: str, stem: str, opt_ll: Path, mlir_o: Path,
                    cpu: list[str]) -> list[str]:
        """The MLIR half's object, the remainder's (frontend/tu_split.py), the make rule; with
        -c, one object of both and the knob record. The objects the link takes."""
        opts = self.opts
        objects = [str(mlir_o), str(self.temp(f"{stem}.rest", ".o"))]
        remainder = self.temp(f"{stem}.rest", Path(src).suffix)
        self.jobs += [
            Job([*core_to_llvm.llc_args(tool("llc"), opts.opt_level, str(opt_ll), objects[0],
                                        dwarf_version=self.dwarf_version()), *cpu], "llc"),
            self.remainder_job(src, remainder, objects[1], self.temp(f"{stem}.rest", ".d")),
        ]
        obj = opts.output if opts.compile_only and opts.output else self.default_output(src)
        if opts.dependencies is not None:
            self.jobs.append(self.depfile_job(src, stem, obj))
        if not opts.compile_only:
            return objects
        self.jobs.append(Job([compiler_for([src]), "-r", "-nostdlib", *objects,
                              str(self.temp(f"{stem}.knobs", ".s")), "-o", obj], "cc"))
        return [obj]

    def frontend_job(self, src: str, stem: str) -> Job:
        """libclang and the C frontend: `approxcc -cc1 frontend`."""
        opts = self.opts
        unit = self.units.setdefault(src, _Unit())
        out, remainder = self.temp(stem, ".approx.mlir"), self.temp(f"{stem}.rest",
                                                                     Path(src).suffix)
        knobs_asm = self.temp(f"{stem}.knobs", ".s") \
            if opts.compile_only and opts.emit is None else None
        includes = self.temp(stem, ".includes") if opts.dependencies is not None else None
        system_headers = opts.dependencies is not None and opts.dependencies.system_headers
        clang_args = self.parse_args + opts.warning_args
        debug_info = opts.debug_info()  # the locations in the .approx.mlir written

        # the passes take the module in memory: its text is printed (seconds on a large
        # unit) only where it is kept
        printed = out if opts.emit == "approx" or opts.save_temps else None

        def run() -> None:
            unit.module, unit.knobs = cc1.frontend(src, clang_args, printed, remainder,
                                                   knobs_asm, includes, system_headers,
                                                   all_functions, debug_info)

        argv = [*approxcc_command(), "-cc1", "frontend", src, "-o", str(out), "--remainder",
                str(remainder)]
        argv += ["--knobs-asm", str(knobs_asm)] if knobs_asm else []
        argv += ["--includes", str(includes)] * bool(includes)
        argv += ["--system-headers"] * system_headers
        argv += ["--all-functions"] * self.all_functions()
        all_functions = self.all_functions()
        return Job([*argv, "--", *self.parse_args, *opts.diagnostic_args,
                    *["-g"] * debug_info], "frontend", run, unit=src)

    def pipeline(self) -> str:
        """The approx passes, spelled as `approxcc opt --pass-pipeline` takes them."""
        from approxcc.lowering.apply_config import ApplyConfigPass
        from approxcc.lowering.registry import DEFAULT_PIPELINE, TUNABLE_PIPELINE

        if self.opts.tunable:
            passes = TUNABLE_PIPELINE
        elif not self.opts.config:
            passes = DEFAULT_PIPELINE
        else:
            apply = ApplyConfigPass(self.opts.config, partial=True).pipeline_pass_spec()
            passes = f"{apply},{DEFAULT_PIPELINE}"
        return passes + self.codegen_passes()

    def codegen_passes(self) -> str:
        """What the flags ask of the generated code (lowering/codegen.py), as clang's
        codegen gives it to every function: the sanitizer's attribute, the frame pointer,
        the stack protector; -g's source locations."""
        from approxcc.lowering.codegen import CodegenAttributesPass

        opts = self.opts
        attributes = CodegenAttributesPass(opts.instrumenting_sanitizer(),
                                           opts.frame_pointer(), opts.stack_protector())
        out = f",{attributes.pipeline_pass_spec()}" if attributes.attributes() else ""
        return out + ",approx-debug-locations" * opts.debug_info()

    def passes_job(self, src: str, stem: str) -> Job:
        """The approx passes over the frontend's module (in memory): `approxcc opt`."""
        from approxcc.driver.opt import print_module
        from approxcc.lowering.registry import apply_passes, parse_pipeline

        unit, pipeline = self.units[src], self.pipeline()
        approx_mlir, core_mlir = self.temp(stem, ".approx.mlir"), self.temp(stem, ".core.mlir")

        debug_info = self.opts.debug_info()  # the locations, for mlir-opt's line tables

        def run() -> None:
            apply_passes(unit.module, parse_pipeline(pipeline), lambda p: inject_fault(p.name))
            core_mlir.write_text(print_module(unit.module, generic=True, debuginfo=debug_info))

        return Job([*approxcc_command(), "opt", f"--pass-pipeline={pipeline}",
                    "--mlir-print-op-generic", *["--mlir-print-debuginfo"] * debug_info,
                    str(approx_mlir), "-o", str(core_mlir)], "approx-passes", run, unit=src)

    def remainder_job(self, src: str, remainder: Path, obj: str, deps: Path) -> Job:
        """The system compiler on what the frontend left to it (frontend/tu_split.py); quoted
        includes are looked up beside the original source, as before."""
        opts = self.opts
        dep_flags = ([] if opts.dependencies is None else
                     ["-MD" if opts.dependencies.system_headers else "-MMD", "-MF", str(deps)])
        return Job([compiler_for([src]), f"-O{opts.opt_level}", "-c", *self.parse_args,
                    *opts.codegen_args, *dep_flags, "-iquote", str(Path(src).parent),
                    *_source_macros(src), str(remainder), "-o", obj], "cc")

    def depfile_job(self, src: str, stem: str, obj: str) -> Job:
        """The object's make rule: `approxcc -cc1 depfile`."""
        deps = self.opts.dependencies
        assert deps is not None
        if deps.file:
            path = deps.file
        elif self.opts.compile_only and self.opts.output:
            path = str(Path(obj).with_suffix(".d"))  # beside the object, as clang puts it
        else:
            path = f"{Path(src).stem}.d"
        includes, rule = self.temp(stem, ".includes"), self.temp(f"{stem}.rest", ".d")
        remainder, config = self.temp(f"{stem}.rest", Path(src).suffix), self.opts.config
        written = DependencyOptions(deps.system_headers, path, deps.targets, deps.phony)

        def run() -> None:
            cc1.dependency_file(src, written, path, obj, includes, rule, remainder, config)

        return Job([*approxcc_command(), "-cc1", "depfile", src, "--target", obj,
                    "--includes", str(includes), "--rule", str(rule), "--remainder",
                    str(remainder), *(["--config", config] if config else []), "--",
                    *written.flags()], "depfile", run)

    def deliver_job(self, path: Path, out: str) -> Job:
        """An intermediate text file to -o (`-` = stdout)."""
        if out == "-":
            return Job(["cat", str(path)], "cat", to_stdout=True)
        return Job(["cp", str(path), out], "cp")

    def link_job(self, inputs: list[str]) -> Job:
        """cc over the objects, libraries and linker flags in command-line order, and the
        runtime; first the program's knobs are checked (driver/program_knobs.py)."""
        opts = self.opts
        sources = opts.c_sources()

        def check() -> None:
            ensure_runtime_archive()
            records: list[KnobRecord] = []
            for item in opts.sources:
                if item in self.units:
                    records += self.units[item].knobs
                elif not item.startswith("-") and Path(item).is_file():
                    records += program_knobs.object_knobs(item)
            program_knobs.check_program(records, opts.config)

        return Job([compiler_for(sources), *inputs, str(runtime_archive()), "-o",
                    opts.output or "a.out", *opts.link_args, *opts.codegen_args, "-lm"],
                   "link", prepare=check)

    def model_job(self, model: str) -> Job:
        """A .py model: every variant compiled with IREE (with `--config`, those it selects):
        `approxcc -cc1 ml-build`; with `-S -emit-mlir`, its approx IR."""
        if self.opts.emit == "approx":   # -emit-mlir: the approx IR
            ir_out = self.opts.output or f"{Path(model).stem}.mlir"
            return Job([*approxcc_command(), "-cc1", "ml-emit", model, "-o", ir_out],
                       "ml-emit", lambda: cc1.model_emit(model, ir_out))
        out = self.opts.output or Path(model).stem
        targets = self.opts.ml_targets or "cpu"
        keep_going, config = self.opts.keep_going, self.opts.config
        return Job([*approxcc_command(), "-cc1", "ml-build", model, "-o", out,
                    f"--target={targets}", *(["--keep-going"] if keep_going else []),
                    *(["--config", config] if config else [])],
                   "ml-build", lambda: cc1.model_build(model, out, targets, keep_going, config))
