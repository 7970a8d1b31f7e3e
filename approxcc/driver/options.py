"""Command-line flags → Options, as clang's driver reads them: one table, `FLAGS`.

Every flag the driver takes is declared once, in `FLAGS`: its spellings, its kind (as clang's
OptTable: a flag, a joined value `-Idir`, a separate value `-Xlinker X`, or either), its help
and where its value goes. The parser, `approxcc build --help` and the "did you mean" hints
are generated from the table. A spelling ending in a letter that is also the prefix of other
arguments (`-f`, `-m`, `-W`, `-g`) takes the whole family: flags approxcc does not interpret
but a build may pass go where they mean something (the libclang parse, the system compiler
that compiles the remainder, frontend/tu_split.py, the link). Anything else is
`unknown argument`. Every argument error is reported (as clang does), then the driver stops.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from approxcc.diagnostics import CompileError, WarningOptions

C_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".C")
APPROX_WARNINGS = ("-Wapprox-exact-knob", "-Wapprox-skipped-annotation", "-Wapprox-recover",
                   "-Wapprox-ignored-flag")
COLOR_MODES = ("never", "always", "auto")
EMIT_KINDS = ("approx", "mlir", "llvm", "asm")
_OPT_LEVELS = {"": 1, "0": 0, "1": 1, "g": 1, "2": 2, "s": 2, "z": 2, "3": 3, "fast": 3}


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
    keep_going: bool = False         # --keep-going: build a model's other variants past a failure
    warnings: WarningOptions = field(default_factory=WarningOptions)
    color: str = "auto"              # -fdiagnostics-color=
    diagnostic_args: list[str] = field(default_factory=list)  # -w, -W..., colour: as given
    show_version: bool = False
    show_help: bool = False
    mlir_functions: str = "annotated"  # -fapprox-mlir=: which functions go through MLIR
    syntax_only: bool = False        # -fsyntax-only
    # the flags as written that the system compiler takes when it compiles a translation
    # unit approxcc leaves to it (a source without annotations): see Flag.compiles
    cc_args: list[str] = field(default_factory=list)

    def inputs(self) -> list[str]:
        return [s for s in self.sources if not s.startswith("-")]

    def c_sources(self) -> list[str]:
        return [s for s in self.inputs() if s.endswith(C_SUFFIXES)]

    def models(self) -> list[str]:
        return [s for s in self.inputs() if s.endswith(".py")]

    def links(self) -> bool:
        return not (self.compile_only or self.emit or self.preprocess_only or self.syntax_only)

    # what the code generated for the functions MLIR compiles takes from the flags (the
    # rest of a file has them as written: the system compiler compiles it)
    def sanitizers(self) -> list[str]:
        """The sanitizers -fsanitize= turns on and no later -fno-sanitize= turns off."""
        on: dict[str, None] = {}
        for arg in self.clang_args:
            for prefix, add in (("-fsanitize=", True), ("-fno-sanitize=", False)):
                if arg.startswith(prefix):
                    for kind in arg[len(prefix):].split(","):
                        if add:
                            on[kind] = None
                        elif kind == "all":
                            on.clear()
                        else:
                            on.pop(kind, None)
        return list(on)

    def instrumenting_sanitizer(self) -> str:
        """The sanitizer whose instrumentation the MLIR path adds: address or thread."""
        return next((s for s in self.sanitizers() if s in _INSTRUMENTED_SANITIZERS), "")

    def debug_info(self) -> bool:
        """-g, -g1..3, -ggdb, -gdwarf-N, -gline-tables-only (the last level given; -g0: off)."""
        on = False
        for arg in self.codegen_args:
            if (m := _DEBUG_LEVEL.fullmatch(arg)) is not None:
                on = m.group(1) != "0"
        return on

    def dwarf_version(self) -> int | None:
        versions = [int(a[len("-gdwarf-"):]) for a in self.codegen_args
                    if re.fullmatch(r"-gdwarf-[2-5]", a)]
        return versions[-1] if versions else None

    def last_flag(self, choices: dict[str, str]) -> str:
        """The value in `choices` of the last of its flags given ("" when none is)."""
        return next((choices[a] for a in reversed(self.clang_args) if a in choices), "")

    def frame_pointer(self) -> str:
        return self.last_flag(_FRAME_POINTER_FLAGS)

    def stack_protector(self) -> str:
        return self.last_flag(_STACK_PROTECTOR_FLAGS)

    def ignored_on_mlir_path(self) -> list[str]:
        """The flags the functions MLIR compiles do not get (the system compiler gives them
        to the rest): sanitizers other than address, thread and leak, coverage and
        profiling instrumentation, floating-point relaxations, ..."""
        out = [f"-fsanitize={s}" for s in self.sanitizers()
               if s not in _INSTRUMENTED_SANITIZERS + _RUNTIME_ONLY_SANITIZERS]
        if len([s for s in self.sanitizers() if s in _INSTRUMENTED_SANITIZERS]) > 1:
            out.append(f"-fsanitize={self.sanitizers()[-1]}")
        out += [a for a in self.clang_args if a not in _WHAT_MLIR_DOES and (
            a.startswith(_IGNORED_ON_MLIR_PATH) or
            self.debug_info() and a.startswith(_IGNORED_WITH_DEBUG_INFO))]
        return list(dict.fromkeys(out))


_INSTRUMENTED_SANITIZERS = ("address", "thread")
_RUNTIME_ONLY_SANITIZERS = ("leak",)  # a run-time library, no instrumentation
_DEBUG_LEVEL = re.compile(r"-g(?:gdb|dwarf(?:-[2-5])?|line-tables-only)?([0-3]?)")
_FRAME_POINTER_FLAGS = {"-fno-omit-frame-pointer": "all", "-fomit-frame-pointer": "none",
                        "-mno-omit-leaf-frame-pointer": "all",
                        "-momit-leaf-frame-pointer": "non-leaf"}
_STACK_PROTECTOR_FLAGS = {"-fstack-protector": "ssp", "-fstack-protector-strong": "sspstrong",
                          "-fstack-protector-all": "sspreq", "-fno-stack-protector": ""}
# flags (by prefix) whose effect the MLIR path does not give the functions it compiles
_IGNORED_ON_MLIR_PATH = (
    "-fprofile-arcs", "-ftest-coverage", "-fprofile-generate", "-fprofile-instr-generate",
    "-fprofile-use", "-fprofile-instr-use", "-fcoverage-mapping", "-finstrument-functions",
    "-fcf-protection", "-fstack-clash-protection", "-fpatchable-function-entry",
    "-fzero-call-used-regs", "-ftrivial-auto-var-init=", "-fsplit-stack", "-ffast-math",
    "-funsafe-math-optimizations", "-ffinite-math-only", "-fno-signed-zeros",
    "-freciprocal-math", "-fassociative-math", "-ffp-contract=fast", "-mcmodel=",
    "-mno-red-zone", "-mgeneral-regs-only", "-msoft-float", "-fsanitize-coverage=")
_IGNORED_WITH_DEBUG_INFO = ("-fdebug-prefix-map=", "-ffile-prefix-map=")
_WHAT_MLIR_DOES = ("-fcf-protection=none", "-ftrivial-auto-var-init=uninitialized")


class Kind(Enum):
    """How a flag takes its value, as clang's OptTable says it."""

    FLAG = "flag"                              # -c
    JOINED = "joined"                          # -std=c11, -Wall (the spelling is a prefix)
    SEPARATE = "separate"                      # -Xlinker X
    JOINED_OR_SEPARATE = "joined-or-separate"  # -Idir or -I dir; --config=F or --config F


