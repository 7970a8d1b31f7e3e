"""`make bench-compound`'s rules for what it ships (bench/compound.py): the tuner's held-out
inputs are check questions from the tune file, and eval questions only report."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from conftest import ROOT, example_module

bench = example_module(ROOT / "bench" / "compound.py", "bench_compound")


def tuner_config(path: Path, speedup_tune: float, speedup_held_out: float) -> str:
    """A configuration as `approxcc tune` writes it: its held-out figures are named eval."""
    path.write_text(json.dumps({
        "approxcc": "1", "knobs": {"k": {"value": 1}},
        "qos": {"budget": 0.03, "loss_tune": 0.0, "loss_eval": 0.01,
                "over_budget_on_eval": False},
        "speedup": {"tune": speedup_tune, "eval": speedup_held_out},
        "spread": {"speedup_tune": [speedup_tune] * 2, "loss_tune": [0.0, 0.0],
                   "speedup_eval": [speedup_held_out] * 2, "loss_eval": [0.01, 0.01]},
        "provenance": {"db": "/scratch/results.db"}}))
    return str(path)


def test_the_check_questions_decide_what_ships_and_eval_only_reports(tmp_path: Path) -> None:
    system = SimpleNamespace(name="demo", project=SimpleNamespace(root=tmp_path))
    safe_on_check = {"mode": "static", "budget": 0.03, "knobs": {"k": {"value": 1}},
                     "config_file": tuner_config(tmp_path / "a.json", 2.0, 1.8),
                     "speedup_tune": 2.0, "loss_check": 0.01, "check_within_budget": True,
                     "speedup_eval": 1.9, "loss_eval": 0.05, "eval_within_budget": False}
    over_on_check = {"mode": "dynamic", "budget": 0.06, "knobs": {"k": {"value": 2}},
                     "config_file": tuner_config(tmp_path / "b.json", 3.0, 2.9),
                     "speedup_tune": 3.0, "loss_check": 0.08, "check_within_budget": False,
                     "speedup_eval": 3.1, "loss_eval": 0.0, "eval_within_budget": True}
    bench.ship(system, [safe_on_check, over_on_check], [0.03, 0.06],
               {"tune": 120, "check": 93, "eval": 60})

    three = json.loads((tmp_path / "configs" / "budget-3.json").read_text())
    # over its budget on eval, within it on check: shipped, and the eval loss is on record
    assert three["qos"]["loss_eval"] == 0.05 and three["qos"]["over_budget_on_eval"] is True
    assert three["qos"]["loss_check"] == 0.01 and three["speedup"] == \
        {"tune": 2.0, "check": 1.8, "eval": 1.9}
    assert three["provenance"]["questions"] == {"tune": 120, "check": 93, "eval": 60}
    assert "db" not in three["provenance"]
    six = json.loads((tmp_path / "configs" / "budget-6.json").read_text())
    # over its budget on check, though within it on eval: the 3% pick ships at 6%
    assert six["knobs"] == {"k": {"value": 1}}
    assert six["provenance"]["fallback"] == "the 6% pick lost 8.0% on check"


def test_the_check_questions_are_the_tune_file_s_questions_after_the_searched_ones() -> None:
    path = "tune.jsonl"
    system = SimpleNamespace(project=SimpleNamespace(tune_questions=path, batch=2),
                             questions={path: [object()] * 10})
    assert bench.subset(system, 3, 4) == (3, 4)
    assert system.tune_inputs == ["tune.jsonl:0:2", "tune.jsonl:2:3"]
    assert system.eval_inputs == ["tune.jsonl:3:5", "tune.jsonl:5:7"]
    assert bench.subset(system, 8, 60) == (8, 2)      # at most the rest of the file
