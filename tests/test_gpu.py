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
from mjcore import lax
from mjcore.backend import client, custom_call
from mjcore.backend.lowering import lower_primitive
from mjcore.core import ShapedArray
from mjcore.lax import convolution, linalg

_ON_GPU = mjcore.default_backend() == "gpu"
gpu = pytest.mark.skipif(not _ON_GPU, reason="needs mjcore on an NVIDIA GPU (CUDA plugin)")


@pytest.fixture
def lowering_for_cuda(monkeypatch):
    """Lower as for a CUDA device (nothing compiled for it here)."""
    monkeypatch.setattr(custom_call, "lowering_platform", lambda: "cuda")
    monkeypatch.setattr(linalg, "lowering_platform", lambda: "cuda")
    monkeypatch.setattr(convolution, "lowering_platform", lambda: "cuda")
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


def test_cuda_lowering_of_a_routine_without_a_gpu_kernel_raises(lowering_for_cuda):
    with pytest.raises(NotImplementedError, match="LAPACK gees has no GPU kernel"):
        custom_call.solver_call(None, "gees", [], [F32], batch_ndim=1)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "shape, transposed, layout",
    [
        ((2, 5, 3), "false", "dense<[1, 2, 0]> : tensor<3xindex>"),  # tall: column-major
        ((2, 3, 5), "true", "dense<[2, 1, 0]> : tensor<3xindex>"),  # wide: the transpose
    ],
)
@pytest.mark.parametrize("full_matrices", [False, True])
def test_cuda_lowering_of_svd_calls_cusolver_gesvd(
    lowering_for_cuda, shape, transposed, layout, full_matrices
):
    aval = ShapedArray(shape, onp.dtype(onp.float64))
    text = _text(linalg.svd_p, [aval], full_matrices=full_matrices, compute_uv=True)
    assert "cusolver_gesvd_ffi" in text and "lapack_" not in text
    assert f"transposed = {transposed}" in text
    assert f"full_matrices = {str(full_matrices).lower()}" in text and "compute_uv = true" in text
    assert layout in text


def test_cuda_lowering_of_eig_calls_cusolver_geev(lowering_for_cuda):
    aval = ShapedArray((2, 4, 4), onp.dtype(onp.float32))
    text = _text(linalg.eig_p, [aval], compute_eigenvectors=True)
    assert "cusolver_geev_ffi" in text and "left = false, right = true" in text
    assert "lapack_" not in text


@pytest.mark.parametrize("seed", range(4))
def test_unpacking_lapacks_real_eigenvectors_matches_numpy(seed):
    """cuSOLVER's geev, like LAPACK's, packs a real matrix's complex eigenvector pairs into
    real columns; the GPU lowering unpacks them with lax ops, checked here against LAPACK's
    own packed output (SciPy's dgeev)."""
    lapack = pytest.importorskip("scipy.linalg.lapack")
    a = onp.random.default_rng(seed).standard_normal((3, 6, 6))
    packed = [lapack.dgeev(m) for m in a]
    w = onp.array([wr + 1j * wi for wr, wi, *_ in packed])
    vr = onp.array([p[3] for p in packed])
    assert (w.imag != 0).any()
    v = onp.asarray(mjcore.jit(linalg._unpack_conjugate_pairs)(w, vr))
    onp.testing.assert_allclose(a @ v, v * w[:, None, :], atol=1e-10)
    w_np, v_np = onp.linalg.eig(a)
    order, order_np = onp.argsort(w, axis=-1), onp.argsort(w_np, axis=-1)
    onp.testing.assert_allclose(
        onp.abs(onp.take_along_axis(v, order[:, None, :], -1)),
        onp.abs(onp.take_along_axis(v_np, order_np[:, None, :], -1)),
        atol=1e-10,
    )


def _conv(x, w):
    return lax.conv_general_dilated(x, w, (2, 1), [(1, 0), (0, 1)], rhs_dilation=(1, 2))


