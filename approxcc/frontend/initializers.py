"""Which subobject each part of a C initialiser initialises (C11 6.7.9), on clang's
*syntactic* form of the initialiser, as libclang shows it: braces as written, brace elision,
designators (`.field`, `[index]`, chained, `.a[1] = 5, 7` going on at `a[2]`), unions
(the first named member unless designated), string literals for char arrays, later parts
overriding earlier ones. What is not written is zero: the caller clears the object first.
"""

from __future__ import annotations

from dataclasses import dataclass

from clang.cindex import Cursor, CursorKind, Type, TypeKind

from approxcc.frontend import c_types
from approxcc.frontend.clang_eval import evaluate
from approxcc.frontend.cursors import same_type, unparen, unsupported

Step = int | Cursor  # an array index, or a field


@dataclass(frozen=True)
class Part:
    """`expr` initialises the subobject of type `ctype` reached from the object by `path`."""

    path: tuple[Step, ...]
    ctype: Type
    expr: Cursor


class _Items:
    """The initialisers of one brace level, consumed in order."""

    def __init__(self, cursors: list[Cursor]):
        self.cursors, self.pos = cursors, 0

    def peek(self) -> Cursor | None:
        return self.cursors[self.pos] if self.pos < len(self.cursors) else None

    def take(self) -> Cursor:
        self.pos += 1
        return self.cursors[self.pos - 1]


def parts(t: Type, init: Cursor) -> list[Part]:
    """The scalar (or whole struct, or string) initialisers of an object of type `t`."""
    out: list[Part] = []
    _object(t, (), _Items([init]), out)
    return out


def is_designated(c: Cursor) -> bool:
    """A designated initialiser (`.x = 1`, `[2] = 3`): libclang shows it as a `void`
    expression whose children are the designators and then the value."""
    return c.kind == CursorKind.UNEXPOSED_EXPR and c.type.kind == TypeKind.VOID


def _is_aggregate(t: Type) -> bool:
    return c_types.canonical(t).kind in (TypeKind.CONSTANTARRAY, TypeKind.RECORD)


def _members(t: Type) -> list[Cursor]:
    """The fields an initialiser list goes through: unnamed bit-fields take no part."""
    return [f for f in c_types.canonical(t).get_fields()
            if not (f.is_bitfield() and not f.spelling)]


def _count(t: Type) -> int:
    """How many subobjects a brace list without designators fills."""
    c = c_types.canonical(t)
    if c.kind == TypeKind.CONSTANTARRAY:
        return c.get_array_size()
    return min(1, len(_members(c))) if c_types.is_union(c) else len(_members(c))


def _sub(t: Type, i: int) -> tuple[Step, Type]:
    c = c_types.canonical(t)
    if c.kind == TypeKind.CONSTANTARRAY:
        return i, c.get_array_element_type()
    f = _members(c)[i]
    return f, f.type


def _position(t: Type, designator: Cursor) -> int:
    if c_types.canonical(t).kind == TypeKind.CONSTANTARRAY:
        index = evaluate(designator)
        if index is None:
            raise unsupported("this array designator", designator)
        return int(index)
    fields = _members(t)
    if designator.kind != CursorKind.MEMBER_REF or designator.referenced not in fields:
        raise unsupported("this designator", designator)
    return fields.index(designator.referenced)


def _object(t: Type, path: tuple[Step, ...], items: _Items, out: list[Part]) -> None:
    """One subobject of type `t` from the items at this brace level."""
    item = items.peek()
    if item.kind == CursorKind.INIT_LIST_EXPR:
        items.take()
        _braced(t, path, list(item.get_children()), out)
    elif _is_aggregate(t) and not _whole(t, item):
        _fill(t, path, items, 0, False, out)  # brace elision
    else:
        out.append(Part(path, t, items.take()))


def _whole(t: Type, item: Cursor) -> bool:
    """Whether `item` initialises the aggregate `t` at once: a string for a char array, a
    struct value for a struct."""
    if c_types.canonical(t).kind == TypeKind.CONSTANTARRAY:
        return _string(item) is not None
    return not is_designated(item) and same_type(item.type, t)


def _string(item: Cursor) -> Cursor | None:
    inner = unparen(item)
    while inner.kind == CursorKind.UNEXPOSED_EXPR and len(list(inner.get_children())) == 1:
        inner = unparen(next(inner.get_children()))
    return inner if inner.kind == CursorKind.STRING_LITERAL else None


def string_literal(part: Part) -> Cursor | None:
    """The string literal a char array part is initialised with, if it is one."""
    return _string(part.expr) \
        if c_types.canonical(part.ctype).kind == TypeKind.CONSTANTARRAY else None


def _braced(t: Type, path: tuple[Step, ...], kids: list[Cursor], out: list[Part]) -> None:
    if not _is_aggregate(t):  # `int x = {1};`
        if kids:
            _object(t, path, _Items(kids[:1]), out)
    elif len(kids) == 1 and c_types.is_array(t) and _whole(t, kids[0]):
        out.append(Part(path, t, kids[0]))  # `char s[] = {"text"}`
    else:
        _fill(t, path, _Items(kids), 0, True, out)


def _fill(t: Type, path: tuple[Step, ...], items: _Items, start: int, braced: bool,
          out: list[Part]) -> None:
    """Subobjects of `t` from `start` on. In an elided aggregate (not `braced`) a designator
    belongs to the enclosing braces, and running out of subobjects ends the aggregate."""
    i = start
    while (item := items.peek()) is not None:
        if is_designated(item):
            if not braced:
                return
            items.take()
            *designators, value = item.get_children()
            if any(tok.spelling == "..." for tok in item.get_tokens()):
                raise unsupported("a designator range", item)
            i = _designated(t, path, designators, value, items, out) + 1
            continue
        if i >= _count(t):
            return  # excess initialisers: clang has warned
        step, sub = _sub(t, i)
        _object(sub, (*path, step), items, out)
        i += 1


def _designated(t: Type, path: tuple[Step, ...], designators: list[Cursor], value: Cursor,
                items: _Items, out: list[Part]) -> int:
    """Initialise the subobject of `t` the designators name; positional items after it go on
    inside the innermost aggregate. Returns the position the first designator names."""
    i = _position(t, designators[0])
    step, sub = _sub(t, i)
    sub_path = (*path, step)
    if len(designators) == 1:
        _object(sub, sub_path, _Items([value]), out)
    else:
        j = _designated(sub, sub_path, designators[1:], value, items, out)
        _fill(sub, sub_path, items, j + 1, False, out)
    return i

