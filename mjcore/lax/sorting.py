"""Sorting and cumulative primitives: `sort` (multi-operand `stablehlo.sort` in NumPy's total
order, with `sort_key_val` and `top_k` built on it) and cumsum/cumprod/cummax/cummin/
cumlogsumexp (one `stablehlo.reduce_window` each)."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mjcore import dtypes
from mjcore.ad import (
    UndefinedPrimal,
    Zero,
    def_transposed_jvp_vjp,
    is_undefined_primal,
    jvp_flat,
    linear_jvp,
)
from mjcore.backend.hlo import FunctionBuilder, Value, i64_array
from mjcore.backend.lowering import LoweringContext
from mjcore.batching import NOT_MAPPED, move_bdim
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.lax import arithmetic, host_vjp
from mjcore.lax.base import broadcast_to, full, select_n
from mjcore.lax.bitcast import bitcast_convert_type
from mjcore.lax.bitwise import bitwise_and, bitwise_not, bitwise_xor, shift_right_arithmetic
from mjcore.lax.comparison import ne
from mjcore.lax.families import scalar_constant
from mjcore.lax.prefix_scan import associative_scan
from mjcore.lax.slicing import slice_in_dim
from mjcore.lax.structural import broadcasted_iota, check_axes, normalize_axes
from mjcore.lax.transcendental import exp, log1p

ArrayLike = Any
Shape = tuple[int, ...]

_PRED = ShapedArray((), np.dtype(bool))


def _index_dtype(n: int) -> np.dtype:
    return np.dtype(np.int32 if n < 2**31 else np.int64)


# --- sort -----------------------------------------------------------------------------------

sort_p = Primitive("sort", multiple_results=True)


def sort(
    operand: ArrayLike | Sequence[ArrayLike],
    dimension: int = -1,
    is_stable: bool = True,
    num_keys: int = 1,
) -> Any:
    """Sort `operand` (an array, or a sequence of same-shaped arrays) along `dimension`.

    The first `num_keys` operands are the keys, compared lexicographically in NumPy's total
    order: NaNs last, -0.0 equal to 0.0, complex numbers by real then imaginary part. The other
    operands are permuted alongside. Returns the same structure as `operand`.
    """
    single = not isinstance(operand, list | tuple)
    operands = [operand] if single else list(operand)
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"sort: num_keys must be in [1, {len(operands)}], got {num_keys}")
    (dimension,) = normalize_axes(operands[0], (dimension,))
    outs = sort_p.bind(
        *operands, dimension=dimension, is_stable=bool(is_stable), num_keys=int(num_keys)
    )
    return outs[0] if single else outs


@sort_p.def_abstract_eval
def _sort_abstract_eval(*operands: ShapedArray, dimension: int, is_stable: bool, num_keys: int):
    shape = operands[0].shape
    if any(x.shape != shape for x in operands):
        raise TypeError(
            "sort: operands must have one shape, got " + ", ".join(str(x.shape) for x in operands)
        )
    check_axes("sort", (dimension,), shape)
    return list(operands)


def _compare(b: FunctionBuilder, x: Value, y: Value, direction: str) -> Value:
    ctype = {"b": "UNSIGNED", "u": "UNSIGNED", "i": "SIGNED", "f": "FLOAT"}[
        dtypes.kind(x.aval.dtype)
    ]
    return b.op(
        "stablehlo.compare",
        [x, y],
        _PRED,
        f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
        f"compare_type = #stablehlo<comparison_type {ctype}>",
    )


def _total_less(b: FunctionBuilder, x: Value, y: Value) -> list[Value]:
    """[x < y] in NumPy's total order, as a lexicographic list of (less, tie) pairs flattened:
    one pair for real types, two (real, imaginary) for complex."""
    if x.aval.dtype.kind == "c":
        part = ShapedArray((), np.dtype(f"f{x.aval.dtype.itemsize // 2}"))
        pairs = []
        for op in ("stablehlo.real", "stablehlo.imag"):
            pairs += _total_less(b, b.op(op, [x], part), b.op(op, [y], part))
        return pairs
    less = _compare(b, x, y, "LT")
    if dtypes.kind(x.aval.dtype) == "f":
        # NaN sorts after every number: x < y also when y is NaN and x is not.
        x_num, y_nan = _compare(b, x, x, "EQ"), _compare(b, y, y, "NE")
        less = b.op("stablehlo.or", [less, b.op("stablehlo.and", [x_num, y_nan], _PRED)], _PRED)
        greater = _compare(b, y, x, "LT")
        y_num, x_nan = _compare(b, y, y, "EQ"), _compare(b, x, x, "NE")
        greater = b.op(
            "stablehlo.or", [greater, b.op("stablehlo.and", [y_num, x_nan], _PRED)], _PRED
        )
    else:
        greater = _compare(b, y, x, "LT")
    tie = b.op("stablehlo.not", [b.op("stablehlo.or", [less, greater], _PRED)], _PRED)
    return [less, tie]


@sort_p.def_lowering
def _sort_lowering(ctx: LoweringContext, *operands: Value, dimension, is_stable, num_keys):
    b = ctx.builder
    scalars = [ShapedArray((), x.aval.dtype) for x in operands]

    def comparator(rb: FunctionBuilder, *args: Value) -> list[Value]:
        pairs: list[Value] = []
        for k in range(num_keys):
            pairs += _total_less(rb, args[2 * k], args[2 * k + 1])
        less = pairs[-2]
        for i in range(len(pairs) - 4, -1, -2):
            later = rb.op("stablehlo.and", [pairs[i + 1], less], _PRED)
            less = rb.op("stablehlo.or", [pairs[i], later], _PRED)
        return [less]

    region = b.region([s for s in scalars for _ in range(2)], comparator)
    return b.op(
        "stablehlo.sort",
        list(operands),
        [a.strip_weak_type() for a in ctx.avals_out],
        f"dimension = {dimension} : i64, is_stable = {'true' if is_stable else 'false'}",
        regions=[region],
    )


@sort_p.def_host
def _sort_host(*operands: np.ndarray, dimension: int, is_stable: bool, num_keys: int):
    # The comparator's order: NaN last, -0.0 tied with 0.0, complex keys by real part, then
    # imaginary part (NB: NumPy puts every complex number with a NaN part last instead); a
    # stable sort is one valid result of an unstable one.
    keys = []
    for k in operands[:num_keys]:
        keys += [k.real, k.imag] if k.dtype.kind == "c" else [k]
    if len(keys) == 1:
        perm = np.argsort(keys[0], axis=dimension, kind="stable")
    else:
        perm = np.lexsort(keys[::-1], axis=dimension)
    return [np.take_along_axis(x, perm, axis=dimension) for x in operands]


def _permutation(keys: Sequence[Any], dimension: int, is_stable: bool) -> Any:
    """The argsort of `keys` along `dimension` (in the same order `sort` uses)."""
    shape = get_aval(keys[0]).shape
    iota = broadcasted_iota(_index_dtype(shape[dimension]), shape, dimension)
    outs = sort_p.bind(*keys, iota, dimension=dimension, is_stable=is_stable, num_keys=len(keys))
    return outs[-1]


def _permute_by_keys(keys: Any, values: Sequence[Any], dimension: int) -> list[Any]:
    """`values` sorted by the distinct integer `keys` (a permutation along `dimension`)."""
    outs = sort_p.bind(keys, *values, dimension=dimension, is_stable=True, num_keys=1)
    return outs[1:]


@sort_p.def_jvp
def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    # The tangents follow the primal permutation `perm`: out[i] = t[perm[i]]. Sorting by the
    # inverse permutation applies it without a gather, and that sort is linear in the tangents.
    shape = get_aval(primals[0]).shape
    iota = broadcasted_iota(_index_dtype(shape[dimension]), shape, dimension)
    outs = sort_p.bind(
        *primals[:num_keys],
        *primals[num_keys:],
        iota,
        dimension=dimension,
        is_stable=is_stable,
        num_keys=num_keys,
    )
    primals_out, perm = outs[:-1], outs[-1]
    (inverse,) = _permute_by_keys(perm, [iota], dimension)
    return primals_out, _permute_by_keys(inverse, tangents, dimension)


@sort_p.def_transpose
def _sort_transpose(
    cts: list[Any], *operands: Any, dimension: int, is_stable: bool, num_keys: int
) -> list[Any]:
    keys = operands[:num_keys]
    if any(is_undefined_primal(k) for k in keys):
        raise ValueError("sort is not linear in its keys, so it has no transpose in them")
    host_cts = _sort_transpose_host(cts, operands, dimension, is_stable, num_keys)
    if host_cts is not None:
        return host_cts
    perm = _permutation(keys, dimension, is_stable)
    cts_in: list[Any] = [None] * num_keys
    for x, ct in zip(operands[num_keys:], cts[num_keys:], strict=True):
        if not is_undefined_primal(x):
            cts_in.append(None)
        elif type(ct) is Zero:
            cts_in.append(Zero(x.aval))
        else:
            # Forward out[i] = x[perm[i]], so x_bar[perm[i]] = ct[i]: sort ct by perm.
            cts_in.append(_permute_by_keys(perm, [ct], dimension)[0])
    return cts_in


def _sort_transpose_host(
    cts: list[Any], operands: Sequence[Any], dimension: int, is_stable: bool, num_keys: int
) -> list[Any] | None:
    """`_sort_transpose` on the host (`host_vjp`): sort's host rule on the keys and an iota,
    then on the permutation and each cotangent, as the binds would run them (the values are
    moved, never computed: any path gives the same bits); None where they would not run."""
    keys = []
    for k in operands[:num_keys]:
        value = host_vjp.operand_value(k)
        if value is None:
            return None
        keys.append(value)
    shape = keys[0].shape
    size = max(1, math.prod(shape))
    linear = []
    for x, ct in zip(operands[num_keys:], cts[num_keys:], strict=True):
        value = None
        if is_undefined_primal(x) and type(ct) is not Zero:
            value = host_vjp.host_value(ct)
            if value is None:
                return None
        linear.append(value)
    index_dtype = _index_dtype(shape[dimension])
    if not (
        host_vjp.within(sort_p, keys[0].dtype, size) and host_vjp.within(sort_p, index_dtype, size)
    ):
        return None
    iota = np.arange(shape[dimension], dtype=index_dtype).reshape(
        [-1 if d == dimension else 1 for d in range(len(shape))]
    )
    iota = np.broadcast_to(iota, shape)
    sort = host_vjp.rule(sort_p)
    perm = sort(*keys, iota, dimension=dimension, is_stable=is_stable, num_keys=num_keys)[-1]
    cts_in: list[Any] = [None] * num_keys
    for x, ct, value in zip(operands[num_keys:], cts[num_keys:], linear, strict=True):
        if not is_undefined_primal(x):
            cts_in.append(None)
        elif value is None:
            cts_in.append(Zero(x.aval))
        else:
            (_, out) = sort(perm, value, dimension=dimension, is_stable=True, num_keys=1)
            cts_in.append(host_vjp.wrap(out, out.shape, ct.aval))
    return cts_in


@sort_p.def_eager_vjp
def _sort_eager_vjp(cts, outs, primals, linear, *, dimension, is_stable, num_keys):
    # The jvp's tangent equation sorts the tangents by the inverse permutation; its transpose
    # sorts each cotangent by the permutation, the argsort of the keys (recomputed here, not
    # in the forward pass): `_sort_transpose` with the keys as given and the operands unknown.
    unknown = [
        p if v is None else UndefinedPrimal(v.aval) for p, v in zip(primals, linear, strict=True)
    ]
    cts = [Zero(o.aval) if ct is None else ct for o, ct in zip(outs, cts, strict=True)]
    cts_in = _sort_transpose(
        [None] * num_keys + cts,
        *primals[:num_keys],
        *unknown,
        dimension=dimension,
        is_stable=is_stable,
        num_keys=num_keys,
    )
    return cts_in[num_keys:]


@sort_p.def_batching
def _sort_batching(vals, dims, *, dimension, is_stable, num_keys):
    size = next(get_aval(x).shape[d] for x, d in zip(vals, dims, strict=True) if d is not None)
    moved = []
    for x, d in zip(vals, dims, strict=True):
        if d is NOT_MAPPED:
            aval = get_aval(x)
            moved.append(broadcast_to(x, (size, *aval.shape)))
        else:
            moved.append(move_bdim(x, d, 0))
    outs = sort_p.bind(*moved, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
    return outs, [0] * len(outs)


# --- cumulative reductions ------------------------------------------------------------------


def _cumulative(
    name: str,
    kinds: str,
    hlo_op: Callable[[np.dtype], str | Callable[[FunctionBuilder, Value, Value], Value]],
    identity: Callable[[np.dtype], Any],
    numpy_ufunc: np.ufunc,
) -> Primitive:
    """A cumulative reduction with its abstract_eval, lowering, batching and host rules
    (`numpy_ufunc.accumulate`).

    The lowering is a `reduce_window` whose window spans the whole axis, padded on one side,
    so element i combines elements 0..i (or i..n-1 when `reverse`). `hlo_op(dtype)` is the name
    of the StableHLO combiner, or a function `(builder, acc, y) -> Value` emitting several.
    """
    prim = Primitive(name)

    def abstract_eval(x: ShapedArray, *, axis: int, reverse: bool) -> ShapedArray:
        if dtypes.kind(x.dtype) not in kinds:
            raise TypeError(f"{name} does not accept dtype {x.dtype.name}")
        check_axes(name, (axis,), x.shape)
        return x

    def lowering(ctx: LoweringContext, x: Value, *, axis: int, reverse: bool) -> Value:
        b = ctx.builder
        shape, dtype = x.aval.shape, x.aval.dtype
        if 0 in shape:
            return x
        n = shape[axis]
        window = [1] * len(shape)
        window[axis] = n
        padding = [[0, 0] for _ in shape]
        padding[axis] = [0, n - 1] if reverse else [n - 1, 0]
        scalar = ShapedArray((), dtype)
        op = hlo_op(dtype)
        if callable(op):
            region = b.region([scalar, scalar], lambda rb, acc, y: [op(rb, acc, y)])
        else:
            region = b.region([scalar, scalar], lambda rb, acc, y: [rb.op(op, [acc, y], scalar)])
        rows = ", ".join(f"[{lo}, {hi}]" for lo, hi in padding)
        return b.op(
            "stablehlo.reduce_window",
            [x, scalar_constant(b, identity(dtype), dtype)],
            ctx.aval_out.strip_weak_type(),
            f"window_dimensions = {i64_array(window)}, "
            f"window_strides = {i64_array([1] * len(shape))}, "
            f"padding = dense<[{rows}]> : tensor<{len(shape)}x2xi64>",
            regions=[region],
        )

    def batching(vals, dims, *, axis, reverse):
        (x,), (bdim,) = vals, dims
        moved = axis + (axis >= bdim)
        return prim.bind1(x, axis=moved, reverse=reverse), bdim

    def host(x: np.ndarray, *, axis: int, reverse: bool) -> np.ndarray:
        if reverse:
            x = np.flip(x, axis)
        out = numpy_ufunc.accumulate(x, axis=axis, dtype=x.dtype)
        return np.flip(out, axis) if reverse else out

    prim.def_abstract_eval(abstract_eval)
    prim.def_lowering(lowering)
    prim.def_batching(batching)
    prim.def_host(host)
    return prim


def _lowest(dtype: np.dtype) -> Any:
    return (
        -np.inf
        if dtypes.kind(dtype) == "f"
        else (False if dtype.kind == "b" else np.iinfo(dtype).min)
    )


def _highest(dtype: np.dtype) -> Any:
    return (
        np.inf
        if dtypes.kind(dtype) == "f"
        else (True if dtype.kind == "b" else np.iinfo(dtype).max)
    )


cumsum_p = _cumulative("cumsum", "iufc", lambda dt: "stablehlo.add", lambda dt: 0, np.add)
cumprod_p = _cumulative(
    "cumprod", "iufc", lambda dt: "stablehlo.multiply", lambda dt: 1, np.multiply
)
cummax_p = _cumulative(
    "cummax",
    "biuf",
    lambda dt: "stablehlo.or" if dt.kind == "b" else "stablehlo.maximum",
    _lowest,
    np.maximum,
)
cummin_p = _cumulative(
    "cummin",
    "biuf",
    lambda dt: "stablehlo.and" if dt.kind == "b" else "stablehlo.minimum",
    _highest,
    np.minimum,
)


def _bind_cumulative(prim: Primitive, x: ArrayLike, axis: int, reverse: bool) -> Any:
    (axis,) = normalize_axes(x, (axis,))
    return prim.bind1(x, axis=axis, reverse=bool(reverse))


def cumsum(x: ArrayLike, axis: int = 0, reverse: bool = False) -> Any:
    """Running sum along `axis` (from the end when `reverse`)."""
    return _bind_cumulative(cumsum_p, x, axis, reverse)


def cumprod(x: ArrayLike, axis: int = 0, reverse: bool = False) -> Any:
    """Running product along `axis` (from the end when `reverse`)."""
    return _bind_cumulative(cumprod_p, x, axis, reverse)


def cummax(x: ArrayLike, axis: int = 0, reverse: bool = False) -> Any:
    """Running maximum along `axis` (from the end when `reverse`); NaN propagates."""
    return _bind_cumulative(cummax_p, x, axis, reverse)


def cummin(x: ArrayLike, axis: int = 0, reverse: bool = False) -> Any:
    """Running minimum along `axis` (from the end when `reverse`); NaN propagates."""
    return _bind_cumulative(cummin_p, x, axis, reverse)


linear_jvp(cumsum_p)


@cumsum_p.def_transpose
def _cumsum_transpose(ct, x, *, axis, reverse):
    return [host_vjp.bind1(cumsum_p, ct, axis=axis, reverse=not reverse)]


def _scan_jvp(prim: Primitive, combine: Callable[[Any, Any], Any]) -> None:
    """The jvp of the associative scan of `combine` (as JAX differentiates cumprod/cummax)."""

    def jvp(primals, tangents, *, axis, reverse):
        (x,), (x_dot,) = primals, tangents
        out = prim.bind1(x, axis=axis, reverse=reverse)
        if not dtypes.is_inexact(get_aval(x).dtype):
            return out, None

        def scan(y: Any) -> list[Any]:
            return [associative_scan(combine, y, reverse, axis)]

        _, (out_dot,) = jvp_flat(scan, [x], [x_dot])
        return out, out_dot

    prim.def_jvp(jvp)


_scan_jvp(cumprod_p, arithmetic.mul)
_scan_jvp(cummax_p, arithmetic.max)
_scan_jvp(cummin_p, arithmetic.min)
# Eager grad: the scan's jvp linearized and transposed when a cotangent arrives, one program
for _p in (cumprod_p, cummax_p, cummin_p):
    def_transposed_jvp_vjp(_p)


# --- sort_key_val / top_k (compositions of sort) --------------------------------------------


def sort_key_val(
    keys: ArrayLike, values: ArrayLike, dimension: int = -1, is_stable: bool = True
) -> tuple[Any, Any]:
    """Sort `keys` along `dimension` and apply the same permutation to `values`.

    Returns the pair `(sorted_keys, permuted_values)`; the order is `sort`'s.
    """
    out_keys, out_values = sort([keys, values], dimension, is_stable, num_keys=1)
    return out_keys, out_values


def _descending_key(x: Any) -> Any:
    """An integer (or bool) key whose ascending order is the descending total order of `x`.

    Floats compare as XLA's TopK compares them: -NaN < -inf < ... < -0.0 < 0.0 < ... < inf <
    NaN. Their bits, read as a signed integer with the magnitude bits flipped for negative
    numbers, are in that order; `bitwise_not` then reverses any integer order exactly.
    """
    dtype = get_aval(x).dtype
    if dtypes.kind(dtype) == "f":
        int_dtype = np.dtype(f"int{8 * dtype.itemsize}")
        bits = bitcast_convert_type(x, int_dtype)
        sign = shift_right_arithmetic(bits, full((), 8 * dtype.itemsize - 1, int_dtype))
        magnitude = full((), np.iinfo(int_dtype).max, int_dtype)
        x = bitwise_xor(bits, bitwise_and(sign, magnitude))
    return bitwise_not(x)


def top_k(operand: ArrayLike, k: int, *, axis: int = -1) -> tuple[Any, Any]:
    """The `k` largest entries along `axis` (the last by default), largest first, and their
    int32 indices. Equal entries come in index order; NaN is larger than every number and
    0.0 larger than -0.0, as in XLA's TopK.

    Raises:
      TypeError: for a complex `operand`.
      ValueError: if `operand` is a scalar or `k` is negative or larger than the axis.
    """
    aval = get_aval(operand)
    k = operator.index(k)
    if aval.ndim == 0:
        raise ValueError("top_k: operand must have at least one axis, got a scalar")
    if aval.dtype.kind == "c":
        raise TypeError(f"top_k: operand must be real, got {aval.str_short()}")
    (axis,) = normalize_axes(operand, (axis,))
    check_axes("top_k", (axis,), aval.shape)
    n = aval.shape[axis]
    if not 0 <= k <= n:
        raise ValueError(
            f"top_k: k={k} must be between 0 and the size {n} of axis {axis} of the operand "
            f"of shape {aval.shape}"
        )
    # Ascending stable sort by the descending key: largest first, ties in index order.
    indices = broadcasted_iota(np.int32, aval.shape, axis)
    _, values, indices = sort_p.bind(
        _descending_key(operand), operand, indices, dimension=axis, is_stable=True, num_keys=1
    )
    return slice_in_dim(values, 0, k, axis=axis), slice_in_dim(indices, 0, k, axis=axis)


# --- cumlogsumexp ---------------------------------------------------------------------------


def _logaddexp(x: Any, y: Any) -> Any:
    """`log(exp(x) + exp(y))` without overflow (JAX's formula). Where `x - y` is NaN (equal
    infinities, or a NaN) the result is `x + y`; the other branch sees a safe 0 there, so its
    derivative stays finite and reverse mode does not turn 0 * NaN into NaN."""
    delta = arithmetic.sub(x, y)
    undefined = ne(delta, delta)
    delta = select_n(undefined, delta, full(get_aval(delta).shape, 0, get_aval(delta).dtype))
    spread = log1p(exp(arithmetic.neg(arithmetic.abs(delta))))
    return select_n(undefined, arithmetic.add(arithmetic.max(x, y), spread), arithmetic.add(x, y))


def _emit_logaddexp(b: FunctionBuilder, x: Value, y: Value) -> Value:
    """`_logaddexp` on scalars, as StableHLO ops (the combiner of the `reduce_window`)."""
    aval = x.aval
    pred = ShapedArray((), np.dtype(bool))
    delta = b.op("stablehlo.subtract", [x, y], aval)
    undefined = b.op(
        "stablehlo.compare",
        [delta, delta],
        pred,
        "comparison_direction = #stablehlo<comparison_direction NE>, "
        "compare_type = #stablehlo<comparison_type FLOAT>",
    )
    spread = b.op("stablehlo.abs", [delta], aval)
    spread = b.op("stablehlo.negate", [spread], aval)
    spread = b.op("stablehlo.exponential", [spread], aval)
    spread = b.op("stablehlo.log_plus_one", [spread], aval)
    finite = b.op("stablehlo.add", [b.op("stablehlo.maximum", [x, y], aval), spread], aval)
    return b.op("stablehlo.select", [undefined, b.op("stablehlo.add", [x, y], aval), finite], aval)


cumlogsumexp_p = _cumulative("cumlogsumexp", "f", lambda dt: _emit_logaddexp, _lowest, np.logaddexp)
_scan_jvp(cumlogsumexp_p, _logaddexp)


def cumlogsumexp(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Any:
    """Running `log(sum(exp(x)))` along `axis` (from the end when `reverse`), without overflow:
    a `reduce_window` of a stable `logaddexp`, differentiated through a parallel prefix scan
    of it (as JAX does).

    Raises:
      TypeError: for a non-floating `operand`.
    """
    aval = get_aval(operand)
    if dtypes.kind(aval.dtype) != "f":
        raise TypeError(
            f"cumlogsumexp: needs a floating array, got {aval.str_short()}; convert with "
            "convert_element_type first"
        )
    return _bind_cumulative(cumlogsumexp_p, operand, axis, reverse)


__all__ = [
    "cumlogsumexp",
    "cummax",
    "cummin",
    "cumprod",
    "cumsum",
    "sort",
    "sort_key_val",
    "top_k",
]
