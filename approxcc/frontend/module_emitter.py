"""C → MLIR: one translation unit → one `builtin.module` (a libclang AST walk; see
function_emitter.py and its parts). Declarations of external functions, string literals.
"""

from __future__ import annotations

from clang.cindex import Cursor, CursorKind, TypeKind
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import (
    IntAttr,
    ModuleOp,
    StringAttr,
    i8,
)

from approxcc.annotations import Annotation
from approxcc.diagnostics import CompileError, SourceLocation, note
from approxcc.frontend import c_types
from approxcc.frontend.clause_exprs import ClauseSites
from approxcc.frontend.cursors import unsupported
from approxcc.frontend.function_emitter import FunctionEmitter


class ModuleEmitter:
    """One translation unit → one builtin.module."""

    def __init__(self, tu_cursor: Cursor, main_file: str, annotations: list[Annotation],
                 sites: ClauseSites):
        self.tu_cursor = tu_cursor
        self.sites = sites
        self.main_file = main_file
        self.module = ModuleOp([])
        self.by_line: dict[int, list[Annotation]] = {}
        for a in annotations:
            if a.target_line == 0:
                raise CompileError("approx annotation has no target statement", a.loc)
            self.by_line.setdefault(a.target_line, []).append(a)
        self.used: set[int] = set()
        self.knob_locs: dict[str, SourceLocation] = {}
        self.declared: set[str] = set()
        self.functions = {c.spelling: c for c in tu_cursor.get_children()
                          if c.kind == CursorKind.FUNCTION_DECL}
        self.defined = {c.spelling for c in tu_cursor.get_children()
                        if c.kind == CursorKind.FUNCTION_DECL and c.is_definition()}
        self.strings: dict[bytes, str] = {}

    def emit(self) -> ModuleOp:
        for c in self.tu_cursor.get_children():
            if c.location.file is None or c.location.file.name != self.main_file:
                continue
            if c.kind == CursorKind.FUNCTION_DECL and c.is_definition():
                anns = self.by_line.get(c.extent.start.line, [])
                self.used.update(id(a) for a in anns)
                self.sites.collect(c)
                FunctionEmitter(self, c).emit(anns)
            elif c.kind == CursorKind.VAR_DECL:
                raise unsupported("a global variable", c)
        for anns in self.by_line.values():
            for a in anns:
                if id(a) not in self.used:
                    raise CompileError("approx annotation has no target statement", a.loc)
        return self.module

    def new_knob(self, a: Annotation, default_name: str) -> tuple[str, int]:
        """The knob's unique name and its id (ids in source order, outer knobs first)."""
        name = a.knob or default_name
        if name in self.knob_locs:
            raise CompileError(f"duplicate knob name '{name}'", a.loc,
                               [note("first defined here", self.knob_locs[name])])
        self.knob_locs[name] = a.loc
        return name, len(self.knob_locs) - 1

    # symbols -----------------------------------------------------------------------------
    def declare(self, callee: Cursor) -> None:
        name = callee.spelling
        if name in self.declared or name in self.defined:
            return
        self.declared.add(name)
        ftype = callee.type
        params = [c_types.abi_type(t) for t in ftype.argument_types()]
        result = ftype.get_result()
        if ftype.kind == TypeKind.FUNCTIONPROTO and ftype.is_function_variadic():
            ret = llvm.LLVMVoidType() if c_types.is_void(result) else c_types.abi_type(result)
            decl = llvm.FuncOp(name, llvm.LLVMFunctionType(params, ret, is_variadic=True),
                               linkage=llvm.LinkageAttr("external"))
        else:
            results = [] if c_types.is_void(result) else [c_types.abi_type(result)]
            decl = func.FuncOp.external(name, params, results)
        self.module.body.block.add_op(decl)

    def string_global(self, data: bytes) -> str:
        if data not in self.strings:
            name = f".str.{len(self.strings)}"
            self.strings[data] = name
            t = llvm.LLVMArrayType(IntAttr(len(data)), i8)
            self.module.body.block.add_op(llvm.GlobalOp(
                t, name, "internal", constant=True, value=StringAttr(data.decode("latin-1"))))
        return self.strings[data]
