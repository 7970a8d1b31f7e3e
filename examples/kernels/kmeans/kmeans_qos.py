"""QoS of kmeans: l2 distance between exact and approximate centroids, clusters matched first.

Cluster numbers are arbitrary: an approximate run may find the same clusters in another
order, which is no loss at all. So the approximate centroids are first matched one-to-one to
the exact ones (the assignment of least total squared distance, Hungarian algorithm), then
compared as in the `l2` metric: ||C_exact - C_matched|| / ||C_exact||, averaged over the
inputs. An output that is not k rows of d finite numbers like the exact one costs 1.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment


def centroids(text: str) -> np.ndarray | None:
    """The centroids printed by kmeans, one row per line; None when they are not a table."""
    try:
        rows = [[float(v) for v in line.split()] for line in text.splitlines() if line.strip()]
        table = np.array(rows, dtype=float)
    except ValueError:  # a word instead of a number, or rows of different lengths
        return None
    return table if table.ndim == 2 and table.size else None


def matched_loss(exact: str, approx: str) -> float:
    """One input's loss, in [0, 1]."""
    want, got = centroids(exact), centroids(approx)
    if want is None or got is None or got.shape != want.shape or \
            not np.isfinite(got).all():
        return 1.0
    cost = ((want[:, None, :] - got[None, :, :]) ** 2).sum(axis=2)
    rows, cols = linear_sum_assignment(cost)
    norm = float(np.linalg.norm(want))
    diff = float(np.sqrt(cost[rows, cols].sum()))
    if norm == 0.0:
        return 0.0 if diff == 0.0 else 1.0
    return min(1.0, diff / norm)


def centroid_loss(exact_outputs: list[str], outputs: list[str]) -> float:
    """Mean matched-centroid l2 loss over the inputs (the `module:function` metric)."""
    return sum(matched_loss(e, a) for e, a in zip(exact_outputs, outputs, strict=True)) / \
        len(exact_outputs)
