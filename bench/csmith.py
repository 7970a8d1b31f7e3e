"""Differential testing against gcc with Csmith: random C programs built by `cc -O2` and by
approxcc must print the same checksum and exit alike.

Each seed is a program (`csmith --seed N`), built by `cc -O2` (the reference: a seed whose
reference build or run times out or fails is skipped) and by approxcc in each mode:

* `default`: approxcc's default (a program without annotations is the system compiler's);
* `all`: `-fapprox-mlir=all`, every function through the MLIR frontend;
* `annotated`: `-fapprox-mlir=all` on the program with one annotation inserted that is
  exact without a configuration (`loop_perforate values(1:4)` before a counted `for`,
  `memoize values(1:4)` on a function returning an integer, `task_skipping` on an `if`),
  the site picked deterministically from the seed;
* `annotated-default`: the same annotated program in the default mode (only the annotated
  function through MLIR).

A site approxcc refuses with a clean diagnostic (a loop it cannot count, a function the
frontend cannot compile yet) is not a bug: the next site is tried (in the default mode,
which is quick), up to `--sites`; none accepted is `no-site`.

Outcomes per program and mode: match, mismatch (stdout or exit status differ), ice
(`internal compiler error`), traceback (a Python traceback anywhere), build-failure
(approxcc refuses what gcc builds: its diagnostic is recorded), timeout (approxcc's build,
or its program where gcc's finished), no-site. With `--reduce`, each mismatch and ICE is
reduced by C-Vise (the interestingness test: gcc -O0, -O2 and -O1 with UBSan and ASan
agree, `gcc -Wall -Wextra` reports nothing that signals undefined behaviour, and approxcc
still differs or still ICEs) into build/csmith/reduced/. `--inline-headers` pastes Csmith's
headers into each program, so that their ~400 macro-named functions are the program's own
and go through the translation-unit split and the frontend as well (builds take longer).

    python bench/csmith.py --count 100 --modes default
    python bench/csmith.py --first 1 --count 30 --modes annotated --reduce
    make csmith ARGS="--count 30 --modes all,annotated"

prints a summary (outcomes and build time against gcc, geometric mean, per mode), writes
every result to a JSON file, and exits with status 1 when a program gave a mismatch, an
ICE or a traceback.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "csmith"
FORCE_MLIR = "-fapprox-mlir=all"


@dataclass(frozen=True)
class Mode:
    flags: tuple[str, ...]
    annotate: bool


MODES: dict[str, Mode] = {
    "default": Mode((), False),
    "all": Mode((FORCE_MLIR,), False),
    "annotated": Mode((FORCE_MLIR,), True),
    "annotated-default": Mode((), True),
}
OUTCOMES = ("match", "mismatch", "ice", "traceback", "build-failure", "timeout", "no-site")
BUGS = ("mismatch", "ice", "traceback")
# Smaller programs than Csmith's default (≈1,500 lines): a few seconds through the frontend.
CHECKPOINT_EVERY = 25   # results between two writes of the JSON file
SMALL = ("--max-funcs", "4", "--max-block-depth", "3", "--max-expr-complexity", "6")


# -- tools -------------------------------------------------------------------------------------

def csmith_include() -> Path | None:
    """The folder holding csmith.h (Debian's libcsmith-dev: /usr/include/csmith)."""
    found = shutil.which("csmith")
    candidates = [Path("/usr/include/csmith"), Path("/usr/local/include/csmith")]
    if found:
        prefix = Path(found).resolve().parent.parent
        candidates += [prefix / "include" / "csmith", *sorted(prefix.glob("include/csmith-*"))]
    return next((c for c in candidates if (c / "csmith.h").is_file()), None)


def missing_tools(reduce: bool = False) -> list[str]:
    """What the campaign needs and this machine lacks (Debian packages or programs)."""
    missing = [] if shutil.which("csmith") else ["csmith"]
    if csmith_include() is None:
        missing.append("libcsmith-dev (csmith.h)")
    if reduce and not shutil.which("cvise"):
        missing.append("cvise")
    return missing


def approxcc_command() -> list[str]:
    """The approxcc console script next to this interpreter (the venv's), else on PATH."""
    script = Path(sys.executable).parent / "approxcc"
    if script.is_file():
        return [str(script)]
    found = shutil.which("approxcc")
    if found is None:
        raise click.ClickException("no approxcc console script next to python or on PATH")
    return [found]


@dataclass
class Run:
    """One process: status (None: it timed out), output, wall seconds."""

    status: int | None
    stdout: str
    stderr: str
    seconds: float

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run(argv: Sequence[str | Path], timeout: float, cwd: Path | None = None,
        env: dict[str, str] | None = None) -> Run:
    started = time.monotonic()
    try:
        done = subprocess.run([str(a) for a in argv], capture_output=True, timeout=timeout,
                              cwd=cwd, env=env, start_new_session=True)
    except subprocess.TimeoutExpired as err:
        return Run(None, _text(err.stdout), _text(err.stderr), time.monotonic() - started)
    return Run(done.returncode, _text(done.stdout), _text(done.stderr),
               time.monotonic() - started)


def _text(data: bytes | str | None) -> str:
    if isinstance(data, str):
        return data
    return (data or b"").decode(errors="replace")


def supports_force_mlir(approxcc: Sequence[str], folder: Path) -> bool:
    """Whether this approxcc takes `-fapprox-mlir=all`."""
    folder.mkdir(parents=True, exist_ok=True)
    probe = folder / "probe.c"
    probe.write_text("int main(void) { return 0; }\n")
    done = run([*approxcc, FORCE_MLIR, "-c", probe, "-o", folder / "probe.o"], 120)
    return done.status == 0


# -- annotation sites --------------------------------------------------------------------------

INTEGER_TYPES = {f"{s}int{n}_t" for s in ("", "u") for n in (8, 16, 32, 64)} | {
    "int", "unsigned", "unsigned int", "long", "unsigned long", "short", "char",
    "signed char", "unsigned char", "long long", "unsigned long long"}
_DEFINITION = re.compile(r"^(?:static\s+)?(?:const\s+|volatile\s+)*([\w ]+?)\s+(\w+)\s*\(.*\)\s*$")
_FOR = re.compile(r"^([ \t]*)for \((\w+) = [^;]*;[^;]*;\s*"
                  r"(?:\+\+\2|--\2|\2\+\+|\2--|\2 [+-]= \d+)\)\s*$")
_IF = re.compile(r"^([ \t]*)if \(")


@dataclass(frozen=True)
class Site:
    """An annotation before line `line` (0-based) of the program."""

    line: int
    directive: str
    function: str

    def describe(self) -> str:
        return f"{self.directive} at line {self.line + 1} in {self.function}"


def annotation_sites(source: str, seed: int) -> list[Site]:
    """Where an exact annotation may go, in the order they are tried: the functions' sites
    shuffled by the seed, then main's."""
    lines = source.splitlines()
    sites: list[Site] = []
    function = ""
    for i, text in enumerate(lines):
        following = lines[i + 1] if i + 1 < len(lines) else ""
        definition = _DEFINITION.match(text)
        if definition and following.startswith("{"):
            function = definition.group(2)
            if definition.group(1).strip() in INTEGER_TYPES and function != "main":
                sites.append(Site(i, "memoize", function))
        elif function and _FOR.match(text):
            sites.append(Site(i, "loop_perforate", function))
        elif function and _IF.match(text):
            sites.append(Site(i, "task_skipping", function))
    rng = random.Random(seed)
    ours = [s for s in sites if s.function != "main"]
    rng.shuffle(ours)
    theirs = [s for s in sites if s.function == "main"]
    rng.shuffle(theirs)
    return ours + theirs


def annotate(source: str, site: Site, knob: str) -> str:
    lines = source.splitlines(keepends=True)
    indent = re.match(r"[ \t]*", lines[site.line]).group()  # type: ignore[union-attr]
    clauses = "" if site.directive == "task_skipping" else " values(1:4)"
    pragma = f"{indent}#pragma approx {site.directive} knob({knob}){clauses}\n"
    return "".join(lines[:site.line] + [pragma] + lines[site.line:])


# -- one program -------------------------------------------------------------------------------

@dataclass
class Result:
    seed: int
    mode: str
    outcome: str
    detail: str = ""
    site: str = ""
    gcc_build_s: float = 0.0
    approxcc_build_s: float = 0.0
    expected: str = ""
    got: str = ""
    folder: str = ""
    reduced: str = ""


@dataclass
class Reference:
    ok: bool
    why: str = ""
    stdout: str = ""
    status: int = 0
    build_s: float = 0.0


@dataclass
class Settings:
    approxcc: list[str]
    include: Path
    work: Path
    csmith_args: list[str] = field(default_factory=list)
    timeout: float = 10.0            # seconds for the reference program
    build_timeout: float = 600.0     # seconds for one approxcc build
    sites: int = 8                   # annotation sites tried per program
    keep: bool = False               # keep the folders of programs that matched
    # Csmith's headers pasted into each program: their ~400 functions, named by macros
    # (`FUNC_NAME(add_func_int8_t_s_s)(...)`), go through the split and the frontend too
    inline_headers: bool = False


def build_flags(include: Path) -> list[str]:
    return ["-O2", "-w", f"-I{include}"]


def classify_build(done: Run) -> tuple[str, str] | None:
    """The outcome of a failed approxcc build (None: it built)."""
    text = done.output
    if "Traceback" in text:
        return "traceback", _last_line(text)
    if "internal compiler error" in text:
        return "ice", text.split("internal compiler error", 1)[1].splitlines()[0].strip(": ")
    if done.status is None:
        return "timeout", f"build did not finish in {done.seconds:.0f} s"
    if done.status != 0:
        errors = [ln for ln in text.splitlines() if "error:" in ln]
        return "build-failure", (errors[0] if errors else _last_line(text))[:400]
    return None


def _last_line(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[-1][:400] if lines else "(no output)"


def clean_refusal(done: Run) -> bool:
    """A build that failed with a diagnostic: status 1, `error:`, no ICE, no traceback."""
    return (done.status == 1 and "error:" in done.output and "Traceback" not in done.output
            and "internal compiler error" not in done.output)


class Program:
    """One seed: its source, its reference, its annotated variant (each made once)."""

    def __init__(self, seed: int, settings: Settings):
        self.seed = seed
        self.settings = settings
        self.folder = settings.work / f"seed{seed}"
        self._lock = threading.Lock()
        self._reference: Reference | None = None
        self._site: tuple[Site, str, Run] | None | bool = False
        self.refusals: list[str] = []    # the diagnostics of the sites refused

    @property
    def source(self) -> Path:
        return self.folder / f"csmith{self.seed}.c"

    def reference(self) -> Reference:
        with self._lock:
            if self._reference is None:
                self._reference = self._make_reference()
            return self._reference

    def _make_reference(self) -> Reference:
        s = self.settings
        self.folder.mkdir(parents=True, exist_ok=True)
        made = run(["csmith", "--seed", str(self.seed), *s.csmith_args, "-o", self.source],
                   120, cwd=self.folder)
        if made.status != 0:
            return Reference(False, f"csmith failed: {_last_line(made.output)}")
        if s.inline_headers:
            self.source.write_text(inline_includes(self.source.read_text(), s.include))
        built = run(["cc", *build_flags(s.include), self.source, "-o", self.folder / "ref"],
                    s.build_timeout)
        if built.status != 0:
            return Reference(False, f"gcc build failed: {_last_line(built.output)}",
                             build_s=built.seconds)
        ran = run([self.folder / "ref"], s.timeout)
        if ran.status is None:
            return Reference(False, "gcc's program timed out", build_s=built.seconds)
        if ran.status < 0:
            return Reference(False, f"gcc's program died (signal {-ran.status})",
                             build_s=built.seconds)
        return Reference(True, stdout=ran.stdout, status=ran.status, build_s=built.seconds)

    def annotated(self) -> tuple[Site, str, Run] | None:
        """The first site approxcc accepts in the default mode: (site, source, build)."""
        with self._lock:
            if self._site is False:
                self._site = self._find_site()
            return self._site  # type: ignore[return-value]

    def _find_site(self) -> tuple[Site, str, Run] | None:
        text = self.source.read_text()
        unsupported: set[str] = set()   # functions the frontend cannot compile yet
        tried = 0
        for n, site in enumerate(annotation_sites(text, self.seed)):
            if site.function in unsupported:
                continue
            if tried == self.settings.sites:
                break
            tried += 1
            candidate = annotate(text, site, f"k_{self.seed}_{n}")
            folder = self.folder / "annotated-default"
            path = self.source_in(folder, candidate)
            done = self.approxcc(path, folder, MODES["annotated-default"].flags)
            if not clean_refusal(done):
                return site, candidate, done
            error = next(ln for ln in done.output.splitlines() if "error:" in ln)
            self.refusals.append(f"{site.describe()}: {error.split('error:', 1)[1].strip()}")
            if "not supported by the approxcc C frontend" in error:
                unsupported.add(site.function)
        return None

    def source_in(self, folder: Path, text: str) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / self.source.name
        path.write_text(text)
        return path

    def approxcc(self, path: Path, folder: Path, flags: Sequence[str]) -> Run:
        s = self.settings
        env = dict(os.environ, TMPDIR=str(folder))   # ICE reproducers land with the case
        return run([*s.approxcc, *flags, *build_flags(s.include), path.name, "-o", "approx"],
                   s.build_timeout, cwd=folder, env=env)

    def check(self, mode: str) -> Result:
        ref = self.reference()
        result = Result(self.seed, mode, "skipped", gcc_build_s=ref.build_s)
        if not ref.ok:
            result.detail = ref.why
            return result
        folder = self.folder / mode
        result.folder = str(folder)
        if MODES[mode].annotate:
            found = self.annotated()
            if found is None:
                result.outcome = "no-site"
                result.detail = "; ".join(self.refusals) or "no site in the program"
                return result
            site, text, first = found
            result.site = site.describe()
            path = self.source_in(folder, text)
            done = first if mode == "annotated-default" else \
                self.approxcc(path, folder, MODES[mode].flags)
        else:
            path = self.source_in(folder, self.source.read_text())
            done = self.approxcc(path, folder, MODES[mode].flags)
        result.approxcc_build_s = done.seconds
        failed = classify_build(done)
        if failed is not None:
            result.outcome, result.detail = failed
            (folder / "build.log").write_text(done.output)
            return result
        ran = run([folder / "approx"], max(3 * self.settings.timeout, 30))
        result.expected = f"{ref.stdout}[exit {ref.status}]"
        result.got = f"{ran.stdout}[exit {ran.status}]"
        if "Traceback" in ran.output:
            result.outcome, result.detail = "traceback", _last_line(ran.output)
        elif ran.status is None:
            result.outcome, result.detail = "timeout", "approxcc's program did not finish"
        elif (ran.stdout, ran.status) == (ref.stdout, ref.status):
            result.outcome = "match"
        else:
            result.outcome = "mismatch"
            result.detail = f"gcc: {_short(result.expected)} approxcc: {_short(result.got)}"
        return result


def _short(text: str) -> str:
    return text.strip().replace("\n", " | ")[-120:]


# -- a campaign --------------------------------------------------------------------------------

def campaign(seeds: Iterable[int], modes: Sequence[str], settings: Settings, jobs: int,
             console: Console | None = None,
             checkpoint: Callable[[list[Result]], None] | None = None,
             done: Sequence[Result] = ()) -> list[Result]:
    """Every seed in every mode, `jobs` at a time; the results in (seed, mode) order.
    `checkpoint` gets the results so far every CHECKPOINT_EVERY of them (a campaign of
    hours that is stopped keeps what it measured); `done`: results of an earlier run, whose
    (seed, mode) pairs are not run again."""
    measured = {(r.seed, r.mode) for r in done}
    programs = [Program(seed, settings) for seed in seeds]
    tasks = [(p, m) for p in programs for m in modes if (p.seed, m) not in measured]
    results: list[Result] = list(done)
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[tally]}"), TimeElapsedColumn(),
                        console=console or Console(stderr=True), transient=False,
                        disable=console is None)
    tally: Counter[str] = Counter()
    with progress, ThreadPoolExecutor(max_workers=jobs) as pool:
        bar = progress.add_task("csmith", total=len(tasks), tally="")
        futures = {pool.submit(p.check, m): (p, m) for p, m in tasks}
        for future in as_completed(futures):
            result = future.result()
            results.append(result)
            tally[result.outcome] += 1
            if result.outcome == "match" and not settings.keep:
                shutil.rmtree(result.folder, ignore_errors=True)
            progress.update(bar, advance=1,
                            tally=" ".join(f"{k}={v}" for k, v in sorted(tally.items())))
            if checkpoint is not None and len(results) % CHECKPOINT_EVERY == 0:
                checkpoint(results)
    for p in programs:   # the generated program and the reference binary of clean seeds
        if not settings.keep and p.folder.exists() and \
                all(r.outcome in ("match", "skipped", "no-site")
                    for r in results if r.seed == p.seed):
            shutil.rmtree(p.folder, ignore_errors=True)
    return sorted(results, key=lambda r: (r.seed, list(MODES).index(r.mode)))


