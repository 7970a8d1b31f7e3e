"""Decoder models as data, their static-shape step functions, and greedy decoding.

``prefill(params, cache, tokens, length)`` and ``decode_step(params, cache, token, pos)``
(from ``step_functions``) are pure functions of pytrees and int32 scalars with static
shapes: ``tokens`` is padded to a fixed length, the KV cache has a fixed ``max_len``. Both
return ``(logits[vocab] float32, cache)``, so they export with ``jax.export`` as they are.
A ``Runner`` (JAX here; an approxcc build's steps in examples/ml/kv_decoder.py) holds
compiled steps and the cache;
``greedy`` drives any runner.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import Any, Protocol

import jax
import jax.numpy as jnp
import numpy as np

from .files import models_cache
from .layers import Cache, init_cache
from .tokenizer import TextTokenizer
from .weights import Params, layer_count, output_head

DEFAULT_MAX_LEN = 256
PREFILL_BUCKET = 32

StepFn = Callable[..., tuple[jax.Array, Cache]]


@dataclass(frozen=True)
class DecoderModel:
    """A loaded model: ``arch`` is the module with ``forward``/``logits`` (``llama``,
    ``gemma3``); ``config`` a frozen dataclass aligned with ``params["layers"]``."""

    name: str
    arch: ModuleType
    config: Any
    params: Params
    tokenizer: TextTokenizer
    # Token ids of the output rows when the vocabulary is restricted (``restrict_vocab``).
    vocab_ids: np.ndarray | None = None

    def with_params(self, params: Params) -> DecoderModel:
        """The same model with rewritten weights (cast, quantized, stacked)."""
        return dataclasses.replace(self, params=params)

    def full_logits(self, logits: np.ndarray) -> np.ndarray:
        """Logits over the whole vocabulary: tokens outside a restricted one get -inf."""
        if self.vocab_ids is None:
            return logits
        out = np.full(self.config.vocab_size, -np.inf, np.float32)
        out[self.vocab_ids] = logits
        return out

    def new_cache(self, max_len: int = DEFAULT_MAX_LEN) -> Cache:
        n_layers = layer_count(self.params["layers"])
        return init_cache(n_layers, max_len, self.config.n_kv_heads, self.config.head_dim)


def skip_layers(model: DecoderModel, drop: set[int] | frozenset[int]) -> DecoderModel:
    """``model`` without the layers in ``drop`` (task skipping); per-layer config tuples
    (Gemma's windows and RoPE bases) follow."""
    layers = model.params["layers"]
    if not isinstance(layers, list):
        raise ValueError("skip_layers needs params['layers'] as a list (unstacked)")
    keep = [i for i in range(len(layers)) if i not in drop]
    changes: dict[str, Any] = {"n_layers": len(keep)}
    for f in dataclasses.fields(model.config):
        value = getattr(model.config, f.name)
        if isinstance(value, tuple) and len(value) == len(layers):
            changes[f.name] = tuple(value[i] for i in keep)
    params = {**model.params, "layers": [layers[i] for i in keep]}
    return dataclasses.replace(model, config=dataclasses.replace(model.config, **changes),
                               params=params)


def restrict_vocab(model: DecoderModel, token_ids: np.ndarray) -> DecoderModel:
    """``model`` whose output head computes only the logits of ``token_ids`` (the head is
    most of a small model's bytes per token: Gemma 3 270M's 262,144 rows are 2/3 of them).
    ``full_logits`` puts them back in vocabulary order."""
    ids = np.unique(np.asarray(token_ids, np.int64))
    head = np.asarray(output_head(model.params))[ids]
    return dataclasses.replace(model, params={**model.params, "output": head}, vocab_ids=ids)


def frequent_tokens(model: DecoderModel, texts: list[str], n: int) -> np.ndarray:
    """The ``n`` token ids most frequent in ``texts``, plus the tokenizer's special ones."""
    counts = np.zeros(model.config.vocab_size, np.int64)
    for enc in model.tokenizer.tokenizer.encode_batch(texts, add_special_tokens=False):
        np.add.at(counts, enc.ids, 1)
    special = [i for i in (model.tokenizer.bos_id, model.tokenizer.eos_id,
                           *model.tokenizer.stop_ids) if i is not None]
    return np.union1d(np.argsort(-counts, kind="stable")[:n], special)


def attention_window(model: DecoderModel, window: int) -> DecoderModel:
    """``model`` whose every layer attends to the last ``window`` positions only (Gemma's
    sliding layers keep a smaller window of their own)."""
    windows = getattr(model.config, "layer_windows", None)
    if windows is None:
        raise ValueError(f"{model.name} has no per-layer attention windows")
    narrowed = tuple(min(w, window) if w else window for w in windows)
    return dataclasses.replace(model, config=dataclasses.replace(model.config,
                                                                 layer_windows=narrowed))


def step_functions(arch: ModuleType, config: Any) -> tuple[StepFn, StepFn]:
    """``(prefill, decode_step)`` for one architecture and config (pure, unjitted)."""

    def prefill(
        params: Params, cache: Cache, tokens: jax.Array, length: jax.Array
    ) -> tuple[jax.Array, Cache]:
        # pos 0 as a Python int: the prompt attends to itself only (layers.cached_attention)
        hidden, cache = arch.forward(config, params, cache, tokens, 0)
        last = jax.lax.dynamic_slice_in_dim(hidden, length - 1, 1)
        return arch.logits(config, params, last)[0], cache

    def decode_step(
        params: Params, cache: Cache, token: jax.Array, pos: jax.Array,
        live: jax.Array | None = None,
    ) -> tuple[jax.Array, Cache]:
        # `live`: an array whose length is how many cache positions to read (past `pos`)
        hidden, cache = arch.forward(config, params, cache, token.reshape(1), pos,
                                     None if live is None else live.shape[0])
        return arch.logits(config, params, hidden)[0], cache

    return prefill, decode_step


def persist_compilations() -> None:
    """Keep XLA's executables under the models cache, as the vmfbs are: XLA-CPU spends about
    7 s of CPU compiling SmolLM2's decode step and 0.4 s reading it back. A directory the
    process already set is kept."""
    if jax.config.jax_compilation_cache_dir is None:
        jax.config.update("jax_compilation_cache_dir", str(models_cache() / "xla"))


@lru_cache(maxsize=16)
def _jitted(arch: ModuleType, config: Any) -> tuple[StepFn, StepFn]:
    persist_compilations()
    prefill, decode_step = step_functions(arch, config)
    return jax.jit(prefill, donate_argnums=1), jax.jit(decode_step, donate_argnums=1)


def prefill_length(n_prompt: int, max_len: int) -> int:
    """Static padded prompt length: ``n_prompt`` rounded up to ``PREFILL_BUCKET``."""
    padded = -(-n_prompt // PREFILL_BUCKET) * PREFILL_BUCKET
    if padded > max_len:
        raise ValueError(f"prompt of {n_prompt} tokens does not fit max_len {max_len}")
    return padded


def pad_prompt(ids: list[int], length: int) -> np.ndarray:
    out = np.zeros(length, np.int32)
    out[: len(ids)] = ids
    return out


class Runner(Protocol):
    """A compiled model with its own KV cache, fed one sequence at a time."""

    max_len: int

    def prefill(self, ids: list[int]) -> np.ndarray: ...

    def decode(self, token: int, pos: int) -> np.ndarray: ...


class JaxRunner:
    """Steps jitted by XLA-CPU; weights are device arrays."""

    def __init__(self, model: DecoderModel, max_len: int = DEFAULT_MAX_LEN) -> None:
        self.model = model
        self.max_len = max_len
        self.params = jax.device_put(model.params)
        self._prefill, self._decode = _jitted(model.arch, model.config)
        self.cache: Cache = {}

    def prefill(self, ids: list[int]) -> np.ndarray:
        tokens = pad_prompt(ids, prefill_length(len(ids), self.max_len))
        self.cache = self.model.new_cache(self.max_len)
        logits, self.cache = self._prefill(self.params, self.cache, tokens, np.int32(len(ids)))
        return self.model.full_logits(np.asarray(logits))

    def decode(self, token: int, pos: int) -> np.ndarray:
        logits, self.cache = self._decode(self.params, self.cache, np.int32(token), np.int32(pos))
        return self.model.full_logits(np.asarray(logits))


@dataclass
class Generation:
    ids: list[int]
    text: str
    prefill_s: float
    step_s: list[float]

    @property
    def ms_per_token(self) -> float:
        """Median decode-step time (the first step, which may compile, excluded)."""
        steps = self.step_s[1:] or self.step_s
        return float(np.median(steps)) * 1e3 if steps else float("nan")


def greedy(
    runner: Runner,
    tokenizer: TextTokenizer,
    prompt_ids: list[int],
    max_new_tokens: int,
    stop: bool = True,
) -> Generation:
    """Greedy decoding until a stop token (unless ``stop`` is false) or ``max_new_tokens``."""
    if len(prompt_ids) + max_new_tokens > runner.max_len:
        raise ValueError("prompt plus new tokens exceed the runner's max_len")
    t0 = time.perf_counter()
    logits = runner.prefill(prompt_ids)
    prefill_s = time.perf_counter() - t0
    out: list[int] = []
    steps: list[float] = []
    pos = len(prompt_ids)
    for _ in range(max_new_tokens):
        token = int(np.argmax(logits))
        if stop and token in tokenizer.stop_ids:
            break
        out.append(token)
        if len(out) == max_new_tokens:
            break
        t0 = time.perf_counter()
        logits = runner.decode(token, pos)
        steps.append(time.perf_counter() - t0)
        pos += 1
    return Generation(out, tokenizer.decode(out), prefill_s, steps)


def prompt_ids(model: DecoderModel, text: str, chat: bool | None = None) -> list[int]:
    """Token ids of ``text``: wrapped in the chat template when the model has one (or
    ``chat``), else a completion prompt with the model's BOS convention."""
    tok = model.tokenizer
    use_chat = bool(tok.chat_template) if chat is None else chat
    if use_chat:
        return tok.encode(tok.apply_chat_template([{"role": "user", "content": text}]))
    return tok.encode(text)


def generate(
    model: DecoderModel, text: str, max_new_tokens: int = 24, max_len: int = DEFAULT_MAX_LEN
) -> Generation:
    """Greedy completion of ``text`` in JAX."""
    return greedy(JaxRunner(model, max_len), model.tokenizer, prompt_ids(model, text),
                  max_new_tokens)


def nll(model: DecoderModel, ids: list[int]) -> float:
    """Mean next-token negative log-likelihood (nats) of ``ids`` in one forward pass. With a
    restricted vocabulary, over the targets inside it (``coverage`` says how many are)."""
    persist_compilations()
    tokens = np.asarray(ids, np.int32)
    rows, keep = _target_rows(model, tokens[1:])

    @jax.jit
    def run(params: Params, tokens: jax.Array, rows: jax.Array, keep: jax.Array) -> jax.Array:
        cache = init_cache(layer_count(params["layers"]), tokens.shape[0],
                           model.config.n_kv_heads, model.config.head_dim)
        hidden, _ = model.arch.forward(model.config, params, cache, tokens, 0)
        logp = jax.nn.log_softmax(model.arch.logits(model.config, params, hidden[:-1]))
        picked = jnp.take_along_axis(logp, rows[:, None], axis=-1)[:, 0]
        return -jnp.sum(jnp.where(keep, picked, 0.0)) / jnp.maximum(jnp.sum(keep), 1)

    return float(run(model.params, tokens, rows, keep))


def coverage(model: DecoderModel, ids: list[int]) -> float:
    """Share of the next-token targets of ``ids`` inside the model's output vocabulary."""
    return float(np.mean(_target_rows(model, np.asarray(ids[1:], np.int32))[1]))


def _target_rows(model: DecoderModel, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Output-head rows of ``targets`` and whether each has one."""
    if model.vocab_ids is None:
        return targets, np.ones(len(targets), bool)
    rows = np.clip(np.searchsorted(model.vocab_ids, targets), 0, len(model.vocab_ids) - 1)
    return rows.astype(np.int32), model.vocab_ids[rows] == targets
