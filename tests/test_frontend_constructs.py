"""The C that real projects use goes through MLIR, not only through the system compiler: each
corpus program of tests/c_programs/fe_*.c (run against `cc -O2` by test_c_frontend.py) has
every one of its functions in the MLIR module; structs by value cross to and from code `cc`
built; what the frontend cannot compile falls back when unannotated and is a located error
when annotated, never a traceback."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import NOT_YET, approxcc_ok, assert_same_as_cc, cc, diagnose, output_of, where

PROGRAMS = Path(__file__).resolve().parent / "c_programs"

# program → the functions it defines, each of which must be compiled to MLIR
THROUGH_MLIR = {
    "fe_kr_calls": ["timer_start", "timer_stop", "flush_cache", "scale", "main"],
    "fe_unions": ["as_double", "main"],
    "fe_bitfields": ["main"],
    "fe_function_pointers": ["add", "sub", "mul", "fold", "cmp", "main"],
    "fe_struct_by_value": ["vadd", "swap", "bump", "fill", "total", "main"],
    "fe_goto": ["parse_digits", "collatz_steps", "main"],
    "fe_vla": ["row_means", "main"],
    "fe_static_locals": ["next_id", "fib", "weekday", "main"],
    "fe_compound_literals": ["manhattan", "sum", "main"],
    "fe_designated_init": ["main"],
    "fe_variadic": ["sum_ints", "mean", "count_chars", "log_line", "main"],
    "fe_enum_typedef": ["weight_of", "next", "name", "main"],
    "fe_qualifiers": ["clamp", "saxpy", "unused_helper", "square", "main"],
    "fe_gnu_extensions": ["clipped", "note", "main"],
}


def defined_in_mlir(mlir: str) -> set[str]:
    """The functions an `--emit=approx` module defines (a body, not a declaration); variadic
    ones are `llvm.func`s."""
    return set(re.findall(r"^\s*(?:func\.func(?: private)?|llvm\.func(?: internal)?) @(\w+)\(.*\{$",
                          mlir, re.M))


@pytest.mark.parametrize("program", sorted(THROUGH_MLIR))
def test_every_function_goes_through_mlir(program: str, tmp_path: Path):
    emitted = approxcc_ok("build", PROGRAMS / f"{program}.c", "-S", "--emit=approx", "-o", "-",
                          cwd=tmp_path)
    assert set(THROUGH_MLIR[program]) <= defined_in_mlir(emitted.stdout)
    assert "approx.knob" in emitted.stdout


def test_calls_through_declarations_without_prototype(tmp_path: Path):
    """`extern void timer_start();` defined elsewhere: called variadically, as clang does."""
    (tmp_path / "timer.c").write_text(
        "void timer_start(void) {}\ndouble timer_stop(double t, int k) { return t * k; }\n")
    cc("-O2", "-c", "timer.c", "-o", "timer.o", cwd=tmp_path)
    (tmp_path / "bench.c").write_text("""#include <stdio.h>
extern void timer_start();
extern double timer_stop();
int main(void) {
  double s = 0;
  timer_start();
  #pragma approx loop_perforate values(1:2)
  for (int i = 0; i < 10; i++) s += i;
  printf("%.1f\\n", timer_stop(s, 2));
  return 0;
}
""")
    emitted = approxcc_ok("build", "bench.c", "-S", "--emit=approx", "-o", "-", cwd=tmp_path)
    assert "main" in defined_in_mlir(emitted.stdout)
    assert "vararg(!llvm.func<void (...)>)" in emitted.stdout
    approxcc_ok("build", "bench.c", "timer.o", "-o", "bench", cwd=tmp_path)
    assert output_of(tmp_path / "bench") == "90.0\n"


def test_k_and_r_definition_takes_promoted_arguments(tmp_path: Path):
    """`double half(x, c) float x; char c;` receives a double and an int, as callers
    through `double half();` pass them."""
    (tmp_path / "half.c").write_text("double half(x, c) float x; char c; { return x / 2 + c; }")
    (tmp_path / "main.c").write_text("""#include <stdio.h>
