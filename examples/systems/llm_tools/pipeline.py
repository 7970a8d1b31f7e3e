"""The Python half of llm_tools: question -> triage by a small LLM (which tool?) -> the tool
(C) -> the answer, written by the LLM from the tool's output.

Tools (inputs parsed from the question, which states them):
  search   BM25 (../rag_bm25) and vector search (../rag_kb) over the Wikipedia summaries,
           fused by reciprocal rank, context selection (../common/select.c) and the RAG
           answer (../common/rag.py)
  links    PageRank over the link graph the question gives (tools.c, pagerank.c)
  energy   lavaMD's potential energy of the particle box of a seed (tools.c, lavamd.c),
           rounded as the question says
  cluster  the k-means cluster a point falls in (cluster.c, kmeans.c: a second library)

Triage scores the tools' names as the next token after a prompt (no decoding). The prompt's
fixed head (tool descriptions, examples: ~220 tokens) is prefilled once per triage variant and
its KV cache kept; a question then prefills only its own tokens over it (`PromptCache`): the
same logits as one prefill of the whole prompt, at a fraction of the cost.
Python-side knobs (beside the C library's and the k-means library's):
  triage_model   Gemma 3 270M or SmolLM2-135M scores the tools
  triage_layers  drop the last k decoder layers of the triage model
  triage_prompt  the full prompt (tool descriptions and an example of each) or the names only
  retriever      (dynamic on BM25's confidence: the second summary's score in % of the best)
                 both retrievals fused, BM25's alone or the vector search's alone
  tool_answer    the answer of a tool question written by Gemma, by SmolLM2, or the tool's
                 output as it is
  llm_model, llm_layers, llm_vocab, llm_answer  the answering LLM's (../common/rag.py;
                 its W8A8 decode and prefill, llm_quant and llm_prefill, are left out: see
                 `prepare`)
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import importlib.util
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from approxcc.system.library import TunableLibrary, build_library, c_knob_space, clang_args
from approxcc.system.pipeline import Stages, Timed, decide, knob_values
from approxcc.tune.space import Knob, KnobConfig, KnobSpace

HERE = Path(__file__).resolve().parent
SYSTEMS = HERE.parent
KERNELS = SYSTEMS.parent / "kernels"


_spec = importlib.util.spec_from_file_location("rag_common", SYSTEMS / "common" / "rag.py")
assert _spec is not None and _spec.loader is not None
rag = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rag)

TOOLS = ("search", "links", "energy", "cluster")     # the triage's labels
NAMES = ("Alpha", "Beta", "Gamma", "Delta")          # cluster names, in the centres' order
UNITS = {"whole number": 1, "ten": 10, "hundred": 100, "thousand": 1000,
         "ten thousand": 10000}
CLUSTER_SOURCES = [HERE / "cluster.c", KERNELS / "kmeans" / "kmeans.c",
                   KERNELS / "kmeans" / "state.c"]
CLUSTER_KNOB_SOURCES = CLUSTER_SOURCES[1:2]     # the one with knobs: parsed for the space
RENAMED = {"iterations": "kmeans_iterations"}       # k-means library knob -> system knob
BM25_KNOBS = ("doc_stride", "term_skip", "early_stop")
KB_KNOBS = ("probe", "dims", "precision")
TOOL_KNOBS = {"links": ("in_edges", "settled", "iterations"),
              "energy": ("partners", "pair_weight", "corners"),
              "cluster": ("assign", "distance", "kmeans_iterations")}
TRIAGE_KNOBS = ("triage_model", "triage_layers", "triage_prompt")
RRF = 1                 # reciprocal rank fusion: a summary scores sum of 1 / (RRF + rank)

# One question of each tool and its result: the triage's examples, and the answer's form.
EXAMPLES = {
    "links": ("In a link graph where Rome links to Italy; Italy links to Rome and Europe, "
              "which article is most central (highest PageRank)?", "Italy"),
    "energy": ("What is the potential energy of the particle box with seed 5, 2 boxes a side "
               "and 8 particles per box? Round to the nearest ten.", "120"),
    "cluster": ("Which cluster does the point (1.0, 2.0) fall in, with cluster centres Alpha "
                "(0.0, 0.0) and Beta (5.0, 5.0)?", "Alpha"),
}
SEARCH_EXAMPLES = ("What nationality was Max Planck?", "Who painted the Mona Lisa?",
                   "What is the capital of Peru?")
# The full prompt: what each tool does, then examples, retrieval ones spread among them
# (the small model copies the label of a recent example too readily).
TRIAGE_HEAD = (
    "Pick the tool that answers the question.\n"
    "search: a fact about a person, place, work or thing\n"
    "links: the most central article of a link graph\n"
    "energy: the potential energy of a particle box\n"
    "cluster: which cluster a point falls in\n" +
    "".join(f"Question: {q}\nTool: {tool}\n" for q, tool in (
        (SEARCH_EXAMPLES[0], "search"), (EXAMPLES["links"][0], "links"),
        (SEARCH_EXAMPLES[1], "search"), (EXAMPLES["energy"][0], "energy"),
        (EXAMPLES["cluster"][0], "cluster"), (SEARCH_EXAMPLES[2], "search"))))
TRIAGE_SHORT = f"Tools: {', '.join(TOOLS)}.\n"
TOOL_INSTRUCTION = "Answer the question in a few words, using the tool's result."

_POINT = r"\((-?\d+(?:\.\d+)?), (-?\d+(?:\.\d+)?)\)"


# -- the questions' inputs -------------------------------------------------------------------

def parse_graph(question: str) -> tuple[list[str], list[tuple[int, int]]] | None:
    """The articles and links of "In a link graph where A links to B and C; B links to C, ..."."""
    m = re.search(r"link graph where (.+?), which article", question)
    if not m:
        return None
    titles: list[str] = []
    edges = []

    def node(title: str) -> int:
        if title not in titles:
            titles.append(title)
        return titles.index(title)

    for part in m.group(1).split("; "):
        src, _, targets = part.partition(" links to ")
        if not targets:
            return None
        s = node(src.strip())
        for t in re.split(r", | and ", targets):
            edges.append((s, node(t.strip())))
    return titles, edges


def parse_energy(question: str) -> tuple[int, int, int, int] | None:
    """Seed, boxes a side, particles per box and the rounding unit."""
    m = re.search(r"seed (\d+), (\d+) boxes a side and (\d+) particles per box\? Round to the "
                  r"nearest ([a-z ]+?)\.", question)
    if not m or m.group(4) not in UNITS:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), UNITS[m.group(4)]


def parse_cluster(question: str) -> tuple[np.ndarray, np.ndarray | None, np.ndarray] | None:
    """The named centres, the points to cluster (None: the centres are final) and the
    point asked about."""
    centres = re.findall(rf"({'|'.join(NAMES)}) {_POINT}", question)
    asked = re.search(rf"the point {_POINT}", question)
    if not centres or not asked:
        return None
    c = np.array([[float(x), float(y)] for _, x, y in centres], np.float32)
    target = np.array([float(asked.group(1)), float(asked.group(2))], np.float32)
    points = None
    m = re.search(r"k-means on the points (.+?) starting from", question)
    if m:
        points = np.array([[float(x), float(y)] for x, y in re.findall(_POINT, m.group(1))],
                          np.float32)
    return c, points, target


# -- the tools (C) ---------------------------------------------------------------------------

def declare_tools(library: ctypes.CDLL) -> None:
    ints, floats = ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_float)
    library.lt_pagerank.argtypes = [ctypes.c_int, ctypes.c_int, ints, ints]
    library.lt_energy.argtypes = [ctypes.c_uint, ctypes.c_int, ctypes.c_int]
    library.lt_energy.restype = ctypes.c_double
    library.lt_box.argtypes = [ctypes.c_uint, ctypes.c_int, ctypes.c_int] + [floats] * 4


def declare_cluster(library: ctypes.CDLL) -> None:
    floats = ctypes.POINTER(ctypes.c_float)
    library.lt_nearest.argtypes = [floats, ctypes.c_int, floats]
    library.lt_kmeans.argtypes = [floats, ctypes.c_int, floats, ctypes.c_int, floats]


def _floats(a: np.ndarray) -> Any:
    return np.ascontiguousarray(a, np.float32).ctypes.data_as(ctypes.POINTER(ctypes.c_float))


def run_tool(tool: str, question: str, tools: ctypes.CDLL, cluster: ctypes.CDLL) -> str | None:
    """The tool's result for a question of its kind (None: the question is not of its kind)."""
    if tool == "links":
        graph = parse_graph(question)
        if graph is None:
            return None
        titles, edges = graph
        src = (ctypes.c_int * len(edges))(*[s for s, _ in edges])
        dst = (ctypes.c_int * len(edges))(*[d for _, d in edges])
        best = tools.lt_pagerank(len(titles), len(edges), src, dst)
        return titles[best] if best >= 0 else None
    if tool == "energy":
        box = parse_energy(question)
        if box is None:
            return None
        seed, dim, per_box, unit = box
        energy = tools.lt_energy(seed, dim, per_box)
        return str(round(energy / unit) * unit) if np.isfinite(energy) else None
    if tool == "cluster":
        parsed = parse_cluster(question)
        if parsed is None:
            return None
        centres, points, target = parsed
        centres = centres.copy()         # lt_kmeans moves them
        k = len(centres)
        if points is None:
            best = cluster.lt_nearest(_floats(centres), k, _floats(target))
        else:
            best = cluster.lt_kmeans(_floats(points), len(points), _floats(centres), k,
                                     _floats(target))
        return NAMES[best] if best >= 0 else None
    return None


