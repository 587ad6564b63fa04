"""Arithmetic primitives: add, sub, mul, div, rem, neg, sign, abs, max, min, floor, ceil, round,
integer_pow. Elementwise with NumPy broadcasting of shapes; operands share one dtype."""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore import dtypes
from mjcore.ad import CONSTANT, LINEAR, MULTILINEAR, UndefinedPrimal, Zero, fused_rule_body
from mjcore.array import Array, wrap_host
from mjcore.backend.lowering import LoweringContext, lower_fun
from mjcore.batching import NOT_MAPPED, move_bdim
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.dispatch import scalar_array
from mjcore.fp_errors import FP_QUIET, fp_state
from mjcore.lax import comparison, host, host_vjp
from mjcore.lax.base import (
    add_any,
    broadcast_in_dim,
    broadcast_to,
    convert_element_type,
    full,
    select_n,
    select_n_p,
    unbroadcast,
    zeros_like,
)
from mjcore.lax.bitcast import bitcast_convert_type
from mjcore.lax.bitwise import bitwise_and, shift_right_arithmetic, shift_right_logical
from mjcore.lax.comparison import eq, gt, lt
from mjcore.lax.families import (
    check_same_dtypes,
    elementwise,
    promote_python_scalars,
    scalar_constant,
)

ArrayLike = Any

_NUMERIC = "iufc"
_SIGNED_NUMERIC = "ifc"
_REAL = "iuf"
_FLOAT = "f"


def _tangent_to_shape(t: Any, shape: tuple[int, ...]) -> Any:
    """A tangent broadcast to the output shape (symbolic zeros pass through)."""
    return t if type(t) is Zero else broadcast_to(t, shape)


# --- add ------------------------------------------------------------------------------------

add_p = Primitive("add")


