"""mjcore.random (counter-based keys) against jax.random (x64) as the oracle, bit for bit.

Each draw is written once against a namespace `r` (mjcore.random or jax.random, which share
an API) and checked eagerly, under jit, and under vmap over split keys against a Python loop;
then gradients, scan, seeds and error messages."""

from __future__ import annotations

import functools
import subprocess
import sys
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
from mjcore import lax
from mjcore import random as mjr

jax.config.update("jax_enable_x64", True)
jr = jax.random


class Draw(NamedTuple):
    name: str
    fun: Callable[[Any, Any], Any]  # (namespace, key) -> array


_X = onp.arange(24.0).reshape(4, 6)
_P = onp.array([0.1, 0.2, 0.3, 0.4])
_I64 = onp.iinfo(onp.int64)

DRAWS = [
    Draw("split", lambda r, k: r.split(k)),
    Draw("split-(2,3)", lambda r, k: r.split(k, (2, 3))),
    Draw("fold_in", lambda r, k: r.fold_in(k, 7)),
    Draw("fold_in-int64-negative", lambda r, k: r.fold_in(k, onp.int64(-5))),
    *[
        Draw(f"bits-{dt}", lambda r, k, dt=dt: r.bits(k, (3, 5), dt))
        for dt in ("uint8", "uint16", "uint32", "uint64")
    ],
    Draw("bits-default", lambda r, k: r.bits(k, (2,))),
    *[
        Draw(f"uniform-{dt}", lambda r, k, dt=dt: r.uniform(k, (4, 3), dt))
        for dt in ("float16", "float32", "float64")
    ],
    Draw(
        "uniform-bounds", lambda r, k: r.uniform(k, (4, 3), "float64", -2.0, onp.arange(1.0, 4.0))
    ),
    Draw("uniform-scalar", lambda r, k: r.uniform(k, (), "float64")),
    *[
        Draw(f"normal-{dt}", lambda r, k, dt=dt: r.normal(k, (4, 3), dt))
        for dt in ("float16", "float32", "float64", "complex64", "complex128")
    ],
    *[
        Draw(f"randint-{dt}", lambda r, k, dt=dt: r.randint(k, (20,), -300, 300, dt))
        for dt in ("int8", "uint16", "int32", "uint64")
    ],
    Draw("randint-0-256-uint8", lambda r, k: r.randint(k, (20,), 0, 256, "uint8")),
    Draw("randint-full-int64", lambda r, k: r.randint(k, (20,), _I64.min, _I64.max, "int64")),
    Draw("randint-array-bounds", lambda r, k: r.randint(k, (3, 4), onp.arange(4), 10)),
    Draw("randint-empty-range", lambda r, k: r.randint(k, (6,), 5, 5)),
    Draw("bernoulli", lambda r, k: r.bernoulli(k, 0.3, (10,))),
    Draw("bernoulli-float32-p", lambda r, k: r.bernoulli(k, onp.float32([0.1, 0.5, 0.9]))),
    Draw("permutation-int", lambda r, k: r.permutation(k, 10)),
    Draw("permutation-2d-axis1", lambda r, k: r.permutation(k, _X, axis=1)),
    Draw("permutation-independent", lambda r, k: r.permutation(k, _X, 1, True)),
    Draw("choice-int", lambda r, k: r.choice(k, 5, (3,))),
    Draw("choice-array-axis1", lambda r, k: r.choice(k, _X, (2, 3), axis=1)),
    Draw("choice-no-replace", lambda r, k: r.choice(k, 7, (4,), replace=False)),
    Draw("choice-no-replace-array", lambda r, k: r.choice(k, _X, (2,), False, axis=1)),
    Draw("choice-p", lambda r, k: r.choice(k, 4, (8,), p=_P)),
    Draw("choice-p-array", lambda r, k: r.choice(k, _X, (5,), p=_P.astype("float32"))),
    Draw("choice-p-no-replace", lambda r, k: r.choice(k, 4, (3,), replace=False, p=_P)),
]
DRAW_PARAMS = [pytest.param(d, id=d.name) for d in DRAWS]
# One or two draws per function for the transformations (each compiles its own program).
TRANSFORMED = {
    "split-(2,3)",
    "fold_in",
    "bits-uint64",
    "uniform-bounds",
    "normal-complex64",
    "randint-int8",
    "randint-array-bounds",
    "bernoulli",
    "permutation-2d-axis1",
    "choice-p",
    "choice-no-replace-array",
}
TRANSFORMED_PARAMS = [pytest.param(d, id=d.name) for d in DRAWS if d.name in TRANSFORMED]


def _assert_same(got: Any, want: Any) -> None:
    got, want = onp.asarray(got), onp.asarray(want)
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    onp.testing.assert_array_equal(got, want, strict=True)


