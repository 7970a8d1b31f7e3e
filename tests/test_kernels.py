"""The kernel suite (examples/kernels/): every kernel builds with approxcc, prints exactly what
`cc -O2` prints when no knob is set, runs under an approximate configuration, exposes the
knobs its README promises, and its QoS metric scores known cases as it should.

One section per kernel; each uses the kernel's own input generator at its small size, so a
kernel's tests take seconds. The helpers at the top are shared by every section.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from conftest import approxcc_ok

from approxcc.driver.toolchain import c_compiler
from approxcc.tune import CProgram
from approxcc.tune.qos import metric
from workloads.data import retrieval, wiki

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "examples" / "kernels"


# -- shared helpers ------------------------------------------------------------------------


def kernel_module(kernel: str, stem: str) -> ModuleType:
    """A Python file of a kernel folder, imported under a name unique to the kernel (every
    folder has its own gen_inputs.py)."""
    spec = importlib.util.spec_from_file_location(f"{kernel}_{stem}",
                                                  KERNELS / kernel / f"{stem}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def small_inputs(kernel: str, folder: Path) -> list[Path]:
    """Two small inputs from the kernel's generator (different seeds)."""
    gen = kernel_module(kernel, "gen_inputs")
    paths = []
    for seed in (1, 2):
        path = folder / f"{kernel}-small-{seed}.txt"
        path.write_text(gen.line(seed, small=True))
        paths.append(path)
    return paths


def sources(kernel: str) -> list[str]:
    app = CProgram.load(str(KERNELS / kernel))
    return [str(p) for p in app.program.sources + app.program.runtime]


def build(kernel: str, out: Path, *extra: str, src: list[str] | None = None) -> Path:
    """`approxcc build` of the kernel's sources (or `src`), in this process."""
    approxcc_ok("build", *(src or sources(kernel)), *extra, "-o", out)
    return out


