"""The vectorised cube root of float32 arrays (`mjcore/lax/kernels/fast_cbrt.py`).

Oracle: NumPy's `cbrt` in float64. Every result must be within 0.501 ulp of it; zeros (signed),
infinities and NaN pass through; subnormal operands are not read as zero; exact cubes give
exact roots (NumPy's own float32 `cbrt(-27)` is -2.9999998).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp
from hypothesis import given, settings
from hypothesis import strategies as st

import mjcore
import mjnp
from mjcore.lax.kernels import fast_cbrt

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)

N = fast_cbrt.MIN_SIZE + 3
SPECIALS = onp.array(
    [0.0, -0.0, onp.inf, -onp.inf, onp.nan, 1e-45, -1e-45, 1e-40, -1.2e-38, 3.4e38, -3.4e38],
    onp.float32,
)


def _check(x: onp.ndarray) -> onp.ndarray:
    got = onp.asarray(mjnp.cbrt(mjnp.asarray(x)))
    assert got.dtype == onp.float32
    with onp.errstate(invalid="ignore"):
        true = onp.cbrt(x.astype(onp.float64))
    assert onp.array_equal(onp.isnan(got), onp.isnan(true))
    finite = onp.isfinite(true)
    ulp = onp.spacing(onp.abs(true[finite]).astype(onp.float32)).astype(onp.float64)
    assert onp.max(onp.abs(got[finite] - true[finite]) / ulp) <= 0.501
    assert onp.array_equal(onp.signbit(got[~onp.isnan(true)]), onp.signbit(true[~onp.isnan(true)]))
    return got


def test_which_arrays_take_the_kernel():
    fun = mjcore.jit(mjnp.cbrt)
    assert "stablehlo.cbrt" not in fun.lower(mjnp.zeros(N, mjnp.float32)).as_text()
    assert "stablehlo.cbrt" in fun.lower(mjnp.zeros(N - 4, mjnp.float32)).as_text()
    assert "stablehlo.cbrt" in fun.lower(mjnp.zeros(N, mjnp.float64)).as_text()


def test_specials_and_exact_cubes():
    x = onp.random.default_rng(0).standard_normal(N).astype(onp.float32)
    x[: SPECIALS.size] = SPECIALS
    k = onp.arange(-400, 401, dtype=onp.float32)
    x[100 : 100 + k.size] = k**3
    got = _check(x)
    onp.testing.assert_array_equal(
        got[: SPECIALS.size], onp.cbrt(SPECIALS.astype(onp.float64)).astype(onp.float32)
    )
    onp.testing.assert_array_equal(got[100 : 100 + k.size], k)


def test_every_binade():
    # Each float32 exponent, 64 significands apiece, both signs.
    rng = onp.random.default_rng(1)
    bits = (onp.arange(N, dtype=onp.uint32) % 255) << 23 | rng.integers(
        0, 2**23, N, dtype=onp.uint32
    )
    bits[::2] |= onp.uint32(1 << 31)
    _check(bits.view(onp.float32))


@given(seed=st.integers(0, 2**31 - 1))
@settings(max_examples=6, deadline=None)
def test_random_bit_patterns(seed):
    x = onp.random.default_rng(seed).integers(0, 2**32, N, dtype=onp.uint32).view(onp.float32)
    _check(x)


def test_eager_jit_vmap_and_fused_agree():
    x = (onp.random.default_rng(2).standard_normal(N) * 50).astype(onp.float32)
    eager = onp.asarray(mjnp.cbrt(mjnp.asarray(x)))
    onp.testing.assert_array_equal(onp.asarray(mjcore.jit(mjnp.cbrt)(x)), eager)
    m = N - N % 4
    rows = mjcore.vmap(mjnp.cbrt)(x[:m].reshape(4, -1))
    onp.testing.assert_array_equal(onp.asarray(rows).ravel(), eager[:m])
    fused = mjcore.jit(lambda a: mjnp.cbrt(a) * 2 + a)(x)
    onp.testing.assert_allclose(onp.asarray(fused), eager * 2 + x, rtol=1e-6, atol=1e-6)


def test_gradient_against_jax():
    x = (onp.random.default_rng(3).uniform(0.5, 20, N) * onp.sign(onp.arange(N) % 2 - 0.5)).astype(
        onp.float32
    )

    def loss(xp):
        return lambda v: xp.sum(xp.cbrt(v) * v)

    ours = onp.asarray(mjcore.grad(loss(mjnp))(mjnp.asarray(x)))
    theirs = onp.asarray(jax.grad(loss(jnp))(jnp.asarray(x)))
    onp.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
