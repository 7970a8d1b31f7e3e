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


def time_to_fraction(points: Sequence[tuple[float, float, float]], ref: tuple[float, float],
                     fraction: float = 0.95) -> tuple[float | None, float]:
    """(when, final): the first time at which the front of the points found so far reaches
    `fraction` of the final front's hypervolume, and that final hypervolume. `points` are
    (seconds, time, loss); when is None if the final hypervolume is zero."""
    ordered = sorted(points)
    final = hypervolume([(t, loss) for _, t, loss in ordered], ref)
    if final <= 0:
        return None, final
    for n, (at, _, _) in enumerate(ordered, 1):
        if hypervolume([(t, loss) for _, t, loss in ordered[:n]], ref) >= fraction * final:
            return at, final
    return ordered[-1][0], final
