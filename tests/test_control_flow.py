"""Control flow (cond, switch, while_loop, fori_loop, scan) against JAX (x64) as the oracle.

Each program is written once against a namespace `L` (mjcore's or JAX's), then run under a
table of transformations and their nestings; plus the Autodidax Part 5 examples, error messages
and the printed form of jaxprs."""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
from mjcore import cond, fori_loop, lax, scan, switch, while_loop
from mjcore.core import get_aval
from mjcore.jaxpr import ClosedJaxpr, Jaxpr, typecheck_jaxpr
from mjcore.lax.reductions import reduce_sum
from mjcore.lax.transcendental import cos, sin

jax.config.update("jax_enable_x64", True)


def _mj_sum(x):
    return reduce_sum(x, tuple(range(get_aval(x).ndim)))


MJ = types.SimpleNamespace(
    cond=cond,
    switch=switch,
    while_loop=while_loop,
    fori_loop=fori_loop,
    scan=scan,
    add=lax.add,
    sub=lax.sub,
    mul=lax.mul,
    lt=lax.lt,
    gt=lax.gt,
    max=lax.max,
    sin=sin,
    cos=cos,
    sum=_mj_sum,
    f64=lambda x: lax.convert_element_type(x, onp.float64),
    jit=mjcore.jit,
    jvp=mjcore.jvp,
    vmap=mjcore.vmap,
    grad=mjcore.grad,
    linearize=mjcore.linearize,
    leaves=mjcore.tree_util.tree_leaves,
)

JX = types.SimpleNamespace(
    cond=jax.lax.cond,
    switch=jax.lax.switch,
    while_loop=jax.lax.while_loop,
    fori_loop=jax.lax.fori_loop,
    scan=jax.lax.scan,
    add=jax.lax.add,
    sub=jax.lax.sub,
    mul=jax.lax.mul,
    lt=jax.lax.lt,
    gt=jax.lax.gt,
    max=jax.lax.max,
    sin=jax.lax.sin,
    cos=jax.lax.cos,
    sum=jnp.sum,
    f64=lambda x: jax.lax.convert_element_type(x, onp.float64),
    jit=jax.jit,
    jvp=jax.jvp,
    vmap=jax.vmap,
    grad=jax.grad,
    linearize=jax.linearize,
    leaves=jax.tree_util.tree_leaves,
)


def _rand(*shape, seed=0):
    return onp.random.default_rng(seed).standard_normal(shape)


def _assert_trees_close(actual, expected, rtol=1e-9, atol=1e-9):
    a_leaves = mjcore.tree_util.tree_leaves(actual)
    e_leaves = jax.tree_util.tree_leaves(expected)
    assert len(a_leaves) == len(e_leaves)
    for a, e in zip(a_leaves, e_leaves, strict=True):
        a, e = onp.asarray(a), onp.asarray(e)
        assert a.shape == e.shape, (a.shape, e.shape)
        if e.dtype == jax.dtypes.float0:  # JAX's tangent type of integers; ours is int zeros
            assert not a.any()
            continue
        assert a.dtype == e.dtype, (a.dtype, e.dtype)
        onp.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


def _typecheck_all(jaxpr: Jaxpr) -> None:
    """Typecheck a jaxpr and every sub-jaxpr held by its equations."""
    typecheck_jaxpr(jaxpr)
    for eqn in jaxpr.eqns:
        for value in eqn.params.values():
            for sub in value if isinstance(value, tuple) else (value,):
                if isinstance(sub, ClosedJaxpr):
                    _typecheck_all(sub.jaxpr)


# --- the programs ---------------------------------------------------------------------------


def p_cond_scalar(L, x, y):
    return L.cond(L.gt(x, 0.0), lambda a: L.mul(a, L.sin(a)), lambda a: L.mul(a, 3.0), y)


def p_cond_pytree(L, p, x, v):
    c = onp.arange(3.0)  # a constant only the true branch closes over

    def true_fun(ops):
        return {"s": L.mul(ops[0], x), "v": L.add(L.mul(ops[1], c), x)}

    def false_fun(ops):
        return {"s": L.sin(ops[0]), "v": L.mul(ops[1], ops[1])}

    return L.cond(p, true_fun, false_fun, (x, v))


