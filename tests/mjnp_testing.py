"""Hypothesis strategies and the NumPy-differential check shared by the mjnp chapter tests."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.primitive_case import sample, tolerance

ALL_DTYPES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
REAL_DTYPES = tuple(d for d in ALL_DTYPES if not d.startswith("complex"))
NUMERIC_DTYPES = tuple(d for d in ALL_DTYPES if d != "bool")
FLOAT_DTYPES = ("float32", "float64")

# Small budgets: each new shape compiles a few XLA programs.
SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)


def _exact_halves(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype):
    """Multiples of 1/2 in [-4, 4]: sums and means of them are exact in every float dtype, so
    mjnp and NumPy agree whatever order they add in."""
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind == "u":
        return rng.integers(0, 9, size=shape)
    if dtype.kind == "i":
        return rng.integers(-4, 5, size=shape)
    real = rng.integers(-8, 9, size=shape) / 2
    if dtype.kind == "c":
        return real + 1j * rng.integers(-8, 9, size=shape) / 2
    return real


def shapes(min_dims: int = 0, max_dims: int = 4, max_side: int = 4) -> st.SearchStrategy:
    """Array shapes including 0-d and empty ones."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=max_side)


@st.composite
def arrays(
    draw: st.DrawFn,
    dtypes: tuple[str, ...] = ALL_DTYPES,
    shape: Any = None,
    domain: Any = _exact_halves,
) -> np.ndarray:
    """A NumPy array of a drawn dtype and shape (`shape` is a tuple or a strategy), with values
    from a seeded generator: much faster than drawing elements one by one."""
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    if shape is None:
        shape = shapes()
    if isinstance(shape, st.SearchStrategy):
        shape = draw(shape)
    seed = draw(st.integers(0, 2**32 - 1))
    return sample(np.random.default_rng(seed), shape, dtype, domain)


@st.composite
def axis_args(draw: st.DrawFn, ndim: int, allow_tuple: bool = True) -> Any:
    """None, an int (possibly negative) or a tuple of distinct axes, all valid for `ndim`."""
    choices = ["none"] + (["int"] if ndim else []) + (["tuple"] if allow_tuple else [])
    kind = draw(st.sampled_from(choices))
    if kind == "none":
        return None
    if kind == "int":
        return draw(st.integers(-ndim, ndim - 1))
    perm = draw(st.permutations(range(ndim)))
    k = draw(st.integers(0, ndim))
    return tuple(a - ndim if draw(st.booleans()) else a for a in perm[:k])


def cast_is_undefined(x: np.ndarray, dtype: Any) -> bool:
    """Whether casting `x` to `dtype` is undefined behaviour in NumPy (a float out of the
    integer range, such as a negative float to an unsigned type). NumPy warns and its result
    depends on the platform; mjnp saturates as XLA does, so tests skip such casts."""
    dtype = np.dtype(dtype)
    if x.dtype.kind not in "fc" or dtype.kind not in "iu":
        return False
    real = np.real(x).astype(np.float64)
    info = np.iinfo(dtype)
    return bool(np.any(~np.isfinite(real) | (real <= info.min - 1) | (real >= info.max + 1)))


def assert_matches(actual: Any, expected: Any) -> None:
    """Same dtype and shape as NumPy's result, values within the per-dtype tolerance."""
    expected = np.asarray(expected)
    actual_np = np.asarray(actual)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(actual_np, expected, **tolerance(expected.dtype))
    else:
        np.testing.assert_array_equal(actual_np, expected)


def check_against_numpy(
    mj_fun: Callable[..., Any], np_fun: Callable[..., Any], *args: Any, **kwargs: Any
) -> Any:
    """Run both; if NumPy raises, mjnp must raise the same exception type, else the results
    match: arrays by `assert_matches`, tuples and lists (histogram, gradient, split) by
    structure and then element by element. Returns mjnp's result (None when NumPy raised)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            expected = np_fun(*args, **kwargs)
        except Exception as err:  # any NumPy error is the expectation
            with pytest.raises(type(err)):
                mj_fun(*args, **kwargs)
            return None
    actual = mj_fun(*args, **kwargs)  # outside: a test may expect mjnp's warnings
    _assert_same_structure(actual, expected)
    return actual


def _assert_same_structure(actual: Any, expected: Any) -> None:
    if not isinstance(expected, tuple | list):
        assert_matches(actual, expected)
        return
    assert type(actual) is type(expected), (type(actual), type(expected))
    assert len(actual) == len(expected), (len(actual), len(expected))
    for a, e in zip(actual, expected, strict=True):
        _assert_same_structure(a, e)


def numpy_outcome(fn: Callable[[], Any]) -> tuple[Any, BaseException | None]:
    """NumPy's result of `fn()`, or the exception it raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. NumPy's own overflow warnings
        try:
            return fn(), None
        except Exception as err:  # any exception is the oracle's answer
            return None, err


def check_like_numpy(np_fn: Callable[[], Any], mj_fn: Callable[[], Any]) -> None:
    """`mj_fn()` raises NumPy's exception type, or returns NumPy's value, dtype and shape."""
    expected, err = numpy_outcome(np_fn)
    if err is not None:
        with pytest.raises(type(err)):
            mj_fn()
        return
    got = np.asarray(mj_fn())
    expected = np.asarray(expected)
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
