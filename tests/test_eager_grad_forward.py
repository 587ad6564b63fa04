"""Eager grad's forward fast paths (issue 18): a fused function's body run by its host rules
straight onto the tape (`VJPTrace.apply_host`), `x[basic]` and `x[rows, cols]` of a tracer
(`mjcore.eager_getitem`), and `ndarray op tracer` through NumPy's protocol.

Each path must record what the general path records: the gradients equal the general path's
bit for bit (the same NumPy operations) and JAX x64's within rounding, and under outer
transformations (grad of grad, jvp/vmap of grad, grad under jit) the fast paths step aside."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
import mjnp as np
from mjcore import eager_fusion, eager_getitem, eager_vjp, views

jax.config.update("jax_enable_x64", True)

_W = onp.random.default_rng(0).normal(size=(4, 5))

# basic indexes of a (4, 5) array
BASIC = [
    2,
    -1,
    (1,),
    slice(1, 3),
    slice(None, None, 2),
    slice(None, None, -1),
    slice(3, 0, -2),
    (slice(None), 1),
    (Ellipsis, -2),
    (None, slice(None), slice(None)),
    (1, None, slice(1, 4)),
    (slice(1, 3), slice(0, 5, 2)),
    (1, 2),
    (Ellipsis, 1, 2),
    Ellipsis,
    slice(None),
    (slice(-3, None), None, Ellipsis),
]


def _no_getitem_fast_path(monkeypatch):
    monkeypatch.setattr(views, "getitem_on_tape", lambda x, idx, general: None)


def _entries(f, w):
    """The tape `f`'s eager vjp records: (primitive name, params, input and output types)."""
    captured = []
    original = eager_vjp.backward

    def spy(tape, *rest, **kw):
        captured.append(
            [
                (
                    getattr(prim, "name", "vjp" if prim is eager_vjp._VJP else "jaxpr"),
                    params if prim is not eager_vjp._VJP else (params[0], params[3]),
                    [x.aval if type(x) is eager_vjp.LinVar else None for x in ins],
                    [v.aval for v in outs],
                )
                for prim, ins, params, outs in tape
            ]
        )
        return original(tape, *rest, **kw)

    eager_vjp.backward = spy
    try:
        mjcore.grad(f)(w)
    finally:
        eager_vjp.backward = original
    return captured[0]


@pytest.mark.parametrize("idx", BASIC, ids=repr)
def test_basic_index_of_a_tracer_records_the_general_paths_entries(idx, monkeypatch):
    w = np.asarray(_W)

    def f(x):
        y = (x * 1.5)[idx]
        return np.sum(np.sin(y) * y)

    def jf(x):
        y = (x * 1.5)[idx]
        return jnp.sum(jnp.sin(y) * y)

    fast = _entries(f, w)
    g_fast = onp.asarray(mjcore.grad(f)(w))
    value = onp.asarray(mjcore.value_and_grad(f)(w)[0])
    onp.testing.assert_allclose(g_fast, jax.grad(jf)(_W), rtol=1e-13, atol=1e-15)
    _no_getitem_fast_path(monkeypatch)
    assert _entries(f, w) == fast
    onp.testing.assert_array_equal(g_fast, onp.asarray(mjcore.grad(f)(w)))
    onp.testing.assert_array_equal(value, onp.asarray(mjcore.value_and_grad(f)(w)[0]))


def test_basic_index_primal_is_numpys_view_value_and_type():
    seen = {}

    def f(x):
        y = x * 2.0
        seen["row"] = y[1]
        seen["col"] = y[:, 2]
        seen["elem"] = y[1, 2]
        seen["new"] = y[None, 1:3]
        return np.sum(y[1])

    mjcore.grad(f)(np.asarray(_W))
    ref = _W * 2.0
    for name, want in (
        ("row", ref[1]),
        ("col", ref[:, 2]),
        ("elem", ref[1, 2]),
        ("new", ref[None, 1:3]),
    ):
        got = seen[name]
        assert got.shape == want.shape and got.dtype == want.dtype
        onp.testing.assert_array_equal(onp.asarray(got.primal), want)


def test_basic_index_fast_path_is_taken(monkeypatch):
    calls = []
    original = eager_getitem._basic

    def spy(*args):
        out = original(*args)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(eager_getitem, "_basic", spy)
    mjcore.grad(lambda x: np.sum(x[1][:4] * x[:, 2]))(np.asarray(_W))
    assert calls == [True, True, True]


