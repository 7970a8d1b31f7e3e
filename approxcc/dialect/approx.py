"""The `approx` dialect (ApproxMLIR, Table 1): knob, decision_tree, transform, try, yield."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from xdsl.dialects.builtin import (
    I64,
    AnyFloatConstr,
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    SignlessIntegerConstraint,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    i1,
    i64,
)
from xdsl.dialects.scf import ForOp
from xdsl.dialects.utils import AbstractYieldOperation
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
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
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator
from xdsl.utils.exceptions import VerifyException

from approxcc.annotations import EXACT_VALUE
from approxcc.diagnostics import CompileError, SourceLocation, note

# The registered transforms and the value that makes each one exact (no approximation): the
# annotation language's table. Adding a transform means adding it there and its pattern in
# approxcc/lowering.
TRANSFORMS: dict[str, int] = EXACT_VALUE


def _verify_transform_type(transform_type: str) -> None:
    if transform_type not in TRANSFORMS:
        raise VerifyException(
            f"unknown transform_type '{transform_type}' "
            f"(registered: {', '.join(TRANSFORMS)})")


def _int_list(attr: Attribute, what: str) -> list[int]:
    if not isinstance(attr, ArrayAttr) or not all(isinstance(a, IntegerAttr) for a in attr):
        raise VerifyException(f"{what} must be an array of integers")
    return [a.value.data for a in attr]


def _number_list(attr: Attribute, what: str) -> list[int | float]:
    if not isinstance(attr, ArrayAttr) or not all(isinstance(a, IntegerAttr | FloatAttr)
                                                  for a in attr):
        raise VerifyException(f"{what} must be an array of numbers")
    return [a.value.data for a in attr]


def _verify_increasing(values: Sequence[int | float], what: str) -> None:
    if any(a >= b for a, b in zip(values, values[1:], strict=False)):
        raise VerifyException(f"{what} must be strictly increasing, got {list(values)}")


def _verify_tree_shape(thresholds: Sequence[int | float], decisions: Sequence[int]) -> None:
    _verify_increasing(thresholds, "thresholds")
    if len(decisions) != len(thresholds) + 1:
        raise VerifyException(
            f"expected {len(thresholds) + 1} decisions for {len(thresholds)} thresholds, "
            f"got {len(decisions)}")


def _verify_params(params: DictionaryAttr) -> None:
    """Checks the knob's `params` dictionary (see the `make_knob` docstring for its keys)."""
    p = params.data
    unknown = set(p) - {"values", "value", "thresholds", "range", "variants", "dynamic",
                        "decision_thresholds", "decisions"}
    if unknown:
        raise VerifyException(f"unknown knob params: {', '.join(sorted(unknown))}")
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


@irdl_op_definition
class KnobOp(IRDLOperation):
    """Scope and tuner interface: wraps the approximable region."""

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
        for t in self.transform_types:
            _verify_transform_type(t.data)
        _verify_params(self.params)
        if "loop_perforate" in (t.data for t in self.transform_types) and not any(
                isinstance(op, ForOp) for op in block.ops):
            raise VerifyException("a loop_perforate knob must contain an scf.for at the top "
                                  "level of its body")


@irdl_op_definition
class DecisionTreeOp(IRDLOperation):
    """Management: picks the transform value from the runtime state."""

    name = "approx.decision_tree"

    state = operand_def(SignlessIntegerConstraint | AnyFloatConstr)
    index = result_def(IndexType)
    thresholds = prop_def(ArrayAttr)
    decisions = prop_def(ArrayAttr[IntegerAttr[I64]])
    transform_type = prop_def(StringAttr)

    def verify_(self) -> None:
        _verify_tree_shape(_number_list(self.thresholds, "thresholds"),
                           [d.value.data for d in self.decisions])
        _verify_transform_type(self.transform_type.data)


@irdl_op_definition
class TransformOp(IRDLOperation):
    """Implementation: how to approximate the target that follows it in the knob body."""

    name = "approx.transform"

    dynamic_value = opt_operand_def(IndexType)
    transform_type = prop_def(StringAttr)
    transform_value = opt_prop_def(IntegerAttr[I64])

    traits = lazy_traits_def(lambda: (HasParent(KnobOp),))

    def verify_(self) -> None:
        _verify_transform_type(self.transform_type.data)
        if (self.dynamic_value is None) == (self.transform_value is None):
            raise VerifyException(
                "approx.transform needs exactly one of transform_value and a dynamic operand")


@irdl_op_definition
class TryOp(IRDLOperation):
    """Safety contract: when the check region yields false, recover."""

    name = "approx.try"

    recover = prop_def(StringAttr | SymbolRefAttr)
    check = region_def("single_block")

    def verify_(self) -> None:
        if isinstance(self.recover, StringAttr) and self.recover.data != "exact":
            raise VerifyException(
                f"recover must be \"exact\" or a symbol, got \"{self.recover.data}\"")
        last = self.check.block.last_op
        if not isinstance(last, YieldOp) or [v.type for v in last.arguments] != [i1]:
            raise VerifyException("approx.try check region must end with approx.yield of one i1")


@irdl_op_definition
class YieldOp(AbstractYieldOperation[Attribute]):
    name = "approx.yield"

    traits = traits_def(IsTerminator(), HasParent(KnobOp, TryOp))


Approx = Dialect("approx", [KnobOp, DecisionTreeOp, TransformOp, TryOp, YieldOp])


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
              loc: str | None) -> KnobOp:
    """Wraps `body` (a Block without arguments whose ops may use values defined outside it)
    into an `approx.knob`: the free values become the knob's operands and block arguments,
    in first-use order. The caller inserts the returned op.

    `params` keys: `values` (tuner domain, i64 array), `value` (configured static value),
    `thresholds` (threshold count of a dynamic knob), `range` ([lo, hi]), `variants`
    (func_substitute symbols), `dynamic` (unit); `decision_thresholds`/`decisions` hold a
    configured decision tree."""
    if not isinstance(body.last_op, YieldOp):
        body.add_op(YieldOp())
    free: list[SSAValue] = []
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
