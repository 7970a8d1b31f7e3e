"""C → MLIR: a libclang AST walk that emits func/scf/arith/memref (plus llvm for the C ABI,
variadic calls and string literals), and wraps each annotated statement in `approx.knob`.

Memory model: every local that is written lives in a `memref.alloca` at function entry and is
accessed with loads/stores (LLVM's mem2reg promotes them; MLIR's mem2reg cannot see through
scf regions). Parameters that are never written stay SSA values. Pointer values are
`memref<?xT>` views built from the C ABI's `!llvm.ptr`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from clang.cindex import BinaryOperator, Cursor, CursorKind, TypeKind
from xdsl.dialects import arith, func, llvm, memref, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue

from approxcc.annotations import EXACT_VALUE, Annotation
from approxcc.diagnostics import CompileError, SourceLocation, note, warn
from approxcc.dialect.approx import KnobOp, TryOp, YieldOp, make_knob
from approxcc.frontend import c_types
from approxcc.frontend.builder import INDEX, Builder
from approxcc.frontend.c_types import LLVM_PTR, Arith, UnsupportedType, arith_of
from approxcc.frontend.clang_eval import evaluate
from approxcc.frontend.clause_exprs import ClauseSites
from approxcc.frontend.counted_loops import (
    CountedLoop,
    analyse,
    for_parts,
    strip,
    unary_spelling,
    written_vars,
)
from approxcc.frontend.knob_targets import (
    Target,
    function_target,
    location,
    statement_target,
    variants,
)


def unsupported(what: str, c: Cursor) -> CompileError:
    return CompileError(f"{what} is not supported by the approxcc C frontend yet", location(c))


@dataclass(frozen=True)
class LValue:
    """A C object in memory: a memref and the indices of the element."""

    ref: SSAValue
    indices: tuple[SSAValue, ...]
    ctype: object  # clang Type of the object


_INT_OPS = {BinaryOperator.Add: (arith.AddiOp, arith.AddiOp, arith.AddfOp),
            BinaryOperator.Sub: (arith.SubiOp, arith.SubiOp, arith.SubfOp),
            BinaryOperator.Mul: (arith.MuliOp, arith.MuliOp, arith.MulfOp),
            BinaryOperator.Div: (arith.DivSIOp, arith.DivUIOp, arith.DivfOp),
            BinaryOperator.Rem: (arith.RemSIOp, arith.RemUIOp, None),
            BinaryOperator.Shl: (arith.ShLIOp, arith.ShLIOp, None),
            BinaryOperator.Shr: (arith.ShRSIOp, arith.ShRUIOp, None),
            BinaryOperator.And: (arith.AndIOp, arith.AndIOp, None),
            BinaryOperator.Or: (arith.OrIOp, arith.OrIOp, None),
            BinaryOperator.Xor: (arith.XOrIOp, arith.XOrIOp, None)}
_COMPOUND = {BinaryOperator.AddAssign: BinaryOperator.Add,
             BinaryOperator.SubAssign: BinaryOperator.Sub,
             BinaryOperator.MulAssign: BinaryOperator.Mul,
             BinaryOperator.DivAssign: BinaryOperator.Div,
             BinaryOperator.RemAssign: BinaryOperator.Rem,
             BinaryOperator.ShlAssign: BinaryOperator.Shl,
             BinaryOperator.ShrAssign: BinaryOperator.Shr,
             BinaryOperator.AndAssign: BinaryOperator.And,
             BinaryOperator.OrAssign: BinaryOperator.Or,
             BinaryOperator.XorAssign: BinaryOperator.Xor}
# predicate for (signed int, unsigned int, float)
_CMP = {BinaryOperator.LT: ("slt", "ult", "olt"), BinaryOperator.LE: ("sle", "ule", "ole"),
        BinaryOperator.GT: ("sgt", "ugt", "ogt"), BinaryOperator.GE: ("sge", "uge", "oge"),
        BinaryOperator.EQ: ("eq", "eq", "oeq"), BinaryOperator.NE: ("ne", "ne", "une")}
_STATEMENT_NAMES = {CursorKind.BREAK_STMT: "'break'", CursorKind.CONTINUE_STMT: "'continue'",
                    CursorKind.GOTO_STMT: "'goto'", CursorKind.INDIRECT_GOTO_STMT: "'goto'",
                    CursorKind.LABEL_STMT: "a label", CursorKind.SWITCH_STMT: "'switch'",
                    CursorKind.CASE_STMT: "'case'", CursorKind.DEFAULT_STMT: "'default'",
                    CursorKind.DO_STMT: "a 'do' loop", CursorKind.ASM_STMT: "inline assembly",
                    CursorKind.MS_ASM_STMT: "inline assembly"}
_LVALUE_KINDS = (CursorKind.DECL_REF_EXPR, CursorKind.ARRAY_SUBSCRIPT_EXPR,
                 CursorKind.UNARY_OPERATOR, CursorKind.STRING_LITERAL)


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


class FunctionEmitter:
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
        self.returns_yield = False  # inside a function-level knob, `return` yields

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
            if p in written:
                self.store(LValue(self.alloca(p), (), p.type), value)
            else:
                self.vars[p] = value
        if annotations:
            self.b.insert(func.ReturnOp(*self.function_knob(annotations)))
        else:
            self.statement(self.body, top=True)
            if not isinstance(self.entry.last_op, func.ReturnOp):
                self.b.insert(func.ReturnOp(*self.implicit_return()))
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

    def function_knob(self, anns: list[Annotation]) -> list[SSAValue]:
        """The whole body in one knob per annotation (first outermost); the knob yields what
        the function returns."""
        a, rest = anns[0], anns[1:]
        target = function_target(a, self.fn)
        name, knob_id = self.unit.new_knob(a, f"{self.fn.spelling}_{self.fn.extent.start.line}")
        state = self.state(a)
        body = Block()
        with self.b.at(body):
            if rest:
                self.b.insert(YieldOp(*self.function_knob(rest)))
            else:
                self.returns_yield = True
                self.statement(self.body, top=True)
                if not isinstance(body.last_op, YieldOp):
                    self.b.insert(YieldOp(*self.implicit_return()))
        knob = self.make(a, target, name, knob_id, body, state)
        return list(knob.results)

    # memory ------------------------------------------------------------------------------
    def alloca(self, var: Cursor) -> SSAValue:
        t = var.type.get_canonical()
        count = None
        if t.kind == TypeKind.CONSTANTARRAY:
            count, t = t.get_array_size(), t.get_array_element_type()
            if c_types.is_array(t):
                raise unsupported("a multi-dimensional array", var)
        elif t.kind in (TypeKind.VARIABLEARRAY, TypeKind.INCOMPLETEARRAY):
            raise unsupported("a variable-length array", var)
        elem = self.elem(t, var)
        if elem == LLVM_PTR:  # memrefs cannot hold pointers: a raw LLVM stack slot
            with self.b.at(self.allocas):
                size = self.b.insert(llvm.ConstantOp(IntegerAttr(count or 1, i64), i64))
                ref = self.b.insert(llvm.AllocaOp(size, elem, alignment=8))
        else:
            op = memref.AllocaOp.get(elem, shape=[count] if count else [])
            self.allocas.add_op(op)
            ref = op.memref
        self.mem[var] = ref
        return ref

    def elem(self, t, c: Cursor):
        try:
            return c_types.element_type(t)
        except UnsupportedType as e:
            raise unsupported(f"type '{e}'", c) from None

    def load(self, lv: LValue) -> SSAValue:
        if lv.ref.type == LLVM_PTR:
            v = self.b.insert(llvm.LoadOp(lv.ref, c_types.element_type(lv.ctype)))
        else:
            v = self.b.insert(memref.LoadOp.get(lv.ref, lv.indices))
        if c_types.is_pointer(lv.ctype):
            return self.b.view(v, c_types.pointer_view_type(lv.ctype))
        return v

    def store(self, lv: LValue, value: SSAValue) -> None:
        if c_types.is_pointer(lv.ctype):
            value = self.b.pointer(value)
        if lv.ref.type == LLVM_PTR:
            self.b.insert(llvm.StoreOp(value, lv.ref))
        else:
            self.b.insert(memref.StoreOp.get(value, lv.ref, lv.indices))

    def element(self, base: SSAValue, index: SSAValue, ctype) -> LValue:
        """`base[index]` for a pointer value in either representation."""
        if base.type == LLVM_PTR:
            addr = self.b.insert(llvm.GEPOp.from_mixed_indices(
                base, [self.b.insert(arith.IndexCastOp(index, i64))],
                c_types.element_type(ctype)))
            return LValue(addr, (), ctype)
        return LValue(base, (index,), ctype)

    # statements --------------------------------------------------------------------------
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

    def annotated(self, c: Cursor, anns: list[Annotation]) -> None:
        """Wrap the statement in one knob per annotation, the first annotation outermost."""
        a, rest = anns[0], anns[1:]
        target = statement_target(a, c)
        default = f"{self.fn.spelling}_{c.extent.start.line}"
        nth = len(self.unit.by_line[c.extent.start.line]) - len(anns)
        name, knob_id = self.unit.new_knob(a, f"{default}_{nth}" if nth else default)
        state = self.state(a)
        body = Block()
        with self.b.at(body):
            if rest:
                self.annotated(c, rest)
            else:
                self.plain_statement(c)
            self.safety_contract(a)
        self.make(a, target, name, knob_id, body, state)

    def make(self, a: Annotation, target: Target, name: str, knob_id: int, body: Block,
             state: SSAValue | None) -> KnobOp:
        """The knob op for one annotation, inserted at the current point."""
        params: dict[str, Attribute] = {
            "values": ArrayAttr([IntegerAttr(v, i64) for v in a.domain()]),
            "target": StringAttr(target.kind)}
        if all(v == EXACT_VALUE[a.directive] for v in a.domain()):
            warn(f"all values of knob '{name}' are exact", a.loc)
        if target.kind == "call":
            params["callee"] = SymbolRefAttr(target.callee.spelling)
        if a.directive == "func_substitute":
            exact = target.callee
            for v in variants(a, exact, self.unit.functions):
                self.unit.declare(v)
            params["variants"] = ArrayAttr([SymbolRefAttr(v) for v in a.variants])
        if state is not None:
            lo, hi = a.threshold_range()
            params |= {"dynamic": UnitAttr(), "thresholds": IntegerAttr(a.threshold_count(), i64),
                       "range": ArrayAttr([IntegerAttr(lo, i64), IntegerAttr(hi, i64)])}
        knob = make_knob(name, knob_id, a.directive, DictionaryAttr(params), body, str(a.loc),
                         leading=[state] if state is not None else [])
        self.b.insert(knob)
        return knob

    def clause(self, a: Annotation, clause: str) -> Cursor:
        expr = self.unit.sites.expr(a, clause)
        if expr is None:
            raise CompileError(f"cannot compile the '{clause}' expression",
                               getattr(a, clause).loc)
        return expr

    def state(self, a: Annotation) -> SSAValue | None:
        """The runtime state of a dynamic knob, computed where control reaches the target."""
        if a.state is None:
            return None
        expr = self.clause(a, "state")
        if not (c_types.is_integer(expr.type) or c_types.is_float(expr.type)):
            raise CompileError(f"'state' must be an integer or floating-point expression, not "
                               f"'{expr.type.spelling}'", a.state.loc)
        return self.rvalue(expr)

    def safety_contract(self, a: Annotation) -> None:
        """`check(EXPR)` [`recover(CALL)`] as an approx.try after the target."""
        if a.check is None:
            return
        check = Block()
        with self.b.at(check):
            self.b.insert(YieldOp(self.condition(self.clause(a, "check"))))
        recovery, recover = Region(), StringAttr("exact")
        if a.recover is not None:
            call = strip(self.clause(a, "recover"))
            if call.kind != CursorKind.CALL_EXPR or call.referenced is None:
                raise CompileError("'recover' takes 'exact' or a call", a.recover.loc)
            block = Block()
            with self.b.at(block):
                self.rvalue(call)
                self.b.insert(YieldOp())
            recovery, recover = Region(block), SymbolRefAttr(call.referenced.spelling)
        self.b.insert(TryOp(recover, Region(check), recovery))

    def declaration(self, d: Cursor) -> None:
        if d.kind != CursorKind.VAR_DECL:
            raise unsupported(f"the declaration '{d.kind.name.lower()}'", d)
        if d.storage_class.name == "STATIC":
            raise unsupported("a static local variable", d)
        ref = self.alloca(d)
        init = [k for k in d.get_children()
                if k.kind.is_expression() or k.kind == CursorKind.UNEXPOSED_EXPR]
        if c_types.is_array(d.type):
            init = [k for k in init
                    if k.kind in (CursorKind.INIT_LIST_EXPR, CursorKind.STRING_LITERAL)]
            if init:
                self.array_initialiser(ref, d.type.get_canonical(), init[-1])
        elif init:
            self.store(LValue(ref, (), d.type), self.rvalue(init[-1]))

    def array_initialiser(self, ref: SSAValue, t, init: Cursor) -> None:
        """`= {a, b}` or `= "text"`: the given elements, then zeros up to the array's size."""
        count, elem_t = t.get_array_size(), t.get_array_element_type()
        elem = c_types.element_type(elem_t)
        if elem == LLVM_PTR:
            raise unsupported("an initialiser of an array of pointers", init)
        if init.kind == CursorKind.STRING_LITERAL:
            data = _string_bytes(init)[:count]
            values = [lambda byte=byte: self.b.int_const(byte, elem) for byte in data]
        else:
            kids = list(init.get_children())
            if any(not _same(k.type, elem_t) for k in kids):
                raise unsupported("this array initialiser", init)
            values = [lambda k=k: self.rvalue(k) for k in kids]
        for i, value in enumerate(values):
            self.store(LValue(ref, (self.b.index(i),), elem_t), value())
        if len(values) < count:
            body = Block(arg_types=[INDEX])
            with self.b.at(body):
                zero = self.b.zero(arith_of(elem_t))
                self.store(LValue(ref, (body.args[0],), elem_t), zero)
                self.b.insert(scf.YieldOp())
            self.b.insert(scf.ForOp(self.b.index(len(values)), self.b.index(count),
                                    self.b.index(1), [], Region(body)))

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

    # expressions -------------------------------------------------------------------------
    def lvalue(self, c: Cursor) -> LValue:
        c = _unparen(c)
        k = c.kind
        if k == CursorKind.DECL_REF_EXPR:
            var = c.referenced
            if var in self.mem:
                return LValue(self.mem[var], (), var.type)
            if var.kind in (CursorKind.VAR_DECL, CursorKind.PARM_DECL) and var not in self.vars:
                raise unsupported("a variable declared outside the function", c)
        if k == CursorKind.ARRAY_SUBSCRIPT_EXPR:
            base, idx = c.get_children()
            if not c_types.is_pointer(base.type):
                base, idx = idx, base
            return self.element(self.rvalue(base),
                                self.b.to_index(self.rvalue(idx), c_types.is_signed(idx.type)),
                                c.type)
        if k == CursorKind.UNARY_OPERATOR and unary_spelling(c)[0] == "*":
            return self.element(self.rvalue(next(c.get_children())), self.b.index(0), c.type)
        raise unsupported(f"this kind of lvalue ({k.name.lower()})", c)

    def rvalue(self, c: Cursor) -> SSAValue | None:
        try:
            return self.expression(c)
        except UnsupportedType as e:  # raised by the innermost expression of that type
            raise unsupported(f"type '{e}'", c) from None

    def expression(self, c: Cursor) -> SSAValue | None:
        k = c.kind
        if k in (CursorKind.INTEGER_LITERAL, CursorKind.CHARACTER_LITERAL,
                 CursorKind.FLOATING_LITERAL, CursorKind.CXX_BOOL_LITERAL_EXPR):
            return self.constant(c)
        if k == CursorKind.PAREN_EXPR:
            return self.rvalue(next(c.get_children()))
        if k == CursorKind.UNEXPOSED_EXPR or k == CursorKind.CSTYLE_CAST_EXPR:
            return self.cast(c)
        if k == CursorKind.DECL_REF_EXPR:
            var = c.referenced
            if var.kind == CursorKind.ENUM_CONSTANT_DECL:
                return self.constant(c)
            if var in self.vars:
                return self.vars[var]
            if c_types.is_array(var.type):
                raise unsupported("this use of an array", c)
            return self.load(self.lvalue(c))
        if k in (CursorKind.ARRAY_SUBSCRIPT_EXPR,):
            return self.load(self.lvalue(c))
        if k == CursorKind.BINARY_OPERATOR:
            return self.binary(c)
        if k == CursorKind.COMPOUND_ASSIGNMENT_OPERATOR:
            return self.compound_assign(c)
        if k == CursorKind.UNARY_OPERATOR:
            return self.unary(c)
        if k == CursorKind.CALL_EXPR:
            return self.call(c)
        if k == CursorKind.CONDITIONAL_OPERATOR:
            cond, then, other = c.get_children()
            return self.select(self.condition(cond), lambda: self.rvalue(then),
                               lambda: self.rvalue(other), c_types.scalar_type(c.type))
        if k in (CursorKind.CXX_UNARY_EXPR,) or k.name == "UNARY_EXPR":
            return self.constant(c)
        raise unsupported(f"the expression '{k.name.lower()}'", c)

    def constant(self, c: Cursor) -> SSAValue:
        value = evaluate(c)
        if value is None:
            raise unsupported("this constant expression", c)
        t = arith_of(c.type)
        if t.floating:
            return self.b.float_const(float(value), t.mlir)
        return self.b.int_const(int(value), t.mlir)

    def cast(self, c: Cursor) -> SSAValue | None:
        """Implicit casts (UNEXPOSED_EXPR) and C-style casts."""
        kids = [k for k in c.get_children() if k.kind != CursorKind.TYPE_REF]
        if len(kids) != 1:
            raise unsupported(f"the expression '{c.kind.name.lower()}'", c)
        src = kids[0]
        dst_t, src_t = c.type.get_canonical(), src.type.get_canonical()
        if c_types.is_void(dst_t):
            self.rvalue(src)
            return None
        if src_t.kind in (TypeKind.FUNCTIONPROTO, TypeKind.FUNCTIONNOPROTO):
            raise unsupported("a function pointer", c)
        if c_types.is_array(src_t):  # array-to-pointer decay
            return self.decay(src, c.type)
        inner = _unparen(src)
        if inner.kind in _LVALUE_KINDS and _same(src_t, dst_t) and \
                c.kind == CursorKind.UNEXPOSED_EXPR:
            return self.rvalue(inner)  # lvalue-to-rvalue: a load (or an SSA parameter)
        value = self.rvalue(src)
        if c_types.is_pointer(dst_t) and c_types.is_pointer(src_t):
            view_t = c_types.pointer_view_type(dst_t)
            return value if value.type == view_t else self.b.view(self.b.pointer(value), view_t)
        if c_types.is_pointer(dst_t) or c_types.is_pointer(src_t):
            raise unsupported("a conversion between pointers and integers", c)
        if dst_t.kind == TypeKind.BOOL:
            raise unsupported("_Bool", c)
        return self.b.convert(value, arith_of(src_t), arith_of(dst_t))

    def decay(self, array: Cursor, ptr_type) -> SSAValue:
        array = _unparen(array)
        view_t = c_types.pointer_view_type(ptr_type)
        if array.kind == CursorKind.STRING_LITERAL:
            data = _string_bytes(array)
            sym = self.unit.string_global(data)
            ptr = self.b.insert(llvm.AddressOfOp(sym, LLVM_PTR))
            return self.b.view(ptr, view_t)
        if array.kind == CursorKind.DECL_REF_EXPR and array.referenced in self.mem:
            return self.b.view(self.b.pointer(self.mem[array.referenced]), view_t)
        raise unsupported("this use of an array", array)

    def select(self, cond: SSAValue, then: Callable[[], SSAValue],
               other: Callable[[], SSAValue], t) -> SSAValue:
        """A value computed lazily on one of two paths (`?:`, `&&`, `||`)."""
        blocks = []
        for branch in (then, other):
            blk = Block()
            with self.b.at(blk):
                self.b.insert(scf.YieldOp(branch()))
            blocks.append(blk)
        return self.b.insert(scf.IfOp(cond, [t], Region(blocks[0]), Region(blocks[1])))

    def binary(self, c: Cursor) -> SSAValue:
        op = c.binary_operator
        lhs, rhs = c.get_children()
        if op == BinaryOperator.Assign:
            lv = self.lvalue(lhs)
            value = self.rvalue(rhs)
            self.store(lv, value)
            return value
        if op == BinaryOperator.Comma:
            self.rvalue(lhs)
            return self.rvalue(rhs)
        if op in (BinaryOperator.LAnd, BinaryOperator.LOr):
            left = self.condition(lhs)
            right = lambda: self.condition(rhs)  # noqa: E731
            const = lambda: self.b.int_const(op == BinaryOperator.LOr, i1)  # noqa: E731
            both = self.select(left, right, const, i1) if op == BinaryOperator.LAnd else \
                self.select(left, const, right, i1)
            return self.b.insert(arith.ExtUIOp(both, c_types.scalar_type(c.type)))
        if c_types.is_pointer(lhs.type) or c_types.is_pointer(rhs.type):
            raise unsupported("pointer arithmetic and comparison", c)
        a, b = self.rvalue(lhs), self.rvalue(rhs)
        if op in _CMP:
            t = arith_of(lhs.type)
            pred = _CMP[op][2 if t.floating else 0 if t.signed else 1]
            cmp = arith.CmpfOp(a, b, pred) if t.floating else arith.CmpiOp(a, b, pred)
            return self.b.insert(arith.ExtUIOp(self.b.insert(cmp), c_types.scalar_type(c.type)))
        return self.arithmetic(op, a, arith_of(lhs.type), b, arith_of(rhs.type),
                               arith_of(c.type), c)

    def arithmetic(self, op: BinaryOperator, a: SSAValue, a_t: Arith, b: SSAValue, b_t: Arith,
                   result_t: Arith, c: Cursor) -> SSAValue:
        if op in (BinaryOperator.Shl, BinaryOperator.Shr):  # the right operand is not converted
            b = self.b.convert(b, b_t, result_t)
        ops = _INT_OPS.get(op)
        cls = ops and ops[2 if result_t.floating else 0 if result_t.signed else 1]
        if cls is None:
            raise unsupported(f"the operator '{op.name}' on these types", c)
        return self.b.insert(cls(a, b))

    def compound_assign(self, c: Cursor) -> SSAValue:
        lhs, rhs = c.get_children()
        op = _COMPOUND[c.binary_operator]
        if c_types.is_pointer(lhs.type):
            raise unsupported("pointer arithmetic", c)
        lv = self.lvalue(lhs)
        lhs_t, rhs_t = arith_of(lhs.type), arith_of(rhs.type)
        comp_t = c_types.promote(lhs_t) if op in (BinaryOperator.Shl, BinaryOperator.Shr) \
            else c_types.common_type(lhs_t, rhs_t)
        a = self.b.convert(self.load(lv), lhs_t, comp_t)
        b = self.b.convert(self.rvalue(rhs), rhs_t, comp_t) \
            if op not in (BinaryOperator.Shl, BinaryOperator.Shr) else self.rvalue(rhs)
        value = self.b.convert(self.arithmetic(op, a, comp_t, b, rhs_t, comp_t, c), comp_t,
                               lhs_t)
        self.store(lv, value)
        return value

    def unary(self, c: Cursor) -> SSAValue:
        op, prefix = unary_spelling(c)
        operand = next(c.get_children())
        if op == "*":
            return self.load(self.lvalue(c))
        if op == "&":
            lv = self.lvalue(operand)
            if lv.indices:
                raise unsupported("the address of an array element", c)
            return self.b.view(self.b.pointer(lv.ref), c_types.pointer_view_type(c.type))
        if op in ("++", "--"):
            if c_types.is_pointer(operand.type):
                raise unsupported("pointer arithmetic", c)
            lv = self.lvalue(operand)
            t = arith_of(operand.type)
            old = self.load(lv)
            one = self.b.float_const(1.0, t.mlir) if t.floating else self.b.int_const(1, t.mlir)
            cls = (arith.AddfOp if t.floating else arith.AddiOp) if op == "++" else \
                (arith.SubfOp if t.floating else arith.SubiOp)
            new = self.b.insert(cls(old, one))
            self.store(lv, new)
            return new if prefix else old
        t = arith_of(c.type)
        if op == "!":
            truth = self.condition(operand)
            inverted = self.b.insert(arith.XOrIOp(truth, self.b.int_const(1, i1)))
            return self.b.insert(arith.ExtUIOp(inverted, t.mlir))
        value = self.rvalue(operand)
        if op == "+":
            return value
        if op == "-":
            if t.floating:
                return self.b.insert(arith.NegfOp(value))
            return self.b.insert(arith.SubiOp(self.b.int_const(0, t.mlir), value))
        if op == "~":
            return self.b.insert(arith.XOrIOp(value, self.b.int_const(-1, t.mlir)))
        raise unsupported(f"the unary operator '{op}'", c)

    def call(self, c: Cursor) -> SSAValue | None:
        callee = c.referenced
        if callee is None or callee.kind != CursorKind.FUNCTION_DECL:
            raise unsupported("an indirect call", c)
        if callee.spelling.startswith("__builtin_"):  # what <math.h> macros expand to
            if evaluate(c) is None:
                raise unsupported(f"the builtin '{callee.spelling}'", c)
            return self.constant(c)
        if callee.type.kind != TypeKind.FUNCTIONPROTO and callee.spelling not in self.unit.defined:
            raise unsupported(f"a call to '{callee.spelling}', declared without a prototype", c)
        self.unit.declare(callee)
        args = []
        for a in c.get_arguments():
            v = self.rvalue(a)
            args.append(self.b.pointer(v) if c_types.is_pointer(a.type) else v)
        ftype = callee.type
        result = ftype.get_result()
        ret = None if c_types.is_void(result) else c_types.abi_type(result)
        if ftype.kind == TypeKind.FUNCTIONPROTO and ftype.is_function_variadic():
            fixed = len(list(ftype.argument_types()))
            callee_t = llvm.LLVMFunctionType([x.type for x in args[:fixed]],
                                             ret or llvm.LLVMVoidType(), is_variadic=True)
            value = self.b.insert(llvm.CallOp(callee.spelling, *args, return_type=ret,
                                              var_callee_type=callee_t))
        else:
            value = self.b.insert(func.CallOp(callee.spelling, args, [ret] if ret else []))
        if ret is not None and c_types.is_pointer(result):
            return self.b.view(value, c_types.pointer_view_type(result))
        return value


