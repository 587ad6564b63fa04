"""More of NumPy's elementwise functions: sign and bit tricks (copysign, nextafter, spacing,
frexp, ldexp, bitwise_count, packbits), number theory (gcd, lcm), stable log-sum-exp, special
functions (sinc, i0, heaviside), type and value tests (isposinf, iscomplex, isclose, ...),
`nan_to_num`, `unwrap` and the classic polynomial functions (`poly`, `polyval`, ...).

Like `mjnp._elementwise`, every function is a composition of `mjcore.lax` ops (bit-level ones
through `lax.bitcast_convert_type`), so all transformations apply. Results that NumPy gives as
Python bools (`allclose`, `array_equal`, ...) are 0-d bool arrays here, so they trace.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from mjcore import lax, while_loop
from mjcore.array import Array as _Array
from mjcore.core import Tracer
from mjcore.eager_fusion import fuse_eagerly
from mjnp import _elementwise as ew
from mjnp import _manipulation, _reductions
from mjnp._bessel import i0 as i0
from mjnp._manipulation import normalize_axis
from mjnp._out import ufunc_out, write_out
from mjnp._promotion import asarray_arg, promote_args, promote_args_float
from mjnp.linalg import eigvals, lstsq

ArrayLike = Any
Array = Any

_BOOL = np.dtype(bool)
_UINT8 = np.dtype("uint8")
_INT32 = np.dtype("int32")


def _const(value: Any, like: Array) -> Array:
    return lax.full((), value, like.dtype)


def _where(pred: Array, on_true: Array, on_false: Array) -> Array:
    """`select_n` with NumPy's argument order, broadcasting all three."""
    shape = np.broadcast_shapes(pred.shape, on_true.shape, on_false.shape)
    return lax.select_n(
        lax.broadcast_to(pred, shape),
        lax.broadcast_to(on_false, shape),
        lax.broadcast_to(on_true, shape),
    )


def _float_args(fname: str, *xs: ArrayLike) -> list[Array]:
    """Operands of a ufunc with only real floating loops (TypeError for complex)."""
    out = promote_args_float(fname, *xs)
    if out[0].dtype.kind != "f":
        raise TypeError(
            f"mjnp.{fname}: not supported for input dtype {out[0].dtype.name}; it needs real "
            "(bool, integer or floating) input"
        )
    if len(out) == 2 and out[0].shape != out[1].shape:
        ew._broadcast_shapes(fname, out[0].shape, out[1].shape)
    return out


def _int_bits(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"int{8 * dtype.itemsize}")


def _mantissa_bits(dtype: np.dtype) -> int:
    return int(np.finfo(dtype).nmant)


def _exp2_int(k: Array, dtype: np.dtype) -> Array:
    """Exactly 2**k in `dtype` for integer `k` within the normal exponent range."""
    info = np.finfo(dtype)
    ibits = _int_bits(dtype)
    biased = lax.add(lax.convert_element_type(k, ibits), lax.full((), -int(info.minexp) + 1, ibits))
    shifted = lax.shift_left(biased, lax.full((), _mantissa_bits(dtype), ibits))
    return lax.bitcast_convert_type(shifted, dtype)


# --- sign and bit tricks --------------------------------------------------------------------


