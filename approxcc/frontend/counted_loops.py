"""Recognise C `for` loops that count: `for (i = a; i CMP b; i += s)` with a constant step,
a loop-invariant bound and a body that never writes `i`. Those become `scf.for`, so
`loop_perforate` applies to every counted loop however it is spelled.

The bound is evaluated once, before the loop, so it must be provably invariant: `n`, `n / 2`,
`p->n`, `s.len`, `a[k]`, a global, a call to a `const` (or, with no store in the loop, a
`pure`) function. Conservatively, what the bound reads may change through
* a store to the same variable (or any part of it);
* a store through a pointer, when the bound reads through a pointer or reads a variable
  whose address is taken (a global, a `static`, an array, `&v` anywhere in the function),
  and the two types may share storage (C's effective-type rule: character types and
  aggregates share with every type);
* a call that may write memory, under the same condition. What a call may write is its
  callee's *effect* (_effect): nothing (a `pure` or `const` function, one of the C library's
  that read only, _READ_ONLY, or a function of the translation unit that writes only its own
  locals and calls such functions), only what its pointer arguments point to (the C library's
  _THROUGH_ARGUMENTS, a function of the unit that writes only through its unchanged pointer
  parameters), or anything.
A local whose address is only passed to the C library's functions (`scanf("%d", &n)`), which
keep no pointer, is not reachable by later calls: only a call given its address may change it.
The induction variable itself must not change in the body by such a store or call either
(a global counter and a function that bumps it). The first such store or call is named in
the diagnostic; when the bound reads a local whose
address is taken, a note suggests copying it into one whose address is not.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from clang.cindex import (
    BinaryOperator,
    Cursor,
    CursorKind,
    StorageClass,
    Type,
    TypeKind,
)

from approxcc.diagnostics import Diagnostic, note
from approxcc.frontend import c_types
from approxcc.frontend.clang_eval import evaluate, unary_operator
from approxcc.frontend.cursors import location
from approxcc.frontend.jumps import escapes, leaves_loop

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


# Where an access lands: a named variable (its canonical cursor), memory reached through a
# pointer or reference, or somewhere unknown (an lvalue form the analysis does not follow).
_MEMORY, _ANYWHERE = "memory", "anywhere"
_FUNCTIONS = (CursorKind.FUNCTION_DECL, CursorKind.CXX_METHOD, CursorKind.CONSTRUCTOR,
              CursorKind.DESTRUCTOR, CursorKind.CONVERSION_FUNCTION, CursorKind.FUNCTION_TEMPLATE)
_CHARS = (TypeKind.CHAR_S, TypeKind.CHAR_U, TypeKind.SCHAR, TypeKind.UCHAR)


@dataclass(frozen=True)
class _Access:
    """A read of the bound, or a write or call of the loop that may change it."""
    root: Cursor | str  # the variable it lies in, _MEMORY or _ANYWHERE
    type: Type | None   # the type of the object accessed; None: any
    at: Cursor          # the expression, for the diagnostic


class NotCounted(str):
    """Why a `for` does not count (a str, for the diagnostic), with notes pointing at the
    code that prevents it."""

    notes: tuple[Diagnostic, ...] = ()

    @classmethod
    def at(cls, reason: str, notes: list[Diagnostic]) -> NotCounted:
        why = cls(reason)
        why.notes = tuple(notes)
        return why


def _place(e: Cursor) -> Cursor | str:
    """Where the lvalue `e` lies."""
    e = strip(e)
    if e.kind == CursorKind.DECL_REF_EXPR:
        v = e.referenced
        if v is None or v.kind not in (CursorKind.VAR_DECL, CursorKind.PARM_DECL):
            return _ANYWHERE
        return _MEMORY if c_types.is_reference(v.type) else v.canonical
    if e.kind == CursorKind.MEMBER_REF_EXPR:
        kids = list(e.get_children())
        if not kids or c_types.is_pointer(kids[0].type):  # `p->f`, or C++'s implicit this
            return _MEMORY
        return _place(kids[0])
    if e.kind == CursorKind.ARRAY_SUBSCRIPT_EXPR:
        base = next((strip(k) for k in e.get_children() if c_types.is_address(strip(k).type)),
                    None)
        if base is None:
            return _ANYWHERE
        return _place(base) if c_types.is_array(base.type) else _MEMORY
    if e.kind == CursorKind.UNARY_OPERATOR and unary_spelling(e)[0] == "*":
        return _MEMORY
    return _ANYWHERE


def _alias_class(t: Type | None) -> str | None:
    """Objects of types in different classes never share storage under C's effective-type
    rule (C11 6.5p7), which clang -O2 assumes too; None: may share with any (character
    types, aggregates, unknown)."""
    if t is None:
        return None
    c = c_types.canonical(t.get_pointee() if c_types.is_reference(t) else t)
    if c.kind in _CHARS or c.kind == TypeKind.RECORD or c_types.is_array(c):
        return None
    if c_types.is_integer(c):  # signed and unsigned variants alias
        return f"int{c.get_size()}"
    return "pointer" if c_types.is_pointer(c) else c.kind.spelling


def _access_type(e: Cursor) -> Type | None:
    """The type an access goes by: None (any) inside a union, whose members share storage."""
    n = strip(e)
    while n.kind in (CursorKind.MEMBER_REF_EXPR, CursorKind.ARRAY_SUBSCRIPT_EXPR):
        kids = [strip(k) for k in n.get_children()]
        base = next((k for k in kids if c_types.is_address(k.type) or
                     c_types.canonical(k.type).kind == TypeKind.RECORD), None)
        if base is None:
            break
        record = c_types.canonical(c_types.pointee_type(base.type)
                                   if c_types.is_pointer(base.type) else base.type)
        if record.kind == TypeKind.RECORD and \
                record.get_declaration().kind == CursorKind.UNION_DECL:
            return None
        n = base
    return e.type


def _may_overlap(a: Type | None, b: Type | None) -> bool:
    ka, kb = _alias_class(a), _alias_class(b)
    return ka is None or kb is None or ka == kb


def _has_attribute(fn: Cursor | None, kinds: tuple[CursorKind, ...]) -> bool:
    decls = [] if fn is None else [fn, fn.canonical, fn.get_definition()]
    return any(k.kind in kinds for d in decls if d is not None for k in d.get_children())


_MATH = ("sqrt", "cbrt", "hypot", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh",
         "cosh", "tanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "fabs",
         "floor", "ceil", "round", "trunc", "fmod", "fmin", "fmax", "copysign", "erf")
# The C library's functions that write no memory but errno (the math functions) ...
_SETS_ERRNO = frozenset(f + suffix for f in _MATH for suffix in ("", "f", "l"))
_READ_ONLY = _SETS_ERRNO | {
    "strlen", "strnlen", "strcmp", "strncmp", "memcmp", "strchr", "strrchr", "strstr",
    "memchr", "strspn", "strcspn", "abs", "labs", "llabs", "toupper", "tolower", "isalpha",
    "isdigit", "isspace", "isalnum", "isupper", "islower", "atoi", "atol", "atof"}
# ... and those that write only through the pointers they are given (printf's `%n`); none of
# them keeps a pointer it is given
_THROUGH_ARGUMENTS = frozenset({
    "printf", "fprintf", "sprintf", "snprintf", "vprintf", "vfprintf", "vsprintf",
    "vsnprintf", "puts", "fputs", "putchar", "fputc", "putc", "scanf", "fscanf", "sscanf",
    "memcpy", "memmove", "memset", "strcpy", "strncpy", "strcat", "strncat", "fflush",
    "fgets", "fread", "fwrite", "strtol", "strtoul", "strtod", "strtof"})
_NO_EFFECT, _ARGUMENTS, _ANY = 0, 1, 2  # what a call may write, by its callee (_effect)


def _effect(fn: Cursor | None, seen: frozenset[Cursor] = frozenset(),
            errno: bool = False) -> int:
    """What calling `fn` may write: _NO_EFFECT, _ARGUMENTS (only memory its pointer
    arguments reach) or _ANY. A function of the translation unit is read; a recursive one
    may write anything. `errno`: a math function setting errno writes (_ANY)."""
    if fn is None or fn.kind != CursorKind.FUNCTION_DECL:
        return _ANY
    if _has_attribute(fn, (CursorKind.PURE_ATTR, CursorKind.CONST_ATTR)):
        return _NO_EFFECT
    if fn.spelling in _READ_ONLY:
        return _ANY if errno and fn.spelling in _SETS_ERRNO else _NO_EFFECT
    if fn.spelling in _THROUGH_ARGUMENTS:
        return _ARGUMENTS
    definition = fn.get_definition()
    if definition is None or definition.canonical in seen:
        return _ANY
    return _body_effect(definition, seen | {definition.canonical}, errno)


def _body_effect(fn: Cursor, seen: frozenset[Cursor], errno: bool) -> int:
    params = {p.canonical for p in fn.get_arguments()}
    unchanged = params - {v.canonical for v in written_vars(fn) if v is not None}
    effect = _NO_EFFECT
    for n in fn.walk_preorder():
        k = n.kind
        if k in (CursorKind.BINARY_OPERATOR, CursorKind.COMPOUND_ASSIGNMENT_OPERATOR) and \
                n.binary_operator in _WRITES or \
                k == CursorKind.UNARY_OPERATOR and unary_spelling(n)[0] in ("++", "--"):
            target = next(n.get_children())
            place = _place(target)
            if place == _MEMORY and _pointer_base(target) in unchanged:
                effect = max(effect, _ARGUMENTS)
            elif not (isinstance(place, Cursor) and _own_local(place, fn)):
                return _ANY
        elif k == CursorKind.CALL_EXPR:
            callee = _effect(n.referenced, seen, errno)
            if callee == _ANY or callee == _ARGUMENTS and not all(
                    _pointer_base(a) in unchanged or _own_local(_place(a), fn)
                    for a in _pointer_arguments(n)):
                return _ANY
            effect = max(effect, callee)
        elif k in (CursorKind.ASM_STMT, CursorKind.MS_ASM_STMT):
            return _ANY
    return effect


def _own_local(place: Cursor | str, fn: Cursor) -> bool:
    """Whether `place` is an automatic variable or parameter of `fn`."""
    return isinstance(place, Cursor) and place.semantic_parent == fn and \
        place.storage_class not in (StorageClass.STATIC, StorageClass.EXTERN)


def _pointer_base(e: Cursor) -> Cursor | None:
    """The variable a pointer expression or an access through one starts from (`p` of `*p`,
    `p[i]`, `p->f`, `p + 1`), if any."""
    e = strip(e)
    while e.kind != CursorKind.DECL_REF_EXPR:
        kids = [strip(k) for k in e.get_children()]
        pointers = [k for k in kids if c_types.is_pointer(k.type)]
        if e.kind not in (CursorKind.UNARY_OPERATOR, CursorKind.ARRAY_SUBSCRIPT_EXPR,
                          CursorKind.MEMBER_REF_EXPR, CursorKind.BINARY_OPERATOR) or \
                len(pointers) != 1:
            return None
        e = pointers[0]
    return e.referenced.canonical if e.referenced is not None else None


def _pointer_arguments(call: Cursor) -> list[Cursor]:
    """The arguments of a call through which it may write: pointers to what is not const."""
    out = []
    for a in call.get_arguments():
        t = c_types.canonical(a.type)
        if c_types.is_pointer(t) and not t.get_pointee().is_const_qualified():
            out.append(a)
    return out


def _addresses(e: Cursor) -> set[Cursor]:
    """The variables whose address `e` takes (`&v`, an array naming its address)."""
    out = set()
    for n in e.walk_preorder():
        if n.kind == CursorKind.UNARY_OPERATOR and unary_spelling(n)[0] == "&" or \
                n.kind == CursorKind.DECL_REF_EXPR and c_types.is_array(n.type):
            place = _place(next(n.get_children()) if n.kind == CursorKind.UNARY_OPERATOR
                           else n)
            if isinstance(place, Cursor):
                out.add(place)
    return out


def _call_changes(call: Cursor, read: _Access, escaped: Callable[[Cursor], bool]) -> bool:
    """Whether `call` may store into what `read` reads."""
    effect = _effect(call.referenced) if call.kind == CursorKind.CALL_EXPR else _ANY
    unnamed = read.root in (_MEMORY, _ANYWHERE)
    if effect == _ANY:
        return unnamed or escaped(read.root)
    if unnamed and call.referenced.spelling in _SETS_ERRNO:
        return _alias_class(read.type) in (None, "int4")  # errno is an int
    if effect == _NO_EFFECT:
        return False
    pointers = _pointer_arguments(call)
    if not unnamed and any(read.root in _addresses(a) for a in pointers):
        return True
    return (unnamed or escaped(read.root)) and any(
        _may_overlap(read.type, c_types.canonical(a.type).get_pointee()) for a in pointers)


def _spelling(c: Cursor) -> str:
    """The expression as written (macro names kept), for diagnostics."""
    out = ""
    for t in c.get_tokens():
        if out and (out[-1].isalnum() or out[-1] == "_") and (t.spelling[0].isalnum()
                                                               or t.spelling[0] == "_"):
            out += " "
        out += t.spelling
    return out


def _bound_reads(bound: Cursor) -> list[_Access] | NotCounted:
    """What evaluating the bound reads, or why it cannot be evaluated once before the loop."""
    if evaluate(bound) is not None:  # a constant (`sizeof a / sizeof a[0]` reads no memory)
        return []
    reads = []
    for n in bound.walk_preorder():
        k = n.kind
        if k.is_statement() or k == CursorKind.LAMBDA_EXPR:
            return NotCounted.at("the loop bound holds a statement", [])
        if k == CursorKind.CALL_EXPR:
            if _has_attribute(n.referenced, (CursorKind.CONST_ATTR,)):
                continue  # reads only its arguments
            # evaluated once if it writes nothing (errno included: the body may read it)
            if _effect(n.referenced, errno=True) != _NO_EFFECT:
                return _impure_bound_call(bound, n)
            reads.append(_Access(_MEMORY, None, n))  # a pure function may read any memory
        elif (k in (CursorKind.BINARY_OPERATOR, CursorKind.COMPOUND_ASSIGNMENT_OPERATOR)
              and n.binary_operator in _WRITES) or \
                (k == CursorKind.UNARY_OPERATOR and unary_spelling(n)[0] in ("++", "--")):
            return NotCounted.at("the loop bound has a side effect",
                                 [note("the side effect is here", location(n))])
        elif k == CursorKind.DECL_REF_EXPR and n.referenced is not None and \
                n.referenced.kind in (CursorKind.VAR_DECL, CursorKind.PARM_DECL):
            # an array or struct named here is not read itself: the subscript or member is
            if not (c_types.is_array(n.type) or c_types.canonical(n.type).kind ==
                    TypeKind.RECORD):
                reads.append(_Access(_place(n), n.type, n))
        elif k in (CursorKind.MEMBER_REF_EXPR, CursorKind.ARRAY_SUBSCRIPT_EXPR) or \
                (k == CursorKind.UNARY_OPERATOR and unary_spelling(n)[0] == "*"):
            reads.append(_Access(_place(n), _access_type(n), n))
        if k != CursorKind.CALL_EXPR and n.type.is_volatile_qualified():
            return NotCounted.at(f"the loop bound reads the volatile '{_spelling(n)}'",
                                 [note("the read is here", location(n))])
    return reads


def _callee(call: Cursor) -> str:
    """The called function's name, or the callee expression as written."""
    return call.referenced.spelling if call.referenced is not None else _spelling(call)


