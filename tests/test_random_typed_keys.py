"""Typed PRNG keys (`mjcore.random.key`, `mjcore.random_keys.KeyArray`) against JAX's typed
keys (x64): the same key data, the same draws, the same array behaviour over the key axes,
under jit, vmap, scan, cond and fori_loop."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import numpy as onp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mjcore
import mjnp
from mjcore import random as mjr
from mjcore.random_keys import KeyArray

jax.config.update("jax_enable_x64", True)
jr = jax.random


def _same_keys(got: Any, want: Any) -> None:
    assert isinstance(got, KeyArray), type(got)
    assert got.shape == want.shape and str(got.dtype) == str(want.dtype) == "key<fry>"
    onp.testing.assert_array_equal(
        onp.asarray(mjr.key_data(got)), onp.asarray(jr.key_data(want)), strict=True
    )


def _same(got: Any, want: Any) -> None:
    got, want = onp.asarray(got), onp.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    onp.testing.assert_array_equal(got, want, strict=True)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(-(2**63), 2**63 - 1))
def test_key_data_of_a_seed_matches_jax(seed):
    k = mjr.key(seed)
    _same_keys(k, jr.key(seed))
    _same(mjr.key_data(k), mjr.PRNGKey(seed))  # typed keys overlay the raw key


@pytest.mark.parametrize("num", [2, 5, (2, 3), ()])
def test_split_and_fold_in_of_typed_keys_are_typed_keys(num):
    k, jk = mjr.key(7), jr.key(7)
    _same_keys(mjr.split(k, num), jr.split(jk, num))
    _same_keys(mjr.fold_in(k, 11), jr.fold_in(jk, 11))
    _same_keys(mjr.clone(k), jr.clone(jk))
    raw = mjr.split(mjr.PRNGKey(7), num)
    assert not isinstance(raw, KeyArray)  # raw keys stay raw


DRAWS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("normal", lambda r, k: r.normal(k, (3, 2))),
    ("uniform", lambda r, k: r.uniform(k, (4,), minval=-2.0, maxval=3.0)),
    ("randint", lambda r, k: r.randint(k, (5,), 0, 10)),
    ("bernoulli", lambda r, k: r.bernoulli(k, 0.3, (6,))),
    ("bits", lambda r, k: r.bits(k, (3,))),
    ("permutation", lambda r, k: r.permutation(k, 8)),
    ("choice", lambda r, k: r.choice(k, 10, (3,), replace=False)),
    ("gamma", lambda r, k: r.gamma(k, 2.5, (3,))),
    ("categorical", lambda r, k: r.categorical(k, onp.log(onp.array([0.2, 0.3, 0.5])), shape=(4,))),
]


@functools.cache
def _jax_draws() -> dict[str, onp.ndarray]:
    """JAX's draws of every row from its typed key 3, compiled as one JAX program (rather than
    one per row: compiling is most of these tests' time)."""
    outs = jax.jit(lambda k: [draw(jr, k) for _, draw in DRAWS])(jr.key(3))
    return {name: onp.asarray(o) for (name, _), o in zip(DRAWS, outs, strict=True)}


@pytest.mark.parametrize("name,draw", DRAWS, ids=[d[0] for d in DRAWS])
def test_samplers_draw_the_same_from_typed_and_raw_keys_and_as_jax(name, draw):
    got = draw(mjr, mjr.key(3))
    _same(got, draw(mjr, mjr.PRNGKey(3)))
    if name == "gamma":  # gamma is within a few ulp of JAX's, not bit for bit
        onp.testing.assert_allclose(onp.asarray(got), _jax_draws()[name], rtol=1e-13)
    else:
        _same(got, _jax_draws()[name])


INDICES = [
    0,
    -1,
    slice(1, None),
    slice(None, None, -2),
    (1, 2),
    (slice(None), 0),
    Ellipsis,
    (Ellipsis, 1),
    (None, 0),
    onp.array([True, False, True, False]),
    onp.array([3, 0, 0]),
]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_indexing_works_on_the_key_axes_as_jax(index):
    ks, jks = mjr.split(mjr.key(1), (4, 3)), jr.split(jr.key(1), (4, 3))
    _same_keys(ks[index], jks[index])


def test_too_many_indices_is_an_index_error_not_an_index_into_the_data():
    with pytest.raises(IndexError):
        mjr.split(mjr.key(1), 3)[0, 1]


def test_reshape_transpose_len_iteration_and_equality_as_jax():
    ks, jks = mjr.split(mjr.key(5), (2, 3)), jr.split(jr.key(5), (2, 3))
    _same_keys(ks.reshape(3, 2), jks.reshape(3, 2))
    _same_keys(ks.reshape((-1,)), jks.reshape((-1,)))
    _same_keys(ks.ravel(), jks.ravel())
    _same_keys(ks.T, jks.T)
    _same_keys(ks.transpose(1, 0), jks.transpose(1, 0))
    assert len(ks) == len(jks) == 2 and ks.ndim == 2 and ks.size == 6
    for got, want in zip(ks, jks, strict=True):
        _same_keys(got, want)
    flat, jflat = ks.ravel(), jks.ravel()
    _same(flat == flat[::-1], jflat == jflat[::-1])
    _same(flat != flat[0], jflat != jflat[0])
    with pytest.raises(ValueError, match="cannot reshape"):
        ks.reshape(4, 2)
    with pytest.raises(TypeError, match="len"):
        len(mjr.key(0))