def p_switch(L, i, x, v):
    branches = [
        lambda a, b: (L.mul(a, a), L.sin(b)),
        lambda a, b: (L.sin(a), L.mul(b, a)),
        lambda a, b: (L.add(a, 1.0), b),
    ]
    return L.switch(i, branches, x, v)


def p_while_value(L, x):
    # The trip count depends on the value: a batched predicate under vmap.
    def body(c):
        k, y = c
        return L.add(k, 1), L.add(L.mul(y, 1.5), 0.25)

    return L.while_loop(lambda c: L.lt(c[1], 10.0), body, (0, x))


def p_while_bound(L, n, x):
    def body(c):
        k, y = c
        return L.add(k, 1), L.mul(y, L.cos(y))

    return L.while_loop(lambda c: L.lt(c[0], n), body, (0, x))[1]


def p_fori_static(L, x, v):
    def body(i, c):
        a, b = c
        return L.add(L.mul(a, 0.9), L.f64(i)), L.add(b, L.sin(L.mul(a, v)))

    return L.fori_loop(0, 4, body, (x, v))


def p_fori_traced(L, n, x):
    return L.fori_loop(0, n, lambda i, y: L.add(L.sin(y), L.f64(i)), x)


def p_scan(L, w, xs):
    def body(c, x):
        h, k = c
        h = L.sin(L.add(L.mul(h, w), x))
        return (h, L.add(k, 1)), {"h": h, "hx": L.mul(h, x)}

    return L.scan(body, (L.mul(w, 0.0), 0), xs)


def p_scan_reverse(L, w, xs):
    return L.scan(lambda c, x: (L.add(L.mul(c, w), x), L.mul(c, c)), w, xs, reverse=True)


def p_scan_no_xs(L, w):
    return L.scan(lambda c, _: (L.sin(L.mul(c, w)), c), w, None, length=3)


def p_scan_of_cond(L, w, xs):
    def body(c, x):
        c = L.cond(L.gt(x, 0.0), lambda a: L.mul(a, w), lambda a: L.sin(a), L.add(c, x))
        return c, L.mul(c, 2.0)

    return L.scan(body, 1.0, xs)


def p_cond_of_scan(L, x, xs):
    def with_scan(a):
        return L.scan(lambda c, y: (L.add(L.mul(c, y), 1.0), c), a, xs)[0]

    return L.cond(L.gt(x, 0.0), with_scan, L.sin, x)


def p_fori_of_cond(L, x):
    def body(i, y):
        return L.cond(L.gt(y, 1.0), lambda a: L.mul(a, 0.5), lambda a: L.add(L.mul(a, 3.0), 1.0), y)

    return L.fori_loop(0, 5, body, x)


def p_scan_of_scan(L, w, xss):
    def row(c, xs):
        inner, ys = L.scan(lambda a, x: (L.sin(L.add(L.mul(a, w), x)), L.mul(a, x)), c, xs)
        return L.add(inner, c), ys

    return L.scan(row, w, xss)


def p_while_of_cond(L, x):
    def body(c):
        k, y = c
        y = L.cond(L.gt(y, 0.0), lambda a: L.sub(L.mul(a, 0.5), 1.0), L.cos, y)
        return L.add(k, 1), y

    return L.while_loop(lambda c: L.lt(c[0], 4), body, (0, x))


def p_scan_int_xs(L, w, idx):
    return L.scan(lambda c, i: (L.add(L.mul(c, w), L.f64(i)), L.mul(c, c)), 1.0, idx)


class Program(NamedTuple):
    name: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    reverse: bool = True  # supports reverse mode


