"""Division-free float64 building blocks for the vectorised float32 kernels (`fast_trig`,
`fast_atan2`, `fast_cbrt`): reciprocal, reciprocal square root and atan on [0, 1], each to
~2**-50, and a float32's magnitude read from its bits.

Why division-free: XLA counts a division or a square root as expensive, and an expensive
result with several users ends its loop fusion there. Every array crossing such a boundary is
written to memory and read back, so a kernel with a few of them (atan's reductions, asin's
square root) ran as 3-6 fusions and, at 1e6 elements, no faster than XLA's own scalar op.
Multiplications and additions fuse freely: these run as part of one fusion.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mjcore.lax.arithmetic import abs, add, mul, sub
from mjcore.lax.base import convert_element_type, full, select_n
from mjcore.lax.bitcast import bitcast_convert_type
from mjcore.lax.bitwise import bitwise_and, shift_right_logical
from mjcore.lax.comparison import eq, gt

_F64, _I64 = np.dtype(np.float64), np.dtype(np.int64)
# Subtracting d's bits from the first (or half of them from the second) gives 1/d (1/sqrt d)
# within 5.1% (3.5%) for every positive normal d; four Newton steps square that error each.
_RECIPROCAL_MAGIC = 0x7FDE623822FC16E6
_RSQRT_MAGIC = 0x5FE6EB50C7B537A9
_NEWTON_STEPS = 4
_TAN_PI_8 = math.sqrt(2.0) - 1.0
# Taylor coefficients of atan(u)/u in u**2, up to u**34: below 2**-49 for |u| <= tan(pi/8).
_ATAN_COEFFS = tuple((-1.0) ** n / (2 * n + 1) for n in range(18))


def f64(value: float) -> Any:
    """A float64 scalar constant."""
    return full((), value, _F64)


def _i64(value: int) -> Any:
    return full((), value, _I64)


def _i32(value: int) -> Any:
    return full((), value, np.dtype(np.int32))


def reciprocal(d: Any) -> Any:
    """1/d for positive normal float64 d (finite garbage for zero, inf and NaN: callers
    select those cases themselves)."""
    r = bitcast_convert_type(sub(_i64(_RECIPROCAL_MAGIC), bitcast_convert_type(d, _I64)), _F64)
    two = f64(2.0)
    for _ in range(_NEWTON_STEPS):
        r = mul(r, sub(two, mul(d, r)))
    return r


def rsqrt(d: Any) -> Any:
    """1/sqrt(d) for positive normal float64 d (finite garbage otherwise, as `reciprocal`)."""
    bits = bitcast_convert_type(d, _I64)
    y = bitcast_convert_type(sub(_i64(_RSQRT_MAGIC), shift_right_logical(bits, _i64(1))), _F64)
    half_d, three_halves = mul(f64(0.5), d), f64(1.5)
    for _ in range(_NEWTON_STEPS):
        y = mul(y, sub(three_halves, mul(half_d, mul(y, y))))
    return y


def float32_magnitude(bits: Any, x: Any) -> Any:
    """|x| in float64 from float32 `x` and its bits (int32), subnormals included.

    XLA's CPU code reads subnormal operands of float arithmetic, conversions included, as zero;
    a subnormal float32 is its 23-bit significand times 2**-149, an integer conversion and a
    scaling, both exact.
    """
    exponent = bitwise_and(shift_right_logical(bits, _i32(23)), _i32(0xFF))
    significand = bitwise_and(bits, _i32(0x7FFFFF))
    subnormal = mul(convert_element_type(significand, _F64), f64(2.0**-149))
    return select_n(eq(exponent, _i32(0)), abs(convert_element_type(x, _F64)), subnormal)


def horner(z: Any, coeffs: tuple[float, ...]) -> Any:
    """The polynomial sum(coeffs[i] * z**i) in Horner's form."""
    acc = f64(coeffs[-1])
    for c in coeffs[-2::-1]:
        acc = add(mul(acc, z), f64(c))
    return acc


def atan_unit(t: Any) -> Any:
    """atan t for float64 t in [0, 1] (or NaN)."""
    past = gt(t, f64(_TAN_PI_8))
    # atan t = pi/4 + atan((t - 1) / (t + 1)) brings t past tan(pi/8) back below it.
    u = select_n(past, t, mul(sub(t, f64(1.0)), reciprocal(add(t, f64(1.0)))))
    r = mul(u, horner(mul(u, u), _ATAN_COEFFS))
    return select_n(past, r, add(r, f64(math.pi / 4)))
