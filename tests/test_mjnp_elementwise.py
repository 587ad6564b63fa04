"""mjnp elementwise functions (mjnp/_elementwise.py) against NumPy.

Result dtypes are checked for every dtype pair and Python scalar kind by tracing alone (no
compilation). Values are checked per function over all its dtypes, with Hypothesis drawing
broadcast shapes; these run under `mjcore.jit`, one compilation per signature, and a separate
table runs every function eagerly. Special values (NaN, inf, signed zeros, integer extremes)
have their own tables.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import mjcore
import mjnp
from tests.differential_registry import differential
from tests.mjnp_testing import ALL_DTYPES, SETTINGS, assert_matches

INEXACT = ("float16", "float32", "float64", "complex64", "complex128")
REAL = tuple(d for d in ALL_DTYPES if not d.startswith("complex"))
NUMERIC = tuple(d for d in ALL_DTYPES if d != "bool")
INTEGER = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOAT = ("float16", "float32", "float64")

# --- value domains: (rng, shape, dtype) -> values -------------------------------------------


def _uniform(low: float, high: float) -> Callable[..., np.ndarray]:
    """Uniform reals in [low, high] (complex: both parts); integers from the same range."""

    def domain(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        if dtype.kind == "b":
            return rng.random(shape) < 0.5
        if dtype.kind in "iu":
            lo = max(int(np.ceil(low)), 0 if dtype.kind == "u" else -100)
            return rng.integers(lo, int(np.floor(high)) + 1, size=shape).astype(dtype)
        values = rng.uniform(low, high, size=shape)
        if dtype.kind == "c":
            values = values + 1j * rng.uniform(low, high, size=shape)
        return values.astype(dtype)

    return domain


ANY = _uniform(-3, 3)
POSITIVE = _uniform(0.1, 3)
UNIT = _uniform(-0.9, 0.9)
AT_LEAST_ONE = _uniform(1.05, 3)
SMALL_NONNEGATIVE = _uniform(0, 3)
SHIFTS = _uniform(0, 6)


def _halves(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """Multiples of 1/2, so rounding meets exact ties."""
    return ANY(rng, shape, dtype) if dtype.kind in "biu" else (rng.integers(-8, 9, shape) / 2)


def _nonzero(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """Values without zeros (integer reciprocal of 0 is platform dependent in NumPy)."""
    values = ANY(rng, shape, dtype)
    return np.where(values == 0, np.ones((), dtype), values)


# name -> (dtypes, domain)
UNARY: dict[str, tuple[tuple[str, ...], Any]] = {
    "negative": (NUMERIC, ANY),
    "positive": (NUMERIC, ANY),
    "absolute": (ALL_DTYPES, ANY),
    "fabs": (REAL, ANY),
    "sign": (NUMERIC, ANY),
    "floor": (REAL, ANY),
    "ceil": (REAL, ANY),
    "trunc": (REAL, ANY),
    "rint": (ALL_DTYPES, _halves),
    "round": (ALL_DTYPES, _halves),
    "exp": (ALL_DTYPES, ANY),
    "exp2": (ALL_DTYPES, ANY),
    "expm1": (ALL_DTYPES, ANY),
    "log": (ALL_DTYPES, POSITIVE),
    "log2": (ALL_DTYPES, POSITIVE),
    "log10": (ALL_DTYPES, POSITIVE),
    "log1p": (ALL_DTYPES, POSITIVE),
    "sqrt": (ALL_DTYPES, POSITIVE),
    "cbrt": (REAL, ANY),
    "square": (ALL_DTYPES, ANY),
    "reciprocal": (ALL_DTYPES, _nonzero),
    "sin": (ALL_DTYPES, ANY),
    "cos": (ALL_DTYPES, ANY),
    "tan": (ALL_DTYPES, UNIT),
    "arcsin": (ALL_DTYPES, UNIT),
    "arccos": (ALL_DTYPES, UNIT),
    "arctan": (ALL_DTYPES, ANY),
    "sinh": (ALL_DTYPES, ANY),
    "cosh": (ALL_DTYPES, ANY),
    "tanh": (ALL_DTYPES, ANY),
    "arcsinh": (ALL_DTYPES, ANY),
    "arccosh": (ALL_DTYPES, AT_LEAST_ONE),
    "arctanh": (ALL_DTYPES, UNIT),
    "deg2rad": (REAL, ANY),
    "rad2deg": (REAL, ANY),
    "isnan": (ALL_DTYPES, ANY),
    "isinf": (ALL_DTYPES, ANY),
    "isfinite": (ALL_DTYPES, ANY),
    "signbit": (REAL, ANY),
    "logical_not": (ALL_DTYPES, ANY),
    "invert": (INTEGER + ("bool",), ANY),
    "real": (ALL_DTYPES, ANY),
    "imag": (ALL_DTYPES, ANY),
    "conjugate": (ALL_DTYPES, ANY),
}

# name -> (dtypes, domain of x1, domain of x2)
BINARY: dict[str, tuple[tuple[str, ...], Any, Any]] = {
    "add": (ALL_DTYPES, ANY, ANY),
    "subtract": (NUMERIC, ANY, ANY),
    "multiply": (ALL_DTYPES, ANY, ANY),
    "divide": (ALL_DTYPES, ANY, _nonzero),
    "floor_divide": (REAL, ANY, ANY),
    "remainder": (REAL, ANY, ANY),
    "fmod": (REAL, ANY, ANY),
    "power": (ALL_DTYPES, POSITIVE, SMALL_NONNEGATIVE),
    "float_power": (ALL_DTYPES, POSITIVE, ANY),
    "maximum": (ALL_DTYPES, ANY, ANY),
    "minimum": (ALL_DTYPES, ANY, ANY),
    "fmax": (ALL_DTYPES, ANY, ANY),
    "fmin": (ALL_DTYPES, ANY, ANY),
    "arctan2": (REAL, ANY, ANY),
    "hypot": (REAL, ANY, ANY),
    "equal": (ALL_DTYPES, _halves, _halves),
    "not_equal": (ALL_DTYPES, _halves, _halves),
    "less": (ALL_DTYPES, _halves, _halves),
    "less_equal": (ALL_DTYPES, _halves, _halves),
    "greater": (ALL_DTYPES, _halves, _halves),
    "greater_equal": (ALL_DTYPES, _halves, _halves),
    "logical_and": (ALL_DTYPES, _halves, _halves),
    "logical_or": (ALL_DTYPES, _halves, _halves),
    "logical_xor": (ALL_DTYPES, _halves, _halves),
    "bitwise_and": (INTEGER + ("bool",), ANY, ANY),
    "bitwise_or": (INTEGER + ("bool",), ANY, ANY),
    "bitwise_xor": (INTEGER + ("bool",), ANY, ANY),
    "left_shift": (INTEGER + ("bool",), ANY, SHIFTS),
    "right_shift": (INTEGER + ("bool",), ANY, SHIFTS),
}

# One jitted function per name, so repeated signatures reuse their compilation.
_JITTED: dict[str, Callable[..., Any]] = {}


def _jitted(name: str) -> Callable[..., Any]:
    if name not in _JITTED:
        _JITTED[name] = mjcore.jit(getattr(mjnp, name))
    return _JITTED[name]


def _numpy(name: str, *args: Any) -> Any:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return getattr(np, name)(*args)


def _sample(domain: Any, seed: int, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    dt = np.dtype(dtype)
    return np.asarray(domain(np.random.default_rng(seed), shape, dt)).astype(dt)


# --- result dtypes, by tracing --------------------------------------------------------------


def _traced_dtype(fun: Callable[..., Any], *args: Any) -> np.dtype:
    return mjcore.make_jaxpr(fun)(*args).out_avals[0].dtype


def _assert_same_dtype_or_error(
    np_fun: Callable[..., Any], mj_fun: Callable[..., Any], *args: Any
) -> None:
    """mjnp's traced result dtype is NumPy's, or both raise the same exception type."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            expected = np.asarray(np_fun(*args)).dtype
    except Exception as err:  # NumPy's exception type is the expectation
        with pytest.raises(_builtin_base(type(err))):
            _traced_dtype(mj_fun, *args)
        return
    with np.errstate(over="ignore"):  # 1e300 becomes inf in float16, as in NumPy
        assert _traced_dtype(mj_fun, *args) == expected