PROGRAMS = [
    Program("cond_scalar", p_cond_scalar, (0.7, 1.3)),
    Program("cond_pytree", p_cond_pytree, (True, 0.7, _rand(3))),
    Program("switch", p_switch, (1, 0.7, _rand(3))),
    Program("while_value", p_while_value, (0.5,), reverse=False),
    Program("while_bound", p_while_bound, (3, 0.4), reverse=False),
    Program("fori_static", p_fori_static, (0.3, _rand(2))),
    Program("fori_traced", p_fori_traced, (3, 0.4), reverse=False),
    Program("scan", p_scan, (_rand(2, seed=1), _rand(4, 2))),
    Program("scan_reverse", p_scan_reverse, (0.8, _rand(4))),
    Program("scan_no_xs", p_scan_no_xs, (0.8,)),
    Program("scan_of_cond", p_scan_of_cond, (0.8, _rand(5))),
    Program("cond_of_scan", p_cond_of_scan, (0.6, _rand(3))),
    Program("fori_of_cond", p_fori_of_cond, (0.6,)),
    Program("scan_of_scan", p_scan_of_scan, (0.7, _rand(3, 4))),
    Program("while_of_cond", p_while_of_cond, (0.6,), reverse=False),
    Program("scan_int_xs", p_scan_int_xs, (0.7, onp.array([3, -1, 2]))),
]


def _is_float(x) -> bool:
    return onp.asarray(x).dtype.kind == "f"


def _batch(x, size=3):
    """`size` variants of an argument stacked on a new axis 0."""
    x = onp.asarray(x)
    if x.dtype.kind == "b":
        return onp.stack([x, ~x, x][:size])
    if x.dtype.kind in "iu":
        return onp.stack([x - 1, x, x + 1][:size])  # the first may be out of switch's range
    return onp.stack([x + 0.3 * k * (-1) ** k for k in range(size)])


def _split(prog: Program):
    """(function of the float arguments only, the float arguments, their positions)."""
    pos = [i for i, a in enumerate(prog.args) if _is_float(a)]

    def make(L):
        def f(*floats):
            args = list(prog.args)
            for i, v in zip(pos, floats, strict=True):
                args[i] = v
            return prog.fn(L, *args)

        return f

    return make, tuple(prog.args[i] for i in pos), pos


def _total(L, out):
    leaves = [x for x in L.leaves(out) if onp.dtype(x.dtype).kind == "f"]
    total = L.sum(leaves[0])
    for x in leaves[1:]:
        total = L.add(total, L.sum(x))
    return total


def _tangents(args):
    return tuple(_rand(*onp.shape(a), seed=7 + i) for i, a in enumerate(args))


def _run(transform: str, L, prog: Program):
    make, floats, pos = _split(prog)
    f = make(L)
    full = lambda *a: prog.fn(L, *a)  # noqa: E731
    argnums = tuple(range(len(floats)))
    loss = lambda *a: _total(L, f(*a))  # noqa: E731
    if transform == "eager":
        return f(*floats)
    if transform == "jit":
        return L.jit(full)(*prog.args)
    if transform == "jvp":
        return L.jvp(f, floats, _tangents(floats))
    if transform == "linearize":
        out, f_lin = L.linearize(f, *floats)
        return out, f_lin(*_tangents(floats))
    if transform == "vmap":
        return L.vmap(full)(*map(_batch, prog.args))
    if transform == "vmap_data_only":  # predicate / index / bound unbatched
        axes = tuple(0 if _is_float(a) else None for a in prog.args)
        args = [_batch(a) if _is_float(a) else a for a in prog.args]
        return L.vmap(full, in_axes=axes)(*args)
    if transform == "vmap_control_only":  # only predicate / index / bound batched
        axes = tuple(None if _is_float(a) else 0 for a in prog.args)
        args = [a if _is_float(a) else _batch(a) for a in prog.args]
        return L.vmap(full, in_axes=axes)(*args)
    if transform == "jit_vmap":
        return L.jit(L.vmap(full))(*map(_batch, prog.args))
    if transform == "jvp_vmap":
        batched = tuple(map(_batch, floats))
        return L.jvp(L.vmap(f), batched, _tangents(batched))
    if transform == "grad":
        return L.grad(loss, argnums)(*floats)
    if transform == "jit_grad":
        return L.jit(L.grad(loss, argnums))(*floats)
    if transform == "grad_jit":
        return L.grad(lambda *a: _total(L, L.jit(f)(*a)), argnums)(*floats)
    if transform == "vmap_grad":
        return L.vmap(L.grad(loss, argnums))(*map(_batch, floats))
    if transform == "jvp_grad":  # forward-over-reverse: jvp of transposed control flow
        return L.jvp(L.grad(loss, argnums), floats, _tangents(floats))
    raise AssertionError(transform)


