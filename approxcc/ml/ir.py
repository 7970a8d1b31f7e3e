"""The ML half in the approx dialect: StableHLO functions wrapped in `approx.knob` ops.

`approx_module(program)` exports every decorated function's exact computation with
`jax.export` (weights as arguments), parses the StableHLO into xDSL (StableHLO ops stay
unregistered, generic form) and wraps it in one public function per decorated function:

    func.func public @decode_step(%w0: tensor<...>, ..., %tokens: tensor<1x16xi32>,
                                  %pos: tensor<i32>, %retrieval_score: f32 {approx.state = ...}) {
      %r = approx.knob "llm" id 0 [func_substitute] (%retrieval_score, %w0, ...) params {...} {
        %r1 = approx.knob "llm_precision" id 1 [precision] (...) params {...} {
          %y = func.call @decode_step.exact(...)          // the StableHLO of the exact function
          approx.yield %y
        }
        approx.yield %r1
      }
      func.return %r
    }
    func.func private @decode_step.exact(...) attributes {approx.variant_of = "decode_step",
                                                          approx.choice = {...}}

Knobs nest in decorator order (the top decorator outermost); `values` are the knob's config
values; a dynamic knob's state is an `f32` argument of the public function (the runtime
computes it on the host from the registered state function). The ML passes (`ml/passes.py`)
add variant functions beside `@F.exact` and list them in each knob's `params.variants`.
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    Builtin,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    bf16,
    f16,
    f32,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.dialects.scf import Scf
from xdsl.ir import Attribute, Block, Region
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from approxcc.diagnostics import CompileError, SourceLocation
from approxcc.dialect import ML_SOURCE_ATTR, Approx, YieldOp, make_knob, verify_knobs
from approxcc.ml.approx import Knob
from approxcc.ml.program import DecoratedFunction, MLProgram

SOURCE_ATTR = ML_SOURCE_ATTR          # on the module: the Python file
FUNCTION_ATTR = "approx.ml_function"  # on a public function: its decorated function
VARIANT_OF = "approx.variant_of"      # on a variant function: its decorated function
CHOICE_ATTR = "approx.choice"         # on a variant function: knob name -> config value
KEPT_ATTR = "approx.kept_args"        # indices of (weights..., inputs...) it takes
STATE_ATTR = "approx.state"           # on the state argument of a dynamic knob


def ml_context() -> Context:
    """The approx dialect beside unregistered StableHLO ops (printed in generic form)."""
    ctx = Context(allow_unregistered=True)
    for dialect in (Builtin, func.Func, Arith, Scf, Approx):
        ctx.load_dialect(dialect)
    return ctx


@dataclass(frozen=True)
class ExportedVariant:
    text: str                   # StableHLO, generic form, jax's `@main` and its callees
    stored: list[Any]           # the weight arrays the variant takes (before kept filtering)
    kept: list[int]             # indices into (stored..., inputs...) of @main's arguments
    # jax's `jax.export.Exported` itself (its `serialize()` is the variant's XLA form)
    exported: Any = field(default=None, compare=False, repr=False)


def exact_choice(fn: DecoratedFunction) -> dict[str, int | None]:
    from approxcc.ml.transforms import exact_value

    return {k.name: exact_value(k, fn.weights) for k in fn.afn.knobs}


def export_variant(fn: DecoratedFunction, choice: Mapping[str, int | None]) -> ExportedVariant:
    """The StableHLO of one variant (`make_variant`), exported by jax with its weights as
    arguments. A variant jax cannot lower (bf16 through `jnp.linalg.solve`) is a diagnostic
    at the knob that makes it, not an internal error."""
    try:
        return _export(fn, tuple(sorted(choice.items())))
    except CompileError:
        raise
    except Exception as err:  # noqa: BLE001 - jax's lowering of what the knob asks for
        exact = exact_choice(fn)
        if dict(choice) == exact:
            raise  # the exact function exports (the program loaded): approxcc's bug
        labels = ",".join(f"{k.name}={knob_label(k, choice[k.name])}" for k in fn.afn.knobs
                          if choice.get(k.name) is not None)
        raise CompileError(f"variant <{labels}> of '{fn.name}' cannot be built: jax cannot "
                           f"lower it ({type(err).__name__}: {err})",
                           responsible_loc(fn, choice)) from None


def responsible_loc(fn: DecoratedFunction, choice: Mapping[str, int | None]
                    ) -> SourceLocation | None:
    """Where a variant's trouble points: the decorator of its first knob off exact (the
    function's, for the exact variant)."""
    exact = exact_choice(fn)
    off = [k for k in fn.afn.knobs if choice.get(k.name, exact[k.name]) != exact[k.name]]
    return off[0].loc if off else fn.afn.loc


