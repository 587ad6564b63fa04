"""hypot's lowering: glibc's `hypot` and `hypotf` (which NumPy calls), to the last bit.

float64 is glibc's algorithm (2.35 on; Borges, "An improved algorithm for hypot(a, b)", 2019,
the correction without FMA, as x86-64's generic build runs it): `h = sqrt(ax*ax + ay*ay)`,
then `h -= (t1 + t2) / (2h)` where `t1 + t2` is `h*h - ax*ax - ay*ay` from products that
cancel exactly (below 0.8 ulp; glibc's result is not correctly rounded, so only its own
operations reproduce it). Operands past 2**511 are scaled by 2**-600 first and ones whose
smaller magnitude is below 2**-300 by 2**600 (glibc: 2**-511; see below); a smaller magnitude
at most 2**-54 of the larger gives the larger (the sum rounds to it).

float32 is glibc's `hypotf`: `sqrt(x*x + y*y)` in float64 (the products exact), rounded once to
float32; float16 and other narrower floats go through it and round again, as NumPy's loops do.

Three things XLA's CPU code does differently from C, each undone here:
- It contracts `a * b + c` into one fused multiply-add (one rounding instead of two). Every
  rounded product feeding an addition goes through `_rounded`, an addition of a run-time zero
  (fusing that one rounds the product alone); products by powers of two, and of float32
  values in float64, are exact anyway.
- It reads subnormal operands as zero and flushes subnormal results to zero. Magnitudes are
  ordered and tested on their bits, subnormal operands are decoded from their bits (the
  significand times 2**-1074, times 2**600 while scaled), and a subnormal result is encoded to
  bits, rounded to nearest even, as the multiplication by 2**-600 would have rounded it.
- Scaling by a power of two changes no rounding unless a value under- or overflows. glibc
  scales tiny operands only below 2**-511, so for a smaller magnitude in [2**-511, 2**-480)
  its kernel's products can be subnormal (gradual underflow, last bits lost), where XLA would
  flush them to zero and the correction step would go wrong by far more. Scaling from 2**-300
  keeps every product normal: the result is then glibc's except where glibc's own products
  underflowed and that changed its last bit (none of the 100,000 pairs in that band that
  tests/test_hypot_accuracy.py measured: all bit-identical).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from mjcore import dtypes
from mjcore.backend.lowering import LoweringContext, lower_fun
from mjcore.core import get_aval
from mjcore.lax.arithmetic import add, div, max, min, mul, sub
from mjcore.lax.base import convert_element_type, full, select_n
from mjcore.lax.bitcast import bitcast_convert_type
from mjcore.lax.bitwise import bitwise_and, bitwise_not, bitwise_or
from mjcore.lax.comparison import eq, gt, le, lt
from mjcore.lax.kernels.float64_kernels import f64, float32_magnitude

_F64, _I64 = np.dtype(np.float64), np.dtype(np.int64)
_F32, _I32 = np.dtype(np.float32), np.dtype(np.int32)
_MAGNITUDE = 0x7FFF_FFFF_FFFF_FFFF
_INF_BITS = 0x7FF0_0000_0000_0000
_LARGE_BITS = 0x5FE0_0000_0000_0000  # 2**511: glibc scales larger operands down
_TINY_BITS = 0x2D30_0000_0000_0000  # 2**-300: below it the smaller one is scaled up
_SCALE = 2.0**600
_EPS = 2.0**-54


def _bits(value: float) -> int:
    return int(np.float64(value).view(np.int64))


assert _bits(2.0**511) == _LARGE_BITS and _bits(2.0**-300) == _TINY_BITS


def _i64(value: int) -> Any:
    return full((), value, _I64)


def _rounded(p: Any, zero: Any) -> Any:
    """`p`, a product, rounded on its own even where XLA contracts the addition that uses it:
    `p + zero` is what XLA may fuse instead (`fma(a, b, 0)`, `p` rounded once), and a sum is
    no product to fuse. `zero` is a run-time 0 (`ax * 0`), which XLA cannot fold away."""
    return add(p, zero)


def _kernel(ax: Any, ay: Any, sqrt: Callable[[Any], Any]) -> Any:
    """glibc's kernel for ax >= ay > ax * 2**-54, both scaled so nothing under/overflows."""
    two, four = f64(2.0), f64(4.0)
    zero = mul(ax, f64(0.0))  # finite ax
    h = sqrt(add(_rounded(mul(ax, ax), zero), _rounded(mul(ay, ay), zero)))
    # h <= 2 ay
    d = sub(h, ay)
    t1 = _rounded(mul(ax, sub(mul(two, d), ax)), zero)
    t2 = _rounded(mul(sub(d, mul(two, sub(ax, ay))), d), zero)
    near = add(t1, t2)
    # h > 2 ay
    d = sub(h, ax)
    t1 = _rounded(mul(mul(two, d), sub(ax, mul(two, ay))), zero)
    t2 = add(_rounded(mul(sub(mul(four, d), ay), ay), zero), _rounded(mul(d, d), zero))
    far = add(t1, t2)
    t = select_n(le(h, mul(two, ay)), far, near)
    return sub(h, div(t, mul(two, h)))


