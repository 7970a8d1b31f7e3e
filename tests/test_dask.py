"""`approxcc tune` on a real Dask cluster: `dask scheduler` and `dask worker` processes started
from the CLI, one worker SIGKILLed mid-run, one joining late, the scheduler killed, --resume."""

from __future__ import annotations

import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import Synthetic, small_example

from approxcc.diagnostics import CompileError
from approxcc.tune import CProgram, TuneOptions, tune

DASK = str(Path(sys.executable).parent / "dask")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """Scheduler and worker processes; every one still running is SIGKILLed at the end."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.procs: list[subprocess.Popen] = []
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"

    def _start(self, *args: str) -> subprocess.Popen:
        proc = subprocess.Popen([DASK, *args], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, cwd=self.tmp)
        self.procs.append(proc)
        return proc

    def scheduler(self) -> subprocess.Popen:
        return self._start("scheduler", "--host", "127.0.0.1", "--port", str(self.port),
                           "--no-dashboard")

    def worker(self) -> tuple[subprocess.Popen, str]:
        """A worker without a nanny (killed, it stays dead); its address."""
        port = free_port()
        proc = self._start("worker", self.address, "--nthreads", "1", "--no-nanny",
                           "--no-dashboard", "--host", "127.0.0.1", "--worker-port", str(port),
                           "--local-directory", str(self.tmp / f"w{port}"))
        return proc, f"tcp://127.0.0.1:{port}"

    def wait_for_workers(self, n: int) -> None:
        from distributed import Client

        # a worker process imports distributed and approxcc: under a loaded `make test` one
        # took over 60 s to join (the wait ends as soon as they have)
        with Client(self.address, timeout=60) as client:
            client.wait_for_workers(n, timeout=240)

    def kill_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
            proc.wait()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    c = Cluster(tmp_path)
    try:
        yield c
    finally:
        c.kill_all()


def rows(db: Path, where: str = "1") -> list[tuple]:
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT id, config_hash, inputs, status, phase, worker, time_tune"
                                f" FROM evaluations WHERE {where} ORDER BY id").fetchall()
    except sqlite3.OperationalError:   # not created yet
        return []


def in_thread(fn: Callable[[], object]) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def target() -> None:
        try:
            fn()
        except BaseException as err:  # noqa: BLE001 (handed to the test thread)
            errors.append(err)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, errors


def wait_until(cond: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_worker_killed_late_worker_scheduler_lost_and_resume(cluster: Cluster,
                                                             tmp_path: Path) -> None:
    example = small_example(tmp_path, evals=2, shorter=2)
    out = tmp_path / "out"
    db = out / "results.db"

    def options(max_evals: int) -> TuneOptions:
        return TuneOptions([0.02], out, time_limit=120, mode="static", max_evals=max_evals,
                           cluster=cluster.address, resume=True, screening=False,
                           confirm_repeats=1, confirm_candidates=1)

    cluster.scheduler()
    first, first_address = cluster.worker()
    second, second_address = cluster.worker()
    cluster.wait_for_workers(2)

    # 1. a worker SIGKILLed mid-run, another joining late: the search goes on
    thread, errors = in_thread(lambda: tune(CProgram.load(str(example)), options(10)))
    wait_until(lambda: len(rows(db, f"phase = 'search' AND worker = '{first_address}'")) >= 2,
               60)
    first.send_signal(signal.SIGKILL)
    # the other one too: the run cannot end before the late worker has started, however
    # slow its start on a loaded machine (the tuner waits for a worker, NO_WORKERS_WAIT)
    second.send_signal(signal.SIGKILL)
    # what the two finished before they died may still be on its way into the DB; with no
    # worker left nothing else can arrive, so the count settles before the late one starts
    settled = -1
    while settled != len(rows(db)):
        settled = len(rows(db))
        time.sleep(1.0)
    killed_at = len(rows(db))
    before = rows(db)
    late, late_address = cluster.worker()
    thread.join(120)
    assert not thread.is_alive() and not errors, errors
    after = rows(db)
    assert after[:len(before)] == before                        # nothing lost or rewritten
    assert len(after) > killed_at
    assert all(r[3] == "ok" for r in after), [r for r in after if r[3] != "ok"]
    assert not {first_address, second_address} & {r[5] for r in after[len(before):]}
    assert late_address in {r[5] for r in after}                # the late worker measured
    searched = len(rows(db, "phase = 'search'"))
    print(f"\nkilled both workers after {killed_at} evaluations; {len(after)} recorded in all "
          f"({searched} search)")

    # 2. the scheduler goes away: a clear error, what finished stays
    thread, errors = in_thread(lambda: tune(CProgram.load(str(example)), options(18)))
    wait_until(lambda: len(rows(db, "phase = 'search'")) >= searched + 2, 60)
    cluster.procs[0].send_signal(signal.SIGKILL)
    thread.join(90)
    assert not thread.is_alive()
    assert errors and isinstance(errors[0], CompileError), errors
    assert "lost the Dask scheduler" in errors[0].diagnostic.message
    assert "--resume" in errors[0].diagnostic.message
    interrupted = rows(db)
    assert interrupted[:len(after)] == after

    # 3. a new cluster: --resume continues the same run
    cluster.kill_all()
    cluster.procs.clear()
    cluster.scheduler()
    cluster.worker()
    cluster.wait_for_workers(1)
    tune(CProgram.load(str(example)), options(18))
    resumed = rows(db)
    assert resumed[:len(interrupted)] == interrupted
    assert len(resumed) > len(interrupted)
    assert len({(r[1], r[2]) for r in resumed}) == len(resumed)   # none ran twice
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
        assert conn.execute("SELECT COUNT(*) FROM confirmations").fetchone()[0] > 0
    print(f"scheduler lost after {len(interrupted)}; resumed to {len(resumed)}")


def test_a_result_lost_with_its_worker_before_it_is_read_is_measured_again(
        cluster: Cluster, tmp_path: Path) -> None:
    from approxcc.tune.cluster import Dask
    from approxcc.tune.engine import Task
    from approxcc.tune.measure import Baseline

    cluster.scheduler()
    first, _ = cluster.worker()
    cluster.wait_for_workers(1)
    app = CProgram.load(str(small_example(tmp_path, evals=2, shorter=2)))
    app.build(tmp_path / "build")
    engine = Dask(app, address=cluster.address)
    try:
        slot = engine.submit(Task("baseline", "tune"))
        wait_until(lambda: bool(engine.done([slot], 0.1)), 60)
        # finished, not yet read: the worker holding the result dies, and with no other
        # worker the result stays lost until one joins
        first.send_signal(signal.SIGKILL)
        wait_until(lambda: not engine.done([slot], 0.1), 60)
        _, second_address = cluster.worker()
        outcome = engine.outcome(slot)
    finally:
        engine.close()
    assert outcome.worker == second_address
    assert isinstance(outcome.result, Baseline), outcome.result   # not a failed measurement
    assert len(outcome.result.outputs) == len(app.tune_inputs)


def test_parallel_starts_a_local_cluster_and_only_the_tuner_writes(tmp_path: Path) -> None:
    example = small_example(tmp_path, evals=2, shorter=4)
    out = tmp_path / "out"
    tune(CProgram.load(str(example)),
         TuneOptions([0.02], out, mode="static", max_evals=6, parallel=2, screening=False,
                     confirm_repeats=1, confirm_candidates=1))
    measured = rows(out / "results.db", "phase = 'search'")
    assert len({r[5] for r in measured}) == 2               # both worker processes measured
    assert all(r[5].startswith("tcp://127.0.0.1:") for r in measured)
    assert len({(r[1], r[2]) for r in rows(out / "results.db")}) == len(rows(out / "results.db"))


def test_unreachable_scheduler_is_a_clear_error(tmp_path: Path) -> None:
    opts = TuneOptions([0.02], tmp_path / "out", cluster=f"tcp://127.0.0.1:{free_port()}")
    with pytest.raises(CompileError, match="cannot reach a Dask scheduler"):
        tune(Synthetic(), opts)
