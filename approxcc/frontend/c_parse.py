"""Parse one C/C++ translation unit with libclang: clang's own errors become our diagnostics."""

from __future__ import annotations

import ctypes
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    annotations: list[Annotation]  # in the main file and the files it includes
    # the included files approxcc compiles, edited as the main file is (tu_split.py): the
    # name the remainder includes each by, beside it → its text
    copies: dict[str, str]


def _libclang_text(self: cindex.c_interop_string) -> str | None:
    raw = super(ctypes.c_char_p, self).value
    return None if raw is None else raw.decode(errors=SOURCE_ERRORS)


# cindex decodes libclang's strings as strict UTF-8; a token's spelling is source bytes
cindex.c_interop_string.value = property(_libclang_text)  # type: ignore[assignment]


def _unguarded(method: Any) -> Any:
    """`method` of cindex's Cursor without its null-cursor guard (`cursor_null_guard`'s
    `inner`, the method in its closure), else `method` itself."""
    cells = [c.cell_contents for c in getattr(method, "__closure__", None) or ()]
    if getattr(method, "__name__", None) == "inner" and len(cells) == 1 and callable(cells[0]):
        return cells[0]
    return method


def _drop_null_guards() -> None:
    """cindex checks on every call of a Cursor method or property that the cursor is not
    null, through libclang (clang_equalCursors): a third of the frontend's time in cindex.
    It maps the null cursors libclang returns to None, and the frontend's own libclang calls
    check (cursors.initializer), so the frontend never holds one."""
    for name, attr in list(vars(cindex.Cursor).items()):
        if isinstance(attr, property) and attr.fget is not None:
            if (fget := _unguarded(attr.fget)) is not attr.fget:
                setattr(cindex.Cursor, name, property(fget, attr.fset, attr.fdel, attr.__doc__))
        elif (plain := _unguarded(attr)) is not attr:
            setattr(cindex.Cursor, name, plain)


_drop_null_guards()

# a cursor's or type's kind by a dict, where cindex calls the enumeration (a tenth of the
# frontend's time in cindex: the frontend asks for kinds at every node)
_CURSOR_KINDS = {k.value: k for k in CursorKind}
_TYPE_KINDS = {k.value: k for k in cindex.TypeKind}
cindex.Cursor.kind = property(lambda c: _CURSOR_KINDS[c._kind_id])  # type: ignore[assignment]
cindex.Type.kind = property(lambda t: _TYPE_KINDS[t._kind_id])  # type: ignore[assignment]


def read_source(path: str) -> str:
    """A C/C++ source as gcc reads it: bytes, UTF-8 where they are; any other byte (a
    Latin-1 comment or string) is a lone surrogate (SOURCE_ERRORS), which encoding with the
    same error handler turns back into that byte."""
    return Path(path).read_bytes().decode(errors=SOURCE_ERRORS)


def is_cplusplus(path: str) -> bool:
    return Path(path).suffix in CXX_SUFFIXES


def parse(path: str, clang_args: list[str], sources: dict[str, str] | None = None,
          origin: Callable[[SourceLocation], SourceLocation | None] | None = None
          ) -> TranslationUnit:
    """Parse `path`, the in-memory `sources` standing for the files they name; `origin` maps
    positions of text the frontend inserted back to where the user wrote it."""
    # gcc takes bytes that are not UTF-8 in comments and strings, and K&R definitions,
    # silently (the user's -W flags, after these, still ask for clang's warnings)
    lang = (["-x", "c++"] if is_cplusplus(path) else []) + \
        ["-Wno-invalid-source-encoding", "-Wno-deprecated-non-prototype"]
    unsaved = [(name, text.encode(errors=SOURCE_ERRORS))
               for name, text in sources.items()] if sources else None
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
            if where and origin:
                where = origin(where) or where
            raise CompileError(d.spelling, where, flag=d.option or None)
        if d.severity == ClangDiagnostic.Warning and sources is None and \
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


