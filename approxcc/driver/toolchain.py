"""Where the tools of a build live: the MLIR and LLVM wheels, and the system C compiler."""

from __future__ import annotations

import functools
import importlib.util
import shutil
from pathlib import Path

from approxcc.diagnostics import CompileError

ROOT = Path(__file__).resolve().parents[2]
RUNTIME_DIR = ROOT / "runtime"


def _package_bin(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise CompileError(f"the '{package}' package is missing; run 'make setup'")
    return Path(spec.submodule_search_locations[0]) / "bin"


@functools.cache
def tool(name: str) -> str:
    """Absolute path of a toolchain executable (mlir-opt, opt, llc, FileCheck, cc, ...)."""
    for package in ("mlir", "llvm"):
        try:
            candidate = _package_bin(package) / name
        except CompileError:
            continue
        if candidate.exists():
            return str(candidate)
    found = shutil.which(name)
    if found is None:
        raise CompileError(f"cannot find the tool '{name}'")
    return found


def c_compiler() -> str:
    import os

    return os.environ.get("APPROXCC_CC") or tool("cc")
