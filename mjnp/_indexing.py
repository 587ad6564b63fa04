"""NumPy indexing: `x[idx]`, `x[idx] = v` and the functional `x.at[idx].set(v)` family.

Basic indices (integers, slices, None/newaxis, Ellipsis) become one `lax.slice`, one `lax.rev`
for negative steps, one `lax.squeeze` and one `lax.expand_dims`; a traced integer scalar becomes
a `lax.dynamic_slice`. Advanced indices (integer arrays and lists, boolean masks, bool scalars)
become one `lax.gather`, with NumPy's placement of the broadcast index axes. Updates scatter
into the flattened array at the positions that indexing an iota selects, so they share every
rule of `getitem`.
"""

from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple

import numpy as np

from mjcore import lax
from mjcore.array import Array as _DeviceArray
from mjcore.callback import debug_callback
from mjcore.config import config
from mjcore.core import Tracer, get_aval, rebind
from mjcore.dispatch import array_value, device_put
from mjcore.errors import NonConcreteBooleanIndexError, TracerIntegerConversionError
from mjcore.fp_errors import quiet_unless_eager
from mjcore.lax import (
    GatherDimensionNumbers,
    ScatterDimensionNumbers,
    gather,
    scatter,
    scatter_add,
    scatter_max,
    scatter_min,
    scatter_mul,
)
from mjnp._elementwise import divide, power
from mjnp._promotion import _contains_traced, asarray_arg

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


def _classify(entry: Any) -> str:
    """One of 'none', 'ellipsis', 'slice', 'int', 'dynamic', 'advanced'; raises otherwise."""
    if entry is None:
        return "none"
    if entry is Ellipsis:
        return "ellipsis"
    if isinstance(entry, slice):
        return "slice"
    if isinstance(entry, bool | np.bool_):
        return "advanced"
    if isinstance(entry, int | np.integer):
        return "int"
    if isinstance(entry, list | tuple):
        return "advanced"
    if isinstance(entry, Tracer):
        aval = entry.aval
        if aval.ndim == 0 and aval.dtype.kind in "iu":
            return "dynamic"
        if aval.dtype.kind in "biu":
            return "advanced"
        raise IndexError(f"mjnp indexing: {_VALID_INDICES}; got a {aval.str_short()} tracer")
    if hasattr(entry, "dtype") and hasattr(entry, "shape"):
        kind = np.dtype(entry.dtype).kind
        if kind in "iu" and tuple(entry.shape) == ():
            return "int"  # a concrete 0-d integer array is a static index, as in NumPy
        if kind in "biu":
            return "advanced"
    raise IndexError(f"mjnp indexing: {_VALID_INDICES}; got {type(entry).__name__} {entry!r:.50}")


def getitem(x: ArrayLike, idx: Any) -> Array:
    """`x[idx]` with NumPy's semantics, basic and advanced.

    Static integer indices, and integer arrays whose values are known (eagerly, or under
    `grad`/`jvp` of eager code), are bounds-checked (IndexError), also under transformations.
    A boolean mask needs its value to fix the result's shape: it works eagerly and raises
    `NonConcreteBooleanIndexError` under `jit`/`vmap`.

    NB: a traced integer index or index array is clamped into range like `lax.dynamic_slice`
    and `lax.gather` (after NumPy's wrapping of negative indices), because its value is unknown
    when the error would be raised.

    Raises:
        IndexError: for an out-of-range static index, too many indices, more than one
            ellipsis, an invalid index type, index arrays that do not broadcast together, or a
            boolean mask whose shape does not match the axes it indexes.
    """
    return _getitem(x, idx)


# JAX's out-of-bounds modes (`jax.lax.GatherScatterMode`): for a gather "fill" and "drop" are
# one mode (out-of-bounds reads give the fill value), as are "clip"/"promise_in_bounds" (clamp);
# for a scatter "fill", "drop" and "promise_in_bounds" skip out-of-bounds updates.
_MODES = ("promise_in_bounds", "clip", "drop", "fill")


