"""`approxcc eval`: the exact system and one configuration on the same questions, in one run.

Question by question, the exact system answers, then the configuration (interleaved, so drift
on a shared machine hits both alike), every stage computed and timed now
(`CompoundSystem.timed_pair`: nothing charged from the stage cache). Seconds are the stages'
(see `pipeline.Stages`); the profile gives each stage's mean seconds per question under
either.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from approxcc.diagnostics import CompileError, SourceLocation
from approxcc.system.application import CompoundSystem, correct
from approxcc.system.questions import load_questions
from approxcc.tune.space import KnobConfig


def load_config(path: Path) -> KnobConfig:
    """The `knobs` of a configuration file (docs/config.md)."""
    try:
        data = json.loads(path.read_text())
    except OSError as err:
        raise CompileError(f"cannot read '{path}': {err.strerror}") from None
    except json.JSONDecodeError as err:
        raise CompileError(f"malformed JSON: {err.msg}",
                           SourceLocation(str(path), err.lineno, err.colno)) from None
    knobs = data.get("knobs") if isinstance(data, dict) else None
    if not isinstance(knobs, dict):
        raise CompileError("a configuration needs a 'knobs' object",
                           SourceLocation(str(path), 1, 1))
    return knobs


def _check(system: CompoundSystem, knobs: KnobConfig, path: Path) -> None:
    """Unknown knobs and out-of-domain values are the user's mistakes, reported here rather
    than by the runtime when the library loads."""
    space = {k.name: k for k in system.knob_space().knobs}
    where = SourceLocation(str(path), 1, 1)
    for name, entry in knobs.items():
        knob = space.get(name)
        if knob is None:
            raise CompileError(f"unknown knob '{name}' (the system has: "
                               f"{', '.join(sorted(space))})", where)
        values = [entry["value"]] if isinstance(entry, dict) and "value" in entry else \
            entry.get("decisions") if isinstance(entry, dict) else None
        if not isinstance(values, list) or any(v not in knob.values for v in values):
            raise CompileError(f"knob '{name}': expected {{\"value\": v}} or thresholds and "
                               f"decisions with values in {list(knob.values)}", where)
        thresholds = entry.get("thresholds", [])
        if thresholds != sorted(set(thresholds)):
            raise CompileError(f"knob '{name}': thresholds must be strictly increasing", where)
        if "decisions" in entry and (not knob.dynamic or
                                     len(entry.get("thresholds", [])) != knob.thresholds
                                     or len(values) != knob.thresholds + 1):
            raise CompileError(f"knob '{name}': needs {knob.thresholds} thresholds and "
                               f"{knob.thresholds + 1} decisions" if knob.dynamic else
                               f"knob '{name}' is static: give {{\"value\": v}}", where)


def evaluate(system: CompoundSystem, config: Path, questions: Path,
             limit: int | None = None) -> dict[str, Any]:
    """Accuracy, loss, seconds per question and speedup of `config` against the exact system
    on the questions of `questions` (the first `limit`). `system` is built."""
    knobs = load_config(config)
    _check(system, knobs, config)
    qs = load_questions(questions, limit)
    right = {"exact": 0, "config": 0}
    profiles: dict[str, dict[str, float]] = {"exact": {}, "config": {}}
    for q in qs:
        for run, (answer, profile) in zip(("exact", "config"), system.timed_pair(q, knobs),
                                          strict=True):
            right[run] += correct(q, answer)
            for stage, s in profile.items():
                profiles[run][stage] = profiles[run].get(stage, 0.0) + s
    n = len(qs)
    exact_s, config_s = sum(profiles["exact"].values()), sum(profiles["config"].values())
    return {
        "questions": n,
        "exact_accuracy": right["exact"] / n,
        "accuracy": right["config"] / n,
        "loss": max(0.0, (right["exact"] - right["config"]) / n),
        "seconds_per_question": config_s / n,
        "exact_seconds_per_question": exact_s / n,
        "speedup": exact_s / config_s if config_s else float("inf"),
        "profile": {run: {stage: s / n for stage, s in p.items()} for run, p in profiles.items()},
    }


def evaluate_system(where: str, config: Path, questions: Path,
                    limit: int | None = None) -> dict[str, Any]:
    """`approxcc eval`: build the system of `where` (into a temporary folder) and evaluate."""
    import tempfile

    from approxcc.system.application import load_system

    system = load_system(where)
    load_questions(questions, limit)             # the user's mistakes first, before building
    _check(system, load_config(config), config)
    with tempfile.TemporaryDirectory(prefix="approx-eval-") as work:
        system.build(Path(work))
        try:
            return evaluate(system, config, questions, limit)
        finally:
            assert system.library is not None
            system.library.close()


def format_result(result: dict[str, Any]) -> str:
    """The human-readable report of `evaluate`."""
    return "\n".join([
        f"questions            {result['questions']}",
        f"exact accuracy       {result['exact_accuracy']:.1%}",
        f"accuracy             {result['accuracy']:.1%}",
        f"loss                 {result['loss']:.1%}",
        f"seconds per question {result['seconds_per_question']:.3f} "
        f"(exact {result['exact_seconds_per_question']:.3f})",
        f"speedup              {result['speedup']:.2f}x",
    ])