def _impure_bound_call(bound: Cursor, call: Cursor) -> NotCounted:
    name = _callee(call)
    return NotCounted.at(
        f"the loop bound calls '{name}', which may have side effects",
        [note("the call is here", location(call)),
         note(f"compute the bound into a local before the loop (`const long n = "
              f"{_spelling(bound)};`) and bound the loop by it"
              + (f", or declare '{name}' __attribute__((pure)) if it writes no memory"
                 if call.referenced is not None and
                 call.referenced.get_definition() is not None else ""),
              location(call))])


def _loop_writes(parts: list[Cursor], cplusplus: bool) -> tuple[list[_Access], list[Cursor]]:
    """The stores of the loop's body and increment, and its calls that may write memory."""
    writes, calls = [], []
    for part in parts:
        for n in part.walk_preorder():
            k = n.kind
            if k in (CursorKind.BINARY_OPERATOR, CursorKind.COMPOUND_ASSIGNMENT_OPERATOR) and \
                    n.binary_operator in _WRITES:
                target = next(n.get_children())
                writes.append(_Access(_place(target), _access_type(target), n))
            elif k == CursorKind.UNARY_OPERATOR and unary_spelling(n)[0] in ("++", "--"):
                target = next(n.get_children())
                writes.append(_Access(_place(target), _access_type(target), n))
            elif k in (CursorKind.CALL_EXPR, CursorKind.CXX_NEW_EXPR,
                       CursorKind.CXX_DELETE_EXPR):
                calls.append(n)
            elif k in (CursorKind.ASM_STMT, CursorKind.MS_ASM_STMT):
                writes.append(_Access(_ANYWHERE, None, n))
            elif cplusplus and k == CursorKind.VAR_DECL and \
                    c_types.canonical(n.type).kind == TypeKind.RECORD:
                calls.append(n)  # its constructor and destructor run each iteration
    return writes, calls


