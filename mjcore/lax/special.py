"""Special functions (Autodidax Part 1's elementwise primitives, grown to JAX's `lax.special`).
Most lower to `chlo.*` ops, which XLA expands with the same approximations JAX uses, so results
match JAX's bit for bit. `bessel_i0e` (Cephes' Chebyshev series) and the incomplete gamma family
(XLA's series and continued fraction, as while loops) have no chlo op: they are JAX's own
algorithms, written in primitives, as the lowering of one primitive each."""

from __future__ import annotations

import enum
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from mjcore import dtypes
from mjcore.ad import Zero
from mjcore.backend.lowering import LoweringContext, lower_fun
from mjcore.core import Primitive, get_aval
from mjcore.lax.arithmetic import abs, add, div, mul, neg, sign, sub
from mjcore.lax.base import broadcast_to, convert_element_type, full, select_n
from mjcore.lax.bitwise import bitwise_and, bitwise_not, bitwise_or
from mjcore.lax.comparison import eq, ge, gt, le, lt, ne
from mjcore.lax.families import (
    broadcast_shapes,
    check_same_dtypes,
    elementwise,
    promote_python_scalars,
)
from mjcore.lax.reductions import reduce_or
from mjcore.lax.transcendental import exp, log, sqrt

ArrayLike = Any


def _const(like: Any, value: float) -> Any:
    """A scalar `value` of `like`'s dtype (broadcasts against `like` in elementwise ops)."""
    return full((), value, get_aval(like).dtype)


# --- erf_inv --------------------------------------------------------------------------------

erf_inv_p = Primitive("erf_inv")


def erf_inv(x: ArrayLike) -> Any:
    """Elementwise inverse error function on [-1, 1] (`scipy.special.erfinv`)."""
    return erf_inv_p.bind1(x)


elementwise(erf_inv_p, "chlo.erf_inv", "f")


@erf_inv_p.def_jvp
def _erf_inv_jvp(primals, tangents):
    # d/dx erfinv(x) = sqrt(pi) / 2 * exp(erfinv(x) ** 2)
    (x,), (x_dot,) = primals, tangents
    y = erf_inv(x)
    scale = full((), np.sqrt(np.pi) / 2, get_aval(y).dtype)
    return y, mul(x_dot, mul(scale, exp(mul(y, y))))


# --- erf ------------------------------------------------------------------------------------

erf_p = Primitive("erf")


def erf(x: ArrayLike) -> Any:
    """Elementwise error function `2/sqrt(pi) * integral(exp(-t**2), t=0..x)`
    (`scipy.special.erf`).

    Raises:
      TypeError: for a non-floating dtype.
    """
    return erf_p.bind1(x)


elementwise(erf_p, "chlo.erf", "f")


@erf_p.def_jvp
def _erf_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return erf(x), mul(_const(x, 2 / np.sqrt(np.pi)), mul(x_dot, exp(neg(mul(x, x)))))


# --- erfc -----------------------------------------------------------------------------------

erfc_p = Primitive("erfc")


def erfc(x: ArrayLike) -> Any:
    """Elementwise complementary error function `1 - erf(x)`, accurate where erf(x) is near 1
    (`scipy.special.erfc`).

    Raises:
      TypeError: for a non-floating dtype.
    """
    return erfc_p.bind1(x)


elementwise(erfc_p, "chlo.erfc", "f")


@erfc_p.def_jvp
def _erfc_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return erfc(x), mul(_const(x, -2 / np.sqrt(np.pi)), mul(x_dot, exp(neg(mul(x, x)))))


# --- lgamma ---------------------------------------------------------------------------------

lgamma_p = Primitive("lgamma")


def lgamma(x: ArrayLike) -> Any:
    """Elementwise `log(abs(gamma(x)))` (`scipy.special.gammaln`).

    Raises:
      TypeError: for a non-floating dtype.
    """
    return lgamma_p.bind1(x)


elementwise(lgamma_p, "chlo.lgamma", "f")


@lgamma_p.def_jvp
def _lgamma_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return lgamma(x), mul(x_dot, digamma(x))


# --- digamma --------------------------------------------------------------------------------

digamma_p = Primitive("digamma")


def digamma(x: ArrayLike) -> Any:
    """Elementwise digamma function, the derivative of `lgamma` (`scipy.special.digamma`).

    Raises:
      TypeError: for a non-floating dtype.
    """
    return digamma_p.bind1(x)


