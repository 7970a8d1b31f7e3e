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

import jax
import jax.numpy as jnp
import numpy as np

from .gguf_loader import GGUFFile, Tensor
from .layers import Cache, cached_attention, rms_norm, rope
from .weights import Params, embed_rows, iter_layers, linear

_LAYER_TENSORS = {
    "attn_norm": "attn_norm", "wq": "attn_q", "wk": "attn_k", "wv": "attn_v",
    "wo": "attn_output", "ffn_norm": "ffn_norm", "w_gate": "ffn_gate", "w_up": "ffn_up",
    "w_down": "ffn_down",
}


@dataclass(frozen=True)
class LlamaConfig:
    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    ffn_dim: int
    vocab_size: int
    norm_eps: float
    rope_base: float
    context_length: int
    tied_embeddings: bool


def config_from_gguf(g: GGUFFile) -> LlamaConfig:
    d = int(g.get(".embedding_length"))
    heads = int(g.get(".attention.head_count"))
    return LlamaConfig(
        n_layers=int(g.get(".block_count")),
        d_model=d,
        n_heads=heads,
        n_kv_heads=int(g.get(".attention.head_count_kv", heads)),
        head_dim=int(g.get(".rope.dimension_count", d // heads)),
        ffn_dim=int(g.get(".feed_forward_length")),
        vocab_size=int(g.get(".vocab_size", len(g.array("tokenizer.ggml.tokens") or []))),
        norm_eps=float(g.get(".attention.layer_norm_rms_epsilon")),
        rope_base=float(g.get(".rope.freq_base", 10000.0)),
        context_length=int(g.get(".context_length")),
        tied_embeddings="output.weight" not in g.tensor_names(),
    )


def params_from_tensors(cfg: LlamaConfig, tensors: dict[str, Tensor]) -> Params:
    params: Params = {
        "embed": tensors["token_embd.weight"],
        "final_norm": tensors["output_norm.weight"],
        "layers": [
            {key: tensors[f"blk.{i}.{name}.weight"] for key, name in _LAYER_TENSORS.items()}
            for i in range(cfg.n_layers)
        ],
    }
    if not cfg.tied_embeddings:
        params["output"] = tensors["output.weight"]
    return params


def forward(
    cfg: LlamaConfig, params: Params, cache: Cache, tokens: jax.Array, pos: jax.Array
) -> tuple[jax.Array, Cache]:
    """Hidden states (S, d) after the final norm for ``tokens`` (S,) at ``pos..pos+S-1``."""
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
        attn, cache = cached_attention(q, k, v, cache, i, pos, scale)
        x = x + linear(attn, layer["wo"])
        h = rms_norm(x, layer["ffn_norm"], cfg.norm_eps)
        gated = jax.nn.silu(linear(h, layer["w_gate"])) * linear(h, layer["w_up"])
        x = x + linear(gated, layer["w_down"])
    return rms_norm(x, params["final_norm"], cfg.norm_eps), cache


def logits(cfg: LlamaConfig, params: Params, hidden: jax.Array) -> jax.Array:
    """Vocabulary logits (S, vocab) float32 of final hidden states (S, d)."""
    return linear(hidden, params["embed"] if cfg.tied_embeddings else params["output"])
