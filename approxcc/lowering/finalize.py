"""approx-finalize: inline knob bodies into their parents; afterwards no approx op remains."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from approxcc.diagnostics import CompileError
from approxcc.dialect import KnobOp, YieldOp, enclosing_knob, verify_knobs


class InlineKnob(RewritePattern):
    """Replaces a knob by its body: block args → knob operands, knob results → yielded values."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, knob: KnobOp, rewriter: PatternRewriter, /) -> None:
        block = knob.body.block
        terminator = cast(YieldOp, block.last_op)  # verify_knobs checked the terminator
        # a yielded block argument is the knob's operand once the block is inlined
        yielded = [knob.args[v.index] if isinstance(v, BlockArgument) and v.block is block
                   else v for v in terminator.arguments]
        rewriter.erase(terminator)
        rewriter.inline_block(block, InsertPoint.before(knob), knob.args)
        rewriter.replace(knob, [], yielded)


@dataclass(frozen=True)
class FinalizePass(ModulePass):
    name = "approx-finalize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        verify_knobs(op)
        # Knobs and their yields are all that inlining removes, so any other approx op would
        # remain afterwards; report it now, while its knob still gives it a location.
        for left in op.walk():
            if left.dialect_name() == "approx" and not isinstance(left, KnobOp) and not (
                    isinstance(left, YieldOp) and isinstance(left.parent_op(), KnobOp)):
                knob = enclosing_knob(left)
                raise CompileError(f"'{left.name}' would remain after approx-finalize "
                                   "(run the passes that lower it first)",
                                   knob.source_loc if knob else None)
        PatternRewriteWalker(InlineKnob()).rewrite_module(op)
