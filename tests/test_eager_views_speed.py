"""The cheaper eager paths of views, scalars, creation and `astype` (issue 18): each computes
what it computed before (NumPy's values, dtypes and shapes bit for bit, weak types as the general
path gives them), views still write through, nothing compiles for a new shape, errors and
warnings are as before, and jit/vmap/grad still agree."""

from __future__ import annotations

import warnings

import numpy as onp
import pytest

import mjcore
import mjnp as np
from mjcore import lax
from mjcore.array import array_from_numpy, wrap_host
from mjcore.core import ShapedArray
from mjcore.lax import host as host_rules
from mjnp import _views

RNG = onp.random.default_rng(7)
A2 = RNG.standard_normal((4, 6))


def _bits(x) -> tuple:
    a = onp.asarray(x)
    return a.dtype, a.shape, a.tobytes()


def _on_device(value: onp.ndarray, weak: bool = False):
    """An Array holding a device buffer (its host value a DLPack view), as `asarray` makes."""
    return array_from_numpy(onp.asarray(value), weak)


def _on_host(value: onp.ndarray):
    """An Array holding a host result (no device buffer), as eager NumPy paths make."""
    value = onp.array(value)
    return wrap_host(value, ShapedArray(value.shape, value.dtype, False))


# --- scalars: x[i, j], float(), int(), item(), tolist() --------------------------------------

SCALAR_DTYPES = ["float64", "float32", "int32", "int64", "bool", "complex128", "uint8"]


@pytest.mark.parametrize("dtype", SCALAR_DTYPES)
@pytest.mark.parametrize("make", [_on_device, _on_host], ids=["device", "host"])
def test_scalar_index_and_conversions_equal_numpy(dtype, make):
    value = (A2 * 10).astype(dtype)
    x = make(value)
    s = x[2, 3]
    assert isinstance(s, mjcore.Array) and s.aval.shape == () and not s.aval.weak_type
    assert _bits(s) == _bits(value[2, 3])
    assert not _views.is_view(s)  # one element: a scalar, not a view
    e = value[2, 3]
    assert s.item() == e.item() and type(s.item()) is type(e.item())
    assert s.tolist() == e.tolist() and type(s.tolist()) is type(e.tolist())
    assert bool(s) == bool(e)
    if dtype != "complex128":
        assert float(s) == float(e) and int(s) == int(e)
    assert complex(s) == complex(e)
    assert x[1].tolist() == value[1].tolist()
    assert x.item(7) == value.item(7)
    assert x[-1, -2].item() == value[-1, -2].item()


def test_scalar_of_a_weak_array_stays_weak_and_scalars_do_not_share_writes():
    w = _on_device(A2, weak=True)
    assert w[1, 2].aval.weak_type and w[1, 2].item() == A2[1, 2]
    a = np.asarray(A2.copy())
    s = a[1, 2]
    a[1, 2] = 99.0
    assert float(s) == A2[1, 2]  # a copy of the element, as NumPy's scalar
    v = a[1, 2, ...]  # a 0-d view (Ellipsis), as NumPy's
    assert _views.is_view(v)
    a[1, 2] = 5.0
    assert float(v) == 5.0


def test_conversions_of_a_donated_array_raise_as_before():
    x = np.asarray(A2[:1, :1]) + 1.0
    x.item(0)  # its host value read (held), then dropped by the donation
    mjcore.jit(lambda x: x * 3.0, donate_argnums=0)(x)
    assert x.is_deleted()
    for conv in (float, int, bool, complex, lambda x: x.item(), lambda x: x.tolist()):
        with pytest.raises(RuntimeError, match="deleted"):
            conv(x)


def test_scalar_index_compiles_nothing(compiles):
    x = np.asarray(RNG.standard_normal((5, 9, 3)))
    assert float(x[4, 8, 2]) == float(onp.asarray(x)[4, 8, 2])
    assert compiles[0] == 0


