"""C → MLIR: one translation unit → one `builtin.module` (a libclang AST walk; see
function_emitter.py and its parts). Declarations of external functions, globals (see
global_vars.py), string literals, and what the system compiler compiles instead
(tu_split.py): every function without an annotation, so that code nobody marked keeps the
system compiler's semantics and speed (with `all_functions`, for testing the frontend: only
those the frontend cannot handle). An annotated function's calls to the file's `static` and
`inline` functions get private copies in the module, so that they inline as before.

Function emitters name functions by their C spelling; the module gives them their link names
at the end (C++ mangling, internal symbols shared with the remainder), so a spelling must name
one function: C++ overloads are left to the C++ compiler.
"""

from __future__ import annotations

import functools

from clang.cindex import Cursor, CursorKind, LinkageKind, StorageClass, TLSKind, TypeKind
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import (
    BytesAttr,
    IntAttr,
    IntegerAttr,
    ModuleOp,
    SymbolRefAttr,
    i8,
    i64,
)
from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

from approxcc.annotations import Annotation
from approxcc.diagnostics import CompileError, SourceLocation, note
from approxcc.frontend import c_types, global_vars, initializers, tu_split
from approxcc.frontend.c_types import UnsupportedType
from approxcc.frontend.calls import Signature, function_signature
from approxcc.frontend.clause_exprs import ClauseSites
from approxcc.frontend.cursors import (
    WARNING_ATTRIBUTES,
    attribute_word,
    file_location,
    in_main_file,
    initializer,
    location,
    string_bytes,
    string_unit_bits,
    unsupported,
    visibility,
)
from approxcc.frontend.function_emitter import FunctionEmitter, set_internal

_SCOPES = (CursorKind.NAMESPACE, CursorKind.LINKAGE_SPEC)
# C++ definitions left to the C++ compiler; an annotation inside one is an error
_CXX_ONLY = {CursorKind.CXX_METHOD: "a C++ method", CursorKind.CONSTRUCTOR: "a C++ constructor",
             CursorKind.DESTRUCTOR: "a C++ destructor",
             CursorKind.CONVERSION_FUNCTION: "a C++ conversion function",
             CursorKind.FUNCTION_TEMPLATE: "a function template",
             CursorKind.CLASS_TEMPLATE: "a class template",
             CursorKind.CLASS_DECL: "a C++ class", CursorKind.STRUCT_DECL: "a C++ class"}
_METHODS = (CursorKind.CXX_METHOD, CursorKind.CONSTRUCTOR, CursorKind.DESTRUCTOR,
            CursorKind.CONVERSION_FUNCTION)
_INTERNAL = (LinkageKind.INTERNAL, LinkageKind.UNIQUE_EXTERNAL, LinkageKind.NO_LINKAGE)


def _top_level(c: Cursor) -> list[Cursor]:
    """Declarations at namespace scope, through namespaces and `extern "C"` blocks."""
    out = []
    for k in c.get_children():
        out += _top_level(k) if k.kind in _SCOPES else [k]
    return out


# Function attributes that change nothing the module emits: optimisation hints, warnings,
# what callers may assume. Any other (constructor, weak, section, used, naked, an ABI…) is the
# system compiler's to honour: the function stays with it.
_HINTS = {"noinline", "always_inline", "inline", "hot", "cold", "noreturn", "pure", "const",
          "nonnull", "returns_nonnull", "unused", "maybe_unused", "format", "format_arg",
          "warn_unused_result", "nodiscard", "deprecated", "malloc", "alloc_size",
          "alloc_align", "leaf", "nothrow", "sentinel", "access", "artificial", "gnu_inline",
          "flatten", "noclone", "noipa", "no_sanitize", "no_sanitize_address",
          "no_sanitize_undefined", "no_instrument_function", "warning", "error", "target",
          "optimize", "aligned"}
_HONOURED = (CursorKind.ASM_LABEL_ATTR, CursorKind.VISIBILITY_ATTR,  # by the module
             CursorKind.PURE_ATTR, CursorKind.CONST_ATTR)


