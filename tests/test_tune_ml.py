"""`approxcc tune` on a JAX program (examples/ml_tune): approx.toml names a .py, the ML build
makes its variants once, the tuner runs the entry under each configuration."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import run_approxcc

from approxcc.tune.qos import accuracy_arrays, array_metric, metric, rel_l2_arrays

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "ml_tune"
BUDGETS = (0.01, 0.05)
TOML = (EXAMPLE / "approx.toml").read_text()


def test_a_jax_program_is_tuned_like_a_c_program(tmp_path: Path) -> None:
    """The example tuned end to end: a real build, real runs, a short search (one test: its
    minute of build and tuning is paid once, however pytest-xdist spreads the tests)."""
    out = tmp_path / "tuned"
    done = run_approxcc(["tune", EXAMPLE, "--qos-budget", "1%,5%", "--time-limit", "10s",
                         "--confirm-repeats", "3", "--confirm-candidates", "1",
                         "--out", out])
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert (out / "pareto.png").stat().st_size > 10_000
    for column in ("speedup tune", "speedup eval", "loss tune (bound)", "loss eval"):
        assert column in done.stdout
    assert "speedups over the faster of exact build" in done.stdout
    assert "jax.jit" in done.stdout
    for budget in BUDGETS:
        config = json.loads((out / f"{budget * 100:g}pct.json").read_text())
        qos = config["qos"]
        assert config["program"] == "mlp" and qos["metric"] == "relL2"
        assert qos["loss_tune"] <= qos["loss_bound"] <= budget
        # the held-out loss is within the budget, or the report says it is not
        assert qos["loss_eval"] is not None
        assert (qos["loss_eval"] <= budget) != qos["over_budget_on_eval"]
        if qos["over_budget_on_eval"]:
            assert f"the {budget:.1%} pick loses" in done.stdout
        assert config["speedup"]["tune"] > 0 and config["speedup"]["eval"] > 0
        assert set(config["reference"]) == {"exact build", "jax.jit"}
        assert set(config["knobs"]) <= {"precision", "weights", "depth"}

    # the generator's inputs, held out from the tuning ones
    inputs = out / "work" / "build" / "inputs"
    assert len(list((inputs / "tune").iterdir())) == 4
    assert len(list((inputs / "eval").iterdir())) == 12

    # a budget's configuration file is what `load(build, config=...)` takes
    from approxcc.ml.runtime import load

    build = out / "work" / "build" / "model"
    x = np.load(next((inputs / "eval").iterdir()))["arr_0"]
    exact = load(build).classify(x)
    picked = load(build, config=out / "5pct.json").classify(x)
    assert picked.shape == exact.shape == (8, 16) and np.all(np.isfinite(picked))
    assert rel_l2_arrays(exact, picked) < 0.2


def project(tmp_path: Path, toml: str = TOML, model: str | None = None) -> Path:
    shutil.copy(EXAMPLE / "model.py", tmp_path / "model.py")
    if model is not None:
        (tmp_path / "model.py").write_text(model)
    (tmp_path / "approx.toml").write_text(toml)
    return tmp_path


@pytest.mark.parametrize("edit, message", [
    (('entry = "classify"', 'entry = "clasify"'),
     "approx.toml:5:1: error: 'clasify' is not a function of 'model.py' (its decorated "
     "functions: classify)"),
    (('inputs = "model:inputs"', 'inputs = "model:batches"'),
     "approx.toml:8:1: error: 'model:batches': module 'model' has no function 'batches'"),
    (('inputs = "model:inputs"', 'inputs = "inputs"'),
     "approx.toml:8:1: error: 'inputs' must be 'module:function'"),
    (('inputs = "model:inputs"', 'inputs = "data:inputs"'),
     "approx.toml:8:1: error: 'data:inputs': cannot import module 'data'"),
    (('inputs = "model:inputs"', 'inputs = "model:inputs"\nargs = ["{input}"]'),
     "approx.toml:9:1: error: 'args' is not a key of this program: a JAX program (a .py "
     "source) is run by calling its 'entry'"),
    (('inputs = "model:inputs"', 'inputs = "model:inputs"\ntune = ["*.npz"]'),
     "approx.toml:9:1: error: 'tune' and 'inputs' both give the inputs"),
    (('inputs = "model:inputs"', 'tune = ["*.npz"]\neval = ["*.npy"]'),
     "approx.toml:8:1: error: '*.npz' matches no input file"),
    (('inputs = "model:inputs"', ''), "approx.toml:7:1: error: missing 'inputs' in [run]"),
    (('entry = "classify"', '# entry = "classify"'),
     "approx.toml:2:1: error: missing 'entry' in [program]"),
    (('metric = "relL2"', 'metric = "rbo"'),
     "approx.toml:11:1: error: unknown QoS metric 'rbo' for a JAX program's outputs"),
    (('sources = ["model.py"]', 'sources = ["model.py", "model.py"]'),
     "approx.toml:4:1: error: a JAX program has one source"),
])
def test_mistakes_in_approx_toml_are_diagnostics(tmp_path: Path, edit: tuple[str, str],
                                                 message: str) -> None:
    assert edit[0] in TOML
    folder = project(tmp_path, TOML.replace(edit[0], edit[1]))
    done = run_approxcc(["tune", folder, "--qos-budget", "1%"], cwd=folder)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert message in done.stderr, done.stderr


def test_tuning_inputs_equal_to_held_out_ones_are_an_error(tmp_path: Path) -> None:
    """Caught before the build: the generator ignores its split."""
    model = (EXAMPLE / "model.py").read_text()
    assert 'seed, count = {"tune": (1, 4), "eval": (2, 12)}[split]' in model
    model = model.replace('{"tune": (1, 4), "eval": (2, 12)}[split]', "(1, 4)")
    folder = project(tmp_path, model=model)
    done = run_approxcc(["tune", folder, "--qos-budget", "1%"], cwd=folder)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "approx.toml:8:1: error: tuning and evaluation inputs must be disjoint: held-out " \
           "input 'eval/0000.npz' is tuning input 'tune/0000.npz'" in done.stderr


def test_an_exception_in_the_generator_is_at_its_line(tmp_path: Path) -> None:
    """Raised when the tuner asks for the held-out inputs (the module's import asked for
    the tuning ones only), before the build."""
    model = (EXAMPLE / "model.py").read_text()
    split_line = '    seed, count = {"tune": (1, 4), "eval": (2, 12)}[split]\n'
    assert split_line in model
    model = model.replace(split_line, split_line + '    if split == "eval":\n'
                          '        raise ValueError("no held-out data")\n')
    folder = project(tmp_path, model=model)
    done = run_approxcc(["tune", folder, "--qos-budget", "1%"], cwd=folder)
    line = model.splitlines().index('        raise ValueError("no held-out data")') + 1
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"model.py:{line}:9: error: ValueError: no held-out data" in done.stderr, \
        done.stderr


def test_numeric_metrics() -> None:
    y = np.array([[3.0, 4.0], [0.0, 1.0]], np.float32)
    assert rel_l2_arrays(y, y) == 0.0
    assert rel_l2_arrays(y, y * 1.01) == pytest.approx(0.01, rel=1e-4)
    assert rel_l2_arrays(y, y[:1]) == 1.0 and rel_l2_arrays(y, y * np.nan) == 1.0
    assert rel_l2_arrays((y, y), (y, y + 0.0)) == 0.0
    assert accuracy_arrays(y, np.array([[4.0, 3.0], [0.0, 1.0]])) == 0.5   # argmax per row
    assert accuracy_arrays(np.array([1, 2, 3, 4]), np.array([1, 2, 0, 4])) == 0.25
    relative = array_metric("relL2")
    assert relative([y, y], [y, y * 1.02]) == pytest.approx(0.01, rel=1e-3)
    # relL2 of text is l2 (which is relative already)
    assert metric("relL2")(["3 4"], ["3 4.05"]) == metric("l2")(["3 4"], ["3 4.05"])


def test_a_model_in_another_folder_imports_its_neighbours(tmp_path: Path) -> None:
    """approx.toml may name a model elsewhere; the model's own folder is on sys.path as
    under `approxcc model.py` (it imported nothing beside it before)."""
    from approxcc.tune.ml_program import _Session
    from approxcc.tune.program import load_program

    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helpers.py").write_text("SCALE = 3\n")
    (tmp_path / "lib" / "model.py").write_text(
        "import numpy as np\nfrom helpers import SCALE\nfrom approxcc import approx\n\n\n"
        '@approx.knob("p", transform="precision", values=["f32", "bf16"])\n'
        "def f(w, x):\n    return x * w * SCALE\n\n\n"
        'APPROX_EXAMPLE_ARGS = {"f": (np.float32(2), np.ones(4, np.float32))}\n')
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "data.py").write_text(
        "import numpy as np\n\n\ndef inputs(split):\n"
        "    return [(np.full(4, 1 if split == 'tune' else 2, np.float32),)]\n")
    (tmp_path / "proj" / "approx.toml").write_text(
        '[program]\nname = "m"\nsources = ["../lib/model.py"]\nentry = "f"\n'
        '[run]\ninputs = "data:inputs"\n')
    session = _Session(load_program(str(tmp_path / "proj")))
    assert session.module.SCALE == 3


def test_the_exact_build_is_timed_with_its_outputs_on_the_device_as_jax_jit() -> None:
    """jax.jit's side leaves its outputs on the device; the build's timed calls do too
    (`on_device`): reading a fresh jax.Array back (~16 us an output) put mnist_mlp's exact
    build 15% behind jax.jit in the tuner's reference. The kept output is the host's."""
    import numpy as np

    from approxcc.tune.ml_program import _rounds, _Side

    ran: list[str] = []
    side = _Side(lambda: ran.append("host") or np.ones(2),
                 timed=lambda: ran.append("device") or np.zeros(2))
    _rounds([side], 1, 10.0)
    assert ran[0] == "host" and set(ran[1:]) == {"device"} and len(ran) > 1
    assert side.output.tolist() == [1.0, 1.0]
