"""The `approxcc` command line: `approxcc build` (the compiler driver) and `approxcc opt`."""

from __future__ import annotations

import sys
from pathlib import Path

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
              help="Comma-separated passes, e.g. "
              "approx-apply-config{config=c.json},approx-finalize")
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


@main.command("build", context_settings={"ignore_unknown_options": False})
@click.argument("sources", nargs=-1, required=True)
@click.option("-o", "output", help="Output file.")
@click.option("--config", type=click.Path(), help="Knob configuration (JSON) to build.")
@click.option("--tunable", is_flag=True,
              help="One binary for every configuration: knob parameters are read at start-up "
                   "from the JSON file named by $APPROX_CONFIG (exact when unset).")
@click.option("-O", "opt_level", type=click.IntRange(0, 3), default=2, show_default=True,
              help="Optimisation level (-O0..-O3).")
@click.option("-S", "text", is_flag=True, help="Emit text instead of a binary (see --emit).")
@click.option("--emit", type=click.Choice(["approx", "mlir", "llvm", "asm"]), default=None,
              help="With -S: approx (MLIR with approx ops), mlir (core), llvm (IR), asm.")
@click.option("-c", "compile_only", is_flag=True, help="Compile to object files only.")
@click.option("-I", "includes", multiple=True, help="Add an include directory.")
@click.option("-D", "defines", multiple=True, help="Define a macro.")
@click.option("-U", "undefines", multiple=True, help="Undefine a macro.")
@click.option("-std", "std", help="Language standard, e.g. -std=c11.")
@click.option("-l", "libs", multiple=True, help="Link a library.")
@click.option("-L", "libdirs", multiple=True, help="Add a library directory.")
@click.option("-###", "print_jobs", is_flag=True, help="Print the jobs, run nothing.")
def build_cmd(sources: tuple[str, ...], output: str | None, config: str | None, tunable: bool,
              opt_level: int,
              text: bool, emit: str | None, compile_only: bool, includes: tuple[str, ...],
              defines: tuple[str, ...], undefines: tuple[str, ...], std: str | None,
              libs: tuple[str, ...], libdirs: tuple[str, ...], print_jobs: bool) -> None:
    """Compile C/C++ sources with approx annotations into an executable."""
    from approxcc.driver.build import Options, build

    clang_args = [f"-I{i}" for i in includes] + [f"-D{d}" for d in defines] + \
        [f"-U{u}" for u in undefines] + ([f"-std={std.lstrip('=')}"] if std else [])
    clang_args.append(f"-I{Path(__file__).resolve().parents[1] / 'runtime'}")
    if config and tunable:
        raise click.UsageError("--config builds one configuration, --tunable all of them: "
                               "choose one")
    opts = Options(list(sources), output, config, tunable, opt_level,
                   emit=(emit or "asm") if text else None, compile_only=compile_only,
                   clang_args=clang_args,
                   link_args=[f"-L{d}" for d in libdirs] + [f"-l{lib}" for lib in libs],
                   print_jobs=print_jobs)
    if emit and not text:
        raise click.UsageError("--emit needs -S")
    try:
        sys.exit(build(opts))
    except CompileError as err:
        _fail(err)
