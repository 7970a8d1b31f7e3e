"""Inputs for `approxcc tune bench/jax_tune/attention`: standard normal sequences of the
wrapper's shape (bench/jax_corpus/attention_mha.py: 2 x 512 x 256), 3 to tune with (seed
1), 6 held out (seed 2). The projections are the wrapper's (the build holds them)."""

from __future__ import annotations

import numpy as np

SHAPE = (2, 512, 256)


def sequences(split: str) -> list[tuple[np.ndarray]]:
    seed, count = {"tune": (1, 3), "eval": (2, 6)}[split]
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(SHAPE).astype(np.float32),) for _ in range(count)]
