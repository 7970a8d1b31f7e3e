"""Internal compiler errors: what clang prints when it crashes, and a reproducer. This module
imports only light modules: it reports the compiler failing to import too.

Any exception that is not a user's mistake (a CompileError) reaches approxcc.cli, which
reports it here as clang does:

    approxcc: error: internal compiler error: KeyError: 'x'
    approxcc: note: raised at approxcc/frontend/module_emitter.py:88 (declaration)
    approxcc: note: diagnostic msg: preprocessed source and run script saved to
                                    /tmp/approxcc-crash-k-1a2b3c (on one line)
    approxcc: note: diagnostic msg: /tmp/approxcc-crash-k-1a2b3c/k.c
    approxcc: note: diagnostic msg: /tmp/approxcc-crash-k-1a2b3c/reproduce.sh

The reproducer folder (under $TMPDIR) holds each C/C++ source preprocessed (`cc -E -C` with
the command's -I/-D/-include flags; comments kept for `// @approx`, line markers for which
code is a system header's), a .py model's source as it is, copies of the other
inputs a command names (a configuration, an MLIR file), and `reproduce.sh`: the same command
on those files, with the APPROXCC_* variables it ran with.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
import traceback
from pathlib import Path

from approxcc.diagnostics import internal_error
from approxcc.driver.invocation import approxcc_command
from approxcc.driver.options import C_SUFFIXES, split_args
from approxcc.driver.toolchain import RUNTIME_DIR, c_compiler, cxx_compiler

_PACKAGE = Path(__file__).resolve().parents[1]
# flags the preprocessed source has applied already
_PREPROCESSOR = ("-I", "-D", "-U", "-include", "-imacros", "-isystem", "-iquote",
                 "-idirafter", "-nostdinc", "-Wp,")
# flags naming an input file to copy, and those naming an output (written in the folder)
_INPUT_VALUES = ("-fapprox-config=", "--config")
_OUTPUT_VALUES = ("-o", "-MF")


def report(exc: BaseException, argv: list[str]) -> None:
    """Reports `exc` as an internal compiler error of the command `approxcc ARGV`."""
    notes = [*getattr(exc, "__notes__", []), _raised_at(exc)]
    try:
        folder, files = _save_reproducer(argv)
        notes += [f"diagnostic msg: preprocessed source and run script saved to {folder}",
                  *(f"diagnostic msg: {f}" for f in files)]
    except Exception as err:  # noqa: BLE001 - the report must come out whatever happens
        notes.append(f"diagnostic msg: cannot save a reproducer: {type(err).__name__}: {err}")
    internal_error(exc, notes)


def _raised_at(exc: BaseException) -> str:
    """The innermost approxcc frame of the traceback (else the innermost frame)."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if Path(f.filename).resolve().is_relative_to(_PACKAGE)]
    frame = (ours or frames or [None])[-1]
    if frame is None:
        return "raised at an unknown place"
    path = Path(frame.filename).resolve()
    shown = path.relative_to(_PACKAGE.parent) if path.is_relative_to(_PACKAGE.parent) else path
    return f"raised at {shown}:{frame.lineno} ({frame.name})"


def _save_reproducer(argv: list[str]) -> tuple[Path, list[Path]]:
    command = argv[0] if argv and argv[0] in ("opt", "tune", "report", "-cc1") else "build"
    rest = argv[1:] if argv and argv[0] in (command, "build") else argv
    stem = next((Path(a).stem for a in rest if not a.startswith("-")), command)
    folder = Path(tempfile.mkdtemp(prefix=f"approxcc-crash-{stem}-"))
    files: list[Path] = []
    if command == "build":
        args = _driver_args(rest, folder, files)
    elif command == "opt":
        args = [_copied(a, folder, files) if Path(a).is_file() else a for a in rest]
    else:  # the command as it was, in the folder it ran in
        args = rest
    script = folder / "reproduce.sh"
    env = [f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith("APPROXCC_")]
    cd = 'cd "$(dirname "$0")"' if command in ("build", "opt") else \
        f"cd {shlex.quote(os.getcwd())}"
    head = [*approxcc_command(), *([command] if command != "build" else [])]
    script.write_text("#!/bin/sh\n# approxcc internal compiler error: run to reproduce\n"
                      f"{cd}\nexec {shlex.join(['env', *env] if env else [])}"
                      f"{' ' if env else ''}{shlex.join([*head, *args])}\n")
    script.chmod(0o755)
    return folder, [*files, script]


def _copied(path: str, folder: Path, files: list[Path]) -> str:
    target = folder / Path(path).name
    if not target.exists():
        shutil.copyfile(path, target)
        files.append(target)
    return target.name


def _driver_args(args: list[str], folder: Path, files: list[Path]) -> list[str]:
    """The driver's command line on the reproducer's files: sources preprocessed, the
    preprocessor's flags dropped, inputs copied, outputs written in the folder."""
    parsed = split_args(args)
    clang_args = [a for arg in parsed if arg.flag is not None and
                  arg.spelling in _PREPROCESSOR + ("-std=", "-f", "-m") for a in arg.raw]
    out: list[str] = []
    for arg in parsed:
        if arg.flag is None and arg.value.endswith(C_SUFFIXES) and Path(arg.value).is_file():
            out.append(_preprocessed(arg.value, clang_args, folder, files))
        elif arg.flag is None and arg.value.endswith(".py") and Path(arg.value).is_file():
            out.append(_copied(arg.value, folder, files))  # a model: its source as it is
        elif arg.flag is None and Path(arg.value).is_file():
            out.append(str(Path(arg.value).resolve()))  # objects, libraries: left in place
        elif arg.spelling in _PREPROCESSOR:
            continue
        elif arg.spelling in _INPUT_VALUES and Path(arg.value).is_file():
            copy = _copied(arg.value, folder, files)
            out += [f"{arg.spelling}{copy}"] if arg.spelling.endswith("=") else \
                [arg.spelling, copy]
        elif arg.spelling in _OUTPUT_VALUES:
            out += [arg.spelling, Path(arg.value).name if arg.value != "-" else "-"]
        else:
            out += arg.raw
    return out


def _preprocessed(src: str, clang_args: list[str], folder: Path, files: list[Path]) -> str:
    """`src` preprocessed into the folder (the original when the preprocessor fails)."""
    name = Path(src).name
    n = 1
    while (folder / name).exists():
        name, n = f"{Path(src).stem}-{n}{Path(src).suffix}", n + 1
    target = folder / name
    compiler = c_compiler() if src.endswith(".c") else cxx_compiler()
    done = subprocess.run([compiler, "-E", "-C", *clang_args, "-isystem",
                           str(RUNTIME_DIR), src, "-o", str(target)], capture_output=True)
    if done.returncode != 0:
        shutil.copyfile(src, target)
    files.append(target)
    return name
