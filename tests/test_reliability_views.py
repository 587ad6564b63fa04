"""Writes through a view of a traced value reach its base, as eagerly (issue 20: inside `jit`,
`vmap` and `grad`, `v = x[1:3]; v[:] = 7` used to leave `x` unchanged without a word)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as onp
import pytest

import mjcore
import mjnp as np


def _slice_set(x: Any) -> Any:
    v = x[1:3]
    v[:] = 7.0
    return x


def _slice_iadd(x: Any) -> Any:
    v = x[1:3]
    v += x[0:2]
    return x * 1.0


def _reshape_transpose_set(x: Any) -> Any:
    y = x.reshape(2, 2)
    y.T[0] = 5.0
    return x


def _base_write_seen_by_view(x: Any) -> Any:
    v = x[1:3]
    x[1] = 9.0
    return v * 1.0


def _strided_fill(x: Any) -> Any:
    x[::3].fill(-1.0)
    return x


def _nested_views(x: Any) -> Any:
    v = x[1:]
    w = v[::2]
    w *= 10.0
    return x + v.sum()


def _imag_write(x: Any) -> Any:
    z = x * (1.0 + 2.0j)
    z.imag[0] = 0.0
    return np.abs(z)


FUNCTIONS: list[Callable[[Any], Any]] = [
    _slice_set,
    _slice_iadd,
    _reshape_transpose_set,
    _base_write_seen_by_view,
    _strided_fill,
    _nested_views,
    _imag_write,
]
IDS = [f.__name__.strip("_") for f in FUNCTIONS]


def _numpy(f: Callable[[Any], Any], x: onp.ndarray) -> onp.ndarray:
    """`f` run by NumPy itself, whose views share memory: the oracle."""
    module = f.__globals__
    saved = module["np"]
    module["np"] = onp
    try:
        return onp.asarray(f(x.copy()))
    finally:
        module["np"] = saved


X = onp.array([0.5, 1.5, -2.0, 3.0])


@pytest.mark.parametrize("f", FUNCTIONS, ids=IDS)
def test_eager_view_writes_match_numpy(f: Callable[[Any], Any]) -> None:
    onp.testing.assert_array_equal(onp.asarray(f(np.asarray(X))), _numpy(f, X))


@pytest.mark.parametrize("f", FUNCTIONS, ids=IDS)
def test_view_writes_reach_the_base_under_jit(f: Callable[[Any], Any]) -> None:
    onp.testing.assert_allclose(onp.asarray(mjcore.jit(f)(np.asarray(X))), _numpy(f, X))


@pytest.mark.parametrize("f", FUNCTIONS, ids=IDS)
def test_view_writes_reach_the_base_under_vmap(f: Callable[[Any], Any]) -> None:
    batch = onp.stack([X, -X, X[::-1]])
    got = mjcore.vmap(f)(np.asarray(batch))
    onp.testing.assert_allclose(onp.asarray(got), onp.stack([_numpy(f, b) for b in batch]))


@pytest.mark.parametrize("f", FUNCTIONS, ids=IDS)
def test_view_writes_are_differentiated(f: Callable[[Any], Any]) -> None:
    weights = onp.arange(1.0, 5.0)[: _numpy(f, X).size]

    def loss(x: Any) -> Any:
        return np.sum(f(x) * weights)

    for g in (mjcore.grad(loss), mjcore.jit(mjcore.grad(loss))):
        analytic = onp.asarray(g(np.asarray(X)))
        eps = 1e-6
        numeric = onp.array(
            [
                (float(loss(np.asarray(X + eps * e))) - float(loss(np.asarray(X - eps * e))))
                / (2 * eps)
                for e in onp.eye(X.size)
            ]
        )
        onp.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-6)


def test_write_through_traced_view_of_a_constant_raises_not_lost() -> None:
    # A view, inside jit, of an array closed over from outside cannot reach it (the array is
    # concrete, the write traced): a clear TypeError, as JAX's immutable arrays give.
    a = np.arange(4.0)
    leaked = []

    def g(x: Any) -> Any:
        v = a[1:3]
        leaked.append(v)
        v[:] = x
        return x

    with pytest.raises(TypeError, match=r"x = x\.at\[idx\]\.set\(v\)"):
        mjcore.jit(g)(1.0)
    a[1] = 10.0  # an eager write to the base leaves the leaked traced view alone
    onp.testing.assert_array_equal(onp.asarray(a), [0.0, 10.0, 2.0, 3.0])
