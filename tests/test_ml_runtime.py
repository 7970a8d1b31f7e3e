"""The ML runtime's fast path: weights as IREE parameters (immutable globals, not arguments),
and a cache passed from call to call as device arrays, never through the host."""

from __future__ import annotations

import json
from pathlib import Path

import iree.runtime as ireert
import numpy as np
import pytest

from approxcc.ml.build import build_model

# A toy cache step: the "cache" row `pos` gets x @ w, the output reads the whole cache.
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


APPROX_EXAMPLE_ARGS = {"step": (W, np.zeros((4, 8), np.float32), np.ones(8, np.float32),
                                np.int32(0))}
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cache")
    (root / "model.py").write_text(MODEL)
    return build_model(root / "model.py", root / "out", ["cpu"]).path


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
    host_cache = np.zeros((4, 8), np.float32)
    device_cache = host_cache
    for pos, x in enumerate(xs):
        host_out, host_cache = prog.step(host_cache, x, np.int32(pos))
        out, device_cache = prog.step.on_device(device_cache, x, np.int32(pos))
        assert isinstance(device_cache, ireert.DeviceArray)
        np.testing.assert_allclose(np.asarray(out), host_out, rtol=1e-6)
    want = sum(x @ w["w"] for x in xs)
    np.testing.assert_allclose(np.asarray(device_cache).sum(axis=0), want, rtol=1e-5)
    with pytest.raises(ValueError, match="input 1 is a float32\\[4, 8\\] device array"):
        prog.step(np.zeros((4, 8), np.float32), device_cache, np.int32(0))
