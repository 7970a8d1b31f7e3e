"""The RAG systems' LLM and its approximate variants, each built once and kept for the run.

An answer is a prefill of the prompt and a greedy decode to the end of its first line. The
exact prefill runs under `jax.jit` (XLA-CPU), its padded length following the prompt
(buckets of 32 tokens). The decode step is the variant's, and takes over the prefill's KV
cache (the same layout in both runtimes):

  prefill 1  the prompt's prefill in W8A8 through approxcc's build (`prefill`, its length
           symbolic: one build for every length; the prompt padded to the shortest of
           PREFILL_BUCKETS that holds it, a few shapes for XLA to compile; a longer prompt
           keeps the exact prefill), ~1.5x faster than jax.jit's f32; its last token goes
           through the variant's decode step;
  prefill 2  the same in bfloat16 (the `llm_prefill_precision` knob: bf16 weights and
           activations, f32 accumulation; IREE's bf16 ukernels where the CPU has AVX-512
           BF16), about as fast as W8A8 at float accuracy;
  quant 0  float32 under jax.jit: the exact path;
  quant 1  W8A8 through approxcc's build of the decode step (`DECODE_PROGRAM`: the
           `llm_quant` knob's `w8a8`, int8 weights per output channel x int8 activations,
           int32 accumulation, run by approxcc.ml.runtime), ~2x faster a token;
  quant 2  bfloat16 through the same build (the `llm_precision` knob), ~1.6x faster a
           token on Gemma 3 with AVX-512 BF16, the same tokens as float32 nearly always;
  quant 3  W8A16 through the same build (`llm_quant`'s `w8a16`: activations to 16 bits as
           two int8 halves of one int8 x int8 product), as fast as W8A8 at weight-only
           int8's accuracy (Gemma 3: 12.0 ms a token, NLL 2.157 against float32's 2.160);
  vocab 1  the output head cut to the tokens of the corpus summaries and of the prompt's
           own text (`shortlist_texts`): Gemma 3's 262,144-row head, 2/3 of its bytes a
           token, becomes 47,269 rows. A passage is corpus text, so the answer can still
           copy any of it; a question word found nowhere in the corpus cannot be produced.
           Under jax.jit alone, or the `llm_vocab` substitute of the build with W8A8;
  layers k drop the last k decoder layers (prefill and decode; not with W8A8, which no
           system's space combines with it);
  tokens   the answer's length in tokens at most.

Every variant reads extractively when given passages (`Variant.copy_from`): each answer token
is the likeliest of the passages' own tokens (and the end of the line), so the answer is
written in the passages' words. On the first 100 tune questions this lifts the exact
accuracy from 63% to 68% (rag_bm25) and from 59% to 64% (rag_kb): free generation
paraphrases or contradicts the passage ("Film producer" for *filmmaker*, "German" for a
Dutch physicist the passage calls Dutch).

The decode step of each model is one user program (`DECODE_PROGRAM`), its prefill step
another (`PREFILL_PROGRAM`, for prompts of any length), written under
~/.cache/approxcc/systems with the shortlist the decode step restricts to and built by
approxcc once: a fresh build of every variant exports and compiles 12 decode and 4 prefill
variants; a configuration's (`approxcc eval`) compiles only its own (approxcc's `--config`).
IREE does not compile the prefill's gather of a symbolic number of embedding rows, so its
variants are run by XLA (the faster of the two on them when each length was its own build),
which compiles a padded length when a prompt first needs it (untimed: `Llm.generate` warms
each shape up). Later runs (and tuning) load the builds while their inputs are unchanged.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MAX_LEN = 512           # KV cache positions: the longest prompt (~340 tokens) and its answer
ANSWER_TOKENS = 10
ML_EXAMPLES = Path(__file__).resolve().parents[2] / "ml"     # kv_decoder: the cache layout
# The built prefill's lengths, for prompts of ~80-340 tokens: a prompt is padded to the
# shortest that holds it, so the steps are fine where the approximate systems' prompts are
# (80-160 tokens)
PREFILL_BUCKETS = (80, 96, 112, 128, 144, 160, 192, 224, 256, 288, 320, 352, 384)
# The answer's decode step and its prefill step as user programs: the decode step's
# `llm_quant` (W8A8, W8A16) and `llm_precision` (bf16) knobs are the systems' `llm_quant`,
# its `llm_vocab` theirs; the prefill program's `llm_prefill_quant` (W8A8) and
# `llm_prefill_precision` (bf16) their `llm_prefill`.
STEP_HEADER = '''"""The RAG systems' answer {what} of {model} (written by
examples/systems/common/llm.py)."""
import sys

import numpy as np

sys.path.insert(0, {examples!r})
from kv_decoder import kv_decoder, live_input, symbolic_input  # noqa: E402

from approxcc import approx  # noqa: E402

DECODER = kv_decoder({model!r}, max_len={max_len})
'''
DECODE_PROGRAM = '''CORPUS_HEAD = DECODER.restrict_params(np.load({shortlist!r}))


@approx.knob("llm_vocab", transform="func_substitute",
             variants=[approx.model(DECODER.restricted, CORPUS_HEAD)])
@approx.knob("llm_quant", transform="quantize", values=["none", "w8a8", "w8a16"])
@approx.knob("llm_precision", transform="precision", values=["f32", "bf16"])
def decode_step(params, token, pos, live, *cache):
    return DECODER.decode(params, token, pos, live, *cache)


APPROX_EXAMPLE_ARGS = {{"decode_step": (DECODER.model.params, np.int32(0), np.int32(0),
                                        live_input({max_len}), *DECODER.cache)}}
'''
PREFILL_PROGRAM = '''

@approx.knob("llm_prefill_quant", transform="quantize", values=["none", "w8a8"])
@approx.knob("llm_prefill_precision", transform="precision", values=["f32", "bf16"])
def prefill(params, tokens, *cache):
    return DECODER.fill(params, tokens, *cache)


APPROX_EXAMPLE_ARGS = {{"prefill": (DECODER.model.params,
                                   symbolic_input("length", {longest}, np.int32),
                                   *DECODER.cache)}}
'''


@dataclass(frozen=True)
class Variant:
    """One LLM configuration: `model` indexes the pipeline's model names."""

    model: int = 0
    layers: int = 0
    quant: int = 0
    vocab: int = 0
    tokens: int = ANSWER_TOKENS
    prefill: int = 0
    copy_from: tuple[str, ...] = ()     # the passages an answer's tokens come from (if any)


