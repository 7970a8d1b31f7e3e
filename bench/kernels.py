"""`make bench-kernels`: tune every kernel of examples/kernels/, static against dynamic.

For each kernel folder holding an `approx.toml`: one `approxcc.tune.tune` run in mode `both`
(static and dynamic searches share the kernel's time budget equally; no screening pass
unless `--screening`), then per QoS budget

* static: the fastest configuration without a decision tree whose tuning loss is within the
  budget;
* dynamic: the fastest configuration with at least one decision tree within the budget,

both re-measured on the held-out eval inputs (the tuner's validation measures its front; a
pick it did not measure is measured here, into the same results DB); and the tuner's own pick
(noise-aware: confirmed by interleaved repeats, then measured the same way on eval): median
speedup and loss on tune and eval, whether its eval loss exceeds the budget, and the time the
search took to reach 95% of its final front's hypervolume.
Written to the results folder: `results.md` (the table), `results.json`, and per kernel
`<kernel>/pareto.png` (the tuner's plot, with the static and dynamic picks on eval added)
beside the tuner's own outputs (`results.db`, configurations per budget).

    python bench/kernels.py [--minutes 4] [--kernels lavamd,kmeans] [--out DIR]
                            [--confirm-repeats 5] [--confirm-candidates 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

from rich.console import Console
from rich.table import Table

from approxcc.diagnostics import CompileError
from approxcc.tune import CProgram, TuneOptions, tune
from approxcc.tune.db import Evaluation, ResultsDB, Run
from approxcc.tune.measure import Measurer
from approxcc.tune.report import efficiency, plot
from approxcc.tune.report import rows as pick_rows
from approxcc.tune.space import is_dynamic_config

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "examples" / "kernels"
BUDGETS = [0.03, 0.06, 0.09]

console = Console(width=220)   # the table is wide; never wrap it into an 80-column pipe


class TimedProgram(CProgram):
    """A kernel whose one tunable build is timed: the compile time of the table."""

    compile_seconds = 0.0

    def build(self, workdir: Path) -> None:
        start = time.perf_counter()
        super().build(workdir)
        self.compile_seconds = time.perf_counter() - start


@dataclass
class Side:
    """The pick of one kind (static or dynamic) for one budget."""

    speedup_tune: float | None = None
    speedup_eval: float | None = None
    loss_tune: float | None = None
    loss_eval: float | None = None
    config: dict | None = None


@dataclass
class Row:
    kernel: str
    budget: float
    static: Side
    dynamic: Side
    pick: Side                  # the tuner's confirmed pick (medians of its repeats)
    over_budget: bool           # its eval loss exceeds the budget
    hv95_seconds: float | None  # tuning seconds to 95% of the final front's hypervolume
    compile_seconds: float
    evaluations: int
    failed: int
    exact_seconds: float


def fastest(points: list[Evaluation], budget: float,
            kind: Callable[[Evaluation], bool]) -> Evaluation | None:
    within = [e for e in points if kind(e) and e.loss is not None and e.loss <= budget]
    return min(within, key=lambda e: (e.time, e.id)) if within else None


def is_static(e: Evaluation) -> bool:
    return not is_dynamic_config(e.config)


def is_dynamic(e: Evaluation) -> bool:
    return is_dynamic_config(e.config)


def on_eval(app: CProgram, db: ResultsDB, run: Run, pick: Evaluation, work: Path,
            repeats: int) -> Evaluation | None:
    """`pick` measured on the eval inputs: from the DB, or measured now and recorded."""
    known = db.lookup(run.id, pick.config, "eval")
    if known is not None:
        return known
    golden = db.golden(run.id, "eval", app.eval_inputs)
    if golden is None:
        return None
    measurer = Measurer(app, work, repeats)
    measurer.timeout = max(60.0, 10 * (run.baseline_eval or 0.0))
    m = measurer.measure(pick.config, app.eval_inputs, golden)
    return db.record(run.id, pick.config, "eval", m, budget=None, phase="validation",
                     mode="-", seed=run.seed)


def side(app: CProgram, db: ResultsDB, run: Run, pick: Evaluation | None, work: Path,
         repeats: int) -> Side:
    if pick is None or not pick.time:
        return Side()
    twin = on_eval(app, db, run, pick, work, repeats)
    ok = twin is not None and twin.ok and twin.time
    return Side((run.baseline_tune or 0.0) / pick.time,
                (run.baseline_eval or 0.0) / twin.time if ok else None,
                pick.loss, twin.loss if ok else None, pick.config)


GENERATORS = ("gen_inputs.py", "gen.py")


def load(folder: Path) -> TimedProgram:
    """The kernel; when its inputs are not there yet (generated, not tracked), its generator
    runs first, with its defaults, as its README says."""
    try:
        return TimedProgram.load(str(folder))
    except CompileError:
        script = next((folder / g for g in GENERATORS if (folder / g).is_file()), None)
        if script is None:
            raise
        console.print(f"{folder.name}: generating inputs with {script.name}")
        subprocess.run([sys.executable, str(script)], cwd=folder, check=True,
                       stdout=subprocess.DEVNULL)
        return TimedProgram.load(str(folder))


def bench_kernel(folder: Path, out: Path, args: argparse.Namespace) -> list[Row]:
    app = load(folder)
    opts = TuneOptions(BUDGETS, out, time_limit=args.minutes * 60, parallel=args.parallel,
                       seed=args.seed, mode="both", repeats=args.repeats,
                       screening=args.screening, metric=app.program.metric,
                       confirm_repeats=args.confirm_repeats,
                       confirm_candidates=args.confirm_candidates)
    run_id = tune(app, opts, Console(stderr=True))
    db = ResultsDB(opts.db_path)
    try:
        run = db.run(run_id)
        evaluations = db.evaluations(run_id, "tune")
        points = [e for e in evaluations if e.ok and e.time]
        failed = sum(not e.ok for e in evaluations)
        picks = {r.budget: r for r in pick_rows(db, run)}
        hv95 = efficiency(db, run).to_fraction
        out_rows = []
        for budget in BUDGETS:
            p = picks.get(budget)
            pick = Side(p.speedup_tune.median, p.speedup_eval.median if p.speedup_eval else None,
                        p.loss_tune.median, p.loss_eval.median if p.loss_eval else None,
                        p.pick.config) if p else Side()
            out_rows.append(Row(
                folder.name, budget,
                side(app, db, run, fastest(points, budget, is_static), out / "work",
                     args.repeats),
                side(app, db, run, fastest(points, budget, is_dynamic), out / "work",
                     args.repeats),
                pick, bool(p and p.over_budget), hv95,
                app.compile_seconds, len(evaluations) - 1, failed, run.baseline_tune or 0.0))
        marks = {f"{kind} picks (eval)": [(s.loss_eval, s.speedup_eval) for s in
                                          (getattr(r, kind) for r in out_rows)
                                          if s.loss_eval is not None and s.speedup_eval]
                 for kind in ("static", "dynamic")}
        plot(db, run, out / "pareto.png", marks=marks)
        return out_rows
    finally:
        db.close()


def _x(value: float | None) -> str:
    return f"{value:.2f}×" if value is not None else "-"


def _pct(value: float | None) -> str:
    return f"{value:.2%}" if value is not None else "-"


def _gap(s: Side) -> str:
    if s.speedup_eval is None or s.speedup_tune is None or s.loss_eval is None:
        return "-"
    return f"{s.speedup_eval / s.speedup_tune - 1:+.0%} / {s.loss_eval - (s.loss_tune or 0):+.2%}"


def _winner(row: Row) -> str:
    s, d = row.static.speedup_tune, row.dynamic.speedup_tune
    if d is None:
        return "static" if s is not None else "-"
    if s is None:
        return "dynamic"
    return "dynamic" if d > s else "static"


COLUMNS = ("kernel", "budget", "pick × tune / eval", "pick loss tune / eval",
           "gap pick (speedup / loss)", "eval loss ≤ budget", "95% HV after s",
           "static × tune / eval", "dynamic × tune / eval",
           "static loss tune / eval", "dynamic loss tune / eval",
           "gap static (speedup / loss)", "gap dynamic (speedup / loss)", "faster (tune)",
           "exact s (tune set)", "compile s", "evaluations (failed)")


def cells(row: Row) -> list[str]:
    st, dy, pk = row.static, row.dynamic, row.pick
    holds = "-" if pk.loss_eval is None else ("NO" if row.over_budget else "yes")
    return [row.kernel, f"{row.budget:.0%}",
            f"{_x(pk.speedup_tune)} / {_x(pk.speedup_eval)}",
            f"{_pct(pk.loss_tune)} / {_pct(pk.loss_eval)}", _gap(pk), holds,
            f"{row.hv95_seconds:.0f}" if row.hv95_seconds is not None else "-",
            f"{_x(st.speedup_tune)} / {_x(st.speedup_eval)}",
            f"{_x(dy.speedup_tune)} / {_x(dy.speedup_eval)}",
            f"{_pct(st.loss_tune)} / {_pct(st.loss_eval)}",
            f"{_pct(dy.loss_tune)} / {_pct(dy.loss_eval)}",
            _gap(st), _gap(dy), _winner(row), f"{row.exact_seconds:.2f}",
            f"{row.compile_seconds:.1f}", f"{row.evaluations} ({row.failed})"]


def markdown(rows: list[Row], args: argparse.Namespace) -> str:
    lines = [f"# approxcc kernel suite: static vs dynamic ({datetime.now():%Y-%m-%d %H:%M})",
             "",
             f"{args.minutes:g} min of tuning per kernel (mode both), seed {args.seed}, "
             f"{args.repeats} run(s) per input, {args.parallel} evaluation(s) at once"
             f"{', screening' if args.screening else ', no screening'}. "
             "Speedups: exact ROI time / configuration ROI time, summed over the inputs; "
             "gap: eval relative to tune (speedup ratio - 1 / loss difference). "
             "pick: the tuner's noise-aware pick (medians of interleaved repeats); "
             "static / dynamic: the fastest single run of each kind within the budget.",
             "", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(cells(r)) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def table(rows: list[Row]) -> Table:
    t = Table(title="approxcc kernel suite: static vs dynamic")
    for col in COLUMNS:
        t.add_column(col, justify="left" if col == "kernel" else "right")
    for r in rows:
        t.add_row(*cells(r))
    return t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=4.0,
                        help="tuning time per kernel, static and dynamic together")
    parser.add_argument("--kernels", default="",
                        help="comma-separated kernel folders (default: every one)")
    parser.add_argument("--out", type=Path, default=None,
                        help="results folder (default build/bench-kernels/<timestamp>)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=1, help="runs per input (median)")
    parser.add_argument("--parallel", type=int, default=1, help="evaluations at once")
    parser.add_argument("--confirm-repeats", type=int, default=5,
                        help="interleaved repeats per candidate pick (the tuner's default)")
    parser.add_argument("--confirm-candidates", type=int, default=3,
                        help="candidates per budget besides the fastest within it")
    # Off by default: the tuner's screening pass also prunes, from the leaves of decision
    # trees, every value that exceeds a budget when used everywhere, which leaves the
    # dynamic knobs of lavamd, kmeans and pagerank nothing but their exact value.
    parser.add_argument("--screening", action="store_true",
                        help="run the tuner's one-knob-at-a-time pass first")
    args = parser.parse_args()
    # Absolute: runs happen inside per-evaluation folders, where a relative path means nothing.
    stamp = f"{datetime.now():%Y%m%d-%H%M%S}"
    out = (args.out or ROOT / "build" / "bench-kernels" / stamp).resolve()
    wanted = [k for k in args.kernels.split(",") if k]
    folders = sorted(p.parent for p in KERNELS.glob("*/approx.toml")
                     if not wanted or p.parent.name in wanted)
    if missing := set(wanted) - {f.name for f in folders}:
        parser.error(f"no kernel folder with an approx.toml: {', '.join(sorted(missing))}")
    rows: list[Row] = []
    for folder in folders:
        console.rule(f"{folder.name}: {args.minutes:g} min")
        rows += bench_kernel(folder, out / folder.name, args)
        # Written after every kernel: a long run interrupted later keeps what it measured.
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.md").write_text(markdown(rows, args))
        (out / "results.json").write_text(json.dumps([asdict(r) for r in rows], indent=2))
    console.print(table(rows))
    console.print(f"wrote {out / 'results.md'}, {out / 'results.json'} and "
                  f"{', '.join(str(out / f.name / 'pareto.png') for f in folders)}")


if __name__ == "__main__":
    main()
