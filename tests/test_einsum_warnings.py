"""`mjnp.einsum`'s floating-point warnings are NumPy's: its C einsum (the default, `optimize`
off) never tests the floating-point flags, so no overflow or invalid warning, and no error
under `errstate(all="raise")`, on the host path (small), the XLA path (large) and in eager
grad's forward pass; the values are unchanged. With `optimize`, NumPy's BLAS steps warn, and
so do ours (under the name `dot`, NumPy's `matmul`)."""

from __future__ import annotations

import warnings

import numpy as onp
import pytest

import mjcore
import mjnp as np


def _recorded(fun):
    """(fun(), [(category, message)] of the warnings it gave)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fun()
    return out, [(w.category, str(w.message)) for w in caught]


_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),  # a matrix product (dot_general's host rule: np.dot)
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ij,ij->", [(3, 4), (3, 4)]),  # a full contraction
    ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("i,i->i", [(6,), (6,)]),  # an elementwise product
    ("ij->", [(3, 4)]),  # a sum
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),  # overflow, then inf * 0 and inf - inf
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 3)]),
]


def _operands(shapes, scale):
    rng = onp.random.default_rng(len(shapes))
    ops = [rng.uniform(0.5, 1.5, size=s) * scale for s in shapes]
    if len(ops) == 3:
        ops[1][0, 0] = -ops[1][0, 0]  # a sign change: inf - inf downstream
        ops[2][1, :] = 0.0  # inf * 0
    return ops


@pytest.mark.parametrize("size", ["small", "large"])
@pytest.mark.parametrize("case", range(len(_CASES)), ids=[c[0] for c in _CASES])
def test_einsum_warns_as_numpy(case, size):
    subscripts, shapes = _CASES[case]
    if size == "large":  # XLA's path (its non-finite test re-runs NumPy's rules to warn)
        shapes = [tuple(d * 40 if d > 2 else d for d in s) for s in shapes]
    ops = _operands(shapes, 1e200 if len(shapes) > 1 else 1e308)
    want, want_warnings = _recorded(lambda: onp.einsum(subscripts, *ops))
    got, got_warnings = _recorded(lambda: np.einsum(subscripts, *[np.asarray(o) for o in ops]))
    assert got_warnings == want_warnings == []
    assert not onp.all(onp.isfinite(want))  # the inputs do overflow
    onp.testing.assert_allclose(onp.asarray(got), want, rtol=1e-12)
    with onp.errstate(all="raise"):  # NumPy raises nothing either
        onp.einsum(subscripts, *ops)
        again = np.einsum(subscripts, *[np.asarray(o) for o in ops])
    assert onp.asarray(again).tobytes() == onp.asarray(got).tobytes()


def test_einsum_in_eager_grads_forward_pass_warns_nothing():
    x = onp.full((3, 4), 1e200)

    def f(x):
        return np.sum(np.einsum("ij,kj->ik", x, x))

    (value, grad), caught = _recorded(lambda: mjcore.value_and_grad(f)(np.asarray(x)))
    assert caught == []
    assert float(value) == onp.inf
    onp.testing.assert_array_equal(onp.asarray(grad), onp.full((3, 4), 6e200))


def test_einsum_with_optimize_warns_where_numpys_blas_steps_do():
    a, b = onp.full((3, 4), 1e200), onp.full((4, 5), 1e200)
    _, want = _recorded(lambda: onp.einsum("ij,jk->ik", a, b, optimize=True))
    ma, mb = np.asarray(a), np.asarray(b)
    got, caught = _recorded(lambda: np.einsum("ij,jk->ik", ma, mb, optimize=True))
    assert [c for c, _ in caught] == [c for c, _ in want] == [RuntimeWarning]
    assert "overflow encountered" in caught[0][1] and "overflow encountered" in want[0][1]
    onp.testing.assert_array_equal(onp.asarray(got), onp.full((3, 5), onp.inf))
