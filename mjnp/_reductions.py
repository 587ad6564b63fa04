"""Reductions (NumPy's sums, products, extrema and logic reductions): sum, prod, mean, max, min,
argmax, argmin, all, any. `out=` rebinds the given array (`mjnp._out`), casting unsafely as
NumPy's reductions do."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from mjcore import dtypes, lax
from mjcore.core import ShapedArray
from mjcore.dtypes import DTypeLike
from mjcore.eager_fusion import fuse_eagerly
from mjcore.lax.reductions import reduce_sum_p
from mjnp._host_numpy import host_value, wrap
from mjnp._host_stats import REJECTED
from mjnp._manipulation import (
    asarray_strong,
    multi_axis,
    normalize_axes,
    reject_list_axis,
    single_axis,
)
from mjnp._out import write_out
from mjnp._promotion import asarray_arg
from mjnp._slice_warnings import check_mean

ArrayLike = Any
Array = Any
Axis = int | tuple[int, ...] | None

_BOOL = np.dtype(bool)
_INT64 = np.dtype("int64")
_UINT64 = np.dtype("uint64")
_FLOAT16 = np.dtype("float16")
_FLOAT32 = np.dtype("float32")
_FLOAT64 = np.dtype("float64")
# axes=None as the reduction primitives take it, per rank
_ALL_AXES = tuple(tuple(range(n)) for n in range(65))


# --- shared steps ---------------------------------------------------------------------------


def _reduced_axes(
    fname: str, axis: Axis, ndim: int, *, ufunc: bool = False, allow_bool: bool = False
) -> tuple[int, ...]:
    """The sorted axes a reduction over `axis` removes.

    `ufunc` reads `axis` as NumPy's ufunc reductions (sum, prod, max, min, all, any) do: an
    int 0 or -1 is accepted on a 0-d array. A bool or a list axis is a TypeError, as in those
    and in NumPy's mean, std and var (which pass `axis` on to a ufunc reduction); median and
    quantile normalize it in Python, taking a bool as an int and a list as a tuple
    (`allow_bool`).
    """
    if ufunc:
        return multi_axis(f"mjnp.{fname}", axis, ndim)
    if axis is None:
        return tuple(range(ndim))
    if not allow_bool:
        reject_list_axis(f"mjnp.{fname}", axis)
    return tuple(sorted(normalize_axes(f"mjnp.{fname}", axis, ndim, allow_bool=allow_bool)))


def _where_mask(fname: str, where: ArrayLike, shape: tuple[int, ...]) -> Array | None:
    """`where` as a bool array of `shape`, or None when it selects everything."""
    if where is True:
        return None
    mask = asarray_arg(fname, where)
    if mask.dtype != _BOOL:
        raise TypeError(
            f"mjnp.{fname}: where= must be a boolean array, got dtype {mask.dtype.name}; "
            "compare it with a value to make a mask"
        )
    try:
        fits = np.broadcast_shapes(mask.shape, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"mjnp.{fname}: where= of shape {mask.shape} cannot be broadcast to the array "
            f"shape {shape}"
        )
    return lax.broadcast_to(mask, shape)


def _scalar_like(fname: str, value: ArrayLike, dtype: np.dtype, argname: str) -> Array:
    """A 0-d array of `dtype` holding `value` (a Python scalar or a 0-d array)."""
    if dtypes.is_python_scalar(value):
        dtypes.coerce_python_scalar(value, dtype, f"mjnp.{fname}")  # NumPy's range checks
        return lax.full((), value, dtype)
    arr = asarray_arg(fname, value)
    if arr.ndim != 0:
        raise ValueError(f"mjnp.{fname}: {argname} must be a scalar, got shape {arr.shape}")
    return lax.convert_element_type(arr, dtype)


def _finish(x: Array, axes: tuple[int, ...], keepdims: bool) -> Array:
    return lax.expand_dims(x, axes) if keepdims else x


def _reduce(
    reducer: Callable[[Array, tuple[int, ...]], Array], x: Array, axes: tuple[int, ...]
) -> Array:
    return reducer(x, axes) if axes else x


def _sum_dtype(dtype: np.dtype) -> np.dtype:
    # NumPy accumulates small integers in the default platform integer (int64 here) and
    # unsigned ones in uint64.
    if dtype.kind in "bi":
        return _INT64
    if dtype.kind == "u":
        return _UINT64
    return dtype


class _Monoid(NamedTuple):
    """How sum and prod reduce: the lax reduction (and its bool form, for dtype=bool, where
    NumPy adds with `or` and multiplies with `and`), the identity and the binary op."""

    reduce: Callable[[Array, tuple[int, ...]], Array]
    reduce_bool: Callable[[Array, tuple[int, ...]], Array]
    identity: int
    combine: Callable[[Array, Array], Array]


_SUM = _Monoid(lax.reduce_sum, lax.reduce_or, 0, lax.add)
_PROD = _Monoid(lax.reduce_prod, lax.reduce_and, 1, lax.mul)


def _accumulate(
    fname: str,
    monoid: _Monoid,
    x: Array,
    axes: tuple[int, ...],
    out_dtype: np.dtype,
    initial: ArrayLike | None,
    mask: Array | None,
) -> Array:
    """Cast, mask, reduce, then fold in `initial`; the result has the reduced axes removed."""
    # NB: float16 (and bfloat16, as in JAX) is accumulated in float32 and rounded once at the
    # end; NumPy's float16 loops also accumulate in float32 internally.
    acc_dtype = _FLOAT32 if out_dtype in (_FLOAT16, dtypes.bfloat16) else out_dtype
    x = lax.convert_element_type(x, acc_dtype)
    if mask is not None:
        x = lax.select_n(mask, lax.full(x.shape, monoid.identity, acc_dtype), x)
    out = _reduce(monoid.reduce_bool if acc_dtype == _BOOL else monoid.reduce, x, axes)
    if initial is not None:
        out = monoid.combine(out, _scalar_like(fname, initial, acc_dtype, "initial"))
    return lax.convert_element_type(out, out_dtype)


def _sum_or_prod(
    fname: str,
    monoid: _Monoid,
    a: ArrayLike,
    axis: Axis,
    dtype: DTypeLike | None,
    out: Any,
    keepdims: bool,
    initial: ArrayLike | None,
    where: ArrayLike,
) -> Array:
    x = asarray_arg(fname, a)
    axes = _reduced_axes(fname, axis, x.ndim, ufunc=True)
    mask = _where_mask(fname, where, x.shape)
    if dtype is None:
        out_dtype = _sum_dtype(x.dtype)
    else:
        out_dtype = dtypes.canonicalize_dtype(dtype, f"mjnp.{fname}")
    result = _accumulate(fname, monoid, x, axes, out_dtype, initial, mask)
    return write_out(fname, out, _finish(result, axes, keepdims))


# --- sum, prod, mean ------------------------------------------------------------------------


# Floating-point errors as NumPy's reduce loop reports them: a float16 sum accumulates in
# float32 (as NumPy's) and overflows in the final cast, which NumPy calls "in reduce".
@functools.partial(fuse_eagerly, fp_name="reduce")
def sum(  # noqa: A001  (NumPy's name)
    a: ArrayLike,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    out: Any = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike = True,
) -> Array:
    """Sum of elements over `axis`, as `numpy.sum`.

    bool and signed integers sum to int64, unsigned to uint64 unless `dtype` is given.
    """
    if (
        axis is None
        and dtype is None
        and out is None
        and not keepdims
        and initial is None
        and where is True
    ):
        # The common `sum(x)` of a strongly typed inexact array (a loss under `grad`): one
        # reduction, without the general path's option handling (~1.5 µs of every trace).
        aval = getattr(a, "aval", None)
        if (
            type(aval) is ShapedArray
            and aval.dtype.kind in "fc"
            and aval.dtype != _FLOAT16
            and not aval.weak_type
            and aval.shape
        ):
            return reduce_sum_p.bind1(a, axes=_ALL_AXES[len(aval.shape)])
    return _sum_or_prod("sum", _SUM, a, axis, dtype, out, keepdims, initial, where)


@functools.partial(fuse_eagerly, fp_name="reduce")
def prod(
    a: ArrayLike,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    out: Any = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike = True,
) -> Array:
    """Product of elements over `axis`, as `numpy.prod` (result dtypes as for `sum`)."""
    return _sum_or_prod("prod", _PROD, a, axis, dtype, out, keepdims, initial, where)


@check_mean  # NumPy's "Mean of empty slice", on every call (the body runs once per signature)
@fuse_eagerly
def mean(
    a: ArrayLike,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    out: Any = None,
    keepdims: bool = False,
    *,
    where: ArrayLike = True,
) -> Array:
    """Arithmetic mean over `axis`, as `numpy.mean`.

    bool and integer inputs give float64; float16 is accumulated in float32. A mean over no
    elements is NaN, with NumPy's warnings.
    """
    x = asarray_arg("mean", a)
    axes = _reduced_axes("mean", axis, x.ndim)
    mask = _where_mask("mean", where, x.shape)
    if dtype is None:
        out_dtype = _FLOAT64 if x.dtype.kind in "biu" else x.dtype
    else:
        out_dtype = dtypes.canonicalize_dtype(dtype, "mjnp.mean")
    acc_dtype = _FLOAT32 if out_dtype in (_FLOAT16, dtypes.bfloat16) else out_dtype
    # An integer mean (only with an explicit integer dtype) divides in float64, as in NumPy.
    div_dtype = acc_dtype if acc_dtype.kind in "fc" else _FLOAT64
    total = lax.convert_element_type(
        _accumulate("mean", _SUM, x, axes, acc_dtype, None, mask), div_dtype
    )
    if mask is None:
        count = lax.full((), int(np.prod([x.shape[ax] for ax in axes])), div_dtype)
    else:
        count = _reduce(lax.reduce_sum, lax.convert_element_type(mask, _INT64), axes)
        count = lax.convert_element_type(count, div_dtype)
    result = lax.convert_element_type(lax.div(total, count), out_dtype)
    return write_out("mean", out, _finish(result, axes, keepdims))


# --- max, min -------------------------------------------------------------------------------


class _Extremum(NamedTuple):
    """How max and min reduce: NumPy's ufunc name (for errors), the lax reduction, its bool
    form (`or` for max, `and` for min) and the binary op that folds in `initial`."""

    ufunc_name: str
    reduce: Callable[[Array, tuple[int, ...]], Array]
    reduce_bool: Callable[[Array, tuple[int, ...]], Array]
    combine: Callable[[Array, Array], Array]


_MAX = _Extremum("maximum", lax.reduce_max, lax.reduce_or, lax.max)
_MIN = _Extremum("minimum", lax.reduce_min, lax.reduce_and, lax.min)


def _extremum(
    fname: str,
    op: _Extremum,
    a: ArrayLike,
    axis: Axis,
    out: Any,
    keepdims: bool,
    initial: ArrayLike | None,
    where: ArrayLike,
) -> Array:
    x = asarray_strong(fname, a)
    axes = _reduced_axes(fname, axis, x.ndim, ufunc=True)
    mask = _where_mask(fname, where, x.shape)
    if initial is None:
        if mask is not None:
            raise ValueError(
                f"mjnp.{fname}: reduction operation '{op.ufunc_name}' does not have an "
                "identity, so to use a where mask one has to specify 'initial'"
            )
        if 0 in (x.shape[ax] for ax in axes):
            raise ValueError(
                f"mjnp.{fname}: zero-size array to reduction operation {op.ufunc_name} which "
                f"has no identity (array of shape {x.shape}, axis={axis!r}); pass initial= to "
                "define the result of an empty reduction"
            )
        init = None
    else:
        init = _scalar_like(fname, initial, x.dtype, "initial")
    if mask is not None:
        x = lax.select_n(mask, lax.broadcast_to(init, x.shape), x)
    if x.dtype.kind == "c":
        result = _complex_extremum(op is _MAX, x, axes, init)
        return write_out(fname, out, _finish(result, axes, keepdims))
    result = _reduce(op.reduce_bool if x.dtype == _BOOL else op.reduce, x, axes)
    if init is not None:
        result = op.combine(result, init)
    return write_out(fname, out, _finish(result, axes, keepdims))


# NumPy orders complex numbers lexicographically (real part, then imaginary part), and a value
# with a NaN in either part wins, the first one along the axis. XLA's max/min reductions refuse
# complex, so these build the order from real reductions; the real path above stays as it was.


def _complex_arg_extremum(is_max: bool, x: Array, axis: int) -> Array:
    """First index along `axis` of the lexicographic max (min) of complex `x`, NaNs first."""
    re, im = lax.real(x), lax.imag(x)
    reduce = lax.reduce_max if is_max else lax.reduce_min
    shape = x.shape
    kept = tuple(d for d in range(x.ndim) if d != axis)

    def spread(r: Array) -> Array:
        return lax.broadcast_in_dim(r, shape, kept)

    nan = lax.bitwise_or(lax.ne(re, re), lax.ne(im, im))
    any_nan = spread(lax.reduce_or(nan, (axis,)))
    best_re = spread(reduce(re, (axis,)))
    on_best_re = lax.eq(re, best_re)
    beyond = lax.full((), -np.inf if is_max else np.inf, im.dtype)
    best_im = spread(reduce(lax.select_n(on_best_re, lax.broadcast_to(beyond, shape), im), (axis,)))
    best = lax.bitwise_and(on_best_re, lax.eq(im, best_im))
    hit = lax.select_n(any_nan, best, nan)
    return lax.argmax(lax.convert_element_type(hit, np.dtype("int8")), axis, _INT64)


def _complex_extremum(is_max: bool, x: Array, axes: tuple[int, ...], init: Array | None) -> Array:
    """Lexicographic max (min) of complex `x` over `axes`, folding in `init` if given."""
    kept = tuple(d for d in range(x.ndim) if d not in axes)
    moved = lax.transpose(x, (*kept, *axes)) if x.ndim else x
    flat = lax.reshape(moved, (*(x.shape[d] for d in kept), math.prod(x.shape[d] for d in axes)))
    if init is not None:  # `init` takes part as one more element ahead of each slice
        head = lax.broadcast_to(init, (*flat.shape[:-1], 1))
        flat = lax.concatenate([head, flat], flat.ndim - 1)
    last = flat.ndim - 1
    index = _complex_arg_extremum(is_max, flat, last)
    picked = lax.eq(
        lax.broadcasted_iota(_INT64, flat.shape, last),
        lax.broadcast_in_dim(index, flat.shape, tuple(range(last))),
    )
    # Select the picked element's parts with max over a -inf background: exact, -0.0 included.
    floor = lax.full(flat.shape, -np.inf, np.dtype(f"f{flat.dtype.itemsize // 2}"))
    parts = [
        lax.reduce_max(lax.select_n(picked, floor, p), (last,))
        for p in (lax.real(flat), lax.imag(flat))
    ]
    return lax.complex(*parts)


@fuse_eagerly
def max(  # noqa: A001  (NumPy's name)
    a: ArrayLike,
    axis: Axis = None,
    out: Any = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike = True,
) -> Array:
    """Maximum over `axis`, as `numpy.max` (NaNs propagate)."""
    return _extremum("max", _MAX, a, axis, out, keepdims, initial, where)


@fuse_eagerly
def min(  # noqa: A001  (NumPy's name)
    a: ArrayLike,
    axis: Axis = None,
    out: Any = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike = True,
) -> Array:
    """Minimum over `axis`, as `numpy.min` (NaNs propagate)."""
    return _extremum("min", _MIN, a, axis, out, keepdims, initial, where)


amax = max
amin = min


# --- argmax, argmin -------------------------------------------------------------------------


def _host_arg_extremum(fn: Any, a: Any, axis: Any, keepdims: Any) -> Array | None:
    """NumPy's argmax/argmin of a small eager real Array (NaN: the first one wins in both);
    None where the general path runs, which also raises for an empty axis."""
    if (axis is not None and type(axis) is not int) or type(keepdims) is not bool:
        return None
    value = host_value(a)  # (a weak Array too: the indices are int64 either way)
    if value is None or value.dtype.kind not in "biuf":
        return None
    # the ndarray method numpy.argmax/argmin call (their wrapper costs ~1 µs); keepdims=False
    # is not passed (a keyword costs ~1 µs more)
    try:
        found = fn(value, axis, None, keepdims=True) if keepdims else fn(value, axis)
    except REJECTED:  # an empty axis, an axis out of range (AxisError): the general path
        return None
    return wrap(found)  # a new index array (or scalar), never an operand's value


def _arg_extremum(
    fname: str,
    lax_arg: Callable[..., Array],
    a: ArrayLike,
    axis: int | None,
    out: Any,
    keepdims: bool,
) -> Array:
    x = asarray_arg(fname, a)
    ndim_in = x.ndim
    x, ax = single_axis(f"mjnp.{fname}", x, axis)
    if x.shape[ax] == 0:
        raise ValueError(
            f"mjnp.{fname}: attempt to get {fname} of an empty sequence (array of shape "
            f"{x.shape}, axis={axis!r})"
        )
    if x.dtype.kind == "c":
        result = _complex_arg_extremum(fname == "argmax", x, ax)
    else:
        result = lax_arg(x, ax, _INT64)
    if keepdims and ndim_in:  # a 0-d input keeps its 0-d shape, as in NumPy
        result = lax.expand_dims(result, tuple(range(ndim_in)) if axis is None else (ax,))
    # NumPy computes into an int64 temporary and copies it back to `out`.
    return write_out(fname, out, result, "writeback")


def argmax(a: ArrayLike, axis: int | None = None, out: Any = None, *, keepdims: bool = False):
    """Index of the maximum along `axis` (of the flattened array if None), as `numpy.argmax`.

    The first occurrence wins; the result is int64.
    """
    if out is None:
        found = _host_arg_extremum(np.ndarray.argmax, a, axis, keepdims)
        if found is not None:
            return found
    return _argmax(a, axis, out, keepdims=keepdims)


@fuse_eagerly
def _argmax(a: ArrayLike, axis: int | None, out: Any, *, keepdims: bool) -> Array:
    return _arg_extremum("argmax", lax.argmax, a, axis, out, keepdims)


def argmin(a: ArrayLike, axis: int | None = None, out: Any = None, *, keepdims: bool = False):
    """Index of the minimum along `axis` (of the flattened array if None), as `numpy.argmin`.

    The first occurrence wins; the result is int64.
    """
    if out is None:
        found = _host_arg_extremum(np.ndarray.argmin, a, axis, keepdims)
        if found is not None:
            return found
    return _argmin(a, axis, out, keepdims=keepdims)


@fuse_eagerly
def _argmin(a: ArrayLike, axis: int | None, out: Any, *, keepdims: bool) -> Array:
    return _arg_extremum("argmin", lax.argmin, a, axis, out, keepdims)


# --- all, any -------------------------------------------------------------------------------


def _logical(
    fname: str,
    reducer: Callable[[Array, tuple[int, ...]], Array],
    identity: bool,
    a: ArrayLike,
    axis: Axis,
    out: Any,
    keepdims: bool,
    where: ArrayLike,
) -> Array:
    x = asarray_arg(fname, a)
    axes = _reduced_axes(fname, axis, x.ndim, ufunc=True)
    mask = _where_mask(fname, where, x.shape)
    x = lax.convert_element_type(x, _BOOL)
    if mask is not None:
        x = lax.select_n(mask, lax.full(x.shape, identity, _BOOL), x)
    return write_out(fname, out, _finish(_reduce(reducer, x, axes), axes, keepdims))


@fuse_eagerly
def all(  # noqa: A001  (NumPy's name)
    a: ArrayLike,
    axis: Axis = None,
    out: Any = None,
    keepdims: bool = False,
    *,
    where: ArrayLike = True,
) -> Array:
    """Whether all elements along `axis` are true (nonzero), as `numpy.all`."""
    return _logical("all", lax.reduce_and, True, a, axis, out, keepdims, where)


@fuse_eagerly
def any(  # noqa: A001  (NumPy's name)
    a: ArrayLike,
    axis: Axis = None,
    out: Any = None,
    keepdims: bool = False,
    *,
    where: ArrayLike = True,
) -> Array:
    """Whether any element along `axis` is true (nonzero), as `numpy.any`."""
    return _logical("any", lax.reduce_or, False, a, axis, out, keepdims, where)
