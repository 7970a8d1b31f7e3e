"""Shared test helpers: the approxcc driver run in-process, the system C compiler, and
"build it with approxcc and with `cc -O2`, run both, compare".

Tests import the helpers by name (`from conftest import run_approxcc`); pytest puts tests/
on sys.path. Running the driver in-process saves the ≈0.9 s of imports a fresh `approxcc`
process pays, while its result is what the console script would give: the exit status and
everything written to the two standard streams, the tools it runs included.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from approxcc.tune import Application, RunResult
from approxcc.tune.qos import metric
from approxcc.tune.space import Knob, KnobSpace

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "tune"   # the tuning example (smooth.c)
NOT_YET = "is not supported by the approxcc C frontend yet"


@dataclass(frozen=True)
class Result:
    """What a run of `approxcc` gave: its exit status and its two output streams."""

    returncode: int
    stdout: str
    stderr: str


def _applied(env: Mapping[str, str | None] | None) -> dict[str, str]:
    """This process's environment with `env` applied: a None value removes the variable."""
    full = dict(os.environ)
    for key, value in (env or {}).items():
        if value is None:
            full.pop(key, None)
        else:
            full[key] = value
    return full


@contextlib.contextmanager
def _environment(env: Mapping[str, str | None] | None) -> Iterator[None]:
    """os.environ with `env` applied, restored after."""
    saved, applied = dict(os.environ), _applied(env)
    try:
        os.environ.clear()
        os.environ.update(applied)
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _directory(cwd: str | Path | None) -> Iterator[None]:
    saved = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        os.chdir(saved)


@contextlib.contextmanager
def _standard_streams(stdin: bytes) -> Iterator[dict[str, str]]:
    """Points file descriptors 0-2 at temporary files, and sys.stdin/stdout/stderr at those
    descriptors, so that what child processes (cc, mlir-opt, ...) write is captured too and
    in the order it was written. The dict it gives is filled with "stdout" and "stderr" on
    leaving."""
    captured: dict[str, str] = {}
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved_fds = [os.dup(fd) for fd in (0, 1, 2)]
    with tempfile.TemporaryFile() as inp, tempfile.TemporaryFile() as out, \
            tempfile.TemporaryFile() as err:
        inp.write(stdin)
        inp.seek(0)
        try:
            for fd, file in enumerate((inp, out, err)):
                os.dup2(file.fileno(), fd)
            sys.stdin = open(0, encoding="utf-8", closefd=False)
            sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
            sys.stderr = open(2, "w", encoding="utf-8", closefd=False)
            yield captured
        finally:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(ValueError):
                    stream.flush()
            for fd, saved in enumerate(saved_fds):
                os.dup2(saved, fd)
                os.close(saved)
            sys.stdin, sys.stdout, sys.stderr = saved_streams
            for name, file in (("stdout", out), ("stderr", err)):
                file.seek(0)
                captured[name] = file.read().decode("utf-8", errors="replace")


def run_approxcc(args: Sequence[str | Path], cwd: str | Path | None = None,
                 env: Mapping[str, str | None] | None = None,
                 input: str | bytes | None = None) -> Result:
    """Runs `approxcc ARGS` in this process (`approxcc.cli.run`, the console script's body):
    in folder `cwd`, with the variables of `env` set (None unsets one) and `input` on its
    standard input."""
    from approxcc.cli import run

    stdin = input.encode() if isinstance(input, str) else (input or b"")
    with _environment(env), _directory(cwd), _standard_streams(stdin) as captured:
        status = run([str(a) for a in args])
    return Result(status, captured["stdout"], captured["stderr"])


def run_binary(exe: str | Path, *args: str, env: Mapping[str, str | None] | None = None,
               input: str | None = None, timeout: float = 30,
               cwd: str | Path | None = None) -> subprocess.CompletedProcess[str]:
    """Runs a built program; `env` is applied over this process's environment as in
    run_approxcc."""
    return subprocess.run([str(exe), *args], capture_output=True, text=True,
                          errors="replace", env=_applied(env), input=input, timeout=timeout,
                          cwd=cwd)


def output_of(exe: str | Path, *args: str, **kwargs: object) -> str:
    """What a built program prints; it must exit 0."""
    done = run_binary(exe, *args, **kwargs)
    assert done.returncode == 0, done.stderr
    return done.stdout