def _builtin_base(error: type[Exception]) -> type[Exception]:
    """NumPy's own exception classes (UFuncTypeError, ...) as the builtin they subclass."""
    return next(t for t in error.__mro__ if t.__module__ == "builtins")


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_dtype_for_every_dtype_pair(name):
    np_fun, mj_fun = getattr(np, name), getattr(mjnp, name)
    ones = {dt: np.ones(2, dt) for dt in ALL_DTYPES}
    for d1 in ALL_DTYPES:
        for d2 in ALL_DTYPES:
            _assert_same_dtype_or_error(np_fun, mj_fun, ones[d1], ones[d2])


# Python scalars of every kind, small and out of range for small integer dtypes.
PYTHON_SCALARS = (True, 1, -1, 300, 2**40, 1.5, 1e300, 1j)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_dtype_with_python_scalars(name):
    np_fun, mj_fun = getattr(np, name), getattr(mjnp, name)
    for dtype in ALL_DTYPES:
        x = np.ones(2, dtype)
        for s in PYTHON_SCALARS:
            _assert_same_dtype_or_error(lambda a, s=s: np_fun(a, s), lambda a, s=s: mj_fun(a, s), x)
            _assert_same_dtype_or_error(lambda a, s=s: np_fun(s, a), lambda a, s=s: mj_fun(s, a), x)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_dtype_for_every_dtype(name):
    np_fun, mj_fun = getattr(np, name), getattr(mjnp, name)
    for dtype in ALL_DTYPES:
        _assert_same_dtype_or_error(np_fun, mj_fun, np.ones(2, dtype))
    for s in PYTHON_SCALARS:
        if name in ("real", "imag") and s is True:
            continue  # NumPy takes `True.real`, the Python int 1, before converting
        _assert_same_dtype_or_error(lambda s=s: np_fun(s), lambda s=s: mj_fun(s))


