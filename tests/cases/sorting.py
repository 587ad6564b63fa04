"""Rows for mjcore/lax/sorting.py: sort and the cumulative reductions."""

from __future__ import annotations

import numpy as np

from mjcore import lax
from tests.primitive_case import PrimCase

FLOATS = ("float32", "float64")
INTS = ("int32", "int64", "uint8")


def _ties_nans_zeros(rng, shape, dtype):
    """Few distinct values (ties are common), signed zeros, infinities and NaNs for floats."""
    if np.dtype(dtype).kind != "f":
        return rng.integers(0, 4, size=shape)
    pool = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, 1.0, -1.5, 2.0])
    return rng.choice(pool, size=shape)


def _small_ints(rng, shape, dtype):
    return rng.integers(0, 3, size=shape)


def _flipped(fun):
    """The reverse-direction version of a NumPy accumulation along `axis`."""

    def reverse(x, axis):
        return np.flip(fun(np.flip(x, axis), axis), axis)

    return reverse


def _cumsum(x, axis):
    return np.cumsum(x, axis, dtype=x.dtype)


def _cumprod(x, axis):
    return np.cumprod(x, axis, dtype=x.dtype)


def _cummax(x, axis):
    return np.maximum.accumulate(x, axis)


def _cummin(x, axis):
    return np.minimum.accumulate(x, axis)


def _cumlogsumexp(x, axis):
    return np.logaddexp.accumulate(x, axis)


def _cumulative_cases(name, fun, oracle, dtypes, **kwargs):
    return [
        PrimCase(
            f"{name}-axis{axis}{'-reverse' if reverse else ''}",
            lambda x, axis=axis, reverse=reverse: fun(x, axis, reverse),
            (lambda x, axis=axis: _flipped(oracle)(x, axis))
            if reverse
            else (lambda x, axis=axis: oracle(x, axis)),
            ((3, 5),),
            dtypes,
            **kwargs,
        )
        for axis, reverse in ((1, False), (0, True))
    ]


CASES = [
    PrimCase("sort", lambda x: lax.sort(x), lambda x: np.sort(x, -1), ((3, 5),), FLOATS + INTS),
    PrimCase("sort-dim0", lambda x: lax.sort(x, 0), lambda x: np.sort(x, 0), ((4, 3, 2),), FLOATS),
    PrimCase(
        "sort-total-order",
        lambda x: lax.sort(x, 1),
        lambda x: np.sort(x, 1),
        ((4, 7),),
        FLOATS + ("int8", "bool"),
        domain=_ties_nans_zeros,
        diff_argnums=(),
    ),
    PrimCase(
        "sort-complex",
        lambda x: lax.sort(x),
        lambda x: np.sort(x),
        ((3, 6),),
        ("complex64", "complex128"),
        domain=(-2, 2),
        diff_argnums=(),
    ),
    PrimCase(
        "sort-values-by-key",
        lambda k, v: lax.sort([k, v], 1, num_keys=1)[1],
        lambda k, v: np.take_along_axis(v, np.argsort(k, 1, stable=True), 1),
        ((3, 6), (3, 6)),
        ("float64", "float32"),
        domain=_small_ints,
        arg_dtypes=("int32", None),
        diff_argnums=(1,),
    ),
    PrimCase(
        "sort-two-keys",
        lambda k1, k2, v: lax.sort([k1, k2, v], 0, num_keys=2)[2],
        lambda k1, k2, v: np.take_along_axis(v, np.lexsort((k2, k1), axis=0), 0),
        ((8, 2), (8, 2), (8, 2)),
        ("float64",),
        domain=_small_ints,
        diff_argnums=(2,),
    ),
    *_cumulative_cases("cumsum", lax.cumsum, _cumsum, FLOATS + INTS, linear=True),
    *_cumulative_cases("cumprod", lax.cumprod, _cumprod, FLOATS + ("int32",), domain=(0.5, 1.5)),
    *_cumulative_cases("cummax", lax.cummax, _cummax, FLOATS + INTS + ("bool",)),
    *_cumulative_cases("cummin", lax.cummin, _cummin, FLOATS + INTS + ("bool",)),
    *_cumulative_cases("cumlogsumexp", lax.cumlogsumexp, _cumlogsumexp, FLOATS),
    PrimCase(
        "cummax-nan",
        lambda x: lax.cummax(x, 1),
        lambda x: np.maximum.accumulate(x, 1),
        ((3, 7),),
        FLOATS,
        domain=_ties_nans_zeros,
        diff_argnums=(),
    ),
]
