"""JAX's `scipy.special` (Autodidax Part 1's "write functions as compositions of primitives"):
special functions composed from `mjcore.lax`, with JAX's algorithms, special values and
derivative rules (`custom_jvp` where JAX defines one), so every transformation works on them.

Arguments follow NumPy 2 promotion (NEP 50 weak Python scalars); bool and integer inputs give
float64. NB: JAX gives float32 for bool and integers narrower than 64 bits, and float32 for an
int64 array with a float32 one; NumPy's rule wins here, as everywhere in this project. Complex
inputs are refused (JAX accepts them in a few functions).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

import numpy as np

from mjcore import dtypes, lax
from mjcore.ad import Zero
from mjcore.api import jvp
from mjcore.array import Array
from mjcore.core import Tracer, get_aval
from mjcore.custom_derivatives import custom_jvp
from mjcore.dispatch import device_put, scalar_array
from mjcore.eager_fusion import fuse_eagerly
from mjcore.lax.families import broadcast_shapes

ArrayLike = Any
Axis = int | Sequence[int] | None

_NAME = "mjcore.scipy.special"
_SCALARS = (bool, int, float, complex)
_F32 = np.dtype("float32")
_F64 = np.dtype("float64")

__all__ = [
    "bernoulli",
    "beta",
    "betainc",
    "betaln",
    "boxcox",
    "boxcox1p",
    "comb",
    "dawsn",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp1",
    "expi",
    "expit",
    "expn",
    "factorial",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammaln",
    "gammasgn",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "kl_div",
    "log_ndtr",
    "log_softmax",
    "loggamma",
    "logit",
    "logsumexp",
    "multigammaln",
    "ndtr",
    "ndtri",
    "poch",
    "polygamma",
    "rel_entr",
    "softmax",
    "spence",
    "xlog1py",
    "xlogy",
    "zeta",
]


# --- arguments ------------------------------------------------------------------------------


def _asarray(fname: str, i: int, x: Any) -> Any:
    """`x` as an Array or tracer (Python scalars kept, for weak promotion). As JAX, lists and
    tuples are refused: they are ambiguous as arrays of values."""
    if isinstance(x, Array | Tracer) or type(x) in _SCALARS:
        return x
    if isinstance(x, np.ndarray | np.generic):
        dtypes.canonicalize_dtype(x.dtype, f"{_NAME}.{fname}")  # TypeError for object arrays
        return device_put(np.asarray(x))
    raise TypeError(
        f"{_NAME}.{fname}: requires ndarray or scalar arguments, got {type(x).__name__} at "
        f"position {i}; convert it with mjnp.asarray first"
    )


def _promote_inexact(fname: str, *args: ArrayLike) -> list[Any]:
    """`args` as arrays of their common float dtype (bool and integers go to float64)."""
    vals = [_asarray(fname, i, x) for i, x in enumerate(args)]
    dtype, _ = dtypes.result_type(*vals, fname=f"{_NAME}.{fname}")
    if dtype.kind in "biu":
        dtype = _F64
    elif dtype.kind == "c":
        raise TypeError(f"{_NAME}.{fname}: complex inputs are not supported, got {dtype.name}")
    return [
        scalar_array(x, dtype)
        if type(x) in _SCALARS
        else x
        if get_aval(x).dtype == dtype
        else lax.convert_element_type(x, dtype)
        for x in vals
    ]


def _broadcast(fname: str, *xs: Any) -> list[Any]:
    shape = broadcast_shapes(f"{_NAME}.{fname}", *(get_aval(x).shape for x in xs))
    return [lax.broadcast_to(x, shape) for x in xs]


def _float32_or_64(fname: str, x: ArrayLike) -> Any:
    """`x` unconverted, which must be float32 or float64 (JAX's rule for the normal family)."""
    x = _asarray(fname, 0, x)
    if type(x) in _SCALARS:
        x = scalar_array(x, dtypes.python_scalar_dtype(x))
    dtype = get_aval(x).dtype
    if dtype not in (_F32, _F64):
        raise TypeError(
            f"{_NAME}.{fname}: x.dtype={dtype.name} is not supported; use float32 or float64"
        )
    return x


def _full(like: Any, value: float) -> Any:
    return lax.full(get_aval(like).shape, value, get_aval(like).dtype)


def _where(cond: Any, x: Any, y: Any) -> Any:
    """`jnp.where` for operands of one dtype (a Python scalar takes the other's dtype)."""
    like = y if type(x) in _SCALARS else x
    dtype = get_aval(like).dtype
    x, y = (lax.full((), v, dtype) if type(v) in _SCALARS else v for v in (x, y))
    shape = broadcast_shapes("where", *(get_aval(v).shape for v in (cond, x, y)))
    return lax.select_n(
        lax.broadcast_to(cond, shape), lax.broadcast_to(y, shape), lax.broadcast_to(x, shape)
    )


def _isnan(x: Any) -> Any:
    return lax.ne(x, x)


def _polyval(coeffs: Sequence[float], x: Any) -> Any:
    """Horner's rule from the highest degree, starting from zero as `jnp.polyval` does."""
    y = lax.full_like(x, 0)
    for c in coeffs:
        y = lax.add(lax.mul(y, x), float(c))
    return y


def _axes(fname: str, axis: Axis, ndim: int) -> tuple[int, ...]:
    """`axis` (None, an int or a sequence of ints) as sorted non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    try:
        axes: tuple[int, ...] = (operator.index(axis),)  # type: ignore[arg-type]
    except TypeError:
        if not isinstance(axis, tuple | list):
            raise TypeError(
                f"{_NAME}.{fname}: axis must be None, an int or a tuple of ints, "
                f"got {type(axis).__name__}"
            ) from None
        axes = tuple(operator.index(a) for a in axis)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(
                f"{_NAME}.{fname}: axis {a} is out of bounds for an array of dimension {ndim}"
            )
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{_NAME}.{fname}: repeated axis in {axis!r}")
    return tuple(sorted(out))


# --- reductions: logsumexp, softmax, log_softmax --------------------------------------------


def logsumexp(
    a: ArrayLike,
    axis: Axis = None,
    b: ArrayLike | None = None,
    keepdims: bool = False,
    return_sign: bool = False,
    where: ArrayLike | None = None,
) -> Any:
    """`log(sum(b * exp(a), axis))`, stably: JAX's `scipy.special.logsumexp`.

    The maximum is subtracted before exponentiating and is held constant under
    differentiation, so the gradient is `softmax`. Elements where `b == 0` or `where` is False
    do not count; with `return_sign` the result is `(log(abs(sum)), sign(sum))`, otherwise a
    negative sum gives NaN.

    Raises:
      TypeError: for non-array arguments or complex inputs.
      ValueError: for an axis out of range or repeated, or shapes that do not broadcast.
    """
    fname = "logsumexp"
    args = _promote_inexact(fname, a) if b is None else _promote_inexact(fname, a, b)
    if where is not None:
        mask = _asarray(fname, 5, where)
        if type(mask) in _SCALARS:
            mask = scalar_array(mask, dtypes.python_scalar_dtype(mask))
        if get_aval(mask).dtype != np.bool_:
            mask = lax.ne(mask, lax.full((), 0, get_aval(mask).dtype))
        args.append(mask)
    args = _broadcast(fname, *args)
    a = args[0]
    b_arr = args[1] if b is not None else None
    mask = args[-1] if where is not None else None
    if mask is not None:
        a = _where(mask, a, 0.0)
    if b_arr is not None:
        a = _where(lax.ne(b_arr, 0.0), a, -np.inf)
    dims = _axes(fname, axis, get_aval(a).ndim)
    amax = lax.reduce_max(a if mask is None else _where(mask, a, -np.inf), dims)
    amax = lax.stop_gradient(_where(lax.is_finite(amax), amax, 0.0))
    amax_with_dims = lax.expand_dims(amax, dims)
    exp_a = lax.exp(lax.sub(a, amax_with_dims))
    if b_arr is not None:
        exp_a = lax.mul(exp_a, b_arr)
    if mask is not None:
        exp_a = _where(mask, exp_a, 0.0)
    sumexp = lax.reduce_sum(exp_a, dims)
    if keepdims:
        sumexp, amax = lax.expand_dims(sumexp, dims), amax_with_dims
    sign = lax.sign(sumexp)
    out = lax.add(lax.log(lax.abs(sumexp)), amax)
    if return_sign:
        return out, sign
    if b_arr is not None:
        out = _where(lax.lt(sign, 0.0), np.nan, out)
    return out


def softmax(x: ArrayLike, /, *, axis: Axis = None) -> Any:
    """`exp(x) / sum(exp(x), axis)` (all axes by default): JAX's `scipy.special.softmax`.

    The maximum is subtracted first and held constant under differentiation. An input of
    +inf makes the whole slice NaN.
    """
    (x,) = _promote_inexact("softmax", x)
    dims = _axes("softmax", axis, get_aval(x).ndim)
    x_max = lax.expand_dims(lax.reduce_max(x, dims), dims)
    unnormalized = lax.exp(lax.sub(x, lax.stop_gradient(x_max)))
    return lax.div(unnormalized, lax.expand_dims(lax.reduce_sum(unnormalized, dims), dims))


def log_softmax(x: ArrayLike, /, *, axis: Axis = None) -> Any:
    """`x - logsumexp(x, axis)` (all axes by default): JAX's `scipy.special.log_softmax`."""
    (x,) = _promote_inexact("log_softmax", x)
    dims = _axes("log_softmax", axis, get_aval(x).ndim)
    x_max = lax.expand_dims(lax.reduce_max(x, dims), dims)
    shifted = lax.sub(x, lax.stop_gradient(x_max))
    total = lax.expand_dims(lax.reduce_sum(lax.exp(shifted), dims), dims)
    return lax.sub(shifted, lax.log(total))


# --- logistic -------------------------------------------------------------------------------


def expit(x: ArrayLike) -> Any:
    """The logistic sigmoid `1 / (1 + exp(-x))`: JAX's `scipy.special.expit`."""
    (x,) = _promote_inexact("expit", x)
    return lax.logistic(x)


@custom_jvp
def _logit(x: Any) -> Any:
    return lax.log(lax.div(x, lax.sub(1.0, x)))


_logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(1.0, x))))


