"""lax.custom_linear_solve and lax.custom_root (implicit differentiation) against JAX (x64):
values eagerly and under jit, jvp (also against finite differences), grad through
transpose_solve, second order, vmap against a Python loop, aux outputs and errors."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
import mjnp
from mjcore import lax
from mjcore.test_util import check_grads
from mjcore.tree_util import tree_leaves

jax.config.update("jax_enable_x64", True)

RNG = onp.random.default_rng(0)
A = RNG.standard_normal((3, 3)) + 4 * onp.eye(3)
SPD = A @ A.T
B = RNG.standard_normal(3)
BS = RNG.standard_normal((4, 3))
AS = RNG.standard_normal((4, 3, 3)) + 4 * onp.eye(3)


def _close(actual, expected, tol=1e-10):
    actual, expected = tree_leaves(actual), jax.tree_util.tree_leaves(expected)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        a, e = onp.asarray(a), onp.asarray(e)
        assert a.shape == e.shape and a.dtype == e.dtype, (a.shape, e.shape, a.dtype, e.dtype)
        onp.testing.assert_allclose(a, e, rtol=tol, atol=tol)


# --- custom_linear_solve ---------------------------------------------------------------------


def _jacobi(L, np_, a, b):
    """A solver reverse mode cannot see through: 60 Jacobi sweeps in a fori_loop."""
    d = np_.diagonal(a)
    return L.fori_loop(0, 60, lambda i, x: (b - (a @ x - d * x)) / d, b / d)


def linear(L, np_, mode):
    """x = A⁻¹ b with A closed over by matvec, solved four ways."""

    def f(a, b):
        matvec = lambda x: np_.dot(a, x)  # noqa: E731
        if mode == "direct":
            solve = lambda mv, b: np_.linalg.solve(a, b)  # noqa: E731
            tsolve = lambda vm, b: np_.linalg.solve(a.T, b)  # noqa: E731
            return L.custom_linear_solve(matvec, b, solve, tsolve)
        if mode == "jacobi":
            solve = lambda mv, b: _jacobi(L, np_, a, b)  # noqa: E731
            tsolve = lambda vm, b: _jacobi(L, np_, a.T, b)  # noqa: E731
            return L.custom_linear_solve(matvec, b, solve, tsolve)
        if mode == "symmetric":
            s = a @ a.T
            matvec = lambda x: np_.dot(s, x)  # noqa: E731
            solve = lambda mv, b: np_.linalg.solve(s, b)  # noqa: E731
            return L.custom_linear_solve(matvec, b, solve, symmetric=True)
        # A pytree right-hand side and an aux output.
        assert mode == "pytree_aux"
        n = 2
        top, bot = a[:n, :n], a[n:, n:]

        def mv(x):
            return {"u": top @ x["u"], "v": bot @ x["v"]}

        def solve(mv, b):
            x = {"u": np_.linalg.solve(top, b["u"]), "v": np_.linalg.solve(bot, b["v"])}
            return x, np_.sum(x["u"]) * 0 + 7.0

        def tsolve(vm, b):
            x = {"u": np_.linalg.solve(top.T, b["u"]), "v": np_.linalg.solve(bot.T, b["v"])}
            return x, np_.sum(x["u"]) * 0 + 7.0

        x, aux = L.custom_linear_solve(mv, {"u": b[:n], "v": b[n:]}, solve, tsolve, has_aux=True)
        return np_.concatenate([x["u"], x["v"]]) * aux

    return f


MODES = ["direct", "jacobi", "symmetric", "pytree_aux"]


@pytest.mark.parametrize("mode", MODES)
def test_linear_solve_values_jit_and_derivatives(mode):
    f, jf = linear(lax, mjnp, mode), linear(jax.lax, jnp, mode)
    ta, tb = RNG.standard_normal((3, 3)), RNG.standard_normal(3)

    def loss(L, np_):
        g = linear(L, np_, mode)
        return lambda a, b: np_.sum(g(a, b) ** 2)

    # The JAX oracle as one jitted program (eager JAX compiles every op and solve).
    jl = loss(jax.lax, jnp)
    want, want_jvp, want_grad, want_grad_b = jax.jit(
        lambda a, b, ta, tb: (
            jf(a, b),
            jax.jvp(jf, (a, b), (ta, tb)),
            jax.grad(jl, (0, 1))(a, b),
            jax.grad(jl, 1)(a, b),
        )
    )(A, B, ta, tb)
    _close(f(A, B), want)
    _close(mjcore.jit(f)(A, B), f(A, B))
    _close(mjcore.jvp(f, (A, B), (ta, tb)), want_jvp)
    _close(mjcore.grad(loss(lax, mjnp), (0, 1))(A, B), want_grad)
    _close(mjcore.jit(mjcore.grad(loss(lax, mjnp), 1))(A, B), want_grad_b)


@pytest.mark.parametrize("mode", ["direct", "symmetric"])
def test_linear_solve_second_order(mode):
    def loss(L, np_):
        g = linear(L, np_, mode)
        return lambda a, b: np_.sum(np_.sin(g(a, b)))

    # With respect to b (A's second order is in test_linear_solve_finite_differences).
    _close(mjcore.hessian(loss(lax, mjnp), 1)(A, B), jax.hessian(loss(jax.lax, jnp), 1)(A, B))


def test_linear_solve_finite_differences():
    check_grads(linear(lax, mjnp, "direct"), (A, B), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("in_axes", [(None, 0), (0, None), (0, 0), (0, 1)])
def test_linear_solve_vmap_matches_loop(in_axes):
    f = linear(lax, mjnp, "jacobi")
    a = AS if in_axes[0] == 0 else A
    b = BS if in_axes[1] == 0 else (BS.T if in_axes[1] == 1 else B)
    out = mjcore.vmap(f, in_axes)(a, b)
    pick = lambda x, ax, i: x if ax is None else onp.take(x, i, axis=ax)  # noqa: E731
    loop = onp.stack(
        [onp.asarray(f(pick(a, in_axes[0], i), pick(b, in_axes[1], i))) for i in range(4)]
    )
    _close(out, loop)
    # vmap of grad and grad of vmap, against JAX.
    jf = linear(jax.lax, jnp, "jacobi")
    g = mjcore.vmap(mjcore.grad(lambda a, b: mjnp.sum(f(a, b) ** 2), (0, 1)), in_axes)(a, b)
    jg = jax.vmap(jax.grad(lambda a, b: jnp.sum(jf(a, b) ** 2), (0, 1)), in_axes)(a, b)
    _close(g, jg)


def test_linear_solve_reverse_mode_needs_transpose_solve():
    def f(b):
        solve = lambda mv, b: mjnp.linalg.solve(A, b)  # noqa: E731
        return mjnp.sum(lax.custom_linear_solve(lambda x: mjnp.dot(A, x), b, solve))

    _close(mjcore.jvp(f, (B,), (B,))[1], jnp.sum(jnp.linalg.solve(A, B)))
    with pytest.raises(TypeError, match="transpose_solve required"):
        mjcore.grad(f)(B)


def test_linear_solve_type_errors():
    with pytest.raises(TypeError, match="matvec must return"):
        lax.custom_linear_solve(lambda x: x[:2], B, lambda mv, b: b)
    with pytest.raises(TypeError, match="solve must return"):
        lax.custom_linear_solve(lambda x: x, B, lambda mv, b: b.astype("float32"))


def test_linear_solve_staged_once():
    f = linear(lax, mjnp, "jacobi")
    closed = mjcore.make_jaxpr(f)(A, B)
    mjcore.typecheck_jaxpr(closed.jaxpr)
    assert [e.primitive.name for e in closed.jaxpr.eqns].count("custom_linear_solve") == 1


# --- custom_root ------------------------------------------------------------------------------


def newton_sqrt(L, np_):
    """sqrt(a) as the root of x² - a, by Newton's method the derivatives never see."""

    def f(a):
        def solve(g, x0):
            return L.fori_loop(0, 40, lambda i, x: x - g(x) / (2 * x), x0)

        tangent_solve = lambda g, y: y / g(np_.ones_like(y))  # noqa: E731
        return L.custom_root(lambda x: x * x - a, np_.ones_like(a), solve, tangent_solve)

    return f


