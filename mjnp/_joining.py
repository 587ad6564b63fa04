"""Joining, splitting and rearranging arrays: concatenate, stack, split, tile, repeat, roll, pad.

NumPy's "array manipulation routines" that move whole blocks of elements around. All of them are
slices, concatenations, reversals and broadcasts of the inputs (static shapes), so they are linear
and every transformation applies. Index arguments (split points, repeat counts, deleted indices)
are static: they must be concrete values, as they decide the shape of the result.
"""

from __future__ import annotations

import builtins
import math
import operator
import warnings
from collections.abc import Iterable, Sequence
from typing import Any, TypeGuard, overload

import numpy as np
from numpy.exceptions import AxisError
from numpy.lib.array_utils import normalize_axis_index

from mjcore import core, dtypes, lax
from mjcore.array import Array as _Array
from mjcore.array import wrap_host
from mjcore.core import Tracer
from mjcore.dispatch import array_value, host_plan, host_view, is_eager_host
from mjcore.dtypes import Casting, DTypeLike, canonicalize_dtype
from mjcore.errors import ConcretizationTypeError
from mjcore.fp_errors import quiet_unless_eager
from mjcore.lax.structural import concatenate_p
from mjnp import _elementwise as ew
from mjnp import _reductions, _statistics
from mjnp._creation import linspace
from mjnp._host_numpy import numpy_call, plain
from mjnp._indexing import host_values
from mjnp._manipulation import (
    asarray_strong,
    moveaxis,
    new_handle,
    normalize_axes,
    normalize_axis,
    ravel,
)
from mjnp._out import write_out
from mjnp._promotion import _contains_traced, asarray_arg

ArrayLike = Any
Array = Any

_BOOL = np.dtype(bool)
_INT64 = np.dtype("int64")


# --- helpers --------------------------------------------------------------------------------


def _as_list(fname: str, arrays: Any) -> list[Array]:
    """A sequence of array-likes (or an array, iterated over its first axis) as strong arrays."""
    if isinstance(arrays, _Array | Tracer | np.ndarray):
        arr = asarray_strong(fname, arrays)
        if arr.ndim == 0:
            raise TypeError(f"mjnp.{fname}: expected a sequence of arrays, got a 0-d array")
        return [_index0(arr, i) for i in range(arr.shape[0])]
    if not isinstance(arrays, Sequence) or isinstance(arrays, str | bytes):
        raise TypeError(
            f"mjnp.{fname}: arrays to {fname} must be passed as a sequence type such as list or "
            f"tuple, got {type(arrays).__name__}"
        )
    return [asarray_strong(fname, a) for a in arrays]


def _index0(x: Array, i: int) -> Array:
    """`x[i]` for a static `i` along axis 0."""
    return lax.squeeze(lax.slice_in_dim(x, i, i + 1, 0), (0,))


def _slice_axis(x: Array, start: int, stop: int, axis: int, stride: int = 1) -> Array:
    starts = [0] * x.ndim
    limits = list(x.shape)
    strides = [1] * x.ndim
    starts[axis], limits[axis], strides[axis] = start, stop, stride
    return lax.slice(x, tuple(starts), tuple(limits), tuple(strides))


def _dtype_and_casting(
    fname: str, arrays: list[Array], dtype: DTypeLike | None, casting: Casting
) -> np.dtype:
    """The result dtype of joining `arrays` (with `dtype=` and `casting=` as NumPy checks them)."""
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError(
            f"mjnp.{fname}: casting must be one of 'no', 'equiv', 'safe', 'same_kind', or "
            f"'unsafe', got {casting!r}"
        )
    if dtype is None:
        out, _ = dtypes.result_type(*arrays, fname=f"mjnp.{fname}")
    else:
        out = canonicalize_dtype(dtype, f"mjnp.{fname}")
    for a in arrays:
        if not np.can_cast(a.dtype, out, casting=casting):
            raise TypeError(
                f"mjnp.{fname}: cannot cast array data from {a.dtype} to {out} according to the "
                f"rule {casting!r}"
            )
    return out


def _out_dtype(fname: str, out: Any, dtype: DTypeLike | None) -> DTypeLike | None:
    """The dtype to join in: `out`'s when given (each input must cast to it by `casting`)."""
    if out is None:
        return dtype
    if dtype is not None:
        raise TypeError(
            f"mjnp.{fname}: only takes `out` or `dtype` as an argument, but both were provided"
        )
    return getattr(out, "dtype", None)


def _same_arrays(arrays: Any, axis: Any, extra: int) -> int | None:
    """The normalised axis when `arrays` is a list or tuple of at least two Arrays of one
    strong aval with at least one axis and `axis` a Python int in range (`extra`: 1 for a new
    axis, as `stack` makes): then joining them needs no promotion or checks, and the
    primitive runs straight away (the eager breadth case, ~20 µs of Python less). Else None."""
    if type(arrays) is not list and type(arrays) is not tuple or len(arrays) < 2:
        return None
    first = arrays[0]
    if type(first) is not _Array or type(axis) is not int:
        return None
    aval = first.aval
    for a in arrays:
        if type(a) is not _Array or a.aval is not aval:  # avals are interned
            return None
    n = len(aval.shape) + extra
    if aval.weak_type or not aval.shape or not -n <= axis < n:
        return None
    return axis % n


_HOST_JOINS_SIZE = 1024
# (aval, number of operands, axis) -> the result's aval, or None where XLA joins them; bounded
_host_joins: dict[tuple[Any, int, int], Any] = {}


def _host_concatenate(arrays: Sequence[Array], ax: int) -> Array | None:
    """`concatenate_p.bind1(*arrays, dimension=ax)` for Arrays of one aval (`_same_arrays`),
    eagerly on CPU: NumPy joins the host values, as the primitive's host rule does there, without
    the bind and dispatch layers (~1.5 µs of `concatenate([x, x])`'s ~5). None where the
    primitive must run instead (traced, not on CPU, or too large for its host rule)."""
    if not is_eager_host():
        return None
    aval = arrays[0].aval
    n = len(arrays)
    key = (aval, n, ax)
    if key in _host_joins:
        aval_out = _host_joins[key]
    else:
        avals_out, use_host = host_plan(concatenate_p, (aval,) * n, {"dimension": ax})
        aval_out = avals_out[0] if use_host else None
        if len(_host_joins) >= _HOST_JOINS_SIZE:
            _host_joins.clear()
        _host_joins[key] = aval_out
    if aval_out is None:
        return None
    values = [array_value(a) for a in arrays]
    return wrap_host(np.concatenate(values, axis=ax), aval_out)


def _concat(arrays: list[Array], axis: int, dtype: np.dtype) -> Array:
    arrays = [lax.convert_element_type(a, dtype) for a in arrays]
    nonempty = [a for a in arrays if a.shape[axis]]
    if len(nonempty) == 1:
        # A new array, as NumPy's: the input itself would follow a later write `b[i] = v`.
        return new_handle(nonempty[0])
    return lax.concatenate(arrays, axis)