def logit(x: ArrayLike) -> Any:
    """`log(x / (1 - x))`, the inverse of `expit`: JAX's `scipy.special.logit`, with its
    derivative `1 / (x * (1 - x))`."""
    (x,) = _promote_inexact("logit", x)
    return _logit(x)


# --- x log y and the entropies --------------------------------------------------------------


@custom_jvp
def _xlogy(x: Any, y: Any) -> Any:
    # NaN in y propagates even where x == 0, as in scipy.
    keep = lax.bitwise_or(lax.ne(x, 0.0), _isnan(y))
    return _where(keep, lax.mul(x, lax.log(y)), 0.0)


@_xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    return _xlogy(x, y), lax.add(lax.mul(x_dot, lax.log(y)), lax.div(lax.mul(y_dot, x), y))


def xlogy(x: ArrayLike, y: ArrayLike) -> Any:
    """`x * log(y)`, and 0 where `x == 0` (unless y is NaN): JAX's `scipy.special.xlogy`.

    The derivative is JAX's: `log(y)` in x and `x / y` in y, so at `x == 0, y == 0` the
    derivative in x is -inf.
    """
    x, y = _broadcast("xlogy", *_promote_inexact("xlogy", x, y))
    return _xlogy(x, y)


@custom_jvp
def _xlog1py(x: Any, y: Any) -> Any:
    keep = lax.bitwise_or(lax.ne(x, 0.0), _isnan(y))
    return _where(keep, lax.mul(x, lax.log1p(y)), 0.0)


@_xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    y_term = lax.div(lax.mul(y_dot, x), lax.add(1.0, y))
    return _xlog1py(x, y), lax.add(lax.mul(x_dot, lax.log1p(y)), y_term)


def xlog1py(x: ArrayLike, y: ArrayLike) -> Any:
    """`x * log1p(y)`, and 0 where `x == 0` (unless y is NaN): JAX's
    `scipy.special.xlog1py`, with JAX's derivative (`log1p(y)` in x, `x / (1 + y)` in y)."""
    x, y = _broadcast("xlog1py", *_promote_inexact("xlog1py", x, y))
    return _xlog1py(x, y)


@custom_jvp
def _xlogx(x: Any) -> Any:
    return _xlogy(x, x)


_xlogx.defjvps(lambda x_dot, ans, x: lax.mul(x_dot, lax.add(lax.log(x), 1.0)))


def entr(x: ArrayLike) -> Any:
    """`-x * log(x)` for x > 0, 0 at 0 and -inf below: JAX's `scipy.special.entr`."""
    (x,) = _promote_inexact("entr", x)
    return _where(lax.lt(x, 0.0), -np.inf, lax.neg(_xlogx(x)))


def rel_entr(p: ArrayLike, q: ArrayLike) -> Any:
    """`p * log(p / q)` for p, q > 0, 0 for p == 0 <= q and inf otherwise: JAX's
    `scipy.special.rel_entr`."""
    p, q = _broadcast("rel_entr", *_promote_inexact("rel_entr", p, q))
    both_positive = lax.bitwise_and(lax.gt(p, 0.0), lax.gt(q, 0.0))
    p_zero = lax.bitwise_and(lax.eq(p, 0.0), lax.ge(q, 0.0))
    # Safe operands where the formula is not used, so its gradient there is 0, not NaN.
    safe_p = _where(both_positive, p, 1.0)
    safe_q = _where(both_positive, q, 1.0)
    log_val = lax.sub(_xlogx(safe_p), _xlogy(safe_p, safe_q))
    return _where(both_positive, log_val, _where(p_zero, 0.0, _full(p, np.inf)))


def kl_div(p: ArrayLike, q: ArrayLike) -> Any:
    """`p * log(p / q) - p + q` for p, q > 0, q for p == 0 <= q and inf otherwise: JAX's
    `scipy.special.kl_div`."""
    p, q = _broadcast("kl_div", *_promote_inexact("kl_div", p, q))
    return lax.add(lax.sub(rel_entr(p, q), p), q)


# --- the error function family --------------------------------------------------------------


def erf(x: ArrayLike) -> Any:
    """The error function: JAX's `scipy.special.erf`."""
    (x,) = _promote_inexact("erf", x)
    return lax.erf(x)


def erfc(x: ArrayLike) -> Any:
    """The complementary error function `1 - erf(x)`: JAX's `scipy.special.erfc`."""
    (x,) = _promote_inexact("erfc", x)
    return lax.erfc(x)


def erfinv(x: ArrayLike) -> Any:
    """The inverse error function on [-1, 1]: JAX's `scipy.special.erfinv`."""
    (x,) = _promote_inexact("erfinv", x)
    return lax.erf_inv(x)


# Asymptotic series erfcx(x) ~ P(1/x**2) / (sqrt(pi) x), c_k = (-1)**k (2k-1)!! / 2**k, highest
# degree first; float64 uses 9 terms, float32 5 (the first omitted one is below epsilon).
_ERFCX_ASYMPTOTIC: tuple[float, ...]
_ERFCX_ASYMPTOTIC = (7918.06640625, -1055.7421875, 162.421875, -29.53125, 6.5625, -1.875, 0.75)
_ERFCX_ASYMPTOTIC += (-0.5, 1.0)


def _erfcx_kernel(x: Any, nterms: int) -> Any:
    # exp(x**2) overflows beyond sqrt(log(max)): the asymptotic series takes over there.
    threshold = float(np.sqrt(np.log(dtypes.finfo(get_aval(x).dtype).max)))
    large = lax.gt(x, threshold)
    safe_x = _where(large, 1.0, x)
    direct = lax.mul(lax.exp(lax.square(safe_x)), lax.erfc(safe_x))
    p = _polyval(_ERFCX_ASYMPTOTIC[-nterms:], lax.div(1.0, lax.square(x)))
    asymptotic = lax.div(p, lax.mul(x, float(np.sqrt(np.pi))))
    return lax.select_n(large, direct, asymptotic)


@custom_jvp
def _erfcx(x: Any) -> Any:
    dtype = get_aval(x).dtype
    if dtype == _F64:
        return _erfcx_kernel(x, 9)
    if dtype == _F32:
        return _erfcx_kernel(x, 5)
    return lax.convert_element_type(_erfcx_kernel(lax.convert_element_type(x, _F32), 5), dtype)


_erfcx.defjvps(
    lambda g, ans, x: lax.mul(g, lax.sub(lax.mul(lax.mul(2.0, x), ans), float(2 / np.sqrt(np.pi))))
)


def erfcx(x: ArrayLike) -> Any:
    """The scaled complementary error function `exp(x**2) * erfc(x)`, finite for large x:
    JAX's `scipy.special.erfcx` (real inputs)."""
    (x,) = _promote_inexact("erfcx", x)
    return _erfcx(x)


# Dawson's integral (Cody, Paciorek and Thacher 1970), on |x|: x P(x**2) / Q(x**2) below 3.25,
# then (1 + P(1/x**2) / (x**2 Q(1/x**2))) / (2x) on [3.25, 6.25) and beyond.
_DAWSN_NEAR = (
    (1.13681498971755972054e-11, 8.49262267667473811108e-10, 1.94434204175553054283e-8)
    + (9.53151741254484363489e-7, 3.07828309874913200438e-6, 3.52513368520288738649e-4)
    + (-8.50149846724410912031e-4, 4.22618223005546594270e-2, -9.17480371773452345351e-2)
    + (9.99999999999999994612e-1,),
    (2.40372073066762605484e-11, 1.48864681368493396752e-9, 5.21265281010541664570e-8)
    + (1.27258478273186970203e-6, 2.32490249820789513991e-5, 3.25524741826057911661e-4)
    + (3.48805814657162590916e-3, 2.79448531198828973716e-2, 1.58874241960120565368e-1)
    + (5.74918629489320327824e-1, 1.00000000000000000539e0),
)
_DAWSN_MIDDLE = (
    (5.08955156417900903354e-1, -2.44754418142697847934e-1, 9.41512335303534411857e-2)
    + (-2.18711255142039025206e-2, 3.66207612329569181322e-3, -4.23209114460388756528e-4)
    + (3.59641304793896631888e-5, -2.14640351719968974225e-6, 9.10010780076391431042e-8)
    + (-2.40274520828250956942e-9, 3.59233385440928410398e-11),
    (1.00000000000000000000e0, -6.31839869873368190192e-1, 2.36706788228248691528e-1)
    + (-5.31806367003223277662e-2, 8.48041718586295374409e-3, -9.47996768486665330168e-4)
    + (7.81025592944552338085e-5, -4.55875153252442634831e-6, 1.89100358111421846170e-7)
    + (-4.91324691331920606875e-9, 7.18466403235734541950e-11),
)
_DAWSN_FAR = (
    (-5.90592860534773254987e-1, 6.29235242724368800674e-1, -1.72858975380388136411e-1)
    + (1.64837047825189632310e-2, -4.86827613020462700845e-4),
    (1.00000000000000000000e0, -2.69820057197544900361e0, 1.73270799045947845857e0)
    + (-3.93708582281939493482e-1, 3.44278924041233391079e-2, -9.73655226040941223894e-4),
)


