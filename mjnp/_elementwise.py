"""Elementwise functions (NumPy's ufuncs): arithmetic, exponents and logarithms, trigonometry,
rounding, comparisons, logic and bit operations, floating-point tests, `where` and `clip`.

Each function promotes its arguments with NumPy 2's rules (`mjnp._promotion`) and applies
`mjcore.lax` ops, which broadcast their operands as NumPy does. Result dtypes are NumPy's,
including its choice of loop: `sin(int8)` is float16, `int8 / int8` is float64,
`bool ** bool` is int8.

The ufuncs take NumPy's `out=` keyword (`mjnp._out.ufunc_out`). NB: the other ufunc keywords
(`where`, `dtype`, `casting`) and methods (`reduce`, `outer`, ...) are not supported.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from mjcore import dtypes, lax
from mjcore.core import Tracer
from mjcore.eager_fusion import fuse_eagerly
from mjcore.lax.arithmetic import ROUND_TO_NEAREST_EVEN
from mjcore.lax.base import convert_element_type_p
from mjnp._host_numpy import fused_handles, host_value, wrap
from mjnp._out import ufunc_out, write_out
from mjnp._promotion import (
    asarray_arg,
    check_arraylike,
    promote_args,
    promote_args_float,
    promote_args_inexact,
    promote_args_numeric,
    promote_args_wrapping,
)

ArrayLike = Any
Array = Any

_BOOL = np.dtype(bool)
_FLOAT16 = np.dtype("float16")
_FLOAT32 = np.dtype("float32")

_KIND_NAMES = {"b": "bool", "i": "integer", "u": "integer", "f": "floating", "c": "complex"}


def _check_kinds(fname: str, kinds: str, *xs: Array) -> None:
    """A TypeError like NumPy's "ufunc 'cbrt' not supported for the input types"."""
    for x in xs:
        if dtypes.kind(x.dtype) not in kinds:
            allowed = " or ".join(dict.fromkeys(_KIND_NAMES[k] for k in kinds))
            raise TypeError(
                f"mjnp.{fname}: not supported for input dtype {x.dtype.name}; it needs "
                f"{allowed} input"
            )


_NO_VALUE: Any = object()  # an argument not given (None is a valid array-like)


def _const(value: Any, like: Array) -> Array:
    """A 0-d constant of `like`'s dtype (broadcast by the elementwise lax ops)."""
    return lax.full((), value, like.dtype)


def _zeros_like(x: Array) -> Array:
    return lax.full(x.shape, 0, x.dtype)


def _pair(
    fname: str, promote: Callable[..., list[Array]], x1: ArrayLike, x2: ArrayLike
) -> tuple[Array, Array]:
    """Two operands promoted together, checked to broadcast (so errors name `fname`)."""
    x1, x2 = promote(fname, x1, x2)
    if x1.shape != x2.shape and x1.shape and x2.shape:  # 0-d operands always broadcast
        _broadcast_shapes(fname, x1.shape, x2.shape)
    return x1, x2


# --- arithmetic -----------------------------------------------------------------------------


