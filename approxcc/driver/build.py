"""The compiler driver: a command line → Options → a list of jobs → run, as clang's driver.

`main(argv)` serves `approxcc build ARGS` and the clang-style `approxcc ARGS`; `build(opts)`
is the same driver for Python callers (approxcc tune builds through it), which raises when
the build fails. Each compilation
has its own diagnostics engine (approxcc.diagnostics): it applies -w/-Werror, counts, and
after each translation unit prints clang's "N errors generated."; the status is 1 when one
of them was an error. Anything else that goes wrong is an internal compiler error, reported
by approxcc.cli with a reproducer (driver/crash.py).
"""

from __future__ import annotations

import contextlib
import secrets
import shlex
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from approxcc.config import read_once
from approxcc.diagnostics import CompileError, DiagnosticEngine, current_engine
from approxcc.driver.jobs import Compilation, Job
from approxcc.driver.options import Options, help_text, parse_args
from approxcc.driver.passthrough import identity_banner
from approxcc.driver.toolchain import ensure_runtime_archive, version_banner


@contextlib.contextmanager
def _workdir(opts: Options) -> Iterator[tuple[Path, str]]:
    """Where intermediates go, and the prefix of their names: kept (-save-temps) in the
    current folder (=cwd, the default) or beside the output (=obj); for -### the temporary
    directory itself, names prefixed as clang does (the printed commands write them when
    pasted); else a temporary folder."""
    if opts.save_temps == "obj" and opts.output and opts.output != "-":
        yield Path(opts.output).parent, ""
    elif opts.save_temps:
        yield Path(), ""
    elif opts.print_jobs:
        yield Path(tempfile.gettempdir()), f"approxcc-{secrets.token_hex(3)}-"
    else:
        with tempfile.TemporaryDirectory(prefix="approxcc-") as tmp:
            yield Path(tmp), ""


def shown(job: Job) -> str:
    """A job as -### and -v print it: a shell command line, indented by a space."""
    return f" {shlex.join(job.argv)}"


def _run(jobs: list[Job], engine: DiagnosticEngine, opts: Options) -> int:
    """Runs the jobs in order until one fails. After the jobs of a translation unit, clang's
    count of the diagnostics they reported."""
    unit, mark = None, engine.counts()
    try:
        for job in jobs:
            if job.unit != unit:
                engine.summarize(mark)
                unit, mark = job.unit, engine.counts()
            if opts.verbose:
                print(shown(job), file=sys.stderr)
            errors = engine.errors
            try:
                job.execute()
            except CompileError as err:
                engine.report(err.diagnostic)
            except Exception as err:
                err.add_note(f"in phase '{job.phase}' of: {shlex.join(job.argv)}")
                raise
            if engine.errors > errors:
                return 1  # no output after an error
    finally:
        if unit is not None:
            engine.summarize(mark)
    return 0


def build(opts: Options) -> int:
    """The driver for Python callers (approxcc tune): 0, or a CompileError when the build
    failed, after its diagnostics were reported."""
    if compile_and_link(opts) != 0:
        raise CompileError(f"cannot build '{opts.output or 'a.out'}' (the errors are above)")
    return 0


def compile_and_link(opts: Options) -> int:
    """Runs (or with -### prints) the jobs of a compilation, with its own diagnostics
    engine; 1 when an error was reported."""
    with DiagnosticEngine(opts.warnings, opts.color) as engine, read_once(opts.config):
        if opts.print_jobs or opts.verbose:
            print(version_banner(), file=sys.stderr)
        with _workdir(opts) as (workdir, tag):
            comp = Compilation(opts, workdir, tag)
            try:
                jobs = comp.build_jobs()
            except CompileError as err:
                engine.report(err.diagnostic)
                return 1
            if engine.errors:
                return 1
            if not opts.print_jobs:
                return _run(jobs, engine, opts)
            if opts.links():
                ensure_runtime_archive()  # installed with approxcc, as clang's runtime
            for job in jobs:
                print(shown(job), file=sys.stderr)
    return 0


def main(argv: list[str]) -> int:
    """The driver's command line (everything after `approxcc` or `approxcc build`)."""
    opts, errors = parse_args(argv)
    engine = current_engine()
    engine.color = opts.color  # argument errors are coloured as the command line asks
    for err in errors:
        engine.report(err.diagnostic)
    if errors:
        return 1
    if opts.show_help:
        print(help_text(), end="")
        return 0
    if opts.show_version:
        print(identity_banner(), end="")
        return 0
    if not opts.inputs():
        if opts.verbose:
            print(identity_banner("-v"), end="", file=sys.stderr)
            return 0
        if opts.print_jobs:
            print(version_banner(), file=sys.stderr)
            return 0
        engine.report(CompileError("no input files").diagnostic)
        return 1
    return compile_and_link(opts)
