"""What the decorated real-model examples (gemma3_decode.py, smollm2_decode.py) share: a
`workloads` model's prefill and decode steps over a KV cache, and the two as a Runner.

The cache is one array a layer and kind, (kv_heads, MAX_LEN, head_dim) each, passed in and
out of each step as separate inputs and outputs (keys of every layer, then values):
`prog.fn.on_device` keeps them on the device from one call to the next, and a step rewrites
only its own rows of each (one stacked array would be copied whole at every layer's
update). A decode step also takes `live`, an int8 array of symbolic length (`live_input`)
whose length is how many cache positions its attention reads (`live_positions`: past the
position, a multiple of LIVE_BLOCK). A prompt goes through a prefill step (matrix-matrix:
every token but the last, padded to the step's length, written into the cache; no logits)
and then one `decode_step` for its last token (`Steps`: the steps as a workloads Runner;
`CachedStep`: a decode step alone). Two prefill steps, one a prompt length (`PREFILL_LENS`:
`prefill` for 128 tokens, `prefill_long` for 512), each compiled for its fixed shape; a prompt
takes the shortest that holds it. Positions past the prompt hold padding until a later
step overwrites them, before any query can see them.

`shortlist(model)`: the tokens a restricted output vocabulary keeps (the frequent tokens of
Wikipedia summaries); `restricted(decoder, ids)`: a decode step over that head, its logits
scattered back into the whole vocabulary (-inf elsewhere), a `func_substitute` variant.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from workloads.models import DecoderModel, load_model
from workloads.models.decode import (
    frequent_tokens,
    greedy,
    pad_prompt,
    restrict_vocab,
    step_functions,
)

MAX_LEN = 640                   # a 512-token prompt and its answer
PREFILL_LENS = {"prefill": 128, "prefill_long": 512}
SHORTLIST = 16384               # frequent tokens a restricted vocabulary keeps
LIVE_BLOCK = 64                 # a decode step's cache reads, in positions (`live_positions`)

# (token, pos, live, *cache) -> (logits, *cache); and (tokens, *cache) -> cache
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

    def decode(self, params: Any, token: jax.Array, pos: jax.Array, live: jax.Array,
               *cache: jax.Array) -> tuple[jax.Array, ...]:
        """Logits of the token after `token` at `pos`, and the updated cache; attention reads
        the first `len(live)` cache positions (`live_positions`; exported as a symbolic
        dimension: one build for every length)."""
        _, step = step_functions(self.model.arch, self.model.config)
        logits, new = step(params, self._split(cache), token, pos, live)
        return (logits, *new["k"], *new["v"])

    def fill(self, params: Any, tokens: jax.Array, *cache: jax.Array) -> tuple[jax.Array, ...]:
        """The cache with the keys and values of `tokens` at positions 0.. (the prompt
        attends to itself only: position 0 is static)."""
        model = self.model
        _, new = model.arch.forward(model.config, params, self._split(cache), tokens, 0)
        return (*new["k"], *new["v"])

    def restricted(self, params: Any, token: jax.Array, pos: jax.Array, live: jax.Array,
                   *cache: jax.Array) -> tuple[jax.Array, ...]:
        """`decode` over `params` whose "output" head holds some rows only
        (`restrict_params`): the logits of the others are -inf. Each token's logit is
        gathered through `params["head_row"]` (its row in the head, -1 if none): a scatter
        of the short logits into the vocabulary keeps them on the stack, over llvm-cpu's
        limit under the weight-only variants' fusion."""
        rows = params["head_row"]
        logits, *new = self.decode({k: v for k, v in params.items() if k != "head_row"},
                                   token, pos, live, *cache)
        full = jnp.where(rows >= 0, jnp.take(logits, jnp.maximum(rows, 0), axis=-1), -jnp.inf)
        return (full.astype(logits.dtype), *new)

    def restrict_params(self, ids: np.ndarray) -> Any:
        """The weights of `restricted`: the output head cut to the rows `ids`."""
        small = restrict_vocab(self.model, ids)
        head_row = np.full(self.model.config.vocab_size, -1, np.int32)
        head_row[small.vocab_ids] = np.arange(len(small.vocab_ids))
        return {**small.params, "head_row": head_row}


def prefill_name(n: int) -> str:
    """The prefill step for a prompt of `n` tokens (its last goes through a decode step)."""
    for name, length in sorted(PREFILL_LENS.items(), key=lambda kv: kv[1]):
        if 1 < n <= length + 1:
            return name
    raise ValueError(f"a prompt of 2..{max(PREFILL_LENS.values()) + 1} tokens, not {n}")



@dataclass
class CachedStep:
    """A decode step `(token, pos, live, *cache) -> (logits, *cache)` keeping its KV cache
    from one call to the next, as a `workloads` Runner (what `workloads.models.decode.greedy`
    decodes with): a prompt goes through it token by token."""

    step: DecodeStep
    empty: tuple[Any, ...]          # the empty cache: keys of every layer, then values
    max_len: int = MAX_LEN
    cache: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        self.cache = self.cache or self.empty

    def reset(self) -> None:
        self.cache = self.empty

    def prefill(self, ids: list[int]) -> np.ndarray:
        self.reset()
        for pos, token in enumerate(ids):
            logits = self.decode(token, pos)
        return logits

    def decode(self, token: int, pos: int) -> np.ndarray:
        live = np.zeros(live_positions(pos, self.max_len), np.int8)
        logits, *cache = self.step(np.int32(token), np.int32(pos), live, *self.cache)
        self.cache = tuple(cache)
        return np.asarray(logits).reshape(-1)