def _concrete_ints(fname: str, argname: str, x: Any) -> np.ndarray:
    """A static integer argument (int, sequence or concrete array) as a host int64 array."""
    if isinstance(x, Tracer):
        x = core.concrete_or_error(x, f"mjnp.{fname}({argname}=...)")
    value = np.asarray(x)
    if value.dtype.kind == "b" or (value.dtype.kind not in "iu" and value.size):
        raise TypeError(
            f"mjnp.{fname}: {argname} must be integers, got {x!r:.80} of dtype {value.dtype}"
        )
    return value.astype(_INT64)


def _take_static(x: Array, idx: Sequence[int] | np.ndarray, axis: int) -> Array:
    """`x` indexed along `axis` by the static non-negative indices `idx` (a NumPy `take`).

    Runs of consecutive, reversed or repeated indices become one slice (and reversal or
    broadcast) each, so the common gathers (reflections, repetitions, deletions) stay cheap.
    """
    idx = [int(i) for i in idx]
    if not idx:
        shape = list(x.shape)
        shape[axis] = 0
        return lax.full(tuple(shape), 0, x.dtype)
    pieces = []
    i = 0
    while i < len(idx):
        j = i + 1
        step = idx[j] - idx[i] if j < len(idx) else 1
        if step not in (-1, 0, 1):
            step = 1
        while j < len(idx) and idx[j] - idx[j - 1] == step:
            j += 1
        first, count = idx[i], j - i
        if step == 1:
            pieces.append(_slice_axis(x, first, first + count, axis))
        elif step == -1:
            pieces.append(lax.rev(_slice_axis(x, first - count + 1, first + 1, axis), (axis,)))
        else:
            piece = _slice_axis(x, first, first + 1, axis)
            shape = list(x.shape)
            shape[axis] = count
            pieces.append(lax.broadcast_to(piece, tuple(shape)))
        i = j
    return pieces[0] if len(pieces) == 1 else lax.concatenate(pieces, axis)


# --- joining --------------------------------------------------------------------------------


def concatenate(
    arrays: Sequence[ArrayLike],
    /,
    axis: int | None = 0,
    out: Any = None,
    *,
    dtype: DTypeLike | None = None,
    casting: Casting = "same_kind",
) -> Array:
    """Join arrays along an existing axis, as `numpy.concatenate`.

    `axis=None` flattens the arrays first. `out=` rebinds the given array.
    """
    if out is None and dtype is None and casting == "same_kind":
        ax = _same_arrays(arrays, axis, 0)
        if ax is not None:  # `lax.concatenate`, its axis normalised
            out = _host_concatenate(arrays, ax)
            return concatenate_p.bind1(*arrays, dimension=ax) if out is None else out
    return write_out("concatenate", out, _concatenate(arrays, axis, out, dtype, casting))


def _concatenate(
    arrays: Sequence[ArrayLike], axis: int | None, out: Any, dtype: Any, casting: Casting
) -> Array:
    dtype = _out_dtype("concatenate", out, dtype)
    arrs = _as_list("concatenate", arrays)
    if not arrs:
        raise ValueError("mjnp.concatenate: need at least one array to concatenate")
    if axis is None:
        return _concat(
            [ravel(a) for a in arrs], 0, _dtype_and_casting("concatenate", arrs, dtype, casting)
        )
    if arrs[0].ndim == 0:
        raise ValueError("mjnp.concatenate: zero-dimensional arrays cannot be concatenated")
    ndim = arrs[0].ndim
    ax = normalize_axis("concatenate", axis, ndim, allow_bool=False)
    for i, a in enumerate(arrs):
        if a.ndim != ndim:
            raise ValueError(
                "mjnp.concatenate: all the input arrays must have same number of dimensions, but "
                f"the array at index 0 has {ndim} dimension(s) and the array at index {i} has "
                f"{a.ndim} dimension(s)"
            )
        for d in range(ndim):
            if d != ax and a.shape[d] != arrs[0].shape[d]:
                raise ValueError(
                    "mjnp.concatenate: all the input array dimensions except for the "
                    f"concatenation axis must match exactly, but along dimension {d}, the array "
                    f"at index 0 has size {arrs[0].shape[d]} and the array at index {i} has size "
                    f"{a.shape[d]}"
                )
    return _concat(arrs, ax, _dtype_and_casting("concatenate", arrs, dtype, casting))


concat = concatenate


def stack(
    arrays: Sequence[ArrayLike],
    axis: int = 0,
    out: Any = None,
    *,
    dtype: DTypeLike | None = None,
    casting: Casting = "same_kind",
) -> Array:
    """Join arrays of one shape along a new axis, as `numpy.stack` (`out=` rebinds the given
    array)."""
    if out is None and dtype is None and casting == "same_kind":
        ax = _same_arrays(arrays, axis, 1)
        if ax is not None:
            shape = arrays[0].aval.shape
            shape = (*shape[:ax], 1, *shape[ax:])
            parts = []
            on_host = True
            for a in arrays:
                part = host_view(a, "reshape", shape)  # eagerly on CPU: NumPy's view
                if part is None:
                    on_host = False
                    part = lax.expand_dims(a, (ax,))
                parts.append(part)
            out = _host_concatenate(parts, ax) if on_host else None  # parts: one aval
            return concatenate_p.bind1(*parts, dimension=ax) if out is None else out
    dtype = _out_dtype("stack", out, dtype)
    arrs = _as_list("stack", arrays)
    if not arrs:
        raise ValueError("mjnp.stack: need at least one array to stack")
    if len({a.shape for a in arrs}) != 1:
        raise ValueError(
            "mjnp.stack: all input arrays must have the same shape, got "
            + ", ".join(str(a.shape) for a in arrs)
        )
    ax = normalize_axis("stack", axis, arrs[0].ndim + 1)
    dt = _dtype_and_casting("stack", arrs, dtype, casting)
    return write_out("stack", out, _concat([lax.expand_dims(a, (ax,)) for a in arrs], ax, dt))


def _check_sequence(fname: str, tup: Any) -> None:
    if not isinstance(tup, Sequence | _Array | Tracer | np.ndarray) or isinstance(tup, str):
        raise TypeError(
            f"mjnp.{fname}: arrays to stack must be passed as a sequence type such as list or "
            f"tuple, got {type(tup).__name__}"
        )


def hstack(
    tup: Sequence[ArrayLike], *, dtype: DTypeLike | None = None, casting: Casting = "same_kind"
) -> Array:
    """Stack arrays column-wise (axis 1, or 0 for 1-d arrays), as `numpy.hstack`."""
    _check_sequence("hstack", tup)
    arrs = [_atleast_nd(a, 1) for a in _as_list("hstack", tup)]
    axis = 0 if arrs and arrs[0].ndim == 1 else 1
    return concatenate(arrs, axis, dtype=dtype, casting=casting)