@functools.lru_cache(maxsize=256)
def _export(fn: DecoratedFunction, choice: tuple[tuple[str, int | None], ...]) -> ExportedVariant:
    import jax
    import numpy as np
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib.mlir import ir as jax_ir

    from approxcc.ml.transforms import make_variant

    variant = make_variant(fn.afn, fn.weights, fn.inputs, dict(choice))
    structs = [jax.ShapeDtypeStruct(np.shape(a), a.dtype) for a in variant.stored]
    in_structs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in fn.inputs]
    exported = jax.export.export(jax.jit(variant.fn))(structs, *in_structs)
    # xDSL parses the generic form of unregistered (StableHLO) ops only.
    with jax_mlir.make_ir_context():
        parsed = jax_ir.Module.parse(exported.mlir_module())
        parsed.operation.walk(_known_broadcast_dimensions)
        text = parsed.operation.get_asm(print_generic_op_form=True, enable_debug_info=False)
    return ExportedVariant(text, list(variant.stored), list(exported.module_kept_var_idx),
                           exported)


def _known_broadcast_dimensions(op: Any) -> Any:
    """A `stablehlo.dynamic_broadcast_in_dim` of a symbolic dimension (an input exported
    with one) says which operand dimensions expand: its size-1 ones, not its dynamic ones
    (jax.export broadcasts a symbolic dimension only to itself). IREE lowers it only then
    ("failed to legalize operation 'stablehlo.dynamic_broadcast_in_dim'")."""
    from jax._src.lib.mlir import ir as jax_ir

    op = op.opview if hasattr(op, "opview") else op
    if op.operation.name == "stablehlo.dynamic_broadcast_in_dim":
        shape = jax_ir.RankedTensorType(op.operands[0].type).shape
        dynamic = [i for i, d in enumerate(shape) if jax_ir.ShapedType.is_dynamic_size(d)]
        if dynamic and "known_nonexpanding_dimensions" not in op.attributes:
            attrs = op.operation.attributes
            attrs["known_expanding_dimensions"] = jax_ir.DenseI64ArrayAttr.get(
                [i for i, d in enumerate(shape) if d == 1])
            attrs["known_nonexpanding_dimensions"] = jax_ir.DenseI64ArrayAttr.get(dynamic)
    return jax_ir.WalkResult.ADVANCE


def variant_name(fn: DecoratedFunction, choice: Mapping[str, int | None]) -> str:
    """`F.exact`, or `F.knob.label...` over the knobs that are not exact (`decode_step.
    llm_precision.bf16`); the `approx.choice` attribute holds the config values."""
    exact = exact_choice(fn)
    parts = [f"{k.name}.{_LABEL_CHARS.sub('_', str(knob_label(k, choice[k.name])))}"
             for k in fn.afn.knobs if choice.get(k.name, exact[k.name]) not in
             (exact[k.name], None)]
    return f"{fn.name}.{'.'.join(parts) or 'exact'}"


_LABEL_CHARS = re.compile(r"[^A-Za-z0-9_]")


def knob_label(k: Knob, value: int) -> Any:
    """What a config value means: a `values` entry, or a substitute's function name."""
    if k.transform == "func_substitute":
        return "exact" if value == 0 else getattr(k.variants[value - 1], "__name__", value)
    return k.label(value)


