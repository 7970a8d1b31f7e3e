"""The JAX half: a word encoder. Hashed word ids -> embeddings -> residual layers -> one
unit vector per word. The knob `encoder_layers` skips the last 1-3 of the 4 layers."""

import jax
import jax.numpy as jnp
import numpy as np

from approxcc import approx

VOCAB, DIM, LAYERS, WORDS = 2048, 512, 4, 16
_rng = np.random.default_rng(0)
PARAMS = {"embed": _rng.standard_normal((VOCAB, DIM)).astype(np.float32),
          "layers": (_rng.standard_normal((LAYERS, DIM, DIM)) / DIM**0.5).astype(np.float32)}


@approx.knob("encoder_layers", transform="task_skipping", values=[0, 1, 2, 3])
def encode(params, ids):
    x = params["embed"][ids]

    def layer(h, w):
        return h + jnp.tanh(h @ w), None

    x, _ = jax.lax.scan(layer, x, params["layers"])
    return x / jnp.linalg.norm(x, axis=1, keepdims=True)


APPROX_EXAMPLE_ARGS = {"encode": (PARAMS, np.arange(WORDS, dtype=np.int32))}
