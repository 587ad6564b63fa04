"""Statistics (NumPy's "statistics" chapter and its NaN-ignoring twins): var, std, average,
median, quantile, percentile, ptp, the nan* reductions, count_nonzero, cov and corrcoef. (The
running sums and differences, cumsum ... ediff1d, are in `_sums_products_differences`.)"""

from __future__ import annotations

import contextlib
import math
from typing import Any

import numpy as np

# what numpy.count_nonzero(a) calls for axis=None (its Python wrapper costs about as much
# again; private: NumPy 2.x is pinned, as for `mjcore.fp_errors`)
from numpy._core.multiarray import (  # type: ignore[attr-defined]
    count_nonzero as _count_all_nonzero,
)

from mjcore import dtypes, lax
from mjcore.array import wrap_host
from mjcore.core import ShapedArray, Tracer
from mjcore.dtypes import DTypeLike
from mjcore.eager_fusion import fuse_eagerly
from mjnp import _elementwise as ew
from mjnp import _reductions as red
from mjnp import _slice_warnings as slice_warnings
from mjnp._host_numpy import host_value, host_values, wrap_own
from mjnp._host_stats import host_reduction, is_axis, numpy_call_warning
from mjnp._manipulation import asarray_strong, normalize_axes
from mjnp._matrix_products import matmul
from mjnp._out import write_out
from mjnp._promotion import asarray_arg
from mjnp._sums_products_differences import _NO_VALUE, _replace_nan

ArrayLike = Any
Array = Any
Axis = int | tuple[int, ...] | None

_BOOL = np.dtype(bool)
_INT64 = np.dtype("int64")
_FLOAT64 = np.dtype("float64")


def _is_concrete(x: Any) -> bool:
    """Whether `x` has a value now (not a tracer), so value checks NumPy makes can run."""
    return not isinstance(x, Tracer)


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"f{dtype.itemsize // 2}") if dtype.kind == "c" else dtype


def _count(x: Array, axes: tuple[int, ...], mask: Array | None, keepdims: bool) -> Any:
    """The number of elements each reduction sees: a Python int, or an int64 array."""
    if mask is None:
        return math.prod(x.shape[ax] for ax in axes)
    return red.sum(mask, axis=axes, dtype=_INT64, keepdims=keepdims)


def _as_dtype_of(count: Any, like: Array) -> Any:
    if isinstance(count, int):
        return count
    return lax.convert_element_type(count, like.dtype)


# --- variance and standard deviation --------------------------------------------------------


def _ddof(fname: str, ddof: Any, correction: Any) -> Any:
    if correction is _NO_VALUE:
        return ddof
    if ddof != 0:
        raise ValueError(f"mjnp.{fname}: ddof and correction can't be provided simultaneously.")
    return correction


def _variance(
    fname: str,
    a: ArrayLike,
    axis: Axis,
    dtype: DTypeLike | None,
    ddof: Any,
    keepdims: bool,
    where: ArrayLike,
    mean: ArrayLike,
    ignore_nan: bool,
) -> Array:
    """NumPy's `_var` (and `_nanvar` when `ignore_nan`): the mean in the computation dtype,
    then the mean squared deviation divided by `count - ddof` (clamped at zero)."""
    x = asarray_strong(fname, a)
    if x.dtype == dtypes.bfloat16 and dtype is None:  # computed in float32, as in JAX
        f32 = lax.convert_element_type(x, np.float32)
        out = _variance(fname, f32, axis, None, ddof, keepdims, where, mean, ignore_nan)
        return lax.convert_element_type(out, x.dtype)
    axes = red._reduced_axes(fname, axis, x.ndim)
    mask = red._where_mask(fname, where, x.shape)
    if ignore_nan and dtypes.kind(x.dtype) in "fc":
        valid = ew.logical_not(ew.isnan(x))
        mask = valid if mask is None else ew.logical_and(mask, valid)
        x = ew.where(valid, x, lax.full((), 0, x.dtype))
    where_arg = True if mask is None else mask
    if dtype is not None:
        dtype = dtypes.canonicalize_dtype(dtype, f"mjnp.{fname}")
    sum_dtype = _FLOAT64 if dtype is None and x.dtype.kind in "biu" else dtype
    # NumPy's nanvar divides by its counts with every error ignored (NaN is the answer)
    quiet = slice_warnings.Quiet() if ignore_nan else contextlib.nullcontext()
    if mean is _NO_VALUE:
        total = red.sum(x, axis=axes, dtype=sum_dtype, keepdims=True, where=where_arg)
        with quiet:
            center = ew.true_divide(total, _as_dtype_of(_count(x, axes, mask, True), total))
    else:
        center = asarray_arg(fname, mean)
    deviation = ew.subtract(x, center)
    if deviation.dtype.kind == "c":
        squares = ew.real(ew.multiply(deviation, ew.conjugate(deviation)))
    else:
        squares = ew.multiply(deviation, deviation)
    if mask is not None:
        squares = ew.where(mask, squares, lax.full((), 0, squares.dtype))
    total = red.sum(squares, axis=axes, dtype=dtype, keepdims=keepdims, where=where_arg)
    count = _count(x, axes, mask, keepdims)
    if isinstance(count, int):
        divisor: Any = max(count - ddof, 0)
    else:
        divisor = ew.maximum(ew.subtract(_as_dtype_of(count, total), ddof), 0)
    with quiet:
        result = ew.true_divide(total, divisor)
    if ignore_nan and dtypes.kind(x.dtype) in "fc":
        # NumPy's nanvar: NaN (not var's inf) where the degrees of freedom are <= 0.
        dof = ew.subtract(_as_dtype_of(count, total), ddof)
        result = ew.where(ew.less_equal(dof, 0), lax.full((), np.nan, result.dtype), result)
        if result.size and (
            math.prod(x.shape[ax] for ax in axes) - ddof <= 0 or slice_warnings.any_nonpositive(dof)
        ):
            slice_warnings.warn(slice_warnings.DOF + ".")
    return result


@slice_warnings.check_var  # NumPy's "Degrees of freedom <= 0 for slice", on every call
@fuse_eagerly
def var(
    a: ArrayLike,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    out: Any = None,
    ddof: float = 0,
    keepdims: bool = False,
    *,
    where: ArrayLike = True,
    mean: ArrayLike = _NO_VALUE,
    correction: float = _NO_VALUE,
) -> Array:
    """Variance over `axis`, as `numpy.var` (complex input gives a real result; bool and
    integers compute in float64)."""
    ddof = _ddof("var", ddof, correction)
    result = _variance("var", a, axis, dtype, ddof, keepdims, where, mean, False)
    return write_out("var", out, result)