elementwise(digamma_p, "chlo.digamma", "f")


@digamma_p.def_jvp
def _digamma_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return digamma(x), mul(x_dot, polygamma(_const(x, 1), x))


# --- polygamma ------------------------------------------------------------------------------

polygamma_p = Primitive("polygamma")


def polygamma(m: ArrayLike, x: ArrayLike) -> Any:
    """Elementwise polygamma function: the `m`-th derivative of `digamma` at `x`
    (`scipy.special.polygamma`).

    Args:
      m: the order, a floating array of whole numbers >= 0 (NaN elsewhere), of `x`'s dtype.
      x: the point.

    Raises:
      TypeError: for non-floating or mismatched dtypes.
      ValueError: (under differentiation) for a nonzero tangent of `m`, as in JAX.
    """
    return polygamma_p.bind1(*promote_python_scalars(m, x))


elementwise(polygamma_p, "chlo.polygamma", "f")


@polygamma_p.def_jvp(symbolic_zeros=True)
def _polygamma_jvp(primals, tangents):
    (m, x), (m_dot, x_dot) = primals, tangents
    if type(m_dot) is not Zero:
        raise ValueError("polygamma gradient with respect to m is not supported")
    out = polygamma(m, x)
    return out, mul(x_dot, polygamma(add(m, _const(m, 1)), x))


# --- zeta -----------------------------------------------------------------------------------

zeta_p = Primitive("zeta")


def zeta(x: ArrayLike, q: ArrayLike) -> Any:
    """Elementwise Hurwitz zeta function `sum((n + q) ** -x for n >= 0)` (`scipy.special.zeta`).

    Differentiable in `q`, where `d/dq zeta(x, q) = -x * zeta(x + 1, q)`.

    Raises:
      TypeError: for non-floating or mismatched dtypes.
      ValueError: (under differentiation) for a nonzero tangent of `x`.
    """
    return zeta_p.bind1(*promote_python_scalars(x, q))


elementwise(zeta_p, "chlo.zeta", "f")


@zeta_p.def_jvp(symbolic_zeros=True)
def _zeta_jvp(primals, tangents):
    # NB: JAX's lax.zeta has no jvp rule (jax.scipy.special.zeta differentiates a truncated
    # series); in q the derivative has this closed form, in x it has none in chlo's terms.
    (x, q), (x_dot, q_dot) = primals, tangents
    if type(x_dot) is not Zero:
        raise ValueError("zeta gradient with respect to x is not supported")
    out = zeta(x, q)
    return out, mul(q_dot, neg(mul(x, zeta(add(x, _const(x, 1)), q))))


# --- bessel_i0e -----------------------------------------------------------------------------

bessel_i0e_p = Primitive("bessel_i0e")


def bessel_i0e(x: ArrayLike) -> Any:
    """Elementwise exponentially scaled modified Bessel function of order 0,
    `exp(-abs(x)) * i0(x)` (`scipy.special.i0e`).

    Raises:
      TypeError: for a non-floating dtype.
    """
    return bessel_i0e_p.bind1(x)


