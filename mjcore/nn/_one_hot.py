"""One-hot encoding, as JAX's `nn.one_hot`: a comparison of the indices with an iota."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from mjcore import dtypes, lax
from mjcore.array import Array
from mjcore.core import Tracer
from mjcore.nn._arrays import asarray

ArrayLike = Any
DTypeLike = Any


def one_hot(x: ArrayLike, num_classes: int, *, dtype: DTypeLike = None, axis: int = -1) -> Array:
    """One-hot encode the integer indices `x`, as JAX's `nn.one_hot`.

    The result has a new axis of size `num_classes` at `axis`; an index outside
    `[0, num_classes)` encodes as all zeros.

    Args:
      x: an integer array of indices.
      num_classes: the number of classes, a Python int (static under `jit`).
      dtype: the result dtype (default: float64, this project's default float).
      axis: where the new axis goes in the result.

    Raises:
      TypeError: if `x` is not of integer dtype (NB: JAX only warns, and has deprecated it),
        or `num_classes` is not a concrete integer.
      ValueError: if `num_classes` is negative.
      AxisError: if `axis` is out of range for the result.
    """
    if isinstance(num_classes, Tracer):
        raise TypeError(
            "mjcore.nn.one_hot: num_classes must be a concrete int, got a traced value; "
            "mark it static (jit(..., static_argnums=...))"
        )
    try:
        num_classes = operator.index(num_classes)
    except TypeError as err:
        raise TypeError(
            f"mjcore.nn.one_hot: num_classes must be an int, got {num_classes!r:.80}"
        ) from err
    if num_classes < 0:
        raise ValueError(f"mjcore.nn.one_hot: num_classes must be >= 0, got {num_classes}")
    if isinstance(axis, bool) or not isinstance(axis, int | np.integer):
        raise TypeError(f"mjcore.nn.one_hot: axis must be an int, got {axis!r:.80}")
    x = asarray("one_hot", x)
    if x.dtype.kind not in "iu":
        raise TypeError(
            f"mjcore.nn.one_hot: indices must have an integer dtype, got {x.dtype}; "
            "convert them first, e.g. x.astype(mjnp.int32)"
        )
    out_dtype = np.dtype("float64") if dtype is None else dtypes.canonicalize_dtype(dtype)
    ndim = x.ndim + 1
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(int(axis), ndim, "mjcore.nn.one_hot")
    out_axis = int(axis) % ndim
    lhs = lax.expand_dims(x, (out_axis,))
    rhs_shape = [1] * x.ndim
    rhs_shape.insert(out_axis, num_classes)
    rhs = lax.broadcasted_iota(x.dtype, rhs_shape, out_axis)
    return lax.convert_element_type(lhs == rhs, out_dtype)
