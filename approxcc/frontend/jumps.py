"""`break`, `continue` and early `return` in structured scf: each jump sets a flag in a
`memref.alloca` slot (LLVM's mem2reg turns the slots back into branches), the code a jump
may skip runs under `scf.if` on the flags, and a loop also stops on them. Only statements
that can jump pay for it: everything else is emitted exactly as without this module.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from clang.cindex import Cursor, CursorKind
from xdsl.dialects import arith, llvm, memref, scf
from xdsl.dialects.builtin import i1, i8
from xdsl.ir import Block, Region, SSAValue

from approxcc.frontend import c_types
from approxcc.frontend.c_types import LLVM_PTR

BREAK, CONTINUE, RETURN = "break", "continue", "return"
GOTO = "goto "  # `goto L` is the jump "goto L"
_JUMPS = {CursorKind.BREAK_STMT: BREAK, CursorKind.CONTINUE_STMT: CONTINUE,
          CursorKind.RETURN_STMT: RETURN}
_LOOPS = (CursorKind.FOR_STMT, CursorKind.WHILE_STMT, CursorKind.DO_STMT)


@functools.lru_cache(maxsize=1 << 16)  # a sequence asks again of each statement after it
def escapes(c: Cursor) -> frozenset[str]:
    """The jumps (BREAK, CONTINUE, RETURN, GOTO + label) by which control can leave
    statement `c`; a block is the target of the gotos to the labels in it."""
    if c.kind in _JUMPS:
        return frozenset({_JUMPS[c.kind]})
    if c.kind == CursorKind.GOTO_STMT:
        return frozenset({GOTO + next(c.get_children()).spelling})
    if not c.kind.is_statement():  # expressions and declarations hold no jumps
        return frozenset()
    inner = frozenset().union(*(escapes(k) for k in c.get_children()))
    if c.kind in _LOOPS:
        return inner - {BREAK, CONTINUE}
    if c.kind == CursorKind.SWITCH_STMT:
        return inner - {BREAK}
    if c.kind == CursorKind.COMPOUND_STMT:
        return inner - {kind for k in c.get_children() for kind in labels(k)}
    return inner


def labels(c: Cursor) -> list[str]:
    """The jumps that land on statement `c`: one per label (`a: b: s` has two)."""
    out = []
    while c.kind == CursorKind.LABEL_STMT:
        out.append(GOTO + c.spelling)
        c = list(c.get_children())[-1]
    return out


def leaves_loop(jumps: frozenset[str]) -> frozenset[str]:
    """The jumps that leave a loop (all but `continue`)."""
    return jumps - {CONTINUE}


def by_goto(jumps: frozenset[str]) -> bool:
    return any(k.startswith(GOTO) for k in jumps)


def returns_early(body: list[Cursor]) -> bool:
    """Whether a function body (its top-level statements) returns anywhere but at its end."""
    last_is_return = bool(body) and body[-1].kind == CursorKind.RETURN_STMT
    rest = body[:-1] if last_is_return else body
    return any(RETURN in escapes(s) for s in rest)


class JumpEmitter:
    """Jump flags, the return slot and the guards they need (a FunctionEmitter part)."""

    def new_flag(self) -> SSAValue:
        """An i8 slot: memref-to-llvm cannot store i1 to memory."""
        return self.slot(i8)

    def set_flag(self, kind: str, value: bool = True) -> None:
        self.b.insert(memref.StoreOp.get(self.b.int_const(value, i8), self.flags[kind], ()))

    def jumped(self, kinds: frozenset[str]) -> SSAValue | None:
        """True once any of these jumps has been taken (None: none of them can happen)."""
        out = None
        for kind in sorted(kinds & self.flags.keys()):
            flag = self.b.insert(arith.TruncIOp(
                self.b.insert(memref.LoadOp.get(self.flags[kind], ())), i1))
            out = flag if out is None else self.b.insert(arith.OrIOp(out, flag))
        return out

    def negation(self, v: SSAValue) -> SSAValue:
        return self.b.insert(arith.XOrIOp(v, self.b.int_const(1, i1)))

    @contextmanager
    def when(self, cond: SSAValue) -> Iterator[None]:
        """Code emitted in the body runs only if `cond` (an i1) holds."""
        block = Block()
        self.b.insert(scf.IfOp(cond, [], Region(block)))
        with self.b.at(block):
            yield
            self.b.insert(scf.YieldOp())

    @contextmanager
    def unless_jumped(self, kinds: frozenset[str]) -> Iterator[None]:
        """Code emitted in the body runs only if none of these jumps was taken."""
        jumped = self.jumped(kinds)
        if jumped is None:
            yield
            return
        with self.when(self.negation(jumped)):
            yield

    @contextmanager
    def jump_target(self, made: frozenset[str], kinds: frozenset[str]) -> Iterator[None]:
        """A loop (BREAK and CONTINUE) or a `switch` (BREAK) whose body `made` these jumps:
        inside, the jumps `kinds` set fresh flags, created (and cleared) only if made."""
        saved = dict(self.flags)
        for kind in sorted(kinds):  # the same program, the same IR
            self.flags.pop(kind, None)
            if kind in made:
                self.flags[kind] = self.new_flag()
        if BREAK in made & kinds:
            self.set_flag(BREAK, False)
        try:
            yield
        finally:
            self.flags = saved

    def new_iteration(self) -> None:
        """A `continue` only skips the rest of the iteration it happens in."""
        if CONTINUE in self.flags:
            self.set_flag(CONTINUE, False)

    def loop_condition(self, exits: frozenset[str], cond: Callable[[], SSAValue]) -> SSAValue:
        """`cond()` unless one of the jumps `exits` left the loop (then `cond` is not
        evaluated)."""
        jumped = self.jumped(exits)
        if jumped is None:
            return cond()
        return self.select(jumped, lambda: self.b.int_const(0, i1), cond, i1)

    # returns -----------------------------------------------------------------------------
    def prepare_early_returns(self) -> None:
        """A `return` before the end sets the return flag and leaves its value in a slot;
        the function returns the slot's value at its end (main: 0 if nothing was returned)."""
        self.flags[RETURN] = self.new_flag()
        self.set_flag(RETURN, False)
        if not c_types.is_void(self.result):
            self.return_slot = self.slot(c_types.element_type(self.result))
            if self.fn.spelling == "main":
                self.store_returned(self.implicit_return()[0])

    def store_returned(self, value: SSAValue) -> None:
        slot = self.return_slot
        if slot.type == LLVM_PTR:
            self.b.insert(llvm.StoreOp(value, slot))
        else:
            self.b.insert(memref.StoreOp.get(value, slot, ()))

    def returned(self) -> list[SSAValue]:
        """The value the early-return slot holds, as the function's results."""
        slot = self.return_slot
        if slot is None:
            return []
        if slot.type == LLVM_PTR:
            return [self.b.insert(llvm.LoadOp(slot, c_types.element_type(self.result)))]
        return [self.b.insert(memref.LoadOp.get(slot, ()))]
