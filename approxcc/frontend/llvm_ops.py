"""The few upstream MLIR ops the C frontend emits that xDSL 0.75 does not define; printed in
generic form, upstream `mlir-opt` reads them as its own."""

from __future__ import annotations

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import FunctionType, SymbolRefAttr, UnitAttr, i1, i64
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
)


@irdl_op_definition
class FuncConstantOp(IRDLOperation):
    """`func.constant`: the value of a `func.func` symbol, which func-to-llvm lowers to the
    function's address."""

    name = "func.constant"
    value = prop_def(SymbolRefAttr)
    result = result_def(FunctionType)

    def __init__(self, symbol: str, ftype: FunctionType):
        super().__init__(properties={"value": SymbolRefAttr(symbol)}, result_types=[ftype])


@irdl_op_definition
class VaStartOp(IRDLOperation):
    """`llvm.intr.vastart`: initialise the `va_list` at the pointer."""

    name = "llvm.intr.vastart"
    arg_list = operand_def(LLVMPointerType)

    def __init__(self, arg_list: SSAValue):
        super().__init__(operands=[arg_list])


@irdl_op_definition
class VaEndOp(IRDLOperation):
    """`llvm.intr.vaend`."""

    name = "llvm.intr.vaend"
    arg_list = operand_def(LLVMPointerType)

    def __init__(self, arg_list: SSAValue):
        super().__init__(operands=[arg_list])


@irdl_op_definition
class VaCopyOp(IRDLOperation):
    """`llvm.intr.vacopy`: `va_copy(dest, src)`."""

    name = "llvm.intr.vacopy"
    dest_list = operand_def(LLVMPointerType)
    src_list = operand_def(LLVMPointerType)

    def __init__(self, dest: SSAValue, src: SSAValue):
        super().__init__(operands=[dest, src])


@irdl_op_definition
class VaArgOp(IRDLOperation):
    """`llvm.va_arg`: the next variadic argument, of the result's type."""

    name = "llvm.va_arg"
    arg = operand_def(LLVMPointerType)
    res = result_def(AnyAttr())

    def __init__(self, arg_list: SSAValue, result_type: Attribute):
        super().__init__(operands=[arg_list], result_types=[result_type])


# Every op of this module, for contexts that read the frontend's output back (`approxcc opt`).
FRONTEND_OPS = (FuncConstantOp, VaStartOp, VaEndOp, VaCopyOp, VaArgOp)


def load(ptr: SSAValue, result_type: Attribute, alignment: int | None = None,
         volatile: bool = False) -> llvm.LoadOp:
    """`llvm.load`, `volatile` where asked: xDSL's LoadOp declares no volatile property, so
    it is the attribute MLIR reads back as the op's inherent `volatile_`."""
    op = llvm.LoadOp(ptr, result_type, alignment=alignment)
    if volatile:
        op.attributes["volatile_"] = UnitAttr()
    return op


def memcpy_ops(dst: SSAValue, src: SSAValue, type: Attribute) -> list[Operation]:
    """`llvm.memcpy(dst, src, sizeof(type))`; sizeof is `&((type *)src)[1] - src`, which
    LLVM folds with the target's data layout."""
    one_past = llvm.GEPOp(src, [1], type)
    start, end = llvm.PtrToIntOp(src, i64), llvm.PtrToIntOp(one_past.result, i64)
    size = arith.SubiOp(end.output, start.output)
    volatile = arith.ConstantOp.from_int_and_width(0, i1)
    call = llvm.CallIntrinsicOp("llvm.memcpy.p0.p0.i64",
                                [dst, src, size.result, volatile.result], [])
    return [one_past, start, end, size, volatile, call]
