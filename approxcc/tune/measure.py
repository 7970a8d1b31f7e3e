"""Measuring one configuration on a set of inputs.

Every run happens in a fresh working folder (parallel evaluations never share files) with
`APPROX_CONFIG` naming the configuration and `APPROX_ROI_FILE` collecting the program's
region-of-interest time. Per input: the median of `repeats` runs; per configuration: the sum
over the inputs. The exact configuration's outputs are the golden outputs.

`round()` is the confirmation measurement of the candidates: the exact program and each
candidate in turn, input by input (`Application.run_round`), so drift on a shared machine
hits them alike, and the ratio of the exact time to a candidate's (the speedup of that
repeat) is what the report summarises by median and IQR. One exact run per input serves
every candidate of the round.
"""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path

from approxcc.diagnostics import CompileError
from approxcc.tune.application import Application, RunFailed
from approxcc.tune.space import KnobConfig

OK, FAILED = "ok", "failed"
MIN_TIMEOUT = 1.0   # seconds: a loaded machine must not turn a slow run into a "hang"


@dataclass(frozen=True)
class Measurement:
    status: str                 # "ok" | "failed"
    time: float | None = None   # seconds, summed over the inputs
    loss: float | None = None
    reason: str = ""
    input_losses: tuple[float, ...] = ()   # per input: the spread a new input set may see


@dataclass(frozen=True)
class Pair:
    """One interleaved repeat of the exact program and a candidate on the same inputs."""

    status: str
    exact_time: float | None = None
    time: float | None = None
    loss: float | None = None
    input_losses: tuple[float, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class Baseline:
    outputs: list[str]          # golden outputs, one per input
    time: float                 # seconds, summed over the inputs (median of repeats)
    noise: float                # relative spread (max - min) / median of the repeats' totals
    walls: list[float]          # per input, the slowest wall time (for the default timeout)
    roi: bool                   # the program reports a region of interest


def config_document(app: Application, knobs: KnobConfig) -> dict:
    return {"approxcc": "1", "program": app.name, "knobs": knobs}


class Measurer:
    def __init__(self, app: Application, workdir: Path, repeats: int = 1):
        self.app = app
        self.workdir = workdir
        self.repeats = max(1, repeats)
        self.timeout = 60.0

    def _folder(self) -> Path:
        (self.workdir / "runs").mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix="eval-", dir=self.workdir / "runs"))

    def _run_all(self, inputs: list[str], config: Path | None, repeats: int,
                 timeout: float) -> tuple[list[str], list[list[float]], list[list[float]], bool]:
        """Outputs (first repeat), times and wall times per input and repeat."""
        outputs, times, walls, roi = [], [], [], True
        for inp in inputs:
            ts, ws = [], []
            for r in range(repeats):
                folder = self._folder()
                try:
                    res = self.app.run(inp, config, folder, timeout)
                finally:
                    shutil.rmtree(folder, ignore_errors=True)
                if r == 0:
                    outputs.append(res.output)
                ts.append(res.time)
                ws.append(res.wall)
                roi = roi and res.roi
            times.append(ts)
            walls.append(ws)
        return outputs, times, walls, roi

    def baseline(self, inputs: list[str]) -> Baseline:
        """The exact configuration (APPROX_CONFIG unset): golden outputs, time and noise."""
        repeats = max(3, self.repeats)
        try:
            outputs, times, walls, roi = self._run_all(inputs, None, repeats, 600.0)
        except RunFailed as err:
            raise CompileError(f"the exact program fails on its inputs: {err}") from None
        totals = [sum(ts[r] for ts in times) for r in range(repeats)]
        median = statistics.median(totals)
        return Baseline(outputs, sum(statistics.median(ts) for ts in times),
                        (max(totals) - min(totals)) / median if median else 0.0,
                        [max(ws) for ws in walls], roi)

    def _config_file(self, knobs: KnobConfig) -> Path:
        folder = self._folder()
        config = folder / "config.json"
        config.write_text(json.dumps(config_document(self.app, knobs)))
        return config

    def _losses(self, golden: list[str], outputs: list[str]) -> tuple[float, tuple[float, ...]]:
        """The loss over all inputs and input by input; raises ValueError on garbage."""
        try:
            loss = self.app.loss(golden, outputs)
            per_input = tuple(self.app.input_loss(g, o) for g, o in zip(golden, outputs,
                                                                          strict=True))
        except CompileError as err:
            raise ValueError(err.diagnostic.message) from None
        if not 0.0 <= loss <= 1.0:
            raise ValueError(f"loss {loss!r}")
        return loss, per_input

    def _scored(self, golden: list[str], outputs: list[str], time: float,
                exact_time: float | None) -> Pair:
        """Outputs scored against `golden`; garbage output is a failed result."""
        try:
            loss, per_input = self._losses(golden, outputs)
        except ValueError as err:
            return Pair(FAILED, reason=f"garbage output: {err}")
        return Pair(OK, exact_time, time, loss, per_input)

    def measure(self, knobs: KnobConfig, inputs: list[str], golden: list[str]) -> Measurement:
        config = self._config_file(knobs)
        try:
            outputs, times, _, _ = self._run_all(inputs, config, self.repeats, self.timeout)
        except RunFailed as err:
            return Measurement(FAILED, reason=str(err))
        finally:
            shutil.rmtree(config.parent, ignore_errors=True)
        p = self._scored(golden, outputs, sum(statistics.median(ts) for ts in times), None)
        return Measurement(p.status, p.time, p.loss, p.reason, p.input_losses)

    def round(self, configs: list[KnobConfig], inputs: list[str],
              golden: list[str]) -> list[Pair]:
        """The exact program, then each configuration, on each input in turn: one repeat of
        all of them (a configuration that fails on an input is left out of the rest)."""
        files = [self._config_file(k) for k in configs]
        exact_time, times = 0.0, [0.0] * len(configs)
        outputs: list[list[str]] = [[] for _ in configs]
        failures: dict[int, str] = {}
        try:
            for inp in inputs:
                live = [i for i in range(len(configs)) if i not in failures]
                if not live:
                    break
                folder = self._folder()
                try:
                    exact, results = self.app.run_round(inp, [files[i] for i in live], folder,
                                                        self.timeout)
                except RunFailed as err:
                    return [Pair(FAILED, reason=f"the exact program: {err}") for _ in configs]
                finally:
                    shutil.rmtree(folder, ignore_errors=True)
                exact_time += exact.time
                for i, res in zip(live, results, strict=True):
                    if isinstance(res, RunFailed):
                        failures[i] = str(res)
                    else:
                        times[i] += res.time
                        outputs[i].append(res.output)
        finally:
            for f in files:
                shutil.rmtree(f.parent, ignore_errors=True)
        return [Pair(FAILED, reason=failures[i]) if i in failures else
                self._scored(golden, outputs[i], times[i], exact_time)
                for i in range(len(configs))]