def cluster_knobs(args: list[str]) -> tuple[Knob, ...]:
    """The k-means library's knobs under their system names."""
    space = c_knob_space(CLUSTER_KNOB_SOURCES, args)
    return tuple(dataclasses.replace(k, name=RENAMED.get(k.name, k.name)) for k in space.knobs)


def cluster_config(knobs: KnobConfig) -> KnobConfig:
    """The k-means library's part of a configuration, under the library's knob names."""
    back = {v: k for k, v in RENAMED.items()}
    return {back.get(n, n): knobs[n] for n in TOOL_KNOBS["cluster"]}


def fuse(*rankings: tuple[list[int], list[float]]) -> tuple[list[int], list[float]]:
    """Reciprocal rank fusion of ranked lists, the best TOP_K (ties: earlier lists first)."""
    score: dict[int, float] = {}
    for ids, _ in rankings:
        for rank, doc in enumerate(ids):
            score[doc] = score.get(doc, 0.0) + 1.0 / (RRF + rank)
    best = sorted(score, key=lambda d: -score[d])[:rag.TOP_K]
    return best, [score[d] for d in best]


class PromptCache:
    """A prompt head's KV cache, filled once; `logits(tail)` is then the next-token scores
    after head + tail, computed for the tail's tokens only (they attend to the head's keys
    as in one prefill of the whole prompt). The cache is never donated: every tail reuses
    it, and the tail's own keys are dropped."""

    def __init__(self, runner: Any, head: list[int]):
        import jax
        import jax.numpy as jnp

        self.model, self.params, self.start = runner.model, runner.params, len(head)
        self.max_len = runner.max_len
        runner.prefill(head)
        # a copy: the runner's next decode step donates its own cache
        self.cache = jax.tree_util.tree_map(jnp.copy, runner.cache)
        self.tail = _tail_step(self.model.arch, self.model.config)

    def padded(self, n: int) -> int:
        from workloads.models.decode import prefill_length

        # the head's padding is overwritten by the tail (a bucket is longer than it)
        return prefill_length(n, self.max_len - self.start)

    def logits(self, tail: list[int]) -> np.ndarray:
        from workloads.models.decode import pad_prompt

        tokens = pad_prompt(tail, self.padded(len(tail)))
        out = self.tail(self.params, self.cache, tokens, np.int32(self.start),
                        np.int32(len(tail)))
        return self.model.full_logits(np.asarray(out))


