"""mjnp/_floating_point.py, _mathematical.py, _logic.py, _bit_packing.py and the poly*
functions of _polynomials.py against NumPy: values, dtypes, shapes and errors on drawn inputs;
jit vs eager; vmap vs a loop; derivatives by finite differences and against JAX (x64)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mjcore
import mjnp
from mjcore.test_util import check_grads
from tests.differential_registry import differential
from tests.mjnp_testing import (
    REAL_DTYPES,
    SETTINGS,
    arrays,
    assert_matches,
    check_against_numpy,
    shapes,
)

jax.config.update("jax_enable_x64", True)
# NumPy warns on the overflow and invalid values these tests feed it on purpose.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
# For the tests whose every example compiles dozens of small eager programs.
SMALL = settings(max_examples=10, deadline=None, derandomize=True)

_FLOATS = ("float16", "float32", "float64")
_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint32")
# NB: no subnormals: XLA's CPU backend flushes them to zero.
_SPECIAL = [0.0, -0.0, 1.5, -2.5, 3.0, -7.0, 0.375, 1e30, -1e-30, np.inf, -np.inf, np.nan, -np.nan]


def _specials(rng, shape, dtype):
    pool = np.array(_SPECIAL).astype(dtype)
    return np.where(
        rng.random(shape) < 0.4, rng.choice(pool, size=shape), rng.normal(size=shape) * 4
    )


def _integers(rng, shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -300), min(info.max, 300) + 1, size=shape)


def _assert_same(actual, expected):
    """Bitwise-identical up to NaN payloads: dtype, shape, values, signed zeros."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape
    np.testing.assert_array_equal(actual, expected)
    if expected.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(actual), np.signbit(expected))


# --- exact functions on special values: eager and under jit ---------------------------------

_UNARY_EXACT = ["spacing", "isposinf", "isneginf", "iscomplex", "isreal", "nan_to_num"]
_BINARY_EXACT = ["copysign", "nextafter", "heaviside"]


@differential(*_UNARY_EXACT)
@pytest.mark.parametrize("name", _UNARY_EXACT)
@SMALL
@given(x=arrays(_FLOATS, domain=_specials))
def test_unary_exact_on_special_values(name, x):
    expected = getattr(np, name)(x)
    _assert_same(getattr(mjnp, name)(x), expected)
    _assert_same(mjcore.jit(getattr(mjnp, name))(x), expected)


@differential(*_BINARY_EXACT)
@pytest.mark.parametrize("name", _BINARY_EXACT)
@SMALL
@given(
    dtype=st.sampled_from(_FLOATS),
    shape_pair=st.sampled_from([((3,), (3,)), ((2, 1), (3,)), ((), (4,)), ((0,), (1,))]),
    seed=st.integers(0, 2**16),
)
def test_binary_exact_on_special_values(name, dtype, shape_pair, seed):
    rng = np.random.default_rng(seed)
    x1, x2 = (_specials(rng, s, np.dtype(dtype)).astype(dtype) for s in shape_pair)
    with np.errstate(all="ignore"):
        expected = getattr(np, name)(x1, x2)
    _assert_same(getattr(mjnp, name)(x1, x2), expected)
    _assert_same(mjcore.jit(getattr(mjnp, name))(x1, x2), expected)


@pytest.mark.parametrize("name", ["frexp", "modf"])
@pytest.mark.parametrize("dtype", _FLOATS + ("int8", "int64", "bool"))
def test_two_output_functions(name, dtype):
    x = np.array(_SPECIAL).astype(dtype) if dtype in _FLOATS else np.arange(-3, 4).astype(dtype)
    expected = getattr(np, name)(x)
    for fun in (getattr(mjnp, name), mjcore.jit(getattr(mjnp, name))):
        for got, want in zip(fun(x), expected, strict=True):
            _assert_same(got, want)


@pytest.mark.parametrize("dtype", _FLOATS)
def test_spacing_on_boundaries(dtype):
    """Signed zeros, subnormals (read from bits), powers of two, +-max, NaNs of either sign;
    float16 follows NumPy's half routine (never negative, finite at -max)."""
    info = np.finfo(dtype)
    tiny, big = info.smallest_subnormal, info.max
    x = np.array([0.0, -0.0, tiny, -tiny, big, -big, 1.0, -1.0, -2.0, np.inf, np.nan, -np.nan])
    x = x.astype(dtype)
    with np.errstate(all="ignore"):
        expected = np.spacing(x)
    _assert_same(mjnp.spacing(x), expected)
    _assert_same(mjcore.jit(mjnp.spacing)(x), expected)


