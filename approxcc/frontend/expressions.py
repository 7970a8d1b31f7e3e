"""C expressions → values, with C's conversions (clang makes the implicit ones explicit
in the AST; `cast` follows them), short-circuit `&&`/`||` and `?:` as `scf.if`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from clang.cindex import BinaryOperator, Cursor, CursorKind, TypeKind
from xdsl.dialects import arith, llvm, scf
from xdsl.dialects.builtin import (
    MemRefType,
    i1,
)
from xdsl.ir import Attribute, Block, Region, SSAValue

from approxcc.frontend import c_types
from approxcc.frontend.builder import int_constant
from approxcc.frontend.c_types import INTPTR, LLVM_PTR, Arith, UnsupportedType, arith_of
from approxcc.frontend.calls import is_va_arg
from approxcc.frontend.clang_eval import evaluate
from approxcc.frontend.counted_loops import (
    unary_spelling,
)
from approxcc.frontend.cursors import same_type, unparen, unsupported
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
                 CursorKind.UNARY_OPERATOR, CursorKind.STRING_LITERAL, CursorKind.MEMBER_REF_EXPR,
                 CursorKind.COMPOUND_LITERAL_EXPR)

_FUNCTIONS = (TypeKind.FUNCTIONPROTO, TypeKind.FUNCTIONNOPROTO)
# Where a variable declared without `static`/`extern` still has static storage.
_FILE_SCOPES = (CursorKind.TRANSLATION_UNIT, CursorKind.NAMESPACE, CursorKind.LINKAGE_SPEC)


def _array_parameter(c: Cursor) -> Cursor | None:
    """The DECL_REF_EXPR of a parameter declared as an array (`char s[]`) under the casts
    libclang shows around it (C adjusted it to a pointer, loaded as an rvalue), else None."""
    while c.kind in (CursorKind.UNEXPOSED_EXPR, CursorKind.PAREN_EXPR):
        kids = list(c.get_children())
        if len(kids) != 1:
            return None
        c = kids[0]
    if c.kind == CursorKind.DECL_REF_EXPR and c.referenced is not None and \
            c.referenced.kind == CursorKind.PARM_DECL:
        return c
    return None


class ExpressionEmitter:
    """C expressions → arith/memref/llvm values (a FunctionEmitter part)."""

    # lvalues -------------------------------------------------------------------------------
    def lvalue(self, c: Cursor) -> LValue:
        c = unparen(c)
        k = c.kind
        if k == CursorKind.DECL_REF_EXPR:
            return self.variable(c)
        if k == CursorKind.ARRAY_SUBSCRIPT_EXPR:
            base, idx = c.get_children()
            if not c_types.is_address(base.type):
                base, idx = idx, base
            index = self.b.to_index(self.rvalue(idx), c_types.is_signed(idx.type))
            return self.advance(self.pointed_to(base, c.type), index)
        if k == CursorKind.UNARY_OPERATOR and unary_spelling(c)[0] == "*":
            return self.pointed_to(next(c.get_children()), c.type)
        kids = list(c.get_children())
        if k == CursorKind.UNARY_OPERATOR and unary_spelling(c)[0] == "__extension__" or \
                k == CursorKind.UNEXPOSED_EXPR and len(kids) == 1 and \
                kids[0].kind == CursorKind.STRING_LITERAL:  # `__func__`
            return self.lvalue(kids[0])
        if k == CursorKind.MEMBER_REF_EXPR:
            base = next(c.get_children())
            obj = self.pointed_to(base, c_types.pointee_type(base.type)) \
                if c_types.is_address(base.type) else self.lvalue(base)
            return self.member(obj, c.referenced, c.type)
        if k == CursorKind.COMPOUND_LITERAL_EXPR:
            return self.compound_literal(c)
        if k == CursorKind.STRING_LITERAL:
            sym = self.unit.string_global(c)
            return self.at_address(self.b.insert(llvm.AddressOfOp(sym, LLVM_PTR)), c.type)
        raise unsupported(f"this kind of lvalue ({k.name.lower()})", c)

    def variable(self, c: Cursor) -> LValue:
        """The object a DECL_REF_EXPR names."""
        var = c.referenced
        if c_types.is_reference(var.type):
            return self.referenced_object(var)
        if var in self.mem:
            return self.local(var)
        if var in self.vars and c_types.is_array(var.type):  # an array parameter: a pointer
            return self.at_address(self.vars[var], var.type)
        if var.kind == CursorKind.VAR_DECL and (
                var.storage_class.name in ("STATIC", "EXTERN")
                or var.semantic_parent.kind in _FILE_SCOPES):
            return self.global_lvalue(var)
        raise unsupported("a variable declared outside the function", c)

    def referenced_object(self, var: Cursor) -> LValue:
        """The object a C++ reference parameter or local is bound to."""
        address = self.vars.get(var)
        if address is None:
            if var not in self.mem:
                raise unsupported("a reference declared outside the function", var)
            address = self.b.insert(llvm.LoadOp(self.mem[var], LLVM_PTR))
        return self.at_address(address, var.type.get_pointee())

    def bind_reference(self, c: Cursor) -> SSAValue:
        """The address a reference bound to `c` holds: the object's, or for a temporary
        (`const T&` bound to an rvalue) a fresh slot's holding its value."""
        if unparen(c).kind in _LVALUE_KINDS:
            return self.address(self.lvalue(c))
        value = self.rvalue(c)
        temporary = LValue(self.slot(c_types.element_type(c.type)), (), c.type)
        self.store(temporary, value)
        return self.address(temporary)

    def pointed_to(self, pointer: Cursor, ctype) -> LValue:
        """The object of type `ctype` a pointer expression points to; an array that decays
        to the pointer gives its first element without going through a pointer value."""
        inner = unparen(pointer)
        if inner.kind == CursorKind.UNEXPOSED_EXPR:
            kids = list(inner.get_children())
            if len(kids) == 1 and c_types.is_array(kids[0].type):
                # of the expression's type: libclang's canonical array type keeps qualifiers
                # on the array, not its element (`volatile int a[4]`: `a[i]` is volatile)
                return replace(self.first_element(self.lvalue(kids[0])), ctype=ctype)
        return self.pointee(self.rvalue(pointer), ctype)

    # rvalues -------------------------------------------------------------------------------
    def rvalue(self, c: Cursor) -> SSAValue | None:
        try:
            return self.expression(c)
        except UnsupportedType as e:  # raised by the innermost expression of that type
            raise unsupported(f"type '{e}'", c) from None

    def truth(self, c: Cursor) -> SSAValue:
        """A C condition (arithmetic or pointer) as i1."""
        return self.b.truth(self.rvalue(c))

    def expression(self, c: Cursor) -> SSAValue | None:
        k = c.kind
        if k in (CursorKind.INTEGER_LITERAL, CursorKind.CHARACTER_LITERAL,
                 CursorKind.FLOATING_LITERAL, CursorKind.CXX_BOOL_LITERAL_EXPR):
            return self.constant(c)
        if k == CursorKind.PAREN_EXPR:
            return self.rvalue(next(c.get_children()))
        if k == CursorKind.UNEXPOSED_EXPR and is_va_arg(c):
            return self.va_arg(c)
        if k == CursorKind.UNEXPOSED_EXPR or k == CursorKind.CSTYLE_CAST_EXPR:
            return self.cast(c)
        if k == CursorKind.DECL_REF_EXPR:
            var = c.referenced
            if var.kind == CursorKind.ENUM_CONSTANT_DECL:
                return self.constant(c)
            if var in self.vars and not c_types.is_reference(var.type):
                return self.vars[var]
            return self.load(self.lvalue(c))
        if k in (CursorKind.ARRAY_SUBSCRIPT_EXPR, CursorKind.MEMBER_REF_EXPR,
                 CursorKind.COMPOUND_LITERAL_EXPR):
            return self.load(self.lvalue(c))
        if k == CursorKind.BINARY_OPERATOR:
            return self.binary(c)
        if k == CursorKind.COMPOUND_ASSIGNMENT_OPERATOR:
            return self.compound_assign(c)
        if k == CursorKind.UNARY_OPERATOR:
            return self.unary(c)
        if k == CursorKind.CALL_EXPR:
            return self.call(c)
        if k == CursorKind.StmtExpr:
            return self.statement_expression(c)
        if k == CursorKind.CONDITIONAL_OPERATOR:
            cond, then, other = c.get_children()
            known = evaluate(cond)
            if known is not None:  # `sizeof (x) == sizeof (float) ? …`: only the arm taken
                return self.arm(then if known else other, c.type)
            if c_types.is_void(c.type):  # `assert(x)` expands to `x ? (void)0 : fail()`
                self.if_else(self.truth(cond), lambda: self.rvalue(then),
                             lambda: self.rvalue(other))
                return None
            return self.select(self.truth(cond), lambda: self.rvalue(then),
                               lambda: self.rvalue(other), self.value_type(c.type))
        if k in (CursorKind.CXX_UNARY_EXPR,) or k.name == "UNARY_EXPR":
            return self.type_trait(c)
        raise unsupported(f"the expression '{k.name.lower()}'", c)

    def value_type(self, t) -> Attribute:
        """The MLIR type of a C rvalue of type `t`."""
        return c_types.element_type(t) if c_types.is_record(t) else c_types.scalar_type(t)

    def type_trait(self, c: Cursor) -> SSAValue:
        """`sizeof`, `_Alignof`: constants, but for `sizeof` of a variable-length array."""
        kids = [k for k in c.get_children() if k.kind != CursorKind.TYPE_REF]
        if evaluate(c) is None and kids:  # `_Alignof` is always a constant
            size = self.b.insert(arith.IndexCastOp(self.byte_size(kids[0].type), INTPTR.mlir))
            return self.b.convert(size, INTPTR, arith_of(c.type))
        return self.constant(c)

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
        if not kids or len(kids) > 1 and c.kind != CursorKind.CSTYLE_CAST_EXPR:
            raise unsupported(f"the expression '{c.kind.name.lower()}'", c)
        src = kids[-1]  # after the array sizes of a cast to a variably modified type
        dst_t, src_t = c.type.get_canonical(), src.type.get_canonical()
        if c_types.is_void(dst_t):
            self.rvalue(src)
            return None
        if src_t.kind in _FUNCTIONS:
            return self.function_pointer(src)
        if c_types.is_array(src_t):  # array-to-pointer decay
            return self.decay(src, c.type)
        inner = unparen(src)
        if inner.kind in _LVALUE_KINDS and same_type(src_t, dst_t) and \
                c.kind == CursorKind.UNEXPOSED_EXPR:
            return self.rvalue(inner)  # lvalue-to-rvalue: a load (or an SSA parameter)
        value = self.rvalue(src)
        if c_types.is_address(dst_t):  # an array type: a parameter's, adjusted to a pointer
            view_t = c_types.pointer_view_type(dst_t)
            if c_types.is_pointer(src_t):  # the same address, seen as another type
                return value if value.type == view_t else \
                    self.b.view(self.b.pointer(value), view_t)
            bits = self.b.convert(value, arith_of(src_t), INTPTR)
            return self.b.from_address_bits(bits, view_t)
        if c_types.is_pointer(src_t):
            if c_types.is_bool(dst_t):
                return self.b.insert(arith.ExtUIOp(self.b.truth(value), arith_of(dst_t).mlir))
            return self.b.convert(self.b.address_bits(value), INTPTR, arith_of(dst_t))
        if c_types.is_record(dst_t) and same_type(src_t, dst_t):
            return value
        return self.b.convert(value, arith_of(src_t), arith_of(dst_t))

    def decay(self, array: Cursor, ptr_type) -> SSAValue:
        """An array expression as a pointer to its first element."""
        lv = self.lvalue(_array_parameter(array) or array)
        view_t = c_types.pointer_view_type(ptr_type)
        if lv.ref.type == view_t and lv.indices and int_constant(lv.indices[0]) == 0:
            return lv.ref
        return self.b.view(self.address(lv), view_t)

    def arm(self, c: Cursor, t) -> SSAValue | None:
        """One arm of `?:`, as the conditional's type `t` represents it."""
        value = self.rvalue(c)
        if value is None or c_types.is_void(t):
            return None
        want = self.value_type(t)
        return value if value.type == want else self.b.view(self.b.pointer(value), want)

    def select(self, cond: SSAValue, then: Callable[[], SSAValue],
               other: Callable[[], SSAValue], t) -> SSAValue:
        """A value computed lazily on one of two paths (`?:`, `&&`, `||`)."""
        # a pointer is chosen as the pointer, then viewed: a view stays a cast (Builder.view)
        viewed = isinstance(t, MemRefType) and not t.has_static_shape()
        blocks = []
        for branch in (then, other):
            blk = Block()
            with self.b.at(blk):
                value = branch()
                if viewed:
                    value = self.b.pointer(value)
                elif value.type != t:  # two pointer representations of one C type
                    value = self.b.view(self.b.pointer(value), t)
                self.b.insert(scf.YieldOp(value))
            blocks.append(blk)
        chosen = self.b.insert(scf.IfOp(cond, [LLVM_PTR if viewed else t], Region(blocks[0]),
                                        Region(blocks[1])))
        return self.b.view(chosen, t) if viewed else chosen

    # operators -----------------------------------------------------------------------------
    def binary(self, c: Cursor) -> SSAValue:
        op = c.binary_operator
        lhs, rhs = c.get_children()
        if op == BinaryOperator.Assign:
            lv = self.assigned(lhs)
            return self.assign(lv, self.rvalue(rhs))
        if op == BinaryOperator.Comma:
            self.rvalue(lhs)
            return self.rvalue(rhs)
        if op in (BinaryOperator.LAnd, BinaryOperator.LOr):
            left = self.truth(lhs)
            right = lambda: self.truth(rhs)  # noqa: E731
            const = lambda: self.b.int_const(op == BinaryOperator.LOr, i1)  # noqa: E731
            both = self.select(left, right, const, i1) if op == BinaryOperator.LAnd else \
                self.select(left, const, right, i1)
            return self.b.insert(arith.ExtUIOp(both, c_types.scalar_type(c.type)))
        if c_types.is_address(lhs.type) or c_types.is_address(rhs.type):
            return self.pointer_binary(op, lhs, rhs, c)
        a, b = self.rvalue(lhs), self.rvalue(rhs)
        if op in _CMP:
            t = arith_of(lhs.type)
            pred = _CMP[op][2 if t.floating else 0 if t.signed else 1]
            cmp = arith.CmpfOp(a, b, pred) if t.floating else arith.CmpiOp(a, b, pred)
            return self.b.insert(arith.ExtUIOp(self.b.insert(cmp), c_types.scalar_type(c.type)))
        return self.arithmetic(op, a, arith_of(lhs.type), b, arith_of(rhs.type),
                               arith_of(c.type), c)

    def pointer_binary(self, op: BinaryOperator, lhs: Cursor, rhs: Cursor,
                       c: Cursor) -> SSAValue:
        """`p + n`, `n + p`, `p - n`, `p - q` (a ptrdiff_t) and pointer comparisons."""
        if op in _CMP:  # addresses compare as unsigned integers
            a, b = (self.b.address_bits(self.rvalue(x)) for x in (lhs, rhs))
            cmp = self.b.insert(arith.CmpiOp(a, b, _CMP[op][1]))
            return self.b.insert(arith.ExtUIOp(cmp, c_types.scalar_type(c.type)))
        if op == BinaryOperator.Sub and c_types.is_address(rhs.type):
            a, b = (self.b.address_bits(self.rvalue(x)) for x in (lhs, rhs))
            size = self.b.insert(arith.IndexCastOp(
                self.byte_size(c_types.pointee_type(lhs.type)), INTPTR.mlir))
            diff = self.b.insert(arith.DivSIOp(self.b.insert(arith.SubiOp(a, b)), size))
            return self.b.convert(diff, INTPTR, arith_of(c.type))
        if op not in (BinaryOperator.Add, BinaryOperator.Sub):
            raise unsupported(f"the operator '{op.name}' on pointers", c)
        ptr, n = (lhs, rhs) if c_types.is_address(lhs.type) else (rhs, lhs)
        return self.pointer_plus(self.rvalue(ptr), ptr.type, self.rvalue(n), n.type,
                                 op == BinaryOperator.Sub)

    def pointer_plus(self, pointer: SSAValue, ptr_type, n: SSAValue, n_type,
                     negate: bool = False) -> SSAValue:
        """`pointer + n` (`- n` if `negate`) in units of the pointee."""
        index = self.b.to_index(n, c_types.is_signed(n_type))
        if negate:
            index = self.b.insert(arith.SubiOp(self.b.index(0), index))
        pointee = self.pointee(pointer, c_types.pointee_type(ptr_type))
        moved = self.address(self.advance(pointee, index))
        return self.b.view(moved, c_types.pointer_view_type(ptr_type))

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
        lv = self.assigned(lhs)
        if c_types.is_address(lhs.type):
            value = self.pointer_plus(self.load(lv), lhs.type, self.rvalue(rhs), rhs.type,
                                      op == BinaryOperator.Sub)
            self.store(lv, value)
            return value
        lhs_t, rhs_t = arith_of(lhs.type), arith_of(rhs.type)
        shift = op in (BinaryOperator.Shl, BinaryOperator.Shr)
        comp_t = c_types.promote(lhs_t) if shift else c_types.common_type(lhs_t, rhs_t)
        a = self.b.convert(self.load(lv), lhs_t, comp_t)
        b = self.rvalue(rhs) if shift else self.b.convert(self.rvalue(rhs), rhs_t, comp_t)
        value = self.b.convert(self.arithmetic(op, a, comp_t, b, rhs_t, comp_t, c), comp_t,
                               lhs_t)
        return self.assign(lv, value)

    def unary(self, c: Cursor) -> SSAValue:
        op, prefix = unary_spelling(c)
        operand = next(c.get_children())
        if op == "*":
            return self.load(self.lvalue(c))
        if op == "&" and c_types.canonical(operand.type).kind in _FUNCTIONS:
            return self.function_pointer(operand)
        if op == "__extension__":
            return self.rvalue(operand)
        if op == "&":
            return self.b.view(self.address(self.lvalue(operand)),
                               c_types.pointer_view_type(c.type))
        if op in ("++", "--"):
            return self.increment(operand, op == "++", prefix)
        t = arith_of(c.type)
        if op == "!":
            inverted = self.b.insert(arith.XOrIOp(self.truth(operand), self.b.int_const(1, i1)))
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

    def increment(self, operand: Cursor, up: bool, prefix: bool) -> SSAValue:
        """`++x`, `x++`, `--x`, `x--` on arithmetic types and pointers."""
        lv = self.assigned(operand)
        old = self.load(lv)
        if c_types.is_address(operand.type):
            new = self.pointer_plus(old, operand.type, self.b.index(1), operand.type, not up)
        else:
            t = arith_of(operand.type)
            comp = c_types.promote(t) if t.boolean else t  # `b--` on a _Bool is `b = b - 1`
            one = self.b.float_const(1.0, comp.mlir) if comp.floating else \
                self.b.int_const(1, comp.mlir)
            cls = (arith.AddfOp if comp.floating else arith.AddiOp) if up else \
                (arith.SubfOp if comp.floating else arith.SubiOp)
            new = self.b.convert(self.b.insert(cls(self.b.convert(old, t, comp), one)), comp, t)
        new = self.assign(lv, new)
        return new if prefix else old
