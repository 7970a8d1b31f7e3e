"""C control flow through the frontend: `break`, `continue`, early `return`, `do`, `switch`,
`goto` and every form of `for`, each built by approxcc and run against `cc -O2`; counted
loops stay perforatable with `continue`; jumps stay as fast as `cc -O2`; perforating a loop
that can be left early is a clean diagnostic."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import (
    NOT_YET,
    approxcc_ok,
    assert_same_as_cc,
    assert_same_as_cc_through_mlir,
    build_both,
    diagnose,
    output_of,
    run_binary,
    where,
    write_config,
)

PERFORATED = """  int perforated = 0;
  #pragma approx loop_perforate knob(k)
  for (int i = 0; i < 4; i++) perforated += i;
"""

# (name, program): each prints what `cc -O2` prints and exits with its status
PROGRAMS = [
    ("break_skips_increment_and_condition", """#include <stdio.h>
int below(int i, int n, int *calls) { calls[0]++; return i < n; }
int main(void) {
  int i, n = 0, calls[1] = {0};
  for (i = 0; below(i, 100, calls); i++)
    if (i * i > 50) break;
  while (n++ < 10)
    if (n == 3) break;
  printf("%d %d %d\\n", i, n, calls[0]);
  return 0;
}
"""),
    ("continue_runs_increment_and_condition", """#include <stdio.h>
int main(void) {
  int s = 0, i, d = 0, evens = 0;
  for (i = 0; i < 20; i += 3) {
    if (i % 2) continue;
    s += i;
  }
  do {
    d++;
    if (d % 2) continue;
    evens += d;
  } while (d < 9);
  printf("%d %d %d %d\\n", s, i, d, evens);
  return 0;
}
"""),
    ("nested_loops", """#include <stdio.h>
int main(void) {
  int out = 0;
  for (int r = 0; r < 8; r++) {
    if (r == 2) continue;
    int c = 0;
    while (1) {
      if (c > r) break;
      c++;
      if (c % 3 == 0) continue;
      out += r * c;
    }
    for (int k = 0; k < r; k++) {
      if (k == 4) break;
      out += k;
    }
    if (out > 300) break;
  }
  printf("%d\\n", out);
  return 0;
}
"""),
    ("early_returns", """#include <stdio.h>
int sign(int x) {
  if (x < 0) return -1;
  if (x == 0) return 0;
  return 1;
}
int parity(int x) { if (x % 2) return 1; else return 0; }
int first_pair(const int *a, int n, int t) {
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (a[i] + a[j] == t) return i * 10 + j;
  return -1;
}
void set_unless_zero(int *p, int v) {
  if (p[0] == 0) return;
  p[0] = v;
}
double half_until(double x) {
  while (1) {
    if (x < 1.0) return x;
    x /= 2.0;
  }
}
int main(void) {
  int a[5] = {4, 9, 1, 7, 3};
  int z[1] = {0}, y[1] = {5};
  set_unless_zero(z, 8);
  set_unless_zero(y, 8);
  printf("%d %d %d %d %d\\n", sign(-3), sign(0), sign(3), parity(7), parity(4));
  printf("%d %d %d %d %.4f\\n", first_pair(a, 5, 10), first_pair(a, 5, 99), z[0], y[0],
         half_until(37.0));
  if (a[0] == 4) return 3;
  return 0;
}
"""),
    ("switch", """#include <stdio.h>
int kind(char c) {
  switch (c) {
  case 'a': case 'e': case 'i': case 'o': case 'u': return 1;
  case ' ': return 0;
  default: return 2;
  }
}
int fall(int x) {
  int y = 0;
  switch (x) {
  case 1: y += 1;
  case 2: y += 10; break;
  default: y = -1;
  case 5: y += 100;
  case 6: { y *= 2; break; }
  case 7: y = 7;
  }
  return y;
}
int big(long v) { switch (v) { case 10000000000L: return 1; case -1: return 2; } return 3; }
int empty_last(unsigned x) {
  int y = 0;
  switch (x) { default: y = 1; break; case 4000000000u: y = 2; break; case 9:; }
  return y;
}
int main(void) {
  int vowels = 0, other = 0, s = 0;
  char text[] = "switch statements fall through";
  for (int i = 0; text[i] != 0; i++) {
    switch (kind(text[i])) {
    case 0: continue;
    case 1: vowels++; break;
    default:
      switch (text[i]) { case 't': s += 2; break; default: s++; }
      other++;
    }
    s += i;
  }
  printf("%d %d %d\\n", vowels, other, s);
  for (int x = 0; x < 9; x++) printf("%d ", fall(x));
  printf("%d %d %d\\n", big(10000000000L), big(-1), big(4));
  printf("%d %d %d\\n", empty_last(9), empty_last(4000000000u), empty_last(3));
  switch (s) { case 1: return 1; default: return 2; }
}
"""),
    ("for_forms", """#include <stdio.h>
