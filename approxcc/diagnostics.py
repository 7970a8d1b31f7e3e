"""Clang-style diagnostics: every user mistake is `file:line:col: error: ...`, never a traceback."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class SourceLocation:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass
class Diagnostic:
    severity: str  # "error" | "warning" | "note"
    message: str
    loc: SourceLocation | None = None
    notes: list[Diagnostic] = field(default_factory=list)

    def render(self, show_source: bool = True) -> str:
        head = f"{self.loc}: " if self.loc else "approxcc: "
        lines = [f"{head}{self.severity}: {self.message}"]
        if show_source and self.loc is not None:
            lines += _source_excerpt(self.loc)
        for note in self.notes:
            lines.append(note.render(show_source))
        return "\n".join(lines)


class CompileError(Exception):
    """A user-facing error; the driver prints it and exits with status 1."""

    def __init__(self, message: str, loc: SourceLocation | None = None,
                 notes: list[Diagnostic] | None = None):
        super().__init__(message)
        self.diagnostic = Diagnostic("error", message, loc, notes or [])


def note(message: str, loc: SourceLocation | None = None) -> Diagnostic:
    return Diagnostic("note", message, loc)


def warn(message: str, loc: SourceLocation | None = None) -> None:
    print(Diagnostic("warning", message, loc).render(), file=sys.stderr)


def _source_excerpt(loc: SourceLocation) -> list[str]:
    try:
        text = Path(loc.file).read_text(errors="replace").splitlines()
    except OSError:
        return []
    if not 1 <= loc.line <= len(text):
        return []
    src = text[loc.line - 1].expandtabs(1)
    return [src, " " * max(loc.col - 1, 0) + "^"]
