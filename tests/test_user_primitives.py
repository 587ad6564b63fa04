"""User-defined primitives: the multiply_add walkthrough of "JAX Internals: primitives" with
mjcore's API (docs/extending.md), the missing-rule errors of every transformation, and
`lower_fun`. JAX (x64) is the oracle where one is needed."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
from mjcore import lax
from mjcore.batching import NOT_MAPPED, moveaxis_to

jax.config.update("jax_enable_x64", True)

RULES = ("impl", "abstract_eval", "lowering", "jvp", "transpose", "batching")


# --- the multiply_add primitive, built from any subset of its rules -------------------------


def _impl(x, y, z):
    # Receives mjcore.Arrays; may compute with NumPy and return NumPy arrays.
    assert all(isinstance(a, mjcore.Array) for a in (x, y, z))
    return onp.add(onp.multiply(x, y), z)


def _abstract_eval(xs, ys, zs):
    assert all(isinstance(a, mjcore.ShapedArray) for a in (xs, ys, zs))
    assert xs.shape == ys.shape == zs.shape
    return mjcore.ShapedArray(xs.shape, xs.dtype)


def _lowering(ctx, x, y, z):
    aval = ctx.aval_out.strip_weak_type()
    return ctx.builder.op(
        "stablehlo.add", [ctx.builder.op("stablehlo.multiply", [x, y], aval), z], aval
    )


def make_multiply_add(rules=RULES):
    """A fresh multiply_add primitive with the given rules, and its wrapper."""
    p = mjcore.Primitive("multiply_add")

    def multiply_add(x, y, z):
        return p.bind(x, y, z)

    def jvp(primals, tangents):
        (x, y, z), (x_dot, y_dot, z_dot) = primals, tangents
        out = multiply_add(x, y, z)
        # x_dot * y + x * y_dot + z_dot, with multiply_add itself (so it is linear in tangents).
        return out, multiply_add(x_dot, y, multiply_add(x, y_dot, z_dot))

    def transpose(ct, x, y, z):
        # Linear in z and in at most one of x and y (the other one is a known primal).
        undefined = mjcore.is_undefined_primal
        assert not (undefined(x) and undefined(y))
        x_bar = multiply_add(ct, y, lax.zeros_like(y)) if undefined(x) else None
        y_bar = multiply_add(x, ct, lax.zeros_like(x)) if undefined(y) else None
        return x_bar, y_bar, (ct if undefined(z) else None)

    def batching(args, dims):
        # Elementwise: put every batch axis in front (broadcasting unbatched operands).
        size = next(a.shape[d] for a, d in zip(args, dims, strict=True) if d is not NOT_MAPPED)
        args = [moveaxis_to(a, d, 0, size) for a, d in zip(args, dims, strict=True)]
        return multiply_add(*args), 0

    table = {
        "impl": (p.def_impl, _impl),
        "abstract_eval": (p.def_abstract_eval, _abstract_eval),
        "lowering": (p.def_lowering, _lowering),
        "jvp": (p.def_jvp, jvp),
        "transpose": (p.def_transpose, transpose),
        "batching": (p.def_batching, batching),
    }
    for rule in rules:
        register, fn = table[rule]
        register(fn)
    return p, multiply_add


def square_add_lax(a, b):
    return a * a + b


def _without(*missing):
    return tuple(r for r in RULES if r not in missing)


# --- the walkthrough ------------------------------------------------------------------------


def test_eager_impl_gets_arrays_and_returns_an_array():
    _, multiply_add = make_multiply_add(("impl",))
    out = multiply_add(2.0, 2.0, 10.0)
    assert isinstance(out, mjcore.Array)
    assert float(out) == 14.0


def test_eager_without_impl_compiles_the_lowering():
    _, multiply_add = make_multiply_add(("abstract_eval", "lowering"))
    assert float(multiply_add(2.0, 2.0, 10.0)) == 14.0


@pytest.mark.parametrize("rules", [RULES, _without("impl")], ids=["with-impl", "lowering-only"])
def test_square_add_eval_and_jit(rules):
    _, multiply_add = make_multiply_add(rules)

    def square_add(a, b):
        return multiply_add(a, a, b)

    assert float(square_add(2.0, 10.0)) == 14.0
    assert float(mjcore.jit(square_add)(2.0, 10.0)) == 14.0


def test_jvp_grad_vmap_of_square_add():
    _, multiply_add = make_multiply_add()

    def square_add(a, b):
        return multiply_add(a, a, b)

    y, y_dot = mjcore.jvp(square_add, (2.0, 10.0), (1.0, 1.0))
    assert (float(y), float(y_dot)) == (14.0, 5.0)
    assert float(mjcore.grad(square_add)(2.0, 10.0)) == 4.0
    assert float(mjcore.jit(mjcore.grad(square_add))(2.0, 10.0)) == 4.0
    assert float(mjcore.grad(mjcore.jit(square_add))(2.0, 10.0)) == 4.0
    assert float(mjcore.grad(mjcore.grad(square_add))(2.0, 10.0)) == 2.0
    expected = jax.grad(square_add_lax, argnums=(0, 1))(2.0, 10.0)
    onp.testing.assert_allclose(mjcore.grad(square_add, argnums=(0, 1))(2.0, 10.0), expected)

    a, b = onp.array([2.0, 3.0]), onp.array([10.0, 20.0])
    loop = [float(square_add(ai, bi)) for ai, bi in zip(a, b, strict=True)]
    onp.testing.assert_allclose(mjcore.vmap(square_add)(a, b), loop)
    onp.testing.assert_allclose(mjcore.jit(mjcore.vmap(square_add))(a, b), [14.0, 29.0])
    onp.testing.assert_allclose(mjcore.vmap(square_add, in_axes=(0, None))(a, 1.0), [5.0, 10.0])
    onp.testing.assert_allclose(
        mjcore.vmap(mjcore.grad(square_add))(a, b), jax.vmap(jax.grad(square_add_lax))(a, b)
    )


def test_against_jax_on_matrices():
    _, multiply_add = make_multiply_add()
    rng = onp.random.default_rng(0)
    x, y, z = (rng.standard_normal((3, 4)) for _ in range(3))

    def loss_mj(x, y, z):
        return lax.reduce_sum(multiply_add(x, y, z), (0, 1))

    def loss_jax(x, y, z):
        return jnp.sum(x * y + z)

    onp.testing.assert_allclose(mjcore.jit(loss_mj)(x, y, z), loss_jax(x, y, z), rtol=1e-14)
    grads = mjcore.grad(loss_mj, argnums=(0, 1, 2))(x, y, z)
    for g, e in zip(grads, jax.grad(loss_jax, argnums=(0, 1, 2))(x, y, z), strict=True):
        onp.testing.assert_allclose(g, e, rtol=1e-14)
    out = mjcore.vmap(multiply_add, in_axes=(1, 0, None))(x, y.T, z[:, 0])
    onp.testing.assert_allclose(
        out, jax.vmap(lambda a, b, c: a * b + c, (1, 0, None))(x, y.T, z[:, 0])
    )


def test_a_direct_eager_vjp_rule_is_used_by_eager_grad_only():
    # docs/extending.md's `def_eager_vjp` example: eager grad calls it (and not the jvp rule
    # of the differentiated application); grad under jit keeps the jvp and transpose rules.
    p, multiply_add = make_multiply_add()
    calls = []

    def vjp(ct, out, primals, linear):
        calls.append([lin is not None for lin in linear])
        x, y, _ = primals
        return [
            None if linear[0] is None else lax.mul(ct, y),
            None if linear[1] is None else lax.mul(ct, x),
            None if linear[2] is None else ct,
        ]

    p.def_eager_vjp(vjp)
    rng = onp.random.default_rng(1)
    x, y, z = (rng.standard_normal((3, 4)) for _ in range(3))

    def loss_mj(x, y, z):
        return lax.reduce_sum(lax.mul(multiply_add(x, x, z), y), (0, 1))

    def loss_jax(x, y, z):
        return jnp.sum((x * x + z) * y)

    want = jax.grad(loss_jax, argnums=(0, 2))(x, y, z)
    eager = mjcore.grad(loss_mj, argnums=(0, 2))
    for grad, expected_calls in ((eager, [[True, True, True]]), (mjcore.jit(eager), [])):
        calls.clear()
        got = grad(x, y, z)
        for g, e in zip(got, want, strict=True):
            onp.testing.assert_allclose(onp.asarray(g), e, rtol=1e-14)
        assert calls == expected_calls


def test_jaxpr_shows_and_typechecks_the_primitive():
    _, multiply_add = make_multiply_add()
    jaxpr = mjcore.make_jaxpr(mjcore.grad(lambda a, b: multiply_add(a, a, b)))(2.0, 10.0)
    assert [e.primitive.name for e in jaxpr.eqns].count("multiply_add") == 3
    mjcore.typecheck_jaxpr(jaxpr.jaxpr)


# --- missing rules: each error names the primitive, the rule and the transformation ---------


def _square_add(multiply_add):
    return lambda a, b: multiply_add(a, a, b)


MISSING = [
    # (rules missing, what runs, message)
    (
        ("impl", "lowering"),
        lambda f: f(2.0, 10.0),
        "Eager evaluation of 'multiply_add' needs an impl rule or a lowering rule",
    ),
    (
        ("abstract_eval",),
        lambda f: mjcore.jit(f)(2.0, 10.0),
        r"Abstract evaluation .* of 'multiply_add' needs an abstract_eval rule",
    ),
    (
        ("abstract_eval",),
        lambda f: mjcore.make_jaxpr(f)(2.0, 10.0),
        r"Abstract evaluation .* of 'multiply_add' needs an abstract_eval rule",
    ),
    (
        ("lowering",),
        lambda f: mjcore.jit(f)(2.0, 10.0),
        "Compilation with XLA of 'multiply_add' needs a lowering rule",
    ),
    (
        ("jvp",),
        lambda f: mjcore.jvp(f, (2.0, 10.0), (1.0, 1.0)),
        r"Forward-mode differentiation \(jvp\) of 'multiply_add' needs a jvp rule",
    ),
    (
        ("jvp",),
        lambda f: mjcore.grad(f)(2.0, 10.0),
        r"Forward-mode differentiation \(jvp\) of 'multiply_add' needs a jvp rule",
    ),
    (
        ("transpose",),
        lambda f: mjcore.grad(f)(2.0, 10.0),
        "Reverse-mode differentiation of 'multiply_add' needs a transpose rule",
    ),
    (
        ("batching",),
        lambda f: mjcore.vmap(f)(onp.array([2.0, 3.0]), onp.array([10.0, 20.0])),
        "vmap of 'multiply_add' needs a batching rule",
    ),
]


@pytest.mark.parametrize(
    "missing,run,message",
    MISSING,
    ids=[f"{'+'.join(m)}-{i}" for i, (m, _, _) in enumerate(MISSING)],
)
def test_missing_rule_errors(missing, run, message):
    _, multiply_add = make_multiply_add(_without(*missing))
    with pytest.raises(mjcore.MissingRuleError, match=message) as info:
        run(_square_add(multiply_add))
    assert info.value.primitive_name == "multiply_add"
    assert info.value.rule == missing[0]
    assert isinstance(info.value, NotImplementedError)
    # Adding the rule fixes it.
    _, multiply_add = make_multiply_add()
    run(_square_add(multiply_add))


# --- lower_fun ------------------------------------------------------------------------------


def test_lower_fun_single_result_with_params():
    p = mjcore.Primitive("scaled_add")
    p.def_abstract_eval(lambda x, y, *, scale: mjcore.ShapedArray(x.shape, x.dtype))
    p.def_lowering(mjcore.lower_fun(lambda x, y, *, scale: lax.add(lax.mul(x, scale), y)))
    x, y = onp.arange(3.0), onp.ones(3)
    onp.testing.assert_array_equal(p.bind(x, y, scale=2.0), 2 * x + y)
    onp.testing.assert_array_equal(
        mjcore.jit(lambda a, b: p.bind(a, b, scale=3.0))(x, y), 3 * x + y
    )


def test_lower_fun_multiple_results_and_constants():
    p = mjcore.Primitive("add_sub", multiple_results=True)
    p.def_abstract_eval(lambda x, y: [mjcore.ShapedArray(x.shape, x.dtype)] * 2)
    offset = onp.array([1.0, 2.0, 3.0])  # a non-scalar constant, emitted into the module

    def add_sub(x, y):
        return lax.add(lax.add(x, y), offset), lax.sub(x, y)

    p.def_lowering(mjcore.lower_fun(add_sub))
    x, y = onp.array([1.0, 2.0, 3.0]), onp.array([0.5, 0.5, 0.5])
    s, d = p.bind(x, y)
    onp.testing.assert_array_equal(s, x + y + offset)
    onp.testing.assert_array_equal(d, x - y)
    s, d = mjcore.jit(lambda a, b: p.bind(a, b))(x, y)
    onp.testing.assert_array_equal(s, x + y + offset)


def test_lower_fun_multiple_results_flag_is_checked():
    p = mjcore.Primitive("pair")
    p.def_abstract_eval(lambda x: mjcore.ShapedArray(x.shape, x.dtype))
    p.def_lowering(mjcore.lower_fun(lambda x: (x, x), multiple_results=False))
    with pytest.raises(TypeError, match="expected one result"):
        p.bind(1.0)
