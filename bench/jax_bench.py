"""`make bench-jax`: JAX programs nobody here wrote (bench/jax_corpus.toml), built with
approxcc and timed against `jax.jit`, per program and variant (docs/ml-corpus.md).

    python bench/jax_bench.py [--repos DIR] [--only NAME ...] [--rounds N] [--batch S]
                              [--cpu-backend auto|xla|iree] [--no-build] [--out DIR]

Per program of the table:

1. its files are copied at its commit out of a git directory of its repository under DIR
   (`--repos`, env JAX_CORPUS_REPOS; bench/jax_corpus.toml says what DIR holds) into
   OUT/src/, where its wrapper (bench/jax_corpus/) imports them from;
2. `approxcc bench/jax_corpus/WRAPPER -o OUT/NAME --keep-going` builds every variant for
   the CPU (a rebuild compiles only what changed) and checks each against `jax.jit` of the
   exact function on the wrapper's example inputs: the manifest's relL2, max |err| and
   bound are the figures printed here; a variant IREE cannot compile is listed with its
   error, a build that fails is reported, not raised;
3. in a child process (a crash there is one program's failure): `jax.jit` of the
   undecorated function (weights put on the device once, as the IREE runtime keeps them),
   the exact IREE variant and every other variant (`approxcc.ml.runtime.load` with the
   variant's configuration) run on the example inputs, each returning numpy arrays; after
   two warm-up calls each, `--rounds` rounds, every runner in turn (in an order shuffled
   from round to round so that load from other processes hits them alike), each round a
   batch of calls of at least `--batch` seconds; the time of a call is a batch's over its
   calls, the figure the median over rounds; a ratio of two runners (x jax.jit, x exact) is
   the median over rounds of the ratio within a round (the two timed seconds apart, so a
   minute of load from elsewhere moves both alike).

Printed per program and variant: what runs it on the CPU ("on": the build times a
variant's vmfb beside its XLA form and keeps the faster, docs/ml.md; `--cpu-backend iree`
builds IREE alone), relL2 and max |err| against exact (the build's), ms a call, x jax.jit and
x exact (speedups: above 1 is faster), and x best, over the faster of the two, which is the
speedup that counts; a variant past the build's bound, or that failed to build or to run, is
flagged; then every variant slower than jax.jit, beside the noise: the 95% interval of its
median ratio (from the per-round ratios, distribution-free: `median_interval`; "beyond the
noise" where all of it is below 1) and "jax.jit again", a second jax.jit of the same
function timed as one more runner (the same executable: how far from 1 a ratio comes out by
chance in this run); and the exact variants slower than jax.jit beyond the noise.
Everything goes to OUT/results.json.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import math
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
WRAPPERS = ROOT / "bench" / "jax_corpus"
sys.path.insert(0, str(WRAPPERS))
import _corpus  # noqa: E402

APPROXCC = str(Path(sys.executable).parent / "approxcc")
BUILD_TIMEOUT = 1200      # seconds for one program's build
TIME_TIMEOUT = 900        # seconds for one program's timing
JIT = "jax.jit"
# a second jax.jit of the same function, timed as one more runner: how far apart two runs of
# one executable come out in this run (the noise a ratio near 1 sits in)
JIT_AGAIN = "jax.jit again"
BACKEND_ENV = "APPROXCC_ML_CPU_BACKEND"   # what runs a CPU variant: auto | xla | iree
EXACT = "exact"
# approxcc --keep-going's line for a variant IREE could not compile
_NOT_BUILT = re.compile(r"warning: variant <(?P<labels>[^>]*)> of '(?P<fn>\w+)' for target "
                        r"cpu: (?P<error>.*?) \(not built; --keep-going\)")
console = Console(width=None if sys.stdout.isatty() else 160)


@dataclass
class VariantResult:
    id: str
    name: str                     # "exact", or the knobs off exact: "quant=int8,precision=bf16"
    labels: dict[str, Any]
    backend: str = "iree"         # what runs it on the CPU (the manifest's backend.cpu)
    build_time_ms: dict[str, float] | None = None   # the build's timing of both backends
    relL2: float | None = None
    max_abs_err: float | None = None
    bound: float | None = None
    broken: bool = False
    ms: float | None = None       # median time of a call
    spread: float | None = None   # (max - min) / median over the rounds
    x_jit: float | None = None    # jax.jit's time over this one's (`paired`)
    x_jit_ci: tuple[float, float] | None = None   # its 95% interval (`paired_interval`)
    x_exact: float | None = None
    x_best: float | None = None   # over the faster of jax.jit and exact
    bench_relL2: float | None = None   # against jax.jit's outputs in the timing process
    error: str | None = None      # why it was not built or not run

    @property
    def flags(self) -> list[str]:
        out = []
        if self.error:
            out.append(self.error)
        if self.broken or self.relL2 is not None and self.bound is not None \
                and self.relL2 > self.bound:
            out.append(f"past the build's bound (relL2 {self.bound:g})")
        if self.bench_relL2 is not None and self.bound is not None \
                and self.bench_relL2 > self.bound and not self.broken:
            out.append(f"relL2 {self.bench_relL2:.3g} in the timing process")
        return out


@dataclass
class ProgramResult:
    name: str
    repo: str
    commit: str
    paths: list[str]
    covers: list[str]
    status: str = "ok"            # ok | no source | build failed | timing failed
    error: str | None = None
    internal_error: bool = False  # an approxcc internal compiler error (or traceback)
    build_s: float | None = None
    jit_ms: float | None = None
    jit_spread: float | None = None
    jit_again_ms: float | None = None
    jit_again_x: float | None = None   # jax.jit's time over its own again: the noise
    jit_again_ci: tuple[float, float] | None = None
    variants: list[VariantResult] = field(default_factory=list)

    @property
    def exact(self) -> VariantResult | None:
        return next((v for v in self.variants if v.name == EXACT), None)


# --- results from a manifest and timings (no builds: tests/test_bench_jax.py) -------------

def variant_name(labels: dict[str, Any], exact_labels: dict[str, Any]) -> str:
    off = [f"{k}={_text(v)}" for k, v in labels.items() if v != exact_labels.get(k)]
    return ",".join(off) or EXACT


def _text(label: Any) -> str:
    return ",".join(map(str, label)).join("()") if isinstance(label, list | tuple) \
        else str(label)


def summarize(prog: ProgramResult, manifest: dict[str, Any], entry: str,
              timings: dict[str, Any] | None, stderr: str = "") -> ProgramResult:
    """Fills `prog`'s variants from the build's manifest (accuracy, what was not built: its
    error from the build's `stderr`) and the timing process's `timings` (ms and spread per
    runner id, jax.jit's under JIT; relL2 against jax.jit per variant id under
    "relL2")."""
    fn = manifest["functions"][entry]
    knobs = fn["knobs"]
    exact_labels = {k["name"]: k["values"][k["domain"].index(k["exact"])]
                    if k["exact"] is not None else None for k in knobs}
    not_built = {m["labels"]: m["error"] for m in _NOT_BUILT.finditer(stderr)
                 if m["fn"] == entry}
    failed = set(fn.get("failed", {}).get("cpu", []))
    prog.variants = []
    for v in fn["variants"]:
        labels = v["labels"]
        result = VariantResult(v["id"], variant_name(labels, exact_labels), labels,
                               (v.get("backend") or {}).get("cpu", "iree"), v.get("time_ms"))
        acc = v.get("accuracy") or {}
        result.relL2, result.max_abs_err = acc.get("relL2"), acc.get("max_abs_err")
        result.bound, result.broken = acc.get("bound"), bool(acc.get("broken"))
        if acc.get("error"):
            result.error = acc["error"]
        if v["id"] in failed or not runs_on_cpu(v):
            shown = ",".join(f"{k}={_text(x)}" for k, x in labels.items())
            result.error = "not built: " + not_built.get(shown, "IREE failed to compile it")
        prog.variants.append(result)
    prog.variants.sort(key=lambda r: r.name != EXACT)   # exact first
    if timings:
        apply_timings(prog, timings)
    return prog


def runs_on_cpu(variant: dict[str, Any]) -> bool:
    """The build runs `variant` on the CPU: its vmfb, its dispatch's, or its XLA form (one
    IREE cannot compile, e.g. a LAPACK custom call, runs on XLA)."""
    return ("cpu" in variant.get("vmfb", {}) or bool(variant.get("dispatch"))
            or (variant.get("backend") or {}).get("cpu") == "xla")


def apply_timings(prog: ProgramResult, timings: dict[str, Any]) -> None:
    runs = timings.get("runs", {})
    if JIT in runs:
        prog.jit_ms, prog.jit_spread = runs[JIT]["ms"], runs[JIT]["spread"]
    if JIT_AGAIN in runs:
        prog.jit_again_ms = runs[JIT_AGAIN]["ms"]
        prog.jit_again_x = paired(runs.get(JIT), runs[JIT_AGAIN])
        prog.jit_again_ci = paired_interval(runs.get(JIT), runs[JIT_AGAIN])
    for v in prog.variants:
        if v.id in runs:
            v.ms, v.spread = runs[v.id]["ms"], runs[v.id]["spread"]
        if v.id in timings.get("relL2", {}):
            v.bench_relL2 = timings["relL2"][v.id]
        if v.id in timings.get("errors", {}):
            v.error = timings["errors"][v.id]
    exact = prog.exact
    for v in prog.variants:
        if v.ms:
            v.x_jit = paired(runs.get(JIT), runs[v.id])
            v.x_jit_ci = paired_interval(runs.get(JIT), runs[v.id])
            v.x_exact = paired(runs.get(exact.id), runs[v.id]) if exact else None
            known = [x for x in (v.x_jit, v.x_exact) if x is not None]
            v.x_best = min(known) if known else None   # over the faster of the two


def round_ratios(base: dict[str, Any] | None, run: dict[str, Any]) -> list[float] | None:
    """`base`'s time over `run`'s within each round, where both have their rounds' times."""
    if not base or not base.get("rounds") or not run.get("rounds"):
        return None
    return [b / r for b, r in zip(base["rounds"], run["rounds"], strict=True)]


