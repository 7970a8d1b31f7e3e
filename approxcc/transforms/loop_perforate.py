"""loop_perforate: run every v-th iteration of the target loop.

The frontend normalizes counted loops to `scf.for %k = 0 to %trip step 1` with the body
recomputing the C induction variable from %k, so perforating by v is multiplying the step.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.arith import ConstantOp, IndexCastOp, MuliOp
from xdsl.dialects.builtin import IndexType
from xdsl.dialects.scf import ForOp
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from approxcc.diagnostics import CompileError
from approxcc.dialect import KnobOp, TransformOp
from approxcc.dialect.targets import knob_target, transform_knob
from approxcc.registry import KnobDomain, MLKnob, TransformSpec, register


def target_loop(transform: TransformOp) -> ForOp | None:
    """The first scf.for after the transform in its block."""
    op = transform.next_op
    while op is not None and not isinstance(op, ForOp):
        op = op.next_op
    return op


def _holds_loop(knob: KnobOp) -> bool:
    """The loop is at the top level of the knob's body, or of a knob stacked inside it."""
    return any(isinstance(op, ForOp) or isinstance(op, KnobOp) and _holds_loop(op)
               for op in knob.body.block.ops)


def verify_has_loop(knob: KnobOp, spec: TransformSpec) -> None:
    """A loop transform's knob holds its loop at the top level of its body or of the knobs
    stacked inside it (an ML knob, on a whole function, holds the loop inside the function
    it calls)."""
    if knob_target(knob) != "function" and not _holds_loop(knob):
        raise VerifyException(f"a {spec.name} knob must contain an scf.for at the top level "
                              "of its body")


class PerforateLoop(RewritePattern):
    """Multiplies the target loop's step by the transform value (static or dynamic)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, transform: TransformOp, rewriter: PatternRewriter, /) -> None:
        knob = transform_knob(transform)
        loop = target_loop(transform)
        if loop is None:
            raise CompileError("loop_perforate: no scf.for follows the approx.transform",
                               knob.source_loc)
        step_type = loop.step.type
        at_loop = InsertPoint.before(loop)
        factor: SSAValue
        if transform.transform_value is not None:
            value = transform.transform_value.value.data
            if value < 1:
                raise CompileError(f"loop_perforate: value {value} must be at least 1",
                                   knob.source_loc)
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


def _ml_label(v: Any) -> str | None:
    ok = isinstance(v, int) and not isinstance(v, bool) and v >= 1
    return None if ok else "must be an integer >= 1 (1 = exact)"


register(TransformSpec(
    name="loop_perforate",
    value_meaning="execute every `v`-th iteration (step × v); `1` = exact",
    exact=1,
    targets=frozenset({"loop"}),
    domain=KnobDomain(least=1, default=(1, 8)),
    verify=verify_has_loop,
    pattern=PerforateLoop(),
    ml=MLKnob(defaults=tuple(range(1, 9)), check=_ml_label, exact=1,
              meaning="integers >= 1: the outermost `lax.scan`/`fori_loop` runs ceil(n/v) "
                      "iterations"),
))
