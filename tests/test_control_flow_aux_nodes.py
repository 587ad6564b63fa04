"""Control flow whose carry is a pytree node with aux data and fewer children than fields
(JAX's `example_libraries.optimizers.OptimizerState` is one), against JAX (x64)."""

from collections import namedtuple

import jax
import numpy as np
import pytest

import mjcore
import mjnp
from mjcore import tree_util

jax.config.update("jax_enable_x64", True)

# A namedtuple whose flatten keeps only its first field as children (the rest is aux data).
State = namedtuple("State", ["packed", "treedef", "note"])
JaxState = namedtuple("JaxState", ["packed", "treedef", "note"])


def _flatten(s):
    return (s.packed,), (s.treedef, s.note)


tree_util.register_pytree_node(State, _flatten, lambda aux, ch: State(ch[0], *aux))
jax.tree_util.register_pytree_node(JaxState, _flatten, lambda aux, ch: JaxState(ch[0], *aux))

X0 = (np.arange(3.0), np.array(2.0))


def _step(np_, i, s):
    a, b = s.packed
    return type(s)((a * 0.5 + i, np_.sin(b) + a.sum()), s.treedef, s.note)


def test_fori_loop_with_aux_node_carry_matches_jax():
    got = mjcore.lax.fori_loop(0, 4, lambda i, s: _step(mjnp, i, s), State(X0, "t", 1))
    want = jax.lax.fori_loop(0, 4, lambda i, s: _step(jax.numpy, i, s), JaxState(X0, "t", 1))
    assert isinstance(got, State) and (got.treedef, got.note) == ("t", 1)
    for g, w in zip(got.packed, want.packed, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-14)


def test_fori_loop_with_aux_node_carry_under_jit_grad_vmap_matches_jax():
    def ours(x):
        s = mjcore.lax.fori_loop(0, 3, lambda i, s: _step(mjnp, i, s), State((x, x[0]), "t", 1))
        return mjnp.sum(s.packed[0]) + s.packed[1]

    def theirs(x):
        s = jax.lax.fori_loop(
            0, 3, lambda i, s: _step(jax.numpy, i, s), JaxState((x, x[0]), "t", 1)
        )
        return jax.numpy.sum(s.packed[0]) + s.packed[1]

    x = np.array([0.3, -1.2, 2.0])
    np.testing.assert_allclose(mjcore.jit(ours)(x), jax.jit(theirs)(x), rtol=1e-14)
    np.testing.assert_allclose(mjcore.grad(ours)(x), jax.grad(theirs)(x), rtol=1e-13)
    xs = np.stack([x, x + 1.0])
    np.testing.assert_allclose(mjcore.vmap(ours)(xs), jax.vmap(theirs)(xs), rtol=1e-14)


def test_scan_with_aux_node_carry_matches_jax():
    def body(np_, s, x):
        s = _step(np_, x, s)
        return s, s.packed[1]

    xs = np.array([1.0, 2.0, 3.0])
    got_s, got_ys = mjcore.lax.scan(lambda s, x: body(mjnp, s, x), State(X0, "t", 1), xs)
    want_s, want_ys = jax.lax.scan(lambda s, x: body(jax.numpy, s, x), JaxState(X0, "t", 1), xs)
    np.testing.assert_allclose(got_ys, want_ys, rtol=1e-14)
    np.testing.assert_allclose(got_s.packed[0], want_s.packed[0], rtol=1e-14)


def test_carry_type_error_names_the_leaf_of_an_aux_node():
    def body(i, s):
        a, b = s.packed
        return State((a, b.astype(np.float32)), s.treedef, s.note)

    with pytest.raises(TypeError, match=r"at \[1\]\[<flat index 0>\]\[1\] has type f64\[\]"):
        mjcore.lax.fori_loop(0, 2, body, State(X0, "t", 1))
