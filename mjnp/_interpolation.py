"""One-dimensional piecewise-linear interpolation: `interp`, as NumPy's compiled loop computes
it (including its NaN and infinity fallbacks), from `searchsorted`, gathers and `where`.

Differentiable in `x` (the slope of the segment; at a sample point, the slope to its right),
in `fp` and in `xp`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore import lax
from mjcore.array import Array as _Array
from mjcore.core import Tracer
from mjnp import _elementwise as ew
from mjnp._indexing import getitem
from mjnp._indexing_functions import searchsorted
from mjnp._joining import concatenate
from mjnp._manipulation import astype
from mjnp._promotion import asarray_arg
from mjnp._sorting import argsort

ArrayLike = Any
Array = Any

_FLOAT64 = np.dtype("float64")
_COMPLEX128 = np.dtype("complex128")


def _check_data_points(name: str, x: Array) -> None:
    """NumPy's checks for 1-D sample arrays, with its exception types."""
    if x.ndim == 0:
        raise ValueError(
            f"mjnp.interp: object of too small depth for desired array: {name} must be 1-D, "
            "got a 0-d array"
        )
    if x.ndim > 1:
        raise ValueError(
            f"mjnp.interp: object too deep for desired array: {name} must be 1-D, got shape "
            f"{x.shape}"
        )


def _real_coordinates(name: str, x: ArrayLike) -> Array:
    x = asarray_arg("interp", x)
    if x.dtype.kind == "c":
        raise TypeError(
            f"mjnp.interp: {name} must be real, got dtype {x.dtype}; pass its real part "
            f"(mjnp.real({name})) if that is what you mean"
        )
    return astype(x, _FLOAT64)


def _is_concrete_number(x: Any) -> bool:
    return not isinstance(x, _Array | Tracer)


def _segments(x: Array, xp: Array, fp: Array, lval: Any, rval: Any) -> Array:
    """NumPy's `arr_interp` loop for real `fp` with at least two sample points."""
    n = xp.shape[0]
    # The last sample point at or below x (-1 below xp[0]); NaN x sorts above everything.
    j = ew.subtract(searchsorted(xp, x, side="right"), 1)
    k = ew.clip(j, 0, n - 2)
    x_lo, x_hi = getitem(xp, k), getitem(xp, ew.add(k, 1))
    f_lo, f_hi = getitem(fp, k), getitem(fp, ew.add(k, 1))
    run = ew.subtract(x_hi, x_lo)
    # Segments that are used have x_lo <= x < x_hi, so run > 0; the others (repeated sample
    # points at the ends) get run 1 so that no NaN reaches a derivative through `where`.
    run = ew.where(ew.equal(run, 0), 1.0, run)
    slope = ew.divide(ew.subtract(f_hi, f_lo), run)
    res = ew.add(ew.multiply(slope, ew.subtract(x, x_lo)), f_lo)
    # NumPy's fallbacks for infinite values: interpolate from the right end, then take the
    # common value of a flat segment.
    res = ew.where(ew.isnan(res), ew.add(ew.multiply(slope, ew.subtract(x, x_hi)), f_hi), res)
    res = ew.where(ew.logical_and(ew.isnan(res), ew.equal(f_lo, f_hi)), f_lo, res)
    # At a sample point NumPy returns fp there; slope * 0 + fp already is, unless the slope is
    # not finite.
    at_point = ew.logical_and(ew.equal(x, x_lo), ew.logical_not(ew.isfinite(slope)))
    res = ew.where(at_point, f_lo, res)
    res = ew.where(ew.greater_equal(j, n - 1), getitem(fp, n - 1), res)
    res = ew.where(ew.greater(x, getitem(xp, n - 1)), rval, res)
    res = ew.where(ew.less(x, getitem(xp, 0)), lval, res)
    return ew.where(ew.isnan(x), np.nan, res)


