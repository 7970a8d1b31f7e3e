"""Read GGUF files (metadata and tensors) into numpy.

Tensors come back in numpy's natural layout for GGUF: a linear weight is ``(out, in)``
(row ``o`` holds the weights of output ``o``), an embedding is ``(vocab, d)``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gguf
import numpy as np


@dataclass(frozen=True)
class QuantizedTensor:
    """A GGUF tensor kept in its quantized blocks (``raw``: one row of blocks per output)."""

    raw: np.ndarray
    qtype: gguf.GGMLQuantizationType
    shape: tuple[int, ...]

    def dequantize(self) -> np.ndarray:
        return np.asarray(gguf.quants.dequantize(self.raw, self.qtype), np.float32).reshape(
            self.shape
        )


Tensor = np.ndarray | QuantizedTensor

# struct formats, which numpy reads as the same dtypes
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "?",
            10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_UNQUANTIZED = (gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16,
                gguf.GGMLQuantizationType.BF16)


@dataclass(frozen=True)
class _TensorInfo:
    name: str
    dims: tuple[int, ...]  # GGUF order: fastest-varying first
    qtype: gguf.GGMLQuantizationType
    offset: int


class _Parser:
    """Sequential reader of GGUF header fields (little-endian), over a memoryview: slicing a
    memmap builds an array object a field, 262k of them for a vocabulary."""

    def __init__(self, buf: memoryview) -> None:
        self.buf = buf
        self.off = 0

    def scalar(self, code: str) -> Any:
        (value,) = struct.unpack_from(code, self.buf, self.off)
        self.off += struct.calcsize(code)
        return value

    def string(self) -> str:
        n = self.scalar("<Q")
        text = bytes(self.buf[self.off:self.off + n]).decode("utf-8", errors="replace")
        self.off += n
        return text

    def value(self, vtype: int) -> Any:
        if vtype == _STRING:
            return self.string()
        if vtype != _ARRAY:
            return self.scalar(_SCALARS[vtype])
        itype, n = self.scalar("<I"), self.scalar("<Q")
        if itype in _SCALARS:
            dtype = np.dtype(_SCALARS[itype])
            values = np.frombuffer(self.buf, dtype, n, self.off).tolist()
            self.off += n * dtype.itemsize
            return values
        return [self.value(itype) for _ in range(n)]


class GGUFFile:
    """Metadata and tensors of one GGUF file (v2/v3), memory-mapped.

    Our own header parser: ``gguf.GGUFReader`` builds a numpy view per field part and takes
    15 s on Gemma's 262k-entry vocabulary; this reads it in well under a second.
    Dequantization uses ``gguf.quants.dequantize``.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._data = np.memmap(self.path, dtype=np.uint8, mode="r")
        parser = _Parser(memoryview(self._data))
        if bytes(self._data[:4]) != b"GGUF":
            raise ValueError(f"{self.path} is not a GGUF file")
        parser.off = 4
        version = parser.scalar("<I")
        if version not in (2, 3):
            raise ValueError(f"{self.path}: unsupported GGUF version {version}")
        n_tensors, n_fields = parser.scalar("<Q"), parser.scalar("<Q")
        self.metadata: dict[str, Any] = {}
        for _ in range(n_fields):
            key = parser.string()
            self.metadata[key] = parser.value(parser.scalar("<I"))
        self._infos: list[_TensorInfo] = []
        for _ in range(n_tensors):
            name = parser.string()
            dims = tuple(parser.scalar("<Q") for _ in range(parser.scalar("<I")))
            qtype = gguf.GGMLQuantizationType(parser.scalar("<I"))
            self._infos.append(_TensorInfo(name, dims, qtype, parser.scalar("<Q")))
        align = int(self.metadata.get("general.alignment", 32))
        self._start = (parser.off + align - 1) // align * align
        self.architecture: str = self.metadata["general.architecture"]

    def get(self, key: str, default: Any = None) -> Any:
        """A metadata value; ``.key`` stands for ``{architecture}.key``."""
        if key.startswith("."):
            key = self.architecture + key
        return self.metadata.get(key, default)

    def array(self, key: str) -> list[Any] | None:
        """An array field such as ``tokenizer.ggml.tokens``."""
        value = self.metadata.get(key)
        return None if value is None else list(value)

    def tensor_names(self) -> list[str]:
        return [info.name for info in self._infos]

    def tensor_bytes(self) -> int:
        """The bytes of every tensor as stored (quantized blocks included)."""
        return sum(self._raw(info).nbytes for info in self._infos)

    def _raw(self, info: _TensorInfo) -> np.ndarray:
        block, type_size = gguf.GGML_QUANT_SIZES[info.qtype]
        rows = int(np.prod(info.dims[1:], dtype=np.int64))
        row_bytes = info.dims[0] // block * type_size
        begin = self._start + info.offset
        return self._data[begin:begin + rows * row_bytes].reshape(rows, row_bytes)

    def tensors(self, keep_quantized: bool = False) -> dict[str, Tensor]:
        """Every tensor: float32 arrays, or ``QuantizedTensor`` for quantized ones if asked."""
        out: dict[str, Tensor] = {}
        for info in self._infos:
            shape = tuple(reversed(info.dims))
            raw = self._raw(info)
            if info.qtype in _UNQUANTIZED:
                out[info.name] = np.asarray(
                    gguf.quants.dequantize(raw, info.qtype), np.float32
                ).reshape(shape)
            else:
                quant = QuantizedTensor(raw, info.qtype, shape)
                out[info.name] = quant if keep_quantized else quant.dequantize()
        return out
