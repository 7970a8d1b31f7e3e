"""Small facts about libclang cursors the whole frontend needs."""

from __future__ import annotations

import ctypes
import functools
import os
import re

from clang import cindex
from clang.cindex import Cursor, CursorKind, Type, conf
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr

from approxcc.diagnostics import CompileError, SourceLocation
from approxcc.frontend import c_types


def location(c: Cursor) -> SourceLocation:
    loc = c.location
    return SourceLocation(loc.file.name if loc.file else "<unknown>", loc.line, loc.column)


def unsupported(what: str, c: Cursor) -> CompileError:
    return CompileError(f"{what} is not supported by the approxcc C frontend yet", location(c))


def file_location(name: str, line: int = 1, column: int = 1) -> FileLineColLoc:
    """An MLIR location in file `name`, by its absolute path (`-g` line tables: the path
    names a DWARF file and its folder)."""
    return FileLineColLoc(StringAttr(os.path.abspath(name)), IntAttr(line), IntAttr(column))


def debug_location(c: Cursor) -> FileLineColLoc | None:
    """Where `c` is, as an MLIR location; None where it is in no file."""
    loc = c.location
    return None if loc.file is None else file_location(loc.file.name, loc.line, loc.column)


@functools.cache
def _cursor_visibility():
    """libclang's clang_getCursorVisibility, which cindex does not wrap."""
    get = conf.lib.clang_getCursorVisibility
    get.argtypes, get.restype = [Cursor], ctypes.c_int
    return get


@functools.cache
def _location_is_from_main_file():
    """libclang's clang_Location_isFromMainFile, which cindex does not wrap."""
    get = conf.lib.clang_Location_isFromMainFile
    get.argtypes, get.restype = [cindex.SourceLocation], ctypes.c_int
    return get


def in_main_file(c: Cursor) -> bool:
    """Whether `c` is in the translation unit's main file (where macros expand it): one
    libclang call, where its file's name takes four."""
    return bool(_location_is_from_main_file()(c.location))


# CXVisibility (invalid, hidden, protected, default) → LLVM's visibility (0 = default)
_VISIBILITY = {1: 1, 2: 2}


def visibility(c: Cursor) -> int:
    """The ELF visibility of an external entity as clang computes it for the parse's flags
    (-fvisibility=, `__attribute__((visibility))`, `#pragma GCC visibility`): LLVM's code,
    0 default, 1 hidden, 2 protected."""
    return _VISIBILITY.get(_cursor_visibility()(c), 0)


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


# Attributes of a variable that only silence a warning
WARNING_ATTRIBUTES = {"unused", "maybe_unused"}


def attribute_word(attr: Cursor) -> str:
    """An attribute's name without underscores (`__noinline__`: noinline); libclang shows
    no tokens for an implicit one: its kind then."""
    first = next(attr.get_tokens(), None)
    return first.spelling.strip("_") if first is not None else attr.kind.name.lower()


def declared_alignment(var: Cursor) -> int | None:
    """The alignment `__attribute__((aligned(N)))` gives a variable (`aligned` alone: the
    target's largest, 16), None without one; another form (`_Alignas`, a macro or an
    expression: libclang does not show its value) is not supported."""
    for attr in var.get_children():
        if attr.kind != CursorKind.ALIGNED_ATTR:
            continue
        words = [t.spelling for t in attr.get_tokens()]
        if words in (["aligned"], ["__aligned__"]):
            return 16
        if len(words) == 4 and words[0] in ("aligned", "__aligned__") and words[2].isdigit():
            return int(words[2])
        raise unsupported("this alignment specifier", attr)
    return None


def unparen(c: Cursor) -> Cursor:
    while c.kind == CursorKind.PAREN_EXPR:
        c = next(c.get_children())
    return c


def same_type(a: Type, b: Type) -> bool:
    """Equal up to qualifiers."""
    return c_types.unqualified_spelling(a) == c_types.unqualified_spelling(b)


_ESCAPES = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "e": 27}
_STRING_PIECE = re.compile(r'\\(?:([0-7]{1,3})|x([0-9a-fA-F]+)|u([0-9a-fA-F]{4})|'
                           r'U([0-9a-fA-F]{8})|(.))|([^\\"]+)|"', re.DOTALL)
_ENCODINGS = {8: "utf-8", 16: "utf-16-le", 32: "utf-32-le"}


def string_unit_bits(c: Cursor) -> int:
    """The width of a string literal's code units: 8 (`""`, `u8""`), 16 or 32 (`L""`,
    `u""`, `U""`)."""
    return c_types.integer_width(c.type.get_array_element_type())


def string_units(c: Cursor) -> list[int]:
    r"""The code units of a string literal (bytes for a narrow one), terminating NUL included.
    clang's spelling of the literal is its value (adjacent literals joined, macros expanded)
    with escapes: octal or `\x` for a code unit, `\u`/`\U` for a code point, which a
    narrow or 16-bit literal encodes as UTF-8 or UTF-16 (source text is UTF-8); `""`
    ends a `\x` escape (`L"\x20AC""A"`)."""
    bits = string_unit_bits(c)
    encoding, mask = _ENCODINGS.get(bits), (1 << bits) - 1
    if encoding is None:
        raise unsupported(f"a string literal of {bits}-bit characters", c)
    body = c.spelling[c.spelling.index('"') + 1:-1]
    units: list[int] = []
    for m in _STRING_PIECE.finditer(body):
        octal, hexa, short, long, char, plain = m.groups()
        if octal is not None or hexa is not None:
            units.append(int(octal if octal is not None else hexa,
                             8 if octal is not None else 16) & mask)
        elif char is not None:
            units.append(_ESCAPES.get(char, ord(char)))
        elif plain is not None or short or long:
            text = plain if plain is not None else chr(int(short or long, 16))
            data = text.encode(encoding, errors="surrogateescape")
            size = bits // 8
            units += [int.from_bytes(data[i:i + size], "little")
                      for i in range(0, len(data), size)]
    return units + [0]


def string_bytes(c: Cursor) -> bytes:
    """A string literal as it lies in memory (code units little-endian, as on x86-64)."""
    size = string_unit_bits(c) // 8
    return b"".join(u.to_bytes(size, "little") for u in string_units(c))
