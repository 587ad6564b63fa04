"""Counting and histograms: `bincount`, `histogram_bin_edges`, `histogram`, `histogram2d` and
`histogramdd`, as NumPy computes them, from comparisons, gathers and one scatter-add.

Bin indices are found as NumPy finds them (its uniform-bin formula with its one-ulp
corrections, or `searchsorted` on explicit edges), then counted with `scatter_add`, which drops
indices outside the result. So histograms work under `jit` and `vmap` whenever the number of
bins is static: an integer `bins` (with or without `range`) or an array of edges. Counts are
piecewise constant in the data; weighted counts are linear (differentiable) in the weights.

NB: results whose length depends on the data work eagerly only: `bincount` without `length=`
(an extension from JAX's numpy, for `jit`) and the string bin estimators ('auto', 'fd', ...),
whose bin count NumPy computes from the concrete data. Input checks that need values
(negative counts, non-finite ranges, monotonic edges) run when the values are concrete.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from mjcore import dtypes, lax
from mjcore.array import Array as _Array
from mjcore.core import Tracer, get_aval
from mjcore.errors import ConcretizationTypeError
from mjcore.lax.gather import ScatterDimensionNumbers, scatter_add
from mjnp import _elementwise as ew
from mjnp._creation import linspace, zeros
from mjnp._host_numpy import bare, host_values, wrap, wrap_own
from mjnp._host_stats import REJECTED, numpy_call_warning
from mjnp._indexing import getitem
from mjnp._indexing_functions import searchsorted
from mjnp._joining import atleast_2d
from mjnp._manipulation import astype, ravel, reshape, transpose
from mjnp._promotion import asarray_arg
from mjnp._reductions import max as _max
from mjnp._reductions import min as _min
from mjnp._reductions import sum as _sum
from mjnp._sums_products_differences import diff

ArrayLike = Any
Array = Any

_INT64 = np.dtype("int64")
_FLOAT64 = np.dtype("float64")
_COMPLEX128 = np.dtype("complex128")
_UINT8 = np.dtype("uint8")
# NumPy's bin-width estimators (numpy.histogram_bin_edges).
_ESTIMATORS = ("auto", "doane", "fd", "rice", "scott", "sqrt", "stone", "sturges")
_FLAT_SCATTER = ScatterDimensionNumbers((), (0,), (0,))


def _concrete(x: Any) -> Any:
    """The value of `x` as NumPy data, or None while it is traced."""
    if isinstance(x, Tracer):
        value = x.to_concrete_value()
        return None if value is None else np.asarray(value)
    return np.asarray(x) if isinstance(x, _Array) else x


def _is_array(x: Any) -> bool:
    return isinstance(x, _Array | Tracer)


def _ndim(x: Any) -> int:
    if _is_array(x):
        return x.ndim
    if isinstance(x, list | tuple):  # may hold traced arrays, which NumPy cannot look at
        return asarray_arg("histogram", x).ndim
    return np.ndim(x)


# --- bincount -------------------------------------------------------------------------------


def _count(indices: Array, weights: Array | None, length: int) -> Array:
    """Sums of `weights` (ones when None, as int64) per index in `[0, length)`; indices outside
    are dropped (XLA's scatter skips them)."""
    dtype = _INT64 if weights is None else get_aval(weights).dtype
    out = lax.full((length,), 0, dtype)
    if indices.shape[0] == 0 or length == 0:
        return out
    updates = lax.full(indices.shape, 1, dtype) if weights is None else weights
    positions = lax.reshape(astype(indices, _INT64), (indices.shape[0], 1))
    return scatter_add(out, positions, updates, _FLAT_SCATTER, mode="drop")


def _check_count_input(x: Array) -> None:
    if x.ndim == 0:
        raise ValueError(
            "mjnp.bincount: object of too small depth for desired array: x must be 1-D, got a "
            "0-d array"
        )
    if x.ndim > 1:
        raise ValueError(f"mjnp.bincount: x must be 1-D, got shape {x.shape}")
    if x.dtype.kind not in "biu":
        raise TypeError(
            f"mjnp.bincount: Cannot cast array data from dtype('{x.dtype}') to dtype('int64') "
            "according to the rule 'safe': x must hold non-negative integers; cast it with "
            ".astype(int)"
        )


def _count_weights(fname: str, weights: ArrayLike, x: Array) -> Array:
    weights = asarray_arg(fname, weights)
    if weights.dtype.kind == "c":
        raise TypeError(
            f"mjnp.{fname}: weights must be real (NumPy sums them as float64), got dtype "
            f"{weights.dtype}; count the real and imaginary parts separately"
        )
    if weights.shape != x.shape:
        raise ValueError(
            f"mjnp.{fname}: The weights and list don't have the same length: weights of "
            f"shape {weights.shape}, x of shape {x.shape}"
        )
    return astype(weights, _FLOAT64)


def bincount(
    x: ArrayLike,
    /,
    weights: ArrayLike | None = None,
    minlength: int = 0,
    *,
    length: int | None = None,
) -> Array:
    """Occurrences (or summed weights) of each non-negative integer in `x`, as
    `numpy.bincount`: int64 counts, or float64 sums of `weights`.

    The result has `max(x) + 1` entries (at least `minlength`), which depends on the values of
    `x`: under `jit` or `vmap` pass `length=` (an extension, as in JAX's numpy), the exact
    length of the result; values of `x` outside `[0, length)` are then dropped.

    Raises:
        ValueError: for negative values (when concrete), a negative `minlength`, `length`
            below `minlength`, `x` that is not 1-D, or weights of another length.
        TypeError: for non-integer `x`, complex weights, or `minlength=None`.
        ConcretizationTypeError: for traced `x` without `length=`.
    """
    if length is None and type(minlength) is int and minlength >= 0:
        found = _host_bincount(x, weights, minlength)
        if found is not None:
            return found
    empty_list = isinstance(x, list | tuple) and len(x) == 0
    x = asarray_arg("bincount", x)
    if empty_list:
        x = astype(x, _INT64)  # NumPy accepts an empty list as integers
    _check_count_input(x)
    if minlength is None:
        raise TypeError("mjnp.bincount: use 0 instead of None for minlength")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError(f"mjnp.bincount: 'minlength' must not be negative, got {minlength}")
    if length is not None:
        length = operator.index(length)
        if length < minlength:
            raise ValueError(
                f"mjnp.bincount: length={length} is below minlength={minlength}; pass only "
                "length (it is the exact length of the result)"
            )
    if x.shape[0] == 0:  # NumPy returns integer zeros here, and ignores the weights
        return lax.full((minlength if length is None else length,), 0, _INT64)
    if weights is not None:
        weights = _count_weights("bincount", weights, x)
    value = _concrete(x)
    if value is not None and value.min() < 0:
        raise ValueError(
            f"mjnp.bincount: 'list' argument must have no negative elements (found {value.min()})"
        )
    if length is None:
        if value is None:
            raise ConcretizationTypeError(
                "mjnp.bincount: the result has max(x) + 1 entries, which depends on the values "
                f"of the traced array x {get_aval(x).str_short()}. Pass length=<int> (the number "
                "of bins; larger values are dropped) to use bincount under jit or vmap."
            )
        length = max(minlength, int(value.max()) + 1)
    return _count(x, weights, length)


def _host_bincount(x: Any, weights: Any, minlength: int) -> Array | None:
    """`numpy.bincount` of the host values (a non-empty 1-D integer Array, real weights), or
    None where the general path runs (and raises where NumPy would)."""
    values = host_values(x) if weights is None else host_values(x, weights)
    if values is None:
        return None
    v = values[0]
    if v.ndim != 1 or v.dtype.kind not in "biu" or v.size == 0 or v.dtype == np.uint64:
        return None
    w = None
    if weights is not None:
        w = values[1]
        if w.shape != v.shape or dtypes.kind(w.dtype) not in "biuf":
            return None
    try:
        found = _numpy_bincount(v, w, minlength)
    except REJECTED:  # negative values: the general path raises mjnp's error
        return None
    return wrap(found)  # a new array


_numpy_bincount = bare(np.bincount)


# --- bin edges ------------------------------------------------------------------------------


def _ravel_and_check_weights(fname: str, a: ArrayLike, weights: ArrayLike | None):
    a = asarray_arg(fname, a)
    if a.dtype == np.bool_:
        warnings.warn(
            f"mjnp.{fname}: Converting input from bool to <class 'numpy.uint8'> for compatibility.",
            RuntimeWarning,
            stacklevel=3,
        )
        a = astype(a, _UINT8)
    if weights is not None:
        weights = asarray_arg(fname, weights)
        if weights.shape != a.shape:
            raise ValueError(
                f"mjnp.{fname}: weights should have the same shape as a (got {weights.shape} "
                f"and {a.shape})."
            )
        weights = ravel(weights)
    return ravel(a), weights


def _host_scalar(x: Any) -> Any:
    """A range value or data extremum as NumPy would see it: a Python or NumPy scalar when it is
    an eager array; tracers stay tracers (so edges keep their derivative)."""
    if isinstance(x, _Array):
        return np.asarray(x)[()]
    return x


def _scalar_value(x: Any) -> Any:
    """The concrete value of a scalar, or None while it is traced."""
    value = _concrete(x)
    return None if value is None else np.asarray(value)[()]


def _check_outer_edges(fname: str, first: Any, last: Any, supplied: bool) -> None:
    first, last = _scalar_value(first), _scalar_value(last)
    if first is None or last is None:
        return
    if supplied and first > last:
        raise ValueError(
            f"mjnp.{fname}: max must be larger than min in range parameter (got "
            f"range=({first}, {last}))."
        )
    if not (np.isfinite(first) and np.isfinite(last)):
        how = "supplied" if supplied else "autodetected"
        raise ValueError(
            f"mjnp.{fname}: {how} range of [{first}, {last}] is not finite; pass a finite "
            "range= (and remove NaNs and infinities from the data)"
        )


def _outer_edges(fname: str, a: Array, range_: Any) -> tuple[Any, Any]:
    """NumPy's `_get_outer_edges`: the range, or the data's min and max, widened by 0.5 on each
    side when they are equal. Eager values are NumPy scalars, so the arithmetic is NumPy's.
    """
    if range_ is not None:
        first, last = (_host_scalar(r) for r in range_)
        _check_outer_edges(fname, first, last, supplied=True)
    elif a.size == 0:
        first, last = 0, 1
    else:
        first, last = _host_scalar(_min(a)), _host_scalar(_max(a))
        _check_outer_edges(fname, first, last, supplied=False)
    if not (_is_array(first) or _is_array(last)):
        if first == last:
            first, last = first - 0.5, last + 0.5
        return first, last
    equal = ew.equal(first, last)
    return ew.where(equal, ew.subtract(first, 0.5), first), ew.where(equal, ew.add(last, 0.5), last)


def _dtype_like(x: Any) -> Any:
    """What `numpy.result_type` sees of `x`: Python scalars stay weak, arrays are strong."""
    if _is_array(x):
        return x.dtype
    return x


def _bin_type(first: Any, last: Any, a: Array) -> np.dtype:
    bin_type = np.result_type(_dtype_like(first), _dtype_like(last), a.dtype)
    if bin_type.kind in "iub":
        bin_type = np.result_type(bin_type, float)
    return bin_type


def _check_increasing(fname: str, edges: Array, what: str) -> None:
    value = _concrete(edges)
    if value is not None and np.any(value[:-1] > value[1:]):
        raise ValueError(f"mjnp.{fname}: {what} must increase monotonically, when an array")


def _estimated_bin_count(fname: str, a: Array, bins: str, range_: Any) -> int:
    """The bin count of a NumPy estimator, computed by NumPy from the concrete data."""
    value = _concrete(a)
    if value is None:
        raise ConcretizationTypeError(
            f"mjnp.{fname}: the number of bins of the estimator {bins!r} depends on the values "
            f"of the traced array {get_aval(a).str_short()}; under jit or vmap pass an integer "
            "bins (with range=) or an array of edges"
        )
    return len(np.histogram_bin_edges(np.asarray(value), bins, range_)) - 1


class _Bins:
    """A histogram's bin edges and, for equal bins, NumPy's uniform-bin data."""

    def __init__(self, edges: Array, uniform: tuple[Any, Any, int] | None):
        self.edges = edges
        self.uniform = uniform


def _bin_edges(fname: str, a: Array, bins: Any, range_: Any, weights: Any) -> _Bins:
    """NumPy's `_get_bin_edges` for raveled `a`."""
    if isinstance(bins, str):
        if bins not in _ESTIMATORS:
            raise ValueError(
                f"mjnp.{fname}: {bins!r} is not a valid estimator for `bins`; use one of "
                f"{', '.join(_ESTIMATORS)}, an integer or an array of edges"
            )
        if weights is not None:
            raise TypeError(
                f"mjnp.{fname}: Automated estimation of the number of bins is not supported "
                "for weighted data; pass an integer bins or an array of edges"
            )
        first, last = _outer_edges(fname, a, range_)
        count = _estimated_bin_count(fname, a, bins, range_)
    elif _ndim(bins) == 0:
        try:
            count = operator.index(bins)
        except TypeError as err:
            raise TypeError(
                f"mjnp.{fname}: `bins` must be an integer, a string, or an array, got {bins!r}"
            ) from err
        if count < 1:
            raise ValueError(
                f"mjnp.{fname}: `bins` must be positive, when an integer (got {count})"
            )
        first, last = _outer_edges(fname, a, range_)
    elif _ndim(bins) == 1:
        edges = asarray_arg(fname, bins)
        _check_increasing(fname, edges, "`bins`")
        return _Bins(edges, None)
    else:
        raise ValueError(f"mjnp.{fname}: `bins` must be 1d, when an array (got {_ndim(bins)}-d)")
    bin_type = _bin_type(first, last, a)
    edges = linspace(first, last, count + 1, endpoint=True, dtype=bin_type)
    value = _concrete(edges)
    if value is not None and np.any(value[:-1] >= value[1:]):
        raise ValueError(
            f"mjnp.{fname}: Too many bins for data range. Cannot create {count} finite-sized "
            f"bins (range [{first}, {last}])."
        )
    return _Bins(edges, (first, last, count))


def histogram_bin_edges(
    a: ArrayLike, bins: Any = 10, range: tuple[Any, Any] | None = None,  # noqa: A002
    weights: ArrayLike | None = None,
) -> Array:  # fmt: skip
    """The bin edges `histogram` uses, as `numpy.histogram_bin_edges`.

    `bins` is a number of equal bins (over `range`, or the data's min to max), an array of
    edges, or the name of a NumPy estimator ('auto', 'fd', ...; eager only, see the module
    docstring).
    """
    found = _host_histogram(a, bins, range, None, weights, edges_only=True)
    if found is not None:
        return found
    a, weights = _ravel_and_check_weights("histogram_bin_edges", a, weights)
    return _bin_edges("histogram_bin_edges", a, bins, range, weights).edges


# --- histograms -----------------------------------------------------------------------------


def _uniform_bin_indices(a: Array, edges: Array, uniform: tuple[Any, Any, int]) -> Array:
    """NumPy's fast equal-bin indexing: the scaled offset, then one-ulp corrections against the
    edges; values outside the range get index `count` (dropped by the count)."""
    first, last, count = uniform
    keep = ew.logical_and(ew.greater_equal(a, first), ew.less_equal(a, last))
    bin_type = edges.dtype
    a = astype(a, bin_type)
    first_b, last_b = (astype(asarray_arg("histogram", v), bin_type) for v in (first, last))
    scaled = ew.multiply(ew.divide(ew.subtract(a, first_b), ew.subtract(last_b, first_b)), count)
    # Clamp before the integer conversion: values outside the range are dropped below anyway.
    idx = astype(ew.clip(ew.where(keep, scaled, 0), 0, count), _INT64)
    idx = ew.where(ew.equal(idx, count), count - 1, idx)
    idx = ew.subtract(idx, astype(ew.less(a, getitem(edges, idx)), _INT64))
    idx = ew.clip(idx, 0, count - 1)
    up = ew.logical_and(
        ew.greater_equal(a, getitem(edges, ew.add(idx, 1))), ew.not_equal(idx, count - 1)
    )
    idx = ew.add(idx, astype(up, _INT64))
    return ew.where(keep, idx, count)


def _edge_bin_indices(a: Array, edges: Array) -> Array:
    """The bin of each value for explicit edges: `edges[i] <= a < edges[i + 1]`, the last bin
    closed; values outside (and NaN) get an index out of range."""
    count = edges.shape[0] - 1
    idx = ew.subtract(searchsorted(edges, a, side="right"), 1)
    return ew.where(ew.equal(a, getitem(edges, -1)), count - 1, idx)


def _weighted_counts(idx: Array, weights: Array | None, count: int) -> Array:
    """Counts (int64) or sums of weights per bin in `[0, count)`, summed as NumPy's bincount
    does (float64, or both parts in float64 for complex), then cast to the weights' dtype."""
    if weights is None:
        return _count(idx, None, count)
    work = _COMPLEX128 if weights.dtype.kind == "c" else _FLOAT64
    return astype(_count(idx, astype(weights, work), count), weights.dtype)


def _host_histogram(
    a: Any, bins: Any, range_: Any, density: Any, weights: Any, edges_only: bool = False
) -> Any:
    """`numpy.histogram` (or `histogram_bin_edges`) of the host values (a real Array; `bins`
    an int, an estimator's name or an Array of edges; `range` None or two Python numbers;
    float weights), or None where the general path runs, which also raises mjnp's errors for
    what NumPy rejects."""
    arrays = [a]
    if type(bins) is not int and type(bins) is not str:
        arrays.append(bins)
    if weights is not None:
        arrays.append(weights)
    values = host_values(*arrays)
    if values is None or dtypes.kind(values[0].dtype) not in "iuf":
        return None
    if range_ is not None and not (
        type(range_) is tuple
        and len(range_) == 2
        and all(type(r) is int or type(r) is float for r in range_)
    ):
        return None
    if density is not None and type(density) is not bool:
        return None
    w = None
    if weights is not None:
        w = values[-1]
        if dtypes.kind(w.dtype) != "f" or w.shape != values[0].shape:
            return None
    edges = bins
    if type(bins) is not int and type(bins) is not str:
        edges = values[1]
        if dtypes.kind(edges.dtype) not in "iuf":
            return None
    if edges_only:
        found = numpy_call_warning(np.histogram_bin_edges, values[0], edges, range_, w)
        return None if found is None else wrap_own(found)
    found = numpy_call_warning(np.histogram, values[0], edges, range_, density, w)
    return None if found is None else (wrap_own(found[0]), wrap_own(found[1]))


def _is_range_pairs(range_: Any, d: int) -> bool:
    """Whether `range_` is None or `d` (lo, hi) tuples of Python numbers (histogramdd's)."""
    if range_ is None:
        return True
    if (type(range_) is not tuple and type(range_) is not list) or len(range_) != d:
        return False
    return all(
        type(r) is tuple and len(r) == 2 and all(type(v) is int or type(v) is float for v in r)
        for r in range_
    )


def _host_histogramdd(
    fn: Any, arrays: list[Any], bins: Any, range_: Any, density: Any, weights: Any
) -> Any:
    """NumPy's `histogram2d(x, y, ...)` or `histogramdd(sample, ...)` of small eager real
    Arrays with an int `bins`, or None where the general path runs (and raises)."""
    if type(bins) is not int or (density is not None and type(density) is not bool):
        return None
    values = host_values(*arrays) if weights is None else host_values(*arrays, weights)
    if values is None or any(dtypes.kind(v.dtype) not in "iuf" for v in values):
        return None
    w = None
    if weights is not None:
        w = values.pop()
        if dtypes.kind(w.dtype) != "f":
            return None
    d = len(values) if fn is np.histogram2d else (values[0].shape[-1] if values[0].ndim else 0)
    if not _is_range_pairs(range_, d):
        return None
    return numpy_call_warning(fn, *values, bins, range_, density, w)


def histogram(
    a: ArrayLike, bins: Any = 10, range: tuple[Any, Any] | None = None,  # noqa: A002
    density: bool | None = None, weights: ArrayLike | None = None,
) -> tuple[Array, Array]:  # fmt: skip
    """The histogram of `a` and its bin edges, as `numpy.histogram`.

    Counts are int64 (the weights' dtype with `weights`; float64 with `density`). Every bin is
    half-open except the last, which includes its right edge; values outside the edges and NaN
    are not counted. `bins` is as in `histogram_bin_edges`.

    Raises:
        ValueError: for non-positive or non-integer `bins`, decreasing edges, an inverted or
            non-finite range, or weights shaped unlike `a`.
        TypeError: for boolean weights with explicit edges (as NumPy), and for weights with a
            string estimator.
    """
    found_host = _host_histogram(a, bins, range, density, weights)
    if found_host is not None:
        return found_host
    a, weights = _ravel_and_check_weights("histogram", a, weights)
    found = _bin_edges("histogram", a, bins, range, weights)
    edges = found.edges
    if found.uniform is None and weights is not None and weights.dtype == np.bool_:
        raise TypeError(
            "mjnp.histogram: boolean weights cannot be summed with explicit bin edges (NumPy "
            "raises here too); pass weights.astype(int)"
        )
    count = edges.shape[0] - 1
    if count < 1:  # no bins: NumPy returns an empty histogram
        n = zeros(0, _INT64 if weights is None else weights.dtype)
    elif found.uniform is not None:
        n = _weighted_counts(_uniform_bin_indices(a, edges, found.uniform), weights, count)
    else:
        n = _weighted_counts(_edge_bin_indices(a, edges), weights, count)
    if density:
        widths = astype(diff(edges), _FLOAT64)
        return ew.divide(ew.divide(n, widths), _sum(n)), edges
    return n, edges


def _sample_columns(sample: ArrayLike) -> Array:
    """An (N, D) array: `sample` itself, or a sequence of D coordinate arrays stacked."""
    if len(getattr(sample, "shape", ())) == 2:  # NumPy's `N, D = sample.shape`
        return asarray_arg("histogramdd", sample)
    columns = transpose(atleast_2d(asarray_arg("histogramdd", sample)))
    if columns.ndim != 2:
        raise ValueError(
            f"mjnp.histogramdd: sample must be an (N, D) array or a sequence of D 1-D arrays, "
            f"got shape {columns.shape}"
        )
    return columns


def _dimension_edges(i: int, column: Array, bins: Any, range_: Any) -> Array:
    if _ndim(bins) == 0:
        if bins < 1:
            raise ValueError(f"mjnp.histogramdd: `bins[{i}]` must be positive, when an integer")
        first, last = _outer_edges("histogramdd", column, range_)
        try:
            count = operator.index(bins)
        except TypeError as err:
            raise TypeError(
                f"mjnp.histogramdd: `bins[{i}]` must be an integer, when a scalar (got {bins!r})"
            ) from err
        return linspace(first, last, count + 1)
    if _ndim(bins) == 1:
        edges = asarray_arg("histogramdd", bins)
        _check_increasing("histogramdd", edges, f"`bins[{i}]`")
        return edges
    raise ValueError(f"mjnp.histogramdd: `bins[{i}]` must be a scalar or 1d array")


def histogramdd(
    sample: ArrayLike, bins: Any = 10, range: Sequence[Any] | None = None,  # noqa: A002
    density: bool | None = None, weights: ArrayLike | None = None,
) -> tuple[Array, list[Array]]:  # fmt: skip
    """The D-dimensional histogram of `sample` ((N, D), or D arrays of N coordinates) and the
    list of its D edge arrays, as `numpy.histogramdd`.

    `bins` is one integer or edge array for all dimensions, or one per dimension; the result is
    float64 (as in NumPy, even for counts). String estimators are not accepted (nor by NumPy).

    Raises:
        ValueError: for a wrong number of bins or ranges, non-positive bin counts, decreasing
            edges or weights of another length.
        TypeError: for non-integer scalar bins and complex weights.
    """
    found = _host_histogramdd(np.histogramdd, [sample], bins, range, density, weights)
    if found is not None:
        return wrap_own(found[0]), [wrap_own(e) for e in found[1]]
    columns = _sample_columns(sample)
    d = columns.shape[1]
    if isinstance(bins, str):
        raise TypeError(
            f"mjnp.histogramdd: bins must be integers or arrays of edges, got {bins!r} "
            "(histogramdd has no bin estimators)"
        )
    try:
        m = len(bins)
    except TypeError:  # a scalar: the same number of bins in every dimension
        bins, m = [bins] * d, d
    if m != d:
        raise ValueError(
            f"mjnp.histogramdd: The dimension of bins must be equal to the dimension of the "
            f"sample x ({len(bins)} bins for {d} dimensions)."
        )
    ranges = (None,) * d if range is None else range
    if len(ranges) != d:
        raise ValueError(
            f"mjnp.histogramdd: range argument must have one entry per dimension ({len(ranges)} "
            f"for {d} dimensions)"
        )
    edges = [
        _dimension_edges(i, getitem(columns, (slice(None), i)), b, r)
        for i, (b, r) in enumerate(zip(bins, ranges, strict=True))
    ]
    nbin = [e.shape[0] + 1 for e in edges]  # an outlier bin at each end
    flat = lax.full((columns.shape[0],), 0, _INT64)
    for i, e in enumerate(edges):
        column = getitem(columns, (slice(None), i))
        # searchsorted puts a value on an edge in the bin to its right, and the last edge
        # closes the last bin.
        idx = searchsorted(e, column, side="right")
        idx = ew.subtract(idx, astype(ew.equal(column, getitem(e, -1)), _INT64))
        flat = ew.add(ew.multiply(flat, nbin[i]), idx)
    total = int(np.prod(nbin))
    if weights is not None:
        weights = _count_weights("histogramdd", weights, flat)
    hist = reshape(astype(_count(flat, weights, total), _FLOAT64), tuple(nbin))
    hist = getitem(hist, (slice(1, -1),) * d)
    if density:
        s = _sum(hist)
        for i, e in enumerate(edges):
            shape = tuple(n - 2 if j == i else 1 for j, n in enumerate(nbin))
            hist = ew.divide(hist, reshape(diff(e), shape))
        hist = ew.divide(hist, s)
    return hist, edges


def histogram2d(
    x: ArrayLike, y: ArrayLike, bins: Any = 10, range: Any = None,  # noqa: A002
    density: bool | None = None, weights: ArrayLike | None = None,
) -> tuple[Array, Array, Array]:  # fmt: skip
    """The 2-D histogram of the points (`x`, `y`) and its x and y edges, as
    `numpy.histogram2d`; `bins` is an integer, an array of edges, or one of each per axis."""
    found = _host_histogramdd(np.histogram2d, [x, y], bins, range, density, weights)
    if found is not None:
        return wrap_own(found[0]), wrap_own(found[1]), wrap_own(found[2])
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n not in (1, 2):
        edges = asarray_arg("histogram2d", bins)
        bins = [edges, edges]
    hist, edges = histogramdd([x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]
