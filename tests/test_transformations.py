"""jvp and vmap at the API level, against JAX (x64) as the oracle: pytrees, in_axes/out_axes,
axis_size, nesting, symbolic zeros and error messages."""

from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
from mjcore import jvp, lax, make_jaxpr, vmap

jax.config.update("jax_enable_x64", True)

Point = collections.namedtuple("Point", ["x", "y"])


def _rand(*shape, seed=0):
    return onp.random.default_rng(seed).standard_normal(shape)


def _both(f_mj, f_jax, *args):
    out = f_mj(*args)
    expected = f_jax(*args)
    for a, b in zip(
        mjcore.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(expected), strict=True
    ):
        onp.testing.assert_allclose(onp.asarray(a), onp.asarray(b), rtol=1e-12, atol=1e-12)
        assert onp.asarray(a).shape == onp.asarray(b).shape


# --- vmap axes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "in_axes,shapes",
    [
        (0, [(3, 2), (3, 2)]),
        (1, [(2, 3), (2, 3)]),
        (-1, [(2, 3), (2, 3)]),
        ((0, None), [(3, 2), (2,)]),
        ((None, 1), [(2,), (2, 3)]),
        ((-2, 0), [(3, 2), (3, 2)]),
    ],
)
def test_vmap_in_axes_against_jax(in_axes, shapes):
    args = [_rand(*s, seed=i) for i, s in enumerate(shapes)]

    def f_mj(x, y):
        return lax.add(lax.mul(x, y), x)

    def f_jax(x, y):
        return x * y + x

    _both(vmap(f_mj, in_axes), jax.vmap(f_jax, in_axes), *args)


def test_vmap_pytree_in_axes_and_out_axes():
    x = {"a": _rand(4, 3), "b": _rand(3)}
    p = Point(_rand(3, 4, seed=1), 2.0)

    def f_mj(d, pt):
        s = lax.add(d["a"], d["b"])
        return {"sum": s, "scaled": lax.mul(pt.x, pt.y)}

    def f_jax(d, pt):
        return {"sum": d["a"] + d["b"], "scaled": pt.x * pt.y}

    in_axes = ({"a": 0, "b": None}, Point(1, None))
    out_axes = {"sum": 1, "scaled": -1}
    _both(vmap(f_mj, in_axes, out_axes), jax.vmap(f_jax, in_axes, out_axes), x, p)


def test_vmap_out_axes_none_for_unbatched_output():
    f = vmap(lambda x, y: (lax.add(x, 1.0), y), in_axes=(0, None), out_axes=(0, None))
    a, b = f(onp.arange(3.0), onp.ones(2))
    assert a.shape == (3,) and b.shape == (2,)
    with pytest.raises(ValueError, match="out_axes=None"):
        vmap(lambda x: x, out_axes=None)(onp.arange(3.0))


def test_vmap_axis_size_without_batched_inputs():
    out = vmap(lambda x: lax.add(x, 1.0), in_axes=None, axis_size=4)(onp.ones(2))
    assert out.shape == (4, 2)
    onp.testing.assert_array_equal(out, onp.full((4, 2), 2.0))
    with pytest.raises(ValueError, match="axis_size"):
        vmap(lambda x: x, in_axes=None)(onp.ones(2))


def test_vmap_inconsistent_sizes_error():
    with pytest.raises(ValueError, match="inconsistent sizes"):
        vmap(lax.add)(onp.ones(3), onp.ones(4))


def test_vmap_axis_out_of_range():
    with pytest.raises(ValueError, match="rank"):
        vmap(lax.neg, in_axes=2)(onp.ones((3, 2)))


def test_vmap_in_axes_must_be_prefix():
    with pytest.raises(ValueError, match="tree prefix"):
        vmap(lambda t: t[0], in_axes=((0, 0, 0),))((onp.ones(3), onp.ones(3)))


def test_nested_vmap_against_jax():
    x = _rand(2, 3, 4)
    y = _rand(4, 3, seed=1)

    def f_mj(a, b):
        return lax.mul(a, b)

    inner_mj = vmap(f_mj, in_axes=(0, 1))
    inner_jax = jax.vmap(lambda a, b: a * b, in_axes=(0, 1))
    _both(vmap(inner_mj, in_axes=(0, None)), jax.vmap(inner_jax, in_axes=(0, None)), x, y)


