"""What the RAG systems share (rag_bm25, rag_kb): context selection through the C library's
`rag_select`, the prompt, and a short answer by a small LLM (Gemma 3 270M exact; `llm.py`:
its prefill under jax.jit, its variants' decode under jax.jit or IREE), copied from the
passages' tokens (`write`'s `copy_from`). A system subclasses
`RagPipeline` with its retrieval: `attach`, `encode` (the question as the retrieval's
query, a stage that reads no knob) and `search` (in C), and names the C knobs its search
reads (`retrieval_knobs`).

Python-side knobs (the C library has the retrieval and selection ones). The dynamic ones
decide per question on the retrieval's confidence, the second passage's score in % of the
best (`confidence`): with one clear winner the answer only has to be copied from it.
  llm_model   (dynamic) 0 = Gemma 3 270M, 1 = SmolLM2-135M.
  llm_quant   (dynamic) 0 = float32 decode, 1 = W8A8 decode (approxcc's build, IREE),
              2 = bfloat16 decode, 3 = W8A16 decode (the same build).
  llm_prefill (dynamic) 0 = float32 prefill (jax.jit), 1 = W8A8 prefill (approxcc's build),
              2 = bfloat16 prefill (the same build).
  llm_vocab   0 = the whole output vocabulary, 1 = the corpus's tokens only.
  llm_layers  drop the last decoder layer of the model (early exit; not in rag_bm25's and
              rag_kb's spaces: `FAST_KNOBS`).
  llm_answer  the answer's last k tokens skipped: at most 10 - k tokens (exact 0).
  llm_example 1 = the prompt's worked example (`EXAMPLE`, a fifth of an approximate
              system's prompt) left out: a shorter prefill, the answer's form untaught.
`write` (the LLM stage of `answer`, and of a subclass's own prompts) puts the decode knobs'
values in `self.decoding` before calling `generate(prompt, model, layers)`, so a subclass
replacing `generate` with another LLM keeps its signature.
"""

from __future__ import annotations

import ctypes
import importlib.util
import sys
from abc import abstractmethod
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from approxcc.system import knob
from approxcc.system.pipeline import (
    Pipeline,
    Stages,
    Timed,
    decide,
    knob_values,
    used_values,
)
from approxcc.tune.space import Knob, KnobConfig

TOP_K = 3               # passages retrieved (the exact system puts all of them in)
PASSAGE_WORDS = 60      # words of a passage at most: prefill on this CPU is the cost
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
    sys.modules[name] = module      # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


llm = load_module(Path(__file__).resolve().parent / "llm.py", "rag_llm")
ANSWER_TOKENS = llm.ANSWER_TOKENS


def confidence(scores: list[float]) -> float:
    """A retrieval's confidence, what the dynamic LLM knobs decide on: the second passage's
    score in % of the best (0 with fewer than two passages)."""
    return 100.0 * scores[1] / scores[0] if len(scores) > 1 and scores[0] else 0.0


def _confident(name: str, values: tuple[int, ...]) -> Knob:
    transform = {"llm_model": "func_substitute", "llm_quant": "quantize",
                 "llm_prefill": "quantize"}[name]
    return knob(name, transform, values, state=True, thresholds=1, range=(0, 100),
                loc="pipeline.py")