int main(void) {
  int i = 0, j, s = 0, k = 0;
  for (; i < 5; i++) s += i;
  for (j = 10; j > 0;) j -= 3;
  for (i = 0, j = 9; i < j; i++, j--) s += i * j;
  for (;;) if (++k > 7) break;
  for (int a = 0, b = 20; a < b; a += 2, b--) { { if (a % 4 == 0) continue; } s += a + b; }
  printf("%d %d %d %d\\n", s, i, j, k);
  return 0;
}
"""),
    ("function_knob_returns_early", """#include <stdio.h>
int coarse(int x) { return x; }
// @approx func_substitute variants(coarse)
int clamp(int x) {
  if (x < 0) return 0;
  for (int i = 0; i < 3; i++)
    if (x == i) return 100 + i;
  if (x > 10) return 10;
  return x;
}
// @approx memoize values(1:3)
int collatz(long n) {
  int steps = 0;
  do {
    if (n == 1) return steps;
    n = n % 2 ? 3 * n + 1 : n / 2;
    steps++;
  } while (1);
}
int main(void) {
  for (int x = -2; x < 14; x += 3) printf("%d %d\\n", clamp(x), collatz(x + 3));
  return 0;
}
"""),
]


@pytest.mark.parametrize("name,program", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_program_prints_what_cc_prints(name: str, program: str, tmp_path: Path):
    main = program.rindex("int main(void) {\n") + len("int main(void) {\n")
    assert_same_as_cc(program[:main] + PERFORATED + program[main:], tmp_path)


def test_counted_loop_with_continue_is_perforated(tmp_path: Path):
    source = """#include <stdio.h>