def geomean(values: Sequence[float]) -> float:
    values = [v for v in values if v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def summary(results: Sequence[Result]) -> dict[str, dict[str, object]]:
    """Per mode: the count of each outcome, skipped seeds, the build-time ratio (geomean)."""
    out: dict[str, dict[str, object]] = {}
    by_mode: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        by_mode[r.mode].append(r)
    for mode, rows in by_mode.items():
        counts = Counter(r.outcome for r in rows)
        built = [r for r in rows if r.approxcc_build_s > 0 and r.gcc_build_s > 0
                 and r.outcome not in ("timeout", "skipped")]
        out[mode] = {"programs": len(rows) - counts["skipped"], "skipped": counts["skipped"],
                     **{k: counts[k] for k in OUTCOMES},
                     "build_ratio_geomean": geomean([r.approxcc_build_s / r.gcc_build_s
                                                     for r in built]),
                     "approxcc_build_s_geomean": geomean([r.approxcc_build_s for r in built]),
                     "gcc_build_s_geomean": geomean([r.gcc_build_s for r in built])}
    return out


def report(results: Sequence[Result], seconds: float, console: Console) -> None:
    table = Table(title="Csmith programs: approxcc against gcc -O2")
    table.add_column("mode")
    for column in ("programs", *OUTCOMES, "skipped", "build ×gcc"):
        table.add_column(column, justify="right")
    for mode, row in summary(results).items():
        ratio = row["build_ratio_geomean"]
        table.add_row(mode, str(row["programs"]), *(str(row[k]) for k in OUTCOMES),
                      str(row["skipped"]),
                      "-" if math.isnan(ratio) else f"{ratio:.1f}×")  # type: ignore[arg-type]
    console.print(table)
    notable = [r for r in results if r.outcome not in ("match", "skipped")]
    if notable:
        listing = Table(title="programs that did not match")
        for column in ("seed", "mode", "outcome", "site", "detail", "reduced"):
            listing.add_column(column)
        for r in notable:
            listing.add_row(str(r.seed), r.mode, r.outcome, r.site, r.detail[:200], r.reduced)
        console.print(listing)
    console.print(f"{len(results)} builds in {seconds:.0f} s")


def read_json(path: Path) -> tuple[list[Result], dict[str, object]]:
    """The results and meta of an earlier run's JSON (write_json's)."""
    data = json.loads(path.read_text())
    return [Result(**r) for r in data["results"]], data["meta"]


def write_json(path: Path, results: Sequence[Result], meta: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"meta": meta, "summary": summary(results),
                                "results": [asdict(r) for r in results]}, indent=1,
                               allow_nan=True) + "\n")


