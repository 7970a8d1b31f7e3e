"""docs/systems.md's walk-through: examples/systems/minimal (a C search with a
`#pragma approx` knob, a JAX encoder with an `@approx.knob`), copied into an empty folder,
built, evaluated and tuned with the commands the guide shows, as a user runs them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import approxcc_ok

from approxcc.system.questions import load_questions

ROOT = Path(__file__).resolve().parents[1]
MINIMAL = ROOT / "examples" / "systems" / "minimal"
FILES = ("system.toml", "search.c", "model.py", "pipeline.py", "facts.txt", "tune.jsonl",
         "eval.jsonl")


@pytest.fixture(scope="module")
def qa(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example's own files, and nothing else, in a fresh folder."""
    folder = tmp_path_factory.mktemp("qa")
    for name in FILES:
        shutil.copyfile(MINIMAL / name, folder / name)
    return folder


def config(folder: Path, knobs: dict) -> Path:
    path = folder / "hand.json"
    path.write_text(json.dumps({"approxcc": "1", "knobs": knobs}))
    return path


def test_the_example_is_small_and_its_questions_disjoint() -> None:
    code = sum(len((MINIMAL / name).read_text().splitlines())
               for name in ("system.toml", "search.c", "model.py", "pipeline.py"))
    assert code < 150
    tune, evals = (load_questions(MINIMAL / f"{name}.jsonl") for name in ("tune", "eval"))
    assert not {q.question for q in tune} & {q.question for q in evals}


def test_build_writes_the_tunable_library(qa: Path) -> None:
    done = approxcc_ok("build", qa, "-o", qa / "out")
    assert done.stdout.strip() == str(qa / "out" / "libminimal.so")
    assert (qa / "out" / "libminimal.so").is_file()


def test_eval_runs_exact_and_configuration_side_by_side(qa: Path) -> None:
    hand = config(qa, {"encoder_layers": {"value": 3}, "dims": {"value": 4}})
    done = approxcc_ok("eval", qa, "--config", hand, "--questions", qa / "eval.jsonl",
                       "--json")
    result = json.loads(done.stdout)
    assert result["questions"] == 12
    assert result["exact_accuracy"] == 1.0           # every eval question answered
    assert 0.0 <= result["loss"] <= 1.0 and result["speedup"] > 0
    assert set(result["profile"]["exact"]) == {"encoder", "search"}   # the pipeline's stages
    assert (qa / "build" / "model" / "manifest.json").is_file()       # prepare() built model.py


def test_tune_writes_a_configuration_per_budget_that_eval_confirms(qa: Path) -> None:
    out = qa / "tuned"
    done = approxcc_ok("tune", qa, "--qos-budget", "5%,10%", "--time-limit", "20s",
                       "--confirm-repeats", "2", "--out", out)
    assert "wrote" in done.stdout and "5pct.json" in done.stdout
    assert "speedup check" in done.stdout       # the held-out questions: the tune file's last
    assert {p.name for p in out.iterdir()} >= {"5pct.json", "10pct.json", "pareto.png",
                                               "results.db"}
    for budget in (5, 10):
        pick = json.loads((out / f"{budget}pct.json").read_text())
        assert set(pick["knobs"]) <= {"dims", "encoder_layers"}   # knobs of both halves
        qos = pick["qos"]
        assert qos["budget"] == budget / 100 and qos["loss_bound"] <= qos["budget"]
        # nothing ships over its budget on the check questions; eval only reports
        assert qos["loss_check"] <= qos["budget"] and not qos["over_budget_on_check"]
        assert qos["over_budget_on_eval"] == (qos["loss_eval"] > qos["budget"])
        assert pick["provenance"]["questions"] == {"tune": 8, "check": 4, "eval": 12}
        assert set(pick["speedup"]) == {"tune", "check", "eval"}
    checked = approxcc_ok("eval", qa, "--config", out / "5pct.json", "--questions",
                          qa / "eval.jsonl", "--json")
    result = json.loads(checked.stdout)
    pick = json.loads((out / "5pct.json").read_text())
    assert result["loss"] == pick["qos"]["loss_eval"]   # the figure tune recorded
    approxcc_ok("report", out / "results.db", "--out", out)   # rewrites the configurations
    again = json.loads((out / "5pct.json").read_text())
    assert again["speedup"] == pick["speedup"] and again["qos"] == pick["qos"]


def test_the_exact_system_written_for_a_budget_is_not_run_again(qa: Path) -> None:
    """A budget no pick holds gets the exact system: its eval figures are those by
    definition (no loss, 1.0x), recorded without running the eval questions."""
    import io

    from rich.console import Console

    from approxcc.system import load_system
    from approxcc.system.evaluate import record_eval

    exact = load_system(str(qa)).knob_space().exact_config()
    path = qa / "exact.json"
    path.write_text(json.dumps({"approxcc": "1", "knobs": exact, "qos": {"budget": 0.05},
                                "speedup": {"tune": 1.0}, "provenance": {}}))
    printed = io.StringIO()
    record_eval(str(qa), [path], Console(file=printed))
    assert printed.getvalue() == ""   # nothing evaluated
    doc = json.loads(path.read_text())
    assert doc["qos"]["loss_eval"] == 0.0 and not doc["qos"]["over_budget_on_eval"]
    assert doc["speedup"]["eval"] == 1.0 and doc["provenance"]["questions"]["eval"] == 12