def cubic_system(L, np_):
    """A vector root, x³/3 + M x = c, with tangent_solve itself a custom_linear_solve."""

    def f(m, c):
        def fun(x):
            return x**3 / 3 + m @ x - c

        def solve(g, x0):
            def step(i, x):
                jac = np_.diag(x * x) + m
                return x - np_.linalg.solve(jac, g(x))

            return L.fori_loop(0, 30, step, x0), np_.sum(x0) * 0 + 3.0

        def tangent_solve(g, y):
            jac = L.stop_gradient(mjcore_or_jax_jacobian(L)(g)(y))
            return L.custom_linear_solve(
                g,
                y,
                lambda mv, b: np_.linalg.solve(jac, b),
                lambda vm, b: np_.linalg.solve(jac.T, b),
            )

        x, aux = L.custom_root(fun, np_.zeros_like(c), solve, tangent_solve, has_aux=True)
        return x * aux

    return f


def mjcore_or_jax_jacobian(L):
    return mjcore.jacfwd if L is lax else jax.jacfwd


M = A / 4
C = RNG.standard_normal(3)
AV = onp.array([2.0, 3.0, 5.0])


def test_custom_root_newton_sqrt():
    f, jf = newton_sqrt(lax, mjnp), newton_sqrt(jax.lax, jnp)
    _close(f(AV), jf(AV))
    _close(mjcore.jit(f)(AV), f(AV))
    _close(mjcore.jvp(f, (AV,), (C,)), jax.jvp(jf, (AV,), (C,)))
    _close(mjcore.grad(lambda a: mjnp.sum(f(a)))(AV), jax.grad(lambda a: jnp.sum(jf(a)))(AV))
    s = lambda L, np_: lambda a: newton_sqrt(L, np_)(a)  # noqa: E731
    _close(mjcore.grad(mjcore.grad(s(lax, mjnp)))(2.0), jax.grad(jax.grad(s(jax.lax, jnp)))(2.0))
    _close(mjcore.jit(mjcore.grad(lambda a: mjnp.sum(f(a))))(AV), 0.5 / onp.sqrt(AV))
    check_grads(f, (AV,), order=2, modes=("fwd", "rev"))
    loop = onp.stack([onp.asarray(f(a)) for a in AV])
    _close(mjcore.vmap(f)(AV), loop)


def test_custom_root_vector_system_with_aux():
    f, jf = cubic_system(lax, mjnp), cubic_system(jax.lax, jnp)
    _close(f(M, C), jf(M, C))
    _close(mjcore.jit(f)(M, C), f(M, C))
    tm, tc = RNG.standard_normal((3, 3)), RNG.standard_normal(3)
    _close(mjcore.jvp(f, (M, C), (tm, tc)), jax.jvp(jf, (M, C), (tm, tc)))
    g = mjcore.grad(lambda m, c: mjnp.sum(mjnp.sin(f(m, c))), (0, 1))(M, C)
    _close(g, jax.grad(lambda m, c: jnp.sum(jnp.sin(jf(m, c))), (0, 1))(M, C))