def test_frexp_reads_subnormal_bits():
    x = np.array([5e-324, -1e-310, 2.5e-308])
    for got, want in zip(mjnp.frexp(x), np.frexp(x), strict=True):
        _assert_same(got, want)


@pytest.mark.parametrize("dtype", _FLOATS + ("int16",))
def test_ldexp(dtype):
    x = np.array([0.0, -0.0, 1.5, -2.5, np.inf, -np.inf, np.nan, 1.0, -7.0, 3.0]).astype(dtype)
    k = np.array([3, -10, 2000, -5, 0, 1, 2, 15, 7, -3000])
    with np.errstate(all="ignore"):
        expected = np.ldexp(x, k)
    _assert_same(mjnp.ldexp(x, k), expected)
    _assert_same(mjcore.jit(mjnp.ldexp)(x, k.astype("int32")), np.ldexp(x, k.astype("int32")))
    with pytest.raises(TypeError):
        mjnp.ldexp(x, k.astype("float64"))


@pytest.mark.parametrize("name", ["copysign", "heaviside", "logaddexp", "spacing", "i0"])
def test_complex_input_raises_type_error(name):
    z = np.array([1 + 1j])
    args = (z,) if name in ("spacing", "i0") else (z, z)
    check_against_numpy(getattr(mjnp, name), getattr(np, name), *args)


# --- float functions with tolerances, all dtypes, drawn shapes ------------------------------


@differential("logaddexp", "logaddexp2")
@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
@SMALL
@given(
    x1=arrays(REAL_DTYPES, shape=shapes(max_dims=2), domain=_specials),
    x2=arrays(REAL_DTYPES, shape=st.sampled_from([(), (1,)]), domain=_specials),
)
def test_logaddexp(name, x1, x2):
    check_against_numpy(getattr(mjnp, name), getattr(np, name), x1, x2)


@differential("sinc", "i0", "angle")
@pytest.mark.parametrize("name", ["sinc", "i0", "angle"])
@SMALL
@given(
    x=arrays(REAL_DTYPES + ("complex128",), domain=(-30.0, 30.0)),
)
def test_special_functions(name, x):
    check_against_numpy(getattr(mjnp, name), getattr(np, name), x)


def test_angle_in_degrees():
    z = np.array([1 + 1j, -1 - 1j, 0j, -1 + 0j])
    assert_matches(mjnp.angle(z, deg=True), np.angle(z, deg=True))


# --- integer functions ----------------------------------------------------------------------


@differential("gcd", "lcm")
@pytest.mark.parametrize("name", ["gcd", "lcm"])
@SMALL
@given(
    dtype=st.sampled_from(_INTS + ("bool",)),
    shape=shapes(max_dims=2),
    seed=st.integers(0, 2**16),
)
def test_gcd_lcm(name, dtype, shape, seed):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        x1 = x2 = rng.random(shape) < 0.5
        # NumPy raises its UFuncNoLoopError, a TypeError; mjnp raises TypeError
        with pytest.raises(TypeError):
            getattr(np, name)(x1, x2)
        with pytest.raises(TypeError):
            getattr(mjnp, name)(x1, x2)
        return
    x1, x2 = (_integers(rng, shape, np.dtype(dtype)).astype(dtype) for _ in range(2))
    check_against_numpy(getattr(mjnp, name), getattr(np, name), x1, x2)


def test_gcd_extremes_and_scalars():
    x = np.array([-128, -128, 0, 0, 127], np.int8)
    y = np.array([6, -128, 0, 5, -127], np.int8)
    assert_matches(mjnp.gcd(x, y), np.gcd(x, y))
    assert_matches(mjnp.gcd(12, 18), np.gcd(12, 18))
    assert_matches(mjnp.lcm(np.int64(4), 6), np.lcm(np.int64(4), 6))


@differential("bitwise_count")
@SETTINGS
@given(x=arrays(_INTS + ("bool", "float32"), domain=(-200, 200)))
def test_bitwise_count(x):
    check_against_numpy(mjnp.bitwise_count, np.bitwise_count, x)


# --- packbits / unpackbits ------------------------------------------------------------------


@differential("packbits")
@SETTINGS
@given(
    x=arrays(("bool", "int8", "uint8", "float32"), shape=shapes(max_dims=3, max_side=10)),
    axis_choice=st.integers(-4, 3) | st.none(),
    bitorder=st.sampled_from(["big", "little"]),
)
def test_packbits(x, axis_choice, bitorder):
    check_against_numpy(mjnp.packbits, np.packbits, x, axis=axis_choice, bitorder=bitorder)


