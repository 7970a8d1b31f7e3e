"""The C frontend end to end: real programs built exactly by approxcc print what `cc -O2` builds
print, and constructs outside the frontend's scope give clean `file:line:col` diagnostics."""

import re
from pathlib import Path

import pytest
from conftest import (
    NOT_YET,
    approxcc_ok,
    assert_same_as_cc_through_mlir,
    cc,
    diagnose,
    run_binary,
    where,
)

PROGRAMS = sorted((Path(__file__).resolve().parent / "c_programs").glob("*.c"))


# -- programs: approxcc (exact, no configuration) against cc -O2 ----------------------------

def test_there_are_enough_programs():
    assert len(PROGRAMS) >= 10


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.stem)
def test_program_prints_what_cc_prints(program: Path, tmp_path: Path):
    source = program.read_text()
    assert "#pragma approx loop_perforate" in source or "// @approx loop_perforate" in source

    # -save-temps keeps the frontend's approx IR beside the program (one compilation).
    approxcc_ok("build", program, "-save-temps", "-o", tmp_path / "approx", cwd=tmp_path)
    emitted = (tmp_path / f"{program.stem}.approx.mlir").read_text()
    assert '"approx.knob"' in emitted or "approx.knob" in emitted
    cc("-O2", program, "-o", tmp_path / "ref", "-lm")

    got, want = run_binary(tmp_path / "approx"), run_binary(tmp_path / "ref")
    assert got.returncode == want.returncode
    assert want.stdout, "the program should print something"
    assert got.stdout == want.stdout


# -- diagnostics ---------------------------------------------------------------------------

# (name, source, needle where the error points, what is not supported)
UNSUPPORTED = [
    ("setjmp", """#include <setjmp.h>
static jmp_buf env;
int f(void) {
  return setjmp(env);
}
""", "setjmp(", "a call to '_setjmp' (a function that returns twice)"),
    ("long_double_param", """int getx(long double p) { return (int)p; }
""", "getx(long", "type 'long double'"),
    ("complex", """int f(int s) {
  _Complex double z = s;
  return (int)__real__ z;
}
""", "z =", "type '_Complex double'"),
]


def annotated(source: str, needle: str) -> str:
    """The source with the function holding `needle` annotated: unannotated functions the
    frontend cannot handle go to the system compiler instead (frontend/tu_split.py)."""
    lines = source.split("\n")
    at = source.count("\n", 0, source.index(needle))
    header = max(n for n in range(at + 1) if re.match(r"\w.*\(", lines[n]))
    name = re.search(r"(\w+)\s*\(", lines[header]).group(1)
    lines.insert(header, f"// @approx func_substitute variants({name})")
    return "\n".join(lines)


@pytest.mark.parametrize("name,source,needle,what", UNSUPPORTED, ids=[u[0] for u in UNSUPPORTED])
def test_unsupported_construct(name: str, source: str, needle: str, what: str, tmp_path: Path):
    source = annotated(source, needle)
    stderr = diagnose(source, tmp_path)
    assert stderr.startswith(f"t.c:{where(source, needle)}: error: {what} {NOT_YET}\n"), stderr


LOOP = "  for (int i = 0; i < 10; i++) s += i;\n"


def test_malformed_pragma(tmp_path: Path):
    source = ("int main(void) {\n  int s = 0;\n"
              "  #pragma approx loop_perforate values(8:1)\n" + LOOP + "  return s;\n}\n")
    stderr = diagnose(source, tmp_path)
    assert stderr.startswith(f"t.c:{where(source, '8:1')}: error: "), stderr
    assert "8:1" in stderr.splitlines()[0]


