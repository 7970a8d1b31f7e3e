"""approxcc: the accuracy-aware compiler for compound AI systems."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """`from approxcc import approx, AnnotationError`, imported on first use (no JAX)."""
    if name == "approx":
        from approxcc.ml import approx
        return approx
    if name == "AnnotationError":
        from approxcc.ml.approx import AnnotationError
        return AnnotationError
    raise AttributeError(f"module 'approxcc' has no attribute {name!r}")