def _escaped(v: Cursor, cplusplus: bool) -> bool:
    """Whether memory writes or calls may reach variable `v`: it is not a local, or its
    address is taken (arrays decay to their address) other than as the argument of a C
    library function that keeps no pointer, or C++ binds it to a reference."""
    fn = v.semantic_parent
    if fn is None or fn.kind not in _FUNCTIONS or \
            v.storage_class in (StorageClass.STATIC, StorageClass.EXTERN) or \
            c_types.is_array(v.type) or c_types.is_reference(v.type):
        return True
    taken = _taken_addresses(fn, cplusplus)
    return v in taken or _ANYWHERE in taken


@functools.lru_cache(maxsize=4)  # the loops of a function ask in turn: one walk, not one a loop
def _taken_addresses(fn: Cursor, cplusplus: bool) -> frozenset[object]:
    """The places whose address function `fn` takes, or C++ binds to a reference
    (_ANYWHERE: a place it cannot name, or a lambda, which may capture any by reference)."""
    lent = {strip(a) for n in fn.walk_preorder() if n.kind == CursorKind.CALL_EXPR and
            n.referenced is not None and n.referenced.spelling in _THROUGH_ARGUMENTS
            for a in n.get_arguments()}
    taken: set[object] = set()
    for n in fn.walk_preorder():
        if n.kind == CursorKind.LAMBDA_EXPR:
            taken.add(_ANYWHERE)
        elif n.kind == CursorKind.UNARY_OPERATOR and unary_spelling(n)[0] == "&" and \
                n not in lent:
            operand = _place(next(n.get_children()))
            if operand != _MEMORY:  # `&*p`, `&p->f`: no variable's address
                taken.add(operand)
        elif cplusplus and _binds_reference(n):
            taken.update(place for k in n.get_children()
                         if strip(k).kind in (CursorKind.DECL_REF_EXPR,
                                              CursorKind.MEMBER_REF_EXPR)
                         and isinstance(place := _place(k), Cursor))
    return frozenset(taken)