def _check_index_mode(name: str, mode: str | None) -> str | None:
    if mode is None or mode in _MODES:
        return mode
    raise ValueError(
        f"mjnp.{name}: mode must be one of 'promise_in_bounds', 'clip', 'drop' or 'fill' "
        f"(JAX's out-of-bounds modes), got {mode!r}"
    )


def _getitem(
    x: ArrayLike,
    idx: Any,
    *,
    mode: str = "clip",
    fill_value: Any = None,
    checked: bool = True,
) -> Array:
    """`x[idx]` where integer indices out of bounds follow `mode` ("clip" clamps after
    NumPy's wrapping of negatives; "fill" gives `fill_value`, JAX's default fill when None).

    Negative indices are wrapped once, so -11 on an axis of 10 is out of bounds. `checked`
    raises IndexError for out-of-bounds indices whose values are known (static ints, concrete
    arrays); only traced indices then meet `mode`.
    """
    if type(idx) is tuple and mode == "clip" and checked:
        out = _point_getitem(x, idx)
        if out is not None:
            return out
    x = asarray_arg("getitem", x)
    entries = idx if isinstance(idx, tuple) else (idx,)
    kinds = [_classify(e) for e in entries]
    if (
        "advanced" in kinds
        or ("dynamic" in kinds and mode == "fill")
        or ("int" in kinds and not checked)
    ):
        return _advanced_getitem(x, entries, mode, fill_value, checked)
    return _basic_getitem(x, entries)


def _point_getitem(x: Any, entries: tuple[Any, ...]) -> Array | None:
    """`x[i0, i1, ...]` for an array or tracer `x` with one known, in-bounds integer index
    array per axis, all of one shape (`f[rows, cols]`), as `_advanced_getitem` computes it (the
    same gather) without its general planning; None for anything else (the general path
    raises the errors)."""
    if not isinstance(x, _DeviceArray | Tracer):
        return None
    shape = get_aval(x).shape
    if len(entries) != len(shape) or len(shape) == 0 or 0 in shape:
        return None
    arrays = []
    batch = None
    for e, size in zip(entries, shape, strict=True):
        t = type(e)
        if t is _DeviceArray:
            e = array_value(e)
        elif t is not np.ndarray:
            return None
        if e.dtype.kind not in "iu" or e.dtype == np.uint64 or e.size == 0:
            return None
        if batch is None:
            batch = e.shape
        elif e.shape != batch:
            return None
        lo, hi = e.min(), e.max()
        if lo < -size or hi >= size:
            return None
        e = e.astype(_INT64)
        arrays.append(np.where(e < 0, e + size, e) if lo < 0 else e)
    axes = tuple(range(len(shape)))
    dnums = GatherDimensionNumbers((), axes, axes)
    # an Array, not a NumPy constant: the gather's vjp body then replays as one program
    indices = device_put(np.stack(arrays, axis=-1))
    return gather(x, indices, dnums, (1,) * len(shape))


def _basic_getitem(x: Array, entries: tuple[Any, ...]) -> Array:
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
            _check_bounds(dynamic[axis], axis, size)
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


# --- advanced indexing ----------------------------------------------------------------------


def _concrete(x: Any) -> np.ndarray | None:
    """The value of an index when it is known (not traced), else None."""
    if isinstance(x, Tracer):
        value = x.to_concrete_value()
        return None if value is None else np.asarray(value)
    return np.asarray(x)


def _mask_indices(mask: Any) -> list[np.ndarray]:
    """`nonzero(mask)` of a boolean mask whose value must be known."""
    value = _concrete(mask)
    if value is None:
        raise NonConcreteBooleanIndexError(
            f"mjnp indexing: a boolean mask {get_aval(mask).str_short()} with a traced value "
            "cannot be used as an index under jit or vmap: the result's shape would depend on "
            "the mask's values. Use mjnp.where(mask, x, fill) to keep the shape fixed."
        )
    return list(np.nonzero(value))


def _index_array(entry: Any) -> Any:
    """A list, array or tracer index as an array (or a tracer); NumPy's dtype for lists."""
    if isinstance(entry, _DeviceArray | Tracer):
        return entry
    arr = np.asarray(entry)
    if arr.size == 0 and arr.dtype.kind == "f":
        arr = arr.astype(np.intp)  # `x[[]]` takes nothing, as in NumPy
    if arr.dtype.kind not in "biu":
        raise IndexError(f"mjnp indexing: {_VALID_INDICES}; got an array of dtype {arr.dtype}")
    return arr


