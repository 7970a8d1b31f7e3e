"""The C expressions of `state(...)`, `check(...)` and `recover(...)`, compiled where they stand.

Pragmas and comments are not in clang's AST, so an in-memory copy of the source turns each
annotation with expressions into one statement clang parses in the target's scope:

    if(0){(void)((STATE),(CHECK),(RECOVER));}

on the annotation's own line (a statement target), or right after the `{` of the annotated
function (a definition target: the parameters are in scope there). No line moves, so every
other diagnostic keeps its place; clang's diagnostics inside the statement are mapped back
to the clause text. The frontend takes the expressions from the AST and never emits the
statement itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from clang.cindex import Cursor, CursorKind

from approxcc.annotations import Annotation, ClauseExpr
from approxcc.diagnostics import SourceLocation

CLAUSES = ("state", "check", "recover")


@dataclass
class _Site:
    annotation: Annotation
    line: int = 0
    col: int = 0  # of the inserted `if`
    length: int = 0  # of the inserted statement
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)  # clause → [start, end)
    exprs: dict[str, Cursor] = field(default_factory=dict)


def _clauses(a: Annotation) -> list[tuple[str, ClauseExpr]]:
    return [(name, e) for name in CLAUSES if (e := getattr(a, name)) is not None]


class ClauseSites:
    """The sites of the annotations with expressions, in every file that holds annotations
    (the main file and the included files approxcc compiles)."""

    def __init__(self, sources: dict[str, str], annotations: list[Annotation]):
        self.sources = sources  # each file's text, by the name libclang gives it
        self.sites = [_Site(a) for a in annotations if _clauses(a)]
        self.by_pos: dict[tuple[str, int, int], _Site] = {}

    def __bool__(self) -> bool:
        return bool(self.sites)

    def rewrite(self, function_bodies: dict[tuple[str, int], tuple[int, int]]) -> dict[str, str]:
        """Each file holding a site, with its sites inserted; `function_bodies` maps (file,
        line) of an annotated function definition to the (line, col) of its body's `{`."""
        lines = {a.loc.file: self.sources[a.loc.file].split("\n")
                 for a in (site.annotation for site in self.sites)}
        for site in self.sites:
            file, rows = site.annotation.loc.file, lines[site.annotation.loc.file]
            first, last = site.annotation.lines
            for n in range(first - 1, last):  # the annotation itself: blank, lines kept
                rows[n] = " " * len(rows[n].rstrip("\r"))
            brace = function_bodies.get((file, site.annotation.target_line))
            site.line, site.col = (brace[0], brace[1] + 1) if brace else (first, 1)
            text = self._statement(site)
            site.length = len(text)
            row = rows[site.line - 1]
            rows[site.line - 1] = row[:site.col - 1] + text + row[site.col - 1:]
            self.by_pos[(file, site.line, site.col)] = site
        return {file: "\n".join(rows) for file, rows in lines.items()}

    @staticmethod
    def _statement(site: _Site) -> str:
        text = "if(0){(void)("
        for i, (name, expr) in enumerate(_clauses(site.annotation)):
            text += "," if i else ""
            start = site.col + len(text) + 1  # past the "("
            site.spans[name] = (start, start + len(expr.text))
            text += f"({expr.text})"
        return text + ");}"

    def original(self, where: SourceLocation) -> SourceLocation | None:
        """Where a position inside an inserted statement comes from in the annotation."""
        for site in self.sites:
            if (site.annotation.loc.file, site.line) != (where.file, where.line):
                continue
            for name, (start, end) in site.spans.items():
                if start <= where.col <= end:
                    loc = getattr(site.annotation, name).loc
                    return SourceLocation(loc.file, loc.line, loc.col + where.col - start)
            if site.col <= where.col < site.col + site.length:
                return site.annotation.loc
        return None

    def site(self, c: Cursor) -> _Site | None:
        if c.kind != CursorKind.IF_STMT or not self.by_pos:
            return None
        at = c.location
        return self.by_pos.get((at.file.name, at.line, at.column)) if at.file else None

    def is_site(self, c: Cursor) -> bool:
        return self.site(c) is not None

    def collect(self, fn: Cursor) -> None:
        """Record the clause expressions of the sites inside one function definition."""
        if not self.by_pos:
            return
        for node in fn.walk_preorder():
            if (site := self.site(node)) is None:
                continue
            for n in node.walk_preorder():
                ext = n.extent
                for name, (start, end) in site.spans.items():
                    if name not in site.exprs and ext.start.line == site.line and \
                            (ext.start.column, ext.end.column) == (start, end):
                        site.exprs[name] = n

    def expr(self, a: Annotation, clause: str) -> Cursor | None:
        return next((s.exprs.get(clause) for s in self.sites if s.annotation is a), None)