# What the parser state is while it reads one command line; an action changes it.
Action = Callable[["_Parser", str, str], None]   # (parser, the spelling, the value)


@dataclass(frozen=True)
class Flag:
    spellings: tuple[str, ...]
    kind: Kind
    help: str
    action: Action
    metavar: str = ""
    section: str = "Other"
    hidden: bool = False   # in the table (so accepted), not in --help
    # the system compiler takes it to compile a unit (Options.cc_args); approxcc's own never
    compiles: bool = True


def _set(name: str, value: object = None) -> Action:
    """Store the flag's value (or `value`) in the Options field `name`."""
    return lambda p, flag, v: setattr(p.opts, name, v if value is None else value)


def _add(name: str, spelled: str = "{flag}{value}") -> Action:
    """Append the flag, spelled as `spelled`, to the Options list `name`."""
    return lambda p, flag, v: getattr(p.opts, name).append(spelled.format(flag=flag, value=v))


def _pair(name: str) -> Action:
    """Append the flag and its value as two arguments (`-isystem DIR`)."""
    return lambda p, flag, v: getattr(p.opts, name).extend([flag, v])


def _to(*actions: Action) -> Action:
    def run(p: _Parser, flag: str, value: str) -> None:
        for action in actions:
            action(p, flag, value)
    return run


