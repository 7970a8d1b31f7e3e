"""`approxcc tune` end to end: real builds, real OpenTuner, a few seconds of tuning each."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import EXAMPLE, Result, Synthetic, run_approxcc, small_example
from rich.console import Console

from approxcc.diagnostics import CompileError
from approxcc.tune import CProgram, RunFailed, RunResult, TuneOptions, tune
from approxcc.tune.pareto import dominated, front, hypervolume, time_to_fraction
from approxcc.tune.report import report
from approxcc.tune.space import Encoding, Knob, KnobSpace, config_hash

ROOT = Path(__file__).resolve().parents[1]
APPROXCC = str(Path(sys.executable).parent / "approxcc")
BUDGETS = (0.01, 0.02)


def approxcc(*args: str, cwd: Path = ROOT, check: bool = True) -> Result:
    """`approxcc ARGS` in this process; with `check`, it must exit 0."""
    done = run_approxcc(args, cwd=cwd)
    assert not check or done.returncode == 0, done.stderr
    return done


def rows(db: Path, where: str = "1") -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT id, config_hash, inputs, status, reason, phase, time_tune,"
                            " loss_tune, seed, versions, host FROM evaluations WHERE "
                            f"{where} ORDER BY id").fetchall()


@pytest.fixture(scope="module")
def tuned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small example tuned in-process (with fewer confirmation repeats than the default),
    its report printed to `report.txt` the way `approxcc tune` prints it."""
    out = tmp_path_factory.mktemp("tuned")
    example = small_example(tmp_path_factory.mktemp("src"))
    opts = TuneOptions(list(BUDGETS), out, seed=1, max_evals=24, metric="l2",
                       confirm_repeats=3, confirm_candidates=1)
    with (out / "report.txt").open("w") as f:
        console = Console(file=f, width=200)
        tune(CProgram.load(str(example)), opts, Console(quiet=True),
             reporter=lambda db, run_id: report(db, db.run(run_id), out, console))
    return out


def test_every_budget_is_met_on_the_tuning_inputs(tuned: Path) -> None:
    for budget in BUDGETS:
        config = json.loads((tuned / f"{budget * 100:g}pct.json").read_text())
        assert config["program"] == "smooth"
        assert config["qos"]["loss_tune"] <= config["qos"]["loss_bound"] <= budget
        assert config["qos"]["loss_eval"] is not None
        assert all(len(config["spread"][k]) == 2 for k in ("speedup_tune", "speedup_eval"))
        assert config["provenance"]["seed"] == 1 and config["provenance"]["versions"]
    loose = json.loads((tuned / "2pct.json").read_text())
    assert loose["speedup"]["tune"] > 1.0 and loose["speedup"]["eval"] > 1.0
    assert (tuned / "pareto.png").stat().st_size > 10_000


def test_picks_are_confirmed_by_interleaved_repeats_on_tune_and_eval(tuned: Path) -> None:
    with sqlite3.connect(tuned / "results.db") as conn:
        reps = conn.execute("SELECT config_hash, inputs, COUNT(*), MIN(exact_time) FROM "
                            "confirmations WHERE status = 'ok' GROUP BY config_hash, inputs"
                            ).fetchall()
    for budget in BUDGETS:
        pick = json.loads((tuned / f"{budget * 100:g}pct.json").read_text())
        h = pick["provenance"]["config_hash"]
        counts = {inputs: n for ch, inputs, n, exact in reps if ch == h and exact > 0}
        assert counts == {"tune": 3, "eval": 3}
    text = (tuned / "report.txt").read_text()
    assert "speedup eval" in text and "loss eval" in text
    assert "search efficiency: 95% of the final front's hypervolume" in text


def test_db_keeps_the_time_of_every_evaluation(tuned: Path) -> None:
    with sqlite3.connect(tuned / "results.db") as conn:
        elapsed = [e for (e,) in conn.execute("SELECT elapsed FROM evaluations WHERE phase IN "
                                              "('screening', 'search') ORDER BY id")]
    assert elapsed and all(e is not None for e in elapsed)
    assert elapsed == sorted(elapsed)


def test_front_is_non_dominated(tuned: Path) -> None:
    points = [(t, loss) for _, _, _, status, _, _, t, loss, *_ in rows(tuned / "results.db")
              if status == "ok" and t is not None]
    pareto = front(points, key=lambda p: p)
    assert pareto and not any(dominated(p, q) for p in pareto for q in points)
    assert all(any(dominated(p, q) for q in pareto) for p in points if p not in pareto)


