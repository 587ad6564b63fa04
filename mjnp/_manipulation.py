"""Shape manipulation (NumPy's "array manipulation routines"): reshape, transpose, squeeze, ...

Also the axis-argument helpers (`normalize_axis`, `normalize_axes`, and `multi_axis` and
`single_axis` for functions NumPy implements in C) that every mjnp function taking an `axis`
uses, so that AxisError, bool-axis and duplicate-axis errors read the same everywhere.
"""

from __future__ import annotations

import inspect
import math
import operator
from collections.abc import Sequence
from typing import Any, overload

import numpy as _np
from numpy.exceptions import AxisError

from mjcore import lax
from mjcore.array import Array as _Array
from mjcore.core import Tracer
from mjcore.dispatch import host_view
from mjcore.dtypes import DTypeLike, canonicalize_dtype
from mjcore.lax.base import convert_element_type_p
from mjcore.views import host_view_call
from mjnp._devices import check_device, on_device
from mjnp._host_numpy import numpy_call, plain
from mjnp._promotion import asarray_arg

ArrayLike = Any
Array = Any
Axis = int | Sequence[int] | None
ShapeLike = int | Sequence[int]

# --- axis arguments -------------------------------------------------------------------------


def normalize_axis(fname: str, axis: Any, ndim: int, *, allow_bool: bool = True) -> int:
    """`axis` as a non-negative int below `ndim`, as NumPy's `normalize_axis_index`.

    NumPy's Python-level functions (flip, moveaxis, median, ...) go through
    `normalize_axis_index`, which takes a bool as an int; its C-level axis converters (ufunc
    reductions, argmax, cumsum, take, squeeze, concatenate, ...) reject one. Pass
    `allow_bool=False` where the NumPy function being mirrored is of the second kind.

    Raises:
        TypeError: if `axis` is not an integer (or is a bool and `allow_bool` is False).
        AxisError: if it is out of range.
    """
    if not allow_bool:
        reject_bool_axis(fname, axis)
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise AxisError(axis, ndim, fname)
    return axis % ndim


def reject_bool_axis(fname: str, axis: Any) -> None:
    """Raise TypeError for a bool `axis`, as NumPy's C-level axis converters do."""
    if isinstance(axis, bool):
        raise TypeError(
            f"{fname}: axis must be an integer, not a bool (got {axis!r}); "
            f"pass axis={int(axis)} if that is the axis you mean"
        )