FORWARD = ["eager", "jit", "jvp", "linearize", "vmap", "jit_vmap", "jvp_vmap"]
CONTROL = ["vmap_data_only", "vmap_control_only"]
REVERSE = ["grad", "jit_grad", "grad_jit", "vmap_grad", "jvp_grad"]


def _transforms(prog: Program) -> list[str]:
    has_control_arg = any(not _is_float(a) for a in prog.args)
    return FORWARD + (CONTROL if has_control_arg else []) + (REVERSE if prog.reverse else [])


def _cases():
    for prog in PROGRAMS:
        for t in _transforms(prog):
            yield pytest.param(prog, t, id=f"{prog.name}-{t}")


@functools.cache
def _expected(name: str) -> dict[str, Any]:
    """JAX's results for program `name` under each of its transformations, from one jax.jit:
    a single compile per program instead of one per eager op (or one per transformation)."""
    prog = next(p for p in PROGRAMS if p.name == name)
    return jax.jit(lambda: {t: _run(t, JX, prog) for t in _transforms(prog)})()


@pytest.mark.parametrize("prog,transform", list(_cases()))
def test_program_against_jax(prog, transform):
    _assert_trees_close(_run(transform, MJ, prog), _expected(prog.name)[transform])


@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.name)
def test_program_jaxprs_typecheck(prog):
    make, floats, _ = _split(prog)
    f = make(MJ)
    _typecheck_all(mjcore.make_jaxpr(lambda *a: prog.fn(MJ, *a))(*prog.args).jaxpr)
    _typecheck_all(mjcore.make_jaxpr(mjcore.vmap(f))(*map(_batch, floats)).jaxpr)
    _typecheck_all(mjcore.make_jaxpr(lambda *a: mjcore.jvp(f, a, _tangents(floats)))(*floats).jaxpr)
    if prog.reverse:
        loss = lambda *a: _total(MJ, f(*a))  # noqa: E731
        grad = mjcore.grad(loss, tuple(range(len(floats))))
        _typecheck_all(mjcore.make_jaxpr(grad)(*floats).jaxpr)


# --- Autodidax Part 5 -----------------------------------------------------------------------


def test_autodidax_cond_eager():
    assert int(cond(True, lambda: 3, lambda: 4)) == 3


def test_autodidax_cond_jvp():
    _, out_tan = mjcore.jvp(
        lambda x: cond(True, lambda: lax.mul(x, x), lambda: 0.0), (1.0,), (1.0,)
    )
    assert float(out_tan) == 2.0


def test_autodidax_cond_vmap():
    xs = onp.array([1.0, 2.0, 3.0])
    out = mjcore.vmap(lambda x: cond(True, lambda: lax.add(x, 1.0), lambda: 0.0), (0,))(xs)
    onp.testing.assert_array_equal(onp.asarray(out), [2.0, 3.0, 4.0])


def test_autodidax_cond_jit():
    assert int(mjcore.jit(lambda: cond(False, lambda: 1, lambda: 2))()) == 2


@pytest.mark.parametrize("wrap", [lambda f: f, mjcore.jit], ids=["plain", "jit"])
def test_autodidax_cond_linearize(wrap):
    _, f_lin = mjcore.linearize(wrap(lambda x: cond(True, lambda: x, lambda: 0.0)), 1.0)
    assert float(f_lin(3.14)) == 3.14


def test_autodidax_cond_grad():
    assert float(mjcore.grad(lambda x: cond(True, lambda: lax.mul(x, x), lambda: 0.0))(1.0)) == 2.0


# --- semantics ------------------------------------------------------------------------------


