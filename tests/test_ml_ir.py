"""The ML half in the approx dialect: approx knobs around StableHLO, the ML passes, a
configuration selecting variants, and IREE's failures as one-line diagnostics. (Every
tiny_decoder variant compiled for CUDA: tests/test_ml.py, beside its CPU build.)"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import run_approxcc
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from approxcc.diagnostics import CompileError, DiagnosticEngine
from approxcc.dialect import KnobOp
from approxcc.ml.build import build_model
from approxcc.ml.ir import approx_module, parse_ir, print_ir, verify
from approxcc.ml.iree import multiplies_natively
from approxcc.ml.passes import ML_PASSES, variants_of
from approxcc.ml.program import MLProgram, load_program
from approxcc.ml.runtime import load

ROOT = Path(__file__).resolve().parents[1]
DECODER = ROOT / "examples" / "ml" / "tiny_decoder.py"


@pytest.fixture(scope="module")
def program() -> MLProgram:
    """tiny_decoder, imported once: its variants' exports are cached per function."""
    return load_program(DECODER)


@pytest.fixture(scope="module")
def emitted(program: MLProgram) -> ModuleOp:
    """Its approx IR as emitted (read, not changed, by the tests that take it)."""
    return approx_module(program)


def test_emitted_ir_has_approx_knobs_and_round_trips(emitted: ModuleOp) -> None:
    text = print_ir(emitted)
    # one knob per decorator, nested in decorator order, innermost the exact StableHLO
    assert re.search(r'approx\.knob "llm" id 0 \[func_substitute\] \(%\d+, .*params \{target '
                     r'= "function", values = \[0 : i64, 1 : i64\], variants = \[@decode_step'
                     r'\.llm\.forward\], dynamic, thresholds = 1 : i64, range = \[0 : i64, 100 '
                     r': i64\]\} loc ".*tiny_decoder.py:\d+:2"', text)
    assert text.index('approx.knob "llm_precision"') < text.index('approx.knob "llm_quant"') \
        < text.index("func.call @decode_step.exact(")
    assert '%11: f32 {approx.state = "retrieval_score"}' in text       # the dynamic state
    assert '"stablehlo.dot_general"' in text
    again = parse_ir(text, "<emitted>")
    verify(again)
    assert print_ir(again) == text


def test_each_ml_pass_adds_its_variants(program: MLProgram) -> None:
    module = approx_module(program)
    counts = {}
    for name, cls in ML_PASSES.items():
        cls().apply(Context(), module)
        counts[name] = [f.sym_name.data for f in variants_of(module, "decode_step")]
    assert counts["approx-ml-func-substitute"] == ["decode_step.exact", "decode_step.llm.forward"]
    assert counts["approx-ml-task-skipping"] == counts["approx-ml-func-substitute"]
    assert len(counts["approx-ml-quantize"]) == 4
    assert set(counts["approx-ml-precision"]) == {
        "decode_step.exact", "decode_step.llm.forward", "decode_step.llm_quant.w8a8",
        "decode_step.llm.forward.llm_quant.w8a8", "decode_step.llm_precision.bf16",
        "decode_step.llm.forward.llm_precision.bf16",
        "decode_step.llm_precision.bf16.llm_quant.w8a8",
        "decode_step.llm.forward.llm_precision.bf16.llm_quant.w8a8"}
    knobs = {k.knob_name.data: k for k in module.walk() if isinstance(k, KnobOp)}
    listed = [a.root_reference.data for a in knobs["llm_quant"].param("variants")]
    assert sorted(listed) == sorted(n for n in counts["approx-ml-precision"] if "w8a8" in n)
    text = print_ir(module)
    # w8a8: int8 x int8 dot_general accumulating in int32
    assert re.search(r'"stablehlo.dot_general".*\(tensor<16x32xi8>, tensor<32x96xi8>\) -> '
                     r'tensor<16x96xi32>', text)
    # bf16: where the CPU's ukernels multiply bf16, weights stay plain bf16 matrices; else a
    # weight of >= 32 outputs is stored as tiles of 32 rows of bf16 bits (int16), widened
    # inside the product. Either way a matmul of bf16 accumulates in f32 (the form IREE's
    # CUDA pipeline distributes)
    if multiplies_natively("bf16"):
        assert re.search(r'"stablehlo.dot_general".*\(tensor<16x32xbf16>, tensor<32x96xbf16>\) '
                         r'-> tensor<16x96xf32>', text)
    else:
        assert "tensor<3x32x32xi16>" in text                 # the 32x96 weight: 3 tiles
    assert re.search(r'"stablehlo.dot_general".*\(tensor<16x32xbf16>, tensor<32x16xbf16>\) '
                     r'-> tensor<16x16xf32>', text)


