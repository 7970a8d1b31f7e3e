"""C data through the frontend: every integer type with C's conversions, `_Bool`, pointer
arithmetic and comparison, casts, `malloc`, multi-dimensional and variable-length arrays,
structs; each snippet built by approxcc and run against `cc -O2`. Pointer walks lower to
the plain loop clang emits, and what is left out is a clean diagnostic."""

import re
from pathlib import Path

import pytest
from conftest import (
    NOT_YET,
    approxcc_ok,
    assert_same_as_cc,
    assert_same_as_cc_through_mlir,
    diagnose,
    where,
)

DEFINITION = re.compile(r"^\w[\w\s*]*?\b(\w+)\([^;{]*\)\s*\{", re.MULTILINE)


def assert_compiled_and_same_as_cc(source: str, tmp_path: Path) -> None:
    """approxcc's build prints what cc's prints, and every function of the source went
    through MLIR (none was left to the system compiler)."""
    assert_same_as_cc(source, tmp_path, keep_temps=True)
    emitted = (tmp_path / "p.approx.mlir").read_text()
    for name in DEFINITION.findall(source):
        assert re.search(rf"func.func (private )?@{name}\(.*\{{", emitted), name


# (name, program): each prints what `cc -O2` prints
PROGRAMS = [
    ("integer_types_and_conversions", r"""#include <stdio.h>
int main(void) {
  signed char sc = -100; unsigned char uc = 200; short sh = -30000; unsigned short us = 60000;
  int i = -7; unsigned u = 7; long l = -5; unsigned long ul = 3; long long ll = -1;
  unsigned long long ull = 1;
  printf("%d %d %d %d\n", sc + uc, sh - us, i / 2, i % 3);
  printf("%u %lu %d %lld\n", i + u, l + ul, (int)(u > i), ll * (long long)ull);
  printf("%d %u %ld %ld\n", sc >> 2, (unsigned)sc >> 28, l << 3, -9L / 4);
  uc += 100; us *= 2; sc -= 60; u -= 10;
  printf("%d %d %d %u\n", uc, us, sc, u);
  double d = -2.75; float f = 1e10f;
  printf("%d %u %ld %d\n", (int)d, (unsigned char)d, (long)f, (short)70000);
  return 0;
}
"""),
    ("bool_is_not_equal_zero", r"""#include <stdio.h>
#include <stdbool.h>
int main(void) {
  _Bool a = 256, b = 0.25, c = -1, d = 0;
  bool e = a;
  e++; d--; c = !c;
  unsigned char bytes[4] = {0, 3, 0, 9};
  int n = 0;
  for (int i = 0; i < 4; i++) { _Bool set = bytes[i]; n += set; }
  printf("%d %d %d %d %d %d %d\n", a, b, c, d, e, n, (int)sizeof(_Bool));
  return 0;
}
"""),
    ("pointer_arithmetic", r"""#include <stdio.h>
#include <stddef.h>
int main(void) {
  int a[10];
  for (int i = 0; i < 10; i++) a[i] = i * i;
  int *p = a, *q = &a[9];
  p += 2; q -= 1; p++; --q;
  ptrdiff_t gap = q - p;
  int *r = 1 + p;
  printf("%d %d %ld %d %d %d\n", *p, *q, (long)gap, *(p + 4), r[-1], *(a + 5));
  printf("%d %d %d %d\n", p < q, p == a + 3, q >= r, p != NULL);
  double m[3][4];
  double *cell = &m[1][2];
  *cell = 5.5;
  cell[1] = 6.5;
  printf("%g %g %ld\n", m[1][2], m[1][3], (long)(&m[2][0] - &m[0][0]));
  return 0;
}
"""),
    ("pointers_as_conditions_and_casts", r"""#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
static int *pick(int *a, int *b, int first) { return first ? a : b; }
int main(void) {
  int x = 1, y = 2, *none = NULL, *some = &x;
  int *chosen = pick(&x, &y, 0);
  printf("%d %d %d %d\n", !none, !some, none || some, some && none);
  printf("%d %d\n", *chosen, *(none ? none : some));
  uintptr_t bits = (uintptr_t)some;
  int *back = (int *)bits;
  void *raw = some;
  char *bytes = (char *)raw;
  printf("%d %d %d\n", *back, back == some, bytes + sizeof(int) == (char *)(some + 1));
  int *zero = (int *)0;
  _Bool known = some;
  printf("%d %d\n", zero == NULL, known);
  return 0;
}
"""),
    ("malloc_calloc_realloc_free", r"""#include <stdio.h>
#include <stdlib.h>
int main(void) {
  int n = 8;
  double *v = (double *)malloc(n * sizeof(double));
  long *z = calloc(n, sizeof *z);
  for (int i = 0; i < n; i++) v[i] = i / 2.0;
  v = realloc(v, 2 * n * sizeof *v);
  for (int i = n; i < 2 * n; i++) v[i] = -i;
  double s = 0;
  for (double *p = v; p < v + 2 * n; p++) s += *p;
  printf("%g %ld %d\n", s, z[3], (int)sizeof(v[0]));
  free(v);
  free(z);
  return 0;
}
"""),
    ("multi_dimensional_arrays", r"""#include <stdio.h>
int main(void) {
  int grid[3][4][2] = {{{1, 2}, {3}}, {{4}}};
  int t = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      for (int k = 0; k < 2; k++) { grid[i][j][k] += i - j + k; t += grid[i][j][k] * (i + 1); }
  int (*row)[2] = grid[1];
  int *flat = &grid[0][0][0];
  printf("%d %d %d %d %d\n", t, row[2][1], flat[23], (int)sizeof grid, (int)sizeof grid[1]);
  return 0;
}
"""),
    ("variable_length_array_parameters", r"""#include <stdio.h>
static void transpose(int n, int m, const double A[n][m], double T[m][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) T[j][i] = A[i][j];
}
static double corner(int n, int m, double A[n][m + 1]) { return A[n - 1][m]; }
static double total(int n, int m, double A[][m]) {
  double s = 0;
  for (int i = 0; i < n; i++) { double *row = A[i]; for (int j = 0; j < m; j++) s += row[j]; }
  return s;
}
int main(void) {
  double a[2][3] = {{1, 2, 3}, {4, 5, 6}}, t[3][2];
  transpose(2, 3, a, t);
  printf("%g %g %g %g %g\n", t[0][1], t[2][0], t[2][1], corner(2, 2, a), total(3, 2, t));
  return 0;
}
"""),
    ("structs", r"""#include <stdio.h>
struct inner { char tag; long big; };
struct outer { int id; double xs[3]; struct inner in; struct outer *link; };
static double weigh(const struct outer *o) { return o->xs[0] + o->xs[2] * o->in.big; }
static void bump(struct outer *o, int by) { o->id += by; o->in.tag++; o->xs[1] *= by; }
int main(void) {
  struct outer a = {1, {0.5, 1.5, 2.5}, {'a', 40}, 0};
  struct outer b = a, many[3];
  b.link = &a;
  bump(&b, 3);
  b.link->id = 7;
  for (int i = 0; i < 3; i++) { many[i] = b; many[i].id = i; many[i].link = &many[(i + 1) % 3]; }
  struct outer *p = &many[0];
  int hops = 0;
  while (p->link != &many[0]) { p = p->link; hops++; }
  printf("%d %d %c %g %g %d %d\n", a.id, b.id, b.in.tag, b.xs[1], weigh(&b), hops, p->id);
  printf("%d %d\n", (int)sizeof(struct outer), (int)((char *)&a.in.big - (char *)&a));
  return 0;
}
"""),
    ("compound_assignment_and_increments", r"""#include <stdio.h>
int main(void) {
  char c = 'a'; short s = 1; unsigned u = 1; long l = 100; float f = 1.5f; double d = 9;
  c += 2; s <<= 14; s <<= 1; u <<= 31; u >>= 30; l %= 7; l ^= 0xff; f *= 3; d /= 4;
  c++; s--; ++u; --l; f++; d--;
  int a[4] = {1, 2, 3, 4}, *p = a;
  *p++ += 10; p[1] |= 8; *++p *= 5;
  printf("%d %d %u %ld %g %g %d %d %d %d\n", c, s, u, l, f, d, a[0], a[1], a[2], *p);
  return 0;
}
"""),
    ("strings_comma_recursion_math", r"""#include <stdio.h>
#include <math.h>
static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
static int vowels(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == 'a' || *s == 'e';
  return n;
}
int main(void) {
  const char *msg = "a tree here";
  char buf[8] = "abc";
  int x = (buf[3] = 'd', buf[4] = 0, 4);
  printf("%d %d %s %d %.4f %.4f\n", fib(15), vowels(msg), buf, x, sqrt(2.0),
         pow(2.0, 0.5) + floor(-1.5));
  return 0;
}
"""),
]