def _three_branches(L):
    return [lambda x: L.add(x, 1.0), lambda x: L.sub(x, 2.0), lambda x: L.mul(x, 3.0)]


@pytest.mark.parametrize("index", [-5, 0, 1, 2, 9])
def test_switch_clamps_the_index(index):
    expected = jax.lax.switch(index, _three_branches(JX), 5.0)
    _assert_trees_close(switch(index, _three_branches(MJ), 5.0), expected)
    jitted = mjcore.jit(lambda i: switch(i, _three_branches(MJ), 5.0))
    _assert_trees_close(jitted(index), expected)


def test_switch_batched_index_clamps():
    indices = onp.array([-5, 0, 1, 2, 9])
    f = lambda L: L.vmap(lambda i: L.switch(i, _three_branches(L), 5.0))  # noqa: E731
    _assert_trees_close(f(MJ)(indices), f(JX)(indices))


def test_cond_with_numeric_predicate():
    for pred in (2.0, 0.0, 3, 0):
        _assert_trees_close(
            cond(pred, MJ.sin, lambda x: lax.neg(x), 1.0),
            jax.lax.cond(pred, JX.sin, lambda x: -x, 1.0),
        )


def test_weak_initial_carry_is_promoted():
    def body(L):
        return lambda i, x: L.add(L.f64(x), 0.5)

    _assert_trees_close(fori_loop(0, 3, body(MJ), 0), jax.lax.fori_loop(0, 3, body(JX), 0))
    n = onp.int32(3)
    _assert_trees_close(
        mjcore.jit(lambda n: fori_loop(0, n, body(MJ), 0))(n),
        jax.jit(lambda n: jax.lax.fori_loop(0, n, body(JX), 0))(n),
    )


def test_scan_with_none_ys_and_zero_length():
    def f(L, xs):
        return L.scan(lambda c, x: (L.add(L.mul(c, 2.0), x), None), 1.0, xs)

    for xs in (onp.arange(4.0), onp.zeros((0,))):
        _assert_trees_close(f(MJ, xs), f(JX, xs))
        _assert_trees_close(mjcore.jit(lambda xs: f(MJ, xs))(xs), f(JX, xs))
        _assert_trees_close(
            mjcore.grad(lambda xs: f(MJ, xs)[0])(xs), jax.grad(lambda xs: f(JX, xs)[0])(xs)
        )


def test_fori_loop_is_a_scan_for_static_bounds_and_a_while_otherwise():
    def f(n, x):
        return fori_loop(0, n, lambda i, y: lax.add(y, 1.0), x)

    static = mjcore.make_jaxpr(lambda x: f(3, x))(1.0)
    traced = mjcore.make_jaxpr(f)(3, 1.0)
    assert [e.primitive.name for e in static.eqns] == ["scan"]
    assert [e.primitive.name for e in traced.eqns][-1] == "while"


def test_grad_of_fori_loop_with_concrete_array_bounds():
    n = mjcore.device_put(onp.int64(4))
    g = mjcore.grad(lambda x: fori_loop(0, n, lambda i, c: lax.mul(c, x), 1.0))(2.0)
    assert float(g) == 32.0


def test_batched_while_predicate_keeps_finished_examples():
    xs = onp.array([0.5, 20.0, 3.0])
    _assert_trees_close(
        MJ.vmap(lambda x: p_while_value(MJ, x))(xs), jax.vmap(lambda x: p_while_value(JX, x))(xs)
    )


def test_cond_joins_a_shared_constant_once():
    c = onp.arange(3.0)
    closed = mjcore.make_jaxpr(
        lambda p, x: cond(p, lambda y: lax.mul(y, c), lambda y: lax.add(y, c), x)
    )(True, onp.ones(3))
    assert len(closed.jaxpr.constvars) == 1
    (cond_eqn,) = [e for e in closed.eqns if e.primitive.name == "cond"]
    assert len(cond_eqn.inputs) == 3  # index, the shared constant, the operand


