"""`mjnp.linalg` raises NumPy's `LinAlgError` where NumPy does: bad shapes always, numerically
failed decompositions eagerly; under `jit` the failure shows as infinities or NaNs instead."""

from __future__ import annotations

import numpy as np
import pytest

import mjcore
import mjnp

LA = mjnp.linalg
_SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
_INDEFINITE = np.array([[1.0, 2.0], [2.0, 1.0]])
_NAN = np.array([[np.nan, 1.0], [1.0, 1.0]])
_INF = np.array([[np.inf, 1.0], [1.0, 1.0]])
_ONE_SINGULAR = np.stack([np.eye(2), _SINGULAR])
_NEAR_SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0 + 1e-12]])

# (id, function name, arguments); NumPy decides whether and what to raise.
CASES = [
    ("inv-singular", "inv", (_SINGULAR,)),
    ("inv-zeros", "inv", (np.zeros((3, 3)),)),
    ("inv-batch-one-singular", "inv", (_ONE_SINGULAR,)),
    ("inv-near-singular", "inv", (_NEAR_SINGULAR,)),
    ("inv-nan", "inv", (np.full((2, 2), np.nan),)),
    ("inv-1d", "inv", (np.ones(3),)),
    ("inv-not-square", "inv", (np.ones((2, 3)),)),
    ("solve-singular", "solve", (_SINGULAR, np.ones(2))),
    ("solve-singular-matrix-rhs", "solve", (_SINGULAR, np.ones((2, 3)))),
    ("solve-not-square", "solve", (np.ones((2, 3)), np.ones(2))),
    ("cholesky-indefinite", "cholesky", (_INDEFINITE,)),
    ("cholesky-negative", "cholesky", (-np.eye(3),)),
    ("cholesky-batch-one-indefinite", "cholesky", (np.stack([np.eye(2), _INDEFINITE]),)),
    ("cholesky-nan", "cholesky", (np.full((2, 2), np.nan),)),
    ("cholesky-1d", "cholesky", (np.ones(2),)),
    ("cholesky-not-square", "cholesky", (np.ones((3, 2)),)),
    ("eig-nan", "eig", (_NAN,)),
    ("eig-inf", "eig", (_INF,)),
    ("eigvals-nan", "eigvals", (_NAN,)),
    ("eig-not-square", "eig", (np.ones((2, 3)),)),
    ("eigh-nan", "eigh", (np.full((2, 2), np.nan),)),
    ("eigh-1d", "eigh", (np.ones(2),)),
    ("eigvalsh-not-square", "eigvalsh", (np.ones((2, 3)),)),
    ("svd-nan", "svd", (_NAN,)),
    ("svd-nan-values-only", "svd", (_NAN, True, False)),
    ("svdvals-nan", "svdvals", (_NAN,)),
    ("svd-1d", "svd", (np.ones(3),)),
    ("det-singular", "det", (_SINGULAR,)),
    ("det-1d", "det", (np.ones(3),)),
    ("slogdet-not-square", "slogdet", (np.ones((2, 3)),)),
    ("matrix_power-not-square", "matrix_power", (np.ones((2, 3)), 2)),
    ("tensorinv-singular", "tensorinv", (np.zeros((2, 2, 4)), 2)),
]
_NUMERICAL = (
    "Singular matrix",
    "Matrix is not positive definite",
    "Eigenvalues did not converge",
    "SVD did not converge",
    "Array must not contain infs or NaNs",
)


def _outcome(module, name, args):
    try:
        with np.errstate(all="ignore"):
            getattr(module.linalg, name)(*args)
    except np.linalg.LinAlgError as err:
        return "LinAlgError", str(err).split(": ", 1)[-1].split(" (")[0]
    return "ok", None


@pytest.mark.parametrize("name,args", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_linalg_errors_match_numpy(name, args):
    expected = _outcome(np, name, args)
    got = _outcome(mjnp, name, args)
    assert got[0] == expected[0]
    if expected[1] in _NUMERICAL:  # shape errors word their messages differently
        assert got[1] == expected[1]


def test_linalg_error_is_numpys_class():
    assert LA.LinAlgError is np.linalg.LinAlgError
    with pytest.raises(np.linalg.LinAlgError, match=r"mjnp\.linalg\.inv: Singular matrix"):
        LA.inv(mjnp.asarray(_SINGULAR))


def test_under_jit_a_failed_decomposition_gives_inf_or_nan():
    inv = np.asarray(mjcore.jit(LA.inv)(_SINGULAR))
    assert not np.isfinite(inv).all()
    solved = np.asarray(mjcore.jit(LA.solve)(_SINGULAR, np.ones(2)))
    assert not np.isfinite(solved).all()
    assert np.isnan(np.asarray(mjcore.jit(LA.cholesky)(_INDEFINITE))).all()
    assert np.isnan(np.asarray(mjcore.jit(LA.svdvals)(_NAN))).all()
    # The healthy batch entry is unaffected.
    batch = np.asarray(mjcore.jit(LA.inv)(_ONE_SINGULAR))
    np.testing.assert_array_equal(batch[0], np.eye(2))


@pytest.mark.parametrize("p", [None, 1, -1, "fro", np.inf])
def test_cond_of_a_singular_matrix_is_inf_as_numpy(p):
    for a in (_SINGULAR, _ONE_SINGULAR) if p is None else (_SINGULAR, _ONE_SINGULAR, _NAN):
        with np.errstate(all="ignore"):
            expected = np.linalg.cond(a, p)
        np.testing.assert_allclose(np.asarray(LA.cond(a, p)), expected, rtol=1e-6)
