"""A pass that checks the approx ops, then applies one rewrite pattern over the module."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriteWalker, RewritePattern

from approxcc.dialect import verify_knobs


@dataclass(frozen=True)
class KnobPatternPass(ModulePass):
    """A subclass names the pass (`name`) and its pattern class (`pattern`); the pattern
    then sees only verified knobs, and a mistake is reported at the knob's annotation."""

    pattern: ClassVar[type[RewritePattern]]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        verify_knobs(op)
        PatternRewriteWalker(self.pattern()).rewrite_module(op)

