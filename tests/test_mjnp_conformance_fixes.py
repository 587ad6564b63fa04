"""The largest fixable causes found by running NumPy's own test suite on mjnp (issue 23,
`conformance.numpy_suite`), each checked against NumPy: quantile/percentile methods and
weights, complex ordering in max/min/argmax/argmin, per-element `vectorize`."""

from __future__ import annotations

import re

import numpy as np
import pytest

import mjcore
import mjnp

# --- quantile / percentile: every NumPy method, and weights ---------------------------------

METHODS = (
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "linear",
    "median_unbiased",
    "normal_unbiased",
    "lower",
    "higher",
    "midpoint",
    "nearest",
)
QS = (0, 0.1, 0.5, 0.77, 1.0, np.array([0.0, 0.25, 0.6, 1.0]), np.float32(0.3))


def _check(got, expected):
    got_host = np.asarray(got)
    assert got_host.dtype == np.asarray(expected).dtype
    assert got_host.shape == np.shape(expected)
    np.testing.assert_allclose(got_host, expected, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_quantile_methods_match_numpy(method, dtype):
    rng = np.random.default_rng(0)
    x = (rng.normal(size=(4, 7)) * 5).astype(dtype)
    for q in QS:
        for axis in (None, 0, 1, (0, 1)):
            _check(
                mjnp.quantile(x, q, axis=axis, method=method),
                np.quantile(x, q, axis=axis, method=method),
            )
    _check(
        mjnp.percentile(x, [10, 50, 90], axis=1, method=method, keepdims=True),
        np.percentile(x, [10, 50, 90], axis=1, method=method, keepdims=True),
    )


@pytest.mark.parametrize("method", METHODS)
def test_nanquantile_methods_match_numpy(method):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 9))
    x[1, 2] = x[2, [0, 5, 8]] = np.nan
    for q in QS:
        for axis in (None, 1):
            _check(
                mjnp.nanquantile(x, q, axis=axis, method=method),
                np.nanquantile(x, q, axis=axis, method=method),
            )
    for q in (0.2, [0.5, 1.0]):  # a NaN anywhere in the slice makes the plain quantile NaN
        _check(mjnp.quantile(x, q, axis=1, method=method), np.quantile(x, q, axis=1, method=method))


@pytest.mark.parametrize("fname", ["quantile", "percentile", "nanquantile", "nanpercentile"])
def test_weighted_inverted_cdf_matches_numpy(fname):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(4, 7))
    x[3, 4] = np.nan
    w = rng.integers(0, 4, size=(4, 7)).astype(float)
    w[:, 0] = 0  # leading zero weights: q=0 skips them
    w[0] = 1
    scale = 100 if "percentile" in fname else 1
    cases = [(None, w), (0, w), (1, w), ((0, 1), w)]
    if not fname.startswith("nan"):  # NumPy's nan-versions fail on 1-d weights (IndexError)
        cases += [(1, w[0]), (0, w[:, 0] + 1)]
    for xi in (x, rng.integers(0, 9, size=(4, 7))):
        for q in (0, 0.1, 0.5, 1.0, [0.0, 0.3, 1.0]):
            for axis, weights in cases:
                q_scaled = np.multiply(q, scale)
                expected = getattr(np, fname)(
                    xi, q_scaled, axis=axis, method="inverted_cdf", weights=weights
                )
                got = getattr(mjnp, fname)(
                    xi, q_scaled, axis=axis, method="inverted_cdf", weights=weights
                )
                _check(got, expected)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(method="linear", weights=np.ones(3)), ValueError, "Only method 'inverted_cdf'"),
        (dict(method="inverted_cdf", weights=-np.ones(3)), ValueError, "non-negative"),
        (dict(method="inverted_cdf", weights=np.zeros(3)), ValueError, "all zero"),
        (dict(method="inverted_cdf", weights=np.ones(2)), TypeError, "Axis must be specified"),
        (
            dict(method="inverted_cdf", weights=np.ones(2), axis=0),
            ValueError,
            "Shape of weights must be consistent",
        ),
        (dict(method="bogus"), ValueError, "is not a valid method"),
    ],
)
def test_quantile_errors_match_numpy(kwargs, error, match):
    x = np.arange(3.0)
    with pytest.raises(error, match=match):
        np.quantile(x, 0.5, **kwargs)
    with pytest.raises(error, match=match):
        mjnp.quantile(x, 0.5, **kwargs)