@differential("unpackbits")
@SETTINGS
@given(
    x=arrays(("uint8", "int8"), shape=shapes(max_dims=3), domain=(0, 255)),
    axis_choice=st.integers(-3, 2) | st.none(),
    count=st.none() | st.integers(-12, 20),
    bitorder=st.sampled_from(["big", "little"]),
)
def test_unpackbits(x, axis_choice, count, bitorder):
    check_against_numpy(
        mjnp.unpackbits, np.unpackbits, x, axis=axis_choice, count=count, bitorder=bitorder
    )


# --- closeness and equality -----------------------------------------------------------------


@differential("allclose", "isclose")
@SMALL
@given(
    x=arrays(REAL_DTYPES + ("complex128",), shape=shapes(max_dims=2), domain=_specials),
    equal_nan=st.booleans(),
    rtol=st.sampled_from([1e-5, 0.5]),
)
def test_isclose(x, equal_nan, rtol):
    y = np.flip(x) if x.ndim else x
    check_against_numpy(mjnp.isclose, np.isclose, x, y, rtol=rtol, equal_nan=equal_nan)
    assert bool(mjnp.allclose(x, y, rtol=rtol, equal_nan=equal_nan)) == np.allclose(
        x, y, rtol=rtol, equal_nan=equal_nan
    )


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([1.0, np.nan], [1.0, np.nan]),
        ([1, 2], [1, 2]),
        ([1, 2], [1]),
        ([[1, 2], [1, 2]], [1, 2]),
        ([[1, 2], [1, 3]], [1, 2]),
        ([1, 2, 3], [[1, 2]]),
        (3.0, [3.0, 3.0]),
    ],
)
def test_array_equal_and_equiv(a, b):
    a, b = np.array(a), np.array(b)
    for equal_nan in (False, True):
        assert bool(mjnp.array_equal(a, b, equal_nan=equal_nan)) == np.array_equal(
            a, b, equal_nan=equal_nan
        )
    assert bool(mjnp.array_equiv(a, b)) == np.array_equiv(a, b)


def test_type_predicates():
    z, x = np.array([1 + 0j]), np.array([1.0])
    for value in (z, x, 1j, 1.0, [1, 2], mjnp.asarray(z)):
        assert mjnp.iscomplexobj(value) == np.iscomplexobj(np.asarray(value))
        assert mjnp.isrealobj(value) == np.isrealobj(np.asarray(value))
    for value in (1.0, np.float32(1), "a", [1], np.array(1.0), mjnp.asarray(1.0)):
        assert mjnp.isscalar(value) == np.isscalar(value)
    for value in (1.0, [1], mjnp.asarray(1.0), mjnp.asarray([1.0])):
        assert mjnp.iterable(value) == np.iterable(
            np.asarray(value) if hasattr(value, "ndim") else value
        )


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex128", "int8", "bool"])
def test_nan_to_num_with_replacements(dtype):
    x = (
        np.array([np.nan, np.inf, -np.inf, 1.5, -2.0]).astype(dtype)
        if dtype[0] in "fc"
        else (np.array([1, 0, 1]).astype(dtype))
    )
    if dtype == "complex128":
        x = x + 1j * x[::-1]
    for kwargs in ({}, {"nan": -1.0, "posinf": 9.0, "neginf": -9.0}, {"posinf": 1e10}):
        with np.errstate(all="ignore"):
            expected = np.nan_to_num(x, **kwargs)
        _assert_same(mjnp.nan_to_num(x, **kwargs), expected)


def test_real_if_close_is_eager_only():
    for z in (np.array([1 + 1e-16j, 2]), np.array([1 + 1e-3j, 2]), np.array([1.0, 2.0])):
        assert_matches(mjnp.real_if_close(z), np.real_if_close(z))
    with pytest.raises(Exception, match="(?i)concret|bool"):
        mjcore.jit(mjnp.real_if_close)(np.array([1 + 0j]))


# --- unwrap ---------------------------------------------------------------------------------


@differential("unwrap")
@SMALL
@given(
    x=arrays(
        ("float32", "float64", "int64"),
        shape=shapes(min_dims=1, max_dims=2, max_side=6),
        domain=(-20.0, 20.0),
    ),
    period=st.sampled_from([2 * np.pi, 6, 5.5]),
    discont=st.sampled_from([None, 1.0, 4.0]),
)
def test_unwrap(x, period, discont):
    axis = -1 if x.shape[0] % 2 else 0
    check_against_numpy(mjnp.unwrap, np.unwrap, x, discont=discont, axis=axis, period=period)


# --- polynomials ----------------------------------------------------------------------------

_COEFFS = arrays(("int8", "int64", "float32", "float64"), shape=st.sampled_from([(1,), (2,), (4,)]))