# Cephes' Chebyshev coefficients for i0e on [0, 8] (A) and (8, inf) (B), as JAX uses them;
# float32 takes the trailing terms of each series.
I0E_CHEBYSHEV_SMALL = (
    -4.41534164647933937950e-18,
    3.33079451882223809783e-17,
    -2.43127984654795469359e-16,
    1.71539128555513303061e-15,
    -1.16853328779934516808e-14,
    7.67618549860493561688e-14,
    -4.85644678311192946090e-13,
    2.95505266312963983461e-12,
    -1.72682629144155570723e-11,
    9.67580903537323691224e-11,
    -5.18979560163526290666e-10,
    2.65982372468238665035e-9,
    -1.30002500998624804212e-8,
    6.04699502254191894932e-8,
    -2.67079385394061173391e-7,
    1.11738753912010371815e-6,
    -4.41673835845875056359e-6,
    1.64484480707288970893e-5,
    -5.75419501008210370398e-5,
    1.88502885095841655729e-4,
    -5.76375574538582365885e-4,
    1.63947561694133579842e-3,
    -4.32430999505057594430e-3,
    1.05464603945949983183e-2,
    -2.37374148058994688156e-2,
    4.93052842396707084878e-2,
    -9.49010970480476444210e-2,
    1.71620901522208775349e-1,
    -3.04682672343198398683e-1,
    6.76795274409476084995e-1,
)
I0E_CHEBYSHEV_LARGE = (
    -7.23318048787475395456e-18,
    -4.83050448594418207126e-18,
    4.46562142029675999901e-17,
    3.46122286769746109310e-17,
    -2.82762398051658348494e-16,
    -3.42548561967721913462e-16,
    1.77256013305652638360e-15,
    3.81168066935262242075e-15,
    -9.55484669882830764870e-15,
    -4.15056934728722208663e-14,
    1.54008621752140982691e-14,
    3.85277838274214270114e-13,
    7.18012445138366623367e-13,
    -1.79417853150680611778e-12,
    -1.32158118404477131188e-11,
    -3.14991652796324136454e-11,
    1.18891471078464383424e-11,
    4.94060238822496958910e-10,
    3.39623202570838634515e-9,
    2.26666899049817806459e-8,
    2.04891858946906374183e-7,
    2.89137052083475648297e-6,
    6.88975834691682398426e-5,
    3.36911647825569408990e-3,
    8.04490411014108831608e-1,
)


def chebyshev_series(x: Any, coefficients: tuple[float, ...]) -> Any:
    """Clenshaw's recurrence for a Chebyshev series, in Cephes' `chbevl` form (also
    `mjnp.i0`'s, so that its values are NumPy's bit for bit)."""
    b0 = b1 = b2 = full(get_aval(x).shape, 0, get_aval(x).dtype)
    for c in coefficients:
        b2, b1 = b1, b0
        b0 = add(sub(mul(x, b1), b2), _const(x, c))
    return mul(_const(x, 0.5), sub(b0, b2))


def _bessel_i0e_kernel(x: Any) -> Any:
    dtype = get_aval(x).dtype
    a: tuple[float, ...]
    b: tuple[float, ...]
    if dtype == np.float64:
        a, b = I0E_CHEBYSHEV_SMALL, I0E_CHEBYSHEV_LARGE
    else:
        # Cephes' float32 series; float16 is computed in float32, as in JAX.
        a, b = I0E_CHEBYSHEV_SMALL[-18:], I0E_CHEBYSHEV_LARGE[-7:]
        x = convert_element_type(x, np.float32)
    x = abs(x)
    small = chebyshev_series(sub(mul(_const(x, 0.5), x), _const(x, 2.0)), a)
    large = div(chebyshev_series(sub(div(_const(x, 32.0), x), _const(x, 2.0)), b), sqrt(x))
    out = select_n(le(x, _const(x, 8.0)), large, small)
    return convert_element_type(out, dtype)


elementwise(bessel_i0e_p, lower_fun(_bessel_i0e_kernel), "f")


@bessel_i0e_p.def_jvp
def _bessel_i0e_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    y = bessel_i0e(x)
    return y, mul(x_dot, sub(bessel_i1e(x), mul(sign(x), y)))


# --- bessel_i1e -----------------------------------------------------------------------------

bessel_i1e_p = Primitive("bessel_i1e")


def bessel_i1e(x: ArrayLike) -> Any:
    """Elementwise exponentially scaled modified Bessel function of order 1,
    `exp(-abs(x)) * i1(x)` (`scipy.special.i1e`).

    Raises:
      TypeError: for a non-floating dtype.
    """
    return bessel_i1e_p.bind1(x)


elementwise(bessel_i1e_p, "chlo.bessel_i1e", "f")


@bessel_i1e_p.def_jvp
def _bessel_i1e_jvp(primals, tangents):
    # i1e'(x) = i0e(x) - i1e(x) * (sign(x) + 1/x), with its limit 1/2 where |x| <= eps.
    (x,), (x_dot,) = primals, tangents
    y = bessel_i1e(x)
    aval = get_aval(x)
    eps = full(aval.shape, dtypes.finfo(aval.dtype).eps, aval.dtype)
    not_tiny = gt(abs(x), eps)
    safe_x = select_n(not_tiny, eps, x)
    dy_dx = sub(bessel_i0e(safe_x), mul(y, add(sign(safe_x), div(_const(x, 1), safe_x))))
    dy_dx = select_n(not_tiny, full(aval.shape, 0.5, aval.dtype), dy_dx)
    return y, mul(x_dot, dy_dx)


