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

from collections.abc import Sequence
from dataclasses import dataclass

from clang.cindex import Cursor, CursorKind, Type, TypeKind
from xdsl.dialects import arith, func, llvm, math
from xdsl.dialects.builtin import (
    FloatAttr,
    FunctionType,
    IntegerType,
    UnrealizedConversionCastOp,
)
from xdsl.ir import Attribute, Operation, Region, SSAValue

from approxcc.frontend import abi, c_types
from approxcc.frontend.c_types import LLVM_PTR, Arith, UnsupportedType, arith_of
from approxcc.frontend.clang_eval import evaluate
from approxcc.frontend.cursors import unparen, unsupported
from approxcc.frontend.llvm_ops import FuncConstantOp, VaArgOp, VaCopyOp, VaEndOp, VaStartOp


@dataclass(frozen=True)
class Signature:
    """A C function type at the call boundary."""

    params: tuple[Type, ...]  # what a call converts its first arguments to
    result: Type
    variadic: bool            # more arguments follow, promoted (also: no prototype)

    def lowering(self, extra: Sequence[Type] = ()) -> abi.Lowering:
        """The IR form of a call passing `extra` arguments after the parameters."""
        return abi.lower([*self.params, *extra], self.result)

    def function_type(self) -> FunctionType:
        low = self.lowering()
        return FunctionType.from_lists(low.inputs(), low.result_types)

    def llvm_type(self) -> llvm.LLVMFunctionType:
        low = self.lowering()
        return llvm.LLVMFunctionType(low.inputs(), low.llvm_result(), is_variadic=self.variadic)

    def declaration(self, name: str) -> Operation:
        """The external declaration of a function of this signature."""
        attrs = self.lowering().arg_attrs()
        if self.variadic:
            op = llvm.FuncOp(name, self.llvm_type(), linkage=llvm.LinkageAttr("external"))
        else:
            op = func.FuncOp(name, self.function_type(), Region(), "private")
        if attrs is not None:
            op.arg_attrs = attrs
        return op


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


_HINTS = ("__builtin_assume", "__builtin_prefetch", "__builtin_unreachable")  # no code
_BIT_COUNTS = {"__builtin_popcount": math.CtPopOp, "__builtin_ctz": math.CountTrailingZerosOp,
               "__builtin_clz": math.CountLeadingZerosOp}  # also the l, ll variants


_CLASSIFICATIONS = ("__builtin_isnan", "__builtin_isinf", "__builtin_isfinite",
                    "__builtin_signbit", "__builtin_signbitf")


def _classification(name: str, x: SSAValue) -> list[Operation]:
    """The ops of <math.h>'s type-generic classification `name(x)`, one of
    _CLASSIFICATIONS: an i1 last."""
    if name == "__builtin_isnan":
        return [arith.CmpfOp(x, x, "uno")]
    if name in ("__builtin_isinf", "__builtin_isfinite"):
        inf = arith.ConstantOp(FloatAttr(float("inf"), x.type))
        magnitude = math.AbsFOp(x)
        return [inf, magnitude, arith.CmpfOp(magnitude.result, inf.result,
                                             "oeq" if name == "__builtin_isinf" else "one")]
    bits = arith.BitcastOp(x, IntegerType(x.type.bitwidth))  # signbit: the top bit
    zero = arith.ConstantOp.from_int_and_width(0, x.type.bitwidth)
    return [bits, zero, arith.CmpiOp(bits.result, zero.result, "slt")]


# Builtins that are the C library's function of the same name (`__builtin_memcpy`), and the
# checking ones of _FORTIFY_SOURCE (`__builtin___memcpy_chk` is glibc's `__memcpy_chk`)
_LIBRARY = frozenset({
    "memcpy", "memmove", "memset", "memcmp", "strlen", "strcmp", "strncmp", "strcpy",
    "strncpy", "strcat", "strncat", "strchr", "strrchr", "strstr", "abs", "labs", "llabs",
    "fabs", "fabsf", "sqrt", "sqrtf", "floor", "floorf", "ceil", "ceilf", "exp", "log",
    "pow", "sin", "cos", "fmod", "malloc", "calloc", "realloc", "free", "abort", "exit",
    "printf", "puts", "putchar", "sprintf", "snprintf", "vsprintf", "vsnprintf"})
_CHECKED = frozenset({"memcpy", "memmove", "memset", "strcpy", "strncpy", "strcat", "strncat",
                      "sprintf", "snprintf", "vsprintf", "vsnprintf", "stpcpy"})


def _library_function(builtin: str) -> str | None:
    """The C library function a builtin calls, if it is one."""
    name = builtin.removeprefix("__builtin_")
    if name in _LIBRARY:
        return name
    if name.startswith("__") and name.endswith("_chk") and name[2:-4] in _CHECKED:
        return name
    return None


# Functions that return twice: LLVM must know it at the call (clang's returns_twice), or
# values it keeps in registers across the call are stale after the second return
_RETURNS_TWICE = frozenset({"setjmp", "_setjmp", "__sigsetjmp", "sigsetjmp", "savectx",
                            "vfork", "getcontext"})