def test_python_scalars_alone_give_strong_numpy_dtypes():
    for s in (True, 1, 1.5, 1j):
        out = mjnp.add(s, s)
        assert out.dtype == np.add(s, s).dtype
        assert not out.weak_type
    assert mjnp.sin(True).dtype == np.float16
    assert mjnp.sin(1).dtype == np.float64
    # A strong float64 result makes float32 arrays float64, as NumPy's scalars do.
    assert (mjnp.sin(1.0) * mjnp.ones(2, np.float32)).dtype == np.float64


# --- values: all dtypes, broadcast shapes (under jit) ---------------------------------------

_SHAPES_1 = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)
_SHAPES_2 = hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, min_side=0, max_side=3)
# Each name runs on its own, so it gets a few drawn shapes rather than the whole budget.
PER_NAME_SETTINGS = settings(SETTINGS, max_examples=5)


def _jitted_over_list(name: str) -> Callable[..., Any]:
    """`name` applied to each argument tuple of a list, as one compiled program."""
    fun = getattr(mjnp, name)
    return mjcore.jit(lambda arg_tuples: [fun(*args) for args in arg_tuples])


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_for_every_dtype(name):
    dtypes, domain = UNARY[name]
    inputs = [(_sample(domain, i, (2, 3), dtype),) for i, dtype in enumerate(dtypes)]
    for args, out in zip(inputs, _jitted_over_list(name)(inputs), strict=True):
        assert_matches(out, _numpy(name, *args))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_values_for_every_dtype(name):
    dtypes, domain1, domain2 = BINARY[name]
    inputs = [
        (_sample(domain1, i, (2, 3), dtype), _sample(domain2, i + 100, (3,), dtype))
        for i, dtype in enumerate(dtypes)
    ]
    for args, out in zip(inputs, _jitted_over_list(name)(inputs), strict=True):
        assert_matches(out, _numpy(name, *args))