# --- the incomplete gamma family ------------------------------------------------------------
# XLA has no op for these: as in JAX (which ports XLA's client library math.cc), a power series
# below the diagonal and a continued fraction above it, each a while loop over all elements
# that runs until every enabled element has converged. float16 is computed in float32.


class _IgammaMode(enum.Enum):
    VALUE = 1
    DERIVATIVE = 2  # d/da igamma
    SAMPLE_DERIVATIVE = 3  # d/da of the Gamma(a, 1) sample x (random_gamma_grad)


def _full_like(x: Any, value: float) -> Any:
    aval = get_aval(x)
    return full(aval.shape, value, aval.dtype)


def _where(cond: Any, x: Any, y: Any) -> Any:
    return select_n(cond, y, x)


def _any(pred: Any) -> Any:
    return reduce_or(pred, tuple(range(get_aval(pred).ndim)))


def _or(*preds: Any) -> Any:
    out = preds[0]
    for p in preds[1:]:
        out = bitwise_or(out, p)
    return out


def _isnan(x: Any) -> Any:
    return ne(x, x)


def _igamma_series(ax: Any, x: Any, a: Any, enabled: Any, mode: _IgammaMode) -> Any:
    from mjcore.control_flow import while_loop

    eps = _const(x, dtypes.finfo(get_aval(x).dtype).eps)

    def body(vals: tuple[Any, ...]) -> tuple[Any, ...]:
        enabled, r, c, ans, x, dc_da, dans_da = vals
        r = add(r, _const(r, 1))
        dc_da = sub(mul(dc_da, div(x, r)), div(mul(c, x), mul(r, r)))
        dans_da = add(dans_da, dc_da)
        c = mul(c, div(x, r))
        ans = add(ans, c)
        if mode is _IgammaMode.VALUE:
            going = bitwise_and(enabled, gt(div(c, ans), eps))
        else:
            going = bitwise_and(enabled, gt(abs(div(dc_da, dans_da)), eps))
        new = (r, c, ans, x, dc_da, dans_da)
        return (going, *(_where(enabled, n, o) for n, o in zip(new, vals[1:], strict=True)))

    one, zero = _full_like(a, 1), _full_like(a, 0)
    vals = while_loop(lambda v: _any(v[0]), body, (enabled, a, one, one, x, zero, zero))
    ans, dans_da = vals[3], vals[6]
    if mode is _IgammaMode.VALUE:
        return div(mul(ans, ax), a)
    dlogax_da = sub(log(x), digamma(add(a, _const(a, 1))))
    if mode is _IgammaMode.DERIVATIVE:
        return div(mul(ax, add(mul(ans, dlogax_da), dans_da)), a)
    return div(mul(neg(add(dans_da, mul(ans, dlogax_da))), x), a)