class _Plan(NamedTuple):
    """An index rewritten for one gather: `x` already sliced and with its new axes, and one
    entry per axis of it: a slice(None) or an integer index array."""

    x: Any
    entries: list[Any]


def _expand(x: Array, entries: tuple[Any, ...]) -> _Plan:
    """Turn every index entry into whole slices and integer arrays over the axes of a new `x`:
    None and bool scalars add an axis (indexed by `[0]` or `[]` for a bool), masks become their
    `nonzero` arrays, ints become 0-d arrays, and slices are applied at once."""
    items: list[tuple[str, Any]] = []
    for entry in entries:
        if entry is None or entry is Ellipsis or isinstance(entry, slice):
            items.append(("basic", entry))
        elif isinstance(entry, bool | np.bool_):
            items.append(("newaxis", np.zeros(int(bool(entry)), np.intp)))
        elif isinstance(entry, int | np.integer):
            items.append(("array", np.asarray(int(entry))))
        else:
            arr = _index_array(entry)
            aval = get_aval(arr)
            if aval.dtype.kind == "b" and aval.ndim == 0:
                (value,) = _mask_indices(lax.expand_dims(arr, (0,)))
                items.append(("newaxis", value))
            elif aval.dtype.kind == "b":
                items.append(("mask", arr))
            else:
                items.append(("array", arr))
    consumed = sum(
        get_aval(v).ndim if k == "mask" else (k == "array" or isinstance(v, slice))
        for k, v in items
    )
    if sum(v is Ellipsis for k, v in items) > 1:
        raise IndexError("mjnp indexing: an index can only have a single ellipsis ('...')")
    if consumed > x.ndim:
        raise IndexError(
            f"mjnp indexing: too many indices for array: array is {x.ndim}-dimensional, but "
            f"{consumed} were indexed"
        )
    fill = [("basic", slice(None))] * (x.ndim - consumed)
    pos = next((i for i, (_, v) in enumerate(items) if v is Ellipsis), len(items))
    items = [*items[:pos], *fill, *items[pos + 1 :]]

    new_axes: list[int] = []
    out_entries: list[Any] = []
    basic: list[Any] = []
    axis = 0  # axis of the input x
    for kind, value in items:
        if kind == "newaxis" or value is None:
            new_axes.append(len(out_entries))
            out_entries.append(value if kind == "newaxis" else slice(None))
            basic.append(None)
        elif kind == "mask":
            shape = get_aval(value).shape
            for k, (n, m) in enumerate(zip(x.shape[axis : axis + len(shape)], shape, strict=True)):
                if n != m:
                    raise IndexError(
                        f"mjnp indexing: boolean index did not match indexed array along axis "
                        f"{axis + k}; size of axis is {n} but size of corresponding boolean "
                        f"axis is {m}"
                    )
            for arr in _mask_indices(value):
                out_entries.append(arr)
                basic.append(slice(None))
                axis += 1
        else:
            out_entries.append(value if kind == "array" else slice(None))
            basic.append(value if kind == "basic" else slice(None))
            axis += 1
    # Apply the slices with the basic machinery, then add the new axes.
    x = _basic_getitem(x, tuple(b for b in basic if b is not None))
    if new_axes:
        x = lax.expand_dims(x, tuple(new_axes))
    return _Plan(x, out_entries)


