"""approxcc as `CC` on real C code nobody here wrote, side by side with `cc -O2`.

    python bench/real_c.py FOLDER [--only NAME ...] [--repeats N] [--jobs N]

FOLDER holds the code bases of bench/real_c_repos.toml, each checked out under its name (the
table says how). Every program is built three ways: `cc -O2`; `approxcc -O2` (exact); and
approxcc with one `#pragma approx loop_perforate knob(hot)` inserted, in a temporary copy,
before the table's hot loop, with a configuration that runs every second iteration. Each
source is compiled on its own (`-c`), as a Makefile would, so that every file counts.

Per code base it prints: files whose every function went through MLIR / files with a
function the frontend left to the system compiler (the translation-unit split) / files
approxcc failed on; Python tracebacks in approxcc's output (must be 0); programs whose exact
build prints exactly what the `cc -O2` build prints (stdout, stderr, exit status); the exact
build's run time over `cc -O2` (geometric mean over programs of the median of interleaved
runs); perforated builds that built, and those whose output changed. Then every failure, with
the diagnostic or the innermost approxcc frame of the traceback.

Through MLIR or not is read from what `-save-temps=obj` keeps: the functions the MLIR module
defines (`NAME.approx.mlir`) against the function definitions of the source (libclang).
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
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
console = Console()


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


def perforated_tree(root: Path, work: Path, hot: str) -> tuple[Path, str] | str:
    """A copy of the code base with the pragma before the hot loop; (copy, file) or why not."""
    file, where = hot.rsplit(":", 1)
    tree = work / "perforated" / re.sub(r"\W", "_", hot)
    shutil.copytree(root, tree, dirs_exist_ok=True)
    lines = (root / file).read_text(errors="replace").splitlines(keepends=True)
    if where.isdigit():
        at = int(where) - 1
    else:
        start = next((i for i, line in enumerate(lines)
                      if re.match(rf"^\w[\w\s\*]*\b{re.escape(where)}\s*\(", line)), None)
        at = next((i for i in range(start, len(lines)) if re.match(r"\s*for\s*\(", lines[i])),
                  None) if start is not None else None
        if at is None:
            return f"no `for` in {where}"
    (tree / file).write_text("".join(lines[:at] + [PRAGMA] + lines[at:]))
    return tree, file


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


def time_ratio(ref: Path, exact: Path, repeats: int) -> float:
    """Median run time of the exact build over that of `cc -O2`'s, runs interleaved so that
    the machine's drift hits both; short programs run until each has had MIN_SECONDS."""
    runs: dict[Path, list[float]] = {ref: [], exact: []}
    while len(runs[ref]) < repeats or (min(sum(r) for r in runs.values()) < MIN_SECONDS
                                       and len(runs[ref]) < MAX_RUNS):
        for exe in runs:
            runs[exe].append(seconds(exe))
    return statistics.median(runs[exact]) / statistics.median(runs[ref])


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the checked-out code bases, by name")
    parser.add_argument("--only", nargs="*", help="code bases or programs to build")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs of each build")
    parser.add_argument("--jobs", type=int, default=2, help="programs built at once")
    parser.add_argument("--approxcc", default=APPROXCC, help="the approxcc command")
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
