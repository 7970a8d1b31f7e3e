"""C objects with static storage (file-scope variables, `static` locals) → `llvm.mlir.global`.

The global's type is `c_types.element_type` of the C type (nested `!llvm.array`s, structs with
their padding fields), so the memory the access side addresses is laid out as C lays it out.
A constant initialiser is evaluated here, following C11 6.7.9 on clang's *syntactic* form of
the initialiser (libclang shows the braces as written): brace elision, string literals for
char arrays, designators, zeros for what is not written (initializers.py walks it). It
becomes a `value` attribute (a scalar, or a dense array of scalars) or, when pointers or
structs are involved, an initialiser region. An address is a static object's, or that of an
element or member of one at constant subscripts (`&g[2][1].f`: the object's address plus a
byte offset). Unions, bit-fields, packed records and function addresses are not evaluated:
`Unevaluated`.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

from clang.cindex import Cursor, CursorKind, TypeKind
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
    i8,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue

from approxcc.diagnostics import CompileError
from approxcc.frontend import c_types, initializers
from approxcc.frontend.c_types import LLVM_PTR
from approxcc.frontend.clang_eval import evaluate, unary_operator
from approxcc.frontend.counted_loops import strip
from approxcc.frontend.cursors import string_units


class Unevaluated(Exception):
    """An initialiser this module cannot evaluate; carries the cursor to point at."""

    def __init__(self, cursor: Cursor):
        super().__init__(cursor.kind.name)
        self.cursor = cursor


@dataclass(frozen=True)
class Address:
    """A pointer initialiser: the address of the global `symbol`, `offset` bytes on."""

    symbol: str
    offset: int = 0


# A constant: a number, an Address, None (zero), or a list (array elements / struct fields).
Constant = int | float | Address | None | list


def is_read_only(t) -> bool:
    """Whether an object of type `t` is `const` (for an array: its elements are)."""
    while not (t.is_const_qualified() or t.get_canonical().is_const_qualified()):
        if t.get_canonical().kind not in (TypeKind.CONSTANTARRAY, TypeKind.INCOMPLETEARRAY):
            return False
        # libclang drops the element's qualifiers from a canonical array type: step through
        # the type as written, and through the canonical type only behind a typedef
        t = t.get_array_element_type() if t.kind in (TypeKind.CONSTANTARRAY,
                                                     TypeKind.INCOMPLETEARRAY) else \
            t.get_canonical().get_array_element_type()
    return True


class ConstantEvaluator:
    """C initialisers → Constant trees; `address_of(var)` names the global of a variable,
    `string(literal)` the global of a string literal."""

    def __init__(self, address_of, string):
        self.address_of = address_of
        self.string = string

    def evaluate(self, t, init: Cursor | None,
                 holes: list[initializers.Part] | None = None) -> Constant:
        """The value `init` gives an object of type `t`. With `holes`, a part that is not a
        constant (`&local`, a call) is left zero and listed there, for the caller to store
        after copying the rest; unless a later part overlaps it (the later one wins in C)."""
        if init is None:
            return None
        try:
            parts = initializers.parts(t, init)
        except CompileError:  # a designator this module does not evaluate either
            raise Unevaluated(init) from None
        value: Constant = None
        for part in parts:
            if any(_overlap(hole.path, part.path) for hole in holes or ()):
                raise Unevaluated(part.expr)
            try:
                value = self.place(value, t, part.path, part)
            except Unevaluated:
                if holes is None or not part.path:
                    raise
                holes.append(part)
        return value

    def place(self, value: Constant, t, path: tuple[initializers.Step, ...],
              part: initializers.Part) -> Constant:
        """`value` (of type `t`) with the subobject at `path` set from `part`."""
        if not path:
            return self.leaf(part)
        c = c_types.canonical(t)
        if c.kind == TypeKind.CONSTANTARRAY:
            count, index, sub = c.get_array_size(), path[0], c.get_array_element_type()
        elif c_types.is_union(c) or c_types.has_bitfields(c) or c_types.is_packed(c):
            raise Unevaluated(part.expr)  # their bytes are not evaluated here
        else:
            count, index, sub = (len(c_types.record_type(c).types),
                                 c_types.field_index(c, path[0]), path[0].type)
        items = value if isinstance(value, list) else [None] * count
        items[index] = self.place(items[index], sub, path[1:], part)
        return items

    def leaf(self, part: initializers.Part) -> Constant:
        """What one initialiser gives its subobject: a string's bytes, or a scalar."""
        c = c_types.canonical(part.ctype)
        text = initializers.string_literal(part)
        if text is not None:
            data = string_units(text)[:c.get_array_size()]
            return list(data) + [None] * (c.get_array_size() - len(data))
        if c.kind in (TypeKind.CONSTANTARRAY, TypeKind.RECORD):
            raise Unevaluated(part.expr)  # a struct or array value, not its members
        return self.scalar(c, part.expr)

    def scalar(self, t, item: Cursor) -> Constant:
        if c_types.is_pointer(t):
            return self.pointer(item)
        value = evaluate(item)
        if value is None:
            raise Unevaluated(item)
        if c_types.is_float(t):
            return _as_float(float(value), c_types.integer_width(t))
        return int(value)

    def pointer(self, item: Cursor) -> Constant:
        inner = strip(item)
        while inner.kind == CursorKind.CSTYLE_CAST_EXPR:
            inner = strip(list(inner.get_children())[-1])
        if inner.kind == CursorKind.STRING_LITERAL:
            return Address(self.string(inner))
        if inner.kind == CursorKind.UNARY_OPERATOR and unary_operator(inner)[0] == "&":
            place = _static_place(next(inner.get_children()))
            if place is not None:
                return Address(self.address_of(place[0]), place[1])
        place = _static_place(inner)
        if place is not None and c_types.is_array(inner.type):  # an array decays
            return Address(self.address_of(place[0]), place[1])
        if inner.kind == CursorKind.INTEGER_LITERAL and evaluate(inner) == 0:
            return None
        raise Unevaluated(item)


