"""The JAX frontend and IREE variants: decorators, transforms, `approxcc build model.py`,
and the runtime, through the real toolchain (jax.export → iree-compile → iree.runtime)."""

from __future__ import annotations

import functools
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import jax
import numpy as np
import pytest
from conftest import run_approxcc

from approxcc import AnnotationError, approx
from approxcc.diagnostics import CompileError
from approxcc.ml.build import Manifest, build_model
from approxcc.ml.iree import multiplies_natively
from approxcc.ml.packed import pack
from approxcc.ml.program import load_program
from approxcc.ml.runtime import Program, load
from approxcc.ml.transforms import exact_value, make_variant, shared_conversions

ROOT = Path(__file__).resolve().parents[1]
DECODER = ROOT / "examples" / "ml" / "tiny_decoder.py"
GALLERY = ROOT / "examples" / "ml" / "knob_gallery.py"


@pytest.fixture(scope="session")
def decoder(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, Manifest]:
    """tiny_decoder built once, for the CPU (run here) and CUDA (compiled only)."""
    manifest = build_model(DECODER, tmp_path_factory.mktemp("decoder"), ["cpu", "cuda"])
    return sys.modules["approxcc_model_tiny_decoder"], manifest


@functools.cache
def _reference(module: ModuleType, fn: str, choice: tuple[tuple[str, int | None], ...]
               ) -> list[np.ndarray]:
    """JAX's outputs of one variant on the example inputs (computed once per choice)."""
    weights, *inputs = module.APPROX_EXAMPLE_ARGS[fn]
    v = make_variant(getattr(module, fn).__approx__, weights, inputs, dict(choice))
    return [np.asarray(r) for r in jax.tree.leaves(jax.jit(v.fn)(v.stored, *inputs))]


@pytest.fixture(scope="session")
def gallery(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, Manifest]:
    manifest = build_model(GALLERY, tmp_path_factory.mktemp("gallery"), ["cpu"])
    return sys.modules["approxcc_model_knob_gallery"], manifest


def _static(choice: dict[str, int | None]) -> dict[str, Any]:
    return {"approxcc": "1",
            "knobs": {k: {"value": v} for k, v in choice.items() if v is not None}}


def _tolerance(module: ModuleType, fn: str, choice: dict[str, int | None]) -> float:
    """Absolute tolerance (relative to the output's magnitude) of IREE vs JAX."""
    afn = getattr(module, fn).__approx__
    labels = {k.transform: k.label(choice[k.name]) for k in afn.knobs
              if choice[k.name] is not None}
    if labels.get("precision") == "bf16":
        # IREE's data-tiled bf16 matmuls round elsewhere than XLA's: the two are as far apart
        # as either is from f32 (tiny_decoder, bf16 + w8a8: 0.095 apart, 0.10 and 0.13 off)
        return 5e-2
    if labels.get("precision") == "f16" or labels.get("quantize") == "w8a8":
        return 1e-2
    return 1e-5


def _check_all_variants(module: ModuleType, manifest: Manifest) -> int:
    prog = load(manifest.path)
    checked = 0
    for fn, entry in manifest.functions.items():
        _, *inputs = module.APPROX_EXAMPLE_ARGS[fn]
        for variant in entry["variants"]:
            ref = _reference(module, fn, tuple(sorted(variant["choice"].items())))
            prog.configure(_static(variant["choice"]))
            got = getattr(prog, fn)(*inputs)
            assert getattr(prog, fn).last_variant == variant["id"]
            got = list(got) if isinstance(got, tuple) else [got]
            for r, g in zip(ref, got, strict=True):
                assert g.shape == r.shape and g.dtype == r.dtype
                scale = max(1.0, float(np.abs(r).max()))
                tol = _tolerance(module, fn, variant["choice"]) * scale
                assert np.abs(g - r).max() <= tol, (fn, variant["choice"])
            checked += 1
    return checked


def test_decorated_function_is_exact() -> None:
    sys.path.insert(0, str(DECODER.parent))
    try:
        import knob_gallery as g
        import tiny_decoder as td
    finally:
        sys.path.remove(str(DECODER.parent))
    w, tokens, pos = td.APPROX_EXAMPLE_ARGS["decode_step"]
    np.testing.assert_array_equal(td.decode_step(w, tokens, pos), td.forward(w, tokens, pos))
    np.testing.assert_array_equal(g.mlp_quant(g.MLP_PARAMS, g.X), g.mlp(g.MLP_PARAMS, g.X))
    assert td.decode_step.__name__ == "decode_step"
    assert [k.name for k in td.decode_step.__approx__.knobs] == \
        ["llm", "llm_precision", "llm_quant"]


