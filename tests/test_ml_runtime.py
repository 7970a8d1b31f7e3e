"""The ML runtime's fast path: weights as IREE parameters (immutable globals, not arguments),
a cache passed from call to call as device arrays, never through the host, and a prefill
step (matrix-matrix, compiled with its own CPU flags) filling that cache for the next."""

from __future__ import annotations

import json
from pathlib import Path

import iree.runtime as ireert
import numpy as np
import pytest

from approxcc.ml.build import build_model
from approxcc.ml.iree import MATRIX_ROWS

# A toy cache step: the "cache" row `pos` gets x @ w, the output reads the whole cache;
# `fill` writes rows 0..31 at once (a prompt's prefill: a 32-row matmul).
MODEL = '''
import jax.numpy as jnp
import numpy as np
from jax import lax
from approxcc import approx

RNG = np.random.default_rng(0)
W = {"w": RNG.standard_normal((8, 8)).astype(np.float32),
     "b": RNG.standard_normal(8).astype(np.float32)}


@approx.knob("quant", transform="quantize", values=["none", "int8"])
def step(params, cache, x, pos):
    cache = lax.dynamic_update_slice(cache, (x @ params["w"])[None], (pos, 0))
    return jnp.sum(cache, axis=0) + params["b"], cache


@approx.knob("fill_precision", transform="precision", values=["f32"])
def fill(params, cache, xs):
    return lax.dynamic_update_slice(cache, xs @ params["w"], (0, 0))


APPROX_EXAMPLE_ARGS = {"step": (W, np.zeros((40, 8), np.float32), np.ones(8, np.float32),
                                np.int32(0)),
                       "fill": (W, np.zeros((40, 8), np.float32), np.ones((32, 8), np.float32))}
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cache")
    (root / "model.py").write_text(MODEL)
    # IREE's path (its device arrays) whichever form the build would time faster
    return build_model(root / "model.py", root / "out", ["cpu"], cpu_backend="iree").path


def test_weights_are_parameters_not_arguments(built: Path) -> None:
    manifest = json.loads(built.read_text())
    variant = manifest["functions"]["step"]["variants"][0]
    text = (built.parent / variant["mlir"]).read_text()
    assert text.count('"util.global"()') == 2 and '#flow.parameter.named<"model"::"p1">' in text
    main = next(line for line in text.splitlines() if "func.func public @main(" in line)
    assert "tensor<8x8xf32>" not in main        # only the inputs are arguments
    assert manifest["approxcc_ml"] == "3"


def test_a_cache_stays_on_the_device_between_calls(built: Path) -> None:
    from approxcc.ml.runtime import load

    prog = load(built)
    w = {"w": np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)}
    xs = [np.full(8, i + 1, np.float32) for i in range(4)]
    host_cache = np.zeros((40, 8), np.float32)
    device_cache = host_cache
    for pos, x in enumerate(xs):
        host_out, host_cache = prog.step(host_cache, x, np.int32(pos))
        out, device_cache = prog.step.on_device(device_cache, x, np.int32(pos))
        assert isinstance(device_cache, ireert.DeviceArray)
        np.testing.assert_allclose(np.asarray(out), host_out, rtol=1e-6)
    want = sum(x @ w["w"] for x in xs)
    np.testing.assert_allclose(np.asarray(device_cache).sum(axis=0), want, rtol=1e-5)
    with pytest.raises(ValueError, match="input 1 is a float32\\[40, 8\\] device array"):
        prog.step(np.zeros((40, 8), np.float32), device_cache, np.int32(0))


def test_a_prefill_fills_the_cache_the_decode_step_reads(built: Path) -> None:
    from approxcc.ml.runtime import load

    functions = json.loads(built.read_text())["functions"]
    # the prefill's 32-row matmul is compiled as matrix-matrix, the step's matvec is not
    assert functions["fill"]["variants"][0]["rows"] == 32
    assert functions["step"]["variants"][0]["rows"] == 1
    rng = np.random.default_rng(0)
    w, b = rng.standard_normal((8, 8)), rng.standard_normal(8)
    xs, x = rng.standard_normal((32, 8)).astype(np.float32), np.full(8, 2, np.float32)
    prog = load(built)
    cache = prog.fill.on_device(np.zeros((40, 8), np.float32), xs)
    assert isinstance(cache, ireert.DeviceArray)
    out, cache = prog.step(cache, x, np.int32(32))
    want = np.zeros((40, 8))
    want[:32], want[32] = xs @ w, x @ w
    np.testing.assert_allclose(cache, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out, want.sum(axis=0) + b, rtol=1e-5, atol=1e-4)
    # a host cache (read-only, as every output) goes back in as an input
    assert not cache.flags.writeable
    _, again = prog.step(cache, x, np.int32(33))
    want[33] = x @ w
    np.testing.assert_allclose(again, want, rtol=1e-5, atol=1e-5)


# Weights of both layouts a model has, `x @ W` and its (out, in) head `x @ E.T`, each with
# an outlier input channel (what a model's weights have), and a row lookup of the head (a
# tied embedding).
W4A16_MODEL = '''
import numpy as np
from approxcc import approx

