"""The translation-unit split: what the frontend cannot compile goes to the system compiler.

An unannotated function the frontend cannot handle (a CompileError while emitting it) is not
an error: the driver compiles it with `cc` (`c++` for C++) from the *remainder*, an in-memory
copy of the source in which every function the MLIR module defines has its body replaced by
`;`, and links both objects. Annotated functions never fall back: their errors stand.

Who defines what, so that every symbol is defined exactly once:

* functions: the MLIR module defines the functions it emitted; the remainder the others.
* file-scope variables: the MLIR module defines them when there is no remainder. With a
  remainder, the remainder defines every one of them exactly as written (any initialiser
  the C compiler accepts) and the MLIR module only declares the ones it uses (`external`,
  no initialiser), so no initialiser is ever rewritten. `static` locals stay with the
  function that holds them. A header's `static` variable is the remainder's too, shared
  under a link name as the main file's are (a private MLIR copy of a counter would be a
  second object); only a read-only one keeps an MLIR copy, which constant-folds.
* internal symbols used across the split (a `static` function emitted by MLIR and called from
  the remainder, a fallback `static` function called from MLIR, a `static` variable used by
  MLIR) cross it under a link name, `__approx_<digest>_<name>` with external linkage, the
  digest taken from the source path and text so that two translation units never collide.
  In the MLIR module the symbol is renamed and made public; for C++ the new name goes
  through the entity's mangling (`_ZL6helperi` → `_Z19__approx_…i`). The remainder keeps
  every declaration as written, `static` included, and reaches the link name by attributes
  and asm labels: what it defines (variables, fallbacks) it exports with an alias at its
  end, `extern __typeof__(name) __approx_… __asm__("<link symbol>")
  __attribute__((alias("<its own symbol>"), visibility("hidden")));`, and the body of a
  definition MLIR holds becomes a call of MLIR's, `{ extern __typeof__(name) __approx_…
  __asm__("<link symbol>"); return __approx_…(params); }` (a variadic function, or one
  with an unnamed parameter, keeps its body: the remainder calls its own copy). Nothing is
  edited out of a declaration: a `static` that comes from a macro (`#define PRIVATE
  static`) could not be (blanking it in the macro's definition would change every other
  use), and names are not redefined by macros either. A pointer to such a function taken
  in the remainder points to the forwarding body, not MLIR's definition.

Included files: the main file's definitions are split, and those of every included file
holding annotations (a library's `#include "impl.c"`, a single-header library): the
remainder includes an edited copy of such a file, written beside it under a link name
(`__approx_<digest>_<n>_<file>`), and every `#include` leading to it (through headers,
copied too) names the copy; in a copy, quoted includes name their files' absolute paths.
Other headers' definitions are the remainder's as written. A header's `static` or `inline`
function that MLIR code calls gets a private copy in the module (ModuleEmitter.declare):
the remainder's definition is internal to the remainder, and a copy keeps the call
inlinable. A copy is a second function, though: one with `static` locals or whose address
is taken is not copied; MLIR calls the remainder's under a link name. If the frontend cannot
compile a copy, the calling function falls back (unannotated) or the error stands, at the
header's line (annotated).

`#line 1 "<source>"` keeps `__FILE__` and the compiler's diagnostics on the user's file; the
driver adds `-iquote <source dir>` so that `#include "..."` finds what it found before.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from clang.cindex import Cursor, CursorKind, LinkageKind, TypeKind
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
)
from xdsl.ir import Attribute

from approxcc.diagnostics import CompileError
from approxcc.frontend.cursors import location


@dataclass
class Plan:
    """What the remainder must change: bodies to drop, internal entities to rename."""

    emitted: list[Cursor] = field(default_factory=list)      # function definitions in MLIR
    renamed: dict[Cursor, str] = field(default_factory=dict)  # canonical entity → link name
    needed: bool = False                                      # False: the remainder is empty
    # renamed functions MLIR defines and takes the address of: the remainder exports its
    # own definition (the forwarding body) as `<link>_address`, MLIR's `&f`
    addressed: set[Cursor] = field(default_factory=set)


def link_name(path: str, source: str, name: str) -> str:
    text = f"{Path(path).resolve()}\0{source}".encode(errors="surrogateescape")
    digest = hashlib.sha256(text).hexdigest()[:8]
    return f"__approx_{digest}_{name}"


def external_mangling(entity: Cursor, new: str, cplusplus: bool) -> str:
    """The symbol of `entity` once renamed to `new` and given external linkage."""
    if not cplusplus:
        return new
    name, mangled = entity.spelling, entity.mangled_name
    internal = f"L{len(name)}{name}"
    if internal not in mangled and entity.linkage == LinkageKind.EXTERNAL:
        return new  # an inline function several units define: the link name, unmangled
    if internal not in mangled:
        raise CompileError("an internal C++ entity used across the approxcc/C++ split is not "
                           "supported by the approxcc C frontend yet", location(entity))
    renamed = mangled.replace(internal, f"{len(new)}{new}", 1)
    plain = entity.kind == CursorKind.VAR_DECL and renamed == f"_Z{len(new)}{new}"
    return new if plain else renamed  # variables at global scope are not mangled


def static_token(decl: Cursor) -> int | None:
    """Offset of the `static` keyword among the specifiers of a declaration."""
    for t in decl.get_tokens():
        if t.extent.start.offset >= decl.location.offset:
            return None
        if t.spelling == "static":
            return t.extent.start.offset
    return None


def _blank(text: bytes) -> bytes:
    """Spaces for `text`, its line breaks kept (so are the lines of what follows)."""
    return bytes(c if c == ord("\n") else ord(" ") for c in text)


def _old_style_parameters(fn: Cursor, body: int) -> list[tuple[int, int]]:
    """Where a K&R definition `int f(a, b) char *a; int b; {` (body at offset `body`) names
    and declares its parameters: the inside of its identifier list, and its parameter
    declarations. Blanked, they leave `int f();`, a declaration without a prototype: calls
    keep passing the arguments default-promoted, as the definition takes them (MLIR's).
    Only a K&R definition has a `;` just before its body (libclang gives it a prototype
    type); its identifier list is the last parenthesised group before the first declaration
    (the name may come from a macro, `FUNC_NAME(add)(a, b)`: the first parentheses after
    it are the macro's)."""
    declared = [p.extent.start.offset for p in fn.get_arguments()]
    before = [t for t in fn.get_tokens() if t.extent.end.offset <= body]
    if not declared or not before or before[-1].spelling != ";":
        return []
    first = min(declared)
    tokens = [t for t in before if t.extent.end.offset <= first]
    if not tokens or tokens[-1].spelling != ")":
        return []
    depth = 0
    for t in reversed(tokens):   # back to the `(` that opens the identifier list
        depth += {")": 1, "(": -1}.get(t.spelling, 0)
        if depth == 0:
            return [(t.extent.end.offset, tokens[-1].extent.start.offset), (first, body)]
    return []


def _link_declaration(entity: Cursor, link: str, cplusplus: bool,
                      mangled: bool = True) -> str:
    """`extern <entity's type> <link> __asm__("<its link symbol>")`, without the `;` (the
    symbol `link` itself unless `mangled`)."""
    name = "::".join([p.spelling for p in _namespaces(entity)] + [entity.spelling])
    symbol = external_mangling(entity, link, cplusplus) if mangled else link
    return f'extern __typeof__({name}) {link} __asm__("{symbol}")'


def _namespaces(c: Cursor) -> list[Cursor]:
    """The named namespaces around `c`, outermost first."""
    parent = c.semantic_parent
    if parent is None or parent.kind not in (CursorKind.NAMESPACE, CursorKind.LINKAGE_SPEC):
        return []
    return _namespaces(parent) + [parent] * (parent.kind == CursorKind.NAMESPACE and
                                             bool(parent.spelling))


def _forwarding_body(fn: Cursor, link: str, cplusplus: bool) -> str | None:
    """A body that calls MLIR's definition of `fn` under its link name (None: the arguments
    cannot be passed on, the function being variadic or a parameter unnamed)."""
    params = [p.spelling for p in fn.get_arguments()]
    if not all(params) or fn.type.kind == TypeKind.FUNCTIONPROTO and \
            fn.type.is_function_variadic():
        return None
    call = f"{link}({', '.join(params)});"
    returns = "" if fn.result_type.get_canonical().kind == TypeKind.VOID else "return "
    return f"{{ {_link_declaration(fn, link, cplusplus)}; {returns}{call} }}"


def _export(entity: Cursor, link: str, cplusplus: bool, address: bool = False) -> str:
    """An alias of what the remainder defines, under its link name (hidden: one program's);
    `address`: under the symbol `link` itself, not the C++ mangling of a renamed entity."""
    own = entity.mangled_name if cplusplus else entity.spelling
    return (f"{_link_declaration(entity, link, cplusplus, not address)} "
            f'__attribute__((alias("{own}"), visibility("hidden")));\n')


@dataclass(frozen=True)
class Inclusion:
    """An `#include` directive: in `file`, its file name at byte `offset`, naming `included`
    (each file by the name libclang gives it)."""

    file: str
    offset: int
    included: str


def _copied_files(main: str, split_files: set[str], inclusions: list[Inclusion]) -> list[str]:
    """The included files the remainder takes as edited copies: those holding definitions
    the split divides, and every file that includes one of them (its `#include` edited)."""
    includers: dict[str, set[str]] = {}
    for i in inclusions:
        includers.setdefault(i.included, set()).add(i.file)
    copied, todo = [], sorted(split_files - {main})
    while todo:
        name = todo.pop()
        if name != main and name not in copied:
            copied.append(name)
            todo += sorted(includers.get(name, ()))
    return sorted(copied)


def _include_edit(text: bytes, at: int, name: str) -> tuple[int, int, bytes]:
    """`#include` of `name` for the directive whose file name starts at byte `at` (a quoted
    or angled name; a macro: the rest of the line)."""
    close = {ord('"'): b'"', ord("<"): b">"}.get(text[at])
    end = text.index(close, at + 1) + 1 if close else text.find(b"\n", at) % (len(text) + 1)
    return at, end, f'"{_quoted(name)}"'.encode()


def remainder(sources: dict[str, str], main: str, plan: Plan, cplusplus: bool,
              inclusions: list[Inclusion] = ()) -> tuple[str, dict[str, str]]:
    """The source the system compiler compiles, and the included files it takes as edited
    copies (the name of each, beside the remainder → its text). `sources`: the text of the
    main file and of each included file whose definitions the split divides, by name."""
    if not plan.needed:
        return "", {}
    texts = {name: text.encode(errors="surrogateescape")  # libclang's offsets count bytes
             for name, text in sources.items()}
    edits: dict[str, list[tuple[int, int, bytes]]] = {name: [] for name in texts}
    for fn in plan.emitted:
        file = fn.location.file.name
        text = texts[file]
        body = next(k for k in fn.get_children() if k.kind == CursorKind.COMPOUND_STMT)
        start, end = body.extent.start.offset, body.extent.end.offset
        lines = b"\n" * text.count(b"\n", start, end)
        if fn.canonical not in plan.renamed:
            edits[file].append((start, end, b";" + lines))
            edits[file] += [(a, b, _blank(text[a:b])) for a, b in _old_style_parameters(fn, start)]
        elif (call := _forwarding_body(fn, plan.renamed[fn.canonical], cplusplus)) is not None:
            edits[file].append((start, end, call.encode() + lines))
    # An included file is edited in a copy beside the remainder (the `#include`s leading to
    # it name the copy); in a copy, a quoted include names its file's absolute path, as the
    # copy's folder is not its original's
    copied = _copied_files(main, set(sources), list(inclusions))
    copy_names = {name: f"{link_name(main, sources[main], str(n))}_{Path(name).name}"
                  for n, name in enumerate(copied)}
    for i in inclusions:
        if i.file not in copy_names and i.file != main:
            continue
        if i.file not in texts:
            texts[i.file] = Path(i.file).read_bytes()
            edits[i.file] = []
        target = copy_names.get(i.included)
        if target is None and i.file != main and texts[i.file][i.offset] == ord('"'):
            target = str(Path(i.included).resolve())
        if target is not None:
            edits[i.file].append(_include_edit(texts[i.file], i.offset, target))
    out = {}
    for name, text in texts.items():
        for start, end, new in sorted(edits[name], reverse=True):
            text = text[:start] + new + text[end:]
        out[name] = f'#line 1 "{_quoted(name)}"\n' + text.decode(errors="surrogateescape")
    defined_by_mlir = {fn.canonical for fn in plan.emitted}
    exports = "".join(_export(entity, link, cplusplus) if entity not in defined_by_mlir
                      else _export(entity, f"{link}_address", cplusplus, address=True)
                      for entity, link in sorted(plan.renamed.items(), key=lambda kv: kv[1])
                      if entity not in defined_by_mlir or entity in plan.addressed)
    return out[main] + exports, {copy_names[name]: out[name] for name in copied}


def _quoted(path: str) -> str:
    return path.replace("\\", "\\\\").replace('"', '\\"')


def rename_symbols(module: ModuleOp, names: dict[str, str]) -> None:
    """Rename symbols (definitions and every reference) throughout the module."""
    if not names:
        return

    def renamed(attr: Attribute) -> Attribute:
        if isinstance(attr, SymbolRefAttr) and attr.root_reference.data in names:
            return SymbolRefAttr(names[attr.root_reference.data], attr.nested_references)
        if isinstance(attr, ArrayAttr):
            return ArrayAttr([renamed(a) for a in attr.data])
        if isinstance(attr, DictionaryAttr):
            return DictionaryAttr({k: renamed(v) for k, v in attr.data.items()})
        return attr

    for op in module.walk():
        for store in (op.properties, op.attributes):
            for key, attr in list(store.items()):
                if key == "sym_name" and isinstance(attr, StringAttr):
                    store[key] = StringAttr(names.get(attr.data, attr.data))
                else:
                    store[key] = renamed(attr)
