"""Command-line flags → Options, as clang's driver reads them.

`approxcc build ARGS` and `approxcc ARGS` (no subcommand) take the same flags: clang's, plus
approxcc's own (`-fapprox-config=FILE` / `--config FILE`, `-fapprox-tunable` / `--tunable`,
`-emit-mlir` / `--emit=approx|mlir|llvm|asm`, `--target=cpu,cuda,rocm` for `.py` models).
Flags approxcc does not interpret but a build may pass (`-f...`, `-m...`, `-W...`, `-pthread`,
`-g`) go where they mean something: the libclang parse, the system compiler that compiles
the remainder (frontend/tu_split.py), the link. Anything else is `unknown argument`.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from approxcc.diagnostics import CompileError, WarningOptions

C_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".C")
APPROX_WARNINGS = ("-Wapprox-exact-knob", "-Wapprox-skipped-annotation")

# Flags whose value may be the next argument (`-I dir`) or joined (`-Idir`).
_SEPARATE = ("-o", "-I", "-D", "-U", "-l", "-L", "-MF", "-MT", "-MQ")
# Preprocessor flags with a separate value, for the parse and the system compiler.
_PREPROCESSOR_PAIRS = ("-include", "-imacros", "-isystem", "-iquote", "-idirafter")
_LINK_ONLY = ("-shared", "-static", "-rdynamic", "-pie", "-no-pie", "-nostdlib",
              "-nodefaultlibs", "-nostartfiles", "-s")
_OPT_LEVELS = {"-O0": 0, "-O1": 1, "-O": 1, "-Og": 1, "-O2": 2, "-Os": 2, "-Oz": 2, "-O3": 3,
               "-Ofast": 3}
_EMIT_KINDS = ("approx", "mlir", "llvm", "asm")
KNOWN_FLAGS = (*_SEPARATE, *_PREPROCESSOR_PAIRS, *_LINK_ONLY, *_OPT_LEVELS, "-c", "-S", "-E",
               "-emit-llvm", "-emit-mlir", "-###", "-v", "-save-temps", "-save-temps=cwd",
               "-save-temps=obj", "-Werror", "-w", "-MD", "-MMD", "-MP", "-g", "-pthread",
               "-std=", "-fapprox-config=", "-fapprox-tunable", "-fdiagnostics-color=",
               "--version", "--help", "--config", "--tunable", "--emit=", "--target=",
               "-Xlinker", "-nostdinc", "-ansi", "-pedantic", "-pipe")

HELP = """\
OVERVIEW: approxcc, the accuracy-aware C/C++ compiler (a clang-compatible driver)

USAGE: approxcc [build] [options] file...

Files: .c .cc .cpp .cxx .C are compiled; .o .a .so and anything else are linked;
a .py model is built into IREE variants (approxcc.ml.build) in the -o folder.

OPTIONS:
  -c / -S / -E            compile to an object / to assembly / preprocess only
  -emit-llvm              with -S: LLVM IR (.ll); with -c: bitcode (.bc)
  -emit-mlir              MLIR from the frontend, with approx ops (.mlir)
  --emit=KIND             with -S: approx | mlir (after the approx passes) | llvm | asm
  -o FILE                 output file (`-` = stdout for text)
  -fapprox-config=FILE    build one knob configuration (also --config FILE)
  -fapprox-tunable        read knob values at start-up from $APPROX_CONFIG (also --tunable)
  -I -D -U -std= -include -isystem -iquote -idirafter    as clang
  -O0 -O1 -O2 -O3 -Os -Oz -Ofast -g                     as clang
  -l -L -Wl, -Xlinker -shared -static -pthread          linking
  -MD -MMD -MF -MT -MQ -MP                              dependency files for make
  -w -Werror -Werror=FLAG -Wno-error=FLAG -WFLAG -Wno-FLAG
                          warnings (approx's own: -Wapprox-exact-knob,
                          -Wapprox-skipped-annotation)
  -fdiagnostics-color=never|always|auto
  -save-temps[=cwd|obj]   keep every intermediate (.approx.mlir, .core.mlir, .ll, .o, ...)
  -###                    print the jobs, run nothing
  -v                      print the jobs as they run
  --target=cpu,cuda,rocm  IREE targets of a .py model
  --version               print the version
