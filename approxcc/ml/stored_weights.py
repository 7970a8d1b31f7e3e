"""A build's weights files, read by the runtimes: memory-mapped, one mapping per content.

`approxcc build` saves a variant's weights as an uncompressed `.npz` named by the hash of
its content (`weights/<hash>.npz`). A system loads the same weights many times (a program
a configuration of its decode step; builds of one model in other folders): read into memory,
each copy stayed resident (a 270M-parameter model's 13 prefill builds, one a prompt length,
and its decode variants took 16 GB and were killed). Here a file's arrays are views of the
file mapped read-only (the page cache holds them, shared by every process and evictable),
and a process loads one content once, whichever build folder holds it, while any caller
holds its arrays: mapped for IREE's parameters, on jax's device for a variant run by XLA
(`ml/xla.py`).
"""

from __future__ import annotations

import struct
import weakref
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")   # a zip member's local file header
_LOCAL_MAGIC = b"PK\x03\x04"


class Weights(list):
    """The arrays of one weights file, `arr_0, arr_1, ...` in order (a list that a weak
    reference can name)."""


_LOADED: weakref.WeakValueDictionary[tuple[str, int, str], Weights] = \
    weakref.WeakValueDictionary()


def load_weights(path: Path, form: str = "mapped",
                 convert: Callable[[list[np.ndarray]], list[Any]] | None = None) -> Weights:
    """The arrays of the weights file at `path` (read-only), or `convert` of them, named
    `form` (e.g. put on a device): shared with every other caller asking for the same
    content (the same file name and size in any build folder) in the same form, while one
    holds them."""
    key = (path.name, path.stat().st_size, form)
    weights = _LOADED.get(key)
    if weights is None:
        arrays = _mapped_members(path)
        weights = _LOADED[key] = Weights(arrays if convert is None else convert(arrays))
    return weights


def _mapped_members(path: Path) -> list[np.ndarray]:
    """Each `.npy` member of an uncompressed `.npz` as an array mapped from the file; a
    compressed member (an `.npz` not written by approxcc) is read instead."""
    arrays: dict[str, np.ndarray] = {}
    with zipfile.ZipFile(path) as archive, open(path, "rb") as f:
        for info in archive.infolist():
            name = info.filename.removesuffix(".npy")
            header = _npy_header(f, info) if info.compress_type == zipfile.ZIP_STORED \
                else None
            if header is None or not np.prod(header[0], dtype=np.int64):
                with archive.open(info) as member:
                    arrays[name] = np.lib.format.read_array(member)
                arrays[name].flags.writeable = False
                continue
            shape, fortran, dtype = header
            arrays[name] = np.memmap(path, dtype=dtype, mode="r", offset=f.tell(),
                                     shape=shape, order="F" if fortran else "C")
    return [arrays[f"arr_{i}"] for i in range(len(arrays))]


def _npy_header(f: BinaryIO, info: zipfile.ZipInfo) -> tuple[Any, ...] | None:
    """The shape, order and dtype of a stored `.npy` member, `f` left at its data; None
    for a header version numpy has no public reader for."""
    f.seek(info.header_offset)
    fields = _LOCAL_HEADER.unpack(f.read(_LOCAL_HEADER.size))
    if fields[0] != _LOCAL_MAGIC:
        raise ValueError(f"{f.name}: a damaged weights file (member {info.filename})")
    f.seek(fields[-2] + fields[-1], 1)     # past the member's name and extra field
    read = {(1, 0): np.lib.format.read_array_header_1_0,
            (2, 0): np.lib.format.read_array_header_2_0}.get(np.lib.format.read_magic(f))
    return None if read is None else read(f)
