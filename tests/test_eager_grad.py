"""Eager `grad` (mjcore.eager_vjp): the function's Python runs exactly once per call, op by
op, with a tape of linear equations for the backward pass; nothing is traced ahead of the call
and nothing is compiled beyond one executable per primitive. JAX (x64) is the oracle."""

from __future__ import annotations

import importlib
import re
import sys

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
import mjnp as np
from mjcore import core
from mjcore.backend import client

jax.config.update("jax_enable_x64", True)

CALLS = 10


def _data(seed: int, n: int = 5) -> onp.ndarray:
    return onp.random.default_rng(seed).normal(size=n)


def test_loop_matches_jax_on_every_call():
    def loss(w, x):
        return np.sum(np.tanh(x * w) ** 2) + 0.5 * np.dot(w, w)

    def jloss(w, x):
        return jnp.sum(jnp.tanh(x * w) ** 2) + 0.5 * jnp.dot(w, w)

    g = mjcore.grad(loss)
    for i in range(CALLS):
        w, x = _data(i), _data(100 + i)
        onp.testing.assert_allclose(
            onp.asarray(g(np.asarray(w), np.asarray(x))), jax.grad(jloss)(w, x), rtol=1e-12
        )


def test_argnums_pytrees_and_value_and_grad():
    def loss(params, x, scale):
        return scale * np.sum((x @ params["w"] + params["b"]) ** 2)

    def jloss(params, x, scale):
        return scale * jnp.sum((x @ params["w"] + params["b"]) ** 2)

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

    g = mjcore.grad(loss)
    x = _data(1)
    for i in range(CALLS):
        state["scale"] = np.asarray(_data(10 + i))
        onp.testing.assert_allclose(
            onp.asarray(g(np.asarray(x))), 2 * _data(10 + i) * x, rtol=1e-12
        )


def test_python_literals_that_change_every_call():
    def make_loss(c):
        return lambda x: np.sum(x * c)

    for i in range(CALLS):
        c = 1.0 + i / 7
        onp.testing.assert_allclose(
            onp.asarray(mjcore.grad(make_loss(c))(np.asarray(_data(0)))), onp.full(5, c)
        )


def test_python_runs_exactly_once_per_call_with_a_value_dependent_branch(capsys):
    log = []

    def loss(x):
        log.append("called")
        print("x is", x)
        if np.sum(x) > 0:  # needs the value: eager grad has it
            return np.sum(x**2)
        return np.sum(x**3)

    g = mjcore.grad(loss)
    vg = mjcore.value_and_grad(loss)
    signs = set()
    for i in range(CALLS):
        x = _data(i)
        signs.add(bool(x.sum() > 0))
        expected = 2 * x if x.sum() > 0 else 3 * x**2
        onp.testing.assert_allclose(onp.asarray(g(np.asarray(x))), expected, rtol=1e-12)
        value, grad = vg(np.asarray(x))
        onp.testing.assert_allclose(onp.asarray(grad), expected, rtol=1e-12)
        assert len(log) == 2 * (i + 1)
    assert signs == {True, False}  # both branches ran
    out = capsys.readouterr().out
    assert out.count("x is") == 2 * CALLS
    assert "JaxprTracer" not in out


def test_custom_rules_run_once_per_call():
    log = []

    @mjcore.custom_vjp
    def f(x):
        log.append("f")
        return np.sin(x)

    def f_fwd(x):
        log.append("fwd")
        return np.sin(x), np.cos(x)

    def f_bwd(cos_x, ct):
        log.append("bwd")
        return (ct * cos_x,)

    f.defvjp(f_fwd, f_bwd)

    @mjcore.custom_jvp
    def h(x):
        log.append("h")
        return np.exp(x)

    @h.defjvp
    def h_jvp(primals, tangents):
        log.append("h_jvp")
        (x,), (t,) = primals, tangents
        return np.exp(x), np.exp(x) * t

    def loss(x):
        log.append("loss")
        return np.sum(f(x) * h(x))

    g = mjcore.grad(loss)
    for i in range(CALLS):
        x = _data(i)
        log.clear()
        got = g(np.asarray(x))
        expected = onp.cos(x) * onp.exp(x) + onp.sin(x) * onp.exp(x)
        onp.testing.assert_allclose(onp.asarray(got), expected, rtol=1e-12)
        assert sorted(log) == ["bwd", "fwd", "h_jvp", "loss"]