# Parametrized (not drawn) over the names, so every function runs, with a few examples each.
@differential(*UNARY)
@pytest.mark.parametrize("name", sorted(UNARY))
@PER_NAME_SETTINGS
@given(
    shape=_SHAPES_1,
    seed=st.integers(0, 2**16),
    data=st.data(),
)
def test_unary_values_on_drawn_shapes(name, shape, seed, data):
    dtypes, domain = UNARY[name]
    x = _sample(domain, seed, shape, data.draw(st.sampled_from(dtypes), label="dtype"))
    assert_matches(_jitted(name)(x), _numpy(name, x))


@differential(*BINARY)
@pytest.mark.parametrize("name", sorted(BINARY))
@PER_NAME_SETTINGS
@given(
    shapes=_SHAPES_2,
    seed=st.integers(0, 2**16),
    data=st.data(),
)
def test_binary_values_broadcast_like_numpy(name, shapes, seed, data):
    dtypes, domain1, domain2 = BINARY[name]
    d1 = data.draw(st.sampled_from(dtypes), label="dtype1")
    d2 = data.draw(st.sampled_from(dtypes), label="dtype2")
    s1, s2 = shapes.input_shapes
    x1, x2 = _sample(domain1, seed, s1, d1), _sample(domain2, seed + 1, s2, d2)
    try:
        expected = _numpy(name, x1, x2)
    except Exception as err:  # e.g. int8 with uint64 promotes to float64: no bitwise loop
        with pytest.raises(_builtin_base(type(err))):
            _jitted(name)(x1, x2)
        return
    assert_matches(_jitted(name)(x1, x2), expected)


@SETTINGS
@given(
    name=st.sampled_from(sorted(BINARY)),
    dtype=st.sampled_from(ALL_DTYPES),
    scalar=st.sampled_from((True, 0, 1, 2, -3, 0.5, -2.25, 1.5j)),
    reflected=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_binary_values_with_weak_python_scalars(name, dtype, scalar, reflected, seed):
    dtypes, domain1, _ = BINARY[name]
    x = _sample(domain1 if dtype in dtypes else ANY, seed, (3,), dtype)
    args = (scalar, x) if reflected else (x, scalar)
    try:
        expected = _numpy(name, *args)
    except Exception as err:  # NumPy's exception type is the expectation
        with pytest.raises(type(err)):
            getattr(mjnp, name)(*args)
        return
    if name in ("power", "float_power") and np.any(np.isnan(expected)):
        return  # negative bases to fractional powers: NaN either way, not worth a special case
    fun = _jitted_with_scalar(name, scalar, reflected)
    assert_matches(fun(x), expected)


_SCALAR_JITS: dict[tuple[str, Any, bool], Callable[..., Any]] = {}


def _jitted_with_scalar(name: str, scalar: Any, reflected: bool) -> Callable[..., Any]:
    """The function with the Python scalar closed over, so it stays weak (and range-checked)."""
    key = (name, type(scalar), scalar, reflected)
    if key not in _SCALAR_JITS:
        fun = getattr(mjnp, name)
        _SCALAR_JITS[key] = mjcore.jit(
            (lambda a: fun(scalar, a)) if reflected else (lambda a: fun(a, scalar))
        )
    return _SCALAR_JITS[key]


# --- eager evaluation -------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_eager(name):
    dtypes, domain = UNARY[name]
    dtype = "float64" if "float64" in dtypes else dtypes[-1]
    x = _sample(domain, 0, (2, 3), dtype)
    assert_matches(getattr(mjnp, name)(x), _numpy(name, x))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_eager(name):
    dtypes, domain1, domain2 = BINARY[name]
    dtype = "float64" if "float64" in dtypes else "int32"
    x1, x2 = _sample(domain1, 0, (2, 3), dtype), _sample(domain2, 1, (1, 3), dtype)
    assert_matches(getattr(mjnp, name)(x1, x2), _numpy(name, x1, x2))


# --- special values -----------------------------------------------------------------------

# NB: no subnormals: XLA's CPU backend flushes them to zero.
_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -7.0, 0.1, 7.5, -3.25]
_SPECIAL += [1e300, -1e300, np.inf, -np.inf, np.nan]


