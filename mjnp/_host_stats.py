"""Direct NumPy paths for sorting, sets, histograms, statistics and FFT on small eager arrays.

Those functions (sort, unique, histogram, percentile, fft, ...) are several primitives each,
some without host rules (sort), so eagerly they cost several dispatches or XLA executions where
NumPy takes a few microseconds. When every array argument is a concrete, strong, eager CPU Array
of at most `HOST_LIMIT` elements, the mjnp function calls NumPy's own function on the host
values instead: the same code NumPy runs, so the same bits, dtypes and shapes. Anything traced,
transformed, on another device, weakly typed or larger takes the function's general path, which
also raises its errors: a fast path falls back to it (`None`) whenever NumPy would raise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore.array import Array, wrap_host
from mjcore.core import ShapedArray
from mjcore.dispatch import array_value, is_eager_host

# Elements per operand up to which NumPy runs the call (dispatch's default host limit: NumPy's
# sort, search and FFT loops are within ~2x of XLA's there, and nothing compiles).
HOST_LIMIT = 1 << 15


def host_values(*args: Any) -> list[np.ndarray] | None:
    """The read-only host values of `args` when every one is a strong eager CPU Array of at
    most `HOST_LIMIT` elements and nothing is traced; else None (the general path runs)."""
    if not is_eager_host():
        return None
    values = []
    for a in args:
        if type(a) is not Array:
            return None
        aval = a.aval
        if aval.weak_type or aval.size > HOST_LIMIT:
            return None
        values.append(array_value(a))
    return values


def wrap(value: Any) -> Array:
    """A strong Array holding NumPy's fresh result `value` (an ndarray or NumPy scalar)."""
    out = value if type(value) is np.ndarray else np.asarray(value)
    return wrap_host(out, ShapedArray(out.shape, out.dtype))


def is_axis(axis: Any) -> bool:
    """Whether `axis` is None, a Python int or a tuple of them (what NumPy's reductions take and
    mjnp normalizes the same way; anything else takes the general path and its checks)."""
    if axis is None or type(axis) is int:
        return True
    return type(axis) is tuple and all(type(i) is int for i in axis)


def numpy_call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """`fn(*args, **kwargs)` of NumPy, or None where NumPy rejects the arguments (the general
    path then raises mjnp's error, naming the function and the fix)."""
    try:
        return fn(*args, **kwargs)
    except (ValueError, TypeError, IndexError, ZeroDivisionError):  # AxisError is a ValueError
        return None


def host_reduction(
    fn: Any, a: Any, axis: Any, keepdims: Any, kinds: str = "biuf", **kwargs: Any
) -> Array | None:
    """NumPy's reduction `fn(value, axis, keepdims=keepdims, **kwargs)` of Array `a`'s host
    value, wrapped; None where the general path runs (see `host_values`, `is_axis`)."""
    if type(keepdims) is not bool or not is_axis(axis):
        return None
    values = host_values(a)
    if values is None or values[0].dtype.kind not in kinds:
        return None
    out = numpy_call(fn, values[0], axis, keepdims=keepdims, **kwargs)
    return None if out is None else wrap(out)
