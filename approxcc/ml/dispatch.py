"""A function's state-driven knobs as a dispatch inside one module (`stablehlo.case`).

For one choice of the static knobs, `add_dispatch` adds a private function that takes the
weights of every variant it can run (concatenated, in branch order), the decorated function's
inputs, and per dynamic knob its state (`tensor<f32>`), its thresholds (`tensor<Txf32>`) and
its decisions (`tensor<(T+1)xi32>`, each the position of a config value in the knob's
`approx.dispatch_values`). It evaluates each decision tree as C does (leaf i = the number of
thresholds <= the state), flattens the leaves' positions row-major into one branch index and
runs that branch's variant under `stablehlo.case`:

    func.func private @decode_step.exact.dispatch(%w..., %tokens, %pos, %s0: tensor<f32>,
        %t0: tensor<1xf32>, %d0: tensor<2xi32>) attributes {approx.dispatch_of = "decode_step",
        approx.choice = {...static...}, approx.dispatch_knobs = ["llm"],
        approx.dispatch_values = [[0, 1]], approx.branches = [@decode_step.exact, ...]} {
      ... "stablehlo.compare"(%t0, %s0) LE ... "stablehlo.reduce" ... "stablehlo.dynamic_slice"
      %r = "stablehlo.case"(%branch) ({ func.call @decode_step.exact(...) }, { ... })
    }

Thresholds and decisions are arguments, not constants, so one build serves every
configuration the runtime is given. IREE 3.13 compiles `stablehlo.case` (and
`scf.index_switch`) for llvm-cpu, CUDA and ROCm; the body is written in StableHLO's pretty
form and verified by jax's MLIR before it joins the xDSL module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    i64,
)
from xdsl.ir import Attribute

from approxcc.ml.ir import CHOICE_ATTR, parse_ir

DISPATCH_OF = "approx.dispatch_of"        # on a dispatch function: its decorated function
KNOBS_ATTR = "approx.dispatch_knobs"      # the dynamic knobs it dispatches on, in order
VALUES_ATTR = "approx.dispatch_values"    # per knob, the config values of its positions
BRANCHES_ATTR = "approx.branches"         # the variant of each branch index


@dataclass(frozen=True)
class Branch:
    variant: func.FuncOp        # its leading `n_weights` arguments are weights, then inputs
    n_weights: int
    input_args: list[int]       # the decorated function's inputs it takes, in order


def dispatch_name(static_variant: str) -> str:
    return f"{static_variant}.dispatch"


def add_dispatch(module: ModuleOp, fn_name: str, name: str,
                 static: Mapping[str, int | None], knobs: Sequence[tuple[str, int]],
                 values: Sequence[Sequence[int | None]],
                 branches: Sequence[Branch], inputs: Sequence[Attribute]) -> func.FuncOp:
    """Adds `@name`, dispatching over `branches` (the variants of the product of `values`,
    row-major); `knobs` are (name, thresholds) of the dynamic knobs; `inputs` the types of
    the decorated function's inputs."""
    outs = [str(t) for t in branches[0].variant.function_type.outputs.data]
    xs = [f"%x{i}" for i in range(len(inputs))]
    args: list[str] = []
    calls = []
    for b, br in enumerate(branches):
        types = [str(t) for t in br.variant.function_type.inputs.data]
        weights = [f"%w{b}_{i}" for i in range(br.n_weights)]
        args += [f"{w}: {t}" for w, t in zip(weights, types, strict=False)]
        calls.append((br.variant.sym_name.data, [*weights, *(xs[i] for i in br.input_args)],
                      types))
    args += [f"{x}: {t}" for x, t in zip(xs, inputs, strict=True)]
    body = ['%zero = stablehlo.constant dense<0> : tensor<i32>']
    branch, stride = "%zero", 1
    for k in reversed(range(len(knobs))):
        t = knobs[k][1]
        args += [f"%s{k}: tensor<f32>", f"%t{k}: tensor<{t}xf32>", f"%d{k}: tensor<{t + 1}xi32>"]
        body += [
            f"%sb{k} = stablehlo.broadcast_in_dim %s{k}, dims = [] : (tensor<f32>) -> "
            f"tensor<{t}xf32>",
            f"%le{k} = stablehlo.compare LE, %t{k}, %sb{k} : (tensor<{t}xf32>, "
            f"tensor<{t}xf32>) -> tensor<{t}xi1>",
            f"%li{k} = stablehlo.convert %le{k} : (tensor<{t}xi1>) -> tensor<{t}xi32>",
            f"%leaf{k} = stablehlo.reduce(%li{k} init: %zero) applies stablehlo.add across "
            f"dimensions = [0] : (tensor<{t}xi32>, tensor<i32>) -> tensor<i32>",
            f'%ds{k} = "stablehlo.dynamic_slice"(%d{k}, %leaf{k}) {{slice_sizes = '
            f'array<i64: 1>}} : (tensor<{t + 1}xi32>, tensor<i32>) -> tensor<1xi32>',
            f"%pos{k} = stablehlo.reshape %ds{k} : (tensor<1xi32>) -> tensor<i32>",
            f"%stride{k} = stablehlo.constant dense<{stride}> : tensor<i32>",
            f"%scaled{k} = stablehlo.multiply %pos{k}, %stride{k} : tensor<i32>",
            f"%branch{k} = stablehlo.add {branch}, %scaled{k} : tensor<i32>",
        ]
        branch, stride = f"%branch{k}", stride * len(values[k])
    results = ", ".join(outs)
    regions = []
    for callee, operands_, types in calls:
        operands = ", ".join(operands_)
        regions.append(f"{{\n    %o:{len(outs)} = func.call @{callee}({operands}) : "
                       f"({', '.join(types)}) -> ({results})\n"
                       f"    stablehlo.return {', '.join(f'%o#{i}' for i in range(len(outs)))}"
                       f" : {results}\n  }}")
    body.append(f'%r:{len(outs)} = "stablehlo.case"({branch}) ({", ".join(regions)}) : '
                f"(tensor<i32>) -> ({results})")
    body.append(f"return {', '.join(f'%r#{i}' for i in range(len(outs)))} : {results}")
    decls = [f"func.func private @{callee}({', '.join(types)}) -> ({results})"
             for callee, _, types in calls]
    text = "\n".join([*decls, f"func.func private @{name}({', '.join(args)}) -> ({results}) {{",
                      *(f"  {line}" for line in body), "}"])
    dispatch = _generic_function(text, name)
    dispatch.attributes[DISPATCH_OF] = StringAttr(fn_name)
    dispatch.attributes[CHOICE_ATTR] = DictionaryAttr(
        {k: IntegerAttr(v, i64) for k, v in static.items() if v is not None})
    dispatch.attributes[KNOBS_ATTR] = ArrayAttr([StringAttr(k) for k, _ in knobs])
    dispatch.attributes[VALUES_ATTR] = ArrayAttr([ArrayAttr([_value(v) for v in vs])
                                                  for vs in values])
    dispatch.attributes[BRANCHES_ATTR] = ArrayAttr([SymbolRefAttr(b.variant.sym_name)
                                                    for b in branches])
    module.body.block.add_op(dispatch)
    return dispatch


