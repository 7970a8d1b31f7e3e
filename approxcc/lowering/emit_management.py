"""approx-emit-management (paper step 2): management ops inside each knob from its params."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from approxcc.diagnostics import CompileError
from approxcc.dialect import TRANSFORMS, KnobOp, TransformOp, verify_knobs


class EmitStaticTransform(RewritePattern):
    """Puts `approx.transform {transform_value = params.value or exact}` at the start of a
    static knob's body, one per transform type."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, knob: KnobOp, rewriter: PatternRewriter, /) -> None:
        if knob.param("dynamic") is not None:
            raise CompileError(
                f"knob '{knob.knob_name.data}': dynamic knobs (state) are not supported yet",
                knob.source_loc)
        configured = knob.param("value")
        target = knob.body.block.first_op
        for transform_type in knob.transform_types:
            value = configured if configured is not None else IntegerAttr(
                TRANSFORMS[transform_type.data], i64)
            rewriter.insert(
                TransformOp.create(properties={"transform_type": transform_type,
                                               "transform_value": value}),
                InsertPoint.before(target))


@dataclass(frozen=True)
class EmitManagementPass(ModulePass):
    name = "approx-emit-management"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        verify_knobs(op)
        # Not recursive: the knob matched stays the same op, it must not be revisited.
        PatternRewriteWalker(EmitStaticTransform(), apply_recursively=False).rewrite_module(op)