@slice_warnings.check_std  # NumPy's "Degrees of freedom <= 0 for slice", on every call
@fuse_eagerly
def std(
    a: ArrayLike,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    out: Any = None,
    ddof: float = 0,
    keepdims: bool = False,
    *,
    where: ArrayLike = True,
    mean: ArrayLike = _NO_VALUE,
    correction: float = _NO_VALUE,
) -> Array:
    """Standard deviation over `axis`, as `numpy.std` (the square root of `var`)."""
    ddof = _ddof("std", ddof, correction)
    result = ew.sqrt(_variance("std", a, axis, dtype, ddof, keepdims, where, mean, False))
    return write_out("std", out, result, "same_kind")  # NumPy's sqrt writes `out`


def _plain_moments(dtype: Any, out: Any, ddof: Any, where: Any, mean: Any, correction: Any) -> bool:
    """Whether a var/std-like call has only the arguments its direct NumPy path takes."""
    return (
        dtype is None
        and out is None
        and where is True
        and mean is _NO_VALUE
        and correction is _NO_VALUE
        and (type(ddof) is int or type(ddof) is float)
    )


def _inexact_only(fname: str, dtype: DTypeLike | None, out: Any) -> None:
    """NumPy's nanmean/nanvar/nanstd of an inexact array refuse an exact dtype or out."""
    if dtype is not None:
        dt = dtypes.canonicalize_dtype(dtype, f"mjnp.{fname}")
        if dtypes.kind(dt) not in "fc":
            raise TypeError(
                f"mjnp.{fname}: If a is inexact, then dtype must be inexact (got {dt.name})"
            )
    out_dtype = getattr(out, "dtype", None)
    if out_dtype is not None and np.dtype(out_dtype).kind not in "fc":
        raise TypeError(
            f"mjnp.{fname}: If a is inexact, then out must be inexact (got {out_dtype.name})"
        )


def nanvar(
    a: ArrayLike,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    out: Any = None,
    ddof: float = 0,
    keepdims: bool = False,
    *,
    where: ArrayLike = True,
    mean: ArrayLike = _NO_VALUE,
    correction: float = _NO_VALUE,
) -> Array:
    """`var` ignoring NaNs, as `numpy.nanvar` (an all-NaN slice gives NaN)."""
    if _plain_moments(dtype, out, ddof, where, mean, correction):
        found = host_reduction(np.nanvar, a, axis, keepdims, ddof=ddof)
        if found is not None:
            return found
    a = asarray_strong("nanvar", a)
    if dtypes.kind(a.dtype) not in "fc":  # NumPy's nanvar is var without NaNs (and its warnings)
        return var(
            a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction
        )
    _inexact_only("nanvar", dtype, out)
    ddof = _ddof("nanvar", ddof, correction)
    result = _variance("nanvar", a, axis, dtype, ddof, keepdims, where, mean, True)
    return write_out("nanvar", out, result, "same_kind")


def nanstd(
    a: ArrayLike,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    out: Any = None,
    ddof: float = 0,
    keepdims: bool = False,
    *,
    where: ArrayLike = True,
    mean: ArrayLike = _NO_VALUE,
    correction: float = _NO_VALUE,
) -> Array:
    """`std` ignoring NaNs, as `numpy.nanstd`."""
    if _plain_moments(dtype, out, ddof, where, mean, correction):
        found = host_reduction(np.nanstd, a, axis, keepdims, ddof=ddof)
        if found is not None:
            return found
    a = asarray_strong("nanstd", a)
    if dtypes.kind(a.dtype) not in "fc":  # NumPy's nanstd is std without NaNs (and its warnings)
        return std(
            a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction
        )
    _inexact_only("nanstd", dtype, out)
    ddof = _ddof("nanstd", ddof, correction)
    result = ew.sqrt(_variance("nanstd", a, axis, dtype, ddof, keepdims, where, mean, True))
    return write_out("nanstd", out, result, "same_kind")


# --- NaN-ignoring reductions ----------------------------------------------------------------


def nansum(
    a: ArrayLike,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    out: Any = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike = True,
) -> Array:
    """`sum` with NaNs counted as zero, as `numpy.nansum`."""
    if dtype is None and out is None and initial is None and where is True:
        found = host_reduction(np.nansum, a, axis, keepdims, "biufc")
        if found is not None:
            return found
    x = _replace_nan("nansum", a, 0)
    return red.sum(x, axis, dtype, out, keepdims, initial, where)


def nanprod(
    a: ArrayLike,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    out: Any = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike = True,
) -> Array:
    """`prod` with NaNs counted as one, as `numpy.nanprod`."""
    if dtype is None and out is None and initial is None and where is True:
        found = host_reduction(np.nanprod, a, axis, keepdims, "biufc")
        if found is not None:
            return found
    x = _replace_nan("nanprod", a, 1)
    return red.prod(x, axis, dtype, out, keepdims, initial, where)


def nanmean(
    a: ArrayLike,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    out: Any = None,
    keepdims: bool = False,
    *,
    where: ArrayLike = True,
) -> Array:
    """`mean` of the non-NaN elements, as `numpy.nanmean` (an all-NaN slice gives NaN)."""
    if dtype is None and out is None and where is True:
        found = host_reduction(np.nanmean, a, axis, keepdims, "biufc")
        if found is not None:
            return found
    x = asarray_strong("nanmean", a)
    if dtypes.kind(x.dtype) not in "fc":
        return red.mean(x, axis, dtype, out, keepdims, where=where)
    if x.dtype == dtypes.bfloat16 and dtype is None:  # computed in float32, as in JAX
        f32 = nanmean(
            lax.convert_element_type(x, np.float32), axis, None, None, keepdims, where=where
        )
        return write_out("nanmean", out, lax.convert_element_type(f32, x.dtype), "same_kind")
    _inexact_only("nanmean", dtype, out)
    axes = red._reduced_axes("nanmean", axis, x.ndim)
    mask = red._where_mask("nanmean", where, x.shape)
    valid = ew.logical_not(ew.isnan(x))
    mask = valid if mask is None else ew.logical_and(mask, valid)
    total = red.sum(x, axes, dtype, None, keepdims, where=mask)
    count = _count(x, axes, mask, keepdims)
    with slice_warnings.Quiet():  # NumPy's _divide_by_count: NaN for no elements, no flags
        result = ew.true_divide(total, _as_dtype_of(count, total))
    if result.size and (
        math.prod(x.shape[ax] for ax in axes) == 0 or slice_warnings.count_zeros(count)
    ):
        slice_warnings.warn(slice_warnings.EMPTY_MEAN)
    return write_out("nanmean", out, result, "same_kind")  # NumPy: "out must be inexact"


