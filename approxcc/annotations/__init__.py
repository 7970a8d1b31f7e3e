"""The approx annotation language for C/C++: parsing, checking and finding annotations."""

from approxcc.annotations.grammar import (
    Annotation,
    ClauseExpr,
    parse_annotation,
)
from approxcc.annotations.scanner import scan_annotations

__all__ = [
    "Annotation",
    "ClauseExpr",
    "parse_annotation",
    "scan_annotations",
]
