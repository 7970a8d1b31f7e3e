"""Recognise C `for` loops that count: `for (i = a; i CMP b; i += s)` with a constant step,
a loop-invariant bound and a body that never writes `i`. Those become `scf.for`, so
`loop_perforate` applies to every counted loop however it is spelled.
"""

from __future__ import annotations

from dataclasses import dataclass

from clang.cindex import BinaryOperator, Cursor, CursorKind

from approxcc.frontend import c_types
from approxcc.frontend.clang_eval import evaluate, unary_operator
from approxcc.frontend.jumps import BREAK, RETURN, escapes

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}
_CMP = {BinaryOperator.LT: "<", BinaryOperator.LE: "<=", BinaryOperator.GT: ">",
        BinaryOperator.GE: ">=", BinaryOperator.NE: "!="}
_WRITES = {BinaryOperator.Assign, BinaryOperator.AddAssign, BinaryOperator.SubAssign,
           BinaryOperator.MulAssign, BinaryOperator.DivAssign, BinaryOperator.RemAssign,
           BinaryOperator.ShlAssign, BinaryOperator.ShrAssign, BinaryOperator.AndAssign,
           BinaryOperator.OrAssign, BinaryOperator.XorAssign}


@dataclass(frozen=True)
class CountedLoop:
    var: Cursor            # the VAR_DECL / PARM_DECL of the induction variable
    declared_here: bool    # `for (int i = ...)`: no value after the loop
    init: Cursor           # expression giving the first value
    bound: Cursor          # expression compared against (already converted by clang)
    cmp: str               # normalised so that `var` is on the left: < <= > >= !=
    step: int              # signed constant step
    body: Cursor


def strip(c: Cursor) -> Cursor:
    """Look through implicit casts and parentheses."""
    while c.kind in (CursorKind.UNEXPOSED_EXPR, CursorKind.PAREN_EXPR):
        kids = list(c.get_children())
        if len(kids) != 1:
            break
        c = kids[0]
    return c


def refers_to(c: Cursor, var: Cursor) -> bool:
    c = strip(c)
    return c.kind == CursorKind.DECL_REF_EXPR and c.referenced == var


def unary_spelling(c: Cursor) -> tuple[str, bool]:
    """(operator, is_prefix) of a UNARY_OPERATOR, from clang (tokens would show macro names)."""
    return unary_operator(c)


def integer_constant(c: Cursor) -> int | None:
    value = evaluate(c)
    return value if isinstance(value, int) else None


def _step(inc: Cursor, var: Cursor) -> int | None:
    if inc.kind == CursorKind.UNARY_OPERATOR and refers_to(list(inc.get_children())[0], var):
        op, _ = unary_spelling(inc)
        return {"++": 1, "--": -1}.get(op)
    if inc.kind in (CursorKind.COMPOUND_ASSIGNMENT_OPERATOR, CursorKind.BINARY_OPERATOR):
        lhs, rhs = inc.get_children()
        if not refers_to(lhs, var):
            return None
        kind = inc.binary_operator
        if kind in (BinaryOperator.AddAssign, BinaryOperator.SubAssign):
            k = integer_constant(rhs)
            return None if k is None else (k if kind == BinaryOperator.AddAssign else -k)
        if kind == BinaryOperator.Assign:  # i = i + k / i = i - k
            rhs = strip(rhs)
            if rhs.kind == CursorKind.BINARY_OPERATOR and \
                    rhs.binary_operator in (BinaryOperator.Add, BinaryOperator.Sub):
                a, b = rhs.get_children()
                k = integer_constant(b)
                if refers_to(a, var) and k is not None:
                    return k if rhs.binary_operator == BinaryOperator.Add else -k
    return None


def written_vars(c: Cursor) -> set[Cursor]:
    """Variables assigned, incremented or address-taken anywhere under `c`."""
    out: set[Cursor] = set()
    for n in c.walk_preorder():
        target = None
        if n.kind in (CursorKind.BINARY_OPERATOR, CursorKind.COMPOUND_ASSIGNMENT_OPERATOR) \
                and n.binary_operator in _WRITES:
            target = next(n.get_children())
        elif n.kind == CursorKind.UNARY_OPERATOR and \
                unary_spelling(n)[0] in ("++", "--", "&"):
            target = next(n.get_children())
        if target is not None:
            target = strip(target)
            if target.kind == CursorKind.DECL_REF_EXPR:
                out.add(target.referenced)
    return out


