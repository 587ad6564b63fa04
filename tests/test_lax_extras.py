"""The jax.lax conveniences added to mjcore.lax (stop_gradient, clamp, square, reciprocal, the
*_in_dim slicing helpers, broadcast, full_like, sort_key_val, top_k, cumlogsumexp, reduce_xor,
select, split, tile, broadcast_to_rank, collapse, batch_matmul, scatter_sub, empty, clz, mulhi,
reduce_precision, optimization_barrier, map and the control-flow aliases) against JAX (x64):
values and dtypes eagerly and under jit, gradients, vmap against a Python loop, and error
messages."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
import mjnp  # noqa: F401  (gives tracers their operators)
from mjcore import lax
from mjcore.tree_util import tree_leaves

jax.config.update("jax_enable_x64", True)


def _rand(*shape, seed=0):
    return onp.random.default_rng(seed).standard_normal(shape)


def _close(actual, expected, rtol=1e-12, atol=1e-12):
    actual, expected = tree_leaves(actual), jax.tree_util.tree_leaves(expected)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        a, e = onp.asarray(a), onp.asarray(e)
        assert a.shape == e.shape, (a.shape, e.shape)
        assert a.dtype == e.dtype, (a.dtype, e.dtype)
        if e.dtype.kind in "fc":
            onp.testing.assert_allclose(a, e, rtol=rtol, atol=atol)
        else:
            onp.testing.assert_array_equal(a, e)


# --- a table of programs, each written once against a `lax` module ---------------------------


class Prog(NamedTuple):
    """`fun(L, *args)` runs with `L` = mjcore.lax and `L` = jax.lax."""

    name: str
    fun: Callable[..., Any]
    args: tuple[Any, ...]
    diff_argnums: tuple[int, ...] = (0,)
    batch_argnums: tuple[int, ...] = (0,)
    jax_fun: Callable[..., Any] | None = None  # when JAX cannot run `fun` itself
    # NumPy's computation of the same function, for programs whose eager (host) result is
    # NumPy's and whose XLA result may round differently (docs/eager.md): eager is checked
    # against it bit for bit, and jit against jax.jit bit for bit, in place of jit == eager.
    np_fun: Callable[..., Any] | None = None


def _np_cumlogsumexp(axis: int, reverse: bool = False) -> Callable[..., Any]:
    """`cumlogsumexp` in NumPy: `logaddexp` accumulated along `axis` in the operand's dtype."""

    def f(x):
        if reverse:
            return onp.flip(onp.logaddexp.accumulate(onp.flip(x, axis), axis=axis), axis)
        return onp.logaddexp.accumulate(x, axis=axis)

    return f


X34 = _rand(3, 4)
X_TIES = onp.array([-1.0, -0.5, 0.0, 0.5, 1.0])
I32 = onp.int32


def _clamp_full_bounds(L, lo, x, hi):
    # The same function with the scalar bounds broadcast first: JAX's own clamp jvp fails for
    # scalar bounds (it selects between arrays of shapes x.shape and ()).
    return L.clamp(jnp.full_like(x, lo), x, jnp.full_like(x, hi))


def _bits_pair(dtype):
    """Random bit patterns of an integer dtype, with the extremes first."""
    info = onp.iinfo(dtype)
    rng = onp.random.default_rng(18)
    x = rng.integers(info.min, info.max, size=8, dtype=dtype, endpoint=True)
    y = rng.integers(info.min, info.max, size=8, dtype=dtype, endpoint=True)
    x[:3], y[:3] = [info.min, info.max, info.min], [info.min, info.max, info.max]
    return x, y


def _logaddexp(L):
    def comp(a, b):
        return L.add(L.max(a, b), L.log1p(L.exp(L.neg(L.abs(L.sub(a, b))))))

    return comp


def _argmax(L):
    def comp(a, b):
        pick = L.bitwise_or(
            L.gt(a["v"], b["v"]), L.bitwise_and(L.eq(a["v"], b["v"]), L.lt(a["i"], b["i"]))
        )
        return {"v": L.select(pick, a["v"], b["v"]), "i": L.select(pick, a["i"], b["i"])}

    return comp


