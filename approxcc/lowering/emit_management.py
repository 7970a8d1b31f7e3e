"""approx-emit-management (paper step 2): management ops inside each knob from its params.

A static knob gets `approx.transform "T" v` (the configured `params.value`, else T's exact
value); a dynamic knob gets `approx.decision_tree` over its state (its first block argument)
feeding `approx.transform "T" %v`, one pair per transform type, at the start of its body.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from approxcc.diagnostics import CompileError
from approxcc.dialect import DecisionTreeOp, KnobOp, TransformOp, verify_knobs
from approxcc.registry import (
    DEFAULT_RANGE,
    DEFAULT_THRESHOLD_COUNT,
    default_thresholds,
    exact_value,
)


def _int_param(knob: KnobOp, key: str, default: int) -> int:
    attr = knob.param(key)
    return attr.value.data if isinstance(attr, IntegerAttr) else default


def _default_tree_thresholds(knob: KnobOp) -> ArrayAttr:
    count = _int_param(knob, "thresholds", DEFAULT_THRESHOLD_COUNT)
    range_attr = knob.param("range")
    lo, hi = ((a.value.data for a in range_attr) if isinstance(range_attr, ArrayAttr)
              else DEFAULT_RANGE)
    thresholds = default_thresholds(count, lo, hi)
    if count < 0 or any(a >= b for a, b in zip(thresholds, thresholds[1:], strict=False)):
        raise CompileError(f"knob '{knob.knob_name.data}': range [{lo}, {hi}] has no room for "
                           f"{count} distinct integer thresholds", knob.source_loc)
    return ArrayAttr([IntegerAttr(t, i64) for t in thresholds])


class EmitStaticTransform(RewritePattern):
    """Puts `approx.transform "T" v` (v = params.value or T's exact value) at the start of a
    static knob's body, one per transform type. A dynamic knob with a configured static
    value is static too: its state is not consulted."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, knob: KnobOp, rewriter: PatternRewriter, /) -> None:
        configured = knob.param("value")
        if knob.is_dynamic and configured is None:
            return
        target = InsertPoint.before(knob.body.block.first_op)
        for transform_type in knob.transform_types:
            value = configured.value.data if isinstance(configured, IntegerAttr) \
                else exact_value(transform_type.data)
            rewriter.insert(TransformOp(transform_type, value), target)


class EmitDecisionTree(RewritePattern):
    """Puts `%v = approx.decision_tree %state ...` + `approx.transform "T" %v` at the start of
    a dynamic knob's body: the configured `decision_thresholds`/`decisions`, else thresholds
    evenly spaced inside `range` and every decision exact."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, knob: KnobOp, rewriter: PatternRewriter, /) -> None:
        if not knob.is_dynamic or knob.param("value") is not None:
            return
        thresholds = knob.param("decision_thresholds")
        decisions = knob.param("decisions")
        if not isinstance(thresholds, ArrayAttr):
            thresholds = _default_tree_thresholds(knob)
        state = knob.body.block.args[0]
        target = InsertPoint.before(knob.body.block.first_op)
        for transform_type in knob.transform_types:
            exact = ArrayAttr([IntegerAttr(exact_value(transform_type.data), i64)]
                              * (len(thresholds) + 1))
            tree = rewriter.insert(DecisionTreeOp(
                state, thresholds, decisions if isinstance(decisions, ArrayAttr) else exact,
                transform_type), target)
            rewriter.insert(TransformOp(transform_type, tree.index), target)


@dataclass(frozen=True)
class EmitManagementPass(ModulePass):
    name = "approx-emit-management"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        verify_knobs(op)
        # Not recursive: the knob matched stays the same op, it must not be revisited. No
        # DCE: the user's code (an empty loop) is the target, not dead weight.
        patterns = GreedyRewritePatternApplier([EmitStaticTransform(), EmitDecisionTree()],
                                               dce_enabled=False)
        PatternRewriteWalker(patterns, apply_recursively=False).rewrite_module(op)