def test_decoder_variants_match_jax(decoder: tuple[ModuleType, Manifest]) -> None:
    module, manifest = decoder
    # 2 (func_substitute) x 2 (precision) x 2 (quantize) stacked knobs
    assert _check_all_variants(module, manifest) == 8


def test_gallery_variants_match_jax(gallery: tuple[ModuleType, Manifest]) -> None:
    module, manifest = gallery
    assert _check_all_variants(module, manifest) == 15


def test_exact_variant_matches_undecorated(decoder: tuple[ModuleType, Manifest]) -> None:
    module, manifest = decoder
    w, tokens, pos = module.APPROX_EXAMPLE_ARGS["decode_step"]
    got = load(manifest.path).decode_step(tokens, pos)
    np.testing.assert_allclose(got, module.forward(w, tokens, pos), rtol=1e-5, atol=1e-5)


def test_transform_semantics(gallery: tuple[ModuleType, Manifest]) -> None:
    g, manifest = gallery
    prog = load(manifest.path)
    x = g.X
    # task_skipping on a list of layers: 1 = early exit after 3 layers, (0, 2) = those skipped
    layers = g.LIST_PARAMS["layers"]
    for value, kept in [(1, layers[:3]), (2, [layers[1], layers[3]])]:
        prog.configure({"knobs": {"list_skip": {"value": value}}})
        want = g.mlp_list({**g.LIST_PARAMS, "layers": kept}, x)
        np.testing.assert_allclose(prog.skip_layers(x), want, rtol=1e-5, atol=1e-5)
    # loop_perforate on a scan: layers 0 and 3 of 6 run; ys repeat the last executed layer
    prog.configure({"knobs": {"scan_perforate": {"value": 3}}})
    out, means = prog.scan_layers(x)
    stacked = g.STACKED_PARAMS["layers"]["w"]
    want_out, want_means = g.scan_layers({**g.STACKED_PARAMS, "layers": {"w": stacked[::3]}}, x)
    np.testing.assert_allclose(out, want_out, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(means, np.repeat(np.asarray(want_means), 3), rtol=1e-5,
                               atol=1e-6)
    # loop_perforate on fori_loop(0, 8): v = 4 runs the first 2 iterations
    prog.configure({"knobs": {"fori_perforate": {"value": 4}}})
    v = x
    for _ in range(2):
        v = v @ g.POWER_PARAMS["a"]
        v = v / np.linalg.norm(v, axis=-1, keepdims=True)
    np.testing.assert_allclose(prog.power_iteration(x), v, rtol=1e-4, atol=1e-5)
    # quantised weights really are stored as int8 / int4 in the variant, in tiles of 32
    # output rows (w1 (64, 128) in `x @ w1`: 128 outputs of 64 inputs)
    quant = manifest.functions["mlp_quant"]
    dtypes = {v["choice"]["quant"]: [a["dtype"] for a in v["weight_args"]]
              for v in quant["variants"]}
    assert dtypes[0] == ["float32"] * 3
    assert dtypes[1].count("int8") == 2 and dtypes[2].count("int4") == 2
    assert {"shape": [4, 64, 32], "dtype": "int4"} in quant["variants"][2]["weight_args"]


@pytest.mark.parametrize("fmt,error", [("f32", 0), ("bf16", 4e-3), ("f16", 5e-4),
                                       ("int8", 8e-3), ("int4-g32", 0.15)])
def test_packed_tiles_are_their_weight(fmt: str, error: float) -> None:
    """A weight in tiles: its matvec, its rows and its dense value agree, as `M` and `M.T`."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((128, 64)).astype(np.float32)
    x = rng.standard_normal((3, 64)).astype(np.float32)
    p = pack(w, fmt)
    dense = np.asarray(p.dense())
    assert np.abs(dense - w).max() <= error * np.abs(w).max()
    np.testing.assert_allclose(np.asarray(p.matvec(x)), x @ dense.T, rtol=1e-5, atol=1e-4)
    rows = np.array([0, 5, 33, 70, 127])
    np.testing.assert_array_equal(np.asarray(p.take_rows(rows)), dense[rows])
    np.testing.assert_array_equal(np.asarray(pack(w.T, fmt, transposed=True).dense()), dense.T)


@pytest.mark.parametrize("choice", [{"p": 1, "q": 0}, {"p": 2, "q": 0}, {"p": 0, "q": 1},
                                    {"p": 0, "q": 2}])
def test_narrow_weights_are_widened_inside_the_matvec(choice: dict[str, int]) -> None:
    """A decode-like step (a row lookup, products with `W` and `W.T` (also as `x @ W.T`), the
    embedding as the output head) under bf16, f16, int8, int4-g32: weights stored in tiles, no
    `dot_general` left (each product multiplies the narrow codes), or, for a narrow float the
    CPU multiplies as stored, plain narrow weights in narrow products accumulating in f32;
    outputs close to exact."""
    @approx.knob("p", transform="precision", values=["f32", "bf16", "f16"])
    @approx.knob("q", transform="quantize", values=["none", "int8", "int4-g32"])
    def step(params: dict[str, Any], token: jax.Array) -> jax.Array:
        def mm(x: jax.Array, w: jax.Array, axis: int) -> jax.Array:   # as the models do
            return jax.lax.dot_general(x.astype(w.dtype), w, (((1,), (axis,)), ((), ())),
                                       preferred_element_type=np.float32)

        x = params["embed"][token]
        x = x + mm(jax.nn.gelu(mm(x, params["up"], 1)), params["down"], 0)
        mix = params["mix"].T
        x = x + (x.astype(mix.dtype) @ mix).astype(np.float32)
        return mm(x, params["embed"], 1)

    rng = np.random.default_rng(1)
    params = {"embed": rng.standard_normal((256, 64)).astype(np.float32),
              "mix": rng.standard_normal((64, 64)).astype(np.float32) / 8,
              "up": rng.standard_normal((128, 64)).astype(np.float32) / 8,
              "down": rng.standard_normal((128, 64)).astype(np.float32) / 8}
    token = np.array([7], np.int32)
    variant = make_variant(step.__approx__, params, (token,), choice)
    text = jax.jit(variant.fn).lower(variant.stored, token).as_text()
    precision = ["f32", "bf16", "f16"][choice["p"]]
    if multiplies_natively(precision):   # the CPU's ukernels read the plain narrow float
        assert all(a.ndim == 2 and a.dtype.name == {"bf16": "bfloat16", "f16": "float16"}[
            precision] for a in variant.stored)
        dots = [line for line in text.splitlines() if "stablehlo.dot_general" in line]
        assert len(dots) == 4 and all(f"x{precision}>) -> tensor<1x" in d for d in dots), dots
    else:
        assert all(a.ndim == 3 and a.shape[-1] == 32 for a in variant.stored if a.ndim > 1)
        assert "dot_general" not in text
    exact = make_variant(step.__approx__, params, (token,), {"p": 0, "q": 0})
    want = np.asarray(exact.fn(exact.stored, token))
    got = np.asarray(jax.jit(variant.fn)(variant.stored, token))
    assert np.abs(got - want).max() <= 0.2 * np.abs(want).max()


def test_a_build_converts_each_shared_weight_once() -> None:
    """Within a build, functions over the same parameters (a prefill per prompt length) hold
    one int8 copy between their w8a8 variants, and a float32 variant holds the parameters
    themselves: memory grows with the distinct conversions, not with the functions."""
    @approx.knob("q", transform="quantize", values=["none", "w8a8"])
    def short(params: dict[str, Any], x: jax.Array) -> jax.Array:
        return x @ params["w"].T

    @approx.knob("q", transform="quantize", values=["none", "w8a8"])
    def long(params: dict[str, Any], x: jax.Array) -> jax.Array:
        return x @ params["w"].T

    params = {"w": np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)}
    x8, x16 = np.ones((8, 64), np.float32), np.ones((16, 64), np.float32)
    with shared_conversions():
        a = make_variant(short.__approx__, params, (x8,), {"q": 1})
        b = make_variant(long.__approx__, params, (x16,), {"q": 1})
        exact = make_variant(long.__approx__, params, (x16,), {"q": 0})
    assert a.stored[0].dtype == np.int8
    assert all(p is q for p, q in zip(a.stored, b.stored, strict=True))
    assert exact.stored[0] is params["w"]
    apart = make_variant(short.__approx__, params, (x8,), {"q": 1})   # outside a build
    assert apart.stored[0] is not a.stored[0]
    np.testing.assert_array_equal(apart.stored[0], a.stored[0])


def test_w8a8_multiplies_int8_by_int8_in_both_weight_layouts() -> None:
    """w8a8 on products with `W` (in, out) and `W.T` (a model's (out, in) weights, the tied
    embedding as the head, written as a `dot_general` or as `x @ W.T`): every one an int8 x
    int8 product accumulating in int32 (none multiplies a dequantized float copy), weights
    stored int8 per output channel, outputs within int8's error of exact."""
    @approx.knob("q", transform="quantize", values=["none", "w8a8"])
    def step(params: dict[str, Any], token: jax.Array) -> jax.Array:
        x = params["embed"][token]
        h = jax.lax.dot_general(x, params["up"], (((1,), (1,)), ((), ())))
        x = x + jax.nn.gelu(h) @ params["down"]
        x = x + x @ params["mix"].T
        return jax.lax.dot_general(x, params["embed"], (((1,), (1,)), ((), ())))

    rng = np.random.default_rng(1)
    params = {"embed": rng.standard_normal((256, 64)).astype(np.float32),
              "mix": rng.standard_normal((64, 64)).astype(np.float32) / 8,
              "up": rng.standard_normal((128, 64)).astype(np.float32) / 8,
              "down": rng.standard_normal((128, 64)).astype(np.float32) / 8}
    token = np.array([7], np.int32)
    variant = make_variant(step.__approx__, params, (token,), {"q": 1})
    assert [a.dtype for a in variant.stored] == [np.int8, np.float32] * 4
    text = jax.jit(variant.fn).lower(variant.stored, token).as_text()
    dots = [line for line in text.splitlines() if "stablehlo.dot_general" in line]
    assert len(dots) == 4 and all("xi8>, tensor<" in d and "xi32>" in d for d in dots), dots
    want = np.asarray(step(params, token))
    got = np.asarray(jax.jit(variant.fn)(variant.stored, token))
    assert np.abs(got - want).max() <= 0.05 * np.abs(want).max()


def test_w8a16_reads_int8_weights_once_at_weight_only_int8_accuracy() -> None:
    """w8a16: activations to 16 bits as two int8 halves stacked into one int8 x int8
    product (2 rows for a matvec's 1: the weight read once), as close to exact as
    weight-only int8 and closer than w8a8 on activations with outliers (a model's)."""
    @approx.knob("q", transform="quantize", values=["none", "int8", "w8a8", "w8a16"])
    def head(params: dict[str, Any], x: jax.Array) -> jax.Array:
        return x @ params["w"].T

    rng = np.random.default_rng(2)
    params = {"w": rng.standard_normal((512, 256)).astype(np.float32)}
    x = rng.standard_normal((1, 256)).astype(np.float32)
    x[0, :4] *= 40                                  # a few outlier channels
    want = np.asarray(head(params, x))

    def error(value: int) -> float:
        variant = make_variant(head.__approx__, params, (x,), {"q": value})
        got = np.asarray(jax.jit(variant.fn)(variant.stored, x))
        return float(np.abs(got - want).max() / np.abs(want).max())

    variant = make_variant(head.__approx__, params, (x,), {"q": 3})
    text = jax.jit(variant.fn).lower(variant.stored, x).as_text()
    dots = [line for line in text.splitlines() if "stablehlo.dot_general" in line]
    assert len(dots) == 1 and "tensor<2x1x256xi8>" in dots[0] and "xi32>" in dots[0], dots
    int8, w8a8, w8a16 = error(1), error(2), error(3)
    assert w8a16 <= 1.05 * int8 < w8a8, (int8, w8a8, w8a16)


def test_knob_without_an_exact_value() -> None:
    @approx.knob("p", transform="precision", values=["bf16"])
    def f(params: Any, x: Any) -> Any:
        return x @ params["w"]

    afn = f.__approx__
    w, x = {"w": np.eye(4, dtype=np.float32)}, np.ones((1, 4), np.float32)
    assert exact_value(afn.knobs[0], w) is None          # only an absent knob is exact
    exact = make_variant(afn, w, [x], {"p": None})
    assert exact.stored[0].dtype == np.float32
    np.testing.assert_array_equal(exact.fn(exact.stored, x), x)
    bf16 = make_variant(afn, w, [x], {"p": 0})
    assert bf16.stored[0].dtype.name == "bfloat16"


def test_runtime_switches_variant_with_state(decoder: tuple[ModuleType, Manifest]) -> None:
    module, manifest = decoder
    w, tokens, pos = module.APPROX_EXAMPLE_ARGS["decode_step"]
    score = {"value": 10.0}
    approx.register_state("retrieval_score", lambda *inputs: score["value"])
    prog = load(manifest.path, config={
        "approxcc": "1", "program": "tiny_decoder",
        "knobs": {"llm": {"thresholds": [50], "decisions": [0, 1]}}})
    step = prog.decode_step
    exact = step(tokens, pos)
    assert step.choice(tokens, pos)["llm"] == 0
    np.testing.assert_allclose(exact, module.forward(w, tokens, pos), rtol=1e-5, atol=1e-5)
    score["value"] = 90.0
    small = step(tokens, pos)
    assert step.choice(tokens, pos)["llm"] == 1
    np.testing.assert_allclose(small, module.forward(module.SMALL_PARAMS, tokens, pos),
                               rtol=1e-5, atol=1e-5)
    score["value"] = 50.0                  # a state equal to a threshold takes the upper leaf
    assert step.choice(tokens, pos)["llm"] == 1
    # both leaves ran inside one dispatch: one context (its globals initialised once)
    # serves every later call, one parameter module for its weights file
    assert step.last_entry == step.dispatch(tokens, pos)["id"]
    step(tokens, pos)
    assert len(prog._modules) == 1 and len(prog._parameters) == 1
    # `states=` overrides the registry
    other = load(manifest.path, config={"knobs": {"llm": {"thresholds": [50],
                                                          "decisions": [1, 0]}}},
                 states={"retrieval_score": lambda *inputs: 0.0})
    assert other.decode_step.choice(tokens, pos)["llm"] == 1


def test_dispatch_runs_the_state_selected_variant(decoder: tuple[ModuleType, Manifest]
                                                  ) -> None:
    """For a static choice, one vmfb entry dispatches on the state across the threshold:
    each state's output is that of its static variant (JAX's), and the two differ (every
    static configuration runs through a dispatch in test_decoder_variants_match_jax)."""
    module, manifest = decoder
    entry = manifest.functions["decode_step"]
    assert len(entry["dispatches"]) == 4
    assert all("dispatch" in v and "cpu" not in v["vmfb"] for v in entry["variants"])
    # each distinct weight array is one parameter (norm1 and norm2 are both ones), and the
    # variants a dispatch runs keep no weights file of their own
    exact = next(v for v in entry["variants"] if v["name"] == "decode_step.exact")
    assert len(exact["weight_args"]) == len(jax.tree.leaves(module.PARAMS)) - 1
    assert not any("weights" in v for v in entry["variants"])
    _, tokens, pos = module.APPROX_EXAMPLE_ARGS["decode_step"]
    score = {"value": 0.0}
    prog = load(manifest.path, states={"retrieval_score": lambda *inputs: score["value"]})
    for dispatch in entry["dispatches"][::3]:   # exact and bf16+w8a8 static knobs
        prog.configure({"knobs": {"llm": {"thresholds": [50], "decisions": [0, 1]},
                                  **{k: {"value": v} for k, v in dispatch["static"].items()}}})
        outs = []
        for state, llm in ((49.5, 0), (50.5, 1)):
            score["value"] = state
            got = prog.decode_step(tokens, pos)
            assert prog.decode_step.last_entry == dispatch["id"]
            choice = {**dispatch["static"], "llm": llm}
            [ref] = _reference(module, "decode_step", tuple(sorted(choice.items())))
            tol = _tolerance(module, "decode_step", choice) * max(1.0, float(np.abs(ref).max()))
            assert np.abs(got - ref).max() <= tol, (dispatch["name"], state)
            outs.append(got)
        assert np.abs(outs[0] - outs[1]).max() > 0.1


def test_every_tiny_decoder_variant_compiles_for_cuda(decoder: tuple[ModuleType, Manifest]
                                                      ) -> None:
    _, manifest = decoder
    variants = manifest.functions["decode_step"]["variants"]
    assert len(variants) == 8 and manifest.functions["decode_step"]["failed"] == {}
    # every variant runs inside a dispatch on the state (`llm` is state-driven)
    dispatches = {d["id"]: d for d in manifest.functions["decode_step"]["dispatches"]}
    assert len(dispatches) == 4 and all(d["failed"] == {} for d in dispatches.values())
    for variant in variants:
        dispatch = dispatches[variant["dispatch"]]
        assert variant["id"] in dispatch["branches"]
        assert (manifest.path.parent / dispatch["vmfb"]["cuda"]).stat().st_size > 1000


def test_runtime_config_errors(decoder: tuple[ModuleType, Manifest]) -> None:
    _, manifest = decoder
    prog = load(manifest.path)
    cases = [
        ({"nope": {"value": 1}}, "knob 'nope': unknown knob"),
        ({"llm_quant": {"value": 7}}, "knob 'llm_quant': value 7 is outside its domain"),
        ({"llm_quant": {"thresholds": [1], "decisions": [0, 1]}},
         "knob 'llm_quant': a static knob takes"),
        ({"llm": {"thresholds": [1, 2], "decisions": [0, 1, 1]}},
         "knob 'llm': expected 1 threshold(s), got 2"),
    ]
    for knobs, message in cases:
        with pytest.raises(CompileError, match=message.replace("(", r"\(").replace(")", r"\)")):
            prog.configure({"knobs": knobs})
    prog.configure({"knobs": {"nope": {"value": 1}}}, strict=False)    # a C knob: ignored
    with pytest.raises(ValueError, match="input 0 has shape"):
        prog.decode_step(np.zeros((1, 3), np.int32), np.int32(0))


def test_gpu_targets_compile(tmp_path: Path) -> None:
    model = tmp_path / "gpu_model.py"
    model.write_text(textwrap.dedent("""
        import numpy as np
        from approxcc import approx

        @approx.knob("p", transform="precision", values=["f32", "f16"])
        def affine(params, x):
            return x @ params["w"] + params["b"]

        APPROX_EXAMPLE_ARGS = {"affine": ({"w": np.ones((16, 8), np.float32),
                                           "b": np.zeros(8, np.float32)},
                                          np.ones((2, 16), np.float32))}
        """))
    manifest = build_model(model, tmp_path / "out", ["cpu", "cuda", "rocm"])
    for variant in manifest.functions["affine"]["variants"]:
        assert set(variant["vmfb"]) == {"cpu", "cuda", "rocm"}
        for path in variant["vmfb"].values():
            assert (tmp_path / "out" / path).stat().st_size > 1000
    prog = Program(manifest, None, "auto", None, True)
    assert prog.affine(np.ones((2, 16), np.float32)).tolist() == [[16.0] * 8] * 2


def _error_of(make: Callable[[], Any]) -> str:
    with pytest.raises(AnnotationError) as info:
        make()
    return str(info.value)


def test_annotation_errors_name_file_and_line() -> None:
    def small(params: Any) -> Any:
        return params

    def unknown_transform() -> None:
        @approx.knob("k", transform="unroll")
        def f(params: Any, x: Any) -> Any:
            return x

    def wrong_signature() -> None:
        @approx.knob("k", transform="func_substitute", variants=[small])
        def f(params: Any, x: Any) -> Any:
            return x

    def duplicate() -> None:
        @approx.knob("k", transform="precision", values=["f32", "bf16"])
        @approx.knob("k", transform="quantize", values=["none", "int8"])
        def f(params: Any, x: Any) -> Any:
            return x

    cases = [
        (unknown_transform, "knob 'k': unknown transform 'unroll' (expected one of "
                            "func_substitute, loop_perforate, precision, quantize, "
                            "task_skipping)"),
        (wrong_signature, "knob 'k': variant 'small(params: 'Any') -> 'Any'' does not have "
                          "the signature of 'f(params: 'Any', x: 'Any') -> 'Any''"),
        (duplicate, "duplicate knob name 'k' on 'f'"),
    ]
    for make, message in cases:
        line = make.__code__.co_firstlineno + 1          # the (first) decorator's line
        assert _error_of(make) == f"{__file__}:{line}:10: error: {message}"

    bad = [
        (lambda: approx.knob("k", transform="precision", values=[]), "values is empty"),
        (lambda: approx.knob("k", transform="precision", values=["f8"]),
         "precision value 'f8' is not one of f32, bf16, f16"),
        (lambda: approx.knob("k", transform="quantize", values=["int3"]), "'int3' is not"),
        (lambda: approx.knob("k", transform="loop_perforate", values=[0, 2]), "must be an"),
        (lambda: approx.knob("k", transform="task_skipping", values=[(1, 1)]), "distinct"),
        (lambda: approx.knob("k", transform="precision", variants=[small]),
         "variants=... belongs to func_substitute"),
        (lambda: approx.knob("k", transform="precision", thresholds=2),
         "thresholds= and range= need state="),
        (lambda: approx.knob("k", transform="precision", state=approx.state("s"),
                             range=(5, 1)), "range must be (lo, hi) with lo < hi"),
        (lambda: approx.knob("k", transform="func_substitute", variants=[small], values=[3]),
         "values must be distinct integers in 0..1"),
        (lambda: approx.knob("2k", transform="precision"), "knob name must be an identifier"),
        (lambda: approx.knob("k", transform="precision")(42), "must decorate a function"),
    ]
    for make, message in bad:
        text = _error_of(make)
        assert text.startswith(f"{__file__}:") and ": error: " in text and message in text


@pytest.mark.parametrize("source, line, message", [
    ("""
     @approx.knob("k", transform="precision", values=["f32", "bf16"])
     def f(params, x):
         return x
     """, 3, "no example arguments for 'f'"),
    ("""
     @approx.knob("k", transform="task_skipping", values=[0, 1])
     def f(params, x):
         return x @ params["w"]
     APPROX_EXAMPLE_ARGS = {"f": ({"w": np.ones((4, 4), np.float32)},
                                  np.ones((1, 4), np.float32))}
     """, 3, "knob 'k': task_skipping needs the weights (argument 0) to be a dict"),
    ("""
     @approx.knob("k", transform="loop_perforate", values=[1, 2])
     def f(params, x):
         return x @ params["w"]
     APPROX_EXAMPLE_ARGS = {"f": ({"w": np.ones((4, 4), np.float32)},
                                  np.ones((1, 4), np.float32))}
     """, 3, "knob 'k': loop_perforate: the function has no lax.scan"),
    ("""
     @approx.knob("k", transform="task_skipping", values=[0, 2])
     def f(params, x):
         for w in params["layers"]:
             x = x @ w
         return x
     APPROX_EXAMPLE_ARGS = {"f": ({"layers": [np.ones((4, 4), np.float32)] * 2},
                                  np.ones((1, 4), np.float32))}
     """, 3, "knob 'k': cannot skip layers [0, 1] of a 2-layer model"),
])
def test_build_errors(tmp_path: Path, source: str, line: int, message: str) -> None:
    model = tmp_path / "bad_model.py"
    model.write_text("import numpy as np\nfrom approxcc import approx\n"
                     + textwrap.dedent(source).lstrip("\n"))
    with pytest.raises(AnnotationError) as info:
        build_model(model, tmp_path / "out")
    assert str(info.value).startswith(f"{model}:{line}:")
    assert message in str(info.value)
    # the command line prints the same diagnostic and exits with status 1
    proc = run_approxcc([model, "-o", tmp_path / "out"], cwd=ROOT)
    assert proc.returncode == 1 and proc.stderr.startswith(f"{model}:{line}:")
    assert "Traceback" not in proc.stderr


def test_importing_approxcc_does_not_import_jax() -> None:
    code = ("import sys; from approxcc import approx, AnnotationError; "
            "approx.state('s'); assert 'jax' not in sys.modules, 'jax imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_user_module_import_is_isolated(tmp_path: Path) -> None:
    model = tmp_path / "plain.py"
    model.write_text("VALUE = 3\n")
    with pytest.raises(CompileError, match="no function decorated"):
        load_program(model)
    assert "approxcc_model_plain" in sys.modules and "VALUE" not in globals()


def test_a_model_substitute_is_named_without_printing_its_object() -> None:
    """A substitute that is a model's bound method is named by the method: its object's repr
    (a decoder's weights) took a second a call, and a build names variants often."""

    class Decoder:
        def __repr__(self) -> str:
            raise AssertionError("printed the decoder")

        def restricted(self, params: object) -> object:
            return params

    assert approx.model(Decoder().restricted, {}).__name__ == "restricted"
    assert approx.model(functools.partial(max, 1), {}).__name__.startswith("functools.partial")