def _nan_extremum(
    fname: str,
    op: Any,
    a: ArrayLike,
    axis: Axis,
    out: Any,
    keepdims: bool,
    initial: Any,
    where: ArrayLike,
    fill: float,
) -> Array:
    x = asarray_strong(fname, a)
    if dtypes.kind(x.dtype) not in "fc":
        return op(x, axis, out, keepdims, initial, where)
    nan = ew.isnan(x)
    filled = ew.where(nan, lax.full((), fill, x.dtype), x)
    result = op(filled, axis, None, keepdims, initial, where)
    if initial is None:
        all_nan = red.all(nan, axis, keepdims=keepdims, where=where)
        result = ew.where(all_nan, lax.full((), np.nan, x.dtype), result)
    if slice_warnings.any_nan(result):
        # NumPy's test after its fmin.reduce; its slow path (lists, scalars) says "axis"
        array_input = isinstance(a, np.ndarray) or hasattr(a, "aval")
        slice_warnings.warn(slice_warnings.ALL_NAN if array_input else "All-NaN axis encountered")
    return write_out(fname, out, result)


def nanmax(
    a: ArrayLike,
    axis: Axis = None,
    out: Any = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike = True,
) -> Array:
    """`max` ignoring NaNs, as `numpy.nanmax` (an all-NaN slice gives NaN)."""
    if out is None and initial is None and where is True:
        found = host_reduction(np.nanmax, a, axis, keepdims)
        if found is not None:
            return found
    return _nan_extremum("nanmax", red.max, a, axis, out, keepdims, initial, where, -np.inf)


def nanmin(
    a: ArrayLike,
    axis: Axis = None,
    out: Any = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike = True,
) -> Array:
    """`min` ignoring NaNs, as `numpy.nanmin` (an all-NaN slice gives NaN)."""
    if out is None and initial is None and where is True:
        found = host_reduction(np.nanmin, a, axis, keepdims)
        if found is not None:
            return found
    return _nan_extremum("nanmin", red.min, a, axis, out, keepdims, initial, where, np.inf)


def _nan_arg_extremum(
    fname: str, op: Any, a: ArrayLike, axis: int | None, out: Any, keepdims: bool, fill: float
) -> Array:
    x = asarray_strong(fname, a)
    if dtypes.kind(x.dtype) not in "fc":
        return op(x, axis, out, keepdims=keepdims)
    nan = ew.isnan(x)
    # Reduced first, as NumPy does: a tuple axis is checked as all's (AxisError, duplicates)
    # before argmax rejects it.
    all_nan = red.all(nan, axis, keepdims=keepdims)
    result = op(ew.where(nan, lax.full((), fill, x.dtype), x), axis, keepdims=keepdims)
    if _is_concrete(all_nan) and bool(np.any(np.asarray(all_nan))):
        raise ValueError(f"mjnp.{fname}: All-NaN slice encountered")
    return write_out(fname, out, result, "writeback")


def nanargmax(
    a: ArrayLike, axis: int | None = None, out: Any = None, *, keepdims: bool = False
) -> Array:
    """`argmax` ignoring NaNs, as `numpy.nanargmax`.

    Raises:
        ValueError: for an all-NaN slice (eagerly; under jit such a slice gives 0).
    """
    if out is None and (axis is None or type(axis) is int):
        found = host_reduction(np.nanargmax, a, axis, keepdims, warns=False)
        if found is not None:
            return found
    return _nan_arg_extremum("nanargmax", red.argmax, a, axis, out, keepdims, -np.inf)


def nanargmin(
    a: ArrayLike, axis: int | None = None, out: Any = None, *, keepdims: bool = False
) -> Array:
    """`argmin` ignoring NaNs, as `numpy.nanargmin` (all-NaN slices as in `nanargmax`)."""
    if out is None and (axis is None or type(axis) is int):
        found = host_reduction(np.nanargmin, a, axis, keepdims, warns=False)
        if found is not None:
            return found
    return _nan_arg_extremum("nanargmin", red.argmin, a, axis, out, keepdims, np.inf)


@fuse_eagerly
def ptp(a: ArrayLike, axis: Axis = None, out: Any = None, keepdims: bool = False) -> Array:
    """Range (maximum minus minimum) over `axis`, as `numpy.ptp`."""
    x = asarray_strong("ptp", a)
    result = ew.subtract(red.max(x, axis, None, keepdims), red.min(x, axis, None, keepdims))
    return write_out("ptp", out, result, "same_kind")  # NumPy's subtract writes `out`


_INT64_SCALAR = ShapedArray((), np.int64)


def count_nonzero(a: ArrayLike, axis: Axis = None, *, keepdims: bool = False) -> Array:
    """The number of nonzero elements over `axis` (int64), as `numpy.count_nonzero`."""
    if axis is None and keepdims is False:  # the common call, without host_reduction's frames
        value = host_value(a)  # (a weak Array counts as a strong one: an int64 either way)
        if value is not None and value.dtype.kind in "biufc":
            return wrap_host(np.asarray(_count_all_nonzero(value)), _INT64_SCALAR)
    found = host_reduction(np.count_nonzero, a, axis, keepdims, "biufc", warns=False)
    if found is not None:
        return found
    x = asarray_strong("count_nonzero", a)
    nonzero = lax.convert_element_type(x, _BOOL)
    return red.sum(nonzero, axis, _INT64, keepdims=keepdims)


# --- median and quantiles -------------------------------------------------------------------

# Hyndman & Fan's continuous methods, by their (alpha, beta); "linear" is (1, 1).
_CONTINUOUS = {
    "linear": (1.0, 1.0),
    "weibull": (0.0, 0.0),
    "hazen": (0.5, 0.5),
    "median_unbiased": (1 / 3, 1 / 3),
    "normal_unbiased": (3 / 8, 3 / 8),
    "interpolated_inverted_cdf": (0.0, 1.0),
}
# Methods that pick one sorted value (no interpolation): the result keeps `a`'s dtype.
_DISCRETE = ("lower", "higher", "nearest", "inverted_cdf", "closest_observation")
_METHODS = (*_CONTINUOUS, *_DISCRETE, "midpoint", "averaged_inverted_cdf")


