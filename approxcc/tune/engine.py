"""Where evaluations run: the interface, and the tuner's own process.

`parallel=1` without a cluster measures in this process, one run at a time: no cluster to
start, no per-evaluation overhead, and the same seed gives the same search. Otherwise the
evaluations run on Dask workers (`approxcc.tune.cluster`, imported only then: it loads
`distributed`). Either way the tuner process alone
writes the results DB: an engine only measures and hands the result back.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from approxcc.tune.application import Application, kill_running
from approxcc.tune.measure import FAILED, Baseline, Measurement, Measurer, Pair
from approxcc.tune.space import KnobConfig

Result = Measurement | list[Pair] | Baseline


@dataclass(frozen=True)
class Task:
    """One measurement: `kind` measure (a configuration), round (one interleaved repeat of the
    exact program and the configurations `candidates`) or baseline (the exact program,
    repeated)."""

    kind: str
    inputs: str                         # "tune" | "eval"
    knobs: KnobConfig | None = None
    golden: tuple[str, ...] = ()
    timeout: float = 60.0
    repeats: int = 1
    candidates: tuple[KnobConfig, ...] = ()


@dataclass(frozen=True)
class Outcome:
    result: Result
    worker: str = ""                    # where it ran ("" in the tuner's process)
    error: str = ""                     # the exact program failed (a baseline task)
    seconds: float = 0.0                # wall time of the task where it ran


def execute(app: Application, task: Task, workdir: Path) -> Result:
    measurer = Measurer(app, workdir, task.repeats)
    measurer.timeout = task.timeout
    paths = app.tune_inputs if task.inputs == "tune" else app.eval_inputs
    if task.kind == "baseline":
        return measurer.baseline(paths)
    if task.kind == "round":
        return measurer.round(list(task.candidates), paths, list(task.golden))
    assert task.knobs is not None
    return measurer.measure(task.knobs, paths, list(task.golden))


def failed(task: Task, reason: str) -> Result:
    if task.kind == "round":
        return [Pair(FAILED, reason=reason) for _ in task.candidates]
    return Measurement(FAILED, reason=reason)


class Engine(ABC):
    """Submit tasks, learn which finished, read their outcomes."""

    @abstractmethod
    def capacity(self) -> int:
        """How many tasks to keep in flight."""

    @abstractmethod
    def submit(self, task: Task) -> Any:
        """A handle (hashable) for the task's outcome."""

    @abstractmethod
    def done(self, pending: Iterable[Any], timeout: float) -> list[Any]:
        """The handles of `pending` that finished (waiting up to `timeout` for the first),
        in the order given."""

    @abstractmethod
    def outcome(self, handle: Any) -> Outcome:
        """A finished task's outcome; raises CompileError when the cluster is gone."""

    def abort(self) -> None:
        """Ctrl-C or an error: end the runs in flight instead of waiting for them."""
        kill_running()

    def close(self) -> None:  # noqa: B027 (nothing to release in this process)
        """Release the cluster, if any."""

    def run(self, task: Task) -> Outcome:
        """One task, waited for."""
        handle = self.submit(task)
        while not self.done([handle], 0.25):
            pass
        return self.outcome(handle)


class InProcess(Engine):
    """The tuner's own process: `submit` measures right away."""

    def __init__(self, app: Application, workdir: Path):
        self.app = app
        self.workdir = workdir

    def capacity(self) -> int:
        return 1

    def submit(self, task: Task) -> Future[Outcome]:
        fut: Future[Outcome] = Future()
        fut.set_result(Outcome(execute(self.app, task, self.workdir)))
        return fut

    def done(self, pending: Iterable[Any], timeout: float) -> list[Any]:
        return list(pending)

    def outcome(self, handle: Any) -> Outcome:
        return handle.result()

    def close(self) -> None:
        """Nothing to release: the runs were this process's children."""

