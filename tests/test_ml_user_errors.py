"""A .py model's user-facing mistakes (issue 46): a build configuration that is missing or
out of a knob's range, a label for a knob whose values are labels, a build folder given to
the runtime, errors in the model's own code; each a clang-style diagnostic, never a
traceback or an internal compiler error."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
from conftest import run_approxcc

from approxcc.config import parse_config
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


def test_a_configuration_takes_a_knobs_labels(built: Path, tmp_path: Path) -> None:
    x = np.full((1, 8), 1.001, np.float32)
    prog = load(built, config={"knobs": {"p": {"value": "bf16"}}})
    assert prog.affine.choice(x) == {"p": 1}
    assert prog.affine(x).tolist() == [[8.0] * 4]        # 1.001 is 1.0 in bfloat16
    prog.configure({"knobs": {"p": {"value": 0}}})      # the value itself still works
    assert prog.affine.choice(x) == {"p": 0}
    config = tmp_path / "c.json"
    config.write_text('{"approxcc": "1",\n "knobs": {"p": {"value": "int8"}}}\n')
    with pytest.raises(CompileError) as info:
        prog.configure(config)
    assert info.value.diagnostic.render(show_source=False) == (
        f"{config}:2:12: error: knob 'p': \"value\" must be an integer or one of its labels "
        "\"f32\", \"bf16\" (got \"int8\")")
    with pytest.raises(CompileError, match=r"value 3 is outside its domain \[0, 1\] "
                                           r"\(labels \"f32\", \"bf16\"\)"):
        prog.configure({"knobs": {"p": {"value": 3}}})
    tree = parse_config('{"knobs": {"q": {"thresholds": [1], "decisions": ["none", "w8a8"]}}}',
                        "c.json", {"q": {"none": 0, "w8a8": 1}})
    assert tree.knobs["q"].decisions == (0, 1)
    with pytest.raises(CompileError, match=r'"decisions" must be an array of integers or of '
                                           r'its labels "none", "w8a8" \(got "int4"\)'):
        parse_config('{"knobs": {"q": {"thresholds": [1], "decisions": ["none", "int4"]}}}',
                     "c.json", {"q": {"none": 0, "w8a8": 1}})


@pytest.mark.parametrize("change, where, message", [
    (("import numpy as np\n", "import numpy as np\nimport no_such_module\n"), "2:1",
     "ModuleNotFoundError: No module named 'no_such_module'"),
    (('x @ params["w"]', 'x @ weights["w"]'), "7:16",
     "NameError: name 'weights' is not defined"),
    (("np.ones((8, 4)", "np.ones((7, 4)"), "7:12",
     "TypeError: dot_general requires contracting dimensions to have the same shape, "
     "got (8,) and (7,)."),
    (("def affine(params, x):", "def affine(params, x:"), "6:11",
     "SyntaxError: '(' was never closed"),
], ids=["import", "name", "shape", "syntax"])
def test_an_error_in_the_models_code_is_a_diagnostic_at_its_line(
        tmp_path: Path, change: tuple[str, str], where: str, message: str) -> None:
    (tmp_path / "model.py").write_text(MODEL.replace(*change, 1))
    for args in (["model.py", "-o", "out"], ["-S", "-emit-mlir", "model.py", "-o", "-"]):
        done = run_approxcc(args, cwd=tmp_path)
        assert done.returncode == 1, done.stderr
        assert done.stderr.startswith(f"model.py:{where}: error: {message}\n"), done.stderr
        assert "internal compiler error" not in done.stderr and "Traceback" not in done.stderr


def test_a_bug_in_a_model_build_is_an_ice_whose_folder_holds_the_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "model.py").write_text(MODEL)
    done = run_approxcc(["model.py", "-o", "out"], cwd=tmp_path,
                        env={"APPROXCC_INJECT_FAULT": "ml-build"})
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("approxcc: error: internal compiler error: RuntimeError: "
                                  "fault injected into phase 'ml-build'")
    saved = re.search(r"note: diagnostic msg: preprocessed source and run script saved to "
                      r"(\S+)\n", done.stderr)
    assert saved, done.stderr
    folder = Path(saved.group(1))
    assert sorted(p.name for p in folder.iterdir()) == ["model.py", "reproduce.sh"]
    assert (folder / "model.py").read_text() == MODEL
    assert f"diagnostic msg: {folder / 'model.py'}\n" in done.stderr
    assert " model.py -o out" in (folder / "reproduce.sh").read_text()


def _config(folder: Path, knobs: str) -> None:
    (folder / "c.json").write_text('{"approxcc": "1",\n "knobs": ' + knobs + '}\n')


def test_a_build_with_a_configuration_compiles_its_variants_only(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(MODEL)
    _config(tmp_path, '{"p": {"value": "bf16"}}')
    # as a user (and kv_decoder.build) runs it: the driver passes --config on (it did not)
    done = run_approxcc(["model.py", "-o", "out", "--config", "c.json"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    manifest = load(tmp_path / "out").manifest
    assert [v["name"] for v in manifest.functions["affine"]["variants"]] == ["affine.p.bf16"]
    assert len(list((tmp_path / "out" / "cpu").iterdir())) == 1
    assert manifest.data["config"] == {"file": "c.json", "knobs": {"p": {"value": 1}}}
    prog = load(tmp_path / "out")                       # the build's configuration
    x = np.full((1, 8), 1.001, np.float32)
    assert prog.affine(x).tolist() == [[8.0] * 4] and prog.affine.choice(x) == {"p": 1}
    prog.configure({"knobs": {}})
    with pytest.raises(LookupError, match=r"affine\(\): variant <p=f32> was not built: the "
                                          r"build has the variants of configuration 'c.json'"):
        prog.affine(x)


@pytest.mark.parametrize("knobs, message", [
    ('{"p": {"value": 5}}',
     'c.json:2:12: error: knob \'p\': value 5 is outside its domain [0, 1] (labels "f32", '
     '"bf16")'),
    ('{"q": {"value": 1}}', "c.json:2:12: error: knob 'q': unknown knob (this build has p)"),
    ('{"p": {"thresholds": [1], "decisions": [0, 1]}}',
     "c.json:2:12: error: knob 'p': a static knob takes {\"value\": v}, not a decision tree"),
    (None, "approxcc: error: cannot read configuration 'c.json': No such file or directory"),
], ids=["range", "unknown", "tree", "missing"])
def test_a_wrong_build_configuration_is_a_diagnostic(tmp_path: Path, knobs: str | None,
                                                     message: str) -> None:
    (tmp_path / "model.py").write_text(MODEL)
    if knobs is not None:
        _config(tmp_path, knobs)
    done = run_approxcc(["model.py", "-o", "out", "--config", "c.json"], cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.startswith(message + "\n"), done.stderr
    assert not (tmp_path / "out").exists()


DYNAMIC = '''import numpy as np
from approxcc import approx


def half(params, x):
    return x @ params["w"] * 0.5


@approx.knob("sub", transform="func_substitute", variants=[half],
             state=approx.state("load"), thresholds=1, range=(0, 10))
@approx.knob("p", transform="precision", values=["f32", "bf16"])
def affine(params, x):
    return x @ params["w"]


APPROX_EXAMPLE_ARGS = {"affine": ({"w": np.ones((8, 4), np.float32)},
                                  np.ones((1, 8), np.float32))}
'''


def test_a_build_configuration_with_a_decision_tree_keeps_its_dispatch(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(DYNAMIC)
    config = tmp_path / "c.json"
    config.write_text('{"knobs": {"sub": {"thresholds": [5], "decisions": ["exact", "half"]},'
                      ' "p": {"value": "f32"}}}')
    manifest = build_model(tmp_path / "model.py", tmp_path / "tree", config=config)
    entry = manifest.functions["affine"]
    assert [v["name"] for v in entry["variants"]] == ["affine.exact", "affine.sub.half"]
    [dispatch] = entry["dispatches"]
    assert dispatch["static"] == {"p": 0} and "cpu" in dispatch["vmfb"]
    state = {"v": 0.0}
    prog = load(tmp_path / "tree", states={"load": lambda x: state["v"]})
    x = np.ones((1, 8), np.float32)
    assert prog.affine(x).tolist() == [[8.0] * 4] and prog.affine.last_entry == dispatch["id"]
    state["v"] = 7.0
    assert prog.affine(x).tolist() == [[4.0] * 4]
    # a static value of the state-driven knob: its variant alone, no dispatch
    config.write_text('{"knobs": {"sub": {"value": 1}}}')
    entry = build_model(tmp_path / "model.py", tmp_path / "value",
                        config=config).functions["affine"]
    assert [v["name"] for v in entry["variants"]] == ["affine.sub.half"]
    assert entry["dispatches"] == [] and "cpu" in entry["variants"][0]["vmfb"]


BF16_SOLVE = """import jax.numpy as jnp
import numpy as np
from approxcc import approx

A = (np.eye(8) * 4 + np.random.default_rng(0).standard_normal((8, 8))).astype(np.float32)


@approx.knob("p", transform="precision", values=["f32", "bf16"])
def solve(params, b):
    return jnp.linalg.solve(params["a"], b)


APPROX_EXAMPLE_ARGS = {"solve": ({"a": A}, np.ones((8, 2), np.float32))}
"""


def test_a_variant_jax_cannot_lower_is_an_error_at_its_knob(tmp_path: Path) -> None:
    """bf16 through jnp.linalg.solve: jax has no bf16 LU; a diagnostic at the knob, not an
    internal compiler error."""
    (tmp_path / "model.py").write_text(BF16_SOLVE)
    done = run_approxcc(["model.py", "-o", "out"], cwd=tmp_path)
    assert done.returncode == 1 and "internal compiler error" not in done.stderr
    assert done.stderr.startswith(f"{tmp_path / 'model.py'}:8:2: error: variant <p=bf16> of "
                                  "'solve' cannot be built: jax cannot lower it "
                                  "(NotImplementedError"), done.stderr
