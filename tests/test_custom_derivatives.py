"""custom_jvp, custom_vjp and checkpoint under every composition we support, with JAX (x64)
as the oracle: values and derivatives, jaxprs (one equation under jit, residuals of checkpoint),
and the errors JAX raises."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
from mjcore import lax
from mjcore.ad import Zero
from mjcore.lax.transcendental import cos, exp, log1p, sin

jax.config.update("jax_enable_x64", True)


def _close(actual, expected, rtol=1e-12):
    for a, e in zip(
        mjcore.tree_util.tree_leaves(actual), jax.tree_util.tree_leaves(expected), strict=True
    ):
        onp.testing.assert_allclose(onp.asarray(a), onp.asarray(e), rtol=rtol, atol=1e-14)


def _names(jaxpr):
    return [e.primitive.name for e in jaxpr.eqns]


# --- the functions, in mjcore and in JAX ----------------------------------------------------


@mjcore.custom_jvp
def log1pexp(x):
    return log1p(exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    # d/dx log(1 + e^x) = 1 - 1 / (1 + e^x): finite for large x, unlike e^x / (1 + e^x).
    return log1pexp(x), lax.mul(x_dot, lax.sub(1.0, lax.div(1.0, lax.add(1.0, exp(x)))))


@jax.custom_jvp
def log1pexp_jax(x):
    return jnp.log1p(jnp.exp(x))


@log1pexp_jax.defjvp
def log1pexp_jax_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return log1pexp_jax(x), x_dot * (1.0 - 1.0 / (1.0 + jnp.exp(x)))


@mjcore.custom_vjp
def clip_gradient(lo, hi, x):
    return x


def _clip_fwd(lo, hi, x):
    return x, (lo, hi)


def _clip_bwd(res, g):
    lo, hi = res
    return (None, None, lax.max(lax.min(g, hi), lo))


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


@jax.custom_vjp
def clip_gradient_jax(lo, hi, x):
    return x


clip_gradient_jax.defvjp(
    lambda lo, hi, x: (x, (lo, hi)), lambda res, g: (None, None, jnp.clip(g, res[0], res[1]))
)


def clipped(x):
    return clip_gradient(-0.5, 0.5, lax.mul(sin(x), 3.0))


def clipped_jax(x):
    return clip_gradient_jax(-0.5, 0.5, jnp.sin(x) * 3.0)


# --- compositions: (api, f) -> transformed f, for mjcore and jax alike ----------------------

SCALAR = onp.array([-3.0, 0.5, 800.0])


def _total(api, y):
    return jnp.sum(y) if api is jax else lax.reduce_sum(y, (0,))


COMPOSITIONS = {
    "eval": lambda api, f: f,
    "jit": lambda api, f: api.jit(f),
    "grad": lambda api, f: api.grad(f),
    "jit(grad)": lambda api, f: api.jit(api.grad(f)),
    "grad(jit)": lambda api, f: api.grad(api.jit(f)),
    "vmap": lambda api, f: api.vmap(f),
    "vmap(grad)": lambda api, f: api.vmap(api.grad(f)),
    "jit(vmap(grad))": lambda api, f: api.jit(api.vmap(api.grad(f))),
    "vmap(jit(grad))": lambda api, f: api.vmap(api.jit(api.grad(f))),
    "grad(sum(vmap))": lambda api, f: api.grad(lambda x: _total(api, api.vmap(f)(x))),
    "grad(sum(vmap(jit)))": lambda api, f: api.grad(lambda x: _total(api, api.vmap(api.jit(f))(x))),
    "jacrev": lambda api, f: api.jacrev(api.vmap(f)),
    "grad(grad)": lambda api, f: api.grad(api.grad(f)),
    "jit(grad(grad))": lambda api, f: api.jit(api.grad(api.grad(f))),
    "vmap(grad(grad))": lambda api, f: api.vmap(api.grad(api.grad(f))),
    "jvp": lambda api, f: lambda x: api.jvp(f, (x,), (2.0,)),
    "jvp(jit)": lambda api, f: lambda x: api.jvp(api.jit(f), (x,), (2.0,)),
    "jit(jvp)": lambda api, f: api.jit(lambda x: api.jvp(f, (x,), (2.0,))),
    "vmap(jvp)": lambda api, f: api.vmap(lambda x: api.jvp(f, (x,), (2.0,))),
    "jvp(grad)": lambda api, f: lambda x: api.jvp(api.grad(f), (x,), (1.0,)),
    "jacfwd": lambda api, f: api.jacfwd(api.vmap(f)),
    "hessian": lambda api, f: api.hessian(f),
}
VECTOR_IN = {"vmap", "vmap(grad)", "jit(vmap(grad))", "vmap(jit(grad))", "grad(sum(vmap))"}
VECTOR_IN |= {"grad(sum(vmap(jit)))"}
VECTOR_IN |= {"jacrev", "vmap(grad(grad))", "vmap(jvp)", "jacfwd"}
FORWARD = {"jvp", "jvp(jit)", "jit(jvp)", "vmap(jvp)", "jvp(grad)", "jacfwd", "hessian"}
SECOND_ORDER = {"grad(grad)", "jit(grad(grad))", "vmap(grad(grad))", "jvp(grad)", "hessian"}


def _check_composition(name, f_mj, f_jax):
    """The composition `name` of f_mj against the same one of f_jax, at every test input."""
    # JAX's side as one jitted program, compiled once for all inputs (eager JAX compiles each op).
    g_mj, g_jax = COMPOSITIONS[name](mjcore, f_mj), jax.jit(COMPOSITIONS[name](jax, f_jax))
    for x in [SCALAR] if name in VECTOR_IN else list(SCALAR):
        _close(g_mj(x), g_jax(x))


@pytest.mark.parametrize("name", list(COMPOSITIONS))
def test_log1pexp_compositions_against_jax(name):
    _check_composition(name, log1pexp, log1pexp_jax)


def test_log1pexp_is_safe_where_the_naive_derivative_is_nan():
    def naive(x):
        return log1p(exp(x))

    assert onp.isnan(float(mjcore.grad(naive)(800.0)))
    assert float(mjcore.grad(log1pexp)(800.0)) == 1.0
    assert float(mjcore.jit(mjcore.grad(log1pexp))(800.0)) == 1.0


@pytest.mark.parametrize("name", [n for n in COMPOSITIONS if n not in FORWARD | SECOND_ORDER])
def test_clip_gradient_compositions_against_jax(name):
    _check_composition(name, clipped, clipped_jax)


def test_clip_gradient_clips():
    def scaled(k):
        return mjcore.grad(lambda x: lax.mul(clip_gradient(-0.5, 0.5, x), k))

    assert [float(scaled(k)(1.0)) for k in (3.0, 0.2, -2.0)] == [0.5, 0.2, -0.5]


@pytest.mark.parametrize(
    "run",
    [
        lambda f: mjcore.jvp(f, (0.3,), (1.0,)),
        lambda f: mjcore.jvp(mjcore.jit(f), (0.3,), (1.0,)),
        lambda f: mjcore.jit(lambda x: mjcore.jvp(f, (x,), (1.0,)))(0.3),
        lambda f: mjcore.jacfwd(f)(0.3),
        lambda f: mjcore.linearize(f, 0.3)[1](1.0),
    ],
    ids=["jvp", "jvp(jit)", "jit(jvp)", "jacfwd", "linearize-then-apply"],
)
def test_forward_mode_of_custom_vjp_raises(run):
    with pytest.raises(
        TypeError, match=r"can't apply forward-mode autodiff \(jvp\) to a custom_vjp"
    ):
        run(clipped)


# --- custom_jvp details ---------------------------------------------------------------------


def test_custom_jvp_stays_one_equation_under_jit_and_its_rule_is_traced_lazily():
    calls = []

    @mjcore.custom_jvp
    def f(x):
        return sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        calls.append(1)
        (x,), (x_dot,) = primals, tangents
        return f(x), lax.mul(lax.mul(cos(x), x_dot), 10.0)  # a rule that is visibly "custom"

    jaxpr = mjcore.make_jaxpr(f)(1.0)
    assert _names(jaxpr) == ["custom_jvp_call"]
    assert _names(jaxpr.eqns[0].params["call_jaxpr"]) == ["sin"]
    mjcore.typecheck_jaxpr(jaxpr.jaxpr)
    assert not calls  # staging does not trace the rule
    g = mjcore.jit(f)
    assert float(mjcore.grad(g)(1.0)) == pytest.approx(10 * onp.cos(1.0), rel=1e-14)
    assert len(calls) == 1
    mjcore.grad(g)(2.0)
    assert len(calls) == 1  # the jvp jaxpr of the jitted function is cached
    grad_jaxpr = mjcore.make_jaxpr(mjcore.grad(f))(1.0)
    assert "sin" not in _names(grad_jaxpr)[1:]  # the derivative comes from the rule
    mjcore.typecheck_jaxpr(grad_jaxpr.jaxpr)


def test_custom_jvp_linearize_goes_through_the_rule():
    x = onp.array([0.1, 50.0, 800.0])
    y, f_jvp = mjcore.linearize(mjcore.vmap(log1pexp), x)
    y_jax, f_jvp_jax = jax.linearize(jax.vmap(log1pexp_jax), x)
    _close(y, y_jax)
    _close(f_jvp(onp.ones(3)), f_jvp_jax(onp.ones(3)))


def test_custom_jvp_python_control_flow_with_concrete_values():
    @mjcore.custom_jvp
    def relu(x):
        return x if float(x) > 0 else lax.mul(x, 0.0)

    @relu.defjvp
    def relu_jvp(primals, tangents):
        (x,), (x_dot,) = primals, tangents
        return relu(x), (x_dot if float(x) > 0 else lax.mul(x_dot, 0.0))

    assert float(relu(2.0)) == 2.0 and float(relu(-2.0)) == 0.0
    assert float(mjcore.grad(relu)(2.0)) == 1.0 and float(mjcore.grad(relu)(-2.0)) == 0.0
    assert mjcore.jvp(relu, (3.0,), (2.0,))[1] == 2.0
    with pytest.raises(mjcore.ConcretizationTypeError):
        mjcore.jit(relu)(1.0)


def test_custom_jvp_symbolic_zeros():
    seen = []

    @mjcore.custom_jvp
    def f(x, y):
        return lax.mul(x, y)

    def f_jvp(primals, tangents):
        (x, y), (x_dot, y_dot) = primals, tangents
        seen.append((type(x_dot) is Zero, type(y_dot) is Zero))
        t = lax.mul(x_dot, y) if type(x_dot) is not Zero else Zero(mjcore.core.get_aval(x))
        return f(x, y), t

    f.defjvp(f_jvp, symbolic_zeros=True)
    assert float(mjcore.grad(f)(2.0, 3.0)) == 3.0
    assert float(mjcore.grad(mjcore.jit(f))(2.0, 3.0)) == 3.0
    assert seen == [(False, True), (False, True)]
    _, t = mjcore.jvp(lambda y: f(2.0, y), (3.0,), (1.0,))
    assert float(t) == 0.0


def test_custom_jvp_defjvps_against_jax():
    @mjcore.custom_jvp
    def f(x, y):
        return lax.mul(sin(x), y)

    f.defjvps(
        lambda x_dot, ans, x, y: lax.mul(lax.mul(cos(x), x_dot), y),
        lambda y_dot, ans, x, y: lax.mul(sin(x), y_dot),
    )

    @jax.custom_jvp
    def f_jax(x, y):
        return jnp.sin(x) * y

    f_jax.defjvps(
        lambda x_dot, ans, x, y: jnp.cos(x) * x_dot * y, lambda y_dot, ans, x, y: jnp.sin(x) * y_dot
    )
    _close(mjcore.grad(f, (0, 1))(0.7, 2.0), jax.grad(f_jax, (0, 1))(0.7, 2.0))
    _close(mjcore.jit(mjcore.grad(f, 1))(0.7, 2.0), jax.grad(f_jax, 1)(0.7, 2.0))


def test_custom_jvp_nondiff_argnums_function_and_array():
    def app(fn, scale, x):
        return lax.mul(fn(x), scale)

    def app_jvp(fn, scale, primals, tangents):
        (x,), (x_dot,) = primals, tangents
        return app_mj(fn, scale, x), lax.mul(lax.mul(x_dot, scale), 100.0)

    app_mj = mjcore.custom_jvp(app, nondiff_argnums=(0, 1))
    app_mj.defjvp(app_jvp)
    app_j = jax.custom_jvp(lambda fn, scale, x: fn(x) * scale, nondiff_argnums=(0, 1))
    app_j.defjvp(lambda fn, scale, p, t: (app_j(fn, scale, p[0]), t[0] * scale * 100.0))

    # `scale` is an array that is traced (by grad and jit) but not differentiated by the rule.
    def loss(s, x):
        return app_mj(sin, s, x)

    def loss_jax(s, x):
        return app_j(jnp.sin, s, x)

    expected = jax.grad(loss_jax, (0, 1))(2.0, 0.3)
    _close(mjcore.grad(loss, (0, 1))(2.0, 0.3), expected)
    _close(mjcore.jit(mjcore.grad(loss, (0, 1)))(2.0, 0.3), expected)
    s, x = onp.array([2.0, 3.0]), onp.array([0.3, 0.4])
    _close(mjcore.vmap(mjcore.grad(loss, 1))(s, x), jax.vmap(jax.grad(loss_jax, 1))(s, x))


def test_custom_jvp_pytrees_and_kwargs():
    @mjcore.custom_jvp
    def f(p, scale=2.0):
        return {"y": lax.mul(p["a"], p["b"]), "z": lax.mul(p["a"], scale)}

    @f.defjvp
    def f_jvp(primals, tangents):
        (p, scale), (t, t_scale) = primals, tangents
        out = f(p, scale)
        return out, {
            "y": lax.add(lax.mul(t["a"], p["b"]), lax.mul(p["a"], t["b"])),
            "z": lax.add(lax.mul(t["a"], scale), lax.mul(p["a"], t_scale)),
        }

    p = {"a": 1.5, "b": 4.0}
    out, t = mjcore.jvp(lambda p: f(p, scale=3.0), (p,), ({"a": 1.0, "b": 0.0},))
    assert (float(out["y"]), float(out["z"]), float(t["y"]), float(t["z"])) == (6, 4.5, 4, 3)
    g = mjcore.jit(mjcore.grad(lambda p: f(p)["y"]))(p)
    assert (float(g["a"]), float(g["b"])) == (4.0, 1.5)


def test_custom_jvp_errors():
    @mjcore.custom_jvp
    def f(x):
        return sin(x)

    with pytest.raises(AttributeError, match="No JVP defined for custom_jvp function f"):
        f(1.0)
    f.defjvp(lambda p, t: sin(p[0]))
    with pytest.raises(TypeError, match="must produce a pair"):
        mjcore.jvp(f, (1.0,), (1.0,))
    f.defjvp(lambda p, t: (sin(p[0]), (t[0], t[0])))
    with pytest.raises(TypeError, match="equal container"):
        mjcore.jvp(f, (1.0,), (1.0,))
    f.defjvp(lambda p, t: (sin(p[0]), lax.broadcast_to(t[0], (2,))))
    with pytest.raises(TypeError, match=r"Expected f64\[\] \(tangent type of f64\[\]\)"):
        mjcore.grad(f)(1.0)
    f.defjvp(lambda p, t: ((sin(p[0]), 1.0), (t[0], t[0])))
    with pytest.raises(TypeError, match="same pytree structure"):
        mjcore.grad(mjcore.jit(f))(1.0)  # jit runs f first, then the rule is checked against it
    with pytest.raises(TypeError, match="defjvps"):
        mjcore.custom_jvp(lambda n, x: x, nondiff_argnums=(0,)).defjvps(None)


def test_custom_jvp_closure_over_constant_array():
    w = onp.array([1.0, 2.0, 3.0])

    @mjcore.custom_jvp
    def f(x):
        return lax.mul(sin(x), w)  # w is hoisted into the staged equation's inputs

    f.defjvp(lambda p, t: (f(p[0]), lax.mul(lax.mul(cos(p[0]), t[0]), w)))
    f_jax = jax.custom_jvp(lambda x: jnp.sin(x) * w)
    f_jax.defjvp(lambda p, t: (f_jax(p[0]), jnp.cos(p[0]) * t[0] * w))
    jaxpr = mjcore.make_jaxpr(f)(onp.zeros(3))
    assert jaxpr.eqns[-1].params["num_consts"] == 1
    x = onp.array([0.1, 0.2, 0.3])
    _close(mjcore.jacrev(mjcore.jit(f))(x), jax.jacrev(f_jax)(x))
    xs = onp.stack([x, 2 * x])
    _close(mjcore.vmap(mjcore.jacfwd(mjcore.jit(f)))(xs), jax.vmap(jax.jacfwd(jax.jit(f_jax)))(xs))


def test_custom_jvp_closure_over_differentiated_value_under_jit():
    def outer(y):
        @mjcore.custom_jvp
        def f(x):
            return lax.mul(x, y)

        f.defjvp(lambda p, t: (f(p[0]), t[0]))
        return mjcore.jit(f)(2.0)

    with pytest.raises(TypeError, match="closed-over value"):
        mjcore.grad(outer)(3.0)


# --- custom_vjp details ---------------------------------------------------------------------


def test_custom_vjp_jaxprs():
    jaxpr = mjcore.make_jaxpr(clipped)(1.0)
    assert _names(jaxpr)[-1] == "custom_vjp_call"
    mjcore.typecheck_jaxpr(jaxpr.jaxpr)
    # The gradient runs the rule: clipping (min, max) instead of the identity's derivative.
    grad_jaxpr = mjcore.make_jaxpr(mjcore.grad(clipped))(1.0)
    assert {"min", "max"} <= set(_names(grad_jaxpr))
    mjcore.typecheck_jaxpr(grad_jaxpr.jaxpr)


def test_custom_vjp_pytrees_residuals_and_nondiff_function():
    def apply(fn, p, x):
        return {"out": lax.mul(fn(x), p["w"])}

    def apply_fwd(fn, p, x):
        return apply(fn, p, x), {"fx": fn(x), "w": p["w"], "x": x}

    def apply_bwd(fn, res, ct):
        g = ct["out"]
        # d/dx of fn is taken as 1 (a deliberately custom rule); w gets its true cotangent.
        return {"w": lax.mul(res["fx"], g)}, lax.mul(res["w"], g)

    apply_mj = mjcore.custom_vjp(apply, nondiff_argnums=(0,))
    apply_mj.defvjp(apply_fwd, apply_bwd)

    def apply_jax(fn, p, x):
        return {"out": fn(x) * p["w"]}

    apply_j = jax.custom_vjp(apply_jax, nondiff_argnums=(0,))
    apply_j.defvjp(
        lambda fn, p, x: (apply_jax(fn, p, x), {"fx": fn(x), "w": p["w"], "x": x}),
        lambda fn, res, ct: ({"w": res["fx"] * ct["out"]}, res["w"] * ct["out"]),
    )

    def loss(p, x):
        return apply_mj(sin, p, x)["out"]

    def loss_jax(p, x):
        return apply_j(jnp.sin, p, x)["out"]

    p = {"w": 1.5}
    _close(mjcore.grad(loss, (0, 1))(p, 0.3), jax.grad(loss_jax, (0, 1))(p, 0.3))
    _close(mjcore.jit(mjcore.grad(loss, (0, 1)))(p, 0.3), jax.grad(loss_jax, (0, 1))(p, 0.3))
    xs = onp.array([0.1, 0.2, 0.3])
    _close(
        mjcore.vmap(mjcore.grad(loss, (0, 1)), (None, 0))(p, xs),
        jax.vmap(jax.grad(loss_jax, (0, 1)), (None, 0))(p, xs),
    )


def _smooth_vjp_pair():
    @mjcore.custom_vjp
    def g(x, y):
        return lax.mul(sin(x), y)

    g.defvjp(
        lambda x, y: (lax.mul(sin(x), y), (cos(x), sin(x), y)),
        lambda res, ct: (lax.mul(lax.mul(res[0], ct), res[2]), lax.mul(res[1], ct)),
    )

    @jax.custom_vjp
    def g_jax(x, y):
        return jnp.sin(x) * y

    g_jax.defvjp(
        lambda x, y: (jnp.sin(x) * y, (jnp.cos(x), jnp.sin(x), y)),
        lambda res, ct: (res[0] * ct * res[2], res[1] * ct),
    )
    return g, g_jax


def test_custom_vjp_second_order_and_unbatched_cotangents():
    g, g_jax = _smooth_vjp_pair()
    args = (0.3, 2.0)
    _close(mjcore.grad(mjcore.grad(g), (0, 1))(*args), jax.grad(jax.grad(g_jax), (0, 1))(*args))
    _close(mjcore.jvp(mjcore.grad(g), args, (1.0, 0.5)), jax.jvp(jax.grad(g_jax), args, (1.0, 0.5)))
    # grad of a vmap whose unbatched argument y gets a cotangent summed over the batch.
    x = onp.array([0.1, 0.2, 0.3])

    def total(api, g):
        return lambda x, y: _total(api, api.vmap(g, (0, None))(x, y))

    expected = jax.grad(total(jax, g_jax), (0, 1))(x, 2.0)
    _close(mjcore.grad(total(mjcore, g), (0, 1))(x, 2.0), expected)
    _close(mjcore.jit(mjcore.grad(total(mjcore, mjcore.jit(g)), (0, 1)))(x, 2.0), expected)


def test_custom_vjp_errors():
    @mjcore.custom_vjp
    def f(x, y):
        return lax.mul(x, y)

    with pytest.raises(AttributeError, match="No VJP defined for custom_vjp function f"):
        f(1.0, 2.0)
    f.defvjp(lambda x, y: f(x, y), lambda res, g: (g, g))
    with pytest.raises(TypeError, match="fwd rule .* must produce a pair"):
        mjcore.grad(f)(1.0, 2.0)
    f.defvjp(lambda x, y: (f(x, y), None), lambda res, g: (g,))
    with pytest.raises(TypeError, match="tuple of length equal to the number"):
        mjcore.grad(f)(1.0, 2.0)
    f.defvjp(lambda x, y: (f(x, y), None), lambda res, g: (g, lax.broadcast_to(g, (3,))))
    with pytest.raises(ValueError, match="same shapes/dtypes"):
        mjcore.grad(f)(1.0, 2.0)
    g = mjcore.custom_vjp(lambda n, x: x, nondiff_argnums=(0,))
    g.defvjp(lambda n, x: (x, None), lambda n, res, ct: (ct,))
    with pytest.raises(mjcore.UnexpectedTracerError, match="nondiff_argnums"):
        mjcore.jit(lambda n, x: g(n, x))(1.0, 2.0)


def test_custom_vjp_closure_over_differentiated_value_under_jit():
    def outer(y):
        @mjcore.custom_vjp
        def f(x):
            return lax.mul(x, y)

        f.defvjp(lambda x: (f(x), None), lambda res, g: (g,))
        return mjcore.jit(f)(2.0)

    with pytest.raises(TypeError, match="closed-over value"):
        mjcore.grad(outer)(3.0)


def test_custom_vjp_eager_python_control_flow():
    @mjcore.custom_vjp
    def f(x):
        return x if float(x) > 0 else lax.neg(x)

    f.defvjp(lambda x: (f(x), x), lambda x, g: (g if float(x) > 0 else lax.neg(g),))
    assert float(f(-2.0)) == 2.0
    assert float(mjcore.grad(f)(-2.0)) == -1.0


# --- checkpoint -----------------------------------------------------------------------------


def _chain(x):
    return sin(sin(sin(x)))


def _chain_jax(x):
    return jnp.sin(jnp.sin(jnp.sin(x)))


def _sum(f):
    return lambda x: lax.reduce_sum(f(x), (0,))


X = onp.linspace(0.1, 1.0, 5)


@pytest.mark.parametrize(
    "name",
    ["eval", "jit", "grad", "jit(grad)", "grad(jit)", "grad(grad)", "vmap(grad)", "jvp", "hessian"],
)
def test_checkpoint_compositions_against_jax(name):
    _check_composition(name, mjcore.checkpoint(_chain), jax.checkpoint(_chain_jax))


def _residuals(f, x):
    """The residuals a linearization of f keeps: constvars of its linear jaxpr."""
    _, f_jvp = mjcore.linearize(f, x)
    return mjcore.make_jaxpr(f_jvp)(x).jaxpr.constvars


def test_checkpoint_saves_only_the_inputs():
    assert len(_residuals(_chain, X)) == 3  # cos of each sin's input
    (res,) = _residuals(mjcore.checkpoint(_chain), X)
    assert res.aval.shape == X.shape
    everything = mjcore.checkpoint_policies.everything_saveable
    assert len(_residuals(mjcore.checkpoint(_chain, policy=everything), X)) == 3
    _close(
        mjcore.grad(_sum(mjcore.checkpoint(_chain, policy=everything)))(X),
        jax.grad(lambda x: jnp.sum(_chain_jax(x)))(X),
    )


def test_checkpoint_recomputes_in_the_backward_pass():
    jaxpr = mjcore.make_jaxpr(mjcore.grad(_sum(mjcore.checkpoint(_chain))))(X)
    mjcore.typecheck_jaxpr(jaxpr.jaxpr)
    names = _names(jaxpr)
    assert names[:3] == ["sin", "sin", "sin"]  # the forward pass runs as usual...
    (remat,) = [e for e in jaxpr.eqns if e.primitive.name == "checkpoint"]
    backward = _names(remat.params["jaxpr"])  # ...and the backward pass recomputes it
    assert backward.count("sin") == 2 and backward.count("cos") == 3
    assert remat.inputs[0] is jaxpr.jaxpr.invars[0]  # from the input alone


def test_checkpoint_under_jit_lowers_with_an_optimization_barrier():
    f = mjcore.jit(mjcore.grad(_sum(mjcore.checkpoint(_chain))))
    assert "stablehlo.optimization_barrier" in f.lower(X).as_text()
    f = mjcore.jit(mjcore.grad(_sum(mjcore.checkpoint(_chain, prevent_cse=False))))
    assert "stablehlo.optimization_barrier" not in f.lower(X).as_text()
    _close(f(X), jax.grad(lambda x: jnp.sum(_chain_jax(x)))(X))


def test_checkpoint_inside_jit_under_grad_keeps_the_split():
    # pjit's partial evaluation of its jaxpr splits the checkpoint equation (no residuals
    # beyond the input) rather than recomputing the whole primal on the unknown side.
    f = mjcore.jit(_sum(mjcore.checkpoint(_chain)))
    _close(mjcore.grad(f)(X), jax.grad(lambda x: jnp.sum(_chain_jax(x)))(X))
    _, f_jvp = mjcore.linearize(f, X)
    jaxpr = mjcore.make_jaxpr(f_jvp)(X)
    assert len(jaxpr.jaxpr.constvars) == 1


def test_checkpoint_static_argnums_and_decorator_form():
    @mjcore.remat
    def f(x):
        return sin(x)

    @mjcore.checkpoint(static_argnums=(1,))
    def g(x, n):
        for _ in range(n):
            x = sin(x)
        return x

    assert mjcore.remat is mjcore.checkpoint
    _close(mjcore.grad(f)(0.3), jnp.cos(0.3))
    _close(mjcore.grad(g)(0.3, 3), jax.grad(_chain_jax)(0.3))
    _close(
        mjcore.jit(mjcore.grad(g), static_argnums=1)(0.3, 2),
        jax.grad(lambda x: jnp.sin(jnp.sin(x)))(0.3),
    )


def test_checkpoint_of_custom_rules():
    f = mjcore.checkpoint(lambda x: log1pexp(clipped(x)))
    f_jax = jax.checkpoint(lambda x: log1pexp_jax(clipped_jax(x)))
    for x in [0.1, 1.0]:
        _close(mjcore.grad(f)(x), jax.grad(f_jax)(x))
        _close(mjcore.jit(mjcore.grad(f))(x), jax.grad(f_jax)(x))


def test_checkpoint_around_higher_order_primitives_saves_only_the_inputs():
    # The jitted (and the inner checkpointed) callee is split by its own partial-eval rule,
    # and its known half is recomputed rather than saved.
    cases = [
        (mjcore.checkpoint(mjcore.jit(_chain)), jax.checkpoint(jax.jit(_chain_jax))),
        (
            mjcore.checkpoint(lambda x: mjcore.checkpoint(_chain)(sin(x))),
            jax.checkpoint(lambda x: jax.checkpoint(_chain_jax)(jnp.sin(x))),
        ),
    ]
    for f_mj, f_jax in cases:
        assert len(_residuals(f_mj, X)) == 1
        _close(mjcore.grad(_sum(f_mj))(X), jax.grad(lambda x, f=f_jax: jnp.sum(f(x)))(X))