def test_conversions_of_non_scalars_raise_as_numpy():
    x = np.asarray(A2)
    with pytest.raises(TypeError):
        float(x)
    with pytest.raises(TypeError):
        int(x)
    with pytest.raises(ValueError):
        bool(x)
    with pytest.raises(IndexError):
        x[4, 0]


def test_scalar_index_under_transformations():
    x = np.asarray(A2)
    assert float(mjcore.jit(lambda x: x[2, 3])(x)) == A2[2, 3]
    assert onp.array_equal(onp.asarray(mjcore.vmap(lambda r: r[3])(x)), A2[:, 3])
    g = mjcore.grad(lambda x: x[2, 3] * 3.0)(x)
    expected = onp.zeros_like(A2)
    expected[2, 3] = 3.0
    assert onp.array_equal(onp.asarray(g), expected)


# --- x.reshape(...) ---------------------------------------------------------------------------

RESHAPES = [(-1,), (6, 4), ((6, 4),), ((2, -1, 3),), (24,), ((1, 24, 1),), ((-1, 1),)]


@pytest.mark.parametrize("shape", RESHAPES, ids=str)
@pytest.mark.parametrize("make", [_on_device, _on_host], ids=["device", "host"])
def test_reshape_method_equals_numpy_and_writes_through(shape, make, compiles):
    a = make(A2)
    r = a.reshape(*shape)
    assert _bits(r) == _bits(A2.reshape(*shape)) and not r.aval.weak_type
    assert _views.is_view(r)
    r[(0,) * r.ndim] = 123.0  # a write through the view reaches its base ...
    assert float(a[0, 0]) == 123.0
    a[3, 5] = -7.0  # ... and one to the base reaches the view
    assert onp.asarray(r).reshape(-1)[-1] == -7.0
    assert compiles[0] == 0


def test_reshape_method_of_a_weak_array_and_of_a_view():
    w = _on_device(A2, weak=True)
    r = w.reshape(-1)
    assert r.aval.weak_type and _bits(r) == _bits(A2.reshape(-1))
    a = np.asarray(A2.copy())
    v = a[1:]
    r = v.reshape(-1)  # a reshape of a view is a copy here (as before)
    assert not _views.is_view(r) and _bits(r) == _bits(A2[1:].reshape(-1))
    one = np.asarray(onp.ones((1, 1)))
    assert _bits(one.reshape(())) == _bits(onp.ones((1, 1)).reshape(()))


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [(((5, 5),), {}), ((7,), {}), ((-1, -1), {}), (((2, 3.0),), {}), ((-1,), {"order": "X"})],
    ids=str,
)
def test_reshape_method_errors_as_before(args, kwargs):
    x = np.asarray(A2)
    with pytest.raises((ValueError, TypeError)) as fast:
        x.reshape(*args, **kwargs)
    with pytest.raises(type(fast.value)) as general:
        _views._reshape(x, *args, **kwargs)  # the general path: mjnp's error
    assert str(fast.value) == str(general.value)


def test_reshape_method_other_orders_and_copies_take_the_general_path():
    a = np.asarray(A2.copy())
    f = a.reshape(6, 4, order="F")
    assert _bits(f) == _bits(A2.reshape(6, 4, order="F")) and not _views.is_view(f)
    c = a.reshape(-1, copy=True)
    assert _bits(c) == _bits(A2.reshape(-1)) and not _views.is_view(c)
    lst = a.reshape([6, 4])
    assert _bits(lst) == _bits(A2.reshape([6, 4]))


def test_reshape_method_under_transformations():
    x = np.asarray(A2)
    assert onp.array_equal(onp.asarray(mjcore.jit(lambda x: x.reshape(-1))(x)), A2.reshape(-1))
    batched = mjcore.vmap(lambda r: r.reshape(2, 3))(x)
    assert onp.array_equal(onp.asarray(batched), A2.reshape(4, 2, 3))
    w = onp.arange(24.0)
    g = mjcore.grad(lambda x: np.sum(x.reshape(-1) * w))(x)
    assert onp.array_equal(onp.asarray(g), w.reshape(4, 6))


