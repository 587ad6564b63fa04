"""Eager linear algebra and matrix helpers on small CPU arrays run NumPy's own function on
the host values (`mjnp/_host_numpy.py`, issue 18): NumPy's bits and dtypes, nothing compiled
on a new shape, mjnp's errors as before, and jit/vmap/grad unchanged (they see tracers)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
import mjnp as np
from mjcore.backend import compat

jax.config.update("jax_enable_x64", True)

LinAlgError = onp.linalg.LinAlgError


def _same(got, want):
    """Bit for bit: type of container, dtype, shape, values, NaN positions, signs of zeros."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w)
        return
    assert type(got) is not onp.ndarray  # an mjnp Array
    got, want = onp.asarray(got), onp.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert onp.array_equal(got, want, equal_nan=want.dtype.kind in "fc")
    if want.dtype.kind == "f":
        assert onp.array_equal(onp.signbit(got), onp.signbit(want))


def _matrix(shape, dtype, seed=0):
    rng = onp.random.default_rng(seed)
    n = shape[-1]
    if onp.dtype(dtype).kind in "iub":
        return rng.integers(-4, 5, shape).astype(dtype) + onp.eye(n, dtype=dtype) * 9
    x = rng.standard_normal(shape) + n * onp.eye(n)
    if onp.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _hermitian_pd(shape, dtype):
    x = _matrix(shape, dtype)
    return (x @ onp.conj(onp.swapaxes(x, -1, -2))).astype(dtype)


def _vec(a):
    """The first row of the first matrix: a vector of the matrices' size."""
    return a[(0,) * (a.ndim - 1)]


# (name, function of (module, a)) on square matrices a
_SQUARE = [
    ("inv", lambda m, a: m.linalg.inv(a)),
    ("det", lambda m, a: m.linalg.det(a)),
    ("slogdet", lambda m, a: tuple(m.linalg.slogdet(a))),
    ("solve_vec", lambda m, a: m.linalg.solve(a, _vec(a))),
    ("solve_mat", lambda m, a: m.linalg.solve(a, a)),
    ("eigvalsh", lambda m, a: m.linalg.eigvalsh(a)),
    ("eigvalsh_U", lambda m, a: m.linalg.eigvalsh(a, "U")),
    ("eigh", lambda m, a: tuple(m.linalg.eigh(a))),
    ("eig", lambda m, a: tuple(m.linalg.eig(a))),
    ("eigvals", lambda m, a: m.linalg.eigvals(a)),
    ("svd", lambda m, a: tuple(m.linalg.svd(a))),
    ("svd_reduced", lambda m, a: tuple(m.linalg.svd(a, full_matrices=False))),
    ("svdvals", lambda m, a: m.linalg.svd(a, compute_uv=False)),
    ("qr", lambda m, a: tuple(m.linalg.qr(a))),
    ("qr_r", lambda m, a: m.linalg.qr(a, mode="r")),
    ("qr_complete", lambda m, a: tuple(m.linalg.qr(a, mode="complete"))),
    ("qr_raw", lambda m, a: tuple(m.linalg.qr(a[..., :3], mode="raw"))),
    ("pinv", lambda m, a: m.linalg.pinv(a)),
    ("matrix_power3", lambda m, a: m.linalg.matrix_power(a, 3)),
    ("matrix_power1", lambda m, a: m.linalg.matrix_power(a, 1)),
    ("matrix_power0", lambda m, a: m.linalg.matrix_power(a, 0)),
    ("matrix_power_neg", lambda m, a: m.linalg.matrix_power(a, -2)),
    ("matrix_rank", lambda m, a: m.linalg.matrix_rank(a)),
    ("cond", lambda m, a: m.linalg.cond(a)),
    ("cond_fro", lambda m, a: m.linalg.cond(a, "fro")),
    ("norm", lambda m, a: m.linalg.norm(a)),
    ("norm_axis", lambda m, a: m.linalg.norm(a, axis=-1)),
    ("norm_1_keep", lambda m, a: m.linalg.norm(a, 1, axis=(-2, -1), keepdims=True)),
    ("norm_nuc", lambda m, a: m.linalg.norm(a, "nuc", axis=(-2, -1))),
    ("norm_inf", lambda m, a: m.linalg.norm(a, onp.inf, axis=(-1, -2))),
    ("trace", lambda m, a: m.trace(a, 1, -2, -1)),
    ("linalg_trace", lambda m, a: m.linalg.trace(a)),
    ("diagonal", lambda m, a: m.diagonal(a, -1, -1, -2)),
    ("linalg_diagonal", lambda m, a: m.linalg.diagonal(a)),
    ("triu", lambda m, a: m.triu(a, 1)),
    ("tril", lambda m, a: m.tril(a, -1)),
    ("matmul", lambda m, a: m.matmul(a, a)),
    ("matmul_vec", lambda m, a: m.matmul(a, _vec(a))),
    ("dot_vec", lambda m, a: m.dot(a, _vec(a))),
    ("vdot", lambda m, a: m.vdot(a, a)),
    ("inner", lambda m, a: m.inner(a, a)),
]
_DTYPES = ["float64", "float32", "complex128", "int64"]


