"""`approxcc opt`: parse MLIR, run approx passes, print the module (like mlir-opt)."""

from __future__ import annotations

import functools
import io
import sys
from collections.abc import Iterator
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.cf import Cf
from xdsl.dialects.func import Func
from xdsl.dialects.llvm import LLVM
from xdsl.dialects.math import Math
from xdsl.dialects.memref import MemRef
from xdsl.dialects.scf import Scf
from xdsl.ir import Attribute
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from approxcc.diagnostics import CompileError, SourceLocation, report
from approxcc.dialect import ML_SOURCE_ATTR, Approx, verify_knobs
from approxcc.frontend.llvm_ops import FRONTEND_OPS
from approxcc.lowering.registry import parse_pipeline

SPLIT_MARKER = "// -----"


def make_context() -> Context:
    ctx = Context()
    for dialect in (Builtin, Func, Arith, Scf, MemRef, LLVM, Math, Cf, Approx):
        ctx.load_dialect(dialect)
    for op in FRONTEND_OPS:  # upstream ops the C frontend emits that xDSL lacks
        ctx.load_op(op)
    return ctx


def parse_module(ctx: Context, text: str, name: str, line_offset: int = 0) -> ModuleOp:
    """Parses and verifies `text`; errors become CompileErrors at `name:line:col`."""
    try:
        module = Parser(ctx, text, name).parse_module()
    except ParseError as err:
        where = err.span.get_location()
        raise CompileError(err.msg, SourceLocation(name, where.line + line_offset,
                                                   where.col)) from None
    verify_knobs(module)
    try:
        module.verify()
    except VerifyException as err:
        raise CompileError(f"{name}: invalid IR: {err}") from None
    return module


def _chunks(text: str, split: bool) -> Iterator[tuple[str, int]]:
    """(chunk, line offset of its first line) pairs."""
    if not split:
        yield text, 0
        return
    offset = 0
    for chunk in text.split(SPLIT_MARKER):
        yield chunk, offset
        offset += chunk.count("\n")


class _ReusingPrinter(Printer):
    """Prints each distinct attribute once and reuses its text: a C unit's module repeats a
    few types and locations tens of thousands of times, which xDSL prints from scratch
    each time (most of the time spent printing)."""

    def __init__(self, stream: io.StringIO, generic: bool, debuginfo: bool) -> None:
        super().__init__(stream=stream, print_generic_format=generic,
                         print_debuginfo=debuginfo)
        self._texts: dict[Attribute, str] = {}

    def print_attribute(self, attribute: Attribute) -> None:
        try:
            text = self._texts.get(attribute)
        except TypeError:  # an attribute holding a mutable value has no hash
            return super().print_attribute(attribute)
        if text is None:
            text = self._texts[attribute] = self._printed(attribute)
        if "\n" in text:  # a multi-line value: indented where it is printed
            return super().print_attribute(attribute)
        self._current_column += len(text)
        self.stream.write(text)

    def _printed(self, attribute: Attribute) -> str:
        stream, column, line = self.stream, self._current_column, self._current_line
        self.stream = io.StringIO()
        try:
            super().print_attribute(attribute)
            return self.stream.getvalue()
        finally:
            self.stream, self._current_column, self._current_line = stream, column, line


def print_module(module: ModuleOp, generic: bool = False, debuginfo: bool = False) -> str:
    """The module as text; `generic`: the generic op form, which upstream mlir-opt reads;
    `debuginfo`: with the ops' source locations (-g)."""
    out = io.StringIO()
    _ReusingPrinter(out, generic, debuginfo).print_op(module)
    return f"{out.getvalue()}\n"


def _run(ctx: Context, chunk: str, name: str, offset: int, passes: list[ModulePass],
         print_ir_after_all: bool, generic: bool, debuginfo: bool = False) -> str:
    if ML_SOURCE_ATTR in chunk:  # an ML module (`approxcc -S -emit-mlir model.py`)
        from approxcc.ml import ir as ml_ir  # C builds never import the ML half

        ctx, module = ml_ir.ml_context(), ml_ir.parse_ir(chunk, name)
        ml_ir.verify(module, name)
        printed = ml_ir.print_ir
    else:
        module = parse_module(ctx, chunk, name, offset)
        printed = functools.partial(print_module, generic=generic, debuginfo=debuginfo)
    for p in passes:
        p.apply(ctx, module)
        if print_ir_after_all:
            print(f"// -----// IR Dump After {p.name} //----- //\n{printed(module)}",
                  file=sys.stderr)
    return printed(module)


def _ml_passes() -> dict[str, type[ModulePass]]:
    from approxcc.ml.passes import ML_PASSES

    return dict(ML_PASSES)


def run_opt(input_path: str, pipeline: str, print_ir_after_all: bool, split_input_file: bool,
            output: str, generic: bool = False, debuginfo: bool = False) -> int:
    """Runs `pipeline` over the input ("-" = stdin). With `split_input_file`, every chunk is
    processed even after an error (errors go to stderr, the status is then 1); otherwise a
    CompileError propagates to the caller."""
    # The ML passes (all named approx-ml-*) are loaded only when a pipeline names one.
    passes = parse_pipeline(pipeline, _ml_passes() if "approx-ml-" in pipeline else None)
    if input_path == "-":
        text, name = sys.stdin.read(), "<stdin>"
    else:
        try:
            text, name = Path(input_path).read_text(), input_path
        except OSError as err:
            raise CompileError(f"cannot read '{input_path}': {err.strerror}") from None
    ctx = make_context()
    results: list[str] = []
    status = 0
    for chunk, offset in _chunks(text, split_input_file):
        try:
            results.append(_run(ctx, chunk, name, offset, passes, print_ir_after_all,
                                generic, debuginfo))
        except CompileError as err:
            if not split_input_file:
                raise
            report(err.diagnostic)
            status = 1
    printed = f"{SPLIT_MARKER}\n".join(results)
    if output == "-":
        sys.stdout.write(printed)
    else:
        Path(output).write_text(printed)
    return status
