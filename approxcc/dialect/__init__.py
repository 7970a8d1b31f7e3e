"""The approx dialect: ops, verifiers and `make_knob`; `targets` and `symbols` hold the
queries that transforms and passes share."""

from approxcc.dialect.approx import (
    ML_SOURCE_ATTR,
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
    "Approx",
    "DecisionTreeOp",
    "ML_SOURCE_ATTR",
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
