"""`make bench`: how fast approxcc tune explores, side by side, on examples/tune.

1. Evaluations per minute: the same configurations measured through one `--tunable` binary
   (APPROX_CONFIG per run) and by recompiling each one (`approxcc build --config`, then run).
2. Front quality against tuning time: hypervolume of the (time / exact time, QoS loss)
   front after 10, 20 and 40 s of tuning, with and without the screening pass.
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from rich.console import Console
from rich.table import Table

from approxcc.tune import CProgram, TuneOptions, tune
from approxcc.tune.measure import Measurer, config_document
from approxcc.tune.pareto import hypervolume

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "tune"
APPROXCC = str(Path(sys.executable).parent / "approxcc")
CONFIGS = 6
BUDGETS = [0.005, 0.01, 0.02]
TIME_LIMIT = 40.0
CHECKPOINTS = (10.0, 20.0, 40.0)

console = Console()


def sample_configs(app: CProgram, n: int) -> list[dict]:
    rng = random.Random(0)
    space = app.knob_space()
    return [{k.name: {"value": rng.choice(k.values)} for k in space.knobs} for _ in range(n)]


def evals_per_minute(work: Path) -> tuple[float, float, float]:
    """(tunable evals/min, recompiling evals/min, seconds of the one tunable build)."""
    app = CProgram.load(str(EXAMPLE))
    configs = sample_configs(app, CONFIGS)
    start = time.perf_counter()
    app.build(work / "build")
    build_time = time.perf_counter() - start
    measurer = Measurer(app, work)
    golden = measurer.baseline(app.tune_inputs).outputs
    start = time.perf_counter()
    for c in configs:
        measurer.measure(c, app.tune_inputs, golden)
    tunable = CONFIGS / (time.perf_counter() - start) * 60
    sources = app.release_sources(work)
    start = time.perf_counter()
    for i, c in enumerate(configs):
        path = work / f"c{i}.json"
        path.write_text(json.dumps(config_document(app, c)))
        binary = work / f"release{i}"
        subprocess.run([APPROXCC, "build", *sources, f"-I{EXAMPLE}", "--config", str(path),
                        "-o", str(binary)], check=True, capture_output=True)
        for inp in app.tune_inputs:
            subprocess.run([str(binary), inp], check=True, capture_output=True)
    recompile = CONFIGS / (time.perf_counter() - start) * 60
    return tunable, recompile, build_time


def front_quality(work: Path, screening: bool) -> list[float]:
    """Hypervolume (reference: exact time, largest budget) at each checkpoint."""
    example = work / "example"
    shutil.copytree(EXAMPLE, example, ignore=shutil.ignore_patterns("tuned"))
    for extra in sorted((example / "inputs" / "eval").iterdir())[4:]:
        extra.unlink()     # validation is not what this measures
    out = work / ("screened" if screening else "unscreened")
    tune(CProgram.load(str(example)),
         TuneOptions(BUDGETS, out, time_limit=TIME_LIMIT, seed=0, screening=screening),
         Console(quiet=True))
    with sqlite3.connect(out / "results.db") as conn:
        base = conn.execute("SELECT baseline_tune FROM runs").fetchone()[0]
        rows = conn.execute("SELECT finished, time_tune, loss_tune, phase FROM evaluations "
                            "WHERE inputs = 'tune' AND status = 'ok' ORDER BY id").fetchall()
    start = datetime.fromisoformat(rows[0][0])
    points = [((datetime.fromisoformat(f) - start).total_seconds(), t / base, loss)
              for f, t, loss, _ in rows]
    return [hypervolume([(t, loss) for at, t, loss in points if at <= cp], (1.0, BUDGETS[-1]))
            for cp in CHECKPOINTS]


def main() -> None:
    console.rule("[bold]approxcc tune: exploration speed on examples/tune")
    with tempfile.TemporaryDirectory(prefix="tune-bench-") as tmp:
        work = Path(tmp)
        tunable, recompile, build_time = evals_per_minute(work / "speed")
        speed = Table(title=f"evaluations per minute ({CONFIGS} configurations, "
                            f"4 tuning inputs each)")
        speed.add_column("method")
        speed.add_column("evals / min", justify="right")
        speed.add_row("tunable build (one binary, APPROX_CONFIG)", f"{tunable:.1f}")
        speed.add_row("recompile per configuration (--config)", f"{recompile:.1f}")
        speed.add_row("ratio", f"{tunable / recompile:.1f}×")
        speed.add_row("(the tunable build itself, once)", f"{build_time:.1f} s")
        console.print(speed)
        quality = Table(title=f"front hypervolume (time / exact, loss ≤ {BUDGETS[-1]:.0%}; "
                              f"larger is better)")
        quality.add_column("tuning time", justify="right")
        quality.add_column("with screening", justify="right")
        quality.add_column("without", justify="right")
        with_s = front_quality(work / "with", True)
        without = front_quality(work / "without", False)
        for cp, a, b in zip(CHECKPOINTS, with_s, without, strict=True):
            quality.add_row(f"{cp:.0f} s", f"{a:.5f}", f"{b:.5f}")
        console.print(quality)


if __name__ == "__main__":
    main()