def _move_to_last(fname: str, x: Array, axis: Axis) -> tuple[Array, tuple[int, ...]]:
    """`x` with the reduced axes merged into one last axis, and those axes."""
    axes = red._reduced_axes(fname, axis, x.ndim, allow_bool=True)  # as numpy.median
    kept = tuple(i for i in range(x.ndim) if i not in axes)
    moved = lax.transpose(x, (*kept, *axes)) if x.ndim else x
    n = math.prod(x.shape[ax] for ax in axes)
    return lax.reshape(moved, (*(x.shape[i] for i in kept), n)), axes


def _keep_dims(result: Array, q_ndim: int, shape: tuple[int, ...], axes: tuple[int, ...]):
    kept_shape = tuple(1 if i in axes else d for i, d in enumerate(shape))
    return lax.reshape(result, (*result.shape[:q_ndim], *kept_shape))


def _take_last(s: Array, index: Array, q_ndim: int) -> Array:
    """`s[..., index]` for integer `index` of shape Q or Q + s.shape[:-1] (Q of `q_ndim`
    axes), giving shape Q + s.shape[:-1]: a one-hot select and sum, so traced indices need no
    gather."""
    n = s.shape[-1]
    out_shape = (*index.shape[:q_ndim], *s.shape[:-1])
    full = (*out_shape, n)
    index_dims = tuple(range(q_ndim)) if index.ndim == q_ndim else tuple(range(len(out_shape)))
    picked = lax.eq(
        lax.broadcasted_iota(index.dtype, full, len(full) - 1),
        lax.broadcast_in_dim(index, full, index_dims),
    )
    if s.dtype == _BOOL:  # XLA does not sum booleans: pick from 0/1 bytes
        return lax.convert_element_type(
            _take_last(lax.convert_element_type(s, np.dtype("uint8")), index, q_ndim), _BOOL
        )
    values = lax.broadcast_in_dim(s, full, tuple(range(q_ndim, len(full))))
    zeros = lax.full(full, 0, s.dtype)
    return lax.reduce_sum(lax.select_n(picked, zeros, values), (len(full) - 1,))


def _lerp(a: Array, b: Array, t: Array, out_dtype: np.dtype) -> Array:
    """NumPy's `_lerp`: exact at both ends and monotone in t. As in NumPy, the neighbours are
    subtracted in their own dtype, and `t` and `1 - t` are formed in `t`'s dtype (a weak
    Python-float `t` is a float64 there) before meeting the `out_dtype` values."""
    diff_b_a = lax.convert_element_type(ew.subtract(b, a), out_dtype)
    a = lax.convert_element_type(a, out_dtype)
    b = lax.convert_element_type(b, out_dtype)
    t_low = lax.convert_element_type(t, out_dtype)
    t_high = lax.convert_element_type(ew.subtract(lax.full((), 1, t.dtype), t), out_dtype)
    low = ew.add(a, ew.multiply(diff_b_a, t_low))
    high = ew.subtract(b, ew.multiply(diff_b_a, t_high))
    return ew.where(ew.greater_equal(t, 0.5), high, low)


def _host_quantile(
    fname: str, a: Any, q: Any, axis: Axis, method: str, keepdims: Any
) -> Array | None:
    """NumPy's `fname` (quantile, percentile or their nan* forms) of a real Array `a` with `q` a
    Python number, a list of them or an Array; None where the general path runs."""
    q_array = type(q) is not int and type(q) is not float
    if q_array and not (type(q) is list and all(type(v) is int or type(v) is float for v in q)):
        found = host_values(a, q)
        if found is None or dtypes.kind(found[1].dtype) not in "iuf":
            return None
        q = found[1]
    if type(keepdims) is not bool or not is_axis(axis):
        return None
    values = host_values(a)
    if values is None or dtypes.kind(values[0].dtype) not in "biuf":
        return None
    fn = getattr(np, fname)
    found = numpy_call_warning(fn, values[0], q, axis, method=method, keepdims=keepdims)
    return None if found is None else wrap_own(found)