@pytest.mark.parametrize("source,message,at,note", [
    ("int main(void) {\n  int i = 0;\n  // @approx loop_perforate\n"
     "  while (i < 10) i++;\n  return i;\n}\n",
     "must precede a counted 'for' loop\n", "while", ""),
    ("int main(void) {\n  int s = 0;\n  #pragma approx loop_perforate\n"
     "  for (int i = 1; i < 100; i *= 2) s += i;\n  return s;\n}\n",
     "cannot count this loop: the increment must change 'i'", "for (", "loop is here"),
    ("int g;\nstatic void bump(void) { g += 2; }\nint main(void) {\n  int n = 0;\n"
     "  #pragma approx loop_perforate\n  for (g = 0; g < 10; g++) { n++; bump(); }\n"
     "  return n;\n}\n",
     "cannot count this loop: the call to 'bump' at t.c:6:35 may change the induction "
     "variable 'g'", "bump()", "the call to 'bump' is here"),
], ids=["while", "uncounted_for", "counter_changed_by_a_call"])
def test_loop_perforate_needs_a_counted_for(source: str, message: str, at: str, note: str,
                                            tmp_path: Path):
    stderr = diagnose(source, tmp_path)
    assert stderr.startswith(f"t.c:{where(source, 'loop_perforate')}: error: 'loop_perforate' "
                             + message), stderr
    assert f"t.c:{where(source, at)}: note: {note}" in stderr


@pytest.mark.parametrize("source", [
    "int main(void) {\n  int s = 0;\n  return s;\n  #pragma approx loop_perforate\n}\n",
    "int main(void) { return 0; }\n// @approx loop_perforate\n",
], ids=["before_brace", "end_of_file"])
def test_annotation_without_target(source: str, tmp_path: Path):
    stderr = diagnose(source, tmp_path)
    assert stderr.startswith(f"t.c:{where(source, 'loop_perforate')}: error: approx annotation "
                             "has no target statement\n"), stderr


def test_duplicate_knob_names(tmp_path: Path):
    source = ("int main(void) {\n  int s = 0;\n  #pragma approx loop_perforate knob(k)\n" + LOOP
              + "  // @approx loop_perforate knob(k) values(1:2)\n" + LOOP + "  return s;\n}\n")
    stderr = diagnose(source, tmp_path)
    assert stderr.startswith(f"t.c:{where(source, 'loop_perforate', 1)}: error: duplicate knob "
                             "name 'k'\n"), stderr
    assert f"t.c:{where(source, 'loop_perforate')}: note: first defined here" in stderr


def test_classification_macros_take_the_arm_their_type_selects(tmp_path: Path):
    """<math.h>'s isnan/isinf/signbit dispatch on `sizeof (x)` with `?:`: only the arm the
    constant condition selects is compiled (the others name long double functions)."""
    assert_same_as_cc_through_mlir("""#include <math.h>
#include <stdio.h>
int main(void) {
  double v[] = {0.0, -1.5, 1.0 / 0.0, -1.0 / 0.0, NAN};  /* a NaN of a known sign */
  for (int i = 0; i < 5; i++) {
    float f = (float)v[i];
    printf("%d %d %d %d %d\\n", isnan(v[i]) != 0, isinf(v[i]) != 0, isfinite(v[i]) != 0,
           signbit(v[i]) != 0, isnan(f) != 0);
  }
  return sizeof(int) == 4 ? 0 : 1;
}
""", tmp_path, "-lm")


@pytest.mark.parametrize("flags", [[], ["-D_FORTIFY_SOURCE=2"]], ids=["plain", "fortified"])
def test_builtins_that_are_library_functions(flags: list[str], tmp_path: Path):
    """`__builtin_memcpy` & co. call the C library's function; with _FORTIFY_SOURCE,
    <string.h> calls `__builtin___memcpy_chk(d, s, n, __builtin_object_size(d, 0))`."""
    assert_same_as_cc_through_mlir(r"""#include <stdio.h>
#include <string.h>
struct p { int a; double b; };
int main(void) {
  struct p x = {1, 2.5}, y;
  char buf[32];
  __builtin_memcpy(&y, &x, sizeof x);
  __builtin_memset(buf, 'a', 5);
  buf[5] = 0;
  memcpy(buf + 5, "bc", 3);
  strcat(buf, "d");
  printf("%d %.1f %s %zu %d\n", y.a, y.b, buf, __builtin_strlen(buf), __builtin_abs(-3));
  return 0;
}
""", tmp_path, "-O2", *flags)