def test_vmap_of_python_scalar_closure_and_unbatched_output():
    out = vmap(lambda x: 3.0, axis_size=None, in_axes=0)(onp.arange(2.0))
    onp.testing.assert_array_equal(out, [3.0, 3.0])


# --- jvp ------------------------------------------------------------------------------------


def test_jvp_pytrees_against_jax():
    primals = ({"w": _rand(3), "b": 0.5}, _rand(3, seed=1))
    tangents = ({"w": _rand(3, seed=2), "b": 1.0}, _rand(3, seed=3))

    def f_mj(p, x):
        return {"y": lax.add(lax.mul(p["w"], x), p["b"]), "x": x}

    def f_jax(p, x):
        return {"y": p["w"] * x + p["b"], "x": x}

    out, out_dot = jvp(f_mj, primals, tangents)
    expected, expected_dot = jax.jvp(f_jax, primals, tangents)
    for a, b in zip(
        mjcore.tree_util.tree_leaves((out, out_dot)),
        jax.tree_util.tree_leaves((expected, expected_dot)),
        strict=True,
    ):
        onp.testing.assert_allclose(onp.asarray(a), onp.asarray(b), rtol=1e-14)


def test_jvp_structure_mismatch_is_type_error():
    with pytest.raises(TypeError, match="same tree structure"):
        jvp(lambda x: x, (1.0,), ((1.0, 2.0),))
    with pytest.raises(TypeError, match="tuples or lists"):
        jvp(lambda x: x, 1.0, 1.0)
    with pytest.raises(ValueError, match="shapes must match"):
        jvp(lambda x: x, (onp.ones(3),), (onp.ones(2),))


def test_symbolic_zeros_cost_nothing():
    # Differentiating only x: the y-only branch must not create tangent work in the jaxpr.
    def f(x, y):
        return lax.add(lax.mul(x, 2.0), lax.mul(lax.mul(y, y), y))

    def tangent_of_x(x, y):
        return jvp(lambda a: f(a, y), (x,), (1.0,))[1]

    jaxpr = make_jaxpr(tangent_of_x)(1.0, 2.0)
    muls = [e for e in jaxpr.eqns if e.primitive.name == "mul"]
    # primal: x*2, y*y, (y*y)*y; tangent: x_dot*2 only.
    assert len(muls) == 4


def test_jvp_of_vmap_and_vmap_of_jvp_against_jax():
    x = _rand(4, 3)
    t = _rand(4, 3, seed=1)

    def g_mj(a):
        return lax.mul(lax.mul(a, a), lax.sub(a, 1.0))

    def g_jax(a):
        return a * a * (a - 1.0)

    out1 = jvp(vmap(g_mj), (x,), (t,))[1]
    out2 = vmap(lambda a, b: jvp(g_mj, (a,), (b,))[1])(x, t)
    expected = jax.jvp(jax.vmap(g_jax), (x,), (t,))[1]
    onp.testing.assert_allclose(out1, expected, rtol=1e-13)
    onp.testing.assert_allclose(out2, expected, rtol=1e-13)


def test_integer_inputs_have_zero_tangents():
    y, y_dot = jvp(
        lambda n, x: lax.mul(lax.convert_element_type(n, onp.float64), x),
        (onp.int64(3), 2.0),
        (onp.int64(0), 1.0),
    )
    assert (float(y), float(y_dot)) == (6.0, 3.0)


def test_jax_eager_ops_agree_with_jnp_for_dtype_rules():
    # A float32 array times a Python scalar stays float32 under every transformation.
    x = onp.ones(3, onp.float32)
    out = vmap(lambda a: lax.mul(a, 2.0))(x)
    assert out.dtype == jnp.float32
    _, t = jvp(lambda a: lax.mul(a, 2.0), (x,), (x,))
    assert t.dtype == onp.float32


def test_numpy_never_computes_on_a_concrete_jvp_tracer():
    # A silent host conversion would drop the tangent: a zero derivative with no error.
    with pytest.raises(mjcore.TracerArrayConversionError, match="jvp"):
        jvp(lambda x: onp.sin(onp.asarray(x)), (1.0,), (1.0,))
