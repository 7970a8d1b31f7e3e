"""libclang entry points the Python bindings do not wrap: constant evaluation
(`clang_Cursor_Evaluate`), unary operator kinds and the ranges the preprocessor skipped.
Asking clang (not reading the tokens) makes literals and operators written through macros,
`sizeof` and constant expressions come out exactly as the C compiler sees them."""

from __future__ import annotations

import ctypes

from clang.cindex import BinaryOperator, Cursor, CursorKind, SourceRange, TranslationUnit, conf

_INT, _FLOAT = 1, 2  # CXEvalResultKind


class _RangeList(ctypes.Structure):  # CXSourceRangeList
    _fields_ = [("count", ctypes.c_uint), ("ranges", ctypes.POINTER(SourceRange))]


def _lib() -> ctypes.CDLL:
    lib = conf.lib
    if not getattr(lib, "_approxcc_eval", False):
        lib.clang_Cursor_Evaluate.argtypes = [Cursor]
        lib.clang_Cursor_Evaluate.restype = ctypes.c_void_p
        for name, res in (("clang_EvalResult_getKind", ctypes.c_int),
                          ("clang_EvalResult_isUnsignedInt", ctypes.c_uint),
                          ("clang_EvalResult_getAsUnsigned", ctypes.c_ulonglong),
                          ("clang_EvalResult_getAsLongLong", ctypes.c_longlong),
                          ("clang_EvalResult_getAsDouble", ctypes.c_double)):
            getattr(lib, name).argtypes = [ctypes.c_void_p]
            getattr(lib, name).restype = res
        lib.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
        lib.clang_getCursorUnaryOperatorKind.argtypes = [Cursor]
        lib.clang_getCursorUnaryOperatorKind.restype = ctypes.c_int
        lib.clang_getAllSkippedRanges.argtypes = [TranslationUnit]
        lib.clang_getAllSkippedRanges.restype = ctypes.POINTER(_RangeList)
        lib.clang_disposeSourceRangeList.argtypes = [ctypes.POINTER(_RangeList)]
        lib._approxcc_eval = True
    return lib


def evaluate(cursor: Cursor) -> int | float | None:
    """The value of a constant expression, or None if clang cannot fold it or evaluating it
    has a side effect (clang folds `(x++, 1)` to 1: the value is known, but the code that
    stands for the expression must still increment x)."""
    if has_side_effects(cursor):
        return None
    lib = _lib()
    res = lib.clang_Cursor_Evaluate(cursor)
    if not res:
        return None
    try:
        kind = lib.clang_EvalResult_getKind(res)
        if kind == _INT:
            if lib.clang_EvalResult_isUnsignedInt(res):
                return int(lib.clang_EvalResult_getAsUnsigned(res))
            return int(lib.clang_EvalResult_getAsLongLong(res))
        if kind == _FLOAT:
            return float(lib.clang_EvalResult_getAsDouble(res))
        return None
    finally:
        lib.clang_EvalResult_dispose(res)


# builtins that do not evaluate their arguments (gcc's documentation)
_UNEVALUATED_ARGUMENTS = frozenset({"__builtin_constant_p", "__builtin_object_size"})


def has_side_effects(cursor: Cursor) -> bool:
    """Whether evaluating the expression may write memory or call a function (a builtin
    call aside); the operands of sizeof/alignof are not evaluated."""
    if cursor.kind.name in ("UNARY_EXPR", "CXX_UNARY_EXPR"):
        return False
    kind = cursor.kind
    if kind == CursorKind.CALL_EXPR:
        if cursor.spelling in _UNEVALUATED_ARGUMENTS:
            return False
        if not cursor.spelling.startswith("__builtin_"):
            return True
    elif kind in (CursorKind.COMPOUND_ASSIGNMENT_OPERATOR, CursorKind.COMPOUND_STMT):
        return True  # a GNU statement expression holds a compound statement
    elif kind == CursorKind.BINARY_OPERATOR and cursor.binary_operator == BinaryOperator.Assign:
        return True
    elif kind == CursorKind.UNARY_OPERATOR and unary_operator(cursor)[0] in ("++", "--"):
        return True
    return any(has_side_effects(k) for k in cursor.get_children())


# CXUnaryOperatorKind → (operator, is_prefix)
_UNARY = {1: ("++", False), 2: ("--", False), 3: ("++", True), 4: ("--", True), 5: ("&", True),
          6: ("*", True), 7: ("+", True), 8: ("-", True), 9: ("~", True), 10: ("!", True),
          11: ("__real", True), 12: ("__imag", True), 13: ("__extension__", True)}


def unary_operator(cursor: Cursor) -> tuple[str, bool]:
    """(operator, is_prefix) of a UNARY_OPERATOR cursor."""
    return _UNARY.get(_lib().clang_getCursorUnaryOperatorKind(cursor), ("?", True))


def skipped_lines(tu: TranslationUnit, path: str) -> list[tuple[int, int]]:
    """(first, last) lines of `path` that the preprocessor skipped (`#if 0`, dead `#ifdef`)."""
    lib = _lib()
    ranges = lib.clang_getAllSkippedRanges(tu)
    try:
        out = []
        for i in range(ranges.contents.count):
            r = ranges.contents.ranges[i]
            if r.start.file and r.start.file.name == path:
                out.append((r.start.line, r.end.line))
        return out
    finally:
        lib.clang_disposeSourceRangeList(ranges)
