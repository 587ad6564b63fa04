"""A check shared by the eager-grad host tests: a program's eager vjp, grad of grad, jvp of
grad and vmap of grad (where outer transformations' tracers take the general path) against
JAX x64's."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as onp

import mjcore
import mjnp as np


def check_outer_transformations(
    fun: Callable[..., Any], args: Sequence[onp.ndarray], batch_scale: float
) -> None:
    """`fun(xp, *args)` (xp: mjnp or jax.numpy, a scalar result) differentiated under jit,
    grad, jvp and vmap (over `args[0]` and `batch_scale * args[0]`) equals JAX's."""
    jfun = lambda *a: fun(jnp, *a)  # noqa: E731
    mfun = lambda *a: fun(np, *a)  # noqa: E731
    tol = dict(rtol=1e-10, atol=1e-11)
    direction = onp.ones_like(args[0])
    batch = onp.stack([args[0], batch_scale * args[0]])

    @jax.jit
    def oracles(*a):  # JAX's four results in one program (eagerly: one compile per op)
        grad_x = lambda x: jax.grad(jfun)(x, *a[1:])  # noqa: E731
        return (
            jax.vjp(jfun, *a)[1](1.0),
            jax.grad(lambda x: jnp.sum(grad_x(x) ** 2))(a[0]),
            jax.jvp(grad_x, (a[0],), (direction,))[1],
            jax.vmap(grad_x)(batch),
        )

    want, j2, jt, jvg = oracles(*args)
    # f_vjp under jit: its residuals and cotangent are jit's tracers
    _, f_vjp = mjcore.vjp(mfun, *[np.asarray(a) for a in args])
    got = mjcore.jit(f_vjp)(np.asarray(1.0))
    for g, w in zip(got, want, strict=True):
        onp.testing.assert_allclose(onp.asarray(g), w, **tol)
    # grad of grad, jvp of grad, vmap of grad
    g2 = mjcore.grad(lambda x: np.sum(mjcore.grad(mfun)(x, *args[1:]) ** 2))(np.asarray(args[0]))
    onp.testing.assert_allclose(onp.asarray(g2), j2, **tol)
    _, t = mjcore.jvp(lambda x: mjcore.grad(mfun)(x, *args[1:]), (args[0],), (direction,))
    onp.testing.assert_allclose(onp.asarray(t), jt, **tol)
    vg = mjcore.vmap(lambda x: mjcore.grad(mfun)(x, *args[1:]))(batch)
    onp.testing.assert_allclose(onp.asarray(vg), jvg, **tol)
