"""approx-transform (paper step 5): rewrite each approx.transform with its transform's pattern.

Adding a transform = adding one pattern file and one entry in `TRANSFORM_PATTERNS`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from approxcc.diagnostics import CompileError
from approxcc.dialect import TransformOp, enclosing_knob, verify_knobs
from approxcc.lowering.loop_perforate import PerforateLoop

TRANSFORM_PATTERNS: dict[str, RewritePattern] = {
    "loop_perforate": PerforateLoop(),
}


class DispatchTransform(RewritePattern):
    """Hands each approx.transform to the pattern registered for its transform_type."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, transform: TransformOp, rewriter: PatternRewriter, /) -> None:
        transform_type = transform.transform_type.data
        pattern = TRANSFORM_PATTERNS.get(transform_type)
        if pattern is None:
            knob = enclosing_knob(transform)
            raise CompileError(f"transform '{transform_type}' is not implemented yet",
                               knob.source_loc if knob else None)
        pattern.match_and_rewrite(transform, rewriter)


@dataclass(frozen=True)
class TransformPass(ModulePass):
    name = "approx-transform"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        verify_knobs(op)
        PatternRewriteWalker(DispatchTransform()).rewrite_module(op)
