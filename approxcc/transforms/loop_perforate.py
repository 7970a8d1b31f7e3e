"""loop_perforate: run every v-th iteration of the target loop.

The frontend normalizes counted loops to `scf.for %k = 0 to %trip step 1` with the body
recomputing the C induction variable from %k, so perforating by v is multiplying the step.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

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


def _loop_among(ops: Iterable[Operation]) -> ForOp | None:
    """The first scf.for among `ops`, or inside the first knob among them (annotations
    stacked on one loop nest their knobs: the outer knob's loop is the inner one's)."""
    for op in ops:
        if isinstance(op, ForOp):
            return op
        if isinstance(op, KnobOp):
            return _loop_among(op.body.block.ops)
    return None


def _after(op: Operation) -> Iterator[Operation]:
    while (op := op.next_op) is not None:
        yield op


def target_loop(transform: TransformOp) -> ForOp | None:
    """The loop that follows the transform in its block (maybe inside a stacked knob)."""
    return _loop_among(_after(transform))


def verify_has_loop(knob: KnobOp, spec: TransformSpec) -> None:
    """A loop transform's knob holds its loop at the top level of its body or of the knobs
    stacked inside it (an ML knob, on a whole function, holds the loop inside the function
    it calls)."""
    if knob_target(knob) != "function" and _loop_among(knob.body.block.ops) is None:
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
    if not isinstance(value, OpResult) or value.owner.regions or not _recomputable(value.owner):
        raise CompileError("loop_perforate: a dynamic knob cannot be stacked on another "
                           "knob of its loop; make it the innermost annotation",
                           knob.source_loc)
    copy = value.owner.clone()
    copy.operands = [_copied_into(o, at, rewriter, knob) for o in value.owner.operands]
    rewriter.insert(copy, at)
    return copy.results[value.index]


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
