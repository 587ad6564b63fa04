"""Reverse mode: linearize, vjp, grad, value_and_grad, the Jacobian family and jit under them,
against JAX (x64); residual counts; error messages; check_grads."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
import mjnp as np
from mjcore import grad, jit, jvp, linearize, make_jaxpr, value_and_grad, vjp, vmap
from mjcore.test_util import check_grads

jax.config.update("jax_enable_x64", True)


def _rand(*shape, seed=0):
    return onp.random.default_rng(seed).standard_normal(shape)


def _close(a, b, rtol=1e-12):
    for x, y in zip(mjcore.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        onp.testing.assert_allclose(onp.asarray(x), onp.asarray(y), rtol=rtol, atol=1e-12)


# --- Autodidax Part 4 -----------------------------------------------------------------------


def test_linearize_of_sin():
    y, sin_lin = linearize(np.sin, 3.0)
    assert float(y) == pytest.approx(onp.sin(3.0), rel=1e-15)
    assert float(sin_lin(1.0)) == pytest.approx(onp.cos(3.0), rel=1e-15)


def test_vjp_of_sin():
    y, f_vjp = vjp(np.sin, 3.0)
    (ct,) = f_vjp(1.0)
    assert float(y) == pytest.approx(onp.sin(3.0))
    assert float(ct) == pytest.approx(onp.cos(3.0), rel=1e-15)


def test_grad_of_nested_calls():
    def f(x):
        y = np.sin(x) * 2.0
        z = -y + x
        return z

    assert float(grad(f)(3.0)) == pytest.approx(2.979984993200891, rel=1e-14)
    assert float(grad(grad(f))(3.0)) == pytest.approx(0.2822400161197344, rel=1e-13)

    def g(x):
        return jit(f)(x) * jit(lambda a: np.cos(a) * 3.0)(x)

    expected = jax.grad(lambda x: (-jnp.sin(x) * 2.0 + x) * jnp.cos(x) * 3.0)(3.0)
    assert float(grad(g)(3.0)) == pytest.approx(float(expected), rel=1e-13)


def test_linearized_jaxpr_holds_only_tangent_work():
    _, f_lin = linearize(lambda x: np.sin(x) * 2.0, 3.0)
    jaxpr = make_jaxpr(f_lin)(1.0)
    names = [e.primitive.name for e in jaxpr.eqns]
    assert "sin" not in names and "cos" not in names  # primal work is done, cos(3) a residual
    assert names == ["mul", "mul"]


# --- against JAX ----------------------------------------------------------------------------


def _loss_mj(params, x, y):
    h = np.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"]
    return np.mean((out - y) ** 2) + 0.01 * np.sum(params["w1"] ** 2)


def _loss_jax(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"]
    return jnp.mean((out - y) ** 2) + 0.01 * jnp.sum(params["w1"] ** 2)


PARAMS = {"w1": _rand(4, 5), "b1": _rand(5, seed=1), "w2": _rand(5, 2, seed=2)}
X, Y = _rand(8, 4, seed=3), _rand(8, 2, seed=4)


@pytest.mark.parametrize("wrap", ["plain", "jit(grad)", "grad(jit)", "jit(grad(jit))"])
def test_grad_of_pytree_mlp_against_jax(wrap):
    g = {
        "plain": grad(_loss_mj),
        "jit(grad)": jit(grad(_loss_mj)),
        "grad(jit)": grad(jit(_loss_mj)),
        "jit(grad(jit))": jit(grad(jit(_loss_mj))),
    }[wrap]
    _close(g(PARAMS, X, Y), jax.grad(_loss_jax)(PARAMS, X, Y))


def test_value_and_grad_argnums_and_has_aux():
    def f(a, b, c):
        return np.sum(a * b + np.sin(c)), {"aux": a * 2}

    def f_jax(a, b, c):
        return jnp.sum(a * b + jnp.sin(c)), {"aux": a * 2}

    args = (_rand(3), _rand(3, seed=1), _rand(3, seed=2))
    (v, aux), (ga, gc) = value_and_grad(f, argnums=(0, 2), has_aux=True)(*args)
    (v2, aux2), (ga2, gc2) = jax.value_and_grad(f_jax, argnums=(0, 2), has_aux=True)(*args)
    _close((v, aux, ga, gc), (v2, aux2, ga2, gc2))
    g, aux3 = grad(f, argnums=1, has_aux=True)(*args)
    _close(g, jax.grad(f_jax, argnums=1, has_aux=True)(*args)[0])


def test_vjp_multiple_outputs_and_pytrees():
    def f(p):
        return {"a": np.sin(p[0]) * p[1], "b": p[1] ** 2}

    def f_jax(p):
        return {"a": jnp.sin(p[0]) * p[1], "b": p[1] ** 2}

    p = (_rand(3), _rand(3, seed=1))
    out, f_vjp = vjp(f, p)
    out2, f_vjp2 = jax.vjp(f_jax, p)
    ct = {"a": _rand(3, seed=5), "b": _rand(3, seed=6)}
    _close((out, f_vjp(ct)), (out2, f_vjp2(ct)))


@pytest.mark.parametrize("jac", ["jacfwd", "jacrev", "hessian"])
def test_jacobians_against_jax(jac):
    def f(x):
        return np.sin(x) * np.sum(x**2)

    def f_jax(x):
        return jnp.sin(x) * jnp.sum(x**2)

    x = _rand(4)
    if jac == "hessian":
        _close(
            mjcore.hessian(lambda v: np.sum(f(v)))(x), jax.hessian(lambda v: jnp.sum(f_jax(v)))(x)
        )
    else:
        _close(getattr(mjcore, jac)(f)(x), getattr(jax, jac)(f_jax)(x))


def test_jacrev_of_jacfwd_and_vmap_of_grad():
    def f(x):
        return np.exp(x) * x[::-1]

    def f_jax(x):
        return jnp.exp(x) * x[::-1]

    x = _rand(3)
    _close(mjcore.jacrev(mjcore.jacfwd(f))(x), jax.jacrev(jax.jacfwd(f_jax))(x))
    xs = _rand(5, 3)
    g = vmap(grad(lambda v: np.sum(f(v))))
    _close(g(xs), jax.vmap(jax.grad(lambda v: jnp.sum(f_jax(v))))(xs))


def test_grad_of_grad_of_jit():
    f = jit(lambda x: np.sin(x) * x**3)
    expected = jax.grad(jax.grad(lambda x: jnp.sin(x) * x**3))(1.3)
    assert float(grad(grad(f))(1.3)) == pytest.approx(float(expected), rel=1e-12)


def test_jvp_of_grad_and_linearize_of_jit():
    f = jit(lambda x: np.cos(x) * x)
    _, t = jvp(grad(f), (0.7,), (1.0,))
    expected = jax.jvp(jax.grad(lambda x: jnp.cos(x) * x), (0.7,), (1.0,))[1]
    assert float(t) == pytest.approx(float(expected), rel=1e-12)
    y, f_lin = linearize(f, 0.7)
    assert float(f_lin(2.0)) == pytest.approx(2 * float(jax.grad(lambda x: jnp.cos(x) * x)(0.7)))


# --- residuals ------------------------------------------------------------------------------


def test_grad_of_jit_keeps_known_and_unknown_parts_separate():
    f = jit(lambda x: np.sum(np.sin(x) * 3.0))
    jaxpr = make_jaxpr(grad(f))(onp.ones(4))
    calls = [e for e in jaxpr.eqns if e.primitive.name == "pjit"]
    assert len(calls) == 2  # the known (forward) call and the transposed (backward) call
    backward = calls[1].params["jaxpr"].jaxpr
    # The backward pass needs cos(x) only: one residual, no recomputation of sin.
    assert len(backward.invars) == 2  # residual + output cotangent
    assert "sin" not in [e.primitive.name for e in backward.eqns]


def test_residual_that_is_an_input_is_forwarded_not_returned():
    f = jit(lambda x: x * x * 3.0)
    jaxpr = make_jaxpr(grad(f))(2.0)
    known = jaxpr.eqns[0].params["jaxpr"].jaxpr
    assert len(known.outs) == 1  # only the primal output; x itself is forwarded


def test_linearize_residual_count_of_mlp_step():
    def step(w):
        return np.sum(np.tanh(X @ w) ** 2)

    _, f_lin = linearize(step, _rand(4, 2))
    jaxpr = make_jaxpr(f_lin)(onp.ones((4, 2)))
    # Residuals hoisted as constvars: X and the tanh-derivative factor; nothing duplicated.
    assert len(jaxpr.consts) <= 3


# --- errors ---------------------------------------------------------------------------------


def test_grad_of_non_scalar_output():
    with pytest.raises(TypeError, match="scalar-output.*shape \\(3,\\).*vjp or jacrev"):
        grad(np.sin)(onp.ones(3))


def test_grad_of_integer_input():
    with pytest.raises(TypeError, match="floating dtype.*int64"):
        grad(lambda x: x * 2)(3)


def test_grad_of_non_array_output():
    with pytest.raises(TypeError, match="arrays or Python scalars|scalar array"):
        grad(lambda x: "nope")(1.0)


def test_argnums_out_of_range():
    with pytest.raises(TypeError, match="argnums"):
        grad(lambda x: x, argnums=2)(1.0)


def test_missing_transpose_rule_is_named():
    p = mjcore.Primitive("my_double")
    p.def_abstract_eval(lambda x: x)
    p.def_impl(lambda x: x * 2)
    p.def_jvp(lambda primals, tangents: (p.bind(*primals), p.bind(*tangents)))
    p.def_lowering(mjcore.lower_fun(lambda x: x * 2.0))
    assert float(jvp(p.bind, (1.0,), (1.0,))[1]) == 2.0
    with pytest.raises(mjcore.MissingRuleError, match="my_double.*transpose"):
        grad(p.bind)(1.0)


# --- check_grads ----------------------------------------------------------------------------


def test_check_grads_accepts_correct_and_rejects_wrong_derivatives():
    check_grads(lambda x, y: np.sin(x) * np.exp(y), (_rand(3), _rand(3, seed=1)), order=2)

    @mjcore.custom_jvp
    def wrong(x):
        return np.sin(x)

    @wrong.defjvp
    def _wrong_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return np.sin(x), 2.0 * np.cos(x) * t  # off by a factor of two

    with pytest.raises(AssertionError, match="check_grads"):
        check_grads(wrong, (_rand(3),), order=1, modes=("fwd",))