def cc(*args: str | Path, cwd: str | Path | None = None, compiler: str = "cc") -> None:
    """The system C (or, with compiler="c++", C++) compiler; it must succeed."""
    done = subprocess.run([compiler, *map(str, args)], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def approxcc_ok(*args: str | Path, cwd: str | Path | None = None,
                env: Mapping[str, str | None] | None = None) -> Result:
    """`approxcc ARGS`, which must exit 0 and print no traceback."""
    done = run_approxcc(args, cwd=cwd, env=env)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done


def write_sources(folder: Path, sources: str | Mapping[str, str]) -> list[str]:
    """Writes `sources` ({name: text}, or one text as p.c) into `folder`; their names."""
    if isinstance(sources, str):
        sources = {"p.c": sources}
    for name, text in sources.items():
        (folder / name).write_text(text)
    return list(sources)


def build_both(sources: str | Mapping[str, str], folder: Path, *flags: str,
               compiler: str = "cc", silent: bool = False,
               keep_temps: bool = False) -> tuple[Path, Path]:
    """`sources` built by approxcc (with `flags`; `silent`: printing nothing; `keep_temps`:
    with -save-temps, so `<stem>.approx.mlir` holds each file's approx IR) as `approx`, and
    by `compiler -O2` (same flags) as `ref`. Every function goes through approxcc's frontend
    (-fapprox-mlir=all): these are the frontend's differential tests."""
    names = write_sources(folder, sources)
    built = approxcc_ok("build", *names, *flags, "-fapprox-mlir=all",
                        *["-save-temps"] * keep_temps, "-o", "approx", cwd=folder)
    assert not silent or built.stderr == "", built.stderr
    cc("-O2", *names, *flags, "-o", "ref", "-lm", cwd=folder, compiler=compiler)
    return folder / "approx", folder / "ref"


def assert_same_as_cc(sources: str | Mapping[str, str], folder: Path, *flags: str,
                      compiler: str = "cc", silent: bool = False,
                      keep_temps: bool = False) -> str:
    """approxcc's build and `compiler -O2`'s print the same and exit alike; the output."""
    got, want = (run_binary(exe) for exe in build_both(sources, folder, *flags,
                                                        compiler=compiler, silent=silent,
                                                        keep_temps=keep_temps))
    assert want.stdout, "the program should print something"
    assert (got.stdout, got.returncode) == (want.stdout, want.returncode), got.stderr
    return got.stdout


MLIR_ALL = "-fapprox-mlir=all"  # every function through the MLIR frontend


def assert_same_as_cc_through_mlir(sources: str | Mapping[str, str], folder: Path,
                                   *flags: str, approx_flags: Sequence[str] = ()) -> str:
    """`sources` built by approxcc with every function through the MLIR frontend (MLIR_ALL
    and `approx_flags`: none left to the system compiler, no remainder) print what `cc -O2`
    builds and exit alike; the output."""
    names = write_sources(folder, sources)
    approxcc_ok("build", *names, *flags, MLIR_ALL, *approx_flags, "-save-temps", "-o",
                "approx", cwd=folder)
    for name in names:
        rest = folder / f"{Path(name).stem}.rest{Path(name).suffix}"
        assert not rest.exists() or not rest.read_text().strip(), rest.read_text()
    cc("-O2", *names, *flags, "-o", "ref", "-lm", cwd=folder)
    got, want = run_binary(folder / "approx"), run_binary(folder / "ref")
    assert want.stdout, "the program should print something"
    assert (got.stdout, got.returncode) == (want.stdout, want.returncode), got.stderr
    return got.stdout


def assert_same_as_cc_by_default(sources: str | Mapping[str, str], folder: Path,
                                 *flags: str) -> str:
    """`sources` built by approxcc without -fapprox-mlir=all (the annotated functions through
    MLIR, the rest through the remainder to the system compiler) print what `cc -O2` builds
    and exit alike; the output."""
    names = write_sources(folder, sources)
    approxcc_ok("build", *names, *flags, "-o", "approx", cwd=folder)
    cc("-O2", *names, *flags, "-o", "ref", "-lm", cwd=folder)
    got, want = run_binary(folder / "approx"), run_binary(folder / "ref")
    assert want.stdout, "the program should print something"
    assert (got.stdout, got.returncode) == (want.stdout, want.returncode), got.stderr
    return got.stdout


def diagnose(source: str, folder: Path, name: str = "t.c") -> str:
    """Building `source` fails cleanly: status 1, no traceback, no output file; its stderr."""
    (folder / name).write_text(source)
    done = run_approxcc(["build", name, "-o", "t.out"], cwd=folder)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert not (folder / "t.out").exists()
    return done.stderr


def where(source: str, needle: str, nth: int = 0) -> str:
    """`line:col` (1-based) of the `nth` occurrence of `needle` in `source`."""
    at = -1
    for _ in range(nth + 1):
        at = source.index(needle, at + 1)
    line = source.count("\n", 0, at) + 1
    return f"{line}:{at - (source.rfind(chr(10), 0, at) + 1) + 1}"


def write_config(path: Path, knobs: object, program: str = "t", **extra: object) -> str:
    """A configuration file `{"approxcc": "1", "program": …, "knobs": …, **extra}` at
    `path` (knobs as given, so that tests can write malformed ones); its path."""
    path.write_text(json.dumps({"approxcc": "1", "program": program, "knobs": knobs,
                                **extra}))
    return str(path)


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tmp_path, made the current folder for the test."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


# The files that take longest (real models, IREE builds, whole systems) start first, so
# that `make test`'s workers (pytest-xdist, a file per worker) finish together.
def example_module(path: Path, name: str) -> ModuleType:
    """A Python file of examples/ loaded by path (the examples are not a package), once under
    `name` (dataclasses look their module up in sys.modules)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


LONGEST_FIRST = ("test_models.py", "test_ml.py", "test_lit.py", "test_llm_tools.py",
                 "test_ml_ir.py", "test_tune.py", "test_system.py", "test_clang_driver.py",
                 "test_kernels.py", "test_dask.py", "test_system_kb.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))   # stable: file order


def small_example(tmp: Path, evals: int = 5, shorter: int = 4) -> Path:
    """The example with fewer eval inputs and signals `shorter` times shorter (an input is
    `SEED LENGTH NOISE`): the same program and knobs, runs a few times faster."""
    dst = tmp / "example"
    shutil.copytree(EXAMPLE, dst, ignore=shutil.ignore_patterns("tuned"))
    for extra in sorted((dst / "inputs" / "eval").iterdir())[evals:]:
        extra.unlink()
    for path in (dst / "inputs").glob("*/*.txt"):
        seed, length, noise = path.read_text().split()
        path.write_text(f"{seed} {int(length) // shorter} {noise}\n")
    return dst


class Synthetic(Application):
    """A Python system with a deterministic time model: identical measurements every run."""

    name = "synthetic"
    tune_inputs = ["1", "2"]
    eval_inputs = [str(i) for i in range(3, 13)]

    def __init__(self) -> None:
        self.metric = metric("l2")

    def build(self, workdir: Path) -> None:
        workdir.mkdir(parents=True, exist_ok=True)

    def knob_space(self) -> KnobSpace:
        return KnobSpace((Knob("a", "loop_perforate", (1, 2, 3, 4, 5, 6), 1),
                          Knob("b", "loop_perforate", (1, 2, 3, 4), 1, dynamic=True,
                               thresholds=2, range=(0, 50)),
                          Knob("c", "func_substitute", (0, 1, 2), 0)))

    def run(self, input: str, config_path: Path | None, workdir: Path,
            timeout: float) -> RunResult:
        knobs = json.loads(config_path.read_text())["knobs"] if config_path else {}
        a = knobs.get("a", {}).get("value", 1)
        c = knobs.get("c", {}).get("value", 0)
        b = knobs.get("b", {"value": 1})
        leaves = b.get("decisions") or [b["value"]]
        b_mean = sum(leaves) / len(leaves) + sum(b.get("thresholds", [])) / 1000
        x = int(input)
        out = f"{x * 100 + a * 0.3 + b_mean * 0.5 + c * 0.2:.4f}\n"
        return RunResult(out, 1.0 / (a * b_mean * (1 + c)), 0.0, True)

    def loss(self, exact_outputs: list[str], outputs: list[str]) -> float:
        return self.metric(exact_outputs, outputs)
