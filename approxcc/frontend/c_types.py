"""C types as the frontend sees them (x86-64 LP64): MLIR type, signedness, layout, and the usual
arithmetic conversions.

Pointer *values* to scalars (and to arrays of scalars) are `memref<?xT>` views of the innermost
scalar element (DESIGN: pointers as memrefs behind the C ABI); pointers to pointers and structs
are the raw `!llvm.ptr`, the C ABI representation, as are memory cells and call arguments that
hold pointers. Structs are `!llvm.struct` types with clang's padding spelled out as byte arrays,
so field offsets are C's under any data layout; bit-fields live in those padding bytes and
unions are their bytes. `long double`, `__int128` and complex types are not supported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clang.cindex import Cursor, CursorKind, Type, TypeKind
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float32Type,
    Float64Type,
    IntAttr,
    IntegerType,
    MemRefType,
    f32,
    f64,
    i8,
)
from xdsl.dialects.llvm import LLVMArrayType, LLVMPointerType, LLVMStructType
from xdsl.ir import Attribute

_SIGNED = {TypeKind.SCHAR, TypeKind.CHAR_S, TypeKind.SHORT, TypeKind.INT, TypeKind.LONG,
           TypeKind.LONGLONG}
_UNSIGNED = {TypeKind.UCHAR, TypeKind.CHAR_U, TypeKind.USHORT, TypeKind.UINT, TypeKind.ULONG,
             TypeKind.ULONGLONG, TypeKind.BOOL}
_FLOATS = {TypeKind.FLOAT: f32, TypeKind.DOUBLE: f64}
_ARRAYS = (TypeKind.CONSTANTARRAY, TypeKind.INCOMPLETEARRAY, TypeKind.VARIABLEARRAY)
_QUALIFIER = re.compile(r"\b(const|volatile|restrict)\s+")

LLVM_PTR = LLVMPointerType()


class UnsupportedType(Exception):
    """A C type the frontend does not handle yet; the caller turns it into a diagnostic."""


def canonical(t: Type) -> Type:
    t = t.get_canonical()
    if t.kind == TypeKind.ENUM:
        return t.get_declaration().enum_type.get_canonical()
    return t


def is_integer(t: Type) -> bool:
    return canonical(t).kind in _SIGNED | _UNSIGNED


def is_signed(t: Type) -> bool:
    return canonical(t).kind in _SIGNED


def is_bool(t: Type) -> bool:
    return canonical(t).kind == TypeKind.BOOL


def is_float(t: Type) -> bool:
    return canonical(t).kind in _FLOATS


def is_pointer(t: Type) -> bool:
    return canonical(t).kind == TypeKind.POINTER


def is_array(t: Type) -> bool:
    return canonical(t).kind in _ARRAYS


def is_reference(t: Type) -> bool:
    """A C++ `T&`: held as the address of its object, dereferenced wherever it is named."""
    return t.kind == TypeKind.LVALUEREFERENCE or canonical(t).kind == TypeKind.LVALUEREFERENCE


def is_address(t: Type) -> bool:
    """A pointer, or an array where it decays to one (libclang types a decayed array
    parameter with its declared array type)."""
    return is_pointer(t) or is_array(t)


def pointee_type(t: Type) -> Type:
    """What a pointer (or a decayed array) points to."""
    c = canonical(t)
    return c.get_pointee() if c.kind == TypeKind.POINTER else c.get_array_element_type()


def is_record(t: Type) -> bool:
    """A struct or a union."""
    return canonical(t).kind == TypeKind.RECORD


def is_union(t: Type) -> bool:
    c = canonical(t)
    return c.kind == TypeKind.RECORD and c.get_declaration().kind == CursorKind.UNION_DECL


def is_void(t: Type) -> bool:
    return canonical(t).kind == TypeKind.VOID


def unqualified_spelling(t: Type) -> str:
    """The canonical type's spelling without qualifiers at any level (`const double[m]` and
    `double[m]` name one variable-length array type)."""
    return _QUALIFIER.sub("", canonical(t).spelling)


def is_volatile(t: Type) -> bool:
    """A `volatile` object (also through a typedef): every read and write of it happens, in
    order (a flag set by a signal handler, a device register)."""
    return canonical(t).is_volatile_qualified()


def is_scalar_based(t: Type) -> bool:
    """A scalar, or an array (of arrays) of scalars: what a memref can hold."""
    c = base_element(t)
    return c.kind in _SIGNED | _UNSIGNED | _FLOATS.keys() | {TypeKind.VOID}


def integer_width(t: Type) -> int:
    return size_of(t) * 8


def base_element(t: Type) -> Type:
    """The innermost element type of an array of arrays (`t` itself for a non-array)."""
    c = canonical(t)
    while c.kind in _ARRAYS:
        c = canonical(c.get_array_element_type())
    return c


def constant_count(t: Type) -> int | None:
    """How many base elements an object of type `t` holds; None for a variable-length array."""
    c, count = canonical(t), 1
    while c.kind in _ARRAYS:
        if c.kind != TypeKind.CONSTANTARRAY:
            return None
        count *= c.get_array_size()
        c = canonical(c.get_array_element_type())
    return count


def scalar_type(t: Type) -> Attribute:
    """The MLIR type of a C scalar value held in a register (`_Bool` as i8, as in memory)."""
    c = canonical(t)
    if c.kind in _FLOATS:
        return _FLOATS[c.kind]
    if c.kind in _SIGNED | _UNSIGNED:
        return IntegerType(c.get_size() * 8)
    if c.kind == TypeKind.POINTER:
        return pointer_view_type(c)
    raise UnsupportedType(t.spelling)


def element_type(t: Type) -> Attribute:
    """The MLIR type of a C object of type `t` stored in memory (pointers as !llvm.ptr,
    structs as !llvm.struct, arrays as !llvm.array)."""
    c = canonical(t)
    if c.kind == TypeKind.POINTER:
        return LLVM_PTR
    if c.kind == TypeKind.VOID:
        return i8  # void* views bytes, as char* does
    if c.kind == TypeKind.CONSTANTARRAY:
        return LLVMArrayType(IntAttr(c.get_array_size()), element_type(c.get_array_element_type()))
    if c.kind == TypeKind.RECORD:
        return record_type(c)
    return scalar_type(c)


def base_storage_type(t: Type) -> Attribute:
    """The MLIR type of the innermost element of `t`: what pointer arithmetic steps over."""
    return element_type(base_element(t))


def pointer_view_type(ptr: Type) -> Attribute:
    """How a pointer value is held: a `memref<?xT>` view when it points to scalars or arrays
    of scalars; the raw `!llvm.ptr` otherwise (upstream memrefs hold neither pointers nor
    structs)."""
    pointee = pointee_type(ptr)
    if not is_scalar_based(pointee):
        return LLVM_PTR
    return MemRefType(base_storage_type(pointee), [DYNAMIC_INDEX])


def abi_type(t: Type) -> Attribute:
    """The type of a C value at a call boundary (function parameters and results); array
    parameters are pointers."""
    if is_pointer(t) or is_array(t) or is_reference(t):
        return LLVM_PTR
    if canonical(t).kind == TypeKind.RECORD:
        raise UnsupportedType(t.spelling)  # structs by value: not yet
    return scalar_type(t)


def size_of(t: Type) -> int:
    """sizeof(t) in bytes; incomplete types are not supported."""
    size = canonical(t).get_size()
    if size < 0:
        raise UnsupportedType(t.spelling)
    return size


def field_offset(record: Type, field: Cursor) -> int:
    """The offset in bits of `field` in `record`, through anonymous members."""
    c = canonical(record)
    bits = field.get_field_offsetof() if field.semantic_parent == c.get_declaration() else \
        c.get_offset(field.spelling)
    if bits < 0:
        raise UnsupportedType(record.spelling)
    return bits


def _laid_out(c: Type) -> list[Cursor]:
    """The fields of a struct that are members of its `!llvm.struct`: bit-fields live in the
    padding bytes around them, a flexible array member past the end."""
    return [f for f in c.get_fields()
            if not f.is_bitfield() and canonical(f.type).kind != TypeKind.INCOMPLETEARRAY]


def is_packed(t: Type) -> bool:
    """A record aligned less than one of its (non-bit-field) members' types (`#pragma pack`,
    `packed`): its members may lie under their alignment. It is held as its bytes (LLVM
    would lay out a struct of its members apart), its members read and written at their
    addresses with the alignment known of them; bit-fields are read and written a
    byte-aligned unit at a time wherever they lie."""
    c = canonical(t)
    return any(c.get_align() < canonical(f.type).get_align()
               for f in c.get_fields() if not f.is_bitfield())


def record_type(t: Type) -> Attribute:
    """A struct: the `!llvm.struct` of its fields with clang's padding as explicit
    `!llvm.array<n x i8>` fields; a union (members are read at offset 0) or a packed
    record: its bytes."""
    c = canonical(t)
    size = size_of(c)
    if is_union(c) or is_packed(c):
        return LLVMArrayType(IntAttr(size), i8)
    fields, at = [], 0
    for f in _laid_out(c):
        offset = field_offset(c, f) // 8
        align = canonical(f.type).get_align()
        if offset % align or c.get_align() < align:  # packed: LLVM would lay it out apart
            raise UnsupportedType(t.spelling)
        if offset > at:
            fields.append(LLVMArrayType(IntAttr(offset - at), i8))
        fields.append(element_type(f.type))
        at = offset + size_of(f.type)
    if size > at:
        fields.append(LLVMArrayType(IntAttr(size - at), i8))
    return LLVMStructType.from_type_list(fields)


def field_index(t: Type, field: Cursor) -> int:
    """The position of `field` (not a bit-field) in `record_type(t)` of a struct, padding
    fields counted."""
    c, index, at = canonical(t), 0, 0
    for f in _laid_out(c):
        offset = field_offset(c, f) // 8
        index += offset > at
        if f == field:
            return index
        index += 1
        at = offset + size_of(f.type)
    raise UnsupportedType(t.spelling)


def has_bitfields(t: Type) -> bool:
    return any(f.is_bitfield() for f in canonical(t).get_fields())


def is_float_type(t: Attribute) -> bool:
    return isinstance(t, Float32Type | Float64Type)


@dataclass(frozen=True)
class Arith:
    """An arithmetic C type reduced to what code generation needs."""

    width: int
    signed: bool
    floating: bool
    boolean: bool = False  # _Bool: converting to it is `!= 0`

    @property
    def mlir(self) -> Attribute:
        if self.floating:
            return f32 if self.width == 32 else f64
        return IntegerType(self.width)


INT = Arith(32, True, False)
INTPTR = Arith(64, True, False)  # ptrdiff_t, intptr_t


def arith_of(t: Type) -> Arith:
    c = canonical(t)
    if c.kind in _FLOATS:
        return Arith(c.get_size() * 8, True, True)
    if c.kind in _SIGNED | _UNSIGNED:
        return Arith(c.get_size() * 8, c.kind in _SIGNED, False, c.kind == TypeKind.BOOL)
    raise UnsupportedType(t.spelling)


def promote(a: Arith) -> Arith:
    """Integer promotion: types narrower than int compute as int (C11 6.3.1.1)."""
    return INT if not a.floating and a.width < 32 else a


def common_type(a: Arith, b: Arith) -> Arith:
    """C11 6.3.1.8 usual arithmetic conversions."""
    a, b = promote(a), promote(b)
    if a.floating or b.floating:
        return max((t for t in (a, b) if t.floating), key=lambda t: t.width)
    if a.width != b.width:
        return a if a.width > b.width else b
    return a if not a.signed else b  # same width: the unsigned one wins
