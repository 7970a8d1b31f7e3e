"""Counted loops as real code writes them: a bound read from memory (`p->n`, `s.len`, a
global, `strlen(s)`) or computed (`n / 2`) is evaluated once before the loop when no store
or call in the loop may change it, so `loop_perforate` applies; when one may, the diagnostic
names it. Every program is built by approxcc and by `cc -O2` and run."""

import math
from pathlib import Path

import pytest
from conftest import (
    approxcc_ok,
    assert_same_as_cc,
    cc,
    diagnose,
    output_of,
    where,
    write_config,
)

_HEADER = """#include <stdio.h>
#include <string.h>
struct buf { int n; double *v; };
struct str { unsigned len; const char *s; };
int g_len = 12;
static int count_of(const struct buf *p) { return p->n; }
static int half_of(const struct buf *p) { int n = count_of(p); return n / 2; }
"""

# (name, declarations before the loop, the loop head, its trip count):
# each loop adds `x[i]` (x[i] = i + 1) for i in [0, trip)
BOUNDS = [
    ("member_through_pointer", "", "for (int i = 0; i < p->n; i++)", 12),
    ("member_of_struct_value", "", "for (unsigned i = 0; i < s.len; i++)", 7),
    ("computed_from_a_local", "", "for (int i = 0; i < n / 2; i++)", 5),
    ("global", "", "for (int i = 0; i < g_len; i++)", 12),
    ("pure_call", "", "for (size_t i = 0; i < strlen(s.s); i++)", 7),
    ("element_of_an_array", "int lens[2] = {3, 9};\n  ", "for (int i = 0; i < lens[1]; i++)", 9),
    # functions of the translation unit that write nothing: their bodies are read
    ("function_of_the_unit", "", "for (int i = 0; i < count_of(p); i++)", 12),
    ("calling_a_function_of_the_unit", "", "for (int i = 0; i < half_of(p); i++)", 6),
]


def _program(decls: str, head: str) -> str:
    return _HEADER + f"""double total(struct buf *p, int n, const double *x) {{
  double sum = 0;
  struct str s;
  s.len = 7;
  s.s = "counted";
  {decls}#pragma approx loop_perforate knob(k) values(1:4)
  {head} {{
    sum += x[i];
  }}
  return sum;
}}
int main(void) {{
  double v[12], x[16];
  for (int i = 0; i < 16; i++) x[i] = i + 1;
  struct buf b = {{12, v}};
  printf("%.1f\\n", total(&b, 10, x));
  return 0;
}}
"""


@pytest.mark.parametrize(("name", "decls", "head", "trip"), BOUNDS, ids=[b[0] for b in BOUNDS])
def test_invariant_bound_is_perforated(name: str, decls: str, head: str, trip: int,
                                       tmp_path: Path):
    source = _program(decls, head)
    exact = assert_same_as_cc(source, tmp_path)
    assert exact == f"{float(sum(range(1, trip + 1)))}\n"
    write_config(tmp_path / "c.json", {"k": {"value": 3}}, program="p")
    approxcc_ok("build", "p.c", "--config", "c.json", "-o", "third", cwd=tmp_path)
    # every third iteration: i = 0, 3, 6, ...
    assert output_of(tmp_path / "third") == f"{float(sum(range(1, trip + 1, 3)))}\n"


# (name, the loop, the code that may change the bound)
CHANGED = [
    ("store_of_the_same_type", "for (int i = 0; i < p->n; i++) p->len[i] = 0;", "p->len[i]",
     "the store to 'p->len[i]'", "p->n"),
    ("store_of_a_character", "for (int i = 0; i < p->n; i++) p->name[i] = 0;", "p->name[i]",
     "the store to 'p->name[i]'", "p->n"),
    ("call", "for (int i = 0; i < p->n; i++) grow(p);", "grow(p)", "the call to 'grow'",
     "p->n"),
    ("global_through_a_pointer", "for (int i = 0; i < g_len; i++) p->len[i] = 1;",
     "p->len[i]", "the store to 'p->len[i]'", "g_len"),
    ("local_whose_address_escaped", "for (int i = 0; i < n; i++) *alias = 0;", "*alias",
     "the store to '*alias'", "n"),
    ("other_member_of_a_union", "for (int i = 0; i < p->u.n; i++) p->u.x = 0.5f;", "p->u.x",
     "the store to 'p->u.x'", "p->u.n"),
]


@pytest.mark.parametrize(("name", "loop", "culprit", "what", "bound"), CHANGED,
                         ids=[c[0] for c in CHANGED])
def test_bound_that_may_change_is_named(name: str, loop: str, culprit: str, what: str,
                                        bound: str, tmp_path: Path):
    source = f"""struct rec {{ int n; int *len; char *name; union {{ int n; float x; }} u; }};
int g_len;
void grow(struct rec *p);
void f(struct rec *p, int n) {{
  int *alias = &n;
  #pragma approx loop_perforate
  {loop}
}}
"""
    stderr = diagnose(source, tmp_path)
    assert (f"t.c:{where(source, 'loop_perforate')}: error: 'loop_perforate' cannot count "
            f"this loop: the loop bound may change while the loop runs: {what} at "
            f"t.c:{where(source, culprit, source.count(culprit) - 1)} may change "
            f"'{bound}'") in stderr, stderr