@custom_jvp
def _dawsn(x: Any) -> Any:
    ax = lax.abs(x)
    near = lax.lt(ax, 3.25)
    # Safe operands for the unused branches: their polynomials overflow at huge or tiny |x|.
    # The near branch is odd in x itself, so dawsn(-0.0) is -0.0, as scipy's.
    s = _where(near, x, 1.0)
    s2 = lax.square(s)
    near_value = lax.div(lax.mul(s, _polyval(_DAWSN_NEAR[0], s2)), _polyval(_DAWSN_NEAR[1], s2))
    far_x = _where(near, 4.0, ax)
    t = lax.div(1.0, lax.square(far_x))
    middle = lax.div(_polyval(_DAWSN_MIDDLE[0], t), _polyval(_DAWSN_MIDDLE[1], t))
    far = lax.div(_polyval(_DAWSN_FAR[0], t), _polyval(_DAWSN_FAR[1], t))
    ratio = _where(lax.lt(far_x, 6.25), middle, far)
    far_value = lax.mul(lax.div(0.5, far_x), lax.add(1.0, lax.mul(t, ratio)))
    return _where(near, near_value, lax.mul(lax.sign(x), far_value))


_dawsn.defjvps(lambda x_dot, ans, x: lax.mul(x_dot, lax.sub(1.0, lax.mul(lax.mul(2.0, x), ans))))


def dawsn(x: ArrayLike) -> Any:
    """Dawson's integral `exp(-x**2) integral(exp(t**2), t=0..x)`: JAX's `scipy.special.dawsn`
    (Cody's rational approximations), with derivative `1 - 2 x dawsn(x)`."""
    (x,) = _promote_inexact("dawsn", x)
    return _dawsn(x)


# --- the gamma family -----------------------------------------------------------------------


def gammaln(x: ArrayLike) -> Any:
    """`log(abs(gamma(x)))`: JAX's `scipy.special.gammaln`."""
    (x,) = _promote_inexact("gammaln", x)
    return lax.lgamma(x)


def loggamma(x: ArrayLike) -> Any:
    """The principal branch of `log(gamma(x))`: JAX's `scipy.special.loggamma` for real
    inputs (NaN for x <= 0)."""
    (x,) = _promote_inexact("loggamma", x)
    return _where(lax.gt(x, 0.0), lax.lgamma(x), np.nan)


def _signbit(x: Any) -> Any:
    width = get_aval(x).dtype.itemsize
    return lax.lt(lax.bitcast_convert_type(x, np.dtype(f"int{8 * width}")), 0)


def _gammasgn(x: Any) -> Any:
    floor_x = lax.floor(x)
    negative = lax.lt(x, 0.0)
    # At the poles (negative integers) the sign depends on the side: NaN, as JAX and scipy.
    undefined = lax.bitwise_or(lax.bitwise_and(negative, lax.eq(x, floor_x)), _isnan(x))
    odd = lax.bitwise_and(negative, lax.ne(lax.rem(floor_x, 2.0), 0.0))
    minus = lax.bitwise_or(odd, lax.bitwise_and(lax.eq(x, 0.0), _signbit(x)))
    return _where(undefined, np.nan, _where(minus, -1.0, _full(x, 1.0)))


def gammasgn(x: ArrayLike) -> Any:
    """The sign of the gamma function (NaN at its poles and at -inf, -1 at -0.0): JAX's
    `scipy.special.gammasgn`."""
    (x,) = _promote_inexact("gammasgn", x)
    return _gammasgn(x)


def _gamma(x: Any) -> Any:
    return lax.mul(_gammasgn(x), lax.exp(lax.lgamma(x)))


def gamma(x: ArrayLike) -> Any:
    """The gamma function, as `gammasgn(x) * exp(gammaln(x))`: JAX's `scipy.special.gamma`
    for real inputs."""
    (x,) = _promote_inexact("gamma", x)
    return _gamma(x)


def digamma(x: ArrayLike) -> Any:
    """The digamma function, the derivative of `gammaln`: JAX's `scipy.special.digamma`."""
    (x,) = _promote_inexact("digamma", x)
    return lax.digamma(x)


def polygamma(n: ArrayLike, x: ArrayLike) -> Any:
    """The n-th derivative of `digamma`: JAX's `scipy.special.polygamma`. The result has x's
    float dtype (the integer order does not promote it), as in JAX.

    Raises:
      ValueError: if `n` does not have an integer dtype, as JAX.
    """
    n = _asarray("polygamma", 0, n)
    n_dtype = dtypes.python_scalar_dtype(n) if type(n) in _SCALARS else get_aval(n).dtype
    if n_dtype.kind not in "iu":
        raise ValueError(
            f"{_NAME}.polygamma: argument n must have an integer dtype, got {n_dtype.name}"
        )
    (x,) = _promote_inexact("polygamma", x)
    dtype = get_aval(x).dtype
    n = scalar_array(n, dtype) if type(n) in _SCALARS else lax.convert_element_type(n, dtype)
    return lax.polygamma(n, x)


def gammainc(a: ArrayLike, x: ArrayLike) -> Any:
    """The regularized lower incomplete gamma function: JAX's `scipy.special.gammainc`."""
    a, x = _promote_inexact("gammainc", a, x)
    return lax.igamma(a, x)


def gammaincc(a: ArrayLike, x: ArrayLike) -> Any:
    """The regularized upper incomplete gamma function: JAX's `scipy.special.gammaincc`."""
    a, x = _promote_inexact("gammaincc", a, x)
    return lax.igammac(a, x)


def _algdiv(a: Any, b: Any) -> Any:
    """`log(gamma(b) / gamma(a + b))` for b >= 8 and a <= b (scipy's cdflib `algdiv`)."""
    c0, c1, c2 = 0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03
    c3, c4, c5 = -0.595202931351870e-03, 0.837308034031215e-03, -0.165322962780713e-02
    h = lax.div(a, b)
    c = lax.div(h, lax.add(1.0, h))
    x = c
    d = lax.add(b, lax.sub(a, 0.5))
    # s_n = (1 - x**n) / (1 - x)
    x2 = lax.mul(x, x)
    s3 = lax.add(1.0, lax.add(x, x2))
    s5 = lax.add(1.0, lax.add(x, lax.mul(x2, s3)))
    s7 = lax.add(1.0, lax.add(x, lax.mul(x2, s5)))
    s9 = lax.add(1.0, lax.add(x, lax.mul(x2, s7)))
    s11 = lax.add(1.0, lax.add(x, lax.mul(x2, s9)))
    # w = del(b) - del(a + b), with log(gamma(x)) = (x - 1/2) log(x) - x + log(2 pi)/2 + del(x)
    t = lax.integer_pow(lax.div(1.0, b), 2)
    w = lax.add(lax.mul(lax.mul(c5, s11), t), lax.mul(c4, s9))
    w = lax.add(lax.mul(w, t), lax.mul(c3, s7))
    w = lax.add(lax.mul(w, t), lax.mul(c2, s5))
    w = lax.add(lax.mul(w, t), lax.mul(c1, s3))
    w = lax.add(lax.mul(w, t), c0)
    w = lax.mul(w, lax.div(c, b))
    u = lax.mul(d, lax.log1p(lax.div(a, b)))
    v = lax.mul(a, lax.sub(lax.log(b), 1.0))
    return _where(lax.le(u, v), lax.sub(lax.sub(w, v), u), lax.sub(lax.sub(w, u), v))


def _betaln(a: Any, b: Any) -> Any:
    a, b = lax.min(a, b), lax.max(a, b)
    # Beyond b = 8, scipy's algdiv keeps log(gamma(b) / gamma(a + b)) accurate for large b.
    small_b = lax.add(lax.lgamma(a), lax.sub(lax.lgamma(b), lax.lgamma(lax.add(a, b))))
    large_b = lax.add(lax.lgamma(a), _algdiv(a, b))
    return _where(lax.lt(b, 8.0), small_b, large_b)


def betaln(a: ArrayLike, b: ArrayLike) -> Any:
    """`log(abs(beta(a, b)))`: JAX's `scipy.special.betaln` (scipy's cdflib algorithm, accurate
    for large arguments)."""
    a, b = _broadcast("betaln", *_promote_inexact("betaln", a, b))
    return _betaln(a, b)


def beta(a: ArrayLike, b: ArrayLike) -> Any:
    """The beta function `gamma(a) gamma(b) / gamma(a + b)`: JAX's `scipy.special.beta`."""
    a, b = _broadcast("beta", *_promote_inexact("beta", a, b))
    sign = lax.mul(lax.mul(_gammasgn(a), _gammasgn(b)), _gammasgn(lax.add(a, b)))
    return lax.mul(sign, lax.exp(_betaln(a, b)))


# --- the incomplete beta function -----------------------------------------------------------


