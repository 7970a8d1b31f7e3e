"""SmolLM2-135M's decode step (KV cache) as a user program: the model code of `workloads`,
one `@approx.knob`, built by the driver like any model.

    approxcc examples/ml/smollm2_decode.py -o build/smollm2 --target=cpu
    python examples/ml/smollm2_decode.py build/smollm2      # ms/token: jax.jit vs the build

The cache travels as two arrays (layers, MAX_LEN, kv_heads, head_dim) in and out of the
step; `prog.decode_step.on_device` keeps them on the device from one step to the next (only
the logits come to the host). The weights are IREE parameters, loaded once.
bench/ml_user_path.py measures this build against `jax.jit` and the workloads' IREE runner.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from approxcc import approx
from workloads.models import load_model
from workloads.models.decode import step_functions
from workloads.models.weights import linear_mode

MAX_LEN = 64
MODEL = load_model("smollm2")
_, _STEP = step_functions(MODEL.arch, MODEL.config)
_CACHE = MODEL.new_cache(MAX_LEN)
K0 = np.stack([np.asarray(a) for a in _CACHE["k"]])
V0 = np.stack([np.asarray(a) for a in _CACHE["v"]])


@approx.knob("weights", transform="quantize", values=["none", "int8"])
def decode_step(params: Any, k: jax.Array, v: jax.Array, token: jax.Array,
                pos: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Logits of the token after `token` at position `pos`, and the updated cache."""
    cache = {"k": list(k), "v": list(v)}
    with linear_mode("dot"):   # matmuls as dot_general: IREE's data-tiled CPU matvec
        logits, cache = _STEP(params, cache, token, pos)
    return logits, jnp.stack(cache["k"]), jnp.stack(cache["v"])


APPROX_EXAMPLE_ARGS = {"decode_step": (MODEL.params, K0, V0, np.int32(0), np.int32(0))}


def ms_per_token(step: Any, ids: list[int], new_tokens: int) -> tuple[list[int], float]:
    """Greedy decoding, the prompt fed token by token; ms per generated token. `step` returns
    the logits and the cache, which it takes back as it gave it (device arrays or not)."""
    k, v, out = K0, V0, list(ids)
    for pos, token in enumerate(ids[:-1]):
        _, k, v = step(k, v, np.int32(token), np.int32(pos))
    start = time.perf_counter()
    for pos in range(len(ids) - 1, len(ids) - 1 + new_tokens):
        logits, k, v = step(k, v, np.int32(out[-1]), np.int32(pos))
        out.append(int(np.argmax(np.asarray(logits))))
    return out, (time.perf_counter() - start) * 1000 / new_tokens


def main(build_dir: str) -> None:
    from approxcc.ml.runtime import load

    ids = MODEL.tokenizer.encode("The capital of France is")
    jitted = jax.jit(decode_step)
    params = jax.device_put(MODEL.params)
    prog = load(f"{build_dir}/manifest.json")
    out, ms = ms_per_token(lambda k, v, t, p: jitted(params, k, v, t, p), ids, 16)
    print(f"jax.jit: {ms:.1f} ms/token {MODEL.tokenizer.decode(out[len(ids):])!r}")
    for value, label in enumerate(["none", "int8"]):
        prog.configure({"approxcc": "1", "knobs": {"weights": {"value": value}}})
        out, ms = ms_per_token(prog.decode_step.on_device, ids, 16)
        print(f"approxcc weights={label}: {ms:.1f} ms/token "
              f"{MODEL.tokenizer.decode(out[len(ids):])!r}")


if __name__ == "__main__":
    main(sys.argv[1])
