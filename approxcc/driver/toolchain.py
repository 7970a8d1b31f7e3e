"""Where the tools of a build live: the MLIR and LLVM wheels (lowering/host.py), the system
C compiler, and approxcc's own runtime, which every link adds as clang adds its runtime.

The runtime's C sources are package data of `approxcc.runtime` (the checkout's runtime/),
so an installed wheel carries them; a build compiles them once into a cached object."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

from approxcc.diagnostics import CompileError
from approxcc.lowering.host import host_triple, tool

# A real folder (wheels install unzipped): cc needs paths for -I and the sources.
RUNTIME_DIR = Path(str(files("approxcc.runtime").joinpath("approxrt.h"))).resolve().parent
# The one translation unit a program links (approxrt.c #includes its parts under src/).
RUNTIME_SOURCE = RUNTIME_DIR / "approxrt.c"


def c_compiler() -> str:
    return os.environ.get("APPROXCC_CC") or tool("cc")


def cxx_compiler() -> str:
    return os.environ.get("APPROXCC_CXX") or tool("c++")


def version_banner() -> str:
    """What `--version`, `-v` and `-###` print first, as clang does."""
    from approxcc import __version__

    return (f"approxcc version {__version__}\nTarget: {host_triple()}\nThread model: posix\n"
            f"InstalledDir: {Path(sys.executable).parent}")


def runtime_files() -> list[Path]:
    """Every file the runtime object is built from: approxrt.c, its parts, the header."""
    return sorted(p for p in RUNTIME_DIR.rglob("*") if p.suffix in (".c", ".h"))


def runtime_archive() -> Path:
    """Where the compiled runtime lives: one archive per content hash of its sources. An
    archive, as clang's compiler-rt: a link takes it only when an object uses it."""
    digest = hashlib.sha256()
    for path in runtime_files():
        digest.update(path.relative_to(RUNTIME_DIR).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return Path.home() / ".cache" / "approxcc" / f"libapproxrt-{digest.hexdigest()[:16]}.a"


def ensure_runtime_archive() -> Path:
    """Compile the runtime once (an atomic rename: parallel builds never see half of it)."""
    archive = runtime_archive()
    if archive.exists():
        return archive
    archive.parent.mkdir(parents=True, exist_ok=True)
    obj = archive.with_suffix(f".{os.getpid()}.o")
    tmp = archive.with_suffix(f".{os.getpid()}.tmp.a")
    for argv in ([c_compiler(), "-O2", "-fPIC", "-c", str(RUNTIME_SOURCE), "-I",
                  str(RUNTIME_DIR), "-o", str(obj)], ["ar", "rcs", str(tmp), str(obj)]):
        proc = subprocess.run(argv, capture_output=True, text=True)
        if proc.returncode != 0:
            obj.unlink(missing_ok=True)
            raise CompileError(f"cannot build the approxcc runtime:\n{proc.stderr.strip()}")
    obj.unlink()
    tmp.replace(archive)
    return archive
