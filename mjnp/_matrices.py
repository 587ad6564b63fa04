"""NumPy's "building matrices" routines: `tri`, `tril`, `triu`, `diag`, `diagflat` and `vander`.

Sizes and offsets are static; values (`v` in `diag`, `x` in `vander`) may be traced and are
differentiable.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from mjcore import lax
from mjcore.dtypes import DTypeLike
from mjnp._creation import _dtype, _size
from mjnp._host_numpy import LAPACK_ELEMENTS, lapack_values, wrap
from mjnp._manipulation import asarray_strong, ravel

ArrayLike = Any
Array = Any

_INT64 = np.dtype("int64")


def _tri_mask(rows: int, cols: int, k: int) -> Array:
    """Boolean (rows, cols): True on and below diagonal `k`."""
    row = lax.broadcasted_iota(_INT64, (rows, cols), 0)
    col = lax.broadcasted_iota(_INT64, (rows, cols), 1)
    return lax.ge(lax.add(row, lax.full((), k, _INT64)), col)


def tri(
    N: int,  # noqa: N803  (NumPy's argument name)
    M: int | None = None,  # noqa: N803  (NumPy's argument name)
    k: int = 0,
    dtype: DTypeLike = float,
    *,
    like: None = None,
) -> Array:
    """Ones at and below diagonal `k`, zeros above, as `numpy.tri`."""
    rows = _size("tri", "N", N)
    cols = rows if M is None else _size("tri", "M", M)
    rows, cols = max(rows, 0), max(cols, 0)  # as NumPy's arange(N): negative sizes are empty
    mask = _tri_mask(rows, cols, operator.index(k))
    return lax.convert_element_type(mask, _dtype("tri", dtype))


def _masked(fname: str, m: ArrayLike, k: int, lower: bool) -> Array:
    if type(k) is int:
        vals = lapack_values(m)
        # eagerly on the CPU, NumPy's own function (`mjnp._host_numpy`)
        # (a vector's result is a square matrix: bounded as the operands are)
        if vals is not None:
            ndim = vals[0].ndim
            if ndim > 1 or ndim == 1 and vals[0].size ** 2 <= LAPACK_ELEMENTS:
                return wrap((np.tril if lower else np.triu)(vals[0], k))
    m = asarray_strong(fname, m)
    if m.ndim == 0:
        raise TypeError(f"mjnp.{fname}: input must be at least 1-d, got a 0-d array")
    rows, cols = m.shape[-2:] if m.ndim >= 2 else (m.shape[0], m.shape[0])
    k = operator.index(k)
    mask = _tri_mask(rows, cols, k) if lower else lax.bitwise_not(_tri_mask(rows, cols, k - 1))
    shape = (*m.shape[:-2], rows, cols)
    m = lax.broadcast_to(m, shape)
    mask = lax.broadcast_to(mask, shape)
    return lax.select_n(mask, lax.full(shape, 0, m.dtype), m)


def tril(m: ArrayLike, k: int = 0) -> Array:
    """Zero the elements above diagonal `k` of the last two axes, as `numpy.tril`."""
    return _masked("tril", m, k, lower=True)


def triu(m: ArrayLike, k: int = 0) -> Array:
    """Zero the elements below diagonal `k` of the last two axes, as `numpy.triu`."""
    return _masked("triu", m, k, lower=False)


def diag(v: ArrayLike, k: int = 0) -> Array:
    """The `k`-th diagonal of a 2-d array, or a 2-d array with 1-d `v` on it, as `numpy.diag`."""
    if type(k) is int:
        vals = lapack_values(v)
        small = vals is not None and (vals[0].size + abs(k)) ** 2 <= LAPACK_ELEMENTS
        if vals is not None and (vals[0].ndim == 2 or vals[0].ndim == 1 and small):
            value = vals[0]
            # NumPy's diagonal of a matrix is a view of it (`np.diag` calls the method): mjnp's
            # is a new array
            return wrap(value.diagonal(k).copy() if value.ndim == 2 else np.diag(value, k))
    v = asarray_strong("diag", v)
    k = operator.index(k)
    if v.ndim == 1:
        n = v.shape[0] + abs(k)
        if v.shape[0] == 0 or n == 0:
            return lax.full((n, n), 0, v.dtype)
        # In the flattened (n, n) result the diagonal has stride n + 1: pad between elements.
        start = k if k >= 0 else -k * n
        length = v.shape[0] + (v.shape[0] - 1) * n
        flat = lax.pad(v, lax.full((), 0, v.dtype), [(start, n * n - start - length, n)])
        return lax.reshape(flat, (n, n))
    if v.ndim == 2:
        rows, cols = v.shape
        length = max(0, min(rows, cols - k) if k >= 0 else min(rows + k, cols))
        if length == 0:
            return lax.full((0,), 0, v.dtype)
        start = k if k >= 0 else -k * cols
        flat = lax.reshape(v, (rows * cols,))
        stop = start + (length - 1) * (cols + 1) + 1
        return lax.slice(flat, (start,), (stop,), (cols + 1,))
    raise ValueError(f"mjnp.diag: Input must be 1- or 2-d, got shape {v.shape}")


def diagflat(v: ArrayLike, k: int = 0) -> Array:
    """A 2-d array with the flattened `v` on diagonal `k`, as `numpy.diagflat`."""
    return diag(ravel(asarray_strong("diagflat", v)), k)


def vander(x: ArrayLike, N: int | None = None, increasing: bool = False) -> Array:  # noqa: N803
    """The Vandermonde matrix of `x` (columns are powers of `x`), as `numpy.vander`.

    The powers are running products, `x**3 == (x * x) * x`, in the order NumPy computes them.
    """
    x = asarray_strong("vander", x)
    if x.ndim != 1:
        raise ValueError("mjnp.vander: x must be a one-dimensional array or sequence.")
    cols = x.shape[0] if N is None else _size("vander", "N", N)
    if cols < 0:
        raise ValueError(f"mjnp.vander: negative dimensions are not allowed, got N={cols}")
    dt = np.promote_types(x.dtype, _INT64)
    x = lax.convert_element_type(x, dt)
    powers = []
    for i in range(cols):
        if i == 0:
            powers.append(lax.full(x.shape, 1, dt))
        elif i == 1:
            powers.append(x)
        else:
            powers.append(lax.mul(powers[-1], x))
    if not increasing:
        powers.reverse()
    if not powers:
        return lax.full((x.shape[0], 0), 0, dt)
    return lax.concatenate([lax.expand_dims(p, (1,)) for p in powers], 1)
