"""mjnp/_calculus.py (trapezoid, gradient) against NumPy, under jit and vmap, and their
derivatives (check_grads, with JAX x64 as the oracle)."""

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
    arrays,
    assert_matches,
    check_against_numpy,
    shapes,
)

FEW = settings(max_examples=15, deadline=None, derandomize=True)
SOME = settings(max_examples=12, deadline=None, derandomize=True)
TRAPEZOID_DTYPES = ("bool", "int8", "int64", "float16", "float32", "float64", "complex128")
GRADIENT_DTYPES = ("bool", "int16", "int64", "float16", "float32", "float64", "complex128")


def _coordinates(rng: np.random.Generator, n: int, dtype: str = "float64") -> np.ndarray:
    """Increasing sample points with steps 1/2, 1, 3/2 or 2 (exact differences)."""
    return (np.cumsum(rng.integers(1, 5, size=n)) / 2 - 1).astype(dtype)


# --- trapezoid ------------------------------------------------------------------------------


@differential("trapezoid")
@SOME
@given(data=st.data())
def test_trapezoid_matches_numpy(data):
    y = data.draw(arrays(TRAPEZOID_DTYPES, shapes(0, 3, max_side=5)))
    axis = data.draw(st.integers(-y.ndim - 1, y.ndim))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x, dx = None, 1.0
    kind = data.draw(st.sampled_from(["dx", "python", "float32", "x1d", "xfull", "short"]))
    valid = -y.ndim <= axis < y.ndim
    if kind == "python":
        dx = data.draw(st.sampled_from([0.5, 2, 1.5]))
    elif kind == "float32":
        dx = np.float32(0.5)
    elif kind == "x1d" and valid:
        x = _coordinates(rng, y.shape[axis], data.draw(st.sampled_from(["float64", "int32"])))
    elif kind == "xfull" and valid:
        x = np.sort(rng.integers(-4, 5, size=y.shape), axis=axis) / 2
    elif kind == "short" and valid:
        x = _coordinates(rng, y.shape[axis] + 1)  # does not broadcast: ValueError
    check_against_numpy(
        lambda y: mjnp.trapezoid(y, x, dx, axis), lambda y: np.trapezoid(y, x, dx, axis), y
    )


# --- gradient -------------------------------------------------------------------------------


@st.composite
def _gradient_args(draw):
    """f, the spacing arguments and the keywords of a gradient call (some of them invalid)."""
    f = draw(arrays(GRADIENT_DTYPES, shapes(0, 3, max_side=5)))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    kwargs = {"edge_order": draw(st.sampled_from([1, 2]))}
    axes = tuple(range(f.ndim))
    if f.ndim and draw(st.booleans()):
        axis = draw(st.integers(-f.ndim, f.ndim - 1))
        if draw(st.booleans()):
            axes = tuple(a % f.ndim for a in (axis,))
            kwargs["axis"] = axis
        else:
            axes = tuple(sorted({axis % f.ndim, draw(st.integers(0, f.ndim - 1))}))
            kwargs["axis"] = axes
    kind = draw(st.sampled_from(["none", "scalar", "per-axis", "wrong-count"]))
    if kind == "scalar":
        varargs = (draw(st.sampled_from([0.5, 2, np.float32(1.5)])),)
    elif kind == "per-axis":
        varargs = tuple(
            draw(st.sampled_from([0.5, "coords", "int-coords", "uniform"])) for _ in axes
        )
        n = [f.shape[a] for a in axes]
        varargs = tuple(
            _coordinates(rng, size)
            if v == "coords"
            else np.cumsum(rng.integers(1, 3, size=size))
            if v == "int-coords"
            else np.arange(size) * 0.5
            if v == "uniform"
            else v
            for v, size in zip(varargs, n, strict=True)
        )
    elif kind == "wrong-count":
        varargs = (1.0,) * (len(axes) + 1) if len(axes) != 0 else (1.0, 2.0)
    else:
        varargs = ()
    return f, varargs, kwargs


@differential("gradient")
@FEW
@given(args=_gradient_args())
def test_gradient_matches_numpy(args):
    f, varargs, kwargs = args
    check_against_numpy(
        lambda f: mjnp.gradient(f, *varargs, **kwargs),
        lambda f: np.gradient(f, *varargs, **kwargs),
        f,
    )


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: mjnp.gradient(np.ones((3, 3)), axis=(0, 0)), ValueError),
        (lambda: mjnp.gradient(np.ones((3, 3)), axis=2), np.exceptions.AxisError),
        (lambda: mjnp.gradient(np.ones(3), edge_order=3), ValueError),
        (lambda: mjnp.gradient(np.ones(3), np.ones((3, 1))), ValueError),
        (lambda: mjnp.gradient(np.ones(3), [0.0, 1.0]), ValueError),
        (lambda: mjnp.gradient(np.ones(2), edge_order=2), ValueError),
        (lambda: mjnp.gradient(np.array([True, False, True])), TypeError),
        (lambda: mjnp.trapezoid(np.ones(3), axis=1), IndexError),
        (lambda: mjnp.trapezoid(np.ones(3), x=[1.0, 2.0, 3.0, 4.0]), ValueError),
    ],
)
def test_errors_are_numpys(call, error):
    with pytest.raises(error, match="mjnp"):
        call()


