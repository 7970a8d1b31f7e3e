"""loop_perforate: run every v-th iteration of the target loop.

The frontend normalizes counted loops to `scf.for %k = 0 to %trip step 1` with the body
recomputing the C induction variable from %k, so perforating by v is multiplying the step.
"""

from __future__ import annotations

from xdsl.dialects.arith import ConstantOp, IndexCastOp, MuliOp
from xdsl.dialects.builtin import IndexType
from xdsl.dialects.scf import ForOp
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from approxcc.diagnostics import CompileError
from approxcc.dialect import TransformOp, enclosing_knob


def _target_loop(transform: TransformOp) -> ForOp | None:
    """The first scf.for after the transform in its block."""
    op = transform.next_op
    while op is not None and not isinstance(op, ForOp):
        op = op.next_op
    return op


class PerforateLoop(RewritePattern):
    """Multiplies the target loop's step by the transform value (static or dynamic)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, transform: TransformOp, rewriter: PatternRewriter, /) -> None:
        loop = _target_loop(transform)
        if loop is None:
            knob = enclosing_knob(transform)
            raise CompileError("loop_perforate: no scf.for follows the approx.transform",
                               knob.source_loc if knob else None)
        step_type = loop.step.type
        at_loop = InsertPoint.before(loop)
        factor: SSAValue
        if transform.transform_value is not None:
            value = transform.transform_value.value.data
            if value < 1:
                knob = enclosing_knob(transform)
                raise CompileError(f"loop_perforate: value {value} must be at least 1",
                                   knob.source_loc if knob else None)
            if value == 1:  # exact: the loop stays as it is
                rewriter.erase(transform)
                return
            factor = rewriter.insert(ConstantOp.from_int_and_width(value, step_type),
                                     at_loop).result
        else:
            factor = transform.dynamic_value
            if not isinstance(step_type, IndexType):
                factor = rewriter.insert(IndexCastOp(factor, step_type), at_loop).result
        step = rewriter.insert(MuliOp(loop.step, factor), at_loop).result
        loop.operands[2] = step
        rewriter.notify_op_modified(loop)
        rewriter.erase(transform)
