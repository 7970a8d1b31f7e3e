"""Workloads for approxcc: real models (``workloads.models``) and data (``workloads.data``).

A sibling of the compiler, not part of it: examples, benchmarks and tests import it;
``approxcc`` never does. See README.md for the public API.
"""
