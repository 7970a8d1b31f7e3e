"""One C function → one `func.func` with the C ABI signature (pointers as `!llvm.ptr`).
"""

from __future__ import annotations

from typing import Protocol

from clang.cindex import Cursor, CursorKind
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import (
    ModuleOp,
    StringAttr,
    i32,
)
from xdsl.ir import Block, Region, SSAValue
from xdsl.transforms.dead_code_elimination import region_dce

from approxcc.annotations import Annotation
from approxcc.diagnostics import CompileError
from approxcc.frontend import c_types
from approxcc.frontend.builder import Builder, describe_views
from approxcc.frontend.c_types import UnsupportedType
from approxcc.frontend.calls import CallEmitter, Signature
from approxcc.frontend.clause_exprs import ClauseSites
from approxcc.frontend.counted_loops import (
    written_vars,
)
from approxcc.frontend.cursors import debug_location, location, unsupported
from approxcc.frontend.expressions import ExpressionEmitter
from approxcc.frontend.jumps import JumpEmitter
from approxcc.frontend.knob_emitter import KnobEmitter
from approxcc.frontend.memory import LValue, MemoryEmitter
from approxcc.frontend.statements import StatementEmitter
from approxcc.frontend.switch import SwitchEmitter


class Unit(Protocol):
    """What a function emitter needs from its translation unit (module_emitter.py)."""

    module: ModuleOp
    used: set[int]                        # ids of the annotations already applied
    sites: ClauseSites
    functions: dict[str, Cursor]          # the unit's function declarations by name

    def declare(self, callee: Cursor) -> None: ...

    def annotations_in(self, c: Cursor) -> dict[int, list[Annotation]]: ...

    def signature(self, fn: Cursor) -> Signature: ...

    def global_symbol(self, var: Cursor) -> str: ...

    def string_global(self, literal: Cursor) -> str: ...

    def new_knob(self, a: Annotation, default_name: str) -> tuple[str, int]: ...


def set_internal(op: func.FuncOp | llvm.FuncOp, internal: bool) -> None:
    """Give a function definition internal or external linkage. A private func.func would
    still be an external symbol in LLVM: `llvm.linkage` says what func-to-llvm gives it."""
    linkage = llvm.LinkageAttr("internal" if internal else "external")
    if isinstance(op, llvm.FuncOp):
        op.linkage = linkage
    elif internal:
        op.sym_visibility = StringAttr("private")
        op.attributes["llvm.linkage"] = linkage
    else:
        op.sym_visibility = None
        op.attributes.pop("llvm.linkage", None)


class FunctionEmitter(KnobEmitter, StatementEmitter, SwitchEmitter, JumpEmitter, CallEmitter,
                      ExpressionEmitter, MemoryEmitter):
    """One C function definition → one func.func."""

    def __init__(self, unit: Unit, fn: Cursor):
        self.unit = unit
        self.fn = fn
        self.by_line = unit.annotations_in(fn)  # its file's annotations, by target line
        self.body = next(c for c in fn.get_children() if c.kind == CursorKind.COMPOUND_STMT)
        self.params = [c for c in fn.get_children() if c.kind == CursorKind.PARM_DECL]
        try:
            sig = unit.signature(fn)
            self.lowering = sig.lowering()
        except UnsupportedType as e:
            raise unsupported(f"type '{e}'", fn) from None
        self.terminator = llvm.ReturnOp if sig.variadic else func.ReturnOp  # llvm.func
        self.entry = Block(arg_types=self.lowering.inputs())
        args = iter(self.entry.args[1:] if self.lowering.sret else self.entry.args)
        self.arguments = {p: [next(args) for _ in lowered.types]  # IR arguments of each
                          for p, lowered in zip(self.params, self.lowering.args, strict=True)}
        self.allocas = Block()  # hoisted to the top of the entry block at the end
        self.b = Builder(self.entry)
        self.b.loc = debug_location(fn)  # the parameters' stores: the function's line
        self.vars: dict[Cursor, SSAValue] = {}  # SSA parameters
        self.mem: dict[Cursor, SSAValue] = {}   # allocas
        self.result = fn.type.get_result()
        self.returns_with: type = self.terminator  # approx.yield in a function-level knob
        self.flags: dict[str, SSAValue] = {}  # jump kind → flag slot of its innermost target
        self.return_slot: SSAValue | None = None  # what an early `return` returns

    def abi(self, p: Cursor):
        try:
            return c_types.abi_type(p.type)
        except UnsupportedType as e:
            raise unsupported(f"type '{e}'", p) from None

    def emit(self, annotations: list[Annotation]) -> None:
        written = written_vars(self.body)
        for p, lowered in zip(self.params, self.lowering.args, strict=True):
            args = self.arguments[p]
            if lowered.in_memory:  # the caller's copy is the parameter
                self.mem[p] = args[0]
                continue
            if lowered.coerced:
                self.store(self.local_at(p, self.alloca(p)), self.from_registers(args, p.type))
                continue
            value = self.b.view(args[0], c_types.pointer_view_type(p.type)) \
                if c_types.is_pointer(p.type) else args[0]
            if not c_types.is_address(p.type) and value.type != self.abi(p):  # K&R: promoted
                value = self.b.convert(value, c_types.arith_of(lowered.ctype),
                                       c_types.arith_of(p.type))
            if p in written and not c_types.is_reference(p.type):
                self.store(LValue(self.alloca(p), (), p.type), value)
            else:
                self.vars[p] = value
        if annotations:
            self.b.insert(self.terminator(*self.function_knob(annotations)))
        else:
            self.function_body(self.terminator)
        self.lower_return()
        for op in reversed(list(self.allocas.ops)):
            op.detach()
            self.entry.insert_op_before(op, self.entry.first_op)
        if self.terminator is llvm.ReturnOp:  # variadic: only an llvm.func can be
            fop = llvm.FuncOp(self.fn.spelling, self.unit.signature(self.fn).llvm_type(),
                              body=Region(self.entry))
        else:
            fop = func.FuncOp(self.fn.spelling, (self.lowering.inputs(),
                                                 self.lowering.result_types),
                              Region(self.entry))
        region_dce(fop.body)  # the views and constants nothing uses
        describe_views(fop.body)
        set_internal(fop, self.fn.storage_class.name == "STATIC")
        fop.location = self.b.loc or fop.location
        fop.arg_attrs = self.lowering.arg_attrs()
        self.unit.module.body.block.add_op(fop)

    def lower_return(self) -> None:
        """The function's `func.return` of a C struct as the convention returns it: in
        registers, or stored through the `sret` pointer (abi.py)."""
        ret = self.entry.last_op
        if not c_types.is_record(self.result) or not isinstance(ret, self.terminator):
            return
        value = ret.operands[0]
        ret.detach()
        ret.erase()
        if self.lowering.sret:
            self.b.insert(llvm.StoreOp(value, self.entry.args[0]))
            self.b.insert(self.terminator())
            return
        result = self.lowering.result_types[0]
        slot = self.slot(llvm.LLVMStructType.from_type_list([result]))
        self.b.insert(llvm.StoreOp(value, slot))
        self.b.insert(self.terminator(self.b.insert(llvm.LoadOp(slot, result))))

    def implicit_return(self) -> list[SSAValue]:
        """What falling off the end of the function returns (C99: main returns 0)."""
        if c_types.is_void(self.result):
            return []
        if self.fn.spelling == "main":
            return [self.b.int_const(0, i32)]
        raise CompileError(f"non-void function '{self.fn.spelling}' must end with a return "
                           "statement", location(self.fn))
