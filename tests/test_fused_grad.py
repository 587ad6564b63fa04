"""Eager `grad` of hot functions runs as one compiled executable (mjcore.fused_grad), with
the semantics of an eager call: Python runs every call, closed-over arrays are read afresh,
value-dependent functions fall back to eager evaluation. JAX (x64) is the oracle."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
import mjnp as np
from mjcore import fused_grad

jax.config.update("jax_enable_x64", True)

CALLS = 6  # enough to pass the tracing and compiling thresholds


def _data(seed: int, n: int = 5) -> onp.ndarray:
    return onp.random.default_rng(seed).normal(size=n)


def _assert_fused_since(before: int) -> None:
    assert fused_grad.fused_calls > before, "the hot loop never reached the compiled path"


def test_hot_loop_matches_jax_on_every_call_and_reaches_the_compiled_path():
    def loss(w, x):
        return np.sum(np.tanh(x * w) ** 2) + 0.5 * np.dot(w, w)

    def jloss(w, x):
        return jnp.sum(jnp.tanh(x * w) ** 2) + 0.5 * jnp.dot(w, w)

    before = fused_grad.fused_calls
    g = mjcore.grad(loss)
    for i in range(CALLS):
        w, x = _data(i), _data(100 + i)
        onp.testing.assert_allclose(
            onp.asarray(g(np.asarray(w), np.asarray(x))), jax.grad(jloss)(w, x), rtol=1e-12
        )
    _assert_fused_since(before)


def test_argnums_pytrees_and_value_and_grad():
    def loss(params, x, scale):
        return scale * np.sum((x @ params["w"] + params["b"]) ** 2)

    def jloss(params, x, scale):
        return scale * jnp.sum((x @ params["w"] + params["b"]) ** 2)

    before = fused_grad.fused_calls
    vg = mjcore.value_and_grad(loss, argnums=(0, 2))
    for i in range(CALLS):
        w, b, x = _data(i, 3), _data(50 + i, 2)[0], _data(99 + i, 6).reshape(2, 3)
        params = {"w": np.asarray(w), "b": np.asarray(b)}
        value, (g_params, g_scale) = vg(params, np.asarray(x), 1.5)
        j_value, (j_params, j_scale) = jax.value_and_grad(jloss, argnums=(0, 2))(
            {"w": w, "b": b}, x, 1.5
        )
        onp.testing.assert_allclose(float(value), float(j_value), rtol=1e-12)
        assert sorted(g_params) == ["b", "w"]
        onp.testing.assert_allclose(onp.asarray(g_params["w"]), j_params["w"], rtol=1e-12)
        onp.testing.assert_allclose(float(g_params["b"]), float(j_params["b"]), rtol=1e-12)
        onp.testing.assert_allclose(float(g_scale), float(j_scale), rtol=1e-12)
    _assert_fused_since(before)


def test_python_side_effects_run_on_every_call():
    log = []

    def loss(x):
        log.append("called")
        return np.sum(np.sin(x))

    g = mjcore.grad(loss)
    for i in range(CALLS):
        onp.testing.assert_allclose(onp.asarray(g(np.asarray(_data(i)))), onp.cos(_data(i)))
    assert len(log) == CALLS


def test_closed_over_arrays_are_read_afresh():
    state = {"scale": np.asarray(_data(0))}

    def loss(x):
        return np.sum(state["scale"] * x**2)

    before = fused_grad.fused_calls
    g = mjcore.grad(loss)
    x = _data(1)
    for i in range(CALLS):
        state["scale"] = np.asarray(_data(10 + i))
        onp.testing.assert_allclose(
            onp.asarray(g(np.asarray(x))), 2 * _data(10 + i) * x, rtol=1e-12
        )
    _assert_fused_since(before)


def test_python_literals_that_change_every_call_stop_the_tracing():
    def make_loss(c):
        return lambda x: np.sum(x * c)

    for i in range(3 * fused_grad._MAX_STRUCTURES):
        c = 1.0 + i / 7
        onp.testing.assert_allclose(
            onp.asarray(mjcore.grad(make_loss(c))(np.asarray(_data(0)))), onp.full(5, c)
        )
    stats = fused_grad._stats[make_loss(0.0).__code__]
    assert not stats.fusable and stats.structures == fused_grad._MAX_STRUCTURES + 1


def test_value_dependent_control_flow_falls_back_to_eager_once():
    log = []

    def loss(x):
        log.append("called")
        if np.sum(x) > 0:  # needs the value: the trace fails, the call runs eagerly
            return np.sum(x**2)
        return np.sum(x**3)

    g = mjcore.grad(loss)
    for i in range(CALLS):
        x = _data(i)
        expected = 2 * x if x.sum() > 0 else 3 * x**2
        onp.testing.assert_allclose(onp.asarray(g(np.asarray(x))), expected, rtol=1e-12)
    # One speculative trace ran the Python up to the `if` once more; never again after it.
    assert len(log) == CALLS + 1
    assert not fused_grad._stats[loss.__code__].fusable


def test_printing_a_value_shows_what_eager_shows(capsys):
    def loss(x):
        print("x is", x)
        return np.sum(x**2)

    g = mjcore.grad(loss)
    for i in range(CALLS):
        g(np.asarray(_data(i)))
    out = capsys.readouterr().out
    assert "JaxprTracer" not in out
    # print writes its arguments one by one: the speculative trace wrote the label once
    # before `x`'s repr failed; after that the function always runs eagerly.
    assert out.count("x is") == CALLS + 1


def test_errors_are_the_eager_errors():
    g = mjcore.grad(lambda x: x * 2.0)
    for _ in range(CALLS):
        with pytest.raises(TypeError, match="only defined for scalar-output functions"):
            g(np.asarray(_data(0)))


def test_integer_and_numpy_arguments_take_the_eager_path():
    def loss(x, n):
        return np.sum(x**n)

    g = mjcore.grad(loss)
    for i in range(CALLS):
        x = _data(i)
        onp.testing.assert_allclose(onp.asarray(g(np.asarray(x), 3)), 3 * x**2, rtol=1e-12)
        onp.testing.assert_allclose(onp.asarray(g(x, 2)), 2 * x, rtol=1e-12)


def test_grad_under_jit_and_vmap_is_not_affected():
    def loss(x):
        return np.sum(np.exp(x) * x)

    g = mjcore.grad(loss)
    xs = onp.stack([_data(i) for i in range(3)])
    for _ in range(CALLS):
        expected = onp.exp(xs) * (xs + 1)
        onp.testing.assert_allclose(
            onp.asarray(mjcore.vmap(g)(np.asarray(xs))), expected, rtol=1e-12
        )
        onp.testing.assert_allclose(
            onp.asarray(mjcore.jit(g)(np.asarray(xs[0]))), expected[0], rtol=1e-12
        )


def test_python_float_arguments_and_numpy_constants_reach_the_compiled_path():
    # Inputs that are not Arrays (a Python float argument, a closed-over NumPy array) cannot
    # go to the executable as buffers directly; the compiled call converts them.
    c = _data(7)

    def loss(w, scale):
        return scale * np.sum(np.sin(w * c) ** 2)

    def jloss(w, scale):
        return scale * jnp.sum(jnp.sin(w * c) ** 2)

    before = fused_grad.fused_calls
    vg = mjcore.value_and_grad(loss, argnums=(0, 1))
    for i in range(CALLS):
        w, scale = _data(i), 0.5 + i
        value, (g_w, g_scale) = vg(np.asarray(w), scale)
        j_value, (j_w, j_scale) = jax.value_and_grad(jloss, argnums=(0, 1))(w, scale)
        onp.testing.assert_allclose(float(value), float(j_value), rtol=1e-12)
        onp.testing.assert_allclose(onp.asarray(g_w), j_w, rtol=1e-12)
        onp.testing.assert_allclose(float(g_scale), float(j_scale), rtol=1e-12)
    _assert_fused_since(before)


def test_a_donated_argument_gives_the_eager_error_on_the_compiled_path():
    g = mjcore.grad(lambda w, x: np.sum(np.tanh(x * w) ** 2))
    x = np.asarray(_data(1))
    before = fused_grad.fused_calls
    for i in range(CALLS):
        g(np.asarray(_data(i)), x)
    _assert_fused_since(before)
    w = np.asarray(_data(2))
    mjcore.jit(lambda a: a * 2, donate_argnums=0)(w)
    with pytest.raises(RuntimeError, match="Array has been deleted.*donated"):
        g(w, x)


def test_integer_first_argument_is_rejected_on_every_call():
    g = mjcore.grad(lambda n, x: np.sum(x * n))
    for _ in range(CALLS):
        with pytest.raises(TypeError, match="requires real- or complex-valued inputs.*int64"):
            g(np.asarray([1, 2]), np.asarray(_data(0, 2)))


def test_one_eager_grad_call_traces_once():
    # The fast path of `grad(f)(array, ...)` and the general path share one call count, so
    # tracing starts at the documented call, not earlier.
    calls = []

    def loss(w):
        calls.append(1)
        return np.sum(w * w)

    g = mjcore.grad(loss)
    for i in range(fused_grad._TRACE_FROM_CALL - 1):
        g(np.asarray(_data(i)))
    stats = fused_grad._stats[loss.__code__]
    assert stats.calls == fused_grad._TRACE_FROM_CALL - 1
    assert len(calls) == fused_grad._TRACE_FROM_CALL - 1
