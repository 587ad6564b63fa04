"""mjnp.fft against numpy.fft (values, dtypes, shapes, errors), under jit and vmap, and its
gradients against finite differences and JAX."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import mjcore
import mjnp
from mjcore.test_util import check_grads
from tests.differential_registry import differential

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn"]
REAL_ONLY = {"rfft", "ihfft", "rfft2", "rfftn"}
NORMS = [None, "backward", "ortho", "forward"]
# Each new shape compiles a few programs: keep the example counts small.
SETTINGS = settings(max_examples=6, deadline=None, derandomize=True)
DTYPES = ("bool", "int8", "int64", "float16", "float32", "float64", "complex64", "complex128")


def _tol(dtype: np.dtype) -> dict[str, float]:
    single = np.dtype(dtype) in (np.float16, np.float32, np.complex64)
    half = np.dtype(dtype) == np.float16
    return {
        "rtol": 1e-2 if half else 2e-4 if single else 1e-10,
        "atol": 1e-2 if half else 1e-4 if single else 1e-10,
    }


def _check(mj_fun, np_fun, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = np_fun(*args, **kwargs)
        except Exception as err:  # the NumPy error type is the expectation
            with pytest.raises(type(err)):
                mj_fun(*args, **kwargs)
            return
    actual = mj_fun(*args, **kwargs)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(np.asarray(actual), expected, **_tol(expected.dtype))


def _sample(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(-3, 4, size=shape).astype(dtype)
    x = rng.uniform(-1, 1, size=shape)
    if dtype.kind == "c":
        x = x + 1j * rng.uniform(-1, 1, size=shape)
    return x.astype(dtype)


@differential("fft.fft", "fft.hfft", "fft.ifft", "fft.ihfft", "fft.irfft", "fft.rfft")
@pytest.mark.parametrize("name", ONE_D)
@SETTINGS
@given(data=st.data())
def test_one_axis_transforms_match_numpy(name, data):
    dtypes = tuple(d for d in DTYPES if not (name in REAL_ONLY and d.startswith("complex")))
    dtype = data.draw(st.sampled_from(dtypes))
    shape = tuple(data.draw(st.lists(st.integers(0, 5), min_size=1, max_size=3)))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = data.draw(st.sampled_from([None, 1, 3, 4, 8]))
    norm = data.draw(st.sampled_from(NORMS))
    # NumPy zero-pads an empty axis with uninitialised memory; mjnp gives zeros.
    assume(n is None or shape[axis] > 0)
    x = _sample(np.random.default_rng(data.draw(st.integers(0, 2**16))), shape, dtype)
    _check(getattr(mjnp.fft, name), getattr(np.fft, name), x, n=n, axis=axis, norm=norm)


@differential(
    "fft.fft2",
    "fft.fftn",
    "fft.ifft2",
    "fft.ifftn",
    "fft.irfft2",
    "fft.irfftn",
    "fft.rfft2",
    "fft.rfftn",
)
@pytest.mark.parametrize("name", N_D)
@SETTINGS
@given(data=st.data())
def test_multi_axis_transforms_match_numpy(name, data):
    dtype = data.draw(st.sampled_from(("int32", "float32", "float64")))
    ndim = data.draw(st.integers(2, 3))
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim)))
    axes = data.draw(st.sampled_from([None, (0, -1), (-1, 0), (1,)]))
    if name.endswith("2") and axes is None:
        axes = (-2, -1)
    s = None
    if data.draw(st.booleans()) and axes is not None:
        s = tuple(data.draw(st.integers(1, 6)) for _ in axes)
    norm = data.draw(st.sampled_from(NORMS))
    x = _sample(np.random.default_rng(data.draw(st.integers(0, 2**16))), shape, dtype)
    kwargs = {"s": s, "norm": norm} | ({} if axes is None else {"axes": axes})
    _check(getattr(mjnp.fft, name), getattr(np.fft, name), x, **kwargs)


def test_helpers_match_numpy():
    for n in (1, 4, 7):
        for d in (1.0, 0.25, np.float32(0.5)):
            _check(mjnp.fft.fftfreq, np.fft.fftfreq, n, d)
            _check(mjnp.fft.rfftfreq, np.fft.rfftfreq, n, d)
    x = np.arange(24).reshape(2, 3, 4)
    for axes in (None, 0, (1, 2), -1, ()):
        for f in ("fftshift", "ifftshift"):
            got, want = getattr(mjnp.fft, f)(x, axes), getattr(np.fft, f)(x, axes)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(np.asarray(got), want)


def test_errors_match_numpy():
    with pytest.raises(ValueError, match="invalid norm"):
        mjnp.fft.fft(np.ones(4), norm="bogus")
    with pytest.raises(ValueError, match="FFT data points"):
        mjnp.fft.fft(np.ones((4, 0)))
    with pytest.raises(TypeError, match="real-input"):
        mjnp.fft.rfft(np.ones(4, complex))
    for f in ("fftfreq", "rfftfreq"):  # NumPy divides by n * d in Python first
        with pytest.raises(ZeroDivisionError, match=f"mjnp.fft.{f}"):
            getattr(mjnp.fft, f)(0)
    for f in ("fftshift", "ifftshift"):  # NumPy's roll-based shift fails on 0-d input
        with pytest.raises(ValueError, match="0-d"):
            getattr(mjnp.fft, f)(np.array(2.0))


def test_jit_and_vmap_match_eager():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 4, 6))
    for name in ("fft", "rfft", "irfft", "hfft", "rfftn", "irfft2", "ifftn"):
        f = getattr(mjnp.fft, name)
        eager = np.asarray(f(x))
        np.testing.assert_allclose(np.asarray(mjcore.jit(f)(x)), eager, rtol=1e-12, atol=1e-12)
        looped = np.stack([np.asarray(f(x[:, i])) for i in range(4)], 1)
        batched = mjcore.vmap(f, in_axes=1, out_axes=1)(x)
        np.testing.assert_allclose(np.asarray(batched), looped, rtol=1e-12, atol=1e-12)


def _jax_fft(name):
    import jax.numpy as jnp

    return getattr(jnp.fft, name)


GRAD_CASES = [
    ("fft", "backward"),
    ("ifft", "ortho"),
    ("rfft", "forward"),
    ("irfft", "backward"),
    ("hfft", "ortho"),
    ("ihfft", "backward"),
    ("rfft2", "ortho"),
    ("irfftn", "forward"),
]


@pytest.mark.parametrize("name,norm", GRAD_CASES, ids=[f"{n}-{m}" for n, m in GRAD_CASES])
def test_gradients_match_jax_and_finite_differences(name, norm):
    import jax

    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 5))
    w = rng.normal(size=getattr(np.fft, name)(x, norm=norm).shape)

    def loss(fft_fun, lib):
        def f(x):
            y = fft_fun(x, norm=norm)
            return lib.sum(
                lib.real(y) * w + lib.imag(y) * w[::-1] if y.dtype.kind == "c" else y * w
            )

        return f

    import jax.numpy as jnp

    check_grads(
        lambda x: getattr(mjnp.fft, name)(x, norm=norm), (x,), order=1, modes=("fwd", "rev")
    )
    got = mjcore.grad(loss(getattr(mjnp.fft, name), mjnp))(x)
    want = jax.grad(loss(_jax_fft(name), jnp))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-10, atol=1e-10)
