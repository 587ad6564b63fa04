"""mjnp reductions (mjnp/_reductions.py) against NumPy, under vmap and under jvp."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from numpy.exceptions import AxisError

import mjcore
import mjnp
from tests.differential_registry import differential
from tests.mjnp_testing import (
    ALL_DTYPES,
    REAL_DTYPES,
    SETTINGS,
    arrays,
    assert_matches,
    axis_args,
    cast_is_undefined,
    check_against_numpy,
    shapes,
)


def _unit_steps(rng, shape, dtype):
    """Values in {-1, -1/2, 0, 1/2, 1} (small integers for integer dtypes): products stay in
    range for every dtype, and float16 products agree whatever the rounding order."""
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -3, 4, size=shape)
    real = rng.integers(-2, 3, size=shape) / 2
    return real + 1j * rng.integers(-2, 3, size=shape) / 2 if dtype.kind == "c" else real


# name -> (dtypes, value domain or None for the default exact halves)
REDUCTIONS = {
    "sum": (ALL_DTYPES, None),
    "prod": (ALL_DTYPES, _unit_steps),
    "mean": (ALL_DTYPES, None),
    "max": (REAL_DTYPES, None),
    "min": (REAL_DTYPES, None),
    "amax": (REAL_DTYPES, None),
    "amin": (REAL_DTYPES, None),
    "all": (ALL_DTYPES, None),
    "any": (ALL_DTYPES, None),
}


def _draw_array(data, name):
    dtypes, domain = REDUCTIONS[name]
    return data.draw(arrays(dtypes) if domain is None else arrays(dtypes, domain=domain))


@differential("all", "amax", "amin", "any", "max", "mean", "min", "prod", "sum")
@pytest.mark.parametrize("name", list(REDUCTIONS))
@SETTINGS
@given(data=st.data())
def test_reduction_matches_numpy(name, data):
    x = _draw_array(data, name)
    axis = data.draw(axis_args(x.ndim), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    check_against_numpy(getattr(mjnp, name), getattr(np, name), x, axis=axis, keepdims=keepdims)


@differential("mean", "prod", "sum")
@pytest.mark.parametrize("name", ["sum", "prod", "mean"])
@SETTINGS
@given(data=st.data())
def test_reduction_dtype_argument(name, data):
    x = _draw_array(data, name)
    dtype = data.draw(st.sampled_from(ALL_DTYPES), label="dtype")
    axis = data.draw(axis_args(x.ndim), label="axis")
    assume(not cast_is_undefined(x, dtype))
    if name == "mean" and np.dtype(dtype).kind in "iu":
        # An empty mean is NaN, whose cast to an integer is undefined.
        reduced = range(x.ndim) if axis is None else np.atleast_1d(axis)
        assume(all(x.shape[a] for a in reduced))
    check_against_numpy(getattr(mjnp, name), getattr(np, name), x, axis=axis, dtype=dtype)


@differential("max", "min", "prod", "sum")
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min"])
@SETTINGS
@given(data=st.data())
def test_reduction_initial_and_where(name, data):
    x = _draw_array(data, name)
    axis = data.draw(axis_args(x.ndim), label="axis")
    kwargs = {"initial": data.draw(st.sampled_from([-2, 0, 3]), label="initial")}
    if data.draw(st.booleans(), label="use_where"):
        # A mask broadcasting from a trailing part of the shape.
        k = data.draw(st.integers(0, x.ndim), label="mask_ndim")
        seed = data.draw(st.integers(0, 2**32 - 1))
        kwargs["where"] = np.random.default_rng(seed).random(x.shape[x.ndim - k :]) < 0.5
    check_against_numpy(getattr(mjnp, name), getattr(np, name), x, axis=axis, **kwargs)


@differential("all", "any", "mean")
@pytest.mark.parametrize("name", ["all", "any", "mean"])
@SETTINGS
@given(data=st.data())
def test_logical_and_mean_where(name, data):
    x = _draw_array(data, name)
    axis = data.draw(axis_args(x.ndim), label="axis")
    seed = data.draw(st.integers(0, 2**32 - 1))
    where = np.random.default_rng(seed).random(x.shape) < 0.5
    check_against_numpy(getattr(mjnp, name), getattr(np, name), x, axis=axis, where=where)


@differential("argmax", "argmin")
@pytest.mark.parametrize("name", ["argmax", "argmin"])
@SETTINGS
@given(data=st.data())
def test_arg_reduction_matches_numpy(name, data):
    # Exact halves repeat often, so ties check that the first occurrence wins.
    x = data.draw(arrays(REAL_DTYPES))
    axis = data.draw(axis_args(x.ndim, allow_tuple=False), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    check_against_numpy(getattr(mjnp, name), getattr(np, name), x, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin"])
def test_nan_propagates_like_numpy(name):
    x = np.array([[1.0, np.nan, 3.0], [2.0, 0.5, np.nan], [4.0, 5.0, -1.0]])
    for axis in (None, 0, 1):
        check_against_numpy(getattr(mjnp, name), getattr(np, name), x, axis=axis)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "all", "any"])
@pytest.mark.parametrize("axis", [0, -1, (0,), 1])
def test_ufunc_reduction_of_0d_accepts_axis_0(name, axis):
    # NumPy's ufunc reductions take an int axis 0 or -1 on a 0-d array; tuples stay invalid.
    check_against_numpy(getattr(mjnp, name), getattr(np, name), np.array(2.5), axis=axis)


def test_python_scalars_and_lists():
    assert_matches(mjnp.sum(3), np.sum(3))
    assert_matches(mjnp.mean([1, 2, 4]), np.mean([1, 2, 4]))
    assert_matches(mjnp.max([[1.5, 2.0]], axis=1), np.max([[1.5, 2.0]], axis=1))
    for fun in (mjnp.sum, mjnp.max, mjnp.mean, mjnp.prod):
        assert not fun(3.0).weak_type


# --- errors ---------------------------------------------------------------------------------

ERROR_CASES = [
    pytest.param("sum", (2, 3), {"axis": 2}, AxisError, "axis 2 is out of bounds", id="sum-axis"),
    pytest.param("mean", (2, 3), {"axis": -3}, AxisError, "out of bounds", id="mean-axis"),
    pytest.param("any", (2, 3), {"axis": (0, -2)}, ValueError, "duplicate", id="any-dup"),
    pytest.param("sum", (2,), {"axis": 1.0}, TypeError, "integer", id="sum-float-axis"),
    pytest.param("max", (0, 3), {"axis": 0}, ValueError, "zero-size", id="max-empty"),
    pytest.param("min", (3, 0), {}, ValueError, "no identity", id="min-empty"),
    pytest.param(
        "max", (3,), {"where": np.ones(3, bool)}, ValueError, "initial", id="max-where-no-initial"
    ),
    pytest.param("argmax", (0,), {}, ValueError, "empty sequence", id="argmax-empty"),
    pytest.param("argmin", (2, 0), {"axis": 1}, ValueError, "empty", id="argmin-empty"),
    pytest.param("argmax", (2, 3), {"axis": 2}, AxisError, "out of bounds", id="argmax-axis"),
    pytest.param("sum", (3,), {"where": np.ones(3, int)}, TypeError, "boolean", id="where-int"),
    pytest.param("sum", (3,), {"out": np.zeros((2,))}, ValueError, "out= has shape", id="out"),
]


@pytest.mark.parametrize("name,shape,kwargs,exc,match", ERROR_CASES)
def test_reduction_errors(name, shape, kwargs, exc, match):
    x = np.zeros(shape)
    with pytest.raises(exc, match=match):
        getattr(mjnp, name)(x, **kwargs)
    if exc is not NotImplementedError:
        with pytest.raises(exc):
            getattr(np, name)(x, **kwargs)


def test_empty_max_with_initial():
    check_against_numpy(mjnp.max, np.max, np.zeros((0, 3)), axis=0, initial=-5.0)


# --- transformations ------------------------------------------------------------------------


def _case_id(name, kwargs):
    """`sum-axis=1-keepdims=True`: a readable test id."""
    return "-".join([name, *(f"{k}={v}".replace(" ", "") for k, v in kwargs.items())])


VMAP_CASES = [
    ("sum", {"axis": 1}),
    ("sum", {"axis": None, "keepdims": True}),
    ("prod", {"axis": (0, 2)}),
    ("mean", {"axis": -1}),
    ("max", {"axis": 0}),
    ("min", {"axis": (1, 2), "keepdims": True}),
    ("argmax", {"axis": 1}),
    ("argmin", {}),
    ("all", {"axis": 2}),
    ("any", {}),
]


@pytest.mark.parametrize("in_axis", [0, 1, -1])
@pytest.mark.parametrize(
    "name,kwargs", [pytest.param(n, k, id=_case_id(n, k)) for n, k in VMAP_CASES]
)
def test_vmap_matches_loop(name, kwargs, in_axis):
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((4, 3, 2, 5))
    mj_fun, np_fun = getattr(mjnp, name), getattr(np, name)
    out = mjcore.vmap(lambda x: mj_fun(x, **kwargs), in_axes=in_axis)(xs)
    expected = np.stack([np_fun(x, **kwargs) for x in np.moveaxis(xs, in_axis, 0)])
    assert_matches(out, expected)


@pytest.mark.parametrize(
    "name,kwargs", [pytest.param(n, k, id=_case_id(n, k)) for n, k in VMAP_CASES]
)
def test_jit_matches_eager(name, kwargs):
    x = np.random.default_rng(2).standard_normal((4, 3, 2))

    def f(v):
        return getattr(mjnp, name)(v, **kwargs)

    eager = f(x)
    assert_matches(mjcore.jit(f)(x), np.asarray(eager))


def test_vmap_empty_batch():
    out = mjcore.vmap(lambda x: mjnp.sum(x, axis=0))(np.zeros((0, 3, 2)))
    assert out.shape == (0, 2) and out.dtype == np.float64


def _numerical_jvp(f, x, t, eps=1e-6):
    return (np.asarray(f(x + eps * t)) - np.asarray(f(x - eps * t))) / (2 * eps)


JVP_CASES = [
    ("sum", {"axis": 1}),
    ("sum", {}),
    ("prod", {"axis": 0}),
    ("mean", {"axis": (0, 2), "keepdims": True}),
    ("max", {"axis": 2}),
    ("min", {}),
]


@pytest.mark.parametrize(
    "name,kwargs", [pytest.param(n, k, id=_case_id(n, k)) for n, k in JVP_CASES]
)
def test_jvp_matches_finite_differences(name, kwargs):
    rng = np.random.default_rng(1)
    x = rng.uniform(0.5, 2.0, (3, 4, 2))  # distinct values: max/min are differentiable
    t = rng.standard_normal(x.shape)

    def f(v):
        return getattr(mjnp, name)(v, **kwargs)

    out, out_dot = mjcore.jvp(f, (x,), (t,))
    assert_matches(out, getattr(np, name)(x, **kwargs))
    np.testing.assert_allclose(np.asarray(out_dot), _numerical_jvp(f, x, t), rtol=1e-6)


@SETTINGS
@given(x=arrays(("float64",), shape=shapes(min_dims=1)), data=st.data())
def test_jvp_of_sum_is_sum_of_tangent(x, data):
    axis = data.draw(axis_args(x.ndim), label="axis")
    t = np.ones_like(x)
    _, out_dot = mjcore.jvp(lambda v: mjnp.sum(v, axis=axis), (x,), (t,))
    np.testing.assert_allclose(np.asarray(out_dot), np.sum(t, axis=axis))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "int8", "bool"])
@pytest.mark.parametrize("shape", [(), (4,), (2, 3), (2, 0, 3)])
def test_plain_sum_matches_numpy_and_traces_to_one_reduction(dtype, shape):
    # `sum(x)` with no options has a short path for strongly typed inexact arrays (the loss
    # of every eager grad): same value and dtype as NumPy's, one reduce_sum when traced.
    x = (np.arange(int(np.prod(shape))) % 3).astype(dtype).reshape(shape)
    expected = np.sum(x)
    got = mjnp.sum(mjnp.asarray(x))
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-3 if dtype == "float16" else 1e-6)
    jaxpr = mjcore.make_jaxpr(mjnp.sum)(mjnp.asarray(x)).jaxpr
    prims = [e.primitive.name for e in jaxpr.eqns]
    if dtype in ("float32", "float64", "complex64") and shape:
        assert prims == ["reduce_sum"]
        assert jaxpr.eqns[0].params["axes"] == tuple(range(len(shape)))
