"""Knob configurations (JSON, see docs/config.md): load and validate.

Errors name the knob and point at its key inside the JSON file, so the user can jump there.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from approxcc.diagnostics import CompileError, SourceLocation


@dataclass(frozen=True)
class KnobSetting:
    """One entry of `knobs`: a static `value`, or a decision tree (`thresholds`, `decisions`)."""

    name: str
    loc: SourceLocation
    value: int | None = None
    thresholds: tuple[int | float, ...] | None = None
    decisions: tuple[int, ...] | None = None


def decide(thresholds: Sequence[int | float], decisions: Sequence[int],
           state: int | float) -> int:
    """The knob value a decision tree picks at `state`: `decisions[i]`, i the number of
    thresholds at or below the state (thresholds strictly increasing), as the C runtime's
    lowered `approx.decision_tree` does; the ML runtime and the systems' Python knobs use
    this one evaluator."""
    return decisions[bisect.bisect_right(thresholds, state)]


@dataclass(frozen=True)
class Config:
    path: str
    knobs: dict[str, KnobSetting]


# knob name -> {label: config value}, for the knobs whose values are labels (an ML knob's
# `values=["f32", "bf16"]`): a configuration may give the label instead of the value
Labels = Mapping[str, Mapping[str, int]]


# a configuration that is not a regular file (a pipe: `-fapprox-config=<(jq ... f.json)`),
# read once for the command that names it: it gives its text to the first reader only, and
# several phases of a build read the configuration
_READ_ONCE: dict[str, bytes] = {}


@contextmanager
def read_once(path: str | None) -> Iterator[None]:
    """Within the block, `path` (when it is not a regular file) is read once, at the first
    `load_config`; the text is kept until the block ends."""
    if not path or Path(path).is_file() or path in _READ_ONCE:
        yield
        return
    try:
        _READ_ONCE[path] = _read(path)
    except CompileError:
        yield   # the phases report it, at their place
        return
    try:
        yield
    finally:
        del _READ_ONCE[path]


def _read(path: str) -> bytes:
    if path in _READ_ONCE:
        return _READ_ONCE[path]
    try:
        return Path(path).read_bytes()
    except OSError as err:
        raise CompileError(f"cannot read configuration '{path}': {err.strerror}") from None


def load_config(path: str, labels: Labels | None = None) -> Config:
    data = _read(path)
    try:
        text = data.decode()
    except UnicodeDecodeError as err:  # JSON is UTF-8 (RFC 8259)
        line_start = data.rfind(b"\n", 0, err.start) + 1
        at = SourceLocation(path, data.count(b"\n", 0, err.start) + 1, err.start - line_start + 1)
        raise CompileError(f"invalid UTF-8 in configuration (byte 0x{data[err.start]:02x})",
                           at) from None
    return parse_config(text, path, labels)


def parse_config(text: str, path: str, labels: Labels | None = None) -> Config:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise CompileError(f"malformed configuration: {err.msg}",
                           SourceLocation(path, err.lineno, err.colno)) from None
    top = SourceLocation(path, 1, 1)
    if not isinstance(data, dict):
        raise CompileError("configuration must be a JSON object", top)
    if not isinstance(data.get("knobs"), dict):
        raise CompileError("configuration needs a \"knobs\" object", top)
    key_locs = _knob_key_locations(text, path)
    labels = labels or {}
    knobs = {name: _setting(name, entry, key_locs.get(name, top), labels.get(name, {}))
             for name, entry in data["knobs"].items()}
    return Config(path, knobs)


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _setting(name: str, entry: object, loc: SourceLocation,
             labels: Mapping[str, int]) -> KnobSetting:
    def fail(why: str) -> CompileError:
        return CompileError(f"knob '{name}': {why}", loc)

    def value(x: object) -> int | None:
        """An integer, or the config value of one of the knob's labels."""
        if isinstance(x, int) and not isinstance(x, bool):
            return x
        return labels.get(x) if isinstance(x, str) else None

    if isinstance(entry, dict) and entry.keys() == {"value"}:
        v = value(entry["value"])
        if v is None:
            raise fail("\"value\" must be an integer"
                       + _label_hint(labels, "one of its labels", entry["value"]))
        return KnobSetting(name, loc, value=v)
    if not (isinstance(entry, dict) and entry.keys() == {"thresholds", "decisions"}):
        raise fail("expected {\"value\": int} or {\"thresholds\": [...], \"decisions\": [...]}")
    thresholds, decisions = entry["thresholds"], entry["decisions"]
    if not (isinstance(thresholds, list)
            and all(_is_int(t) or isinstance(t, float) for t in thresholds)):
        raise fail("\"thresholds\" must be an array of numbers")
    if not isinstance(decisions, list):
        raise fail("\"decisions\" must be an array of integers"
                   + _label_hint(labels, "of its labels"))
    chosen = []
    for d in decisions:
        if (v := value(d)) is None:
            raise fail("\"decisions\" must be an array of integers"
                       + _label_hint(labels, "of its labels", d))
        chosen.append(v)
    if any(a >= b for a, b in zip(thresholds, thresholds[1:], strict=False)):
        raise fail(f"thresholds {thresholds} are not strictly increasing")
    if len(chosen) != len(thresholds) + 1:
        raise fail(f"{len(thresholds)} thresholds need {len(thresholds) + 1} decisions, "
                   f"got {len(chosen)}")
    return KnobSetting(name, loc, thresholds=tuple(thresholds), decisions=tuple(chosen))


def _label_hint(labels: Mapping[str, int], which: str, *given: object) -> str:
    """For a knob whose values are labels: which labels it takes (and what was given)."""
    if not labels:
        return ""
    got = f" (got {json.dumps(given[0])})" if given else ""
    return f" or {which} {', '.join(map(json.dumps, labels))}{got}"


# A JSON string literal, or a bracket; everything else (numbers, literals, commas) is skipped.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]]')
_COLON_AFTER = re.compile(r"\s*:")


def _knob_key_locations(text: str, path: str) -> dict[str, SourceLocation]:
    """Locations of the keys of the top-level "knobs" object (the JSON was already parsed,
    so the text is well formed)."""
    locs: dict[str, SourceLocation] = {}
    depth, top_key = 0, None
    for tok in _TOKEN.finditer(text):
        s = tok.group()
        if s in "{[":
            depth += 1
        elif s in "}]":
            depth -= 1
        elif _COLON_AFTER.match(text, tok.end()):
            if depth == 1:
                top_key = json.loads(s)
            elif depth == 2 and top_key == "knobs":
                line = text.count("\n", 0, tok.start()) + 1
                col = tok.start() - (text.rfind("\n", 0, tok.start()) + 1) + 1
                locs[json.loads(s)] = SourceLocation(path, line, col)
    return locs