def test_control_flow_jit_and_nested_grad_inside_eager_grad_match_jax():
    def loss(w):
        y = mjcore.jit(lambda a: np.sin(a) * a)(w)
        y = mjcore.cond(np.sum(w) > 0, lambda a: a * 2.0, lambda a: np.exp(a), y)
        c, ys = mjcore.scan(lambda c, a: (c * a + 1.0, c), 1.0, y)
        k = mjcore.fori_loop(0, 3, lambda i, v: v * 0.9 + np.sum(w), 0.0)
        return c + np.sum(ys**2) + k

    def jloss(w):
        y = jax.jit(lambda a: jnp.sin(a) * a)(w)
        y = jax.lax.cond(jnp.sum(w) > 0, lambda a: a * 2.0, lambda a: jnp.exp(a), y)
        c, ys = jax.lax.scan(lambda c, a: (c * a + 1.0, c), 1.0, y)
        k = jax.lax.fori_loop(0, 3, lambda i, v: v * 0.9 + jnp.sum(w), 0.0)
        return c + jnp.sum(ys**2) + k

    for i in range(3):
        w = _data(i) * 0.5
        onp.testing.assert_allclose(
            onp.asarray(mjcore.grad(loss)(np.asarray(w))), jax.grad(jloss)(w), rtol=1e-10
        )
        hv = mjcore.grad(lambda v: np.sum(mjcore.grad(lambda u: np.sum(np.sin(u) ** 3))(v)))
        jhv = jax.grad(lambda v: jnp.sum(jax.grad(lambda u: jnp.sum(jnp.sin(u) ** 3))(v)))
        onp.testing.assert_allclose(onp.asarray(hv(np.asarray(w))), jhv(w), rtol=1e-12)


def test_vjp_is_reusable_and_has_aux_gives_concrete_values():
    x = _data(3)
    out, f_vjp, aux = mjcore.vjp(lambda a: (np.sin(a) * a, np.sum(a)), np.asarray(x), has_aux=True)
    jout, j_vjp = jax.vjp(lambda a: jnp.sin(a) * a, x)
    onp.testing.assert_allclose(onp.asarray(out), jout, rtol=1e-12)
    assert type(aux) is type(np.asarray(1.0))
    for ct in (onp.ones(5), _data(4)):
        (got,) = f_vjp(np.asarray(ct))
        onp.testing.assert_allclose(onp.asarray(got), j_vjp(ct)[0], rtol=1e-12)


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


def test_python_float_arguments_and_numpy_constants():
    c = _data(7)

    def loss(w, scale):
        return scale * np.sum(np.sin(w * c) ** 2)

    def jloss(w, scale):
        return scale * jnp.sum(jnp.sin(w * c) ** 2)

    vg = mjcore.value_and_grad(loss, argnums=(0, 1))
    for i in range(CALLS):
        w, scale = _data(i), 0.5 + i
        value, (g_w, g_scale) = vg(np.asarray(w), scale)
        j_value, (j_w, j_scale) = jax.value_and_grad(jloss, argnums=(0, 1))(w, scale)
        onp.testing.assert_allclose(float(value), float(j_value), rtol=1e-12)
        onp.testing.assert_allclose(onp.asarray(g_w), j_w, rtol=1e-12)
        onp.testing.assert_allclose(float(g_scale), float(j_scale), rtol=1e-12)


def test_a_donated_argument_gives_the_eager_error():
    g = mjcore.grad(lambda w, x: np.sum(np.tanh(x * w) ** 2))
    x = np.asarray(_data(1))
    for i in range(CALLS):
        g(np.asarray(_data(i)), x)
    w = np.asarray(_data(2))
    mjcore.jit(lambda a: a * 2, donate_argnums=0)(w)
    with pytest.raises(RuntimeError, match="Array has been deleted.*donated"):
        g(w, x)


def test_integer_first_argument_is_rejected_on_every_call():
    g = mjcore.grad(lambda n, x: np.sum(x * n))
    for _ in range(CALLS):
        with pytest.raises(TypeError, match="requires real- or complex-valued inputs.*int64"):
            g(np.asarray([1, 2]), np.asarray(_data(0, 2)))


# Ops of distinct mjnp calls in `_branchy_loss`: a program fusing two calls has two of them.
_MARKERS = ("dot_general", "tanh", "sine", "exponential", "cosine")


