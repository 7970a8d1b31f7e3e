"""The `approxcc` command line: `approxcc build` (the compiler driver) and `approxcc opt`."""

from __future__ import annotations

import sys

import click

from approxcc import __version__
from approxcc.diagnostics import CompileError


def _fail(err: CompileError) -> None:
    click.echo(err.diagnostic.render(), err=True)
    sys.exit(1)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="approxcc")
def main() -> None:
    """approxcc: accuracy-aware compiler for C/C++ and JAX."""


@main.command("opt")
@click.argument("input_file", metavar="FILE.mlir", default="-")
@click.option("--pass-pipeline", "pipeline", default="",
              help="Comma-separated passes, e.g. approx-apply-config{config=c.json},approx-finalize")
@click.option("--print-ir-after-all", is_flag=True, help="Print the IR after every pass.")
@click.option("--split-input-file", is_flag=True, help="Process chunks separated by '// -----'.")
@click.option("-o", "output", default="-", help="Output file (default stdout).")
def opt_cmd(input_file: str, pipeline: str, print_ir_after_all: bool, split_input_file: bool,
            output: str) -> None:
    """Run approx dialect passes over an MLIR file (approx-opt)."""
    from approxcc.driver.opt import run_opt

    try:
        sys.exit(run_opt(input_file, pipeline, print_ir_after_all, split_input_file, output))
    except CompileError as err:
        _fail(err)
