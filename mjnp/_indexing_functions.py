"""NumPy's indexing routines: take, take_along_axis, put_along_axis, put, putmask, place, choose,
select, piecewise, compress, diagonal, trace, nonzero, argwhere, flatnonzero, extract,
searchsorted, digitize, fill_diagonal, ravel_multi_index and unravel_index.

All compose `getitem` (one gather) and the `.at` updates (one scatter). The routines whose
result shape depends on values (nonzero, argwhere, flatnonzero, extract, compress) work eagerly
and under `grad` of eager code, and raise `NonConcreteBooleanIndexError` under `jit`/`vmap`.
The in-place routines (put_along_axis, put, putmask, place, fill_diagonal) rebind the array
handle they are given, like `x[idx] = v`, and return None.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from mjcore import dtypes, lax
from mjcore.array import Array as _Array
from mjcore.core import Tracer, get_aval, rebind
from mjcore.errors import NonConcreteBooleanIndexError
from mjcore.fp_errors import quiet_unless_eager
from mjnp import _elementwise as ew
from mjnp import _host_numpy
from mjnp._indexing import _getitem, _update, getitem, host_values
from mjnp._joining import stack
from mjnp._manipulation import moveaxis, normalize_axis, ravel, reshape, single_axis
from mjnp._out import write_out
from mjnp._promotion import _contains_traced, asarray_arg, promote_args_wrapping
from mjnp._reductions import sum as _sum

ArrayLike = Any
Array = Any

_MODES = ("raise", "wrap", "clip")


def _concrete(name: str, x: Any) -> np.ndarray:
    """The value of `x`, which must be known: its shape decides the result's shape."""
    value = x.to_concrete_value() if isinstance(x, Tracer) else np.asarray(x)
    if value is None:
        raise NonConcreteBooleanIndexError(
            f"mjnp.{name}: the result's shape depends on the values of a traced array "
            f"{get_aval(x).str_short()}, which are unknown under jit or vmap. Keep the shape "
            "fixed with mjnp.where(condition, x, fill), or call it outside the transformation."
        )
    return np.asarray(value)


def _check_mode(name: str, mode: str | None) -> str:
    mode = "raise" if mode is None else mode
    if mode not in _MODES:
        raise ValueError(f"mjnp.{name}: mode must be one of {_MODES}, got {mode!r}")
    return mode


def _integer_index(name: str, indices: ArrayLike) -> Array:
    idx = asarray_arg(name, [] if isinstance(indices, list) and not indices else indices)
    if isinstance(indices, list) and not indices:
        idx = lax.convert_element_type(idx, np.int64)
    if get_aval(idx).dtype.kind not in "iu":
        raise TypeError(
            f"mjnp.{name}: indices must be integers, got dtype {get_aval(idx).dtype}; "
            "cast them with .astype(int)"
        )
    return idx


def _moded(name: str, idx: Array, size: int, mode: str) -> Array:
    """Indices wrapped or clipped into `[0, size)`; 'raise' leaves them to getitem's check."""
    if mode == "raise":
        return idx
    if size == 0:
        if get_aval(idx).size:
            raise IndexError(f"mjnp.{name}: cannot do a non-empty take from an empty axis")
        return idx
    if mode == "wrap":
        return ew.remainder(idx, size)
    return ew.clip(idx, 0, size - 1)


def take(
    a: ArrayLike,
    indices: ArrayLike,
    axis: int | None = None,
    out: Any = None,
    mode: str | None = None,
    *,
    fill_value: Any = None,
) -> Array:
    """Elements of `a` at `indices` along `axis` (flattened when None), as `numpy.take`.

    NB: with mode="raise" (the default), known out-of-bounds indices raise IndexError as in
    NumPy, and traced ones (values unknown until run) read `fill_value`, JAX's default "fill"
    mode: NaN for inexact dtypes, the lowest signed or highest unsigned integer, True.
    JAX's mode="fill" fills every out-of-bounds index, known or not.
    """
    if out is None and fill_value is None and mode in _NUMPY_TAKE_MODES:
        taken = _host_take(a, indices, axis, mode)
        if taken is not None:
            return taken
    mode = "fill" if mode == "fill" else _check_mode("take", mode)
    a, axis = single_axis("mjnp.take", asarray_arg("take", a), axis)
    idx = _integer_index("take", indices)
    index = (slice(None),) * axis
    if mode in ("raise", "fill"):
        checked = mode == "raise"
        taken = _getitem(a, (*index, idx), mode="fill", fill_value=fill_value, checked=checked)
    else:
        taken = getitem(a, (*index, _moded("take", idx, a.shape[axis], mode)))
    # NumPy takes into a temporary of a's dtype and copies it back to `out`.
    return write_out("take", out, taken, "writeback")


