"""C statements → func/scf: blocks, declarations, `if`, counted loops as `scf.for`, the
other loops as `scf.while`; jumps out of them through flags (jumps.py).
"""

from __future__ import annotations

from collections.abc import Callable

from clang.cindex import Cursor, CursorKind
from xdsl.dialects import arith, llvm, scf
from xdsl.dialects.builtin import (
    i1,
    i64,
)
from xdsl.ir import Block, Region, SSAValue

from approxcc.frontend import c_types
from approxcc.frontend.builder import INDEX
from approxcc.frontend.c_types import Arith, arith_of
from approxcc.frontend.counted_loops import (
    CountedLoop,
    analyse,
    for_parts,
)
from approxcc.frontend.cursors import debug_location, unsupported
from approxcc.frontend.jumps import (
    BREAK,
    CONTINUE,
    RETURN,
    by_goto,
    escapes,
    labels,
    leaves_loop,
    returns_early,
)
from approxcc.frontend.memory import LValue, declares_vla

_LOOP_JUMPS = frozenset({BREAK, CONTINUE})  # the jumps a loop is the target of
_STATEMENT_NAMES = {CursorKind.INDIRECT_GOTO_STMT: "a computed 'goto'",
                    CursorKind.CASE_STMT: "a 'case' label inside a nested statement",
                    CursorKind.DEFAULT_STMT: "a 'default' label inside a nested statement",
                    CursorKind.ASM_STMT: "inline assembly",
                    CursorKind.MS_ASM_STMT: "inline assembly"}


def escapes_all(statements: list[Cursor]) -> frozenset[str]:
    return frozenset().union(*map(escapes, statements))


_FILE_SCOPES = (CursorKind.TRANSLATION_UNIT, CursorKind.NAMESPACE, CursorKind.LINKAGE_SPEC)


