"""Weights inside a model's params pytree: plain arrays, matrices ``(out, in)``.

A weight is a ``jax.Array``/``np.ndarray`` of float32 or, inside an approxcc ``precision``
variant, bfloat16/float16; approxcc's transforms rewrite the leaves (narrow dtypes,
quantized codes widened inside the product, int8 x int8 products) and the model code stays
as it is. Norm scales and other vectors stay float32.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

Params = dict[str, Any]
Weight = jax.Array | np.ndarray


def linear(x: jax.Array, w: Weight) -> jax.Array:
    """``x @ w.T`` for ``x`` (S, in) and ``w`` (out, in), as one ``dot_general`` (the form
    approxcc's quantize transforms and IREE's data-tiled kernels take); float32 result. A
    narrow weight keeps the product in its dtype (``x`` is cast to it), accumulating in
    float32."""
    m = jnp.asarray(w)
    dims = (((x.ndim - 1,), (1,)), ((), ()))
    if m.dtype == jnp.float32:
        return jax.lax.dot_general(x, m, dims)
    return jax.lax.dot_general(x.astype(m.dtype), m, dims, preferred_element_type=jnp.float32)


def embed_rows(w: Weight, tokens: jax.Array) -> jax.Array:
    """Rows ``w[tokens]`` of an embedding ``(vocab, d)`` as float32."""
    return jnp.asarray(w)[tokens].astype(jnp.float32)


def output_head(params: Params) -> Weight:
    """The output projection: ``params["output"]`` if the model has one (untied, or a
    restricted vocabulary), else the tied embedding."""
    return params.get("output", params["embed"])


def layer_count(layers: list[Params] | Params) -> int:
    if isinstance(layers, list):
        return len(layers)
    return int(jax.tree_util.tree_leaves(layers)[0].shape[0])


def iter_layers(layers: list[Params] | Params) -> Iterator[Params]:
    """Per-layer weight dicts from a list of layers or from stacked layers."""
    if isinstance(layers, list):
        yield from layers
        return
    for i in range(layer_count(layers)):
        yield jax.tree_util.tree_map(lambda a, i=i: a[i], layers)
