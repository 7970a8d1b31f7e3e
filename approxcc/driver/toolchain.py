"""Where the tools of a build live: the MLIR and LLVM wheels, the system C compiler, and
approxcc's own runtime (runtime/), which every link adds as clang adds its runtime."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
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


def c_compiler() -> str:
    return os.environ.get("APPROXCC_CC") or tool("cc")


def cxx_compiler() -> str:
    return os.environ.get("APPROXCC_CXX") or tool("c++")


def version_banner() -> str:
    """What `--version`, `-v` and `-###` print first, as clang does."""
    from approxcc import __version__

    return (f"approxcc version {__version__}\nTarget: {host_triple()}\nThread model: posix\n"
            f"InstalledDir: {Path(sys.executable).parent}")


def runtime_object() -> Path:
    """Where runtime/approxrt.c compiled lives: one object per content hash."""
    digest = hashlib.sha256((RUNTIME_DIR / "approxrt.c").read_bytes() +
                            (RUNTIME_DIR / "approxrt.h").read_bytes()).hexdigest()[:16]
    return Path.home() / ".cache" / "approxcc" / f"approxrt-{digest}.o"


def ensure_runtime_object() -> None:
    """Compile the runtime once (an atomic rename: parallel builds never see half of it)."""
    obj = runtime_object()
    if obj.exists():
        return
    obj.parent.mkdir(parents=True, exist_ok=True)
    tmp = obj.with_suffix(f".{os.getpid()}.tmp.o")
    proc = subprocess.run([c_compiler(), "-O2", "-fPIC", "-c", str(RUNTIME_DIR / "approxrt.c"),
                           "-I", str(RUNTIME_DIR), "-o", str(tmp)], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise CompileError(f"cannot compile the approxcc runtime:\n{proc.stderr.strip()}")
    tmp.replace(obj)
