"""`mjcore.scipy.linalg` against `jax.scipy.linalg` (x64) and SciPy: values, gradients, jit
and vmap."""

import jax
import jax.scipy.linalg as jsl
import numpy as np
import pytest
import scipy.linalg as sl

import mjcore
import mjnp
from mjcore.scipy import linalg as ml

jax.config.update("jax_enable_x64", True)

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 4))
SPD = A @ A.T + 4 * np.eye(4)
B = RNG.standard_normal((4, 2))
V = RNG.standard_normal(4)
C = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
HPD = C @ C.conj().T + 3 * np.eye(3)
BATCH = RNG.standard_normal((2, 4, 4))
BATCH_SPD = BATCH @ np.swapaxes(BATCH, -1, -2) + 4 * np.eye(4)


def _close(got, want, rtol=1e-10, atol=1e-12):
    got_leaves, want_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


# name, function of (module, *arrays), the arrays, and whether SciPy itself is an oracle.
CASES = [
    ("cholesky-upper", lambda m, x: m.cholesky(x), (SPD,), True),
    ("cholesky-lower", lambda m, x: m.cholesky(x, lower=True), (SPD,), True),
    ("cholesky-complex", lambda m, x: m.cholesky(x), (HPD,), True),
    ("cho_solve-upper", lambda m, x, b: m.cho_solve(m.cho_factor(x), b), (SPD, B), True),
    (
        "cho_solve-lower-vector",
        lambda m, x, b: m.cho_solve(m.cho_factor(x, lower=True), b),
        (SPD, V),
        True,
    ),
    ("solve_triangular-upper", lambda m, x, b: m.solve_triangular(x, b), (SPD, B), True),
    (
        "solve_triangular-lower-T-vector",
        lambda m, x, b: m.solve_triangular(x, b, trans="T", lower=True),
        (SPD, V),
        True,
    ),
    (
        "solve_triangular-unit-C",
        lambda m, x, b: m.solve_triangular(x, b, trans=2, unit_diagonal=True),
        (C, C[:, :2]),
        True,
    ),
    ("lu_factor", lambda m, x: m.lu_factor(x)[0], (A,), True),
    ("lu_solve-0", lambda m, x, b: m.lu_solve(m.lu_factor(x), b), (A, B), True),
    ("lu_solve-1", lambda m, x, b: m.lu_solve(m.lu_factor(x), b, trans=1), (A, V), True),
    ("lu_solve-2-complex", lambda m, x, b: m.lu_solve(m.lu_factor(x), b, 2), (C, C), True),
    ("lu", lambda m, x: m.lu(x), (A,), True),
    ("lu-wide", lambda m, x: m.lu(x), (A[:3],), True),
    ("lu-tall-permute_l", lambda m, x: m.lu(x, permute_l=True), (A[:, :3],), True),
    ("qr-full-r", lambda m, x: m.qr(x)[1], (A[:, :3],), False),
    ("qr-economic-product", lambda m, x: m.qr(x, mode="economic")[0].shape, (A[:, :3],), True),
    ("qr-r", lambda m, x: m.qr(x, mode="r")[0], (A[:3],), False),
    ("eigh-values", lambda m, x: m.eigh(x, eigvals_only=True), (SPD,), True),
    ("svd-values", lambda m, x: m.svd(x, compute_uv=False), (A,), True),
    ("inv", lambda m, x: m.inv(x), (A,), True),
    ("det", lambda m, x: m.det(x), (A,), True),
    ("solve-gen", lambda m, x, b: m.solve(x, b), (A, B), True),
    ("solve-pos-lower", lambda m, x, b: m.solve(x, b, assume_a="pos", lower=True), (SPD, V), True),
    (
        "solve-pos-upper-only",
        lambda m, x, b: m.solve(np.triu(x), b, assume_a="pos"),
        (SPD, B),
        True,
    ),
    ("solve-sym", lambda m, x, b: m.solve(x, b, assume_a="sym"), (SPD, B), True),
    ("expm-small", lambda m, x: m.expm(x * 0.01), (A,), True),
    ("expm-medium", lambda m, x: m.expm(x * 0.3), (A,), True),
    ("expm", lambda m, x: m.expm(x), (A,), True),
    ("expm-large", lambda m, x: m.expm(x * 5.0), (A,), True),
    ("expm-complex", lambda m, x: m.expm(x), (C,), True),
    ("expm-upper_triangular", lambda m, x: m.expm(np.triu(x), upper_triangular=True), (A,), False),
    ("expm-batched", lambda m, x: m.expm(x), (BATCH,), False),
    ("block_diag", lambda m, x, b: m.block_diag(x, b, V[:2], 3.0), (A[:2], B), True),
    ("toeplitz", lambda m, c, r: m.toeplitz(c, r), (V, V[:3] + 1), True),
    ("toeplitz-c-only", lambda m, c: m.toeplitz(c), (C[0],), True),
    ("hilbert", lambda m: m.hilbert(5), (), True),
]


