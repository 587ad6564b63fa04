"""Complex special values (C99 Annex G, which NumPy and the Array API follow) for the complex
lowerings of transcendental primitives.

XLA's complex exp, log, sqrt, sinh, ... give `nan+nanj` (or a wrong part) at many infinite and
NaN inputs, and lose signed zeros (so `sqrt(-1-0j)` lands on the wrong side of the branch cut).
`annex_g_lowering` wraps XLA's op for complex operands: it applies the op to the input moved
into the first quadrant, restores the result through the function's symmetries
(`f(conj z) = conj f(z)`, and oddness or evenness), then selects the standard's value at the
special inputs. Real operands lower to the bare op, unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from mjcore.backend.lowering import LoweringContext, lower_fun
from mjcore.core import get_aval
from mjcore.lax.arithmetic import abs, mul, neg
from mjcore.lax.base import full, select_n
from mjcore.lax.bitcast import bitcast_convert_type
from mjcore.lax.bitwise import bitwise_and, bitwise_not, bitwise_or, bitwise_xor, is_finite
from mjcore.lax.comparison import eq, lt, ne
from mjcore.lax.complex import complex, imag, real

# A special-case rule: (x, y, u, v) -> (u, v), with x + yj the input moved to the first
# quadrant (only y >= +0 for functions that are neither odd nor even) and u + vj XLA's value.
Rule = Callable[[Any, Any, Any, Any], tuple[Any, Any]]
_INF, _NAN, _PI_2 = math.inf, math.nan, math.pi / 2


# --- elementwise helpers on real parts ------------------------------------------------------


def _const(like: Any, value: float) -> Any:
    aval = get_aval(like)
    return full(aval.shape, value, aval.dtype)


def _where(cond: Any, x: Any, y: Any) -> Any:
    return select_n(cond, y, x)


def _signbit(x: Any) -> Any:
    bits = bitcast_convert_type(x, np.dtype(f"int{8 * get_aval(x).dtype.itemsize}"))
    return lt(bits, full(get_aval(bits).shape, 0, get_aval(bits).dtype))


def _isnan(x: Any) -> Any:
    return ne(x, x)


def _is(x: Any, value: float) -> Any:
    return eq(x, _const(x, value))


def _nonfinite(x: Any) -> Any:
    return bitwise_not(is_finite(x))


def _set(cond: Any, u: Any, v: Any, new_u: float | None, new_v: float | None) -> tuple[Any, Any]:
    """(u, v) with the parts given as numbers replaced where `cond` holds."""
    if new_u is not None:
        u = _where(cond, _const(u, new_u), u)
    if new_v is not None:
        v = _where(cond, _const(v, new_v), v)
    return u, v


def _and(*conds: Any) -> Any:
    out = conds[0]
    for c in conds[1:]:
        out = bitwise_and(out, c)
    return out


# --- the lowering -----------------------------------------------------------------------------


def annex_g_lowering(hlo_op: str, symmetry: str, rule: Rule) -> Callable[..., Any]:
    """The lowering of an elementwise complex function `f`: XLA's `hlo_op`, corrected.

    Args:
        hlo_op: the StableHLO/CHLO op XLA evaluates.
        symmetry: "odd" (`f(-z) = -f(z)`), "even" (`f(-z) = f(z)`) or "conj" (only
            `f(conj z) = conj f(z)`, which all of them satisfy).
        rule: the special values on the reduced input (see `Rule`).
    """
    folds_real = symmetry in ("odd", "even")

    def reduce(z: Any) -> Any:
        x, y = real(z), imag(z)
        return complex(abs(x) if folds_real else x, abs(y))

    def restore(z: Any, w: Any) -> Any:
        x, y = real(z), imag(z)
        flip_x = _signbit(x)
        if folds_real:
            x = abs(x)
        u, v = rule(x, abs(y), real(w), imag(w))
        # f(conj z) = conj f(z); with a folded real part, f(-z) is +-f(conj(reduced z)).
        conj = bitwise_xor(_signbit(y), flip_x) if folds_real else _signbit(y)
        v = _where(conj, neg(v), v)
        if symmetry == "odd":
            u, v = _where(flip_x, neg(u), u), _where(flip_x, neg(v), v)
        return complex(u, v)

    def lowering(ctx: LoweringContext, z: Any) -> Any:
        b = ctx.builder
        aval_out = ctx.aval_out.strip_weak_type()
        if z.aval.dtype.kind != "c":
            return b.op(hlo_op, [z], aval_out)
        w = lower_fun(reduce)(LoweringContext(b, [z.aval], [aval_out]), z)
        raw = b.op(hlo_op, [w], aval_out)
        return lower_fun(restore)(LoweringContext(b, [z.aval, aval_out], [aval_out]), z, raw)

    return lowering


# --- the special values, one rule per function ----------------------------------------------
# Each names the inputs where XLA's value differs from C99 Annex G (checked against NumPy in
# tests/test_complex_special_values.py); elsewhere XLA's value stands.


def exp_rule(x: Any, y: Any, u: Any, v: Any) -> tuple[Any, Any]:
    bad_y = _nonfinite(y)
    u, v = _set(_and(_is(x, _INF), bad_y), u, v, _INF, _NAN)
    return _set(_and(_is(x, -_INF), bad_y), u, v, 0.0, 0.0)


def log_rule(x: Any, y: Any, u: Any, v: Any) -> tuple[Any, Any]:
    # |z| is infinite when either part is, even if the other is NaN (log and log1p alike).
    return _set(bitwise_or(_is(abs(x), _INF), _is(y, _INF)), u, v, _INF, None)


def sqrt_rule(x: Any, y: Any, u: Any, v: Any) -> tuple[Any, Any]:
    u, v = _set(_is(y, _INF), u, v, _INF, _INF)
    u, v = _set(_and(_is(x, _INF), _isnan(y)), u, v, _INF, _NAN)
    return _set(_and(_is(x, -_INF), _isnan(y)), u, v, _NAN, _INF)


def sinh_rule(cos: Callable[[Any], Any]) -> Rule:
    """sinh's special values, given `cos` (transcendental, which builds on this module)."""
    return lambda x, y, u, v: _sinh_rule(cos, x, y, u, v)


