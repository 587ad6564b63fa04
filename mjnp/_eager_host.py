"""NumPy's own function on the host values, for mjnp functions called eagerly on CPU Arrays
(issue 18): `take(x, i)` costs NumPy's `take` and one Array, not a gather through dispatch.

A function takes this path only when every array argument is a concrete `mjcore.Array`, nothing
is traced and the device is the CPU (`mjcore.dispatch.is_eager_host`), and its arrays are
small (`HOST_ELEMENTS`, the size up to which dispatch runs a general primitive's host rule).
Anything else (tracers, other devices, large arrays, NumPy errors) goes the general way, which
computes the same values and raises mjnp's errors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mjcore.array import Array as _Array
from mjcore.array import wrap_host
from mjcore.core import ShapedArray
from mjcore.dispatch import array_value, is_eager_host

Array = Any

# Elements (of the largest operand or result) up to which these functions run NumPy: dispatch's
# limit for a general primitive's host rule (gathers, pads, reversals; docs/eager.md).
HOST_ELEMENTS = 1 << 15


def host_value(x: Any, limit: float = HOST_ELEMENTS) -> np.ndarray | None:
    """The read-only host value of `x` when it is a concrete Array of at most `limit` elements
    and the call runs eagerly on the CPU; else None."""
    if type(x) is not _Array or x.aval.size > limit or not is_eager_host():
        return None
    return array_value(x)


def numpy_call(fn: Callable[..., Any], x: Any, *args: Any, **kwargs: Any) -> Array | None:
    """`fn(value of x, *args, **kwargs)` as a strong Array (a tuple or list of them for a
    tuple or list result) when `x` has a host value (`host_value`); None otherwise, and where
    NumPy raises (the general path then raises mjnp's error). `args` and `kwargs` are what
    NumPy reads the same way as the general path (Python ints, tuples of them, None)."""
    v = host_value(x)
    if v is None:
        return None
    try:
        out = fn(v, *args, **kwargs)
    except (ValueError, TypeError, IndexError):
        return None
    if type(out) is tuple or type(out) is list:
        return type(out)(host_result(o) for o in out)
    return host_result(out)


def host_result(value: np.ndarray, weak_type: bool = False) -> Array:
    """An Array holding `value`, a NumPy array that nothing else holds (no device transfer
    until a compiled program needs it)."""
    if type(value) is not np.ndarray:  # a NumPy scalar
        value = np.asarray(value)
    return wrap_host(value, ShapedArray(value.shape, value.dtype, weak_type))


def plain(*args: Any) -> bool:
    """Whether every argument is None, a Python int or a tuple or list of Python ints: static
    arguments (axes, counts, sections) that NumPy reads as the general path does."""
    for a in args:
        if a is None or type(a) is int:
            continue
        if type(a) is tuple or type(a) is list:
            for e in a:
                if type(e) is not int:
                    return False
            continue
        return False
    return True


def fused_handles(public: Callable[..., Any], fused: Callable[..., Any]) -> None:
    """Give `public`, a function that tries NumPy first and else calls the `fuse_eagerly`
    function `fused`, the latter's eager-fusion handles (tests and `uses_host` read them, as
    they read `mjnp.ufunc`'s)."""
    for attr, value in vars(fused).items():
        if attr.startswith(("__fused", "__wrapped_fused")):
            setattr(public, attr, value)
