"""mjnp/_histograms.py (bincount, histogram_bin_edges, histogram, histogram2d, histogramdd)
against NumPy; under jit and vmap (static bin counts); derivatives in the weights (JAX x64 as
the oracle)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mjcore
import mjnp
from mjcore.errors import ConcretizationTypeError
from mjcore.test_util import check_grads
from tests.differential_registry import differential
from tests.mjnp_testing import (
    arrays,
    assert_matches,
    check_against_numpy,
)

# Each new shape and dtype compiles every op of a histogram again: small budgets.
FEW = settings(max_examples=8, deadline=None, derandomize=True)
SOME = settings(max_examples=12, deadline=None, derandomize=True)
DATA_DTYPES = ("bool", "int8", "uint8", "float16", "float32", "float64")
WEIGHT_DTYPES = ("int16", "float32", "float64", "complex64")


def _halves(rng, shape, dtype):
    """Multiples of 1/2 in [-4, 4] (small integers for integer dtypes): bin edges fall on
    data values, so the closed-last-bin and one-ulp rules are exercised."""
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -4, 5, size=shape)
    real = rng.integers(-8, 9, size=shape) / 2
    return real + 1j * rng.integers(-8, 9, size=shape) / 2 if dtype.kind == "c" else real


def _with_nans(rng, shape, dtype):
    x = _halves(rng, shape, dtype)
    if dtype.kind == "f":
        x = np.where(rng.random(shape) < 0.1, np.nan, x)
    return x


# --- bincount -------------------------------------------------------------------------------


@differential("bincount")
@SOME
@given(data=st.data())
def test_bincount_matches_numpy(data):
    shape = data.draw(st.sampled_from([(), (0,), (1,), (7,), (2, 3)]))
    dtype = data.draw(st.sampled_from(["bool", "uint8", "int8", "int64", "float64"]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.integers(0, 6, size=shape).astype(dtype)
    if dtype == "int8" and x.size and data.draw(st.booleans()):
        x.flat[0] = -1  # NumPy's ValueError for negative values
    kwargs = {"minlength": data.draw(st.sampled_from([0, 3, 9]))}
    weights = data.draw(st.sampled_from([None, "float32", "int32", "bool", "complex128", "short"]))
    if weights == "short":
        kwargs["weights"] = np.ones(x.size + 1)
    elif weights is not None:
        kwargs["weights"] = _halves(rng, shape, np.dtype(weights)).astype(weights)
    check_against_numpy(lambda x: mjnp.bincount(x, **kwargs), lambda x: np.bincount(x, **kwargs), x)


def test_bincount_of_an_empty_list_is_integer_as_numpy():
    for kwargs in ({}, {"minlength": 3}, {"weights": []}):
        check_against_numpy(mjnp.bincount, np.bincount, [], **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"minlength": -1}, ValueError),
        ({"minlength": None}, TypeError),
        ({"minlength": 2.0}, TypeError),
    ],
)
def test_bincount_minlength_errors_are_numpys(kwargs, error):
    with pytest.raises(error):
        np.bincount([1, 2], **kwargs)
    with pytest.raises(error, match="mjnp|integer"):
        mjnp.bincount([1, 2], **kwargs)


def test_bincount_length_under_jit_and_vmap():
    x = np.array([[0, 1, 1, 4], [3, 3, 0, 2]])
    w = np.array([[0.5, 1.0, 2.0, 4.0], [1.0, 2.0, 3.0, 4.0]])

    def fun(x, w):
        return mjnp.bincount(x, w, length=4)

    # Values at or above `length` are dropped.
    expected = np.stack([np.bincount(x[i], w[i], minlength=5)[:4] for i in range(2)])
    np.testing.assert_array_equal(mjcore.jit(fun)(x[0], w[0]), expected[0])
    np.testing.assert_array_equal(mjcore.vmap(fun)(x, w), expected)  # eager vmap once
    assert mjcore.jit(lambda x: mjnp.bincount(x, length=6))(x[0]).dtype == np.int64
    with pytest.raises(ConcretizationTypeError, match="length="):
        mjcore.jit(mjnp.bincount)(x[0])
    with pytest.raises(ValueError, match="minlength"):
        mjnp.bincount(x[0], minlength=5, length=4)


# --- histogram and its edges ----------------------------------------------------------------


@st.composite
def _histogram_args(draw):
    """a, and keywords for histogram: every kind of `bins`, ranges (some invalid), weights."""
    # (12,) and (3, 4) share the compiled programs after raveling.
    a = draw(arrays(DATA_DTYPES, st.sampled_from([(0,), (12,), (3, 4)]), domain=_with_nans))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    kwargs = {}
    kind = draw(st.sampled_from(["int", "edges", "estimator"]))
    if kind == "int":
        kwargs["bins"] = draw(st.sampled_from([1, 3, 10]))
    elif kind == "edges":
        edges = np.sort(rng.integers(-6, 7, size=draw(st.sampled_from([1, 2, 5]))) / 2)
        kwargs["bins"] = edges.astype(draw(st.sampled_from(["float64", "float32"])))
        if draw(st.booleans()):
            kwargs["bins"] = list(range(-3, 4))  # integer edges
    else:  # invalid bins are in test_errors_are_numpys
        kwargs["bins"] = draw(st.sampled_from(["auto", "fd", "sturges", "sqrt"]))
    if draw(st.booleans()):
        kwargs["range"] = draw(
            st.sampled_from([(-2, 3), (-1.5, 0.5), (0.0, 0.0), (2, 1), (0, np.inf)])
        )
    if kind != "estimator" and draw(st.booleans()):
        dtype = np.dtype(draw(st.sampled_from(WEIGHT_DTYPES)))
        kwargs["weights"] = _halves(rng, a.shape, dtype).astype(dtype)
    if draw(st.booleans()):
        kwargs["density"] = True
    return a, kwargs


@differential("histogram")
@SOME
@given(args=_histogram_args())
def test_histogram_matches_numpy(args):
    a, kwargs = args
    check_against_numpy(mjnp.histogram, np.histogram, a, **kwargs)


@differential("histogram_bin_edges")
@FEW
@given(args=_histogram_args())
@pytest.mark.filterwarnings("ignore:.*Converting input from bool:RuntimeWarning")
def test_histogram_bin_edges_matches_numpy(args):
    a, kwargs = args
    kwargs.pop("density", None)
    check_against_numpy(mjnp.histogram_bin_edges, np.histogram_bin_edges, a, **kwargs)


def test_histogram_warns_for_booleans_as_numpy():
    with pytest.warns(RuntimeWarning, match="uint8"):
        n, edges = mjnp.histogram(np.array([True, False, True]), bins=2)
    assert_matches(n, np.array([1, 2]))
    assert_matches(edges, np.array([0.0, 0.5, 1.0]))


@st.composite
def _histogramdd_args(draw):
    n = draw(st.sampled_from([0, 6, 11]))
    d = draw(st.sampled_from([1, 2, 3]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    dtype = np.dtype(draw(st.sampled_from(["int32", "float32", "float64"])))
    sample = _halves(rng, (n, d), dtype).astype(dtype)
    kinds = [draw(st.sampled_from([2, 4, "edges"])) for _ in range(d)]
    bins = [np.sort(rng.integers(-6, 7, size=3) / 2) if k == "edges" else k for k in kinds]
    if draw(st.booleans()) and "edges" not in kinds:
        bins = kinds[0]  # one number for every dimension
    kwargs = {"bins": bins}
    if draw(st.booleans()):
        kwargs["range"] = [draw(st.sampled_from([None, (-1, 2), (0.5, 0.5)])) for _ in range(d)]
    if draw(st.booleans()):
        kwargs["weights"] = _halves(rng, (n,), np.dtype("float64"))
    if draw(st.booleans()):
        kwargs["density"] = True
    as_columns = draw(st.booleans())
    return (list(sample.T) if as_columns else sample), kwargs


@differential("histogramdd")
@FEW
@given(args=_histogramdd_args())
def test_histogramdd_matches_numpy(args):
    sample, kwargs = args
    check_against_numpy(mjnp.histogramdd, np.histogramdd, sample, **kwargs)


@differential("histogram2d")
@FEW
@given(args=_histogramdd_args())
def test_histogram2d_matches_numpy(args):
    sample, kwargs = args
    columns = np.asarray(sample).T if not isinstance(sample, list) else np.asarray(sample)
    if len(columns) != 2:
        columns = np.stack([columns[0], columns[-1]])
        kwargs.pop("range", None)
        if isinstance(kwargs["bins"], list):
            kwargs["bins"] = kwargs["bins"][0]  # one entry: both axes
    check_against_numpy(mjnp.histogram2d, np.histogram2d, columns[0], columns[1], **kwargs)


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda m: m.histogram([1, 2], bins=0), ValueError),
        (lambda m: m.histogram([1, 2], bins=2.5), TypeError),
        (lambda m: m.histogram([1, 2], bins=[[1, 2]]), ValueError),
        (lambda m: m.histogram([1, 2], bins=[2, 1]), ValueError),
        (lambda m: m.histogram([1, 2], range=(2, 1)), ValueError),
        (lambda m: m.histogram([1, 2], range=(0, np.inf)), ValueError),
        (lambda m: m.histogram([1, np.nan]), ValueError),
        (lambda m: m.histogram([1, 2], bins="foo"), ValueError),
        (lambda m: m.histogram([1, 2], bins="auto", weights=[1, 2]), TypeError),
        (lambda m: m.histogram([1, 2], weights=[1, 2, 3]), ValueError),
        (lambda m: m.histogram([1, 2], bins=[0, 3], weights=[True, False]), TypeError),
        (lambda m: m.histogramdd(np.ones((3, 2)), bins=[2, 2, 2]), ValueError),
        (lambda m: m.histogramdd(np.ones((3, 2)), range=[(0, 1)]), ValueError),
        (lambda m: m.histogramdd(np.ones((3, 2)), bins=[0, 2]), ValueError),
        (lambda m: m.histogramdd(np.ones((3, 2)), bins=[2.5, 2]), TypeError),
        (lambda m: m.histogramdd(np.ones((3, 2)), weights=[1.0, 2.0]), ValueError),
        (lambda m: m.histogramdd(np.ones((3, 2)), weights=np.ones(3, complex)), TypeError),
        (lambda m: m.histogram2d([1.0, 2.0], [1.0]), ValueError),
    ],
)
def test_errors_are_numpys(call, error):
    with pytest.raises(error):
        call(np)
    with pytest.raises(error, match="mjnp"):
        call(mjnp)


# --- transformations ------------------------------------------------------------------------

_EDGES = np.array([-2.0, -0.5, 0.0, 1.5, 3.0])

TRANSFORMED = {
    "histogram-bins": lambda a, w: mjnp.histogram(a, bins=4),
    "histogram-range": lambda a, w: mjnp.histogram(a, bins=3, range=(-1, 2), weights=w),
    "histogram-edges-density": lambda a, w: mjnp.histogram(a, bins=_EDGES, weights=w, density=True),
    "histogram2d": lambda a, w: mjnp.histogram2d(a, w, bins=(3, _EDGES)),
    "histogramdd": lambda a, w: mjnp.histogramdd(mjnp.stack([a, w, a * w], axis=1), bins=2),
    "bincount-length": lambda a, w: mjnp.bincount(mjnp.astype(a > 0, int), w, length=3),
}


def _allclose_trees(a, b):
    for x, y in zip(mjcore.tree_util.tree_leaves(a), mjcore.tree_util.tree_leaves(b), strict=True):
        assert np.asarray(x).dtype == np.asarray(y).dtype
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", list(TRANSFORMED))
def test_jit_matches_eager_and_vmap_matches_loop(name):
    fun = TRANSFORMED[name]
    rng = np.random.default_rng(0)
    a = rng.integers(-6, 7, size=(3, 10)) / 2  # values on the edges
    w = rng.uniform(-2, 2, size=(3, 10))
    eager = fun(a[0], w[0])
    _allclose_trees(mjcore.jit(fun)(a[0], w[0]), eager)
    batched = mjcore.jit(mjcore.vmap(fun))(a, w)  # batching rules at trace time, one compile
    for i in range(3):
        _allclose_trees(mjcore.tree_util.tree_map(lambda x, i=i: x[i], batched), fun(a[i], w[i]))


# --- derivatives ----------------------------------------------------------------------------

DIFFERENTIABLE = {
    "histogram-weights": lambda np_, a, w: np_.histogram(a, bins=4, weights=w)[0],
    "histogram-density": lambda np_, a, w: np_.histogram(a, bins=_EDGES, weights=w, density=True)[
        0
    ],
    "histogram2d-weights": lambda np_, a, w: np_.histogram2d(a, -a, bins=3, weights=w)[0],
    "bincount-weights": lambda np_, a, w: np_.bincount((a > 0) * 2, w, length=3),
}


@pytest.mark.parametrize("name", list(DIFFERENTIABLE))
def test_weight_derivatives_check_and_agree_with_jax(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    fun = DIFFERENTIABLE[name]
    rng = np.random.default_rng(1)
    a = rng.uniform(-2, 3, size=12)
    w = rng.uniform(0.5, 2, size=12)
    check_grads(lambda w: fun(mjnp, a, w), (w,), order=1, modes=("fwd", "rev"))
    ct = rng.standard_normal(np.shape(fun(mjnp, a, w)))
    ours = mjcore.grad(lambda w: mjnp.sum(fun(mjnp, a, w) * ct))(w)
    # One jitted JAX program for the oracle (eager JAX compiles each op of the gradient).
    theirs = jax.jit(jax.grad(lambda w: jax.numpy.sum(fun(jax.numpy, a, w) * ct)))(w)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
