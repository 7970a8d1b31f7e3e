"""approx-lower-try: the safety contract (`approx.try`) → check after the knob + `scf.if`.

Runs before any management or transform exists, while the knob body is still the exact
target followed by the try. The check only judges approximate runs (an exact run matches
the program without annotations), so the knob gains a last result, `approximated` (i1): the
knob yields a `false` it receives as its last operand, and approx-transform ORs in whether
each transform approximates (knobs carrying the `approx.approximated` attribute). After the
knob:

    scf.if %approximated {
      check ops (the knob's block arguments → its operands)
      scf.if (!check) { recover }
    }

where the recover is the recover region's ops or, for `recover(exact)`, a clone of the exact
target: the one place a region is copied. The clone sits outside the knob, so no transform
touches it; knobs nested in the clone are inlined, they stay exact too. Before the clone,
what the target wrote is restored from a checkpoint taken just before the knob
(lowering/checkpoint.py), so the exact re-run starts where the approximate run started.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import StringAttr, UnitAttr, i1
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter

from approxcc.diagnostics import warn
from approxcc.dialect import DecisionTreeOp, KnobOp, TransformOp, TryOp, YieldOp
from approxcc.dialect.targets import APPROXIMATED, knob_error
from approxcc.lowering.bind_runtime import check_calls
from approxcc.lowering.checkpoint import Checkpoint, written_memory
from approxcc.lowering.knob_pass import KnobPatternPass


def _exact_clone(knob: KnobOp) -> list[Operation]:
    """The knob's target, cloned outside it, with nested knobs inlined and tries dropped."""
    mapping: dict[SSAValue, SSAValue] = dict(zip(knob.body.block.args, knob.args, strict=True))
    clone = [op.clone(mapping) for op in knob.body.block.ops
             if not isinstance(op, TryOp | YieldOp)]
    holder = Block(clone)
    for nested in reversed([op for root in clone for op in root.walk()
                            if isinstance(op, KnobOp | TryOp)]):
        if isinstance(nested, TryOp):
            Rewriter.erase_op(nested)
            continue
        inner = nested.body.block
        yielded = list(cast(YieldOp, inner.last_op).arguments)
        Rewriter.erase_op(cast(YieldOp, inner.last_op))
        Rewriter.inline_block(inner, InsertPoint.before(nested), nested.args)
        Rewriter.replace_op(nested, [], yielded)
    ops = list(holder.ops)
    for op in ops:
        op.detach()
    return ops


def _checkpoint(knob: KnobOp, try_op: TryOp) -> list[Operation]:
    """Saves what the target writes before the knob; returns the ops that restore it. What
    cannot be bounded is reported once per pointer it is written through."""
    writes = written_memory(knob, try_op)
    for what in dict.fromkeys(what for _, what in writes.unbounded):
        ops = sorted({op.name for op, w in writes.unbounded if w == what})
        warn(f"knob '{knob.knob_name.data}': recover(exact) cannot restore memory written "
             f"through {what} ({', '.join(ops)}); the exact re-run starts from what the "
             "approximate run left there", knob.source_loc, "-Wapprox-recover")
    checkpoint = Checkpoint(knob, writes.objects)
    checkpoint.save()
    return checkpoint.restore()


def _region_ops(region: Region) -> tuple[list[Operation], Sequence[SSAValue]]:
    """A try region's ops without the terminator, and the values it yields."""
    block = region.block
    terminator = cast(YieldOp, block.last_op)
    ops = [op for op in block.ops if op is not terminator]
    for op in ops:
        op.detach()
    return ops, terminator.arguments


class LowerTry(RewritePattern):
    """Moves a knob's check after the knob and recovers under `scf.if (!check)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, try_op: TryOp, rewriter: PatternRewriter, /) -> None:
        knob = try_op.parent_op()
        if not isinstance(knob, KnobOp):
            return
        if knob.res:
            raise knob_error(knob, "check is not supported on knobs with results")
        target = knob.param("target")
        if isinstance(target, StringAttr) and target.data == "function":
            raise knob_error(knob, "check is not supported on \"function\" targets")
        if any(isinstance(op, TransformOp | DecisionTreeOp) for op in knob.walk()):
            raise knob_error(knob, "approx-lower-try must run before approx-emit-management")
        check_calls(knob, try_op.walk())
        for arg, operand in zip(knob.body.block.args, knob.args, strict=True):
            rewriter.replace_uses_with_if(arg, operand,
                                          lambda use: try_op.is_ancestor(use.operation))
        if isinstance(try_op.recover, StringAttr):  # recover(exact)
            recover = [*_checkpoint(knob, try_op), *_exact_clone(knob)]
        else:
            recover, _ = _region_ops(try_op.recovery)
        check, (ok,) = _region_ops(try_op.check)
        true = arith.ConstantOp.from_int_and_width(1, i1)
        rejected = arith.XOrIOp(ok, true)
        recovery = scf.IfOp(rejected, [], Region(Block([*recover, scf.YieldOp()])))
        exact = rewriter.insert(arith.ConstantOp.from_int_and_width(0, i1),
                                InsertPoint.before(knob))
        flagged = _with_approximated_result(knob, exact.result, rewriter)
        rewriter.insert(scf.IfOp(flagged.res[-1], [], Region(Block(
            [*check, true, rejected, recovery, scf.YieldOp()]))), InsertPoint.after(flagged))
        rewriter.erase(try_op)


def _with_approximated_result(knob: KnobOp, exact: SSAValue,
                              rewriter: PatternRewriter) -> KnobOp:
    """The knob rebuilt with `exact` as a new last operand, yielded as a new last result."""
    block = knob.body.block
    flag = block.insert_arg(exact.type, len(block.args))
    terminator = cast(YieldOp, block.last_op)
    terminator.operands = [*terminator.operands, flag]
    flagged = KnobOp.create(operands=[*knob.args, exact],
                            result_types=[*knob.result_types, exact.type],
                            properties=dict(knob.properties),
                            attributes={**knob.attributes, APPROXIMATED: UnitAttr()},
                            regions=[knob.detach_region(knob.body)])
    rewriter.replace(knob, flagged, flagged.res[:-1])
    return flagged


class LowerTryPass(KnobPatternPass):
    name = "approx-lower-try"
    pattern = LowerTry
