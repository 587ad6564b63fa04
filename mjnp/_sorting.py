"""Sorting (NumPy's "sorting" routines): sort, argsort, lexsort, partition, argpartition,
sort_complex. All are one `lax.sort` in NumPy's total order: NaNs last, -0.0 equal to 0.0."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from mjcore import dtypes, lax
from mjcore.eager_fusion import fuse_eagerly
from mjnp._host_numpy import host_values, wrap_own
from mjnp._manipulation import asarray_strong, normalize_axis, single_axis

ArrayLike = Any
Array = Any

_INT64 = np.dtype("int64")


def _check_sort_args(fname: str, kind: str | None, order: Any, stable: bool | None = None) -> None:
    # NumPy reads only the first letter of `kind`.
    if kind is not None and (not isinstance(kind, str) or kind[:1].lower() not in "qmhs"):
        raise ValueError(
            f"mjnp.{fname}: sort kind must be one of 'quick', 'heap', or 'stable' (got {kind!r})"
        )
    if kind is not None and stable is not None:
        raise ValueError(
            f"mjnp.{fname}: `kind` and keyword parameters can't be provided at the same time; "
            "use only one of them"
        )
    if order is not None:
        raise ValueError(
            f"mjnp.{fname}: cannot specify order when the array has no fields (mjnp has no "
            "structured dtypes)"
        )


def _sort_axis(fname: str, x: Array, axis: int | None) -> tuple[Array, int]:
    """`x` flattened when `axis` is None, and the normalized axis."""
    if axis is None:
        return lax.reshape(x, (x.size,)), 0
    return x, normalize_axis(f"mjnp.{fname}", axis, x.ndim)


def _host_sortable(value: np.ndarray, axis: Any) -> bool:
    """Whether NumPy's stable sort of `value` along `axis` is mjnp's sort (real dtypes, whose
    order NumPy and `lax.sort` agree on; an axis NumPy takes), for the direct host path."""
    if dtypes.kind(value.dtype) not in "biuf":
        return False
    if axis is None:
        return True
    return type(axis) is int and -value.ndim <= axis < value.ndim


def _indices(x: Array, axis: int) -> Array:
    return lax.broadcasted_iota(_INT64, x.shape, axis)


def sort(
    a: ArrayLike,
    axis: int | None = -1,
    kind: str | None = None,
    order: None = None,
    *,
    stable: bool | None = None,
    descending: bool = False,
) -> Array:
    """A sorted copy of `a` along `axis` (flattened if None), as `numpy.sort`; `descending`
    (the Array API's keyword, which NumPy lacks) reverses the order, NaNs first.

    Every `kind` gives the same values (NaNs last), so elsewhere it is ignored, as is `stable`,
    and the sort is stable. Eagerly on small CPU arrays NumPy's own sort of that kind runs,
    which gives NumPy's bits: an unstable kind may order -0.0 and 0.0 differently.
    """
    values = host_values(a)
    if values is not None and _host_sortable(values[0], axis):
        _check_sort_args("sort", kind, order, stable)
        # NumPy's own sort of that kind: NumPy's bits (its unstable kinds may put -0.0 and
        # 0.0, equal values, in another order than the general path's stable sort)
        out = np.sort(values[0], axis, kind=kind, stable=stable)  # type: ignore[arg-type]
        if descending:
            out = np.flip(out, -1 if axis is None else axis).copy()
        return wrap_own(out)
    return _sort(a, axis, kind, order, stable, descending)


@fuse_eagerly
def _sort(
    a: ArrayLike,
    axis: int | None = -1,
    kind: str | None = None,
    order: None = None,
    stable: bool | None = None,
    descending: bool = False,
) -> Array:
    x = asarray_strong("sort", a)
    _check_sort_args("sort", kind, order, stable)
    x, axis = _sort_axis("sort", x, axis)
    out = lax.sort(x, axis)
    return lax.rev(out, (axis,)) if descending else out


def argsort(
    a: ArrayLike,
    axis: int | None = -1,
    kind: str | None = None,
    order: None = None,
    *,
    stable: bool | None = None,
    descending: bool = False,
) -> Array:
    """Indices (int64) that sort `a` along `axis` (flattened if None), as `numpy.argsort`;
    `descending` (the Array API's keyword, which NumPy lacks) sorts from largest to smallest.

    NB: the sort is always stable: ties keep their original order whatever `kind` says, one of
    the orders NumPy's unstable kinds may give. That holds for `descending=True` too.
    """
    values = host_values(a)
    if values is not None and _host_sortable(values[0], axis):
        _check_sort_args("argsort", kind, order, stable)
        v = values[0]
        if axis is None:
            v, axis = v.reshape(-1), 0
        if not descending:
            return wrap_own(np.argsort(v, axis, kind="stable"))
        # as the general path: the stable order of the reversed array, reversed and mapped back
        perm = np.argsort(np.flip(v, axis), axis, kind="stable")
        return wrap_own(np.subtract(v.shape[axis] - 1, np.flip(perm, axis)))
    return _argsort(a, axis, kind, order, stable, descending)


@fuse_eagerly
def _argsort(
    a: ArrayLike,
    axis: int | None = -1,
    kind: str | None = None,
    order: None = None,
    stable: bool | None = None,
    descending: bool = False,
) -> Array:
    x = asarray_strong("argsort", a)
    _check_sort_args("argsort", kind, order, stable)
    x, axis = single_axis("mjnp.argsort", x, axis)
    if not descending:
        return lax.sort([x, _indices(x, axis)], axis, num_keys=1)[1]
    # A stable descending order: sort the reversed array stably, reverse the result, and map
    # the indices back (ties then keep their original order).
    n = x.shape[axis]
    perm = lax.sort([lax.rev(x, (axis,)), _indices(x, axis)], axis, num_keys=1)[1]
    return lax.sub(lax.full((), n - 1, perm.dtype), lax.rev(perm, (axis,)))


def lexsort(keys: ArrayLike | Sequence[ArrayLike], axis: int = -1) -> Array:
    """Indices (int64) that sort by several keys, the last key primary, as `numpy.lexsort`."""
    if (type(keys) is list or type(keys) is tuple) and keys and type(axis) is int:
        values = host_values(*keys)
        if values is not None and values[0].ndim and -values[0].ndim <= axis < values[0].ndim:
            shape = values[0].shape
            if all(v.shape == shape and dtypes.kind(v.dtype) in "biuf" for v in values):
                return wrap_own(np.lexsort(values, axis))  # stable, NaNs last, as the general path
    if isinstance(keys, list | tuple):
        arrays = [asarray_strong("lexsort", k) for k in keys]
    else:
        stacked = asarray_strong("lexsort", keys)
        if stacked.ndim == 0:
            raise TypeError("mjnp.lexsort: need a sequence of keys with len > 0, got a scalar")
        arrays = [
            lax.squeeze(lax.slice_in_dim(stacked, i, i + 1, 0), (0,)) for i in range(len(stacked))
        ]
    if not arrays:
        raise TypeError("mjnp.lexsort: need a sequence of keys with len > 0")
    shape = arrays[0].shape
    if any(k.shape != shape for k in arrays):
        raise ValueError(
            "mjnp.lexsort: all keys need to be the same shape, got "
            + ", ".join(str(k.shape) for k in arrays)
        )
    if not shape:
        # NumPy sorts a 0-d key as one element.
        return lax.full((), 0, _INT64)
    axis = normalize_axis("mjnp.lexsort", axis, len(shape))
    ordered = arrays[::-1]
    return lax.sort([*ordered, _indices(ordered[0], axis)], axis, num_keys=len(ordered))[-1]


def _check_kth(fname: str, kth: Any, n: int, size: int) -> None:
    values = np.asarray(kth)
    if values.ndim > 1:
        raise ValueError(f"mjnp.{fname}: kth must be a scalar or a 1-d sequence, got {kth!r}")
    if values.dtype.kind not in "iu":
        raise TypeError(f"mjnp.{fname}: partition index kth must be an integer, got {kth!r}")
    if size == 0:
        return  # NumPy has nothing to check against
    for k in values.reshape(-1).tolist():
        if not -n <= operator.index(k) < n:
            raise ValueError(f"mjnp.{fname}: kth(={k}) out of bounds ({n})")


def _host_full_sort(
    fname: str, a: Any, kth: Any, axis: Any, kind: Any, order: Any, fn: Any
) -> Array | None:
    """`partition`/`argpartition` of a small eager real Array, fully sorted as the general path
    leaves it, by NumPy's `fn`: `sort` (its default kind, ~4x faster than its stable one; equal
    values, -0.0 and 0.0, may land in another order) or `argsort` (stable: the same indices);
    after the general path's `kth` check. None where the general path runs (and raises)."""
    if kind != "introselect" or order is not None:
        return None
    values = host_values(a)
    if values is None or not _host_sortable(values[0], axis):
        return None
    v = values[0]
    if axis is None:
        v, axis = v.reshape(-1), 0
    _check_kth(fname, kth, v.shape[axis], v.size)
    return wrap_own(fn(v, axis) if fn is np.sort else fn(v, axis, kind="stable"))


def partition(
    a: ArrayLike,
    kth: int | Sequence[int],
    axis: int | None = -1,
    kind: str = "introselect",
    order: None = None,
) -> Array:
    """`a` rearranged so the elements at positions `kth` are where a sort would put them, with
    smaller ones before and larger ones after, as `numpy.partition`.

    NB: the result is fully sorted, one of the arrangements NumPy allows (eagerly on small
    CPU Arrays by NumPy's default sort, so -0.0 and 0.0 may come in either order).
    """
    found = _host_full_sort("partition", a, kth, axis, kind, order, np.sort)
    if found is not None:
        return found
    x = asarray_strong("partition", a)
    if kind != "introselect":
        raise ValueError(f"mjnp.partition: kind must be 'introselect', got {kind!r}")
    _check_sort_args("partition", None, order)
    x, axis = _sort_axis("partition", x, axis)
    _check_kth("partition", kth, x.shape[axis], x.size)
    return lax.sort(x, axis)


def argpartition(
    a: ArrayLike,
    kth: int | Sequence[int],
    axis: int | None = -1,
    kind: str = "introselect",
    order: None = None,
) -> Array:
    """Indices (int64) that partition `a` at `kth`, as `numpy.argpartition`.

    NB: the indices fully sort `a` (stably), one of the arrangements NumPy allows.
    """
    found = _host_full_sort("argpartition", a, kth, axis, kind, order, np.argsort)
    if found is not None:
        return found
    x = asarray_strong("argpartition", a)
    if kind != "introselect":
        raise ValueError(f"mjnp.argpartition: kind must be 'introselect', got {kind!r}")
    _check_sort_args("argpartition", None, order)
    x, axis = single_axis("mjnp.argpartition", x, axis)
    _check_kth("argpartition", kth, x.shape[axis], x.size)
    return lax.sort([x, _indices(x, axis)], axis, num_keys=1)[1]


def sort_complex(a: ArrayLike) -> Array:
    """`a` sorted along its last axis by real then imaginary part, as a complex array, as
    `numpy.sort_complex` (int8/int16/uint8/uint16 give complex64, other real types
    complex128)."""
    values = host_values(a)
    if values is not None and dtypes.kind(values[0].dtype) in "biuf" and values[0].ndim:
        return wrap_own(np.sort_complex(values[0]))
    x = sort(a)
    if x.dtype.kind == "c":
        return x
    target = "complex64" if x.dtype.char in "bhBH" else "complex128"
    return lax.convert_element_type(x, np.dtype(target))
