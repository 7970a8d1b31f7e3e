"""`approxcc.tune.Application`: what the tuner needs from a system to tune.

A compound system written in Python implements it directly; a C/C++ program described by
`approx.toml` is `CProgram`, one implementation of it, a JAX program described by it
`approxcc.tune.ml_program.JaxProgram` another (`load_application` picks). The tuner only
ever calls `build()` (once), `knob_space()`, `run()` (once per input, configuration and
repeat, in a fresh working folder, possibly in several Dask worker processes on other
machines at once), `run_round()` (the exact program and the candidates on one input, for
the confirmation), `loss()` and `reference()`.

Runs on a Dask worker see a copy of the application (pickled) whose `files()` (what runs read:
a built binary, the inputs) were shipped to the worker and `relocate()`d there; everything
else a run reads must be reachable at the same path on every worker.
"""

from __future__ import annotations

import contextlib
import copy
import os
import resource
import signal
import statistics
import subprocess
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from approxcc.diagnostics import CompileError
from approxcc.driver.toolchain import RUNTIME_DIR
from approxcc.tune.program import Program, load_program, location, substitute
from approxcc.tune.qos import Metric, metric
from approxcc.tune.space import KnobSpace, knob_space

if TYPE_CHECKING:
    from approxcc.tune.ml_program import JaxProgram

PAIR_SECONDS = 0.2   # a side of a confirmation pair that ran shorter runs again...
PAIR_RUNS = 7        # ...up to this many times


class RunFailed(Exception):
    """One run of a configuration failed; the message is the recorded reason."""


@dataclass(frozen=True)
class RunResult:
    output: str
    time: float          # what the tuner minimises: ROI time when reported, else wall time
    wall: float
    roi: bool            # the program reported its region of interest


def _median_time(runs: list[RunResult]) -> RunResult:
    """The first run's output with the median time of all (deterministic programs: the
    reruns only steady the clock)."""
    return RunResult(runs[0].output, statistics.median(r.time for r in runs),
                     statistics.median(r.wall for r in runs), runs[0].roi)


class Application(ABC):
    """A system to tune: its knobs, its inputs, how to run it under a configuration."""

    name: str
    tune_inputs: list[str]
    eval_inputs: list[str]      # held out of the search: the picks are checked on them
    held_out = "eval"           # what the configurations call the figures on eval_inputs

    @abstractmethod
    def build(self, workdir: Path) -> None:
        """Prepare everything runs need (e.g. one tunable binary), once, inside `workdir`."""

    @abstractmethod
    def knob_space(self) -> KnobSpace:
        """The knobs, read from the IR."""

    @abstractmethod
    def run(self, input: str, config_path: Path | None, workdir: Path,
            timeout: float) -> RunResult:
        """Run on one input under the configuration file `config_path` (None: exact) inside
        the empty folder `workdir`; raise `RunFailed(reason)` on a crash, a nonzero exit or
        after `timeout` seconds."""

    @abstractmethod
    def loss(self, exact_outputs: list[str], outputs: list[str]) -> float:
        """QoS loss in [0, 1] of `outputs` against the exact outputs, input by input."""

    def input_loss(self, exact_output: str, output: str) -> float:
        """The loss of one input, what the picks' confidence bound is taken over
        (`picks.bound`). Below 0 where the approximation does better than the exact program
        on that input (e.g. a question only it answers right): such an input offsets one
        it does worse on, as it does in `loss` over many inputs."""
        return self.loss([exact_output], [output])

    def run_round(self, input: str, config_paths: list[Path], workdir: Path,
                  timeout: float) -> tuple[RunResult, list[RunResult | RunFailed]]:
        """The exact program, then each configuration, on one input: a step of the tuner's
        confirmation, whose times must be taken side by side (the exact run serves every
        configuration of the round). `workdir` is empty; each run gets a folder of its own
        in it. A side that ran for less than `PAIR_SECONDS` runs again, alternating with the
        other sides' reruns, up to `PAIR_RUNS` times; its time is the median of its runs (a
        30 ms run moves by more than the 5% a speedup is read to). A configuration that
        fails has its `RunFailed` in its place (the others go on); the exact program's
        failure is raised. An application that caches results between runs overrides it to
        time every side afresh (approxcc.system: question by question)."""
        sides: list[tuple[Path | None, list[RunResult]]] = [(None, [])]
        sides += [(cfg, []) for cfg in config_paths]
        failures: dict[int, RunFailed] = {}
        while True:
            short = [i for i, (_, runs) in enumerate(sides) if i not in failures and
                     len(runs) < PAIR_RUNS and sum(r.time for r in runs) < PAIR_SECONDS]
            if not short:
                break
            for i in short:
                cfg, runs = sides[i]
                folder = workdir / f"{'exact' if cfg is None else f'config{i}'}-{len(runs)}"
                folder.mkdir()
                try:
                    runs.append(self.run(input, cfg, folder, timeout))
                except RunFailed as err:
                    if cfg is None:
                        raise
                    failures[i] = err
        return _median_time(sides[0][1]), [failures[i] if i in failures else _median_time(runs)
                                           for i, (_, runs) in enumerate(sides) if i]

    def describe(self) -> str:
        """Where the application comes from (shown in reports, stored in the results DB)."""
        return self.name

    def reference(self) -> dict[str, float] | None:
        """When the exact run's time is the faster of several ways to run the exact program
        (a JAX program: its exact build and `jax.jit`), each one's seconds on the tuning
        inputs, known after `build()`: the report names them. None: the exact program."""
        return None

    def files(self) -> list[Path]:
        """Local files that runs read after `build()`: shipped once to each Dask worker."""
        return []

    def relocate(self, moved: dict[str, Path]) -> Application:
        """This application on a worker, where each of `files()` (by its path as a string)
        now lies at `moved[path]`."""
        return self


