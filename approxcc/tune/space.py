"""The knob space, read from the IR (approx.knob ops), and its encoding for OpenTuner.

A configuration is the `knobs` object of a config file (docs/config.md): per knob
`{"value": v}` or, for a dynamic knob, `{"thresholds": [...], "decisions": [...]}`.

Encoding (one OpenTuner parameter per degree of freedom, values by index so that
neighbouring values are neighbouring parameters):
- a static knob, or a dynamic knob in static mode: `NAME` = index into its values;
- a dynamic knob in dynamic mode: thresholds `NAME.t0..t{N-1}` and decisions
  `NAME.d0..dN`. Thresholds are *sorted draws*: N integers in [lo, hi-N+1], sorted, plus
  their rank (t_i = sorted(x)_i + i), so every point of the search space decodes to strictly
  increasing thresholds in [lo, hi] (floats: N draws in [lo, hi], sorted).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, replace
from typing import Any

from xdsl.dialects.builtin import IntegerType, ModuleOp

from approxcc import registry
from approxcc.dialect.approx import KnobOp

MODES = ("static", "dynamic", "both")
KnobConfig = dict[str, dict[str, Any]]


@dataclass(frozen=True)
class Knob:
    name: str
    transform: str
    values: tuple[int, ...]
    exact: int
    dynamic: bool = False
    thresholds: int = 0
    range: tuple[int, int] = registry.DEFAULT_RANGE
    float_state: bool = False
    loc: str = ""
    ordered: bool = True  # neighbouring values behave alike (the registry's KnobDomain)

    def default_thresholds(self) -> list[int | float]:
        """Evenly spaced inside the range: for an integer state exactly what
        approx-emit-management and the runtime use (`registry.default_thresholds`)."""
        lo, hi = self.range
        if not self.float_state:
            return list(registry.default_thresholds(self.thresholds, lo, hi))
        step = (hi - lo) / (self.thresholds + 1)
        return [lo + step * (i + 1) for i in range(self.thresholds)]


@dataclass(frozen=True)
class KnobSpace:
    knobs: tuple[Knob, ...]

    def __getitem__(self, name: str) -> Knob:
        return next(k for k in self.knobs if k.name == name)

    def exact_config(self) -> KnobConfig:
        return {k.name: {"value": k.exact} for k in self.knobs}

    def has_dynamic(self) -> bool:
        return any(k.dynamic for k in self.knobs)

    def restrict(self, allowed: dict[str, list[int]]) -> KnobSpace:
        """The same knobs with their values cut down to `allowed` (exact value always kept)."""
        knobs = []
        for k in self.knobs:
            keep = set(allowed.get(k.name, k.values)) | {k.exact}
            knobs.append(replace(k, values=tuple(v for v in k.values if v in keep)))
        return KnobSpace(tuple(knobs))

    def to_json(self) -> list[dict[str, Any]]:
        return [k.__dict__ | {"values": list(k.values), "range": list(k.range)}
                for k in self.knobs]

    @staticmethod
    def from_json(data: list[dict[str, Any]]) -> KnobSpace:
        return KnobSpace(tuple(Knob(**(d | {"values": tuple(d["values"]),
                                            "range": tuple(d["range"])})) for d in data))


def knob_space(modules: list[ModuleOp]) -> KnobSpace:
    """Every approx.knob of the modules, in program order."""
    knobs: dict[str, Knob] = {}
    for module in modules:
        for op in module.walk():
            if not isinstance(op, KnobOp) or op.knob_name.data in knobs:
                continue
            transform = op.transform_types.data[0].data
            spec = registry.get(transform)
            assert spec is not None  # verified: registered
            values_attr = op.param("values")
            values = tuple(a.value.data for a in values_attr.data) if values_attr else \
                (spec.exact,)
            knob = Knob(op.knob_name.data, transform, values, spec.exact,
                        loc=op.loc.data if op.loc else "",
                        ordered=spec.domain is None or spec.domain.ordered)
            if op.is_dynamic:
                count = op.param("thresholds")
                rng = op.param("range")
                knob = replace(knob, dynamic=True,
                               thresholds=count.value.data if count
                               else registry.DEFAULT_THRESHOLD_COUNT,
                               range=tuple(a.value.data for a in rng.data) if rng
                               else registry.DEFAULT_RANGE,
                               float_state=not isinstance(op.args[0].type, IntegerType))
            knobs[knob.name] = knob
    return KnobSpace(tuple(knobs.values()))


def canonical(config: KnobConfig) -> KnobConfig:
    """One spelling per behaviour: a decision tree whose leaves agree is that one value."""
    out: KnobConfig = {}
    for name in sorted(config):
        entry = config[name]
        decisions = entry.get("decisions")
        if decisions is not None and len(set(decisions)) == 1:
            entry = {"value": decisions[0]}
        out[name] = entry
    return out


def config_hash(config: KnobConfig) -> str:
    text = json.dumps(canonical(config), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def is_dynamic_config(config: KnobConfig) -> bool:
    return any("decisions" in e for e in canonical(config).values())


class Encoding:
    """Maps OpenTuner parameter dictionaries to configurations and back for one space/mode."""

    def __init__(self, space: KnobSpace, mode: str):
        self.space = space
        self.dynamic = mode == "dynamic"

    def _tree(self, knob: Knob) -> bool:
        return self.dynamic and knob.dynamic

    def parameters(self) -> list[Any]:
        from opentuner.search.manipulator import EnumParameter, FloatParameter, IntegerParameter

        def choice(name: str, k: Knob) -> Any:
            """An index into the knob's values: a range when they are ordered."""
            top = len(k.values) - 1
            return IntegerParameter(name, 0, top) if k.ordered \
                else EnumParameter(name, list(range(top + 1)))

        params: list[Any] = []
        for k in self.space.knobs:
            top = len(k.values) - 1
            if not self._tree(k):
                if top > 0:
                    params.append(choice(k.name, k))
                continue
            lo, hi = k.range
            for i in range(k.thresholds):
                params.append(FloatParameter(f"{k.name}.t{i}", lo, hi) if k.float_state
                              else IntegerParameter(f"{k.name}.t{i}", lo, hi - k.thresholds + 1))
            if top > 0:
                params += [choice(f"{k.name}.d{j}", k) for j in range(k.thresholds + 1)]
        return params

    def decode(self, data: dict[str, Any]) -> KnobConfig:
        config: KnobConfig = {}
        for k in self.space.knobs:
            if not self._tree(k):
                config[k.name] = {"value": k.values[data.get(k.name, 0)]}
                continue
            draws = sorted(data[f"{k.name}.t{i}"] for i in range(k.thresholds))
            if k.float_state:
                thresholds: list[int | float] = []
                for t in draws:
                    t = float(t)
                    thresholds.append(math.nextafter(thresholds[-1], math.inf)
                                      if thresholds and t <= thresholds[-1] else t)
            else:
                thresholds = [int(t) + i for i, t in enumerate(draws)]
            decisions = [k.values[data.get(f"{k.name}.d{j}", 0)]
                         for j in range(k.thresholds + 1)]
            config[k.name] = {"thresholds": thresholds, "decisions": decisions}
        return canonical(config)

    def encode(self, config: KnobConfig) -> dict[str, Any] | None:
        """Parameters for `config`, or None when it is not in this (restricted) space."""
        data: dict[str, Any] = {}
        for k in self.space.knobs:
            entry = config.get(k.name, {"value": k.exact})
            decisions = entry.get("decisions") or [entry["value"]] * (k.thresholds + 1)
            if any(d not in k.values for d in decisions):
                return None
            if not self._tree(k):
                if len(set(decisions)) != 1:
                    return None
                data[k.name] = k.values.index(decisions[0])
                continue
            thresholds = entry.get("thresholds") or k.default_thresholds()
            for i, t in enumerate(thresholds):
                data[f"{k.name}.t{i}"] = float(t) if k.float_state else int(t) - i
            for j, d in enumerate(decisions):
                data[f"{k.name}.d{j}"] = k.values.index(d)
        return data
