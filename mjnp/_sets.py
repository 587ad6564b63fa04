"""Set routines (NumPy's "set routines"): unique and its Array API forms, isin, intersect1d,
union1d, setdiff1d, setxor1d.

Their output shapes depend on the values, so they run eagerly and raise
`NonConcreteBooleanIndexError` under `jit`/`vmap` (`isin` alone has a static shape and works
everywhere). They have no derivative: differentiating them raises TypeError rather than
returning a zero gradient.
"""

from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple

import numpy as np
from numpy.exceptions import AxisError

from mjcore import dtypes, lax
from mjcore.core import Tracer
from mjcore.custom_derivatives import custom_jvp
from mjcore.errors import NonConcreteBooleanIndexError
from mjnp import _elementwise as ew
from mjnp._host_numpy import host_values, wrap_own
from mjnp._host_stats import call_or_none
from mjnp._indexing_functions import take
from mjnp._manipulation import asarray_strong, moveaxis, normalize_axis
from mjnp._promotion import promote_args
from mjnp._sorting import argsort

ArrayLike = Any
Array = Any

_INT64 = np.dtype("int64")


def _no_gradient_impl(fname: str, x: Array) -> Array:
    return x


_no_gradient = custom_jvp(_no_gradient_impl, nondiff_argnums=(0,))


@_no_gradient.defjvp
def _no_gradient_jvp(fname, primals, tangents):
    raise TypeError(
        f"mjnp.{fname} is not differentiable: its output shape changes with the input values. "
        "Differentiate a fixed-shape formulation instead (e.g. mjnp.isin or comparisons)."
    )


def _flat(fname: str, x: ArrayLike) -> Array:
    arr = _no_gradient(fname, asarray_strong(fname, x))
    return lax.reshape(arr, (arr.size,))


def _count(fname: str, mask: Array) -> int:
    """The number of True entries of a mask whose value must be known."""
    if isinstance(mask, Tracer):
        value = mask.to_concrete_value()
        if value is None:
            raise NonConcreteBooleanIndexError(
                f"mjnp.{fname}: the result's shape depends on the input values, so it cannot be "
                "computed under jit or vmap; call it outside the transformation (mjnp.isin has a "
                "fixed shape and works under jit)"
            )
    else:
        value = mask
    return int(np.count_nonzero(np.asarray(value)))


def _compress(fname: str, mask: Array, *arrays: Array) -> list[Array]:
    """The entries of 1-d `arrays` where `mask` holds, in order (a sort puts them first)."""
    k = _count(fname, mask)
    n = mask.shape[0]
    iota = lax.iota(_INT64, n)
    key = ew.where(mask, iota, ew.add(iota, n))
    outs = lax.sort([key, *arrays], 0, num_keys=1)[1:]
    return [lax.slice_in_dim(a, 0, k, 0) for a in outs]


def _different(a: Array, b: Array, equal_nan: bool) -> Array:
    neq = ew.not_equal(a, b)
    if equal_nan and dtypes.kind(a.dtype) in "fc":
        neq = ew.logical_and(neq, ew.logical_not(ew.logical_and(ew.isnan(a), ew.isnan(b))))
    return neq


class _Unique(NamedTuple):
    values: Array
    indices: Array
    inverse: Array
    counts: Array


def _unique(fname: str, ar: ArrayLike, equal_nan: bool = True) -> _Unique:
    x = _flat(fname, ar)
    n = x.shape[0]
    if n == 0:
        empty = lax.full((0,), 0, _INT64)
        return _Unique(x, empty, empty, empty)
    perm = argsort(x, kind="stable")
    s = lax.sort(x, 0)
    starts = lax.concatenate(
        [
            lax.full((1,), True, np.dtype(bool)),
            _different(lax.slice_in_dim(s, 1, n, 0), lax.slice_in_dim(s, 0, n - 1, 0), equal_nan),
        ],
        0,
    )
    iota = lax.iota(_INT64, n)
    values, indices, positions = _compress(fname, starts, s, perm, iota)
    # Element i of the sorted array belongs to unique value cumsum(starts)[i] - 1; sorting by
    # `perm` puts those labels back in the original order.
    labels = ew.subtract(lax.cumsum(lax.convert_element_type(starts, _INT64), 0), 1)
    inverse = lax.sort([perm, labels], 0, num_keys=1)[1]
    ends = lax.concatenate(
        [lax.slice_in_dim(positions, 1, positions.shape[0], 0), lax.full((1,), n, _INT64)], 0
    )
    counts = ew.subtract(ends, positions)
    return _Unique(values, indices, inverse, counts)


