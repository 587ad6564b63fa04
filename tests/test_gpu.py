"""The GPU paths. Two kinds of tests:

- On every machine: the CUDA lowering choices, checked by lowering for 'cuda' and reading
  the module text (cuSOLVER targets and attributes, the GPU host-callback target), and
  StableHLO's native `triangular_solve` (the GPU lowering) run on the CPU against SciPy.
- `@pytest.mark.gpu`: values on an NVIDIA GPU against NumPy (`scripts/gpu_check.sh` runs
  them with `pytest -m gpu`); skipped where mjcore's default backend is not a GPU.
"""

from __future__ import annotations

import numpy as onp
import pytest

import mjcore
import mjnp as np
from mjcore.backend import client, custom_call
from mjcore.backend.lowering import lower_primitive
from mjcore.core import ShapedArray
from mjcore.lax import linalg

_ON_GPU = mjcore.default_backend() == "gpu"
gpu = pytest.mark.skipif(not _ON_GPU, reason="needs mjcore on an NVIDIA GPU (CUDA plugin)")


@pytest.fixture
def lowering_for_cuda(monkeypatch):
    """Lower as for a CUDA device (nothing compiled for it here)."""
    monkeypatch.setattr(custom_call, "lowering_platform", lambda: "cuda")
    monkeypatch.setattr(linalg, "lowering_platform", lambda: "cuda")
    yield
    client.clear_caches()  # no executable lowered this way outlives the test


def _text(prim, avals_in, **params):
    avals_out = prim.abstract_eval(*avals_in, **params)
    avals_out = avals_out if isinstance(avals_out, list | tuple) else [avals_out]
    return lower_primitive(prim, avals_in, list(avals_out), params).text


F32 = ShapedArray((2, 4, 4), onp.dtype(onp.float32))
C128 = ShapedArray((4, 4), onp.dtype(onp.complex128))


@pytest.mark.parametrize(
    "prim, aval, params, targets",
    [
        (linalg.lu_p, F32, {}, ["cusolver_getrf_ffi"]),
        (linalg.qr_p, F32, {"full_matrices": False}, ["cusolver_geqrf_ffi", "cusolver_orgqr_ffi"]),
        (linalg.qr_p, C128, {"full_matrices": True}, ["cusolver_geqrf_ffi", "cusolver_orgqr_ffi"]),
        (linalg.eigh_p, F32, {"lower": True}, ["cusolver_syevd_ffi", "lower = true"]),
        (linalg.eigh_p, C128, {"lower": False}, ["cusolver_syevd_ffi", "lower = false"]),
        (linalg.cholesky_p, F32, {}, ["cusolver_potrf_ffi", "lower = true"]),
    ],
    ids=lambda v: getattr(v, "name", None) or (v.str_short() if hasattr(v, "str_short") else ""),
)
def test_cuda_lowering_calls_cusolver(lowering_for_cuda, prim, aval, params, targets):
    text = _text(prim, [aval], **params)
    for target in targets:
        assert target in text
    assert "lapack_" not in text
    # column-major matrices, batch axes major: the layouts JAX gives the same kernels
    if aval.ndim == 3:
        assert "dense<[1, 2, 0]> : tensor<3xindex>" in text


def test_cuda_lowering_of_routines_without_a_gpu_kernel_raises(lowering_for_cuda):
    with pytest.raises(NotImplementedError, match="LAPACK gesdd has no GPU kernel"):
        _text(linalg.svd_p, [F32], full_matrices=False, compute_uv=True)


def test_cuda_lowering_of_host_callbacks_uses_the_gpu_target(lowering_for_cuda):
    def f(x):
        y = mjcore.pure_callback(onp.sin, mjcore.ShapeDtypeStruct((3,), onp.float64), x)
        return y * 2

    text = mjcore.jit(f).lower(onp.ones(3)).as_text()
    assert "xla_ffi_python_gpu_callback" in text and "cpu_callback" not in text


def test_cuda_lowering_of_triangular_solve_is_native(lowering_for_cuda):
    a = ShapedArray((3, 3), onp.dtype(onp.float64))
    text = _text(
        linalg.triangular_solve_p,
        [a, a],
        left_side=True,
        lower=True,
        transpose_a=False,
        conjugate_a=False,
        unit_diagonal=False,
    )
    assert "stablehlo.triangular_solve" in text and "trsm" not in text


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("trans", ["N", "T", "C", "conj"])
@pytest.mark.parametrize("dtype", [onp.float64, onp.complex128])
def test_native_triangular_solve_runs_on_the_cpu(monkeypatch, left_side, lower, trans, dtype):
    """The GPU lowering of triangular_solve is StableHLO's op, which XLA's CPU compiler also
    accepts: checked here against NumPy's solve of the same operator, every flag combination."""
    monkeypatch.setattr(linalg, "lowering_platform", lambda: "cuda")
    rng = onp.random.default_rng(0)
    a = rng.normal(size=(4, 4)) + 4 * onp.eye(4)
    b = rng.normal(size=(4, 3) if left_side else (3, 4))
    if dtype == onp.complex128:
        a = a + 1j * rng.normal(size=a.shape)
        b = b + 1j * rng.normal(size=b.shape)
    a = a.astype(dtype)
    b = b.astype(dtype)
    tri = onp.tril(a) if lower else onp.triu(a)
    op = {"N": tri, "T": tri.T, "C": tri.conj().T, "conj": tri.conj()}[trans]
    want = onp.linalg.solve(op, b) if left_side else onp.linalg.solve(op.T, b.T).T
    try:
        got = mjcore.jit(
            lambda a, b: linalg.triangular_solve(
                a,
                b,
                left_side=left_side,
                lower=lower,
                transpose_a=trans in ("T", "C"),
                conjugate_a=trans in ("C", "conj"),
            )
        )(a, b)
        onp.testing.assert_allclose(onp.asarray(got), want, rtol=1e-10, atol=1e-10)
    finally:
        client.clear_caches()