def test_cond_residuals_of_equal_type_share_slots():
    def f(L):
        branches = (lambda a: L.sin(L.sin(a)), lambda a: L.cos(L.cos(a)))
        return lambda x: L.cond(L.gt(x, 0.0), *branches, x)

    closed = mjcore.make_jaxpr(mjcore.grad(f(MJ)))(1.0)
    known = [e for e in closed.eqns if e.primitive.name == "cond"][0]
    assert len(known.out_binders) == 3  # the primal and two residual slots, not four
    _typecheck_all(closed.jaxpr)
    for x in (1.0, -1.0):
        _assert_trees_close(mjcore.grad(f(MJ))(x), jax.grad(f(JX))(x))


def test_while_loop_under_linearize_of_jit():
    f = mjcore.jit(lambda x: p_while_bound(MJ, 3, x))
    out, f_lin = mjcore.linearize(f, 0.4)
    expected, f_lin_jax = jax.linearize(jax.jit(lambda x: p_while_bound(JX, 3, x)), 0.4)
    _assert_trees_close((out, f_lin(0.5)), (expected, f_lin_jax(0.5)))


# --- errors ---------------------------------------------------------------------------------


def _unit(x):
    return x


ERRORS = [
    (
        "cond-types",
        lambda: cond(True, _unit, lambda x: lax.convert_element_type(x, onp.float32), 1.0),
        TypeError,
        r"output of true_fun has type f64\[\] but the output of false_fun has type f32\[\]",
    ),
    (
        "cond-types-leaf-path",
        lambda: cond(
            True,
            lambda x: (x, {"a": x}),
            lambda x: (x, {"a": lax.broadcast_in_dim(x, (3,), ())}),
            1.0,
        ),
        TypeError,
        r"true_fun at \[1\]\['a'\] has type f64\[\] but .* false_fun at \[1\]\['a'\] has type "
        r"f64\[3\]",
    ),
    (
        "cond-structure",
        lambda: cond(True, lambda x: (x, x), lambda x: [x, x], 1.0),
        TypeError,
        "same pytree structure",
    ),
    ("cond-pred-shape", lambda: cond(onp.array([True]), _unit, _unit, 1.0), TypeError, "scalar"),
    ("cond-pred-complex", lambda: cond(1j, _unit, _unit, 1.0), TypeError, "complex128"),
    ("cond-not-callable", lambda: cond(True, 1.0, _unit, 1.0), TypeError, "callable"),
    ("switch-float-index", lambda: switch(1.0, [_unit], 1.0), TypeError, "integer"),
    ("switch-empty", lambda: switch(0, [], 1.0), ValueError, "non-empty"),
    (
        "switch-types",
        lambda: switch(0, [_unit, _unit, lambda x: (x,)], 1.0),
        TypeError,
        "branch 0 and the output of branch 2",
    ),
    (
        "scan-carry-type",
        lambda: scan(
            lambda c, x: ({"w": lax.broadcast_in_dim(c["w"], (2,), ())}, x),
            {"w": 0.0},
            onp.zeros(3),
        ),
        TypeError,
        r"input carry at \['w'\] has type f64\[\] but the carry output at \['w'\] has type "
        r"f64\[2\]",
    ),
    (
        "scan-carry-structure",
        lambda: scan(lambda c, x: ((c,), x), 0.0, onp.zeros(3)),
        TypeError,
        "same pytree structure",
    ),
    ("scan-not-pair", lambda: scan(lambda c, x: c, 0.0, onp.zeros(3)), TypeError, "pair"),
    (
        "scan-lengths",
        lambda: scan(lambda c, x: (c, x), 0.0, (onp.zeros(3), onp.zeros(4))),
        ValueError,
        r"xs\[0\]: 3, xs\[1\]: 4",
    ),
    (
        "scan-length-arg",
        lambda: scan(lambda c, x: (c, x), 0.0, onp.zeros(3), length=4),
        ValueError,
        "length=4",
    ),
    ("scan-no-length", lambda: scan(lambda c, x: (c, x), 0.0, None), ValueError, "length"),
    ("scan-scalar-xs", lambda: scan(lambda c, x: (c, x), 0.0, 1.0), ValueError, "leading axis"),
    (
        "while-carry-type",
        lambda: while_loop(lambda c: lax.lt(c[0], 3), lambda c: (c[0], lax.mul(c[0], 0)), (0, 1.0)),
        TypeError,
        r"input carry at \[1\] has type f64\[\] but the carry output at \[1\] has type i64\[\]",
    ),
    (
        "while-cond-not-bool",
        lambda: while_loop(_unit, lambda c: lax.add(c, 1.0), 0.0),
        TypeError,
        "boolean scalar",
    ),
    (
        "while-grad",
        lambda: mjcore.grad(lambda x: p_while_bound(MJ, 3, x))(0.4),
        ValueError,
        "Reverse-mode.*while_loop.*scan.*fori_loop with static",
    ),
    (
        "fori-traced-grad",
        lambda: mjcore.jit(mjcore.grad(lambda x, n: p_fori_traced(MJ, n, x)))(0.4, 3),
        ValueError,
        "Reverse-mode",
    ),
    ("fori-float-bound", lambda: fori_loop(0.0, 3, lambda i, x: x, 0), TypeError, "integer"),
]