# -- reduction ---------------------------------------------------------------------------------

# gcc warnings that signal undefined or unspecified behaviour in a reduced program
UB_WARNINGS = ("uninitiali", "no return statement", "control reaches end", "without a cast",
               "incompatible", "implicit declaration", "implicitly declaring", "sequence point",
               "array subscript", "too few arguments", "too many arguments", "defaults to",
               "division by zero", "shift count", "address of local",
               "returns address", "-Wformat", "-Wint-conversion", "-Wimplicit",
               "-Wstrict-aliasing", "-Wreturn-type", "-Wmaybe-uninitialized",
               "-Wuninitialized", "-Wstringop", "-Warray-bounds", "-Wdiv-by-zero",
               "-Waggressive-loop-optimizations", "-Wpointer-to-int-cast", "-Wint-to-pointer-cast",
               "discards", "-Wsizeof", "-Wnonnull", "-Wfree-nonheap-object",
               "-Wuse-after-free", "-Wdangling-pointer", "-Wmain", "return type of 'main'")


def interestingness_script(name: str, result: Result, settings: Settings) -> str:
    """A C-Vise test: status 0 while `name` is a valid program on which approxcc still
    shows the bug of `result`."""
    flags = " ".join(MODES[result.mode].flags)
    approxcc = " ".join(settings.approxcc)
    inc = f"-I{settings.include}"
    timeout = int(max(settings.timeout, 5))
    ub = "|".join(re.escape(w) for w in UB_WARNINGS)
    if result.outcome == "ice":
        message = re.escape(result.detail.split(":")[0][:60])
        bug = f"grep -Eq 'internal compiler error.*{message}' build.txt"
        build = f"{approxcc} {flags} -O2 -w {inc} {name} -o ax > build.txt 2>&1"
    else:
        bug = (f"test $s -eq 0 || exit 1\n"
               f"timeout {3 * timeout} ./ax > outa 2>/dev/null; sa=$?\n"
               f"test $sa -lt 124 || exit 1\n"
               f"! cmp -s out2 outa || test $s2 -ne $sa")
        build = f"{approxcc} {flags} -O2 -w {inc} {name} -o ax > build.txt 2>&1; s=$?"
    return f"""#!/usr/bin/env bash
# C-Vise interestingness test (bench/csmith.py): seed {result.seed}, mode {result.mode},
# {result.outcome}: {result.detail[:200]}
F={name}
gcc -O0 -w {inc} $F -o o0 > /dev/null 2>&1 || exit 1
gcc -O2 -Wall -Wextra {inc} $F -o o2 > warn.txt 2>&1 || exit 1
grep -Eq -- '{ub}' warn.txt && exit 1
gcc -O1 -fsanitize=undefined,address -fno-sanitize-recover=all -w {inc} $F -o os \\
  > /dev/null 2>&1 || exit 1
timeout {timeout} ./o0 > out0 2>/dev/null; s0=$?
test $s0 -lt 124 || exit 1
timeout {timeout} ./o2 > out2 2>/dev/null; s2=$?
timeout {timeout * 3} ./os > outs 2>/dev/null; ss=$?
test $s0 -eq $s2 && test $s0 -eq $ss || exit 1
cmp -s out0 out2 && cmp -s out0 outs || exit 1
test -s out2 || exit 1
{build}
{bug}
"""


