"""mjnp set routines (mjnp/_sets.py) against NumPy; eager only where shapes depend on values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mjcore
import mjnp
from mjcore.errors import NonConcreteBooleanIndexError
from tests.differential_registry import differential
from tests.mjnp_testing import REAL_DTYPES, arrays, assert_matches, check_against_numpy

# Each example compiles several small programs (eager set routines): a small budget.
FEW = settings(max_examples=12, deadline=None, derandomize=True)
SET_DTYPES = tuple(d for d in REAL_DTYPES if d not in ("float16",))


def _repeats(rng, shape, dtype):
    """Few distinct values so repeats are common; NaNs for floats."""
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    x = rng.integers(0, 5, size=shape).astype(np.float64)
    if dtype.kind == "f":
        x = np.where(rng.random(shape) < 0.2, np.nan, x)
    return x


def _check_all(actual, expected):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e)


@differential("unique")
@FEW
@given(data=st.data())
def test_unique_matches_numpy(data):
    x = data.draw(arrays(SET_DTYPES, domain=_repeats))
    flags = data.draw(st.tuples(st.booleans(), st.booleans(), st.booleans()))
    equal_nan = data.draw(st.booleans())
    expected = np.unique(x, *flags, equal_nan=equal_nan)
    actual = mjnp.unique(x, *flags, equal_nan=equal_nan)
    if any(flags):
        _check_all(actual, expected)
    else:
        assert_matches(actual, expected)


@differential("unique_all", "unique_counts", "unique_inverse")
@pytest.mark.parametrize("name", ["unique_all", "unique_counts", "unique_inverse"])
@FEW
@given(x=arrays(SET_DTYPES, domain=_repeats))
def test_unique_array_api_forms_match_sorted_numpy(name, x):
    # NB: NumPy may return these unsorted (hash-based); compare with NumPy's sorted unique.
    values, indices, inverse, counts = np.unique(x, True, True, True, equal_nan=False)
    full = {"values": values, "indices": indices, "inverse_indices": inverse, "counts": counts}
    result = getattr(mjnp, name)(x)
    for field in result._fields:
        assert_matches(getattr(result, field), full[field])


@differential("unique_values")
@FEW
@given(x=arrays(SET_DTYPES, domain=_repeats))
def test_unique_values_matches_sorted_numpy(x):
    assert_matches(mjnp.unique_values(x), np.unique(x, equal_nan=False))


@differential("intersect1d", "isin", "setdiff1d", "setxor1d", "union1d")
@pytest.mark.parametrize("name", ["intersect1d", "union1d", "setdiff1d", "setxor1d", "isin"])
@FEW
@given(data=st.data())
def test_binary_set_routines_match_numpy(name, data):
    a = data.draw(arrays(("int32", "float64", "uint8"), domain=_repeats))
    b = data.draw(arrays(("int64", "float32", "int8"), domain=_repeats))
    kwargs = {}
    if name == "intersect1d":
        kwargs["return_indices"] = data.draw(st.booleans())
    if name == "isin":
        kwargs["invert"] = data.draw(st.booleans())
    expected = getattr(np, name)(a, b, **kwargs)
    actual = getattr(mjnp, name)(a, b, **kwargs)
    if isinstance(expected, tuple):
        _check_all(actual, expected)
    else:
        assert_matches(actual, expected)


def test_assume_unique_variants_match_numpy():
    a, b = np.array([5, 1, 3]), np.array([3, 4])
    check_against_numpy(
        lambda a, b: mjnp.setdiff1d(a, b, True), lambda a, b: np.setdiff1d(a, b, True), a, b
    )
    check_against_numpy(
        lambda a, b: mjnp.setxor1d(a, b, True), lambda a, b: np.setxor1d(a, b, True), a, b
    )


def test_isin_works_under_jit_and_vmap():
    x = np.arange(12.0).reshape(3, 4)
    t = np.array([1.0, 5.0, 11.0])
    expected = np.isin(x, t)
    assert_matches(mjcore.jit(mjnp.isin)(x, t), expected)
    assert_matches(mjcore.vmap(mjnp.isin, in_axes=(0, None))(x, t), expected)


@pytest.mark.parametrize("name", ["unique", "union1d", "setdiff1d", "intersect1d", "unique_values"])
def test_value_dependent_shapes_raise_under_jit(name):
    fun = getattr(mjnp, name)
    args = (np.array([1.0, 2.0, 2.0]),) if name.startswith("unique") else (np.ones(2), np.ones(3))
    with pytest.raises(NonConcreteBooleanIndexError, match="jit"):
        mjcore.jit(fun)(*args)


@pytest.mark.parametrize("name", ["unique", "union1d", "setdiff1d", "intersect1d", "setxor1d"])
def test_gradient_raises_instead_of_silent_zero(name):
    fun = getattr(mjnp, name)
    x = np.array([1.0, 2.0, 2.0])

    def loss(x):
        out = fun(x) if name == "unique" else fun(x, np.array([2.0, 7.0]))
        return mjnp.sum(out)

    with pytest.raises(TypeError, match="not differentiable"):
        mjcore.grad(loss)(x)
    with pytest.raises(TypeError, match="not differentiable"):
        mjcore.jvp(loss, (x,), (np.ones(3),))


def test_unique_axis_rows():
    # Full coverage against NumPy is in tests/test_mjnp_error_types.py.
    a = np.array([[1, 2], [0, 1], [1, 2]])
    np.testing.assert_array_equal(mjnp.unique(a, axis=0), np.unique(a, axis=0))
