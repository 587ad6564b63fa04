"""Printing: NumPy's formatting functions on the host copy of an array, and NumPy's print
options (shared with NumPy, so `repr` of an mjnp Array follows `numpy.set_printoptions` too).

Formatting needs the values, so these functions work on concrete arrays only (a traced value
raises the tracer conversion error, as `numpy.asarray` on it does).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

ArrayLike = Any


def _host(a: ArrayLike) -> np.ndarray:
    return np.asarray(a)


def array2string(a: ArrayLike, *args: Any, **kwargs: Any) -> str:
    """`numpy.array2string` of the array's values (same arguments)."""
    return np.array2string(_host(a), *args, **kwargs)


def array_repr(
    arr: ArrayLike,
    max_line_width: int | None = None,
    precision: int | None = None,
    suppress_small: bool | None = None,
) -> str:
    """`numpy.array_repr` of the array's values: `array([1, 2])`, exactly as NumPy prints."""
    return np.array_repr(_host(arr), max_line_width, precision, suppress_small)


def array_str(
    a: ArrayLike,
    max_line_width: int | None = None,
    precision: int | None = None,
    suppress_small: bool | None = None,
) -> str:
    """`numpy.array_str` of the array's values."""
    return np.array_str(_host(a), max_line_width, precision, suppress_small)


def format_float_positional(x: Any, *args: Any, **kwargs: Any) -> str:
    """`numpy.format_float_positional` of a scalar (a 0-d mjnp array is read on the host)."""
    value: Any = _host(x)[()]  # a NumPy scalar (or an array, which NumPy rejects)
    return np.format_float_positional(value, *args, **kwargs)


def format_float_scientific(x: Any, *args: Any, **kwargs: Any) -> str:
    """`numpy.format_float_scientific` of a scalar (a 0-d mjnp array is read on the host)."""
    value: Any = _host(x)[()]  # a NumPy scalar (or an array, which NumPy rejects)
    return np.format_float_scientific(value, *args, **kwargs)


def set_printoptions(*args: Any, **kwargs: Any) -> None:
    """`numpy.set_printoptions`: NumPy's global options, which mjnp's printing uses."""
    np.set_printoptions(*args, **kwargs)


def get_printoptions() -> dict[str, Any]:
    """`numpy.get_printoptions`."""
    return dict(np.get_printoptions())  # (NumPy's is a fresh TypedDict)


@contextlib.contextmanager
def printoptions(*args: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:
    """`numpy.printoptions`: set print options for the `with` block."""
    with np.printoptions(*args, **kwargs) as options:
        yield dict(options)
