"""The `approx` dialect (ApproxMLIR, Table 1): knob, decision_tree, transform, try, yield.

Which transform types exist, and each one's own knob checks, come from `approxcc.registry`.

Every op has a custom syntax (documented in its docstring) that round-trips; the generic form
parses as well.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from xdsl.dialects.builtin import (
    I64,
    AnyFloatConstr,
    ArrayAttr,
    DictionaryAttr,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    SignlessIntegerConstraint,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    f64,
    i1,
    i64,
)
from xdsl.dialects.utils import AbstractYieldOperation
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator
from xdsl.utils.exceptions import VerifyException

from approxcc import registry
from approxcc.diagnostics import CompileError, SourceLocation, note
from approxcc.registry import TARGET_KINDS, TransformSpec


def _verify_transform_type(transform_type: str) -> TransformSpec:
    """The registered transform named `transform_type`."""
    spec = registry.get(transform_type)
    if spec is None:
        raise VerifyException(
            f"unknown transform_type '{transform_type}' "
            f"(registered: {', '.join(registry.names())})")
    return spec


def _int_list(attr: Attribute, what: str) -> list[int]:
    if not isinstance(attr, ArrayAttr) or not all(isinstance(a, IntegerAttr) for a in attr):
        raise VerifyException(f"{what} must be an array of integers")
    return [a.value.data for a in attr]


def _number_list(attr: Attribute, what: str) -> list[int | float]:
    """The values of an array of i64 integers and f64 floats (what `1` and `1.0` parse to)."""
    if not isinstance(attr, ArrayAttr) or not all(
            (isinstance(a, IntegerAttr) and a.type == i64)
            or (isinstance(a, FloatAttr) and isinstance(a.type, Float64Type)) for a in attr):
        raise VerifyException(f"{what} must be an array of i64 or f64 numbers")
    return [a.value.data for a in attr]


def _verify_tree_shape(thresholds: Sequence[int | float], decisions: Sequence[int]) -> None:
    if not all(math.isfinite(t) for t in thresholds):
        raise VerifyException(f"thresholds must be finite, got {list(thresholds)}")
    if any(a >= b for a, b in zip(thresholds, thresholds[1:], strict=False)):
        raise VerifyException(f"thresholds must be strictly increasing, got {list(thresholds)}")
    _verify_decision_count(len(thresholds), len(decisions))


def _verify_decision_count(thresholds: int, decisions: int) -> None:
    if decisions != thresholds + 1:
        raise VerifyException(
            f"expected {thresholds + 1} decisions for {thresholds} thresholds, got {decisions}")


def _verify_params(params: DictionaryAttr) -> None:
    """Checks the knob's `params` dictionary (see the `make_knob` docstring for its keys)."""
    p = params.data
    unknown = set(p) - {"target", "callee", "values", "value", "thresholds", "range",
                        "variants", "dynamic", "decision_thresholds", "decisions"}
    if unknown:
        raise VerifyException(f"unknown knob params: {', '.join(sorted(unknown))}")
    if "target" in p and not (isinstance(p["target"], StringAttr)
                              and p["target"].data in TARGET_KINDS):
        raise VerifyException(f"params.target must be one of {', '.join(TARGET_KINDS)}")
    if "callee" in p:
        if not isinstance(p["callee"], SymbolRefAttr):
            raise VerifyException("params.callee must be a symbol reference")
        if p.get("target") != StringAttr("call"):
            raise VerifyException('params.callee needs target = "call"')
    values = _int_list(p["values"], "params.values") if "values" in p else None
    if values is not None and not values:
        raise VerifyException("params.values must not be empty")
    if "value" in p:
        if not isinstance(p["value"], IntegerAttr):
            raise VerifyException("params.value must be an integer")
        if values is not None and p["value"].value.data not in values:
            raise VerifyException(
                f"params.value {p['value'].value.data} is not in params.values {values}")
    if "thresholds" in p and not isinstance(p["thresholds"], IntegerAttr):
        raise VerifyException("params.thresholds must be an integer (the threshold count)")
    if "range" in p:
        lo_hi = _int_list(p["range"], "params.range")
        if len(lo_hi) != 2 or lo_hi[0] >= lo_hi[1]:
            raise VerifyException(f"params.range must be [lo, hi] with lo < hi, got {lo_hi}")
    if "variants" in p and not (isinstance(p["variants"], ArrayAttr)
                                and all(isinstance(v, SymbolRefAttr) for v in p["variants"])):
        raise VerifyException("params.variants must be an array of symbol references")
    if "dynamic" in p and not isinstance(p["dynamic"], UnitAttr):
        raise VerifyException("params.dynamic must be a unit attribute")
    if ("decisions" in p) != ("decision_thresholds" in p):
        raise VerifyException("params.decisions and params.decision_thresholds go together")
    if "decisions" in p:
        decisions = _int_list(p["decisions"], "params.decisions")
        _verify_tree_shape(_number_list(p["decision_thresholds"], "params.decision_thresholds"),
                           decisions)
        if values is not None and (bad := [d for d in decisions if d not in values]):
            raise VerifyException(f"decisions {bad} are not in params.values {values}")


