"""Translation units: globals, the split between MLIR and the system compiler for what the
frontend cannot compile (frontend/tu_split.py), headers, C++. Every program is checked
against what `cc -O2` (or `c++ -O2`) builds."""

import re
import subprocess
from pathlib import Path

import pytest
from conftest import (
    MLIR_ALL,
    NOT_YET,
    approxcc_ok,
    assert_same_as_cc,
    assert_same_as_cc_by_default,
    assert_same_as_cc_through_mlir,
    cc,
    diagnose,
    output_of,
    run_approxcc,
    where,
    write_config,
    write_sources,
)


def same_as_reference(tmp: Path, sources: dict[str, str], *flags: str,
                      compiler: str = "cc") -> str:
    """Build `sources` with approxcc and with the system compiler; both print the same, and
    approxcc nothing (a fallback is silent)."""
    return assert_same_as_cc(sources, tmp, *flags, compiler=compiler, silent=True)


# -- the split ----------------------------------------------------------------------------

MIXED = r"""#include <stdio.h>
static int calls = 0;
static int square(int x) { calls++; return x * x; }

union bits { float f; unsigned u; };
static unsigned float_bits(float f) { union bits b; b.f = f; return b.u; }

static int apply(int (*fn)(int), int v) { return fn(v); }

int find(const int *a, int n, int key) {
  for (int i = 0; i < n; i++)
    if (a[i] == key) goto found;
  return -1;
found:
  return key;
}

static int fence(int x) {
  asm volatile("" ::: "memory");
  return x;
}

int sum_squares(int n) {
  int s = 0;
  #pragma approx loop_perforate
  for (int i = 0; i < n; i++) s += fence(square(i)) + (int)(float_bits(1.0f) >> 30);
  return s;
}

int main(void) {
  int t[3] = {4, 8, 15};
  asm volatile("" ::: "memory");
  int s = sum_squares(10), a = apply(square, 7);
  printf("%d %d %u %d %d calls=%d\n", s, a, float_bits(2.0f), find(t, 3, 8), find(t, 3, 9),
         fence(calls));
  return 0;
}
"""


def test_unsupported_unannotated_functions_go_to_cc(tmp_path: Path):
    assert same_as_reference(tmp_path, {"mixed.c": MIXED}) == \
        "285 49 1073741824 8 -1 calls=11\n"


LOAD_HOOKS = r"""#include <stdio.h>
static int loaded;
__attribute__((constructor)) static void init(void) { loaded = 42; }
__attribute__((destructor)) static void bye(void) { printf("unloaded %d\n", loaded); }
int main(void) { printf("loaded %d\n", loaded); return 0; }
"""


def test_constructors_and_destructors_run(tmp_path: Path):
    """Called by nobody, run by the loader: a tuned shared library frees what it loaded
    in a destructor when its copy is unloaded."""
    assert same_as_reference(tmp_path, {"t.c": LOAD_HOOKS}) == "loaded 42\nunloaded 42\n"


