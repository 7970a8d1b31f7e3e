"""lit configuration: approx passes and verifier diagnostics, checked with FileCheck."""

import os
from pathlib import Path

import lit.formats

config.name = "approxcc"  # noqa: F821 (lit injects `config`)
config.test_format = lit.formats.ShTest(execute_external=False)  # noqa: F821
config.suffixes = [".mlir", ".c"]  # noqa: F821
config.test_source_root = os.path.dirname(__file__)  # noqa: F821

root = Path(__file__).resolve().parents[2]
site = next((root / ".venv" / "lib").glob("python3.*/site-packages"))
python = root / ".venv" / "bin" / "python"
# `make setup` installs the console script into the venv (editable, so it runs this tree).
config.substitutions.append(("%approxcc", str(python.parent / "approxcc")))  # noqa: F821
config.environment["PATH"] = os.pathsep.join(  # noqa: F821
    [str(site / "llvm" / "bin"), str(site / "mlir" / "bin"), str(python.parent),
     config.environment.get("PATH", os.environ.get("PATH", ""))])  # noqa: F821
