"""The memory-layout face of mjnp arrays: `view`, `byteswap`, `flat`, `resize`, the host byte
methods (`tobytes`, `tofile`, `dump`, `dumps`) and the layout attributes (`strides`, `flags`,
`base`), as `numpy.ndarray` has them.

Device arrays are immutable C-contiguous values, so the layout attributes are those of a fresh
C-ordered NumPy array, and the methods NumPy runs in place (`flat[i] = v`, `resize`,
`byteswap(inplace=True)`) rebind the handle, as `x[i] = v` does. Bit reinterpretation is built
from `lax.bitcast_convert_type` (same width) plus shifts and masks on unsigned words (different
widths), so it works under every transformation. Installed through `SURFACE` in
`mjnp/_array_surface.py`.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from mjcore import dtypes, lax
from mjcore.array import Array as _Array
from mjcore.core import Tracer, get_aval, rebind
from mjnp import _views
from mjnp._dtypes import ndarray as _ndarray
from mjnp._indexing import _update, getitem, host_values
from mjnp._indexing_functions import _cyclic
from mjnp._manipulation import new_handle, ravel, reshape
from mjnp._promotion import asarray_arg

Array = Any
DTypeLike = Any

_INT64 = np.dtype("int64")
_UINT = {size: np.dtype(f"uint{8 * size}") for size in (1, 2, 4, 8)}


# --- bits as unsigned words -----------------------------------------------------------------


def _word_limit(dtype: np.dtype) -> int:
    """The widest word a dtype splits into: its item size, or a component's for complex."""
    return dtype.itemsize // 2 if dtype.kind == "c" else dtype.itemsize