_NUMPY_TAKE_MODES = (None, "raise", "wrap", "clip")  # NumPy's meaning of them is mjnp's
_AXIS_TYPES = (int, type(None))


def _host_index(indices: Any) -> Any:
    """The host value of an integer index Array (or a Python int) for NumPy, else None."""
    if type(indices) is int:
        return indices
    i = _host_numpy.host_value(indices)
    if i is None or i.dtype.kind not in "iu" or i.dtype == np.uint64:
        return None  # (NumPy will not cast uint64 indices to intp)
    return i


def _host_take(a: Any, indices: Any, axis: Any, mode: str | None) -> Array | None:
    """`take` eagerly on CPU: NumPy's `take` of the host values (the general path computes
    the same); None where the general path must run, or raise mjnp's error."""
    if type(axis) not in _AXIS_TYPES:
        return None
    v = _host_numpy.host_value(a)
    if v is None:
        return None
    i = _host_index(indices)
    if i is None:
        return None
    try:
        out = np.take(v, i, axis, mode="raise" if mode is None else mode)  # type: ignore[call-overload]
    except (IndexError, ValueError, TypeError):
        return None
    return _host_numpy.wrap(out, a.aval.weak_type)


def _along_axis_index(name: str, arr: Array, indices: Array, axis: int) -> tuple[Any, ...]:
    if get_aval(indices).ndim != arr.ndim:
        raise ValueError(
            f"mjnp.{name}: `indices` and `arr` must have the same number of dimensions, got "
            f"{get_aval(indices).ndim} and {arr.ndim}"
        )
    index: list[Any] = []
    for d, n in enumerate(arr.shape):
        if d == axis:
            index.append(indices)
        else:
            shape = [1] * arr.ndim
            shape[d] = n
            index.append(np.arange(n).reshape(shape))
    return tuple(index)


def take_along_axis(
    arr: ArrayLike,
    indices: ArrayLike,
    axis: int | None = -1,
    *,
    mode: str | None = None,
    fill_value: Any = None,
) -> Array:
    """Values of `arr` at the matching `indices` along `axis`, as `numpy.take_along_axis`.

    NB: `mode` and `fill_value` are JAX's: with the default None, known out-of-bounds
    indices raise IndexError (NumPy) and traced ones read `fill_value` (JAX's "fill": NaN,
    the lowest signed or highest unsigned integer, True); "fill" fills every out-of-bounds
    index, "clip" clamps it after wrapping negatives once.
    """
    if mode is None and fill_value is None and type(axis) in _AXIS_TYPES:
        v = _host_numpy.host_value(arr)
        i = None if v is None else _host_index(indices)
        if i is not None and type(i) is not int:
            try:
                out = np.take_along_axis(v, i, axis)
            except (IndexError, ValueError, TypeError):
                out = None  # the general path raises mjnp's error
            if out is not None:
                # (the general path ravels `arr` for axis=None, which makes it strong)
                return _host_numpy.wrap(out, arr.aval.weak_type and axis is not None)
    if mode not in (None, "fill", "clip"):
        raise ValueError(f"mjnp.take_along_axis: mode must be None, 'fill' or 'clip', got {mode!r}")
    arr = asarray_arg("take_along_axis", arr)
    indices = _integer_index("take_along_axis", indices)
    if axis is None:
        if get_aval(indices).ndim != 1:
            raise ValueError("mjnp.take_along_axis: when axis=None, `indices` must be 1-D")
        arr, index = ravel(arr), indices
    else:
        axis = normalize_axis("take_along_axis", axis, arr.ndim)
        index = _along_axis_index("take_along_axis", arr, indices, axis)
    return _getitem(
        arr,
        index,
        mode="clip" if mode == "clip" else "fill",
        fill_value=fill_value,
        checked=mode is None,
    )


def put_along_axis(arr: Array, indices: ArrayLike, values: ArrayLike, axis: int | None) -> None:
    """`arr[...indices along axis...] = values` in place, as `numpy.put_along_axis`.

    NB: `arr` must be an mjnp array; its handle is rebound to the updated value (see
    `x[idx] = v`). Use `arr.at[...]` for a functional update.
    """
    a = asarray_arg("put_along_axis", arr)
    indices = _integer_index("put_along_axis", indices)
    if axis is None:
        if get_aval(indices).ndim != 1:
            raise ValueError("mjnp.put_along_axis: when axis=None, `indices` must be 1-D")
        new = reshape(_update(ravel(a), indices, values, lax.scatter, "put_along_axis"), a.shape)
    else:
        axis = normalize_axis("put_along_axis", axis, a.ndim)
        index = _along_axis_index("put_along_axis", a, indices, axis)
        new = _update(a, index, values, lax.scatter, "put_along_axis")
    rebind(arr, new)


