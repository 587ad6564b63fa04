"""Array creation: array, asarray, zeros, ones, full, empty and their `_like` forms, arange,
linspace, eye and identity; and from existing data: asanyarray, ascontiguousarray,
asfortranarray, asarray_chkfinite, require, frombuffer, fromiter and fromstring.

Default dtypes are NumPy's (float64 for `zeros`, int64 for `arange(3)`). Arrays made here are
strong-typed, as NumPy arrays are: `asarray(1.0)` is a float64 array that promotes like one.

NB: mjnp arrays have no memory layout and are immutable, so `order` is checked and otherwise
ignored and `empty` is `zeros`.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, overload

import numpy as np

from mjcore import core, dtypes, lax
from mjcore.array import Array as _Array
from mjcore.array import wrap_host_value  # (results NumPy made: ndarrays)
from mjcore.core import Tracer, get_aval
from mjcore.dispatch import is_eager_host
from mjcore.dtypes import DTypeLike, canonicalize_dtype
from mjnp._devices import check_device, on_device
from mjnp._function_objects import c_function
from mjnp._host_numpy import wrap
from mjnp._manipulation import new_handle, normalize_axis
from mjnp._promotion import asarray_arg, cast_python_scalar, check_arraylike

ArrayLike = Any
Array = Any
ShapeLike = int | Sequence[int]
F = TypeVar("F", bound=Callable[..., Any])

_BOOL = np.dtype(bool)
_INT64 = np.dtype("int64")
_FLOAT16 = np.dtype("float16")
_FLOAT32 = np.dtype("float32")
_FLOAT64 = np.dtype("float64")
_MAX_SIZE = np.iinfo(np.intp).max
_PY_REAL = (int, float)
_PY_DTYPES = {int: _INT64, float: _FLOAT64}
_INT_OR_NONE = (int, type(None))
_ARANGE_BOUND = 2**62  # int64 arithmetic on these cannot overflow
_LARGE = 1 << 30  # bytes: `core.check_allocation` looks at the machine's memory from here
_LIKE_ORDERS = ("K", "C", "A")
_INT64_BOUND = 2**63


# --- argument checks ------------------------------------------------------------------------


@overload
def _dtype_arg(fname: str, dtype: DTypeLike | None, default: np.dtype) -> np.dtype: ...
@overload
def _dtype_arg(fname: str, dtype: DTypeLike | None, default: None) -> np.dtype | None: ...


def _dtype_arg(fname: str, dtype: DTypeLike | None, default: np.dtype | None) -> np.dtype | None:
    if dtype is None:
        return default
    return dtypes.canonicalize_dtype(dtype, f"mjnp.{fname}")


def _dtype(fname: str, dtype: DTypeLike) -> np.dtype:
    return canonicalize_dtype(dtype, f"mjnp.{fname}")


def _size(fname: str, argname: str, n: Any) -> int:
    try:
        return operator.index(core.concrete_or_error(n, f"mjnp.{fname}({argname}=...)"))
    except TypeError as err:
        raise TypeError(f"mjnp.{fname}: {argname} must be an integer, got {n!r:.80}") from err


def _shape_arg(fname: str, shape: ShapeLike) -> tuple[int, ...]:
    """A shape argument (an integer or a sequence of them) as a tuple, as NumPy reads it.

    Raises:
        TypeError: for non-integer sizes.
        ValueError: for negative sizes.
    """
    try:
        dims = (operator.index(shape),) if not isinstance(shape, Sequence) else shape
        out = tuple(operator.index(d) for d in dims)
    except TypeError as err:
        raise TypeError(
            f"mjnp.{fname}: expected a sequence of integers or a single integer as the shape, "
            f"got {shape!r}"
        ) from err
    if any(d < 0 for d in out):
        raise ValueError(f"mjnp.{fname}: negative dimensions are not allowed, got shape {out}")
    return out


def _check_order(fname: str, order: str | None, allowed: str = "CFAK") -> None:
    if order is not None and (not isinstance(order, str) or order.upper() not in allowed):
        choices = ", ".join(repr(c) for c in allowed)
        raise ValueError(f"mjnp.{fname}: order must be one of {choices}, got {order!r}")


def _check_like(fname: str, like: Any, device: Any = None) -> None:
    if like is not None:
        raise NotImplementedError(f"mjnp.{fname}: like= is not supported")
    check_device(fname, device)


def _general_path(name: str) -> Callable[[F], F]:
    """`on_device` for the general path of the creation function `name`, whose messages name
    it (the public function tries NumPy first, without the placement wrapper's frame)."""

    def decorate(fn: F) -> F:
        fn.__name__ = fn.__qualname__ = name
        return on_device(fn)

    return decorate


def _fast_new(
    fname: str, shape: Any, dtype: DTypeLike | None, default: np.dtype
) -> tuple[tuple[int, ...], np.dtype] | None:
    """(shape, dtype) for NumPy to make a new array now: an eager CPU call whose shape is an int
    or a tuple of non-negative ints and whose result is under a GiB (so that no allocation
    check can fire); else None (the general path checks and raises)."""
    if type(shape) is int:
        shape = (shape,)
    elif type(shape) is not tuple:
        return None
    size = 1
    for d in shape:
        if type(d) is not int or d < 0:
            return None
        size *= d
    dt = default if dtype is None else _dtype_arg(fname, dtype, None)
    if dt is None or size * dt.itemsize >= _LARGE or not is_eager_host():
        return None
    return shape, dt


def _fast_like(
    fname: str, a: Array, dtype: DTypeLike | None, order: str
) -> tuple[tuple[int, ...], np.dtype] | None:
    """`_fast_new` for the shape and (by default) dtype of an Array `a`."""
    if order not in _LIKE_ORDERS:
        return None
    aval = a.aval
    return _fast_new(fname, aval.shape, dtype, aval.dtype)


def _fits_int64(value: int | float, dt: np.dtype) -> bool:
    """Whether `full`'s Python int fill is an int64 fill that NumPy takes as it is."""
    return dt == _INT64 and type(value) is int and -_INT64_BOUND <= value < _INT64_BOUND


def _strong(x: Array) -> Array:
    """`x` without a weak type: arrays made by array/asarray promote like NumPy arrays."""
    return lax.convert_element_type(x, x.dtype, weak_type=False) if x.weak_type else x


# --- array / asarray ------------------------------------------------------------------------


@c_function  # as NumPy's builtin: does not bind as a method
@on_device
def asarray(
    a: ArrayLike,
    dtype: DTypeLike | None = None,
    order: str | None = None,
    *,
    device: Any = None,
    copy: bool | None = None,
    like: None = None,
) -> Array:
    """Convert `a` to an mjnp array, as `numpy.asarray`.

    Accepts mjnp Arrays and tracers, NumPy arrays and scalars, Python scalars and nested
    sequences of these (also holding tracers). With `copy=False` only an mjnp array that needs
    no conversion is accepted; with `copy=True` the result is a new array object, which a later
    `a[i] = v` does not change.

    Raises:
        TypeError: for values that are not arrays and for unsupported dtypes.
        ValueError: with `copy=False` when a copy (a conversion or a transfer to the device)
            would be needed; for ragged nested sequences.
        OverflowError: for a Python int that does not fit `dtype`.
    """
    _check_order("asarray", order)
    _check_like("asarray", like, device)
    dt = _dtype_arg("asarray", dtype, None)
    is_mjnp = isinstance(a, _Array | Tracer)
    if copy is False and not (is_mjnp and dt in (None, a.dtype)):
        raise ValueError(
            "mjnp.asarray: unable to avoid copy while creating an array as requested (copy=False "
            f"needs an mjnp array{'' if dt is None else ' of dtype ' + dt.name}, got "
            f"{type(a).__name__}{'' if not is_mjnp else ' of dtype ' + a.dtype.name}); use "
            "copy=None to allow a copy"
        )
    if not is_mjnp and dt is not None and _is_host_value(a):
        # NumPy's own conversion, so that e.g. 300 into uint8 raises OverflowError as in NumPy.
        a = _host_convert("asarray", a, dt)
    x = _strong(asarray_arg("asarray", a))
    out = x if dt is None else lax.convert_element_type(x, dt)
    # A copy of an mjnp array must be a new handle: `a[i] = v` rebinds `a`.
    return new_handle(out) if copy and out is a else out


def _is_host_value(a: Any) -> bool:
    """Whether NumPy can convert `a` itself (no tracers inside)."""
    if isinstance(a, list | tuple):
        return all(_is_host_value(v) for v in a)
    return not isinstance(a, Tracer)


def _host_convert(fname: str, a: Any, dtype: np.dtype) -> np.ndarray:
    check_arraylike(fname, a)
    if dtypes.is_python_scalar(a):
        return dtypes.coerce_python_scalar(a, dtype, f"mjnp.{fname}")
    try:
        return np.asarray(a, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as err:
        raise type(err)(f"mjnp.{fname}: cannot convert to {dtype.name}: {err}") from err


@c_function  # as NumPy's builtin: does not bind as a method
def array(
    object: ArrayLike,  # noqa: A002  (NumPy's argument name)
    dtype: DTypeLike | None = None,
    *,
    copy: bool | None = True,
    order: str = "K",
    subok: bool = False,
    ndmin: int = 0,
    like: None = None,
) -> Array:
    """Create an array, as `numpy.array`; `ndmin` prepends size-1 axes.

    With `copy=True` (the default) the result is a new array object, as in `asarray`.
    """
    _check_order("array", order)
    _check_like("array", like)
    x = asarray(object, dtype, copy=copy)
    ndmin = operator.index(ndmin)
    if x.ndim < ndmin:
        x = lax.expand_dims(x, tuple(range(ndmin - x.ndim)))
    return x


# --- filled arrays --------------------------------------------------------------------------


def _full(fname: str, shape: tuple[int, ...], value: Any, dtype: np.dtype) -> Array:
    """`lax.full` after NumPy's size checks (ValueError, MemoryError) for a new array.

    Eagerly on CPU it is NumPy's array itself (the primitive's host rule would broadcast the
    same scalar, through ~8 µs of binds)."""
    core.check_allocation(shape, dtype)
    if is_eager_host():
        if type(value) is int and value in (0, 1):  # zeros, ones, empty and their _like forms
            return wrap_host_value((np.zeros if value == 0 else np.ones)(shape, dtype))
        return wrap_host_value(np.full(shape, value, dtype))
    return lax.full(shape, value, dtype)


def _filled(fname: str, shape: tuple[int, ...], fill_value: ArrayLike, dtype: np.dtype | None):
    """An array of `shape` filled with (a broadcast of) `fill_value`, as `numpy.full`."""
    if dtypes.is_python_scalar(fill_value):
        dt = dtypes.python_scalar_dtype(fill_value) if dtype is None else dtype
        # NumPy fills by `copyto(out, fill_value, casting="unsafe")`: 300 into uint8 raises,
        # 300.0 wraps (44), 1j into bool is True.
        value = cast_python_scalar(fname, fill_value, dt, "unsafe").item()
        return _full(fname, shape, value, dt)
    fill = asarray(fill_value, dtype)
    core.check_allocation(shape, get_aval(fill).dtype)
    try:
        out_shape = np.broadcast_shapes(fill.shape, shape)
    except ValueError:
        out_shape = None
    if out_shape != shape:
        raise ValueError(
            f"mjnp.{fname}: could not broadcast fill_value from shape {fill.shape} into shape "
            f"{shape}"
        )
    return lax.broadcast_to(fill, shape)


def full(
    shape: ShapeLike,
    fill_value: ArrayLike,
    dtype: DTypeLike | None = None,
    order: str = "C",
    *,
    device: Any = None,
    like: None = None,
) -> Array:
    """An array of `shape` filled with `fill_value` (broadcast), as `numpy.full`.

    The default dtype is that of `array(fill_value)`.
    """
    if device is None and like is None and order == "C" and type(fill_value) in _PY_REAL:
        new = _fast_new("full", shape, dtype, _PY_DTYPES[type(fill_value)])
        if new is not None and (new[1] == _FLOAT64 or _fits_int64(fill_value, new[1])):
            return wrap_host_value(np.full(new[0], fill_value, new[1]))
    return _full_general(shape, fill_value, dtype, order, device=device, like=like)


@_general_path("full")
def _full_general(
    shape: ShapeLike,
    fill_value: ArrayLike,
    dtype: DTypeLike | None = None,
    order: str = "C",
    *,
    device: Any = None,
    like: None = None,
) -> Array:
    """The general path of `full` (any arguments; `device=` placement)."""
    _check_order("full", order, "CF")
    _check_like("full", like, device)
    return _filled("full", _shape_arg("full", shape), fill_value, _dtype_arg("full", dtype, None))


def _new_filled(name: str, numpy_new: Callable[..., np.ndarray], fill: int, doc: str) -> Any:
    """`zeros`, `ones` or `empty` (`fill` 0, 1, 0): NumPy's `numpy_new` eagerly on CPU for a
    plain call, else the general path (checks, `device=` placement, `lax.full`)."""

    @_general_path(name)
    def general(
        shape: ShapeLike,
        dtype: DTypeLike | None = None,
        order: str = "C",
        *,
        device: Any = None,
        like: None = None,
    ) -> Array:
        _check_order(name, order, "CF")
        _check_like(name, like, device)
        return _full(name, _shape_arg(name, shape), fill, _dtype_arg(name, dtype, _FLOAT64))

    def public(
        shape: ShapeLike,
        dtype: DTypeLike | None = None,
        order: str = "C",
        *,
        device: Any = None,
        like: None = None,
    ) -> Array:
        if device is None and like is None and order == "C":
            new = _fast_new(name, shape, dtype, _FLOAT64)
            if new is not None:  # eagerly on CPU: NumPy's array itself
                return wrap_host_value(numpy_new(*new))
        return general(shape, dtype, order, device=device, like=like)

    public.__name__ = public.__qualname__ = name
    public.__doc__ = doc
    return public


# (c_function: as NumPy's builtins, zeros and empty do not bind as methods)
zeros = c_function(
    _new_filled("zeros", np.zeros, 0, "An array of zeros, float64 by default, as `numpy.zeros`.")
)
ones = _new_filled("ones", np.ones, 1, "An array of ones, float64 by default, as `numpy.ones`.")
empty = c_function(
    _new_filled(
        "empty",
        np.zeros,
        0,
        """An array of the given shape and dtype, as `numpy.empty`.

    NB: the contents are zeros (an uninitialised immutable array would be of no use).
    """,
    )
)


def _like_aval(fname: str, a: ArrayLike) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and dtype of `a` (without evaluating anything for arrays and tracers)."""
    if isinstance(a, _Array | Tracer | np.ndarray | np.generic):
        return tuple(a.shape), dtypes.canonicalize_dtype(a.dtype, f"mjnp.{fname}")
    if dtypes.is_python_scalar(a):
        return (), dtypes.python_scalar_dtype(a)
    x = asarray_arg(fname, a)
    return x.shape, x.dtype


def _like_args(
    fname: str, a: ArrayLike, dtype: DTypeLike | None, shape: ShapeLike | None, order: str
) -> tuple[tuple[int, ...], np.dtype]:
    _check_order(fname, order)
    a_shape, a_dtype = _like_aval(fname, a)
    out_shape = a_shape if shape is None else _shape_arg(fname, shape)
    return out_shape, _dtype_arg(fname, dtype, a_dtype)


def _like_filled(name: str, numpy_new: Callable[..., np.ndarray], fill: int, doc: str) -> Any:
    """`zeros_like`, `ones_like` or `empty_like` (`fill` 0, 1, 0): NumPy's `numpy_new` eagerly
    on CPU for a plain call with an Array, else the general path (checks, `device=`)."""

    @_general_path(name)
    def general(
        a: ArrayLike,
        dtype: DTypeLike | None = None,
        order: str = "K",
        subok: bool = True,
        shape: ShapeLike | None = None,
        *,
        device: Any = None,
    ) -> Array:
        _check_like(name, None, device)
        out_shape, dt = _like_args(name, a, dtype, shape, order)
        return _full("like", out_shape, fill, dt)

    def public(
        a: ArrayLike,
        dtype: DTypeLike | None = None,
        order: str = "K",
        subok: bool = True,
        shape: ShapeLike | None = None,
        *,
        device: Any = None,
    ) -> Array:
        if type(a) is _Array and shape is None and device is None:
            new = _fast_like(name, a, dtype, order)
            if new is not None:  # eagerly on CPU: NumPy's array itself
                return wrap_host_value(numpy_new(*new))
        return general(a, dtype, order, subok, shape, device=device)

    public.__name__ = public.__qualname__ = name
    public.__doc__ = doc
    return public


zeros_like = _like_filled(
    "zeros_like",
    np.zeros,
    0,
    "Zeros with the shape and dtype of `a` (or the given ones), as `numpy.zeros_like`.",
)
ones_like = _like_filled(
    "ones_like",
    np.ones,
    1,
    "Ones with the shape and dtype of `a` (or the given ones), as `numpy.ones_like`.",
)
empty_like = _like_filled(
    "empty_like",
    np.zeros,
    0,
    "An array with the shape and dtype of `prototype`, as `numpy.empty_like` (zeros; see `empty`).",
)


def full_like(
    a: ArrayLike,
    fill_value: ArrayLike,
    dtype: DTypeLike | None = None,
    order: str = "K",
    subok: bool = True,
    shape: ShapeLike | None = None,
    *,
    device: Any = None,
) -> Array:
    """`fill_value` broadcast to the shape of `a`, in `a`'s dtype, as `numpy.full_like`."""
    if type(a) is _Array and shape is None and device is None and type(fill_value) is float:
        new = _fast_like("full_like", a, dtype, order)
        if new is not None and new[1] == _FLOAT64:
            return wrap_host_value(np.full(new[0], fill_value, new[1]))
    return _full_like_general(a, fill_value, dtype, order, subok, shape, device=device)


@_general_path("full_like")
def _full_like_general(
    a: ArrayLike,
    fill_value: ArrayLike,
    dtype: DTypeLike | None = None,
    order: str = "K",
    subok: bool = True,
    shape: ShapeLike | None = None,
    *,
    device: Any = None,
) -> Array:
    """The general path of `full_like` (any arguments; `device=` placement)."""
    _check_like("full_like", None, device)
    out_shape, dt = _like_args("full_like", a, dtype, shape, order)
    return _filled("full_like", out_shape, fill_value, dt)


# --- ranges ---------------------------------------------------------------------------------


@c_function  # as NumPy's builtin: does not bind as a method
def arange(
    start_or_stop: Any,
    stop: Any = None,
    step: Any = None,
    dtype: DTypeLike | None = None,
    *,
    device: Any = None,
    like: None = None,
) -> Array:
    """Evenly spaced values in `[start, stop)`, as `numpy.arange`.

    Without `dtype`, integer arguments give int64 and float ones float64, as in NumPy. Values
    follow NumPy's fill rule: the first two are `start` and `start + step` in the result dtype,
    and element i is `first + i * (second - first)`.

    NB: complex arguments and dtypes are not supported.

    Raises:
        ZeroDivisionError: for `step=0`, as NumPy.
        ConcretizationTypeError: for traced arguments (the length must be static).
    """
    if dtype is None and device is None and like is None and is_eager_host():
        if stop is None and step is None and type(start_or_stop) is int:
            if 0 <= start_or_stop < _LARGE >> 3:  # `arange(n)`: `_small_python_range`'s check
                return wrap_host_value(np.arange(start_or_stop))
        first, last = (0, start_or_stop) if stop is None else (start_or_stop, stop)
        delta = 1 if step is None else step
        if _small_python_range(first, last, delta):
            # Python numbers: NumPy's arange, whose fill the general path computes too
            return wrap_host_value(np.arange(first, last, delta))
    return _arange_general(start_or_stop, stop, step, dtype, device=device, like=like)


@_general_path("arange")
def _arange_general(
    start_or_stop: Any,
    stop: Any = None,
    step: Any = None,
    dtype: DTypeLike | None = None,
    *,
    device: Any = None,
    like: None = None,
) -> Array:
    """The general path of `arange` (any arguments; `device=` placement)."""
    _check_like("arange", like, device)
    if stop is None:
        start, stop = 0, start_or_stop
    else:
        start = start_or_stop
    step = 1 if step is None else step
    start, stop, step = (
        _concrete_scalar("arange", name, v)
        for name, v in (("start", start), ("stop", stop), ("step", step))
    )
    if dtype is None:
        dt = _FLOAT64 if any(isinstance(v, float) for v in (start, stop, step)) else _INT64
    else:
        dt = dtypes.canonicalize_dtype(dtype, "mjnp.arange")
    if dt.kind == "c":
        raise TypeError("mjnp.arange: complex dtypes are not supported")
    if step == 0:
        raise ZeroDivisionError("mjnp.arange: step must not be zero (division by zero)")
    span = (stop - start) / step
    if math.isnan(span):
        raise ValueError("arange: cannot compute length")
    if math.isinf(span) or span > _MAX_SIZE:
        raise ValueError(f"Maximum allowed size exceeded (mjnp.arange({start}, {stop}, {step}))")
    length = max(math.ceil(span), 0)
    core.check_allocation((length,), dt)
    return _arange_values(start, step, length, dt)


def _small_python_range(start: Any, stop: Any, step: Any) -> bool:
    """Whether `arange(start, stop, step)` of these Python numbers is one NumPy makes as the
    general path does, with no error to raise: ints (int64 arithmetic cannot overflow below
    2**62) or finite floats (and ints a float64 holds exactly), a nonzero step, under a GiB."""
    if type(start) is int and type(stop) is int and type(step) is int:
        b = _ARANGE_BOUND
        if step and -b < start < b and -b < stop < b and -b < step < b:
            return len(range(start, stop, step)) < _LARGE >> 3
        return False
    for v in (start, stop, step):
        if type(v) is float:
            if not math.isfinite(v):
                return False
        elif type(v) is not int or not -(2**53) <= v <= 2**53:
            return False
    if not step:
        return False
    span = (stop - start) / step
    return math.isfinite(span) and span * 8 < _LARGE


def _concrete_scalar(fname: str, argname: str, x: Any) -> Any:
    """A real Python number from a static argument (traced values raise
    ConcretizationTypeError)."""
    if type(x) is int:  # beyond int64 too: arange(0, 2**64) is "too big", not a TypeError
        return x
    value = np.asarray(core.concrete_or_error(x, f"mjnp.{fname}({argname}=...)"))
    if value.ndim != 0 or value.dtype.kind not in "biuf":
        raise TypeError(f"mjnp.{fname}: {argname} must be a real scalar, got {x!r:.80}")
    return value.item()


def _arange_values(start: Any, step: Any, length: int, dt: np.dtype) -> Array:
    if length == 0:
        return lax.full((0,), 0, dt)
    first = dtypes.coerce_python_scalar(start, dt, "mjnp.arange")
    if length == 1:
        return lax.full((length,), first.item(), dt)
    second = dtypes.coerce_python_scalar(start + step, dt, "mjnp.arange")
    if dt == _BOOL:
        if length > 2:
            raise TypeError(
                "mjnp.arange: arange() is only supported for booleans when the result has at "
                "most length 2"
            )
        return asarray([first.item(), second.item()], dt)
    # NumPy fills half precision in float32 arithmetic.
    work = _FLOAT32 if dt == _FLOAT16 else dt
    first, second = first.astype(work), second.astype(work)
    with np.errstate(over="ignore"):
        delta = second - first
    if is_eager_host():
        # The same fill in NumPy (the primitives' host rules compute these steps one bind at
        # a time): `first + i * delta` in `work`, element 1 `second` itself for floats.
        with np.errstate(over="ignore", invalid="ignore"):
            values = np.arange(length, dtype=work)
            values *= delta
            values += first
        if work.kind == "f":
            values[1] = second
        return wrap(values if work == dt else values.astype(dt))
    index = lax.iota(work, length)
    values = lax.add(
        lax.full((), first.item(), work), lax.mul(index, lax.full((), delta.item(), work))
    )
    if work.kind == "f":
        # Element 1 is `second` itself, not `first + 1 * delta`.
        is_second = lax.eq(index, lax.full((), 1, work))
        values = lax.select_n(is_second, values, lax.full((length,), second.item(), work))
    return lax.convert_element_type(values, dt)


@on_device
def linspace(
    start: ArrayLike,
    stop: ArrayLike,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: DTypeLike | None = None,
    axis: int = 0,
    *,
    device: Any = None,
) -> Array | tuple[Array, Array]:
    """`num` evenly spaced values from `start` to `stop`, as `numpy.linspace`.

    `start` and `stop` may be arrays (and traced); the values are computed as NumPy does:
    `start + arange(num) * step` in the floating dtype of `start`, `stop` and a Python float,
    with the last value set to `stop` when `endpoint`. An integer `dtype` takes the floor.

    NB: NumPy switches to `arange(num) / div * delta` for *all* elements when any step is
    zero (denormal ranges); here each element switches on its own step.

    Raises:
        ValueError: for negative `num`.
    """
    _check_like("linspace", None, device)
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"mjnp.linspace: Number of samples, {num}, must be non-negative.")
    if (
        type(start) in _PY_REAL
        and type(stop) in _PY_REAL
        and axis in (0, -1)
        and -_INT64_BOUND <= start < _INT64_BOUND
        and -_INT64_BOUND <= stop < _INT64_BOUND
        and is_eager_host()
    ):
        # Python numbers: NumPy's own linspace, in float64 as the general path's.
        out_dt = _dtype_arg("linspace", dtype, _FLOAT64)
        values, step = np.linspace(start, stop, num, endpoint, retstep=True, dtype=out_dt)
        y = wrap(values)
        return (y, wrap(np.array(step, _FLOAT64))) if retstep else y
    start, stop = asarray_arg("linspace", start), asarray_arg("linspace", stop)
    dt, _ = dtypes.result_type(start, stop, 1.0, fname="mjnp.linspace")
    out_dt = _dtype_arg("linspace", dtype, dt)
    start = lax.convert_element_type(start, dt)
    stop = lax.convert_element_type(stop, dt)
    div = (num - 1) if endpoint else num
    delta = lax.sub(stop, start)
    shape = (num, *delta.shape)
    y = lax.broadcast_in_dim(lax.iota(dt, num), shape, (0,))
    if div > 0:
        step = lax.div(delta, lax.full((), div, dt))
        # Denormal steps underflow to zero: scale by delta after dividing instead.
        small = lax.mul(lax.div(y, lax.full((), div, dt)), delta)
        step_zero = lax.eq(step, lax.full((), 0, dt))
        y = lax.select_n(
            lax.broadcast_to(step_zero, shape), lax.mul(y, step), lax.broadcast_to(small, shape)
        )
    else:
        step = lax.full(delta.shape, np.nan, dt)
        y = lax.mul(y, delta)
    y = lax.add(y, start)
    if endpoint and num > 1:
        is_last = lax.eq(lax.broadcasted_iota(_INT64, shape, 0), lax.full((), num - 1, _INT64))
        y = lax.select_n(is_last, y, lax.broadcast_to(stop, shape))
    if axis != 0:
        axis = normalize_axis("mjnp.linspace", axis, len(shape))
        perm = list(range(1, len(shape)))
        perm.insert(axis, 0)
        y = lax.transpose(y, tuple(perm))
    if out_dt.kind in "iu":
        y = lax.floor(y)
    y = lax.convert_element_type(y, out_dt)
    return (y, step) if retstep else y


def eye(
    N: int,  # noqa: N803  (NumPy's argument name)
    M: int | None = None,  # noqa: N803  (NumPy's argument name)
    k: int = 0,
    dtype: DTypeLike | None = float,
    order: str = "C",
    *,
    device: Any = None,
    like: None = None,
) -> Array:
    """An `N` x `M` array with ones on diagonal `k` and zeros elsewhere, as `numpy.eye`."""
    if (
        type(N) is int
        and type(M) in _INT_OR_NONE
        and type(k) is int
        and order == "C"
        and device is None
        and like is None
    ):
        cols = N if M is None else M
        new = _fast_new("eye", (N, cols), dtype, _FLOAT64)
        if new is not None:
            return wrap_host_value(np.eye(N, cols, k, dtype=new[1]))
    return _eye_general(N, M, k, dtype, order, device=device, like=like)


@_general_path("eye")
def _eye_general(
    N: int,  # noqa: N803  (NumPy's argument name)
    M: int | None = None,  # noqa: N803  (NumPy's argument name)
    k: int = 0,
    dtype: DTypeLike | None = float,
    order: str = "C",
    *,
    device: Any = None,
    like: None = None,
) -> Array:
    """The general path of `eye` (any arguments; `device=` placement)."""
    _check_order("eye", order, "CF")
    _check_like("eye", like, device)
    dt = _dtype_arg("eye", dtype, _FLOAT64)
    rows = operator.index(N)
    cols = rows if M is None else operator.index(M)
    shape = _shape_arg("eye", (rows, cols))
    core.check_allocation(shape, dt)
    k = operator.index(k)
    if is_eager_host():
        return wrap_host_value(np.eye(rows, cols, k, dtype=dt))
    row = lax.broadcasted_iota(_INT64, shape, 0)
    col = lax.broadcasted_iota(_INT64, shape, 1)
    on_diagonal = lax.eq(lax.add(row, lax.full((), k, _INT64)), col)
    return lax.convert_element_type(on_diagonal, dt)


def identity(n: int, dtype: DTypeLike | None = None, *, like: None = None) -> Array:
    """The `n` x `n` identity matrix, float64 by default, as `numpy.identity`."""
    _check_like("identity", like)
    return eye(n, dtype=dtype if dtype is not None else _FLOAT64)


# --- from existing data ---------------------------------------------------------------------


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


@c_function  # as NumPy's builtin: does not bind as a method
def asfortranarray(a: ArrayLike, dtype: DTypeLike | None = None, *, like: None = None) -> Array:
    """`asarray` with at least one dimension, as `numpy.asfortranarray`.

    NB: mjnp arrays have no memory layout (XLA owns the buffers), so there is nothing to lay
    out in Fortran order: the result equals `asarray(a, dtype)`, made 1-D if it is 0-d, as
    NumPy does.
    """
    x = asarray(a, dtype, like=like)
    if x.ndim >= 2 and x is a:
        return new_handle(x)  # NumPy copies a C-ordered array into Fortran order
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