def _branchy_loss(w, x):
    h = np.tanh(x @ w)
    total = np.sum(h**2)
    for i in range(3):  # a Python branch on values; the data take both sides every call
        if h[i, 0] > 0:
            total = total + np.sum(np.sin(h[i]))
        else:
            total = total + np.sum(np.exp(h[i]))
    return total


def test_compiles_stop_after_the_first_call_and_each_covers_one_call():
    texts: list[str] = []
    client.compile_hooks.append(texts.append)
    try:
        g = mjcore.grad(_branchy_loss)
        rng = onp.random.default_rng(0)
        x = onp.asarray(rng.normal(size=(6, 4)))
        counts = []
        for _ in range(20):
            w = rng.normal(size=(4, 3))
            w[:, 0] = [1.0, -1.0, 0.5, -0.5]
            x[:3, :] = [[2.0, 0.0, 0.0, 0.0], [-2.0, 0.0, 0.0, 0.0], [2.0, 0.1, 0.0, 0.0]]
            got = g(np.asarray(w), np.asarray(x))
            counts.append(len(texts))
            jw = jax.grad(_jax_branchy_loss)(w, x)
            onp.testing.assert_allclose(onp.asarray(got), jw, rtol=1e-10)
    finally:
        client.compile_hooks.remove(texts.append)
    assert counts[1:] == [counts[0]] * 19, counts
    for text in texts:
        found = [m for m in _MARKERS if re.search(rf"stablehlo\.{m}\b", text)]
        assert len(found) <= 1, f"one executable covers several mjnp calls ({found}):\n{text}"


def _jax_branchy_loss(w, x):
    h = jnp.tanh(x @ w)
    total = jnp.sum(h**2)
    for i in range(3):
        if h[i, 0] > 0:
            total = total + jnp.sum(jnp.sin(h[i]))
        else:
            total = total + jnp.sum(jnp.exp(h[i]))
    return total


def test_no_speculative_tracing_machinery_is_left():
    assert not hasattr(core._state, "speculating")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("mjcore.fused_grad")


@pytest.mark.parametrize("program", ["rnn", "em", "fluid"])
def test_the_benchmarks_autograd_style_programs_match_autograd(program):
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    from benchmarks import eager_programs as ep

    if program == "rnn":
        params, onehot = ep.rnn_data()
        want = autograd.grad(lambda p: ep.rnn_loss(anp, p, onehot))(params)
        got = mjcore.grad(lambda p: ep.rnn_loss(np, p, np.asarray(onehot)))(
            [np.asarray(p) for p in params]
        )
    elif program == "em":
        params, x = ep.gmm_data()
        want = ep.gmm_fit(autograd.grad, anp, params, x)
        got = ep.gmm_fit(mjcore.grad, np, [np.asarray(p) for p in params], np.asarray(x))
    else:
        velocity, smoke, target = ep.fluid_data()
        want = [autograd.grad(lambda v: ep.fluid_loss(anp, v, smoke, target))(velocity)]
        s, t = np.asarray(smoke), np.asarray(target)
        got = [mjcore.grad(lambda v: ep.fluid_loss(np, v, s, t))(np.asarray(velocity))]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert onp.asarray(g).dtype == onp.float64
        onp.testing.assert_allclose(onp.asarray(g), w, rtol=1e-9, atol=1e-12)


def _tanh_loss(N, w, x):
    return N.sum(N.tanh(x * w) ** 2) + N.sum(N.dot(N.reshape(w, (2, 3)), N.ones(3)))


def test_recording_finds_no_top_trace_and_matches_jax(monkeypatch):
    # Under eager grad every bind has no tracer or only the top interpreter's tracers (the
    # primal half of a jvp rule, its tangent half, the user's ops on tracked values), so
    # `core.bind` never needs `find_top_trace`; results are JAX's.
    calls = []
    original = core.find_top_trace
    monkeypatch.setattr(core, "find_top_trace", lambda xs: calls.append(1) or original(xs))
    w, x = _data(1, 6), _data(2, 6)
    for _ in range(3):
        got = mjcore.value_and_grad(lambda w: _tanh_loss(np, w, np.asarray(x)))(np.asarray(w))
        want = jax.value_and_grad(lambda w: _tanh_loss(jnp, w, x))(w)
        onp.testing.assert_allclose(onp.asarray(got[0]), want[0], rtol=1e-12)
        onp.testing.assert_allclose(onp.asarray(got[1]), want[1], rtol=1e-12)
    assert calls == []


