"""mjnp.emath against numpy.emath: values and result dtypes (complex exactly where NumPy's
are), and a clear error where the values cannot be read (under transformations)."""

from __future__ import annotations

from typing import Any

import numpy
import pytest
from hypothesis import given
from hypothesis import strategies as st

import mjcore
import mjnp
from tests.differential_registry import differential
from tests.mjnp_testing import SETTINGS, arrays, assert_matches

REAL_INPUTS = [
    numpy.array([4.0, 9.0]),
    numpy.array([-4.0, 9.0]),
    numpy.array([0.25, -0.5], numpy.float32),
    numpy.array([-2.0, 1.0], numpy.float16),
    numpy.array([-1, 4], numpy.int8),
    numpy.array([1, 4], numpy.uint16),
    numpy.array([-8, 3], numpy.int64),
    numpy.array([2.0, 3.0]),
    numpy.array([1 + 1j, -4 + 0j], numpy.complex64),
    numpy.array([1.5, 0.5, -3.0]),
]


@pytest.mark.parametrize("name", ["sqrt", "log", "log2", "log10", "arccos", "arcsin", "arctanh"])
@pytest.mark.parametrize("x", REAL_INPUTS, ids=lambda a: f"{a.dtype}{a.tolist()}")
def test_unary_matches_numpy(name: str, x: numpy.ndarray) -> None:
    with numpy.errstate(all="ignore"):
        want = getattr(numpy.emath, name)(x)
    assert_matches(getattr(mjnp.emath, name)(mjnp.asarray(x)), want)


@pytest.mark.parametrize(
    ("x", "p"),
    [(numpy.array([-8.0, 4.0]), 0.5), (numpy.array([2, 3]), numpy.array([-1, 2])),
     (numpy.array([2, 3]), 2), (numpy.array([-2, 3]), 3), (numpy.array([-2.0], numpy.float32), 2)],
)  # fmt: skip
def test_power_matches_numpy(x: numpy.ndarray, p: Any) -> None:
    want = numpy.emath.power(x, p)
    p_mj = mjnp.asarray(p) if isinstance(p, numpy.ndarray) else p
    assert_matches(mjnp.emath.power(mjnp.asarray(x), p_mj), want)


def test_logn_and_python_scalars() -> None:
    assert_matches(mjnp.emath.logn(2, mjnp.asarray([8.0, -8.0])), numpy.emath.logn(2, [8.0, -8.0]))
    assert_matches(mjnp.emath.logn(-2, 8.0), numpy.asarray(numpy.emath.logn(-2, 8.0)))
    assert_matches(mjnp.emath.sqrt(-1), numpy.asarray(numpy.emath.sqrt(-1)))
    assert_matches(mjnp.emath.sqrt([4, 9]), numpy.emath.sqrt([4, 9]))
    assert_matches(mjnp.emath.log(-1.0), numpy.asarray(numpy.emath.log(-1.0)))


def test_traced_values_raise_clearly() -> None:
    with pytest.raises(mjcore.ConcretizationTypeError, match=r"mjnp\.emath\.sqrt.*complex"):
        mjcore.jit(mjnp.emath.sqrt)(mjnp.asarray([1.0]))
    with pytest.raises(mjcore.ConcretizationTypeError, match=r"mjnp\.emath\.arcsin"):
        mjcore.grad(lambda x: mjnp.emath.arcsin(x).real)(0.5)


@differential("emath.sqrt", "emath.log", "emath.log2", "emath.log10", "emath.arccos",
              "emath.arcsin", "emath.arctanh", "emath.power", "emath.logn")  # fmt: skip
@SETTINGS
@given(
    x=arrays(dtypes=("int8", "uint8", "int64", "float16", "float32", "float64", "complex64")),
    name=st.sampled_from(["sqrt", "log", "log2", "log10", "arccos", "arcsin", "arctanh"]),
    second=st.sampled_from([2, -1, 0.5, 3.0]),
)
def test_drawn_arrays_match_numpy(x: numpy.ndarray, name: str, second: Any) -> None:
    with numpy.errstate(all="ignore"):
        want = getattr(numpy.emath, name)(x)
        want_power = numpy.emath.power(x, second)
        want_logn = numpy.emath.logn(second, x)
    assert_matches(getattr(mjnp.emath, name)(mjnp.asarray(x)), want)
    assert_matches(mjnp.emath.power(mjnp.asarray(x), second), want_power)
    assert_matches(mjnp.emath.logn(second, mjnp.asarray(x)), want_logn)
