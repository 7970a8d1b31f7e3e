"""What a compound system's own Python provides, and the staged cache it runs under.

A system's pipeline (`system.toml` `pipeline = "file.py:Class"`, loaded by path so that
approxcc stays model-agnostic) is a `Pipeline`: its Python-side knobs (e.g. the LLM's), how
to attach a freshly loaded copy of the C library, and how to answer one question. Each step
of an answer is a stage run through `Stages`, cached by the stage's input and the values of
the knobs that stage reads: a configuration that changes only the LLM knobs reuses every
retrieval, one that changes only retrieval knobs reuses every prompt it reproduces. A cached
stage is charged the seconds it took when it ran, which steers a search cheaply; under
`Stages.fresh()` every stage runs and is timed now (the tuner's confirmation pairs and
`approxcc eval`): seconds measured minutes apart on a machine whose load drifts do not compare.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from approxcc import config
from approxcc.tune.space import Knob, KnobConfig


@dataclass(frozen=True)
class Timed:
    """A stage's value with its time split into named parts (prefill, decode)."""

    value: Any
    parts: dict[str, float]


@dataclass
class Stages:
    """Stage results by (stage, key), with the seconds each took, and the profile of the
    answers since the last `reset_profile()`."""

    cache: dict[tuple[str, Hashable], tuple[Any, dict[str, float]]] = field(default_factory=dict)
    profile: dict[str, float] = field(default_factory=dict)
    timing_fresh: bool = False      # every stage computed and timed now (`fresh()`)

    def run(self, stage: str, key: Hashable, fn: Callable[[], Any]) -> Any:
        """`fn()`'s value for this key, computed once (every time under `fresh()`); its
        seconds go into the profile under `stage` (or under the parts of a `Timed` value)."""
        hit = None if self.timing_fresh else self.cache.get((stage, key))
        if hit is None:
            start = time.perf_counter()
            value = fn()
            seconds = time.perf_counter() - start
            if isinstance(value, Timed):
                hit = (value.value, value.parts)
            else:
                hit = (value, {stage: seconds})
            self.cache[(stage, key)] = hit
        for part, seconds in hit[1].items():
            self.profile[part] = self.profile.get(part, 0.0) + seconds
        return hit[0]

    @contextmanager
    def fresh(self) -> Iterator[None]:
        """Inside it, no stage is answered from the cache: each runs, charged what it takes
        now (its result still refills the cache)."""
        before, self.timing_fresh = self.timing_fresh, True
        try:
            yield
        finally:
            self.timing_fresh = before

    def reset_profile(self) -> dict[str, float]:
        """The profile so far, and a fresh one."""
        profile, self.profile = self.profile, {}
        return profile


def knob_values(knobs: KnobConfig, names: tuple[str, ...]) -> str:
    """A cache key for the knobs a stage reads (canonical JSON of their entries)."""
    return json.dumps({n: knobs.get(n) for n in names}, sort_keys=True)


def used_values(knobs: Sequence[Knob], configs: Sequence[KnobConfig] | None
                ) -> dict[str, tuple[int, ...]]:
    """The values of each knob that `configs` may pick (a static value, a tree's decisions;
    a knob a configuration leaves out is exact); every value when `configs` is None."""
    if configs is None:
        return {k.name: k.values for k in knobs}
    used: dict[str, set[int]] = {k.name: set() for k in knobs}
    for chosen in configs:
        for k in knobs:
            entry = chosen.get(k.name)
            if entry is None:
                used[k.name].add(k.exact if k.exact is not None else k.values[0])
            else:
                used[k.name].update([entry["value"]] if "value" in entry
                                    else entry["decisions"])
    return {k.name: tuple(v for v in k.values if v in used[k.name]) for k in knobs}


def decide(entry: dict[str, Any], state: float) -> int:
    """The value a knob's configuration entry picks at `state`: a static value, or its
    decision tree's (approxcc.config.decide, the C runtime's semantics)."""
    if "value" in entry:
        return int(entry["value"])
    return int(config.decide(entry["thresholds"], entry["decisions"], state))


class Pipeline(ABC):
    """A system's Python half."""

    knobs: tuple[Knob, ...] = ()      # Python-side knobs, beside the C library's

    def __init__(self, root: Path) -> None:
        """Constructed with the system's folder (system.toml's)."""
        self.root = root

    @abstractmethod
    def attach(self, library: ctypes.CDLL) -> None:
        """Prepare a freshly loaded copy of the C library (declare signatures, load data)."""

    def prepare(self, configs: Sequence[KnobConfig] | None = None) -> float:
        """Build what the configurations about to run need (model variants) before a run is
        timed; the seconds spent compiling. `configs` None: any configuration of the knobs
        (a tuning run); else those configurations only (`approxcc eval`: the exact one and
        the user's; `used_values` says which values of each knob they use). Overriding it
        without the parameter is fine too: the system then prepares everything."""
        return 0.0

    @abstractmethod
    def answer(self, question: str, library: ctypes.CDLL, knobs: KnobConfig,
               stages: Stages) -> str:
        """The system's answer; `knobs` holds an entry for every knob of the system."""


def load_attribute(spec: str, root: Path) -> object:
    """`FILE.py:NAME` (FILE relative to `root`): the file loaded as a module, its NAME;
    ValueError says what is wrong."""
    file, _, name = spec.partition(":")
    path = root / file
    if not name or not path.is_file():
        raise ValueError(f"'{spec}' is not FILE.py:NAME of an existing file")
    module_spec = importlib.util.spec_from_file_location(f"approx_system_{path.stem}", path)
    assert module_spec is not None and module_spec.loader is not None  # a .py file
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    if not hasattr(module, name):
        raise ValueError(f"'{file}' has no '{name}'")
    return getattr(module, name)


def load_pipeline(spec: str, root: Path) -> Pipeline:
    """`FILE.py:CLASS` (FILE relative to `root`) loaded by path and constructed with `root`;
    ValueError says what is wrong."""
    cls = load_attribute(spec, root)
    if not (isinstance(cls, type) and issubclass(cls, Pipeline)):
        raise ValueError(f"'{spec.partition(':')[0]}' has no Pipeline class "
                         f"'{spec.partition(':')[2]}'")
    return cls(root)