# --- x.astype(int) ----------------------------------------------------------------------------

_EDGES = [
    onp.nan,
    onp.inf,
    -onp.inf,
    2.0**31,
    -(2.0**31),
    -(2.0**31) - 1,
    2.0**31 - 0.5,
    -(2.0**31) - 0.5,
    2.0**63,
    -(2.0**63),
    2.0**62,
    1e300,
    -1e300,
    onp.nextafter(2.0**63, 0),
    0.0,
    -0.0,
    65504.0,
    -3.7,
    3.7,
]


def _cast_cases():
    cases = []
    for src in ("float64", "float32", "float16"):
        for dst in ("int32", "int64", "int16", "uint8", "uint32"):
            cases.append((src, dst))
    return cases


def _edge_arrays(src: str):
    with onp.errstate(over="ignore"):
        edges = onp.asarray(_EDGES).astype(src)
    yield "in_range", (A2 * 100).astype(src)
    yield "empty", onp.zeros((0, 3), src)
    for k, e in enumerate(edges):
        x = (RNG.standard_normal(37) * 1000).astype(src)
        x[k % 37] = e
        yield f"edge{k}", x


@pytest.mark.parametrize(("src", "dst"), _cast_cases(), ids=str)
def test_astype_to_int_equals_the_conversion_rule(src, dst, compiles):
    """Values as the conversion's host rule (XLA's saturation) gives them, and its warnings:
    NumPy's 'invalid value encountered in cast' exactly where the rule warns."""
    dt = onp.dtype(dst)
    for name, value in _edge_arrays(src):
        x = np.asarray(value)
        with warnings.catch_warnings(record=True) as expected_warnings:
            warnings.simplefilter("always")
            expected = host_rules.convert_element_type(value, new_dtype=dt, weak_type=False)
        with warnings.catch_warnings(record=True) as got_warnings:
            warnings.simplefilter("always")
            out = x.astype(dst)
        assert _bits(out) == _bits(expected), name
        assert [str(w.message) for w in got_warnings] == [
            str(w.message) for w in expected_warnings
        ], name
        with onp.errstate(invalid="raise"):
            raised = None
            try:
                host_rules.convert_element_type(value, new_dtype=dt, weak_type=False)
            except FloatingPointError as e:
                raised = str(e)
            if raised is None:
                assert _bits(x.astype(dst)) == _bits(expected), name
            else:
                with pytest.raises(FloatingPointError, match=raised):
                    x.astype(dst)
        with onp.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("error")
            assert _bits(x.astype(dst)) == _bits(expected), name
    assert compiles[0] == 0


def test_astype_to_int_strided_and_jit_agree():
    value = RNG.standard_normal((9, 13)) * 1e10
    value[2, 3] = onp.nan
    x = np.asarray(value)
    for dst in ("int32", "int64"):
        with onp.errstate(invalid="ignore"):
            eager = x.T.astype(dst)
            eager_rows = x[::2].astype(dst)
        with onp.errstate(invalid="ignore"):
            expected = host_rules.convert_element_type(
                value.T, new_dtype=onp.dtype(dst), weak_type=False
            )
        assert _bits(eager) == _bits(expected)
        jitted = mjcore.jit(lambda x, dst=dst: x.T.astype(dst))(x)
        assert _bits(jitted) == _bits(eager)  # XLA's saturation, as the rule's
        with onp.errstate(invalid="ignore"):
            batched = mjcore.vmap(lambda r, dst=dst: r.astype(dst))(x[::2])
        assert _bits(batched) == _bits(eager_rows)
        g = mjcore.grad(lambda x, dst=dst: np.sum(x.astype(dst) * 1.0 + x))(np.asarray(A2))
        assert onp.array_equal(onp.asarray(g), onp.ones_like(A2))