PROGRAMS = [
    Prog(
        "clamp-scalar-bounds",
        lambda L, lo, x, hi: L.clamp(lo, x, hi),
        (onp.float64(-0.5), X34, onp.float64(0.7)),
        (0, 1, 2),
        (0, 1, 2),
        jax_fun=_clamp_full_bounds,
    ),
    Prog(
        "clamp-array-bounds",
        lambda L, lo, x, hi: L.clamp(lo, x, hi),
        (-onp.abs(_rand(3, 4, seed=1)), X34, onp.abs(_rand(3, 4, seed=2))),
        (0, 1, 2),
        (0, 1, 2),
    ),
    # Exact ties with the bounds: JAX's strict-inequality derivative rule.
    Prog(
        "clamp-ties",
        lambda L, lo, x, hi: L.clamp(lo, x, hi),
        (onp.float64(-0.5), X_TIES, onp.float64(0.5)),
        (0, 1, 2),
        (1,),
        jax_fun=_clamp_full_bounds,
    ),
    Prog("clamp-python-bounds", lambda L, x: L.clamp(-0.5, x, 0.5), (X34,)),
    Prog(
        "clamp-float32",
        lambda L, x: L.clamp(onp.float32(-0.5), x, onp.float32(0.5)),
        (X34.astype("float32"),),
        (),
    ),
    Prog(
        "clamp-int", lambda L, x: L.clamp(I32(-1), x, I32(2)), (onp.arange(-3, 5, dtype=I32),), ()
    ),
    Prog("square", lambda L, x: L.square(x), (X34,)),
    Prog("square-int", lambda L, x: L.square(x), (onp.arange(-3, 4, dtype=I32),), ()),
    # reciprocal is integer_pow(x, -1), the division 1 / x (as in JAX). NumPy's divide and
    # XLA's round complex quotients differently in the last ulp; onp.reciprocal is another
    # complex formula again, so the oracle is onp.divide.
    Prog("reciprocal", lambda L, x: L.reciprocal(x), (X34,), np_fun=lambda x: 1.0 / x),
    Prog(
        "reciprocal-complex",
        lambda L, x: L.reciprocal(x),
        (X34 + 1j * X34[::-1],),
        (),
        np_fun=lambda x: 1.0 / x,
    ),
    Prog("stop_gradient", lambda L, x: L.mul(L.stop_gradient(L.sin(x)), L.cos(x)), (X34,)),
    Prog(
        "stop_gradient-pytree",
        lambda L, x, y: L.stop_gradient({"a": L.mul(x, y), "b": (x, y)}),
        (X34, onp.arange(12.0).reshape(3, 4)),
        (0, 1),
        (0, 1),
    ),
    Prog("broadcast", lambda L, x: L.broadcast(x, (2, 3)), (X34,)),
    Prog("broadcast-none", lambda L, x: L.broadcast(x, ()), (X34,)),
    Prog("full_like", lambda L, x, v: L.full_like(x, v), (X34, onp.float64(1.5)), (1,), (0, 1)),
    Prog(
        "full_like-shape-dtype",
        lambda L, x: L.full_like(x, 2, "float32", (2, 5)),
        (X34,),
        (),
    ),
    Prog("index_in_dim", lambda L, x: L.index_in_dim(x, -1, 1), (X34,)),
    Prog("index_in_dim-squeezed", lambda L, x: L.index_in_dim(x, 2, 0, False), (X34,)),
    Prog(
        "dynamic_slice_in_dim",
        lambda L, x, i: L.dynamic_slice_in_dim(x, i, 2, 1),
        (X34, I32(1)),
        (0,),
        (0, 1),
    ),
    Prog(
        "dynamic_slice_in_dim-negative",
        lambda L, x, i: L.dynamic_slice_in_dim(x, i, 2, -1),
        (X34, I32(-3)),
        (0,),
        (0, 1),
    ),
    Prog(
        "dynamic_slice_in_dim-clamped",
        lambda L, x, i: L.dynamic_slice_in_dim(x, i, 3, 1),
        (X34, I32(3)),
        (0,),
        (0, 1),
    ),
    Prog(
        "dynamic_slice_in_dim-python-index",
        lambda L, x: L.dynamic_slice_in_dim(x, -2, 2, 0),
        (X34,),
    ),
    Prog(
        "dynamic_index_in_dim",
        lambda L, x, i: L.dynamic_index_in_dim(x, i, 0, False),
        (X34, I32(-1)),
        (0,),
        (0, 1),
    ),
    Prog(
        "dynamic_index_in_dim-keepdims",
        lambda L, x, i: L.dynamic_index_in_dim(x, i, 1),
        (X34, onp.int64(2)),
        (0,),
        (0, 1),
    ),
    Prog(
        "dynamic_update_slice_in_dim",
        lambda L, x, u, i: L.dynamic_update_slice_in_dim(x, u, i, 1),
        (X34, _rand(3, 2, seed=3), I32(-2)),
        (0, 1),
        (0, 1, 2),
    ),
    Prog(
        "dynamic_update_index_in_dim",
        lambda L, x, u, i: L.dynamic_update_index_in_dim(x, u, i, 0),
        (X34, _rand(4, seed=4), I32(-1)),
        (0, 1),
        (0, 1, 2),
    ),
    Prog(
        "dynamic_update_index_in_dim-keepdims",
        lambda L, x, u, i: L.dynamic_update_index_in_dim(x, u, i, 1),
        (X34, _rand(3, 1, seed=5), I32(1)),
        (0, 1),
        (0, 1, 2),
    ),
    Prog(
        "sort_key_val",
        lambda L, k, v: L.sort_key_val(k, v),
        (onp.array([[3, 1, 2, 1], [0, 0, 5, -1], [2, 2, 2, 2]]), X34),
        (1,),
        (0, 1),
    ),
    Prog(
        "sort_key_val-dimension0",
        lambda L, k, v: L.sort_key_val(k, v, 0),
        (X34[::-1], X34),
        (0, 1),
        (0, 1),
    ),
    Prog("top_k", lambda L, x: L.top_k(x, 3), (X34,)),
    Prog("top_k-all", lambda L, x: L.top_k(x, 4), (X34,)),
    Prog("top_k-zero", lambda L, x: L.top_k(x, 0), (X34,)),
    Prog(
        "top_k-ties",
        lambda L, x: L.top_k(x, 5),
        (onp.array([[1.0, 3.0, 3.0, -0.0, 0.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0]]),),
    ),
    Prog(
        "top_k-nan-inf",
        lambda L, x: L.top_k(x, 6),
        (onp.array([1.0, onp.nan, -onp.inf, 3.0, -onp.nan, onp.inf, 0.0, onp.nan]),),
        (),
    ),
    Prog(
        "top_k-int",
        lambda L, x: L.top_k(x, 3),
        (onp.array([[3, -7, 3, 9], [0, 0, 0, 0]], dtype=I32),),
        (),
    ),
    Prog("top_k-uint8", lambda L, x: L.top_k(x, 2), (onp.array([0, 255, 7, 255], "uint8"),), ()),
    Prog("top_k-bool", lambda L, x: L.top_k(x, 2), (onp.array([False, True, True]),), ()),
    Prog("top_k-float32", lambda L, x: L.top_k(x, 2), (X34.astype("float32"),), ()),
    Prog("top_k-axis0", lambda L, x: L.top_k(x, 2, axis=0), (X34,)),
    Prog(
        "top_k-float16",
        lambda L, x: L.top_k(x, 5),
        (onp.array([1, -2, 0.5, onp.nan, -0.0, 0.0, 3], "float16"),),
        (),
    ),
    Prog(
        "top_k-int64-extremes",
        lambda L, x: L.top_k(x, 4),
        (onp.array([onp.iinfo(onp.int64).min, onp.iinfo(onp.int64).max, 0, -1]),),
        (),
    ),
    # Eager runs NumPy's logaddexp.accumulate; XLA's exp/log1p differ from it in the last ulp.
    Prog("cumlogsumexp", lambda L, x: L.cumlogsumexp(x), (X34,), (), np_fun=_np_cumlogsumexp(0)),
    Prog(
        "cumlogsumexp-axis1-reverse",
        lambda L, x: L.cumlogsumexp(x, 1, True),
        (X34,),
        np_fun=_np_cumlogsumexp(1, reverse=True),
    ),
    # Values only: its gradient (through an O(log n)-deep scan) costs many eager compiles.
    Prog(
        "cumlogsumexp-long",
        lambda L, x: L.cumlogsumexp(x, 0),
        (_rand(37, seed=6),),
        (),
        np_fun=_np_cumlogsumexp(0),
    ),
    Prog(
        "cumlogsumexp-huge",
        lambda L, x: L.cumlogsumexp(x, 0),
        (onp.array([1000.0, 1001.0, -1000.0, 999.0, 1e300]),),
        np_fun=_np_cumlogsumexp(0),
    ),
    Prog(
        "cumlogsumexp-infinities",
        lambda L, x: L.cumlogsumexp(x, 0),
        (onp.array([-onp.inf, -onp.inf, 0.0, -onp.inf, onp.inf, 2.0]),),
        (),
        np_fun=_np_cumlogsumexp(0),
    ),
    Prog(
        "cumlogsumexp-float32",
        lambda L, x: L.cumlogsumexp(x, 1),
        (X34.astype("float32"),),
        (),
        np_fun=_np_cumlogsumexp(1),
    ),
    Prog("reduce_xor", lambda L, x: L.reduce_xor(x, (1,)), (onp.arange(12).reshape(3, 4),), ()),
    Prog(
        "reduce_xor-bool",
        lambda L, x: L.reduce_xor(x, (0, 1)),
        (onp.array([[True, False], [True, True]]),),
        (),
    ),
    Prog(
        "reduce_xor-uint8",
        lambda L, x: L.reduce_xor(x, (0,)),
        (onp.array([7, 255, 16], "uint8"),),
        (),
    ),
    Prog(
        "select",
        lambda L, p, x, y: L.select(p, x, y),
        (X34 > 0, X34, X34[::-1]),
        (1, 2),
        (0, 1, 2),
    ),
    Prog("split", lambda L, x: L.split(x, (1, 3), 1), (X34,)),
    Prog("split-negative-axis-empty", lambda L, x: L.split(x, (2, 0, 1), -2), (X34,)),
    Prog("tile", lambda L, x: L.tile(x, (2, 3)), (X34,)),
    Prog(
        "tile-int-zero",
        lambda L, x: L.tile(x, (0, 2)),
        (onp.arange(6, dtype=I32).reshape(2, 3),),
        (),
    ),
    Prog("broadcast_to_rank", lambda L, x: L.broadcast_to_rank(x, 4), (X34,)),
    Prog("broadcast_to_rank-same", lambda L, x: L.broadcast_to_rank(x, 2), (X34,)),
    Prog("collapse", lambda L, x: L.collapse(x, 0), (_rand(2, 3, 4, seed=10),)),
    Prog("collapse-range", lambda L, x: L.collapse(x, 1, 3), (_rand(2, 3, 4, 2, seed=11),)),
    Prog("collapse-negative", lambda L, x: L.collapse(x, -2, -1), (_rand(2, 3, 4, seed=12),)),
    Prog(
        "batch_matmul",
        lambda L, a, b: L.batch_matmul(a, b),
        (_rand(2, 3, 4, seed=13), _rand(2, 4, 5, seed=14)),
        (0, 1),
        (0, 1),
        # Eager is NumPy's (BLAS) matmul; XLA's dot sums in another order.
        np_fun=onp.matmul,
    ),
    Prog(
        "scatter_sub",
        lambda L, x, i, u: L.scatter_sub(x, i, u, L.ScatterDimensionNumbers((1,), (0,), (0,))),
        (X34, onp.array([[0], [2], [0]], I32), _rand(3, 4, seed=15)),
        (0, 2),
        (0, 1, 2),
    ),
    Prog(
        "scatter_sub-uint8-clip",
        lambda L, x, i, u: L.scatter_sub(
            x, i, u, L.ScatterDimensionNumbers((), (0,), (0,)), mode="clip"
        ),
        (
            onp.array([5, 0, 9], "uint8"),
            onp.array([[1], [7], [1]], I32),
            onp.array([3, 4, 250], "uint8"),
        ),
        (),
        (0, 2),
    ),
    Prog("clz", lambda L, x: L.clz(x), (onp.array([0, 1, -1, 7, 2**20, 2**31 - 1], I32),), ()),
    Prog("clz-uint8", lambda L, x: L.clz(x), (onp.array([0, 1, 128, 255, 16], "uint8"),), ()),
    Prog("reduce_precision-bfloat16", lambda L, x: L.reduce_precision(x, 8, 7), (X34,)),
    Prog(
        "reduce_precision-float16-float32",
        lambda L, x: L.reduce_precision(x, 5, 10),
        (onp.array([1e-8, 1e5, 65504.0, 70000.0, -0.1, onp.nan], "float32"),),
        (),
    ),
    Prog(
        "reduce-logaddexp",
        lambda L, x: L.reduce(x, -onp.inf, _logaddexp(L), (0, 2)),
        (_rand(2, 3, 2, seed=17),),
    ),
    Prog(
        "reduce-variadic-dict",
        lambda L, x, i: L.reduce({"v": x, "i": i}, {"v": -onp.inf, "i": I32(0)}, _argmax(L), (1,)),
        (X34, onp.broadcast_to(onp.arange(4, dtype=I32), (3, 4))),
        (),  # JAX's own reduce jvp fails on the int operand
    ),
    Prog("reduce-add-monoid", lambda L, x: L.reduce(x, 0.0, L.add, (1,)), (X34,)),
    Prog("reduce-max-monoid", lambda L, x: L.reduce(x, -onp.inf, L.max, (0, 1)), (X34,)),
    Prog("reduce-add-init", lambda L, x: L.reduce(x, 0.0, L.add, (0,)), (X34,)),
    Prog(
        "reduce-or-bool",
        lambda L, x: L.reduce(x, False, L.bitwise_or, (0,)),
        (X34 > 0.5,),
        (),
    ),
    Prog(
        "reduce-empty-axis", lambda L, x: L.reduce(x, -onp.inf, _logaddexp(L), (0,)), (_rand(0, 3),)
    ),
    Prog("reduce-no-axes", lambda L, x: L.reduce(x, -onp.inf, _logaddexp(L), ()), (X34,)),
    *[
        Prog(f"mulhi-{dt}", lambda L, x, y: L.mulhi(x, y), _bits_pair(dt), (), (0, 1))
        for dt in ("int8", "uint16", "int32", "uint32", "int64", "uint64")
    ],
    Prog(
        "optimization_barrier",
        lambda L, x, y: L.optimization_barrier(
            (L.sin(x), {"y": y, "n": L.convert_element_type(y, I32)})
        ),
        (X34, _rand(4, seed=16)),
        (0, 1),
        (0, 1),
    ),
]