RNG = np.random.default_rng(3)
W = {"up": RNG.standard_normal((2048, 96)).astype(np.float32),
     "head": RNG.standard_normal((160, 2048)).astype(np.float32)}
W["up"][5] *= 30
W["head"][:, 7] *= 30


@approx.knob("quant", transform="quantize", values=["none", "w4a16", "w4a16-mixed"])
def step(params, x, token):
    return x @ params["up"], x @ params["head"].T, params["head"][token]


APPROX_EXAMPLE_ARGS = {"step": (W, np.ones((1, 2048), np.float32), np.int32(3))}
'''


def test_w4a16_reads_rotated_unsigned_int4_codes_through_iree(tmp_path: Path) -> None:
    """w4a16 stores unsigned 4-bit codes (half a byte a weight, a zero point per channel)
    of the weights rotated along their input axis, and multiplies int16 activations,
    rotated alike, by them: IREE's build computes what the variant means (its import alone
    would read codes 8-15 as negative: `ml/unsigned_int4.py`), an outlier input channel
    costs the products little (unrotated codes: 71% of the head's largest value), and a row
    lookup of the head reads its rows back. `w4a16-mixed` keeps 4 bits for the largest
    weight alone. The activations' rotation (a row per block) leaves a matrix-vector
    step compiled as one, not as a prefill's matrix products."""
    from approxcc.ml.program import load_program
    from approxcc.ml.runtime import load
    from approxcc.ml.transforms import make_variant

    (tmp_path / "model.py").write_text(W4A16_MODEL)
    built = build_model(tmp_path / "model.py", tmp_path / "out", ["cpu"]).path
    variants = json.loads(built.read_text())["functions"]["step"]["variants"]
    assert [a["dtype"] for a in variants[1]["weight_args"]].count("uint4") == 2
    assert [a["dtype"] for a in variants[2]["weight_args"]].count("uint4") == 1
    assert all(v["rows"] < MATRIX_ROWS for v in variants)   # matrix-vector flags
    fn = load_program(tmp_path / "model.py").functions["step"]
    x, token = np.random.default_rng(4).standard_normal((1, 2048)).astype(np.float32), 3
    exact = fn.afn.fn(fn.weights, x, np.int32(token))
    prog = load(built)
    for value in (1, 2):
        prog.configure({"approxcc": "1", "knobs": {"quant": {"value": value}}})
        got = prog.step(x, np.int32(token))
        variant = make_variant(fn.afn, fn.weights, fn.inputs, {"quant": value})
        meant = variant.fn(variant.stored, x, np.int32(token))
        for g, m, e in zip(got, meant, exact, strict=True):
            np.testing.assert_allclose(g, m, atol=1e-3 * np.abs(e).max())
        errors = [np.abs(np.asarray(g) - e).max() / np.abs(e).max()
                  for g, e in zip(got, exact, strict=True)]
        assert errors[1] < 0.3 and errors[2] < 0.15, errors


# A step whose `live` input has a symbolic length (jax.export's shape polymorphism): it
# reads the first len(live) rows of the cache, multiplied and summed with an explicit
# broadcast of that dynamic slice (which IREE lowers only told its dimension does not expand).
LIVE_MODEL = '''
import jax
import jax.numpy as jnp
import numpy as np
from approxcc import approx