"""


@dataclass
class DependencyOptions:
    """-MD / -MMD and their companions: a make rule listing what an object was built from."""

    system_headers: bool                                # -MD: True; -MMD: False
    file: str | None = None                             # -MF
    targets: list[str] = field(default_factory=list)    # -MT (verbatim) and -MQ (quoted)
    phony: bool = False                                 # -MP

    def flags(self) -> list[str]:
        """The flags as the system compiler takes them (for -E, which it runs)."""
        out = ["-MD" if self.system_headers else "-MMD"]
        out += ["-MF", self.file] if self.file else []
        out += [a for t in self.targets for a in ("-MT", t)]
        return out + ["-MP"] * self.phony


@dataclass
class Options:
    # input files and linker inputs (-l, -Wl,; -Xlinker X as -Wl,X), in command-line order
    sources: list[str]
    output: str | None = None
    config: str | None = None
    tunable: bool = False            # knob parameters read at start-up (APPROX_CONFIG)
    opt_level: int = 2
    emit: str | None = None          # approx | mlir | llvm | bc | asm; None: object or link
    compile_only: bool = False       # -c
    clang_args: list[str] = field(default_factory=list)   # parse + system compiler
    link_args: list[str] = field(default_factory=list)    # -L, -shared, -f/-m flags, ...
    print_jobs: bool = False         # -###
    preprocess_only: bool = False    # -E
    dependencies: DependencyOptions | None = None
    save_temps: str | None = None    # cwd | obj
    verbose: bool = False            # -v
    codegen_args: list[str] = field(default_factory=list)  # -g, -Wa,: system compiler, link
    warning_args: list[str] = field(default_factory=list)  # -W flags for the libclang parse
    target_cpu: str | None = None    # -march= / -mcpu=: opt and llc
    ml_targets: str | None = None    # --target= of .py models
    warnings: WarningOptions = field(default_factory=WarningOptions)
    show_version: bool = False
    show_help: bool = False

    def inputs(self) -> list[str]:
        return [s for s in self.sources if not s.startswith("-")]

    def c_sources(self) -> list[str]:
        return [s for s in self.inputs() if s.endswith(C_SUFFIXES)]

    def models(self) -> list[str]:
        return [s for s in self.inputs() if s.endswith(".py")]

    def links(self) -> bool:
        return not (self.compile_only or self.emit or self.preprocess_only)


def diagnostics_color(argv: list[str]) -> str:
    """never | always | auto: read before anything else, so argument errors are coloured."""
    mode = "auto"
    for arg in argv:
        if arg in ("-fcolor-diagnostics", "-fdiagnostics-color"):
            mode = "always"
        elif arg in ("-fno-color-diagnostics", "-fno-diagnostics-color"):
            mode = "never"
        elif arg.startswith("-fdiagnostics-color="):
            mode = arg.split("=", 1)[1]
    return mode


def _unknown(arg: str) -> CompileError:
    stem = arg.split("=", 1)[0] + ("=" if "=" in arg else "")
    close = difflib.get_close_matches(stem, KNOWN_FLAGS, n=1, cutoff=0.75)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return CompileError(f"unknown argument: '{arg}'{hint}")


class _Parser:
    def __init__(self, argv: list[str]):
        self.argv = argv
        self.i = 0
        self.opts = Options([])
        self.emit_flag: str | None = None   # -emit-llvm / -emit-mlir / --emit=
        self.assembly = False               # -S
        self.dep_mode: str | None = None    # -MD / -MMD; the companions may come first
        self.deps = DependencyOptions(False)

    def value(self, flag: str, arg: str) -> str:
        """The value of `flag` in `arg` (joined, or `=`) or in the next argument."""
        if arg != flag:
            return arg[len(flag):].removeprefix("=") if flag.startswith("--") else \
                arg[len(flag):]
        self.i += 1
        if self.i >= len(self.argv):
            raise CompileError(f"argument to '{flag}' is missing (expected 1 value)")
        return self.argv[self.i]

    def parse(self) -> Options:
        while self.i < len(self.argv):
            arg = self.argv[self.i]
            if arg.startswith("-") and arg != "-":
                self.flag(arg)
            else:
                self.opts.sources.append(arg)
            self.i += 1
        self.finish()
        return self.opts

    def flag(self, arg: str) -> None:
        o = self.opts
        separate = next((f for f in _SEPARATE if arg.startswith(f)), None)
        if separate is not None:
            self.separate(separate, self.value(separate, arg))
        elif arg in _PREPROCESSOR_PAIRS:
            o.clang_args += [arg, self.value(arg, arg)]
        elif arg in _OPT_LEVELS:
            o.opt_level = _OPT_LEVELS[arg]
        elif arg in ("-c", "-E"):
            o.compile_only |= arg == "-c"
            o.preprocess_only |= arg == "-E"
        elif arg == "-S":
            self.assembly = True
        elif arg in ("-emit-llvm", "-emit-mlir"):
            self.emit_flag = "llvm" if arg == "-emit-llvm" else "approx"
        elif arg.startswith("--emit=") or arg == "--emit":
            self.emit_flag = self.value("--emit", arg)
            if self.emit_flag not in _EMIT_KINDS:
                raise CompileError(f"invalid value '{self.emit_flag}' in '--emit' (expected "
                                   f"{', '.join(_EMIT_KINDS)})")
        elif arg == "-###":
            o.print_jobs = True
        elif arg == "-v":
            o.verbose = True
        elif arg in ("--version", "--help"):
            o.show_version |= arg == "--version"
            o.show_help |= arg == "--help"
        elif arg in ("-save-temps", "-save-temps=cwd", "-save-temps=obj"):
            o.save_temps = arg.partition("=")[2] or "cwd"
        elif arg.startswith("-fapprox-config=") or arg.startswith("--config"):
            o.config = self.value("--config", arg) if arg.startswith("--config") else \
                arg.split("=", 1)[1]
        elif arg in ("-fapprox-tunable", "--tunable"):
            o.tunable = True
        elif arg.startswith("--target"):
            o.ml_targets = self.value("--target", arg)
        elif arg in ("-MD", "-MMD"):
            self.dep_mode = arg
        elif arg == "-MP":
            self.deps.phony = True
        elif arg.startswith(("-W", "-w", "-pedantic")):
            self.warning(arg)
        elif arg.startswith(("-fdiagnostics-color", "-fno-diagnostics-color",
                             "-fcolor-diagnostics", "-fno-color-diagnostics")):
            mode = arg.partition("=")[2]
            if mode and mode not in ("never", "always", "auto"):
                raise CompileError(f"invalid argument '{mode}' to -fdiagnostics-color=")
        elif arg.startswith(("-f", "-m")) or arg == "-pthread":
            o.clang_args.append(arg)
            o.link_args.append(arg)
            if arg.startswith(("-march=", "-mcpu=")):
                o.target_cpu = arg.split("=", 1)[1]
        elif arg.startswith("-std="):
            o.clang_args.append(arg)
        elif arg in ("-nostdinc", "-ansi", "-trigraphs") or arg.startswith("-Wp,"):
            o.clang_args.append(arg)
        elif arg.startswith("-g"):
            o.codegen_args.append(arg)
        elif arg in _LINK_ONLY:
            o.link_args.append(arg)
        elif arg == "-Xlinker":
            o.sources.append(f"-Wl,{self.value(arg, arg)}")
        elif arg == "-pipe":
            pass  # approxcc's jobs use files; harmless
        else:
            raise _unknown(arg)

    def separate(self, flag: str, value: str) -> None:
        o = self.opts
        if flag == "-o":
            o.output = value
        elif flag in ("-I", "-D", "-U"):
            o.clang_args.append(f"{flag}{value}")
        elif flag == "-l":
            o.sources.append(f"-l{value}")
        elif flag == "-L":
            o.link_args.append(f"-L{value}")
        elif flag == "-MF":
            self.deps.file = value
        else:  # -MT / -MQ
            self.deps.targets.append(value if flag == "-MT" else quote_target(value))

    def warning(self, arg: str) -> None:
        o, w = self.opts, self.opts.warnings
        if arg == "-w":
            w.ignore_all = True
        elif arg == "-Werror":
            w.all_errors = True
        elif arg == "-Wno-error":
            w.all_errors = False
        elif arg.startswith("-Werror="):
            flag = f"-W{arg.split('=', 1)[1]}"
            w.errors.add(flag)
            w.disabled.discard(flag)
            if flag not in APPROX_WARNINGS:
                o.warning_args.append(flag)
        elif arg.startswith("-Wno-error="):
            w.not_errors.add(f"-W{arg.split('=', 1)[1]}")
        elif arg.startswith("-Wl,"):
            o.sources.append(arg)
        elif arg.startswith("-Wa,"):
            o.codegen_args.append(arg)
        elif arg.startswith("-Wp,"):
            o.clang_args.append(arg)
        elif arg.startswith("-Wno-"):
            w.disabled.add(f"-W{arg[5:]}")
            if f"-W{arg[5:]}" not in APPROX_WARNINGS:
                o.warning_args.append(arg)
        elif arg in APPROX_WARNINGS:
            w.disabled.discard(arg)
        elif arg.startswith(("-W", "-pedantic")):
            o.warning_args.append(arg)  # clang's own warnings: the parse decides
        else:
            raise _unknown(arg)

    def finish(self) -> None:
        o = self.opts
        if self.dep_mode is not None:
            self.deps.system_headers = self.dep_mode == "-MD"
            o.dependencies = self.deps
        if self.emit_flag is not None or self.assembly:
            kind = self.emit_flag or "asm"
            if not (self.assembly or o.compile_only):
                raise CompileError(f"-emit-{'mlir' if kind == 'approx' else kind} cannot be "
                                   f"used when linking")
            o.emit = "bc" if kind == "llvm" and not self.assembly else kind
        if o.config and o.tunable:
            raise CompileError("-fapprox-config builds one configuration, -fapprox-tunable "
                               "all of them: choose one")
        outputs = o.c_sources() if not o.links() else []
        if o.output and o.output != "-" and len(outputs) > 1:
            raise CompileError("cannot specify -o when generating multiple output files")
        if o.models() and (len(o.models()) > 1 or len(o.inputs()) > 1):
            raise CompileError("a .py model is built alone: one model per command")
        if o.ml_targets and not o.models():
            raise CompileError(f"--target={o.ml_targets} selects the IREE targets of a .py "
                               f"model; C and C++ are compiled for the host")
        for src in o.inputs():
            if not Path(src).exists():
                raise CompileError(f"no such file or directory: '{src}'")


def quote_target(target: str) -> str:
    """-MQ: a target with make's special characters escaped."""
    return target.replace("$", "$$").replace(" ", "\\ ").replace("#", "\\#")


def parse_args(argv: list[str]) -> Options:
    """The Options of a command line; a CompileError for a flag approxcc cannot take."""
    return _Parser(argv).parse()
