"""NumPy's input and output routines: `.npy`/`.npz` files (`save`, `savez`,
`savez_compressed`, `load`), text files (`savetxt`, `loadtxt`, `genfromtxt`, `fromregex`) and
raw binary files (`fromfile`).

NumPy reads and writes the host copy; what is read goes onto the device. NB: mjnp has no
structured or masked arrays, so `genfromtxt` and `fromregex` return only what mjnp can hold;
see their docstrings.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from mjcore import dtypes
from mjcore.array import Array as _Array
from mjcore.core import Tracer
from mjnp._creation import asarray
from mjnp._function_objects import c_function
from mjnp._promotion import asarray_arg

ArrayLike = Any
Array = Any
DTypeLike = Any


def _host(a: ArrayLike) -> Any:
    return np.asarray(a) if isinstance(a, _Array | Tracer) else a


def _device(value: Any) -> Any:
    return asarray(value) if isinstance(value, np.ndarray) else value


def save(file: Any, arr: ArrayLike, allow_pickle: bool = True) -> None:
    """`numpy.save` of the array's values (a `.npy` file NumPy can read)."""
    np.save(file, _host(arr), allow_pickle=allow_pickle)


def savez(file: Any, *args: ArrayLike, allow_pickle: bool = True, **kwds: ArrayLike) -> None:
    """`numpy.savez` of the arrays' values."""
    np.savez(
        file,
        *(_host(a) for a in args),
        allow_pickle=allow_pickle,
        **{k: _host(v) for k, v in kwds.items()},
    )


def savez_compressed(
    file: Any, *args: ArrayLike, allow_pickle: bool = True, **kwds: ArrayLike
) -> None:
    """`numpy.savez_compressed` of the arrays' values."""
    np.savez_compressed(
        file,
        *(_host(a) for a in args),
        allow_pickle=allow_pickle,
        **{k: _host(v) for k, v in kwds.items()},
    )


class NpzFile(Mapping):
    """The arrays of a `.npz` file, put on the device as they are read (as `numpy.lib.npyio.
    NpzFile`: a mapping and a context manager)."""

    def __init__(self, npz: Any):
        self._npz = npz
        self.files = npz.files

    def __getitem__(self, key: str) -> Array:
        return _device(self._npz[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)

    def close(self) -> None:
        self._npz.close()

    def __enter__(self) -> NpzFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """`numpy.load`, with arrays put on the device (`.npz` files give an `NpzFile`)."""
    value = np.load(file, *args, **kwargs)
    if isinstance(value, np.lib.npyio.NpzFile):
        return NpzFile(value)
    return _device(value)


def savetxt(fname: Any, X: ArrayLike, *args: Any, **kwargs: Any) -> None:  # noqa: N803
    """`numpy.savetxt` of the array's values."""
    np.savetxt(fname, _host(X), *args, **kwargs)


def loadtxt(fname: Any, *args: Any, **kwargs: Any) -> Any:
    """`numpy.loadtxt`, then onto the device."""
    return _device(np.loadtxt(fname, *args, **kwargs))


def genfromtxt(fname: Any, *args: Any, **kwargs: Any) -> Any:
    """`numpy.genfromtxt`, then onto the device (structured and masked results are not
    supported: mjnp has no such arrays)."""
    return _device(np.genfromtxt(fname, *args, **kwargs))


@c_function  # as NumPy's builtin: does not bind as a method
def fromfile(file: Any, dtype: Any = float, count: int = -1, sep: str = "", offset: int = 0,
             *, like: None = None) -> Array:  # fmt: skip
    """`numpy.fromfile`, then onto the device."""
    return _device(np.fromfile(file, dtype=dtype, count=count, sep=sep, offset=offset))


def fromregex(file: Any, regexp: Any, dtype: DTypeLike, encoding: str | None = None) -> Array:
    """The matches of a regular expression in a text file, as `numpy.fromregex` (NumPy reads
    the file and parses the groups; the result goes on the device).

    NB: NumPy returns a structured array; mjnp has none, so `dtype` must be a structured dtype
    with a single field of a dtype mjnp supports (e.g. `[("num", np.int64)]`), and the result
    is the plain array of that field (NumPy's `result["num"]`).

    Raises:
        TypeError: for a dtype that is not structured (as NumPy), or that has several fields
            or an unsupported field dtype (mjnp cannot hold the result).
    """
    dtype = np.dtype(dtype)
    if dtype.names is None:
        raise TypeError(
            f"mjnp.fromregex: dtype must be a structured datatype, got {dtype}; pass e.g. "
            f"[('value', {dtype.name!r})]"
        )
    if len(dtype.names) != 1:
        raise TypeError(
            f"mjnp.fromregex: mjnp has no structured arrays, so the dtype must have a single "
            f"field, got {len(dtype.names)} fields {dtype}; read several fields with "
            "numpy.fromregex and convert each one with mjnp.asarray(result[name])"
        )
    name = dtype.names[0]
    field = dtype.fields[name][0]
    if field.names is not None or field.shape:
        raise TypeError(
            f"mjnp.fromregex: the field {name!r} has dtype {field}, which mjnp cannot hold; "
            "give it a numeric scalar dtype"
        )
    dtypes.canonicalize_dtype(field, "mjnp.fromregex")  # TypeError for str, object, ...
    values = np.fromregex(file, regexp, dtype, encoding=encoding)[name]
    return asarray_arg("fromregex", np.ascontiguousarray(values))