def test_a_local_table_is_copied_from_a_constant(tmp_path: Path):
    """A local aggregate of many constant parts (Csmith's tables) is one copy from a constant
    global, not a store per element; partly initialised, with addresses and strings, and
    fresh on every entry to its block."""
    output = assert_same_as_cc_through_mlir(r"""#include <stdio.h>
struct s { char c; double d; const char *name; int *p; };
int g = 7;
int sum(int round) {
  int t[3][4] = {{1, 2, 3, 4}, {5, 6}, {9, 10, 11, 12}};
  struct s rows[4] = {{'a', 1.5, "one", &g}, {'b', 2.5, "two", 0}, {'c', 3.5}};
  int s = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) {
      s += t[i][j];
      t[i][j] = round;  /* the next call starts from the table again */
    }
  return s + rows[0].c + (int)rows[2].d + *rows[0].p + rows[1].name[1] + (rows[3].p == 0);
}
int main(void) {
  printf("%d %d\n", sum(100), sum(200));
  return 0;
}
""", tmp_path)
    assert output == "290 290\n"
    mlir = (tmp_path / "p.approx.mlir").read_text()
    assert 'llvm.mlir.global internal constant @".init.0"(dense<[[1, 2, 3, 4], [5, 6, 0, 0], ' \
        '[9, 10, 11, 12]]> : tensor<3x4xi32>)' in mlir
    assert mlir.count('llvm.call_intrinsic "llvm.memcpy.p0.p0.i64"') == 2


def test_a_foldable_expression_with_side_effects_keeps_them(tmp_path: Path):
    """clang folds `(x++, 1)` to 1: a condition or a loop bound folded so must still do
    what it writes (the conditional's arm choice, a counted loop's bound once per test)."""
    output = assert_same_as_cc_through_mlir(r"""#include <stdio.h>
int g, n;
int main(void) {
  int x = 0, c = 0;
  int r = (x++, 1) ? 10 : 20;
  int s = (g = 5) ? 1 : 2;
  int t = sizeof(x++) == 4 ? 3 : 4;  /* sizeof does not evaluate its operand */
  t += __builtin_constant_p(x++);     /* nor does __builtin_constant_p: 0 */
  for (int i = 0; i < (n++, 10); i++) c++;
  printf("%d %d %d %d %d %d %d\n", x, r, g, s, t, n, c);
  return 0;
}
""", tmp_path, "-w")
    assert output == "1 10 5 1 3 11 10\n"


def test_a_counter_that_wraps_around_is_not_counted(tmp_path: Path):
    """An unsigned or narrower-than-int counter wraps where C defines it to: `i != 4` from
    250 in an unsigned char runs 10 times, not none (a counted loop would assume i <= 4)."""
    output = assert_same_as_cc_through_mlir(r"""#include <stdio.h>
int main(void) {
  int c = 0, d = 0, e = 0, f = 0, h = 0, n = 7;
  for (unsigned char i = 250; i != 4; i++) c++;
  for (unsigned int j = 4294967290u; j != 3; j++) d++;
  for (short k = 32760; k != -32766; k++) e++;
  for (unsigned char u = 0; u < 9; u += 2) f++;      /* counted: no wrap */
  for (unsigned int v = 0; v < (unsigned)n; v++) h++; /* counted */
  printf("%d %d %d %d %d\n", c, d, e, f, h);
  return 0;
}
""", tmp_path, "-w")
    assert output == "10 9 10 5 7\n"


def _function_ir(mlir: str, name: str) -> str:
    start = mlir.index(f"@{name}(")
    end = mlir.find("func.func", start)
    return mlir[start:end if end >= 0 else None]


def test_pointers_stay_pointers_and_constant_offsets_fold(tmp_path: Path):
    """A pointer stored, passed, chosen and compared is the `!llvm.ptr` it is: no memref
    descriptor is built and taken apart again, and a constant subscript is one constant
    offset. (Csmith's programs made 10 MB of IR a 1,700-line file, most of it those.)"""
    output = assert_same_as_cc_through_mlir(r"""#include <stdio.h>
int *pick(int *p, int *q, int which) {
  int *r = which ? p : q;
  int *s = r;
  return s == p ? s : r;
}
int corner(void) {
  int t[3][4][5] = {{{0}}};
  t[2][3][4] = 7;
  t[1][2][3] = t[2][3][4] + 1;
  return t[1][2][3] * 10 + t[2][3][4];
}
int main(void) {
  int a[4] = {1, 2, 3, 4};
  int *p = pick(a + 1, a + 3, 0);
  printf("%d %d %d %d\n", p[-1], p[0], *pick(a, a + 2, 1), corner());
  return 0;
}
""", tmp_path)
    assert output == "3 4 1 87\n"
    mlir = (tmp_path / "p.approx.mlir").read_text()
    pick = _function_ir(mlir, "pick")
    assert "llvm.insertvalue" not in pick and "unrealized_conversion_cast" not in pick, pick
    corner = _function_ir(mlir, "corner")
    assert not re.search(r"arith\.(addi|muli) .*: index", corner), corner


