"""An insertion point over xDSL blocks with the few IR idioms the C frontend needs.

Conversions follow C semantics (`Arith` says width, signedness, floating); pointers cross
between the C ABI (`!llvm.ptr`) and memref views with a hand-built memref descriptor, the
form upstream MLIR's memref-to-llvm conversion folds away.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from contextlib import contextmanager

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    LocationAttr,
    MemRefType,
    UnknownLoc,
    UnrealizedConversionCastOp,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from approxcc.frontend.c_types import LLVM_PTR, Arith

INDEX = IndexType()
_INT64_MAX = 2**63 - 1
_GEP_INBOUNDS = 3  # LLVM::GEPNoWrapFlags::inbounds (inboundsFlag | nusw), without nuw


def non_negative(v: SSAValue) -> bool:
    """Whether an index is provably >= 0: a constant, a value zero-extended from 32 bits or
    fewer, or sums and products of those (64 bits wide, they cannot wrap)."""
    op = v.owner
    if isinstance(op, arith.ConstantOp):
        return isinstance(op.value, IntegerAttr) and op.value.value.data >= 0
    if isinstance(op, arith.IndexCastOp):
        inner = op.input.owner
        return isinstance(inner, arith.ExtUIOp) and inner.input.type.width.data <= 32
    if isinstance(op, arith.AddiOp | arith.MuliOp):
        return non_negative(op.lhs) and non_negative(op.rhs)
    return False


def int_constant(v: SSAValue) -> int | None:
    """The value of an integer or index constant wider than i1 (as its attribute spells it:
    two's complement, signed), else None."""
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr) and \
            _foldable_type(v.type):
        return op.value.value.data
    return None


def _foldable_type(t: Attribute) -> bool:
    return isinstance(t, IndexType) or isinstance(t, IntegerType) and t.width.data > 1


_FOLDS = {arith.AddiOp: operator.add, arith.SubiOp: operator.sub, arith.MuliOp: operator.mul}


def descriptor_type(rank: int) -> llvm.LLVMStructType:
    """The LLVM struct a ranked memref lowers to: (allocated, aligned, offset, sizes, strides)."""
    fields = [LLVM_PTR, LLVM_PTR, i64]
    if rank:
        dims = llvm.LLVMArrayType(IntAttr(rank), i64)
        fields += [dims, dims]
    return llvm.LLVMStructType.from_type_list(fields)


