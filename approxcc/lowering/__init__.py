"""approx lowering passes (paper steps 2–5), one file each; `registry` names them. The
transforms' own rewrite patterns live in approxcc/transforms."""
