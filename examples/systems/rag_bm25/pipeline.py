"""The Python half of rag_bm25: question -> BM25 retrieval (C) -> context selection (C) ->
a short answer by a small LLM (../common/rag.py, shared with rag_kb).

Loaded by path by approxcc.system (`system.toml` `pipeline`). The corpus index is derived
from the summaries on first use, into the workloads cache (`systems/rag_bm25-N/`, the layout
of examples/kernels/bm25/gen.py).
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("rag_common", HERE.parent / "common" / "rag.py")
assert _spec is not None and _spec.loader is not None
rag = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rag)

# Words of the question's form, not of its subject: left out of the query (they would
# retrieve summaries that happen to say "nationality" or "profession").
QUESTION_WORDS = frozenset(
    "what who whom which where when how in is was were did does the a an of part world "
    "country nationality profession".split())


class RagBm25(rag.RagPipeline):
    knobs = rag.FAST_KNOBS
    retrieval_knobs = ("doc_stride", "term_skip", "early_stop")

    def __init__(self, root: Path, docs: int | None = None,
                 models: tuple[str, ...] = rag.MODELS):
        from workloads.data import wiki
        from workloads.packages import cache_dir

        super().__init__(wiki.load_summaries()[:docs], models)
        self.work = cache_dir("systems", f"rag_bm25-{docs or 'all'}")
        # examples/kernels/bm25/gen.py: the corpus layout and tokenizer this index shares
        self.gen = rag.load_module(HERE.parents[1] / "kernels" / "bm25" / "gen.py", "bm25_gen")
        self.corpus = self.work / "corpus.bin"
        vocab_file = self.work / "vocab.json"
        if not vocab_file.is_file() or not self.corpus.is_file():
            vocab, idf = self.gen.write_corpus(
                self.corpus, [self.gen.tokenize(a.extract) for a in self.articles])
            vocab_file.write_text(json.dumps({"vocab": vocab, "idf": idf.tolist()}))
        index = json.loads(vocab_file.read_text())
        self.vocab: dict[str, int] = index["vocab"]
        self.idf = np.array(index["idf"], np.float32)

    # -- C half ------------------------------------------------------------------------------

    def attach(self, library: ctypes.CDLL) -> None:
        ints, floats = ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_float)
        library.rag_load.argtypes = [ctypes.c_char_p]
        library.rag_retrieve.argtypes = [ints, ctypes.c_int, ctypes.c_int, ints, floats]
        library.rag_select.argtypes = [floats, ctypes.c_int, ints, ints]
        if library.rag_load(str(self.corpus).encode()) != len(self.articles):
            raise RuntimeError(f"cannot load {self.corpus}")

    def encode(self, question: str) -> list[int]:
        """The question's known words, by decreasing idf (the order the C scoring expects)."""
        ids = {self.vocab[w] for w in self.gen.tokenize(question)
               if w in self.vocab and w not in QUESTION_WORDS}
        return sorted(ids, key=lambda t: (-self.idf[t], t))

    def search(self, library: ctypes.CDLL, terms: list[int]) -> tuple[list[int], list[float]]:
        q = (ctypes.c_int * max(1, len(terms)))(*terms)
        ids, scores = (ctypes.c_int * rag.TOP_K)(), (ctypes.c_float * rag.TOP_K)()
        found = library.rag_retrieve(q, len(terms), rag.TOP_K, ids, scores)
        return list(ids[:found]), list(scores[:found])