def _single_point(x: Array, xp: Array, fp: Array, lval: Any, rval: Any) -> Array:
    """NumPy's rule for one sample point (NaN x gives fp[0])."""
    x0, f0 = getitem(xp, 0), getitem(fp, 0)
    return ew.where(ew.less(x, x0), lval, ew.where(ew.greater(x, x0), rval, f0))


def _interp_real(x: Array, xp: Array, fp: Array, left: Any, right: Any) -> Array:
    lval = getitem(fp, 0) if left is None else left
    rval = getitem(fp, -1) if right is None else right
    rule = _single_point if xp.shape[0] == 1 else _segments
    return astype(rule(x, xp, fp, lval, rval), _FLOAT64)


def _part(value: Any, part: Any) -> Any:
    return None if value is None else part(value)


def interp(
    x: ArrayLike,
    xp: ArrayLike,
    fp: ArrayLike,
    left: ArrayLike | None = None,
    right: ArrayLike | None = None,
    period: ArrayLike | None = None,
) -> Array:
    """Piecewise-linear interpolation of the points (`xp`, `fp`) at `x`, as `numpy.interp`.

    The result is float64 (complex128 for complex `fp`) and shaped like `x`. As in NumPy, `xp`
    must be increasing (not checked), or periodic with `period`.

    Raises:
        ValueError: for `xp` or `fp` that are not 1-D, empty or of different lengths, and for
            a zero `period`.
        TypeError: for complex `x` or `xp`.
    """
    fp = asarray_arg("interp", fp)
    work = _COMPLEX128 if fp.dtype.kind == "c" else _FLOAT64
    if period is not None:
        if _is_concrete_number(period) and period == 0:
            raise ValueError("mjnp.interp: period must be a non-zero value, got 0")
        period = ew.absolute(period)
        left = right = None
        x = _real_coordinates("x", x)
        xp = _real_coordinates("xp", xp)
        fp = astype(fp, work)
        if xp.ndim != 1 or fp.ndim != 1:
            raise ValueError(
                f"mjnp.interp: Data points must be 1-D sequences, got xp of shape {xp.shape} "
                f"and fp of shape {fp.shape}"
            )
        if xp.shape[0] != fp.shape[0]:
            raise ValueError(
                f"mjnp.interp: fp and xp are not of the same length ({fp.shape[0]} and "
                f"{xp.shape[0]})"
            )
        x = ew.remainder(x, period)
        xp = ew.remainder(xp, period)
        order = argsort(xp)
        xp, fp = getitem(xp, order), getitem(fp, order)
        xp = concatenate(
            (ew.subtract(getitem(xp, slice(-1, None)), period), xp,
             ew.add(getitem(xp, slice(0, 1)), period))
        )  # fmt: skip
        fp = concatenate((getitem(fp, slice(-1, None)), fp, getitem(fp, slice(0, 1))))
    _check_data_points("fp", fp)
    xp = asarray_arg("interp", xp)
    _check_data_points("xp", xp)
    xp = _real_coordinates("xp", xp)
    x = _real_coordinates("x", x)
    if xp.shape[0] == 0:
        raise ValueError("mjnp.interp: array of sample points is empty (xp has length 0)")
    if fp.shape[0] != xp.shape[0]:
        raise ValueError(
            f"mjnp.interp: fp and xp are not of the same length ({fp.shape[0]} and {xp.shape[0]})."
        )
    fp = astype(fp, work)
    if work == _FLOAT64:
        for name, value in (("left", left), ("right", right)):
            if value is not None and asarray_arg("interp", value).dtype.kind == "c":
                raise TypeError(
                    f"mjnp.interp: {name} must be real for real fp, got {value!r:.40}; pass a "
                    "real number, or complex fp"
                )
        return _interp_real(x, xp, fp, left, right)
    # NumPy interpolates the real and imaginary parts separately, each with its own fallbacks.
    real = _interp_real(x, xp, ew.real(fp), _part(left, ew.real), _part(right, ew.real))
    imag = _interp_real(x, xp, ew.imag(fp), _part(left, ew.imag), _part(right, ew.imag))
    return lax.complex(real, imag)