def _cyclic(name: str, values: ArrayLike, count: int) -> Array:
    """The first `count` elements of `values` repeated cyclically (NumPy's put/putmask/place)."""
    flat = ravel(asarray_arg(name, values))
    n = get_aval(flat).size
    if n == count:
        return flat
    return getitem(flat, np.arange(count) % n)


def _safe_values(name: str, values: ArrayLike, dtype: np.dtype) -> Array:
    """`values` converted to `dtype` as NumPy's putmask and place convert them.

    Arrays must cast under casting="safe" (float64 into float32 or int64 into int8 raise);
    scalars and sequences convert as `numpy.asarray(values, dtype)` (`host_values`), so 1.5
    puts 1 into an int array and a Python int out of the dtype's range raises OverflowError.
    """
    if isinstance(values, list | tuple) and _contains_traced(values):
        return lax.convert_element_type(asarray_arg(name, values), dtype)
    if not isinstance(values, np.ndarray | _Array | Tracer):
        return asarray_arg(name, host_values(name, values, dtype))
    v = asarray_arg(name, values)
    if not np.can_cast(v.dtype, dtype, "safe"):
        raise TypeError(
            f"mjnp.{name}: cannot cast values of dtype {v.dtype} to the array's dtype "
            f"{dtype} according to the rule 'safe'; cast them with .astype({dtype.name!r})"
        )
    return lax.convert_element_type(v, dtype)


def put(a: Array, ind: ArrayLike, v: ArrayLike, mode: str = "raise") -> None:
    """`a.flat[ind] = v` in place (v repeated if shorter), as `numpy.put`; rebinds `a`."""
    mode = _check_mode("put", mode)
    x = asarray_arg("put", a)
    idx = ravel(_integer_index("put", ind))
    v = host_values("put", v, x.dtype)  # checked first, as NumPy converts v even for no indices
    count = get_aval(idx).size
    if count == 0 or get_aval(asarray_arg("put", v)).size == 0:
        return
    idx = _moded("put", idx, x.size, mode)
    values = _cyclic("put", v, count)
    rebind(a, reshape(_update(ravel(x), idx, values, lax.scatter, "put"), x.shape))


def putmask(a: Array, mask: ArrayLike, values: ArrayLike) -> None:
    """`a.flat[n] = values.flat[n % values.size]` where `mask`, in place, as `numpy.putmask`.

    Works under every transformation (no value-dependent shape); rebinds `a`.
    """
    x = asarray_arg("putmask", a)
    mask = asarray_arg("putmask", mask)
    if mask.shape != x.shape:
        raise ValueError("mjnp.putmask: mask and data must be the same size")
    values = _safe_values("putmask", values, x.dtype)
    if get_aval(values).size == 0:
        return
    vals = reshape(_cyclic("putmask", values, x.size), x.shape)
    rebind(a, ew.where(mask, vals, x))


def place(arr: Array, mask: ArrayLike, vals: ArrayLike) -> None:
    """Fill the True positions of `mask` with `vals` repeated in order, as `numpy.place`.

    Works under every transformation; rebinds `arr`.
    """
    x = asarray_arg("place", arr)
    mask = ravel(asarray_arg("place", mask))
    if mask.size != x.size:
        raise ValueError("mjnp.place: mask and data must be the same size")
    vals = ravel(_safe_values("place", vals, x.dtype))
    if vals.size == 0:
        value = mask.to_concrete_value() if isinstance(mask, Tracer) else np.asarray(mask)
        if value is not None and np.any(value):
            raise ValueError("mjnp.place: cannot insert from an empty array")
        return
    # The k-th True position takes vals[k % len(vals)]: k is a running count of the mask.
    rank = lax.cumsum(lax.convert_element_type(mask, np.int64), 0)
    picked = getitem(vals, ew.remainder(ew.subtract(rank, 1), vals.size))
    rebind(arr, reshape(ew.where(mask, picked, ravel(x)), x.shape))