double half();
int main(void) {
  printf("%.2f\\n", half(3.0f, 'a'));
  return 0;
}
""")
    emitted = approxcc_ok("build", "half.c", "-S", "--emit=approx", "-o", "-", cwd=tmp_path)
    assert "half" in defined_in_mlir(emitted.stdout)
    approxcc_ok("build", "-c", "half.c", "-o", "half.o", cwd=tmp_path)
    cc("-O2", "main.c", "half.o", "-o", "mixed", cwd=tmp_path)
    assert output_of(tmp_path / "mixed") == "98.50\n"


ABI_HEADER = """struct v2 { double x, y; };
struct pi { int a, b; };
struct mix { int id; float w; double v; };
struct f3 { float x, y, z; };
struct c3 { char a, b, c; };
struct big { long d[5]; };
union un { int i; float f; };
struct v2 v2_add(struct v2, struct v2);
struct pi pi_swap(struct pi);
struct mix mix_bump(struct mix, int);
struct f3 f3_scale(struct f3, float);
struct c3 c3_next(struct c3);
struct big big_fill(long);
long big_sum(struct big);
union un un_flip(union un);
double many(int, int, int, int, int, struct pi, struct pi, double, struct v2, struct v2,
            struct v2, struct v2, struct v2);
"""
ABI_LIB = """#include "abi.h"
struct v2 v2_add(struct v2 p, struct v2 q) { struct v2 r = {p.x + q.x, p.y + q.y}; return r; }
struct pi pi_swap(struct pi p) { struct pi r = {p.b, p.a}; return r; }
struct mix mix_bump(struct mix m, int k) { m.id += k; m.w *= 2; m.v -= k; return m; }
struct f3 f3_scale(struct f3 f, float k) { f.x *= k; f.y *= k; f.z *= k; return f; }
struct c3 c3_next(struct c3 c) { c.a++; c.b++; c.c++; return c; }
struct big big_fill(long s) { struct big b; for (int i = 0; i < 5; i++) b.d[i] = s * i; return b; }
long big_sum(struct big b) {
  long s = 0;
  #pragma approx loop_perforate values(1:2)
  for (int i = 0; i < 5; i++) s += b.d[i];
  return s;
}
union un un_flip(union un u) { u.i ^= 1; return u; }
double many(int a, int b, int c, int d, int e, struct pi p, struct pi q, double x, struct v2 v,
            struct v2 w, struct v2 u, struct v2 t, struct v2 s) {
  return a + b + c + d + e + p.a * 10 + p.b + q.a * 100 + q.b + x + v.x + v.y + w.x * 2 + w.y
         + u.x * 3 + u.y + t.x * 4 + t.y + s.x * 5 + s.y;
}
"""
ABI_MAIN = """#include <stdio.h>
#include "abi.h"
int main(void) {
  struct v2 a = {1, 2}, b = {3.5, -1};
  long s = 0;
  #pragma approx loop_perforate values(1:2)
  for (int i = 0; i < 3; i++) s += big_sum(big_fill(i + 1));
  struct v2 r = v2_add(a, b);
  struct pi p = pi_swap((struct pi){4, 7});
  struct mix m = mix_bump((struct mix){1, 1.25f, 9.5}, 3);
  struct f3 f = f3_scale((struct f3){1, 2, 3}, 1.5f);
  struct c3 c = c3_next((struct c3){'a', 'x', '0'});
  union un u = un_flip((union un){.i = 6});
  double d = many(1, 2, 3, 4, 5, p, (struct pi){8, 9}, 0.5, a, b, r, a, b);
  printf("%ld %.2f %.2f %d %d %d %.2f %.2f %.1f %.1f %.1f %c%c%c %d %.2f\\n", s, r.x, r.y, p.a,
         p.b, m.id, m.w, m.v, f.x, f.y, f.z, c.a, c.b, c.c, u.i, d);
  return 0;
}
"""


@pytest.mark.parametrize("approx_side", ["caller", "callee"])
def test_structs_by_value_cross_to_code_cc_built(approx_side: str, tmp_path: Path):
    """Registers, `sret`, `byval`, and a struct that no longer fits in the registers left."""
    for name, text in (("abi.h", ABI_HEADER), ("lib.c", ABI_LIB), ("main.c", ABI_MAIN)):
        (tmp_path / name).write_text(text)
    cc("-O2", "main.c", "lib.c", "-o", "ref", cwd=tmp_path)
    ours, theirs = ("main.c", "lib.c") if approx_side == "caller" else ("lib.c", "main.c")
    emitted = approxcc_ok("build", ours, "-S", "--emit=approx", "-o", "-", cwd=tmp_path)
    assert "big_sum" in defined_in_mlir(emitted.stdout) or "main" in defined_in_mlir(
        emitted.stdout)
    approxcc_ok("build", "-c", ours, "-o", "ours.o", cwd=tmp_path)
    cc("-O2", "-c", theirs, "-o", "theirs.o", cwd=tmp_path)
    cc("ours.o", "theirs.o", "-o", "mixed", cwd=tmp_path)
    assert output_of(tmp_path / "mixed") == output_of(tmp_path / "ref")


def test_gotos_forward_backward_and_out_of_loops(tmp_path: Path):
    assert_same_as_cc("""#include <stdio.h>