@pytest.mark.parametrize("idx", [4, -5, (0, 5), (slice(None), 7), (1, 2, 3)], ids=repr)
def test_basic_index_errors_are_the_general_paths(idx, monkeypatch):
    f = lambda x: np.sum(x[idx])  # noqa: E731
    with pytest.raises(IndexError) as fast:
        mjcore.grad(f)(np.asarray(_W))
    _no_getitem_fast_path(monkeypatch)
    with pytest.raises(IndexError) as general:
        mjcore.grad(f)(np.asarray(_W))
    assert str(fast.value) == str(general.value)


def test_a_write_through_a_view_of_a_tracer_reaches_its_base():
    # the fast path links the view to its base as the general path does
    def f(x):
        y = x * 1.0
        v = y[1:3]
        v *= 3.0
        return np.sum(y * y)

    def jf(x):
        y = x * 1.0
        y = y.at[1:3].multiply(3.0)
        return jnp.sum(y * y)

    onp.testing.assert_allclose(
        onp.asarray(mjcore.grad(f)(np.asarray(_W))), jax.grad(jf)(_W), rtol=1e-13
    )


def _point(xp, x, rows, cols):
    y = x * 1.5
    return xp.sum(xp.sin(y[rows, cols]) * y[rows[::-1], cols])


@pytest.mark.parametrize("kind", ["Array", "ndarray", "negative", "2-d"])
def test_point_gather_of_a_tracer_records_the_general_paths_entry(kind, monkeypatch):
    rng = onp.random.default_rng(1)
    rows, cols = rng.integers(0, 4, 12), rng.integers(0, 5, 12)
    if kind == "negative":
        rows, cols = rows - 4, cols - 5
    if kind == "2-d":
        rows, cols = rows.reshape(3, 4), cols.reshape(3, 4)
    r, c = (np.asarray(rows), np.asarray(cols)) if kind != "ndarray" else (rows, cols)
    f = lambda x: _point(np, x, r, c)  # noqa: E731
    w = np.asarray(_W)
    fast = _entries(f, w)
    assert "gather" in [e[0] for e in fast] or "vjp" in [e[0] for e in fast]
    g_fast = onp.asarray(mjcore.grad(f)(w))
    onp.testing.assert_allclose(
        g_fast, jax.grad(lambda x: _point(jnp, x, rows, cols))(_W), rtol=1e-13, atol=1e-15
    )
    _no_getitem_fast_path(monkeypatch)
    general = _entries(f, w)
    assert [e[0] for e in general] == [e[0] for e in fast]
    assert [e[2:] for e in general] == [e[2:] for e in fast]
    onp.testing.assert_array_equal(g_fast, onp.asarray(mjcore.grad(f)(w)))


@pytest.mark.parametrize(
    "rows, cols",
    [([0, 4], [0, 1]), ([0, -5], [0, 1]), ([0, 1], [0, 1, 2])],
    ids=["past the end", "before the start", "shapes differ"],
)
def test_point_gather_errors_are_the_general_paths(rows, cols, monkeypatch):
    r, c = np.asarray(rows), np.asarray(cols)
    f = lambda x: np.sum(x[r, c])  # noqa: E731
    with pytest.raises(IndexError) as fast:
        mjcore.grad(f)(np.asarray(_W))
    _no_getitem_fast_path(monkeypatch)
    with pytest.raises(IndexError) as general:
        mjcore.grad(f)(np.asarray(_W))
    assert str(fast.value) == str(general.value)


def _program(xp, x, c):
    """Indexing, ndarray op tracer, Python scalars, square (`mul(x, x)`) and keepdims bodies."""
    y = c - x[1:]  # an ndarray on the left (NumPy's protocol)
    z = 2.0 * y + 1.5 - y**2
    m = xp.max(z, axis=1, keepdims=True)
    s = m + xp.log(xp.sum(xp.exp(z - m), axis=1, keepdims=True))
    return xp.sum(s * s[::-1]) + xp.sum(xp.tanh(z[:, 2]) / (1.0 + z[0] ** 2)[2])


def test_program_matches_jax_and_the_op_by_op_path_bit_for_bit(monkeypatch):
    c = onp.random.default_rng(2).normal(size=(3, 5))
    f = lambda x: _program(np, x, c)  # noqa: E731
    w = np.asarray(_W)
    value, g = mjcore.value_and_grad(f)(w)
    j_value, j_g = jax.value_and_grad(lambda x: _program(jnp, x, c))(_W)
    onp.testing.assert_allclose(float(value), float(j_value), rtol=1e-13)
    onp.testing.assert_allclose(onp.asarray(g), j_g, rtol=1e-12, atol=1e-14)
    # every fast path off: each function's Python op by op, the general indexing
    monkeypatch.setattr(eager_fusion, "_TAPE_TRACE", type(None))
    _no_getitem_fast_path(monkeypatch)
    value2, g2 = mjcore.value_and_grad(f)(w)
    assert float(value) == float(value2)
    onp.testing.assert_array_equal(onp.asarray(g), onp.asarray(g2))


