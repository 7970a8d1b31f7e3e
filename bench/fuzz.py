"""A seeded fuzzer for the driver: no input may give a Python traceback or a hang.

Inputs are made from the C programs of the repository (tests/c_programs/*.c, examples/):

* annotations: an annotation mutated or inserted before a statement — directives, clauses,
  clause values, garbage tokens, line continuations, both spellings;
* C: the tokens of a valid program deleted, duplicated, swapped or replaced;
* configurations: a `-fapprox-config` file for the program's knobs, mutated (types, values,
  keys, truncated or corrupted JSON);
* flags: driver flags from its table, with values of every kind.

Each input is compiled with `approxcc -S --emit=mlir` (frontend and approx passes), one in
eight with `-c` (through mlir-opt, opt and llc too). The driver runs in-process in a pool of
worker processes (fast: no start-up per input); a worker that does not answer within the
timeout is killed with its tools and counted as a hang. Outcomes: success, diagnostic
(`error:`, status 1), internal compiler error, traceback, hang.

    python bench/fuzz.py --count 5000 --seed 1 [--jobs 2] [--keep DIR] [SEED.c ...]

prints a summary (per mutator and outcome, the distinct ICE and traceback messages) and exits
with status 1 when any input gave a traceback or a hang.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
OUTCOMES = ("success", "diagnostic", "ice", "traceback", "hang")

DIRECTIVES = ("loop_perforate", "func_substitute", "task_skipping", "memoize",
              "loop_truncate", "loop_perforat", "memo", "", "LOOP_PERFORATE", "knob")
CLAUSES = ("knob", "values", "variants", "state", "thresholds", "range", "check", "recover",
           "knobb", "value", "")
VALUES = ("", "1", "0", "-1", "1:8", "8:1", "1:1", "1:4096", "1:4097", "0:99999999999",
          "1, 2, 4", "1,", ",", "1.5", "1e9", "0x10", "-0", "99999999999999999999999", "x",
          "k", "k2", "exact", "report(&s)", "i", "n", "i < n", "f(x)", "(1)", "((", "))",
          '"s"', "'c'", "sizeof(int)", "@", "\u00e9", "a" * 300, "1:", ":", "2:2:2",
          "main", "printf", "s", "exact()", "&&", "0:100", "3", "-5:5", "99999999999",
          "2147483648", "0:9223372036854775807")
GARBAGE = ("(", ")", ",", ";", "\\", "{", "}", "#", "@approx", "knob", "=", "::", '"', "'",
           "/*", "*/", "\t", "\u00e9", "0", "#pragma", "approx", "\\\n")
_TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/|\w+|\S',
                    re.S)
_ANNOTATION = re.compile(r"^[ \t]*(#[ \t]*pragma[ \t]+approx|//[ \t]*@approx)\b.*$", re.M)
_STATEMENT = re.compile(r"^[ \t]+(for|if|while|do|return|\w+[ \t]*(=|\+=|\()|\{)", re.M)
_KNOB = re.compile(r"knob\((\w+)\)")


def seeds() -> list[Path]:
    found = sorted((ROOT / "tests" / "c_programs").glob("*.c"))
    found += sorted(p for p in (ROOT / "examples").rglob("*.c") if p.stat().st_size < 20000)
    return found


# -- mutators: (rng, source text) → the input ---------------------------------------------------

@dataclass
class Mutation:
    source: str
    config: str | None = None                          # a -fapprox-config file
    flags: list[str] = field(default_factory=list)     # more driver flags



def _annotation(rng: random.Random) -> str:
    spelling = rng.choice(("#pragma approx", "// @approx", "#  pragma  approx", "//@approx"))
    parts = [spelling, rng.choice(DIRECTIVES)]
    for _ in range(rng.randrange(5)):
        clause = rng.choice(CLAUSES)
        parts.append(f"{clause}({rng.choice(VALUES)})" if rng.random() < 0.9 else clause)
        if clause in ("thresholds", "range") and rng.random() < 0.7:
            parts.append(f"state({rng.choice(('n', 'i', '1.5', 's'))})")  # what they need
        elif clause == "recover" and rng.random() < 0.7:
            parts.append("check(s > 0)")
    if rng.random() < 0.3:
        parts.insert(rng.randrange(1, len(parts) + 1), rng.choice(GARBAGE))
    if rng.random() < 0.1:
        parts.insert(rng.randrange(2, len(parts) + 1), "\\\n   ")
    return " ".join(parts)


def mutate_annotation(rng: random.Random, source: str) -> Mutation:
    existing = list(_ANNOTATION.finditer(source))
    if existing and rng.random() < 0.5:
        m = rng.choice(existing)
        line = m.group()
        tokens = line.split()
        for _ in range(rng.randrange(1, 3)):
            i = rng.randrange(len(tokens))
            choice = rng.random()
            if choice < 0.4:
                tokens[i] = re.sub(r"\(([^()]*)\)", lambda _: f"({rng.choice(VALUES)})",
                                   tokens[i], count=1)
            elif choice < 0.6 and len(tokens) > 2:
                del tokens[i]
            elif choice < 0.8:
                tokens.insert(i, rng.choice(GARBAGE + VALUES))
            else:
                tokens.append(f"{rng.choice(CLAUSES)}({rng.choice(VALUES)})")
        return Mutation(source[:m.start()] + " ".join(tokens) + source[m.end():])
    statements = list(_STATEMENT.finditer(source))
    if not statements:
        return Mutation(_annotation(rng) + "\n" + source)
    at = rng.choice(statements).start()
    return Mutation(source[:at] + _annotation(rng) + "\n" + source[at:])


def mutate_c(rng: random.Random, source: str) -> Mutation:
    spans = [m.span() for m in _TOKEN.finditer(source)]
    pieces = [source[a:b] for a, b in spans]
    gaps = [source[b:a] for (_, b), (a, _) in zip(spans, spans[1:], strict=False)] + [""]
    for _ in range(rng.randrange(1, 4)):
        i = rng.randrange(len(pieces))
        op = rng.randrange(4)
        if op == 0:
            pieces[i] = ""
        elif op == 1:
            pieces[i] = pieces[i] + " " + pieces[i]
        elif op == 2:
            j = rng.randrange(len(pieces))
            pieces[i], pieces[j] = pieces[j], pieces[i]
        else:
            pieces[i] = rng.choice(pieces)
    head = source[:spans[0][0]] if spans else ""
    return Mutation(head + "".join(p + g for p, g in zip(pieces, gaps, strict=True)))


def _json_values(rng: random.Random) -> object:
    return rng.choice((1, 2, 4, 0, -1, 3, 2**63, 1.5, "2", None, True, [], [1, 2], {},
                       {"value": 2}, "x" * 50, float("inf") if rng.random() < 0.1 else 8))


def mutate_config(rng: random.Random, source: str) -> Mutation:
    names = _KNOB.findall(source) or ["missing_knob"]
    knobs: dict[str, object] = {}
    for name in rng.sample(names, k=min(len(names), rng.randrange(1, 3))):
        setting: dict[str, object] = {"value": rng.choice((1, 2, 4))}
        if rng.random() < 0.3:
            setting = {"thresholds": [rng.randrange(-5, 100) for _ in range(rng.randrange(3))],
                       "decisions": [rng.randrange(0, 9) for _ in range(rng.randrange(4))]}
        knobs[name] = setting
    config: dict[str, object] = {"approxcc": "1", "program": "fuzz", "knobs": knobs}
    root: object = config
    for _ in range(rng.randrange(1, 3)):
        op = rng.randrange(8)
        target = rng.choice(list(knobs.values())) if knobs else {}
        if op == 0 and isinstance(target, dict):
            target[rng.choice(("value", "thresholds", "decisions", "extra", "values"))] = \
                _json_values(rng)
        elif op == 1:
            knobs[rng.choice(("nope", "", "k" * 200, names[0].upper()))] = {"value": 1}
        elif op == 2:
            config[rng.choice(("approxcc", "knobs", "program"))] = _json_values(rng)
        elif op == 3:
            config.pop(rng.choice(("approxcc", "knobs", "program")), None)
        elif op == 4 and knobs:
            knobs[rng.choice(list(knobs))] = _json_values(rng)
        elif op == 5:
            root = rng.choice(([], "text", 1, None, {"knobs": []}, {"approxcc": "1"}))
        else:
            config["extra"] = {"nested": [[[]]]}
    text = json.dumps(root, allow_nan=True)
    if rng.random() < 0.25:
        at = rng.randrange(len(text) + 1)
        text = text[:at] + rng.choice(("", ",", "}", "\u00e9", "\x00", '"', "]")) + \
            text[at + rng.randrange(2):]
    return Mutation(source, config=text)


def mutate_flags(rng: random.Random, source: str) -> Mutation:
    """Driver flags from its table (driver/options.py), with values of every kind."""
    from approxcc.driver.options import SPELLINGS

    flags = []
    for _ in range(rng.randrange(1, 5)):
        spelling = rng.choice(SPELLINGS)
        value = rng.choice(("", "x", "0", "-", "=", "always", "obj", "cpu", "llvm", "c11",
                            "/nonexistent", "error", "approx-exact-knob", "--", "-o"))
        flags += rng.choice(([spelling], [spelling + value], [spelling, value]))
    if rng.random() < 0.2:
        flags.append(rng.choice(("-###", "-v", "-E", "-MD", "-c", "-S", "-emit-llvm")))
    return Mutation(source, flags=flags)


MUTATORS: dict[str, Callable[[random.Random, str], Mutation]] = {
    "annotation": mutate_annotation, "c": mutate_c, "config": mutate_config,
    "flags": mutate_flags}


# -- running ----------------------------------------------------------------------------------

@dataclass
class Case:
    index: int
    mutator: str
    seed_file: str
    folder: Path
    argv: list[str]


@dataclass
class Outcome:
    status: int
    stderr: str


@contextlib.contextmanager
def _captured() -> Iterator[dict[str, str]]:
    """File descriptors 1 and 2 (the tools' output too), and sys.stdout/stderr on them, into
    a temporary file."""
    out: dict[str, str] = {}
    streams = sys.stdout, sys.stderr
    for stream in streams:
        stream.flush()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        try:
            yield out
        finally:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(ValueError, OSError):
                    stream.flush()
            sys.stdout, sys.stderr = streams
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            sink.seek(0)
            out["text"] = sink.read().decode(errors="replace")


def _worker(conn: Connection, scratch: str) -> None:
    """Runs the driver in this process on each command line it receives, in `scratch`, where
    temporary files (ICE reproducers too) go."""
    os.setpgrp()  # killed with its tools when it hangs
    os.chdir(scratch)  # what flags such as -save-temps or -MD write lands there
    tempfile.tempdir = scratch
    from approxcc.cli import run

    while (argv := conn.recv()) is not None:
        with _captured() as out:
            try:
                status = run(argv)
            except BaseException:  # noqa: BLE001 - escaping run() is the bug counted here
                traceback.print_exc()
                status = 1
        conn.send(Outcome(status, out["text"]))


class Pool:
    """Worker processes, each replaced when it hangs or dies."""

    def __init__(self, size: int, timeout: float, scratch: Path):
        self.context = multiprocessing.get_context("fork")
        self.timeout = timeout
        self.scratch = str(scratch)
        self.workers = [self._start() for _ in range(size)]

    def _start(self) -> tuple[multiprocessing.process.BaseProcess, Connection]:
        ours, theirs = self.context.Pipe()
        proc = self.context.Process(target=_worker, args=(theirs, self.scratch), daemon=True)
        proc.start()
        return proc, ours

    def _kill(self, k: int) -> None:
        proc, conn = self.workers[k]
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.join()
        conn.close()
        self.workers[k] = self._start()

    def run(self, cases: list[Case], done: Callable[[Case, Outcome | None], None]) -> None:
        todo = list(reversed(cases))
        busy: dict[int, tuple[Case, float]] = {}
        while todo or busy:
            for k in range(len(self.workers)):
                if k not in busy and todo:
                    case = todo.pop()
                    self.workers[k][1].send(case.argv)
                    busy[k] = (case, time.monotonic())
            for k, (case, started) in list(busy.items()):
                proc, conn = self.workers[k]
                if conn.poll(0.01):
                    try:
                        outcome = conn.recv()
                    except EOFError:  # the worker died: the interpreter itself crashed
                        outcome = Outcome(-1, "Traceback (worker died)")
                        self._kill(k)
                    del busy[k]
                    done(case, outcome)
                elif time.monotonic() - started > self.timeout:
                    self._kill(k)
                    del busy[k]
                    done(case, None)

    def close(self) -> None:
        for proc, conn in self.workers:
            with contextlib.suppress(OSError):
                conn.send(None)
            proc.join(timeout=5)
            if proc.is_alive():
                os.killpg(proc.pid, signal.SIGKILL)


def classify(outcome: Outcome | None) -> str:
    if outcome is None:
        return "hang"
    if "Traceback" in outcome.stderr:
        return "traceback"
    if "internal compiler error" in outcome.stderr:
        return "ice"
    if outcome.status == 0:
        return "success"
    if outcome.status == 1 and "error:" in outcome.stderr:
        return "diagnostic"
    return "traceback"  # any other exit: as bad as a traceback


def signature(outcome: Outcome, kind: str) -> str:
    """What tells two failures apart: the message (numbers, names and paths elided) and
    where it was raised."""
    text = outcome.stderr
    if kind == "ice":
        message = text.split("internal compiler error: ", 1)[1].splitlines()[0]
        where = re.search(r"raised at (\S+)", text)
        place = where.group(1) if where else ""
    else:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        message = lines[-1] if lines else "(no output)"
        frames = re.findall(r'File "([^"]+)", line (\d+)', text)
        place = f"{Path(frames[-1][0]).name}:{frames[-1][1]}" if frames else ""
    message = re.sub(r"'[^']*'", "'…'", re.sub(r"/\S+", "PATH", message))
    return f"{message[:160]}  [{place}]"


@dataclass
class Summary:
    counts: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    failures: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    examples: dict[str, Case] = field(default_factory=dict)


def make_cases(count: int, seed: int, work: Path, files: list[Path]) -> list[Case]:
    texts = {p: p.read_text(errors="replace") for p in files}
    cases = []
    for i in range(count):
        rng = random.Random(seed * 1_000_003 + i)
        mutator = rng.choice(list(MUTATORS))
        src = rng.choice(files)
        mutation = MUTATORS[mutator](rng, texts[src])
        folder = work / f"{i:05d}"
        folder.mkdir()
        c_file = folder / src.name
        c_file.write_text(mutation.source)
        argv = [str(c_file), f"-I{src.parent}", f"-I{ROOT / 'runtime'}"]
        if mutation.config is not None:
            (folder / "c.json").write_text(mutation.config)
            argv.append(f"-fapprox-config={folder / 'c.json'}")
        if rng.random() < 0.125:
            argv += ["-c", "-o", str(folder / "out.o")]
        else:
            argv += ["-S", "--emit=mlir", "-o", str(folder / "out.mlir")]
        argv += mutation.flags
        cases.append(Case(i, mutator, src.name, folder, argv))
    return cases


def fuzz(count: int, seed: int, jobs: int, timeout: float, keep: Path | None,
         console: Console, files: list[Path] | None = None) -> Summary:
    """Runs `count` inputs made from `files` (default: the repository's programs)."""
    summary = Summary()
    with tempfile.TemporaryDirectory(prefix="approxcc-fuzz-") as tmp:
        cases = make_cases(count, seed, Path(tmp), files or seeds())
        (Path(tmp) / "scratch").mkdir()
        pool = Pool(jobs, timeout, Path(tmp) / "scratch")
        progress = {"n": 0}

        def done(case: Case, outcome: Outcome | None) -> None:
            kind = classify(outcome)
            summary.counts[case.mutator][kind] += 1
            if kind in ("ice", "traceback", "hang"):
                sig = "timed out" if outcome is None else signature(outcome, kind)
                summary.failures[kind][sig] += 1
                summary.examples.setdefault(f"{kind}:{sig}", case)
                if keep is not None:
                    target = keep / f"{kind}-{case.index:05d}"
                    shutil.copytree(case.folder, target, dirs_exist_ok=True)
                    (target / "command").write_text(" ".join(["approxcc", *case.argv]) + "\n")
                    (target / "stderr").write_text(outcome.stderr if outcome else "hang\n")
            shutil.rmtree(case.folder, ignore_errors=True)
            progress["n"] += 1
            if progress["n"] % 500 == 0:
                console.print(f"[dim]{progress['n']}/{count}[/dim]")

        try:
            pool.run(cases, done)
        except KeyboardInterrupt:  # Ctrl-C: the summary of the inputs run so far
            console.print(f"[yellow]interrupted after {progress['n']} inputs[/yellow]")
        finally:
            pool.close()
    return summary


def report(summary: Summary, seconds: float, console: Console) -> None:
    table = Table(title="approxcc fuzzer: outcomes per mutator")
    table.add_column("mutator")
    for kind in OUTCOMES:
        table.add_column(kind, justify="right")
    total: Counter[str] = Counter()
    for mutator in MUTATORS:
        row = summary.counts[mutator]
        total.update(row)
        table.add_row(mutator, *(str(row[k]) for k in OUTCOMES))
    table.add_row("[bold]all[/bold]", *(f"[bold]{total[k]}[/bold]" for k in OUTCOMES))
    console.print(table)
    n = sum(total.values())
    console.print(f"{n} inputs in {seconds:.0f} s ({n / max(seconds, 1e-9):.1f} inputs/s)")
    for kind in ("traceback", "hang", "ice"):
        if not summary.failures[kind]:
            continue
        listing = Table(title=f"distinct {kind} messages ({len(summary.failures[kind])})")
        listing.add_column("count", justify="right")
        listing.add_column("message [where]")
        listing.add_column("example (seed file, mutator)")
        for sig, k in summary.failures[kind].most_common(15):
            case = summary.examples[f"{kind}:{sig}"]
            listing.add_row(str(k), sig, f"#{case.index} {case.seed_file} {case.mutator}")
        console.print(listing)


@click.command()
@click.option("--count", type=click.IntRange(1), default=500, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--jobs", type=click.IntRange(1), default=2, show_default=True,
              help="Worker processes.")
@click.option("--timeout", type=float, default=60.0, show_default=True,
              help="Seconds before an input counts as a hang.")
@click.option("--keep", type=click.Path(file_okay=False, path_type=Path),
              help="Copy each failing input (source, config, command, stderr) here.")
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False,
                                                    path_type=Path))
def main(count: int, seed: int, jobs: int, timeout: float, keep: Path | None,
         files: tuple[Path, ...]) -> None:
    """Fuzz the driver; status 1 when an input gave a traceback or a hang."""
    console = Console()
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    summary = fuzz(count, seed, jobs, timeout, keep, console, list(files))
    report(summary, time.monotonic() - started, console)
    bad = sum(summary.failures["traceback"].values()) + sum(summary.failures["hang"].values())
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
