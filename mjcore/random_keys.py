"""Typed PRNG keys, as `jax.random.key` makes them: arrays whose elements are whole keys.

A `KeyArray` of shape `s` holds the threefry2x32 key data as a uint32 array of shape
`(*s, 2)`. It indexes, reshapes, iterates and compares as an array of keys (the trailing data
axis never shows), prints with dtype `key<fry>` as JAX's do, and refuses arithmetic and
conversion to NumPy (`key_data` gives the bits). It is a pytree whose one leaf is the data,
so keys pass through `jit`, `vmap` (over leading key axes), `scan`, `cond` and loop carries
unchanged.

NB: JAX's key arrays are pytree leaves of an extended dtype; here `tree_leaves(key)` gives the
uint32 data, and a negative `vmap` axis counts from the data's trailing axis.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from mjcore import lax, tree_util
from mjcore.array import Array
from mjcore.core import Tracer, get_aval
from mjcore.dispatch import device_put

_U32 = np.dtype("uint32")
_IMPL = "threefry2x32"


class KeyDType:
    """The dtype of typed keys: `key<fry>` (threefry2x32), JAX's name for it."""

    __slots__ = ()
    name = "key<fry>"
    impl = _IMPL

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeyDType) or other == self.name

    def __hash__(self) -> int:
        return hash(self.name)


KEY_DTYPE = KeyDType()


class KeyArray:
    """An array of PRNG keys (see the module docstring); make one with `mjcore.random.key`
    or `wrap_key_data`."""

    __slots__ = ("_data",)
    __hash__ = None  # type: ignore[assignment]  # an array: unhashable, as NumPy's
    __array_priority__ = 2000  # `ndarray == key` defers to KeyArray.__eq__

    def __init__(self, data: Any):
        self._data = data

    # -- what it is ------------------------------------------------------------------------------
    @property
    def dtype(self) -> KeyDType:
        return KEY_DTYPE

    @property
    def shape(self) -> tuple[int, ...]:
        return get_aval(self._data).shape[:-1]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of unsized object: a single key (shape ())")
        return shape[0]

    def __iter__(self) -> Iterator[KeyArray]:
        for i in range(len(self)):
            yield self[i]

    # -- array operations on the key axes ------------------------------------------------------
    def __getitem__(self, index: Any) -> KeyArray:
        getitem = getattr(type(self._data), "__getitem__", None)
        if getitem is None:  # the indexing surface comes with mjnp
            raise TypeError("indexing key arrays uses mjnp's indexing: import mjnp first")
        index = index if isinstance(index, tuple) else (index,)
        if any(i is Ellipsis for i in index):
            return KeyArray(getitem(self._data, (*index, slice(None))))
        # An Ellipsis before the data axis: an index that names more axes than the keys have
        # is an IndexError rather than an index into the data.
        return KeyArray(getitem(self._data, (*index, Ellipsis, slice(None))))

    def reshape(self, *shape: Any) -> KeyArray:
        if len(shape) == 1 and not isinstance(shape[0], int | np.integer):
            shape = tuple(shape[0])
        new_shape = _resolve_shape(self.shape, tuple(int(d) for d in shape))
        return KeyArray(lax.reshape(self._data, (*new_shape, 2)))

    def ravel(self) -> KeyArray:
        return self.reshape(-1)

    flatten = ravel

    def transpose(self, *axes: Any) -> KeyArray:
        ndim = self.ndim
        if len(axes) == 1 and not isinstance(axes[0], int | np.integer):
            axes = tuple(axes[0])
        if not axes:
            axes = tuple(reversed(range(ndim)))
        axes = tuple(int(a) + ndim if int(a) < 0 else int(a) for a in axes)
        if sorted(axes) != list(range(ndim)):
            raise ValueError(f"transpose: axes {axes} are not a permutation of the key axes")
        return KeyArray(lax.transpose(self._data, (*axes, ndim)))

    @property
    def T(self) -> KeyArray:  # noqa: N802  (NumPy's name)
        return self.transpose()

    def __eq__(self, other: object) -> Any:  # type: ignore[override]
        if not isinstance(other, KeyArray):
            return NotImplemented
        return _keys_equal(self, other)

    def __ne__(self, other: object) -> Any:  # type: ignore[override]
        if not isinstance(other, KeyArray):
            return NotImplemented
        return lax.bitwise_not(_keys_equal(self, other))

    def block_until_ready(self) -> KeyArray:
        self._data.block_until_ready()
        return self

    # -- what it refuses -------------------------------------------------------------------------
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError(
            f"a key array (dtype {KEY_DTYPE}, shape {self.shape}) cannot be converted to a "
            "NumPy array; take its uint32 bits with mjcore.random.key_data(keys)"
        )

    def __bool__(self) -> bool:
        raise TypeError(
            "the truth value of a key array is undefined; compare keys with == and reduce the "
            "result, or compare mjcore.random.key_data(keys)"
        )

    def __repr__(self) -> str:
        data = self._data
        if isinstance(data, Array):
            return f"Array({self.shape}, dtype={KEY_DTYPE}) overlaying:\n{np.asarray(data)}"
        return f"KeyArray({self.shape}, dtype={KEY_DTYPE}) overlaying {data!r}"

    __str__ = __repr__


