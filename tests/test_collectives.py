"""Collectives (mjcore.lax.psum and friends) against JAX x64: on one device under
`vmap(..., axis_name=)`, and on 8 CPU devices under pmap and shard_map (in a subprocess)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
import mjnp as np
from mjcore import lax
from mjcore.batching import AxisPrimitive

jax.config.update("jax_enable_x64", True)

N = 4  # members of the named axis


class Case(NamedTuple):
    name: str
    fun: Callable[[Any], Any]  # mjcore, per member
    jax_fun: Callable[[Any], Any]  # the same with jax.lax
    shape: tuple[int, ...]  # per member
    linear: bool = True
    # JAX's own function where JAX's transpose is wrong: its untiled all_to_all with
    # split_axis != concat_axis fails under grad ("Expected cotangent type f64[1,3,4] but got
    # f64[3,1,4]"); the same exchange written tiled, which JAX transposes correctly.
    jax_grad_fun: Callable[[Any], Any] | None = None


def _both(name: str, make: Callable[[Any], Callable[[Any], Any]], shape, linear=True) -> Case:
    """A case written once against a `lax`-like module (mjcore.lax or jax.lax)."""
    return Case(name, make(lax), make(jax.lax), shape, linear)


CASES = [
    _both("psum", lambda L: lambda v: L.psum(v, "i"), (3,)),
    _both("pmean", lambda L: lambda v: L.pmean(v, "i"), (2, 3)),
    _both("pmax", lambda L: lambda v: L.pmax(v, "i"), (3,), linear=False),
    _both("pmin", lambda L: lambda v: L.pmin(v, "i"), (3,), linear=False),
    _both("all_gather", lambda L: lambda v: L.all_gather(v, "i"), (2, 3)),
    _both("all_gather-axis1", lambda L: lambda v: L.all_gather(v, "i", axis=1), (2, 3)),
    _both("all_gather-tiled", lambda L: lambda v: L.all_gather(v, "i", tiled=True), (2, 3)),
    _both(
        "all_gather-tiled-axis1",
        lambda L: lambda v: L.all_gather(v, "i", axis=1, tiled=True),
        (2, 3),
    ),
    _both("psum_scatter", lambda L: lambda v: L.psum_scatter(v, "i"), (N, 3)),
    _both(
        "psum_scatter-dim1",
        lambda L: lambda v: L.psum_scatter(v, "i", scatter_dimension=1),
        (3, N),
    ),
    _both(
        "psum_scatter-tiled",
        lambda L: lambda v: L.psum_scatter(v, "i", scatter_dimension=0, tiled=True),
        (2 * N, 3),
    ),
    _both("all_to_all-0-1", lambda L: lambda v: L.all_to_all(v, "i", 0, 1), (N, 3))._replace(
        jax_grad_fun=lambda v: jax.lax.all_to_all(v[:, :, None], "i", 0, 2, tiled=True)[0]
    ),
    _both("all_to_all-1-0", lambda L: lambda v: L.all_to_all(v, "i", 1, 0), (3, N))._replace(
        jax_grad_fun=lambda v: jax.lax.all_to_all(v[None], "i", 2, 0, tiled=True)[:, :, 0]
    ),
    _both("all_to_all-0-0", lambda L: lambda v: L.all_to_all(v, "i", 0, 0), (N, 3)),
    _both(
        "all_to_all-tiled",
        lambda L: lambda v: L.all_to_all(v, "i", 0, 1, tiled=True),
        (2 * N, 3),
    ),
    _both(
        "all_to_all-tiled-1-0",
        lambda L: lambda v: L.all_to_all(v, "i", 1, 0, tiled=True),
        (3, 2 * N),
    ),
    _both(
        "ppermute-shift",
        lambda L: lambda v: L.ppermute(v, "i", [(j, (j + 1) % N) for j in range(N)]),
        (3,),
    ),
    _both(
        "ppermute-swap",
        lambda L: lambda v: L.ppermute(v, "i", [(0, 2), (2, 0), (1, 3), (3, 1)]),
        (2, 2),
    ),
    _both("axis_index", lambda L: lambda v: v * L.axis_index("i"), (3,)),
]
IDS = [c.name for c in CASES]
# JAX has no jvp for pmax/pmin (ours is checked against finite differences below).
JAX_DIFFERENTIABLE = [c for c in CASES if c.linear]


def _input(shape: tuple[int, ...], seed: int = 0) -> onp.ndarray:
    return onp.random.default_rng(seed).standard_normal((N, *shape))


def _close(a: Any, b: Any) -> None:
    a, b = onp.asarray(a), onp.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    onp.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_vmap_axis_name_values(case: Case) -> None:
    x = _input(case.shape)
    _close(mjcore.vmap(case.fun, axis_name="i")(x), jax.vmap(case.jax_fun, axis_name="i")(x))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_vmap_axis_name_in_axes_1_and_jit(case: Case) -> None:
    x = onp.moveaxis(_input(case.shape, 1), 0, -1)
    f = mjcore.jit(mjcore.vmap(case.fun, in_axes=-1, axis_name="i"))
    g = jax.vmap(case.jax_fun, in_axes=-1, axis_name="i")
    _close(f(x), g(x))
    # jit inside the named vmap: the staged collective is batched with the jaxpr.
    _close(mjcore.vmap(mjcore.jit(case.fun), in_axes=-1, axis_name="i")(x), g(x))


@pytest.mark.parametrize("case", JAX_DIFFERENTIABLE, ids=lambda c: c.name)
def test_vmap_axis_name_jvp(case: Case) -> None:
    x, t = _input(case.shape, 2), _input(case.shape, 3)

    def mj(x, t):
        return mjcore.jvp(case.fun, (x,), (t,))

    def jx(x, t):
        return jax.jvp(case.jax_fun, (x,), (t,))

    out, out_dot = mjcore.vmap(mj, axis_name="i")(x, t)
    ref, ref_dot = jax.vmap(jx, axis_name="i")(x, t)
    _close(out, ref)
    _close(out_dot, ref_dot)


def _weights(case: Case) -> onp.ndarray:
    out = jax.eval_shape(jax.vmap(case.jax_fun, axis_name="i"), _input(case.shape))
    return onp.random.default_rng(7).standard_normal(out.shape)


@pytest.mark.parametrize("case", JAX_DIFFERENTIABLE, ids=lambda c: c.name)
def test_vmap_axis_name_grad_inside(case: Case) -> None:
    """grad per member, collectives across members: the transposes (psum <-> psum,
    all_gather <-> psum_scatter, ppermute <-> inverse) run under the named vmap."""
    x, w = _input(case.shape, 4), _weights(case)

    def mj(x, w):
        return mjcore.grad(lambda v: np.sum(np.sin(case.fun(np.cos(v))) * w))(x)

    jax_fun = case.jax_grad_fun or case.jax_fun

    def jx(x, w):
        return jax.grad(lambda v: jnp.sum(jnp.sin(jax_fun(jnp.cos(v))) * w))(x)

    # JAX's as one compiled program (eagerly, its vmap of grad runs op by op)
    _close(mjcore.vmap(mj, axis_name="i")(x, w), jax.jit(jax.vmap(jx, axis_name="i"))(x, w))


@pytest.mark.parametrize("case", JAX_DIFFERENTIABLE, ids=lambda c: c.name)
def test_grad_of_vmap_axis_name(case: Case) -> None:
    x, w = _input(case.shape, 5), _weights(case)

    def mj(x):
        return np.sum(np.sin(mjcore.vmap(case.fun, axis_name="i")(x)) * w)

    def jx(x):
        return jnp.sum(jnp.sin(jax.vmap(case.jax_fun, axis_name="i")(x)) * w)

    ref = jax.jit(jax.grad(jx))(x)  # once, as one compiled program
    _close(mjcore.grad(mj)(x), ref)
    _close(mjcore.jit(mjcore.grad(mj))(x), ref)


@pytest.mark.parametrize("name", ["pmax", "pmin"])
def test_pmax_pmin_jvp_against_finite_differences(name: str) -> None:
    """JAX defines no jvp for pmax/pmin; ours is reduce_max's (ties averaged)."""
    fun = getattr(lax, name)
    x, t = _input((3,), 6), _input((3,), 8)
    f = mjcore.vmap(lambda v: np.sin(fun(v, "i")), axis_name="i")
    _, out_dot = mjcore.jvp(f, (x,), (t,))
    eps = 1e-6
    numeric = (onp.asarray(f(x + eps * t)) - onp.asarray(f(x - eps * t))) / (2 * eps)
    onp.testing.assert_allclose(onp.asarray(out_dot), numeric, rtol=1e-6, atol=1e-8)


