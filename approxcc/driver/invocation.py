"""How a shell runs this approxcc: what the jobs -### prints and the crash reproducers'
scripts start with. Imports nothing heavy: a crash report needs it when the rest of the
compiler cannot even be imported."""

from __future__ import annotations

import sys
from pathlib import Path


def approxcc_command() -> list[str]:
    """The console script beside the interpreter, else the interpreter on the entry point."""
    script = Path(sys.executable).parent / "approxcc"
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from approxcc.cli import main; "
            "sys.argv[0] = 'approxcc'; main()"]
