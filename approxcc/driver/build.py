"""The compiler driver: a command line → Options → jobs → run, as clang's driver does.

`main(argv)` serves `approxcc build ARGS` and the clang-style `approxcc ARGS`; `build(opts)`
is the same driver for Python callers (approxcc tune builds through it). Every diagnostic
goes through approxcc.diagnostics; the status is 1 when one of them was an error.
"""

from __future__ import annotations

import contextlib
import shlex
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from approxcc.diagnostics import CompileError, engine, report
from approxcc.driver.jobs import Compilation
from approxcc.driver.options import HELP, Options, diagnostics_color, parse_args
from approxcc.driver.toolchain import version_banner


@contextlib.contextmanager
def _workdir(opts: Options) -> Iterator[Path]:
    """Where intermediates go: a temporary folder, or kept (-save-temps) in the current
    folder (=cwd, the default) or beside the output (=obj)."""
    if opts.save_temps == "obj" and opts.output and opts.output != "-":
        yield Path(opts.output).parent
    elif opts.save_temps:
        yield Path()
    else:
        with tempfile.TemporaryDirectory(prefix="approxcc-") as tmp:
            yield Path(tmp)


def _shown(argv: list[str]) -> str:
    return " " + " ".join(shlex.quote(a) for a in argv)


def build(opts: Options) -> int:
    """Runs (or with -### prints) the jobs of a compilation. The first error is raised as a
    CompileError; 1 when an error was reported already (a warning that -Werror made one)."""
    engine.warnings = opts.warnings
    errors_before = engine.errors
    if opts.print_jobs or opts.verbose:
        print(version_banner(), file=sys.stderr)
    with _workdir(opts) as workdir:
        comp = Compilation(opts, workdir)
        comp.build_jobs()
        for job in comp.jobs:
            if opts.print_jobs or opts.verbose:
                print(_shown(job.argv), file=sys.stderr)
            if opts.print_jobs:
                continue
            job.execute()
            if engine.errors > errors_before:
                return 1  # no output after an error
    return 0


def main(argv: list[str]) -> int:
    """The driver's command line (everything after `approxcc` or `approxcc build`)."""
    engine.color = diagnostics_color(argv)
    try:
        opts = parse_args(argv)
        if opts.show_help:
            print(HELP, end="")
            return 0
        if opts.show_version:
            print(version_banner())
            return 0
        if not opts.inputs():
            if opts.verbose or opts.print_jobs:
                print(version_banner(), file=sys.stderr)
                return 0
            raise CompileError("no input files")
        return build(opts)
    except CompileError as err:
        report(err.diagnostic)
        return 1
