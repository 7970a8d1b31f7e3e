"""QoS metrics (spec/tuning.md): loss = 1 - accuracy, in [0, 1]."""

from __future__ import annotations

import math
import re

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan)", re.I)


def numbers(text: str) -> list[float]:
    """Every number in a program's output, in order: the output as a vector."""
    return [float(m) for m in _NUMBER.findall(text)]


def l2_loss(exact: str, approx: str) -> float:
    """1 - max(0, 1 - ||y_exact - y|| / ||y_exact||) over the outputs as vectors of numbers.

    Outputs of different lengths, or with non-finite numbers, are as bad as it gets (1.0)."""
    y, z = numbers(exact), numbers(approx)
    if len(y) != len(z) or not all(map(math.isfinite, z)):
        return 1.0
    norm = math.sqrt(sum(a * a for a in y))
    diff = math.sqrt(sum((a - b) ** 2 for a, b in zip(y, z, strict=True)))
    if norm == 0.0:
        return 0.0 if diff == 0.0 else 1.0
    return 1.0 - max(0.0, 1.0 - diff / norm)
