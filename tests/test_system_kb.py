"""The rag_kb system (examples/systems/rag_kb): the question's MiniLM embedding, kb.c's vector
search and the shared context selection built by approxcc into one tunable shared library,
over the first 200 summaries (their embeddings are the kb kernel tests'). The LLM is left
out: these tests check what reaches its prompt."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import example_module

from approxcc.system.library import TunableLibrary, build_library, c_knob_space, clang_args
from approxcc.system.project import load_project

ROOT = Path(__file__).resolve().parents[1]
RAG_KB = ROOT / "examples" / "systems" / "rag_kb"
DOCS = 200
# (question, gold answer) about the first 200 summaries, from examples/systems/tiny/eval.jsonl
QUESTIONS = (("Who directed Bicycle Thieves?", "Vittorio De Sica"),
             ("Who created Doctor Who?", "Sydney Newman"),
             ("In what year was Candide published?", "1759"))

pytest.importorskip("workloads")


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory):
    project = load_project(str(RAG_KB))
    module = example_module(RAG_KB / "pipeline.py", "rag_kb_pipeline")
    pipeline = module.RagKb(project.root, docs=DOCS)
    args = clang_args(project.flags, project.root)
    output = tmp_path_factory.mktemp("rag-kb") / "librag_kb.so"
    build_library(project.sources, args, output)
    library = TunableLibrary(output, c_knob_space(project.sources, args), pipeline.attach)
    yield pipeline, library
    library.close()


def test_knobs_of_search_and_selection_in_the_library(kb) -> None:
    _, library = kb
    assert {"probe", "dims", "precision", "extra_passage", "passage_tail"} <= library.names


def test_exact_retrieval_puts_the_gold_summary_in_the_prompt(kb) -> None:
    pipeline, library = kb
    lib = library.load(None)
    for question, gold in QUESTIONS:
        ids, scores = pipeline.retrieve(lib, question)
        assert len(ids) == 3 and scores == sorted(scores, reverse=True)
        assert gold.lower() in pipeline.articles[ids[0]].extract.lower(), question
        prompt = pipeline.prompt(question, ids, pipeline.select(lib, ids, scores))
        assert gold.lower() in prompt.lower(), question


def test_approximate_search_and_selection_act_in_process(kb) -> None:
    pipeline, library = kb
    exact = library.load(None)
    first = pipeline.retrieve(exact, QUESTIONS[0][0])[0]
    # one cluster of eight probed, an eighth of the axes, int8 dots; weaker passages left out
    coarse = library.load({"probe": {"value": 8}, "dims": {"value": 8},
                           "precision": {"value": 1}, "extra_passage": {"value": 1}})
    changed = 0
    for question, _ in QUESTIONS:
        query = pipeline.encode(question)
        ids, scores = pipeline.search(exact, query)
        approx_ids, approx_scores = pipeline.search(coarse, query)
        changed += approx_ids != ids
        assert pipeline.select(coarse, approx_ids, approx_scores)[1:] == [0, 0]
    assert changed, "the coarse search ranked every question as the exact one"
    assert pipeline.retrieve(exact, QUESTIONS[0][0])[0] == first   # the exact copy is unchanged