@ufunc_out
def copysign(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """`x1` with the sign bit of `x2`, as `numpy.copysign` (NaN signs included)."""
    x1, x2 = _float_args("copysign", x1, x2)
    flip = lax.ne(ew.signbit(x1), ew.signbit(x2))
    return _where(flip, lax.neg(x1), x1)


@ufunc_out
def nextafter(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """The next float after `x1` towards `x2`, as `numpy.nextafter`.

    A NaN operand comes back as the result (`x2`'s when both are NaN), as C's `nextafter` does
    on NumPy's usual platforms; for float16 NumPy's own routine gives a positive NaN instead, and
    `x1` rather than `x2` when they are equal (which tells the zeros apart).

    NB: its derivative is taken as that of `x1` (the result is within one ulp of it). XLA's CPU
    backend compares subnormal inputs as zeros.
    """
    x1, x2 = _float_args("nextafter", x1, x2)
    out = lax.nextafter(x1, x2)
    if x1.dtype == np.dtype("float16"):
        out = _where(lax.eq(x1, x2), x1, out)
        return _where(lax.bitwise_or(lax.ne(x1, x1), lax.ne(x2, x2)), _const(np.nan, x1), out)
    return _where(lax.ne(x2, x2), x2, _where(lax.ne(x1, x1), x1, out))


def _exponent_field(x: Array) -> tuple[Array, Array]:
    """The raw bits of `|x|` and their biased exponent field, as integers of `x`'s width."""
    ibits = _int_bits(x.dtype)
    nmant = _mantissa_bits(x.dtype)
    bits = lax.bitcast_convert_type(lax.abs(x), ibits)
    field = lax.shift_right_logical(bits, lax.full((), nmant, ibits))
    return bits, field


@ufunc_out
def spacing(x: ArrayLike, /) -> Array:
    """Distance to the next float away from zero, as `numpy.spacing` (NaN for infinities).

    Built from the bits rather than `nextafter(x, inf) - x`, because XLA's CPU backend flushes
    subnormal differences (`spacing(0.0)`) to zero and compares subnormals as zeros. The sign is
    x's, except that -0.0 gives the positive smallest subnormal; a NaN comes back as itself.

    NB: float16 follows NumPy's half-precision routine, unlike the other dtypes: the result is
    never negative, a negative power of two gives the (smaller) spacing towards zero, -max gives
    a finite spacing (only +max gives inf) and NaN inputs give a positive NaN.
    """
    (x,) = _float_args("spacing", x)
    ibits, nmant = _int_bits(x.dtype), _mantissa_bits(x.dtype)
    half = x.dtype == np.dtype("float16")
    bits, field = _exponent_field(x)
    zero, one, nm = (lax.full((), v, ibits) for v in (0, 1, nmant))
    sign = lax.bitwise_and(
        lax.bitcast_convert_type(x, ibits), lax.full((), np.iinfo(ibits).min, ibits)
    )
    negative = lax.ne(sign, zero)
    if half:  # NumPy's half spacing of a negative power of two is that of the binade below
        mantissa = lax.bitwise_and(bits, lax.full((), (1 << nmant) - 1, ibits))
        below = lax.bitwise_and(negative, lax.eq(mantissa, zero))
        field = _where(below, lax.sub(field, one), field)
    normal_ulp = lax.shift_left(lax.sub(field, nm), nm)
    tiny_ulp = lax.shift_left(one, lax.max(lax.sub(field, one), zero))
    ulp_bits = _where(lax.gt(field, nm), normal_ulp, tiny_ulp)
    if not half:  # x's sign bit, except for -0.0
        ulp_bits = _where(lax.ne(bits, zero), lax.bitwise_or(ulp_bits, sign), ulp_bits)
    out = lax.bitcast_convert_type(ulp_bits, x.dtype)
    big = _const(np.finfo(x.dtype).max, x)
    at_max = lax.eq(x, big) if half else lax.eq(lax.abs(x), big)
    out = _where(at_max, _where(negative, _const(-np.inf, x), _const(np.inf, x)), out)
    nan = _const(np.nan, x) if half else _where(lax.ne(x, x), x, _const(np.nan, x))
    return _where(lax.is_finite(x), out, nan)


@ufunc_out
def frexp(x: ArrayLike, /) -> tuple[Array, Array]:
    """Mantissa in [0.5, 1) and int32 exponent with `x == m * 2**e`, as `numpy.frexp`.

    Zeros, infinities and NaN give `(x, 0)`. Subnormal inputs are read from their bits (XLA's
    CPU backend would flush them to zero in arithmetic), but a subnormal mantissa result is
    impossible, so the values match NumPy.
    """
    (x,) = _float_args("frexp", x)
    dtype, ibits = x.dtype, _int_bits(x.dtype)
    nmant = _mantissa_bits(dtype)
    info = np.finfo(dtype)
    bits, field = _exponent_field(x)
    # A subnormal is m * 2**(minexp - nmant) for its integer mantissa bits m: convert m exactly
    # to a normal float and read the exponent field from that instead.
    tiny = lax.eq(field, lax.full((), 0, ibits))
    from_int = lax.convert_element_type(bits, dtype)
    _, int_field = _exponent_field(from_int)
    bias = -int(info.minexp) + 1
    exponent = _where(
        tiny,
        lax.add(int_field, lax.full((), 2 - 2 * bias - nmant, ibits)),
        lax.add(field, lax.full((), 1 - bias, ibits)),
    )
    source_bits = lax.bitcast_convert_type(_where(tiny, from_int, lax.abs(x)), ibits)
    mant_mask = lax.full((), (1 << nmant) - 1, ibits)
    half_field = lax.full((), (bias - 1) << nmant, ibits)
    magnitude = lax.bitcast_convert_type(
        lax.bitwise_or(lax.bitwise_and(source_bits, mant_mask), half_field), dtype
    )
    # Compare bits, not values: XLA's CPU backend treats subnormal operands as zero.
    is_zero = lax.eq(bits, lax.full((), 0, ibits))
    special = lax.bitwise_or(is_zero, lax.bitwise_not(lax.is_finite(x)))
    exponent = _where(special, lax.full((), 0, ibits), exponent)
    # m = x * 2**-e exactly for normal x; that product also carries the derivative 2**-e.
    scaled = lax.mul(x, _exp2_int(lax.neg(_where(tiny, lax.full((), 0, ibits), exponent)), dtype))
    mantissa = _where(tiny, copysign(magnitude, x), scaled)
    mantissa = _where(special, x, mantissa)
    return mantissa, lax.convert_element_type(exponent, _INT32)


@ufunc_out
def ldexp(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """`x1 * 2**x2` for integer `x2`, as `numpy.ldexp`, without intermediate overflow."""
    (x1,) = _float_args("ldexp", x1)
    x2 = asarray_arg("ldexp", x2)
    if x2.dtype.kind not in "biu":
        raise TypeError(f"mjnp.ldexp: the exponent needs an integer dtype, got {x2.dtype.name}")
    ew._broadcast_shapes("ldexp", x1.shape, x2.shape)
    dtype = x1.dtype
    info = np.finfo(dtype)
    # Each of three steps stays a normal power of two; three of them span the whole range from
    # the largest float to the smallest subnormal.
    limit = 3 * min(int(info.maxexp) - 1, -int(info.minexp))
    k = lax.convert_element_type(x2, np.dtype("int64"))
    k = lax.max(lax.min(k, lax.full((), limit, k.dtype)), lax.full((), -limit, k.dtype))
    # Three exact power-of-two steps, each within the normal exponent range.
    three = lax.full((), 3, k.dtype)
    first = lax.div(k, three)
    second = lax.div(lax.sub(k, first), lax.full((), 2, k.dtype))
    third = lax.sub(lax.sub(k, first), second)
    out = x1
    for part in (first, second, third):
        out = lax.mul(out, _exp2_int(part, dtype))
    return out


@ufunc_out
def modf(x: ArrayLike, /) -> tuple[Array, Array]:
    """Fractional and integral parts, both with the sign of `x`, as `numpy.modf`."""
    (x,) = _float_args("modf", x)
    whole = ew.trunc(x)
    frac = lax.sub(x, whole)
    # inf - inf is NaN; NumPy's fractional part of an infinity is a signed zero.
    frac = _where(ew.isinf(x), _const(0, x), frac)
    return copysign(frac, x), whole


@ufunc_out
def bitwise_count(x: ArrayLike, /) -> Array:
    """Number of set bits of `abs(x)`, as uint8, as `numpy.bitwise_count`."""
    x = asarray_arg("bitwise_count", x)
    if x.dtype.kind not in "iub":
        raise TypeError(
            f"mjnp.bitwise_count: not supported for input dtype {x.dtype.name}; it needs "
            "integer input"
        )
    if x.dtype == _BOOL:
        x = lax.convert_element_type(x, _UINT8)
    if x.dtype.kind == "i":
        x = lax.abs(x)
    return lax.convert_element_type(lax.population_count(x), _UINT8)


@ufunc_out
def heaviside(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """The Heaviside step: 0 below zero, `x2` at zero, 1 above, NaN at NaN."""
    x1, x2 = _float_args("heaviside", x1, x2)
    zero = _const(0, x1)
    step = _where(lax.lt(x1, zero), zero, _where(lax.gt(x1, zero), _const(1, x1), x2))
    return _where(ew.isnan(x1), x1, step)


# --- number theory --------------------------------------------------------------------------


def _int_args(fname: str, x1: ArrayLike, x2: ArrayLike) -> tuple[Array, Array]:
    x1, x2 = promote_args(fname, x1, x2)
    if x1.dtype.kind not in "iu":
        raise TypeError(
            f"mjnp.{fname}: not supported for input dtype {x1.dtype.name}; it needs integer input"
        )
    shape = ew._broadcast_shapes(fname, x1.shape, x2.shape)
    return lax.broadcast_to(x1, shape), lax.broadcast_to(x2, shape)


def _gcd(a: Array, b: Array) -> Array:
    if a.dtype.kind == "i":
        a, b = lax.abs(a), lax.abs(b)
    zero, one = _const(0, a), _const(1, a)

    def cond(carry):
        return lax.reduce_or(lax.ne(carry[1], zero), tuple(range(carry[1].ndim)))

    def body(carry):
        x, y = carry
        nonzero = lax.ne(y, zero)
        r = lax.rem(x, _where(nonzero, y, one))
        return _where(nonzero, y, x), _where(nonzero, r, zero)

    out = while_loop(cond, body, (a, b))[0]
    # abs(int min) wraps to itself; NumPy's gcd is still non-negative there.
    return lax.abs(out) if out.dtype.kind == "i" else out


@ufunc_out
def gcd(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Greatest common divisor of `|x1|` and `|x2|`, as `numpy.gcd` (Euclid's algorithm)."""
    x1, x2 = _int_args("gcd", x1, x2)
    return _gcd(x1, x2)


@ufunc_out
def lcm(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Lowest common multiple of `|x1|` and `|x2|`, as `numpy.lcm` (0 if either is 0).

    As in NumPy, `|x1| // gcd * |x2|` wraps around when it overflows the dtype.
    """
    x1, x2 = _int_args("lcm", x1, x2)
    if x1.dtype.kind == "i":
        x1, x2 = lax.abs(x1), lax.abs(x2)
    g = _gcd(x1, x2)
    zero = _const(0, g)
    is_zero = lax.eq(g, zero)
    out = lax.mul(lax.div(x1, _where(is_zero, _const(1, g), g)), x2)
    return _where(is_zero, zero, out)


# --- log-sum-exp ----------------------------------------------------------------------------


def _logaddexp(fname: str, x1: ArrayLike, x2: ArrayLike, base2: bool) -> Array:
    x1, x2 = _float_args(fname, x1, x2)
    # The larger operand by a select rather than `max` and `-|x1 - x2|`: at a tie, the select
    # picks x1 and the tail's slope splits the derivative 1/2 and 1/2 (`max` and `abs` have
    # kink conventions of their own that do not add up to that).
    first = lax.ge(x1, x2)
    larger, smaller = _where(first, x1, x2), _where(first, x2, x1)
    delta = lax.sub(smaller, larger)  # <= 0
    # NaN delta: equal infinities (their sum is the answer) or a NaN operand (NaN either way).
    nan_delta = ew.isnan(delta)
    safe = _where(nan_delta, _const(0, delta), delta)
    if base2:
        tail = lax.div(lax.log1p(lax.exp2(safe)), _const(math.log(2), safe))
    else:
        tail = lax.log1p(lax.exp(safe))
    return _where(nan_delta, lax.add(x1, x2), lax.add(larger, tail))


@ufunc_out
def logaddexp(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """`log(exp(x1) + exp(x2))` without overflow, as `numpy.logaddexp`."""
    return _logaddexp("logaddexp", x1, x2, base2=False)


@ufunc_out
def logaddexp2(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """`log2(2**x1 + 2**x2)` without overflow, as `numpy.logaddexp2`."""
    return _logaddexp("logaddexp2", x1, x2, base2=True)


# --- special functions ----------------------------------------------------------------------


@fuse_eagerly
def sinc(x: ArrayLike) -> Array:
    """`sin(pi x) / (pi x)`, 1 at 0, as `numpy.sinc`."""
    x = asarray_arg("sinc", x)
    if x.dtype.kind in "biu":
        x = lax.convert_element_type(x, np.dtype("float64"))
    is_zero = lax.eq(x, _const(0, x))
    y = lax.mul(_where(is_zero, _const(1, x), x), _const(np.pi, x))
    return _where(is_zero, _const(1, x), lax.div(lax.sin(y), y))


@fuse_eagerly
def angle(z: ArrayLike, deg: bool = False) -> Array:
    """The counterclockwise angle from the positive real axis, as `numpy.angle`."""
    z = asarray_arg("angle", z)
    if z.dtype.kind == "c":
        a = ew.arctan2(ew.imag(z), ew.real(z))
    else:
        a = ew.arctan2(0, z)
    if deg:
        a = ew.multiply(a, 180 / np.pi)
    return a


# --- value and type tests -------------------------------------------------------------------


def isposinf(x: ArrayLike, out: Any = None) -> Array:
    """Elementwise test for +inf, as `numpy.isposinf` (TypeError for complex; `out=` as for
    ufuncs)."""
    result = _signed_inf("isposinf", x, negative=False)
    return write_out("isposinf", out, result, "same_kind", broadcast=True)


def isneginf(x: ArrayLike, out: Any = None) -> Array:
    """Elementwise test for -inf, as `numpy.isneginf` (TypeError for complex; `out=` as for
    ufuncs)."""
    result = _signed_inf("isneginf", x, negative=True)
    return write_out("isneginf", out, result, "same_kind", broadcast=True)


def _signed_inf(fname: str, x: ArrayLike, negative: bool) -> Array:
    x = asarray_arg(fname, x)
    if x.dtype.kind == "c":
        raise TypeError(
            f"mjnp.{fname}: this operation is not supported for complex values because it "
            "would be ambiguous"
        )
    sign = ew.signbit(x)
    return lax.bitwise_and(ew.isinf(x), sign if negative else lax.bitwise_not(sign))


def iscomplex(x: ArrayLike) -> Array:
    """Elementwise test for a nonzero imaginary part, as `numpy.iscomplex`."""
    x = asarray_arg("iscomplex", x)
    if x.dtype.kind != "c":
        return lax.full(x.shape, False, _BOOL)
    return lax.ne(lax.imag(x), lax.full((), 0, lax.imag(x).dtype))


def isreal(x: ArrayLike) -> Array:
    """Elementwise test for a zero imaginary part, as `numpy.isreal`."""
    return lax.bitwise_not(iscomplex(x))


def _dtype_of(x: Any) -> np.dtype:
    if isinstance(x, _Array | Tracer):
        return x.dtype
    dtype = getattr(x, "dtype", None)
    if dtype is not None:
        return np.dtype(dtype)
    return np.asarray(x).dtype


def iscomplexobj(x: Any) -> bool:
    """Whether `x` has a complex dtype (its values are not inspected), as `numpy.iscomplexobj`."""
    return _dtype_of(x).kind == "c"


def isrealobj(x: Any) -> bool:
    """Whether `x` has a non-complex dtype, as `numpy.isrealobj`."""
    return not iscomplexobj(x)


def isscalar(element: Any) -> bool:
    """As `numpy.isscalar`: True for Python and NumPy scalars, False for every array (mjnp
    0-d arrays included)."""
    return bool(np.isscalar(element))


def iterable(y: Any) -> bool:
    """As `numpy.iterable`: False for 0-d arrays and non-iterables."""
    if isinstance(y, _Array | Tracer):
        return y.ndim > 0
    return bool(np.iterable(y))


def isclose(
    a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Array:
    """`|a - b| <= atol + rtol * |b|` elementwise (equal infinities are close), as
    `numpy.isclose` (a non-finite `rtol` or `atol` is an 'invalid' floating-point error, as
    NumPy's: a RuntimeWarning by default, see `errstate`)."""
    _check_tolerances(rtol, atol)  # each call, outside the fused (replayed) body
    return _isclose(a, b, rtol, atol, equal_nan)


def _check_tolerances(rtol: Any, atol: Any) -> None:
    if type(rtol) is float and type(atol) is float and math.isfinite(rtol + atol):
        return  # the common call
    if isinstance(rtol, Tracer) or isinstance(atol, Tracer):
        return  # no values under a transformation
    if np.all(np.isfinite(np.asarray(atol))) and np.all(np.isfinite(np.asarray(rtol))):
        return
    message = f"One of rtol or atol is not valid, atol: {atol}, rtol: {rtol}"
    mode = np.geterr()["invalid"]
    if mode == "warn":
        warnings.warn(message, RuntimeWarning, stacklevel=3)
    elif mode == "raise":
        raise FloatingPointError(message)
    elif mode == "print":
        print(message)
    elif mode in ("call", "log"):
        handler: Any = np.geterrcall()
        if mode == "call":
            handler(message, 8)  # 8: NumPy's FPE_INVALID flag
        else:
            handler.write(message)


@fuse_eagerly
def _isclose(a: ArrayLike, b: ArrayLike, rtol: Any, atol: Any, equal_nan: bool) -> Array:
    x = asarray_arg("isclose", a)
    y = asarray_arg("isclose", b)
    if y.dtype.kind in "biu":
        y = ew.multiply(y, 1.0) if y.dtype.kind != "b" else lax.convert_element_type(y, "float64")
    diff_ok = ew.less_equal(
        ew.absolute(ew.subtract(x, y)), ew.add(atol, ew.multiply(rtol, ew.absolute(y)))
    )
    result = ew.logical_or(ew.logical_and(diff_ok, ew.isfinite(y)), ew.equal(x, y))
    if equal_nan:
        result = ew.logical_or(result, ew.logical_and(ew.isnan(x), ew.isnan(y)))
    return result


# The eager-fusion handles of the fused body (tests and `uses_host` read them).
isclose.__wrapped_fused__ = _isclose.__wrapped_fused__  # type: ignore[attr-defined]
isclose.__fused_runners__ = _isclose.__fused_runners__  # type: ignore[attr-defined]


def allclose(
    a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Array | bool:
    """Whether every element is `isclose`, as `numpy.allclose`.

    A Python bool, as NumPy's; under a transformation, a traced 0-d bool array.
    """
    return _as_bool(_reductions.all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def _as_bool(result: Array) -> Array | bool:
    """NumPy's `allclose`/`array_equal`/`array_equiv` return a Python bool: so do these when
    called on values; a traced result stays a 0-d bool array (it has no value yet)."""
    return result if isinstance(result, Tracer) else bool(result)


def array_equal(a1: ArrayLike, a2: ArrayLike, equal_nan: bool = False) -> Array | bool:
    """Same shape and elements, as `numpy.array_equal`: a Python bool (a traced 0-d bool array
    under a transformation)."""
    a1 = asarray_arg("array_equal", a1)
    a2 = asarray_arg("array_equal", a2)
    if a1.shape != a2.shape:
        return _as_bool(lax.full((), False, _BOOL))
    eq = ew.equal(a1, a2)
    if equal_nan and a1.dtype.kind in "fc" and a2.dtype.kind in "fc":
        eq = ew.logical_or(eq, ew.logical_and(ew.isnan(a1), ew.isnan(a2)))
    return _as_bool(_reductions.all(eq))


def array_equiv(a1: ArrayLike, a2: ArrayLike) -> Array | bool:
    """Same elements after broadcasting, as `numpy.array_equiv`: a Python bool (a traced 0-d
    bool array under a transformation)."""
    a1 = asarray_arg("array_equiv", a1)
    a2 = asarray_arg("array_equiv", a2)
    try:
        np.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return _as_bool(lax.full((), False, _BOOL))
    return _as_bool(_reductions.all(ew.equal(a1, a2)))


@fuse_eagerly
def nan_to_num(
    x: ArrayLike,
    copy: bool = True,
    nan: float = 0.0,
    posinf: float | None = None,
    neginf: float | None = None,
) -> Array:
    """NaN to `nan`, infinities to `posinf`/`neginf` (default the largest finite values), as
    `numpy.nan_to_num`; integers and bools pass through."""
    x = asarray_arg("nan_to_num", x)
    if x.dtype.kind == "c":
        re = nan_to_num(lax.real(x), nan=nan, posinf=posinf, neginf=neginf)
        im = nan_to_num(lax.imag(x), nan=nan, posinf=posinf, neginf=neginf)
        return lax.complex(re, im)
    if x.dtype.kind != "f":
        return x
    info = np.finfo(x.dtype)
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf
    with np.errstate(over="ignore"):
        big, small, nan_value = (np.asarray(v).astype(x.dtype).item() for v in (big, small, nan))
    out = _where(ew.isnan(x), lax.full((), nan_value, x.dtype), x)
    out = _where(isposinf(x), lax.full((), big, x.dtype), out)
    return _where(isneginf(x), lax.full((), small, x.dtype), out)


def real_if_close(a: ArrayLike, tol: float = 100) -> Array:
    """`a.real` if every imaginary part is within `tol` (in machine epsilons when > 1) of zero.

    NB: the result dtype depends on the values, so this works eagerly only; it raises a
    concretization error under `jit`.
    """
    a = asarray_arg("real_if_close", a)
    if a.dtype.kind != "c":
        return a
    if tol > 1:
        tol = float(np.finfo(a.dtype).eps) * tol
    if bool(_reductions.all(ew.less(ew.absolute(lax.imag(a)), tol))):
        return lax.real(a)
    return a


# --- packbits / unpackbits ------------------------------------------------------------------


def _bits_axis(fname: str, a: Array, axis: int | None) -> tuple[Array, int]:
    if axis is None or a.ndim == 0:
        # NumPy treats a 0-d array as 1-d here, whatever the axis (as long as it is valid there).
        if axis is not None:
            normalize_axis(fname, axis, 1, allow_bool=False)
        return lax.reshape(a, (a.size,)), 0
    return a, normalize_axis(fname, axis, a.ndim, allow_bool=False)


def _check_bitorder(fname: str, bitorder: str) -> bool:
    if bitorder not in ("big", "little"):
        raise ValueError(
            f"mjnp.{fname}: 'order' must be either 'little' or 'big', got {bitorder!r}"
        )
    return bitorder == "big"


def packbits(a: ArrayLike, /, axis: int | None = None, bitorder: str = "big") -> Array:
    """Pack truthy elements into the bits of uint8 along `axis` (flattened when None), as
    `numpy.packbits`; the axis is zero-padded to a multiple of 8."""
    a = asarray_arg("packbits", a)
    if a.dtype.kind not in "biu":
        raise TypeError(
            f"mjnp.packbits: Expected an input array of integer or boolean data type, got "
            f"{a.dtype.name}"
        )
    big = _check_bitorder("packbits", bitorder)
    a, axis = _bits_axis("packbits", a, axis)
    bits = lax.convert_element_type(lax.ne(a, _const(0, a)), _UINT8)
    bits = _manipulation.moveaxis(bits, axis, -1)
    n = bits.shape[-1]
    padded = -(-n // 8) * 8
    if padded != n:
        bits = lax.pad(
            bits, lax.full((), 0, _UINT8), [(0, 0, 0)] * (bits.ndim - 1) + [(0, padded - n, 0)]
        )
    bits = lax.reshape(bits, (*bits.shape[:-1], padded // 8, 8))
    shifts = np.arange(7, -1, -1) if big else np.arange(8)
    weighted = lax.shift_left(bits, lax.convert_element_type(np.asarray(shifts, _UINT8), _UINT8))
    packed = lax.reduce_or(weighted, (bits.ndim - 1,))
    return _manipulation.moveaxis(packed, -1, axis)


def unpackbits(
    a: ArrayLike, /, axis: int | None = None, count: int | None = None, bitorder: str = "big"
) -> Array:
    """Unpack uint8 elements into bits (uint8 0/1) along `axis`, as `numpy.unpackbits`."""
    a = asarray_arg("unpackbits", a)
    if a.dtype != _UINT8:
        raise TypeError(
            f"mjnp.unpackbits: Expected an input array of unsigned byte data type, got "
            f"{a.dtype.name}"
        )
    big = _check_bitorder("unpackbits", bitorder)
    a, axis = _bits_axis("unpackbits", a, axis)
    a = _manipulation.moveaxis(a, axis, -1)
    shifts = np.arange(7, -1, -1) if big else np.arange(8)
    expanded = lax.expand_dims(a, (a.ndim,))
    bits = lax.bitwise_and(
        lax.shift_right_logical(
            expanded, lax.convert_element_type(np.asarray(shifts, _UINT8), _UINT8)
        ),
        lax.full((), 1, _UINT8),
    )
    bits = lax.reshape(bits, (*a.shape[:-1], a.shape[-1] * 8))
    if count is not None:
        count = int(count)
        n = bits.shape[-1]
        if count < -n:
            raise ValueError("mjnp.unpackbits: -count larger than number of elements")
        keep = count if count >= 0 else n + count
        if keep <= n:
            bits = lax.slice_in_dim(bits, 0, keep, axis=bits.ndim - 1)
        else:
            bits = lax.pad(
                bits, lax.full((), 0, _UINT8), [(0, 0, 0)] * (bits.ndim - 1) + [(0, keep - n, 0)]
            )
    return _manipulation.moveaxis(bits, -1, axis)


# --- unwrap ---------------------------------------------------------------------------------


def _cumsum_last(x: Array) -> Array:
    """Inclusive prefix sum along the last axis, in log2(n) shifted adds (differentiable)."""
    n = x.shape[-1]
    shift = 1
    while shift < n:
        head = [(0, 0, 0)] * (x.ndim - 1)
        shifted = lax.pad(
            lax.slice_in_dim(x, 0, n - shift, axis=x.ndim - 1),
            lax.full((), 0, x.dtype),
            [*head, (shift, 0, 0)],
        )
        x = lax.add(x, shifted)
        shift *= 2
    return x


def unwrap(
    p: ArrayLike,
    discont: float | None = None,
    axis: int = -1,
    *,
    period: float = 2 * np.pi,
) -> Array:
    """Undo jumps larger than `discont` by adding multiples of `period`, as `numpy.unwrap`."""
    p = asarray_arg("unwrap", p)
    if p.ndim == 0:  # NumPy's diff checks this before it looks at `axis`
        raise ValueError("mjnp.unwrap: p must be at least one dimensional, got a 0-d array")
    axis = normalize_axis("unwrap", axis, p.ndim, allow_bool=False)
    p = _manipulation.moveaxis(p, axis, -1)
    n = p.shape[-1]
    if discont is None:
        discont = period / 2
    tail = lax.slice_in_dim(p, min(1, n), n, axis=p.ndim - 1)
    dd = ew.subtract(tail, lax.slice_in_dim(p, 0, max(n - 1, 0), axis=p.ndim - 1))
    dtype = np.result_type(np.empty(0, dd.dtype), period)
    if dtype.kind in "iu":
        interval_high, rem = divmod(period, 2)
        boundary_ambiguous = rem == 0
    else:
        interval_high = period / 2
        boundary_ambiguous = True
    interval_low = -interval_high
    ddmod = ew.add(ew.mod(ew.subtract(dd, interval_low), period), interval_low)
    if boundary_ambiguous:
        at_low = ew.logical_and(ew.equal(ddmod, interval_low), ew.greater(dd, 0))
        ddmod = ew.where(at_low, lax.full((), interval_high, ddmod.dtype), ddmod)
    ph_correct = ew.subtract(ddmod, dd)
    ph_correct = ew.where(
        ew.less(ew.absolute(dd), discont), lax.full((), 0, ph_correct.dtype), ph_correct
    )
    up = lax.convert_element_type(p, dtype)
    if n == 0:
        return _manipulation.moveaxis(up, -1, axis)
    if n > 1:
        fixed = ew.add(tail, _cumsum_last(ph_correct))
        fixed = lax.convert_element_type(fixed, dtype)
        up = lax.concatenate([lax.slice_in_dim(up, 0, 1, axis=p.ndim - 1), fixed], p.ndim - 1)
    return _manipulation.moveaxis(up, -1, axis)


# --- polynomials (coefficients highest power first, as numpy's poly* functions) -------------


def _unwrap_poly1d(*args: Any) -> tuple[bool, list[Any]]:
    """Whether some argument is a `poly1d` (NumPy's poly* functions then return poly1d), and
    the arguments with each poly1d replaced by its coefficients."""
    from mjnp._poly1d import poly1d  # mjnp._poly1d builds on this module

    truepoly = any(isinstance(a, poly1d) for a in args)
    return truepoly, [a.coeffs if isinstance(a, poly1d) else a for a in args]


def _as_poly1d(truepoly: bool, val: Any) -> Any:
    from mjnp._poly1d import poly1d

    return poly1d(val) if truepoly else val


def _poly_1d(fname: str, a: ArrayLike) -> Array:
    a = asarray_arg(fname, a)
    if a.ndim == 0:
        a = lax.reshape(a, (1,))
    if a.ndim != 1:
        raise ValueError(f"mjnp.{fname}: expected a 1-d coefficient array, got shape {a.shape}")
    return a


def polyval(p: ArrayLike, x: ArrayLike) -> Array:
    """Evaluate the polynomial `p` at `x` by Horner's rule, as `numpy.polyval`; at a poly1d
    `x` the result is the composition `p(x)`, a poly1d."""
    _, (p,) = _unwrap_poly1d(p)
    p = _poly_1d("polyval", p)
    x_is_poly, _ = _unwrap_poly1d(x)
    if x_is_poly:  # the composition, by poly1d arithmetic
        if p.shape[0] == 0:
            return 0  # as NumPy
        # NumPy's first step, `0 * x + p[0]`, without the zero coefficients a traced `x` keeps.
        first = ew.add(ew.multiply(_index(x.coeffs, 0), 0), _index(p, 0))
        out = _as_poly1d(True, first)
        for i in range(1, p.shape[0]):
            out = out * x + _index(p, i)
        return out
    x = _strong(asarray_arg("polyval", x))
    y = lax.full(x.shape, 0, x.dtype)
    for i in range(p.shape[0]):
        y = ew.add(ew.multiply(y, x), _index(p, i))
    return y


def _strong(x: Array) -> Array:
    """NumPy's `asarray` of a Python scalar: a strongly typed array (not a weak scalar)."""
    if getattr(x, "weak_type", False):
        return lax.convert_element_type(x, x.dtype, weak_type=False)
    return x


def _index(a: Array, i: int) -> Array:
    return lax.reshape(lax.slice_in_dim(a, i, i + 1, axis=0), ())


def _pad_front(a: Array, n: int) -> Array:
    if n <= 0:
        return a
    return lax.pad(a, lax.full((), 0, a.dtype), [(n, 0, 0)])


def polyadd(a1: ArrayLike, a2: ArrayLike) -> Array:
    """Sum of two polynomials, as `numpy.polyadd` (a poly1d if an input is one)."""
    truepoly, (a1, a2) = _unwrap_poly1d(a1, a2)
    a1, a2 = promote_args("polyadd", _poly_1d("polyadd", a1), _poly_1d("polyadd", a2))
    n = max(a1.shape[0], a2.shape[0])
    return _as_poly1d(
        truepoly, ew.add(_pad_front(a1, n - a1.shape[0]), _pad_front(a2, n - a2.shape[0]))
    )


def polysub(a1: ArrayLike, a2: ArrayLike) -> Array:
    """Difference of two polynomials, as `numpy.polysub` (a poly1d if an input is one)."""
    truepoly, (a1, a2) = _unwrap_poly1d(a1, a2)
    a1, a2 = promote_args("polysub", _poly_1d("polysub", a1), _poly_1d("polysub", a2))
    n = max(a1.shape[0], a2.shape[0])
    return _as_poly1d(
        truepoly, ew.subtract(_pad_front(a1, n - a1.shape[0]), _pad_front(a2, n - a2.shape[0]))
    )


def _trim_leading_zeros(p: Array) -> Array:
    """`p` without leading zero coefficients, `[0]` if none is left, as `numpy.poly1d` makes
    it; a traced `p` has no values to look at and is kept whole."""
    if isinstance(p, Tracer):
        return p
    nonzero = np.flatnonzero(np.asarray(p))
    return p[int(nonzero[0]) :] if nonzero.size else lax.full((1,), 0, p.dtype)


def polymul(a1: ArrayLike, a2: ArrayLike) -> Array:
    """Product of two polynomials (full convolution of coefficients), as `numpy.polymul`.

    As NumPy (which goes through `poly1d`), leading zero coefficients are dropped first, an
    empty or all-zero polynomial being `[0]`; a poly1d input gives a poly1d. NB: only for
    concrete values; traced ones keep their length.
    """
    truepoly, (a1, a2) = _unwrap_poly1d(a1, a2)
    a1, a2 = promote_args("polymul", _poly_1d("polymul", a1), _poly_1d("polymul", a2))
    a1, a2 = _trim_leading_zeros(a1), _trim_leading_zeros(a2)
    n1, n2 = a1.shape[0], a2.shape[0]
    if n1 == 0 or n2 == 0:
        return _as_poly1d(truepoly, lax.full((0,), 0, a1.dtype))
    out = None
    for i in range(n1):
        term = lax.pad(
            ew.multiply(_index(a1, i), a2), lax.full((), 0, a1.dtype), [(i, n1 - 1 - i, 0)]
        )
        out = term if out is None else ew.add(out, term)
    return _as_poly1d(truepoly, out)


def polyder(p: ArrayLike, m: int = 1) -> Array:
    """The `m`-th derivative of a polynomial, as `numpy.polyder` (a poly1d for a poly1d)."""
    m = int(m)
    if m < 0:
        raise ValueError("mjnp.polyder: Order of derivative must be positive (see polyint)")
    truepoly, (p,) = _unwrap_poly1d(p)
    p = _poly_1d("polyder", p)
    for _ in range(m):
        n = p.shape[0] - 1
        p = ew.multiply(lax.slice_in_dim(p, 0, max(n, 0), axis=0), np.arange(n, 0, -1))
    return _as_poly1d(truepoly, p)


def polyint(p: ArrayLike, m: int = 1, k: ArrayLike | None = None) -> Array:
    """The `m`-th antiderivative with integration constants `k`, as `numpy.polyint` (a poly1d
    for a poly1d)."""
    m = int(m)
    if m < 0:
        raise ValueError("mjnp.polyint: Order of integral must be positive (see polyder)")
    truepoly, (p,) = _unwrap_poly1d(p)
    p = _poly_1d("polyint", p)
    ks = np.zeros(m) if k is None else k
    if isinstance(ks, _Array | Tracer):
        ks = lax.reshape(ks, (ks.size,))
        if ks.shape[0] == 1 and m > 1:
            ks = lax.broadcast_to(lax.reshape(ks, ()), (m,))
        if ks.shape[0] < m:
            raise ValueError(
                "mjnp.polyint: k must be a scalar or a rank-1 array of length 1 or >m."
            )
        consts = [_index(ks, i) for i in range(m)]
    else:
        arr = np.atleast_1d(np.asarray(ks))
        if arr.size == 1 and m > 1:
            arr = arr[0] * np.ones(m, float)
        if arr.size < m:
            raise ValueError(
                "mjnp.polyint: k must be a scalar or a rank-1 array of length 1 or >m."
            )
        consts = [asarray_arg("polyint", arr[i : i + 1].reshape(())) for i in range(m)]
    for i in range(m):
        n = p.shape[0]
        scaled = ew.true_divide(p, np.arange(n, 0, -1))
        scaled, c = promote_args("polyint", scaled, consts[i])
        p = lax.concatenate([scaled, lax.reshape(c, (1,))], 0)
    return _as_poly1d(truepoly, p)


def poly(seq_of_zeros: ArrayLike) -> Array | float:
    """Coefficients of the monic polynomial with the given roots, as `numpy.poly`; a square
    matrix stands for its eigenvalues (by `mjnp.linalg.eigvals`, so real when NumPy's are).

    NB: traced complex roots stay complex even in conjugate pairs (NumPy then returns the real
    part).

    Raises:
        TypeError: for a 0-d input (NumPy cannot iterate it either).
        ValueError: for anything but a 1-d array or a non-empty square matrix.
    """
    _, (seq_of_zeros,) = _unwrap_poly1d(seq_of_zeros)
    z = asarray_arg("poly", seq_of_zeros)
    if z.ndim == 0:
        raise TypeError(
            f"mjnp.poly: seq_of_zeros must be a sequence of roots or a square matrix, got a 0-d "
            f"{z.dtype} value; pass a single root as [root]"
        )
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] != 0:
        z = eigvals(z)
    elif z.ndim == 1:
        z = lax.convert_element_type(z, np.dtype(_mintypecode_of(z.dtype)))
    else:
        raise ValueError(
            f"mjnp.poly: input must be 1d or non-empty square 2d array, got shape {tuple(z.shape)}"
        )
    if z.shape[0] == 0:
        return 1.0  # NumPy returns the Python float 1.0
    dtype = z.dtype
    one = lax.full((1,), 1, dtype)
    a = one
    for i in range(z.shape[0]):
        factor = lax.concatenate([one, lax.reshape(lax.neg(_index(z, i)), (1,))], 0)
        a = polymul(a, factor)
    if dtype.kind == "c" and not isinstance(z, Tracer):
        roots = np.asarray(z)
        if np.all(np.sort(roots) == np.sort(roots.conjugate())):
            a = lax.real(a)
    return a


def _mintypecode_of(dtype: np.dtype) -> str:
    """NumPy's `mintypecode(dtype.char)`: float32 and the complex types stay, others go to d."""
    return {"f": "f", "d": "d", "F": "F", "D": "D"}.get(dtype.char, "d")


def polydiv(u: ArrayLike, v: ArrayLike) -> tuple[Array, Array]:
    """Quotient and remainder of polynomial division, as `numpy.polydiv`.

    Quotient and remainder are poly1d if an input is one.

    NB: leading (near-)zeros of the remainder are trimmed only for concrete values.
    """
    truepoly, (u, v) = _unwrap_poly1d(u, v)
    u = ew.add(_poly_1d("polydiv", u), 0.0)
    v = ew.add(_poly_1d("polydiv", v), 0.0)
    u, v = promote_args("polydiv", u, v)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = ew.true_divide(1.0, _index(v, 0))
    r = [_index(u, i) for i in range(m + 1)]
    q = [lax.full((), 0, u.dtype) for _ in range(max(m - n + 1, 1))]
    for k in range(0, m - n + 1):
        d = ew.multiply(scale, r[k])
        q[k] = d
        for j in range(n + 1):
            r[k + j] = ew.subtract(r[k + j], ew.multiply(d, _index(v, j)))
    rem = lax.concatenate([lax.reshape(c, (1,)) for c in r], 0)
    quot = lax.concatenate([lax.reshape(c, (1,)) for c in q], 0)
    if not isinstance(rem, Tracer):
        host = np.asarray(rem)
        start = 0
        while start < host.shape[0] - 1 and np.allclose(host[start], 0, rtol=1e-14):
            start += 1
        rem = lax.slice_in_dim(rem, start, host.shape[0], axis=0)
    return _as_poly1d(truepoly, quot), _as_poly1d(truepoly, rem)


def roots(p: ArrayLike) -> Array:
    """Roots of a polynomial, as `numpy.roots`: the eigenvalues of its companion matrix (by
    `mjnp.linalg.eigvals`, so real when NumPy's are).

    NB: leading and trailing zero coefficients are trimmed only for concrete input; a traced
    `p` must have a nonzero first and last coefficient.
    """
    _, (p,) = _unwrap_poly1d(p)
    p = asarray_arg("roots", p)
    if p.ndim == 0:
        p = lax.reshape(p, (1,))
    if p.ndim != 1:
        raise ValueError("mjnp.roots: Input must be a rank-1 array.")
    trailing = 0
    if not isinstance(p, Tracer):
        non_zero = np.flatnonzero(np.asarray(p))
        if non_zero.size == 0:
            return lax.full((0,), 0, np.dtype("float64"))
        trailing = p.shape[0] - int(non_zero[-1]) - 1
        p = lax.slice_in_dim(p, int(non_zero[0]), int(non_zero[-1]) + 1, axis=0)
    if p.dtype.kind not in "fc":
        p = lax.convert_element_type(p, np.dtype("float64"))
    n = p.shape[0]
    if n > 1:
        first = lax.reshape(
            lax.neg(ew.true_divide(lax.slice_in_dim(p, 1, n, axis=0), _index(p, 0))), (1, n - 1)
        )
        shift = lax.convert_element_type(np.eye(n - 2, n - 1), p.dtype)
        out = eigvals(lax.concatenate([first, shift], 0))
    else:  # a constant: no roots, float64 whatever p's dtype, as NumPy's `array([])`
        out = lax.full((0,), 0, np.dtype("float64"))
    if trailing:
        out = lax.concatenate([out, lax.full((trailing,), 0, out.dtype)], 0)
    return out


def polyfit(
    x: ArrayLike,
    y: ArrayLike,
    deg: int,
    rcond: float | None = None,
    full: bool = False,
    w: ArrayLike | None = None,
    cov: bool = False,
) -> Any:
    """Least-squares polynomial fit, as `numpy.polyfit`: `mjnp.linalg.lstsq` on the column-
    scaled Vandermonde matrix.

    NB: `cov` is not supported, and the RankWarning for a rank-deficient fit is only issued
    for concrete input.
    """
    if cov:
        raise NotImplementedError("mjnp.polyfit: cov=True is not supported")
    order = int(deg) + 1
    x = ew.add(_strong(asarray_arg("polyfit", x)), 0.0)
    y = ew.add(_strong(asarray_arg("polyfit", y)), 0.0)
    if deg < 0:
        raise ValueError("mjnp.polyfit: expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("mjnp.polyfit: expected 1D vector for x")
    if x.size == 0:
        raise TypeError("mjnp.polyfit: expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("mjnp.polyfit: expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("mjnp.polyfit: expected x and y to have same length")
    if rcond is None:
        rcond = x.shape[0] * float(np.finfo(x.dtype).eps)
    lhs = ew.power(lax.expand_dims(x, (1,)), np.arange(order - 1, -1, -1))
    rhs = y
    if w is not None:
        w = ew.add(asarray_arg("polyfit", w), 0.0)
        if w.ndim != 1:
            raise TypeError("mjnp.polyfit: expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("mjnp.polyfit: expected w and y to have the same length")
        lhs = ew.multiply(lhs, lax.expand_dims(w, (1,)))
        rhs = ew.multiply(rhs, w if rhs.ndim == 1 else lax.expand_dims(w, (1,)))
    scale = ew.sqrt(_reductions.sum(ew.multiply(lhs, lhs), axis=0))
    lhs = ew.true_divide(lhs, scale)
    c, resids, rank, s = lstsq(lhs, rhs, rcond=rcond)
    c = ew.true_divide(c, scale if c.ndim == 1 else lax.expand_dims(scale, (1,)))
    if not isinstance(rank, Tracer) and int(rank) != order and not full:
        import warnings

        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning, stacklevel=2)
    if full:
        return c, resids, rank, s, rcond
    return c
