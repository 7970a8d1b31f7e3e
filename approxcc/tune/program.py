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

A JAX program (its one source a `.py`, built by approxcc's ML half) names the function to
run instead of a command line, and its inputs by a generator or by files of arrays:

```toml
[program]
name = "mlp"
sources = ["model.py"]
entry = "classify"             # a decorated function of model.py, or a function calling them

[run]
inputs = "model:inputs"        # module:function(split) -> list of input tuples, split in
                               # {"tune", "eval"}; or tune = [...], eval = [...]: .npy/.npz

[qos]
metric = "relL2"
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
    "program": {"name": str, "sources": list, "runtime": list, "flags": list, "entry": str},
    "run": {"args": list, "tune": list, "eval": list, "output": str, "inputs": str},
    "qos": {"metric": str},
}
_REQUIRED = {"program": ("name", "sources"), "run": (), "qos": ()}
# keys of one kind of program only: a C program's command line, a JAX program's entry
_C_ONLY = (("program", "runtime"), ("program", "flags"), ("run", "args"), ("run", "output"))
_PYTHON_ONLY = (("program", "entry"), ("run", "inputs"))
_SPEC = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")
ARRAY_FILES = (".npy", ".npz")


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
    language: str = "c"              # "c" | "python" (a JAX program: sources = one .py)
    entry: str = ""                  # python: the function of the module to run
    inputs: str = ""                 # python: "module:function" generating the inputs

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
    """Load `where` (an approx.toml or the folder holding one): a C/C++ program, or a JAX
    program when its one source is a `.py`."""
    project = read_project(where, "approx.toml", _SCHEMA, _REQUIRED)
    path, data, loc = project.path, project.data, project.loc
    prog, run = data["program"], data.get("run", {})
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

    def missing(section: str, key: str, also: str = "") -> CompileError:
        return CompileError(f"missing '{key}' in [{section}]{also}",
                            loc(section) if section in data else SourceLocation(str(path), 1, 1))

    sources = files("sources", "program", prog["sources"])
    python = any(s.suffix == ".py" for s in sources)
    language = "python" if python else "c"
    for section, key in _C_ONLY if python else _PYTHON_ONLY:
        if key in data.get(section, {}):
            why = ("a JAX program (a .py source) is run by calling its 'entry'" if python
                   else "it belongs to a JAX program, whose source is a .py")
            raise CompileError(f"'{key}' is not a key of this program: {why}",
                               loc(section, key))
    if python:
        if len(sources) != 1:
            raise CompileError("a JAX program has one source, the module of its model "
                               f"(got {len(sources)})", loc("program", "sources"))
        if "entry" not in prog:
            raise missing("program", "entry", ": the function of the module to run")
        if not re.fullmatch(r"[A-Za-z_]\w*", prog["entry"]):
            raise CompileError(f"'entry' must name a function of '{sources[0].name}', got "
                               f"'{prog['entry']}'", loc("program", "entry"))
        if "inputs" in run:
            if given := [k for k in ("tune", "eval") if k in run]:
                raise CompileError(f"'{given[0]}' and 'inputs' both give the inputs: keep "
                                   "one (a generator, or tune and eval files)",
                                   loc("run", given[0]))
            if not _SPEC.fullmatch(run["inputs"]):
                raise CompileError("'inputs' must be 'module:function' (a function of a "
                                   "module beside approx.toml, called with \"tune\" or "
                                   f"\"eval\"), got '{run['inputs']}'", loc("run", "inputs"))
        else:
            for key in ("tune", "eval"):
                if key not in run:
                    raise missing("run", key if "tune" in run or "eval" in run else "inputs",
                                  "" if "tune" in run or "eval" in run else
                                  " (a generator 'module:function', or tune and eval files)")
    else:
        for key in ("args", "tune", "eval"):
            if key not in run:
                raise missing("run", key)
        if not any("{input}" in a for a in run["args"]):
            raise CompileError("'args' must pass the input to the program: add \"{input}\"",
                               loc("run", "args"))
    runtime = files("runtime", "program", prog.get("runtime", []))
    tune, evals = (inputs("tune"), inputs("eval")) if "tune" in run else ([], [])
    if python:
        for key, found in (("tune", tune), ("eval", evals)):
            if odd := [p for p in found if p.suffix not in ARRAY_FILES]:
                raise CompileError(f"'{odd[0].name}' is not an array file: a JAX program's "
                                   f"inputs are .npy (one array) or .npz (its arrays in "
                                   f"order) files", loc("run", key))
    if both := sorted(set(tune) & set(evals)):
        raise CompileError(f"tuning and evaluation inputs must be disjoint: '{both[0].name}' "
                           f"is in both", loc("run", "eval"))
    default_metric = "relL2" if python else "l2"
    program = Program(path.resolve(), prog["name"], sources, runtime,
                      prog.get("flags", []), run.get("args", []), tune, evals,
                      run.get("output", "stdout"),
                      data.get("qos", {}).get("metric", default_metric),
                      language=language, entry=prog.get("entry", ""),
                      inputs=run.get("inputs", ""))
    program.locs = {"metric": loc("qos", "metric"), "output": loc("run", "output"),
                    "sources": loc("program", "sources"), "entry": loc("program", "entry"),
                    "inputs": loc("run", "inputs"), "tune": loc("run", "tune"),
                    "eval": loc("run", "eval")}
    return program


def substitute(items: list[str], input_path: Path) -> list[str]:
    return [a.replace("{input}", str(input_path)) for a in items]


def location(program: Program, key: str) -> SourceLocation:
    """Where a key was written, for diagnostics raised after loading (e.g. an unknown metric)."""
    return program.locs.get(key, SourceLocation(str(program.path), 1, 1))
