"""Trigonometric functions and their inverses on large float32/float16 arrays, vectorised.

XLA's CPU `sine`, `cosine`, `tan` and CHLO's `atan`, `asin`, `acos` are accurate (0.56 to 2
ulp) but do not vectorise: 4-8 ns an element on this machine, where `exp` takes
0.25 ns, and 8x NumPy's float32 `sin`. For an array of at least `MIN_SIZE` elements, the
lowerings here compute in float64 instead, then round once to the operand's dtype, which puts
every result within 0.5001 ulp (closer than XLA's):

- sin, cos, tan: range reduction `x = k pi/2 + r`, `|r| <= pi/4`, with pi/2 split Cody-Waite
  style into three parts, the first two of 33 bits so `k * part` is exact for `|k| < 2**20`;
  Taylor polynomials of sin and cos on `r` (truncation error below 1e-11, relative); the
  quadrant `k mod 4` picks +-sin r, +-cos r (or their ratio, for tan). An operand with an
  element above `LIMIT` in magnitude (where `k * part` stops being exact) takes XLA's op for
  those elements, behind a run-time `cond` so ordinary arrays never pay for it.
- atan, asin, acos: all through `atan` of a non-negative float64, reduced to [0, 1] by
  `atan t = pi/2 - atan(1/t)`, then below tan(pi/8) by `atan t = pi/4 + atan((t-1)/(t+1))`;
  a Taylor series does the rest (truncation error below 2**-49). `asin x = atan(x /
  sqrt((1-x)(1+x)))`, `acos x = 2 atan(sqrt((1-x)/(1+x)))`. The reciprocals and square roots
  are `float64_kernels`' division-free ones, so each kernel is one XLA loop fusion (with
  divisions and square roots, three).

Infinities, NaNs and signed zeros give NumPy's values. Smaller arrays keep XLA's op: the
kernels compile 30-100 ms slower, which only large arrays repay. float64 sin and cos have their
own kernels (`mjcore.lax.kernels.fast_trig64`, within 0.85 ulp; 2.5-3x faster than XLA's float64 ops
and 4-5x faster than NumPy's). float64 tan keeps XLA's op: sin over cos as double-double
values stays within 0.99 ulp, but XLA splits that fusion at the division and computes the
kernels twice, which left it at 0.86x XLA's time for +100 ms of compile. The float64 inverse
functions keep XLA's op too (these designs would need double-double arithmetic there).
float32 `atan2` has its own kernel (`mjcore.lax.kernels.fast_atan2`), which also handles subnormal
operands and results bit by bit, and divides without a division.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from mjcore import dtypes
from mjcore.backend.lowering import LoweringContext, lower_fun
from mjcore.core import ShapedArray, get_aval
from mjcore.lax.arithmetic import abs, add, div, floor, mul, neg, sub
from mjcore.lax.base import convert_element_type, full, select_n
from mjcore.lax.bitwise import bitwise_and, bitwise_or
from mjcore.lax.comparison import eq, ge, gt, lt
from mjcore.lax.kernels import fast_trig64
from mjcore.lax.kernels.float64_kernels import atan_unit, f64, horner, reciprocal, rsqrt
from mjcore.lax.kernels.platform import for_the_cpu
from mjcore.lax.reductions import reduce_or

# From this many elements on, the kernels pay back their compile time within ~20-40 (atan,
# asin, acos, atan2: +25-50 ms over XLA's op) to ~120 (sin, cos, tan: +100 ms, most of it the
# guard's conditional) calls of one shape; XLA's op takes ~4-15 ns an element, the kernels
# ~1-2.5 ns.
# The float64 sin and cos (+100 ms; XLA's ops ~10-18 ns an element, the kernels ~4 ns) repay
# theirs within ~70 calls from here.
MIN_SIZE = 2**18
# |x| up to here has |k| < 2**19, so the reduction below is exact to ~2**-100.
LIMIT = 2.0**19
_FAST_DTYPES = frozenset({np.dtype(np.float32), np.dtype(np.float16)})
_F64 = np.dtype(np.float64)

_TWO_OVER_PI = float.fromhex("0x1.45f306dc9c883p-1")
# pi/2 = _PIO2_1 + _PIO2_2 + _PIO2_3 to ~2**-120; the first two carry 33 significant bits.
_PIO2_1 = float.fromhex("0x1.921fb54400000p+0")
_PIO2_2 = float.fromhex("0x1.0b4611a600000p-34")
_PIO2_3 = float.fromhex("0x1.3198a2e037073p-69")
_SIN_COEFFS = tuple((-1.0) ** n / math.factorial(2 * n + 1) for n in range(6))  # up to r**11
_COS_COEFFS = tuple((-1.0) ** n / math.factorial(2 * n) for n in range(7))  # up to r**12


def _reduced(x: Any) -> tuple[Any, Any, Any, Any]:
    """(sin r, cos r, k odd, k mod 4 >= 2) in float64 for `x = k pi/2 + r`."""
    x64 = convert_element_type(x, np.float64)
    k = floor(add(mul(x64, f64(_TWO_OVER_PI)), f64(0.5)))
    r = sub(sub(sub(x64, mul(k, f64(_PIO2_1))), mul(k, f64(_PIO2_2))), mul(k, f64(_PIO2_3)))
    rr = mul(r, r)
    sin_r, cos_r = mul(r, horner(rr, _SIN_COEFFS)), horner(rr, _COS_COEFFS)
    # k mod 4 in floating point: exact, and vectorises where an int64 conversion may not.
    q = sub(k, mul(f64(4.0), floor(mul(k, f64(0.25)))))
    odd = bitwise_or(eq(q, f64(1.0)), eq(q, f64(3.0)))
    return sin_r, cos_r, odd, ge(q, f64(2.0))


def _sin64(x: Any) -> Any:
    sin_r, cos_r, odd, negate = _reduced(x)
    v = select_n(odd, sin_r, cos_r)
    return select_n(negate, v, neg(v))


def _cos64(x: Any) -> Any:
    sin_r, cos_r, odd, negate = _reduced(x)
    v = select_n(odd, cos_r, neg(sin_r))
    return select_n(negate, v, neg(v))


def _tan64(x: Any) -> Any:
    # tan(r + k pi/2) is tan r for even k and -cot r for odd k.
    sin_r, cos_r, odd, _ = _reduced(x)
    return select_n(odd, div(sin_r, cos_r), neg(div(cos_r, sin_r)))


# --- atan and its relatives ------------------------------------------------------------------


def _atan_nonnegative(a: Any) -> Any:
    """atan a for float64 a in [0, inf] (or NaN)."""
    inverted = gt(a, f64(1.0))
    inverse = select_n(eq(a, f64(math.inf)), reciprocal(a), _full_like(a, 0.0))
    r = atan_unit(select_n(inverted, a, inverse))
    return select_n(inverted, r, sub(f64(math.pi / 2), r))


def _full_like(x: Any, value: float) -> Any:
    return full(get_aval(x).shape, value, np.dtype(np.float64))


def _sqrt_or_special(d: Any, at_zero: float) -> tuple[Any, Any]:
    """(rsqrt(d) where d is positive and finite (1 elsewhere), the value elsewhere: `at_zero`
    for 0, inf for inf, NaN for negative or NaN d)."""
    ok = bitwise_and(gt(d, f64(0.0)), lt(d, f64(math.inf)))
    inv_sqrt = rsqrt(select_n(ok, _full_like(d, 1.0), d))
    special = select_n(ge(d, f64(0.0)), _full_like(d, math.nan), d)  # inf stays
    special = select_n(eq(d, f64(0.0)), special, _full_like(d, at_zero))
    return select_n(ok, special, inv_sqrt), ok


def _odd(x64: Any, magnitude_result: Any) -> Any:
    return select_n(lt(x64, f64(0.0)), magnitude_result, neg(magnitude_result))


def _atan64(x: Any) -> Any:
    x64 = convert_element_type(x, np.float64)
    return _odd(x64, _atan_nonnegative(abs(x64)))


def _asin64(x: Any) -> Any:
    x64 = convert_element_type(x, np.float64)
    one = f64(1.0)
    # asin x = atan(|x| / sqrt(1 - x**2)): |x| = 1 gives atan(inf) = pi/2, |x| > 1 NaN.
    cos_squared = mul(sub(one, x64), add(one, x64))
    inv_cos, ok = _sqrt_or_special(cos_squared, math.inf)
    ratio = select_n(ok, inv_cos, mul(abs(x64), inv_cos))
    return _odd(x64, _atan_nonnegative(ratio))


def _acos64(x: Any) -> Any:
    x64 = convert_element_type(x, np.float64)
    one = f64(1.0)
    # acos x = 2 atan(sqrt((1 - x) / (1 + x))): x = -1 gives 2 atan(inf) = pi, |x| > 1 NaN.
    opposite = add(one, x64)
    q = mul(sub(one, x64), reciprocal(opposite))
    # 1 + x of 0 (x = -1) gives inf; negative, infinite or NaN, NaN.
    special = select_n(eq(opposite, f64(0.0)), _full_like(x64, math.nan), _full_like(x64, math.inf))
    finite = bitwise_and(gt(opposite, f64(0.0)), lt(opposite, f64(math.inf)))
    q = select_n(finite, special, q)
    inv_sqrt, ok = _sqrt_or_special(q, 0.0)
    half_tan = select_n(ok, inv_sqrt, mul(q, inv_sqrt))
    return mul(f64(2.0), _atan_nonnegative(half_tan))


class _Kernel(NamedTuple):
    fun: Callable[..., Any]  # the operands (in their dtype) -> the result in float64
    odd_at_zero: bool  # f(x) rounds to x itself for |x| < tiny (sin, tan, atan, asin)
    periodic: bool  # a range reduction exact only up to a limit (sin, cos, tan)
    tiny: float = 0.0  # below this, an odd kernel returns x itself
    limit: float = math.inf  # past this, a periodic kernel's reduction is not exact


# Below this, |f(x) - x| < 2**-26 |x| for sin, tan, atan and asin: the result rounds to x. Taking
# x itself keeps subnormal results, which the float64 -> float32 conversion would flush to zero.
TINY = 2.0**-13

_KERNELS = {
    "stablehlo.sine": _Kernel(_sin64, True, True, TINY, LIMIT),
    "stablehlo.cosine": _Kernel(_cos64, False, True, TINY, LIMIT),
    "stablehlo.tan": _Kernel(_tan64, True, True, TINY, LIMIT),
    "chlo.atan": _Kernel(_atan64, True, False, TINY),
    "chlo.asin": _Kernel(_asin64, True, False, TINY),
    "chlo.acos": _Kernel(_acos64, False, False),
}
_KERNELS_F64 = {
    "stablehlo.sine": _Kernel(fast_trig64.sin64, True, True, fast_trig64.TINY, fast_trig64.LIMIT),
    "stablehlo.cosine": _Kernel(fast_trig64.cos64, False, True, 0.0, fast_trig64.LIMIT),
}


def _in_range(dtype: np.dtype, limit: float) -> bool:
    """Whether every finite value of `dtype` is within `limit` (float16's are within LIMIT)."""
    return float(dtypes.finfo(dtype).max) <= limit


def _vectorised(kernel: _Kernel) -> Callable[..., Any]:
    """operands -> the kernel's result in their dtype; for a periodic kernel on a dtype that
    reaches past its limit, also `|x| > limit` and whether any element is."""

    def fun(*xs: Any) -> Any:
        x = xs[0]
        aval = get_aval(x)
        fast = convert_element_type(kernel.fun(*xs), aval.dtype)
        if kernel.odd_at_zero:
            fast = select_n(gt(full((), kernel.tiny, aval.dtype), abs(x)), fast, x)
        if not kernel.periodic or _in_range(aval.dtype, kernel.limit):
            return fast
        big = gt(abs(x), full((), kernel.limit, aval.dtype))
        return fast, big, reduce_or(big, tuple(range(aval.ndim)))

    return fun


def _guarded(hlo_op: str, kernel: Callable[..., Any], ctx: LoweringContext, x: Any) -> Any:
    """A periodic kernel, with XLA's `hlo_op` for the elements past its limit if any are."""
    b, aval = ctx.builder, ctx.aval_out.strip_weak_type()
    mask, flag = aval.update(dtype=np.dtype(bool)), ShapedArray((), np.dtype(bool))
    fast, big, any_big = lower_fun(kernel)(LoweringContext(b, [x.aval], [aval, mask, flag]), x)

    def past_limit(inner: Any) -> list[Any]:
        exact = inner.op(hlo_op, [x], aval)
        return [inner.op("stablehlo.select", [big, exact, fast], aval)]

    regions = [b.region([], past_limit), b.region([], lambda inner: [fast])]
    return b.op("stablehlo.if", [any_big], aval, regions=regions)


def _kernel_for(hlo_op: str, dtype: np.dtype, size: int) -> _Kernel | None:
    if dtype in _FAST_DTYPES:
        return _KERNELS[hlo_op] if size >= MIN_SIZE else None
    if dtype == _F64 and size >= MIN_SIZE:
        return _KERNELS_F64.get(hlo_op)
    return None


def uses_fast_trig(dtype: np.dtype, size: int, hlo_op: str = "stablehlo.sine") -> bool:
    """Whether a real operand of this dtype and element count takes the vectorised path for
    the function XLA computes as `hlo_op`."""
    return _kernel_for(hlo_op, dtype, size) is not None


def fast_trig_lowering(hlo_op: str, lowering: Callable[..., Any]) -> Callable[..., Any]:
    """The lowering of the function XLA computes as `hlo_op`: vectorised for large float32 and
    float16 operands (and float64 ones, for sin and cos), `lowering` (XLA's op, with any
    complex handling) otherwise."""
    vectorised: dict[Any, Any] = {}

    def rule(ctx: LoweringContext, *xs: Any) -> Any:
        aval = ctx.aval_out
        kernel = _kernel_for(hlo_op, aval.dtype, math.prod(aval.shape))
        if kernel is None or not for_the_cpu():
            return lowering(ctx, *xs)
        fun = vectorised.get(kernel)
        if fun is None:
            fun = vectorised[kernel] = _vectorised(kernel)
        if kernel.periodic and not _in_range(aval.dtype, kernel.limit):
            return _guarded(hlo_op, fun, ctx, xs[0])
        return lower_fun(fun)(ctx, *xs)

    return rule
