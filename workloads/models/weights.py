"""Weight representations inside a model's params pytree, and rewrites between them.

A weight leaf is one of
- a ``jax.Array``/``np.ndarray`` of float32, bfloat16 or float16 (matrices ``(out, in)``);
- an ``Int8Weight``: symmetric per-group int8 codes plus float32 scales, widened inside the
  product (weight-only quantization), or with integer ``activations`` (per-channel scales) an
  int8 x int8 product accumulated in int32 against the per-token quantized input: one int8
  digit a value (``"int8"``, W8A8) or two (``"int16"``: ``x ~= s*hi + s/254*lo``, about 16
  bits of fixed point, so the error is the weights' alone while the product stays int8);
- an ``Int4Weight``: symmetric 4-bit codes in groups (GGUF-style blocks), two to a byte.

``linear`` and ``embed_rows`` accept any of them, so a precision or quantize transform only
rewrites leaves (``cast_matrices``, ``quantize_int8``, ``quantize_int4``) and the model code
is unchanged. Norm scales and other vectors stay float32.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

from approxcc.ml.packed import TILE, Packed, pack

Params = dict[str, Any]

# How ``linear`` is traced: "dot" (``dot_general``; best under XLA) or "reduce" (broadcast
# multiply + sum). IREE 3.13 on CPU, with its default flags, puts the transpose of an argument
# (non-constant) ``(out, in)`` RHS of a matmul in a dispatch of its own, run every call (a
# 1x2048 @ 2048x4096 matvec: 24-61 ms as a matmul, 3 ms as multiply+sum), and likewise the
# widening convert of a bf16/f16/int8 weight; ``approxcc.ml.iree.FUSION_FLAGS`` fuses both.
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
    """``w[o, g*group:(g+1)*group] ~= q[o, ...] * scale[o, g]``; dequantized to ``dtype``.

    ``activations`` "int8" (W8A8) or "int16" (``group`` is the whole row) quantizes each
    input row with its own absmax scale into one or two int8 digits and takes the product
    in int32.

    ``block`` > 0 (per-channel scales) stores ``q`` as tiles ``(out / block, in, block)``:
    row ``o`` is column ``o % block`` of tile ``o // block``. A matrix-vector product over
    it reads each tile front to back with ``block`` outputs side by side, which IREE's
    llvm-cpu codegen turns into whole-register multiply-adds of widened codes against a
    broadcast input; over ``(out, in)`` it reduces along the row and shuffles every step
    (``iree_decode``)."""

    q: jax.Array
    scale: jax.Array
    group: int = field(metadata={"static": True})
    dtype: str = field(default="float32", metadata={"static": True})
    activations: str = field(default="float", metadata={"static": True})
    block: int = field(default=0, metadata={"static": True})

    @property
    def shape(self) -> tuple[int, ...]:
        if self.block:
            *lead, tiles, inner, block = self.q.shape
            return (*lead, tiles * block, inner)
        return tuple(self.q.shape)

    def codes(self) -> jax.Array:
        """Codes as ``(..., out, in)``."""
        q = jnp.asarray(self.q)
        return jnp.swapaxes(q, -1, -2).reshape(self.shape) if self.block else q

    def rows(self, tokens: jax.Array) -> jax.Array:
        """Codes of rows ``tokens`` as ``(len(tokens), in)``, gathered from the tiles."""
        q = jnp.asarray(self.q)
        if self.block:
            return q[tokens // self.block, :, tokens % self.block]
        return q[tokens]

    def dequantize(self) -> jax.Array:
        codes = self.codes()
        inner = codes.shape[-1]
        grouped = codes.reshape(*codes.shape[:-1], inner // self.group, self.group)
        w = grouped.astype(self.dtype) * jnp.asarray(self.scale)[..., None].astype(self.dtype)
        return w.reshape(codes.shape)


@dataclass(frozen=True)
class Int4Weight:
    """4-bit codes ``c`` in [-8, 7], ``w ~= c * scale[o, g]`` over groups of ``group``
    columns. Byte ``j`` of a group holds code ``j`` in its low nibble and code
    ``j + group/2`` in its high one, so both halves unpack with a mask or a shift."""

    packed: jax.Array          # int8 (out, in / 2)
    scale: jax.Array           # float32 (out, in / group)
    group: int = field(metadata={"static": True})

    @property
    def shape(self) -> tuple[int, ...]:
        return (*self.packed.shape[:-1], self.packed.shape[-1] * 2)

    def halves(self) -> tuple[jax.Array, jax.Array]:
        """Low and high codes as int8, each (..., in / group, group / 2)."""
        p = jnp.asarray(self.packed)
        lead, n = p.shape[:-1], p.shape[-1] * 2 // self.group
        low = (p & 15) - 8
        high = ((p >> 4) & 15) - 8
        return (low.reshape(*lead, n, self.group // 2), high.reshape(*lead, n, self.group // 2))

    def codes(self) -> jax.Array:
        low, high = self.halves()
        return jnp.concatenate([low, high], axis=-1).reshape(self.shape)

    def dequantize(self) -> jax.Array:
        low, high = self.halves()
        grouped = jnp.concatenate([low, high], axis=-1).astype(jnp.float32)
        return (grouped * jnp.asarray(self.scale)[..., None]).reshape(self.shape)


jax.tree_util.register_dataclass(Int8Weight)
jax.tree_util.register_dataclass(Int4Weight)

Quantized = Int8Weight | Int4Weight
Weight = jax.Array | np.ndarray | Quantized


def _matrix(w: Weight) -> jax.Array:
    return w.dequantize() if isinstance(w, Quantized) else jnp.asarray(w)


DIGITS = {"int8": 1, "int16": 2}
# Each digit's scale over the next: the remainder after a digit is at most half its scale,
# so 254 keeps the next digit within [-127, 127].
DIGIT_BASE = 254.0


def _integer_product(x: jax.Array, w: Int8Weight) -> jax.Array:
    """int8 x int8 -> int32 product; each row of ``x`` quantized with its absmax into
    ``DIGITS[w.activations]`` int8 digits, stacked as rows of one product so that the
    weight is read once (IREE: one data-tiled i8 x i8 -> i32 mmt4d, VNNI)."""
    scale = jnp.maximum(jnp.max(jnp.abs(x), axis=-1, keepdims=True), 1e-30) / 127.0
    digits, scales, rest = [], [], x
    for _ in range(DIGITS[w.activations]):
        d = jnp.clip(jnp.round(rest / scale), -127, 127)
        digits.append(d.astype(jnp.int8))
        scales.append(scale)
        rest, scale = rest - d * scale, scale / DIGIT_BASE
    acc = jax.lax.dot_general(jnp.concatenate(digits), w.codes(), (((1,), (1,)), ((), ())),
                              preferred_element_type=jnp.int32).astype(jnp.float32)
    rows = x.shape[0]
    out = sum(acc[i * rows:(i + 1) * rows] * s for i, s in enumerate(scales))
    return out * jnp.asarray(w.scale)[None, :, 0]


def _linear_reduce(x: jax.Array, w: Weight) -> jax.Array:
    if isinstance(w, Int4Weight):
        low, high = w.halves()
        n, half = low.shape[-2], low.shape[-1]
        xg = x.reshape(x.shape[0], 1, n, 2 * half)
        part = (jnp.sum(xg[..., :half] * low[None].astype(jnp.float32), axis=-1)
                + jnp.sum(xg[..., half:] * high[None].astype(jnp.float32), axis=-1))
        return jnp.sum(part * w.scale[None], axis=-1)
    if isinstance(w, Int8Weight) and w.block:   # approxcc's int8 tiles (TILE rows)
        return Packed(w.q, jnp.asarray(w.scale)[:, 0], "int8").matvec(x)
    if isinstance(w, Int8Weight):
        n = w.q.shape[-1] // w.group
        if n == 1:  # per-channel: the scale applies after one reduction over the row
            codes = w.q.astype(jnp.float32)
            return jnp.sum(x[:, None, :] * codes[None], axis=-1) * w.scale[None, :, 0]
        xg = x.reshape(x.shape[0], 1, n, w.group)
        codes = w.q.reshape(w.q.shape[0], n, w.group).astype(jnp.float32)
        return jnp.sum(jnp.sum(xg * codes[None], axis=-1) * w.scale[None], axis=-1)
    return jnp.sum(x[:, None, :] * jnp.asarray(w)[None].astype(jnp.float32), axis=-1)


def linear(x: jax.Array, w: Weight) -> jax.Array:
    """``x @ w.T`` for ``x`` (S, in) float32 and ``w`` (out, in); float32 result.

    A low-precision weight keeps the product in its dtype (``x`` is cast to it) and
    accumulates in float32; in "reduce" mode weights are widened inside the fused reduction.
    An int8 weight with integer activations always takes the int32 product.
    """
    if isinstance(w, Int8Weight) and w.activations in DIGITS:
        return _integer_product(x, w)
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
        return dataclasses.replace(w, q=w.rows(tokens), scale=w.scale[tokens],
                                   dtype="float32", block=0).dequantize()
    if isinstance(w, Int4Weight):
        return dataclasses.replace(w, packed=w.packed[tokens], scale=w.scale[tokens]).dequantize()
    return jnp.asarray(w)[tokens].astype(jnp.float32)


def output_head(params: Params) -> Weight:
    """The output projection: ``params["output"]`` if the model has one (untied, or a
    restricted vocabulary), else the tied embedding."""
    return params.get("output", params["embed"])


def _is_matrix(leaf: Any) -> bool:
    return hasattr(leaf, "ndim") and leaf.ndim >= 2


def cast_matrices(params: Params, dtype: str) -> Params:
    """Every matrix (embedding included) cast to ``dtype``; vectors stay float32."""
    np_dtype = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    return jax.tree_util.tree_map(
        lambda a: np.asarray(a).astype(np_dtype) if _is_matrix(a) else a, params
    )


def _absmax_blocks(w: np.ndarray, group: int, levels: int) -> tuple[np.ndarray, np.ndarray]:
    """Codes in [-levels, levels] (rounded) and float32 scales of ``w`` per ``group`` columns."""
    w = np.asarray(w, np.float32)
    inner = w.shape[-1]
    if inner % group:
        raise ValueError(f"inner dimension {inner} is not a multiple of group {group}")
    blocks = w.reshape(*w.shape[:-1], inner // group, group)
    scale = np.abs(blocks).max(axis=-1) / levels
    scale = np.where(scale == 0, 1.0, scale).astype(np.float32)
    return np.rint(blocks / scale[..., None]), scale


def quantize_matrix(w: np.ndarray, group: int = 64, dtype: str = "float32",
                    activations: str = "float", block: int = 0) -> Int8Weight:
    """Symmetric absmax int8 quantization of ``w`` (out, in) with ``group`` columns a scale
    (``group=0``: one scale a row, per-channel); ``block`` > 0 stores the codes in tiles
    of ``block`` rows (``Int8Weight``; per-channel only)."""
    out, inner = np.shape(w)
    group = group or inner
    if block and (block != TILE or group != inner or out % block):
        raise ValueError(f"tiles of {block} rows need {TILE} rows, per-channel scales and "
                         f"{out} rows a multiple of {block}")
    if block:   # approxcc's int8 tiles, as its `quantize` transform stores them
        tiles = pack(np.asarray(w), "int8")
        return Int8Weight(tiles.codes, tiles.scale[:, None], group, dtype, activations, block)
    codes, scale = _absmax_blocks(w, group, 127)
    q = np.clip(codes, -127, 127).astype(np.int8).reshape(out, inner)
    return Int8Weight(q, scale, group, dtype, activations, block)


def quantize_matrix_int4(w: np.ndarray, group: int = 32) -> Int4Weight:
    """Symmetric absmax 4-bit quantization (codes -7..7) with ``group`` columns a scale."""
    codes, scale = _absmax_blocks(w, group, 7)
    nibbles = (np.clip(codes, -8, 7) + 8).astype(np.uint8)
    half = group // 2
    packed = nibbles[..., :half] | (nibbles[..., half:] << 4)
    return Int4Weight(packed.view(np.int8).reshape(*np.shape(w)[:-1], -1), scale, group)


def _is_quantized(a: Any) -> bool:
    return isinstance(a, Quantized)


def quantize_int8(params: Params, group: int = 64, dtype: str = "float32",
                  activations: str = "float", block: int = 0) -> Params:
    """Every matrix as an ``Int8Weight`` (dequantized to ``dtype`` in the graph);
    ``activations`` "int8" (W8A8) or "int16" quantizes the input too (per-channel scales:
    ``group`` is ignored); ``block`` > 0 (per-channel too) stores each matrix whose rows
    are a multiple of ``block`` in tiles of ``block`` rows."""
    if activations != "float" and activations not in DIGITS:
        raise ValueError(f"unknown activations {activations!r}")
    group = 0 if activations in DIGITS or block else group
    return jax.tree_util.tree_map(
        lambda a: quantize_matrix(a, group, dtype, activations,
                                  block if block and np.shape(a)[0] % block == 0 else 0)
        if _is_matrix(a) else a,
        params,
        is_leaf=_is_quantized,
    )


def quantize_int4(params: Params, group: int = 32) -> Params:
    """Every matrix as an ``Int4Weight``."""
    return jax.tree_util.tree_map(
        lambda a: quantize_matrix_int4(a, group) if _is_matrix(a) else a,
        params,
        is_leaf=_is_quantized,
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
