"""approxcc as `CC` on real C code nobody here wrote, side by side with gcc.

    python bench/real_c.py FOLDER [--only NAME ...] [--repeats N] [--jobs N] [--file-by-file]

FOLDER (build/real-c) holds the code of bench/real_c_repos.toml, each checked out under its
name (the table says how).

Projects (`[[project]]`) are built by their own build systems (configure, cmake, make), in
separate copies of the checkout: once with CC=gcc, once with CC=approxcc, nothing else told
apart. Per project: build time of each and their ratio; the project's own tests, passed with
each build; the run time of a representative workload, approxcc's build over gcc's (median of
interleaved runs); then the perforated builds: one `#pragma approx loop_perforate knob(hot)`
inserted before a hot counted loop and the project built with approxcc, without a
configuration (its `check` must print what the gcc build prints) and with
{"knobs": {"hot": {"value": 2}}} (every second iteration: the output may change). The
configuration reaches every command through a wrapper (CC) that runs again without it a
command rejecting it: a link of a program without the knob (a configure probe) does.
Tracebacks, internal compiler errors and failures that only the approxcc build has are listed
at the end, and everything is written to FOLDER/results.json.

With --file-by-file, the code bases (`[[codebase]]`) are compiled file by file too: every
program built with `cc -O2`, `approxcc -O2` and approxcc with the pragma before the table's hot
loop; per code base: files through MLIR, files with a function left to the system compiler,
files approxcc failed on, tracebacks, programs whose output is that of the `cc -O2` build, run
time over `cc -O2`, perforated builds that built and those whose output changed. Through MLIR
or not is read from what `-save-temps=obj` keeps: the functions the MLIR module defines
(`NAME.approx.mlir`) against the function definitions of the source (libclang).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from clang.cindex import CursorKind, Index
from rich.console import Console
from rich.table import Table

TABLE = Path(__file__).with_name("real_c_repos.toml")
APPROXCC = str(Path(sys.executable).parent / "approxcc")
RUN_TIMEOUT = 120
MIN_SECONDS, MAX_RUNS = 1.0, 200  # timing of programs that run for milliseconds
PRAGMA = "#pragma approx loop_perforate knob(hot) values(1:4)\n"
# an MLIR function with a body: `func.func [private] @name(...) ... {`
_DEFINED = re.compile(r'^\s*func\.func (?:private |public )?@"?([\w$.]+)"?\(.*\{\s*$', re.M)
_LINK_NAME = re.compile(r"^__approx_[0-9a-f]{8}_")  # tu_split's name for an internal symbol
console = Console(width=None if sys.stdout.isatty() else 200)


@dataclass(frozen=True)
class Program:
    name: str
    sources: tuple[str, ...]
    cflags: tuple[str, ...]
    ldflags: tuple[str, ...]
    hot: str | None  # FILE:LINE or FILE:FUNCTION


@dataclass
class FileResult:
    """One source compiled by approxcc: "mlir", "fallback" or "error"."""
    status: str
    fallbacks: list[str] = field(default_factory=list)
    message: str = ""
    traceback: bool = False


@dataclass
class Outcome:
    program: Program
    identical: bool | None = None  # None: the exact build did not build or run
    builds: tuple[Path, Path] | None = None  # (cc -O2, approxcc exact) executables
    ratio: float | None = None
    perforated: str = "-"          # "changed", "same", "failed: ...", "-" (no hot loop)
    problem: str = ""              # why the program was not measured


def programs(entry: dict, root: Path) -> list[Program]:
    cflags, ldflags = tuple(entry.get("cflags", [])), tuple(entry.get("ldflags", []))
    out = [Program(p["name"], tuple(p["sources"]), cflags + tuple(p.get("cflags", [])),
                   ldflags, p.get("hot")) for p in entry.get("programs", [])]
    each = entry.get("each")
    if each:
        for src in sorted(root.glob(each["glob"])):
            path = src.relative_to(root).as_posix()
            if path.startswith(tuple(each.get("exclude", []))):
                continue
            fill = {"path": path, "stem": src.stem, "ident": re.sub(r"\W", "_", src.stem)}
            out.append(Program(src.stem, tuple(s.format(**fill) for s in each["sources"]),
                               cflags, ldflags, each["hot"].format(**fill)))
    return out


def run(argv: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, errors="replace",
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, 124, "", f"timed out after {timeout} s")


def first_problem(stderr: str) -> str:
    """The innermost approxcc frame and the exception of a traceback, else the first error."""
    if "Traceback" in stderr:
        frames = re.findall(r'File "([^"]*approxcc/[^"]*)", line (\d+), in (\w+)', stderr)
        last = stderr.strip().splitlines()[-1]
        where = f"{Path(frames[-1][0]).name}:{frames[-1][1]} ({frames[-1][2]})" if frames else ""
        return f"Traceback at {where}: {last}"
    errors = [line for line in stderr.splitlines() if "error:" in line]
    return (errors or stderr.strip().splitlines() or ["(no message)"])[0]


def defined_functions(src: Path, flags: tuple[str, ...]) -> set[str]:
    tu = Index.create().parse(str(src), args=list(flags))
    return {c.spelling for c in tu.cursor.walk_preorder()
            if c.kind == CursorKind.FUNCTION_DECL and c.is_definition() and c.location.file
            and Path(c.location.file.name).resolve() == src.resolve()}


class Builder:
    """Compiles and links the programs of one code base, each object once per flags."""

    def __init__(self, root: Path, work: Path, approxcc: str, cflags: tuple[str, ...]):
        self.root, self.work, self.approxcc, self.cflags = root, work, approxcc, cflags
        self.lock = threading.Lock()  # programs are built in threads: one build per object
        self.objects: dict[tuple, tuple[threading.Lock, list]] = {}

    def compile(self, variant: str, tree: Path, src: str, flags: tuple[str, ...],
                extra: tuple[str, ...] = ()) -> tuple[Path | None, FileResult | None]:
        key = (variant, tree, src, flags, extra)
        with self.lock:
            if key not in self.objects:
                self.objects[key] = (threading.Lock(), [])
            folder = self.work / variant / f"{list(self.objects).index(key)}"
            lock, made = self.objects[key]
        with lock:
            if not made:
                made += self.build_object(variant, tree, src, flags, extra, folder)
        return made[0], made[1]

    def build_object(self, variant: str, tree: Path, src: str, flags: tuple[str, ...],
                     extra: tuple[str, ...], folder: Path) -> tuple[Path | None,
                                                                    FileResult | None]:
        folder.mkdir(parents=True)
        obj = folder / (Path(src).stem + ".o")
        absolute = tuple(f"-I{tree / f[2:]}" if f.startswith("-I") else f for f in flags)
        if variant == "cc":
            done = run(["cc", "-O2", *absolute, "-c", str(tree / src), "-o", str(obj)], folder)
            return (obj if done.returncode == 0 else None), None
        done = run([self.approxcc, "-O2", *absolute, *extra, "-save-temps=obj", "-c",
                    str(tree / src), "-o", str(obj)], folder)
        return (obj if done.returncode == 0 else None), self.classify(done, tree / src,
                                                                      absolute, folder)

    def classify(self, done: subprocess.CompletedProcess[str], src: Path,
                 flags: tuple[str, ...], folder: Path) -> FileResult:
        traceback = "Traceback" in done.stderr
        if done.returncode != 0:
            return FileResult("error", message=first_problem(done.stderr), traceback=traceback)
        mlir = next(folder.glob("*.approx.mlir"), None)
        emitted = {_LINK_NAME.sub("", m) for m in _DEFINED.findall(mlir.read_text())} \
            if mlir else set()
        left = sorted(defined_functions(src, flags) - emitted)
        return FileResult("fallback" if left else "mlir", left, traceback=traceback)

    def link(self, variant: str, objects: list[Path], ldflags: tuple[str, ...],
             name: str) -> Path | str:
        exe = self.work / variant / name
        linker = "cc" if variant == "cc" else self.approxcc
        done = run([linker, *map(str, objects), *ldflags, "-o", str(exe)], self.work)
        return exe if done.returncode == 0 else f"link: {first_problem(done.stderr)}"


def pragma_at(lines: list[str], where: str) -> int | None:
    """The index of the line the pragma goes before: `where` is a line number (1-based) or
    a function, whose first `for` it is."""
    if where.isdigit():
        return int(where) - 1
    start = next((i for i, line in enumerate(lines)
                  if re.match(rf"^\w[\w\s\*]*\b{re.escape(where)}\s*\(", line)), None)
    if start is None:
        return None
    return next((i for i in range(start, len(lines)) if re.match(r"\s*for\s*\(", lines[i])),
                None)


def insert_pragma(tree: Path, hot: str) -> str | None:
    """The pragma inserted in `tree` at `hot` (FILE:LINE or FILE:FUNCTION); None, or why not."""
    file, where = hot.rsplit(":", 1)
    lines = (tree / file).read_text(errors="replace").splitlines(keepends=True)
    at = pragma_at(lines, where)
    if at is None:
        return f"no `for` in {where}"
    (tree / file).write_text("".join(lines[:at] + [PRAGMA] + lines[at:]))
    return None


def perforated_tree(root: Path, work: Path, hot: str) -> tuple[Path, str] | str:
    """A copy of the code base with the pragma before the hot loop; (copy, file) or why not."""
    tree = work / "perforated" / re.sub(r"\W", "_", hot)
    shutil.copytree(root, tree, dirs_exist_ok=True)
    why = insert_pragma(tree, hot)
    return why if why else (tree, hot.rsplit(":", 1)[0])


def run_program(exe: Path) -> tuple[int, str, str]:
    done = run([str(exe)], exe.parent, RUN_TIMEOUT)
    return done.returncode, done.stdout, done.stderr


def seconds(exe: Path) -> float:
    start = time.perf_counter()
    run([str(exe)], exe.parent, RUN_TIMEOUT)
    return time.perf_counter() - start


def build_and_run(builder: Builder, files: dict[str, FileResult], prog: Program) -> Outcome:
    """The three builds of `prog`, each run once."""
    root, out = builder.root, Outcome(prog)
    exes: dict[str, Path | str] = {}
    for variant in ("cc", "approxcc"):
        objects = []
        for src in prog.sources:
            obj, result = builder.compile(variant, root, src, prog.cflags)
            if result is not None:  # a source built with other flags counts again
                files[" ".join((src, *prog.cflags[len(builder.cflags):]))] = result
            objects.append(obj)
        exes[variant] = builder.link(variant, objects, prog.ldflags, prog.name) \
            if all(objects) else "compile failed"
    ref, exact = exes["cc"], exes["approxcc"]
    if not isinstance(ref, Path):
        out.problem = f"cc -O2 cannot build it ({ref}): check the recipe"
        return out
    want = run_program(ref)
    if isinstance(exact, Path):
        got = run_program(exact)
        out.identical, out.builds = got == want, (ref, exact)
    if prog.hot:
        out.perforated = perforate(builder, prog, got if isinstance(exact, Path) else want)
    return out


def interleaved(runs: dict[str, Callable[[], float]], repeats: int) -> dict[str, float]:
    """The median seconds of each of `runs`, run in turn so that the machine's drift hits all;
    short ones run until each has had MIN_SECONDS."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    while min(map(len, times.values())) < repeats or (
            min(map(sum, times.values())) < MIN_SECONDS
            and min(map(len, times.values())) < MAX_RUNS):
        for name, once in runs.items():
            times[name].append(once())
    return {name: statistics.median(t) for name, t in times.items()}


