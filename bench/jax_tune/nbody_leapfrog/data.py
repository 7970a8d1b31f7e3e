"""Initial states for `approxcc tune bench/jax_tune/nbody_leapfrog`: the wrapper's own
initial conditions (bench/jax_corpus/nbody_leapfrog.py, nbody.py's main()) of its 360
particles from other seeds, 3 to tune with (seeds 1-3), 6 held out (seeds 101-106). The
masses are the wrapper's (the build holds them)."""

from __future__ import annotations

import numpy as np
from nbody_leapfrog import MASS, initial_conditions


def states(split: str) -> list[tuple[np.ndarray, np.ndarray]]:
    seeds = {"tune": range(1, 4), "eval": range(101, 107)}[split]
    out = []
    for seed in seeds:
        _, pos, vel = initial_conditions(len(MASS), seed)
        out.append((pos, vel))
    return out
