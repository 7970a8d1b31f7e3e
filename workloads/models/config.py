"""What every decoder architecture's config holds, read once from GGUF metadata.

An architecture module (``llama``, ``gemma3``) subclasses ``DecoderConfig`` with its own
fields and builds it from ``decoder_fields(g)`` plus those; its params pytree comes from
``gguf_params`` with its table of per-layer tensor names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .gguf_file import GGUFFile, Tensor
from .weights import Params


@dataclass(frozen=True)
class DecoderConfig:
    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    ffn_dim: int
    vocab_size: int
    norm_eps: float
    context_length: int


def decoder_fields(g: GGUFFile) -> dict[str, Any]:
    """The ``DecoderConfig`` fields of a GGUF file's ``{architecture}.*`` metadata."""
    d = int(g.get(".embedding_length"))
    heads = int(g.get(".attention.head_count"))
    return {
        "n_layers": int(g.get(".block_count")),
        "d_model": d,
        "n_heads": heads,
        "n_kv_heads": int(g.get(".attention.head_count_kv", heads)),
        "head_dim": int(g.get(".attention.key_length", g.get(".rope.dimension_count",
                                                             d // heads))),
        "ffn_dim": int(g.get(".feed_forward_length")),
        "vocab_size": int(g.get(".vocab_size", len(g.array("tokenizer.ggml.tokens") or []))),
        "norm_eps": float(g.get(".attention.layer_norm_rms_epsilon")),
        "context_length": int(g.get(".context_length")),
    }


def gguf_params(cfg: DecoderConfig, tensors: dict[str, Tensor],
                layer_tensors: dict[str, str]) -> Params:
    """``{"embed", "final_norm", "layers": [...]}`` (plus ``"output"`` when the file has an
    untied output head); ``layer_tensors`` maps a params key to its GGUF ``blk.N.`` name."""
    params: Params = {
        "embed": tensors["token_embd.weight"],
        "final_norm": tensors["output_norm.weight"],
        "layers": [
            {key: tensors[f"blk.{i}.{name}.weight"] for key, name in layer_tensors.items()}
            for i in range(cfg.n_layers)
        ],
    }
    if "output.weight" in tensors:
        params["output"] = tensors["output.weight"]
    return params