def _normalized_index(arr: Any, axis: int, size: int, checked: bool = True) -> Any:
    """An integer index array bounds-checked when its value is known (and `checked`),
    negatives wrapped once (an index below -size stays out of bounds)."""
    aval = get_aval(arr)
    if aval.dtype.kind not in "iu":
        raise IndexError(f"mjnp indexing: {_VALID_INDICES}; got an array of dtype {aval.dtype}")
    value = _concrete(arr)
    if checked and value is not None and value.size:
        bad = value[(value < -size) | (value >= size)]
        if bad.size:
            raise IndexError(
                f"mjnp indexing: index {bad.flat[0]} is out of bounds for axis {axis} with size "
                f"{size}"
            )
    elif checked and value is None and size == 0 and aval.size:
        raise IndexError(f"mjnp indexing: index is out of bounds for axis {axis} with size 0")
    if value is not None:
        # Known indices are wrapped on the host: the gather gets one constant index array.
        if value.dtype == np.uint64:  # saturate, so a huge index stays out of bounds
            value = np.minimum(value, np.uint64(np.iinfo(_INT64).max))
        value = value.astype(_INT64)
        return np.where(value < 0, value + size, value)
    arr = asarray_arg("getitem", arr)
    if checked:
        _check_bounds(arr, axis, size)
    dtype = aval.dtype
    if dtype.kind == "u":
        if dtype == np.uint64:
            arr = lax.min(arr, lax.full(aval.shape, np.iinfo(_INT64).max, dtype))
        return lax.convert_element_type(arr, _INT64)
    arr = lax.convert_element_type(arr, _INT64)
    zero = lax.full(aval.shape, 0, _INT64)
    wrapped = lax.add(arr, lax.full(aval.shape, size, _INT64))
    return lax.select_n(lax.lt(arr, zero), arr, wrapped)


class _OutOfBounds(NamedTuple):
    """The host side of `checked_indexing`: raises NumPy's IndexError for a bad index.
    A NamedTuple compares by value, so a retraced program hits the compile cache."""

    axis: int
    size: int

    def __call__(self, ok: np.ndarray, index: np.ndarray) -> None:
        if not ok:
            raise IndexError(
                f"mjnp indexing: index {int(index)} is out of bounds for axis {self.axis} with "
                f"size {self.size} (checked_indexing)"
            )


def _check_bounds(index: Any, axis: int, size: int) -> None:
    """Under `mjcore.config.update("checked_indexing", True)`, make the running program raise
    IndexError (through a host callback, at the call) if a traced `index` is out of bounds;
    the callback composes with jit, vmap, grad and control flow as `mjcore.debug.callback`."""
    if not config.read("checked_indexing") or not isinstance(index, Tracer):
        return
    aval = get_aval(index)
    if aval.size == 0:
        return
    flat = lax.reshape(index, (aval.size,))
    if aval.dtype == np.uint64:  # saturate, so that a huge index stays out of bounds
        flat = lax.min(flat, lax.full((aval.size,), np.iinfo(_INT64).max, aval.dtype))
    flat = lax.convert_element_type(flat, _INT64)
    lo = lax.full((aval.size,), -size if aval.dtype.kind == "i" else 0, _INT64)
    hi = lax.full((aval.size,), size, _INT64)
    good = lax.bitwise_and(lax.ge(flat, lo), lax.lt(flat, hi))
    first_bad = lax.argmin(lax.convert_element_type(good, np.int32), 0, np.int32)
    bad = lax.reshape(lax.dynamic_slice(flat, (first_bad,), (1,)), ())
    # (the ignore: mypy does not see the __call__ of a NamedTuple)
    debug_callback(_OutOfBounds(axis, size), lax.reduce_and(good, (0,)), bad)  # type: ignore[arg-type]


def _broadcast_indices(arrays: list[Any]) -> tuple[list[Any], tuple[int, ...]]:
    shapes = [get_aval(a).shape for a in arrays]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError as err:
        raise IndexError(
            "mjnp indexing: shape mismatch: indexing arrays could not be broadcast together "
            "with shapes " + " ".join(str(s) for s in shapes)
        ) from err
    if all(isinstance(a, np.ndarray) for a in arrays):
        return list(np.broadcast_arrays(*arrays)), shape
    return [lax.broadcast_to(a, shape) for a in arrays], shape


