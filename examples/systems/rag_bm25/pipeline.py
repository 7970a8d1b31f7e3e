"""The Python half of rag_bm25: question -> BM25 retrieval (C) -> context selection (C) ->
a short answer by a small LLM (Gemma 3 270M exact; JAX on the CPU).

Loaded by path by approxcc.system (`system.toml` `pipeline`). The corpus index is derived
from the summaries on first use, into the workloads cache (`systems/rag_bm25-N/`, the layout
of examples/kernels/bm25/gen.py).

Python-side knobs (the C library has the retrieval and selection ones):
  llm_model   (dynamic) 0 = Gemma 3 270M, 1 = SmolLM2-135M, decided per question from the
              retrieval's confidence (the second passage's score in % of the best): with
              one clear winner the small model only has to copy from it.
  llm_layers  drop the last k decoder layers of the model (early exit).
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from approxcc.system.pipeline import Pipeline, Stages, Timed, decide, knob_values
from approxcc.tune.space import Knob, KnobConfig

TOP_K = 3               # passages retrieved (the exact system puts all of them in)
PASSAGE_WORDS = 60      # words of a passage at most: prefill on this CPU is the cost
ANSWER_TOKENS = 10
MODELS = ("gemma3", "smollm2")
RETRIEVAL_KNOBS = ("doc_stride", "term_skip", "early_stop")
SELECTION_KNOBS = ("extra_passage", "passage_tail")
INSTRUCTION = "Answer the question in a few words, using the passages."
CLOSED_BOOK = "Answer the question in a few words."
EXAMPLE = "Question: Who wrote Hamlet?\nAnswer: William Shakespeare\n"   # the answer's form
# Words of the question's form, not of its subject: left out of the query (they would
# retrieve summaries that happen to say "nationality" or "profession").
QUESTION_WORDS = frozenset(
    "what who whom which where when how in is was were did does the a an of part world "
    "country nationality profession".split())


def _gen_module() -> Any:
    """examples/kernels/bm25/gen.py: the corpus layout and tokenizer this index shares."""
    path = Path(__file__).resolve().parents[2] / "kernels" / "bm25" / "gen.py"
    spec = importlib.util.spec_from_file_location("bm25_gen", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class RagBm25(Pipeline):
    knobs = (
        Knob("llm_model", "func_substitute", (0, 1), 0, dynamic=True, thresholds=1,
             range=(0, 100), loc="pipeline.py"),
        Knob("llm_layers", "task_skipping", (0, 1, 2, 3), 0, loc="pipeline.py"),
    )

    def __init__(self, root: Path, docs: int | None = None, models: tuple[str, ...] = MODELS):
        from workloads.data import wiki
        from workloads.packages import cache_dir

        self.work = cache_dir("systems", f"rag_bm25-{docs or 'all'}")
        self.gen = _gen_module()
        self.articles = wiki.load_summaries()[:docs]
        self.model_names = models
        self.corpus = self.work / "corpus.bin"
        vocab_file = self.work / "vocab.json"
        if not vocab_file.is_file() or not self.corpus.is_file():
            vocab, idf = self.gen.write_corpus(
                self.corpus, [self.gen.tokenize(a.extract) for a in self.articles])
            vocab_file.write_text(json.dumps({"vocab": vocab, "idf": idf.tolist()}))
        index = json.loads(vocab_file.read_text())
        self.vocab: dict[str, int] = index["vocab"]
        self.idf = np.array(index["idf"], np.float32)
        self.runners: dict[tuple[str, int], Any] = {}
        self.compiled: set[tuple[Any, ...]] = set()    # (model, layers, padded length)

    # -- C half ------------------------------------------------------------------------------

    def attach(self, library: ctypes.CDLL) -> None:
        ints, floats = ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_float)
        library.rag_load.argtypes = [ctypes.c_char_p]
        library.rag_retrieve.argtypes = [ints, ctypes.c_int, ctypes.c_int, ints, floats]
        library.rag_select.argtypes = [floats, ctypes.c_int, ints, ints]
        if library.rag_load(str(self.corpus).encode()) != len(self.articles):
            raise RuntimeError(f"cannot load {self.corpus}")

    def terms(self, question: str) -> list[int]:
        """The question's known words, by decreasing idf (the order the C scoring expects)."""
        ids = {self.vocab[w] for w in self.gen.tokenize(question)
               if w in self.vocab and w not in QUESTION_WORDS}
        return sorted(ids, key=lambda t: (-self.idf[t], t))

    def retrieve(self, library: ctypes.CDLL, question: str) -> tuple[list[int], list[float]]:
        terms = self.terms(question)
        q = (ctypes.c_int * max(1, len(terms)))(*terms)
        ids, scores = (ctypes.c_int * TOP_K)(), (ctypes.c_float * TOP_K)()
        found = library.rag_retrieve(q, len(terms), TOP_K, ids, scores)
        return list(ids[:found]), list(scores[:found])

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
        retrieval = knob_values(knobs, RETRIEVAL_KNOBS)
        ids, scores = stages.run("retrieval", (question, retrieval),
                                 lambda: self.retrieve(library, question))
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
