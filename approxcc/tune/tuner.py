"""`approxcc tune`: build once, measure the exact program, screen, search per budget,
validate the front on held-out inputs, write the configurations and the report.

Every evaluation goes through `Tuner.evaluate_many`: answered from the results DB when the
run already measured that configuration on those inputs, else measured (up to `parallel`
at once, in threads each running its own subprocesses) and committed as it finishes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table

from approxcc.diagnostics import CompileError
from approxcc.tune import screening
from approxcc.tune.application import Application, kill_running
from approxcc.tune.db import Evaluation, ResultsDB
from approxcc.tune.measure import MIN_TIMEOUT, Measurement, Measurer
from approxcc.tune.pareto import front
from approxcc.tune.search import Search
from approxcc.tune.space import KnobConfig, KnobSpace, canonical, config_hash

MAX_VALIDATED = 16          # front points re-measured on the eval inputs (besides the picks)
MAX_IDLE_ANSWERS = 200      # consecutive answers from the DB before a search is exhausted


@dataclass
class TuneOptions:
    budgets: list[float]
    out: Path
    time_limit: float = 600.0
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

    def __post_init__(self) -> None:
        # Evaluations run in their own folders: paths given relative to here must stay valid.
        self.out = Path(self.out).resolve()
        self.db = Path(self.db).resolve() if self.db else None

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
        self.measurer = Measurer(app, self.work, options.repeats)
        self.run_id = 0
        self.baseline_time = 0.0
        self.golden: dict[str, list[str]] = {}
        self.screened = 0          # screening configurations of this run
        self.live: Live | None = None

    # -- the whole run -----------------------------------------------------------------

    def run(self) -> int:
        """Tune; returns the run id in the results DB."""
        self.app.build(self.work / "build")
        space = self.app.knob_space()
        if not space.knobs:
            raise CompileError(f"{self.app.describe()}: no approx knobs to tune (annotate a "
                               f"loop, statement or function with #pragma approx)")
        self.start_run(space)
        self.progress.phase = "exact run"
        base = self.measurer.baseline(self.app.tune_inputs)
        self.measurer.timeout = self.opts.timeout or max(MIN_TIMEOUT, 10 * max(base.walls))
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
                           budget=None, phase="baseline", mode="static", seed=self.opts.seed)
        with self.live_view():
            self.progress.deadline = time.monotonic() + self.opts.time_limit
            if self.opts.screening:
                self.progress.phase = "screening"
                configs = screening.screening_configs(space)
                if self.opts.max_evals is not None:
                    configs = configs[:self.opts.max_evals // 2]
                self.screened = len(configs)
                self.evaluate_many(configs, "tune", phase="screening", mode="static",
                                   budget=None, deadline=self.progress.deadline)
            self.search_all(space)
            self.progress.phase = "validation"
            self.validate()
        return self.run_id

    def start_run(self, space: KnobSpace) -> None:
        previous = self.db.latest_run(self.app.name) if self.opts.resume else None
        if previous is not None:
            if KnobSpace.from_json(previous.space) != space:
                raise CompileError(f"the knobs of '{self.app.name}' changed since run "
                                   f"{previous.id} in {self.db.path}: start a new run "
                                   f"without --resume")
            self.run_id = previous.id
            return
        options = {k: str(v) if isinstance(v, Path) else v for k, v in asdict(self.opts).items()}
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
        database = self.work / "opentuner.db"
        database.unlink(missing_ok=True)   # search state is rebuilt; results live in our DB
        limit = None   # new measurements per search, fixed up front (so --resume replays)
        if self.opts.max_evals is not None:
            limit = max(0, self.opts.max_evals - self.screened) // len(slots)
        for n, (budget, mode) in enumerate(slots):
            left = len(slots) - n
            now = time.monotonic()
            deadline = now + max(0.0, self.progress.deadline - now) / left
            self.progress.phase = f"search {budget:.2%} {mode}"
            screened = self.db.evaluations(self.run_id, "tune")
            sub = screening.pruned_space(space, screened, budget, mode) \
                if self.opts.screening else space
            seeds = [self.best_within(budget)] + (screening.seeds(space, screened, budget)
                                                  if self.opts.screening else [])
            search = Search(sub, mode, budget, seed=self.opts.seed + n, database=database,
                            parallelism=self.opts.parallel,
                            seeds=[s for s in seeds if s is not None],
                            label=f"{self.app.name}-{budget}-{mode}-{n}")
            try:
                self.drive(search, budget, mode, deadline, limit)
            finally:
                search.close()

    def best_within(self, budget: float) -> KnobConfig | None:
        ok = [e for e in self.db.evaluations(self.run_id, "tune")
              if e.ok and e.loss is not None and e.loss <= budget]
        return min(ok, key=lambda e: (e.time, e.id)).config if ok else None

    def drive(self, search: Search, budget: float, mode: str, deadline: float,
              limit: int | None) -> None:
        """Ask OpenTuner, measure, tell, until the search's time or its `limit` of new
        measurements (counting those a killed run of it already recorded) runs out.
        Configurations the run already measured are answered from the DB, for free."""
        pending: dict[Future[Measurement], tuple[Any, KnobConfig]] = {}
        measured = sum(e.phase == "search" and e.budget == budget and e.mode == mode
                       for e in self.db.evaluations(self.run_id, "tune"))
        idle, empty_asks = 0, 0
        with _pool(self.opts.parallel) as pool:
            while True:
                issuing = time.monotonic() < deadline and idle < MAX_IDLE_ANSWERS and \
                    (limit is None or measured + len(pending) < limit)
                while issuing and len(pending) < self.opts.parallel:
                    got = search.ask()
                    if got is None:
                        empty_asks += 1
                        break
                    empty_asks = 0
                    handle, config = got
                    known = self.db.lookup(self.run_id, config, "tune")
                    if known is None:
                        idle = 0
                        pending[pool.submit(self.measure, config, "tune")] = (handle, config)
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
                done, _ = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
                for fut in [f for f in pending if f in done]:   # in the order asked
                    handle, config = pending.pop(fut)
                    e = self.store(config, "tune", fut.result(), budget=budget,
                                   phase="search", mode=mode)
                    search.tell(handle, e.time if e.ok else None, e.loss if e.ok else None)
                    measured += 1
                self.refresh()

    # -- evaluations ---------------------------------------------------------------------

    def measure(self, config: KnobConfig, inputs: str) -> Measurement:
        paths = self.app.tune_inputs if inputs == "tune" else self.app.eval_inputs
        return self.measurer.measure(config, paths, self.golden[inputs])

    def store(self, config: KnobConfig, inputs: str, m: Measurement, *, budget: float | None,
              phase: str, mode: str) -> Evaluation:
        e = self.db.record(self.run_id, config, inputs, m, budget=budget, phase=phase,
                           mode=mode, seed=self.opts.seed)
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
        with _pool(self.opts.parallel) as pool:
            queue = iter(todo)
            pending: dict[Future[Measurement], KnobConfig] = {}
            while True:
                while len(pending) < self.opts.parallel and \
                        (deadline is None or time.monotonic() < deadline):
                    c = next(queue, None)
                    if c is None:
                        break
                    pending[pool.submit(self.measure, c, inputs)] = c
                if not pending:
                    break
                done, _ = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
                for fut in [f for f in pending if f in done]:
                    c = pending.pop(fut)
                    e = self.store(c, inputs, fut.result(), budget=budget, phase=phase,
                                   mode=mode)
                    results[e.hash] = e
                self.refresh()
        return [results[config_hash(c)] for c in map(canonical, configs)
                if config_hash(c) in results]

    # -- validation on the held-out inputs -------------------------------------------------

    def validate(self) -> None:
        """Exact run on the eval inputs, then the picks and the front re-measured there."""
        base = self.measurer.baseline(self.app.eval_inputs)
        stored = self.db.golden(self.run_id, "eval", self.app.eval_inputs)
        if stored is None:
            self.db.set_golden(self.run_id, "eval", self.app.eval_inputs, base.outputs)
            self.db.set_baseline(self.run_id, "eval", base.time)
        self.golden["eval"] = base.outputs
        points = [e for e in self.db.evaluations(self.run_id, "tune") if e.ok]
        picks = [c for c in (self.best_within(b) for b in self.opts.budgets) if c is not None]
        pareto = front(points, key=lambda e: (e.time, e.loss))
        if len(pareto) > MAX_VALIDATED:
            step = (len(pareto) - 1) / (MAX_VALIDATED - 1)
            pareto = [pareto[round(i * step)] for i in range(MAX_VALIDATED)]
        configs = picks + [e.config for e in pareto]
        self.evaluate_many(configs, "eval", phase="validation", mode="-", budget=None,
                           deadline=None)

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


@contextmanager
def _pool(workers: int) -> Iterator[ThreadPoolExecutor]:
    """Threads for evaluations; on Ctrl-C (or any error) the runs in flight are killed
    instead of waited for, and nothing more is recorded."""
    pool = ThreadPoolExecutor(workers)
    try:
        yield pool
    except BaseException:
        kill_running()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


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