class RagPipeline(Pipeline):
    knobs = (
        _confident("llm_model", (0, 1)),
        knob("llm_layers", "task_skipping", (0, 1), loc="pipeline.py"),
        _confident("llm_quant", (0, 1, 2, 3)),
        _confident("llm_prefill", (0, 1, 2)),
        # a narrower output head skips most of its rows
        knob("llm_vocab", "func_substitute", (0, 1), loc="pipeline.py"),
        # the answer's last tokens skipped
        knob("llm_answer", "task_skipping", (0, ANSWER_TOKENS - 6, ANSWER_TOKENS - 4),
             loc="pipeline.py"),
        # the prompt's worked example skipped
        knob("llm_example", "task_skipping", (0, 1), loc="pipeline.py"),
    )
    retrieval_knobs: tuple[str, ...] = ()     # the C knobs `search` reads (its cache key)
    query_stage = "query"                     # the profile's name for `encode`

    def __init__(self, articles: Any, models: tuple[str, ...] = MODELS):
        self.articles = articles
        self.model_names = models
        # what a subclass's own model compiled (before its first timed call: stage times
        # are the system's)
        self.compiled: set[tuple[Any, ...]] = set()
        self.llm = llm.Llm(models, self.shortlist_texts)
        self.decoding = llm.Variant()                  # the decode knobs of this answer

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

    def shortlist_texts(self) -> list[str]:
        """What a restricted vocabulary must cover: every summary and the prompt's text."""
        fixed = [INSTRUCTION, CLOSED_BOOK, EXAMPLE, "Passage: ", "Question: ", "Answer:"]
        return fixed + [f"{a.title}: {a.extract}" for a in self.articles]

    def prepare(self, configs: Sequence[KnobConfig] | None = None) -> float:
        """Every LLM variant the knobs can ask for (those `configs` use, when given), built
        now (seconds IREE compiled). A subclass whose `generate` is another LLM's has none
        of these to build."""
        if type(self).generate is not RagPipeline.generate:
            return 0.0
        # each configuration's own combinations (the exact system's and one configuration's
        # are few: only theirs are compiled), every combination when tuning (configs None)
        per_config = [None] if configs is None else [[c] for c in configs]
        return self.llm.prepare(list(dict.fromkeys(
            llm.Variant(m, k, q, v, prefill=p) for values in
            (used_values(self.knobs, c) for c in per_config) for m in values["llm_model"]
            for k in values.get("llm_layers", (0,)) for q in values["llm_quant"]
            for v in values["llm_vocab"] for p in values.get("llm_prefill", (0,)))))

    def generate(self, prompt: str, model: int, layers: int) -> Timed:
        """Greedy answer to the end of its first line, decoded as `self.decoding` says."""
        variant = llm.Variant(model, layers, self.decoding.quant, self.decoding.vocab,
                              self.decoding.tokens, self.decoding.prefill,
                              self.decoding.copy_from)
        text, parts = self.llm.generate(prompt, variant)
        return Timed(text, parts)

    # -- the system --------------------------------------------------------------------------

    def passages(self, docs: list[int], words: list[int]) -> list[str]:
        """The passages of the prompt: the first `words` words of each doc, after its title."""
        return [f"{self.articles[d].title}: {' '.join(self.passage(d)[:n])}"
                for d, n in zip(docs, words, strict=True) if n > 0]

    def prompt(self, question: str, docs: list[int], words: list[int],
               example: bool = True) -> str:
        passages = self.passages(docs, words)
        context = "".join(f"Passage: {p}\n" for p in passages)
        head = INSTRUCTION if passages else CLOSED_BOOK
        return f"{head}\n{EXAMPLE if example else ''}{context}Question: {question}\nAnswer:"

    def answer(self, question: str, library: ctypes.CDLL, knobs: KnobConfig,
               stages: Stages) -> str:
        query = stages.run(self.query_stage, question, lambda: self.encode(question))
        retrieval = knob_values(knobs, self.retrieval_knobs)
        ids, scores = stages.run("retrieval", (question, retrieval),
                                 lambda: self.search(library, query))
        words = stages.run("selection", (question, retrieval,
                                         knob_values(knobs, SELECTION_KNOBS)),
                           lambda: self.select(library, ids, scores))
        sure = confidence(scores)
        example = not decide(knobs["llm_example"], 0) if "llm_example" in knobs else True
        return self.write(self.prompt(question, ids, words, example),
                          decide(knobs["llm_model"], sure), knobs, stages, sure,
                          tuple(self.passages(ids, words)))

    def write(self, prompt: str, model: int, knobs: KnobConfig, stages: Stages,
              sure: float = 0.0, copy_from: tuple[str, ...] = ()) -> str:
        """The LLM stage: `model`'s answer to a prompt under the decode knobs of `knobs`
        (those of `RagPipeline.knobs` it has), the dynamic ones deciding at `sure`; an
        answer in the words of `copy_from` when given (extractive reading, `llm.py`)."""
        layers = decide(knobs["llm_layers"], 0) if "llm_layers" in knobs else 0
        quant = decide(knobs["llm_quant"], sure) if "llm_quant" in knobs else 0
        prefill = decide(knobs["llm_prefill"], sure) if "llm_prefill" in knobs else 0
        self.decoding = llm.Variant(quant=quant, vocab=decide(knobs["llm_vocab"], 0),
                                    tokens=ANSWER_TOKENS - decide(knobs["llm_answer"], 0),
                                    prefill=prefill,
                                    copy_from=copy_from)
        return stages.run("llm", (prompt, model, layers, self.decoding),
                          lambda: self.generate(prompt, model, layers))

    def closed_book(self, question: str) -> str:
        """The exact LLM without retrieval (the baseline retrieval has to beat)."""
        self.decoding = llm.Variant()
        return self.generate(self.prompt(question, [], []), 0, 0).value


# The RAG systems' LLM knobs: without llm_layers, which no tuning run picked (the first
# run's budget-3/6/9 configurations keep every layer) and whose every W8A8 decoder would be
# one more IREE compile.
FAST_KNOBS = tuple(k for k in RagPipeline.knobs if k.name != "llm_layers")