@differential("polyadd", "polyder", "polyint", "polymul", "polysub", "polyval")
@SMALL
@given(p=_COEFFS, q=_COEFFS, x=arrays(("float64", "int64", "float32"), shape=shapes(max_dims=2)))
def test_polynomial_arithmetic(p, q, x):
    check_against_numpy(mjnp.polyval, np.polyval, p, x)
    check_against_numpy(mjnp.polyadd, np.polyadd, p, q)
    check_against_numpy(mjnp.polysub, np.polysub, p.astype("float64"), q)
    check_against_numpy(mjnp.polymul, np.polymul, p, q)
    for m in (0, 1, 2):
        check_against_numpy(mjnp.polyder, np.polyder, p, m)
        check_against_numpy(mjnp.polyint, np.polyint, p, m)
    check_against_numpy(mjnp.polyint, np.polyint, p, 2, k=[1.0, 2.0])


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([], [1, 2]),
        (np.array([], np.int8), np.array([0, 0, 1], np.int8)),
        ([0, 0], [0, 1.0]),
        (np.array([3], np.int8), np.array([0, 0], np.int8)),
        ([0, 1, 2], [3, 4, 5]),
    ],
)
def test_polymul_drops_leading_zeros_as_numpy(a, b):
    # NumPy goes through poly1d, which trims leading zeros ([] and all-zero become [0]).
    assert_matches(mjnp.polymul(a, b), np.polymul(a, b))


@pytest.mark.parametrize(
    ("u", "v"),
    [([1.0, -3, 2], [1.0, -1]), ([1.0, 2, 3, 4], [2.0, 1]), ([1.0], [2.0, 1]), ([3, 1], [2])],
)
def test_polydiv(u, v):
    for got, want in zip(mjnp.polydiv(u, v), np.polydiv(u, v), strict=True):
        assert_matches(got, want)


@pytest.mark.parametrize(
    "roots",
    [
        [1.0, 2.0],
        [3],
        np.array([1.5, -2.0], np.float32),
        [1 + 1j, 1 - 1j],
        [1j, 2],
        [[1, 2], [3, 4]],  # a square matrix: its eigenvalues are the roots
        [[0.0, -1.0], [1.0, 0.0]],  # eigenvalues +-1j: a real polynomial
        np.array([[2.0]], np.float32),
    ],
)
def test_poly(roots):
    assert_matches(mjnp.poly(roots), np.poly(roots))


def test_poly_edge_cases():
    assert type(mjnp.poly([])) is float and mjnp.poly([]) == np.poly([]) == 1.0
    with pytest.raises(TypeError, match="mjnp.poly: .* 0-d"):
        mjnp.poly(3.0)
    for bad in (np.zeros((0, 0)), np.zeros((2, 3))):
        with pytest.raises(ValueError, match="mjnp.poly: input must be 1d or non-empty square"):
            mjnp.poly(bad)


# --- transformations ------------------------------------------------------------------------

_BATCHED = {
    "copysign": lambda x: mjnp.copysign(x, -1.0),
    "nextafter": lambda x: mjnp.nextafter(x, 0.0),
    "spacing": mjnp.spacing,
    "frexp": lambda x: mjnp.frexp(x)[0],
    "ldexp": lambda x: mjnp.ldexp(x, 3),
    "modf": lambda x: mjnp.modf(x)[0],
    "heaviside": lambda x: mjnp.heaviside(x, 0.5),
    "gcd": lambda x: mjnp.gcd(mjnp.astype(x, "int32"), 6),
    "logaddexp": lambda x: mjnp.logaddexp(x, 1.0),
    "sinc": mjnp.sinc,
    "i0": mjnp.i0,
    "isclose": lambda x: mjnp.isclose(x, 1.0),
    "allclose": lambda x: mjnp.allclose(x, 1.0),
    "packbits": lambda x: mjnp.packbits(x > 0),
    "unwrap": mjnp.unwrap,
    "polyval": lambda x: mjnp.polyval(x, 2.0),
    "polymul": lambda x: mjnp.polymul(x, x),
    "nan_to_num": mjnp.nan_to_num,
}


@pytest.mark.parametrize("name", sorted(_BATCHED))
def test_vmap_matches_loop_and_jit_matches_eager(name):
    fun = _BATCHED[name]
    xs = np.random.default_rng(0).uniform(-5, 5, (3, 9))
    expected = np.stack([np.asarray(fun(x)) for x in xs])
    # Fused batched programs may round the last bit differently.
    np.testing.assert_allclose(np.asarray(mjcore.vmap(fun)(xs)), expected, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(mjcore.jit(mjcore.vmap(fun))(xs)), expected, rtol=1e-14)