def paired(base: dict[str, Any] | None, run: dict[str, Any]) -> float | None:
    """`base`'s time over `run`'s (runners' timings): the median over rounds of the ratio
    within a round (`round_ratios`) where both have their rounds' times, else the ratio of
    the medians."""
    if not base or not base.get("ms") or not run.get("ms"):
        return None
    ratios = round_ratios(base, run)
    return statistics.median(ratios) if ratios else base["ms"] / run["ms"]


def paired_interval(base: dict[str, Any] | None, run: dict[str, Any]
                    ) -> tuple[float, float] | None:
    """The 95% interval of `paired`'s median ratio, from the ratios within rounds (None
    without rounds, or with too few of them for one)."""
    ratios = round_ratios(base, run)
    return median_interval(ratios) if ratios else None


def median_interval(values: list[float], confidence: float = 0.95
                    ) -> tuple[float, float] | None:
    """A distribution-free interval for the median: the k-th smallest and k-th largest
    value, k the largest with P(Binomial(n, 1/2) < k) <= (1 - confidence) / 2 (15 rounds:
    the 4th and the 12th of 15). None where n is too small for one (n < 6 at 95%)."""
    xs, n = sorted(values), len(values)
    tail, k = 0.0, 0
    while k < n and tail + math.comb(n, k) / 2 ** n <= (1 - confidence) / 2:
        tail += math.comb(n, k) / 2 ** n
        k += 1
    return (xs[k - 1], xs[n - k]) if k else None


