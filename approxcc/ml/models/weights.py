"""Weight representations inside a model's params pytree, and rewrites between them.

A weight leaf is one of
- a ``jax.Array``/``np.ndarray`` of float32, bfloat16 or float16 (matrices ``(out, in)``);
- an ``Int8Weight``: symmetric per-group int8 codes plus float32 scales, dequantized inside
  the graph (weight-only quantization).

``linear`` and ``embed_rows`` accept either, so a precision or quantize transform only
rewrites leaves (``cast_matrices``, ``quantize_int8``) and the model code is unchanged.
Norm scales and other vectors stay float32.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

Params = dict[str, Any]

# How ``linear`` is traced: "dot" (``dot_general``; best under XLA) or "reduce" (broadcast
# multiply + sum). IREE 3.13 on CPU, with its default flags, puts the transpose of an argument
# (non-constant) ``(out, in)`` RHS of a matmul in a dispatch of its own, run every call (a
# 1x2048 @ 2048x4096 matvec: 24-61 ms as a matmul, 3 ms as multiply+sum), and likewise the
# widening convert of a bf16/f16/int8 weight; ``approxcc.ml.build.FUSION_FLAGS`` fuses both.
_LINEAR_MODE: ContextVar[str] = ContextVar("linear_mode", default="dot")


@contextmanager
def linear_mode(mode: str) -> Iterator[None]:
    """Trace ``linear`` as "dot" or "reduce" inside the block (IREE export uses "reduce")."""
    if mode not in ("dot", "reduce"):
        raise ValueError(f"unknown linear mode {mode!r}")
    token = _LINEAR_MODE.set(mode)
    try:
        yield
    finally:
        _LINEAR_MODE.reset(token)


@dataclass(frozen=True)
class Int8Weight:
    """``w[o, g*group:(g+1)*group] ~= q[o, ...] * scale[o, g]``; dequantized to ``dtype``."""

    q: jax.Array
    scale: jax.Array
    group: int = field(metadata={"static": True})
    dtype: str = field(default="float32", metadata={"static": True})

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.q.shape)

    def dequantize(self) -> jax.Array:
        inner = self.q.shape[-1]
        codes = self.q.reshape(*self.q.shape[:-1], inner // self.group, self.group)
        w = codes.astype(self.dtype) * self.scale[..., None].astype(self.dtype)
        return w.reshape(self.q.shape)


jax.tree_util.register_dataclass(Int8Weight)

Weight = jax.Array | np.ndarray | Int8Weight


def _matrix(w: Weight) -> jax.Array:
    return w.dequantize() if isinstance(w, Int8Weight) else jnp.asarray(w)


def _linear_reduce(x: jax.Array, w: Weight) -> jax.Array:
    if isinstance(w, Int8Weight):
        n = w.q.shape[-1] // w.group
        xg = x.reshape(x.shape[0], 1, n, w.group)
        codes = w.q.reshape(w.q.shape[0], n, w.group).astype(jnp.float32)
        return jnp.sum(jnp.sum(xg * codes[None], axis=-1) * w.scale[None], axis=-1)
    return jnp.sum(x[:, None, :] * jnp.asarray(w)[None].astype(jnp.float32), axis=-1)


def linear(x: jax.Array, w: Weight) -> jax.Array:
    """``x @ w.T`` for ``x`` (S, in) float32 and ``w`` (out, in); float32 result.

    A low-precision weight keeps the product in its dtype (``x`` is cast to it) and
    accumulates in float32; in "reduce" mode weights are widened inside the fused reduction.
    """
    if _LINEAR_MODE.get() == "reduce":
        return _linear_reduce(x, w)
    m = _matrix(w)
    dims = (((x.ndim - 1,), (1,)), ((), ()))
    if m.dtype == jnp.float32:
        return jax.lax.dot_general(x, m, dims)
    return jax.lax.dot_general(x.astype(m.dtype), m, dims, preferred_element_type=jnp.float32)


def embed_rows(w: Weight, tokens: jax.Array) -> jax.Array:
    """Rows ``w[tokens]`` of an embedding ``(vocab, d)`` as float32."""
    if isinstance(w, Int8Weight):
        rows = Int8Weight(w.q[tokens], w.scale[tokens], w.group, "float32")
        return rows.dequantize()
    return jnp.asarray(w)[tokens].astype(jnp.float32)


def _is_matrix(leaf: Any) -> bool:
    return hasattr(leaf, "ndim") and leaf.ndim >= 2


def cast_matrices(params: Params, dtype: str) -> Params:
    """Every matrix (embedding included) cast to ``dtype``; vectors stay float32."""
    np_dtype = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    return jax.tree_util.tree_map(
        lambda a: np.asarray(a).astype(np_dtype) if _is_matrix(a) else a, params
    )


def quantize_matrix(w: np.ndarray, group: int = 64, dtype: str = "float32") -> Int8Weight:
    """Symmetric absmax int8 quantization of ``w`` (…, in) with ``group`` columns a scale."""
    w = np.asarray(w, np.float32)
    inner = w.shape[-1]
    if inner % group:
        raise ValueError(f"inner dimension {inner} is not a multiple of group {group}")
    blocks = w.reshape(*w.shape[:-1], inner // group, group)
    scale = np.abs(blocks).max(axis=-1) / 127.0
    scale = np.where(scale == 0, 1.0, scale).astype(np.float32)
    q = np.clip(np.rint(blocks / scale[..., None]), -127, 127).astype(np.int8)
    return Int8Weight(q.reshape(w.shape), scale, group, dtype)


def quantize_int8(params: Params, group: int = 64, dtype: str = "float32") -> Params:
    """Every matrix as an ``Int8Weight`` (dequantized to ``dtype`` in the graph)."""
    return jax.tree_util.tree_map(
        lambda a: quantize_matrix(a, group, dtype) if _is_matrix(a) else a,
        params,
        is_leaf=lambda a: isinstance(a, Int8Weight),
    )


def stack_layers(params: Params) -> Params:
    """``params["layers"]`` as one dict of arrays stacked on a leading layer axis.

    Exported through IREE this turns ~9 arguments a layer into ~9 arguments in all.
    """
    layers = params["layers"]
    if isinstance(layers, dict):
        return params
    stacked = jax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *layers)
    return {**params, "layers": stacked}


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