_IDS = [p.name for p in PROGRAMS]


def _mj(prog: Prog) -> Callable[..., Any]:
    return functools.partial(prog.fun, lax)


def _jx(prog: Prog) -> Callable[..., Any]:
    return functools.partial(prog.jax_fun or prog.fun, jax.lax)


# The oracle runs under jax.jit: one XLA compile per program, where JAX's eager mode compiles
# every operation of it (and of its derivative) on its own.
def _jx_jit(prog: Prog) -> Callable[..., Any]:
    return jax.jit(_jx(prog))


def _tol(prog: Prog) -> dict[str, float]:
    single = any(onp.asarray(a).dtype in (onp.float32, onp.complex64) for a in prog.args)
    return {"rtol": 1e-6, "atol": 1e-6} if single else {"rtol": 1e-12, "atol": 1e-12}


@pytest.mark.parametrize("prog", PROGRAMS, ids=_IDS)
def test_eager_and_jit_match_jax(prog: Prog):
    expected = _jx_jit(prog)(*prog.args)
    eager = _mj(prog)(*prog.args)
    _close(eager, expected, **_tol(prog))
    jitted = mjcore.jit(_mj(prog))(*prog.args)
    if prog.np_fun is None:
        _close(jitted, eager, rtol=0, atol=0)
    else:
        # The eager/jit contract (docs/eager.md): eager equals NumPy bit for bit; jit runs XLA,
        # as jax.jit does, and may differ from eager in the last ulp or summation order.
        _close(eager, prog.np_fun(*prog.args), rtol=0, atol=0)
        _close(jitted, expected, rtol=0, atol=0)
    closed = mjcore.make_jaxpr(_mj(prog))(*prog.args)
    mjcore.typecheck_jaxpr(closed.jaxpr)


