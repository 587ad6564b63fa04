"""More of NumPy's mathematical functions: the step function (`heaviside`), number theory
(`gcd`, `lcm`), stable log-sum-exp (`logaddexp`, `logaddexp2`), `sinc`, complex numbers
(`angle`, `real_if_close`), `nan_to_num` and `unwrap`.

Like `mjnp._elementwise`, every function is a composition of `mjcore.lax` ops, so all
transformations apply (`real_if_close`, whose dtype depends on the values, works eagerly only).
The floating-point routines (`copysign`, `frexp`, ...) are in `mjnp._floating_point`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mjcore import dtypes, lax, while_loop
from mjcore.eager_fusion import fuse_eagerly
from mjnp import _elementwise as ew
from mjnp import _manipulation, _reductions
from mjnp._floating_point import _const, _float_args, _where
from mjnp._host_numpy import fused_handles, host_value, wrap
from mjnp._logic import isneginf, isposinf
from mjnp._manipulation import normalize_axis
from mjnp._out import ufunc_out
from mjnp._promotion import asarray_arg, promote_args

ArrayLike = Any
Array = Any


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


# --- NaN and complex cleanup ----------------------------------------------------------------


_WIDE = (np.dtype(np.float64), np.dtype(np.complex128))


def _numpy_fills(dtype: np.dtype, *fills: Any) -> bool:
    """Whether NumPy's `nan_to_num` fills an array of `dtype` with `fills` as the general path
    does: the default fills, or Python floats (and ints it holds exactly) in float64 or
    complex128, which no cast can overflow (a narrower dtype warns in NumPy, not here)."""
    if dtypes.kind(dtype) not in "fc":
        return False
    if fills == (0.0, None, None):
        return True
    return dtype in _WIDE and all(
        a is None or type(a) is float or (type(a) is int and -(2**53) <= a <= 2**53) for a in fills
    )


def nan_to_num(
    x: ArrayLike,
    copy: bool = True,
    nan: float = 0.0,
    posinf: float | None = None,
    neginf: float | None = None,
) -> Array:
    """NaN to `nan`, infinities to `posinf`/`neginf` (default the largest finite values), as
    `numpy.nan_to_num`; integers and bools pass through."""
    v = host_value(x)
    if v is not None and _numpy_fills(v.dtype, nan, posinf, neginf):
        # eagerly on CPU: NumPy's, on a copy (mjnp's arrays are immutable whatever `copy` says)
        out = np.nan_to_num(v, copy=True, nan=nan, posinf=posinf, neginf=neginf)
        return wrap(out)  # strong, as the general path's (`where` of a strong fill)
    return _nan_to_num(x, copy, nan, posinf, neginf)


@fuse_eagerly
def _nan_to_num(
    x: ArrayLike,
    copy: bool = True,
    nan: float = 0.0,
    posinf: float | None = None,
    neginf: float | None = None,
) -> Array:
    x = asarray_arg("nan_to_num", x)
    if x.dtype.kind == "c":
        re = nan_to_num(lax.real(x), nan=nan, posinf=posinf, neginf=neginf)
        im = nan_to_num(lax.imag(x), nan=nan, posinf=posinf, neginf=neginf)
        return lax.complex(re, im)
    if dtypes.kind(x.dtype) != "f":
        return x
    info = dtypes.finfo(x.dtype)
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf
    with np.errstate(over="ignore"):
        big, small, nan_value = (np.asarray(v).astype(x.dtype).item() for v in (big, small, nan))
    out = _where(ew.isnan(x), lax.full((), nan_value, x.dtype), x)
    out = _where(isposinf(x), lax.full((), big, x.dtype), out)
    return _where(isneginf(x), lax.full((), small, x.dtype), out)


fused_handles(nan_to_num, _nan_to_num)


def real_if_close(a: ArrayLike, tol: float = 100) -> Array:
    """`a.real` if every imaginary part is within `tol` (in machine epsilons when > 1) of zero.

    NB: the result dtype depends on the values, so this works eagerly only; it raises a
    concretization error under `jit`.
    """
    a = asarray_arg("real_if_close", a)
    if a.dtype.kind != "c":
        return a
    if tol > 1:
        tol = float(dtypes.finfo(a.dtype).eps) * tol
    if bool(_reductions.all(ew.less(ew.absolute(lax.imag(a)), tol))):
        return lax.real(a)
    return a


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
