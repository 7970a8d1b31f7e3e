"""The question set of llm_tools: retrieval questions mixed with questions for its tools.

Every block of 10 questions holds 4 retrieval questions (taken from the LLM+RAG set,
../questions/: the tune file's for tune, the eval file's for eval, so no summary is in
both) and 2 of each tool kind, in a seeded order, so any first 10·k questions keep the
shares (retrieval 40%, each tool 20%; the exact system runs both BM25 and the vector search
on a retrieval question):

  links    "In a link graph where A links to B and C; B links to C; ..., which article is
           most central (highest PageRank)?" over 5-7 article titles (damping 0.85, 30
           iterations; the winner's rank at least 10% above the runner-up's)
  energy   "What is the potential energy of the particle box with seed S, D boxes a side
           and P particles per box? Round to the nearest hundred." (tools.c's box; the
           answer to two significant figures, never within 5% of a rounding boundary)
  cluster  "Which cluster does the point (x, y) fall in, with cluster centres Alpha (..),
           Beta (..) and Gamma (..)?" or the same after k-means over 10-12 given points
           from those centres (the point's nearest centre at most 0.8 of the next one's
           squared distance)

Answers are computed here independently of the system's C (numpy), except the particle
positions, which come from tools.c's `lt_box` (the library is built once by approxcc).
Output: NQ-open JSONL (`{"question", "answer": [str], "tool"}`; `tool` is the triage's
gold), tune:eval = 1:5:

    python examples/systems/llm_tools/make_questions.py [--seed 0] [--tune 40] [--out DIR]
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import json
import math
import random
import re
import tempfile
import tomllib
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np

HERE = Path(__file__).resolve().parent
RAG_QUESTIONS = HERE.parent / "questions"
BLOCK = ("search",) * 4 + ("links", "energy", "cluster") * 2
DAMPING, PR_ITERATIONS = 0.85, 30            # pagerank.c's
ALPHA, SHIFT = 2.0, math.exp(-2.0)           # lavamd.c's potential
KM_ITERATIONS, KM_TOLERANCE = 40, 1e-4       # kmeans.c's
Box = Callable[[int, int, int], tuple[np.ndarray, np.ndarray]]   # seed, dim, per box


def _pipeline() -> ModuleType:
    """pipeline.py (the names and rounding units its parsing reads)."""
    spec = importlib.util.spec_from_file_location("llm_tools_pipeline", HERE / "pipeline.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PIPELINE = _pipeline()
NAMES = PIPELINE.NAMES
UNITS = {unit: words for words, unit in PIPELINE.UNITS.items()}


def pagerank(n: int, edges: list[tuple[int, int]]) -> np.ndarray:
    """pagerank.c's power iteration (dangling rank spread evenly)."""
    out = np.bincount([s for s, _ in edges], minlength=n).astype(float)
    rank = np.full(n, 1.0 / n)
    for _ in range(PR_ITERATIONS):
        contrib = np.divide(rank, out, out=np.zeros(n), where=out > 0)
        base = (1 - DAMPING) / n + DAMPING * rank[out == 0].sum() / n
        nxt = np.full(n, base)
        for s, d in edges:
            nxt[d] += DAMPING * contrib[s]
        rank = nxt
    return rank


def links_text(titles: list[str], edges: list[tuple[int, int]]) -> str:
    """"A links to B and C; B links to C" (sources in order)."""
    parts = []
    for s in sorted({s for s, _ in edges}):
        targets = [titles[d] for a, d in edges if a == s]
        listed = targets[0] if len(targets) == 1 else \
            ", ".join(targets[:-1]) + " and " + targets[-1]
        parts.append(f"{titles[s]} links to {listed}")
    return "; ".join(parts)


def graph_question(rng: random.Random, titles: list[str]) -> tuple[str, str]:
    while True:
        names = rng.sample(titles, rng.randint(5, 7))
        n = len(names)
        edges = sorted({(s, d) for s in range(n) for d in rng.sample(range(n), rng.randint(1, 2))
                        if s != d})
        rank = pagerank(n, edges)
        first, second = np.sort(rank)[::-1][:2]
        if first >= 1.1 * second:
            winner = names[int(np.argmax(rank))]
            return (f"In a link graph where {links_text(names, edges)}, which article is most "
                    f"central (highest PageRank)?", winner)


def energy(box: tuple[np.ndarray, np.ndarray]) -> float:
    """Half the sum over particle pairs within the cutoff of q_i q_j (exp(-ALPHA r^2) - SHIFT)."""
    pos, q = box
    r2 = ((pos[:, None, :] - pos[None, :, :]) ** 2).sum(-1)
    w = np.where((r2 < 1.0) & (r2 > 0.0), np.exp(-ALPHA * r2) - SHIFT, 0.0)
    return float(0.5 * q @ w @ q)


def energy_question(rng: random.Random, box: Box) -> tuple[str, str]:
    while True:
        seed, dim, per_box = rng.randint(1, 999), rng.randint(2, 4), rng.choice((6, 8, 12, 16))
        e = energy(box(seed, dim, per_box))
        unit = 10 ** max(0, math.floor(math.log10(e)) - 1)
        frac = e / unit - math.floor(e / unit)
        if e > 0 and abs(frac - 0.5) > 0.05 and unit in UNITS:
            return (f"What is the potential energy of the particle box with seed {seed}, {dim} "
                    f"boxes a side and {per_box} particles per box? Round to the nearest "
                    f"{UNITS[unit]}.", str(round(e / unit) * unit))


