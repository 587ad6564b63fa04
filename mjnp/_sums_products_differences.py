"""The running sums and products and the differences of NumPy's "sums, products, differences"
(a part of its mathematical functions): cumsum, cumprod, cumulative_sum, cumulative_prod,
nancumsum, nancumprod, diff and ediff1d. (sum and prod are in `_reductions`, nansum and nanprod
in `_statistics`, gradient and trapezoid in `_calculus`, cross in `_matrix_products`.)"""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore import dtypes, lax
from mjcore.dtypes import DTypeLike
from mjcore.eager_fusion import fuse_eagerly
from mjnp import _elementwise as ew
from mjnp import _reductions as red
from mjnp._host_numpy import host_values, wrap_own
from mjnp._host_stats import call_or_none
from mjnp._manipulation import asarray_strong, normalize_axis, single_axis
from mjnp._out import write_out
from mjnp._promotion import promote_args

ArrayLike = Any
Array = Any

_BOOL = np.dtype(bool)


# --- cumulative sums and products -----------------------------------------------------------


def _cumulative(
    fname: str, a: ArrayLike, axis: int | None, dtype: DTypeLike | None, product: bool
) -> tuple[Array, int]:
    x, axis = single_axis(f"mjnp.{fname}", asarray_strong(fname, a), axis)
    if dtype is None:
        out_dtype = red._sum_dtype(x.dtype)
    else:
        out_dtype = dtypes.canonicalize_dtype(dtype, f"mjnp.{fname}")
    x = lax.convert_element_type(x, out_dtype)
    if out_dtype == _BOOL:
        # NumPy adds booleans with `or` and multiplies them with `and`.
        return (lax.cummin if product else lax.cummax)(x, axis), axis
    return (lax.cumprod if product else lax.cumsum)(x, axis), axis


@fuse_eagerly
def cumsum(
    a: ArrayLike, axis: int | None = None, dtype: DTypeLike | None = None, out: Any = None
) -> Array:
    """Running sum along `axis` (flattened if None), as `numpy.cumsum` (dtypes as for sum)."""
    return write_out("cumsum", out, _cumulative("cumsum", a, axis, dtype, product=False)[0])


@fuse_eagerly
def cumprod(
    a: ArrayLike, axis: int | None = None, dtype: DTypeLike | None = None, out: Any = None
) -> Array:
    """Running product along `axis` (flattened if None), as `numpy.cumprod`."""
    return write_out("cumprod", out, _cumulative("cumprod", a, axis, dtype, product=True)[0])


def _cumulative_array_api(
    fname: str,
    x: ArrayLike,
    axis: int | None,
    dtype: DTypeLike | None,
    include_initial: bool,
    product: bool,
) -> Array:
    arr = asarray_strong(fname, x)
    if arr.ndim == 0:
        arr = lax.reshape(arr, (1,))  # NumPy takes a 0-d input as 1-d
    if axis is None:
        if arr.ndim > 1:
            raise ValueError(
                f"mjnp.{fname}: axis must be given for an array of {arr.ndim} dimensions"
            )
        axis = 0
    if isinstance(axis, tuple):  # NumPy's ufunc.accumulate takes a 1-tuple as its axis
        if len(axis) != 1:
            for ax in axis:  # NumPy reads every entry first (TypeError for a bool, AxisError)
                normalize_axis(f"mjnp.{fname}", ax, arr.ndim, allow_bool=False)
            raise ValueError(
                f"mjnp.{fname}: accumulate does not allow multiple axes, got axis={axis!r}"
            )
        (axis,) = axis
    result, axis = _cumulative(fname, arr, axis, dtype, product)
    if not include_initial:
        return result
    shape = list(result.shape)
    shape[axis] = 1
    initial = lax.full(tuple(shape), 1 if product else 0, result.dtype)
    return lax.concatenate([initial, result], axis)


def cumulative_sum(
    x: ArrayLike,
    /,
    *,
    axis: int | None = None,
    dtype: DTypeLike | None = None,
    out: Any = None,
    include_initial: bool = False,
) -> Array:
    """Running sum, as `numpy.cumulative_sum` (the Array API's; a leading 0 when
    `include_initial`)."""
    result = _cumulative_array_api("cumulative_sum", x, axis, dtype, include_initial, False)
    return write_out("cumulative_sum", out, result)


def cumulative_prod(
    x: ArrayLike,
    /,
    *,
    axis: int | None = None,
    dtype: DTypeLike | None = None,
    out: Any = None,
    include_initial: bool = False,
) -> Array:
    """Running product, as `numpy.cumulative_prod` (a leading 1 when `include_initial`)."""
    result = _cumulative_array_api("cumulative_prod", x, axis, dtype, include_initial, True)
    return write_out("cumulative_prod", out, result)


def _host_call(fn: Any, a: Any, *args: Any) -> Array | None:
    """NumPy's `fn(value, *args)` (Python ints or None) of a small eager Array `a`, wrapped;
    None where the general path runs (and raises)."""
    for arg in args:
        if arg is not None and type(arg) is not int:
            return None
    values = host_values(a)
    if values is None or dtypes.kind(values[0].dtype) not in "biufc":
        return None
    found = call_or_none(fn, values[0], *args)
    return None if found is None else wrap_own(found)


