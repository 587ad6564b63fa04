"""NumPy's exception types and the features behind former NotImplementedErrors: astype's
casting rules and unique's axis, against NumPy (issue 20)."""

from __future__ import annotations

import numpy as np
import pytest

import mjnp
from tests.mjnp_testing import assert_matches

_CASTINGS = ["no", "equiv", "safe", "same_kind", "unsafe"]
_CAST_PAIRS = [
    ("float64", "int32"),
    ("float64", "float32"),
    ("float32", "float64"),
    ("int32", "int64"),
    ("int64", "int32"),
    ("int64", "bool"),
    ("bool", "int8"),
    ("uint8", "int8"),
    ("uint8", "int16"),
    ("complex128", "float64"),
    ("float64", "complex64"),
    ("float64", "float64"),
]


def _outcome(fun):
    try:
        result = fun()
    except Exception as err:  # noqa: BLE001  (the exception's type is what is compared)
        return type(err)
    return result


@pytest.mark.parametrize("casting", _CASTINGS)
@pytest.mark.parametrize("pair", _CAST_PAIRS, ids="-to-".join)
def test_astype_casting_as_numpy(pair, casting):
    src, dst = pair
    a = np.arange(3).astype(src)
    expected = _outcome(lambda: a.astype(dst, casting=casting))
    actual = _outcome(lambda: mjnp.asarray(a).astype(dst, casting=casting))
    if isinstance(expected, type):
        assert isinstance(actual, type) and issubclass(actual, expected.__mro__[0]), actual
    else:
        assert_matches(actual, expected)


def test_astype_bad_casting_name():
    for xp in (np, mjnp):
        with pytest.raises(ValueError, match="casting must be one of"):
            xp.zeros(2).astype(int, casting="sloppy")


_UNIQUE_INPUTS = [
    np.array([[1, 0, 0], [1, 0, 0], [2, 3, 4]]),
    np.array([[np.nan, 1.0], [np.nan, 1.0], [0.0, 2.0]]),
    np.zeros((0, 3)),
    np.zeros((2, 0)),
    np.random.RandomState(0).randint(0, 2, (6, 3, 2)),
    np.array([[1 + 1j, 2], [1 + 1j, 2], [0, 1j]]),
    np.array([True, False, True]),
    np.array([[-0.0, 1.0], [0.0, 1.0]]),
]


@pytest.mark.parametrize("flags", [(False, False, False), (True, True, True), (False, True, False)])
@pytest.mark.parametrize("case", range(len(_UNIQUE_INPUTS)))
def test_unique_axis_as_numpy(case, flags):
    a = _UNIQUE_INPUTS[case]
    for axis in [*range(a.ndim), -1]:
        kw = dict(zip(("return_index", "return_inverse", "return_counts"), flags, strict=True))
        expected = np.unique(a, axis=axis, **kw)
        actual = mjnp.unique(mjnp.asarray(a), axis=axis, **kw)
        if not isinstance(expected, tuple):
            expected, actual = (expected,), (actual,)
        assert len(actual) == len(expected)
        for e, r in zip(expected, actual, strict=True):
            assert r.dtype == e.dtype and r.shape == e.shape
            np.testing.assert_array_equal(np.asarray(r), e)


@pytest.mark.parametrize("axis", [2, -3, 1.5])
def test_unique_bad_axis_as_numpy(axis):
    a = np.zeros((2, 2))
    expected = _outcome(lambda: np.unique(a, axis=axis))
    with pytest.raises(expected):
        mjnp.unique(mjnp.asarray(a), axis=axis)
    with pytest.raises(np.exceptions.AxisError):
        mjnp.unique(mjnp.asarray(1.0), axis=0)