def _numpy_and_mjnp(fn, x):
    with onp.errstate(all="ignore"):
        want = fn(onp, x)
        got = fn(np, np.asarray(x))
    return got, want


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("name,fn", _SQUARE, ids=[c[0] for c in _SQUARE])
def test_square_functions_equal_numpy_bit_for_bit(name, fn, dtype):
    shapes = [(5, 5), (3, 4, 4)]
    for shape in shapes:
        if name.startswith(("eigh", "eigvalsh", "pinv")) or name == "norm_nuc":
            x = _hermitian_pd(shape, dtype)
        else:
            x = _matrix(shape, dtype)
        got, want = _numpy_and_mjnp(fn, x)
        _same(got, want)


@pytest.mark.parametrize(
    "name,fn",
    [
        ("inv", lambda m, a: m.linalg.inv(a)),
        ("det", lambda m, a: m.linalg.det(a)),
        ("slogdet", lambda m, a: tuple(m.linalg.slogdet(a))),
        ("eigh", lambda m, a: tuple(m.linalg.eigh(a))),
        ("svd", lambda m, a: tuple(m.linalg.svd(a))),
        ("norm", lambda m, a: m.linalg.norm(a)),
        ("trace", lambda m, a: m.trace(a)),
        ("triu", lambda m, a: m.triu(a)),
        ("matmul", lambda m, a: m.matmul(a, a)),
    ],
)
def test_edge_cases_equal_numpy(name, fn):
    empty = onp.zeros((0, 0))
    batch_empty = onp.zeros((2, 0, 0), onp.float32)
    nans = _matrix((4, 4), "float64")
    nans[1, 2] = onp.nan
    for x in (empty, batch_empty, nans):
        if name == "svd" and x.size and onp.isnan(x).any():
            continue  # NumPy raises (SVD did not converge): see the error test
        _same(*_numpy_and_mjnp(fn, x))


def test_bool_and_int_inputs_take_numpy_dtypes():
    b = onp.eye(3, dtype=bool)
    i32 = _matrix((3, 3), "int32")
    for x in (b, i32, i32.astype(onp.uint8)):
        _same(np.linalg.inv(np.asarray(x)), onp.linalg.inv(x))
        _same(np.linalg.det(np.asarray(x)), onp.linalg.det(x))
        _same(np.trace(np.asarray(x)), onp.trace(x))
        _same(np.matmul(np.asarray(x), np.asarray(x)), onp.matmul(x, x))
        _same(np.vdot(np.asarray(x), np.asarray(x)), onp.vdot(x, x))
        _same(np.linalg.matrix_power(np.asarray(x), 2), onp.linalg.matrix_power(x, 2))
    v32, v64 = onp.arange(3, dtype=onp.float32), onp.arange(3.0)
    _same(np.dot(np.asarray(v32), np.asarray(v64)), onp.dot(v32, v64))
    _same(np.inner(np.asarray(i32), np.asarray(v32)), onp.inner(i32, v32))