def normalize_axes(
    fname: str,
    axis: Any,
    ndim: int,
    argname: str = "axis",
    *,
    allow_bool: bool = True,
    allow_iterable: bool | None = None,
) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple of non-negative axes, in the given order.

    With `allow_iterable` (by default, where `allow_bool` is: NumPy's Python-level
    `normalize_axis_tuple`), any iterable of ints is taken, such as a NumPy array or a range.

    Raises:
        TypeError: if an entry is not an integer (or is a bool and `allow_bool` is False).
        AxisError: if an axis is out of range.
        ValueError: if an axis repeats.
    """
    if isinstance(axis, tuple | list):
        axes = tuple(normalize_axis(fname, a, ndim, allow_bool=allow_bool) for a in axis)
    else:
        try:
            axes = (normalize_axis(fname, axis, ndim, allow_bool=allow_bool),)
        except TypeError:
            # As NumPy's `normalize_axis_tuple`: what is not an integer may be any iterable of
            # integers (a NumPy array, a range); anything else keeps the integer's TypeError.
            if allow_iterable is None:
                allow_iterable = allow_bool
            if not allow_iterable or isinstance(axis, str | bytes) or not hasattr(axis, "__iter__"):
                raise
            axes = tuple(normalize_axis(fname, a, ndim, allow_bool=allow_bool) for a in axis)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{fname}: duplicate value in '{argname}', got {axis!r}")
    return axes


def reject_list_axis(fname: str, axis: Any) -> None:
    """Raise TypeError for a list `axis`, as NumPy's C-level multi-axis converter does (it
    takes a tuple or an int, and reads anything else as an int)."""
    if isinstance(axis, list):
        raise TypeError(
            f"{fname}: axis must be an integer or a tuple of integers, not a list (got "
            f"{axis!r}); pass axis={tuple(axis)!r}"
        )


def multi_axis(fname: str, axis: Any, ndim: int) -> tuple[int, ...]:
    """`axis` (None, an int or a tuple) as sorted axes, as NumPy's C `PyArray_ConvertMultiAxis`
    reads it for ufunc reductions and `squeeze`: None is every axis, a bool or a list is a
    TypeError, and on a 0-d array an int axis 0 or -1 is accepted and names no axis (a tuple
    axis is still out of bounds there).
    """
    if axis is None:
        return tuple(range(ndim))
    reject_list_axis(fname, axis)
    if ndim == 0 and not isinstance(axis, bool | tuple | list):
        if operator.index(axis) in (0, -1):
            return ()
    return tuple(sorted(normalize_axes(fname, axis, ndim, allow_bool=False)))


def single_axis(fname: str, x: Array, axis: Any) -> tuple[Array, int]:
    """`x` and its one `axis` as NumPy's C `PyArray_CheckAxis` gives them to argmax, cumsum,
    take, argsort, ...: flattened when `axis` is None, a 0-d `x` viewed as shape (1,) (so
    axis 0 and -1 are valid and 1 is out of bounds), and a bool axis a TypeError.
    """
    if axis is None or x.ndim == 0:
        x = lax.reshape(x, (x.size,))
    if axis is None:
        return x, 0
    return x, normalize_axis(fname, axis, x.ndim, allow_bool=False)


def _shape_arg(fname: str, shape: Any) -> tuple[int, ...]:
    """An int or a sequence of ints as a shape tuple (entries may still be negative)."""
    try:
        if isinstance(shape, Sequence) and not isinstance(shape, str):
            return tuple(operator.index(d) for d in shape)
        return (operator.index(shape),)
    except TypeError as err:
        raise TypeError(
            f"{fname}: expected a sequence of integers or a single integer, got {shape!r}"
        ) from err


def _check_order(fname: str, order: str | None, allowed: str) -> str:
    if order is None:
        return "C"
    if order not in allowed:
        raise ValueError(f"{fname}: order must be one of {', '.join(allowed)}, got {order!r}")
    # NB: mjnp arrays are always C-contiguous, so 'A' and 'K' read them in C order.
    return "F" if order == "F" else "C"


def asarray_strong(fname: str, x: ArrayLike) -> Array:
    """`asarray_arg`, then a weak type (from a Python scalar) is dropped.

    NumPy functions return strong arrays: `np.reshape(2.0, (1,)) + np.float32(1)` is float64.
    """
    x = asarray_arg(fname, x)
    return lax.convert_element_type(x, x.dtype) if x.weak_type else x


def new_handle(x: Array) -> Array:
    """A new array object with the value of `x`: what a copy of an mjnp array is.

    `x[i] = v` rebinds the object `x` to a new value, so a "copy" that is `x` itself would
    follow the write. The copy has its own buffer (a same-dtype conversion, which XLA copies),
    so it also outlives the donation of `x` to a jitted function.
    """
    return convert_element_type_p.bind1(x, new_dtype=x.dtype, weak_type=x.weak_type)


# --- reshaping ------------------------------------------------------------------------------


def _resolve_shape(fname: str, size: int, in_shape: tuple[int, ...], shape: Any) -> tuple[int, ...]:
    """`shape` with its one unknown (negative) entry inferred; ValueError if it cannot fit."""
    new_shape = _shape_arg(fname, shape)
    unknown = [i for i, d in enumerate(new_shape) if d < 0]
    if len(unknown) > 1:
        raise ValueError(f"{fname}: can only specify one unknown dimension, got {new_shape}")
    if unknown:
        known = math.prod(d for d in new_shape if d >= 0)
        if known == 0 or size % known:
            raise ValueError(
                f"{fname}: cannot reshape array of shape {in_shape} (size {size}) into shape "
                f"{new_shape}"
            )
        new_shape = tuple(size // known if d < 0 else d for d in new_shape)
    if math.prod(new_shape) != size:
        raise ValueError(
            f"{fname}: cannot reshape array of shape {in_shape} (size {size}) into shape "
            f"{new_shape}"
        )
    return new_shape


def reshape(
    a: ArrayLike, /, shape: ShapeLike, order: str = "C", *, copy: bool | None = None
) -> Array:
    """Give `a` a new shape without changing its data, as `numpy.reshape`.

    One entry of `shape` may be -1 (inferred). `order` 'C' and 'F' are supported ('A' reads
    as 'C'). `copy=True` gives a new array object even when the shape is unchanged; no reshape
    needs a copy, so `copy=False` always succeeds.
    """
    if copy:
        out = reshape(a, shape, order)
        return new_handle(out) if out is a else out
    if order == "C" and type(a) is _Array and type(shape) is tuple and not a.aval.weak_type:
        out = host_view(a, "reshape", shape)  # eagerly on CPU: NumPy's reshape, ~10x cheaper
        if out is not None:
            return out
    a = asarray_strong("reshape", a)
    order = _check_order("mjnp.reshape", order, "CFA")
    new_shape = _resolve_shape("mjnp.reshape", a.size, a.shape, shape)
    if order == "F":
        a = lax.transpose(a, tuple(reversed(range(a.ndim))))
        out = lax.reshape(a, new_shape[::-1])
        return lax.transpose(out, tuple(reversed(range(len(new_shape)))))
    return lax.reshape(a, new_shape)


def ravel(a: ArrayLike, order: str = "C") -> Array:
    """A 1-D array of the elements of `a`, as `numpy.ravel` (orders 'C', 'F', 'A', 'K')."""
    if order == "C" and type(a) is _Array and not a.aval.weak_type:
        out = host_view_call(_np.ndarray.reshape, a, -1)  # eagerly on CPU: NumPy's reshape
        if out is not None:
            return out
    a = asarray_strong("ravel", a)
    return reshape(a, (a.size,), order=_check_order("mjnp.ravel", order, "CFAK"))


def transpose(a: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """Permute the axes of `a` (reverse them by default), as `numpy.transpose`."""
    a = asarray_strong("transpose", a)
    if axes is None:
        return lax.transpose(a, tuple(reversed(range(a.ndim))))
    axes_tuple = tuple(axes) if isinstance(axes, tuple | list) else (axes,)
    if len(axes_tuple) != a.ndim:
        raise ValueError(
            f"mjnp.transpose: axes don't match array: got axes {axes!r} for an array of shape "
            f"{a.shape}"
        )
    perm = tuple(
        normalize_axis("mjnp.transpose", ax, a.ndim, allow_bool=False) for ax in axes_tuple
    )
    if len(set(perm)) != len(perm):
        raise ValueError(f"mjnp.transpose: repeated axis in transpose, got axes {axes!r}")
    return lax.transpose(a, perm)


def permute_dims(a: ArrayLike, /, axes: Sequence[int] | None = None) -> Array:
    """The Array API name of `transpose`."""
    return transpose(a, axes)


def swapaxes(a: ArrayLike, axis1: int, axis2: int) -> Array:
    """Interchange two axes, as `numpy.swapaxes`."""
    if type(axis1) is int and type(axis2) is int:
        if type(a) is _Array and not a.aval.weak_type:  # eagerly on CPU: NumPy's view
            out = host_view_call(_np.ndarray.swapaxes, a, axis1, axis2)
        else:  # (a weak Array's result is strong: `numpy_call`'s `wrap` makes it)
            out = numpy_call(_np.ndarray.swapaxes, a, axis1, axis2)
        if out is not None:
            return out
    a = asarray_strong("swapaxes", a)
    i = normalize_axis("mjnp.swapaxes", axis1, a.ndim)
    j = normalize_axis("mjnp.swapaxes", axis2, a.ndim)
    perm = list(range(a.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(a, tuple(perm))


def moveaxis(a: ArrayLike, source: Axis, destination: Axis) -> Array:
    """Move axes to new positions, the others keeping their order, as `numpy.moveaxis`."""
    if plain(source, destination):
        out = numpy_call(_np.moveaxis, a, source, destination)  # eagerly on CPU: NumPy's view
        if out is not None:
            return out
    a = asarray_strong("moveaxis", a)
    src = _moveaxis_axes("source", source, a.ndim)
    dst = _moveaxis_axes("destination", destination, a.ndim)
    if len(src) != len(dst):
        raise ValueError(
            "mjnp.moveaxis: `source` and `destination` arguments must have the same number of "
            f"elements, got {source!r} and {destination!r}"
        )
    perm = [i for i in range(a.ndim) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        perm.insert(d, s)
    return lax.transpose(a, tuple(perm))


def _moveaxis_axes(argname: str, axis: Axis, ndim: int) -> tuple[int, ...]:
    """`moveaxis`'s source or destination, with NumPy's messages, which name the argument."""
    try:
        return normalize_axes(f"mjnp.moveaxis: {argname}", axis, ndim, argname)
    except AxisError:
        raise
    except ValueError as err:  # a repeated axis
        raise ValueError(f"mjnp.moveaxis: repeated axis in `{argname}` argument") from err


def expand_dims(a: ArrayLike, axis: Axis) -> Array:
    """Insert size-1 axes at positions `axis` of the result, as `numpy.expand_dims`."""
    if type(a) is _Array and not a.aval.weak_type:
        if type(axis) is int or type(axis) is tuple and plain(axis):
            out = host_view_call(_np.expand_dims, a, axis)  # eagerly on CPU: NumPy's view
            if out is not None:
                return out
    a = asarray_strong("expand_dims", a)
    out_ndim = a.ndim + (len(axis) if isinstance(axis, tuple | list) else 1)
    axes = normalize_axes("mjnp.expand_dims", axis, out_ndim, allow_iterable=False)
    return lax.expand_dims(a, axes)


def squeeze(a: ArrayLike, axis: Axis = None) -> Array:
    """Remove size-1 axes (all of them, or those in `axis`), as `numpy.squeeze`."""
    if axis is None or plain(axis):
        if type(a) is _Array and not a.aval.weak_type:  # eagerly on CPU: NumPy's view
            out = host_view_call(_np.ndarray.squeeze, a, axis)
        else:  # (a weak Array's result is strong: `numpy_call`'s `wrap` makes it)
            out = numpy_call(_np.ndarray.squeeze, a, axis)
        if out is not None:
            return out
    a = asarray_strong("squeeze", a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(a.shape) if d == 1)
    else:
        axes = multi_axis("mjnp.squeeze", axis, a.ndim)
        for ax in axes:
            if a.shape[ax] != 1:
                raise ValueError(
                    "mjnp.squeeze: cannot select an axis to squeeze out which has size not "
                    f"equal to one: axis {ax} of shape {a.shape}"
                )
    if not axes:
        return a
    return lax.squeeze(a, tuple(sorted(axes)))


def broadcast_to(array: ArrayLike, shape: ShapeLike, subok: bool = False) -> Array:
    """Broadcast `array` to `shape` by NumPy's rules, as `numpy.broadcast_to`."""
    array = asarray_strong("broadcast_to", array)
    shape = _shape_arg("mjnp.broadcast_to", shape)
    if any(d < 0 for d in shape):
        raise ValueError(
            f"mjnp.broadcast_to: all elements of broadcast shape must be non-negative, got {shape}"
        )
    in_shape = array.shape
    offset = len(shape) - len(in_shape)
    if offset < 0 or any(d not in (1, shape[offset + i]) for i, d in enumerate(in_shape)):
        raise ValueError(
            f"mjnp.broadcast_to: cannot broadcast an array of shape {in_shape} to the requested "
            f"shape {shape}"
        )
    return lax.broadcast_to(array, shape)


