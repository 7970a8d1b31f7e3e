"""Real models from GGUF: loaders, tokenizers, JAX decoding, decoding through approxcc's
build (IREE).

The ``slow`` tests load the real weights and compile through IREE (builds and vmfbs are
kept under ``~/.cache/approxcc/models``, so later runs skip compilation).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workloads.models import DecoderModel, load_model
from workloads.models.decode import (
    JaxRunner,
    Runner,
    coverage,
    frequent_tokens,
    greedy,
    nll,
    prompt_ids,
    restrict_vocab,
    skip_layers,
)
from workloads.models.files import gemma3_path, smollm2_path
from workloads.models.gguf_file import GGUFFile
from workloads.models.tokenizer import BYTE, TextTokenizer, tokenizer_from_gguf

SAMPLES = [
    "The capital of France is Paris.",
    "Hello world!  12345 naïve café 🙂\n\tend",
    "def f(x):\n    return x ** 2  # square",
]
ML_EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "ml"
QUESTION = "What is the capital of France?"
GEMMA_PROMPT = "Question: What is the capital of France?\nAnswer:"
EIFFEL = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, "
          "France. It is named after the engineer Gustave Eiffel, whose company designed and "
          "built the tower.")


# `make test` installs the model packages first (make setup): a missing model is a failure.
@pytest.fixture(scope="module")
def smol_gguf() -> GGUFFile:
    return GGUFFile(smollm2_path())


@pytest.fixture(scope="module")
def gemma_gguf() -> GGUFFile:
    return GGUFFile(gemma3_path())


def _model(name: str) -> DecoderModel:
    return load_model(name)


@pytest.fixture(scope="module")
def smol() -> DecoderModel:
    return _model("smollm2")


@pytest.fixture(scope="module")
def gemma() -> DecoderModel:
    return _model("gemma3")


@pytest.fixture(scope="module")
def gemma_tok(gemma: DecoderModel) -> TextTokenizer:
    return gemma.tokenizer  # 262k tokens take seconds to read: read once, with the model


def test_smollm2_metadata_and_tokenizer(smol_gguf: GGUFFile) -> None:
    assert smol_gguf.architecture == "llama"
    assert smol_gguf.get(".block_count") == 30
    tok = tokenizer_from_gguf(smol_gguf)
    assert (tok.bos_id, tok.eos_id, tok.add_bos) == (1, 2, False)
    assert tok.token_id("<|im_start|>") == 1 and tok.token_id("<|im_end|>") == 2
    assert tok.encode("<|im_start|>user\nHi<|im_end|>")[0] == 1
    assert tok.encode("<|im_start|>user\nHi<|im_end|>")[-1] == 2
    for text in SAMPLES:
        assert tok.decode(tok.encode(text)) == text
    # single digits, as llama.cpp's smollm pre-tokenizer splits them
    assert len(tok.encode("12345")) == 5


def test_smollm2_chat_template(smol_gguf: GGUFFile) -> None:
    tok = tokenizer_from_gguf(smol_gguf)
    rendered = tok.apply_chat_template([{"role": "user", "content": "Hi"}])
    assert rendered == (
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
        "Face<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    )


def _spm_reference(texts: tuple[str, ...], g: GGUFFile) -> list[list[int]]:
    """llama.cpp's SentencePiece BPE: merge the best-scoring adjacent pair, leftmost first."""
    tokens = g.array("tokenizer.ggml.tokens") or []
    scores = g.array("tokenizer.ggml.scores") or []
    types = g.array("tokenizer.ggml.token_type") or []
    vocab = {t: i for i, t in enumerate(tokens) if types[i] in (1, 4)}
    byte_ids = {t: i for i, t in enumerate(tokens) if types[i] == BYTE}

    def encode(text: str) -> list[int]:
        symbols = list(text.replace(" ", "▁"))
        while True:
            best: tuple[float, int] | None = None
            for i in range(len(symbols) - 1):
                merged = vocab.get(symbols[i] + symbols[i + 1])
                if merged is not None and (best is None or scores[merged] > best[0]):
                    best = (scores[merged], i)
            if best is None:
                break
            i = best[1]
            symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
        ids: list[int] = []
        for s in symbols:
            ids += [vocab[s]] if s in vocab else [byte_ids[f"<0x{b:02X}>"] for b in s.encode()]
        return ids

    return [encode(text) for text in texts]


def test_gemma3_tokenizer(gemma_gguf: GGUFFile, gemma_tok: TextTokenizer) -> None:
    tok = gemma_tok
    assert (tok.bos_id, tok.eos_id, tok.add_bos) == (2, 1, True)
    assert tok.token_id("<start_of_turn>") == 105 and tok.token_id("<end_of_turn>") == 106
    assert tok.stop_ids == {1, 106}
    for text in SAMPLES:
        ids = tok.encode(text)
        assert ids[0] == 2
        assert tok.decode(ids) == text
    texts = (SAMPLES[0], "naïve café 🙂 unbelievably ξένος", EIFFEL)
    for text, want in zip(texts, _spm_reference(texts, gemma_gguf), strict=True):
        assert tok.encode(text, add_bos=False) == want
    # user-defined tokens (whitespace runs, newlines) are matched verbatim
    assert tok.encode("a\n\nb", add_bos=False)[1] == tok.token_id("\n\n")


