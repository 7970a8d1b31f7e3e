"""func_substitute, task_skipping, memoize and the safety contract, run for real: each knob is
lowered by the approx passes, then by upstream MLIR 22 and LLVM to an object linked with a
small C main, and the program's output shows the transform doing what annotations.md says."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from xdsl.printer import Printer

from approxcc.diagnostics import CompileError
from approxcc.driver.opt import make_context, parse_module
from approxcc.driver.toolchain import c_compiler, tool
from approxcc.lowering.core_to_llvm import MLIR_TO_LLVM_PIPELINE
from approxcc.lowering.registry import DEFAULT_PIPELINE, parse_pipeline

STATIC = "approx-emit-management,approx-transform,approx-finalize"


def _run(tmp_path: Path, mlir: str, main_c: str, pipeline: str = DEFAULT_PIPELINE) -> list[str]:
    """Lowers `mlir` with the approx `pipeline`, builds it with `main_c`, returns the output
    lines of running it."""
    ctx = make_context()
    module = parse_module(ctx, mlir, "t.mlir")
    for p in parse_pipeline(pipeline):
        p.apply(ctx, module)
    with (tmp_path / "t.mlir").open("w") as out:
        Printer(stream=out, print_generic_format=True).print_op(module)
    assert "approx." not in (tmp_path / "t.mlir").read_text()
    (tmp_path / "main.c").write_text("#include <stdio.h>\n" + main_c)
    steps = [
        [tool("mlir-opt"), f"--pass-pipeline={MLIR_TO_LLVM_PIPELINE}", "t.mlir", "-o",
         "llvm.mlir"],
        [tool("mlir-translate"), "--mlir-to-llvmir", "llvm.mlir", "-o", "t.ll"],
        [tool("llc"), "-filetype=obj", "-relocation-model=pic", "t.ll", "-o", "t.o"],
        [c_compiler(), "main.c", "t.o", "-o", "prog"],
        ["./prog"],
    ]
    for step in steps:
        done = subprocess.run(step, cwd=tmp_path, capture_output=True, text=True, check=False)
        assert done.returncode == 0, f"{step[0]}: {done.stderr}"
    return done.stdout.split()


def _knob(name: str, transform: str, params: str, operands: str, types: str, body: str,
          results: str = "") -> str:
    """An `approx.knob` in generic form; `body` starts with its block's argument list."""
    return (f'"approx.knob"({operands}) <{{id = 0 : i64, name = "{name}", '
            f'transform_types = ["{transform}"], params = {{{params}}}, loc = "t.c:1:1"}}> '
            f'({{\n{body}\n}}) : ({types}) -> ({results})')


# --- func_substitute ---------------------------------------------------------------------

CALL_SITE = """
func.func private @f(i32) -> i32
func.func private @f_fast(i32) -> i32
func.func private @f_coarse(i32) -> i32
func.func @k(%x: i32, %s: i32) -> i32 {{
  %r = {knob}
  func.return %r : i32
}}
"""
CALL_BODY = """^bb0(%st: i32, %a: i32):
    %y = func.call @f(%a) : (i32) -> i32
    %z = arith.addi %y, %a : i32
    "approx.yield"(%z) : (i32) -> ()"""
VARIANTS_C = """
int f(int x) { return x + 1; }
int f_fast(int x) { return x + 100; }
int f_coarse(int x) { return x + 1000; }
int k(int x, int s);
"""


@pytest.mark.parametrize(("value", "expected"), [(0, "3"), (1, "102"), (2, "1002")])
def test_func_substitute_call_static(tmp_path: Path, value: int, expected: str) -> None:
    params = (f'target = "call", callee = @f, variants = [@f_fast, @f_coarse], '
              f'values = [0, 1, 2], value = {value}')
    knob = _knob("sub", "func_substitute", params, "%s, %x", "i32, i32", CALL_BODY, "i32")
    main = VARIANTS_C + 'int main(void) { printf("%d\\n", k(1, 0)); return 0; }\n'
    assert _run(tmp_path, CALL_SITE.format(knob=knob), main, STATIC) == [expected]


def test_func_substitute_call_dynamic(tmp_path: Path) -> None:
    # state < 10 → exact, < 20 → f_coarse, else → f_fast
    params = ('target = "call", callee = @f, variants = [@f_fast, @f_coarse], '
              'values = [0, 1, 2], dynamic, thresholds = 2, decision_thresholds = [10, 20], '
              'decisions = [0, 2, 1]')
    knob = _knob("sub", "func_substitute", params, "%s, %x", "i32, i32", CALL_BODY, "i32")
    main = VARIANTS_C + ('int main(void) { int s[] = {0, 9, 10, 19, 20, 99};\n'
                         '  for (int i = 0; i < 6; i++) printf("%d\\n", k(1, s[i]));\n'
                         '  return 0; }\n')
    assert _run(tmp_path, CALL_SITE.format(knob=knob), main) == [
        "3", "3", "1002", "1002", "102", "102"]