def choose(
    a: ArrayLike, choices: Sequence[ArrayLike], out: Any = None, mode: str = "raise"
) -> Array:
    """`choices[a[i]][i]` after broadcasting, as `numpy.choose`.

    NB: with mode="raise", traced `a` is clipped instead of checked.
    """
    mode = _check_mode("choose", mode)
    a = _integer_index("choose", a)
    n = len(choices)
    if mode == "raise":
        value = a.to_concrete_value() if isinstance(a, Tracer) else np.asarray(a)
        if value is not None and value.size and (value.min() < 0 or value.max() >= n):
            raise ValueError("mjnp.choose: invalid entry in choice array")
        mode = "clip"
    # Python ints in `choices` are weak and wrap into the result dtype, as in NumPy's `where`.
    choices = promote_args_wrapping("choose", *choices) if n else []
    which, *cases = _broadcast_all([a, *choices])
    which = _moded("choose", which, n, mode)
    picked = getitem(take_along_axis(stack(cases), lax.expand_dims(which, (0,)), axis=0), 0)
    if hasattr(out, "shape") and tuple(out.shape) != get_aval(picked).shape:
        raise TypeError(  # NumPy's error type here
            f"mjnp.choose: out= has shape {tuple(out.shape)} but the result has shape "
            f"{get_aval(picked).shape}; pass an out of shape {get_aval(picked).shape}"
        )
    return write_out("choose", out, picked)


def _broadcast_all(arrays: Sequence[ArrayLike]) -> list[Array]:
    arrays = [asarray_arg("choose", a) for a in arrays]
    shape = np.broadcast_shapes(*(get_aval(a).shape for a in arrays))
    return [lax.broadcast_to(a, shape) for a in arrays]


def select(
    condlist: Sequence[ArrayLike], choicelist: Sequence[ArrayLike], default: Any = 0
) -> Array:
    """The first choice whose condition holds, else `default`, as `numpy.select`."""
    if len(condlist) != len(choicelist):
        raise ValueError("mjnp.select: list of cases must be same length as list of conditions")
    if not choicelist:
        raise ValueError("mjnp.select: select with an empty condition list is not possible")
    conds = [asarray_arg("select", c) for c in condlist]
    for i, c in enumerate(conds):
        if get_aval(c).dtype.kind != "b":
            raise TypeError(
                f"mjnp.select: invalid entry {i} in condlist: should be boolean ndarray"
            )
    # Python scalars (in choicelist and as default) are weak, as in NumPy 2: int8 choices with
    # default=0 stay int8. The result is a strong array, as NumPy's always is.
    choices = [c if type(c) is int else asarray_arg("select", c) for c in choicelist]
    if type(default) is not int:
        default = asarray_arg("select", default)
    dtype, _ = dtypes.result_type(*choices, default, fname="mjnp.select")
    choices = [_select_int(c, dtype, "choice") if type(c) is int else c for c in choices]
    if type(default) is int:
        default = _select_int(default, dtype, "default")
    result = lax.convert_element_type(default, dtype)
    for cond, choice in zip(reversed(conds), reversed(choices), strict=True):
        result = ew.where(cond, lax.convert_element_type(choice, dtype), result)
    shape = np.broadcast_shapes(*(get_aval(c).shape for c in [*conds, *choices, default]))
    return lax.broadcast_to(result, shape)


def _select_int(value: int, dtype: np.dtype, role: str) -> Array:
    """A Python int among `select`'s choices or as its default, in the result `dtype`.

    NumPy's select makes the int an int64 array (uint64 from 2**63, an object array beyond)
    after finding the result dtype; it fills the result with the default by an unsafe cast
    (300 into uint8 wraps to 44, 2**70 into float16 is inf, into an integer dtype an
    OverflowError) and copies each choice in under casting='same_kind' (a TypeError for int64
    into uint8, and for an object array; int64 300 into int8 wraps to 44). So does mjnp.

    NB: a choice that fits an integer result dtype is written as it is. NumPy raises the
    TypeError there too (`select([c], [3], uint8_array)`), which its own comments call a
    stopgap for weak Python ints.
    """
    if dtype.kind in "iu" and np.iinfo(dtype).min <= value <= np.iinfo(dtype).max:
        return lax.full((), value, dtype)
    host = np.asarray(value)
    if role == "choice" and not np.can_cast(host.dtype, dtype, "same_kind"):
        raise TypeError(
            f"mjnp.select: cannot write the choice {value} (a Python int, taken as "
            f"{host.dtype.name}) into the result dtype {dtype} under the rule 'same_kind'; "
            f"pass it as an array of dtype {dtype}"
        )
    try:
        with quiet_unless_eager():  # NumPy's cast warnings when eager (docs/errors.md)
            return asarray_arg("select", host.astype(dtype))
    except OverflowError as err:
        raise OverflowError(f"mjnp.select: the {role} {value} does not fit {dtype}: {err}") from err


def _is_array(x: Any) -> bool:
    return hasattr(x, "dtype") and hasattr(x, "shape")


