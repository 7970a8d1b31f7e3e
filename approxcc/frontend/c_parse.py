"""Parse one C/C++ translation unit with libclang: clang's own errors become our diagnostics."""

from __future__ import annotations

from pathlib import Path

from clang.cindex import Diagnostic as ClangDiagnostic
from clang.cindex import Index, TranslationUnit, TranslationUnitLoadError
from xdsl.dialects.builtin import ModuleOp

from approxcc.annotations import scan_annotations
from approxcc.diagnostics import CompileError, SourceLocation
from approxcc.frontend.c_emitter import ModuleEmitter
from approxcc.frontend.c_types import UnsupportedType


def parse(path: str, clang_args: list[str]) -> TranslationUnit:
    lang = ["-x", "c++"] if Path(path).suffix in (".cc", ".cpp", ".cxx", ".C") else []
    try:
        tu = Index.create().parse(path, args=lang + clang_args,
                                  options=TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
    except TranslationUnitLoadError:
        raise CompileError(f"cannot parse '{path}'") from None
    for d in tu.diagnostics:
        if d.severity >= ClangDiagnostic.Error:
            loc = d.location
            where = SourceLocation(loc.file.name, loc.line, loc.column) if loc.file else None
            raise CompileError(d.spelling, where)
    return tu


def c_to_mlir(path: str, clang_args: list[str]) -> ModuleOp:
    """C/C++ source → MLIR module with approx.knob ops around the annotated statements."""
    try:
        source = Path(path).read_text()
    except OSError as e:
        raise CompileError(f"no such file or directory: '{path}'") from e
    annotations = scan_annotations(path, source)
    tu = parse(path, clang_args)
    try:
        return ModuleEmitter(tu.cursor, tu.spelling, annotations).emit()
    except UnsupportedType as e:
        raise CompileError(f"type '{e}' is not supported by the approxcc C frontend yet") from e
