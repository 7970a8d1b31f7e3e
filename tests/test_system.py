"""Compound systems (approxcc.system): the tiny system of examples/systems/tiny — rag_bm25's
C retrieval and selection built by approxcc into one tunable shared library, and a tiny JAX
decoder — built, evaluated and tuned end to end in this process."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from approxcc.diagnostics import CompileError
from approxcc.system import evaluate, load_system
from approxcc.system.questions import load_questions

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "examples" / "systems" / "tiny"

pytest.importorskip("workloads")


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory):
    app = load_system(str(TINY))
    app.build(tmp_path_factory.mktemp("tiny-build"))
    yield app
    app.library.close()


def config_file(tmp_path: Path, knobs: dict) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"approxcc": "1", "knobs": knobs}))
    return path


def test_knobs_of_both_halves_in_one_space(system) -> None:
    names = {k.name for k in system.knob_space().knobs}
    assert {"doc_stride", "term_skip", "early_stop", "extra_passage", "passage_tail",
            "llm_model", "llm_quant", "llm_vocab", "llm_answer"} <= names


def test_exact_retrieval_puts_the_answer_in_the_prompt(system) -> None:
    lib = system.library.load(None)
    pipe = system.pipeline
    for q in load_questions(TINY / "tune.jsonl"):
        ids, scores = pipe.retrieve(lib, q.question)
        prompt = pipe.prompt(q.question, ids, pipe.select(lib, ids, scores))
        assert any(a.lower() in prompt.lower() for a in q.answers), q.question


def test_a_configuration_changes_the_c_half_in_process(system) -> None:
    """The exact library keeps every passage whole; one configured to drop the weaker ones
    (a reloaded copy with its own knob tables) keeps only the best, one configured to cut
    passages cuts them all."""
    q = load_questions(TINY / "tune.jsonl")[0].question
    pipe = system.pipeline
    exact = system.library.load(None)
    ids, scores = pipe.retrieve(exact, q)
    assert len(ids) == 3
    assert sum(w > 0 for w in pipe.select(exact, ids, scores)) == 3
    lean = system.library.load({"extra_passage": {"value": 1}})
    assert sum(w > 0 for w in pipe.select(lean, ids, scores)) == 1
    # every passage, the best one too, cut to its first 24 words
    short = system.library.load({"passage_tail": {"value": 1}})
    assert pipe.select(short, ids, scores) == [min(24, len(pipe.passage(d))) for d in ids]
    # corpus subsetting by a stride of 8 on every term changes what is retrieved
    sparse = system.library.load({"doc_stride": {"value": 8}})
    assert pipe.retrieve(sparse, q) != (ids, scores)


def test_stages_are_cached_by_their_knobs(system) -> None:
    q = load_questions(TINY / "tune.jsonl")[0]

    def entries(stage: str) -> int:
        return sum(1 for s, _ in system.stages.cache if s == stage)

    system.answer(q, None)
    retrievals, generations = entries("retrieval"), entries("llm")
    system.answer(q, {"llm_answer": {"value": 6}})        # only an LLM knob changed
    assert (entries("retrieval"), entries("llm")) == (retrievals, generations + 1)
    system.answer(q, {"doc_stride": {"value": 8}})        # only a retrieval knob changed
    assert entries("retrieval") == retrievals + 1


def test_evaluate_reports_accuracy_loss_and_speedup(system, tmp_path: Path) -> None:
    config = config_file(tmp_path, {"extra_passage": {"value": 1}, "llm_model": {"value": 1}})
    result = evaluate(system, config, TINY / "eval.jsonl", limit=4)
    assert result["questions"] == 4
    assert {"exact_accuracy", "accuracy", "loss", "seconds_per_question", "speedup"} <= \
        set(result)
    assert 0.0 <= result["loss"] <= 1.0 and result["speedup"] > 0
    assert result["profile"]["exact"]["retrieval"] > 0


def test_confirmation_and_eval_time_both_sides_now(system, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A stage that got slower since the exact system's profile (a machine whose load
    drifted) costs the exact system and the configuration alike in the tuner's pairs and in
    `approxcc eval`: neither side is charged what a stage took when it was first cached
    (the configurations change only the LLM: their retrievals are cached too)."""
    from approxcc.tune.measure import Measurer

    inputs = system.tune_inputs[:2]
    searched = int(inputs[-1].rsplit(":", 1)[1])       # the tune file's questions they hold
    questions = load_questions(TINY / "tune.jsonl")[:searched]
    for q in questions:                   # the profile: every exact stage cached, fast
        system.answer(q, None)
    golden = [system.run(inp, None, tmp_path, 60.0).output for inp in inputs]
    slow, search = 0.05, system.pipeline.search

    def loaded(*args):
        time.sleep(slow)                  # every retrieval now takes longer
        return search(*args)

    monkeypatch.setattr(system.pipeline, "search", loaded)
    (pair,) = Measurer(system, tmp_path).round([{"llm_answer": {"value": 6}}], inputs, golden)
    assert pair.status == "ok", pair.reason
    assert pair.exact_time >= len(questions) * slow
    assert pair.time >= len(questions) * slow
    config = config_file(tmp_path, {"llm_answer": {"value": 4}})
    result = evaluate(system, config, TINY / "eval.jsonl", limit=2)
    assert result["exact_seconds_per_question"] >= slow
    assert result["seconds_per_question"] >= slow