def test_tangent_abstract_eval_cache_is_bounded_and_refills_correctly(monkeypatch):
    from mjcore import eager_vjp

    # sinh has no direct rule (`Primitive.eager_vjp_rule`): its jvp rule's tangent equations
    # go through the cache.
    monkeypatch.setattr(eager_vjp, "_AVALS_OUT_SIZE", 4)
    monkeypatch.setattr(eager_vjp, "_AVALS_OUT", {})
    for n in range(1, 12):
        w, x = _data(n, n), _data(n + 1, n)
        got = mjcore.grad(lambda w, x: np.sum(np.sinh(w * x) * w))(np.asarray(w), np.asarray(x))
        want = jax.grad(lambda w, x: jnp.sum(jnp.sinh(w * x) * w))(w, x)
        onp.testing.assert_allclose(onp.asarray(got), want, rtol=1e-12)
        assert len(eager_vjp._AVALS_OUT) <= 4


# --- direct vjp rules (`Primitive.eager_vjp_rule`) ------------------------------------------


def _direct_rule_program(xp, w, b, x, v):
    """Every primitive with a direct rule, the differentiated values on either side, with
    broadcasting, fan-out and both operands of a product differentiated."""
    h = xp.tanh(xp.concatenate([x, w @ v]) @ b[:, :3] - xp.max(b, axis=1)[:, None][:3, 0])
    z = xp.exp(-h) / (1.0 + w[0, :3] ** 2) + xp.log(1.5 + xp.sin(h) * xp.cos(h[::-1]))
    rolled = xp.roll(xp.reshape(w, (-1,)), 2, 0)[:3] - xp.min(w)
    idx = onp.array([2, 0, 1, 2])
    return xp.sum(z * rolled) + xp.sum(-(z[idx] ** 3)) + xp.sum((w * w) @ v) * (v[0] / b[0, 0])


def _direct_rule_inputs():
    rng = onp.random.default_rng(7)
    w, b = rng.normal(size=(3, 4)), rng.normal(size=(6, 5))
    x, v = rng.normal(size=3), rng.normal(size=4)
    return w, b, x, v


def test_direct_vjp_rules_match_the_jvp_and_transpose_route_and_jax(monkeypatch):
    # The same gradients, to the bit, with every direct rule switched off (each primitive's
    # jvp rule linearized and transposed), and JAX's within rounding.
    args = _direct_rule_inputs()
    argnums = (0, 1, 2, 3)

    def direct():
        got = mjcore.grad(lambda *a: _direct_rule_program(np, *a), argnums)(
            *[np.asarray(a) for a in args]
        )
        return [onp.asarray(g) for g in got]

    with_rules = direct()
    want = jax.jit(jax.grad(lambda *a: _direct_rule_program(jnp, *a), argnums))(*args)
    for g, w in zip(with_rules, want, strict=True):
        onp.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
    ruled = [p for p in _lax_primitives() if p.eager_vjp_rule is not None]
    names = {p.name for p in ruled}
    assert {"add", "sub", "mul", "div", "dot_general", "tanh", "exp", "log", "sin", "cos"} <= names
    assert {"reduce_max", "reduce_min", "integer_pow", "gather", "roll", "concatenate"} <= names
    for p in ruled:
        monkeypatch.setattr(p, "eager_vjp_rule", None)
    without = direct()
    for g, w in zip(with_rules, without, strict=True):
        onp.testing.assert_array_equal(g, w)


def _lax_primitives():
    import importlib
    import pkgutil

    from mjcore import lax
    from mjcore.core import Primitive

    prims = {}
    for info in pkgutil.iter_modules(lax.__path__):
        module = importlib.import_module(f"mjcore.lax.{info.name}")
        for value in vars(module).values():
            if isinstance(value, Primitive):
                prims[value.name] = value
    return list(prims.values())


