"""Bit-level primitives: reinterpreting bits as another dtype of the same width, and the next
representable float. (Autodidax Part 1's primitives, grown to bit casts.) Neither has a
derivative in the usual sense: `bitcast_convert_type` has a zero tangent; `nextafter` moves
`x1` by at most one ulp, so its tangent is `x1`'s (and zero for `x2`)."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from mjcore import dtypes
from mjcore.ad import Zero, instantiate
from mjcore.backend.lowering import LoweringContext
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.lax import host
from mjcore.lax.base import broadcast_to
from mjcore.lax.families import elementwise

ArrayLike = Any


# --- bitcast_convert_type -------------------------------------------------------------------

bitcast_convert_type_p = Primitive("bitcast_convert_type")


def bitcast_convert_type(x: ArrayLike, new_dtype: Any) -> Any:
    """Reinterpret the bits of `x` as `new_dtype`, which must have the same width.

    Like `numpy.ndarray.view(new_dtype)` for same-width dtypes; bool (one byte, 0 or 1) is
    neither a source nor a target.
    """
    new_dtype = dtypes.canonicalize_dtype(new_dtype, "bitcast_convert_type")
    if get_aval(x).dtype == new_dtype:
        return x
    return bitcast_convert_type_p.bind1(x, new_dtype=new_dtype)


@bitcast_convert_type_p.def_abstract_eval
def _bitcast_convert_type_abstract_eval(x: ShapedArray, *, new_dtype: np.dtype) -> ShapedArray:
    if x.dtype.kind == "b" or new_dtype.kind == "b":
        raise TypeError(
            f"bitcast_convert_type: bool has no defined bit pattern, got {x.dtype.name} -> "
            f"{new_dtype.name}; convert with convert_element_type instead."
        )
    if x.dtype.itemsize != new_dtype.itemsize:
        raise TypeError(
            f"bitcast_convert_type: needs dtypes of one width, got {x.dtype.name} "
            f"({x.dtype.itemsize} bytes) -> {new_dtype.name} ({new_dtype.itemsize} bytes)."
        )
    return ShapedArray(x.shape, new_dtype, False)


bitcast_convert_type_p.def_host(lambda x, *, new_dtype: x.view(new_dtype))


@bitcast_convert_type_p.def_lowering
def _bitcast_convert_type_lowering(ctx: LoweringContext, x: Any, *, new_dtype: np.dtype) -> Any:
    return ctx.builder.op("stablehlo.bitcast_convert", [x], ctx.aval_out.strip_weak_type())


@bitcast_convert_type_p.def_jvp
def _bitcast_convert_type_jvp(primals, tangents, *, new_dtype):
    (x,), _ = primals, tangents
    y = bitcast_convert_type_p.bind1(x, new_dtype=new_dtype)
    return y, None


@bitcast_convert_type_p.def_batching
def _bitcast_convert_type_batching(vals, dims, *, new_dtype):
    return bitcast_convert_type_p.bind1(*vals, new_dtype=new_dtype), dims[0]


# --- nextafter ------------------------------------------------------------------------------

nextafter_p = Primitive("nextafter")


def nextafter(x1: ArrayLike, x2: ArrayLike) -> Any:
    """Elementwise next float after `x1` towards `x2` (C's `nextafter`, as `numpy.nextafter`)."""
    return nextafter_p.bind1(x1, x2)


elementwise(nextafter_p, "chlo.next_after", "f")
nextafter_p.def_host(host.ufunc(np.nextafter))


@nextafter_p.def_jvp
def _nextafter_jvp(primals, tangents):
    # NB: JAX defines no derivative; ours is that of the identity in `x1`, which the result
    # differs from by one ulp, so finite differences agree.
    (x1, x2), (x1_dot, _) = primals, tangents
    y = nextafter_p.bind1(x1, x2)
    if type(x1_dot) is Zero:
        return y, x1_dot
    return y, broadcast_to(x1_dot, get_aval(y).shape)


# --- reduce_precision -----------------------------------------------------------------------

reduce_precision_p = Primitive("reduce_precision")


def reduce_precision(operand: ArrayLike, exponent_bits: int, mantissa_bits: int) -> Any:
    """Round floats to the nearest value (ties to even) of a format with `exponent_bits` and
    `mantissa_bits`, keeping the dtype: out-of-range values become infinities, tiny ones zero.

    E.g. `reduce_precision(x, 8, 7)` rounds float32 values to bfloat16's.
    """
    exponent_bits, mantissa_bits = operator.index(exponent_bits), operator.index(mantissa_bits)
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(
            "reduce_precision: needs exponent_bits >= 1 and mantissa_bits >= 0, got "
            f"{exponent_bits} and {mantissa_bits}"
        )
    return reduce_precision_p.bind1(
        operand, exponent_bits=exponent_bits, mantissa_bits=mantissa_bits
    )


def _reduce_precision_lowering(
    ctx: LoweringContext, x: Any, *, exponent_bits: int, mantissa_bits: int
) -> Any:
    attrs = f"exponent_bits = {exponent_bits} : i32, mantissa_bits = {mantissa_bits} : i32"
    return ctx.builder.op("stablehlo.reduce_precision", [x], ctx.aval_out.strip_weak_type(), attrs)


elementwise(reduce_precision_p, _reduce_precision_lowering, "f")
reduce_precision_p.def_host(host.reduce_precision)


# Linear, as in JAX: the tangent (and cotangent) is rounded the same way.
@reduce_precision_p.def_jvp
def _reduce_precision_jvp(primals, tangents, **params):
    (x,), (x_dot,) = primals, tangents
    return reduce_precision_p.bind1(x, **params), reduce_precision_p.bind1(x_dot, **params)


@reduce_precision_p.def_transpose
def _reduce_precision_transpose(ct, x, **params):
    return [reduce_precision_p.bind1(instantiate(ct), **params)]


__all__ = ["bitcast_convert_type", "nextafter", "reduce_precision"]