def test_apply_host_runs_the_bodies(monkeypatch):
    # the one-equation bodies (tanh, x * y, square's mul(x, x)) and the keepdims bodies'
    # equations are run by `apply_host`, not bound
    names = []
    original = eager_vjp.VJPTrace.apply_host

    def spy(self, prim, args, params, plan):
        names.append(prim.name)
        return original(self, prim, args, params, plan)

    monkeypatch.setattr(eager_vjp.VJPTrace, "apply_host", spy)

    def f(x):
        y = np.tanh(x) * x
        return np.sum(np.sum(y**2, axis=1, keepdims=True))

    mjcore.grad(f)(np.asarray(_W))
    assert names == ["tanh", "mul", "mul", "reduce_sum", "expand_dims", "reduce_sum"]


def test_ndarray_operand_is_copied_not_aliased():
    # the tape must hold the value the ndarray had: writing it later changes nothing
    c = onp.random.default_rng(3).normal(size=(4, 5))
    keep = c.copy()
    out, f_vjp = mjcore.vjp(lambda x: c * x - c, np.asarray(_W))
    c[...] = 0.0
    (g,) = f_vjp(np.ones((4, 5)))
    onp.testing.assert_array_equal(onp.asarray(g), keep)
    onp.testing.assert_array_equal(onp.asarray(out), keep * _W - keep)


def test_float32_with_python_scalars_keeps_float32(monkeypatch):
    w32 = _W.astype(onp.float32)
    f = lambda x: np.sum(np.tanh(2.5 * x - 1.0) * x)  # noqa: E731
    g = mjcore.grad(f)(np.asarray(w32))
    assert g.dtype == onp.float32
    j = jax.grad(lambda x: jnp.sum(jnp.tanh(2.5 * x - 1.0) * x))(w32)
    onp.testing.assert_allclose(onp.asarray(g), j, rtol=2e-6, atol=1e-6)
    monkeypatch.setattr(eager_fusion, "_TAPE_TRACE", type(None))
    onp.testing.assert_array_equal(onp.asarray(g), onp.asarray(mjcore.grad(f)(np.asarray(w32))))


