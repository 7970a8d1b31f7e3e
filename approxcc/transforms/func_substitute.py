"""func_substitute: call an approximate implementation instead of the exact function.

Value 0 runs the exact function, k runs `params.variants[k-1]`. A `"call"` knob substitutes
the callee of its one call of `params.callee`; a `"function"` knob (the whole body of a
function) substitutes the function, for every caller. A dynamic
value becomes an `scf.index_switch` with one case per variant and the exact code as its
default (value 0, and any value outside the knob's domain). Every variant must have the
exact function's type (checked at approx-bind-runtime).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from xdsl.dialects import func, llvm, scf
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, StringAttr, SymbolRefAttr, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from approxcc.dialect import KnobOp, TransformOp, YieldOp
from approxcc.dialect.symbols import resolve, signature
from approxcc.dialect.targets import (
    knob_error,
    knob_target,
    target_call,
    target_ops,
    transform_knob,
)
from approxcc.registry import KnobDomain, MLKnob, TransformSpec, register


def exact_function(knob: KnobOp) -> SymbolRefAttr | None:
    """The function a func_substitute knob replaces: `params.callee` for a call site, the
    enclosing function for a function definition."""
    target = knob.param("target")
    if isinstance(target, StringAttr) and target.data == "function":
        enclosing = knob.parent_op()
        return SymbolRefAttr(enclosing.sym_name) if isinstance(enclosing, func.FuncOp) else None
    callee = knob.param("callee")
    return callee if isinstance(callee, SymbolRefAttr) else None


def check_variants(knob: KnobOp) -> list[func.FuncOp | llvm.FuncOp]:
    """The functions of `params.variants`, each checked to have the exact function's type."""
    exact_name = exact_function(knob)
    exact = resolve(knob, exact_name) if exact_name else None
    if exact is None:
        raise knob_error(knob, "func_substitute: no exact function to substitute (a knob with "
                               "target \"function\" directly in a func.func, or target "
                               "\"call\" and params.callee)")
    variants = knob.param("variants")
    resolved: list[func.FuncOp | llvm.FuncOp] = []
    for variant in variants if isinstance(variants, ArrayAttr) else ():
        function = resolve(knob, variant)
        name = variant.string_value()
        if function is None:
            raise knob_error(knob, f"func_substitute: variant '{name}' is not declared in the "
                                   "module")
        if signature(function) != signature(exact):
            raise knob_error(knob, f"func_substitute: variant '{name}' has type "
                                   f"{signature(function)}, the exact function "
                                   f"'{exact.sym_name.data}' has type {signature(exact)}")
        resolved.append(function)
    return resolved



def function_arguments(knob: KnobOp) -> list[SSAValue]:
    """Inside a `"function"` knob, the block arguments that carry the enclosing function's
    arguments (captured here if the body does not use them)."""
    function = cast(func.FuncOp, knob.parent_op())  # check_variants found it
    block = knob.body.block
    inside: list[SSAValue] = []
    for arg in function.body.block.args:
        if arg in knob.args:
            inside.append(block.args[list(knob.args).index(arg)])
        else:
            knob.operands = [*knob.operands, arg]
            inside.append(block.insert_arg(arg.type, len(block.args)))
    return inside


def call_op(function: func.FuncOp | llvm.FuncOp, args: Sequence[SSAValue],
            result_types: Sequence[Attribute]) -> Operation:
    if isinstance(function, llvm.FuncOp):
        return llvm.CallOp(function.sym_name.data, *args,
                           return_type=result_types[0] if result_types else None)
    return func.CallOp(function.sym_name.data, args, result_types)


