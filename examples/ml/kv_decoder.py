"""What the decorated real-model examples (gemma3_decode.py, smollm2_decode.py) share: a
`workloads` model's prefill and decode steps over a KV cache, and the two as a Runner.

The cache is one array a layer and kind, (MAX_LEN, kv_heads, head_dim) each, passed in and
out of each step as separate inputs and outputs (keys of every layer, then values):
`prog.fn.on_device` keeps them on the device from one call to the next, and a step rewrites
only its own rows of each (one stacked array would be copied whole at every layer's
update). A prompt goes through `prefill` (matrix-matrix: every token but the last, padded to
`PREFILL_LEN`, written into the cache; no logits) and then one `decode_step` for its last
token, as workloads/models/iree_decode.py does (`Steps`: the two as a workloads Runner);
positions past the prompt hold padding until a later step overwrites them, before any query
can see them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from workloads.models import DecoderModel, load_model
from workloads.models.decode import greedy, pad_prompt, step_functions
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
        """Keys and values, float32 whatever the variant's compute dtype (a `precision`
        variant casts its float inputs; the model writes float32 keys and values)."""
        n = len(cache) // 2
        cache = tuple(jnp.asarray(c, self.cache[0].dtype) for c in cache)
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



@dataclass
class Steps:
    """A build's (or jax.jit's) prefill and decode steps as a `workloads` Runner, which keeps
    its own cache: what `workloads.models.decode.greedy` decodes with."""

    decoder: KVDecoder
    fill: FillStep
    step: DecodeStep
    max_len: int = MAX_LEN
    cache: tuple[Any, ...] = ()

    def prefill(self, ids: list[int]) -> np.ndarray:
        """The cache filled with the prompt but its last token, then a decode step of it."""
        self.cache = self.fill(self.decoder.prompt(ids), *self.decoder.cache)
        return self.decode(ids[-1], len(ids) - 1)

    def decode(self, token: int, pos: int) -> np.ndarray:
        logits, *cache = self.step(np.int32(token), np.int32(pos), *self.cache)
        self.cache = tuple(cache)
        return np.asarray(logits).reshape(-1)


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
        g = greedy(Steps(dec, f, s), dec.model.tokenizer, ids, 16, stop=False)
        print(f"{name}: prefill {g.prefill_s * 1000:.0f} ms, {g.ms_per_token:.1f} ms/token "
              f"{g.text!r}")