def time_ratio(ref: Path, exact: Path, repeats: int) -> float:
    """Median run time of the exact build over that of `cc -O2`'s."""
    medians = interleaved({"ref": functools.partial(seconds, ref),
                           "exact": functools.partial(seconds, exact)}, repeats)
    return medians["exact"] / medians["ref"]


def perforate(builder: Builder, prog: Program, exact: tuple[int, str, str]) -> str:
    with builder.lock:
        made = perforated_tree(builder.root, builder.work, prog.hot)
    if isinstance(made, str):
        return f"failed: {made}"
    tree, hot_file = made
    config = builder.work / f"{prog.name}.hot.json"
    config.write_text(json.dumps({"approxcc": "1", "program": prog.name,
                                  "knobs": {"hot": {"value": 2}}}))
    objects = []
    for src in prog.sources:
        on_hot = src == hot_file
        obj, result = builder.compile("approxcc", tree if on_hot else builder.root, src,
                                      prog.cflags, ("--config", str(config)) if on_hot else ())
        if obj is None:
            return f"failed: {result.message if result else '?'}"
        objects.append(obj)
    exe = builder.link("perforated", objects, prog.ldflags, prog.name)
    if isinstance(exe, str):
        return f"failed: {exe}"
    return "same" if run_program(exe) == exact else "changed"


