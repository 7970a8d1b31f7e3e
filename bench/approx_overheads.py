"""What approxcc's dynamic and tunable machinery costs, measured side by side in one run.

1. Run time of a tunable build (knob values loaded from the runtime config table) over the
   release build of the same configuration (values folded into constants): goal ≤ 1.03.
2. Code size of a loop under a 4-leaf dynamic knob (a decision tree computing the step)
   against the same loop under a static knob: no region is cloned, so about 1×.

Timings are the program's region of interest (approx_roi_*), medians over interleaved runs;
since this machine is shared and noisy, instruction counts (valgrind's callgrind, the same
every run) of a smaller input are given beside them.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "build" / "bench"
SIGNAL = ROOT / "examples" / "perforation" / "signal.c"
# The windowed-energy loop under a static knob or a dynamic one with a 4-leaf tree.
KERNEL = """#include <math.h>
int window_phase(int w, int windows) { return 10 * w / windows; }
void window_energy(const float *x, double *energy, int windows, int width) {
  for (int w = 0; w < windows; w++) {
    double acc = 0.0;
    int count = 0;
    #pragma approx loop_perforate knob(samples) values(1:8) %s
    for (int j = 0; j < width; j++) {
      float v = x[w * width + j];
      acc += sqrt(v * v + 1.0) * (1.0 + 0.5 * sin(v));
      count++;
    }
    energy[w] = acc / count;
  }
}
"""
DYNAMIC_CLAUSES = "state(window_phase(w, windows)) thresholds(3) range(0:10)"
APPROXCC = str(Path(sys.executable).parent / "approxcc")
REPEATS = 15
console = Console()


def approxcc(*args: str) -> None:
    subprocess.run([APPROXCC, "build", *args], check=True)


def write_config(name: str, knobs: dict) -> Path:
    path = OUT / f"{name}.json"
    path.write_text(json.dumps({"approxcc": "1", "program": name, "knobs": knobs}))
    return path


def roi_seconds(binary: Path, config: Path | None) -> float:
    roi = OUT / "roi.txt"
    roi.unlink(missing_ok=True)
    env = {**os.environ, "APPROX_ROI_FILE": str(roi)}
    if config is not None:
        env["APPROX_CONFIG"] = str(config)
    subprocess.run([str(binary)], check=True, stdout=subprocess.DEVNULL, env=env)
    return float(roi.read_text())


def instructions(binary: Path, config: Path | None) -> int:
    """Instructions the whole program executes on a small input (deterministic)."""
    out = OUT / "callgrind.out"
    env = {**os.environ, **({"APPROX_CONFIG": str(config)} if config else {})}
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(binary),
                    "64", "4096"], check=True, capture_output=True, env=env)
    totals = next(line for line in out.read_text().splitlines() if line.startswith("totals:"))
    return int(totals.split()[1])


def tunable_overhead() -> Table:
    tunable = OUT / "signal.tunable"
    approxcc(str(SIGNAL), "--tunable", "-o", str(tunable))
    cases = {}
    for label, value in (("exact", 1), ("perforate ×4", 4)):
        config = write_config(f"signal{value}", {"window_samples": {"value": value}})
        release = OUT / f"signal.release{value}"
        approxcc(str(SIGNAL), "--config", str(config), "-o", str(release))
        cases[label] = (release, config)
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(REPEATS):
        for label, (release, config) in cases.items():
            times.setdefault((label, "release"), []).append(roi_seconds(release, None))
            times.setdefault((label, "tunable"), []).append(roi_seconds(tunable, config))
    table = Table(title=f"tunable vs release build (ROI, median of {REPEATS} interleaved runs)")
    for column in ("configuration", "release", "tunable", "time ratio (goal ≤ 1.03)",
                   "instruction ratio"):
        table.add_column(column, justify="right")
    for label, (release_bin, config) in cases.items():
        release = statistics.median(times[(label, "release")])
        tunable_t = statistics.median(times[(label, "tunable")])
        ratio = instructions(tunable, config) / instructions(release_bin, None)
        table.add_row(label, f"{release * 1e3:.1f} ms", f"{tunable_t * 1e3:.1f} ms",
                      f"{tunable_t / release:.3f}", f"{ratio:.4f}")
    return table


def function_size(obj: Path, name: str) -> int:
    listing = subprocess.run(["nm", "-S", str(obj)], capture_output=True, text=True,
                             check=True).stdout
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3] == name:
            return int(parts[1], 16)
    raise SystemExit(f"{name} not found in {obj}")


def dynamic_code_size() -> Table:
    static_cfg = write_config("static", {"samples": {"value": 4}})
    dynamic_cfg = write_config("dynamic", {"samples": {"thresholds": [2, 5, 8],
                                                       "decisions": [1, 2, 4, 8]}})
    objects = {"static knob (value 4)": ("static", "", static_cfg),
               "dynamic knob, 4 leaves": ("dynamic", DYNAMIC_CLAUSES, dynamic_cfg)}
    sizes = {}
    for label, (stem, clauses, config) in objects.items():
        src, obj = OUT / f"{stem}.c", OUT / f"{stem}.o"
        src.write_text(KERNEL % clauses)
        approxcc(str(src), "--config", str(config), "-c", "-o", str(obj))
        sizes[label] = function_size(obj, "window_energy")
    base = sizes["static knob (value 4)"]
    table = Table(title="code size of window_energy (release builds, -O2)")
    for column in ("knob", "bytes", "× static"):
        table.add_column(column, justify="right")
    for label, size in sizes.items():
        table.add_row(label, str(size), f"{size / base:.2f}")
    return table


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    console.rule("[bold]approx overheads: tunable builds and dynamic knobs")
    console.print(tunable_overhead())
    console.print(dynamic_code_size())


if __name__ == "__main__":
    main()
