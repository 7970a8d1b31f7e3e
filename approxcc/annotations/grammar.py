"""The approx annotation language: the `Annotation` record and the clause parser/checker.

After the word `approx` an annotation reads `DIRECTIVE CLAUSE*`, each clause `NAME ( ARGS )`.
Every error is a `CompileError` located at the offending token, so the text is parsed with
offsets and turned into line/column only when something has to be reported.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from approxcc import registry
from approxcc.diagnostics import CompileError, Diagnostic, SourceLocation, note
from approxcc.registry import TransformSpec

_MAX_VALUES = 4096  # largest `values(lo:hi)` range
# A clause that only makes sense together with another one.
_REQUIRES = {"thresholds": "state", "range": "state", "recover": "check"}

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INT = re.compile(r"[+-]?[0-9]+")
_TOKEN = re.compile(r"[A-Za-z0-9_]+|\S")
_CONTINUATION = re.compile(r"\\\r?\n")
# A string or character literal; `\\.` also steps over a backslash-newline inside one.
_LITERAL = re.compile(r"""("|')(?:\\\r?\n|\\.|(?!\1)[^\\\n])*\1""", re.DOTALL)


@dataclass(frozen=True)
class ClauseExpr:
    """The text of a C expression from state(...), check(...) or recover(...)."""

    text: str
    loc: SourceLocation  # the expression's first character


@dataclass(frozen=True)
class Annotation:
    directive: str
    loc: SourceLocation  # the directive word
    target_line: int = 0  # line of the annotated statement/definition; 0 = none found
    knob: str | None = None
    values: tuple[int, ...] | None = None  # expanded, in the order written; None = not given
    variants: tuple[str, ...] = ()
    state: ClauseExpr | None = None
    thresholds: int | None = None
    range: tuple[int, int] | None = None
    check: ClauseExpr | None = None
    recover: ClauseExpr | None = None  # None = recover(exact), the default
    clause_locs: Mapping[str, SourceLocation] = field(
        default_factory=lambda: MappingProxyType({}), hash=False)
    lines: tuple[int, int] = (0, 0)  # first and last physical line of the annotation itself

    @property
    def spec(self) -> TransformSpec:
        spec = registry.get(self.directive)
        assert spec is not None  # the parser accepts registered directives only
        return spec

    def domain(self) -> tuple[int, ...]:
        """The values the tuner may choose: `values(...)`, else the directive's default."""
        if self.values is not None:
            return self.values
        assert self.spec.domain is not None  # a directive has a domain (registry checks)
        return self.spec.domain.defaults(len(self.variants))

    @property
    def dynamic(self) -> bool:
        return self.state is not None

    def threshold_count(self) -> int:
        if self.thresholds is not None:
            return self.thresholds
        return registry.DEFAULT_THRESHOLD_COUNT if self.dynamic else 0

    def threshold_range(self) -> tuple[int, int]:
        return self.range if self.range is not None else registry.DEFAULT_RANGE


def parse_annotation(text: str, loc: SourceLocation, target_line: int = 0) -> Annotation:
    """Parse and check `text` (everything after the word `approx`), which starts at `loc`.

    `text` may hold backslash-newline continuations; they count as whitespace (and are removed
    from expression texts), and locations after them land on the right line and column.
    """
    return _Parser(text, loc).parse(target_line)


@dataclass(frozen=True)
class _Clause:
    name: str
    start: int  # offset of the clause keyword
    args: tuple[int, int]  # offsets of the text between the parentheses
    close: int  # offset of the closing parenthesis


