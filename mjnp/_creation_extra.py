"""More creation routines: triangles and diagonals, grids, log-spaced ranges, windows, indices.

The companions of `_creation`: NumPy's "array creation routines" (building matrices, numerical
ranges, grids), its window functions, and the index generators of "indexing routines" (tril_indices,
diag_indices, ix_, ...). Sizes and offsets are static; values (`v` in `diag`, `start` in
`logspace`, `beta` in `kaiser`) may be traced and are differentiable.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mjcore import core, lax
from mjcore.array import Array as _Array
from mjcore.core import Tracer
from mjcore.dtypes import DTypeLike, canonicalize_dtype
from mjnp import _elementwise as ew
from mjnp._bessel import i0
from mjnp._creation import asarray, linspace
from mjnp._function_objects import c_function
from mjnp._manipulation import asarray_strong, moveaxis, new_handle, ravel

ArrayLike = Any
Array = Any

_BOOL = np.dtype(bool)
_INT64 = np.dtype("int64")
_FLOAT64 = np.dtype("float64")


def _dtype(fname: str, dtype: DTypeLike) -> np.dtype:
    return canonicalize_dtype(dtype, f"mjnp.{fname}")


def _size(fname: str, argname: str, n: Any) -> int:
    try:
        return operator.index(core.concrete_or_error(n, f"mjnp.{fname}({argname}=...)"))
    except TypeError as err:
        raise TypeError(f"mjnp.{fname}: {argname} must be an integer, got {n!r:.80}") from err


# --- triangles and diagonals ----------------------------------------------------------------


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


def indices(
    dimensions: Sequence[int], dtype: DTypeLike = int, sparse: bool = False
) -> Array | tuple[Array, ...]:
    """An array of the indices of a grid (or one index array per axis), as `numpy.indices`."""
    dims = tuple(operator.index(d) for d in dimensions)
    dt = _dtype("indices", dtype)
    n = len(dims)
    grids = []
    for i, d in enumerate(dims):
        shape = tuple(d if j == i else 1 for j in range(n))
        idx = lax.reshape(lax.iota(dt, d), shape)
        grids.append(idx if sparse else lax.broadcast_to(idx, dims))
    if sparse:
        return tuple(grids)
    if not grids:
        return lax.full((0,), 0, dt)
    return lax.concatenate([lax.expand_dims(g, (0,)) for g in grids], 0)


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


# --- conversions ----------------------------------------------------------------------------


@c_function  # as NumPy's builtin: does not bind as a method
def asanyarray(
    a: ArrayLike,
    dtype: DTypeLike | None = None,
    order: str | None = None,
    *,
    device: Any = None,
    copy: bool | None = None,
    like: None = None,
) -> Array:
    """`asarray`: mjnp has no array subclasses, as `numpy.asanyarray`."""
    return asarray(a, dtype, order, device=device, copy=copy, like=like)


@c_function  # as NumPy's builtin: does not bind as a method
def ascontiguousarray(a: ArrayLike, dtype: DTypeLike | None = None, *, like: None = None) -> Array:
    """`asarray` with at least one dimension, as `numpy.ascontiguousarray`."""
    x = asarray(a, dtype, like=like)
    return lax.reshape(x, (1,)) if x.ndim == 0 else x


def asarray_chkfinite(
    a: ArrayLike, dtype: DTypeLike | None = None, order: str | None = None
) -> Array:
    """`asarray`, raising ValueError for infs and NaNs, as `numpy.asarray_chkfinite`.

    The check needs concrete values; it raises ConcretizationTypeError under `jit`.
    """
    x = asarray(a, dtype, order)
    if x.dtype.kind in "fc":
        host = np.asarray(core.concrete_or_error(x, "mjnp.asarray_chkfinite"))
        if not np.isfinite(host).all():
            raise ValueError("mjnp.asarray_chkfinite: array must not contain infs or NaNs")
    return x


_REQUIREMENTS = {
    "C": "C",
    "C_CONTIGUOUS": "C",
    "CONTIGUOUS": "C",
    "F": "F",
    "F_CONTIGUOUS": "F",
    "FORTRAN": "F",
    "A": "A",
    "ALIGNED": "A",
    "W": "W",
    "WRITEABLE": "W",
    "O": "O",
    "OWNDATA": "O",
    "E": "E",
    "ENSUREARRAY": "E",
}


def require(
    a: ArrayLike,
    dtype: DTypeLike | None = None,
    requirements: Any = None,
    *,
    like: None = None,
) -> Array:
    """`asarray(a, dtype)` after checking the requirement flags, as `numpy.require`.

    NB: mjnp arrays are immutable, aligned and C-ordered; 'F' and 'W' cannot be met and raise
    ValueError.
    """
    if requirements is None:
        reqs: set[str] = set()
    else:
        items = [requirements] if isinstance(requirements, str) else list(requirements)
        try:
            reqs = {_REQUIREMENTS[r.upper()] for r in items}
        except KeyError as err:
            raise KeyError(f"mjnp.require: unknown requirement {err.args[0]!r}") from err
    for flag, name in (("F", "Fortran order"), ("W", "writeable")):
        if flag in reqs:
            raise ValueError(f"mjnp.require: mjnp arrays cannot be made {name}")
    return asarray(a, dtype, like=like)


@c_function  # as NumPy's builtin: does not bind as a method
def frombuffer(
    buffer: Any, dtype: DTypeLike = float, count: int = -1, offset: int = 0, *, like: None = None
) -> Array:
    """A 1-d array from the bytes of `buffer`, decoded by NumPy, as `numpy.frombuffer`."""
    return asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset), like=like)


@c_function  # as NumPy's builtin: does not bind as a method
def fromiter(iter: Any, dtype: DTypeLike, count: int = -1, *, like: None = None) -> Array:  # noqa: A002
    """A 1-d array from an iterable, collected by NumPy, as `numpy.fromiter`."""
    return asarray(np.fromiter(iter, dtype=dtype, count=count), like=like)


@c_function  # as NumPy's builtin: does not bind as a method
def fromstring(
    string: str | bytes,
    dtype: DTypeLike = float,
    count: int = -1,
    *,
    sep: str = "",
    like: None = None,
) -> Array:
    """A 1-d array from text data, parsed by NumPy, as `numpy.fromstring`."""
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep), like=like)


# --- window functions -----------------------------------------------------------------------


def _window_positions(fname: str, M: Any) -> tuple[float, np.ndarray | None]:  # noqa: N803
    """M as a float (NumPy's window argument) and the positions arange(1 - M, M, 2)."""
    m = float(np.asarray(core.concrete_or_error(M, f"mjnp.{fname}(M=...)")))
    if m < 1 or m == 1:
        return m, None
    return m, np.arange(1 - m, m, 2)


def _small_window(m: float) -> Array:
    return lax.full((0,) if m < 1 else (1,), 1.0, _FLOAT64)


def bartlett(M: int) -> Array:  # noqa: N803  (NumPy's argument name)
    """The Bartlett (triangular) window of `M` points, as `numpy.bartlett`."""
    m, n = _window_positions("bartlett", M)
    if n is None:
        return _small_window(m)
    n = asarray(n)
    ratio = ew.true_divide(n, m - 1)
    return ew.where(ew.less_equal(n, 0), ew.add(1, ratio), ew.subtract(1, ratio))


def _cosine_window(fname: str, M: Any, coeffs: tuple[float, ...]) -> Array:  # noqa: N803
    m, n = _window_positions(fname, M)
    if n is None:
        return _small_window(m)
    phase = ew.true_divide(ew.multiply(np.pi, asarray(n)), m - 1)
    out = asarray(coeffs[0])
    for i, c in enumerate(coeffs[1:], start=1):
        out = ew.add(out, ew.multiply(c, ew.cos(ew.multiply(float(i), phase) if i > 1 else phase)))
    return out


def blackman(M: int) -> Array:  # noqa: N803  (NumPy's argument name)
    """The Blackman window of `M` points, as `numpy.blackman`."""
    return _cosine_window("blackman", M, (0.42, 0.5, 0.08))


def hamming(M: int) -> Array:  # noqa: N803  (NumPy's argument name)
    """The Hamming window of `M` points, as `numpy.hamming`."""
    return _cosine_window("hamming", M, (0.54, 0.46))


def hanning(M: int) -> Array:  # noqa: N803  (NumPy's argument name)
    """The Hann window of `M` points, as `numpy.hanning`."""
    return _cosine_window("hanning", M, (0.5, 0.5))


def kaiser(M: int, beta: ArrayLike) -> Array:  # noqa: N803  (NumPy's argument name)
    """The Kaiser window of `M` points and shape `beta`, as `numpy.kaiser`.

    `beta` may be traced (the window is differentiable in it); `M` is static.
    """
    m = float(np.asarray(core.concrete_or_error(M, "mjnp.kaiser(M=...)")))
    beta = lax.convert_element_type(asarray(beta), _FLOAT64)
    if m == 1:
        return lax.full((1,), 1.0, _FLOAT64)
    n = np.arange(0, m)
    if n.size == 0:
        return lax.full((0,), 0.0, _FLOAT64)
    alpha = (m - 1) / 2.0
    ratio = asarray((n - alpha) / alpha)
    arg = ew.multiply(beta, ew.sqrt(ew.subtract(1.0, ew.multiply(ratio, ratio))))
    # One evaluation of the series for the numerators and the denominator.
    both = i0(lax.concatenate([arg, lax.reshape(beta, (1,))], 0))
    size = arg.shape[0]
    return ew.true_divide(lax.slice(both, (0,), (size,)), lax.slice(both, (size,), (size + 1,)))


# --- index generators -----------------------------------------------------------------------


def _host_indices(values: tuple[np.ndarray, ...]) -> tuple[Array, ...]:
    return tuple(asarray(v) for v in values)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """Row and column indices of the lower triangle, as `numpy.tril_indices`."""
    return _host_indices(np.tril_indices(n, k, m))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """Row and column indices of the upper triangle, as `numpy.triu_indices`."""
    return _host_indices(np.triu_indices(n, k, m))


def _shape_of(fname: str, arr: ArrayLike) -> tuple[int, ...]:
    if isinstance(arr, _Array | Tracer):
        return tuple(arr.shape)
    return tuple(asarray_strong(fname, arr).shape)


def tril_indices_from(arr: ArrayLike, k: int = 0) -> tuple[Array, Array]:
    """`tril_indices` for the shape of a 2-d `arr`, as `numpy.tril_indices_from`."""
    shape = _shape_of("tril_indices_from", arr)
    if len(shape) != 2:
        raise ValueError(f"mjnp.tril_indices_from: input array must be 2-d, got shape {shape}")
    return tril_indices(shape[-2], k=k, m=shape[-1])


def triu_indices_from(arr: ArrayLike, k: int = 0) -> tuple[Array, Array]:
    """`triu_indices` for the shape of a 2-d `arr`, as `numpy.triu_indices_from`."""
    shape = _shape_of("triu_indices_from", arr)
    if len(shape) != 2:
        raise ValueError(f"mjnp.triu_indices_from: input array must be 2-d, got shape {shape}")
    return triu_indices(shape[-2], k=k, m=shape[-1])


def diag_indices(n: int, ndim: int = 2) -> tuple[Array, ...]:
    """Indices of the main diagonal of an `ndim`-d array of side `n`, as `numpy.diag_indices`."""
    return _host_indices(np.diag_indices(n, ndim))


def diag_indices_from(arr: ArrayLike) -> tuple[Array, ...]:
    """`diag_indices` for the shape of `arr`, as `numpy.diag_indices_from`."""
    shape = _shape_of("diag_indices_from", arr)
    if len(shape) < 2:
        raise ValueError("mjnp.diag_indices_from: input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError(
            f"mjnp.diag_indices_from: All dimensions of input must be of equal length, got {shape}"
        )
    return diag_indices(shape[0], len(shape))


def mask_indices(n: int, mask_func: Callable[..., Any], k: int = 0) -> tuple[Array, ...]:
    """Indices where `mask_func(ones((n, n)), k)` is nonzero, as `numpy.mask_indices`.

    `mask_func` is called on an mjnp array (e.g. `mjnp.triu`); its result must be concrete.
    """
    ones = lax.full((operator.index(n),) * 2, 1, _INT64)
    mask = np.asarray(core.concrete_or_error(asarray(mask_func(ones, k)), "mjnp.mask_indices"))
    return _host_indices(np.nonzero(mask != 0))


def ix_(*args: ArrayLike) -> tuple[Array, ...]:
    """Open-mesh index arrays from 1-d sequences, as `numpy.ix_`.

    Boolean sequences become the indices of their True entries, so they must be concrete.
    """
    nd = len(args)
    out = []
    for k, a in enumerate(args):
        new = asarray_strong("ix_", a)
        if new.size == 0 and not isinstance(a, _Array | Tracer | np.ndarray):
            new = lax.convert_element_type(new, _INT64)
        if new.ndim != 1:
            raise ValueError("mjnp.ix_: Cross index must be 1 dimensional")
        if new.dtype == _BOOL:
            host = np.asarray(core.concrete_or_error(new, "mjnp.ix_"))
            new = asarray(np.nonzero(host)[0])
        out.append(lax.reshape(new, (1,) * k + (new.shape[0],) + (1,) * (nd - k - 1)))
    return tuple(out)
