"""C statements → func/scf: blocks, declarations, `if`, counted loops as `scf.for`, the
rest as `scf.while`.
"""

from __future__ import annotations

from collections.abc import Callable

from clang.cindex import Cursor, CursorKind
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    i1,
    i64,
)
from xdsl.ir import Block, Region, SSAValue

from approxcc.dialect.approx import YieldOp
from approxcc.frontend import c_types
from approxcc.frontend.builder import INDEX
from approxcc.frontend.c_types import Arith, arith_of
from approxcc.frontend.counted_loops import (
    CountedLoop,
    analyse,
    for_parts,
)
from approxcc.frontend.cursors import unsupported
from approxcc.frontend.memory import LValue

_STATEMENT_NAMES = {CursorKind.BREAK_STMT: "'break'", CursorKind.CONTINUE_STMT: "'continue'",
                    CursorKind.GOTO_STMT: "'goto'", CursorKind.INDIRECT_GOTO_STMT: "'goto'",
                    CursorKind.LABEL_STMT: "a label", CursorKind.SWITCH_STMT: "'switch'",
                    CursorKind.CASE_STMT: "'case'", CursorKind.DEFAULT_STMT: "'default'",
                    CursorKind.DO_STMT: "a 'do' loop", CursorKind.ASM_STMT: "inline assembly",
                    CursorKind.MS_ASM_STMT: "inline assembly"}


