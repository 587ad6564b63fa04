"""Argument checks and JAX's dtype rules for `mjcore.nn`.

NB: `mjcore.nn` follows JAX's promotion where it differs from NumPy's, because it mirrors JAX's
`nn` namespace: a function that needs a floating input sends bool and integers of 32 bits or
fewer to float32 and 64-bit integers to float64 (NumPy would give float64, or float16 for
int8), so `nn.softplus` of an int32 array is float32 as in JAX.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

import mjnp
from mjcore import dtypes, lax
from mjcore.array import Array
from mjcore.core import Tracer
from mjcore.dispatch import scalar_array

_PYTHON_SCALARS = (bool, int, float, complex)
_FLOAT32 = np.dtype("float32")
_FLOAT64 = np.dtype("float64")


def asarray(fname: str, x: Any) -> Any:
    """`x` as an Array or tracer; Python scalars become weak 0-d arrays, as in JAX.

    Raises:
        TypeError: for lists, tuples, strings, None and other non-arrays (JAX refuses lists
            too, so a slow implicit conversion never hides in a model).
    """
    if isinstance(x, Array | Tracer):
        return x
    if isinstance(x, _PYTHON_SCALARS) and not isinstance(x, np.generic):  # np.float64 is a float
        dtype = dtypes.python_scalar_dtype(x)
        if isinstance(x, int) and not isinstance(x, bool):
            dtypes.check_python_int_range(x, dtype, f"mjcore.nn.{fname}")
        return scalar_array(x, dtype, weak_type=True)
    if isinstance(x, np.ndarray | np.generic):
        return mjnp.asarray(x)
    raise TypeError(
        f"mjcore.nn.{fname}: expected an array or a scalar, got {type(x).__name__}: {x!r:.80}; "
        "convert lists with mjnp.asarray first"
    )


def jax_inexact_dtype(dtype: np.dtype) -> np.dtype:
    """JAX's `to_inexact_dtype`: narrow integers and bool to float32, 64-bit ones to float64."""
    if dtypes.kind(dtype) in "fc":
        return dtype
    return _FLOAT64 if dtype.itemsize == 8 else _FLOAT32


def promote_inexact(fname: str, *args: Any) -> list[Any]:
    """`args` as arrays of one inexact dtype, by JAX's `promote_args_inexact`.

    Integer arguments promote among themselves and then go to a float (`jax_inexact_dtype`);
    with a floating argument present, integers take its dtype (JAX's int32 * float32 is
    float32, where NumPy's is float64). Python scalars stay weak.
    """
    arrays = [asarray(fname, a) for a in args]
    inexact = [a for a in arrays if dtypes.kind(a.dtype) in "fc"]
    if inexact:
        dtype = mjnp.result_type(*inexact)
    else:
        dtype = jax_inexact_dtype(mjnp.result_type(*arrays))
    weak = all(getattr(a, "weak_type", False) for a in arrays)
    return [lax.convert_element_type(a, dtype, weak_type=weak) for a in arrays]


def require_float(fname: str, x: Any) -> None:
    """Refuse bool and integer `x`, as JAX's `lax` refuses them for `logistic` and friends."""
    if dtypes.kind(x.dtype) not in "fc":
        raise TypeError(
            f"mjcore.nn.{fname}: requires a floating-point input, got {x.dtype}; "
            f"convert it first, e.g. x.astype(mjnp.float32)"
        )


def reduction_axes(fname: str, axis: Any, ndim: int) -> tuple[int, ...]:
    """`axis` (an int, a tuple of ints or None for all) as sorted nonnegative axes.

    Raises:
        TypeError: for an axis that is not an integer.
        AxisError: (a ValueError and IndexError) for an axis out of range or repeated.
    """
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple | list) else (axis,)
    out = []
    for item in items:
        try:
            ax = operator.index(item)
        except TypeError as err:
            raise TypeError(
                f"mjcore.nn.{fname}: axis must be an int, a tuple of ints or None, got {axis!r}"
            ) from err
        if not -ndim <= ax < ndim:
            raise np.exceptions.AxisError(ax, ndim, f"mjcore.nn.{fname}")
        out.append(ax % ndim)
    if len(set(out)) != len(out):
        raise np.exceptions.AxisError(f"mjcore.nn.{fname}: repeated axis in {axis!r}")
    return tuple(sorted(out))
