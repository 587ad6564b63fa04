"""Transcendental primitives: exponentials, logarithms, roots, trigonometric and hyperbolic
functions and their inverses, logistic, atan2, hypot and pow. Elementwise; operands share one dtype.

Derivatives are written with these same wrappers, so they are differentiable again. Lowerings use
`stablehlo.*` ops, and `chlo.*` ops (which XLA decomposes accurately) where StableHLO has none;
for complex operands most are wrapped to give C99's special values (`complex_special`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore.ad import Zero, fused_rule_body
from mjcore.array import wrap_host
from mjcore.backend.lowering import LoweringContext
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.lax import host, host_vjp
from mjcore.lax.arithmetic import (
    abs,
    add,
    add_p,
    div,
    div_p,
    divide_cotangent,
    integer_pow,
    integer_pow_p,
    mul,
    mul_p,
    multiply_cotangent,
    neg,
    neg_p,
    negate_cotangent,
    sub,
    sub_p,
)
from mjcore.lax.base import full, select_n, select_n_p, unbroadcast
from mjcore.lax.bitwise import bitwise_and, bitwise_not, bitwise_or
from mjcore.lax.comparison import eq
from mjcore.lax.complex_special import (
    acos_rule,
    acosh_rule,
    annex_g_lowering,
    asin_rule,
    asinh_rule,
    atanh_rule,
    cosh_rule,
    exp_rule,
    log_rule,
    rotated_lowering,
    sinh_rule,
    sqrt_rule,
    tanh_rule,
)
from mjcore.lax.families import elementwise, scalar_constant
from mjcore.lax.kernels.fast_atan2 import fast_atan2_lowering
from mjcore.lax.kernels.fast_cbrt import fast_cbrt_lowering
from mjcore.lax.kernels.fast_trig import fast_trig_lowering
from mjcore.lax.kernels.libm_hypot import hypot_lowering

ArrayLike = Any

_INEXACT = "fc"
_FLOAT = "f"


def _const(x: Any, value: Any) -> Any:
    """A 0-d array of `x`'s dtype holding `value` (broadcasts in elementwise ops)."""
    return full((), value, get_aval(x).dtype)


def _coefficient_vjp(
    prim: Primitive, coefficient: Any, divide: bool = False, negate: bool = False
) -> None:
    """Register `prim`'s direct rule (`Primitive.eager_vjp_rule`) for a jvp `mul(x_dot, c)`
    (`div(x_dot, c)` when `divide`, `neg(mul(x_dot, c))` when `negate`): `c = coefficient(x,
    y)` computed when a cotangent arrives, by the same primitives as the jvp rule (host rules
    without a bind where eager dispatch runs them: `host_vjp.bind1`), then the transpose's
    negation and product (quotient), so the same bits as the jvp route without its rule in
    the forward pass."""

    def vjp(ct, y, primals, linear):
        c = coefficient(primals[0], y)
        if negate:
            ct = negate_cotangent(ct)
        return [divide_cotangent(ct, c) if divide else multiply_cotangent(ct, c)]

    prim.def_eager_vjp(vjp)


def _b(prim: Primitive, *args: Any) -> Any:
    """`prim.bind1(*args)` for a direct rule's coefficient (`host_vjp.bind1`)."""
    return host_vjp.bind1(prim, *args)


# --- exp ------------------------------------------------------------------------------------

exp_p = Primitive("exp")


def exp(x: ArrayLike) -> Any:
    """Elementwise natural exponential `e**x`."""
    return exp_p.bind1(x)


elementwise(exp_p, annex_g_lowering("stablehlo.exponential", "conj", exp_rule), _INEXACT)
exp_p.def_host(host.ufunc(np.exp))


@exp_p.def_jvp
def _exp_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    y = exp(x)
    return y, mul(x_dot, y)


# Eager reverse mode's direct rules (`Primitive.eager_vjp_rule`): the transposes of the jvp
# rules' tangent equations, with the coefficient computed only when a cotangent arrives.
exp_p.def_eager_vjp(lambda ct, y, primals, linear: [multiply_cotangent(ct, y)])


