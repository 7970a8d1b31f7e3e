"""Inputs of the kb kernel: a vector knowledge base of MiniLM embeddings, into a work folder.

    python examples/kernels/kb/gen.py                  # full: 10,033 docs, 300/1,500 queries
    python examples/kernels/kb/gen.py --small --out /tmp/kb    # tests: 200 docs, 20/100

Documents are the MiniLM-L6 embeddings (`workloads.data.minilm`, cached under
~/.cache/approxcc) of the summaries; queries those of the descriptions (query i's one
relevant document is summary i). Prepared here, once, for the knobs of kb.c:

* a rotation onto the principal axes of the documents (eigenvectors of E^T E), which keeps
  every dot product (and so the exact ranking) but concentrates the signal in few
  dimensions, laid out so that every 2nd / 4th / 8th dimension are the top 1/2, 1/4, 1/8
  axes: perforating the dot-product loop by v keeps the strongest 384/v axes;
* spherical k-means clusters (documents stored grouped by cluster, centroids kept) for the
  pre-filter;
* int8 copies of documents and queries (symmetric, one scale per vector) for the int8 dot.

`kb.bin` (little-endian int32/float32/int8, rows of DIM):

    n_docs dim n_clusters n_queries | cluster_start[n_clusters + 1] | doc_id[n_docs]
    | centroid[n_clusters][dim] f32 | doc[n_docs][dim] f32 | doc_scale[n_docs] f32
    | doc_q8[n_docs][dim] i8 | query[n_queries][dim] f32 | query_scale[n_queries] f32
    | query_q8[n_queries][dim] i8

Query rows are indexed by article id (articles without a description have a zero row and
are never asked). Batches `tune/qNN.txt`, `eval/qNN.txt`: line 1 the path of kb.bin, line 2
the number of queries, then one article id per line.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from workloads.data import minilm, wiki

HERE = Path(__file__).resolve().parent
STRIDES = (1, 2, 4, 8)


def stride_layout(dim: int) -> np.ndarray:
    """position -> axis rank such that positions 0, v, 2v, ... hold ranks 0 .. dim/v - 1 for
    every v in STRIDES (positions divisible by 8 first, then by 4, by 2, then the rest)."""
    groups = [[p for p in range(dim) if p % (2 * v) == v or (v == STRIDES[-1] and p % v == 0)]
              for v in reversed(STRIDES)]
    ranks = np.empty(dim, np.int64)
    for rank, position in enumerate(p for group in groups for p in group):
        ranks[position] = rank
    return ranks


def rotation(docs: np.ndarray) -> np.ndarray:
    """Orthonormal (dim, dim): principal axes by decreasing energy, in stride layout."""
    values, vectors = np.linalg.eigh(docs.T.astype(np.float64) @ docs)
    by_energy = vectors[:, np.argsort(values)[::-1]]
    return by_energy[:, stride_layout(docs.shape[1])]


def spherical_kmeans(x: np.ndarray, k: int, seed: int, rounds: int = 20) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centroids = x[rng.choice(len(x), k, replace=False)]
    for _ in range(rounds):
        assign = np.argmax(x @ centroids.T, axis=1)
        for c in range(k):
            members = x[assign == c]
            if len(members):
                mean = members.sum(0)
                centroids[c] = mean / np.linalg.norm(mean)
    return centroids


def quantize(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scale = np.maximum(np.abs(x).max(1), 1e-12) / 127.0
    return np.round(x / scale[:, None]).astype(np.int8), scale.astype(np.float32)


def generate(out: Path, docs: int | None, tune_queries: int, batches: int, clusters: int,
             seed: int) -> None:
    articles = wiki.load_summaries()[:docs]
    suffix = "" if docs is None else f"-{len(articles)}"
    doc_vecs = minilm.cached_embeddings(f"wiki-extracts{suffix}",
                                        [a.extract for a in articles], verbose=True)
    query_vecs = minilm.cached_embeddings(f"wiki-descriptions{suffix}",
                                          [a.description for a in articles], verbose=True)
    rotate = rotation(doc_vecs)
    doc_vecs = (doc_vecs @ rotate).astype(np.float32)
    query_vecs = (query_vecs @ rotate).astype(np.float32)
    centroids = spherical_kmeans(doc_vecs, clusters, seed).astype(np.float32)
    assign = np.argmax(doc_vecs @ centroids.T, axis=1)
    order = np.argsort(assign, kind="stable")
    starts = np.searchsorted(assign[order], np.arange(clusters + 1)).astype(np.int32)
    doc_q8, doc_scale = quantize(doc_vecs[order])
    query_q8, query_scale = quantize(query_vecs)
    out.mkdir(parents=True, exist_ok=True)
    kb = out / "kb.bin"
    with kb.open("wb") as f:
        np.array([len(articles), doc_vecs.shape[1], clusters, len(articles)], "<i4").tofile(f)
        starts.astype("<i4").tofile(f)
        order.astype("<i4").tofile(f)
        for array in (centroids, doc_vecs[order], doc_scale):
            array.astype("<f4").tofile(f)
        doc_q8.tofile(f)
        for array in (query_vecs, query_scale):
            array.astype("<f4").tofile(f)
        query_q8.tofile(f)
    tune_ids, eval_ids = wiki.split_queries(seed)
    tune_ids = [i for i in tune_ids if i < len(articles)][:tune_queries]
    eval_ids = [i for i in eval_ids if i < len(articles)][:5 * tune_queries]
    if len(eval_ids) < 5 * tune_queries:
        raise SystemExit(f"gen.py: only {len(eval_ids)} eval queries for {tune_queries} tune "
                         f"queries (eval must be 5x tune)")
    for name, ids in (("tune", tune_ids), ("eval", eval_ids)):
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("q*.txt"):
            old.unlink()
        parts = np.array_split(np.array(ids), batches * (5 if name == "eval" else 1))
        for b, part in enumerate(parts):
            body = "".join(f"{i}\n" for i in part)
            (folder / f"q{b:02d}.txt").write_text(f"{kb}\n{len(part)}\n{body}")
    print(f"kb: {len(articles)} docs in {clusters} clusters, {len(tune_ids)} tune / "
          f"{len(eval_ids)} eval queries -> {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=HERE / "work")
    parser.add_argument("--small", action="store_true",
                        help="200 documents in 8 clusters, 20 tune / 100 eval queries (tests)")
    parser.add_argument("--tune-queries", type=int, default=300)
    parser.add_argument("--batches", type=int, default=4,
                        help="tune input files (eval gets 5x as many)")
    parser.add_argument("--clusters", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.small:
        generate(args.out, 200, 20, 2, 8, args.seed)
    else:
        generate(args.out, None, args.tune_queries, args.batches, args.clusters, args.seed)


if __name__ == "__main__":
    main()
