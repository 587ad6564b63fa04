"""NumPy's own function on the host values of concrete eager CPU Arrays (issue 18).

Linear algebra and the matrix helpers bind many primitives eagerly (an `inv` is an LU custom
call, two triangular solves and ~20 small ops: ~300 µs for an 8x8 matrix, NumPy's ~5 µs). When
every argument is a strong concrete Array and nothing is traced on the CPU, the function's
NumPy counterpart computes the result on the host values instead: NumPy's bits, dtypes and
shapes, nothing compiled or bound. Anything else (tracers under jit/grad/vmap, Python scalars,
lists, weak types, another device, large operands) takes the function's general path.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore.array import Array, wrap_host
from mjcore.core import ShapedArray
from mjcore.dispatch import array_value, is_eager_host

# Elements per operand up to which the host path runs. NumPy's LAPACK/BLAS calls are the same
# kernels XLA's CPU custom calls run, so the bound only keeps large products (where XLA's
# fused kernels and threads may win) on the general path, as `dispatch.host_limit` does.
HOST_ELEMENTS = 1 << 16


def host_values(*args: Any) -> list[np.ndarray] | None:
    """The read-only host values of `args` when each is a strong concrete Array of at most
    `HOST_ELEMENTS` elements and the call runs eagerly on the CPU, else None."""
    if not is_eager_host():
        return None
    values = []
    for x in args:
        if type(x) is not Array or x.aval.weak_type:
            return None
        value = array_value(x)
        if value.size > HOST_ELEMENTS:
            return None
        values.append(value)
    return values


def wrap(value: Any) -> Array:
    """A strong Array holding NumPy result `value` (an ndarray or a NumPy scalar), which
    nothing else may hold (copy views of inputs first)."""
    if type(value) is not np.ndarray:
        value = np.asarray(value)
    return wrap_host(value, ShapedArray(value.shape, value.dtype))


# dtypes NumPy's linalg computes in (bool and integers go to float64); others (float16,
# longdouble, object) take the general path, which raises mjnp's TypeError
LINALG_KINDS = frozenset("biu")
LINALG_DTYPES = frozenset(np.dtype(t) for t in ("float32", "float64", "complex64", "complex128"))


def linalg_dtype_ok(value: np.ndarray) -> bool:
    """Whether `value`'s dtype is one NumPy's linalg computes with as mjnp's does."""
    dt = value.dtype
    return dt.kind in LINALG_KINDS or dt in LINALG_DTYPES


def linalg_ok(value: np.ndarray, square: bool = True) -> bool:
    """Whether NumPy's linalg takes `value` as mjnp's does: a supported dtype, at least two
    dimensions, and square matrices where `square`. Otherwise the general path raises."""
    dt = value.dtype
    if dt.kind not in LINALG_KINDS and dt not in LINALG_DTYPES:
        return False
    shape = value.shape
    if len(shape) < 2:
        return False
    return not square or shape[-1] == shape[-2]


def attempt(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """`fn(*args, **kwargs)`, or None where NumPy raises: the general path then runs and
    raises mjnp's own error (its message names the function and the fix) or, where mjnp's
    semantics differ from NumPy's failure (a NaN input to `cholesky`), computes its result."""
    try:
        return fn(*args, **kwargs)
    except Exception:  # noqa: BLE001  (any NumPy error: the general path decides)
        return None
