"""llm_tools (examples/systems/llm_tools): its question files, and its C tools built by
approxcc answering the generated questions, exact and under their knobs. No LLM runs here
(the triage and the answers are measured by bench/compound.py)."""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from pathlib import Path

import pytest
from conftest import example_module

from approxcc.system.library import TunableLibrary, build_library, c_knob_space, clang_args
from approxcc.system.questions import load_questions
from approxcc.tune.space import KnobSpace

ROOT = Path(__file__).resolve().parents[1]
SYSTEM = ROOT / "examples" / "systems" / "llm_tools"
RAG_QUESTIONS = ROOT / "examples" / "systems" / "questions"
# The tools' part of the system's sources (retrieval is rag_bm25's and rag_kb's, tested there)
TOOL_SOURCES = ("tools.c", "../../kernels/pagerank/pagerank.c",
                "../../kernels/pagerank/state.c", "../../kernels/lavamd/lavamd.c",
                "../../kernels/lavamd/state.c")
KNOB_SOURCES = (TOOL_SOURCES[1], TOOL_SOURCES[3])     # the ones with knobs: their space


def pipeline_module():
    return example_module(SYSTEM / "pipeline.py", "llm_tools_pipeline")


def lines(part: str) -> list[dict]:
    return [json.loads(line) for line in (SYSTEM / f"{part}.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory):
    """The pipeline module, the tools' library (the system's flags: every kernel's main()
    renamed) and the k-means library, each loaded by its TunableLibrary."""
    p = pipeline_module()
    work = tmp_path_factory.mktemp("llm_tools")
    system = tomllib.loads((SYSTEM / "system.toml").read_text())["system"]
    sources = [SYSTEM / s for s in TOOL_SOURCES]
    assert set(TOOL_SOURCES) <= set(system["sources"])
    args = clang_args(system["flags"], SYSTEM)
    build_library(sources, args, work / "libtools.so")
    build_library(p.CLUSTER_SOURCES, clang_args([], SYSTEM), work / "libcluster.so")
    main = TunableLibrary(work / "libtools.so",
                          c_knob_space([SYSTEM / s for s in KNOB_SOURCES], args), p.declare_tools)
    cluster = TunableLibrary(work / "libcluster.so", KnobSpace(p.cluster_knobs(
        clang_args([], SYSTEM))), p.declare_cluster)
    yield p, main, cluster
    main.close()
    cluster.close()


def test_question_files_nq_format_shares_and_split() -> None:
    tune, evals = load_questions(SYSTEM / "tune.jsonl"), load_questions(SYSTEM / "eval.jsonl")
    assert len(evals) == 5 * len(tune)
    for part in ("tune", "eval"):
        items = lines(part)
        shares = Counter(q["tool"] for q in items)
        assert set(shares) == {"search", "links", "energy", "cluster"}
        assert all(n / len(items) >= 0.15 for n in shares.values()), shares
        # retrieval questions are the RAG set's, from the same split (no summary in both)
        rag = {json.loads(line)["question"]
               for line in (RAG_QUESTIONS / f"{part}.jsonl").read_text().splitlines()}
        assert all(q["question"] in rag for q in items if q["tool"] == "search")
    assert not {q.question for q in tune} & {q.question for q in evals}


def test_exact_tools_answer_the_generated_questions(tools) -> None:
    p, main, cluster = tools
    lib, km = main.load(None), cluster.load(None)
    by_kind = Counter()
    for q in lines("tune"):
        if q["tool"] == "search" or by_kind[q["tool"]] >= 4:
            continue
        by_kind[q["tool"]] += 1
        assert p.run_tool(q["tool"], q["question"], lib, km) == q["answer"][0], q["question"]
    assert set(by_kind) == {"links", "energy", "cluster"}


def test_a_wrong_tool_finds_no_input_in_the_question(tools) -> None:
    p, main, cluster = tools
    lib, km = main.load(None), cluster.load(None)
    q = next(q for q in lines("tune") if q["tool"] == "energy")["question"]
    assert p.run_tool("links", q, lib, km) is None
    assert p.run_tool("cluster", q, lib, km) is None


def test_tool_knobs_change_the_tools_answers(tools) -> None:
    """Perforated partners and a cheap exp() move the energy (the questions round it to two
    significant figures, so some answers change); so does a distance over the first
    coordinate only in the k-means library (its knobs under the library's names)."""
    p, main, cluster = tools
    energy = [q for q in lines("eval") if q["tool"] == "energy"][:12]
    exact, km = main.load(None), cluster.load(None)
    rough = main.load({"partners": {"value": 8}, "pair_weight": {"value": 2}})
    assert all(p.run_tool("energy", q["question"], exact, km) == q["answer"][0] for q in energy)
    wrong = sum(p.run_tool("energy", q["question"], rough, km) != q["answer"][0] for q in energy)
    assert wrong >= 3
    cluster_q = [q for q in lines("eval") if q["tool"] == "cluster"][:12]
    halved = cluster.load(p.cluster_config({"assign": {"value": 1}, "distance": {"value": 2},
                                            "kmeans_iterations": {"value": 1}}))
    wrong = sum(p.run_tool("cluster", q["question"], exact, halved) != q["answer"][0]
                for q in cluster_q)
    assert wrong >= 2


def test_triage_prefills_only_the_question_over_the_cached_head() -> None:
    """The triage prompt's head is prefilled once; a question's tokens over its cache give
    the scores of one prefill of the whole prompt (SmolLM2 cut to one layer: the same code
    as the full models, compiled in seconds). A link graph's question spans several
    prefill buckets and overwrites the head's padding."""
    import numpy as np

    from workloads.models import load_model
    from workloads.models.decode import JaxRunner, prompt_ids, skip_layers

    p = pipeline_module()
    smol = load_model("smollm2")
    tiny = skip_layers(smol, set(range(1, smol.config.n_layers)))
    runner = JaxRunner(tiny, max_len=512)
    head_text = p.LlmTools.triage_head(False)
    head_ids = prompt_ids(tiny, head_text, chat=False)
    head = p.PromptCache(runner, head_ids)
    question = max((q["question"] for q in lines("tune") if q["tool"] == "links"), key=len)
    tail = tiny.tokenizer.encode(p.LlmTools.triage_tail(question), add_bos=False)
    whole = prompt_ids(tiny, head_text + p.LlmTools.triage_tail(question), chat=False)
    assert len(tail) > 64 and whole == head_ids + tail
    np.testing.assert_allclose(head.logits(tail), runner.prefill(whole), atol=1e-4)