@pytest.mark.parametrize("dtype", [onp.complex64, onp.complex128])
def test_cuda_lowering_of_complex_convolution_is_three_real_ones(lowering_for_cuda, dtype):
    """XLA's GPU backend has no complex convolution; the CUDA lowering does three real ones
    (as JAX's), which XLA's CPU compiler also runs: compared with the complex one here."""
    rng = onp.random.default_rng(0)
    x = (rng.standard_normal((2, 3, 5, 4)) + 1j * rng.standard_normal((2, 3, 5, 4))).astype(dtype)
    w = (rng.standard_normal((2, 3, 2, 2)) + 1j * rng.standard_normal((2, 3, 2, 2))).astype(dtype)
    text = mjcore.jit(_conv).lower(x, w).as_text()
    assert text.count("stablehlo.convolution") == 3 and "complex" in text
    got = onp.asarray(mjcore.jit(_conv)(x, w))
    xr, xi = x.real.astype(onp.float64), x.imag.astype(onp.float64)
    wr, wi = w.real.astype(onp.float64), w.imag.astype(onp.float64)
    c = lambda p, q: onp.asarray(_conv(p, q))  # noqa: E731  (real convolutions)
    want = c(xr, wr) - c(xi, wi) + 1j * (c(xr, wi) + c(xi, wr))
    tol = 1e-5 if dtype == onp.complex64 else 1e-12
    onp.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_cuda_lowering_of_integer_convolution_raises(lowering_for_cuda):
    x, w = onp.ones((1, 1, 4, 4), onp.int32), onp.ones((1, 1, 2, 2), onp.int32)
    with pytest.raises(NotImplementedError, match="no int32 convolution.*float32/float64"):
        mjcore.jit(_conv).lower(x, w).as_text()


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
    onp.testing.assert_array_equal(onp.from_dlpack(x, device="cpu"), [0, 1, 2, 3])


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


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("dtype", [onp.float32, onp.float64, onp.complex128])
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (3, 5, 5)])
def test_gpu_svd_matches_numpy(dtype, shape):
    rng = onp.random.default_rng(1)
    a = rng.standard_normal(shape).astype(dtype)
    if onp.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    tol = {"rtol": 2e-4, "atol": 2e-4} if dtype == onp.float32 else {"rtol": 1e-10, "atol": 1e-10}
    A = np.asarray(a)
    onp.testing.assert_allclose(
        onp.asarray(np.linalg.svd(A, compute_uv=False)), onp.linalg.svd(a, compute_uv=False), **tol
    )
    for full in (False, True):
        u, s, vh = np.linalg.svd(A, full_matrices=full)
        k = min(shape[-2:])
        rebuilt = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
        onp.testing.assert_allclose(onp.asarray(rebuilt), a, **tol)
        eye = onp.broadcast_to(onp.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2)
        onp.testing.assert_allclose(onp.asarray(u.conj().swapaxes(-1, -2) @ u), eye, **tol)
    if len(shape) == 2:
        onp.testing.assert_allclose(onp.asarray(np.linalg.pinv(A)), onp.linalg.pinv(a), **tol)
        assert int(np.linalg.matrix_rank(A)) == onp.linalg.matrix_rank(a)
        onp.testing.assert_allclose(float(np.linalg.norm(A, 2)), onp.linalg.norm(a, 2), **tol)
        b = rng.standard_normal(shape[0]).astype(dtype)
        onp.testing.assert_allclose(
            onp.asarray(np.linalg.lstsq(A, np.asarray(b))[0]), onp.linalg.lstsq(a, b)[0], **tol
        )
    nuclear = mjcore.grad(lambda m: np.sum(np.linalg.svd(m, compute_uv=False)))
    on_cpu = mjcore.device_put(a.real, mjcore.devices("cpu")[0])
    onp.testing.assert_allclose(onp.asarray(nuclear(A.real)), onp.asarray(nuclear(on_cpu)), **tol)


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("dtype", [onp.float32, onp.float64, onp.complex128])
def test_gpu_eig_matches_numpy(dtype):
    rng = onp.random.default_rng(2)
    a = rng.standard_normal((3, 6, 6)).astype(dtype)
    if onp.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(a.shape)
    tol = 2e-4 if dtype == onp.float32 else 1e-9
    w, v = np.linalg.eig(np.asarray(a))
    w, v = onp.asarray(w), onp.asarray(v)
    onp.testing.assert_allclose(a @ v, v * w[:, None, :], atol=tol * 10)
    onp.testing.assert_allclose(
        onp.sort_complex(w.ravel()), onp.sort_complex(onp.linalg.eigvals(a).ravel()), atol=tol * 10
    )
    onp.testing.assert_allclose(onp.linalg.norm(v, axis=-2), 1.0, atol=tol)
    onp.testing.assert_allclose(onp.asarray(np.linalg.eigvals(np.asarray(a))), w, atol=tol)


@pytest.mark.gpu
@gpu
def test_gpu_complex_convolution_and_integer_error():
    rng = onp.random.default_rng(3)
    x = rng.standard_normal((2, 3, 5, 4)) + 1j * rng.standard_normal((2, 3, 5, 4))
    w = rng.standard_normal((2, 3, 2, 2)) + 1j * rng.standard_normal((2, 3, 2, 2))
    got = onp.asarray(_conv(np.asarray(x), np.asarray(w)))
    cpu = mjcore.devices("cpu")[0]
    want = onp.asarray(_conv(mjcore.device_put(x, cpu), mjcore.device_put(w, cpu)))
    onp.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    with pytest.raises(NotImplementedError, match="no int32 convolution"):
        _conv(np.ones((1, 1, 4, 4), np.int32), np.ones((1, 1, 2, 2), np.int32))


