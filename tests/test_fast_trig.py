"""The vectorised lowerings of sin, cos, tan, arctan, arcsin and arccos for large float32/float16
arrays (`mjcore/lax/kernels/fast_trig.py`).

Oracle: NumPy in float64, rounded; every result up to `LIMIT` must be within 0.501 ulp of the
true value (XLA's own op, used for small arrays under `jit`, is within 0.57); past `LIMIT`, results
are XLA's op's, bit for bit. Small eager calls run NumPy's float32 function on the host
(docs/eager.md), so XLA's op is reached there through `mjcore.jit`. Arrays mix ordinary values
with the ones the lowering treats apart: signed zeros, subnormals, infinities, NaN and magnitudes
past `LIMIT`.
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

PERIODIC = ("sin", "cos", "tan")  # range-reduced; XLA's op past LIMIT
INVERSE = ("arctan", "arcsin", "arccos")
FUNCS = PERIODIC + INVERSE
N = fast_trig.MIN_SIZE + 5
SPECIALS = [
    0.0,
    -0.0,
    onp.inf,
    -onp.inf,
    onp.nan,
    1e-45,
    -1e-45,
    1e-38,
    -3e-39,
    1e-4,
    2.0**-13,
    fast_trig.LIMIT,
    -fast_trig.LIMIT,
    6e5,
    -1e30,
    3.4e38,
]


def _ulp_error(name: str, x: onp.ndarray, got: onp.ndarray) -> float:
    """Largest error of `got` in units in the last place of x.dtype, over finite true values."""
    with onp.errstate(invalid="ignore"):
        true = getattr(onp, name)(x.astype(onp.float64))
    assert onp.array_equal(onp.isnan(got), onp.isnan(true)), f"{name}: NaNs differ"
    finite = onp.isfinite(true)
    ulp = onp.spacing(onp.abs(true[finite]).astype(x.dtype)).astype(onp.float64)
    return float(onp.max(onp.abs(got[finite].astype(onp.float64) - true[finite]) / ulp))


def _check_split(name: str, x: onp.ndarray) -> onp.ndarray:
    """mjnp's `name` of `x`: within 0.501 ulp, except past LIMIT for the periodic functions,
    where it is XLA's own op's value."""
    got = onp.asarray(getattr(mjnp, name)(mjnp.asarray(x)))
    inside = ~(onp.abs(x) > fast_trig.LIMIT) if name in PERIODIC else onp.ones(x.shape, bool)
    assert _ulp_error(name, x[inside], got[inside]) <= 0.501
    if inside.all():
        return got
    # Small chunks under jit: XLA's op (an eager call this small runs NumPy's host rule, which
    # may differ from XLA's op in the last ulp: the eager/jit contract of docs/eager.md).
    chunks = onp.array_split(x[~inside], max(1, (~inside).sum() // 1000))
    small = mjcore.jit(getattr(mjnp, name))
    xla = onp.concatenate([onp.asarray(small(mjnp.asarray(c))) for c in chunks])
    onp.testing.assert_array_equal(got[~inside], xla)
    # ... and eagerly, the same small chunk is NumPy's float32 function, bit for bit.
    eager = onp.asarray(getattr(mjnp, name)(mjnp.asarray(chunks[0])))
    with onp.errstate(invalid="ignore"):  # infinities: NaN, as mjnp gives without warning
        onp.testing.assert_array_equal(eager, getattr(onp, name)(chunks[0]))
    return got


def _moderate(n: int, scale: float, seed: int, dtype=onp.float32) -> onp.ndarray:
    return (onp.random.default_rng(seed).standard_normal(n) * scale).astype(dtype)


def _in_domain(name: str, n: int, seed: int) -> onp.ndarray:
    if name in ("arcsin", "arccos"):
        return onp.random.default_rng(seed).uniform(-0.99, 0.99, n).astype(onp.float32)
    return _moderate(n, 2.0, seed)


XLA_OPS = {
    "sin": "stablehlo.sine",
    "cos": "stablehlo.cosine",
    "tan": "stablehlo.tan",
    "arctan": "chlo.atan",
    "arcsin": "chlo.asin",
    "arccos": "chlo.acos",
}


@pytest.mark.parametrize("name", FUNCS)
def test_large_arrays_take_the_vectorised_lowering_and_small_ones_xla_op(name):
    fun, op = mjcore.jit(getattr(mjnp, name)), XLA_OPS[name]
    large = fun.lower(mjnp.zeros(N, mjnp.float32)).as_text()
    small = fun.lower(mjnp.zeros(100, mjnp.float32)).as_text()
    double = fun.lower(mjnp.zeros(N, mjnp.float64)).as_text()
    assert "f64" in large, name  # computed in float64
    assert (op in large) == (name in PERIODIC), name  # XLA's op only behind the LIMIT guard
    assert op in small and "f64" not in small, name
    # float64: XLA's op, but for sin and cos (tests/test_fast_trig64.py) behind their guard
    assert op in double and ("stablehlo.if" in double) == (name in ("sin", "cos")), name


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("scale", [1.0, 1e3, 3e5])
def test_float32_within_half_ulp(name, scale):
    x = onp.clip(_moderate(N, scale, 0), -fast_trig.LIMIT, fast_trig.LIMIT)
    x[: len(SPECIALS) - 4] = SPECIALS[:-4]  # nothing past LIMIT: the guard's false branch
    assert _ulp_error(name, x, onp.asarray(getattr(mjnp, name)(mjnp.asarray(x)))) <= 0.501


@pytest.mark.parametrize("name", FUNCS)
def test_dense_grid_up_to_the_limit(name):
    # Every 16th float32 in [2**-4, 2**4], then a grid out to LIMIT: hits near multiples of pi/2.
    lo, hi = onp.array([2.0**-4, 2.0**4], onp.float32).view(onp.int32)
    small = onp.arange(lo, hi, 16, dtype=onp.int32).view(onp.float32)
    x = onp.concatenate(
        [
            small,
            -small,
            onp.linspace(-fast_trig.LIMIT, fast_trig.LIMIT, 1_000_001, dtype=onp.float32),
        ]
    )
    assert _ulp_error(name, x, onp.asarray(getattr(mjnp, name)(mjnp.asarray(x)))) <= 0.501


@pytest.mark.parametrize("name", FUNCS)
def test_specials_and_huge_values(name):
    x = _moderate(N, 10.0, 1)
    x[: len(SPECIALS)] = SPECIALS  # past LIMIT: the periodic functions' guard's true branch
    got = _check_split(name, x)
    # Signed zeros and subnormals as NumPy gives them (odd functions return them as they are;
    # cos is 1 and arccos pi/2 there).
    ref = getattr(onp, name)(x[:2])
    onp.testing.assert_array_equal(got[:2], ref)
    assert list(onp.signbit(got[:2])) == list(onp.signbit(ref))
    if name not in ("cos", "arccos"):
        onp.testing.assert_array_equal(got[5:9], x[5:9])


@given(bits=st.integers(0, 2**32 - 1), seed=st.integers(0, 2**31 - 1), name=st.sampled_from(FUNCS))
@settings(max_examples=8, deadline=None)
def test_random_bit_patterns(bits, seed, name):
    # Uniform over all float32 bit patterns: every exponent, NaN payloads, infinities.
    x = onp.random.default_rng(seed).integers(0, 2**32, N, dtype=onp.uint32)
    x[0] = bits
    _check_split(name, x.view(onp.float32))


@pytest.mark.parametrize("name", FUNCS)
def test_float16(name):
    x = onp.concatenate(
        [
            onp.arange(-2048, 2048, 1 / 64, dtype=onp.float16),
            onp.array([0.0, -0.0, onp.inf, onp.nan, 6e-8, 65504], onp.float16),
        ]
    )
    assert x.size >= fast_trig.MIN_SIZE
    got = onp.asarray(getattr(mjnp, name)(mjnp.asarray(x)))
    assert got.dtype == onp.float16
    assert _ulp_error(name, x, got) <= 0.501


@pytest.mark.parametrize("name", FUNCS)
def test_eager_jit_vmap_and_fused_agree(name):
    x, y = _in_domain(name, N, 2), _moderate(N, 1.0, 3)
    f = getattr(mjnp, name)
    eager = onp.asarray(f(mjnp.asarray(x)))
    onp.testing.assert_array_equal(onp.asarray(mjcore.jit(f)(mjnp.asarray(x))), eager)
    rows = mjcore.vmap(f)(mjnp.asarray(x[: N - N % 4].reshape(4, -1)))
    onp.testing.assert_array_equal(onp.asarray(rows).ravel(), eager[: N - N % 4])
    fused = mjcore.jit(lambda a, b: mjnp.tanh(f(a) * b + 0.5 * a))(x, y)
    onp.testing.assert_allclose(
        onp.asarray(fused), onp.tanh(eager * y + 0.5 * x), rtol=2e-6, atol=1e-6
    )


@pytest.mark.parametrize("name", FUNCS)
def test_gradient_against_jax(name):
    x = _in_domain(name, N, 4)

    def loss(xp):
        return lambda v: xp.sum(getattr(xp, name)(v) * v)

    ours = onp.asarray(mjcore.grad(loss(mjnp))(mjnp.asarray(x)))
    theirs = onp.asarray(jax.grad(loss(jnp))(jnp.asarray(x)))
    onp.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_inside_a_loop_body_and_under_cond():
    # The guard is a `stablehlo.if` nested in the loop's and the branch's regions.
    x = _moderate(N, 3.0, 5)
    x[7] = 1e30  # past LIMIT: the guard's true branch, inside the loop

    def body(carry, _):
        return mjnp.sin(carry) * 0.5 + carry, None

    looped = mjcore.jit(lambda v: mjcore.scan(body, v, None, length=3)[0])(x)
    expect = x
    for _ in range(3):
        expect = onp.sin(expect) * onp.float32(0.5) + expect
    onp.testing.assert_allclose(onp.asarray(looped), expect, rtol=1e-5, atol=1e-6)
    branchy = mjcore.jit(lambda p, v: mjcore.cond(p, mjnp.cos, mjnp.tan, v))
    onp.testing.assert_array_equal(onp.asarray(branchy(True, x)), onp.asarray(mjnp.cos(x)))
    onp.testing.assert_array_equal(onp.asarray(branchy(False, x)), onp.asarray(mjnp.tan(x)))
