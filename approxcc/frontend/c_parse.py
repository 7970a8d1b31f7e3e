"""Parse one C/C++ translation unit with libclang: clang's own errors become our diagnostics."""

from __future__ import annotations

import ctypes
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from clang import cindex
from clang.cindex import CursorKind, Index, TranslationUnit, TranslationUnitLoadError
from clang.cindex import Diagnostic as ClangDiagnostic
from xdsl.dialects.builtin import ModuleOp

from approxcc.annotations import Annotation, scan_annotations
from approxcc.diagnostics import CompileError, SourceLocation, warn
from approxcc.frontend import tu_split
from approxcc.frontend.c_types import UnsupportedType
from approxcc.frontend.clang_eval import skipped_lines
from approxcc.frontend.clause_exprs import ClauseSites
from approxcc.frontend.module_emitter import ModuleEmitter

CXX_SUFFIXES = (".cc", ".cpp", ".cxx", ".C")
SOURCE_ERRORS = "surrogateescape"  # how source text holds bytes that are not UTF-8
# One compiler identity for both halves of a file: the system compiler (gcc) compiles the
# code without annotations, so the parse does not claim to be clang either, and `#ifdef
# __clang__` code (struct layouts, inline assembly, attributes) reads alike on both sides.
# clang's __GNUC__ (4.2) stays: glibc's and the intrinsics' headers need it to parse.
SYSTEM_COMPILER_IDENTITY = ("-U__clang__", "-U__clang_major__", "-U__clang_minor__",
                            "-U__clang_patchlevel__", "-U__clang_version__")


@dataclass
class CompiledUnit:
    """What the frontend makes of one translation unit: the MLIR module, and the remainder
    source the system compiler compiles (empty when the module holds everything; the
    source's bytes that are not UTF-8 in it as read_source gives them: write it with
    `errors=SOURCE_ERRORS`)."""

    module: ModuleOp
    remainder: str
    tu: TranslationUnit  # the files it includes make the dependency files (driver/depfile.py)


def _libclang_text(self: cindex.c_interop_string) -> str | None:
    raw = super(ctypes.c_char_p, self).value
    return None if raw is None else raw.decode(errors=SOURCE_ERRORS)


# cindex decodes libclang's strings as strict UTF-8; a token's spelling is source bytes
cindex.c_interop_string.value = property(_libclang_text)  # type: ignore[assignment]


def read_source(path: str) -> str:
    """A C/C++ source as gcc reads it: bytes, UTF-8 where they are; any other byte (a
    Latin-1 comment or string) is a lone surrogate (SOURCE_ERRORS), which encoding with the
    same error handler turns back into that byte."""
    return Path(path).read_bytes().decode(errors=SOURCE_ERRORS)


def is_cplusplus(path: str) -> bool:
    return Path(path).suffix in CXX_SUFFIXES


