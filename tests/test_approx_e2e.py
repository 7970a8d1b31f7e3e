"""Every transform end to end: annotated C → approx passes → real binary, run and compared.

Each program is also built by `cc -O2` (the exact reference); the user runtime library with
the state/check/recover functions is a second C file linked in both builds.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import approxcc_ok, cc, output_of, run_approxcc, run_binary, write_config

RUNTIME_LIB = r"""
#include <stdio.h>
int phase(int i) { return i; }
int always_bad(double s) { (void)s; return 0; }
int always_good(double s) { (void)s; return 1; }
void report(double *s) { printf("recovered from %.1f\n", *s); *s = -1.0; }
"""

PROGRAM = r"""
#include <stdio.h>
int phase(int i);
int always_bad(double s);
int always_good(double s);
void report(double *s);

double square(double x) { return x * x; }
double square_low(double x) { return (double)(int)x * (double)(int)x; }
double square_zero(double x) { return 0.0 * x; }

// @approx func_substitute knob(square_all) variants(square_low, square_zero)
double area(double r) { return 3.0 * square(r); }

double noisy(int i) { return i * 1.5; }

int main(void) {
  double total = 0.0, sub = 0.0, memo = 0.0, skipped = 0.0;
  for (int i = 0; i < 10; i++) {
    int iterations = 0;
    #pragma approx loop_perforate knob(inner) state(phase(i)) thresholds(1) range(0:10)
    for (int j = 0; j < 64; j++)
      iterations++;
    printf("i=%d iterations=%d\n", i, iterations);
    total += iterations;
    #pragma approx func_substitute knob(site) variants(square_zero)
    sub += square(i + 0.5);
    #pragma approx memoize knob(memo) values(1:4)
    memo += noisy(i);
    // @approx task_skipping knob(skip)
    skipped += 1.0;
  }
  double table[100];
  for (int k = 0; k < 100; k++)
    table[k] = 0.0;
  #pragma approx loop_perforate knob(checked) check(always_bad(table[1]))
  for (int k = 0; k < 100; k++)
    table[k] = k;
  double checked = 0.0;
  for (int k = 0; k < 100; k++)
    checked += table[k];
  double rescued = 0.0;
  #pragma approx loop_perforate knob(rescued) check(always_bad(rescued)) recover(report(&rescued))
  for (int k = 0; k < 100; k++)
    rescued += k;
  double trusted = 0.0;
  #pragma approx loop_perforate knob(trusted) check(always_good(trusted))
  for (int k = 0; k < 100; k++)
    trusted += k;
  printf("total=%.1f sub=%.2f memo=%.1f skipped=%.1f area=%.2f\n", total, sub, memo, skipped,
         area(2.5));
  printf("checked=%.1f rescued=%.1f trusted=%.1f\n", checked, rescued, trusted);
  return 0;
}
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("e2e")
    (tmp / "prog.c").write_text(PROGRAM)
    (tmp / "userlib.c").write_text(RUNTIME_LIB)
    cc("-O2", "-c", "userlib.c", "-o", "userlib.o", cwd=tmp)
    cc("-O2", "prog.c", "userlib.o", "-o", "ref", cwd=tmp)
    return tmp


def build(tmp: Path, out: str, *flags: str) -> Path:
    approxcc_ok("build", "prog.c", "userlib.o", "-o", out, *flags, cwd=tmp)
    return tmp / out


def config(tmp: Path, name: str, knobs: dict) -> str:
    return write_config(tmp / f"{name}.json", knobs, program="prog")


def run(binary: Path, config_path: str | None = None) -> str:
    return output_of(binary, env={"APPROX_CONFIG": config_path})


def summary(output: str) -> dict[str, str]:
    """key=value pairs of the program's last two lines."""
    pairs = " ".join(output.splitlines()[-2:]).split()
    return dict(p.split("=") for p in pairs)


def test_exact_build_matches_cc(project: Path) -> None:
    assert run(build(project, "exact")) == run(project / "ref")


CONFIGS = {
    "static": {"inner": {"value": 4}, "site": {"value": 1}, "memo": {"value": 2},
               "skip": {"value": 1}, "square_all": {"value": 2}, "checked": {"value": 2},
               "rescued": {"value": 2}, "trusted": {"value": 2}},
    "dynamic": {"inner": {"thresholds": [5], "decisions": [1, 8]},
                "square_all": {"value": 1}},
    "exact": {},
}