_DIFFERENTIABLE = {
    "copysign": (lambda x: mjnp.copysign(x, -2.0), lambda x: jnp.copysign(x, -2.0)),
    "nextafter": (lambda x: mjnp.nextafter(x, 5.0), None),
    "ldexp": (lambda x: mjnp.ldexp(x, 3), lambda x: jnp.ldexp(x, 3)),
    "frexp": (lambda x: mjnp.frexp(x)[0], lambda x: jnp.frexp(x)[0]),
    "modf": (lambda x: mjnp.modf(x)[0], lambda x: jnp.modf(x)[0]),
    "logaddexp": (lambda x: mjnp.logaddexp(x, 0.3), lambda x: jnp.logaddexp(x, 0.3)),
    "logaddexp2": (lambda x: mjnp.logaddexp2(x, 0.3), lambda x: jnp.logaddexp2(x, 0.3)),
    "sinc": (mjnp.sinc, jnp.sinc),
    "i0": (mjnp.i0, jnp.i0),
    "angle": (lambda x: mjnp.angle(x + 0j), lambda x: jnp.angle(x + 0j)),
    "unwrap": (lambda x: mjnp.unwrap(x * 3), lambda x: jnp.unwrap(x * 3)),
    "nan_to_num": (mjnp.nan_to_num, jnp.nan_to_num),
    "polyval": (lambda x: mjnp.polyval(x, 1.5), lambda x: jnp.polyval(x, 1.5)),
    "polymul": (lambda x: mjnp.polymul(x, x), lambda x: jnp.polymul(x, x)),
    "polyint": (lambda x: mjnp.polyint(x, 2), lambda x: jnp.polyint(x, 2)),
    "polyder": (mjnp.polyder, jnp.polyder),
    "poly": (mjnp.poly, jnp.poly),
}


@pytest.mark.parametrize("name", sorted(_DIFFERENTIABLE))
def test_gradients(name):
    fun, jax_fun = _DIFFERENTIABLE[name]
    x = np.array([0.7, -1.3, 2.2, 9.5])
    check_grads(fun, (x,), order=1, modes=("fwd", "rev"))
    if jax_fun is not None:

        def loss(f, s):
            return lambda v: s.sum(
                s.real(f(v)) * np.arange(1.0, 1 + np.size(f(x))).reshape(np.shape(f(x)))
            )

        expected = jax.grad(loss(jax_fun, jnp))(x)
        np.testing.assert_allclose(
            np.asarray(mjcore.grad(loss(fun, mjnp))(x)), expected, rtol=1e-10
        )


def test_sinc_gradient_at_zero_is_finite():
    assert float(mjcore.grad(mjnp.sinc)(0.0)) == 0.0


@pytest.mark.parametrize(
    "p",
    [
        [1.0, -3, 2],
        [1, 0, 1],
        [0, 0, 1, -6, 11, -6, 0, 0],
        [2.0],
        [0, 0],
        [1, 2, 3, 4, 5.0],
        np.array([2.0], np.float32),  # a constant has float64 roots whatever its dtype
        np.array([0, 3, 0], np.complex64),
    ],
)
def test_roots(p):
    expected = np.roots(p)
    got = mjnp.roots(p)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(np.sort_complex(np.asarray(got)), np.sort_complex(expected))


@pytest.mark.parametrize("deg", [0, 1, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_polyfit(deg, weighted):
    x = np.linspace(0, 1, 10)
    y = np.stack([np.sin(3 * x), np.cos(x)], 1)
    w = x + 1 if weighted else None
    for target in (y[:, 0], y):
        expected = np.polyfit(x, target, deg, w=w)
        np.testing.assert_allclose(
            np.asarray(mjnp.polyfit(x, target, deg, w=w)), expected, rtol=1e-9
        )
    got_full, want_full = (
        mjnp.polyfit(x, y[:, 0], deg, full=True),
        np.polyfit(x, y[:, 0], deg, full=True),
    )
    np.testing.assert_allclose(np.asarray(got_full[1]), want_full[1], rtol=1e-8)
    assert int(got_full[2]) == want_full[2]
    check_grads(lambda t: mjnp.polyfit(x, t, deg), (y[:, 0],), order=1)
    expected_grad = jax.grad(lambda t: jnp.sum(jnp.polyfit(x, t, deg) ** 2))(y[:, 0])
    got_grad = mjcore.grad(lambda t: mjnp.sum(mjnp.polyfit(x, t, deg) ** 2))(y[:, 0])
    np.testing.assert_allclose(np.asarray(got_grad), expected_grad, rtol=1e-8, atol=1e-12)