def _overlap(a: tuple[initializers.Step, ...], b: tuple[initializers.Step, ...]) -> bool:
    """Whether one path reaches into the subobject the other reaches (or is it)."""
    return a[:len(b)] == b[:len(a)]


def _static_place(c: Cursor) -> tuple[Cursor, int] | None:
    """The static object `c` names or lies in, and its byte offset there, for a variable, an
    element at a constant subscript and a member (not a bit-field) of one; else None."""
    c = strip(c)
    if _is_static_object(c):
        return c.referenced, 0
    kids = list(c.get_children())
    if c.kind == CursorKind.ARRAY_SUBSCRIPT_EXPR and len(kids) == 2 and \
            c_types.is_array(strip(kids[0]).type):
        outer, index = _static_place(kids[0]), evaluate(kids[1])
        size = c_types.canonical(c.type).get_size()
        if outer is None or not isinstance(index, int) or size < 0:
            return None
        return outer[0], outer[1] + index * size
    if c.kind == CursorKind.MEMBER_REF_EXPR and len(kids) == 1 and \
            not c_types.is_pointer(strip(kids[0]).type):  # `.f`, not `->f`
        outer, field = _static_place(kids[0]), c.referenced
        if outer is None or field is None or field.kind != CursorKind.FIELD_DECL or \
                field.is_bitfield():
            return None
        try:
            bits = c_types.field_offset(strip(kids[0]).type, field)
        except c_types.UnsupportedType:
            return None
        return outer[0], outer[1] + bits // 8
    return None


def _is_static_object(c: Cursor) -> bool:
    var = c.referenced if c.kind == CursorKind.DECL_REF_EXPR else None
    return var is not None and var.kind == CursorKind.VAR_DECL and \
        (var.semantic_parent.kind != CursorKind.FUNCTION_DECL or
         var.storage_class.name in ("STATIC", "EXTERN"))


def _as_float(value: float, width: int) -> float:
    """The value as the C float type of `width` bits holds it (rounded once, as C does)."""
    return struct.unpack("f", struct.pack("f", value))[0] if width == 32 else value


