"""How the RAG systems' LLM reads its passages (examples/systems/common/llm.py): an answer is
copied from the passages' tokens. SmolLM2 cut to two layers (the same code as the full models,
compiled in seconds) writes it: whatever such a model says, only the passages' words."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import example_module

ROOT = Path(__file__).resolve().parents[1]
COMMON = ROOT / "examples" / "systems" / "common"
PASSAGE = ("Ada Lovelace: Ada Lovelace was an English mathematician and writer, chiefly known "
           "for her work on the Analytical Engine.")
PROMPT = ("Answer the question in a few words, using the passages.\n"
          f"Passage: {PASSAGE}\nQuestion: What was Ada Lovelace's profession?\nAnswer:")

pytest.importorskip("workloads")


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


@pytest.fixture(scope="module")
def llm():
    return example_module(COMMON / "llm.py", "rag_llm")     # the name rag.py loads it by


def test_an_extractive_answer_is_written_in_the_passages_words(llm) -> None:
    reader = llm.Llm(("smollm2",), lambda: [])
    two_layers = reader.base(0).config.n_layers - 2
    free, _ = reader.generate(PROMPT, llm.Variant(layers=two_layers))
    copied, _ = reader.generate(PROMPT, llm.Variant(layers=two_layers, copy_from=(PASSAGE,)))
    assert words(free) - words(PASSAGE)         # a two-layer model makes words up ...
    assert copied and words(copied) <= words(PASSAGE)   # ... unless it copies
