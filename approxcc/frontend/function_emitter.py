"""One C function → one `func.func` with the C ABI signature (pointers as `!llvm.ptr`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clang.cindex import Cursor, CursorKind
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    StringAttr,
    i32,
)
from xdsl.ir import Block, Region, SSAValue

from approxcc.annotations import Annotation
from approxcc.diagnostics import CompileError
from approxcc.frontend import c_types
from approxcc.frontend.builder import Builder
from approxcc.frontend.c_types import UnsupportedType
from approxcc.frontend.calls import CallEmitter
from approxcc.frontend.counted_loops import (
    written_vars,
)
from approxcc.frontend.cursors import location, unsupported
from approxcc.frontend.expressions import ExpressionEmitter
from approxcc.frontend.jumps import JumpEmitter
from approxcc.frontend.knob_emitter import KnobEmitter
from approxcc.frontend.memory import LValue, MemoryEmitter
from approxcc.frontend.statements import StatementEmitter
from approxcc.frontend.switch import SwitchEmitter

if TYPE_CHECKING:
    from approxcc.frontend.module_emitter import ModuleEmitter


class FunctionEmitter(KnobEmitter, StatementEmitter, SwitchEmitter, JumpEmitter, CallEmitter,
                      ExpressionEmitter, MemoryEmitter):
    """One C function definition → one func.func."""

    def __init__(self, unit: ModuleEmitter, fn: Cursor):
        self.unit = unit
        self.fn = fn
        self.body = next(c for c in fn.get_children() if c.kind == CursorKind.COMPOUND_STMT)
        self.params = [c for c in fn.get_children() if c.kind == CursorKind.PARM_DECL]
        self.entry = Block(arg_types=[self.abi(p) for p in self.params])
        self.allocas = Block()  # hoisted to the top of the entry block at the end
        self.b = Builder(self.entry)
        self.vars: dict[Cursor, SSAValue] = {}  # SSA parameters
        self.mem: dict[Cursor, SSAValue] = {}   # allocas
        self.result = fn.type.get_result()
        self.returns_with: type = func.ReturnOp  # approx.yield in a function-level knob
        self.flags: dict[str, SSAValue] = {}  # jump kind → flag slot of its innermost target
        self.return_slot: SSAValue | None = None  # what an early `return` returns

    def abi(self, c: Cursor):
        try:
            return c_types.abi_type(c.type)
        except UnsupportedType as e:
            raise unsupported(f"type '{e}'", c) from None

    def emit(self, annotations: list[Annotation]) -> None:
        written = written_vars(self.body)
        for p, arg in zip(self.params, self.entry.args, strict=True):
            value = self.b.view(arg, c_types.pointer_view_type(p.type)) \
                if c_types.is_pointer(p.type) else arg
            if p in written and not c_types.is_reference(p.type):
                self.store(LValue(self.alloca(p), (), p.type), value)
            else:
                self.vars[p] = value
        if annotations:
            self.b.insert(func.ReturnOp(*self.function_knob(annotations)))
        else:
            self.function_body(func.ReturnOp)
        for op in reversed(list(self.allocas.ops)):
            op.detach()
            self.entry.insert_op_before(op, self.entry.first_op)
        results = [] if c_types.is_void(self.result) else [c_types.abi_type(self.result)]
        fop = func.FuncOp(self.fn.spelling, ([a.type for a in self.entry.args], results),
                          Region(self.entry))
        if self.fn.storage_class.name == "STATIC":
            fop.sym_visibility = StringAttr("private")
        self.unit.module.body.block.add_op(fop)

    def implicit_return(self) -> list[SSAValue]:
        """What falling off the end of the function returns (C99: main returns 0)."""
        if c_types.is_void(self.result):
            return []
        if self.fn.spelling == "main":
            return [self.b.int_const(0, i32)]
        raise CompileError(f"non-void function '{self.fn.spelling}' must end with a return "
                           "statement", location(self.fn))