def _is_state_type(type: Attribute) -> bool:
    """A runtime state is a signless integer or a float."""
    return SignlessIntegerConstraint.verifies(type) or AnyFloatConstr.verifies(type)


def _float_literal(value: float) -> str:
    """`value` as an MLIR float literal (always with a `.`, so it never reads as an integer)."""
    text = repr(value)
    return text if "." in text else text.replace("e", ".0e")


def _print_number(printer: Printer, attr: Attribute) -> None:
    if isinstance(attr, FloatAttr):
        printer.print_string(_float_literal(attr.value.data))
    elif isinstance(attr, IntegerAttr):
        printer.print_string(str(attr.value.data))
    else:  # not a number: the verifier reports it
        printer.print_attribute(attr)


def _parse_number(parser: Parser) -> IntegerAttr | FloatAttr:
    """An integer literal is an i64, a float literal an f64, as in a generic `[1, 2.5]`."""
    value = parser.parse_number()
    return IntegerAttr(value, i64) if isinstance(value, int) else FloatAttr(value, f64)


@irdl_op_definition
class KnobOp(IRDLOperation):
    """Scope and tuner interface: wraps the approximable region.

    ```mlir
    %r = approx.knob "score_loop" id 0 [loop_perforate] (%s, %out) params {dynamic, ...}
        loc "k.c:5:11" : (i32, memref<?xf32>) -> f32 {
    ^bb0(%state: i32, %o: memref<?xf32>):
      ...
      approx.yield %x : f32
    }
    ```
    `loc` is optional; other (discardable) attributes follow as `attributes {...}` before
    the `:`.
    """

    name = "approx.knob"

    args = var_operand_def()
    res = var_result_def()
    knob_id = prop_def(IntegerAttr[I64], prop_name="id")
    knob_name = prop_def(StringAttr, prop_name="name")
    transform_types = prop_def(ArrayAttr[StringAttr])
    params = prop_def(DictionaryAttr)
    loc = opt_prop_def(StringAttr)
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove())

    @property
    def source_loc(self) -> SourceLocation | None:
        return parse_loc(self.loc.data) if self.loc else None

    @property
    def is_dynamic(self) -> bool:
        return self.param("dynamic") is not None

    def param(self, key: str) -> Attribute | None:
        return self.params.data.get(key)

    def verify_(self) -> None:
        block = self.body.block
        if [a.type for a in block.args] != [a.type for a in self.args]:
            raise VerifyException("knob block arguments must match the knob operands' types")
        if not isinstance(block.last_op, YieldOp):
            raise VerifyException("knob body must end with approx.yield")
        if [v.type for v in block.last_op.arguments] != [r.type for r in self.res]:
            raise VerifyException("approx.yield operands must match the knob results' types")
        if not self.transform_types.data:
            raise VerifyException("knob has no transform_types")
        specs = [_verify_transform_type(t.data) for t in self.transform_types]
        _verify_params(self.params)
        if self.is_dynamic and not (self.args and _is_state_type(self.args[0].type)):
            raise VerifyException("a dynamic knob's first operand must be its state "
                                  "(a signless integer or a float)")
        for spec in specs:
            if spec.verify is not None:
                spec.verify(self, spec)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.knob_name.data)
        printer.print_string(f" id {self.knob_id.value.data} [")
        printer.print_list(self.transform_types, printer.print_identifier_or_string_literal)
        printer.print_string("] ")
        printer.print_operands(self.args)
        printer.print_string(" params ")
        printer.print_attribute(self.params)
        if self.loc is not None:
            printer.print_string(" loc ")
            printer.print_string_literal(self.loc.data)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" : ")
        printer.print_function_type(self.args.types, self.res.types)
        printer.print_string(" ")
        printer.print_region(self.body)

    @classmethod
    def parse(cls, parser: Parser) -> KnobOp:
        name = parser.parse_str_literal(" (the knob name)")
        parser.parse_keyword("id")
        knob_id = parser.parse_integer(allow_boolean=False)
        transform_types = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: StringAttr(parser.parse_identifier_or_str_literal()))
        args = parser.parse_comma_separated_list(parser.Delimiter.PAREN,
                                                 parser.parse_unresolved_operand)
        parser.parse_keyword("params")
        params_pos = parser.pos
        params = parser.parse_attribute()
        if not isinstance(params, DictionaryAttr):
            parser.raise_error("expected a dictionary of knob params", params_pos, parser.pos)
        properties: dict[str, Attribute] = {
            "id": IntegerAttr(knob_id, i64), "name": StringAttr(name),
            "transform_types": ArrayAttr(transform_types), "params": params}
        if parser.parse_optional_keyword("loc"):
            properties["loc"] = StringAttr(parser.parse_str_literal())
        attributes = parser.parse_optional_attr_dict_with_keyword()
        parser.parse_punctuation(":")
        types_pos = parser.pos
        function_type = parser.parse_function_type()
        operands = parser.resolve_operands(args, function_type.inputs.data, types_pos)
        return cls.create(operands=operands, result_types=function_type.outputs.data,
                          properties=properties,
                          attributes=attributes.data if attributes else {},
                          regions=[parser.parse_region()])


