"""C types as the frontend sees them: MLIR type, signedness, and the usual arithmetic conversions.

Pointer *values* are `memref<?xT>` views (DESIGN: pointers as memrefs behind the C ABI); memory
cells and call arguments that hold pointers are `!llvm.ptr`, the C ABI representation.
"""

from __future__ import annotations

from dataclasses import dataclass

from clang.cindex import Type, TypeKind
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float32Type,
    Float64Type,
    IntegerType,
    MemRefType,
    f32,
    f64,
)
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import Attribute

_SIGNED = {TypeKind.SCHAR, TypeKind.CHAR_S, TypeKind.SHORT, TypeKind.INT, TypeKind.LONG,
           TypeKind.LONGLONG}
_UNSIGNED = {TypeKind.UCHAR, TypeKind.CHAR_U, TypeKind.USHORT, TypeKind.UINT, TypeKind.ULONG,
             TypeKind.ULONGLONG}
_FLOATS = {TypeKind.FLOAT: f32, TypeKind.DOUBLE: f64}

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


def is_float(t: Type) -> bool:
    return canonical(t).kind in _FLOATS


def is_pointer(t: Type) -> bool:
    return canonical(t).kind == TypeKind.POINTER


def is_array(t: Type) -> bool:
    return canonical(t).kind in (TypeKind.CONSTANTARRAY, TypeKind.INCOMPLETEARRAY)


def is_void(t: Type) -> bool:
    return canonical(t).kind == TypeKind.VOID


def integer_width(t: Type) -> int:
    return canonical(t).get_size() * 8


def scalar_type(t: Type) -> Attribute:
    """The MLIR type of a C scalar value held in a register."""
    c = canonical(t)
    if c.kind in _FLOATS:
        return _FLOATS[c.kind]
    if c.kind in _SIGNED | _UNSIGNED:
        return IntegerType(c.get_size() * 8)
    if c.kind == TypeKind.POINTER:
        return pointer_view_type(c)
    raise UnsupportedType(t.spelling)


def element_type(t: Type) -> Attribute:
    """The MLIR type of a C object of type `t` stored in memory (pointers stored as !llvm.ptr)."""
    c = canonical(t)
    if c.kind == TypeKind.POINTER:
        return LLVM_PTR
    if c.kind == TypeKind.VOID:
        return IntegerType(8)  # void* views bytes, as char* does
    return scalar_type(c)


def pointer_view_type(ptr: Type) -> Attribute:
    """How a pointer value is held: a `memref<?xT>` view when it points to scalars; the raw
    `!llvm.ptr` when it points to pointers (upstream memrefs cannot hold `!llvm.ptr`)."""
    elem = element_type(canonical(ptr).get_pointee())
    return LLVM_PTR if elem == LLVM_PTR else MemRefType(elem, [DYNAMIC_INDEX])


def abi_type(t: Type) -> Attribute:
    """The type of a C value at a call boundary (function parameters and results)."""
    return LLVM_PTR if is_pointer(t) else scalar_type(t)


def is_float_type(t: Attribute) -> bool:
    return isinstance(t, Float32Type | Float64Type)


@dataclass(frozen=True)
class Arith:
    """An arithmetic C type reduced to what code generation needs."""

    width: int
    signed: bool
    floating: bool

    @property
    def mlir(self) -> Attribute:
        if self.floating:
            return f32 if self.width == 32 else f64
        return IntegerType(self.width)


INT = Arith(32, True, False)


def arith_of(t: Type) -> Arith:
    c = canonical(t)
    if c.kind in _FLOATS:
        return Arith(c.get_size() * 8, True, True)
    if c.kind in _SIGNED | _UNSIGNED:
        return Arith(c.get_size() * 8, c.kind in _SIGNED, False)
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
