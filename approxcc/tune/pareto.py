"""The Pareto front in (time, loss), both minimised, and its hypervolume."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def front(points: Sequence[T], key: Callable[[T], tuple[float, float]]) -> list[T]:
    """The non-dominated points, by increasing time (ties: the first one given is kept).

    A point is dominated when another is no worse in both time and loss and better in one."""
    order = sorted(range(len(points)), key=lambda i: (*key(points[i]), i))
    kept: list[T] = []
    best_loss = float("inf")
    for i in order:
        _, loss = key(points[i])
        if loss < best_loss:
            kept.append(points[i])
            best_loss = loss
    return kept


def dominated(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """`a` is dominated by `b`."""
    return b[0] <= a[0] and b[1] <= a[1] and b != a


def hypervolume(points: Sequence[tuple[float, float]], ref: tuple[float, float]) -> float:
    """Area dominated by `points` inside the box up to `ref` (larger is better)."""
    inside = [p for p in points if p[0] < ref[0] and p[1] < ref[1]]
    area, prev_loss = 0.0, ref[1]
    for t, loss in front(inside, key=lambda p: p):
        area += (ref[0] - t) * (prev_loss - loss)
        prev_loss = loss
    return area
