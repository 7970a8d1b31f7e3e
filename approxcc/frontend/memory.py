"""Where C objects live and how they are read and written: written locals in
`memref.alloca` slots at function entry (LLVM's mem2reg promotes them; MLIR's cannot see
through scf regions), pointers to scalars as `memref<?xT>` views, everything else behind a
raw `!llvm.ptr`.
"""

from __future__ import annotations

from dataclasses import dataclass

from clang.cindex import Cursor, CursorKind, TypeKind
from xdsl.dialects import arith, llvm, memref, scf
from xdsl.dialects.builtin import (
    IntegerAttr,
    i64,
)
from xdsl.ir import Block, Region, SSAValue

from approxcc.frontend import c_types
from approxcc.frontend.builder import INDEX
from approxcc.frontend.c_types import LLVM_PTR, UnsupportedType, arith_of
from approxcc.frontend.cursors import same_type, string_bytes, unsupported


@dataclass(frozen=True)
class LValue:
    """A C object in memory: a memref and the indices of the element, or (`ref` an
    `!llvm.ptr`) the object's address."""

    ref: SSAValue
    indices: tuple[SSAValue, ...]
    ctype: object  # clang Type of the object


class MemoryEmitter:
    """Locals, loads and stores, element addressing, initialisers (a FunctionEmitter part)."""

    def alloca(self, var: Cursor) -> SSAValue:
        t = var.type.get_canonical()
        count = None
        if t.kind == TypeKind.CONSTANTARRAY:
            count, t = t.get_array_size(), t.get_array_element_type()
            if c_types.is_array(t):
                raise unsupported("a multi-dimensional array", var)
        elif t.kind in (TypeKind.VARIABLEARRAY, TypeKind.INCOMPLETEARRAY):
            raise unsupported("a variable-length array", var)
        elem = self.elem(t, var)
        if elem == LLVM_PTR:  # memrefs cannot hold pointers: a raw LLVM stack slot
            with self.b.at(self.allocas):
                size = self.b.insert(llvm.ConstantOp(IntegerAttr(count or 1, i64), i64))
                ref = self.b.insert(llvm.AllocaOp(size, elem, alignment=8))
        else:
            op = memref.AllocaOp.get(elem, shape=[count] if count else [])
            self.allocas.add_op(op)
            ref = op.memref
        self.mem[var] = ref
        return ref

    def elem(self, t, c: Cursor):
        try:
            return c_types.element_type(t)
        except UnsupportedType as e:
            raise unsupported(f"type '{e}'", c) from None

    def load(self, lv: LValue) -> SSAValue:
        if lv.ref.type == LLVM_PTR:
            v = self.b.insert(llvm.LoadOp(lv.ref, c_types.element_type(lv.ctype)))
        else:
            v = self.b.insert(memref.LoadOp.get(lv.ref, lv.indices))
        if c_types.is_pointer(lv.ctype):
            return self.b.view(v, c_types.pointer_view_type(lv.ctype))
        return v

    def store(self, lv: LValue, value: SSAValue) -> None:
        if c_types.is_pointer(lv.ctype):
            value = self.b.pointer(value)
        if lv.ref.type == LLVM_PTR:
            self.b.insert(llvm.StoreOp(value, lv.ref))
        else:
            self.b.insert(memref.StoreOp.get(value, lv.ref, lv.indices))

    def element(self, base: SSAValue, index: SSAValue, ctype) -> LValue:
        """`base[index]` for a pointer value in either representation."""
        if base.type == LLVM_PTR:
            addr = self.b.insert(llvm.GEPOp.from_mixed_indices(
                base, [self.b.insert(arith.IndexCastOp(index, i64))],
                c_types.element_type(ctype)))
            return LValue(addr, (), ctype)
        return LValue(base, (index,), ctype)

    def declaration(self, d: Cursor) -> None:
        if d.kind != CursorKind.VAR_DECL:
            raise unsupported(f"the declaration '{d.kind.name.lower()}'", d)
        if d.storage_class.name == "STATIC":
            raise unsupported("a static local variable", d)
        ref = self.alloca(d)
        init = [k for k in d.get_children()
                if k.kind.is_expression() or k.kind == CursorKind.UNEXPOSED_EXPR]
        if c_types.is_array(d.type):
            init = [k for k in init
                    if k.kind in (CursorKind.INIT_LIST_EXPR, CursorKind.STRING_LITERAL)]
            if init:
                self.array_initialiser(ref, d.type.get_canonical(), init[-1])
        elif init:
            self.store(LValue(ref, (), d.type), self.rvalue(init[-1]))

    def array_initialiser(self, ref: SSAValue, t, init: Cursor) -> None:
        """`= {a, b}` or `= "text"`: the given elements, then zeros up to the array's size."""
        count, elem_t = t.get_array_size(), t.get_array_element_type()
        elem = c_types.element_type(elem_t)
        if elem == LLVM_PTR:
            raise unsupported("an initialiser of an array of pointers", init)
        if init.kind == CursorKind.STRING_LITERAL:
            data = string_bytes(init)[:count]
            values = [lambda byte=byte: self.b.int_const(byte, elem) for byte in data]
        else:
            kids = list(init.get_children())
            if any(not same_type(k.type, elem_t) for k in kids):
                raise unsupported("this array initialiser", init)
            values = [lambda k=k: self.rvalue(k) for k in kids]
        for i, value in enumerate(values):
            self.store(LValue(ref, (self.b.index(i),), elem_t), value())
        if len(values) < count:
            body = Block(arg_types=[INDEX])
            with self.b.at(body):
                zero = self.b.zero(arith_of(elem_t))
                self.store(LValue(ref, (body.args[0],), elem_t), zero)
                self.b.insert(scf.YieldOp())
            self.b.insert(scf.ForOp(self.b.index(len(values)), self.b.index(count),
                                    self.b.index(1), [], Region(body)))
