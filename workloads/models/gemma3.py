"""Gemma 3 270M (GGUF ``gemma3`` architecture) in plain JAX.

Params pytree (every leaf a ``weights.Weight``; matrices ``(out, in)``)::

    {"embed": (vocab, d),                 # tied: also the output projection
     "final_norm": (d,),
     "layers": [ {"attn_norm", "q_norm" (hd,), "k_norm" (hd,), "wq" (H*hd, d),
                  "wk" (KV*hd, d), "wv" (KV*hd, d), "wo" (d, H*hd), "post_attn_norm",
                  "ffn_norm", "w_gate" (ffn, d), "w_up" (ffn, d), "w_down" (d, ffn),
                  "post_ffn_norm"}, ... ]}  # or stacked on a layer axis

Per-layer facts that are not weights live in the config, aligned with ``params["layers"]``:
``layer_windows[i]`` (sliding window, 0 = global attention) and ``layer_rope_bases[i]``.
To skip layers drop the same entries from both (``decode.skip_layers`` does).

Facts not in this GGUF's metadata, taken from llama.cpp / the HF config of Gemma 3: every
6th layer is global (others slide over 512 tokens), local RoPE base 10 000, attention scale
``1/sqrt(head_dim)``. Norm scales are used as stored: llama.cpp's converter already wrote
Gemma's ``1 + w``. No logit soft-capping unless ``gemma3.final_logit_softcapping`` is set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .config import DecoderConfig, decoder_fields
from .gguf_file import GGUFFile
from .layers import Cache, cached_attention, rms_norm, rope
from .weights import Params, embed_rows, iter_layers, linear, output_head

SLIDING_WINDOW_PATTERN = 6
LOCAL_ROPE_BASE = 10000.0

# params key of a layer's weight -> its GGUF tensor name (``blk.N.<name>.weight``)
LAYER_TENSORS = {
    "attn_norm": "attn_norm", "q_norm": "attn_q_norm", "k_norm": "attn_k_norm",
    "wq": "attn_q", "wk": "attn_k", "wv": "attn_v", "wo": "attn_output",
    "post_attn_norm": "post_attention_norm", "ffn_norm": "ffn_norm", "w_gate": "ffn_gate",
    "w_up": "ffn_up", "w_down": "ffn_down", "post_ffn_norm": "post_ffw_norm",
}


@dataclass(frozen=True)
class Gemma3Config(DecoderConfig):
    layer_windows: tuple[int, ...]
    layer_rope_bases: tuple[float, ...]
    final_softcap: float
    embed_scale: float


def _is_sliding(g: GGUFFile, n_layers: int) -> list[bool]:
    pattern = g.get(".attention.sliding_window_pattern", SLIDING_WINDOW_PATTERN)
    if isinstance(pattern, list):
        return [bool(p) for p in pattern][:n_layers]
    return [(i + 1) % int(pattern) != 0 for i in range(n_layers)]


def config_from_gguf(g: GGUFFile) -> Gemma3Config:
    fields = decoder_fields(g)
    window = int(g.get(".attention.sliding_window", 0))
    global_base = float(g.get(".rope.freq_base", 1e6))
    local_base = float(g.get(".rope.freq_base_swa", LOCAL_ROPE_BASE))
    sliding = _is_sliding(g, fields["n_layers"])
    return Gemma3Config(
        **fields,
        layer_windows=tuple(window if s else 0 for s in sliding),
        layer_rope_bases=tuple(local_base if s else global_base for s in sliding),
        final_softcap=float(g.get(".final_logit_softcapping", 0.0) or 0.0),
        embed_scale=float(np.sqrt(fields["d_model"])),
    )


def forward(
    cfg: Gemma3Config, params: Params, cache: Cache, tokens: jax.Array, pos: jax.Array | int,
    live: Any = None,
) -> tuple[jax.Array, Cache]:
    """Hidden states (S, d) after the final norm for ``tokens`` (S,) at ``pos..pos+S-1``
    (``live``: the cache positions a decode step reads, ``cached_attention``)."""
    positions = pos + jnp.arange(tokens.shape[0], dtype=jnp.int32)
    x = embed_rows(params["embed"], tokens) * cfg.embed_scale
    scale = 1.0 / float(np.sqrt(cfg.head_dim))
    eps = cfg.norm_eps
    for i, layer in enumerate(iter_layers(params["layers"])):
        h = rms_norm(x, layer["attn_norm"], eps)
        q = linear(h, layer["wq"]).reshape(-1, cfg.n_heads, cfg.head_dim)
        k = linear(h, layer["wk"]).reshape(-1, cfg.n_kv_heads, cfg.head_dim)
        v = linear(h, layer["wv"]).reshape(-1, cfg.n_kv_heads, cfg.head_dim)
        q = rope(rms_norm(q, layer["q_norm"], eps), positions, cfg.layer_rope_bases[i], False)
        k = rope(rms_norm(k, layer["k_norm"], eps), positions, cfg.layer_rope_bases[i], False)
        attn, cache = cached_attention(q, k, v, cache, i, pos, scale, cfg.layer_windows[i],
                                       live)
        x = x + rms_norm(linear(attn, layer["wo"]), layer["post_attn_norm"], eps)
        h = rms_norm(x, layer["ffn_norm"], eps)
        gate = jax.nn.gelu(linear(h, layer["w_gate"]), approximate=True)
        ffn = linear(gate * linear(h, layer["w_up"]), layer["w_down"])
        x = x + rms_norm(ffn, layer["post_ffn_norm"], eps)
    return rms_norm(x, params["final_norm"], eps), cache


def logits(cfg: Gemma3Config, params: Params, hidden: jax.Array) -> jax.Array:
    """Vocabulary logits (S, vocab) float32 of final hidden states (S, d)."""
    out = linear(hidden, output_head(params))
    if cfg.final_softcap:
        out = jnp.tanh(out / cfg.final_softcap) * cfg.final_softcap
    return out