class _Parser:
    def __init__(self, text: str, loc: SourceLocation):
        self.raw = text
        # Same offsets as `raw`, with continuation backslashes blanked so they read as spaces.
        self.text = _CONTINUATION.sub(lambda m: " " * (len(m[0]) - 1) + "\n", text)
        self.base = loc
        self.pos = 0

    # -- locations and errors -------------------------------------------------------------

    def loc(self, offset: int) -> SourceLocation:
        newlines = self.text.count("\n", 0, offset)
        if newlines == 0:
            return SourceLocation(self.base.file, self.base.line, self.base.col + offset)
        col = offset - self.text.rindex("\n", 0, offset)
        return SourceLocation(self.base.file, self.base.line + newlines, col)

    def error(self, message: str, offset: int,
              notes: list[Diagnostic] | None = None) -> CompileError:
        return CompileError(message, self.loc(offset), notes)

    def token_at(self, offset: int) -> str:
        m = _TOKEN.match(self.text, offset)
        return m[0] if m else ""

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def strip(self, start: int, end: int) -> tuple[int, int]:
        """Offsets of text[start:end] without surrounding whitespace."""
        while start < end and self.text[start].isspace():
            start += 1
        while end > start and self.text[end - 1].isspace():
            end -= 1
        return start, end

    # -- syntax ---------------------------------------------------------------------------

    def parse(self, target_line: int) -> Annotation:
        self.skip_space()
        directive_at = self.pos
        directives = registry.names(c=True)
        m = _IDENT.match(self.text, self.pos)
        if not m:
            raise self.error("expected an approx directive (one of "
                             + ", ".join(directives) + ")", directive_at)
        directive = m[0]
        spec = registry.get(directive)
        if spec is None or not spec.has_directive:
            raise self.error(f"unknown approx directive '{directive}'"
                             + _suggest(directive, directives), directive_at)
        self.pos = m.end()
        clauses: dict[str, _Clause] = {}
        while True:
            self.skip_space()
            if self.pos == len(self.text):
                break
            clause = self.clause(directive)
            if clause.name in clauses:
                first = clauses[clause.name]
                raise self.error(f"duplicate '{clause.name}' clause", clause.start, [
                    note(f"previous '{clause.name}' clause is here", self.loc(first.start))])
            clauses[clause.name] = clause
        return self.check(directive, directive_at, clauses, target_line)

    def clause(self, directive: str) -> _Clause:
        start = self.pos
        m = _IDENT.match(self.text, start)
        if not m:
            if self.text[start] == ")":
                raise self.error("unmatched ')'", start)
            raise self.error("extra tokens at end of approx annotation", start)
        name = m[0]
        known = _all_clauses()
        if name not in known:
            raise self.error(f"unknown clause '{name}' in '{directive}' annotation"
                             + _suggest(name, known), start)
        self.pos = m.end()
        self.skip_space()
        if not self.text.startswith("(", self.pos):
            found = self.token_at(self.pos)
            raise self.error(f"expected '(' after '{name}'"
                             + (f", found '{found}'" if found else ""), self.pos)
        close = self.closing_paren(self.pos, name)
        clause = _Clause(name, start, (self.pos + 1, close), close)
        self.pos = close + 1
        return clause

    def closing_paren(self, open_at: int, name: str) -> int:
        """Offset of the ')' matching the '(' at `open_at`; literals may hold parentheses."""
        depth, i = 0, open_at
        while i < len(self.raw):
            c = self.raw[i]
            if c in "\"'":
                m = _LITERAL.match(self.raw, i)
                if not m:
                    raise self.error(f"missing terminating {c} character", i)
                i = m.end()
                continue
            depth += {"(": 1, ")": -1}.get(c, 0)
            if depth == 0:
                return i
            i += 1
        raise self.error(f"unmatched '(' in '{name}' clause", open_at)

    # -- clause contents ------------------------------------------------------------------

    def args(self, clause: _Clause) -> tuple[int, int]:
        """Offsets of the stripped clause arguments; empty ones are an error."""
        start, end = self.strip(*clause.args)
        if start == end:
            raise self.error(f"empty '{clause.name}' clause", clause.close)
        return start, end

    def items(self, clause: _Clause) -> list[tuple[str, int]]:
        """The comma-separated arguments, stripped, each with its offset."""
        self.args(clause)
        start, end = clause.args
        items, piece = [], start
        for i in range(start, end + 1):
            if i == end or self.text[i] == ",":
                s, e = self.strip(piece, i)
                items.append((self.text[s:e], s))  # an empty item points at the ',' or ')'
                piece = i + 1
        return items

    def integer(self, text: str, offset: int, clause: str) -> int:
        if not _INT.fullmatch(text):
            found = f", found '{text}'" if text else ""
            raise self.error(f"expected integer in '{clause}' clause{found}", offset)
        value = int(text)
        if not -2**63 <= value < 2**63:  # knob values and thresholds are i64 in the IR
            raise self.error(f"'{clause}' value {text} does not fit in a 64-bit integer", offset)
        return value

    def bounds(self, clause: _Clause) -> tuple[tuple[int, int], tuple[int, int]] | None:
        """`lo:hi` as ((lo, offset), (hi, offset)), or None when the clause is not of that form."""
        start, end = self.args(clause)
        colon = self.text.find(":", start, end)
        if colon < 0 or "," in self.text[start:end]:
            return None
        lo, hi = self.strip(start, colon), self.strip(colon + 1, end)
        return ((self.integer(self.text[lo[0]:lo[1]], lo[0], clause.name), lo[0]),
                (self.integer(self.text[hi[0]:hi[1]], hi[0], clause.name), hi[0]))

    def identifier(self, clause: _Clause, text: str, offset: int, what: str) -> str:
        if not text:
            raise self.error(f"expected identifier in '{clause.name}' clause", offset)
        if not _IDENT.fullmatch(text):
            raise self.error(f"invalid {what} name '{text}' (expected a C identifier)", offset)
        return text

    def expr(self, clause: _Clause) -> ClauseExpr:
        start, end = self.args(clause)
        return ClauseExpr(_CONTINUATION.sub("", self.raw[start:end]), self.loc(start))

    # -- semantic checks ------------------------------------------------------------------

    def check(self, directive: str, directive_at: int, clauses: dict[str, _Clause],
              target_line: int) -> Annotation:
        spec = registry.get(directive)
        assert spec is not None and spec.domain is not None  # parse() checked
        for c in clauses.values():
            if not spec.accepts(c.name):
                owners = [s.name for s in registry.transforms() if c.name in s.clauses]
                raise self.error(f"'{c.name}' clause is only valid on "
                                 + " or ".join(f"'{o}'" for o in owners)
                                 + f", not '{directive}'", c.start)
            needed = _REQUIRES.get(c.name)
            if needed and needed not in clauses:
                raise self.error(f"'{c.name}' clause requires a '{needed}' clause", c.start)
        for needed in spec.requires:
            if needed not in clauses:
                raise self.error(f"'{directive}' requires a '{needed}' clause", directive_at)

        fields: dict[str, object] = {}
        if c := clauses.get("knob"):
            start, end = self.args(c)
            fields["knob"] = self.identifier(c, self.text[start:end], start, "knob")
        if c := clauses.get("variants"):
            fields["variants"] = tuple(self.identifier(c, t, o, "variant")
                                       for t, o in self.items(c))
        if c := clauses.get("values"):
            fields["values"] = self.domain_values(spec, c, len(fields.get("variants", ())))
        if c := clauses.get("thresholds"):
            start, end = self.args(c)
            n = self.integer(self.text[start:end], start, "thresholds")
            if not 1 <= n <= _MAX_VALUES:
                raise self.error(f"'thresholds' must be between 1 and {_MAX_VALUES}, got {n}",
                                 start)
            fields["thresholds"] = n
        if c := clauses.get("range"):
            span = self.bounds(c)
            if span is None:
                start, _ = self.args(c)
                raise self.error("expected 'lo:hi' in 'range' clause", start)
            (lo, lo_at), (hi, _) = span
            if lo >= hi:
                kind = "reversed" if lo > hi else "empty"
                raise self.error(f"{kind} range {lo}:{hi} in 'range' clause (lower bound must "
                                 "be less than upper bound)", lo_at)
            fields["range"] = (lo, hi)
        for name in ("state", "check"):
            if c := clauses.get(name):
                fields[name] = self.expr(c)
        if c := clauses.get("recover"):
            recover = self.expr(c)
            fields["recover"] = None if recover.text == "exact" else recover
        locs = MappingProxyType({c.name: self.loc(c.start) for c in clauses.values()})
        return Annotation(directive, self.loc(directive_at), target_line,
                          clause_locs=locs, **fields)

    def domain_values(self, spec: TransformSpec, clause: _Clause,
                      n_variants: int) -> tuple[int, ...]:
        """The expanded `values`, each checked against what the directive can do."""
        span = self.bounds(clause)
        if span is None:
            listed = [(self.integer(t, o, "values"), o) for t, o in self.items(clause)]
            # Repeats add nothing to the tuner's domain; keep the order of first occurrence.
            expanded = tuple(dict.fromkeys(v for v, _ in listed))
        else:
            (lo, lo_at), (hi, _) = span
            if lo > hi:
                raise self.error(f"reversed range {lo}:{hi} in 'values' clause", lo_at)
            if hi - lo >= _MAX_VALUES:  # a typo like 1:10000000 must not exhaust memory
                raise self.error(f"range {lo}:{hi} in 'values' clause is too large (at most "
                                 f"{_MAX_VALUES} values)", lo_at)
            listed, expanded = list(span), tuple(range(lo, hi + 1))
        domain = spec.domain
        assert domain is not None  # a directive has a domain (registry checks)
        # Checking a range's two bounds covers everything between them.
        for value, offset in listed:
            if not domain.allows(value, n_variants):
                raise self.error(f"value {value} is not valid for '{spec.name}' "
                                 f"({domain.meaning(n_variants)})", offset)
        return expanded


def _all_clauses() -> tuple[str, ...]:
    """Every clause some directive takes: the common ones, then the transforms' own."""
    extra = (c for s in registry.transforms() for c in s.clauses)
    return tuple(dict.fromkeys((*registry.COMMON_CLAUSES, *extra)))


def _suggest(word: str, choices: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.7)
    return f"; did you mean '{close[0]}'?" if close else ""
