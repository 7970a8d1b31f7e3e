"""The package is self-contained: a wheel built from the checkout, installed into a fresh
venv, compiles and runs the demo program from a folder outside the checkout, with the C
runtime it carries as package data."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT, cc, output_of, write_config

pytestmark = pytest.mark.package

SIGNAL = ROOT / "examples" / "perforation" / "signal.c"
RUNTIME_FILES = ["approxrt.c", "approxrt.h", "src/config.c", "src/errors.c", "src/json.c",
                 "src/manifest.c", "src/roi.c"]


def _run(*argv: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, f"{argv}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built from a copy of what packaging reads (so the checkout gains no
    build/ folder), without build isolation: the dev extra pins the backend."""
    src = tmp_path_factory.mktemp("src")
    shutil.copy(ROOT / "pyproject.toml", src)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "approxcc", src / "approxcc", symlinks=True, ignore=ignore)
    shutil.copytree(ROOT / "runtime", src / "runtime", ignore=ignore)
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", out, src,
         cwd=src)
    (built,) = out.glob("approxcc-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv (no system site-packages) holding the wheel without its dependencies;
    those come from this environment's site-packages through a .pth line, which adds the
    folder but runs none of its .pth files, so the checkout's editable install stays out."""
    env = tmp_path_factory.mktemp("venv") / "env"
    base = getattr(sys, "_base_executable", sys.executable)
    _run(base, "-m", "venv", "--without-pip", env, cwd=env.parent)
    python = env / "bin" / "python"
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))",
                     cwd=env).strip())
    (site / "approxcc-deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    _run(sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps",
         "--disable-pip-version-check", wheel, cwd=env.parent)
    return env


def _outside_env(home: Path) -> dict[str, str]:
    """No PYTHONPATH and a fresh HOME (so the runtime object is compiled anew, from the
    wheel's sources, into HOME/.cache)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["HOME"] = str(home)
    return env


def test_wheel_carries_the_runtime(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"approxcc/runtime/{f}" for f in RUNTIME_FILES} <= names
    assert "approxcc/cli.py" in names
    # the wheel holds every module of the package
    package = {p.relative_to(ROOT).as_posix() for p in (ROOT / "approxcc").rglob("*.py")
               if "__pycache__" not in p.parts}
    assert package <= names, sorted(package - names)


def test_installed_compiler_builds_and_runs_the_demo(venv: Path, tmp_path: Path) -> None:
    work = tmp_path / "outside"
    work.mkdir()
    shutil.copy(SIGNAL, work / "signal.c")
    env = _outside_env(tmp_path / "home")
    python = venv / "bin" / "python"

    where = _run(python, "-c", "import approxcc.driver.toolchain as t; import approxcc; "
                 "print(approxcc.__file__); print(t.RUNTIME_DIR)", cwd=work, env=env).split()
    assert all(Path(p).is_relative_to(venv) for p in where), where
    runtime = Path(where[1])

    approxcc = venv / "bin" / "approxcc"
    _run(approxcc, "signal.c", "-o", "exact", cwd=work, env=env)
    assert list((tmp_path / "home" / ".cache" / "approxcc").glob("libapproxrt-*.a"))
    cc("-O2", f"-I{runtime}", "signal.c", runtime / "approxrt.c", "-lm", "-o", "ref", cwd=work)
    args = ("64", "1024")
    exact = output_of(work / "exact", *args)
    assert exact == output_of(work / "ref", *args)

    config = write_config(work / "c.json", {"window_samples": {"value": 4}}, program="signal")
    _run(approxcc, "signal.c", "--config", config, "-o", "perforated", cwd=work, env=env)
    assert output_of(work / "perforated", *args) != exact
