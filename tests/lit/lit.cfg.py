"""lit configuration: approx passes and verifier diagnostics, checked with FileCheck."""

import os
from pathlib import Path

import lit.formats

config.name = "approxcc"  # noqa: F821 (lit injects `config`)
config.test_format = lit.formats.ShTest(execute_external=False)  # noqa: F821
config.suffixes = [".mlir"]  # noqa: F821
config.test_source_root = os.path.dirname(__file__)  # noqa: F821

root = Path(__file__).resolve().parents[2]
site = next((root / ".venv" / "lib").glob("python3.*/site-packages"))
python = root / ".venv" / "bin" / "python"
# The console script may not be installed in the venv; run the CLI module directly.
approxcc = (f"env PYTHONPATH={root} {python} -c "
            "'import sys; sys.argv[0] = \"approxcc\"; from approxcc.cli import main; main()'")
config.substitutions.append(("%approxcc", approxcc))  # noqa: F821
config.environment["PATH"] = os.pathsep.join(  # noqa: F821
    [str(site / "llvm" / "bin"), str(site / "mlir" / "bin"), str(python.parent),
     config.environment.get("PATH", os.environ.get("PATH", ""))])  # noqa: F821
