"""What the decorated real-model examples (gemma3_decode.py, smollm2_decode.py) share: a
`workloads` model's prefill and decode steps over a KV cache, and greedy decoding with them.

The cache is one array a layer and kind, (MAX_LEN, kv_heads, head_dim) each, passed in and
out of each step as separate inputs and outputs (keys of every layer, then values):
`prog.fn.on_device` keeps them on the device from one call to the next, and a step rewrites
only its own rows of each (one stacked array would be copied whole at every layer's
update). A prompt goes through `prefill` (matrix-matrix: every token but the last, padded to
`PREFILL_LEN`, written into the cache; no logits) and then one `decode_step` for its last
token, as workloads/models/iree_decode.py does; positions past the prompt hold padding
until a later step overwrites them, before any query can see them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from workloads.models import DecoderModel, load_model
from workloads.models.decode import pad_prompt, step_functions
from workloads.models.weights import linear_mode

MAX_LEN = 256
PREFILL_LEN = 128

# (token, pos, *cache) -> (logits, *cache); and (tokens, *cache) -> cache
DecodeStep = Callable[..., tuple[Any, ...]]
FillStep = Callable[..., tuple[Any, ...]]


@dataclass(frozen=True)
class KVDecoder:
    model: DecoderModel
    cache: tuple[np.ndarray, ...]    # the empty cache: keys of every layer, then values

    def _split(self, cache: tuple[Any, ...]) -> dict[str, list[Any]]:
        n = len(cache) // 2
        return {"k": list(cache[:n]), "v": list(cache[n:])}

    def decode(self, params: Any, token: jax.Array, pos: jax.Array,
               *cache: jax.Array) -> tuple[jax.Array, ...]:
        """Logits of the token after `token` at `pos`, and the updated cache."""
        _, step = step_functions(self.model.arch, self.model.config)
        with linear_mode("dot"):   # matmuls as dot_general: IREE's data-tiled CPU kernels
            logits, new = step(params, self._split(cache), token, pos)
        return (logits, *new["k"], *new["v"])

    def fill(self, params: Any, tokens: jax.Array, *cache: jax.Array) -> tuple[jax.Array, ...]:
        """The cache with the keys and values of `tokens` at positions 0.. (the prompt
        attends to itself only: position 0 is static)."""
        model = self.model
        with linear_mode("dot"):
            _, new = model.arch.forward(model.config, params, self._split(cache), tokens, 0)
        return (*new["k"], *new["v"])

    @property
    def prefill_len(self) -> int:
        return PREFILL_LEN

    def prompt(self, ids: list[int]) -> np.ndarray:
        """All tokens of the prompt `ids` but the last, padded to PREFILL_LEN."""
        if not 1 < len(ids) <= PREFILL_LEN + 1:
            raise ValueError(f"a prompt of 2..{PREFILL_LEN + 1} tokens, not {len(ids)}")
        return pad_prompt(ids[:-1], PREFILL_LEN)

    def generate(self, fill: FillStep, step: DecodeStep, ids: list[int],
                 new_tokens: int) -> tuple[list[int], float, float]:
        """Greedy decoding: the new tokens, prefill seconds, decode ms per token."""
        start = time.perf_counter()
        cache = fill(self.prompt(ids), *self.cache)
        logits, *cache = step(np.int32(ids[-1]), np.int32(len(ids) - 1), *cache)
        out = [int(np.argmax(np.asarray(logits)))]
        prefill_s = time.perf_counter() - start
        start = time.perf_counter()
        for pos in range(len(ids), len(ids) + new_tokens - 1):
            logits, *cache = step(np.int32(out[-1]), np.int32(pos), *cache)
            out.append(int(np.argmax(np.asarray(logits))))
        return out, prefill_s, (time.perf_counter() - start) * 1000 / max(new_tokens - 1, 1)


def kv_decoder(name: str) -> KVDecoder:
    model = load_model(name)
    empty = model.new_cache(MAX_LEN)
    return KVDecoder(model, tuple(np.asarray(a) for a in (*empty["k"], *empty["v"])))


def example_args(dec: KVDecoder) -> dict[str, tuple[Any, ...]]:
    """APPROX_EXAMPLE_ARGS of `decode_step` and `prefill`."""
    return {"decode_step": (dec.model.params, np.int32(0), np.int32(0), *dec.cache),
            "prefill": (dec.model.params, np.zeros(PREFILL_LEN, np.int32), *dec.cache)}


def compare(example: Any, build_dir: str, text: str = "The capital of France is") -> None:
    """`python examples/ml/<model>_decode.py BUILD`: jax.jit vs every variant of the build."""
    from approxcc.ml.runtime import load

    dec: KVDecoder = example.DECODER
    ids = dec.model.tokenizer.encode(text)
    params = jax.device_put(dec.model.params)
    step, fill = jax.jit(example.decode_step), jax.jit(example.prefill)
    runs = {"jax.jit": (lambda *a: fill(params, *a), lambda *a: step(params, *a))}
    prog = load(f"{build_dir}/manifest.json")
    runs["approxcc exact"] = (prog.prefill.on_device, prog.decode_step.on_device)
    for name, (f, s) in runs.items():
        out, prefill_s, ms = dec.generate(f, s, ids, 16)
        print(f"{name}: prefill {prefill_s * 1000:.0f} ms, {ms:.1f} ms/token "
              f"{dec.model.tokenizer.decode(out)!r}")