_VA_BUILTINS = {"__builtin_va_start": VaStartOp, "__builtin_va_end": VaEndOp,
                "__builtin_va_copy": VaCopyOp}
_VA_LISTS = {"__builtin_va_start": 1, "__builtin_va_end": 1, "__builtin_va_copy": 2}


def is_va_arg(c: Cursor) -> bool:
    """`va_arg(ap, T)`: libclang shows an expression of type T whose only child is the
    `va_list` (decayed to `struct __va_list_tag *`)."""
    kids = list(c.get_children())
    return c.kind == CursorKind.UNEXPOSED_EXPR and len(kids) == 1 and \
        kids[0].type.get_canonical().spelling == _VA_LIST and \
        c.type.get_canonical().spelling != _VA_LIST


_VA_LIST = "struct __va_list_tag *"


# a call of one of these (`v.size()`, `v[i]`, a constructor) needs its object: not emitted yet
_MEMBER_FUNCTIONS = (CursorKind.CXX_METHOD, CursorKind.CONSTRUCTOR, CursorKind.DESTRUCTOR,
                     CursorKind.CONVERSION_FUNCTION)


def _is_function(c: Cursor) -> bool:
    c = unparen(c)
    return c.kind == CursorKind.DECL_REF_EXPR and c.referenced is not None and \
        c.referenced.kind == CursorKind.FUNCTION_DECL


