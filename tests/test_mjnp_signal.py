"""mjnp/_signal.py (convolve, correlate) against NumPy: modes, operand swap, conjugation and
dtypes; under jit and vmap; derivatives in both operands (JAX x64 as the oracle)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mjcore
import mjnp
from mjcore.test_util import check_grads
from tests.differential_registry import differential
from tests.mjnp_testing import arrays, check_against_numpy

DTYPES = (
    "bool",
    "int8",
    "int32",
    "uint8",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
MODES = ("full", "same", "valid", 0, 1, 2)
SOME = settings(max_examples=12, deadline=None, derandomize=True)


def _small(rng, shape, dtype):
    """Small integers (and Gaussian integers): exact sums of products in every dtype."""
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    real = rng.integers(0 if dtype.kind == "u" else -3, 4, size=shape)
    return real + 1j * rng.integers(-3, 4, size=shape) if dtype.kind == "c" else real


# Lengths 0 to 6 (so both operand orders, and NumPy's empty errors); a 0-d operand sometimes.
_VECTORS = st.sampled_from([(), (0,), (1,), (2,), (3,), (6,)])


@differential("convolve", "correlate")
@pytest.mark.parametrize("name", ["convolve", "correlate"])
@SOME
@given(data=st.data())
def test_matches_numpy(name, data):
    a = data.draw(arrays(DTYPES, _VECTORS, domain=_small))
    v = data.draw(arrays(DTYPES, _VECTORS, domain=_small))
    mode = data.draw(st.sampled_from(MODES))
    check_against_numpy(
        lambda a, v: getattr(mjnp, name)(a, v, mode),
        lambda a, v: getattr(np, name)(a, v, mode),
        a,
        v,
    )


def test_python_scalars_are_strong_operands_as_in_numpy():
    for name in ("convolve", "correlate"):
        check_against_numpy(
            getattr(mjnp, name), getattr(np, name), np.array([1.0, 2.0], np.float32), [2.5]
        )
    check_against_numpy(mjnp.convolve, np.convolve, np.array([1, 2], np.int8), 3)


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda m: m.convolve([1, 2], [1], mode="bad"), ValueError),
        (lambda m: m.convolve([1, 2], [1], mode="F"), ValueError),
        (lambda m: m.convolve([1, 2], [1], mode=5), ValueError),
        (lambda m: m.correlate([1, 2], [1], mode=None), TypeError),
        (lambda m: m.convolve([1, 2], [1], mode=True), TypeError),
        (lambda m: m.convolve([[1, 2]], [1]), ValueError),
        (lambda m: m.convolve([], [1]), ValueError),
        (lambda m: m.correlate(3.0, [1, 2]), ValueError),
        (lambda m: m.correlate([1.0], []), ValueError),
    ],
)
def test_errors_are_numpys(call, error):
    with pytest.raises(error):
        call(np)
    with pytest.raises(error, match="mjnp"):
        call(mjnp)


def test_jit_matches_eager_and_vmap_matches_loop():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 7))
    v = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    for name in ("convolve", "correlate"):
        for mode in ("full", "same", "valid"):

            def fun(a, v, name=name, mode=mode):
                return getattr(mjnp, name)(a, v, mode)

            expected = getattr(np, name)(a[0], v[0], mode)
            np.testing.assert_allclose(mjcore.jit(fun)(a[0], v[0]), expected, rtol=1e-12)
            for in_axes in ((0, 0), (None, 0), (0, None)):
                args = [x if ax == 0 else x[0] for x, ax in zip((a, v), in_axes, strict=True)]
                loop = [
                    getattr(np, name)(
                        a[i if in_axes[0] == 0 else 0], v[i if in_axes[1] == 0 else 0], mode
                    )
                    for i in range(3)
                ]
                np.testing.assert_allclose(
                    mjcore.jit(mjcore.vmap(fun, in_axes=in_axes))(*args),
                    np.stack(loop),
                    rtol=1e-12,
                )


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_derivatives_check_and_agree_with_jax(name, mode):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(1)
    # Both operand orders for 'same', where NumPy's swap decides the centring.
    for na, nv in ((6, 3), (3, 5)) if mode == "same" else ((6, 3),):
        a, v = rng.standard_normal(na), rng.standard_normal(nv)
        check_grads(lambda a, v: getattr(mjnp, name)(a, v, mode), (a, v), order=1)
        w = rng.standard_normal(getattr(np, name)(a, v, mode).shape)

        def loss(np_, a, v, w=w):
            return np_.sum(getattr(np_, name)(a, v, mode) * w)

        ours = mjcore.grad(lambda a, v: loss(mjnp, a, v), argnums=(0, 1))(a, v)
        theirs = jax.grad(lambda a, v: loss(jax.numpy, a, v), argnums=(0, 1))(a, v)
        for x, y in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)


def test_complex_derivatives_check():
    rng = np.random.default_rng(2)
    a = rng.standard_normal(5) + 1j * rng.standard_normal(5)
    v = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    for fun in (mjnp.convolve, mjnp.correlate):
        check_grads(lambda a, v, fun=fun: fun(a, v, "same"), (a, v), order=1)