def add(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise `x + y`."""
    return add_p.bind1(*promote_python_scalars(x, y))


elementwise(add_p, "stablehlo.add", "biufc")
add_p.def_host(host.ufunc(np.add))


@add_p.def_jvp(symbolic_zeros=True)
def _add_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    out = add(x, y)
    shape = get_aval(out).shape
    if type(x_dot) is Zero:
        return out, _tangent_to_shape(y_dot, shape)
    if type(y_dot) is Zero:
        return out, _tangent_to_shape(x_dot, shape)
    return out, add(x_dot, y_dot)


add_p.def_eager_vjp(LINEAR)


# --- sub ------------------------------------------------------------------------------------

sub_p = Primitive("sub")


def sub(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise `x - y`."""
    return sub_p.bind1(*promote_python_scalars(x, y))


elementwise(sub_p, "stablehlo.subtract", _NUMERIC)
sub_p.def_host(host.ufunc(np.subtract))


@sub_p.def_jvp(symbolic_zeros=True)
def _sub_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    out = sub(x, y)
    shape = get_aval(out).shape
    if type(y_dot) is Zero:
        return out, _tangent_to_shape(x_dot, shape)
    if type(x_dot) is Zero:
        return out, _tangent_to_shape(neg(y_dot), shape)
    return out, sub(x_dot, y_dot)


sub_p.def_eager_vjp(LINEAR)


# --- mul ------------------------------------------------------------------------------------

mul_p = Primitive("mul")


def mul(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise `x * y` (logical and for bool)."""
    return mul_p.bind1(*promote_python_scalars(x, y))


def _mul_lowering(ctx: LoweringContext, x, y):
    if ctx.aval_out.dtype.kind == "b":
        return ctx.builder.op("stablehlo.and", [x, y], ctx.aval_out.strip_weak_type())
    return ctx.builder.op("stablehlo.multiply", [x, y], ctx.aval_out.strip_weak_type())


elementwise(mul_p, _mul_lowering, "biufc")
mul_p.def_host(host.ufunc(np.multiply))


@mul_p.def_jvp(symbolic_zeros=True)
def _mul_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    out = mul(x, y)
    shape = get_aval(out).shape
    terms = []
    if type(x_dot) is not Zero:
        terms.append(mul(x_dot, y))
    if type(y_dot) is not Zero:
        terms.append(mul(x, y_dot))
    t = terms[0] if len(terms) == 1 else add(terms[0], terms[1])
    return out, _tangent_to_shape(t, shape)


mul_p.def_eager_vjp(MULTILINEAR)


# --- div ------------------------------------------------------------------------------------

div_p = Primitive("div")


def div(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise `x / y`; integer division rounds toward zero (C semantics)."""
    return div_p.bind1(*promote_python_scalars(x, y))


elementwise(div_p, "stablehlo.divide", _NUMERIC)
div_p.def_host(host.div)


@div_p.def_jvp(symbolic_zeros=True)
def _div_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    out = div(x, y)
    shape = get_aval(out).shape
    t = None
    if type(x_dot) is not Zero:
        t = div(x_dot, y)
    if type(y_dot) is not Zero:
        t_y = neg(mul(y_dot, div(out, y)))
        t = t_y if t is None else add(t, t_y)
    return out, _tangent_to_shape(t, shape)


@div_p.def_eager_vjp
def _div_vjp(ct, out, primals, linear):
    # The transposes of `_div_jvp`'s two terms.
    (_, y), (lx, ly) = primals, linear
    return [
        None if lx is None else unbroadcast(divide_cotangent(ct, y), lx.aval),
        None if ly is None else unbroadcast(_div_vjp_divisor_of(ct, out, y), ly.aval),
    ]


def _div_vjp_divisor_of(ct: Any, out: Any, y: Any) -> Any:
    """`_div_vjp_divisor(ct, out, y)`; on the host, its three host rules (`host_vjp`)."""
    ct_value = host_vjp.host_value(ct)
    if ct_value is not None:
        out_value = host_vjp.operand_value(out)
        y_value = host_vjp.operand_value(y)
        if (
            out_value is not None
            and y_value is not None
            and type(out) is Array
            and type(y) is Array
            and ct_value.dtype == out_value.dtype == y_value.dtype
            # (`out`, of the broadcast shape, is div's largest operand and its result)
            and host_vjp.within(div_p, out_value.dtype, out_value.size)
        ):
            r = np.negative(np.multiply(ct_value, host.div(out_value, y_value)))
            r = r if type(r) is np.ndarray else np.asarray(r)
            weak = ct.aval.weak_type and out.aval.weak_type and y.aval.weak_type
            return wrap_host(r, ShapedArray(r.shape, r.dtype, weak))
    return _div_vjp_divisor(ct, out, y)


@fused_rule_body
def _div_vjp_divisor(ct, out, y):
    return neg(mul(ct, div(out, y)))


# --- rem ------------------------------------------------------------------------------------

rem_p = Primitive("rem")


def rem(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise remainder with the sign of `x` (C `fmod`), as XLA defines it."""
    return rem_p.bind1(*promote_python_scalars(x, y))


elementwise(rem_p, "stablehlo.remainder", _REAL)
rem_p.def_host(host.rem)


@rem_p.def_jvp
def _rem_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    out = rem(x, y)
    # d/dy fmod(x, y) = -trunc(x / y)
    trunc_q = div(sub(x, out), y)
    return out, sub(_tangent_to_shape(x_dot, get_aval(out).shape), mul(y_dot, trunc_q))


@rem_p.def_eager_vjp
def _rem_eager_vjp(ct, out, primals, linear):
    # The transposes of the jvp's sub, mul and broadcast; trunc_q is made only for a
    # differentiated divisor, by the same primitives (host rules where dispatch runs them).
    x, y = primals
    x_dot, y_dot = linear
    ct_x = ct_y = None
    if x_dot is not None:
        ct_x = unbroadcast(ct, x_dot.aval)
    if y_dot is not None:
        trunc_q = host_vjp.bind1(div_p, host_vjp.bind1(sub_p, x, out), y)
        ct_y = unbroadcast(multiply_cotangent(negate_cotangent(ct), trunc_q), y_dot.aval)
    return [ct_x, ct_y]


# --- neg ------------------------------------------------------------------------------------

neg_p = Primitive("neg")


def neg(x: ArrayLike) -> Any:
    """Elementwise `-x`."""
    return neg_p.bind1(x)


elementwise(neg_p, "stablehlo.negate", _NUMERIC)
neg_p.def_host(host.ufunc(np.negative))


@neg_p.def_jvp
def _neg_jvp(primals, tangents):
    return neg(primals[0]), neg(tangents[0])


neg_p.def_eager_vjp(LINEAR)


# --- sign -----------------------------------------------------------------------------------

sign_p = Primitive("sign")


def sign(x: ArrayLike) -> Any:
    """Elementwise sign: -1, 0 or 1 (x/|x| for complex); NaN stays NaN."""
    return sign_p.bind1(x)


def _sign_lowering(ctx: LoweringContext, x):
    b = ctx.builder
    out = ctx.aval_out.strip_weak_type()
    if x.aval.dtype.kind == "u":
        zero = scalar_constant(b, 0, x.aval.dtype, x.aval.shape)
        nonzero = b.op(
            "stablehlo.compare",
            [x, zero],
            out.update(dtype=np.dtype(bool)),
            "comparison_direction = #stablehlo<comparison_direction NE>, "
            "compare_type = #stablehlo<comparison_type UNSIGNED>",
        )
        return b.op("stablehlo.convert", [nonzero], out)
    raw = b.op("stablehlo.sign", [x], out)
    if x.aval.dtype.kind == "i":
        return raw
    # XLA keeps -0.0 and gives NaN at infinite complex parts; NumPy's sign does neither.
    from mjcore.lax.complex_special import sign_fixup

    return lower_fun(sign_fixup)(LoweringContext(b, [x.aval, out], [out]), x, raw)


elementwise(sign_p, _sign_lowering, _NUMERIC)
sign_p.def_host(host.ufunc(np.sign))


@sign_p.def_jvp
def _sign_jvp(primals, tangents):
    return sign(primals[0]), None


sign_p.def_eager_vjp(CONSTANT)  # eager grad: evaluated, nothing recorded


# --- abs ------------------------------------------------------------------------------------

abs_p = Primitive("abs")


def abs(x: ArrayLike) -> Any:  # noqa: A001  (the lax name, as in JAX)
    """Elementwise absolute value (the magnitude, as a real dtype, for complex input)."""
    return abs_p.bind1(x)


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"f{dtype.itemsize // 2}") if dtype.kind == "c" else dtype


def _abs_abstract_eval(x: ShapedArray) -> ShapedArray:
    if dtypes.kind(x.dtype) not in _NUMERIC:
        raise TypeError(f"abs does not accept dtype {x.dtype.name}")
    return ShapedArray(x.shape, _real_dtype(x.dtype), x.weak_type)


def _abs_lowering(ctx: LoweringContext, x):
    if x.aval.dtype.kind == "u":
        return x
    return ctx.builder.op("stablehlo.abs", [x], ctx.aval_out.strip_weak_type())


elementwise(abs_p, _abs_lowering, _NUMERIC)
abs_p.def_abstract_eval(_abs_abstract_eval)
abs_p.def_host(host.ufunc(np.abs))


@abs_p.def_jvp
def _abs_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    y = abs(x)
    if get_aval(x).dtype.kind == "c":
        # d|z| = Re(conj(z) dz) / |z|
        from mjcore.lax.complex import conj, real

        safe = select_n(eq_zero(y), y, full_like_one(y))
        return y, div(real(mul(conj(x), x_dot)), safe)
    # JAX's convention at the kink: the slope at +-0 is +1 (sign(x) would give 0 there).
    aval = get_aval(x)
    negative = lt(x, broadcast_to(_scalar(0, aval.dtype), aval.shape))
    return y, select_n(negative, x_dot, neg(x_dot))


@abs_p.def_eager_vjp
def _abs_vjp(ct, y, primals, linear):
    # The transposes of `_abs_jvp`'s tangent equations, in the order eager grad's backward
    # pass runs them, so the same bits without the jvp rule in the forward pass.
    (x,) = primals
    aval = get_aval(x)
    if aval.dtype.kind == "c":
        from mjcore.lax.complex import conj, real_p

        safe = select_n(eq_zero(y), y, full_like_one(y))
        (ct_real,) = real_p.transpose_rule(divide_cotangent(ct, safe), UndefinedPrimal(aval))
        return [multiply_cotangent(conj(x), ct_real)]
    out = _abs_vjp_host(ct, x)
    if out is not None:
        return [out]
    # select_n(negative, x_dot, neg(x_dot)): each case's select, then neg's transpose, summed
    negative = lt(x, broadcast_to(_scalar(0, aval.dtype), aval.shape))
    zeros = full(get_aval(ct).shape, 0, get_aval(ct).dtype)
    kept = select_n(negative, ct, zeros)
    return [add_any(kept, negate_cotangent(select_n(negative, zeros, ct)))]


def _abs_vjp_host(ct: Any, x: Any) -> Any:
    """`_abs_vjp` of a real `x` on the host (`host_vjp`): the host rules of its comparison,
    selects, negation and the tape's sum."""
    values = host_vjp.cotangent_and_operands(ct, x)
    if values is None or not host_vjp.within(select_n_p, _BOOL, values[0].size):
        return None
    ct_value, x_value = values
    zero = np.zeros((), ct_value.dtype)
    negative = np.less(x_value, zero)
    kept = np.where(negative, zero, ct_value)
    flipped = np.negative(np.where(negative, ct_value, zero))
    token = fp_state.set(FP_QUIET)  # the tape's sum of two cotangents (`_add_cotangents`)
    try:
        out = np.asarray(np.add(kept, flipped))
    finally:
        fp_state.reset(token)
    return wrap_host(out, ShapedArray(out.shape, out.dtype, False))


def eq_zero(x: Any) -> Any:
    aval = get_aval(x)
    return eq(x, broadcast_to(_scalar(0, aval.dtype), aval.shape))


def full_like_one(x: Any) -> Any:
    aval = get_aval(x)
    return broadcast_to(_scalar(1, aval.dtype), aval.shape)


def _scalar(value: Any, dtype: np.dtype) -> Any:
    return scalar_array(value, dtype)


# --- max / min ------------------------------------------------------------------------------

max_p = Primitive("max")
min_p = Primitive("min")


def max(x: ArrayLike, y: ArrayLike) -> Any:  # noqa: A001  (the lax name, as in JAX)
    """Elementwise maximum; NaN propagates, as in `numpy.maximum`."""
    return max_p.bind1(*promote_python_scalars(x, y))


def min(x: ArrayLike, y: ArrayLike) -> Any:  # noqa: A001  (the lax name, as in JAX)
    """Elementwise minimum; NaN propagates, as in `numpy.minimum`."""
    return min_p.bind1(*promote_python_scalars(x, y))


elementwise(max_p, "stablehlo.maximum", "biuf")
elementwise(min_p, "stablehlo.minimum", "biuf")
# NB: NumPy's signed-zero choice (maximum(-0.0, 0.0) is -0.0 or 0.0 by argument order) where
# XLA's is always +0.0 (-0.0 for min); equal values otherwise, NaN propagating in both.
max_p.def_host(host.ufunc(np.maximum))
min_p.def_host(host.ufunc(np.minimum))


def _minmax_jvp(prim: Primitive, pick_x_cmp: str):
    def jvp(primals, tangents):
        (x, y), (x_dot, y_dot) = primals, tangents
        out = prim.bind1(x, y)
        shape = get_aval(out).shape
        cmp = getattr(comparison, pick_x_cmp)
        x_b, y_b = broadcast_to(x, shape), broadcast_to(y, shape)
        x_dot, y_dot = broadcast_to(x_dot, shape), broadcast_to(y_dot, shape)
        # Ties share the derivative equally, as in JAX.
        half = mul(add(x_dot, y_dot), _scalar(0.5, get_aval(x_dot).dtype))
        picked = select_n(cmp(x_b, y_b), y_dot, x_dot)
        return out, select_n(comparison.eq(x_b, y_b), picked, half)

    prim.def_jvp(jvp)


_minmax_jvp(max_p, "gt")
_minmax_jvp(min_p, "lt")


def _minmax_vjp(prim: Primitive, pick_x_cmp: str, host_cmp: np.ufunc) -> None:
    """max/min's direct rule (`Primitive.eager_vjp_rule`): the transposes of `_minmax_jvp`'s
    tangent equations, in the order eager grad's backward pass runs them (the tie select,
    the pick select, the half, the sums), so the same bits without its jvp rule's dozen
    binds in the forward pass."""
    cmp = getattr(comparison, pick_x_cmp)

    def vjp(ct, out, primals, linear):
        x, y = primals
        host_cts = _minmax_vjp_host(ct, x, y, linear, host_cmp)
        if host_cts is not None:
            return host_cts
        aval = get_aval(ct)
        shape, dtype = aval.shape, aval.dtype
        x_b, y_b = broadcast_to(x, shape), broadcast_to(y, shape)
        ties = comparison.eq(x_b, y_b)
        zeros = full(shape, 0, dtype)
        ct_picked = select_n(ties, ct, zeros)  # select_n(ties, picked, half)'s transpose
        ct_half = multiply_cotangent(select_n(ties, zeros, ct), _scalar(0.5, dtype))
        picks_x = cmp(x_b, y_b)
        cts = []
        # x is case 1 of select_n(picks_x, y_dot, x_dot), y case 0; each also gets the half
        for case, lin in ((1, linear[0]), (0, linear[1])):
            if lin is None:
                cts.append(None)
                continue
            cases = [zeros, zeros]
            cases[case] = ct_picked
            total = add_any(select_n(picks_x, *cases), ct_half)
            cts.append(unbroadcast(total, lin.aval))
        return cts

    prim.def_eager_vjp(vjp)


def _minmax_vjp_host(ct: Any, x: Any, y: Any, linear: Any, host_cmp: np.ufunc) -> Any:
    """max/min's direct rule on the host (`host_vjp`): the host rules of its selects, product
    and sums (NumPy broadcasting `x` and `y` in the comparisons, as broadcast_to would)."""
    values = host_vjp.cotangent_and_operands(ct, x, y)
    if values is None or not host_vjp.within(select_n_p, _BOOL, values[0].size):
        return None
    ct_value, x_value, y_value = values
    dtype = ct_value.dtype
    zero = np.zeros((), dtype)  # `full`'s zeros, broadcast by np.where
    ties = np.equal(x_value, y_value)
    ct_picked = np.where(ties, zero, ct_value)
    ct_half = np.multiply(np.where(ties, ct_value, zero), np.array(0.5, dtype))
    picks_x = host_cmp(x_value, y_value)
    aval = ShapedArray(ct_value.shape, dtype, False)  # (selects with strong zeros: strong)
    cts: list[Any] = []
    for is_x, lin in ((True, linear[0]), (False, linear[1])):
        if lin is None:
            cts.append(None)
            continue
        part = np.where(picks_x, ct_picked, zero) if is_x else np.where(picks_x, zero, ct_picked)
        token = fp_state.set(FP_QUIET)  # the tape's sum of two cotangents (`_add_cotangents`)
        try:
            total = np.asarray(np.add(part, ct_half))
        finally:
            fp_state.reset(token)
        cts.append(unbroadcast(wrap_host(total, aval), lin.aval))
    return cts


_BOOL = np.dtype(bool)
_minmax_vjp(max_p, "gt", np.greater)
_minmax_vjp(min_p, "lt", np.less)


# --- floor / ceil / round -------------------------------------------------------------------

floor_p = Primitive("floor")
ceil_p = Primitive("ceil")
round_p = Primitive("round")


def floor(x: ArrayLike) -> Any:
    """Elementwise floor of a floating array."""
    return floor_p.bind1(x)


def ceil(x: ArrayLike) -> Any:
    """Elementwise ceiling of a floating array."""
    return ceil_p.bind1(x)


ROUND_AWAY_FROM_ZERO = 0
ROUND_TO_NEAREST_EVEN = 1


def round(x: ArrayLike, rounding_method: int = ROUND_AWAY_FROM_ZERO) -> Any:  # noqa: A001
    """Round to the nearest integer; ties away from zero or to even (NumPy's `round`)."""
    return round_p.bind1(x, rounding_method=int(rounding_method))


elementwise(floor_p, "stablehlo.floor", _FLOAT)
elementwise(ceil_p, "stablehlo.ceil", _FLOAT)
floor_p.def_host(host.ufunc(np.floor))
ceil_p.def_host(host.ufunc(np.ceil))


def _round_lowering(ctx: LoweringContext, x, *, rounding_method):
    op = (
        "stablehlo.round_nearest_even"
        if rounding_method == ROUND_TO_NEAREST_EVEN
        else "stablehlo.round_nearest_afz"
    )
    return ctx.builder.op(op, [x], ctx.aval_out.strip_weak_type())


elementwise(round_p, _round_lowering, _FLOAT)
round_p.def_host(host.round)


def _zero_derivative_jvp(prim: Primitive) -> None:
    def jvp(primals, tangents, **params):
        return prim.bind1(*primals, **params), None

    prim.def_jvp(jvp)
    prim.def_eager_vjp(CONSTANT)  # eager grad: evaluated, nothing recorded


for _p in (floor_p, ceil_p, round_p):
    _zero_derivative_jvp(_p)


# --- integer_pow ----------------------------------------------------------------------------

integer_pow_p = Primitive("integer_pow")


def integer_pow(x: ArrayLike, y: int) -> Any:
    """`x ** y` for a static Python integer `y`, by repeated multiplication."""
    return integer_pow_p.bind1(x, y=int(y))


def _integer_pow_lowering(ctx: LoweringContext, x, *, y):
    b = ctx.builder
    out = ctx.aval_out.strip_weak_type()
    if y == 0:
        return scalar_constant(b, 1, out.dtype, out.shape)
    acc: Any = None  # (set at the first set bit of y != 0)
    base = x
    n = y if y > 0 else -y
    while n:
        if n & 1:
            acc = base if acc is None else b.op("stablehlo.multiply", [acc, base], out)
        n >>= 1
        if n:
            base = b.op("stablehlo.multiply", [base, base], out)
    if y < 0:
        one = scalar_constant(b, 1, out.dtype, out.shape)
        acc = b.op("stablehlo.divide", [one, acc], out)
    return acc


elementwise(integer_pow_p, _integer_pow_lowering, _NUMERIC)
integer_pow_p.def_host(host.integer_pow)


@integer_pow_p.def_jvp
def _integer_pow_jvp(primals, tangents, *, y):
    (x,), (x_dot,) = primals, tangents
    out = integer_pow(x, y)
    if y == 0:
        return out, None
    dtype = get_aval(x).dtype
    coeff = _scalar(y, dtype)
    deriv = coeff if y == 1 else mul(coeff, integer_pow(x, y - 1))
    return out, mul(deriv, x_dot)


@integer_pow_p.def_eager_vjp
def _integer_pow_vjp(ct, out, primals, linear, *, y):
    if y == 0:
        return [None]
    out = _integer_pow_vjp_host(ct, primals[0], y)
    return [_integer_pow_vjp_body(ct, primals[0], y=y) if out is None else out]


def _integer_pow_vjp_host(ct: Any, x: Any, y: int) -> Any:
    """`_integer_pow_vjp_body` on the host (`host_vjp`): its host rules in its order, where
    its replay would run them."""
    values = host_vjp.cotangent_and_operands(ct, x)
    if values is None:
        return None
    ct_value, x_value = values
    if y != 1 and not host_vjp.within(integer_pow_p, x_value.dtype, x_value.size):
        return None
    coeff = np.array(y, x_value.dtype)  # `_scalar(y, dtype)`'s value
    if y != 1:
        coeff = np.multiply(coeff, host.integer_pow(x_value, y - 1))
    out = np.multiply(coeff, ct_value)
    out = out if type(out) is np.ndarray else np.asarray(out)
    return host_vjp.wrap(out, out.shape, ct.aval.strip_weak_type())  # (the coefficient: strong)


@fused_rule_body
def _integer_pow_vjp_body(ct, x, *, y):
    coeff = _scalar(y, get_aval(x).dtype)
    return mul(coeff if y == 1 else mul(coeff, integer_pow(x, y - 1)), ct)


# --- square / reciprocal (compositions, as JAX's reciprocal is) ------------------------------


def square(x: ArrayLike) -> Any:
    """Elementwise `x * x`."""
    return mul(x, x)


def reciprocal(x: ArrayLike) -> Any:
    """Elementwise `1 / x` of a floating or complex array (`integer_pow(x, -1)`, as in JAX).

    Raises:
      TypeError: for integer or boolean `x`, which cannot be raised to negative powers.
    """
    aval = get_aval(x)
    if dtypes.kind(aval.dtype) not in "fc":
        raise TypeError(
            f"reciprocal: needs a floating or complex array, got {aval.str_short()}; integers "
            "cannot be raised to negative powers (convert with convert_element_type first)"
        )
    return integer_pow(x, -1)


# --- clamp ----------------------------------------------------------------------------------

clamp_p = Primitive("clamp")


def clamp(min: ArrayLike, x: ArrayLike, max: ArrayLike) -> Any:  # noqa: A002  (JAX's names)
    """Elementwise `min` if `x < min`, `max` if `x > max`, else `x` (XLA's clamp).

    `min` and `max` are scalars or have the shape of `x`; all three share one dtype (Python
    scalars take the dtype of the arrays). When `min > max` the result is `max`. As in JAX,
    the derivative in `x` is 1 only strictly inside `(min, max)`, in `min` where `min > x` and
    `min < max`, and in `max` where `max < x`.

    Raises:
      TypeError: if `min` or `max` is neither a scalar nor of the shape of `x`, or the dtypes
        differ.
    """
    return clamp_p.bind1(*promote_python_scalars(min, x, max))


@clamp_p.def_abstract_eval
def _clamp_abstract_eval(lo: ShapedArray, x: ShapedArray, hi: ShapedArray) -> ShapedArray:
    dtype = check_same_dtypes("clamp", (lo, x, hi))
    if dtypes.kind(dtype) not in _REAL:
        raise TypeError(f"clamp does not accept dtype {dtype.name}; it needs a real dtype")
    for what, bound in (("min", lo), ("max", hi)):
        if bound.shape and bound.shape != x.shape:
            raise TypeError(
                f"clamp: {what} must be a scalar or have the shape of the operand, got "
                f"{what}.shape={bound.shape} and operand.shape={x.shape}"
            )
    return ShapedArray(x.shape, dtype, lo.weak_type and x.weak_type and hi.weak_type)


@clamp_p.def_lowering
def _clamp_lowering(ctx: LoweringContext, lo, x, hi):
    return ctx.builder.op("stablehlo.clamp", [lo, x, hi], ctx.aval_out.strip_weak_type())


@clamp_p.def_host
def _clamp_host(lo: np.ndarray, x: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.asarray(np.minimum(np.maximum(x, lo), hi))


@clamp_p.def_jvp(symbolic_zeros=True)
def _clamp_jvp(primals, tangents):
    (lo, x, hi), (lo_dot, x_dot, hi_dot) = primals, tangents
    out = clamp_p.bind1(lo, x, hi)
    shape = get_aval(x).shape
    lo, hi = broadcast_to(lo, shape), broadcast_to(hi, shape)
    # JAX's rule: each operand's tangent where it is the one chosen, strictly.
    parts = [
        (lo_dot, bitwise_and(gt(lo, x), lt(lo, hi))),
        (x_dot, bitwise_and(gt(x, lo), lt(x, hi))),
        (hi_dot, lt(hi, x)),
    ]
    out_dot = None
    for t, chosen in parts:
        if type(t) is Zero:
            continue
        t = broadcast_to(t, shape)
        t = select_n(chosen, broadcast_to(_scalar(0, get_aval(t).dtype), shape), t)
        out_dot = t if out_dot is None else add(out_dot, t)
    return out, out_dot


@clamp_p.def_batching
def _clamp_batching(vals, dims):
    (lo, x, hi), (lo_bdim, x_bdim, hi_bdim) = vals, dims
    if lo_bdim is hi_bdim is NOT_MAPPED and get_aval(lo).ndim == get_aval(hi).ndim == 0:
        return clamp_p.bind1(lo, x, hi), x_bdim
    axis_size = next(
        get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not NOT_MAPPED
    )
    shape = get_aval(x).shape
    if x_bdim is not NOT_MAPPED:
        shape = shape[:x_bdim] + shape[x_bdim + 1 :]
    full_shape = (axis_size, *shape)
    moved = []
    for i, (v, d) in enumerate(zip(vals, dims, strict=True)):
        if d is NOT_MAPPED:
            # An unbatched operand, or an unbatched bound of the operand's shape, gets the
            # batch axis; an unbatched scalar bound stays a scalar.
            if i == 1 or get_aval(v).ndim:
                v = broadcast_in_dim(v, full_shape, tuple(range(1, len(full_shape))))
        else:
            v = move_bdim(v, d, 0)
            if get_aval(v).ndim == 1 and shape:
                v = broadcast_in_dim(v, full_shape, (0,))  # one scalar bound per example
        moved.append(v)
    return clamp_p.bind1(*moved), 0


# --- mulhi (composed of the primitives above and the bitwise ones) --------------------------


def mulhi(x: ArrayLike, y: ArrayLike, /) -> Any:
    """Elementwise high half of the double-width product of two integers of one dtype.

    Up to 32 bits the product is taken exactly in the double-width dtype; 64-bit operands
    multiply 32-bit halves (schoolbook), with the signed correction `- (x < 0) y - (y < 0) x`.
    """
    dx, dy = get_aval(x).dtype, get_aval(y).dtype
    if dx != dy or dx.kind not in "iu":
        raise TypeError(
            f"mulhi: needs two integer operands of one dtype, got {dx.name} and {dy.name}"
        )
    shape = np.broadcast_shapes(get_aval(x).shape, get_aval(y).shape)
    x, y = broadcast_to(x, shape), broadcast_to(y, shape)
    bits = 8 * dx.itemsize
    if bits <= 32:
        wide = np.dtype(f"{dtypes.kind(dx)}{2 * dx.itemsize}")
        product = mul(convert_element_type(x, wide), convert_element_type(y, wide))
        shift = full((), bits, wide)
        return convert_element_type(shift_right_arithmetic(product, shift), dx)
    u64 = np.dtype("uint64")
    xu, yu = bitcast_convert_type(x, u64), bitcast_convert_type(y, u64)
    mask, half = full((), 0xFFFFFFFF, u64), full((), 32, u64)
    xl, xh = bitwise_and(xu, mask), shift_right_logical(xu, half)
    yl, yh = bitwise_and(yu, mask), shift_right_logical(yu, half)
    lh, hl = mul(xl, yh), mul(xh, yl)
    mid = add(
        add(shift_right_logical(mul(xl, yl), half), bitwise_and(lh, mask)),
        bitwise_and(hl, mask),
    )
    high = add(
        add(mul(xh, yh), shift_right_logical(lh, half)),
        add(shift_right_logical(hl, half), shift_right_logical(mid, half)),
    )
    if dx.kind == "u":
        return high
    zero = full((), 0, dx)
    high = sub(high, select_n(lt(x, zero), zeros_like(yu), yu))
    high = sub(high, select_n(lt(y, zero), zeros_like(xu), xu))
    return bitcast_convert_type(high, dx)


__all__ = [
    "mulhi",
    "abs",
    "add",
    "ceil",
    "clamp",
    "div",
    "floor",
    "integer_pow",
    "max",
    "min",
    "mul",
    "neg",
    "reciprocal",
    "rem",
    "round",
    "sign",
    "square",
    "sub",
]


# --- transpose rules (linear in some operand) -----------------------------------------------


def _undefined(x: Any) -> bool:
    # UndefinedPrimal imported at the top: a function-level import costs ~2 µs a call, and
    # this runs for every operand of every transposed equation.
    return type(x) is UndefinedPrimal


def _add_transpose(ct, x, y):
    return [
        unbroadcast(ct, x.aval) if _undefined(x) else None,
        unbroadcast(ct, y.aval) if _undefined(y) else None,
    ]


def _sub_transpose(ct, x, y):
    return [
        unbroadcast(ct, x.aval) if _undefined(x) else None,
        unbroadcast(negate_cotangent(ct), y.aval) if _undefined(y) else None,
    ]


def _mul_transpose(ct, x, y):
    if _undefined(x) and _undefined(y):
        raise TypeError("mul: cannot transpose a product of two linear inputs")
    if _undefined(x):
        return [unbroadcast(multiply_cotangent(ct, y), x.aval), None]
    return [None, unbroadcast(multiply_cotangent(x, ct), y.aval)]


def _div_transpose(ct, x, y):
    if _undefined(y):
        raise TypeError("div: the divisor cannot be a linear input")
    return [unbroadcast(divide_cotangent(ct, y), x.aval), None]


# On the host (eager grad's backward pass on the CPU), the primitives' host rules without a
# bind each (`host_vjp`): the same NumPy calls, so the same bits.


def negate_cotangent(ct: Any) -> Any:
    """`neg(ct)`."""
    value = host_vjp.host_value(ct)
    if value is None:
        return neg(ct)
    out = np.negative(value)
    return wrap_host(out if type(out) is np.ndarray else np.asarray(out), ct.aval)


def multiply_cotangent(x: Any, y: Any) -> Any:
    """`mul(x, y)` for transpose and vjp rules (one of `x`, `y` a cotangent)."""
    x, y = promote_python_scalars(x, y)
    out = host_vjp.apply(mul_p, x, y)
    return mul_p.bind1(x, y) if out is None else out


def divide_cotangent(ct: Any, y: Any) -> Any:
    """`div(ct, y)` for transpose and vjp rules."""
    ct, y = promote_python_scalars(ct, y)
    out = host_vjp.apply(div_p, ct, y)
    return div_p.bind1(ct, y) if out is None else out


add_p.def_transpose(_add_transpose)
sub_p.def_transpose(_sub_transpose)
mul_p.def_transpose(_mul_transpose)
div_p.def_transpose(_div_transpose)
neg_p.def_transpose(lambda ct, x: [negate_cotangent(ct)])
