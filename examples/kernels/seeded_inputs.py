"""Inputs of the synthetic kernels (lavamd, kmeans, pagerank): one line each, the seed then the
size parameters. The program synthesises its data from that line, so inputs stay tiny while
every seed is a different problem. `inputs/tune` gets TUNE seeds and `inputs/eval` five times
as many others (disjoint seeds); `--small` writes the reduced size the tests use.
"""

from __future__ import annotations

import argparse
from pathlib import Path

TUNE = 5  # the pick's loss margin shrinks with the number of tuning inputs (t · sd / √n)


class SeededInputs:
    def __init__(self, full: str, small: str):
        self.full, self.small = full, small  # the size parameters after the seed

    def line(self, seed: int, small: bool = False) -> str:
        """One input: the generator's parameters for `seed`, full size or small."""
        return f"{seed} {self.small if small else self.full}\n"

    def write(self, out: Path, small: bool = False) -> list[Path]:
        """inputs/tune/NN.txt (seeds 1..TUNE) and inputs/eval/NN.txt (the next 5 * TUNE)."""
        written = []
        for folder, seeds in (("tune", range(1, TUNE + 1)),
                              ("eval", range(TUNE + 1, 6 * TUNE + 1))):
            (out / folder).mkdir(parents=True, exist_ok=True)
            for n, seed in enumerate(seeds):
                path = out / folder / f"{n:02d}.txt"
                path.write_text(self.line(seed, small))
                written.append(path)
        return written

    def main(self, doc: str, default_out: Path) -> None:
        parser = argparse.ArgumentParser(description=doc.splitlines()[0])
        parser.add_argument("--small", action="store_true", help="the tests' reduced size")
        parser.add_argument("--out", type=Path, default=default_out)
        args = parser.parse_args()
        for path in self.write(args.out, args.small):
            print(path)