class StatementEmitter:
    """C statements → scf control flow (a FunctionEmitter part)."""

    def statement(self, c: Cursor, top: bool = False) -> None:
        knobs = self.unit.by_line.get(c.extent.start.line, [])
        pending = [a for a in knobs if id(a) not in self.unit.used]
        if pending and c.kind != CursorKind.COMPOUND_STMT or (pending and not top):
            for a in pending:
                self.unit.used.add(id(a))
            self.annotated(c, pending)
            return
        self.plain_statement(c, top)

    def plain_statement(self, c: Cursor, top: bool = False) -> None:
        k = c.kind
        if k == CursorKind.COMPOUND_STMT:
            kids = [s for s in c.get_children() if not self.unit.sites.is_site(s)]
            for i, s in enumerate(kids):
                if s.kind == CursorKind.RETURN_STMT:
                    if not (top and i == len(kids) - 1):
                        raise unsupported("a 'return' before the end of the function", s)
                    self.return_statement(s)
                else:
                    self.statement(s)
        elif k == CursorKind.DECL_STMT:
            for d in c.get_children():
                self.declaration(d)
        elif k == CursorKind.IF_STMT:
            self.if_statement(c)
        elif k == CursorKind.FOR_STMT:
            loop = analyse(c)
            if isinstance(loop, CountedLoop):
                self.counted_loop(loop)
            else:
                self.for_as_while(c)
        elif k == CursorKind.WHILE_STMT:
            cond, body = c.get_children()
            self.while_loop(lambda: self.condition(cond), lambda: self.statement(body))
        elif k == CursorKind.NULL_STMT:
            pass
        elif k == CursorKind.RETURN_STMT:
            raise unsupported("a 'return' before the end of the function", c)
        elif k.is_expression() or k == CursorKind.UNEXPOSED_EXPR:
            self.rvalue(c)
        else:
            raise unsupported(_STATEMENT_NAMES.get(k, f"the statement '{k.name.lower()}'"), c)

    def return_statement(self, c: Cursor) -> None:
        values = [self.rvalue(k) for k in c.get_children()]
        if values and c_types.is_pointer(self.result):
            values = [self.b.pointer(values[0])]
        self.b.insert(YieldOp(*values) if self.returns_yield else func.ReturnOp(*values))

    def condition(self, c: Cursor) -> SSAValue:
        if c_types.is_pointer(c.type):
            raise unsupported("a pointer used as a truth value", c)
        return self.b.truth(self.rvalue(c))

    def if_statement(self, c: Cursor) -> None:
        kids = list(c.get_children())
        cond = self.condition(kids[0])
        then_block, else_block = Block(), Block()
        with self.b.at(then_block):
            self.statement(kids[1])
            self.b.insert(scf.YieldOp())
        with self.b.at(else_block):
            if len(kids) > 2:
                self.statement(kids[2])
            self.b.insert(scf.YieldOp())
        self.b.insert(scf.IfOp(cond, [], Region(then_block), Region(else_block)))

    def while_loop(self, cond: Callable[[], SSAValue], body: Callable[[], None]) -> None:
        before, after = Block(), Block()
        with self.b.at(before):
            self.b.insert(scf.ConditionOp(cond()))
        with self.b.at(after):
            body()
            self.b.insert(scf.YieldOp())
        self.b.insert(scf.WhileOp([], [], Region(before), Region(after)))

    def for_as_while(self, c: Cursor) -> None:
        parts = for_parts(c)
        if "init" in parts:
            self.statement(parts["init"])

        def cond() -> SSAValue:
            if "cond" in parts:
                return self.condition(parts["cond"])
            return self.b.int_const(1, i1)

        def body() -> None:
            self.statement(parts["body"])
            if "inc" in parts:
                self.rvalue(parts["inc"])

        self.while_loop(cond, body)

    def counted_loop(self, loop: CountedLoop) -> None:
        """`for (i = a; i CMP b; i += s)` → scf.for k in [0, trip) with i = a + k*s."""
        b = self.b
        var_t = arith_of(loop.var.type)
        first = b.convert(self.rvalue(loop.init), arith_of(loop.init.type), var_t)
        bound_t = arith_of(loop.bound.type)
        wide = Arith(64, bound_t.signed, False)
        a = b.convert(first, var_t, Arith(64, var_t.signed, False))
        bound = b.convert(self.rvalue(loop.bound), bound_t, wide)
        up = loop.step > 0
        lo, hi = (a, bound) if up else (bound, a)
        s = abs(loop.step)
        inclusive = loop.cmp in ("<=", ">=")
        pred = ("sle" if inclusive else "slt") if wide.signed else ("ule" if inclusive else "ult")
        runs = b.insert(arith.CmpiOp(lo, hi, pred))
        span = b.insert(arith.SubiOp(hi, lo))
        if inclusive:  # (hi - lo) / s + 1
            trip = b.insert(arith.AddiOp(b.insert(arith.DivUIOp(span, b.int_const(s, i64))),
                                         b.int_const(1, i64)))
        else:          # (hi - lo + s - 1) / s
            trip = b.insert(arith.DivUIOp(b.insert(arith.AddiOp(span, b.int_const(s - 1, i64))),
                                          b.int_const(s, i64)))
        trip = b.insert(arith.SelectOp(runs, trip, b.int_const(0, i64)))
        var_ref = self.mem.get(loop.var) or self.alloca(loop.var)
        body = Block(arg_types=[INDEX])
        with b.at(body):
            k = b.insert(arith.IndexCastOp(body.args[0], i64))
            i = b.insert(arith.AddiOp(a, b.insert(arith.MuliOp(k, b.int_const(loop.step, i64)))))
            self.store(LValue(var_ref, (), loop.var.type),
                       b.convert(i, Arith(64, var_t.signed, False), var_t))
            self.statement(loop.body)
            b.insert(scf.YieldOp())
        b.insert(scf.ForOp(b.index(0), b.to_index(trip), b.index(1), [], Region(body)))
        if not loop.declared_here:  # C leaves the variable at its exit value
            last = b.insert(arith.AddiOp(a, b.insert(arith.MuliOp(trip, b.int_const(loop.step,
                                                                                   i64)))))
            self.store(LValue(var_ref, (), loop.var.type),
                       b.convert(last, Arith(64, var_t.signed, False), var_t))