def _binds_reference(n: Cursor) -> bool:
    """C++ code that may bind what it names to a reference: call arguments, a reference's
    initialiser, the object of `v.method()`."""
    if n.kind == CursorKind.CALL_EXPR:
        return True
    if n.kind == CursorKind.VAR_DECL:
        return c_types.is_reference(n.type)
    return n.kind == CursorKind.MEMBER_REF_EXPR and n.referenced is not None and \
        n.referenced.kind == CursorKind.CXX_METHOD


def _changes(read: _Access, write: _Access, escaped: Callable[[Cursor], bool]) -> bool:
    """Whether `write` may store into what `read` reads."""
    if read.root == _ANYWHERE or write.root == _ANYWHERE:
        return True
    if isinstance(read.root, Cursor) and isinstance(write.root, Cursor):
        return read.root == write.root
    if read.root == _MEMORY and write.root == _MEMORY:
        return _may_overlap(read.type, write.type)
    named = read.root if isinstance(read.root, Cursor) else write.root
    return escaped(named) and _may_overlap(read.type, write.type)


def _invariant(bound: Cursor, parts: list[Cursor], cplusplus: bool,
               fresh: Cursor | None) -> NotCounted | None:
    """None when no store or call of the loop (`parts`: body, increment) may change what the
    bound reads; otherwise why, pointing at the first store or call that may. `fresh`: the
    induction variable when the loop declares it; nothing made before the loop points to it
    (a pointer the loop makes to it is a store the loop makes to the pointer)."""
    reads = _bound_reads(bound)
    if isinstance(reads, NotCounted):
        return reads
    change = _first_change(reads, parts, cplusplus, fresh)
    if change is None:
        return None
    read, by, at = change
    return _changed(read, by, at)