def add_variant(module: ModuleOp, fn: DecoratedFunction, choice: Mapping[str, int | None]
                ) -> func.FuncOp:
    """Adds the variant's StableHLO as private functions of `module` (jax's `@main` becomes
    `@<variant_name>`, its callees `@<variant_name>.<callee>`), returns the variant."""
    name = variant_name(fn, choice)
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    exported = export_variant(fn, choice)
    try:
        jax_module = parse_ir(exported.text, f"<{name}>", jax_text=True)
    except CompileError as err:  # jax printed it: failing to read it back is our bug
        raise RuntimeError(f"cannot read the StableHLO of {name}: {err}") from None
    funcs = [op for op in jax_module.ops if isinstance(op, func.FuncOp)]
    renamed = {f.sym_name.data: name if f.sym_name.data == "main"
               else f"{name}.{f.sym_name.data}" for f in funcs}
    main: func.FuncOp | None = None
    for f in funcs:
        f.detach()
        f.sym_name = StringAttr(renamed[f.sym_name.data])
        f.sym_visibility = StringAttr("private")
        for op in f.walk():
            if isinstance(op, func.CallOp) and op.callee.root_reference.data in renamed:
                op.callee = SymbolRefAttr(renamed[op.callee.root_reference.data])
        if f.sym_name.data == name:
            main = f
            f.res_attrs = None
            f.attributes[VARIANT_OF] = StringAttr(fn.name)
            f.attributes[CHOICE_ATTR] = DictionaryAttr(
                {k: IntegerAttr(v, i64) for k, v in choice.items() if v is not None})
            f.attributes[KEPT_ATTR] = ArrayAttr([IntegerAttr(i, i64) for i in exported.kept])
        module.body.block.add_op(f)
    assert main is not None
    return main


def approx_module(program: MLProgram) -> ModuleOp:
    """Every decorated function of `program` as approx knobs around its exact StableHLO."""
    module = ModuleOp([], attributes={SOURCE_ATTR: StringAttr(str(program.path.resolve()))})
    knob_id = 0
    for fn in program.functions.values():
        exact = add_variant(module, fn, exact_choice(fn))
        # a func_substitute knob's `variants` are its substitutes, as in C
        substitutes = {k.name: [SymbolRefAttr(add_variant(
            module, fn, {**exact_choice(fn), k.name: i}).sym_name)
            for i in range(1, len(k.variants) + 1)]
            for k in fn.afn.knobs if k.transform == "func_substitute"}
        knob_id = _add_entry(module, fn, exact, knob_id, substitutes)
    try:
        verify(module)
    except CompileError as err:  # built here from what jax exported: our bug
        raise RuntimeError(err.diagnostic.message) from None
    return module


def _add_entry(module: ModuleOp, fn: DecoratedFunction, exact: func.FuncOp, knob_id: int,
               substitutes: Mapping[str, list[SymbolRefAttr]]) -> int:
    """The public function of `fn`: its knobs, innermost a call of the exact variant."""
    exported = export_variant(fn, exact_choice(fn))
    n_w = len(exported.stored)
    arg_types = [*exact_signature(exported, fn)]
    states = [k for k in fn.afn.knobs if k.state is not None]
    entry = Block(arg_types=[*arg_types, *([f32] * len(states))])
    body = Block()
    inner = func.CallOp(exact.sym_name.data, [entry.args[i] for i in exported.kept],
                        exact.function_type.outputs.data)
    body.add_ops([inner, YieldOp(*inner.results)])
    state_of = {k.name: entry.args[len(arg_types) + i] for i, k in enumerate(states)}
    knobs = list(fn.afn.knobs)
    ids = {k.name: knob_id + i for i, k in enumerate(knobs)}
    for k in reversed(knobs):
        leading = [state_of[k.name]] if k.name in state_of else []
        op = make_knob(k.name, ids[k.name], k.transform,
                       knob_params(k, substitutes.get(k.name, [])), body, str(k.loc), leading)
        body = Block()
        body.add_ops([op, YieldOp(*op.results)])
    outer = list(body.ops)[0]
    outer.detach()
    entry.add_ops([outer, func.ReturnOp(*outer.results)])
    arg_attrs = [DictionaryAttr({}) for _ in range(n_w + len(fn.inputs))] + [
        DictionaryAttr({STATE_ATTR: StringAttr(k.state or "")}) for k in states]
    public = func.FuncOp(fn.name, (entry.arg_types, exact.function_type.outputs.data),
                         Region(entry), arg_attrs=ArrayAttr(arg_attrs))
    public.attributes[FUNCTION_ATTR] = StringAttr(fn.name)
    module.body.block.insert_op_before(public, exact)
    return knob_id + len(knobs)


def exact_signature(exported: ExportedVariant, fn: DecoratedFunction) -> list[Attribute]:
    """The tensor types of (weights..., inputs...) of the exact variant."""
    return [tensor_type(a) for a in (*exported.stored, *fn.inputs)]


_ELEMENT = {"float32": f32, "bfloat16": bf16, "float16": f16, "int32": i32, "int8": i8,
            "bool": i1}