def test_nested_named_axes() -> None:
    x = _input((3, 2), 9)  # (4, 3, 2): axes i, j, then per member (2,)

    def mj(v):
        return lax.psum(v, ("i", "j")) * lax.axis_index(("i", "j")) + lax.pmax(v, "j")

    def jx(v):
        return jax.lax.psum(v, ("i", "j")) * jax.lax.axis_index(("i", "j")) + jax.lax.pmax(v, "j")

    f = mjcore.vmap(mjcore.vmap(mj, axis_name="j"), axis_name="i")
    g = jax.vmap(jax.vmap(jx, axis_name="j"), axis_name="i")
    _close(f(x), g(x))
    # An unnamed vmap between: the collective is per element of the inner batch.
    f2 = mjcore.vmap(mjcore.vmap(lambda v: lax.psum(v, "i")), axis_name="i")
    g2 = jax.vmap(jax.vmap(lambda v: jax.lax.psum(v, "i")), axis_name="i")
    _close(f2(x), g2(x))


def test_unbatched_operand_and_integer_pmean() -> None:
    x = onp.arange(N * 3).reshape(N, 3)
    c = onp.arange(3.0)
    f = mjcore.vmap(lambda v: lax.psum(c, "i") + lax.pmean(v, "i"), axis_name="i")
    g = jax.vmap(lambda v: jax.lax.psum(c, "i") + jax.lax.pmean(v, "i"), axis_name="i")
    _close(f(x), g(x))