def test_quantile_integer_q_keeps_integer_dtype():
    x = np.arange(12).reshape(3, 4)
    for q in (0, 1, [0, 1]):
        _check(mjnp.quantile(x, q, axis=1), np.quantile(x, q, axis=1))


def test_weighted_quantile_under_jit():
    x, w = np.array([3.0, 1.0, 2.0, 5.0]), np.array([1.0, 0.0, 2.0, 1.0])
    f = mjcore.jit(lambda a, b: mjnp.quantile(a, 0.5, method="inverted_cdf", weights=b))
    _check(f(x, w), np.quantile(x, 0.5, method="inverted_cdf", weights=w))


# --- complex max/min/argmax/argmin: NumPy's lexicographic order ------------------------------


def _complex_cases():
    a = np.array(
        [
            [1 + 2j, 1 - 1j, 3 + 0j, 0 + 5j],
            [3 - 0j, 3 + 1j, complex(np.nan, 0), 2j],
            [complex(-0.0, -0.0), -1j, -1, -1 + 1j],
            [complex(2, np.nan), 2 + 1j, complex(np.inf, -1), complex(np.inf, 2)],
        ]
    )
    return [a, a[:3], a.astype(np.complex64), a[2:3, :2]]


@pytest.mark.parametrize("fname", ["max", "min", "argmax", "argmin"])
def test_complex_extrema_are_lexicographic(fname):
    for a in _complex_cases():
        for axis in (None, 0, 1, -1):
            got = getattr(mjnp, fname)(a, axis=axis)
            expected = getattr(np, fname)(a, axis=axis)
            assert np.asarray(got).dtype == np.asarray(expected).dtype
            np.testing.assert_array_equal(np.asarray(got), expected)
        if fname in ("max", "min"):
            got = getattr(mjnp, fname)(a, axis=(0, 1), keepdims=True)
            np.testing.assert_array_equal(
                np.asarray(got), getattr(np, fname)(a, axis=(0, 1), keepdims=True)
            )


@pytest.mark.parametrize("fname", ["max", "min"])
def test_complex_extrema_initial_and_where(fname):
    a = _complex_cases()[1]
    where = np.array([True, False, True, True])
    for initial in (5 + 0j, -1 + 0.5j):
        np.testing.assert_array_equal(
            np.asarray(getattr(mjnp, fname)(a, axis=1, initial=initial, where=where)),
            getattr(np, fname)(a, axis=1, initial=initial, where=where),
        )


def test_complex_extremum_keeps_signed_zero():
    a = np.array([complex(-0.0, -0.0), complex(-1.0, 0.0)])
    got = complex(mjnp.max(a))
    assert np.signbit(got.real) and np.signbit(got.imag)


def test_complex_argmax_under_jit_and_vmap():
    a = _complex_cases()[1]
    np.testing.assert_array_equal(np.asarray(mjcore.jit(mjnp.argmax)(a)), np.argmax(a))
    np.testing.assert_array_equal(np.asarray(mjcore.vmap(mjnp.max)(a)), np.max(a, axis=1))


# --- vectorize: the Python function runs once per element, as NumPy's ----------------------


def test_vectorize_calls_python_per_element():
    calls = []

    def f(a, b):
        calls.append(a)
        if a > b:  # Python control flow on an element
            return a - b
        return a + b

    x, y = np.linspace(-1, 1, 6).reshape(2, 3), np.array([0.5, 1.0, 2.0])
    got = mjnp.vectorize(f)(mjnp.asarray(x), y)
    calls_mjnp = len(calls)
    calls.clear()
    expected = np.vectorize(f)(x, y)
    assert calls_mjnp == len(calls)  # NumPy calls once more to find the output type
    assert isinstance(got, mjnp.ndarray)
    _check(got, expected)