def test_vector_and_building_helpers_equal_numpy():
    rng = onp.random.default_rng(1)
    v = rng.standard_normal(6)
    m = rng.standard_normal((4, 6))
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    cases = [
        (lambda M, v, m: M.diag(v, 2), (v, m)),
        (lambda M, v, m: M.diag(m, -1), (v, m)),
        (lambda M, v, m: M.diag(m, 9), (v, m)),
        (lambda M, v, m: M.triu(v), (v, m)),
        (lambda M, v, m: M.tril(m, 2), (v, m)),
        (lambda M, v, m: M.matmul(m, v), (v, m)),
        (lambda M, v, m: M.dot(v, v), (v, m)),
        (lambda M, v, m: M.inner(m, m), (v, m)),
        (lambda M, v, m: M.cross(v, m), (a, b)),
        (lambda M, v, m: M.cross(v, m, axis=0), (a[:3].T.copy(), b[:3].T.copy())),
        (lambda M, v, m: M.linalg.lstsq(m.T, v, rcond=None), (v, m)),
        (lambda M, v, m: M.linalg.norm(v, 3), (v, m)),
        (lambda M, v, m: M.linalg.norm(v, -onp.inf), (v, m)),
        # 0-d, empty and NaN operands
        (lambda M, v, m: M.dot(v, m), (onp.array(2.5), m)),
        (lambda M, v, m: M.inner(m, v), (onp.array(-1.5), m)),
        (lambda M, v, m: M.vdot(v, m), (onp.array(3.0), onp.array(0.5))),
        (lambda M, v, m: M.matmul(v, m), (onp.zeros((3, 0)), onp.zeros((0, 4)))),
        (lambda M, v, m: M.dot(v, m), (onp.zeros(0), onp.zeros(0))),
        (lambda M, v, m: M.triu(v), (onp.zeros((0, 3)), m)),
        (lambda M, v, m: M.diag(v), (onp.zeros(0), m)),
        (lambda M, v, m: M.trace(m), (v, onp.zeros((0, 2)))),
        (lambda M, v, m: M.vdot(v, m), (onp.array([onp.nan, 1.0]), onp.array([0.0, -0.0]))),
        (lambda M, v, m: M.matmul(v, m), (onp.array([[onp.nan, 1.0]]), onp.array([0.0, 2.0]))),
    ]
    for fn, (x, y) in cases:
        want = fn(onp, x, y)
        got = fn(np, np.asarray(x), np.asarray(y))
        _same(got, want)
    # the diagonal is a new array, not a view of its input (as before)
    d = np.diag(np.asarray(m))
    assert not onp.shares_memory(onp.asarray(d), onp.asarray(np.asarray(m)))


def test_the_host_path_compiles_nothing_on_new_shapes(monkeypatch):
    compiles = []
    real = compat.compile_and_load

    def counting(*args, **kwargs):
        compiles.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(compat, "compile_and_load", counting)
    for n in (11, 13):  # shapes nothing else in the suite uses
        x = _matrix((n, n), "float64")
        a = np.asarray(x)
        v = np.asarray(x[0])
        np.linalg.inv(a)
        np.linalg.det(a)
        np.linalg.solve(a, v)
        np.linalg.slogdet(a)
        np.linalg.cholesky(np.asarray(_hermitian_pd((n, n), "float64")))
        np.linalg.eigh(a)
        np.linalg.svd(a)
        np.linalg.qr(a)
        np.linalg.lstsq(a, v)
        np.linalg.pinv(a)
        np.linalg.norm(a)
        np.linalg.matrix_power(a, 3)
        np.trace(a)
        np.diag(a)
        np.diagonal(a)
        np.triu(a)
        np.tril(a)
        np.vdot(v, v)
        np.inner(v, v)
        np.matmul(a, v)
        np.dot(a, v)
    assert compiles == []
    # the controls: the general path (under jit) compiles, and so do large operands
    mjcore.jit(np.linalg.inv)(np.asarray(_matrix((11, 11), "float64")))
    assert len(compiles) == 1
    big = _matrix((257, 257), "float64") / 257  # a moderate determinant
    onp.testing.assert_allclose(
        onp.asarray(np.linalg.det(np.asarray(big))), onp.linalg.det(big), rtol=1e-9
    )
    assert len(compiles) > 1
    big = big[:182, :182]  # 33124 elements: a product over the products' bound
    onp.testing.assert_allclose(
        onp.asarray(np.matmul(np.asarray(big), np.asarray(big[0]))), big @ big[0], rtol=1e-12
    )
    assert len(compiles) > 2
    # results past the bounds though the operands are small: an outer-like product, the
    # square matrix `triu` makes of a vector
    done = len(compiles)
    col = onp.arange(2000.0).reshape(2000, 1)
    _same(np.matmul(np.asarray(col), np.asarray(col.T)), col @ col.T)
    assert len(compiles) > done
    done = len(compiles)
    _same(np.triu(np.asarray(col[:300, 0])), onp.triu(col[:300, 0]))
    assert len(compiles) > done