@pytest.mark.parametrize(
    "seed",
    [
        0,
        1,
        -1,
        2**32,
        2**40 + 5,
        -(2**40),
        2**63 - 1,
        True,
        onp.int32(-1),
        onp.int8(-3),
        onp.uint32(7),
        onp.uint64(2**64 - 1),
    ],
    ids=repr,
)
def test_seed_matches_jax(seed):
    _assert_same(mjr.PRNGKey(seed), jr.PRNGKey(seed))
    _assert_same(mjr.key_data(mjr.key(seed)), jr.key_data(jr.key(seed)))


def _family(name: str) -> str:
    return name.split("-")[0]


@functools.cache
def _jax_family(family: str) -> dict[str, onp.ndarray]:
    """JAX's draws of one function's family with key 42, compiled as one JAX program (rather
    than one per draw: compiling is most of these tests' time)."""
    draws = [d for d in DRAWS if _family(d.name) == family]
    outs = jax.jit(lambda k: [d.fun(jr, k) for d in draws])(jr.PRNGKey(42))
    return {d.name: onp.asarray(o) for d, o in zip(draws, outs, strict=True)}


@pytest.mark.parametrize("draw", DRAW_PARAMS)
def test_eager_matches_jax(draw: Draw):
    _assert_same(draw.fun(mjr, mjr.PRNGKey(42)), _jax_family(_family(draw.name))[draw.name])


@pytest.mark.parametrize("draw", TRANSFORMED_PARAMS)
def test_jit_matches_eager(draw: Draw):
    key = mjr.PRNGKey(7)
    _assert_same(mjcore.jit(lambda k: draw.fun(mjr, k))(key), draw.fun(mjr, key))


@pytest.mark.parametrize("draw", TRANSFORMED_PARAMS)
def test_vmap_over_split_keys_matches_loop(draw: Draw):
    keys = mjr.split(mjr.PRNGKey(3), 3)
    out = mjcore.vmap(lambda k: draw.fun(mjr, k))(keys)
    _assert_same(out, onp.stack([onp.asarray(draw.fun(mjr, k)) for k in onp.asarray(keys)]))


def test_vmap_of_seeds_and_fold_in_data_match_jax():
    _assert_same(
        mjcore.vmap(mjr.PRNGKey)(onp.arange(-2, 3)), jax.vmap(jr.PRNGKey)(jnp.arange(-2, 3))
    )
    data = onp.arange(4, dtype=onp.uint32)
    _assert_same(
        mjcore.vmap(lambda d: mjr.fold_in(mjr.PRNGKey(1), d))(data),
        jax.vmap(lambda d: jr.fold_in(jr.PRNGKey(1), d))(data),
    )
    _assert_same(mjcore.jit(mjr.PRNGKey)(onp.int64(-7)), jr.PRNGKey(-7))


def _first_two(keys: Any) -> tuple[Any, Any]:
    return tuple(lax.reshape(lax.slice(keys, (i, 0), (i + 1, 2)), (2,)) for i in range(2))


def test_scan_threads_keys_like_jax():
    def body(key, _):
        key, sub = _first_two(mjr.split(key))
        return key, mjr.normal(sub, (2,))

    def jax_body(key, _):
        key, sub = jr.split(key)
        return key, jr.normal(sub, (2,))

    _, ys = mjcore.scan(body, mjr.PRNGKey(5), None, length=4)
    _, want = jax.lax.scan(jax_body, jr.PRNGKey(5), None, length=4)
    _assert_same(ys, want)


def _total(x: Any) -> Any:
    return lax.reduce_sum(x, tuple(range(len(x.aval.shape))))


def test_grad_through_uniform_bounds_matches_jax():
    def f(lo, hi):
        return _total(mjr.uniform(mjr.PRNGKey(0), (5,), float, lo, hi))

    def jax_f(lo, hi):
        return jr.uniform(jr.PRNGKey(0), (5,), float, lo, hi).sum()

    want = jax.grad(jax_f, argnums=(0, 1))(0.5, 2.0)
    onp.testing.assert_allclose(mjcore.grad(f, argnums=(0, 1))(0.5, 2.0), want, rtol=1e-14)
    got_jit = mjcore.jit(mjcore.grad(f, argnums=(0, 1)))(0.5, 2.0)
    onp.testing.assert_allclose(got_jit, want, rtol=1e-14)


