"""A .py model's user-facing mistakes (issue 46): a build configuration that is missing or
out of a knob's range, a label for a knob whose values are labels, a build folder given to
the runtime, errors in the model's own code; each a clang-style diagnostic, never a
traceback or an internal compiler error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from approxcc.diagnostics import CompileError
from approxcc.ml.build import build_model
from approxcc.ml.runtime import load

# The smallest model: one 8 x 4 product, a precision knob whose values are labels.
MODEL = '''import numpy as np
from approxcc import approx


@approx.knob("p", transform="precision", values=["f32", "bf16"])
def affine(params, x):
    return x @ params["w"]


APPROX_EXAMPLE_ARGS = {"affine": ({"w": np.ones((8, 4), np.float32)},
                                  np.ones((1, 8), np.float32))}
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The model's build folder."""
    root = tmp_path_factory.mktemp("affine")
    (root / "model.py").write_text(MODEL)
    return build_model(root / "model.py", root / "out").path.parent


def test_the_runtime_loads_a_build_folder(built: Path, tmp_path: Path) -> None:
    prog = load(built)
    assert prog.affine(np.ones((1, 8), np.float32)).tolist() == [[8.0] * 4]
    assert load(str(built)).manifest.path == built / "manifest.json"
    expected = "expected the folder of `approxcc model.py -o DIR` or its manifest.json"
    with pytest.raises(CompileError) as info:
        load(tmp_path)
    assert str(info.value) == (f"cannot read the manifest '{tmp_path / 'manifest.json'}': "
                               f"No such file or directory ({expected})")
    (tmp_path / "c.json").write_text('{"knobs": {}}')
    with pytest.raises(CompileError) as info:
        load(tmp_path / "c.json")
    assert str(info.value) == f"'{tmp_path / 'c.json'}' is not a build manifest ({expected})"