def unique(
    ar: ArrayLike,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
    *,
    equal_nan: bool = True,
    sorted: bool = True,  # noqa: A002  (NumPy's name)
    size: int | None = None,
    fill_value: Any = None,
) -> Any:
    """The sorted unique elements of the flattened `ar`, as `numpy.unique`, with optionally
    the first indices, the inverse (shaped like `ar`) and the counts.

    With `axis`, the unique subarrays along that axis (rows, for `axis=0`), sorted
    lexicographically; the inverse is then 1-D, and NaNs never compare equal, as in NumPy.
    JAX's static `size` (values only) gives exactly `size` values, padded with `fill_value`
    (default: the smallest value), so it works under `jit` and `vmap`.

    NB: the values are always sorted.
    """
    if size is not None:
        return _unique_sized(
            ar,
            size,
            fill_value,
            equal_nan,
            return_index or return_inverse or return_counts or axis is not None,
        )
    if axis is not None:
        return _unique_axis(ar, return_index, return_inverse, return_counts, axis)
    values = host_values(ar)
    if values is not None and dtypes.kind(values[0].dtype) in "biuf" and type(equal_nan) is bool:
        # NumPy's own unique (sorted; first indices by its stable argsort), as mjnp's
        found = np.unique(  # type: ignore[call-overload]
            values[0], return_index, return_inverse, return_counts, None, equal_nan=equal_nan
        )
        return wrap_own(found) if type(found) is np.ndarray else tuple(wrap_own(f) for f in found)
    shape = np.shape(ar) if not hasattr(ar, "shape") else ar.shape
    u = _unique("unique", ar, equal_nan)
    outs = [u.values]
    if return_index:
        outs.append(u.indices)
    if return_inverse:
        outs.append(lax.reshape(u.inverse, tuple(shape)))
    if return_counts:
        outs.append(u.counts)
    return outs[0] if len(outs) == 1 else tuple(outs)


def _unique_sized(ar: ArrayLike, size: Any, fill_value: Any, equal_nan: bool, extra: bool) -> Any:
    """`unique(ar, size=size)`: the sorted values, the first of each run kept by a stable sort
    on "not the first of its run", then the first `size` of them, padded by `fill_value`."""
    if extra:
        raise NotImplementedError(
            "mjnp.unique: size= is supported for the values alone (no return_index, "
            "return_inverse, return_counts or axis)"
        )
    size = operator.index(size)
    if size < 0:
        raise ValueError(f"mjnp.unique: size must be non-negative, got {size}")
    x = asarray_strong("unique", ar)
    n = x.size
    flat = lax.reshape(x, (n,))
    if n == 0:
        fill = 0 if fill_value is None else fill_value
        return lax.full((size,), fill, flat.dtype)
    values = lax.sort(flat)
    later, earlier = lax.slice(values, (1,), (n,)), lax.slice(values, (0,), (n - 1,))
    differs = ew.not_equal(later, earlier)
    if equal_nan and dtypes.kind(values.dtype) in "fc":
        both_nan = ew.logical_and(ew.isnan(later), ew.isnan(earlier))
        differs = ew.logical_and(differs, ew.logical_not(both_nan))
    first = lax.concatenate([lax.full((1,), True, np.dtype(bool)), differs], 0)
    key = lax.convert_element_type(ew.logical_not(first), np.dtype(np.int32))
    _, picked = lax.sort((key, values), is_stable=True, num_keys=1)
    count = lax.reduce_sum(lax.convert_element_type(first, np.dtype(np.int64)), (0,))
    if fill_value is None:
        fill = lax.reshape(lax.slice(values, (0,), (1,)), ())
    else:
        fill = lax.convert_element_type(asarray_strong("unique", fill_value), values.dtype)
    if size > n:
        picked = lax.pad(picked, lax.full((), 0, values.dtype), ((0, size - n, 0),))
    else:
        picked = lax.slice(picked, (0,), (size,))
    valid = ew.less(lax.iota(np.dtype(np.int64), size), count)
    return ew.where(valid, picked, lax.broadcast_in_dim(fill, (size,), ()))