def compress(condition: ArrayLike, a: ArrayLike, axis: int | None = None, out: Any = None) -> Array:
    """The slices of `a` along `axis` where `condition` is True, as `numpy.compress`."""
    cond = _concrete("compress", asarray_arg("compress", condition))
    if cond.ndim != 1:
        raise ValueError("mjnp.compress: condition must be a 1-d array")
    a, axis = single_axis("mjnp.compress", asarray_arg("compress", a), axis)
    picked = np.flatnonzero(cond)
    if picked.size and picked[-1] >= a.shape[axis]:
        raise IndexError(
            f"mjnp.compress: index {picked[-1]} is out of bounds for axis {axis} with size "
            f"{a.shape[axis]}"
        )
    return write_out("compress", out, take(a, picked, axis), "writeback")


def diagonal(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """The `offset` diagonal of the `axis1`/`axis2` planes, appended as the last axis, as
    `numpy.diagonal`.

    NB: a new array, not a read-only view.
    """
    if type(offset) is int and type(axis1) is int and type(axis2) is int:
        values = _host_numpy.lapack_values(a)  # eagerly on the CPU: NumPy's own (copied)
        if values is not None and values[0].ndim >= 2:
            # (the method `numpy.diagonal` calls, without its Python wrapper)
            out = _host_numpy.attempt(values[0].diagonal, offset, axis1, axis2)
            if out is not None:
                return _host_numpy.wrap(out.copy())
    a = asarray_arg("diagonal", a)
    if a.ndim < 2:
        raise ValueError("mjnp.diagonal: diag requires an array of at least two dimensions")
    axis1 = normalize_axis("diagonal", axis1, a.ndim)
    axis2 = normalize_axis("diagonal", axis2, a.ndim)
    if axis1 == axis2:
        raise ValueError("mjnp.diagonal: axis1 and axis2 cannot be the same")
    offset = int(offset)
    planes = moveaxis(a, (axis1, axis2), (-2, -1))
    rows, cols = a.shape[axis1], a.shape[axis2]
    n = max(0, min(rows - max(0, -offset), cols - max(0, offset)))
    i = np.arange(n) + max(0, -offset)
    return getitem(planes, (Ellipsis, i, i + offset))


def trace(
    a: ArrayLike,
    offset: int = 0,
    axis1: int = 0,
    axis2: int = 1,
    dtype: Any = None,
    out: Any = None,
) -> Array:
    """Sum along a diagonal, as `numpy.trace`."""
    if dtype is None and out is None and type(offset) is int:
        values = _host_numpy.lapack_values(a)  # eagerly on the CPU: NumPy's own
        if values is not None and values[0].ndim >= 2 and dtypes.kind(values[0].dtype) in "biufc":
            if type(axis1) is int and type(axis2) is int:
                result = _host_numpy.attempt(values[0].trace, offset, axis1, axis2)
                if result is not None:
                    return _host_numpy.wrap(result)
    return write_out("trace", out, _sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype))