@ufunc_out(int_scalars=True, int_host=np.add)  # `i + 1`: one NumPy call
def add(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise `x1 + x2`, as `numpy.add` (logical or for bool)."""
    x1, x2 = _pair("add", promote_args, x1, x2)
    return lax.add(x1, x2)


@ufunc_out(int_scalars=True, int_host=np.subtract)  # `i - 1`: one NumPy call
def subtract(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise `x1 - x2`, as `numpy.subtract`.

    Raises:
        TypeError: for two bools, as NumPy does.
    """
    x1, x2 = _pair("subtract", promote_args, x1, x2)
    if x1.dtype == _BOOL:
        raise TypeError(
            "mjnp.subtract: boolean subtract, the `-` operator, is not supported; use the "
            "bitwise_xor, the `^` operator, or the logical_xor function instead"
        )
    return lax.sub(x1, x2)


@ufunc_out(int_scalars=True, int_host=np.multiply)  # `i * 2`: one NumPy call
def multiply(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise `x1 * x2`, as `numpy.multiply` (logical and for bool)."""
    x1, x2 = _pair("multiply", promote_args, x1, x2)
    return lax.mul(x1, x2)


@ufunc_out(int_scalars=True, int_host=np.divide)  # `i / 2`: one NumPy call
def divide(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise true division, as `numpy.divide`: integers and bools divide as float64."""
    x1, x2 = _pair("divide", promote_args_inexact, x1, x2)
    return lax.div(x1, x2)


true_divide = divide


def _int_divmod(x1: Array, x2: Array) -> tuple[Array, Array]:
    """Floor quotient and remainder of integers; division by zero gives 0 for both, as NumPy."""
    if not x1.weak_type and _known_positive_scalar(x2):
        # `x % n` with a known n > 0 (eager code): no division by zero and a positive divisor,
        # so the general path's selects reduce to these (same values, shape and dtype).
        q, r = lax.div(x1, x2), lax.rem(x1, x2)
        if x1.dtype.kind == "i":
            adjust = lax.lt(r, _const(0, r))
            q = _select(adjust, q, lax.sub(q, _const(1, q)))
            r = _select(adjust, r, lax.add(r, x2))
        return q, r
    zero = _const(0, x1)
    is_zero = lax.eq(x2, zero)
    safe = _select(is_zero, x2, _const(1, x2))
    q = lax.div(x1, safe)
    r = lax.rem(x1, safe)
    if x1.dtype.kind == "i":
        # C division truncates; floor instead when the remainder and divisor differ in sign.
        adjust = lax.bitwise_and(lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(x2, zero)))
        q = _select(adjust, q, lax.sub(q, _const(1, q)))
        r = _select(adjust, r, lax.add(r, x2))
    return _select(is_zero, q, zero), _select(is_zero, r, zero)


def _known_positive_scalar(x: Any) -> bool:
    """Whether `x` is one known (not traced) value above zero: reading it costs one scalar."""
    if isinstance(x, Tracer) or x.size != 1:
        return False
    return bool(np.asarray(x).reshape(()) > 0)


def _float_divmod(x1: Array, x2: Array) -> tuple[Array, Array]:
    """Floor quotient and remainder of floats, step by step as NumPy's `npy_divmod`."""
    dtype = x1.dtype
    if dtype == _FLOAT16:
        # NumPy computes half-precision divmod in float32.
        x1, x2 = lax.convert_element_type(x1, _FLOAT32), lax.convert_element_type(x2, _FLOAT32)
    zero, one = _const(0, x1), _const(1, x1)
    modulus = lax.rem(x1, x2)
    div = lax.div(lax.sub(x1, modulus), x2)
    mod_nonzero = lax.ne(modulus, zero)  # NaN counts as nonzero, as in C
    adjust = lax.bitwise_and(mod_nonzero, lax.ne(lax.lt(x2, zero), lax.lt(modulus, zero)))
    signed_zero = _select(lax.lt(x2, zero), zero, _const(-0.0, x1))
    modulus = _select(mod_nonzero, signed_zero, _select(adjust, modulus, lax.add(modulus, x2)))
    div = _select(adjust, div, lax.sub(div, one))
    # Snap the quotient to the nearest integer; a zero quotient takes the sign of x1 / x2.
    quotient = lax.div(x1, x2)
    floor_div = lax.floor(div)
    floor_div = _select(
        lax.gt(lax.sub(div, floor_div), _const(0.5, x1)), floor_div, lax.add(floor_div, one)
    )
    floor_div = _select(lax.ne(div, zero), lax.mul(zero, quotient), floor_div)
    # Division by zero: the quotient is x1 / 0 and the remainder fmod(x1, 0), i.e. NaN.
    by_zero = lax.eq(x2, zero)
    floor_div = _select(by_zero, floor_div, quotient)
    modulus = _select(by_zero, modulus, lax.rem(x1, x2))
    if dtype == _FLOAT16:
        floor_div, modulus = (
            lax.convert_element_type(floor_div, dtype),
            lax.convert_element_type(modulus, dtype),
        )
    return floor_div, modulus


def _bfloat16_divmod(x1: Array, x2: Array) -> tuple[Array, Array]:
    """Floor quotient and remainder of bfloat16, as JAX computes them (its `floor_divide` and
    `remainder`, in bfloat16): NumPy has no bfloat16 loops, and these are JAX's bits."""
    zero, one = _const(0, x1), _const(1, x1)
    modulus = lax.rem(x1, x2)
    mod_nonzero = lax.ne(modulus, zero)
    div = lax.div(_select(lax.eq(x2, zero), lax.sub(x1, modulus), x1), x2)
    adjust = lax.bitwise_and(mod_nonzero, lax.ne(lax.sign(x2), lax.sign(modulus)))
    floor_div = lax.round(_select(adjust, div, lax.sub(div, one)))
    plus = lax.bitwise_and(lax.ne(lax.lt(modulus, zero), lax.lt(x2, zero)), mod_nonzero)
    return floor_div, _select(plus, modulus, lax.add(modulus, x2))


def _divmod(fname: str, x1: ArrayLike, x2: ArrayLike) -> tuple[Array, Array]:
    x1, x2 = _pair(fname, promote_args_numeric, x1, x2)
    _check_kinds(fname, "iuf", x1)
    if x1.dtype == dtypes.bfloat16:
        return _bfloat16_divmod(x1, x2)
    if dtypes.kind(x1.dtype) == "f":
        return _float_divmod(x1, x2)
    return _int_divmod(x1, x2)


@ufunc_out(int_scalars=True, host=np.floor_divide)  # one NumPy call, not ~30 rules
def floor_divide(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise `x1 // x2`, rounding toward minus infinity, as `numpy.floor_divide`.

    Integer division by zero gives 0 and float division by zero gives `x1 / 0`, as in NumPy.
    """
    return _divmod("floor_divide", x1, x2)[0]


@ufunc_out(int_scalars=True, host=np.remainder)  # one NumPy call, not ~30 rules
def remainder(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise `x1 % x2` with the sign of `x2`, as `numpy.remainder` (Python's `%`).

    Integer remainder by zero gives 0 and float remainder by zero NaN, as in NumPy.
    """
    return _divmod("remainder", x1, x2)[1]


mod = remainder


@ufunc_out
def divmod(x1: ArrayLike, x2: ArrayLike, /) -> tuple[Array, Array]:  # noqa: A001  (NumPy's name)
    """`(floor_divide(x1, x2), remainder(x1, x2))`, as `numpy.divmod`."""
    return _divmod("divmod", x1, x2)


@ufunc_out
def fmod(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise remainder with the sign of `x1` (C `fmod`), as `numpy.fmod`.

    Integer remainder by zero gives 0, as in NumPy.
    """
    x1, x2 = _pair("fmod", promote_args_numeric, x1, x2)
    _check_kinds("fmod", "iuf", x1)
    if dtypes.kind(x1.dtype) == "f":
        return lax.rem(x1, x2)
    zero = _const(0, x1)
    is_zero = lax.eq(x2, zero)
    return _select(is_zero, lax.rem(x1, _select(is_zero, x2, _const(1, x2))), zero)


def _check_nonnegative_exponent(fname: str, x2: Any) -> None:
    if isinstance(x2, Tracer):
        return  # NB: traced negative integer exponents give 0 (or ±1), as XLA defines them
    if np.any(np.asarray(x2) < 0):
        raise ValueError(f"mjnp.{fname}: Integers to negative integer powers are not allowed.")


@ufunc_out(fuse=False)  # checks integer exponents' signs eagerly
def power(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise `x1 ** x2`, as `numpy.power` (bool ** bool is int8).

    A Python int exponent becomes `lax.integer_pow` (repeated multiplication), except for
    complex bases with exponents of 100 or more in size, which NumPy too computes by `exp` and
    `log` (so that overflow gives inf rather than NaN).

    Raises:
        ValueError: for an integer base and a negative integer exponent known eagerly, as NumPy.
            NB: under tracing the value is unknown, and the result is 0 (or ±1 for a base of
            ±1), as XLA defines integer powers.
    """
    if type(x2) is int:
        base, exponent = promote_args_numeric("power", x1, x2)
        if x2 < 0 and base.dtype.kind in "iu":
            _check_nonnegative_exponent("power", x2)
        if base.dtype.kind != "c" or -100 < x2 < 100:
            return lax.integer_pow(base, x2)
        return lax.pow(base, exponent)
    x1, x2 = _pair("power", promote_args_numeric, x1, x2)
    if x1.dtype.kind in "iu":
        _check_nonnegative_exponent("power", x2)
    if x1.dtype.kind == "c":
        return _complex_pow(x1, x2)
    return lax.pow(x1, x2)


def _complex_pow(x1: Array, x2: Array) -> Array:
    """Complex `x1 ** x2` with NumPy's values at a zero base (`npy_cpow`): 1 for a zero
    exponent, 0 for an exponent of positive real part, NaN otherwise (XLA's is NaN)."""
    shape = np.broadcast_shapes(x1.shape, x2.shape)
    x1, x2 = lax.broadcast_to(x1, shape), lax.broadcast_to(x2, shape)
    zero, one = lax.full(shape, 0, x1.dtype), lax.full(shape, 1, x1.dtype)
    base_zero = lax.eq(x1, zero)
    positive = lax.gt(lax.real(x2), lax.full(shape, 0, lax.real(x2).dtype))
    at_zero = lax.select(positive, zero, lax.full(shape, complex(np.nan, np.nan), x1.dtype))
    at_zero = lax.select(lax.eq(x2, zero), one, at_zero)
    # `safe` keeps the power (and its gradient) finite where the zero-base value is chosen.
    safe = lax.select(base_zero, one, x1)
    return lax.select(base_zero, at_zero, lax.pow(safe, x2))


pow = power  # noqa: A001  (the Array API name)


@ufunc_out
def float_power(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise `x1 ** x2` computed in float64 (complex128 for complex input), as NumPy."""
    x1, x2 = _pair("float_power", promote_args_inexact, x1, x2)
    dtype = np.dtype("complex128" if x1.dtype.kind == "c" else "float64")
    return lax.pow(lax.convert_element_type(x1, dtype), lax.convert_element_type(x2, dtype))


@ufunc_out
def negative(x: ArrayLike, /) -> Array:
    """Elementwise `-x`, as `numpy.negative` (unsigned integers wrap around).

    Raises:
        TypeError: for bool, as NumPy does.
    """
    (x,) = promote_args("negative", x)
    if x.dtype == _BOOL:
        raise TypeError(
            "mjnp.negative: boolean negative, the `-` operator, is not supported; use the `~` "
            "operator or the logical_not function instead"
        )
    return lax.neg(x)


@ufunc_out
def positive(x: ArrayLike, /) -> Array:
    """Elementwise `+x`, as `numpy.positive`.

    Raises:
        TypeError: for bool, as NumPy does.
    """
    (x,) = promote_args("positive", x)
    _check_kinds("positive", "iufc", x)
    return x


@ufunc_out
def absolute(x: ArrayLike, /) -> Array:
    """Elementwise absolute value, as `numpy.absolute`; complex input gives its real magnitude."""
    (x,) = promote_args("absolute", x)
    if x.dtype == _BOOL:
        return x
    return lax.abs(x)


abs = absolute  # noqa: A001  (NumPy's name)


@ufunc_out
def fabs(x: ArrayLike, /) -> Array:
    """Elementwise absolute value of real input in a float dtype, as `numpy.fabs`."""
    (x,) = promote_args_float("fabs", x)
    _check_kinds("fabs", "f", x)
    return lax.abs(x)


@ufunc_out
def sign(x: ArrayLike, /) -> Array:
    """Elementwise sign (-1, 0, 1; NaN stays NaN; `x / |x|` for complex), as `numpy.sign`.

    Raises:
        TypeError: for bool, as NumPy does.
    """
    (x,) = promote_args("sign", x)
    _check_kinds("sign", "iufc", x)
    return lax.sign(x)


def _complex_parts(x: Array) -> tuple[Array, Array]:
    return lax.real(x), lax.imag(x)


def _complex_greater(x1: Array, x2: Array, or_equal: bool) -> Array:
    """NumPy's lexicographic complex order (CGT / CGE): real parts first, then imaginary."""
    (r1, i1), (r2, i2) = _complex_parts(x1), _complex_parts(x2)
    no_nan_imag = lax.bitwise_and(lax.eq(i1, i1), lax.eq(i2, i2))
    imag_cmp = lax.ge(i1, i2) if or_equal else lax.gt(i1, i2)
    return lax.bitwise_or(
        lax.bitwise_and(lax.gt(r1, r2), no_nan_imag), lax.bitwise_and(lax.eq(r1, r2), imag_cmp)
    )


def _isnan_inexact(x: Array) -> Array:
    return lax.ne(x, x)


@ufunc_out(int_scalars=True, int_host=np.maximum)  # one NumPy call
def maximum(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise maximum, propagating NaN, as `numpy.maximum` (complex: lexicographic)."""
    x1, x2 = _pair("maximum", promote_args, x1, x2)
    if x1.dtype.kind == "c":
        pick_x1 = lax.bitwise_or(_complex_greater(x1, x2, True), _isnan_inexact(x1))
        return _select(pick_x1, x2, x1)
    return lax.max(x1, x2)


@ufunc_out(int_scalars=True, int_host=np.minimum)  # one NumPy call
def minimum(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise minimum, propagating NaN, as `numpy.minimum` (complex: lexicographic)."""
    x1, x2 = _pair("minimum", promote_args, x1, x2)
    if x1.dtype.kind == "c":
        pick_x1 = lax.bitwise_or(_complex_greater(x2, x1, True), _isnan_inexact(x1))
        return _select(pick_x1, x2, x1)
    return lax.min(x1, x2)


@ufunc_out
def fmax(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise maximum ignoring NaN (NaN only if both are), as `numpy.fmax`."""
    x1, x2 = _pair("fmax", promote_args, x1, x2)
    return _ignore_nan(x1, x2, maximum(x1, x2))


@ufunc_out
def fmin(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise minimum ignoring NaN (NaN only if both are), as `numpy.fmin`."""
    x1, x2 = _pair("fmin", promote_args, x1, x2)
    return _ignore_nan(x1, x2, minimum(x1, x2))


def _ignore_nan(x1: Array, x2: Array, out: Array) -> Array:
    if dtypes.kind(x1.dtype) not in "fc":
        return out
    out = _select(_isnan_inexact(x2), out, x1)
    return _select(_isnan_inexact(x1), out, x2)


def _select(pred: Array, on_false: Array, on_true: Array) -> Array:
    """`where(pred, on_true, on_false)` for one-dtype operands of broadcastable shapes."""
    shape = _broadcast_shapes("where", pred.shape, on_true.shape, on_false.shape)
    return lax.select_n(
        lax.broadcast_to(pred, shape),
        lax.broadcast_to(on_false, shape),
        lax.broadcast_to(on_true, shape),
    )


def _broadcast_shapes(fname: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(
            f"mjnp.{fname}: operands could not be broadcast together with shapes "
            + " ".join(str(s) for s in shapes)
        ) from None


# --- rounding -------------------------------------------------------------------------------


@ufunc_out
def floor(x: ArrayLike, /) -> Array:
    """Elementwise floor, as `numpy.floor`; integers and bools are returned unchanged."""
    (x,) = promote_args("floor", x)
    _check_kinds("floor", "biuf", x)
    return lax.floor(x) if dtypes.kind(x.dtype) == "f" else x


@ufunc_out
def ceil(x: ArrayLike, /) -> Array:
    """Elementwise ceiling, as `numpy.ceil`; integers and bools are returned unchanged."""
    (x,) = promote_args("ceil", x)
    _check_kinds("ceil", "biuf", x)
    return lax.ceil(x) if dtypes.kind(x.dtype) == "f" else x


@ufunc_out(host=np.trunc)  # on the host: NumPy's one call
def trunc(x: ArrayLike, /) -> Array:
    """Elementwise rounding toward zero, as `numpy.trunc`; integers are returned unchanged."""
    (x,) = promote_args("trunc", x)
    _check_kinds("trunc", "biuf", x)
    if dtypes.kind(x.dtype) != "f":
        return x
    return _select(lax.lt(x, _const(0, x)), lax.floor(x), lax.ceil(x))


fix = trunc


def _rint(x: Array) -> Array:
    if x.dtype.kind == "c":
        return lax.complex(_rint(lax.real(x)), _rint(lax.imag(x)))
    return lax.round(x, ROUND_TO_NEAREST_EVEN)


@ufunc_out
def rint(x: ArrayLike, /) -> Array:
    """Elementwise rounding to the nearest integer, halves to even, as `numpy.rint`."""
    (x,) = promote_args_float("rint", x)
    return _rint(x)


def round(a: ArrayLike, decimals: int = 0, out: Any = None) -> Array:  # noqa: A001
    """Round to `decimals` decimal places, halves to even, as `numpy.round`.

    As in NumPy, `decimals > 0` computes `rint(a * 10**decimals) / 10**decimals` in `a`'s dtype
    (so the result is the float nearest that, not always the nearest decimal), and integers
    with `decimals < 0` round in float64 and convert back. `out=` rebinds the given array.
    """
    if out is None and type(decimals) is int:
        v = host_value(a)
        if v is not None:  # eagerly on CPU: NumPy's round (an int `decimals` is not fused)
            # the general path keeps a weak type only where it computes no new values
            weak = a.aval.weak_type and (decimals == 0 or (decimals > 0 and v.dtype.kind in "iu"))
            return wrap(np.round(v, decimals), weak)
    return _round_fused(a, decimals, out)


@fuse_eagerly
def _round_fused(a: ArrayLike, decimals: int = 0, out: Any = None) -> Array:
    result = _round(a, decimals)
    if result is a:  # integers: a new array, as NumPy's (the input would follow its writes)
        result = convert_element_type_p.bind1(a, new_dtype=a.dtype, weak_type=a.weak_type)
    return write_out("round", out, result, "same_kind")


fused_handles(round, _round_fused)


def _round(a: ArrayLike, decimals: int) -> Array:
    (a,) = promote_args("round", a)
    decimals = _operator_index("round", "decimals", decimals)
    if a.dtype.kind in "iu":
        if decimals >= 0:
            return a
        scaled = lax.convert_element_type(a, np.float64)
        factor = lax.full((), 10.0**-decimals, np.float64)
        rounded = lax.mul(_rint(lax.div(scaled, factor)), factor)
        return lax.convert_element_type(rounded, a.dtype)
    if a.dtype == _BOOL:
        a = lax.convert_element_type(a, _FLOAT16)
    if decimals == 0:
        return _rint(a)
    if a.dtype.kind == "c":
        return lax.complex(_round_float(lax.real(a), decimals), _round_float(lax.imag(a), decimals))
    return _round_float(a, decimals)


around = round


def _round_float(a: Array, decimals: int) -> Array:
    factor = _const(10.0 ** (decimals if decimals > 0 else -decimals), a)
    if decimals > 0:
        return lax.div(_rint(lax.mul(a, factor)), factor)
    return lax.mul(_rint(lax.div(a, factor)), factor)


def _operator_index(fname: str, argname: str, value: Any) -> int:
    try:
        return value.__index__()
    except AttributeError:
        raise TypeError(
            f"mjnp.{fname}: {argname} must be an integer, got {type(value).__name__} {value!r}"
        ) from None


# --- exponents, logarithms, roots -----------------------------------------------------------


def _float_unary(
    name: str, fun: Callable[[Array], Array], kinds: str = "fc"
) -> Callable[[ArrayLike], Array]:
    """A unary ufunc with only floating loops (ints go to the smallest safe float dtype)."""

    def ufunc(x: ArrayLike, /) -> Array:
        (x,) = promote_args_float(name, x)
        _check_kinds(name, kinds, x)
        return fun(x)

    ufunc.__name__ = ufunc.__qualname__ = name
    ufunc.__doc__ = f"Elementwise `{name}`, as `numpy.{name}` (integers compute in a float dtype)."
    return ufunc_out(ufunc)


def _log_base(base: float) -> Callable[[Array], Array]:
    def log_base(x: Array) -> Array:
        return lax.div(lax.log(x), _const(float(np.log(base)), x))

    return log_base


def _reciprocal(x: Array) -> Array:
    if x.dtype.kind == "c":
        return _complex_reciprocal(x)
    return lax.div(_const(1, x), x)


def _complex_reciprocal(x: Array) -> Array:
    """`1 / x` by Smith's algorithm, as NumPy computes it (so `1 / 0j` is nan+nanj, and huge
    values do not overflow to NaN)."""
    re, im = lax.real(x), lax.imag(x)
    one = lax.full((), 1, re.dtype)
    real_larger = lax.ge(lax.abs(re), lax.abs(im))
    big = lax.select(real_larger, re, im)
    small = lax.select(real_larger, im, re)
    ratio = lax.div(small, big)
    d = lax.add(big, lax.mul(small, ratio))
    inv = lax.div(one, d)
    scaled = lax.div(ratio, d)
    # real >= imag: (1/d, -r/d); otherwise (r/d, -1/d)
    out_re = lax.select(real_larger, inv, scaled)
    out_im = lax.neg(lax.select(real_larger, scaled, inv))
    return lax.complex(out_re, out_im)


exp = _float_unary("exp", lax.exp)
exp2 = _float_unary("exp2", lax.exp2)
expm1 = _float_unary("expm1", lax.expm1)
log = _float_unary("log", lax.log)
log2 = _float_unary("log2", _log_base(2.0))
log10 = _float_unary("log10", _log_base(10.0))
log1p = _float_unary("log1p", lax.log1p)
sqrt = _float_unary("sqrt", lax.sqrt)
cbrt = _float_unary("cbrt", lax.cbrt, "f")
sin = _float_unary("sin", lax.sin)
cos = _float_unary("cos", lax.cos)
tan = _float_unary("tan", lax.tan)
arcsin = _float_unary("arcsin", lax.asin)
arccos = _float_unary("arccos", lax.acos)
arctan = _float_unary("arctan", lax.atan)
sinh = _float_unary("sinh", lax.sinh)
cosh = _float_unary("cosh", lax.cosh)
tanh = _float_unary("tanh", lax.tanh)
arcsinh = _float_unary("arcsinh", lax.asinh)
arccosh = _float_unary("arccosh", lax.acosh)
arctanh = _float_unary("arctanh", lax.atanh)
# Array API names.
asin, acos, atan = arcsin, arccos, arctan
asinh, acosh, atanh = arcsinh, arccosh, arctanh


@ufunc_out
def deg2rad(x: ArrayLike, /) -> Array:
    """Degrees to radians, `x * (pi / 180)`, as `numpy.deg2rad`."""
    (x,) = promote_args_float("deg2rad", x)
    _check_kinds("deg2rad", "f", x)
    return lax.mul(x, _const(np.pi / 180.0, x))


@ufunc_out
def rad2deg(x: ArrayLike, /) -> Array:
    """Radians to degrees, `x * (180 / pi)`, as `numpy.rad2deg`."""
    (x,) = promote_args_float("rad2deg", x)
    _check_kinds("rad2deg", "f", x)
    return lax.mul(x, _const(180.0 / np.pi, x))


radians, degrees = deg2rad, rad2deg


@ufunc_out
def arctan2(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise quadrant-aware `arctan(x1 / x2)`, as `numpy.arctan2`."""
    x1, x2 = _pair("arctan2", promote_args_float, x1, x2)
    _check_kinds("arctan2", "f", x1)
    return lax.atan2(x1, x2)


atan2 = arctan2


@ufunc_out
def hypot(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise `sqrt(x1**2 + x2**2)` without undue overflow, as `numpy.hypot` (C's `hypot`,
    to the last bit, under jit too)."""
    x1, x2 = _pair("hypot", promote_args_float, x1, x2)
    _check_kinds("hypot", "f", x1)
    if x1.dtype == dtypes.bfloat16:
        return _bfloat16_hypot(x1, x2)
    return lax.hypot(x1, x2)


def _bfloat16_hypot(x1: Array, x2: Array) -> Array:
    """JAX's `hypot` of bfloat16, in bfloat16 (its bits: NumPy has no bfloat16 `hypot`)."""
    a, b = lax.abs(x1), lax.abs(x2)
    inf, zero, one = _const(np.inf, a), _const(0, a), _const(1, a)
    big, small = lax.max(a, b), lax.min(a, b)
    big_zero = lax.eq(big, zero)
    ratio = lax.div(small, _select(big_zero, big, lax.broadcast_to(one, big.shape)))
    scaled = lax.mul(big, lax.sqrt(lax.add(one, lax.mul(ratio, ratio))))
    out = _select(big_zero, scaled, big)
    return _select(lax.bitwise_or(lax.eq(a, inf), lax.eq(b, inf)), out, inf)


@ufunc_out(host=np.square)  # on the host: NumPy's one call
def square(x: ArrayLike, /) -> Array:
    """Elementwise `x * x`, as `numpy.square` (bool gives int8)."""
    (x,) = promote_args_numeric("square", x)
    return lax.mul(x, x)


@ufunc_out
def reciprocal(x: ArrayLike, /) -> Array:
    """Elementwise `1 / x` in `x`'s dtype, as `numpy.reciprocal` (bool gives int8).

    NB: integer 1 / 0 is -1 here (XLA's value); NumPy's is platform dependent.
    """
    (x,) = promote_args_numeric("reciprocal", x)
    return _reciprocal(x)


# --- comparisons ----------------------------------------------------------------------------


# The result of each comparison where x1 < x2 and where x1 > x2 everywhere.
_ORDERED_OUTCOMES = {
    "equal": (False, False),
    "not_equal": (True, True),
    "less": (True, False),
    "less_equal": (True, False),
    "greater": (False, True),
    "greater_equal": (False, True),
}


def _compare_out_of_range(name: str, x1: Any, x2: Any) -> Array | None:
    """NumPy 2 compares integer arrays with Python ints outside their dtype exactly (no
    OverflowError): `uint8_array < 300` is all True. None when no operand is such an int."""
    for big, other, big_is_x1 in ((x2, x1, False), (x1, x2, True)):
        if type(big) is int and type(other) is not int:
            other = asarray_arg(name, other)
            info = np.iinfo(other.dtype) if other.dtype.kind in "iu" else None
            if info is not None and not info.min <= big <= info.max:
                x1_less = (big > info.max) != big_is_x1
                value = _ORDERED_OUTCOMES[name][0 if x1_less else 1]
                return lax.full(other.shape, value, _BOOL)
    return None


def _comparison(
    name: str, lax_fun: Callable[[Array, Array], Array], flip: bool | None, strict: bool
) -> Callable[[ArrayLike, ArrayLike], Array]:
    """A comparison ufunc; `flip` and `strict` say how complex values order (None: they only
    compare for equality)."""

    def compare(x1: ArrayLike, x2: ArrayLike, /) -> Array:
        fixed = _compare_out_of_range(name, x1, x2)
        if fixed is not None:
            return fixed
        x1, x2 = _pair(name, promote_args, x1, x2)
        if x1.dtype.kind == "c" and flip is not None:
            a, b = (x2, x1) if flip else (x1, x2)
            return _complex_greater(a, b, not strict)
        return lax_fun(x1, x2)

    compare.__name__ = compare.__qualname__ = name
    compare.__doc__ = (
        f"Elementwise comparison, as `numpy.{name}`: complex values order lexicographically, "
        "and Python ints outside an integer array's dtype compare exactly."
    )
    return ufunc_out(compare, int_scalars=True, int_host=getattr(np, name))


equal = _comparison("equal", lax.eq, flip=None, strict=True)
not_equal = _comparison("not_equal", lax.ne, flip=None, strict=True)
less = _comparison("less", lax.lt, flip=True, strict=True)
less_equal = _comparison("less_equal", lax.le, flip=True, strict=False)
greater = _comparison("greater", lax.gt, flip=False, strict=True)
greater_equal = _comparison("greater_equal", lax.ge, flip=False, strict=False)


# --- logic and bits -------------------------------------------------------------------------


def _truth(fname: str, x: ArrayLike) -> Array:
    x = asarray_arg(fname, x)
    return x if x.dtype == _BOOL else lax.ne(x, _const(0, x))


def _truth_pair(fname: str, x1: ArrayLike, x2: ArrayLike) -> tuple[Array, Array]:
    check_arraylike(fname, x1, x2)
    x1, x2 = _truth(fname, x1), _truth(fname, x2)
    if x1.shape != x2.shape:
        _broadcast_shapes(fname, x1.shape, x2.shape)
    return x1, x2


@ufunc_out
def logical_and(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise truth of `x1 and x2`, as `numpy.logical_and`."""
    return lax.bitwise_and(*_truth_pair("logical_and", x1, x2))


@ufunc_out
def logical_or(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise truth of `x1 or x2`, as `numpy.logical_or`."""
    return lax.bitwise_or(*_truth_pair("logical_or", x1, x2))


@ufunc_out
def logical_xor(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise truth of `bool(x1) != bool(x2)`, as `numpy.logical_xor`."""
    return lax.bitwise_xor(*_truth_pair("logical_xor", x1, x2))


@ufunc_out
def logical_not(x: ArrayLike, /) -> Array:
    """Elementwise truth of `not x`, as `numpy.logical_not`."""
    return lax.bitwise_not(_truth("logical_not", x))


def _bitwise(name: str, lax_fun: Callable[[Array, Array], Array]):
    def bitwise(x1: ArrayLike, x2: ArrayLike, /) -> Array:
        x1, x2 = _pair(name, promote_args, x1, x2)
        _check_kinds(name, "biu", x1)
        return lax_fun(x1, x2)

    bitwise.__name__ = bitwise.__qualname__ = name
    bitwise.__doc__ = f"Elementwise bit operation on integers and bools, as `numpy.{name}`."
    return ufunc_out(bitwise, int_host=getattr(np, name))


bitwise_and = _bitwise("bitwise_and", lax.bitwise_and)
bitwise_or = _bitwise("bitwise_or", lax.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", lax.bitwise_xor)


@ufunc_out
def invert(x: ArrayLike, /) -> Array:
    """Elementwise bitwise not (logical not for bool), as `numpy.invert`."""
    (x,) = promote_args("invert", x)
    _check_kinds("invert", "biu", x)
    return lax.bitwise_not(x)


bitwise_not = bitwise_invert = invert


@ufunc_out
def left_shift(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise `x1 << x2`, as `numpy.left_shift` (shifts past the bit width give 0)."""
    x1, x2 = _pair("left_shift", promote_args_numeric, x1, x2)
    _check_kinds("left_shift", "iu", x1)
    return lax.shift_left(x1, x2)


@ufunc_out
def right_shift(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Elementwise `x1 >> x2`, arithmetic for signed integers, as `numpy.right_shift`."""
    x1, x2 = _pair("right_shift", promote_args_numeric, x1, x2)
    _check_kinds("right_shift", "iu", x1)
    if x1.dtype.kind == "i":
        return lax.shift_right_arithmetic(x1, x2)
    return lax.shift_right_logical(x1, x2)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


# --- floating-point tests -------------------------------------------------------------------


def _false_like(x: Array) -> Array:
    return lax.full(x.shape, False, _BOOL)


@ufunc_out(host=np.isnan)  # on the host: NumPy's one call
def isnan(x: ArrayLike, /) -> Array:
    """Elementwise test for NaN (either part for complex), as `numpy.isnan`."""
    x = asarray_arg("isnan", x)
    if dtypes.kind(x.dtype) not in "fc":
        return _false_like(x)
    return lax.ne(x, x)


@ufunc_out(host=np.isfinite)  # on the host: NumPy's one call
def isfinite(x: ArrayLike, /) -> Array:
    """Elementwise test for neither infinite nor NaN (both parts for complex), as NumPy."""
    x = asarray_arg("isfinite", x)
    if x.dtype.kind == "c":
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    if dtypes.kind(x.dtype) != "f":
        return lax.full(x.shape, True, _BOOL)
    return lax.is_finite(x)


@ufunc_out(host=np.isinf)  # on the host: NumPy's one call
def isinf(x: ArrayLike, /) -> Array:
    """Elementwise test for positive or negative infinity (either part for complex), as NumPy."""
    x = asarray_arg("isinf", x)
    if x.dtype.kind == "c":
        return lax.bitwise_or(_isinf_real(lax.real(x)), _isinf_real(lax.imag(x)))
    if dtypes.kind(x.dtype) != "f":
        return _false_like(x)
    return _isinf_real(x)


def _isinf_real(x: Array) -> Array:
    return lax.eq(lax.abs(x), _const(np.inf, x))


@ufunc_out
def signbit(x: ArrayLike, /) -> Array:
    """Elementwise test for a set sign bit (true for -0.0 and negative NaNs), as `numpy.signbit`."""
    (x,) = promote_args_float("signbit", x)
    _check_kinds("signbit", "f", x)
    bits = lax.bitcast_convert_type(x, np.dtype(f"int{8 * x.dtype.itemsize}"))
    return lax.lt(bits, lax.full((), 0, bits.dtype))


# --- complex parts --------------------------------------------------------------------------


@fuse_eagerly
def real(val: ArrayLike, /) -> Array:
    """The real part (the array itself for real input), as `numpy.real`."""
    val = asarray_arg("real", val)
    return lax.real(val) if val.dtype.kind == "c" else val


@fuse_eagerly
def imag(val: ArrayLike, /) -> Array:
    """The imaginary part (zeros for real input), as `numpy.imag`."""
    val = asarray_arg("imag", val)
    return lax.imag(val) if val.dtype.kind == "c" else _zeros_like(val)


@ufunc_out
def conjugate(x: ArrayLike, /) -> Array:
    """The complex conjugate (real input unchanged; bool gives int8), as `numpy.conjugate`."""
    (x,) = promote_args_numeric("conjugate", x)
    return lax.conj(x) if x.dtype.kind == "c" else x


conj = conjugate


# --- selection ------------------------------------------------------------------------------


def where(condition: ArrayLike, x: ArrayLike = _NO_VALUE, y: ArrayLike = _NO_VALUE, /) -> Any:
    """Elementwise `x if condition else y`, broadcast together, as `numpy.where`; with the
    condition alone, its `nonzero()` (a tuple of index arrays).

    Raises:
        ValueError: for `x` without `y` or `y` without `x`, as NumPy.
    """
    if x is _NO_VALUE and y is _NO_VALUE:
        return asarray_arg("where", condition).nonzero()
    if x is _NO_VALUE or y is _NO_VALUE:
        raise ValueError("mjnp.where: either both or neither of x and y should be given")
    return _where(condition, x, y)


@functools.partial(fuse_eagerly, host=np.where)  # on the host: NumPy's one call
def _where(condition: ArrayLike, x: ArrayLike, y: ArrayLike, /) -> Array:
    check_arraylike("where", condition, x, y)
    cond = _truth("where", condition)
    x, y = promote_args_wrapping("where", x, y)
    return _select(cond, y, x)


def clip(
    a: ArrayLike,
    a_min: ArrayLike | None = np._NoValue,
    a_max: ArrayLike | None = np._NoValue,
    out: Any = None,
    *,
    min: ArrayLike | None = np._NoValue,  # noqa: A002  (NumPy's argument name)
    max: ArrayLike | None = np._NoValue,  # noqa: A002  (NumPy's argument name)
    casting: dtypes.Casting = "same_kind",
) -> Array:
    """Limit values to `[a_min, a_max]`, as `numpy.clip`: `minimum(maximum(a, a_min), a_max)`.

    Either bound may be None. `min` and `max` are the Array API names for `a_min` and `a_max`:
    as NumPy's, pass both positional bounds or neither (`clip(a, 2)` is a TypeError; the
    method `a.clip(2)` is `clip(a, min=2)`). `out=` rebinds the given array, with the ufunc
    rules; `casting` is the rule for writing the result into `out`, as the ufunc keyword
    NumPy's clip passes on.
    """
    no_value = np._NoValue
    if a_min is no_value and a_max is no_value:
        a_min = None if min is no_value else min
        a_max = None if max is no_value else max
    elif a_min is no_value:
        raise TypeError("clip() missing 1 required positional argument: 'a_min'")
    elif a_max is no_value:
        raise TypeError("clip() missing 1 required positional argument: 'a_max'")
    elif min is not no_value or max is not no_value:
        raise ValueError(
            "Passing `min` or `max` keyword argument when `a_min` and `a_max` are provided is "
            "forbidden."
        )
    # `out` (also positional, as `a.clip(m, M, out)` passes it) is written here, never handed
    # to the fused call as one more input.
    result = _clip_fused(a, a_min, a_max)
    return result if out is None else write_out("clip", out, result, casting, broadcast=True)


@fuse_eagerly
def _clip_fused(a: ArrayLike, a_min: Any, a_max: Any) -> Array:
    result = _clip(a, a_min, a_max)
    if result is a:  # no bounds: a new array, as NumPy's (the input would follow its writes)
        result = convert_element_type_p.bind1(a, new_dtype=a.dtype, weak_type=a.weak_type)
    return result


# The eager-fusion handles of the fused body (tests and `uses_host` read them).
clip.__wrapped_fused__ = _clip_fused.__wrapped_fused__  # type: ignore[attr-defined]
clip.__fused_runners__ = _clip_fused.__fused_runners__  # type: ignore[attr-defined]


def _clip(a: ArrayLike, a_min: Any, a_max: Any) -> Array:
    if type(a) in (bool, int, float, complex):
        a_dtype = dtypes.python_scalar_dtype(a)
    else:
        a = asarray_arg("clip", a)
        a_dtype = a.dtype
    if a_dtype.kind in "iu":
        # NumPy's rule: a Python int bound beyond the dtype's range clips nothing (where
        # maximum(uint8_array, -1) would raise OverflowError), so it is dropped.
        info = np.iinfo(a_dtype)
        if type(a_min) is int and a_min <= info.min:
            a_min = None
        if type(a_max) is int and a_max >= info.max:
            a_max = None
    bounds = [b for b in (a_min, a_max) if b is not None]
    a, *bounds = promote_args("clip", a, *bounds)
    if a_min is not None:
        a = maximum(a, bounds.pop(0))
    if a_max is not None:
        a = minimum(a, bounds.pop(0))
    return a