def test_a_local_table_with_addresses_of_locals_is_copied_then_patched(tmp_path: Path):
    """A local table whose parts are mostly constants but some `&local` (Csmith's pointer
    tables) is copied from a constant global, then the non-constant parts stored (a later
    `&local` overriding a constant included); one whose later designator overrides an
    earlier `&local` is stored part by part, as written."""
    output = assert_same_as_cc_through_mlir(r"""#include <stdio.h>
int g = 7, h = 9;
int main(void) {
  int x = 1, y = 2;
  int *t[3][4] = {{&g, &x, 0, &h}, {&y, &g, &g, &h}, {&x, 0, &h, &g}};
  int *over[10] = {[0] = &x, [1] = &g, [2] = &h, [3] = &g, [4] = &h, [5] = &g,
                   [6] = &h, [7] = &g, [8] = &h, [0] = &g, [8] = &y};
  int *late[10] = {[0] = &g, [1] = &g, [2] = &h, [3] = &g, [4] = &h, [5] = &g,
                   [6] = &h, [7] = &g, [8] = &h, [8] = &y};
  int s = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      s = s * 3 + (t[i][j] ? *t[i][j] : 5);
  for (int i = 0; i < 10; i++)
    s = s * 3 + (over[i] ? *over[i] : 5) + (late[i] ? *late[i] : 5);
  printf("%d\n", s);
  return 0;
}
""", tmp_path)
    assert output.strip().lstrip("-").isdigit()
    mlir = (tmp_path / "p.approx.mlir").read_text()
    assert mlir.count('llvm.call_intrinsic "llvm.memcpy.p0.p0.i64"') == 2  # t and late


def test_addresses_of_elements_and_members_of_statics_are_constants(tmp_path: Path):
    """`&g[2][1]`, `&s.b`, `&rows[1].c[2]` and an inner array decaying are addresses a
    table of constants holds (the object's address and a byte offset), in a file-scope
    initialiser and in a local table copied from a constant."""
    output = assert_same_as_cc_through_mlir(r"""#include <stdio.h>
struct row { char a; int b; short c[4]; };
static int g[3][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}};
struct row rows[3] = {{1, 2, {3, 4, 5, 6}}, {7, 8, {9, 10, 11, 12}}, {13, 14, {15}}};
struct row s = {'x', 42, {1, 2, 3, 4}};
int *file_scope[4] = {&g[2][1], &s.b, g[1], &rows[2].b};
int main(void) {
  int x = 100;
  int *local[3][3] = {{&g[0][3], &x, g[2]}, {&rows[1].b, &s.b, &g[1][1]},
                      {&x, &g[2][3], &rows[0].b}};
  short *shorts[9] = {&rows[1].c[2], rows[0].c, &s.c[3], &rows[2].c[0], &rows[1].c[1],
                      &s.c[0], &rows[0].c[3], &s.c[1], &rows[2].c[1]};
  long sum = 0;
  for (int i = 0; i < 4; i++) sum = sum * 7 + *file_scope[i];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) sum = sum * 7 + *local[i][j];
  for (int i = 0; i < 9; i++) sum = sum * 3 + *shorts[i];
  printf("%ld\n", sum);
  return 0;
}
""", tmp_path)
    assert output.strip().isdigit()
    mlir = (tmp_path / "p.approx.mlir").read_text()
    assert mlir.count('llvm.call_intrinsic "llvm.memcpy.p0.p0.i64"') == 2  # local, shorts
    assert "llvm.getelementptr" in mlir.split("@file_scope")[1].split("llvm.return")[0]
