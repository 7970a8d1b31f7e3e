"""A small residual MLP classifier in JAX, tuned like a C program (`approx.toml`):

    approxcc tune examples/ml_tune --qos-budget 1%,5% --time-limit 40s

Its weights and its data come from fixed seeds. `classify` takes a batch of 8 samples of
512 features and returns their 16 class scores; three knobs: `precision` (bf16
weights and compute), `weights` (int8 weights, or W8A8: int8 weights and activations) and
`depth` (the last residual block skipped). `inputs(split)` is the input generator
approx.toml names: the tuning and the held-out batches come from different seeds.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from approxcc import approx

FEATURES, HIDDEN, CLASSES, BLOCKS, BATCH = 512, 1024, 16, 3, 8


def _weights(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)

    def w(rows: int, cols: int, scale: float = 1.0) -> np.ndarray:
        return (rng.standard_normal((rows, cols)) * scale / np.sqrt(rows)).astype(np.float32)

    # the residual blocks' updates shrink with depth: the last one matters least
    return {"embed": w(FEATURES, HIDDEN),
            "layers": [{"w": w(HIDDEN, HIDDEN, scale), "b": np.zeros(HIDDEN, np.float32)}
                       for scale in (1.0, 0.5, 0.04)],
            "head": w(HIDDEN, CLASSES)}


PARAMS = _weights(0)


@approx.knob("depth", transform="task_skipping", values=[0, 1])
@approx.knob("weights", transform="quantize", values=["none", "int8", "w8a8"])
@approx.knob("precision", transform="precision", values=["f32", "bf16"])
def classify(params: dict[str, Any], x: jax.Array) -> jax.Array:
    h = jnp.tanh(x @ params["embed"])
    for layer in params["layers"]:
        h = h + jnp.tanh(h @ layer["w"] + layer["b"])
    return h @ params["head"]


def inputs(split: str) -> list[tuple[np.ndarray]]:
    """Batches for the tuner: 4 to tune with, 12 held out, from disjoint seeds."""
    seed, count = {"tune": (1, 4), "eval": (2, 12)}[split]
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((BATCH, FEATURES)).astype(np.float32),)
            for _ in range(count)]


APPROX_EXAMPLE_ARGS = {"classify": (PARAMS, inputs("tune")[0][0])}
