"""Basic indexing (`x[idx]`): integers, slices, None/newaxis, Ellipsis and tuples of these.

A static index becomes one `lax.slice`, one `lax.rev` for negative steps, one `lax.squeeze` for
integer indices and one `lax.expand_dims` for new axes. A traced integer scalar becomes a
`lax.dynamic_slice`. Advanced indexing (integer or boolean arrays) is not supported yet.
"""

from __future__ import annotations

import operator
from typing import Any, NamedTuple

import numpy as np

from mjcore import lax
from mjcore.core import Tracer, get_aval
from mjcore.errors import TracerIntegerConversionError
from mjnp._promotion import asarray_arg

ArrayLike = Any
Array = Any

_INT64 = np.dtype("int64")

_VALID_INDICES = (
    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
    "boolean arrays are valid indices"
)


class _AxisSlice(NamedTuple):
    """What a static slice keeps of one axis: `lax.slice` bounds and whether to reverse."""

    start: int
    limit: int
    stride: int
    reverse: bool


def _slice_bounds(s: slice, size: int) -> _AxisSlice:
    """NumPy's slice semantics for one axis, as a forward `lax.slice` and an optional `rev`."""
    try:
        start, stop, step = s.indices(size)
    except ValueError as err:  # a zero step
        raise ValueError(f"mjnp indexing: slice step cannot be zero, got {s!r}") from err
    except TracerIntegerConversionError as err:
        raise IndexError(
            f"mjnp indexing: slice bounds must be static, got the traced {s!r}; the size of "
            "the result must be known while tracing. To take a fixed-size window at a traced "
            "position use mjcore.lax.dynamic_slice, or mark the bound static (static_argnums)"
        ) from err
    except TypeError as err:
        raise TypeError(
            f"mjnp indexing: slice indices must be integers or None, got {s!r}"
        ) from err
    count = len(range(start, stop, step))
    if count == 0:
        return _AxisSlice(0, 0, 1, False)
    if step > 0:
        return _AxisSlice(start, start + (count - 1) * step + 1, step, False)
    # The selected elements, lowest first, are a forward slice from the last one selected.
    low = start + (count - 1) * step
    return _AxisSlice(low, start + 1, -step, True)


def _advanced_index_error(idx: Any) -> IndexError:
    return IndexError(
        "mjnp indexing: advanced indexing with integer or boolean arrays (or lists, or a bool "
        f"scalar) is not supported yet, got an index of type {type(idx).__name__} "
        f"{idx!r:.50}; only basic indices (integers, slices, None and ...) are"
    )


def _classify(entry: Any) -> str:
    """One of 'none', 'ellipsis', 'slice', 'int', 'dynamic'; raises for anything else."""
    if entry is None:
        return "none"
    if entry is Ellipsis:
        return "ellipsis"
    if isinstance(entry, slice):
        return "slice"
    if isinstance(entry, bool | np.bool_):
        raise _advanced_index_error(entry)
    if isinstance(entry, int | np.integer):
        return "int"
    if isinstance(entry, list | tuple):
        raise _advanced_index_error(entry)
    if isinstance(entry, Tracer):
        aval = entry.aval
        if aval.ndim == 0 and aval.dtype.kind in "iu":
            return "dynamic"
        if aval.dtype.kind in "biu":
            raise _advanced_index_error(entry)
        raise IndexError(f"mjnp indexing: {_VALID_INDICES}; got a {aval.str_short()} tracer")
    if hasattr(entry, "dtype") and hasattr(entry, "shape"):
        kind = np.dtype(entry.dtype).kind
        if kind in "iu" and tuple(entry.shape) == ():
            return "int"  # a concrete 0-d integer array is a static index, as in NumPy
        if kind in "biu":
            raise _advanced_index_error(entry)
    raise IndexError(f"mjnp indexing: {_VALID_INDICES}; got {type(entry).__name__} {entry!r:.50}")


