"""Local moves: a search's first configurations are one knob away from the best safe one.

A search of a whole system has minutes and a few dozen measurements. Its random and
evolutionary draws seldom land one knob away from the best configuration it knows, yet that
is where a faster one within the budget most often is: the best one's knobs already hold the
budget, and one more approximation may still fit it. The best *safe* configuration is the
one to move from: its loss bound over the inputs holds the budget, as a pick's must
(`picks.bound`); the fastest point whose loss alone holds it may have a bound no budget
holds, and so may every point next to it.

A move takes one knob whose entry is a plain value one step further from its exact value
(an ordered knob), or to each of its other values (an unordered one). Decision trees are
left as they are: their moves are the search's. What screening measured orders the moves:
first those it measured alone within the budget, fastest first, then the unmeasured ones;
a move whose value alone failed or broke the budget is left out (one more approximation
on top of it only adds error), so that a search of a minute is not spent on it.

A search climbs (`Climb`): each measurement that is a new best safe configuration puts its
own neighbours ahead of everything else the search was going to measure, so a few minutes
of search walk several knobs away from the start, one step at a time.
"""

from __future__ import annotations

from approxcc.tune.db import Evaluation
from approxcc.tune.picks import holds
from approxcc.tune.screening import alone
from approxcc.tune.space import Knob, KnobConfig, KnobSpace, canonical


def best_safe(results: list[Evaluation], budget: float) -> Evaluation | None:
    """The fastest measured configuration whose loss bound holds `budget`."""
    safe = [e for e in results if holds(e, budget)]
    return min(safe, key=lambda e: (e.time, e.id)) if safe else None


def _moves(k: Knob, value: int) -> list[int]:
    if not k.ordered or k.exact is None:
        return [v for v in k.values if v != value]
    i, exact = k.values.index(value), k.values.index(k.exact)
    if i == exact:      # off the exact value, either way the knob has room
        return [k.values[j] for j in (i + 1, i - 1) if 0 <= j < len(k.values)]
    j = i + 1 if i > exact else i - 1
    return [k.values[j]] if 0 <= j < len(k.values) else []


def neighbours(space: KnobSpace, config: KnobConfig, screened: list[Evaluation],
               budget: float) -> list[KnobConfig]:
    """The configurations one move away from `config`, ordered by what `screened` says."""
    single = {m: e for e in screened if (m := alone(space, e))}
    moves: list[tuple[tuple[int, float, int], KnobConfig]] = []
    for order, k in enumerate(space.knobs):
        entry = config.get(k.name, {"value": k.exact})
        if "value" not in entry or entry["value"] not in k.values:
            continue
        for v in _moves(k, entry["value"]):
            e = single.get((k.name, v))
            if e is not None and not (e.ok and e.loss is not None and e.loss <= budget):
                continue
            rank = (0, e.time, order) if e is not None and e.time else (1, 0.0, order)
            moves.append((rank, canonical(config | {k.name: {"value": v}})))
    return [c for _, c in sorted(moves, key=lambda m: m[0])]


class Climb:
    """Hill climbing inside one search: first the best safe configuration's neighbours,
    then, each time a measurement is a new best safe one, its neighbours ahead of the rest."""

    def __init__(self, space: KnobSpace, screened: list[Evaluation], budget: float):
        self.space, self.screened, self.budget = space, screened, budget
        self.best = best_safe(screened, budget)

    def starts(self) -> list[KnobConfig]:
        """The best safe configuration and its neighbours (none when nothing is safe)."""
        if self.best is None:
            return []
        return [self.best.config, *self.moves(self.best.config)]

    def moves(self, config: KnobConfig) -> list[KnobConfig]:
        return neighbours(self.space, config, self.screened, self.budget)

    def step(self, e: Evaluation) -> list[KnobConfig]:
        """`e`'s neighbours when it is a new best safe configuration, else none."""
        if not holds(e, self.budget) or \
                (self.best is not None and e.time >= self.best.time):
            return []
        self.best = e
        return self.moves(e.config)
