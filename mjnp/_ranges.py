"""NumPy's numerical ranges beyond `arange` and `linspace` (`logspace`, `geomspace`), the
coordinate grids of `meshgrid`, and `fromfunction` over the index grid of `indices`.

Sizes are static; values (`start` and `stop` of `logspace`, the vectors of `meshgrid`) may be
traced and are differentiable. `indices`, `mgrid`, `ogrid` and the other index generators are in
`mjnp._index_tricks`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mjcore import core, lax
from mjcore.core import Tracer
from mjcore.dispatch import is_eager_host
from mjcore.dtypes import DTypeLike
from mjnp import _elementwise as ew
from mjnp._creation import _dtype, linspace
from mjnp._host_numpy import host_value, wrap
from mjnp._index_tricks import indices
from mjnp._manipulation import asarray_strong, moveaxis, new_handle, ravel

ArrayLike = Any
Array = Any

_INT64 = np.dtype("int64")


# --- numerical ranges -----------------------------------------------------------------------


def logspace(
    start: ArrayLike,
    stop: ArrayLike,
    num: int = 50,
    endpoint: bool = True,
    base: ArrayLike = 10.0,
    dtype: DTypeLike | None = None,
    axis: int = 0,
) -> Array:
    """`base ** linspace(start, stop, num)`, as `numpy.logspace`."""
    if _python_reals(start, stop, base) and axis in (0, -1) and is_eager_host():
        # eagerly on CPU: NumPy's (the general path computes NumPy's steps)
        dt = np.float64 if dtype is None else _dtype("logspace", dtype)
        try:
            out = np.logspace(start, stop, num, endpoint, base, dt)
        except (TypeError, ValueError):
            out = None
        if out is not None:
            return wrap(out)
    if not isinstance(base, float | int) and np.ndim(base):
        shapes = [np.shape(a) for a in (start, stop, base)]
        ndmax = len(np.broadcast_shapes(*shapes))
        start, stop, base = (
            _ndmin(asarray_strong("logspace", a), ndmax) for a in (start, stop, base)
        )
        base = lax.expand_dims(base, (axis % (base.ndim + 1),))
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    out = ew.power(base, y)
    return out if dtype is None else lax.convert_element_type(out, _dtype("logspace", dtype))


def _python_reals(*args: Any) -> bool:
    """Whether every argument is a Python float or an int that a float64 holds exactly."""
    return all(type(a) is float or (type(a) is int and -(2**53) <= a <= 2**53) for a in args)


def _ndmin(x: Array, n: int) -> Array:
    return lax.reshape(x, (1,) * (n - x.ndim) + x.shape) if x.ndim < n else x


def geomspace(
    start: ArrayLike,
    stop: ArrayLike,
    num: int = 50,
    endpoint: bool = True,
    dtype: DTypeLike | None = None,
    axis: int = 0,
) -> Array:
    """Numbers spaced evenly on a log scale from `start` to `stop`, as `numpy.geomspace`.

    NB: the zero check (ValueError) needs concrete `start` and `stop`; traced ones skip it.
    """
    if _python_reals(start, stop) and start and stop and axis in (0, -1) and is_eager_host():
        # eagerly on CPU: NumPy's own
        dt = np.float64 if dtype is None else _dtype("geomspace", dtype)
        try:
            out = np.geomspace(start, stop, num, endpoint, dt)
        except (TypeError, ValueError):
            out = None
        if out is not None:
            return wrap(out)
    start = asarray_strong("geomspace", start)
    stop = asarray_strong("geomspace", stop)
    for v in (start, stop):
        if not isinstance(v, Tracer) or v.to_concrete_value() is not None:
            if np.any(np.asarray(core.concrete_or_error(v, "geomspace")) == 0):
                raise ValueError("mjnp.geomspace: Geometric sequence cannot include zero")
    num = operator.index(num)
    zero = np.zeros((), None if dtype is None else _dtype("geomspace", dtype))
    dt = np.result_type(start.dtype, stop.dtype, float(num), zero)
    out_dt = dt if dtype is None else _dtype("geomspace", dtype)
    start = lax.convert_element_type(start, dt)
    stop = lax.convert_element_type(stop, dt)
    out_sign = ew.sign(start)
    start = ew.true_divide(start, out_sign)
    stop = ew.true_divide(stop, out_sign)
    result = logspace(ew.log10(start), ew.log10(stop), num=num, endpoint=endpoint, dtype=dt)
    if num > 0:
        shape = result.shape
        index = lax.broadcasted_iota(_INT64, shape, 0)
        first = lax.eq(index, lax.full((), 0, _INT64))
        result = lax.select_n(first, result, lax.broadcast_to(start, shape))
        if num > 1 and endpoint:
            last = lax.eq(index, lax.full((), num - 1, _INT64))
            result = lax.select_n(last, result, lax.broadcast_to(stop, shape))
    result = ew.multiply(result, out_sign)
    if axis != 0:
        result = moveaxis(result, 0, axis)
    return lax.convert_element_type(result, out_dt)


# --- grids ----------------------------------------------------------------------------------


def meshgrid(
    *xi: ArrayLike, copy: bool = True, sparse: bool = False, indexing: str = "xy"
) -> tuple[Array, ...]:
    """Coordinate arrays from coordinate vectors, as `numpy.meshgrid`."""
    if indexing not in ("xy", "ij"):
        raise ValueError("mjnp.meshgrid: Valid values for `indexing` are 'xy' and 'ij'.")
    values = [host_value(x) for x in xi]
    if xi and all(v is not None for v in values):  # eagerly on CPU: NumPy's grids
        grids = np.meshgrid(*values, copy=copy, sparse=sparse, indexing=indexing)  # type: ignore[call-overload]
        return tuple(wrap(g) for g in grids)
    ndim = len(xi)
    outs = []
    for i, x in enumerate(xi):
        x = ravel(asarray_strong("meshgrid", x))
        shape = [1] * ndim
        shape[i] = x.shape[0]
        if indexing == "xy" and ndim > 1 and i < 2:
            shape[0], shape[1] = shape[1], shape[0]
        outs.append(lax.reshape(x, tuple(shape)))
    if not sparse and outs:
        full = np.broadcast_shapes(*(o.shape for o in outs))
        outs = [lax.broadcast_to(o, full) for o in outs]
    # New arrays, as NumPy's (the inputs themselves would follow a later write `g[i] = v`).
    return tuple(new_handle(o) if any(o is x for x in xi) else o for o in outs)


def fromfunction(
    function: Callable[..., Any],
    shape: Sequence[int],
    *,
    dtype: DTypeLike = float,
    like: None = None,
    **kwargs: Any,
) -> Any:
    """`function(*indices(shape, dtype), **kwargs)`, as `numpy.fromfunction`."""
    if like is not None:
        raise NotImplementedError("mjnp.fromfunction: like= is not supported")
    return function(*indices(shape, dtype=dtype), **kwargs)
