"""C calls → `func.call` / `llvm.call`: through prototypes, through declarations without one
(`extern void timer_start();`, K&R style), to variadic functions, and through function
pointers (variables, struct fields, array elements).

A function's *signature* is what every call and its own definition agree on: the prototype's
parameters when some declaration has one, the parameters of its definition when only that
says them (`void f() { … }`), otherwise none and the call passes its arguments as the default
argument promotions leave them, as clang does, through a variadic `llvm.call` (the x86-64
caller then also sets `%al`, which a callee not expecting it ignores). Prototyped functions
that are not variadic are `func.func`s, called with `func.call`; the others are `llvm.func`s.
"""

from __future__ import annotations

from dataclasses import dataclass

from clang.cindex import Cursor, CursorKind, Type, TypeKind
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import (
    FunctionType,
    SymbolRefAttr,
    UnrealizedConversionCastOp,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def, result_def

from approxcc.frontend import c_types
from approxcc.frontend.c_types import LLVM_PTR, UnsupportedType, arith_of
from approxcc.frontend.clang_eval import evaluate
from approxcc.frontend.cursors import unparen, unsupported


@irdl_op_definition
class FuncConstantOp(IRDLOperation):
    """Upstream `func.constant` (xDSL lacks it): the value of a `func.func` symbol, which
    func-to-llvm lowers to its address."""

    name = "func.constant"
    value = prop_def(SymbolRefAttr)
    result = result_def(FunctionType)

    def __init__(self, symbol: str, ftype: FunctionType):
        super().__init__(properties={"value": SymbolRefAttr(symbol)}, result_types=[ftype])


@dataclass(frozen=True)
class Signature:
    """A C function type at the call boundary."""

    params: tuple[Type, ...]  # what a call converts its first arguments to
    result: Type
    variadic: bool            # more arguments follow, promoted (also: no prototype)

    def results(self) -> list[Attribute]:
        return [] if c_types.is_void(self.result) else [c_types.abi_type(self.result)]

    def inputs(self) -> list[Attribute]:
        return [c_types.abi_type(t) for t in self.params]

    def llvm_type(self) -> llvm.LLVMFunctionType:
        ret = self.results()
        return llvm.LLVMFunctionType(self.inputs(), ret[0] if ret else llvm.LLVMVoidType(),
                                     is_variadic=self.variadic)

    def declaration(self, name: str) -> Operation:
        """The external declaration of a function of this signature."""
        if self.variadic:
            return llvm.FuncOp(name, self.llvm_type(), linkage=llvm.LinkageAttr("external"))
        return func.FuncOp.external(name, self.inputs(), self.results())


def type_signature(ftype: Type) -> Signature:
    """The signature of a function type (what a function pointer points to)."""
    t = ftype.get_canonical()
    if t.kind == TypeKind.FUNCTIONPROTO:
        return Signature(tuple(t.argument_types()), t.get_result(), t.is_function_variadic())
    if t.kind == TypeKind.FUNCTIONNOPROTO:
        return Signature((), t.get_result(), True)
    raise UnsupportedType(ftype.spelling)


def function_signature(fn: Cursor, redeclarations: list[Cursor]) -> Signature:
    """The signature of function `fn` (any of its declarations); `redeclarations` are the
    translation unit's other declarations of it."""
    for d in [fn, *redeclarations]:
        if d.type.kind == TypeKind.FUNCTIONPROTO:
            return type_signature(d.type)
    definition = fn.get_definition()
    if definition is not None:  # `T f() { … }`: its parameters, if any, say the types
        params = [k.type for k in definition.get_children() if k.kind == CursorKind.PARM_DECL]
        return Signature(tuple(params), definition.type.get_result(), False)
    return type_signature(fn.type)


def _is_function(c: Cursor) -> bool:
    c = unparen(c)
    return c.kind == CursorKind.DECL_REF_EXPR and c.referenced is not None and \
        c.referenced.kind == CursorKind.FUNCTION_DECL


class CallEmitter:
    """Calls and function addresses (a FunctionEmitter part)."""

    def call(self, c: Cursor) -> SSAValue | None:
        callee = c.referenced
        if callee is None or callee.kind != CursorKind.FUNCTION_DECL:
            target = next(c.get_children())  # the callee expression: a function pointer
            return self.emit_call(c, type_signature(c_types.pointee_type(target.type)),
                                  pointer=self.rvalue(target))
        if callee.spelling.startswith("__builtin_"):  # what <math.h> macros expand to
            if evaluate(c) is None:
                raise unsupported(f"the builtin '{callee.spelling}'", c)
            return self.constant(c)
        self.unit.declare(callee)
        return self.emit_call(c, self.unit.signature(callee), symbol=callee.spelling)

    def emit_call(self, c: Cursor, sig: Signature, symbol: str | None = None,
                  pointer: SSAValue | None = None) -> SSAValue | None:
        """The call `c` of `symbol`, or through the `!llvm.ptr` `pointer`."""
        args = list(c.get_arguments())
        if len(args) < len(sig.params) or len(args) > len(sig.params) and not sig.variadic:
            raise unsupported("a call with another number of arguments than the function's "
                              "definition", c)
        values = [self.argument(a, t) for a, t in zip(args, sig.params, strict=False)]
        values += [self.argument(a, None) for a in args[len(sig.params):]]
        results = sig.results()
        if pointer is None and not sig.variadic:
            value = self.b.insert(func.CallOp(symbol, values, results))
        else:
            op = llvm.CallOp(symbol or "indirect", *([pointer] if pointer else []), *values,
                             return_type=results[0] if results else None,
                             var_callee_type=sig.llvm_type() if sig.variadic else None)
            if pointer is not None:
                del op.properties["callee"]  # an indirect call: the first operand
            value = self.b.insert(op)
        if results and c_types.is_pointer(sig.result):
            return self.b.view(value, c_types.pointer_view_type(sig.result))
        return value

    def argument(self, a: Cursor, param: Type | None) -> SSAValue:
        """One argument, as the parameter of type `param` receives it (None: promoted)."""
        if param is not None and c_types.is_reference(param):
            return self.bind_reference(a)
        v = self.rvalue(a)
        if c_types.is_address(a.type):
            return self.b.pointer(v)
        if param is not None and c_types.abi_type(param) != v.type:  # through a K&R decl
            return self.b.convert(v, arith_of(a.type), arith_of(param))
        return v

    def function_address(self, c: Cursor) -> SSAValue:
        """The address of the function a DECL_REF_EXPR names (`f` where it decays, `&f`)."""
        fn = unparen(c).referenced
        self.unit.declare(fn)
        sig = self.unit.signature(fn)
        if sig.variadic:
            return self.b.insert(llvm.AddressOfOp(fn.spelling, LLVM_PTR))
        value = self.b.insert(FuncConstantOp(fn.spelling, FunctionType.from_lists(
            sig.inputs(), sig.results())))
        return self.b.insert(UnrealizedConversionCastOp.get([value], [LLVM_PTR]))

    def function_pointer(self, c: Cursor) -> SSAValue:
        """A function designator decayed to a pointer: a function's address, or what the
        function pointer in `(*fp)` holds."""
        if _is_function(c):
            return self.function_address(c)
        return self.address(self.lvalue(c))