def getitem(x: ArrayLike, idx: Any) -> Array:
    """`x[idx]` for basic indices, with NumPy's semantics.

    Static integer indices are bounds-checked (IndexError), also under transformations.

    NB: a traced integer index is clamped into range like `lax.dynamic_slice` (after NumPy's
    wrapping of negative indices), because its value is unknown when the error would be raised.

    Raises:
        IndexError: for an out-of-range static index, too many indices, more than one
            ellipsis, an invalid index type, or an advanced (array) index.
    """
    x = asarray_arg("getitem", x)
    entries = idx if isinstance(idx, tuple) else (idx,)
    kinds = [_classify(e) for e in entries]
    n_ellipsis = kinds.count("ellipsis")
    if n_ellipsis > 1:
        raise IndexError("mjnp indexing: an index can only have a single ellipsis ('...')")
    n_consumed = sum(k in ("slice", "int", "dynamic") for k in kinds)
    if n_consumed > x.ndim:
        raise IndexError(
            f"mjnp indexing: too many indices for array: array is {x.ndim}-dimensional, but "
            f"{n_consumed} were indexed"
        )
    if n_ellipsis == 0:
        entries, kinds = (*entries, Ellipsis), [*kinds, "ellipsis"]
    # Expand the ellipsis into full slices.
    pos = kinds.index("ellipsis")
    fill = x.ndim - n_consumed
    entries = (*entries[:pos], *([slice(None)] * fill), *entries[pos + 1 :])
    kinds = [*kinds[:pos], *(["slice"] * fill), *kinds[pos + 1 :]]

    shape = x.shape
    starts, limits, strides, rev_axes = [], [], [], []
    squeeze_axes: list[int] = []
    dynamic: dict[int, Any] = {}
    new_axes: list[int] = []  # positions of None entries in the output
    axis = 0
    out_pos = 0
    for entry, kind in zip(entries, kinds, strict=True):
        if kind == "none":
            new_axes.append(out_pos)
            out_pos += 1
            continue
        size = shape[axis]
        if kind == "slice":
            bounds = _slice_bounds(entry, size)
            starts.append(bounds.start)
            limits.append(bounds.limit)
            strides.append(bounds.stride)
            if bounds.reverse:
                rev_axes.append(axis)
            out_pos += 1
        elif kind == "int":
            i = operator.index(entry)
            if not -size <= i < size:
                raise IndexError(
                    f"mjnp indexing: index {i} is out of bounds for axis {axis} with size {size}"
                )
            i %= size
            starts.append(i)
            limits.append(i + 1)
            strides.append(1)
            squeeze_axes.append(axis)
        else:  # dynamic
            if size == 0:
                raise IndexError(
                    f"mjnp indexing: index is out of bounds for axis {axis} with size 0"
                )
            starts.append(0)
            limits.append(size)
            strides.append(1)
            dynamic[axis] = entry
            squeeze_axes.append(axis)
        axis += 1

    out = x
    if starts and (starts != [0] * len(shape) or limits != list(shape) or set(strides) != {1}):
        out = lax.slice(out, tuple(starts), tuple(limits), tuple(strides))
    if rev_axes:
        out = lax.rev(out, tuple(rev_axes))
    if dynamic:
        out = _dynamic_index(out, dynamic)
    if squeeze_axes:
        out = lax.squeeze(out, tuple(squeeze_axes))
    if new_axes:
        out = lax.expand_dims(out, tuple(new_axes))
    return out


def _dynamic_index(x: Array, dynamic: dict[int, Any]) -> Array:
    """Take a size-1 window at the traced indices in `dynamic` (axis -> index), NumPy-wrapped."""
    shape = get_aval(x).shape
    starts = []
    sizes = []
    for axis, size in enumerate(shape):
        if axis in dynamic:
            starts.append(_wrap_negative(dynamic[axis], size))
            sizes.append(1)
        else:
            starts.append(0)
            sizes.append(size)
    return lax.dynamic_slice(x, tuple(starts), tuple(sizes))


def _wrap_negative(i: Any, size: int) -> Any:
    """`i + size` where `i < 0`, computed in the index's own dtype when `size` fits it."""
    dtype = get_aval(i).dtype
    if dtype.kind == "u":
        return i
    if size > np.iinfo(dtype).max:
        i, dtype = lax.convert_element_type(i, _INT64), _INT64
    wrapped = lax.add(i, lax.full((), size, dtype))
    return lax.select_n(lax.lt(i, lax.full((), 0, dtype)), i, wrapped)
