"""ML transforms: one variant of a decorated function per knob configuration.

A variant is `fn(stored, *inputs)`: `stored` is the flat list of weight arrays as the
variant keeps them (cast, quantised, fewer layers), `inputs` are the exact function's
per-call arguments. Transforms compose in a fixed order, whatever the decorator order:

1. `func_substitute` k > 0: the k-th variant replaces the function (with its own weights
   when given as `approx.model(fn, params)`).
2. `task_skipping`: the weights' `"layers"` entry (a list of per-layer pytrees, or a pytree
   of arrays stacked on axis 0 that the function scans over) loses layers: value `k` skips
   the last `k` layers (early exit: the first n-k layers run), a tuple skips those indices.
3. `loop_perforate` v: outermost `lax.scan`/`lax.fori_loop` loops run ceil(n/v) iterations
   (see `interpret.py` for the exact meaning).
4. `quantize` + `precision`: float weight matrices (ndim >= 2 not counting the layer axis
   of stacked layers) are stored as int8 (`int8`: per output channel, `int8-gN`: groups of
   N rows) or packed int4 pairs (`int4`, `int4-gN`) with float32 scales and dequantised
   inside the variant; `w8a8` stores int8 per channel and runs matmuls in integer with
   activations quantised per row on the fly (`w8a16`: to 16 bits, two int8 halves in one
   int8 product: weight-only int8's accuracy on the integer ukernels; `w4a16`: unsigned
   4-bit codes with a zero point per channel, times 16-bit activations). Other float weights
   and float inputs are cast to the compute dtype (`f32`/`bf16`/`f16`), matmuls in
   bf16/f16 accumulate in float32; `w8a8`/`w8a16` quantise a matrix over the axis its
   products contract (`x @ W.T`: per row);
   float outputs are cast back to the exact function's dtypes.
   A matrix that the function multiplies as the right operand of a `dot_general`
   (`interpret.contraction_axes`) is quantised over that contraction axis and stored in
   tiles of 32 output rows (`packed.Packed`: `int8`, `int4-gN`, `int4` as one group a row,
   or, under `bf16`/`f16` precision without quantisation, the narrow float unless the CPU
   multiplies it as stored: `iree.multiplies_natively`): a decode step's matvec over it
   widens the codes in registers (`interpret`). Other matrices are
   quantised over axis -2 (the contraction axis of `x @ W`) and dequantised whole.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

from approxcc import registry
from approxcc.ml.approx import ApproxFunction, Knob, Model
from approxcc.ml.interpret import (
    Options,
    QTensor,
    contraction_axes,
    retrace,
    rotate,
    rotation_block,
)
from approxcc.ml.iree import multiplies_natively
from approxcc.ml.packed import Packed, pack, packable
from approxcc.transforms.quantize import INTEGER_PRODUCTS, MIXED_SCHEMES, QUANT_SCHEME

_DTYPES = {"f32": jnp.float32, "bf16": jnp.bfloat16, "f16": jnp.float16}
# Each weight conversion made while a build runs (`shared_conversions`), by the source
# array's identity (the entry holds the array, so the identity stays its own): a program's
# functions (a prefill per prompt length) share their parameters, and their variants then
# share one converted copy instead of holding one each.
_shared: dict[tuple[Any, ...], tuple[Any, list[np.ndarray]]] | None = None


@contextlib.contextmanager
def shared_conversions() -> Iterator[None]:
    """Within this block, variants converting the same weight the same way share the
    result."""
    global _shared
    outer = _shared
    _shared = {} if outer is None else outer
    try:
        yield
    finally:
        _shared = outer


def _converted(leaf: Any, how: tuple[Any, ...],
               convert: Callable[[], list[np.ndarray]]) -> list[np.ndarray]:
    if _shared is None:
        return convert()
    key = (id(leaf), *how)
    if key not in _shared:
        _shared[key] = (leaf, convert())
    return _shared[key][1]


@dataclass(frozen=True)
class Variant:
    fn: Callable[..., Any]       # fn(stored, *inputs)
    stored: list[np.ndarray]     # the weights as this variant keeps them, flat


@dataclass(frozen=True)
class _Plain:
    def arity(self) -> int:
        return 1

    def decode(self, arrays: Sequence[Any]) -> tuple[Any, QTensor | None]:
        return arrays[0], None


@dataclass(frozen=True)
class _Quant:
    bits: int
    dtype: Any          # the compute dtype
    tagged: bool        # w8a8: matmuls use the integer weight
    axis: int = -2      # the axis quantised over (w8a8: the one its products contract)
    rotation: int = 0   # w4a16: the codes' rotation block (`interpret.rotate`)

    @property
    def unsigned(self) -> bool:
        """w4a16: uint4 codes (one an element) and a zero point array."""
        return self.tagged and self.bits == 4

    def arity(self) -> int:
        return 3 if self.unsigned else 2

    def decode(self, arrays: Sequence[Any]) -> tuple[Any, QTensor | None]:
        q, scale, *zeros = arrays
        zero = zeros[0] if zeros else None
        per_channel = QTensor(q, scale, self.dtype, self.axis, zero, rotation=self.rotation)
        tag = per_channel if self.tagged else None
        if self.axis == -1 or self.unsigned:   # per channel: scale (..., M, 1) or (..., 1, N)
            return per_channel.dequantize(), tag
        if self.bits == 4 and not self.unsigned:
            q = _unpack_int4(q)
        *lead, k, n = q.shape
        groups = scale.shape[-2]
        qg = q.reshape(*lead, groups, k // groups, n).astype(self.dtype)
        if zero is not None:
            qg = qg - zero[..., :, None, :].astype(self.dtype)
        value = (qg * scale[..., :, None, :].astype(self.dtype)).reshape(q.shape)
        return value, tag


@dataclass(frozen=True)
class _Tiles:
    fmt: str
    transposed: bool
    scaled: bool        # stores a scale array after the codes
    dtype: Any          # what the function sees: the dequantized weight in this dtype

    def arity(self) -> int:
        return 1 + self.scaled

    def decode(self, arrays: Sequence[Any]) -> tuple[Any, Packed]:
        w = Packed(arrays[0], arrays[1] if self.scaled else None, self.fmt, self.transposed)
        return w.dense().astype(self.dtype), w


def exact_choice(afn: ApproxFunction, weights: Any) -> dict[str, int | None]:
    """The config value meaning "exact" per knob (None where no value in the domain does)."""
    return {k.name: exact_value(k, weights) for k in afn.knobs}


def exact_value(knob: Knob, weights: Any) -> int | None:
    spec = registry.get(knob.transform)
    assert spec is not None and spec.ml is not None  # the decorator checked
    exact_label = spec.ml.exact
    if exact_label is None:   # precision: the weights' own dtype
        exact_label = _precision_name(_float_dtype(weights))
    if knob.integral:
        return int(exact_label)
    return knob.values.index(exact_label) if exact_label in knob.values else None


def make_variant(afn: ApproxFunction, weights: Any, inputs: Sequence[Any],
                 choice: Mapping[str, int | None]) -> Variant:
    """The variant for `choice` (knob name -> config value; missing or None = exact)."""
    exact_out = jax.eval_shape(afn.fn, weights, *inputs)
    labels = {}
    for k in afn.knobs:
        value = choice.get(k.name)
        labels[k.transform] = (k, None if value is None else k.label(value))
    fn, w = afn.fn, weights
    knob, label = labels.get("func_substitute", (None, None))
    if knob is not None and label:
        entry = knob.variants[label - 1]
        fn, w = (entry.fn, entry.params) if isinstance(entry, Model) else (entry, w)
    knob, label = labels.get("task_skipping", (None, None))
    if knob is not None and label:
        w = _skip_layers(w, label, knob)
    knob, label = labels.get("loop_perforate", (None, None))
    if knob is not None and label is not None and label > 1:
        fn = _perforated(fn, label, knob, w, inputs, required=fn is afn.fn)
    knob, label = labels.get("precision", (None, None))
    compute = None if knob is None or label is None else jnp.dtype(_DTYPES[label])
    knob, label = labels.get("quantize", (None, None))
    scheme = None if knob is None or label is None or label == "none" else label
    variant = _numerics(fn, w, inputs, compute, scheme, exact_out)
    _check_outputs(afn, choice, variant, inputs, exact_out)
    return variant


def _numerics(fn: Callable[..., Any], weights: Any, inputs: Sequence[Any], compute: Any,
              scheme: str | None, exact_out: Any) -> Variant:
    leaves, treedef = jax.tree.flatten(weights)
    weight_bits, activation_bits = INTEGER_PRODUCTS.get(scheme or "", (0, 0))
    bits, group, w8a8 = 0, None, activation_bits > 0
    largest = max((np.size(a) for a in leaves if _is_float(a)), default=0)

    def leaf_bits(a: np.ndarray) -> int:
        """An integer product's weight bits for `a` (MIXED_SCHEMES: 4 for the largest
        weight, 8 for the others)."""
        if scheme in MIXED_SCHEMES:
            return 4 if a.size == largest else 8
        return weight_bits

    if scheme is not None:
        m = QUANT_SCHEME.fullmatch(scheme)
        assert m is not None  # checked by the decorator
        bits = weight_bits if w8a8 else int(m["bits"])
        group = None if w8a8 or m["group"] is None else int(m["group"])
    codecs: list[_Plain | _Quant | _Tiles] = []
    stored: list[np.ndarray] = []
    narrow = compute is not None and compute in (jnp.bfloat16, jnp.float16)
    tiled = _tile_format(bits, group, w8a8, compute)
    axes = contraction_axes(fn, (weights, *inputs), len(leaves)) if tiled or w8a8 else \
        [None] * len(leaves)
    for leaf, layer_axis, axis in zip(leaves, _layer_axes(weights), axes, strict=True):
        a = np.asarray(leaf)
        is_float = _is_float(a)
        wbits = leaf_bits(a) if w8a8 else bits
        dtype = compute if compute is not None and is_float else a.dtype
        # a weight no contraction reads along one axis (a convolution's kernel) has none
        fmt = tiled and axis is not None and \
            (f"int4-g{a.shape[axis]}" if tiled == "int4" else tiled)
        if fmt and is_float and a.ndim - layer_axis == 2 \
                and packable(a.shape, fmt, axis == -2):
            parts = _converted(leaf, ("tiles", fmt, axis),
                               lambda a=a, fmt=fmt, axis=axis: _tiles(a, fmt, axis == -2))
            codecs.append(_Tiles(fmt, axis == -2, len(parts) == 2, jnp.dtype(dtype)))
        elif w8a8 and is_float and axis == -1 and a.ndim - layer_axis == 2:
            # `x @ W.T` (a model's (out, in) weights): per output row
            rotation = rotation_block(a.shape[-1]) if wbits == 4 else 0
            parts = _converted(leaf, ("integer-rows", wbits), lambda a=a, b=wbits, r=rotation: [
                np.swapaxes(x, -1, -2) for x in _integer_codes(np.swapaxes(a, -1, -2), b, r)])
            codecs.append(_Quant(wbits, jnp.dtype(dtype), True, -1, rotation))
        elif w8a8 and is_float and wbits == 4 and a.ndim - layer_axis >= 2:
            rotation = rotation_block(a.shape[-2])
            parts = _converted(leaf, ("integer", 4),
                               lambda a=a, r=rotation: _integer_codes(a, 4, r))
            codecs.append(_Quant(4, jnp.dtype(dtype), True, -2, rotation))
        elif wbits and is_float and _quantizable(a.shape, layer_axis, wbits, group):
            parts = _converted(leaf, ("quantize", wbits, group),
                               lambda a=a, wbits=wbits: list(_quantize(a, wbits, group)))
            codecs.append(_Quant(wbits, jnp.dtype(dtype), w8a8))
        else:
            parts = _converted(leaf, ("cast", str(dtype)),
                               lambda a=a, dtype=dtype: [a.astype(dtype, copy=False)])
            codecs.append(_Plain())
        stored += parts

    packed = any(isinstance(c, _Tiles) for c in codecs)

    def variant(stored: Sequence[Any], *inputs: Any) -> Any:
        it = iter(stored)
        values, tags = [], []
        for codec in codecs:
            value, tag = codec.decode([next(it) for _ in range(codec.arity())])
            values.append(value)
            tags.append(tag)
        w = jax.tree.unflatten(treedef, values)
        if compute is not None:
            inputs = tuple(x.astype(compute) if jnp.issubdtype(x.dtype, jnp.floating) else x
                           for x in map(jnp.asarray, inputs))
        if w8a8 or narrow or packed:
            out = retrace(fn, Options(activation_bits=activation_bits, wide_accumulate=narrow),
                          lambda flat: tags + [None] * (len(flat) - len(tags)))(w, *inputs)
        else:
            out = fn(w, *inputs)
        return jax.tree.map(lambda o, ref: jnp.asarray(o).astype(ref.dtype), out, exact_out)

    return Variant(variant, stored)


def _is_float(a: Any) -> bool:
    dtype = np.asarray(a).dtype
    return bool(np.issubdtype(dtype, np.floating)) or dtype == jnp.bfloat16


def _tiles(a: np.ndarray, fmt: str, transposed: bool) -> list[np.ndarray]:
    p = pack(a, fmt, transposed=transposed)
    return [p.codes] if p.scale is None else [p.codes, p.scale]


def _tile_format(bits: int, group: int | None, w8a8: bool, compute: Any) -> str | None:
    """The `packed` format of weight matrices multiplied by the function, if any ("int4":
    one group a row)."""
    if w8a8:
        return None
    if bits == 8:
        return "int8" if group is None else None
    if bits == 4:
        return "int4" if group is None else f"int4-g{group}"
    narrow = {jnp.dtype(jnp.bfloat16): "bf16", jnp.dtype(jnp.float16): "f16"}.get(
        None if compute is None else jnp.dtype(compute))
    return None if narrow is None or multiplies_natively(narrow) else narrow


def _layer_axes(weights: Any) -> list[int]:
    """Per leaf: 1 for the arrays of stacked layers (`weights["layers"]` not a list), whose
    axis 0 is the layer axis, else 0."""
    stacked = isinstance(weights, Mapping) and "layers" in weights \
        and not isinstance(weights["layers"], list | tuple)
    paths = [path for path, _ in jax.tree_util.tree_flatten_with_path(weights)[0]]
    return [int(stacked and getattr(path[0], "key", None) == "layers") for path in paths]


def _quantizable(shape: tuple[int, ...], layer_axis: int, bits: int, group: int | None) -> bool:
    if len(shape) - layer_axis < 2:
        return False
    k = shape[-2]
    return (group is None or k % group == 0) and (bits == 8 or k % 2 == 0)


def _quantize(w: np.ndarray, bits: int, group: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric quantisation over axis -2 in groups (one group: per output channel)."""
    qmax = 127 if bits == 8 else 7
    *lead, k, n = w.shape
    g = group or k
    wg = w.astype(np.float32).reshape(*lead, k // g, g, n)
    amax = np.abs(wg).max(axis=-2, keepdims=True)
    scale = np.where(amax > 0, amax / qmax, 1.0).astype(np.float32)
    q = np.clip(np.rint(wg / scale), -qmax, qmax).astype(np.int8).reshape(w.shape)
    scale = scale.reshape(*lead, k // g, n)
    return (_pack_int4(q) if bits == 4 else q), scale


# The fractions of a channel's range that 4-bit codes may span (the best one a channel).
CLIPS = (1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6)


def _integer_codes(w: np.ndarray, bits: int, rotation: int = 0) -> list[np.ndarray]:
    """The codes of the integer products (w8a8, w8a16, w4a16) over axis -2, per output
    channel: int8 symmetric `[q, scale]`, or 4 bits `[u, scale, zero]` with unsigned codes
    (value = (u - zero) * scale, zero a code) of the weight rotated along axis -2 in blocks
    of `rotation` (`interpret.rotate`; 0: none), each channel's range clipped to the fraction
    `CLIPS` with the least squared error (on Gemma 3 270M's head over 600 tokens of
    Wikipedia summaries: NLL 2.69 unclipped, 2.62 clipped; exact 2.53)."""
    if bits == 8:
        return list(_quantize(w, 8, None))
    w = w.astype(np.float32)
    if rotation:
        w = rotate(w, -2, rotation)
    lo = np.minimum(w.min(axis=-2, keepdims=True), 0)
    hi = np.maximum(w.max(axis=-2, keepdims=True), 0)
    best: list[np.ndarray] = []
    for clip in CLIPS:
        scale = np.where(hi > lo, (hi - lo) * clip / 15, 1.0).astype(np.float32)
        zero = np.clip(np.rint(-lo * clip / scale), 0, 15)
        u = np.clip(np.rint(w / scale) + zero, 0, 15)
        error = np.square((u - zero) * scale - w).sum(axis=-2, keepdims=True)
        if not best:
            best = [u, scale, zero, error]
            continue
        better = error < best[3]
        best = [np.where(better, new, old) for new, old in zip((u, scale, zero, error), best,
                                                               strict=True)]
    u, scale, zero, _ = best
    return [u.astype(ml_dtypes.uint4), scale, zero.astype(np.int8)]


def _pack_int4(q: np.ndarray) -> np.ndarray:
    """Pairs of rows (axis -2) in one int8: low nibble even row, high nibble odd row."""
    *lead, k, n = q.shape
    pairs = q.reshape(*lead, k // 2, 2, n).astype(np.uint8) & 0xF
    return (pairs[..., 0, :] | (pairs[..., 1, :] << 4)).view(np.int8)


def _unpack_int4(p: Any) -> Any:
    lo = lax.shift_right_arithmetic(lax.shift_left(p, jnp.int8(4)), jnp.int8(4))
    hi = lax.shift_right_arithmetic(p, jnp.int8(4))
    *lead, half, n = p.shape
    return jnp.stack([lo, hi], axis=-2).reshape(*lead, 2 * half, n)


def _skip_layers(weights: Any, skip: int | tuple[int, ...], knob: Knob) -> Any:
    if not isinstance(weights, Mapping) or "layers" not in weights:
        raise knob.error("task_skipping needs the weights (argument 0) to be a dict with a "
                         "\"layers\" entry (a list of layers, or arrays stacked on axis 0)")
    layers = weights["layers"]
    if isinstance(layers, list | tuple):
        n = len(layers)
    else:
        sizes = {np.shape(a)[0] if np.ndim(a) else None for a in jax.tree.leaves(layers)}
        if len(sizes) != 1 or None in sizes:
            raise knob.error("the arrays of weights[\"layers\"] must share their leading "
                             f"(layer) dimension, got {sorted(map(str, sizes))}")
        n = sizes.pop()
    dropped = set(range(n - skip, n)) if isinstance(skip, int) else set(skip)
    if len(dropped) >= n or max(dropped) >= n:
        raise knob.error(f"cannot skip layers {sorted(dropped)} of a {n}-layer model "
                         "(at least one layer must run)")
    kept = [i for i in range(n) if i not in dropped]
    if isinstance(layers, list | tuple):
        new_layers: Any = type(layers)(layers[i] for i in kept)
    else:
        new_layers = jax.tree.map(lambda a: np.asarray(a)[kept], layers)
    return {**weights, "layers": new_layers}


def _perforated(fn: Callable[..., Any], v: int, knob: Knob, weights: Any,
                inputs: Sequence[Any], required: bool) -> Callable[..., Any]:
    """`fn` with its loops perforated; a substitute without loops runs as it is (only the
    exact function must have one)."""
    opts = Options(perforate=v)
    run = retrace(fn, opts)
    jax.eval_shape(run, weights, *inputs)
    if not opts.loops_seen and not required:
        return fn
    if not opts.loops_seen:
        raise knob.error("loop_perforate: the function has no lax.scan or lax.fori_loop "
                         "with a static trip count")
    return run


def _check_outputs(afn: ApproxFunction, choice: Mapping[str, int | None], variant: Variant,
                   inputs: Sequence[Any], exact_out: Any) -> None:
    got = jax.eval_shape(variant.fn, variant.stored, *inputs)
    if jax.tree.structure(got) == jax.tree.structure(exact_out) and all(
            a.shape == b.shape for a, b in zip(jax.tree.leaves(got),
                                               jax.tree.leaves(exact_out), strict=True)):
        return
    knob = next((k for k in afn.knobs if k.transform == "func_substitute"), afn.knobs[0])
    raise knob.error(f"variant {dict(choice)} returns {_shapes(got)} but "
                     f"'{afn.name}' returns {_shapes(exact_out)}")


def _shapes(tree: Any) -> str:
    return ", ".join(f"{a.dtype}{list(a.shape)}" for a in jax.tree.leaves(tree))


def _float_dtype(weights: Any) -> Any:
    for leaf in jax.tree.leaves(weights):
        dt = np.asarray(leaf).dtype
        if np.issubdtype(dt, np.floating) or dt == jnp.bfloat16:
            return dt
    return np.dtype(np.float32)


def _precision_name(dtype: Any) -> str:
    return next((name for name, dt in _DTYPES.items() if jnp.dtype(dt) == dtype), "f32")