def _invariant(bound: Cursor, written: set[Cursor]) -> bool:
    """Pure, and reads no variable the loop writes and no memory the loop could write."""
    if evaluate(bound) is not None:  # a constant (`sizeof a / sizeof a[0]` reads no memory)
        return True
    for n in bound.walk_preorder():
        if n.kind in (CursorKind.CALL_EXPR, CursorKind.ARRAY_SUBSCRIPT_EXPR,
                      CursorKind.MEMBER_REF_EXPR):
            return False
        if n.kind == CursorKind.UNARY_OPERATOR and unary_spelling(n)[0] in ("*", "++", "--"):
            return False
        if n.kind in (CursorKind.BINARY_OPERATOR, CursorKind.COMPOUND_ASSIGNMENT_OPERATOR) \
                and n.binary_operator in _WRITES:
            return False
        if n.kind == CursorKind.DECL_REF_EXPR and n.referenced in written:
            return False
    return True


def analyse(loop: Cursor) -> CountedLoop | str:
    """A CountedLoop, or the reason (for diagnostics) why this `for` does not count."""
    parts = for_parts(loop)
    init, cond, inc, body = (parts.get(k) for k in ("init", "cond", "inc", "body"))
    if init is None or cond is None or inc is None:
        return "the loop needs an initialisation, a condition and an increment"
    var, first, declared = _induction(init)
    if var is None or not c_types.is_integer(var.type):
        return "the initialisation must set one integer induction variable"
    cond = strip(cond)
    if cond.kind != CursorKind.BINARY_OPERATOR or cond.binary_operator not in _CMP:
        return "the condition must compare the induction variable with <, <=, >, >= or !="
    lhs, rhs = cond.get_children()
    cmp = _CMP[cond.binary_operator]
    if refers_to(rhs, var):
        lhs, rhs, cmp = rhs, lhs, _FLIP[cmp]
    if not refers_to(lhs, var):
        return f"the condition does not test the induction variable '{var.spelling}'"
    step = _step(inc, var)
    if not step:
        return f"the increment must change '{var.spelling}' by a non-zero constant"
    written = written_vars(body) | written_vars(inc)
    if var in written_vars(body):
        return f"the loop body writes the induction variable '{var.spelling}'"
    if not _invariant(rhs, written):
        return "the loop bound may change while the loop runs"
    leaves = sorted(escapes(body) & {BREAK, RETURN})  # `continue` stays in the loop
    if leaves:
        return f"the loop body leaves the loop early with '{leaves[0]}'"
    if cmp == "!=" and abs(step) != 1:
        return "a '!=' condition needs a step of 1 or -1"
    if cmp == "!=":
        cmp = "<" if step > 0 else ">"
    if (cmp in ("<", "<=")) != (step > 0):
        return "the step moves away from the bound"
    return CountedLoop(var, declared, first, rhs, cmp, step, body)


def _induction(init: Cursor) -> tuple[Cursor | None, Cursor | None, bool]:
    if init.kind == CursorKind.DECL_STMT:
        decls = list(init.get_children())
        if len(decls) == 1 and decls[0].kind == CursorKind.VAR_DECL:
            value = [k for k in decls[0].get_children() if k.kind != CursorKind.TYPE_REF]
            if value:
                return decls[0], value[-1], True
        return None, None, False
    init = strip(init)
    if init.kind == CursorKind.BINARY_OPERATOR and init.binary_operator == BinaryOperator.Assign:
        lhs, rhs = init.get_children()
        lhs = strip(lhs)
        if lhs.kind == CursorKind.DECL_REF_EXPR:
            return lhs.referenced, rhs, False
    return None, None, False


def for_parts(loop: Cursor) -> dict[str, Cursor]:
    """The present parts of a FOR_STMT by name: init, cond, inc, body.

    libclang omits absent parts; tell them apart by where they sit between the semicolons."""
    kids = list(loop.get_children())
    semi1, semi2 = _semicolons(loop)
    parts = {"body": kids[-1]}
    for k in kids[:-1]:
        start = k.extent.start.offset
        parts["init" if start < semi1 else "cond" if start < semi2 else "inc"] = k
    return parts


def _semicolons(loop: Cursor) -> list[int]:
    depth, out = 0, []
    for t in loop.get_tokens():
        if t.spelling == "(":
            depth += 1
        elif t.spelling == ")":
            depth -= 1
            if depth == 0:
                break
        elif t.spelling == ";" and depth == 1:
            out.append(t.extent.start.offset)
    return out