def _any(pred: Any) -> Any:
    return lax.reduce_or(pred, tuple(range(get_aval(pred).ndim)))


def _betainc_continued_fraction(a: Any, b: Any, x: Any) -> Any:
    """DLMF 8.17.22's continued fraction `1 / (1 + d1 / (1 + d2 / (1 + ...)))` by the modified
    Lentz method, an even and an odd term per step, each element frozen once converged."""
    dtype = get_aval(x).dtype
    eps = float(dtypes.finfo(dtype).eps)
    floor = float(dtypes.finfo(dtype).tiny / dtypes.finfo(dtype).eps)  # keeps c and 1/d finite
    max_steps = 100.0 if dtype == _F32 else 300.0  # 200 and 600 terms, JAX's caps

    def guard(v: Any) -> Any:
        return _where(lax.lt(lax.abs(v), floor), floor, v)

    def term(c: Any, d: Any, h: Any, numerator: Any) -> tuple[Any, Any, Any, Any]:
        d = lax.div(1.0, guard(lax.add(1.0, lax.mul(numerator, d))))
        c = guard(lax.add(1.0, lax.div(numerator, c)))
        delta = lax.mul(c, d)
        return c, d, lax.mul(h, delta), delta

    def body(vals: tuple[Any, ...]) -> tuple[Any, ...]:
        m, going, c, d, h = vals
        a_2m = lax.add(a, lax.mul(2.0, m))
        even = lax.div(lax.mul(lax.mul(m, lax.sub(b, m)), x), lax.mul(lax.sub(a_2m, 1.0), a_2m))
        new_c, new_d, new_h, _ = term(c, d, h, even)
        odd = lax.mul(lax.mul(lax.add(a, m), lax.add(lax.add(a, b), m)), x)
        odd = lax.neg(lax.div(odd, lax.mul(a_2m, lax.add(a_2m, 1.0))))
        new_c, new_d, new_h, delta = term(new_c, new_d, new_h, odd)
        still = lax.bitwise_and(going, lax.gt(lax.abs(lax.sub(delta, 1.0)), eps))
        new = (new_c, new_d, new_h)
        return (lax.add(m, 1.0), still) + tuple(
            _where(going, n, o) for n, o in zip(new, (c, d, h), strict=True)
        )

    def cond(vals: tuple[Any, ...]) -> Any:
        return lax.bitwise_and(_any(vals[1]), lax.le(vals[0], max_steps))

    d0 = lax.div(lax.mul(lax.add(a, b), x), lax.add(a, 1.0))
    d0 = lax.div(1.0, guard(lax.sub(1.0, d0)))
    one = lax.full_like(x, 1)
    init = (lax.full((), 1, dtype), lax.full(get_aval(x).shape, True, np.bool_), one, d0, d0)
    return lax.while_loop(cond, body, init)[4]


def _lbeta(a: Any, b: Any) -> Any:
    # NB: lgamma sums, as JAX's betainc: `_betaln`'s algdiv branch is only ~1e-7 accurate for
    # 2 < a < 8 <= b, which the incomplete beta's ~1e-14 would inherit.
    return lax.sub(lax.add(lax.lgamma(a), lax.lgamma(b)), lax.lgamma(lax.add(a, b)))


def _betainc_dx(a: Any, b: Any, x: Any) -> Any:
    """The Beta(a, b) density, d/dx betainc."""
    log_pdf = lax.add(
        lax.mul(lax.sub(a, 1.0), lax.log(x)), lax.mul(lax.sub(b, 1.0), lax.log1p(lax.neg(x)))
    )
    return lax.exp(lax.sub(log_pdf, _lbeta(a, b)))


@custom_jvp
def _betainc(a: Any, b: Any, x: Any) -> Any:
    # The fraction converges fast below the mean-ish point (a + 1) / (a + b + 2); above it,
    # I_x(a, b) = 1 - I_{1-x}(b, a) (DLMF 8.17.4).
    swap = lax.gt(x, lax.div(lax.add(a, 1.0), lax.add(lax.add(a, b), 2.0)))
    p, q = _where(swap, b, a), _where(swap, a, b)
    log_x, log_1mx = lax.log(x), lax.log1p(lax.neg(x))
    log_y, log_1my = _where(swap, log_1mx, log_x), _where(swap, log_x, log_1mx)
    y = _where(swap, lax.sub(1.0, x), x)
    zero_a = lax.bitwise_or(lax.eq(a, 0.0), lax.eq(b, np.inf))
    zero_b = lax.bitwise_or(lax.eq(b, 0.0), lax.eq(a, np.inf))
    nan = _isnan(lax.add(lax.add(a, b), x))
    nan = lax.bitwise_or(nan, lax.bitwise_or(lax.lt(a, 0.0), lax.lt(b, 0.0)))
    nan = lax.bitwise_or(nan, lax.bitwise_or(lax.lt(x, 0.0), lax.gt(x, 1.0)))
    nan = lax.bitwise_or(nan, lax.bitwise_and(zero_a, zero_b))
    # Safe operands where a special value decides, so the loop and its derivative stay finite.
    special = lax.bitwise_or(nan, lax.bitwise_or(zero_a, zero_b))
    p, q, y = (_where(special, safe, v) for v, safe in ((p, 1.0), (q, 1.0), (y, 0.5)))
    cf = _betainc_continued_fraction(p, q, y)
    front = lax.sub(lax.add(lax.mul(p, log_y), lax.mul(q, log_1my)), _lbeta(p, q))
    value = lax.div(lax.mul(cf, lax.exp(front)), p)
    value = _where(swap, lax.sub(1.0, value), value)
    x_zero, x_one = lax.eq(x, 0.0), lax.eq(x, 1.0)
    is_zero = lax.bitwise_or(
        lax.bitwise_and(zero_b, lax.bitwise_not(x_one)), lax.bitwise_and(zero_a, x_zero)
    )
    is_one = lax.bitwise_or(
        lax.bitwise_and(zero_a, lax.bitwise_not(x_zero)), lax.bitwise_and(zero_b, x_one)
    )
    value = _where(is_zero, 0.0, _where(is_one, 1.0, value))
    return _where(nan, np.nan, value)


def _betainc_jvp(primals, tangents):
    (a, b, x), (a_dot, b_dot, x_dot) = primals, tangents
    if type(a_dot) is not Zero or type(b_dot) is not Zero:
        raise ValueError(
            f"{_NAME}.betainc: the derivative with respect to a and b is not supported (as in "
            "JAX); differentiate in x only"
        )
    out = _betainc(a, b, x)
    if type(x_dot) is Zero:
        return out, lax.full_like(out, 0)
    return out, lax.mul(x_dot, _betainc_dx(a, b, x))


_betainc.defjvp(_betainc_jvp, symbolic_zeros=True)