@irdl_op_definition
class DecisionTreeOp(IRDLOperation):
    """Management: picks the transform value from the runtime state.

    The thresholds and decisions are attributes, or SSA operands in tunable builds (loaded
    from the config table; thresholds have the state's type, decisions are indices):
    ```mlir
    %v = approx.decision_tree %s [37, 80] -> [1, 2, 4] "loop_perforate" : i32
    %v = approx.decision_tree %s [%t0, %t1] -> [%d0, %d1, %d2] "loop_perforate" : i32
    ```
    Integer thresholds are i64, float thresholds f64. The result is the decision of the leaf
    the state falls in: `decisions[i]` for `thresholds[i-1] <= state < thresholds[i]`.
    """

    name = "approx.decision_tree"

    state = operand_def(SignlessIntegerConstraint | AnyFloatConstr)
    threshold_values = var_operand_def()
    decision_values = var_operand_def(IndexType)
    index = result_def(IndexType)
    thresholds = opt_prop_def(ArrayAttr)
    decisions = opt_prop_def(ArrayAttr[IntegerAttr[I64]])
    transform_type = prop_def(StringAttr)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, state: SSAValue, thresholds: ArrayAttr | Sequence[SSAValue],
                 decisions: ArrayAttr | Sequence[SSAValue], transform_type: str | StringAttr):
        """Attribute form with two ArrayAttrs, SSA form with two sequences of values."""
        properties: dict[str, Attribute] = {"transform_type": StringAttr(transform_type)
                                            if isinstance(transform_type, str)
                                            else transform_type}
        operands: list[Sequence[SSAValue]] = []
        for key, given in (("thresholds", thresholds), ("decisions", decisions)):
            if isinstance(given, ArrayAttr):
                properties[key] = given
            operands.append(() if isinstance(given, ArrayAttr) else given)
        super().__init__(operands=[state, *operands], result_types=[IndexType()],
                         properties=properties)

    @property
    def is_ssa_form(self) -> bool:
        return self.thresholds is None and self.decisions is None

    def verify_(self) -> None:
        _verify_transform_type(self.transform_type.data)
        if self.is_ssa_form:
            _verify_decision_count(len(self.threshold_values), len(self.decision_values))
            if any(t.type != self.state.type for t in self.threshold_values):
                raise VerifyException(
                    f"threshold operands must have the state's type {self.state.type}")
            return
        if self.thresholds is None or self.decisions is None or self.threshold_values \
                or self.decision_values:
            raise VerifyException("thresholds and decisions must both be attributes or both "
                                  "be operands")
        _verify_tree_shape(_number_list(self.thresholds, "thresholds"),
                           [d.value.data for d in self.decisions])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.state)
        printer.print_string(" [")
        if self.is_ssa_form:
            printer.print_list(self.threshold_values, printer.print_operand)
            printer.print_string("] -> [")
            printer.print_list(self.decision_values, printer.print_operand)
        else:
            printer.print_list(self.thresholds or (), lambda t: _print_number(printer, t))
            printer.print_string("] -> [")
            printer.print_list(self.decisions or (), lambda d: _print_number(printer, d))
        printer.print_string("] ")
        printer.print_string_literal(self.transform_type.data)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.state.type)

    @classmethod
    def parse(cls, parser: Parser) -> DecisionTreeOp:
        state = parser.parse_unresolved_operand()

        def item() -> UnresolvedOperand | IntegerAttr | FloatAttr:
            return parser.parse_optional_unresolved_operand() or _parse_number(parser)

        lists_pos = parser.pos
        thresholds = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, item)
        parser.parse_punctuation("->")
        decisions = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, item)
        lists_end = parser.pos
        transform_type = parser.parse_str_literal(" (the transform type)")
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        state_type = parser.parse_type()
        items = thresholds + decisions
        if all(isinstance(i, UnresolvedOperand) for i in items):
            op = cls(parser.resolve_operand(state, state_type),
                     [parser.resolve_operand(t, state_type) for t in thresholds],
                     [parser.resolve_operand(d, IndexType()) for d in decisions],
                     transform_type)
        elif not any(isinstance(i, UnresolvedOperand) for i in items):
            op = cls(parser.resolve_operand(state, state_type), ArrayAttr(thresholds),
                     ArrayAttr(decisions), transform_type)
        else:
            parser.raise_error("thresholds and decisions must be all numbers or all operands",
                               lists_pos, lists_end)
        op.attributes |= attributes
        return op


