"""The `approxcc` command line: the compiler driver (`approxcc build ARGS` or clang-style
`approxcc ARGS`), `approxcc opt`, `tune`, `report`, and the driver's own `approxcc -cc1`.

`run(argv)` is the whole command in this process (the console script `main` and in-process
callers use it): it returns the exit status and never raises. A user's mistake is a
diagnostic and status 1; anything else is an internal compiler error with a reproducer
(driver/crash.py), status 1; Ctrl-C is status 130 and a closed pipe 141, quietly.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import click

from approxcc.diagnostics import CompileError, DiagnosticEngine, current_engine

_BROKEN_PIPE = 141  # the status of a process killed by SIGPIPE, as `cc -E | head` gives


def run(argv: list[str]) -> int:
    """`approxcc ARGV`: its exit status. Each call has its own diagnostics engine."""
    with DiagnosticEngine():
        try:
            return _dispatch(argv)
        except KeyboardInterrupt:
            return 130
        except BrokenPipeError:
            return _BROKEN_PIPE
        except SystemExit as done:
            return done.code if isinstance(done.code, int) else int(done.code is not None)
        except Exception as exc:  # noqa: BLE001 - an internal compiler error, never a traceback
            _internal_error(exc, argv)
            return 1


def _internal_error(exc: Exception, argv: list[str]) -> None:
    """The report with its reproducer (driver/crash.py); without, if even that fails."""
    try:
        from approxcc.driver import crash

        crash.report(exc, argv)
    except Exception as err:  # noqa: BLE001
        print(f"approxcc: error: internal compiler error: {type(exc).__name__}: {exc}\n"
              f"approxcc: note: no reproducer: {type(err).__name__}: {err}", file=sys.stderr)


def main() -> None:
    """The console script."""
    status = run(sys.argv[1:])
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        status = _BROKEN_PIPE
    if status == _BROKEN_PIPE:  # what is left unwritten goes nowhere, not to a traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(status)


def _dispatch(argv: list[str]) -> int:
    """A subcommand, or (first argument not one) a clang command line."""
    if argv[:1] == ["-cc1"]:
        argv = ["cc1", *argv[1:]]
    if argv and argv[0] not in cli.commands and argv[0] not in ("-h", "--help"):
        return _compiler(argv)
    try:
        status = cli.main(args=argv, prog_name="approxcc", standalone_mode=False)
    except click.ClickException as err:
        err.show()
        return err.exit_code
    except click.Abort:
        return 130
    return status if isinstance(status, int) else 0


def _diagnosed(body: Callable[[], int | None]) -> int:
    """Runs a command; its CompileError is reported as clang does, status 1. Ctrl-C and a
    closed pipe end it here, before click (which would print and replace sys.stdout)."""
    try:
        return body() or 0
    except CompileError as err:
        current_engine().report(err.diagnostic)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return _BROKEN_PIPE


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """approxcc: accuracy-aware compiler for C/C++ and JAX.

    `approxcc [clang flags] files...` (no subcommand) is the same compiler driver as
    `approxcc build`: it takes clang's command line (see `approxcc build --help`).
    """


@cli.command("opt")
@click.argument("input_file", metavar="FILE.mlir", default="-")
@click.option("--pass-pipeline", "pipeline", default="",
              help="Comma-separated passes, e.g. "
              "approx-apply-config{config=c.json},approx-finalize")
@click.option("--print-ir-after-all", is_flag=True, help="Print the IR after every pass.")
@click.option("--split-input-file", is_flag=True, help="Process chunks separated by '// -----'.")
@click.option("--mlir-print-op-generic", "generic", is_flag=True,
              help="Print the generic op form (what upstream mlir-opt reads).")
@click.option("--mlir-print-debuginfo", "debuginfo", is_flag=True,
              help="Print the ops' source locations.")
@click.option("-o", "output", default="-", help="Output file (default stdout).")
def opt_cmd(input_file: str, pipeline: str, print_ir_after_all: bool, split_input_file: bool,
            generic: bool, debuginfo: bool, output: str) -> int:
    """Run approx dialect passes over an MLIR file (approx-opt)."""
    from approxcc.driver.opt import run_opt

    return _diagnosed(lambda: run_opt(input_file, pipeline, print_ir_after_all,
                                      split_input_file, output, generic, debuginfo))


@cli.command("build", add_help_option=False,
             context_settings={"ignore_unknown_options": True, "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def build_cmd(args: tuple[str, ...]) -> int:
    """Compile and link C/C++ (clang's flags, `--help` lists them), or build a .py model.

    The flags are read by the driver's table (driver/options.py), in order: click cannot
    keep the order of inputs and -l flags that a link needs."""
    from approxcc.system.project import is_system

    if args and is_system(args[0]):  # approxcc build SYSTEM [-o DIR]: a compound system
        return _diagnosed(lambda: _build_system(list(args)))
    return _diagnosed(lambda: _compiler(list(args)))


def _compiler(argv: list[str]) -> int:
    """The compiler driver; the system compiler itself when the command line has nothing
    for approxcc (driver/passthrough.py), before anything heavy is imported."""
    from approxcc.driver import passthrough

    if not passthrough.needs_approxcc(argv):
        return passthrough.run(argv)
    from approxcc.driver.build import main as driver

    return driver(argv)


def _build_system(args: list[str]) -> None:
    from approxcc.system import build_system

    where, rest = args[0], args[1:]
    if rest not in ([], ["-o", rest[-1]]):
        raise CompileError(f"a system is built with 'approxcc build {where} [-o DIR]'")
    click.echo(build_system(where, Path(rest[-1] if rest else "build")))


@cli.group("cc1", hidden=True)
def cc1_group() -> None:
    """The driver's in-process phases as commands (`approxcc -cc1 PHASE`), as `-###`
    prints them."""


def _phase_options(args: tuple[str, ...]) -> tuple[object, DiagnosticEngine]:
    """The driver flags after `--` (driver/options.py), and an engine for their warnings."""
    from approxcc.driver.options import parse_args

    opts, errors = parse_args(list(args))
    if errors:
        raise errors[0]
    return opts, DiagnosticEngine(opts.warnings, opts.color)


@cc1_group.command("frontend")
@click.argument("source")
@click.option("-o", "out", required=True, help="The approx MLIR.")
@click.option("--remainder", required=True, help="What the system compiler compiles.")
@click.option("--knobs-asm", help="The object's knob record (assembly).")
@click.option("--includes", help="The files the unit included, one per line.")
@click.option("--system-headers", is_flag=True, help="System headers in --includes too.")
@click.option("--all-functions", is_flag=True, help="Every function through MLIR, not only "
              "the annotated ones.")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def cc1_frontend(source: str, out: str, remainder: str, knobs_asm: str | None,
                 includes: str | None, system_headers: bool, all_functions: bool,
                 args: tuple[str, ...]) -> int:
    """libclang and the C frontend over one translation unit; ARGS: the parse's flags."""
    from approxcc.driver import cc1

    def body() -> int:
        opts, engine = _phase_options(args)
        with engine:
            try:
                cc1.frontend(source, [*opts.clang_args, *opts.warning_args], Path(out),
                             Path(remainder), Path(knobs_asm) if knobs_asm else None,
                             Path(includes) if includes else None, system_headers,
                             all_functions, opts.debug_info())
            except CompileError as err:
                engine.report(err.diagnostic)
            engine.summarize()
            return int(engine.errors > 0)

    return _diagnosed(body)


@cc1_group.command("depfile")
@click.argument("source")
@click.option("--target", required=True, help="The object the rule makes.")
@click.option("--includes", required=True, help="What the frontend included.")
@click.option("--rule", required=True, help="The system compiler's rule for the remainder.")
@click.option("--remainder", required=True, help="The remainder's source.")
@click.option("--config", help="The configuration compiled in.")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def cc1_depfile(source: str, target: str, includes: str, rule: str, remainder: str,
                config: str | None, args: tuple[str, ...]) -> int:
    """The make rule of one object; ARGS: -MD/-MMD -MF FILE [-MT T]... [-MP]."""
    from approxcc.driver import cc1

    def body() -> None:
        opts, _ = _phase_options(args)
        deps = opts.dependencies
        if deps is None or deps.file is None:
            raise CompileError("-cc1 depfile needs -MD or -MMD, and -MF FILE")
        cc1.dependency_file(source, deps, deps.file, target, Path(includes), Path(rule),
                            Path(remainder), config)

    return _diagnosed(body)


@cc1_group.command("ml-build")
@click.argument("model")
@click.option("-o", "out", required=True, help="The folder of variants.")
@click.option("--target", "targets", default="cpu", show_default=True, help="IREE targets.")
@click.option("--keep-going", is_flag=True, help="Build the other variants past a failure.")
@click.option("--config", help="Build the variants this configuration selects only.")
def cc1_ml_build(model: str, out: str, targets: str, keep_going: bool,
                 config: str | None) -> int:
    """Every variant of a .py model compiled with IREE."""
    from approxcc.driver import cc1

    return _diagnosed(lambda: cc1.model_build(model, out, targets, keep_going, config))


@cc1_group.command("ml-emit")
@click.argument("model")
@click.option("-o", "out", default="-", show_default=True, help="The approx IR file.")
def cc1_ml_emit(model: str, out: str) -> int:
    """The approx IR of a .py model (StableHLO inside approx knobs)."""
    from approxcc.driver import cc1

    return _diagnosed(lambda: cc1.model_emit(model, out))


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


@cli.command("tune")
@click.argument("target", metavar="[DIR | approx.toml]", default=".")
@click.option("--qos-budget", "budgets", required=True,
              help="QoS loss budgets, e.g. 3%,6%,9%: one configuration per budget.")
@click.option("--time-limit", default="10m", show_default=True,
              help="Search time (e.g. 90s, 10m), shared by the budgets.")
@click.option("--parallel", type=click.IntRange(1, 256), default=1, show_default=True,
              help="Evaluations at once; N > 1 starts a Dask LocalCluster of N worker "
                   "processes.")
@click.option("--cluster", metavar="tcp://HOST:PORT",
              help="Run evaluations on the workers of this Dask scheduler "
                   "(started with `dask scheduler` / `dask worker`).")
@click.option("--confirm-repeats", type=click.IntRange(0, 100), default=5, show_default=True,
              help="Interleaved repeats (with the exact program) per candidate near each "
                   "budget before picking; 0: pick from single runs.")
@click.option("--confirm-candidates", type=click.IntRange(1, 20), default=3, show_default=True,
              help="Candidates per budget confirmed besides the fastest within it.")
@click.option("--start-from", "start_from", multiple=True, type=click.Path(),
              metavar="CONFIG.json",
              help="A configuration measured before the searches, which start from the "
                   "fastest within their budget (e.g. a static run's pick for --mode "
                   "dynamic); repeatable.")
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
def tune_cmd(target: str, budgets: str, time_limit: str, parallel: int, cluster: str | None,
             confirm_repeats: int, confirm_candidates: int, start_from: tuple[str, ...],
             seed: int, db: str | None,
             out: str | None, resume: bool, mode: str, timeout: float | None, repeats: int,
             max_evals: int | None, no_screening: bool, search: str) -> int:
    """Tune the knobs of a program under QoS budgets (docs/tuning.md); the one `--search`
    engine is OpenTuner."""
    from rich.console import Console

    from approxcc.tune import TuneOptions, load_application, tune
    from approxcc.tune.db import ResultsDB
    from approxcc.tune.report import report, stdout_console
    from approxcc.tune.tuner import seconds

    console = Console(stderr=True)

    def body() -> int:
        from approxcc.system import is_system, load_system

        compound_system = is_system(target)
        if compound_system:  # QoS is its answers' score (system.toml)
            compound = load_system(target)
            app, root, qos = compound, compound.project.root, compound.project.metric
        else:   # a C/C++ or a JAX program's approx.toml
            program = load_application(target)
            app, root, qos = program, program.program.root, program.program.metric
        out_dir = Path(out) if out else root / "tuned"
        opts = TuneOptions(_budgets(budgets), out_dir, seconds(time_limit, "--time-limit"),
                           parallel, seed, Path(db) if db else None, resume, mode, timeout,
                           repeats, max_evals,
                           not no_screening, qos, cluster=cluster,
                           confirm_repeats=confirm_repeats,
                           confirm_candidates=confirm_candidates,
                           start_from=[Path(p) for p in start_from])

        def reporter(results: ResultsDB, run_id: int) -> None:
            configs = report(results, results.run(run_id), out_dir, stdout_console())
            if compound_system:   # and how the configurations do on the eval questions
                from approxcc.system.evaluate import record_eval

                record_eval(target, configs, stdout_console())

        try:
            tune(app, opts, console, reporter=reporter)
        except KeyboardInterrupt:
            click.echo("approxcc: interrupted; finished evaluations are in the results DB "
                       "(continue with --resume)", err=True)
            return 130
        return 0

    return _diagnosed(body)


@cli.command("eval")
@click.argument("system", metavar="SYSTEM")
@click.option("--config", "config", required=True, type=click.Path(),
              help='A configuration JSON ({"approxcc": "1", "knobs": {...}}).')
@click.option("--questions", "questions", required=True, type=click.Path(),
              help='NQ-open JSONL: one {"question": ..., "answer": [...]} a line.')
@click.option("--limit", type=click.IntRange(1), default=None, help="Only the first N questions.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of a table.")
def eval_cmd(system: str, config: str, questions: str, limit: int | None,
             as_json: bool) -> int:
    """Run a compound system's exact build and a configuration on the same questions:
    accuracy, loss, seconds per question and speedup."""

    def body() -> None:
        import json

        from approxcc.system import evaluate_system, format_result

        result = evaluate_system(system, Path(config), Path(questions), limit)
        click.echo(json.dumps(result) if as_json else format_result(result))

    return _diagnosed(body)


@cli.command("report")
@click.argument("db_path", metavar="[DB]", default="tuned/results.db")
@click.option("--out", "out", type=click.Path(),
              help="Where to write configs and pareto.png (default: beside the DB).")
def report_cmd(db_path: str, out: str | None) -> int:
    """Re-print the tables and plots of the latest run in a results DB."""
    from approxcc.tune.db import ResultsDB
    from approxcc.tune.report import report, stdout_console

    path = Path(db_path)

    def body() -> None:
        if not path.is_file():
            raise CompileError(f"no results DB at '{db_path}'")
        results = ResultsDB(path)
        run = results.latest_run()
        if run is None:
            raise CompileError(f"'{db_path}' holds no tuning run")
        report(results, run, Path(out) if out else path.parent, stdout_console())

    return _diagnosed(body)
