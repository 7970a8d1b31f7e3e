"""Noise-aware picks: which configurations to confirm per budget, and the pick among them.

A search measures each configuration once, on a machine other people share, and the budget
must hold on inputs the tuner never saw. So, per budget:

1. *Candidates*: the fastest points whose single-run loss bound (below) is within the
   budget, on the tuning front or off it (the front weighs the loss, not its bound), and
   the fastest point of the front within the budget.
2. *Confirmation*: each candidate is re-measured `repeats` times, every repeat running the
   exact program and the candidate alternately on each input (`Measurer.pair`); the speedup of
   a repeat is its exact time over its candidate time. Median and IQR summarise them.
3. *The pick*: the candidate with the largest median speedup whose loss *bound* is within the
   budget. The bound is the mean per-input loss (each input's median over the repeats) plus
   a margin: the one-sided 95% Student-t confidence half-width of that mean (t · sd / √n
   over the n tuning inputs), how far a new input set of the same kind may land above the
   tuning loss by chance. With few tuning inputs the margin is wide, as it must be (t = 6.3
   for two). Per-input losses may be below 0 (`Application.input_loss`: a question only the
   approximation answers right): the mean then counts what an approximation gains beside
   what it loses, and the spread both, where a loss clipped at 0 input by input would count
   only the losses and call every change of answers a loss.

Every pick is then confirmed the same way on the held-out inputs; the report flags a pick
whose median held-out loss exceeds its budget, and ships a pick only where its median loss
there is within the budget and, from `HELD_OUT_BOUND_INPUTS` held-out inputs on, its bound
there (the same mean and margin, from the held-out inputs) too (`report.Row.ships`; else
the fastest tighter budget's pick that holds this budget there, or the exact program).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from approxcc.tune.db import Confirmation, Evaluation
from approxcc.tune.pareto import front
from approxcc.tune.space import KnobConfig

CANDIDATES = 3      # per budget, besides the fastest point within it
REPEATS = 5         # interleaved repeats per candidate
CONFIDENCE = 0.95   # of the upper bound on a new input set's mean loss
# held-out inputs from which a pick's bound there decides whether it ships: from fewer, a
# t bound is as wide as the spread of a handful of inputs, and their median loss decides
HELD_OUT_BOUND_INPUTS = 30


@dataclass(frozen=True)
class Spread:
    """Median and interquartile range (q1, q3) of one quantity over repeats."""

    median: float
    q1: float
    q3: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        if len(values) == 1:
            return cls(values[0], values[0], values[0])
        q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
        return cls(statistics.median(values), q1, q3)


@dataclass(frozen=True)
class Confirmed:
    """A configuration's repeats on one input set."""

    config: KnobConfig
    hash: str
    speedup: Spread
    loss: Spread
    bound: float         # upper confidence bound on a new input set's mean loss
    repeats: int
    inputs: int          # per repeat


@dataclass(frozen=True)
class Pick:
    budget: float
    config: KnobConfig
    hash: str
    tune: Confirmed | None        # None: an old run without confirmations (single run)
    eval: Confirmed | None
    single: Evaluation            # the search's measurement of it

    @property
    def over_budget(self) -> bool:
        """Its eval loss (median) exceeds the budget."""
        return self.eval is not None and self.eval.loss.median > self.budget


def margin(input_losses: Sequence[float]) -> float:
    """t · sd / √n of the per-input losses (0 when there is one input: no spread to see)."""
    from scipy.stats import t

    n = len(input_losses)
    if n < 2:
        return 0.0
    return float(t.ppf(CONFIDENCE, n - 1)) * statistics.stdev(input_losses) / math.sqrt(n)


def bound(loss: float, input_losses: Sequence[float]) -> float:
    """Upper confidence bound on a new input set's mean loss: the mean per-input loss plus
    its `margin` (`loss` itself where there are no per-input losses)."""
    if not input_losses:
        return loss
    return statistics.fmean(input_losses) + margin(input_losses)


def holds(e: Evaluation, budget: float) -> bool:
    """`e` measured, and its single-run loss bound within `budget`."""
    return bool(e.ok and e.time and e.loss is not None
                and bound(e.loss, e.input_losses) <= budget)


def candidates(points: list[Evaluation], budgets: list[float],
               per_budget: int = CANDIDATES, keep: Collection[str] = ()) -> list[KnobConfig]:
    """The configurations to confirm for all budgets (each once), fastest first; besides,
    those whose hash is in `keep` (a run's starting points, e.g. an earlier run's picks)
    where their single-run loss is within a budget: the picks are then measured against
    them in the same confirmation, and a start is never lost to one noisy search run."""
    ok = sorted((e for e in points if e.ok and e.time and e.loss is not None),
                key=lambda e: (e.time or 0.0, e.id))
    pareto = front(ok, key=lambda e: (e.time or 0.0, e.loss or 0.0))
    chosen: list[Evaluation] = []
    for b in budgets:
        within = [e for e in pareto if (e.loss or 0.0) <= b]   # fastest first
        # on the front or not: a point that its loss alone puts on the front may have a
        # bound no budget holds, and a slightly slower one a bound within the budget
        safe = [e for e in ok if holds(e, b)]
        for e in within[:1] + safe[:per_budget]:
            if e not in chosen:
                chosen.append(e)
    chosen += [e for e in ok if e.hash in keep and (e.loss or 0.0) <= max(budgets)
               and e not in chosen]
    return [e.config for e in chosen]


def confirmed(rows: list[Confirmation]) -> dict[str, Confirmed]:
    """Per configuration hash, its repeats summarised (configurations with a failed repeat
    are left out: they cannot be picked)."""
    by_hash: dict[str, list[Confirmation]] = {}
    for r in rows:
        by_hash.setdefault(r.hash, []).append(r)
    out = {}
    for h, reps in by_hash.items():
        if not all(r.ok and r.time and r.exact_time and r.loss is not None for r in reps):
            continue
        per_input = [statistics.median(col) for col in zip(*(r.input_losses for r in reps),
                                                           strict=True)]
        losses = Spread.of([r.loss or 0.0 for r in reps])
        out[h] = Confirmed(reps[0].config, h,
                           Spread.of([(r.exact_time or 0.0) / (r.time or 1.0) for r in reps]),
                           losses, bound(losses.q3, per_input), len(reps), len(per_input))
    return out


def choose(budgets: list[float], points: list[Evaluation], tune: list[Confirmation],
           evals: list[Confirmation]) -> list[Pick]:
    """The pick per budget: from the confirmations when the run has them, else (a run from
    before confirmations, or one stopped before them) the fastest single run within it."""
    on_tune, on_eval = confirmed(tune), confirmed(evals)
    single = {e.hash: e for e in points if e.ok and e.time}
    picks = []
    for b in budgets:
        fits = [c for c in on_tune.values() if c.bound <= b and c.hash in single]
        if fits:
            best = max(fits, key=lambda c: (c.speedup.median, c.hash))
            picks.append(Pick(b, best.config, best.hash, best, on_eval.get(best.hash),
                              single[best.hash]))
            continue
        if tune:   # confirmed, and nothing holds the budget with its margin
            continue
        within = [e for e in single.values() if e.loss is not None and e.loss <= b]
        if within:
            e = min(within, key=lambda e: (e.time, e.id))
            picks.append(Pick(b, e.config, e.hash, None, on_eval.get(e.hash), e))
    return picks