def test_scan_inside_named_vmap() -> None:
    x = _input((3,), 10)

    def body(carry, _):
        return carry + lax.psum(carry, "i") * 0.1, None

    def jbody(carry, _):
        return carry + jax.lax.psum(carry, "i") * 0.1, None

    f = mjcore.vmap(lambda v: mjcore.lax.scan(body, v, None, length=3)[0], axis_name="i")
    g = jax.vmap(lambda v: jax.lax.scan(jbody, v, None, length=3)[0], axis_name="i")
    _close(f(x), g(x))


# --- bad input ------------------------------------------------------------------------------


def test_collective_outside_mapped_axis_is_name_error() -> None:
    with pytest.raises(NameError, match="unbound axis name: 'i'"):
        lax.psum(onp.ones(3), "i")
    with pytest.raises(NameError, match="unbound axis name: 'j'"):
        mjcore.vmap(lambda v: lax.all_gather(v, "j"), axis_name="i")(onp.ones((2, 3)))
    with pytest.raises(NameError, match="unbound axis name: 'k'"):
        mjcore.jit(lambda v: lax.axis_index("k"))(onp.ones(3))


def test_collective_shape_errors_name_the_axis() -> None:
    with pytest.raises(ValueError, match=r"psum_scatter: dimension 0 .* axis 'i' \(4\)"):
        mjcore.vmap(lambda v: lax.psum_scatter(v, "i"), axis_name="i")(onp.ones((N, 3)))
    with pytest.raises(ValueError, match=r"all_to_all: split_axis 0 .* axis 'i' \(4\)"):
        mjcore.vmap(lambda v: lax.all_to_all(v, "i", 0, 0, tiled=True), axis_name="i")(
            onp.ones((N, 3))
        )
    with pytest.raises(ValueError, match="ppermute: sources and destinations must be unique"):
        mjcore.vmap(lambda v: lax.ppermute(v, "i", [(0, 1), (1, 1)]), axis_name="i")(
            onp.ones((N, 3))
        )


def test_every_collective_has_a_row() -> None:
    module = importlib.import_module("mjcore.lax.parallel")
    prims = {v.name for v in vars(module).values() if isinstance(v, AxisPrimitive)}
    covered: set[str] = set()
    for case in CASES:
        covered |= _primitive_names(mjcore.make_jaxpr(_named(case.fun))(_input(case.shape)[0]))
    assert sorted(prims - covered) == []


def _named(fun: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`fun` traced with axis 'i' bound as a device axis, so its collectives stay in the jaxpr."""

    def traced(v: Any) -> Any:
        with mjcore.core.extend_axis_env([mjcore.core.AxisFrame("i", N, None)]):
            return fun(v)

    return traced


def _primitive_names(closed: Any) -> set[str]:
    return {e.primitive.name for e in closed.jaxpr.eqns}


# --- 8 devices: shard_map and pmap against JAX, in one subprocess ---------------------------

CHECKS = Path(__file__).resolve().parent / "collective_checks.py"


def _check_names() -> list[str]:
    return [
        line[4:].split("(")[0]
        for line in CHECKS.read_text().splitlines()
        if line.startswith("def check_")
    ]


@pytest.fixture(scope="module")
def device_results(
    check_script_results: Callable[[Path], dict[str, str | None]],
) -> dict[str, str | None]:
    return check_script_results(CHECKS)


@pytest.mark.parametrize("mode", ["shardy", "gspmd"])  # jax_use_shardy_partitioner on, off
@pytest.mark.parametrize("name", _check_names())
def test_on_8_devices(device_results: dict[str, str | None], name: str, mode: str) -> None:
    key = f"{name}[{mode}]"
    assert key in device_results, f"{key} did not run"
    failure = device_results[key]
    assert failure is None, failure


def test_collectives_map_over_pytrees() -> None:
    tree = {"a": _input((3,), 20), "b": (_input((2, 2), 21),)}
    f = mjcore.vmap(lambda t: lax.pmean(t, "i"), axis_name="i")
    g = jax.vmap(lambda t: jax.lax.pmean(t, "i"), axis_name="i")
    out, ref = f(tree), g(tree)
    _close(out["a"], ref["a"])
    _close(out["b"][0], ref["b"][0])


def test_experimental_shard_map_is_the_same_function():
    # JAX programs import it from `jax.experimental.shard_map`
    from mjcore import experimental
    from mjcore.experimental.shard_map import shard_map as experimental_shard_map

    assert experimental_shard_map is mjcore.shard_map
    assert experimental.shard_map.shard_map is mjcore.shard_map