def test_floating_point_warnings_on_the_fast_path_are_numpys():
    x = np.asarray(onp.array([-1.0, 2.0, 0.0]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mjcore.grad(lambda t: np.sum(np.log(t * 1.0)))(x)
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    with warnings.catch_warnings(record=True) as expected:
        warnings.simplefilter("always")
        onp.log(onp.array([-1.0, 2.0, 0.0]))
    for w in expected:
        assert str(w.message) in messages


def _second_order(xp, x):
    y = x * x
    return xp.sum(xp.tanh(y[1:, 2]) * y[0, :3] + (2.0 * y)[2, 1:4] ** 2)


def test_outer_transformations_step_aside():
    # the inner tape's tracers hold the outer's as primals, or jit/vmap tracers: the fast
    # paths decline and the general path runs; results are JAX's
    w = np.asarray(_W)
    f = lambda x: _second_order(np, x)  # noqa: E731
    jf = lambda x: _second_order(jnp, x)  # noqa: E731
    g2 = mjcore.grad(lambda x: np.sum(mjcore.grad(f)(x) ** 2))(w)
    j2 = jax.jit(jax.grad(lambda x: jnp.sum(jax.grad(jf)(x) ** 2)))(_W)
    onp.testing.assert_allclose(onp.asarray(g2), j2, rtol=1e-11, atol=1e-13)
    onp.testing.assert_allclose(
        onp.asarray(mjcore.jit(mjcore.grad(f))(w)),
        jax.jit(jax.grad(jf))(_W),
        rtol=1e-12,
        atol=1e-14,
    )
    ws = onp.stack([_W, 2 * _W])
    onp.testing.assert_allclose(
        onp.asarray(mjcore.vmap(mjcore.grad(f))(np.asarray(ws))),
        jax.jit(jax.vmap(jax.grad(jf)))(ws),
        rtol=1e-12,
        atol=1e-14,
    )
    t = onp.ones_like(_W)
    _, tan = mjcore.jvp(mjcore.grad(f), (w,), (np.asarray(t),))
    jtan = jax.jit(lambda x, v: jax.jvp(jax.grad(jf), (x,), (v,))[1])(_W, t)
    onp.testing.assert_allclose(onp.asarray(tan), jtan, rtol=1e-11, atol=1e-13)
    out, f_vjp = mjcore.vjp(f, w)
    (got,) = mjcore.jit(f_vjp)(np.asarray(1.0))
    onp.testing.assert_allclose(onp.asarray(got), jax.grad(jf)(_W), rtol=1e-12, atol=1e-14)


def test_indexing_a_constant_array_on_the_tape_is_numpys_view(monkeypatch):
    # `onehot[t]` inside a differentiated function: an Array is a constant there, and its
    # basic index is NumPy's view, linked to its base, as in eager code (not the general
    # path's bound slice and squeeze)
    c_host = onp.random.default_rng(4).normal(size=(4, 5))
    c = np.asarray(c_host)
    seen = {}

    def f(x):
        row = c[1]
        seen["row"], seen["cols"] = row, c[:, 1:3]
        return np.sum(x[2] * row) + np.sum(c[::2, None, 1] * x[0, :2])

    calls = []
    original = views._on_tape

    def spy():
        calls.append(original())
        return calls[-1]

    monkeypatch.setattr(views, "_on_tape", spy)
    g = mjcore.grad(f)(np.asarray(_W))
    assert calls and all(calls)
    assert views.is_view(seen["row"]) and views.is_view(seen["cols"])
    onp.testing.assert_array_equal(onp.asarray(seen["row"]), c_host[1])
    onp.testing.assert_array_equal(onp.asarray(seen["cols"]), c_host[:, 1:3])

    def jf(x):
        return jnp.sum(x[2] * c_host[1]) + jnp.sum(c_host[::2, None, 1] * x[0, :2])

    onp.testing.assert_allclose(onp.asarray(g), jax.grad(jf)(_W), rtol=1e-13, atol=1e-15)
    monkeypatch.setattr(views, "_on_tape", lambda: False)  # the general path
    onp.testing.assert_array_equal(onp.asarray(g), onp.asarray(mjcore.grad(f)(np.asarray(_W))))


def test_a_write_through_a_constant_view_on_the_tape_reaches_its_base():
    c = np.asarray(onp.zeros((3, 4)))

    def f(x):
        v = c[1:]
        v[...] = 2.0  # a constant written with a constant: allowed, as eagerly
        return np.sum(x * c[1])

    g = mjcore.grad(f)(np.asarray(onp.ones(4)))
    onp.testing.assert_array_equal(onp.asarray(c)[1:], onp.full((2, 4), 2.0))
    onp.testing.assert_array_equal(onp.asarray(g), onp.full(4, 2.0))


@pytest.mark.parametrize("dtype", [onp.float32, onp.float64])
def test_numpy_scalars_beside_a_tracer_are_strong_zero_d_arrays(dtype, monkeypatch):
    # `x - np.log(2 * np.pi)`: a NumPy scalar takes the tape front as a strong 0-d array,
    # as the function's own argument conversion makes it (NEP 50)
    w = np.asarray(_W.astype(dtype))

    def f(x):
        y = x - onp.log(2 * onp.pi)
        z = onp.float32(1.5) * y + onp.int64(3) * x
        seen.append((y.dtype, z.dtype))
        return np.sum(z * z)

    seen: list = []
    value, g = mjcore.value_and_grad(f)(w)
    monkeypatch.setattr(eager_fusion, "_TAPE_TRACE", type(None))  # each function's Python
    value2, g2 = mjcore.value_and_grad(f)(w)
    assert seen[0] == seen[1] == (onp.dtype(onp.float64), onp.dtype(onp.float64))
    assert g.dtype == g2.dtype == w.dtype
    assert float(value) == float(value2)
    onp.testing.assert_array_equal(onp.asarray(g), onp.asarray(g2))


def test_complex_holomorphic_program_matches_the_op_by_op_path(monkeypatch):
    z = (_W + 0.5j * _W[::-1]).astype(onp.complex128)

    def f(x):
        y = 1j * x - 2.0 + onp.complex128(0.5 - 1j) * x[1:2]
        return np.sum(np.exp(y) * y[:, 1:3].sum())

    def jf(x):
        y = 1j * x - 2.0 + onp.complex128(0.5 - 1j) * x[1:2]
        return jnp.sum(jnp.exp(y) * y[:, 1:3].sum())

    g = mjcore.grad(f, holomorphic=True)(np.asarray(z))
    onp.testing.assert_allclose(
        onp.asarray(g), jax.grad(jf, holomorphic=True)(z), rtol=1e-12, atol=1e-14
    )
    monkeypatch.setattr(eager_fusion, "_TAPE_TRACE", type(None))
    _no_getitem_fast_path(monkeypatch)
    g2 = mjcore.grad(f, holomorphic=True)(np.asarray(z))
    assert g.dtype == g2.dtype == onp.complex128
    onp.testing.assert_array_equal(onp.asarray(g), onp.asarray(g2))
