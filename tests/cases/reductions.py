"""Rows for mjcore/lax/reductions.py and dot.py."""

from __future__ import annotations

import string

import numpy as np

from mjcore import lax
from tests.primitive_case import PrimCase

FLOATS = ("float32", "float64")
INTS = ("int32", "int64", "uint8")
# Positive values keep float32 sums and contractions free of cancellation, so the per-dtype
# tolerances hold however the backend orders the additions.
POSITIVE = (0.5, 2.0)


def _tied(position: int):
    """Values with the extreme along the last axis taken exactly twice, at sorted `position`
    (-1: the maximum, 0: the minimum) and its neighbour. With two-way ties the central
    difference is the average over the tie, which is what the jvp rule gives."""

    def domain(rng, shape, dtype):
        x = rng.uniform(-2.0, 2.0, size=shape)
        order = np.argsort(x, axis=-1)
        extreme = np.take_along_axis(x, order[..., [position]], -1)
        np.put_along_axis(x, order[..., [1 if position == 0 else -2]], extreme, -1)
        return x

    return domain


def _with_zeros(rng, shape, dtype):
    """Nonzero values with one zero in the first row and two in the second."""
    x = rng.uniform(0.5, 2.0, size=shape) * rng.choice([-1, 1], size=shape)
    x[0, 1] = 0
    x[1, [0, 3]] = 0
    return x


def _ties_and_nans(rng, shape, dtype):
    """Few distinct values (so ties are common) and, for floats, some NaNs."""
    x = rng.integers(0, 3, size=shape)
    if np.dtype(dtype).kind == "f":
        x = np.where(rng.random(shape) < 0.15, np.nan, x)
    return x


def _einsum_spec(dimension_numbers, lhs_ndim, rhs_ndim):
    """The einsum equation equivalent to a dot_general, with XLA's output order."""
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter(string.ascii_letters)
    lhs = [next(letters) for _ in range(lhs_ndim)]
    rhs = [next(letters) for _ in range(rhs_ndim)]
    for i, j in zip(lc + lb, rc + rb, strict=True):
        rhs[j] = lhs[i]
    out = [lhs[i] for i in lb]
    out += [lhs[i] for i in range(lhs_ndim) if i not in lc + lb]
    out += [rhs[j] for j in range(rhs_ndim) if j not in rc + rb]
    return f"{''.join(lhs)},{''.join(rhs)}->{''.join(out)}"


def _dot_case(name, dimension_numbers, shapes, dtypes, preferred=None, **kwargs):
    spec = _einsum_spec(dimension_numbers, len(shapes[0]), len(shapes[1]))

    def oracle(x, y):
        if x.dtype == np.bool_:
            return np.einsum(spec, x.astype(np.int64), y.astype(np.int64)) > 0
        dtype = preferred or x.dtype
        return np.einsum(spec, x.astype(dtype), y.astype(dtype)).astype(dtype)

    return PrimCase(
        name,
        lambda x, y: lax.dot_general(x, y, dimension_numbers, preferred_element_type=preferred),
        oracle,
        shapes,
        dtypes,
        **kwargs,
    )


def _logaddexp(a, b):
    """A computation no dedicated reduction has: log(exp(a) + exp(b)), stably."""
    return lax.add(lax.max(a, b), lax.log1p(lax.exp(lax.neg(lax.abs(lax.sub(a, b))))))


def _max_with_index(a, b):
    """Variadic: (value, index) pairs, keeping the larger value (the lower index on ties)."""
    (va, ia), (vb, ib) = a, b
    pick = lax.bitwise_or(lax.gt(va, vb), lax.bitwise_and(lax.eq(va, vb), lax.lt(ia, ib)))
    return lax.select_n(pick, vb, va), lax.select_n(pick, ib, ia)


def _reduce_max_with_index(x):
    index = lax.broadcasted_iota("int32", x.shape, 0)
    return lax.reduce((x, index), (-np.inf, np.int32(0)), _max_with_index, (0,))[0]


