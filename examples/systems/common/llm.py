"""The RAG systems' LLM and its approximate variants, each built once and kept for the run.

An answer is a prefill of the prompt and a greedy decode to the end of its first line. The
prefill always runs under `jax.jit` (XLA-CPU): its padded length follows the prompt (buckets
of 32 tokens), and IREE's fixed-length prefill (`IreeRunner`, f32 or W8A8) was no faster on
these 210-340-token prompts (`python bench/compound.py --llm`). The decode step is the
variant's, and takes over the prefill's KV cache (the same layout in both runtimes):

  quant 0  float32 under jax.jit: the exact path (IREE's f32 decode is no faster here);
  quant 1  W8A8 through IREE (`workloads.models.iree_decode`: int8 weights per channel x
           int8 activations, int32 accumulation), ~2x faster a token;
  vocab 1  the output head cut to the tokens of the corpus summaries and of the prompt's
           own text (`SHORTLIST_TEXT`): Gemma 3's 262,144-row head, 2/3 of its bytes a
           token, becomes 47,269 rows. A passage is corpus text, so the answer can still
           copy any of it; a question word found nowhere in the corpus cannot be produced;
  layers k drop the last k decoder layers (prefill and decode);
  tokens   the answer's length in tokens at most.

IREE's vmfbs are cached under ~/.cache/approxcc/models: a fresh compile of one W8A8 decode
step takes about a minute, later runs (and tuning) load it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

MAX_LEN = 512           # KV cache positions: the longest prompt (~340 tokens) and its answer
ANSWER_TOKENS = 10


@dataclass(frozen=True)
class Variant:
    """One LLM configuration: `model` indexes the pipeline's model names."""

    model: int = 0
    layers: int = 0
    quant: int = 0
    vocab: int = 0
    tokens: int = ANSWER_TOKENS