@irdl_op_definition
class TransformOp(IRDLOperation):
    """Implementation: how to approximate the target that follows it in the knob body.

    ```mlir
    approx.transform "loop_perforate" 4     // static value
    approx.transform "loop_perforate" %v    // dynamic value (an index)
    ```
    """

    name = "approx.transform"

    dynamic_value = opt_operand_def(IndexType)
    transform_type = prop_def(StringAttr)
    transform_value = opt_prop_def(IntegerAttr[I64])

    traits = lazy_traits_def(lambda: (HasParent(KnobOp),))

    def __init__(self, transform_type: str | StringAttr, value: int | SSAValue):
        static = isinstance(value, int)
        properties: dict[str, Attribute] = {"transform_type": StringAttr(transform_type)
                                            if isinstance(transform_type, str)
                                            else transform_type}
        if static:
            properties["transform_value"] = IntegerAttr(value, i64)
        super().__init__(operands=[() if static else (value,)], properties=properties)

    def verify_(self) -> None:
        _verify_transform_type(self.transform_type.data)
        if (self.dynamic_value is None) == (self.transform_value is None):
            raise VerifyException(
                "approx.transform needs exactly one of transform_value and a dynamic operand")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.transform_type.data)
        if self.dynamic_value is not None:
            printer.print_string(" ")
            printer.print_operand(self.dynamic_value)
        if self.transform_value is not None:
            printer.print_string(f" {self.transform_value.value.data}")
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> TransformOp:
        transform_type = parser.parse_str_literal(" (the transform type)")
        operand = parser.parse_optional_operand(IndexType())
        op = cls(transform_type, operand if operand is not None else
                 parser.parse_integer(allow_boolean=False))
        op.attributes |= parser.parse_optional_attr_dict()
        return op


@irdl_op_definition
class TryOp(IRDLOperation):
    """Safety contract: when the check region yields false, recover.

    The check region yields one i1; the recovery region is empty for `recover = "exact"`
    (the exact target is re-run) and holds the recover call for a symbol:
    ```mlir
    approx.try recover exact { ... approx.yield %ok : i1 } {}
    approx.try recover @fallback { ... approx.yield %ok : i1 } { func.call ... approx.yield }
    ```
    """

    name = "approx.try"

    recover = prop_def(StringAttr | SymbolRefAttr)
    check = region_def("single_block")
    recovery = region_def()

    def __init__(self, recover: str | StringAttr | SymbolRefAttr, check: Region,
                 recovery: Region):
        super().__init__(properties={"recover": StringAttr(recover)
                                     if isinstance(recover, str) else recover},
                         regions=[check, recovery])

    def verify_(self) -> None:
        exact = isinstance(self.recover, StringAttr)
        if exact and self.recover.data != "exact":
            raise VerifyException(
                f"recover must be \"exact\" or a symbol, got \"{self.recover.data}\"")
        last = self.check.block.last_op
        if not isinstance(last, YieldOp) or [v.type for v in last.arguments] != [i1]:
            raise VerifyException("approx.try check region must end with approx.yield of one i1")
        blocks = list(self.recovery.blocks)
        if exact and blocks:
            raise VerifyException('recover = "exact" needs an empty recovery region')
        if not exact and (len(blocks) != 1 or not isinstance(blocks[0].last_op, YieldOp)
                          or blocks[0].last_op.arguments or blocks[0].args):
            raise VerifyException("a recover symbol needs a recovery region of one block "
                                  "without arguments ending with approx.yield of no values")

    def print(self, printer: Printer) -> None:
        printer.print_string(" recover ")
        if self.recover == StringAttr("exact"):
            printer.print_string("exact")
        else:
            printer.print_attribute(self.recover)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.check)
        printer.print_string(" ")
        if self.recovery.blocks:
            printer.print_region(self.recovery)
        else:
            printer.print_string("{}")

    @classmethod
    def parse(cls, parser: Parser) -> TryOp:
        parser.parse_keyword("recover")
        recover: StringAttr | SymbolRefAttr
        if parser.parse_optional_keyword("exact"):
            recover = StringAttr("exact")
        elif (text := parser.parse_optional_str_literal()) is not None:
            recover = StringAttr(text)
        else:
            recover = parser.parse_attribute()  # a symbol; the verifier checks the kind
        attributes = parser.parse_optional_attr_dict_with_keyword()
        op = cls(recover, parser.parse_region(), parser.parse_region())
        if attributes:
            op.attributes |= attributes.data
        return op