def _unique_axis(
    ar: ArrayLike, return_index: bool, return_inverse: bool, return_counts: bool, axis: Any
) -> Any:
    x = _no_gradient("unique", asarray_strong("unique", ar))
    if x.ndim == 0:
        raise AxisError(axis, 0, "mjnp.unique")
    ax = normalize_axis("unique", axis, x.ndim)
    moved = moveaxis(x, ax, 0)
    n, rest = moved.shape[0], moved.shape[1:]
    m = math.prod(rest)
    rows = lax.reshape(moved, (n, m))
    iota = lax.iota(_INT64, n)
    if n == 0:
        values, indices, inverse, counts = rows, iota, iota, iota
    else:
        # Sort the rows lexicographically (the row number breaks ties: a stable sort), then
        # a row starts a new group where any element differs from the previous row's.
        cols = [lax.squeeze(lax.slice_in_dim(rows, j, j + 1, 1), (1,)) for j in range(m)]
        *sorted_cols, perm = lax.sort([*cols, iota], 0, num_keys=m + 1)
        first = lax.full((1,), True, np.dtype(bool))
        differs = lax.full((n - 1,), False, np.dtype(bool))
        for c in sorted_cols:
            nxt, prev = lax.slice_in_dim(c, 1, n, 0), lax.slice_in_dim(c, 0, n - 1, 0)
            differs = ew.logical_or(differs, _different(nxt, prev, equal_nan=False))
        starts = lax.concatenate([first, differs], 0)
        indices, positions = _compress("unique", starts, perm, iota)
        values = take(rows, indices, axis=0)
        labels = ew.subtract(lax.cumsum(lax.convert_element_type(starts, _INT64), 0), 1)
        inverse = lax.sort([perm, labels], 0, num_keys=1)[1]
        ends = lax.concatenate(
            [lax.slice_in_dim(positions, 1, positions.shape[0], 0), lax.full((1,), n, _INT64)], 0
        )
        counts = ew.subtract(ends, positions)
    values = moveaxis(lax.reshape(values, (values.shape[0], *rest)), 0, ax)
    outs = [values]
    if return_index:
        outs.append(indices)
    if return_inverse:
        outs.append(inverse)
    if return_counts:
        outs.append(counts)
    return outs[0] if len(outs) == 1 else tuple(outs)


class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


def _host_unique(x: Any, index: bool, inverse: bool, counts: bool) -> list[Array] | None:
    """`numpy.unique(x, ..., equal_nan=False)` of a small eager real Array (the Array API forms:
    sorted values, NaNs apart), wrapped; None where the general path runs."""
    values = host_values(x)
    if values is None or dtypes.kind(values[0].dtype) not in "biuf":
        return None
    found = np.unique(values[0], index, inverse, counts, equal_nan=False)  # type: ignore[call-overload]
    return [wrap_own(found)] if type(found) is np.ndarray else [wrap_own(f) for f in found]


def _host_pair(fn: Any, ar1: Any, ar2: Any, **kwargs: Any) -> Any:
    """NumPy's set routine `fn(ar1, ar2, **kwargs)` of two small eager Arrays of one real dtype
    (no promotion to differ on), wrapped (a tuple stays a tuple); None elsewhere."""
    values = host_values(ar1, ar2)
    if values is None:
        return None
    a, b = values
    if a.dtype != b.dtype or dtypes.kind(a.dtype) not in "biuf":
        return None
    found = call_or_none(fn, a, b, **kwargs)
    if found is None:
        return None
    return wrap_own(found) if type(found) is np.ndarray else tuple(wrap_own(f) for f in found)


def unique_all(x: ArrayLike) -> UniqueAllResult:
    """Unique values with first indices, inverse indices (shaped like `x`) and counts, as
    `numpy.unique_all` (the values are sorted)."""
    found = _host_unique(x, True, True, True)
    if found is not None:
        return UniqueAllResult(*found)
    shape = np.shape(x) if not hasattr(x, "shape") else x.shape
    u = _unique("unique_all", x, equal_nan=False)
    return UniqueAllResult(u.values, u.indices, lax.reshape(u.inverse, tuple(shape)), u.counts)


def unique_counts(x: ArrayLike) -> UniqueCountsResult:
    """Unique values and their counts, as `numpy.unique_counts` (the values are sorted)."""
    found = _host_unique(x, False, False, True)
    if found is not None:
        return UniqueCountsResult(*found)
    u = _unique("unique_counts", x, equal_nan=False)
    return UniqueCountsResult(u.values, u.counts)


def unique_inverse(x: ArrayLike) -> UniqueInverseResult:
    """Unique values and inverse indices shaped like `x`, as `numpy.unique_inverse`."""
    found = _host_unique(x, False, True, False)
    if found is not None:
        return UniqueInverseResult(*found)
    shape = np.shape(x) if not hasattr(x, "shape") else x.shape
    u = _unique("unique_inverse", x, equal_nan=False)
    return UniqueInverseResult(u.values, lax.reshape(u.inverse, tuple(shape)))


