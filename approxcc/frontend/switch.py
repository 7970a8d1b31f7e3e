"""C `switch` → `scf.if`s on comparisons of the controlling value with the case labels.

When no case falls through into the next one (each ends in `break`, `continue` or
`return`), the cases become one else-if chain that LLVM turns into a jump table or a
`switch`. Otherwise each run of statements after a label executes if that label or an
earlier one matched (C's fallthrough) and no jump has been taken since.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import reduce

from clang.cindex import Cursor, CursorKind
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import i1
from xdsl.ir import Block, Region, SSAValue

from approxcc.frontend.clang_eval import evaluate
from approxcc.frontend.cursors import unsupported
from approxcc.frontend.jumps import BREAK, escapes

_LABELS = (CursorKind.CASE_STMT, CursorKind.DEFAULT_STMT)
_JUMP_STATEMENTS = (CursorKind.BREAK_STMT, CursorKind.CONTINUE_STMT, CursorKind.RETURN_STMT)


@dataclass
class Segment:
    """Labels and the statements after them up to the next label (no labels: the
    statements before the first label, which control never reaches)."""

    labels: list[Cursor] = field(default_factory=list)
    statements: list[Cursor] = field(default_factory=list)

    @property
    def is_default(self) -> bool:
        return any(label.kind == CursorKind.DEFAULT_STMT for label in self.labels)


def segments(body: Cursor) -> list[Segment]:
    """The switch body cut at its labels; labels with no statement between them share one
    segment (`case 1: case 2: s;`)."""
    out = [Segment()]
    kids = list(body.get_children()) if body.kind == CursorKind.COMPOUND_STMT else [body]
    for s in kids:
        while s.kind in _LABELS:
            kids = list(s.get_children())
            if s.kind == CursorKind.CASE_STMT and len(kids) != 2:
                raise unsupported("a 'case' range", s)
            if out[-1].statements or not out[-1].labels:
                out.append(Segment())
            out[-1].labels.append(s)
            s = kids[-1]  # the labelled statement
        out[-1].statements.append(s)
    return out


def _ends_in_jump(statements: list[Cursor]) -> bool:
    if not statements:
        return False
    last = statements[-1]
    if last.kind == CursorKind.COMPOUND_STMT:
        return _ends_in_jump(list(last.get_children()))
    return last.kind in _JUMP_STATEMENTS


def _without_final_break(statements: list[Cursor]) -> list[Cursor]:
    """A case's statements without the `break` that ends it (it only stops the case)."""
    if statements and statements[-1].kind == CursorKind.BREAK_STMT:
        return statements[:-1]
    return statements


def _falls_through(parts: list[Segment]) -> bool:
    """Whether control can run from one case into the next (or code precedes all labels)."""
    cases = [p for p in parts[1:] if p.statements]
    return bool(parts[0].statements) or not all(_ends_in_jump(p.statements)
                                                 for p in cases[:-1])


class SwitchEmitter:
    """`switch` statements (a FunctionEmitter part)."""

    def switch_statement(self, c: Cursor) -> None:
        kids = list(c.get_children())
        if len(kids) != 2:
            raise unsupported("a 'switch' with an initialiser", c)
        cond, body = kids
        value = self.rvalue(cond)
        parts = segments(body)
        if _falls_through(parts):
            with self.jump_target(escapes(body), frozenset({BREAK})):
                hits = [self.label_hit(value, p, parts) for p in parts]
                self.fallthrough_cases(parts, hits, None)
            return
        parts = [Segment(p.labels, _without_final_break(p.statements)) for p in parts[1:]]
        jumps = frozenset().union(*(escapes(s) for p in parts for s in p.statements))
        with self.jump_target(jumps, frozenset({BREAK})):
            self.case_chain(value, [p for p in parts if not p.is_default],
                            next((p for p in parts if p.is_default), Segment()))

    def label_hit(self, value: SSAValue, part: Segment, parts: list[Segment]) -> SSAValue | None:
        """Whether control enters the switch at one of this segment's labels (`default`: no
        case of the switch matches)."""
        if part.is_default:
            return self.negation(self.any_case(value, [p for p in parts if p is not part]))
        return self.any_case(value, [part]) if part.labels else None

    def any_case(self, value: SSAValue, parts: list[Segment]) -> SSAValue:
        b = self.b
        hits = [b.insert(arith.CmpiOp(value, b.int_const(evaluate(next(label.get_children())),
                                                          value.type), "eq"))
                for p in parts for label in p.labels if label.kind == CursorKind.CASE_STMT]
        if not hits:
            return b.int_const(0, i1)
        return reduce(lambda x, y: b.insert(arith.OrIOp(x, y)), hits)

    def case_chain(self, value: SSAValue, cases: list[Segment], default: Segment) -> None:
        """`if (case 1) {...} else if (case 2) {...} else {default}`."""
        if not cases:
            self.sequence(default.statements)
            return
        then_block, else_block = Block(), Block()
        with self.b.at(then_block):
            self.sequence(cases[0].statements)
            self.b.insert(scf.YieldOp())
        with self.b.at(else_block):
            self.case_chain(value, cases[1:], default)
            self.b.insert(scf.YieldOp())
        self.b.insert(scf.IfOp(self.any_case(value, cases[:1]), [], Region(then_block),
                               Region(else_block)))

    def fallthrough_cases(self, parts: list[Segment], hits: list[SSAValue | None],
                          matched: SSAValue | None) -> None:
        """Each segment runs if its label or an earlier one matched; the ones after a
        segment that may jump are nested under the guard of that jump."""
        for i, (part, hit) in enumerate(zip(parts, hits, strict=True)):
            if hit is not None:
                matched = hit if matched is None else self.b.insert(arith.OrIOp(matched, hit))
            if part.statements:
                with self.when(matched if matched is not None else self.b.int_const(0, i1)):
                    self.sequence(part.statements)
            jumps = frozenset().union(*(escapes(s) for s in part.statements))
            if jumps and i + 1 < len(parts):
                with self.unless_jumped(jumps):
                    self.fallthrough_cases(parts[i + 1:], hits[i + 1:], matched)
                return