def _tiny(model: DecoderModel) -> DecoderModel:
    return skip_layers(model, set(range(2, model.config.n_layers)))


@pytest.mark.slow
@pytest.mark.parametrize(("choice", "rel"), [({"q": 1}, 0.02), ({"q": 3}, 0.02),
                                             ({"q": 2}, 0.15), ({"p": 1}, 0.02)])
def test_approxcc_variants_keep_the_model_close(smol: DecoderModel, choice: dict[str, int],
                                                rel: float) -> None:
    """approxcc's int8, w8a8, int4-g32 and bf16 variants of a real model (SmolLM2's first
    two layers, in JAX): next-token NLL of a text within `rel` of the exact model's."""
    import jax

    from approxcc import approx
    from approxcc.ml.transforms import make_variant
    from workloads.models.layers import init_cache

    tiny = _tiny(smol)
    ids = np.asarray(smol.tokenizer.encode(EIFFEL), np.int32)
    cfg = tiny.config

    @approx.knob("p", transform="precision", values=["f32", "bf16"])
    @approx.knob("q", transform="quantize", values=["none", "int8", "int4-g32", "w8a8"])
    def logits(params: dict, tokens: jax.Array) -> jax.Array:
        cache = init_cache(len(params["layers"]), tokens.shape[0], cfg.n_kv_heads,
                           cfg.head_dim)
        hidden, _ = tiny.arch.forward(cfg, params, cache, tokens, 0)
        return tiny.arch.logits(cfg, params, hidden)

    def nll_of(out: jax.Array) -> float:
        logp = jax.nn.log_softmax(np.asarray(out, np.float64)[:-1])
        return float(-np.mean(np.asarray(logp)[np.arange(len(ids) - 1), ids[1:]]))

    exact = nll_of(logits(tiny.params, ids))
    assert exact == pytest.approx(nll(tiny, ids.tolist()), rel=1e-4)
    variant = make_variant(logits.__approx__, tiny.params, (ids,), choice)
    assert nll_of(jax.jit(variant.fn)(variant.stored, ids)) == pytest.approx(exact, rel=rel)


@pytest.mark.slow
def test_restricted_vocabulary_keeps_the_logits_of_its_tokens(smol: DecoderModel) -> None:
    tiny = _tiny(smol)
    ids = smol.tokenizer.encode(EIFFEL)
    short = restrict_vocab(tiny, frequent_tokens(tiny, [EIFFEL, QUESTION], 200))
    assert short.params["output"].shape[0] == len(short.vocab_ids) < 300
    assert coverage(short, ids) == 1.0        # every token of the text is in its shortlist
    full, cut = JaxRunner(tiny), JaxRunner(short)
    want, got = full.prefill(ids[:20]), cut.prefill(ids[:20])
    np.testing.assert_allclose(got[short.vocab_ids], want[short.vocab_ids], rtol=1e-4,
                               atol=1e-4)
    assert np.isneginf(np.delete(got, short.vocab_ids)).all()
    # the restricted distribution puts more mass on the text's own tokens
    assert nll(short, ids) < nll(tiny, ids)


class _Recorded:
    """A runner that keeps the logits of each of its steps."""

    def __init__(self, runner: Runner) -> None:
        self.runner, self.max_len, self.logits = runner, runner.max_len, []

    def prefill(self, ids: list[int]) -> np.ndarray:
        self.logits.append(self.runner.prefill(ids))
        return self.logits[-1]

    def decode(self, token: int, pos: int) -> np.ndarray:
        self.logits.append(self.runner.decode(token, pos))
        return self.logits[-1]


# A real model's decode step as a user program: one knob whose only value is exact, so
# the build has one variant (the KV cache as in examples/ml/kv_decoder.py, 48 positions).
DECODE_PROGRAM = '''"""{name}'s decode step (generated by tests/test_models.py)."""
import sys

sys.path.insert(0, "{examples}")
from kv_decoder import example_args, kv_decoder  # noqa: E402

from approxcc import approx  # noqa: E402

DECODER = kv_decoder("{name}", max_len=48)


@approx.knob("weights", transform="quantize", values=["none"])
def decode_step(params, token, pos, *cache):
    return DECODER.decode(params, token, pos, *cache)


APPROX_EXAMPLE_ARGS = {{"decode_step": example_args(DECODER)["decode_step"]}}
'''


def _built(model: DecoderModel) -> Runner:
    """The approxcc build of DECODE_PROGRAM for a model as a Runner (a prompt through decode
    steps). Built into the models cache: a rebuild of the same program keeps its vmfb and
    weights, so only the first run compiles."""
    import sys

    from approxcc.ml.build import build_model
    from approxcc.ml.runtime import load
    from workloads.models.files import models_cache

    sys.path.insert(0, str(ML_EXAMPLES))
    from kv_decoder import CachedStep

    folder = models_cache() / f"test-{model.name}-decode"
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "decode.py"
    source.write_text(DECODE_PROGRAM.format(name=model.name, examples=ML_EXAMPLES))
    manifest = build_model(source, folder / "build")
    empty = model.new_cache(48)
    return CachedStep(load(manifest.path).decode_step.on_device,
                      tuple(np.asarray(c) for c in (*empty["k"], *empty["v"])), max_len=48)


