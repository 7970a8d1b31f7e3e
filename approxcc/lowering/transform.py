"""approx-transform (paper step 5): rewrite each approx.transform with its transform's pattern.

The patterns are the registered transforms' (`approxcc.registry`, one module each under
approxcc/transforms). A knob that approx-lower-try gave an `approximated` result learns here
whether it approximates.
"""

from __future__ import annotations

from typing import cast

from xdsl.dialects.arith import CmpiOp, ConstantOp, OrIOp
from xdsl.dialects.builtin import IndexType, IntegerAttr, i1
from xdsl.ir import BlockArgument
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from approxcc import registry
from approxcc.dialect import TransformOp, YieldOp
from approxcc.dialect.targets import APPROXIMATED, knob_error, transform_knob
from approxcc.lowering.knob_pass import KnobPatternPass


class DispatchTransform(RewritePattern):
    """Hands each approx.transform to the pattern registered for its transform_type."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, transform: TransformOp, rewriter: PatternRewriter, /) -> None:
        name = transform.transform_type.data
        spec = registry.get(name)
        knob = transform_knob(transform)
        if spec is None or spec.pattern is None:  # registered (verified), but not for C
            raise knob_error(knob, f"transform '{name}' has no lowering for C code")
        if APPROXIMATED in knob.attributes:
            _record_approximation(transform, spec.exact, rewriter)
        spec.pattern.match_and_rewrite(transform, rewriter)


def _record_approximation(transform: TransformOp, exact: int,
                          rewriter: PatternRewriter) -> None:
    """ORs `value != exact` into the knob's yielded `approximated` flag, computed before the
    transform (so before the target, which the transform may erase or move)."""
    terminator = cast(YieldOp, transform_knob(transform).body.block.last_op)  # verified
    flag = terminator.operands[-1]
    at = InsertPoint.before(transform)
    if transform.transform_value is not None:
        approximating = rewriter.insert(ConstantOp.from_int_and_width(
            int(transform.transform_value.value.data != exact), i1), at).result
    else:
        exact_value = rewriter.insert(ConstantOp(IntegerAttr(exact, IndexType())), at)
        approximating = rewriter.insert(CmpiOp(transform.dynamic_value, exact_value, "ne"),
                                        at).result
    if isinstance(flag, BlockArgument):  # lower-try's `false`: nothing approximated yet
        terminator.operands = [*terminator.operands[:-1], approximating]
    else:  # an earlier transform of this knob approximates too
        later = flag.owner if transform.is_before_in_block(flag.owner) else approximating.owner
        either = rewriter.insert(OrIOp(flag, approximating), InsertPoint.after(later))
        terminator.operands = [*terminator.operands[:-1], either.result]
    rewriter.notify_op_modified(terminator)


class TransformPass(KnobPatternPass):
    name = "approx-transform"
    pattern = DispatchTransform
