"""Eager grad's backward pass on the host (`mjcore.lax.host_vjp`): transpose and vjp rules
compute their cotangents by their primitives' host rules, without a bind each. The gradients
are the same to the bit as with every primitive bound (the fast paths switched off), of the
same dtypes and weak types, and JAX's (x64) within rounding; tracers of outer
transformations, large arrays and Python scalars take the general path."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
import mjnp as np
from mjcore import core, eager_vjp
from mjcore.lax import host_vjp
from tests.outer_transformations import check_outer_transformations

jax.config.update("jax_enable_x64", True)


# --- the programs: every rule with a host path, on either side of broadcasting ---------------


def _broadcasting(xp, a, b, c):  # a (3, 1), b (1, 4), c (4,)
    s = a + b - c * a / (2.0 + b * b)
    return xp.sum(s * s) - xp.sum(3.0 - a) + xp.sum(c / 4.0) + xp.sum(-(b * 2.0))


def _reductions(xp, x, y):  # x (3, 4) with ties, y (4,)
    m = xp.max(x, axis=1, keepdims=True)
    t = xp.min(xp.reshape(x, (2, 6)), axis=0)
    u = xp.sum(x, axis=0) * y + xp.sum(xp.mean(x, axis=1)[:, None] * x, axis=0)
    return xp.sum((x - m) ** 2) + xp.sum(t * t) + xp.sum(u) + xp.max(x) * xp.sum(y)


def _views(xp, x, y):  # x (3, 4), y (4,)
    parts = xp.concatenate([x[None], xp.ones((1, 3, 4)), (x * 2.0)[None]], axis=0)
    z = xp.roll(parts, 1, axis=2) + xp.roll(x, -1, axis=0)
    w = x.T[::2, 1:] + xp.squeeze(x[:1, :2].T[None], axis=0)[0]
    v = xp.reshape(z, (-1,))[3:20:3] + x[1, 1:3].astype(xp.float32).astype(x.dtype).sum()
    return xp.sum(z * z) + xp.sum(w**3) + xp.sum(v * v[::-1]) + xp.sum(xp.transpose(parts)[0])


def _products(xp, m, v, b):  # m (3, 4), v (4,), b (2, 4, 3)
    mv = m @ v
    vm = v @ m.T
    mm = m @ m.T
    batched = xp.matmul(b, m)
    e = xp.einsum("ij,kjl->ikl", m, b)
    return (
        xp.sum(mv * vm)
        + xp.sum(mm)
        + xp.dot(v, v)
        + xp.sum(batched**2)
        + xp.sum(e * e[::-1])
        + xp.sum(xp.outer(v, mv))
        + xp.sum(xp.tensordot(b, m, axes=([1, 2], [1, 0])) ** 2)
    )


def _transcendental(xp, x, y):  # x (3, 4), y (4,)
    h = xp.tanh(x * y)
    return xp.sum(xp.exp(h) * xp.log(1.5 + y * y)) + xp.sum(xp.tanh(h) / xp.exp(y))


def _gathers(xp, x, y):  # x (5, 4), y (4,)
    rows = onp.array([0, 2, 2, 4, 1, 0])
    cols = onp.array([1, 3, 3, 0, 2, 1])
    grid = x[rows.reshape(2, 3), cols.reshape(2, 3)]  # a batch of index vectors of rank 2
    return (
        xp.sum(x[rows, cols] ** 2)
        + xp.sum(x[rows] * y)
        + xp.sum(x[:, cols[:3]] ** 3)
        + xp.sum(grid * grid[::-1])
    )


def _selects(xp, x, y):  # x (3, 4), y (4,): select_n's transpose (where, abs, max/min, clip)
    w = xp.where(x > 0.2, x * y, -0.5 * x)
    a = xp.abs(x - y) * xp.maximum(x, y) + xp.minimum(x, 0.3)
    c = xp.clip(x * 1.5, -0.8, 0.9)
    tie = xp.maximum(x, x[::-1])  # the middle row ties with itself: half to each side
    return xp.sum(w * w) + xp.sum(a) + xp.sum(c * y) + xp.sum(tie * tie)


def _trig_powers(xp, x, y):  # x (3, 4), y (4,): sin, cos and integer_pow's vjps
    s = xp.sin(x * y) * xp.cos(x) + xp.cos(y) ** 3
    r = xp.sin(y) / (1.5 + x**2) + (1.0 + x * x) ** -2
    return xp.sum(s**2) + xp.sum(x**4 * y) + xp.sum(r * xp.cos(x) ** 1)


def _windows(xp, x, y):  # x (3, 4), y (4,): cumsum's, dynamic (update) slice's, pad's transposes
    lax = mjcore.lax if xp is np else jax.lax
    c = xp.cumsum(x * y, axis=1) + xp.cumsum(x[::-1], axis=0)
    d = lax.dynamic_slice(x, (1, 1), (2, 2))
    u = lax.dynamic_update_slice(x * 0.5, d * y[:2], (1, 2))
    p = lax.pad(x * y, xp.zeros((), x.dtype), ((1, 2, 1), (0, -1, 0)))
    return xp.sum(c * c) + xp.sum(d**3) + xp.sum(u * u) + xp.sum(p * p[::-1])


def _coefficients(xp, x, y):  # x (3, 4), y (4,): the direct rules of unary primitives
    lax = mjcore.lax if xp is np else jax.lax
    z = x * y
    a = xp.sqrt(1.0 + z * z) + lax.rsqrt(2.0 + x * x) + xp.tan(0.5 * xp.tanh(z))
    b = lax.logistic(z) * xp.log1p(xp.abs(z)) + xp.expm1(0.3 * x) * xp.abs(y)
    c = xp.power(1.0 + z * z, 1.5) + (2.0 + x * x) ** y + xp.power(1.2 + y * y, y)
    return xp.sum(a * b) + xp.sum(xp.sqrt(xp.abs(x)) * y) + xp.sum(c * xp.tanh(z))


_PROGRAMS = {
    "broadcasting": (_broadcasting, [(3, 1), (1, 4), (4,)]),
    "reductions": (_reductions, [(3, 4), (4,)]),
    "views": (_views, [(3, 4), (4,)]),
    "products": (_products, [(3, 4), (4,), (2, 4, 3)]),
    "transcendental": (_transcendental, [(3, 4), (4,)]),
    "gathers": (_gathers, [(5, 4), (4,)]),
    "selects": (_selects, [(3, 4), (4,)]),
    "trig_powers": (_trig_powers, [(3, 4), (4,)]),
    "windows": (_windows, [(3, 4), (4,)]),
    "coefficients": (_coefficients, [(3, 4), (4,)]),
}


def _inputs(name: str, dtype) -> list[onp.ndarray]:
    rng = onp.random.default_rng(len(name))
    args = [rng.normal(size=shape).astype(dtype) for shape in _PROGRAMS[name][1]]
    if name == "reductions":
        args[0] = onp.round(args[0] * 2).astype(dtype)  # ties for max and min
    return args


def _host_paths_off(monkeypatch):
    # Every host path starts with this question (`host_value`, `apply`): the rules then bind.
    monkeypatch.setattr(host_vjp, "is_eager_host", lambda: False)


def _grads(fun, args):
    argnums = tuple(range(len(args)))
    return mjcore.grad(lambda *a: fun(np, *a), argnums)(*[np.asarray(a) for a in args])


def _assert_same_bits(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.aval == w.aval  # shape, dtype and weak type
        assert onp.asarray(g).tobytes() == onp.asarray(w).tobytes()


class _CountBinds:
    """Counts the primitives bound eagerly (on no tracer: not the one-time trace of a fused
    rule body) while eager grad's backward pass runs."""

    def __init__(self, monkeypatch):
        self.names: list[str] = []
        backward, bind = eager_vjp.backward, core.bind
        inside = []

        def counting_bind(prim, args, params):
            if inside and not any(isinstance(x, core.Tracer) for x in args):
                self.names.append(prim.name)
            return bind(prim, args, params)

        def counted_backward(*a, **k):
            inside.append(True)
            try:
                return backward(*a, **k)
            finally:
                inside.pop()

        monkeypatch.setattr(core, "bind", counting_bind)
        monkeypatch.setattr(eager_vjp, "backward", counted_backward)