@dataclass(frozen=True)
class Slower:
    """A timed variant slower than jax.jit (its median ratio below 1); `beyond_noise`: the
    whole 95% interval of its per-round ratios is below 1, so chance does not explain it."""

    program: str
    variant: str
    x_jit: float
    interval: tuple[float, float] | None

    @property
    def beyond_noise(self) -> bool:
        return self.interval is not None and self.interval[1] < 1.0


def slower_than_jit(results: list[ProgramResult]) -> list[Slower]:
    """Every timed variant slower than jax.jit."""
    return [Slower(p.name, v.name, v.x_jit, v.x_jit_ci) for p in results for v in p.variants
            if v.x_jit is not None and v.x_jit < 1.0]


def program_table(prog: ProgramResult) -> Table:
    title = f"{prog.name}: {prog.repo}@{prog.commit[:12]} ({', '.join(prog.covers)})"
    table = Table(title=title, title_justify="left")
    for col in ("variant", "on", "relL2", "max |err|", "ms", "x jax.jit", "x exact", "x best",
                "flags"):
        table.add_column(col, justify="left" if col in ("variant", "on", "flags") else "right")
    status = [f"[red]{prog.status}[/red]", "", "", "", "", "", "", "", prog.error or ""]
    if prog.status != "ok" and not prog.variants:
        table.add_row(*status)
        return table
    if prog.jit_ms is not None:
        table.add_row(JIT, "xla", "", "", _ms(prog.jit_ms), "1", "", "", "")
    if prog.jit_again_x:
        table.add_row(JIT_AGAIN, "xla", "", "", _ms(prog.jit_again_ms),
                      _x(prog.jit_again_x), "", "", "the noise: the same code")
    for v in prog.variants:
        flags = "; ".join(v.flags)
        style = "red" if flags else ("green" if v.x_best and v.x_best > 1 else "")
        table.add_row(v.name, v.backend, _num(v.relL2), _num(v.max_abs_err), _ms(v.ms),
                      _x(v.x_jit), _x(v.x_exact), _x(v.x_best), flags, style=style or None)
    if prog.status != "ok":
        table.add_row(*status)
    return table