def test_vectorize_numpy_keywords():
    x = np.arange(5)
    for kwargs in (dict(otypes=[np.float32]), dict(otypes="d"), dict(cache=True)):
        _check(
            mjnp.vectorize(lambda v: v * 2, **kwargs)(x), np.vectorize(lambda v: v * 2, **kwargs)(x)
        )
    two = mjnp.vectorize(lambda v: (v, v + 1.5))(x)
    expected = np.vectorize(lambda v: (v, v + 1.5))(x)
    assert isinstance(two, tuple) and len(two) == 2
    for got, exp in zip(two, expected, strict=True):
        _check(got, exp)
    with pytest.raises(ValueError, match="cannot call `vectorize` on size 0 inputs"):
        np.vectorize(lambda v: v)(np.zeros(0))
    with pytest.raises(ValueError, match="cannot call `vectorize` on size 0 inputs"):
        mjnp.vectorize(lambda v: v)(np.zeros(0))
    sig = mjnp.vectorize(lambda a: a.sum() if a[0] > 0 else -a.sum(), signature="(n)->()")
    y = np.array([[1.0, 2.0], [-1.0, 5.0]])
    _check(
        sig(y), np.vectorize(lambda a: a.sum() if a[0] > 0 else -a.sum(), signature="(n)->()")(y)
    )


def test_vectorize_traced_path_still_maps():
    vf = mjnp.vectorize(lambda a, b: mjnp.where(a > b, a - b, a + b))
    x, y = np.linspace(-1, 1, 6).reshape(2, 3), np.array([0.5, 1.0, 2.0])
    _check(mjcore.jit(vf)(x, y), np.where(x > y, x - y, x + y))
    g = mjcore.grad(lambda a: mjnp.sum(vf(a, y)))(x)
    _check(g, np.ones_like(x))


# --- np.broadcast, one-argument where, the ndarray constructor -----------------------------


def test_broadcast_object_matches_numpy():
    arrs = [np.zeros((6, 7)), np.zeros((5, 6, 1)), np.zeros((7,)), np.zeros((5, 1, 7))]
    marrs = [mjnp.asarray(a) for a in arrs]
    nested = mjnp.broadcast(mjnp.broadcast(*marrs[:2]), mjnp.broadcast(*marrs[2:]))
    for m, n in ((mjnp.broadcast(*marrs), np.broadcast(*arrs)), (nested, np.broadcast(*arrs))):
        assert (m.shape, m.nd, m.ndim, m.numiter, m.size) == (
            n.shape,
            n.nd,
            n.ndim,
            n.numiter,
            n.size,
        )
        assert all(a is it.base for a, it in zip(marrs, m.iters, strict=True))
    x, y = np.arange(3), np.array([[10], [20]])
    m, n = mjnp.broadcast(mjnp.asarray(x), y), np.broadcast(x, y)
    assert list(m) == list(n) and m.index == n.index == 6
    m.reset()
    n.reset()
    assert next(m) == next(n) and m.index == n.index == 1
    assert mjnp.broadcast().shape == np.broadcast().shape == ()
    with pytest.raises(ValueError, match=r"arg 0 with shape \(1, 3\) and arg 2 with shape \(2,\)"):
        mjnp.broadcast([[1, 2, 3]], [[4], [5]], [6, 7])
    with pytest.raises(ValueError):
        mjnp.broadcast(*[x] * 65)
    with pytest.raises(ValueError):
        mjnp.broadcast(1, x=1)


def test_broadcast_shape_under_jit():
    shapes = []
    mjcore.jit(lambda a: shapes.append(mjnp.broadcast(a, np.zeros((2, 1))).shape) or a)(np.zeros(3))
    assert shapes == [(2, 3)]


def test_one_argument_where_is_nonzero():
    for c in ([[0, 1], [2, 0]], np.array([True, False, True]), np.zeros((2, 0))):
        got, expected = mjnp.where(c), np.where(c)
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            _check(g, e)
    with pytest.raises(ValueError, match="either both or neither"):
        mjnp.where([True], [1])
    _check(mjnp.where([True, False], 1.0, 2), np.where([True, False], 1.0, 2))


