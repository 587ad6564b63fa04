"""NumPy's floating-point routines: `copysign`, `nextafter`, `spacing`, `frexp`, `ldexp` and
`modf`, built from the bits.

Like `mjnp._elementwise`, every function is a composition of `mjcore.lax` ops (bit-level ones
through `lax.bitcast_convert_type`), so all transformations apply. The helpers `_const`,
`_where` and `_float_args` serve the sibling modules of NumPy's mathematical functions
(`_mathematical`, `_bit_packing`) too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore import dtypes, lax
from mjnp import _elementwise as ew
from mjnp._out import ufunc_out
from mjnp._promotion import asarray_arg, promote_args_float

ArrayLike = Any
Array = Any

_INT32 = np.dtype("int32")


def _const(value: Any, like: Array) -> Array:
    return lax.full((), value, like.dtype)


def _where(pred: Array, on_true: Array, on_false: Array) -> Array:
    """`select_n` with NumPy's argument order, broadcasting all three."""
    shape = np.broadcast_shapes(pred.shape, on_true.shape, on_false.shape)
    return lax.select_n(
        lax.broadcast_to(pred, shape),
        lax.broadcast_to(on_false, shape),
        lax.broadcast_to(on_true, shape),
    )


def _float_args(fname: str, *xs: ArrayLike) -> list[Array]:
    """Operands of a ufunc with only real floating loops (TypeError for complex)."""
    out = promote_args_float(fname, *xs)
    if dtypes.kind(out[0].dtype) != "f":
        raise TypeError(
            f"mjnp.{fname}: not supported for input dtype {out[0].dtype.name}; it needs real "
            "(bool, integer or floating) input"
        )
    if len(out) == 2 and out[0].shape != out[1].shape:
        ew._broadcast_shapes(fname, out[0].shape, out[1].shape)
    return out


def _int_bits(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"int{8 * dtype.itemsize}")


def _mantissa_bits(dtype: np.dtype) -> int:
    return int(dtypes.finfo(dtype).nmant)


def _exp2_int(k: Array, dtype: np.dtype) -> Array:
    """Exactly 2**k in `dtype` for integer `k` within the normal exponent range."""
    info = dtypes.finfo(dtype)
    ibits = _int_bits(dtype)
    biased = lax.add(lax.convert_element_type(k, ibits), lax.full((), -int(info.minexp) + 1, ibits))
    shifted = lax.shift_left(biased, lax.full((), _mantissa_bits(dtype), ibits))
    return lax.bitcast_convert_type(shifted, dtype)


# --- sign and bit tricks --------------------------------------------------------------------


