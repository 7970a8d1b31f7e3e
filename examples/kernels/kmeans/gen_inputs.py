"""Write the input files of kmeans: one line each, "SEED N D K".

N points in D dimensions around K hidden centres, K clusters.
See ../seeded_inputs.py for the tune/eval split and `--small`.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # examples/kernels
from seeded_inputs import SeededInputs  # noqa: E402

INPUTS = SeededInputs(full="100000 16 16", small="3000 8 6")
line, write = INPUTS.line, INPUTS.write

if __name__ == "__main__":
    INPUTS.main(__doc__, Path(__file__).parent / "inputs")