def _quantile(
    fname: str,
    a: ArrayLike,
    q: ArrayLike,
    axis: Axis,
    out: Any,
    method: str,
    keepdims: bool,
    weights: Any,
    interpolation: Any,
    ignore_nan: bool,
    scale: int,
) -> Array:
    if interpolation is not None:
        raise TypeError(
            f"mjnp.{fname}: the 'interpolation' argument was renamed 'method' in NumPy 1.22"
        )
    if out is None and weights is None and type(method) is str and method in _METHODS:
        found = _host_quantile(fname, a, q, axis, method, keepdims)
        if found is not None:
            return found
    x = asarray_strong(fname, a)
    if x.dtype.kind == "c":
        raise TypeError(f"mjnp.{fname}: a must be an array of real numbers")
    if method not in _METHODS:
        raise ValueError(f"mjnp.{fname}: {method!r} is not a valid method. Use one of: {_METHODS}")
    if weights is not None and method != "inverted_cdf":
        raise ValueError(
            f"mjnp.{fname}: Only method 'inverted_cdf' supports weights. Got: {method}."
        )
    weak_q = type(q) in (int, float)
    by_lerp = method not in _DISCRETE  # NumPy writes `out` with its lerp ufunc, else np.take
    qa = asarray_strong(fname, q)
    if dtypes.kind(qa.dtype) not in "fiub":
        raise TypeError(f"mjnp.{fname}: q must be real, got dtype {qa.dtype.name}")
    if dtypes.kind(qa.dtype) != "f":
        if method == "linear" and scale == 1:
            # Integer q (0 or 1) makes NumPy's virtual index whole, so it takes the value as
            # it is, keeping a's dtype: 'lower' computes exactly that.
            method = "lower"
        qa = lax.convert_element_type(qa, _FLOAT64)
    if scale != 1:
        qa = ew.true_divide(qa, lax.full((), scale, qa.dtype))
    if _is_concrete(qa):
        host_q = np.asarray(qa)
        if not ((host_q >= 0) & (host_q <= 1)).all():
            raise ValueError(
                f"mjnp.{fname}: "
                + (
                    "Quantiles must be in the range [0, 1]"
                    if scale == 1
                    else "Percentiles must be in the range [0, 100]"
                )
            )
    if ignore_nan and x.size == 0:
        # NumPy's nan-quantiles of an empty array are its nanmean (shape, warnings)
        return nanmean(x, axis, out=out, keepdims=keepdims)
    shape = x.shape
    s, axes = _move_to_last(fname, x, axis)
    n = s.shape[-1]
    if weights is not None:
        w = _quantile_weights(fname, weights, x, axis)
        w = _move_to_last(fname, w, axis)[0]
        result = _weighted_inverted_cdf(fname, s, w, qa, ignore_nan)
        if keepdims:
            result = _keep_dims(result, qa.ndim, shape, axes)
        return write_out(fname, out, result, "unsafe" if ignore_nan else "same_kind")
    if n == 0 and not ignore_nan:
        raise IndexError(f"mjnp.{fname}: cannot take a quantile over an empty axis (shape {shape})")
    has_nan = None
    if dtypes.kind(x.dtype) == "f":
        nan = ew.isnan(s)
        if ignore_nan:
            count = red.sum(ew.logical_not(nan), -1)
            # NumPy warns once per all-NaN slice
            slice_warnings.warn(slice_warnings.ALL_NAN, slice_warnings.count_zeros(count))
            count = lax.convert_element_type(count, qa.dtype)
        else:
            has_nan = red.any(nan, -1)
    s = lax.sort(s, s.ndim - 1) if n else s
    if not ignore_nan or dtypes.kind(x.dtype) != "f":
        count = lax.full((), n, qa.dtype)
    # Shape Q + batch: each quantile against each slice's count.
    qb = lax.broadcast_in_dim(qa, (*qa.shape, *s.shape[:-1]), tuple(range(qa.ndim)))
    last = ew.subtract(count, 1)
    if method in ("inverted_cdf", "closest_observation"):
        # NumPy's `_discrete_interpolation_to_boundaries`: the next order statistic, or this
        # one where the virtual index is whole (for closest_observation: and odd).
        shift = 1.5 if method == "closest_observation" else 1
        virtual = ew.subtract(ew.multiply(count, qb), shift)
        previous = ew.floor(virtual)
        stay = ew.equal(virtual, previous)
        if method == "closest_observation":
            stay = ew.logical_and(stay, ew.equal(ew.remainder(previous, 2), 1))
        virtual = ew.where(stay, previous, ew.add(previous, 1))
    elif method in _DISCRETE or method == "midpoint":
        virtual = ew.multiply(qb, last)
        if method == "lower":
            virtual = ew.floor(virtual)
        elif method == "higher":
            virtual = ew.ceil(virtual)
        elif method == "nearest":
            virtual = ew.rint(virtual)
    elif method == "averaged_inverted_cdf":
        virtual = ew.subtract(ew.multiply(count, qb), 1)
    else:
        alpha, beta = _CONTINUOUS[method]
        if method == "linear":
            virtual = ew.multiply(qb, last)
        else:
            virtual = ew.subtract(
                ew.add(ew.multiply(count, qb), ew.add(alpha, ew.multiply(qb, 1 - alpha - beta))),
                1,
            )
    if n == 0:
        result = lax.full((*qa.shape, *s.shape[:-1]), np.nan, x.dtype)
    elif method in _DISCRETE:
        index = ew.clip(lax.convert_element_type(virtual, _INT64), 0, n - 1)
        result = _take_last(s, index, qa.ndim)
    else:
        floor = ew.floor(virtual)
        upper = ew.clip(ew.add(floor, 1), 0, ew.maximum(last, 0))
        lower = ew.clip(floor, 0, ew.maximum(last, 0))
        gamma = ew.subtract(virtual, floor)
        if method == "midpoint":
            gamma = ew.where(ew.equal(ew.ceil(virtual), floor), 0.0, 0.5)
            gamma = lax.convert_element_type(gamma, qa.dtype)
            upper = ew.clip(ew.ceil(virtual), 0, ew.maximum(last, 0))
        elif method == "averaged_inverted_cdf":
            # NumPy's fix_gamma: the average of two neighbours on a whole index, else the next.
            gamma = ew.where(ew.equal(gamma, 0), 0.5, 1.0)
            gamma = lax.convert_element_type(gamma, qa.dtype)
        # Indices past the end clamp to the last value, before the start to the first.
        beyond = ew.greater_equal(virtual, last)
        lower = ew.where(beyond, ew.maximum(last, 0), lower)
        upper = ew.where(beyond, ew.maximum(last, 0), upper)
        lo_val = _take_last(s, lax.convert_element_type(lower, _INT64), qa.ndim)
        hi_val = _take_last(s, lax.convert_element_type(upper, _INT64), qa.ndim)
        if x.dtype == _BOOL:
            raise TypeError(
                f"mjnp.{fname}: method {method!r} subtracts booleans, which NumPy does not "
                "support; use method='lower', 'higher' or 'nearest', or convert to int"
            )
        if weak_q:
            out_dtype = x.dtype if dtypes.kind(x.dtype) == "f" else _FLOAT64
        else:
            out_dtype = np.result_type(x.dtype, qa.dtype)
        result = _lerp(lo_val, hi_val, gamma, out_dtype)
    if has_nan is not None:
        result = ew.where(has_nan, lax.full((), np.nan, result.dtype), result)
    if keepdims:
        result = _keep_dims(result, qa.ndim, shape, axes)
    if (
        by_lerp
        and out is not None
        and not ignore_nan
        and getattr(out, "shape", None) != result.shape
    ):
        # NumPy's lerp is a ufunc writing `out`: a result that broadcasts to out's shape fits
        try:
            fits = np.broadcast_shapes(result.shape, out.shape) == out.shape
        except ValueError:
            fits = False
        if fits:
            result = lax.broadcast_to(result, out.shape)
    # NumPy's lerp writes `out` (a ufunc's casting), but its nan* versions copy unsafely.
    return write_out(fname, out, result, "unsafe" if ignore_nan else "same_kind")


