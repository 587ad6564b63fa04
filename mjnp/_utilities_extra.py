"""More utilities (continuing `_utilities.py`): `asfortranarray` (memory layout), `isnat`
(datetime test), `show_runtime` (the runtime report) and `fromregex` (reading text files).

NB: mjnp arrays have no memory layout and no datetime or structured dtypes, so the first two
are trivial and `fromregex` accepts only what mjnp can hold; see each docstring.
"""

from __future__ import annotations

import importlib.metadata
import platform
import sys
from pprint import pprint
from typing import Any

import numpy as np

import mjcore
from mjcore import dtypes, lax
from mjnp._creation import asarray
from mjnp._function_objects import c_function
from mjnp._manipulation import new_handle
from mjnp._promotion import asarray_arg

ArrayLike = Any
Array = Any
DTypeLike = Any


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


def isnat(x: ArrayLike, /) -> Array:
    """`numpy.isnat`: whether each element is NaT (not a time).

    NB: mjnp has no datetime64 or timedelta64 dtypes, so every mjnp array gets NumPy's
    TypeError for non-datetime input.

    Raises:
        TypeError: always (naming the dtype given).
    """
    dtype = asarray_arg("isnat", x).dtype
    raise TypeError(
        f"mjnp.isnat: ufunc 'isnat' is only defined for np.datetime64 and np.timedelta64, got "
        f"dtype {dtype}; mjnp has no datetime dtypes (use NumPy for dates and times)"
    )


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def show_runtime() -> None:
    """Print the runtime environment, in the spirit of `numpy.show_runtime`: the versions of
    mjnp, NumPy and jaxlib (mjnp's XLA backend), Python, the machine, and mjnp's devices."""
    pprint(
        [
            {
                "mjnp_version": _version("mjnp"),
                "numpy_version": np.__version__,
                "jaxlib_version": _version("jaxlib"),
                "python": sys.version,
                "uname": platform.uname(),
            },
            {
                "backend": f"XLA through jaxlib's PJRT {mjcore.default_backend().upper()} client",
                "devices": [str(d) for d in mjcore.devices()],
            },
        ],
        sort_dicts=False,
    )


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
