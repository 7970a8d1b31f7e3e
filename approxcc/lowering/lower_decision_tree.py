"""approx-lower-decision-tree (paper step 3): decision tree → compare + select chain.

`decisions[0]` is the value below the first threshold; each threshold t_i in turn selects
`decisions[i + 1]` when `state >= t_i` (`arith.cmpi sge` / `arith.cmpf oge`), so the last
threshold the state reaches wins. No region is cloned: the knob body stays one copy.
"""

from __future__ import annotations

import math

from xdsl.dialects.arith import CmpfOp, CmpiOp, ConstantOp, SelectOp
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from approxcc.dialect import DecisionTreeOp
from approxcc.lowering.knob_pass import KnobPatternPass


def threshold_constant(threshold: int | float, state_type: Attribute) -> ConstantOp | None:
    """The threshold as a constant of the state's type, None when no state reaches it. For an
    integer state a fractional threshold rounds up (`s >= 2.5` ⇔ `s >= 3`) and one below the
    type's range clamps to its minimum (always reached)."""
    if isinstance(state_type, IntegerType):
        half = 1 << (state_type.width.data - 1)
        bound = math.ceil(threshold)
        if bound >= half:
            return None
        return ConstantOp(IntegerAttr(max(bound, -half), state_type))
    assert isinstance(state_type, AnyFloat)
    return ConstantOp(FloatAttr(float(threshold), state_type))


class LowerDecisionTree(RewritePattern):
    """Replaces `approx.decision_tree` (attribute or SSA form) by its select chain."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, tree: DecisionTreeOp, rewriter: PatternRewriter, /) -> None:
        state = tree.state
        new_ops: list[Operation] = []
        thresholds: list[SSAValue]
        decisions: list[SSAValue]
        if tree.is_ssa_form:
            thresholds, decisions = list(tree.threshold_values), list(tree.decision_values)
        else:
            assert tree.thresholds is not None and tree.decisions is not None  # verified
            reachable = [c for t in tree.thresholds
                         if (c := threshold_constant(t.value.data, state.type)) is not None]
            leaves = [ConstantOp(IntegerAttr(d.value.data, IndexType()))
                      for d in list(tree.decisions)[:len(reachable) + 1]]
            new_ops += [*reachable, *leaves]
            thresholds = [c.result for c in reachable]
            decisions = [c.result for c in leaves]
        chosen = decisions[0]
        for threshold, decision in zip(thresholds, decisions[1:], strict=True):
            reached = (CmpiOp(state, threshold, "sge") if isinstance(state.type, IntegerType)
                       else CmpfOp(state, threshold, "oge"))
            select = SelectOp(reached, decision, chosen)
            new_ops += [reached, select]
            chosen = select.result
        rewriter.replace(tree, new_ops, [chosen])


class LowerDecisionTreePass(KnobPatternPass):
    name = "approx-lower-decision-tree"
    pattern = LowerDecisionTree
