"""Reduction primitives: reduce_sum/max/min/prod/and/or over static axes (one
`stablehlo.reduce` each) and argmax/argmin with NumPy's tie and NaN rules."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mjcore import dtypes
from mjcore.ad import linear_jvp
from mjcore.backend.hlo import FunctionBuilder, Value, i64_array
from mjcore.backend.lowering import LoweringContext
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.lax import arithmetic
from mjcore.lax.base import broadcast_in_dim, convert_element_type, full, reshape, transpose
from mjcore.lax.comparison import eq
from mjcore.lax.families import scalar_constant
from mjcore.lax.slicing import slice_in_dim
from mjcore.lax.structural import check_axes, normalize_axes, pad

ArrayLike = Any
Shape = tuple[int, ...]


def _reduced_shape(shape: Shape, axes: tuple[int, ...]) -> Shape:
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _kept_axes(ndim: int, axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(i for i in range(ndim) if i not in axes)


def _compare(b: FunctionBuilder, x: Value, y: Value, direction: str) -> Value:
    ctype = {"b": "UNSIGNED", "u": "UNSIGNED", "i": "SIGNED", "f": "FLOAT"}[x.aval.dtype.kind]
    return b.op(
        "stablehlo.compare",
        [x, y],
        x.aval.update(dtype=np.dtype(bool), weak_type=False),
        f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
        f"compare_type = #stablehlo<comparison_type {ctype}>",
    )


def _lowest(dtype: np.dtype) -> Any:
    return -np.inf if dtype.kind == "f" else (False if dtype.kind == "b" else np.iinfo(dtype).min)


def _highest(dtype: np.dtype) -> Any:
    return np.inf if dtype.kind == "f" else (True if dtype.kind == "b" else np.iinfo(dtype).max)


def _all_ones(dtype: np.dtype) -> Any:
    return True if dtype.kind == "b" else (-1 if dtype.kind == "i" else np.iinfo(dtype).max)


# --- the monoid reductions ------------------------------------------------------------------


def _reducer(
    name: str,
    kinds: str,
    hlo_op: Callable[[np.dtype], str],
    identity: Callable[[np.dtype], Any],
) -> Primitive:
    """A reduction primitive with its abstract_eval, lowering and batching rules.

    `hlo_op(dtype)` names the StableHLO combiner and `identity(dtype)` its identity element.
    """
    prim = Primitive(name)

    def abstract_eval(x: ShapedArray, *, axes: tuple[int, ...]) -> ShapedArray:
        if x.dtype.kind not in kinds:
            raise TypeError(f"{name} does not accept dtype {x.dtype.name}")
        check_axes(name, axes, x.shape)
        return ShapedArray(_reduced_shape(x.shape, axes), x.dtype, x.weak_type)

    def lowering(ctx: LoweringContext, x: Value, *, axes: tuple[int, ...]) -> Value:
        b = ctx.builder
        dtype = x.aval.dtype
        scalar = ShapedArray((), dtype)
        op = hlo_op(dtype)
        region = b.region([scalar, scalar], lambda rb, acc, y: [rb.op(op, [acc, y], scalar)])
        return b.op(
            "stablehlo.reduce",
            [x, scalar_constant(b, identity(dtype), dtype)],
            ctx.aval_out.strip_weak_type(),
            f"dimensions = {i64_array(axes)}",
            regions=[region],
        )

    def batching(vals, dims, *, axes):
        (x,), (bdim,) = vals, dims
        moved = tuple(a + (a >= bdim) for a in axes)
        return prim.bind1(x, axes=moved), bdim - sum(a < bdim for a in moved)

    prim.def_abstract_eval(abstract_eval)
    prim.def_lowering(lowering)
    prim.def_batching(batching)
    return prim


def _bind_reduction(prim: Primitive, x: ArrayLike, axes: int | Sequence[int]) -> Any:
    axes = tuple(sorted(normalize_axes(x, axes)))
    if not axes:
        return x
    return prim.bind1(x, axes=axes)


reduce_sum_p = _reducer("reduce_sum", "iufc", lambda dt: "stablehlo.add", lambda dt: 0)
reduce_prod_p = _reducer("reduce_prod", "iufc", lambda dt: "stablehlo.multiply", lambda dt: 1)
reduce_max_p = _reducer(
    "reduce_max",
    "biuf",
    lambda dt: "stablehlo.or" if dt.kind == "b" else "stablehlo.maximum",
    _lowest,
)
reduce_min_p = _reducer(
    "reduce_min",
    "biuf",
    lambda dt: "stablehlo.and" if dt.kind == "b" else "stablehlo.minimum",
    _highest,
)
reduce_and_p = _reducer("reduce_and", "biu", lambda dt: "stablehlo.and", _all_ones)
reduce_or_p = _reducer("reduce_or", "biu", lambda dt: "stablehlo.or", lambda dt: 0)
reduce_xor_p = _reducer("reduce_xor", "biu", lambda dt: "stablehlo.xor", lambda dt: 0)


def reduce_sum(x: ArrayLike, axes: int | Sequence[int]) -> Any:
    """Sum of `x` over `axes`."""
    return _bind_reduction(reduce_sum_p, x, axes)


def reduce_prod(x: ArrayLike, axes: int | Sequence[int]) -> Any:
    """Product of `x` over `axes`."""
    return _bind_reduction(reduce_prod_p, x, axes)


def reduce_max(x: ArrayLike, axes: int | Sequence[int]) -> Any:
    """Maximum of `x` over `axes`; NaN propagates. An empty reduction gives the lowest value."""
    return _bind_reduction(reduce_max_p, x, axes)


def reduce_min(x: ArrayLike, axes: int | Sequence[int]) -> Any:
    """Minimum of `x` over `axes`; NaN propagates. An empty reduction gives the highest value."""
    return _bind_reduction(reduce_min_p, x, axes)


def reduce_and(x: ArrayLike, axes: int | Sequence[int]) -> Any:
    """Logical (bool) or bitwise (integer) and of `x` over `axes`."""
    return _bind_reduction(reduce_and_p, x, axes)


def reduce_or(x: ArrayLike, axes: int | Sequence[int]) -> Any:
    """Logical (bool) or bitwise (integer) or of `x` over `axes`."""
    return _bind_reduction(reduce_or_p, x, axes)


def reduce_xor(x: ArrayLike, axes: int | Sequence[int]) -> Any:
    """Logical (bool: parity) or bitwise (integer) exclusive or of `x` over `axes`."""
    return _bind_reduction(reduce_xor_p, x, axes)


linear_jvp(reduce_sum_p)


@reduce_sum_p.def_transpose
def _reduce_sum_transpose(ct, x, *, axes):
    return [broadcast_in_dim(ct, x.aval.shape, _kept_axes(x.aval.ndim, axes))]


def _chooser_jvp(prim: Primitive) -> None:
    """max/min: the tangent at the chosen elements, averaged over ties (as in JAX)."""

    def jvp(primals, tangents, *, axes):
        (x,), (x_dot,) = primals, tangents
        out = prim.bind1(x, axes=axes)
        aval = get_aval(x)
        chosen = eq(x, broadcast_in_dim(out, aval.shape, _kept_axes(aval.ndim, axes)))
        weights = convert_element_type(chosen, get_aval(x_dot).dtype)
        total = reduce_sum_p.bind1(arithmetic.mul(x_dot, weights), axes=axes)
        return out, arithmetic.div(total, reduce_sum_p.bind1(weights, axes=axes))

    prim.def_jvp(jvp)


_chooser_jvp(reduce_max_p)
_chooser_jvp(reduce_min_p)


@reduce_prod_p.def_jvp
def _reduce_prod_jvp(primals, tangents, *, axes):
    # Product rule on a balanced tree of pairwise products, as JAX does: exact when elements
    # are zero (no division by the product) and only O(log n) deep.
    (x,), (x_dot,) = primals, tangents
    out = reduce_prod_p.bind1(x, axes=axes)
    aval = get_aval(x)
    kept = _kept_axes(aval.ndim, axes)
    out_shape = _reduced_shape(aval.shape, axes)
    n = math.prod(aval.shape[a] for a in axes)
    if n == 0:
        return out, full(out_shape, 0, get_aval(x_dot).dtype)
    rows = (n, *out_shape)
    p = reshape(transpose(x, (*axes, *kept)), rows)
    t = reshape(transpose(x_dot, (*axes, *kept)), rows)
    while n > 1:
        half = (n + 1) // 2
        p1, p2 = slice_in_dim(p, 0, half, 0), slice_in_dim(p, half, n, 0)
        t1, t2 = slice_in_dim(t, 0, half, 0), slice_in_dim(t, half, n, 0)
        if n % 2:
            config = ((0, 1, 0),) + ((0, 0, 0),) * len(out_shape)
            p2 = pad(p2, full((), 1, get_aval(p2).dtype), config)
            t2 = pad(t2, full((), 0, get_aval(t2).dtype), config)
        p, t = (
            arithmetic.mul(p1, p2),
            arithmetic.add(arithmetic.mul(t1, p2), arithmetic.mul(p1, t2)),
        )
        n = half
    return out, reshape(t, out_shape)


def _zero_tangent_jvp(prim: Primitive) -> None:
    def jvp(primals, tangents, **params):
        return prim.bind1(*primals, **params), None

    prim.def_jvp(jvp)


_zero_tangent_jvp(reduce_and_p)
_zero_tangent_jvp(reduce_or_p)
_zero_tangent_jvp(reduce_xor_p)


# --- argmax / argmin ------------------------------------------------------------------------


def _arg_chooser(name: str, direction: str, init: Callable[[np.dtype], Any]) -> Primitive:
    """argmax (direction GT) or argmin (LT): first occurrence wins, NaN beats every number."""
    prim = Primitive(name)

    def abstract_eval(x: ShapedArray, *, axis: int, index_dtype: np.dtype) -> ShapedArray:
        if x.dtype.kind not in "biuf":
            raise TypeError(f"{name} does not accept dtype {x.dtype.name}")
        if index_dtype.kind not in "iu":
            raise TypeError(f"{name}: index_dtype must be an integer type, got {index_dtype}")
        check_axes(name, (axis,), x.shape)
        if x.shape[axis] == 0:
            raise ValueError(
                f"{name}: attempt to get {name} of an empty sequence (axis {axis} of shape "
                f"{x.shape})"
            )
        return ShapedArray(_reduced_shape(x.shape, (axis,)), index_dtype)

    def combine(b: FunctionBuilder, va: Value, ia: Value, vb: Value, ib: Value) -> list[Value]:
        # Pick (va, ia) iff it comes first in the order: NaN first, then by value in
        # `direction`, then by lower index. A total order, so XLA may combine in any order.
        pred = ShapedArray((), np.dtype(bool))

        def both(p: Value, q: Value) -> Value:
            return b.op("stablehlo.and", [p, q], pred)

        def either(p: Value, q: Value) -> Value:
            return b.op("stablehlo.or", [p, q], pred)

        better = _compare(b, va, vb, direction)
        same = _compare(b, va, vb, "EQ")
        if va.aval.dtype.kind == "f":
            a_nan, b_nan = _compare(b, va, va, "NE"), _compare(b, vb, vb, "NE")
            better = either(better, both(a_nan, b.op("stablehlo.not", [b_nan], pred)))
            same = either(same, both(a_nan, b_nan))
        pick_a = either(better, both(same, _compare(b, ia, ib, "LT")))
        return [
            b.op("stablehlo.select", [pick_a, va, vb], va.aval),
            b.op("stablehlo.select", [pick_a, ia, ib], ia.aval),
        ]

    def lowering(ctx: LoweringContext, x: Value, *, axis: int, index_dtype: np.dtype):
        b = ctx.builder
        dtype = x.aval.dtype
        indices = b.op(
            "stablehlo.iota",
            [],
            ShapedArray(x.aval.shape, index_dtype),
            f"iota_dimension = {axis} : i64",
        )
        value_scalar, index_scalar = ShapedArray((), dtype), ShapedArray((), index_dtype)
        region = b.region([value_scalar, index_scalar] * 2, combine)
        out = ctx.aval_out
        _, index = b.op(
            "stablehlo.reduce",
            [
                x,
                indices,
                scalar_constant(b, init(dtype), dtype),
                scalar_constant(b, 0, index_dtype),
            ],
            [out.update(dtype=dtype), out],
            f"dimensions = {i64_array((axis,))}",
            regions=[region],
        )
        return index

    def jvp(primals, tangents, *, axis, index_dtype):
        return prim.bind1(*primals, axis=axis, index_dtype=index_dtype), None

    def batching(vals, dims, *, axis, index_dtype):
        (x,), (bdim,) = vals, dims
        moved = axis + (axis >= bdim)
        out = prim.bind1(x, axis=moved, index_dtype=index_dtype)
        return out, bdim - (moved < bdim)

    prim.def_abstract_eval(abstract_eval)
    prim.def_lowering(lowering)
    prim.def_jvp(jvp)
    prim.def_batching(batching)
    return prim


# The identity elements lose every comparison that matters: a row equal to them everywhere
# has its first occurrence at index 0, which is what the initial index says.
argmax_p = _arg_chooser("argmax", "GT", _lowest)
argmin_p = _arg_chooser("argmin", "LT", _highest)


def argmax(x: ArrayLike, axis: int, index_dtype: Any) -> Any:
    """Index of the largest element along `axis`: the first one among ties, as in NumPy, and
    the first NaN if there is one."""
    (axis,) = normalize_axes(x, (axis,))
    index_dtype = dtypes.canonicalize_dtype(index_dtype, "argmax")
    return argmax_p.bind1(x, axis=axis, index_dtype=index_dtype)


def argmin(x: ArrayLike, axis: int, index_dtype: Any) -> Any:
    """Index of the smallest element along `axis`: the first one among ties, as in NumPy, and
    the first NaN if there is one."""
    (axis,) = normalize_axes(x, (axis,))
    index_dtype = dtypes.canonicalize_dtype(index_dtype, "argmin")
    return argmin_p.bind1(x, axis=axis, index_dtype=index_dtype)


__all__ = [
    "argmax",
    "argmin",
    "reduce_and",
    "reduce_max",
    "reduce_min",
    "reduce_or",
    "reduce_prod",
    "reduce_sum",
    "reduce_xor",
]
