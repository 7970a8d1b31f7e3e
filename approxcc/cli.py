"""The `approxcc` command line: the compiler driver (`approxcc build ARGS` or clang-style
`approxcc ARGS`), `approxcc opt`, `tune` and `report`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from approxcc.diagnostics import CompileError, report


def _fail(err: CompileError) -> None:
    report(err.diagnostic)
    sys.exit(1)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """approxcc: accuracy-aware compiler for C/C++ and JAX.

    `approxcc [clang flags] files...` (no subcommand) is the same compiler driver as
    `approxcc build`: it takes clang's command line (see `approxcc build --help`).
    """


def main() -> None:
    """The console script: a subcommand, or (first argument not one) a clang command line."""
    args = sys.argv[1:]
    if args and args[0] not in cli.commands and args[0] not in ("-h", "--help"):
        from approxcc.driver.build import main as driver

        sys.exit(driver(args))
    cli()


@cli.command("opt")
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


@cli.command("build", add_help_option=False,
             context_settings={"ignore_unknown_options": True, "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def build_cmd(args: tuple[str, ...]) -> None:
    """Compile and link C/C++ (clang's flags, `--help` lists them), or build a .py model."""
    from approxcc.driver.build import main as driver

    sys.exit(driver(list(args)))


def _budgets(text: str) -> list[float]:
    """"3%,6%,9%" or "0.03,0.06" → sorted losses in (0, 1)."""
    out = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        try:
            value = float(item[:-1]) / 100 if item.endswith("%") else float(item)
        except ValueError:
            raise CompileError(f"--qos-budget: '{item}' is not a percentage like 3% or a "
                               f"loss like 0.03") from None
        if not 0.0 < value < 1.0:
            raise CompileError(f"--qos-budget: '{item}' must be a loss between 0% and 100%")
        out.append(value)
    if not out:
        raise CompileError("--qos-budget needs at least one budget, e.g. 3%,6%,9%")
    return sorted(set(out))


def _seconds(text: str) -> float:
    """"90", "90s", "10m", "1h" → seconds."""
    units = {"s": 1.0, "m": 60.0, "h": 3600.0}
    scale = units.get(text[-1:], 1.0)
    try:
        value = float(text[:-1] if text[-1:] in units else text) * scale
    except ValueError:
        raise CompileError(f"--time-limit: '{text}' is not a duration like 90s, 10m or 1h") \
            from None
    if value <= 0:
        raise CompileError(f"--time-limit: '{text}' must be positive")
    return value


@cli.command("tune")
@click.argument("target", metavar="[DIR | approx.toml]", default=".")
@click.option("--qos-budget", "budgets", required=True,
              help="QoS loss budgets, e.g. 3%,6%,9%: one configuration per budget.")
@click.option("--time-limit", default="10m", show_default=True,
              help="Search time (e.g. 90s, 10m), shared by the budgets.")
@click.option("--parallel", type=click.IntRange(1, 256), default=1, show_default=True,
              help="Evaluations at once.")
@click.option("--seed", type=int, default=0, show_default=True, help="Search seed.")
@click.option("--db", "db", type=click.Path(), help="Results DB (default OUT/results.db).")
@click.option("--out", "out", type=click.Path(),
              help="Output folder for configs, pareto.png and the work folder "
                   "(default DIR/tuned).")
@click.option("--resume", is_flag=True, help="Continue the latest run in the results DB.")
@click.option("--mode", type=click.Choice(["static", "dynamic", "both"]), default="both",
              show_default=True, help="Tune dynamic knobs as one value, as decision trees, "
                                      "or both (to compare the fronts).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True),
              help="Seconds before a run counts as hung (default 10× the exact run).")
@click.option("--repeats", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Runs per input and configuration (median).")
@click.option("--max-evals", type=click.IntRange(1), default=None,
              help="Measure at most this many configurations (screening: up to half, the "
                   "rest split over the searches) besides the time limit; with --parallel 1 "
                   "the same seed then gives the same search.")
@click.option("--no-screening", is_flag=True, help="Skip the one-knob-at-a-time first pass.")
@click.option("--search", type=click.Choice(["opentuner"]), default="opentuner",
              show_default=True, help="Search engine.")
def tune_cmd(target: str, budgets: str, time_limit: str, parallel: int, seed: int,
             db: str | None, out: str | None, resume: bool, mode: str, timeout: float | None,
             repeats: int, max_evals: int | None, no_screening: bool, search: str) -> None:
    """Tune the knobs of a program under QoS budgets (spec/tuning.md); the one `--search`
    engine is OpenTuner."""
    from rich.console import Console

    from approxcc.tune import CProgram, TuneOptions, tune
    from approxcc.tune.report import report

    console = Console(stderr=True)
    try:
        app = CProgram.load(target)
        out_dir = Path(out) if out else app.program.root / "tuned"
        opts = TuneOptions(_budgets(budgets), out_dir, _seconds(time_limit), parallel, seed,
                           Path(db) if db else None, resume, mode, timeout, repeats, max_evals,
                           not no_screening, app.program.metric)
        tune(app, opts, console,
             reporter=lambda results, run_id: report(results, results.run(run_id), out_dir,
                                                     Console()))
    except CompileError as err:
        _fail(err)
    except KeyboardInterrupt:
        click.echo("approxcc: interrupted; finished evaluations are in the results DB "
                   "(continue with --resume)", err=True)
        sys.exit(130)


@cli.command("report")
@click.argument("db_path", metavar="[DB]", default="tuned/results.db")
@click.option("--out", "out", type=click.Path(),
              help="Where to write configs and pareto.png (default: beside the DB).")
def report_cmd(db_path: str, out: str | None) -> None:
    """Re-print the tables and plots of the latest run in a results DB."""
    from rich.console import Console

    from approxcc.tune.db import ResultsDB
    from approxcc.tune.report import report

    path = Path(db_path)
    try:
        if not path.is_file():
            raise CompileError(f"no results DB at '{db_path}'")
        results = ResultsDB(path)
        run = results.latest_run()
        if run is None:
            raise CompileError(f"'{db_path}' holds no tuning run")
        report(results, run, Path(out) if out else path.parent, Console())
    except CompileError as err:
        _fail(err)
