"""`approxcc tune`: build once, measure the exact program, screen, search per budget (first
the neighbours of its best safe configuration: `neighbours`), confirm the candidates near
each budget with interleaved repeats, measure the picks and the front on held-out inputs,
write the configurations and the report.

Measurements run on an `Engine` (this process, or Dask workers: `approxcc.tune.engine`); an
evaluation is answered from the results DB when the run already measured that configuration
on those inputs, else measured (as many at once as the engine has worker threads) and
committed by this process as it finishes.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table

from approxcc.diagnostics import CompileError, warn
from approxcc.tune.application import Application
from approxcc.tune.db import Evaluation, ResultsDB
from approxcc.tune.engine import Engine, InProcess, Outcome, Task
from approxcc.tune.measure import MIN_TIMEOUT, Baseline, Measurement
from approxcc.tune.neighbours import Climb
from approxcc.tune.pareto import front
from approxcc.tune.picks import CANDIDATES, REPEATS, candidates, choose
from approxcc.tune.screening import pruned_space, screening_configs, seeds, threshold_seeds
from approxcc.tune.search import Search
from approxcc.tune.space import KnobConfig, KnobSpace, canonical, config_hash

MAX_VALIDATED = 8           # front points measured once on the eval inputs (for the plot)
MAX_IDLE_ANSWERS = 60       # consecutive answers from the DB before a search is exhausted
EVAL_REPEATS = 3            # at most, per pick on the eval inputs (5× the inputs already)


def seconds(value: float | str, option: str = "time_limit") -> float:
    """A duration: a number of seconds, or text like "90", "90s", "10m", "1h"; a
    CompileError naming `option` otherwise."""
    units = {"s": 1.0, "m": 60.0, "h": 3600.0}
    if isinstance(value, int | float) and not isinstance(value, bool):
        result = float(value)
    elif isinstance(value, str):
        text = value.strip()
        scale = units.get(text[-1:], 1.0)
        try:
            result = float(text[:-1] if text[-1:] in units else text) * scale
        except ValueError:
            raise CompileError(f"{option}: '{value}' is not a duration like 90s, 10m or 1h") \
                from None
    else:
        raise CompileError(f"{option}: {value!r} is not a duration like 90s, 10m or 1h")
    if not 0 < result < float("inf"):
        raise CompileError(f"{option}: '{value}' must be a positive duration")
    return result


@dataclass
class TuneOptions:
    budgets: list[float]
    out: Path
    time_limit: float | str = 600.0    # seconds, or "90s", "10m", "1h": seconds once made
    parallel: int = 1
    seed: int = 0
    db: Path | None = None
    resume: bool = False
    mode: str = "both"
    timeout: float | None = None
    repeats: int = 1
    max_evals: int | None = None
    screening: bool = True
    metric: str = ""
    cluster: str | None = None          # tcp://HOST:PORT of a running `dask scheduler`
    confirm_repeats: int = REPEATS     # 0: pick from the single runs of the search
    confirm_candidates: int = CANDIDATES
    # configuration files measured before the searches, which then start from the fastest
    # within their budget (e.g. a static run's picks: a dynamic space holds them)
    start_from: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.time_limit = seconds(self.time_limit)
        # Evaluations run in their own folders: paths given relative to here must stay valid.
        self.out = Path(self.out).resolve()
        self.db = Path(self.db).resolve() if self.db else None
        self.start_from = [Path(p).resolve() for p in self.start_from]

    @property
    def db_path(self) -> Path:
        return self.db or self.out / "results.db"


@dataclass
class Progress:
    """What the live view shows."""

    phase: str = "build"
    new: int = 0
    cached: int = 0
    failed: int = 0
    deadline: float = 0.0
    best: dict[float, float] = field(default_factory=dict)   # budget → best tune speedup


class Tuner:
    def __init__(self, app: Application, options: TuneOptions, console: Console | None = None):
        self.app = app
        self.opts = options
        self.console = console or Console(stderr=True)
        self.work = options.out / "work"
        self.db = ResultsDB(options.db_path)
        self.progress = Progress(best={b: 1.0 for b in options.budgets})
        self.engine: Engine | None = None
        self.timeout = 60.0
        self.clock_start = time.monotonic()
        self.clock_offset = 0.0     # tuning seconds of the sessions before this one (--resume)
        self.run_id = 0
        self.baseline_time = 0.0
        self.golden: dict[str, list[str]] = {}
        self.screened = 0          # screening configurations of this run
        self.starts: list[KnobConfig] = []   # the --start-from configurations
        self.live: Live | None = None

    # -- the whole run -----------------------------------------------------------------

    def run(self) -> int:
        """Tune; returns the run id in the results DB."""
        self.app.build(self.work / "build")
        space = self.app.knob_space()
        if not space.knobs:
            raise CompileError(f"{self.app.describe()}: no approx knobs to tune (annotate a "
                               f"loop, statement or function with #pragma approx)")
        self.starts = [space.exact_config() | space.checked(p) for p in self.opts.start_from]
        self.start_run(space)
        self.engine = self.start_engine()
        try:
            self.tune_all(space)
        except BaseException:
            self.engine.abort()
            raise
        finally:
            self.engine.close()
        return self.run_id

    def start_engine(self) -> Engine:
        """In this process for one evaluation at a time, else Dask."""
        if self.opts.cluster or self.opts.parallel > 1:
            from approxcc.tune.cluster import Dask

            return Dask(self.app, address=self.opts.cluster, workers=self.opts.parallel)
        return InProcess(self.app, self.work)

    def tune_all(self, space: KnobSpace) -> None:
        self.progress.phase = "exact run"
        base = self.baseline("tune")
        self.timeout = self.opts.timeout or max(MIN_TIMEOUT, 10 * max(base.walls))
        self.clock_offset = self.db.elapsed(self.run_id)
        self.clock_start = time.monotonic()
        stored = self.db.golden(self.run_id, "tune", self.app.tune_inputs)
        if stored is not None and stored != base.outputs:
            raise CompileError("the exact program's outputs changed since this run started: "
                               "it is not deterministic, or its sources changed; start a new "
                               "run without --resume")
        if stored is None:
            self.db.set_golden(self.run_id, "tune", self.app.tune_inputs, base.outputs)
            self.db.set_baseline(self.run_id, "tune", base.time, base.noise, base.roi)
        self.baseline_time = self.db.run(self.run_id).baseline_tune or base.time
        self.golden["tune"] = base.outputs
        exact = space.exact_config()
        if self.db.lookup(self.run_id, exact, "tune") is None:
            self.db.record(self.run_id, exact, "tune", Measurement("ok", base.time, 0.0),
                           budget=None, phase="baseline", mode="static", seed=self.opts.seed,
                           elapsed=self.clock())
        with self.live_view():
            # a resumed run goes on with what its earlier sessions left of the limit
            left = max(0.0, self.opts.time_limit - self.clock_offset)
            self.progress.deadline = time.monotonic() + left
            if self.opts.screening:
                self.progress.phase = "screening"
                configs = screening_configs(space)
                if self.opts.max_evals is not None:
                    configs = configs[:self.opts.max_evals // 2]
                self.screened = len(configs)
                # at most half the time (as --max-evals gives it at most half the
                # evaluations): the searches, which combine the knobs, get the rest
                started, before = time.monotonic(), self.progress.cached
                done = self.evaluate_many(configs, "tune", phase="screening",
                                          mode="static", budget=None,
                                          deadline=started + max(
                                              0.0, left - self.opts.time_limit / 2))
                self.screening_cut(len(done), len(configs), len(done) - (
                    self.progress.cached - before), time.monotonic() - started)
            if self.starts:
                self.progress.phase = "starting points"
                self.evaluate_many(self.starts, "tune", phase="screening", mode="static",
                                   budget=None, deadline=None)
            self.search_all(space)
            if self.opts.confirm_repeats > 0:
                self.confirm()
            self.progress.phase = "validation"
            self.validate()

    def screening_cut(self, done: int, wanted: int, measured: int, seconds: float) -> None:
        """Says so where the time limit's half cut screening short: the searches then start
        without the knobs it did not reach (a system whose evaluation takes a minute screens
        a few knobs in a limit of minutes, and the picks come from those alone)."""
        if done >= wanted or not measured or self.opts.max_evals is not None:
            return
        each = seconds / measured
        need = 2 * each * (wanted - done + measured)
        warn(f"screening measured {done} of {wanted} single-knob configurations in half the "
             f"time limit ({self.opts.time_limit / 2:.3g} s, {each:.2g} s each): the "
             f"searches start without the rest; --time-limit {math.ceil(need / 60)}m or more "
             "screens every knob")

    def clock(self) -> float:
        """Seconds of tuning so far, over every session of the run."""
        return self.clock_offset + time.monotonic() - self.clock_start

    def baseline(self, inputs: str) -> Baseline:
        assert self.engine is not None
        result = self.engine.run(Task("baseline", inputs, repeats=self.opts.repeats)).result
        assert isinstance(result, Baseline)
        return result

    def start_run(self, space: KnobSpace) -> None:
        previous = self.db.latest_run(self.app.name) if self.opts.resume else None
        if previous is not None:
            if KnobSpace.from_json(previous.space) != space:
                raise CompileError(f"the knobs of '{self.app.name}' changed since run "
                                   f"{previous.id} in {self.db.path}: start a new run "
                                   f"without --resume")
            self.run_id = previous.id
            return
        options = json.loads(json.dumps(asdict(self.opts), default=str))   # paths as text
        options["held_out"] = self.app.held_out
        if (reference := self.app.reference()) is not None:
            options["reference"] = reference      # what the exact run's time is the faster of
        self.run_id = self.db.new_run(self.app.name, self.app.describe(), self.opts.seed,
                                      self.opts.mode, self.opts.budgets, options,
                                      space.to_json())

    # -- search --------------------------------------------------------------------------

    def modes(self, space: KnobSpace) -> list[str]:
        if self.opts.mode == "both":
            return ["static", "dynamic"] if space.has_dynamic() else ["static"]
        return [self.opts.mode]

    def search_all(self, space: KnobSpace) -> None:
        slots = [(b, m) for b in self.opts.budgets for m in self.modes(space)]
        limit = None   # new measurements per search, fixed up front (so --resume replays)
        if self.opts.max_evals is not None:
            limit = max(0, self.opts.max_evals - self.screened) // len(slots)
        for n, (budget, mode) in enumerate(slots):
            left = len(slots) - n
            now = time.monotonic()
            deadline = now + max(0.0, self.progress.deadline - now) / left
            self.progress.phase = f"search {budget:.2%} {mode}"
            screened = self.db.evaluations(self.run_id, "tune")
            sub = pruned_space(space, screened, budget, mode) if self.opts.screening else space
            climb = Climb(space, screened, budget)
            starts = [*climb.starts(), self.best_within(budget)]
            starts += seeds(space, screened, budget) if self.opts.screening else []
            starts += threshold_seeds(space) if mode == "dynamic" else []
            search = Search(sub, mode, budget, seed=self.opts.seed + n,
                            parallelism=self.capacity(),
                            seeds=[s for s in starts if s is not None],
                            label=f"{self.app.name}-{budget}-{mode}-{n}")
            try:
                self.drive(search, budget, mode, deadline, limit, climb)
            finally:
                search.close()

    def best_within(self, budget: float) -> KnobConfig | None:
        ok = [e for e in self.db.evaluations(self.run_id, "tune")
              if e.ok and e.loss is not None and e.loss <= budget]
        return min(ok, key=lambda e: (e.time, e.id)).config if ok else None

    def drive(self, search: Search, budget: float, mode: str, deadline: float,
              limit: int | None, climb: Climb) -> None:
        """Ask OpenTuner, measure, tell, until the search's time or its `limit` of new
        measurements (counting those a killed run of it already recorded) runs out; each
        new best safe configuration's neighbours next (`climb`). Configurations the run
        already measured are answered from the DB, for free."""
        assert self.engine is not None
        pending: dict[Any, tuple[list[Any], KnobConfig]] = {}   # future → handles, config
        inflight: dict[str, Any] = {}   # config hash → its future (OpenTuner may ask twice)
        measured = sum(e.phase == "search" and e.budget == budget and e.mode == mode
                       for e in self.db.evaluations(self.run_id, "tune"))
        idle, empty_asks = 0, 0
        while True:
            issuing = time.monotonic() < deadline and idle < MAX_IDLE_ANSWERS and \
                (limit is None or measured + len(pending) < limit)
            while issuing and len(pending) < self.capacity():
                got = search.ask()
                if got is None:
                    empty_asks += 1
                    break
                empty_asks = 0
                handle, config = got
                h = config_hash(config)
                if h in inflight:
                    pending[inflight[h]][0].append(handle)
                    continue
                known = self.db.lookup(self.run_id, config, "tune")
                if known is None:
                    idle = 0
                    fut = self.engine.submit(self.task(config, "tune"))
                    pending[fut], inflight[h] = ([handle], config), fut
                    issuing = limit is None or measured + len(pending) < limit
                    continue
                search.tell(handle, known.time, known.loss)
                idle += 1
                self.progress.cached += 1
                issuing = idle < MAX_IDLE_ANSWERS
            if not pending:
                if not issuing or empty_asks > 3:
                    return
                continue
            for fut in self.engine.done(pending, 0.25):   # in the order asked
                handles, config = pending.pop(fut)
                del inflight[config_hash(config)]
                e = self.store(config, "tune", self.engine.outcome(fut), budget=budget,
                               phase="search", mode=mode)
                for handle in handles:
                    search.tell(handle, e.time if e.ok else None, e.loss if e.ok else None)
                search.propose(climb.step(e))
                measured += 1
            self.refresh()

    # -- evaluations ---------------------------------------------------------------------

    def capacity(self) -> int:
        assert self.engine is not None
        return self.engine.capacity()

    def task(self, config: KnobConfig, inputs: str) -> Task:
        return Task("measure", inputs, config, tuple(self.golden[inputs]), self.timeout,
                    self.opts.repeats)

    def stream(self, tasks: Iterable[tuple[Any, Task]], finished: Callable[[Any, Outcome], None],
               deadline: float | None = None) -> None:
        """Run `tasks` (key, task), as many at once as the engine takes, until done or past
        `deadline`; `finished(key, outcome)` for each, in the order submitted."""
        assert self.engine is not None
        queue = iter(tasks)
        pending: dict[Any, Any] = {}
        while True:
            while len(pending) < self.capacity() and \
                    (deadline is None or time.monotonic() < deadline):
                item = next(queue, None)
                if item is None:
                    break
                pending[self.engine.submit(item[1])] = item[0]
            if not pending:
                return
            for fut in self.engine.done(pending, 0.25):
                finished(pending.pop(fut), self.engine.outcome(fut))
            self.refresh()

    def store(self, config: KnobConfig, inputs: str, outcome: Outcome, *,
              budget: float | None, phase: str, mode: str) -> Evaluation:
        m = outcome.result
        assert isinstance(m, Measurement)
        e = self.db.record(self.run_id, config, inputs, m, budget=budget, phase=phase,
                           mode=mode, seed=self.opts.seed, elapsed=self.clock(),
                           worker=outcome.worker)
        self.progress.new += 1
        self.progress.failed += not e.ok
        if e.ok and inputs == "tune" and e.time:
            for b in self.opts.budgets:
                if e.loss is not None and e.loss <= b:
                    self.progress.best[b] = max(self.progress.best[b],
                                                self.baseline_time / e.time)
        return e

    def evaluate_many(self, configs: list[KnobConfig], inputs: str, *, phase: str, mode: str,
                      budget: float | None, deadline: float | None) -> list[Evaluation]:
        """Each configuration once (read back when the run already has it), in parallel."""
        results: dict[str, Evaluation] = {}
        todo: list[KnobConfig] = []
        for c in map(canonical, configs):
            known = self.db.lookup(self.run_id, c, inputs)
            if known is not None:
                results[known.hash] = known
                self.progress.cached += 1
            elif all(config_hash(c) != config_hash(t) for t in todo):
                todo.append(c)

        def finished(c: KnobConfig, outcome: Outcome) -> None:
            e = self.store(c, inputs, outcome, budget=budget, phase=phase, mode=mode)
            results[e.hash] = e

        self.stream(((c, self.task(c, inputs)) for c in todo), finished, deadline)
        return [results[config_hash(c)] for c in map(canonical, configs)
                if config_hash(c) in results]

    # -- validation on the held-out inputs -------------------------------------------------

    def eval_golden(self) -> None:
        """The exact run on the eval inputs (once per run)."""
        if "eval" in self.golden:
            return
        base = self.baseline("eval")
        stored = self.db.golden(self.run_id, "eval", self.app.eval_inputs)
        if stored is None:
            self.db.set_golden(self.run_id, "eval", self.app.eval_inputs, base.outputs)
            self.db.set_baseline(self.run_id, "eval", base.time)
        self.golden["eval"] = base.outputs

    def confirm(self) -> None:
        """The candidates near each budget, repeated interleaved with the exact program on
        the tuning inputs; then the picks that come out of it, the same on the eval inputs."""
        self.progress.phase = "confirmation"
        points = self.db.evaluations(self.run_id, "tune")
        self.pairs(candidates(points, self.opts.budgets, self.opts.confirm_candidates,
                              {config_hash(c) for c in self.starts}),
                   "tune", self.opts.confirm_repeats)
        chosen = choose(self.opts.budgets, points,
                              self.db.confirmations(self.run_id, "tune"), [])
        self.eval_golden()
        configs = list({p.hash: p.config for p in chosen}.values())
        self.pairs(configs, "eval", min(EVAL_REPEATS, self.opts.confirm_repeats))

    def pairs(self, configs: list[KnobConfig], inputs: str, repeats: int) -> None:
        """`repeats` rounds of the configurations, each timing the exact program once per
        input beside all of them (drift over time hits every candidate alike), skipping the
        repeats the run already has."""
        have = {(c.hash, c.repeat) for c in self.db.confirmations(self.run_id, inputs)}
        todo = []
        for r in range(repeats):
            missing = tuple(c for c in configs if (config_hash(c), r) not in have)
            if missing:
                task = Task("round", inputs, None, tuple(self.golden[inputs]), self.timeout,
                            self.opts.repeats, missing)
                todo.append(((missing, r), task))

        def finished(key: tuple[tuple[KnobConfig, ...], int], outcome: Outcome) -> None:
            assert isinstance(outcome.result, list)
            for config, pair in zip(key[0], outcome.result, strict=True):
                self.db.record_pair(self.run_id, config, inputs, key[1], pair, outcome.worker)
                self.progress.new += 1

        self.stream(todo, finished)

    def validate(self) -> None:
        """The front measured once on the eval inputs (the plot's eval front; the picks
        have their confirmations there)."""
        self.eval_golden()
        points = [e for e in self.db.evaluations(self.run_id, "tune") if e.ok]
        pareto = front(points, key=lambda e: (e.time, e.loss))
        if len(pareto) > MAX_VALIDATED:
            step = (len(pareto) - 1) / (MAX_VALIDATED - 1)
            pareto = [pareto[round(i * step)] for i in range(MAX_VALIDATED)]
        self.evaluate_many([e.config for e in pareto], "eval", phase="validation", mode="-",
                           budget=None, deadline=None)

    # -- live view -------------------------------------------------------------------------

    def render(self) -> Group:
        p = self.progress
        left = max(0.0, p.deadline - time.monotonic()) if p.deadline else self.opts.time_limit
        head = Table.grid(padding=(0, 2))
        head.add_row(f"[bold]{self.app.name}[/bold]", f"phase: {p.phase}",
                     f"evaluations: {p.new} new, {p.cached} from the DB, {p.failed} failed",
                     f"time left: {left:.0f} s")
        best = Table(box=None, show_header=True)
        for b in self.opts.budgets:
            best.add_column(f"≤ {b:.1%}", justify="right")
        best.add_row(*(f"{p.best[b]:.2f}×" for b in self.opts.budgets))
        return Group(head, best)

    def refresh(self) -> None:
        if self.live is not None:
            self.live.update(self.render())

    @contextmanager
    def live_view(self) -> Iterator[None]:
        with Live(self.render(), console=self.console, refresh_per_second=4,
                  transient=False) as live:
            self.live = live
            try:
                yield
            finally:
                self.live = None


def tune(app: Application, options: TuneOptions, console: Console | None = None,
         reporter: Callable[[ResultsDB, int], None] | None = None) -> int:
    """Run the tuner; returns the run id. `reporter` (e.g. the final report) runs before the
    DB is closed."""
    tuner = Tuner(app, options, console)
    try:
        run_id = tuner.run()
        if reporter is not None:
            reporter(tuner.db, run_id)
        return run_id
    finally:
        tuner.db.close()
