"""Numerical calculus on sampled data: `trapezoid` (integration) and `gradient` (central
differences), as NumPy computes them, from slices and elementwise arithmetic.

Both follow NumPy's formulas operation by operation, so results agree with NumPy up to
rounding in every dtype; they are linear in the samples and differentiable in the spacing.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from mjcore.array import Array as _Array
from mjcore.core import Tracer
from mjnp import _elementwise as ew
from mjnp._indexing import getitem
from mjnp._joining import concatenate
from mjnp._manipulation import astype, normalize_axes, reject_bool_axis, reshape
from mjnp._promotion import asarray_arg
from mjnp._reductions import sum as _sum
from mjnp._sums_products_differences import diff

ArrayLike = Any
Array = Any

_FLOAT64 = np.dtype("float64")


def _along(ndim: int, axis: int, index: slice) -> tuple[slice, ...]:
    """An index tuple taking `index` on `axis` and everything on the other axes."""
    return (slice(None),) * axis + (index,) + (slice(None),) * (ndim - axis - 1)


def _ndim(x: Any) -> int:
    return x.ndim if isinstance(x, _Array | Tracer) else np.ndim(x)


def _at(f: Array, axis: int, i: int) -> Array:
    """`f[..., i, ...]` on `axis`, keeping the axis (length 1); IndexError as NumPy's."""
    size = f.shape[axis]
    if not -size <= i < size:
        raise IndexError(
            f"mjnp.gradient: index {i} is out of bounds for axis {axis} with size {size}"
        )
    i %= size
    return getitem(f, _along(f.ndim, axis, slice(i, i + 1)))


def trapezoid(
    y: ArrayLike, x: ArrayLike | None = None, dx: ArrayLike = 1.0, axis: int = -1
) -> Array:
    """Integrate `y` along `axis` with the composite trapezoidal rule, as `numpy.trapezoid`.

    `x` gives the sample points (1-D along `axis`, or shaped like `y`); otherwise they are
    `dx` apart.

    Raises:
        IndexError: if `axis` is out of range for `y` (NumPy raises IndexError here too).
        ValueError: if the spacing does not broadcast against `y`.
    """
    y = asarray_arg("trapezoid", y)
    nd = y.ndim
    reject_bool_axis("mjnp.trapezoid", axis)  # NumPy's final sum(axis) rejects a bool
    axis = operator.index(axis)
    if not -nd <= axis < nd:
        raise IndexError(
            f"mjnp.trapezoid: axis {axis} is out of range for y of shape {y.shape}; "
            f"use an axis in [{-nd}, {nd})"
        )
    axis %= nd
    if x is None:
        d = dx
    else:
        x = asarray_arg("trapezoid", x)
        if x.ndim == 1:
            d = diff(x)
            d = reshape(d, tuple(d.shape[0] if i == axis else 1 for i in range(nd)))
        else:
            d = diff(x, axis=axis)
    upper = getitem(y, _along(nd, axis, slice(1, None)))
    lower = getitem(y, _along(nd, axis, slice(None, -1)))
    d_shape = np.shape(d) if not hasattr(d, "shape") else d.shape
    try:
        np.broadcast_shapes(d_shape, upper.shape)
    except ValueError as err:
        raise ValueError(
            f"mjnp.trapezoid: the spacing of shape {d_shape} (from x or dx) does not broadcast "
            f"against y of shape {y.shape} along axis {axis} (differences of shape "
            f"{upper.shape}); give x of length {y.shape[axis]} or shaped like y"
        ) from err
    # NumPy's order of operations: d * (y[1:] + y[:-1]) / 2.0, then the sum.
    return _sum(ew.divide(ew.multiply(d, ew.add(upper, lower)), 2.0), axis)