@pytest.mark.parametrize("dtype", [onp.float64, onp.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", list(_PROGRAMS))
def test_host_backward_matches_the_bound_primitives_to_the_bit_and_jax(name, dtype, monkeypatch):
    fun = _PROGRAMS[name][0]
    args = _inputs(name, dtype)
    binds = _CountBinds(monkeypatch)
    fast = _grads(fun, args)
    assert binds.names == []  # every cotangent computed on the host
    # JAX's oracle in one jitted program (eagerly it compiles each of its ops)
    want = jax.jit(jax.grad(lambda *a: fun(jnp, *a), tuple(range(len(args)))))(*args)
    tol = dict(rtol=1e-11, atol=1e-12) if dtype == onp.float64 else dict(rtol=2e-4, atol=2e-4)
    for g, w in zip(fast, want, strict=True):
        assert onp.asarray(g).dtype == w.dtype
        onp.testing.assert_allclose(onp.asarray(g), w, **tol)
    _host_paths_off(monkeypatch)
    bound = _grads(fun, args)
    assert binds.names  # the same rules, through dispatch: this test sees the difference
    _assert_same_bits(fast, bound)


@pytest.mark.parametrize("program", ["rnn", "gmm", "fluid"])
def test_the_benchmark_programs_to_the_bit_without_a_bind(program, monkeypatch):
    from benchmarks import eager_programs as ep

    if program == "rnn":
        params, onehot = ep.rnn_data()
        args = ([np.asarray(p) for p in params],)
        oh = np.asarray(onehot)
        fun = lambda p: ep.rnn_loss(np, p, oh)  # noqa: E731
    elif program == "gmm":
        params, x = ep.gmm_data()
        args = ([np.asarray(p) for p in params],)
        xx = np.asarray(x)
        fun = lambda p: ep.gmm_log_likelihood(np, p, xx)  # noqa: E731
    else:
        velocity, smoke, target = ep.fluid_data()
        args = (np.asarray(velocity),)
        s, t = np.asarray(smoke), np.asarray(target)
        fun = lambda v: ep.fluid_loss(np, v, s, t)  # noqa: E731
    binds = _CountBinds(monkeypatch)
    fast = mjcore.tree_util.tree_leaves(mjcore.grad(fun)(*args))
    assert binds.names == []
    _host_paths_off(monkeypatch)
    bound = mjcore.tree_util.tree_leaves(mjcore.grad(fun)(*args))
    assert binds.names
    _assert_same_bits(fast, bound)


def test_large_arrays_take_xla_as_dispatch_does(monkeypatch):
    # A 200x200 product (4e4 elements) runs on XLA in eager code: so does its transpose, and
    # a sum over 3e5 broadcast elements (reduce_sum's host limit is 2^18).
    rng = onp.random.default_rng(0)
    m = rng.normal(size=(200, 200))
    a, b = rng.normal(size=(600, 1)), rng.normal(size=(1, 500))

    def f(m, a, b):
        return np.sum(np.tanh(m @ m) ** 2) + np.sum((a + b) ** 2)

    binds = _CountBinds(monkeypatch)
    fast = mjcore.grad(f, (0, 1, 2))(np.asarray(m), np.asarray(a), np.asarray(b))
    assert binds.names.count("dot_general") == 2
    assert binds.names.count("reduce_sum") == 2
    want = jax.grad(
        lambda m, a, b: jnp.sum(jnp.tanh(m @ m) ** 2) + jnp.sum((a + b) ** 2), (0, 1, 2)
    )(m, a, b)
    for g, w in zip(fast, want, strict=True):
        onp.testing.assert_allclose(onp.asarray(g), w, rtol=1e-9, atol=1e-9)
    _host_paths_off(monkeypatch)
    _assert_same_bits(fast, mjcore.grad(f, (0, 1, 2))(np.asarray(m), np.asarray(a), np.asarray(b)))


@pytest.mark.parametrize(
    "name",
    [
        "broadcasting",
        "products",
        "reductions",
        "gathers",
        "selects",
        "trig_powers",
        "windows",
        "coefficients",
    ],
)
def test_outer_transformations_take_the_general_path(name):
    args = _inputs(name, onp.float64)
    check_outer_transformations(_PROGRAMS[name][0], args, 2)
    assert len(args) >= 2


def test_apply_is_the_bound_primitive_or_nothing():
    from mjcore.lax.arithmetic import div_p, mul_p
    from mjcore.lax.base import full

    x = np.asarray(onp.array([1.5, -0.0, 3.0], onp.float32))
    two = full((), 2, onp.float32, weak_type=True)  # a weak 0-d operand, as promotion makes
    out = host_vjp.apply(mul_p, x, two)
    want = mul_p.bind1(x, two)
    assert out.aval == want.aval and onp.asarray(out).tobytes() == onp.asarray(want).tobytes()
    for call in (host_vjp.apply, lambda p, *a: p.bind1(*a)):  # unpromoted, as bind takes it
        with pytest.raises(TypeError, match="mul requires arguments of one dtype"):
            call(mul_p, x, 2.0)
    numpy_operand = onp.array([2.0, 4.0, 0.5], onp.float32)  # read as dispatch reads it
    out = host_vjp.apply(div_p, x, numpy_operand)
    want = div_p.bind1(x, numpy_operand)
    assert out.aval == want.aval and onp.asarray(out).tobytes() == onp.asarray(want).tobytes()

    def traced(x):
        assert host_vjp.apply(mul_p, x, x) is None
        assert host_vjp.host_value(x) is None
        return x

    mjcore.make_jaxpr(traced)(x)

    def concrete_inside_jit(x):
        # a concrete Array while a jit traces: it is staged, not computed here
        assert host_vjp.host_value(np.asarray(onp.ones(2))) is None
        return x

    mjcore.jit(concrete_inside_jit)(x)


@pytest.mark.parametrize("layout", ["C", "transposed", "strided"])
def test_the_dot_plan_of_a_matrix_product_is_the_host_rules_np_dot(layout):
    # The transpose's host path runs the host rule's general plan for every product, also
    # where the rule itself calls np.dot(lhs, rhs) on matrices: the same arrays (views of the
    # same layout), so the same BLAS call and bits.
    from mjcore.lax.dot import (
        _MATRIX_PRODUCT,
        _dot_general_host,
        _dot_general_host_plan,
        _planned_product,
    )

    rng = onp.random.default_rng(3)
    for dtype in (onp.float64, onp.float32):
        a = rng.normal(size=(7, 5)).astype(dtype)
        b = rng.normal(size=(9, 5)).astype(dtype)
        if layout == "transposed":
            b = b.T
        elif layout == "strided":
            a = rng.normal(size=(14, 5)).astype(dtype)[::2]
            b = rng.normal(size=(5, 18)).astype(dtype)[:, ::2]
        else:
            b = onp.ascontiguousarray(b.T)
        want = _dot_general_host(
            a, b, dimension_numbers=_MATRIX_PRODUCT, preferred_element_type=None
        )
        plan = _dot_general_host_plan(a.shape, b.shape, _MATRIX_PRODUCT)
        assert _planned_product(a, b, plan).tobytes() == want.tobytes()


@pytest.mark.parametrize("host_paths", [True, False], ids=["host", "bound"])
def test_floating_point_errors_of_the_backward_pass_follow_numpys_state(host_paths, monkeypatch):
    # The host paths run NumPy under the user's error state, as the bound host rules do:
    # ct / 0 in div's vjp raises under errstate(divide="raise"), and is quiet under "ignore".
    if not host_paths:
        _host_paths_off(monkeypatch)
    x = np.asarray(onp.array([1.0, 2.0, 3.0]))
    y = np.asarray(onp.array([2.0, 0.0, 4.0]))
    with onp.errstate(all="ignore"):
        _, f_vjp = mjcore.vjp(lambda x: np.sum(x / y), x)
    with onp.errstate(divide="raise"), pytest.raises(FloatingPointError, match="divide by zero"):
        f_vjp(np.asarray(1.0))
    with onp.errstate(all="ignore"):
        (g,) = f_vjp(np.asarray(1.0))
    onp.testing.assert_array_equal(onp.asarray(g), [0.5, onp.inf, 0.25])


class _CountRuleBodies:
    """Counts the replays of the `fused_rule_body`s that sin's, cos's and integer_pow's vjps
    call where they have no host path (their replay binds nothing: `_CountBinds` cannot tell)."""

    def __init__(self, monkeypatch):
        from mjcore.lax import arithmetic, transcendental

        self.names: list[str] = []
        for module, name in [
            (transcendental, "_mul_by_cos"),
            (transcendental, "_mul_by_minus_sin"),
            (arithmetic, "_integer_pow_vjp_body"),
        ]:
            body = getattr(module, name)
            monkeypatch.setattr(module, name, self._counted(name, body))

    def _counted(self, name, body):
        def counted(*args, **params):
            self.names.append(name)
            return body(*args, **params)

        return counted


@pytest.mark.parametrize("dtype", [onp.float64, onp.float32], ids=["float64", "float32"])
def test_trig_and_integer_power_vjps_replay_no_rule_body_on_the_host(dtype, monkeypatch):
    fun = _PROGRAMS["trig_powers"][0]
    args = _inputs("trig_powers", dtype)
    bodies = _CountRuleBodies(monkeypatch)
    fast = _grads(fun, args)
    assert bodies.names == []
    _host_paths_off(monkeypatch)
    bound = _grads(fun, args)
    assert {"_mul_by_cos", "_mul_by_minus_sin", "_integer_pow_vjp_body"} <= set(bodies.names)
    _assert_same_bits(fast, bound)


def test_large_float32_sin_and_cos_replay_their_rule_bodies_as_dispatch_would(monkeypatch):
    # float32 sin/cos above the host limit (2^15 elements) run XLA's fast kernel in eager
    # code: so do their vjps' cos and sin (the rule bodies replayed), not NumPy's loops.
    x = onp.random.default_rng(5).normal(size=(200, 200)).astype(onp.float32)
    bodies = _CountRuleBodies(monkeypatch)

    def f(x):
        return np.sum(np.sin(x) * np.cos(x))

    got = mjcore.grad(f)(np.asarray(x))
    assert sorted(bodies.names) == ["_mul_by_cos", "_mul_by_minus_sin"]
    want = onp.cos(x.astype(onp.float64)) ** 2 - onp.sin(x.astype(onp.float64)) ** 2
    onp.testing.assert_allclose(onp.asarray(got), want, rtol=1e-5, atol=1e-5)


def _lax_cases():
    from mjcore import lax

    def where(x):
        return lax.select_n(lax.gt(x, lax.full_like(x, 0.0)), lax.mul(x, x), x)

    def three_cases(x):  # an int32 selector
        which = lax.convert_element_type(lax.sign(x), onp.int32)
        return lax.select_n(lax.add(which, lax.full_like(which, 1)), x, lax.neg(x), lax.mul(x, x))

    return {
        "sin": lax.sin,
        "cos": lax.cos,
        "cube": lambda x: lax.integer_pow(x, 3),
        "identity_power": lambda x: lax.integer_pow(x, 1),
        "inverse_square": lambda x: lax.integer_pow(x, -2),
        "where": where,
        "three_cases": three_cases,
        "abs": lax.abs,
        "max": lambda x: lax.max(x, lax.full_like(x, 0.25)),
        "clamp": lambda x: lax.clamp(lax.full_like(x, -0.5), x, lax.full_like(x, 0.5)),
        "sqrt": lambda x: lax.sqrt(lax.abs(x)),
        "rsqrt": lambda x: lax.rsqrt(lax.add(lax.mul(x, x), lax.full_like(x, 1.0))),
        "tan": lax.tan,
        "logistic": lax.logistic,
        "log1p": lambda x: lax.log1p(lax.abs(x)),
        "expm1": lax.expm1,
        "pow": lambda x: lax.pow(lax.abs(x), x),
    }


@pytest.mark.parametrize("name", list(_lax_cases()))
@pytest.mark.parametrize("weak", [False, True], ids=["strong", "weak"])
def test_vjp_cotangents_keep_dtype_and_weak_type_as_the_bound_rules(name, weak, monkeypatch):
    from mjcore.lax.base import full

    fun = _lax_cases()[name]

    x = np.asarray(onp.array([-1.5, -0.25, 0.75, 2.0], onp.float32))
    if weak:  # a weak primal and cotangent (as Python scalars promote to)
        x = mjcore.lax.convert_element_type(x, onp.float32, weak_type=True)
    ct = full((4,), 0.5, onp.float32, weak_type=weak)

    def cotangent():
        out, f_vjp = mjcore.vjp(fun, x)
        return f_vjp(ct)

    binds = _CountBinds(monkeypatch)
    fast = cotangent()
    assert binds.names == []
    for prim in _new_direct_rules():  # each primitive's jvp route, on the host
        monkeypatch.setattr(prim, "eager_vjp_rule", None)
    _assert_same_bits(fast, cotangent())
    _host_paths_off(monkeypatch)
    _assert_same_bits(fast, cotangent())


def _new_direct_rules():
    from mjcore.lax import arithmetic, base, transcendental

    return [
        base.select_n_p,
        arithmetic.max_p,
        arithmetic.min_p,
        arithmetic.abs_p,
        transcendental.sqrt_p,
        transcendental.rsqrt_p,
        transcendental.tan_p,
        transcendental.logistic_p,
        transcendental.log1p_p,
        transcendental.expm1_p,
        transcendental.pow_p,
    ]


@pytest.mark.parametrize("host_paths", [True, False], ids=["host", "bound"])
@pytest.mark.parametrize("dtype", [onp.float64, onp.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", ["selects", "coefficients"])
def test_direct_rules_give_their_jvp_routes_bits(name, dtype, host_paths, monkeypatch):
    # The direct rules (select_n: `ad.LINEAR`, the select recorded on the tape, its transpose
    # the vjp; max/min/abs: the transposes of their jvp's equations; sqrt, rsqrt, tan,
    # logistic, log1p, expm1, pow: their jvp's coefficients when a cotangent arrives) against each
    # primitive's jvp rule linearized and transposed, on the host and through dispatch.
    if not host_paths:
        _host_paths_off(monkeypatch)
    fun = _PROGRAMS[name][0]
    args = _inputs(name, dtype)
    direct = _grads(fun, args)
    for prim in _new_direct_rules():
        assert prim.eager_vjp_rule is not None
        monkeypatch.setattr(prim, "eager_vjp_rule", None)
    _assert_same_bits(direct, _grads(fun, args))


def test_complex_abs_direct_rule_gives_its_jvp_routes_bits(monkeypatch):
    from mjcore.lax.arithmetic import abs_p

    z = onp.array([1.5 - 2.0j, -0.25 + 0.5j, 0.0j, 3.0 + 0.0j])
    w = onp.array([0.5, -1.0, 2.0, 0.25])

    def f(xp, z, w):
        return xp.sum(xp.abs(z * w) * w)

    got = mjcore.grad(lambda z: f(np, z, np.asarray(w)))(np.asarray(z))
    want = jax.grad(lambda z: f(jnp, z, w))(z)
    onp.testing.assert_allclose(onp.asarray(got), want, rtol=1e-12)
    monkeypatch.setattr(abs_p, "eager_vjp_rule", None)
    _assert_same_bits([got], [mjcore.grad(lambda z: f(np, z, np.asarray(w)))(np.asarray(z))])


def test_comparisons_of_differentiated_values_run_no_jvp_rule(monkeypatch):
    # A comparison's direct rule: evaluated once, its boolean result untracked (a Python
    # branch on it works), the same gradients as through its jvp rule.
    from mjcore.lax import comparison

    prims = [comparison.gt_p, comparison.lt_p, comparison.ge_p, comparison.eq_p]
    calls = []
    for prim in prims:
        jvp = prim.jvp_rule
        monkeypatch.setattr(prim, "jvp_rule", lambda p, t, _jvp=jvp: calls.append(1) or _jvp(p, t))

    def f(x):
        big = x > 0.5
        scale = 2.0 if bool(big[0]) else 3.0
        keep = (x < 1.0) & (x >= -1.0) | (x == x[0])
        return np.sum(np.where(big, x * scale, x * x)) + np.sum(np.where(keep, x, 0.0))

    x = np.asarray(onp.array([0.75, -1.5, 0.25, 1.0, -0.5]))
    direct = mjcore.grad(f)(x)
    assert calls == []
    want = jax.grad(
        lambda x: (
            jnp.sum(jnp.where(x > 0.5, 2.0 * x, x * x))
            + jnp.sum(jnp.where((x < 1) & (x >= -1) | (x == x[0]), x, 0.0))
        )
    )(onp.asarray(x))
    onp.testing.assert_allclose(onp.asarray(direct), want, rtol=1e-15)
    for prim in prims:
        monkeypatch.setattr(prim, "eager_vjp_rule", None)
    _assert_same_bits([direct], [mjcore.grad(f)(x)])
    assert calls


@pytest.mark.parametrize("dtype", [onp.float64, onp.float32], ids=["float64", "float32"])
def test_scatter_add_transpose_replays_its_fill_gather_to_the_bit(dtype, monkeypatch):
    # `x.at[idx].add(v)`'s transpose in `v` (a fill-mode gather: masks, gather, select) as one
    # fused rule body: on the host without a bind, the same bits as op by op, JAX's values.
    import importlib

    gather = importlib.import_module("mjcore.lax.gather")  # (the package exports `gather`)
    rng = onp.random.default_rng(11)
    x0, v0 = rng.normal(size=(5, 3)).astype(dtype), rng.normal(size=(4, 3)).astype(dtype)
    idx = onp.array([1, 3, 1, -1])

    def f(xp, x, v):
        y = x.at[idx].add(v * v) + x.at[idx[:2], 2].add(v[1:3, 0])
        return xp.sum(y * y)

    grad = mjcore.grad(lambda x, v: f(np, x, v), (0, 1))
    grad(np.asarray(x0), np.asarray(v0))  # (the body's one trace binds its constants)
    binds = _CountBinds(monkeypatch)
    fused = grad(np.asarray(x0), np.asarray(v0))
    assert binds.names == []
    want = jax.jit(jax.grad(lambda x, v: f(jnp, x, v), (0, 1)))(x0, v0)
    for g, w in zip(fused, want, strict=True):
        onp.testing.assert_allclose(onp.asarray(g), w, rtol=1e-12 if dtype == onp.float64 else 1e-5)
    plain = gather._gather_updates  # op by op: each primitive bound
    monkeypatch.setattr(
        gather,
        "_gather_updates_body",
        lambda ct, i, *, updates_shape, dnums: plain(
            ct, i, updates_shape, gather.ScatterDimensionNumbers(*dnums)
        ),
    )
    bound = grad(np.asarray(x0), np.asarray(v0))
    assert "gather" in binds.names
    _assert_same_bits(fused, bound)
