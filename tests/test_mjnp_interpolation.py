"""mjnp/_interpolation.py (interp) against NumPy, including its NaN, infinity, repeated-point
and periodic rules; under jit and vmap; derivatives in x and fp (JAX x64 as the oracle)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mjcore
import mjnp
from mjcore.test_util import check_grads
from tests.differential_registry import differential
from tests.mjnp_testing import assert_matches, check_against_numpy

FEW = settings(max_examples=6, deadline=None, derandomize=True)
SOME = settings(max_examples=12, deadline=None, derandomize=True)
_SPECIAL = np.array([np.nan, np.inf, -np.inf])


def _points(rng: np.random.Generator, n: int) -> np.ndarray:
    """Non-decreasing sample points in [-3, 3], with repeats."""
    return np.sort(rng.integers(-6, 7, size=n) / 2)


@st.composite
def _interp_args(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    # A few sizes and shapes only: each new one compiles every op of interp again.
    n = draw(st.sampled_from([1, 5]))
    xp = _points(rng, n)
    fp = rng.integers(-8, 9, size=n) / 2
    fp_dtype = draw(st.sampled_from(["float64", "float32", "int32", "complex128", "bool"]))
    if fp_dtype[0] in "fc" and draw(st.booleans()):  # NumPy's fallbacks for infinite values
        fp = np.where(rng.random(n) < 0.3, rng.choice(_SPECIAL[1:], n), fp)
    if fp_dtype == "complex128":
        fp = fp + 1j * rng.integers(-4, 5, size=n)
    elif fp_dtype == "bool":
        fp = fp > 0
    fp = fp.astype(fp_dtype)
    # x: on and between the sample points, outside them, NaN and infinities.
    shape = draw(st.sampled_from([(), (0,), (2, 3)]))
    x = rng.integers(-9, 10, size=shape) / 2 + rng.choice([0, 0.25], size=shape)
    x = np.where(rng.random(shape) < 0.15, rng.choice(_SPECIAL, size=shape), x)
    x = x.astype(draw(st.sampled_from(["float64", "float32"])))
    kwargs = {}
    if draw(st.booleans()):
        kwargs["left"] = draw(st.sampled_from([-10.0, 7, np.nan]))
        kwargs["right"] = draw(st.sampled_from([10.0, -7]))
    if fp_dtype == "complex128" and "left" in kwargs and draw(st.booleans()):
        kwargs["left"] = 3 - 2j
    return x, xp, fp, kwargs


@differential("interp")
@SOME
@given(args=_interp_args())
def test_interp_matches_numpy(args):
    x, xp, fp, kwargs = args
    check_against_numpy(mjnp.interp, np.interp, x, xp, fp, **kwargs)


@differential("interp")
@FEW
@given(args=_interp_args(), period=st.sampled_from([2.5, -3.0, 1]), seed=st.integers(0, 99))
def test_periodic_interp_matches_numpy(args, period, seed):
    x, xp, fp, _ = args
    x = np.where(np.isfinite(x), x, 0.5)  # NumPy's x % period of infinities warns and is NaN
    # Sample points distinct modulo the period (NumPy's unstable argsort orders repeats
    # arbitrarily), spread over several periods.
    rng = np.random.default_rng(seed)
    steps = rng.choice(10, size=xp.shape[0], replace=False)
    xp = steps * abs(period) / 10 + rng.integers(-1, 2, size=xp.shape[0]) * abs(period)
    check_against_numpy(
        lambda x: mjnp.interp(x, xp, fp, period=period),
        lambda x: np.interp(x, xp, fp, period=period),
        x,
    )


@pytest.mark.parametrize(
    ("args", "kwargs", "error"),
    [
        ((1.0, [], []), {}, ValueError),
        ((1.0, [1.0, 2.0], [1.0, 2.0, 3.0]), {}, ValueError),
        ((1.0, [[1.0, 2.0]], [[1.0, 2.0]]), {}, ValueError),
        ((1.0, 1.0, 1.0), {}, ValueError),
        ((1.0, [1.0, 2.0], [1.0, 2.0]), {"period": 0}, ValueError),
        ((2 + 1j, [1.0, 2.0], [1.0, 2.0]), {}, TypeError),
        ((1.0, [1.0, 2.0], [1.0, 2.0]), {"left": 1j}, TypeError),
    ],
)
def test_errors_are_numpys(args, kwargs, error):
    with pytest.raises(error):
        np.interp(*args, **kwargs)
    with pytest.raises(error, match="mjnp.interp"):
        mjnp.interp(*args, **kwargs)


_XP = np.array([-1.0, 0.0, 0.5, 2.0, 2.5])
_FP = np.array([1.0, -1.0, 0.5, 3.0, 2.0])


def test_jit_matches_eager_and_vmap_matches_loop():
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 3, (4, 6))
    fps = rng.standard_normal((4, 5))

    def fun(x, fp):
        return mjnp.interp(x, _XP, fp, left=-5.0)

    assert_matches(mjcore.jit(fun)(x[0], fps[0]), np.interp(x[0], _XP, fps[0], left=-5.0))
    for in_axes in ((0, 0), (0, None), (None, 0)):
        args = [a if ax == 0 else a[0] for a, ax in zip((x, fps), in_axes, strict=True)]
        batched = mjcore.jit(mjcore.vmap(fun, in_axes=in_axes))(*args)
        loop = [
            np.interp(x[i if in_axes[0] == 0 else 0], _XP, fps[i if in_axes[1] == 0 else 0], -5.0)
            for i in range(4)
        ]
        np.testing.assert_allclose(batched, np.stack(loop), rtol=1e-12)
    period = mjcore.jit(lambda x, fp: mjnp.interp(x, _XP, fp, period=2.0))(x[0], fps[0])
    np.testing.assert_allclose(period, np.interp(x[0], _XP, fps[0], period=2.0), rtol=1e-12)


def test_derivatives_check_and_agree_with_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    # Off the sample points, where interp is smooth in x; inside and outside the range.
    x = np.array([-1.7, -0.6, 0.3, 1.1, 2.2, 3.1])
    check_grads(lambda x, fp: mjnp.interp(x, _XP, fp), (x, _FP), order=1, modes=("fwd", "rev"))
    check_grads(lambda xp: mjnp.interp(x, xp, _FP), (_XP,), order=1, modes=("fwd", "rev"))
    w = np.random.default_rng(1).standard_normal(x.shape)

    def loss(np_, x, fp):
        return np_.sum(np_.interp(x, np_.asarray(_XP), fp, left=-2.0) * w)

    ours = mjcore.grad(lambda x, fp: loss(mjnp, x, fp), argnums=(0, 1))(x, _FP)
    theirs = jax.grad(lambda x, fp: loss(jax.numpy, x, fp), argnums=(0, 1))(x, _FP)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_derivative_at_a_sample_point_is_the_right_slope_as_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    ours = mjcore.grad(lambda x: mjnp.interp(x, _XP, _FP))(0.5)
    theirs = jax.grad(lambda x: jax.numpy.interp(x, _XP, _FP))(0.5)
    np.testing.assert_allclose(ours, theirs)
    assert np.isclose(ours, (3.0 - 0.5) / 1.5)


def test_repeated_points_give_finite_derivatives():
    xp = np.array([0.0, 1.0, 1.0, 2.0])
    fp = np.array([0.0, 1.0, 3.0, 4.0])
    grads = mjcore.grad(lambda fp: mjnp.sum(mjnp.interp(np.array([0.5, 1.0, 1.5, 2.0]), xp, fp)))(
        fp
    )
    assert np.all(np.isfinite(grads))