def test_astype_weak_and_same_dtype_as_before():
    w = _on_device(A2 * 10, weak=True)
    out = w.astype("int32")
    assert _bits(out) == _bits((A2 * 10).astype("int32")) and not out.aval.weak_type
    x = np.asarray(A2)
    assert _bits(x.astype("float64")) == _bits(A2)
    assert _bits(lax.convert_element_type(x, onp.int64)) == _bits(A2.astype("int64"))


# --- squeeze, swapaxes, expand_dims, ravel: NumPy's views of strong Arrays, any size ------------


@pytest.fixture
def general_path(monkeypatch):
    """A context switch: inside, mjnp's NumPy paths are off (the general path runs)."""
    from contextlib import contextmanager

    from mjnp import _host_numpy, _manipulation

    @contextmanager
    def general():
        with monkeypatch.context() as m:
            m.setattr(_host_numpy, "is_eager_host", lambda: False)
            m.setattr(_manipulation, "host_view_call", lambda *args: None)
            m.setattr(_manipulation, "host_view", lambda *args: None)
            yield

    return general


VIEW_CALLS = [
    ("squeeze", lambda m, x: m.squeeze(x)),
    ("squeeze_axis", lambda m, x: m.squeeze(x, 0)),
    ("squeeze_axes", lambda m, x: m.squeeze(x, (0, -1))),
    ("swapaxes", lambda m, x: m.swapaxes(x, 0, -1)),
    ("expand_dims", lambda m, x: m.expand_dims(x, 1)),
    ("expand_dims_neg", lambda m, x: m.expand_dims(x, -1)),
    ("expand_dims_tuple", lambda m, x: m.expand_dims(x, (0, 3))),
    ("ravel", lambda m, x: m.ravel(x)),
]
VIEW_INPUTS = [
    ("small", onp.arange(24.0).reshape(1, 4, 6, 1)),
    ("int32", onp.arange(12, dtype=onp.int32).reshape(1, 3, 4, 1)),
    ("large", RNG.standard_normal((1, 200, 300, 1))),  # past the 2^15 of computing functions
    ("empty", onp.zeros((1, 0, 3, 1), onp.float32)),
    ("strided", onp.arange(48.0).reshape(1, 8, 6, 1)[:, ::2, ::-1]),
]


@pytest.mark.parametrize(("name", "call"), VIEW_CALLS, ids=[c[0] for c in VIEW_CALLS])
@pytest.mark.parametrize(("kind", "value"), VIEW_INPUTS, ids=[c[0] for c in VIEW_INPUTS])
def test_views_equal_numpy_and_the_general_path(name, call, kind, value, general_path, compiles):
    x = np.asarray(value)
    if kind == "strided":
        x = np.asarray(onp.arange(48.0).reshape(1, 8, 6, 1))[:, ::2, ::-1]
    fast = call(np, x)
    assert compiles[0] == 0
    assert _bits(fast) == _bits(call(onp, value)) and not fast.aval.weak_type
    with general_path():
        general = call(np, x)
    assert fast.aval == general.aval and _bits(fast) == _bits(general)
    w = _on_device(value, weak=True)
    weak = call(np, w)
    with general_path():
        weak_general = call(np, w)
    assert weak.aval == weak_general.aval and _bits(weak) == _bits(weak_general)


VIEW_ERRORS = [
    ("squeeze_not_one", lambda m, x: m.squeeze(x, 1)),
    ("squeeze_out_of_range", lambda m, x: m.squeeze(x, 7)),
    ("swapaxes_out_of_range", lambda m, x: m.swapaxes(x, 0, 9)),
    ("expand_dims_out_of_range", lambda m, x: m.expand_dims(x, 9)),
    ("expand_dims_repeated", lambda m, x: m.expand_dims(x, (1, 1))),
]


@pytest.mark.parametrize(("name", "call"), VIEW_ERRORS, ids=[c[0] for c in VIEW_ERRORS])
def test_view_errors_are_the_general_paths(name, call, general_path):
    x = np.asarray(onp.zeros((1, 4, 6, 1)))
    with pytest.raises((ValueError, IndexError)) as fast:
        call(np, x)
    with general_path(), pytest.raises(type(fast.value)) as general:
        call(np, x)
    assert str(fast.value) == str(general.value) and "mjnp" in str(fast.value)


