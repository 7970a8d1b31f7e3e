"""task_skipping: value 1 skips the target statement, 0 runs it.

Static 1 erases the target; a dynamic value guards it with `scf.if (v == 0)`. A knob whose
target yields values cannot be skipped (nothing would define them).
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, Region
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from approxcc.dialect import TransformOp
from approxcc.lowering.lower_try import APPROXIMATED
from approxcc.lowering.targets import knob_error, target_ops, transform_knob


class SkipTask(RewritePattern):
    """Erases the target (static 1) or runs it only when the dynamic value is 0."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, transform: TransformOp, rewriter: PatternRewriter, /) -> None:
        knob = transform_knob(transform)
        value = transform.transform_value
        if value is not None and value.value.data not in (0, 1):
            raise knob_error(knob, f"task_skipping: value {value.value.data} must be 0 or 1")
        body = target_ops(transform)
        # A knob with a check yields whether it approximated last: not the target's result.
        results = knob.res[:-1] if APPROXIMATED in knob.attributes else knob.res
        if (value is None or value.value.data == 1) and results:
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