RNG = np.random.default_rng(0)
W = {"w": RNG.standard_normal((8, 8)).astype(np.float32)}


@approx.knob("quant", transform="quantize", values=["none", "w8a8"])
def step(params, x, live, cache):
    n = live.shape[0]
    rows = jax.lax.slice_in_dim(cache, 0, n, axis=0)                   # (n, 8)
    q = x @ params["w"]
    scores = jnp.sum(jax.lax.broadcast_in_dim(q, (n, 8), (1,)) * rows, axis=1)
    weights = jnp.exp(scores - jnp.max(scores))
    out = jnp.sum(jax.lax.broadcast_in_dim(weights, (n, 8), (0,)) * rows, axis=0)
    return out / jnp.sum(weights)


LIVE = jax.export.symbolic_shape("live", constraints=("live <= 40", "live >= 1"))
APPROX_EXAMPLE_ARGS = {"step": (W, np.ones(8, np.float32), jax.ShapeDtypeStruct(LIVE, jnp.int8),
                                np.zeros((40, 8), np.float32))}
'''


def test_an_input_of_symbolic_length_builds_once_for_every_length(tmp_path: Path) -> None:
    """An example argument given as a `jax.ShapeDtypeStruct` of a symbolic shape is a
    dynamic dimension of every variant: one vmfb takes any length (the manifest names the
    dimension), and each length gives what the function gives in JAX."""
    from approxcc.ml.program import load_program
    from approxcc.ml.runtime import load

    (tmp_path / "model.py").write_text(LIVE_MODEL)
    built = build_model(tmp_path / "model.py", tmp_path / "out", ["cpu"]).path
    entry = json.loads(built.read_text())["functions"]["step"]
    assert entry["inputs"][1] == {"shape": ["live"], "dtype": "int8", "bounds": {"live": [1, 40]}}
    fn = load_program(tmp_path / "model.py").functions["step"]
    rng = np.random.default_rng(1)
    x, cache = rng.standard_normal(8).astype(np.float32), rng.standard_normal((40, 8))
    prog = load(built)
    for value in (0, 1):
        prog.configure({"approxcc": "1", "knobs": {"quant": {"value": value}}})
        for n in (1, 7, 40):
            live = np.zeros(n, np.int8)
            exact = np.asarray(fn.afn.fn(fn.weights, x, live, cache.astype(np.float32)))
            got = prog.step(x, live, cache)
            np.testing.assert_allclose(got, exact, atol=0.05 if value else 1e-5)
    for wrong in (np.zeros((2, 3), np.int8), np.zeros(41, np.int8)):
        with pytest.raises(ValueError, match=r"input 1 has shape .* \(1 <= live <= 40\)"):
            prog.step(x, wrong, cache)


ENCODER = '''
import jax.numpy as jnp
import numpy as np
from approxcc import approx

W = np.random.default_rng(0).standard_normal((2048, 512)).astype(np.float32)


@approx.knob("encoder_precision", transform="precision", values=["f32"])
def encode(w, ids):
    return jnp.tanh(w[ids])


APPROX_EXAMPLE_ARGS = {"encode": (W, np.arange(16, dtype=np.int32))}
'''


def test_outputs_are_not_overwritten_by_the_next_call(tmp_path: Path) -> None:
    """A slice of one call's output keeps its values through later calls, though IREE
    reuses the output's buffer once the call's whole array is gone."""
    from approxcc.ml.runtime import load

    (tmp_path / "model.py").write_text(ENCODER)
    encode = load(build_model(tmp_path / "model.py", tmp_path / "out", ["cpu"]).path,
                  device="local-sync").encode
    for t in range(5):
        kept = encode(np.arange(16, dtype=np.int32) + t)[:5]  # the slice only
        assert not kept.flags.writeable      # read-only, as every variant's outputs
        want = kept.copy()
        encode(np.arange(16, dtype=np.int32) * 3 + 100 + t)
        np.testing.assert_array_equal(kept, want)