def test_hex_float_constants_survive_the_round_trip() -> None:
    text = ('"builtin.module"() ({\n  %0 = "stablehlo.constant"() <{value = dense<0xFF800000> '
            ': tensor<f32>}> : () -> tensor<f32>\n}) : () -> ()')
    assert "dense<0xFF800000> : tensor<f32>" in print_ir(parse_ir(text, "<t>"))


FAILING = """
    import jax.numpy as jnp
    import numpy as np
    from approxcc import approx

    def solve(params, x):                      # a LAPACK custom call IREE cannot lower
        return jnp.linalg.cholesky(x @ x.T + 4 * jnp.eye(4)) @ params["w"]

    @approx.knob("alt", transform="func_substitute", variants=[solve])
    def affine(params, x):
        return x @ params["w"]

    APPROX_EXAMPLE_ARGS = {"affine": ({"w": np.ones((4, 4), np.float32)},
                                      np.ones((4, 4), np.float32))}
    """


def test_iree_failure_is_one_diagnostic_and_keep_going_records_it(tmp_path: Path) -> None:
    model = tmp_path / "failing.py"
    model.write_text(textwrap.dedent(FAILING))
    with pytest.raises(CompileError) as info:   # IREE alone: XLA would run it (below)
        build_model(model, tmp_path / "out", ["cpu"], cpu_backend="iree")
    message = info.value.diagnostic.render(show_source=False)
    assert message == (f"{model}:9:2: error: variant <alt=solve> of 'affine' for target cpu: "
                       "failed to legalize operation 'stablehlo.custom_call' that was "
                       "explicitly marked illegal")
    with DiagnosticEngine():
        manifest = build_model(model, tmp_path / "out", ["cpu"], keep_going=True,
                               cpu_backend="iree")
    entry = json.loads(manifest.path.read_text())["functions"]["affine"]
    failed = [v for v in entry["variants"] if v["choice"] == {"alt": 1}]
    assert entry["failed"] == {"cpu": [failed[0]["id"]]} and "cpu" not in failed[0]["vmfb"]
    # the rebuild into the same folder kept the exact variant's vmfb: not compiled again
    [exact] = [v for v in entry["variants"] if v["choice"] == {"alt": 0}]
    assert exact["compile_s"] == {"cpu": 0.0}
    prog = load(manifest.path)
    assert prog.affine(np.ones((4, 4), np.float32)).tolist() == [[4.0] * 4] * 4
    prog.configure({"approxcc": "1", "knobs": {"alt": {"value": 1}}})
    with pytest.raises(LookupError, match="was not built for target cpu"):
        prog.affine(np.ones((4, 4), np.float32))