class CallEmitter:
    """Calls and function addresses (a FunctionEmitter part)."""

    def call(self, c: Cursor) -> SSAValue | None:
        callee = c.referenced
        if callee is not None and callee.kind in _MEMBER_FUNCTIONS:
            raise unsupported(f"a call to the C++ member function '{callee.spelling}'", c)
        if callee is None or callee.kind != CursorKind.FUNCTION_DECL:
            target = next(c.get_children())  # the callee expression: a function pointer
            return self.emit_call(c, type_signature(c_types.pointee_type(target.type)),
                                  pointer=self.rvalue(target))
        if callee.spelling.startswith("__builtin_"):
            return self.builtin(c, callee.spelling)
        if callee.spelling in _RETURNS_TWICE:
            raise unsupported(f"a call to '{callee.spelling}' (a function that returns "
                              "twice)", c)
        self.unit.declare(callee)
        return self.emit_call(c, self.unit.signature(callee), symbol=callee.spelling)

    def emit_call(self, c: Cursor, sig: Signature, symbol: str | None = None,
                  pointer: SSAValue | None = None) -> SSAValue | None:
        """The call `c` of `symbol`, or through the `!llvm.ptr` `pointer`."""
        args = list(c.get_arguments())
        if len(args) < len(sig.params) or len(args) > len(sig.params) and not sig.variadic:
            raise unsupported("a call with another number of arguments than the function's "
                              "definition", c)
        low = sig.lowering([a.type for a in args[len(sig.params):]])
        if pointer is not None and low.arg_attrs() is not None:
            raise unsupported("a call through a pointer passing a large struct by value", c)
        values = [self.slot(c_types.element_type(sig.result))] if low.sret else []
        for i, (a, lowered) in enumerate(zip(args, low.args, strict=True)):
            values += self.argument(a, lowered, i < len(sig.params))
        results = list(low.result_types)
        call: Operation
        if pointer is None and not sig.variadic:
            call = func.CallOp(symbol, values, results)
        else:
            fixed = sig.llvm_type()
            call = llvm.CallOp(symbol or "indirect", *([pointer] if pointer else []), *values,
                               return_type=results[0] if results else None,
                               var_callee_type=fixed if sig.variadic else None)
            if pointer is not None:
                del call.properties["callee"]  # an indirect call: the first operand
        attrs = low.arg_attrs()
        if attrs is not None:  # `byval`/`sret` on the call too, as clang marks it: LLVM reads
            call.attributes["arg_attrs"] = attrs  # them there (without, a copy's stores die)
        value = self.b.insert(call)
        return self.c_result(low, value, values[0] if low.sret else None)

    def c_result(self, low: abi.Lowering, value: SSAValue | None,
                 sret: SSAValue | None) -> SSAValue | None:
        """The C value a call returns, from its IR result or the memory `sret` points to."""
        if sret is not None:
            return self.b.insert(llvm.LoadOp(sret, c_types.element_type(low.result)))
        if value is None:
            return None
        if c_types.is_record(low.result):
            return self.from_registers([value], low.result)
        if c_types.is_pointer(low.result):
            return self.b.view(value, c_types.pointer_view_type(low.result))
        return value

    def argument(self, a: Cursor, lowered: abi.Arg, prototyped: bool) -> list[SSAValue]:
        """One argument as the IR values it is passed as."""
        param = lowered.ctype if prototyped else None
        if param is not None and c_types.is_reference(param):
            return [self.bind_reference(a)]
        v = self.rvalue(a)
        if c_types.is_address(a.type):
            return [self.b.pointer(v)]
        if c_types.is_record(a.type):
            if lowered.in_memory:
                copy = self.slot(c_types.element_type(a.type))
                self.b.insert(llvm.StoreOp(v, copy))
                return [copy]
            return self.to_registers(v, lowered.types)
        if param is not None and c_types.abi_type(param) != v.type:  # through a K&R decl
            return [self.b.convert(v, arith_of(a.type), arith_of(param))]
        return [v]

    def to_registers(self, record: SSAValue, types: Sequence[Attribute]) -> list[SSAValue]:
        """A struct value as the eightbytes it is passed in (through a stack slot)."""
        layout = llvm.LLVMStructType.from_type_list(list(types))
        slot = self.slot(layout)
        self.b.insert(llvm.StoreOp(record, slot))
        return [self.b.insert(llvm.LoadOp(self.b.insert(llvm.GEPOp.from_mixed_indices(
            slot, [0, i], layout)), t)) for i, t in enumerate(types)]

    def from_registers(self, values: Sequence[SSAValue], record: Type) -> SSAValue:
        """The struct value that arrived in registers (eightbytes, or one `!llvm.struct`
        of them)."""
        layout = llvm.LLVMStructType.from_type_list([v.type for v in values])
        slot = self.slot(layout)
        for i, v in enumerate(values):
            self.b.insert(llvm.StoreOp(v, self.b.insert(llvm.GEPOp.from_mixed_indices(
                slot, [0, i], layout))))
        return self.b.insert(llvm.LoadOp(slot, c_types.element_type(record)))

    def builtin(self, c: Cursor, name: str) -> SSAValue | None:
        """The compiler builtins real code calls: constants (what <math.h> macros expand
        to), `va_start`/`va_end`/`va_copy`, hints, bit counts."""
        args = list(c.get_arguments())
        if evaluate(c) is not None:
            return self.constant(c)
        if name in _VA_BUILTINS:
            lists = args[:_VA_LISTS[name]]
            self.b.insert(_VA_BUILTINS[name](*(self.b.pointer(self.rvalue(a)) for a in lists)))
            return None
        if name in _HINTS:
            return None
        if name.startswith("__builtin_expect"):  # the value, without the expectation
            return self.rvalue(args[0])
        if name in _CLASSIFICATIONS and len(args) == 1:
            ops = _classification(name, self.rvalue(args[0]))
            for op in ops:
                value = self.b.insert(op)
            return self.b.convert(value, Arith(1, False, False), arith_of(c.type))
        library = _library_function(name)
        if library is not None:  # `__builtin_memcpy`: the C library's memcpy
            self.unit.declare(c.referenced, library)
            return self.emit_call(c, self.unit.signature(c.referenced), symbol=library)
        if name == "__builtin_object_size":  # unknown, as its documentation allows
            kind = evaluate(args[1]) if len(args) == 2 else None
            return self.b.int_const(-1 if kind in (0, 1) else 0,
                                    c_types.scalar_type(c.type))
        count = next((op for prefix, op in _BIT_COUNTS.items() if name.startswith(prefix)),
                     None)
        if count is None or len(args) != 1:
            raise unsupported(f"the builtin '{name}'", c)
        value = self.b.insert(count(self.rvalue(args[0])))
        return self.b.convert(value, Arith(value.type.width.data, False, False),
                              arith_of(c.type))

    def va_arg(self, c: Cursor) -> SSAValue:
        """The next variadic argument, of a scalar type (x86-64 reads it from the register
        save area or the stack, as `llvm.va_arg` lowers)."""
        if c_types.is_record(c.type):
            raise unsupported("'va_arg' of a struct", c)
        ap = self.b.pointer(self.rvalue(next(c.get_children())))
        value = self.b.insert(VaArgOp(ap, c_types.abi_type(c.type)))
        if c_types.is_pointer(c.type):
            return self.b.view(value, c_types.pointer_view_type(c.type))
        return value

    def function_address(self, c: Cursor) -> SSAValue:
        """The address of the function a DECL_REF_EXPR names (`f` where it decays, `&f`)."""
        fn = unparen(c).referenced
        self.unit.declare(fn)
        sig = self.unit.signature(fn)
        if sig.variadic:
            op: Operation = llvm.AddressOfOp(fn.spelling, LLVM_PTR)
            self.unit.addresses.append((op, fn))
            return self.b.insert(op)
        op = FuncConstantOp(fn.spelling, sig.function_type())
        self.unit.addresses.append((op, fn))
        value = self.b.insert(op)
        return self.b.insert(UnrealizedConversionCastOp.get([value], [LLVM_PTR]))

    def function_pointer(self, c: Cursor) -> SSAValue:
        """A function designator decayed to a pointer: a function's address, or what the
        function pointer in `(*fp)` holds."""
        if _is_function(c):
            return self.function_address(c)
        return self.address(self.lvalue(c))
