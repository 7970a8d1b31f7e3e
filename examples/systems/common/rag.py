"""What the RAG systems share (rag_bm25, rag_kb): context selection through the C library's
`rag_select`, the prompt, and a short answer by a small LLM (Gemma 3 270M exact; JAX on
the CPU). A system subclasses `RagPipeline` with its retrieval: `attach`, `encode` (the
question as the retrieval's query, a stage that reads no knob) and `search` (in C), and
names the C knobs its search reads (`retrieval_knobs`).

Python-side knobs (the C library has the retrieval and selection ones):
  llm_model   (dynamic) 0 = Gemma 3 270M, 1 = SmolLM2-135M, decided per question from the
              retrieval's confidence (the second passage's score in % of the best): with
              one clear winner the small model only has to copy from it.
  llm_layers  drop the last k decoder layers of the model (early exit).
"""

from __future__ import annotations

import ctypes
import importlib.util
import time
from abc import abstractmethod
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from approxcc.system.pipeline import Pipeline, Stages, Timed, decide, knob_values
from approxcc.tune.space import Knob, KnobConfig

TOP_K = 3               # passages retrieved (the exact system puts all of them in)
PASSAGE_WORDS = 60      # words of a passage at most: prefill on this CPU is the cost
ANSWER_TOKENS = 10
MODELS = ("gemma3", "smollm2")
SELECTION_KNOBS = ("extra_passage", "passage_tail")
INSTRUCTION = "Answer the question in a few words, using the passages."
CLOSED_BOOK = "Answer the question in a few words."
EXAMPLE = "Question: Who wrote Hamlet?\nAnswer: William Shakespeare\n"   # the answer's form


def load_module(path: Path, name: str) -> ModuleType:
    """A Python file loaded by path (the examples are not a package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class RagPipeline(Pipeline):
    knobs = (
        Knob("llm_model", "func_substitute", (0, 1), 0, dynamic=True, thresholds=1,
             range=(0, 100), loc="pipeline.py"),
        Knob("llm_layers", "task_skipping", (0, 1, 2, 3), 0, loc="pipeline.py"),
    )
    retrieval_knobs: tuple[str, ...] = ()     # the C knobs `search` reads (its cache key)
    query_stage = "query"                     # the profile's name for `encode`

    def __init__(self, articles: Any, models: tuple[str, ...] = MODELS):
        self.articles = articles
        self.model_names = models
        self.runners: dict[tuple[str, int], Any] = {}
        self.compiled: set[tuple[Any, ...]] = set()    # (model, layers, padded length)

    @abstractmethod
    def encode(self, question: str) -> Any:
        """The question as the query `search` takes."""

    @abstractmethod
    def search(self, library: ctypes.CDLL, query: Any) -> tuple[list[int], list[float]]:
        """The TOP_K best summaries of a query (best first) and their scores."""

    def retrieve(self, library: ctypes.CDLL, question: str) -> tuple[list[int], list[float]]:
        return self.search(library, self.encode(question))

    # -- C half: context selection ------------------------------------------------------------

    def passage(self, doc: int) -> list[str]:
        return self.articles[doc].extract.split()[:PASSAGE_WORDS]

    def select(self, library: ctypes.CDLL, ids: list[int], scores: list[float]) -> list[int]:
        n = len(ids)
        words = (ctypes.c_int * max(1, n))(*[len(self.passage(d)) for d in ids])
        out = (ctypes.c_int * max(1, n))()
        library.rag_select((ctypes.c_float * max(1, n))(*scores), n, words, out)
        return list(out[:n])

    # -- LLM ---------------------------------------------------------------------------------

    def runner(self, model: int, layers: int) -> Any:
        key = (self.model_names[model], layers)
        if key not in self.runners:
            from workloads.models import load_model
            from workloads.models.decode import JaxRunner, skip_layers

            base = next((r.model for (name, k), r in self.runners.items()
                         if name == key[0] and k == 0), None) or load_model(key[0])
            n = len(base.params["layers"])
            m = skip_layers(base, set(range(n - layers, n))) if layers else base
            self.runners[key] = JaxRunner(m, max_len=512)
        return self.runners[key]

    def generate(self, prompt: str, model: int, layers: int) -> Timed:
        """Greedy answer to the end of its first line."""
        from workloads.models.decode import prefill_length, prompt_ids

        runner = self.runner(model, layers)
        tok = runner.model.tokenizer
        ids = prompt_ids(runner.model, prompt, chat=False)
        shape = (model, layers, prefill_length(len(ids), runner.max_len))
        if shape not in self.compiled:
            # compile first (XLA, once per padded length): stage times are the system's
            runner.prefill(ids)
            runner.decode(0, len(ids))
            self.compiled.add(shape)
        t0 = time.perf_counter()
        logits = runner.prefill(ids)
        t1 = time.perf_counter()
        out: list[int] = []
        for pos in range(len(ids), len(ids) + ANSWER_TOKENS):
            token = int(np.argmax(logits))
            if token in tok.stop_ids or "\n" in tok.decode(out + [token]).lstrip():
                break
            out.append(token)
            logits = runner.decode(token, pos)
        t2 = time.perf_counter()
        return Timed(tok.decode(out).strip(), {"prefill": t1 - t0, "decode": t2 - t1})

    # -- the system --------------------------------------------------------------------------

    def prompt(self, question: str, docs: list[int], words: list[int]) -> str:
        passages = [f"{self.articles[d].title}: {' '.join(self.passage(d)[:n])}"
                    for d, n in zip(docs, words, strict=True) if n > 0]
        context = "".join(f"Passage: {p}\n" for p in passages)
        head = INSTRUCTION if passages else CLOSED_BOOK
        return f"{head}\n{EXAMPLE}{context}Question: {question}\nAnswer:"

    def answer(self, question: str, library: ctypes.CDLL, knobs: KnobConfig,
               stages: Stages) -> str:
        query = stages.run(self.query_stage, question, lambda: self.encode(question))
        retrieval = knob_values(knobs, self.retrieval_knobs)
        ids, scores = stages.run("retrieval", (question, retrieval),
                                 lambda: self.search(library, query))
        words = stages.run("selection", (question, retrieval,
                                         knob_values(knobs, SELECTION_KNOBS)),
                           lambda: self.select(library, ids, scores))
        prompt = self.prompt(question, ids, words)
        confidence = 100.0 * scores[1] / scores[0] if len(scores) > 1 and scores[0] else 0.0
        model = decide(knobs["llm_model"], confidence)
        layers = decide(knobs["llm_layers"], 0)
        return stages.run("llm", (prompt, model, layers),
                          lambda: self.generate(prompt, model, layers))

    def closed_book(self, question: str) -> str:
        """The exact LLM without retrieval (the baseline retrieval has to beat)."""
        return self.generate(self.prompt(question, [], []), 0, 0).value