class Llm:
    """The models of `names` and every variant asked for so far. `shortlist_texts` gives the
    texts whose tokens make the restricted vocabulary (asked once, when first needed)."""

    def __init__(self, names: tuple[str, ...], shortlist_texts: Any) -> None:
        self.names = names
        self.shortlist_texts = shortlist_texts
        self.bases: dict[int, Any] = {}
        self.models: dict[tuple[int, int, int, int], Any] = {}
        self.prefills: dict[tuple[int, int], Any] = {}
        self.decoders: dict[tuple[int, int, int, int], Any] = {}
        self.warm: set[tuple[Any, ...]] = set()

    def base(self, model: int) -> Any:
        """The exact model, its weights on the device once (every variant shares them)."""
        if model not in self.bases:
            import jax

            from workloads.models import load_model

            m = load_model(self.names[model])
            self.bases[model] = m.with_params(jax.device_put(m.params))
        return self.bases[model]

    def shortlist(self, m: Any) -> np.ndarray:
        tok = m.tokenizer
        texts = list(self.shortlist_texts())
        ids = [np.asarray(e.ids, np.int64)
               for e in tok.tokenizer.encode_batch(texts, add_special_tokens=False)]
        special = [i for i in (tok.bos_id, tok.eos_id, *tok.stop_ids) if i is not None]
        return np.union1d(np.concatenate(ids), np.asarray(special, np.int64))

    def model(self, model: int, layers: int, quant: int = 0, vocab: int = 0) -> Any:
        """The decoder model of a variant (weights rewritten once per (model, quant, vocab),
        layers dropped from that)."""
        from workloads.models.decode import restrict_vocab, skip_layers

        key = (model, layers, quant, vocab)
        if key not in self.models:
            if layers:
                whole = self.model(model, 0, quant, vocab)
                n = len(whole.params["layers"])
                self.models[key] = skip_layers(whole, set(range(n - layers, n)))
            elif vocab:
                narrow = restrict_vocab(self.model(model, 0), self.shortlist(self.base(model)))
                self.models[key] = self._quantized(narrow, quant)
            else:
                self.models[key] = self._quantized(self.base(model), quant)
        return self.models[key]

    @staticmethod
    def _quantized(m: Any, quant: int) -> Any:
        from workloads.models.weights import quantize_int8

        return m.with_params(quantize_int8(m.params, activations="int8")) if quant else m

    def prefill_runner(self, model: int, layers: int) -> Any:
        from workloads.models.decode import JaxRunner

        key = (model, layers)
        if key not in self.prefills:
            self.prefills[key] = JaxRunner(self.model(model, layers), max_len=MAX_LEN)
        return self.prefills[key]

    def decode_runner(self, v: Variant) -> Any:
        """The exact variant decodes with its prefill's runner; W8A8 with IREE; a restricted
        vocabulary alone under jax.jit."""
        key = (v.model, v.layers, v.quant, v.vocab)
        if key not in self.decoders:
            if not v.quant and not v.vocab:
                self.decoders[key] = self.prefill_runner(v.model, v.layers)
            elif v.quant:
                tag = f"w8a8{'+corpus' if v.vocab else ''}-skip{v.layers}"
                self.decoders[key] = iree_runner(self.model(*key), prefill_len=0,
                                                 variant=tag)
            else:
                from workloads.models.decode import JaxRunner

                self.decoders[key] = JaxRunner(self.model(*key), max_len=MAX_LEN)
        return self.decoders[key]

    def prepare(self, variants: list[Variant]) -> float:
        """Build every decode runner of `variants` now (IREE compiles or loads its vmfbs),
        so that no timed run waits for one; returns the seconds IREE spent compiling."""
        compile_s = 0.0
        for v in variants:
            runner = self.decode_runner(v)
            compile_s += getattr(runner, "compile_s", 0.0)
        return compile_s

    def tokenizer(self, model: int) -> Any:
        return self.base(model).tokenizer

    def generate(self, prompt: str, v: Variant) -> tuple[str, dict[str, float]]:
        """Greedy answer to the end of its first line, and the seconds of prefill and
        decode."""
        from workloads.models.decode import prefill_length, prompt_ids

        tok = self.tokenizer(v.model)
        ids = prompt_ids(self.base(v.model), prompt, chat=False)
        prefill, decoder = self.prefill_runner(v.model, v.layers), self.decode_runner(v)
        shape = (v.model, v.layers, v.quant, v.vocab, prefill_length(len(ids), MAX_LEN))
        if shape not in self.warm:
            # compile first (XLA once per padded length, IREE's load): stage times are the
            # system's
            prefill.prefill(ids)
            hand_over(prefill, decoder)
            decoder.decode(0, len(ids))
            self.warm.add(shape)
        t0 = time.perf_counter()
        logits = prefill.prefill(ids)
        hand_over(prefill, decoder)
        t1 = time.perf_counter()
        out: list[int] = []
        for pos in range(len(ids), len(ids) + v.tokens):
            token = int(np.argmax(logits))
            if token in tok.stop_ids or "\n" in tok.decode(out + [token]).lstrip():
                break
            out.append(token)
            if len(out) == v.tokens:
                break
            logits = decoder.decode(token, pos)
        t2 = time.perf_counter()
        return tok.decode(out).strip(), {"prefill": t1 - t0, "decode": t2 - t1}


def iree_runner(model: Any, **options: Any) -> Any:
    """`IreeRunner(model, max_len=MAX_LEN, **options)`, exported with each op's location
    its innermost frame only: with JAX's full tracebacks the module text (the vmfb cache's
    key) would depend on who called, and every new caller would recompile."""
    import jax

    from workloads.models.iree_decode import IreeRunner

    flag = "jax_include_full_tracebacks_in_locations"
    saved = getattr(jax.config, flag)
    jax.config.update(flag, False)
    try:
        return IreeRunner(model, max_len=MAX_LEN, **options)
    finally:
        jax.config.update(flag, saved)


def hand_over(prefill: Any, decoder: Any) -> None:
    """The prefill's KV cache to the decoder (IREE takes host arrays, flattened)."""
    if decoder is prefill:
        return
    from workloads.models.iree_decode import IreeRunner

    if isinstance(decoder, IreeRunner):
        import jax

        decoder.cache = [np.asarray(c) for c in jax.tree_util.tree_leaves(prefill.cache)]
    else:
        decoder.cache = prefill.cache