def test_view_methods_still_write_through():
    a = np.asarray(onp.zeros((1, 4, 6)))
    s = a.squeeze()
    s[1, 2] = 5.0
    assert float(a[0, 1, 2]) == 5.0
    t = a.swapaxes(1, 2)
    a[0, 3, 4] = 7.0
    assert float(t[0, 4, 3]) == 7.0
    r = a.ravel()
    r[0] = -1.0
    assert float(a[0, 0, 0]) == -1.0


@pytest.mark.parametrize(("name", "call"), VIEW_CALLS, ids=[c[0] for c in VIEW_CALLS])
def test_views_under_transformations_agree(name, call):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    value = onp.arange(24.0).reshape(1, 4, 6, 1)
    x = np.asarray(value)
    eager = call(np, x)
    assert _bits(mjcore.jit(lambda x: call(np, x))(x)) == _bits(eager)
    batched = mjcore.vmap(lambda x: call(np, x))(np.asarray(onp.stack([value, 2 * value])))
    assert _bits(batched) == _bits(onp.stack([onp.asarray(eager), 2 * onp.asarray(eager)]))
    w = onp.arange(onp.asarray(eager).size, dtype=float).reshape(onp.shape(eager))
    g = mjcore.grad(lambda x: np.sum(call(np, x) * w))(x)
    expected = jax.grad(lambda x: jnp.sum(call(jnp, x) * w))(value)
    assert _bits(g) == _bits(expected)


# --- creation -----------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 7, 100, 1 << 16, -3, True, onp.int64(5), 2.5], ids=repr)
def test_arange_of_one_number_equals_numpy_and_the_general_path(n, compiles, monkeypatch):
    from mjnp import _creation

    fast = np.arange(n)
    assert _bits(fast) == _bits(onp.arange(n)) and not fast.aval.weak_type
    assert compiles[0] == 0
    monkeypatch.setattr(_creation, "is_eager_host", lambda: False)
    general = np.arange(n)
    assert general.aval == fast.aval and _bits(general) == _bits(fast)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.zeros((4, 6)),
        lambda m: m.ones(5, dtype=m.int8),
        lambda m: m.empty((2, 0)),
        lambda m: m.full((3, 2), 2.5),
        lambda m: m.eye(4, 5, 1),
        lambda m: m.identity(3),
        lambda m: m.zeros_like(m.asarray(A2)),
        lambda m: m.full_like(m.asarray(A2), 7, dtype=m.int32),
    ],
)
def test_creation_results_equal_numpy(call, compiles):
    out = call(np)
    assert _bits(out) == _bits(call(onp))  # (the `empty` case has no elements)
    assert not out.aval.weak_type and compiles[0] == 0


@pytest.mark.parametrize("make", [_on_device, _on_host], ids=["device", "host"])
def test_copy_is_numpys_and_owns_its_value(make, general_path, compiles):
    a = make(A2)
    c = np.copy(a)
    assert _bits(c) == _bits(onp.copy(A2)) and not c.aval.weak_type and c is not a
    a[0, 0] = 42.0  # a write to the original leaves the copy alone
    assert float(c[0, 0]) == A2[0, 0]
    v = a[1:, ::2]
    assert _bits(np.copy(v)) == _bits(onp.asarray(v).copy()) and not _views.is_view(np.copy(v))
    w = _on_device(A2, weak=True)
    with general_path():
        general = np.copy(w)
    assert np.copy(w).aval == general.aval and _bits(np.copy(w)) == _bits(general)
    with pytest.raises(ValueError, match="order"):
        np.copy(a, order="X")
    assert compiles[0] == 0
    assert _bits(mjcore.jit(np.copy)(np.asarray(A2))) == _bits(A2)
    g = mjcore.grad(lambda x: np.sum(np.copy(x) * 2.0))(np.asarray(A2))
    assert _bits(g) == _bits(onp.full_like(A2, 2.0))