def _num(x: float | None) -> str:
    return "" if x is None else f"{x:.3g}"


def _ms(x: float | None) -> str:
    return "" if x is None else f"{x:.3g}" if x < 100 else f"{x:.0f}"


def _x(x: float | None) -> str:
    return "" if x is None else f"{x:.2f}"


def _interval(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f"{ci[0]:.2f}-{ci[1]:.2f}"


def to_json(results: list[ProgramResult], meta: dict[str, Any]) -> dict[str, Any]:
    programs = []
    for p in results:
        d = asdict(p)
        for v, vd in zip(p.variants, d["variants"], strict=True):
            vd["flags"] = v.flags
        programs.append(d)
    return {**meta, "programs": programs,
            "slower_than_jax_jit": [asdict(s) | {"beyond_noise": s.beyond_noise}
                                    for s in slower_than_jit(results)]}


# --- building and timing ---------------------------------------------------------------

def build(prog: dict[str, Any], out: Path, result: ProgramResult) -> tuple[dict, str] | None:
    """The program's manifest and approxcc's stderr, or None (result says why)."""
    cmd = [APPROXCC, str(WRAPPERS / prog["wrapper"]), "-o", str(out), "--keep-going"]
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT,
                              cwd=ROOT)
    except subprocess.TimeoutExpired:
        result.status, result.error = "build failed", f"over {BUILD_TIMEOUT} s"
        return None
    result.build_s = time.perf_counter() - start
    stderr = done.stderr
    out.mkdir(parents=True, exist_ok=True)
    (out / "build.log").write_text(stderr)
    if "internal compiler error" in stderr or "Traceback (most recent call last)" in stderr:
        result.internal_error = True
    if done.returncode != 0:
        result.status = "build failed"
        result.error = _first_diagnostic(stderr) or f"approxcc exited with {done.returncode}"
        return None
    manifest = out / "manifest.json"
    if not manifest.is_file():
        result.status, result.error = "build failed", "no manifest.json"
        return None
    return json.loads(manifest.read_text()), stderr


def _first_diagnostic(stderr: str) -> str:
    for line in stderr.splitlines():
        if "error:" in line:
            return line.strip()
    return stderr.strip().splitlines()[-1] if stderr.strip() else ""