def _scaled_up(bits: Any, m: Any) -> Any:
    """m * 2**600 for a magnitude m with `bits`, subnormals decoded (inf past 2**424).

    A subnormal's significand s under 2**-422's exponent is 2**-422 + s * 2**-474; less
    2**-422 that is exactly s * 2**-1074 * 2**600 (no integer conversion: it would keep the
    loop from vectorising)."""
    offset = bitcast_convert_type(bitwise_or(bits, _i64(_bits(2.0**-422))), _F64)
    subnormal = sub(offset, f64(2.0**-422))
    return select_n(lt(bits, _i64(1 << 52)), mul(m, f64(_SCALE)), subnormal)


def _nearest_integer_bits(t: Any, dtype: np.dtype) -> Any:
    """round(t) to nearest even, as an integer of `dtype`, for 0 <= t <= 2**52: adding 2**52
    rounds it (the sum's unit is 1) and the sum's bits less 2**52's are the integer."""
    shifted = bitcast_convert_type(add(t, f64(2.0**52)), _I64)
    return convert_element_type(sub(shifted, _i64(_bits(2.0**52))), dtype)


def hypot_f64(x: Any, y: Any, sqrt: Callable[[Any], Any]) -> Any:
    """glibc's hypot of float64 operands of one shape (`sqrt`: lax's, correctly rounded)."""
    bx = bitwise_and(bitcast_convert_type(x, _I64), _i64(_MAGNITUDE))
    by = bitwise_and(bitcast_convert_type(y, _I64), _i64(_MAGNITUDE))
    big_bits, small_bits = max(bx, by), min(bx, by)
    ax, ay = bitcast_convert_type(big_bits, _F64), bitcast_convert_type(small_bits, _F64)
    large = gt(big_bits, _i64(_LARGE_BITS))
    tiny = lt(small_bits, _i64(_TINY_BITS))
    down = f64(1.0 / _SCALE)
    a = select_n(large, select_n(tiny, ax, _scaled_up(big_bits, ax)), mul(ax, down))
    b = select_n(large, select_n(tiny, ay, _scaled_up(small_bits, ay)), mul(ay, down))
    r = _kernel(a, b, sqrt)
    # Back to scale: by 2**600 (overflowing to inf as glibc's does), or by 2**-600, where a
    # subnormal result is encoded from bits (XLA would flush it).
    up = mul(r, f64(_SCALE))
    normal = mul(r, down)
    subnormal = bitcast_convert_type(_nearest_integer_bits(mul(r, f64(2.0**474)), _I64), _F64)
    small_result = select_n(lt(r, f64(2.0**-422)), normal, subnormal)
    out = select_n(large, select_n(tiny, r, small_result), up)
    # The smaller one negligible: the larger, bits and all (subnormal or zero included).
    out = select_n(le(b, mul(a, f64(_EPS))), out, ax)
    # inf beats NaN, as in C.
    inf_bits = _i64(_INF_BITS)
    out = select_n(gt(big_bits, inf_bits), out, add(x, y))
    any_inf = bitwise_or(eq(bx, inf_bits), eq(by, inf_bits))
    return _inf_unless_signaling(out, any_inf, x, y)


