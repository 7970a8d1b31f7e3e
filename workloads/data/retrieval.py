"""Scoring ranked retrieval outputs: one query per line, its ranked ids separated by spaces.

The retrieval kernels answer a batch of queries per input (one process per query would cost
more than the queries), so their QoS is the spec's `rbo` taken per query, not over a whole
input: `approx.toml` names it as ``metric = "workloads.data.retrieval:rbo_per_query"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from approxcc.tune.qos import rbo_loss


def rbo_per_query(exact_outputs: Sequence[str], outputs: Sequence[str]) -> float:
    """Mean over every query of every input of the spec's `rbo` loss (p = 0.95) between the
    exact and approximate ranking on that query's line. A query line the approximate run did
    not print (a crash cut short, a garbled output) is a total loss for that query."""
    losses: list[float] = []
    for exact, approx in zip(exact_outputs, outputs, strict=True):
        want = exact.splitlines()
        got = approx.splitlines() if isinstance(approx, str) else []
        got += [""] * (len(want) - len(got))
        losses += [rbo_loss(w, g) for w, g in zip(want, got, strict=False)]
        if len(got) > len(want):       # extra lines are garbage too
            losses += [1.0] * (len(got) - len(want))
    return sum(losses) / len(losses) if losses else 0.0


def query_ids(batch: Path) -> list[int]:
    """The relevant article id of each query of a kernel's input batch: the first number of
    every line after the corpus path and the query count (see the kernels' gen.py)."""
    lines = batch.read_text().splitlines()[2:]
    return [int(line.split()[0]) for line in lines if line.strip()]


def recall_at(outputs: Sequence[str], relevant: Sequence[int], k: int) -> float:
    """Fraction of queries whose relevant id is among the first `k` ids printed for them;
    `outputs` are the query lines, in the order of `relevant`."""
    if len(outputs) != len(relevant):
        raise ValueError(f"recall: {len(outputs)} rankings for {len(relevant)} queries")
    hits = sum(str(r) in line.split()[:k] for line, r in zip(outputs, relevant, strict=True))
    return hits / len(relevant) if relevant else 0.0