# --- on a GPU -------------------------------------------------------------------------------


@pytest.mark.gpu
@gpu
def test_gpu_is_the_default_device_and_host_copies_work():
    assert mjcore.devices()[0].platform == "gpu"
    host = onp.arange(12.0).reshape(3, 4)
    x = np.asarray(host)
    assert x.device == mjcore.devices()[0]
    y = np.sin(x) * 2 + 1
    onp.testing.assert_allclose(onp.asarray(y), onp.sin(host) * 2 + 1, rtol=1e-12)
    assert str(x) == str(host) and x.tolist() == host.tolist() and float(x[1, 2]) == 6.0
    for dtype in ["bool", "int8", "uint16", "int32", "float16", "float32", "complex64"]:
        h = (onp.arange(6).reshape(2, 3) % 3).astype(dtype)
        assert onp.array_equal(onp.asarray(np.asarray(h)), h), dtype


@pytest.mark.gpu
@gpu
def test_gpu_dlpack_export_has_the_cuda_device_type():
    x = np.arange(4.0)
    assert x.__dlpack_device__() == (2, mjcore.devices()[0].local_hardware_id)
    capsule = x.__dlpack__()
    assert type(capsule).__name__ == "PyCapsule"
    onp.testing.assert_array_equal(onp.from_dlpack(x.__dlpack__(dl_device=(1, 0))), [0, 1, 2, 3])


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("dtype", [onp.float32, onp.float64])
def test_gpu_linalg_matches_numpy(dtype):
    rng = onp.random.default_rng(0)
    a = (rng.normal(size=(5, 5)) + 5 * onp.eye(5)).astype(dtype)
    spd = (a @ a.T).astype(dtype)
    b = rng.normal(size=(5, 2)).astype(dtype)
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == onp.float32 else {"rtol": 1e-10}
    A, SPD, B = np.asarray(a), np.asarray(spd), np.asarray(b)
    onp.testing.assert_allclose(onp.asarray(np.linalg.solve(A, B)), onp.linalg.solve(a, b), **tol)
    onp.testing.assert_allclose(onp.asarray(np.linalg.inv(A)), onp.linalg.inv(a), **tol)
    onp.testing.assert_allclose(float(np.linalg.det(A)), onp.linalg.det(a), **tol)
    onp.testing.assert_allclose(
        onp.asarray(np.linalg.cholesky(SPD)), onp.linalg.cholesky(spd), **tol
    )
    q, r = np.linalg.qr(A)
    onp.testing.assert_allclose(onp.asarray(q @ r), a, **tol)
    w, v = np.linalg.eigh(SPD)
    onp.testing.assert_allclose(onp.asarray(w), onp.linalg.eigh(spd)[0], **tol)
    onp.testing.assert_allclose(onp.asarray(v * w @ v.T), spd, **tol)
    p, l_, u = mjcore.scipy.linalg.lu(A)
    onp.testing.assert_allclose(onp.asarray(p @ l_ @ u), a, **tol)


@pytest.mark.gpu
@gpu
def test_gpu_callbacks_fft_random_and_transformations(capsys):
    x = np.linspace(0.0, 1.0, 8)
    y = mjcore.jit(
        lambda x: mjcore.pure_callback(onp.cos, mjcore.ShapeDtypeStruct((8,), onp.float64), x)
    )(x)
    onp.testing.assert_allclose(onp.asarray(y), onp.cos(onp.linspace(0.0, 1.0, 8)))
    mjcore.jit(lambda x: mjcore.debug.print("sum={s}", s=x.sum()))(x)
    assert "sum=4.0" in capsys.readouterr().out
    onp.testing.assert_allclose(
        onp.asarray(np.fft.fft(x)), onp.fft.fft(onp.linspace(0.0, 1.0, 8)), atol=1e-12
    )
    key = mjcore.random.key(0)
    u = mjcore.random.uniform(key, (1000,))
    assert 0.4 < float(u.mean()) < 0.6
    loss = lambda w, x: np.sum(np.tanh(x @ w) ** 2)  # noqa: E731
    w = np.ones((8, 3)) * 0.1
    xs = np.ones((4, 8))
    g = mjcore.jit(mjcore.grad(loss))(w, xs)
    per = mjcore.vmap(mjcore.grad(loss), in_axes=(None, 0))(w, xs[:, None, :])
    onp.testing.assert_allclose(onp.asarray(per.sum(0)), onp.asarray(g), rtol=1e-10)
    carry, _ = mjcore.lax.scan(lambda c, x: (c + x, None), 0.0, x)
    assert abs(float(carry) - 4.0) < 1e-12
    s = np.sort(np.asarray([3.0, 1.0, 2.0]))
    assert s.tolist() == [1.0, 2.0, 3.0]
