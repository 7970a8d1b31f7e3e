"""The import-linter contracts (pyproject.toml, checked by `lint-imports` in `make test`)
cover the whole package: every subpackage of approxcc holding Python code sits in a layer,
and is a regular package, which import-linter can see (it skips namespace folders)."""

from __future__ import annotations

import tomllib

from conftest import ROOT


def _layered() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layers,) = (c["layers"] for c in config["contracts"] if c["type"] == "layers")
    return {name.strip("() ") for line in layers for name in line.split("|")}


def _subpackages() -> set[str]:
    return {f"approxcc.{d.name}" for d in (ROOT / "approxcc").iterdir()
            if d.is_dir() and any(d.glob("*.py"))}


def test_every_subpackage_is_in_a_layer() -> None:
    assert _subpackages() <= _layered(), sorted(_subpackages() - _layered())


def test_every_subpackage_is_a_regular_package() -> None:
    missing = sorted(p for p in _subpackages()
                     if not (ROOT / p.replace(".", "/") / "__init__.py").exists())
    assert not missing, f"{missing}: add an __init__.py so that import-linter sees them"