def test_db_holds_every_evaluation(tuned: Path) -> None:
    evaluations = rows(tuned / "results.db")
    phases = {r[5] for r in evaluations}
    assert {"baseline", "screening", "search", "validation"} <= phases
    assert len([r for r in evaluations if r[5] == "screening"]) == 8   # 5 + 1 + 2 values
    assert len([r for r in evaluations if r[5] in ("screening", "search")]) <= 24
    assert len({(r[1], r[2]) for r in evaluations}) == len(evaluations)   # none ran twice
    assert all(r[8] == 1 and json.loads(r[9])["opentuner"] and r[10] for r in evaluations)


def test_tuned_config_builds_and_prints_what_the_tunable_binary_printed(tuned: Path,
                                                                        tmp_path: Path) -> None:
    config = tuned / "2pct.json"
    subprocess.run(["cc", "-O2", "-c", str(EXAMPLE / "state.c"), "-o", "state.o"],
                   cwd=tmp_path, check=True)
    approxcc("build", str(EXAMPLE / "smooth.c"), "state.o", "--config", str(config),
             "-o", "release", cwd=tmp_path)
    first = sorted((EXAMPLE / "inputs" / "tune").iterdir())[0]
    release = subprocess.run([str(tmp_path / "release"), str(first)], capture_output=True,
                             text=True, check=True).stdout
    tunable = subprocess.run([str(tuned / "work" / "build" / "smooth.tunable"), str(first)],
                             capture_output=True, text=True, check=True,
                             env={**os.environ, "APPROX_CONFIG": str(config)}).stdout
    assert release == tunable


def test_report_reprints_from_the_db(tuned: Path, tmp_path: Path) -> None:
    proc = approxcc("report", str(tuned / "results.db"), "--out", str(tmp_path))
    assert "speedup" in proc.stdout and (tmp_path / "pareto.png").exists()
    assert (tmp_path / "1pct.json").exists()


def test_resume_after_sigkill_loses_nothing(tmp_path: Path) -> None:
    example = small_example(tmp_path)
    db = tmp_path / "out" / "results.db"
    argv = [APPROXCC, "tune", str(example), "--qos-budget", "2%", "--max-evals", "12",
            "--mode", "static", "--no-screening", "--confirm-repeats", "1",
            "--confirm-candidates", "1", "--out", str(tmp_path / "out")]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if db.exists() and len(rows(db, "phase = 'search'")) >= 3:
                break
        except sqlite3.OperationalError:   # the tuner is still creating its tables
            pass
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = rows(db)
    assert len([r for r in before if r[5] == "search"]) >= 3
    approxcc("tune", *argv[2:], "--resume")
    after = rows(db)
    assert after[:len(before)] == before                       # nothing lost or rewritten
    assert len(after) > len(before)
    assert len({(r[1], r[2]) for r in after}) == len(after)     # no configuration ran twice
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1


class Slow(Synthetic):
    """Each run takes 50 ms: a time limit is what stops the search."""

    def run(self, input: str, config_path: Path | None, workdir: Path,
            timeout: float) -> RunResult:
        time.sleep(0.05)
        return super().run(input, config_path, workdir, timeout)


def test_a_resumed_run_goes_on_with_what_is_left_of_its_time_limit(tmp_path: Path) -> None:
    opts = TuneOptions([0.01], tmp_path, time_limit=3.0, mode="static", confirm_repeats=0)
    tune(Slow(), opts)
    measured = "phase IN ('screening', 'search')"
    first = rows(tmp_path / "results.db", measured)
    assert first
    tune(Slow(), TuneOptions([0.01], tmp_path, time_limit=3.0, mode="static",
                             confirm_repeats=0, resume=True))
    assert rows(tmp_path / "results.db", measured) == first   # the limit was spent


def test_same_seed_same_search(tmp_path: Path) -> None:
    def hashes(out: str, seed: int) -> list[str]:
        opts = TuneOptions([0.005, 0.01], tmp_path / out, seed=seed, max_evals=24,
                           mode="both", confirm_repeats=0)
        tune(Synthetic(), opts)
        return [r[1] for r in rows(tmp_path / out / "results.db", "phase = 'search'")]

    first, again, other = hashes("a", 7), hashes("b", 7), hashes("c", 8)
    assert len(first) >= 10 and first == again
    assert other != first