# --- exp2 -----------------------------------------------------------------------------------

exp2_p = Primitive("exp2")


def exp2(x: ArrayLike) -> Any:
    """Elementwise base-2 exponential `2**x`."""
    return exp2_p.bind1(x)


def _exp2_lowering(ctx: LoweringContext, x):
    # `power(2, x)` is exact at integers and within an ulp elsewhere; `exp(x * ln 2)` (JAX's
    # lowering) loses ~|x| ulps to the rounding of the product.
    b = ctx.builder
    two = scalar_constant(b, 2, x.aval.dtype, x.aval.shape)
    return b.op("stablehlo.power", [two, x], ctx.aval_out.strip_weak_type())


elementwise(exp2_p, _exp2_lowering, _INEXACT)
exp2_p.def_host(host.ufunc(np.exp2))


@exp2_p.def_jvp
def _exp2_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    y = exp2(x)
    return y, mul(x_dot, mul(y, _const(x, np.log(2))))


_coefficient_vjp(exp2_p, lambda x, y: _b(mul_p, y, _const(x, np.log(2))))


# --- log ------------------------------------------------------------------------------------

log_p = Primitive("log")


def log(x: ArrayLike) -> Any:
    """Elementwise natural logarithm (principal branch for complex input)."""
    return log_p.bind1(x)


elementwise(log_p, annex_g_lowering("stablehlo.log", "conj", log_rule), _INEXACT)
log_p.def_host(host.ufunc(np.log))


@log_p.def_jvp
def _log_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return log(x), div(x_dot, x)


log_p.def_eager_vjp(lambda ct, y, primals, linear: [divide_cotangent(ct, primals[0])])


# --- log1p ----------------------------------------------------------------------------------

log1p_p = Primitive("log1p")


def log1p(x: ArrayLike) -> Any:
    """Elementwise `log(1 + x)`, accurate for small `x`."""
    return log1p_p.bind1(x)


elementwise(log1p_p, annex_g_lowering("stablehlo.log_plus_one", "conj", log_rule), _INEXACT)
log1p_p.def_host(host.ufunc(np.log1p))


@log1p_p.def_jvp
def _log1p_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return log1p(x), div(x_dot, add(x, _const(x, 1)))


_coefficient_vjp(log1p_p, lambda x, y: _b(add_p, x, _const(x, 1)), divide=True)


# --- expm1 ----------------------------------------------------------------------------------

expm1_p = Primitive("expm1")


def expm1(x: ArrayLike) -> Any:
    """Elementwise `exp(x) - 1`, accurate for small `x`."""
    return expm1_p.bind1(x)


elementwise(expm1_p, "stablehlo.exponential_minus_one", _INEXACT)
expm1_p.def_host(host.ufunc(np.expm1))


@expm1_p.def_jvp
def _expm1_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    y = expm1(x)
    return y, mul(x_dot, add(y, _const(y, 1)))


_coefficient_vjp(expm1_p, lambda x, y: _b(add_p, y, _const(y, 1)))


# --- sqrt -----------------------------------------------------------------------------------

sqrt_p = Primitive("sqrt")


def sqrt(x: ArrayLike) -> Any:
    """Elementwise square root (principal branch for complex input)."""
    return sqrt_p.bind1(x)


elementwise(sqrt_p, annex_g_lowering("stablehlo.sqrt", "conj", sqrt_rule), _INEXACT)
sqrt_p.def_host(host.ufunc(np.sqrt))


@sqrt_p.def_jvp
def _sqrt_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    y = sqrt(x)
    return y, mul(x_dot, div(_const(y, 0.5), y))


_coefficient_vjp(sqrt_p, lambda x, y: _b(div_p, _const(y, 0.5), y))


# --- rsqrt ----------------------------------------------------------------------------------

rsqrt_p = Primitive("rsqrt")


def rsqrt(x: ArrayLike) -> Any:
    """Elementwise reciprocal square root `1 / sqrt(x)`."""
    return rsqrt_p.bind1(x)


elementwise(rsqrt_p, "stablehlo.rsqrt", _INEXACT)
rsqrt_p.def_host(host.rsqrt)


