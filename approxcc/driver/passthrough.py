"""Code without annotations is the system compiler's: a command line with nothing for
approxcc to do runs the system compiler unchanged.

approxcc is a drop-in `CC`. A command line is handed to the system compiler (`cc`, or `c++`
when a source is C++) as it was written when it holds no source with an approx annotation,
no approxcc flag, no object carrying knobs (`.approxcc.knobs`, driver/program_knobs.py) and
no .py model; and, whatever its inputs hold, when it only asks a question or preprocesses
(`-E`, `-M`, `-MM`, `-dumpversion`, `-print-*`, ...). Its flags, predefined macros,
diagnostics, debug information, code and speed are then the system compiler's, so that
build systems see one compiler. A link adds approxcc's runtime as an archive, after
everything: only an object (or a library) that uses it pulls it in, as clang adds
compiler-rt.

This module is imported before anything heavy (no libclang, xDSL or MLIR), so that a build
of code without annotations starts as fast as the system compiler does.
"""

from __future__ import annotations

import mmap
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

C_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".C", ".i", ".ii")
CXX_SUFFIXES = (".cc", ".cpp", ".cxx", ".C", ".ii")
KNOB_SECTION = b".approxcc.knobs"
# Flags only approxcc reads (driver/options.py): their presence asks for approxcc.
_APPROX_FLAGS = re.compile(r"-fapprox-|--config$|--config=|--tunable$|--target$|--target="
                           r"|--keep-going$|-emit-mlir$|-emit-llvm$|--emit$|--emit=")
# Flags after which no compilation or link happens: the system compiler answers alone.
_QUERIES = re.compile(r"-E$|-M$|-MM$|-dump|--?print-")
# What may mark an annotation (a superset: annotations/scanner.py has the last word).
_ANNOTATION = re.compile(rb"#[ \t]*pragma[ \t]+approx\b|//[ \t]*@approx\b")
# gcc's flags whose value is the next argument (their value is never an input).
_SEPARATE = {"-o", "-I", "-D", "-U", "-include", "-imacros", "-isystem", "-iquote",
             "-idirafter", "-iprefix", "-iwithprefix", "-iwithprefixbefore", "-isysroot",
             "-MF", "-MT", "-MQ", "-x", "-Xlinker", "-Xassembler", "-Xpreprocessor", "-L",
             "-l", "-T", "-u", "-z", "-e", "-aux-info", "-A", "-B", "--param", "-Xclang"}


def expand_response_files(argv: list[str], depth: int = 0) -> list[str]:
    """`@FILE` replaced by the arguments it holds, as gcc reads them (a missing file stays
    as written, as gcc leaves it)."""
    out: list[str] = []
    for arg in argv:
        path = Path(arg[1:])
        if arg.startswith("@") and depth < 16 and path.is_file():
            text = path.read_bytes().decode(errors="surrogateescape")
            out += expand_response_files(shlex.split(text), depth + 1)
        else:
            out.append(arg)
    return out


def _inputs(argv: list[str]) -> Iterator[tuple[str, str | None]]:
    """Each input file with the language `-x` gave it (None: by its suffix)."""
    language, args = None, iter(argv)
    for arg in args:
        if arg in _SEPARATE:
            value = next(args, "")
            if arg == "-x":
                language = None if value == "none" else value
        elif arg.startswith("-x") and len(arg) > 2:
            language = None if arg[2:] == "none" else arg[2:]
        elif arg == "-" or not arg.startswith("-"):
            yield arg, language


_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)', re.MULTILINE)


def has_annotations(path: str, include_dirs: tuple[str, ...] = ()) -> bool:
    """Whether a source, or a file it includes (found beside the including file or in
    `include_dirs` for quotes, in `include_dirs` for angle brackets: the project's headers,
    not the system's), may hold an approx annotation (annotations/scanner.py decides;
    approxcc compiles those of included files too)."""
    pending, seen = [Path(path)], set()
    while pending:
        file = pending.pop()
        if file in seen:
            continue
        seen.add(file)
        try:
            text = file.read_bytes()
        except OSError:
            continue
        if marks_annotation(text):
            return True
        for m in _INCLUDE.finditer(text):
            quoted = m.group(1) is not None
            name = (m.group(1) or m.group(2)).decode(errors="surrogateescape")
            folders = [file.parent] * quoted + list(map(Path, include_dirs))
            pending += [d / name for d in folders if (d / name).is_file()][:1]
    return False