def run_program(prog: dict[str, Any], args: argparse.Namespace) -> ProgramResult:
    result = ProgramResult(prog["name"], prog["repo"], prog["commit"], prog["paths"],
                           prog["covers"])
    why = _corpus.materialize(prog, args.repos)
    if why:
        result.status, result.error = "no source", why
        return result
    out = args.out / prog["name"]
    if args.no_build and (out / "manifest.json").is_file():
        log = out / "build.log"
        built: tuple[dict, str] | None = (json.loads((out / "manifest.json").read_text()),
                                          log.read_text() if log.is_file() else "")
    else:
        console.print(f"[bold]{prog['name']}[/bold]: approxcc {prog['wrapper']} -o {out}")
        built = build(prog, out, result)
    if built is None:
        return result
    manifest, stderr = built
    summarize(result, manifest, prog["entry"], None, stderr)
    timings_file = out / "timings.json"
    timings_file.unlink(missing_ok=True)
    cmd = [sys.executable, __file__, "--time-one", prog["name"], "--out", str(args.out),
           "--rounds", str(args.rounds), "--batch", str(args.batch)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIME_TIMEOUT,
                              cwd=ROOT)
        failed = done.returncode != 0 or not timings_file.is_file()
        why = _last_line(done.stderr) if failed else ""
    except subprocess.TimeoutExpired:
        failed, why = True, f"over {TIME_TIMEOUT} s"
    if failed:
        result.status, result.error = "timing failed", why
        return result
    apply_timings(result, json.loads(timings_file.read_text()))
    return result


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def _import_wrapper(prog: dict[str, Any]) -> Any:
    path = WRAPPERS / prog["wrapper"]
    spec = importlib.util.spec_from_file_location(f"jax_corpus_{path.stem}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def time_one(name: str, args: argparse.Namespace) -> None:
    """The child process: times jax.jit and every built variant of program `name`, writes
    OUT/NAME/timings.json."""
    import jax
    import numpy as np

    from approxcc.ml.runtime import load

    prog = _corpus.program(name)
    out = args.out / name
    manifest = json.loads((out / "manifest.json").read_text())
    entry = prog["entry"]
    module = _import_wrapper(prog)
    afn = getattr(module, entry).__approx__
    weights, *inputs = module.APPROX_EXAMPLE_ARGS[entry]
    narrow = {np.dtype(np.float64): np.float32, np.dtype(np.int64): np.int32}
    inputs = [np.asarray(x) for x in inputs]
    inputs = [x.astype(narrow[x.dtype]) if x.dtype in narrow else x for x in inputs]

    def leaves(out: Any) -> list[np.ndarray]:
        return [np.asarray(x) for x in jax.tree.leaves(out)]

    on_device = jax.device_put(weights)
    jitted = jax.jit(afn.fn)

    def call_jit() -> list[np.ndarray]:
        return leaves(jitted(on_device, *inputs))

    again = jax.jit(afn.fn)
    runners: dict[str, Any] = {JIT: call_jit,
                               JIT_AGAIN: lambda: leaves(again(on_device, *inputs))}
    errors: dict[str, str] = {}
    reference = call_jit()
    rel: dict[str, float] = {}
    fn = manifest["functions"][entry]
    for v in fn["variants"]:
        if not runs_on_cpu(v):
            continue
        config = {"approxcc": "1", "knobs": {k: {"value": x} for k, x in v["choice"].items()}}
        try:
            call = getattr(load(out, config=config), entry)
            got = leaves(call(*inputs))
        except Exception as err:  # noqa: BLE001 - one variant's failure, reported
            errors[v["id"]] = f"failed to run: {type(err).__name__}: {_first(str(err))}"
            continue
        rel[v["id"]] = _rel_l2(got, reference)
        runners[v["id"]] = lambda call=call: leaves(call(*inputs))
    runs = measure(runners, args.rounds, args.batch)
    (out / "timings.json").write_text(json.dumps({"runs": runs, "relL2": rel,
                                                  "errors": errors}, indent=1))


def _first(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _rel_l2(got: list[Any], ref: list[Any]) -> float:
    import numpy as np

    a = np.concatenate([np.ravel(x).astype(np.float64) for x in got])
    e = np.concatenate([np.ravel(x).astype(np.float64) for x in ref])
    norm = float(np.linalg.norm(e))
    return float(np.linalg.norm(a - e)) / norm if norm else float(np.linalg.norm(a - e))


def measure(runners: dict[str, Any], rounds: int, batch: float) -> dict[str, dict[str, float]]:
    """Per runner: the median time of a call (ms) over `rounds` rounds, the spread, and the
    time of each round."""
    calls: dict[str, int] = {}
    for name, run in runners.items():
        run()                                   # compile / load
        start = time.perf_counter()
        run()
        once = time.perf_counter() - start
        calls[name] = max(1, math.ceil(batch / max(once, 1e-6)))
    samples: dict[str, list[float]] = {name: [] for name in runners}
    names = list(runners)
    order = random.Random(0)
    for _ in range(rounds):
        order.shuffle(names)
        for name in names:
            run, n = runners[name], calls[name]
            start = time.perf_counter()
            for _ in range(n):
                run()
            samples[name].append((time.perf_counter() - start) / n * 1e3)
    out = {}
    for name, times in samples.items():
        med = statistics.median(times)
        out[name] = {"ms": med, "spread": (max(times) - min(times)) / med if med else 0.0,
                     "calls_per_round": calls[name], "rounds": times}
    return out


def machine() -> dict[str, Any]:
    from importlib.metadata import version

    cpu = platform.processor()
    try:
        cpu = next(line.split(":", 1)[1].strip()
                   for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True,
                              text=True).stdout.strip()

    return {"date": datetime.datetime.now().isoformat(timespec="seconds"), "cpu": cpu,
            "cores": os.cpu_count(), "load_average": list(os.getloadavg()),
            "jax": version("jax"), "iree": version("iree-base-runtime"),
            "approxcc_commit": git("rev-parse", "--short", "HEAD"),
            # files of approxcc/ that differ from that commit (others' work in progress)
            "approxcc_uncommitted": git("status", "--porcelain", "--", "approxcc").splitlines(),
            "cpu_backend": os.environ.get(BACKEND_ENV, "(approxcc's default)")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=Path,
                        default=os.environ.get("JAX_CORPUS_REPOS") or None,
                        help="folder of the repositories' git directories "
                             "(bench/jax_corpus.toml)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these programs only")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--batch", type=float, default=0.1,
                        help="seconds of calls per runner and round (at least one call)")
    parser.add_argument("--no-build", action="store_true",
                        help="time the builds already in OUT (build those missing)")
    parser.add_argument("--cpu-backend", choices=("auto", "xla", "iree"),
                        help=f"what runs the CPU variants (${BACKEND_ENV} for the builds; "
                             "a build that has no XLA form runs IREE)")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "bench-jax")
    parser.add_argument("--time-one", metavar="NAME", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.out = args.out.resolve()
    if args.repos is not None:
        args.repos = args.repos.resolve()
    if args.time_one:
        time_one(args.time_one, args)
        return 0
    os.environ.setdefault("JAX_CORPUS_SRC", str(args.out / "src"))
    if args.cpu_backend:
        os.environ[BACKEND_ENV] = args.cpu_backend
    programs = _corpus.programs()
    if args.only:
        unknown = set(args.only) - {p["name"] for p in programs}
        if unknown:
            parser.error(f"no program {', '.join(sorted(unknown))} in {_corpus.TABLE}")
        programs = [p for p in programs if p["name"] in args.only]
    meta = machine()
    console.print(f"{meta['date']}: {meta['cpu']}, {meta['cores']} cores, load "
                  f"{meta['load_average'][0]:.1f}; jax {meta['jax']}, IREE {meta['iree']}; "
                  f"approxcc {meta['approxcc_commit']}"
                  f"{' + uncommitted changes' if meta['approxcc_uncommitted'] else ''}, CPU "
                  f"backend {meta['cpu_backend']}")
    results = []
    for prog in programs:
        result = run_program(prog, args)
        results.append(result)
        console.print(program_table(result))
    report(results)
    args.out.mkdir(parents=True, exist_ok=True)
    meta["load_average_after"] = list(os.getloadavg())
    (args.out / "results.json").write_text(json.dumps(to_json(results, meta), indent=1))
    console.print(f"written: {args.out / 'results.json'}")
    return 0


def report(results: list[ProgramResult]) -> None:
    slow = slower_than_jit(results)
    if slow:
        table = Table(title="slower than jax.jit", title_justify="left")
        for col in ("program", "variant", "x jax.jit", "95% interval", "beyond the noise",
                    "jax.jit again", "its interval"):
            table.add_column(col)
        again = {p.name: p for p in results}
        for s in slow:
            table.add_row(s.program, s.variant, _x(s.x_jit), _interval(s.interval),
                          "yes" if s.beyond_noise else "no",
                          _x(again[s.program].jit_again_x),
                          _interval(again[s.program].jit_again_ci),
                          style="red" if s.beyond_noise else None)
        console.print(table)
    exact = [s for s in slow if s.variant == EXACT and s.beyond_noise]
    console.print("exact variants slower than jax.jit beyond the noise (the 95% interval of "
                  "their per-round ratios below 1): "
                  + (", ".join(f"{s.program} {_x(s.x_jit)}" for s in exact) or "none"))
    problems = [(p.name, v.name, "; ".join(v.flags)) for p in results for v in p.variants
                if v.flags]
    problems += [(p.name, "", f"{p.status}: {p.error}") for p in results if p.status != "ok"]
    problems += [(p.name, "", "approxcc internal compiler error") for p in results
                 if p.internal_error]
    if problems:
        table = Table(title="flagged", title_justify="left")
        for col in ("program", "variant", "why"):
            table.add_column(col)
        for row in problems:
            table.add_row(*row)
        console.print(table)


if __name__ == "__main__":
    sys.exit(main())
