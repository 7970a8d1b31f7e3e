"""The first pass: every knob alone (all others exact) at each of its values.

Its results seed every search (OpenTuner seed configurations), and a value whose loss alone
already breaks a budget, or that fails alone, is pruned from that budget's space: in a
search where the other knobs only add error, it cannot be part of a good configuration.
A dynamic knob keeps all its values in a dynamic search: screened everywhere, a value can
break the budget and still be right on the leaves where the runtime state says it is safe.

A dynamic search also starts from *threshold seeds*: each dynamic knob alone, approximate
only where its state is near one end of its range. The states where an approximation is
safe are often a small share of the range (a query term that carries 3% of the query's
weight, a retrieval that is 95% sure), which a search drawing thresholds over the whole
range seldom reaches within its time.
"""

from __future__ import annotations

from approxcc.tune.db import Evaluation
from approxcc.tune.space import Knob, KnobConfig, KnobSpace, canonical

MAX_VALUES = 8   # per knob; larger domains are sampled evenly (both ends kept)
EDGE_SHARES = (0.05, 0.25)   # threshold seeds: approximate on this share of the state's range


def screening_configs(space: KnobSpace) -> list[KnobConfig]:
    configs = []
    for k in space.knobs:
        values = [v for v in k.values if v != k.exact]
        if len(values) > MAX_VALUES:
            step = (len(values) - 1) / (MAX_VALUES - 1)
            values = [values[round(i * step)] for i in range(MAX_VALUES)]
        for v in values:
            configs.append(canonical(space.exact_config() | {k.name: {"value": v}}))
    return configs


def alone(space: KnobSpace, e: Evaluation) -> tuple[str, int] | None:
    """(knob, value) when `e` is a screening configuration: one knob off its exact value."""
    off = [(name, entry["value"]) for name, entry in e.config.items()
           if "value" in entry and entry["value"] != space[name].exact]
    dynamic = any("decisions" in entry for entry in e.config.values())
    return off[0] if len(off) == 1 and not dynamic else None


def pruned_space(space: KnobSpace, results: list[Evaluation], budget: float,
                 mode: str = "static") -> KnobSpace:
    """`space` without the values that fail or exceed `budget` alone (in a dynamic search,
    only failing values of dynamic knobs go)."""
    bad: dict[str, set[int]] = {}
    for e in results:
        single = alone(space, e)
        if not single:
            continue
        over = e.loss is not None and e.loss > budget
        keep_over = mode == "dynamic" and space[single[0]].dynamic
        if not e.ok or (over and not keep_over):
            bad.setdefault(single[0], set()).add(single[1])
    return space.restrict({k.name: [v for v in k.values if v not in bad.get(k.name, set())]
                           for k in space.knobs})


def seeds(space: KnobSpace, results: list[Evaluation], budget: float) -> list[KnobConfig]:
    """Seed configurations for one budget: the screening points within it, fastest first,
    and their combination (each knob at its fastest value that met the budget alone)."""
    good = sorted((e for e in results if e.ok and e.loss is not None and e.loss <= budget
                   and alone(space, e)), key=lambda e: e.time or 0.0)
    combined = space.exact_config()
    for e in reversed(good):   # the fastest value per knob wins
        name, value = alone(space, e) or ("", 0)
        combined[name] = {"value": value}
    out = [canonical(combined)] if good else []
    return out + [e.config for e in good if e.config not in out]


def threshold_seeds(space: KnobSpace) -> list[KnobConfig]:
    """Per dynamic knob, its mildest approximate value (next to the exact one) on the states
    within each of `EDGE_SHARES` of either end of its range, exact elsewhere; the knobs
    interleaved, narrowest share first, so that a short search sees every knob."""
    out = []
    for share in EDGE_SHARES:
        for low_end in (True, False):
            for k in space.knobs:
                if not k.dynamic or k.exact is None or len(k.values) < 2:
                    continue
                i = k.values.index(k.exact)
                mild = k.values[i + 1] if i + 1 < len(k.values) else k.values[i - 1]
                out.append(canonical(space.exact_config() |
                                     {k.name: _edge(k, share, low_end, mild, k.exact)}))
    return out


def _edge(k: Knob, share: float, low_end: bool, value: int,
          exact: int) -> dict[str, list[int | float]]:
    """A decision tree: `value` on the states within `share` of the range's low (or high)
    end, the exact value on the rest (extra thresholds right next to the first)."""
    lo, hi = k.range
    n = k.thresholds
    cut = lo + share * (hi - lo) if low_end else hi - share * (hi - lo)
    if k.float_state:
        step = (hi - lo) * 1e-6
        thresholds: list[int | float] = [cut + i * step if low_end else cut - (n - 1 - i) * step
                                         for i in range(n)]
    else:
        first = max(lo + 1, min(round(cut), hi - n + 1)) if low_end else \
            max(lo + 1, min(round(cut) - n + 1, hi - n + 1))
        thresholds = [first + i for i in range(n)]
    decisions = [value] + [exact] * n if low_end else [exact] * n + [value]
    return {"thresholds": thresholds, "decisions": decisions}
