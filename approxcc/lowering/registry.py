"""The approx passes by name, and pipeline parsing (`a,b{opt=val},c`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Region
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import parse_pipeline as parse_arg_specs
from xdsl.utils.exceptions import ArgSpecParseError

from approxcc.diagnostics import CompileError
from approxcc.lowering.apply_config import ApplyConfigPass
from approxcc.lowering.bind_runtime import BindRuntimePass
from approxcc.lowering.codegen import CodegenAttributesPass, DebugLocationsPass
from approxcc.lowering.emit_management import EmitManagementPass
from approxcc.lowering.finalize import FinalizePass
from approxcc.lowering.lower_decision_tree import LowerDecisionTreePass
from approxcc.lowering.lower_try import LowerTryPass
from approxcc.lowering.transform import TransformPass
from approxcc.lowering.tunable import TunablePass

PASSES: dict[str, type[ModulePass]] = {
    p.name: p for p in (ApplyConfigPass, EmitManagementPass, TransformPass, FinalizePass,
                        LowerTryPass, BindRuntimePass, LowerDecisionTreePass, TunablePass,
                        CodegenAttributesPass, DebugLocationsPass)
}

# The passes that change every function; the others rewrite only what is inside knobs.
EVERY_FUNCTION = frozenset({CodegenAttributesPass.name, DebugLocationsPass.name})

# The release pipeline after the (optional) approx-apply-config, and the tunable pipeline
# (one binary, configured at run time through APPROX_CONFIG); docs/approx-ir.md §4.
DEFAULT_PIPELINE = ("approx-lower-try,approx-emit-management,approx-lower-decision-tree,"
                    "approx-bind-runtime,approx-transform,approx-finalize")
TUNABLE_PIPELINE = ("approx-lower-try,approx-emit-management,approx-tunable,"
                    "approx-lower-decision-tree,approx-bind-runtime,approx-transform,"
                    "approx-finalize")

# xDSL's pipeline lexer takes identifiers, numbers or quoted strings as option values;
# quote anything else (`config=dir/c.json`), as mlir-opt accepts such values bare.
_BARE_VALUE = re.compile(r'=([^",{}\s]+)')
_XDSL_VALUE = re.compile(r"[A-Za-z0-9_-]+|[-+]?[0-9]+(\.[0-9]*([eE][-+]?[0-9]+)?)?")


def _quote_values(text: str) -> str:
    def quote(m: re.Match[str]) -> str:
        value = m.group(1)
        return m.group() if _XDSL_VALUE.fullmatch(value) else f'="{value}"'

    return _BARE_VALUE.sub(quote, text)


def parse_pipeline(text: str, extra: Mapping[str, type[ModulePass]] | None = None
                   ) -> list[ModulePass]:
    """The passes of `text`; `extra` adds passes by name (the ML passes, approxcc.ml)."""
    known = {**PASSES, **(extra or {})}
    try:
        specs = list(parse_arg_specs(_quote_values(text)))
    except ArgSpecParseError as err:  # a BaseException, not an Exception
        raise CompileError(f"invalid pass pipeline '{text}': {err}") from None
    passes: list[ModulePass] = []
    for spec in specs:
        if spec.name not in known:
            raise CompileError(f"unknown pass '{spec.name}' (available: {', '.join(known)})")
        try:
            passes.append(known[spec.name].from_spec(spec))
        except ValueError as err:
            raise CompileError(f"pass '{spec.name}': {err}") from None
    return passes


def default_pipeline(config: str | None = None, tunable: bool = False) -> list[ModulePass]:
    """The release pipeline (approx-apply-config first when a configuration is given), or
    the tunable one, which takes its configuration at run time instead."""
    if tunable:
        if config:
            raise CompileError("a tunable build reads its configuration at run time "
                               "(APPROX_CONFIG), not at compile time")
        return parse_pipeline(TUNABLE_PIPELINE)
    apply_config: list[ModulePass] = [ApplyConfigPass(config)] if config else []
    return apply_config + parse_pipeline(DEFAULT_PIPELINE)


@contextmanager
def knob_free_bodies_hidden(module: ModuleOp) -> Iterator[None]:
    """While the knob passes run, the bodies of the functions (and global initialisers)
    holding no approx op are out of the module: each pass walks the module several times,
    and a unit compiled whole (-fapprox-mlir=all) is mostly such functions. The ops stay,
    bodiless, so that symbols still resolve and types still compare."""
    hidden: list[tuple[Region, Region]] = []
    for op in module.body.block.ops:
        for region in op.regions:
            if region.blocks and not any(o.dialect_name() == "approx" for o in region.walk()):
                holder = Region()
                region.move_blocks(holder)
                hidden.append((holder, region))
    try:
        yield
    finally:
        for holder, region in hidden:
            holder.move_blocks(region)


def apply_passes(module: ModuleOp, passes: Sequence[ModulePass],
                 before: Callable[[ModulePass], None] = lambda p: None) -> None:
    """Runs `passes` over `module` in order, the knob passes on the functions holding knobs
    only (`before` is called with each pass first)."""
    ctx = Context()
    knob_passes = [p for p in passes if p.name not in EVERY_FUNCTION]
    with knob_free_bodies_hidden(module):
        for p in knob_passes:
            before(p)
            p.apply(ctx, module)
    for p in passes:
        if p.name in EVERY_FUNCTION:
            before(p)
            p.apply(ctx, module)