def test_errors_are_mjnps_as_before():
    singular = np.asarray(onp.ones((3, 3)))
    with pytest.raises(LinAlgError, match=r"mjnp\.linalg\.inv: Singular matrix"):
        np.linalg.inv(singular)
    with pytest.raises(LinAlgError, match=r"mjnp\.linalg\.solve: Singular matrix"):
        np.linalg.solve(singular, np.asarray(onp.ones(3)))
    with pytest.raises(LinAlgError, match=r"mjnp\.linalg\.cholesky: Matrix is not positive"):
        np.linalg.cholesky(np.asarray(-onp.eye(3)))
    with pytest.raises(TypeError, match=r"mjnp\.linalg\.inv: array type float16"):
        np.linalg.inv(np.asarray(onp.eye(3, dtype=onp.float16)))
    with pytest.raises(LinAlgError, match=r"mjnp\.linalg\.det: 1-dimensional"):
        np.linalg.det(np.asarray(onp.ones(3)))
    with pytest.raises(LinAlgError, match=r"mjnp\.linalg\.inv: last 2 dimensions"):
        np.linalg.inv(np.asarray(onp.ones((2, 3))))
    with pytest.raises(LinAlgError, match=r"mjnp\.linalg\.svd: SVD did not converge"):
        np.linalg.svd(np.asarray(onp.full((3, 3), onp.nan)))
    with pytest.raises(ValueError, match=r"mjnp\.vdot: vectors have different lengths"):
        np.vdot(np.asarray(onp.ones(3)), np.asarray(onp.ones(4)))
    with pytest.raises(ValueError, match=r"mjnp\.matmul: mismatch"):
        np.matmul(np.asarray(onp.ones((2, 3))), np.asarray(onp.ones(4)))
    with pytest.raises(ValueError, match=r"mjnp\.diagonal: axis1 and axis2"):
        np.diagonal(np.asarray(onp.ones((2, 3))), 0, 1, 1)
    with pytest.raises(ValueError, match=r"mjnp\.diag: Input must be 1- or 2-d"):
        np.diag(np.asarray(onp.ones((2, 2, 2))))
    # a NaN input to cholesky gives NaNs, as before (mjnp's check needs a finite input)
    x = onp.array([[onp.nan, 1.0], [1.0, 2.0]])
    assert onp.isnan(onp.asarray(np.linalg.cholesky(np.asarray(x)))).any()


def test_jit_and_vmap_agree_with_eager():
    x = _matrix((4, 4), "float64")
    xs = _matrix((3, 4, 4), "float64")
    a, b = np.asarray(x), np.asarray(xs)
    funcs = [
        np.linalg.inv,
        np.linalg.det,
        lambda a: np.linalg.solve(a, a[0]),
        lambda a: np.linalg.slogdet(a)[1],
        lambda a: np.linalg.norm(a),
        lambda a: np.trace(a),
        lambda a: np.triu(a),
        lambda a: np.vdot(a, a),
        lambda a: np.matmul(a, a[:, 0]),
        lambda a: np.linalg.eigh(a + a.T)[0],
        lambda a: np.linalg.svd(a, compute_uv=False),
    ]
    # a non-contiguous host result (qr's raw reflectors, as NumPy's) feeds a compiled program
    h, _ = np.linalg.qr(a[:, :3], mode="raw")
    h_numpy, _ = onp.linalg.qr(x[:, :3], mode="raw")
    _same(mjcore.jit(lambda h: h * 2.0)(h), h_numpy * 2.0)
    for f in funcs:
        eager = onp.asarray(f(a))
        onp.testing.assert_allclose(onp.asarray(mjcore.jit(f)(a)), eager, rtol=1e-12, atol=1e-13)
        batched = onp.asarray(mjcore.vmap(f)(b))
        each = onp.stack([onp.asarray(f(np.asarray(xs[i]))) for i in range(3)])
        onp.testing.assert_allclose(batched, each, rtol=1e-12, atol=1e-13)


def test_grad_agrees_with_jax():
    x = _matrix((4, 4), "float64")
    for f_m, f_j in [
        (lambda a: np.linalg.det(a), lambda a: jnp.linalg.det(a)),
        (lambda a: np.sum(np.linalg.inv(a)), lambda a: jnp.sum(jnp.linalg.inv(a))),
        (lambda a: np.linalg.solve(a, a[0]).sum(), lambda a: jnp.linalg.solve(a, a[0]).sum()),
        (lambda a: np.linalg.norm(a), lambda a: jnp.linalg.norm(a)),
        (lambda a: np.trace(np.triu(a) @ a), lambda a: jnp.trace(jnp.triu(a) @ a)),
        (lambda a: np.vdot(a, a[::-1]), lambda a: jnp.vdot(a, a[::-1])),
    ]:
        got = onp.asarray(mjcore.grad(f_m)(np.asarray(x)))
        want = onp.asarray(jax.grad(f_j)(jnp.asarray(x)))
        onp.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
