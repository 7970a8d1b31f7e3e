"""loop_perforate: run every v-th iteration of the target loop.

The frontend normalizes counted loops to `scf.for %k = 0 to %trip step 1` with the body
recomputing the C induction variable from %k, so perforating by v is multiplying the step.
"""

from __future__ import annotations

from typing import Any, cast

from xdsl.dialects import llvm
from xdsl.dialects.arith import ConstantOp, IndexCastOp, MuliOp
from xdsl.dialects.builtin import IndexType
from xdsl.dialects.scf import ForOp
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint
from xdsl.traits import is_side_effect_free
from xdsl.utils.exceptions import VerifyException

from approxcc.diagnostics import CompileError
from approxcc.dialect import KnobOp, TransformOp
from approxcc.dialect.targets import knob_target, transform_knob
from approxcc.registry import KnobDomain, MLKnob, TransformSpec, register


def target_loop(transform: TransformOp) -> ForOp | None:
    """The first scf.for after the transform in its block, or inside the knob stacked
    after it (two annotations on one loop: the outer knob's loop is the inner one's)."""
    op = transform.next_op
    while op is not None and not isinstance(op, ForOp | KnobOp):
        op = op.next_op
    if isinstance(op, KnobOp):
        return _first_loop(op)
    return op


def _first_loop(knob: KnobOp) -> ForOp | None:
    for op in knob.body.block.ops:
        if isinstance(op, ForOp):
            return op
        if isinstance(op, KnobOp):
            return _first_loop(op)
    return None


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
            if loop.parent_op() is not transform.parent_op():
                factor = _copied_into(factor, at_loop, rewriter, knob)
            if not isinstance(step_type, IndexType):
                factor = rewriter.insert(IndexCastOp(factor, step_type), at_loop).result
        step = rewriter.insert(MuliOp(loop.step, factor), at_loop).result
        loop.operands[2] = step
        rewriter.notify_op_modified(loop)
        rewriter.erase(transform)


def _copied_into(value: SSAValue, at: InsertPoint, rewriter: PatternRewriter,
                 knob: KnobOp) -> SSAValue:
    """`value` recomputed at `at`, inside the knob stacked on this one: a knob is isolated
    from above, so the value crosses only if it depends on nothing of this knob's body but
    what can be recomputed (a tunable build's load from the knob table is; a decision on
    this knob's runtime state is not)."""
    op = value.owner if isinstance(value, OpResult) else None
    if op is None or op.regions or not _recomputable(op):
        raise CompileError("loop_perforate: a dynamic knob cannot be stacked on another "
                           "knob of its loop; make it the innermost annotation",
                           knob.source_loc)
    operands = [_copied_into(o, at, rewriter, knob) for o in op.operands]
    copy = op.clone()
    copy.operands = operands
    rewriter.insert(copy, at)
    return copy.results[cast(OpResult, value).index]


def _recomputable(op: Operation) -> bool:
    """Pure, or a read of a global (the knob table does not change inside a knob)."""
    return isinstance(op, llvm.LoadOp | llvm.AddressOfOp) or is_side_effect_free(op)


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
