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

ML knobs come from the approx IR of a model (`knob_space`) or from a build's manifest.json
for one target (`ml_knob_space`): there a variant IREE could not compile for the target
(`failed.<target>`, a `--keep-going` build) is left out, and so is a variant the build's
check found broken (`accuracy.broken`: far from exact on the example inputs, measured on the
CPU; left out for every target). A value that failed with every other knob exact is dropped
from its knob; a failing combination of values is `unbuilt`, and `Encoding.decode` moves a
configuration that would select it to the nearest one that does not (the knobs of the
combination back to exact, last knob first), so the tuner never measures it.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import IntegerType, ModuleOp

from approxcc import registry
from approxcc.config import load_config
from approxcc.diagnostics import CompileError
from approxcc.dialect import ML_SOURCE_ATTR
from approxcc.dialect.approx import KnobOp

MODES = ("static", "dynamic", "both")
KnobConfig = dict[str, dict[str, Any]]


@dataclass(frozen=True)
class Knob:
    name: str
    transform: str
    values: tuple[int, ...]
    exact: int | None     # None: no value is exact (an ML knob whose labels miss the exact one)
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


Choice = tuple[tuple[str, int | None], ...]   # (knob, config value) of one ML variant


@dataclass(frozen=True)
class KnobSpace:
    knobs: tuple[Knob, ...]
    unbuilt: tuple[Choice, ...] = ()   # ML variants with no binary for the target

    def __getitem__(self, name: str) -> Knob:
        return next(k for k in self.knobs if k.name == name)

    def exact_config(self) -> KnobConfig:
        """Every knob at its exact value (a knob without one is left out: that is exact)."""
        return {k.name: {"value": k.exact} for k in self.knobs if k.exact is not None}

    def selects(self, config: KnobConfig, choice: Choice) -> bool:
        """`config` may run the variant `choice` (a decision tree, on one of its leaves)."""
        for name, value in choice:
            entry = config.get(name)
            if entry is None:
                if value != self[name].exact:
                    return False
            elif value not in entry.get("decisions", [entry.get("value")]):
                return False
        return True

    def built(self, config: KnobConfig) -> KnobConfig:
        """`config`, or the nearest configuration that selects no unbuilt variant."""
        config = dict(config)
        while (bad := next((c for c in self.unbuilt if self.selects(config, c)), None)):
            name, value = next((n, v) for n, v in reversed(bad) if v != self[n].exact)
            exact = self[name].exact
            entry = config[name]
            if "decisions" in entry and exact is not None:
                config[name] = entry | {"decisions": [exact if d == value else d
                                                      for d in entry["decisions"]]}
            elif exact is None:
                del config[name]
            else:
                config[name] = {"value": exact}
        return canonical(config)

    def has_dynamic(self) -> bool:
        return any(k.dynamic for k in self.knobs)

    def restrict(self, allowed: dict[str, list[int]]) -> KnobSpace:
        """The same knobs with their values cut down to `allowed` (exact value always kept)."""
        knobs = []
        for k in self.knobs:
            keep = set(allowed.get(k.name, k.values)) | {k.exact}
            knobs.append(replace(k, values=tuple(v for v in k.values if v in keep)))
        return KnobSpace(tuple(knobs), self.unbuilt)

    def checked(self, path: Path) -> KnobConfig:
        """The knobs of the configuration file `path` (docs/config.md), checked against this
        space: an unknown knob or a value outside its knob's domain is the user's mistake,
        reported at the knob's key in the file."""
        knobs: KnobConfig = {}
        for name, s in load_config(str(path)).knobs.items():
            knob = next((k for k in self.knobs if k.name == name), None)
            if knob is None:
                raise CompileError(f"unknown knob '{name}' (the program has: "
                                   f"{', '.join(sorted(k.name for k in self.knobs))})", s.loc)
            values = [s.value] if s.decisions is None else list(s.decisions)
            if any(v not in knob.values for v in values):
                raise CompileError(f"knob '{name}': its values are {list(knob.values)}", s.loc)
            if s.decisions is None:
                knobs[name] = {"value": s.value}
            elif not knob.dynamic:
                raise CompileError(f"knob '{name}' is static: give {{\"value\": v}}", s.loc)
            elif len(s.decisions) != knob.thresholds + 1:
                raise CompileError(f"knob '{name}': needs {knob.thresholds} thresholds and "
                                   f"{knob.thresholds + 1} decisions", s.loc)
            else:
                knobs[name] = {"thresholds": list(s.thresholds or ()),
                               "decisions": list(s.decisions)}
        return knobs

    def to_json(self) -> list[dict[str, Any]]:
        """The knobs (and, when some ML variant is unbuilt, a last entry listing them)."""
        knobs = [k.__dict__ | {"values": list(k.values), "range": list(k.range)}
                 for k in self.knobs]
        return knobs + ([{"unbuilt": [dict(c) for c in self.unbuilt]}] if self.unbuilt else [])

    @staticmethod
    def from_json(data: list[dict[str, Any]]) -> KnobSpace:
        unbuilt = tuple(tuple(c.items()) for d in data for c in d.get("unbuilt", []))
        return KnobSpace(tuple(Knob(**(d | {"values": tuple(d["values"]),
                                            "range": tuple(d["range"])}))
                               for d in data if "unbuilt" not in d), unbuilt)