@functools.lru_cache(maxsize=8)
def _tail_step(arch: Any, config: Any) -> Any:
    """jit: the last tail token's logits, the tail at `pos` over a head's cache."""
    import jax

    def tail(params: Any, cache: Any, tokens: Any, pos: Any, length: Any) -> Any:
        hidden, _ = arch.forward(config, params, cache, tokens, pos)
        return arch.logits(config, params, jax.lax.dynamic_slice_in_dim(hidden, length - 1,
                                                                         1))[0]

    return jax.jit(tail)


class LlmTools(rag.RagPipeline):
    def __init__(self, root: Path, docs: int | None = None,
                 models: tuple[str, ...] = rag.MODELS):
        self.bm25 = rag.load_module(SYSTEMS / "rag_bm25" / "pipeline.py", "llm_tools_bm25").RagBm25(
            SYSTEMS / "rag_bm25", docs, models)
        self.kb = rag.load_module(SYSTEMS / "rag_kb" / "pipeline.py", "llm_tools_kb").RagKb(
            SYSTEMS / "rag_kb", docs, models)
        super().__init__(self.bm25.articles, models)
        self.args = clang_args([], HERE)
        self.cluster_space = KnobSpace(cluster_knobs(self.args))
        here = "pipeline.py"
        answer_llm = {k.name: k for k in rag.RagPipeline.knobs}
        # The tuner screens knobs one at a time in this order (then the C library's,
        # context selection first), each on every tune question (minutes apiece when the
        # answers rerun): the likely winners first, by the exact profile's shares (the
        # answer's prefill and decode, then triage); the retriever's stages are cheap.
        self.knobs = (
            Knob("tool_answer", "func_substitute", (0, 1, 2), 0, loc=here),
            *(answer_llm[n] for n in ("llm_vocab", "llm_answer")),
            Knob("triage_layers", "task_skipping", (0, 1, 2, 3), 0, loc=here),
            *(answer_llm[n] for n in ("llm_model", "llm_layers")),
            Knob("retriever", "func_substitute", (0, 1, 2), 0, dynamic=True, thresholds=1,
                 range=(0, 100), loc=here),
            Knob("triage_prompt", "func_substitute", (0, 1), 0, loc=here),
            Knob("triage_model", "func_substitute", (0, 1), 0, loc=here),
            *self.cluster_space.knobs)
        self.cluster: TunableLibrary | None = None
        self.heads: dict[tuple[int, int, bool], PromptCache] = {}
        self.priors: dict[tuple[int, int, bool], np.ndarray] = {}
        self.labels: dict[int, list[int]] = {}      # the tools' token ids, by model

    def prepare(self) -> float:
        """The LLM variants of the knobs, under jax.jit (compiled when first used, outside
        the timed stages). rag.py's W8A8 decode and prefill (`llm_quant`, `llm_prefill`)
        are left out: its IREE variants of both models take longer to build than a tuning
        run here."""
        self.kb.warm_encoder()   # the question encoder's compiles, outside the timed stages
        return self.llm.prepare([rag.llm.Variant(m, k, 0, v) for m in (0, 1) for k in (0, 1)
                                 for v in (0, 1)])

    # -- C half ------------------------------------------------------------------------------

    def attach(self, library: ctypes.CDLL) -> None:
        self.bm25.attach(library)
        self.kb.attach(library)
        declare_tools(library)
        if self.cluster is None:        # built here, outside any timed stage
            out = Path(tempfile.mkdtemp(prefix="llm-tools-cluster-")) / "libcluster.so"
            build_library(CLUSTER_SOURCES, self.args, out)
            self.cluster = TunableLibrary(out, self.cluster_space, declare_cluster)

    def cluster_library(self, knobs: KnobConfig) -> ctypes.CDLL:
        """The k-means library under the configuration's k-means knobs."""
        assert self.cluster is not None         # attach() ran
        return self.cluster.load(cluster_config(knobs))

    # RagPipeline's retrieval: unused (search_answer runs both retrievals as stages)
    def encode(self, question: str) -> Any:
        return self.bm25.encode(question)

    def search(self, library: ctypes.CDLL, query: Any) -> tuple[list[int], list[float]]:
        return self.bm25.search(library, query)

    # -- triage --------------------------------------------------------------------------------

    @staticmethod
    def triage_head(short: bool) -> str:
        return TRIAGE_SHORT if short else TRIAGE_HEAD

    @staticmethod
    def triage_tail(question: str) -> str:
        return f"Question: {question}\nTool:"

    def triage(self, question: str, model: int, layers: int, short: bool) -> Timed:
        """The tool whose name the model finds likeliest next, against the model's prior
        (its scores for an empty question: contextual calibration, once per prompt and
        model), and the seconds it took. The prompt's head is prefilled once per variant
        (`PromptCache`): a question costs its own tokens."""
        key = (model, layers, short)
        head = self.heads.get(key)
        if head is None:
            from workloads.models.decode import prompt_ids

            base = self.llm.base(model)
            head = self.heads[key] = PromptCache(
                self.llm.prefill_runner(model, layers),
                prompt_ids(base, self.triage_head(short), chat=False))
            names = [base.tokenizer.encode(f" {t}", add_bos=False)[0] for t in TOOLS]
            self.labels[model] = names
            self.priors[key] = head.logits(self.tail_ids(model, ""))[names]
        ids = self.tail_ids(model, question)
        shape = (*key, head.padded(len(ids)), "triage")
        if shape not in self.compiled:       # compile first: stage times are the system's
            head.logits(ids)
            self.compiled.add(shape)
        start = time.perf_counter()
        scores = head.logits(ids)[self.labels[model]] - self.priors[key]
        return Timed(TOOLS[int(np.argmax(scores))], {"triage": time.perf_counter() - start})

    def tail_ids(self, model: int, question: str) -> list[int]:
        return self.llm.base(model).tokenizer.encode(self.triage_tail(question), add_bos=False)

    # -- the system --------------------------------------------------------------------------

    def search_answer(self, question: str, library: ctypes.CDLL, knobs: KnobConfig,
                      stages: Stages) -> str:
        terms = stages.run("query", question, lambda: self.bm25.encode(question))
        by_words = stages.run("bm25", (question, knob_values(knobs, BM25_KNOBS)),
                              lambda: self.bm25.search(library, terms))
        mode = decide(knobs["retriever"], rag.confidence(by_words[1]))
        ranked = by_words
        if mode != 1:
            query = stages.run("embedding", question, lambda: self.kb.encode(question))
            by_meaning = stages.run("kb", (question, knob_values(knobs, KB_KNOBS)),
                                    lambda: self.kb.search(library, query))
            ranked = by_meaning if mode == 2 else fuse(by_words, by_meaning)
        ids, scores = ranked
        words = stages.run("selection", (tuple(ids), tuple(scores),
                                         knob_values(knobs, rag.SELECTION_KNOBS)),
                           lambda: self.select(library, ids, scores))
        prompt = self.prompt(question, ids, words)
        return self.write(prompt, decide(knobs["llm_model"], rag.confidence(scores)), knobs,
                          stages)

    def tool_answer(self, question: str, tool: str, result: str, knobs: KnobConfig,
                    stages: Stages) -> str:
        writer = decide(knobs["tool_answer"], 0)
        if writer == 2:
            return result
        example, shown = EXAMPLES[tool]
        prompt = (f"{TOOL_INSTRUCTION}\nQuestion: {example}\nTool result: {shown}\n"
                  f"Answer: {shown}\nQuestion: {question}\nTool result: {result}\nAnswer:")
        return self.write(prompt, writer, knobs, stages)

    def answer(self, question: str, library: ctypes.CDLL, knobs: KnobConfig,
               stages: Stages) -> str:
        triage = [decide(knobs[k], 0) for k in TRIAGE_KNOBS]
        tool = stages.run("triage", (question, *triage),
                          lambda: self.triage(question, triage[0], triage[1], bool(triage[2])))
        if tool == "search":
            return self.search_answer(question, library, knobs, stages)
        cluster = self.cluster_library(knobs)
        result = stages.run("tool", (question, tool, knob_values(knobs, TOOL_KNOBS[tool])),
                            lambda: run_tool(tool, question, library, cluster))
        if result is None:      # a wrong tool: the LLM answers without one
            return self.write(self.prompt(question, [], []), 0, knobs, stages)
        return self.tool_answer(question, tool, result, knobs, stages)