def _ignore(p: _Parser, flag: str, value: str) -> None:
    """A flag that means nothing here (approxcc's jobs use files: -pipe)."""


def _opt_level(p: _Parser, flag: str, value: str) -> None:
    if value not in _OPT_LEVELS:
        raise CompileError(f"invalid integral value '{value}' in '-O{value}'")
    p.opts.opt_level = _OPT_LEVELS[value]


def _emit(p: _Parser, flag: str, value: str) -> None:
    if value not in EMIT_KINDS:
        raise CompileError(f"invalid value '{value}' in '--emit' (expected "
                           f"{', '.join(EMIT_KINDS)})")
    p.emit_flag = value


def _emit_flag(p: _Parser, flag: str, value: str) -> None:
    p.emit_flag = "llvm" if flag == "-emit-llvm" else "approx"


def _assembly(p: _Parser, flag: str, value: str) -> None:
    p.assembly = True


def _save_temps(p: _Parser, flag: str, value: str) -> None:
    if value not in ("", "cwd", "obj"):
        raise CompileError(f"invalid value '{value}' in '-save-temps={value}'")
    p.opts.save_temps = value or "cwd"


def _color(p: _Parser, flag: str, value: str) -> None:
    if flag.endswith("="):
        if value not in COLOR_MODES:
            raise CompileError(f"invalid argument '{value}' to -fdiagnostics-color=")
        p.opts.color = value
    else:
        p.opts.color = "never" if flag.startswith("-fno-") else "always"


def _mlir_functions(p: _Parser, flag: str, value: str) -> None:
    if value not in ("annotated", "all"):
        raise CompileError(f"invalid value '{value}' in '-fapprox-mlir={value}' (expected "
                           f"annotated or all)")
    p.opts.mlir_functions = value


def _target_cpu(p: _Parser, flag: str, value: str) -> None:
    p.opts.target_cpu = value


def _dep_mode(p: _Parser, flag: str, value: str) -> None:
    p.dep_mode = flag


def _dep_phony(p: _Parser, flag: str, value: str) -> None:
    p.deps.phony = True


def _dep_file(p: _Parser, flag: str, value: str) -> None:
    p.deps.file = value


def _dep_target(p: _Parser, flag: str, value: str) -> None:
    p.deps.targets.append(value if flag == "-MT" else quote_target(value))


def _warnings(change: Callable[[WarningOptions, str], None]) -> Action:
    return lambda p, flag, v: change(p.opts.warnings, v)


def _warning_flag(p: _Parser, flag: str, value: str) -> None:
    """-WFLAG: approx's own warnings are on by default; clang's go to the parse."""
    name = f"-W{value}"
    if name in APPROX_WARNINGS:
        p.opts.warnings.disabled.discard(name)
    else:
        p.opts.warning_args.append(name)


def _no_warning(p: _Parser, flag: str, value: str) -> None:
    name = f"-W{value}"
    p.opts.warnings.disabled.add(name)
    if name not in APPROX_WARNINGS:
        p.opts.warning_args.append(f"-Wno-{value}")


def _error_warning(p: _Parser, flag: str, value: str) -> None:
    name = f"-W{value}"
    p.opts.warnings.errors.add(name)
    p.opts.warnings.disabled.discard(name)
    if name not in APPROX_WARNINGS:
        p.opts.warning_args.append(name)


