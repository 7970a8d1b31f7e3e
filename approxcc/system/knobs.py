"""A system's Python-side knobs, declared through the transform registry as an annotation
is: `knob(...)` checks the transform and every value against the registry, and
`model_knobs(path)` reads a JAX model's `@approx.knob`s so they are declared once.
`CompoundSystem` checks every pipeline knob the same way (`check`), however it was made."""

from __future__ import annotations

from pathlib import Path

from approxcc import registry
from approxcc.tune.space import Knob


def _spec(name: str, transform: str) -> registry.TransformSpec:
    spec = registry.get(transform)
    if spec is None:
        raise ValueError(f"knob '{name}': unknown transform '{transform}' (registered: "
                         f"{', '.join(registry.names())})")
    return spec


def _integer_ml(spec: registry.TransformSpec) -> bool:
    """Whether the transform's model knobs take integers (a substitute's variant, a
    perforation, layers skipped): a Python knob means what a model knob means; the others'
    labels (precision, quantize) are numbered by the system itself."""
    return spec.ml is not None and isinstance(spec.ml.exact, int)


def check(k: Knob) -> None:
    """ValueError unless `k`'s transform is registered, and (for a transform whose model
    knobs take integers) its values and exact value are valid for it."""
    spec = _spec(k.name, k.transform)
    if not _integer_ml(spec):
        return
    assert spec.ml is not None
    if k.exact is not None and k.exact != spec.ml.exact:
        raise ValueError(f"knob '{k.name}': the exact value of '{k.transform}' is "
                         f"{spec.ml.exact}, not {k.exact}")
    for v in k.values:
        if (why := spec.ml.check(v)) is not None:
            raise ValueError(f"knob '{k.name}': value {v}: {why}")


def knob(name: str, transform: str, values: tuple[int, ...] | None = None, *,
         state: bool = False, thresholds: int = registry.DEFAULT_THRESHOLD_COUNT,
         range: tuple[int, int] = registry.DEFAULT_RANGE,  # noqa: A002 - the clause's name
         float_state: bool = False, loc: str = "") -> Knob:
    """A Python-side knob: `transform` one of the registry's, `values` its domain (default:
    the transform's model-knob defaults), the exact value the transform's, kept among the
    values; `state`: dynamic, its decision tree read with approxcc.config.decide."""
    spec = _spec(name, transform)
    if values is None:
        if not _integer_ml(spec) or not spec.ml or not spec.ml.defaults:
            raise ValueError(f"knob '{name}': '{transform}' has no default values: give them")
        values = tuple(spec.ml.defaults)
    exact = spec.ml.exact if _integer_ml(spec) and spec.ml else 0
    made = Knob(name, transform, tuple(sorted({exact, *values})), exact, dynamic=state,
                thresholds=thresholds if state else 0, range=range,
                float_state=float_state, loc=loc,
                ordered=spec.domain.ordered if spec.domain else True)
    check(made)
    return made


def model_knobs(path: str | Path) -> tuple[Knob, ...]:
    """The knobs of a JAX model file's `@approx.knob` decorators, as the tuner sees them."""
    from approxcc.ml.ir import approx_module
    from approxcc.ml.program import load_program
    from approxcc.tune.space import knob_space

    return knob_space([approx_module(load_program(path))]).knobs
