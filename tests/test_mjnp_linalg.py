"""Main-namespace products (mjnp/_matrix_products.py) against NumPy, under vmap and under jvp."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import mjcore
import mjnp
from tests.differential_registry import differential
from tests.mjnp_testing import (
    ALL_DTYPES,
    SETTINGS,
    assert_matches,
    check_against_numpy,
)
from tests.primitive_case import sample

# Exact small integers (as any dtype): products and their sums are exact, whatever the order.
_DOMAIN = (-3, 3)


@st.composite
def operand_pairs(draw, max_batch: int = 2):
    """Two arrays for a matrix product: 1-D, 2-D or batched, usually aligned, sometimes not."""
    dtypes = st.sampled_from(ALL_DTYPES)
    dt_a, dt_b = np.dtype(draw(dtypes)), np.dtype(draw(dtypes))
    n, k, m = (draw(st.integers(0, 3)) for _ in range(3))
    rank_a, rank_b = draw(st.integers(0, 2 + max_batch)), draw(st.integers(0, 2 + max_batch))
    batch = [draw(st.integers(1, 3)) for _ in range(max_batch)]

    def shape(rank, core):
        b = batch[max_batch - (rank - 2) :] if rank > 2 else []
        b = [1 if draw(st.integers(0, 3)) == 0 else d for d in b]  # broadcast some
        return tuple(b) + core[len(core) - min(rank, 2) :]

    shape_a, shape_b = shape(rank_a, (n, k)), shape(rank_b, (k, m))
    if draw(st.integers(0, 6)) == 0 and shape_b:
        shape_b = (*shape_b[:-1], shape_b[-1] + 1)  # misaligned for some rules
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return sample(rng, shape_a, dt_a, _DOMAIN), sample(rng, shape_b, dt_b, _DOMAIN)


@differential("dot", "inner", "matmul", "outer", "vdot")
@pytest.mark.parametrize("name", ["matmul", "dot", "inner", "outer", "vdot"])
@SETTINGS
@given(pair=operand_pairs())
def test_product_matches_numpy(name, pair):
    a, b = pair
    if name == "vdot" and a.size != b.size:
        b = b.reshape(-1)[: a.size] if b.size > a.size else np.resize(b, a.shape)
    check_against_numpy(getattr(mjnp, name), getattr(np, name), a, b)


def test_matmul_dtype_and_errors():
    a, b = np.ones((2, 3), np.int8), np.ones((3,), np.int8)
    check_against_numpy(mjnp.matmul, np.matmul, a, b, dtype=np.float32)
    with pytest.raises(TypeError, match="same_kind"):
        mjnp.matmul(np.ones((2, 2)), np.ones((2, 2)), dtype=np.int32)
    with pytest.raises(ValueError, match="not have enough dimensions"):
        mjnp.matmul(a, 2.0)
    with pytest.raises(ValueError, match="size 3 is different from 2"):
        mjnp.matmul(a, np.ones((2, 2)))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        mjnp.matmul(np.ones((2, 2, 3)), np.ones((3, 3, 2)))
    with pytest.raises(ValueError, match="not aligned"):
        mjnp.dot(a, np.ones(4))
    with pytest.raises(ValueError, match="different lengths"):
        mjnp.vdot(np.ones(3), np.ones(4))


def test_dot_of_python_scalars_is_strong():
    out = mjnp.dot(2.0, 3.0)
    assert out.dtype == np.float64 and not out.weak_type and float(out) == 6.0


@pytest.mark.parametrize(
    "shape_a, shape_b", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((5, 2, 3), (3,))]
)
def test_matmul_with_a_vector_is_one_dot_general(shape_a, shape_b):
    # No unit axis added and squeezed: XLA runs the vector forms (and their vmap and
    # transposes) as matrix-vector products, not as batches of 1x1 matrix products.
    a, b = np.ones(shape_a, np.float32), np.ones(shape_b, np.float32)
    jaxpr = mjcore.make_jaxpr(mjnp.matmul)(a, b).jaxpr
    assert [e.primitive.name for e in jaxpr.eqns] == ["dot_general"]


def test_per_example_gradient_of_a_vector_product_has_no_transpose():
    def loss(w, x, y):
        return mjnp.sum((mjnp.tanh(x @ w) - y) ** 2)

    w, x, y = np.ones(4, np.float32), np.ones((8, 4), np.float32), np.ones(8, np.float32)
    jaxpr = mjcore.make_jaxpr(mjcore.vmap(mjcore.grad(loss), in_axes=(None, 0, 0)))(w, x, y)
    names = {e.primitive.name for e in jaxpr.jaxpr.eqns}
    assert not names & {"transpose", "expand_dims", "squeeze", "reshape"}, jaxpr


@pytest.mark.parametrize("name", ["matmul", "dot", "inner", "outer", "vdot"])
def test_vmap_and_jvp(name):
    rng = np.random.default_rng(0)
    xs, w = rng.standard_normal((4, 2, 3)), rng.standard_normal((3, 3))
    if name in ("inner", "vdot", "outer"):
        w = w[0]
        xs = xs[:, 0]
    f_mj, f_np = getattr(mjnp, name), getattr(np, name)
    out = mjcore.vmap(lambda x: f_mj(x, w))(xs)
    assert_matches(out, np.stack([f_np(x, w) for x in xs]))
    out = mjcore.vmap(f_mj)(xs, np.stack([w] * 4))
    assert_matches(out, np.stack([f_np(x, w) for x in xs]))
    t_x, t_w = rng.standard_normal(xs[0].shape), rng.standard_normal(w.shape)
    y, y_dot = mjcore.jvp(f_mj, (xs[0], w), (t_x, t_w))
    assert_matches(y, f_np(xs[0], w))
    np.testing.assert_allclose(np.asarray(y_dot), f_np(t_x, w) + f_np(xs[0], t_w), rtol=1e-12)


def test_complex_vdot_conjugates():
    a = np.array([1 + 2j, 3 - 1j])
    b = np.array([2 - 1j, 1j])
    check_against_numpy(mjnp.vdot, np.vdot, a, b)