@overload
def atleast_1d(ary: ArrayLike, /) -> Array: ...
@overload
def atleast_1d(*arys: ArrayLike) -> Array | tuple[Array, ...]: ...


def atleast_1d(*arys: ArrayLike) -> Array | tuple[Array, ...]:
    """Arrays with at least one dimension, as `numpy.atleast_1d` (0-d becomes shape (1,)).

    One argument gives one array, several give a tuple.
    """
    outs = tuple(_atleast_1d(asarray_strong("atleast_1d", x)) for x in arys)
    return outs[0] if len(outs) == 1 else outs


def _atleast_1d(x: Array) -> Array:
    return lax.reshape(x, (1,)) if x.ndim == 0 else x


# --- dtype and copies -----------------------------------------------------------------------


@on_device
def astype(x: ArrayLike, dtype: DTypeLike, /, *, copy: bool = True, device: Any = None) -> Array:
    """Cast `x` to `dtype` (unsafe casting), as `numpy.astype`.

    With `copy=False` the result is `x` itself when no cast is needed; otherwise it is a new
    array, which a later `x[i] = v` does not change.

    NB: casting a float outside the target integer range (NaN, or a negative float to an
    unsigned type) is undefined in NumPy, which warns and gives a platform-dependent value;
    here it saturates, as XLA does.
    """
    if not (hasattr(x, "dtype") or _np.isscalar(x)):  # NumPy's rule: no lists or tuples
        raise TypeError(
            f"mjnp.astype: Input should be a NumPy array or scalar. It is a {type(x)} instead."
        )
    x = asarray_strong("astype", x)
    check_device("astype", device)
    out = lax.convert_element_type(x, canonicalize_dtype(dtype, "mjnp.astype"))
    return new_handle(out) if copy and out is x else out