def marks_annotation(text: bytes) -> bool:
    """Whether a file's text may hold an approx annotation."""
    return _ANNOTATION.search(text) is not None


def include_dirs(argv: list[str]) -> tuple[str, ...]:
    """The folders of -I and -iquote, in order."""
    out, args = [], iter(argv)
    for arg in args:
        if arg in ("-I", "-iquote"):
            out.append(next(args, ""))
        elif arg.startswith("-I") or arg.startswith("-iquote") and len(arg) > 7:
            out.append(arg[2:] if arg.startswith("-I") else arg[7:])
    return tuple(out)


def carries_knobs(path: str) -> bool:
    """Whether an object, archive or shared library holds approxcc's knob records."""
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            return m.find(KNOB_SECTION) >= 0
    except (OSError, ValueError):  # not a file, or empty
        return False


def is_cplusplus(path: str, language: str | None) -> bool:
    return language.startswith("c++") if language else path.endswith(CXX_SUFFIXES)


def needs_approxcc(argv: list[str]) -> bool:
    """Whether the command line has anything for approxcc to do (see the module's doc)."""
    args = expand_response_files(argv)
    if any(_APPROX_FLAGS.match(a) for a in args) or "--version" in args or "--help" in args:
        return True  # approxcc's flags; its help; its version, with the system compiler's
    if any(_QUERIES.match(a) for a in args):
        return False
    folders = include_dirs(args)
    for path, language in _inputs(args):
        if path.endswith(".py"):
            return True
        source = language is not None and language.startswith(("c", "c++")) or \
            path.endswith(C_SUFFIXES)
        if has_annotations(path, folders) if source else carries_knobs(path):
            return True
    return False


def links(argv: list[str]) -> bool:
    """Whether the system compiler links: inputs, and no flag that stops before."""
    args = expand_response_files(argv)
    stops = {"-c", "-S", "-fsyntax-only", "-###"}
    return not any(a in stops or _QUERIES.match(a) for a in args) and \
        any(True for _ in _inputs(args))


def system_compiler(argv: list[str]) -> str:
    """`c++` when a source is C++ (it compiles C++ and links its runtime), else `cc`."""
    from approxcc.driver.toolchain import c_compiler, cxx_compiler

    cxx = any(is_cplusplus(p, lang) for p, lang in _inputs(expand_response_files(argv)))
    return cxx_compiler() if cxx else c_compiler()


def command(argv: list[str]) -> list[str]:
    """The system compiler's command line for `argv`: as written, then the runtime's header
    folder (last of the system folders, as clang's own headers: `approxrt.h`), and the
    runtime archive when it links."""
    from approxcc.driver.toolchain import RUNTIME_DIR, ensure_runtime_archive

    header = ["-isystem", str(RUNTIME_DIR)]
    if not links(argv):
        return [system_compiler(argv), *argv, *header]
    language_reset = ["-x", "none"] if any(a.startswith("-x") for a in argv) else []
    return [system_compiler(argv), *argv, *header, *language_reset,
            str(ensure_runtime_archive())]


def run(argv: list[str]) -> int:
    """Runs the system compiler on `argv`: its exit status (its output is its own)."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    try:
        return subprocess.run(command(argv)).returncode
    except OSError as err:
        print(f"approxcc: error: cannot run the system compiler: {err.strerror}",
              file=sys.stderr)
        return 1


def identity_banner(flag: str = "--version") -> str:
    """What `--version` (or `-v` without inputs) prints: approxcc's lines, then the system
    compiler's own answer to `flag`, which configure scripts, CMake and Meson read to tell
    which compiler (and so which flags and macros) they have."""
    from approxcc.driver.toolchain import c_compiler, version_banner

    done = subprocess.run([c_compiler(), flag], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace")
    return f"{version_banner()}\nSystem compiler: {c_compiler()}\n{done.stdout}"
