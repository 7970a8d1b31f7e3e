"""approx-apply-config: write a configuration (JSON) into the knobs' params, each value
checked against the knob's domain and its transform's (the registry's)."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from approxcc.config import load_config
from approxcc.diagnostics import CompileError
from approxcc.dialect import knobs, verify_knobs
from approxcc.dialect.settings import configured_params


@dataclass(frozen=True)
class ApplyConfigPass(ModulePass):
    name = "approx-apply-config"

    config: str
    # one translation unit of a program: knobs it lacks may be in other units (the driver
    # checks the whole program when it links)
    partial: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        verify_knobs(op)
        config = load_config(self.config)
        by_name = {knob.knob_name.data: knob for knob in knobs(op)}
        for name, setting in config.knobs.items():
            knob = by_name.get(name)
            if knob is None:
                if self.partial:
                    continue
                raise CompileError(f"unknown knob '{name}' in configuration", setting.loc)
            knob.params = configured_params(knob, setting)
