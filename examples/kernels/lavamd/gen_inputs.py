"""Write the input files of lavamd: one line each, "SEED DIM MEAN_COUNT".

A DIM^3 grid of boxes, MEAN_COUNT particles per box on average. The program synthesises
its data from that line, so inputs stay tiny while every seed is a different problem.
`inputs/tune` gets TUNE seeds and `inputs/eval` five times as many others (disjoint
seeds); `--small` writes the reduced size the tests use.

    python gen_inputs.py                 # inputs/tune, inputs/eval (what approx.toml reads)
    python gen_inputs.py --small --out DIR
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
