"""Eager reverse mode (mjcore.eager_vjp) through a higher-order primitive's tape entry (one
linear jaxpr for a jit call, cond, scan, ...): outputs without a cotangent. JAX (x64) is the
oracle."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp

import mjcore
import mjnp as np

jax.config.update("jax_enable_x64", True)


def _data(seed: int, n: int = 5) -> onp.ndarray:
    return onp.random.default_rng(seed).normal(size=n)


def test_vjp_through_a_higher_order_primitive_with_an_unused_output_matches_jax():
    # A jit call's tape entry with one output lacking a cotangent: its Zero takes that output's
    # aval (the backward pass once read a stale loop variable, and crashed when the last
    # output of f carried no tangent).
    def g(y):
        return np.sum(np.sin(y)), np.cos(y)

    def jg(y):
        return jnp.sum(jnp.sin(y)), jnp.cos(y)

    def f(x):
        return mjcore.jit(g)(x)[0], np.float64(2.0)

    def jf(x):
        return jax.jit(jg)(x)[0], jnp.float64(2.0)

    x = _data(7, 3)
    out, f_vjp = mjcore.vjp(f, np.asarray(x))
    jout, jf_vjp = jax.vjp(jf, x)
    onp.testing.assert_allclose(onp.asarray(out[0]), jout[0], rtol=1e-12)
    (ct,) = f_vjp((np.float64(1.5), np.float64(0.0)))
    (jct,) = jf_vjp((jnp.float64(1.5), jnp.float64(0.0)))
    onp.testing.assert_allclose(onp.asarray(ct), jct, rtol=1e-12)
    g_x = mjcore.grad(lambda x: mjcore.jit(g)(x)[0])(np.asarray(x))
    onp.testing.assert_allclose(onp.asarray(g_x), jax.grad(lambda x: jax.jit(jg)(x)[0])(x))
