"""The approx passes by name, and pipeline parsing (`a,b{opt=val},c`)."""

from __future__ import annotations

import re
from collections.abc import Mapping

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