_LOCAL_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"[^\n]*$', re.M)


def inline_includes(text: str, include: Path, depth: int = 0) -> str:
    """`text` with each `#include "X"` of a header in `include` (Csmith's) replaced by the
    header, recursively: a program that needs only the system headers, whose preprocessor
    conditionals and macros stay as written (gcc's preprocessed output is gcc's C: libclang
    rejects `_Float128`)."""
    def one(m: re.Match[str]) -> str:
        header = include / m.group(1)
        if depth > 8 or not header.is_file():
            return m.group()
        return inline_includes(header.read_text(errors="replace"), include, depth + 1)

    return _LOCAL_INCLUDE.sub(one, text)


def reduce(result: Result, settings: Settings, jobs: int, timeout: float,
           console: Console) -> Path | None:
    """C-Vise on the program of `result` (with Csmith's headers inlined first, so that the
    reduced file stands alone; as written when the bug does not survive that); the reduced
    program under build/csmith/reduced/, or None."""
    folder = Path(result.folder)
    source = folder / f"csmith{result.seed}.c"
    out = settings.work.parent / "reduced"
    out.mkdir(parents=True, exist_ok=True)
    stem = f"seed{result.seed}-{result.mode}-{result.outcome}"
    work = settings.work.parent / "reducing" / stem
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    name = "case.c"
    script = work / "interesting.sh"
    script.write_text(interestingness_script(name, result, settings))
    script.chmod(0o755)
    written = source.read_text()
    candidates = [inline_includes(written, settings.include), written]
    for text in candidates:
        (work / name).write_text(text)
        if run([script], timeout, cwd=work).status != 0:
            console.print(f"[yellow]seed {result.seed} {result.mode}: not interesting as "
                          f"{'headers inlined' if text is candidates[0] else 'written'}[/yellow]")
            continue
        console.print(f"reducing seed {result.seed} ({result.mode}, {result.outcome}) ...")
        done = run(["cvise", "--n", str(jobs), "--timeout", str(int(timeout)), "--tidy",
                    str(script), name], 6 * 3600, cwd=work)
        if done.status != 0:
            console.print(f"[red]cvise failed:[/red] {_last_line(done.output)}")
            return None
        target = out / f"{stem}.c"
        shutil.copy(work / name, target)
        shutil.copy(script, out / f"{stem}.sh")
        return target
    return None