static int words(const char *s) {
  int n = 0, w = 0;
start:
  if (!*s) goto end;
  if (*s == ' ') { s++; goto start; }
  w++;
word:
  n++;
  s++;
  if (*s && *s != ' ') goto word;
  goto start;
end:
  return w * 1000 + n;
}
static int loops(int k) {
  int t = 0;
  for (int i = 0; i < k; i++) {
    int j = 0;
  retry:
    j++;
    if (j % 3 == 1 && j < 10) goto retry;
    if (i == 5) continue;
    if (i == 7) break;
    switch (i % 3) {
    case 0: t += j; goto next;
    case 1: t -= 1; break;
    default: t *= 2;
    }
    t += 100;
  next:
    t ^= i;
  }
  return t;
}
int main(void) {
  int s = 0;
  #pragma approx loop_perforate values(1:2)
  for (int k = 0; k < 12; k++) s += loops(k);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      if (i * j == 2) goto found;
found:
  printf("%d %d %d %d\\n", s, words("hello  big world "), words(""), words("a"));
  return 0;
}
""", tmp_path)


# constructs the frontend leaves to the system compiler: (name, function, needle, message)
NOT_THROUGH_MLIR = [
    ("long_double", "double half(double x) {\n  long double y = x;\n  return (double)(y / 2);\n}\n",
     "y = x", "type 'long double'"),
    ("computed_goto", "double half(double x) {\n  void *p = &&out;\n  goto *p;\nout:\n"
     "  return x / 2;\n}\n", "&&out", "the expression 'addr_label_expr'"),
    ("goto_into_block", "double half(double x) {\n  goto in;\n  {\n  in:\n    x /= 2;\n  }\n"
     "  return x;\n}\n", "goto in", "a 'goto' into a nested statement"),
    ("inline_asm", "double half(double x) {\n  __asm__ volatile(\"\" ::: \"memory\");\n"
     "  return x / 2;\n}\n", "__asm__", "inline assembly"),
]
MAIN = """#include <stdio.h>
{function}
int main(void) {{
  double s = 0;
  #pragma approx loop_perforate values(1:2)
  for (int i = 0; i < 8; i++) s += half(i);
  printf("%.2f\\n", s);
  return 0;
}}
"""


@pytest.mark.parametrize("name,function,needle,what", NOT_THROUGH_MLIR,
                         ids=[c[0] for c in NOT_THROUGH_MLIR])
def test_unannotated_function_falls_back_annotated_one_is_an_error(
        name: str, function: str, needle: str, what: str, tmp_path: Path):
    source = MAIN.format(function=function)
    assert assert_same_as_cc(source, tmp_path) == "14.00\n"
    emitted = approxcc_ok("build", "p.c", "-S", "--emit=approx", "-o", "-", cwd=tmp_path)
    assert "half" not in defined_in_mlir(emitted.stdout)  # the system compiler's
    annotated = source.replace("double half", "// @approx func_substitute variants(half)\n"
                               "double half", 1)
    stderr = diagnose(annotated, tmp_path)
    assert stderr.startswith(f"t.c:{where(annotated, needle)}: error: {what} {NOT_YET}\n"), \
        stderr


def test_internal_failure_in_unannotated_code_falls_back(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch):
    """Whatever goes wrong inside the frontend for a function without annotations, or for a
    translation unit without any, the system compiler compiles it."""
    from approxcc.frontend import function_emitter, module_emitter

    def broken(self, annotations):
        if self.fn.spelling == "half":
            raise RuntimeError("injected")
        return emit(self, annotations)

    emit = function_emitter.FunctionEmitter.emit
    monkeypatch.setattr(function_emitter.FunctionEmitter, "emit", broken)
    source = MAIN.format(function="double half(double x) { return x / 2; }")
    assert assert_same_as_cc(source, tmp_path) == "14.00\n"
    emitted = approxcc_ok("build", "p.c", "-S", "--emit=approx", "-o", "-", cwd=tmp_path)
    assert defined_in_mlir(emitted.stdout) == {"main"}

    def finish(self, path, source):
        raise RuntimeError("injected")

    monkeypatch.setattr(module_emitter.ModuleEmitter, "finish", finish)
    plain = source.replace("#pragma approx loop_perforate values(1:2)\n", "")
    assert assert_same_as_cc(plain, tmp_path) == "14.00\n"
