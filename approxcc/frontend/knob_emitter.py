"""Annotated code → `approx.knob`: one knob per annotation around the statement or the
whole function body, the dynamic state computed right before it, `check`/`recover` as an
`approx.try` after the target (docs/approx-ir.md §1).
"""

from __future__ import annotations

from clang.cindex import Cursor, CursorKind
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue

from approxcc.annotations import Annotation
from approxcc.diagnostics import CompileError, warn
from approxcc.dialect.approx import KnobOp, TryOp, YieldOp, make_knob
from approxcc.frontend import c_types
from approxcc.frontend.counted_loops import (
    strip,
)
from approxcc.frontend.knob_targets import Target, function_target, statement_target, variants


class KnobEmitter:
    """Annotations → `approx.knob` ops (a FunctionEmitter part)."""

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
                self.function_body(YieldOp)
        knob = self.make(a, target, name, knob_id, body, state)
        return list(knob.results)

    def annotated(self, c: Cursor, anns: list[Annotation]) -> None:
        """Wrap the statement in one knob per annotation, the first annotation outermost."""
        a, rest = anns[0], anns[1:]
        target = statement_target(a, c)
        default = f"{self.fn.spelling}_{c.extent.start.line}"
        nth = len(self.by_line[c.extent.start.line]) - len(anns)
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
        if all(v == a.spec.exact for v in a.domain()):
            warn(f"all values of knob '{name}' are exact", a.loc, "-Wapprox-exact-knob")
        if target.kind == "call":
            params["callee"] = SymbolRefAttr(target.callee.spelling)
        if "variants" in a.spec.clauses:
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