def test_repr_is_jax_s():
    for k, jk in [(mjr.key(0), jr.key(0)), (mjr.split(mjr.key(0), 3), jr.split(jr.key(0), 3))]:
        assert repr(k) == repr(jk)


def _loop_program(r: Any, k: Any) -> Any:
    def body(carry, _):
        key, total = carry
        key, sub = r.split(key)
        return (key, total + r.uniform(sub)), r.normal(sub, (2,))

    (key, total), draws = (mjcore.lax if r is mjr else jax.lax).scan(body, (k, 0.0), None, length=4)
    return key, total, draws


def test_typed_keys_flow_through_jit_vmap_scan_cond_and_fori_loop_as_jax():
    k, jk = mjr.key(9), jr.key(9)
    # jit: in and out
    _same_keys(mjcore.jit(lambda kk: mjr.split(kk, 3))(k), jax.jit(lambda kk: jr.split(kk, 3))(jk))
    # vmap over a batch of keys, and keys returned from vmap
    ks, jks = mjr.split(k, 5), jr.split(jk, 5)
    _same(
        mjcore.vmap(lambda kk: mjr.normal(kk, (2,)))(ks),
        jax.vmap(lambda kk: jr.normal(kk, (2,)))(jks),
    )
    _same_keys(
        mjcore.vmap(lambda kk: mjr.fold_in(kk, 1))(ks), jax.vmap(lambda kk: jr.fold_in(kk, 1))(jks)
    )
    # scan with a key in the carry
    (key, total, draws), (jkey, jtotal, jdraws) = _loop_program(mjr, k), _loop_program(jr, jk)
    _same_keys(key, jkey)
    _same(total, jtotal)
    _same(draws, jdraws)
    # cond returning keys, fori_loop carrying one
    for pred in (True, False):
        got = mjcore.lax.cond(pred, lambda kk: mjr.split(kk)[0], lambda kk: kk, k)
        want = jax.lax.cond(pred, lambda kk: jr.split(kk)[0], lambda kk: kk, jk)
        _same_keys(got, want)
    got = mjcore.lax.fori_loop(0, 3, lambda i, kk: mjr.fold_in(kk, i), k)
    want = jax.lax.fori_loop(0, 3, lambda i, kk: jr.fold_in(kk, i), jk)
    _same_keys(got, want)


def test_wrap_key_data_round_trips_and_key_impl():
    data = mjr.key_data(mjr.split(mjr.key(2), 4))
    _same_keys(mjr.wrap_key_data(data), jr.wrap_key_data(jr.key_data(jr.split(jr.key(2), 4))))
    _same_keys(mjr.wrap_key_data(onp.asarray(data)), jr.wrap_key_data(onp.asarray(data)))
    raw = mjr.PRNGKey(4)
    assert mjr.key_data(raw) is raw
    assert mjr.key_impl(mjr.key(0)) == str(jr.key_impl(jr.key(0))) == "threefry2x32"


@pytest.mark.parametrize(
    "call,error,match",
    [
        (
            lambda: mjr.normal(mjr.split(mjr.key(0), 3), (2,)),
            ValueError,
            "normal: accepts a single key.*shape \\(3,\\)",
        ),
        (lambda: mjr.split(mjr.key(0), 2) + 1, TypeError, "unsupported operand"),
        (lambda: onp.asarray(mjr.key(0)), TypeError, "key_data"),
        (lambda: bool(mjr.key(0)), TypeError, "truth value of a key array"),
        (
            lambda: mjr.wrap_key_data(onp.zeros(2, onp.int32)),
            TypeError,
            "wrap_key_data: key data must be a uint32",
        ),
        (
            lambda: mjr.wrap_key_data(onp.zeros(3, onp.uint32)),
            TypeError,
            "shape \\(\\.\\.\\., 2\\)",
        ),
        (
            lambda: mjr.wrap_key_data(onp.zeros(2, onp.uint32), impl="rbg"),
            ValueError,
            "threefry2x32",
        ),
        (lambda: mjr.key(onp.array([1, 2])), TypeError, "key: accepts a scalar seed"),
        (
            lambda: mjnp.sin(mjr.key(0)),
            TypeError,
            "mjnp.sin: argument 0 of type KeyArray is not an array",
        ),
    ],
    ids=[
        "batched-key",
        "arithmetic",
        "to-numpy",
        "bool",
        "data-dtype",
        "data-shape",
        "impl",
        "array-seed",
        "mjnp-op",
    ],
)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