def test_ndarray_constructor():
    for args, kwargs in (
        (((2, 3),), {}),
        ((4, "i4"), {}),
        (((2,), np.int64), dict(buffer=np.arange(5), offset=8)),
        (((2, 2), float, np.arange(4.0)), dict(order="F")),
        (((3,),), dict(buffer=np.arange(6.0), strides=(16,))),
    ):
        got, expected = mjnp.ndarray(*args, **kwargs), np.ndarray(*args, **kwargs)
        assert isinstance(got, mjnp.ndarray)
        assert got.shape == expected.shape and got.dtype == expected.dtype
        if "buffer" in kwargs or len(args) > 2:
            _check(got, expected)


# --- exception messages that NumPy's tests match ----------------------------------------------


@pytest.mark.parametrize(
    "pad_width",
    ["3", None, object(), 3.4, (4, 5, 6, 7), ((1,), (2,), (3,)), (((3,), (4,)), ((0,), (1,)))],
)
def test_pad_width_errors_contain_numpys_message(pad_width):
    x = np.ones((2, 2))
    with pytest.raises((TypeError, ValueError)) as expected:
        np.pad(x, pad_width)
    with pytest.raises(expected.type, match=re.escape(str(expected.value).rstrip("."))):
        mjnp.pad(x, pad_width)


@pytest.mark.parametrize(
    "weights, axis, error",
    [(np.ones((2, 2)), None, TypeError), (np.ones((2, 2)), 0, ValueError)],
)
def test_average_weight_errors_contain_numpys_message(weights, axis, error):
    x = np.ones((2, 3))
    with pytest.raises(error) as expected:
        np.average(x, axis=axis, weights=weights)
    with pytest.raises(error, match=re.escape(str(expected.value).rstrip("."))):
        mjnp.average(x, axis=axis, weights=weights)


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "inverted_cdf"])
def test_quantile_of_booleans(method):
    a = np.array([False, True, True])
    q = a if method == "linear" else [0.2, 0.9]  # bool q: NumPy takes values as they are
    _check(mjnp.quantile(a, q, method=method), np.quantile(a, q, method=method))


def test_longdouble_names_are_numpys_types_and_arrays_of_them_are_refused():
    assert mjnp.longdouble is np.longdouble and mjnp.clongdouble is np.clongdouble
    assert mjnp.finfo(mjnp.longdouble).nmant == np.finfo(np.longdouble).nmant
    for make in (
        lambda: mjnp.asarray([1.0], dtype=mjnp.longdouble),
        lambda: mjnp.zeros(2, "g"),
        lambda: mjnp.ones(2, mjnp.clongdouble),
        lambda: mjnp.add(np.ones(1, np.longdouble), 1),
    ):
        with pytest.raises(TypeError, match="float128|complex256"):
            make()


# --- exception messages that contain NumPy's text -------------------------------------------


@pytest.mark.parametrize("call", [lambda m: m.nonzero(m.array(0)), lambda m: m.array(1).nonzero()])
def test_nonzero_of_a_0d_array_has_numpys_message(call):
    with pytest.raises(ValueError) as np_err:
        call(np)
    numpy_text = str(np_err.value).split(".")[0]  # "Calling nonzero on 0d arrays is not allowed"
    with pytest.raises(ValueError, match=re.escape(numpy_text)):
        call(mjnp)


# --- missing keywords -----------------------------------------------------------------------


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (), (0,), (1,), (0, 1), (-1, 0)])
def test_size_takes_a_tuple_of_axes(axis):  # NumPy 2.4
    a = [[1, 2, 3], [4, 5, 6]]
    assert mjnp.size(a, axis) == np.size(a, axis)
    assert mjnp.size(mjnp.asarray(a), axis) == np.size(np.asarray(a), axis)


@pytest.mark.parametrize("axis, exc", [((0, 0), ValueError), ((2,), np.exceptions.AxisError)])
def test_size_with_bad_axes_raises_as_numpy(axis, exc):
    with pytest.raises(exc):
        np.size([[1, 2]], axis)
    with pytest.raises(exc):
        mjnp.size([[1, 2]], axis)


