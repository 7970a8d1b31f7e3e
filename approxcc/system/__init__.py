"""Compound systems: C retrieval kernels and an LLM, built once and tuned as one program.

A system is a folder with `system.toml` (`project`): the C sources built into one tunable
shared library (`library`), and a Python pipeline loaded by path (`pipeline`) that answers a
question with that library and a language model. `CompoundSystem` is the tuner's
`Application` for it; its Python knobs are declared with `knob` (registry-checked) or read
from a model's decorators with `model_knobs`; `evaluate` runs the exact system and a
configuration on a question file (`questions`).
"""

from approxcc.system.application import CompoundSystem, build_system, load_system
from approxcc.system.evaluate import evaluate, evaluate_system, format_result
from approxcc.system.knobs import knob, model_knobs
from approxcc.system.project import is_system

__all__ = ["CompoundSystem", "build_system", "evaluate", "evaluate_system", "format_result",
           "is_system", "knob", "load_system", "model_knobs"]