def vstack(
    tup: Sequence[ArrayLike], *, dtype: DTypeLike | None = None, casting: Casting = "same_kind"
) -> Array:
    """Stack arrays row-wise (1-d arrays become rows), as `numpy.vstack`."""
    _check_sequence("vstack", tup)
    arrs = [_atleast_nd(a, 2) for a in _as_list("vstack", tup)]
    return concatenate(arrs, 0, dtype=dtype, casting=casting)


def row_stack(
    tup: Sequence[ArrayLike], *, dtype: DTypeLike | None = None, casting: Casting = "same_kind"
) -> Array:
    """`vstack`, with NumPy's DeprecationWarning for the alias (`numpy.row_stack`)."""
    warnings.warn(
        "`row_stack` alias is deprecated. Use `mjnp.vstack` directly.",
        DeprecationWarning,
        stacklevel=2,
    )
    return vstack(tup, dtype=dtype, casting=casting)


def dstack(tup: Sequence[ArrayLike]) -> Array:
    """Stack arrays depth-wise (along axis 2), as `numpy.dstack`."""
    _check_sequence("dstack", tup)
    arrs = [_atleast_nd(a, 3) for a in _as_list("dstack", tup)]
    return concatenate(arrs, 2)


def column_stack(tup: Sequence[ArrayLike]) -> Array:
    """Stack 1-d arrays as columns of a 2-d array, as `numpy.column_stack`."""
    _check_sequence("column_stack", tup)
    arrs = [lax.reshape(a, (a.size, 1)) if a.ndim < 2 else a for a in _as_list("column_stack", tup)]
    return concatenate(arrs, 1)


def _block_depth(fname: str, arrays: Any, index: tuple[int, ...]) -> tuple[int, int]:
    """(list depth, max array ndim) of a nested `block` argument, checking it as NumPy does."""
    if isinstance(arrays, tuple):
        raise TypeError(
            f"mjnp.{fname}: {_block_index(index)} is a tuple. Only lists can be used to arrange "
            "blocks, and np.block does not allow implicit conversion from tuple to ndarray."
        )
    if isinstance(arrays, list):
        if not arrays:
            raise ValueError(f"mjnp.{fname}: List at {_block_index(index)} cannot be empty")
        results = [_block_depth(fname, a, (*index, i)) for i, a in enumerate(arrays)]
        depths = {d for d, _ in results}
        if len(depths) != 1:
            raise ValueError(
                f"mjnp.{fname}: List depths are mismatched at {_block_index(index)}: got depths "
                f"{sorted(depths)}"
            )
        return depths.pop() + 1, builtins.max(n for _, n in results)
    return 0, asarray_strong(fname, arrays).ndim


def _block_index(index: tuple[int, ...]) -> str:
    return "arrays" + "".join(f"[{i}]" for i in index)


def _block_assemble(arrays: Any, depth: int, ndim: int) -> Array:
    if not isinstance(arrays, list):
        x = asarray_strong("block", arrays)
        return lax.reshape(x, (1,) * (ndim - x.ndim) + x.shape)
    parts = [_block_assemble(a, depth - 1, ndim) for a in arrays]
    return concatenate(parts, axis=-depth)


def block(arrays: Any) -> Array:
    """Assemble an array from nested lists of blocks, as `numpy.block`."""
    depth, max_ndim = _block_depth("block", arrays, ())
    ndim = builtins.max(depth, max_ndim)
    out = _block_assemble(arrays, depth, ndim)
    return new_handle(out) if out is arrays else out  # `block(x)` is a new array, as NumPy's


def append(arr: ArrayLike, values: ArrayLike, axis: int | None = None) -> Array:
    """`arr` with `values` appended (both flattened when `axis` is None), as `numpy.append`."""
    arr, values = asarray_strong("append", arr), asarray_strong("append", values)
    if axis is None:
        return concatenate((ravel(arr), ravel(values)), 0)
    return concatenate((arr, values), axis)


# --- splitting ------------------------------------------------------------------------------


def _split(fname: str, ary: Array, indices_or_sections: Any, axis: int, equal: bool) -> list:
    if ary.ndim == 0:
        raise AxisError(axis, 0, f"mjnp.{fname}")
    axis = normalize_axis(fname, axis, ary.ndim)
    n = ary.shape[axis]
    points = _concrete_ints(fname, "indices_or_sections", indices_or_sections)
    if points.ndim == 0:
        sections = int(points)
        if equal and sections == 0:
            raise ZeroDivisionError("mjnp.split: integer division or modulo by zero (0 sections)")
        if sections <= 0:
            raise ValueError(f"mjnp.{fname}: number sections must be larger than 0, got {sections}")
        if equal and n % sections:
            raise ValueError(
                f"mjnp.{fname}: array split does not result in an equal division: {n} elements "
                f"into {sections} sections"
            )
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = np.cumsum([0, *sizes])
        pairs = list(zip(bounds[:-1], bounds[1:], strict=True))
    else:
        div = [0, *points.ravel().tolist(), n]
        pairs = [
            builtins.slice(a, b).indices(n)[:2] for a, b in zip(div[:-1], div[1:], strict=True)
        ]
    return [_slice_axis(ary, int(a), builtins.max(int(a), int(b)), axis) for a, b in pairs]


def split(ary: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Array]:
    """Split into equal sections or at the given indices, as `numpy.split`."""
    if plain(indices_or_sections, axis):
        out = numpy_call(np.split, ary, indices_or_sections, axis)  # eagerly on CPU: NumPy's
        if out is not None:
            return out
    return _split("split", asarray_strong("split", ary), indices_or_sections, axis, True)


def array_split(ary: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Array]:
    """Split into (nearly) equal sections or at the given indices, as `numpy.array_split`."""
    if plain(indices_or_sections, axis):
        out = numpy_call(np.array_split, ary, indices_or_sections, axis)  # eagerly on CPU
        if out is not None:
            return out
    return _split(
        "array_split", asarray_strong("array_split", ary), indices_or_sections, axis, False
    )


def hsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Array]:
    """Split along axis 1 (axis 0 for 1-d arrays), as `numpy.hsplit`."""
    ary = asarray_strong("hsplit", ary)
    if ary.ndim == 0:
        raise ValueError("mjnp.hsplit: hsplit only works on arrays of 1 or more dimensions")
    return _split("hsplit", ary, indices_or_sections, 1 if ary.ndim > 1 else 0, True)


def vsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Array]:
    """Split along axis 0 of an array of 2 or more dimensions, as `numpy.vsplit`."""
    ary = asarray_strong("vsplit", ary)
    if ary.ndim < 2:
        raise ValueError("mjnp.vsplit: vsplit only works on arrays of 2 or more dimensions")
    return _split("vsplit", ary, indices_or_sections, 0, True)


def dsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Array]:
    """Split along axis 2 of an array of 3 or more dimensions, as `numpy.dsplit`."""
    ary = asarray_strong("dsplit", ary)
    if ary.ndim < 3:
        raise ValueError("mjnp.dsplit: dsplit only works on arrays of 3 or more dimensions")
    return _split("dsplit", ary, indices_or_sections, 2, True)


