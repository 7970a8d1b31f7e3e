"""The approx dialect: ops, verifiers, the transform registry and `make_knob`."""

from approxcc.dialect.approx import (
    TARGETS,
    TRANSFORMS,
    Approx,
    DecisionTreeOp,
    KnobOp,
    TransformOp,
    TryOp,
    YieldOp,
    enclosing_knob,
    knobs,
    make_knob,
    parse_loc,
    verify_knobs,
)

__all__ = [
    "TARGETS",
    "TRANSFORMS",
    "Approx",
    "DecisionTreeOp",
    "KnobOp",
    "TransformOp",
    "TryOp",
    "YieldOp",
    "enclosing_knob",
    "knobs",
    "make_knob",
    "parse_loc",
    "verify_knobs",
]
