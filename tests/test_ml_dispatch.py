"""A state-driven knob's fallback: where IREE cannot compile the dispatch of a function's
state-driven knob, its variants are a variant table, the runtime picking one per call.
(The dispatch itself: tests/test_ml.py on tiny_decoder, tests/lit/ml/dispatch.mlir.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from approxcc.ml.build import build_model
from approxcc.ml.runtime import load

# The substitute makes a LAPACK custom call IREE cannot lower: the dispatch holding it fails.
MODEL = '''
import jax.numpy as jnp
import numpy as np
from approxcc import approx


def solve(params, x):
    return jnp.linalg.cholesky(x @ x.T + 4 * jnp.eye(4)) @ params["w"]


@approx.knob("alt", transform="func_substitute", variants=[solve],
             state=approx.state("load"), thresholds=1, range=(0, 10))
def affine(params, x):
    return x @ params["w"]


APPROX_EXAMPLE_ARGS = {"affine": ({"w": np.full((4, 4), 2, np.float32)},
                                  np.ones((4, 4), np.float32))}
'''


def test_a_dispatch_iree_rejects_falls_back_to_the_variant_table(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture
                                                                  ) -> None:
    (tmp_path / "model.py").write_text(MODEL)
    # IREE alone (XLA would run the substitute: tests/test_ml_ir.py)
    manifest = build_model(tmp_path / "model.py", tmp_path / "out", ["cpu"], keep_going=True,
                           cpu_backend="iree")
    entry = manifest.functions["affine"]
    [dispatch] = entry["dispatches"]
    assert "cpu" not in dispatch["vmfb"]
    assert "stablehlo.custom_call" in dispatch["failed"]["cpu"]
    exact, substitute = entry["variants"]
    # the variants were compiled one by one: the exact one built, the substitute's error is
    # the diagnostic (a warning with --keep-going), as without a dispatch
    assert "cpu" in exact["vmfb"] and entry["failed"] == {"cpu": [substitute["id"]]}
    assert "warning: variant <alt=solve> of 'affine' for target cpu" in capsys.readouterr().err
    load_value = {"v": 0.0}
    prog = load(manifest.path, config={"knobs": {"alt": {"thresholds": [5],
                                                         "decisions": [0, 1]}}},
                states={"load": lambda x: load_value["v"]})
    x = np.ones((4, 4), np.float32)
    np.testing.assert_array_equal(prog.affine(x), np.full((4, 4), 8, np.float32))
    assert prog.affine.last_entry == exact["id"] and prog.affine.dispatch(x) is None
    load_value["v"] = 7.0
    with pytest.raises(LookupError, match="not built for target cpu"):
        prog.affine(x)
