"""Fixes found by NumPy's lib/tests/test_function_base.py (conformance.numpy_suite): `cov`
with `fweights`/`aweights`, its `rowvar=False` transpose rule and its errors and warnings,
each against NumPy as the oracle (values, dtypes, exception types, warnings in order)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as onp
import pytest

import mjcore
import mjnp as np

_RNG = onp.random.default_rng(0)
X = _RNG.random((3, 5))
FW = onp.array([1, 2, 0, 3, 1])
AW = _RNG.random(5)


def _a(xp: Any, v: Any) -> Any:
    return xp.asarray(v)


COV_CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("plain", lambda xp: xp.cov(_a(xp, X))),
    ("fweights", lambda xp: xp.cov(_a(xp, X), fweights=_a(xp, FW))),
    ("fweights list", lambda xp: xp.cov(_a(xp, X), fweights=list(FW))),
    ("aweights", lambda xp: xp.cov(_a(xp, X), aweights=_a(xp, AW))),
    ("both", lambda xp: xp.cov(_a(xp, X), fweights=_a(xp, FW), aweights=_a(xp, AW))),
    ("both ddof=0", lambda xp: xp.cov(_a(xp, X), fweights=_a(xp, FW), aweights=_a(xp, AW), ddof=0)),
    (
        "both bias",
        lambda xp: xp.cov(_a(xp, X), fweights=_a(xp, FW), aweights=_a(xp, AW), bias=True),
    ),
    ("both ddof=2", lambda xp: xp.cov(_a(xp, X), fweights=_a(xp, FW), aweights=_a(xp, AW), ddof=2)),
    ("complex aweights", lambda xp: xp.cov(_a(xp, X + 1j * X[::-1]), aweights=_a(xp, AW))),
    (
        "rowvar=False of m.T (gh-27658)",
        lambda xp: xp.cov(_a(xp, onp.ones((3, 1))).T, ddof=0, rowvar=False),
    ),
    ("y rowvar=False", lambda xp: xp.cov(_a(xp, X), _a(xp, X[:, :1]), rowvar=False)),
    (
        "unit weights",
        lambda xp: xp.cov(_a(xp, X), fweights=_a(xp, onp.ones(5)), aweights=_a(xp, onp.ones(5))),
    ),
    ("empty", lambda xp: xp.cov(_a(xp, onp.zeros((0, 3))))),
    # errors
    ("fweights not integer", lambda xp: xp.cov(_a(xp, X), fweights=_a(xp, FW + 0.5))),
    ("fweights negative", lambda xp: xp.cov(_a(xp, X), fweights=_a(xp, -FW))),
    ("fweights 2-d", lambda xp: xp.cov(_a(xp, X), fweights=_a(xp, onp.ones((2, 5))))),
    ("fweights length", lambda xp: xp.cov(_a(xp, X), fweights=_a(xp, onp.ones(4)))),
    ("aweights negative", lambda xp: xp.cov(_a(xp, X), aweights=_a(xp, -AW))),
    ("aweights 2-d", lambda xp: xp.cov(_a(xp, X), aweights=_a(xp, onp.ones((2, 5))))),
    ("ddof not integer", lambda xp: xp.cov(_a(xp, X), ddof=1.5)),
    ("weights sum to zero", lambda xp: xp.cov(_a(xp, X), aweights=_a(xp, onp.zeros(5)))),
    # "Degrees of freedom <= 0 for slice", then 1/0
    ("ddof too large", lambda xp: xp.cov(_a(xp, X), ddof=5)),
    ("one observation", lambda xp: xp.cov(_a(xp, [1.0]))),
    ("fweights sum 1", lambda xp: xp.cov(_a(xp, X), fweights=_a(xp, [1, 0, 0, 0, 0]))),
]


def _outcome(f: Callable[[], Any]) -> tuple[Any, list[tuple[type, str]]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result: Any = onp.asarray(f())
        except Exception as e:
            result = type(e)
    return result, [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("name,f", COV_CASES, ids=[c[0] for c in COV_CASES])
def test_cov_matches_numpy(name, f):
    want = _outcome(lambda: f(onp))
    got = _outcome(lambda: f(np))
    assert got[1] == want[1], f"{name}: warnings {got[1]} != NumPy's {want[1]}"
    if isinstance(want[0], type):
        assert got[0] is want[0], (got[0], want[0])
        return
    assert got[0].dtype == want[0].dtype and got[0].shape == want[0].shape
    onp.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-14)


def test_weighted_cov_under_jit_equals_numpy():
    f = mjcore.jit(lambda x, fw, aw: np.cov(x, fweights=fw, aweights=aw, ddof=2))
    got = f(np.asarray(X), np.asarray(FW), np.asarray(AW))
    onp.testing.assert_allclose(
        onp.asarray(got), onp.cov(X, fweights=FW, aweights=AW, ddof=2), rtol=1e-12
    )


@pytest.mark.parametrize("fname", ["insert", "delete"])
@pytest.mark.parametrize("axis", [0, "nonsense", 1.5])
def test_insert_delete_of_0d_check_the_axis_type_first(fname, axis):
    def call(xp: Any) -> Any:
        a = xp.asarray(1)
        return xp.insert(a, [], 2, axis=axis) if fname == "insert" else xp.delete(a, [], axis=axis)

    with pytest.raises(Exception) as want:
        call(onp)
    with pytest.raises(type(want.value), match=str(want.value)):
        call(np)


PIECEWISE_CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("int array condition", lambda xp: xp.piecewise(xp.asarray([0, 0]), xp.asarray([1, 0]), [1])),
    (
        "list of int arrays",
        lambda xp: xp.piecewise(xp.asarray([0, 0]), [xp.asarray([1, 0])], [1]),
    ),
    (
        "float conditions",
        lambda xp: xp.piecewise(xp.asarray([1.0, 2.0]), [xp.asarray([0.5, 0.0])], [7.0, 9.0]),
    ),
    ("0-d comparison", lambda xp: xp.piecewise(xp.asarray(3), xp.asarray(3) > 3, [4, 0])),
    ("bool list", lambda xp: xp.piecewise(xp.asarray([0, 0]), [True, False], [1])),
]


@pytest.mark.parametrize("name,f", PIECEWISE_CASES, ids=[c[0] for c in PIECEWISE_CASES])
def test_piecewise_takes_conditions_as_bool_like_numpy(name, f):
    want, got = f(onp), f(np)
    assert got.dtype == want.dtype and got.shape == want.shape
    onp.testing.assert_array_equal(onp.asarray(got), want)


def test_piecewise_function_count_error_has_numpys_text():
    for funcs in ([], [1, 2, 3]):
        with pytest.raises(ValueError, match="1 or 2 functions are expected"):
            np.piecewise(np.asarray([0, 0]), [[False, True]], funcs)


@pytest.mark.parametrize(
    "x,bins", [([1, 2, 3 + 1j], [1, 2, 3]), ([1, 2, 3], [1, 2, 3 + 1j])], ids=["x", "bins"]
)
def test_digitize_refuses_complex_as_numpy(x, bins):
    with pytest.raises(TypeError):
        onp.digitize(x, bins)
    with pytest.raises(TypeError):
        np.digitize(x, bins)
    with pytest.raises(TypeError):
        np.digitize(np.asarray(x), np.asarray(bins))


def test_digitize_still_matches_numpy():
    x, bins = onp.array([0.2, 6.4, 3.0, 1.6, -1.0]), onp.array([0.0, 1.0, 2.5, 4.0, 10.0])
    for b in (bins, bins[::-1]):
        for right in (False, True):
            got = np.digitize(np.asarray(x), np.asarray(b), right=right)
            onp.testing.assert_array_equal(onp.asarray(got), onp.digitize(x, b, right=right))


@pytest.mark.parametrize("dtype", [onp.float16, onp.float32, onp.float64, onp.complex64])
@pytest.mark.parametrize("weighted", [False, True])
def test_cov_and_corrcoef_keep_the_requested_dtype(dtype, weighted):
    x = onp.array([[0, 2], [1, 1], [2, 0]]).T.astype(dtype)
    kw_np = {"aweights": AW[:3]} if weighted else {}
    kw_mj = {"aweights": np.asarray(AW[:3])} if weighted else {}
    want = onp.cov(x, dtype=dtype, **kw_np)
    got = np.cov(np.asarray(x), dtype=dtype, **kw_mj)
    assert got.dtype == want.dtype
    onp.testing.assert_allclose(onp.asarray(got), want, rtol=1e-3 if dtype == onp.float16 else 1e-6)
    want = onp.corrcoef(x, dtype=dtype)
    got = np.corrcoef(np.asarray(x), dtype=dtype)
    assert got.dtype == want.dtype
    onp.testing.assert_allclose(onp.asarray(got), want, rtol=1e-3 if dtype == onp.float16 else 1e-6)


@pytest.mark.parametrize("out_shape", [(1,), (2, 3)])
@pytest.mark.parametrize("method", ["linear", "midpoint", "hazen"])
def test_percentile_out_may_be_a_shape_the_result_broadcasts_to(out_shape, method):
    d = onp.arange(5.0)
    want_out, got_out = onp.ones(out_shape), np.ones(out_shape)
    want = onp.percentile(d, 5, None, want_out, False, method)
    got = np.percentile(np.asarray(d), 5, None, got_out, False, method)
    assert got is got_out and want is want_out
    onp.testing.assert_array_equal(onp.asarray(got_out), want_out)
    with pytest.raises(ValueError):
        np.percentile(np.asarray(d), [5, 10], None, np.ones((3,)), False, method)


def test_percentile_out_of_a_discrete_method_must_match_as_numpys_take():
    for xp in (onp, np):
        with pytest.raises(ValueError):
            xp.percentile(xp.asarray(onp.arange(5.0)), 5, None, xp.ones((1,)), False, "lower")
