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

import warnings
from typing import Any

import numpy as np

from mjcore.array import Array, wrap_host
from mjcore.core import ShapedArray
from mjcore.dispatch import array_value, is_eager_host
from mjcore.fp_errors import warn_at_user_line

# Elements per operand up to which NumPy runs the call: dispatch's default host limit (not
# re-measured per function here; above it the general path runs as before).
HOST_LIMIT = 1 << 15


def host_values(*args: Any) -> list[np.ndarray] | None:
    """The read-only host values of `args` when every one is a strong eager CPU Array of at
    most `HOST_LIMIT` elements and nothing is traced; else None (the general path runs)."""
    if not is_eager_host():
        return None
    if len(args) == 1:  # unrolled: most calls have one array
        a = args[0]
        if type(a) is not Array:
            return None
        aval = a.aval
        if aval.weak_type or aval.size > HOST_LIMIT:
            return None
        return [array_value(a)]
    values = []
    for a in args:
        if type(a) is not Array:
            return None
        aval = a.aval
        if aval.weak_type or aval.size > HOST_LIMIT:
            return None
        values.append(array_value(a))
    return values


def host_size_ok(n: int) -> bool:
    """Whether a result of `n` elements made from Python values (no array arguments) is made
    by NumPy now: eagerly on the CPU, at most `HOST_LIMIT` elements."""
    return n <= HOST_LIMIT and is_eager_host()


def wrap(value: Any) -> Array:
    """A strong Array holding NumPy's result `value` (an ndarray or NumPy scalar), copied when
    it is (a view of) an operand's host value, which NumPy may return as it is."""
    if type(value) is np.ndarray:
        # an operand's read-only host value (histogram's edges), or a view of one, is copied
        out = value if value.flags.writeable else value.copy()
    else:
        out = np.asarray(value)  # a NumPy scalar: a new array
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
    except _REJECTED:
        return None


_REJECTED = (ValueError, TypeError, IndexError, ZeroDivisionError)  # AxisError is a ValueError


def numpy_call_warning(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """`numpy_call` for a NumPy function that may warn ("Mean of empty slice", "invalid value
    encountered in divide"): its warnings come again at the user's line, as mjnp's own do
    (NumPy's name a line inside NumPy), under the user's filters; none when NumPy rejects the
    arguments (the general path warns and raises then)."""
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                return fn(*args, **kwargs)
            except _REJECTED:
                caught.clear()
                return None
    finally:  # also before NumPy's FloatingPointError (an errstate of "raise") propagates
        for w in caught:
            warn_at_user_line(str(w.message), w.category)


def host_reduction(
    fn: Any,
    a: Any,
    axis: Any,
    keepdims: Any,
    kinds: str = "biuf",
    warns: bool = True,
    **kwargs: Any,
) -> Array | None:
    """NumPy's reduction `fn(value, axis, keepdims=keepdims, **kwargs)` of Array `a`'s host
    value, wrapped; None where the general path runs (see `host_values`, `is_axis`). `warns`:
    whether `fn` may warn (`numpy_call_warning`)."""
    if type(keepdims) is not bool or not is_axis(axis):
        return None
    values = host_values(a)
    if values is None or values[0].dtype.kind not in kinds:
        return None
    call = numpy_call_warning if warns else numpy_call
    if keepdims:
        kwargs["keepdims"] = True  # (NumPy's method calls take ~1 µs longer with a keyword)
    out = call(fn, values[0], axis, **kwargs)
    return None if out is None else wrap(out)


def host_searchsorted(a: Any, v: Any, side: Any, sorter: Any) -> Array | None:
    """`numpy.searchsorted` (its binary search) of a sorted 1-D Array `a` and an Array `v` of
    the same real dtype, or None where the general path runs (and raises)."""
    if sorter is not None or (side != "left" and side != "right"):
        return None
    values = host_values(a, v)
    if values is None:
        return None
    a_value, v_value = values
    if a_value.ndim != 1 or a_value.dtype != v_value.dtype or a_value.dtype.kind not in "biuf":
        return None
    return wrap(a_value.searchsorted(v_value, side))  # what numpy.searchsorted calls
