"""mjnp sorting (mjnp/_sorting.py) against NumPy, under jit, vmap and differentiation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.exceptions import AxisError

import mjcore
import mjnp
from mjcore.test_util import check_grads
from tests.differential_registry import differential
from tests.mjnp_testing import (
    REAL_DTYPES,
    SETTINGS,
    arrays,
    assert_matches,
    check_against_numpy,
    shapes,
)

SORT_DTYPES = (*REAL_DTYPES, "complex128")


def _ties_and_nans(rng, shape, dtype):
    """Few distinct values, so ties are common; NaNs, infinities and signed zeros for floats."""
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0, 4, size=shape)
    pool = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, 1.0, -1.5, 2.0])
    if dtype.kind == "c":
        # NaN-free: NumPy's complex NaN order is not lexicographic on the parts.
        finite = pool[3:]
        return rng.choice(finite, size=shape) + 1j * rng.choice(finite, size=shape)
    return rng.choice(pool, size=shape)


def _axis(data, ndim):
    return data.draw(st.sampled_from([None, *range(-ndim, ndim)]) if ndim else st.just(None))


def _signed_zeros_agree(actual, expected):
    """-0.0 and 0.0 compare equal, so the sorted order may mix them; compare ignoring sign."""
    return np.asarray(actual) + 0.0, np.asarray(expected) + 0.0


@differential("sort")
@SETTINGS
@given(data=st.data())
def test_sort_matches_numpy(data):
    x = data.draw(arrays(SORT_DTYPES, domain=_ties_and_nans))
    axis = _axis(data, x.ndim)
    check_against_numpy(mjnp.sort, np.sort, x, axis)


@differential("argsort")
@SETTINGS
@given(data=st.data())
def test_argsort_matches_stable_numpy(data):
    x = data.draw(arrays(SORT_DTYPES, domain=_ties_and_nans))
    axis = _axis(data, x.ndim) if x.ndim else -1
    check_against_numpy(
        lambda x, axis: mjnp.argsort(x, axis, stable=True),
        lambda x, axis: np.argsort(x, axis, stable=True),
        x,
        axis,
    )


@differential("lexsort")
@SETTINGS
@given(data=st.data())
def test_lexsort_matches_numpy(data):
    shape = data.draw(shapes(min_dims=1, max_dims=2, max_side=6))
    count = data.draw(st.integers(1, 3))
    keys = [
        data.draw(arrays(REAL_DTYPES, shape=shape, domain=_ties_and_nans)) for _ in range(count)
    ]
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    check_against_numpy(mjnp.lexsort, np.lexsort, keys, axis)


def _check_partitioned(result, x, kth, axis):
    """NumPy's contract: position k holds the k-th smallest, smaller ones before it, larger
    ones after (NaNs count as largest)."""
    result = np.moveaxis(np.asarray(result), axis, -1)
    expected = np.moveaxis(np.sort(x, axis), axis, -1)
    for k in np.atleast_1d(kth):
        k = int(k) % result.shape[-1]
        np.testing.assert_array_equal(result[..., k], expected[..., k])
        pivot = expected[..., k : k + 1]
        before, after = result[..., :k], result[..., k + 1 :]
        if x.dtype.kind == "f":
            pivot_nan = np.isnan(pivot)
            assert np.all((before <= pivot) | pivot_nan)
            assert np.all((after >= pivot) | np.isnan(after))
            assert np.all(np.isnan(after) | ~pivot_nan)
        else:
            assert np.all(before <= pivot) and np.all(after >= pivot)


@differential("argpartition", "partition")
@SETTINGS
@given(data=st.data())
def test_partition_and_argpartition_contract(data):
    x = data.draw(arrays(("int32", "float64", "uint8"), shapes(1, 3, 5), domain=_ties_and_nans))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[axis]
    if n == 0:
        return
    kth = data.draw(
        st.integers(-n, n - 1) | st.lists(st.integers(0, n - 1), min_size=1, max_size=3)
    )
    part = mjnp.partition(x, kth, axis)
    assert part.dtype == x.dtype and part.shape == x.shape
    _check_partitioned(part, x, kth, axis)
    idx = mjnp.argpartition(x, kth, axis)
    assert idx.dtype == np.argpartition(x, kth, axis).dtype
    _check_partitioned(np.take_along_axis(x, np.asarray(idx), axis), x, kth, axis)


@differential("sort_complex")
@SETTINGS
@given(
    x=arrays(("int8", "uint16", "int64", "float16", "float32", "complex64", "bool"), shapes(1, 2))
)
def test_sort_complex_matches_numpy(x):
    check_against_numpy(mjnp.sort_complex, np.sort_complex, x)


@pytest.mark.parametrize(
    "call,error",
    [
        (lambda: mjnp.sort(np.float64(1.0)), AxisError),
        (lambda: mjnp.sort(np.zeros(3), axis=1), AxisError),
        (lambda: mjnp.sort(np.zeros(3), kind="bogus"), ValueError),
        (lambda: mjnp.argsort(np.zeros(3), kind="stable", stable=True), ValueError),
        (lambda: mjnp.sort(np.zeros(3), order="f"), ValueError),
        (lambda: mjnp.lexsort([]), TypeError),
        (lambda: mjnp.lexsort([np.zeros(3), np.zeros(4)]), ValueError),
        (lambda: mjnp.partition(np.zeros(3), 3), ValueError),
        (lambda: mjnp.argpartition(np.zeros(3), -4), ValueError),
        (lambda: mjnp.partition(np.zeros(3), 1.0), TypeError),
    ],
)
def test_errors_match_numpy_types(call, error):
    with pytest.raises(error):
        call()


def test_zero_d_argsort_and_argpartition_as_numpy():
    assert_matches(mjnp.argsort(np.float64(3.0)), np.argsort(np.float64(3.0)))
    assert_matches(mjnp.argpartition(np.float64(3.0), 0), np.argpartition(np.float64(3.0), 0))
    assert_matches(mjnp.lexsort([np.array(2.0)]), np.lexsort([np.array(2.0)]))


@pytest.mark.parametrize("name", ["sort", "argsort"])
def test_jit_matches_eager_and_vmap_matches_loop(name):
    fun = getattr(mjnp, name)
    x = _ties_and_nans(np.random.default_rng(0), (4, 3, 5), np.dtype("float32"))
    eager = fun(x, 1)
    assert_matches(mjcore.jit(lambda x: fun(x, 1))(x), np.asarray(eager))
    for in_axis in (0, 2):
        batched = mjcore.vmap(lambda x: fun(x, 0), in_axes=in_axis)(x)
        loop = np.stack(
            [np.asarray(fun(np.take(x, i, in_axis), 0)) for i in range(x.shape[in_axis])]
        )
        assert_matches(batched, loop)


def test_sort_gradients_and_jax_agreement():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x = np.random.default_rng(1).permutation(12).reshape(3, 4) / 3.0 - 1.5
    w = np.random.default_rng(2).standard_normal((3, 4))

    def loss(x):
        return mjnp.sum(mjnp.sort(x, axis=0) * w) + mjnp.sum(mjnp.sort(x, axis=None)[:5] ** 2)

    def jax_loss(x):
        jnp = jax.numpy
        return jnp.sum(jnp.sort(x, axis=0) * w) + jnp.sum(jnp.sort(x, axis=None)[:5] ** 2)

    check_grads(lambda x: mjnp.sort(x, axis=0), (x,), order=1, modes=("fwd", "rev"))
    np.testing.assert_allclose(mjcore.grad(loss)(x), jax.grad(jax_loss)(x), rtol=1e-12)


def test_argsort_has_no_gradient_but_values_do():
    x = np.array([3.0, 1.0, 2.0])
    y, y_dot = mjcore.jvp(lambda x: mjnp.argsort(x), (x,), (np.ones(3),))
    assert_matches(y, np.argsort(x))
    assert y.dtype == np.int64 and not np.asarray(y_dot).any()