def report(name: str, files: dict[str, FileResult], outcomes: list[Outcome],
           summary: Table, failures: Table) -> None:
    count = {s: sum(r.status == s for r in files.values()) for s in ("mlir", "fallback", "error")}
    ratios = [o.ratio for o in outcomes if o.ratio]
    tried = [o for o in outcomes if o.program.hot]
    summary.add_row(
        name, str(len(files)), str(count["mlir"]), str(count["fallback"]), str(count["error"]),
        str(sum(r.traceback for r in files.values())),
        f"{sum(bool(o.identical) for o in outcomes)}/{len(outcomes)}",
        f"{statistics.geometric_mean(ratios):.3f}" if ratios else "-",
        f"{sum(not o.perforated.startswith('failed') for o in tried)}/{len(tried)}",
        str(sum(o.perforated == "changed" for o in tried)))
    for src, r in sorted(files.items()):
        if r.status == "error":
            failures.add_row(name, src, r.message)
        elif r.status == "fallback":
            failures.add_row(name, src, f"fallback: {', '.join(r.fallbacks)}")
    for o in outcomes:
        if o.problem:
            failures.add_row(name, o.program.name, o.problem)
        if o.identical is False:
            failures.add_row(name, o.program.name, "exact build's output differs from cc -O2")
        if o.perforated.startswith("failed"):
            failures.add_row(name, f"{o.program.name} (perforated at {o.program.hot})",
                             o.perforated)
        elif o.perforated == "same":
            failures.add_row(name, f"{o.program.name} (perforated at {o.program.hot})",
                             "built; prints what the exact build prints")


