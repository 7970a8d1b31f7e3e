"""task_skipping: skip a statement (C) or model layers (ML).

Value 1 skips the target statement, 0 runs it: static 1 erases the target; a dynamic value
guards it with `scf.if (v == 0)`. A knob whose target yields values cannot be skipped
(nothing would define them). In the ML half, value k skips model layers.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, Region
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from approxcc.dialect import TransformOp
from approxcc.dialect.targets import knob_error, target_ops, target_results, transform_knob
from approxcc.registry import KnobDomain, MLKnob, TransformSpec, register


class SkipTask(RewritePattern):
    """Erases the target (static 1) or runs it only when the dynamic value is 0."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, transform: TransformOp, rewriter: PatternRewriter, /) -> None:
        knob = transform_knob(transform)
        value = transform.transform_value
        if value is not None and value.value.data not in (0, 1):
            raise knob_error(knob, f"task_skipping: value {value.value.data} must be 0 or 1")
        body = target_ops(transform)
        if (value is None or value.value.data == 1) and target_results(knob):
            raise knob_error(knob, "task_skipping: a target that yields values cannot be "
                                   "skipped")
        if value is not None:
            if value.value.data == 1:
                for op in reversed(body):
                    rewriter.erase(op)
        elif body:
            zero = rewriter.insert(arith.ConstantOp(IntegerAttr(0, IndexType())),
                                   InsertPoint.before(body[0]))
            run = rewriter.insert(arith.CmpiOp(transform.dynamic_value, zero, "eq"),
                                  InsertPoint.before(body[0]))
            guarded = Block()
            rewriter.insert(scf.IfOp(run, [], Region(guarded)), InsertPoint.before(body[0]))
            for op in body:
                op.detach()
            guarded.add_ops([*body, scf.YieldOp()])
        rewriter.erase(transform)


def _ml_label(v: Any) -> str | None:
    """ML: how many layers (from the top) or which layers are skipped."""
    if isinstance(v, int) and not isinstance(v, bool):
        return None if v >= 0 else "must be >= 0 (the number of layers skipped)"
    if isinstance(v, tuple) and all(isinstance(i, int) and i >= 0 for i in v) \
            and len(set(v)) == len(v):
        return None
    return "must be a layer count or a tuple of distinct layer indices"


register(TransformSpec(
    name="task_skipping",
    value_meaning="`0` = run it, `1` = skip it",
    exact=0,
    targets=frozenset({"statement"}),
    domain=KnobDomain(least=0, most=1, default=(0, 1)),
    pattern=SkipTask(),
    ml=MLKnob(defaults=(0, 1), check=_ml_label, exact=0,
              meaning="`k` skips the last k layers of `weights[\"layers\"]`, a tuple skips "
                      "those layer indices"),
))