@pytest.mark.parametrize(("name", "fun", "args", "vs_scipy"), CASES, ids=[c[0] for c in CASES])
def test_values_match_jax_and_scipy(name, fun, args, vs_scipy):
    got = fun(ml, *args)
    _close(got, fun(jsl, *args))
    if vs_scipy:
        rtol = 1e-9 if name.startswith("expm") else 1e-10
        _close(got, fun(sl, *args), rtol=rtol)
    if args:
        _close(mjcore.jit(lambda *a: fun(ml, *a))(*args), got)


def _scalar(m, np_, fun):
    """A smooth scalar loss of `fun`'s (array) result, for gradient checks."""
    return lambda *a: np_.sum(np_.sin(np_.real(fun(m, *a))))


GRAD_CASES = [
    ("cholesky", lambda m, x: m.cholesky(x), (SPD,)),
    ("cho_solve", lambda m, x, b: m.cho_solve(m.cho_factor(x, lower=True), b), (SPD, B)),
    ("solve_triangular", lambda m, x, b: m.solve_triangular(x, b, trans=1), (SPD, B)),
    ("lu_solve", lambda m, x, b: m.lu_solve(m.lu_factor(x), b), (A, B)),
    ("lu", lambda m, x: m.lu(x)[2], (A,)),
    ("solve-pos", lambda m, x, b: m.solve(x, b, assume_a="pos"), (SPD, V)),
    ("expm", lambda m, x: m.expm(x), (A,)),
    ("expm-scaled", lambda m, x: m.expm(x * 3.0), (A,)),
    ("det", lambda m, x: m.det(x), (A,)),
    ("inv", lambda m, x: m.inv(x), (A,)),
    ("eigh", lambda m, x: m.eigh(x)[0], (SPD,)),
    ("toeplitz", lambda m, c, r: m.toeplitz(c, r), (V, V[:3])),
    ("block_diag", lambda m, x, b: m.block_diag(x, b), (A[:2], B)),
]


@pytest.mark.parametrize(("name", "fun", "args"), GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients_match_jax(name, fun, args):
    argnums = tuple(range(len(args)))
    got = mjcore.grad(_scalar(ml, mjnp, fun), argnums)(*args)
    want = jax.grad(_scalar(jsl, jax.numpy, fun), argnums)(*args)
    _close(got, want, rtol=1e-8, atol=1e-10)


VMAP_CASES = [
    ("cholesky", lambda m, x: m.cholesky(x), (BATCH_SPD,)),
    ("cho_solve", lambda m, x, b: m.cho_solve(m.cho_factor(x), b), (BATCH_SPD, B)),
    ("solve_triangular", lambda m, x, b: m.solve_triangular(x, b, lower=True), (BATCH, B)),
    ("lu_solve", lambda m, x, b: m.lu_solve(m.lu_factor(x), b, trans=1), (BATCH, B)),
    ("lu", lambda m, x: m.lu(x), (BATCH,)),
    ("expm", lambda m, x: m.expm(x), (BATCH,)),
    ("solve-pos", lambda m, x, b: m.solve(x, b, assume_a="pos"), (BATCH_SPD, B)),
]


@pytest.mark.parametrize(("name", "fun", "args"), VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_vmap_matches_jax(name, fun, args):
    in_axes = (0,) + (None,) * (len(args) - 1)
    got = mjcore.vmap(lambda *a: fun(ml, *a), in_axes=in_axes)(*args)
    want = jax.vmap(lambda *a: fun(jsl, *a), in_axes=in_axes)(*args)
    _close(got, want)


def test_expm_beyond_max_squarings_is_nan_like_jax():
    big = A * 1e6
    got, want = ml.expm(big, max_squarings=4), jsl.expm(big, max_squarings=4)
    assert np.isnan(np.asarray(want)).all() and np.isnan(np.asarray(got)).all()


def test_polar_matches_scipy():
    for side in ("right", "left"):
        u, p = ml.polar(A, side)
        want_u, want_p = sl.polar(A, side)
        _close((u, p), (want_u, want_p), rtol=1e-10)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: ml.cholesky(np.ones((2, 3))), ValueError, "square matrix"),
        (lambda: ml.solve_triangular(A, B, trans=3), ValueError, "invalid 'trans'"),
        (lambda: ml.lu_solve(ml.lu_factor(A), B, trans=5), ValueError, "'trans' must be"),
        (lambda: ml.solve(A, B, assume_a="banded"), ValueError, "unknown assume_a"),
        (lambda: ml.qr(A, mode="raw"), ValueError, "unsupported mode"),
        (lambda: ml.eigh(A, A), NotImplementedError, "only b=None"),
        (lambda: ml.cho_solve((SPD, False), np.ones(3)), ValueError, "do not match"),
        (lambda: ml.expm(np.ones((2, 3))), ValueError, "square matrix"),
    ],
)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