def _igammac_continued_fraction(ax: Any, x: Any, a: Any, enabled: Any, mode: _IgammaMode) -> Any:
    from mjcore.control_flow import while_loop

    eps = dtypes.finfo(get_aval(x).dtype).eps

    def cond(vals: tuple[Any, ...]) -> Any:
        c = vals[5]
        return bitwise_and(lt(c, _const(c, 2000)), _any(vals[0]))

    def body(vals: tuple[Any, ...]) -> tuple[Any, ...]:
        (enabled, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2) = vals[:10]
        (dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da) = vals[10:]
        c = add(c, _const(c, 1))
        y = add(y, _const(y, 1))
        z = add(z, _const(z, 2))
        yc = mul(y, c)
        pk = sub(mul(pkm1, z), mul(pkm2, yc))
        qk = sub(mul(qkm1, z), mul(qkm2, yc))
        qk_is_nonzero = ne(qk, _const(qk, 0))
        r = div(pk, qk)
        t = _where(qk_is_nonzero, abs(div(sub(ans, r), r)), _full_like(r, 1))
        ans = _where(qk_is_nonzero, r, ans)
        dpk_da = add(sub(sub(mul(dpkm1_da, z), pkm1), mul(dpkm2_da, yc)), mul(pkm2, c))
        dqk_da = add(sub(sub(mul(dqkm1_da, z), qkm1), mul(dqkm2_da, yc)), mul(qkm2, c))
        dans_da_new = _where(qk_is_nonzero, div(sub(dpk_da, mul(ans, dqk_da)), qk), dans_da)
        grad_change = _where(qk_is_nonzero, abs(sub(dans_da_new, dans_da)), _full_like(dans_da, 1))
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = dpkm1_da, dqkm1_da, dpk_da, dqk_da
        # Keep the recurrence's numerators in range (its ratios are all that matter).
        rescale = gt(abs(pk), div(_const(pk, 1), _const(pk, eps)))
        rescaled = [
            _where(rescale, mul(v, _const(v, eps)), v)
            for v in (pkm2, pkm1, qkm2, qkm1, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da)
        ]
        pkm2, pkm1, qkm2, qkm1, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = rescaled
        if mode is _IgammaMode.VALUE:
            going = bitwise_and(enabled, gt(t, _const(t, eps)))
        else:
            going = bitwise_and(enabled, gt(grad_change, _const(grad_change, eps)))
        new = (ans, t, y, z)
        new_tail = (pkm1, qkm1, pkm2, qkm2, dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da, dans_da_new)
        return (
            going,
            *(_where(enabled, n, o) for n, o in zip(new, vals[1:5], strict=True)),
            c,
            *(_where(enabled, n, o) for n, o in zip(new_tail, vals[6:], strict=True)),
        )

    y = sub(_const(a, 1), a)
    z = add(add(x, y), _const(x, 1))
    pkm1 = add(x, _const(x, 1))
    qkm1 = mul(z, x)
    ans = div(pkm1, qkm1)
    zero = _full_like(x, 0)
    dqkm1_da = neg(x)
    dans_da = div(sub(zero, mul(ans, dqkm1_da)), qkm1)
    init: tuple[Any, ...]
    init = (enabled, ans, _full_like(x, 1), y, z, full((), 0, get_aval(x).dtype), pkm1, qkm1)
    init += (_full_like(x, 1), x, zero, zero, zero, dqkm1_da, dans_da)
    vals = while_loop(cond, body, init)
    ans = vals[1]
    if mode is _IgammaMode.VALUE:
        return mul(ans, ax)
    dans_da = vals[14]
    dlogax_da = sub(log(x), digamma(a))
    if mode is _IgammaMode.DERIVATIVE:
        return mul(ax, add(mul(ans, dlogax_da), dans_da))
    return neg(mul(add(dans_da, mul(ans, dlogax_da)), x))


def _log_ax(a: Any, x: Any) -> tuple[Any, Any]:
    """`exp(a log x - x - lgamma(a))`, and where its log underflows the dtype."""
    log_ax = sub(sub(mul(a, log(x)), x), lgamma(a))
    underflow = lt(log_ax, neg(log(_const(a, dtypes.finfo(get_aval(a).dtype).max))))
    return exp(log_ax), underflow


def _igamma_kernel(a: Any, x: Any) -> Any:
    is_nan = bitwise_or(_isnan(a), _isnan(x))
    x_is_infinity = eq(x, _const(x, np.inf))
    a_is_zero, x_is_zero = eq(a, _const(a, 0)), eq(x, _const(x, 0))
    domain_error = _or(
        lt(x, _const(x, 0)), lt(a, _const(a, 0)), bitwise_and(a_is_zero, x_is_zero), is_nan
    )
    use_igammac = bitwise_and(ge(x, _const(x, 1)), gt(x, a))
    ax, underflow = _log_ax(a, x)
    enabled = bitwise_not(_or(x_is_zero, domain_error, underflow, x_is_infinity))
    mode = _IgammaMode.VALUE
    cf = _igammac_continued_fraction(ax, x, a, bitwise_and(enabled, use_igammac), mode)
    series = _igamma_series(ax, x, a, bitwise_and(enabled, bitwise_not(use_igammac)), mode)
    out = _where(use_igammac, sub(_const(a, 1), cf), series)
    out = _where(x_is_zero, _full_like(a, 0), out)
    out = _where(x_is_infinity, _full_like(a, 1), out)
    return _where(domain_error, _full_like(a, np.nan), out)