def _weights(outs: Any) -> list[Any]:
    """Random weights for the float leaves of `outs` (arrays or `jax.ShapeDtypeStruct`s)."""
    return [
        _rand(*o.shape, seed=7) if onp.dtype(o.dtype).kind == "f" else None
        for o in jax.tree_util.tree_leaves(outs)
    ]


def _scalarized(f: Callable[..., Any], weights: list[Any], module: Any) -> Callable[..., Any]:
    """`sum(w * out)` over the float outputs, in mjcore or JAX."""

    def g(*args):
        total = 0.0
        leaves = tree_leaves(f(*args)) if module is lax else jax.tree_util.tree_leaves(f(*args))
        for out, w in zip(leaves, weights, strict=True):
            if w is not None:
                prod = module.mul(out, w)
                total = total + (
                    lax.reduce_sum(prod, tuple(range(prod.ndim)))
                    if module is lax
                    else jnp.sum(prod)
                )
        return total

    return g


GRAD_PROGRAMS = [p for p in PROGRAMS if p.diff_argnums]


@pytest.mark.parametrize("prog", GRAD_PROGRAMS, ids=[p.name for p in GRAD_PROGRAMS])
def test_grad_matches_jax(prog: Prog):
    weights = _weights(jax.eval_shape(_jx(prog), *prog.args))
    argnums = prog.diff_argnums
    expected = jax.jit(jax.grad(_scalarized(_jx(prog), weights, jax.lax), argnums))(*prog.args)
    f = _scalarized(_mj(prog), weights, lax)
    _close(mjcore.grad(f, argnums)(*prog.args), expected)
    _close(mjcore.jit(mjcore.grad(f, argnums))(*prog.args), expected)
    _close(mjcore.grad(mjcore.jit(f), argnums)(*prog.args), expected)


