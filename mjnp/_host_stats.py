"""Direct NumPy paths for sorting, sets, histograms, statistics and FFT on small eager arrays
(the statistics-specific parts; the gate and the wrapping are `mjnp._host_numpy`'s).

Those functions (sort, unique, histogram, percentile, fft, ...) are several primitives each,
some without host rules (sort), so eagerly they cost several dispatches or XLA executions where
NumPy takes a few microseconds. When every array argument is a concrete, strong, eager CPU Array
of at most `HOST_ELEMENTS` elements, the mjnp function calls NumPy's own function on the host
values instead: the same code NumPy runs, so the same bits, dtypes and shapes. Anything traced,
transformed, on another device, weakly typed or larger takes the function's general path, which
also raises its errors: a fast path falls back to it (`None`) whenever NumPy would raise.
"""

from __future__ import annotations

import warnings
from typing import Any

from mjcore import dtypes
from mjcore.array import Array
from mjcore.fp_errors import warn_at_user_line
from mjnp._host_numpy import host_values, wrap_own


def is_axis(axis: Any) -> bool:
    """Whether `axis` is None, a Python int or a tuple of them (what NumPy's reductions take and
    mjnp normalizes the same way; anything else takes the general path and its checks)."""
    if axis is None or type(axis) is int:
        return True
    return type(axis) is tuple and all(type(i) is int for i in axis)


REJECTED = (ValueError, TypeError, IndexError, ZeroDivisionError)  # AxisError is a ValueError


def call_or_none(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """`fn(*args, **kwargs)` of NumPy, or None where NumPy rejects the arguments (the general
    path then raises mjnp's error, naming the function and the fix); NumPy's other errors
    (a FloatingPointError under `errstate(...='raise')`) propagate, as NumPy's would."""
    try:
        return fn(*args, **kwargs)
    except REJECTED:
        return None


def numpy_call_warning(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """`call_or_none` for a NumPy function that may warn ("Mean of empty slice", "invalid value
    encountered in divide"): its warnings come again at the user's line, as mjnp's own do
    (NumPy's name a line inside NumPy), under the user's filters; none when NumPy rejects the
    arguments (the general path warns and raises then)."""
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                return fn(*args, **kwargs)
            except REJECTED:
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
    if values is None or dtypes.kind(values[0].dtype) not in kinds:
        return None
    call = numpy_call_warning if warns else call_or_none
    if keepdims:
        kwargs["keepdims"] = True  # (NumPy's method calls take ~1 µs longer with a keyword)
    out = call(fn, values[0], axis, **kwargs)
    return None if out is None else wrap_own(out)


def host_searchsorted(a: Any, v: Any, side: Any, sorter: Any) -> Array | None:
    """`numpy.searchsorted` (its binary search) of a sorted 1-D Array `a` and an Array `v` of
    the same real dtype, or None where the general path runs (and raises)."""
    if sorter is not None or (side != "left" and side != "right"):
        return None
    values = host_values(a, v)
    if values is None:
        return None
    a_value, v_value = values
    if (
        a_value.ndim != 1
        or a_value.dtype != v_value.dtype
        or dtypes.kind(a_value.dtype) not in "biuf"
    ):
        return None
    return wrap_own(a_value.searchsorted(v_value, side))  # what numpy.searchsorted calls
