"""Evaluations on Dask: a `LocalCluster` for `parallel=N`, or a running scheduler.

`parallel=N` starts a `distributed.LocalCluster` of N worker processes with one thread each;
`cluster="tcp://HOST:PORT"` uses the workers of a running `dask scheduler`, on any machines.

Workers get what runs read by value, not through a shared filesystem: the application
(pickled) and its `files()` (a C program's tunable binary and inputs) travel in one worker
plugin named by their content hash. The scheduler hands it to every worker, one that joins
later included, which unpacks it once into its local directory; `Application.relocate()`
points the runs there. Workers must run the approxcc version of the tuner (checked on
connecting).

Short evaluations travel in batches: one Dask task carries as many evaluations as take about
`BATCH_SECONDS` on a worker (from the wall time of those already done), so the round trip of
a task (client, scheduler and worker: ≈ 20 ms of CPU, docs/scaling.md) is paid once per
batch rather than once per evaluation. An evaluation of `BATCH_SECONDS` or more travels alone.

Faults: when a worker dies mid-batch the scheduler runs the batch on another one (up to
`distributed.scheduler.allowed-failures` times; after that its evaluations are recorded as
failed, "worker lost"); a batch whose result died with its worker before the tuner read it
is run again the same way. When the scheduler goes away, or no worker is left for
`NO_WORKERS_WAIT` seconds, the tuner stops with an error; what finished is in the DB and
`--resume` continues.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import os
import socket
import statistics
import tarfile
import time
from collections import deque
from collections.abc import Iterable
from concurrent.futures import CancelledError
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from distributed import Client, KilledWorker, LocalCluster, WorkerPlugin, get_worker, wait
from distributed.client import FuturesCancelledError
from distributed.comm import parse_address, parse_host_port

from approxcc import __version__
from approxcc.diagnostics import CompileError
from approxcc.tune.application import Application, kill_running
from approxcc.tune.engine import Engine, Outcome, Task, execute, failed

NO_WORKERS_WAIT = 60.0      # seconds a cluster may have no worker before the tuner gives up
CONNECT_TIMEOUT = 5.0       # seconds to reach a scheduler
CAPACITY_REFRESH = 1.0      # seconds between looks at the cluster's worker threads
# Tasks in flight per worker beyond its threads: a worker starts its next evaluation the
# moment one ends, instead of idling through the round trip to the tuner (result, DB commit,
# OpenTuner's tell and ask, submit).
QUEUED = 1
BATCH_SECONDS = 0.25        # a worker's seconds of evaluations per Dask task
MAX_BATCH = 16

_HERE: dict[str, tuple[Application, Path]] = {}   # on a worker: bundle digest → app, folder


def _pack(files: list[Path]) -> tuple[bytes, str]:
    """The files as a tar archive (names: their index and file name) and its content hash."""
    digest = hashlib.sha256()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for i, path in enumerate(files):
            data = path.read_bytes()
            digest.update(f"{i}:{path.name}:{len(data)}:{os.access(path, os.X_OK)}".encode())
            digest.update(data)
            info = tarfile.TarInfo(f"{i}-{path.name}")
            info.size = len(data)
            info.mode = path.stat().st_mode & 0o777
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue(), digest.hexdigest()[:16]


class Bundle(WorkerPlugin):
    """Worker plugin: the application and its files, unpacked once per worker."""

    idempotent = True   # registered again (a resumed run): nothing to do

    def __init__(self, app: Application, files: list[str], archive: bytes, digest: str):
        self.app = app
        self.files = files
        self.archive = archive
        self.digest = digest

    def setup(self, worker: Any) -> None:
        folder = Path(worker.local_directory) / f"approxcc-{self.digest}"
        if not folder.is_dir():
            partial = folder.with_name(folder.name + f".{os.getpid()}.partial")
            with tarfile.open(fileobj=io.BytesIO(self.archive)) as tar:
                tar.extractall(partial, filter="data")
            with contextlib.suppress(OSError):   # another process of this worker won
                partial.rename(folder)
        moved = {f: folder / f"{i}-{Path(f).name}" for i, f in enumerate(self.files)}
        _HERE[self.digest] = (self.app.relocate(moved), folder)

    def teardown(self, worker: Any) -> None:
        _HERE.pop(self.digest, None)


def _remote(digest: str, tasks: list[Task]) -> list[Outcome]:
    """A batch of tasks on a worker, one after the other."""
    address = get_worker().address
    app, folder = _HERE[digest]
    outcomes = []
    for task in tasks:
        start = time.perf_counter()
        try:
            result, error = execute(app, task, folder / "runs"), ""
        except CompileError as err:
            result, error = failed(task, err.diagnostic.message), err.diagnostic.message
        outcomes.append(Outcome(result, address, error, time.perf_counter() - start))
    return outcomes


@dataclass(eq=False)
class _Slot:
    """A task's handle: the batch (a Dask future) that carries it once sent, and its outcome
    once the batch's results are read."""

    task: Task
    batch: Any = None
    outcome: Outcome | None = None


