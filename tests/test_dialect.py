"""The approx dialect: make_knob, printing/parsing round trip, upstream acceptance."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, ModuleOp, f32, i64
from xdsl.ir import Block
from xdsl.printer import Printer

from approxcc.diagnostics import CompileError
from approxcc.dialect import KnobOp, YieldOp, make_knob, verify_knobs
from approxcc.driver.opt import make_context, parse_module, print_module
from approxcc.driver.toolchain import tool
from approxcc.lowering.core_to_llvm import mlir_opt_args, translate_args
from approxcc.lowering.registry import default_pipeline, parse_pipeline
from approxcc.lowering.tunable import f64_bits
from approxcc.registry import default_thresholds

MLIR_OPT = Path(sys.prefix) / "lib/python3.11/site-packages/mlir/bin/mlir-opt"


def _function_with_knob() -> tuple[ModuleOp, KnobOp]:
    """f(x, y) = knob{ (x + y) * x } built as the frontend does: a body using outer values."""
    fn = func.FuncOp("f", ((f32, f32), (f32,)))
    x, y = fn.body.block.args
    add = arith.AddfOp(x, y)
    mul = arith.MulfOp(add, x)
    body = Block([add, mul, YieldOp(mul)])
    params = DictionaryAttr({"values": ArrayAttr([IntegerAttr(0, i64), IntegerAttr(1, i64)])})
    knob = make_knob("k", 0, "task_skipping", params, body, "k.c:3:5")
    fn.body.block.add_ops([knob, func.ReturnOp(knob.res[0])])
    return ModuleOp([fn]), knob


def test_make_knob_captures_free_values_in_first_use_order() -> None:
    module, knob = _function_with_knob()
    x, y = module.body.block.first_op.body.block.args
    assert list(knob.args) == [x, y]
    block = knob.body.block
    add, mul = list(block.ops)[:2]
    assert list(add.operands) == list(block.args)
    assert mul.operands[1] is block.args[0]
    assert [r.type for r in knob.res] == [f32]
    module.verify()
    verify_knobs(module)


def test_make_knob_adds_missing_yield() -> None:
    body = Block([arith.ConstantOp(IntegerAttr(1, i64))])
    knob = make_knob("k", 1, "memoize", DictionaryAttr({}), body, None)
    assert isinstance(knob.body.block.last_op, YieldOp)
    assert not knob.args and not knob.res and knob.loc is None


def test_round_trip() -> None:
    module, _ = _function_with_knob()
    printed = print_module(module)
    reparsed = parse_module(make_context(), printed, "rt.mlir")
    assert print_module(reparsed) == printed


def test_verifier_errors_are_located_compile_errors() -> None:
    module, knob = _function_with_knob()
    knob.params = DictionaryAttr({"values": ArrayAttr([])})
    with pytest.raises(CompileError) as err:
        verify_knobs(module)
    assert str(err.value.diagnostic.loc) == "k.c:3:5"
    assert "params.values must not be empty" in err.value.diagnostic.message


PERFORATED_KERNEL = """
func.func @kernel(%out: memref<?xf32>, %n: index) {
  "approx.knob"(%out, %n) <{id = 0 : i64, name = "l", transform_types = ["loop_perforate"],
                            params = {values = [1, 2, 4], value = 2}, loc = "k.c:5:11"}> ({
  ^bb0(%o: memref<?xf32>, %t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
      %f = arith.constant 1.0 : f32
      memref.store %f, %o[%k] : memref<?xf32>
    }
    "approx.yield"() : () -> ()
  }) : (memref<?xf32>, index) -> ()
  func.return
}
"""


def test_finalized_module_is_accepted_by_upstream_mlir() -> None:
    ctx = make_context()
    module = parse_module(ctx, PERFORATED_KERNEL, "kernel.mlir")
    for p in default_pipeline():
        p.apply(ctx, module)
    printed = print_module(module)
    assert "approx." not in printed and "arith.muli" in printed
    done = subprocess.run(
        [MLIR_OPT, "--convert-scf-to-cf", "--convert-to-llvm", "--reconcile-unrealized-casts"],
        input=printed, text=True, capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "llvm.mlir.constant(2 : index)" in done.stdout  # the folded step


def test_parse_pipeline_quotes_bare_paths() -> None:
    (apply_config, finalize) = parse_pipeline("approx-apply-config{config=dir/c.json},"
                                              "approx-finalize")
    assert apply_config.config == "dir/c.json"
    assert finalize.name == "approx-finalize"


EVERY_OP = """
func.func private @fallback()
func.func @k(%s: i32, %x: f32, %n: index) -> f32 {
  %r = approx.knob "score_loop" id 0 [loop_perforate] (%s, %x, %n)
      params {target = "loop", values = [1, 2, 4], dynamic, thresholds = 2, range = [0, 100]}
      loc "k.c:5:11" : (i32, f32, index) -> f32 {
  ^bb0(%state: i32, %a: f32, %t: index):
    %v = approx.decision_tree %state [37, 80] -> [1, 2, 4] "loop_perforate" : i32
    approx.transform "loop_perforate" %v
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
    }
    approx.try recover exact {
      %ok = arith.constant true
      approx.yield %ok : i1
    } {}
    approx.yield %a : f32
  }
  approx.knob "skip" id 1 [task_skipping] (%x, %n) params {} : (f32, index) -> () {
  ^bb0(%a: f32, %d: index):
    %t0 = arith.constant 1.5 : f32
    %v = approx.decision_tree %a [%t0] -> [%d, %d] "task_skipping" : f32
    %w = approx.decision_tree %a [-0.5, 1.0e+20] -> [0, 1, 0] "task_skipping" : f32
    approx.transform "task_skipping" 1
    approx.try recover @fallback {
      %ok = arith.constant false
      approx.yield %ok : i1
    } {
      func.call @fallback() : () -> ()
      approx.yield
    }
    approx.yield
  }
  func.return %r : f32
}
"""


def _print_generic(module: ModuleOp) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=True).print_op(module)
    return f"{out.getvalue()}\n"


def test_every_op_round_trips_in_custom_and_generic_form() -> None:
    module = parse_module(make_context(), EVERY_OP, "every.mlir")
    printed = print_module(module)
    for op in ("approx.knob \"score_loop\" id 0 [loop_perforate]",
               "approx.decision_tree %state [37, 80] -> [1, 2, 4] \"loop_perforate\" : i32",
               "approx.transform \"loop_perforate\" %v", "approx.try recover exact {",
               "approx.try recover @fallback {", "approx.yield %a : f32"):
        assert op in printed
    assert print_module(parse_module(make_context(), printed, "rt.mlir")) == printed
    generic = _print_generic(module)
    assert '"approx.try"() <{recover = "exact"}> ({' in generic
    assert print_module(parse_module(make_context(), generic, "generic.mlir")) == printed


def test_default_thresholds_are_evenly_spaced_and_rounded_like_lround() -> None:
    assert default_thresholds(1, 0, 100) == [50]
    assert default_thresholds(2, 0, 100) == [33, 67]
    assert default_thresholds(3, 0, 100) == [25, 50, 75]
    assert default_thresholds(1, 0, 5) == [3]  # 2.5 rounds away from zero
    assert default_thresholds(1, -5, 0) == [-3]


TUNABLE_KERNEL = """
func.func @kernel(%out: memref<?xf32>, %n: index, %s: f32) {
  "approx.knob"(%out, %n) <{id = 0 : i64, name = "l", transform_types = ["loop_perforate"],
                            params = {values = [1, 2, 4]}, loc = "k.c:5:11"}> ({
  ^bb0(%o: memref<?xf32>, %t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
      %f = arith.constant 1.0 : f32
      memref.store %f, %o[%k] : memref<?xf32>
    }
    "approx.yield"() : () -> ()
  }) : (memref<?xf32>, index) -> ()
  approx.knob "d" id 1 [loop_perforate] (%s, %out, %n) params {values = [1, 2, 4], dynamic,
      thresholds = 2, range = [0, 10]} : (f32, memref<?xf32>, index) -> () {
  ^bb0(%state: f32, %o: memref<?xf32>, %t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
      %f = arith.constant 2.0 : f32
      memref.store %f, %o[%k] : memref<?xf32>
    }
    approx.yield
  }
  func.return
}
"""


def test_tunable_build_lowers_through_upstream_mlir_and_llvm(tmp_path: Path) -> None:
    ctx = make_context()
    module = parse_module(ctx, TUNABLE_KERNEL, "kernel.mlir")
    for p in default_pipeline(tunable=True):
        p.apply(ctx, module)
    generic = _print_generic(module)
    assert "approx." not in generic
    core, llvm_mlir, ll = tmp_path / "k.mlir", tmp_path / "k.llvm.mlir", tmp_path / "k.ll"
    core.write_text(generic)
    for args in (mlir_opt_args(tool("mlir-opt"), str(core), str(llvm_mlir)),
                 translate_args(tool("mlir-translate"), str(llvm_mlir), str(ll))):
        done = subprocess.run(args, text=True, capture_output=True, check=False)
        assert done.returncode == 0, done.stderr
    text = ll.read_text()
    # The exact configuration: l = 1; d's thresholds 10/3 -> 3, 20/3 -> 7 as f64 bits, then
    # three exact decisions.
    table = ", ".join(f"i64 {v}" for v in (1, f64_bits(3.0), f64_bits(7.0), 1, 1, 1))
    assert f"@__approx_table = internal global [6 x i64] [{table}]" in text
    assert 'c"l 0 static 1,2,4\\0Ad 1 dynamic 2 f 1,2,4\\0A\\00"' in text
    assert re.search(r'@__approx_entry_[0-9a-f]{16} = constant \{ ptr, ptr \} '
                     r'\{ ptr @__approx_manifest, ptr @__approx_table \}, '
                     r'section "approx_knobs"', text), text


def test_tunable_pipeline_takes_no_compile_time_configuration() -> None:
    assert [p.name for p in default_pipeline(tunable=True)][2] == "approx-tunable"
    with pytest.raises(CompileError, match="at run time"):
        default_pipeline("c.json", tunable=True)