CASES = [
    PrimCase(
        "reduce-logaddexp",
        lambda x: lax.reduce(x, -np.inf, _logaddexp, (1,)),
        lambda x: np.logaddexp.reduce(x, axis=1),
        ((3, 5, 2),),
        FLOATS,
        rtol=1e-5,
    ),
    PrimCase(
        "reduce-variadic-max",
        _reduce_max_with_index,
        lambda x: np.max(x, axis=0),
        ((6, 3),),
        FLOATS,
    ),
    PrimCase(
        "reduce_sum",
        lambda x: lax.reduce_sum(x, (0, 2)),
        lambda x: np.sum(x, axis=(0, 2), dtype=x.dtype),
        ((3, 4, 5),),
        FLOATS + INTS,
        domain=POSITIVE,
        linear=True,
    ),
    PrimCase(
        "reduce_sum-all",
        lambda x: lax.reduce_sum(x, (-1, 0)),
        lambda x: np.sum(x, dtype=x.dtype),
        ((3, 4),),
        FLOATS + ("complex64", "complex128"),
        domain=POSITIVE,
        linear=True,
    ),
    PrimCase(
        "reduce_max",
        lambda x: lax.reduce_max(x, (1,)),
        lambda x: np.max(x, axis=1),
        ((3, 4, 5),),
        FLOATS + INTS + ("bool",),
    ),
    PrimCase(
        "reduce_max-ties",
        lambda x: lax.reduce_max(x, (1,)),
        lambda x: np.max(x, axis=1),
        ((3, 4),),
        FLOATS,
        domain=_tied(-1),
        smooth=False,
    ),
    PrimCase(
        "reduce_min",
        lambda x: lax.reduce_min(x, (0, 2)),
        lambda x: np.min(x, axis=(0, 2)),
        ((3, 4, 5),),
        FLOATS + INTS + ("bool",),
    ),
    PrimCase(
        "reduce_min-ties",
        lambda x: lax.reduce_min(x, (1,)),
        lambda x: np.min(x, axis=1),
        ((3, 4),),
        FLOATS,
        domain=_tied(0),
        smooth=False,
    ),
    PrimCase(
        "reduce_prod",
        lambda x: lax.reduce_prod(x, (0, 1)),
        lambda x: np.prod(x, axis=(0, 1), dtype=x.dtype),
        ((3, 5, 2),),
        FLOATS + ("int32", "complex128"),
        domain=(-1.5, 1.5),
    ),
    PrimCase(
        "reduce_prod-zeros",
        lambda x: lax.reduce_prod(x, (1,)),
        lambda x: np.prod(x, axis=1),
        ((3, 4),),
        FLOATS,
        domain=_with_zeros,
    ),
    PrimCase(
        "reduce_and",
        lambda x: lax.reduce_and(x, (1,)),
        lambda x: np.bitwise_and.reduce(x, axis=1),
        ((3, 4),),
        ("bool", "int32", "uint8"),
        domain=(0, 255),
    ),
    PrimCase(
        "reduce_or",
        lambda x: lax.reduce_or(x, (0, 1)),
        lambda x: np.bitwise_or.reduce(x, axis=(0, 1)),
        ((3, 4),),
        ("bool", "int64", "uint8"),
        domain=(0, 255),
    ),
    PrimCase(
        "reduce_xor",
        lambda x: lax.reduce_xor(x, (1,)),
        lambda x: np.bitwise_xor.reduce(x, axis=1),
        ((3, 4),),
        ("bool", "int32", "uint8"),
        domain=(0, 255),
    ),
    PrimCase(
        "argmax",
        lambda x: lax.argmax(x, 1, np.int32),
        lambda x: np.argmax(x, axis=1).astype(np.int32),
        ((3, 6, 2),),
        FLOATS + ("int32", "bool"),
        domain=_ties_and_nans,
    ),
    PrimCase(
        "argmin",
        lambda x: lax.argmin(x, -1, np.int64),
        lambda x: np.argmin(x, axis=-1),
        ((4, 6),),
        FLOATS + ("uint8", "bool"),
        domain=_ties_and_nans,
    ),
    _dot_case(
        "dot_general-matmul",
        (((1,), (0,)), ((), ())),
        ((3, 4), (4, 5)),
        FLOATS + ("int32", "int64", "complex64", "complex128"),
        domain=POSITIVE,
    ),
    _dot_case(
        "dot_general-batched",
        (((2,), (1,)), ((0,), (0,))),
        ((2, 3, 4), (2, 4, 5)),
        FLOATS + ("int32",),
        domain=POSITIVE,
    ),
    _dot_case(
        "dot_general-scrambled",
        (((2,), (0,)), ((1,), (2,))),
        ((4, 2, 3), (3, 5, 2)),
        FLOATS,
        domain=POSITIVE,
    ),
    _dot_case(
        "dot_general-two-contractions",
        (((1, 2), (1, 0)), ((), ())),
        ((2, 3, 4), (4, 3, 5)),
        FLOATS,
        domain=POSITIVE,
    ),
    _dot_case(
        "dot_general-outer",
        (((), ()), ((), ())),
        ((3,), (4,)),
        FLOATS,
    ),
    _dot_case(
        "dot_general-vector",
        (((0,), (0,)), ((), ())),
        ((5,), (5,)),
        FLOATS + ("int64", "bool"),
        domain=POSITIVE,
    ),
    _dot_case(
        "dot_general-preferred-f64",
        (((1,), (0,)), ((), ())),
        ((3, 4), (4, 2)),
        ("float32",),
        preferred=np.float64,
        domain=POSITIVE,
    ),
    _dot_case(
        "dot_general-preferred-i32",
        (((1,), (0,)), ((), ())),
        ((3, 4), (4, 2)),
        ("int8", "uint8"),
        preferred=np.int32,
        domain=(-100, 100),
    ),
]