def test_gradient_of_0d_is_an_empty_tuple_as_numpy():
    assert mjnp.gradient(np.float64(3.0)) == np.gradient(np.float64(3.0)) == ()


# --- transformations ------------------------------------------------------------------------

_X5 = _coordinates(np.random.default_rng(0), 5)

TRANSFORMED = {
    "trapezoid-x": lambda y: mjnp.trapezoid(y, x=_X5, axis=1),
    "trapezoid-dx": lambda y: mjnp.trapezoid(y, dx=0.3, axis=0),
    "gradient-uniform": lambda y: mjnp.gradient(y, 0.5, axis=1),
    "gradient-coords-order-2": lambda y: mjnp.gradient(y, _X5, axis=1, edge_order=2),
    "gradient-two-axes": lambda y: mjnp.stack(mjnp.gradient(y, 2.0, _X5, axis=(0, 1))),
}


@pytest.mark.parametrize("name", list(TRANSFORMED))
def test_jit_matches_eager_and_vmap_matches_loop(name):
    fun = TRANSFORMED[name]
    y = np.random.default_rng(1).standard_normal((4, 5, 3))
    loop = np.stack([np.asarray(fun(y[:, :, i])) for i in range(y.shape[2])])
    np.testing.assert_allclose(mjcore.jit(fun)(y[:, :, 0]), loop[0], rtol=1e-12, atol=1e-12)
    # vmap under jit: the batching rules run at trace time, then one program compiles.
    batched = mjcore.jit(mjcore.vmap(fun, in_axes=2))(y)
    np.testing.assert_allclose(batched, loop, rtol=1e-12, atol=1e-12)


def test_traced_coordinates_match_numpy():
    """Under jit the coordinates are traced: the general formula, also for uniform ones."""
    y = np.random.default_rng(2).standard_normal((3, 6))
    for x in (_coordinates(np.random.default_rng(3), 6), np.arange(6.0)):
        for order in (1, 2):
            out = mjcore.jit(lambda y, x, o=order: mjnp.gradient(y, x, axis=1, edge_order=o))(y, x)
            assert_matches(out, np.gradient(y, x, axis=1, edge_order=order))
        got = mjcore.jit(lambda y, x: mjnp.trapezoid(y, x))(y, x)
        assert_matches(got, np.trapezoid(y, x))


# --- derivatives ----------------------------------------------------------------------------

DIFFERENTIABLE = {
    "trapezoid-y": (lambda np_, y, x: np_.trapezoid(y * y, axis=0), False),
    "trapezoid-x": (lambda np_, y, x: np_.trapezoid(y, x=x), True),
    "gradient-f": (lambda np_, y, x: np_.gradient(y, 0.7, axis=1), False),
    "gradient-coords": (lambda np_, y, x: np_.gradient(y, x, axis=1), True),
    "gradient-both-axes": (lambda np_, y, x: np_.gradient(y * y, 1.5, x)[1], True),
}


@pytest.mark.parametrize("name", list(DIFFERENTIABLE))
def test_derivatives_check_and_agree_with_jax(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    fun, through_x = DIFFERENTIABLE[name]
    rng = np.random.default_rng(4)
    y = rng.standard_normal((4, 5))
    x = np.cumsum(rng.uniform(0.5, 1.5, 5))
    check_grads(lambda y, x: fun(mjnp, y, x), (y, x), order=1, modes=("fwd", "rev"))
    weights = rng.standard_normal(np.shape(fun(np, y, x)))

    def loss(np_, y, x):
        return np_.sum(fun(np_, y, x) * weights)

    argnums = (0, 1) if through_x else 0
    ours = mjcore.grad(lambda y, x: loss(mjnp, y, x), argnums=argnums)(y, x)
    theirs = jax.grad(lambda y, x: loss(jax.numpy, y, x), argnums=argnums)(y, x)
    if not through_x:
        ours, theirs = (ours,), (theirs,)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_second_order_edges_are_exact_for_quadratics():
    """NumPy's edge_order=2 scheme is exact for quadratics on non-uniform grids."""
    x = _coordinates(np.random.default_rng(5), 7)
    out = mjnp.gradient(3 * x**2 - x + 1, x, edge_order=2)
    np.testing.assert_allclose(out, 6 * x - 1, rtol=1e-12)
