"""Write the input files of lavamd: one line each, "SEED DIM MEAN_COUNT".

A DIM^3 grid of boxes, MEAN_COUNT particles per box on average.
See ../seeded_inputs.py for the tune/eval split and `--small`.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # examples/kernels
from seeded_inputs import SeededInputs  # noqa: E402

INPUTS = SeededInputs(full="12 40", small="4 20")
line, write = INPUTS.line, INPUTS.write

if __name__ == "__main__":
    INPUTS.main(__doc__, Path(__file__).parent / "inputs")