def _switch(value: SSAValue, exact: Block, variants: Sequence[func.FuncOp | llvm.FuncOp],
            args: Sequence[SSAValue], result_types: Sequence[Attribute]) -> scf.IndexSwitchOp:
    """`scf.index_switch value`: case k calls variants[k-1], default runs `exact` (which
    must end in the values to yield, as an scf.yield)."""
    cases: list[Region] = []
    for variant in variants:
        call = call_op(variant, args, result_types)
        cases.append(Region(Block([call, scf.YieldOp(*call.results)])))
    return scf.IndexSwitchOp(value, DenseArrayBase.from_list(i64, range(1, len(variants) + 1)),
                             Region(exact), cases, result_types)


class SubstituteFunction(RewritePattern):
    """Rewrites a func_substitute knob's call (or function body) to call the chosen variant."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, transform: TransformOp, rewriter: PatternRewriter, /) -> None:
        knob = transform_knob(transform)
        variants = check_variants(knob)
        value = transform.transform_value
        if value is not None and not 0 <= value.value.data <= len(variants):
            raise knob_error(knob, f"func_substitute: value {value.value.data} has no variant "
                                   f"(values are 0 to {len(variants)})")
        if value is not None and value.value.data == 0:  # the exact function
            rewriter.erase(transform)
            return
        if knob_target(knob) == "call":
            self._substitute_call(transform, variants, rewriter)
        else:  # "function": check_variants found no exact function for any other target
            self._substitute_body(transform, variants, rewriter)
        rewriter.erase(transform)

    @staticmethod
    def _substitute_call(transform: TransformOp, variants: Sequence[func.FuncOp | llvm.FuncOp],
                         rewriter: PatternRewriter) -> None:
        call = target_call(transform, "func_substitute")
        args, types = list(call.arguments), list(call.result_types)
        if transform.transform_value is not None:
            variant = variants[transform.transform_value.value.data - 1]
            rewriter.replace(call, call_op(variant, args, types))
            return
        exact = Block()
        switch = _switch(transform.dynamic_value, exact, variants, args, types)
        rewriter.insert(switch, InsertPoint.before(call))
        for old, new in zip(call.results, switch.results, strict=True):
            rewriter.replace_all_uses_with(old, new)
        call.detach()
        exact.add_ops([call, scf.YieldOp(*call.results)])

    @staticmethod
    def _substitute_body(transform: TransformOp, variants: Sequence[func.FuncOp | llvm.FuncOp],
                         rewriter: PatternRewriter) -> None:
        knob = transform_knob(transform)
        args = function_arguments(knob)
        body = target_ops(transform)
        terminator = cast(YieldOp, knob.body.block.last_op)  # verified
        types = [r.type for r in knob.res]
        if transform.transform_value is not None:
            call = call_op(variants[transform.transform_value.value.data - 1], args, types)
            rewriter.insert(call, InsertPoint.before(terminator))
            terminator.operands = call.results
            rewriter.notify_op_modified(terminator)
            for op in reversed(body):
                rewriter.erase(op)
            return
        exact = Block()
        switch = _switch(transform.dynamic_value, exact, variants, args, types)
        rewriter.insert(switch, InsertPoint.before(terminator))
        yielded = list(terminator.operands)
        terminator.operands = switch.results
        rewriter.notify_op_modified(terminator)
        for op in body:
            op.detach()
        exact.add_ops([*body, scf.YieldOp(*yielded)])


def _ml_label(v: Any) -> str | None:
    return None if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else \
        "must be 0 (exact) or k, the k-th variant"


register(TransformSpec(
    name="func_substitute",
    value_meaning="`0` = the exact function, `k` = the k-th entry of `variants(...)`",
    exact=0,
    targets=frozenset({"call", "function"}),
    domain=KnobDomain(least=0, per_variant=True),
    clauses=("variants",),
    requires=("variants",),
    bind=check_variants,
    pattern=SubstituteFunction(),
    ml=MLKnob(defaults=(), check=_ml_label, exact=0,
              meaning="`0` = exact, `k` = the k-th of `variants=[...]` (a function or "
                      "`approx.model(fn, params)`); default: all of them"),
))
