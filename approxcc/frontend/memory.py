"""Where C objects live and how they are read and written.

Written locals live in `memref.alloca` slots at function entry (LLVM's mem2reg promotes them;
MLIR's cannot see through scf regions); arrays of scalars, however many dimensions, are one
flat memref indexed by the computed element number; pointers to scalars are `memref<?xT>`
views; structs, pointers to pointers and arrays of those live behind a raw `!llvm.ptr`,
addressed with `llvm.getelementptr`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property

from clang.cindex import Cursor, CursorKind, TypeKind
from xdsl.dialects import arith, llvm, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    IntegerAttr,
    IntegerType,
    MemRefType,
    i8,
    i64,
)
from xdsl.ir import Attribute, SSAValue

from approxcc.frontend import c_types, initializers, llvm_ops
from approxcc.frontend.builder import non_negative
from approxcc.frontend.c_types import LLVM_PTR, Arith, UnsupportedType
from approxcc.frontend.cursors import (
    WARNING_ATTRIBUTES,
    attribute_word,
    declared_alignment,
    initializer,
    string_units,
    unparen,
    unsupported,
)

# Declarations in a function that generate no code: types, and functions declared there.
_NO_CODE = (CursorKind.STRUCT_DECL, CursorKind.UNION_DECL, CursorKind.ENUM_DECL,
            CursorKind.TYPEDEF_DECL, CursorKind.FUNCTION_DECL, CursorKind.STATIC_ASSERT)
_INITIALISERS = (CursorKind.INIT_LIST_EXPR, CursorKind.STRING_LITERAL)


def declares_vla(statement: Cursor) -> bool:
    """Whether a statement declares a variable-length array (on the stack until the end of
    the enclosing block)."""
    return statement.kind == CursorKind.DECL_STMT and any(
        d.kind == CursorKind.VAR_DECL and c_types.constant_count(d.type) is None
        for d in statement.get_children())


# A local aggregate initialised by more parts than this is copied from a constant global
_STORES_AT_MOST = 8


@dataclass(frozen=True)
class LValue:
    """A C object in memory: a memref and the element number where the object starts (no
    index for a scalar's rank-0 slot), or (`ref` an `!llvm.ptr`) the object's address."""

    ref: SSAValue
    indices: tuple[SSAValue, ...]
    ctype: object  # clang Type of the object
    bits: BitField | None = None  # a bit-field: `ref` is the address of its first byte
    decayed: bool = False  # a parameter declared as an array: `ref` holds the pointer it is
    # under its type's alignment (a member of a packed record): `ref` is an `!llvm.ptr` and
    # loads and stores say this alignment (a memref's assume the type's)
    align: int | None = None


@dataclass(frozen=True)
class BitField:
    """Where a bit-field's value lies from its first byte (little-endian, as on x86-64)."""

    shift: int  # 0-7
    width: int

    @property
    def unit(self) -> IntegerType:
        """The integer of whole bytes holding it, read and written as one."""
        return IntegerType(8 * ((self.shift + self.width + 7) // 8))


class MemoryEmitter:
    """Locals, loads and stores, addressing, initialisers (a FunctionEmitter part)."""

    # objects -------------------------------------------------------------------------------
    def alloca(self, var: Cursor) -> SSAValue:
        t = c_types.canonical(var.type)
        if var.kind == CursorKind.PARM_DECL and c_types.is_array(t):  # a written `T a[]`
            self.mem[var] = self.slot(LLVM_PTR)
            return self.mem[var]
        self.mem[var] = self.object_slot(var.type, var, declared_alignment(var))
        return self.mem[var]

    def object_slot(self, ctype, c: Cursor, align: int | None = None) -> SSAValue:
        """Storage for a local object of type `ctype` (declared or a temporary, at `c`;
        `align`: an alignment declared above its type's): at function entry; a
        variable-length array where it is declared, as C sizes it."""
        t = c_types.canonical(ctype)
        elem = self.elem(c_types.base_element(t), c)
        count = c_types.constant_count(t)
        if count is not None:
            return self.slot(elem, count if c_types.is_array(t) else None,
                             max(t.get_align(), align or 1))
        n = self.element_count(t)
        align = max(c_types.base_element(t).get_align(), align or 1)
        if not isinstance(elem, IntegerType | AnyFloat):
            size = self.b.insert(arith.IndexCastOp(n, i64))
            return self.b.insert(llvm.AllocaOp(size, elem, alignment=align))
        return self.b.insert(memref.AllocaOp.get(elem, align, [DYNAMIC_INDEX], [n]))

    def temporary(self, ctype, c: Cursor) -> LValue:
        """A fresh unnamed object (a compound literal)."""
        ref = self.object_slot(ctype, c)
        if isinstance(ref.type, MemRefType) and ref.type.get_shape():
            return LValue(ref, (self.b.index(0),), ctype)
        return LValue(ref, (), ctype)

    def compound_literal(self, c: Cursor) -> LValue:
        """`(T){…}`: a temporary initialised each time control reaches it."""
        lv = self.temporary(c.type, c)
        init = [k for k in c.get_children() if k.kind == CursorKind.INIT_LIST_EXPR]
        self.initialise(lv, init[-1])
        return lv

    def slot(self, elem: Attribute, count: int | None = None, align: int = 8) -> SSAValue:
        """A stack slot at function entry for `count` elements (one object when None): a
        memref for scalars, a raw LLVM slot for what memrefs cannot hold (pointers, structs)."""
        if not isinstance(elem, IntegerType | AnyFloat):
            with self.b.at(self.allocas):
                size = self.b.insert(llvm.ConstantOp(IntegerAttr(count or 1, i64), i64))
                return self.b.insert(llvm.AllocaOp(size, elem, alignment=align))
        above = align if align > elem.bitwidth // 8 else None  # declared: `aligned(64)`
        op = memref.AllocaOp.get(elem, above, shape=[count] if count is not None else [])
        self.allocas.add_op(op)
        return op.memref

    def elem(self, t, c: Cursor):
        try:
            return c_types.element_type(t)
        except UnsupportedType as e:
            raise unsupported(f"type '{e}'", c) from None

    def local(self, var: Cursor) -> LValue:
        return self.local_at(var, self.mem[var])

    def local_at(self, var: Cursor, ref: SSAValue) -> LValue:
        if var.kind == CursorKind.PARM_DECL and c_types.is_array(var.type):  # a written `T a[]`
            return self.at_address(self.b.insert(llvm.LoadOp(ref, LLVM_PTR)), var.type)
        if isinstance(ref.type, MemRefType) and ref.type.get_shape():
            return LValue(ref, (self.b.index(0),), var.type)
        return LValue(ref, (), var.type)

    def global_lvalue(self, var: Cursor) -> LValue:
        """A file-scope, `static` or `extern` variable: the module defines or declares it."""
        ptr = self.b.insert(llvm.AddressOfOp(self.unit.global_symbol(var), LLVM_PTR))
        return self.at_address(ptr, var.type)

    # addressing ----------------------------------------------------------------------------
    def at_address(self, ptr: SSAValue, ctype) -> LValue:
        """The object of type `ctype` at the `!llvm.ptr` `ptr`."""
        if not c_types.is_scalar_based(ctype):
            return LValue(ptr, (), ctype)
        view = self.b.view(ptr, MemRefType(c_types.base_storage_type(ctype), [DYNAMIC_INDEX]))
        return LValue(view, (self.b.index(0),), ctype)

    def pointee(self, pointer: SSAValue, ctype) -> LValue:
        """`*pointer` for a pointer value in either representation."""
        if pointer.type == LLVM_PTR:
            return LValue(pointer, (), ctype)
        return LValue(pointer, (self.b.index(0),), ctype)

    def address(self, lv: LValue) -> SSAValue:
        """The `!llvm.ptr` to an object."""
        ptr = self.b.pointer(lv.ref)
        if not lv.indices:
            return ptr
        return self.b.gep(ptr, lv.indices[0], c_types.base_storage_type(lv.ctype))

    def advance(self, lv: LValue, n: SSAValue) -> LValue:
        """The object `n` (an index) objects of the same type after `lv` (`&lv + n`)."""
        step = self.b.insert(arith.MuliOp(n, self.element_count(lv.ctype))) \
            if c_types.constant_count(lv.ctype) != 1 else n
        elem = c_types.base_storage_type(lv.ctype)
        if not lv.indices:
            return replace(lv, ref=self.b.gep(lv.ref, step, elem))
        index = self.b.insert(arith.AddiOp(lv.indices[0], step))
        if non_negative(index) or lv.ref.type.has_static_shape():
            return LValue(lv.ref, (index,), lv.ctype)
        # A C pointer may point into the middle of an object and be indexed backwards; a
        # memref index may not (memref.load lowers to `getelementptr inbounds nuw`, which a
        # negative index makes poison): the element's address is a view of its own.
        ptr = self.b.gep(self.b.pointer(lv.ref), index, elem, inbounds=True)
        return LValue(self.b.view(ptr, lv.ref.type), (self.b.index(0),), lv.ctype)

    def first_element(self, array: LValue) -> LValue:
        return replace(array, ctype=array.ctype.get_canonical().get_array_element_type())

    def member(self, obj: LValue, field: Cursor, ctype) -> LValue:
        """`obj.field`, of type `ctype` (a union's members all start at its address). In a
        packed record (or one lying under its alignment) a member may lie under its type's
        alignment: then its address is all it is, with the alignment known of it."""
        if not c_types.is_record(obj.ctype):
            raise UnsupportedType(obj.ctype.spelling)
        bits = c_types.field_offset(obj.ctype, field)
        ptr = self.b.gep(self.address(obj), self.b.index(bits // 8), i8)
        if field.is_bitfield():
            return LValue(ptr, (), ctype, BitField(bits % 8, field.get_bitfield_width()))
        known = math.gcd(obj.align or c_types.canonical(obj.ctype).get_align(), bits // 8)
        if known < c_types.canonical(ctype).get_align():
            return LValue(ptr, (), ctype, align=known)
        return self.at_address(ptr, ctype)

    def element_count(self, t) -> SSAValue:
        """How many base elements an object of type `t` holds (an index; run-time for a
        variable-length array)."""
        count = c_types.constant_count(t)
        if count is not None:
            return self.b.index(count)
        c = c_types.canonical(t)
        inner = self.element_count(c.get_array_element_type())
        if c.kind == TypeKind.CONSTANTARRAY:
            return self.b.insert(arith.MuliOp(self.b.index(c.get_array_size()), inner))
        return self.b.insert(arith.MuliOp(self.vla_length(c), inner))

    def byte_size(self, t) -> SSAValue:
        """sizeof(t) as an index."""
        size = self.b.index(c_types.base_element(t).get_size())
        return self.b.insert(arith.MuliOp(self.element_count(t), size))

    # variable-length array parameters ------------------------------------------------------
    @cached_property
    def vla_lengths(self) -> dict[str, SSAValue]:
        """The length of each variable-length array type the parameters name (`double
        A[n][m]`: `double[m]` → m), keyed by the type's unqualified spelling, computed at
        function entry from the parameters' values there, as C evaluates them."""
        lengths: dict[str, SSAValue] = {}
        entry_values = {p: args[0] for p, args in self.arguments.items()
                        if not (c_types.is_pointer(p.type) or c_types.is_record(p.type))}
        saved, self.vars = self.vars, {**self.vars, **entry_values}
        try:
            with self.b.at(self.allocas):
                for p in self.params:
                    self.size_arrays(p, lengths)
        finally:
            self.vars = saved
        return lengths

    def size_arrays(self, decl: Cursor, lengths: dict[str, SSAValue]) -> None:
        """Evaluate the lengths of the variable-length array types in `decl`'s type, keyed
        by the type's unqualified spelling (a name already there keeps its length)."""
        sizes = [k for k in decl.get_children() if (k.kind.is_expression() or
                 k.kind == CursorKind.UNEXPOSED_EXPR) and k.kind not in _INITIALISERS][::-1]
        t = c_types.canonical(decl.type)  # clang lists the sizes inner first
        while sizes and c_types.is_array(t):
            if t.kind != TypeKind.INCOMPLETEARRAY:  # `[]` has no size expression
                size = sizes.pop(0)
                key = c_types.unqualified_spelling(t)
                if t.kind == TypeKind.VARIABLEARRAY and key not in lengths:
                    lengths[key] = self.b.to_index(self.rvalue(size),
                                                   c_types.is_signed(size.type))
            t = c_types.canonical(t.get_array_element_type())

    def vla_length(self, t) -> SSAValue:
        length = self.vla_lengths.get(c_types.unqualified_spelling(t))
        if length is None:
            raise UnsupportedType(t.spelling)
        return length

    # loads and stores ----------------------------------------------------------------------
    def assigned(self, c: Cursor) -> LValue:
        """The object an assignment to `c` writes (`argv++` writes the pointer `argv` is)."""
        var = unparen(c).referenced if unparen(c).kind == CursorKind.DECL_REF_EXPR else None
        if var is not None and var.kind == CursorKind.PARM_DECL and \
                c_types.is_array(var.type) and var in self.mem:
            return LValue(self.mem[var], (), var.type, decayed=True)
        return self.lvalue(c)

    def load(self, lv: LValue) -> SSAValue:
        if lv.decayed:
            return self.b.view(self.b.insert(llvm.LoadOp(lv.ref, LLVM_PTR)),
                               c_types.pointer_view_type(lv.ctype))
        if lv.bits is not None:
            return self.load_bits(lv)
        volatile = c_types.is_volatile(lv.ctype)  # memref.load has no volatile form
        if lv.ref.type == LLVM_PTR or volatile:
            v = self.b.insert(llvm_ops.load(self.address(lv), c_types.element_type(lv.ctype),
                                            lv.align, volatile))
        else:
            v = self.b.insert(memref.LoadOp.get(lv.ref, lv.indices))
        if c_types.is_pointer(lv.ctype):
            return self.b.view(v, c_types.pointer_view_type(lv.ctype))
        return v

    def store(self, lv: LValue, value: SSAValue) -> None:
        if lv.bits is not None:
            self.store_bits(lv, value)
            return
        if c_types.is_pointer(lv.ctype) or lv.decayed:
            value = self.b.pointer(value)
        volatile = c_types.is_volatile(lv.ctype)
        if lv.ref.type == LLVM_PTR or volatile:
            self.b.insert(llvm.StoreOp(value, self.address(lv), alignment=lv.align,
                                       volatile=volatile))
        else:
            self.b.insert(memref.StoreOp.get(value, lv.ref, lv.indices))

    def assign(self, lv: LValue, value: SSAValue) -> SSAValue:
        """Store `value` to `lv`; the value of the assignment expression: what `lv` holds
        after it (for a bit-field, `value` cut to its width and extended back: `x = (s.f =
        v)` reads the field, not `v`)."""
        self.store(lv, value)
        if lv.bits is None:
            return value
        return self._widened(lv, self._cut(lv, value))

    def _cut(self, lv: LValue, value: SSAValue) -> SSAValue:
        """`value` (of the bit-field's type) as the field's bits: an integer of its width."""
        return self.b.convert(value, c_types.arith_of(lv.ctype),
                              Arith(lv.bits.width, False, False))

    def _widened(self, lv: LValue, bits: SSAValue) -> SSAValue:
        """The field's bits (an integer of its width) as a value of its type: sign- or
        zero-extended."""
        t = c_types.arith_of(lv.ctype)
        return self.b.convert(bits, Arith(lv.bits.width, t.signed, False), t)

    def load_bits(self, lv: LValue) -> SSAValue:
        """A bit-field's value: its bytes shifted down, then sign- or zero-extended from its
        width to its type's."""
        b, bits = self.b, lv.bits
        unit = bits.unit
        v = b.insert(llvm_ops.load(lv.ref, unit, 1, c_types.is_volatile(lv.ctype)))
        if bits.shift:
            v = b.insert(arith.ShRUIOp(v, b.int_const(bits.shift, unit)))
        field = IntegerType(bits.width)
        if unit != field:
            v = b.insert(arith.TruncIOp(v, field))
        return self._widened(lv, v)

    def store_bits(self, lv: LValue, value: SSAValue) -> None:
        """Write a bit-field: read its bytes, replace its bits, write them back."""
        b, bits = self.b, lv.bits
        unit = bits.unit
        v = b.convert(self._cut(lv, value), Arith(bits.width, False, False),
                      Arith(unit.width.data, False, False))
        if bits.shift:
            v = b.insert(arith.ShLIOp(v, b.int_const(bits.shift, unit)))
        mask = ((1 << bits.width) - 1) << bits.shift
        volatile = c_types.is_volatile(lv.ctype)
        old = b.insert(llvm_ops.load(lv.ref, unit, 1, volatile))
        kept = b.insert(arith.AndIOp(old, b.int_const(~mask, unit)))
        b.insert(llvm.StoreOp(b.insert(arith.OrIOp(kept, v)), lv.ref, alignment=1,
                              volatile=volatile))

    # declarations --------------------------------------------------------------------------
    def declaration(self, d: Cursor) -> None:
        if d.kind in _NO_CODE:
            return
        if d.kind != CursorKind.VAR_DECL:
            raise unsupported(f"the declaration '{d.kind.name.lower()}'", d)
        if d.storage_class.name in ("STATIC", "EXTERN"):
            self.global_lvalue(d)  # the module defines it, with its initialiser
            return
        for attr in d.get_children():  # `cleanup(f)`: a call at every exit of its scope
            if attr.kind.is_attribute() and attr.kind != CursorKind.ALIGNED_ATTR and \
                    attribute_word(attr) not in WARNING_ATTRIBUTES:
                raise unsupported(f"the attribute '{attribute_word(attr)}' of a local", attr)
        init = initializer(d)
        if c_types.is_reference(d.type) and init is not None:  # `T &r = x;`: x's address
            self.mem[d] = self.slot(LLVM_PTR)
            self.b.insert(llvm.StoreOp(self.bind_reference(init), self.mem[d]))
            return
        if c_types.constant_count(d.type) is None:  # a variable-length array: sized here
            fresh: dict[str, SSAValue] = {}
            self.size_arrays(d, fresh)
            self.vla_lengths.update(fresh)
        self.alloca(d)
        if init is not None:
            self.initialise(self.local(d), init)

    def initialise(self, lv: LValue, init: Cursor) -> None:
        """`= expr`, `= "text"` or `= {…}` (initializers.py): what is not written is zero. An
        aggregate of many parts is copied from a constant global, then the parts that are
        not constants (`&local`) stored (a store each would make thousands of ops of one
        table)."""
        parts = initializers.parts(lv.ctype, init)
        holes: list[initializers.Part] = []
        if len(parts) > _STORES_AT_MOST and not lv.bits and \
                (table := self.unit.constant_copy(lv.ctype, init, holes)) is not None:
            source = self.b.insert(llvm.AddressOfOp(table, LLVM_PTR))
            for op in llvm_ops.memcpy_ops(self.address(lv), source,
                                          c_types.element_type(lv.ctype)):
                self.b.insert(op)
            parts = holes
        elif len(parts) != 1 or parts[0].path:
            self.zero(lv)
        for part in parts:
            target = self.subobject(lv, part.path)
            text = initializers.string_literal(part)
            if text is not None:
                self.store_string(target, text)
            elif c_types.is_array(part.ctype):
                raise unsupported("this array initialiser", part.expr)
            else:
                self.store(target, self.rvalue(part.expr))

    def subobject(self, lv: LValue, path: tuple[initializers.Step, ...]) -> LValue:
        """The part of `lv` a path reaches; subscripts in a row are one step (`[i][j]` of
        `T a[I][J]` is element `i*J + j`): an initialiser of hundreds of parts has one
        address computation a part, not one a subscript."""
        base_elements = 0  # the subscripts in a row so far, in base elements
        for step in path:
            if isinstance(step, int):
                lv = self.first_element(lv)
                base_elements += step * c_types.constant_count(lv.ctype)
                continue
            lv = self._advanced_by(lv, base_elements)
            base_elements = 0
            lv = self.member(lv, step, step.type)
        return self._advanced_by(lv, base_elements)

    def _advanced_by(self, lv: LValue, base_elements: int) -> LValue:
        if not base_elements:
            return lv
        n = base_elements // c_types.constant_count(lv.ctype)
        return self.advance(lv, self.b.index(n))

    def store_string(self, array: LValue, literal: Cursor) -> None:
        """The bytes of a string literal into a char array (cleared first)."""
        self.zero(array)
        first = self.first_element(array)
        data = string_units(literal)[:c_types.constant_count(array.ctype)]
        for i, unit in enumerate(data):
            self.store(self.advance(first, self.b.index(i)),
                       self.b.int_const(unit, c_types.element_type(first.ctype)))

    def zero(self, lv: LValue) -> None:
        """Set every byte of an aggregate to zero (LLVM makes it a memset)."""
        if not (c_types.is_array(lv.ctype) or c_types.is_record(lv.ctype)):
            return
        zero = self.b.insert(llvm.ZeroOp(result_types=[c_types.element_type(lv.ctype)]))
        self.b.insert(llvm.StoreOp(zero, self.address(lv), alignment=lv.align))
