"""Special values of complex transcendental functions and of `sign`, against NumPy (which
follows C99 Annex G, as the Array API standard does), eagerly and under `jit`."""

from __future__ import annotations

import itertools
import warnings

import numpy
import pytest

import mjcore
import mjnp

INF, NAN = numpy.inf, numpy.nan
PARTS = [0.0, -0.0, 1.5, -1.5, 2.0, -3.0, INF, -INF, NAN]  # cos(2) < 0, sin(-3) < 0
GRID = numpy.array([complex(a, b) for a, b in itertools.product(PARTS, PARTS)])

# expm1 is left out: NumPy's complex expm1 is not C99's at infinities (see conformance/xfails.txt).
FUNCTIONS = (
    "exp log log1p sqrt sin cos tan sinh cosh tanh asin acos atan asinh acosh atanh sign".split()
)


def _same_part(got: float, want: float, other_is_nan: bool) -> bool:
    if numpy.isnan(want):
        return bool(numpy.isnan(got))
    if numpy.isfinite(want) and want != 0:
        rtol = 1e-5 if got.dtype == numpy.float32 else 1e-13
        return bool(abs(got - want) <= rtol * abs(want))
    if got != want and not (numpy.isinf(want) and other_is_nan and got == -want):
        return False
    # C99 leaves the sign of a zero or infinite part unspecified when the other part is NaN
    # (e.g. ccosh(+0 + i inf) = NaN +- i0); everywhere else signed zeros must agree.
    return other_is_nan or numpy.signbit(got) == numpy.signbit(want)


def _mismatches(x: numpy.ndarray, got: numpy.ndarray, want: numpy.ndarray) -> list[str]:
    bad = []
    for xi, g, w in zip(x, got, want, strict=True):
        re_ok = _same_part(g.real, w.real, numpy.isnan(w.imag))
        im_ok = _same_part(g.imag, w.imag, numpy.isnan(w.real))
        if not (re_ok and im_ok):
            bad.append(f"{xi!r}: mjnp {g!r}, NumPy {w!r}")
    return bad


def _numpy(name: str, x: numpy.ndarray) -> numpy.ndarray:
    with warnings.catch_warnings(), numpy.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return getattr(numpy, name)(x)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", FUNCTIONS)
def test_special_values_match_numpy(name, dtype):
    x = GRID.astype(dtype)
    want = _numpy(name, x)
    fun = getattr(mjnp, name)
    eager = numpy.asarray(fun(mjnp.asarray(x)))
    assert eager.dtype == want.dtype
    assert _mismatches(x, eager, want) == []
    jitted = numpy.asarray(mjcore.jit(fun)(x))
    assert _mismatches(x, jitted, want) == []


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sign_of_real_zero_is_positive(dtype):
    x = numpy.array([-0.0, 0.0, -2.5, 3.0, -INF, INF, NAN], dtype)
    for got in (mjnp.sign(mjnp.asarray(x)), mjcore.jit(mjnp.sign)(x)):
        got = numpy.asarray(got)
        numpy.testing.assert_array_equal(got, numpy.sign(x))
        assert not numpy.signbit(got[:2]).any()


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64"])
def test_sign_of_integers_is_unchanged(dtype):
    x = numpy.array([0, 3, 100], dtype)
    numpy.testing.assert_array_equal(mjnp.sign(mjnp.asarray(x)), numpy.sign(x))


@pytest.mark.parametrize("name", ["exp", "sqrt", "sin", "atanh", "log"])
def test_derivatives_at_ordinary_points_are_unchanged(name):
    """The special-value selects leave jvp (its own rule) and values at finite points alone."""
    z = numpy.array([0.3 + 0.4j, -0.7 + 0.2j])
    fun = getattr(mjnp, name)
    y, y_dot = mjcore.jvp(fun, (z,), (numpy.ones_like(z),))
    numpy.testing.assert_allclose(y, _numpy(name, z), rtol=1e-14)
    h = 1e-7
    numeric = (_numpy(name, z + h) - _numpy(name, z - h)) / (2 * h)
    numpy.testing.assert_allclose(y_dot, numeric, rtol=1e-6)