def _not_error_warning(p: _Parser, flag: str, value: str) -> None:
    """-Wno-error=X: also for the parse, where clang makes some warnings errors by default
    (-Wimplicit-function-declaration since C99)."""
    name = f"-W{value}"
    p.opts.warnings.not_errors.add(name)
    if name not in APPROX_WARNINGS:
        p.opts.warning_args.append(f"-Wno-error={value}")


def _link_input(p: _Parser, flag: str, value: str) -> None:
    p.opts.sources.append(f"{'-l' if flag == '-l' else '-Wl,'}{value}")


_PASS_THROUGH = _to(_add("clang_args"), _add("link_args"))
_C, _A, _L, _W, _M = ("Compilation", "approxcc", "Preprocessor, linker",
                      "Warnings and diagnostics", "Dependency files")

FLAGS: tuple[Flag, ...] = (
    # what to do
    Flag(("-c",), Kind.FLAG, "compile to an object", _set("compile_only", True), section=_C,
         compiles=False),
    Flag(("-S",), Kind.FLAG, "compile to assembly (or with --emit, to IR)", _assembly,
         section=_C, compiles=False),
    Flag(("-E",), Kind.FLAG, "preprocess only", _set("preprocess_only", True), section=_C,
         compiles=False),
    Flag(("-emit-llvm",), Kind.FLAG, "with -S: LLVM IR (.ll); with -c: bitcode (.bc)",
         _emit_flag, section=_C, compiles=False),
    Flag(("-emit-mlir",), Kind.FLAG, "MLIR from the frontend, with approx ops (.mlir)",
         _emit_flag, section=_C, compiles=False),
    Flag(("--emit",), Kind.JOINED_OR_SEPARATE,
         "with -S: approx | mlir (after the approx passes) | llvm | asm", _emit,
         metavar="KIND", section=_C, compiles=False),
    Flag(("-o",), Kind.JOINED_OR_SEPARATE, "output file (`-` = stdout for text)",
         _set("output"), metavar="FILE", section=_C, compiles=False),
    Flag(("-O",), Kind.JOINED, "optimisation level: -O0 -O1 -O2 -O3 -Os -Oz -Ofast -Og",
         _opt_level, metavar="LEVEL", section=_C),
    Flag(("-g",), Kind.JOINED, "debug information (MLIR's functions: line tables)",
         _add("codegen_args"), section=_C),
    Flag(("-std=",), Kind.JOINED, "language standard, as clang", _add("clang_args"),
         metavar="STD", section=_C),
    Flag(("-march=", "-mcpu="), Kind.JOINED, "target CPU (opt, llc, the system compiler)",
         _to(_PASS_THROUGH, _target_cpu), metavar="CPU", section=_C),
    Flag(("-f", "-m"), Kind.JOINED, "-fFLAG / -mFLAG: to the parse, the system compiler and "
         "the link", _PASS_THROUGH, metavar="FLAG", section=_C),
    Flag(("-fsyntax-only",), Kind.FLAG, "check the sources (and their annotations), write "
         "nothing", _set("syntax_only", True), section=_C),
    Flag(("-pthread",), Kind.FLAG, "POSIX threads", _PASS_THROUGH, section=_C),
    Flag(("-save-temps",), Kind.FLAG, "keep the intermediates (.approx.mlir, .ll, .o, ...) "
         "here", _save_temps, section=_C, compiles=False),
    Flag(("-save-temps=",), Kind.JOINED, "cwd: as -save-temps; obj: beside the output",
         _save_temps, metavar="WHERE", section=_C, compiles=False),
    Flag(("-###",), Kind.FLAG, "print the jobs (shell commands that do the build), run "
         "nothing", _set("print_jobs", True), section=_C, compiles=False),
    Flag(("-v",), Kind.FLAG, "print the jobs as they run", _set("verbose", True), section=_C),
    Flag(("-pipe",), Kind.FLAG, "accepted; approxcc's jobs use files", _ignore, section=_C,
         hidden=True),
    Flag(("--version",), Kind.FLAG, "print the version", _set("show_version", True),
         section=_C, compiles=False),
    Flag(("--help",), Kind.FLAG, "print this help", _set("show_help", True), section=_C,
         compiles=False),
    # approxcc's own
    Flag(("-fapprox-config=", "--config"), Kind.JOINED_OR_SEPARATE,
         "build one knob configuration", _set("config"), metavar="FILE", section=_A),
    Flag(("-fapprox-tunable", "--tunable"), Kind.FLAG,
         "read knob values at start-up from $APPROX_CONFIG", _set("tunable", True),
         section=_A, compiles=False),
    Flag(("-fapprox-mlir=",), Kind.JOINED, "annotated (default): only annotated functions "
         "go through MLIR, the rest as the system compiler compiles it; all: every function "
         "(to test the frontend)", _mlir_functions, metavar="WHICH", section=_A,
         compiles=False),
    Flag(("--target",), Kind.JOINED_OR_SEPARATE, "IREE targets of a .py model: cpu,cuda,rocm",
         _set("ml_targets"), metavar="LIST", section=_A),
    Flag(("--keep-going",), Kind.FLAG, "a .py model: build the other variants when one fails "
         "for a target (the manifest records which)", _set("keep_going", True), section=_A),
    # preprocessor and linker
    Flag(("-I", "-D", "-U"), Kind.JOINED_OR_SEPARATE, "include folder, define, undefine",
         _add("clang_args"), metavar="VALUE", section=_L),
    Flag(("-include", "-imacros", "-isystem", "-iquote", "-idirafter"),
         Kind.JOINED_OR_SEPARATE, "as clang", _pair("clang_args"), metavar="VALUE",
         section=_L),
    Flag(("-nostdinc", "-ansi", "-trigraphs"), Kind.FLAG, "as clang", _add("clang_args"),
         section=_L),
    Flag(("-Wp,",), Kind.JOINED, "preprocessor flags", _add("clang_args"), metavar="ARGS",
         section=_L),
    Flag(("-l",), Kind.JOINED_OR_SEPARATE, "link a library", _link_input, metavar="LIB",
         section=_L, compiles=False),
    Flag(("-L",), Kind.JOINED_OR_SEPARATE, "library folder", _add("link_args"),
         metavar="DIR", section=_L, compiles=False),
    Flag(("-Wl,",), Kind.JOINED, "linker flags", _add("sources"), metavar="ARGS",
         section=_L, compiles=False),
    Flag(("-Xlinker",), Kind.SEPARATE, "one linker flag", _link_input, metavar="ARG",
         section=_L, compiles=False),
    Flag(("-Wa,",), Kind.JOINED, "assembler flags", _add("codegen_args"), metavar="ARGS",
         section=_L),
    Flag(("-shared", "-static", "-rdynamic", "-pie", "-no-pie", "-nostdlib", "-nodefaultlibs",
          "-nostartfiles", "-s"), Kind.FLAG, "as clang, for the link", _add("link_args"),
         section=_L, compiles=False),
    # dependency files
    Flag(("-MD", "-MMD"), Kind.FLAG, "write a make rule (-MMD: without system headers)",
         _dep_mode, section=_M),
    Flag(("-MF",), Kind.JOINED_OR_SEPARATE, "the rule's file", _dep_file, metavar="FILE",
         section=_M),
    Flag(("-MT", "-MQ"), Kind.JOINED_OR_SEPARATE, "the rule's target (-MQ: quoted for make)",
         _dep_target, metavar="TARGET", section=_M),
    Flag(("-MP",), Kind.FLAG, "an empty rule per header", _dep_phony, section=_M),
    # warnings
    Flag(("-w",), Kind.FLAG, "no warnings", _warnings(lambda w, v: setattr(w, "ignore_all",
                                                                          True)), section=_W),
    Flag(("-Werror",), Kind.FLAG, "warnings are errors",
         _warnings(lambda w, v: setattr(w, "all_errors", True)), section=_W),
    Flag(("-Wno-error",), Kind.FLAG, "warnings are warnings",
         _warnings(lambda w, v: setattr(w, "all_errors", False)), section=_W),
    Flag(("-Werror=",), Kind.JOINED, "this warning is an error", _error_warning,
         metavar="FLAG", section=_W),
    Flag(("-Wno-error=",), Kind.JOINED, "this warning is not an error", _not_error_warning,
         metavar="FLAG", section=_W),
    Flag(("-Wno-",), Kind.JOINED, "no such warning", _no_warning, metavar="FLAG",
         section=_W),
    Flag(("-W",), Kind.JOINED, "a warning (approx's own: -Wapprox-exact-knob, "
         "-Wapprox-skipped-annotation, -Wapprox-recover, -Wapprox-ignored-flag)",
         _warning_flag, metavar="FLAG", section=_W),
    Flag(("-pedantic",), Kind.JOINED, "clang's pedantic warnings", _add("warning_args"),
         section=_W),
    Flag(("-fdiagnostics-color=",), Kind.JOINED, "never | always | auto (colour on a "
         "terminal)", _color, metavar="WHEN", section=_W),
    Flag(("-fdiagnostics-color", "-fcolor-diagnostics", "-fno-diagnostics-color",
          "-fno-color-diagnostics"), Kind.FLAG, "colour always / never", _color, section=_W,
         hidden=True),
)