def unstack(x: ArrayLike, /, *, axis: int = 0) -> tuple[Array, ...]:
    """The slices of `x` along `axis`, as `numpy.unstack`."""
    x = asarray_strong("unstack", x)
    if x.ndim == 0:
        raise ValueError("mjnp.unstack: Input array must be at least 1-d.")
    axis = normalize_axis("unstack", axis, x.ndim)
    x = moveaxis(x, axis, 0)
    return tuple(_index0(x, i) for i in range(x.shape[0]))


# --- repeating ------------------------------------------------------------------------------


def tile(A: ArrayLike, reps: Any) -> Array:  # noqa: N803  (NumPy's argument name)
    """Repeat the whole of `A` `reps` times along each axis, as `numpy.tile`."""
    if plain(reps):
        out = numpy_call(np.tile, A, reps)  # eagerly on CPU: NumPy's
        if out is not None:
            return out
    a = asarray_strong("tile", A)
    reps_arr = _concrete_ints("tile", "reps", reps)
    reps_t = tuple(int(r) for r in reps_arr.ravel()) if reps_arr.ndim else (int(reps_arr),)
    if any(r < 0 for r in reps_t):
        raise ValueError(f"mjnp.tile: negative dimensions are not allowed, got reps={reps_t}")
    ndim = builtins.max(a.ndim, len(reps_t))
    reps_t = (1,) * (ndim - len(reps_t)) + reps_t
    a = lax.reshape(a, (1,) * (ndim - a.ndim) + a.shape)
    wide = tuple(d for pair in zip(reps_t, a.shape, strict=True) for d in pair)
    out = lax.broadcast_in_dim(a, wide, tuple(range(1, 2 * ndim, 2)))
    return lax.reshape(out, tuple(r * d for r, d in zip(reps_t, a.shape, strict=True)))


def repeat(a: ArrayLike, repeats: Any, axis: int | None = None) -> Array:
    """Repeat each element of `a` `repeats` times, as `numpy.repeat`.

    `repeats` is an int or one count per element along `axis`. It fixes the shape of the result,
    so it must be concrete: under `jit`, pass it as a static argument or close over a NumPy
    array.
    """
    if plain(repeats, axis):
        out = numpy_call(np.ndarray.repeat, a, repeats, axis)  # eagerly on CPU: NumPy's
        if out is not None:
            return out
    a = asarray_strong("repeat", a)
    if isinstance(repeats, Tracer) and repeats.to_concrete_value() is None:
        raise ConcretizationTypeError(
            "mjnp.repeat: `repeats` decides the shape of the result, so it must be concrete, but "
            f"it is a traced array {repeats.aval.str_short()}. Fix: make it static "
            "(jit(..., static_argnums=...)) or close over a NumPy array of counts; for a traced "
            "scalar count use a Python int."
        )
    counts = _concrete_ints("repeat", "repeats", repeats)
    if counts.ndim > 1:
        raise ValueError(f"mjnp.repeat: repeats must be 0-d or 1-d, got shape {counts.shape}")
    if axis is None:
        a, axis = ravel(a), 0
    if a.ndim == 0:
        a = lax.reshape(a, (1,))  # NumPy repeats a 0-d array as a 1-d one
    axis = normalize_axis("repeat", axis, a.ndim, allow_bool=False)
    n = a.shape[axis]
    if np.any(counts < 0):
        raise ValueError("mjnp.repeat: negative dimensions are not allowed in repeats")
    if counts.size == 1:
        r = int(counts.ravel()[0])
        shape = a.shape[: axis + 1] + (r,) + a.shape[axis + 1 :]
        dims = tuple(i if i <= axis else i + 1 for i in range(a.ndim))
        out = lax.broadcast_in_dim(a, shape, dims)
        return lax.reshape(out, a.shape[:axis] + (n * r,) + a.shape[axis + 1 :])
    if counts.size != n:
        raise ValueError(
            f"mjnp.repeat: operands could not be broadcast together with shape ({n},) "
            f"(repeats of shape {counts.shape})"
        )
    return _take_static(a, np.repeat(np.arange(n), counts), axis)


# --- reversing and rotating -----------------------------------------------------------------