def _spacing(f: Array, axis: int, distances: Any) -> Any:
    """One axis's spacing as NumPy keeps it: a scalar, or the differences of coordinates.

    Concrete coordinates with equal differences become NumPy's scalar (the uniform formula,
    bit for bit as NumPy); traced ones keep the general formula, which is the same function.
    """
    if _ndim(distances) == 0:
        return distances
    distances = asarray_arg("gradient", distances)
    if distances.ndim != 1:
        raise ValueError(
            f"mjnp.gradient: distances must be either scalars or 1d, got an array of shape "
            f"{distances.shape} for axis {axis}"
        )
    if distances.shape[0] != f.shape[axis]:
        raise ValueError(
            "mjnp.gradient: when 1d, distances must match the length of the corresponding "
            f"dimension: got {distances.shape[0]} coordinates for axis {axis} of length "
            f"{f.shape[axis]}"
        )
    if distances.dtype.kind in "iu":
        distances = astype(distances, _FLOAT64)  # no modular arithmetic in the differences
    if not isinstance(distances, Tracer):
        host = np.diff(np.asarray(distances))
        if host.size == 0:
            raise IndexError(
                f"mjnp.gradient: index 0 is out of bounds for axis 0 with size 0 (one coordinate "
                f"for axis {axis}: at least two samples are needed)"
            )
        if (host == host[0]).all():
            return host[0]
    return diff(distances)


def _second_order_interior(f: Array, axis: int, ax_dx: Any, uniform: bool) -> Array:
    nd = f.ndim
    before = getitem(f, _along(nd, axis, slice(None, -2)))
    middle = getitem(f, _along(nd, axis, slice(1, -1)))
    after = getitem(f, _along(nd, axis, slice(2, None)))
    if uniform:
        return ew.divide(ew.subtract(after, before), ew.multiply(2.0, ax_dx))
    dx1 = getitem(ax_dx, slice(0, -1))
    dx2 = getitem(ax_dx, slice(1, None))
    a = ew.divide(ew.negative(dx2), ew.multiply(dx1, ew.add(dx1, dx2)))
    b = ew.divide(ew.subtract(dx2, dx1), ew.multiply(dx1, dx2))
    c = ew.divide(dx1, ew.multiply(dx2, ew.add(dx1, dx2)))
    shape = tuple(-1 if i == axis else 1 for i in range(nd))
    a, b, c = (reshape(t, shape) for t in (a, b, c))
    return ew.add(ew.add(ew.multiply(a, before), ew.multiply(b, middle)), ew.multiply(c, after))


def _three_point(f: Array, axis: int, starts: tuple[int, int, int], coefs: tuple[Any, ...]):
    """`a * f[i] + b * f[j] + c * f[k]` along `axis`, keeping the axis (length 1)."""
    terms = [ew.multiply(coef, _at(f, axis, i)) for i, coef in zip(starts, coefs, strict=True)]
    return ew.add(ew.add(terms[0], terms[1]), terms[2])


def _edges(f: Array, axis: int, ax_dx: Any, uniform: bool, edge_order: int) -> tuple[Array, Array]:
    def at(i: int) -> Array:
        return _at(f, axis, i)

    if edge_order == 1:
        dx_0 = ax_dx if uniform else getitem(ax_dx, 0)
        dx_n = ax_dx if uniform else getitem(ax_dx, -1)
        return (
            ew.divide(ew.subtract(at(1), at(0)), dx_0),
            ew.divide(ew.subtract(at(-1), at(-2)), dx_n),
        )
    if uniform:
        first = (ew.divide(-1.5, ax_dx), ew.divide(2.0, ax_dx), ew.divide(-0.5, ax_dx))
        last = (ew.divide(0.5, ax_dx), ew.divide(-2.0, ax_dx), ew.divide(1.5, ax_dx))
    else:
        dx1, dx2 = getitem(ax_dx, 0), getitem(ax_dx, 1)
        first = (
            ew.divide(
                ew.negative(ew.add(ew.multiply(2.0, dx1), dx2)),
                ew.multiply(dx1, ew.add(dx1, dx2)),
            ),
            ew.divide(ew.add(dx1, dx2), ew.multiply(dx1, dx2)),
            ew.divide(ew.negative(dx1), ew.multiply(dx2, ew.add(dx1, dx2))),
        )
        dx1, dx2 = getitem(ax_dx, -2), getitem(ax_dx, -1)
        last = (
            ew.divide(dx2, ew.multiply(dx1, ew.add(dx1, dx2))),
            ew.divide(ew.negative(ew.add(dx2, dx1)), ew.multiply(dx1, dx2)),
            ew.divide(ew.add(ew.multiply(2.0, dx2), dx1), ew.multiply(dx2, ew.add(dx1, dx2))),
        )
    return _three_point(f, axis, (0, 1, 2), first), _three_point(f, axis, (-3, -2, -1), last)