def _is_zero(value: Constant) -> bool:
    if isinstance(value, list):
        return all(_is_zero(v) for v in value)
    return value is None or (not isinstance(value, Address) and value == 0 and
                             math.copysign(1, value) > 0)  # -0.0 is not all-zero bits


def _numbers(value: Constant) -> list[int | float] | None:
    """The flattened numbers of a scalar or an array of scalars; None if anything else."""
    if isinstance(value, list):
        out = []
        for v in value:
            flat = _numbers(v)
            if flat is None:
                return None
            out += flat
        return out
    if isinstance(value, Address):
        return None
    return [0 if value is None else value]


def _signed(value: int, t: IntegerType) -> int:
    width = t.width.data
    value &= (1 << width) - 1
    return value - (1 << width) if width > 1 and value >= 1 << (width - 1) else value


def _shape(t: Attribute) -> tuple[list[int], Attribute]:
    dims = []
    while isinstance(t, llvm.LLVMArrayType):
        dims.append(t.size.data)
        t = t.type
    return dims, t


def global_op(symbol: str, mlir_type: Attribute, value: Constant, linkage: str,
              constant: bool, thread_local: bool = False) -> llvm.GlobalOp:
    """The `llvm.mlir.global` holding `value` (a definition; `thread_local`: one object per
    thread, `__thread`/`_Thread_local`)."""
    dims, scalar = _shape(mlir_type)
    numbers = None if isinstance(scalar, llvm.LLVMStructType) or scalar == LLVM_PTR else \
        _numbers(value)
    if _is_zero(value) or numbers is None:
        region = Region(Block())
        with_ops = _RegionBuilder(region.block)
        region.block.add_op(llvm.ReturnOp(with_ops.value(mlir_type, value)))
        return llvm.GlobalOp(mlir_type, symbol, linkage, constant=constant, body=region,
                             thread_local_=thread_local)
    if isinstance(scalar, IntegerType):
        numbers = [_signed(int(n), scalar) for n in numbers]
    if not dims:
        attr = IntegerAttr(numbers[0], scalar) if isinstance(scalar, IntegerType) else \
            FloatAttr(float(numbers[0]), scalar)
    else:
        attr = DenseIntOrFPElementsAttr.from_list(TensorType(scalar, dims), numbers)
    return llvm.GlobalOp(mlir_type, symbol, linkage, constant=constant, value=attr,
                         thread_local_=thread_local)


def declaration_op(symbol: str, mlir_type: Attribute, constant: bool,
                   thread_local: bool = False, weak: bool = False) -> llvm.GlobalOp:
    """An external global defined in another object (`weak`: or nowhere, its address null)."""
    return llvm.GlobalOp(mlir_type, symbol, "extern_weak" if weak else "external",
                         constant=constant, thread_local_=thread_local)


class _RegionBuilder:
    """A constant as the ops of an initialiser region: zero, constants, addresses, and
    aggregates built with `llvm.insertvalue`."""

    def __init__(self, block: Block):
        self.block = block

    def add(self, op) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def value(self, t: Attribute, value: Constant) -> SSAValue:
        if _is_zero(value):
            return self.add(llvm.ZeroOp(result_types=[t]))
        if isinstance(value, Address):
            address = self.add(llvm.AddressOfOp(value.symbol, LLVM_PTR))
            if not value.offset:
                return address
            return self.add(llvm.GEPOp.from_mixed_indices(address, [value.offset], i8))
        if not isinstance(value, list):
            attr = IntegerAttr(_signed(int(value), t), t) if isinstance(t, IntegerType) else \
                FloatAttr(float(value), t)
            return self.add(llvm.ConstantOp(attr, t))
        members = [t.type] * t.size.data if isinstance(t, llvm.LLVMArrayType) else list(t.types)
        agg = self.add(llvm.UndefOp(t))
        for i, (member_t, v) in enumerate(zip(members, value, strict=True)):
            agg = self.add(llvm.InsertValueOp(DenseArrayBase.from_list(i64, [i]), agg,
                                              self.value(member_t, v)))
        return agg