class Crashy(Synthetic):
    def run(self, input: str, config_path: Path | None, workdir: Path,
            timeout: float) -> RunResult:
        knobs = json.loads(config_path.read_text())["knobs"] if config_path else {}
        if knobs.get("c", {}).get("value") == 2:
            raise RunFailed("crashed: SIGSEGV")
        return super().run(input, config_path, workdir, timeout)


HANGS = r"""
#include <stdio.h>
int read_n(const char *path);
int crash_now(int x);
int hang_now(int x);

int triple_crash(int x) { return crash_now(x); }
int triple_hang(int x) { return hang_now(x); }

// @approx func_substitute knob(impl) variants(triple_crash, triple_hang)
int triple(int x) { return 3 * x; }

int main(int argc, char **argv) {
  int n = read_n(argv[1]);
  long total = 0;
  // @approx loop_perforate knob(sum) values(1:2)
  for (int i = 0; i < n; i++)
    total += triple(i);
  printf("%ld\n", total);
  return 0;
}
"""

HANGS_RT = r"""
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
int read_n(const char *path) {
  FILE *f = fopen(path, "r");
  int n = 0;
  if (f && fscanf(f, "%d", &n) != 1) n = 0;
  if (f) fclose(f);
  return n;
}
int crash_now(int x) { raise(SIGSEGV); return x; }
int hang_now(int x) { for (;;) pause(); return x; }
"""


def test_crashing_and_hanging_configs_are_recorded_as_failed(tmp_path: Path) -> None:
    (tmp_path / "hangs.c").write_text(HANGS)
    (tmp_path / "rt.c").write_text(HANGS_RT)
    for kind, count in (("tune", 1), ("eval", 5)):
        (tmp_path / kind).mkdir()
        for i in range(count):
            (tmp_path / kind / f"{i}.txt").write_text(f"{1000 + 17 * i + 100 * (kind == 'eval')}\n")
    (tmp_path / "approx.toml").write_text(
        '[program]\nname = "hangs"\nsources = ["hangs.c"]\nruntime = ["rt.c"]\n'
        '[run]\nargs = ["{input}"]\ntune = ["tune/*"]\neval = ["eval/*"]\n'
        '[qos]\nmetric = "l2"\n')
    approxcc("tune", str(tmp_path), "--qos-budget", "50%", "--max-evals", "6",
             "--timeout", "1", "--mode", "static")
    failed = {r[4] for r in rows(tmp_path / "tuned" / "results.db", "status = 'failed'")}
    assert any(reason.startswith("crashed: SIGSEGV") for reason in failed), failed
    assert any(reason.startswith("timeout") for reason in failed), failed


def test_failures_from_an_application_do_not_stop_the_search(tmp_path: Path) -> None:
    tune(Crashy(), TuneOptions([0.01], tmp_path, max_evals=20, mode="static"))
    failed = rows(tmp_path / "results.db", "status = 'failed'")
    assert failed and all(r[4] == "crashed: SIGSEGV" for r in failed)
    assert rows(tmp_path / "results.db", "phase = 'search' AND status = 'ok'")


def test_thresholds_decode_sorted_and_round_trip() -> None:
    knob = Knob("k", "loop_perforate", (1, 2, 4), 1, dynamic=True, thresholds=3, range=(0, 10))
    enc = Encoding(KnobSpace((knob,)), "dynamic")
    for draws in ((5, 5, 5), (7, 0, 3), (0, 0, 0), (8, 8, 8)):
        data = {f"k.t{i}": t for i, t in enumerate(draws)} | {"k.d0": 0, "k.d1": 1, "k.d2": 2,
                                                               "k.d3": 0}
        t = enc.decode(data)["k"]["thresholds"]
        assert all(a < b for a, b in zip(t, t[1:], strict=False)) and 0 <= t[0] and t[-1] <= 10
        assert enc.decode(enc.encode(enc.decode(data))) == enc.decode(data)


class Drifting(Synthetic):
    """The eval inputs are harder than the tuning inputs: a budget met on tune is broken."""

    tune_inputs = ["40", "41", "42"]
    eval_inputs = ["1", "2", "3"]


def test_a_pick_over_budget_on_eval_is_flagged_and_the_exact_program_written(
        tmp_path: Path) -> None:
    out = tmp_path / "out"
    printed = tmp_path / "report.txt"
    with printed.open("w") as f:
        tune(Drifting(), TuneOptions([0.01], out, max_evals=30, mode="static",
                                     confirm_repeats=2),
             reporter=lambda db, run_id: report(db, db.run(run_id), out,
                                                Console(file=f, width=200)))
    text = printed.read_text()
    assert "over budget" in text and "warning: the 1.0% pick loses" in text
    assert "the exact program is written for it" in text
    written = json.loads((out / "1pct.json").read_text())
    assert written["knobs"] == {"a": {"value": 1}, "b": {"value": 1}, "c": {"value": 0}}
    assert written["provenance"]["fallback"].endswith(": exact")
    assert written["speedup"] == {"tune": 1.0, "eval": 1.0}