def betainc(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Any:
    """The regularized incomplete beta function `integral(t**(a-1) (1-t)**(b-1), t=0..x) /
    beta(a, b)`: JAX's `scipy.special.betainc` (a continued fraction, as JAX's).

    Special values follow scipy: NaN for a < 0, b < 0, x outside [0, 1] or a == b == 0; a == 0
    (or b == inf) gives 1 for x > 0, b == 0 (or a == inf) gives 0 for x < 1.

    Raises:
      ValueError: under differentiation in `a` or `b`, as JAX (the derivative in `x` is the
        Beta(a, b) density).
    """
    a, b, x = _broadcast("betainc", *_promote_inexact("betainc", a, b, x))
    return _betainc(a, b, x)


def factorial(n: ArrayLike, exact: bool = False) -> Any:
    """`n!` as `gamma(n + 1)`, 0 for n < 0: JAX's `scipy.special.factorial`.

    Raises:
      NotImplementedError: for `exact=True`, as JAX (exact factorials overflow int64 at 21).
    """
    if exact:
        raise NotImplementedError(f"{_NAME}.factorial: exact=True is not supported")
    (n,) = _promote_inexact("factorial", n)
    return _where(lax.lt(n, 0.0), 0.0, lax.exp(lax.lgamma(lax.add(n, 1.0))))


def comb(N: ArrayLike, k: ArrayLike, *, repetition: bool = False) -> Any:
    """The binomial coefficient "N choose k" as a float, `exp(gammaln(N + 1) - gammaln(k + 1)
    - gammaln(N - k + 1))`: JAX's `scipy.special.comb` (which has no `exact`).

    0 where N < 0, k < 0 or k > N; with `repetition`, `comb(N + k - 1, k)` and 1 at k == 0.
    NB: as JAX (and scipy's float path), non-integer N and k are not rounded.
    """
    N, k = _broadcast("comb", *_promote_inexact("comb", N, k))
    if repetition:
        return _where(
            lax.bitwise_and(lax.eq(k, 0.0), lax.ge(N, 0.0)),
            1.0,
            comb(lax.sub(lax.add(N, k), 1.0), k),
        )
    valid = lax.bitwise_and(lax.bitwise_and(lax.le(k, N), lax.ge(N, 0.0)), lax.ge(k, 0.0))
    N, k = _where(valid, N, 0.0), _where(valid, k, 0.0)
    log_comb = lax.sub(lax.lgamma(lax.add(N, 1.0)), lax.lgamma(lax.add(k, 1.0)))
    log_comb = lax.sub(log_comb, lax.lgamma(lax.add(lax.sub(N, k), 1.0)))
    return _where(valid, lax.exp(log_comb), 0.0)


def multigammaln(a: ArrayLike, d: int) -> Any:
    """The log of the multivariate gamma function of dimension `d`: JAX's
    `scipy.special.multigammaln`.

    Raises:
      TypeError: if `d` is traced (it sets the number of terms, so it must be concrete).
    """
    if isinstance(d, Tracer):
        raise TypeError(
            f"{_NAME}.multigammaln: d must be a concrete integer, got a traced value; "
            "mark it static (static_argnums) under jit"
        )
    d = int(d)
    (a,) = _promote_inexact("multigammaln", a)
    dtype = get_aval(a).dtype
    # 0.25 d (d - 1) is exact; log(pi) is taken in a's dtype, as JAX.
    constant = lax.mul(0.25 * d * (d - 1), lax.log(lax.full((), np.pi, dtype)))
    half_steps = device_put(np.arange(d, dtype=dtype) / dtype.type(2))
    terms = lax.lgamma(lax.sub(lax.expand_dims(a, (get_aval(a).ndim,)), half_steps))
    return lax.add(lax.reduce_sum(terms, (get_aval(a).ndim,)), constant)


@custom_jvp
def _poch(z: Any, m: Any) -> Any:
    ratio = lax.div(_gamma(lax.add(z, m)), _gamma(z))
    return _where(lax.eq(m, 0.0), _full(z, 1.0), ratio)


_poch.defjvps(
    lambda z_dot, ans, z, m: lax.mul(
        lax.mul(lax.sub(lax.digamma(lax.add(z, m)), lax.digamma(z)), _poch(z, m)), z_dot
    ),
    lambda m_dot, ans, z, m: lax.mul(lax.mul(lax.digamma(lax.add(z, m)), _poch(z, m)), m_dot),
)


def poch(z: ArrayLike, m: ArrayLike) -> Any:
    """The Pochhammer symbol `gamma(z + m) / gamma(z)` (1 where m == 0): JAX's
    `scipy.special.poch`, with its digamma derivatives in z and m."""
    z, m = _broadcast("poch", *_promote_inexact("poch", z, m))
    return _poch(z, m)


# --- zeta -----------------------------------------------------------------------------------

# (2k)! / B_2k for the Bernoulli numbers B_2k: the Euler-Maclaurin tail of the Hurwitz zeta.
_BERNOULLI_COEFS = (
    12,
    -720,
    30240,
    -1209600,
    47900160,
    -1307674368000 / 691,
    74724249600,
    -10670622842880000 / 3617,
    5109094217170944000 / 43867,
    -802857662698291200000 / 174611,
    14101100039391805440000 / 77683,
    -1693824136731743669452800000 / 236364091,
    186134520519971831808000000 / 657931,
    -37893265687455865519472640000000 / 3392780147,
    759790291646040068357842010112000000 / 1723168255201,
    -134196726836183700385281186201600000000 / 7709321041217,
)


def _zeta_series(s: Any, a: Any) -> Any:
    """The truncated Euler-Maclaurin sum for zeta(s, a) (Johansson 2015, formula (5)): JAX
    differentiates this, as the Hurwitz zeta has no closed-form derivative in s."""
    dtype = get_aval(a).dtype
    n = m = 8 if dtype == _F32 else 16
    ndim = get_aval(a).ndim
    s_, a_ = lax.expand_dims(s, (ndim,)), lax.expand_dims(a, (ndim,))
    k = device_put(np.arange(n, dtype=dtype))
    head = lax.reduce_sum(lax.pow(lax.add(a_, k), lax.neg(s_)), (ndim,))
    a_n = lax.add(a, float(n))
    integral = lax.div(lax.pow(a_n, lax.sub(1.0, s)), lax.sub(s, 1.0))
    t0 = lax.pow(a_n, lax.neg(s))
    steps = lax.div(lax.add(s_, device_put(np.arange(2 * m, dtype=dtype))), lax.add(a_, float(n)))
    products = lax.cumprod(steps, axis=ndim)
    shape = get_aval(products).shape
    t1 = lax.slice(products, (0,) * (ndim + 1), shape, (1,) * ndim + (2,))
    t1 = lax.min(t1, float(dtypes.finfo(dtype).max))
    t1 = lax.div(t1, device_put(np.array(_BERNOULLI_COEFS[:m], dtype=dtype)))
    tail = lax.mul(t0, lax.add(0.5, lax.reduce_sum(t1, (ndim,))))
    return lax.add(lax.add(head, integral), tail)


@custom_jvp
def _zeta(x: Any, q: Any) -> Any:
    return lax.zeta(x, q)


@_zeta.defjvp
def _zeta_jvp(primals, tangents):
    return jvp(_zeta_series, primals, tangents)


def zeta(x: ArrayLike, q: ArrayLike | None = None) -> Any:
    """The Hurwitz zeta function `sum((n + q) ** -x for n >= 0)`: JAX's `scipy.special.zeta`.

    As JAX, derivatives (in both arguments) are those of a truncated Euler-Maclaurin series,
    and so is the primal value computed alongside them.

    Raises:
      NotImplementedError: for `q=None` (the Riemann zeta function), as JAX.
    """
    if q is None:
        raise NotImplementedError(
            f"{_NAME}.zeta: the Riemann zeta function (q=None) is not implemented; pass q=1"
        )
    x, q = _broadcast("zeta", *_promote_inexact("zeta", x, q))
    return _zeta(x, q)


# --- exponential integrals (Cephes' ei.c and expn.c) ----------------------------------------

# expi on (0, 2]: x P(x) / Q(x) + euler_gamma + log(x).
_EXPI_SMALL = (
    (-5.350447357812542947283e0, 2.185049168816613393830e2, -4.176572384826693777058e3)
    + (5.541176756393557601232e4, -3.313381331178144034309e5, 1.592627163384945414220e6),
    (1.0, -5.250547959112862969197e1, 1.259616186786790571525e3, -1.756549581973534652631e4)
    + (1.493062117002725991967e5, -7.294949239640527645655e5, 1.592627163384945429726e6),
)
# expi on (2**k, 2**(k+1)] for k = 1..5 and beyond 64: exp(x) / x (1 + P(1/x) / (x Q(1/x))).
_EXPI_RANGES = (
    (
        (1.981808503259689673238e-2, -1.271645625984917501326e0, -2.088160335681228318920e0)
        + (2.755544509187936721172e0, -4.409507048701600257171e-1, 4.665623805935891391017e-2)
        + (-1.545042679673485262580e-3, 7.059980605299617478514e-5),
        (1.0, 1.476498670914921440652e0, 5.629177174822436244827e-1, 1.699017897879307263248e-1)
        + (2.291647179034212017463e-2, 4.450150439728752875043e-3, 1.727439612206521482874e-4)
        + (3.953167195549672482304e-5,),
    ),
    (
        (-1.373215375871208729803e0, -7.084559133740838761406e-1, 1.580806855547941010501e0)
        + (-2.601500427425622944234e-1, 2.994674694113713763365e-2, -1.038086040188744005513e-3)
        + (4.371064420753005429514e-5, 2.141783679522602903795e-6),
        (1.0, 8.585231423622028380768e-1, 4.483285822873995129957e-1, 7.687932158124475434091e-2)
        + (2.449868241021887685904e-2, 8.832165941927796567926e-4, 4.590952299511353531215e-4)
        + (-4.729848351866523044863e-6, 2.665195537390710170105e-6),
    ),
    (
        (-2.106934601691916512584e0, 1.732733869664688041885e0, -2.423619178935841904839e-1)
        + (2.322724180937565842585e-2, 2.372880440493179832059e-4, -8.343219561192552752335e-5)
        + (1.363408795605250394881e-5, -3.655412321999253963714e-7, 1.464941733975961318456e-8)
        + (6.176407863710360207074e-10,),
        (1.0, -2.298062239901678075778e-1, 1.105077041474037862347e-1)
        + (-1.566542966630792353556e-2, 2.761106850817352773874e-3, -2.089148012284048449115e-4)
        + (1.708528938807675304186e-5, -4.459311796356686423199e-7, 1.394634930353847498145e-8)
        + (6.150865933977338354138e-10,),
    ),
    (
        (-2.458119367674020323359e-1, -1.483382253322077687183e-1, 7.248291795735551591813e-2)
        + (-1.348315687380940523823e-2, 1.342775069788636972294e-3, -7.942465637159712264564e-5)
        + (2.644179518984235952241e-6, -4.239473659313765177195e-8),
        (1.0, -1.044225908443871106315e-1, -2.676453128101402655055e-1, 9.695000254621984627876e-2)
        + (-1.601745692712991078208e-2, 1.496414899205908021882e-3, -8.462452563778485013756e-5)
        + (2.728938403476726394024e-6, -4.239462431819542051337e-8),
    ),
    (
        (1.212561118105456670844e-1, -5.823133179043894485122e-1, 2.348887314557016779211e-1)
        + (-3.040034318113248237280e-2, 1.510082146865190661777e-3, -2.523137095499571377122e-5),
        (1.0, -1.002252150365854016662e0, 2.928709694872224144953e-1, -3.337004338674007801307e-2)
        + (1.560544881127388842819e-3, -2.523137093603234562648e-5),
    ),
    (
        (-7.657847078286127362028e-1, 6.886192415566705051750e-1, -2.132598113545206124553e-1)
        + (3.346107552384193813594e-2, -3.076541477344756050249e-3, 1.747119316454907477380e-4)
        + (-6.103711682274170530369e-6, 1.218032765428652199087e-7, -1.086076102793290233007e-9),
        (1.0, -1.888802868662308731041e0, 1.066691687211408896850e0, -2.751915982306380647738e-1)
        + (3.930852688233823569726e-2, -3.414684558602365085394e-3, 1.866844370703555398195e-4)
        + (-6.345146083130515357861e-6, 1.239754287483206878024e-7, -1.086076102793126632978e-9),
    ),
)


def _expi_positive(x: Any) -> Any:
    """expi for x > 0 (any value where x <= 0, which the caller replaces)."""
    num: tuple[float, ...]
    den: tuple[float, ...]
    num, den = _EXPI_SMALL
    small = lax.add(lax.mul(x, lax.div(_polyval(num, x), _polyval(den, x))), float(np.euler_gamma))
    out = lax.add(small, lax.log(x))
    w = lax.div(1.0, x)
    for k, (num, den) in enumerate(_EXPI_RANGES, start=1):
        f = lax.add(lax.mul(w, lax.div(_polyval(num, w), _polyval(den, w))), 1.0)
        out = _where(lax.gt(x, float(2**k)), lax.mul(lax.mul(lax.exp(x), w), f), out)
    return out


def _expn_series(n: Any, x: Any, enabled: Any) -> Any:
    """E_n(x) for 0 < x <= 1, n >= 1 (DLMF 8.19.8): the power series of the entire part,
    with `psi = digamma(n) - log(x)` for Cephes' harmonic sum."""
    eps = float(dtypes.finfo(get_aval(x).dtype).eps)
    neg_x = lax.neg(x)

    def body(vals: tuple[Any, ...]) -> tuple[Any, ...]:
        going, xk, yk, pk, ans = vals
        xk = lax.add(xk, 1.0)
        yk = lax.div(lax.mul(yk, neg_x), xk)
        pk = lax.add(pk, 1.0)
        ans = lax.add(
            ans, _where(lax.ne(pk, 0.0), lax.div(yk, _where(lax.ne(pk, 0.0), pk, 1.0)), 0.0)
        )
        t = _where(lax.ne(ans, 0.0), lax.abs(lax.div(yk, ans)), 1.0)
        still = lax.bitwise_and(going, lax.gt(t, eps))
        new = (xk, yk, pk, ans)
        return (still,) + tuple(_where(going, a, b) for a, b in zip(new, vals[1:], strict=True))

    one = lax.full_like(x, 1)
    n1 = _where(lax.eq(n, 1.0), 2.0, n)
    ans = _where(lax.eq(n, 1.0), 0.0, lax.div(1.0, lax.sub(1.0, n1)))
    init = (enabled, lax.full_like(x, 0), one, lax.sub(1.0, n), ans)
    ans = lax.while_loop(lambda v: _any(v[0]), body, init)[4]
    # digamma(1) = -euler_gamma exactly: float32's digamma is 2.5 ulp off there, which the
    # cancellation in exp1 near x = 1 would magnify 40-fold.
    digamma_n = _where(lax.eq(n, 1.0), -float(np.euler_gamma), lax.digamma(n))
    psi = lax.sub(digamma_n, lax.log(x))
    # (-x)**(n-1) / gamma(n), in logs so large n does not overflow.
    power = lax.exp(lax.sub(lax.mul(lax.sub(n, 1.0), lax.log(x)), lax.lgamma(n)))
    odd = lax.ne(lax.rem(lax.sub(n, 1.0), 2.0), 0.0)
    power = _where(odd, lax.neg(power), power)
    return lax.sub(lax.mul(power, psi), ans)


def _expn_continued_fraction(n: Any, x: Any, enabled: Any) -> Any:
    """E_n(x) for x > 1 (DLMF 8.19.17), by Cephes' recurrence for its convergents."""
    dtype = get_aval(x).dtype
    eps = float(dtypes.finfo(dtype).eps)
    big = 1.44115188075855872e17

    def body(vals: tuple[Any, ...]) -> tuple[Any, ...]:
        k, going, pkm2, qkm2, pkm1, qkm1, ans = vals
        k = lax.add(k, 1.0)
        odd = lax.ne(lax.rem(k, 2.0), 0.0)
        yk = _where(odd, lax.full_like(x, 1), x)
        xk = _where(
            odd,
            lax.add(n, lax.div(lax.sub(k, 1.0), 2.0)),
            lax.broadcast_to(lax.div(k, 2.0), get_aval(x).shape),
        )
        pk = lax.add(lax.mul(pkm1, yk), lax.mul(pkm2, xk))
        qk = lax.add(lax.mul(qkm1, yk), lax.mul(qkm2, xk))
        nonzero = lax.ne(qk, 0.0)
        r = lax.div(pk, _where(nonzero, qk, 1.0))
        t = _where(nonzero, lax.abs(lax.div(lax.sub(ans, r), r)), 1.0)
        new_ans = _where(nonzero, r, ans)
        rescale = _where(lax.gt(lax.abs(pk), big), lax.full_like(pk, 1.0 / big), 1.0)
        new = tuple(lax.mul(v, rescale) for v in (pkm1, qkm1, pk, qk)) + (new_ans,)
        still = lax.bitwise_and(going, lax.gt(t, eps))
        return (k, still) + tuple(_where(going, a, b) for a, b in zip(new, vals[2:], strict=True))

    one = lax.full_like(x, 1)
    x_n = lax.add(x, n)
    init = (lax.full((), 1, dtype), enabled, one, x, one, x_n, lax.div(1.0, x_n))
    ans = lax.while_loop(lambda v: _any(v[1]), body, init)[6]
    return lax.mul(ans, lax.exp(lax.neg(x)))


def _expn_large_order(n: Any, x: Any) -> Any:
    """E_n(x) for n >= 5000: the first terms of the uniform asymptotic expansion (DLMF 8.20.3)."""
    xk = lax.add(x, n)
    yk = lax.div(1.0, lax.square(xk))
    ans = lax.add(lax.sub(lax.mul(6.0, lax.square(x)), lax.mul(lax.mul(8.0, n), x)), lax.square(n))
    ans = lax.mul(lax.mul(yk, n), ans)
    ans = lax.mul(yk, lax.add(ans, lax.mul(n, lax.sub(n, lax.mul(2.0, x)))))
    ans = lax.mul(yk, lax.add(ans, n))
    return lax.div(lax.mul(lax.add(ans, 1.0), lax.exp(lax.neg(x))), xk)


def _expn_impl(n: Any, x: Any) -> Any:
    positive = lax.gt(x, 0.0)
    series_ok = lax.bitwise_and(lax.bitwise_and(positive, lax.le(x, 1.0)), lax.ge(n, 1.0))
    fraction_ok = lax.bitwise_and(lax.gt(x, 1.0), lax.lt(x, np.inf))
    large_order = lax.ge(n, 5000.0)
    series_ok = lax.bitwise_and(series_ok, lax.bitwise_not(large_order))
    fraction_ok = lax.bitwise_and(fraction_ok, lax.bitwise_not(large_order))
    safe_n = _where(lax.ge(n, 1.0), n, 1.0)
    series = _expn_series(safe_n, _where(series_ok, x, 0.5), series_ok)
    fraction = _expn_continued_fraction(safe_n, _where(fraction_ok, x, 2.0), fraction_ok)
    out = _where(lax.le(x, 1.0), series, fraction)
    out = _where(large_order, _expn_large_order(n, x), out)
    out = _where(lax.eq(n, 0.0), lax.div(lax.exp(lax.neg(x)), x), out)
    at_zero = _where(
        lax.lt(n, 2.0), np.inf, lax.div(1.0, lax.sub(_where(lax.lt(n, 2.0), 2.0, n), 1.0))
    )
    out = _where(lax.eq(x, 0.0), at_zero, out)
    out = _where(lax.eq(x, np.inf), 0.0, out)
    undefined = lax.bitwise_or(lax.lt(n, 0.0), lax.lt(x, 0.0))
    return _where(lax.bitwise_or(undefined, _isnan(lax.add(n, x))), np.nan, out)


@custom_jvp
def _expn(n: Any, x: Any) -> Any:
    return _expn_impl(n, x)


def _expn_jvp(primals, tangents):
    (n, x), (n_dot, x_dot) = primals, tangents
    if type(n_dot) is not Zero:
        raise ValueError(
            f"{_NAME}.expn: the derivative with respect to n is not supported (n is an order)"
        )
    out = _expn(n, x)
    if type(x_dot) is Zero:
        return out, lax.full_like(out, 0)
    # E_n' = -E_{n-1}; NB: for n == 0 (E_{-1} = exp(-x) (1 + 1/x) / x) JAX gives NaN.
    below = _expn(_where(lax.ge(n, 1.0), lax.sub(n, 1.0), 1.0), x)
    e_minus_1 = lax.mul(lax.div(lax.exp(lax.neg(x)), x), lax.add(1.0, lax.div(1.0, x)))
    return out, lax.mul(x_dot, lax.neg(_where(lax.eq(n, 0.0), e_minus_1, below)))


_expn.defjvp(_expn_jvp, symbolic_zeros=True)


def expn(n: ArrayLike, x: ArrayLike) -> Any:
    """The generalized exponential integral `E_n(x) = integral(exp(-x t) / t**n, t=1..inf)`:
    JAX's `scipy.special.expn` (Cephes' series, continued fraction and large-order expansion).

    `n` is a whole number (as a float or integer array); NaN for n < 0 or x < 0, as scipy.

    Raises:
      ValueError: under differentiation in `n`. The derivative in x is `-expn(n - 1, x)`.
    """
    n, x = _broadcast("expn", *_promote_inexact("expn", n, x))
    return _expn(n, x)


def exp1(x: ArrayLike) -> Any:
    """The exponential integral `E_1(x) = integral(exp(-t) / t, t=x..inf)`: JAX's
    `scipy.special.exp1` (`expn(1, x)`); NaN for x < 0, as scipy's real version."""
    (x,) = _promote_inexact("exp1", x)
    return _expn(lax.full_like(x, 1), x)


@custom_jvp
def _expi(x: Any) -> Any:
    negative = lax.lt(x, 0.0)
    safe_positive = _where(lax.gt(x, 0.0), x, 1.0)
    out = _where(
        negative,
        lax.neg(_expn_impl(lax.full_like(x, 1), lax.neg(x))),
        _expi_positive(safe_positive),
    )
    out = _where(lax.eq(x, np.inf), np.inf, _where(_isnan(x), np.nan, out))
    return _where(lax.eq(x, 0.0), -np.inf, out)


_expi.defjvps(lambda x_dot, ans, x: lax.mul(x_dot, lax.div(lax.exp(x), x)))


def expi(x: ArrayLike) -> Any:
    """The exponential integral `Ei(x) = integral(exp(t) / t, t=-inf..x)` (the principal
    value for x > 0): JAX's `scipy.special.expi`, with derivative `exp(x) / x`."""
    (x,) = _promote_inexact("expi", x)
    return _expi(x)


# --- Box-Cox --------------------------------------------------------------------------------


def _boxcox_of_log(log_x: Any, lmbda: Any) -> Any:
    # expm1(lmbda log x) / lmbda, and log x itself at lmbda == 0 (its limit).
    zero = lax.eq(lmbda, 0.0)
    safe = _where(zero, 1.0, lmbda)
    return _where(zero, log_x, lax.div(lax.expm1(lax.mul(safe, log_x)), safe))


def boxcox(x: ArrayLike, lmbda: ArrayLike) -> Any:
    """The Box-Cox transform `(x**lmbda - 1) / lmbda` (`log(x)` at lmbda == 0), as
    `expm1(lmbda * log(x)) / lmbda`: JAX's `scipy.special.boxcox` (NaN for x < 0)."""
    x, lmbda = _broadcast("boxcox", *_promote_inexact("boxcox", x, lmbda))
    return _boxcox_of_log(lax.log(x), lmbda)


def boxcox1p(x: ArrayLike, lmbda: ArrayLike) -> Any:
    """The Box-Cox transform of `1 + x`, `((1 + x)**lmbda - 1) / lmbda` (`log1p(x)` at
    lmbda == 0), accurate for small x: JAX's `scipy.special.boxcox1p`."""
    x, lmbda = _broadcast("boxcox1p", *_promote_inexact("boxcox1p", x, lmbda))
    return _boxcox_of_log(lax.log1p(x), lmbda)


# --- modified Bessel functions --------------------------------------------------------------


def i0e(x: ArrayLike) -> Any:
    """`exp(-abs(x)) * i0(x)`: JAX's `scipy.special.i0e`."""
    (x,) = _promote_inexact("i0e", x)
    return lax.bessel_i0e(x)


def i0(x: ArrayLike) -> Any:
    """The modified Bessel function of order 0: JAX's `scipy.special.i0`.

    NB: its derivative at 0 is i1(0) = 0; JAX's is 1 (its `abs` has slope 1 at 0, which the
    sign(x) in i0e's derivative does not cancel).
    """
    (x,) = _promote_inexact("i0", x)
    return lax.mul(lax.exp(_abs_smooth_at_zero(x)), lax.bessel_i0e(x))


def i1e(x: ArrayLike) -> Any:
    """`exp(-abs(x)) * i1(x)`: JAX's `scipy.special.i1e`."""
    (x,) = _promote_inexact("i1e", x)
    return lax.bessel_i1e(x)


def i1(x: ArrayLike) -> Any:
    """The modified Bessel function of order 1: JAX's `scipy.special.i1`."""
    (x,) = _promote_inexact("i1", x)
    return lax.mul(lax.exp(_abs_smooth_at_zero(x)), lax.bessel_i1e(x))


def _abs_smooth_at_zero(x: Any) -> Any:
    """|x| as x * sign(x): slope sign(x), 0 at 0, as the e-scaled Bessel derivatives assume."""
    return lax.mul(x, lax.sign(x))


# --- the normal distribution ----------------------------------------------------------------


def _ndtr(x: Any) -> Any:
    dtype = get_aval(x).dtype.type
    half_sqrt_2 = float(dtype(0.5) * np.sqrt(dtype(2.0)))
    w = lax.mul(x, half_sqrt_2)
    z = lax.abs(w)
    y = lax.select_n(
        lax.lt(z, half_sqrt_2),
        lax.select_n(lax.gt(w, 0.0), lax.erfc(z), lax.sub(2.0, lax.erfc(z))),
        lax.add(1.0, lax.erf(w)),
    )
    return lax.mul(0.5, y)


def ndtr(x: ArrayLike) -> Any:
    """The standard normal CDF `(1 + erf(x / sqrt(2))) / 2`: JAX's `scipy.special.ndtr`.

    Raises:
      TypeError: unless `x` is float32 or float64, as JAX.
    """
    return _ndtr(_float32_or_64("ndtr", x))


# Cephes' ndtri: rational approximations on (exp(-2), 1 - exp(-2)) and in the two tails.
_NDTRI_P0: tuple[float, ...]
_NDTRI_P0 = (-5.99633501014107895267e1, 9.80010754185999661536e1, -5.66762857469070293439e1)
_NDTRI_P0 += (1.39312609387279679503e1, -1.23916583867381258016e0)
_NDTRI_Q0: tuple[float, ...]
_NDTRI_Q0 = (1.0, 1.95448858338141759834e0, 4.67627912898881538453e0, 8.63602421390890590575e1)
_NDTRI_Q0 += (-2.25462687854119370527e2, 2.00260212380060660359e2, -8.20372256168333339912e1)
_NDTRI_Q0 += (1.59056225126211695515e1, -1.18331621121330003142e0)
_NDTRI_P1: tuple[float, ...]
_NDTRI_P1 = (4.05544892305962419923e0, 3.15251094599893866154e1, 5.71628192246421288162e1)
_NDTRI_P1 += (4.40805073893200834700e1, 1.46849561928858024014e1, 2.18663306850790267539e0)
_NDTRI_P1 += (-1.40256079171354495875e-1, -3.50424626827848203418e-2, -8.57456785154685413611e-4)
_NDTRI_Q1: tuple[float, ...]
_NDTRI_Q1 = (1.0, 1.57799883256466749731e1, 4.53907635128879210584e1, 4.13172038254672030440e1)
_NDTRI_Q1 += (1.50425385692907503408e1, 2.50464946208309415979e0, -1.42182922854787788574e-1)
_NDTRI_Q1 += (-3.80806407691578277194e-2, -9.33259480895457427372e-4)
_NDTRI_P2: tuple[float, ...]
_NDTRI_P2 = (3.23774891776946035970e0, 6.91522889068984211695e0, 3.93881025292474443415e0)
_NDTRI_P2 += (1.33303460815807542389e0, 2.01485389549179081538e-1, 1.23716634817820021358e-2)
_NDTRI_P2 += (3.01581553508235416007e-4, 2.65806974686737550832e-6, 6.23974539184983293730e-9)
_NDTRI_Q2: tuple[float, ...]
_NDTRI_Q2 = (1.0, 6.02427039364742014255e0, 3.67983563856160859403e0, 1.37702099489081330271e0)
_NDTRI_Q2 += (2.16236993594496635890e-1, 1.34204006088543189037e-2, 3.28014464682127739104e-4)
_NDTRI_Q2 += (2.89247864745380683936e-6, 6.79019408009981274425e-9)


def ndtri(p: ArrayLike) -> Any:
    """The inverse of `ndtr` (the standard normal quantile): JAX's `scipy.special.ndtri`.

    Raises:
      TypeError: unless `p` is float32 or float64, as JAX.
    """
    p = _float32_or_64("ndtri", p)
    complement = _where(lax.gt(p, float(-np.expm1(-2.0))), lax.sub(1.0, p), p)
    # 0 would make NaNs in the unused branches (and their gradients): replace it.
    sanitized = _where(lax.eq(complement, 0.0), 0.5, complement)
    # Centre: x / sqrt(2 pi) = w + w**3 P0(w**2) / Q0(w**2).
    w = lax.sub(sanitized, 0.5)
    ww = lax.square(w)
    ratio = lax.div(_polyval(_NDTRI_P0, ww), _polyval(_NDTRI_Q0, ww))
    x_centre = lax.add(w, lax.mul(lax.mul(w, ww), ratio))
    x_centre = lax.mul(x_centre, float(-np.sqrt(2.0 * np.pi)))
    # Tails: x = z - log(z) / z - P(1/z) / Q(1/z) / z with z = sqrt(-2 log(p)).
    z = lax.sqrt(lax.mul(-2.0, lax.log(sanitized)))
    first = lax.sub(z, lax.div(lax.log(z), z))
    inv_z = lax.div(1.0, z)
    far = lax.div(lax.div(_polyval(_NDTRI_P2, inv_z), _polyval(_NDTRI_Q2, inv_z)), z)
    near = lax.div(lax.div(_polyval(_NDTRI_P1, inv_z), _polyval(_NDTRI_Q1, inv_z)), z)
    x_tail = _where(lax.ge(z, 8.0), lax.sub(first, far), lax.sub(first, near))
    x = _where(lax.gt(sanitized, float(np.exp(-2.0))), x_centre, x_tail)
    x = _where(lax.gt(p, float(1.0 - np.exp(-2.0))), x, lax.neg(x))
    inf = _full(p, np.inf)
    return _where(lax.eq(p, 0.0), lax.neg(inf), _where(lax.eq(p, 1.0), inf, x))


def _log_ndtr_lower(x: Any, series_order: int) -> Any:
    """log(ndtr(x)) for x << -1 from the asymptotic series
    ndtr(x) ~ exp(-x**2/2) / (-x sqrt(2 pi)) * (1 + sum((-1)**n (2n-1)!! / x**(2n)))."""
    x_2 = lax.square(x)
    log_scale = lax.sub(lax.mul(-0.5, x_2), lax.log(lax.neg(x)))
    log_scale = lax.sub(log_scale, float(0.5 * np.log(2.0 * np.pi)))
    if series_order <= 0:
        return lax.add(log_scale, 0.0)
    even_sum, odd_sum = lax.full_like(x, 0), lax.full_like(x, 0)
    x_2n = x_2
    for n in range(1, series_order + 1):
        term = lax.div(float(np.prod(np.arange(2 * n - 1, 1, -2))), x_2n)
        if n % 2:
            odd_sum = lax.add(odd_sum, term)
        else:
            even_sum = lax.add(even_sum, term)
        x_2n = lax.mul(x_2n, x_2)
    return lax.add(log_scale, lax.log(lax.sub(lax.add(1.0, even_sum), odd_sum)))


def _log_ndtr_impl(x: Any, series_order: int) -> Any:
    # Three ranges, bounds by dtype as JAX: the asymptotic series below `lower`, log(ndtr) in
    # between, and log(1 - ndtr(-x)) ~ -ndtr(-x) above `upper`.
    lower, upper = (-20.0, 8.0) if get_aval(x).dtype == _F64 else (-10.0, 5.0)
    above = lax.gt(x, upper)
    # The clamps keep the unused branches finite, so their gradients do not make NaNs.
    ndtr_res = _ndtr(_where(above, lax.neg(x), lax.max(x, lower)))
    lower_res = _log_ndtr_lower(lax.min(x, lower), series_order)
    middle = _where(lax.gt(x, lower), lax.log(ndtr_res), lower_res)
    return _where(above, lax.neg(ndtr_res), middle)


_log_ndtr = custom_jvp(_log_ndtr_impl, nondiff_argnums=(1,))


@_log_ndtr.defjvp
def _log_ndtr_jvp(series_order, primals, tangents):
    (x,), (x_dot,) = primals, tangents
    ans = _log_ndtr(x, series_order)
    log_pdf = lax.sub(lax.mul(-0.5, lax.square(x)), float(np.log(np.sqrt(2 * np.pi))))
    return ans, lax.mul(x_dot, lax.exp(lax.sub(log_pdf, ans)))


def log_ndtr(x: ArrayLike, series_order: int = 3) -> Any:
    """`log(ndtr(x))`, accurate in both tails: JAX's `scipy.special.log_ndtr`, with its
    derivative `exp(log_pdf(x) - log_ndtr(x))`.

    Args:
      x: float32 or float64 values.
      series_order: terms of the asymptotic series used far in the lower tail, 0 to 30.

    Raises:
      TypeError: unless `x` is float32 or float64, or if `series_order` is not an int.
      ValueError: if `series_order` is outside [0, 30].
    """
    if not isinstance(series_order, int) or isinstance(series_order, bool):
        raise TypeError(
            f"{_NAME}.log_ndtr: series_order must be a Python int, "
            f"got {type(series_order).__name__}"
        )
    if not 0 <= series_order <= 30:
        raise ValueError(f"{_NAME}.log_ndtr: series_order must be in [0, 30], got {series_order}")
    return _log_ndtr(_float32_or_64("log_ndtr", x), series_order)


# --- spence and bernoulli -------------------------------------------------------------------

_SPENCE_A: tuple[float, ...]
_SPENCE_A = (4.65128586073990045278e-5, 7.31589045238094711071e-3, 1.33847639578309018650e-1)
_SPENCE_A += (8.79691311754530315341e-1, 2.71149851196553469920e0, 4.25697156008121755724e0)
_SPENCE_A += (3.29771340985225106936e0, 1.00000000000000000126e0)
_SPENCE_B: tuple[float, ...]
_SPENCE_B = (6.90990488912553276999e-4, 2.54043763932544379113e-2, 2.82974860602568089943e-1)
_SPENCE_B += (1.41172597751831069617e0, 3.63800533345137075418e0, 5.03278880143316990390e0)
_SPENCE_B += (3.54771340985225096217e0, 9.99999999999999998740e-1)


def _spence_positive(x: Any) -> Any:
    """Cephes' spence for x > 0: a rational approximation near 1, reached by x -> 1/x above 2
    and the reflections around 1/2 and 3/2."""
    beyond_2 = lax.gt(x, 2.0)
    x = _where(beyond_2, lax.div(1.0, x), x)
    beyond_1_5 = lax.gt(x, 1.5)
    below_half = lax.lt(x, 0.5)
    reflect = lax.bitwise_or(beyond_2, beyond_1_5)
    w = _where(
        beyond_1_5,
        lax.sub(lax.div(1.0, x), 1.0),
        _where(below_half, lax.neg(x), lax.sub(x, 1.0)),
    )
    y = lax.div(lax.mul(lax.neg(w), _polyval(_SPENCE_A, w)), _polyval(_SPENCE_B, w))
    log_x = lax.log(x)
    y_half = lax.sub(lax.sub(float(np.pi**2 / 6.0), lax.mul(log_x, lax.log(lax.sub(1.0, x)))), y)
    y = _where(below_half, y_half, y)
    y_reflected = lax.sub(lax.mul(-0.5, lax.square(log_x)), y)
    return _where(reflect, y_reflected, y)


def spence(x: ArrayLike) -> Any:
    """Spence's function `integral(log(t) / (1 - t), t=1..x)` for x >= 0 (NaN below): JAX's
    `scipy.special.spence`.

    Raises:
      TypeError: unless `x` is float32 or float64, as JAX.
    """
    x = _float32_or_64("spence", x)
    out = _where(lax.eq(x, 0.0), float(np.pi**2 / 6), _spence_positive(x))
    out = _where(lax.eq(x, 1.0), 0.0, out)
    return _where(lax.lt(x, 0.0), np.nan, out)


def bernoulli(n: int) -> Any:
    """The Bernoulli numbers B_0 .. B_n (with B_1 = -1/2) as float64, as JAX's
    `scipy.special.bernoulli`.

    Every value is rounded once from an exact one: rationals up to B_40, then the zeta
    formula in 50 digits. NB: JAX's series is ~3e-6 off at B_4, and scipy's ~2e-12.

    Raises:
      TypeError: if `n` is not a concrete integer.
      ValueError: if `n` is negative.
    """
    if isinstance(n, Tracer):
        raise TypeError(f"{_NAME}.bernoulli: n must be a concrete integer, got a traced value")
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"{_NAME}.bernoulli: n must be a non-negative integer, got {n}")
    return device_put(_bernoulli_numbers(n))


