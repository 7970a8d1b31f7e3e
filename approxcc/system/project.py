"""`system.toml`: what a compound system is made of and which questions tune and evaluate it.

```toml
[system]
name = "rag_bm25"
sources = ["rag.c", "state.c"]     # built into one tunable shared library
flags = ["-DTOP=3"]                # optional: -I -D -U -std= for the approxcc frontend
pipeline = "pipeline.py:RagBm25"   # the Python half: FILE:CLASS, an approxcc.system Pipeline

[questions]
tune = "../questions/tune.jsonl"   # NQ-open JSONL
eval = "../questions/eval.jsonl"
batch = 10                         # questions per tuning input
```

Every mistake is a `CompileError` at `system.toml:line:col`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from approxcc.diagnostics import CompileError, SourceLocation
from approxcc.tune.program import _locate

FILE = "system.toml"
_SCHEMA: dict[str, dict[str, type]] = {
    "system": {"name": str, "sources": list, "flags": list, "pipeline": str},
    "questions": {"tune": str, "eval": str, "batch": int},
}
_REQUIRED = {"system": ("name", "sources", "pipeline"), "questions": ("tune", "eval")}


@dataclass(frozen=True)
class SystemProject:
    path: Path
    name: str
    sources: list[Path]
    flags: list[str]
    pipeline: str
    tune_questions: Path
    eval_questions: Path
    batch: int
    pipeline_loc: SourceLocation

    @property
    def root(self) -> Path:
        return self.path.parent


def is_system(where: str) -> bool:
    """`where` is a system.toml or a folder holding one."""
    path = Path(where)
    return path.name == FILE and path.is_file() or (path / FILE).is_file()


def load_project(where: str) -> SystemProject:
    """Load `where` (a system.toml or the folder holding one)."""
    path = Path(where)
    if path.is_dir():
        path = path / FILE
    try:
        text = path.read_text()
    except OSError as err:
        raise CompileError(f"cannot read '{path}': {err.strerror}") from None
    name = str(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise CompileError(f"malformed {FILE}: {str(err).split(' (at')[0]}",
                           SourceLocation(name, getattr(err, "lineno", 1),
                                          getattr(err, "colno", 1))) from None

    def loc(section: str, key: str | None = None) -> SourceLocation:
        return _locate(text, name, section, key)

    for section, entries in data.items():
        if section not in _SCHEMA or not isinstance(entries, dict):
            raise CompileError(f"unknown section [{section}] (expected [system], [questions])",
                               loc(section))
        for key, value in entries.items():
            want = _SCHEMA[section].get(key)
            if want is None:
                raise CompileError(f"unknown key '{key}' in [{section}]", loc(section, key))
            if not isinstance(value, want) or isinstance(value, bool) or (
                    want is list and not all(isinstance(v, str) for v in value)):
                kind = {str: "a string", int: "an integer"}.get(want, "an array of strings")
                raise CompileError(f"'{key}' must be {kind}", loc(section, key))
    for section, keys in _REQUIRED.items():
        for key in keys:
            if key not in data.get(section, {}):
                raise CompileError(f"missing '{key}' in [{section}]",
                                   loc(section) if section in data else SourceLocation(name, 1, 1))
    system, questions = data["system"], data["questions"]
    root = path.parent

    def existing(item: str, section: str, key: str) -> Path:
        p = root / item
        if not p.is_file():
            raise CompileError(f"no such file: '{item}'", loc(section, key))
        return p.resolve()

    sources = [existing(s, "system", "sources") for s in system["sources"]]
    if not sources:
        raise CompileError("'sources' names no C file", loc("system", "sources"))
    tune = existing(questions["tune"], "questions", "tune")
    evals = existing(questions["eval"], "questions", "eval")
    if tune == evals:
        raise CompileError("tuning and evaluation questions must be different files",
                           loc("questions", "eval"))
    batch = questions.get("batch", 10)
    if batch < 1:
        raise CompileError("'batch' must be at least 1", loc("questions", "batch"))
    return SystemProject(path.resolve(), system["name"], sources, system.get("flags", []),
                         system["pipeline"], tune, evals, batch, loc("system", "pipeline"))
