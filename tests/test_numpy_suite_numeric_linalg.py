"""Regression tests for the fixes found by NumPy's own `test_numeric.py` and `test_linalg.py`
(`python -m conformance.numpy_suite`, issue 23), each against NumPy as the oracle."""

from __future__ import annotations

import warnings

import numpy as onp
import pytest

import mjcore
import mjnp as np
from conformance import _numpy_under_test

# --- linalg.cond --------------------------------------------------------------------------

_ORDS = [None, 1, -1, 2, -2, "fro", onp.inf, -onp.inf]


@pytest.mark.parametrize("p", _ORDS, ids=str)
@pytest.mark.parametrize("name", ["zeros", "ones"])
def test_cond_of_a_singular_matrix_is_numpys(name, p):
    a = getattr(onp, name)((2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = onp.linalg.cond(a, p)
        got = np.linalg.cond(a, p)
    onp.testing.assert_allclose(onp.asarray(got), want, rtol=1e-12)


@pytest.mark.parametrize("p", _ORDS, ids=str)
def test_cond_of_stacked_partly_singular_matrices_is_numpys(p):
    a = onp.random.default_rng(0).random((2, 2, 2, 2))
    a[0, 0] = 0
    a[1, 1] = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = onp.linalg.cond(a, p)
        got = onp.asarray(np.linalg.cond(a, p))
    assert got.dtype == want.dtype
    onp.testing.assert_allclose(got, want, rtol=1e-10)


def test_cond_keeps_nan_from_a_nan_input():
    a = onp.ones((2, 2))
    a[0, 1] = onp.nan
    assert onp.isnan(onp.asarray(np.linalg.cond(a, 1)))


@pytest.mark.parametrize("shape", [(0, 0), (3, 0, 0)])
def test_cond_of_empty_matrices_raises_numpys_linalgerror(shape):
    with pytest.raises(onp.linalg.LinAlgError, match="cond is not defined on empty arrays"):
        onp.linalg.cond(onp.zeros(shape))
    with pytest.raises(onp.linalg.LinAlgError, match="cond is not defined on empty arrays"):
        np.linalg.cond(onp.zeros(shape))


# --- linalg.lstsq -------------------------------------------------------------------------


@pytest.mark.parametrize(("m", "n", "k"), [(0, 4, 1), (0, 4, 2), (4, 0, 1), (4, 0, 2), (0, 0, 1)])
def test_lstsq_of_empty_matrices_has_numpys_residuals(m, n, k):
    a, b = onp.ones((m, n)), onp.ones((m, k))
    want = onp.linalg.lstsq(a, b)
    got = np.linalg.lstsq(a, b)
    for g, w in zip(got, want, strict=True):
        g = onp.asarray(g)
        assert g.shape == onp.shape(w)
        onp.testing.assert_array_equal(g, w)


def test_lstsq_float32_solution_satisfies_the_system_as_numpys():
    # NumPy's test_linalg checks `a @ x == b` to 6 decimals on this case.
    a = onp.array([[1.0, 2.0], [3.0, 4.0]], dtype=onp.float32)
    b = onp.array([2.0, 1.0], dtype=onp.float32)
    x = onp.asarray(np.linalg.lstsq(a, b, rcond=-1)[0])
    assert x.dtype == onp.float32
    onp.testing.assert_array_almost_equal(a @ x, b, decimal=6)


@pytest.mark.parametrize(
    ("shape", "rhs", "dtype"),
    [
        ((5, 3), (5,), "float64"),
        ((3, 5), (3, 2), "complex128"),
        ((6, 6), (6, 3), "float32"),
        ((6, 4), (6, 2), "complex64"),
    ],
)
def test_lstsq_matches_numpy_and_jit(shape, rhs, dtype):
    rng = onp.random.default_rng(1)
    a = rng.normal(size=shape).astype(dtype)
    b = rng.normal(size=rhs).astype(dtype)
    if onp.dtype(dtype).kind == "c":
        a = a + 1j * rng.normal(size=shape).astype(dtype)
    want = onp.linalg.lstsq(a, b)
    got = np.linalg.lstsq(a, b)
    tol = 1e-4 if onp.dtype(dtype).itemsize <= 8 else 1e-10
    for g, w in zip(got, want, strict=True):
        g = onp.asarray(g)
        assert g.dtype == onp.asarray(w).dtype and g.shape == onp.shape(w)
        onp.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    jitted = mjcore.jit(lambda a, b: np.linalg.lstsq(a, b)[0])(a, b)
    onp.testing.assert_allclose(onp.asarray(jitted), want[0], rtol=tol, atol=tol)


def test_lstsq_rank_deficient_matches_numpy():
    a = onp.ones((4, 3))
    b = onp.arange(4.0)
    want = onp.linalg.lstsq(a, b)
    got = np.linalg.lstsq(a, b)
    assert int(got[2]) == want[2] == 1
    onp.testing.assert_allclose(onp.asarray(got[0]), want[0], rtol=1e-12)
    assert onp.asarray(got[1]).shape == want[1].shape == (0,)


def test_lstsq_gradient_matches_finite_differences():
    rng = onp.random.default_rng(2)
    a, b = rng.normal(size=(5, 3)), rng.normal(size=5)

    def f(a):
        return np.sum(np.linalg.lstsq(a, b)[0] ** 2)

    g = onp.asarray(mjcore.grad(f)(a))
    d = rng.normal(size=a.shape)
    eps = 1e-6
    fd = (float(f(a + eps * d)) - float(f(a - eps * d))) / (2 * eps)
    onp.testing.assert_allclose(onp.sum(g * d), fd, rtol=1e-5)


# --- test_numeric.py's fixes --------------------------------------------------------------


def _outcome(module, call):
    try:
        return onp.asarray(call(module)).tolist()
    except (TypeError, ValueError) as err:
        return type(err)


_CLIP_CALLS = {
    "no-bounds": lambda m: m.clip(onp.arange(5)),
    "a_min-only": lambda m: m.clip(onp.arange(5), 2),
    "a_max-keyword-only": lambda m: m.clip(onp.arange(5), a_max=2),
    "bounds-and-max": lambda m: m.clip(onp.arange(5), 2, 3, max=3),
    "bounds-and-min": lambda m: m.clip(onp.arange(5), 2, 3, min=2),
    "max-keyword": lambda m: m.clip(onp.arange(5), max=2),
    "min-and-max": lambda m: m.clip(onp.arange(5), min=1, max=3),
    "none-and-bound": lambda m: m.clip(onp.arange(5), None, 2),
    "method-min": lambda m: m.asarray(onp.arange(5)).clip(2),
    "method-max": lambda m: m.asarray(onp.arange(5)).clip(max=3),
    "method-none": lambda m: m.asarray(onp.arange(5)).clip(),
    "casting-None": lambda m: m.clip(onp.arange(5), 0, 1, out=m.zeros(5, int), casting=None),
}


@pytest.mark.parametrize("name", list(_CLIP_CALLS))
def test_clip_argument_rules_are_numpys(name):
    call = _CLIP_CALLS[name]
    assert _outcome(np, call) == _outcome(onp, call)


def test_clip_messages_contain_numpys():
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'a_max'"):
        np.clip(np.arange(5), 2)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'a_min'"):
        np.clip(np.arange(5), a_max=2)
    with pytest.raises(ValueError, match="Passing `min` or `max` keyword argument when"):
        np.clip(np.arange(5), 2, 3, max=3)


@pytest.mark.parametrize("how", ["function", "function-keyword", "method", "method-keyword"])
def test_clip_writes_out_given_positionally_or_by_keyword(how):
    a = onp.arange(15.0).reshape(3, 5)
    results = []
    for m in (onp, np):
        x, out = m.asarray(a), m.zeros((3, 5), dtype=onp.int32 if how[0] == "m" else None)
        if how == "function":
            res = m.clip(x, 2, 9, out, casting="unsafe")
        elif how == "function-keyword":
            res = m.clip(x, 2, 9, out=out, casting="unsafe")
        elif how == "method":
            res = x.clip(2, 9, out, casting="unsafe")
        else:
            res = x.clip(2, 9, out=out, casting="unsafe")
        assert res is out
        results.append(onp.asarray(out))
    onp.testing.assert_array_equal(results[1], results[0])
    assert results[1].dtype == results[0].dtype


def test_clip_in_place_through_the_method():
    a = onp.arange(15.0).reshape(3, 5)
    x = np.asarray(a)
    x.clip(2, 9, out=x)
    onp.testing.assert_array_equal(onp.asarray(x), onp.clip(a, 2, 9))


_I8 = onp.array([1, -2, 3], dtype=onp.int8)
_F8 = onp.array([0.5, 2.5, -1.0])
_UFUNC_DTYPE_CALLS = {
    "maximum-f4": lambda m: m.maximum(_I8, _F8, dtype=onp.float32),
    "maximum-int-scalar-i2": lambda m: m.maximum(_I8, 2, dtype=onp.int16),
    "maximum-unsafe-input": lambda m: m.maximum(_F8, _I8, dtype=onp.int8),
    "less-bool": lambda m: m.less(_I8, _F8, dtype=bool),
    "less-no-loop": lambda m: m.less(_I8, _F8, dtype=float),
    "add-float-scalar-f4": lambda m: m.add(_I8, 1.5, dtype=onp.float32),
    "sin-f4": lambda m: m.sin(_I8, dtype=onp.float32),
    "minimum-numpy-scalar": lambda m: m.minimum(onp.int8(3), _F8, dtype=onp.float64),
    "add-lists": lambda m: m.add([1, 2], [3, 4], dtype=onp.float32),
    "dtype-None": lambda m: m.maximum(_I8, _F8, dtype=None),
    "with-out": lambda m: m.multiply(_I8, _I8, out=m.zeros(3, onp.float32), dtype=onp.float32),
}


@pytest.mark.parametrize("name", list(_UFUNC_DTYPE_CALLS))
def test_ufunc_dtype_keyword_is_numpys(name):
    call = _UFUNC_DTYPE_CALLS[name]
    seen = []
    for m in (onp, np):
        try:
            value = onp.asarray(call(m))
            seen.append((value.tolist(), value.dtype))
        except TypeError as err:  # NumPy's UFuncTypeError is a TypeError
            seen.append((type(err), str(err)))
    assert seen[1] == seen[0]


def test_ufunc_dtype_keyword_under_jit_and_grad():
    x = onp.array([0.5, -1.5, 2.0])
    f = mjcore.jit(lambda x: np.maximum(x, 0, dtype=np.float32))
    got = f(x)
    assert got.dtype == onp.float32
    onp.testing.assert_array_equal(onp.asarray(got), onp.maximum(x, 0, dtype=onp.float32))
    g = mjcore.grad(lambda x: np.sum(np.multiply(x, x, dtype=np.float64)))(x)
    onp.testing.assert_allclose(onp.asarray(g), 2 * x)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("shift", [2**100, -(2**100) - 1, 2**64 + 1])
def test_roll_by_a_python_int_beyond_int64_is_numpys(shift, axis):
    x = onp.arange(12).reshape(3, 4)
    onp.testing.assert_array_equal(np.roll(x, shift, axis), onp.roll(x, shift, axis))


def test_astype_refuses_lists_as_numpy():
    data = [[1, 2], [3, 4]]
    with pytest.raises(TypeError, match="Input should be a NumPy array"):
        onp.astype(data, onp.float64)
    with pytest.raises(TypeError, match="Input should be a NumPy array"):
        np.astype(data, np.float64)
    assert np.astype(onp.int64(10), np.float64).dtype == onp.float64


def test_outer_with_a_positional_out():
    a, b = onp.ones(5), onp.linspace(-2, 2, 5)
    out = np.ndarray(shape=(5, 5))
    res = np.outer(a, b, out)
    assert res is out
    onp.testing.assert_array_equal(onp.asarray(out), onp.outer(a, b))
    host_out = onp.zeros((2, 5))
    np.outer(onp.ones(2), b, host_out)
    onp.testing.assert_array_equal(host_out, onp.outer(onp.ones(2), b))


@pytest.mark.parametrize("atol", [onp.inf, onp.nan, 1.0], ids=str)
@pytest.mark.parametrize("rtol", [onp.inf, onp.nan, 1.0], ids=str)
def test_isclose_warns_of_non_finite_tolerances_as_numpy(atol, rtol):
    a = onp.array([1.0, 2.0, 3.0])
    seen = []
    for m in (onp, np):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = onp.asarray(m.isclose(a, a, atol=atol, rtol=rtol))
        seen.append((result.tolist(), [(w.category, str(w.message)) for w in caught]))
    assert seen[1] == seen[0]


def test_isclose_non_finite_tolerance_follows_errstate():
    a = onp.array([1.0, 2.0])
    with onp.errstate(invalid="raise"):
        with pytest.raises(FloatingPointError, match="One of rtol or atol is not valid"):
            np.isclose(a, a, atol=onp.nan)
    with onp.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        np.isclose(a, a, rtol=onp.inf)


def test_dtypes_is_numpys_dtype_classes():
    assert np.dtypes is onp.dtypes
    assert type(np.dtype("float32")) is np.dtypes.Float32DType


# --- the conformance harness's value checks -----------------------------------------------


def test_harness_sees_0d_arrays_as_numpy_scalars_and_converts_named_tuples():
    to_numpy = _numpy_under_test._to_numpy
    scalar = to_numpy(np.asarray(1.5, dtype=np.float16))
    assert type(scalar) is onp.float16 and scalar == onp.float16(1.5)
    assert type(to_numpy(np.arange(3))) is onp.ndarray
    res = to_numpy(np.linalg.slogdet(onp.eye(2)))
    assert type(res).__name__ == "SlogdetResult"
    assert type(res.sign) is onp.float64 and type(res.logabsdet) is onp.float64
    nested = to_numpy([np.ones(2), (np.asarray(3),)])
    assert type(nested[0]) is onp.ndarray and type(nested[1][0]) is onp.int64
    # NumPy's own check of two float16 scalars passes, where 0-d arrays would not.
    an = to_numpy(np.linalg.norm(onp.array([1, 0, 1], dtype=onp.float16), 2))
    onp.testing.assert_almost_equal(an, onp.float16(2.0) ** onp.float16(0.5), decimal=12)


# --- functions stored as class attributes -------------------------------------------------


def _binds(fun: object) -> bool:
    holder = type("Holder", (), {"f": fun})
    return holder().f is not fun


def _public_callables():
    for module, numpy_module in ((np, onp), (np.linalg, onp.linalg), (np.fft, onp.fft)):
        names = getattr(module, "__all__", [n for n in dir(module) if not n.startswith("_")])
        for name in names:
            ours, theirs = getattr(module, name), getattr(numpy_module, name, None)
            if callable(theirs) and not isinstance(theirs, type) and not isinstance(ours, type):
                yield f"{module.__name__}.{name}", ours, theirs


def test_functions_bind_as_methods_exactly_where_numpys_do():
    # NumPy's builtins (`array`, `zeros`, ...) and ufuncs do not bind when stored on a class
    # (`class T: array = np.array`, as test_linalg's norm and QR tests do); its Python-level
    # functions do.
    differ = [name for name, ours, theirs in _public_callables() if _binds(ours) != _binds(theirs)]
    assert differ == []
    assert not _binds(np.array) and _binds(np.linalg.norm)


def test_a_stored_array_function_is_called_as_itself():
    class Case:
        array = np.array
        zeros = np.zeros

    case = Case()
    got = case.array([[1, 2], [3, 4]], dtype=np.float32)
    assert got.dtype == onp.float32 and got.shape == (2, 2)
    assert case.zeros(3).shape == (3,)


def test_c_function_objects_keep_the_functions_identity():
    import inspect
    import pickle

    for fun in (np.array, np.asarray, np.zeros, np.arange, np.promote_types, np.from_dlpack):
        raw = fun.__wrapped__
        assert fun.__name__ == raw.__name__ and fun.__doc__ == raw.__doc__
        assert inspect.signature(fun) == inspect.signature(raw)
        assert pickle.loads(pickle.dumps(fun)) is fun
    assert onp.asarray(mjcore.jit(lambda x: np.asarray(x) * 2)(np.arange(3.0))).tolist() == [
        0,
        2,
        4,
    ]
    assert float(mjcore.grad(lambda x: np.sum(np.array(x) ** 2))(3.0)) == 6.0


# --- linalg.qr(mode="raw") ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "dtype"),
    [((3, 2), "float64"), ((2, 3), "float32"), ((4, 4), "complex128"), ((3, 2), "complex64")]
    + [((m, n), "float64") for m, n in ((0, 0), (0, 3), (3, 0))],
    ids=str,
)
def test_qr_raw_is_numpys(shape, dtype):
    rng = onp.random.default_rng(3)
    a = rng.normal(size=shape).astype(dtype)
    if onp.dtype(dtype).kind == "c":
        a = a + 1j * rng.normal(size=shape).astype(dtype)
    h, tau = np.linalg.qr(a, mode="raw")
    h_np, tau_np = onp.linalg.qr(a, mode="raw")
    tol = 1e-5 if onp.dtype(dtype).itemsize <= 8 else 1e-12
    for got, want in ((h, h_np), (tau, tau_np)):
        got = onp.asarray(got)
        assert got.dtype == want.dtype and got.shape == want.shape
        onp.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_geqrf_jit_and_vmap_match_eager_and_it_is_not_differentiable():
    from mjcore import lax

    a = onp.random.default_rng(4).normal(size=(3, 4, 3))
    eager = [onp.asarray(v) for v in lax.geqrf(a)]
    for transformed in (mjcore.jit(lax.geqrf)(a), mjcore.vmap(lax.geqrf)(a)):
        for got, want in zip(transformed, eager, strict=True):
            onp.testing.assert_allclose(onp.asarray(got), want, rtol=1e-12, atol=1e-12)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'geqrf'"):
        mjcore.jvp(lambda x: lax.geqrf(x)[0], (a[0],), (a[0],))