@pytest.mark.parametrize("prog", GRAD_PROGRAMS, ids=[p.name for p in GRAD_PROGRAMS])
def test_jvp_matches_jax(prog: Prog):
    rng = onp.random.default_rng(8)
    argnums = prog.diff_argnums

    def partial_fun(call, *diff):
        args = list(prog.args)
        for i, d in zip(argnums, diff, strict=True):
            args[i] = d
        return call(*args)

    primals = [prog.args[i] for i in argnums]
    tangents = [rng.standard_normal(onp.shape(p)) for p in primals]
    _, expected = jax.jvp(functools.partial(partial_fun, _jx(prog)), primals, tangents)
    _, actual = mjcore.jvp(functools.partial(partial_fun, _mj(prog)), primals, tangents)
    float_pairs = [
        (a, e)
        for a, e in zip(tree_leaves(actual), jax.tree_util.tree_leaves(expected), strict=True)
        if onp.asarray(e).dtype.kind == "f"
    ]
    _close([a for a, _ in float_pairs], [e for _, e in float_pairs])


def _batched(arg: Any, size: int = 3) -> onp.ndarray:
    """`size` distinct variants of `arg` stacked on a new leading axis."""
    arg = onp.asarray(arg)
    if arg.dtype.kind == "f":
        return onp.stack([arg * (1 + 0.5 * k) - 0.25 * k for k in range(size)])
    if arg.dtype.kind == "b":
        return onp.stack([arg ^ bool(k % 2) for k in range(size)])
    if arg.dtype.kind == "u":
        return onp.stack([arg + k for k in range(size)]).astype(arg.dtype)
    return onp.stack([arg + (k if k < 2 else -2) for k in range(size)]).astype(arg.dtype)


@pytest.mark.parametrize("prog", PROGRAMS, ids=_IDS)
def test_vmap_matches_loop(prog: Prog):
    in_axes = tuple(0 if i in prog.batch_argnums else None for i in range(len(prog.args)))
    args = [_batched(a) if ax == 0 else a for a, ax in zip(prog.args, in_axes, strict=True)]
    out = mjcore.vmap(_mj(prog), in_axes=in_axes)(*args)
    per_example = [
        _mj(prog)(*[a[k] if ax == 0 else a for a, ax in zip(args, in_axes, strict=True)])
        for k in range(3)
    ]
    expected = jax.tree_util.tree_map(
        lambda *xs: onp.stack([onp.asarray(x) for x in xs]),
        *[
            jax.tree_util.tree_map(onp.asarray, p, is_leaf=lambda x: isinstance(x, mjcore.Array))
            for p in per_example
        ],
    )
    _close(out, expected, rtol=0, atol=0)


# --- stop_gradient under every composition ----------------------------------------------------


def _sg_fun(L, x):
    # Value x**2 sin(x); derivative sees only x**2 (times the constant sin(x)).
    return L.mul(L.mul(x, x), L.stop_gradient(L.sin(x)))


X5 = _rand(5, seed=9)


def test_empty_has_shape_and_dtype():
    for shape, dtype in [((2, 3), "float32"), (4, I32), ((), "bool")]:
        out, expected = lax.empty(shape, dtype), jax.lax.empty(shape, dtype)
        assert out.shape == expected.shape and out.dtype == expected.dtype
        staged = mjcore.jit(lambda s=shape, d=dtype: lax.empty(s, d))()
        assert staged.shape == expected.shape and staged.dtype == expected.dtype


def test_gap_filling_errors():
    with pytest.raises(ValueError, match="sum to the dimension size"):
        lax.split(X34, (1, 2), 1)
    with pytest.raises(ValueError, match="one repetition count per dimension"):
        lax.tile(X34, (2,))
    with pytest.raises(ValueError, match="batch dimensions must match"):
        lax.batch_matmul(_rand(2, 3, 4), _rand(3, 4, 5))
    with pytest.raises(ValueError, match="comes before"):
        lax.collapse(X34, 1, 0)
    with pytest.raises(TypeError, match="pred must be bool"):
        lax.select(X34, X34, X34)


