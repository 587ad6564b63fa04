"""Eager `grad`'s own vjp (`api._eager_vjp_now`, issue 18): nothing traced, every
differentiated argument an Array, no aux. It runs the tape's backward pass in the call, without
`vjp`'s pytree handling, `Partial` and residuals; everything it returns must equal what the
general path (`vjp` of the partial function) returns, bit for bit, and JAX x64's within
rounding, errors included."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
import mjnp as np
from mjcore import api, eager_vjp

jax.config.update("jax_enable_x64", True)

_W = onp.random.RandomState(0).randn(100)
_X = onp.random.RandomState(1).randn(100)


def _general(monkeypatch):
    """Route eager grad through `vjp`, the general path."""
    monkeypatch.setattr(api, "_eager_vjp_now", lambda f, diff: api.vjp(f, *diff))


def _no_residual_path(monkeypatch):
    """Fail if eager grad collects residuals (`eager_vjp.vjp_flat`)."""

    def fail(*args, **kwargs):
        raise AssertionError("eager grad took vjp_flat")

    monkeypatch.setattr(eager_vjp, "vjp_flat", fail)


def _same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
        return
    assert type(a) is type(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    onp.testing.assert_array_equal(onp.asarray(a), onp.asarray(b))


PROGRAMS = {
    "eager_grad": (lambda xp: lambda w, x: xp.sum(xp.tanh(x * w) ** 2), 0),
    "both_args": (lambda xp: lambda w, x: xp.sum(xp.sin(w) * xp.exp(x / 4)), (0, 1)),
    "negative_argnums": (lambda xp: lambda w, x: xp.mean((w - x) ** 2), -1),
    "unused_arg": (lambda xp: lambda w, x: xp.sum(x**2), (0, 1)),
    "constant": (lambda xp: lambda w, x: 2.0, (0, 1)),
    "indexing": (lambda xp: lambda w, x: xp.dot(w[::2], x[1::2]) + w[3] * x[-1], 0),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_jax_and_the_general_path_bit_for_bit(name, monkeypatch):
    make, argnums = PROGRAMS[name]
    w, x = np.asarray(_W), np.asarray(_X)
    with monkeypatch.context() as m:
        _no_residual_path(m)
        value, g = mjcore.value_and_grad(make(np), argnums)(w, x)
        g_only = mjcore.grad(make(np), argnums)(w, x)
    _same(g, g_only)
    j_value, j_g = jax.value_and_grad(make(jnp), argnums)(_W, _X)
    onp.testing.assert_allclose(float(value), float(j_value), rtol=1e-13)
    pairs = zip(g, j_g, strict=True) if isinstance(g, tuple) else [(g, j_g)]
    for a, b in pairs:
        onp.testing.assert_allclose(onp.asarray(a), b, rtol=1e-12, atol=1e-14)
    _general(monkeypatch)
    value2, g2 = mjcore.value_and_grad(make(np), argnums)(w, x)
    assert type(value) is type(value2) and float(value) == float(value2)
    _same(g, g2)


def test_pytree_arguments_match_jax_and_the_general_path(monkeypatch):
    # a list and a dict of Arrays (grad_rnn's parameters): flattened, the same tape; a pytree
    # with a Python float leaf takes the general path
    def loss(xp):
        def f(params, d, c):
            h = xp.tanh(params[0] * d["x"] + params[1])
            return xp.sum(h * d["y"]) * c

        return f

    params = [np.asarray(_W[:5]), np.asarray(_X[:5])]
    d = {"x": np.asarray(_X[5:10]), "y": np.asarray(_W[5:10])}
    j_params, j_d = [_W[:5], _X[:5]], {"x": _X[5:10], "y": _W[5:10]}
    with monkeypatch.context() as m:
        _no_residual_path(m)
        value, (gp, gd) = mjcore.value_and_grad(loss(np), (0, 1))(params, d, 1.5)
    j_value, (j_gp, j_gd) = jax.value_and_grad(loss(jnp), (0, 1))(j_params, j_d, 1.5)
    assert type(gp) is list and type(gd) is dict and sorted(gd) == ["x", "y"]
    onp.testing.assert_allclose(float(value), float(j_value), rtol=1e-13)
    for a, b in zip([*gp, gd["x"], gd["y"]], [*j_gp, j_gd["x"], j_gd["y"]], strict=True):
        onp.testing.assert_allclose(onp.asarray(a), b, rtol=1e-12, atol=1e-14)
    mixed = mjcore.grad(lambda p: np.sum(p[0] * p[1]))([np.asarray(_W[:3]), 2.0])
    onp.testing.assert_allclose(onp.asarray(mixed[0]), 2.0 * onp.ones(3))
    assert float(mixed[1]) == float(onp.sum(_W[:3]))
    _general(monkeypatch)
    value2, (gp2, gd2) = mjcore.value_and_grad(loss(np), (0, 1))(params, d, 1.5)
    assert float(value) == float(value2)
    _same(tuple(gp), tuple(gp2))
    _same((gd["x"], gd["y"]), (gd2["x"], gd2["y"]))


def test_kwargs_float32_and_complex_holomorphic(monkeypatch):
    w32 = np.asarray(_W[:5].astype(onp.float32))
    f = lambda w, scale=1.0: np.sum(np.tanh(w * scale))  # noqa: E731
    wc = np.asarray(_W[:5] + 1j * _X[:5])
    fc = lambda z: np.sum(z * z)  # noqa: E731
    with monkeypatch.context() as m:
        _no_residual_path(m)
        g = mjcore.grad(f)(w32, scale=0.5)
        gc = mjcore.grad(fc, holomorphic=True)(wc)
    assert g.dtype == onp.float32
    onp.testing.assert_allclose(
        onp.asarray(g),
        jax.grad(lambda w: jnp.sum(jnp.tanh(w * 0.5)))(_W[:5].astype("f4")),
        rtol=1e-5,
        atol=1e-7,
    )
    onp.testing.assert_allclose(onp.asarray(gc), 2 * (_W[:5] + 1j * _X[:5]), rtol=1e-14)
    _general(monkeypatch)
    _same(g, mjcore.grad(f)(w32, scale=0.5))
    _same(gc, mjcore.grad(fc, holomorphic=True)(wc))


BAD = {
    "tuple_output": lambda w: (np.sum(w), np.sum(w)),
    "list_output": lambda w: [np.sum(w)],
    "vector_output": lambda w: w * 2,
    "int_output": lambda w: np.sum(w).astype(int),
    "string_output": lambda w: "sum",
    "none_output": lambda w: None,
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_errors_are_the_general_paths(name, monkeypatch):
    w = np.asarray(_W[:4])
    with pytest.raises(TypeError) as fast:
        mjcore.grad(BAD[name])(w)
    _general(monkeypatch)
    with pytest.raises(TypeError) as general:
        mjcore.grad(BAD[name])(w)
    assert str(fast.value) == str(general.value)


def test_in_place_fill_falls_back_to_tracing():
    def f(w):
        out = np.zeros(3)
        out[1] = np.sum(w**2)
        return np.sum(out * 2.0)

    g = mjcore.grad(f)(np.asarray(_W[:4]))
    onp.testing.assert_allclose(onp.asarray(g), 4 * _W[:4], rtol=1e-14)


def test_outer_transformations_take_the_general_path(monkeypatch):
    # under jit, vmap, or grad of grad nothing is eager: the general path, JAX's values
    _no_residual_path(monkeypatch)
    f = lambda w: np.sum(np.tanh(w) ** 3)  # noqa: E731
    jf = lambda w: jnp.sum(jnp.tanh(w) ** 3)  # noqa: E731
    w = np.asarray(_W[:6])
    onp.testing.assert_allclose(
        onp.asarray(mjcore.jit(mjcore.grad(f))(w)), jax.grad(jf)(_W[:6]), rtol=1e-12
    )
    gg = mjcore.grad(lambda w: np.sum(mjcore.grad(f)(w)))(w)
    onp.testing.assert_allclose(
        onp.asarray(gg), jax.grad(lambda w: jnp.sum(jax.grad(jf)(w)))(_W[:6]), rtol=1e-12
    )