def test_a_cpu_variant_iree_cannot_compile_runs_on_xla(tmp_path: Path) -> None:
    """The LAPACK custom call IREE rejects: XLA runs that variant (a warning at its knob),
    checked against jax like any other, and the runtime picks it."""
    (tmp_path / "failing.py").write_text(textwrap.dedent(FAILING))
    done = run_approxcc(["failing.py", "-o", "out"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "(IREE cannot compile it for the CPU; XLA runs it)" in done.stderr
    entry = json.loads((tmp_path / "out" / "manifest.json").read_text())["functions"]["affine"]
    [solve] = [v for v in entry["variants"] if v["choice"] == {"alt": 1}]
    assert "cpu" not in entry["failed"] and solve["backend"] == {"cpu": "xla"}
    assert not solve["accuracy"]["broken"]
    prog = load(tmp_path / "out", config={"approxcc": "1", "knobs": {"alt": {"value": 1}}})
    x = np.ones((4, 4), np.float32)
    assert prog.functions["affine"].backend(solve) == "xla"
    np.testing.assert_allclose(prog.affine(x), np.linalg.cholesky(x @ x.T + 4 * np.eye(4))
                               @ np.ones((4, 4)), rtol=1e-5)


def test_a_gpu_variant_iree_cannot_compile_is_skipped_with_a_warning(tmp_path: Path) -> None:
    """For a GPU target a variant IREE rejects is a warning at its knob, the build goes on
    and succeeds with the variants that compile (no --keep-going needed)."""
    (tmp_path / "failing.py").write_text(textwrap.dedent(FAILING))
    done = run_approxcc(["failing.py", "-o", "out", "--target=cuda"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith(f"{tmp_path / 'failing.py'}:9:2: warning: variant "
                                  "<alt=solve> of 'affine' for target cuda: failed to "
                                  "legalize operation 'stablehlo.custom_call'"), done.stderr
    assert "(not built for cuda; the variants that compile are)" in done.stderr
    entry = json.loads((tmp_path / "out" / "manifest.json").read_text())["functions"]["affine"]
    [exact] = [v for v in entry["variants"] if v["choice"] == {"alt": 0}]
    assert len(entry["failed"]["cuda"]) == 1 and "cuda" in exact["vmfb"]


def test_the_tuner_reads_ml_knobs_from_the_ir(emitted: ModuleOp) -> None:
    from approxcc.tune.space import knob_space

    space = knob_space([emitted])
    knobs = {k.name: k for k in space.knobs}
    assert list(knobs) == ["llm", "llm_precision", "llm_quant"]
    assert knobs["llm"].dynamic and knobs["llm"].thresholds == 1 and knobs["llm"].range == (0, 100)
    assert knobs["llm_precision"].values == (0, 1) and not knobs["llm_precision"].dynamic
    assert all(k.exact == 0 for k in knobs.values())


CONFIGURED = """
    import numpy as np
    from approxcc import approx

    def linear(params, x):
        return x[:, :4]

    @approx.knob("sub", transform="func_substitute", variants=[linear],
                 state=approx.state("load"), thresholds=1, range=(0, 10))
    @approx.knob("quant", transform="quantize", values=["none", "int4-g4", "w8a8"])
    @approx.knob("prec", transform="precision", values=["f32", "bf16"])
    def forward(params, x):
        return x @ params["w"]

    APPROX_EXAMPLE_ARGS = {"forward": ({"w": np.ones((8, 4), np.float32)},
                                       np.ones((2, 8), np.float32))}
    """


def test_a_configuration_selects_the_variants(tmp_path: Path) -> None:
    """The C configuration format and its pass (approx-apply-config) on ML knobs: a configured
    knob contributes its configured value only."""
    from approxcc.lowering.apply_config import ApplyConfigPass
    from approxcc.ml.ir import ml_context
    from approxcc.ml.passes import expand_all

    config = tmp_path / "c.json"
    config.write_text(json.dumps({"approxcc": "1", "knobs": {
        "quant": {"value": 2}, "sub": {"thresholds": [4], "decisions": [1, 0]}}}))
    (tmp_path / "model.py").write_text(textwrap.dedent(CONFIGURED))
    module = approx_module(load_program(tmp_path / "model.py"))
    ApplyConfigPass(str(config)).apply(ml_context(), module)
    expand_all(module)
    names = [f.sym_name.data for f in variants_of(module, "forward")]
    # sub: exact and its substitute; quant: exact and the configured w8a8, not int4;
    # prec (not configured): both of its values
    assert len(names) == 2 * 2 * 2 and not any("int4" in n for n in names)
    knobs = {k.knob_name.data: k for k in module.walk() if isinstance(k, KnobOp)}
    assert knobs["quant"].param("value").value.data == 2
    assert [d.value.data for d in knobs["sub"].param("decisions")] == [1, 0]


def test_jax_text_read_with_its_types_aliased_prints_as_it_was() -> None:
    """jax's StableHLO is read with each tensor type named once (faster in xDSL): what is
    printed back is the text it was, string literals that spell a type, a hex float
    constant (read verbatim) and a type with an encoding included."""
    text = textwrap.dedent('''\
        "builtin.module"() ({
          "func.func"() <{function_type = (tensor<?x2xf32, #stablehlo.bounds<4, ?>>, tensor<2xf32>) -> tensor<2xf32>, sym_name = "main"}> ({
          ^bb0(%b: tensor<?x2xf32, #stablehlo.bounds<4, ?>>, %a: tensor<2xf32>):
            %c = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<2xf32>}> : () -> tensor<2xf32>
            %0 = "stablehlo.custom_call"(%a) <{call_target_name = "t tensor<3xf32>", backend_config = "\\22tensor<1xi8>\\22"}> : (tensor<2xf32>) -> tensor<2xf32>
            %1 = "stablehlo.add"(%0, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
            "func.return"(%1) : (tensor<2xf32>) -> ()
          }) : () -> ()
        }) : () -> ()
        ''')  # noqa: E501 - jax's lines
    printed = print_ir(parse_ir(text, "<jax>", jax_text=True))
    assert printed == print_ir(parse_ir(text, "<jax>"))
    assert 'dense<0xFF800000> : tensor<2xf32>' in printed
    assert '"t tensor<3xf32>"' in printed and "approx_t" not in printed