class Builder:
    def __init__(self, block: Block):
        self.block = block
        self.loc: LocationAttr | None = None  # of the statement being emitted (-g)

    def insert(self, op: Operation) -> SSAValue | None:
        folded = self.fold(op)
        if folded is not None:
            op.erase()  # never inserted: drops its uses of the operands
            return folded
        if self.loc is not None and isinstance(op.location, UnknownLoc):
            op.location = self.loc
        self.block.add_op(op)
        return op.results[0] if op.results else None

    def fold(self, op: Operation) -> SSAValue | None:
        """Index and integer arithmetic on constants as the constant (and `x + 0`, `x * 1`
        as `x`): a C address is mostly constant offsets, unfolded a third of the ops."""
        if isinstance(op, arith.IndexCastOp):
            value = int_constant(op.input)
            return None if value is None else self.int_const(value, op.result.type)
        fold = _FOLDS.get(type(op))
        if fold is None or not _foldable_type(op.result.type):
            return None
        a, b = int_constant(op.lhs), int_constant(op.rhs)
        if a is not None and b is not None:
            return self.int_const(fold(a, b), op.result.type)
        identity = 1 if isinstance(op, arith.MuliOp) else 0
        if b == identity:
            return op.lhs
        if a == identity and not isinstance(op, arith.SubiOp):
            return op.rhs
        return None

    @contextmanager
    def located(self, loc: LocationAttr | None) -> Iterator[None]:
        """The ops inserted meanwhile are at `loc` (a statement's place: line tables)."""
        saved, self.loc = self.loc, loc or self.loc
        try:
            yield
        finally:
            self.loc = saved

    @contextmanager
    def at(self, block: Block) -> Iterator[Block]:
        saved, self.block = self.block, block
        try:
            yield block
        finally:
            self.block = saved

    # constants ---------------------------------------------------------------------------
    def int_const(self, value: int, t: Attribute) -> SSAValue:
        if isinstance(t, IntegerType | IndexType):
            width = t.width.data if isinstance(t, IntegerType) else 64
            value &= (1 << width) - 1
            if width > 1 and value >= 1 << (width - 1):
                value -= 1 << width  # attributes hold the signed two's-complement spelling
        return self.insert(arith.ConstantOp(IntegerAttr(value, t)))

    def float_const(self, value: float, t: Attribute) -> SSAValue:
        return self.insert(arith.ConstantOp(FloatAttr(value, t)))

    def index(self, value: int) -> SSAValue:
        return self.int_const(value, INDEX)

    def zero(self, a: Arith) -> SSAValue:
        return self.float_const(0.0, a.mlir) if a.floating else self.int_const(0, a.mlir)

    # conversions -------------------------------------------------------------------------
    def convert(self, v: SSAValue, src: Arith, dst: Arith) -> SSAValue:
        """C conversion of an arithmetic value (C11 6.3.1); to `_Bool` it is `!= 0`."""
        if dst.boolean and not src.boolean:
            return self.insert(arith.ExtUIOp(self.truth(v), dst.mlir))
        if src.floating and dst.floating:
            if src.width == dst.width:
                return v
            op = arith.ExtFOp if dst.width > src.width else arith.TruncFOp
            return self.insert(op(v, dst.mlir))
        if src.floating:
            op = arith.FPToSIOp if dst.signed else arith.FPToUIOp
            return self.insert(op(v, dst.mlir))
        if dst.floating:
            op = arith.SIToFPOp if src.signed else arith.UIToFPOp
            return self.insert(op(v, dst.mlir))
        if src.width == dst.width:
            return v
        if dst.width < src.width:
            return self.insert(arith.TruncIOp(v, dst.mlir))
        op = arith.ExtSIOp if src.signed else arith.ExtUIOp
        return self.insert(op(v, dst.mlir))

    def truth(self, v: SSAValue) -> SSAValue:
        """`v != 0` as i1, the C notion of a condition (for pointers: `v != NULL`)."""
        if v.type == i1:
            return v
        if v.type == LLVM_PTR or isinstance(v.type, MemRefType):
            v = self.address_bits(v)
        if isinstance(v.type, IntegerType):
            zero = self.int_const(0, v.type)
            return self.insert(arith.CmpiOp(v, zero, "ne"))
        zero = self.float_const(0.0, v.type)
        return self.insert(arith.CmpfOp(v, zero, "une"))

    def to_index(self, v: SSAValue, signed: bool = True) -> SSAValue:
        if isinstance(v.type, IndexType):
            return v
        if not signed and v.type.width.data < 64:  # index is 64 bits wide: zero-extend first
            v = self.insert(arith.ExtUIOp(v, i64))
        return self.insert(arith.IndexCastOp(v, INDEX))

    # pointers ----------------------------------------------------------------------------
    def gep(self, ptr: SSAValue, index: SSAValue, elem: Attribute,
            inbounds: bool = False) -> SSAValue:
        """`ptr + index` in units of `elem` (an !llvm.ptr; `index` of index type);
        `inbounds`: within the object `ptr` points into, as C pointer arithmetic is (an
        index may be negative: never `nuw`)."""
        if int_constant(index) == 0:
            return ptr
        offset = self.insert(arith.IndexCastOp(index, i64))
        gep = llvm.GEPOp.from_mixed_indices(ptr, [offset], elem)
        if inbounds:
            gep.properties["noWrapFlags"] = IntegerAttr(_GEP_INBOUNDS, i32)
        return self.insert(gep)

    def address_bits(self, pointer: SSAValue) -> SSAValue:
        """A pointer value (view or !llvm.ptr) as an i64 (`(intptr_t)p`)."""
        return self.insert(llvm.PtrToIntOp(self.pointer(pointer), i64))

    def from_address_bits(self, bits: SSAValue, view_type: Attribute) -> SSAValue:
        """An i64 as a pointer value (`(T *)n`)."""
        return self.view(self.insert(llvm.IntToPtrOp(bits)), view_type)

    def view(self, ptr: SSAValue, view_type: Attribute) -> SSAValue:
        """A `memref<?xT>` view of the memory at a C pointer (offset 0, unit stride): a cast
        while the function is emitted; the views still used at its end get their memref
        descriptors (describe_views). Most never are: a pointer variable's value is stored,
        passed and compared as the pointer (`pointer` sees through the cast)."""
        if view_type == LLVM_PTR:
            return ptr
        return self.insert(UnrealizedConversionCastOp.get([ptr], [view_type]))

    def pointer(self, memref: SSAValue) -> SSAValue:
        """The C pointer (`!llvm.ptr`) to element 0 of a memref."""
        if memref.type == LLVM_PTR:
            return memref
        if _is_view(memref.owner):
            return memref.owner.inputs[0]
        rank = len(memref.type.get_shape())
        desc = self.insert(UnrealizedConversionCastOp.get([memref], [descriptor_type(rank)]))
        return self.insert(
            llvm.ExtractValueOp(DenseArrayBase.from_list(i64, [1]), desc, LLVM_PTR))


def _is_view(op: Operation | Block) -> bool:
    return isinstance(op, UnrealizedConversionCastOp) and len(op.inputs) == 1 and \
        op.inputs[0].type == LLVM_PTR and isinstance(op.outputs[0].type, MemRefType)


def describe_views(region: Region) -> None:
    """Each view (`Builder.view`) becomes the memref descriptor of its pointer, the form
    upstream MLIR's memref-to-llvm conversion folds away: (ptr, ptr, 0, [unknown], [1])."""
    for op in [op for op in region.walk() if _is_view(op)]:
        ptr = op.inputs[0]
        one, zero, unknown = (llvm.ConstantOp(IntegerAttr(v, i64), i64)
                              for v in (1, 0, _INT64_MAX))
        ops: list[Operation] = [one, zero, unknown, llvm.UndefOp(descriptor_type(1))]
        for pos, val in (([0], ptr), ([1], ptr), ([2], zero.result), ([3, 0], unknown.result),
                         ([4, 0], one.result)):
            ops.append(llvm.InsertValueOp(DenseArrayBase.from_list(i64, pos),
                                          ops[-1].results[0], val))
        op.parent_block().insert_ops_before(ops, op)
        op.operands = [ops[-1].results[0]]