def test_reduce_routes_monoids_to_dedicated_reductions():
    def names(f):
        return [e.primitive.name for e in mjcore.make_jaxpr(f)(X34).jaxpr.eqns]

    assert names(lambda x: lax.reduce(x, 0.0, lax.add, (1,))) == ["reduce_sum"]
    assert names(lambda x: lax.reduce(x, -onp.inf, lax.max, (1,))) == ["reduce_max"]
    # Not the identity, or not a recognised function: the general reduction.
    assert names(lambda x: lax.reduce(x, 1.0, lax.add, (1,))) == ["reduce"]
    assert names(lambda x: lax.reduce(x, 0.0, lambda a, b: a + b, (1,))) == ["reduce"]


def test_reduce_errors():
    with pytest.raises(ValueError, match="same tree structure"):
        lax.reduce((X34, X34), (0.0,), lax.add, (0,))
    with pytest.raises(TypeError, match="computation must return"):
        lax.reduce((X34, X34), (0.0, 0.0), lambda a, b: a[0], (0,))
    with pytest.raises(NotImplementedError, match="close over traced"):
        mjcore.jit(lambda x, y: lax.reduce(x, 0.0, lambda a, b: a + b * y, (0,)))(X34, 2.0)


def test_optimization_barrier_lowers_to_the_stablehlo_op():
    text = mjcore.jit(lambda x: lax.optimization_barrier((x, x + 1))).lower(X34).as_text()
    assert "stablehlo.optimization_barrier" in text


def test_stop_gradient_grad_jit_nestings():
    def mj_scalar(x):
        return lax.reduce_sum(_sg_fun(lax, x), (0,))

    def jx_scalar(x):
        return jnp.sum(_sg_fun(jax.lax, x))

    expected = jax.jit(jax.grad(jx_scalar))(X5)
    for g in (
        mjcore.grad(mj_scalar),
        mjcore.jit(mjcore.grad(mj_scalar)),
        mjcore.grad(mjcore.jit(mj_scalar)),
        mjcore.jit(mjcore.grad(mjcore.jit(mj_scalar))),
    ):
        _close(g(X5), expected)
    _close(mjcore.hessian(mj_scalar)(X5), jax.jit(jax.hessian(jx_scalar))(X5))
    _close(
        mjcore.jacrev(functools.partial(_sg_fun, lax))(X5),
        jax.jit(jax.jacrev(functools.partial(_sg_fun, jax.lax)))(X5),
    )


def test_stop_gradient_jvp_linearize_vjp():
    t = _rand(5, seed=10)
    expected = jax.jvp(functools.partial(_sg_fun, jax.lax), (X5,), (t,))
    _close(mjcore.jvp(functools.partial(_sg_fun, lax), (X5,), (t,)), expected)
    _close(mjcore.jvp(mjcore.jit(functools.partial(_sg_fun, lax)), (X5,), (t,)), expected)
    y, f_lin = mjcore.linearize(functools.partial(_sg_fun, lax), X5)
    _close((y, f_lin(t)), expected)
    _, f_vjp = mjcore.vjp(functools.partial(_sg_fun, lax), X5)
    _, j_vjp = jax.vjp(functools.partial(_sg_fun, jax.lax), X5)
    _close(f_vjp(t), j_vjp(t))


def test_stop_gradient_alone_has_zero_derivative_at_every_level():
    def f(x):
        return lax.stop_gradient(lax.mul(x, x))

    assert float(mjcore.grad(f)(3.0)) == 0.0
    assert float(mjcore.grad(lambda x: mjcore.grad(lambda y: lax.mul(f(x), y))(2.0))(3.0)) == 0.0

    # jvp of jvp: the inner rule rebinds on its primal, so the outer tangent is cut too.
    def inner(x):
        return mjcore.jvp(f, (x,), (1.0,))[0]

    _, outer_dot = mjcore.jvp(inner, (3.0,), (1.0,))
    assert float(outer_dot) == 0.0
    assert (
        float(
            jax.jvp(
                lambda x: jax.jvp(lambda y: jax.lax.stop_gradient(y * y), (x,), (1.0,))[0],
                (3.0,),
                (1.0,),
            )[1]
        )
        == 0.0
    )


def test_stop_gradient_under_vmap():
    xs = _rand(3, 5, seed=11)
    ts = _rand(3, 5, seed=12)

    def mj_scalar(x):
        return lax.reduce_sum(_sg_fun(lax, x), (0,))

    expected = jax.jit(jax.vmap(jax.grad(lambda x: jnp.sum(_sg_fun(jax.lax, x)))))(xs)
    _close(mjcore.vmap(mjcore.grad(mj_scalar))(xs), expected)
    _close(mjcore.jit(mjcore.vmap(mjcore.grad(mj_scalar)))(xs), expected)
    mj_f, jx_f = functools.partial(_sg_fun, lax), functools.partial(_sg_fun, jax.lax)
    expected_jvp = jax.jit(functools.partial(jax.jvp, jax.vmap(jx_f)))((xs,), (ts,))
    _close(mjcore.jvp(mjcore.vmap(mj_f), (xs,), (ts,)), expected_jvp)
    _close(mjcore.vmap(lambda x, t: mjcore.jvp(mj_f, (x,), (t,)))(xs, ts), expected_jvp)
    # A batched stop_gradient keeps its batch axis where it was.
    out = mjcore.vmap(lax.stop_gradient, in_axes=1, out_axes=1)(xs)
    onp.testing.assert_array_equal(onp.asarray(out), xs)


