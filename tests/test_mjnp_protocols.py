"""NumPy's protocols on mjnp arrays and tracers: ufunc and function dispatch (eager, jit, grad,
vmap), `out=` rebinding, DLPack, pickling and NumPy-identical printing."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import mjcore
import mjnp
from mjcore.array import Array
from tests.mjnp_testing import SETTINGS, arrays, assert_matches, shapes

_UFUNCS = [np.sin, np.exp, np.negative, np.absolute, np.sqrt, np.isnan, np.signbit, np.spacing]
_BINARY_UFUNCS = [np.add, np.multiply, np.maximum, np.arctan2, np.copysign, np.logaddexp]


@SETTINGS
@given(
    ufunc=st.sampled_from(_UFUNCS),
    x=arrays(("float32", "float64"), shape=shapes(max_dims=3), domain=(0.5, 3.0)),
)
def test_numpy_ufunc_on_mjnp_array_returns_mjnp_array(ufunc, x):
    out = ufunc(mjnp.asarray(x))
    assert isinstance(out, Array)
    assert_matches(out, ufunc(x))


@pytest.mark.parametrize("ufunc", _BINARY_UFUNCS, ids=lambda u: u.__name__)
def test_binary_ufunc_with_mixed_operands(ufunc):
    x, y = np.array([[0.5, -1.0, 2.0]]), np.array([[1.5], [-2.5]])
    for args in ((mjnp.asarray(x), y), (x, mjnp.asarray(y)), (mjnp.asarray(x), 2.0)):
        out = ufunc(*args)
        assert isinstance(out, Array)
        assert_matches(out, ufunc(*(np.asarray(a) for a in args)))


@pytest.mark.parametrize(
    ("ufunc", "method"),
    [
        (np.add, "reduce"),
        (np.multiply, "reduce"),
        (np.maximum, "reduce"),
        (np.minimum, "reduce"),
        (np.logical_and, "reduce"),
        (np.logical_or, "reduce"),
        (np.add, "accumulate"),
        (np.multiply, "accumulate"),
        (np.add, "outer"),
        (np.multiply, "outer"),
    ],
)
@pytest.mark.parametrize("axis", [0, 1, None])
def test_ufunc_methods(ufunc, method, axis):
    x = np.array([[1.0, 2.0, 0.5], [3.0, 0.0, -1.0]])
    if method == "outer":
        args, kwargs = (x, x[0]), {}
    else:
        if axis is None and method == "accumulate":
            pytest.skip("NumPy's accumulate needs an axis")
        args, kwargs = (x,), {"axis": axis}
    expected = getattr(ufunc, method)(*args, **kwargs)
    out = getattr(ufunc, method)(*(mjnp.asarray(a) for a in args), **kwargs)
    assert isinstance(out, Array)
    assert_matches(out, expected)


def test_ufunc_out_rebinds_the_mjnp_destination():
    x = mjnp.asarray([1.0, 2.0])
    dest = mjnp.zeros(2, dtype=mjnp.float32)
    result = np.add(x, 1.0, out=dest)
    assert result is dest
    assert_matches(dest, np.array([2.0, 3.0], np.float32))
    host = np.zeros(2)
    np.multiply(x, 3.0, out=host)
    np.testing.assert_array_equal(host, [3.0, 6.0])
    quotient, remainder = mjnp.zeros(2), mjnp.zeros(2)
    np.divmod(x, 1.5, out=(quotient, remainder))
    assert_matches(remainder, np.array([1.0, 0.5]))


def test_unknown_ufunc_and_function_raise_type_error():
    x = mjnp.asarray([1.0, 2.0])
    with pytest.raises(TypeError):
        np.frompyfunc(lambda a: a, 1, 1)(x)
    with pytest.raises(TypeError):
        np.add(x, 1.0, where=np.array([True, False]))
    # A NumPy function mjnp lacks: NumPy's own on a concrete array, TypeError on a traced one.
    np.testing.assert_array_equal(np.lib.stride_tricks.sliding_window_view(x, 2), [[1.0, 2.0]])
    with pytest.raises(TypeError):
        mjcore.jit(lambda v: np.lib.stride_tricks.sliding_window_view(v, 2))(x)


@pytest.mark.parametrize(
    ("fun", "make_args"),
    [
        (np.sum, lambda x: (x,)),
        (np.mean, lambda x: (x,)),
        (np.concatenate, lambda x: ([x, x],)),
        (np.stack, lambda x: ([x, x],)),
        (np.reshape, lambda x: (x, (3, 2))),
        (np.transpose, lambda x: (x,)),
        (np.where, lambda x: (x > 0, x, -x)),
        (np.clip, lambda x: (x, -1, 1)),
        (np.dot, lambda x: (x, x.T)),
        (np.isclose, lambda x: (x, x)),
        (np.linalg.norm, lambda x: (x,)),
        (np.fft.fft, lambda x: (x,)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_numpy_functions_dispatch_to_mjnp_on_traced_values(fun, make_args):
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -3.0]])
    want = fun(*make_args(x))
    out = mjcore.jit(lambda v: fun(*make_args(v)))(mjnp.asarray(x))
    assert isinstance(out, Array)
    assert_matches(out, want)
    # On concrete arrays NumPy's own function runs on the host values and returns NumPy's
    # result, as for a jax.Array (the rule in mjnp/_protocols.py).
    host = fun(*make_args(mjnp.asarray(x)))
    assert isinstance(host, np.ndarray | np.generic)
    np.testing.assert_array_equal(host, want)
    assert np.asarray(host).dtype == np.asarray(want).dtype


def test_scipy_minimize_with_value_and_grad():
    # SciPy's compiled L-BFGS-B needs ndarrays from np.atleast_1d & co. on mjnp gradients.
    scipy_optimize = pytest.importorskip("scipy.optimize")
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)

    def ours(v):
        return mjnp.sum((v - 1.5) ** 2) + mjnp.sum(mjnp.sin(v) * v[::-1])

    def theirs(v):
        return jax.numpy.sum((v - 1.5) ** 2) + jax.numpy.sum(jax.numpy.sin(v) * v[::-1])

    x0 = np.array([0.0, 0.5, -1.0])
    for method in ("L-BFGS-B", "BFGS", "CG"):
        got = scipy_optimize.minimize(mjcore.value_and_grad(ours), x0, jac=True, method=method)
        want = scipy_optimize.minimize(jax.value_and_grad(theirs), x0, jac=True, method=method)
        assert got.success and want.success
        np.testing.assert_allclose(got.x, want.x, rtol=1e-10, atol=1e-12)
        assert got.nit == want.nit


def test_numpy_calls_trace_under_jit_grad_and_vmap():
    x = np.array([0.3, -1.2, 2.0])

    def f(v):
        return np.sum(np.sin(v) * np.exp(v)) + np.max(np.concatenate([v, v]))

    expected = np.sum(np.sin(x) * np.exp(x)) + np.max(x)
    np.testing.assert_allclose(float(mjcore.jit(f)(x)), expected, rtol=1e-12)
    grad = mjcore.grad(f)(x)
    manual = np.cos(x) * np.exp(x) + np.sin(x) * np.exp(x) + (x == x.max())
    np.testing.assert_allclose(np.asarray(grad), manual, rtol=1e-12)
    batched = mjcore.vmap(lambda v: np.add.reduce(np.sin(v)))(np.stack([x, 2 * x]))
    np.testing.assert_allclose(np.asarray(batched), np.sin(np.stack([x, 2 * x])).sum(1))


def test_dlpack_round_trip():
    x = mjnp.asarray(np.arange(6.0).reshape(2, 3))
    assert x.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(x), np.asarray(x))
    y = mjnp.from_dlpack(np.arange(4, dtype=np.int32))
    assert isinstance(y, Array)
    assert_matches(y, np.arange(4, dtype=np.int32))
    with pytest.raises(TypeError):
        mjnp.from_dlpack([1, 2])
    with pytest.raises(ValueError, match="copy=False"):
        mjnp.from_dlpack(np.arange(2), copy=False)


@SETTINGS
@given(x=arrays(shape=shapes(max_dims=3)))
def test_pickle_round_trip(x):
    a = mjnp.asarray(x)
    b = pickle.loads(pickle.dumps(a))
    assert isinstance(b, Array)
    assert_matches(b, x)


@pytest.mark.parametrize(
    "x",
    [
        np.arange(2000.0),
        np.arange(24).reshape(2, 3, 4),
        np.array(3.5),
        np.array([], np.int8),
        np.array([1e-10, 1.0, np.nan, -np.inf], np.float32),
        np.array([1 + 2j, -0.5j]),
        np.array([True, False]),
    ],
)
def test_repr_and_str_match_numpy_under_printoptions(x):
    a = mjnp.asarray(x)
    assert repr(a) == repr(x)
    assert str(a) == str(x)
    with np.printoptions(precision=2, threshold=5, edgeitems=1, suppress=True):
        assert repr(a) == repr(x)
        assert str(a) == str(x)
    with mjnp.printoptions(precision=3, linewidth=40):
        assert repr(a) == repr(x)