def file_by_file(args: argparse.Namespace) -> None:
    """The code bases of the table, compiled file by file."""
    summary = Table(title=f"approxcc on public C code ({args.repeats} interleaved runs)")
    for column in ("code base", "files", "through MLIR", "fallback", "errors", "tracebacks",
                   "identical to cc", "exact/cc -O2 time", "perforated built",
                   "output changed"):
        summary.add_column(column, justify="right")
    failures = Table(title="failures, fallbacks and perforations without effect")
    for column in ("code base", "file / program", "first problem"):
        failures.add_column(column, overflow="fold")
    with tempfile.TemporaryDirectory(prefix="real-c-") as tmp:
        for entry in tomllib.loads(TABLE.read_text())["codebase"]:
            root = args.folder / entry["name"]
            if not root.is_dir():
                console.print(f"[yellow]{entry['name']}: not in {args.folder}; check out "
                              f"{entry['repo']} at {entry['commit']}[/]")
                continue
            chosen = [p for p in programs(entry, root) if not args.only or
                      entry["name"] in args.only or p.name in args.only]
            if not chosen:
                continue
            builder = Builder(root.resolve(), Path(tmp) / entry["name"], args.approxcc,
                              tuple(entry.get("cflags", [])))
            files: dict[str, FileResult] = {}
            with ThreadPoolExecutor(args.jobs) as pool:
                outcomes = list(pool.map(functools.partial(build_and_run, builder, files),
                                         chosen))
            for o in outcomes:  # one at a time, with nothing else of ours running
                if o.builds is not None:
                    o.ratio = time_ratio(*o.builds, args.repeats)
            report(entry["name"], files, outcomes, summary, failures)
    console.print(summary)
    if failures.row_count:
        console.print(failures)


# --- projects built by their own build systems ------------------------------------------

BUILD_TIMEOUT, TEST_TIMEOUT = 1800, 900
HOT_CONFIG = {"approxcc": "1", "knobs": {"hot": {"value": 2}}}
# Makefile variables of `make bench-real-c` must not reach the projects' own makes
MAKE_VARIABLES = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")
FAILURE_SIGNS = ("Traceback (most recent call last)", "internal compiler error")
TOOLS = ("exrex",)
MLIR_ALL = "approxcc mlir=all"  # every function through MLIR: the frontend on all the code
# the copies' folders, by compiler: names of one length, so that their paths in the files
# built (__FILE__, rpaths) can be swapped when the builds are compared
TREES = {"gcc": "gcc", "approxcc": "acc", MLIR_ALL: "all"}
# CC of the configured perforated build: the configuration on every command; one that lacks the
# knob (a configure probe, a program without the hot loop) rejects it, and runs again without
# (and not on a command without inputs: `-v` with an approxcc flag does not say gcc, and
# configure scripts ask `$CC -v` whether the compiler is gcc)
WRAPPER = """#!/bin/sh
case "$*" in *.c*|*.o*|*.a*|*.so*) ;; *) exec {approxcc} "$@";; esac
err=$(mktemp)
{approxcc} -fapprox-config={config} "$@" 2>"$err"; rc=$?
if [ $rc -ne 0 ] && grep -q "unknown knob 'hot'" "$err"; then rm -f "$err"; exec {approxcc} "$@"; fi
cat "$err" >&2; rm -f "$err"; exit $rc
"""  # Python packages of the projects' own test scripts (tiny-regex-c's)