def _spelled(flag: Flag) -> str:
    """`-o FILE`, `-std=STD`, `-fFLAG, -mFLAG`: the spellings as --help shows them."""
    def one(spelling: str) -> str:
        if not flag.metavar:
            return spelling
        joined = flag.kind is Kind.JOINED or spelling.endswith("=")
        return f"{spelling}{'' if joined else ' '}{flag.metavar}"

    return ", ".join(map(one, flag.spellings))


def help_text() -> str:
    """`approxcc build --help`, from the table."""
    lines = ["OVERVIEW: approxcc, the accuracy-aware C/C++ compiler (a clang-compatible "
             "driver)", "", "USAGE: approxcc [build] [options] file...", "",
             "Files: .c .cc .cpp .cxx .C are compiled; .o .a .so and anything else are "
             "linked;", "a .py model is built into IREE variants (approxcc.ml.build) in the "
             "-o folder."]
    for section in dict.fromkeys(f.section for f in FLAGS):
        lines += ["", f"{section.upper()}:"]
        for flag in (f for f in FLAGS if f.section == section and not f.hidden):
            spelled = f"  {_spelled(flag)}"
            lines += [spelled, f"{'':26}{flag.help}"] if len(spelled) > 25 else \
                [f"{spelled:<26}{flag.help}"]
    return "\n".join(lines) + "\n"