FUNCTION = """
func.func private @g_fast(!llvm.ptr, i32, i32) -> i32
func.func @g(%p: !llvm.ptr, %n: i32, %s: i32) -> i32 {{
  %r = {knob}
  func.return %r : i32
}}
"""
# g(p, n, s) = *p + n, the exact body; the knob does not use the state argument otherwise.
FUNCTION_BODY = """^bb0(%st: i32, %q: !llvm.ptr, %m: i32):
    %v = llvm.load %q : !llvm.ptr -> i32
    %t = arith.addi %v, %m : i32
    "approx.yield"(%t) : (i32) -> ()"""
FUNCTION_C = """
int g_fast(int *p, int n, int s) { return -n - s; }
int g(int *p, int n, int s);
int main(void) { int x = 5; int s[] = {0, 50, 70};
  for (int i = 0; i < 3; i++) printf("%d\\n", g(&x, 2, s[i]));
  return 0; }
"""


def test_func_substitute_function_static(tmp_path: Path) -> None:
    params = 'target = "function", variants = [@g_fast], value = 1'
    knob = _knob("g", "func_substitute", params, "%s, %p, %n", "i32, !llvm.ptr, i32",
                 FUNCTION_BODY, "i32")
    assert _run(tmp_path, FUNCTION.format(knob=knob), FUNCTION_C, STATIC) == [
        "-2", "-52", "-72"]


def test_func_substitute_function_dynamic(tmp_path: Path) -> None:
    params = ('target = "function", variants = [@g_fast], dynamic, thresholds = 1, '
              'decision_thresholds = [60], decisions = [0, 1]')
    knob = _knob("g", "func_substitute", params, "%s, %p, %n", "i32, !llvm.ptr, i32",
                 FUNCTION_BODY, "i32")
    assert _run(tmp_path, FUNCTION.format(knob=knob), FUNCTION_C) == ["7", "7", "-72"]


# --- task_skipping -----------------------------------------------------------------------

SKIP = """
func.func @t(%p: !llvm.ptr, %s: f32) {{
  {knob}
  func.return
}}
"""
SKIP_BODY = """^bb0(%st: f32, %q: !llvm.ptr):
    %c7 = arith.constant 7 : i32
    llvm.store %c7, %q : i32, !llvm.ptr"""
SKIP_C = """
void t(int *p, float s);
int main(void) { float s[] = {0.0f, 0.4f, 0.6f};
  for (int i = 0; i < 3; i++) { int x = -1; t(&x, s[i]); printf("%d\\n", x); }
  return 0; }
"""


@pytest.mark.parametrize(("value", "expected"), [(0, ["7"] * 3), (1, ["-1"] * 3)])
def test_task_skipping_static(tmp_path: Path, value: int, expected: list[str]) -> None:
    knob = _knob("skip", "task_skipping", f'target = "statement", value = {value}', "%s, %p",
                 'f32, !llvm.ptr', SKIP_BODY + '\n    "approx.yield"() : () -> ()')
    assert _run(tmp_path, SKIP.format(knob=knob), SKIP_C, STATIC) == expected


def test_task_skipping_dynamic(tmp_path: Path) -> None:
    # a float state: below 0.5 run the statement, else skip it
    params = ('target = "statement", dynamic, thresholds = 1, decision_thresholds = [0.5], '
              'decisions = [0, 1]')
    knob = _knob("skip", "task_skipping", params, "%s, %p", "f32, !llvm.ptr",
                 SKIP_BODY + '\n    "approx.yield"() : () -> ()')
    assert _run(tmp_path, SKIP.format(knob=knob), SKIP_C) == ["7", "7", "-1"]


# --- memoize -----------------------------------------------------------------------------

MEMO_C = """
static int calls;
int expensive(int x) { calls++; return x * x; }
int m(int x, int s);
int main(void) {
  for (int i = 1; i <= 7; i++) printf("%d\\n", m(i, i < 4 ? 0 : 50));
  printf("calls=%d\\n", calls); return 0; }
"""
MEMO = """
func.func private @expensive(i32) -> i32
func.func @m(%x: i32, %s: i32) -> i32 {{
  %r = {knob}
  func.return %r : i32
}}
"""
MEMO_CALL_BODY = """^bb0(%st: i32, %a: i32):
    %y = func.call @expensive(%a) : (i32) -> i32
    "approx.yield"(%y) : (i32) -> ()"""