def test_every_transform_changes_the_output_as_specified(project: Path) -> None:
    exact = summary(run(project / "ref"))
    out = run(build(project, "static", "--config", config(project, "static", CONFIGS["static"])))
    got = summary(out)
    assert "i=0 iterations=16" in out                      # loop_perforate: every 4th of 64
    assert float(got["total"]) == 16 * 10
    assert float(got["sub"]) == 0.0                        # call site → square_zero
    assert float(got["skipped"]) == 0.0                    # task skipped every time
    # memoize 2: calls 0, 2, 4.. recompute, 1, 3.. reuse: noisy(0)+noisy(0)+noisy(2)+...
    assert float(got["memo"]) == sum(1.5 * (i - i % 2) for i in range(10))
    assert float(got["area"]) == 0.0                       # every call of area → variant 2
    assert float(exact["area"]) == 3.0 * 2.5 * 2.5
    # check fails → recover(exact) reruns the (idempotent) loop exactly: the exact table;
    # recover(CALL) runs the call instead
    assert float(got["checked"]) == 4950.0
    assert "recovered from 2450.0" in out and float(got["rescued"]) == -1.0
    assert float(got["trusted"]) == 2450.0                 # check passes: approximate result


def test_dynamic_knob_follows_the_runtime_state(project: Path) -> None:
    out = run(build(project, "dynamic",
                    "--config", config(project, "dynamic", CONFIGS["dynamic"])))
    lines = [line for line in out.splitlines() if line.startswith("i=")]
    assert lines[:5] == [f"i={i} iterations=64" for i in range(5)]     # state < 5: exact
    assert lines[5:] == [f"i={i} iterations=8" for i in range(5, 10)]  # state ≥ 5: ×8
    assert float(summary(out)["area"]) == 2.0 * 2.0   # area itself replaced by square_low


def test_tunable_binary_prints_what_release_builds_print(project: Path) -> None:
    tunable = build(project, "tunable", "--tunable")
    for name, knobs in CONFIGS.items():
        path = config(project, name, knobs)
        release = build(project, f"release-{name}", "--config", path)
        assert run(tunable, path) == run(release), name
    assert run(tunable) == run(project / "ref")  # no APPROX_CONFIG: exact


def test_tunable_binary_rejects_a_bad_config(project: Path) -> None:
    tunable = build(project, "tunable-bad", "--tunable")
    proc = run_binary(tunable, env={"APPROX_CONFIG": config(
        project, "bad", {"inner": {"value": 99}})})
    assert proc.returncode == 2
    assert "knob 'inner'" in proc.stderr and "outside its domain" in proc.stderr


STACKED = r"""
#include <stdio.h>
int level(void) { return 7; }
int sum(const int *a, int n) {
  int s = 0;
  #pragma approx loop_perforate knob(outer) values(1:2) %s
  // @approx loop_perforate knob(inner) values(1, 4)
  for (int i = 0; i < n; i++)
    s += a[i];
  return s;
}
int main(void) {
  int a[100];
  for (int i = 0; i < 100; i++) a[i] = i;
  printf("%%d\n", sum(a, 100));
  return 0;
}
"""


def test_stacked_perforation_multiplies_the_steps(tmp_path: Path) -> None:
    (tmp_path / "s.c").write_text(STACKED % "")
    knobs = {"outer": {"value": 2}, "inner": {"value": 4}}
    path = write_config(tmp_path / "c.json", knobs, program="s")
    approxcc_ok("s.c", "--config", path, "-o", "static", cwd=tmp_path)
    approxcc_ok("s.c", "--tunable", "-o", "tunable", cwd=tmp_path)
    every_8th = str(sum(range(0, 100, 8)))
    assert run(tmp_path / "static").strip() == every_8th
    assert run(tmp_path / "tunable", path).strip() == every_8th
    assert run(tmp_path / "tunable").strip() == "4950"


def test_a_dynamic_knob_stacked_on_another_is_a_located_error(tmp_path: Path) -> None:
    (tmp_path / "s.c").write_text(STACKED % "state(level()) thresholds(1) range(0:10)")
    done = run_approxcc(["s.c", "-o", "s"], cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "s.c:6:18: error: loop_perforate: a dynamic knob cannot be stacked" in done.stderr
