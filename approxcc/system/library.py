"""The C half of a system: one tunable shared library, built once, loaded once per
configuration in the running process.

The runtime writes `$APPROX_CONFIG` into a library's knob tables when the library is loaded
(a constructor), and `dlopen` of a path already loaded returns the loaded copy; so each
configuration gets its own copy of the file, loaded with `APPROX_CONFIG` naming a document
of that configuration's C knobs only (the runtime rejects knobs it does not have). The few
most recent copies stay loaded.
"""

from __future__ import annotations

import _ctypes
import ctypes
import json
import os
import shutil
import tempfile
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from approxcc.diagnostics import CompileError
from approxcc.tune.space import KnobConfig, KnobSpace, config_hash, knob_space

RUNTIME_INCLUDE = Path(__file__).resolve().parents[2] / "runtime"
LOADED = 4      # library copies kept loaded


def clang_args(flags: list[str], root: Path) -> list[str]:
    return [*flags, f"-I{root}", f"-I{RUNTIME_INCLUDE}"]


def c_knob_space(sources: list[Path], args: list[str]) -> KnobSpace:
    """The knobs of the C sources, read from their approx IR."""
    from approxcc.frontend.c_parse import c_to_mlir

    return knob_space([c_to_mlir(str(src), args) for src in sources])


def build_library(sources: list[Path], args: list[str], output: Path) -> list[str]:
    """`approxcc -shared -fPIC --tunable -O2 ARGS SOURCES -o OUTPUT` (diagnostics to stderr);
    returns that command line."""
    from approxcc.driver.build import build
    from approxcc.driver.options import parse_args

    output.parent.mkdir(parents=True, exist_ok=True)
    argv = ["-shared", "-fPIC", "--tunable", "-O2", *args, *map(str, sources), "-o", str(output)]
    opts, errors = parse_args(argv)
    if errors:
        raise errors[0]
    if build(opts) != 0:
        raise CompileError(f"cannot build the system library '{output.name}'")
    return ["approxcc", *argv]


class TunableLibrary:
    """A built library and its loaded copies, by configuration."""

    def __init__(self, path: Path, space: KnobSpace, attach: Callable[[ctypes.CDLL], None]):
        self.path = path
        self.names = {k.name for k in space.knobs}
        self.attach = attach
        self.copies = Path(tempfile.mkdtemp(prefix="approx-system-"))
        self.loaded: OrderedDict[str, ctypes.CDLL] = OrderedDict()

    def c_knobs(self, knobs: KnobConfig | None) -> KnobConfig | None:
        """The library's part of a configuration (None: exact)."""
        if knobs is None:
            return None
        return {n: e for n, e in knobs.items() if n in self.names}

    def load(self, knobs: KnobConfig | None) -> ctypes.CDLL:
        """The library under the C knobs of `knobs` (None: the exact build)."""
        mine = self.c_knobs(knobs)
        key = "exact" if mine is None else config_hash(mine)
        lib = self.loaded.get(key)
        if lib is not None:
            self.loaded.move_to_end(key)
            return lib
        copy = self.copies / f"{key}.so"
        shutil.copyfile(self.path, copy)
        config = self.copies / f"{key}.json"
        config.write_text(json.dumps({"approxcc": "1", "knobs": mine or {}}))
        saved = os.environ.pop("APPROX_CONFIG", None)
        if mine is not None:
            os.environ["APPROX_CONFIG"] = str(config)
        try:
            lib = ctypes.CDLL(str(copy), mode=os.RTLD_LOCAL)
        finally:
            os.environ.pop("APPROX_CONFIG", None)
            if saved is not None:
                os.environ["APPROX_CONFIG"] = saved
        self.attach(lib)
        self.loaded[key] = lib
        if len(self.loaded) > LOADED:
            _, old = self.loaded.popitem(last=False)
            _ctypes.dlclose(old._handle)
        return lib

    def close(self) -> None:
        shutil.rmtree(self.copies, ignore_errors=True)
