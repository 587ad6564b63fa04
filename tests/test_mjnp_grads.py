"""Derivatives of every differentiable mjnp function (the table in tests/grad_cases.py):
`check_grads` (forward mode against finite differences, reverse against forward; second order
for the smooth elementwise ones) and the gradient of a fixed scalar loss against JAX's (x64)."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mjcore
import mjnp
from mjcore.test_util import check_grads
from tests.grad_cases import GRAD_CASES, GradCase

jax.config.update("jax_enable_x64", True)

_IDS = [c.name for c in GRAD_CASES]
_DOC = Path(__file__).resolve().parent.parent / "docs" / "differentiability.md"

# Differentiable in the doc but not in the table, with the reason.
_NOT_IN_TABLE = {
    "mintypecode": "returns a type code; the probe's 'array' output is its input echoed",
}
# New modules whose authors check their own derivatives.
_TESTED_ELSEWHERE = frozenset(
    {"histogram", "interp", "gradient", "trapezoid", "convolve", "correlate", "bincount"}
)


def _inexact_leaves(out: Any, tree_leaves: Any) -> list[Any]:
    return [x for x in tree_leaves(out) if getattr(x, "dtype", np.dtype(int)).kind in "fc"]


def _weights(case: GradCase) -> list[np.ndarray]:
    """Fixed random cotangents, one per inexact output of the mjnp function."""
    rng = np.random.default_rng(len(case.name))
    leaves = _inexact_leaves(case.call(mjnp, *case.args), mjcore.tree_util.tree_leaves)
    out = []
    for leaf in leaves:
        w = rng.standard_normal(leaf.shape)
        out.append(w + 1j * rng.standard_normal(leaf.shape) if leaf.dtype.kind == "c" else w)
    return out


def _loss(case: GradCase, module: Any, tree_leaves: Any, weights: list[np.ndarray]) -> Any:
    """A real scalar of all inexact outputs: sum(Re(w) * Re(y) + Im(w) * Im(y))."""

    def loss(*args: Any) -> Any:
        leaves = _inexact_leaves(case.call(module, *args), tree_leaves)
        total = 0.0
        for leaf, w in zip(leaves, weights, strict=True):
            total = total + module.sum(np.real(w) * module.real(leaf))
            if leaf.dtype.kind == "c":
                total = total + module.sum(np.imag(w) * module.imag(leaf))
        return total

    return loss


@pytest.mark.parametrize("case", GRAD_CASES, ids=_IDS)
def test_check_grads(case):
    def fun(*args):
        return tuple(_inexact_leaves(case.call(mjnp, *args), mjcore.tree_util.tree_leaves))

    check_grads(fun, case.args, order=case.order, modes=("fwd", "rev"))


_JAX_CASES = [c for c in GRAD_CASES if c.jax]
# JAX's gradients are computed for this many consecutive rows in one jax.jit: each compile has
# a fixed cost that one per row would pay 238 times. Small groups keep a pytest-xdist worker
# that runs a few rows from compiling the rest.
_GROUP = 16


@functools.cache
def _jax_grads(group: int) -> list[Any]:
    """JAX's gradients of `_loss` for rows `group * _GROUP` onwards of `_JAX_CASES`."""
    cases = _JAX_CASES[group * _GROUP : (group + 1) * _GROUP]
    grads = [
        jax.grad(
            _loss(case, jnp, jax.tree_util.tree_leaves, _weights(case)),
            tuple(range(len(case.args))),
        )
        for case in cases
    ]
    every_row = jax.jit(lambda rows: [g(*args) for g, args in zip(grads, rows, strict=True)])
    return every_row([tuple(jnp.asarray(a) for a in case.args) for case in cases])


@pytest.mark.parametrize("case", _JAX_CASES, ids=lambda c: c.name)
def test_grad_matches_jax(case):
    weights = _weights(case)
    argnums = tuple(range(len(case.args)))
    got = mjcore.grad(_loss(case, mjnp, mjcore.tree_util.tree_leaves, weights), argnums)(*case.args)
    index = next(i for i, c in enumerate(_JAX_CASES) if c is case)
    expected = _jax_grads(index // _GROUP)[index % _GROUP]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=case.rtol, atol=case.rtol)


def test_table_covers_every_differentiable_function():
    """Every function docs/differentiability.md lists as differentiable has a row."""
    rows = re.findall(r"^\| `([\w.]+)` \| differentiable \|", _DOC.read_text(), re.M)
    assert rows, "no differentiable functions found in the doc"
    missing = set(rows) - set(_IDS) - set(_NOT_IN_TABLE) - _TESTED_ELSEWHERE
    assert not missing, f"add rows to tests/grad_cases.py for {sorted(missing)}"


@pytest.mark.parametrize("name", ["abs", "absolute", "fabs"])
def test_abs_slope_at_the_kink_is_jax_s(name):
    # JAX's convention: d|x|/dx is +1 at +0 and at -0, in forward and reverse mode.
    x = np.array([-2.0, -0.0, 0.0, 3.0])
    fun, jfun = getattr(mjnp, name), getattr(jnp, name)
    want = jax.grad(lambda v: jnp.sum(jfun(v)))(x)
    np.testing.assert_array_equal(np.asarray(mjcore.grad(lambda v: mjnp.sum(fun(v)))(x)), want)
    np.testing.assert_array_equal(np.asarray(mjcore.vmap(mjcore.grad(fun))(x)), want)
    _, tangent = mjcore.jvp(fun, (x,), (np.ones(4),))
    np.testing.assert_array_equal(np.asarray(tangent), jax.jvp(jfun, (x,), (np.ones(4),))[1])


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
@pytest.mark.parametrize("x1,x2", [(1.0, 1.0), (-0.5, 2.0), (2.0, -0.5), (3.0, -np.inf)])
def test_logaddexp_derivatives_at_and_off_ties_are_jax_s(name, x1, x2):
    # At a tie the derivative splits 1/2 and 1/2; JAX's custom rule is the oracle.
    fun, jfun = getattr(mjnp, name), getattr(jnp, name)
    got = mjcore.grad(fun, (0, 1))(x1, x2)
    want = jax.grad(jfun, (0, 1))(x1, x2)
    np.testing.assert_allclose([float(g) for g in got], [float(w) for w in want], rtol=1e-14)
    got2 = mjcore.grad(mjcore.grad(fun))(x1, x2)
    np.testing.assert_allclose(float(got2), float(jax.grad(jax.grad(jfun))(x1, x2)), rtol=1e-13)
