"""Rows for mjcore/lax/arithmetic.py, comparison.py, base.py, stop_gradient.py and
optimization_barrier.py."""

from __future__ import annotations

import numpy as np

import mjcore
from mjcore import lax
from mjcore.sharding import SingleDeviceSharding
from tests.primitive_case import PrimCase

FLOATS = ("float32", "float64")
INTS = ("int32", "int64", "uint8")


def _nonzero(rng, shape, dtype):
    sign = rng.choice([-1, 1], size=shape) if np.dtype(dtype).kind != "u" else 1
    if np.dtype(dtype).kind in "iu":
        return (rng.integers(1, 6, size=shape) * sign).astype(dtype)
    return (rng.uniform(0.5, 2.0, size=shape) * sign).astype(dtype)


def _positive(rng, shape, dtype):
    return rng.uniform(0.5, 2.0, size=shape).astype(dtype)


def _c_rem(x, y):
    return np.fmod(x, y)


def _c_div(x, y):
    if np.dtype(x.dtype).kind in "iu":
        return (np.trunc(x / y)).astype(x.dtype)
    return x / y


def _clamp_apart(lo, x, hi):
    # Bounds in (-2, 0) and (0, 2) for inputs in (-2, 2): min < max (where JAX's derivative
    # rule holds) and x on both sides of each bound.
    return lax.clamp(lax.sub(lax.div(lo, 2.0), 1.0), x, lax.add(lax.div(hi, 2.0), 1.0))


