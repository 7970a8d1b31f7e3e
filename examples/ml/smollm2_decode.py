"""SmolLM2-135M as a user program: its prefill and decode steps over a KV cache (30 layers,
three KV heads of 64), decorated functions with knobs, the model code that of `workloads`
(llama architecture).

    approxcc examples/ml/smollm2_decode.py -o build/smollm2 --target=cpu
    python examples/ml/smollm2_decode.py build/smollm2      # jax.jit vs the build

`prefill` and `prefill_long` write a padded prompt of up to 128 / 512 tokens into the cache
(matrix-matrix), `decode_step` takes one token (matrix-vector); examples/ml/kv_decoder.py
has the steps and their Runner for greedy decoding. `make bench-ml` (bench/ml_decode.py)
measures every variant of this build against `jax.jit`.
"""

from __future__ import annotations

import sys
from typing import Any

import jax
from kv_decoder import compare, example_args, kv_decoder

from approxcc import approx

DECODER = kv_decoder("smollm2")


@approx.knob("weights", transform="quantize", values=["none", "int8", "int4-g32", "w8a8",
                                                         "w8a16", "w4a16", "w4a16-mixed"])
@approx.knob("precision", transform="precision", values=["f32", "bf16", "f16"])
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