def knob_space(modules: list[ModuleOp]) -> KnobSpace:
    """Every approx.knob of the modules, in program order."""
    knobs: dict[str, Knob] = {}
    for module in modules:
        ml_exact = _ml_exact(module) if ML_SOURCE_ATTR in module.attributes else None
        for op in module.walk():
            if not isinstance(op, KnobOp) or op.knob_name.data in knobs:
                continue
            transform = op.transform_types.data[0].data
            spec = registry.get(transform)
            assert spec is not None  # verified: registered
            values_attr = op.param("values")
            values = tuple(a.value.data for a in values_attr.data) if values_attr else \
                (spec.exact,)
            exact = spec.exact if ml_exact is None else ml_exact.get(op.knob_name.data)
            knob = Knob(op.knob_name.data, transform, values, exact,
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


def _ml_exact(module: ModuleOp) -> dict[str, int]:
    """Knob -> exact config value of an ML module: the `approx.choice` of each decorated
    function's exact variant (the callee inside its knobs). For C the registry's exact value
    is a knob value; for ML it is an index into the knob's labels, wherever the exact one is."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import DictionaryAttr

    from approxcc.ml.ir import CHOICE_ATTR, FUNCTION_ATTR

    funcs = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    exact: dict[str, int] = {}
    for public in funcs.values():
        if FUNCTION_ATTR not in public.attributes:
            continue
        call = next(op for op in public.walk() if isinstance(op, func.CallOp))
        choice = funcs[call.callee.root_reference.data].attributes[CHOICE_ATTR]
        assert isinstance(choice, DictionaryAttr)  # verified: every variant has one
        exact |= {name: value.value.data for name, value in choice.data.items()}
    return exact


def ml_knob_space(manifest: str | Path, target: str) -> KnobSpace:
    """The knobs of an ML build (`approxcc model.py -o OUT`; `OUT/manifest.json`) as built
    for `target`: values that did not compile for it, or are broken, alone are dropped,
    such combinations are `unbuilt` (see the module docstring)."""
    data = json.loads(Path(manifest).read_text())
    if target not in data["targets"]:
        raise CompileError(f"{manifest}: not built for target {target} "
                           f"(built: {', '.join(data['targets'])})")
    knobs: list[Knob] = []
    unbuilt: list[Choice] = []
    for fn in data["functions"].values():
        exact = {k["name"]: k["exact"] for k in fn["knobs"]}
        failed = set(fn["failed"].get(target, []))
        if any(v["id"] in failed and v["choice"] == exact for v in fn["variants"]):
            raise CompileError(f"{manifest}: the exact variant of '{fn['loc']}' did not "
                               f"compile for {target}: nothing to tune")
        broken = {v["id"] for v in fn["variants"] if v.get("accuracy", {}).get("broken")}
        if any(v["id"] in broken and v["choice"] == exact for v in fn["variants"]):
            raise CompileError(f"{manifest}: the exact variant of '{fn['loc']}' is far from "
                               "the exact function on the example inputs (the build's "
                               "warning): nothing to tune against")
        failed |= broken
        choices = [tuple((k["name"], v["choice"][k["name"]]) for k in fn["knobs"]
                         if v["choice"][k["name"]] != k["exact"])
                   for v in fn["variants"] if v["id"] in failed]
        alone = {c[0] for c in choices if len(c) == 1}
        unbuilt += [c for c in choices if not any(a in c for a in alone)]
        for k in fn["knobs"]:
            spec = registry.get(k["transform"])
            values = tuple(v for v in k["domain"] if (k["name"], v) not in alone)
            knob = Knob(k["name"], k["transform"], values, k["exact"], loc=k["loc"],
                        ordered=spec is None or spec.domain is None or spec.domain.ordered)
            if k["state"] is not None:
                knob = replace(knob, dynamic=True, thresholds=k["thresholds"],
                               range=tuple(int(x) if float(x).is_integer() else x
                                           for x in k["range"]), float_state=True)
            knobs.append(knob)
    return KnobSpace(tuple(knobs), tuple(unbuilt))


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
        return self.space.built(config)

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