@dataclass(frozen=True)
class Test:
    name: str
    cmd: str
    count: str | None = None  # regex: named groups passed / failed / total, summed


@dataclass(frozen=True)
class Project:
    name: str
    kind: str
    repo: str
    commit: str
    build: str
    tests: tuple[Test, ...]
    files: dict[str, str]
    prepare: str | None
    bench: str | None
    hot: str | None
    check: str | None

    @classmethod
    def from_entry(cls, e: dict) -> Project:
        return cls(e["name"], e["kind"], e["repo"], e["commit"], e["build"],
                   tuple(Test(**t) for t in e.get("tests", [])), e.get("files", {}),
                   e.get("prepare"), e.get("bench"), e.get("hot"),
                   e.get("check", e.get("bench")))


@dataclass
class BuildResult:
    """One copy of a project built with one compiler, and its tests."""
    compiler: str
    built: bool = False
    build_s: float = 0.0
    passed: int = 0
    total: int = 0
    failed_tests: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # build errors, tracebacks, ICEs


@dataclass
class ProjectResult:
    name: str
    kind: str
    repo: str
    commit: str
    gcc: BuildResult
    approxcc: BuildResult
    mlir_all: BuildResult | None = None  # approxcc -fapprox-mlir=all (--mlir-all)
    build_ratio: dict[str, float] = field(default_factory=dict)  # over gcc's, by compiler
    run_s: dict[str, float] = field(default_factory=dict)  # median seconds, by compiler
    run_ratio: dict[str, float] = field(default_factory=dict)  # over gcc's, by compiler
    perforated: dict[str, str] = field(default_factory=dict)  # "no config" / "hot=2" -> what
    same_elf: tuple[int, int] | None = None  # ELF files (objects, programs) byte for byte
    approxcc_failures: list[str] = field(default_factory=list)


class Shell:
    """Runs a project's commands in one copy of it, with `$CC` (and `$JOBS`) set."""

    def __init__(self, tree: Path, cc: str, jobs: int, tools: Path | None):
        self.tree = tree
        self.env = {k: v for k, v in os.environ.items() if k not in MAKE_VARIABLES}
        self.env |= {"CC": cc, "JOBS": str(jobs)}
        if tools is not None:
            self.env["PATH"] = f"{tools}{os.pathsep}{self.env.get('PATH', '')}"

    def __call__(self, cmd: str, timeout: float) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(["bash", "-c", cmd], cwd=self.tree, env=self.env, text=True,
                                  errors="replace", stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=timeout)
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(cmd, 124, f"timed out after {timeout} s")

    def seconds(self, cmd: str) -> float:
        start = time.perf_counter()
        self(cmd, RUN_TIMEOUT)
        return time.perf_counter() - start


def ensure_tools(folder: Path) -> Path | None:
    """A virtual environment in FOLDER/tools with TOOLS (its bin folder), made once."""
    venv = folder / "tools"
    python = venv / "bin" / "python"
    have = python.exists() and subprocess.run(
        [str(python), "-c", "import " + ", ".join(TOOLS)], capture_output=True).returncode == 0
    if not have:
        made = subprocess.run(f"{sys.executable} -m venv --without-pip --clear {venv} && "
                              f"{sys.executable} -m pip -q --python {python} install "
                              + " ".join(TOOLS), shell=True, capture_output=True, text=True)
        if made.returncode != 0:  # pip older than 22.3 has no --python: the venv's own pip
            made = subprocess.run(f"{sys.executable} -m venv --clear {venv} && "
                                  f"{python} -m pip -q install " + " ".join(TOOLS),
                                  shell=True, capture_output=True, text=True)
        if made.returncode != 0:
            console.print(f"[yellow]no {', '.join(TOOLS)} in {venv}: tests that need them "
                          f"fail in both builds\n{made.stderr[-500:]}[/]")
            return None
    return venv / "bin"


def count_tests(test: Test, done: subprocess.CompletedProcess[str]) -> tuple[int, int]:
    """(passed, run) of one test command: its `count` matches, else 1 test, passed on 0."""
    if test.count is None:
        return int(done.returncode == 0), 1
    passed = total = 0
    for match in re.finditer(test.count, done.stdout):
        g = {k: int(v) for k, v in match.groupdict().items() if v is not None}
        run_ = g.get("total", g.get("passed", 0) + g.get("failed", 0))
        passed += g.get("passed", run_ - g.get("failed", 0))
        total += run_
    if done.returncode != 0 and passed == total:  # failed beyond what it counted
        total += 1
    return passed, total