def flip(m: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    """Reverse the order of elements along `axis` (all axes by default), as `numpy.flip`."""
    if plain(axis):
        out = numpy_call(np.flip, m, axis)  # eagerly on CPU: NumPy's view
        if out is not None:
            return out
    m = asarray_strong("flip", m)
    axes = tuple(range(m.ndim)) if axis is None else normalize_axes("flip", axis, m.ndim)
    return lax.rev(m, axes) if axes else m


def fliplr(m: ArrayLike) -> Array:
    """Reverse the columns (axis 1), as `numpy.fliplr`."""
    out = numpy_call(np.fliplr, m)  # eagerly on CPU: NumPy's view
    if out is not None:
        return out
    m = asarray_strong("fliplr", m)
    if m.ndim < 2:
        raise ValueError(f"mjnp.fliplr: Input must be >= 2-d, got shape {m.shape}")
    return lax.rev(m, (1,))


def flipud(m: ArrayLike) -> Array:
    """Reverse the rows (axis 0), as `numpy.flipud`."""
    out = numpy_call(np.flipud, m)  # eagerly on CPU: NumPy's view
    if out is not None:
        return out
    m = asarray_strong("flipud", m)
    if m.ndim < 1:
        raise ValueError("mjnp.flipud: Input must be >= 1-d, got a 0-d array")
    return lax.rev(m, (0,))


def _roll_axis(a: Array, shift: Any, axis: int) -> Array:
    n = a.shape[axis]
    if n == 0:
        return a
    if type(shift) is int or not isinstance(shift, Tracer) or shift.to_concrete_value() is not None:
        if type(shift) is not int:
            shift = int(np.asarray(core.concrete_or_error(shift, "roll")))
        s = shift % n
        if s == 0:
            return a
        return lax.roll(a, s, axis)
    # A traced shift: a window of `a` repeated twice.
    shift = lax.convert_element_type(shift, _INT64)
    size = lax.full((), n, _INT64)
    s = lax.rem(lax.add(lax.rem(shift, size), size), size)
    start = lax.rem(lax.sub(size, s), size)
    doubled = lax.concatenate([a, a], axis)
    starts = [lax.full((), 0, _INT64)] * a.ndim
    starts[axis] = start
    return lax.dynamic_slice(doubled, starts, a.shape)


def _is_axis_iterable(axis: Any) -> TypeGuard[Iterable[int]]:
    """Whether `axis` is not an integer but an iterable of them (a NumPy array, a range)."""
    if isinstance(axis, str | bytes) or not hasattr(axis, "__iter__"):
        return False
    try:
        operator.index(axis)
    except TypeError:
        return True
    return False


def roll(a: ArrayLike, shift: Any, axis: int | Sequence[int] | None = None) -> Array:
    """Roll elements along `axis` (the flattened array by default), as `numpy.roll`.

    `shift` may be traced; `axis` is static.
    """
    if (type(a) is _Array or isinstance(a, Tracer)) and type(shift) is int and type(axis) is int:
        aval = a.aval  # the common call, without the general checks (~15 µs of Python)
        if not aval.weak_type and -len(aval.shape) <= axis < len(aval.shape):
            out = _roll_axis(a, shift, axis % len(aval.shape))
            return new_handle(out) if out is a else out  # a new array, as NumPy's
    out = _roll(a, shift, axis)
    return new_handle(out) if out is a else out  # a new array, as NumPy's, for shift 0


def _roll(a: ArrayLike, shift: Any, axis: int | Sequence[int] | None) -> Array:
    a = asarray_strong("roll", a)
    if isinstance(shift, Tracer) and shift.to_concrete_value() is None:
        shift_val = asarray_arg("roll", shift)
        if shift_val.dtype.kind not in "iu" or shift_val.ndim:
            raise TypeError("mjnp.roll: a traced shift must be an integer scalar")
        if axis is None:
            return lax.reshape(_roll_axis(ravel(a), shift_val, 0), a.shape)
        if isinstance(axis, tuple | list):
            raise TypeError("mjnp.roll: a traced shift needs a single int axis")
        return _roll_axis(a, shift_val, normalize_axis("roll", axis, a.ndim))
    if type(shift) is int:  # any size, as NumPy's (2**100 is no int64)
        if axis is None:
            return lax.reshape(_roll_axis(ravel(a), shift % builtins.max(a.size, 1), 0), a.shape)
        if type(axis) is int:
            ax = normalize_axis("roll", axis, a.ndim)
            return _roll_axis(a, shift % builtins.max(a.shape[ax], 1), ax)
    shifts = _concrete_ints("roll", "shift", shift)
    if axis is None:
        return lax.reshape(_roll_axis(ravel(a), int(shifts.sum()), 0), a.shape)
    if not isinstance(axis, tuple | list) and _is_axis_iterable(axis):
        axis = tuple(axis)  # NumPy's normalize_axis_tuple takes an array or a range of axes
    axes_t = axis if isinstance(axis, tuple | list) else (axis,)
    axes = np.asarray([normalize_axis("roll", ax, a.ndim) for ax in axes_t], dtype=_INT64)
    if not isinstance(axis, tuple | list):
        axes = axes.reshape(())
    if a.ndim == 0:
        raise ValueError("mjnp.roll: a 0-d array has no axes to roll; use axis=None")
    try:
        shifts_b, axes_b = np.broadcast_arrays(shifts, axes)
    except ValueError as err:
        raise ValueError(
            f"mjnp.roll: 'shift' and 'axis' should be scalars or 1D sequences, got {shift!r} and "
            f"{axis!r}"
        ) from err
    if shifts_b.ndim > 1:
        raise ValueError("mjnp.roll: 'shift' and 'axis' should be scalars or 1D sequences")
    total: dict[int, int] = {}
    for s, ax in zip(shifts_b.ravel().tolist(), axes_b.ravel().tolist(), strict=True):
        total[ax] = total.get(ax, 0) + s
    for ax, s in total.items():
        a = _roll_axis(a, s, ax)
    return a


def rot90(m: ArrayLike, k: int = 1, axes: Sequence[int] = (0, 1)) -> Array:
    """Rotate by 90 degrees `k` times in the plane of `axes`, as `numpy.rot90`."""
    m = asarray_strong("rot90", m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError(f"mjnp.rot90: len(axes) must be 2, got axes={axes}")
    if axes[0] == axes[1] or builtins.abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError(f"mjnp.rot90: Axes must be different, got axes={axes}")
    if not (-m.ndim <= axes[0] < m.ndim and -m.ndim <= axes[1] < m.ndim):
        raise ValueError(f"mjnp.rot90: Axes={axes} out of range for array of ndim={m.ndim}.")
    a0, a1 = axes[0] % m.ndim, axes[1] % m.ndim
    k = operator.index(k) % 4
    if k == 0:
        return m
    if k == 2:
        return lax.rev(m, (a0, a1))
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return lax.transpose(lax.rev(m, (a1,)), tuple(perm))
    return lax.rev(lax.transpose(m, tuple(perm)), (a1,))


def rollaxis(a: ArrayLike, axis: int, start: int = 0) -> Array:
    """Roll `axis` backwards until it lies before `start`, as `numpy.rollaxis`."""
    a = asarray_strong("rollaxis", a)
    n = a.ndim
    axis = normalize_axis("rollaxis", axis, n)
    start = operator.index(start)
    msg = "'start' arg requires {} <= start < {}, but {} was passed in"
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise AxisError(msg.format(-n, n + 1, start - n if start < 0 else start))
    if axis < start:
        start -= 1
    if axis == start:
        return a
    perm = [i for i in range(n) if i != axis]
    perm.insert(start, axis)
    return lax.transpose(a, tuple(perm))


# --- padding --------------------------------------------------------------------------------


_PAD_KWARGS = {
    "constant": {"constant_values"},
    "edge": set(),
    "wrap": set(),
    "reflect": {"reflect_type"},
    "symmetric": {"reflect_type"},
    "linear_ramp": {"end_values"},
    "maximum": {"stat_length"},
    "minimum": {"stat_length"},
    "mean": {"stat_length"},
    "median": {"stat_length"},
    "empty": set(),
}


def _pad_width(
    fname: str, pad_width: Any, ndim: int, argname: str = "pad_width"
) -> list[tuple[int, int]]:
    if isinstance(pad_width, dict):  # NumPy 2.3: {axis: width or (before, after)}, others 0
        seq = [(0, 0)] * ndim
        for axis, w in pad_width.items():
            if type(w) is tuple and len(w) == 2 and all(isinstance(v, int) for v in w):
                seq[axis] = w
            elif isinstance(w, int):
                seq[axis] = (w, w)
            else:
                raise TypeError(
                    f"mjnp.{fname}: `{argname}` values must be an int or a pair of ints, got "
                    f"{pad_width!r}"
                )
        pad_width = seq
    if isinstance(pad_width, _Array | Tracer):
        width = np.asarray(core.concrete_or_error(pad_width, f"mjnp.{fname}({argname}=...)"))
    else:  # NumPy's reading: strings, None and objects fail the integral-type check below
        width = np.asarray(pad_width)
    if width.dtype.kind not in "iu":
        raise TypeError(f"mjnp.{fname}: `{argname}` must be of integral type, got {pad_width!r}")
    try:
        width = np.broadcast_to(width, (ndim, 2)) if width.size != 1 else np.full((ndim, 2), width)
    except ValueError as err:
        raise ValueError(
            f"mjnp.{fname}: {argname} {pad_width!r} cannot be broadcast to ({ndim}, 2): {err}"
        ) from err
    if np.any(width < 0):
        raise ValueError(f"mjnp.{fname}: index can't contain negative values, got {pad_width!r}")
    return [(int(lo), int(hi)) for lo, hi in width]


def _pad_pairs(fname: str, argname: str, values: Any, ndim: int) -> list[list[Array]]:
    """Per-axis (before, after) strong scalar arrays from a value broadcastable to (ndim, 2)."""
    v = asarray_strong(fname, values)
    try:
        if v.ndim > 2:
            raise ValueError(f"{v.ndim} dimensions")
        np.broadcast_shapes(v.shape, (ndim, 2))
    except ValueError as err:
        raise ValueError(
            f"mjnp.{fname}: {argname} of shape {v.shape} cannot be broadcast to ({ndim}, 2)"
        ) from err
    v = lax.broadcast_to(v, (ndim, 2))
    return [
        [lax.reshape(lax.slice(v, (i, j), (i + 1, j + 1)), ()) for j in (0, 1)] for i in range(ndim)
    ]


def _pad_constants(values: Any, ndim: int, dtype: np.dtype) -> list[list[Array]]:
    """`constant_values` as per-axis (before, after) scalars of `dtype`.

    Host values convert exactly as NumPy's pad converts them: `np.array(values)`, then, when
    that holds one or two values, each is written into the result as a NumPy scalar (an
    int64 300 wraps to 44 in uint8 but is an OverflowError in int8, as NumPy's setitem of a
    NumPy integer does); otherwise it is broadcast to (ndim, 2) and written as Python scalars
    (NEP 50: 300 into uint8 is an OverflowError). Arrays and tracers are cast unsafely.
    """
    if isinstance(values, _Array | Tracer) or (
        isinstance(values, list | tuple) and _contains_traced(values)
    ):
        return [
            [lax.convert_element_type(v, dtype) for v in pair]
            for pair in _pad_pairs("pad", "constant_values", values, ndim)
        ]
    try:
        host = np.asarray(values)
    except ValueError as err:
        raise ValueError(f"mjnp.pad: cannot make an array of constant_values: {err}") from err
    if dtypes.kind(host.dtype) not in "biufc" and not (
        host.dtype == object and all(type(v) is int for v in host.flat)
    ):
        return _pad_pairs("pad", "constant_values", values, ndim)  # its TypeError
    if host.ndim < 3 and (host.size == 1 or (host.size == 2 and host.shape != (2, 1))):
        pairs = [[host.ravel()[0], host.ravel()[-1]]] * ndim
    else:
        try:
            pairs = np.broadcast_to(host, (ndim, 2)).tolist()
        except ValueError as err:
            raise ValueError(
                f"mjnp.pad: constant_values of shape {host.shape} cannot be broadcast to "
                f"({ndim}, 2)"
            ) from err
    converted = np.empty((ndim, 2), dtype)
    # NumPy's cast warnings when eager (docs/errors.md); NB: none on dropping an imaginary part.
    with quiet_unless_eager(), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        for i, pair in enumerate(pairs):
            for j, v in enumerate(pair):
                try:
                    converted[i, j] = v
                except (TypeError, ValueError, OverflowError) as err:
                    raise type(err)(
                        f"mjnp.pad: cannot write constant_values {v!r} into {dtype}: {err}"
                    ) from err
    return [[lax.full((), converted[i, j], dtype) for j in (0, 1)] for i in range(ndim)]


def _with_width(x: Array, axis: int, width: int) -> tuple[int, ...]:
    return x.shape[:axis] + (width,) + x.shape[axis + 1 :]


def _pad_constant(x: Array, axis: int, lo: int, hi: int, before: Array, after: Array) -> Array:
    parts = [lax.broadcast_to(before, _with_width(x, axis, lo))] if lo else []
    parts.append(x)
    if hi:
        parts.append(lax.broadcast_to(after, _with_width(x, axis, hi)))
    return lax.concatenate(parts, axis) if len(parts) > 1 else x


def _pad_reflect(x: Array, axis: int, lo: int, hi: int, odd: bool, include_edge: bool) -> Array:
    """NumPy's `_set_reflect_both` loop: reflect chunks of the filled area until padded."""
    period = x.shape[axis]
    if period == 1:  # NumPy extends a singleton axis with its edge value
        return _take_static(x, [0] * (lo + 1 + hi), axis)
    while lo > 0 or hi > 0:
        length = x.shape[axis]
        if include_edge:
            old_length, edge_offset = length // period * period, 1
        else:
            old_length, edge_offset = (length - 1) // (period - 1) * (period - 1), 0
        if lo > 0:
            chunk = builtins.min(old_length, lo)
            part = lax.rev(_slice_axis(x, 1 - edge_offset, chunk + 1 - edge_offset, axis), (axis,))
            if odd:
                part = _odd_reflection(_slice_axis(x, 0, 1, axis), part)
            x = lax.concatenate([part, x], axis)
            lo -= chunk
        if hi > 0:
            chunk = builtins.min(old_length, hi)
            n = x.shape[axis]
            last = n - 1 + edge_offset
            part = lax.rev(_slice_axis(x, last - chunk, last, axis), (axis,))
            if odd:
                part = _odd_reflection(_slice_axis(x, n - 1, n, axis), part)
            x = lax.concatenate([x, part], axis)
            hi -= chunk
    return x


def _odd_reflection(edge: Array, chunk: Array) -> Array:
    """`2 * edge - chunk` as NumPy computes it (bool in int64), cast back to the array's dtype."""
    work = _INT64 if edge.dtype == _BOOL else edge.dtype
    edge_w = lax.broadcast_to(lax.convert_element_type(edge, work), chunk.shape)
    out = lax.sub(lax.mul(lax.full((), 2, work), edge_w), lax.convert_element_type(chunk, work))
    return lax.convert_element_type(out, chunk.dtype)


def _pad_stat(x: Array, axis: int, lo: int, hi: int, lengths: Any, mode: str) -> Array:
    n = x.shape[axis]
    sizes = [n if length is None else builtins.min(length, n) for length in lengths]
    if mode in ("maximum", "minimum") and 0 in sizes:
        raise ValueError("mjnp.pad: stat_length of 0 yields no value for padding")
    stats = []
    for start, size in ((0, sizes[0]), (n - sizes[1], sizes[1])):
        chunk = _slice_axis(x, start, start + size, axis)
        if mode in ("mean", "median"):
            stat_fun = _reductions.mean if mode == "mean" else _statistics.median
            stat = stat_fun(chunk, axis=axis, keepdims=True)
            if x.dtype.kind in "iu":
                stat = ew.rint(stat)
        elif mode == "maximum":
            stat = _reductions.max(chunk, axis=axis, keepdims=True)
        else:
            stat = _reductions.min(chunk, axis=axis, keepdims=True)
        stats.append(lax.convert_element_type(stat, x.dtype))
    return _pad_constant(x, axis, lo, hi, stats[0], stats[1])


def _pad_linear_ramp(x: Array, axis: int, lo: int, hi: int, ends: list[Array]) -> Array:
    n = x.shape[axis]
    parts = []
    if lo:
        edge = lax.squeeze(_slice_axis(x, 0, 1, axis), (axis,))
        parts.append(linspace(ends[0], edge, lo, endpoint=False, dtype=x.dtype, axis=axis))
    parts.append(x)
    if hi:
        edge = lax.squeeze(_slice_axis(x, n - 1, n, axis), (axis,))
        ramp = linspace(ends[1], edge, hi, endpoint=False, dtype=x.dtype, axis=axis)
        parts.append(lax.rev(ramp, (axis,)))
    return lax.concatenate(parts, axis)


def pad(array: ArrayLike, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Array:
    """Pad an array, as `numpy.pad`.

    Modes 'constant', 'edge', 'wrap', 'reflect', 'symmetric' (both reflect types),
    'linear_ramp', 'maximum', 'minimum', 'mean', 'median' and 'empty' (zeros). `constant_values` and
    `end_values` may be traced; `pad_width` and `stat_length` are static.

    NB: callable modes are not implemented and raise NotImplementedError.
    """
    if mode in _NUMPY_PADS and _plain_widths(pad_width) and _numpy_pad_kwargs(array, kwargs):
        out = numpy_call(np.pad, array, pad_width, mode, **kwargs)  # eagerly on CPU: NumPy's
        if out is not None:
            return out
    out = _pad(array, pad_width, mode, **kwargs)
    # A new array, as NumPy's, also for zero widths (see `new_handle`).
    return new_handle(out) if out is array else out


# modes whose NumPy padding the general path computes exactly (not the statistics, whose sums
# may round differently, nor 'empty', which is zeros here)
_NUMPY_PADS = ("constant", "edge", "wrap", "reflect", "symmetric")


def _plain_widths(pad_width: Any) -> bool:
    """Whether `pad_width` is an int or a (nested) tuple or list of Python ints."""
    if type(pad_width) is int:
        return True
    if type(pad_width) is not tuple and type(pad_width) is not list:
        return False
    return all(type(w) is int or (type(w) in (tuple, list) and plain(w)) for w in pad_width)


def _numpy_pad_kwargs(array: Any, kwargs: dict[str, Any]) -> bool:
    """Whether NumPy reads `pad`'s keywords as the general path does: `reflect_type`, and a
    `constant_values` Python float for a float array or a small Python int (no cast can wrap
    or raise)."""
    for key, value in kwargs.items():
        if key == "reflect_type":
            continue
        if key != "constant_values" or type(array) is not _Array:
            return False
        kind = dtypes.kind(array.aval.dtype)
        if not (
            (type(value) is float and kind in "fc")
            or (type(value) is int and kind in "ifc" and -128 <= value <= 127)
            or (type(value) is int and kind == "u" and 0 <= value <= 127)
        ):
            return False
    return True


def _pad(array: ArrayLike, pad_width: Any, mode: str, **kwargs: Any) -> Array:
    x = asarray_strong("pad", array)
    if callable(mode):
        raise NotImplementedError("mjnp.pad: callable modes are not supported")
    if mode not in _PAD_KWARGS:
        raise ValueError(f"mjnp.pad: mode '{mode}' is not supported")
    unsupported = set(kwargs) - _PAD_KWARGS[mode]
    if unsupported:
        raise ValueError(
            f"mjnp.pad: unsupported keyword arguments for mode '{mode}': {unsupported}"
        )
    widths = _pad_width("pad", pad_width, x.ndim)
    if mode in ("constant", "empty"):
        values = _pad_constants(kwargs.get("constant_values", 0), x.ndim, x.dtype)
        for ax, (lo, hi) in enumerate(widths):
            x = _pad_constant(x, ax, lo, hi, *values[ax])
        return x
    if x.size == 0:
        for ax, (lo, hi) in enumerate(widths):
            if x.shape[ax] == 0 and (lo or hi):
                raise ValueError(
                    f"mjnp.pad: can't extend empty axis {ax} using modes other than 'constant' "
                    "or 'empty'"
                )
        shape = tuple(d + lo + hi for d, (lo, hi) in zip(x.shape, widths, strict=True))
        return lax.full(shape, 0, x.dtype)
    reflect_type = kwargs.get("reflect_type", "even")  # as in NumPy, anything but 'odd' is even
    if mode == "linear_ramp":
        ends = _pad_pairs("pad", "end_values", kwargs.get("end_values", 0), x.ndim)
    if mode in ("maximum", "minimum", "mean", "median"):
        stat_length = kwargs.get("stat_length")
        lengths = (
            [(None, None)] * x.ndim
            if stat_length is None
            else _pad_width("pad", stat_length, x.ndim, "stat_length")
        )
        # NumPy checks every axis, also those with zero widths.
        if mode in ("maximum", "minimum") and any(0 in pair for pair in lengths):
            raise ValueError("mjnp.pad: stat_length of 0 yields no value for padding")
    for ax, (lo, hi) in enumerate(widths):
        if lo == 0 and hi == 0:
            continue
        n = x.shape[ax]
        if mode == "edge":
            x = _take_static(x, np.clip(np.arange(-lo, n + hi), 0, n - 1), ax)
        elif mode == "wrap":
            x = _take_static(x, np.arange(-lo, n + hi) % n, ax)
        elif mode in ("reflect", "symmetric"):
            x = _pad_reflect(x, ax, lo, hi, reflect_type == "odd", mode == "symmetric")
        elif mode == "linear_ramp":
            x = _pad_linear_ramp(x, ax, lo, hi, ends[ax])
        else:
            x = _pad_stat(x, ax, lo, hi, lengths[ax], mode)
    return x


# --- resizing, inserting and deleting -------------------------------------------------------


def resize(a: ArrayLike, new_shape: Any) -> Array:
    """An array of `new_shape` filled with repeated copies of `a`, as `numpy.resize`."""
    a = asarray_strong("resize", a)
    shape_arr = _concrete_ints("resize", "new_shape", new_shape)
    shape = tuple(int(d) for d in shape_arr.ravel()) if shape_arr.ndim else (int(shape_arr),)
    if any(d < 0 for d in shape):
        raise ValueError("mjnp.resize: all elements of `new_shape` must be non-negative")
    size = math.prod(shape)
    if a.size == 0 or size == 0:
        return lax.full(shape, 0, a.dtype)
    flat = ravel(a)
    reps = -(-size // a.size)
    flat = tile(flat, reps)
    return lax.reshape(_slice_axis(flat, 0, size, 0), shape)


def _integer_axis(fname: str, axis: Any) -> None:
    """NumPy's integer check of `axis` (its `normalize_axis_index`, whose TypeError text this
    repeats): a non-integer axis is a TypeError before any AxisError."""
    try:
        normalize_axis_index(axis, 1)
    except TypeError as e:
        raise TypeError(f"mjnp.{fname}: {e} (axis must be an int)") from None
    except AxisError:
        pass


def delete(arr: ArrayLike, obj: Any, axis: int | None = None) -> Array:
    """`arr` without the sub-arrays at `obj` along `axis`, as `numpy.delete`.

    `obj` (an int, slice, sequence of ints or boolean mask) must be concrete.
    """
    arr = asarray_strong("delete", arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = normalize_axis("delete", axis, arr.ndim) if arr.ndim else axis
    if arr.ndim == 0:
        _integer_axis("delete", axis)  # NumPy: TypeError before AxisError
        raise AxisError(axis, 0, "mjnp.delete")
    if isinstance(obj, Tracer):
        obj = core.concrete_or_error(obj, "mjnp.delete(obj=...)")
    if isinstance(obj, _Array):
        obj = np.asarray(obj)
    keep = np.delete(np.arange(arr.shape[axis]), obj)
    return _take_static(arr, keep, axis)


def insert(arr: ArrayLike, obj: Any, values: ArrayLike, axis: int | None = None) -> Array:
    """`arr` with `values` inserted before the indices `obj` along `axis`, as `numpy.insert`.

    `obj` must be concrete; `values` may be traced and is cast to `arr`'s dtype. Python
    scalars and sequences convert as NumPy's `array(values, dtype=arr.dtype)` does, so 300 into
    a uint8 array is an OverflowError and 1.5 into an int array is 1.
    """
    arr = asarray_strong("insert", arr)
    values = asarray_arg("insert", host_values("insert", values, arr.dtype))
    if axis is None:
        arr, axis = ravel(arr), 0
    elif arr.ndim == 0:
        _integer_axis("insert", axis)  # NumPy: TypeError before AxisError
        raise AxisError(axis, 0, "mjnp.insert")
    if isinstance(obj, Tracer):
        obj = core.concrete_or_error(obj, "mjnp.insert(obj=...)")
    if isinstance(obj, _Array):
        obj = np.asarray(obj)
    # Run NumPy's insert on codes: k >= 0 is element k of `arr`, -1 - k element k of `values`.
    arr_codes = np.arange(arr.size, dtype=_INT64).reshape(arr.shape)
    value_codes = -1 - np.arange(values.size, dtype=_INT64).reshape(values.shape)
    codes = np.insert(arr_codes, obj, value_codes, axis=axis).ravel()
    source = lax.concatenate([ravel(arr), ravel(lax.convert_element_type(values, arr.dtype))], 0)
    idx = np.where(codes >= 0, codes, arr.size - 1 - codes)
    out_shape = np.insert(arr_codes, obj, value_codes, axis=axis).shape
    return lax.reshape(_take_static(source, idx, 0), out_shape)


def trim_zeros(filt: ArrayLike, trim: str = "fb", axis: Any = None) -> Array:
    """`filt` without its leading and/or trailing zeros, as `numpy.trim_zeros`.

    The result's shape depends on the values, so `filt` must be concrete (eager only).

    NB: a list argument gives an array, where NumPy slices the list itself.
    """
    x = asarray_strong("trim_zeros", filt)
    trim = trim.lower()
    if trim not in {"fb", "bf", "f", "b"}:
        raise ValueError(f"mjnp.trim_zeros: unexpected character(s) in `trim`: {trim!r}")
    axes = range(x.ndim) if axis is None else normalize_axes("trim_zeros", axis, x.ndim)
    host = np.asarray(core.concrete_or_error(x, "mjnp.trim_zeros"))
    nonzero = np.argwhere(host)
    starts, limits = [0] * x.ndim, list(x.shape)
    for ax in axes:
        if not nonzero.size:
            starts[ax] = limits[ax] = 0
            continue
        if "f" in trim:
            starts[ax] = int(nonzero[:, ax].min())
        if "b" in trim:
            limits[ax] = int(nonzero[:, ax].max()) + 1
    return lax.slice(x, tuple(starts), tuple(limits))


# --- broadcasting and dimensions -------------------------------------------------------------


def broadcast_shapes(*args: Any) -> tuple[int, ...]:
    """The shape the given shapes broadcast to, as `numpy.broadcast_shapes`."""
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*args))
    except ValueError as err:
        raise ValueError(f"mjnp.broadcast_shapes: {err}") from err


def broadcast_arrays(*args: ArrayLike, subok: bool = False) -> tuple[Array, ...]:
    """The arguments broadcast against each other, as `numpy.broadcast_arrays`."""
    arrs = [asarray_strong("broadcast_arrays", a) for a in args]
    try:
        shape = tuple(np.broadcast_shapes(*(a.shape for a in arrs)))
    except ValueError as err:
        raise ValueError(
            "mjnp.broadcast_arrays: shape mismatch: objects cannot be broadcast to a single "
            "shape, got " + ", ".join(str(a.shape) for a in arrs)
        ) from err
    return tuple(a if a.shape == shape else lax.broadcast_to(a, shape) for a in arrs)


def _atleast_nd(x: Array, n: int) -> Array:
    """`x` with size-1 axes added as numpy's atleast_1d/2d (prepended) or 3d (around)."""
    if x.ndim >= n:
        return x
    if n == 3 and x.ndim == 1:
        return lax.reshape(x, (1, x.shape[0], 1))
    if n == 3 and x.ndim == 2:
        return lax.reshape(x, (*x.shape, 1))
    return lax.reshape(x, (1,) * (n - x.ndim) + x.shape)


@overload
def atleast_2d(ary: ArrayLike, /) -> Array: ...
@overload
def atleast_2d(*arys: ArrayLike) -> Array | tuple[Array, ...]: ...


def atleast_2d(*arys: ArrayLike) -> Array | tuple[Array, ...]:
    """Arrays with at least two dimensions, as `numpy.atleast_2d`."""
    outs = tuple(_atleast_nd(asarray_strong("atleast_2d", x), 2) for x in arys)
    return outs[0] if len(outs) == 1 else outs


@overload
def atleast_3d(ary: ArrayLike, /) -> Array: ...
@overload
def atleast_3d(*arys: ArrayLike) -> Array | tuple[Array, ...]: ...


def atleast_3d(*arys: ArrayLike) -> Array | tuple[Array, ...]:
    """Arrays with at least three dimensions, as `numpy.atleast_3d` ((N,) becomes (1, N, 1))."""
    outs = tuple(_atleast_nd(asarray_strong("atleast_3d", x), 3) for x in arys)
    return outs[0] if len(outs) == 1 else outs


def matrix_transpose(x: ArrayLike, /) -> Array:
    """Swap the last two axes, as `numpy.matrix_transpose`."""
    x = asarray_strong("matrix_transpose", x)
    if x.ndim < 2:
        raise ValueError(
            "mjnp.matrix_transpose: Input array must be at least 2-dimensional, got shape "
            f"{x.shape}"
        )
    perm = (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2)
    return lax.transpose(x, perm)