@pytest.mark.parametrize("fun", [np.sin, np.cos, np.arctan, np.cbrt, lambda x: np.arctan2(x, x)])
def test_cuda_lowering_keeps_xlas_transcendental_ops(monkeypatch, lowering_for_cuda, fun):
    """The vectorised CPU kernels (mjcore/lax/kernels) are for XLA's CPU code only: on a GPU
    XLA's ops are vectorised, and the kernels' range guard (a `cond`) would make every call
    wait for the host."""
    from mjcore.lax.kernels import platform

    monkeypatch.setattr(platform, "lowering_platform", lambda: "cuda")
    big = onp.ones(1 << 19, onp.float32)
    text = mjcore.jit(fun).lower(big).as_text()
    assert "stablehlo.case" not in text and "stablehlo.if" not in text
    assert any(op in text for op in ("sine", "cosine", "atan", "cbrt"))
    monkeypatch.setattr(platform, "lowering_platform", lambda: "cpu")
    assert mjcore.jit(lambda x: fun(x) + 0).lower(big).as_text().count("stablehlo") > text.count(
        "stablehlo"
    )


def test_lowering_for_names_the_platform_in_this_thread():
    default = "cuda" if _ON_GPU else "cpu"
    assert custom_call.lowering_platform() == default
    with client.lowering_for("cuda"):
        assert custom_call.lowering_platform() == "cuda"
        with client.lowering_for("cpu"):
            assert custom_call.lowering_platform() == "cpu"
        assert custom_call.lowering_platform() == "cuda"
    assert custom_call.lowering_platform() == default


def test_a_program_of_one_platforms_kernels_is_lowered_again_for_another(monkeypatch):
    """A program lowered for the default device's kernels (cuSOLVER on a GPU) runs on a device
    of another platform (an array committed to the CPU) lowered again for it, not refused."""
    from mjcore import dispatch

    a = ShapedArray((3, 3), onp.dtype(onp.float64))
    params = {"full_matrices": False, "compute_uv": True}
    program, avals_out = dispatch.compiled_primitive(linalg.svd_p, (a,), params)
    platforms: list[str] = []
    relower = program.relower

    def spy():
        platforms.append(custom_call.lowering_platform())
        return relower()

    monkeypatch.setattr(program, "relower", spy)
    monkeypatch.setattr(client, "_portable", lambda p, d: False)  # as if d were another platform
    placing = client._PlacingExecutable(program, program.executable, avals_out, False)
    exe, _ = placing._for(mjcore.devices()[0], True)
    assert platforms == ["cuda" if _ON_GPU else "cpu"]


@pytest.mark.gpu
@gpu
def test_gpu_linalg_and_callbacks_on_arrays_committed_to_the_cpu():
    cpu = mjcore.devices("cpu")[0]
    a = onp.random.default_rng(4).standard_normal((5, 5)) + 5 * onp.eye(5)
    A = mjcore.device_put(a, cpu)
    inv = np.linalg.inv(A)
    assert inv.device == cpu
    onp.testing.assert_allclose(onp.asarray(inv), onp.linalg.inv(a), rtol=1e-12)
    onp.testing.assert_allclose(
        onp.asarray(np.linalg.svd(A, compute_uv=False)), onp.linalg.svd(a, compute_uv=False)
    )
    onp.testing.assert_allclose(
        onp.sort_complex(onp.asarray(np.linalg.eigvals(A))), onp.sort_complex(onp.linalg.eigvals(a))
    )
    on_gpu = np.linalg.inv(np.asarray(a))  # the same primitive on the default device still works
    assert on_gpu.device == mjcore.devices()[0]
    f = mjcore.jit(
        lambda x: mjcore.pure_callback(onp.cos, mjcore.ShapeDtypeStruct((5, 5), onp.float64), x)
    )
    onp.testing.assert_allclose(onp.asarray(f(A)), onp.cos(a))
    onp.testing.assert_allclose(onp.asarray(f(np.asarray(a))), onp.cos(a))


@pytest.mark.gpu
@gpu
def test_gpu_highest_precision_gives_full_float32_products():
    """XLA's GPU default runs float32 products at TF32 (as JAX's); 'highest' asks for full
    float32, by argument, by the flag or by the context manager."""
    rng = onp.random.default_rng(5)
    a, b = (rng.standard_normal((256, 256)).astype(onp.float32) for _ in range(2))
    exact = a.astype(onp.float64) @ b.astype(onp.float64)

    def err(x):
        return float(
            onp.max(onp.abs(onp.asarray(x, onp.float64) - exact)) / onp.max(onp.abs(exact))
        )

    A, B = np.asarray(a), np.asarray(b)
    assert err(np.matmul(A, B, precision="highest")) < 1e-5
    assert err(mjcore.jit(lambda x, y: np.dot(x, y, precision="highest"))(A, B)) < 1e-5
    with mjcore.default_matmul_precision("highest"):
        assert err(mjcore.jit(lambda x, y: x @ y)(A, B)) < 1e-5