def _system_compilers_attribute(declarations: list[Cursor]) -> str | None:
    """The first attribute of a function (on any of its declarations) that the module does
    not honour, or None."""
    for d in declarations:
        for attr in d.get_children():
            if attr.kind.is_attribute() and attr.kind not in _HONOURED and \
                    (word := attribute_word(attr)) not in _HINTS:
                return word
    return None


def _defining_attribute(var: Cursor) -> Cursor | None:
    """An attribute that shapes the definition of `var` (`aligned`, `section`, `weak`,
    `used`…): the system compiler defines such a variable as written. An asm label renames
    it (its symbol is libclang's mangled name)."""
    return next((k for k in var.get_children() if k.kind.is_attribute() and
                 k.kind != CursorKind.ASM_LABEL_ATTR and
                 attribute_word(k) not in WARNING_ATTRIBUTES), None)


def _weak(declarations: list[Cursor]) -> bool:
    """Whether a declaration says `__attribute__((weak))`: the symbol may stay undefined (its
    address then null), which the module's reference must allow."""
    return any(k.kind.is_attribute() and attribute_word(k) == "weak"
               for d in declarations for k in d.get_children())


def _defined_by_several_units(declarations: list[Cursor], cplusplus: bool) -> bool:
    """Whether a function with external linkage is an inline one other units define too: in
    C++ every unit using it; in C (C99) where each of this unit's declarations says
    `inline` and none `extern`, an inline definition (the external one is another unit's).
    With `gnu_inline` it is `extern inline` that defines no symbol."""
    if cplusplus:
        return any(d.is_function_inlined() for d in declarations)
    if any(k.kind.is_attribute() and attribute_word(k) == "gnu_inline"
           for d in declarations for k in d.get_children()):
        return any(d.is_function_inlined() and d.storage_class == StorageClass.EXTERN
                   for d in declarations)
    return all(d.is_function_inlined() and d.storage_class != StorageClass.EXTERN
               for d in declarations)


def _asm_label(fn: Cursor) -> bool:
    """Whether `fn` is named by an asm label (`scanf` is `__isoc99_scanf` in glibc)."""
    return any(k.kind == CursorKind.ASM_LABEL_ATTR for k in fn.get_children())


def _has_static_locals(fn: Cursor) -> bool:
    return any(k.kind == CursorKind.VAR_DECL and k.storage_class.name == "STATIC"
               for k in fn.walk_preorder())


def _external_function_definition(c: Cursor) -> bool:
    """A function definition another translation unit may call (not `static`, not `inline`,
    not a system header's)."""
    return c.kind == CursorKind.FUNCTION_DECL and c.linkage == LinkageKind.EXTERNAL and \
        c.is_definition() and not c.is_function_inlined() and \
        not c.location.is_in_system_header


def _defines_code(c: Cursor) -> bool:
    """A C++ method definition, or a class defining methods: code only the C++ compiler emits
    (templates are instantiated by their users)."""
    methods = [c] if c.kind in _METHODS else [k for k in c.get_children() if k.kind in _METHODS]
    return any(m.is_definition() for m in methods)