_EXACT_BERNOULLI = 40


def _bernoulli_numbers(n: int) -> np.ndarray:
    """B_0 .. B_n on the host: exact rationals up to B_40, the zeta formula beyond."""
    exact: list[Fraction] = []
    for m in range(min(n, _EXACT_BERNOULLI) + 1):  # sum_k C(m+1, k) B_k = 0 for m >= 1
        exact.append(
            Fraction(1)
            if m == 0
            else -sum((math.comb(m + 1, k) * exact[k] for k in range(m)), Fraction(0)) / (m + 1)
        )
    out = np.zeros(n + 1)
    out[: len(exact)] = [float(b) for b in exact]
    # B_2k = (-1)**(k+1) 2 (2k)! / (2 pi)**(2k) zeta(2k), zeta(2k) = 1 + 2**-2k + ... In
    # float64, (2 pi)**2k alone would be ~2k ulp off; in 50 digits it rounds once.
    with localcontext() as ctx:
        ctx.prec = 50
        two_pi = 2 * Decimal(_PI_50)
        for m in range(_EXACT_BERNOULLI + 2, n + 1, 2):
            zeta = 1 + sum(Decimal(k) ** -m for k in range(2, 8))  # 8**-42 is below 1e-37
            value = 2 * math.factorial(m) * zeta / two_pi**m
            out[m] = float(value if (m // 2) % 2 else -value)  # inf from B_260 on, as scipy's
    return out


_PI_50 = "3.14159265358979323846264338327950288419716939937510"


def _fuse_public_functions() -> None:
    """Eager calls of each public function on arrays run its whole body as one cached
    executable (JAX's are jitted): most are dozens of primitives (series, continued fractions,
    polynomial tables), each its own compile and dispatch when run op by op."""
    namespace = globals()
    for name in __all__:
        namespace[name] = fuse_eagerly(namespace[name])


_fuse_public_functions()
