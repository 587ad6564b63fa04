"""NumPy implementations shared by the primitives' host rules (Autodidax Part 1's `impl` rules:
a primitive evaluated by NumPy on host arrays), and the list of which primitives have one.

A host rule takes host ndarrays (possibly 0-d, read-only or strided views) and returns an
ndarray of exactly the dtype and shape `abstract_eval` gives. Where XLA defines what NumPy
leaves undefined or raises on (integer division by zero, shifts past the bit width,
float-to-integer overflow), these helpers give XLA's answer, since that is the primitive's
meaning; the eager mjnp functions composed from the primitives add NumPy's behaviour.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from mjcore.core import Primitive

Shape = tuple[int, ...]


def ufunc(f: Callable[..., Any]) -> Callable[..., np.ndarray]:
    """A host rule from a NumPy ufunc (or any function of arrays): 0-d results stay arrays."""

    def rule(*args: np.ndarray, **params: Any) -> np.ndarray:
        out = f(*args)
        return out if type(out) is np.ndarray else np.asarray(out)

    rule.__name__ = getattr(f, "__name__", "rule")
    rule.numpy_function = f  # type: ignore[attr-defined]  # eager callers may call it directly
    return rule


def identity(x: np.ndarray, **params: Any) -> np.ndarray:
    return x


def _all_ones(dtype: np.dtype) -> np.ndarray:
    return np.invert(np.zeros((), dtype))


# --- integer arithmetic with XLA's definitions ---------------------------------------------


def div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """XLA's divide: true division for inexact dtypes; for integers, rounding toward zero,
    `x / 0` all ones (-1 signed) and `INT_MIN / -1 == INT_MIN` (no warning, no trap)."""
    if x.dtype.kind not in "iu":
        return np.asarray(np.divide(x, y))
    safe, zero = _safe_divisor(x, y)
    r = np.fmod(x, safe)
    q = np.floor_divide(np.subtract(x, r), safe)  # exact: x - r is a multiple of safe
    return np.asarray(q if zero is None else np.where(zero, _all_ones(x.dtype), q))


def rem(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """XLA's remainder: C's `fmod` (the sign of `x`); for integers `x % 0 == x` and
    `INT_MIN % -1 == 0`."""
    if x.dtype.kind not in "iu":
        return np.asarray(np.fmod(x, y))
    safe, zero = _safe_divisor(x, y)
    r = np.fmod(x, safe)
    return np.asarray(r if zero is None else np.where(zero, x, r))


def _inexact_ufunc(f: np.ufunc) -> Callable[..., Any]:
    """A `specialize` for a rule that is the ufunc `f` on inexact operands (its integer
    definitions are XLA's): `f` itself for those, so eager callers call it directly."""

    def specialize(avals_in: Sequence[Any], **params: Any) -> np.ufunc | None:
        return f if avals_in[0].dtype.kind not in "biu" else None

    return specialize


# `rule.specialize(avals_in, **params)`: the NumPy function the rule is at these operands
# (called on the values alone, with the same results), or None (eager_fusion's one-rule path)
div.specialize = _inexact_ufunc(np.divide)  # type: ignore[attr-defined]
rem.specialize = _inexact_ufunc(np.fmod)  # type: ignore[attr-defined]


def _safe_divisor(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """`y` with 1 for the divisors NumPy cannot take (0, and -1 under INT_MIN, whose quotient
    INT_MIN and remainder 0 are those of dividing by 1), and the mask of zeros (None if none)."""
    zero = np.equal(y, 0)
    if zero.any():
        y = np.where(zero, 1, y)
    else:
        zero = None
    if x.dtype.kind == "i":
        overflow = np.equal(y, -1)
        if overflow.any():
            y = np.where(overflow & np.equal(x, np.iinfo(x.dtype).min), 1, y)
    return y, zero


def integer_pow(x: np.ndarray, y: int) -> np.ndarray:
    """`x ** y` by the same square-and-multiply chain as the lowering (so bit-identical)."""
    if y == 0:
        return np.ones(x.shape, x.dtype)
    acc = None
    base = x
    n = -y if y < 0 else y
    while n:
        if n & 1:
            acc = base if acc is None else np.multiply(acc, base)
        n >>= 1
        if n:
            base = np.multiply(base, base)
    if y < 0:
        acc = div(np.ones((), x.dtype), np.asarray(acc))
    return np.asarray(acc)


def pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:  # noqa: A001  (the primitive's name)
    """XLA's power; for integers a negative exponent gives 0, or +-1 for a base of +-1."""
    if x.dtype.kind not in "iu":
        return np.asarray(np.power(x, y))
    if x.dtype.kind == "u":
        return np.asarray(np.power(x, y))
    neg = np.less(y, 0)
    out = np.power(x, np.where(neg, 0, y))
    one = np.equal(x, 1)
    minus_one = np.equal(x, -1)
    odd = np.not_equal(np.bitwise_and(y, 1), 0)
    small = np.where(one, 1, np.where(minus_one, np.where(odd, -1, 1), 0)).astype(x.dtype)
    return np.asarray(np.where(neg, small, out))


pow.specialize = _inexact_ufunc(np.power)  # type: ignore[attr-defined]


def round(x: np.ndarray, *, rounding_method: int) -> np.ndarray:  # noqa: A001  (the primitive)
    """Round half away from zero (method 0) or half to even (method 1, `numpy.rint`)."""
    if rounding_method == 1:
        return np.asarray(np.rint(x))
    t = np.trunc(x)
    # x - t is exact; inf - inf is NaN (compared False, so infinities stay), without the
    # warning NumPy's own rounding never gives.
    with np.errstate(invalid="ignore"):
        half = np.greater_equal(np.abs(np.subtract(x, t)), 0.5)
    return np.asarray(np.where(half, np.add(t, np.copysign(np.ones((), x.dtype), x)), t))


def logistic(x: np.ndarray) -> np.ndarray:
    """`1 / (1 + exp(-x))`: exp overflows to inf (and the result to 0) by definition, so the
    overflow is not warned about."""
    with np.errstate(over="ignore"):
        return np.asarray(np.divide(1, np.add(1, np.exp(np.negative(x)))))


def rsqrt(x: np.ndarray) -> np.ndarray:
    """`1 / sqrt(x)`: infinity at zero is the definition, not a division by zero (NumPy has no
    rsqrt to warn); sqrt of a negative still warns as NumPy's sqrt does. The `invalid` flag is
    silenced only for the division (complex infinities, corrected below)."""
    root = np.sqrt(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.asarray(np.divide(1, root))
    if x.dtype.kind == "c":
        # 1 / z for an infinite z is a zero (signs as the conjugate's), where NumPy's complex
        # division gives NaN; the lowering's rsqrt gives the zero.
        inf = np.isinf(root)
        if inf.any():
            zero = complex_from_parts(np.copysign(0, root.real), np.copysign(0, -root.imag))
            out = np.where(inf, zero.astype(x.dtype), out)
    return out


# --- bits -----------------------------------------------------------------------------------


def _unsigned(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"u{dtype.itemsize}")


def _signed(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"i{dtype.itemsize}")


def _shift_amount(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(shift amount as x's unsigned type, with 0 where out of range; out-of-range mask).
    XLA compares the amount as unsigned, so a negative amount is out of range."""
    bits = 8 * x.dtype.itemsize
    uy = np.asarray(y).view(_unsigned(y.dtype))
    out_of_range = np.greater_equal(uy, bits)
    return np.where(out_of_range, 0, uy).astype(_unsigned(x.dtype)), out_of_range


def shift_left(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    amount, out_of_range = _shift_amount(x, y)
    ux = np.asarray(x).view(_unsigned(x.dtype))
    out = np.where(out_of_range, 0, np.left_shift(ux, amount)).astype(ux.dtype)
    return out.view(x.dtype)


def shift_right_logical(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    amount, out_of_range = _shift_amount(x, y)
    ux = np.asarray(x).view(_unsigned(x.dtype))
    out = np.where(out_of_range, 0, np.right_shift(ux, amount)).astype(ux.dtype)
    return out.view(x.dtype)


def shift_right_arithmetic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Sign-filling shift of x's bits read as signed (also for unsigned dtypes, as XLA);
    shifting by the bit width or more leaves only the sign."""
    amount, out_of_range = _shift_amount(x, y)
    sdt = _signed(x.dtype)
    sx = np.asarray(x).view(sdt)
    amount = np.where(out_of_range, 8 * x.dtype.itemsize - 1, amount).astype(sdt)
    return np.asarray(np.right_shift(sx, amount)).view(x.dtype)


def population_count(x: np.ndarray) -> np.ndarray:
    ux = np.asarray(x).view(_unsigned(x.dtype))
    return np.asarray(np.bitwise_count(ux)).astype(x.dtype)


def clz(x: np.ndarray) -> np.ndarray:
    """Leading zero bits: the width minus the bit length, by halving (exact for 64 bits)."""
    bits = 8 * x.dtype.itemsize
    v = np.asarray(x).view(_unsigned(x.dtype))
    length = np.zeros(v.shape, np.int64)
    step = bits // 2
    while step:
        high = np.right_shift(v, np.asarray(step, v.dtype))
        has_high = np.not_equal(high, 0)
        v = np.where(has_high, high, v)
        length = np.add(length, np.where(has_high, step, 0))
        step //= 2
    length = np.add(length, np.not_equal(v, 0))
    return np.asarray(np.subtract(bits, length)).astype(x.dtype)


def reduce_precision(x: np.ndarray, *, exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """XLA's ReducePrecision on the bits: round the mantissa to nearest even, then flush
    exponents out of range to infinity or zero; NaN stays NaN."""
    info = np.finfo(x.dtype)
    src_mant, src_exp = info.nmant, info.nexp
    nbits = 8 * x.dtype.itemsize
    udt = _unsigned(x.dtype)
    bits = np.asarray(x).view(udt)
    c = lambda v: np.asarray(v, udt)  # noqa: E731  (constants of the bits' dtype)
    if mantissa_bits < src_mant:
        shift = src_mant - mantissa_bits
        last_bit_mask = 1 << shift
        base_bias = (last_bit_mask >> 1) - 1
        last_bit = np.right_shift(np.bitwise_and(bits, c(last_bit_mask)), c(shift))
        bias = np.add(last_bit, c(base_bias))
        truncation = c(~(last_bit_mask - 1) & ((1 << nbits) - 1))
        bits = np.bitwise_and(np.add(bits, bias), truncation)
    if exponent_bits < src_exp:
        sign_mask = c(1 << (nbits - 1))
        exp_mask = c(((1 << src_exp) - 1) << src_mant)
        bias = (1 << (src_exp - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        exponent = np.bitwise_and(bits, exp_mask)
        overflows = np.greater(exponent, c((bias + reduced_bias) << src_mant))
        underflows = np.less_equal(exponent, c((bias - reduced_bias) << src_mant))
        signed_zero = np.bitwise_and(bits, sign_mask)
        signed_inf = np.bitwise_or(signed_zero, exp_mask)
        bits = np.where(overflows, signed_inf, np.where(underflows, signed_zero, bits))
    out = np.asarray(bits).astype(udt, copy=False).view(x.dtype)
    return np.asarray(np.where(np.isnan(x), x, out))


# --- conversion -----------------------------------------------------------------------------


def convert_element_type(x: np.ndarray, *, new_dtype: np.dtype, weak_type: bool) -> np.ndarray:
    """`astype` with XLA's float-to-integer conversion (truncate, saturate at the integer
    range, NaN to 0; NumPy's 'invalid value encountered in cast' where NumPy's cast gives
    it), complex-to-real keeping the real part, and anything-to-bool `x != 0`."""
    src = x.dtype
    if src == new_dtype:
        return x
    kind = new_dtype.kind
    if kind in "fc" and src.kind in "biuf":  # the commonest: NumPy's own cast (`astype`)
        return x.astype(new_dtype)
    if kind == "b":
        return np.asarray(np.not_equal(x, 0))
    if src.kind == "c" and new_dtype.kind != "c":
        x = np.real(x)
        src = x.dtype
    if src.kind == "f" and new_dtype.kind in "iu":
        below, above, lowest, highest = _int_bounds(src, new_dtype)
        inside = np.logical_and(np.greater(x, below), np.less(x, above))
        if inside.all():
            return np.asarray(x.astype(new_dtype))  # every value truncates into range
        # NumPy's own cast of the values XLA saturates, for its floating-point errors alone
        # ('invalid value encountered in cast', under the user's error state)
        np.asarray(x)[np.logical_not(inside)].astype(new_dtype)
        info = np.iinfo(new_dtype)
        t = np.trunc(x)
        high = np.greater_equal(t, highest)
        low = np.less_equal(t, lowest)
        bad = high | low | np.isnan(t)
        out = np.where(bad, 0, t).astype(new_dtype)
        out = np.where(high, np.asarray(info.max, new_dtype), out)
        return np.asarray(np.where(low, np.asarray(info.min, new_dtype), out))
    return np.asarray(x.astype(new_dtype))


@functools.lru_cache(maxsize=128)
def _int_bounds(src: np.dtype, dst: np.dtype) -> tuple[np.ndarray, ...]:
    """Float bounds, in `src`, for converting to the integer type `dst`: (below, above) such
    that any x strictly between truncates into range (min - 1 and max + 1, rounded inward or
    to inf), and (lowest, highest): the range ends rounded outward (2**63 for int64's max),
    at or beyond which a value saturates."""
    info = np.iinfo(dst)
    with np.errstate(over="ignore"):
        bounds = (info.min - 1, info.max + 1, info.min, info.max)
        return tuple(np.asarray(float(b), np.float64).astype(src) for b in bounds)


def complex_from_parts(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`x + i y` without arithmetic (so infinities and NaNs land in their own part)."""
    dtype = np.result_type(x.dtype, np.complex64)
    out = np.empty(np.broadcast_shapes(x.shape, y.shape), dtype)
    out.real = x
    out.imag = y
    return out


# --- structure ------------------------------------------------------------------------------


def pad(
    x: np.ndarray, padding_value: np.ndarray, *, padding_config: Sequence[tuple[int, int, int]]
) -> np.ndarray:
    """XLA's pad: interior padding between elements, then low/high at the ends (negative
    values crop), by placing `x` at a strided slice of the filled result."""
    shape = tuple(
        lo + hi + n + max(n - 1, 0) * interior
        for n, (lo, hi, interior) in zip(x.shape, padding_config, strict=True)
    )
    out = np.full(shape, padding_value, x.dtype)
    dst, src = [], []
    for n, size, (lo, _, interior) in zip(x.shape, shape, padding_config, strict=True):
        step = interior + 1
        first = -(lo // step) if lo < 0 else 0  # the first element not cropped at the start
        position = lo + first * step
        count = max(0, min(n - first, -(-(size - position) // step))) if position < size else 0
        dst.append(slice(position, position + count * step, step) if count else slice(0, 0))
        src.append(slice(first, first + count))
    out[tuple(dst)] = x[tuple(src)]
    return out


def reduce_window(combine: np.ufunc, identity: Callable[[np.dtype], Any]) -> Callable[..., Any]:
    """XLA's reduce_window as a host rule: pad with the identity (base dilation as interior
    padding), view every strided, dilated window of the padded array, reduce each."""

    def rule(
        x: np.ndarray,
        *,
        window_dimensions: Shape,
        window_strides: Shape,
        padding: Sequence[tuple[int, int]],
        base_dilation: Shape,
        window_dilation: Shape,
    ) -> np.ndarray:
        init = np.asarray(identity(x.dtype), x.dtype)
        if x.ndim == 0:
            return np.asarray(combine(init, x))
        config = tuple((lo, hi, b - 1) for (lo, hi), b in zip(padding, base_dilation, strict=True))
        padded = pad(x, init, padding_config=config)
        span = tuple(
            (w - 1) * d + 1 for w, d in zip(window_dimensions, window_dilation, strict=True)
        )
        shape = tuple(
            max(0, (n - k) // s + 1)
            for n, k, s in zip(padded.shape, span, window_strides, strict=True)
        )
        if 0 in shape or 0 in window_dimensions:
            return np.full(shape, init)
        windows = np.lib.stride_tricks.sliding_window_view(padded, span)
        strided = tuple(slice(None, None, s) for s in window_strides)
        dilated = tuple(slice(None, None, d) for d in window_dilation)
        windows = windows[strided + dilated]
        axes = tuple(range(x.ndim, 2 * x.ndim))
        return np.asarray(combine.reduce(windows, axis=axes, dtype=x.dtype, initial=init))

    return rule


# --- gather and scatter ---------------------------------------------------------------------


def _index_vectors(indices: np.ndarray) -> np.ndarray:
    """The indices as int64 (uint64 ones above int64's range stay out of bounds)."""
    if indices.dtype == np.uint64:
        indices = np.minimum(indices, np.uint64(2**62))
    return indices.astype(np.int64, copy=False)


def _batch_iota(batch_shape: Shape, axis: int) -> np.ndarray:
    return np.arange(batch_shape[axis]).reshape(
        [-1 if i == axis else 1 for i in range(len(batch_shape))]
    )


def gather(
    operand: np.ndarray, indices: np.ndarray, *, dimension_numbers: Any, slice_sizes: Shape
) -> np.ndarray:
    """XLA's gather (index vectors on the last axis): starts clamped so each slice fits.

    The indexed axes (start_index_map, then the batching axes) go first and take advanced
    indices of shape `batch + their windows`; the other axes are sliced to their window. The
    result `batch + windows` then drops the collapsed axes and is laid out as the output.
    """
    dn = dimension_numbers
    batch_shape = indices.shape[:-1]
    nb = len(batch_shape)
    vectors = _index_vectors(indices)
    if (
        not dn.offset_dims
        and dn.start_index_map == dn.collapsed_slice_dims == tuple(range(operand.ndim))
        and not dn.operand_batching_dims
        and operand.size
    ):
        # One element per index vector (`x[rows, cols]`): flat positions of the clamped
        # indices (ravel_multi_index's 'clip' is XLA's clamp for windows of one), one take.
        rows = vectors.T if nb == 1 else np.moveaxis(vectors, -1, 0)
        out = np.take(operand, np.ravel_multi_index(rows, operand.shape, mode="clip"))
        return out if nb else np.asarray(out)  # a scalar for a single vector
    if _is_take(operand.shape, dn, slice_sizes):
        # Whole slices along one collapsed axis (x[i], x[:, idx]): np.take, then the layout.
        (d,) = dn.start_index_map
        out = np.take(operand, np.maximum(np.minimum(vectors[..., 0], operand.shape[d] - 1), 0), d)
        labels = [*range(d), *(-1 - k for k in range(nb)), *range(d + 1, operand.ndim)]
        offsets: Iterator[int] = iter(e for e in range(operand.ndim) if e != d)
        batch_axes = iter(range(nb))
        wanted = [
            next(offsets) if j in dn.offset_dims else -1 - next(batch_axes) for j in range(out.ndim)
        ]
        return out.transpose([labels.index(w) for w in wanted])
    indexed = [*dn.start_index_map, *dn.operand_batching_dims]
    rest = [d for d in range(operand.ndim) if d not in indexed]
    starts = []
    for k, d in enumerate(dn.start_index_map):
        starts.append(np.maximum(np.minimum(vectors[..., k], operand.shape[d] - slice_sizes[d]), 0))
    for axis in dn.start_indices_batching_dims:
        starts.append(_batch_iota(batch_shape, axis))
    order = indexed + rest
    view = operand.transpose(order)[
        (slice(None),) * len(indexed) + tuple(slice(0, slice_sizes[d]) for d in rest)
    ]
    if indexed:
        window = tuple(slice_sizes[d] for d in indexed)
        out = view[window_indices(starts, window, batch_shape)]
    else:
        out = np.broadcast_to(view, batch_shape + view.shape)
    dropped = (*dn.collapsed_slice_dims, *dn.operand_batching_dims)
    kept = [d for d in order if d not in dropped]
    out = out.reshape(batch_shape + tuple(slice_sizes[d] for d in kept))
    offsets = iter(sorted(kept))
    batch_axes = iter(range(nb))
    perm = [
        nb + kept.index(next(offsets)) if j in dn.offset_dims else next(batch_axes)
        for j in range(nb + len(kept))
    ]
    return out.transpose(perm)


def _is_take(shape: Shape, dn: Any, slice_sizes: Shape) -> bool:
    """Does a gather take whole slices along one collapsed axis (no batching axes)?"""
    if len(dn.start_index_map) != 1 or dn.operand_batching_dims:
        return False
    (d,) = dn.start_index_map
    return dn.collapsed_slice_dims == (d,) and all(
        k == n for e, (k, n) in enumerate(zip(slice_sizes, shape, strict=True)) if e != d
    )


def scatter(combine: np.ufunc | None) -> Callable[..., np.ndarray]:
    """XLA's scatter as a host rule: windows that do not fit are skipped, the others combined
    into a copy of the operand in order with `combine.at` (or assigned, last one winning)."""

    def rule(
        operand: np.ndarray, indices: np.ndarray, updates: np.ndarray, *, dimension_numbers: Any
    ) -> np.ndarray:
        dn = dimension_numbers
        out = operand.copy()
        if not dn.update_window_dims and not dn.operand_batching_dims:
            # Point updates (x.at[i].add(u) after flattening): index with the vectors.
            vectors = _index_vectors(indices)
            zeros = np.zeros(indices.shape[:-1], np.int64)  # axes no index vector entry starts
            by_axis = {d: vectors[..., k] for k, d in enumerate(dn.scatter_dims_to_operand_dims)}
            index = tuple(by_axis.get(d, zeros) for d in range(out.ndim))
            fits = np.ones(indices.shape[:-1], bool)
            for i, n in zip(index, out.shape, strict=True):
                fits &= (i >= 0) & (i < n)
            values = updates
            if not fits.all():
                index, values = tuple(i[fits] for i in index), values[fits]
            if combine is None:
                out[index] = values
            else:
                combine.at(out, index, values)
            return out
        batch_shape = indices.shape[:-1]
        dropped = (*dn.inserted_window_dims, *dn.operand_batching_dims)
        sizes = iter(updates.shape[d] for d in dn.update_window_dims)
        window = tuple(1 if d in dropped else next(sizes) for d in range(operand.ndim))
        vectors = _index_vectors(indices)
        zeros = np.zeros(batch_shape, np.int64)  # full batch shape: masked by `fits` below
        starts: list[Any] = [zeros] * operand.ndim
        fits = np.ones(batch_shape, bool)
        for k, d in enumerate(dn.scatter_dims_to_operand_dims):
            starts[d] = vectors[..., k]
            fits &= (starts[d] >= 0) & (starts[d] <= operand.shape[d] - window[d])
        for d, axis in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims, strict=True):
            starts[d] = np.add(zeros, _batch_iota(batch_shape, axis))
        index = window_indices(starts, window, batch_shape)
        scatter_axes = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
        values = updates.transpose(*scatter_axes, *dn.update_window_dims).reshape(
            batch_shape + window
        )
        if not fits.all():
            index = tuple(i[fits] for i in index)
            values = values[fits]
        if combine is None:
            out[index] = values
        else:
            combine.at(out, index, values)
        return out

    return rule


# --- coverage -------------------------------------------------------------------------------


def host_coverage() -> tuple[list[str], list[str]]:
    """(names of mjcore.lax primitives with a host rule, names of those without), sorted."""
    # The package's modules as found on disk, imported by name: a reflection over `mjcore.lax`
    # (whose modules import this one for their rules), not a dependency on any of its names.
    import importlib
    import pkgutil
    from pathlib import Path

    prims: dict[str, Primitive] = {}
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        module = importlib.import_module(f"mjcore.lax.{info.name}")
        for value in vars(module).values():
            if isinstance(value, Primitive):
                prims[value.name] = value
    have = sorted(n for n, p in prims.items() if p.host_rule is not None)
    lack = sorted(n for n, p in prims.items() if p.host_rule is None)
    return have, lack


def window_indices(
    starts: Sequence[np.ndarray], window: Shape, batch_shape: Shape
) -> tuple[np.ndarray, ...]:
    """Index arrays that broadcast to `batch_shape + window`: entry d is `starts[d] +
    offset_d`, where each start is 0-d or of the batch's rank (broadcasting against it)."""
    nb, n = len(batch_shape), len(window)
    out = []
    for d in range(n):
        # Broadcasting in the indexing does the rest (np.broadcast_to costs microseconds).
        start = starts[d]
        start = start.reshape((start.shape if start.ndim == nb else (1,) * nb) + (1,) * n)
        if window[d] == 1:
            out.append(start)
            continue
        offset = np.arange(window[d]).reshape((1,) * (nb + d) + (-1,) + (1,) * (n - d - 1))
        out.append(np.add(start, offset))
    return tuple(out)