def _replace_nan(fname: str, a: ArrayLike, value: int) -> Array:
    x = asarray_strong(fname, a)
    if dtypes.kind(x.dtype) not in "fc":
        return x
    return ew.where(ew.isnan(x), lax.full((), value, x.dtype), x)


def nancumsum(
    a: ArrayLike, axis: int | None = None, dtype: DTypeLike | None = None, out: Any = None
) -> Array:
    """`cumsum` with NaNs counted as zero, as `numpy.nancumsum`."""
    if dtype is None and out is None:
        found = _host_call(np.nancumsum, a, axis)
        if found is not None:
            return found
    return cumsum(_replace_nan("nancumsum", a, 0), axis, dtype, out)


def nancumprod(
    a: ArrayLike, axis: int | None = None, dtype: DTypeLike | None = None, out: Any = None
) -> Array:
    """`cumprod` with NaNs counted as one, as `numpy.nancumprod`."""
    if dtype is None and out is None:
        found = _host_call(np.nancumprod, a, axis)
        if found is not None:
            return found
    return cumprod(_replace_nan("nancumprod", a, 1), axis, dtype, out)


# --- differences ----------------------------------------------------------------------------

_NO_VALUE: Any = np._NoValue  # NumPy's "argument not given" marker, so None stays a value


def _edge(fname: str, value: ArrayLike, x: Array, axis: int) -> Array:
    v = asarray_strong(fname, value)  # NumPy's asanyarray: a Python scalar is strong here
    if v.ndim == 0:
        shape = list(x.shape)
        shape[axis] = 1
        v = lax.broadcast_to(v, tuple(shape))
    return v


def diff(
    a: ArrayLike,
    n: int = 1,
    axis: int = -1,
    prepend: ArrayLike = _NO_VALUE,
    append: ArrayLike = _NO_VALUE,
) -> Array:
    """The `n`-th discrete difference along `axis`, as `numpy.diff` (bool uses `!=`)."""
    if prepend is _NO_VALUE and append is _NO_VALUE and type(n) is int and n > 0:
        found = _host_call(np.diff, a, n, axis)
        if found is not None:
            return found
    return _diff(a, n, axis, prepend, append)


@fuse_eagerly
def _diff(
    a: ArrayLike,
    n: int = 1,
    axis: int = -1,
    prepend: ArrayLike = _NO_VALUE,
    append: ArrayLike = _NO_VALUE,
) -> Array:
    x = asarray_strong("diff", a)
    n = int(n)
    if n == 0:
        return x
    if n < 0:
        raise ValueError(f"mjnp.diff: order must be non-negative but got {n}")
    if x.ndim == 0:
        raise ValueError("mjnp.diff: diff requires input that is at least one dimensional")
    axis = normalize_axis("mjnp.diff", axis, x.ndim)
    parts = [x]
    if prepend is not _NO_VALUE:
        parts.insert(0, _edge("diff", prepend, x, axis))
    if append is not _NO_VALUE:
        parts.append(_edge("diff", append, x, axis))
    if len(parts) > 1:
        parts = promote_args("diff", *parts)
        for p in parts:
            if p.ndim != x.ndim:
                raise ValueError(
                    f"mjnp.diff: prepend/append of shape {p.shape} must have {x.ndim} "
                    "dimensions, like the array"
                )
        x = lax.concatenate(parts, axis)
    for _ in range(n):
        size = x.shape[axis]
        if size == 0:
            break
        hi = lax.slice_in_dim(x, 1, size, axis)
        lo = lax.slice_in_dim(x, 0, size - 1, axis)
        x = ew.not_equal(hi, lo) if x.dtype == _BOOL else ew.subtract(hi, lo)
    return x


def ediff1d(
    ary: ArrayLike, to_end: ArrayLike | None = None, to_begin: ArrayLike | None = None
) -> Array:
    """Differences of the flattened array, with optional values around, as `numpy.ediff1d`
    (in the dtype of `ary`; `to_begin`/`to_end` must cast to it safely)."""
    if to_end is None and to_begin is None:
        found = _host_call(np.ediff1d, ary)
        if found is not None:
            return found
    x = asarray_strong("ediff1d", ary)
    x = lax.reshape(x, (x.size,))
    parts: list[Any] = []
    for name, extra in (("to_begin", to_begin), ("to_end", to_end)):
        if extra is None:
            parts.append(None)
            continue
        e = asarray_strong("ediff1d", extra)
        if not np.can_cast(e.dtype, x.dtype, casting="same_kind"):
            raise TypeError(
                f"mjnp.ediff1d: dtype of `{name}` must be compatible with input `ary` under the "
                f"`same_kind` rule, got {e.dtype.name} for {x.dtype.name}"
            )
        parts.append(lax.convert_element_type(lax.reshape(e, (e.size,)), x.dtype))
    if x.dtype == _BOOL:
        raise TypeError(
            "mjnp.ediff1d: boolean subtract is not supported; convert the input to an integer "
            "type first"
        )
    n = x.size
    body = ew.subtract(lax.slice_in_dim(x, 1, n, 0), lax.slice_in_dim(x, 0, n - 1, 0)) if n else x
    pieces = [p for p in (parts[0], body, parts[1]) if p is not None]
    return lax.concatenate(pieces, 0) if len(pieces) > 1 else body
