"""mjnp statistics (mjnp/_statistics.py), running sums and differences
(mjnp/_sums_products_differences.py) against NumPy, under jit, vmap and differentiation (with
JAX, x64, as the oracle for gradients)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mjcore
import mjnp
from mjcore.test_util import check_grads
from tests.differential_registry import differential
from tests.mjnp_testing import (
    ALL_DTYPES,
    REAL_DTYPES,
    SETTINGS,
    arrays,
    assert_matches,
    axis_args,
    check_against_numpy,
    shapes,
)

FLOATS = ("float16", "float32", "float64")
# Quantiles and variances compile several programs per example: a smaller budget keeps this
# file within the CI time.
FEW = settings(max_examples=10, deadline=None, derandomize=True)


def _unit_steps(rng, shape, dtype):
    """Values whose running products stay small and exact."""
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -1, 2, size=shape)
    real = rng.integers(-2, 3, size=shape) / 2
    return real + 1j * rng.integers(-2, 3, size=shape) / 2 if dtype.kind == "c" else real


def _halves_with_nans(rng, shape, dtype):
    """Multiples of 1/2 with about a quarter NaNs (floats only)."""
    x = rng.integers(-8, 9, size=shape) / 2
    if dtype.kind == "f":
        x = np.where(rng.random(shape) < 0.25, np.nan, x)
    return x


def _int_axis(data, ndim):
    return data.draw(st.sampled_from([None, *range(-ndim, ndim)]))


# --- running sums and products --------------------------------------------------------------


@differential("cumprod", "cumsum", "nancumprod", "nancumsum")
@pytest.mark.parametrize("name", ["cumsum", "cumprod", "nancumsum", "nancumprod"])
@FEW
@given(data=st.data())
def test_cumulative_matches_numpy(name, data):
    domain = _unit_steps if "prod" in name else _halves_with_nans if "nan" in name else None
    x = data.draw(arrays(ALL_DTYPES) if domain is None else arrays(ALL_DTYPES, domain=domain))
    axis = _int_axis(data, x.ndim)
    dtype = data.draw(st.sampled_from([None, None, "float64", "int32", "bool"]))
    if dtype == "int32" and x.dtype.kind in "fc":
        dtype = None  # NumPy's float-to-int cast differs from XLA's at NaN
    check_against_numpy(getattr(mjnp, name), getattr(np, name), x, axis, dtype)


@differential("cumulative_prod", "cumulative_sum")
@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@SETTINGS
@given(data=st.data())
def test_cumulative_array_api_matches_numpy(name, data):
    x = data.draw(arrays(REAL_DTYPES, domain=_unit_steps))
    axis = _int_axis(data, x.ndim)
    include_initial = data.draw(st.booleans())
    check_against_numpy(
        lambda x: getattr(mjnp, name)(x, axis=axis, include_initial=include_initial),
        lambda x: getattr(np, name)(x, axis=axis, include_initial=include_initial),
        x,
    )


@differential("diff")
@SETTINGS
@given(data=st.data())
def test_diff_matches_numpy(data):
    x = data.draw(arrays(REAL_DTYPES))
    n = data.draw(st.integers(0, 3))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1)) if x.ndim else -1
    kwargs = {}
    if data.draw(st.booleans()):
        kwargs["prepend"] = data.draw(st.sampled_from([0, 1.5, np.float32(2)]))
    if data.draw(st.booleans()) and x.ndim:
        shape = list(x.shape)
        shape[axis] = 2
        kwargs["append"] = data.draw(arrays(("int8", "float32"), shape=tuple(shape)))
    check_against_numpy(
        lambda x: mjnp.diff(x, n, axis, **kwargs), lambda x: np.diff(x, n, axis, **kwargs), x
    )


@differential("ediff1d")
@SETTINGS
@given(
    x=arrays(("int16", "float32", "float64", "bool")),
    to_begin=st.sampled_from([None, [1, 2], 3]),
    to_end=st.sampled_from([None, [4.5], np.array([1], np.int8)]),
)
def test_ediff1d_matches_numpy(x, to_begin, to_end):
    check_against_numpy(mjnp.ediff1d, np.ediff1d, x, to_end, to_begin)


# --- variance, nan* reductions --------------------------------------------------------------


@differential("nanstd", "nanvar", "std", "var")
@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd"])
@FEW
@given(data=st.data())
def test_variance_matches_numpy(name, data):
    domain = _halves_with_nans if name.startswith("nan") else None
    dtypes = (*REAL_DTYPES, "complex128") if name in ("var", "std") else ALL_DTYPES
    x = data.draw(arrays(dtypes) if domain is None else arrays(dtypes, domain=domain))
    axis = data.draw(axis_args(x.ndim))
    kwargs = {"keepdims": data.draw(st.booleans())}
    style = data.draw(st.sampled_from(["ddof", "correction", "none", "where", "dtype"]))
    if style == "ddof":
        kwargs["ddof"] = data.draw(st.sampled_from([1, 2, 0.5]))
    elif style == "correction":
        kwargs["correction"] = 1
    elif style == "where":
        kwargs["where"] = data.draw(arrays(("bool",), shape=x.shape))
    elif style == "dtype" and x.dtype.kind != "c":
        kwargs["dtype"] = data.draw(st.sampled_from(["float32", "float64"]))
    check_against_numpy(getattr(mjnp, name), getattr(np, name), x, axis, **kwargs)


NAN_REDUCTIONS = ["nansum", "nanprod", "nanmean", "nanmax", "nanmin", "ptp", "count_nonzero"]


@differential("count_nonzero", "nanmax", "nanmean", "nanmin", "nanprod", "nansum", "ptp")
@pytest.mark.parametrize("name", NAN_REDUCTIONS)
@FEW
@given(data=st.data())
def test_nan_reductions_match_numpy(name, data):
    dtypes = tuple(d for d in REAL_DTYPES if d != "bool") if name == "ptp" else REAL_DTYPES
    domain = _unit_steps if name == "nanprod" else _halves_with_nans
    x = data.draw(arrays(dtypes, domain=domain))
    axis = data.draw(axis_args(x.ndim))
    keepdims = data.draw(st.booleans())
    check_against_numpy(
        lambda x: getattr(mjnp, name)(x, axis, keepdims=keepdims),
        lambda x: getattr(np, name)(x, axis, keepdims=keepdims),
        x,
    )


@differential("nanargmax", "nanargmin")
@pytest.mark.parametrize("name", ["nanargmax", "nanargmin"])
@FEW
@given(data=st.data())
def test_nan_arg_extrema_match_numpy(name, data):
    x = data.draw(arrays(("float32", "float64", "int8"), domain=_halves_with_nans))
    axis = _int_axis(data, x.ndim)
    keepdims = data.draw(st.booleans())
    check_against_numpy(
        lambda x: getattr(mjnp, name)(x, axis, keepdims=keepdims),
        lambda x: getattr(np, name)(x, axis, keepdims=keepdims),
        x,
    )


# --- median and quantiles -------------------------------------------------------------------

METHODS = [
    "linear",
    "lower",
    "higher",
    "nearest",
    "midpoint",
    "hazen",
    "weibull",
    "median_unbiased",
    "normal_unbiased",
    "interpolated_inverted_cdf",
]


@differential("median", "nanmedian")
@pytest.mark.parametrize("name", ["median", "nanmedian"])
@FEW
@given(data=st.data())
def test_median_matches_numpy(name, data):
    dtypes = ("int8", "uint16", "int64", *FLOATS)
    x = data.draw(arrays(dtypes, domain=_halves_with_nans))
    axis = data.draw(axis_args(x.ndim))
    keepdims = data.draw(st.booleans())
    check_against_numpy(getattr(mjnp, name), getattr(np, name), x, axis, keepdims=keepdims)


@differential("nanpercentile", "nanquantile", "percentile", "quantile")
@pytest.mark.parametrize("name", ["quantile", "percentile", "nanquantile", "nanpercentile"])
@FEW
@given(data=st.data())
def test_quantile_matches_numpy(name, data):
    # NB: NumPy's quantiles of empty arrays fail in shape-dependent ways (IndexError,
    # ValueError or odd shapes); mjnp raises IndexError, tested below.
    shape = data.draw(shapes(max_side=4).filter(lambda s: 0 not in s))
    q = data.draw(
        st.sampled_from([0.5, 0.0, 1.0, 0.3])
        | st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9, 1.0]), max_size=3).map(np.array)
    )
    # NB: NumPy gives an all-NaN slice the input dtype, other slices result_type(a, q).
    dtypes = (
        ("int32", "float64")
        if name.startswith("nan") and type(q) is not float
        else ("int32", "float32", "float64")
    )
    x = data.draw(arrays(dtypes, shape=shape, domain=_halves_with_nans))
    axis = data.draw(axis_args(x.ndim))
    scale = 100 if "percentile" in name else 1
    q = q * scale
    method = data.draw(st.sampled_from(METHODS))
    keepdims = data.draw(st.booleans())
    check_against_numpy(
        lambda x: getattr(mjnp, name)(x, q, axis, method=method, keepdims=keepdims),
        lambda x: getattr(np, name)(x, q, axis, method=method, keepdims=keepdims),
        x,
    )


@pytest.mark.parametrize(
    "call,error",
    [
        (lambda: mjnp.quantile(np.zeros(3), 1.5), ValueError),
        (lambda: mjnp.quantile(np.zeros((2, 0)), 0.5, axis=1), IndexError),
        (lambda: mjnp.percentile(np.zeros(3), -1), ValueError),
        (lambda: mjnp.quantile(np.zeros(3), 0.5, method="bogus"), ValueError),
        (lambda: mjnp.quantile(np.zeros(3, complex), 0.5), TypeError),
        (lambda: mjnp.var(np.zeros(3), ddof=1, correction=1), ValueError),
        (lambda: mjnp.diff(np.zeros(3), -1), ValueError),
        (lambda: mjnp.diff(np.float64(1.0)), ValueError),
        (lambda: mjnp.cumulative_sum(np.zeros((2, 2))), ValueError),
        (lambda: mjnp.nanargmax(np.array([np.nan, np.nan])), ValueError),
        (lambda: mjnp.quantile(np.zeros(3), 0.5, weights=np.ones(3)), ValueError),
    ],
)
def test_errors_match_numpy_types(call, error):
    with pytest.raises(error):
        call()


# --- transformations ------------------------------------------------------------------------

TRANSFORMED = {
    "cumsum": lambda x: mjnp.cumsum(x, axis=0),
    "cumprod": lambda x: mjnp.cumprod(x, axis=1),
    "var": lambda x: mjnp.var(x, axis=0, ddof=1),
    "std": lambda x: mjnp.std(x, axis=1),
    "median": lambda x: mjnp.median(x, axis=0),
    "quantile": lambda x: mjnp.quantile(x, np.array([0.2, 0.7]), axis=1),
    "nanquantile": lambda x: mjnp.nanquantile(x, 0.4, axis=0, method="nearest"),
    "nanmedian": lambda x: mjnp.nanmedian(x, axis=1),
    "nanmean": lambda x: mjnp.nanmean(x, axis=1),
    "diff": lambda x: mjnp.diff(x, 2, axis=0),
}


@pytest.mark.parametrize("name", list(TRANSFORMED))
def test_jit_matches_eager_and_vmap_matches_loop(name):
    fun = TRANSFORMED[name]
    x = _halves_with_nans(np.random.default_rng(3), (3, 5, 4), np.dtype("float64"))
    eager = fun(x)
    np.testing.assert_allclose(mjcore.jit(fun)(x), eager, rtol=1e-12)
    for in_axis in (2,):
        batched = mjcore.vmap(fun, in_axes=in_axis)(x)
        loop = np.stack([np.asarray(fun(np.take(x, i, in_axis))) for i in range(x.shape[in_axis])])
        np.testing.assert_allclose(batched, loop, rtol=1e-12)


# Smooth at distinct values (no ties, no NaN): the same programs in mjnp and jax.numpy.
DIFFERENTIABLE = {
    "cumsum": lambda np_, x: np_.cumsum(x, axis=1),
    "cumprod": lambda np_, x: np_.cumprod(x, axis=0),
    "var": lambda np_, x: np_.var(x, axis=0, ddof=1),
    "std": lambda np_, x: np_.std(x),
    "median": lambda np_, x: np_.median(x, axis=1),
    "quantile": lambda np_, x: np_.quantile(x, np_.asarray([0.1, 0.75]), axis=0),
    "percentile-midpoint": lambda np_, x: np_.percentile(x, 40.0, method="midpoint"),
    "nanmedian": lambda np_, x: np_.nanmedian(x, axis=0),
    "nanvar": lambda np_, x: np_.nanvar(x, axis=1),
    "diff": lambda np_, x: np_.diff(x, axis=0),
    "ptp": lambda np_, x: np_.ptp(x, axis=1),
    "nanmax": lambda np_, x: np_.nanmax(x, axis=0),
}


@pytest.mark.parametrize("name", list(DIFFERENTIABLE))
def test_gradients_check_and_agree_with_jax(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    fun = DIFFERENTIABLE[name]
    rng = np.random.default_rng(4)
    x = rng.permutation(20).reshape(4, 5) / 7.0 + 0.3
    check_grads(lambda x: fun(mjnp, x), (x,), order=1, modes=("fwd", "rev"))
    weights = rng.standard_normal(np.shape(fun(np, x)))

    def loss(np_, x):
        return np_.sum(fun(np_, x) * weights)

    np.testing.assert_allclose(
        mjcore.grad(lambda x: loss(mjnp, x))(x),
        jax.jit(jax.grad(lambda x: loss(jax.numpy, x)))(x),  # one JAX compile, not one per op
        rtol=1e-10,
        atol=1e-12,
    )


def test_median_of_empty_axis_is_nan_as_numpy():
    check_against_numpy(
        lambda x: mjnp.median(x, axis=0), lambda x: np.median(x, axis=0), np.zeros((0, 3))
    )


@differential("average")
@FEW
@given(data=st.data())
def test_average_matches_numpy(data):
    x = data.draw(arrays(("int32", "float32", "float64"), shapes(1, 3)))
    axis = data.draw(st.sampled_from([None, *range(-x.ndim, x.ndim)]))
    returned = data.draw(st.booleans())
    kwargs = {"returned": returned}
    if axis is not None and data.draw(st.booleans()):
        kwargs["weights"] = np.arange(1, x.shape[axis] + 1, dtype=np.float32)
    expected = np.average(x, axis, **kwargs) if x.size else None
    if expected is None:
        return
    actual = mjnp.average(x, axis, **kwargs)
    if returned:
        for a, e in zip(actual, expected, strict=True):
            assert_matches(a, np.asarray(e))
    else:
        assert_matches(actual, np.asarray(expected))


@differential("corrcoef", "cov")
@pytest.mark.parametrize("name", ["cov", "corrcoef"])
@FEW
@given(data=st.data())
def test_cov_and_corrcoef_match_numpy(name, data):
    rows = data.draw(st.integers(1, 3))
    cols = data.draw(st.integers(2, 5))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.standard_normal((rows, cols)) if rows > 1 else rng.standard_normal(cols)
    rowvar = data.draw(st.booleans())
    y = rng.standard_normal(x.shape) if data.draw(st.booleans()) else None
    check_against_numpy(getattr(mjnp, name), getattr(np, name), x, y, rowvar)


def test_cov_gradient_agrees_with_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x = np.random.default_rng(5).standard_normal((3, 6))
    np.testing.assert_allclose(
        mjcore.grad(lambda x: mjnp.sum(mjnp.corrcoef(x) ** 2 + mjnp.cov(x)))(x),
        # One jitted JAX program for the oracle (eager JAX compiles each op of the gradient).
        jax.jit(jax.grad(lambda x: jax.numpy.sum(jax.numpy.corrcoef(x) ** 2 + jax.numpy.cov(x))))(
            x
        ),
        rtol=1e-10,
    )