@rsqrt_p.def_jvp
def _rsqrt_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    y = rsqrt(x)
    return y, mul(x_dot, mul(_const(x, -0.5), div(y, x)))


_coefficient_vjp(rsqrt_p, lambda x, y: _b(mul_p, _const(x, -0.5), _b(div_p, y, x)))


# --- cbrt -----------------------------------------------------------------------------------

cbrt_p = Primitive("cbrt")


def cbrt(x: ArrayLike) -> Any:
    """Elementwise real cube root (negative for negative `x`)."""
    return cbrt_p.bind1(x)


# XLA rejects complex operands of stablehlo.cbrt; NumPy has no complex cbrt either.
def _xla_cbrt(ctx: LoweringContext, x: Any) -> Any:
    return ctx.builder.op("stablehlo.cbrt", [x], ctx.aval_out.strip_weak_type())


elementwise(cbrt_p, fast_cbrt_lowering(_xla_cbrt), _FLOAT)
cbrt_p.def_host(host.ufunc(np.cbrt))


@cbrt_p.def_jvp
def _cbrt_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    y = cbrt(x)
    return y, mul(x_dot, mul(_const(y, 1 / 3), integer_pow(y, -2)))


_coefficient_vjp(
    cbrt_p,
    lambda x, y: _b(mul_p, _const(y, 1 / 3), host_vjp.bind1(integer_pow_p, y, y=-2)),
)


# --- sin ------------------------------------------------------------------------------------

sin_p = Primitive("sin")


def sin(x: ArrayLike) -> Any:
    """Elementwise sine."""
    return sin_p.bind1(x)


_complex_sin = rotated_lowering("stablehlo.sine", lambda w: sinh(w), True)
elementwise(sin_p, fast_trig_lowering("stablehlo.sine", _complex_sin), _INEXACT)
sin_p.def_host(host.ufunc(np.sin))


@sin_p.def_jvp
def _sin_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return sin(x), mul(x_dot, cos(x))


@sin_p.def_eager_vjp
def _sin_eager_vjp(ct, y, primals, linear):
    out = _trig_vjp_host(ct, primals[0], cos_p, False)
    return [_mul_by_cos(ct, primals[0]) if out is None else out]


@fused_rule_body
def _mul_by_cos(ct, x):
    return mul(ct, cos(x))


# --- cos ------------------------------------------------------------------------------------

cos_p = Primitive("cos")


def cos(x: ArrayLike) -> Any:
    """Elementwise cosine."""
    return cos_p.bind1(x)


_complex_cos = rotated_lowering("stablehlo.cosine", lambda w: cosh(w), False)
elementwise(cos_p, fast_trig_lowering("stablehlo.cosine", _complex_cos), _INEXACT)
cos_p.def_host(host.ufunc(np.cos))


@cos_p.def_jvp
def _cos_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return cos(x), neg(mul(x_dot, sin(x)))


@cos_p.def_eager_vjp
def _cos_eager_vjp(ct, y, primals, linear):
    out = _trig_vjp_host(ct, primals[0], sin_p, True)
    return [_mul_by_minus_sin(ct, primals[0]) if out is None else out]


@fused_rule_body
def _mul_by_minus_sin(ct, x):
    return mul(neg(ct), sin(x))


def _trig_vjp_host(ct: Any, x: Any, other: Any, negate: bool) -> Any:
    """`_mul_by_cos(ct, x)` (`other` cos_p) or `_mul_by_minus_sin(ct, x)` (sin_p, `negate`)
    on the host (`mjcore.lax.host_vjp`): the host rules of the body's ufuncs, in its order,
    where its replay would run them (float32 sin/cos of large arrays take XLA's kernel)."""
    values = host_vjp.cotangent_and_operands(ct, x)
    if values is None or not host_vjp.within(other, values[1].dtype, values[1].size):
        return None
    ct_value, x_value = values
    if negate:
        out = np.multiply(np.negative(ct_value), np.sin(x_value))
    else:
        out = np.multiply(ct_value, np.cos(x_value))
    out = out if type(out) is np.ndarray else np.asarray(out)
    weak = ct.aval.weak_type and get_aval(x).weak_type  # (mul: weak iff both operands are)
    return host_vjp.wrap(out, out.shape, ct.aval.update(weak_type=weak))