@ufunc_out
def copysign(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """`x1` with the sign bit of `x2`, as `numpy.copysign` (NaN signs included)."""
    x1, x2 = _float_args("copysign", x1, x2)
    flip = lax.ne(ew.signbit(x1), ew.signbit(x2))
    return _where(flip, lax.neg(x1), x1)


@ufunc_out
def nextafter(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """The next float after `x1` towards `x2`, as `numpy.nextafter`.

    A NaN operand comes back as the result (`x2`'s when both are NaN), as C's `nextafter` does
    on NumPy's usual platforms; for float16 NumPy's own routine gives a positive NaN instead, and
    `x1` rather than `x2` when they are equal (which tells the zeros apart).

    NB: its derivative is taken as that of `x1` (the result is within one ulp of it). XLA's CPU
    backend compares subnormal inputs as zeros.
    """
    x1, x2 = _float_args("nextafter", x1, x2)
    out = lax.nextafter(x1, x2)
    if x1.dtype == np.dtype("float16"):
        out = _where(lax.eq(x1, x2), x1, out)
        return _where(lax.bitwise_or(lax.ne(x1, x1), lax.ne(x2, x2)), _const(np.nan, x1), out)
    return _where(lax.ne(x2, x2), x2, _where(lax.ne(x1, x1), x1, out))


def _exponent_field(x: Array) -> tuple[Array, Array]:
    """The raw bits of `|x|` and their biased exponent field, as integers of `x`'s width."""
    ibits = _int_bits(x.dtype)
    nmant = _mantissa_bits(x.dtype)
    bits = lax.bitcast_convert_type(lax.abs(x), ibits)
    field = lax.shift_right_logical(bits, lax.full((), nmant, ibits))
    return bits, field


@ufunc_out
def spacing(x: ArrayLike, /) -> Array:
    """Distance to the next float away from zero, as `numpy.spacing` (NaN for infinities).

    Built from the bits rather than `nextafter(x, inf) - x`, because XLA's CPU backend flushes
    subnormal differences (`spacing(0.0)`) to zero and compares subnormals as zeros. The sign is
    x's, except that -0.0 gives the positive smallest subnormal; a NaN comes back as itself.

    NB: float16 follows NumPy's half-precision routine, unlike the other dtypes: the result is
    never negative, a negative power of two gives the (smaller) spacing towards zero, -max gives
    a finite spacing (only +max gives inf) and NaN inputs give a positive NaN.
    """
    (x,) = _float_args("spacing", x)
    ibits, nmant = _int_bits(x.dtype), _mantissa_bits(x.dtype)
    half = x.dtype == np.dtype("float16")
    bits, field = _exponent_field(x)
    zero, one, nm = (lax.full((), v, ibits) for v in (0, 1, nmant))
    sign = lax.bitwise_and(
        lax.bitcast_convert_type(x, ibits), lax.full((), np.iinfo(ibits).min, ibits)
    )
    negative = lax.ne(sign, zero)
    if half:  # NumPy's half spacing of a negative power of two is that of the binade below
        mantissa = lax.bitwise_and(bits, lax.full((), (1 << nmant) - 1, ibits))
        below = lax.bitwise_and(negative, lax.eq(mantissa, zero))
        field = _where(below, lax.sub(field, one), field)
    normal_ulp = lax.shift_left(lax.sub(field, nm), nm)
    tiny_ulp = lax.shift_left(one, lax.max(lax.sub(field, one), zero))
    ulp_bits = _where(lax.gt(field, nm), normal_ulp, tiny_ulp)
    if not half:  # x's sign bit, except for -0.0
        ulp_bits = _where(lax.ne(bits, zero), lax.bitwise_or(ulp_bits, sign), ulp_bits)
    out = lax.bitcast_convert_type(ulp_bits, x.dtype)
    big = _const(dtypes.finfo(x.dtype).max, x)
    at_max = lax.eq(x, big) if half else lax.eq(lax.abs(x), big)
    out = _where(at_max, _where(negative, _const(-np.inf, x), _const(np.inf, x)), out)
    nan = _const(np.nan, x) if half else _where(lax.ne(x, x), x, _const(np.nan, x))
    return _where(lax.is_finite(x), out, nan)


@ufunc_out
def frexp(x: ArrayLike, /) -> tuple[Array, Array]:
    """Mantissa in [0.5, 1) and int32 exponent with `x == m * 2**e`, as `numpy.frexp`.

    Zeros, infinities and NaN give `(x, 0)`. Subnormal inputs are read from their bits (XLA's
    CPU backend would flush them to zero in arithmetic), but a subnormal mantissa result is
    impossible, so the values match NumPy.
    """
    (x,) = _float_args("frexp", x)
    dtype, ibits = x.dtype, _int_bits(x.dtype)
    nmant = _mantissa_bits(dtype)
    info = dtypes.finfo(dtype)
    bits, field = _exponent_field(x)
    # A subnormal is m * 2**(minexp - nmant) for its integer mantissa bits m: convert m exactly
    # to a normal float and read the exponent field from that instead.
    tiny = lax.eq(field, lax.full((), 0, ibits))
    from_int = lax.convert_element_type(bits, dtype)
    _, int_field = _exponent_field(from_int)
    bias = -int(info.minexp) + 1
    exponent = _where(
        tiny,
        lax.add(int_field, lax.full((), 2 - 2 * bias - nmant, ibits)),
        lax.add(field, lax.full((), 1 - bias, ibits)),
    )
    source_bits = lax.bitcast_convert_type(_where(tiny, from_int, lax.abs(x)), ibits)
    mant_mask = lax.full((), (1 << nmant) - 1, ibits)
    half_field = lax.full((), (bias - 1) << nmant, ibits)
    magnitude = lax.bitcast_convert_type(
        lax.bitwise_or(lax.bitwise_and(source_bits, mant_mask), half_field), dtype
    )
    # Compare bits, not values: XLA's CPU backend treats subnormal operands as zero.
    is_zero = lax.eq(bits, lax.full((), 0, ibits))
    special = lax.bitwise_or(is_zero, lax.bitwise_not(lax.is_finite(x)))
    exponent = _where(special, lax.full((), 0, ibits), exponent)
    # m = x * 2**-e exactly for normal x; that product also carries the derivative 2**-e.
    scaled = lax.mul(x, _exp2_int(lax.neg(_where(tiny, lax.full((), 0, ibits), exponent)), dtype))
    mantissa = _where(tiny, copysign(magnitude, x), scaled)
    mantissa = _where(special, x, mantissa)
    return mantissa, lax.convert_element_type(exponent, _INT32)


@ufunc_out
def ldexp(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """`x1 * 2**x2` for integer `x2`, as `numpy.ldexp`, without intermediate overflow."""
    (x1,) = _float_args("ldexp", x1)
    x2 = asarray_arg("ldexp", x2)
    if x2.dtype.kind not in "biu":
        raise TypeError(f"mjnp.ldexp: the exponent needs an integer dtype, got {x2.dtype.name}")
    ew._broadcast_shapes("ldexp", x1.shape, x2.shape)
    dtype = x1.dtype
    info = dtypes.finfo(dtype)
    # Each of three steps stays a normal power of two; three of them span the whole range from
    # the largest float to the smallest subnormal.
    limit = 3 * min(int(info.maxexp) - 1, -int(info.minexp))
    k = lax.convert_element_type(x2, np.dtype("int64"))
    k = lax.max(lax.min(k, lax.full((), limit, k.dtype)), lax.full((), -limit, k.dtype))
    # Three exact power-of-two steps, each within the normal exponent range.
    three = lax.full((), 3, k.dtype)
    first = lax.div(k, three)
    second = lax.div(lax.sub(k, first), lax.full((), 2, k.dtype))
    third = lax.sub(lax.sub(k, first), second)
    out = x1
    for part in (first, second, third):
        out = lax.mul(out, _exp2_int(part, dtype))
    return out


@ufunc_out
def modf(x: ArrayLike, /) -> tuple[Array, Array]:
    """Fractional and integral parts, both with the sign of `x`, as `numpy.modf`."""
    (x,) = _float_args("modf", x)
    whole = ew.trunc(x)
    frac = lax.sub(x, whole)
    # inf - inf is NaN; NumPy's fractional part of an infinity is a signed zero.
    frac = _where(ew.isinf(x), _const(0, x), frac)
    return copysign(frac, x), whole
