"""What the command line asks of the code generated for the functions MLIR compiles, as
clang's codegen gives it to every function (the driver adds these passes last):

* approx-codegen-attributes: LLVM function attributes on every function the module defines.
  `sanitize=address` (or `thread`): the sanitizer pass the driver runs with `opt` instruments
  only the functions so marked (-fsanitize=); `frame_pointer=all|non-leaf|none`
  (-fno-omit-frame-pointer, ...); `stack_protector=ssp|sspstrong|sspreq`
  (-fstack-protector, -strong, -all).
* approx-debug-locations: every op without a source location gets the nearest one before
  it (its enclosing or preceding op's), a function without one the module's: `-g` line
  tables (the locations that the approx passes' new ops lack would otherwise name the
  intermediate .mlir file, and a call without one breaks LLVM's debug-info verifier).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import ArrayAttr, LocationAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass

from approxcc.diagnostics import CompileError

SANITIZE_ATTRIBUTES = {"address": "sanitize_address", "thread": "sanitize_thread"}
FRAME_POINTERS = ("all", "non-leaf", "none")
STACK_PROTECTORS = ("ssp", "sspstrong", "sspreq")


def _defined_functions(module: ModuleOp) -> list[func.FuncOp | llvm.FuncOp]:
    return [op for op in module.ops
            if isinstance(op, func.FuncOp | llvm.FuncOp) and op.body.blocks]


@dataclass(frozen=True)
class CodegenAttributesPass(ModulePass):
    name = "approx-codegen-attributes"

    sanitize: str = ""
    frame_pointer: str = ""
    stack_protector: str = ""

    def attributes(self) -> list[Attribute]:
        """The `passthrough` entries: a name, or a [key, value] pair."""
        for value, allowed, option in ((self.sanitize, SANITIZE_ATTRIBUTES, "sanitize"),
                                       (self.frame_pointer, FRAME_POINTERS, "frame_pointer"),
                                       (self.stack_protector, STACK_PROTECTORS,
                                        "stack_protector")):
            if value and value not in allowed:
                raise CompileError(f"{self.name}: invalid {option} '{value}' (expected "
                                   f"{', '.join(allowed)})")
        out: list[Attribute] = []
        if self.sanitize:
            out.append(StringAttr(SANITIZE_ATTRIBUTES[self.sanitize]))
        if self.stack_protector:
            out.append(StringAttr(self.stack_protector))
        if self.frame_pointer:
            out.append(ArrayAttr([StringAttr("frame-pointer"), StringAttr(self.frame_pointer)]))
        return out

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        extra = self.attributes()
        if not extra:
            return
        for fn in _defined_functions(op):
            if isinstance(fn, llvm.FuncOp):
                old = list(fn.passthrough.data) if fn.passthrough else []
                fn.passthrough = ArrayAttr(old + extra)
            else:  # func-to-llvm makes it the llvm.func's
                had = fn.attributes.get("passthrough")
                old = list(had.data) if isinstance(had, ArrayAttr) else []
                fn.attributes["passthrough"] = ArrayAttr(old + extra)


def _fill(op: Operation, inherited: LocationAttr) -> None:
    """Locations for `op`'s regions: each op without one takes the last one before it."""
    for region in op.regions:
        for block in region.blocks:
            current = inherited
            for inner in block.ops:
                if isinstance(inner.location, UnknownLoc):
                    inner.location = current
                else:
                    current = inner.location
                _fill(inner, current)


@dataclass(frozen=True)
class DebugLocationsPass(ModulePass):
    name = "approx-debug-locations"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in _defined_functions(op):
            if isinstance(fn.location, UnknownLoc):
                fn.location = next((o.location for o in fn.walk()
                                    if not isinstance(o.location, UnknownLoc)), op.location)
            _fill(fn, fn.location)