def copy(a: ArrayLike, order: str = "K", subok: bool = False) -> Array:
    """An array with the value of `a`, as `numpy.copy`.

    The copy is a new array object with its own buffer: a later `a[i] = v` (which rebinds
    `a`) or donating `a` to a jitted function leaves it alone.
    """
    _check_order("mjnp.copy", order, "CFAK")
    if type(a) is _Array:
        out = numpy_call(_np.ndarray.copy, a)  # eagerly on CPU: NumPy's copy of the host value
        if out is not None:
            return out
    x = asarray_strong("copy", a)
    return new_handle(x) if x is a else x


def ndim(a: ArrayLike) -> int:
    """Number of dimensions, as `numpy.ndim` (works on tracers too)."""
    nd = getattr(a, "ndim", None)
    return nd if isinstance(nd, int) else _np.ndim(a)


def shape(a: ArrayLike) -> tuple[int, ...]:
    """The shape, as `numpy.shape` (works on tracers too)."""
    s = getattr(a, "shape", None)
    return tuple(s) if isinstance(s, tuple) else _np.shape(a)


def size(a: ArrayLike, axis: int | tuple[int, ...] | None = None) -> int:
    """Number of elements (along `axis`: an int or, as NumPy 2.4, a tuple of ints), as
    `numpy.size`."""
    s = shape(a)
    if axis is None:
        return math.prod(s)
    if isinstance(axis, tuple):
        return math.prod(s[ax] for ax in normalize_axes("mjnp.size", axis, len(s)))
    return s[normalize_axis("size", axis, len(s))]