def _unparen(c: Cursor) -> Cursor:
    while c.kind == CursorKind.PAREN_EXPR:
        c = next(c.get_children())
    return c


def _same(a, b) -> bool:
    return a.get_canonical().spelling.replace("const ", "").replace("volatile ", "") == \
        b.get_canonical().spelling.replace("const ", "").replace("volatile ", "")


_ESCAPES = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "e": 27}


def _string_bytes(c: Cursor) -> bytes:
    """The bytes of a narrow string literal, terminating NUL included. clang's spelling of the
    literal is its value (adjacent literals joined, macros expanded) with octal escapes."""
    text = c.spelling
    if not text.startswith('"') or c_types.integer_width(c.type.get_array_element_type()) != 8:
        raise unsupported("a wide string literal", c)
    out = bytearray()
    for m in re.finditer(r'\\([0-7]{1,3}|x[0-9a-fA-F]+|.)|([^\\])', text[1:-1], re.DOTALL):
        esc, plain = m.groups()
        if plain is not None:
            out += plain.encode("utf-8")
        elif esc[0] in "01234567":
            out.append(int(esc, 8) & 0xFF)
        elif esc[0] == "x":
            out.append(int(esc[1:], 16) & 0xFF)
        else:
            out.append(_ESCAPES.get(esc, ord(esc)))
    return bytes(out) + b"\0"
