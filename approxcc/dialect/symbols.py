"""Function symbols as C sees them: resolving a callee and comparing function types."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import SymbolRefAttr
from xdsl.ir import Attribute, Operation
from xdsl.traits import SymbolTable


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