@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd"])
def test_ddof_and_correction_together_has_numpys_message(name):
    with pytest.raises(ValueError) as np_err:
        getattr(np, name)(np.ones(3), ddof=1, correction=1)
    # NumPy's own tests match its whole message, final period (any character) included.
    with pytest.raises(ValueError, match=str(np_err.value)):
        getattr(mjnp, name)(np.ones(3), ddof=1, correction=1)


# --- vectorize: __name__ and a later otypes assignment, as NumPy's --------------------------


def test_vectorize_has_the_functions_name():
    def f2(a, b):
        return a + b

    assert mjnp.vectorize(f2).__name__ == np.vectorize(f2).__name__ == "f2"


def test_vectorize_otypes_set_after_construction_counts():
    x = np.zeros([0, 5], dtype=int)
    for m in (np, mjnp):
        f = m.vectorize(lambda v: v)
        with pytest.raises(ValueError, match="otypes"):
            f(x)
        f.otypes = "i"
        out = f(x)
        assert out.shape == (0, 5) and out.dtype == np.dtype("i") and f.otypes == "i"


# --- linalg: NumPy's messages, lowercase UPLO, inf-norms of empty arrays --------------------


@pytest.mark.parametrize("uplo", ["L", "U", "l", "u"])
@pytest.mark.parametrize("name", ["eigh", "eigvalsh"])
def test_eigh_takes_lowercase_uplo(name, uplo):
    k = np.array([[2.0, 1.0], [0.5, 3.0]])  # not symmetric: the triangle read matters
    want = getattr(np.linalg, name)(k, UPLO=uplo)
    got = getattr(mjnp.linalg, name)(k, UPLO=uplo)
    want_w = want if name == "eigvalsh" else want.eigenvalues
    got_w = got if name == "eigvalsh" else got.eigenvalues
    np.testing.assert_allclose(np.asarray(got_w), want_w, rtol=1e-12)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.linalg.pinv(np.eye(2), rcond=1e-3, rtol=1e-3),
        lambda m: m.linalg.lstsq(np.ones((4, 2)), np.ones(5), rcond=None),
        lambda m: m.linalg.eigh(np.eye(2), UPLO="x"),
    ],
)
def test_linalg_errors_contain_numpys_message(call):
    with pytest.raises((ValueError, np.linalg.LinAlgError)) as np_err:
        call(np)
    with pytest.raises(np_err.type, match=re.escape(str(np_err.value))):
        call(mjnp)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
@pytest.mark.parametrize("shape, axis", [((0,), None), ((0, 3), 0), ((3, 0), 1)])
def test_inf_norm_of_an_empty_vector_is_zero(dtype, shape, axis):
    x = np.zeros(shape, dtype)
    for ord_ in (1, 2, np.inf):
        want = np.linalg.vector_norm(x, ord=ord_, axis=axis)
        got = mjnp.linalg.vector_norm(x, ord=ord_, axis=axis)
        np.testing.assert_array_equal(np.asarray(got), want)
        assert got.dtype == want.dtype


@pytest.mark.parametrize("ord_", [1, np.inf])
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0)])
def test_matrix_1_and_inf_norms_of_empty_matrices_are_zero(ord_, shape):
    x = np.zeros(shape)
    np.testing.assert_array_equal(np.asarray(mjnp.linalg.norm(x, ord_)), np.linalg.norm(x, ord_))


def test_inf_norm_gradient_is_unchanged_by_the_zero_initial():
    x = np.array([0.5, -2.0, 1.0])
    g = mjcore.grad(lambda v: mjnp.linalg.vector_norm(v, ord=np.inf))(x)
    np.testing.assert_array_equal(np.asarray(g), [0.0, -1.0, 0.0])


# --- Python bools where NumPy returns them ---------------------------------------------------