def test_emitted_mlir_holds_only_what_the_frontend_compiled(tmp_path: Path):
    (tmp_path / "mixed.c").write_text(MIXED)
    done = run_approxcc(["build", "mixed.c", "-S", "--emit=approx", "-o", "-"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    mlir = done.stdout
    assert "func.func @sum_squares" in mlir
    assert "approx.knob" in mlir
    # `fence` and `main` (inline assembly) went to cc; `fence`, called from MLIR, is
    # declared under its shared name
    assert "func.func @fence" not in mlir and "func.func @main" not in mlir
    assert "func.func private @__approx_" in mlir and "_fence(i32) -> i32" in mlir


def test_jobs_show_the_remainder(tmp_path: Path):
    (tmp_path / "mixed.c").write_text(MIXED)
    done = run_approxcc(["build", "mixed.c", "-O3", "-Iinc", "-o", "never", "-###"],
                        cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    jobs = [line.split() for line in done.stderr.splitlines()]
    rest = jobs[-2]
    assert Path(rest[0]).name == "cc" and rest[1:3] == ["-O3", "-c"]
    assert "-Iinc" in rest and rest[-3].endswith("mixed.rest.c")
    assert rest[-1] in jobs[-1]  # linked
    assert not (tmp_path / "never").exists()


def test_unsupported_construct_in_annotated_function_is_an_error(tmp_path: Path):
    source = MIXED.replace("static int fence(", "// @approx memoize\nstatic int fence(")
    stderr = diagnose(source, tmp_path)
    assert stderr.startswith(f"t.c:{where(source, 'asm')}: error: inline assembly {NOT_YET}\n"), \
        stderr


def test_unsupported_construct_in_function_with_annotated_loop_is_an_error(tmp_path: Path):
    source = MIXED.replace("  return s;\n}", "  asm(\"\");\n  return s;\n}")
    stderr = diagnose(source, tmp_path)
    assert stderr.startswith(f"t.c:{where(source, 'asm(')}: error: inline assembly "
                             f"{NOT_YET}\n"), stderr


SHARED_STATICS = r"""#include <stdio.h>
static int total = 100;              /* used on both sides */
static int scale = 2, unused = 9;    /* one `static` for two variables */
static int twice(int x) { return scale * x; }       /* MLIR, called from cc's side */
static int via(int (*f)(int), int x) { return f(x); }  /* MLIR, called from cc's side */

static int mix(int x) {              /* cc (inline assembly), called from MLIR */
  union { int i; unsigned u; } v;
  v.i = x;
  asm volatile("" ::: "memory");
  return (int)(v.u % 7u);
}

static int accumulate(int n) {       /* MLIR (annotated), called from cc's side */
  #pragma approx loop_perforate
  for (int i = 0; i < n; i++) total += twice(i) + mix(i);
  return total;
}

int NAME(int n) {                    /* cc (inline assembly) */
  asm volatile("" ::: "memory");
  return via(twice, accumulate(n)) + unused;
}
"""


def test_static_symbols_across_the_split_and_across_translation_units(tmp_path: Path):
    sources = {"a.c": SHARED_STATICS.replace("NAME", "run_a"),
               "b.c": SHARED_STATICS.replace("NAME", "run_b"),
               "main.c": '#include <stdio.h>\nint run_a(int);\nint run_b(int);\n'
                         'int main(void) { int a = run_a(10);\n'
                         '  int b = run_b(5);\n  printf("%d %d\\n", a, b); return 0; }\n'}
    assert same_as_reference(tmp_path, sources) == "437 269\n"


def test_separate_compilation_with_a_remainder(tmp_path: Path):
    (tmp_path / "a.c").write_text(SHARED_STATICS.replace("NAME", "run_a"))
    (tmp_path / "main.c").write_text('#include <stdio.h>\nint run_a(int);\n'
                                     'int main(void) { printf("%d\\n", run_a(10)); return 0; }\n')
    assert run_approxcc(["build", "a.c", "-c", "-o", "a.o"], cwd=tmp_path).returncode == 0
    built = run_approxcc(["build", "a.o", "main.c", "-o", "prog"], cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    assert output_of(tmp_path / "prog") == "437\n"


# -- globals ------------------------------------------------------------------------------

GLOBALS = r"""#include <stdio.h>
extern int shared;                       /* defined in the other translation unit */
static const unsigned short table[2][4] = {{1, 2, 3, 4}, {5, 6}};
const char *const names[] = {"low", "high"};
double weights[3] = {0.5, 0.25};
int hist[4];
struct cell { char tag; double v; int n[2]; } cells[2] = {{'a', 1.5, {1, 2}}, {'b'}};

int counted(void) { static int calls; return ++calls; }

int main(void) {
  double s = 0;
  #pragma approx loop_perforate
  for (int i = 0; i < 8; i++) {
    s += table[i / 4][i % 4] * weights[i % 3] + shared;
    hist[i % 4] += counted();
  }
  printf("%.2f %s %d %d %c%d %d\n", s, names[s > 10], hist[3], counted(), cells[1].tag,
         cells[0].n[1], shared);
  return 0;
}
"""


def test_globals_used_from_annotated_code(tmp_path: Path):
    got = same_as_reference(tmp_path, {"g.c": GLOBALS, "def.c": "int shared = 3;\n"})
    assert got == "28.25 high 12 9 b2 3\n"


def test_globals_are_llvm_globals(tmp_path: Path):
    (tmp_path / "g.c").write_text(GLOBALS)
    done = run_approxcc(["build", "g.c", "-S", "--emit=approx", "-o", "-"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    mlir = done.stdout
    assert "llvm.mlir.global internal constant @table(dense<[[1, 2, 3, 4], [5, 6, 0, 0]]> : " \
           "tensor<2x4xi16>)" in mlir
    assert "llvm.mlir.global external @weights(dense<[5.000000e-01, 2.500000e-01, " \
           "0.000000e+00]> : tensor<3xf64>)" in mlir
    assert "llvm.mlir.global internal @counted.calls()" in mlir
    assert "llvm.mlir.global external @shared() {addr_space = 0 : i32} : i32\n" in mlir


def test_header_static_inline_called_from_annotated_code(tmp_path: Path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "util.h").write_text(
        "static inline int clampi(int x, int lo, int hi) { return x < lo ? lo : x > hi ? hi"
        " : x; }\nstatic inline int never_called(int x) { return x; }\n")
    source = ('#include <stdio.h>\n#include "util.h"\nint main(void) {\n  int s = 0;\n'
              '  #pragma approx loop_perforate\n'
              '  for (int i = 0; i < 8; i++) s += clampi(3 * i, 2, 10);\n'
              '  printf("%d\\n", s);\n  return 0;\n}\n')
    assert same_as_reference(tmp_path, {"h.c": source}, "-Iinc") == "60\n"
    mlir = run_approxcc(["build", "h.c", "-Iinc", "-S", "--emit=approx", "-o", "-"],
                        cwd=tmp_path).stdout
    assert "func.func private @clampi" in mlir and "never_called" not in mlir
    assert "func.func @printf" not in mlir and "fputs" not in mlir


# K&R definitions: one annotated (MLIR defines it, the remainder declares it `int count();`),
# a `static` one called from MLIR code, parameters the call promotes (float, char, short)
KNR = r"""#include <stdio.h>
static double twice(x) double x; { return x * 2; }
int count(a, b) char *a; int b; {
  int n = 0;
  #pragma approx loop_perforate
  for (int i = 0; i < b; i++) n += a[i] == 'a';
  return n;
}
float half(f) float f; { return f / 2; }
static int widen(c, s) char c; short s; { return c + s; }
double mix(a, b, c) float a; char b; double c; { return a + b + c; }
int main(void) {
  int s = 0;
  #pragma approx loop_perforate
  for (int i = 0; i < 4; i++) s += widen(i, 1);
  printf("%g %d %.12g %d %d %.12g %d\n", twice(3.0), count("banana", 6), half(0.1),
         widen(300, 70000), widen(-1, 5), mix(0.1, 257, 0.25), s);
  return 0;
}
"""


def test_old_style_definitions(tmp_path: Path):
    (tmp_path / "all").mkdir()
    assert_same_as_cc_through_mlir(KNR, tmp_path / "all")
    assert assert_same_as_cc_by_default(KNR, tmp_path) == \
        "6 3 0.0500000007451 4508 4 1.35000002384 10\n"


# Definitions in included files: `#include "impl.c"` and a single-header library's
# implementation; main, the only function of the main file, is annotated. other.c calls
# what p.c's includes define.
INCLUDED_DEFINITIONS = {
    "impl.c": """int impl_counter = 5;
int impl_add(int a, int b) { return a + b + impl_counter; }
static int impl_hidden(int x) { return x * 3; }
int impl_triple(int x) { return impl_hidden(x); }
""",
    "lib.h": """#ifndef LIB_H
#define LIB_H
int lib_square(int x);
#ifdef LIB_IMPLEMENTATION
int lib_square(int x) { return x * x; }
int lib_unused(int x) { return x - 1; }
#endif
#endif
""",
    "p.c": r"""#include <stdio.h>
#include "impl.c"
#define LIB_IMPLEMENTATION
#include "lib.h"
void other(void);
int main(void) {
  int s = 0;
  #pragma approx loop_perforate
  for (int i = 0; i < 4; i++) s += impl_add(i, 1);
  printf("%d %d %d\n", s, impl_triple(4), lib_square(7));
  other();
  return 0;
}
""",
    "other.c": r"""#include <stdio.h>
int impl_triple(int x);
int lib_unused(int x);
void other(void) { printf("%d %d\n", impl_triple(2), lib_unused(10)); }
""",
}


@pytest.mark.parametrize("mode", [[], [MLIR_ALL]], ids=["annotated", "all"])
def test_definitions_in_included_files(mode: list[str], tmp_path: Path):
    write_sources(tmp_path, INCLUDED_DEFINITIONS)
    approxcc_ok("build", "p.c", "other.c", *mode, "-o", "approx", cwd=tmp_path)
    assert output_of(tmp_path / "approx") == "30 12 49\n6 9\n"



# Annotations in included files: a library's implementation included by its tests (`#include
# "../lib/impl.c"`, which includes its own header beside it: found there only) and a
# single-header library's `static inline` function (found by -I, `#pragma once`), included
# again through a header whose own code calls it, and by a second translation unit (one
# knob, h, in both). Its `static` state and a helper are shared with the rest of the file; a
# state clause.
ANNOTATED_INCLUDES = {
    "lib/impl.h": "int approx_sum(const int *v, int n);\nint scale(int x);\n",
    "lib/impl.c": r"""#include "impl.h"
static int calls;
static int twice(int x) { calls++; return 2 * x; }
int approx_sum(const int *v, int n) {
  int s = 0;
  #pragma approx loop_perforate knob(hot) values(1:4) state(n) range(0:100)
  for (int i = 0; i < n; i++) s += twice(v[i]);
  return s;
}
int scale(int x) { return twice(x) + calls; }
const char *impl_file(void) { return __FILE__; }
""",
    "inc/h.h": """#pragma once
static inline int h(int n) {
  int s = 0;
  // @approx loop_perforate knob(h) values(1:4)
  for (int i = 0; i < n; i++) s += i;
  return s;
}
""",
    "inc/wrap.h": '#include "h.h"\nstatic int wrapped(int n) { return h(n) + 1; }\n',
    "tests/t.c": r"""#include <stdio.h>
#include "../lib/impl.c"
#include "h.h"
#include "wrap.h"
int main(void) {
  int v[16];
  for (int i = 0; i < 16; i++) v[i] = i;
  int u(void), s = approx_sum(v, 16), c = scale(3);
  printf("%d %d %d %d %s %d %d\n", s, c, wrapped(10), calls, impl_file(), __LINE__, u());
  return 0;
}
""",
    "tests/u.c": '#include "h.h"\nint u(void) { return h(4); }\n',
}


@pytest.mark.parametrize("mode", [[], [MLIR_ALL]], ids=["annotated", "all"])
def test_annotations_in_included_files(mode: list[str], tmp_path: Path):
    for folder in ("lib", "inc", "tests"):
        (tmp_path / folder).mkdir()
    write_sources(tmp_path, ANNOTATED_INCLUDES)
    flags = ["-Iinc", "tests/t.c", "tests/u.c"]
    cc("-O2", *flags, "-o", "ref", cwd=tmp_path)
    exact = output_of(tmp_path / "ref")
    assert exact == "240 23 46 17 tests/../lib/impl.c 9 6\n"
    done = approxcc_ok(*flags, *mode, "-o", "approx", cwd=tmp_path)
    assert "warning" not in done.stderr, done.stderr
    assert output_of(tmp_path / "approx") == exact
    write_config(tmp_path / "c.json", {"hot": {"thresholds": [10], "decisions": [1, 2]},
                                       "h": {"value": 3}}, program="approx")
    approxcc_ok(*flags, *mode, "-fapprox-config=c.json", "-o", "approx", cwd=tmp_path)
    # every second element (n = 16 reaches the threshold), h's i = 0, 3, 6, 9 and 0, 3
    assert output_of(tmp_path / "approx") == "112 15 19 9 tests/../lib/impl.c 9 3\n"



def test_annotated_header_included_with_angle_brackets(tmp_path: Path):
    """A project header found by -I through `#include <h.h>` (in a file without annotations
    of its own) is approxcc's to compile: its knob takes the configuration's value."""
    (tmp_path / "inc").mkdir()
    write_sources(tmp_path, {"inc/h.h": ANNOTATED_INCLUDES["inc/h.h"], "m.c": (
        '#include <stdio.h>\n#include <h.h>\n'
        'int main(void) { printf("%d\\n", h(10)); return 0; }\n')})
    write_config(tmp_path / "c.json", {"h": {"value": 3}}, program="m")
    done = approxcc_ok("-Iinc", "m.c", "-fapprox-config=c.json", "-o", "m", cwd=tmp_path)
    assert "warning" not in done.stderr, done.stderr
    assert output_of(tmp_path / "m") == "18\n"


# Inline functions with external linkage are defined in several units: C99's `inline`
# definition (the external one is the unit's with an `extern` declaration, sq.c's), C++'s
# `inline` in a header (every unit including it). tri is annotated: with a configuration,
# every call of it, from any unit and from code the system compiler compiles, is perforated.
INLINE_C = {
    "sq.h": """inline int sq(int n) { return n * n; }
inline int tri(int n) {
  int s = 0;
  #pragma approx loop_perforate knob(tri) values(1:4)
  for (int i = 0; i < n; i++) s += i;
  return s;
}
""",
    "sq.c": '#include "sq.h"\nextern inline int sq(int n);\nextern inline int tri(int n);\n',
    "p.c": r"""#include <stdio.h>
#include "sq.h"
int (*keep)(int) = sq;
int other(void);
int twice(int n) { return 2 * tri(n); }
int main(void) {
  printf("%d %d %d %d %d\n", sq(7), tri(10), twice(10), keep(3), other());
  return 0;
}
""",
    "q.c": '#include "sq.h"\nint other(void) { return sq(2) + tri(4); }\n',
}
INLINE_CXX = {
    "k.hpp": """#pragma once
namespace k {
inline int tri(int n) {
  int s = 0;
  #pragma approx loop_perforate knob(tri) values(1:4)
  for (int i = 0; i < n; i++) s += i;
  return s;
}
inline int twice(int n) { return 2 * tri(n); }
}
""",
    "m.cc": r"""#include <cstdio>
#include "k.hpp"
int other();
int main() { std::printf("%d %d %d\n", k::tri(10), k::twice(10), other()); return 0; }
""",
    "o.cc": '#include "k.hpp"\nint other() { return k::tri(4) + k::twice(1); }\n',
}


@pytest.mark.parametrize("mode", [[], [MLIR_ALL]], ids=["annotated", "all"])
@pytest.mark.parametrize(("sources", "compiler", "exact", "perforated"), [
    (INLINE_C, "cc", "49 45 90 9 10\n", "49 20 40 9 6\n"),
    (INLINE_CXX, "c++", "45 90 6\n", "20 40 2\n")], ids=["c", "cxx"])
def test_inline_functions_defined_in_several_units(sources: dict[str, str], compiler: str,
                                                   exact: str, perforated: str,
                                                   mode: list[str], tmp_path: Path):
    names = [n for n in write_sources(tmp_path, sources) if not n.endswith(("h", "hpp"))]
    cc("-O2", *names, "-o", "ref", cwd=tmp_path, compiler=compiler)
    assert output_of(tmp_path / "ref") == exact
    approxcc_ok(*names, *mode, "-o", "approx", cwd=tmp_path)
    assert output_of(tmp_path / "approx") == exact
    write_config(tmp_path / "c.json", {"tri": {"value": 2}}, program="approx")
    approxcc_ok(*names, *mode, "-fapprox-config=c.json", "-o", "approx", cwd=tmp_path)
    assert output_of(tmp_path / "approx") == perforated


# `static` from a macro of a header, in two translation units with helpers of the same
# names: sum_squares (annotated, MLIR's) is called from the remainder, `calls` crosses the
# split, each file keeps its own `square` and `calls`
STATIC_MACROS = {
    "defs.h": "#define PRIVATE static\n#define API static inline\n",
    "p.c": r"""#include <stdio.h>
#include "defs.h"
PRIVATE int calls = 0, spare;
PRIVATE int square(int x) { calls++; return x * x; }
API int cube(int x) { return x * square(x); }
PRIVATE int sum_squares(int n) {
  int s = 0;
  #pragma approx loop_perforate
  for (int i = 0; i < n; i++) s += square(i) + cube(i);
  return s;
}
PRIVATE void bump(int by) { calls += by; }
int other(void);
int main(void) {
  int a = sum_squares(5), b = square(3), c = cube(2);
  bump(100);
  printf("%d %d %d calls=%d %d\n", a, b, c, calls, other());
  return 0;
}
""",
    "q.c": """#include "defs.h"
PRIVATE int calls = 7;
PRIVATE int square(int x) { return x + calls; }
API int twice(int x) {
  int s = 0;
  #pragma approx loop_perforate
  for (int i = 0; i < 2; i++) s += x;
  return s;
}
int other(void) { calls++; return twice(square(1)); }
""",
}


@pytest.mark.parametrize("mode", [[], [MLIR_ALL]], ids=["annotated", "all"])
def test_static_from_a_macro(mode: list[str], tmp_path: Path):
    write_sources(tmp_path, STATIC_MACROS)
    approxcc_ok("build", "p.c", "q.c", *mode, "-o", "approx", cwd=tmp_path)
    assert output_of(tmp_path / "approx") == "130 9 8 calls=112 18\n"


# Latin-1 in a comment, in strings (one in a `for`, whose tokens the frontend reads) and in
# a variable both sides use: gcc takes the bytes as they are
LATIN1 = b"""#include <stdio.h>
/* caf\xe9: a Latin-1 comment */
static const char *greeting = "h\xe9llo";
static int helper(int x) { return x + greeting[1]; } /* \xff */
static int count(void) {
  int n = 0;
  for (const char *p = "\xe0\xe9"; *p; p++) n += (unsigned char)*p;
  return n;
}
int main(void) {
  int x = 0;
  #pragma approx loop_perforate
  for (int i = 0; i < 4; i++) x += helper(i);
  printf("%d %s %d\\n", x, greeting, count());
  return 0;
}
"""


@pytest.mark.parametrize("mode", [[], [MLIR_ALL]], ids=["annotated", "all"])
def test_source_bytes_that_are_not_utf8(mode: list[str], tmp_path: Path):
    (tmp_path / "p.c").write_bytes(LATIN1)
    built = approxcc_ok("build", "p.c", *mode, "-o", "approx", cwd=tmp_path)
    assert built.stderr == ""
    cc("-O2", "p.c", "-o", "ref", cwd=tmp_path)
    got, want = (subprocess.run([tmp_path / exe], capture_output=True, check=True).stdout
                 for exe in ("approx", "ref"))
    assert got == want == b"-86 h\xe9llo 457\n"


# -- C++ ----------------------------------------------------------------------------------

CXX = r"""#include <cstdio>
namespace geo {
static int scale = 3;
int area(int w, int h) { return w * h * scale; }
static int twice(int x) { return 2 * x; }
}
extern "C" {
int cadd(int a, int b) { return a + b; }
}
const int limits[3] = {1, 2, 3};
static void bump(int &x, const int &by) { x += by; }
struct Acc { int total = 0; void add(int v) { total += v; } };
template <class T> T twice_of(T v) { return v + v; }

int sum(int n) {
  int s = 0;
  #pragma approx loop_perforate
  for (int i = 0; i < n; i++) s += geo::area(i, 2) + limits[i % 3] + cadd(i, 1);
  return s;
}

int main() {
  int v = 4;
  bump(v, 2);
  Acc acc;
  acc.add(sum(10));
  std::printf("%d %d %d %d %.1f\n", v, acc.total, cadd(1, 2), geo::twice(21),
              twice_of(1.25));
  return 0;
}
"""


def test_cplusplus_program(tmp_path: Path):
    got = same_as_reference(tmp_path, {"p.cpp": CXX}, compiler="c++")
    assert got == "6 344 3 42 2.5\n"


def test_cplusplus_symbols_are_mangled(tmp_path: Path):
    (tmp_path / "p.cpp").write_text(CXX)
    mlir = run_approxcc(["build", "p.cpp", "-S", "--emit=approx", "-o", "-"],
                        cwd=tmp_path).stdout
    assert "func.func @_Z3sumi(" in mlir and "func.call @_ZN3geo4areaEii(" in mlir
    assert "func.func @cadd(" in mlir
    jobs = run_approxcc(["build", "p.cpp", "-o", "p", "-###"], cwd=tmp_path).stderr.splitlines()
    assert [Path(j.split()[0]).name for j in jobs[-2:]] == ["c++", "c++"]


@pytest.mark.parametrize("code,needle,what", [
    ("struct A {\n  int f(int n) {\n    int s = 0;\n    // @approx loop_perforate\n"
     "    for (int i = 0; i < n; i++) s += i;\n    return s;\n  }\n};\n", "A {", "a C++ class"),
    ("template <class T> T f(T n) {\n  T s = 0;\n  // @approx loop_perforate\n"
     "  for (int i = 0; i < n; i++) s += i;\n  return s;\n}\n", "f(T", "a function template"),
    ("struct V {\n  int n;\n  int size() const { return n; }\n};\nint f(const V &v) {\n"
     "  int s = 0;\n  int n = v.size();\n  // @approx loop_perforate\n"
     "  for (int i = 0; i < n; i++) s += i;\n  return s;\n}\n", "v.size()",
     "a call to the C++ member function 'size'"),
], ids=["method", "template", "member-call"])
def test_cplusplus_annotation_outside_c_style_functions(code: str, needle: str, what: str,
                                                        tmp_path: Path):
    (tmp_path / "t.cpp").write_text(code)
    done = run_approxcc(["build", "t.cpp", "-c", "-o", "t.o"], cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith(f"t.cpp:{where(code, needle)}: error: {what} {NOT_YET}\n"), \
        done.stderr


REFERENCES = r"""#include <cstdio>
namespace geo {
int scale = 3;
void bump(int &x, double &acc, const double &w) { x += scale; acc += w * x; }
}
extern "C" double kernel(int n) {
  double acc = 0.0;
  int v = 1;
  int &alias = v;
  #pragma approx loop_perforate knob(k)
  for (int i = 0; i < n; i++)
    geo::bump(alias, acc, 0.5);
  return acc + v;
}
int main() {
  std::printf("%.2f\n", kernel(10));
  return 0;
}
"""


def test_cplusplus_references_and_namespace_globals_go_through_mlir(tmp_path: Path):
    assert same_as_reference(tmp_path, {"r.cpp": REFERENCES}, compiler="c++") == "118.50\n"
    mlir = run_approxcc(["build", "r.cpp", "-S", "--emit=approx", "-o", "-"],
                        cwd=tmp_path).stdout
    # bump takes its three references as addresses; the temporary 0.5 gets a slot
    assert "func.func @_ZN3geo4bumpERiRdRKd(%0: !llvm.ptr, %1: !llvm.ptr, %2: !llvm.ptr)" in mlir


# A function has one address in C, whichever half of the split takes it: an annotated
# function's `&helper` (MLIR used to make a private copy of the static callee) and the
# remainder's `&sq` of a static function MLIR defines (the remainder's forwarding body).
ONE_ADDRESS = r"""#include <stdio.h>
typedef int (*fn)(int);
static int helper(int x) { return x * 3; }
// @approx func_substitute variants(sq)
static int sq(int x) { return x * x; }
// @approx func_substitute variants(pick)
static fn pick(int which) { return which ? sq : helper; }
int main(void) {
  fn a = pick(0), b = pick(1);
  printf("%d %d %d %d\n", a == helper, b == sq, a(2), b(3));
  return 0;
}
"""


def test_a_function_has_one_address_across_the_split(tmp_path: Path):
    assert assert_same_as_cc_by_default(ONE_ADDRESS, tmp_path) == "1 1 6 9\n"


# A header's `static` state, used by an annotated function and by code the system compiler
# builds, is one object as in cc's build: it had a private MLIR copy (the counter the annotated
# loop ticked was not the one main printed); so are a header function's `static` locals and
# its address (MLIR calls the remainder's definition instead of a copy), and a header's
# `static` the module cannot define as written (an alignment, a union's initialiser: it was an
# error)
HEADER_STATE = {
    "state.h": """static int counter;
static int table[4] = {1, 2, 3, 4};
static const int weights[4] = {5, 6, 7, 8};
static inline void tick(int k) { counter += k; table[k & 3] += weights[k & 3]; }
static inline int next_id(void) { static int id; return ++id; }
static inline int twice(int x) { return 2 * x; }
static const int lut[4] __attribute__((aligned(64))) = {1, 2, 3, 4};
static union { int i; float f; } bits = {.f = 1.5f};
""",
    "m.c": """#include <stdint.h>
#include <stdio.h>
#include "state.h"
int (*twice_in_mlir)(int);
int work(int n) {
  int s = 0;
  #pragma approx loop_perforate
  for (int i = 0; i < n; i++) { tick(i); s += counter + next_id() + lut[i & 3]; }
  twice_in_mlir = twice;
  bits.i += (int)((uintptr_t)lut % 64);
  return s;
}
int main(void) {
  int s = work(5);
  tick(1);
  int id = next_id();
  printf("%d %d %d %d %d %g\\n", s, counter, table[1], id, twice_in_mlir == twice, bits.f);
  return 0;
}
""",
}


@pytest.mark.parametrize("build", [assert_same_as_cc_by_default, assert_same_as_cc],
                         ids=["default", "mlir-all"])
def test_a_headers_static_state_is_one_object(build, tmp_path: Path):
    assert build(HEADER_STATE, tmp_path) == "46 11 14 6 1 1.5\n"


# What a declaration says about its object besides its type, as cc honours it: thread-local
# storage (`__thread`, `_Thread_local`, a static local too: one object per thread; MLIR made
# them plain globals), asm labels (glibc names `sscanf` `__isoc99_sscanf`; MLIR called the
# names as written), alignment, sections and weak definitions (the system compiler defines
# such a global as written; a local's declared alignment is its stack slot's)
STORAGE = r"""#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
__thread int tls = 5;
static _Thread_local int tls2;
int buf[4] __attribute__((aligned(64)));
static char sbuf[3] __attribute__((aligned(32))) = {1, 2, 3};
int weakv __attribute__((weak)) = 3;
int table[2] __attribute__((section("approx_table"), used)) = {4, 5};
extern int table_start[] __asm__("__start_approx_table");
int real_one(void) { return 42; }
int alias_decl(void) __asm__("real_one");
extern int counter_x __asm__("real_counter");
int real_counter = 7;
static int per_thread(void) { static __thread int calls; return ++calls; }
static void *worker(void *p) {
  tls += 10; tls2 = 7; per_thread();
  *(int *)p = tls + tls2 + per_thread();
  return 0;
}
static int aligned_locals(int k) {
  int a[3] __attribute__((aligned(64))) = {k, 2, 3};
  char c __attribute__((aligned(32))) = 1;
  double d __attribute__((aligned)) = 2;
  return (int)((uintptr_t)a % 64 + (uintptr_t)&c % 32 + (uintptr_t)&d % 16) + a[0] + c;
}
int main(void) {
  int r = 0;
  pthread_t t;
  pthread_create(&t, 0, worker, &r);
  pthread_join(t, 0);
  float f = 0;
  char s[4] = "";
  int n = sscanf("0x1p3 ab", "%a %2s", &f, s);
  printf("%d %d %d %d %d\n", r, tls, tls2, per_thread(), aligned_locals(5));
  printf("%d %d %d %d %d\n", (int)((uintptr_t)buf % 64), (int)((uintptr_t)sbuf % 32), weakv,
         table_start[1], alias_decl() + counter_x);
  printf("%d %g %s\n", n, f, s);
  return 0;
}
"""


def test_storage_and_names_a_declaration_gives(tmp_path: Path):
    flags = ("-pthread", "-save-temps")
    assert assert_same_as_cc(STORAGE, tmp_path, *flags) == "24 5 0 1 6\n0 0 3 5 49\n2 8 ab\n"
    emitted = (tmp_path / "p.approx.mlir").read_text()
    assert all(re.search(rf"func.func (private )?@{name}\(", emitted)
               for name in ("per_thread", "worker", "aligned_locals", "main")), emitted
    ll = (tmp_path / "p.ll").read_text()
    assert "call i32 (ptr, ptr, ...) @__isoc99_sscanf(" in ll
    assert re.search(r"@per_thread.calls = internal thread_local global i32", ll), ll
    assert re.search(r"@tls = external thread_local global i32", ll), ll


# Attributes the module cannot honour keep their function with the system compiler, as they
# must: a local's `cleanup(f)` (its call at scope exit was dropped: `cleaned` stayed 0), a
# function's `section`, `weak`, `constructor`, or one an `alias` names (it was an MLIR
# definition the alias could not reach: cc failed)
ATTRIBUTES = r"""#include <stdio.h>
static int cleaned, inited;
static void done(int *p) { cleaned += *p; }
static int scoped(int k) {
  { int x __attribute__((cleanup(done))) = k; if (k > 2) return 1; }
  return 0;
}
__attribute__((constructor)) static void init(void) { inited = 42; }
__attribute__((section("approx_text"))) int in_section(int x) { return x + 1; }
int weak_one(void) __attribute__((weak));
int weak_one(void) { return 5; }
int aliased(void) __attribute__((alias("weak_one")));
int main(void) {
  int s = scoped(1) + scoped(5);
  printf("%d %d %d %d %d %d\n", s, cleaned, inited, in_section(1), weak_one(), aliased());
  return 0;
}
"""


def test_attributes_the_module_cannot_honour(tmp_path: Path):
    assert assert_same_as_cc(ATTRIBUTES, tmp_path, keep_temps=True) == "1 6 42 2 5 5\n"
    emitted = (tmp_path / "p.approx.mlir").read_text()
    assert "func.func @main(" in emitted and not re.search(
        r"func.func (private )?@(scoped|init|in_section|weak_one)\(%", emitted), emitted
    symbols = subprocess.run(["nm", tmp_path / "approx"], capture_output=True,
                             text=True).stdout
    assert re.search(r" W weak_one$", symbols, re.MULTILINE), symbols
    annotated = ATTRIBUTES.replace("  { int x", "  #pragma approx task_skipping\n  { int x")
    assert diagnose(annotated, tmp_path).startswith(
        f"t.c:{where(annotated, 'cleanup(done')}: error: the attribute 'cleanup' of a "
        f"local {NOT_YET}")


# A weak reference (`extern void hook(int) __attribute__((weak))`) may stay undefined, its
# address null: the module's declarations are `extern_weak` (a plain reference failed to link
# where cc's program runs); defined in another file, the call reaches it
WEAK_REFERENCES = {
    "w.c": """#include <stdio.h>
extern void optional_hook(int) __attribute__((weak));
extern int optional_var __attribute__((weak));
int main(void) {
  int s = 0;
  if (optional_hook) optional_hook(1); else s += 1;
  if (&optional_var) s += optional_var; else s += 10;
  printf("%d\\n", s);
  return 0;
}
""",
    "hooks.c": """#include <stdio.h>
void optional_hook(int k) { printf("hook %d\\n", k); }
int optional_var = 5;
""",
}


def test_weak_references(tmp_path: Path):
    (tmp_path / "alone").mkdir()
    assert assert_same_as_cc({"w.c": WEAK_REFERENCES["w.c"]}, tmp_path / "alone") == "11\n"
    assert assert_same_as_cc(WEAK_REFERENCES, tmp_path) == "hook 1\n5\n"