def unique_values(x: ArrayLike) -> Array:
    """The unique values, as `numpy.unique_values` (sorted here)."""
    found = _host_unique(x, False, False, False)
    if found is not None:
        return found[0]
    return _unique("unique_values", x, equal_nan=False).values


def isin(
    element: ArrayLike,
    test_elements: ArrayLike,
    assume_unique: bool = False,
    invert: bool = False,
    *,
    kind: str | None = None,
) -> Array:
    """Whether each entry of `element` occurs in `test_elements`, as `numpy.isin` (shape of
    `element`; NaN is in nothing). Works under jit: it compares all pairs."""
    if kind not in (None, "sort", "table"):
        raise ValueError(f"mjnp.isin: invalid kind {kind!r}; expected None, 'sort' or 'table'")
    if type(invert) is bool and kind is None:
        found = _host_pair(np.isin, element, test_elements, invert=invert)
        if found is not None:
            return found
    e, t = promote_args(
        "isin", asarray_strong("isin", element), asarray_strong("isin", test_elements)
    )
    t = lax.reshape(t, (t.size,))
    shape = (*e.shape, t.size)
    pairs = lax.eq(
        lax.broadcast_in_dim(e, shape, tuple(range(e.ndim))),
        lax.broadcast_in_dim(t, shape, (e.ndim,)),
    )
    found = lax.reduce_or(pairs, (e.ndim,))
    return ew.logical_not(found) if invert else found


def _promoted_pair(fname: str, ar1: ArrayLike, ar2: ArrayLike) -> tuple[Array, Array]:
    a, b = promote_args(fname, asarray_strong(fname, ar1), asarray_strong(fname, ar2))
    return a, b


def intersect1d(
    ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False, return_indices: bool = False
) -> Any:
    """The sorted unique values in both arrays, as `numpy.intersect1d` (optionally with the
    indices of their first occurrences in each)."""
    if assume_unique is False and type(return_indices) is bool:
        found = _host_pair(np.intersect1d, ar1, ar2, return_indices=return_indices)
        if found is not None:
            return found
    a, b = _promoted_pair("intersect1d", ar1, ar2)
    u1, u2 = _unique("intersect1d", a), _unique("intersect1d", b)
    values, indices1 = _compress("intersect1d", isin(u1.values, u2.values), u1.values, u1.indices)
    if not return_indices:
        return values
    (indices2,) = _compress("intersect1d", isin(u2.values, u1.values), u2.indices)
    return values, indices1, indices2


def union1d(ar1: ArrayLike, ar2: ArrayLike) -> Array:
    """The sorted unique values in either array, as `numpy.union1d`."""
    found = _host_pair(np.union1d, ar1, ar2)
    if found is not None:
        return found
    a, b = _promoted_pair("union1d", ar1, ar2)
    both = lax.concatenate([_flat("union1d", a), _flat("union1d", b)], 0)
    return _unique("union1d", both).values


def setdiff1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False) -> Array:
    """The unique values of `ar1` not in `ar2` (sorted unless `assume_unique`), as
    `numpy.setdiff1d`."""
    # NB: as NumPy, the result keeps the dtype of `ar1` (no promotion with `ar2`).
    if assume_unique is False:
        found = _host_pair(np.setdiff1d, ar1, ar2)
        if found is not None:
            return found
    a, b = asarray_strong("setdiff1d", ar1), asarray_strong("setdiff1d", ar2)
    values = _flat("setdiff1d", a) if assume_unique else _unique("setdiff1d", a).values
    (out,) = _compress("setdiff1d", isin(values, b, invert=True), values)
    return out


def setxor1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False) -> Array:
    """The sorted values in exactly one of the arrays, as `numpy.setxor1d`."""
    if assume_unique is False:
        found = _host_pair(np.setxor1d, ar1, ar2)
        if found is not None:
            return found
    a, b = _promoted_pair("setxor1d", ar1, ar2)
    u1 = _flat("setxor1d", a) if assume_unique else _unique("setxor1d", a).values
    u2 = _flat("setxor1d", b) if assume_unique else _unique("setxor1d", b).values
    (only1,) = _compress("setxor1d", isin(u1, u2, invert=True), u1)
    (only2,) = _compress("setxor1d", isin(u2, u1, invert=True), u2)
    return lax.sort(lax.concatenate([only1, only2], 0), 0)
