"""`make bench`: how fast approxcc tune explores, side by side, on examples/tune.

    python bench/tune_speed.py [speed | parallel | overhead | simulate] [--rounds N]

speed (the default):
1. Evaluations per minute: the same configurations measured through one `--tunable` binary
   (APPROX_CONFIG per run) and by recompiling each one (`approxcc build --config`, then run).
2. Front quality against tuning time: hypervolume of the (time / exact time, QoS loss)
   front after 10, 20 and 40 s of tuning, with and without the screening pass.

parallel: search evaluations per minute of the example (dynamic mode: a space it cannot
exhaust) with `parallel=1` (in process),
`parallel=2` (a LocalCluster) and an external `dask scheduler` with two `dask worker`s,
interleaved, `--rounds` times each; medians and the ratio to `parallel=1`, and the ceiling
the program itself allows: 2 × its mean run time alone over its mean run time beside
another copy (the floor of any engine on this machine).

overhead: seconds per evaluation the Dask path adds, with an application whose runs take no
time: one task at a time (latency) and a full pipeline (throughput), against in process.

simulate: the whole tuner (OpenTuner asks, DB writes) on 1 to 64 Dask worker threads with a
synthetic evaluation that sleeps `--eval-seconds` (it needs no core, so this 2-core machine
can host 64 of them): throughput against the ideal workers / evaluation time.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from rich.console import Console
from rich.table import Table

from approxcc.tune import Application, CProgram, RunResult, TuneOptions, tune
from approxcc.tune.engine import InProcess, Task
from approxcc.tune.measure import Measurer, config_document
from approxcc.tune.pareto import hypervolume
from approxcc.tune.space import Knob, KnobSpace

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "tune"
APPROXCC = str(Path(sys.executable).parent / "approxcc")
CONFIGS = 6
BUDGETS = [0.005, 0.01, 0.02]
TIME_LIMIT = 40.0
CHECKPOINTS = (10.0, 20.0, 40.0)

console = Console()


def sample_configs(app: CProgram, n: int) -> list[dict]:
    rng = random.Random(0)
    space = app.knob_space()
    return [{k.name: {"value": rng.choice(k.values)} for k in space.knobs} for _ in range(n)]


def evals_per_minute(work: Path) -> tuple[float, float, float]:
    """(tunable evals/min, recompiling evals/min, seconds of the one tunable build)."""
    app = CProgram.load(str(EXAMPLE))
    configs = sample_configs(app, CONFIGS)
    start = time.perf_counter()
    app.build(work / "build")
    build_time = time.perf_counter() - start
    measurer = Measurer(app, work)
    golden = measurer.baseline(app.tune_inputs).outputs
    start = time.perf_counter()
    for c in configs:
        measurer.measure(c, app.tune_inputs, golden)
    tunable = CONFIGS / (time.perf_counter() - start) * 60
    sources = app.release_sources(work)
    start = time.perf_counter()
    for i, c in enumerate(configs):
        path = work / f"c{i}.json"
        path.write_text(json.dumps(config_document(app, c)))
        binary = work / f"release{i}"
        subprocess.run([APPROXCC, "build", *sources, f"-I{EXAMPLE}", "--config", str(path),
                        "-o", str(binary)], check=True, capture_output=True)
        for inp in app.tune_inputs:
            subprocess.run([str(binary), inp], check=True, capture_output=True)
    recompile = CONFIGS / (time.perf_counter() - start) * 60
    return tunable, recompile, build_time


def front_quality(work: Path, screening: bool) -> list[float]:
    """Hypervolume (reference: exact time, largest budget) at each checkpoint."""
    example = work / "example"
    shutil.copytree(EXAMPLE, example, ignore=shutil.ignore_patterns("tuned"))
    for extra in sorted((example / "inputs" / "eval").iterdir())[4:]:
        extra.unlink()     # validation is not what this measures
    out = work / ("screened" if screening else "unscreened")
    tune(CProgram.load(str(example)),
         TuneOptions(BUDGETS, out, time_limit=TIME_LIMIT, seed=0, screening=screening),
         Console(quiet=True))
    with sqlite3.connect(out / "results.db") as conn:
        base = conn.execute("SELECT baseline_tune FROM runs").fetchone()[0]
        rows = conn.execute("SELECT finished, time_tune, loss_tune, phase FROM evaluations "
                            "WHERE inputs = 'tune' AND status = 'ok' ORDER BY id").fetchall()
    start = datetime.fromisoformat(rows[0][0])
    points = [((datetime.fromisoformat(f) - start).total_seconds(), t / base, loss)
              for f, t, loss, _ in rows]
    return [hypervolume([(t, loss) for at, t, loss in points if at <= cp], (1.0, BUDGETS[-1]))
            for cp in CHECKPOINTS]


def small_example(work: Path, evals: int = 2) -> Path:
    """The example with few eval inputs: validation is not what these measure."""
    example = work / "example"
    if not example.exists():
        shutil.copytree(EXAMPLE, example, ignore=shutil.ignore_patterns("tuned"))
        for extra in sorted((example / "inputs" / "eval").iterdir())[evals:]:
            extra.unlink()
    return example


def search_rate(db: Path) -> tuple[float, int]:
    """(search evaluations per minute, how many): over the span of the search phase."""
    with sqlite3.connect(db) as conn:
        at = [e for (e,) in conn.execute("SELECT elapsed FROM evaluations WHERE phase = "
                                         "'search' ORDER BY elapsed")]
    if len(at) < 2:
        return 0.0, len(at)
    return (len(at) - 1) / (at[-1] - at[0]) * 60, len(at)


def run_seconds(db: Path) -> float:
    """Mean measured (ROI) seconds of the search's evaluations: how fast the program itself
    ran, which two copies on two cores can slow (shared cache and memory bandwidth)."""
    with sqlite3.connect(db) as conn:
        times = [t for (t,) in conn.execute("SELECT time_tune FROM evaluations WHERE phase = "
                                            "'search' AND time_tune IS NOT NULL")]
    return statistics.mean(times) if times else 0.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class External:
    """`dask scheduler` and `workers` × `dask worker --nthreads 1`, as a user starts them."""

    def __init__(self, work: Path, workers: int):
        dask = str(Path(sys.executable).parent / "dask")
        port = free_port()
        self.address = f"tcp://127.0.0.1:{port}"
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        self.procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port",
                                        str(port), "--no-dashboard"], **quiet)]
        self.procs += [subprocess.Popen([dask, "worker", self.address, "--nthreads", "1",
                                         "--no-dashboard", "--local-directory",
                                         str(work / f"w{i}")], **quiet)
                       for i in range(workers)]
        from distributed import Client

        with Client(self.address, timeout=30) as client:
            client.wait_for_workers(workers, timeout=60)

    def close(self) -> None:
        for proc in reversed(self.procs):
            proc.send_signal(signal.SIGINT)
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def evaluations(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0]


def parallel_speed(work: Path, rounds: int, seconds: float) -> None:
    """Search evaluations per minute per engine, and CPU seconds per evaluation (tuner,
    workers and runs together, over the whole tune): on a machine others load, an engine
    that gets fewer cores than it has workers shows a lower rate at the same CPU cost."""
    import os

    example = small_example(work)
    names = ("parallel 1", "parallel 2", "external 2 workers")
    rates: dict[str, list[float]] = {name: [] for name in names}
    costs: dict[str, list[float]] = {name: [] for name in names}
    cores: dict[str, list[float]] = {name: [] for name in names}
    runs: dict[str, list[float]] = {name: [] for name in names}
    loads = []
    for n in range(rounds):
        for name in names:   # interleaved: drift on the shared machine hits every setting
            out = work / f"{name.replace(' ', '-')}-{n}"
            opts = TuneOptions([0.01, 0.02], out, time_limit=seconds, seed=n, mode="dynamic",
                               screening=False, confirm_repeats=0,
                               parallel=2 if name == "parallel 2" else 1)
            cpu, wall = _cpu(children=True), time.perf_counter()
            cluster = External(work / f"cluster-{n}", 2) if name.startswith("external") \
                else None
            try:
                if cluster is not None:
                    opts.cluster = cluster.address
                tune(CProgram.load(str(example)), opts, Console(quiet=True))
            finally:
                if cluster is not None:
                    cluster.close()
            cpu, wall = _cpu(children=True) - cpu, time.perf_counter() - wall
            rate, count = search_rate(out / "results.db")
            rates[name].append(rate)
            costs[name].append(cpu / evaluations(out / "results.db"))
            runs[name].append(run_seconds(out / "results.db"))
            cores[name].append(cpu / wall)
            loads.append(os.getloadavg()[0])
            console.print(f"round {n + 1}: {name}: {rate:.1f} evaluations/min ({count}), "
                          f"{costs[name][-1]:.3f} CPU s / evaluation, {cores[name][-1]:.2f} "
                          f"cores, load {loads[-1]:.1f}")
    t = Table(title=f"search evaluations per minute, examples/tune ({seconds:.0f} s of "
                    f"search, {rounds} interleaved rounds; median; load average "
                    f"{min(loads):.1f}–{max(loads):.1f})")
    for col in ("engine", "evals / min", "rounds", "× parallel 1", "ceiling ×", "of ceiling",
                "run ms", "CPU s / eval", "cores used"):
        t.add_column(col, justify="right")
    base = statistics.median(rates["parallel 1"])
    alone = statistics.median(runs["parallel 1"])
    for name, values in rates.items():
        med = statistics.median(values)
        ceiling = (1 if name == "parallel 1" else 2) * alone / statistics.median(runs[name])
        t.add_row(name, f"{med:.1f}", " ".join(f"{v:.0f}" for v in values),
                  f"{med / base:.2f}×" if base else "-", f"{ceiling:.2f}×",
                  f"{med / base / ceiling:.0%}" if base else "-",
                  f"{statistics.median(runs[name]) * 1000:.0f}",
                  f"{statistics.median(costs[name]):.3f}",
                  f"{statistics.median(cores[name]):.2f}")
    console.print(t)


class Instant(Application):
    """Runs that take no time (the Dask path's own cost is what is left), or sleep
    `seconds` (a synthetic evaluation that needs no core)."""

    name = "instant"
    tune_inputs = ["1"]
    eval_inputs = ["2"]

    def __init__(self, seconds: float = 0.0, knobs: int = 6):
        self.seconds = seconds
        self.knobs = knobs

    def build(self, workdir: Path) -> None:
        workdir.mkdir(parents=True, exist_ok=True)

    def knob_space(self) -> KnobSpace:
        return KnobSpace(tuple(Knob(f"k{i}", "loop_perforate", tuple(range(1, 9)), 1)
                               for i in range(self.knobs)))

    def run(self, input: str, config_path: Path | None, workdir: Path,
            timeout: float) -> RunResult:
        knobs = json.loads(config_path.read_text())["knobs"] if config_path else {}
        speed = 1.0 + sum(v.get("value", 1) for v in knobs.values())
        if self.seconds:
            time.sleep(self.seconds)
        return RunResult(f"{100 + speed * 0.01}\n", 1.0 / speed, 0.0, True)

    def loss(self, exact_outputs: list[str], outputs: list[str]) -> float:
        a, b = float(exact_outputs[0]), float(outputs[0])
        return min(1.0, abs(a - b) / a)


def overhead(work: Path, tasks: int, rounds: int) -> None:
    from approxcc.tune.cluster import Dask

    app = Instant()
    app.build(work)
    task = Task("measure", "tune", {"k0": {"value": 2}}, ("100.0\n",), 10.0)
    results: dict[str, list[float]] = {"in process": [], "Dask, one at a time": [],
                                       "Dask, pipelined": []}
    start = time.perf_counter()
    dask = Dask(app, workers=1)
    startup = time.perf_counter() - start
    local = InProcess(app, work)
    try:
        for _ in range(rounds):
            for name in results:
                start = time.perf_counter()
                if name == "in process":
                    for _ in range(tasks):
                        local.run(task)
                elif name == "Dask, one at a time":
                    for _ in range(tasks):
                        dask.run(task)
                else:
                    futures = [dask.submit(task) for _ in range(tasks)]
                    while futures:
                        for f in dask.done(futures, 1.0):
                            dask.outcome(f)
                            futures.remove(f)
                results[name].append((time.perf_counter() - start) / tasks * 1000)
    finally:
        dask.close()
    t = Table(title=f"milliseconds per evaluation of a run that takes no time ({tasks} tasks, "
                    f"{rounds} interleaved rounds, median); LocalCluster start-up "
                    f"{startup:.1f} s")
    for col in ("path", "ms / evaluation", "added over in process"):
        t.add_column(col, justify="right")
    base = statistics.median(results["in process"])
    for name, values in results.items():
        med = statistics.median(values)
        t.add_row(name, f"{med:.2f}", f"{med - base:+.2f}")
    console.print(t)


def _cpu(children: bool = False) -> float:
    """CPU seconds of this process (the tuner: OpenTuner, the DB, the Dask client), and with
    `children` of every child process it has waited for (the worker processes of a cluster
    once it is closed, the runs of an in-process tuner)."""
    import resource

    who = [resource.RUSAGE_SELF] + ([resource.RUSAGE_CHILDREN] if children else [])
    return sum(u.ru_utime + u.ru_stime for u in map(resource.getrusage, who))


def simulate(work: Path, eval_seconds: float, seconds: float, counts: list[int]) -> None:
    t = Table(title=f"simulated throughput: the tuner on N Dask worker threads, each "
                    f"evaluation sleeping {eval_seconds:g} s ({seconds:.0f} s of search)")
    for col in ("worker threads", "processes × threads", "evals / s", "ideal", "efficiency",
                "tuner CPU ms / eval"):
        t.add_column(col, justify="right")
    import logging

    from distributed import LocalCluster

    for n in counts:
        processes = min(n, 8)   # beyond 8 processes, threads: they only sleep
        threads = n // processes
        out = work / f"sim-{n}"
        with LocalCluster(n_workers=processes, threads_per_worker=threads,
                          dashboard_address=None, silence_logs=logging.ERROR) as cluster:
            cpu = _cpu()
            tune(Instant(eval_seconds, knobs=8),
                 TuneOptions([0.05], out, time_limit=seconds, mode="static", screening=False,
                             confirm_repeats=0, cluster=cluster.scheduler_address),
                 Console(quiet=True))
            cpu = _cpu() - cpu
        rate, count = search_rate(out / "results.db")
        rate /= 60
        ideal = n / eval_seconds
        t.add_row(str(n), f"{processes} × {threads}", f"{rate:.2f}", f"{ideal:.2f}",
                  f"{rate / ideal:.0%}", f"{cpu / max(1, count) * 1000:.0f}")
        console.print(f"{n} worker threads: {rate:.2f} evaluations/s (ideal {ideal:.2f})")
    console.print(t)


def speed() -> None:
    console.rule("[bold]approxcc tune: exploration speed on examples/tune")
    with tempfile.TemporaryDirectory(prefix="tune-bench-") as tmp:
        work = Path(tmp)
        tunable, recompile, build_time = evals_per_minute(work / "speed")
        speed = Table(title=f"evaluations per minute ({CONFIGS} configurations, "
                            f"4 tuning inputs each)")
        speed.add_column("method")
        speed.add_column("evals / min", justify="right")
        speed.add_row("tunable build (one binary, APPROX_CONFIG)", f"{tunable:.1f}")
        speed.add_row("recompile per configuration (--config)", f"{recompile:.1f}")
        speed.add_row("ratio", f"{tunable / recompile:.1f}×")
        speed.add_row("(the tunable build itself, once)", f"{build_time:.1f} s")
        console.print(speed)
        quality = Table(title=f"front hypervolume (time / exact, loss ≤ {BUDGETS[-1]:.0%}; "
                              f"larger is better)")
        quality.add_column("tuning time", justify="right")
        quality.add_column("with screening", justify="right")
        quality.add_column("without", justify="right")
        with_s = front_quality(work / "with", True)
        without = front_quality(work / "without", False)
        for cp, a, b in zip(CHECKPOINTS, with_s, without, strict=True):
            quality.add_row(f"{cp:.0f} s", f"{a:.5f}", f"{b:.5f}")
        console.print(quality)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", nargs="?", default="speed",
                        choices=["speed", "parallel", "overhead", "simulate"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=30.0, help="search time per tune")
    parser.add_argument("--eval-seconds", type=float, default=1.0)
    parser.add_argument("--workers", default="1,2,4,8,16,32,64")
    args = parser.parse_args()
    if args.what == "speed":
        speed()
        return
    with tempfile.TemporaryDirectory(prefix="tune-bench-") as tmp:
        if args.what == "parallel":
            parallel_speed(Path(tmp), args.rounds, args.seconds)
        elif args.what == "overhead":
            overhead(Path(tmp), 200, args.rounds)
        else:
            simulate(Path(tmp), args.eval_seconds, args.seconds,
                     [int(n) for n in args.workers.split(",")])


if __name__ == "__main__":
    main()
