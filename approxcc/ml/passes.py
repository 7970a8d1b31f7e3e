"""The ML transforms as passes over the approx knobs of an ML module (see `ml/ir.py`).

`approx-ml-<transform>` (func-substitute, task-skipping, loop-perforate, quantize,
precision) finds, in every ML function, the knob of that transform and adds one variant
function per value of its domain (only the configured one after `approx-apply-config` sets
`params.value`, those a decision tree's `params.decisions` name) for every variant already
there: run them all and the module holds the
product of the knobs' domains, the variants `approxcc build` compiles. Each variant is the
StableHLO of `ml/transforms.make_variant` for its choice; transforms compose in the fixed
order documented there, whatever the order of the passes. Every knob lists the variants that
approximate it (its value is not the exact one) in `params.variants`, but a func_substitute
knob, whose `variants` are its substitutes (as in C, the symbols its values 1..n name).

`approx-ml-dispatch`, last, adds per choice of the static knobs a function dispatching on
the dynamic knobs' states to the variants of their values (`ml/dispatch.py`); the variants
of a function without dynamic knobs are a variant table, the runtime (`ml/runtime.py`)
picking one per call from the configuration.

`ML_PIPELINE` runs every ML pass. `ML_PASSES` maps their names to their classes (for a pass
pipeline parser).
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, ModuleOp, SymbolRefAttr
from xdsl.passes import ModulePass

from approxcc.dialect import KnobOp
from approxcc.ml.approx import Knob
from approxcc.ml.dispatch import Branch, add_dispatch, dispatch_name, dispatches_of
from approxcc.ml.ir import (
    CHOICE_ATTR,
    FUNCTION_ATTR,
    SOURCE_ATTR,
    VARIANT_OF,
    add_variant,
    exact_choice,
    export_variant,
    tensor_type,
    variant_name,
    verify,
)
from approxcc.ml.program import DecoratedFunction, MLProgram, load_program


@functools.lru_cache(maxsize=8)
def _program(path: str) -> MLProgram:
    return load_program(path)


def program_of(module: ModuleOp) -> MLProgram:
    """The Python program an ML module was emitted from (imported once per process)."""
    source = module.attributes.get(SOURCE_ATTR)
    if source is None:
        raise RuntimeError(f"not an ML module (no {SOURCE_ATTR} attribute)")
    return _program(str(Path(source.data)))  # type: ignore[attr-defined]


def variants_of(module: ModuleOp, name: str) -> list[func.FuncOp]:
    """The variant functions of the decorated function `name`, in module order."""
    return [op for op in module.ops if isinstance(op, func.FuncOp)
            and getattr(op.attributes.get(VARIANT_OF), "data", None) == name]


def choice_of(variant: func.FuncOp, fn: DecoratedFunction) -> dict[str, int | None]:
    attr = variant.attributes[CHOICE_ATTR]
    assert isinstance(attr, DictionaryAttr)
    given = {k: v.value.data for k, v in attr.data.items() if isinstance(v, IntegerAttr)}
    return {k: given.get(k, v) for k, v in exact_choice(fn).items()}


@dataclass(frozen=True)
class MLTransformPass(ModulePass):
    """Adds the variants of the knobs of one transform (see the module docstring)."""

    transform: ClassVar[str]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if SOURCE_ATTR not in op.attributes:   # not an ML module: nothing of ours
            return
        program = program_of(op)
        for public in [f for f in op.ops if FUNCTION_ATTR in f.attributes]:
            fn = program.functions[public.attributes[FUNCTION_ATTR].data]  # type: ignore[attr-defined]
            knobs = [k for k in public.walk() if isinstance(k, KnobOp)]
            for knob in knobs:
                if self.transform in (t.data for t in knob.transform_types):
                    self._expand(op, fn, knob)
            for knob in knobs:
                _list_variants(op, fn, knob)
        verify(op)

    def _expand(self, module: ModuleOp, fn: DecoratedFunction, knob: KnobOp) -> None:
        name = knob.knob_name.data
        exact = exact_choice(fn)[name]
        configured, decisions = knob.param("value"), knob.param("decisions")
        values_attr = knob.param("values")
        assert isinstance(values_attr, ArrayAttr)
        values = [v.value.data for v in values_attr]
        if isinstance(configured, IntegerAttr):
            values = [configured.value.data]
        elif isinstance(decisions, ArrayAttr):   # a decision tree: the values it decides
            values = [v for v in values if v in {d.value.data for d in decisions}]
        for variant in variants_of(module, fn.name):
            choice = choice_of(variant, fn)
            for v in values:
                if v != exact:
                    add_variant(module, fn, {**choice, name: v})


def _list_variants(module: ModuleOp, fn: DecoratedFunction, knob: KnobOp) -> None:
    if "func_substitute" in (t.data for t in knob.transform_types):
        return  # its variants are its substitutes (ml/ir.py), as in C
    name = knob.knob_name.data
    exact = exact_choice(fn)[name]
    approximate = [SymbolRefAttr(f.sym_name) for f in variants_of(module, fn.name)
                   if choice_of(f, fn)[name] != exact]
    if approximate:
        knob.params = DictionaryAttr({**knob.params.data, "variants": ArrayAttr(approximate)})


def _pass(transform: str) -> type[MLTransformPass]:
    cls = type(f"ML_{transform}", (MLTransformPass,), {
        "name": f"approx-ml-{transform.replace('_', '-')}", "transform": transform,
        "__doc__": f"approx-ml-{transform.replace('_', '-')}: the {transform} variants.",
        "__module__": __name__})
    return dataclass(frozen=True)(cls)


@dataclass(frozen=True)
class MLDispatchPass(ModulePass):
    """approx-ml-dispatch: per choice of the static knobs, a function dispatching on the
    dynamic knobs' states to the variants already in the module (`ml/dispatch.py`)."""

    name = "approx-ml-dispatch"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if SOURCE_ATTR not in op.attributes:
            return
        program = program_of(op)
        for public in [f for f in op.ops if FUNCTION_ATTR in f.attributes]:
            fn = program.functions[public.attributes[FUNCTION_ATTR].data]  # type: ignore[attr-defined]
            dynamic = [k for k in fn.afn.knobs if k.state is not None]
            if dynamic:
                _add_dispatches(op, fn, dynamic)