def _value(v: int | None) -> Attribute:
    return IntegerAttr(v, i64) if v is not None else StringAttr("none")


def dispatches_of(module: ModuleOp, fn_name: str) -> list[func.FuncOp]:
    """The dispatch functions of the decorated function `fn_name`, in module order."""
    return [op for op in module.ops if isinstance(op, func.FuncOp)
            and getattr(op.attributes.get(DISPATCH_OF), "data", None) == fn_name]


def _generic_function(text: str, name: str) -> func.FuncOp:
    """`text` (pretty StableHLO) verified by jax's MLIR, printed generic, read by xDSL."""
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib.mlir import ir as jax_ir

    with jax_mlir.make_ir_context():
        generic = jax_ir.Module.parse(text).operation.get_asm(print_generic_op_form=True,
                                                              enable_debug_info=False)
    parsed = parse_ir(generic, f"<{name}>", jax_text=True)
    found = next(op for op in parsed.ops if isinstance(op, func.FuncOp)
                 and op.sym_name.data == name)
    found.detach()
    return found


def dispatch_values(dispatch: func.FuncOp) -> list[list[int | None]]:
    """Per dynamic knob, the config value of each decision position."""
    attr = dispatch.attributes[VALUES_ATTR]
    assert isinstance(attr, ArrayAttr)
    return [[v.value.data if isinstance(v, IntegerAttr) else None for v in vs.data]
            for vs in attr.data if isinstance(vs, ArrayAttr)]