def test_answers_the_approximation_alone_gets_right_count_below_zero(system) -> None:
    # the tuner's bound weighs answers gained against answers lost (picks.bound); the QoS
    # loss the user reads stays 0 when the approximation does better
    q = next(iter(system.questions.values()))[0]

    def output(answer: str) -> str:
        return json.dumps({"question": q.question, "answer": answer}) + "\n"

    right, wrong = output(f"it is {q.answers[0]}"), output("no idea")
    assert system.input_loss(wrong, right) == -1.0
    assert system.input_loss(right, wrong) == 1.0
    assert system.loss([wrong], [right]) == 0.0


def test_malformed_question_line_is_located(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"question": "Who?", "answer": ["me"]}\n{"question": "Why?"}\n')
    with pytest.raises(CompileError) as err:
        load_questions(path)
    assert err.value.diagnostic.render(show_source=False).startswith(
        f"{path}:2:1: error: 'answer' must be")


def test_unknown_knob_in_a_configuration_is_an_error(system, tmp_path: Path) -> None:
    config = config_file(tmp_path, {"no_such_knob": {"value": 1}})
    with pytest.raises(CompileError, match="unknown knob 'no_such_knob'"):
        evaluate(system, config, TINY / "eval.jsonl", limit=1)


def test_tuned_end_to_end(system, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`approxcc tune SYSTEM`'s path: the system built, its model variants prepared once
    before any question is answered (so no timed run waits for a compile), tuned, a
    configuration of its knobs written."""
    from rich.console import Console

    from approxcc.tune import TuneOptions, tune
    from approxcc.tune.report import report

    pipe, calls = system.pipeline, []
    prepare, answer = pipe.prepare, pipe.answer

    def prepare_spy() -> float:
        calls.append("prepare")
        return prepare()

    def answer_spy(*args):
        calls.append("answer")
        return answer(*args)

    monkeypatch.setattr(pipe, "prepare", prepare_spy)
    monkeypatch.setattr(pipe, "answer", answer_spy)
    out = tmp_path / "tuned"
    opts = TuneOptions([0.05], out, time_limit=20, max_evals=8, metric="accuracy",
                       confirm_repeats=0)
    tune(system, opts, Console(stderr=True),
         reporter=lambda results, run_id: report(results, results.run(run_id), out, Console()))
    assert calls[0] == "prepare" and calls.count("prepare") == 1
    assert "answer" in calls
    picks = sorted((tmp_path / "tuned").rglob("*.json"))
    assert picks, "no configuration written"
    knobs = json.loads(picks[0].read_text())["knobs"]
    assert set(knobs) <= {k.name for k in system.knob_space().knobs}


def test_a_system_pickles_for_dask_workers(system, tmp_path: Path) -> None:
    """What a Dask worker gets (the pickled system and its shipped library) answers as the
    tuner's own copy does."""
    import pickle
    import shutil

    q = load_questions(TINY / "tune.jsonl")[0]
    config = {"extra_passage": {"value": 1}}
    (shipped,) = system.files()
    moved = tmp_path / "elsewhere.so"
    shutil.copyfile(shipped, moved)
    worker = pickle.loads(pickle.dumps(system)).relocate({str(shipped): moved})
    assert worker.library.path == moved
    assert worker.answer(q, config) == system.answer(q, config)
    assert worker.answer(q, None) == system.answer(q, None)
    worker.library.close()


def test_project_mistakes_are_located(tmp_path: Path) -> None:
    from approxcc.system.project import load_project

    (tmp_path / "system.toml").write_text('[system]\nname = "x"\nsources = ["nope.c"]\n'
                                          'pipeline = "p.py:P"\n[questions]\ntune = "t"\n'
                                          'eval = "e"\n')
    with pytest.raises(CompileError) as err:
        load_project(str(tmp_path))
    assert err.value.diagnostic.render(show_source=False).startswith(
        f"{tmp_path / 'system.toml'}:3:1: error: no such file: 'nope.c'")


def test_the_tune_file_s_last_questions_check_the_picks(tmp_path: Path) -> None:
    """The tuner searches on the tune file's first questions and checks its picks on the
    rest (`check`, default a third); the eval file is never its input."""
    tune = TINY / "tune.jsonl"
    tiny = load_system(str(TINY))                     # 4 questions in batches of 2
    assert tiny.tune_inputs == [f"{tune}:0:2", f"{tune}:2:3"]
    assert tiny.eval_inputs == [f"{tune}:3:4"] and tiny.held_out == "check"
    text = (TINY / "system.toml").read_text()
    for name in ("../rag_bm25/rag.c", "../common/select.c", "../../kernels/bm25/bm25.c",
                 "../../kernels/bm25/state.c", "pipeline.py", "tune.jsonl", "eval.jsonl"):
        text = text.replace(f'"{name}', f'"{(TINY / name).resolve()}')
    (tmp_path / "system.toml").write_text(text.replace("batch = 2", "batch = 2\ncheck = 4"))
    with pytest.raises(CompileError) as err:
        load_system(str(tmp_path))
    assert err.value.diagnostic.render(show_source=False) == (
        f"{tmp_path / 'system.toml'}:14:1: error: 'check' must leave questions of the tune "
        "file to search on (it has 4)")


def test_answer_scores_of_the_qos_metrics() -> None:
    from approxcc.system.questions import Question
    from approxcc.system.scoring import SCORES

    q = Question("who wrote it?", ("Ada Lovelace", "Lovelace"))
    contains, exact, f1 = SCORES["contains"], SCORES["exact"], SCORES["f1"]
    assert contains(q, "It was Ada Lovelace.") == 1.0 and contains(q, "Ada") == 0.0
    assert exact(q, "the Lovelace") == 1.0 and exact(q, "It was Ada Lovelace.") == 0.0
    assert f1(q, "ada lovelace") == 1.0 and f1(q, "nobody") == 0.0
    assert f1(q, "Ada Byron") == pytest.approx(2 * 0.5 * 0.5 / (0.5 + 0.5))


def test_qos_metric_named_in_system_toml(tmp_path: Path) -> None:
    """[qos] metric: a built-in by name, or the user's FILE.py:FUNCTION; a wrong one is an
    error at its line."""
    from approxcc.system.project import load_project
    from approxcc.system.questions import Question
    from approxcc.system.scoring import answer_score

    (tmp_path / "q.jsonl").write_text('{"question": "q?", "answer": ["yes"]}\n')
    (tmp_path / "e.jsonl").write_text('{"question": "e?", "answer": ["no"]}\n')
    (tmp_path / "a.c").write_text("int f(void) { return 0; }\n")
    (tmp_path / "my_qos.py").write_text(
        "def score(question, answer, gold):\n    return 0.5 if answer in gold else 0.0\n")

    def project(metric: str):
        (tmp_path / "system.toml").write_text(
            '[system]\nname = "x"\nsources = ["a.c"]\npipeline = "p.py:P"\n[questions]\n'
            f'tune = "q.jsonl"\neval = "e.jsonl"\n[qos]\nmetric = "{metric}"\n')
        p = load_project(str(tmp_path))
        return answer_score(p.metric, p.root, p.metric_loc)

    q = Question("q?", ("yes",))
    assert project("f1")(q, "yes") == 1.0
    assert project("my_qos.py:score")(q, "yes") == 0.5
    for metric, message in [("bleu", "unknown QoS metric 'bleu'; known metrics: 'contains', "
                             "'exact', 'f1'"), ("my_qos.py:nope", "'my_qos.py' has no 'nope'")]:
        with pytest.raises(CompileError) as err:
            project(metric)
        assert err.value.diagnostic.render(show_source=False).startswith(
            f"{tmp_path / 'system.toml'}:9:1: error: {message}"), metric


def test_python_knobs_are_checked_against_the_registry(tmp_path: Path) -> None:
    """A pipeline's knob goes through the registry as an annotation does: a wrong transform
    or value is an error at system.toml's pipeline line."""
    from approxcc.system import knob

    assert knob("depth", "loop_perforate", (2, 4)).values == (1, 2, 4)  # exact kept
    for args, message in [(("d", "loop_perforate", (0, 2)), "value 0: must be an integer"),
                          (("d", "taskskip", (0, 1)), "unknown transform 'taskskip'")]:
        with pytest.raises(ValueError, match=message):
            knob(*args)
    (tmp_path / "q.jsonl").write_text('{"question": "q?", "answer": ["yes"]}\n')
    (tmp_path / "e.jsonl").write_text('{"question": "e?", "answer": ["no"]}\n')
    (tmp_path / "a.c").write_text("int f(void) { return 0; }\n")
    (tmp_path / "p.py").write_text(
        "from approxcc.system.pipeline import Pipeline\nfrom approxcc.tune.space import Knob\n"
        "class P(Pipeline):\n    knobs = (Knob('n', 'task_skipping', (10, 6), 10),)\n"
        "    def attach(self, library): pass\n"
        "    def answer(self, question, library, knobs, stages): return ''\n")
    (tmp_path / "system.toml").write_text(
        '[system]\nname = "x"\nsources = ["a.c"]\npipeline = "p.py:P"\n[questions]\n'
        'tune = "q.jsonl"\neval = "e.jsonl"\n')
    with pytest.raises(CompileError) as err:
        load_system(str(tmp_path))
    assert err.value.diagnostic.render(show_source=False) == (
        f"{tmp_path / 'system.toml'}:4:1: error: knob 'n': the exact value of "
        "'task_skipping' is 0, not 10")


def test_one_decision_evaluator_for_c_ml_and_systems(tmp_path: Path) -> None:
    """approxcc.config.decide (the ML runtime's and the systems' decision trees) picks what
    a C program's lowered decision tree picks, state by state, thresholds included."""
    from conftest import approxcc_ok, output_of

    from approxcc.config import decide
    from approxcc.system.pipeline import decide as decide_entry

    (tmp_path / "d.c").write_text("""#include <stdio.h>
static int count(int s) {
  int n = 0;
  #pragma approx loop_perforate knob(k) values(1, 2, 4) state(s) thresholds(2) range(0:100)
  for (int i = 0; i < 12; i++) n++;
  return n;
}
int main(void) {
  for (int s = -5; s <= 105; s++) printf("%d %d\\n", s, count(s));
  return 0;
}
""")
    tree = {"thresholds": [10, 50], "decisions": [1, 4, 2]}
    (tmp_path / "c.json").write_text(json.dumps({"knobs": {"k": tree}}))
    approxcc_ok("d.c", "-fapprox-config=c.json", "-o", "d", cwd=tmp_path)
    for line in output_of(tmp_path / "d").splitlines():
        state, iterations = map(int, line.split())
        v = decide(tree["thresholds"], tree["decisions"], state)
        assert iterations == -(-12 // v) and decide_entry(tree, state) == v, line


def test_eval_prepares_what_its_configuration_uses(system, monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    """`approxcc eval` hands the pipeline the exact configuration and the user's, and
    `used_values` says which values of each knob they pick (a tree: its decisions)."""
    from approxcc.system.pipeline import used_values

    knobs = system.knob_space().knobs
    by_name = {k.name: k for k in knobs}
    tree = {"thresholds": [50], "decisions": [0, 1]}
    used = used_values(knobs, [{}, {"llm_answer": {"value": 6}, "llm_model": tree}])
    assert used["llm_answer"] == (0, 6) and used["llm_model"] == (0, 1)
    assert used["llm_vocab"] == (by_name["llm_vocab"].exact,)
    assert used_values(knobs, None)["llm_answer"] == by_name["llm_answer"].values
    seen = []
    monkeypatch.setattr(system.pipeline, "prepare", lambda configs=None: seen.append(configs)
                        or 0.0)
    config = config_file(tmp_path, {"llm_answer": {"value": 6}})
    system.build(tmp_path / "b", [{}, system.knob_space().checked(config)])
    assert seen == [[{}, {"llm_answer": {"value": 6}}]]
