"""Finds approx annotations (`#pragma approx ...` and `// @approx ...`) in C/C++ source text.

A small lexical pass blanks out comments and notes which lines begin inside a comment or a
literal, so annotation-looking text there is ignored and comment-only lines are recognised.
Lines are then grouped into logical lines (backslash-newline continues one) and classified to
find each annotation's target: the next logical line that is real code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from approxcc.annotations.grammar import Annotation, parse_annotation
from approxcc.diagnostics import SourceLocation

_LEXEME = re.compile(r"""
    (?P<comment> //(?:\\\r?\n|[^\n])* | /\*.*?(?:\*/|\Z) )
  | (?P<literal>
        (?:u8|u|U|L)?R"(?P<delim>[^()\\\s]{0,16})\(.*?\)(?P=delim)"
      | (?:u8|u|U|L)?(?P<q>["'])(?:\\\r?\n|\\.|(?!(?P=q))[^\\\n])*(?P=q)?  # ends at a newline
    )
  | \.?[0-9](?:[eEpP][+-]|'[A-Za-z0-9_]|[A-Za-z0-9_.])*  # a number: 1'000 holds no char literal
  | [A-Za-z_][A-Za-z0-9_]*
  | [^"'/.A-Za-z0-9_]+
  | .
""", re.VERBOSE | re.DOTALL)

_PRAGMA = re.compile(r"[ \t]*#[ \t]*pragma[ \t]+approx\b")
_COMMENT = re.compile(r"[ \t]*//[ \t]*@approx\b")


@dataclass(frozen=True)
class _Line:
    """A logical line: physical lines joined by backslash-newline."""

    number: int  # 1-based number of its first physical line
    last: int  # 1-based number of its last physical line
    kind: str  # "annotation" | "skip" (blank, comment, preprocessor) | "code" | "closing" (`}`)
    text: str = ""  # annotations: what follows the word `approx`, comments blanked
    loc: SourceLocation | None = None  # annotations: where `text` starts


def scan_annotations(path: str, source: str) -> list[Annotation]:
    """Every annotation in `source`, in order, each checked and given its target line."""
    lines = _logical_lines(path, source)
    annotations = []
    for n, line in enumerate(lines):
        if line.kind != "annotation":
            continue
        # Stacked annotations, comments and other directives are skipped to reach the target.
        target = next((t for t in lines[n + 1:] if t.kind in ("code", "closing")), None)
        target_line = target.number if target and target.kind == "code" else 0
        annotation = parse_annotation(line.text, line.loc, target_line)
        annotations.append(replace(annotation, lines=(line.number, line.last)))
    return annotations


def _logical_lines(path: str, source: str) -> list[_Line]:
    masked, starts_in_code = _lex(source)
    physical = source.split("\n")
    offsets = [0]
    for text in physical:
        offsets.append(offsets[-1] + len(text) + 1)
    lines = []
    first = 0
    while first < len(physical):
        last = first
        while last + 1 < len(physical) and physical[last].rstrip("\r").endswith("\\"):
            last += 1
        begin, end = offsets[first], offsets[last] + len(physical[last])
        code = masked[begin:end].strip()
        match = starts_in_code[first] and (_PRAGMA.match(source, begin, end)
                                           or _COMMENT.match(source, begin, end))
        if match:
            # A pragma's own comments are blanked already; a structured comment's body is
            # lexed on its own so that a trailing `// note` in it is dropped too.
            body = source[match.end():end]
            body = masked[match.end():end] if match.re is _PRAGMA else _lex(body)[0]
            loc = SourceLocation(path, first + 1, match.end() - begin + 1)
            lines.append(_Line(first + 1, last + 1, "annotation", body, loc))
        elif not code or (starts_in_code[first] and code.startswith("#")):
            lines.append(_Line(first + 1, last + 1, "skip"))
        else:
            kind = "closing" if code.startswith("}") else "code"
            lines.append(_Line(first + 1, last + 1, kind))
        first = last + 1
    return lines


def _lex(source: str) -> tuple[str, list[bool]]:
    """`source` with comments blanked (newlines kept), and for each physical line whether it
    begins outside every comment and literal."""
    pieces = []
    starts_in_code = [True]
    for m in _LEXEME.finditer(source):
        token = m[0]
        inside = bool(m["comment"] or m["literal"])
        starts_in_code += [not inside] * token.count("\n")
        pieces.append(re.sub(r"[^\n]", " ", token) if m["comment"] else token)
    return "".join(pieces), starts_in_code
