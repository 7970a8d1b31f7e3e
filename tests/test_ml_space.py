"""The tuner's space of an ML build: variants IREE did not compile for the target are never
picked, and every knob's exact value is the index of its exact label wherever it stands."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import run_approxcc

from approxcc.ml.ir import approx_module
from approxcc.ml.program import load_program
from approxcc.ml.runtime import load
from approxcc.tune.search import Search
from approxcc.tune.space import Encoding, KnobSpace, knob_space, ml_knob_space

# `affine`: IREE cannot lower the LAPACK custom call its substitute makes on bf16 weights,
# so only the combination alt=solve, prec=bf16 fails; `chol`: its substitute always fails.
MODEL = '''
import jax.numpy as jnp
import numpy as np
from approxcc import approx


def solve(params, x):
    w = params["w"]
    if w.dtype == jnp.bfloat16:
        x = jnp.linalg.cholesky(x @ x.T + 4 * jnp.eye(4)).astype(w.dtype)
    return x @ w


def cholesky(params, x):
    return jnp.linalg.cholesky(x @ x.T + 4 * jnp.eye(4)) @ params["w"]


@approx.knob("alt", transform="func_substitute", variants=[solve])
@approx.knob("prec", transform="precision", values=["bf16", "f32"])
def affine(params, x):
    return x @ params["w"]


@approx.knob("chol", transform="func_substitute", variants=[cholesky])
@approx.knob("quant", transform="quantize", values=["int8", "none"])
def chol(params, x):
    return x @ params["w"]


W = {"w": np.ones((4, 4), np.float32)}
APPROX_EXAMPLE_ARGS = {"affine": (W, np.ones((4, 4), np.float32)),
                       "chol": (W, np.ones((4, 4), np.float32))}
'''


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real `--keep-going` build in which IREE rejects three variants for the CPU (IREE
    alone: XLA would run them, tests/test_ml_ir.py)."""
    root = tmp_path_factory.mktemp("failing")
    (root / "model.py").write_text(MODEL)
    done = run_approxcc(["model.py", "-o", "out", "--target=cpu", "--keep-going"], cwd=root,
                        env={"APPROXCC_ML_CPU_BACKEND": "iree"})
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("warning: variant <") == 3, done.stderr
    return root / "out" / "manifest.json"


def test_failed_variants_are_left_out_of_the_space(build: Path) -> None:
    data = json.loads(build.read_text())["functions"]
    assert [len(data[f]["failed"]["cpu"]) for f in ("affine", "chol")] == [1, 2]
    space = ml_knob_space(build, "cpu")
    knobs = {k.name: k for k in space.knobs}
    # chol=1 failed with every other knob exact: the value is gone
    assert knobs["chol"].values == (0,) and knobs["alt"].values == (0, 1)
    assert space.unbuilt == ((("alt", 1), ("prec", 0)),)
    # a configuration that would run the failed variant is moved to a built one (its last
    # knob back to exact)
    assert space.built({"alt": {"value": 1}, "prec": {"value": 0}}) == \
        {"alt": {"value": 1}, "prec": {"value": 1}}
    assert space.built({"alt": {"value": 1}, "prec": {"value": 1}}) == \
        {"alt": {"value": 1}, "prec": {"value": 1}}
    assert KnobSpace.from_json(json.loads(json.dumps(space.to_json()))) == space


def test_the_search_never_asks_for_a_failed_variant(build: Path, tmp_path: Path) -> None:
    """Real OpenTuner over the space: every configuration it yields runs on the build."""
    space = ml_knob_space(build, "cpu")
    search = Search(space, "static", 0.5, seed=1, database=tmp_path / "ot.db", parallelism=1,
                    seeds=[], label="failing")
    prog = load(build)
    x = np.eye(4, dtype=np.float32)
    asked = set()
    for _ in range(12):
        got = search.ask()
        if got is None:
            break
        handle, config = got
        asked.add(json.dumps(config, sort_keys=True))
        prog.configure({"approxcc": "1", "knobs": config})
        prog.affine(x)   # a failed variant would raise LookupError
        prog.chol(x)
        search.tell(handle, 1.0, 0.0)
    search.close()
    assert len(asked) >= 2


def test_exact_is_the_exact_labels_index_wherever_it_stands(build: Path) -> None:
    source = build.parent.parent / "model.py"
    for space in (ml_knob_space(build, "cpu"), knob_space([approx_module(load_program(source))])):
        knobs = {k.name: k for k in space.knobs}
        assert (knobs["prec"].exact, knobs["quant"].exact, knobs["alt"].exact) == (1, 1, 0)
        assert space.exact_config() == {"alt": {"value": 0}, "prec": {"value": 1},
                                        "chol": {"value": 0}, "quant": {"value": 1}}
        # the exact configuration is a point of the search space (it encodes)
        assert Encoding(space, "static").encode(space.exact_config()) is not None
