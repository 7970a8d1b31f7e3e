"""Where a transform finds its target inside a knob body, and errors located at the knob.

Shared by the transform patterns (approxcc/transforms) and the lowering passes around them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr, SymbolRefAttr
from xdsl.ir import Operation, OpResult

from approxcc.diagnostics import CompileError
from approxcc.dialect.approx import DecisionTreeOp, KnobOp, TransformOp, TryOp, YieldOp

# Marks a knob whose last result says whether it approximated (set by approx-lower-try,
# completed by approx-transform).
APPROXIMATED = "approx.approximated"


def knob_error(knob: KnobOp, message: str) -> CompileError:
    return CompileError(f"knob '{knob.knob_name.data}': {message}", knob.source_loc)


def transform_knob(transform: TransformOp) -> KnobOp:
    return cast(KnobOp, transform.parent_op())  # HasParent(KnobOp), verified


def knob_target(knob: KnobOp) -> str | None:
    """`params.target`: "loop", "statement", "call" or "function"."""
    target = knob.param("target")
    return target.data if isinstance(target, StringAttr) else None


def target_results(knob: KnobOp) -> Sequence[OpResult]:
    """The knob's results that the target computes (not lower-try's `approximated` flag)."""
    return knob.res[:-1] if APPROXIMATED in knob.attributes else knob.res


def target_ops(transform: TransformOp) -> list[Operation]:
    """The target: the knob body's ops after the transform, less management and the yield."""
    ops: list[Operation] = []
    op = transform.next_op
    while op is not None:
        if not isinstance(op, TransformOp | DecisionTreeOp | TryOp | YieldOp):
            ops.append(op)
        op = op.next_op
    return ops


def target_call(transform: TransformOp, transform_type: str) -> func.CallOp:
    """The one call of `params.callee` in a `"call"` knob's target."""
    knob = transform_knob(transform)
    callee = knob.param("callee")
    if not isinstance(callee, SymbolRefAttr):
        raise knob_error(knob, f"{transform_type}: a \"call\" target needs params.callee")
    calls = [op for root in target_ops(transform) for op in root.walk()
             if isinstance(op, func.CallOp) and op.callee == callee]
    if len(calls) != 1:
        raise knob_error(knob, f"{transform_type}: expected one call of "
                               f"'{callee.string_value()}' in the target, found {len(calls)}")
    return calls[0]
