"""Weights of an exported module as IREE parameters instead of function arguments.

``jax.export`` makes every weight an argument of ``@main``. To IREE an argument is a new
value on every call, so whatever the compiler derives from a weight alone (the transpose a
``dot_general`` wants, the packed layout of data tiling, ...) is recomputed on every call.
``as_parameters`` turns the first ``n`` arguments into immutable ``util.global``s backed by
named parameters (``#flow.parameter.named<"model"::"pK">``): IREE's const-expr hoisting
then moves that work into the module initializer, run once when the weights are loaded.
``parameters_module`` serves the arrays to the runtime from memory.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import iree.runtime as ireert
import ml_dtypes
import numpy as np

SCOPE = "model"
_MAIN = "func.func public @main("
_TENSOR = re.compile(r"\s*(tensor<[^>]*>)")


def _split_top_level(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch in "(<{[") - (ch in ")>}]")
        if ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    return [*parts, tail] if tail else parts


def _closing_paren(text: str, start: int) -> int:
    depth = 1
    for i in range(start, len(text)):
        depth += (text[i] == "(") - (text[i] == ")")
        if depth == 0:
            return i
    raise ValueError("unbalanced parentheses in @main's signature")


def as_parameters(mlir: str, n: int) -> str:
    """``mlir`` (StableHLO text of ``jax.export``) with ``@main``'s first ``n`` arguments
    read from parameters ``p0 .. p{n-1}`` of scope ``SCOPE`` instead."""
    begin = mlir.index(_MAIN) + len(_MAIN)
    end = _closing_paren(mlir, begin)
    args = _split_top_level(mlir[begin:end])
    if len(args) < n:
        raise ValueError(f"@main has {len(args)} arguments, fewer than {n} weights")
    globals_, loads = [], []
    for k, arg in enumerate(args[:n]):
        name, rest = arg.split(":", 1)
        match = _TENSOR.match(rest)
        if match is None:
            raise ValueError(f"weight argument {name} is not a tensor: {arg}")
        ty = match.group(1)
        globals_.append(f'  util.global private @p{k} = '
                        f'#flow.parameter.named<"{SCOPE}"::"p{k}"> : {ty}\n')
        loads.append(f"    {name.strip()} = util.global.load @p{k} : {ty}\n")
    body = mlir.index("\n", mlir.index("{", end)) + 1
    text = mlir[:begin] + ", ".join(args[n:]) + mlir[end:body] + "".join(loads) + mlir[body:]
    module = text.index("\n", text.index("{", text.index("module @"))) + 1
    return text[:module] + "".join(globals_) + text[module:]


def parameters_module(instance: ireert.VmInstance, arrays: Sequence[np.ndarray]
                      ) -> ireert.VmModule:
    """An ``io_parameters`` module serving ``arrays`` as ``p0, p1, ...`` of ``SCOPE``."""
    index = ireert.ParameterIndex()
    for k, array in enumerate(arrays):
        data = np.ascontiguousarray(array)
        if data.dtype == ml_dtypes.bfloat16:  # the buffer protocol has no bf16: its bits
            data = data.view(np.uint16)
        index.add_buffer(f"p{k}", data)
    return ireert.create_io_parameters_module(instance, index.create_provider(scope=SCOPE))
