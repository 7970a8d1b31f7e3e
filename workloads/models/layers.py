"""Building blocks shared by the decoder models: RMSNorm, RoPE, cached attention."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

Cache = dict[str, list[jax.Array]]


def rms_norm(x: jax.Array, scale: jax.Array, eps: float) -> jax.Array:
    """``x / rms(x) * scale`` over the last axis (GGUF stores Gemma's ``1 + w`` as scale)."""
    var = jnp.mean(x * x, axis=-1, keepdims=True)
    return x * jax.lax.rsqrt(var + eps) * scale


def rope(x: jax.Array, positions: jax.Array, base: float, interleaved: bool) -> jax.Array:
    """Rotary embedding of ``x`` (S, heads, head_dim) at ``positions`` (S,).

    ``interleaved`` rotates pairs ``(x[2i], x[2i+1])`` (llama.cpp's "normal" mode: its
    converter permutes llama Q/K rows for it); otherwise halves (NeoX mode, Gemma).
    """
    half = x.shape[-1] // 2
    inv_freq = base ** (-jnp.arange(half, dtype=jnp.float32) * 2.0 / x.shape[-1])
    angles = positions.astype(jnp.float32)[:, None] * inv_freq[None, :]
    cos, sin = jnp.cos(angles), jnp.sin(angles)
    # Each element times its cos plus its partner (the other of its pair) times -sin or sin:
    # one elementwise pass over x. Rotating the two halves apart and concatenating them
    # costs IREE four more dispatches a head group and decode step (two copies).
    axis = -1 if interleaved else -2
    split = (half, 2) if interleaved else (2, half)
    pairs = x.reshape(*x.shape[:-1], *split)
    c = jnp.stack([cos, cos], axis=axis)[:, None]
    s = jnp.stack([-sin, sin], axis=axis)[:, None]
    return (pairs * c + jnp.flip(pairs, axis=axis) * s).reshape(x.shape)


def init_cache(n_layers: int, max_len: int, n_kv_heads: int, head_dim: int) -> Cache:
    """Zeroed KV cache: ``k`` a list of one (kv_heads, head_dim, max_len) float32 array a
    layer, ``v`` of one (kv_heads, max_len, head_dim) (separate arrays: IREE copies a whole
    stacked cache on every layer's update; heads first: attention reads each head in place,
    where a (max_len, kv_heads, ...) cache is transposed whole at every layer of every decode
    step). Keys position-last: a decode step's scores contract them as stored."""
    return {"k": [jnp.zeros((n_kv_heads, head_dim, max_len), jnp.float32)
                  for _ in range(n_layers)],
            "v": [jnp.zeros((n_kv_heads, max_len, head_dim), jnp.float32)
                  for _ in range(n_layers)]}


# Query rows per block of a prompt's causal attention (``cached_attention`` at position 0).
PROMPT_BLOCK = 128


def cached_attention(
    q: jax.Array,
    k: jax.Array,
    v: jax.Array,
    cache: Cache,
    layer: int,
    pos: jax.Array | int,
    scale: float,
    window: int = 0,
    live: Any = None,
) -> tuple[jax.Array, Cache]:
    """Write ``k``/``v`` (S, kv_heads, hd) at ``pos`` into ``cache[layer]``; attend ``q``.

    ``q`` is (S, heads, hd) for positions ``pos .. pos+S-1``; keys after a query's position,
    and with ``window`` > 0 keys ``window`` or more positions before it, are masked. Returns
    (S, heads*hd) and the updated cache. A prompt at the static position 0 (``pos=0``, an
    int) attends to its own keys only, a block of ``PROMPT_BLOCK`` queries at a time to the
    keys up to its last one (and from the first its window reaches): the key blocks the
    mask hides from a whole query block are skipped, not computed and zeroed (exact: their
    probabilities are 0), 5/8 of the S x S scores at 512 tokens. A decode step with
    ``live`` (an int, or a symbolic dimension when exported: the runtime passes a length
    past ``pos``) reads the cache's first ``live`` positions only, not all ``max_len``: the
    rest are masked anyway (exact), and a step early in a sequence reads a fraction of it.
    """
    zero = jnp.zeros((), jnp.int32)
    at = jnp.asarray(pos, jnp.int32)
    k, v = k.transpose(1, 0, 2), v.transpose(1, 0, 2)      # (kv_heads, S, hd)
    keys = jax.lax.dynamic_update_slice(cache["k"][layer], k.transpose(0, 2, 1),
                                        (zero, zero, at))
    values = jax.lax.dynamic_update_slice(cache["v"][layer], v, (zero, at, zero))
    cache = {
        "k": [*cache["k"][:layer], keys, *cache["k"][layer + 1:]],
        "v": [*cache["v"][:layer], values, *cache["v"][layer + 1:]],
    }
    if not (isinstance(pos, int) and pos == 0):
        if q.shape[0] == 1:
            return _attend_one(q[0], keys, values, at, scale, window, live), cache
        return _attend(q, keys.transpose(0, 2, 1), values, pos, 0, scale, window), cache
    if not isinstance(q.shape[0], int):    # a length exported symbolic: one block
        return _attend(q, k, v, 0, 0, scale, window), cache
    blocks = []
    for first_q in range(0, q.shape[0], PROMPT_BLOCK):
        end = min(first_q + PROMPT_BLOCK, q.shape[0])
        first_k = max(0, first_q - window + 1) if window else 0
        blocks.append(_attend(q[first_q:end], k[:, first_k:end], v[:, first_k:end], first_q,
                              first_k, scale, window))
    return jnp.concatenate(blocks) if len(blocks) > 1 else blocks[0], cache


def _attend(q: jax.Array, keys: jax.Array, values: jax.Array, q_pos0: jax.Array | int,
            k_pos0: int, scale: float, window: int) -> jax.Array:
    """Masked attention of ``q`` (S, heads, hd) at positions ``q_pos0..`` over ``keys`` and
    ``values`` (kv_heads, T, hd) at positions ``k_pos0..``; (S, heads*hd). (Keys
    position-last, (kv_heads, hd, S), a 512-token prompt's scores exceed llvm-cpu's stack
    limit.)"""
    s, heads, hd = q.shape
    kv_heads, n_keys = values.shape[:2]
    grouped = q.reshape(s, kv_heads, heads // kv_heads, hd)
    scores = jnp.einsum("skgd,ktd->kgst", grouped, keys) * scale
    q_pos = q_pos0 + jnp.arange(s, dtype=jnp.int32)
    k_pos = k_pos0 + jnp.arange(n_keys, dtype=jnp.int32)
    visible = k_pos[None, :] <= q_pos[:, None]
    if window:
        visible &= q_pos[:, None] - k_pos[None, :] < window
    scores = jnp.where(visible, scores, jnp.finfo(jnp.float32).min)
    probs = jax.nn.softmax(scores, axis=-1)
    out = jnp.einsum("kgst,ktd->skgd", probs, values)
    return out.reshape(s, heads * hd)


def _attend_one(q: jax.Array, keys: jax.Array, values: jax.Array, pos: jax.Array,
                scale: float, window: int, live: Any) -> jax.Array:
    """A decode step's attention: ``q`` (heads, hd) at ``pos`` over the first ``live`` (all,
    if None) positions of ``keys`` (kv_heads, hd, max_len) and ``values`` (kv_heads, max_len,
    hd) as the cache holds them; (1, heads*hd). Its products are multiply-and-sum over the
    cache as stored (no contraction: IREE's data tiling would copy the cache into its tiled
    layout at every layer of every step), with explicit broadcasts: ``live`` may be a
    symbolic dimension, and IREE lowers a dynamic broadcast only alone (one of jnp's implicit
    ones is folded into another and loses what `approxcc.ml.ir` says of it)."""
    heads, hd = q.shape
    kv_heads = values.shape[0]
    group = heads // kv_heads
    n = keys.shape[-1] if live is None else live
    keys = jax.lax.slice_in_dim(keys, 0, n, axis=2)
    values = jax.lax.slice_in_dim(values, 0, n, axis=1)
    grouped = q.reshape(kv_heads, group, hd)
    wide = (kv_heads, group, hd, n)
    scores = jnp.sum(jax.lax.broadcast_in_dim(grouped, wide, (0, 1, 2))
                     * jax.lax.broadcast_in_dim(keys, wide, (0, 2, 3)), axis=2) * scale
    k_pos = jax.lax.broadcasted_iota(jnp.int32, (kv_heads, group, n), 2)
    visible = k_pos <= pos
    if window:
        visible &= pos - k_pos < window
    scores = jnp.where(visible, scores, jnp.finfo(jnp.float32).min)
    top = jax.lax.broadcast_in_dim(jnp.max(scores, axis=-1), scores.shape, (0, 1))
    weights = jnp.exp(scores - top)                  # softmax, normalized after the product
    wide = (kv_heads, group, n, hd)
    out = jnp.sum(jax.lax.broadcast_in_dim(weights, wide, (0, 1, 2))
                  * jax.lax.broadcast_in_dim(values, wide, (0, 2, 3)), axis=2)
    return (out / jnp.sum(weights, axis=-1)[..., None]).reshape(1, heads * hd)
