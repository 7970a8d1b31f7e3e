"""`make demo`: one annotated C kernel built exactly and approximately, run side by side.

Builds examples/perforation/signal.c with approxcc (exact, and loop-perforated by 2, 4, 8
through `--config`), and with `cc -O2` as the reference; runs every binary several times,
interleaved so machine noise hits all alike; prints outputs side by side with the QoS loss
(l2) and the speedup of the region of interest (median of the runs).
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

from approxcc.tune.qos import l2_loss

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = ROOT / "build" / "demo"
SOURCE = HERE / "signal.c"
KNOB = "window_samples"
PERFORATIONS = (2, 4, 8)
REPEATS = 5

console = Console()


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    console.print(f"[dim]$ {' '.join(cmd)}[/dim]")
    return subprocess.run(cmd, check=True, **kw)


def build_all() -> dict[str, Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    approxcc = str(Path(sys.executable).parent / "approxcc")
    binaries = {"cc -O2": OUT / "signal.cc", "exact": OUT / "signal.exact"}
    run(["cc", "-O2", f"-I{ROOT / 'runtime'}", str(SOURCE), str(ROOT / "runtime" / "approxrt.c"),
         "-lm", "-o", str(binaries["cc -O2"])])
    run([approxcc, "build", str(SOURCE), "-O2", "-o", str(binaries["exact"])])
    for v in PERFORATIONS:
        config = OUT / f"perforate{v}.json"
        config.write_text(json.dumps({"approxcc": "1", "program": "signal",
                                      "knobs": {KNOB: {"value": v}}}))
        binaries[f"perforate ×{v}"] = OUT / f"signal.perforate{v}"
        run([approxcc, "build", str(SOURCE), "-O2", "--config", str(config),
             "-o", str(binaries[f"perforate ×{v}"])])
    return binaries


def measure(binaries: dict[str, Path]) -> tuple[dict[str, str], dict[str, float]]:
    outputs: dict[str, str] = {}
    times: dict[str, list[float]] = {name: [] for name in binaries}
    roi = OUT / "roi.txt"
    for _ in range(REPEATS):
        for name, binary in binaries.items():
            roi.unlink(missing_ok=True)
            proc = subprocess.run([str(binary)], capture_output=True, text=True, check=True,
                                  env={**os.environ, "APPROX_ROI_FILE": str(roi)})
            outputs[name] = proc.stdout
            times[name].append(float(roi.read_text()))
    return outputs, {name: statistics.median(ts) for name, ts in times.items()}


def main() -> None:
    console.rule("[bold]approxcc demo: loop perforation of an annotated C kernel")
    console.print(f"kernel: {SOURCE.relative_to(ROOT)}  (knob [bold]{KNOB}[/bold])\n")
    binaries = build_all()
    console.print(f"\nrunning each binary {REPEATS}× (interleaved) ...")
    outputs, medians = measure(binaries)
    exact = outputs["exact"]
    same = "identical" if exact == outputs["cc -O2"] else "[red]DIFFERENT[/red]"
    console.print(f"exact approxcc output vs cc -O2 output: [bold]{same}[/bold]\n")

    shown = 4
    table = Table(title="windowed signal energy: outputs side by side")
    table.add_column("window")
    for name in binaries:
        table.add_column(name, justify="right")
    lines = {name: out.split() for name, out in outputs.items()}
    for i in range(shown):
        table.add_row(str(i), *(lines[name][i] for name in binaries))
    table.add_row("…", *("…" for _ in binaries))
    table.add_section()
    base = medians["exact"]
    table.add_row("QoS loss (l2)", *(f"{l2_loss(exact, outputs[n]):.4%}" for n in binaries))
    table.add_row("ROI time (median)", *(f"{medians[n] * 1e3:.1f} ms" for n in binaries))
    table.add_row("speedup vs exact", *(f"{base / medians[n]:.2f}×" for n in binaries))
    console.print(table)


if __name__ == "__main__":
    main()
