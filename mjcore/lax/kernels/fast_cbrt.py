"""Cube root of float32 arrays, vectorised, within 0.5001 ulp.

XLA's CPU `cbrt` takes ~12 ns an element here, 38x NumPy's float32 `cbrt` (and JAX runs the
same op). From `MIN_SIZE` elements on, a float32 operand is computed in float64 instead and
rounded once: `a**(-1/3)` of the magnitude from a bit-pattern estimate (within 3.5%) and four
Newton steps `r (4 - a r**3) / 3` (no division; the error squares at each step, to ~2**-50),
then `cbrt a = a r**2`, given `x`'s sign. Zeros (signed), infinities and NaN pass through as
themselves, as `cbrt` leaves them; subnormal operands are read from their bits, as XLA's CPU
arithmetic would flush them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from mjcore.backend.lowering import LoweringContext, lower_fun
from mjcore.lax.arithmetic import div, mul, neg, sub
from mjcore.lax.base import convert_element_type, full, select_n
from mjcore.lax.bitcast import bitcast_convert_type
from mjcore.lax.bitwise import bitwise_and
from mjcore.lax.comparison import gt, lt
from mjcore.lax.kernels.float64_kernels import f64, float32_magnitude
from mjcore.lax.kernels.platform import for_the_cpu

# An operand's XLA op costs ~12 ns an element and the kernel ~1, for ~20 ms more compile time:
# repaid within ~30 calls of a shape from here.
MIN_SIZE = 2**16
_F32, _F64, _I32, _I64 = (np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))
# Its bits minus a third of a's give a**(-1/3) within 3.5% for every positive normal float64.
_RCBRT_MAGIC = 0x553EE00000000000
_NEWTON_STEPS = 4


def cbrt_f32(x: Any) -> Any:
    """cbrt of a float32 operand, as float32."""
    bits = bitcast_convert_type(x, _I32)
    a = float32_magnitude(bits, x)
    estimate = sub(
        full((), _RCBRT_MAGIC, _I64), div(bitcast_convert_type(a, _I64), full((), 3, _I64))
    )
    r = bitcast_convert_type(estimate, _F64)
    third_a, four_thirds = mul(a, f64(1.0 / 3.0)), f64(4.0 / 3.0)
    for _ in range(_NEWTON_STEPS):
        r = mul(r, sub(four_thirds, mul(third_a, mul(r, mul(r, r)))))
    root = mul(a, mul(r, r))
    # 0, inf and NaN are their own cube roots (the estimate is garbage there).
    regular = bitwise_and(gt(a, f64(0.0)), lt(a, f64(math.inf)))
    magnitude = convert_element_type(select_n(regular, a, root), _F32)
    return select_n(lt(bits, full((), 0, _I32)), magnitude, neg(magnitude))


def uses_fast_cbrt(dtype: np.dtype, size: int) -> bool:
    """Whether a real operand of this dtype and element count takes the kernel."""
    return dtype == _F32 and size >= MIN_SIZE


def fast_cbrt_lowering(lowering: Callable[..., Any]) -> Callable[..., Any]:
    """cbrt's lowering: the kernel for large float32 operands, `lowering` (XLA's op)
    otherwise."""
    kernel = lower_fun(cbrt_f32)

    def rule(ctx: LoweringContext, x: Any) -> Any:
        aval = ctx.aval_out
        if not uses_fast_cbrt(aval.dtype, math.prod(aval.shape)) or not for_the_cpu():
            return lowering(ctx, x)
        return kernel(ctx, x)

    return rule