def _answer(model: DecoderModel, ids: list[int], new_tokens: int) -> tuple[str, str]:
    """Greedy answers under JAX and through approxcc's build (IREE); the build's logits
    match JAX's after the prompt and at every step, with the same argmax."""
    jax_runner, built = _Recorded(JaxRunner(model)), _Recorded(_built(model))
    answers = [greedy(r, model.tokenizer, ids, new_tokens).text for r in (jax_runner, built)]
    for want, got in zip(jax_runner.logits, built.logits, strict=True):
        assert np.abs(got - want).max() < 1e-4 * float(np.abs(want).max()) + 1e-3
        assert int(np.argmax(got)) == int(np.argmax(want))
    return answers[0], answers[1]


# as many new tokens as SmolLM2 takes to say "Paris"; Gemma says it first, then three
# more for three decode steps
@pytest.mark.slow
def test_smollm2_answers_paris(smol: DecoderModel) -> None:
    for text in _answer(smol, prompt_ids(smol, QUESTION), 6):
        assert "Paris" in text


@pytest.mark.slow
def test_gemma3_answers_paris(gemma: DecoderModel) -> None:
    assert gemma.config.layer_windows.count(0) == 3  # layers 5, 11, 17 are global
    ids = prompt_ids(gemma, GEMMA_PROMPT)
    assert ids[0] == gemma.tokenizer.bos_id
    for text in _answer(gemma, ids, 4):
        assert "Paris" in text


def test_text_tokenizer_without_template_rejects_chat(gemma_tok: TextTokenizer) -> None:
    with pytest.raises(ValueError, match="ChatML"):
        gemma_tok.apply_chat_template([{"role": "user", "content": "Hi"}])


def test_a_decode_step_reads_the_cache_up_to_live_positions() -> None:
    """A decode step given `live` reads the cache's first `live` positions only, with the
    attention a prompt's contractions give at the same position; exported with `live` a
    symbolic dimension, its products are over a dynamic length (one build for every
    length)."""
    import jax
    import jax.numpy as jnp

    from workloads.models.layers import cached_attention, init_cache

    rng = np.random.default_rng(0)
    q, k, v = (jnp.asarray(rng.standard_normal((5, h, 16)), jnp.float32) for h in (4, 2, 2))

    def step(q, k, v, cache, pos, live=None):
        return cached_attention(q, k, v, cache, 0, pos, 0.25, live=live)

    prompt, cache = step(q, k, v, init_cache(1, 8, 2, 16), 0)
    # the cache of the first four positions, then the fifth as a decode step; a sixth
    # position holding garbage is outside `live`, and masked without it
    cache = {"k": [cache["k"][0].at[..., 4].set(0).at[..., 6].set(1e4)],
             "v": [cache["v"][0].at[:, 4].set(0).at[:, 6].set(1e4)]}
    args = (q[4:], k[4:], v[4:], cache, jnp.int32(4))
    for live in (None, 5, 6):
        one, _ = step(*args, live=live)
        np.testing.assert_allclose(np.asarray(one), np.asarray(prompt[4:]), rtol=1e-5,
                                   atol=1e-6)
    n = jax.export.symbolic_shape("live", constraints=("live <= 8", "live >= 1"))
    exported = jax.export.export(jax.jit(lambda *a, x: step(*a, live=x.shape[0])))(
        *args, x=jax.ShapeDtypeStruct(n, jnp.int8))
    assert "tensor<2x16x?xf32>" in exported.mlir_module()


def test_a_prompt_of_symbolic_length_attends_as_the_blocked_prompt() -> None:
    """A prefill exported with its length symbolic (one build for every prompt length)
    attends in one block; called at a length, it gives what the blocked attention of that
    static length gives, window included."""
    import jax
    import jax.numpy as jnp

    from workloads.models.layers import PROMPT_BLOCK, cached_attention, init_cache

    rng = np.random.default_rng(1)
    longest = 2 * PROMPT_BLOCK + 16

    def prompt(q, k, v, window):
        return cached_attention(q, k, v, init_cache(1, longest, 2, 16), 0, 0, 0.25, window)[0]

    n, = jax.export.symbolic_shape("n", constraints=(f"n <= {longest}", "n >= 1"))
    for window in (0, 40):
        spec = [jax.ShapeDtypeStruct((n, h, 16), jnp.float32) for h in (4, 2, 2)]
        exported = jax.export.export(jax.jit(prompt, static_argnums=3))(*spec, window)
        for s in (5, PROMPT_BLOCK + 3, longest):
            q, k, v = (jnp.asarray(rng.standard_normal((s, h, 16)), jnp.float32)
                       for h in (4, 2, 2))
            np.testing.assert_allclose(np.asarray(exported.call(q, k, v)),
                                       np.asarray(prompt(q, k, v, window)),
                                       rtol=1e-5, atol=1e-6)
