"""rag_bm25 in small, for tests: 300 summaries, and the tiny synthetic decoder of
examples/ml/tiny_decoder.py (random weights, so its answers are noise) as the LLM; model 1
of `llm_model` is its smaller substitute; the other LLM knobs of the real LLM (`llm_quant`,
`llm_prefill`, `llm_vocab`, `llm_answer`) are in its space but leave the tiny decoder as it
is."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path
from types import ModuleType

import jax
import numpy as np

from approxcc.system.pipeline import Timed

HERE = Path(__file__).resolve().parent
DOCS = 300


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"tiny_rag_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


rag = _load(HERE.parent / "rag_bm25" / "pipeline.py")
tiny = _load(HERE.parent.parent / "ml" / "tiny_decoder.py")
_forward = jax.jit(tiny.forward)


class TinyRag(rag.RagBm25):
    def __init__(self, root: Path):
        super().__init__(root, docs=DOCS)

    def generate(self, prompt: str, model: int, layers: int) -> Timed:
        """A few greedy tokens of the tiny decoder from the prompt's last characters."""
        params = tiny.SMALL_PARAMS if model else tiny.PARAMS
        params = {**params, "layers": {k: v[:max(1, 2 - layers)]
                                       for k, v in params["layers"].items()}}
        ids = np.array([[ord(c) % tiny.VOCAB for c in prompt[-6:]]], np.int32)
        if (model, layers) not in self.compiled:    # compile first: times are the system's
            tiny.generate(lambda t, p: _forward(params, t, p), ids, 1)
            self.compiled.add((model, layers))
        start = time.perf_counter()
        out = tiny.generate(lambda t, p: _forward(params, t, p), ids, 4)[6:]
        return Timed("".join(chr(ord("a") + t % 26) for t in out),
                     {"prefill": time.perf_counter() - start})
