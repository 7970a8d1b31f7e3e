"""quantize (ML only): store weights as int8/int4 with scales (weight-only or w8a8).

Integer weights (and, for w8a8, activations) in a variant: `int8`/`int4` store weight
matrices per output channel, `-gN` in groups of N rows, with float scales; `w8a8` also
quantises activations per row and multiplies in integer; `w8a16` quantises them to 16 bits,
split into two int8 halves that share one integer product (the weight read once); `w4a16`
stores unsigned 4-bit codes with a zero point per output channel and multiplies 16-bit
activations by them (int32 sums: IREE's s16u4s32 ukernel on AVX-512 VNNI), the weights
rotated (a signed Hadamard matrix in blocks along the contraction) so one outlier input
channel does not stretch every channel's 16 steps; `w4a16-mixed` stores the largest weight
(a language model's output head: most of a decode step's bytes) as `w4a16` and the others
as `w8a16`.
"""

from __future__ import annotations

import re
from typing import Any

from approxcc.registry import MLKnob, TransformSpec, register

QUANT_SCHEME = re.compile(
    r"none|w8a(?:8|16)|w4a16(?:-mixed)?|int(?P<bits>8|4)(?:-g(?P<group>[1-9][0-9]*))?")
# The schemes whose products are integer x integer: (weight bits, activation bits)
INTEGER_PRODUCTS = {"w8a8": (8, 8), "w8a16": (8, 16), "w4a16": (4, 16),
                    "w4a16-mixed": (4, 16)}
# ... whose weight bits are those of the largest weight, the others' 8
MIXED_SCHEMES = {"w4a16-mixed"}


def _label(v: Any) -> str | None:
    ok = isinstance(v, str) and QUANT_SCHEME.fullmatch(v)
    return None if ok else ("is not none, w8a8, w8a16, w4a16, w4a16-mixed, int8, int4, "
                            "int8-gN or int4-gN")


register(TransformSpec(
    name="quantize",
    value_meaning="the quantisation scheme",
    exact=0,
    ml=MLKnob(defaults=("none", "int8", "int4-g32", "w8a8"), check=_label, exact="none",
              meaning="`none`, `int8`, `int4`, `int8-gN`, `int4-gN` (groups of N rows), "
                      "`w8a8` or `w8a16` (int8 x int8 products, 16-bit activations as two "
                      "int8 halves), `w4a16` (unsigned int4 x int16 products, rotated weights), "
                      "`w4a16-mixed` (`w4a16` for the largest weight, `w8a16` for the rest)"),
))
