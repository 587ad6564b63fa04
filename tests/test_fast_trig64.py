"""The vectorised float64 sin and cos (`mjcore/lax/kernels/fast_trig64.py`,
wired in by `fast_trig`).

Oracle: NumPy's sin and cos in extended precision (x86's 80-bit long double, 11 bits beyond
float64); every result up to `LIMIT` must be within 0.86 ulp of it (the kernels measure 0.85 at
most; XLA's float64 ops, which small arrays keep, 0.52). Past `LIMIT`, results are XLA's op's,
bit for bit. Arrays mix ordinary values with signed zeros, subnormals, infinities, NaN, values
next to multiples of pi/2 and magnitudes past `LIMIT`.
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
from mjcore.lax.kernels import fast_trig, fast_trig64

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)

pytestmark = pytest.mark.skipif(
    onp.finfo(onp.longdouble).nmant < 63, reason="needs an extended-precision long double oracle"
)

NAMES = ("sin", "cos")
N = fast_trig.MIN_SIZE + 3
LIMIT = fast_trig64.LIMIT
BOUND = 0.86
SPECIALS = onp.array(
    [0.0, -0.0, onp.inf, -onp.inf, onp.nan, 5e-324, -5e-324, 1e-310, 2.0**-27, -(2.0**-28)]
    + [1e-8, LIMIT, -LIMIT, onp.nextafter(LIMIT, onp.inf), 1e22, -1e300, 1.7e308]
)


def _ulp_error(name: str, x: onp.ndarray, got: onp.ndarray) -> float:
    """Largest error of `got` in float64 ulps against the long double value, where finite."""
    true = getattr(onp, name)(x.astype(onp.longdouble))
    assert onp.array_equal(onp.isnan(got), onp.isnan(true)), f"{name}: NaNs differ"
    finite = onp.isfinite(true)
    ulp = onp.spacing(onp.abs(true[finite]).astype(onp.float64)).astype(onp.longdouble)
    err = onp.abs(got[finite].astype(onp.longdouble) - true[finite]) / ulp
    return float(onp.max(err)) if err.size else 0.0


def _check_split(name: str, x: onp.ndarray) -> onp.ndarray:
    """mjnp's `name` of `x`: within BOUND ulp up to LIMIT, XLA's own op's value past it."""
    got = onp.asarray(getattr(mjnp, name)(mjnp.asarray(x)))
    inside = ~(onp.abs(x) > LIMIT)
    with onp.errstate(invalid="ignore"):
        assert _ulp_error(name, x[inside], got[inside]) <= BOUND
    if not inside.all():
        chunks = onp.array_split(x[~inside], max(1, (~inside).sum() // 1000))  # small: XLA's op
        xla = onp.concatenate([onp.asarray(getattr(mjnp, name)(mjnp.asarray(c))) for c in chunks])
        onp.testing.assert_array_equal(got[~inside], xla)
    return got


def _moderate(n: int, scale: float, seed: int) -> onp.ndarray:
    return onp.random.default_rng(seed).standard_normal(n) * scale


@pytest.mark.parametrize("name", ["sin", "cos", "tan", "arctan", "arcsin", "arccos"])
def test_which_float64_arrays_take_the_kernels(name):
    fun = mjcore.jit(getattr(mjnp, name))
    large = fun.lower(mjnp.zeros(N, mjnp.float64)).as_text()
    small = fun.lower(mjnp.zeros(fast_trig.MIN_SIZE - 1, mjnp.float64)).as_text()
    assert fast_trig.uses_fast_trig(onp.dtype(onp.float64), N, "stablehlo.sine")
    assert "stablehlo.if" not in small  # XLA's op alone
    # sin and cos: the kernel, with XLA's op behind the guard; the others keep XLA's op.
    assert ("stablehlo.if" in large) == (name in NAMES), name


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("scale", [1.0, 1e2, 1e5])
def test_within_bound(name, scale):
    x = onp.clip(_moderate(N, scale, 0), -LIMIT, LIMIT)
    assert _ulp_error(name, x, onp.asarray(getattr(mjnp, name)(mjnp.asarray(x)))) <= BOUND


@pytest.mark.parametrize("name", NAMES)
def test_next_to_multiples_of_pi_over_2(name):
    # The doubles nearest k pi/2 and their neighbours: the reduction's worst cancellations.
    k = onp.concatenate([onp.arange(1, 100_000), onp.arange(660_000, 667_000)])
    centre = (k * (onp.longdouble(onp.pi) / 2)).astype(onp.float64)
    x = onp.concatenate([centre, onp.nextafter(centre, 0), onp.nextafter(centre, onp.inf)])
    x = onp.concatenate([x, -x])
    x = x[onp.abs(x) <= LIMIT]
    assert _ulp_error(name, x, onp.asarray(getattr(mjnp, name)(mjnp.asarray(x)))) <= BOUND


@pytest.mark.parametrize("name", NAMES)
def test_specials_and_huge_values(name):
    x = _moderate(N, 10.0, 1)
    x[: len(SPECIALS)] = SPECIALS  # some past LIMIT: the guard's true branch
    with onp.errstate(invalid="ignore"):
        got = _check_split(name, x)
        ref = getattr(onp, name)(SPECIALS)
    onp.testing.assert_array_equal(got[: len(SPECIALS)], ref)
    assert list(onp.signbit(got[:2])) == list(onp.signbit(ref[:2]))
    if name == "sin":  # subnormals and tiny values come back as they are
        onp.testing.assert_array_equal(got[5:10], x[5:10])


@given(bits=st.integers(0, 2**64 - 1), seed=st.integers(0, 2**31 - 1), name=st.sampled_from(NAMES))
@settings(max_examples=6, deadline=None)
def test_random_bit_patterns(bits, seed, name):
    # Every exponent, NaN payloads, infinities; most of them past LIMIT (XLA's op).
    x = onp.random.default_rng(seed).integers(0, 2**64, N, dtype=onp.uint64, endpoint=False)
    x[0] = bits
    _check_split(name, x.view(onp.float64))


@given(seed=st.integers(0, 2**31 - 1), name=st.sampled_from(NAMES))
@settings(max_examples=6, deadline=None)
def test_random_values_within_the_limit(seed, name):
    # Uniform bit patterns of magnitudes 2**-30 to LIMIT: every binade the kernels handle.
    rng = onp.random.default_rng(seed)
    lo, hi = onp.array([2.0**-30, LIMIT]).view(onp.int64)
    x = rng.integers(lo, hi, N).view(onp.float64) * rng.choice([-1.0, 1.0], N)
    assert _ulp_error(name, x, onp.asarray(getattr(mjnp, name)(mjnp.asarray(x)))) <= BOUND


@pytest.mark.parametrize("name", NAMES)
def test_eager_jit_vmap_and_fused_agree(name):
    x, y = _moderate(N, 3.0, 2), _moderate(N, 1.0, 3)
    f = getattr(mjnp, name)
    eager = onp.asarray(f(mjnp.asarray(x)))
    onp.testing.assert_array_equal(onp.asarray(mjcore.jit(f)(mjnp.asarray(x))), eager)
    m = N - N % 4
    rows = mjcore.vmap(f)(mjnp.asarray(x[:m].reshape(4, -1)))
    onp.testing.assert_array_equal(onp.asarray(rows).ravel(), eager[:m])
    fused = mjcore.jit(lambda a, b: mjnp.tanh(f(a) * b + 0.5 * a))(x, y)
    onp.testing.assert_allclose(
        onp.asarray(fused), onp.tanh(eager * y + 0.5 * x), rtol=1e-14, atol=1e-15
    )


@pytest.mark.parametrize("name", NAMES)
def test_gradient_against_jax(name):
    x = _moderate(N, 3.0, 4)

    def loss(xp):
        return lambda v: xp.sum(getattr(xp, name)(v) * v)

    ours = onp.asarray(mjcore.grad(loss(mjnp))(mjnp.asarray(x)))
    theirs = onp.asarray(jax.grad(loss(jnp))(jnp.asarray(x)))
    onp.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-15)