def build_with_cc(kernel: str, out: Path, src: list[str] | None = None) -> Path:
    proc = subprocess.run([c_compiler(), "-O2", f"-I{ROOT / 'runtime'}", *(src or sources(kernel)),
                           str(ROOT / "runtime" / "approxrt.c"), "-lm", "-o", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out


def run(binary: Path, input_path: Path, knobs: dict | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "APPROX_CONFIG"}
    if knobs is not None:
        config = input_path.parent / f"{binary.name}-config.json"
        config.write_text(json.dumps({"approxcc": "1", "program": binary.name,
                                      "knobs": knobs}))
        env["APPROX_CONFIG"] = str(config)
    proc = subprocess.run([str(binary), str(input_path)], capture_output=True, text=True,
                          env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def loss(kernel: str, exact: list[str], approx: list[str]) -> float:
    folder = KERNELS / kernel
    return metric(CProgram.load(str(folder)).program.metric, folder)(exact, approx)


def knobs_of(kernel: str) -> dict[str, tuple[str, bool]]:
    """Knob name -> (transform, dynamic), read from the IR as the tuner reads it."""
    space = CProgram.load(str(KERNELS / kernel)).knob_space()
    return {k.name: (k.transform, k.dynamic) for k in space.knobs}


class Built:
    """A kernel built tunable, its small inputs and their exact outputs."""

    def __init__(self, kernel: str, folder: Path):
        self.kernel = kernel
        self.binary = build(kernel, folder / kernel, "--tunable")
        self.inputs = small_inputs(kernel, folder)
        self.exact = [run(self.binary, i) for i in self.inputs]

    def outputs(self, knobs: dict) -> list[str]:
        return [run(self.binary, i, knobs) for i in self.inputs]

    def release_matches_cc(self, folder: Path) -> None:
        """A release build without configuration prints byte for byte what cc -O2 prints."""
        release = build(self.kernel, folder / f"{self.kernel}-release")
        reference = build_with_cc(self.kernel, folder / f"{self.kernel}-cc")
        for i, exact in zip(self.inputs, self.exact, strict=True):
            assert run(release, i) == run(reference, i) == exact


@pytest.mark.parametrize("kernel", ["lavamd", "kmeans", "pagerank"])
def test_tracked_inputs_are_disjoint_with_five_times_more_for_eval(kernel: str) -> None:
    """The kernels whose one-line inputs live in git: what approx.toml reads is what their
    generator writes."""
    app = CProgram.load(str(KERNELS / kernel))
    assert len(app.eval_inputs) == 5 * len(app.tune_inputs) > 0
    assert not set(app.tune_inputs) & set(app.eval_inputs)
    gen = kernel_module(kernel, "gen_inputs")
    lines = [Path(p).read_text() for p in app.tune_inputs + app.eval_inputs]
    assert lines == [gen.line(seed) for seed in range(1, len(lines) + 1)]


# -- lavamd --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lavamd(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return Built("lavamd", tmp_path_factory.mktemp("lavamd"))


def test_lavamd_exact_matches_cc(lavamd: Built, tmp_path: Path) -> None:
    lavamd.release_matches_cc(tmp_path)
    rows = [line.split() for line in lavamd.exact[0].splitlines()]
    assert len(rows) > 10 and all(len(r) == 4 for r in rows)   # potential, fx, fy, fz


def test_lavamd_knobs() -> None:
    assert knobs_of("lavamd") == {"pair_weight": ("func_substitute", False),
                                  "partners": ("loop_perforate", True),
                                  "corners": ("task_skipping", False)}


def test_lavamd_far_neighbours_are_skipped_for_free(lavamd: Built) -> None:
    """Perforating only partner boxes beyond the cutoff (distance state >= 100) changes
    nothing; perforating every box does, by a few percent."""
    far_only = lavamd.outputs({"partners": {"thresholds": [50, 100], "decisions": [1, 1, 8]}})
    assert loss("lavamd", lavamd.exact, far_only) == 0.0
    everywhere = lavamd.outputs({"partners": {"value": 2}, "pair_weight": {"value": 1}})
    assert 0.0 < loss("lavamd", lavamd.exact, everywhere) < 0.3


def test_lavamd_l2_metric_on_known_perturbation(lavamd: Built) -> None:
    exact = lavamd.exact[0]
    assert loss("lavamd", [exact], [exact]) == 0.0
    scaled = "\n".join(" ".join(f"{float(v) * 1.02:.6e}" for v in line.split())
                       for line in exact.splitlines())
    assert loss("lavamd", [exact], [scaled]) == pytest.approx(0.02, rel=1e-3)
    assert loss("lavamd", [exact], ["segmentation fault"]) == 1.0


# -- kmeans --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kmeans(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return Built("kmeans", tmp_path_factory.mktemp("kmeans"))


def test_kmeans_exact_matches_cc(kmeans: Built, tmp_path: Path) -> None:
    kmeans.release_matches_cc(tmp_path)
    gen = kernel_module("kmeans", "gen_inputs")
    _, _, d, k = map(int, gen.line(1, small=True).split())
    rows = [line.split() for line in kmeans.exact[0].splitlines()]
    assert len(rows) == k and all(len(r) == d for r in rows)


def test_kmeans_knobs() -> None:
    assert knobs_of("kmeans") == {"iterations": ("loop_perforate", False),
                                  "assign": ("loop_perforate", True),
                                  "distance": ("func_substitute", False)}


def test_kmeans_approximate_centroids_stay_close(kmeans: Built) -> None:
    approx = kmeans.outputs({"assign": {"thresholds": [40, 80], "decisions": [4, 2, 1]},
                             "distance": {"value": 1}})
    assert approx != kmeans.exact
    assert 0.0 < loss("kmeans", kmeans.exact, approx) < 0.2


def test_kmeans_metric_matches_permuted_clusters(kmeans: Built) -> None:
    exact = kmeans.exact[0]
    rows = exact.splitlines()
    permuted = "\n".join(rows[1:] + rows[:1])
    assert loss("kmeans", [exact], [permuted]) == 0.0
    # One centroid moved by +0.5 in every coordinate, then the rows shuffled: the matching
    # undoes the shuffle, so the loss is exactly that move against the exact norm.
    table = [[float(v) for v in r.split()] for r in rows]
    moved = [[v + 0.5 for v in table[0]]] + table[1:]
    text = "\n".join(" ".join(f"{v:.5f}" for v in r) for r in reversed(moved))
    shift = (0.25 * len(table[0])) ** 0.5
    norm = sum(v * v for r in table for v in r) ** 0.5
    assert loss("kmeans", [exact], [text]) == pytest.approx(shift / norm, rel=1e-4)
    assert loss("kmeans", [exact], ["\n".join(rows[1:])]) == 1.0   # a cluster lost
    garbage = "\n".join(["nan " * len(table[0])] * len(table))
    assert loss("kmeans", [exact], [garbage]) == 1.0


# -- pagerank ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pagerank(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return Built("pagerank", tmp_path_factory.mktemp("pagerank"))


def test_pagerank_exact_matches_cc(pagerank: Built, tmp_path: Path) -> None:
    pagerank.release_matches_cc(tmp_path)
    ids = pagerank.exact[0].split()
    assert len(ids) == 100 and len(set(ids)) == 100


def test_pagerank_knobs() -> None:
    assert knobs_of("pagerank") == {"iterations": ("loop_perforate", False),
                                    "settled": ("task_skipping", True),
                                    "in_edges": ("loop_perforate", True)}


def test_pagerank_fewer_iterations_change_the_tail_not_the_head(pagerank: Built) -> None:
    approx = pagerank.outputs({"iterations": {"value": 3}})
    assert approx != pagerank.exact
    assert 0.0 < loss("pagerank", pagerank.exact, approx) < 0.2
    assert all(a.split()[:3] == e.split()[:3] for a, e in zip(approx, pagerank.exact,
                                                              strict=True))


def test_pagerank_release_build_of_a_dynamic_config_matches_tunable(pagerank: Built,
                                                                  tmp_path: Path) -> None:
    """What the tuner measured (tunable binary + APPROX_CONFIG) is what `--config` ships."""
    knobs = {"in_edges": {"thresholds": [3, 9], "decisions": [1, 2, 3]},
             "settled": {"thresholds": [18], "decisions": [1, 0]},
             "iterations": {"value": 2}}
    config = tmp_path / "tuned.json"
    config.write_text(json.dumps({"approxcc": "1", "program": "pagerank", "knobs": knobs}))
    release = build("pagerank", tmp_path / "pagerank", "--config", str(config))
    tuned = pagerank.outputs(knobs)
    assert tuned != pagerank.exact
    assert [run(release, i) for i in pagerank.inputs] == tuned


def test_pagerank_skipping_every_update_is_caught_by_rbo(pagerank: Built) -> None:
    """Skipping every vertex update leaves the uniform start: ids in id order, nothing like
    the exact ranking."""
    frozen = pagerank.outputs({"settled": {"value": 1}})
    assert frozen[0].split()[:5] == ["0", "1", "2", "3", "4"]
    assert loss("pagerank", pagerank.exact, frozen) > 0.5
    assert loss("pagerank", pagerank.exact, pagerank.exact) == 0.0


# -- bm25 and kb: shared data (Wikipedia summaries, MiniLM) and the per-query rbo ----------
# Their inputs are derived from the --no-deps data packages (installed by `make setup`) and
# generated, not tracked, so these sections build from the sources directly (CProgram.load
# needs the generated inputs).


def retrieval_kernel(kernel: str, folder: Path) -> tuple[Path, Path, Path]:
    """(small work folder from the kernel's gen.py, tunable build, cc -O2 build)."""
    src = [str(KERNELS / kernel / f"{kernel}.c"), str(KERNELS / kernel / "state.c")]
    work = folder / "work"
    subprocess.run([sys.executable, str(KERNELS / kernel / "gen.py"), "--small", "--out",
                    str(work)], check=True, capture_output=True, text=True)
    tunable = build(kernel, folder / kernel, "--tunable", src=src)
    return work, tunable, build_with_cc(kernel, folder / f"{kernel}-cc", src=src)


def test_wiki_loader_returns_every_summary_with_disjoint_query_sets() -> None:
    articles = wiki.load_summaries()
    assert len(articles) == 10_033
    assert all(a.title and a.extract for a in articles)
    tune_ids, eval_ids = wiki.split_queries(seed=0)
    assert not set(tune_ids) & set(eval_ids)
    assert len(eval_ids) == pytest.approx(5 * len(tune_ids), rel=0.01)
    assert all(articles[i].description for i in tune_ids + eval_ids)


def test_minilm_embeddings_are_unit_vectors_ordered_by_meaning() -> None:
    from workloads.data import minilm

    vectors = minilm.model().embed(["A man is eating food.", "A man is eating a piece of bread.",
                                    "The girl is carrying a baby.",
                                    "A monkey is playing drums."])
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    sim = vectors @ vectors.T
    assert sim[0, 1] > 0.6 > 0.2 > max(sim[0, 2], sim[0, 3], sim[1, 2])
    # sentence-transformers' documentation gives 0.7553 for this pair with this model
    assert sim[0, 1] == pytest.approx(0.7553, abs=0.005)


def test_minilm_cache_computes_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from workloads.data import minilm

    monkeypatch.setenv("APPROXCC_CACHE", str(tmp_path))
    texts = ["a red apple", "a green pear"]
    first = minilm.cached_embeddings("test", texts)
    [cached] = (tmp_path / "minilm").glob("test-*.npy")
    np.save(cached, np.zeros_like(first))        # the second call must read this file
    np.testing.assert_array_equal(minilm.cached_embeddings("test", texts), 0.0)
    minilm.cached_embeddings("test", ["other texts"])   # other texts: another cache entry
    assert len(list((tmp_path / "minilm").glob("test-*.npy"))) == 2


def test_rbo_per_query_averages_the_queries_of_every_input() -> None:
    exact = ["1 2 3\n4 5 6\n", "7 8 9\n"]
    assert retrieval.rbo_per_query(exact, exact) == 0.0
    # one query of three answered with disjoint ids: loss 1 for it, 0 for the others
    assert retrieval.rbo_per_query(exact, ["1 2 3\n10 11 12\n", "7 8 9\n"]) == \
        pytest.approx(1 / 3)
    # a missing query line counts as a total loss for that query
    assert retrieval.rbo_per_query(exact, ["1 2 3\n", "7 8 9\n"]) == pytest.approx(1 / 3)
    # a swap at the bottom of a ranking costs less than one at the top
    bottom = retrieval.rbo_per_query(["1 2 3 4"], ["1 2 4 3"])
    top = retrieval.rbo_per_query(["1 2 3 4"], ["2 1 3 4"])
    assert 0.0 < bottom < top < 0.2


# -- bm25 --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bm25(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    return retrieval_kernel("bm25", tmp_path_factory.mktemp("bm25"))


def test_bm25_exact_matches_cc_and_finds_the_article(bm25: tuple[Path, Path, Path]) -> None:
    work, tunable, reference = bm25
    batch = work / "tune" / "q00.txt"
    exact = run(tunable, batch)
    assert exact == run(reference, batch)
    ids = retrieval.query_ids(batch)
    assert len(exact.splitlines()) == len(ids)
    assert retrieval.recall_at(exact.splitlines(), ids, 10) > 0.5   # real queries


def test_bm25_dynamic_config_skips_common_words_at_small_loss(
        bm25: tuple[Path, Path, Path]) -> None:
    work, tunable, _ = bm25
    batches = sorted((work / "eval").glob("q*.txt"))
    exact = [run(tunable, b) for b in batches]
    knobs = {"doc_stride": {"thresholds": [15], "decisions": [4, 1]},
             "term_skip": {"thresholds": [5], "decisions": [1, 0]},
             "early_stop": {"thresholds": [10], "decisions": [1, 0]}}
    loss = retrieval.rbo_per_query(exact, [run(tunable, b, knobs) for b in batches])
    assert 0.0 < loss < 0.15
    # the same perforation for every term (static) loses far more
    static = [run(tunable, b, {"doc_stride": {"value": 4}}) for b in batches]
    assert retrieval.rbo_per_query(exact, static) > 2 * loss


# -- kb ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    return retrieval_kernel("kb", tmp_path_factory.mktemp("kb"))


def test_kb_exact_matches_cc_and_numpy(kb: tuple[Path, Path, Path]) -> None:
    from workloads.data import minilm

    work, tunable, reference = kb
    batch = work / "tune" / "q00.txt"
    exact = run(tunable, batch)
    assert exact == run(reference, batch)
    ids = retrieval.query_ids(batch)
    assert retrieval.recall_at(exact.splitlines(), ids, 10) > 0.5
    # brute-force cosine in numpy over the (cached) embeddings ranks the same leaders
    articles = wiki.load_summaries()[:200]
    docs = minilm.cached_embeddings("wiki-extracts-200", [a.extract for a in articles])
    queries = minilm.cached_embeddings("wiki-descriptions-200",
                                       [a.description for a in articles])
    for line, qid in zip(exact.splitlines(), ids, strict=True):
        want = np.argsort(-(docs @ queries[qid]), kind="stable")[:3]
        assert [int(x) for x in line.split()][:3] == want.tolist()


def test_kb_int8_is_close_and_coarse_search_is_not(kb: tuple[Path, Path, Path]) -> None:
    work, tunable, _ = kb
    batches = sorted((work / "eval").glob("q*.txt"))
    exact = [run(tunable, b) for b in batches]
    int8 = [run(tunable, b, {"precision": {"value": 1}}) for b in batches]
    coarse = [run(tunable, b, {"dims": {"value": 8}, "probe": {"value": 8}}) for b in batches]
    int8_loss = retrieval.rbo_per_query(exact, int8)
    assert 0.0 < int8_loss < 0.1
    assert int8_loss < retrieval.rbo_per_query(exact, coarse) < 1.0

