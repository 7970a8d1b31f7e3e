"""The Python half: question -> word vectors (JAX, model.py) -> best-matching fact (C,
search.c). The fact is the answer. approxcc loads this file by path (system.toml)."""

from __future__ import annotations

import ctypes
import re
import time
import zlib
from pathlib import Path

import numpy as np

from approxcc.system import model_knobs
from approxcc.system.pipeline import Pipeline, Stages, knob_values
from approxcc.tune.space import KnobConfig

STOP = set("a an the of in on is was who what which when where how many does did to".split())
FLOATS, INTS = ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_int)


class Minimal(Pipeline):
    # The model's knob as the tuner sees it: model.py's @approx.knob, read from the file
    knobs = model_knobs(Path(__file__).with_name("model.py"))

    def __init__(self, root: Path):
        self.root = root
        self.facts = (root / "facts.txt").read_text().splitlines()
        self.encoders: dict[int, object] = {}       # knob value -> its variant of model.py

    def prepare(self) -> float:
        """Build model.py, load each variant, index the facts with the exact encoder."""
        if self.encoders:
            return 0.0
        from approxcc.ml.build import build_model
        from approxcc.ml.runtime import load

        start, out = time.perf_counter(), self.root / "build" / "model"
        build_model(self.root / "model.py", out)    # a rebuild reuses what is unchanged
        for v in self.knobs[0].values:
            config = {"approxcc": "1", "knobs": {"encoder_layers": {"value": v}}}
            self.encoders[v] = load(out, config=config, device="local-sync")  # one thread
            self.encode("", v)                      # a variant's first call loads it
        vectors = [self.encode(fact, 0) for fact in self.facts]
        self.words = np.concatenate(vectors)
        self.start = np.cumsum([0] + [len(v) for v in vectors]).astype(np.int32)
        return time.perf_counter() - start

    def attach(self, library: ctypes.CDLL) -> None:
        c_int = ctypes.c_int
        library.nearest.argtypes = [FLOATS, INTS, c_int, c_int, FLOATS, c_int]
        library.nearest.restype = c_int

    def encode(self, text: str, layers: int) -> np.ndarray:
        """A unit vector per word of `text`, stop words left out (at most model.WORDS)."""
        words = [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP][:16]
        ids = np.zeros(16, np.int32)
        ids[:len(words)] = [1 + zlib.crc32(w.encode()) % 2047 for w in words]
        # np.array copies: a slice of the runtime's own array is overwritten by a later call
        return np.array(self.encoders[layers].encode(ids))[:len(words)]

    def search(self, library: ctypes.CDLL, query: np.ndarray) -> int:
        return library.nearest(self.words.ctypes.data_as(FLOATS), self.start.ctypes.data_as(INTS),
                               len(self.facts), self.words.shape[1],
                               query.ctypes.data_as(FLOATS), len(query))

    def answer(self, question: str, library: ctypes.CDLL, knobs: KnobConfig,
               stages: Stages) -> str:
        layers = knobs["encoder_layers"]["value"]
        query = stages.run("encoder", (question, layers), lambda: self.encode(question, layers))
        # a stage's key: its input and every knob it reads (the C knob `dims` here)
        best = stages.run("search", (question, layers, knob_values(knobs, ("dims",))),
                          lambda: self.search(library, query))
        return self.facts[best]