@pytest.mark.parametrize(("callee", "bound", "fix"), [
    ("next", "next()", ""),
    # the unit's function writes a global: perhaps a counter the loop reads
    ("counted", "counted(x)", ", or declare 'counted' __attribute__((pure)) if it writes no "
     "memory"),
    # sqrt sets errno (a domain error), which the body may read
    ("sqrt", "(int)sqrt(x[0])", ""),
], ids=["declared_only", "writes_a_global", "sets_errno"])
def test_bound_with_a_side_effect_is_named(callee: str, bound: str, fix: str,
                                           tmp_path: Path):
    source = f"""#include <math.h>
int next(void);
static int calls;
static int counted(int *x) {{ calls++; return x[0]; }}
void f(int *x) {{
  #pragma approx loop_perforate
  for (int i = 0; i < {bound}; i++) x[i + 1] = 0;
}}
"""
    stderr = diagnose(source, tmp_path)
    assert f"the loop bound calls '{callee}', which may have side effects" in stderr, stderr
    assert (f"t.c:{where(source, callee, source.count(callee) - 1)}: note: compute the bound "
            f"into a local before the loop (`const long n = {bound};`) and bound the loop by "
            f"it{fix}\n") in stderr, stderr


def test_goto_out_of_the_loop_is_named(tmp_path: Path):
    source = """int f(int n) {
  int s = 0;
  #pragma approx loop_perforate
  for (int i = 0; i < n; i++) { if (i > 5) goto out; s += i; }
out:
  return s;
}
"""
    stderr = diagnose(source, tmp_path)
    assert (f"t.c:{where(source, 'loop_perforate')}: error: 'loop_perforate' cannot count "
            "this loop: the loop body leaves the loop early with 'goto out'") in stderr, stderr
    assert "internal compiler error" not in stderr


def test_bound_changed_by_the_loop_keeps_c_semantics(tmp_path: Path):
    """Unannotated loops use the same analysis: a bound the body shrinks is re-read every
    iteration, as C says."""
    source = """#include <stdio.h>
struct queue { int n; int item[8]; };
int main(void) {
  struct queue q = {8, {1, 2, 3, 4, 5, 6, 7, 8}};
  struct queue *p = &q;
  int sum = 0;
  for (int i = 0; i < p->n; i++) { sum += p->item[i]; p->n--; }
  double w[8];
  for (int i = 0; i < p->n; i++) w[i] = p->item[i] * 0.5;
  printf("%d %d %.1f\\n", sum, p->n, w[3]);
  return 0;
}
"""
    assert assert_same_as_cc(source, tmp_path) == "10 4 2.0\n"
    mlir = approxcc_ok("build", "p.c", "-S", "--emit=mlir", "-o", "-", cwd=tmp_path).stdout
    assert mlir.count("scf.for") == 1 and "scf.while" in mlir  # the second loop counts


# a bound read by scanf, then a loop calling the file's own functions (one writing only
# through its pointer parameter) and the C library's that read only or write only through
# their arguments
READ_BOUND = r"""#include <math.h>
#include <stdio.h>
#include <string.h>
static double signal(int i) { return sin(i * 0.1) + sqrt(i); }
static void scale(double *x, double by) { *x *= by; }
int main(void) {
  int n = 0;
  double s = 0;
  char word[8] = "ab";
  if (scanf("%d", &n) != 1) return 1;
  #pragma approx loop_perforate knob(k)
  for (int i = 0; i < n; i++) {
    double v = signal(i) + strlen(word);
    scale(&v, 0.5);
    s += v;
    if (i == 0) printf("first %.3f\n", v);
  }
  printf("%.6f\n", s);
  return 0;
}
"""


def test_bound_read_by_scanf_with_calls_that_cannot_reach_it(tmp_path: Path):
    (tmp_path / "p.c").write_text(READ_BOUND)
    write_config(tmp_path / "c.json", {"k": {"value": 2}}, program="p")
    approxcc_ok("build", "p.c", "-o", "exact", cwd=tmp_path)
    approxcc_ok("build", "p.c", "--config", "c.json", "-o", "half", cwd=tmp_path)
    cc("-O2", "p.c", "-o", "ref", "-lm", cwd=tmp_path)
    assert output_of(tmp_path / "exact", input="40\n") == \
        output_of(tmp_path / "ref", input="40\n")
    half = output_of(tmp_path / "half", input="40\n").splitlines()[-1]
    want = sum((math.sin(i * 0.1) + math.sqrt(i) + 2) * 0.5 for i in range(0, 40, 2))
    assert half == f"{want:.6f}"


def test_bound_whose_address_escapes_suggests_a_copy(tmp_path: Path):
    source = """void remember(int *p);
void tick(void);
int f(void) {
  int n = 10, s = 0;
  remember(&n);
  #pragma approx loop_perforate
  for (int i = 0; i < n; i++) { tick(); s += i; }
  return s;
}
"""
    stderr = diagnose(source, tmp_path)
    assert (f"t.c:{where(source, 'loop_perforate')}: error: 'loop_perforate' cannot count "
            f"this loop: the loop bound may change while the loop runs: the call to 'tick' at "
            f"t.c:{where(source, 'tick()')} may change 'n'\n") in stderr, stderr
    assert (f"t.c:{where(source, 'n = 10')}: note: copy 'n' into a local whose address is not "
            "taken before the loop, and bound the loop by that copy\n") in stderr, stderr