@pytest.mark.parametrize(("value", "expected"), [
    (1, ["1", "4", "9", "16", "25", "36", "49", "calls=7"]),
    (3, ["1", "1", "1", "16", "16", "16", "49", "calls=3"]),
])
def test_memoize_call_static(tmp_path: Path, value: int, expected: list[str]) -> None:
    knob = _knob("memo", "memoize", f'target = "call", callee = @expensive, value = {value}',
                 "%s, %x", "i32, i32", MEMO_CALL_BODY, "i32")
    assert _run(tmp_path, MEMO.format(knob=knob), MEMO_C, STATIC) == expected


def test_memoize_function_dynamic(tmp_path: Path) -> None:
    # the whole body of m is memoized: exact while the state is below 10, then every 2nd call
    params = ('target = "function", dynamic, thresholds = 1, decision_thresholds = [10], '
              'decisions = [1, 2]')
    knob = _knob("memo", "memoize", params, "%s, %x", "i32, i32", MEMO_CALL_BODY, "i32")
    # calls 0..2 recompute (v = 1); call 3 (count 3, v = 2) reuses 9, call 4 recomputes 25, ...
    assert _run(tmp_path, MEMO.format(knob=knob), MEMO_C) == [
        "1", "4", "9", "9", "25", "25", "49", "calls=5"]


# --- approx.try: check / recover ---------------------------------------------------------

TRY = """
func.func private @valid(!llvm.ptr) -> i1
func.func private @fallback(!llvm.ptr)
func.func @t(%p: !llvm.ptr, %s: f32) {{
  {knob}
  func.return
}}
"""
TRY_C = """
static int checks;
_Bool valid(int *p) { checks++; return *p >= 0; }
void fallback(int *p) { *p = 1000; }
void t(int *p, float s);
int main(void) { int x = -1; t(&x, 0.0f); printf("%d checks=%d\\n", x, checks); return 0; }
"""


FALLBACK = 'func.call @fallback(%q) : (!llvm.ptr) -> ()\n"approx.yield"() : () -> ()'


@pytest.mark.parametrize(("recover", "recovery", "value", "expected"), [
    ('"exact"', "", 1, ["7", "checks=1"]),  # skipped, rejected, re-run exactly
    ("@fallback", FALLBACK, 1, ["1000", "checks=1"]),
    ("@fallback", FALLBACK, 0, ["7", "checks=0"]),  # an exact run is not checked
])
def test_try_recovers_a_rejected_result(tmp_path: Path, recover: str, recovery: str,
                                        value: int, expected: list[str]) -> None:
    knob = _knob("skip", "task_skipping", f'target = "statement", value = {value}', "%s, %p",
                 "f32, !llvm.ptr", _try_body(recover, recovery))
    assert _run(tmp_path, TRY.format(knob=knob), TRY_C) == expected


def test_try_checks_only_approximate_runs_of_a_dynamic_knob(tmp_path: Path) -> None:
    params = ('target = "statement", dynamic, thresholds = 1, decision_thresholds = [0.5], '
              'decisions = [0, 1]')
    knob = _knob("skip", "task_skipping", params, "%s, %p", "f32, !llvm.ptr",
                 _try_body("@fallback", FALLBACK))
    main = TRY_C.replace("t(&x, 0.0f);", "t(&x, 0.0f); printf(\"%d \", x); x = -1; t(&x, 0.9f);")
    assert _run(tmp_path, TRY.format(knob=knob), main) == ["7", "1000", "checks=1"]


def _try_body(recover: str, recovery: str) -> str:
    return (SKIP_BODY + f'\n    "approx.try"() <{{recover = {recover}}}> ({{\n'
            '      %ok = func.call @valid(%q) : (!llvm.ptr) -> i1\n'
            '      "approx.yield"(%ok) : (i1) -> ()\n'
            f'    }}, {{\n{recovery}\n    }}) : () -> ()\n'
            '    "approx.yield"() : () -> ()')


def test_bind_runtime_rejects_a_mistyped_variant(tmp_path: Path) -> None:
    mlir = CALL_SITE.replace("@f_coarse(i32) -> i32", "@f_coarse(i64) -> i32").format(
        knob=_knob("sub", "func_substitute", 'target = "call", callee = @f, '
                   "variants = [@f_fast, @f_coarse]", "%s, %x", "i32, i32", CALL_BODY, "i32"))
    with pytest.raises(CompileError) as err:
        _run(tmp_path, mlir, VARIANTS_C)
    assert str(err.value.diagnostic.loc) == "t.c:1:1"
    assert "variant 'f_coarse' has type (i64) -> i32" in err.value.diagnostic.message