def _resolve_shape(old: tuple[int, ...], new: tuple[int, ...]) -> tuple[int, ...]:
    """`new` with one -1 filled in, as NumPy's reshape reads it."""
    size = int(np.prod(old, dtype=np.int64))
    unknown = [i for i, d in enumerate(new) if d == -1]
    known = int(np.prod([d for d in new if d != -1], dtype=np.int64))
    if len(unknown) > 1 or any(d < -1 for d in new):
        raise ValueError(f"reshape: invalid shape {new} for key array of shape {old}")
    if unknown and known and size % known == 0:
        new = new[: unknown[0]] + (size // known,) + new[unknown[0] + 1 :]
    if int(np.prod(new, dtype=np.int64)) != size or -1 in new:
        raise ValueError(f"cannot reshape key array of shape {old} into shape {new}")
    return new


def _keys_equal(a: KeyArray, b: KeyArray) -> Any:
    shape = tuple(np.broadcast_shapes(a.shape, b.shape))
    x = lax.broadcast_to(a._data, (*shape, 2))
    y = lax.broadcast_to(b._data, (*shape, 2))
    return lax.reduce_and(lax.eq(x, y), (len(shape),))


tree_util.register_pytree_node(
    KeyArray,
    lambda keys: ((keys._data,), None),
    lambda _, children: KeyArray(children[0]),
)


def key_data(keys: Any) -> Any:
    """The uint32 bits of `keys`, of shape `(*keys.shape, 2)`, as `jax.random.key_data`; a raw
    uint32 key array is returned as it is."""
    if isinstance(keys, KeyArray):
        return keys._data
    return _check_raw("key_data", keys)


def wrap_key_data(data: Any, *, impl: str | None = None) -> KeyArray:
    """Typed keys over uint32 key data of shape `(..., 2)`, as `jax.random.wrap_key_data`.

    Raises:
      ValueError: for an `impl` other than threefry2x32, or data of the wrong shape.
      TypeError: for data that is not uint32.
    """
    if impl is not None and str(impl) not in (_IMPL, "fry"):
        raise ValueError(
            f"mjcore.random.wrap_key_data: only the threefry2x32 implementation is available, "
            f"got impl={impl!r}"
        )
    if isinstance(data, KeyArray):
        raise TypeError("mjcore.random.wrap_key_data: the data is already a key array")
    return KeyArray(_check_raw("wrap_key_data", data))


def key_impl(keys: Any) -> str:
    """The PRNG implementation of `keys`: "threefry2x32", as `jax.random.key_impl`."""
    key_data(keys)  # checks them
    return _IMPL


def _check_raw(name: str, data: Any) -> Any:
    if not isinstance(data, Array | Tracer):
        data = np.asarray(data)
    aval = get_aval(data)
    if aval.dtype != _U32 or aval.shape[-1:] != (2,):
        raise TypeError(
            f"mjcore.random.{name}: key data must be a uint32 array of shape (..., 2), got "
            f"{aval.dtype.name}{list(aval.shape)}"
        )
    if not isinstance(data, Array | Tracer):
        data = device_put(data)
    return data