def _sinh_rule(cos: Callable[[Any], Any], x: Any, y: Any, u: Any, v: Any) -> tuple[Any, Any]:
    # sinh(+0 + iy) = +0 cos(y) + i sin(y): the zero real part carries the sign of cos(y).
    u = _where(_and(_is(x, 0.0), is_finite(y)), mul(x, cos(y)), u)
    bad_y = _nonfinite(y)
    u, v = _set(_and(_is(x, 0.0), bad_y), u, v, 0.0, _NAN)
    return _set(_and(_is(x, _INF), bad_y), u, v, _INF, _NAN)


def cosh_rule(sin: Callable[[Any], Any]) -> Rule:
    """cosh's special values, given `sin` (transcendental, which builds on this module)."""
    return lambda x, y, u, v: _cosh_rule(sin, x, y, u, v)


def _cosh_rule(sin: Callable[[Any], Any], x: Any, y: Any, u: Any, v: Any) -> tuple[Any, Any]:
    # cosh(+0 + iy) = cos(y) + i +0 sin(y): the zero imaginary part carries the sign of sin(y).
    v = _where(_and(_is(x, 0.0), is_finite(y)), mul(x, sin(y)), v)
    bad_y = _nonfinite(y)
    u, v = _set(_and(_is(x, 0.0), bad_y), u, v, _NAN, 0.0)
    return _set(_and(_is(x, _INF), bad_y), u, v, _INF, _NAN)


def tanh_rule(x: Any, y: Any, u: Any, v: Any) -> tuple[Any, Any]:
    return _set(_and(_is(x, 0.0), _nonfinite(y)), u, v, 0.0, _NAN)


