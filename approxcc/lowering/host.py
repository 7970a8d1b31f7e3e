"""What code is generated with and for: the MLIR and LLVM tools of the installed wheels,
and the host's target triple (the one `cc` targets). Lowering needs these facts, and the
driver reads them from here, so they sit below both."""

from __future__ import annotations

import functools
import importlib.util
import shutil
import subprocess
from pathlib import Path

from approxcc.diagnostics import CompileError


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


@functools.cache
def host_triple() -> str:
    """The target triple code is generated for: LLVM's default target, as `cc` targets the
    host. Without it `opt` knows no target, so it neither vectorises nor lays out data as
    the C compiler does."""
    version = subprocess.run([tool("llc"), "--version"], capture_output=True, text=True,
                             check=True).stdout
    for line in version.splitlines():
        if "Default target:" in line:
            return line.split(":", 1)[1].strip()
    raise CompileError("cannot tell llc's default target triple")