def tensor_type(a: Any) -> TensorType:
    """`a`'s tensor type; a symbolic dimension (an input exported with one) is `?`."""
    return TensorType(_ELEMENT[str(a.dtype)], [d if isinstance(d, int) else DYNAMIC_INDEX
                                               for d in a.shape])


def knob_params(k: Knob, substitutes: list[SymbolRefAttr]) -> DictionaryAttr:
    params: dict[str, Attribute] = {
        "target": StringAttr("function"),
        "values": ArrayAttr([IntegerAttr(v, i64) for v in k.domain]),
    }
    if substitutes:
        params["variants"] = ArrayAttr(substitutes)
    if k.state is not None:
        params["dynamic"] = UnitAttr()
        params["thresholds"] = IntegerAttr(k.thresholds, i64)
        params["range"] = ArrayAttr([IntegerAttr(int(x), i64) for x in k.range])
    return DictionaryAttr(params)


# xDSL 0.75 reads a hex float literal (`dense<0xFF800000> : tensor<f32>`, MLIR's spelling of
# -inf and of NaNs) as an integer converted to float: such attributes travel through xDSL
# verbatim, wrapped in an unregistered `#hexfloat.dense<"...">`, and are unwrapped when printed.
_HEX_DENSE = re.compile(r'dense<[^<>]*0x[^<>]*>\s*:\s*tensor<[^<>]*>')
_HEX_WRAPPED = re.compile(r'#hexfloat.dense<"([^"]*)">')


def _protect(text: str) -> str:
    return _HEX_DENSE.sub(lambda m: f'#hexfloat.dense<"{m.group().replace(chr(34), chr(39))}">',
                          text)


def _restore(text: str) -> str:
    return _HEX_WRAPPED.sub(lambda m: m.group(1).replace(chr(39), chr(34)), text)


# A tensor type outside string literals, without nested `<>` (an encoding keeps its type)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_TENSOR = re.compile(r'tensor<[^<>"]*>')


def _type_aliases(text: str) -> str:
    """`text` with each tensor type named once (`!approx_t0 = tensor<1x640xf32>`) and
    referred to by its alias: xDSL then parses a type once, not at every op that uses it
    (a decoder's variant: 10.0 s to 7.3 s). Lines move: for jax's text only, whose errors
    are ours."""
    aliases: dict[str, str] = {}

    def alias(m: re.Match[str]) -> str:
        return aliases.setdefault(m.group(), f"!approx_t{len(aliases)}")

    parts, last = [], 0
    for m in _STRING.finditer(text):
        parts += [_TENSOR.sub(alias, text[last:m.start()]), m.group()]
        last = m.end()
    parts.append(_TENSOR.sub(alias, text[last:]))
    return "".join(f"{a} = {t}\n" for t, a in aliases.items()) + "".join(parts)


def parse_ir(text: str, name: str, jax_text: bool = False) -> ModuleOp:
    """An ML module (approx ops, StableHLO in generic form); a syntax error is a
    CompileError at `name:line:col`. `jax_text`: printed by jax (its types are aliased
    first: `_type_aliases`)."""
    text = _protect(text)
    try:
        return Parser(ml_context(), _type_aliases(text) if jax_text else text,
                      name).parse_module()
    except ParseError as err:
        where = err.span.get_location()
        raise CompileError(err.msg, SourceLocation(name, where.line, where.col)) from None


def verify(module: ModuleOp, name: str = "<ml module>") -> None:
    """Verifies the approx ops and the functions holding them. Not jax's StableHLO: xDSL
    treats every unregistered op as a possible symbol table, so a `func.call` inside a
    `stablehlo.while` would not resolve (jax verified that code when it exported it)."""
    verify_knobs(module)
    try:
        for op in module.ops:
            if FUNCTION_ATTR in op.attributes:
                op.verify()
    except VerifyException as err:
        raise CompileError(f"{name}: invalid IR: {err}") from None


def print_ir(module: ModuleOp) -> str:
    out = io.StringIO()
    Printer(stream=out).print_op(module)
    return _restore(f"{out.getvalue()}\n")


def emit_approx_mlir(path: str) -> str:
    """`approxcc -S -emit-mlir model.py`: the program's approx IR, printed."""
    from approxcc.ml.program import load_program, user_errors

    with user_errors(path):
        return print_ir(approx_module(load_program(path)))
