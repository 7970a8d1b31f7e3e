"""memoize (temporal): reuse the last result of a call instead of recomputing it.

Recompute on one call in v, reuse the last result otherwise. Per knob, two internal
globals: a call counter (i64) and the last result. The target (the one call of
`params.callee`, or the whole body of a `"function"` knob) becomes

    count = load @counter
    store count + 1, @counter
    result = scf.if (count % v == 0) { recompute; store result, @last } else { load @last }

so the first call always computes. A dynamic v below 1 counts as 1 (exact).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects import arith, llvm, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from approxcc.dialect import KnobOp, TransformOp, YieldOp
from approxcc.dialect.targets import (
    knob_error,
    knob_target,
    target_call,
    target_ops,
    transform_knob,
)
from approxcc.registry import KnobDomain, TransformSpec, register


def _global(knob: KnobOp, suffix: str, type: Attribute, at: InsertPoint,
            rewriter: PatternRewriter) -> SSAValue:
    """Adds an internal, zero-initialized global for `knob` to the module; returns its
    address, taken at `at`."""
    module = knob.get_toplevel_object()
    assert isinstance(module, ModuleOp)
    name = f"__approx_memoize_{knob.knob_name.data}_{suffix}"
    zero = IntegerAttr(0, type) if isinstance(type, IntegerType) else FloatAttr(0.0, type)
    rewriter.insert(llvm.GlobalOp(type, name, "internal", value=zero),
                    InsertPoint.at_end(module.body.block))
    return rewriter.insert(llvm.AddressOfOp(name, llvm.LLVMPointerType()), at).result


def _period(transform: TransformOp, at: InsertPoint, rewriter: PatternRewriter) -> SSAValue:
    """v as an i64, at least 1."""
    if transform.transform_value is not None:
        return rewriter.insert(arith.ConstantOp(transform.transform_value), at).result
    value = rewriter.insert(arith.IndexCastOp(transform.dynamic_value, i64), at).result
    one = rewriter.insert(arith.ConstantOp(IntegerAttr(1, i64)), at).result
    return rewriter.insert(arith.MaxUIOp(value, one), at).result


class MemoizeResult(RewritePattern):
    """Recomputes the target's scalar result on one call in v; reuses the last one otherwise."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, transform: TransformOp, rewriter: PatternRewriter, /) -> None:
        knob = transform_knob(transform)
        value = transform.transform_value
        if value is not None and value.value.data < 1:
            raise knob_error(knob, f"memoize: value {value.value.data} must be at least 1")
        recompute: Sequence[Operation]
        if knob_target(knob) == "call":
            call = target_call(transform, "memoize")
            recompute, results, anchor = [call], call.results, call
        elif knob_target(knob) == "function":
            terminator = cast(YieldOp, knob.body.block.last_op)  # verified
            recompute, results, anchor = target_ops(transform), terminator.operands, terminator
        else:
            raise knob_error(knob, "memoize: params.target must be \"call\" or \"function\"")
        if len(results) != 1 or not isinstance(results[0].type, IntegerType | AnyFloat):
            raise knob_error(knob, "memoize: the target must compute one integer or float "
                                   f"result, got ({', '.join(str(r.type) for r in results)})")
        if value is None or value.value.data > 1:
            self._memoize(transform, list(recompute), results[0], anchor, rewriter)
        rewriter.erase(transform)

    @staticmethod
    def _memoize(transform: TransformOp, recompute: list[Operation], result: SSAValue,
                 anchor: Operation, rewriter: PatternRewriter) -> None:
        knob = transform_knob(transform)
        at = InsertPoint.before(anchor)
        counter = _global(knob, "count", i64, at, rewriter)
        last = _global(knob, "last", result.type, at, rewriter)
        count = rewriter.insert(llvm.LoadOp(counter, i64), at).dereferenced_value
        one = rewriter.insert(arith.ConstantOp(IntegerAttr(1, i64)), at)
        # Counting before recomputing lets a recursive target see its own call counted.
        rewriter.insert(llvm.StoreOp(rewriter.insert(arith.AddiOp(count, one), at), counter), at)
        phase = rewriter.insert(arith.RemUIOp(count, _period(transform, at, rewriter)), at)
        zero = rewriter.insert(arith.ConstantOp(IntegerAttr(0, i64)), at)
        fresh = rewriter.insert(arith.CmpiOp(phase, zero, "eq"), at)
        compute = Block()
        reuse = llvm.LoadOp(last, result.type)
        choose = rewriter.insert(
            scf.IfOp(fresh, [result.type], Region(compute),
                     Region(Block([reuse, scf.YieldOp(reuse.dereferenced_value)]))), at)
        for op in recompute:
            op.detach()
        compute.add_ops(recompute)
        rewriter.replace_uses_with_if(result, choose.results[0],
                                      lambda use: not choose.is_ancestor(use.operation))
        compute.add_ops([llvm.StoreOp(result, last), scf.YieldOp(result)])


register(TransformSpec(
    name="memoize",
    value_meaning="recompute on one call in `v`, reuse the last result otherwise; `1` = exact",
    exact=1,
    targets=frozenset({"call", "function"}),
    domain=KnobDomain(least=1, default=(1, 8)),
    scalar_result=True,
    pattern=MemoizeResult(),
))
