"""Bitwise primitives: and, or, xor, not, shifts and population count on integers (and bool where
NumPy allows it), plus the is_finite test. None has a derivative: their jvp tangents are zero."""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore.core import Primitive
from mjcore.lax import host
from mjcore.lax.families import elementwise

ArrayLike = Any

_LOGICAL = "biu"
_INTEGER = "iu"


def _zero_jvp(prim: Primitive) -> None:
    """Integer (or bool) results have no tangent space, as in comparison.py."""

    def jvp(primals, tangents):
        return prim.bind1(*primals), None

    prim.def_jvp(jvp)


# --- bitwise_and / bitwise_or / bitwise_xor -------------------------------------------------

bitwise_and_p = Primitive("bitwise_and")
bitwise_or_p = Primitive("bitwise_or")
bitwise_xor_p = Primitive("bitwise_xor")


def bitwise_and(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise `x & y` (logical and for bool)."""
    return bitwise_and_p.bind1(x, y)


def bitwise_or(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise `x | y` (logical or for bool)."""
    return bitwise_or_p.bind1(x, y)


def bitwise_xor(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise `x ^ y` (logical xor for bool)."""
    return bitwise_xor_p.bind1(x, y)


elementwise(bitwise_and_p, "stablehlo.and", _LOGICAL)
elementwise(bitwise_or_p, "stablehlo.or", _LOGICAL)
elementwise(bitwise_xor_p, "stablehlo.xor", _LOGICAL)
bitwise_and_p.def_host(host.ufunc(np.bitwise_and))
bitwise_or_p.def_host(host.ufunc(np.bitwise_or))
bitwise_xor_p.def_host(host.ufunc(np.bitwise_xor))
_zero_jvp(bitwise_and_p)
_zero_jvp(bitwise_or_p)
_zero_jvp(bitwise_xor_p)


# --- bitwise_not ----------------------------------------------------------------------------

bitwise_not_p = Primitive("bitwise_not")


def bitwise_not(x: ArrayLike) -> Any:
    """Elementwise `~x` (logical not for bool)."""
    return bitwise_not_p.bind1(x)


elementwise(bitwise_not_p, "stablehlo.not", _LOGICAL)
bitwise_not_p.def_host(host.ufunc(np.invert))
_zero_jvp(bitwise_not_p)


# --- shifts ---------------------------------------------------------------------------------

shift_left_p = Primitive("shift_left")
shift_right_arithmetic_p = Primitive("shift_right_arithmetic")
shift_right_logical_p = Primitive("shift_right_logical")


def shift_left(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise `x << y`; shifts of `y` bits outside [0, bit width) give 0, as in NumPy."""
    return shift_left_p.bind1(x, y)


def shift_right_arithmetic(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise right shift copying the sign bit (NumPy's `>>` on signed integers).

    Unsigned operands are shifted as if their bits were signed. Shifts outside [0, bit width)
    fill every bit with the sign bit.
    """
    return shift_right_arithmetic_p.bind1(x, y)


def shift_right_logical(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise right shift filling with zeros (NumPy's `>>` on unsigned integers).

    Signed operands are shifted as if their bits were unsigned. Shifts outside [0, bit width)
    give 0.
    """
    return shift_right_logical_p.bind1(x, y)


elementwise(shift_left_p, "stablehlo.shift_left", _INTEGER)
elementwise(shift_right_arithmetic_p, "stablehlo.shift_right_arithmetic", _INTEGER)
elementwise(shift_right_logical_p, "stablehlo.shift_right_logical", _INTEGER)
# XLA defines shifts by the bit width or more (and by negative amounts), as NumPy does not.
shift_left_p.def_host(host.shift_left)
shift_right_arithmetic_p.def_host(host.shift_right_arithmetic)
shift_right_logical_p.def_host(host.shift_right_logical)
_zero_jvp(shift_left_p)
_zero_jvp(shift_right_arithmetic_p)
_zero_jvp(shift_right_logical_p)


# --- population_count -----------------------------------------------------------------------

population_count_p = Primitive("population_count")


def population_count(x: ArrayLike) -> Any:
    """Elementwise number of set bits, in the dtype of `x`.

    NB: `numpy.bitwise_count` returns uint8; this keeps the input dtype, as JAX's `lax` does.
    """
    return population_count_p.bind1(x)


elementwise(population_count_p, "stablehlo.popcnt", _INTEGER)
population_count_p.def_host(host.population_count)
_zero_jvp(population_count_p)


# --- is_finite ------------------------------------------------------------------------------

is_finite_p = Primitive("is_finite")


def is_finite(x: ArrayLike) -> Any:
    """Elementwise test for neither infinite nor NaN, as bool."""
    return is_finite_p.bind1(x)


elementwise(is_finite_p, "stablehlo.is_finite", "f", out_dtype=lambda _: np.dtype(bool))
is_finite_p.def_host(host.ufunc(np.isfinite))
_zero_jvp(is_finite_p)


# --- clz ------------------------------------------------------------------------------------

clz_p = Primitive("clz")


def clz(x: ArrayLike) -> Any:
    """Elementwise number of leading zero bits, in the dtype of `x`."""
    return clz_p.bind1(x)


elementwise(clz_p, "stablehlo.count_leading_zeros", _INTEGER)
clz_p.def_host(host.clz)
_zero_jvp(clz_p)


__all__ = [
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "clz",
    "is_finite",
    "population_count",
    "shift_left",
    "shift_right_arithmetic",
    "shift_right_logical",
]