@irdl_op_definition
class YieldOp(AbstractYieldOperation[Attribute]):
    """Terminator of knob, check and recovery regions: `approx.yield %a, %b : f32, i1`."""

    name = "approx.yield"

    traits = traits_def(IsTerminator(), HasParent(KnobOp, TryOp))


Approx = Dialect("approx", [KnobOp, DecisionTreeOp, TransformOp, TryOp, YieldOp])

# The module attribute that marks an ML module (StableHLO functions inside approx knobs) and
# names its Python file: what tells `approxcc opt` to read it with the ML half's context.
ML_SOURCE_ATTR = "approx.ml_source"


def parse_loc(text: str) -> SourceLocation | None:
    """`file:line:col` → SourceLocation (the file may itself contain colons)."""
    file, _, rest = text.rpartition(":")
    file, _, line = file.rpartition(":")
    if not (file and line.isdigit() and rest.isdigit()):
        return None
    return SourceLocation(file, int(line), int(rest))


def enclosing_knob(op: Operation) -> KnobOp | None:
    current: Operation | None = op
    while current is not None and not isinstance(current, KnobOp):
        current = current.parent_op()
    return current


def knobs(module: ModuleOp) -> Iterator[KnobOp]:
    return (op for op in module.walk() if isinstance(op, KnobOp))


def verify_knobs(module: ModuleOp) -> None:
    """Verifies every approx op and module-level knob rules; failures become CompileErrors
    located at the (enclosing) knob's annotation."""
    for op in module.walk():
        if op.dialect_name() != "approx":
            continue
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as err:
            knob = enclosing_knob(op)
            where = f" in knob '{knob.knob_name.data}'" if knob else ""
            raise CompileError(f"'{op.name}'{where}: {err}",
                               knob.source_loc if knob else None) from None
    seen: dict[str, KnobOp] = {}
    for knob in knobs(module):
        name = knob.knob_name.data
        if first := seen.get(name):
            raise CompileError(f"duplicate knob name '{name}'", knob.source_loc,
                               [note("first defined here", first.source_loc)])
        seen[name] = knob


def make_knob(name: str, id: int, transform_type: str, params: DictionaryAttr, body: Block,
              loc: str | None, leading: Sequence[SSAValue] = ()) -> KnobOp:
    """Wraps `body` (a Block without arguments whose ops may use values defined outside it)
    into an `approx.knob`: `leading` (a dynamic knob's state) and then the free values become
    the knob's operands and block arguments, in first-use order. The caller inserts the op.

    `params` keys: `target` ("loop" | "statement" | "call" | "function"), `callee` (the
    called symbol of a "call" target), `values` (tuner domain, i64 array), `value`
    (configured static value), `thresholds` (threshold count of a dynamic knob), `range`
    ([lo, hi]), `variants` (func_substitute symbols), `dynamic` (unit: the first operand is
    the state); `decision_thresholds`/`decisions` hold a configured decision tree."""
    if not isinstance(body.last_op, YieldOp):
        body.add_op(YieldOp())
    free: list[SSAValue] = list(leading)
    for op in body.walk():
        for operand in op.operands:
            if not body.is_ancestor(operand.owner) and operand not in free:
                free.append(operand)
    for value in free:
        arg = body.insert_arg(value.type, len(body.args))
        value.replace_uses_with_if(arg, lambda use: body.is_ancestor(use.operation))
    properties: dict[str, Attribute] = {
        "id": IntegerAttr(id, i64),
        "name": StringAttr(name),
        "transform_types": ArrayAttr([StringAttr(transform_type)]),
        "params": params,
    }
    if loc is not None:
        properties["loc"] = StringAttr(loc)
    return KnobOp.create(operands=free, result_types=[v.type for v in body.last_op.arguments],
                         properties=properties, regions=[Region(body)])
