"""`mjnp.emath`: NumPy's `numpy.emath` (scimath), functions whose result is complex where the
real function has no real value (`sqrt(-1)` is `1j`), real otherwise.

The result dtype depends on the values, so these functions read them: they run on concrete
arrays only. Under `jit`, `grad` or `vmap` use the plain functions on a complex array instead
(`mjnp.sqrt(x.astype(complex))`), whose dtype is fixed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore.core import Tracer
from mjcore.errors import ConcretizationTypeError
from mjnp import _elementwise as ew
from mjnp._creation import asarray
from mjnp._reductions import any as _any

__all__ = ["arccos", "arcsin", "arctanh", "log", "log2", "log10", "logn", "power", "sqrt"]

# NumPy's _tocomplex: these become complex64, every other real type complex128.
_SINGLE_COMPLEX = {np.dtype(t) for t in (np.float32, np.int8, np.int16, np.uint8, np.uint16)}


def _concrete(name: str, x: Any) -> Any:
    if isinstance(x, Tracer):
        raise ConcretizationTypeError(
            f"mjnp.emath.{name}: a traced argument {x.aval.str_short()} "
            f"({x._trace.main.description}). The result is complex or real depending on the "
            f"values, so they must be known; under a transformation call mjnp.{name} on a "
            "complex array instead, e.g. mjnp.sqrt(x.astype(complex))"
        )
    return asarray(x)


def _to_complex(x: Any) -> Any:
    if x.dtype.kind == "c":
        return x
    return x.astype(np.complex64 if x.dtype in _SINGLE_COMPLEX else np.complex128)


def _fix_real_lt_zero(name: str, x: Any) -> Any:
    x = _concrete(name, x)
    if x.dtype.kind != "c" and bool(_any(ew.less(x, 0))):
        return _to_complex(x)
    return x


def _fix_int_lt_zero(name: str, p: Any) -> Any:
    p = _concrete(name, p)
    if p.dtype.kind in "iu" and bool(_any(ew.less(p, 0))):
        return ew.multiply(p, 1.0)
    return p


def _fix_real_abs_gt_1(name: str, x: Any) -> Any:
    x = _concrete(name, x)
    if x.dtype.kind != "c" and bool(_any(ew.greater(ew.absolute(x), 1))):
        return _to_complex(x)
    return x


def sqrt(x: Any) -> Any:
    """Square root, complex for negative entries, as `numpy.emath.sqrt` (`sqrt(-4)` is `2j`)."""
    return ew.sqrt(_fix_real_lt_zero("sqrt", x))


def log(x: Any) -> Any:
    """Natural log, complex for negative entries (`log(-1)` is `pi*1j`), as `numpy.emath.log`."""
    return ew.log(_fix_real_lt_zero("log", x))


def log10(x: Any) -> Any:
    """Base-10 log, complex for negative entries, as `numpy.emath.log10`."""
    return ew.log10(_fix_real_lt_zero("log10", x))


def log2(x: Any) -> Any:
    """Base-2 log, complex for negative entries, as `numpy.emath.log2`."""
    return ew.log2(_fix_real_lt_zero("log2", x))


def logn(n: Any, x: Any) -> Any:
    """Base-`n` log of `x`, complex for negative entries of either, as `numpy.emath.logn`."""
    x = _fix_real_lt_zero("logn", x)
    n = _fix_real_lt_zero("logn", n)
    return ew.true_divide(ew.log(x), ew.log(n))


def power(x: Any, p: Any) -> Any:
    """`x ** p`, complex for negative `x` (and float for negative integer `p`), as
    `numpy.emath.power`."""
    return ew.power(_fix_real_lt_zero("power", x), _fix_int_lt_zero("power", p))


def arccos(x: Any) -> Any:
    """Inverse cosine, complex where `abs(x) > 1`, as `numpy.emath.arccos`."""
    return ew.arccos(_fix_real_abs_gt_1("arccos", x))


def arcsin(x: Any) -> Any:
    """Inverse sine, complex where `abs(x) > 1`, as `numpy.emath.arcsin`."""
    return ew.arcsin(_fix_real_abs_gt_1("arcsin", x))


def arctanh(x: Any) -> Any:
    """Inverse hyperbolic tangent, complex where `abs(x) > 1`, as `numpy.emath.arctanh`."""
    return ew.arctanh(_fix_real_abs_gt_1("arctanh", x))
