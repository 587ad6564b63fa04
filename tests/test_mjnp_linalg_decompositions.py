"""mjnp.linalg and the main-namespace tensor products against NumPy (values, dtypes, batched
and empty shapes, errors), under jit and vmap, and their gradients against finite differences
and JAX (x64)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import mjcore
import mjnp
from mjcore.test_util import check_grads

LA = mjnp.linalg
RNG = np.random.default_rng(0)
SHAPES = [(2, 4, 4), (0, 3, 3), (1, 1)]
DTYPES = ["float32", "complex128", "int64"]


def _tol(dtype):
    single = np.dtype(dtype) in (np.float32, np.complex64)
    return {"rtol": 2e-3 if single else 1e-8, "atol": 2e-3 if single else 1e-8}


def _sample(shape, dtype, kind="general"):
    # A stable seed (str hashes change per process), so failures reproduce.
    rng = np.random.default_rng(zlib.crc32(repr((shape, dtype, kind)).encode()))
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        x = rng.integers(-3, 4, size=shape)
        if kind in ("spd", "hermitian") and shape[-1]:
            x = x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1], dtype=int)
        return x.astype(dtype)
    x = rng.normal(size=shape)
    if dtype.kind == "c":
        x = x + 1j * rng.normal(size=shape)
    if kind in ("spd", "hermitian") and shape and shape[-1]:
        x = x @ np.conj(np.swapaxes(x, -1, -2)) + shape[-1] * np.eye(shape[-1])
    return x.astype(dtype)


def _match(actual, expected, dtype=None):
    expected = np.asarray(expected)
    actual_np = np.asarray(actual)
    assert actual_np.dtype == expected.dtype, (actual_np.dtype, expected.dtype)
    assert actual_np.shape == expected.shape, (actual_np.shape, expected.shape)
    np.testing.assert_allclose(actual_np, expected, **_tol(dtype or expected.dtype))


def _id(shape, dtype):
    return f"{dtype}-{shape}"


CASES = [pytest.param(s, d, id=_id(s, d)) for s in SHAPES for d in DTYPES]


@pytest.mark.parametrize("shape,dtype", CASES)
def test_lu_based_functions_match_numpy(shape, dtype):
    x = _sample(shape, dtype)
    _match(LA.det(x), np.linalg.det(x))
    for got, want in zip(LA.slogdet(x), np.linalg.slogdet(x), strict=True):
        _match(got, want)
    if not np.all(np.linalg.det(x) != 0) and x.size:
        return
    _match(LA.inv(x), np.linalg.inv(x))
    b = _sample((*shape[:-1], 2), dtype)
    _match(LA.solve(x, b), np.linalg.solve(x, b))


@pytest.mark.parametrize("shape,dtype", CASES)
def test_hermitian_decompositions_match_numpy(shape, dtype):
    x = _sample(shape, dtype, "spd")
    _match(LA.cholesky(x), np.linalg.cholesky(x))
    _match(LA.cholesky(x, upper=True), np.linalg.cholesky(x, upper=True))
    _match(LA.eigvalsh(x), np.linalg.eigvalsh(x))
    w, v = LA.eigh(x, UPLO="U")
    _match(w, np.linalg.eigh(x, UPLO="U").eigenvalues)
    v = np.asarray(v)
    recon = v @ (np.asarray(w)[..., :, None] * np.conj(np.swapaxes(v, -1, -2)))
    np.testing.assert_allclose(recon, x, **_tol(v.dtype))


@pytest.mark.parametrize("shape", [(2, 4, 3), (3, 5), (0, 2, 3), (3, 0)])
@pytest.mark.parametrize("dtype", ["float32", "complex128", "int8"])
def test_qr_and_svd_match_numpy(shape, dtype):
    x = _sample(shape, dtype)
    for mode in ("reduced", "complete"):
        q, r = LA.qr(x, mode=mode)
        q_np, r_np = np.linalg.qr(x, mode=mode)
        assert q.shape == q_np.shape and r.shape == r_np.shape and q.dtype == q_np.dtype
        np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), x, **_tol(q_np.dtype))
        np.testing.assert_allclose(np.abs(np.asarray(r)), np.abs(r_np), **_tol(q_np.dtype))
    _match(LA.svd(x, compute_uv=False), np.linalg.svd(x, compute_uv=False))
    _match(LA.svdvals(x), np.linalg.svdvals(x))
    for full in (True, False):
        u, s, vh = LA.svd(x, full_matrices=full)
        u_np, s_np, vh_np = np.linalg.svd(x, full_matrices=full)
        assert u.shape == u_np.shape and vh.shape == vh_np.shape and u.dtype == u_np.dtype
        k = s_np.shape[-1]
        u, vh = np.asarray(u)[..., :k], np.asarray(vh)[..., :k, :]
        np.testing.assert_allclose(
            (u * np.asarray(s)[..., None, :].astype(u.dtype)) @ vh, x, **_tol(u.dtype)
        )
    _match(LA.pinv(x), np.linalg.pinv(x))
    _match(LA.matrix_rank(x), np.linalg.matrix_rank(x))


@pytest.mark.parametrize("ord_", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norms_and_cond_match_numpy(ord_):
    x = _sample((2, 3, 3), "float64")
    _match(LA.norm(x, ord_, axis=(1, 2)), np.linalg.norm(x, ord_, axis=(1, 2)))
    _match(
        LA.norm(x, ord_, axis=(2, 0), keepdims=True),
        np.linalg.norm(x, ord_, axis=(2, 0), keepdims=True),
    )
    _match(LA.cond(x, ord_), np.linalg.cond(x, ord_))
    if ord_ is not None:
        _match(LA.matrix_norm(x, ord=ord_), np.linalg.matrix_norm(x, ord=ord_))


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
@pytest.mark.parametrize("ord_", [None, 0, 1, -1, 2, 3, 0.5, np.inf, -np.inf])
@pytest.mark.parametrize("dtype", ["float32", "complex64", "int32"])
def test_vector_norms_match_numpy(ord_, dtype):
    x = _sample((2, 3, 4), dtype)
    _match(LA.norm(x, ord_, axis=-1), np.linalg.norm(x, ord_, axis=-1))
    _match(
        LA.vector_norm(x, ord=2 if ord_ is None else ord_, axis=(0, 2), keepdims=True),
        np.linalg.vector_norm(x, ord=2 if ord_ is None else ord_, axis=(0, 2), keepdims=True),
    )
    _match(LA.norm(x), np.linalg.norm(x))


def test_misc_functions_match_numpy():
    a, b = _sample((2, 4, 4), "float64"), _sample((2, 4, 3), "float64")
    for n in (0, 1, 3, -2):
        _match(LA.matrix_power(a, n), np.linalg.matrix_power(a, n))
    ints = np.arange(4).reshape(2, 2)
    _match(LA.matrix_power(ints, 3), np.linalg.matrix_power(ints, 3))
    for rhs in (b[0], b[0][:, 0]):
        for got, want in zip(
            LA.lstsq(b[0], rhs[:4] if rhs.ndim == 1 else rhs),
            np.linalg.lstsq(b[0], rhs),
            strict=True,
        ):
            _match(got, want)
        tall = np.asarray(b[0]).T @ np.ones((4, 4))  # rank 1: empty residuals
        for got, want in zip(
            LA.lstsq(tall, np.ones(3)), np.linalg.lstsq(tall, np.ones(3)), strict=True
        ):
            _match(got, want)
    vecs = [_sample((4,), "float64"), a[0], a[1], b[0]]
    _match(LA.multi_dot(vecs), np.linalg.multi_dot(vecs))
    t = _sample((2, 3, 6), "float64")
    _match(LA.tensorinv(t, 2), np.linalg.tensorinv(t, 2))
    big, rhs = _sample((6, 2, 3), "float64"), _sample((6,), "float64")
    _match(LA.tensorsolve(big, rhs), np.linalg.tensorsolve(big, rhs))
    _match(LA.cross(b[..., :3], b[..., ::-1]), np.linalg.cross(b[..., :3], b[..., ::-1]))
    _match(LA.outer(b[0, 0], b[1, 0]), np.linalg.outer(b[0, 0], b[1, 0]))
    _match(LA.diagonal(a, offset=1), np.linalg.diagonal(a, offset=1))
    _match(LA.trace(a), np.linalg.trace(a))
    _match(LA.matrix_transpose(b), np.linalg.matrix_transpose(b))
    _match(LA.vecdot(a, b[..., 0][:, None, :]), np.linalg.vecdot(a, b[..., 0][:, None, :]))
    _match(LA.tensordot(a, b[0], axes=1), np.linalg.tensordot(a, b[0], axes=1))
    w = LA.eigvals(a)
    np.testing.assert_allclose(
        np.sort_complex(np.asarray(w)), np.sort_complex(np.linalg.eigvals(a))
    )
    sym = a + np.swapaxes(a, -1, -2)
    _match(LA.eigvals(sym), np.linalg.eigvals(sym))  # all real: NumPy returns float64
    w, v = LA.eig(a)
    np.testing.assert_allclose(
        a @ np.asarray(v), np.asarray(v) * np.asarray(w)[..., None, :], atol=1e-10
    )


@pytest.mark.parametrize(
    "a_shape,b_shape,axes,error",
    [
        ((3,), (3, 4), 2, IndexError),  # axes beyond a's rank
        ((2, 3), (3,), ([0], [5]), IndexError),
        ((2, 3, 4), (3, 4), 3, ValueError),  # the first pair's lengths differ before b runs out
        ((2, 3), (3, 4), ([0, 1], [0]), ValueError),
        ((2, 3), (3, 4), -1, None),  # a negative count pairs nothing: an outer product
    ],
)
def test_tensordot_axes_errors_match_numpy(a_shape, b_shape, axes, error):
    a, b = np.ones(a_shape), np.ones(b_shape)
    if error is None:
        _match(mjnp.tensordot(a, b, axes), np.tensordot(a, b, axes))
        return
    with pytest.raises(error):
        np.tensordot(a, b, axes)
    with pytest.raises(error, match="mjnp.tensordot"):
        mjnp.tensordot(a, b, axes)


@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors:DeprecationWarning")
def test_main_namespace_products_match_numpy():
    a, b = _sample((2, 3, 4), "float32"), _sample((4, 5), "int16")
    _match(mjnp.tensordot(a, b, 1), np.tensordot(a, b, 1))
    _match(mjnp.tensordot(a, a, ([1, 0], [1, 0])), np.tensordot(a, a, ([1, 0], [1, 0])))
    _match(mjnp.kron(a[0], b), np.kron(a[0], b))
    _match(
        mjnp.kron(np.arange(3), np.ones((2, 2), np.int8)),
        np.kron(np.arange(3), np.ones((2, 2), np.int8)),
    )
    c = _sample((2, 4), "complex128")
    _match(mjnp.vecdot(c, c[0]), np.vecdot(c, c[0]))
    _match(mjnp.matvec(a, b[:, 0]), np.matvec(a, b[:, 0]))
    _match(
        mjnp.vecmat(c, c[:, :, None] * c[0][None, None, :]),
        np.vecmat(c, c[:, :, None] * c[0][None, None, :]),
    )
    u, v = _sample((3, 3), "float64"), _sample((2, 1, 3), "float64")
    _match(mjnp.cross(u, v), np.cross(u, v))
    _match(mjnp.cross(u[:, :2], v, axisc=0), np.cross(u[:, :2], v, axisc=0))


EINSUM_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ij->", [(2, 3)]),
    ("...ij,...jk", [(2, 3, 4), (4, 5)]),
    ("bij,bjk,kl->bil", [(2, 3, 4), (2, 4, 5), (5, 2)]),
    ("i,i", [(4,), (4,)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("abc,cd,de->ae", [(2, 3, 4), (4, 5), (5, 6)]),
    ("ij,jk,kl,lm->im", [(2, 3), (3, 4), (4, 5), (5, 2)]),
    ("i,j->ij", [(0,), (3,)]),
    ("ij,j", [(2, 1), (3,)]),
]


@pytest.mark.parametrize("subscripts,shapes", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
@pytest.mark.parametrize("optimize", [False, True, "optimal"])
def test_einsum_matches_numpy(subscripts, shapes, optimize):
    ops = [_sample(s, "float64") for s in shapes]
    _match(
        mjnp.einsum(subscripts, *ops, optimize=optimize),
        np.einsum(subscripts, *ops, optimize=optimize),
    )
    ints = [_sample(s, "int32") for s in shapes]
    _match(mjnp.einsum(subscripts, *ints), np.einsum(subscripts, *ints))


def test_einsum_path_matches_numpy():
    ops = [_sample(s, "float64") for s in [(2, 3), (3, 4), (4, 5), (5, 2)]]
    got = mjnp.einsum_path("ij,jk,kl,lm->im", *ops, optimize="greedy")
    assert got == np.einsum_path("ij,jk,kl,lm->im", *ops, optimize="greedy")
    path = got[0]
    _match(mjnp.einsum("ij,jk,kl,lm->im", *ops, optimize=path), np.einsum("ij,jk,kl,lm->im", *ops))


def test_errors_match_numpy():
    with pytest.raises(np.linalg.LinAlgError, match="at least two-dimensional"):
        LA.det(np.ones(3))
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        LA.inv(np.ones((2, 3)))
    with pytest.raises(TypeError, match="float16"):
        LA.inv(np.ones((2, 2), np.float16))
    with pytest.raises(ValueError, match="UPLO"):
        LA.eigh(np.eye(2), UPLO="X")
    with pytest.raises(ValueError, match="mode"):
        LA.qr(np.eye(2), mode="bogus")
    with pytest.raises(ValueError, match="differs"):
        mjnp.einsum("ij,jk", np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        LA.cholesky(-np.eye(2))
    # NB: under jit there are no values to check; the failed factor is NaN.
    assert np.isnan(np.asarray(mjcore.jit(LA.cholesky)(-np.eye(2)))).all()


FUNCS = {
    "det": LA.det,
    "slogdet": lambda x: LA.slogdet(x).logabsdet,
    "inv": LA.inv,
    "solve": lambda x: LA.solve(x, x[..., :, :1] * 0 + 1),
    "cholesky": lambda x: LA.cholesky(x @ mjnp.matrix_transpose(x) + 3 * mjnp.eye(3)),
    "eigvalsh": lambda x: LA.eigvalsh(x + mjnp.matrix_transpose(x)),
    "svdvals": LA.svdvals,
    "eigvals": lambda x: mjnp.abs(LA.eigvals(x)),
    "pinv": LA.pinv,
    "norm-2": lambda x: LA.norm(x, 2, axis=(-2, -1)),
    "qr-r": lambda x: mjnp.abs(LA.qr(x).R),
    "einsum": lambda x: mjnp.einsum("bij,bjk,bkl->bil", x, x, x, optimize=True),
}


def _jax_funcs():
    import jax.numpy as jnp

    return {
        "det": jnp.linalg.det,
        "slogdet": lambda x: jnp.linalg.slogdet(x).logabsdet,
        "inv": jnp.linalg.inv,
        "solve": lambda x: jnp.linalg.solve(x, x[..., :, :1] * 0 + 1),
        "cholesky": lambda x: jnp.linalg.cholesky(x @ jnp.swapaxes(x, -1, -2) + 3 * jnp.eye(3)),
        "eigvalsh": lambda x: jnp.linalg.eigvalsh(x + jnp.swapaxes(x, -1, -2)),
        "svdvals": jnp.linalg.svdvals,
        "eigvals": lambda x: jnp.abs(jnp.linalg.eigvals(x)),
        "pinv": jnp.linalg.pinv,
        "norm-2": lambda x: jnp.linalg.norm(x, 2, axis=(-2, -1)),
        "qr-r": lambda x: jnp.abs(jnp.linalg.qr(x)[1]),
        "einsum": lambda x: jnp.einsum("bij,bjk,bkl->bil", x, x, x, optimize=True),
    }


@pytest.mark.parametrize("name", list(FUNCS))
def test_gradients_match_jax_jit_and_vmap(name):
    import jax

    jax.config.update("jax_enable_x64", True)
    f = FUNCS[name]
    x = 0.5 * _sample((2, 3, 3), "float64") + 2 * np.eye(3)  # well conditioned
    check_grads(f, (x,), order=1, modes=("fwd", "rev"))
    w = np.random.default_rng(1).normal(size=np.shape(np.asarray(f(x))))

    def loss(fun, lib):
        return lambda x: lib.sum(fun(x) * w)

    got = mjcore.grad(loss(f, mjnp))(x)
    # One jitted JAX program for the oracle (eager JAX compiles each op of the gradient).
    want = jax.jit(jax.grad(loss(_jax_funcs()[name], jax.numpy)))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-7, atol=1e-9)
    eager = np.asarray(f(x))
    np.testing.assert_allclose(np.asarray(mjcore.jit(f)(x)), eager, rtol=1e-10, atol=1e-12)
    xs = np.stack([x, x[::-1] + 0.5 * np.eye(3)], 1)
    looped = np.stack([np.asarray(f(xs[:, i])) for i in range(2)], 1)
    batched = mjcore.vmap(f, in_axes=1, out_axes=1)(xs)
    np.testing.assert_allclose(np.asarray(batched), looped, rtol=1e-10, atol=1e-12)
