"""Eager grad's last direct rules and host transposes (issue 18): floor, ceil, round, sign and
stop_gradient record nothing (`ad.CONSTANT`); rem, atan2, hypot, sinh, cosh, the inverse
trigonometric and hyperbolic functions, cbrt and exp2 compute their jvp's coefficients when a
cotangent arrives; reduce_prod, cumprod, cummax and cummin replay their jvp linearized and
transposed as one program (`ad.def_transposed_jvp_vjp`; reduce_prod's by NumPy calls); sort
sorts each cotangent by the keys' permutation, recomputed when it arrives, on the host.

Each gives the jvp route's bits (the direct rules switched off) and the bound primitives'
bits (the host paths switched off), JAX's (x64) gradients within rounding, binds nothing in
the backward pass, runs no jvp rule of these primitives in the forward pass and compiles
nothing on a new shape; outer transformations take the general path."""

from __future__ import annotations

import importlib

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
import mjnp as np
from mjcore import core, eager_vjp
from mjcore.backend import compat
from mjcore.lax import arithmetic, host_vjp, reductions, sorting, transcendental
from tests.outer_transformations import check_outer_transformations

stop_gradient_module = importlib.import_module("mjcore.lax.stop_gradient")

jax.config.update("jax_enable_x64", True)


def _lax(xp):
    return mjcore.lax if xp is np else jax.lax


# --- the programs ----------------------------------------------------------------------------


def _rounding(xp, x, y):  # x (3, 4), y (4,): zero derivatives beside live ones
    lax = _lax(xp)
    z = xp.floor(x * 3.0) * x + xp.ceil(y) * y + xp.round(x) * xp.sign(x - y)
    s = lax.stop_gradient(x * y) * x + xp.trunc(x * 2.0)
    return xp.sum(z * z) + xp.sum(s) + xp.sum(xp.floor(y))


def _remainders(xp, x, y):  # x (3, 4), y (4,): both operands differentiated, broadcast
    m = xp.mod(x * 3.0, 1.25) + xp.fmod(x * 2.0, y + 3.0) + xp.fmod(x[0] * 5.0, 1.5 + y * y)
    w = xp.remainder(2.5 + x * x, 0.75 + xp.abs(y)) - xp.mod(y * 4.0, 0.5)
    return xp.sum(m * m) + xp.sum(w * x)


def _hyperbolic(xp, x, y):  # x (3, 4), y (4,): the unary coefficient rules
    t = xp.tanh(x * y)
    a = xp.sinh(x) * xp.cosh(y) + xp.arcsin(t * 0.9) + xp.arccos(t * 0.8) * y
    b = xp.arctan(x * 2.0) + xp.arcsinh(x * y) + xp.arccosh(1.5 + x * x) + xp.arctanh(t * 0.7)
    c = xp.cbrt(x * y + 0.1) * xp.exp2(y * 0.5)
    return xp.sum(a * b) + xp.sum(c * x)


def _angles(xp, x, y):  # x (3, 4), y (4,): atan2 and hypot, one or both differentiated
    a = xp.arctan2(x, y + 2.0) + xp.arctan2(0.5, x) + xp.arctan2(y, 1.5)
    h = xp.hypot(x, y) * xp.hypot(x, 0.75) + xp.hypot(1.25, y * y)
    return xp.sum(a * a) + xp.sum(h * x)


def _scans(xp, x, y):  # x (3, 4), y (4,): cumulative products and extrema, products
    lax = _lax(xp)
    c = xp.cumprod(x * 0.5 + 1.0, axis=1) + lax.cumprod(y, axis=0, reverse=True)
    m = lax.cummax(x * y, axis=1) * lax.cummin(x, axis=0, reverse=True)
    p = xp.prod(x + 1.5, axis=0) * xp.prod(y) + xp.prod(x * 0.5, axis=1).sum()
    return xp.sum(c * c) + xp.sum(m) + xp.sum(p * y)


def _sorts(xp, x, y):  # x (3, 4), y (4,): sort's direct rule, a soft ranking loss
    lax = _lax(xp)
    s = xp.sort(x, axis=1) * xp.arange(4.0) + xp.sort(x * y, axis=0) ** 2
    r = xp.sort(y)[::-1] - xp.sort(x.ravel())[-4:]
    k, v = lax.sort_key_val(y * 2.0, x[0] * y)  # two differentiated operands
    a, b, i = lax.sort((x, x * x, xp.ones(x.shape, xp.int32)), dimension=0, num_keys=2)
    return xp.sum(s * x) + xp.sum(r * r) + xp.sum(k * v) + xp.sum(a * b * i)