def _igammac_kernel(a: Any, x: Any) -> Any:
    is_nan = bitwise_or(_isnan(a), _isnan(x))
    a_is_zero, x_is_zero = eq(a, _const(a, 0)), eq(x, _const(x, 0))
    x_is_infinity = eq(x, _const(x, np.inf))
    domain_error = _or(
        lt(x, _const(x, 0)), lt(a, _const(a, 0)), bitwise_and(a_is_zero, x_is_zero), is_nan
    )
    use_igamma = bitwise_or(lt(x, _const(x, 1)), lt(x, a))
    ax, underflow = _log_ax(a, x)
    enabled = bitwise_not(_or(domain_error, underflow, x_is_infinity, a_is_zero))
    mode = _IgammaMode.VALUE
    series = _igamma_series(ax, x, a, bitwise_and(enabled, use_igamma), mode)
    cf = _igammac_continued_fraction(ax, x, a, bitwise_and(enabled, bitwise_not(use_igamma)), mode)
    out = _where(use_igamma, sub(_const(a, 1), series), cf)
    out = _where(bitwise_or(x_is_infinity, a_is_zero), _full_like(out, 0), out)
    return _where(domain_error, _full_like(a, np.nan), out)


def _igamma_derivative_kernel(a: Any, x: Any, mode: _IgammaMode) -> Any:
    """d/da igamma(a, x) (DERIVATIVE) or d/da of a Gamma(a, 1) sample x (SAMPLE_DERIVATIVE)."""
    is_nan = bitwise_or(_isnan(a), _isnan(x))
    x_is_zero = eq(x, _const(x, 0))
    domain_error = bitwise_or(lt(x, _const(x, 0)), le(a, _const(a, 0)))
    use_igammac = bitwise_and(gt(x, _const(x, 1)), gt(x, a))
    ax, underflow = _log_ax(a, x)
    enabled = bitwise_not(_or(x_is_zero, domain_error, underflow, is_nan))
    cf = _igammac_continued_fraction(ax, x, a, bitwise_and(enabled, use_igammac), mode)
    series = _igamma_series(ax, x, a, bitwise_and(enabled, bitwise_not(use_igammac)), mode)
    out = _where(use_igammac, neg(cf), series)
    out = _where(x_is_zero, _full_like(out, 0), out)
    return _where(bitwise_or(domain_error, is_nan), _full_like(a, np.nan), out)


