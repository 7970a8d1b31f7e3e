"""recover(exact) restores what the target wrote before the exact re-run: real builds, real
runs. Each program's check rejects every approximate run, so what it prints must be what the
exact program prints (`cc -O2`), not the approximate run's writes plus the exact run's."""

from __future__ import annotations

from pathlib import Path

from conftest import approxcc_ok, cc, output_of, write_config

COUNTER = """\
#include <stdio.h>
static int reject(void) { return 0; }
int main(void) {
  int count = 0;
  #pragma approx loop_perforate knob(bump) values(1:2) check(reject()) recover(exact)
  for (int i = 0; i < 100; i++)
    count++;
  printf("%d\\n", count);
  return 0;
}
"""

# Locals of every kind and globals (a scalar, an array too large for an SSA copy).
STATE = """\
#include <stdio.h>
struct acc { int n; double sum; };
static int reject(void) { return 0; }
int total;
double big[3000];
static void run(int m) {
  struct acc a = {0, 0.0};
  int hist[4] = {0, 0, 0, 0};
  #pragma approx loop_perforate knob(bump) values(1:2) check(reject()) recover(exact)
  for (int i = 0; i < m; i++) {
    total += 1;
    big[i] += 1.0;
    a.n += 1;
    a.sum += i;
    hist[i % 4] += 1;
  }
  printf("%d %g %d %g %d %d\\n", total, big[0] + big[1], a.n, a.sum, hist[0], hist[3]);
}
int main(void) { run(100); return 0; }
"""

# The target writes through a pointer argument: its extent is unknown.
THROUGH_POINTER = """\
static int reject(void) { return 0; }
void bump(int *out, int m) {
  #pragma approx loop_perforate knob(bump) values(1:2) check(reject()) recover(exact)
  for (int i = 0; i < m; i++)
    out[i % 2] += 1;
}
"""


def _build(tmp_path: Path, source: str, value: int) -> tuple[str, str]:
    """The program's output built with the knob at `value`, and its build's stderr."""
    (tmp_path / "p.c").write_text(source)
    config = write_config(tmp_path / "c.json", {"bump": {"value": value}}, program="p")
    built = approxcc_ok("build", "-O2", "p.c", f"-fapprox-config={config}", "-o", "p",
                        cwd=tmp_path)
    return output_of(tmp_path / "p"), built.stderr


def test_a_rejected_counter_ends_at_the_exact_count(tmp_path: Path) -> None:
    out, _ = _build(tmp_path, COUNTER, 2)
    print("recover(exact) counter:", out.strip())  # the figure: 100, not 150
    assert out == "100\n"


def test_locals_and_globals_are_restored_like_cc_computes_them(tmp_path: Path) -> None:
    out, stderr = _build(tmp_path, STATE, 2)
    cc("-O2", "p.c", "-o", "ref", cwd=tmp_path)
    assert out == output_of(tmp_path / "ref") == "100 2 100 4950 25 25\n"
    assert "warning" not in stderr, stderr


def test_an_accepted_approximation_keeps_its_result(tmp_path: Path) -> None:
    out, _ = _build(tmp_path, COUNTER.replace("return 0; }", "return 1; }", 1), 2)
    assert out == "50\n"


def test_a_write_through_a_pointer_is_reported_at_the_annotation(tmp_path: Path) -> None:
    (tmp_path / "p.c").write_text(THROUGH_POINTER)
    built = approxcc_ok("build", "-c", "p.c", "-o", "p.o", cwd=tmp_path)
    assert ("p.c:3:18: warning: knob 'bump': recover(exact) cannot restore memory written "
            "through argument 1 of 'bump' (memref.store)") in built.stderr
    assert "[-Wapprox-recover]" in built.stderr
