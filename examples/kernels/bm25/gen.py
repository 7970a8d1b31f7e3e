"""Inputs of the bm25 kernel: a pre-tokenised corpus and query batches, into a work folder.

    python examples/kernels/bm25/gen.py                 # full: 10,033 docs, 400/2,000 queries
    python examples/kernels/bm25/gen.py --small --out /tmp/bm25   # tests: 600 docs, 40/200

Corpus: the summaries (`extract`) of `workloads.data.wiki`, tokenised as lowercase [a-z0-9]+
runs (no stemming, no stop list: common words are exactly what the term knobs learn to
skip). `corpus.bin` (little-endian int32/float32):

    n_docs n_terms n_postings | avgdl (f32) | doc_len[n_docs] | doc_start[n_docs + 1]
    | post_term[n_postings] | post_tf[n_postings] | idf[n_terms] (f32)

Each document's postings are sorted by term id (the kernel binary-searches them).
idf = ln(1 + (N - df + 0.5) / (df + 0.5)) (Lucene's, never negative).

Queries: the article descriptions, query i's one relevant document being summary i. The
queries are shuffled with a seed and cut into disjoint tune and eval sets (eval 5x tune),
written as batches `tune/qNN.txt`, `eval/qNN.txt`:

    line 1: the corpus path          line 2: the number of queries
    then one query per line: ARTICLE_ID N_TERMS TERM_ID...   (terms by decreasing idf)

Query words absent from the corpus vocabulary are dropped (they match nothing).
"""

from __future__ import annotations

import argparse
import collections
import re
from pathlib import Path

import numpy as np

from workloads.data import wiki

HERE = Path(__file__).resolve().parent
_WORD = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def write_corpus(path: Path, docs: list[list[str]]) -> tuple[dict[str, int], np.ndarray]:
    """Write corpus.bin; return the vocabulary (term -> id) and idf per term id."""
    vocab: dict[str, int] = {}
    counts = [collections.Counter(vocab.setdefault(w, len(vocab)) for w in d) for d in docs]
    df = np.zeros(len(vocab), np.int64)
    for c in counts:
        df[list(c)] += 1
    n = len(docs)
    idf = np.log1p((n - df + 0.5) / (df + 0.5)).astype(np.float32)
    lengths = np.array([len(d) for d in docs], np.int32)
    starts = np.zeros(n + 1, np.int32)
    starts[1:] = np.cumsum([len(c) for c in counts])
    terms = np.array([t for c in counts for t in sorted(c)], np.int32)
    tfs = np.array([c[t] for c in counts for t in sorted(c)], np.int32)
    with path.open("wb") as f:
        np.array([n, len(vocab), len(terms)], "<i4").tofile(f)
        np.array([lengths.mean()], "<f4").tofile(f)
        for array in (lengths, starts, terms, tfs):
            array.astype("<i4").tofile(f)
        idf.astype("<f4").tofile(f)
    return vocab, idf


def query_line(article: int, text: str, vocab: dict[str, int], idf: np.ndarray) -> str:
    ids = {vocab[w] for w in tokenize(text) if w in vocab}
    ordered = sorted(ids, key=lambda t: (-idf[t], t))
    return " ".join(map(str, [article, len(ordered), *ordered]))


def write_batches(folder: Path, corpus: Path, lines: list[str], batches: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("q*.txt"):
        old.unlink()
    for b, chunk in enumerate(np.array_split(np.array(lines, dtype=object), batches)):
        body = "\n".join(chunk)
        (folder / f"q{b:02d}.txt").write_text(f"{corpus}\n{len(chunk)}\n{body}\n")


def generate(out: Path, docs: int | None, tune_queries: int, batches: int, seed: int) -> None:
    articles = wiki.load_summaries()[:docs]
    out.mkdir(parents=True, exist_ok=True)
    corpus = out / "corpus.bin"
    vocab, idf = write_corpus(corpus, [tokenize(a.extract) for a in articles])
    tune_ids, eval_ids = wiki.split_queries(seed)
    tune_ids = [i for i in tune_ids if i < len(articles)][:tune_queries]
    eval_ids = [i for i in eval_ids if i < len(articles)][:5 * tune_queries]
    if len(eval_ids) < 5 * tune_queries:
        raise SystemExit(f"gen.py: only {len(eval_ids)} eval queries for {tune_queries} tune "
                         f"queries (eval must be 5x tune)")
    for name, ids in (("tune", tune_ids), ("eval", eval_ids)):
        lines = [query_line(i, articles[i].description, vocab, idf) for i in ids]
        write_batches(out / name, corpus, lines, batches * (5 if name == "eval" else 1))
    print(f"bm25: {len(articles)} docs, {len(vocab)} terms, {len(tune_ids)} tune / "
          f"{len(eval_ids)} eval queries -> {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=HERE / "work")
    parser.add_argument("--small", action="store_true",
                        help="600 documents, 40 tune / 200 eval queries (for tests)")
    parser.add_argument("--tune-queries", type=int, default=400)
    parser.add_argument("--batches", type=int, default=4,
                        help="tune input files (eval gets 5x as many)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.small:
        generate(args.out, 600, 40, 2, args.seed)
    else:
        generate(args.out, None, args.tune_queries, args.batches, args.seed)


if __name__ == "__main__":
    main()
