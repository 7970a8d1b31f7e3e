"""A knob's params with a configuration's setting written in, each value checked against
the knob's domain and its transform's (the registry's). Shared by the C pass
(approx-apply-config) and the ML build, which both configure knobs."""

from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FloatAttr, IntegerAttr, i64

from approxcc import registry
from approxcc.config import KnobSetting
from approxcc.diagnostics import CompileError
from approxcc.dialect.approx import KnobOp


def _thresholds(values: tuple[int | float, ...]) -> ArrayAttr:
    """Integer thresholds stay i64; one float makes them all f64 (one state type per tree)."""
    if all(isinstance(v, int) for v in values):
        return ArrayAttr([IntegerAttr(v, i64) for v in values])
    return ArrayAttr([FloatAttr(float(v), 64) for v in values])


def configured_params(knob: KnobOp, setting: KnobSetting) -> DictionaryAttr:
    """The knob's params with the setting written in; a value outside the knob's domain is
    the user's mistake, reported at the setting."""
    params = dict(knob.params.data)
    domain = knob.param("values")
    allowed = [v.value.data for v in domain] if isinstance(domain, ArrayAttr) else None
    # Without `values`, the transform's own domain (registry) bounds what a value may be.
    specs = [registry.get(t.data) for t in knob.transform_types]
    variants = knob.param("variants")
    n_variants = len(variants) if isinstance(variants, ArrayAttr) else 0

    def check(values: tuple[int, ...]) -> None:
        if allowed is not None and (bad := [v for v in values if v not in allowed]):
            raise CompileError(f"knob '{setting.name}': value {bad[0]} is outside its domain "
                               f"{allowed}", setting.loc)
        for spec in specs:
            if spec is None or spec.domain is None:
                continue
            if bad := [v for v in values if not spec.domain.allows(v, n_variants)]:
                raise CompileError(f"knob '{setting.name}': value {bad[0]} is not valid for "
                                   f"'{spec.name}' ({spec.domain.meaning(n_variants)})",
                                   setting.loc)

    if setting.value is not None:
        check((setting.value,))
        params["value"] = IntegerAttr(setting.value, i64)
    elif setting.thresholds is not None and setting.decisions is not None:
        if not knob.is_dynamic:
            raise CompileError(f"knob '{setting.name}' is static: it takes {{\"value\": v}}, "
                               "not thresholds and decisions", setting.loc)
        check(setting.decisions)
        count = knob.param("thresholds")
        if isinstance(count, IntegerAttr) and count.value.data != len(setting.thresholds):
            raise CompileError(f"knob '{setting.name}' has {count.value.data} thresholds, "
                               f"the configuration gives {len(setting.thresholds)}", setting.loc)
        params["decision_thresholds"] = _thresholds(setting.thresholds)
        params["decisions"] = ArrayAttr([IntegerAttr(d, i64) for d in setting.decisions])
    return DictionaryAttr(params)