def _to_words(x: Array, w: int) -> Array:
    """The bits of `x` as unsigned `w`-byte words, little-endian: shape `x.shape + (s // w,)`.

    `w` must divide the item size `s` (of a complex component, for complex `x`).
    """
    aval = get_aval(x)
    shape, dtype, nd = aval.shape, aval.dtype, len(aval.shape)
    if dtype.kind == "c":
        # A complex value is its real part's bits followed by its imaginary part's.
        parts = lax.concatenate(
            [lax.expand_dims(lax.real(x), (nd,)), lax.expand_dims(lax.imag(x), (nd,))], nd
        )
        return lax.reshape(_to_words(parts, w), (*shape, dtype.itemsize // w))
    if dtype.kind == "b":
        u = lax.convert_element_type(x, _UINT[1])
    else:
        u = lax.bitcast_convert_type(x, _UINT[dtype.itemsize])
    count = dtype.itemsize // w
    if count == 1:
        return lax.expand_dims(u, (nd,))
    out_shape = (*shape, count)
    shifts = np.arange(count, dtype=_UINT[dtype.itemsize]) * (8 * w)
    shifted = lax.shift_right_logical(
        lax.broadcast_in_dim(u, out_shape, tuple(range(nd))),
        lax.broadcast_in_dim(shifts, out_shape, (nd,)),
    )
    return lax.convert_element_type(shifted, _UINT[w])  # keeps the low `w` bytes


def _from_words(words: Array, dtype: np.dtype) -> Array:
    """The inverse of `_to_words`: the trailing axis of words joined into values of `dtype`."""
    aval = get_aval(words)
    shape, w = aval.shape[:-1], aval.dtype.itemsize
    nd = len(shape)
    if dtype.kind == "c":
        part_dtype = np.dtype(f"float{4 * dtype.itemsize}")
        parts = _from_words(lax.reshape(words, (*shape, 2, part_dtype.itemsize // w)), part_dtype)
        real, imag = (lax.squeeze(lax.slice_in_dim(parts, i, i + 1, nd), (nd,)) for i in (0, 1))
        return lax.complex(real, imag)
    count = dtype.itemsize // w
    if count == 1:
        u = lax.squeeze(words, (nd,))
    else:
        wide = lax.convert_element_type(words, _UINT[dtype.itemsize])
        shifts = np.arange(count, dtype=_UINT[dtype.itemsize]) * (8 * w)
        shifted = lax.shift_left(wide, lax.broadcast_in_dim(shifts, aval.shape, (nd,)))
        u = lax.reduce_or(shifted, (nd,))
    if dtype.kind == "b":
        # NB: NumPy keeps a bool's byte as it is (`uint8(2).view(bool)` holds 2 but prints
        # True); a device bool is 0 or 1, so any nonzero byte becomes True.
        return lax.ne(u, np.zeros((), _UINT[1]))
    return lax.bitcast_convert_type(u, dtype)


# --- view and byteswap ----------------------------------------------------------------------


def _is_array_type(obj: Any) -> bool:
    return isinstance(obj, type) and (
        issubclass(obj, np.ndarray) or obj in (_ndarray, _Array) or issubclass(obj, Tracer)
    )


def _check_view_type(type_: Any) -> None:
    if type_ is None or type_ in (np.ndarray, _ndarray, _Array):
        return
    if not _is_array_type(type_):
        raise ValueError(f"mjnp view: type must be a sub-type of ndarray type, got {type_!r}")
    raise TypeError(
        f"mjnp view: mjnp arrays cannot be viewed as {type_.__name__}; convert on the host "
        f"with numpy.asarray(x).view({type_.__name__})"
    )


def view(self: Array, dtype: DTypeLike = None, type: Any = None) -> Array:  # noqa: A002  (NumPy's name)
    """The bits of the array reinterpreted as `dtype`, as `numpy.ndarray.view`.

    A dtype of another item size rescales the last axis (float32 `(2, 3)` as uint8 is
    `(2, 12)`). `view()`, or `type` an ndarray type, gives an equal array.

    NB: the result is a new value, not a window onto `self`: later writes to either are not
    seen by the other. A non-native byte order (`'>f4'`) gives the values NumPy reads, in the
    native dtype. Bool results hold True for any nonzero byte.

    Raises:
        ValueError: for a 0-d array and a dtype of another item size, or when the last axis's
            byte count is not a multiple of a larger item size, as NumPy raises.
        TypeError: for a dtype mjnp does not support, or a `type` that is an ndarray subclass
            other than ndarray (view on the host with `numpy.asarray(x).view(type)`).
    """
    if _is_array_type(dtype):
        dtype, type = None, dtype  # noqa: A001  (`x.view(ndarray)` names the type, as in NumPy)
    _check_view_type(type)
    if dtype is None:
        return new_handle(self)
    new_dtype = dtypes.canonicalize_dtype(dtype, "mjnp view")
    requested = np.dtype(dtype)
    aval = get_aval(self)
    old_size, new_size = aval.dtype.itemsize, new_dtype.itemsize
    shape = aval.shape
    if old_size != new_size:
        if not shape:
            raise ValueError(
                "mjnp view: changing the dtype of a 0d array is only supported if the itemsize "
                f"is unchanged ({aval.dtype} has {old_size} bytes, {new_dtype} {new_size}); "
                "reshape it to (1,) first"
            )
        if (shape[-1] * old_size) % new_size:
            raise ValueError(
                "mjnp view: when changing to a larger dtype, its size must be a divisor of the "
                f"total size in bytes of the last axis of the array; the last axis of shape "
                f"{shape} holds {shape[-1] * old_size} bytes of {aval.dtype}, not a multiple of "
                f"{new_dtype}'s {new_size}"
            )
    out = _view(self, new_dtype)
    if not requested.isnative and new_size > 1:
        out = _byteswap(out)
    return new_handle(out) if out is self else out


def _view(x: Array, new_dtype: np.dtype) -> Array:
    aval = get_aval(x)
    old_dtype, shape = aval.dtype, aval.shape
    if old_dtype == new_dtype:
        return x
    plain = old_dtype.kind not in "bc" and new_dtype.kind not in "bc"
    if plain and old_dtype.itemsize == new_dtype.itemsize:
        return lax.bitcast_convert_type(x, new_dtype)
    w = min(_word_limit(old_dtype), _word_limit(new_dtype))
    words = _to_words(x, w)
    if shape:
        last = shape[-1] * old_dtype.itemsize // new_dtype.itemsize
        words = lax.reshape(words, (*shape[:-1], last, new_dtype.itemsize // w))
    return _from_words(words, new_dtype)


def _byteswap(x: Array) -> Array:
    aval = get_aval(x)
    dtype, shape = aval.dtype, aval.shape
    if _word_limit(dtype) == 1 or dtype.kind == "b":
        return x
    words = _to_words(x, 1)
    # Each component of a complex value is swapped on its own, as NumPy swaps them.
    parts = 2 if dtype.kind == "c" else 1
    split = lax.reshape(words, (*shape, parts, dtype.itemsize // parts))
    swapped = lax.reshape(lax.rev(split, (len(shape) + 1,)), (*shape, dtype.itemsize))
    return _from_words(swapped, dtype)


def byteswap(self: Array, inplace: bool = False) -> Array:
    """The array with the bytes of each element reversed, as `numpy.ndarray.byteswap`.

    Complex elements have their real and imaginary parts swapped separately, as in NumPy.
    `inplace=True` rebinds the handle (see `x[i] = v`) and returns it.
    """
    out = _byteswap(self)
    if inplace:
        rebind(self, out)
        return self
    return new_handle(out) if out is self else out


# --- flat -----------------------------------------------------------------------------------


def _is_single_index(idx: Any) -> bool:
    return not isinstance(idx, bool | np.bool_) and isinstance(idx, int | np.integer)


def _flat_index(idx: Any) -> Any:
    """`idx` checked as NumPy's flat iterator checks it: one index, not None or a bool."""
    if isinstance(idx, tuple):
        if len(idx) > 1:
            raise IndexError(
                f"mjnp flat: too many indices for flat iterator: flat iterator is 1-dimensional, "
                f"but {len(idx)} were indexed"
            )
        idx = idx[0] if idx else Ellipsis
    if idx is None or isinstance(idx, bool | np.bool_):
        raise IndexError(
            f"mjnp flat: only integers, slices (`:`), ellipsis (`...`) and integer or boolean "
            f"arrays are valid indices, got {idx!r}"
        )
    if isinstance(idx, list) and idx and all(isinstance(i, bool | np.bool_) for i in idx):
        raise IndexError(
            "mjnp flat: boolean indices for iterators must be arrays, got a list; pass "
            "numpy.array(mask)"
        )
    return idx


class FlatIterator:
    """`x.flat`: the elements of `x` in C order, as `numpy.flatiter`.

    Reading `x.flat[idx]` is `x.ravel()[idx]`; writing `x.flat[idx] = v` rebinds `x` (see
    `x[i] = v`) with `v`'s elements repeated as needed, as NumPy writes through the iterator.
    It is an iterator over the elements, yielding 0-d arrays.
    """

    __slots__ = ("base", "index")

    def __init__(self, base: Array):
        self.base = base
        self.index = 0

    def __repr__(self) -> str:
        return f"FlatIterator({self.base!r})"

    def __len__(self) -> int:
        return get_aval(self.base).size

    def __iter__(self) -> Iterator[Array]:
        return self

    def __next__(self) -> Array:
        shape = get_aval(self.base).shape
        if self.index >= get_aval(self.base).size:
            raise StopIteration
        coords = np.unravel_index(self.index, shape)
        self.index += 1
        return getitem(self.base, tuple(int(c) for c in coords))

    @property
    def coords(self) -> tuple[int, ...]:
        """The N-dimensional index of the next element, as `numpy.flatiter.coords`."""
        return tuple(int(c) for c in np.unravel_index(self.index, get_aval(self.base).shape))

    def __getitem__(self, idx: Any) -> Array:
        return getitem(ravel(self.base), _flat_index(idx))

    def __setitem__(self, idx: Any, value: Any) -> None:
        x = self.base
        aval = get_aval(x)
        idx = _flat_index(idx)
        if _is_single_index(idx):
            # NumPy sets one item from a scalar only, and reports any failure as ValueError.
            try:
                value = asarray_arg("flat", host_values("flat", value, aval.dtype))
            except (TypeError, OverflowError, ValueError) as err:
                raise ValueError(f"mjnp flat: error setting single item of array: {err}") from err
            if get_aval(value).ndim:
                raise ValueError(
                    f"mjnp flat: error setting single item of array: the value must be a "
                    f"scalar, got shape {get_aval(value).shape}"
                )
        positions = ravel(getitem(lax.iota(_INT64, aval.size), idx))
        value = host_values("flat", value, aval.dtype)
        count = get_aval(positions).size
        if count == 0 or get_aval(asarray_arg("flat", value)).size == 0:
            return
        values = _cyclic("flat", value, count)
        rebind(x, reshape(_update(ravel(x), positions, values, lax.scatter, "flat"), aval.shape))

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        out = np.asarray(self.base).reshape(-1)
        if dtype is not None:
            return out.astype(dtype)
        return out.copy() if copy else out

    def copy(self) -> Array:
        """A 1-D copy of the elements, as `numpy.flatiter.copy`."""
        return new_handle(ravel(self.base))


def _flat_get(self: Array) -> FlatIterator:
    return FlatIterator(self)


def _flat_set(self: Array, value: Any) -> None:
    FlatIterator(self)[...] = value


flat = property(
    _flat_get,
    _flat_set,
    doc="""An iterator over the elements in C order, as `numpy.ndarray.flat` (see
    `FlatIterator`); `x.flat = v` writes `v` repeated into every element, rebinding `x`.""",
)


# --- resize ---------------------------------------------------------------------------------


def _resize_shape(new_shape: tuple[Any, ...]) -> tuple[int, ...]:
    if len(new_shape) == 1 and not _is_single_index(new_shape[0]):
        try:
            dims = tuple(new_shape[0])
        except TypeError as err:
            raise TypeError(
                f"mjnp resize: expected a sequence of integers or a single integer, got "
                f"{new_shape[0]!r}"
            ) from err
    else:
        dims = new_shape
    try:
        shape = tuple(operator.index(d) for d in dims)
    except TypeError as err:
        raise TypeError(f"mjnp resize: the new shape must be integers, got {new_shape!r}") from err
    if any(d < 0 for d in shape):
        raise ValueError(f"mjnp resize: negative dimensions not allowed, got {shape}")
    return shape


def resize(self: Array, *new_shape: Any, refcheck: bool = True) -> None:
    """Change the shape in place, as `numpy.ndarray.resize`: `x.resize(2, 3)` or
    `x.resize((2, 3))`.

    The elements are kept in C order, cut off or followed by zeros. `x.resize()` and
    `x.resize(None)` leave `x` as it is.

    NB: rebinds the handle (see `x[i] = v`). As NumPy, it refuses a view (`x[1:]`, `x.T`) or
    an array with live views (unless `refcheck=False`, which detaches the views: they keep
    their values).

    Raises:
        ValueError: for a negative dimension, a view, or an array with views and `refcheck`.
        TypeError: for a dimension that is not an integer.
    """
    if not new_shape or new_shape == (None,):
        return
    shape = _resize_shape(new_shape)
    if _views.is_view(self):
        raise ValueError(
            "mjnp resize: cannot resize this array: it does not own its data (it is a view); "
            "use mjnp.resize(x, shape) for a new array"
        )
    if _views.has_views(self):
        if refcheck:
            raise ValueError(
                "mjnp resize: cannot resize an array that is referenced by another array (a "
                "view of it); use mjnp.resize(x, shape) for a new array, or refcheck=False"
            )
        _views.detach(self)
    aval = get_aval(self)
    size = int(np.prod(shape, dtype=np.int64))
    flat_x = lax.reshape(self, (aval.size,))
    if size <= aval.size:
        flat_x = lax.slice_in_dim(flat_x, 0, size, 0)
    else:
        zeros = lax.full((size - aval.size,), 0, aval.dtype, aval.weak_type)
        flat_x = lax.concatenate([flat_x, zeros], 0)
    rebind(self, lax.reshape(flat_x, shape))


# --- host bytes -----------------------------------------------------------------------------


def tobytes(self: Array, order: Literal["C", "F", "A", "K"] | None = "C") -> bytes:
    """The raw bytes of the host copy, as `numpy.ndarray.tobytes`.

    Raises:
        TracerArrayConversionError: (a TypeError) on a traced value, as `numpy.asarray` does.
    """
    return np.asarray(self).tobytes(order=order)


def tofile(self: Array, fid: Any, sep: str = "", format: str = "%s") -> None:  # noqa: A002  (NumPy's name)
    """Write the host copy to a file (binary, or text with `sep`), as `numpy.ndarray.tofile`.

    Raises:
        TracerArrayConversionError: (a TypeError) on a traced value, as `numpy.asarray` does.
    """
    np.asarray(self).tofile(fid, sep=sep, format=format)


def dump(self: Array, file: Any) -> None:
    """Pickle the host copy to `file`, as `numpy.ndarray.dump`.

    NB: the pickle holds a `numpy.ndarray` (the bytes NumPy writes); `pickle.dump(x, f)`
    keeps an mjnp array.

    Raises:
        TracerArrayConversionError: (a TypeError) on a traced value, as `numpy.asarray` does.
    """
    np.asarray(self).dump(file)


def dumps(self: Array) -> bytes:
    """The pickle of the host copy, as `numpy.ndarray.dumps` (a `numpy.ndarray` when loaded).

    Raises:
        TracerArrayConversionError: (a TypeError) on a traced value, as `numpy.asarray` does.
    """
    return np.asarray(self).dumps()


# --- layout attributes ----------------------------------------------------------------------


def _strides(self: Array) -> tuple[int, ...]:
    aval = get_aval(self)
    if aval.size == 0:
        return (0,) * len(aval.shape)  # as NumPy gives a fresh empty array
    step, out = aval.dtype.itemsize, []
    for n in reversed(aval.shape):
        out.append(step)
        step *= n
    return tuple(reversed(out))


strides = property(
    _strides,
    doc="""Bytes to step in each dimension, as `numpy.ndarray.strides` for a C-contiguous
    array (device arrays always are).""",
)

# NumPy's flag bits (`flags.num`) and the keys `flags[key]` accepts.
_C, _F, _OWN, _ALIGNED, _WRITE, _WBIC = 0x1, 0x2, 0x4, 0x100, 0x400, 0x2000


@dataclass(frozen=True)
class Flags:
    """`x.flags`, as `numpy.ndarray.flags` (read-only): what NumPy reports for a fresh
    C-contiguous array of the shape. WRITEABLE is True because in-place syntax works.

    NB: flags cannot be set (there is no `setflags`); writes raise AttributeError.
    """

    c_contiguous: bool
    f_contiguous: bool
    owndata: bool = True
    writeable: bool = True
    aligned: bool = True
    writebackifcopy: bool = False

    contiguous = property(lambda self: self.c_contiguous)
    fortran = property(lambda self: self.f_contiguous)
    fnc = property(lambda self: self.f_contiguous and not self.c_contiguous)
    forc = property(lambda self: self.f_contiguous or self.c_contiguous)
    behaved = property(lambda self: self.aligned and self.writeable)
    carray = property(lambda self: self.behaved and self.c_contiguous)
    farray = property(lambda self: self.behaved and self.f_contiguous and not self.c_contiguous)

    @property
    def num(self) -> int:
        """The flags as NumPy's bit mask."""
        bits = [(self.c_contiguous, _C), (self.f_contiguous, _F), (self.owndata, _OWN)]
        bits += [(self.aligned, _ALIGNED), (self.writeable, _WRITE), (self.writebackifcopy, _WBIC)]
        return sum(bit for on, bit in bits if on)

    def __getitem__(self, key: str) -> bool:
        name = _FLAG_KEYS.get(key) if isinstance(key, str) else None
        if name is None:
            raise KeyError("Unknown flag")
        return getattr(self, name)

    def __setitem__(self, key: str, value: Any) -> None:
        raise TypeError(f"mjnp flags are read-only: cannot set {key!r} (no setflags in mjnp)")

    def __repr__(self) -> str:
        names = ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED")
        return "".join(f"  {n} : {self[n]}\n" for n in (*names, "WRITEBACKIFCOPY"))


_FLAG_KEYS = {
    "C": "c_contiguous",
    "CONTIGUOUS": "c_contiguous",
    "C_CONTIGUOUS": "c_contiguous",
    "F": "f_contiguous",
    "FORTRAN": "f_contiguous",
    "F_CONTIGUOUS": "f_contiguous",
    "O": "owndata",
    "OWNDATA": "owndata",
    "W": "writeable",
    "WRITEABLE": "writeable",
    "A": "aligned",
    "ALIGNED": "aligned",
    "X": "writebackifcopy",
    "WRITEBACKIFCOPY": "writebackifcopy",
    "B": "behaved",
    "BEHAVED": "behaved",
    "CA": "carray",
    "CARRAY": "carray",
    "FA": "farray",
    "FARRAY": "farray",
    "FNC": "fnc",
    "FORC": "forc",
}


def _flags(self: Array) -> Flags:
    shape = get_aval(self).shape
    # A C-ordered array is also F-contiguous when it is empty or has one axis longer than 1.
    f_contiguous = 0 in shape or sum(n != 1 for n in shape) <= 1
    return Flags(c_contiguous=True, f_contiguous=f_contiguous)


flags = property(_flags, doc="Memory-layout flags, as `numpy.ndarray.flags` (see `Flags`).")

base = property(
    lambda self: None,
    doc="None, as `numpy.ndarray.base` for an array that owns its memory: there are no views.",
)