@dataclass
class Steps(CachedStep):
    """A build's (or jax.jit's) prefill and decode steps: a prompt through the prefill step
    that holds it, its last token through the decode step."""

    fills: dict[str, FillStep] = field(default_factory=dict)   # PREFILL_LENS name -> step

    def prefill(self, ids: list[int]) -> np.ndarray:
        """The cache filled with the prompt but its last token, then a decode step of it."""
        name = prefill_name(len(ids))
        self.cache = self.fills[name](pad_prompt(ids[:-1], PREFILL_LENS[name]), *self.empty)
        return self.decode(ids[-1], len(ids) - 1)


def kv_decoder(name: str, max_len: int = MAX_LEN) -> KVDecoder:
    model = load_model(name)
    empty = model.new_cache(max_len)
    return KVDecoder(model, tuple(np.asarray(a) for a in (*empty["k"], *empty["v"])))


def shortlist(model: DecoderModel) -> np.ndarray:
    """About SHORTLIST tokens most frequent in 4000 Wikipedia summaries (and the special
    ones), a multiple of 32 (a quantized head is stored in tiles of 32 rows)."""
    from workloads.data import wiki

    texts = [a.extract for a in wiki.load_summaries()[:4000]]
    n = SHORTLIST
    while len(ids := frequent_tokens(model, texts, n)) % 32:
        n -= len(ids) % 32
    return ids


def live_positions(pos: int, max_len: int) -> int:
    """How many cache positions a decode step at `pos` reads: past `pos`, rounded up to
    LIVE_BLOCK (a few shapes for jax.jit to compile; IREE compiled one for any)."""
    return min(max_len, (pos // LIVE_BLOCK + 1) * LIVE_BLOCK)


def symbolic_input(name: str, most: int, dtype: Any) -> jax.ShapeDtypeStruct:
    """The example of an input of symbolic length `name` (1..`most`): one build serves every
    length (XLA compiles a length when it is first called)."""
    n = jax.export.symbolic_shape(name, constraints=(f"{name} <= {most}", f"{name} >= 1"))
    return jax.ShapeDtypeStruct(n, dtype)


def live_input(max_len: int) -> jax.ShapeDtypeStruct:
    """The example of a decode step's `live` input: int8 of a symbolic length."""
    return symbolic_input("live", max_len, jnp.int8)


def example_args(dec: KVDecoder) -> dict[str, tuple[Any, ...]]:
    """APPROX_EXAMPLE_ARGS of `decode_step` and the prefill steps."""
    max_len = dec.cache[-1].shape[1]
    return {"decode_step": (dec.model.params, np.int32(0), np.int32(0), live_input(max_len),
                            *dec.cache),
            **{name: (dec.model.params, np.zeros(n, np.int32), *dec.cache)
               for name, n in PREFILL_LENS.items()}}


ROOT = Path(__file__).resolve().parents[2]


def build(source: Path, out: Path, config: dict | None = None) -> Path:
    """`out/manifest.json`: `approxcc SOURCE -o OUT --target=cpu` (its own process: a model's
    variants take gigabytes while they are exported), with `config` (a configuration) `--config`
    it: the variants it selects only; run unless the build was made from the same decorated
    module `source`, configuration, this file, the model code and approxcc.ml (a digest of
    their text in `out/inputs.sha1`; a rebuild recompiles only the variants whose StableHLO
    changed)."""
    import hashlib
    import json
    import subprocess
    import sys

    inputs = [source, Path(__file__), *sorted((ROOT / "workloads" / "models").glob("*.py")),
              *sorted((ROOT / "approxcc" / "ml").glob("*.py"))]
    selected = json.dumps(config, sort_keys=True).encode() if config else b""
    digest = hashlib.sha1(b"".join(p.read_bytes() for p in inputs) + selected).hexdigest()
    manifest, stamp = out / "manifest.json", out / "inputs.sha1"
    if not manifest.exists() or not stamp.exists() or stamp.read_text() != digest:
        argv = [str(Path(sys.executable).parent / "approxcc"), str(source), "-o", str(out),
                "--target=cpu"]
        if config:
            out.mkdir(parents=True, exist_ok=True)
            (out / "config.json").write_text(selected.decode())
            argv += ["--config", str(out / "config.json")]
        subprocess.run(argv, check=True)
        stamp.write_text(digest)
    return manifest


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
        g = greedy(Steps(s, dec.cache, fills={"prefill": f}), dec.model.tokenizer, ids, 16,
                   stop=False)
        print(f"{name}: prefill {g.prefill_s * 1000:.0f} ms, {g.ms_per_token:.1f} ms/token "
              f"{g.text!r}")
