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
check = 60                         # the tune file's last 60: held out of the search, they
                                   # decide what ships (default: a third of the file)
eval_limit = 40                    # the tuned configurations measured on the first 40 eval
                                   # questions, reported only (default 40)

[qos]
metric = "contains"                # contains | exact | f1 | FILE.py:FUNCTION (scoring.py)
```

Every mistake is a `CompileError` at `system.toml:line:col`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from approxcc.diagnostics import CompileError, SourceLocation
from approxcc.tune.program import read_project

FILE = "system.toml"
_SCHEMA: dict[str, dict[str, type]] = {
    "system": {"name": str, "sources": list, "flags": list, "pipeline": str},
    "questions": {"tune": str, "eval": str, "batch": int, "check": int, "eval_limit": int},
    "qos": {"metric": str},
}
_REQUIRED = {"system": ("name", "sources", "pipeline"), "questions": ("tune", "eval"),
             "qos": ()}


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
    metric: str = "contains"
    metric_loc: SourceLocation | None = None
    check: int | None = None            # None: a third of the tune file
    check_loc: SourceLocation | None = None
    eval_limit: int = 40
    tune_loc: SourceLocation | None = None

    @property
    def root(self) -> Path:
        return self.path.parent


def is_system(where: str) -> bool:
    """`where` is a system.toml or a folder holding one."""
    path = Path(where)
    return path.name == FILE and path.is_file() or (path / FILE).is_file()


def load_project(where: str) -> SystemProject:
    """Load `where` (a system.toml or the folder holding one)."""
    project = read_project(where, FILE, _SCHEMA, _REQUIRED)
    path, data, loc = project.path, project.data, project.loc
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
    for key in ("check", "eval_limit"):
        if questions.get(key, 1) < 1:
            raise CompileError(f"'{key}' must be at least 1", loc("questions", key))
    qos = data.get("qos", {})
    return SystemProject(path.resolve(), system["name"], sources, system.get("flags", []),
                         system["pipeline"], tune, evals, batch, loc("system", "pipeline"),
                         qos.get("metric", "contains"),
                         loc("qos", "metric") if "metric" in qos else None,
                         questions.get("check"),
                         loc("questions", "check") if "check" in questions else None,
                         questions.get("eval_limit", 40), loc("questions", "tune"))