_PROGRAMS = {
    "rounding": _rounding,
    "remainders": _remainders,
    "hyperbolic": _hyperbolic,
    "angles": _angles,
    "scans": _scans,
    "sorts": _sorts,
}


def _inputs(name: str, dtype) -> list[onp.ndarray]:
    rng = onp.random.default_rng(len(name))
    x = rng.normal(size=(3, 4)).astype(dtype)
    y = rng.normal(size=(4,)).astype(dtype)
    if name == "rounding":  # away from the jumps: finite differences stay on one step
        x = (onp.round(x * 6) / 6 + 1 / 12).astype(dtype)
        y = (onp.round(y * 6) / 6 + 1 / 12).astype(dtype)
    return [x, y]


def _grads(fun, args):
    return mjcore.grad(lambda *a: fun(np, *a), (0, 1))(*[np.asarray(a) for a in args])


def _assert_same_bits(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.aval == w.aval  # shape, dtype and weak type
        assert onp.asarray(g).tobytes() == onp.asarray(w).tobytes()


def _new_rules():
    sg = stop_gradient_module
    t = transcendental
    return [
        arithmetic.floor_p,
        arithmetic.ceil_p,
        arithmetic.round_p,
        arithmetic.sign_p,
        sg.stop_gradient_p,
        arithmetic.rem_p,
        t.sinh_p,
        t.cosh_p,
        t.asin_p,
        t.acos_p,
        t.atan_p,
        t.asinh_p,
        t.acosh_p,
        t.atanh_p,
        t.cbrt_p,
        t.exp2_p,
        t.atan2_p,
        t.hypot_p,
        sorting.sort_p,
        reductions.reduce_prod_p,
        sorting.cumprod_p,
        sorting.cummax_p,
        sorting.cummin_p,
    ]


def _direct_rules_off(monkeypatch):
    for prim in _new_rules():
        assert prim.eager_vjp_rule is not None
        monkeypatch.setattr(prim, "eager_vjp_rule", None)


def _host_paths_off(monkeypatch):
    # Every host path starts with this question (`host_value`, `apply`): the rules then bind.
    monkeypatch.setattr(host_vjp, "is_eager_host", lambda: False)


class _Count:
    """Counts, while eager grad runs: the primitives bound eagerly in the backward pass (on no
    tracer: not the one-time trace of a fused rule body), the jvp rules of `_new_rules()` run
    in the forward pass, and the executables compiled in either pass."""

    def __init__(self, monkeypatch):
        self.binds: list[str] = []
        self.jvps: list[str] = []
        self.compiles = {"forward": 0, "backward": 0}
        backward, bind, compile_and_load = eager_vjp.backward, core.bind, compat.compile_and_load
        inside: list[bool] = []

        def counting_bind(prim, args, params):
            if inside and not any(isinstance(x, core.Tracer) for x in args):
                self.binds.append(prim.name)
            return bind(prim, args, params)

        def counted_backward(*a, **k):
            inside.append(True)
            try:
                return backward(*a, **k)
            finally:
                inside.pop()

        def counted_compile(*a, **k):
            self.compiles["backward" if inside else "forward"] += 1
            return compile_and_load(*a, **k)

        monkeypatch.setattr(core, "bind", counting_bind)
        monkeypatch.setattr(eager_vjp, "backward", counted_backward)
        monkeypatch.setattr(compat, "compile_and_load", counted_compile)
        for prim in _new_rules():
            jvp = prim.jvp_rule

            def counted_jvp(primals, tangents, _jvp=jvp, _name=prim.name, **params):
                self.jvps.append(_name)
                return _jvp(primals, tangents, **params)

            monkeypatch.setattr(prim, "jvp_rule", counted_jvp)


# --- the tests -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [onp.float64, onp.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", list(_PROGRAMS))
def test_direct_rules_match_the_jvp_route_the_bound_primitives_and_jax(name, dtype, monkeypatch):
    fun = _PROGRAMS[name]
    args = _inputs(name, dtype)
    _grads(fun, args)  # (a fused rule body's one trace per shape binds its constants)
    count = _Count(monkeypatch)
    fast = _grads(fun, args)
    assert count.binds == []  # every cotangent computed on the host
    assert count.jvps == []  # no jvp rule of these primitives in the forward pass
    want = jax.jit(jax.grad(lambda *a: fun(jnp, *a), (0, 1)))(*args)
    tol = dict(rtol=1e-11, atol=1e-12) if dtype == onp.float64 else dict(rtol=2e-4, atol=2e-4)
    for g, w in zip(fast, want, strict=True):
        assert onp.asarray(g).dtype == w.dtype
        onp.testing.assert_allclose(onp.asarray(g), w, **tol)
    _direct_rules_off(monkeypatch)
    jvp_route = _grads(fun, args)
    assert count.jvps  # the general route: this test sees the difference
    _assert_same_bits(fast, jvp_route)
    _host_paths_off(monkeypatch)
    bound = _grads(fun, args)
    assert count.binds
    _assert_same_bits(fast, bound)


@pytest.mark.parametrize("name", [n for n in _PROGRAMS if n != "rounding"])  # (stop_gradient)
def test_gradients_match_finite_differences(name):
    fun = _PROGRAMS[name]
    x, y = _inputs(name, onp.float64)
    gx, gy = _grads(fun, [x, y])
    rng = onp.random.default_rng(7)
    dx, dy = rng.normal(size=x.shape), rng.normal(size=y.shape)
    eps = 1e-6

    def value(s):
        return float(fun(onp, x + s * dx, y + s * dy))

    numeric = (value(eps) - value(-eps)) / (2 * eps)
    analytic = float(onp.sum(onp.asarray(gx) * dx) + onp.sum(onp.asarray(gy) * dy))
    onp.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", list(_PROGRAMS))
def test_nothing_compiles_on_a_new_shape(name, monkeypatch):
    fun = _PROGRAMS[name]
    rng = onp.random.default_rng(3)
    count = _Count(monkeypatch)
    for n in (5, 6):  # shapes no other test uses
        x, y = rng.normal(size=(3, n)) + 0.1, rng.normal(size=(n,)) + 0.1
        if name == "sorts":  # `arange(4.0)` and `[-4:]` fix the width
            x, y = rng.normal(size=(n, 4)), rng.normal(size=(4,))
        _grads(fun, [x, y])
    assert count.compiles == {"forward": 0, "backward": 0}


@pytest.mark.parametrize("name", list(_PROGRAMS))
def test_outer_transformations_take_the_general_path(name):
    args = _inputs(name, onp.float64)
    check_outer_transformations(_PROGRAMS[name], args, 0.75)


def _tied(dtype):
    # Ties for the extrema and sorts, zeros for the products, exact halves for round
    x = onp.array([[1.0, -0.5, 1.0, 0.0], [2.0, 2.0, -1.5, 0.5], [0.0, 1.0, 1.0, -0.5]], dtype)
    return [x, onp.array([0.5, 0.0, 0.5, -2.0], dtype)]


@pytest.mark.parametrize("dtype", [onp.float64, onp.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", ["scans", "sorts", "rounding", "angles"])
def test_ties_and_zeros_give_the_jvp_routes_bits(name, dtype, monkeypatch):
    # cummax/cummin split ties as their scan's max/min do, products of zeros take the tree's
    # products, sorts move ties as the stable sort does, hypot's origin its corner values.
    fun = _PROGRAMS[name]
    args = _tied(dtype)
    with onp.errstate(invalid="ignore"):  # atan2(0, 0)'s partials are 0/0 on every route
        fast = _grads(fun, args)
        _direct_rules_off(monkeypatch)
        _assert_same_bits(fast, _grads(fun, args))
        _host_paths_off(monkeypatch)
        _assert_same_bits(fast, _grads(fun, args))


@pytest.mark.parametrize("weak", [False, True], ids=["strong", "weak"])
@pytest.mark.parametrize(
    "name",
    [
        "floor",
        "sign",
        "rem",
        "sinh",
        "cosh",
        "acos",
        "cbrt",
        "atan2",
        "hypot",
        "prod",
        "prod_of_one",
        "cummax",
    ],
)
def test_vjp_cotangents_keep_dtype_and_weak_type_as_the_jvp_route(name, weak, monkeypatch):
    from mjcore import lax
    from mjcore.lax.base import full

    fun = {
        "floor": lambda x: lax.add(lax.floor(x), x),
        "sign": lambda x: lax.mul(lax.sign(x), x),
        "rem": lambda x: lax.rem(x, lax.add(lax.abs(x), lax.full_like(x, 0.75))),
        "sinh": lax.sinh,
        "cosh": lax.cosh,
        "acos": lambda x: lax.acos(lax.mul(x, lax.full_like(x, 0.4))),
        "cbrt": lax.cbrt,
        "atan2": lambda x: lax.atan2(x, lax.add(x, lax.full_like(x, 3.0))),
        "hypot": lambda x: lax.hypot(x, lax.mul(x, x)),
        "prod": lambda x: lax.broadcast_in_dim(lax.reduce_prod(x, (0,)), (4,), ()),
        "prod_of_one": lambda x: lax.reduce_prod(lax.broadcast_in_dim(x, (1, 4), (1,)), (0,)),
        "cummax": lambda x: lax.cummax(x, 0),
    }[name]
    x = np.asarray(onp.array([-1.5, -0.25, 0.75, 2.0], onp.float32))
    if weak:  # a weak primal and cotangent (as Python scalars promote to)
        x = mjcore.lax.convert_element_type(x, onp.float32, weak_type=True)
    ct = full((4,), 0.5, onp.float32, weak_type=weak)

    def cotangent():
        _, f_vjp = mjcore.vjp(fun, x)
        return f_vjp(ct)

    fast = cotangent()
    _direct_rules_off(monkeypatch)
    _assert_same_bits(fast, cotangent())
    _host_paths_off(monkeypatch)
    _assert_same_bits(fast, cotangent())


def test_zero_derivatives_record_nothing():
    # floor, round, sign, stop_gradient of a differentiated value: a value on the tape, not an
    # entry; a function of them alone has a zero gradient, as through the jvp route.
    def f(x):
        return np.sum(np.floor(x) * np.sign(x) + np.round(x) + mjcore.lax.stop_gradient(x))

    tape_lengths = []
    forward = eager_vjp._forward

    def recorded(fun, primals):
        out = forward(fun, primals)
        tape_lengths.append(len(out[0]))
        return out

    x = np.asarray(onp.array([0.25, -1.5, 2.75]))
    eager_vjp._forward = recorded
    try:
        g = mjcore.grad(f)(x)
    finally:
        eager_vjp._forward = forward
    assert tape_lengths == [0]
    assert onp.asarray(g).tolist() == [0.0, 0.0, 0.0] and g.dtype == onp.float64


def test_large_operands_take_xla_as_dispatch_does(monkeypatch):
    # Above the host limits the coefficients and the scan's replayed program run on XLA, as
    # eager code would run them: the values are JAX's within rounding.
    rng = onp.random.default_rng(9)
    x = rng.normal(size=(300, 300)) * 0.1 + 1.0

    def f(xp, x):
        lax = _lax(xp)
        return xp.sum(xp.sinh(x) * xp.arctan2(x, 2.0)) + xp.sum(lax.cumprod(x, axis=0)[-1])

    got = mjcore.grad(lambda x: f(np, x))(np.asarray(x))
    want = jax.jit(jax.grad(lambda x: f(jnp, x)))(x)
    onp.testing.assert_allclose(onp.asarray(got), want, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("dtype", [onp.float64, onp.float32], ids=["float64", "float32"])
def test_products_with_signed_zeros_give_the_jvp_routes_bits(dtype, monkeypatch):
    # reduce_prod's host transpose joins the halves of each level as the slices' transposes
    # do (zero pads summed): -0.0 comes out +0.0 there too.
    x = onp.array([[-0.0, 2.0, -3.0, 0.5, -1.0], [0.0, -1.0, 5.0, -0.0, 2.0]], dtype)

    def f(x):
        return (
            np.sum(np.prod(x, axis=1) * np.asarray(onp.array([-1.0, 1.0], dtype)))
            + np.prod(x[:, :3], axis=0).sum()
        )

    def g(z):  # the cotangents p1 * ct of -0.0 are -0.0 before the join
        return np.sum(np.prod(z, axis=1))

    z = onp.array([[-0.0, 2.0], [3.0, -0.0], [-0.0, -0.0]], dtype)
    fast = [mjcore.grad(f)(np.asarray(x)), mjcore.grad(g)(np.asarray(z))]
    assert onp.signbit(onp.asarray(fast[0])).any()  # negatives in the result
    assert onp.asarray(fast[1]).tolist() == [[2.0, 0.0], [0.0, 3.0], [0.0, 0.0]]
    assert not onp.signbit(onp.asarray(fast[1])).any()  # +0.0, as the zero pads' sums give
    _direct_rules_off(monkeypatch)
    _assert_same_bits(fast, [mjcore.grad(f)(np.asarray(x)), mjcore.grad(g)(np.asarray(z))])
    _host_paths_off(monkeypatch)
    _assert_same_bits(fast, [mjcore.grad(f)(np.asarray(x)), mjcore.grad(g)(np.asarray(z))])


@pytest.mark.parametrize("dtype", [onp.float64, onp.float32], ids=["float64", "float32"])
def test_hypot_corners_give_the_jvp_routes_bits(dtype, monkeypatch):
    # The origin (1/2 each, as JAX), an infinite operand (0 beside it) and an overflowing hypot
    # (from the halved operands), on the host path, the jvp route and the bound primitives.
    big = onp.finfo(dtype).max / 2
    x = onp.array([0.0, onp.inf, big, 3.0, -0.0, 1.5], dtype)
    y = onp.array([0.0, 2.0, big, -4.0, 1.0, -onp.inf], dtype)

    def f(xp, x, y):
        return xp.sum(xp.hypot(x, y) * onp.array([1.0, 0.0, 1e-300, 1.0, 2.0, 0.0], dtype))

    grad = mjcore.grad(lambda x, y: f(np, x, y), (0, 1))
    with onp.errstate(over="ignore", invalid="ignore"):  # the values' own inf * 0 and the rest
        fast = grad(np.asarray(x), np.asarray(y))
        want = jax.grad(lambda x, y: f(jnp, x, y), (0, 1))(x, y)
        for g, w in zip(fast, want, strict=True):  # (the other corners are the jvp rule's)
            onp.testing.assert_allclose(onp.asarray(g)[[0, 3]], onp.asarray(w)[[0, 3]], rtol=1e-6)
        _direct_rules_off(monkeypatch)
        _assert_same_bits(fast, grad(np.asarray(x), np.asarray(y)))
        _host_paths_off(monkeypatch)
        _assert_same_bits(fast, grad(np.asarray(x), np.asarray(y)))


def test_large_scans_and_products_compile_nothing_in_the_backward_pass(monkeypatch):
    # Above the host limit a scan's vjp runs its equations one by one (host rules, and the
    # primitive's own executable, compiled by the forward pass), not a program per shape.
    rng = onp.random.default_rng(4)
    x = rng.uniform(0.9, 1.1, size=(300, 301))
    count = _Count(monkeypatch)

    def f(xp, x):
        lax = _lax(xp)
        return xp.sum(lax.cumprod(x, axis=1)[:, -1]) + xp.sum(xp.prod(x, axis=0))

    got = mjcore.grad(lambda x: f(np, x))(np.asarray(x))
    assert count.compiles["backward"] == 0
    want = jax.jit(jax.grad(lambda x: f(jnp, x)))(x)
    onp.testing.assert_allclose(onp.asarray(got), want, rtol=1e-10)


@pytest.mark.parametrize("dtype", [onp.float64, onp.float32], ids=["float64", "float32"])
def test_fused_bodies_numpy_constants_run_by_apply_host(dtype, monkeypatch):
    # `mod`'s body holds NumPy scalar constants (its zeros and ones): its equations on them run
    # by their host rules on the tape (`apply_host`), none through `process_primitive`'s bind;
    # the same values and gradients as each function's Python op by op.
    from mjcore import eager_fusion

    x = np.asarray(onp.random.default_rng(6).uniform(-4, 4, size=(5, 3)).astype(dtype))

    def f(x):
        m = np.mod(x * 1.5, 2.0) + np.remainder(3.0 - x, 0.75)
        return np.sum(m * m)

    fallbacks = []
    process = eager_vjp.VJPTrace.process_primitive

    def spy(self, prim, tracers, params):
        fallbacks.append(prim.name)
        return process(self, prim, tracers, params)

    monkeypatch.setattr(eager_vjp.VJPTrace, "process_primitive", spy)
    value, g = mjcore.value_and_grad(f)(x)
    assert fallbacks == []
    monkeypatch.setattr(eager_fusion, "_TAPE_TRACE", type(None))  # each function's Python
    value2, g2 = mjcore.value_and_grad(f)(x)
    assert fallbacks  # (op by op: this test sees the difference)
    _assert_same_bits([value, g], [value2, g2])
    want = jax.grad(lambda x: jnp.sum((jnp.mod(x * 1.5, 2.0) + jnp.remainder(3.0 - x, 0.75)) ** 2))
    tol = 1e-12 if dtype == onp.float64 else 1e-5
    onp.testing.assert_allclose(onp.asarray(g), want(onp.asarray(x)), rtol=tol, atol=tol)
