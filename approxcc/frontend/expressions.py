"""C expressions → values, with C's conversions (clang makes the implicit ones explicit
in the AST; `cast` follows them), short-circuit `&&`/`||` and `?:` as `scf.if`.
"""

from __future__ import annotations

from collections.abc import Callable

from clang.cindex import BinaryOperator, Cursor, CursorKind, TypeKind
from xdsl.dialects import arith, func, llvm, scf
from xdsl.dialects.builtin import (
    i1,
)
from xdsl.ir import Block, Region, SSAValue

from approxcc.frontend import c_types
from approxcc.frontend.c_types import LLVM_PTR, Arith, UnsupportedType, arith_of
from approxcc.frontend.clang_eval import evaluate
from approxcc.frontend.counted_loops import (
    unary_spelling,
)
from approxcc.frontend.cursors import same_type, string_bytes, unparen, unsupported
from approxcc.frontend.memory import LValue

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
_LVALUE_KINDS = (CursorKind.DECL_REF_EXPR, CursorKind.ARRAY_SUBSCRIPT_EXPR,
                 CursorKind.UNARY_OPERATOR, CursorKind.STRING_LITERAL)


class ExpressionEmitter:
    """C expressions → arith/memref/llvm values (a FunctionEmitter part)."""

    def lvalue(self, c: Cursor) -> LValue:
        c = unparen(c)
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
        inner = unparen(src)
        if inner.kind in _LVALUE_KINDS and same_type(src_t, dst_t) and \
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
        array = unparen(array)
        view_t = c_types.pointer_view_type(ptr_type)
        if array.kind == CursorKind.STRING_LITERAL:
            data = string_bytes(array)
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
