"""Products in the main namespace: matmul, dot, vdot, inner, outer (all via `lax.dot_general`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore import dtypes, lax
from mjcore.dtypes import DTypeLike
from mjnp._promotion import promote_args

ArrayLike = Any
Array = Any


def _check_out(fname: str, out: Any) -> None:
    if out is not None:
        raise NotImplementedError(
            f"mjnp.{fname}: out= is not supported because mjnp arrays are immutable; use the "
            "return value instead"
        )


def _contract(a: Array, b: Array, a_axis: int, b_axis: int) -> Array:
    """`lax.dot_general` over one axis pair, no batch axes: free axes of `a`, then of `b`.

    Bool operands give `any(a & b)`, as NumPy's boolean products do.
    """
    return lax.dot_general(a, b, (((a_axis,), (b_axis,)), ((), ())))


def _promote(
    fname: str, a: ArrayLike, b: ArrayLike, dtype: DTypeLike | None = None
) -> tuple[Array, Array]:
    """Both operands in their NumPy result dtype (or `dtype`, cast 'same_kind')."""
    a, b = promote_args(fname, a, b)
    if dtype is None:
        dt = a.dtype
    else:
        dt = dtypes.canonicalize_dtype(dtype, f"mjnp.{fname}")
        if not np.can_cast(a.dtype, dt, "same_kind"):
            raise TypeError(
                f"mjnp.{fname}: cannot cast the inputs from {a.dtype.name} to dtype={dt.name} "
                "with casting rule 'same_kind'; cast them with astype first"
            )
    # A strong result even for two Python scalars, as NumPy returns.
    return lax.convert_element_type(a, dt), lax.convert_element_type(b, dt)


def matmul(
    x1: ArrayLike, x2: ArrayLike, /, out: None = None, *, dtype: DTypeLike | None = None
) -> Array:
    """Matrix product with NumPy's `matmul` rules.

    A 1-D first (second) operand is a row (column) vector whose added axis is removed from the
    result; leading dimensions are batch dimensions and broadcast against each other.
    """
    _check_out("matmul", out)
    a, b = _promote("matmul", x1, x2, dtype)
    for i, x in enumerate((a, b)):
        if x.ndim == 0:
            raise ValueError(
                f"mjnp.matmul: input operand {i} does not have enough dimensions (has 0, "
                "needs at least 1); use multiply (`*`) for scalars"
            )
    a_shape, b_shape = a.shape, b.shape
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    if a_vec:
        a = lax.expand_dims(a, (0,))
    if b_vec:
        b = lax.expand_dims(b, (1,))
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(
            f"mjnp.matmul: mismatch in the contracted dimension of operands of shapes {a_shape} "
            f"and {b_shape} (size {a.shape[-1]} is different from {b.shape[-2]})"
        )
    a_batch, b_batch = a.shape[:-2], b.shape[:-2]
    if not b_batch:
        # (..., n, k) @ (k, m): the batch axes of `a` are free axes, nothing to broadcast.
        result = _contract(a, b, a.ndim - 1, 0)
    elif not a_batch:
        # (n, k) @ (..., k, m) gives (n, ..., m): move n next to m instead of broadcasting `a`.
        result = _contract(a, b, 1, b.ndim - 2)
        nb = len(b_batch)
        result = lax.transpose(result, (*range(1, nb + 1), 0, nb + 1))
    else:
        try:
            batch = np.broadcast_shapes(a_batch, b_batch)
        except ValueError as err:
            raise ValueError(
                f"mjnp.matmul: the batch dimensions {a_batch} and {b_batch} of operands of "
                f"shapes {a_shape} and {b_shape} cannot be broadcast together"
            ) from err
        a = lax.broadcast_to(a, (*batch, *a.shape[-2:]))
        b = lax.broadcast_to(b, (*batch, *b.shape[-2:]))
        nb = len(batch)
        batch_dims = tuple(range(nb))
        result = lax.dot_general(a, b, (((nb + 1,), (nb,)), (batch_dims, batch_dims)))
    squeezed = (() if not a_vec else (result.ndim - 2,)) + (() if not b_vec else (result.ndim - 1,))
    return lax.squeeze(result, squeezed) if squeezed else result


def dot(a: ArrayLike, b: ArrayLike, out: None = None) -> Array:
    """Dot product with NumPy's `dot` rules.

    Scalars multiply; otherwise the last axis of `a` is contracted with the only axis of a 1-D
    `b`, or with the second-to-last axis of `b`, and the result has the free axes of `a` then
    those of `b`.
    """
    _check_out("dot", out)
    a, b = _promote("dot", a, b)
    if a.ndim == 0 or b.ndim == 0:
        return lax.mul(a, b)
    b_axis = 0 if b.ndim == 1 else b.ndim - 2
    if a.shape[-1] != b.shape[b_axis]:
        raise ValueError(
            f"mjnp.dot: shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} "
            f"(dim {a.ndim - 1}) != {b.shape[b_axis]} (dim {b_axis})"
        )
    return _contract(a, b, a.ndim - 1, b_axis)


def vdot(a: ArrayLike, b: ArrayLike, /) -> Array:
    """Dot product of the flattened arrays, conjugating `a`, as `numpy.vdot`."""
    a, b = _promote("vdot", a, b)
    if a.size != b.size:
        raise ValueError(
            f"mjnp.vdot: vectors have different lengths: {a.size} (shape {a.shape}) and "
            f"{b.size} (shape {b.shape})"
        )
    a = lax.reshape(a, (a.size,))
    b = lax.reshape(b, (b.size,))
    if dtypes.is_complex(a.dtype):
        a = lax.conj(a)
    return _contract(a, b, 0, 0)


def inner(a: ArrayLike, b: ArrayLike, /) -> Array:
    """Inner product over the last axes, as `numpy.inner` (scalars multiply)."""
    a, b = _promote("inner", a, b)
    if a.ndim == 0 or b.ndim == 0:
        return lax.mul(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"mjnp.inner: shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} "
            f"(dim {a.ndim - 1}) != {b.shape[-1]} (dim {b.ndim - 1})"
        )
    return _contract(a, b, a.ndim - 1, b.ndim - 1)


def outer(a: ArrayLike, b: ArrayLike, out: None = None) -> Array:
    """Outer product of the flattened arrays, as `numpy.outer`."""
    _check_out("outer", out)
    a, b = _promote("outer", a, b)
    shape = (a.size, b.size)
    a = lax.broadcast_in_dim(lax.reshape(a, (a.size,)), shape, (0,))
    b = lax.broadcast_in_dim(lax.reshape(b, (b.size,)), shape, (1,))
    return lax.mul(a, b)
