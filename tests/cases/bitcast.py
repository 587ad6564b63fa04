"""Rows for mjcore/lax/bitcast.py."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from mjcore import lax
from tests.primitive_case import PrimCase


def _view(dtype: str):
    def numpy_fun(x):
        return np.asarray(x).view(dtype)

    return numpy_fun


def _specials(rng, shape, dtype):
    """Floats including signed zeros, infinities and NaNs of both signs."""
    pool = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.5, -2.25], dtype)
    return np.where(rng.random(shape) < 0.5, rng.choice(pool, size=shape), rng.normal(size=shape))


def _rounded_to(dtype):
    def numpy_fun(x):
        with np.errstate(over="ignore"):  # overflow to infinity is the expected result
            return np.asarray(x).astype(dtype).astype(x.dtype)

    return numpy_fun


CASES = [
    # Formats at least as wide as the dtype leave it alone: the linear rules meet the
    # finite-difference and transpose checks.
    PrimCase(
        "reduce_precision-wide",
        lambda x: lax.reduce_precision(x, 11, 52),
        lambda x: x,
        ((3, 4),),
        ("float32", "float64"),
        linear=True,
    ),
    # Rounding is piecewise constant, so only values, jit and vmap are checked here.
    PrimCase(
        "reduce_precision-bfloat16",
        lambda x: lax.reduce_precision(x, 8, 7),
        _rounded_to(ml_dtypes.bfloat16),
        ((3, 4),),
        ("float32", "float64"),
        domain=_specials,
        diff_argnums=(),
    ),
    PrimCase(
        "reduce_precision-float16",
        lambda x: lax.reduce_precision(x, 5, 10),
        _rounded_to(np.float16),
        ((2, 5),),
        ("float32", "float64"),
        domain=(-1e5, 1e5),
        diff_argnums=(),
    ),
    PrimCase(
        "bitcast-f64-i64",
        lambda x: lax.bitcast_convert_type(x, "int64"),
        _view("int64"),
        ((3, 4),),
        ("float64",),
        domain=_specials,
        diff_argnums=(),
    ),
    PrimCase(
        "bitcast-f32-u32",
        lambda x: lax.bitcast_convert_type(x, "uint32"),
        _view("uint32"),
        ((2, 3),),
        ("float32",),
        diff_argnums=(),
    ),
    PrimCase(
        "bitcast-i32-f32",
        lambda x: lax.bitcast_convert_type(x, "float32"),
        _view("float32"),
        ((5,),),
        ("int32",),
        domain=(0, 2**20),
        diff_argnums=(),
    ),
    PrimCase(
        "nextafter",
        lax.nextafter,
        np.nextafter,
        ((3, 4), (3, 4)),
        ("float32", "float64"),
        smooth=False,
    ),
    PrimCase(
        "nextafter-broadcast",
        lax.nextafter,
        np.nextafter,
        ((3, 1), (4,)),
        ("float64",),
        smooth=False,
    ),
]