def _first_change(reads: list[_Access], parts: list[Cursor], cplusplus: bool,
                  fresh: Cursor | None) -> tuple[_Access, str, Cursor] | None:
    """The first store or call of `parts` that may change what one of `reads` reads: (that
    read, the store or call in words, where), or None."""
    if not reads:
        return None
    writes, calls = _loop_writes(parts, cplusplus)
    cached = functools.cache(functools.partial(_escaped, cplusplus=cplusplus))

    def escaped(v: Cursor) -> bool:
        return v != fresh and cached(v)

    for r in reads:
        for w in writes:
            if _changes(r, w, escaped):
                return r, f"the store to '{_spelling(next(w.at.get_children(), w.at))}'", w.at
        for call in calls:
            if _call_changes(call, r, escaped):
                return r, f"the call to '{_callee(call)}'", call
    return None


def _changed(read: _Access, by: str, at: Cursor) -> NotCounted:
    where = location(at)
    notes = [note(f"{by} may change '{_spelling(read.at)}'", where)]
    v = read.root
    if isinstance(v, Cursor) and v.semantic_parent is not None and \
            v.semantic_parent.kind in _FUNCTIONS and not c_types.is_array(v.type) and \
            v.storage_class not in (StorageClass.STATIC, StorageClass.EXTERN):
        notes.append(note(f"copy '{v.spelling}' into a local whose address is not taken "
                          f"before the loop, and bound the loop by that copy", location(v)))
    return NotCounted.at(f"the loop bound may change while the loop runs: {by} at {where} may "
                         f"change '{_spelling(read.at)}'", notes)