@pytest.mark.parametrize("dtype", FLOAT)
@pytest.mark.parametrize(
    "name",
    ["floor_divide", "remainder", "fmod", "power", "arctan2", "hypot", "maximum", "minimum"]
    + ["fmax", "fmin", "divide", "less", "equal"],
)
def test_binary_special_float_values(name, dtype):
    with np.errstate(over="ignore"):
        values = np.array(_SPECIAL, dtype)  # 1e300 is inf in float16 and float32
    x1, x2 = np.meshgrid(values, values)
    assert_matches(_jitted(name)(x1, x2), _numpy(name, x1, x2))


@pytest.mark.parametrize(
    "name",
    ["floor", "ceil", "trunc", "rint", "round", "sign", "absolute", "isnan", "isinf"]
    + ["isfinite", "signbit", "sqrt", "exp", "log", "tanh", "square", "reciprocal"],
)
def test_unary_special_float_values(name):
    values = np.array([v for v in _SPECIAL if not np.isnan(v)], np.float64)
    assert_matches(_jitted(name)(values), _numpy(name, values))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_signbit_reads_the_bit_of_nans_and_zeros(dtype):
    values = np.array([np.nan, -np.nan, 0.0, -0.0, -np.inf, 1.0], dtype)
    assert_matches(_jitted("signbit")(values), np.signbit(values))


_COMPLEX_SPECIAL = [complex(r, i) for r in (0.0, 1.0, -1.0, -2.5) for i in (0.0, 1.0, 2.5)]
_COMPLEX_SPECIAL += [complex(np.nan, 1.0), complex(1.0, np.nan), complex(np.nan, np.nan)]


@pytest.mark.parametrize(
    "name",
    ["maximum", "minimum", "fmax", "fmin", "less", "less_equal", "greater", "greater_equal"],
)
def test_complex_order_is_lexicographic_with_nans(name):
    values = np.array(_COMPLEX_SPECIAL)
    x1, x2 = np.meshgrid(values, values)
    assert_matches(_jitted(name)(x1, x2), _numpy(name, x1, x2))


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
def test_complex_float_tests(name):
    values = np.array(_COMPLEX_SPECIAL + [complex(np.inf, 0), complex(0, -np.inf)])
    assert_matches(_jitted(name)(values), _numpy(name, values))


@pytest.mark.parametrize("dtype", INTEGER)
@pytest.mark.parametrize(
    "name",
    ["floor_divide", "remainder", "fmod", "add", "subtract", "multiply", "maximum"]
    + ["bitwise_and", "bitwise_xor", "left_shift", "right_shift"],
)
def test_integer_extremes(name, dtype):
    """Wrap-around, division by zero (0), INT_MIN // -1, shifts past the bit width."""
    info = np.iinfo(dtype)
    candidates = {int(info.min), int(info.min) + 1, -7, -3, -1, 0, 1, 3, 7, 8, 63, int(info.max)}
    values = np.array(sorted(v for v in candidates if info.min <= v <= info.max), dtype)
    x1, x2 = np.meshgrid(values, values)
    if name in ("left_shift", "right_shift"):
        x2 = np.where(x2 < 0, 0, x2).astype(dtype)  # NB: negative shifts are undefined in NumPy
    assert_matches(_jitted(name)(x1, x2), _numpy(name, x1, x2))


@pytest.mark.parametrize("decimals", [-2, -1, 0, 1, 2, 3])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex128", "int32"])
def test_round_decimals(dtype, decimals):
    values = [0.125, 0.375, 1.5, 2.5, -2.5, 1234.5678, -0.05, 15.0, -250.0]
    x = np.array(values).astype(dtype)
    with np.errstate(over="ignore"):  # float16 overflows when scaled, in NumPy and mjnp alike
        assert_matches(mjnp.round(x, decimals), np.round(x, decimals))
        assert_matches(mjnp.around(x, decimals=decimals), np.around(x, decimals=decimals))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "float32"])