class Llm:
    """The models of `names` and every variant asked for so far. `shortlist_texts` gives the
    texts whose tokens make the restricted vocabulary (asked once, when first needed)."""

    def __init__(self, names: tuple[str, ...], shortlist_texts: Any) -> None:
        self.names = names
        self.shortlist_texts = shortlist_texts
        self.bases: dict[int, Any] = {}
        self.models: dict[tuple[int, int, int], Any] = {}
        self.prefills: dict[tuple[int, int], Any] = {}
        self.decoders: dict[tuple[int, int, int, int], Any] = {}
        self.built_prefills: dict[tuple[int, int], BuiltPrefill] = {}
        self.shortlists: dict[int, np.ndarray] = {}
        self.every = False      # build every variant of the steps (prepare: more than one)
        self.warm: set[tuple[Any, ...]] = set()

    def base(self, model: int) -> Any:
        """The exact model, its weights on the device once (every variant shares them)."""
        if model not in self.bases:
            import jax

            from workloads.models import load_model

            m = load_model(self.names[model])
            self.bases[model] = m.with_params(jax.device_put(m.params))
        return self.bases[model]

    def shortlist(self, model: int) -> np.ndarray:
        """The restricted vocabulary's token ids of `model` (tokenised once: every build
        plan and the restricted head ask)."""
        if model not in self.shortlists:
            self.shortlists[model] = self._shortlist(self.base(model))
        return self.shortlists[model]

    def _shortlist(self, m: Any) -> np.ndarray:
        tok = m.tokenizer
        texts = list(self.shortlist_texts())
        ids = [np.asarray(e.ids, np.int64)
               for e in tok.tokenizer.encode_batch(texts, add_special_tokens=False)]
        special = [i for i in (tok.bos_id, tok.eos_id, *tok.stop_ids) if i is not None]
        return np.union1d(np.concatenate(ids), np.asarray(special, np.int64))

    def model(self, model: int, layers: int, vocab: int = 0) -> Any:
        """The decoder model of a jax.jit variant (the head restricted once per model,
        layers dropped from that)."""
        from workloads.models.decode import restrict_vocab, skip_layers

        key = (model, layers, vocab)
        if key not in self.models:
            if layers:
                whole = self.model(model, 0, vocab)
                n = len(whole.params["layers"])
                self.models[key] = skip_layers(whole, set(range(n - layers, n)))
            elif vocab:
                self.models[key] = restrict_vocab(self.base(model), self.shortlist(model))
            else:
                self.models[key] = self.base(model)
        return self.models[key]

    def prefill_runner(self, model: int, layers: int) -> Any:
        from workloads.models.decode import JaxRunner

        key = (model, layers)
        if key not in self.prefills:
            self.prefills[key] = JaxRunner(self.model(model, layers), max_len=MAX_LEN)
        return self.prefills[key]

    def build(self, model: int, program: str, config: dict[str, Any] | None = None) -> Path:
        """The manifest of `model`'s "decode" or "prefill" program, built by approxcc for
        the CPU: every variant, or with `config` those it selects only (a folder per model,
        shortlist and selection; reused while its inputs are unchanged)."""
        return kv_decoder().build(*self.build_plan(model, program, config))

    def build_plan(self, model: int, program: str, config: dict[str, Any] | None = None
                   ) -> tuple[Path, Path, dict[str, Any] | None]:
        """What `build` runs: the decorated source (written now), the output folder and the
        configuration selecting its variants (None: every variant)."""
        from workloads.packages import cache_dir

        name = self.names[model]
        ids = self.shortlist(model).astype(np.int32)
        key = hashlib.sha1(ids.tobytes()).hexdigest()[:12]
        folder = cache_dir("systems", f"answer-{name}-L{MAX_LEN}-{key}")
        shortlist = folder / "shortlist.npy"
        if not shortlist.exists():
            np.save(shortlist, ids)
        body = DECODE_PROGRAM if program == "decode" else PREFILL_PROGRAM
        text = STEP_HEADER.format(what=f"{program} step", model=name, max_len=MAX_LEN,
                                  examples=str(ML_EXAMPLES)) + body.format(
            shortlist=str(shortlist), max_len=MAX_LEN, longest=PREFILL_BUCKETS[-1])
        source = folder / f"answer_{program}.py"
        if not source.exists() or source.read_text() != text:
            source.write_text(text)
        out = folder / f"build-{program}"
        if config is None or (out / "manifest.json").exists():  # every variant serves any
            return source, out, None
        selected = json.dumps(config, sort_keys=True)
        return source, folder / (f"build-{program}-"
                                 f"{hashlib.sha1(selected.encode()).hexdigest()[:8]}"), config

    def decode_runner(self, v: Variant) -> Any:
        """The exact variant decodes with its prefill's runner; W8A8 and bf16 with
        approxcc's build; a restricted vocabulary alone under jax.jit."""
        key = (v.model, v.layers, v.quant, v.vocab)
        if key not in self.decoders:
            if not v.quant and not v.vocab:
                self.decoders[key] = self.prefill_runner(v.model, v.layers)
            elif v.quant:
                if v.layers:
                    raise ValueError("the built decode step is the whole model's only")
                config = decode_config(v.quant, v.vocab)
                manifest = self.build(v.model, "decode", None if self.every else config)
                self.decoders[key] = built_decoder(manifest, config)
            else:
                from workloads.models.decode import JaxRunner

                self.decoders[key] = JaxRunner(self.model(v.model, v.layers, v.vocab),
                                               max_len=MAX_LEN)
        return self.decoders[key]

    def built_prefill(self, model: int, kind: int) -> BuiltPrefill:
        """The prefill step of `model`'s build: kind 1 W8A8, 2 bf16."""
        if (model, kind) not in self.built_prefills:
            import jax

            from approxcc.ml.runtime import load

            config = prefill_config(kind)
            program = load(self.build(model, "prefill", None if self.every else config),
                           config=config)
            empty = jax.tree_util.tree_leaves(self.base(model).new_cache(MAX_LEN))
            self.built_prefills[model, kind] = BuiltPrefill(program.prefill,
                                                            [np.asarray(c) for c in empty])
        return self.built_prefills[model, kind]

    def prepare(self, variants: list[Variant]) -> float:
        """Build every runner of `variants` now (approxcc builds or loads the program), so
        that no timed run waits for one; returns the seconds that took. Where they use one
        built decode step and one kind of built prefill (a configuration and the exact
        system), only those variants are compiled; more, and every variant is (one build
        serves them all)."""
        start = time.perf_counter()
        decodes = {(v.quant, v.vocab) for v in variants if v.quant}
        prefills = {v.prefill for v in variants if v.prefill}
        self.every = self.every or len(decodes) > 1 or len(prefills) > 1
        self.build_at_once(variants)
        for v in variants:
            self.decode_runner(v)
            if v.prefill and not v.layers:
                self.built_prefill(v.model, v.prefill)
        return time.perf_counter() - start

    def build_at_once(self, variants: list[Variant]) -> None:
        """The approxcc builds `variants` need, each its own process: a model's decode and
        prefill steps side by side, the models one after the other (every variant of Gemma
        3's two steps, on an empty cache, 2 cores: 3 min 50 s, 12.5 GB at the peak)."""
        from concurrent.futures import ThreadPoolExecutor

        by_model: dict[int, dict[Path, tuple[Path, Path, dict[str, Any] | None]]] = {}
        for v in variants:
            steps = [("decode", decode_config(v.quant, v.vocab))] if v.quant else []
            if v.prefill and not v.layers:
                steps.append(("prefill", prefill_config(v.prefill)))
            for program, config in steps:
                plan = self.build_plan(v.model, program, None if self.every else config)
                by_model.setdefault(v.model, {})[plan[1]] = plan  # one build a folder
        with ThreadPoolExecutor(max_workers=2) as pool:
            for plans in by_model.values():
                for running in [pool.submit(kv_decoder().build, *plan)
                                for plan in plans.values()]:
                    running.result()

    def tokenizer(self, model: int) -> Any:
        return self.base(model).tokenizer

    def answer_tokens(self, model: int, texts: tuple[str, ...]) -> np.ndarray | None:
        """The tokens an answer copied from `texts` may use (as the prompt spells them,
        after a space), the line's end and the stop tokens; None: any token."""
        if not texts:
            return None
        tok = self.tokenizer(model)
        words = tok.tokenizer.encode_batch([f" {t}" for t in texts], add_special_tokens=False)
        ends = tok.tokenizer.encode("\n", add_special_tokens=False).ids
        ids = [np.asarray(e.ids, np.int64) for e in words]
        return np.unique(np.concatenate([*ids, np.asarray([*ends, *tok.stop_ids], np.int64)]))

    def generate(self, prompt: str, v: Variant) -> tuple[str, dict[str, float]]:
        """Greedy answer to the end of its first line, and the seconds of prefill and
        decode."""
        from workloads.models.decode import prefill_length, prompt_ids

        tok = self.tokenizer(v.model)
        ids = prompt_ids(self.base(v.model), prompt, chat=False)
        exact, decoder = self.prefill_runner(v.model, v.layers), self.decode_runner(v)
        built = self.built_prefill(v.model, v.prefill) if v.prefill and not v.layers \
            and len(ids) - 1 <= PREFILL_BUCKETS[-1] else None

        def prefill() -> np.ndarray:
            if built is not None:   # the cache of all but the last token, then a decode step
                set_cache(decoder, built.fill(ids[:-1]))
                return decoder.decode(ids[-1], len(ids) - 1)
            logits = exact.prefill(ids)
            hand_over(exact, decoder)
            return logits

        # a built prefill step per bucket: its first call loads its module and runs its
        # initializer (Gemma's bf16 steps 0.25-2.8 s, a later call 43-85 ms)
        shape = (v.model, v.layers, v.quant, v.vocab, built is not None,
                 bucket(len(ids) - 1) if built else prefill_length(len(ids), MAX_LEN))
        if shape not in self.warm:
            # compile first (XLA once per padded length, IREE's load): stage times are the
            # system's
            prefill()
            decoder.decode(0, len(ids))
            self.warm.add(shape)
        t0 = time.perf_counter()
        logits = prefill()
        t1 = time.perf_counter()
        allowed = self.answer_tokens(v.model, v.copy_from)    # the decode's time
        out: list[int] = []
        for pos in range(len(ids), len(ids) + v.tokens):
            token = int(np.argmax(logits)) if allowed is None \
                else int(allowed[np.argmax(logits[allowed])])
            if token in tok.stop_ids or "\n" in tok.decode(out + [token]).lstrip():
                break
            out.append(token)
            if len(out) == v.tokens:
                break
            logits = decoder.decode(token, pos)
        t2 = time.perf_counter()
        return tok.decode(out).strip(), {"prefill": t1 - t0, "decode": t2 - t1}