def _add_dispatches(module: ModuleOp, fn: DecoratedFunction, dynamic: list[Knob]) -> None:
    """One dispatch per choice of the static knobs whose variants cover the product of the
    dynamic knobs' values present (in domain order)."""
    names = [k.name for k in dynamic]
    groups: dict[tuple[tuple[str, int | None], ...], dict[tuple[int | None, ...],
                                                            func.FuncOp]] = {}
    for variant in variants_of(module, fn.name):
        choice = choice_of(variant, fn)
        static = tuple((k, v) for k, v in choice.items() if k not in names)
        groups.setdefault(static, {})[tuple(choice[k] for k in names)] = variant
    existing = {f.sym_name.data for f in dispatches_of(module, fn.name)}
    exact = exact_choice(fn)
    inputs = [tensor_type(a) for a in fn.inputs]
    for static, by_values in groups.items():
        values = [sorted({key[i] for key in by_values},
                         key=lambda v, k=k: k.domain.index(v) if v in k.domain else -1)
                  for i, k in enumerate(dynamic)]
        keys = list(itertools.product(*values))
        name = dispatch_name(variant_name(fn, {**exact, **dict(static)}))
        if name in existing or len(keys) < 2 or any(key not in by_values for key in keys):
            continue
        branches = []
        for key in keys:
            exported = export_variant(fn, {**dict(static), **dict(zip(names, key, strict=True))})
            n_w = len(exported.stored)
            branches.append(Branch(by_values[key], sum(j < n_w for j in exported.kept),
                                   [j - n_w for j in exported.kept if j >= n_w]))
        add_dispatch(module, fn.name, name, dict(static),
                     [(k.name, k.thresholds) for k in dynamic], values, branches, inputs)


# The order transforms compose in (ml/transforms.py), which is also the pipeline's; the
# dispatch comes last, over the variants they added.
ML_TRANSFORMS = ("func_substitute", "task_skipping", "loop_perforate", "quantize", "precision")
ML_PASSES: dict[str, type[ModulePass]] = {
    **{p.name: p for p in map(_pass, ML_TRANSFORMS)}, MLDispatchPass.name: MLDispatchPass}
ML_PIPELINE = ",".join(ML_PASSES)


def expand_all(module: ModuleOp) -> None:
    """Runs every ML pass: the module then holds every variant `approxcc build` compiles."""
    ctx = Context()
    for cls in ML_PASSES.values():
        cls().apply(ctx, module)
