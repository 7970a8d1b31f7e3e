"""Gemma 3 270M as a user program: its prefill and decode steps over a KV cache (18 layers,
one KV head of 256), each a decorated function with one knob, the model code that of
`workloads`. Its tied output head (262,144 x 640) is 2/3 of the bytes a token reads, so the
decode step's int8 weights pay most there.

    approxcc examples/ml/gemma3_decode.py -o build/gemma3 --target=cpu
    python examples/ml/gemma3_decode.py build/gemma3      # jax.jit vs the build

`prefill` writes a padded prompt into the cache (matrix-matrix), `decode_step` takes one
token (matrix-vector); examples/ml/kv_decoder.py has the steps and their Runner for greedy decoding.
bench/ml_user_path.py measures this build against `jax.jit` and the workloads' IREE runner.
"""

from __future__ import annotations

import sys
from typing import Any

import jax
from kv_decoder import compare, example_args, kv_decoder

from approxcc import approx

DECODER = kv_decoder("gemma3")


@approx.knob("weights", transform="quantize", values=["none", "int8", "int4-g32"])
def decode_step(params: Any, token: jax.Array, pos: jax.Array,
                *cache: jax.Array) -> tuple[jax.Array, ...]:
    return DECODER.decode(params, token, pos, *cache)


@approx.knob("prefill_weights", transform="quantize", values=["none", "w8a8"])
def prefill(params: Any, tokens: jax.Array, *cache: jax.Array) -> tuple[jax.Array, ...]:
    return DECODER.fill(params, tokens, *cache)


APPROX_EXAMPLE_ARGS = example_args(DECODER)

if __name__ == "__main__":
    compare(sys.modules[__name__], sys.argv[1])
