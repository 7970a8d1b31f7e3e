"""The approx dialect: make_knob, printing/parsing round trip, upstream acceptance."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, ModuleOp, f32, i64
from xdsl.ir import Block

from approxcc.diagnostics import CompileError
from approxcc.dialect import KnobOp, YieldOp, make_knob, verify_knobs
from approxcc.driver.opt import make_context, parse_module, print_module
from approxcc.lowering.registry import default_pipeline, parse_pipeline

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