def _probe(address: str) -> None:
    """Raise OSError at once when nothing listens at a tcp:// address (Dask's own client
    retries a refused connection until its timeout)."""
    scheme, location = parse_address(address)
    if scheme == "tcp":
        socket.create_connection(parse_host_port(location), timeout=CONNECT_TIMEOUT).close()


def _worker_version() -> str:
    return __version__


class Dask(Engine):
    """A LocalCluster of `workers` processes, or the scheduler at `address`."""

    def __init__(self, app: Application, *, address: str | None = None, workers: int = 1):
        # The tuner says what a lost scheduler or worker means; Dask's own log lines about
        # it (reconnecting, closing the client) would only repeat it less clearly.
        logging.getLogger("distributed").setLevel(logging.CRITICAL)
        self.address = address or "a local cluster"
        self.cluster = None
        self.unsent: list[_Slot] = []
        self.batches: dict[Any, list[_Slot]] = {}   # Dask future → its slots, until read
        self.recent: deque[float] = deque([BATCH_SECONDS], maxlen=32)   # seconds / task
        self.no_workers_since: float | None = None
        self._capacity, self._capacity_at = 1, 0.0
        if address:
            try:
                _probe(address)
                self.client = Client(address, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError, ValueError) as err:
                raise CompileError(f"--cluster: cannot reach a Dask scheduler at '{address}': "
                                   f"{err}") from None
        else:
            self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1,
                                        processes=True, dashboard_address=None,
                                        silence_logs=logging.ERROR)
            self.client = Client(self.cluster)
        try:
            self.client.wait_for_workers(1, timeout=NO_WORKERS_WAIT)
        except TimeoutError:
            self.close()
            raise CompileError(f"no Dask worker joined the scheduler at {self.address} within "
                               f"{NO_WORKERS_WAIT:.0f} s (start some with `dask worker "
                               f"{address}`)") from None
        found = self.client.run(_worker_version)
        if wrong := {w: v for w, v in found.items() if v != __version__}:
            self.close()
            worker, version = next(iter(wrong.items()))
            raise CompileError(f"Dask worker {worker} runs approxcc {version}, the tuner "
                               f"{__version__}: install the same version on every worker")
        files = app.files()
        archive, digest = _pack(files)
        self.digest = digest
        self.client.register_plugin(Bundle(app, [str(f) for f in files], archive, digest),
                                    name=f"approxcc-{digest}")

    def capacity(self) -> int:
        now = time.monotonic()
        if now - self._capacity_at >= CAPACITY_REFRESH:
            self._capacity_at = now
            workers = self._workers()
            self._capacity = max(1, sum(w.get("nthreads", 1) + QUEUED
                                        for w in workers.values()))
            self._capacity *= self.batch_size()
            if workers:
                self.no_workers_since = None
            elif self.no_workers_since is None:
                self.no_workers_since = now
            elif now - self.no_workers_since > NO_WORKERS_WAIT:
                raise CompileError(f"no Dask worker left at {self.address} for "
                                   f"{NO_WORKERS_WAIT:.0f} s; finished evaluations are in the "
                                   f"results DB (continue with --resume)")
        return self._capacity

    def _workers(self) -> dict[str, Any]:
        if self.client.status != "running":
            raise self._lost()
        try:
            return self.client.scheduler_info(n_workers=-1)["workers"]
        except (OSError, TimeoutError):
            raise self._lost() from None

    def _lost(self) -> CompileError:
        return CompileError(f"lost the Dask scheduler at {self.address}: the evaluations in "
                            f"flight are not recorded; finished ones are in the results DB "
                            f"(continue with --resume)")

    def batch_size(self) -> int:
        """Evaluations per Dask task: about `BATCH_SECONDS` of them, by the median wall time
        of the last ones."""
        return max(1, min(MAX_BATCH, int(BATCH_SECONDS / statistics.median(self.recent))))

    def submit(self, task: Task) -> _Slot:
        slot = _Slot(task)
        self.unsent.append(slot)
        if len(self.unsent) >= self.batch_size():
            self._send()
        return slot

    def _send(self) -> None:
        """The tasks submitted since the last call, as batches."""
        size = self.batch_size()
        while self.unsent:
            batch, self.unsent = self.unsent[:size], self.unsent[size:]
            fut = self.client.submit(_remote, self.digest, [s.task for s in batch], pure=False)
            for slot in batch:
                slot.batch = fut
            self.batches[fut] = batch

    def done(self, pending: Iterable[_Slot], timeout: float) -> list[_Slot]:
        pending = list(pending)
        self._send()
        with contextlib.suppress(TimeoutError, FuturesCancelledError):
            wait({s.batch for s in pending}, timeout=timeout, return_when="FIRST_COMPLETED")
        self.capacity()   # notices a cluster without workers, or without a scheduler
        return [s for s in pending if s.batch.done()]

    def outcome(self, handle: _Slot) -> Outcome:
        if handle.outcome is None:   # the first of its batch read: read them all
            slots = self.batches.pop(handle.batch)
            for slot, out in zip(slots, self._batch_outcomes(handle.batch, slots), strict=True):
                slot.outcome = out
        out = handle.outcome
        assert out is not None
        if out.error:
            raise CompileError(out.error)
        return out

    def _batch_outcomes(self, fut: Any, slots: list[_Slot]) -> list[Outcome]:
        while True:
            try:
                outs: list[Outcome] = fut.result(timeout=CAPACITY_REFRESH)
                break
            except TimeoutError:
                # Finished once, but its result died with the worker that held it between
                # `done` and now (the future is "lost"): Dask computes it again. Waits as
                # long as a worker or the scheduler is there to do it.
                self.capacity()
            except KilledWorker:
                return [Outcome(failed(s.task, "worker lost: every worker that ran it died"))
                        for s in slots]
            except (OSError, CancelledError):
                # The scheduler went (we never cancel): a scheduler that does not answer
                # raises; one that answers dropped the task.
                self._workers()
                return [Outcome(failed(s.task, "worker lost: its result died with the worker"))
                        for s in slots]
            except Exception as err:   # noqa: BLE001 (_remote raised: the worker is unfit)
                raise CompileError(f"a Dask worker cannot run evaluations: "
                                   f"{type(err).__name__}: {err}") from None
        self.recent.extend(o.seconds for o in outs)
        return outs

    def abort(self) -> None:
        super().abort()
        with contextlib.suppress(Exception):   # best effort: the cluster may be gone
            self.client.cancel(list(self.batches))
            self.client.run(kill_running)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()
        if self.cluster is not None:
            with contextlib.suppress(Exception):
                self.cluster.close()
