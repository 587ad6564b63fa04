"""Special functions (Autodidax Part 1's elementwise primitives, grown to JAX's `lax.special`).
Most lower to `chlo.*` ops, which XLA expands with the same approximations JAX uses, so results
match JAX's bit for bit; `bessel_i0e` is JAX's Cephes Chebyshev series written in primitives."""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore.ad import Zero
from mjcore.core import Primitive, get_aval
from mjcore.lax.arithmetic import add, mul, neg
from mjcore.lax.base import full
from mjcore.lax.families import elementwise, promote_python_scalars
from mjcore.lax.transcendental import exp

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


__all__ = ["digamma", "erf", "erf_inv", "erfc", "lgamma", "polygamma", "zeta"]