_EXACT = {s: f for f in FLAGS for s in f.spellings}
_PREFIXES = sorted(((s, f) for f in FLAGS if f.kind is not Kind.FLAG for s in f.spellings),
                   key=lambda item: -len(item[0]))
SPELLINGS = tuple(_EXACT)


def _match(arg: str) -> tuple[Flag, str, str | None] | None:
    """(flag, its spelling, the joined value or None) for `arg`, as clang's OptTable matches:
    an exact spelling first, else the longest prefix that takes a joined value."""
    flag = _EXACT.get(arg)
    if flag is not None:
        joined = "" if flag.kind is Kind.JOINED else None
        return flag, arg, joined
    for spelling, flag in _PREFIXES:
        if not arg.startswith(spelling) or flag.kind is Kind.SEPARATE:
            continue
        rest = arg[len(spelling):]
        if spelling.startswith("--"):
            if not rest.startswith("="):
                continue  # --config=FILE, never --configFILE
            rest = rest[1:]
        return flag, spelling, rest
    return None


def _unknown(arg: str) -> CompileError:
    stem = arg.split("=", 1)[0] + ("=" if "=" in arg else "")
    close = difflib.get_close_matches(stem, SPELLINGS, n=1, cutoff=0.75)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return CompileError(f"unknown argument: '{arg}'{hint}")


