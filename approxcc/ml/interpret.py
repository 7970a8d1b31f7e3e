"""A jaxpr interpreter that re-traces a JAX function with two rewrites:

- loop perforation: every outermost `scan` (which is also what `lax.fori_loop` with static
  bounds lowers to) runs ceil(n/v) iterations: a scan over `xs` sees `xs[::v]` (iterations
  0, v, 2v, ...), a fori_loop (its index lives in the carry) runs its first ceil(n/v)
  iterations; per-iteration outputs `ys` of a skipped iteration repeat the last executed one,
  so every shape is unchanged. "Outermost" means not nested in another loop; loops inside
  `jit`-decorated helpers count, loops inside `cond`/`while`/custom-derivative rules do not.
- wide accumulation: a `dot_general` producing bf16/f16 accumulates in float32 and rounds
  its result once (IREE's CUDA pipeline has no bf16-accumulating MMA on sm_80 and rejects
  such a matmul with "failed to distribute"; f32 accumulation is also the more accurate).
- int8 x int8 matmuls (w8a8): a `dot_general` whose right operand is an int8-quantised
  weight (tagged, also through scan consts/xs) and contracts its first axis quantises its
  left operand per row on the fly and multiplies in integer (int32 accumulation). With
  16-bit activations (w8a16) each row's codes are split into two int8 halves that travel
  as two rows of the same integer product, so the weight is still read once. With unsigned
  4-bit weight codes (w4a16) the left operand is quantised to int16 and multiplies the codes
  directly; the zero points leave the sum as a correction per output channel. A weight
  whose codes were rotated (`rotation`: W = R C, R orthogonal) multiplies the left operand
  rotated the same way (x W = (x R) C); a row lookup of it un-rotates only the rows read.
- narrow weights in tiles (`packed.Packed`: bf16, f16, int8, int4 groups): a `dot_general`
  whose right operand is one, contracting its input axis, with fewer than `MATVEC_ROWS`
  rows on the left (a decode step's matvec) becomes `Packed.matvec` (the codes widened
  inside the product); a row lookup (`w[tokens]`: `gather`/`dynamic_slice` of whole rows)
  reads the rows from the tiles; any other use sees the dequantized weight.

Everything else is bound as traced, so an untouched function computes what it computed.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg
from jax import lax
from jax.extend import core

from approxcc.ml.packed import Packed

# Left-operand rows below which a product over a packed weight is a matvec (the decode
# step; a prefill's matrix-matrix products use the dequantized weight instead).
MATVEC_ROWS = 32
Tag = Any   # QTensor | Packed | None

# Incoherence rotation of 4-bit codes: blocks of up to ROTATION_BLOCK along the contraction
# axis times a Hadamard matrix with fixed random column signs. One outlier input channel
# then spreads over its block instead of stretching every output channel's 16 steps (on
# Gemma 3 270M per-channel int4 of every matrix: NLL 3.62 plain, 2.80 rotated; exact 2.16).
ROTATION_BLOCK = 64


def rotation_block(k: int) -> int:
    """The rotation block for a contraction of `k` terms: the largest power of two up to
    ROTATION_BLOCK dividing `k` (0: none below 8)."""
    b = math.gcd(k, ROTATION_BLOCK)
    return b if b >= 8 else 0


def _hadamard(b: int) -> np.ndarray:
    signs = np.random.default_rng(b).choice([-1.0, 1.0], b)
    return (scipy.linalg.hadamard(b) * signs / math.sqrt(b)).astype(np.float32)


def rotate(a: Any, axis: int, block: int, inverse: bool = False) -> Any:
    """`a` times R (R^T when `inverse`) along `axis`, R block-diagonal with `_hadamard(block)`
    blocks (jax or numpy in, the same out). In jax a multiply-and-sum: a decode step's
    rotation as a matrix product would have a row per block, and the build compiles a
    module with products of 32 rows or more as a prefill's (`build._matrix_rows`)."""
    h = _hadamard(block)
    h = h.T if inverse else h
    xp = np if isinstance(a, np.ndarray) else jnp
    a = xp.moveaxis(a, axis, -1)
    *lead, k = a.shape
    blocks = a.reshape(*lead, k // block, block)
    rotated = blocks @ h if xp is np else jnp.sum(blocks[..., :, None] * h, axis=-2)
    return xp.moveaxis(rotated.reshape(*lead, k), -1, axis)


@dataclass(frozen=True)
class QTensor:
    """A per-output-channel quantised weight: value = q * scale (int8 codes) or
    (q - zero) * scale (uint4 codes, `zero` shaped like `scale`). `axis` is the axis a
    product contracts: -2 (`x @ W`, scale (..., 1, N)) or -1 (`x @ W.T`, scale (..., M, 1))."""

    q: Any
    scale: Any
    dtype: Any  # the compute dtype of the dequantised value
    axis: int = -2
    zero: Any = None
    # The weight is the transpose of these arrays (uint4 codes stay as stored: IREE's
    # import widens a transposed ui4 tensor to i32 before its product, a copy 8x its size)
    transposed: bool = False
    rotation: int = 0   # the codes are of the weight times R along `stored_axis` (block)

    @property
    def stored_axis(self) -> int:
        """The axis of the stored arrays a product contracts."""
        return -3 - self.axis if self.transposed else self.axis

    def dequantize(self) -> Any:
        q = self.q.astype(self.dtype)
        if self.zero is not None:
            q = q - self.zero.astype(self.dtype)
        value = q * self.scale.astype(self.dtype)
        if self.rotation:
            value = rotate(value, self.stored_axis, self.rotation, inverse=True)
        return value.T if self.transposed else value

    def take_rows(self, rows: Any) -> Any:
        """Rows of the weight (not transposed, quantised per row): only their codes read."""
        assert self.stored_axis == -1 and not self.transposed
        return dataclasses.replace(
            self, q=jnp.take(self.q, rows, axis=0), scale=jnp.take(self.scale, rows, axis=0),
            zero=None if self.zero is None else jnp.take(self.zero, rows, axis=0)).dequantize()


@dataclass
class Options:
    perforate: int = 1
    activation_bits: int = 0    # int8 x int8 products: w8a8 8, w8a16 16 (0: none)
    wide_accumulate: bool = False
    loops_seen: int = 0


def retrace(fn: Callable[..., Any], opts: Options,
            tags: Callable[[list[Any]], list[Tag]] | None = None) -> Callable[..., Any]:
    """`fn` re-traced through the interpreter. `tags(flat_args)` names the flat arguments
    that are quantised weights."""
    def run(*args: Any) -> Any:
        closed, shape = jax.make_jaxpr(fn, return_shape=True)(*args)
        flat = jax.tree.leaves(args)
        arg_tags = tags(flat) if tags else [None] * len(flat)
        outs = _eval(closed.jaxpr, closed.consts, flat, arg_tags, opts, 0)
        return jax.tree.unflatten(jax.tree.structure(shape), outs)
    return run


def _eval(jaxpr: core.Jaxpr, consts: Sequence[Any], args: Sequence[Any],
          arg_tags: Sequence[Tag], opts: Options, depth: int) -> list[Any]:
    env: dict[core.Var, Any] = {}
    tags: dict[core.Var, Tag] = {}

    def read(v: Any) -> Any:
        return v.val if isinstance(v, core.Literal) else env[v]

    def tag_of(v: Any) -> Tag:
        return None if isinstance(v, core.Literal) else tags.get(v)

    env.update(zip(jaxpr.constvars, consts, strict=True))
    for var, val, tag in zip(jaxpr.invars, args, arg_tags, strict=True):
        env[var] = val
        if tag is not None:
            tags[var] = tag
    for eqn in jaxpr.eqns:
        invals = [read(v) for v in eqn.invars]
        intags = [tag_of(v) for v in eqn.invars]
        name = eqn.primitive.name
        out_tag = None
        if name in ("jit", "pjit"):
            inner = eqn.params["jaxpr"]
            outs = _eval(inner.jaxpr, inner.consts, invals, intags, opts, depth)
        elif name == "scan":
            outs = _scan(eqn, invals, intags, opts, depth)
        elif name == "dot_general" and isinstance(intags[1], Packed) \
                and _matvec_applies(eqn, invals, intags[1]):
            outs = [_packed_dot(eqn, invals[0], intags[1])]
        elif name in ("gather", "dynamic_slice") and _rows_readable(intags[0]) \
                and (rows := _row_lookup(eqn, invals, intags[0])) is not None:
            outs = [rows]
        elif name == "dot_general" and opts.activation_bits and isinstance(intags[1], QTensor) \
                and _integer_dot_applies(eqn, invals, intags[1]):
            outs = [_integer_dot(eqn, invals[0], intags[1], opts.activation_bits)]
        elif name == "dot_general" and opts.wide_accumulate and _narrow(eqn):
            outs = [_wide_dot(eqn, invals)]
        else:
            params = eqn.primitive.get_bind_params(eqn.params)
            with eqn.ctx.manager:
                ans = eqn.primitive.bind(*invals, **params)
            outs = list(ans) if eqn.primitive.multiple_results else [ans]
            if name == "convert_element_type" and intags[0] is not None \
                    and jnp.issubdtype(params["new_dtype"], jnp.floating):
                out_tag = intags[0]
            elif name == "transpose" and intags[0] is not None \
                    and tuple(params["permutation"]) == (1, 0):
                out_tag = _transposed(intags[0])
        for var, val in zip(eqn.outvars, outs, strict=True):
            if not isinstance(var, core.DropVar):
                env[var] = val
                if out_tag is not None:
                    tags[var] = out_tag
    return [read(v) for v in jaxpr.outvars]


def _scan(eqn: core.JaxprEqn, invals: list[Any], intags: list[Tag],
          opts: Options, depth: int) -> list[Any]:
    p = eqn.params
    body = p["jaxpr"]
    n_consts, n_carry, length = p["num_consts"], p["num_carry"], p["length"]
    v = opts.perforate if depth == 0 else 1
    if depth == 0:
        opts.loops_seen += 1
    consts, consts_tags = invals[:n_consts], intags[:n_consts]
    carry_avals = [var.aval for var in body.jaxpr.invars[n_consts:n_consts + n_carry]]
    init = [jnp.asarray(x, a.dtype) for x, a in zip(invals[n_consts:n_consts + n_carry],
                                                     carry_avals, strict=True)]
    xs, xs_tags = invals[n_consts + n_carry:], intags[n_consts + n_carry:]
    # A tagged xs travels as its arrays, sliced per iteration like any xs.
    packed = [x if t is None else (t.q, t.scale, t.zero) if isinstance(t, QTensor) else t
              for x, t in zip(xs, xs_tags, strict=True)]
    if v > 1:
        packed = jax.tree.map(lambda a: a[::v], packed)
    steps = -(-length // v)

    def step(carry: list[Any], x: list[Any]) -> tuple[list[Any], list[Any]]:
        x_vals, x_tags = [], []
        for item, tag, var in zip(x, xs_tags, body.jaxpr.invars[n_consts + n_carry:],
                                  strict=True):
            if tag is None:
                x_vals.append(item)
                x_tags.append(None)
            elif isinstance(tag, Packed):
                x_vals.append(item.dense().astype(var.aval.dtype))
                x_tags.append(item)
            else:
                qt = dataclasses.replace(tag, q=item[0], scale=item[1], zero=item[2])
                x_vals.append(qt.dequantize())
                x_tags.append(qt)
        outs = _eval(body.jaxpr, body.consts, [*consts, *carry, *x_vals],
                     [*consts_tags, *([None] * n_carry), *x_tags], opts, depth + 1)
        new_carry = [jnp.asarray(c, a.dtype) for c, a in zip(outs[:n_carry], carry_avals,
                                                              strict=True)]
        return new_carry, outs[n_carry:]

    carry, ys = lax.scan(step, init, packed, length=steps, reverse=p["reverse"],
                         unroll=p["unroll"])
    if v > 1:
        ys = [jnp.repeat(y, v, axis=0)[:length] for y in ys]
    return [*carry, *ys]


def _transposed(tag: Tag) -> Tag:
    """The tag of `W.T` for a 2-D weight `W` tagged `tag`."""
    if isinstance(tag, Packed):
        return dataclasses.replace(tag, transposed=not tag.transposed)
    if tag.zero is not None:
        return dataclasses.replace(tag, axis=-3 - tag.axis, transposed=not tag.transposed)
    return dataclasses.replace(tag, q=tag.q.T, scale=tag.scale.T, axis=-3 - tag.axis)


def _integer_dot_applies(eqn: core.JaxprEqn, invals: list[Any], w: QTensor) -> bool:
    """A plain product contracting the axis `w` was quantised over (its scale then leaves
    the sum)."""
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = invals
    return (not lb and not rb and jnp.ndim(rhs) == 2 and tuple(rc) == (w.axis + 2,)
            and jnp.issubdtype(jnp.result_type(lhs), jnp.floating))


# w8a16: a 16-bit activation code is hi * SPLIT + lo with hi, lo int8
# (|code| <= 127 * SPLIT, so |hi| <= 127 and |lo| <= SPLIT / 2).
SPLIT = 128


def _integer_dot(eqn: core.JaxprEqn, lhs: Any, w: QTensor, activation_bits: int) -> Any:
    """lhs @ (q * scale) as (int8(lhs / s_x) @ q) * s_x * scale, s_x per row of lhs (uint4
    codes: (int16(lhs / s_x) @ q - row sums * zero) * s_x * scale). With
    16-bit activations the codes' halves are stacked on a new leading axis of the left
    operand: one product of int8 x int8 (twice the rows, the weight read once, which is what
    a decode step's matvec pays for), recombined as SPLIT * hi-sum + lo-sum in float32 (the
    int32 sums of hi could overflow once scaled)."""
    dims = eqn.params["dimension_numbers"]
    lc = tuple(dims[0][0])
    x = lhs.astype(jnp.float32)
    if w.rotation:
        x = rotate(x, lc[0], w.rotation)
    amax = jnp.max(jnp.abs(x), axis=lc, keepdims=True)
    top = 127.0 if activation_bits == 8 else 127.0 * SPLIT
    if w.zero is not None:   # uint4 codes: int32 sums of up to 15 * top per term
        terms = math.prod(jnp.shape(lhs)[a] for a in lc)
        top = float(min(2**15 - 1, (2**31 - 1) // (15 * terms)))
    s_x = jnp.where(amax > 0, amax / top, 1.0)
    xq = jnp.clip(jnp.round(x / s_x), -top, top)
    if w.zero is not None:
        # int16 x uint4 converted right at the product: IREE's import folds both converts
        # into one contraction, which data tiling maps to its s16u4s32 ukernel
        x16 = xq.astype(jnp.int16)
        (_, rc), batch = dims
        stored = ((lc, tuple(1 - a for a in rc)), batch) if w.transposed else dims
        sums = lax.dot_general(x16.astype(jnp.int32), w.q.astype(jnp.int32), stored,
                               preferred_element_type=jnp.int32)
        row_sums = jnp.sum(x16.astype(jnp.int32), axis=lc)[..., None]
        acc = (sums - row_sums * w.zero.reshape(-1).astype(jnp.int32)).astype(jnp.float32)
    elif activation_bits == 8:
        acc = lax.dot_general(xq.astype(jnp.int8), w.q, dims,
                              preferred_element_type=jnp.int32).astype(jnp.float32)
    else:
        hi = jnp.round(xq / SPLIT)
        halves = jnp.stack([hi, xq - SPLIT * hi]).astype(jnp.int8)
        (_, rc), batch = dims
        sums = lax.dot_general(halves, w.q, ((tuple(a + 1 for a in lc), rc), batch),
                               preferred_element_type=jnp.int32).astype(jnp.float32)
        acc = SPLIT * sums[0] + sums[1]
    # The rows' scale once more, written apart from s_x: a scalar that both the codes and the
    # output read gets an IREE dispatch of its own (one a quantised input, four a layer).
    # Where amax is 0 every code and sum is 0, so the `where` is not needed here.
    s_rows = jnp.squeeze(amax, axis=lc)[..., None] * (1 / top)
    out = acc * s_rows * w.scale.reshape(-1).astype(jnp.float32)
    return out.astype(eqn.outvars[0].aval.dtype)


def _narrow(eqn: core.JaxprEqn) -> bool:
    return eqn.outvars[0].aval.dtype in (jnp.bfloat16, jnp.float16)


def _wide_dot(eqn: core.JaxprEqn, invals: list[Any]) -> Any:
    params = {**eqn.params, "preferred_element_type": jnp.float32}
    with eqn.ctx.manager:
        acc = eqn.primitive.bind(*invals, **params)
    return acc.astype(eqn.outvars[0].aval.dtype)


def _matvec_applies(eqn: core.JaxprEqn, invals: list[Any], w: Packed) -> bool:
    """A product of few rows with the packed weight on the right, contracting its input
    axis (its last, or its first when the weight is `M.T`), no batch axes."""
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = invals
    rows = math.prod(d for i, d in enumerate(jnp.shape(lhs)) if i not in lc)
    return (not lb and not rb and jnp.ndim(rhs) == 2 and len(rc) == 1
            and rc[0] == (0 if w.transposed else 1) and rows < MATVEC_ROWS)


def _packed_dot(eqn: core.JaxprEqn, lhs: Any, w: Packed) -> Any:
    (lc, _), _ = eqn.params["dimension_numbers"]
    x = jnp.moveaxis(jnp.asarray(lhs), lc[0], -1).astype(jnp.float32)
    return w.matvec(x).astype(eqn.outvars[0].aval.dtype)


def _rows_readable(tag: Tag) -> bool:
    """A weight whose row lookups read the rows' codes alone: packed tiles, or rotated codes
    quantised per row (the whole weight un-rotated would be a product over all its rows)."""
    return isinstance(tag, Packed) or isinstance(tag, QTensor) and bool(tag.rotation) \
        and not tag.transposed and tag.axis == -1


def _row_lookup(eqn: core.JaxprEqn, invals: list[Any], w: Packed | QTensor) -> Any | None:
    """Whole rows of the (untransposed, 2-D) weight, `M[idx]`: `dynamic_slice`
    of one row or `gather` of rows along axis 0; None for any other indexing."""
    out = eqn.outvars[0].aval
    if w.transposed or jnp.ndim(invals[0]) != 2:
        return None
    inner = jnp.shape(invals[0])[1]
    if eqn.primitive.name == "dynamic_slice":
        if tuple(eqn.params["slice_sizes"]) != (1, inner):   # (the column start clamps to 0)
            return None
        return w.take_rows(jnp.reshape(invals[1], (1,))).astype(out.dtype)
    dims = eqn.params["dimension_numbers"]
    if (tuple(dims.offset_dims), tuple(dims.collapsed_slice_dims), tuple(dims.start_index_map),
            tuple(eqn.params["slice_sizes"])) != ((jnp.ndim(invals[1]) - 1,), (0,), (0,),
                                                  (1, inner)) \
            or dims.operand_batching_dims or jnp.shape(invals[1])[-1] != 1:
        return None
    return w.take_rows(jnp.asarray(invals[1])[..., 0]).astype(out.dtype)



def contraction_axes(fn: Callable[..., Any], args: Sequence[Any], n_weights: int
                     ) -> list[int | None]:
    """Per flat weight (the first `n_weights` flat arguments of `fn(*args)`): the axis
    (-1 or -2) that every `dot_general` taking it as its 2-D right operand contracts
    (following it through jit calls, dtype conversions, 2-D transposes (`x @ W.T`) and scans,
    whose xs lose their leading axis), or None when none does or uses disagree."""
    closed = jax.make_jaxpr(fn)(*args)
    found: dict[int, set[int | None]] = {}
    Origin = tuple[int, bool]   # the weight's index, and whether this value is its transpose

    def walk(jaxpr: core.Jaxpr, origin: dict[core.Var, Origin]) -> None:
        for eqn in jaxpr.eqns:
            ins = [None if isinstance(v, core.Literal) else origin.get(v) for v in eqn.invars]
            name = eqn.primitive.name
            if name in ("jit", "pjit", "scan"):
                inner = eqn.params["jaxpr"].jaxpr
                walk(inner, {v: o for v, o in zip(inner.invars, ins, strict=True)
                             if o is not None})
            elif name == "convert_element_type" and ins[0] is not None:
                origin[eqn.outvars[0]] = ins[0]
            elif name == "transpose" and ins[0] is not None \
                    and tuple(eqn.params["permutation"]) == (1, 0):
                origin[eqn.outvars[0]] = (ins[0][0], not ins[0][1])
            elif name == "dot_general":
                (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
                if ins[0] is not None:
                    found.setdefault(ins[0][0], set()).add(None)
                if ins[1] is not None:
                    index, flipped = ins[1]
                    two_d = eqn.invars[1].aval.ndim == 2 and len(rc) == 1 and not rb
                    axis = (-1 - rc[0] if flipped else rc[0] - 2) if two_d else None
                    found.setdefault(index, set()).add(axis)

    top = closed.jaxpr
    walk(top, {v: (i, False) for i, v in enumerate(top.invars[:n_weights])})
    return [axes.pop() if len(axes := found.get(i, set())) == 1 else None
            for i in range(n_weights)]
