"""mjnp's ufuncs as objects: attributes, reduce, accumulate, outer, at and reduceat against
NumPy (values, dtypes, errors), under jit and vmap, and their gradients against finite
differences."""

from __future__ import annotations

import numpy as np
import pytest

import mjcore
import mjnp
from tests.mjnp_testing import assert_matches

_UFUNC_NAMES = sorted(n for n in dir(np) if isinstance(getattr(np, n), np.ufunc))


@pytest.mark.parametrize("name", _UFUNC_NAMES)
def test_every_numpy_ufunc_is_an_object_with_numpy_attributes(name):
    u, ref = getattr(mjnp, name), getattr(np, name)
    assert isinstance(u, mjnp._ufunc.ufunc)
    assert u.__name__ == ref.__name__
    for attr in ("nin", "nout", "nargs", "ntypes", "types", "signature"):
        assert getattr(u, attr) == getattr(ref, attr), attr
    assert u.identity == ref.identity or (u.identity is ref.identity)
    # Aliases are the same object, as NumPy's.
    assert u is getattr(mjnp, ref.__name__)


def test_ufuncs_do_not_bind_as_methods():
    class Holder:
        f = mjnp.sin
        g = np.sin

    np.testing.assert_allclose(Holder().f(0.5), Holder().g(0.5))


_REDUCE_CASES = [
    ("add", np.arange(12.0).reshape(3, 4), {}),
    ("add", np.arange(12).reshape(3, 4).astype(np.int32), {"axis": 1}),
    ("add", np.array([True, False, True]), {}),
    ("multiply", np.arange(1.0, 7.0).reshape(2, 3), {"axis": None}),
    ("maximum", np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -1.0]]), {"axis": 1}),
    ("minimum", np.array([3, 1, 2]), {}),
    ("fmax", np.array([1.0, np.nan, 3.0]), {}),
    ("subtract", np.array([1.0, 2.0, 3.0, 10.0]), {}),
    ("subtract", np.arange(6.0).reshape(2, 3), {"axis": 1, "keepdims": True}),
    ("divide", np.array([64.0, 2.0, 4.0]), {}),
    ("logical_and", np.array([[True, False], [True, True]]), {"axis": 0}),
    ("logical_or", np.array([False, False]), {}),
    ("logical_xor", np.array([True, True, True]), {}),
    ("bitwise_xor", np.array([5, 3, 1]), {}),
    ("add", np.zeros((0, 3)), {"axis": 0}),
    ("multiply", np.zeros((0,)), {}),
    ("add", np.arange(6.0).reshape(2, 3), {"axis": (0, 1), "initial": 10.0}),
    ("maximum", np.zeros((0,)), {"initial": -5.0}),
    ("add", np.arange(6.0).reshape(2, 3), {"dtype": np.float32}),
    ("power", np.array([2, 3, 2]), {}),  # (NumPy 2.4 float power.reduce gives 4.0 here)
]


@pytest.mark.parametrize("case", _REDUCE_CASES, ids=lambda c: f"{c[0]}-{c[1].dtype}-{c[2]}")
def test_reduce_as_numpy(case):
    name, a, kw = case
    assert_matches(
        getattr(mjnp, name).reduce(mjnp.asarray(a), **kw), getattr(np, name).reduce(a, **kw)
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda xp: xp.maximum.reduce(xp.asarray([])),
        lambda xp: xp.minimum.reduce(xp.zeros((2, 0)), axis=1),
        lambda xp: xp.subtract.reduce(xp.zeros((0,))),
        lambda xp: xp.subtract.reduce(xp.zeros((2, 2)), axis=None),
        lambda xp: xp.sin.reduce(xp.zeros(2)),
        lambda xp: xp.divmod.reduce(xp.zeros(2)),
        lambda xp: xp.add.reduce(xp.zeros(2), axis=3),
        lambda xp: xp.add.accumulate(xp.zeros(2), axis=1),
        lambda xp: xp.negative.at(xp.zeros(2), [0], 1.0),
        lambda xp: xp.add.at(xp.zeros(2), [0]),
        lambda xp: xp.add.reduceat(xp.arange(4), [0, 9]),
    ],
)
def test_method_errors_as_numpy(call):
    try:
        call(np)
    except Exception as err:  # noqa: BLE001  (its type is the oracle)
        expected = type(err)
    else:
        pytest.fail("NumPy raised nothing")
    with pytest.raises(expected):
        call(mjnp)


_ACCUMULATE_CASES = [
    ("add", np.arange(6.0).reshape(2, 3), {"axis": 1}),
    ("add", np.arange(5).astype(np.int32), {}),
    ("add", np.array([True, False, True]), {}),
    ("multiply", np.arange(1.0, 5.0), {}),
    ("maximum", np.array([1.0, 3.0, np.nan, 2.0, 5.0]), {}),
    ("minimum", np.array([[3, 1], [2, 5], [0, 9]]), {"axis": 0}),
    ("subtract", np.array([1.0, 2.0, 3.0]), {}),
    ("divide", np.array([64.0, 2.0, 4.0]), {}),
    ("logical_xor", np.array([True, True, False, True]), {}),
    ("add", np.zeros((0, 2)), {}),
    ("add", np.arange(4), {"dtype": np.float32}),
]