def test_stop_gradient_inside_control_flow():
    def body(L, c, x):
        c = L.add(L.mul(c, L.stop_gradient(L.sin(x))), L.mul(x, c))
        return c, L.stop_gradient(L.mul(c, c))

    def mj(x):
        c, ys = lax.scan(functools.partial(body, lax), 1.0, x)
        branch = lax.cond(c > 0, lambda v: lax.stop_gradient(v), lambda v: lax.neg(v), c)
        return c + branch + lax.reduce_sum(ys, (0,))

    def jx(x):
        c, ys = jax.lax.scan(functools.partial(body, jax.lax), 1.0, x)
        branch = jax.lax.cond(c > 0, lambda v: jax.lax.stop_gradient(v), lambda v: -v, c)
        return c + branch + jnp.sum(ys)

    x = _rand(4, seed=18) * 0.5 + 1.0
    expected = jax.jit(jax.grad(jx))(x)
    _close(mjcore.grad(mj)(x), expected)
    _close(mjcore.jit(mjcore.grad(mj))(x), expected)


def test_stop_gradient_jaxpr_and_pytrees():
    closed = mjcore.make_jaxpr(lambda x: lax.stop_gradient(lax.sin(x)))(X5)
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["sin", "stop_gradient"]
    # Integer and boolean leaves pass through untouched (no equation), as JAX binds nothing
    # with a tangent for them.
    closed = mjcore.make_jaxpr(lambda i: lax.stop_gradient(i))(onp.arange(3))
    assert closed.jaxpr.eqns == []
    tree = {"a": onp.float32(1.5), "b": [onp.arange(3), (True,)], "c": None}
    out = lax.stop_gradient(tree)
    assert set(out) == {"a", "b", "c"} and out["c"] is None
    assert out["b"][1][0] is True
    _close(out, jax.lax.stop_gradient(tree))
    assert mjcore.jit(lax.stop_gradient)(X5).dtype == onp.float64


# --- clamp, top_k, cumlogsumexp details ------------------------------------------------------


def test_clamp_bounds_crossed_and_nan():
    x = onp.array([-2.0, 0.0, onp.nan, 2.0])
    _close(lax.clamp(1.0, x, -1.0), jax.lax.clamp(1.0, x, -1.0))
    _close(lax.clamp(-1.0, x, 1.0), jax.lax.clamp(-1.0, x, 1.0))
    assert lax.clamp(onp.float32(0), onp.float32(3), onp.float32(1)).dtype == onp.float32


def test_clamp_weak_type_follows_jax():
    assert not lax.clamp(0.0, onp.arange(3.0), 1.0).aval.weak_type
    assert mjcore.make_jaxpr(lambda x: lax.clamp(0.0, x, 1.0))(2.0).out_avals[0].weak_type


def test_top_k_random_ties_under_jit_and_vmap():
    x = onp.random.default_rng(13).integers(0, 4, size=(5, 9)).astype(onp.float64)
    expected = jax.lax.top_k(x, 4)
    _close(mjcore.jit(lambda x: lax.top_k(x, 4))(x), expected)
    _close(mjcore.vmap(lambda r: lax.top_k(r, 4))(x), jax.vmap(lambda r: jax.lax.top_k(r, 4))(x))
    _close(
        mjcore.vmap(lambda c: lax.top_k(c, 4), in_axes=1)(x),
        jax.vmap(lambda c: jax.lax.top_k(c, 4), in_axes=1)(x),
    )
    assert lax.top_k(x, 2)[1].dtype == onp.int32


def test_cumlogsumexp_second_order_matches_jax():
    x = _rand(6, seed=14)

    def mj(x):
        return lax.reduce_sum(lax.mul(lax.cumlogsumexp(x), x), (0,))

    def jx(x):
        return jnp.sum(jax.lax.cumlogsumexp(x) * x)

    expected = jax.jit(jax.hessian(jx))(x)
    _close(mjcore.jit(mjcore.hessian(mj))(x), expected, rtol=1e-10, atol=1e-12)


def test_cumlogsumexp_finite_gradients_with_minus_infinity():
    # Padding with -inf (log of zero weights) must not poison the gradient of finite entries.
    x = onp.array([0.5, -onp.inf, 1.5, -onp.inf])
    g = mjcore.grad(lambda x: lax.reduce_sum(lax.cumlogsumexp(x), (0,)))(x)
    assert onp.isfinite(onp.asarray(g)).all()
    out = onp.logaddexp.accumulate(x)
    weight = onp.exp(x[None, :] - out[:, None])  # d out[i] / d x[j], for j <= i
    expected = onp.where(onp.arange(4)[None, :] <= onp.arange(4)[:, None], weight, 0.0).sum(0)
    onp.testing.assert_allclose(onp.asarray(g), expected, rtol=1e-12)


# --- lax.map and the control-flow aliases ----------------------------------------------------


def test_control_flow_aliases_are_the_same_objects():
    for name in ("cond", "switch", "while_loop", "fori_loop", "scan"):
        assert getattr(lax, name) is getattr(mjcore, name)
        assert name in lax.__all__
    assert "map" in lax.__all__