def signs_of_failure(output: str, what: str) -> list[str]:
    """A traceback's last line or an internal compiler error's, found in `output`."""
    found = []
    for sign in FAILURE_SIGNS:
        at = output.find(sign)
        if at >= 0:
            tail = output[at:].splitlines()
            last = next((line for line in tail[1:] if line and not line.startswith(" ")),
                        tail[0]) if sign.startswith("Traceback") else tail[0]
            found.append(f"{what}: {last.strip()}")
    return found


def copy_project(src: Path, tree: Path, project: Project) -> None:
    if tree.exists():
        shutil.rmtree(tree)
    shutil.copytree(src, tree, symlinks=True)
    for name, text in project.files.items():
        (tree / name).write_text(text.lstrip("\n"))


def build(project: Project, shell: Shell, compiler: str, tests: bool) -> BuildResult:
    """Builds the copy (timed), prepares the workload, runs the tests if asked."""
    result = BuildResult(compiler)
    start = time.perf_counter()
    done = shell(project.build, BUILD_TIMEOUT)
    result.build_s = time.perf_counter() - start
    result.built = done.returncode == 0
    result.problems += signs_of_failure(done.stdout, "build")
    if not result.built:
        errors = [line for line in done.stdout.splitlines() if "error:" in line]
        result.problems.append(f"build failed: {(errors or done.stdout.splitlines()[-1:])[0]}")
        return result
    if project.prepare:
        done = shell(project.prepare, BUILD_TIMEOUT)
        if done.returncode != 0:
            result.problems.append(f"prepare failed: {done.stdout.strip()[-300:]}")
    for test in project.tests if tests else ():
        done = shell(test.cmd, TEST_TIMEOUT)
        passed, total = count_tests(test, done)
        result.passed += passed
        result.total += total
        if passed < total:
            result.failed_tests.append(f"{test.name}: {passed}/{total}")
        result.problems += signs_of_failure(done.stdout, test.name)
    return result


def output_of(shell: Shell, cmd: str) -> tuple[int, str]:
    done = shell(cmd, RUN_TIMEOUT)
    return done.returncode, done.stdout


def perforated_builds(project: Project, src: Path, work: Path, approxcc: str, jobs: int,
                      tools: Path | None, want: tuple[int, str]) -> dict[str, str]:
    """The two perforated builds: what each `check` prints against the gcc build's `want`."""
    config = work / "hot.json"
    config.write_text(json.dumps(HOT_CONFIG))
    wrapper = work / "approxcc-hot"
    wrapper.write_text(WRAPPER.format(approxcc=approxcc, config=config))
    wrapper.chmod(0o755)
    out = {}
    for label, cc in (("no config", approxcc), ("hot=2", str(wrapper))):
        tree = work / ("perforated" if label == "no config" else "perforated-hot")
        copy_project(src, tree, project)
        why = insert_pragma(tree, project.hot or "")
        if why:
            return {"no config": f"failed: {why}"}
        shell = Shell(tree, cc, jobs, tools)
        built = build(project, shell, "approxcc", tests=False)
        if not built.built or built.problems:
            out[label] = f"failed: {'; '.join(built.problems)}"
            continue
        got = output_of(shell, project.check or "true")
        if label == "hot=2":
            out[label] = "changed" if got != want else "same (no effect)"
        else:
            out[label] = "same" if got == want else f"differs (exit {got[0]} vs {want[0]})"
    return out


def approxcc_variant(work: Path, approxcc: str, flag: str) -> str:
    """A CC that is approxcc with `flag` (a script: some build systems take CC as one word)."""
    script = work / f"approxcc{flag.replace('=', '-')}"
    script.write_text(f'#!/bin/sh\nexec {approxcc} {flag} "$@"\n')
    script.chmod(0o755)
    return str(script)


