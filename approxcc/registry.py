"""The transform registry: one declaration per transform, read by every layer.

A transform is declared once, in one module, by calling `register(TransformSpec(...))` at
import time. The annotation grammar (directives, clauses, value checks), the dialect
verifier, the frontend's target rules, management emission, approx-transform, the tuner's
space, the ML decorators and the reference docs (docs/transforms.md) all read that
declaration, so adding a transform touches one file.

API:
- `TransformSpec`: name, what a value means, the exact value, a summary (default: the first
  line of the declaring module's docstring, after `name: `), the C side
  (`targets`: target kinds; `domain`: a `KnobDomain`; `clauses`/`requires`: clauses beyond
  the common ones and those it needs; hooks `verify(knob, spec)` (approx.knob verifier),
  `bind(knob)` (approx-bind-runtime) and `pattern` (the xDSL rewrite pattern of
  approx-transform)), and the ML side (`ml`: an `MLKnob` with default labels, a label
  checker and the exact label). A transform with no `targets` has no C directive; one
  without `ml` no ML decorator.
- `register(spec)`, `unregister(name)`, `transforms()` (built-ins by module name, then plugins),
  `get(name)` (the spec or None), `names(c=..., ml=...)`, `exact_value(name)`.
- Dynamic-knob defaults, one source for every layer: `DEFAULT_THRESHOLD_COUNT`,
  `DEFAULT_RANGE`, `default_thresholds(count, lo, hi)`.
- `reference_docs()`: the Markdown of docs/transforms.md (`python -m approxcc.transforms`
  prints it).

Discovery happens at the first lookup, plugin style: every module of the `approxcc.transforms`
package, then every entry point of the group `approxcc.transforms` (third-party packages),
then every module named in the environment variable `APPROXCC_TRANSFORMS` (comma-separated
importable module names; re-read whenever it changes). Importing a module is what
registers its transforms. This module imports no other approxcc layer but `diagnostics`.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from fractions import Fraction
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from approxcc.diagnostics import CompileError

if TYPE_CHECKING:
    from xdsl.pattern_rewriter import RewritePattern

ENV_VAR = "APPROXCC_TRANSFORMS"
ENTRY_POINT_GROUP = "approxcc.transforms"
BUILTIN_PACKAGE = "approxcc.transforms"

# What a knob wraps (`params.target`): a counted loop, a statement, a call, a function body.
TARGET_KINDS = ("loop", "statement", "call", "function")
# The clauses every directive takes; a transform may add its own (`TransformSpec.clauses`).
COMMON_CLAUSES = ("knob", "values", "state", "thresholds", "range", "check", "recover")

# A dynamic knob without `thresholds(...)`/`range(...)`.
DEFAULT_THRESHOLD_COUNT = 1
DEFAULT_RANGE = (0, 100)


def _round_half_away(x: Fraction) -> int:
    """Rounds like C's lround (Python's round() rounds half to even)."""
    magnitude = int(abs(x) + Fraction(1, 2))
    return magnitude if x >= 0 else -magnitude


def default_thresholds(count: int, lo: int, hi: int) -> list[int]:
    """`count` thresholds evenly spaced inside [lo, hi]: lo + (hi - lo) * (i + 1) / (count + 1),
    rounded half away from zero. The one definition management emission and the tuner share."""
    return [_round_half_away(lo + Fraction((hi - lo) * (i + 1), count + 1))
            for i in range(count)]


@dataclass(frozen=True)
class KnobDomain:
    """The integer values a C knob of this transform may take, and its default domain.

    `most` None = unbounded; `per_variant`: the upper bound (and the default's) is the
    number of `variants(...)`. `ordered`: neighbouring values behave alike, so the tuner
    may search them as a range rather than as unordered choices."""

    least: int
    most: int | None = None
    default: tuple[int, int] | None = None  # inclusive; None with per_variant
    per_variant: bool = False
    ordered: bool = True

    def bounds(self, variants: int = 0) -> tuple[int, int | None]:
        return self.least, variants if self.per_variant else self.most

    def defaults(self, variants: int = 0) -> tuple[int, ...]:
        """The values the tuner may choose when the annotation gives no `values(...)`."""
        lo, hi = (self.least, variants) if self.per_variant else (self.default or (0, 0))
        return tuple(range(lo, hi + 1))

    def meaning(self, variants: int = 0) -> str:
        """What a valid value is, as an error message says it."""
        least, most = self.bounds(variants)
        if self.per_variant:
            return f"must be between {least} and {most}, the number of variants"
        if most is None:
            return f"must be >= {least}"
        if most == least + 1:
            return f"must be {least} or {most}"
        return f"must be between {least} and {most}"

    def allows(self, value: int, variants: int = 0) -> bool:
        least, most = self.bounds(variants)
        return value >= least and (most is None or value <= most)


@dataclass(frozen=True)
class MLKnob:
    """The transform on an `@approx.knob` decorator (JAX): its labels and their meaning."""

    defaults: tuple[Any, ...]  # the labels offered without values=
    check: Callable[[Any], str | None]  # why a label is invalid (None = valid)
    exact: Any = None  # the exact label; None = it depends on the weights (e.g. their dtype)
    meaning: str = ""  # for the docs


@dataclass(frozen=True)
class TransformSpec:
    name: str  # the directive / transform_type
    value_meaning: str  # what a knob value v means (docs)
    exact: int  # the C knob value that does not approximate
    summary: str = ""  # one line for the docs; default: the declaring module's docstring's
    targets: frozenset[str] = frozenset()  # C target kinds (TARGET_KINDS); empty = no directive
    domain: KnobDomain | None = None  # C knob values
    clauses: tuple[str, ...] = ()  # clauses beyond COMMON_CLAUSES
    requires: tuple[str, ...] = ()  # clauses the directive cannot go without
    scalar_result: bool = False  # a call/function target must return an integer or float
    verify: Callable[[Any, TransformSpec], None] | None = None  # (KnobOp, self) → raises
    # xdsl's VerifyException
    bind: Callable[[Any], None] | None = None  # (KnobOp) at approx-bind-runtime
    pattern: RewritePattern | None = None  # rewrites its `approx.transform` (approx-transform)
    ml: MLKnob | None = None
    module: str = field(default="", compare=False)  # where it was declared (register sets it)

    @property
    def has_directive(self) -> bool:
        return bool(self.targets)

    def accepts(self, clause: str) -> bool:
        return clause in COMMON_CLAUSES or clause in self.clauses


_REGISTRY: dict[str, TransformSpec] = {}
_discovered = False
_env_seen: str | None = None


def register(spec: TransformSpec) -> TransformSpec:
    """Adds `spec`, declared by the calling module; a second declaration of the same name
    (from another module) is an error."""
    caller = sys._getframe(1).f_globals
    if not spec.module:
        spec = replace(spec, module=caller.get("__name__", ""))
    if not spec.summary:  # "name: summary." (or "name (note): summary.") on the first line
        first = (caller.get("__doc__") or spec.name).strip().splitlines()[0]
        spec = replace(spec, summary=first.split(": ", 1)[-1].rstrip("."))
    if spec.targets - set(TARGET_KINDS):
        raise ValueError(f"transform '{spec.name}': unknown target kinds "
                         f"{sorted(spec.targets - set(TARGET_KINDS))}")
    if spec.has_directive and (spec.domain is None or spec.pattern is None):
        raise ValueError(f"transform '{spec.name}': a C directive needs a domain and a pattern")
    previous = _REGISTRY.get(spec.name)
    if previous is not None and previous.module != spec.module:
        raise ValueError(f"transform '{spec.name}' is declared twice ({previous.module}, "
                         f"{spec.module})")
    _REGISTRY[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Forgets a transform (a plugin a test or a session loaded and is done with)."""
    _REGISTRY.pop(name, None)


def _import(module: str, origin: str) -> None:
    try:
        importlib.import_module(module)
    except Exception as err:  # a broken plugin is the user's mistake, not a crash
        raise CompileError(f"cannot load transform module '{module}' ({origin}): "
                           f"{type(err).__name__}: {err}") from None


def _discover() -> None:
    global _discovered, _env_seen
    if not _discovered:
        _discovered = True
        package = importlib.import_module(BUILTIN_PACKAGE)
        for info in pkgutil.iter_modules(package.__path__):
            if not info.name.startswith("_"):
                importlib.import_module(f"{BUILTIN_PACKAGE}.{info.name}")
        for entry in entry_points(group=ENTRY_POINT_GROUP):
            _import(entry.module, f"entry point '{entry.name}'")
    env = os.environ.get(ENV_VAR, "")
    if env != _env_seen:
        for module in filter(None, (m.strip() for m in env.split(","))):
            _import(module, f"${ENV_VAR}")
        _env_seen = env  # only once every module loaded: a failure is reported each time


def transforms() -> tuple[TransformSpec, ...]:
    """Built-in transforms by module name, then plugins in registration order: the same
    order whatever imported a built-in module first."""
    _discover()
    builtin = BUILTIN_PACKAGE + "."
    specs = list(_REGISTRY.values())
    return tuple(sorted((s for s in specs if s.module.startswith(builtin)),
                        key=lambda s: s.module)
                 + [s for s in specs if not s.module.startswith(builtin)])


def get(name: str) -> TransformSpec | None:
    _discover()
    return _REGISTRY.get(name)


def names(c: bool = False, ml: bool = False) -> tuple[str, ...]:
    """The registered names: all, or those with a C directive (`c`) / an ML decorator (`ml`)."""
    return tuple(s.name for s in transforms()
                 if (not c or s.has_directive) and (not ml or s.ml is not None))


def exact_value(name: str) -> int:
    spec = get(name)
    if spec is None:
        raise KeyError(name)
    return spec.exact


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _c_rows(specs: list[TransformSpec]) -> Iterator[str]:
    yield "| directive | targets | knob value `v` | exact | default values | valid values |"
    yield "|---|---|---|---|---|---|"
    for s in specs:
        assert s.domain is not None  # register() checked
        default = ("`0:len(variants)`" if s.domain.per_variant
                   else f"`{s.domain.default[0]}:{s.domain.default[1]}`"
                   if s.domain.default else "—")
        extra = "".join(f"; requires `{c}(...)`" for c in s.requires)
        only = "".join(f"; takes `{c}(...)`" for c in s.clauses if c not in s.requires)
        targets = ", ".join(k for k in TARGET_KINDS if k in s.targets)
        result = " (returning a scalar)" if s.scalar_result else ""
        least, most = s.domain.bounds()
        valid = (f"`{least}` to `len(variants)`" if s.domain.per_variant
                 else f"`>= {least}`" if most is None else f"`{least}` to `{most}`")
        yield (f"| `{s.name}` | {targets}{result}{extra}{only} | {_cell(s.value_meaning)} "
               f"| `{s.exact}` | {default} | {valid} |")


def reference_docs() -> str:
    """docs/transforms.md, generated from the built-in declarations (plugins excluded)."""
    specs = [s for s in transforms() if s.module.startswith(BUILTIN_PACKAGE + ".")]
    lines = [
        "# Transforms reference",
        "",
        "<!-- Generated by `python -m approxcc.transforms > docs/transforms.md`; "
        "do not edit. -->",
        "",
        "Every transform is declared once, in `approxcc/transforms/<name>.py`; the annotation",
        "grammar, the dialect verifier, the lowering, the tuner and this page read that",
        "declaration. See docs/annotations.md for the annotation language.",
        "",
        "## C and C++ directives (`#pragma approx DIRECTIVE ...`)",
        "",
        *_c_rows([s for s in specs if s.has_directive]),
        "",
        "Target kinds: `loop` a counted `for` loop, `statement` an expression statement, a",
        "`{}` block or an `if`, `call` a statement holding exactly one call, `function` a",
        "function definition (every call to it).",
        "",
        "Every directive takes the clauses "
        + ", ".join(f"`{c}`" for c in COMMON_CLAUSES) + ".",
        f"A dynamic knob (`state(...)`) has {DEFAULT_THRESHOLD_COUNT} threshold unless "
        "`thresholds(N)` says otherwise,",
        f"searched in `range({DEFAULT_RANGE[0]}:{DEFAULT_RANGE[1]})` unless `range(lo:hi)` "
        "says otherwise; an unconfigured",
        "tree has evenly spaced thresholds (rounded half away from zero) and exact decisions.",
        "",
        "## ML decorators (`@approx.knob(..., transform=NAME)`)",
        "",
        "| transform | labels | default labels | exact label |",
        "|---|---|---|---|",
    ]
    for s in specs:
        if s.ml is None:
            continue
        exact = "the weights' own" if s.ml.exact is None else f"`{s.ml.exact!r}`"
        defaults = ", ".join(f"`{v!r}`" for v in s.ml.defaults) or "—"
        lines.append(f"| `{s.name}` | {_cell(s.ml.meaning or s.summary)} | {defaults} "
                     f"| {exact} |")
    lines += ["", "## Summaries", ""]
    lines += [f"- `{s.name}`: {s.summary}" for s in specs]
    return "\n".join(lines) + "\n"