def _function_bodies(tu: TranslationUnit, files: Collection[str]
                     ) -> dict[tuple[str, int], tuple[int, int]]:
    """(file, first line) of each function definition in `files` → its body's `{`."""
    bodies = {}
    for c in tu.cursor.walk_preorder():
        if c.kind == CursorKind.FUNCTION_DECL and c.is_definition() and \
                c.location.file and c.location.file.name in files:
            body = next((k for k in c.get_children() if k.kind == CursorKind.COMPOUND_STMT),
                        None)  # C++ `= delete` has none
            if body is not None:
                bodies[c.location.file.name, c.extent.start.line] = \
                    (body.extent.start.line, body.extent.start.column)
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


def annotated_includes(tu: TranslationUnit) -> dict[str, str]:
    """The files the unit includes (not system headers) whose text may hold approx
    annotations, by the name libclang gives them (the include's path, `..` kept): their
    text."""
    found: dict[str, str] = {}
    seen: set[str] = set()
    for inclusion in tu.get_includes():
        name = inclusion.include.name
        if name in seen or tu.get_location(name, (1, 1)).is_in_system_header:
            continue
        seen.add(name)
        text = read_source(name)
        if _MARKER.search(text) is not None:
            found[name] = text
    return found


def c_to_mlir(path: str, clang_args: list[str]) -> ModuleOp:
    """C/C++ source → MLIR module with approx.knob ops around the annotated statements."""
    return compile_unit(path, clang_args).module  # the knobs: the annotated functions


def compile_unit(path: str, clang_args: list[str], all_functions: bool = False) -> CompiledUnit:
    """C/C++ source → MLIR module and the remainder for the system compiler (tu_split.py):
    the annotated functions in MLIR, and with `all_functions` every function the frontend
    can compile. Annotations count in the main file and in the files it includes (a
    library's implementation, a single-header library), not in system headers."""
    try:
        source = read_source(path)
    except OSError as e:
        raise CompileError(f"no such file or directory: '{path}'") from e
    tu = parse(path, clang_args)
    texts = {tu.spelling: source, **annotated_includes(tu)}
    by_file = {name: live_annotations(scan_annotations(name, text), skipped_lines(tu, name))
               for name, text in texts.items()}
    annotations = [a for found in by_file.values() for a in found]
    # the main file, and the included files with annotations (not in a comment, say)
    sources = {name: text for name, text in texts.items()
               if name == tu.spelling or by_file[name]}
    sites = ClauseSites(sources, annotations)
    parsed = dict(sources)
    if sites:  # a second parse, with the clause expressions placed in their scopes
        parsed.update(sites.rewrite(_function_bodies(tu, sources)))
        tu = parse(path, clang_args, parsed, sites.original)
    emitter = ModuleEmitter(tu.cursor, tu.spelling, annotations, sites, is_cplusplus(path),
                            all_functions, included=set(sources) - {tu.spelling})
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
    rest, copies = tu_split.remainder(parsed, tu.spelling, plan, is_cplusplus(path),
                                      _inclusions(tu) if len(sources) > 1 else [])
    return CompiledUnit(module, rest, tu, annotations, copies)


def _inclusions(tu: TranslationUnit) -> list[tu_split.Inclusion]:
    """The unit's `#include` directives outside system headers, those of a file skipped
    (`#pragma once`, an include guard) too: libclang's preprocessing record."""
    out = []
    for c in tu.cursor.get_children():
        if c.kind == CursorKind.INCLUSION_DIRECTIVE and not c.location.is_in_system_header \
                and (included := c.get_included_file()) is not None:
            name = list(c.get_tokens())[2]  # after `#` `include`
            out.append(tu_split.Inclusion(c.location.file.name, name.extent.start.offset,
                                          included.name))
    return out


def _all_to_system_compiler(tu: TranslationUnit, path: str, source: str) -> CompiledUnit:
    """An empty module, and the whole source as the remainder."""
    plan = tu_split.Plan(needed=True)
    rest, _ = tu_split.remainder({tu.spelling: source}, tu.spelling, plan, is_cplusplus(path))
    return CompiledUnit(ModuleOp([]), rest, tu, [], {})