def load_application(where: str) -> CProgram | JaxProgram:
    """The program `where` (an approx.toml or its folder) describes: a C/C++ program
    (`CProgram`), or a JAX program (`approxcc.tune.ml_program.JaxProgram`)."""
    program = load_program(where)
    if program.language == "python":
        from approxcc.tune.ml_program import JaxProgram

        return JaxProgram(program)
    return CProgram(program)


class CProgram(Application):
    """A C/C++ program described by approx.toml, tuned through one `--tunable` binary."""

    def __init__(self, program: Program):
        self.program = program
        self.name = program.name
        self.tune_inputs = [str(p) for p in program.tune_inputs]
        self.eval_inputs = [str(p) for p in program.eval_inputs]
        try:
            self.metric: Metric = metric(program.metric, program.root)
        except CompileError as err:
            raise CompileError(err.diagnostic.message, location(program, "metric")) from None
        self.binary: Path | None = None

    @classmethod
    def load(cls, where: str) -> CProgram:
        return cls(load_program(where))

    def describe(self) -> str:
        return str(self.program.path)

    def clang_args(self) -> list[str]:
        return [*self.program.flags, f"-I{self.program.root}", f"-I{RUNTIME_DIR}"]

    def knob_space(self) -> KnobSpace:
        from approxcc.frontend.c_parse import c_to_mlir

        return knob_space([c_to_mlir(str(src), self.clang_args())
                           for src in self.program.sources])

    def runtime_objects(self, workdir: Path) -> list[str]:
        """The user runtime libraries, compiled with the system C compiler."""
        from approxcc.driver.toolchain import c_compiler

        objects = []
        for src in self.program.runtime:
            obj = workdir / f"{src.stem}.rt.o"
            proc = subprocess.run([c_compiler(), "-O2", "-c", str(src), *self.clang_args(),
                                   "-o", str(obj)], capture_output=True, text=True)
            if proc.returncode != 0:
                raise CompileError(f"cannot compile runtime library '{src.name}':\n"
                                   f"{proc.stderr.strip()}", location(self.program, "sources"))
            objects.append(str(obj))
        return objects

    def release_sources(self, workdir: Path) -> list[str]:
        """What `approxcc build` takes to build this program (sources, runtime objects)."""
        return [str(s) for s in self.program.sources] + self.runtime_objects(workdir)

    def build(self, workdir: Path) -> None:
        from approxcc.driver.build import Options, build

        workdir.mkdir(parents=True, exist_ok=True)
        binary = workdir / f"{self.name}.tunable"
        build(Options(self.release_sources(workdir), str(binary), tunable=True,
                      clang_args=self.clang_args()))
        self.binary = binary

    def files(self) -> list[Path]:
        if self.binary is None:
            raise RuntimeError("CProgram.files() before build()")
        return [self.binary, *map(Path, self.tune_inputs + self.eval_inputs)]

    def relocate(self, moved: dict[str, Path]) -> CProgram:
        there = copy.copy(self)
        there.binary = moved[str(self.binary)]
        there.tune_inputs = [str(moved[p]) for p in self.tune_inputs]
        there.eval_inputs = [str(moved[p]) for p in self.eval_inputs]
        return there

    def command(self, binary: Path, input: str) -> list[str]:
        return [str(binary), *substitute(self.program.args, Path(input))]

    def run(self, input: str, config_path: Path | None, workdir: Path,
            timeout: float) -> RunResult:
        if self.binary is None:
            raise RuntimeError("CProgram.run() before build()")
        return run_command(self.command(self.binary, input), workdir, timeout, config_path,
                           self.program.output, Path(input))

    def loss(self, exact_outputs: list[str], outputs: list[str]) -> float:
        return self.metric(exact_outputs, outputs)


