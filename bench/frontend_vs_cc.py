"""Exact approxcc builds against `cc -O2`, side by side in one run, over the C corpus.

For every program in tests/c_programs/: run time of the approxcc exact build over the
`cc -O2` build (median of interleaved runs; goal ≤ 1.00) and, since this machine is shared
and noisy and the corpus programs are short, the ratio of instructions executed beyond
process start-up (valgrind's callgrind, the same every run, minus what an empty `main` built
the same way executes). Per program and as a geometric mean.
"""

from __future__ import annotations

import math
import statistics
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
CORPUS = sorted((ROOT / "tests" / "c_programs").glob("*.c"))
OUT = ROOT / "build" / "bench-frontend"
APPROXCC = str(Path(sys.executable).parent / "approxcc")
REPEATS = 9
console = Console()


EMPTY = "int main(void) { return 0; }\n"


def build(program: Path) -> tuple[Path, Path]:
    exe, ref = OUT / program.stem, OUT / f"{program.stem}.cc"
    subprocess.run([APPROXCC, "build", str(program), "-O2", "-o", str(exe)], check=True)
    subprocess.run(["cc", "-O2", str(program), "-lm", "-o", str(ref)], check=True)
    return exe, ref


def seconds(binary: Path) -> float:
    start = time.perf_counter()
    subprocess.run([str(binary)], stdout=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def instructions(binary: Path) -> int:
    out = OUT / "callgrind.out"
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(binary)],
                   capture_output=True, check=False)
    totals = next(line for line in out.read_text().splitlines() if line.startswith("totals:"))
    return int(totals.split()[1])


def geomean(values: list[float]) -> float:
    return math.exp(sum(map(math.log, values)) / len(values))


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    table = Table(title=f"approxcc exact build / cc -O2 ({len(CORPUS)} programs; time: median "
                        f"of {REPEATS} interleaved runs)")
    for column in ("program", "cc -O2", "approxcc", "time ratio", "instruction ratio"):
        table.add_column(column, justify="right")
    empty = OUT / "empty.c"
    empty.write_text(EMPTY)
    startup = {kind: instructions(binary) for kind, binary in zip(("approxcc", "cc"),
                                                                    build(empty), strict=True)}
    time_ratios, instr_ratios = [], []
    for program in CORPUS:
        exe, ref = build(program)
        runs: dict[Path, list[float]] = {exe: [], ref: []}
        for _ in range(REPEATS):
            for binary in runs:
                runs[binary].append(seconds(binary))
        t_exe, t_ref = statistics.median(runs[exe]), statistics.median(runs[ref])
        i_ratio = (instructions(exe) - startup["approxcc"]) / (instructions(ref) - startup["cc"])
        time_ratios.append(t_exe / t_ref)
        instr_ratios.append(i_ratio)
        table.add_row(program.stem, f"{t_ref * 1e3:.2f} ms", f"{t_exe * 1e3:.2f} ms",
                      f"{t_exe / t_ref:.3f}", f"{i_ratio:.3f}")
    table.add_section()
    table.add_row("geometric mean", "", "", f"{geomean(time_ratios):.3f}",
                  f"{geomean(instr_ratios):.3f}")
    console.print(table)


if __name__ == "__main__":
    main()