CASES = [
    PrimCase("add", lax.add, np.add, ((3, 4), (3, 4)), FLOATS + INTS, linear=True),
    PrimCase("add-broadcast", lax.add, np.add, ((3, 1), (4,)), FLOATS, linear=True),
    PrimCase("add-scalar", lax.add, np.add, ((3, 4), ()), FLOATS, linear=True),
    PrimCase("sub", lax.sub, np.subtract, ((3, 4), (3, 4)), FLOATS + INTS, linear=True),
    PrimCase("mul", lax.mul, np.multiply, ((3, 4), (3, 4)), FLOATS + INTS),
    PrimCase("mul-broadcast", lax.mul, np.multiply, ((2, 1, 3), (4, 1)), FLOATS),
    PrimCase(
        "div", lax.div, _c_div, ((3, 4), (3, 4)), FLOATS + ("int32", "int64"), domain=_nonzero
    ),
    PrimCase(
        "rem", lax.rem, _c_rem, ((3, 4), (3, 4)), FLOATS + ("int32",), domain=_nonzero, smooth=False
    ),
    PrimCase("neg", lax.neg, np.negative, ((3, 4),), FLOATS + ("int32", "int64"), linear=True),
    PrimCase("sign", lax.sign, np.sign, ((3, 4),), FLOATS + ("int32", "uint8"), domain=_nonzero),
    PrimCase("abs", lax.abs, np.abs, ((3, 4),), FLOATS + ("int32",), domain=_nonzero, smooth=False),
    PrimCase("max", lax.max, np.maximum, ((3, 4), (3, 4)), FLOATS + INTS),
    PrimCase("min", lax.min, np.minimum, ((3, 4), (3, 4)), FLOATS + INTS),
    PrimCase("floor", lax.floor, np.floor, ((3, 4),), FLOATS),
    PrimCase("ceil", lax.ceil, np.ceil, ((3, 4),), FLOATS),
    PrimCase(
        "round-even",
        lambda x: lax.round(x, 1),
        np.round,
        ((3, 4),),
        FLOATS,
        domain=lambda rng, s, d: rng.integers(-8, 8, size=s) / 2,
        diff_argnums=(),
    ),
    PrimCase(
        "round-afz", lax.round, lambda x: np.trunc(x + np.copysign(0.5, x)), ((3, 4),), FLOATS
    ),
    PrimCase(
        "integer_pow-3",
        lambda x: lax.integer_pow(x, 3),
        lambda x: x**3,
        ((3, 4),),
        FLOATS + ("int32",),
    ),
    PrimCase(
        "integer_pow-neg2",
        lambda x: lax.integer_pow(x, -2),
        lambda x: x**-2.0,
        ((3, 4),),
        FLOATS,
        domain=_nonzero,
    ),
    PrimCase(
        "clamp-scalar-bounds",
        _clamp_apart,
        lambda lo, x, hi: np.minimum(np.maximum(x, lo / 2 - 1), hi / 2 + 1),
        ((), (3, 4), ()),
        FLOATS,
    ),
    PrimCase(
        "clamp-int",
        lax.clamp,
        lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi),
        ((), (3, 4), ()),
        ("int32", "uint8"),
    ),
    PrimCase(
        "clamp-array-bounds",
        _clamp_apart,
        lambda lo, x, hi: np.minimum(np.maximum(x, lo / 2 - 1), hi / 2 + 1),
        ((3, 4), (3, 4), (3, 4)),
        FLOATS,
    ),
    PrimCase(
        "clamp-mixed-bounds",
        lax.clamp,
        lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi),
        ((3, 4), (3, 4), ()),
        FLOATS,
        domain=_nonzero,
        diff_argnums=(1,),
    ),
    # Its derivative is zero by design; tests/test_lax_extras.py checks it against JAX.
    PrimCase(
        "stop_gradient",
        lax.stop_gradient,
        lambda x: x,
        ((3, 4),),
        FLOATS + ("complex128",),
        diff_argnums=(),
    ),
    # Laid out on one device: the multi-device layouts are tests/test_sharding.py's.
    PrimCase(
        "sharding_constraint",
        lambda x: lax.with_sharding_constraint(x, SingleDeviceSharding(mjcore.devices()[0])),
        lambda x: x,
        ((3, 4),),
        FLOATS + ("int32",),
        linear=True,
    ),
    PrimCase(
        "optimization_barrier",
        lax.optimization_barrier,
        lambda x: x,
        ((3, 4),),
        FLOATS + ("int32",),
        linear=True,
    ),
    PrimCase(
        "eq",
        lax.eq,
        np.equal,
        ((3, 4), (3, 4)),
        FLOATS + INTS,
        domain=lambda rng, s, d: rng.integers(0, 3, size=s),
    ),
    PrimCase(
        "ne",
        lax.ne,
        np.not_equal,
        ((3, 4), (3, 4)),
        FLOATS + INTS,
        domain=lambda rng, s, d: rng.integers(0, 3, size=s),
    ),
    PrimCase("lt", lax.lt, np.less, ((3, 4), (3, 4)), FLOATS + INTS),
    PrimCase("le", lax.le, np.less_equal, ((3, 4), (3, 4)), FLOATS + INTS),
    PrimCase("gt", lax.gt, np.greater, ((3, 4), (3, 4)), FLOATS + INTS),
    PrimCase("ge", lax.ge, np.greater_equal, ((3, 4), (3, 4)), FLOATS + INTS),
    PrimCase(
        "convert-f64",
        lambda x: lax.convert_element_type(x, np.float64),
        lambda x: x.astype(np.float64),
        ((3, 4),),
        ("float32", "int32", "bool"),
    ),
    PrimCase(
        "convert-i32",
        lambda x: lax.convert_element_type(x, np.int32),
        lambda x: x.astype(np.int32),
        ((3, 4),),
        ("float64", "uint8", "bool"),
    ),
    PrimCase(
        "convert-bool",
        lambda x: lax.convert_element_type(x, np.bool_),
        lambda x: x.astype(np.bool_),
        ((3, 4),),
        ("float64", "int32"),
        domain=lambda rng, s, d: rng.integers(-1, 2, size=s),
    ),
    PrimCase(
        "broadcast_in_dim",
        lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1, 2)),
        lambda x: np.broadcast_to(x, (2, 3, 4)),
        ((3, 4),),
        FLOATS + ("int32",),
        linear=True,
    ),
    PrimCase(
        "broadcast_in_dim-1",
        lambda x: lax.broadcast_in_dim(x, (3, 5), (0,)),
        lambda x: np.broadcast_to(x[:, None], (3, 5)),
        ((3,),),
        FLOATS,
        linear=True,
    ),
    PrimCase(
        "reshape",
        lambda x: lax.reshape(x, (2, 6)),
        lambda x: x.reshape(2, 6),
        ((3, 4),),
        FLOATS + ("int32",),
        linear=True,
    ),
    PrimCase(
        "expand_dims",
        lambda x: lax.expand_dims(x, (0, 2)),
        lambda x: np.expand_dims(x, (0, 2)),
        ((3, 4),),
        FLOATS,
        linear=True,
    ),
    PrimCase(
        "transpose",
        lambda x: lax.transpose(x, (1, 0, 2)),
        lambda x: np.transpose(x, (1, 0, 2)),
        ((2, 3, 4),),
        FLOATS + ("int32",),
        linear=True,
    ),
    PrimCase(
        "select_n-bool",
        lambda p, x, y: lax.select_n(p, x, y),
        lambda p, x, y: np.where(p, y, x),
        ((3, 4), (3, 4), (3, 4)),
        FLOATS,
        arg_dtypes=("bool", None, None),
        diff_argnums=(1, 2),
    ),
]