def _quantile_weights(fname: str, weights: ArrayLike, x: Array, axis: Axis) -> Array:
    """`weights` checked as NumPy's `_weights_are_valid` and broadcast to `x`'s shape."""
    w = asarray_strong(fname, weights)
    if w.shape != x.shape:
        if axis is None:
            raise TypeError(
                f"mjnp.{fname}: Axis must be specified when shapes of a and weights differ "
                f"(a {x.shape}, weights {w.shape})."
            )
        axes = normalize_axes(fname, axis, x.ndim)
        if w.shape != tuple(x.shape[ax] for ax in axes):
            raise ValueError(
                f"mjnp.{fname}: Shape of weights must be consistent with shape of a along "
                f"specified axis (a {x.shape}, axis={axis!r}, weights {w.shape})."
            )
        order = tuple(int(i) for i in np.argsort(axes))
        w = lax.broadcast_in_dim(lax.transpose(w, order), x.shape, tuple(sorted(axes)))
    if _is_concrete(w) and bool(np.any(np.asarray(w) < 0)):
        raise ValueError(f"mjnp.{fname}: Weights must be non-negative.")
    return w


def _weighted_inverted_cdf(fname: str, s: Array, w: Array, qa: Array, ignore_nan: bool) -> Array:
    """NumPy's weighted 'inverted_cdf' over the last axis of `s`: the first sorted value whose
    normalized cumulative weight reaches q (shape q.shape + s.shape[:-1])."""
    n = s.shape[-1]
    last = s.ndim - 1
    if n == 0:
        raise IndexError(f"mjnp.{fname}: cannot take a quantile over an empty axis")
    nan = ew.isnan(s) if dtypes.kind(s.dtype) == "f" else None
    if ignore_nan and nan is not None:
        w = ew.where(nan, lax.full((), 0, w.dtype), w)  # NaNs sort last with no weight
    s, w = lax.sort([s, w], last, num_keys=1)
    cdf = lax.cumsum(lax.convert_element_type(w, _FLOAT64), last)
    total = lax.slice_in_dim(cdf, n - 1, n, last)
    # all-zero weights: NaN, refused below after NumPy's "invalid value" warning; an all-NaN
    # slice of a nan-quantile has no weights left in NumPy, so no warning either
    with slice_warnings.Quiet() if ignore_nan else contextlib.nullcontext():
        cdf = ew.true_divide(cdf, total)
    if _is_concrete(cdf):
        bad = np.isnan(np.asarray(cdf)[..., -1])
        if ignore_nan and nan is not None:  # an all-NaN slice is NaN, not an error (NumPy)
            bad &= ~np.asarray(red.all(nan, -1))
        if bad.any():
            raise ValueError(f"mjnp.{fname}: Weights included NaN, inf or were all zero.")
    cdf = lax.convert_element_type(cdf, qa.dtype)
    # Leading zero weights: q=0 must pick the first value with weight, as NumPy's -1 trick.
    cdf = ew.where(ew.equal(cdf, 0), lax.full((), -1, cdf.dtype), cdf)
    full = (*qa.shape, *s.shape)
    q_full = lax.broadcast_in_dim(qa, full, tuple(range(qa.ndim)))
    cdf_full = lax.broadcast_in_dim(cdf, full, tuple(range(qa.ndim, len(full))))
    index = red.sum(ew.less(cdf_full, q_full), -1, _INT64)  # searchsorted(cdf, q, "left")
    index = ew.minimum(index, n - 1)
    result = _take_last(s, index, qa.ndim)
    if nan is not None:
        if ignore_nan:
            all_nan = red.all(nan, -1)
            result = ew.where(all_nan, lax.full((), np.nan, result.dtype), result)
            slice_warnings.warn(slice_warnings.ALL_NAN, slice_warnings.count_true(all_nan))
        else:
            result = ew.where(red.any(nan, -1), lax.full((), np.nan, result.dtype), result)
    return result


def quantile(
    a: ArrayLike,
    q: ArrayLike,
    axis: Axis = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: ArrayLike | None = None,
    interpolation: None = None,
) -> Array:
    """The `q`-th quantiles over `axis`, as `numpy.quantile` (shape q.shape + reduced shape).

    Methods: the continuous ones (linear, weibull, hazen, median_unbiased, normal_unbiased,
    interpolated_inverted_cdf), the discrete ones (inverted_cdf, averaged_inverted_cdf,
    closest_observation, lower, higher, nearest) and midpoint; `weights` with 'inverted_cdf'
    only, as in NumPy.
    """
    return _quantile(
        "quantile", a, q, axis, out, method, keepdims, weights, interpolation, False, 1
    )


def percentile(
    a: ArrayLike,
    q: ArrayLike,
    axis: Axis = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: ArrayLike | None = None,
    interpolation: None = None,
) -> Array:
    """`quantile` with `q` in percent, as `numpy.percentile`."""
    return _quantile(
        "percentile", a, q, axis, out, method, keepdims, weights, interpolation, False, 100
    )


def nanquantile(
    a: ArrayLike,
    q: ArrayLike,
    axis: Axis = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: ArrayLike | None = None,
    interpolation: None = None,
) -> Array:
    """`quantile` of the non-NaN elements, as `numpy.nanquantile` (all-NaN slices give NaN)."""
    return _quantile(
        "nanquantile", a, q, axis, out, method, keepdims, weights, interpolation, True, 1
    )


def nanpercentile(
    a: ArrayLike,
    q: ArrayLike,
    axis: Axis = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: ArrayLike | None = None,
    interpolation: None = None,
) -> Array:
    """`percentile` of the non-NaN elements, as `numpy.nanpercentile`."""
    return _quantile(
        "nanpercentile", a, q, axis, out, method, keepdims, weights, interpolation, True, 100
    )