int main(void) {
  int s = 0;
  #pragma approx loop_perforate knob(k) values(1:2)
  for (int i = 0; i < 20; i++) {
    if (i % 3 == 0) continue;
    s += i;
  }
  printf("%d\\n", s);
  return 0;
}
"""
    (tmp_path / "p.c").write_text(source)
    write_config(tmp_path / "c.json", {"k": {"value": 2}}, program="p")
    approxcc_ok("build", "p.c", "-o", "exact", cwd=tmp_path)
    approxcc_ok("build", "p.c", "--config", "c.json", "-o", "half", cwd=tmp_path)
    assert output_of(tmp_path / "exact") == f"{sum(i for i in range(20) if i % 3)}\n"
    # every other iteration: i = 0, 2, 4, ... minus the multiples of 3
    assert output_of(tmp_path / "half") == f"{sum(i for i in range(0, 20, 2) if i % 3)}\n"


def test_code_without_jumps_has_no_flags(tmp_path: Path):
    (tmp_path / "p.c").write_text("""int sum(const int *a, int n) {
  int s = 0, i = 0;
  while (i < n) { if (a[i] > 0) s += a[i]; i++; }
  for (int j = 0; j < n; j++) s -= j;
  return s;
}
""")
    done = approxcc_ok("build", "p.c", "-S", "--emit=mlir", "-o", "-", cwd=tmp_path)
    assert "memref<i8>" not in done.stdout and "scf.for" in done.stdout


KERNEL = """#include <stdio.h>
enum { N = 4096, Q = 40000 };
int find(const int *a, int n, int key) {
  int i;
  for (i = 0; i < n; i++) {
    if (a[i] == key) break;
    if (a[i] < 0) continue;
  }
  return i;
}
int first_over(const float *v, int n, float t) {
  for (int i = 0; i < n; i++)
    if (v[i] > t) return i;
  return -1;
}
int main(void) {
  int a[N];
  float v[N];
  unsigned seed = 1;
  for (int i = 0; i < N; i++) {
    seed = seed * 1103515245u + 12345u;
    a[i] = (int)(seed >> 8) % 100000;
    v[i] = (float)i / N;
  }
  long total = 0;
  #pragma approx loop_perforate
  for (int q = 0; q < Q; q++) {
    total += find(a, N, a[(q * 7919) % N]);
    total += first_over(v, N, (float)(q % 1000) / 1000.0f);
  }
  printf("%ld\\n", total);
  return 0;
}
"""


def best_time(exe: Path) -> float:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        run_binary(exe)
        times.append(time.perf_counter() - start)
    return min(times)


def test_break_in_hot_loop_is_as_fast_as_cc(tmp_path: Path):
    approx, ref = build_both(KERNEL, tmp_path)
    assert output_of(approx) == output_of(ref)
    # measured 0.55 on the development machine: LLVM keeps a plain induction variable
    assert best_time(approx) < 1.3 * best_time(ref)


# -- diagnostics ---------------------------------------------------------------------------

# An annotated function never falls back to the system compiler: its errors stand.
ANNOTATED = "  #pragma approx loop_perforate\n  for (int i = 0; i < 4; i++) x += i;\n"


def test_goto_prints_what_cc_prints(tmp_path: Path):
    source = ("#include <stdio.h>\nint main(void) {\n  int x = 1, n = 0;\nagain:\n" + ANNOTATED
              + "  if (++n < 3) goto again;\n  for (int i = 0; i < 9; i++)\n"
              "    if (i * x > 40) goto done;\n  x = -1;\ndone:\n"
              '  printf("%d %d\\n", x, n);\n  return 0;\n}\n')
    assert_same_as_cc(source, tmp_path)


GOTOS = r"""#include <stdio.h>
enum { PUSH, ADD, DEC, DUP, JNZ, HALT };
/* a goto-threaded interpreter: the dispatch jumps forward to one of several labels */
static int run(const int *code) {
  int stack[16], sp = 0, pc = 0, op;
next:
  op = code[pc++];
  if (op == PUSH) goto push;
  if (op == ADD) goto add;
  if (op == DEC) goto dec;
  if (op == DUP) goto dup;
  if (op == JNZ) goto jnz;
  goto halt;
push: stack[sp++] = code[pc++]; goto next;
add: sp--; stack[sp - 1] += stack[sp]; goto next;
dec: stack[sp - 1]--; goto next;
dup: stack[sp] = stack[sp - 1]; sp++; goto next;
jnz: if (stack[--sp]) pc = code[pc]; else pc++; goto next;
halt:
  return stack[sp - 1];
}
/* a forward goto to the second label of a chain, and to the last one */
static int chain(int n) {
  int x = 0;
  if (n == 1) goto b;
  if (n == 2) goto c;
  x = 100;
a: b: c: x++;
  if (x < 3) goto a;
  return x;
}
/* one statement, two targets */
static int two_targets(int n) {
  int x = 0;
  if (n) goto a; else goto b;
  x = 100;
a: x += 1;
b: x += 10;
  return x;
}
/* a forward goto inside the loop a backward goto makes, taken once: its flag is cleared */
static int taken_once(int n) {
  int x = 0, y = 0;
again:
  if (x == 0) goto skip;
  y += 100;
skip:
  x++;
  if (x < n) goto again;
  return x * 1000 + y;
}
/* a forward goto into the statements a later backward goto repeats */
static int into_loop(int n) {
  int x = 0, y = 0;
  if (n) goto mid;
top: x++;
mid: y++;
  if (y < 4) goto top;
  return x * 10 + y;
}
int main(void) {
  /* pushes 5, 4, 3, 2, 1, 0 (a loop), adds them */
  const int code[] = {PUSH, 5, DUP, DEC, DUP, JNZ, 2, ADD, ADD, ADD, ADD, ADD, HALT};
  printf("%d %d %d %d %d %d\n", chain(0), chain(1), chain(2), two_targets(0),
         two_targets(1), taken_once(4));
  printf("%d %d\n", into_loop(0), into_loop(1));
  printf("%d\n", run(code));
  return 0;
}
"""


def test_forward_gotos_to_label_chains_and_several_labels(tmp_path: Path):
    assert_same_as_cc_through_mlir(GOTOS, tmp_path)


def test_case_label_inside_a_nested_statement(tmp_path: Path):
    source = ("int f(int x) {\n  switch (x) {\n  case 1:\n    if (x) {\n    case 2:\n"
              "      x = 3;\n    }\n  }\n" + ANNOTATED + "  return x;\n}\n")
    stderr = diagnose(source, tmp_path)
    assert stderr.startswith(f"t.c:{where(source, 'case 2')}: error: a 'case' label inside a "
                             f"nested statement {NOT_YET}\n"), stderr


@pytest.mark.parametrize("jump", ["break", "return s"])
def test_loop_perforate_on_a_loop_left_early(jump: str, tmp_path: Path):
    source = ("int main(void) {\n  int s = 0;\n  #pragma approx loop_perforate\n"
              "  for (int i = 0; i < 10; i++) {\n    while (s > 100) break;\n"
              f"    if (s > 20) {jump};\n    s += i;\n  }}\n  return s;\n}}\n")
    stderr = diagnose(source, tmp_path)
    kind = jump.split()[0]
    assert stderr.startswith(f"t.c:{where(source, 'loop_perforate')}: error: 'loop_perforate' "
                             f"cannot count this loop: the loop body leaves the loop early "
                             f"with '{kind}'\n"), stderr
    assert f"t.c:{where(source, 'for (')}: note: loop is here" in stderr


def test_the_same_program_gives_the_same_ir_whatever_the_hash_seed(tmp_path: Path):
    """Jump flags were made in set order, which Python's string hashing changes from run to
    run: the IR (and so `-save-temps` output and caches keyed on it) differed."""
    (tmp_path / "t.c").write_text(GOTOS)
    printed = set()
    for seed in ("1", "2", "3", "4", "5"):
        done = subprocess.run([str(Path(sys.executable).parent / "approxcc"), "-S", "-emit-mlir",
                               "-fapprox-mlir=all", "t.c", "-o", f"{seed}.mlir"],
                              cwd=tmp_path, capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": seed})
        assert done.returncode == 0, done.stderr
        printed.add((tmp_path / f"{seed}.mlir").read_text())
    assert len(printed) == 1