_RUNNING: set[int] = set()     # process groups of the runs in flight
_RUNNING_LOCK = threading.Lock()


def kill_running() -> None:
    """End every run in flight (Ctrl-C): runs live in their own sessions, so the terminal's
    SIGINT never reaches them."""
    with _RUNNING_LOCK:
        for pid in _RUNNING:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)


def run_command(argv: list[str], workdir: Path, timeout: float, config_path: Path | None,
                output: str = "stdout", input_path: Path | None = None) -> RunResult:
    """Run one process in `workdir` with APPROX_CONFIG/APPROX_ROI_FILE set."""
    roi_file = workdir / "approx-roi.txt"
    env = {**os.environ, "APPROX_ROI_FILE": str(roi_file)}
    env.pop("APPROX_CONFIG", None)
    if config_path is not None:
        env["APPROX_CONFIG"] = str(config_path)
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(argv, cwd=workdir, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except OSError as err:
        raise RunFailed(f"cannot start: {err.strerror}") from None
    with _RUNNING_LOCK:
        _RUNNING.add(proc.pid)
    # Backstop for a run whose tuner was killed: the kernel ends a busy loop.
    limit = int(timeout) + 2
    with contextlib.suppress(OSError):
        resource.prlimit(proc.pid, resource.RLIMIT_CPU, (limit, limit + 1))
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise RunFailed(f"timeout: no result after {timeout:.2f} s") from None
    finally:
        with _RUNNING_LOCK:
            _RUNNING.discard(proc.pid)
    wall = time.perf_counter() - start
    if proc.returncode < 0:
        raise RunFailed(f"crashed: {signal.Signals(-proc.returncode).name}")
    if proc.returncode != 0:
        last = stderr.decode(errors="replace").strip().splitlines()
        raise RunFailed(f"exit status {proc.returncode}" + (f": {last[-1]}" if last else ""))
    if output == "stdout":
        data = stdout
    else:
        target = workdir / substitute([output], input_path or Path())[0]
        try:
            data = target.read_bytes()
        except OSError:
            raise RunFailed(f"garbage output: '{output}' was not written") from None
    try:
        text = data.decode()
    except UnicodeDecodeError:
        raise RunFailed("garbage output: not UTF-8 text") from None
    try:
        roi = float(roi_file.read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        return RunResult(text, wall, wall, False)
    return RunResult(text, roi, wall, True)