def test_direct_vjp_rules_under_a_jitted_f_vjp_and_second_order():
    # The residuals of direct entries (primals and outputs) are replaced by jit's tracers, and
    # grad of grad differentiates the direct rules themselves.
    args = _direct_rule_inputs()
    f = lambda *a: _direct_rule_program(np, *a)  # noqa: E731
    jf = lambda *a: _direct_rule_program(jnp, *a)  # noqa: E731
    out, f_vjp = mjcore.vjp(f, *[np.asarray(a) for a in args])
    got = mjcore.jit(f_vjp)(np.asarray(1.0))
    want = jax.jit(lambda *a: jax.vjp(jf, *a)[1](1.0))(*args)
    for g, w in zip(got, want, strict=True):
        onp.testing.assert_allclose(onp.asarray(g), w, rtol=1e-12, atol=1e-14)
    w0 = args[0]
    g2 = mjcore.grad(lambda w: np.sum(mjcore.grad(f)(w, *map(np.asarray, args[1:])) ** 2))
    j2 = jax.jit(jax.grad(lambda w: jnp.sum(jax.grad(jf)(w, *args[1:]) ** 2)))
    onp.testing.assert_allclose(onp.asarray(g2(np.asarray(w0))), j2(w0), rtol=1e-10, atol=1e-12)


def test_cotangent_sums_on_the_host_match_jax_without_binding_add_any(monkeypatch):
    """A value used many times gets its cotangents summed by NumPy on the host (no add_any
    bound); the gradient equals JAX's, and inf + -inf cotangents give NaN without a warning of
    their own, as JAX's."""
    import warnings

    from mjcore.lax.base import add_any_p

    def loss(xp, w):
        a = xp.sin(w)
        return xp.sum(a * a + a * 3.0 + xp.exp(a) - a / 2.0 + a[::-1] * w)

    bound = []
    real_bind = core.bind
    monkeypatch.setattr(core, "bind", lambda p, a, k: bound.append(p) or real_bind(p, a, k))
    for seed in range(2):
        w = _data(seed, 7)
        got = mjcore.grad(lambda v: loss(np, v))(np.asarray(w))
        want = jax.grad(lambda v: loss(jnp, v))(w)
        onp.testing.assert_allclose(onp.asarray(got), want, rtol=1e-12)
    assert add_any_p not in bound
    monkeypatch.undo()
    # 0-d cotangents: NumPy's sum of two 0-d arrays is a scalar; the gradient stays an array
    g = mjcore.grad(lambda s: s * s + np.sin(s) + s)(np.asarray(0.5))
    assert type(onp.asarray(g)) is onp.ndarray and g.shape == ()
    onp.testing.assert_allclose(onp.asarray(g), 2 * 0.5 + onp.cos(0.5) + 1, rtol=1e-14)

    def infs(xp, w):  # cotangents inf and -inf of one value
        return xp.sum(w * 1e308 * 10.0 - w * 1e308 * 10.0)

    w = onp.ones(3)
    # The forward pass warns as NumPy's does (overflow, then inf - inf); the backward pass's
    # inf + -inf cotangent sum adds no warning of its own.
    with warnings.catch_warnings(record=True) as got_warnings:
        warnings.simplefilter("always")
        got = mjcore.grad(lambda v: infs(np, v))(np.asarray(w))
    with warnings.catch_warnings(record=True) as numpy_warnings:
        warnings.simplefilter("always")
        infs(onp, w)
    assert {str(x.message) for x in got_warnings} == {str(x.message) for x in numpy_warnings}
    onp.testing.assert_array_equal(onp.asarray(got), jax.grad(lambda v: infs(jnp, v))(w))


# --- library functions on the tape (`eager_fusion`'s traced bodies) -------------------------


def _library_program(xp, w, b, x):
    """Fused mjnp functions on differentiated values: one-equation bodies (tanh, multiply),
    composed ones (logaddexp, mean), keyword variants (sum/max over an axis with keepdims),
    Python ints and floats beside arrays, a non-differentiated operand on either side, NumPy
    arrays (int and float) beside differentiated values."""
    h = xp.tanh(x * w + b)
    m = xp.max(h, axis=1, keepdims=True)
    z = h - m + xp.log(xp.sum(xp.exp(h - m), axis=1, keepdims=True))
    y = 1 - z * 2.5 + xp.logaddexp(z, w) / 3
    y = (onp.arange(4) - y) * onp.linspace(0.5, 1.0, 4) + xp.subtract(y, onp.ones((3, 1), int))
    return xp.mean(y**2) + xp.sum(xp.square(xp.sin(w)), axis=0)[1] - xp.mean(2 * b)


def _library_inputs():
    rng = onp.random.default_rng(11)
    return rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=(3, 4))


