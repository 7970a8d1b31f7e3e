"""approxcc: the accuracy-aware compiler for compound AI systems."""

__version__ = "0.1.0"
