"""The lit suite (tests/lit: FileCheck tests of the passes, the verifier's diagnostics, the
frontend's IR) run as one test, so that `make test`'s pytest workers share it with the other
files instead of waiting for it after them; `lit -sv tests/lit` runs it alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import ROOT

LIT = Path(sys.executable).parent / "lit"


def test_lit_suite_passes() -> None:
    # One lit worker: pytest's workers already use every core.
    done = subprocess.run([str(LIT), "-sv", "-j1", str(ROOT / "tests" / "lit")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-5000:]
    assert "Passed:" in done.stdout, done.stdout    # it found the tests
