"""`approxcc eval`: the exact system and one configuration on the same questions, in one run.

Question by question, the exact system answers, then the configuration (interleaved, so drift
on a shared machine hits both alike), every stage computed and timed now
(`CompoundSystem.timed_round`: nothing charged from the stage cache). Seconds are the stages'
(see `pipeline.Stages`); the profile gives each stage's mean seconds per question under
either.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console

from approxcc.system.application import CompoundSystem, load_system
from approxcc.system.questions import load_questions
from approxcc.tune.space import KnobConfig


def evaluate(system: CompoundSystem, config: Path, questions: Path,
             limit: int | None = None) -> dict[str, Any]:
    """Accuracy, loss, seconds per question and speedup of `config` against the exact system
    on the questions of `questions` (the first `limit`). `system` is built."""
    knobs = system.knob_space().checked(config)
    qs = load_questions(questions, limit)
    right = {"exact": 0.0, "config": 0.0}
    profiles: dict[str, dict[str, float]] = {"exact": {}, "config": {}}
    for q in qs:
        for run, (answer, profile) in zip(("exact", "config"), system.timed_round(q, [knobs]),
                                          strict=True):
            right[run] += system.score(q, answer)
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
    system = load_system(where)
    load_questions(questions, limit)             # the user's mistakes first, before building
    with built(system, [system.knob_space().checked(config)]):
        return evaluate(system, config, questions, limit)


@contextmanager
def built(system: CompoundSystem, configs: list[KnobConfig]) -> Iterator[None]:
    """`system` built into a temporary folder with what the exact system and `configs`
    use, its library closed afterwards."""
    with tempfile.TemporaryDirectory(prefix="approx-eval-") as work:
        system.build(Path(work), [{}, *configs])
        try:
            yield
        finally:
            assert system.library is not None
            system.library.close()


def record_eval(where: str, configs: list[Path], console: Console) -> None:
    """After `approxcc tune SYSTEM`: each configuration written (`configs`) against the exact
    system on the first `eval_limit` questions of the eval file, its figures added to the
    file (`qos.loss_eval`, `qos.over_budget_on_eval`, `speedup.eval`; `provenance.questions`
    counts the questions of each set). They report how the picks do on questions tuning
    never saw and choose nothing. A configuration written for two budgets runs once."""
    if not configs:
        return
    system = load_system(where)
    questions, limit = system.project.eval_questions, system.project.eval_limit
    knobs = {c: system.knob_space().checked(c) for c in configs}
    # the exact system written for a budget (no pick holds it) is the exact system: no
    # loss and no speedup on any question, nothing to run
    exact = json.dumps(system.knob_space().exact_config(), sort_keys=True)
    done: dict[str, dict[str, Any]] = {
        exact: {"loss": 0.0, "speedup": 1.0,
                "questions": len(load_questions(questions, limit))}}

    def key(config: Path) -> str:
        return json.dumps(knobs[config], sort_keys=True)

    runs = {key(c): c for c in configs if key(c) not in done}   # one per configuration
    if runs:
        with built(system, [knobs[c] for c in runs.values()]):
            for k, config in runs.items():
                console.print(f"eval: {config} against the exact system on the eval "
                              f"questions (at most {limit})")
                done[k] = evaluate(system, config, questions, limit)
    for config in configs:
        _record(config, done[key(config)], system.split)


def _record(config: Path, result: dict[str, Any], split: dict[str, int]) -> None:
    doc = json.loads(config.read_text())
    doc["qos"]["loss_eval"] = result["loss"]
    doc["qos"]["over_budget_on_eval"] = result["loss"] > doc["qos"]["budget"] + 1e-9
    doc["speedup"]["eval"] = round(result["speedup"], 4)
    doc["provenance"]["questions"] = {**split, "eval": result["questions"]}
    config.write_text(json.dumps(doc, indent=2) + "\n")


def format_result(result: dict[str, Any]) -> str:
    """The human-readable report of `evaluate`."""
    return "\n".join([
        f"questions            {result['questions']}",
        f"exact accuracy       {result['exact_accuracy']:.1%}",
        f"accuracy             {result['accuracy']:.1%}",
        f"loss                 {result['loss']:.1%}",
        f"time per question    {_duration(result['seconds_per_question'])} "
        f"(exact {_duration(result['exact_seconds_per_question'])})",
        f"speedup              {result['speedup']:.2f}x",
    ])


def _duration(seconds: float) -> str:
    """Three significant digits, in ms under a second (a fast system's 0.2 ms is not 0.000)."""
    return f"{seconds:.3g} s" if seconds >= 1 else f"{seconds * 1000:.3g} ms"
