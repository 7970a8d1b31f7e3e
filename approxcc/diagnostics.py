"""Clang-style diagnostics: every user mistake is `file:line:col: error: ...`, never a traceback.

All diagnostics go through the engine of the compilation under way (`report()` and
`warn()` find it; `with DiagnosticEngine(...)` starts one), which applies the warning
options of the command line (`-w`, `-Werror`, `-Werror=FLAG`, `-Wno-error=FLAG`,
`-Wno-FLAG`), counts the errors and warnings (the driver exits with status 1 when there is
an error; after each translation unit it prints "N errors generated.") and renders them
like clang 22:

    a.c:3:9: error: duplicate knob name 'k'
        3 |   #pragma approx loop_perforate knob(k)
          |         ^

in colour when stderr is a terminal (`-fdiagnostics-color=auto`, the default), always or never.
"""

from __future__ import annotations

import os
import sys
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

# clang's colours: bold location and message, red errors, magenta warnings, black notes,
# green caret.
_RESET, _BOLD = "\x1b[0m", "\x1b[1m"
_SEVERITY_COLOUR = {"error": "\x1b[0;1;31m", "fatal error": "\x1b[0;1;31m",
                    "warning": "\x1b[0;1;35m", "note": "\x1b[0;1;30m"}
_CARET_COLOUR = "\x1b[0;1;32m"


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
    flag: str | None = None  # the warning option that controls it, e.g. "-Wunused-variable"

    def render(self, show_source: bool = True, color: bool = False,
               werror: bool = False) -> str:
        """The diagnostic and its notes; `werror` marks a warning promoted by -Werror."""
        head = f"{self.loc}: " if self.loc else "approxcc: "
        message = self.message
        options = ["-Werror"] * werror + [self.flag] * bool(self.flag)
        if options:
            message += f" [{','.join(options)}]"
        if color:
            lines = [f"{_BOLD}{head}{_RESET}{_SEVERITY_COLOUR[self.severity]}{self.severity}: "
                     f"{_RESET}{_BOLD}{message}{_RESET}"]
        else:
            lines = [f"{head}{self.severity}: {message}"]
        if show_source and self.loc is not None:
            lines += _source_excerpt(self.loc, color)
        lines += [n.render(show_source, color) for n in self.notes]
        return "\n".join(lines)


class CompileError(Exception):
    """A user-facing error; the driver reports it and exits with status 1."""

    def __init__(self, message: str, loc: SourceLocation | None = None,
                 notes: list[Diagnostic] | None = None, flag: str | None = None):
        super().__init__(message)
        self.diagnostic = Diagnostic("error", message, loc, notes or [], flag)


def note(message: str, loc: SourceLocation | None = None) -> Diagnostic:
    return Diagnostic("note", message, loc)


@dataclass
class WarningOptions:
    """What the command line says about warnings (flags spelled with their `-W`)."""

    ignore_all: bool = False                                 # -w
    all_errors: bool = False                                 # -Werror
    errors: set[str] = field(default_factory=set)            # -Werror=FLAG
    not_errors: set[str] = field(default_factory=set)        # -Wno-error=FLAG
    disabled: set[str] = field(default_factory=set)          # -Wno-FLAG

    def promoted(self, flag: str | None) -> bool:
        if flag in self.errors:
            return True
        return self.all_errors and flag not in self.not_errors


@dataclass
class DiagnosticEngine:
    """One compilation's diagnostics: renders them to stderr and counts them.

    `with DiagnosticEngine(...) as engine:` makes it the current engine (a context variable,
    so concurrent builds in threads and successive in-process runs never share counts or
    colour); `report` and `warn` go to the current one."""

    warnings: WarningOptions = field(default_factory=WarningOptions)
    color: str = "auto"  # never | always | auto
    errors: int = 0
    warnings_shown: int = 0
    _token: Token[DiagnosticEngine | None] | None = field(default=None, repr=False)

    def __enter__(self) -> DiagnosticEngine:
        self._token = _CURRENT.set(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _CURRENT.reset(self._token)
            self._token = None

    def use_color(self, stream: TextIO) -> bool:
        if self.color != "auto":
            return self.color == "always"
        return stream.isatty() and os.environ.get("TERM") != "dumb"

    def report(self, diag: Diagnostic) -> None:
        promoted = False
        if diag.severity == "warning":
            if self.warnings.ignore_all or diag.flag in self.warnings.disabled:
                return
            promoted = self.warnings.promoted(diag.flag)
            if promoted:
                diag = Diagnostic("error", diag.message, diag.loc, diag.notes, diag.flag)
            else:
                self.warnings_shown += 1
        if diag.severity in ("error", "fatal error"):
            self.errors += 1
        print(diag.render(color=self.use_color(sys.stderr), werror=promoted), file=sys.stderr)

    def counts(self) -> tuple[int, int]:
        return self.warnings_shown, self.errors

    def summarize(self, since: tuple[int, int] = (0, 0)) -> None:
        """clang's line after a translation unit: "1 warning and 2 errors generated." """
        warnings, errors = (now - then for now, then in zip(self.counts(), since, strict=True))
        parts = [f"{n} {word}{'s' * (n != 1)}"
                 for n, word in ((warnings, "warning"), (errors, "error")) if n]
        if parts:
            print(f"{' and '.join(parts)} generated.", file=sys.stderr)


_CURRENT: ContextVar[DiagnosticEngine | None] = ContextVar("approxcc_diagnostics",
                                                            default=None)
_OUTSIDE = DiagnosticEngine()  # what is reported outside any compilation (library callers)


def current_engine() -> DiagnosticEngine:
    """The engine of the compilation under way (outside one: a default, plain engine)."""
    return _CURRENT.get() or _OUTSIDE


def report(diag: Diagnostic) -> None:
    current_engine().report(diag)


def warn(message: str, loc: SourceLocation | None = None, flag: str | None = None) -> None:
    current_engine().report(Diagnostic("warning", message, loc, flag=flag))


def internal_error(exc: BaseException, notes: list[str]) -> None:
    """clang's form for a bug in approxcc: `approxcc: error: internal compiler error: ...`,
    then `approxcc: note: ...` lines (where it was raised, the reproducer)."""
    message = f"{type(exc).__name__}: {exc}".rstrip(": ")
    report(Diagnostic("error", f"internal compiler error: {message}",
                      notes=[Diagnostic("note", n) for n in notes]))


def _source_excerpt(loc: SourceLocation, color: bool) -> list[str]:
    """The source line with clang's line-number gutter, and the caret under the column."""
    try:
        text = Path(loc.file).read_text(errors="replace").splitlines()
    except OSError:
        return []
    if not 1 <= loc.line <= len(text):
        return []
    number = str(loc.line).rjust(5)
    caret = " " * max(loc.col - 1, 0) + "^"
    if color:
        caret = f"{_CARET_COLOUR}{caret}{_RESET}"
    return [f"{number} | {text[loc.line - 1].expandtabs(1)}", f"{' ' * len(number)} | {caret}"]