def _map_f(L):
    def f(t):
        return {"s": L.sin(t["x"]) * t["y"][0], "m": L.reduce_max(t["y"], (0,))}

    return f


def _map_xs(n):
    return {"x": _rand(n, 2, seed=15), "y": _rand(n, 3, seed=16)}


@pytest.mark.parametrize("batch_size", [None, 0, 1, 2, 3, 7, 10])
def test_map_matches_jax(batch_size):
    xs = _map_xs(7)

    def jx_f(t):
        return {"s": jnp.sin(t["x"]) * t["y"][0], "m": jnp.max(t["y"])}

    expected = jax.jit(lambda xs: jax.lax.map(jx_f, xs, batch_size=batch_size))(xs)
    _close(lax.map(_map_f(lax), xs, batch_size=batch_size), expected)
    _close(mjcore.jit(lambda xs: lax.map(_map_f(lax), xs, batch_size=batch_size))(xs), expected)

    def mj_loss(xs):
        out = lax.map(_map_f(lax), xs, batch_size=batch_size)
        return lax.reduce_sum(out["s"], (0, 1)) + lax.reduce_sum(out["m"], (0,))

    def jx_loss(xs):
        out = jax.lax.map(jx_f, xs, batch_size=batch_size)
        return jnp.sum(out["s"]) + jnp.sum(out["m"])

    _close(mjcore.grad(mj_loss)(xs), jax.jit(jax.grad(jx_loss))(xs))


def test_map_under_vmap_and_of_scalars():
    xs = _rand(2, 5, seed=17)
    out = mjcore.vmap(lambda r: lax.map(lambda v: lax.mul(v, v), r, batch_size=2))(xs)
    onp.testing.assert_allclose(onp.asarray(out), xs * xs, rtol=1e-15)
    _close(
        lax.map(lambda v: (v, lax.add(v, 1.0)), onp.arange(4.0)),
        jax.lax.map(lambda v: (v, v + 1.0), onp.arange(4.0)),
    )


# --- errors ----------------------------------------------------------------------------------


def test_errors():
    x = onp.zeros((2, 3))
    with pytest.raises(TypeError, match=r"clamp: min .* shape.*\(3,\).*\(2, 3\)"):
        lax.clamp(onp.zeros(3), x, 1.0)
    with pytest.raises(TypeError, match=r"clamp: max .* shape"):
        lax.clamp(0.0, x, onp.zeros((3, 2)))
    with pytest.raises(TypeError, match="clamp requires arguments of one dtype"):
        lax.clamp(onp.float32(0), x, 1.0)
    with pytest.raises(ValueError, match=r"top_k: k=4 .* size 3 of axis 1 .* \(2, 3\)"):
        lax.top_k(x, 4)
    with pytest.raises(ValueError, match="top_k: k=-1"):
        lax.top_k(x, -1)
    with pytest.raises(ValueError, match="top_k: operand must have at least one axis"):
        lax.top_k(onp.float64(1.0), 1)
    with pytest.raises(TypeError, match="top_k: operand must be real"):
        lax.top_k(onp.zeros(3, complex), 1)
    with pytest.raises(IndexError, match="index_in_dim: index -4 is out of bounds for axis 1"):
        lax.index_in_dim(x, -4, 1)
    with pytest.raises(TypeError, match="reciprocal: needs a floating or complex array"):
        lax.reciprocal(onp.arange(3))
    with pytest.raises(TypeError, match="cumlogsumexp: needs a floating array"):
        lax.cumlogsumexp(onp.arange(3))
    with pytest.raises(TypeError, match=r"full_like: fill_value must be a scalar.*\(2,\)"):
        lax.full_like(x, onp.ones(2))
    with pytest.raises(
        ValueError, match=r"dynamic_update_index_in_dim: update of shape \(1, 1, 1\)"
    ):
        lax.dynamic_update_index_in_dim(x, onp.zeros((1, 1, 1)), 0, 0)
    with pytest.raises(TypeError, match="start index must be an integer scalar"):
        lax.dynamic_slice_in_dim(x, 0.5, 1)
    with pytest.raises(ValueError, match="broadcast: negative dimensions"):
        lax.broadcast(x, (-1,))
    with pytest.raises(ValueError, match="map: batch_size must be non-negative"):
        lax.map(lambda v: v, x, batch_size=-1)
    with pytest.raises(ValueError, match=r"map: every leaf of xs .* \(2, 3\).*\(3,\)"):
        lax.map(lambda t: t, (x, onp.zeros(3)), batch_size=2)
    with pytest.raises(TypeError, match="map: f must be callable"):
        lax.map(3, x)


def test_new_names_are_documented_and_exported():
    names = [
        "stop_gradient", "clamp", "square", "reciprocal", "broadcast", "index_in_dim",
        "dynamic_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_slice_in_dim",
        "dynamic_update_index_in_dim", "full_like", "sort_key_val", "top_k", "cumlogsumexp",
        "reduce_xor", "map", "select", "split", "tile", "broadcast_to_rank", "collapse",
        "batch_matmul", "scatter_sub", "empty", "clz", "mulhi", "reduce_precision",
        "optimization_barrier", "reduce", "custom_root", "custom_linear_solve",
    ]  # fmt: skip
    for name in names:
        assert name in lax.__all__, name
        fun = getattr(lax, name)
        assert fun.__doc__ and fun.__annotations__, name
        assert hasattr(jax.lax, name), name