def median(
    a: ArrayLike,
    axis: Axis = None,
    out: Any = None,
    overwrite_input: bool = False,
    keepdims: bool = False,
) -> Array:
    """Median over `axis`, as `numpy.median`: the mean of the middle one or two sorted values
    (NaN if the slice holds a NaN or is empty)."""
    if out is None:
        found = host_reduction(np.median, a, axis, keepdims)
        if found is not None:
            return found
    x = asarray_strong("median", a)
    shape = x.shape
    s, axes = _move_to_last("median", x, axis)
    n = s.shape[-1]
    if n == 0:
        result = red.mean(s, -1)
    else:
        s = lax.sort(s, s.ndim - 1)
        middle = lax.slice_in_dim(s, (n - 1) // 2, n // 2 + 1, s.ndim - 1)
        result = red.mean(middle, -1)
        if dtypes.kind(x.dtype) in "fc":
            last = lax.squeeze(lax.slice_in_dim(s, n - 1, n, s.ndim - 1), (s.ndim - 1,))
            result = ew.where(ew.isnan(last), lax.full((), np.nan, result.dtype), result)
    if keepdims:
        result = _keep_dims(result, 0, shape, axes)
    return write_out("median", out, result)


def nanmedian(
    a: ArrayLike,
    axis: Axis = None,
    out: Any = None,
    overwrite_input: bool = False,
    keepdims: bool = False,
) -> Array:
    """Median of the non-NaN elements, as `numpy.nanmedian` (all-NaN slices give NaN)."""
    if out is None:
        found = host_reduction(np.nanmedian, a, axis, keepdims)
        if found is not None:
            return found
    x = asarray_strong("nanmedian", a)
    if dtypes.kind(x.dtype) not in "fc":  # complex: NaNs sort last, as NumPy's
        return median(x, axis, out, overwrite_input, keepdims)
    if x.size == 0:
        result = nanmean(x, axis, keepdims=keepdims)
    else:
        result = _nanmedian(x, axis, keepdims)
    return write_out("nanmedian", out, result)


def _nanmedian(x: Array, axis: Axis, keepdims: bool) -> Array:
    """NumPy's nanmedian of a non-empty float array: the mean of the middle one or two of the
    sorted non-NaN values of each slice (so `[inf, nan]` gives inf), NaN for an all-NaN one."""
    shape = x.shape
    s, axes = _move_to_last("nanmedian", x, axis)
    last = s.ndim - 1
    s = lax.sort(s, last)  # NaNs sort last
    count = lax.reduce_sum(lax.convert_element_type(ew.logical_not(ew.isnan(s)), _INT64), (last,))
    one = lax.full((), 1, _INT64)
    lo_index = lax.max(
        lax.div(lax.sub(count, one), lax.full((), 2, _INT64)), lax.full((), 0, _INT64)
    )
    hi_index = lax.div(count, lax.full((), 2, _INT64))
    lo, hi = _pick_last(s, lo_index), _pick_last(s, hi_index)
    two = lax.full((), 2, s.dtype)
    middle = lax.select(lax.eq(lo_index, hi_index), lo, lax.div(lax.add(lo, hi), two))
    nan = lax.full(middle.shape, np.nan, s.dtype)
    result = lax.select(lax.eq(count, lax.full((), 0, _INT64)), nan, middle)
    # NumPy warns once per all-NaN slice
    slice_warnings.warn(slice_warnings.ALL_NAN, slice_warnings.count_zeros(count))
    return _keep_dims(result, 0, shape, axes) if keepdims else result


def _pick_last(s: Array, index: Array) -> Array:
    """`s[..., index]` for an integer `index` of shape `s.shape[:-1]`: a one-hot select filled
    with -0.0, which adds nothing (not even to the sign of a zero)."""
    full = s.shape
    picked = lax.eq(
        lax.broadcasted_iota(_INT64, full, len(full) - 1), lax.expand_dims(index, (len(full) - 1,))
    )
    fill = lax.full(full, -0.0, s.dtype)
    return lax.reduce_sum(lax.select(picked, s, fill), (len(full) - 1,))


# --- weighted average, covariance, correlation ----------------------------------------------


def average(
    a: ArrayLike,
    axis: Axis = None,
    weights: ArrayLike | None = None,
    returned: bool = False,
    *,
    keepdims: bool = False,
) -> Any:
    """Weighted average over `axis`, as `numpy.average` (with `returned`, also the sum of the
    weights, broadcast to the result's shape).

    Raises:
        ZeroDivisionError: if the weights sum to zero (checked eagerly; under jit the result
            is NaN or inf).
    """
    if type(returned) is bool and type(keepdims) is bool and is_axis(axis):
        values = host_values(a) if weights is None else host_values(a, weights)
        if values is not None and all(dtypes.kind(v.dtype) in "biuf" for v in values):
            w = None if weights is None else values[1]
            found = numpy_call_warning(np.average, values[0], axis, w, returned, keepdims=keepdims)
            if found is not None:
                return (wrap_own(found[0]), wrap_own(found[1])) if returned else wrap_own(found)
    x = asarray_strong("average", a)
    if axis is not None:
        # As numpy.average, which normalizes first (so a bool axis counts as an int there).
        axis = normalize_axes("mjnp.average", axis, x.ndim)
    if weights is None:
        avg = red.mean(x, axis, keepdims=keepdims)
        scale = lax.full(avg.shape, x.size // max(avg.size, 1), avg.dtype)
        return (avg, scale) if returned else avg
    w = asarray_strong("average", weights)
    result_dtype = np.result_type(x.dtype, w.dtype, *([_FLOAT64] if x.dtype.kind in "biu" else []))
    axes = red._reduced_axes("average", axis, x.ndim)
    if w.shape != x.shape:
        if axis is None:
            raise TypeError(
                "mjnp.average: Axis must be specified when shapes of a and weights differ "
                f"(a {x.shape}, weights {w.shape})"
            )
        given = normalize_axes("mjnp.average", axis, x.ndim)
        if w.shape != tuple(x.shape[ax] for ax in given):
            raise ValueError(
                "mjnp.average: Shape of weights must be consistent with shape of a along "
                f"specified axis (a {x.shape}, axis={axis!r}, weights {w.shape})"
            )
        w = lax.transpose(w, tuple(int(i) for i in np.argsort(given)))
        w = lax.broadcast_in_dim(w, x.shape, tuple(sorted(given)))
    scale = red.sum(w, axes, result_dtype, keepdims=keepdims)
    if _is_concrete(scale) and bool(np.any(np.asarray(scale) == 0)):
        raise ZeroDivisionError("mjnp.average: weights sum to zero, can't be normalized")
    total = red.sum(ew.multiply(x, w), axes, result_dtype, keepdims=keepdims)
    avg = ew.true_divide(total, scale)
    if returned:
        return avg, lax.broadcast_to(scale, avg.shape) if scale.shape != avg.shape else scale
    return avg


def _cov_weights(kind: str, weights: ArrayLike, n: int) -> Array:
    """`fweights`/`aweights` checked as NumPy's cov checks them (values only when eager)."""
    w = lax.convert_element_type(asarray_strong("cov", weights), _FLOAT64)
    host = np.asarray(w) if _is_concrete(w) else None
    if kind == "fweights" and host is not None and not np.all(host == np.around(host)):
        raise TypeError("mjnp.cov: fweights must be integer")
    if w.ndim > 1:
        raise RuntimeError(f"mjnp.cov: cannot handle multidimensional {kind} (shape {w.shape})")
    if w.ndim == 0 or w.shape[0] != n:
        raise RuntimeError(
            f"mjnp.cov: incompatible numbers of samples and {kind} ({n} samples, {kind} of "
            f"shape {w.shape})"
        )
    if host is not None and bool(np.any(host < 0)):
        raise ValueError(f"mjnp.cov: {kind} cannot be negative")
    return w


def _host_cov(fn: Any, m: Any, y: Any, rowvar: Any, **kwargs: Any) -> Array | None:
    """NumPy's `cov`/`corrcoef` of small eager real Arrays (`bias` and `rowvar` bools, `ddof`
    None or an int), or None where the general path runs (and raises)."""
    if type(rowvar) is not bool or type(kwargs.get("bias", False)) is not bool:
        return None
    ddof = kwargs.get("ddof")
    if ddof is not None and type(ddof) is not int:
        return None
    values = host_values(m) if y is None else host_values(m, y)
    if values is None or any(dtypes.kind(v.dtype) not in "biuf" for v in values):
        return None
    found = numpy_call_warning(fn, values[0], None if y is None else values[1], rowvar, **kwargs)
    return None if found is None else wrap_own(found)


def cov(
    m: ArrayLike,
    y: ArrayLike | None = None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: int | None = None,
    fweights: ArrayLike | None = None,
    aweights: ArrayLike | None = None,
    *,
    dtype: DTypeLike | None = None,
) -> Array:
    """Covariance matrix of the rows (variables) of `m` (and `y`), as `numpy.cov`, with
    frequency (`fweights`) and reliability (`aweights`) weights of the observations.

    The weights' values are checked (integer, non-negative) and "Degrees of freedom <= 0 for
    slice" is warned eagerly only; under `jit` such weights compute as NumPy's formula does.
    """
    if fweights is None and aweights is None and dtype is None:
        found = _host_cov(np.cov, m, y, rowvar, bias=bias, ddof=ddof)
        if found is not None:
            return found
    if ddof is not None and ddof != int(ddof):
        raise ValueError(f"mjnp.cov: ddof must be integer, got {ddof!r}")
    x = asarray_strong("cov", m)
    if x.ndim > 2:
        raise ValueError(f"mjnp.cov: m has more than 2 dimensions (shape {x.shape})")
    parts = [x]
    if y is not None:
        yy = asarray_strong("cov", y)
        if yy.ndim > 2:
            raise ValueError(f"mjnp.cov: y has more than 2 dimensions (shape {yy.shape})")
        parts.append(yy)
    if dtype is None:  # NumPy's: m's and y's types and float64 (a complex y keeps its part)
        dtype = np.result_type(*(p.dtype for p in parts), _FLOAT64)
    rows = []
    for i, p in enumerate(parts):
        ndim = p.ndim
        p = lax.convert_element_type(p, np.dtype(dtype))
        p = lax.reshape(p, (1, p.size)) if p.ndim < 2 else p
        # NumPy transposes m unless it was 1-d, and y unless it has one row
        if not rowvar and (ndim != 1 if i == 0 else p.shape[0] != 1):
            p = lax.transpose(p, (1, 0))
        rows.append(p)
    if rows[0].shape[0] == 0:
        return lax.full((0, 0), 0, _FLOAT64)  # NumPy's np.array([]).reshape(0, 0)
    if len(rows) > 1:
        if rows[0].shape[1] != rows[1].shape[1]:
            raise ValueError(
                "mjnp.cov: all the input array dimensions except for the concatenation axis must "
                f"match exactly, got {rows[0].shape} and {rows[1].shape}"
            )
        data = lax.concatenate(rows, 0)
    else:
        data = rows[0]
    if ddof is None:
        ddof = 0 if bias else 1
    n = data.shape[1]
    w = aw = None
    if fweights is not None:
        w = _cov_weights("fweights", fweights, n)
    if aweights is not None:
        aw = _cov_weights("aweights", aweights, n)
        w = aw if w is None else ew.multiply(w, aw)
    if w is None:
        avg = red.mean(data, 1, keepdims=True)
        fact: Any = n - ddof
    else:
        w_sum = red.sum(w)
        if _is_concrete(w_sum) and float(np.asarray(w_sum)) == 0:
            raise ZeroDivisionError("mjnp.cov: Weights sum to zero, can't be normalized")
        avg = ew.true_divide(red.sum(ew.multiply(data, w), 1, keepdims=True), w_sum)
        if ddof == 0:
            fact = w_sum
        elif aw is None:
            fact = ew.subtract(w_sum, ddof)
        else:
            fact = ew.subtract(
                w_sum, ew.true_divide(ew.multiply(ddof, red.sum(ew.multiply(w, aw))), w_sum)
            )
    if isinstance(fact, int):
        if fact <= 0:
            slice_warnings.warn(slice_warnings.DOF)
            fact = 0.0
    elif _is_concrete(fact):
        if float(np.asarray(fact)) <= 0:
            slice_warnings.warn(slice_warnings.DOF)
            fact = 0.0
    else:
        fact = ew.where(ew.less_equal(fact, 0), 0.0, fact)
    centered = ew.subtract(data, avg)
    weighted = centered if w is None else ew.multiply(centered, w)
    c = matmul(centered, ew.conjugate(lax.transpose(weighted, (1, 0))))
    # NumPy's in-place `c *= true_divide(1, fact)`: a float64 factor, c keeps its dtype
    c = lax.convert_element_type(ew.multiply(c, ew.true_divide(1, fact)), c.dtype)
    if c.shape == (1, 1):
        return lax.reshape(c, ())
    return c


def corrcoef(
    x: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, *, dtype: DTypeLike | None = None
) -> Array:
    """Pearson correlation coefficients, as `numpy.corrcoef` (clipped to [-1, 1])."""
    if dtype is None:
        found = _host_cov(np.corrcoef, x, y, rowvar)
        if found is not None:
            return found
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return ew.true_divide(c, c)
    n = c.shape[0]
    eye = lax.eq(lax.broadcasted_iota(_INT64, (n, n), 0), lax.broadcasted_iota(_INT64, (n, n), 1))
    d = red.sum(ew.where(eye, c, lax.full((), 0, c.dtype)), 1)
    stddev = ew.sqrt(ew.real(d))
    c = ew.true_divide(c, lax.reshape(stddev, (n, 1)))
    c = ew.true_divide(c, lax.reshape(stddev, (1, n)))
    if c.dtype.kind == "c":
        return lax.complex(ew.clip(ew.real(c), -1, 1), ew.clip(ew.imag(c), -1, 1))
    return ew.clip(c, -1, 1)
