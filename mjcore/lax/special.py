"""Special functions (Autodidax Part 1's elementwise primitives, grown to JAX's `lax.special`).
Most lower to `chlo.*` ops, which XLA expands with the same approximations JAX uses, so results
match JAX's bit for bit; `bessel_i0e` is JAX's Cephes Chebyshev series written in primitives."""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore.ad import Zero
from mjcore.backend.lowering import lower_fun
from mjcore.core import Primitive, get_aval
from mjcore.lax.arithmetic import abs, add, div, mul, neg, sign, sub
from mjcore.lax.base import convert_element_type, full, select_n
from mjcore.lax.comparison import gt, le
from mjcore.lax.families import elementwise, promote_python_scalars
from mjcore.lax.transcendental import exp, sqrt

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
_I0E_A = (
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
_I0E_B = (
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


def _chebyshev(x: Any, coefficients: tuple[float, ...]) -> Any:
    """Clenshaw's recurrence for a Chebyshev series, in Cephes' `chbevl` form."""
    b0 = b1 = b2 = full(get_aval(x).shape, 0, get_aval(x).dtype)
    for c in coefficients:
        b2, b1 = b1, b0
        b0 = add(sub(mul(x, b1), b2), _const(x, c))
    return mul(_const(x, 0.5), sub(b0, b2))


def _bessel_i0e_kernel(x: Any) -> Any:
    dtype = get_aval(x).dtype
    if dtype == np.float64:
        a, b = _I0E_A, _I0E_B
    else:
        # Cephes' float32 series; float16 is computed in float32, as in JAX.
        a, b = _I0E_A[-18:], _I0E_B[-7:]
        x = convert_element_type(x, np.float32)
    x = abs(x)
    small = _chebyshev(sub(mul(_const(x, 0.5), x), _const(x, 2.0)), a)
    large = div(_chebyshev(sub(div(_const(x, 32.0), x), _const(x, 2.0)), b), sqrt(x))
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
    eps = full(aval.shape, np.finfo(aval.dtype).eps, aval.dtype)
    not_tiny = gt(abs(x), eps)
    safe_x = select_n(not_tiny, eps, x)
    dy_dx = sub(bessel_i0e(safe_x), mul(y, add(sign(safe_x), div(_const(x, 1), safe_x))))
    dy_dx = select_n(not_tiny, full(aval.shape, 0.5, aval.dtype), dy_dx)
    return y, mul(x_dot, dy_dx)


__all__ = [
    "bessel_i0e",
    "bessel_i1e",
    "digamma",
    "erf",
    "erf_inv",
    "erfc",
    "lgamma",
    "polygamma",
    "zeta",
]
