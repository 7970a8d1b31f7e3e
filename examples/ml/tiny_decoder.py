"""A tiny synthetic decoder (2 layers, d=32, vocab 64) with stacked knobs: the fast fixture
of tests/test_ml.py and the demo of `approxcc model.py` for JAX.

    approxcc examples/ml/tiny_decoder.py -o build/tiny --target=cpu
    approxcc -S -emit-mlir examples/ml/tiny_decoder.py -o -        # its approx IR
    python examples/ml/tiny_decoder.py build/tiny        # greedy decode, JAX vs IREE

Weights are deterministic random numbers from a seed; the layers are stacked on axis 0 and
run by `lax.scan`. `decode_step` is one forward pass over a fixed-length token buffer that
returns the logits at position `pos`; `generate` is the greedy loop around it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from approxcc import approx

VOCAB, SEQ, HEADS = 64, 16, 2


def init_params(seed: int, layers: int = 2, d: int = 32, ffn: int = 64) -> dict[str, Any]:
    rng = np.random.default_rng(seed)

    def w(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) / np.sqrt(shape[-2])).astype(np.float32)

    return {
        "embed": (rng.standard_normal((VOCAB, d)) * 0.5).astype(np.float32),
        "layers": {"norm1": np.ones((layers, d), np.float32), "wqkv": w(layers, d, 3 * d),
                   "wo": w(layers, d, d), "norm2": np.ones((layers, d), np.float32),
                   "w1": w(layers, d, ffn), "w2": w(layers, ffn, d)},
        "norm_f": np.ones(d, np.float32),
        "head": w(d, VOCAB),
    }


def _rms_norm(x: jax.Array, g: jax.Array) -> jax.Array:
    return x * lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * g


def forward(params: dict[str, Any], tokens: jax.Array, pos: jax.Array) -> jax.Array:
    """Logits (1, VOCAB) of the token after position `pos` of `tokens` (1, SEQ)."""
    x = params["embed"][tokens[0]]
    seq, d = x.shape
    causal = jnp.tril(jnp.ones((seq, seq), bool))

    def layer(x: jax.Array, lw: dict[str, jax.Array]) -> tuple[jax.Array, None]:
        h = _rms_norm(x, lw["norm1"])
        q, k, v = jnp.split(h @ lw["wqkv"], 3, axis=-1)
        q, k, v = (t.reshape(seq, HEADS, d // HEADS) for t in (q, k, v))
        scores = jnp.einsum("qhd,khd->hqk", q, k) / jnp.sqrt(d / HEADS).astype(x.dtype)
        probs = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
        attn = jnp.einsum("hqk,khd->qhd", probs, v).reshape(seq, d)
        x = x + attn @ lw["wo"]
        h = _rms_norm(x, lw["norm2"])
        return x + jax.nn.gelu(h @ lw["w1"]) @ lw["w2"], None

    x, _ = lax.scan(layer, x, params["layers"])
    last = lax.dynamic_index_in_dim(_rms_norm(x, params["norm_f"]), pos, keepdims=False)
    return (last @ params["head"])[None]


PARAMS = init_params(seed=0)
SMALL_PARAMS = init_params(seed=1, d=16, ffn=32)     # the func_substitute variant's weights
PROMPT = np.array([[3, 14, 15, 9, 26, 5]], np.int32)


@approx.knob("llm", transform="func_substitute", variants=[approx.model(forward, SMALL_PARAMS)],
             state=approx.state("retrieval_score"), thresholds=1, range=(0, 100))
@approx.knob("llm_precision", transform="precision", values=["f32", "bf16"])
@approx.knob("llm_quant", transform="quantize", values=["none", "w8a8"])
def decode_step(params: dict[str, Any], tokens: jax.Array, pos: jax.Array) -> jax.Array:
    return forward(params, tokens, pos)


def _buffer(prompt: np.ndarray) -> np.ndarray:
    tokens = np.zeros((1, SEQ), np.int32)
    tokens[0, :prompt.shape[1]] = prompt[0]
    return tokens


APPROX_EXAMPLE_ARGS = {"decode_step": (PARAMS, _buffer(PROMPT), np.int32(PROMPT.shape[1] - 1))}


def generate(step: Callable[[np.ndarray, np.ndarray], Any], prompt: np.ndarray,
             new_tokens: int) -> list[int]:
    """Greedy decoding with `step(tokens, pos) -> logits`."""
    tokens, n = _buffer(prompt), prompt.shape[1]
    for _ in range(new_tokens):
        tokens[0, n] = int(np.argmax(np.asarray(step(tokens, np.int32(n - 1)))))
        n += 1
    return tokens[0, :n].tolist()


def main(build_dir: str) -> None:
    from approxcc.ml.runtime import load

    prog = load(f"{build_dir}/manifest.json")
    jitted = jax.jit(decode_step)
    for name, step in [("jax", lambda t, p: jitted(PARAMS, t, p)),
                       ("iree", prog.decode_step)]:
        start = time.perf_counter()
        out = generate(step, PROMPT, new_tokens=SEQ - PROMPT.shape[1])
        print(f"{name}: {out} ({time.perf_counter() - start:.3f} s)")


if __name__ == "__main__":
    main(sys.argv[1])
