"""How a system's answer to a question is scored: system.toml's `[qos] metric`, a score in
[0, 1] per question against its gold answers. The system's loss is the drop in mean score
from the exact system's.

* `contains` (default): 1 when the answer contains a gold answer, on word boundaries after
  SQuAD normalisation (NQ-open's accuracy);
* `exact`: 1 when the normalised answer equals a normalised gold answer;
* `f1`: the best token F1 (SQuAD's) of the normalised answer against a gold answer;
* `FILE.py:FUNCTION` (FILE beside system.toml): the user's
  `FUNCTION(question: str, answer: str, gold: list[str]) -> float` in [0, 1].
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

from approxcc.diagnostics import CompileError, SourceLocation
from approxcc.system.pipeline import load_attribute
from approxcc.system.questions import Question
from approxcc.tune.qos import accuracy_loss, normalize_answer

Score = Callable[[Question, str], float]


def contains(question: Question, answer: str) -> float:
    return float(any(accuracy_loss(gold, answer) == 0.0 for gold in question.answers))


def exact_match(question: Question, answer: str) -> float:
    said = normalize_answer(answer)
    return float(any(normalize_answer(gold) == said for gold in question.answers))


def token_f1(question: Question, answer: str) -> float:
    said = normalize_answer(answer).split()
    best = 0.0
    for gold in question.answers:
        wanted = normalize_answer(gold).split()
        common = sum((Counter(said) & Counter(wanted)).values())
        if common:
            precision, recall = common / len(said), common / len(wanted)
            best = max(best, 2 * precision * recall / (precision + recall))
        elif not said and not wanted:
            best = 1.0
    return best


SCORES: dict[str, Score] = {"contains": contains, "exact": exact_match, "f1": token_f1}


def answer_score(spec: str, root: Path, loc: SourceLocation | None) -> Score:
    """The score `spec` names (a built-in, or the user's FILE.py:FUNCTION beside `root`);
    a wrong name, or a user function that fails or returns what is not in [0, 1], is a
    CompileError (at `loc` when the spec itself is wrong)."""
    if spec in SCORES:
        return SCORES[spec]
    if ":" not in spec:
        known = ", ".join(f"'{name}'" for name in SCORES)
        raise CompileError(f"unknown QoS metric '{spec}'; known metrics: {known}, or "
                           "'FILE.py:FUNCTION' for your own", loc)
    try:
        function = load_attribute(spec, root)
    except ValueError as err:
        raise CompileError(str(err), loc) from None
    if not callable(function):
        raise CompileError(f"'{spec}' is not a function", loc)

    def user_score(question: Question, answer: str) -> float:
        try:
            value = function(question.question, answer, list(question.answers))
        except Exception as err:  # noqa: BLE001 - the user's code: a diagnostic, not a crash
            raise CompileError(f"QoS metric '{spec}' raised {type(err).__name__}: {err}") \
                from err
        if isinstance(value, bool) or not isinstance(value, int | float) or \
                not 0.0 <= value <= 1.0:
            raise CompileError(f"QoS metric '{spec}' returned {value!r}; a score is a number "
                               "in [0, 1]")
        return float(value)

    return user_score
