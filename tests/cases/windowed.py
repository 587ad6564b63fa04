"""Rows for mjcore/lax/windowed.py: reduce_window with add, max and min."""

from __future__ import annotations

import numpy as np

from mjcore import lax
from tests.primitive_case import PrimCase

FLOATS = ("float32", "float64")
INTS = ("int32", "int64", "uint8")
# Positive values keep float32 sums free of cancellation.
POSITIVE = (0.5, 2.0)


def _dilate(size: int, dilation: int) -> int:
    return 0 if size == 0 else (size - 1) * dilation + 1


def numpy_reduce_window(x, reducer, identity, window, strides, padding, base, window_dilation):
    """XLA's ReduceWindow in NumPy: dilate `x` (holes hold `identity`), pad (or crop), then
    reduce every strided, dilated window with `reducer(array, axis=...)`."""
    ndim = x.ndim
    dilated = np.full(
        [_dilate(d, b) for d, b in zip(x.shape, base, strict=True)], identity, x.dtype
    )
    dilated[tuple(slice(None, None, b) for b in base)] = x
    crop = tuple(
        slice(max(-lo, 0), n - max(-hi, 0))
        for (lo, hi), n in zip(padding, dilated.shape, strict=True)
    )
    grow = [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    padded = np.pad(dilated[crop], grow, constant_values=identity)
    extents = [_dilate(w, d) for w, d in zip(window, window_dilation, strict=True)]
    out_shape = [
        max(0, (n - e) // s + 1) for n, e, s in zip(padded.shape, extents, strides, strict=True)
    ]
    if 0 in out_shape:
        return np.zeros(out_shape, x.dtype)
    views = np.lib.stride_tricks.sliding_window_view(padded, extents)
    views = views[
        tuple(slice(None, None, s) for s in strides)
        + tuple(slice(None, None, d) for d in window_dilation)
    ]
    return np.asarray(reducer(views, axis=tuple(range(ndim, 2 * ndim)))).astype(x.dtype)


def _sum(v, axis):
    return np.sum(v, axis=axis, dtype=v.dtype)


def _lowest(dtype):
    dtype = np.dtype(dtype)
    return -np.inf if dtype.kind == "f" else (False if dtype.kind == "b" else np.iinfo(dtype).min)


def _highest(dtype):
    dtype = np.dtype(dtype)
    return np.inf if dtype.kind == "f" else (True if dtype.kind == "b" else np.iinfo(dtype).max)


_REDUCERS = {
    "sum": (lax.add, _sum, lambda dtype: 0),
    "max": (lax.max, np.max, _lowest),
    "min": (lax.min, np.min, _highest),
}


def _case(name, kind, shape, window, strides, padding, base, window_dilation, dtypes, **kwargs):
    computation, reducer, identity = _REDUCERS[kind]

    def fun(x):
        init = identity(x.dtype)
        return lax.reduce_window(
            x, init, computation, window, strides, padding, base, window_dilation
        )

    def oracle(x):
        ones = (1,) * x.ndim
        pads = padding
        if isinstance(padding, str):  # 'SAME' as lax.padtype_to_pads computes it
            pads = []
            for d, w, s, wd in zip(x.shape, window, strides, window_dilation or ones, strict=True):
                total = max(0, (-(-d // s) - 1) * s + _dilate(w, wd) - d)
                pads.append((total // 2, total - total // 2))
        return numpy_reduce_window(
            x,
            reducer,
            identity(x.dtype),
            window,
            strides,
            pads,
            base or ones,
            window_dilation or ones,
        )

    return PrimCase(name, fun, oracle, (shape,), dtypes, **kwargs)


# Every window holds at least one operand element, so no output is an identity (an infinity,
# whose finite differences are NaN).
CASES = [
    _case(
        "reduce_window_sum",
        "sum",
        (4, 5),
        (2, 3),
        (1, 2),
        ((1, 0), (0, 1)),
        None,
        None,
        FLOATS + INTS,
        domain=POSITIVE,
        linear=True,
    ),
    _case(
        "reduce_window_sum-dilated",
        "sum",
        (4, 3),
        (2, 2),
        (2, 1),
        ((1, 2), (-1, 1)),
        (2, 1),
        (1, 2),
        FLOATS + ("complex128",),
        domain=POSITIVE,
        linear=True,
    ),
    _case(
        "reduce_window_max",
        "max",
        (4, 6),
        (2, 2),
        (2, 2),
        "VALID",
        None,
        None,
        FLOATS + INTS + ("bool",),
    ),
    _case(
        "reduce_window_max-dilated",
        "max",
        (5, 4),
        (3, 2),
        (1, 2),
        ((1, 1), (1, 0)),
        (1, 2),
        (2, 1),
        FLOATS,
    ),
    _case(
        "reduce_window_min",
        "min",
        (3, 4, 5),
        (1, 2, 3),
        (1, 1, 2),
        "SAME",
        None,
        None,
        FLOATS + INTS + ("bool",),
    ),
]
