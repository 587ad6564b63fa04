"""NumPy's logic functions beyond the elementwise comparisons: value tests (`isposinf`,
`isneginf`, `iscomplex`, `isreal`, `isnat`), type tests (`iscomplexobj`, `isrealobj`,
`isscalar`, `iterable`) and closeness and equality of arrays (`isclose`, `allclose`,
`array_equal`, `array_equiv`).

Compositions of `mjcore.lax` ops, so all transformations apply. Results that NumPy gives as
Python bools (`allclose`, `array_equal`, ...) are Python bools here too when called on values,
and 0-d bool arrays under a transformation, so they trace.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from mjcore import lax
from mjcore.array import Array as _Array
from mjcore.core import Tracer
from mjcore.eager_fusion import fuse_eagerly
from mjnp import _elementwise as ew
from mjnp import _reductions
from mjnp._host_numpy import bare, host_values
from mjnp._out import write_out
from mjnp._promotion import asarray_arg

ArrayLike = Any
Array = Any

_BOOL = np.dtype(bool)


# --- value tests ----------------------------------------------------------------------------


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


def isnat(x: ArrayLike, /) -> Array:
    """`numpy.isnat`: whether each element is NaT (not a time).

    NB: mjnp has no datetime64 or timedelta64 dtypes, so every mjnp array gets NumPy's
    TypeError for non-datetime input.

    Raises:
        TypeError: always (naming the dtype given).
    """
    dtype = asarray_arg("isnat", x).dtype
    raise TypeError(
        f"mjnp.isnat: ufunc 'isnat' is only defined for np.datetime64 and np.timedelta64, got "
        f"dtype {dtype}; mjnp has no datetime dtypes (use NumPy for dates and times)"
    )


# --- type tests -----------------------------------------------------------------------------


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


# --- closeness and equality -----------------------------------------------------------------


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


_numpy_array_equal = bare(np.array_equal)


def array_equal(a1: ArrayLike, a2: ArrayLike, equal_nan: bool = False) -> Array | bool:
    """Same shape and elements, as `numpy.array_equal`: a Python bool (a traced 0-d bool array
    under a transformation)."""
    if type(equal_nan) is bool:
        values = host_values(a1, a2)
        # one dtype: NumPy's `a1 == a2` is then mjnp's `equal` without promotion questions
        if values is not None and values[0].dtype == values[1].dtype:
            if values[0].dtype.kind in "biufc":
                return _numpy_array_equal(values[0], values[1], equal_nan)
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
