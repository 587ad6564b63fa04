"""mjnp array creation (mjnp/_creation.py) against NumPy: dtypes, shapes, values and errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import mjcore
import mjnp
from tests.differential_registry import differential
from tests.mjnp_testing import ALL_DTYPES, SETTINGS, assert_matches, check_against_numpy, shapes

# --- array / asarray ------------------------------------------------------------------------

NESTED_VALUES = [
    1,
    2.5,
    True,
    1 + 2j,
    [],
    [1, 2, 3],
    [1, 2.0],
    [True, 2],
    [[1, 2], [3, 4]],
    [[1.5], [2]],
    ([1, 2], (3, 4)),
    [[[]]],
    [np.float32(1), 2.0],
    [np.int8(1), 2],
    [np.float32(1), np.float32(2)],
    np.arange(6, dtype=np.int16).reshape(2, 3),
    np.float32(3),
]


@pytest.mark.parametrize("value", NESTED_VALUES, ids=repr)
@pytest.mark.parametrize("fname", ["array", "asarray"])
def test_array_from_python_and_numpy_values(fname, value):
    out = getattr(mjnp, fname)(value)
    assert_matches(out, getattr(np, fname)(value))
    assert not out.weak_type


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_asarray_dtype_argument(dtype):
    for value in ([0, 1, 2], [[1.5, -2.5]], 1, np.arange(3, dtype=np.int8)):
        check_against_numpy(mjnp.asarray, np.asarray, value, dtype=dtype)
    check_against_numpy(mjnp.array, np.array, mjnp.asarray([0.5, 1.5]), dtype=dtype)


def test_asarray_of_mjnp_arrays_and_copy():
    x = mjnp.asarray([1.0, 2.0])
    assert mjnp.asarray(x) is x
    assert mjnp.asarray(x, copy=False) is x
    assert_matches(mjnp.array(x, copy=True), np.array([1.0, 2.0]))
    assert_matches(mjnp.asarray([x, x]), np.ones((2, 2)) * [1.0, 2.0])
    assert_matches(mjnp.array(3, ndmin=2), np.array(3, ndmin=2))
    assert_matches(mjnp.array([1, 2], ndmin=3), np.array([1, 2], ndmin=3))
    # Arrays made from weak values are strong, as every NumPy array is.
    weak = mjcore.lax.full((), 1.0, np.float64, weak_type=True)
    assert not mjnp.asarray(weak).weak_type
    assert (mjnp.asarray(1.0) + np.ones(1, np.float32)).dtype == np.float64


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        (([1, 2],), {"copy": False}, ValueError, "avoid copy"),
        ((np.ones(2),), {"copy": False}, ValueError, "avoid copy"),
        ((mjnp.ones(2),), {"copy": False, "dtype": np.int32}, ValueError, "avoid copy"),
        (([[1], [1, 2]],), {}, ValueError, "inhomogeneous"),
        (("abc",), {}, TypeError, "str"),
        ((None,), {}, TypeError, "NoneType"),
        (([1, "a"],), {}, TypeError, "not supported"),
        ((300,), {"dtype": np.uint8}, OverflowError, "300 out of bounds for uint8"),
        (([1, 300],), {"dtype": np.int8}, OverflowError, "out of bounds for int8"),
        ((2**70,), {}, OverflowError, "out of bounds for int64"),
        (([1.0],), {"dtype": "float128"}, TypeError, "not supported"),
        (([1.0],), {"order": "X"}, ValueError, "order"),
    ],
)
def test_asarray_errors(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        mjnp.asarray(*args, **kwargs)


def test_asarray_of_lists_holding_tracers():
    def f(t):
        return mjnp.asarray([[t, 2 * t], [1.0, t * t]])

    x = np.array([1.0, 2.0, 3.0])
    expected = np.stack([np.array([[v, 2 * v], [1.0, v * v]]) for v in x])
    assert_matches(mjcore.vmap(f)(x), expected)
    primal, tangent = mjcore.jvp(f, (2.0,), (1.0,))
    assert_matches(primal, np.array([[2.0, 4.0], [1.0, 4.0]]))
    assert_matches(tangent, np.array([[1.0, 2.0], [0.0, 4.0]]))
    jaxpr = mjcore.make_jaxpr(f)(np.float32(1))
    assert jaxpr.out_avals[0].shape == (2, 2)
    assert jaxpr.out_avals[0].dtype == np.float64  # a Python float in a list is float64
    with pytest.raises(ValueError, match="inhomogeneous"):
        mjcore.vmap(lambda t: mjnp.asarray([t, [t, t]]))(x)


# --- filled arrays ------------------------------------------------------------------------

_DTYPE_ARGS = st.sampled_from((None, *ALL_DTYPES, float, int, bool, complex, np.float32, "f4"))


@differential("empty", "ones", "zeros")
@pytest.mark.parametrize("fname", ["zeros", "ones", "empty"])
@SETTINGS
@given(shape=shapes(max_dims=3), dtype=_DTYPE_ARGS, as_int=st.booleans())
def test_zeros_ones_empty(fname, shape, dtype, as_int):
    if as_int and len(shape) == 1:
        shape = shape[0]
    out = getattr(mjnp, fname)(shape, dtype)
    expected = getattr(np, fname)(shape, dtype)
    if fname == "empty":
        expected = np.zeros_like(expected)  # NB: mjnp.empty is zeros
    assert_matches(out, expected)


@differential("full")
@SETTINGS
@given(
    shape=shapes(max_dims=3),
    fill=st.sampled_from((0, 1, -3, 2.5, True, 1 - 1j, np.float32(1.5), np.int8(-2))),
    dtype=st.sampled_from((None, "int8", "uint8", "float32", "float64", "complex64", "bool")),
)
def test_full(shape, fill, dtype):
    check_against_numpy(mjnp.full, np.full, shape, fill, dtype)


def test_full_broadcasts_array_fill_values():
    assert_matches(mjnp.full((2, 3), [1, 2, 3]), np.full((2, 3), [1, 2, 3]))
    assert_matches(
        mjnp.full((2, 3), np.ones((2, 1), np.float32)), np.full((2, 3), np.ones((2, 1), np.float32))
    )
    with pytest.raises(ValueError, match=r"\(2,\) into shape \(3,\)"):
        mjnp.full(3, [1, 2])
    with pytest.raises(OverflowError, match="300 out of bounds for uint8"):
        mjnp.full(3, 300, dtype=np.uint8)
    x = mjcore.vmap(lambda t: mjnp.full((2,), t))(np.array([1.0, 2.0]))
    assert_matches(x, np.array([[1.0, 1.0], [2.0, 2.0]]))


@differential("empty_like", "full_like", "ones_like", "zeros_like")
@pytest.mark.parametrize("fname", ["zeros_like", "ones_like", "empty_like", "full_like"])
@SETTINGS
@given(
    shape=shapes(max_dims=3),
    src_dtype=st.sampled_from(ALL_DTYPES),
    dtype=st.sampled_from((None, "int16", "float32", "complex128", "bool")),
    new_shape=st.one_of(st.none(), shapes(max_dims=2)),
)
def test_like_functions(fname, shape, src_dtype, dtype, new_shape):
    a = np.zeros(shape, src_dtype)
    args = (a, 1) if fname == "full_like" else (a,)
    out = getattr(mjnp, fname)(*args, dtype=dtype, shape=new_shape)
    expected = getattr(np, fname)(*args, dtype=dtype, shape=new_shape)
    if fname == "empty_like":
        expected = np.zeros_like(expected)
    assert_matches(out, expected)


def test_like_functions_take_python_scalars_lists_and_tracers():
    assert_matches(mjnp.zeros_like(2.5), np.zeros_like(2.5))
    assert_matches(mjnp.ones_like([1, 2]), np.ones_like([1, 2]))
    assert_matches(mjnp.full_like(np.ones(3, np.uint8), 7), np.full_like(np.ones(3, np.uint8), 7))
    out = mjcore.vmap(lambda t: mjnp.zeros_like(t) + mjnp.ones_like(t))(np.ones((2, 3)))
    assert_matches(out, np.ones((2, 3)))


@pytest.mark.parametrize(
    ("fun", "args", "error", "match"),
    [
        (mjnp.zeros, (-1,), ValueError, "negative dimensions"),
        (mjnp.ones, ((2, -3),), ValueError, "negative dimensions"),
        (mjnp.zeros, (2.0,), TypeError, "mjnp.zeros: expected a sequence of integers"),
        (mjnp.zeros, ((2, "a"),), TypeError, "sequence of integers"),
        (mjnp.zeros, (2, "foo"), TypeError, "not understood"),
        (mjnp.zeros, (2, object), TypeError, "not supported"),
        (mjnp.full, (2, "x"), TypeError, "str"),
    ],
)
def test_filled_array_errors(fun, args, error, match):
    with pytest.raises(error, match=match):
        fun(*args)


# --- ranges -------------------------------------------------------------------------------

_RANGE_NUMBERS = st.one_of(
    st.integers(-20, 20),
    st.floats(-20, 20, allow_nan=False).map(lambda v: round(v, 2)),
)


@differential("arange")
@SETTINGS
@given(
    start=_RANGE_NUMBERS,
    stop=st.one_of(st.none(), _RANGE_NUMBERS),
    step=st.one_of(st.none(), _RANGE_NUMBERS.filter(lambda v: v != 0)),
    dtype=st.sampled_from((None, "int32", "int64", "uint8", "float16", "float32", "float64")),
)
def test_arange(start, stop, step, dtype):
    if stop is None and step is not None:
        stop, step = step, None
    args = (start,) if stop is None else (start, stop) if step is None else (start, stop, step)
    try:
        expected = np.arange(*args, dtype=dtype)
    except (OverflowError, ValueError) as err:  # e.g. a negative Python int for uint8
        with pytest.raises(type(err)):
            mjnp.arange(*args, dtype=dtype)
        return
    if dtype == "uint8" and (np.arange(*args) < 0).any():
        return  # NumPy's negative-to-unsigned conversion is undefined
    assert_matches(mjnp.arange(*args, dtype=dtype), expected)


def test_arange_defaults_and_errors():
    assert_matches(mjnp.arange(5), np.arange(5))
    assert_matches(mjnp.arange(np.int8(1), 5), np.arange(np.int8(1), 5))
    assert_matches(mjnp.arange(np.float32(1), 5), np.arange(np.float32(1), 5))
    assert_matches(mjnp.arange(0.1, 1, 0.1, dtype=np.float32), np.arange(0.1, 1, 0.1, np.float32))
    assert_matches(mjnp.arange(2, dtype=bool), np.arange(2, dtype=bool))
    assert_matches(mjnp.arange(mjnp.asarray(3)), np.arange(3))
    with pytest.raises(ZeroDivisionError):
        mjnp.arange(0, 5, 0)
    with pytest.raises(TypeError, match="at most length 2"):
        mjnp.arange(3, dtype=bool)
    with pytest.raises(mjcore.ConcretizationTypeError):
        mjcore.jit(lambda n: mjnp.arange(n))(3)


@differential("linspace")
@SETTINGS
@given(
    start=st.one_of(
        st.integers(-10, 10), st.floats(-10, 10, allow_nan=False), st.sampled_from(("arr",))
    ),
    stop=st.one_of(st.integers(-10, 10), st.floats(-10, 10, allow_nan=False)),
    num=st.integers(0, 8),
    endpoint=st.booleans(),
    dtype=st.sampled_from((None, "float32", "float64", "int32", "complex64")),
    axis=st.sampled_from((0, 1, -1)),
)
def test_linspace(start, stop, num, endpoint, dtype, axis):
    if isinstance(start, str):
        start = np.array([0.0, 1.5, -2.0], np.float32)
    elif axis != 0:
        axis = 0  # scalar endpoints give 1-d results
    kwargs = {"num": num, "endpoint": endpoint, "dtype": dtype, "axis": axis}
    y, step = mjnp.linspace(start, stop, retstep=True, **kwargs)
    y_np, step_np = np.linspace(start, stop, retstep=True, **kwargs)
    assert_matches(y, y_np)
    np.testing.assert_allclose(np.asarray(step), step_np, rtol=1e-6)


def test_linspace_defaults_traced_endpoints_and_errors():
    assert_matches(mjnp.linspace(0, 1), np.linspace(0, 1))
    assert_matches(mjnp.linspace(np.int8(0), 5), np.linspace(np.int8(0), 5))
    assert_matches(mjnp.linspace(np.float16(0), 1, 7), np.linspace(np.float16(0), 1, 7))
    out = mjcore.vmap(lambda a: mjnp.linspace(a, 2 * a, 5))(np.array([1.0, 2.0]))
    assert_matches(out, np.linspace(np.array([1.0, 2.0]), np.array([2.0, 4.0]), 5, axis=1))
    with pytest.raises(ValueError, match="must be non-negative"):
        mjnp.linspace(0, 1, -1)


@pytest.mark.parametrize("dtype", [None, "int8", "bool", "float32", "complex64"])
@pytest.mark.parametrize(
    ("n", "m", "k"), [(0, None, 0), (3, None, 0), (3, 4, 1), (4, 2, -1), (3, 3, 5)]
)
def test_eye_and_identity(n, m, k, dtype):
    dt = float if dtype is None else dtype
    assert_matches(mjnp.eye(n, m, k, dtype=dt), np.eye(n, m, k, dtype=dt))
    assert_matches(mjnp.eye(n, M=m, k=k), np.eye(n, M=m, k=k))
    assert_matches(mjnp.identity(n, dtype), np.identity(n, dtype))


def test_eye_errors():
    with pytest.raises(ValueError, match="negative dimensions"):
        mjnp.eye(-1)
    with pytest.raises(TypeError):
        mjnp.eye(2.5)


def test_creation_results_work_under_transformations():
    def f(x):
        return x * mjnp.arange(3.0) + mjnp.eye(3)[0] + mjnp.linspace(0, 1, 3)

    x = np.array(2.0)
    assert_matches(mjcore.jit(f)(x), 2.0 * np.arange(3.0) + np.eye(3)[0] + np.linspace(0, 1, 3))
    _, tangent = mjcore.jvp(f, (x,), (np.array(1.0),))
    assert_matches(tangent, np.arange(3.0))


# --- data types -----------------------------------------------------------------------------


def test_dtype_objects_are_numpy_scalar_types():
    for name in ALL_DTYPES:
        attr = "bool_" if name == "bool" else name
        assert getattr(mjnp, attr) is getattr(np, attr)
        assert mjnp.zeros(2, getattr(mjnp, attr)).dtype == np.dtype(name)
    assert mjnp.bool is np.bool_
    assert mjnp.dtype is np.dtype
    assert mjnp.float32(3) == np.float32(3)
    assert (mjnp.pi, mjnp.e, mjnp.newaxis) == (np.pi, np.e, None)
    assert np.isinf(mjnp.inf) and np.isnan(mjnp.nan)


@pytest.mark.parametrize("d1", ALL_DTYPES)
def test_result_type_and_promote_types(d1):
    x = mjnp.ones(2, d1)
    for d2 in ALL_DTYPES:
        assert mjnp.promote_types(d1, d2) == np.promote_types(d1, d2)
        assert mjnp.result_type(x, d2) == np.result_type(np.ones(2, d1), d2)
        assert mjnp.can_cast(x, d2) == np.can_cast(np.dtype(d1), d2)
        assert mjnp.can_cast(d1, d2, "same_kind") == np.can_cast(d1, d2, "same_kind")
    for scalar in (True, 1, 1.0, 1j):
        assert mjnp.result_type(x, scalar) == np.result_type(np.ones(2, d1), scalar)
    assert mjnp.result_type(x, [1, 2]) == np.result_type(np.ones(2, d1), np.array([1, 2]))


@pytest.mark.parametrize("d", ALL_DTYPES)
def test_promote_types_of_a_dtype_with_itself_keeps_its_metadata(d):
    dt = np.dtype(d, metadata={1: 1})
    want = np.promote_types(dt, dt)
    got = mjnp.promote_types(dt, dt)
    assert got == want and got.metadata == want.metadata == {1: 1}
    swapped = dt.newbyteorder()
    if not swapped.isnative:  # NumPy drops it on a byte swap, and makes the result native
        want = np.promote_types(swapped, swapped)
        got = mjnp.promote_types(swapped, swapped)
        assert got == want and got.isnative and got.metadata is want.metadata is None


def test_finfo_iinfo_issubdtype():
    assert mjnp.finfo(mjnp.float32).eps == np.finfo(np.float32).eps
    assert mjnp.finfo(mjnp.ones(2, np.float16).dtype).max == np.finfo(np.float16).max
    assert mjnp.iinfo(mjnp.int8).min == -128
    assert mjnp.issubdtype(mjnp.ones(2).dtype, mjnp.floating)
    assert not mjnp.issubdtype(mjnp.ones(2, int).dtype, mjnp.inexact)
    assert mjnp.isdtype(mjnp.ones(2, np.uint8).dtype, "unsigned integer")
    with pytest.raises(ValueError):
        mjnp.result_type()
    with pytest.raises(TypeError, match="mjnp.promote_types"):
        mjnp.promote_types("float32", "U3")


@pytest.mark.parametrize(
    "make",
    [
        lambda: mjnp.zeros((), "float32"),
        lambda: mjnp.full((), 0.0, "float32"),
        lambda: mjnp.asarray(0.0, "float32"),
        lambda: mjnp.array(0.0, "float32"),
    ],
    ids=["zeros", "full", "asarray", "array"],
)
def test_zero_d_results_are_fresh_handles(make):
    # Scalars are cached on the device; filling one result must not change the next one or
    # the constants eager operations use (x // 5.0 once gave -1 after zeros(()).fill(7)).
    first = make()
    first.fill(7)
    first[...] = 7
    assert float(make()) == 0.0
    assert float(first) == 7.0
    x = mjnp.array([1.0, 2.0, 3.0], "float32")
    assert_matches(x // 5.0, np.array([1.0, 2.0, 3.0], np.float32) // 5.0)
    assert_matches(x - 0.0, np.array([1.0, 2.0, 3.0], np.float32))


@pytest.mark.parametrize("name", ["empty", "zeros", "ones", "full"])
def test_creation_signatures_have_numpys_defaults(name):
    import inspect

    want = inspect.signature(getattr(np, name)).parameters
    got = inspect.signature(getattr(mjnp, name)).parameters
    for param in ("shape", "dtype", "order"):
        assert got[param].default == want[param].default
        assert got[param].kind == want[param].kind
    assert getattr(mjnp, name)(*([2] if name != "full" else [2, 0.5]), dtype=None).dtype == (
        getattr(np, name)(*([2] if name != "full" else [2, 0.5]), dtype=None).dtype
    )