def test_power_with_python_int_exponents(dtype):
    x = np.array([0, 1, 2, 3], dtype)
    for exponent in (0, 1, 2, 3, 7):
        assert_matches(mjnp.power(x, exponent), np.power(x, exponent))
    if dtype == "float32":
        assert_matches(mjnp.power(x + 1, -2), np.power(x + 1, -2))


# --- errors -------------------------------------------------------------------------------


def test_integer_to_negative_power_raises_eagerly():
    x = np.array([1, 2, 3])
    with pytest.raises(ValueError, match="negative integer powers"):
        mjnp.power(x, -1)
    with pytest.raises(ValueError, match="negative integer powers"):
        mjnp.power(x, np.array([1, -1, 2]))


def test_integer_to_negative_power_under_tracing_is_zero():
    # NB: documented difference: a traced exponent cannot be checked, XLA gives 0 (or ±1).
    out = mjcore.jit(mjnp.power)(np.array([1, -1, 2, 3]), np.array([-1, -3, -1, -2]))
    np.testing.assert_array_equal(out, [1, -1, 0, 0])


@pytest.mark.parametrize(
    ("fun", "args", "error", "match"),
    [
        (mjnp.add, (np.ones(2), np.ones(3)), ValueError, r"mjnp.add: .* shapes \(2,\) \(3,\)"),
        (mjnp.remainder, (np.ones(2), np.ones((3, 1, 3))), ValueError, "mjnp.remainder"),
        (mjnp.logical_or, (np.ones(2), np.ones(3)), ValueError, "mjnp.logical_or"),
        (mjnp.where, (True, np.ones(2), np.ones(3)), ValueError, r"\(\) \(2,\) \(3,\)"),
        (mjnp.add, (np.ones(2, np.uint8), 300), OverflowError, "300 out of bounds for uint8"),
        (mjnp.multiply, (-1, np.ones(2, np.uint16)), OverflowError, "-1 out of bounds"),
        (mjnp.subtract, (np.ones(2, bool), True), TypeError, "boolean subtract"),
        (mjnp.negative, (np.ones(2, bool),), TypeError, "boolean negative"),
        (mjnp.floor_divide, (np.ones(2, complex), 1), TypeError, "mjnp.floor_divide"),
        (mjnp.bitwise_and, (np.ones(2), 1), TypeError, "mjnp.bitwise_and"),
        (mjnp.arctan2, (np.ones(2, complex), 1), TypeError, "mjnp.arctan2"),
        (mjnp.cbrt, (np.ones(2, complex),), TypeError, "mjnp.cbrt"),
        (mjnp.add, ("a", np.ones(2)), TypeError, "mjnp.add: argument 0 of type str"),
        (mjnp.sin, (None,), TypeError, "mjnp.sin: argument 0 of type NoneType"),
        (mjnp.add, (np.ones(2), object()), TypeError, "mjnp.add: argument 1 of type object"),
        (mjnp.add, ([[1], [1, 2]], 1), ValueError, "inhomogeneous"),
        (mjnp.add, (np.array(["a"]), 1), TypeError, "not supported"),
    ],
    ids=lambda v: getattr(v, "__name__", None) if callable(v) else None,
)
def test_invalid_input_raises_numpy_exception_types(fun, args, error, match):
    with pytest.raises(error, match=match):
        fun(*args)


def test_comparisons_with_out_of_range_python_ints_are_exact():
    x = np.array([0, 5, 255], np.uint8)
    for name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
        for s in (300, -1, 2**70):
            assert_matches(getattr(mjnp, name)(x, s), _numpy(name, x, s))
            assert_matches(getattr(mjnp, name)(s, x), _numpy(name, s, x))


# --- where and clip -----------------------------------------------------------------------