def measure(project: Project, src: Path, work: Path, args: argparse.Namespace,
            tools: Path | None) -> ProjectResult:
    work.mkdir(parents=True, exist_ok=True)
    compilers = {"gcc": "gcc", "approxcc": args.approxcc}
    if args.mlir_all:
        compilers[MLIR_ALL] = approxcc_variant(work, args.approxcc, "-fapprox-mlir=all")
    shells, builds = {}, {}
    for compiler, cc in compilers.items():
        console.print(f"{project.name}: building and testing with {compiler}")
        tree = work / TREES[compiler]
        copy_project(src, tree, project)
        shells[compiler] = Shell(tree, cc, args.jobs, tools)
        builds[compiler] = build(project, shells[compiler], compiler, tests=True)
    gcc = builds["gcc"]
    result = ProjectResult(project.name, project.kind, project.repo, project.commit, gcc,
                           builds["approxcc"], mlir_all=builds.get(MLIR_ALL))
    for compiler, made in builds.items():
        if compiler == "gcc":
            continue
        if gcc.built and made.built:
            result.build_ratio[compiler] = made.build_s / gcc.build_s
        tag = "" if compiler == "approxcc" else f"({compiler}) "
        result.approxcc_failures += [tag + problem for problem in made.problems]
        result.approxcc_failures += [f"{tag}fails with approxcc only: {t}"
                                     for t in made.failed_tests if t not in gcc.failed_tests]
    if gcc.built and builds["approxcc"].built:
        result.same_elf = same_elf(shells["gcc"].tree, shells["approxcc"].tree)
    timed = {c: functools.partial(shells[c].seconds, project.bench)
             for c, made in builds.items() if made.built and project.bench}
    if project.bench and gcc.built and len(timed) > 1:
        console.print(f"{project.name}: timing `{project.bench}`")
        result.run_s = interleaved(timed, args.repeats)
        result.run_ratio = {c: t / result.run_s["gcc"] for c, t in result.run_s.items()
                            if c != "gcc"}
    if project.hot and gcc.built:
        want = output_of(shells["gcc"], project.check or "true")
        for compiler, made in builds.items():
            if compiler != "gcc" and made.built and \
                    output_of(shells[compiler], project.check or "true") != want:
                result.approxcc_failures.append(
                    f"{compiler}: `{project.check}` prints otherwise than gcc's build")
        console.print(f"{project.name}: perforated builds ({project.hot})")
        result.perforated = perforated_builds(project, src, work, args.approxcc, args.jobs,
                                              tools, want)
        result.approxcc_failures += [f"perforated ({k}): {v}" for k, v in
                                     result.perforated.items()
                                     if v.startswith(("failed", "differs"))]
    return result


def same_elf(gcc: Path, other: Path) -> tuple[int, int]:
    """(identical, all) of the ELF files (objects, libraries, programs) the gcc build made,
    against the other build's files of the same paths, without debug sections and build ids,
    the other copy's path read as the gcc copy's (__FILE__, rpaths)."""
    same = total = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in gcc.rglob("*"):
            if not path.is_file() or path.is_symlink():
                continue
            with path.open("rb") as f:
                if f.read(4) != b"\x7fELF":
                    continue
            total += 1
            twin = other / path.relative_to(gcc)
            if not twin.is_file():
                continue
            a, b = Path(tmp, "a"), Path(tmp, "b")
            for src, dst in ((path, a), (twin, b)):
                subprocess.run(["objcopy", "--strip-debug", "--remove-section=.note.gnu.build-id",
                                str(src), str(dst)],
                               capture_output=True)
            same += a.exists() and b.exists() and \
                a.read_bytes() == b.read_bytes().replace(str(other).encode(), str(gcc).encode())
            a.unlink(missing_ok=True)
            b.unlink(missing_ok=True)
    return same, total


def ratio(x: float | None) -> str:
    return f"{x:.2f}" if x is not None else "-"


def geomean(values: list[float | None]) -> float | None:
    present = [v for v in values if v]
    return statistics.geometric_mean(present) if present else None


def brief(outcome: str) -> str:
    """A perforated build's outcome for the table: a failure's message is listed below it."""
    return "failed (below)" if outcome.startswith("failed") else outcome


def tests(made: BuildResult | None) -> str:
    if made is None:
        return "-"
    return f"{made.passed}/{made.total}" if made.built else "build failed"