def asinh_rule(x: Any, y: Any, u: Any, v: Any) -> tuple[Any, Any]:
    nan_x = _isnan(x)
    u, v = _set(_and(nan_x, _is(y, 0.0)), u, v, _NAN, 0.0)
    return _set(_and(nan_x, is_finite(y), ne(y, _const(y, 0.0))), u, v, _NAN, _NAN)


def _nan_imag_rule(zero_value: tuple[float, float]) -> Rule:
    """acos, acosh, asin: a NaN imaginary part gives `zero_value` at a zero real part and
    NaN + NaN j at other finite real parts."""

    def rule(x: Any, y: Any, u: Any, v: Any) -> tuple[Any, Any]:
        nan_y = _isnan(y)
        u, v = _set(_and(nan_y, _is(x, 0.0)), u, v, *zero_value)
        return _set(_and(nan_y, is_finite(x), ne(x, _const(x, 0.0))), u, v, _NAN, _NAN)

    return rule


acos_rule = _nan_imag_rule((_PI_2, _NAN))
acosh_rule = _nan_imag_rule((_NAN, _PI_2))
asin_rule = _nan_imag_rule((0.0, _NAN))


def atanh_rule(x: Any, y: Any, u: Any, v: Any) -> tuple[Any, Any]:
    nan_x, nan_y = _isnan(x), _isnan(y)
    u, v = _set(_and(nan_y, is_finite(x)), u, v, _NAN, _NAN)
    u, v = _set(_and(nan_y, bitwise_or(_is(x, 0.0), _is(x, _INF))), u, v, 0.0, _NAN)
    u, v = _set(nan_x, u, v, _NAN, _NAN)
    return _set(_and(nan_x, _is(y, _INF)), u, v, 0.0, _PI_2)


# --- trigonometric functions through their hyperbolic twins -----------------------------------


def rotated_lowering(hlo_op: str, hyperbolic: Callable[[Any], Any], times_i: bool):
    """The lowering of sin, cos, tan, asin or atan: XLA's `hlo_op` for real operands; for
    complex ones, C99's definitions `f(z) = -i g(i z)` (`times_i`: sin, tan, asin, atan)
    or `f(z) = g(i z)` (cos) through the hyperbolic primitive `g`, which carries the special
    values."""

    def complex_fun(z: Any) -> Any:
        w = hyperbolic(complex(neg(imag(z)), real(z)))
        return complex(imag(w), neg(real(w))) if times_i else w

    def lowering(ctx: LoweringContext, z: Any) -> Any:
        if z.aval.dtype.kind != "c":
            return ctx.builder.op(hlo_op, [z], ctx.aval_out.strip_weak_type())
        return lower_fun(complex_fun)(ctx, z)

    return lowering


# --- sign ----------------------------------------------------------------------------------


def sign_fixup(x: Any, raw: Any) -> Any:
    """NumPy's sign from XLA's: 0 (never -0) at zeros; for complex input NaN + NaN j at a
    NaN part, and at an infinite part the unit in its direction (NaN + NaN j when both are)."""
    if get_aval(x).dtype.kind != "c":
        return _where(_is(x, 0.0), _const(raw, 0.0), raw)
    a, b = real(x), imag(x)
    u, v = real(raw), imag(raw)
    u, v = _set(_and(_is(a, 0.0), _is(b, 0.0)), u, v, 0.0, 0.0)
    u, v = _set(bitwise_or(_isnan(a), _isnan(b)), u, v, _NAN, _NAN)
    # NumPy checks infinities before NaNs: sign(inf + nanj) is 1 + 0j.
    inf_a, inf_b = _is(abs(a), _INF), _is(abs(b), _INF)
    only_a, only_b = _and(inf_a, bitwise_not(inf_b)), _and(inf_b, bitwise_not(inf_a))
    one = _const(a, 1.0)
    u = _where(only_a, _where(_signbit(a), neg(one), one), _where(only_b, _const(a, 0.0), u))
    v = _where(only_b, _where(_signbit(b), neg(one), one), _where(only_a, _const(b, 0.0), v))
    return complex(*_set(_and(inf_a, inf_b), u, v, _NAN, _NAN))