def nonzero(a: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> tuple[Array, ...]:
    """Indices of the nonzero elements, one int64 array per axis, as `numpy.nonzero`.

    Eager only (the result's length depends on the values), unless JAX's `size` is given:
    then each array has exactly `size` entries, the first `size` nonzero positions in order,
    padded with `fill_value` (default 0; a scalar or one value per axis), which works under
    `jit` and `vmap`.
    """
    if size is None and fill_value is None:
        v = _host_numpy.host_value(a, math.inf)  # eagerly on CPU: NumPy's (the general path's too)
        if v is not None and v.ndim:
            return tuple(_host_numpy.wrap(i.astype(np.int64, copy=False)) for i in np.nonzero(v))
    a = asarray_arg("nonzero", a)
    if a.ndim == 0:
        raise ValueError(
            "mjnp.nonzero: Calling nonzero on 0d arrays is not allowed. Use "
            "mjnp.atleast_1d(scalar).nonzero() instead."
        )
    if size is not None:
        return _nonzero_sized("nonzero", a, size, fill_value)
    if fill_value is not None:
        raise ValueError("mjnp.nonzero: fill_value is only allowed together with size")
    value = _concrete("nonzero", a)
    return tuple(asarray_arg("nonzero", i.astype(np.int64)) for i in np.nonzero(value))


def _nonzero_sized(fname: str, a: Array, size: Any, fill_value: Any) -> tuple[Array, ...]:
    """`nonzero` with a static output length (JAX's `size=`): the positions of the nonzero
    elements come first in a stable sort of the flat mask, so the first `size` of that order
    are the wanted positions wherever there are that many, and `fill_value` elsewhere."""
    try:
        size = int(operator.index(size))
    except TypeError as err:
        raise TypeError(f"mjnp.{fname}: size must be a non-negative int, got {size!r}") from err
    if size < 0:
        raise ValueError(f"mjnp.{fname}: size must be non-negative, got {size}")
    fills = (0,) * a.ndim if fill_value is None else fill_value
    if np.ndim(fills) == 0:
        fills = (fills,) * a.ndim
    if len(fills) != a.ndim:
        raise ValueError(
            f"mjnp.{fname}: fill_value must be a scalar or have one entry per dimension "
            f"({a.ndim}), got {fill_value!r}"
        )
    n = a.size
    if n == 0:  # NB: zeros whatever fill_value says, as JAX returns for an empty input
        return tuple(lax.full((size,), 0, np.dtype(np.int64)) for _ in a.shape)
    mask = lax.reshape(ew.not_equal(a, 0), (n,))
    # Sort key 0 for nonzero elements, 1 for zeros; the stable sort keeps positions in order.
    key = lax.convert_element_type(ew.logical_not(mask), np.dtype(np.int32))
    positions = lax.iota(np.dtype(np.int64), n)
    _, order = lax.sort((key, positions), is_stable=True, num_keys=1)
    count = _sum(mask, dtype=np.int64)
    if size > n:
        order = lax.pad(order, lax.full((), 0, np.dtype(np.int64)), ((0, size - n, 0),))
    else:
        order = lax.slice(order, (0,), (size,))
    valid = ew.less(lax.iota(np.dtype(np.int64), size), count)
    out = []
    stride = n
    for dim, fill in zip(a.shape, fills, strict=True):
        stride = stride // dim if dim else 0
        coord = ew.remainder(ew.floor_divide(order, max(stride, 1)), max(dim, 1))
        fill = lax.convert_element_type(asarray_arg(fname, fill), np.dtype(np.int64))
        out.append(ew.where(valid, coord, lax.broadcast_in_dim(fill, (size,), ())))
    return tuple(out)


def argwhere(a: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> Array:
    """Indices of the nonzero elements, one row each, as `numpy.argwhere` (eager only, or
    with JAX's static `size` and `fill_value` as in `nonzero`)."""
    if size is None:
        if fill_value is not None:
            raise ValueError("mjnp.argwhere: fill_value is only allowed together with size")
        # eagerly on CPU: NumPy's, without a device transfer
        v = _host_numpy.host_value(a, math.inf)
        if v is not None:
            return _host_numpy.wrap(np.argwhere(v).astype(np.int64, copy=False))
        value = _concrete("argwhere", asarray_arg("argwhere", a))
        return asarray_arg("argwhere", np.argwhere(value).astype(np.int64))
    a = asarray_arg("argwhere", a)
    if a.ndim == 0:  # as NumPy: one row per nonzero element, no columns
        rows = _nonzero_sized("argwhere", lax.reshape(a, (1,)), size, fill_value)[0]
        return lax.slice(lax.reshape(rows, (size, 1)), (0, 0), (size, 0))
    return stack(_nonzero_sized("argwhere", a, size, fill_value), axis=-1)


def flatnonzero(a: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> Array:
    """Indices of the nonzero elements of the flattened `a`, as `numpy.flatnonzero` (with
    JAX's static `size` and `fill_value` as in `nonzero`)."""
    if size is not None:
        flat = ravel(asarray_arg("flatnonzero", a))
        return _nonzero_sized("flatnonzero", flat, size, fill_value)[0]
    if fill_value is not None:
        raise ValueError("mjnp.flatnonzero: fill_value is only allowed together with size")
    v = _host_numpy.host_value(a, math.inf)  # eagerly on CPU: NumPy's, without a device transfer
    if v is not None:
        return _host_numpy.wrap(np.flatnonzero(v).astype(np.int64, copy=False))
    value = _concrete("flatnonzero", asarray_arg("flatnonzero", a))
    return asarray_arg("flatnonzero", np.flatnonzero(value).astype(np.int64))


def extract(condition: ArrayLike, arr: ArrayLike) -> Array:
    """The elements of `arr` where `condition` is True, flattened, as `numpy.extract`.

    Eager only; differentiable with respect to `arr`.
    """
    picked = flatnonzero(condition)
    return take(ravel(asarray_arg("extract", arr)), picked)


def _less_nan_last(x: Array, y: Array) -> Array:
    """`x < y` in NumPy's sort order, where NaN is above everything."""
    return ew.logical_or(ew.less(x, y), ew.logical_and(ew.isnan(y), ew.logical_not(ew.isnan(x))))


# (here, not in the import block above, which other eager paths edit)
from mjnp._host_stats import host_searchsorted  # noqa: E402


def searchsorted(
    a: ArrayLike, v: ArrayLike, side: str = "left", sorter: ArrayLike | None = None
) -> Array:
    """Insertion points of `v` in the sorted 1-D `a`, as `numpy.searchsorted`.

    Counts the elements of `a` before each value (O(len(a)) per value), so it is exact for
    every dtype (NaN sorts last) and works under jit and vmap. Eagerly, on small CPU Arrays
    of one real dtype, NumPy's binary search runs instead (the same result for a sorted `a`).
    """
    found = host_searchsorted(a, v, side, sorter)  # NumPy's binary search, small eager Arrays
    if found is not None:
        return found
    if side not in ("left", "right"):
        raise ValueError(f"mjnp.searchsorted: side must be 'left' or 'right', got {side!r}")
    a = asarray_arg("searchsorted", a)
    if a.ndim != 1:
        raise ValueError("mjnp.searchsorted: object too deep for desired array (a must be 1-D)")
    if sorter is not None:
        a = take(a, sorter)
    v = asarray_arg("searchsorted", v)
    ax = lax.expand_dims(a, tuple(range(v.ndim)))
    vx = lax.expand_dims(v, (v.ndim,))
    before = _less_nan_last(ax, vx) if side == "left" else ew.logical_not(_less_nan_last(vx, ax))
    return _sum(before, axis=-1, dtype=np.int64)


def digitize(x: ArrayLike, bins: ArrayLike, right: bool = False) -> Array:
    """Indices of the bins each value of `x` falls in, as `numpy.digitize`.

    NB: with traced `bins`, the direction is taken from their ends instead of being checked.
    """
    bins = asarray_arg("digitize", bins)
    x = asarray_arg("digitize", x)
    if x.dtype.kind == "c":
        raise TypeError("mjnp.digitize: x may not be complex")
    if bins.dtype.kind == "c":  # NumPy's monotonicity check casts them to float64 safely
        raise TypeError(
            "mjnp.digitize: Cannot cast array data from dtype('complex128') to dtype('float64') "
            "according to the rule 'safe' (bins may not be complex)"
        )
    if bins.ndim != 1:
        raise ValueError("mjnp.digitize: object too deep for desired array (bins must be 1-D)")
    side = "left" if right else "right"
    n = bins.size
    increasing = searchsorted(bins, x, side)
    decreasing = ew.subtract(n, searchsorted(getitem(bins, slice(None, None, -1)), x, side))
    value = bins.to_concrete_value() if isinstance(bins, Tracer) else np.asarray(bins)
    if value is not None:
        diffs = np.diff(value)
        if np.all(diffs >= 0):
            return increasing
        if np.all(diffs <= 0):
            return decreasing
        raise ValueError("mjnp.digitize: bins must be monotonically increasing or decreasing")
    up = ew.greater_equal(getitem(bins, -1), getitem(bins, 0))
    return ew.where(up, increasing, decreasing)


def fill_diagonal(a: Array, val: ArrayLike, wrap: bool = False) -> None:
    """Fill the main diagonal of `a` with `val` (repeated), in place, as `numpy.fill_diagonal`;
    rebinds `a`."""
    x = asarray_arg("fill_diagonal", a)
    if x.ndim < 2:
        raise ValueError("mjnp.fill_diagonal: array must be at least 2-d")
    if x.ndim == 2:
        step = x.shape[1] + 1
        end = x.size if wrap else min(x.size, x.shape[1] * x.shape[1])
    else:
        if len(set(x.shape)) != 1:
            raise ValueError("mjnp.fill_diagonal: all dimensions of input must be of equal length")
        step = 1 + int(np.cumprod(x.shape[:-1]).sum())
        end = x.size
    # Converted here, so that an error (300 into uint8) names fill_diagonal rather than put.
    put(a, np.arange(0, end, step), host_values("fill_diagonal", val, x.dtype))


def ravel_multi_index(
    multi_index: Sequence[ArrayLike], dims: Sequence[int], mode: Any = "raise", order: str = "C"
) -> Array:
    """Flat indices of coordinate arrays into an array of shape `dims`, as
    `numpy.ravel_multi_index`.

    NB: with mode="raise", traced coordinates are clipped instead of checked.
    """
    dims = tuple(int(d) for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(
            f"mjnp.ravel_multi_index: parameter multi_index must be a sequence of length "
            f"{len(dims)}"
        )
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    if order not in ("C", "F"):
        raise ValueError(f"mjnp.ravel_multi_index: order must be 'C' or 'F', got {order!r}")
    strides = [math.prod(dims[i + 1 :]) for i in range(len(dims))]
    if order == "F":
        strides = [math.prod(dims[:i]) for i in range(len(dims))]
    coords = _broadcast_all([_integer_index("ravel_multi_index", c) for c in multi_index])
    total = None
    for c, n, stride, m in zip(coords, dims, strides, modes, strict=True):
        m = _check_mode("ravel_multi_index", m)
        if m == "raise":
            value = c.to_concrete_value() if isinstance(c, Tracer) else np.asarray(c)
            if value is not None and value.size and (value.min() < 0 or value.max() >= n):
                raise ValueError("mjnp.ravel_multi_index: invalid entry in coordinates array")
            m = "clip"
        c = lax.convert_element_type(_moded("ravel_multi_index", c, n, m), np.int64)
        term = ew.multiply(c, stride)
        total = term if total is None else ew.add(total, term)
    return total


def unravel_index(indices: ArrayLike, shape: Sequence[int], order: str = "C") -> tuple[Array, ...]:
    """Coordinate arrays of flat `indices` into an array of `shape`, as `numpy.unravel_index`.

    NB: traced out-of-range indices are not checked (they wrap like the arithmetic does).
    """
    shape = tuple(int(d) for d in shape)
    if order not in ("C", "F"):
        raise ValueError(f"mjnp.unravel_index: order must be 'C' or 'F', got {order!r}")
    idx = lax.convert_element_type(_integer_index("unravel_index", indices), np.int64)
    size = math.prod(shape)
    value = idx.to_concrete_value() if isinstance(idx, Tracer) else np.asarray(idx)
    if value is not None and value.size:
        bad = value[(value < 0) | (value >= size)]
        if bad.size:
            raise ValueError(
                f"mjnp.unravel_index: index {bad.flat[0]} is out of bounds for array with size "
                f"{size}"
            )
    axes = range(len(shape)) if order == "F" else reversed(range(len(shape)))
    out: list[Any] = [None] * len(shape)
    rest = idx
    for i in axes:
        n = shape[i]
        out[i] = ew.remainder(rest, n) if n else rest
        rest = ew.floor_divide(rest, n) if n else rest
    return tuple(out)


def piecewise(x: ArrayLike, condlist: Any, funclist: Sequence[Any], *args: Any, **kw: Any) -> Array:
    """`funclist[i](x)` where `condlist[i]` holds (later conditions win), as `numpy.piecewise`.

    An extra last function applies where no condition holds; non-callables are constants.

    NB: each function is evaluated on all of `x` and its values selected (NumPy evaluates it
    on `x[cond]` only), so the result's shape never depends on values and it works under jit.
    """
    x = asarray_arg("piecewise", x)
    # NumPy's rule: a scalar, or a sequence of scalars for a non-0-d x, is one condition;
    # otherwise the first axis lists the conditions.
    first = condlist[0] if isinstance(condlist, list | tuple) and condlist else None
    if first is not None and (_is_array(first) or isinstance(first, list)):
        conds = [asarray_arg("piecewise", c) for c in condlist]
    else:
        cond = asarray_arg("piecewise", condlist)
        if cond.ndim == 0 or (cond.ndim == 1 and x.ndim != 0):
            conds = [cond]
        else:
            conds = [getitem(cond, i) for i in range(len(cond))]
    n = len(conds)
    if len(funclist) not in (n, n + 1):
        raise ValueError(
            f"mjnp.piecewise: with {n} condition(s), either {n} or {n + 1} functions are "
            f"expected, got {len(funclist)}"
        )
    # NumPy's asarray(condlist, dtype=bool): nonzero numbers are true
    conds = [c if get_aval(c).dtype.kind == "b" else ew.not_equal(c, 0) for c in conds]
    if len(funclist) == n + 1:
        otherwise = ew.logical_not(_any_of(conds, x.shape))
        conds = [*conds, otherwise]
    result = lax.full(x.shape, 0, x.dtype)
    for cond, func in zip(conds, funclist, strict=True):
        value = func(x, *args, **kw) if callable(func) else func
        # As NumPy's `y[cond] = value`: 300 into a uint8 `x` is an OverflowError.
        value = asarray_arg("piecewise", host_values("piecewise", value, x.dtype))
        value = lax.convert_element_type(value, x.dtype)
        result = ew.where(cond, lax.broadcast_to(value, x.shape), result)
    return result


def _any_of(conds: list[Array], shape: tuple[int, ...]) -> Array:
    out = lax.full(shape, False, np.bool_)
    for c in conds:
        out = ew.logical_or(out, c)
    return out
