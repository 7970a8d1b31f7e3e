"""lucidrains/flash-attention-jax: multi-head self-attention over its `attention` (softmax
of the scaled scores under a key mask, times the values); its `flash_attention` (the same
product in 128-row chunks of queries and keys, two nested `lax.scan`s with running maxima
and sums) is a `func_substitute` variant. The projections are the wrapper's.

    approxcc bench/jax_corpus/attention_mha.py -o build/bench-jax/attention
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from _corpus import use

from approxcc import approx

use("attention")
from flash_attention_jax import attention as plain  # noqa: E402
from flash_attention_jax import flash_attention as flash  # noqa: E402

# the module reads its chunk sizes (1024) when traced: 128 makes both scans run 4 times
flash.Q_CHUNK_SIZE = flash.K_CHUNK_SIZE = 128

BATCH, LENGTH, HEADS, HEAD_DIM = 2, 512, 4, 64
WIDTH = HEADS * HEAD_DIM

_rng = np.random.default_rng(0)
PARAMS = {name: (_rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32)
          for name in ("wq", "wk", "wv", "wo")}
X = _rng.standard_normal((BATCH, LENGTH, WIDTH)).astype(np.float32)


def _heads(x: jax.Array, w: jax.Array) -> jax.Array:
    """(batch, length, width) @ w as (batch, heads, length, head_dim)."""
    return (x @ w).reshape(BATCH, LENGTH, HEADS, HEAD_DIM).transpose(0, 2, 1, 3)


def _block(attend: Any, params: dict[str, Any], x: jax.Array) -> jax.Array:
    q, k, v = (_heads(x, params[w]) for w in ("wq", "wk", "wv"))
    mask = jnp.ones((BATCH, LENGTH), dtype=bool)   # every key attended
    out = attend(q, k, v, mask)
    return out.transpose(0, 2, 1, 3).reshape(BATCH, LENGTH, WIDTH) @ params["wo"]


def self_attention_flash(params: dict[str, Any], x: jax.Array) -> jax.Array:
    return _block(flash.flash_attention, params, x)


@approx.knob("attention_algorithm", transform="func_substitute",
             variants=[self_attention_flash])
@approx.knob("attention_precision", transform="precision", values=["f32", "bf16"])
def self_attention(params: dict[str, Any], x: jax.Array) -> jax.Array:
    return _block(plain.attention, params, x)


APPROX_EXAMPLE_ARGS = {"self_attention": (PARAMS, X)}
