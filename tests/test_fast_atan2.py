"""The vectorised atan2 of large float32 arrays (`mjcore/lax/kernels/fast_atan2.py`).

Oracle: NumPy's `arctan2` in float64. Every result must be within 0.501 ulp of it (XLA's own
op, which smaller arrays and other dtypes keep, is within ~1); zeros, infinities and NaNs must
be exactly C99's (NumPy's), signs included, and subnormal operands and results must not be
flushed to zero, as XLA's CPU arithmetic would.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mjcore
import mjnp
from mjcore.lax.kernels import fast_trig

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)

N = fast_trig.MIN_SIZE + 5
SPECIALS = onp.array(
    [0.0, -0.0, onp.inf, -onp.inf, onp.nan, 1e-45, -1e-45, 1e-40, -3e-39, 1.0, -1.0, 3.4e38],
    onp.float32,
)


def _truth(y: onp.ndarray, x: onp.ndarray) -> onp.ndarray:
    with onp.errstate(invalid="ignore"):
        return onp.arctan2(y.astype(onp.float64), x.astype(onp.float64))


def _check(y: onp.ndarray, x: onp.ndarray) -> onp.ndarray:
    """mjnp's arctan2: within 0.501 ulp where finite, NaN where the truth is, signs kept."""
    got = onp.asarray(mjnp.arctan2(mjnp.asarray(y), mjnp.asarray(x)))
    assert got.dtype == onp.float32
    true = _truth(*onp.broadcast_arrays(y, x))
    assert onp.array_equal(onp.isnan(got), onp.isnan(true))
    finite = ~onp.isnan(true)
    ulp = onp.spacing(onp.abs(true[finite]).astype(onp.float32)).astype(onp.float64)
    assert onp.max(onp.abs(got[finite] - true[finite]) / ulp) <= 0.501
    assert onp.array_equal(onp.signbit(got[finite]), onp.signbit(true[finite]))
    return got


def _pair(n: int, seed: int, spread: float = 0.0) -> tuple[onp.ndarray, onp.ndarray]:
    rng = onp.random.default_rng(seed)
    scale = 10.0 ** rng.uniform(-spread, spread, (2, n))
    y, x = (rng.standard_normal((2, n)) * scale).astype(onp.float32)
    return y, x


def test_which_arrays_take_the_kernel():
    fun = mjcore.jit(mjnp.arctan2)

    def text(n, dtype):
        return fun.lower(mjnp.zeros(n, dtype), mjnp.ones(n, dtype)).as_text()

    assert "stablehlo.atan2" not in text(N, mjnp.float32)
    assert "stablehlo.atan2" in text(100, mjnp.float32)
    assert "stablehlo.atan2" in text(N, mjnp.float64)
    assert "stablehlo.atan2" in text(N, mjnp.float16)
    # The operands' broadcast size decides: a scalar against a large array takes the kernel.
    broadcast = fun.lower(mjnp.zeros(N, mjnp.float32), onp.float32(1.0)).as_text()
    assert "stablehlo.atan2" not in broadcast


@pytest.mark.parametrize("spread", [0.0, 5.0, 30.0])
def test_within_half_ulp(spread):
    _check(*_pair(N, 0, spread))


def test_around_the_circle():
    # Every angle's neighbourhood, each quadrant and the axes, at several radii.
    angle = onp.linspace(-onp.pi, onp.pi, N)
    radius = onp.repeat([1e-3, 1.0, 7e4, 1e30], N // 4 + 1)[:N]
    _check(
        (radius * onp.sin(angle)).astype(onp.float32), (radius * onp.cos(angle)).astype(onp.float32)
    )


def test_specials_signed_zeros_and_subnormals():
    ys, xs = (a.ravel() for a in onp.meshgrid(SPECIALS, SPECIALS))
    y, x = _pair(N, 1)
    y[: ys.size], x[: xs.size] = ys, xs
    # Subnormal results: |y / x| below float32's smallest normal.
    y[500:510], x[500:510] = onp.float32(1e-30), onp.float32(1e10)
    y[510:520], x[510:520] = onp.float32(-1e-42), onp.float32(3.0)
    got = _check(y, x)
    # Zeros, infinities and NaN exactly; every pair correctly rounded from float64.
    exact = onp.arctan2(ys.astype(onp.float64), xs.astype(onp.float64)).astype(onp.float32)
    onp.testing.assert_array_equal(got[: ys.size], exact)
    tiny = onp.finfo(onp.float32).smallest_normal
    assert 0 < got[505] < tiny and -tiny < got[515] < 0


@given(seed=st.integers(0, 2**31 - 1))
@settings(max_examples=6, deadline=None)
def test_random_bit_patterns(seed):
    # Uniform over all float32 bit patterns for both operands: every exponent pair, NaN
    # payloads, infinities, subnormals.
    rng = onp.random.default_rng(seed)
    y, x = rng.integers(0, 2**32, (2, N), dtype=onp.uint32).view(onp.float32)
    _check(y, x)


def test_broadcast_operands():
    y, _ = _pair(N, 2, 3.0)
    _check(y, onp.float32(-2.5))
    _check(onp.float32(0.75), y)


def test_eager_jit_vmap_and_fused_agree():
    y, x = _pair(N, 3, 2.0)
    eager = onp.asarray(mjnp.arctan2(mjnp.asarray(y), mjnp.asarray(x)))
    onp.testing.assert_array_equal(onp.asarray(mjcore.jit(mjnp.arctan2)(y, x)), eager)
    m = N - N % 4
    rows = mjcore.vmap(mjnp.arctan2)(y[:m].reshape(4, -1), x[:m].reshape(4, -1))
    onp.testing.assert_array_equal(onp.asarray(rows).ravel(), eager[:m])
    fused = mjcore.jit(lambda a, b: mjnp.sin(mjnp.arctan2(a, b)) * b)(y, x)
    onp.testing.assert_allclose(onp.asarray(fused), onp.sin(eager) * x, rtol=2e-6, atol=1e-6)


def test_gradient_against_jax():
    y, x = _pair(N, 4)

    def loss(xp):
        return lambda a, b: xp.sum(xp.arctan2(a, b) * a)

    ours = mjcore.grad(loss(mjnp), argnums=(0, 1))(mjnp.asarray(y), mjnp.asarray(x))
    theirs = jax.grad(loss(jnp), argnums=(0, 1))(jnp.asarray(y), jnp.asarray(x))
    for a, b in zip(ours, theirs, strict=True):
        onp.testing.assert_allclose(onp.asarray(a), onp.asarray(b), rtol=1e-4, atol=1e-5)
