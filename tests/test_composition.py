"""The program x composition table (issue 19, STYLE): NumPy-style programs, each written once
against a NumPy namespace, run under eight modes with mjnp/mjcore and with jax.numpy/jax (x64)
as the oracle: eager, jit, grad, vmap, jit(grad), vmap(grad), jvp and vjp.

A program is `f(np, x) -> array` for a float64 input of shape (5, 4); the scalar loss the
gradient modes differentiate is `sum(f(x) * w)` with fixed weights `w`, so every output element
reaches the gradient with a different weight. vmap maps over three such inputs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
import mjnp

jax.config.update("jax_enable_x64", True)

SHAPE = (5, 4)
RTOL = 1e-10
ATOL = 1e-12


def _mlp(np: Any, x: Any) -> Any:
    w = np.linspace(-1.0, 1.0, 20).reshape(4, 5)
    return np.tanh(x @ w) @ w.T


def _softmax(np: Any, x: Any) -> Any:
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _logsumexp(np: Any, x: Any) -> Any:
    m = np.max(x, axis=0)
    return m + np.log(np.sum(np.exp(x - m), axis=0))


def _piecewise(np: Any, x: Any) -> Any:
    return np.where(x > 0, x**2, np.sin(x)) + np.clip(x, -0.5, 0.5)


def _slicing(np: Any, x: Any) -> Any:
    rows = np.array([0, 2, 4])
    return x[1:, ::2] * x[:-1, 1::2] + x[rows][:-1, :2].sum()


def _scans(np: Any, x: Any) -> Any:
    return np.cumsum(x, axis=1) - np.roll(x, 1, axis=0) + np.cumprod(1.0 + 0.1 * x, axis=0)


def _joining(np: Any, x: Any) -> Any:
    return np.concatenate([x, 2.0 * x], axis=1).T @ np.stack([x, x**2]).sum(0)


def _norms(np: Any, x: Any) -> Any:
    return np.linalg.norm(x, axis=1) / (1.0 + np.sqrt(np.sum(x * x)))


def _solve(np: Any, x: Any) -> Any:
    a = x.T @ x + np.eye(4)
    return np.linalg.solve(a, x[0])


def _polynomial(np: Any, x: Any) -> Any:
    return np.polyval(np.array([1.0, -2.0, 3.0, 0.5]), x)


def _trig(np: Any, x: Any) -> Any:
    return np.arctan2(np.sin(x), np.cos(x) + 2.0) * np.exp(-(x**2))


def _statistics(np: Any, x: Any) -> Any:
    return np.mean(x, axis=0) * np.var(x, axis=0) + np.max(x, axis=0) - np.std(x)


def _einsum(np: Any, x: Any) -> Any:
    return np.einsum("ij,kj->ik", x, x) + np.outer(x[0], x[1]).sum()


def _sort(np: Any, x: Any) -> Any:
    return np.sort(x, axis=1)[:, -2:] * np.arange(1.0, 3.0)


def _reshape(np: Any, x: Any) -> Any:
    return (x.reshape(2, 10) ** 2).T.reshape(-1)[::3] + np.squeeze(x[:1, :1])


def _minmax(np: Any, x: Any) -> Any:
    return np.maximum(x, 0.1) * np.minimum(x, 0.3) + np.abs(x) ** 1.5


def _special(np: Any, x: Any) -> Any:
    return np.logaddexp(x, 2.0 * x) + np.hypot(x, 1.0) + np.expm1(x) * np.log1p(x * x)


def _det(np: Any, x: Any) -> Any:
    return np.linalg.det(x[:4] + 3.0 * np.eye(4)) * np.trace(x[:4])


def _rnn(np: Any, x: Any) -> Any:
    w = np.linspace(-0.5, 0.5, 16).reshape(4, 4)
    h = np.zeros(4)
    for t in range(x.shape[0]):  # unrolled in Python: each mode sees five steps
        h = np.tanh(x[t] + h @ w)
    return h


PROGRAMS: dict[str, Callable[[Any, Any], Any]] = {
    f.__name__.lstrip("_"): f
    for f in (
        _mlp,
        _softmax,
        _logsumexp,
        _piecewise,
        _slicing,
        _scans,
        _joining,
        _norms,
        _solve,
        _polynomial,
        _trig,
        _statistics,
        _einsum,
        _sort,
        _reshape,
        _minmax,
        _special,
        _det,
        _rnn,
    )
}

MODES = ("eager", "jit", "grad", "vmap", "jit_grad", "vmap_grad", "jvp", "vjp")


def _inputs(seed: int) -> tuple[onp.ndarray, onp.ndarray, onp.ndarray]:
    rng = onp.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, SHAPE)
    xs = rng.uniform(-1.0, 1.0, (3, *SHAPE))
    tangent = rng.standard_normal(SHAPE)
    return x, xs, tangent


def _run(
    mode: str, program: Callable[[Any, Any], Any], lib: Any, t: Any, x: Any, xs: Any, tangent: Any
) -> Any:
    """The result of `mode` applied to `program` at the inputs of `_inputs`, with `lib` the
    NumPy namespace and `t` the transformation namespace (mjnp/mjcore or jax.numpy/jax)."""

    def f(v: Any) -> Any:
        return program(lib, v)

    def loss(v: Any) -> Any:
        out = f(v)
        w = lib.cos(lib.arange(out.size, dtype=lib.float64)).reshape(out.shape)
        return lib.sum(out * w)

    x_, xs_, tangent_ = lib.asarray(x), lib.asarray(xs), lib.asarray(tangent)
    if mode == "eager":
        return f(x_)
    if mode == "jit":
        return t.jit(f)(x_)
    if mode == "grad":
        return t.grad(loss)(x_)
    if mode == "vmap":
        return t.vmap(f)(xs_)
    if mode == "jit_grad":
        return t.jit(t.grad(loss))(x_)
    if mode == "vmap_grad":
        return t.vmap(t.grad(loss))(xs_)
    if mode == "jvp":
        return t.jvp(f, (x_,), (tangent_,))
    if mode == "vjp":
        out, pullback = t.vjp(f, x_)
        cotangent = lib.cos(lib.arange(out.size, dtype=lib.float64)).reshape(out.shape)
        return out, pullback(cotangent)
    raise AssertionError(mode)


@functools.cache
def _expected(name: str) -> dict[str, Any]:
    """JAX's results for `name` under every mode, computed by one jax.jit: one XLA compile per
    program, where JAX's eager mode would compile every operation of every mode on its own."""
    program = PROGRAMS[name]
    seed = sorted(PROGRAMS).index(name)
    every_mode = jax.jit(
        lambda *inputs: {mode: _run(mode, program, jnp, jax, *inputs) for mode in MODES}
    )
    return every_mode(*_inputs(seed))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_composition_matches_jax(name: str, mode: str) -> None:
    program = PROGRAMS[name]
    seed = sorted(PROGRAMS).index(name)
    got = _run(mode, program, mjnp, mjcore, *_inputs(seed))
    want = _expected(name)[mode]
    got_leaves = mjcore.tree_util.tree_leaves(got)
    want_leaves = jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves), (name, mode)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        g, w = onp.asarray(g), onp.asarray(w)
        assert g.shape == w.shape, (name, mode, g.shape, w.shape)
        assert g.dtype == w.dtype, (name, mode, g.dtype, w.dtype)
        onp.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=f"{name} under {mode}")


def test_table_size() -> None:
    """The issue asks for at least 15 programs under the eight modes."""
    assert len(PROGRAMS) >= 15 and len(MODES) == 8
