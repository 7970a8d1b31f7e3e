"""What an annotation applies to, checked against its directive's target kinds (the
registry's `targets`): a counted `for` loop, an expression statement / block / `if`, a
statement holding exactly one call, or a function definition."""

from __future__ import annotations

from dataclasses import dataclass

from clang.cindex import Cursor, CursorKind

from approxcc.annotations import Annotation
from approxcc.diagnostics import CompileError, Diagnostic, note
from approxcc.frontend import c_types
from approxcc.frontend.counted_loops import NotCounted, analyse
from approxcc.frontend.cursors import location


@dataclass(frozen=True)
class Target:
    kind: str                    # "loop" | "statement" | "call" | "function" (docs/approx-ir.md)
    callee: Cursor | None = None  # the called function ("call") or the definition ("function")


def _wrong(a: Annotation, what: str, c: Cursor,
           why: tuple[Diagnostic, ...] = ()) -> CompileError:
    what_is_here = "loop is here" if c.kind == CursorKind.FOR_STMT else "annotated code is here"
    return CompileError(f"'{a.directive}' {what}", a.loc,
                        [note(what_is_here, location(c)), *why])


def _calls(c: Cursor) -> list[Cursor]:
    return [n for n in c.walk_preorder() if n.kind == CursorKind.CALL_EXPR]


def _returns_scalar(fn: Cursor) -> bool:
    result = fn.type.get_result()
    return c_types.is_integer(result) or c_types.is_float(result)


def _statement_kind(a: Annotation, c: Cursor) -> Target | CompileError:
    """The first of the directive's statement target kinds that `c` is, else why not."""
    errors: list[CompileError] = []
    for kind in ("loop", "statement", "call"):
        if kind not in a.spec.targets:
            continue
        why = _fits(a, kind, c)
        if isinstance(why, Target):
            return why
        errors.append(why)
    return errors[0] if errors else _wrong(a, "applies to a function definition, not to a "
                                              "statement", c)


def _fits(a: Annotation, kind: str, c: Cursor) -> Target | CompileError:
    if kind == "loop":
        if c.kind != CursorKind.FOR_STMT:
            return _wrong(a, "must precede a counted 'for' loop", c)
        why = analyse(c)
        if isinstance(why, str):
            return _wrong(a, f"cannot count this loop: {why}", c,
                          why.notes if isinstance(why, NotCounted) else ())
        return Target("loop")
    if kind == "statement":
        if c.kind not in (CursorKind.COMPOUND_STMT, CursorKind.IF_STMT) and \
                not (c.kind.is_expression() or c.kind == CursorKind.UNEXPOSED_EXPR):
            return _wrong(a, "must precede an expression statement, a '{}' block or an 'if'", c)
        return Target("statement")
    calls = _calls(c)
    if len(calls) != 1 or calls[0].referenced is None or \
            calls[0].referenced.kind != CursorKind.FUNCTION_DECL:
        definition = "a function definition or " if "function" in a.spec.targets else ""
        return _wrong(a, f"must precede {definition}a statement holding exactly one call "
                         f"(this one holds {len(calls)})", c)
    callee = calls[0].referenced
    if a.spec.scalar_result and not _returns_scalar(callee):
        return _wrong(a, f"needs a call whose callee returns a scalar; '{callee.spelling}' "
                         f"returns '{callee.type.get_result().spelling}'", c)
    return Target("call", callee)


def statement_target(a: Annotation, c: Cursor) -> Target:
    """The target kind of the statement `c` under `a`'s directive (registry `targets`)."""
    found = _statement_kind(a, c)
    if isinstance(found, CompileError):
        raise found
    return found


def function_target(a: Annotation, fn: Cursor) -> Target:
    if "function" not in a.spec.targets:
        raise _wrong(a, "applies to a statement, not to a function definition", fn)
    if a.spec.scalar_result and not _returns_scalar(fn):
        raise _wrong(a, f"needs a function that returns a scalar; '{fn.spelling}' returns "
                        f"'{fn.type.get_result().spelling}'", fn)
    if a.check is not None:
        raise CompileError("'check' on a function definition is not supported yet; put the "
                           "annotation on a call statement", a.clause_locs.get("check", a.loc))
    return Target("function", fn)


def variants(a: Annotation, exact: Cursor, functions: dict[str, Cursor]) -> list[Cursor]:
    """The declarations of `variants(...)`, each with exactly the exact function's type."""
    out = []
    where = a.clause_locs.get("variants", a.loc)
    for name in a.variants:
        variant = functions.get(name)
        if variant is None:
            raise CompileError(f"variant '{name}' is not a function declared in this file",
                               where)
        if variant.type.get_canonical().spelling != exact.type.get_canonical().spelling:
            raise CompileError(
                f"variant '{name}' has type '{variant.type.spelling}' but '{exact.spelling}' "
                f"has type '{exact.type.spelling}'", where,
                [note(f"'{name}' is declared here", location(variant)),
                 note(f"'{exact.spelling}' is declared here", location(exact))])
        out.append(variant)
    return out