_BOOL_CASES = [
    ("array_equal", ([1, 2], [1, 2]), {}),
    ("array_equal", ([1, 2], [1, 3]), {}),
    ("array_equal", ([1, 2], [1, 2, 3]), {}),
    ("array_equal", ([np.nan, 1.0], [np.nan, 1.0]), {}),
    ("array_equal", ([np.nan, 1.0], [np.nan, 1.0]), {"equal_nan": True}),
    ("array_equiv", ([1, 1], [1]), {}),
    ("array_equiv", ([1, 2], [[1], [2]]), {}),
    ("array_equiv", ([1, 2], [1, 2, 3]), {}),
    ("allclose", ([1.0, 2.0], [1.0, 2.0 + 1e-9]), {}),
    ("allclose", ([1.0, np.nan], [1.0, np.nan]), {"equal_nan": True}),
    ("allclose", ([1.0], [2.0]), {}),
]


@pytest.mark.parametrize("name, args, kwargs", _BOOL_CASES)
def test_comparisons_return_python_bools_as_numpy(name, args, kwargs):
    want = getattr(np, name)(*args, **kwargs)
    got = getattr(mjnp, name)(*args, **kwargs)
    assert type(want) is bool and got is want


@pytest.mark.parametrize("name, args, kwargs", _BOOL_CASES)
def test_traced_comparisons_stay_arrays(name, args, kwargs):
    want = getattr(np, name)(*args, **kwargs)
    f = mjcore.jit(lambda a, b: getattr(mjnp, name)(a, b, **kwargs))
    got = f(np.asarray(args[0], float), np.asarray(args[1], float))
    assert got.shape == () and got.dtype == np.bool_ and bool(got) is want


@pytest.mark.parametrize("a, b", [(0, [1, 2, 3]), ([1, 2, 3], np.float64(3.0))])
def test_cross_of_a_0d_array_has_numpys_message(a, b):
    with pytest.raises(ValueError) as np_err:
        np.cross(a, b)
    with pytest.raises(ValueError, match=re.escape(str(np_err.value))):
        mjnp.cross(a, b)


@pytest.mark.parametrize("casting", ["unsafe", "same_kind", "no"])
def test_clip_takes_the_ufunc_casting_keyword(casting):
    a = np.arange(10, dtype=np.int32)
    results = []
    for m in (np, mjnp):
        out = m.zeros(10, np.int32)
        try:
            r = m.clip(m.asarray(a), -1.5, 4.5, out=out, casting=casting)
        except TypeError as err:
            results.append(type(err))
            continue
        assert r.dtype == np.int32
        results.append(np.asarray(out).tolist())
    want, got = results
    refused = isinstance(want, type) and issubclass(want, TypeError)  # UFuncTypeError
    assert got == want or (refused and got is TypeError)


@pytest.mark.parametrize(
    "source, destination", [(3, 0), (-4, 0), (0, 5), ([0, 0], [0, 1]), ([0, 1], [1, 1])]
)
def test_moveaxis_errors_contain_numpys_message(source, destination):
    x = np.zeros((1, 2, 3))
    with pytest.raises(ValueError) as np_err:
        np.moveaxis(x, source, destination)
    with pytest.raises(np_err.type, match=re.escape(str(np_err.value))):
        mjnp.moveaxis(x, source, destination)


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 1, 1), (0, 3, 3)])
def test_lu_based_functions_of_empty_matrices(shape):
    # The host rule of lu_pivots_to_permutation has nothing to swap (jit agrees).
    x = np.zeros(shape)
    for name in ("det", "slogdet"):
        want = getattr(np.linalg, name)(x)
        got = getattr(mjnp.linalg, name)(x)
        for w, g in zip(
            np.atleast_1d(want) if name == "det" else want,
            np.atleast_1d(np.asarray(got)) if name == "det" else got,
            strict=True,
        ):
            np.testing.assert_array_equal(np.asarray(g), w)
    perm = mjcore.lax.lu(x)[2]
    np.testing.assert_array_equal(
        np.asarray(perm), np.asarray(mjcore.jit(lambda v: mjcore.lax.lu(v)[2])(x))
    )
    assert perm.shape == (*shape[:-1],) and perm.dtype == np.int32