def _advanced_getitem(
    x: Array,
    entries: tuple[Any, ...],
    mode: str = "clip",
    fill_value: Any = None,
    checked: bool = True,
) -> Array:
    plan = _expand(x, entries)
    x = plan.x
    shape = get_aval(x).shape
    axes = [i for i, e in enumerate(plan.entries) if not isinstance(e, slice)]
    arrays = [_normalized_index(plan.entries[a], a, shape[a], checked) for a in axes]
    arrays, batch = _broadcast_indices(arrays)
    rest = [d for d in range(len(shape)) if d not in axes]
    contiguous = axes == list(range(axes[0], axes[0] + len(axes)))
    if contiguous:
        # NumPy: adjacent advanced indices put their axes where they stand.
        lead = [d for d in rest if d < axes[0]]
        out_shape = (*shape[: axes[0]], *batch, *shape[axes[-1] + 1 :])
        offset_dims = [*range(len(lead)), *(i + len(batch) for i in range(len(lead), len(rest)))]
    else:
        # NumPy: advanced indices separated by a slice put their axes first.
        out_shape = (*batch, *(shape[d] for d in rest))
        offset_dims = [len(batch) + i for i in range(len(rest))]
    dtype = get_aval(x).dtype
    fill = mode in ("fill", "drop")
    if math.prod(out_shape) == 0 or math.prod(shape) == 0:
        # Every index into an empty axis is out of bounds: filled, or zeros where clamped.
        value = _fill_value(dtype, fill_value) if fill else 0
        return lax.full(out_shape, value, dtype, get_aval(x).weak_type)
    if fill and all(isinstance(a, np.ndarray) for a in arrays):
        # Known indices all in bounds (always so when checked) need no fill: a plain gather.
        fill = not all(((a >= 0) & (a < shape[d])).all() for a, d in zip(arrays, axes, strict=True))
    if all(isinstance(a, np.ndarray) for a in arrays):
        indices = np.stack(arrays, axis=-1)
    else:
        indices = lax.concatenate([lax.expand_dims(a, (len(batch),)) for a in arrays], len(batch))
    dnums = GatherDimensionNumbers(tuple(offset_dims), tuple(axes), tuple(axes))
    slice_sizes = tuple(1 if d in axes else n for d, n in enumerate(shape))
    if fill:
        fill_value = _fill_value(dtype, fill_value)
        return gather(x, indices, dnums, slice_sizes, mode="fill", fill_value=fill_value)
    return gather(x, indices, dnums, slice_sizes)


def _fill_value(dtype: np.dtype, fill_value: Any) -> Any:
    """JAX's fill for out-of-bounds reads: NaN (inexact), the lowest signed or highest
    unsigned integer, True; a given `fill_value` converted as NumPy converts it."""
    if fill_value is None:
        if dtype.kind in "fc":
            return np.nan
        if dtype.kind == "b":
            return True
        return np.iinfo(dtype).min if dtype.kind == "i" else np.iinfo(dtype).max
    if isinstance(fill_value, _DeviceArray | Tracer):
        raise TypeError(
            "mjnp indexing: fill_value must be a Python or NumPy scalar (it is a static "
            f"parameter of the gather), got {type(fill_value).__name__}"
        )
    return host_values("at.get", fill_value, dtype).item()


# --- updates: x[idx] = v and x.at[idx] ------------------------------------------------------


