"""`approx.toml`: what a C/C++ program to tune is, where its inputs are, how it is scored.

```toml
[program]
name = "smooth"
sources = ["smooth.c"]
runtime = ["state.c"]          # user runtime libraries, compiled with cc
flags = ["-DN=4"]              # optional: -I -D -U -std= for the approxcc frontend

[run]
args = ["{input}"]             # argv after the program; {input} = the input's path
tune = ["inputs/tune/*"]
eval = ["inputs/eval/*"]
output = "stdout"              # or a file the program writes ({input} substituted)

[qos]
metric = "l2"
```

Every mistake is a `CompileError` at `approx.toml:line:col` (tomllib gives no positions, so
keys are located in the text).
"""

from __future__ import annotations

import glob
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from approxcc.diagnostics import CompileError, SourceLocation

_SCHEMA: dict[str, dict[str, type]] = {
    "program": {"name": str, "sources": list, "runtime": list, "flags": list},
    "run": {"args": list, "tune": list, "eval": list, "output": str},
    "qos": {"metric": str},
}
_REQUIRED = {"program": ("name", "sources"), "run": ("args", "tune", "eval"), "qos": ()}


@dataclass
class Program:
    path: Path                       # the approx.toml
    name: str
    sources: list[Path]
    runtime: list[Path]
    flags: list[str]
    args: list[str]
    tune_inputs: list[Path]
    eval_inputs: list[Path]
    output: str = "stdout"
    metric: str = "l2"
    locs: dict[str, SourceLocation] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return self.path.parent


def _locate(text: str, path: str, section: str, key: str | None) -> SourceLocation:
    """Where `[section]` or the key of `key = ...` inside it is written."""
    current = None
    for n, line in enumerate(text.splitlines(), 1):
        head = re.match(r"\s*\[\s*([A-Za-z0-9_.-]+)\s*\]", line)
        if head:
            current = head.group(1)
            if key is None and current == section:
                return SourceLocation(path, n, head.start(1))
            continue
        m = re.match(rf"\s*({re.escape(key)})\s*=\s*", line) if key else None
        if current == section and m:
            return SourceLocation(path, n, m.start(1) + 1)
    return SourceLocation(path, 1, 1)


Schema = dict[str, dict[str, type]]


@dataclass(frozen=True)
class ProjectFile:
    """A project's TOML file, read and checked against its schema; `loc` locates its keys."""

    path: Path
    text: str
    data: dict

    def loc(self, section: str, key: str | None = None) -> SourceLocation:
        return _locate(self.text, str(self.path), section, key)


def read_project(where: str, file_name: str, schema: Schema,
                 required: dict[str, tuple[str, ...]]) -> ProjectFile:
    """`where` (`file_name` or the folder holding it) read and checked: known sections and
    keys, each of its type (str, int or list of str), the required keys present."""
    path = Path(where)
    if path.is_dir():
        path = path / file_name
    try:
        text = path.read_text()
    except OSError as err:
        raise CompileError(f"cannot read '{path}': {err.strerror}") from None
    name = str(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(err))
        loc = SourceLocation(name, int(m.group(1)), int(m.group(2))) if m else \
            SourceLocation(name, 1, 1)
        raise CompileError(f"malformed {file_name}: {str(err).split(' (at')[0]}", loc) \
            from None
    project = ProjectFile(path, text, data)
    loc = project.loc
    for section, entries in data.items():
        if section not in schema:
            raise CompileError(f"unknown section [{section}] (expected "
                               f"{', '.join(f'[{s}]' for s in schema)})", loc(section))
        if not isinstance(entries, dict):
            raise CompileError(f"'{section}' must be a table", loc(section))
        for key, value in entries.items():
            want = schema[section].get(key)
            if want is None:
                raise CompileError(f"unknown key '{key}' in [{section}]", loc(section, key))
            if not isinstance(value, want) or isinstance(value, bool) or (
                    want is list and not all(isinstance(v, str) for v in value)):
                kind = {str: "a string", int: "an integer"}.get(want, "an array of strings")
                raise CompileError(f"'{key}' must be {kind}", loc(section, key))
    for section, keys in required.items():
        for key in keys:
            if key not in data.get(section, {}):
                raise CompileError(f"missing '{key}' in [{section}]",
                                   loc(section) if section in data else SourceLocation(name, 1, 1))
    return project


def load_program(where: str) -> Program:
    """Load `where` (an approx.toml or the folder holding one)."""
    project = read_project(where, "approx.toml", _SCHEMA, _REQUIRED)
    path, data, loc = project.path, project.data, project.loc
    prog, run = data["program"], data["run"]
    root = path.parent

    def files(key: str, section: str, given: list[str]) -> list[Path]:
        out = []
        for item in given:
            p = root / item
            if not p.is_file():
                raise CompileError(f"no such file: '{item}'", loc(section, key))
            out.append(p.resolve())
        return out

    def inputs(key: str) -> list[Path]:
        found: list[Path] = []
        for pattern in run[key]:
            matches = sorted(Path(p).resolve() for p in glob.glob(str(root / pattern))
                             if Path(p).is_file())
            if not matches:
                raise CompileError(f"'{pattern}' matches no input file", loc("run", key))
            found += matches
        return found

    if not any("{input}" in a for a in run["args"]):
        raise CompileError("'args' must pass the input to the program: add \"{input}\"",
                           loc("run", "args"))
    sources = files("sources", "program", prog["sources"])
    runtime = files("runtime", "program", prog.get("runtime", []))
    tune, evals = inputs("tune"), inputs("eval")
    if both := sorted(set(tune) & set(evals)):
        raise CompileError(f"tuning and evaluation inputs must be disjoint: '{both[0].name}' "
                           f"is in both", loc("run", "eval"))
    program = Program(path.resolve(), prog["name"], sources, runtime,
                      prog.get("flags", []), run["args"], tune, evals,
                      run.get("output", "stdout"), data.get("qos", {}).get("metric", "l2"))
    program.locs = {"metric": loc("qos", "metric"), "output": loc("run", "output"),
                    "sources": loc("program", "sources")}
    return program


def substitute(items: list[str], input_path: Path) -> list[str]:
    return [a.replace("{input}", str(input_path)) for a in items]


def location(program: Program, key: str) -> SourceLocation:
    """Where a key was written, for diagnostics raised after loading (e.g. an unknown metric)."""
    return program.locs.get(key, SourceLocation(str(program.path), 1, 1))
