"""The Array: an immutable value holding a PJRT buffer or a host ndarray (or both) and its aval.

On the CPU platform an eager result may be computed by NumPy on the host (`mjcore.dispatch`):
it then holds the ndarray and gets a device buffer only when a compiled program needs one.
A result computed by XLA holds its buffer, and its host view is a zero-copy DLPack view made on
first use. `_buf` (the device buffer) and `_value()` (the host view) are the two accessors.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from mjcore import core, dtypes
from mjcore.backend import client as backend
from mjcore.core import ShapedArray


class Array:
    """An n-dimensional array on the XLA device (or, on CPU, in host memory).

    Values are immutable: operations return new Arrays and in-place syntax rebinds the handle.
    """

    # `_dbuf`: the PJRT buffer or None; `_npy`: the read-only host ndarray or None. At least one
    # is set; a donated Array has a deleted `_dbuf` and no `_npy`. `_link` and `_children`
    # belong to the write-sharing views (`mjcore/views.py`): None, unless the array is a view
    # or has views. They describe the handle, not its value, so `rebind` keeps them.
    __slots__ = ("_dbuf", "aval", "_npy", "_link", "_children", "__weakref__")
    __array_priority__ = 1000
    __hash__ = None  # type: ignore[assignment]  # unhashable, as in NumPy

    def __init__(self, buf: Any, aval: ShapedArray):
        self._dbuf = buf
        self.aval = aval
        self._npy: np.ndarray | None = None
        self._link: Any = None
        self._children: Any = None

    def _rebind(self, new: Array) -> None:
        # `core.rebind`: the value slots only; the view links stay with the handle
        self._dbuf = new._dbuf
        self.aval = new.aval
        self._npy = new._npy

    @property
    def _buf(self) -> Any:
        """The device buffer, put on the device from the host value on first use."""
        buf = self._dbuf
        if buf is None:
            # (an Array without a buffer holds its host value)
            buf = self._dbuf = backend.device_put(cast(np.ndarray, self._npy))
        return buf

    # -- metadata ------------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    @property
    def itemsize(self) -> int:
        return self.aval.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.aval.size * self.aval.dtype.itemsize

    # -- host conversion -----------------------------------------------------------------------
    def _value(self) -> np.ndarray:
        """The host value (cached; read-only)."""
        buf = self._dbuf
        if buf is not None and buf.is_deleted():
            # Even with a host copy cached: a donated Array is gone, as in JAX.
            raise backend.deleted_error(buf)
        host = self._npy
        if host is None:
            host = self._npy = backend.to_numpy(buf)
        elif host.flags.writeable:
            # A host result is made read-only here, where it can first leave mjcore, rather
            # than on every eager op (~0.4 µs); host rules never write their inputs.
            host.flags.writeable = False
        return host

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        value = self._value()
        if dtype is not None and np.dtype(dtype) != value.dtype:
            return value.astype(dtype)
        if copy:
            return value.copy()
        return value

    def block_until_ready(self) -> Array:
        """Wait until the value is computed; returns the array.

        Raises:
          RuntimeError: if the array was donated to a jit-compiled function.
        """
        buf = self._dbuf
        if buf is None:  # computed on the host: ready
            return self
        try:
            # The buffer's own methods, not a backend helper: this is on every timed call's
            # path. A small computation has run inline by the time its result exists, and
            # asking is cheaper than waiting (which makes a future and releases the GIL):
            # ~0.1 µs of a ~3.5 µs eager op. (An asynchronous execution that failed is ready
            # too: its error is raised where the value is used.)
            if not buf.is_ready():
                buf.block_until_ready()
        except backend.RuntimeError_ as err:
            if buf.is_deleted():
                raise backend.deleted_error(buf) from err
            raise
        return self

    def is_deleted(self) -> bool:
        """Whether the buffer was consumed by donation to a jit-compiled function."""
        buf = self._dbuf
        return buf is not None and buf.is_deleted()

    def to_concrete_value(self) -> np.ndarray:
        return self._value()

    # The conversions to Python values read a host result as it is: the value does not leave
    # mjcore, so `_value()`'s read-only marking (~0.27 µs, as much as `float` of NumPy's
    # scalar and its indexing together) is not needed there.
    def __bool__(self) -> bool:
        host = self._npy
        if host is None or self._dbuf is not None:
            host = self._value()
        return bool(host)

    def __int__(self) -> int:
        host = self._npy
        if host is None or self._dbuf is not None:
            host = self._value()
        return int(host)

    def __float__(self) -> float:
        host = self._npy
        if host is None or self._dbuf is not None:
            host = self._value()
        return float(host)

    def __complex__(self) -> complex:
        host = self._npy
        if host is None or self._dbuf is not None:
            host = self._value()
        return complex(host)

    def __index__(self) -> int:
        return core.operator_index(self._value())

    def item(self, *args: Any) -> Any:
        host = self._npy
        if host is None or self._dbuf is not None:
            host = self._value()
        return host.item(*args)

    def tolist(self) -> Any:
        host = self._npy
        if host is None or self._dbuf is not None:
            host = self._value()
        return host.tolist()

    def __len__(self) -> int:
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def __iter__(self) -> Iterator[Any]:
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.aval.shape[0]))

    def __repr__(self) -> str:
        return np.array_repr(self._value())

    def __str__(self) -> str:
        return np.array_str(self._value())

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:
            return format(self._value().item(), spec)
        return format(str(self), spec)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_unpickle_array, (np.array(self._value()), self.aval.weak_type))

    # (`__copy__` is installed by `mjcore.lax.base`, whose primitive makes the copy: it sits
    # above this module.)

    def __deepcopy__(self, memo: dict[int, Any]) -> Array:
        out = memo[id(self)] = self.__copy__()
        return out

    # (`sharding` and `addressable_shards` are installed by `mjcore.sharded`, where layouts
    # over devices live: it sits above this module.)

    if TYPE_CHECKING:
        # What mypy cannot see: the NumPy surface `mjnp` installs at import through
        # `core.install_array_surface` (mjnp/_array_surface.py), `__copy__` (mjcore.lax.base)
        # and the sharding properties (mjcore.sharded). Declared, never defined, here.
        def __copy__(self) -> Array: ...
        @property
        def sharding(self) -> Any: ...
        @property
        def addressable_shards(self) -> list[Any]: ...
        @property
        def T(self) -> Array: ...
        @property
        def mT(self) -> Array: ...
        @property
        def at(self) -> Any: ...
        @property
        def real(self) -> Array: ...
        @property
        def imag(self) -> Array: ...
        def astype(self, dtype: Any, /, *args: Any, **kwargs: Any) -> Array: ...
        def reshape(self, *shape: Any, **kwargs: Any) -> Array: ...
        def __getitem__(self, key: Any) -> Array: ...
        def __setitem__(self, key: Any, value: Any) -> None: ...
        def __neg__(self) -> Array: ...
        def __pos__(self) -> Array: ...
        def __abs__(self) -> Array: ...
        def __invert__(self) -> Array: ...
        def __add__(self, other: Any) -> Array: ...
        def __radd__(self, other: Any) -> Array: ...
        def __sub__(self, other: Any) -> Array: ...
        def __rsub__(self, other: Any) -> Array: ...
        def __mul__(self, other: Any) -> Array: ...
        def __rmul__(self, other: Any) -> Array: ...
        def __truediv__(self, other: Any) -> Array: ...
        def __rtruediv__(self, other: Any) -> Array: ...
        def __floordiv__(self, other: Any) -> Array: ...
        def __rfloordiv__(self, other: Any) -> Array: ...
        def __mod__(self, other: Any) -> Array: ...
        def __rmod__(self, other: Any) -> Array: ...
        def __pow__(self, other: Any) -> Array: ...
        def __rpow__(self, other: Any) -> Array: ...
        def __matmul__(self, other: Any) -> Array: ...
        def __rmatmul__(self, other: Any) -> Array: ...
        def __and__(self, other: Any) -> Array: ...
        def __rand__(self, other: Any) -> Array: ...
        def __or__(self, other: Any) -> Array: ...
        def __ror__(self, other: Any) -> Array: ...
        def __xor__(self, other: Any) -> Array: ...
        def __rxor__(self, other: Any) -> Array: ...
        def __lshift__(self, other: Any) -> Array: ...
        def __rlshift__(self, other: Any) -> Array: ...
        def __rshift__(self, other: Any) -> Array: ...
        def __rrshift__(self, other: Any) -> Array: ...
        def __lt__(self, other: Any) -> Array: ...
        def __le__(self, other: Any) -> Array: ...
        def __gt__(self, other: Any) -> Array: ...
        def __ge__(self, other: Any) -> Array: ...
        # elementwise, as in NumPy (object's __eq__/__ne__ return bool)
        def __eq__(self, other: Any) -> Array: ...  # type: ignore[override]
        def __ne__(self, other: Any) -> Array: ...  # type: ignore[override]


def _unpickle_array(value: np.ndarray, weak_type: bool) -> Array:
    return array_from_numpy(value, weak_type)


def array_from_numpy(value: np.ndarray, weak_type: bool = False) -> Array:
    """Put a host NumPy array on the device."""
    dtype = dtypes.canonicalize_dtype(value.dtype)
    aval = ShapedArray(value.shape, dtype, weak_type)
    if value.dtype != dtype:
        value = value.astype(dtype)
    return Array(backend.device_put(value), aval)


# `new_object(Array)` then the slots: how the dispatch hot paths make result arrays
new_object = object.__new__


def wrap_buffer(buf: Any, aval: ShapedArray) -> Array:
    """`Array(buf, aval)` for the dispatch hot paths: slots set directly, without the type
    call and `__init__` frame (~170 -> ~80 ns; eager ops and jit calls take ~4-6 µs)."""
    a = new_object(Array)
    a._dbuf = buf
    a.aval = aval
    a._npy = None
    a._link = a._children = None
    return a


def wrap_host(value: np.ndarray, aval: ShapedArray) -> Array:
    """An Array holding a host result `value` (an ndarray of `aval`'s shape and dtype, which
    nothing else holds; `_value()` makes it read-only before it leaves mjcore)."""
    a = new_object(Array)
    a._dbuf = None
    a.aval = aval
    a._npy = value
    a._link = a._children = None
    return a


_interned_avals = core._interned


def wrap_host_value(value: np.ndarray, weak_type: bool = False) -> Array:
    """`wrap_host(value, ShapedArray(value.shape, value.dtype, weak_type))` for a fresh host
    result `value`: the interned aval looked up inline (`ShapedArray`'s constructor is a
    Python frame, ~0.2 µs of a ~1 µs `zeros`)."""
    aval = _interned_avals.get((value.shape, value.dtype, weak_type))
    if aval is None:
        aval = ShapedArray(value.shape, value.dtype, weak_type)
    a = new_object(Array)
    a._dbuf = None
    a.aval = aval
    a._npy = value
    a._link = a._children = None
    return a


core.pytype_aval_mappings[Array] = operator.attrgetter("aval")  # C: no Python frame
core.register_array_class(Array)


def avals_and_buffers(args: tuple[Any, ...]) -> tuple[tuple[ShapedArray, ...], list[Any]]:
    """The avals (a dispatch cache key) and device buffers of Array arguments (put on the
    device if they were computed on the host); AttributeError for anything else (tracers have
    avals but no buffers).

    On every fast dispatch: one and two arguments are unrolled, as a comprehension costs more
    than the rest of the lookup.
    """
    n_args = len(args)
    if n_args == 1:
        (a,) = args
        return (a.aval,), [a._buf]
    if n_args == 2:
        a, b = args
        return (a.aval, b.aval), [a._buf, b._buf]
    return tuple([a.aval for a in args]), [a._buf for a in args]