# --- tan ------------------------------------------------------------------------------------

tan_p = Primitive("tan")


def tan(x: ArrayLike) -> Any:
    """Elementwise tangent."""
    return tan_p.bind1(x)


_complex_tan = rotated_lowering("stablehlo.tan", lambda w: tanh(w), True)
elementwise(tan_p, fast_trig_lowering("stablehlo.tan", _complex_tan), _INEXACT)
tan_p.def_host(host.ufunc(np.tan))


@tan_p.def_jvp
def _tan_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    y = tan(x)
    return y, mul(x_dot, add(_const(y, 1), mul(y, y)))


_coefficient_vjp(tan_p, lambda x, y: _b(add_p, _const(y, 1), _b(mul_p, y, y)))


# --- asin -----------------------------------------------------------------------------------

asin_p = Primitive("asin")


def asin(x: ArrayLike) -> Any:
    """Elementwise inverse sine (principal branch)."""
    return asin_p.bind1(x)


elementwise(
    asin_p,
    fast_trig_lowering("chlo.asin", annex_g_lowering("chlo.asin", "odd", asin_rule)),
    _INEXACT,
)
asin_p.def_host(host.ufunc(np.arcsin))


@asin_p.def_jvp
def _asin_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return asin(x), mul(x_dot, rsqrt(sub(_const(x, 1), mul(x, x))))


_coefficient_vjp(asin_p, lambda x, y: _b(rsqrt_p, _b(sub_p, _const(x, 1), _b(mul_p, x, x))))


# --- acos -----------------------------------------------------------------------------------

acos_p = Primitive("acos")


def acos(x: ArrayLike) -> Any:
    """Elementwise inverse cosine (principal branch)."""
    return acos_p.bind1(x)


elementwise(
    acos_p,
    fast_trig_lowering("chlo.acos", annex_g_lowering("chlo.acos", "conj", acos_rule)),
    _INEXACT,
)
acos_p.def_host(host.ufunc(np.arccos))


@acos_p.def_jvp
def _acos_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return acos(x), neg(mul(x_dot, rsqrt(sub(_const(x, 1), mul(x, x)))))


_coefficient_vjp(
    acos_p, lambda x, y: _b(rsqrt_p, _b(sub_p, _const(x, 1), _b(mul_p, x, x))), negate=True
)


# --- atan -----------------------------------------------------------------------------------

atan_p = Primitive("atan")


def atan(x: ArrayLike) -> Any:
    """Elementwise inverse tangent (principal branch)."""
    return atan_p.bind1(x)


_complex_atan = rotated_lowering("chlo.atan", lambda w: atanh(w), True)
elementwise(atan_p, fast_trig_lowering("chlo.atan", _complex_atan), _INEXACT)
atan_p.def_host(host.ufunc(np.arctan))


@atan_p.def_jvp
def _atan_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return atan(x), div(x_dot, add(_const(x, 1), mul(x, x)))


_coefficient_vjp(atan_p, lambda x, y: _b(add_p, _const(x, 1), _b(mul_p, x, x)), divide=True)


# --- atan2 ----------------------------------------------------------------------------------

atan2_p = Primitive("atan2")