def test_library_functions_on_the_tape_replay_their_traced_bodies(monkeypatch):
    # A fused mjnp function applied to a differentiated value binds its traced body's
    # primitives on the tape, without running its Python (promotion, axis checks): the
    # gradients are those of its Python run op by op to the bit, and JAX's within rounding.
    from mjcore import eager_fusion

    args = _library_inputs()
    argnums = (0, 1)

    def grads():
        got = mjcore.grad(lambda *a: _library_program(np, *a), argnums)(
            *[np.asarray(a) for a in args]
        )
        return [onp.asarray(g) for g in got]

    replayed = grads()
    # (a second call: each function's cache of bodies is cleared when full, which the first
    # call may reach midway after other tests filled it)
    grads()
    want = jax.jit(jax.grad(lambda *a: _library_program(jnp, *a), argnums))(*args)
    for g, w in zip(replayed, want, strict=True):
        onp.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
    # the bodies are traced: a second call runs none of the functions' own code
    bodies = ("_elementwise.py", "_reductions.py")
    calls = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.endswith(bodies):
            calls.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        grads()
    finally:
        sys.setprofile(None)
    assert calls == []
    # no tape front: each function's Python runs op by op on the tracers
    monkeypatch.setattr(eager_fusion, "_TAPE_TRACE", type(None))
    op_by_op = grads()
    for g, w in zip(replayed, op_by_op, strict=True):
        onp.testing.assert_array_equal(g, w)


def test_library_functions_on_the_tape_under_second_order_and_jit():
    # grad of grad: the inner tape's tracers are the outer tape's values (another trace's
    # tracers as primals: the front steps aside); f_vjp under jit reads jit's tracers.
    args = _library_inputs()
    f = lambda w, b: _library_program(np, w, b, np.asarray(args[2]))  # noqa: E731
    jf = lambda w, b: _library_program(jnp, w, b, args[2])  # noqa: E731
    g2 = mjcore.grad(lambda w: np.sum(mjcore.grad(f)(w, np.asarray(args[1])) ** 2))
    j2 = jax.jit(jax.grad(lambda w: jnp.sum(jax.grad(jf)(w, args[1]) ** 2)))
    onp.testing.assert_allclose(onp.asarray(g2(np.asarray(args[0]))), j2(args[0]), rtol=1e-10)
    out, f_vjp = mjcore.vjp(f, np.asarray(args[0]), np.asarray(args[1]))
    got = mjcore.jit(f_vjp)(np.asarray(1.0))
    want = jax.jit(lambda a, b: jax.vjp(jf, a, b)[1](1.0))(args[0], args[1])
    for g, w in zip(got, want, strict=True):
        onp.testing.assert_allclose(onp.asarray(g), w, rtol=1e-12, atol=1e-14)


def test_index_arrays_on_every_axis_under_eager_grad_match_jax_and_numpy():
    # `f[rows, cols]` with known index arrays (negative ones, a 2-d batch, NumPy and mjnp
    # index arrays, repeated entries): one gather on the tape, NumPy's values, JAX's
    # gradients; an out-of-bounds index is NumPy's IndexError under grad too.
    rng = onp.random.default_rng(5)
    f0 = rng.normal(size=(4, 5))
    rows = onp.array([[0, -1, 3], [2, 2, -4]])
    cols = onp.array([[4, 0, -5], [1, 1, 3]], onp.int32)

    def loss(xp, f, r, c):
        g = f[r, c]
        return xp.sum(g * g) + xp.sum(xp.sin(f)[r[0], c[1]])

    for r, c in ((rows, cols), (np.asarray(rows), np.asarray(cols))):
        got = mjcore.value_and_grad(lambda f, r=r, c=c: loss(np, f, r, c))(np.asarray(f0))
        want = jax.value_and_grad(lambda f: loss(jnp, f, rows, cols))(f0)
        onp.testing.assert_allclose(onp.asarray(got[0]), want[0], rtol=1e-13)
        onp.testing.assert_allclose(onp.asarray(got[1]), want[1], rtol=1e-13)
    onp.testing.assert_array_equal(onp.asarray(np.asarray(f0)[rows, cols]), f0[rows, cols])
    bad = onp.array([0, 5])
    with pytest.raises(IndexError, match="out of bounds"):
        mjcore.grad(lambda f: np.sum(f[onp.array([0, 1]), bad]))(np.asarray(f0))
    with pytest.raises(IndexError, match="out of bounds"):
        mjcore.grad(lambda f: np.sum(f[onp.array([-5, 1]), onp.array([0, 1])]))(np.asarray(f0))