@differential("where")
@SETTINGS
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, min_side=0, max_side=3),
    dtypes=st.tuples(*[st.sampled_from(("bool", "int8", "uint8", "float32", "complex64"))] * 3),
    seed=st.integers(0, 2**16),
)
def test_where_broadcasts_and_promotes(shapes, dtypes, seed):
    cond, x, y = (
        _sample(ANY, seed + i, s, d)
        for i, (s, d) in enumerate(zip(shapes.input_shapes, dtypes, strict=True))
    )
    assert_matches(_jitted("where")(cond, x, y), np.where(cond, x, y))


def test_where_with_python_scalars():
    cond = np.array([True, False, True])
    x = np.array([1, 2, 3], np.int8)
    assert_matches(mjnp.where(cond, x, 0), np.where(cond, x, 0))
    assert_matches(mjnp.where(cond, 1.5, x), np.where(cond, 1.5, x))


@pytest.mark.parametrize(
    ("a_min", "a_max"), [(-1, 1), (0.5, None), (None, 2), (np.array([-1, 0, 1]), 1.5), (2, -2)]
)
@pytest.mark.parametrize("dtype", ["int8", "float32", "float64"])
def test_clip(dtype, a_min, a_max):
    x = np.array([-3, -1, 0, 1, 2, 3], dtype).reshape(2, 3)
    assert_matches(mjnp.clip(x, a_min, a_max), np.clip(x, a_min, a_max))
    assert_matches(mjnp.clip(x, min=a_min, max=a_max), np.clip(x, min=a_min, max=a_max))


# --- transformations ----------------------------------------------------------------------


def test_elementwise_functions_under_vmap_match_numpy():
    x = np.linspace(0.1, 2.0, 12).reshape(3, 4)
    y = np.linspace(-1.0, 1.0, 4)

    def f(a, b):
        return mjnp.floor_divide(a, 0.3) + mjnp.where(a > 1, mjnp.sqrt(a), mjnp.arctan2(b, a))

    expected = np.floor_divide(x, 0.3) + np.where(x > 1, np.sqrt(x), np.arctan2(y, x))
    assert_matches(mjcore.vmap(f, in_axes=(0, None))(x, y), expected)
    batched = mjcore.jit(mjcore.vmap(f, in_axes=(1, None), out_axes=1))
    assert_matches(batched(x, y[:3]), f(x, y[:3, None]))


def test_elementwise_functions_under_jvp():
    x = np.array([0.3, 0.7, 1.9])
    t = np.array([1.0, -2.0, 0.5])
    primal, tangent = mjcore.jvp(lambda a: mjnp.exp(a) * mjnp.log1p(a), (x,), (t,))
    assert_matches(primal, np.exp(x) * np.log1p(x))
    assert_matches(tangent, (np.exp(x) * np.log1p(x) + np.exp(x) / (1 + x)) * t)


_DIVISOR_CASES = [
    (dtype, divisor)
    for dtype in ("int8", "int32", "int64", "uint8", "uint64")
    for divisor in (3, 1, 0, -3, "0-d", "(1, 1)")
    if not (dtype[0] == "u" and divisor == -3)  # -3 does not fit an unsigned dtype
]


@pytest.mark.parametrize("dtype,divisor", _DIVISOR_CASES)
def test_integer_remainder_and_floor_divide_by_a_scalar_match_numpy(dtype, divisor):
    # A known positive scalar divisor takes a shorter path than zero or negative ones.
    x = np.arange(-9, 10).astype(dtype) if dtype[0] == "i" else np.arange(0, 19).astype(dtype)
    if divisor == "0-d":
        divisor = np.asarray(4, dtype)
    elif divisor == "(1, 1)":
        divisor = np.full((1, 1), 5, dtype)
    d = mjnp.asarray(divisor) if isinstance(divisor, np.ndarray) else divisor
    with np.errstate(divide="ignore"):
        for ours, theirs in ((mjnp.remainder, np.remainder), (mjnp.floor_divide, np.floor_divide)):
            got, want = ours(mjnp.asarray(x), d), theirs(x, divisor)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(np.asarray(got), want)