@pytest.mark.parametrize("fn,exc,match", [pytest.param(*e[1:], id=e[0]) for e in ERRORS])
def test_error_messages(fn, exc, match):
    with pytest.raises(exc, match=match):
        fn()


# --- printing (the shape of "Understanding Jaxprs") -------------------------------------------


def test_print_cond():
    def func7(arg):
        return cond(lax.ge(arg, 0.0), lambda x: lax.add(x, 3.0), lambda x: lax.sub(x, 3.0), arg)

    assert str(mjcore.make_jaxpr(func7)(5.0)) == (
        "{ lambda ; a:f64[]. let\n"
        "    b:bool[] = ge a 0.0\n"
        "    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b\n"
        "    d:f64[] = cond[\n"
        "      branches=(\n"
        "        { lambda ; e:f64[]. let f:f64[] = sub e 3.0 in (f,) }\n"
        "        { lambda ; g:f64[]. let h:f64[] = add g 3.0 in (h,) }\n"
        "      )\n"
        "    ] c a\n"
        "  in (d,) }"
    )


def test_print_while():
    def func10(arg, n):
        return fori_loop(0, n, lambda i, carry: lax.add(carry, arg), arg)

    assert str(mjcore.make_jaxpr(func10)(onp.ones(16), 5)) == (
        "{ lambda ; a:f64[16] b:i64[]. let\n"
        "    _:i64[] _:i64[] c:f64[16] = while[\n"
        "      body_jaxpr={ lambda ; d:f64[16] e:i64[] f:i64[] g:f64[16]. let\n"
        "          h:i64[] = add e 1\n"
        "          i:f64[16] = add g d\n"
        "        in (h, f, i) }\n"
        "      body_nconsts=1\n"
        "      cond_jaxpr={ lambda ; j:i64[] k:i64[] _:f64[16]. let l:bool[] = lt j k in (l,) }\n"
        "      cond_nconsts=0\n"
        "    ] a 0 b a\n"
        "  in (c,) }"
    )


def test_print_scan():
    def func11(arr, extra):
        def body(carry, aelem):
            return lax.add(lax.add(carry, aelem), extra), carry

        return scan(body, 0.0, arr)

    assert str(mjcore.make_jaxpr(func11)(onp.ones(16), 5.0)) == (
        "{ lambda ; a:f64[16] b:f64[]. let\n"
        "    c:f64[] d:f64[16] = scan[\n"
        "      jaxpr={ lambda ; e:f64[] f:f64[] g:f64[]. let\n"
        "          h:f64[] = add f g\n"
        "          i:f64[] = add h e\n"
        "        in (i, f) }\n"
        "      length=16\n"
        "      linear=(False, False, False)\n"
        "      num_carry=1\n"
        "      num_consts=1\n"
        "      reverse=False\n"
        "    ] b 0.0 a\n"
        "  in (c, d) }"
    )