def host_values(name: str, values: Any, dtype: np.dtype) -> Any:
    """`values` for a write into an array of `dtype`: anything but an array or a tracer
    (Python and NumPy scalars, untraced sequences) converted as `numpy.asarray(values, dtype)`,
    the way NumPy's `x[i] = v`, put, place and putmask convert it; arrays, tracers and
    sequences holding tracers are returned unchanged (the caller casts them).

    Raises:
        OverflowError: for a Python int (or a float, truncated) out of range of an integer
            `dtype` (NEP 50: NumPy raises rather than wrapping), e.g. 300 into uint8.
        ValueError: for a NaN into an integer `dtype`.
        TypeError: for a complex into a real `dtype`.
    """
    if isinstance(values, np.ndarray | _DeviceArray | Tracer) or (
        isinstance(values, list | tuple) and _contains_traced(values)
    ):
        return values
    try:
        with quiet_unless_eager():  # NumPy's cast warnings when eager (docs/errors.md)
            return np.asarray(values, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as err:
        raise type(err)(f"mjnp.{name}: cannot convert {values!r:.80} to {dtype}: {err}") from err


def _update(
    x: ArrayLike,
    idx: Any,
    values: ArrayLike,
    scatter_fun: Any,
    name: str,
    mode: str | None = None,
) -> Array:
    """`x` with `scatter_fun` applied at the elements `x[idx]` selects, `values` broadcast.

    Out-of-bounds indices follow JAX's scatter `mode`: "clip" clamps them (after wrapping
    negatives once), every other mode drops their updates. `mode=None` raises IndexError for
    out-of-bounds indices whose values are known (NumPy) and drops traced ones (JAX).
    """
    x = asarray_arg(name, x)
    aval = get_aval(x)
    iota = lax.reshape(lax.iota(_INT64, aval.size), aval.shape)
    if mode == "clip":
        positions = _getitem(iota, idx, checked=False)
    else:
        # Out-of-bounds positions become `aval.size`, which the flat scatter drops.
        positions = _getitem(iota, idx, mode="fill", fill_value=aval.size, checked=mode is None)
    target = get_aval(positions).shape
    values = asarray_arg(name, host_values(name, values, aval.dtype))
    values = lax.convert_element_type(values, aval.dtype, aval.weak_type)
    vshape = get_aval(values).shape
    while len(vshape) > len(target) and vshape[0] == 1:
        values = lax.reshape(values, vshape[1:])  # NumPy drops leading unit axes of the value
        vshape = vshape[1:]
    try:
        if np.broadcast_shapes(vshape, target) != target:
            raise ValueError
    except ValueError as err:
        raise ValueError(
            f"mjnp.{name}: could not broadcast input array from shape {vshape} into shape {target}"
        ) from err
    count = math.prod(target)
    if count == 0 or aval.size == 0:
        return x
    values = lax.reshape(lax.broadcast_to(values, target), (count,))
    positions = lax.reshape(positions, (count, 1))
    flat = lax.reshape(x, (aval.size,))
    out = scatter_fun(flat, positions, values, _FLAT_SCATTER)
    return lax.reshape(out, aval.shape)


_FLAT_SCATTER = ScatterDimensionNumbers((), (0,), (0,))


def setitem(x: Array, idx: Any, value: ArrayLike) -> None:
    """`x[idx] = value`: rebinds the handle `x` to the updated array (see `.at[]`).

    NB: mjnp arrays are immutable values; the assignment makes `x` (this Python object) hold
    the new value, so other names bound to the old value are not changed, unlike NumPy views.
    Duplicate indices keep one of the values, as in NumPy (the last, on CPU).
    Under a transformation the handle must be a value of that transformation (e.g. an
    argument or an array computed from one); filling a constant such as `zeros(n)` with traced
    values raises TypeError there: write `out = out.at[i].set(v)` instead.
    """
    rebind(x, _update(x, idx, value, scatter, "setitem"))


def fill(x: Array, value: ArrayLike) -> None:
    """`x.fill(value)`: rebinds the handle `x` to an array of its shape and dtype holding
    `value` everywhere, as `numpy.ndarray.fill` (the handle and transformations as `setitem`).

    `value` converts as NumPy's fill converts it: a Python or NumPy scalar as
    `numpy.asarray(value, x.dtype)` (1.5 into an int array is 1), an array or tracer cast
    unsafely.

    Raises:
        OverflowError: for a Python int (or a float, truncated) out of range of an integer
            dtype, e.g. 300 into uint8, as NumPy raises.
        TypeError: for a complex into a real integer or float dtype.
        ValueError: for a NaN into an integer dtype, and for a `value` that is not 0-d.
    """
    aval = get_aval(x)
    v = asarray_arg("fill", host_values("fill", value, aval.dtype))
    if get_aval(v).ndim != 0:
        raise ValueError(
            f"mjnp.fill: value must be a scalar or a 0-d array, got an array of shape "
            f"{get_aval(v).shape}; to write an array use x[...] = value"
        )
    v = lax.convert_element_type(v, aval.dtype, aval.weak_type)
    new = lax.broadcast_to(v, aval.shape)
    if isinstance(x, Tracer) and type(new) is not type(x):
        # a constant beside a traced `x` (a view of it filled under vmap or grad): the same
        # value, computed from `x`, so that the handle keeps its kind
        new = at(x)[...].set(new)
    rebind(x, new)


def _factors(x: ArrayLike, idx: Any, values: ArrayLike, name: str, mode: str | None) -> Array:
    """Ones shaped like `x` multiplied by `values` at `idx` (JAX's divide and power)."""
    aval = get_aval(asarray_arg(name, x))
    ones = lax.full(aval.shape, 1, aval.dtype, aval.weak_type)
    return _update(ones, idx, values, scatter_mul, name, mode)


class _IndexUpdateRef:
    """`x.at[idx]`: functional updates of the elements `x[idx]` selects (JAX's `.at`).

    Every method takes JAX's `mode` for out-of-bounds indices ("promise_in_bounds", "clip",
    "drop", "fill"; see `jax.numpy.ndarray.at`). With the default `mode=None`, an index whose
    value is known (a Python int, a concrete array) is checked and raises IndexError as NumPy
    does; a traced index is clamped by `get` and dropped by the updates, as in JAX.
    `indices_are_sorted` and `unique_indices` are accepted hints, unused.
    """

    __slots__ = ("array", "index")

    def __init__(self, array: Any, index: Any):
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def _update(self, values: ArrayLike, scatter_fun: Any, name: str, mode: str | None) -> Array:
        mode = _check_index_mode(name, mode)
        return _update(self.array, self.index, values, scatter_fun, name, mode)

    def get(
        self,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | None = None,
        fill_value: Any = None,
    ) -> Array:
        """`x[idx]`; out of bounds, "fill"/"drop" give `fill_value` (NaN, the lowest signed
        or highest unsigned integer, True when None), "clip"/"promise_in_bounds" clamp."""
        del indices_are_sorted, unique_indices
        mode = _check_index_mode("at.get", mode)
        if mode is None:
            return getitem(self.array, self.index)  # JAX: fill_value alone changes nothing
        gather_mode = "fill" if mode in ("fill", "drop") else "clip"
        return _getitem(
            self.array, self.index, mode=gather_mode, fill_value=fill_value, checked=False
        )

    def set(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | None = None,
    ) -> Array:
        """A copy of `x` with `x[idx] = values`."""
        return self._update(values, scatter, "at.set", mode)

    def add(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | None = None,
    ) -> Array:
        """A copy of `x` with `values` added at `idx`; duplicate indices accumulate."""
        return self._update(values, scatter_add, "at.add", mode)

    def subtract(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | None = None,
    ) -> Array:
        """A copy of `x` with `values` subtracted at `idx`; duplicate indices accumulate."""
        values = asarray_arg("at.subtract", values)
        return self._update(lax.neg(values), scatter_add, "at.subtract", mode)

    def multiply(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | None = None,
    ) -> Array:
        """A copy of `x` multiplied by `values` at `idx`; duplicate indices accumulate.

        NB: as in JAX, not differentiable with respect to `values`.
        """
        return self._update(values, scatter_mul, "at.multiply", mode)

    def divide(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | None = None,
    ) -> Array:
        """`x` divided by `values` at `idx` (true division; duplicates accumulate)."""
        mode = _check_index_mode("at.divide", mode)
        return divide(self.array, _factors(self.array, self.index, values, "at.divide", mode))

    def power(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | None = None,
    ) -> Array:
        """`x` raised to `values` at `idx` (duplicate exponents multiply, as in JAX)."""
        mode = _check_index_mode("at.power", mode)
        return power(self.array, _factors(self.array, self.index, values, "at.power", mode))

    def min(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | None = None,
    ) -> Array:
        """A copy of `x` with `minimum(x[idx], values)` at `idx`."""
        return self._update(values, scatter_min, "at.min", mode)

    def max(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | None = None,
    ) -> Array:
        """A copy of `x` with `maximum(x[idx], values)` at `idx`."""
        return self._update(values, scatter_max, "at.max", mode)


class _IndexUpdateHelper:
    """The `x.at` property: `x.at[idx]` gives the update methods."""

    __slots__ = ("array",)

    def __init__(self, array: Any):
        self.array = array

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)


def at(x: Any) -> _IndexUpdateHelper:
    """The `.at` property of arrays and tracers."""
    return _IndexUpdateHelper(x)
