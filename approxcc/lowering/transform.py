"""approx-transform (paper step 5): rewrite each approx.transform with its transform's pattern.

Adding a transform = adding one pattern file and one entry in `TRANSFORM_PATTERNS`. A knob
that approx-lower-try gave an `approximated` result learns here whether it approximates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects.arith import CmpiOp, ConstantOp, OrIOp
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, i1
from xdsl.ir import BlockArgument
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from approxcc.dialect import TRANSFORMS, TransformOp, YieldOp, verify_knobs
from approxcc.lowering.func_substitute import SubstituteFunction
from approxcc.lowering.loop_perforate import PerforateLoop
from approxcc.lowering.lower_try import APPROXIMATED
from approxcc.lowering.memoize import MemoizeResult
from approxcc.lowering.targets import transform_knob
from approxcc.lowering.task_skipping import SkipTask

TRANSFORM_PATTERNS: dict[str, RewritePattern] = {
    "loop_perforate": PerforateLoop(),
    "func_substitute": SubstituteFunction(),
    "task_skipping": SkipTask(),
    "memoize": MemoizeResult(),
}


class DispatchTransform(RewritePattern):
    """Hands each approx.transform to the pattern registered for its transform_type."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, transform: TransformOp, rewriter: PatternRewriter, /) -> None:
        pattern = TRANSFORM_PATTERNS[transform.transform_type.data]  # verified: registered
        if APPROXIMATED in transform_knob(transform).attributes:
            _record_approximation(transform, rewriter)
        pattern.match_and_rewrite(transform, rewriter)


def _record_approximation(transform: TransformOp, rewriter: PatternRewriter) -> None:
    """ORs `value != exact` into the knob's yielded `approximated` flag, computed before the
    transform (so before the target, which the transform may erase or move)."""
    terminator = cast(YieldOp, transform_knob(transform).body.block.last_op)  # verified
    flag = terminator.operands[-1]
    exact = TRANSFORMS[transform.transform_type.data]
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


@dataclass(frozen=True)
class TransformPass(ModulePass):
    name = "approx-transform"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        verify_knobs(op)
        PatternRewriteWalker(DispatchTransform()).rewrite_module(op)
