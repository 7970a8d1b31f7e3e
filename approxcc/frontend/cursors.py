"""Small facts about libclang cursors the whole frontend needs."""

from __future__ import annotations

import functools
import re

from clang.cindex import Cursor, CursorKind, Type, conf

from approxcc.diagnostics import CompileError, SourceLocation
from approxcc.frontend import c_types


def location(c: Cursor) -> SourceLocation:
    loc = c.location
    return SourceLocation(loc.file.name if loc.file else "<unknown>", loc.line, loc.column)


def unsupported(what: str, c: Cursor) -> CompileError:
    return CompileError(f"{what} is not supported by the approxcc C frontend yet", location(c))


@functools.cache
def _var_decl_initializer():
    """libclang's clang_Cursor_getVarDeclInitializer, which cindex does not wrap."""
    get = conf.lib.clang_Cursor_getVarDeclInitializer
    get.argtypes, get.restype = [Cursor], Cursor
    return get


def initializer(d: Cursor) -> Cursor | None:
    """A variable's `= init`, if it has one. Its children are no guide: they also hold the
    array bounds of its declarator (`double (*p)[n + 1]`, `int a[2 * n]`)."""
    init = _var_decl_initializer()(d)
    if init.is_null():
        return None
    init._tu = d._tu  # as cindex does for the cursors it returns
    return init


def unparen(c: Cursor) -> Cursor:
    while c.kind == CursorKind.PAREN_EXPR:
        c = next(c.get_children())
    return c


def same_type(a: Type, b: Type) -> bool:
    """Equal up to qualifiers."""
    def bare(t: Type) -> str:
        return t.get_canonical().spelling.replace("const ", "").replace("volatile ", "")

    return bare(a) == bare(b)


_ESCAPES = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "e": 27}


def string_bytes(c: Cursor) -> bytes:
    """The bytes of a narrow string literal, terminating NUL included. clang's spelling of the
    literal is its value (adjacent literals joined, macros expanded) with octal escapes."""
    text = c.spelling
    if not text.startswith('"') or c_types.integer_width(c.type.get_array_element_type()) != 8:
        raise unsupported("a wide string literal", c)
    out = bytearray()
    for m in re.finditer(r'\\([0-7]{1,3}|x[0-9a-fA-F]+|.)|([^\\])', text[1:-1], re.DOTALL):
        esc, plain = m.groups()
        if plain is not None:
            out += plain.encode("utf-8")
        elif esc[0] in "01234567":
            out.append(int(esc, 8) & 0xFF)
        elif esc[0] == "x":
            out.append(int(esc[1:], 16) & 0xFF)
        else:
            out.append(_ESCAPES.get(esc, ord(esc)))
    return bytes(out) + b"\0"