# -- the command -------------------------------------------------------------------------------

def _seeds(first: int, count: int, listed: str) -> list[int]:
    if listed:
        return [int(s) for s in listed.replace(",", " ").split()]
    return list(range(first, first + count))


@click.command()
@click.option("--first", type=int, default=1, show_default=True, help="First seed.")
@click.option("--count", type=click.IntRange(1), default=100, show_default=True)
@click.option("--seeds", "listed", default="", help="Seeds to run instead, e.g. 3,17,40.")
@click.option("--modes", default="default,all,annotated", show_default=True,
              help=f"Comma-separated, among {', '.join(MODES)}.")
@click.option("--jobs", type=click.IntRange(1), default=os.cpu_count() or 1,
              show_default="nproc")
@click.option("--timeout", type=float, default=10.0, show_default=True,
              help="Seconds for gcc's program (approxcc's gets 3x, at least 30).")
@click.option("--build-timeout", type=float, default=600.0, show_default=True)
@click.option("--sites", type=click.IntRange(1), default=8, show_default=True,
              help="Annotation sites tried per program.")
@click.option("--small", is_flag=True, help=f"Smaller programs: csmith {' '.join(SMALL)}.")
@click.option("--csmith-args", default="", help="More csmith options.")
@click.option("--work", type=click.Path(file_okay=False, path_type=Path),
              default=BUILD / "work", show_default=True)
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path),
              default=BUILD / "results.json", show_default=True)