def project_table(results: list[ProjectResult], repeats: int) -> Table:
    table = Table(title=f"C projects built by their own build systems, CC=gcc vs CC=approxcc "
                        f"(ratios: approxcc's over gcc's; run time: median of {repeats}+ "
                        f"interleaved runs)")
    mlir_all = any(r.mlir_all for r in results)
    columns = ["project", "kind", "tests gcc", "tests approxcc", "build s gcc",
               "build ratio", "same ELF files", "run s gcc", "run ratio", "perforated, no config",
               "perforated, hot=2"]
    if mlir_all:
        columns[7:7] = ["tests mlir=all", "build ratio mlir=all", "run ratio mlir=all"]
    for column in columns:
        table.add_column(column, justify="left" if column in ("project", "kind") else "right",
                         overflow="fold")
    for r in results:
        row = [r.name, r.kind, tests(r.gcc), tests(r.approxcc), f"{r.gcc.build_s:.1f}",
               ratio(r.build_ratio.get("approxcc")),
               "{}/{}".format(*r.same_elf) if r.same_elf else "-",
               f"{r.run_s['gcc']:.3f}" if r.run_s else "-", ratio(r.run_ratio.get("approxcc")),
               brief(r.perforated.get("no config", "-")), brief(r.perforated.get("hot=2", "-"))]
        if mlir_all:
            row[7:7] = [tests(r.mlir_all), ratio(r.build_ratio.get(MLIR_ALL)),
                        ratio(r.run_ratio.get(MLIR_ALL))]
        table.add_row(*row)
    table.add_section()
    means = geomeans(results)
    row = ["geomean", "", "", "", "", ratio(means["build approxcc"]), "", "",
           ratio(means["run approxcc"]), "", ""]
    if mlir_all:
        row[7:7] = ["", ratio(means[f"build {MLIR_ALL}"]), ratio(means[f"run {MLIR_ALL}"])]
    table.add_row(*row)
    return table


def geomeans(results: list[ProjectResult]) -> dict[str, float | None]:
    """Geometric means over the projects of the build and run time ratios, by compiler."""
    return {f"{what} {c}": geomean([getattr(r, f"{what}_ratio").get(c) for r in results])
            for what in ("build", "run") for c in ("approxcc", MLIR_ALL)}


def load_results(path: Path) -> dict[str, ProjectResult]:
    """The results an earlier run wrote, by project (none: no such file)."""
    if not path.exists():
        return {}
    out = {}
    for r in json.loads(path.read_text())["projects"]:
        builds = {k: BuildResult(**made) if (made := r.pop(k, None)) else None
                  for k in ("gcc", "approxcc", "mlir_all")}
        out[r["name"]] = ProjectResult(**r, **builds)
    return out


def save_results(path: Path, results: dict[str, ProjectResult], args: argparse.Namespace,
                 order: list[str]) -> None:
    chosen = [results[name] for name in order if name in results]
    path.write_text(json.dumps({
        "approxcc": args.approxcc, "repeats": args.repeats, "jobs": args.jobs,
        "geomeans": geomeans(chosen), "projects": [asdict(r) for r in chosen]}, indent=2)
        + "\n")


def run_projects(args: argparse.Namespace) -> None:
    """Every project of the table found in FOLDER: builds, tests, times, perforates. The
    results go to FOLDER/results.json after each, with those of earlier runs of the others
    (`--only`); the table shows them all."""
    entries = [Project.from_entry(e) for e in tomllib.loads(TABLE.read_text())["project"]]
    chosen = [p for p in entries if not args.only or p.name in args.only]
    tools = ensure_tools(args.folder) if chosen else None
    path = args.folder / "results.json"
    results = load_results(path)
    order = [p.name for p in entries]
    for project in chosen:
        src = args.folder / project.name
        if not src.is_dir():
            console.print(f"[yellow]{project.name}: not in {args.folder}; check out "
                          f"{project.repo} at {project.commit}[/]")
            continue
        results[project.name] = measure(project, src, args.folder / "runs" / project.name,
                                         args, tools)
        save_results(path, results, args, order)
    shown = [results[name] for name in order if name in results]
    if not shown:
        return
    console.print(project_table(shown, args.repeats))
    failures = [(r.name, f) for r in shown for f in r.approxcc_failures]
    for name, failure in failures:
        console.print(f"[red]{name}[/]: {failure}", markup=True, highlight=False)
    console.print(f"{len(failures)} approxcc failure(s); results in {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the checked-out code, by name")
    parser.add_argument("--only", nargs="*", help="projects, code bases or programs")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs of each build")
    parser.add_argument("--jobs", type=int, default=2,
                        help="make -j of the projects; programs built at once file by file")
    parser.add_argument("--approxcc", default=APPROXCC, help="the approxcc command")
    parser.add_argument("--file-by-file", action="store_true",
                        help="also the code bases compiled file by file")
    parser.add_argument("--mlir-all", action="store_true",
                        help="the projects also built with approxcc -fapprox-mlir=all")
    parser.add_argument("--no-projects", action="store_true",
                        help="not the projects built by their own build systems")
    args = parser.parse_args()
    args.folder = args.folder.resolve()
    if not args.no_projects:
        run_projects(args)
    if args.file_by_file:
        file_by_file(args)


if __name__ == "__main__":
    main()
