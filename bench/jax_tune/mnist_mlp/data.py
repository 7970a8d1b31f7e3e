"""Input batches for `approxcc tune bench/jax_tune/mnist_mlp`: random images like the
wrapper's own (bench/jax_corpus/mnist_mlp.py), 4 to tune with (seed 1), 8 held out (seed 2)."""

from __future__ import annotations

import numpy as np

BATCH, PIXELS = 128, 784


def batches(split: str) -> list[tuple[np.ndarray]]:
    seed, count = {"tune": (1, 4), "eval": (2, 8)}[split]
    rng = np.random.default_rng(seed)
    return [(rng.random((BATCH, PIXELS), dtype=np.float32),) for _ in range(count)]
