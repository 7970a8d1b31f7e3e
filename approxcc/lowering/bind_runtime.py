"""approx-bind-runtime (paper step 4): resolve the functions the knobs call, check signatures.

A knob's state computation (ordinary IR before the knob, feeding its first operand), its body
and its check and recover regions may call into the user's runtime libraries; each callee
must be declared or defined in the module with exactly the type the call uses, and every
func_substitute variant must have the exact function's type. Errors point at the knob.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.traits import SymbolTable

from approxcc.dialect import KnobOp, enclosing_knob, knobs, verify_knobs
from approxcc.lowering.targets import knob_error


@dataclass(frozen=True)
class Signature:
    """A function type as C sees it: func.func and llvm.func types compare alike."""

    inputs: tuple[Attribute, ...]
    outputs: tuple[Attribute, ...]
    variadic: bool = False

    def accepts(self, inputs: Iterable[Attribute], outputs: Iterable[Attribute]) -> bool:
        """Whether a call with these operand and result types fits the function."""
        inputs = tuple(inputs)
        fixed = inputs[:len(self.inputs)] if self.variadic else inputs
        return fixed == self.inputs and tuple(outputs) == self.outputs

    def __str__(self) -> str:
        args = [str(t) for t in self.inputs] + (["..."] if self.variadic else [])
        results = ", ".join(str(t) for t in self.outputs)
        return f"({', '.join(args)}) -> {results if len(self.outputs) == 1 else f'({results})'}"


def resolve(context: Operation, callee: SymbolRefAttr) -> func.FuncOp | llvm.FuncOp | None:
    """The func.func or llvm.func `callee` names, seen from `context`."""
    found = SymbolTable.lookup_symbol(context, callee)
    return found if isinstance(found, func.FuncOp | llvm.FuncOp) else None


def signature(function: func.FuncOp | llvm.FuncOp) -> Signature:
    ftype = function.function_type
    if isinstance(ftype, llvm.LLVMFunctionType):
        void = isinstance(ftype.output, llvm.LLVMVoidType)
        return Signature(tuple(ftype.inputs), () if void else (ftype.output,), ftype.is_variadic)
    return Signature(tuple(ftype.inputs), tuple(ftype.outputs))


def call_signature(call: func.CallOp | llvm.CallOp) -> Signature:
    return Signature(tuple(v.type for v in call.operands), tuple(call.result_types))


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


def exact_function(knob: KnobOp) -> SymbolRefAttr | None:
    """The function a func_substitute knob replaces: `params.callee` for a call site, the
    enclosing function for a function definition."""
    target = knob.param("target")
    if isinstance(target, StringAttr) and target.data == "function":
        enclosing = knob.parent_op()
        return SymbolRefAttr(enclosing.sym_name) if isinstance(enclosing, func.FuncOp) else None
    callee = knob.param("callee")
    return callee if isinstance(callee, SymbolRefAttr) else None


def check_variants(knob: KnobOp) -> list[func.FuncOp | llvm.FuncOp]:
    """The functions of `params.variants`, each checked to have the exact function's type."""
    exact_name = exact_function(knob)
    exact = resolve(knob, exact_name) if exact_name else None
    if exact is None:
        raise knob_error(knob, "func_substitute: no exact function to substitute (a knob with "
                               "target \"function\" directly in a func.func, or target "
                               "\"call\" and params.callee)")
    variants = knob.param("variants")
    resolved: list[func.FuncOp | llvm.FuncOp] = []
    for variant in variants if isinstance(variants, ArrayAttr) else ():
        function = resolve(knob, variant)
        name = variant.string_value()
        if function is None:
            raise knob_error(knob, f"func_substitute: variant '{name}' is not declared in the "
                                   "module")
        if signature(function) != signature(exact):
            raise knob_error(knob, f"func_substitute: variant '{name}' has type "
                                   f"{signature(function)}, the exact function "
                                   f"'{exact.sym_name.data}' has type {signature(exact)}")
        resolved.append(function)
    return resolved


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
            if "func_substitute" in (t.data for t in knob.transform_types):
                check_variants(knob)
