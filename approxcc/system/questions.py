"""Question files in the NQ-open JSONL format: one `{"question": str, "answer": [str, ...]}`
a line. A malformed line is a `CompileError` at `FILE:LINE`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from approxcc.diagnostics import CompileError, SourceLocation


@dataclass(frozen=True)
class Question:
    question: str
    answers: tuple[str, ...]


def _parse(text: str) -> Question:
    """One line's question; ValueError says what is wrong with it."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"malformed JSON: {err.msg}") from None
    if not isinstance(data, dict):
        raise ValueError("expected an object with 'question' and 'answer'")
    question, answers = data.get("question"), data.get("answer")
    if not isinstance(question, str) or not question.strip():
        raise ValueError("'question' must be a non-empty string")
    if (not isinstance(answers, list) or not answers
            or not all(isinstance(a, str) and a.strip() for a in answers)):
        raise ValueError("'answer' must be a non-empty array of non-empty strings")
    return Question(question, tuple(answers))


def load_questions(path: Path, limit: int | None = None) -> list[Question]:
    """The questions of a JSONL file (blank lines skipped), the first `limit` of them."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise CompileError(f"cannot read '{path}': {err.strerror}") from None
    except UnicodeDecodeError:
        raise CompileError("not UTF-8 text", SourceLocation(str(path), 1, 1)) from None
    out: list[Question] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(_parse(line))
        except ValueError as err:
            raise CompileError(str(err), SourceLocation(str(path), n, 1)) from None
        if limit is not None and len(out) == limit:
            break
    if not out:
        raise CompileError(f"'{path}' holds no question")
    return out