def test_a_budget_whose_pick_fails_the_held_out_inputs_ships_the_tighter_pick() -> None:
    from types import SimpleNamespace

    from approxcc.tune.picks import Pick, Spread
    from approxcc.tune.report import Row, shipped

    def row(budget: float, value: int, held_out_loss: float) -> Row:
        pick = Pick(budget, {"k": {"value": value}}, str(value), None, None, None)
        return Row(pick, Spread.of([1.0 + value]), Spread.of([0.0]), Spread.of([1.0 + value]),
                   Spread.of([held_out_loss]))

    run = SimpleNamespace(options={"held_out": "check"}, budgets=[0.03, 0.06, 0.09])
    three, six, nine = row(0.03, 1, 0.01), row(0.06, 2, 0.08), row(0.09, 3, 0.05)
    ships = shipped(run, [nine, six, three])
    assert [(s.budget, s.row.pick.config["k"]["value"], s.fallback) for s in ships] == [
        (0.03, 1, None), (0.06, 1, "the 6% pick lost 8.0% on check"), (0.09, 3, None)]
    # with no tighter pick that holds it, the exact program ships for that budget; a pick
    # that missed its own budget still ships for a looser one it holds
    assert [(s.budget, s.row and s.row.budget, s.fallback)
            for s in shipped(run, [row(0.03, 1, 0.05), row(0.06, 2, 0.07), nine])] == [
        (0.03, None, "the 3% pick lost 5.0% on check: exact"),
        (0.06, 0.03, "the 6% pick lost 7.0% on check"), (0.09, 0.09, None)]
    assert [(s.budget, s.row and s.row.budget) for s in shipped(
        run, [row(0.03, 1, 0.07), row(0.06, 2, 0.07), row(0.09, 3, 0.10)])] == [
        (0.03, None), (0.06, None), (0.09, 0.06)]


def test_a_pick_within_budget_on_check_by_luck_does_not_ship() -> None:
    """A pick whose check loss is within the budget but whose answers changed both ways
    there has a bound past it: the tighter pick ships, and the file and warning say why."""
    from types import SimpleNamespace

    from approxcc.tune.picks import Confirmed, Pick, Spread
    from approxcc.tune.report import Row, shipped

    def row(budget: float, value: int, check_bound: float, questions: int = 93) -> Row:
        check = Confirmed({"k": {"value": value}}, str(value), Spread.of([2.0]),
                          Spread.of([0.01]), check_bound, 2, questions)
        pick = Pick(budget, {"k": {"value": value}}, str(value), None, check, None)
        return Row(pick, Spread.of([2.0]), Spread.of([0.0]), Spread.of([2.0]),
                   Spread.of([0.01]))

    run = SimpleNamespace(options={"held_out": "check"}, budgets=[0.03, 0.06])
    three, six = row(0.03, 1, 0.025), row(0.06, 2, 0.071)
    assert three.ships and not six.ships and not six.over_budget
    assert [(s.budget, s.row.pick.config["k"]["value"], s.fallback)
            for s in shipped(run, [six, three])] == [
        (0.03, 1, None), (0.06, 1, "the 6% pick's loss bound on check is 7.1%")]
    # from a handful of held-out inputs the bound is as wide as their spread: not used
    few = row(0.06, 2, 0.071, questions=4)
    assert few.ships and few.held_out_bound is None


def test_the_pick_keeps_a_margin_from_the_spread_over_inputs() -> None:
    from approxcc.tune.db import Confirmation, Evaluation
    from approxcc.tune.picks import choose

    def point(h: str, time: float, loss: float) -> Evaluation:
        return Evaluation(0, {"k": {"value": h}}, h, "tune", time, loss, "ok", "", 0.02,
                          "search", "static")

    def repeats(h: str, time: float, per_input: tuple[float, ...]) -> list[Confirmation]:
        loss = sum(per_input) / len(per_input)
        return [Confirmation({"k": {"value": h}}, h, "tune", r, 1.0, time * (1 + r / 100),
                             loss, per_input, "ok", "") for r in range(5)]

    # "fast" averages 1.5% but one input loses 5%: its bound breaks 2%; "steady" holds it
    confirmed = repeats("fast", 0.2, (0.0, 0.0, 0.01, 0.05)) + \
        repeats("steady", 0.4, (0.01, 0.01, 0.01, 0.01))
    points = [point("fast", 0.2, 0.015), point("steady", 0.4, 0.01)]
    (pick,) = choose([0.02], points, confirmed, [])
    assert pick.hash == "steady" and pick.tune is not None
    assert pick.tune.bound <= 0.02 and pick.tune.speedup.q1 < pick.tune.speedup.median


