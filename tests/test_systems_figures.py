"""examples/systems/README.md's figures are those of the shipped configurations: its block
between the figures markers is what examples/systems/figures.py prints from the
configs' JSON (`python examples/systems/figures.py --write` rewrites it)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = ROOT / "examples" / "systems"


def _figures():
    spec = importlib.util.spec_from_file_location("systems_figures", SYSTEMS / "figures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_block_is_the_scripts_output():
    figures = _figures()
    block = figures.readme_block((SYSTEMS / "README.md").read_text())
    assert block == figures.render(), (
        "examples/systems/README.md's figures differ from the configs: run "
        "`python examples/systems/figures.py --write`")


def test_every_shipped_config_is_in_the_table():
    figures = _figures()
    table = figures.render()
    for path in SYSTEMS.glob("*/configs/budget-*.json"):
        link = f"({path.relative_to(SYSTEMS).as_posix()})"
        assert link in table, path
        speedup = json.loads(path.read_text())["speedup"]["tune"]
        assert f"{speedup:.2f}x" in table, path


def test_write_rewrites_only_the_block(tmp_path):
    figures = _figures()
    readme = tmp_path / "README.md"
    readme.write_text(f"# head\n\n{figures.BEGIN}\nstale\n{figures.END}\n\ntail\n")
    assert figures.write(readme, SYSTEMS)
    text = readme.read_text()
    assert text.startswith("# head\n\n") and text.endswith(f"{figures.END}\n\ntail\n")
    assert figures.readme_block(text) == figures.render(SYSTEMS)
    assert not figures.write(readme, SYSTEMS)           # unchanged the second time


def test_decision_trees_read_in_words():
    figures = _figures()
    assert figures.knob_value("dims", {"value": 8}) == "1/8"
    assert figures.knob_value("llm_answer", {"value": 4}) == "6 tokens"
    assert (figures.knob_value("llm_quant", {"thresholds": [30], "decisions": [0, 1]})
            == "< 30: f32, else W8A8")
