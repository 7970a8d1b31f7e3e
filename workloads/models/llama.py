"""SmolLM2-135M (GGUF ``llama`` architecture) in plain JAX.

Params pytree (every leaf a ``weights.Weight``; matrices ``(out, in)``)::

    {"embed": (vocab, d),                 # tied: also the output projection
     "final_norm": (d,),
     "layers": [ {"attn_norm": (d,), "wq": (H*hd, d), "wk": (KV*hd, d), "wv": (KV*hd, d),
                  "wo": (d, H*hd), "ffn_norm": (d,), "w_gate": (ffn, d), "w_up": (ffn, d),
                  "w_down": (d, ffn)}, ... ]}   # or the same dict stacked on a layer axis

``forward(cfg, params, cache, tokens, pos)`` runs every entry of ``params["layers"]`` in
order, so dropping entries (with ``cfg.n_layers`` updated) skips layers.
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

# params key of a layer's weight -> its GGUF tensor name (``blk.N.<name>.weight``)
LAYER_TENSORS = {
    "attn_norm": "attn_norm", "wq": "attn_q", "wk": "attn_k", "wv": "attn_v",
    "wo": "attn_output", "ffn_norm": "ffn_norm", "w_gate": "ffn_gate", "w_up": "ffn_up",
    "w_down": "ffn_down",
}


@dataclass(frozen=True)
class LlamaConfig(DecoderConfig):
    rope_base: float


def config_from_gguf(g: GGUFFile) -> LlamaConfig:
    return LlamaConfig(
        **decoder_fields(g),
        rope_base=float(g.get(".rope.freq_base", 10000.0)),
    )


def forward(
    cfg: LlamaConfig, params: Params, cache: Cache, tokens: jax.Array, pos: jax.Array | int,
    live: Any = None,
) -> tuple[jax.Array, Cache]:
    """Hidden states (S, d) after the final norm for ``tokens`` (S,) at ``pos..pos+S-1``
    (``live``: the cache positions a decode step reads, ``cached_attention``)."""
    positions = pos + jnp.arange(tokens.shape[0], dtype=jnp.int32)
    x = embed_rows(params["embed"], tokens)
    scale = 1.0 / float(np.sqrt(cfg.head_dim))
    for i, layer in enumerate(iter_layers(params["layers"])):
        h = rms_norm(x, layer["attn_norm"], cfg.norm_eps)
        q = linear(h, layer["wq"]).reshape(-1, cfg.n_heads, cfg.head_dim)
        k = linear(h, layer["wk"]).reshape(-1, cfg.n_kv_heads, cfg.head_dim)
        v = linear(h, layer["wv"]).reshape(-1, cfg.n_kv_heads, cfg.head_dim)
        q = rope(q, positions, cfg.rope_base, interleaved=True)
        k = rope(k, positions, cfg.rope_base, interleaved=True)
        attn, cache = cached_attention(q, k, v, cache, i, pos, scale, live=live)
        x = x + linear(attn, layer["wo"])
        h = rms_norm(x, layer["ffn_norm"], cfg.norm_eps)
        gated = jax.nn.silu(linear(h, layer["w_gate"])) * linear(h, layer["w_up"])
        x = x + linear(gated, layer["w_down"])
    return rms_norm(x, params["final_norm"], cfg.norm_eps), cache


def logits(cfg: LlamaConfig, params: Params, hidden: jax.Array) -> jax.Array:
    """Vocabulary logits (S, vocab) float32 of final hidden states (S, d)."""
    return linear(hidden, output_head(params))
