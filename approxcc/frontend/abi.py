"""How C values cross a call under the x86-64 System V convention, as clang lowers them, so
that MLIR-compiled code and code the system compiler built call each other.

Scalars pass as themselves (pointers as `!llvm.ptr`). A struct or union of at most 16 bytes
is split into eightbytes, each passed in a general register (`i64`) if any integer or pointer
lies in it, else in a vector register (`f64`, or `f32` for a last eightbyte of 4 bytes); if
the registers left cannot take all of it, or it is larger, or it has unaligned fields, it is
passed in memory: a pointer to a copy marked `llvm.byval`. Results: one eightbyte as its type,
two as an `!llvm.struct` of both (returned in two registers), larger ones through a leading
pointer marked `llvm.sret`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from clang.cindex import Type, TypeKind
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    f32,
    f64,
    i64,
)
from xdsl.dialects.llvm import LLVMStructType, LLVMVoidType
from xdsl.ir import Attribute

from approxcc.frontend import c_types
from approxcc.frontend.c_types import LLVM_PTR, UnsupportedType

_GPRS, _SSE_REGS = 6, 8  # argument registers: rdi…r9, xmm0…xmm7


@dataclass(frozen=True)
class Arg:
    """One C argument: the IR values it becomes."""

    ctype: Type
    types: tuple[Attribute, ...]    # a record in registers: its eightbytes
    in_memory: bool = False         # a record passed as a pointer to a copy

    @property
    def coerced(self) -> bool:
        return c_types.is_record(self.ctype) and not self.in_memory


@dataclass(frozen=True)
class Lowering:
    """A C signature as IR: leading `sret` pointer, arguments, result."""

    args: tuple[Arg, ...]
    result: Type
    result_types: tuple[Attribute, ...]  # none: `void`, or returned through `sret`
    sret: bool

    def inputs(self) -> list[Attribute]:
        return ([LLVM_PTR] if self.sret else []) + [t for a in self.args for t in a.types]

    def llvm_result(self) -> Attribute:
        return self.result_types[0] if self.result_types else LLVMVoidType()

    def arg_attrs(self) -> ArrayAttr | None:
        """`llvm.sret`/`llvm.byval` on the arguments that need it (None: none do)."""
        attrs = [DictionaryAttr({"llvm.sret": c_types.element_type(self.result)})] \
            if self.sret else []
        for a in self.args:
            attrs += [DictionaryAttr({"llvm.byval": c_types.element_type(a.ctype)})
                      if a.in_memory else DictionaryAttr({})] * len(a.types)
        return ArrayAttr(attrs) if self.sret or any(a.in_memory for a in self.args) else None


def eightbytes(t: Type) -> list[Attribute] | None:
    """The register types of a struct or union passed in registers; None: in memory."""
    size = c_types.size_of(t)
    if size == 0:
        raise UnsupportedType(t.spelling)  # GNU empty structs: clang drops them
    if size > 16:
        return None
    leaves: list[tuple[int, int, bool]] = []
    if not _leaves(t, 0, leaves):
        return None
    integer = [False] * ((size + 7) // 8)
    for offset, length, sse in leaves:
        for k in range(offset // 8, (offset + length - 1) // 8 + 1):
            integer[k] |= not sse
    return [i64 if integer[k] else (f32 if size - 8 * k <= 4 else f64)
            for k in range(len(integer))]


def _leaves(t: Type, offset: int, out: list[tuple[int, int, bool]]) -> bool:
    """The scalars in `t` as (offset, size, floating); False if one is misaligned."""
    c = c_types.canonical(t)
    if c.kind == TypeKind.CONSTANTARRAY:
        elem, step = c.get_array_element_type(), c_types.size_of(c.get_array_element_type())
        return all(_leaves(elem, offset + i * step, out) for i in range(c.get_array_size()))
    if c.kind == TypeKind.RECORD:
        ok = True
        for f in c.get_fields():
            bits = c_types.field_offset(c, f)
            if f.is_bitfield():
                out.append((offset + bits // 8, (bits % 8 + f.get_bitfield_width() + 7) // 8,
                            False))
            else:
                ok &= _leaves(f.type, offset + bits // 8, out)
        return ok
    if not (c_types.is_integer(c) or c_types.is_float(c) or c_types.is_pointer(c)):
        raise UnsupportedType(t.spelling)
    size = c_types.size_of(c)
    out.append((offset, size, c_types.is_float(c)))
    return offset % size == 0


def lower(params: Sequence[Type], result: Type) -> Lowering:
    """The IR form of a call with arguments of these C types (the registers are assigned in
    order, as the convention does)."""
    sret = False
    result_types: tuple[Attribute, ...] = ()
    gprs, sses = _GPRS, _SSE_REGS
    if c_types.is_record(result):
        regs = eightbytes(result)
        if regs is None:
            sret, gprs = True, gprs - 1
        else:
            result_types = (regs[0] if len(regs) == 1 else
                            LLVMStructType.from_type_list(regs),)
    elif not c_types.is_void(result):
        result_types = (c_types.abi_type(result),)
    args = []
    for t in params:
        if not c_types.is_record(t):
            kind = c_types.abi_type(t)
            if c_types.is_float(t):
                sses -= 1
            else:
                gprs -= 1
            args.append(Arg(t, (kind,)))
            continue
        regs = eightbytes(t)
        need_g = sum(r == i64 for r in regs) if regs else 0
        need_s = len(regs) - need_g if regs else 0
        if regs is None or need_g > gprs or need_s > sses:
            args.append(Arg(t, (LLVM_PTR,), in_memory=True))
        else:
            gprs, sses = gprs - need_g, sses - need_s
            args.append(Arg(t, tuple(regs)))
    return Lowering(tuple(args), result, result_types, sret)
