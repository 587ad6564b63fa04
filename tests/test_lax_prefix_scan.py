"""lax.associative_scan against jax.lax.associative_scan (x64): add, mul, max and a pytree
linear recurrence, reversed and along other axes, under jvp, grad, vmap and jit; errors."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
import mjnp as np
from mjcore import lax

jax.config.update("jax_enable_x64", True)


def _recurrence(p, q):
    """Composition of the affine maps h -> a * h + b (first p, then q)."""
    (a1, b1), (a2, b2) = p, q
    return (a1 * a2, a2 * b1 + b2)


def _dict_recurrence(p, q):
    a, b = _recurrence((p["a"], p["b"]), (q["a"], q["b"]))
    return {"a": a, "b": b}


FNS = {
    "add": (lax.add, jax.lax.add),
    "mul": (lax.mul, jax.lax.mul),
    "max": (lax.max, jax.lax.max),
    "recurrence": (_recurrence, _recurrence),
    "dict": (_dict_recurrence, _dict_recurrence),
}


def _elems(fn: str, shape, seed: int = 0):
    rng = onp.random.default_rng(seed)
    if fn == "recurrence":
        return (rng.uniform(0.5, 1.2, shape), rng.standard_normal(shape))
    if fn == "dict":
        return {"a": rng.uniform(0.5, 1.2, shape), "b": rng.standard_normal(shape)}
    if fn == "mul":
        return rng.uniform(0.5, 1.5, shape)
    return rng.standard_normal(shape)


def _close(actual, expected, rtol=1e-12):
    actual_leaves = mjcore.tree_util.tree_leaves(actual)
    expected_leaves = jax.tree_util.tree_leaves(expected)
    assert len(actual_leaves) == len(expected_leaves)
    for a, e in zip(actual_leaves, expected_leaves, strict=True):
        a, e = onp.asarray(a), onp.asarray(e)
        assert a.shape == e.shape and a.dtype == e.dtype, (a.shape, e.shape, a.dtype, e.dtype)
        onp.testing.assert_allclose(a, e, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8, 13])
@pytest.mark.parametrize("fn", list(FNS))
def test_values_match_jax(fn, n, reverse):
    mj_fn, jax_fn = FNS[fn]
    elems = _elems(fn, (n, 3))
    expected = jax.lax.associative_scan(jax_fn, elems, reverse=reverse)
    _close(lax.associative_scan(mj_fn, elems, reverse=reverse), expected)


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
@pytest.mark.parametrize("axis", [1, -1, 2])
@pytest.mark.parametrize("fn", ["add", "recurrence"])
def test_other_axes_match_jax(fn, axis, reverse):
    mj_fn, jax_fn = FNS[fn]
    elems = _elems(fn, (2, 7, 6))
    # JAX's reverse scan rejects a negative axis, so it gets the positive one. One jitted JAX
    # program (eager JAX compiles each slice and op of the scan).
    expected = jax.jit(
        lambda e: jax.lax.associative_scan(jax_fn, e, reverse=reverse, axis=axis % 3)
    )(elems)
    _close(lax.associative_scan(mj_fn, elems, reverse=reverse, axis=axis), expected)
    jitted = mjcore.jit(lambda e: lax.associative_scan(mj_fn, e, reverse=reverse, axis=axis))
    _close(jitted(elems), expected)


def test_integer_and_bool_elems():
    # JAX's oracles as jitted programs (eager JAX compiles each slice and op of the scan).
    x = onp.arange(1, 12, dtype=onp.int32)
    want = jax.jit(lambda x: jax.lax.associative_scan(jax.lax.add, x))(x)
    _close(lax.associative_scan(lax.add, x), want)
    b = onp.random.default_rng(1).random(9) < 0.3
    _close(
        lax.associative_scan(lax.max, b), jax.jit(partial(jax.lax.associative_scan, jax.lax.max))(b)
    )


def test_moves_values_without_arithmetic():
    # NB: JAX interleaves by padding with zeros and adding, which turns -0.0 into 0.0.
    x = onp.array([-0.0, -1.0, -2.0, -0.0, -3.0])
    out = onp.asarray(lax.associative_scan(lax.max, x))
    assert onp.signbit(out).all()


def _loss(scan, sum_, sin, fn, reverse, ct):
    def loss(elems):
        leaves = mjcore.tree_util.tree_leaves(scan(fn, elems, reverse=reverse))
        return sum(sum_(sin(leaf) * c) for leaf, c in zip(leaves, ct, strict=True))

    return loss


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
@pytest.mark.parametrize("fn", list(FNS))
def test_jvp_and_grad_match_jax(fn, reverse):
    mj_fn, jax_fn = FNS[fn]
    elems = _elems(fn, (6, 2))
    rng = onp.random.default_rng(2)
    tangents = jax.tree.map(lambda x: rng.standard_normal(x.shape), elems)

    def f(e):
        return lax.associative_scan(mj_fn, e, reverse=reverse)

    def g(e):
        return jax.lax.associative_scan(jax_fn, e, reverse=reverse)

    # The scan keeps each leaf's shape, so the cotangents follow the inputs' leaves.
    ct = [rng.standard_normal(x.shape) for x in jax.tree.leaves(elems)]
    loss = _loss(lax.associative_scan, np.sum, np.sin, mj_fn, reverse, ct)
    jax_loss = _loss(jax.lax.associative_scan, jnp.sum, jnp.sin, jax_fn, reverse, ct)
    # One jitted JAX program for the oracle's jvp and grad (eager JAX compiles every op).
    (expected, expected_dot), expected_grad = jax.jit(
        lambda e, t: (jax.jvp(g, (e,), (t,)), jax.grad(jax_loss)(e))
    )(elems, tangents)
    out, out_dot = mjcore.jvp(f, (elems,), (tangents,))
    _close(out, expected)
    _close(out_dot, expected_dot)
    _close(mjcore.grad(loss)(elems), expected_grad)
    _close(mjcore.jit(mjcore.grad(loss))(elems), expected_grad)


@pytest.mark.parametrize("in_axis", [0, 1])
@pytest.mark.parametrize("fn", ["mul", "recurrence"])
def test_vmap_matches_loop(fn, in_axis):
    mj_fn, _ = FNS[fn]
    batch = [_elems(fn, (5, 2), seed=i) for i in range(3)]
    stacked = jax.tree.map(lambda *xs: onp.stack(xs, axis=in_axis), *batch)

    def f(e):
        return lax.associative_scan(mj_fn, e, reverse=True)

    out = mjcore.vmap(f, in_axes=in_axis)(stacked)
    expected = jax.tree.map(
        lambda *xs: onp.stack(xs), *[jax.tree.map(onp.asarray, f(e)) for e in batch]
    )
    _close(out, expected)


def test_errors():
    x = onp.ones((4, 3))
    with pytest.raises(TypeError, match="associative_scan: fn must be callable"):
        lax.associative_scan(3, x)
    with pytest.raises(ValueError, match=r"associative_scan: every array .* \(4, 3\), \(5, 3\)"):
        lax.associative_scan(_recurrence, (x, onp.ones((5, 3))))
    with pytest.raises(onp.exceptions.AxisError, match="associative_scan: axis 2 out of range"):
        lax.associative_scan(lax.add, x, axis=2)
    with pytest.raises(TypeError, match="associative_scan: fn must return the structure"):
        lax.associative_scan(lambda p, q: p[0] + q[0], (x, x))
    with pytest.raises(ValueError, match="associative_scan: elems holds no arrays"):
        lax.associative_scan(lax.add, ())
