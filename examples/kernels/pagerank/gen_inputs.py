"""Write the input files of pagerank: one line each, "SEED N DEGREE".

N vertices, N * DEGREE power-law edges. The program synthesises
its data from that line, so inputs stay tiny while every seed is a different problem.
`inputs/tune` gets TUNE seeds and `inputs/eval` five times as many others (disjoint
seeds); `--small` writes the reduced size the tests use.

    python gen_inputs.py                 # inputs/tune, inputs/eval (what approx.toml reads)
    python gen_inputs.py --small --out DIR
"""

from __future__ import annotations

import argparse
from pathlib import Path

TUNE = 2


def line(seed: int, small: bool = False) -> str:
    """One input: the generator's parameters for `seed`, full size or small."""
    return (f"{seed} 5000 8" if small else f"{seed} 500000 10") + "\n"


def write(out: Path, small: bool = False) -> list[Path]:
    """inputs/tune/NN.txt (seeds 1..TUNE) and inputs/eval/NN.txt (the next 5 * TUNE)."""
    written = []
    for folder, seeds in (("tune", range(1, TUNE + 1)),
                          ("eval", range(TUNE + 1, 6 * TUNE + 1))):
        (out / folder).mkdir(parents=True, exist_ok=True)
        for n, seed in enumerate(seeds):
            path = out / folder / f"{n:02d}.txt"
            path.write_text(line(seed, small))
            written.append(path)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="the tests' reduced size")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "inputs")
    args = parser.parse_args()
    for path in write(args.out, args.small):
        print(path)


if __name__ == "__main__":
    main()
