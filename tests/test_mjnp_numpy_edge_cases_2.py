"""More NumPy-compatibility edge cases, with NumPy as the oracle: list and bool axes of
reductions, out-of-range Python ints in insert, piecewise, select and pad, fill_diagonal's
overflow message, and where's float16 overflow without a warning."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy
import pytest

import mjnp

NpOrMj = Any  # the numpy or the mjnp module


def _numpy_outcome(fn: Callable[[], Any]) -> tuple[Any, BaseException | None]:
    """NumPy's result of `fn()`, or the exception it raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. NumPy's own overflow warnings
        try:
            return fn(), None
        except Exception as err:  # any exception is the oracle's answer
            return None, err


def _check_like_numpy(np_fn: Callable[[], Any], mj_fn: Callable[[], Any]) -> None:
    """`mj_fn()` raises NumPy's exception type, or returns NumPy's value, dtype and shape."""
    expected, err = _numpy_outcome(np_fn)
    if err is not None:
        with pytest.raises(type(err)):
            mj_fn()
        return
    got = numpy.asarray(mj_fn())
    expected = numpy.asarray(expected)
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    numpy.testing.assert_array_equal(got, expected)


def _get(module: NpOrMj, name: str) -> Any:
    for part in name.split("."):
        module = getattr(module, part)
    return module


# --- 1. list and bool axes of reductions ----------------------------------------------------
# NumPy's ufunc reductions (and mean, std, var and the nan* functions, which pass `axis` on to
# one) read `axis` with the C multi-axis converter: a tuple or an int, so a list is a TypeError,
# as is a bool. median, quantile and friends normalize it in Python and take a list as a tuple.

X23 = numpy.arange(1.0, 7.0).reshape(2, 3)

AXIS_CALLS: dict[str, Callable[[NpOrMj, Any, Any], Any]] = {
    name: (lambda np, x, axis, name=name: _get(np, name)(x, axis=axis))
    for name in [
        "sum", "prod", "max", "min", "amax", "amin", "mean", "std", "var", "any", "all",
        "argmax", "argmin", "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanstd",
        "nanvar", "nanargmax", "nanargmin", "count_nonzero", "ptp", "cumsum", "squeeze",
        "median", "nanmedian", "average", "linalg.vector_norm", "linalg.norm",
        "cumulative_sum", "cumulative_prod",
    ]
}  # fmt: skip
AXIS_CALLS |= {
    "quantile": lambda np, x, axis: np.quantile(x, 0.5, axis=axis),
    "method_sum": lambda np, x, axis: x.sum(axis=axis),
    "method_mean": lambda np, x, axis: x.mean(axis=axis),
    "method_max": lambda np, x, axis: x.max(axis=axis),
    "method_std": lambda np, x, axis: x.std(axis=axis),
    "mean_int": lambda np, x, axis: np.mean(x.astype(np.int64), axis=axis),
    "sum_keepdims": lambda np, x, axis: np.sum(x, axis=axis, keepdims=True),
}

LIST_AND_BOOL_AXES = [[0], [1], [0, 1], [], [True], (True,), True, (False, 1), (0, True)]


@pytest.mark.parametrize("axis", LIST_AND_BOOL_AXES, ids=repr)
@pytest.mark.parametrize("name", sorted(AXIS_CALLS))
def test_list_and_bool_axis(name: str, axis: Any) -> None:
    call = AXIS_CALLS[name]
    _check_like_numpy(lambda: call(numpy, X23, axis), lambda: call(mjnp, mjnp.asarray(X23), axis))


def test_list_axis_message() -> None:
    with pytest.raises(TypeError, match=r"mjnp\.sum: axis must be .* not a list .*axis=\(0,\)"):
        mjnp.sum(mjnp.ones((2, 3)), axis=[0])
    with pytest.raises(TypeError, match=r"mjnp\.mean: axis must be .* not a list"):
        mjnp.mean(mjnp.ones((2, 3)), axis=[0, 1])
    with pytest.raises(TypeError, match=r"mjnp\.linalg\.norm: axis must be .* not a list"):
        mjnp.linalg.norm(mjnp.ones((2, 3)), axis=[0])


# --- 2. fill_diagonal converts its value as NumPy's `a.flat[...] = val` -------------------


@pytest.mark.parametrize("v", [300, -1, 2**70, 1.5, [1, 300], numpy.array(300), 1j], ids=repr)
@pytest.mark.parametrize("dtype", ["uint8", "int8", "float16", "bool"])
def test_fill_diagonal_python_scalar(dtype: str, v: Any) -> None:
    def call(np: NpOrMj) -> Any:
        a = np.zeros((2, 2), dtype=dtype)
        np.fill_diagonal(a, v)
        return a

    _check_like_numpy(lambda: call(numpy), lambda: call(mjnp))


def test_fill_diagonal_overflow_message_names_function() -> None:
    a = mjnp.zeros((2, 2), dtype="uint8")
    with pytest.raises(OverflowError, match=r"^mjnp\.fill_diagonal: .*300.*uint8"):
        mjnp.fill_diagonal(a, 300)
    numpy.testing.assert_array_equal(numpy.asarray(a), numpy.zeros((2, 2)))


# --- 3. where: a Python scalar beyond float16 is inf, with no warning ---------------------
# NB: NumPy's where warns "overflow encountered in cast" here; mjnp never warns on
# floating-point errors (its cached scalar buffer would have warned on the first call only).


@pytest.mark.parametrize("v", [70001, -70001, 2**70, 1e300], ids=repr)
def test_where_float16_overflow_is_inf_without_warning(v: Any) -> None:
    cond = numpy.array([True, False, True])
    x = numpy.array([1, 0, 3], dtype="float16")
    expected, _ = _numpy_outcome(lambda: numpy.where(cond, x, v))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = numpy.asarray(mjnp.where(mjnp.asarray(cond), mjnp.asarray(x), v))
    assert got.dtype == expected.dtype
    numpy.testing.assert_array_equal(got, expected)
