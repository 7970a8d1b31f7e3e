"""approx-bind-runtime (paper step 4): resolve the functions the knobs call, check signatures.

A knob's state computation (ordinary IR before the knob, feeding its first operand), its body
and its check and recover regions may call into the user's runtime libraries; each callee
must be declared or defined in the module with exactly the type the call uses; each
transform's own `bind` hook (registry) checks the rest, e.g. that every func_substitute
variant has the exact function's type. Errors point at the knob.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from approxcc import registry
from approxcc.dialect import KnobOp, enclosing_knob, knobs, verify_knobs
from approxcc.dialect.symbols import call_signature, resolve, signature
from approxcc.dialect.targets import knob_error


def check_calls(knob: KnobOp, ops: Iterable[Operation]) -> None:
    """Every direct call among `ops` resolves to a function of the type the call uses."""
    for op in ops:
        if not isinstance(op, func.CallOp | llvm.CallOp) or op.callee is None:
            continue
        name = op.callee.string_value()
        function = resolve(op, op.callee)
        if function is None:
            raise knob_error(knob, f"'{name}' is not declared in the module")
        if not signature(function).accepts(op.operand_types, op.result_types):
            raise knob_error(knob, f"the call of '{name}' uses {call_signature(op)}, but "
                                   f"'{name}' has type {signature(function)}")


def _state_computation(knob: KnobOp) -> Iterator[Operation]:
    """The ops computing a dynamic knob's state (its first operand), last first."""
    if not knob.is_dynamic:
        return
    pending = [knob.args[0]]
    seen: set[Operation] = set()
    while pending:
        owner = pending.pop().owner
        if isinstance(owner, Operation) and owner not in seen:
            seen.add(owner)
            yield owner
            pending.extend(owner.operands)


@dataclass(frozen=True)
class BindRuntimePass(ModulePass):
    name = "approx-bind-runtime"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        verify_knobs(op)
        for knob in knobs(op):
            # A call inside a nested knob is reported at the innermost knob.
            check_calls(knob, (o for o in knob.body.walk() if enclosing_knob(o) is knob))
            check_calls(knob, (o for root in _state_computation(knob) for o in root.walk()))
            for transform_type in knob.transform_types:
                spec = registry.get(transform_type.data)
                if spec is not None and spec.bind is not None:  # verified: registered
                    spec.bind(knob)
