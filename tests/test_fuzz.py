"""The fuzzer (bench/fuzz.py) in CI: a few hundred mutated inputs, no traceback, no hang.

The seeds are two small programs (no system headers: a compile takes a fraction of a second),
so that the inputs are many; `python bench/fuzz.py --count 5000` runs the full corpus."""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import fuzz  # noqa: E402

SEEDS = {
    "sum.c": """int printf(const char *, ...);

int total(const int *a, int n) {
  int s = 0;
  #pragma approx loop_perforate knob(sum_loop) values(1:4)
  for (int i = 0; i < n; i++)
    s += a[i];
  return s;
}

int main(void) {
  int a[64];
  for (int i = 0; i < 64; i++) a[i] = i * 3 % 17;
  printf("%d\\n", total(a, 64));
  return 0;
}
""",
    "skip.c": """static double weight(double x) { return x * 0.5 + 1.0; }

double blend(const double *x, int n, int flag) {
  double acc = 0.0;
  // @approx task_skipping knob(bonus)
  if (flag) acc += 1.0;
  // @approx memoize knob(w) values(1:3)
  for (int i = 0; i < n; i += 2) acc += weight(x[i]);
  return acc;
}
""",
}


def test_a_few_hundred_inputs_give_no_traceback_and_no_hang(tmp_path: Path):
    files = []
    for name, text in SEEDS.items():
        (tmp_path / name).write_text(text)
        files.append(tmp_path / name)
    summary = fuzz.fuzz(250, seed=7, jobs=2, timeout=60, keep=None,
                        console=Console(stderr=True), files=files)
    outcomes = {kind: sum(row[kind] for row in summary.counts.values())
                for kind in fuzz.OUTCOMES}
    assert sum(outcomes.values()) == 250
    assert outcomes["traceback"] == 0, dict(summary.failures["traceback"])
    assert outcomes["hang"] == 0
    # the fuzzer reaches both ends: inputs that build, inputs that are diagnosed
    assert outcomes["success"] > 0 and outcomes["diagnostic"] > 0, outcomes