def parse(path: str, clang_args: list[str], source: str | None = None,
          origin: Callable[[int, int], SourceLocation | None] | None = None) -> TranslationUnit:
    """Parse `path` (or the in-memory `source` standing for it); `origin` maps positions of
    text the frontend inserted back to where the user wrote it."""
    # gcc takes bytes that are not UTF-8 in comments and strings, and K&R definitions,
    # silently (the user's -W flags, after these, still ask for clang's warnings)
    lang = (["-x", "c++"] if is_cplusplus(path) else []) + \
        ["-Wno-invalid-source-encoding", "-Wno-deprecated-non-prototype"]
    unsaved = [(path, source.encode(errors=SOURCE_ERRORS))] if source is not None else None
    try:
        tu = Index.create().parse(path, args=[*lang, *SYSTEM_COMPILER_IDENTITY, *clang_args,
                                              *_SYSTEM_COMPILERS_TO_JUDGE],
                                  unsaved_files=unsaved,
                                  options=TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
    except TranslationUnitLoadError:
        raise CompileError(f"cannot parse '{path}'") from None
    for d in tu.diagnostics:
        loc = d.location
        where = SourceLocation(loc.file.name, loc.line, loc.column) if loc.file else None
        if d.severity >= ClangDiagnostic.Error:
            if where and origin and where.file == tu.spelling:
                where = origin(where.line, where.col) or where
            raise CompileError(d.spelling, where, flag=d.option or None)
        if d.severity == ClangDiagnostic.Warning and source is None and \
                not _approx_pragma(d.option, where):
            warn(d.spelling, where, d.option or None)  # once: the first parse
    return tu


# The -W flags are the system compiler's to judge (gcc's -Wlogical-op is unknown to clang)
_SYSTEM_COMPILERS_TO_JUDGE = ("-Wno-unknown-warning-option",)


def _approx_pragma(option: str, where: SourceLocation | None) -> bool:
    """Whether clang's "unknown pragma" warning is about an approx pragma (ours)."""
    if option != "-Wunknown-pragmas" or where is None:
        return False
    lines = Path(where.file).read_text(errors="replace").splitlines()
    return where.line <= len(lines) and \
        re.match(r"\s*#\s*pragma\s+approx\b", lines[where.line - 1]) is not None


def _function_bodies(tu: TranslationUnit) -> dict[int, tuple[int, int]]:
    """First line of each function definition in the main file → its body's `{`."""
    bodies = {}
    for c in tu.cursor.walk_preorder():
        if c.kind == CursorKind.FUNCTION_DECL and c.is_definition() and \
                c.location.file and c.location.file.name == tu.spelling:
            body = next((k for k in c.get_children() if k.kind == CursorKind.COMPOUND_STMT),
                        None)  # C++ `= delete` has none
            if body is not None:
                bodies[c.extent.start.line] = (body.extent.start.line, body.extent.start.column)
    return bodies


def live_annotations(annotations: list[Annotation],
                     skipped: list[tuple[int, int]]) -> list[Annotation]:
    """Annotations outside the code the preprocessor skipped; the others are warned about."""
    live = []
    for a in annotations:
        if any(first <= a.lines[0] <= last for first, last in skipped):
            warn("approx annotation in code the preprocessor skips has no effect", a.loc,
                 "-Wapprox-skipped-annotation")
        else:
            live.append(a)
    return live


_MARKER = re.compile(r"#[ \t]*pragma[ \t]+approx\b|//[ \t]*@approx\b")


def warn_included_annotations(tu: TranslationUnit) -> None:
    """Annotations in an included file (a project header, `#include "impl.c"`) have no
    effect: only the main file's functions are compiled by approxcc. Warned once per file,
    at its first annotation."""
    seen: set[str] = set()
    for inclusion in tu.get_includes():
        name = inclusion.include.name
        if name in seen or tu.get_location(name, (1, 1)).is_in_system_header:
            continue
        seen.add(name)
        text = read_source(name)
        if (m := _MARKER.search(text)) is not None:
            line = text.count("\n", 0, m.start()) + 1
            col = m.start() - text.rfind("\n", 0, m.start())
            warn("approx annotations in an included file have no effect: only the main "
                 "file's are compiled", SourceLocation(os.path.normpath(name), line, col),
                 "-Wapprox-skipped-annotation")


def c_to_mlir(path: str, clang_args: list[str]) -> ModuleOp:
    """C/C++ source → MLIR module with approx.knob ops around the annotated statements."""
    return compile_unit(path, clang_args).module  # the knobs: the annotated functions


def compile_unit(path: str, clang_args: list[str], all_functions: bool = False) -> CompiledUnit:
    """C/C++ source → MLIR module and the remainder for the system compiler (tu_split.py):
    the annotated functions in MLIR, and with `all_functions` every function the frontend
    can compile."""
    try:
        source = read_source(path)
    except OSError as e:
        raise CompileError(f"no such file or directory: '{path}'") from e
    tu = parse(path, clang_args)
    warn_included_annotations(tu)
    annotations = live_annotations(scan_annotations(path, source), skipped_lines(tu, tu.spelling))
    sites = ClauseSites(source, annotations)
    parsed = source
    if sites:  # a second parse, with the clause expressions placed in their scopes
        parsed = sites.rewrite(_function_bodies(tu))
        tu = parse(path, clang_args, parsed, sites.original)
    emitter = ModuleEmitter(tu.cursor, tu.spelling, annotations, sites, is_cplusplus(path),
                            all_functions)
    try:
        module = emitter.emit()
        plan = emitter.finish(path, source)
    except Exception as e:
        if not annotations:  # nothing asks for MLIR: the system compiler takes the unit
            return _all_to_system_compiler(tu, path, source)
        if isinstance(e, UnsupportedType):
            raise CompileError(f"type '{e}' is not supported by the approxcc C frontend "
                               "yet") from e
        raise
    return CompiledUnit(module, tu_split.remainder(parsed, path, plan,
                                                    is_cplusplus(path)), tu)


def _all_to_system_compiler(tu: TranslationUnit, path: str, source: str) -> CompiledUnit:
    """An empty module, and the whole source as the remainder."""
    plan = tu_split.Plan(needed=True)
    return CompiledUnit(ModuleOp([]), tu_split.remainder(source, path, plan,
                                                         is_cplusplus(path)), tu)
