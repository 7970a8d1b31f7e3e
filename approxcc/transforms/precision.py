"""precision (ML only): compute in a narrower float type.

The label is the compute dtype of a decorated JAX function's variant: float weights and
inputs are cast to it inside the variant; float outputs are cast back to the exact
function's dtypes (approxcc.ml.transforms does the rewriting).
"""

from __future__ import annotations

from typing import Any

from approxcc.registry import MLKnob, TransformSpec, register

PRECISIONS = ("f32", "bf16", "f16")


def _label(v: Any) -> str | None:
    return None if v in PRECISIONS else f"is not one of {', '.join(PRECISIONS)}"


register(TransformSpec(
    name="precision",
    value_meaning="the compute dtype",
    exact=0,
    ml=MLKnob(defaults=PRECISIONS, check=_label, exact=None,
              meaning=f"one of {', '.join(f'`{p}`' for p in PRECISIONS)}"),
))