@dataclass
class Arg:
    """One argument of a command line, as the table reads it: an input (`flag` None and no
    error), or a flag with its value; `raw` is what it took from argv (one or two items)."""

    raw: list[str]
    flag: Flag | None = None
    spelling: str = ""
    value: str = ""
    error: CompileError | None = None


def split_args(argv: list[str]) -> list[Arg]:
    """The command line as inputs and flags with their values, in order."""
    out: list[Arg] = []
    args = iter(argv)
    for arg in args:
        if not arg.startswith("-") or arg == "-":
            out.append(Arg([arg], value=arg))
            continue
        found = _match(arg)
        if found is None:
            out.append(Arg([arg], error=_unknown(arg)))
            continue
        flag, spelling, value = found
        raw = [arg]
        if value is None and flag.kind is not Kind.FLAG:
            value = next(args, None)
            if value is None:
                out.append(Arg(raw, flag, spelling, error=CompileError(
                    f"argument to '{spelling}' is missing (expected 1 value)")))
                continue
            raw.append(value)
        out.append(Arg(raw, flag, spelling, value or ""))
    return out


class _Parser:
    def __init__(self, argv: list[str]):
        self.argv = argv
        self.opts = Options([])
        self.errors: list[CompileError] = []
        self.emit_flag: str | None = None   # -emit-llvm / -emit-mlir / --emit=
        self.assembly = False               # -S
        self.dep_mode: str | None = None    # -MD / -MMD; the companions may come first
        self.deps = DependencyOptions(False)

    def parse(self) -> Options:
        for arg in split_args(self.argv):
            if arg.error is not None:
                self.errors.append(arg.error)
            elif arg.flag is None:
                self.opts.sources.append(arg.value)
            else:
                if arg.flag.section == _W:
                    self.opts.diagnostic_args += arg.raw  # for the frontend's command line
                if arg.flag.compiles and arg.flag.section != _A:
                    self.opts.cc_args += arg.raw
                try:
                    arg.flag.action(self, arg.spelling, arg.value)
                except CompileError as err:
                    self.errors.append(err)
        if not self.errors:
            self.finish()
        return self.opts

    def finish(self) -> None:
        o = self.opts
        if self.dep_mode is not None:
            self.deps.system_headers = self.dep_mode == "-MD"
            o.dependencies = self.deps
        if self.emit_flag is not None or self.assembly:
            kind = self.emit_flag or "asm"
            if not (self.assembly or o.compile_only):
                self.errors.append(CompileError(
                    f"-emit-{'mlir' if kind == 'approx' else kind} cannot be used when "
                    f"linking"))
                return
            o.emit = "bc" if kind == "llvm" and not self.assembly else kind
        if o.config and o.tunable:
            self.errors.append(CompileError("-fapprox-config builds one configuration, "
                                            "-fapprox-tunable all of them: choose one"))
        outputs = o.c_sources() if not o.links() else []
        if o.output and o.output != "-" and len(outputs) > 1:
            self.errors.append(CompileError("cannot specify -o when generating multiple "
                                            "output files"))
        if o.models() and (len(o.models()) > 1 or len(o.inputs()) > 1):
            self.errors.append(CompileError("a .py model is built alone: one model per "
                                            "command"))
        if o.ml_targets and not o.models():
            self.errors.append(CompileError(f"--target={o.ml_targets} selects the IREE "
                                            f"targets of a .py model; C and C++ are compiled "
                                            f"for the host"))
        self.errors += [CompileError(f"no such file or directory: '{src}'")
                        for src in o.inputs() if not Path(src).exists()]


def quote_target(target: str) -> str:
    """-MQ: a target with make's special characters escaped."""
    return target.replace("$", "$$").replace(" ", "\\ ").replace("#", "\\#")


def parse_args(argv: list[str]) -> tuple[Options, list[CompileError]]:
    """The Options of a command line (`@FILE` replaced by the arguments it holds, as gcc
    reads it), and every argument error in it (clang reports them all before it stops)."""
    from approxcc.driver.passthrough import expand_response_files

    parser = _Parser(expand_response_files(argv))
    opts = parser.parse()
    return opts, parser.errors
