"""Gemma 3 270M as a user program: its prefill and decode steps over a KV cache (18 layers,
one KV head of 256), decorated functions with knobs, the model code that of `workloads`.
Its tied output head (262,144 x 640) is 2/3 of the bytes a token reads, so the decode step's
knobs cut there: narrow weights (`weights`, `precision`), and a head over the 16,384 tokens
most frequent in Wikipedia summaries (`vocab`, a substitute decode step with its own
weights; a token outside them can no longer be produced).

    approxcc examples/ml/gemma3_decode.py -o build/gemma3 --target=cpu
    python examples/ml/gemma3_decode.py build/gemma3      # jax.jit vs the build

`prefill` and `prefill_long` write a padded prompt of up to 128 / 512 tokens into the cache
(matrix-matrix), `decode_step` takes one token (matrix-vector); examples/ml/kv_decoder.py
has the steps and their Runner for greedy decoding. `make bench-ml` (bench/ml_decode.py)
measures every variant of this build against `jax.jit`.
"""

from __future__ import annotations

import sys
from typing import Any

import jax
from kv_decoder import compare, example_args, kv_decoder, shortlist

from approxcc import approx

DECODER = kv_decoder("gemma3")
SHORT_HEAD = DECODER.restrict_params(shortlist(DECODER.model))


@approx.knob("vocab", transform="func_substitute",
             variants=[approx.model(DECODER.restricted, SHORT_HEAD)])
@approx.knob("weights", transform="quantize", values=["none", "w8a8", "w8a16", "w4a16",
                                                         "w4a16-mixed"])
@approx.knob("precision", transform="precision", values=["f32", "bf16"])
def decode_step(params: Any, token: jax.Array, pos: jax.Array, live: jax.Array,
                *cache: jax.Array) -> tuple[jax.Array, ...]:
    return DECODER.decode(params, token, pos, live, *cache)


@approx.knob("prefill_weights", transform="quantize", values=["none", "w8a8"])
@approx.knob("prefill_precision", transform="precision", values=["f32", "bf16"])
def prefill(params: Any, tokens: jax.Array, *cache: jax.Array) -> tuple[jax.Array, ...]:
    return DECODER.fill(params, tokens, *cache)


@approx.knob("prefill_long_weights", transform="quantize", values=["none", "w8a8"])
@approx.knob("prefill_long_precision", transform="precision", values=["f32", "bf16"])
def prefill_long(params: Any, tokens: jax.Array, *cache: jax.Array) -> tuple[jax.Array, ...]:
    return DECODER.fill(params, tokens, *cache)


APPROX_EXAMPLE_ARGS = example_args(DECODER)

if __name__ == "__main__":
    compare(sys.modules[__name__], sys.argv[1])