def hypot_f32(x: Any, y: Any, sqrt: Callable[[Any], Any]) -> Any:
    """glibc's hypotf of float32 operands of one shape: float64 sqrt(x*x + y*y), rounded."""
    bx = bitcast_convert_type(x, _I32)
    by = bitcast_convert_type(y, _I32)
    a, b = float32_magnitude(bx, x), float32_magnitude(by, y)
    r = sqrt(add(mul(a, a), mul(b, b)))  # exact products: a contraction changes nothing
    normal_bits = bitcast_convert_type(convert_element_type(r, _F32), _I32)
    subnormal_bits = _nearest_integer_bits(mul(r, f64(2.0**149)), _I32)
    tiny = lt(r, f64(2.0**-126))  # NaN is not: its bits come from the conversion
    bits = select_n(tiny, normal_bits, subnormal_bits)
    out = bitcast_convert_type(bits, _F32)
    mask, inf = full((), 0x7FFFFFFF, _I32), full((), 0x7F800000, _I32)
    any_inf = bitwise_or(eq(bitwise_and(bx, mask), inf), eq(bitwise_and(by, mask), inf))
    return _inf_unless_signaling(out, any_inf, x, y)


def _signaling(x: Any) -> Any:
    """Whether x is a signaling NaN: all exponent bits set, the quiet bit (the significand's
    first) clear and the significand not zero."""
    dtype = get_aval(x).dtype
    int_dtype = np.dtype(f"int{8 * dtype.itemsize}")
    bits = bitcast_convert_type(x, int_dtype)
    nmant = int(dtypes.finfo(dtype).nmant)
    exponent = ((1 << (8 * dtype.itemsize - 1)) - 1) & ~((1 << nmant) - 1)
    quiet = 1 << (nmant - 1)

    def const(v: int) -> Any:
        return full((), v, int_dtype)

    nan = gt(bitwise_and(bits, const(exponent | ((1 << nmant) - 1))), const(exponent))
    return bitwise_and(nan, eq(bitwise_and(bits, const(quiet)), const(0)))


def _inf_unless_signaling(out: Any, any_inf: Any, x: Any, y: Any) -> Any:
    """inf where an operand is infinite, even beside a quiet NaN, as C's hypot; beside a
    signaling NaN, C gives `x + y`, a NaN (`out` is one there)."""
    signaling = bitwise_or(_signaling(x), _signaling(y))
    aval = get_aval(out)
    return select_n(
        bitwise_and(any_inf, bitwise_not(signaling)), out, full(aval.shape, math.inf, aval.dtype)
    )


def hypot_narrow(x: Any, y: Any, sqrt: Callable[[Any], Any]) -> Any:
    """float16 (and other floats narrower than float32): through hypotf, rounded again, as
    NumPy's float16 loop computes it."""
    dtype = get_aval(x).dtype
    r = hypot_f32(convert_element_type(x, _F32), convert_element_type(y, _F32), sqrt)
    out = convert_element_type(r, dtype)
    # The conversion to float32 may quiet a signaling NaN; NumPy's keeps it for hypotf.
    nan = full(get_aval(out).shape, math.nan, dtype)
    return select_n(bitwise_or(_signaling(x), _signaling(y)), out, nan)


def hypot_lowering(sqrt: Callable[[Any], Any]) -> Callable[..., Any]:
    """hypot's lowering rule (operands already broadcast to the output's shape), built on
    `sqrt` (the primitive's wrapper: passed in, since its module defines hypot)."""
    kernels = {
        _F64: lower_fun(partial(hypot_f64, sqrt=sqrt)),
        _F32: lower_fun(partial(hypot_f32, sqrt=sqrt)),
    }
    narrow = lower_fun(partial(hypot_narrow, sqrt=sqrt))

    def rule(ctx: LoweringContext, x: Any, y: Any) -> Any:
        aval = ctx.aval_out.strip_weak_type()
        kernel = kernels.get(aval.dtype, narrow)
        return kernel(LoweringContext(ctx.builder, [aval, aval], [aval]), x, y)

    return rule


__all__ = ["hypot_f32", "hypot_f64", "hypot_lowering"]