# --- broadcast: NumPy's broadcasting iterator object ------------------------------------------

_MAX_BROADCAST_ARGS = 64  # NumPy's NPY_MAXARGS


class _BroadcastIter:
    """One argument of a `broadcast`, iterated over the broadcast shape in C order, as the
    `numpy.flatiter`s in `numpy.broadcast.iters` (`base` is the argument itself)."""

    def __init__(self, base: Any, shape: tuple[int, ...]):
        self.base = base
        self._shape = shape
        self._host: Any = None
        self.index = 0

    def _values(self) -> Any:
        if self._host is None:
            if isinstance(self.base, Tracer):
                raise TypeError(
                    "mjnp.broadcast: cannot iterate over a traced array; iterate outside jit, "
                    "vmap and grad, or use mjnp.broadcast_arrays"
                )
            self._host = _np.broadcast_to(_np.asarray(self.base), self._shape).reshape(-1)
        return self._host

    def __iter__(self) -> _BroadcastIter:
        return self

    def __next__(self) -> Any:
        values = self._values()
        if self.index >= values.size:
            raise StopIteration
        self.index += 1
        return values[self.index - 1]

    def __len__(self) -> int:
        return math.prod(self._shape)


class broadcast:  # noqa: N801  (NumPy's name)
    """The broadcast of its arguments, as `numpy.broadcast`: `shape`, `nd`/`ndim`, `size`,
    `numiter`, `iters`, `index`, `reset()`, and iteration yielding a tuple of elements (NumPy
    scalars, read from host copies) per broadcast position.

    A `broadcast` argument counts as its own arguments, as in NumPy. NB: the elements are
    NumPy scalars of host copies (mjnp arrays do not alias memory); under a transformation the
    shape attributes work but iteration raises TypeError.
    """

    __signature__ = inspect.Signature(
        [inspect.Parameter("arrays", inspect.Parameter.VAR_POSITIONAL)]
    )

    def __init__(self, *arrays: Any, **kwargs: Any):
        if kwargs:
            raise ValueError("mjnp.broadcast() does not accept keyword arguments")
        flat: list[Any] = []
        for x in arrays:
            if isinstance(x, broadcast):
                flat.extend(it.base for it in x.iters)
            else:
                flat.append(x)
        if len(flat) > _MAX_BROADCAST_ARGS:
            raise ValueError(
                f"mjnp.broadcast: Need at least 0 and at most {_MAX_BROADCAST_ARGS} array "
                f"objects (got {len(flat)})."
            )
        # NumPy's message names the first mismatching pair, e.g. "arg 0 with shape (1, 3)".
        self.shape: tuple[int, ...] = _np.broadcast_shapes(*(shape(x) for x in flat))
        self.iters: tuple[_BroadcastIter, ...] = tuple(_BroadcastIter(x, self.shape) for x in flat)
        self.index = 0

    @property
    def nd(self) -> int:
        return len(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def numiter(self) -> int:
        return len(self.iters)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def reset(self, /) -> None:
        """Go back to the first position (every iterator too), as `numpy.broadcast.reset`."""
        self.index = 0
        for it in self.iters:
            it.index = 0

    def __iter__(self) -> broadcast:
        return self

    def __next__(self) -> tuple[Any, ...]:
        if self.index >= self.size:
            raise StopIteration
        position = self.index
        self.index += 1
        out = []
        for it in self.iters:
            it.index = position
            out.append(next(it))
        return tuple(out)