def test_inputs_done_better_offset_inputs_done_worse_in_the_bound() -> None:
    from approxcc.tune.db import Confirmation, Evaluation
    from approxcc.tune.picks import choose

    # one question an input: the fast configuration loses 9 answers of 120 and gains 20
    # (loss 0, bound -1.8%); with the gains clipped to 0 its bound would be 11.5%
    churn = (1.0,) * 9 + (-1.0,) * 20 + (0.0,) * 91
    for per_input, picked in ((churn, "fast"), (tuple(max(0.0, x) for x in churn), "slow")):
        points = [Evaluation(0, {"k": {"value": h}}, h, "tune", t, 0.0, "ok", "", 0.03,
                             "search", "static") for h, t in (("fast", 0.2), ("slow", 1.0))]
        confirmed = [Confirmation({"k": {"value": h}}, h, "tune", 0, 1.0, t, 0.0, losses, "ok",
                                  "") for h, t, losses in (("fast", 0.2, per_input),
                                                           ("slow", 1.0, (0.0,) * 120))]
        (pick,) = choose([0.03], points, confirmed, [])
        assert pick.hash == picked


def test_a_candidate_within_its_margin_is_confirmed_off_the_front() -> None:
    """The front weighs single-run losses: a point whose loss is 0 on average but whose
    inputs lose and gain by turns dominates a slightly slower one that never loses. The
    margin rules the first out; the second must still be a candidate."""
    from approxcc.tune.db import Evaluation
    from approxcc.tune.picks import candidates

    def point(h: str, time: float, per_input: tuple[float, ...]) -> Evaluation:
        return Evaluation(0, {"k": {"value": h}}, h, "tune", time, 0.0, "ok", "", 0.09,
                          "search", "static", input_losses=per_input)

    flips = point("flips", 0.5, (1.0,) * 3 + (0.0,) * 27)     # 3 of 30 lost, as many won
    steady = point("steady", 0.51, (0.0,) * 30)
    assert candidates([flips, steady], [0.09], 1) == [flips.config, steady.config]


def test_time_to_95_percent_of_the_hypervolume() -> None:
    points = [(1.0, 0.9, 0.0), (2.0, 0.5, 0.0), (30.0, 0.45, 0.0)]
    when, final = time_to_fraction(points, (1.0, 1.0))
    assert final == pytest.approx(0.55) and when == 30.0      # 0.5 / 0.55 < 95%
    when, _ = time_to_fraction(points, (1.0, 1.0), 0.9)
    assert when == 2.0


def test_hypervolume() -> None:
    assert hypervolume([(0.5, 0.0)], (1.0, 1.0)) == pytest.approx(0.5)
    assert hypervolume([(0.5, 0.5), (0.25, 0.75), (0.9, 0.9)], (1.0, 1.0)) == \
        pytest.approx(0.75 * 0.25 + 0.5 * 0.25)


