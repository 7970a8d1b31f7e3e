"""A two-layer MLP with one knob per ML transform: the input of the lit tests in tests/lit/ml."""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from approxcc import approx

RNG = np.random.default_rng(0)
PARAMS = {"layers": (RNG.standard_normal((2, 8, 8)) / 3).astype(np.float32),
          "head": (RNG.standard_normal((8, 4)) / 3).astype(np.float32)}


def mlp(params, x):
    def layer(h, w):
        return jax.nn.relu(h @ w), None

    h, _ = lax.scan(layer, x, params["layers"])
    return h @ params["head"]


def linear(params, x):
    return x[:, :4]


@approx.knob("sub", transform="func_substitute", variants=[linear],
             state=approx.state("load"), thresholds=1, range=(0, 10))
@approx.knob("skip", transform="task_skipping", values=[0, 1])
@approx.knob("perf", transform="loop_perforate", values=[1, 2])
@approx.knob("quant", transform="quantize", values=["none", "int4-g4", "w8a8"])
@approx.knob("prec", transform="precision", values=["f32", "bf16"])
def forward(params, x):
    return mlp(params, x)


APPROX_EXAMPLE_ARGS = {"forward": (PARAMS, jnp.ones((2, 8), np.float32))}
