"""atan2 of large float32 arrays, vectorised, within 0.5001 ulp (see `kernels.fast_trig`).

XLA's CPU `atan2` takes ~15 ns an element here, 13x NumPy's float32 `arctan2`. From
`fast_trig.MIN_SIZE` elements on, float32 operands are computed in float64 instead and rounded
once: `atan2(y, x)` is `atan(min/max)` of the magnitudes (or `pi/2` minus it), reflected to
`pi -` it for a negative `x` (or `-0.0`) and given `y`'s sign, with the division-free float64
reciprocal and `atan` on [0, 1] of `float64_kernels` (six fusions and 14.8 ms at 2**20
elements with divisions, one and 2.1 ms without).

XLA's CPU code runs with subnormal operands read as zero and subnormal results flushed to zero,
where NumPy keeps both. So the magnitudes are decoded from the bits (a subnormal float32 is its
23-bit significand times 2**-149, an integer conversion and a scaling, both exact), and a result
below float32's smallest normal is encoded to bits the same way, rounded to nearest even.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from mjcore.backend.lowering import LoweringContext, lower_fun
from mjcore.core import get_aval
from mjcore.lax.arithmetic import ROUND_TO_NEAREST_EVEN, mul, round, sub
from mjcore.lax.base import convert_element_type, full, select_n
from mjcore.lax.bitcast import bitcast_convert_type
from mjcore.lax.bitwise import bitwise_and, bitwise_not, bitwise_or
from mjcore.lax.comparison import eq, gt, lt
from mjcore.lax.kernels.fast_trig import MIN_SIZE
from mjcore.lax.kernels.float64_kernels import atan_unit, f64, float32_magnitude, reciprocal
from mjcore.lax.kernels.platform import for_the_cpu

_F64, _I32 = np.dtype(np.float64), np.dtype(np.int32)
_SMALLEST_NORMAL = 2.0**-126  # float32's
_SUBNORMAL_UNIT = 2.0**-149  # float32's smallest subnormal: the significand's unit below 2**-126


def _i32(value: int) -> Any:
    return full((), value, _I32)


def _unsigned_angle(a: Any, b: Any, x_negative: Any) -> Any:
    """atan2(|y|, x) in float64 for magnitudes a = |y|, b = |x| and x's sign bit."""
    swap = gt(a, b)
    num, den = select_n(swap, a, b), select_n(swap, b, a)
    t = mul(num, reciprocal(den))  # in [0, 1], or NaN
    shape = get_aval(a).shape
    inf = f64(math.inf)
    # finite / inf is 0 (inf / inf: below; NaN / inf stays NaN).
    t = select_n(bitwise_and(eq(den, inf), eq(num, num)), t, full(shape, 0.0, _F64))
    r = atan_unit(t)
    r = select_n(swap, r, sub(f64(math.pi / 2), r))
    # inf/inf: the diagonal. 0/0 (and 0/b): 0, unless x is NaN.
    r = select_n(bitwise_and(eq(a, inf), eq(b, inf)), r, full(shape, math.pi / 4, _F64))
    r = select_n(bitwise_and(eq(a, f64(0.0)), eq(b, b)), r, full(shape, 0.0, _F64))
    return select_n(x_negative, r, sub(f64(math.pi), r))


def atan2_f32(y: Any, x: Any) -> Any:
    """atan2(y, x) of float32 operands of one shape, as float32."""
    y_bits = bitcast_convert_type(y, _I32)
    x_bits = bitcast_convert_type(x, _I32)
    a, b = float32_magnitude(y_bits, y), float32_magnitude(x_bits, x)
    r = _unsigned_angle(a, b, lt(x_bits, _i32(0)))
    normal_bits = bitcast_convert_type(convert_element_type(r, np.dtype(np.float32)), _I32)
    scaled = round(mul(r, f64(1.0 / _SUBNORMAL_UNIT)), ROUND_TO_NEAREST_EVEN)
    subnormal_bits = convert_element_type(scaled, _I32)
    tiny = lt(r, f64(_SMALLEST_NORMAL))  # NaN is not: its bits come from the conversion
    magnitude_bits = select_n(tiny, normal_bits, subnormal_bits)
    sign = bitwise_and(y_bits, bitwise_not(_i32(0x7FFFFFFF)))
    return bitcast_convert_type(bitwise_or(magnitude_bits, sign), np.dtype(np.float32))


def uses_fast_atan2(dtype: np.dtype, size: int) -> bool:
    """Whether real operands of this dtype and (broadcast) element count take the kernel."""
    return dtype == np.dtype(np.float32) and size >= MIN_SIZE


def fast_atan2_lowering(lowering: Callable[..., Any]) -> Callable[..., Any]:
    """atan2's lowering: the kernel for large float32 operands, `lowering` (XLA's op)
    otherwise. Called with operands already broadcast to the output's shape."""
    kernel = lower_fun(atan2_f32)

    def rule(ctx: LoweringContext, y: Any, x: Any) -> Any:
        aval = ctx.aval_out.strip_weak_type()
        if not uses_fast_atan2(aval.dtype, math.prod(aval.shape)) or not for_the_cpu():
            return lowering(ctx, y, x)
        return kernel(LoweringContext(ctx.builder, [aval, aval], [aval]), y, x)

    return rule