@pytest.mark.parametrize("toml, message", [
    ('[program]\nname = "x"\nsources = ["nope.c"]\n[run]\nargs = ["{input}"]\n'
     'tune = ["*.txt"]\neval = ["*.txt"]\n', "approx.toml:3:1: error: no such file: 'nope.c'"),
    ('[program]\nname = "x"\nsources = []\ncolour = "red"\n',
     "approx.toml:4:1: error: unknown key 'colour' in [program]"),
    ('[program\n', "approx.toml:1:9: error: malformed approx.toml"),
])
def test_user_mistakes_are_diagnostics(tmp_path: Path, toml: str, message: str) -> None:
    (tmp_path / "approx.toml").write_text(toml)
    proc = approxcc("tune", str(tmp_path), "--qos-budget", "3%", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert message in proc.stderr, proc.stderr


def test_bad_budget_is_a_diagnostic() -> None:
    proc = approxcc("tune", str(EXAMPLE), "--qos-budget", "lots", check=False)
    assert proc.returncode == 1 and "error: --qos-budget: 'lots'" in proc.stderr


def test_screening_keeps_a_dynamic_knobs_values_for_the_dynamic_search() -> None:
    from approxcc.tune.db import Evaluation
    from approxcc.tune.screening import pruned_space

    space = KnobSpace((Knob("skip", "task_skipping", (0, 1), 0, dynamic=True, thresholds=1),
                       Knob("loop", "loop_perforate", (1, 2, 4), 1)))

    def alone(name: str, value: int, loss: float) -> Evaluation:
        config = space.exact_config() | {name: {"value": value}}
        return Evaluation(0, config, "", "tune", 1.0, loss, "ok", "", None, "screening",
                          "static")

    screened = [alone("skip", 1, 0.5), alone("loop", 4, 0.5)]
    static = pruned_space(space, screened, 0.03, "static")
    dynamic = pruned_space(space, screened, 0.03, "dynamic")
    # skipping everywhere breaks 3%, but a tree may skip only where the state allows it
    assert static["skip"].values == (0,) and dynamic["skip"].values == (0, 1)
    assert static["loop"].values == dynamic["loop"].values == (1, 2)


class Hiccup(Synthetic):
    """Runs of fixed times, but the first run of the configuration is slowed 10× (another
    job took the core): what a single short pair would read as a slowdown."""

    def __init__(self, exact: float, config: float) -> None:
        super().__init__()
        self.times = {None: exact, "config": config}
        self.runs = {None: 0, "config": 0}

    def run(self, input: str, config_path: Path | None, workdir: Path,
            timeout: float) -> RunResult:
        side = None if config_path is None else "config"
        self.runs[side] += 1
        slow = 10 if side and self.runs[side] == 1 else 1
        return RunResult("1\n", self.times[side] * slow, 0.0, True)


@pytest.mark.parametrize("exact, config, runs", [(0.05, 0.01, (4, 7)), (0.5, 0.3, (1, 1))])
def test_a_confirmation_round_reruns_short_runs_and_keeps_their_median(
        tmp_path: Path, exact: float, config: float, runs: tuple[int, int]) -> None:
    app = Hiccup(exact, config)
    cfg = tmp_path / "c.json"
    cfg.write_text('{"knobs": {}}')
    e, (c,) = app.run_round("1", [cfg], tmp_path, 10.0)
    assert (app.runs[None], app.runs["config"]) == runs
    assert e.time == exact
    assert c.time == (config if runs[1] > 1 else config * 10)


class Crashing(Synthetic):
    """The synthetic system whose configuration `c` = 2 crashes; exact runs are counted."""

    def __init__(self) -> None:
        super().__init__()
        self.exact_runs = 0

    def run(self, input: str, config_path: Path | None, workdir: Path,
            timeout: float) -> RunResult:
        if config_path is None:
            self.exact_runs += 1
        elif '"c": {"value": 2}' in config_path.read_text():
            raise RunFailed("crashed")
        return super().run(input, config_path, workdir, timeout)


def test_a_confirmation_round_times_the_exact_program_once_for_all_candidates(
        tmp_path: Path) -> None:
    """Three candidates, two inputs: two exact runs (not six), each candidate's speedup over
    them, and the one that crashes fails alone."""
    from approxcc.tune.measure import FAILED, OK, Measurer

    app = Crashing()
    golden = [app.run(i, None, tmp_path, 10.0).output for i in app.tune_inputs]
    app.exact_runs = 0
    configs = [{"a": {"value": 2}}, {"c": {"value": 2}}, {"a": {"value": 4}}]
    pairs = Measurer(app, tmp_path).round(configs, app.tune_inputs, golden)
    assert app.exact_runs == len(app.tune_inputs)
    assert [p.status for p in pairs] == [OK, FAILED, OK]
    assert pairs[1].reason == "crashed"
    assert pairs[0].exact_time == pairs[2].exact_time == 2.0
    assert (pairs[0].time, pairs[2].time) == (1.0, 0.5)


class EdgeSafe(Synthetic):
    """One dynamic knob over items whose states are 0..99: skipping an item is safe only when
    its state is below 5, and those items are the costly ones (10 time units, others 1)."""

    def knob_space(self) -> KnobSpace:
        return KnobSpace((Knob("skip", "task_skipping", (0, 1), 0, dynamic=True, thresholds=1,
                               range=(0, 100)),))

    def run(self, input: str, config_path: Path | None, workdir: Path,
            timeout: float) -> RunResult:
        from approxcc.system.pipeline import decide

        knobs = json.loads(config_path.read_text())["knobs"] if config_path else {}
        entry = knobs.get("skip", {"value": 0})
        kept = [s for s in range(100) if not decide(entry, s)]
        wrong = sum(s >= 5 for s in range(100) if s not in kept)
        out = f"{100 - wrong * 10}\n"
        return RunResult(out, sum(10 if s < 5 else 1 for s in kept), 0.0, True)


def test_a_dynamic_search_starts_from_the_edges_of_each_state_range(tmp_path: Path) -> None:
    # the safe states are 5% of the range: 12 evaluations of thresholds drawn over the whole
    # range would seldom find them; a threshold seed at 5% of the range is the answer
    out = tmp_path / "t"
    tune(EdgeSafe(), TuneOptions([0.03], out, max_evals=12, mode="dynamic", confirm_repeats=0),
         reporter=lambda db, run_id: report(db, db.run(run_id), out, Console(quiet=True)))
    pick = json.loads((out / "3pct.json").read_text())
    assert pick["knobs"]["skip"] == {"thresholds": [5], "decisions": [1, 0]}


def test_a_search_starts_from_a_given_configuration(tmp_path: Path) -> None:
    # a static run's pick given to a dynamic run too short to find it by itself: the dynamic
    # pick is at least as fast (a dynamic space holds every static point)
    start = tmp_path / "static.json"
    start.write_text(json.dumps({"knobs": {"a": {"value": 6}, "c": {"value": 2}}}))

    def pick(out: str, starts: list[Path]) -> dict:
        tune(Synthetic(), TuneOptions([0.05], tmp_path / out, max_evals=3, mode="dynamic",
                                      screening=False, confirm_repeats=0, start_from=starts),
             reporter=lambda db, run_id: report(db, db.run(run_id), tmp_path / out,
                                                Console(quiet=True)))
        return json.loads((tmp_path / out / "5pct.json").read_text())

    alone, started = pick("alone", []), pick("started", [start])
    assert started["knobs"]["a"] == {"value": 6} and started["knobs"]["c"] == {"value": 2}
    assert started["speedup"]["tune"] >= 18 > alone["speedup"]["tune"]


def test_a_search_climbs_one_knob_at_a_time_from_the_best_safe_configuration(
        tmp_path: Path) -> None:
    # five measurements from an 8x start (a=4, c=1): each new best safe configuration's
    # neighbours go next (a=5, then a=6, then b=2 and c=2 on top) and the pick is 36x; with
    # the start's neighbours alone it is 20x (a=5, b=2), with OpenTuner's draws alone less
    start = tmp_path / "start.json"
    start.write_text(json.dumps({"knobs": {"a": {"value": 4}, "c": {"value": 1}}}))  # 8x
    out = tmp_path / "run"
    tune(Synthetic(), TuneOptions([0.05], out, max_evals=5, mode="static", screening=False,
                                  confirm_repeats=0, start_from=[start]),
         reporter=lambda db, run_id: report(db, db.run(run_id), out, Console(quiet=True)))
    pick = json.loads((out / "5pct.json").read_text())
    assert pick["knobs"] == {"a": {"value": 6}, "b": {"value": 2}, "c": {"value": 2}}
    assert pick["speedup"]["tune"] == pytest.approx(36)


def test_neighbours_go_fastest_first_and_skip_what_broke_the_budget_alone() -> None:
    from approxcc.tune.db import Evaluation
    from approxcc.tune.neighbours import neighbours

    space = KnobSpace((Knob("model", "func_substitute", (0, 1), 0),
                       Knob("loop", "loop_perforate", (1, 2, 4), 1),
                       Knob("skip", "task_skipping", (0, 1), 0)))

    def alone(name: str, value: int, time: float, loss: float) -> Evaluation:
        config = space.exact_config() | {name: {"value": value}}
        return Evaluation(0, config, "", "tune", time, loss, "ok", "", None, "screening",
                          "static")

    # the other model alone loses 40%; skipping alone is the fastest move within 3%
    screened = [alone("model", 1, 0.9, 0.4), alone("loop", 2, 0.8, 0.0),
                alone("skip", 1, 0.5, 0.01)]
    start = space.exact_config() | {"loop": {"value": 2}}
    moved = [{k: c[k]["value"] for k in c if c[k] != start[k]}
             for c in neighbours(space, start, screened, 0.03)]
    assert moved == [{"skip": 1}, {"loop": 4}]


def test_a_starting_configuration_is_confirmed_beside_the_candidates(tmp_path: Path) -> None:
    # the start is slower than the fastest point within the budget, the one candidate a
    # budget gets here: it is confirmed all the same, so the pick is measured against it
    start = tmp_path / "start.json"
    start.write_text(json.dumps({"knobs": {"a": {"value": 2}}}))
    confirmed: set[str] = set()
    tune(Synthetic(), TuneOptions([0.05], tmp_path / "run", max_evals=6, screening=False,
                                  confirm_repeats=1, confirm_candidates=0,
                                  start_from=[start]),
         reporter=lambda db, run_id: confirmed.update(
             r.hash for r in db.confirmations(run_id, "tune")))
    space = Synthetic().knob_space()
    assert config_hash(space.exact_config() | {"a": {"value": 2}}) in confirmed
    assert len(confirmed) >= 2     # and the search's own candidate


def test_a_bad_starting_configuration_is_a_diagnostic(tmp_path: Path) -> None:
    bad = tmp_path / "start.json"
    bad.write_text('{"knobs": {\n  "nope": {"value": 1}}}\n')
    proc = approxcc("tune", str(small_example(tmp_path)), "--qos-budget", "3%",
                    "--start-from", str(bad), check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"{bad}:2:3: error: unknown knob 'nope' (the program has: " in proc.stderr, \
        proc.stderr


@pytest.mark.parametrize("limit, seconds", [("90s", 90.0), ("2m", 120.0), (" 1h", 3600.0),
                                            ("45", 45.0), (30, 30.0), (2.5, 2.5)])
def test_a_time_limit_takes_a_duration(tmp_path: Path, limit: float | str,
                                       seconds: float) -> None:
    assert TuneOptions([0.01], tmp_path, time_limit=limit).time_limit == seconds


@pytest.mark.parametrize("limit, message", [
    ("soon", "time_limit: 'soon' is not a duration like 90s, 10m or 1h"),
    ("-5s", "time_limit: '-5s' must be a positive duration"),
    (None, "time_limit: None is not a duration like 90s, 10m or 1h"),
])
def test_a_bad_time_limit_is_a_clear_error(tmp_path: Path, limit: object,
                                           message: str) -> None:
    with pytest.raises(CompileError) as info:
        TuneOptions([0.01], tmp_path, time_limit=limit)   # type: ignore[arg-type]
    assert str(info.value) == message
    proc = approxcc("tune", str(EXAMPLE), "--qos-budget", "5%", "--time-limit", "soon",
                    check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "error: --time-limit: 'soon' is not a duration" in proc.stderr


def test_a_piped_report_prints_whole_rows(tmp_path: Path) -> None:
    """Rich cuts a table at 80 columns where stdout is not a terminal: the report's rows
    are whole there (each pick's knobs on its budget's line)."""
    out = tmp_path / "out"
    tune(Synthetic(), TuneOptions([0.01, 0.05], out, max_evals=16, mode="static",
                                  confirm_repeats=2), Console(quiet=True))
    done = run_approxcc(["report", out / "results.db", "--out", tmp_path / "again"],
                        env={"COLUMNS": None})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(map(len, lines)) > 80
    for name in ("1pct", "5pct"):
        pick = json.loads((tmp_path / "again" / f"{name}.json").read_text())
        knobs = " ".join(f"{k}={v['value']}" for k, v in pick["knobs"].items())
        budget = f"{pick['qos']['budget']:.1%}"
        assert any(line.split()[1:2] == [budget] and line.rstrip(" │|").endswith(knobs)
                   for line in lines if len(line.split()) > 1), (knobs, done.stdout)


class _Slow(Synthetic):
    """Synthetic, 50 ms a run: screening's ten configurations take about a second."""

    def run(self, input: str, config_path: Path | None, workdir: Path,
            timeout: float) -> RunResult:
        time.sleep(0.05)
        return super().run(input, config_path, workdir, timeout)


def test_a_time_limit_too_short_to_screen_every_knob_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a system whose evaluation takes a minute, tuned for minutes: the searches would start
    # from a few knobs' screening without a word (rag_kb, --time-limit 8m: 3 of 19)
    tune(_Slow(), TuneOptions([0.05], tmp_path, time_limit="1s", mode="static",
                              confirm_repeats=0), Console(quiet=True))
    err = capsys.readouterr().err
    assert re.search(r"warning: screening measured [1-9] of 10 single-knob configurations in "
                     r"half the time limit \(0.5 s, 0.\d+ s each\): the searches start without the "
                     r"rest; --time-limit 1m or more screens every knob", err), err
