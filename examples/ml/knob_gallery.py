"""One small function per ML transform, each with one knob: what every transform means, and
the fixture tests/test_ml.py builds and checks against JAX.

    approxcc examples/ml/knob_gallery.py -o build/gallery --target=cpu
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from approxcc import approx

_rng = np.random.default_rng(7)


def _w(*shape: int) -> np.ndarray:
    return (_rng.standard_normal(shape) / np.sqrt(shape[-2])).astype(np.float32)


X = _rng.standard_normal((4, 64)).astype(np.float32)

# Layers as a Python list: task_skipping drops entries of params["layers"].
LIST_PARAMS = {"layers": [{"w": _w(64, 64), "b": np.zeros(64, np.float32)} for _ in range(4)],
               "out": _w(64, 8)}


def mlp_list(params: dict[str, Any], x: jax.Array) -> jax.Array:
    for layer in params["layers"]:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return x @ params["out"]


@approx.knob("list_skip", transform="task_skipping", values=[0, 1, (0, 2)])
def skip_layers(params: dict[str, Any], x: jax.Array) -> jax.Array:
    """1 = run the first 3 of 4 layers; (0, 2) = skip layers 0 and 2."""
    return mlp_list(params, x)


# Layers stacked on axis 0 and scanned: loop_perforate runs every v-th layer.
STACKED_PARAMS = {"layers": {"w": _w(6, 64, 64)}, "out": _w(64, 8)}


@approx.knob("scan_perforate", transform="loop_perforate", values=[1, 3])
def scan_layers(params: dict[str, Any], x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Returns the output and each layer's mean activation (a scan's per-iteration ys)."""
    def layer(h: jax.Array, w: jax.Array) -> tuple[jax.Array, jax.Array]:
        h = jnp.tanh(h @ w)
        return h, jnp.mean(h)

    h, means = lax.scan(layer, x, params["layers"]["w"])
    return h @ params["out"], means


# A fori_loop with static bounds: loop_perforate v runs its first ceil(8 / v) iterations.
POWER_PARAMS = {"a": _w(64, 64)}


@approx.knob("fori_perforate", transform="loop_perforate", values=[1, 4])
def power_iteration(params: dict[str, Any], x: jax.Array) -> jax.Array:
    def body(_: jax.Array, v: jax.Array) -> jax.Array:
        v = v @ params["a"]
        return v / jnp.linalg.norm(v, axis=-1, keepdims=True)

    return lax.fori_loop(0, 8, body, x)


MLP_PARAMS = {"w1": _w(64, 128), "b1": np.zeros(128, np.float32), "w2": _w(128, 64)}


def mlp(params: dict[str, Any], x: jax.Array) -> jax.Array:
    return jax.nn.gelu(x @ params["w1"] + params["b1"]) @ params["w2"]


def mlp_relu(params: dict[str, Any], x: jax.Array) -> jax.Array:
    """A cheaper activation, same weights: a func_substitute variant."""
    return jax.nn.relu(x @ params["w1"] + params["b1"]) @ params["w2"]


@approx.knob("precision", transform="precision", values=["f32", "f16"])
def mlp_precision(params: dict[str, Any], x: jax.Array) -> jax.Array:
    return mlp(params, x)


@approx.knob("quant", transform="quantize", values=["none", "int8", "int4-g32", "w8a8"])
def mlp_quant(params: dict[str, Any], x: jax.Array) -> jax.Array:
    return mlp(params, x)


@approx.knob("activation", transform="func_substitute", variants=[mlp_relu])
def mlp_substitute(params: dict[str, Any], x: jax.Array) -> jax.Array:
    return mlp(params, x)


APPROX_EXAMPLE_ARGS = {
    "skip_layers": (LIST_PARAMS, X),
    "scan_layers": (STACKED_PARAMS, X),
    "power_iteration": (POWER_PARAMS, X),
    "mlp_precision": (MLP_PARAMS, X),
    "mlp_quant": (MLP_PARAMS, X),
    "mlp_substitute": (MLP_PARAMS, X),
}
