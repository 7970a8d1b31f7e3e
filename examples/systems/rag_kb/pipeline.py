"""The Python half of rag_kb: question -> MiniLM embedding (JAX) -> vector search (C) ->
context selection (C) -> a short answer by a small LLM (../common/rag.py, shared with
rag_bm25).

Loaded by path by approxcc.system (`system.toml` `pipeline`). The knowledge base is derived
from the summaries' MiniLM embeddings (`workloads.data.minilm`, cached, the same vectors as
examples/kernels/kb) on first use, into the workloads cache (`systems/rag_kb-N/`): gen.py's
rotation onto principal axes in stride layout, its spherical k-means clusters and int8
copies, in kb.bin's layout with no queries (a question's embedding is the query).
"""

from __future__ import annotations

import ctypes
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from approxcc.tune.space import KnobConfig

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("rag_common", HERE.parent / "common" / "rag.py")
assert _spec is not None and _spec.loader is not None
rag = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rag)
gen = rag.load_module(HERE.parents[1] / "kernels" / "kb" / "gen.py", "kb_gen")

CLUSTERS = 64           # the kernel's; a multiple of 8 (the probe layout)
SMALL_CLUSTERS = 8      # for a corpus of a few hundred summaries


def write_kb(path: Path, vectors: np.ndarray, clusters: int, seed: int = 0) -> np.ndarray:
    """kb.bin of `vectors` (gen.py's layout, zero queries); returns the rotation a query
    must be multiplied by."""
    rotate = gen.rotation(vectors)
    docs = (vectors @ rotate).astype(np.float32)
    centroids = gen.spherical_kmeans(docs, clusters, seed).astype(np.float32)
    assign = np.argmax(docs @ centroids.T, axis=1)
    order = np.argsort(assign, kind="stable")
    starts = np.searchsorted(assign[order], np.arange(clusters + 1))
    doc_q8, doc_scale = gen.quantize(docs[order])
    tmp = path.with_suffix(".tmp")
    with tmp.open("wb") as f:
        np.array([len(docs), docs.shape[1], clusters, 0], "<i4").tofile(f)
        for ints in (starts, order):
            ints.astype("<i4").tofile(f)
        for floats in (centroids, docs[order], doc_scale):
            floats.astype("<f4").tofile(f)
        doc_q8.tofile(f)
    tmp.replace(path)          # atomic: a killed run never leaves a truncated file
    return rotate


class RagKb(rag.RagPipeline):
    knobs = rag.FAST_KNOBS
    retrieval_knobs = ("probe", "dims", "precision")
    query_stage = "embedding"

    def __init__(self, root: Path, docs: int | None = None,
                 models: tuple[str, ...] = rag.MODELS):
        from workloads.data import minilm, wiki
        from workloads.packages import cache_dir

        super().__init__(wiki.load_summaries()[:docs], models)
        self.minilm = minilm
        work = cache_dir("systems", f"rag_kb-{docs or 'all'}")
        self.kb = work / "kb.bin"
        rotation = work / "rotation.npy"
        if not self.kb.is_file() or not rotation.is_file():
            suffix = "" if docs is None else f"-{len(self.articles)}"
            vectors = minilm.cached_embeddings(f"wiki-extracts{suffix}",
                                               [a.extract for a in self.articles])
            np.save(rotation, write_kb(self.kb, vectors,
                                       CLUSTERS if docs is None else SMALL_CLUSTERS))
        self.rotation = np.load(rotation).astype(np.float32)

    def prepare(self, configs: Sequence[KnobConfig] | None = None) -> float:
        self.warm_encoder()
        return super().prepare(configs)

    def warm_encoder(self) -> None:
        """The encoder compiled (jit, once per padded length) before any stage is timed: the
        question set's longest question is 21 tokens (a longer one compiles when asked)."""
        for words in (8, 24):
            self.minilm.model().embed(["a " * words], batch=1)

    # -- C half ------------------------------------------------------------------------------

    def attach(self, library: ctypes.CDLL) -> None:
        ints, floats = ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_float)
        library.kb_load.argtypes = [ctypes.c_char_p]
        library.kb_retrieve.argtypes = [floats, ctypes.c_char_p, ctypes.c_float, ctypes.c_int,
                                        ints, floats]
        library.rag_select.argtypes = [floats, ctypes.c_int, ints, ints]
        if library.kb_load(str(self.kb).encode()) != len(self.articles):
            raise RuntimeError(f"cannot load {self.kb}")

    def encode(self, question: str) -> tuple[np.ndarray, np.ndarray, float]:
        """The question's embedding in the knowledge base's axes, and its int8 copy."""
        vector = self.minilm.model().embed([question], batch=1) @ self.rotation
        q8, scale = gen.quantize(vector)
        return np.ascontiguousarray(vector[0], np.float32), q8[0], float(scale[0])

    def search(self, library: ctypes.CDLL, query: Any) -> tuple[list[int], list[float]]:
        vector, q8, scale = query
        ids, scores = (ctypes.c_int * rag.TOP_K)(), (ctypes.c_float * rag.TOP_K)()
        found = library.kb_retrieve(vector.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                    q8.tobytes(), scale, rag.TOP_K, ids, scores)
        return list(ids[:found]), list(scores[:found])