@click.option("--keep", is_flag=True, help="Keep the folders of programs that matched.")
@click.option("--resume", is_flag=True,
              help="Keep the results in --json and run only the seeds and modes it lacks "
                   "(a stopped campaign, or a longer one).")
@click.option("--inline-headers", is_flag=True,
              help="Paste Csmith's headers into each program: their macro-named functions "
                   "are then the program's own (slower builds).")
@click.option("--reduce", "reducing", is_flag=True,
              help="Reduce each mismatch and ICE with cvise into build/csmith/reduced/.")
@click.option("--reduce-timeout", type=float, default=300.0, show_default=True,
              help="Seconds for one interestingness test.")
def main(first: int, count: int, listed: str, modes: str, jobs: int, timeout: float,
         build_timeout: float, sites: int, small: bool, csmith_args: str, work: Path,
         json_path: Path, keep: bool, resume: bool, inline_headers: bool, reducing: bool,
         reduce_timeout: float) -> None:
    """Csmith programs through approxcc and gcc; status 1 on a mismatch, ICE or traceback."""
    console = Console() if sys.stdout.isatty() else Console(width=160)
    chosen = [m.strip() for m in modes.split(",") if m.strip()]
    unknown = [m for m in chosen if m not in MODES]
    if unknown:
        raise click.BadParameter(f"unknown mode(s) {', '.join(unknown)}", param_hint="--modes")
    missing = missing_tools(reducing)
    if missing:
        raise click.ClickException(f"missing: {', '.join(missing)} (make csmith installs them)")
    include = csmith_include()
    assert include is not None
    settings = Settings(approxcc_command(), include, work.resolve(),
                        [*(SMALL if small else ()), *csmith_args.split()], timeout,
                        build_timeout, sites, keep, inline_headers)
    if any(FORCE_MLIR in MODES[m].flags for m in chosen) and \
            not supports_force_mlir(settings.approxcc, settings.work):
        raise click.ClickException(f"this approxcc does not take {FORCE_MLIR}: "
                                   f"run --modes default,annotated-default")
    done, before = read_json(json_path) if resume and json_path.exists() else ([], {})
    started = time.monotonic() - float(before.get("seconds", 0.0))

    def meta(finished: bool) -> dict[str, object]:
        return {"csmith_args": settings.csmith_args, "modes": chosen, "timeout": timeout,
                "inline_headers": inline_headers, "resumed": bool(done) or
                bool(before.get("resumed")),
                "jobs": jobs, "seconds": time.monotonic() - started, "finished": finished,
                "csmith": _version(["csmith", "--version"], settings.work),
                "gcc": _version(["cc", "--version"], settings.work)}

    results = campaign(_seeds(first, count, listed), chosen, settings, jobs, console,
                       lambda so_far: write_json(json_path, so_far, meta(False)), done)
    if reducing:
        for r in results:
            if r.outcome in ("mismatch", "ice"):
                reduced = reduce(r, settings, jobs, reduce_timeout, console)
                r.reduced = str(reduced) if reduced else "(not reduced)"
    report(results, time.monotonic() - started, console)
    write_json(json_path, results, meta(True))
    console.print(f"results: {json_path}")
    sys.exit(1 if any(r.outcome in BUGS for r in results) else 0)


def _version(argv: list[str], cwd: Path) -> str:
    done = run(argv, 30, cwd=cwd)   # csmith writes platform.info where it runs
    return done.stdout.splitlines()[0] if done.stdout else ""


def bugs(results: Iterable[Result]) -> list[Result]:
    return [r for r in results if r.outcome in BUGS]


if __name__ == "__main__":
    main()