@pytest.mark.parametrize("name,source", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_prints_what_cc_prints(name: str, source: str, tmp_path: Path):
    assert_compiled_and_same_as_cc(source, tmp_path)


def test_pointer_walk_lowers_to_a_plain_pointer_loop(tmp_path: Path):
    """Views and pointer arithmetic fold away: what is left is the loop clang emits, a
    pointer phi stepped by a GEP, no memref descriptor, no stack slot."""
    (tmp_path / "w.c").write_text("""double walk(const double *a, const double *end) {
  double s = 0;
  for (const double *p = a; p < end; p++) s += *p;
  return s;
}
""")
    done = approxcc_ok("build", "w.c", "-S", "--emit=llvm", "-o", "-", cwd=tmp_path)
    body = done.stdout[done.stdout.index("@walk"):]
    assert "phi ptr" in body
    for leftover in ("insertvalue", "extractvalue", "alloca", "inttoptr"):
        assert leftover not in body


NEGATIVE_INDICES = r"""#include <stdio.h>
static int find_back(const int *p, int key) {
  int i = 0;
  while (p[i] != key) i--;
  return i;
}
static int sum_back(const int *end, int n) {
  int s = 0;
  for (int i = 1; i <= n; i++) s += end[-i];
  return s;
}
static int prev(const int *p) { return p[-1]; }
static int deref(const int *p) { return *(p - 1); }
static int walk(const int *p, int k) { p += -k; return *p; }
static int either(const int *p, int i) { int v = p[i]; return i < 0 ? v + 1000 : v; }
int main(void) {
  int a[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  printf("%d %d %d %d %d %d\n", find_back(a + 7, 3), sum_back(a + 8, 8), prev(a + 2),
         deref(&a[1]), walk(a + 7, 3), either(a + 4, -2));
  return 0;
}
"""


def test_negative_indices_from_a_pointer(tmp_path: Path):
    """`p[-1]`, `*(p - 1)`, `p += -k`: a pointer indexed backwards is no memref index (that
    lowers to `getelementptr inbounds nuw`, poison for a negative index: LLVM made
    find_back loop past its key)."""
    assert_same_as_cc_through_mlir(NEGATIVE_INDICES, tmp_path)
    ll = (tmp_path / "p.ll").read_text()
    assert not re.search(r"getelementptr inbounds nuw [^,]+, ptr %\w+, i64 [-%]", ll), ll


STRINGS = r"""#include <stdio.h>
#include <string.h>
#include <uchar.h>
#include <wchar.h>
static const char *g = "caf\xe9 é";
static char h[] = "hé";
static const wchar_t *gw = L"é\x20ac!";
static const char16_t gu[] = u"€\U0001F600";
int main(void) {
  char s[] = "été";
  const char *u = u8"€";
  const wchar_t *w = L"é\x20ac" L"\n";
  const char32_t *U = U"😀";
  wchar_t ws[] = L"€\101";
  printf("%s %zu %s %zu %zu %s %d %d %d\n", s, strlen(s), u, strlen(u), strlen(g), h,
         (int)w[1], (int)w[2], (int)U[0]);
  printf("%d %d %d %d %d %zu\n", (int)gw[0], (int)gw[2], gu[0], gu[1], gu[2], sizeof gu);
  printf("%d %d %zu\n", (int)ws[0], (int)ws[1], wcslen(ws));
  for (const char *p = g; *p; p++) printf("%02x", (unsigned char)*p);
  printf("\n");
  return 0;
}
"""


def test_string_literals_beyond_ascii(tmp_path: Path):
    """Bytes >= 0x80 (escaped or UTF-8 source text), `u8`, `L`, `u` and `U` literals, as
    pointers and as array initialisers: exactly the bytes and code units cc gives."""
    assert_same_as_cc_through_mlir(STRINGS, tmp_path)


KNOB = "  int s = 0;\n  #pragma approx loop_perforate\n  for (int i = 0; i < 4; i++) s += i;\n"

# (name, source, needle where the error points, what is not supported); each function holds a
# knob, so the frontend must compile it rather than leave it to the system compiler
UNSUPPORTED = [
    ("long_double", """int main(void) {
""" + KNOB + """  long double x = s;
  return (int)x;
}
""", "x =", "type 'long double'"),
    ("complex", """int main(void) {
""" + KNOB + """  _Complex double z = s;
  return (int)__real__ z;
}
""", "z =", "type '_Complex double'"),
    ("atomic", """int main(void) {
""" + KNOB + """  _Atomic int a = s;
  return a;
}
""", "a =", "type '_Atomic(int)'"),
]


@pytest.mark.parametrize("name,source,needle,what", UNSUPPORTED, ids=[u[0] for u in UNSUPPORTED])
def test_unsupported_construct(name: str, source: str, needle: str, what: str, tmp_path: Path):
    stderr = diagnose(source, tmp_path)
    assert stderr.startswith(f"t.c:{where(source, needle)}: error: {what} {NOT_YET}\n"), stderr


VOLATILE = r"""#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
struct B { volatile unsigned f : 5; unsigned g : 3; };
struct S { int a; volatile int b; };
typedef volatile int vint;
static volatile sig_atomic_t stop;
volatile struct S gs;
vint arr[4];
const volatile int grid[2][2] = {{1, 2}, {3, 4}};
static void on_alarm(int sig) { (void)sig; stop = 1; }
long spin(void) { long n = 0; while (!stop) n++; return n; }
void regs(volatile int *r) { *r = 1; *r = 2; }
int reads(volatile int *r) { return *r + *r; }
void bits(struct B *b) { b->f = 1; b->f = 2; }
void members(void) { gs.b++; gs.a = 4; gs.a = 5; }
void elements(void) { arr[1] = 1; arr[1] = 2; }
int cells(int i) { return grid[i][i] + grid[i][i]; }
int local(void) { volatile int x = 0; x = 1; x = 2; return x; }
double rows(int n, int m, volatile double A[n][m]) {
  double s = 0;
  for (int i = 0; i < n; i++) for (int j = 0; j < m; j++) s += A[i][j];
  return s;
}
int main(void) {
  signal(SIGALRM, on_alarm);
  struct itimerval t = {{0, 0}, {0, 20000}};
  setitimer(ITIMER_REAL, &t, 0);
  long n = spin();
  volatile int r = 0; struct B b = {0, 0};
  double a[2][3] = {{1, 2, 3}, {4, 5, 6}};
  regs(&r); bits(&b); members(); elements();
  printf("%d %d %u %d %d %d %d %d %d %g\n", n > 0, reads(&r), b.f, gs.a, gs.b, arr[1],
         cells(1), local(), (int)stop, rows(2, 3, a));
  return 0;
}
"""

# per function: the volatile loads and stores its optimised IR must keep (a read-modify-write
# of a bit-field is a load and a store)
VOLATILE_ACCESSES = {"spin": 1, "regs": 2, "reads": 2, "bits": 4, "members": 4,
                     "elements": 2, "cells": 2, "local": 4}


def test_every_access_to_a_volatile_object_happens(tmp_path: Path):
    """Reads and writes of volatile objects (through pointers, members, bit-fields, array
    elements of a typedef'd or const volatile type, locals) are volatile loads and stores:
    LLVM neither merges nor drops them, so a loop polling a flag that a signal handler sets
    ends (it was compiled to an infinite loop, the flag read once); a variable-length array
    of volatile elements is sized as any other."""
    assert_same_as_cc_through_mlir(VOLATILE, tmp_path)
    ll = (tmp_path / "p.opt.ll").read_text()
    for name, count in VOLATILE_ACCESSES.items():
        body = re.search(rf"define [^@]*@{name}\(.*?\n}}", ll, re.DOTALL).group(0)
        assert len(re.findall(r"\b(load|store) volatile\b", body)) == count, (name, body)