@functools.cache
def kv_decoder() -> Any:
    """examples/ml/kv_decoder.py (the cache layout, the build, `CachedStep`), imported when
    first needed (it imports JAX), once: `set_cache` asks for it at every answer."""
    import sys

    sys.path.insert(0, str(ML_EXAMPLES))
    import kv_decoder

    return kv_decoder


def decode_config(quant: int, vocab: int) -> dict[str, Any]:
    """The configuration of the built decode step's variant (quant 1 W8A8, 2 bf16, 3
    W8A16)."""
    return {"approxcc": "1", "knobs": {"llm_quant": {"value": {1: 1, 3: 2}.get(quant, 0)},
                                       "llm_precision": {"value": int(quant == 2)},
                                       "llm_vocab": {"value": vocab}}}


def prefill_config(kind: int) -> dict[str, Any]:
    """The configuration of the built prefill step: kind 1 W8A8, 2 bf16."""
    knob = {1: "llm_prefill_quant", 2: "llm_prefill_precision"}[kind]
    return {"approxcc": "1", "knobs": {knob: {"value": 1}}}


def built_decoder(manifest: Path, config: dict[str, Any]) -> Any:
    """The built decode step's variant of `config` as a `CachedStep` (its cache set by
    `set_cache`: the prefill's)."""
    from approxcc.ml.runtime import load

    return kv_decoder().CachedStep(load(manifest, config=config).decode_step.on_device, ())