def analyse(loop: Cursor) -> CountedLoop | str:
    """A CountedLoop, or the reason (for diagnostics) why this `for` does not count; a
    NotCounted when code can be pointed at."""
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
    if var in written_vars(body):
        return f"the loop body writes the induction variable '{var.spelling}'"
    # a comparison is `bool` in C++ and `int` in C (libclang tells no language for a loop)
    cplusplus, fresh = cond.type.kind == TypeKind.BOOL, var.canonical if declared else None
    # a global or address-taken counter may change through a call or a pointer
    indirect = _first_change([_Access(var.canonical, var.type, lhs)], [body], cplusplus, fresh)
    if indirect is not None:
        _, by, at = indirect
        return NotCounted.at(f"{by} at {location(at)} may change the induction variable "
                             f"'{var.spelling}'", [note(f"{by} is here", location(at))])
    changing = _invariant(rhs, [body, inc], cplusplus, fresh)
    if changing is not None:
        return changing
    leaves = sorted(leaves_loop(escapes(body)))  # `continue` stays in the loop
    if leaves:
        return f"the loop body leaves the loop early with '{leaves[0]}'"
    if cmp == "!=" and abs(step) != 1:
        return "a '!=' condition needs a step of 1 or -1"
    wraps = _may_wrap(var.type, first, rhs, cmp, step)
    if wraps is not None:
        return wraps
    if cmp == "!=":
        cmp = "<" if step > 0 else ">"
    if (cmp in ("<", "<=")) != (step > 0):
        return "the step moves away from the bound"
    return CountedLoop(var, declared, first, rhs, cmp, step, body)


def _may_wrap(t: Type, first: Cursor, bound: Cursor, cmp: str, step: int) -> str | None:
    """Why the induction variable may wrap around before the condition ends the loop (an
    unsigned or narrower-than-int variable wraps where C defines it to; a counted loop
    would stop where C's goes on), or None. A signed int or wider cannot: its overflow is
    undefined. Constant ends are checked exactly; otherwise only the patterns that cannot
    wrap are counted: an unsigned int or wider going up to `< n` or down to `> n` by 1, or
    by 1 to `!= n` from 0 up (or down to 0)."""
    width = c_types.integer_width(t)
    signed = c_types.is_signed(t)
    if signed and width >= 32:
        return None
    why = f"the induction variable's type '{t.spelling}' may wrap around before the " \
          "condition ends the loop"
    lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
    a, b = integer_constant(first), integer_constant(bound)
    if a is not None and b is not None:
        if not lo <= a <= hi:
            return why
        if cmp == "!=":
            reaches = (b - a) % step == 0 and (b - a) * step >= 0
            return None if reaches and lo <= b <= hi else why
        if (cmp in ("<", "<=")) != (step > 0):
            return None  # not counted for that reason
        # the last value the condition lets through, then the next one must not wrap
        last = {"<": b - 1, "<=": b, ">": b + 1, ">=": b}[cmp]
        if (last - a) * step < 0:
            return None  # no iteration at all
        last = a + (last - a) // step * step
        return None if lo <= last + step <= hi else why
    if width < 32:
        return why
    if abs(step) == 1 and (cmp, step) in (("<", 1), (">", -1)):
        return None
    if cmp == "!=" and (a == 0 and step == 1 or b == 0 and step == -1):
        return None
    return why


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