class ModuleEmitter:
    """One translation unit → one builtin.module, and the plan of its remainder."""

    def __init__(self, tu_cursor: Cursor, main_file: str, annotations: list[Annotation],
                 sites: ClauseSites, cplusplus: bool = False, all_functions: bool = True,
                 included: set[str] = frozenset()):
        self.tu_cursor = tu_cursor
        self.all_functions = all_functions
        self.sites = sites
        self.main_file = main_file
        # the files whose definitions the split divides: the main file, and the included
        # files holding annotations (`#include "impl.c"`, a single-header library)
        self.split_files = {main_file, *included}
        self.cplusplus = cplusplus
        self.module = ModuleOp([])
        self.by_file: dict[str, dict[int, list[Annotation]]] = {}  # by file, target line
        for a in annotations:
            if a.target_line == 0:
                raise CompileError("approx annotation has no target statement", a.loc)
            self.by_file.setdefault(a.loc.file, {}).setdefault(a.target_line, []).append(a)
        self.used: set[int] = set()
        self.knob_locs: dict[str, SourceLocation] = {}
        self.declarations = _top_level(tu_cursor)
        self.functions = {c.spelling: c for c in self.declarations
                          if c.kind == CursorKind.FUNCTION_DECL}
        self.defined = {c.spelling for c in self.declarations
                        if c.kind == CursorKind.FUNCTION_DECL and c.is_definition()}
        # Every declaration of each function, by canonical cursor: a signature looks its
        # function up here rather than scanning the headers' thousands of declarations.
        self.redeclarations: dict[Cursor, list[Cursor]] = {}
        for c in self.declarations:
            if c.kind == CursorKind.FUNCTION_DECL:
                self.redeclarations.setdefault(c.canonical, []).append(c)
        self.overloaded = self.spellings_of_several_functions()
        self.strings: dict[tuple[bytes, int], str] = {}  # (bytes, alignment) → global
        self.callees: dict[str, tuple[Cursor, Operation]] = {}  # spelling → its declaration
        self.emitted: dict[str, Cursor] = {}        # definitions in the module, by spelling
        self.fallbacks: list[Cursor] = []           # definitions left to the remainder
        self.initial_values: list[str] = []  # constant_copy's globals
        # the ops taking a function's address (calls.function_address), with the function
        self.addresses: list[tuple[Operation, Cursor]] = []
        self.copies: set[str] = set()  # the main file's internal callees copied (private)
        self.globals: dict[Cursor, str] = {}        # canonical variable → symbol
        self.global_ops: dict[str, llvm.GlobalOp] = {}
        self.remainder_defines = False  # something only the system compiler can define
        # inline functions with external linkage that other units define too (C++ `inline`,
        # a C inline definition), by canonical cursor: each unit's copy is its own
        self.several_units: set[Cursor] = set()

    @functools.cached_property
    def _split_file_references(self) -> tuple[set[str], set[str]]:
        """One walk of the split's files: the functions whose address their code takes (a
        function named other than as the callee of a call: `&f` must be one address in both
        halves), and the names their attributes hold (`alias("f")`, `cleanup(f)`: such a
        function must be defined beside the declaration naming it, by the system compiler;
        libclang shows no reference to it)."""
        named, called, by_attributes = {}, set(), set()
        split = (n for top in self.declarations if self.in_split(top)
                 for n in top.walk_preorder())
        for c in split:
            if c.kind == CursorKind.DECL_REF_EXPR and c.referenced is not None and \
                    c.referenced.kind == CursorKind.FUNCTION_DECL:
                named[c.hash] = c.spelling
            elif c.kind == CursorKind.CALL_EXPR:
                callee = next(c.get_children(), None)
                while callee is not None and callee.kind in (CursorKind.UNEXPOSED_EXPR,
                                                             CursorKind.PAREN_EXPR):
                    callee = next(callee.get_children(), None)
                if callee is not None and callee.kind == CursorKind.DECL_REF_EXPR:
                    called.add(callee.hash)
            elif c.kind.is_attribute():
                by_attributes |= {t.spelling.strip('"') for t in list(c.get_tokens())[1:]}
        return {name for h, name in named.items() if h not in called}, by_attributes

    @property
    def address_taken(self) -> set[str]:
        return self._split_file_references[0]

    @property
    def named_by_attributes(self) -> set[str]:
        return self._split_file_references[1]

    def in_split(self, c: Cursor) -> bool:
        """Whether `c` is in a file whose definitions the split divides (asked of each of
        the thousands of declarations the headers make: the main file's is the quick test)."""
        if in_main_file(c):
            return True
        if len(self.split_files) == 1:
            return False
        file = c.location.file
        return file is not None and file.name in self.split_files

    def annotations_in(self, c: Cursor) -> dict[int, list[Annotation]]:
        """The annotations of the file `c` is in, by target line."""
        return self.by_file.get(c.location.file.name, {}) if c.location.file else {}

    def spellings_of_several_functions(self) -> set[str]:
        """C++ overloads, and functions of one name in several namespaces."""
        seen: dict[str, str] = {}
        several = set()
        for c in self.declarations:
            if c.kind == CursorKind.FUNCTION_DECL:
                if seen.setdefault(c.spelling, c.get_usr()) != c.get_usr():
                    several.add(c.spelling)
        return several

    # the walk ----------------------------------------------------------------------------
    def emit(self) -> ModuleOp:
        for c in self.declarations:
            if c.kind == CursorKind.VAR_DECL:
                self.file_variable(c)
            elif not self.in_split(c):
                # `#include "impl.c"`, a single-header library's implementation: the
                # remainder, which includes the file as written, defines its functions
                self.remainder_defines |= _external_function_definition(c)
            elif c.kind == CursorKind.FUNCTION_DECL and c.is_definition():
                self.function(c)
            elif self.cplusplus and c.kind in _CXX_ONLY:
                if self.annotated(c):
                    raise unsupported(_CXX_ONLY[c.kind], c)
                self.remainder_defines |= _defines_code(c)
        for anns in (a for by_line in self.by_file.values() for a in by_line.values()):
            for a in anns:
                if id(a) not in self.used:
                    raise CompileError("approx annotation has no target statement", a.loc)
        self.declare_callees()
        self.verify_functions()
        return self.module

    def verify_functions(self) -> None:
        """IR the frontend got wrong shows here rather than in mlir-opt: an unannotated
        function of the split's files whose IR does not verify goes to the system compiler."""
        for name, c in list(self.emitted.items()):
            op = self.emitted_op(name)
            try:
                op.verify()
            except VerifyException:
                if self.annotated(c) or not self.in_split(c):
                    raise
                op.detach()
                op.erase()
                del self.emitted[name]
                self.copies.discard(name)
                self.fallbacks.append(c)
                if name in self.callees:  # the module still calls it
                    self.module.body.block.add_op(self.callees[name][1])

    def annotated(self, c: Cursor) -> bool:
        """Whether an annotation targets the definition or code inside it."""
        return any(c.extent.start.line <= line <= c.extent.end.line
                   for line in self.annotations_in(c))

    def function(self, c: Cursor) -> None:
        # The module has no constructor lists, sections, weak definitions…: the system
        # compiler keeps such a function, and the target of an `alias` (defined where it is)
        attribute = _system_compilers_attribute(self.redeclarations.get(c.canonical, [c]))
        named = c.spelling in self.named_by_attributes
        if attribute is not None or named:
            if self.annotated(c):
                why = f"with the attribute '{attribute}'" if attribute is not None else \
                    "an attribute names (alias, cleanup)"
                raise unsupported(f"an approx annotation in a function {why}", c)
            self.fallbacks.append(c)
            return
        if not self.annotated(c) and not self.all_functions:
            self.fallbacks.append(c)  # (a private copy may serve annotated callers: declare)
            return
        several = c.linkage == LinkageKind.EXTERNAL and _defined_by_several_units(
            self.redeclarations.get(c.canonical, [c]), self.cplusplus)
        if several:
            # each unit's copy is its own, under a link name (shared_internals); its address
            # is the one external definition's, which this unit may not have
            if c.spelling in self.address_taken:
                if self.annotated(c):
                    raise unsupported("an approx annotation in an inline function whose "
                                      "address is taken", c)
                self.fallbacks.append(c)
                return
            self.several_units.add(c.canonical)
        if not self.annotated(c):
            callees, emitted = set(self.callees), set(self.emitted)
            try:
                self.function_definition(c, [])
            except Exception:  # whatever the frontend cannot do, the system compiler can
                self.fallbacks.append(c)  # (tu_split.py)
                for name in set(self.callees) - callees:
                    del self.callees[name]  # calls the module does not make
                for name in set(self.emitted) - emitted:  # header copies only it called
                    op = self.emitted_op(name)
                    op.detach()
                    op.erase()
                    del self.emitted[name]
            return
        anns = self.annotations_in(c).get(c.extent.start.line, [])
        self.used.update(id(a) for a in anns)
        self.sites.collect(c)
        try:
            self.function_definition(c, anns)
        except UnsupportedType as e:
            raise CompileError(f"type '{e}' is not supported by the approxcc C frontend yet",
                               location(c)) from e

    def function_definition(self, c: Cursor, anns: list[Annotation]) -> None:
        if c.spelling in self.overloaded:
            raise unsupported("an overloaded function", c)
        if not c.spelling.isidentifier():
            raise unsupported("an overloaded operator", c)
        self.emitted[c.spelling] = c
        try:
            FunctionEmitter(self, c).emit(anns)
        except Exception:
            del self.emitted[c.spelling]
            raise

    def file_variable(self, var: Cursor) -> None:
        """Externally visible definitions are defined even when no function here uses them:
        other translation units may."""
        if var.linkage != LinkageKind.EXTERNAL or self.defining_declaration(var) is None:
            return
        try:
            self.global_symbol(var)
        except Exception:  # the remainder defines it as written
            self.remainder_defines = True

    def new_knob(self, a: Annotation, default_name: str) -> tuple[str, int]:
        """The knob's unique name and its id (ids in source order, outer knobs first)."""
        name = a.knob or default_name
        if name in self.knob_locs:
            raise CompileError(f"duplicate knob name '{name}'", a.loc,
                               [note("first defined here", self.knob_locs[name])])
        self.knob_locs[name] = a.loc
        return name, len(self.knob_locs) - 1

    # functions ---------------------------------------------------------------------------
    def declare(self, callee: Cursor, symbol: str | None = None) -> None:
        """Record a function the module calls (as `symbol`: a builtin's library function):
        declared at the end unless defined here. A header's `static`/`inline` definition gets
        a private copy (nothing else defines it), unless a copy would be a second function:
        one with `static` locals, or whose address is taken, is the remainder's, called
        across the split."""
        name = symbol or callee.spelling
        if name in self.callees:
            return
        if callee.spelling in self.overloaded:
            raise unsupported("a call to an overloaded function", callee)
        self.callees[name] = (callee, self.signature(callee).declaration(name))
        if symbol is not None:
            return
        definition = callee.get_definition()
        if definition is None or callee.spelling in self.emitted or \
                not (definition.linkage in _INTERNAL or definition.is_function_inlined()):
            return
        one = definition.linkage in _INTERNAL and (
            _has_static_locals(definition) or callee.spelling in self.address_taken)
        if not self.in_split(definition) and one:
            self.remainder_defines = True
            return
        if not self.in_split(definition):
            self.function_definition(definition, [])
        elif self.all_functions or self.annotated(definition) or \
                _has_static_locals(definition) or callee.spelling in self.address_taken:
            # emitted in its turn, or called across the split (one set of statics; one
            # address, which a copy would not share with the remainder's `&f`)
            return
        else:
            try:
                self.function_definition(definition, [])
            except Exception:  # the remainder's definition serves, called across the split
                return
            self.copies.add(callee.spelling)
        set_internal(self.emitted_op(callee.spelling), True)

    def emitted_op(self, name: str) -> func.FuncOp | llvm.FuncOp:
        return next(op for op in self.module.ops if isinstance(op, func.FuncOp | llvm.FuncOp)
                    and op.sym_name.data == name)

    def declare_callees(self) -> None:
        for name, (fn, decl) in self.callees.items():
            if name not in self.emitted:
                if _weak(self.redeclarations.get(fn.canonical, [fn])):  # may be undefined
                    decl.attributes["llvm.linkage"] = llvm.LinkageAttr("extern_weak")
                self.module.body.block.add_op(decl)

    def signature(self, fn: Cursor) -> Signature:
        """What every call of `fn` and its definition agree on (calls.py)."""
        return function_signature(fn, self.redeclarations.get(fn.canonical, []))

    # globals -----------------------------------------------------------------------------
    def global_symbol(self, var: Cursor) -> str:
        """The `llvm.mlir.global` of a variable with static storage (file scope, `static`
        local, `extern`), created on first use: defined with its initialiser when this
        translation unit defines it, an external declaration otherwise."""
        key = var.canonical
        if key not in self.globals:
            self.globals[key] = self.new_global(var)
        return self.globals[key]

    def defining_declaration(self, var: Cursor) -> Cursor | None:
        """The declaration that defines `var` here: the one with an initialiser, else a
        tentative definition (file scope, not `extern`)."""
        definition = var.get_definition()
        if definition is not None:
            return definition
        return next((d for d in self.declarations if d.kind == CursorKind.VAR_DECL and
                     d.canonical == var.canonical and d.storage_class.name != "EXTERN"), None)

    def new_global(self, var: Cursor) -> str:
        local = var.semantic_parent.kind not in (CursorKind.TRANSLATION_UNIT,
                                                 CursorKind.NAMESPACE, CursorKind.LINKAGE_SPEC)
        definition = var if local else self.defining_declaration(var)
        decl = definition or var
        # its symbol: C++'s mangling, or C's name unless an asm label renames it
        symbol = self.local_symbol(var) if local else var.mangled_name
        constant = global_vars.is_read_only(decl.type)
        thread_local = var.tls_kind != TLSKind.NONE
        if symbol in self.global_ops:  # another name of one object (asm labels)
            if definition is None:
                return symbol
            self.global_ops.pop(symbol).erase()
        try:
            if definition is None:
                op = global_vars.declaration_op(symbol, self.declared_type(decl.type), constant,
                                                thread_local, _weak([var, decl]))
            else:
                op = self.definition(definition, symbol, constant, local, thread_local)
        except UnsupportedType as e:
            raise unsupported(f"type '{e}'", decl) from None
        self.module.body.block.add_op(op)
        self.global_ops[symbol] = op
        return symbol

    def definition(self, var: Cursor, symbol: str, constant: bool, local: bool,
                   thread_local: bool):
        mlir_type = c_types.element_type(var.type)
        evaluator = global_vars.ConstantEvaluator(self.global_symbol, self.string_global)
        linkage = "internal" if var.linkage in _INTERNAL else "external"
        try:
            attribute = _defining_attribute(var)
            if attribute is not None:  # alignment, section, weak…: not reproduced here
                raise global_vars.Unevaluated(attribute)
            value = evaluator.evaluate(var.type, initializer(var))
        except global_vars.Unevaluated as e:
            if local:
                what = "initialiser" if e.cursor.kind.is_expression() else "attribute"
                raise unsupported(f"this {what} of a static variable", e.cursor) from None
            self.remainder_defines = True  # the remainder defines it as written
            return global_vars.declaration_op(symbol, mlir_type, constant, thread_local)
        return global_vars.global_op(symbol, mlir_type, value, linkage, constant, thread_local)

    def constant_copy(self, t, init: Cursor, holes: list[initializers.Part]) -> str | None:
        """An internal constant global holding what the initialiser `init` gives an object of
        type `t`, for a local aggregate initialised by copying it (as clang does), its parts
        that are not constants (`&local`) zero there and listed in `holes`, for the caller
        to store after the copy; None when it cannot be copied (a union's bytes)."""
        evaluator = global_vars.ConstantEvaluator(self.global_symbol, self.string_global)
        try:
            value = evaluator.evaluate(t, init, holes)
        except global_vars.Unevaluated:
            return None
        symbol = f".init.{len(self.initial_values)}"
        self.initial_values.append(symbol)
        self.module.body.block.add_op(global_vars.global_op(
            symbol, c_types.element_type(t), value, "internal", constant=True))
        return symbol

    @staticmethod
    def declared_type(t):
        """An `extern T a[];` has no size here: a zero-length array stands for it."""
        c = t.get_canonical()
        if c.kind == TypeKind.INCOMPLETEARRAY:
            return llvm.LLVMArrayType(IntAttr(0), c_types.element_type(c.get_array_element_type()))
        return c_types.element_type(t)

    def local_symbol(self, var: Cursor) -> str:
        """`function.variable` for a `static` local, made unique."""
        base = f"{var.semantic_parent.spelling}.{var.spelling}"
        symbol, n = base, 1
        while symbol in self.global_ops:
            symbol, n = f"{base}.{n}", n + 1
        return symbol

    def string_global(self, literal: Cursor) -> str:
        r"""The constant global holding a string literal's bytes, exactly (a BytesAttr prints
        each byte >= 0x80 as one `\XX` escape), aligned as its characters are."""
        data, align = string_bytes(literal), string_unit_bits(literal) // 8
        if (data, align) not in self.strings:
            name = f".str.{len(self.strings)}"
            self.strings[data, align] = name
            t = llvm.LLVMArrayType(IntAttr(len(data)), i8)
            self.module.body.block.add_op(llvm.GlobalOp(
                t, name, "internal", constant=True, value=BytesAttr(data),
                alignment=align if align > 1 else None))
        return self.strings[data, align]

    # the split ---------------------------------------------------------------------------
    def finish(self, path: str, source: str) -> tu_split.Plan:
        """Decide who defines what (tu_split.py), give the module its link names, and say
        what the remainder must change."""
        plan = tu_split.Plan([fn for name, fn in self.emitted.items()
                              if self.in_split(fn) and name not in self.copies],
                             needed=bool(self.fallbacks) or self.remainder_defines)
        if plan.needed:
            for entity in self.shared_internals():
                plan.renamed[entity] = tu_split.link_name(path, source, entity.spelling)
            self.leave_file_variables_to_remainder()
        names = {}
        callees = {name: fn for name, (fn, _) in self.callees.items()}
        for name, fn in {**callees, **self.emitted}.items():
            link = plan.renamed.get(fn.canonical)
            if link is not None:
                names[name] = tu_split.external_mangling(fn, link, self.cplusplus)
            elif (self.cplusplus or _asm_label(fn)) and fn.mangled_name != name:
                names[name] = fn.mangled_name
        for var, symbol in self.globals.items():
            if var in plan.renamed:
                names[symbol] = tu_split.external_mangling(var, plan.renamed[var],
                                                           self.cplusplus)
        self.address_the_remainders(plan)
        defined = {names.get(name, name) for name in self.emitted}
        for name, (_, decl) in self.callees.items():  # a name an asm label gives a definition
            if name not in self.emitted and names.get(name, name) in defined:
                decl.detach()
                decl.erase()
        tu_split.rename_symbols(self.module, names)
        for fn in self.emitted.values():
            if fn.canonical in plan.renamed:
                set_internal(self.emitted_op(names[fn.spelling]), False)
            elif fn.canonical in self.several_units:  # no remainder calls it: private
                set_internal(self.emitted_op(names.get(fn.spelling, fn.spelling)), True)
        self.give_visibility(plan, names)
        self.module.location = file_location(self.main_file)  # -g: the compile unit's file
        return plan

    def address_the_remainders(self, plan: tu_split.Plan) -> None:
        """`&f` of a `static` function MLIR defines is the remainder's `f` (its forwarding
        body, exported under `<link>_address`, tu_split.py), as the remainder's own `&f`
        is: a function has one address in C."""
        declared: set[str] = set()
        for op, fn in self.addresses:
            link = plan.renamed.get(fn.canonical)
            if link is None or fn.spelling not in self.emitted or \
                    fn.spelling in self.copies:
                continue
            address = f"{link}_address"
            plan.addressed.add(fn.canonical)
            if isinstance(op, llvm.AddressOfOp):
                op.properties["global_name"] = SymbolRefAttr(address)
            else:
                op.properties["value"] = SymbolRefAttr(address)
            if address not in declared:
                declared.add(address)
                self.module.body.block.add_op(self.signature(fn).declaration(address))

    def give_visibility(self, plan: tu_split.Plan, names: dict[str, str]) -> None:
        """The ELF visibility of each external definition, as the system compiler gives it
        (clang's, for the parse's -fvisibility=, attributes and pragmas); the internal
        symbols shared with the remainder under a link name are hidden: one program's."""
        defined: list[tuple[Cursor, Operation]] = [
            (fn, self.emitted_op(names.get(name, name))) for name, fn in self.emitted.items()]
        defined += [(var, op) for var, symbol in self.globals.items()
                    if isinstance(op := self.global_ops[symbol], llvm.GlobalOp) and
                    (op.value is not None or op.body.blocks)]
        for entity, op in defined:
            linkage = op.attributes.get("llvm.linkage") if isinstance(op, func.FuncOp) \
                else op.linkage
            if isinstance(linkage, llvm.LinkageAttr) and linkage.linkage.data != "external":
                continue
            code = 1 if entity.canonical in plan.renamed else visibility(entity)
            if not code:
                continue
            if isinstance(op, func.FuncOp):  # func-to-llvm makes it the llvm.func's
                op.attributes["visibility_"] = IntegerAttr(code, i64)
            else:
                op.visibility_ = IntegerAttr(code, i64)

    def shared_internals(self) -> set[Cursor]:
        """The internal functions and variables used on both sides: the split files', the
        inline functions MLIR defines that other units define too, and a header's that the
        remainder defines (its functions MLIR calls without a copy, its
        variables MLIR uses unless read-only: a constant table may have two copies)."""
        copies = {self.emitted[name].canonical for name in self.copies}
        emitted = {fn.canonical for fn in self.emitted.values()} - copies
        # (a project header's code uses what an included file approxcc compiles defines)
        remainder_uses = {n.referenced.canonical for d in self.declarations
                          if d.canonical not in emitted and
                          (self.in_split(d) or not d.location.is_in_system_header)
                          for n in d.walk_preorder()
                          if n.kind == CursorKind.DECL_REF_EXPR and n.referenced is not None}
        called = {fn.canonical for fn, _ in self.callees.values()}
        shared = set()
        for d in self.declarations:
            c = d.canonical
            if c in self.several_units and c in emitted:
                shared.add(c)  # the remainder's definition forwards to this unit's copy
            if d.linkage not in _INTERNAL:
                continue
            if not self.in_split(d):
                if d.kind == CursorKind.FUNCTION_DECL and d.is_definition() and \
                        c in called and c not in emitted or \
                        d.kind == CursorKind.VAR_DECL and c in self.globals and \
                        not self.keeps_copy(c):
                    shared.add(c)
            elif d.kind == CursorKind.FUNCTION_DECL and d.is_definition() and \
                    (c in emitted and c in remainder_uses or
                     c not in emitted and c not in copies and c in called):
                shared.add(c)
            elif d.kind == CursorKind.VAR_DECL and c in self.globals:
                shared.add(c)
        # one `static` declaring several variables loses its keyword for all of them
        main_vars = [d for d in self.declarations
                     if d.kind == CursorKind.VAR_DECL and self.in_split(d)]
        statics = {(d.location.file.name, tu_split.static_token(d)) for d in main_vars
                   if d.canonical in shared}
        return shared | {d.canonical for d in main_vars
                         if (d.location.file.name, tu_split.static_token(d)) in statics and
                         tu_split.static_token(d) is not None}

    def keeps_copy(self, var: Cursor) -> bool:
        """Whether a header's `static` variable the module uses is its own copy: a constant
        it defines (which constant-folds). Any other is the remainder's, one object."""
        op = self.global_ops[self.globals[var]]
        return op.constant is not None and (op.value is not None or bool(op.body.blocks))

    def leave_file_variables_to_remainder(self) -> None:
        """With a remainder, it defines every file-scope variable as written (those of the
        headers it includes too); the module keeps declarations of the ones it uses."""
        for var, symbol in self.globals.items():
            op = self.global_ops[symbol]
            in_header = not self.in_split(self.defining_declaration(var) or var)
            if var.semantic_parent.kind == CursorKind.FUNCTION_DECL or \
                    var.linkage in _INTERNAL and in_header and self.keeps_copy(var):
                continue  # `static` locals, a header's `static` constants: MLIR's own copy
            decl = global_vars.declaration_op(symbol, op.global_type, op.constant is not None,
                                              op.thread_local_ is not None)
            self.module.body.block.insert_op_before(decl, op)
            op.detach()
            op.erase()
            self.global_ops[symbol] = decl
