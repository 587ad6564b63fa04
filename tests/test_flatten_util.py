"""`mjcore.flatten_util.ravel_pytree` against JAX's (x64): values, dtypes, unravel, errors,
and under jit, grad and vmap."""

import collections

import jax
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree as jax_ravel

import mjcore
import mjnp
from mjcore.flatten_util import ravel_pytree

jax.config.update("jax_enable_x64", True)

RNG = np.random.default_rng(0)
Point = collections.namedtuple("Point", ["x", "y"])

TREES = {
    "list-f64": [RNG.standard_normal((2, 3)), RNG.standard_normal(4)],
    "dict-nested": {"b": (RNG.standard_normal(()), [RNG.standard_normal((1, 2))]), "a": None},
    "namedtuple": Point(RNG.standard_normal(3), RNG.standard_normal((2, 2))),
    "mixed-f32-f64": [RNG.standard_normal(3).astype(np.float32), RNG.standard_normal(2)],
    "mixed-int-f64": {"n": np.arange(3), "w": RNG.standard_normal((2,))},
    "mixed-bool-int32": [np.array([True, False]), np.arange(4, dtype=np.int32)],
    "mixed-c128-f64": [RNG.standard_normal(2) + 1j, RNG.standard_normal(3)],
    "f32-only": (np.ones((2, 2), np.float32), np.zeros(0, np.float32)),
    "scalars": [1.5, np.float64(2.0), np.array(3.0)],
    "empty": [(), {}],
}


@pytest.mark.parametrize("name", list(TREES))
def test_ravel_and_unravel_match_jax(name):
    tree = TREES[name]
    flat, unravel = ravel_pytree(tree)
    want, jax_unravel = jax_ravel(tree)
    assert flat.dtype == want.dtype and flat.shape == want.shape
    np.testing.assert_array_equal(flat, want)
    back, jax_back = unravel(flat), jax_unravel(want)
    assert jax.tree_util.tree_structure(back) == jax.tree_util.tree_structure(jax_back)
    for g, w in zip(
        jax.tree_util.tree_leaves(back), jax.tree_util.tree_leaves(jax_back), strict=True
    ):
        assert np.asarray(g).dtype == np.asarray(w).dtype and np.shape(g) == np.shape(w)
        np.testing.assert_array_equal(g, w)


def test_unravel_of_one_dtype_is_dtype_polymorphic_like_jax():
    tree = [np.ones(2), np.ones((1, 2))]
    _, unravel = ravel_pytree(tree)
    _, jax_unravel = jax_ravel(tree)
    v = np.arange(4, dtype=np.float32)
    for g, w in zip(unravel(v), jax_unravel(v), strict=True):
        assert g.dtype == w.dtype == np.float32
        np.testing.assert_array_equal(g, w)


def test_unravel_errors_match_jax():
    _, unravel = ravel_pytree(TREES["mixed-f32-f64"])
    _, jax_unravel = jax_ravel(TREES["mixed-f32-f64"])
    wrong_dtype = np.zeros(5, np.float32)
    with pytest.raises(TypeError):
        jax_unravel(wrong_dtype)
    with pytest.raises(TypeError, match="given array of dtype float32, but expected dtype float64"):
        unravel(wrong_dtype)
    with pytest.raises(ValueError, match=r"expected an array of shape \(5,\), got shape \(4,\)"):
        unravel(np.zeros(4))


def test_unravel_is_hashable_and_equal_by_value():
    tree = TREES["dict-nested"]
    assert ravel_pytree(tree)[1] == ravel_pytree(tree)[1]
    assert hash(ravel_pytree(tree)[1]) == hash(ravel_pytree(tree)[1])


def _loss(np_, ravel, params):
    flat, unravel = ravel(params)
    p = unravel(np_.tanh(flat) * 2.0)
    return np_.sum(p["w"] ** 2) + np_.sum(np_.sin(p["b"][0])) * flat[0]


def test_ravel_under_grad_jit_vmap_matches_jax():
    params = {"w": RNG.standard_normal((2, 2)), "b": [RNG.standard_normal(3)]}
    got = mjcore.grad(lambda p: _loss(mjnp, ravel_pytree, p))(params)
    want = jax.grad(lambda p: _loss(jax.numpy, jax_ravel, p))(params)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-13)
    got = mjcore.jit(lambda p: ravel_pytree(p)[0])(params)
    np.testing.assert_array_equal(got, jax_ravel(params)[0])
    batched = {"w": RNG.standard_normal((3, 2, 2)), "b": [RNG.standard_normal((3, 3))]}
    got = mjcore.vmap(lambda p: _loss(mjnp, ravel_pytree, p))(batched)
    want = jax.vmap(lambda p: _loss(jax.numpy, jax_ravel, p))(batched)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    # Unravel a flat gradient: the usual optimiser pattern.
    flat, unravel = ravel_pytree(params)
    g = mjcore.grad(lambda v: _loss(mjnp, ravel_pytree, unravel(v)))(flat)
    jflat, junravel = jax_ravel(params)
    jg = jax.grad(lambda v: _loss(jax.numpy, jax_ravel, junravel(v)))(jflat)
    np.testing.assert_allclose(g, jg, rtol=1e-13)
