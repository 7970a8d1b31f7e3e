"""Tuning: QoS metrics, the knob space, the OpenTuner search, where evaluations run (this
process or Dask), noise-aware picks, the Pareto archive, reports (docs/tuning.md).

`Application` is the Python interface of a system to tune (a C program described by
approx.toml is `CProgram`, a JAX program `ml_program.JaxProgram`: `load_application` reads
either); `tune(app, TuneOptions(...))` tunes it.
"""

from approxcc.tune.application import (
    Application,
    CProgram,
    RunFailed,
    RunResult,
    load_application,
)
from approxcc.tune.tuner import TuneOptions, tune

__all__ = ["Application", "CProgram", "RunFailed", "RunResult", "TuneOptions", "load_application",
           "tune"]