def gradient(
    f: ArrayLike, *varargs: ArrayLike, axis: int | Sequence[int] | None = None, edge_order: int = 1
) -> Array | tuple[Array, ...]:
    """The gradient of sampled `f`, as `numpy.gradient`: second-order central differences
    inside, first- or second-order (`edge_order`) one-sided differences at the ends.

    `varargs` gives the spacing: nothing (1), one scalar for every axis, or one scalar or 1-D
    coordinate array per axis (non-uniform spacing). Returns one array for a single axis, else
    a tuple with one array per axis. The result dtype is `f`'s if inexact, else float64.

    NB: NumPy switches coordinates with equal differences to its uniform formula; mjnp does so
    for concrete coordinates, and uses the general formula (equal up to rounding) for traced
    ones, so the derivative with respect to the coordinates is the general formula's.

    Raises:
        TypeError: for a wrong number of spacings, or boolean `f` (NumPy cannot subtract them).
        ValueError: for an axis shorter than `edge_order + 1`, `edge_order` above 2, or
            coordinates that are not 1-D or do not match the axis length.
    """
    f = asarray_arg("gradient", f)
    nd = f.ndim
    axes = tuple(range(nd)) if axis is None else normalize_axes("mjnp.gradient", axis, nd)
    n = len(varargs)
    if n == 0:
        dx: list[Any] = [1.0] * len(axes)
    elif n == 1 and _ndim(varargs[0]) == 0:
        dx = list(varargs) * len(axes)
    elif n == len(axes):
        dx = [_spacing(f, ax, d) for ax, d in zip(axes, varargs, strict=True)]
    else:
        raise TypeError(
            f"mjnp.gradient: invalid number of arguments: got {n} spacings for {len(axes)} "
            "axes; give none, one scalar, or one scalar or 1-D array per axis"
        )
    if edge_order > 2:
        raise ValueError(
            f"mjnp.gradient: 'edge_order' greater than 2 not supported, got {edge_order}"
        )
    otype = f.dtype
    if otype.kind not in "fc":
        if otype.kind in "iu":
            f = astype(f, _FLOAT64)  # no modular arithmetic in the differences
        otype = _FLOAT64  # NB: boolean f stays boolean, and subtracting raises as in NumPy
    outvals = []
    for ax, ax_dx in zip(axes, dx, strict=True):
        if f.shape[ax] < edge_order + 1:
            raise ValueError(
                "mjnp.gradient: Shape of array too small to calculate a numerical gradient, at "
                f"least (edge_order + 1) elements are required: axis {ax} of shape {f.shape} "
                f"has {f.shape[ax]}, edge_order is {edge_order}"
            )
        uniform = _ndim(ax_dx) == 0
        interior = _second_order_interior(f, ax, ax_dx, uniform)
        first, last = _edges(f, ax, ax_dx, uniform, edge_order)
        pieces = [astype(p, otype) for p in (first, interior, last)]
        outvals.append(concatenate(pieces, axis=ax))
    if len(axes) == 1:
        return outvals[0]
    return tuple(outvals)
