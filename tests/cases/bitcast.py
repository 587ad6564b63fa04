"""Rows for mjcore/lax/bitcast.py."""

from __future__ import annotations

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


CASES = [
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