@pytest.mark.parametrize("case", _ACCUMULATE_CASES, ids=lambda c: f"{c[0]}-{c[1].dtype}-{c[2]}")
def test_accumulate_as_numpy(case):
    name, a, kw = case
    assert_matches(
        getattr(mjnp, name).accumulate(mjnp.asarray(a), **kw), getattr(np, name).accumulate(a, **kw)
    )


@pytest.mark.parametrize(
    "name", ["add", "multiply", "subtract", "maximum", "power", "equal", "arctan2"]
)
def test_outer_as_numpy(name):
    a, b = np.arange(1.0, 4.0), np.array([[0.5, 2.0], [1.0, -1.0]])
    assert_matches(
        getattr(mjnp, name).outer(mjnp.asarray(a), mjnp.asarray(b)), getattr(np, name).outer(a, b)
    )


@pytest.mark.parametrize(
    "name,indices,b",
    [
        ("add", [0, 0, 2], 1.0),
        ("add", [0, 1, 0], [1.0, 2.0, 3.0]),
        ("multiply", [1, 1], 3.0),
        ("maximum", [0, 0, 3], [5.0, 7.0, -1.0]),
        ("minimum", slice(1, 3), 0.5),
        ("subtract", [2, 2], [1.0, 4.0]),
        ("negative", [0, 0, 1], None),
        ("power", [1, 3], 2.0),
        ("add", (np.array([0, 0]), np.array([1, 1])), 1.0),
    ],
)
def test_at_as_numpy(name, indices, b):
    shape = (2, 3) if isinstance(indices, tuple) else (4,)
    a = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
    x = mjnp.asarray(a)
    alias = x
    args = () if b is None else (b,)
    assert getattr(mjnp, name).at(x, indices, *args) is None
    getattr(np, name).at(a, indices, *args)
    assert_matches(x, a)
    assert alias is x  # the handle itself holds the result


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "subtract"])
@pytest.mark.parametrize("indices", [[0, 4, 1, 5], [0, 3, 3, 7], [5], [0, 2, 1, 7]])
def test_reduceat_as_numpy(name, indices):
    a = np.arange(1.0, 9.0)
    assert_matches(
        getattr(mjnp, name).reduceat(mjnp.asarray(a), indices),
        getattr(np, name).reduceat(a, indices),
    )
    m = np.arange(16.0).reshape(2, 8)
    assert_matches(
        getattr(mjnp, name).reduceat(mjnp.asarray(m), indices, axis=1),
        getattr(np, name).reduceat(m, indices, axis=1),
    )


# --- transformations ------------------------------------------------------------------------


def _central_difference(f, x, eps=1e-6):
    x = np.asarray(x, float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (float(f(x + d)) - float(f(x - d))) / (2 * eps)
    return g


_GRAD_CASES = [
    ("add.reduce", lambda x: mjnp.add.reduce(x * x)),
    ("multiply.reduce", lambda x: mjnp.multiply.reduce(x)),
    ("maximum.reduce", lambda x: mjnp.maximum.reduce(x)),
    ("subtract.reduce", lambda x: mjnp.subtract.reduce(x * x)),
    ("divide.reduce", lambda x: mjnp.divide.reduce(x)),
    ("add.accumulate", lambda x: mjnp.add.accumulate(x).sum()),
    ("maximum.accumulate", lambda x: (mjnp.maximum.accumulate(x) * mjnp.arange(4.0)).sum()),
    ("subtract.accumulate", lambda x: (mjnp.subtract.accumulate(x) ** 2).sum()),
    ("multiply.outer", lambda x: (mjnp.multiply.outer(x, x) ** 2).sum()),
    ("add.reduceat", lambda x: (mjnp.add.reduceat(x, [0, 2, 1]) ** 2).sum()),
]


@pytest.mark.parametrize("case", _GRAD_CASES, ids=[c[0] for c in _GRAD_CASES])
def test_method_gradients_match_finite_differences(case):
    f = case[1]
    x = np.array([1.3, 0.7, 2.1, 1.6])
    g = mjcore.grad(f)(x)
    np.testing.assert_allclose(g, _central_difference(f, x), rtol=1e-5, atol=1e-6)


def test_methods_under_jit_and_vmap():
    x = np.array([[1.0, 4.0, 2.0], [3.0, -1.0, 5.0]])
    for f in (
        lambda v: mjnp.subtract.reduce(v),
        lambda v: mjnp.maximum.accumulate(v),
        lambda v: mjnp.subtract.accumulate(v),
        lambda v: mjnp.add.outer(v, v),
        lambda v: mjnp.logical_xor.reduce(v > 1),
    ):
        eager = [np.asarray(f(mjnp.asarray(row))) for row in x]
        np.testing.assert_allclose(mjcore.vmap(f)(x), np.stack(eager))
        np.testing.assert_allclose(mjcore.jit(f)(x[0]), eager[0])


def test_at_under_jit():
    def f(x):
        mjnp.add.at(x, mjnp.asarray([0, 0, 1]), 1.0)
        return x

    np.testing.assert_array_equal(mjcore.jit(f)(np.zeros(3)), [2.0, 1.0, 0.0])