class StatementEmitter:
    """C statements → scf control flow (a FunctionEmitter part)."""

    def statement(self, c: Cursor, top: bool = False) -> None:
        with self.b.located(debug_location(c)):
            knobs = self.by_line.get(c.extent.start.line, [])
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
            self.block(self.block_statements(c), top)
        elif k == CursorKind.DECL_STMT:
            for d in c.get_children():
                self.declaration(d)
        elif k == CursorKind.IF_STMT:
            self.if_statement(c)
        elif k == CursorKind.FOR_STMT:
            loop = analyse(c)
            if isinstance(loop, CountedLoop) and not by_goto(escapes(loop.body)):
                self.counted_loop(loop)
            else:
                self.for_as_while(c)
        elif k == CursorKind.WHILE_STMT:
            cond, body = c.get_children()
            self.while_loop(lambda: self.condition(cond), body)
        elif k == CursorKind.DO_STMT:
            body, cond = c.get_children()
            self.do_loop(body, cond)
        elif k == CursorKind.SWITCH_STMT:
            self.switch_statement(c)
        elif k in (CursorKind.BREAK_STMT, CursorKind.CONTINUE_STMT):
            self.set_flag(BREAK if k == CursorKind.BREAK_STMT else CONTINUE)
        elif k == CursorKind.RETURN_STMT:
            self.return_statement(c)
        elif k == CursorKind.NULL_STMT:
            pass
        elif k == CursorKind.GOTO_STMT:
            kind = next(iter(escapes(c)))
            if kind not in self.flags:
                raise unsupported("a 'goto' into a nested statement", c)
            self.set_flag(kind)
        elif k == CursorKind.LABEL_STMT:  # where the jumps to it land (sequence)
            self.statement(list(c.get_children())[-1])
        elif k.is_expression() or k == CursorKind.UNEXPOSED_EXPR:
            self.rvalue(c)
        else:
            raise unsupported(_STATEMENT_NAMES.get(k, f"the statement '{k.name.lower()}'"), c)

    def statement_expression(self, c: Cursor) -> SSAValue | None:
        """`({ s; …; e; })` (GNU, as in glibc's `assert`): the statements, then the value
        of the last one if it is an expression."""
        body = next(c.get_children())
        kids = self.block_statements(body)
        if escapes(body) or not kids:
            raise unsupported("this statement expression", c)
        self.sequence(kids[:-1])
        last = kids[-1]
        if last.kind.is_expression() or last.kind == CursorKind.UNEXPOSED_EXPR:
            return self.rvalue(last)
        self.statement(last)
        return None

    def block_statements(self, c: Cursor) -> list[Cursor]:
        """The statements of a `{}` block the user wrote (not the clause sites)."""
        return [s for s in c.get_children() if not self.unit.sites.is_site(s)]

    def block(self, kids: list[Cursor], top: bool) -> None:
        """A `{}` block: the flags of the gotos to its labels, the stack its
        variable-length arrays take."""
        saved = dict(self.flags)
        for s in kids:
            for kind in labels(s):
                if any(kind in escapes(k) for k in kids):
                    self.flags[kind] = self.new_flag()
                    self.set_flag(kind, False)
        if top and RETURN not in self.flags and kids and \
                kids[-1].kind == CursorKind.RETURN_STMT:  # the function's only return
            self.sequence(kids[:-1])
            with self.b.located(debug_location(kids[-1])):
                self.return_statement(kids[-1])
        elif not top and any(map(declares_vla, kids)):  # the block frees its VLAs
            stack = self.b.insert(llvm.StackSaveOp())
            self.sequence(kids)
            self.b.insert(llvm.StackRestoreOp(stack))
        else:
            self.sequence(kids)
        self.flags = saved

    def sequence(self, statements: list[Cursor], looping: frozenset[str] = frozenset(),
                 pending: frozenset[str] = frozenset()) -> None:
        """Statements in order. A jump in flight (`pending`: taken before these statements,
        or by one of them) skips the statements up to the label it lands on, one guard per
        stretch between landings; landing clears its flag, so that a label reached again
        (in a loop) finds it clear. From a label that a later goto jumps back to (not one
        of `looping`, whose loop this is), the statements are a loop."""
        for i, s in enumerate(statements):
            here = frozenset(labels(s))
            back = (here & escapes_all(statements[i:])) - (looping if i == 0 else frozenset())
            if back:
                self.backward_gotos(back, statements[i:], pending - here)
                return
            pending -= here
            if pending:
                at = next((j for j in range(i + 1, len(statements))
                           if set(labels(statements[j])) & (pending |
                                                             escapes_all(statements[j:]))),
                          len(statements))
                with self.unless_jumped(pending):
                    self.sequence(statements[i:at], looping if i == 0 else frozenset())
                self.sequence(statements[at:], pending=pending | escapes_all(statements[i:at]))
                return
            for kind in sorted(here & self.flags.keys()):
                self.set_flag(kind, False)
            self.statement(s)
            pending = escapes(s)

    def backward_gotos(self, kinds: frozenset[str], statements: list[Cursor],
                       pending: frozenset[str]) -> None:
        """Statements from a label on, run again each time a goto jumps back to it (the
        jumps `pending` on entry skip what precedes their labels the first time)."""
        before, after = Block(), Block()
        with self.b.at(before):
            self.sequence(statements, kinds, pending)
            self.b.insert(scf.ConditionOp(self.jumped(kinds)))
        with self.b.at(after):
            self.b.insert(scf.YieldOp())
        self.b.insert(scf.WhileOp([], [], Region(before), Region(after)))

    def function_body(self, terminator: type) -> None:
        """The function's statements, then `terminator` (func.return, or approx.yield in a
        function-level knob) with what it returns."""
        self.returns_with = terminator
        if returns_early(self.block_statements(self.body)):
            self.prepare_early_returns()
        self.statement(self.body, top=True)
        if RETURN in self.flags:
            self.b.insert(terminator(*self.returned()))
        elif not isinstance(self.b.block.last_op, terminator):
            self.b.insert(terminator(*self.implicit_return()))

    def return_statement(self, c: Cursor) -> None:
        kids = list(c.get_children())
        value = self.rvalue(kids[0]) if kids else None
        if c_types.is_void(self.result):
            value = None
        elif c_types.is_pointer(self.result):
            value = self.b.pointer(value)
        if RETURN not in self.flags:
            self.b.insert(self.returns_with(*([] if value is None else [value])))
            return
        if value is not None:
            self.store_returned(value)
        self.set_flag(RETURN)

    def condition(self, c: Cursor) -> SSAValue:
        return self.b.truth(self.rvalue(c))

    def if_statement(self, c: Cursor) -> None:
        kids = list(c.get_children())
        self.if_else(self.condition(kids[0]), lambda: self.statement(kids[1]),
                     lambda: self.statement(kids[2]) if len(kids) > 2 else None)

    def if_else(self, cond: SSAValue, then: Callable[[], object],
                other: Callable[[], object]) -> None:
        """Code emitted by `then` if `cond` (an i1) holds, by `other` if not."""
        blocks = []
        for branch in (then, other):
            with self.b.at(Block()) as block:
                branch()
                self.b.insert(scf.YieldOp())
            blocks.append(block)
        self.b.insert(scf.IfOp(cond, [], Region(blocks[0]), Region(blocks[1])))

    def while_loop(self, cond: Callable[[], SSAValue], body: Cursor,
                   after_body: Callable[[], None] | None = None) -> None:
        """`while (cond) { body; after_body }` (a `continue` skips to `after_body`)."""
        jumps = escapes(body)
        exits = leaves_loop(jumps)
        with self.jump_target(jumps, _LOOP_JUMPS):
            before, after = Block(), Block()
            with self.b.at(before):
                go = self.body_if(cond(), body, exits) if exits else cond()
                self.b.insert(scf.ConditionOp(go))
            with self.b.at(after):
                if not exits:
                    self.iteration(body)
                if after_body is not None:
                    after_body()
                self.b.insert(scf.YieldOp())
            self.b.insert(scf.WhileOp([], [], Region(before), Region(after)))

    def body_if(self, cond: SSAValue, body: Cursor, exits: frozenset[str]) -> SSAValue:
        """The body of a loop that `exits` can leave, run in scf.while's first region when
        `cond` holds; the result says whether the loop goes on. So a `break` branches straight
        to the exit and the increment, in the second region, stays unconditional: LLVM keeps
        a plain induction variable (guarding the increment with the flag would make it
        depend on each iteration's test, several times slower)."""
        then_block, else_block = Block(), Block()
        with self.b.at(then_block):
            self.iteration(body)
            self.b.insert(scf.YieldOp(self.negation(self.jumped(exits))))
        with self.b.at(else_block):
            self.b.insert(scf.YieldOp(self.b.int_const(0, i1)))
        return self.b.insert(scf.IfOp(cond, [i1], Region(then_block), Region(else_block)))

    def iteration(self, body: Cursor) -> None:
        self.new_iteration()
        self.statement(body)

    def do_loop(self, body: Cursor, cond: Cursor) -> None:
        """`do body while (cond)`: the body and the test both in scf.while's first region."""
        jumps = escapes(body)
        with self.jump_target(jumps, _LOOP_JUMPS):
            before, after = Block(), Block()
            with self.b.at(before):
                self.iteration(body)
                self.b.insert(scf.ConditionOp(
                    self.loop_condition(leaves_loop(jumps), lambda: self.condition(cond))))
            with self.b.at(after):
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

        inc = (lambda: self.rvalue(parts["inc"])) if "inc" in parts else None
        self.while_loop(cond, parts["body"], inc)

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
        target = self.induction_variable(loop)
        body = Block(arg_types=[INDEX])
        with b.at(body):
            k = b.insert(arith.IndexCastOp(body.args[0], i64))
            i = b.insert(arith.AddiOp(a, b.insert(arith.MuliOp(k, b.int_const(loop.step, i64)))))
            self.store(target, b.convert(i, Arith(64, var_t.signed, False), var_t))
            with self.jump_target(escapes(loop.body), _LOOP_JUMPS):
                self.iteration(loop.body)
            b.insert(scf.YieldOp())
        b.insert(scf.ForOp(b.index(0), b.to_index(trip), b.index(1), [], Region(body)))
        if not loop.declared_here:  # C leaves the variable at its exit value
            last = b.insert(arith.AddiOp(a, b.insert(arith.MuliOp(trip, b.int_const(loop.step,
                                                                                   i64)))))
            self.store(target, b.convert(last, Arith(64, var_t.signed, False), var_t))

    def induction_variable(self, loop: CountedLoop) -> LValue:
        """Where a counted loop's variable lives: a global or `static` variable in its own
        storage (code outside the function sees each value and the exit value), a local in
        its slot."""
        var = loop.var
        if var not in self.mem and var.kind == CursorKind.VAR_DECL and (
                var.storage_class.name in ("STATIC", "EXTERN")
                or var.semantic_parent.kind in _FILE_SCOPES):
            return self.global_lvalue(var)
        return LValue(self.mem.get(var) or self.alloca(var), (), var.type)
