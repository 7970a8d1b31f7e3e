"""Weight matrices stored narrow in tiles of 32 output rows, widened inside the matvec.

A decode step at batch 1 reads every weight once: its time is the bytes of weights over the
memory bandwidth, so a narrow weight is only faster if the product reads it narrow and
widens it in registers. IREE's llvm-cpu codegen does that for a multiply-and-sum whose
output rows sit side by side in memory: over tiles `q[t, k, j] = M[32 t + j, k]` (`M` the
`(out, in)` matrix) each step loads 32 (or 16 packed) codes of one input `k`, widens them
and multiply-adds them into 32 accumulators against the broadcast `x[k]` (AVX2:
`vpmovsxbd`/`vcvtdq2ps`/`vfmadd231ps`; f16 `vcvtph2ps`; bf16 a shift). Over `(out, in)`
rows it reduces along each row and transposes every tile (slower than float32).

Formats (`FORMATS`): `f32`, `bf16` (the bits as int16, widened as `i32 << 16`), `f16`,
`int8` (symmetric per output channel, float32 scales), `int4-gG` (symmetric codes -7..7 of
type `i4` in groups of G inputs with a float32 scale per group and output, GGUF-style
blocks). IREE's globals take no unsigned types: bf16 bits are int16. An `i4` tensor is
stored two codes a byte, which llvm-cpu unpacks itself into the same widening contraction as
int8 (unpacking nibbles by hand with shifts and selects makes it vectorize the sum across
lanes instead, several times slower than float32).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

TILE = 32
FORMATS = re.compile(r"f32|bf16|f16|int8|int4-g(?P<group>[1-9][0-9]*)")


@dataclass(frozen=True)
class Packed:
    """`M` (`(..., out, in)`, leading axes e.g. stacked layers) in tiles of TILE rows:
    `codes` `(..., out/TILE, in, TILE)` (int4: `ml_dtypes.int4`, two a byte in IREE's
    buffers: `storage_bytes`). `scale` per output row (`int8`:
    `(..., out)`) or per group and row (`int4-gG`: `(..., out/TILE, in/G, TILE)`), else
    None. `transposed`: the logical weight is `M.T` (`x @ W`, contraction axis -2)."""

    codes: Any
    scale: Any
    fmt: str = field(metadata={"static": True})
    transposed: bool = field(default=False, metadata={"static": True})

    @property
    def group(self) -> int:
        m = FORMATS.fullmatch(self.fmt)
        assert m is not None
        return int(m["group"]) if m["group"] else 0

    @property
    def rows(self) -> int:
        return self.codes.shape[-3] * TILE

    @property
    def inner(self) -> int:
        return self.codes.shape[-2]

    def _widened(self) -> Any:
        """The tiles as float32 `(..., T, in, TILE)`, integer codes unscaled."""
        c = jnp.asarray(self.codes)
        return _bf16_bits(c) if self.fmt == "bf16" else c.astype(jnp.float32)

    def matvec(self, x: Any) -> Any:
        """`x @ M.T` for `x` `(..., in)` (float32 result; `M` 2-D)."""
        x = jnp.asarray(x, jnp.float32)
        lead = x.shape[:-1]
        if self.group:
            # Summed within each group, scaled, summed over the groups: two sums (one with
            # the scale inside is no contraction to llvm-cpu, which then adds across lanes)
            g, t = self.group, self.rows // TILE
            codes = jnp.asarray(self.codes).reshape(t, self.inner // g, g, TILE)
            xs = x.reshape(-1, 1, self.inner // g, g, 1)
            part = jnp.sum(xs * codes.astype(jnp.float32)[None], axis=-2)
            out = jnp.sum(part * jnp.asarray(self.scale)[None], axis=-2)
        else:
            out = jnp.sum(x.reshape(-1, 1, self.inner, 1) * self._widened()[None], axis=-2)
        out = out.reshape(-1, self.rows)
        if self.fmt == "int8":     # per-row scales after the sum: the loop only widens
            out = out * jnp.asarray(self.scale)
        return out.reshape(*lead, self.rows)

    def dense(self) -> Any:
        """The logical weight, float32 (`M`, or `M.T` when `transposed`)."""
        w = self._widened()
        lead, k = w.shape[:-3], self.inner
        if self.fmt == "int8":
            w = w * jnp.asarray(self.scale).reshape(*lead, -1, 1, TILE)
        elif self.group:
            g = self.group
            scale = jnp.asarray(self.scale)[..., None, :]
            w = (w.reshape(*lead, -1, k // g, g, TILE) * scale).reshape(w.shape)
        m = jnp.swapaxes(w, -1, -2).reshape(*lead, self.rows, k)
        return jnp.swapaxes(m, -1, -2) if self.transposed else m

    def take_rows(self, index: Any) -> Any:
        """`M[index]` float32 `(*index.shape, in)` for a 2-D `M`, read from the tiles."""
        idx = jnp.asarray(index)
        t, j = idx // TILE, idx % TILE
        c = jnp.asarray(self.codes)
        if self.fmt == "bf16":
            return _bf16_bits(c[t, :, j])
        if self.fmt == "int8":
            return c[t, :, j].astype(jnp.float32) * jnp.asarray(self.scale)[idx][..., None]
        if self.group:
            scale = jnp.asarray(self.scale)[t, :, j]                     # (..., in/G)
            code = c[t, :, j].astype(jnp.float32)
            return code * jnp.repeat(scale, self.group, axis=-1)
        return c[t, :, j].astype(jnp.float32)


jax.tree_util.register_dataclass(Packed)


def _bf16_bits(bits: Any) -> Any:
    """float32 of bfloat16 bits held as int16 (the sign extension shifts out)."""
    return lax.bitcast_convert_type(bits.astype(jnp.int32) << 16, jnp.float32)


def packable(shape: tuple[int, ...], fmt: str, transposed: bool) -> bool:
    """Whether a weight of `shape` (its last two axes the matrix) packs in `fmt`."""
    if len(shape) < 2:
        return False
    out, inner = (shape[-1], shape[-2]) if transposed else (shape[-2], shape[-1])
    m = FORMATS.fullmatch(fmt)
    group = int(m["group"]) if m and m["group"] else 1
    return out % TILE == 0 and inner % group == 0


def pack(w: np.ndarray, fmt: str, transposed: bool = False) -> Packed:
    """`w` (`(..., out, in)`, or `(..., in, out)` when `transposed`) in `fmt`'s tiles."""
    m = np.asarray(w, np.float32)
    if transposed:
        m = np.swapaxes(m, -1, -2)
    *lead, out, inner = m.shape
    tiles = np.ascontiguousarray(np.swapaxes(m.reshape(*lead, out // TILE, TILE, inner), -1, -2))
    if fmt == "f32":
        return Packed(tiles, None, fmt, transposed)
    if fmt == "bf16":
        return Packed(tiles.astype(ml_dtypes.bfloat16).view(np.int16), None, fmt, transposed)
    if fmt == "f16":
        return Packed(tiles.astype(np.float16), None, fmt, transposed)
    if fmt == "int8":
        amax = np.abs(m).max(axis=-1)
        scale = np.where(amax > 0, amax / 127, 1.0).astype(np.float32)
        q = np.clip(np.rint(tiles / scale.reshape(*lead, -1, 1, TILE)), -127, 127)
        return Packed(q.astype(np.int8), scale, fmt, transposed)
    g = Packed(tiles, None, fmt).group
    grouped = tiles.reshape(*lead, out // TILE, inner // g, g, TILE)
    amax = np.abs(grouped).max(axis=-2)
    scale = np.where(amax > 0, amax / 7, 1.0).astype(np.float32)      # (..., T, in/G, TILE)
    codes = np.clip(np.rint(grouped / scale[..., None, :]), -7, 7).reshape(tiles.shape)
    return Packed(codes.astype(ml_dtypes.int4), scale, fmt, transposed)


def storage_bytes(a: np.ndarray) -> np.ndarray:
    """The bytes IREE reads for `a`: an int4/uint4 array two codes a byte (element 2i in the
    low nibble), bfloat16 as its bits, anything else as it is."""
    if a.dtype in (ml_dtypes.int4, ml_dtypes.uint4):
        flat = np.ascontiguousarray(a).reshape(-1).view(np.uint8) & 15
        if flat.size % 2:
            flat = np.append(flat, np.uint8(0))
        return flat[0::2] | (flat[1::2] << 4)
    if a.dtype == ml_dtypes.bfloat16:
        return a.view(np.uint16)
    return a


def from_storage(a: np.ndarray, dtype: str, shape: list[int]) -> np.ndarray:
    """The array `storage_bytes` stored as `a`, as `dtype` (a manifest's `weight_args`)."""
    if dtype in ("int4", "uint4"):
        n = int(np.prod(shape, dtype=np.int64))
        codes = np.stack([a & 15, a >> 4], axis=-1).reshape(-1)[:n].astype(np.int8)
        if dtype == "int4":
            codes = np.where(codes >= 8, codes - 16, codes).astype(np.int8)
        return codes.astype(getattr(ml_dtypes, dtype)).reshape(shape)
    if dtype == "bfloat16":
        return a.view(ml_dtypes.bfloat16)
    return a