def atan2(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise angle of the point `(y, x)`: `arctan(x / y)` in the correct quadrant."""
    return atan2_p.bind1(x, y)


def _xla_atan2(ctx: LoweringContext, x: Any, y: Any) -> Any:
    return ctx.builder.op("stablehlo.atan2", [x, y], ctx.aval_out.strip_weak_type())


elementwise(atan2_p, fast_atan2_lowering(_xla_atan2), _FLOAT)
atan2_p.def_host(host.ufunc(np.arctan2))


@atan2_p.def_jvp(symbolic_zeros=True)
def _atan2_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    out = atan2(x, y)
    den = add(mul(x, x), mul(y, y))
    terms = []
    if type(x_dot) is not Zero:
        terms.append(mul(x_dot, div(y, den)))
    if type(y_dot) is not Zero:
        terms.append(mul(y_dot, div(neg(x), den)))
    return out, terms[0] if len(terms) == 1 else add(terms[0], terms[1])


@atan2_p.def_eager_vjp
def _atan2_eager_vjp(ct, out, primals, linear):
    # The transposes of the jvp's products (and sum), its coefficients made when a cotangent
    # arrives, by the same primitives (host rules where dispatch runs them).
    x, y = primals
    den = _b(add_p, _b(mul_p, x, x), _b(mul_p, y, y))
    cts = [None, None]
    if linear[0] is not None:
        cts[0] = unbroadcast(multiply_cotangent(ct, _b(div_p, y, den)), linear[0].aval)
    if linear[1] is not None:
        c = _b(div_p, _b(neg_p, x), den)
        cts[1] = unbroadcast(multiply_cotangent(ct, c), linear[1].aval)
    return cts


# --- hypot ----------------------------------------------------------------------------------

hypot_p = Primitive("hypot")


def hypot(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise `sqrt(x**2 + y**2)` without undue overflow or underflow: C's `hypot` (glibc's,
    which NumPy calls) to the last bit; inf if either is infinite, even beside a NaN."""
    return hypot_p.bind1(x, y)


elementwise(hypot_p, hypot_lowering(sqrt), _FLOAT)
hypot_p.def_host(host.ufunc(np.hypot))


@hypot_p.def_jvp(symbolic_zeros=True)
def _hypot_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    out = hypot(x, y)
    terms = []
    for v, v_dot in ((x, x_dot), (y, y_dot)):
        if type(v_dot) is not Zero:
            terms.append(mul(v_dot, _hypot_partial(x, y, out, v)))
    return out, terms[0] if len(terms) == 1 else add(terms[0], terms[1])


def _hypot_partial(x: Any, y: Any, out: Any, v: Any) -> Any:
    """d hypot(x, y) / dv for `v` one of `x`, `y`, at `out = hypot(x, y)`."""
    aval = get_aval(out)
    inf = _const(out, np.inf)
    # The partials x/h and y/h, with JAX's values at the corners: 1/2 each at the origin (its
    # composition's max of two zeros), 0 beside an infinite operand. Where h overflows, from
    # the halved operands' hypot.
    origin = eq(out, _const(out, 0))
    infinite = bitwise_or(eq(abs(x), inf), eq(abs(y), inf))
    overflow = bitwise_and(eq(out, inf), bitwise_not(infinite))
    corners = bitwise_or(origin, infinite)
    half = _const(out, 0.5)
    den = select_n(overflow, out, hypot(mul(x, half), mul(y, half)))
    den = select_n(corners, den, full(aval.shape, 1, aval.dtype))  # no 0/0 or inf/inf
    zeros, halves = full(aval.shape, 0, aval.dtype), full(aval.shape, 0.5, aval.dtype)
    corner = select_n(origin, zeros, halves)
    v_scale = select_n(overflow, full(aval.shape, 1, aval.dtype), halves)
    ratio = div(mul(v, v_scale), den)
    return select_n(corners, ratio, corner)


@hypot_p.def_eager_vjp
def _hypot_eager_vjp(ct, out, primals, linear):
    # The transposes of the jvp's products (and sum); each partial made when a cotangent
    # arrives, by the same primitives, replayed as one program.
    x, y = primals
    cts = [None, None]
    for i in (0, 1):
        if linear[i] is not None:
            ct_v = _hypot_cotangent_host(ct, x, y, out, i)
            if ct_v is None:
                ct_v = _hypot_cotangent(ct, x, y, out, side=i)
            cts[i] = unbroadcast(ct_v, linear[i].aval)
    return cts


def _hypot_cotangent_host(ct: Any, x: Any, y: Any, out: Any, side: int) -> Any:
    """`_hypot_cotangent` on the host (`host_vjp`): the host rules of `_hypot_partial`'s
    primitives in its order (np.where for select_n, np.invert for bitwise_not), then the
    product, where its replay would run them there; else None."""
    values = host_vjp.cotangent_and_operands(ct, x, y, out)
    if values is None:
        return None
    ct_v, x_v, y_v, out_v = values
    dtype, shape = out_v.dtype, out_v.shape
    if not host_vjp.within(hypot_p, dtype, out_v.size):
        return None
    inf, zero, half = np.array(np.inf, dtype), np.zeros((), dtype), np.array(0.5, dtype)
    origin = np.equal(out_v, zero)
    infinite = np.bitwise_or(np.equal(np.abs(x_v), inf), np.equal(np.abs(y_v), inf))
    overflow = np.bitwise_and(np.equal(out_v, inf), np.invert(infinite))
    corners = np.bitwise_or(origin, infinite)
    ones, halves = np.ones(shape, dtype), np.full(shape, 0.5, dtype)
    den = np.where(overflow, np.hypot(np.multiply(x_v, half), np.multiply(y_v, half)), out_v)
    den = np.where(corners, ones, den)
    corner = np.where(origin, halves, np.zeros(shape, dtype))
    v_scale = np.where(overflow, halves, ones)
    ratio = np.divide(np.multiply((x_v, y_v)[side], v_scale), den)
    r = np.multiply(ct_v, np.where(corners, corner, ratio))
    r = r if type(r) is np.ndarray else np.asarray(r)
    return host_vjp.wrap(r, r.shape, ct.aval.update(weak_type=False))  # (the partial: strong)


@fused_rule_body
def _hypot_cotangent(ct, x, y, out, *, side):
    return mul(ct, _hypot_partial(x, y, out, (x, y)[side]))


# --- sinh -----------------------------------------------------------------------------------

sinh_p = Primitive("sinh")


def sinh(x: ArrayLike) -> Any:
    """Elementwise hyperbolic sine."""
    return sinh_p.bind1(x)


elementwise(sinh_p, annex_g_lowering("chlo.sinh", "odd", sinh_rule(cos)), _INEXACT)
sinh_p.def_host(host.ufunc(np.sinh))


@sinh_p.def_jvp
def _sinh_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return sinh(x), mul(x_dot, cosh(x))


# --- cosh -----------------------------------------------------------------------------------

cosh_p = Primitive("cosh")


def cosh(x: ArrayLike) -> Any:
    """Elementwise hyperbolic cosine."""
    return cosh_p.bind1(x)


elementwise(cosh_p, annex_g_lowering("chlo.cosh", "even", cosh_rule(sin)), _INEXACT)
cosh_p.def_host(host.ufunc(np.cosh))


@cosh_p.def_jvp
def _cosh_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return cosh(x), mul(x_dot, sinh(x))


# (sinh's here, where cosh_p is defined)
_coefficient_vjp(sinh_p, lambda x, y: _b(cosh_p, x))
_coefficient_vjp(cosh_p, lambda x, y: _b(sinh_p, x))


# --- tanh -----------------------------------------------------------------------------------

tanh_p = Primitive("tanh")


def tanh(x: ArrayLike) -> Any:
    """Elementwise hyperbolic tangent."""
    return tanh_p.bind1(x)


elementwise(tanh_p, annex_g_lowering("stablehlo.tanh", "odd", tanh_rule), _INEXACT)
tanh_p.def_host(host.ufunc(np.tanh))


@tanh_p.def_jvp
def _tanh_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    y = tanh(x)
    one = _const(y, 1)
    # (1 + y)(1 - y) rather than 1 - y**2: no cancellation where |y| is near 1.
    return y, mul(x_dot, mul(add(one, y), sub(one, y)))


@tanh_p.def_eager_vjp
def _tanh_eager_vjp(ct, y, primals, linear):
    out = _tanh_vjp_host(ct, y)
    return [_tanh_vjp(ct, y) if out is None else out]


@fused_rule_body
def _tanh_vjp(ct, y):
    one = _const(y, 1)
    return mul(ct, mul(add(one, y), sub(one, y)))


def _tanh_vjp_host(ct: Any, y: Any) -> Any:
    """`_tanh_vjp` on the host (`mjcore.lax.host_vjp`): the host rules of its four ufuncs."""
    values = host_vjp.cotangent_and_operands(ct, y)
    if values is None:
        return None
    ct_value, y_value = values
    one = np.ones((), y_value.dtype)  # `_const(y, 1)`
    out = np.multiply(ct_value, np.multiply(np.add(one, y_value), np.subtract(one, y_value)))
    out = out if type(out) is np.ndarray else np.asarray(out)
    return host_vjp.wrap(out, out.shape, ct.aval.strip_weak_type())


# --- asinh ----------------------------------------------------------------------------------

asinh_p = Primitive("asinh")


def asinh(x: ArrayLike) -> Any:
    """Elementwise inverse hyperbolic sine (principal branch)."""
    return asinh_p.bind1(x)


elementwise(asinh_p, annex_g_lowering("chlo.asinh", "odd", asinh_rule), _INEXACT)
asinh_p.def_host(host.ufunc(np.arcsinh))


@asinh_p.def_jvp
def _asinh_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return asinh(x), mul(x_dot, rsqrt(add(mul(x, x), _const(x, 1))))


_coefficient_vjp(asinh_p, lambda x, y: _b(rsqrt_p, _b(add_p, _b(mul_p, x, x), _const(x, 1))))


# --- acosh ----------------------------------------------------------------------------------

acosh_p = Primitive("acosh")


def acosh(x: ArrayLike) -> Any:
    """Elementwise inverse hyperbolic cosine (principal branch)."""
    return acosh_p.bind1(x)


elementwise(acosh_p, annex_g_lowering("chlo.acosh", "conj", acosh_rule), _INEXACT)
acosh_p.def_host(host.ufunc(np.arccosh))


@acosh_p.def_jvp
def _acosh_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    one = _const(x, 1)
    # NB: JAX writes rsqrt((x - 1) * (x + 1)), which has the wrong sign for complex x with
    # Re(x) < 0; the product of two principal roots matches the principal branch everywhere.
    return acosh(x), mul(x_dot, mul(rsqrt(sub(x, one)), rsqrt(add(x, one))))


def _acosh_coefficient(x: Any, y: Any) -> Any:
    one = _const(x, 1)
    return _b(mul_p, _b(rsqrt_p, _b(sub_p, x, one)), _b(rsqrt_p, _b(add_p, x, one)))


_coefficient_vjp(acosh_p, _acosh_coefficient)


# --- atanh ----------------------------------------------------------------------------------

atanh_p = Primitive("atanh")


def atanh(x: ArrayLike) -> Any:
    """Elementwise inverse hyperbolic tangent (principal branch)."""
    return atanh_p.bind1(x)


elementwise(atanh_p, annex_g_lowering("chlo.atanh", "odd", atanh_rule), _INEXACT)
atanh_p.def_host(host.ufunc(np.arctanh))


@atanh_p.def_jvp
def _atanh_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    one = _const(x, 1)
    return atanh(x), div(x_dot, mul(add(one, x), sub(one, x)))


def _atanh_coefficient(x: Any, y: Any) -> Any:
    one = _const(x, 1)
    return _b(mul_p, _b(add_p, one, x), _b(sub_p, one, x))


_coefficient_vjp(atanh_p, _atanh_coefficient, divide=True)


# --- logistic -------------------------------------------------------------------------------

logistic_p = Primitive("logistic")


def logistic(x: ArrayLike) -> Any:
    """Elementwise logistic sigmoid `1 / (1 + exp(-x))`."""
    return logistic_p.bind1(x)


elementwise(logistic_p, "stablehlo.logistic", _INEXACT)
logistic_p.def_host(host.logistic)


@logistic_p.def_jvp
def _logistic_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    y = logistic(x)
    return y, mul(x_dot, mul(y, sub(_const(y, 1), y)))


_coefficient_vjp(logistic_p, lambda x, y: _b(mul_p, y, _b(sub_p, _const(y, 1), y)))


# --- pow ------------------------------------------------------------------------------------

pow_p = Primitive("pow")


def pow(x: ArrayLike, y: ArrayLike) -> Any:  # noqa: A001  (the lax name, as in JAX)
    """Elementwise `x ** y` for operands of one dtype (principal branch for complex).

    NB: for integers a negative exponent gives 0 (or ±1 for a base of ±1) as XLA defines it,
    where NumPy raises ValueError.
    """
    return pow_p.bind1(x, y)


elementwise(pow_p, "stablehlo.power", "iufc")
pow_p.def_host(host.pow)


@pow_p.def_jvp(symbolic_zeros=True)
def _pow_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    out = pow(x, y)
    terms = []
    if type(x_dot) is not Zero:
        terms.append(mul(x_dot, mul(y, pow(x, sub(y, _const(y, 1))))))
    if type(y_dot) is not Zero:
        # As in JAX: log(x) with x == 0 read as log(1) = 0, so 0**y has a zero y-derivative.
        safe_x = select_n(eq(x, _const(x, 0)), x, full(get_aval(x).shape, 1, get_aval(x).dtype))
        terms.append(mul(y_dot, mul(log(safe_x), out)))
    return out, terms[0] if len(terms) == 1 else add(terms[0], terms[1])


@pow_p.def_eager_vjp
def _pow_vjp(ct, out, primals, linear):
    # The transposes of `_pow_jvp`'s terms, their coefficients computed when a cotangent
    # arrives (by the same primitives), so the same bits without the jvp rule's binds.
    x, y = primals
    lx, ly = linear
    ct_x = ct_y = None
    if lx is not None:
        ct_x = _pow_vjp_base_host(ct, x, y)
        if ct_x is None:
            ct_x = multiply_cotangent(ct, mul(y, pow(x, sub(y, _const(y, 1)))))
        ct_x = unbroadcast(ct_x, lx.aval)
    if ly is not None:
        ct_y = _pow_vjp_exponent_host(ct, x, out)
        if ct_y is None:
            aval = get_aval(x)
            safe_x = select_n(eq(x, _const(x, 0)), x, full(aval.shape, 1, aval.dtype))
            ct_y = multiply_cotangent(ct, mul(log(safe_x), out))
        ct_y = unbroadcast(ct_y, ly.aval)
    return [ct_x, ct_y]


def _pow_vjp_exponent_host(ct: Any, x: Any, out: Any) -> Any:
    """`ct * (log(x or 1 where x == 0) * out)` (the exponent's term of `_pow_vjp`) on the
    host (`host_vjp`): the host rules of eq, select_n (NumPy broadcasting the ones), log, mul
    and the transpose's mul."""
    values = host_vjp.cotangent_and_operands(ct, x, out)
    if values is None:
        return None
    ct_value, x_value, out_value = values
    if not (
        host_vjp.within(select_n_p, np.dtype(bool), x_value.size)
        and host_vjp.within(log_p, x_value.dtype, x_value.size)
    ):
        return None
    dtype = x_value.dtype
    safe_x = np.where(np.equal(x_value, np.zeros((), dtype)), np.ones((), dtype), x_value)
    coeff = np.multiply(np.log(safe_x), out_value)
    r = np.asarray(np.multiply(ct_value, coeff))
    return wrap_host(r, ShapedArray(r.shape, r.dtype, False))  # (`full`'s ones: strong)


def _pow_vjp_base_host(ct: Any, x: Any, y: Any) -> Any:
    """`ct * (y * x ** (y - 1))` (the base's term of `_pow_vjp`) on the host (`host_vjp`):
    the host rules of sub, pow, mul and the transpose's mul."""
    values = host_vjp.cotangent_and_operands(ct, x, y)
    if values is None or not host_vjp.within(pow_p, values[1].dtype, values[0].size):
        return None
    ct_value, x_value, y_value = values
    power = host.pow(x_value, np.subtract(y_value, np.ones((), y_value.dtype)))
    out = np.asarray(np.multiply(ct_value, np.multiply(y_value, power)))
    return wrap_host(out, ShapedArray(out.shape, out.dtype, False))  # (`_const`: strong)


__all__ = [
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "cbrt",
    "cos",
    "cosh",
    "exp",
    "exp2",
    "expm1",
    "hypot",
    "log",
    "log1p",
    "logistic",
    "pow",
    "rsqrt",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
]