def _in_float32(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """`kernel` computed in float32 for float16 and bfloat16 operands (its constants need the
    range, and JAX computes both in float32)."""

    def fun(*args: Any) -> Any:
        dtype = get_aval(args[0]).dtype
        if dtype != np.float16 and dtype != dtypes.bfloat16:
            return kernel(*args)
        out = kernel(*(convert_element_type(x, np.float32) for x in args))
        return convert_element_type(out, dtype)

    return fun


def _binary_lowering(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """An elementwise lowering from a function of primitives, on operands already broadcast."""
    fun = lower_fun(_in_float32(kernel))

    def lowering(ctx: LoweringContext, a: Any, x: Any) -> Any:
        return fun(LoweringContext(ctx.builder, [a.aval, x.aval], ctx.avals_out), a, x)

    return lowering


def _igamma_dx(a: Any, x: Any) -> Any:
    """d/dx igamma(a, x): the Gamma(a, 1) density `exp(-x + (a - 1) log x - lgamma(a))`."""
    return exp(sub(add(neg(x), mul(sub(a, _const(a, 1)), log(x))), lgamma(a)))


# --- igamma ---------------------------------------------------------------------------------

igamma_p = Primitive("igamma")


def igamma(a: ArrayLike, x: ArrayLike) -> Any:
    """Elementwise regularized lower incomplete gamma function `P(a, x)`
    (`scipy.special.gammainc`).

    NB: as in JAX, the power series runs until every element converges, without a cap on its
    iterations; at huge `a` close to `x` (where `a + 1 == a`, e.g. both 1e300) it never ends.
    So do `igammac`, `igamma_grad_a` and `random_gamma_grad`.

    Raises:
      TypeError: for non-floating or mismatched dtypes.
    """
    return igamma_p.bind1(*promote_python_scalars(a, x))


elementwise(igamma_p, _binary_lowering(_igamma_kernel), "f")


@igamma_p.def_jvp(symbolic_zeros=True)
def _igamma_jvp(primals, tangents):
    (a, x), (a_dot, x_dot) = primals, tangents
    terms = []
    if type(a_dot) is not Zero:
        terms.append(mul(a_dot, igamma_grad_a(a, x)))
    if type(x_dot) is not Zero:
        terms.append(mul(x_dot, _igamma_dx(a, x)))
    return igamma(a, x), terms[0] if len(terms) == 1 else add(terms[0], terms[1])


# --- igammac --------------------------------------------------------------------------------

igammac_p = Primitive("igammac")


def igammac(a: ArrayLike, x: ArrayLike) -> Any:
    """Elementwise regularized upper incomplete gamma function `Q(a, x) = 1 - P(a, x)`
    (`scipy.special.gammaincc`).

    Raises:
      TypeError: for non-floating or mismatched dtypes.
    """
    return igammac_p.bind1(*promote_python_scalars(a, x))


elementwise(igammac_p, _binary_lowering(_igammac_kernel), "f")


@igammac_p.def_jvp(symbolic_zeros=True)
def _igammac_jvp(primals, tangents):
    (a, x), (a_dot, x_dot) = primals, tangents
    terms = []
    if type(a_dot) is not Zero:
        terms.append(mul(a_dot, neg(igamma_grad_a(a, x))))
    if type(x_dot) is not Zero:
        terms.append(mul(x_dot, neg(_igamma_dx(a, x))))
    return igammac(a, x), terms[0] if len(terms) == 1 else add(terms[0], terms[1])


# --- igamma_grad_a --------------------------------------------------------------------------

igamma_grad_a_p = Primitive("igamma_grad_a")


def igamma_grad_a(a: ArrayLike, x: ArrayLike) -> Any:
    """Elementwise derivative of `igamma(a, x)` with respect to `a`.

    Raises:
      TypeError: for non-floating or mismatched dtypes.
      ValueError: (under differentiation) for a nonzero tangent of `a`.
    """
    return igamma_grad_a_p.bind1(*promote_python_scalars(a, x))


elementwise(
    igamma_grad_a_p,
    _binary_lowering(partial(_igamma_derivative_kernel, mode=_IgammaMode.DERIVATIVE)),
    "f",
)


@igamma_grad_a_p.def_jvp(symbolic_zeros=True)
def _igamma_grad_a_jvp(primals, tangents):
    # NB: JAX gives igamma_grad_a no derivative at all. In x it is d/da of igamma's density,
    # density * (log x - digamma(a)); in a there is no closed form.
    (a, x), (a_dot, x_dot) = primals, tangents
    if type(a_dot) is not Zero:
        raise ValueError("igamma_grad_a gradient with respect to a is not supported")
    out = igamma_grad_a(a, x)
    return out, mul(x_dot, mul(_igamma_dx(a, x), sub(log(x), digamma(a))))


# --- random_gamma_grad (a function, not a primitive, as in JAX) -----------------------------


def random_gamma_grad(a: ArrayLike, x: ArrayLike) -> Any:
    """Elementwise derivative with respect to `a` of a sample `x` from Gamma(a, 1), holding its
    CDF `igamma(a, x)` fixed: `-igamma_grad_a(a, x) / density(a, x)`, by JAX's series.

    Operands broadcast against each other. Differentiable in forward mode only (it is a while
    loop, as in JAX).

    Raises:
      TypeError: for non-floating or mismatched dtypes.
    """
    a, x = promote_python_scalars(a, x)
    avals = [get_aval(a), get_aval(x)]
    for aval in avals:
        if dtypes.kind(aval.dtype) != "f":
            raise TypeError(
                f"random_gamma_grad does not accept dtype {aval.dtype.name}; it needs floating."
            )
    check_same_dtypes("random_gamma_grad", avals)
    shape = broadcast_shapes("random_gamma_grad", *(aval.shape for aval in avals))
    a, x = broadcast_to(a, shape), broadcast_to(x, shape)
    kernel = partial(_igamma_derivative_kernel, mode=_IgammaMode.SAMPLE_DERIVATIVE)
    return _in_float32(kernel)(a, x)


__all__ = [
    "bessel_i0e",
    "bessel_i1e",
    "digamma",
    "erf",
    "erf_inv",
    "erfc",
    "igamma",
    "igamma_grad_a",
    "igammac",
    "lgamma",
    "polygamma",
    "random_gamma_grad",
    "zeta",
]
