"""Tokenizers built from the vocabulary embedded in a GGUF file.

- ``tokenizer.ggml.model == "gpt2"`` (SmolLM2): byte-level BPE from the stored vocabulary
  and merges; pre-tokenization as llama.cpp's ``smollm`` pre-tokenizer (single digits, then
  the GPT-2 regex).
- ``tokenizer.ggml.model == "llama"`` (Gemma 3): SentencePiece BPE. The GGUF has scores,
  not merges; llama.cpp merges the adjacent pair whose concatenation is the highest-scoring
  vocabulary entry. The same BPE is expressed as a ``tokenizers`` BPE whose merges are every
  split ``(l, r)`` of a normal/user-defined entry with both halves in the vocabulary, ranked by
  the entry's score (as Hugging Face converts SentencePiece models), with byte fallback.
  Spaces become ``▁``; no dummy prefix unless ``add_space_prefix``; no pre-splitting (as
  llama.cpp). Limits: merges into control or byte entries are left out; ties of equal score
  keep vocabulary order.

Control tokens (type 3) are special tokens, matched in text; user-defined tokens (type 4,
e.g. Gemma's whitespace runs and HTML tags) are matched verbatim before BPE.
The built tokenizer is cached as JSON under ``~/.cache/approxcc/models``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers

from .files import models_cache
from .gguf_file import GGUFFile

NORMAL, CONTROL, USER_DEFINED, BYTE = 1, 3, 4, 6
_CHATML_SYSTEM = re.compile(r"<\|im_start\|>system(?:\\n|\n)(.*?)<\|im_end\|>", re.S)
_STOP_TEXTS = ("<|im_end|>", "<|endoftext|>", "<end_of_turn>", "<eos>")


@dataclass
class TextTokenizer:
    """A ``tokenizers.Tokenizer`` plus the ids and template the GGUF declares."""

    tokenizer: Tokenizer
    bos_id: int | None
    eos_id: int
    add_bos: bool
    chat_template: str | None
    stop_ids: frozenset[int] = field(default_factory=frozenset)

    def encode(self, text: str, add_bos: bool | None = None) -> list[int]:
        ids = self.tokenizer.encode(text, add_special_tokens=False).ids
        if (self.add_bos if add_bos is None else add_bos) and self.bos_id is not None:
            ids = [self.bos_id, *ids]
        return ids

    def decode(self, ids: list[int], skip_special: bool = True) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=skip_special)

    def token_id(self, text: str) -> int | None:
        return self.tokenizer.token_to_id(text)

    def apply_chat_template(
        self, messages: list[dict[str, str]], add_generation_prompt: bool = True
    ) -> str:
        """Render ChatML (``<|im_start|>role\\ncontent<|im_end|>\\n``) as the template does.

        Only ChatML templates are understood (SmolLM2-Instruct's); its default system
        prompt is read from the template. Other templates raise ``ValueError``.
        """
        template = self.chat_template or ""
        if "<|im_start|>" not in template:
            raise ValueError("this model has no ChatML chat template (is it a base model?)")
        parts: list[str] = []
        default_system = _CHATML_SYSTEM.search(template)
        if messages and messages[0]["role"] != "system" and default_system:
            parts.append(f"<|im_start|>system\n{default_system.group(1)}<|im_end|>\n")
        parts += [f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages]
        if add_generation_prompt:
            parts.append("<|im_start|>assistant\n")
        return "".join(parts)


def _spm_merges(
    tokens: list[str], scores: list[float], types: list[int]
) -> list[tuple[str, str]]:
    vocab = {t: i for i, t in enumerate(tokens)}
    ranked: list[tuple[float, int, str, str]] = []
    for i, piece in enumerate(tokens):
        if types[i] not in (NORMAL, USER_DEFINED) or len(piece) < 2:
            continue
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if left in vocab and right in vocab:
                ranked.append((-scores[i], i, left, right))
    ranked.sort()
    return [(left, right) for _, _, left, right in ranked]


def _build_spm(g: GGUFFile, tokens: list[str], types: list[int]) -> Tokenizer:
    scores = [float(s) for s in g.array("tokenizer.ggml.scores") or [0.0] * len(tokens)]
    unk_id = g.get("tokenizer.ggml.unknown_token_id")
    bpe = models.BPE(
        vocab={t: i for i, t in enumerate(tokens)},
        merges=_spm_merges(tokens, scores, types),
        unk_token=None if unk_id is None else tokens[int(unk_id)],
        fuse_unk=True,
        byte_fallback=True,
    )
    tok = Tokenizer(bpe)
    steps = [normalizers.Replace(" ", "▁")]
    strip = []
    if g.get("tokenizer.ggml.add_space_prefix", False):
        steps.insert(0, normalizers.Prepend("▁"))
        strip = [decoders.Strip(" ", 1, 0)]
    tok.normalizer = normalizers.Sequence(steps)
    tok.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), *strip]
    )
    return tok


def _build_gpt2(g: GGUFFile, tokens: list[str]) -> Tokenizer:
    merges = [tuple(m.split(" ", 1)) for m in g.array("tokenizer.ggml.merges") or []]
    tok = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges))
    steps = [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]
    if g.get("tokenizer.ggml.pre") in ("smollm", "starcoder", "refact"):
        steps.insert(0, pre_tokenizers.Digits(individual_digits=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence(steps)
    tok.decoder = decoders.ByteLevel()
    return tok


def _build(g: GGUFFile) -> Tokenizer:
    tokens = [str(t) for t in g.array("tokenizer.ggml.tokens") or []]
    types = [int(t) for t in g.array("tokenizer.ggml.token_type") or [NORMAL] * len(tokens)]
    kind = g.get("tokenizer.ggml.model")
    if kind == "gpt2":
        tok = _build_gpt2(g, tokens)
    elif kind == "llama":
        tok = _build_spm(g, tokens, types)
    else:
        raise ValueError(f"unsupported GGUF tokenizer model {kind!r}")
    kinds = dict(zip(tokens, types, strict=True))
    tok.add_special_tokens(
        [AddedToken(t, special=True, normalized=False) for t, k in kinds.items() if k == CONTROL]
    )
    tok.add_tokens(
        [AddedToken(t, special=False, normalized=False) for t, k in kinds.items()
         if k == USER_DEFINED]
    )
    return tok


def _cache_key(g: GGUFFile) -> str:
    stat = g.path.stat()
    raw = f"{g.path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}:tokenizer-v1"
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def tokenizer_from_gguf(g: GGUFFile) -> TextTokenizer:
    """The model's tokenizer (built once, then read from the cache)."""
    cached = models_cache() / f"tokenizer-{_cache_key(g)}.json"
    if cached.is_file():
        tok = Tokenizer.from_file(str(cached))
    else:
        tok = _build(g)
        tmp = cached.with_suffix(".tmp")
        tok.save(str(tmp))
        tmp.replace(cached)
    bos = g.get("tokenizer.ggml.bos_token_id")
    eos = int(g.get("tokenizer.ggml.eos_token_id"))
    stops = {eos} | {i for t in _STOP_TEXTS if (i := tok.token_to_id(t)) is not None}
    return TextTokenizer(
        tokenizer=tok,
        bos_id=None if bos is None else int(bos),
        eos_id=eos,
        add_bos=bool(g.get("tokenizer.ggml.add_bos_token", False)),
        chat_template=g.get("tokenizer.chat_template"),
        stop_ids=frozenset(stops),
    )
