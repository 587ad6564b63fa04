"""NumPy's indexing routines (mjnp/_indexing_functions.py) against NumPy, under jit, vmap and
differentiation (JAX x64 as the gradient oracle)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import mjcore
import mjnp
from mjcore.errors import NonConcreteBooleanIndexError
from mjcore.test_util import check_grads
from tests.differential_registry import differential
from tests.mjnp_testing import SETTINGS, arrays, assert_matches, check_against_numpy, shapes

X = np.arange(24.0).reshape(2, 3, 4) - 7.5
M = np.arange(12).reshape(3, 4) % 5
SORTED = np.array([-1.0, 0.0, 0.0, 2.5, 7.0, np.nan])

# (id, function name, args, kwargs): mjnp.<name> vs numpy.<name> on the same arguments.
CASES = [
    ("take-flat", "take", (X, [0, -1, 5]), {}),
    ("take-axis", "take", (X, np.array([[2, 0], [1, 1]])), {"axis": 1}),
    ("take-wrap", "take", (X, [7, -9]), {"axis": -1, "mode": "wrap"}),
    ("take-clip", "take", (X, [7, -9]), {"axis": 2, "mode": "clip"}),
    ("take-oob", "take", (X, [4]), {"axis": 2}),
    ("take-empty", "take", (np.zeros((0, 2)), []), {"axis": 0}),
    ("take_along_axis", "take_along_axis", (X, np.argsort(-X, axis=1)), {"axis": 1}),
    ("take_along_axis-bcast", "take_along_axis", (X, np.array([[[3], [0], [1]]])), {"axis": 2}),
    ("take_along_axis-none", "take_along_axis", (X, np.array([5, 0])), {"axis": None}),
    ("take_along_axis-ndim", "take_along_axis", (X, np.array([1])), {"axis": 0}),
    ("choose", "choose", (np.array([0, 2, 1, 0]), [np.zeros(4), np.ones(4), 2.0]), {}),
    ("choose-wrap", "choose", (np.array([[3], [-1]]), [M[0], M[1]]), {"mode": "wrap"}),
    ("choose-clip", "choose", (np.array([3, -1, 0, 1]), [M[0], M[1]]), {"mode": "clip"}),
    ("choose-invalid", "choose", (np.array([2]), [M[0], M[1]]), {}),
    ("select", "select", ([X > 3, X < -3], [X, -X]), {"default": 0.5}),
    ("select-int", "select", ([M > 1], [M]), {}),
    ("select-bad-cond", "select", ([M], [M]), {}),
    ("select-mismatch", "select", ([M > 1], [M, M]), {}),
    ("select-weak-default", "select", ([M > 1], [M.astype(np.int8)]), {"default": 300}),
    ("select-weak-float", "select", ([M > 1], [M.astype(np.uint8)]), {"default": -1.5}),
    ("select-weak-choice", "select", ([M > 1, M > 2], [M.astype(np.int8), 7]), {}),
    ("piecewise", "piecewise", (X, [X < 0, X > 5], [lambda v: -v, 5.0, lambda v: v**2]), {}),
    ("piecewise-int", "piecewise", (M, M > 2, [lambda v: v * 3]), {}),
    ("piecewise-count", "piecewise", (M, [M > 2], [1, 2, 3]), {}),
    ("compress", "compress", ([True, False, True], X), {"axis": 1}),
    ("compress-flat", "compress", ([False, True, True], X), {}),
    ("compress-short", "compress", ([True], X), {"axis": -1}),
    ("compress-oob", "compress", ([False, False, True], X), {"axis": 0}),
    ("diagonal", "diagonal", (X,), {}),
    ("diagonal-offset", "diagonal", (X,), {"offset": 1, "axis1": 2, "axis2": 1}),
    ("diagonal-neg", "diagonal", (X,), {"offset": -2, "axis1": -1, "axis2": 1}),
    ("diagonal-far", "diagonal", (X,), {"offset": 9, "axis1": 1, "axis2": 2}),
    ("diagonal-1d", "diagonal", (X[0, 0],), {}),
    ("diagonal-same", "diagonal", (X,), {"axis1": 1, "axis2": -2}),
    ("trace", "trace", (X,), {"offset": 1}),
    ("trace-int-dtype", "trace", (M,), {"dtype": np.float32}),
    ("nonzero", "nonzero", (M,), {}),
    ("nonzero-0d", "nonzero", (np.array(3),), {}),
    ("argwhere", "argwhere", (M > 2,), {}),
    ("argwhere-0d", "argwhere", (np.array(3),), {}),
    ("flatnonzero", "flatnonzero", (X > 4,), {}),
    ("extract", "extract", (X > 4, X), {}),
    ("searchsorted", "searchsorted", (SORTED, np.array([[0.0, np.nan], [9.0, -5]])), {}),
    (
        "searchsorted-right",
        "searchsorted",
        (SORTED, np.array([0.0, np.nan, 2.5])),
        {"side": "right"},
    ),
    ("searchsorted-scalar", "searchsorted", (np.array([1, 3, 5]), 3), {}),
    ("searchsorted-sorter", "searchsorted", (np.array([3, 1, 2]), [2, 3]), {"sorter": [1, 2, 0]}),
    ("searchsorted-2d", "searchsorted", (M, 1), {}),
    ("digitize", "digitize", (X, np.array([-3.0, 0.0, 5.0])), {}),
    ("digitize-right", "digitize", (X, np.array([-3.0, 0.0, 5.0])), {"right": True}),
    ("digitize-decreasing", "digitize", (X, np.array([5.0, 0.0, -3.0])), {}),
    ("digitize-unsorted", "digitize", (X, np.array([5.0, 0.0, 3.0])), {}),
    ("ravel_multi_index", "ravel_multi_index", (([1, 0], [3, 2]), (2, 4)), {}),
    ("ravel_multi_index-F", "ravel_multi_index", (([1, 0], [3, 2]), (2, 4)), {"order": "F"}),
    (
        "ravel_multi_index-modes",
        "ravel_multi_index",
        (([5, -1], [3, 9]), (2, 4)),
        {"mode": ("wrap", "clip")},
    ),
    ("ravel_multi_index-oob", "ravel_multi_index", (([2], [0]), (2, 4)), {}),
    ("unravel_index", "unravel_index", (np.array([[0, 7], [5, 3]]), (2, 4)), {}),
    ("unravel_index-F", "unravel_index", (5, (2, 4)), {"order": "F"}),
    ("unravel_index-oob", "unravel_index", ([8], (2, 4)), {}),
]


def _numpy_result(out):
    return tuple(np.asarray(o) for o in out) if isinstance(out, tuple) else out


@pytest.mark.parametrize("name,args,kwargs", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_matches_numpy(name, args, kwargs):
    np_fun = getattr(np, name)
    mj_fun = getattr(mjnp, name)
    try:
        expected = np_fun(*args, **kwargs)
    except Exception as err:  # NumPy's exception type is the expectation
        with pytest.raises(type(err)):
            mj_fun(*args, **kwargs)
        return
    actual = mj_fun(*args, **kwargs)
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            assert_matches(a, e)
    else:
        assert_matches(actual, expected)


# (id, function name, args, kwargs): in-place routines; NumPy mutates, mjnp rebinds the handle.
INPLACE_CASES = [
    ("put", "put", (M, [0, -1, 5], [7, 8]), {}),
    ("put-wrap", "put", (M, [13, -14], [7, 8]), {"mode": "wrap"}),
    ("put-clip", "put", (X, [99], 1.5), {"mode": "clip"}),
    ("put-oob", "put", (X, [99], 1.5), {}),
    ("putmask", "putmask", (X, X > 0, [1.0, 2.0, 3.0]), {}),
    ("place", "place", (M, M > 2, [10, 20, 30]), {}),
    ("place-empty", "place", (M, M > 2, []), {}),
    # Array values must cast safely (TypeError); scalars and lists convert as np.asarray does.
    ("putmask-unsafe", "putmask", (M, M > 2, np.array([1.5])), {}),
    ("putmask-float-scalar", "putmask", (M.astype(np.int8), M > 2, 1.5), {}),
    ("putmask-overflow", "putmask", (M.astype(np.int8), M > 2, 300), {}),
    ("place-unsafe", "place", (X.astype(np.float32), X > 0, np.array([1.0])), {}),
    ("place-float-list", "place", (M, M > 2, [1.5, 2.5]), {}),
    ("put_along_axis", "put_along_axis", (X, np.array([[[0], [2], [1]]]), -1.0), {"axis": 2}),
    ("put_along_axis-none", "put_along_axis", (M, np.array([1, 4]), [5, 6]), {"axis": None}),
    ("fill_diagonal", "fill_diagonal", (np.zeros((5, 3)), [1.0, 2.0]), {}),
    ("fill_diagonal-wrap", "fill_diagonal", (np.zeros((7, 2)), 3.0), {"wrap": True}),
    ("fill_diagonal-3d", "fill_diagonal", (np.zeros((3, 3, 3)), 4.0), {}),
    ("fill_diagonal-ragged", "fill_diagonal", (np.zeros((3, 3, 2)), 4.0), {}),
]


@pytest.mark.parametrize(
    "name,args,kwargs", [c[1:] for c in INPLACE_CASES], ids=[c[0] for c in INPLACE_CASES]
)
def test_in_place_routines_match_numpy(name, args, kwargs):
    target, rest = np.array(args[0], copy=True), args[1:]
    handle = mjcore.device_put(np.array(target, copy=True))
    try:
        assert getattr(np, name)(target, *rest, **kwargs) is None
    except Exception as err:  # NumPy's exception type is the expectation
        with pytest.raises(type(err)):
            getattr(mjnp, name)(handle, *rest, **kwargs)
        return
    assert getattr(mjnp, name)(handle, *rest, **kwargs) is None
    assert_matches(handle, target)


# --- hypothesis -----------------------------------------------------------------------------


@differential("take")
@SETTINGS
@given(x=arrays(shape=shapes(min_dims=1)), data=st.data())
def test_take_matches_numpy(x, data):
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    n = x.size if axis is None else x.shape[axis]
    mode = data.draw(st.sampled_from(["raise", "wrap", "clip"]))
    idx = np.asarray(data.draw(st.lists(st.integers(-n - 2, n + 1), max_size=4)), np.int64)
    check_against_numpy(mjnp.take, np.take, x, idx, axis=axis, mode=mode)


@differential("searchsorted")
@SETTINGS
@given(
    a=arrays(dtypes=("float64", "int32", "uint8", "bool"), shape=shapes(1, 1, 6)),
    v=arrays(dtypes=("float64", "int64"), shape=shapes(0, 2)),
    side=st.sampled_from(["left", "right"]),
)
def test_searchsorted_matches_numpy(a, v, side):
    a = np.sort(a)
    check_against_numpy(mjnp.searchsorted, np.searchsorted, a, v, side=side)
    out = mjcore.jit(lambda a, v: mjnp.searchsorted(a, v, side=side))(a, v)
    assert_matches(out, np.searchsorted(a, v, side=side))


# --- transformations ------------------------------------------------------------------------


def test_jit_and_vmap():
    idx = np.array([[2, 0, 1, 1]])
    f = lambda x, i: mjnp.take_along_axis(x, i, axis=0)  # noqa: E731
    assert_matches(mjcore.jit(f)(M, idx), np.take_along_axis(M, idx, axis=0))
    xs = np.stack([M, M + 1])
    ids = np.stack([idx, 2 - idx])
    out = mjcore.vmap(f)(xs, ids)
    assert_matches(
        out, np.stack([np.take_along_axis(a, i, 0) for a, i in zip(xs, ids, strict=True)])
    )
    g = lambda a, v: mjnp.digitize(v, a)  # noqa: E731
    bins = np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])
    vals = np.array([1.5, 1.5])
    out = mjcore.vmap(g)(bins, vals)
    assert_matches(out, np.array([np.digitize(1.5, b) for b in bins]))
    diag = mjcore.vmap(lambda x: mjnp.trace(x, 1))(X)
    assert_matches(diag, np.stack([np.trace(x, 1) for x in X]))


def test_value_dependent_shapes_raise_under_jit():
    for f in [mjnp.nonzero, mjnp.argwhere, mjnp.flatnonzero, lambda x: mjnp.extract(x > 0, x)]:
        with pytest.raises(NonConcreteBooleanIndexError, match="mjnp.where"):
            mjcore.jit(f)(X)


GRAD_CASES = [
    ("take", lambda m: lambda x: m.take(x, m.asarray([0, 2, 2, 5]), axis=None)),
    ("take_along_axis", lambda m: lambda x: m.take_along_axis(x, m.asarray([[[1], [0], [2]]]), 2)),
    ("diagonal", lambda m: lambda x: m.diagonal(x, 1, 2, 1)),
    ("trace", lambda m: lambda x: m.trace(x, -1, 1, 2)),
    ("choose", lambda m: lambda x: m.choose(m.asarray([0, 1, 1, 0]), [x[0, 0], x[1, 2]])),
    ("select", lambda m: lambda x: m.select([x > 0, x < -5], [x**2, m.sin(x)], 0.5)),
    ("piecewise", lambda m: lambda x: m.piecewise(x, [x > 0], [m.sin, lambda v: v**3])),
]


@pytest.mark.parametrize("make", [c[1] for c in GRAD_CASES], ids=[c[0] for c in GRAD_CASES])
def test_gradients_match_numerics_and_jax(make):
    f = make(mjnp)
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    check_grads(f, [x], order=1, modes=("fwd", "rev"))
    ct = np.random.default_rng(1).standard_normal(np.shape(f(x)))
    _, f_vjp = mjcore.vjp(f, x)
    with jax.enable_x64(True):
        _, jax_vjp = jax.vjp(make(jnp), jnp.asarray(x))
        expected = np.asarray(jax_vjp(jnp.asarray(ct))[0])
    np.testing.assert_allclose(np.asarray(f_vjp(ct)[0]), expected, rtol=1e-12, atol=1e-12)


def test_extract_is_differentiable_eagerly():
    x = np.array([-1.0, 2.0, 3.0])
    g = mjcore.grad(lambda x: mjnp.sum(mjnp.extract(x > 0, x) ** 2))(x)
    assert_matches(g, np.array([0.0, 4.0, 6.0]))


def test_methods():
    a = mjcore.device_put(np.array(X, copy=True))
    assert_matches(a.take([1], axis=0), X.take([1], axis=0))
    assert_matches(a.compress([True, False], axis=0), X.compress([True, False], axis=0))
    assert_matches(a.diagonal(0, 1, 2), X.diagonal(0, 1, 2))
    assert_matches(a.trace(), X.trace())
    assert_matches(
        mjcore.device_put(M).choose([10, 20, 30, 40, 50]), M.choose([10, 20, 30, 40, 50])
    )
    assert_matches(mjcore.device_put(SORTED).searchsorted(0.0), SORTED.searchsorted(0.0))
    for got, want in zip(a.nonzero(), X.nonzero(), strict=True):
        assert_matches(got, want)
    a.put([0], -100.0)
    expected = np.array(X, copy=True)
    expected.put([0], -100.0)
    assert_matches(a, expected)