def test_grad_through_array_bounds_and_normal_matches_jax():
    lo = onp.array([0.0, 1.0, -1.0])

    def f(lo):
        return _total(lax.mul(mjr.uniform(mjr.PRNGKey(2), (2, 3), float, lo, 3.0), lo))

    def jax_f(lo):
        return (jr.uniform(jr.PRNGKey(2), (2, 3), float, lo, 3.0) * lo).sum()

    onp.testing.assert_allclose(mjcore.grad(f)(lo), jax.grad(jax_f)(lo), rtol=1e-14)

    def g(mu):
        return _total(lax.mul(lax.add(mu, mjr.normal(mjr.PRNGKey(1), (3,))), mu))

    def jax_g(mu):
        return ((mu + jr.normal(jr.PRNGKey(1), (3,))) * mu).sum()

    onp.testing.assert_allclose(mjcore.grad(g)(1.5), jax.grad(jax_g)(1.5), rtol=1e-14)


BAD_KEYS = [
    pytest.param(
        "split",
        lambda: mjr.split(onp.zeros(2, onp.int32)),
        TypeError,
        "split: a key must be a uint32",
        id="dtype",
    ),
    pytest.param(
        "normal",
        lambda: mjr.normal(onp.zeros(3, onp.uint32)),
        ValueError,
        r"normal: a key must have shape \(2,\)",
        id="shape",
    ),
    pytest.param(
        "uniform",
        lambda: mjr.uniform(mjr.split(mjr.PRNGKey(0), 4)),
        ValueError,
        "mjcore.vmap",
        id="batched",
    ),
]


@pytest.mark.parametrize("name,call,exc,match", BAD_KEYS)
def test_bad_keys_raise(name, call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize(
    "call,exc,match",
    [
        pytest.param(
            lambda: mjr.PRNGKey(1.5),
            TypeError,
            "PRNGKey: the seed must be an integer",
            id="float-seed",
        ),
        pytest.param(
            lambda: mjr.PRNGKey(onp.arange(2)),
            TypeError,
            "PRNGKey: accepts a scalar seed",
            id="array-seed",
        ),
        pytest.param(lambda: mjr.key(2**63), OverflowError, "key: seed", id="huge-seed"),
        pytest.param(
            lambda: mjr.fold_in(mjr.PRNGKey(0), -1), OverflowError, "fold_in", id="fold_in-negative"
        ),
        pytest.param(
            lambda: mjr.fold_in(mjr.PRNGKey(0), onp.arange(2)),
            TypeError,
            "fold_in: data must be a scalar",
            id="fold_in-array",
        ),
        pytest.param(
            lambda: mjr.bits(mjr.PRNGKey(0), (2,), "int32"),
            ValueError,
            "bits: dtype must be an unsigned",
            id="bits-int",
        ),
        pytest.param(
            lambda: mjr.uniform(mjr.PRNGKey(0), (2,), "int32"),
            ValueError,
            "uniform: dtype must be a float",
            id="uniform-int",
        ),
        pytest.param(
            lambda: mjr.uniform(mjr.PRNGKey(0), (3,), float, onp.zeros(4)),
            ValueError,
            "uniform: parameter shapes",
            id="uniform-bounds-shape",
        ),
        pytest.param(
            lambda: mjr.normal(mjr.PRNGKey(0), (2,), "int64"),
            ValueError,
            "normal: dtype must be a float or complex",
            id="normal-int",
        ),
        pytest.param(
            lambda: mjr.randint(mjr.PRNGKey(0), (2,), 0, 3, float),
            TypeError,
            "randint: dtype must be an integer",
            id="randint-float",
        ),
        pytest.param(
            lambda: mjr.bernoulli(mjr.PRNGKey(0), 1),
            TypeError,
            "bernoulli: the probability p must have a float",
            id="bernoulli-int-p",
        ),
        pytest.param(
            lambda: mjr.permutation(mjr.PRNGKey(0), 2.0),
            TypeError,
            "permutation: x must be an integer",
            id="permutation-float",
        ),
        pytest.param(
            lambda: mjr.choice(mjr.PRNGKey(0), 3, (4,), replace=False),
            ValueError,
            "larger sample",
            id="choice-too-many",
        ),
        pytest.param(
            lambda: mjr.choice(mjr.PRNGKey(0), 3, (2,), p=onp.ones(4)),
            ValueError,
            "p must be None or a 1-D",
            id="choice-p-shape",
        ),
        pytest.param(
            lambda: mjr.choice(mjr.PRNGKey(0), 0, (2,)),
            ValueError,
            "greater than 0",
            id="choice-empty",
        ),
    ],
)
def test_bad_arguments_raise(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_loaded_on_first_use_only() -> None:
    # Import time is a goal: `import mjnp` must not pay for the samplers.
    code = (
        "import sys, mjnp, mjcore; assert 'mjcore.random' not in sys.modules; "
        "from mjcore import random; assert random is mjcore.random; print(random.PRNGKey(3))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[0 3]"