def point(xy: np.ndarray) -> str:
    return f"({xy[0]:.1f}, {xy[1]:.1f})"


def lloyd(points: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """kmeans.c's iterations in its precision (float centroids, double sums and distances)."""
    c = centres.astype(np.float32)
    for _ in range(KM_ITERATIONS):
        member = ((points[:, None, :].astype(float) - c[None].astype(float)) ** 2) \
            .sum(-1).argmin(1)
        old = c.copy()
        for m in range(len(c)):
            if (member == m).any():
                c[m] = points[member == m].astype(float).mean(0).astype(np.float32)
        if np.linalg.norm(c.astype(float) - old, axis=1).mean() < KM_TOLERANCE:
            break
    return c


def cluster_question(rng: random.Random) -> tuple[str, str]:
    while True:
        k = rng.randint(3, 4)
        centres = np.round(np.array([[rng.uniform(-5, 5), rng.uniform(-5, 5)]
                                     for _ in range(k)]), 1).astype(np.float32)
        target = np.round(np.array([rng.uniform(-5, 5), rng.uniform(-5, 5)]), 1) \
            .astype(np.float32)
        named = ", ".join(f"{NAMES[m]} {point(c)}" for m, c in enumerate(centres[:-1]))
        named += f" and {NAMES[k - 1]} {point(centres[-1])}"
        if rng.random() < 0.5:
            final = centres
            text = (f"Which cluster does the point {point(target)} fall in, with cluster "
                    f"centres {named}?")
        else:
            pts = np.round(np.array([centres[rng.randrange(k)] +
                                     [rng.gauss(0, 1.5), rng.gauss(0, 1.5)]
                                     for _ in range(rng.randint(10, 12))]), 1) \
                .astype(np.float32)
            final = lloyd(pts, centres)
            text = (f"Run k-means on the points {', '.join(point(p) for p in pts)} starting "
                    f"from the centres {named}. Which cluster does the point {point(target)} "
                    f"fall in?")
        d = ((final.astype(float) - target.astype(float)) ** 2).sum(1)
        near, runner = np.sort(d)[:2]
        if near <= 0.8 * runner:
            return text, NAMES[int(np.argmin(d))]


def box_reader(work: Path) -> Box:
    """tools.c's `lt_box`, from the system's library built into `work`."""
    from approxcc.system.library import build_library, clang_args

    # system.toml's [system] alone: the question files it names may not exist yet
    system = tomllib.loads((HERE / "system.toml").read_text())["system"]
    lib_path = work / "libllm_tools.so"
    build_library([HERE / s for s in system["sources"]], clang_args(system["flags"], HERE),
                  lib_path)
    lib = ctypes.CDLL(str(lib_path))

    def box(seed: int, dim: int, per_box: int) -> tuple[np.ndarray, np.ndarray]:
        n = dim ** 3 * per_box
        arrays = [(ctypes.c_float * n)() for _ in range(4)]
        lib.lt_box(ctypes.c_uint(seed), dim, per_box, *arrays)
        px, py, pz, q = (np.frombuffer(a, np.float32).astype(float) for a in arrays)
        return np.stack([px, py, pz], 1), q

    return box


def titles() -> list[str]:
    """Article titles of one or two plain words (no ',', ';' or 'and' to confuse the
    question's list of links)."""
    from workloads.data import wiki

    return sorted({a.title for a in wiki.load_summaries()
                   if re.fullmatch(r"[A-Z][a-z]+( [A-Z][a-z]+)?", a.title)
                   and "And" not in a.title.split()})


def build(kind_counts: int, rag_file: Path, rng: random.Random, names: list[str],
          box: Box) -> list[dict]:
    """`kind_counts` blocks of BLOCK's kinds, each block in a seeded order."""
    rag = [json.loads(line) for line in rag_file.read_text().splitlines() if line.strip()]
    rng.shuffle(rag)
    out = []
    for _ in range(kind_counts):
        block = list(BLOCK)
        rng.shuffle(block)
        for kind in block:
            if kind == "search":
                q = rag.pop()
                out.append({"question": q["question"], "answer": q["answer"], "tool": kind})
                continue
            text, gold = (graph_question(rng, names) if kind == "links" else
                          energy_question(rng, box) if kind == "energy" else
                          cluster_question(rng))
            out.append({"question": text, "answer": [gold], "tool": kind})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tune", type=int, default=40, help="tune questions (a multiple of "
                                                             "10; eval gets five times more)")
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    names = titles()
    with tempfile.TemporaryDirectory(prefix="llm-tools-") as work:
        box = box_reader(Path(work))
        for part, n in (("tune", args.tune), ("eval", 5 * args.tune)):
            items = build(max(1, n // len(BLOCK)), RAG_QUESTIONS / f"{part}.jsonl", rng,
                          names, box)
            (args.out / f"{part}.jsonl").write_text(
                "".join(json.dumps(q) + "\n" for q in items))
            shares = Counter(q["tool"] for q in items)
            print(f"{part}: {len(items)} questions, " +
                  ", ".join(f"{k} {v / len(items):.0%}" for k, v in sorted(shares.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