@dataclass
class BuiltPrefill:
    """The W8A8 or bf16 prefill step (`prefill_config`'s variant of the built program)."""

    step: Any                       # approxcc.ml.runtime's function
    empty: list[np.ndarray]         # an empty cache: keys of every layer, then values

    def fill(self, ids: list[int]) -> list[np.ndarray]:
        """The cache with the keys and values of `ids` at positions 0.. (host arrays), the
        prompt padded to its bucket."""
        from workloads.models.decode import pad_prompt

        n = bucket(len(ids))
        return [np.asarray(c) for c in self.step(pad_prompt(ids, n), *self.empty)]


def bucket(n: int) -> int:
    """The length of the built prefill step that holds a prompt of `n` tokens."""
    return next(b for b in PREFILL_BUCKETS if n <= b)


def set_cache(decoder: Any, leaves: list[Any]) -> None:
    """A KV cache (keys of every layer, then values) to a decode runner."""
    if isinstance(decoder, kv_decoder().CachedStep):
        decoder.cache = tuple(np.asarray(c) for c in leaves)
    else:   # a JaxRunner
        import jax.numpy as jnp

        n = len(leaves) // 2
        decoder.cache = {"k": [jnp.asarray(c) for c in leaves[:n]],
                         "v": [jnp.asarray(c) for c in leaves[n:]]}


def hand_over(prefill: Any, decoder: Any) -> None:
    """The prefill's KV cache to the decoder."""
    if decoder is prefill:
        return
    if isinstance(decoder, kv_decoder().CachedStep):
        import jax

        set_cache(decoder, jax.tree_util.tree_leaves(prefill.cache))
    else:
        decoder.cache = prefill.cache
