"""The examples of Autodidax Parts 1-3, with the numbers printed in the reference document."""

from __future__ import annotations

import numpy as onp
import pytest

import mjcore
import mjnp as np
from mjcore import jit, jvp, make_jaxpr, vmap


def f(x):
    y = np.sin(x) * 2.0
    z = -y + x
    return z


def deriv(fun):
    return lambda x: jvp(fun, (x,), (1.0,))[1]


def test_eval_interpreter():
    assert float(f(3.0)) == pytest.approx(2.7177599838802657, rel=1e-15)


def test_jvp_of_sin():
    _, sin_deriv_at_3 = jvp(np.sin, (3.0,), (1.0,))
    assert float(sin_deriv_at_3) == pytest.approx(-0.9899924966004454, rel=1e-15)


def test_jvp_of_f():
    y, ydot = jvp(f, (3.0,), (1.0,))
    assert float(y) == pytest.approx(2.7177599838802657, rel=1e-15)
    assert float(ydot) == pytest.approx(2.979984993200891, rel=1e-15)


def test_higher_derivatives_of_sin():
    expected = [-0.9899924966004454, -0.1411200080598672, 0.9899924966004454, 0.1411200080598672]
    fun = np.sin
    for value in expected:
        fun = deriv(fun)
        assert float(fun(3.0)) == pytest.approx(value, rel=1e-14)


def test_python_control_flow_under_jvp():
    def g(x):
        if x > 0.0:  # Python control flow on a concrete primal
            return 2.0 * x
        return x

    assert float(deriv(g)(3.0)) == 2.0
    assert float(deriv(g)(-3.0)) == 1.0


def test_second_derivative_of_f():
    assert float(deriv(deriv(f))(3.0)) == pytest.approx(0.2822400161197344, rel=1e-14)


def test_jvp_with_pytrees():
    def g(x):
        y = np.sin(x) * 2.0
        z = -y + x
        return {"hi": z, "there": [x, y]}

    y, ydot = jvp(g, (3.0,), (1.0,))
    assert float(y["hi"]) == pytest.approx(2.7177599838802657)
    assert float(y["there"][0]) == 3.0
    assert float(y["there"][1]) == pytest.approx(0.2822400161197344)
    assert float(ydot["hi"]) == pytest.approx(2.979984993200891)
    assert float(ydot["there"][0]) == 1.0
    assert float(ydot["there"][1]) == pytest.approx(-1.9799849932008908)


def test_vmap_add_one_to_a_scalar():
    def add_one_to_a_scalar(scalar):
        assert np.ndim(scalar) == 0
        return 1 + scalar

    out = vmap(add_one_to_a_scalar, (0,))(np.arange(3.0))
    onp.testing.assert_array_equal(out, [1.0, 2.0, 3.0])
    assert out.dtype == onp.float64


def test_jacfwd_from_vmap_of_jvp():
    def jacfwd(fun, x):
        pushfwd = lambda v: jvp(fun, (x,), (v,))[1]  # noqa: E731
        vecs_in = np.eye(np.size(x)).reshape(np.shape(x) * 2)
        return vmap(pushfwd, (0,))(vecs_in)

    out = jacfwd(np.sin, np.arange(3.0))
    onp.testing.assert_allclose(out, onp.diag(onp.cos(onp.arange(3.0))), rtol=1e-15)


def test_make_jaxpr_prints_understanding_jaxprs_grammar():
    def func1(first, second):
        temp = first + np.sin(second) * 3.0
        return np.sum(temp)

    jaxpr = make_jaxpr(func1)(np.zeros(8, np.float32), np.ones(8, np.float32))
    assert str(jaxpr) == (
        "{ lambda ; a:f32[8] b:f32[8]. let\n"
        "    c:f32[8] = sin b\n"
        "    d:f32[8] = mul c 3.0\n"
        "    e:f32[8] = add a d\n"
        "    f:f32[] = reduce_sum[axes=(0,)] e\n"
        "  in (f,) }"
    )


def test_make_jaxpr_single_line_and_typecheck():
    jaxpr = make_jaxpr(np.sin)(np.arange(3.0))
    assert str(jaxpr) == "{ lambda ; a:f64[3]. let b:f64[3] = sin a in (b,) }"
    assert mjcore.typecheck_jaxpr(jaxpr.jaxpr)[1][0].shape == (3,)


def test_make_jaxpr_stages_out_constant_computations():
    # Omnistaging: operations on constants are staged too.
    jaxpr = make_jaxpr(lambda: mjcore.lax.mul(2.0, 2.0))()
    assert str(jaxpr) == "{ lambda ; . let a:f64[] = mul 2.0 2.0 in (a,) }"


def test_make_jaxpr_hoists_array_constants():
    c = onp.arange(4.0)
    jaxpr = make_jaxpr(lambda x: x + c)(np.ones(4))
    assert str(jaxpr) == "{ lambda a:f64[4]; b:f64[4]. let c:f64[4] = add b a in (c,) }"
    onp.testing.assert_array_equal(jaxpr.consts[0], c)


def test_jit_traces_once_per_signature(capsys):
    @jit
    def g(x, y):
        print("tracing!")
        return np.sin(x) * np.cos(y)

    z = g(3.0, 4.0)
    assert float(z) == pytest.approx(-0.09224219304455371, rel=1e-14)
    z = g(4.0, 5.0)
    assert float(z) == pytest.approx(-0.21467624978306993, rel=1e-14)
    assert capsys.readouterr().out == "tracing!\n"


def test_jit_reduce_sum():
    @jit
    def g(x):
        return mjcore.lax.reduce_sum(x, axes=(0,))

    assert float(g(onp.array([1.0, 2.0, 3.0]))) == 6.0


def test_jit_of_second_derivative():
    assert float(jit(deriv(deriv(f)))(3.0)) == pytest.approx(0.2822400161197344, rel=1e-14)


def test_jvp_and_vmap_of_jit(capsys):
    @jit
    def g(x):
        print("tracing!")
        y = np.sin(x) * 2.0
        return -y + x

    y, ydot = jvp(g, (3.0,), (1.0,))
    assert float(y) == pytest.approx(2.7177599838802657)
    assert float(ydot) == pytest.approx(2.979984993200891)
    jvp(g, (3.0,), (1.0,))
    assert capsys.readouterr().out == "tracing!\n"
    ys = vmap(g, (0,))(np.arange(3.0))
    onp.testing.assert_allclose(ys, [0.0, -0.68294197, 0.18140515], atol=1e-8)
