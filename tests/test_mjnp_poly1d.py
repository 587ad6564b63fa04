"""`mjnp.poly1d` against `numpy.poly1d`: construction, attributes, arithmetic, indexing by
power, calculus, printing, the poly* functions' poly1d results, and evaluation under jit, grad
and vmap."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import mjcore
import mjnp
from tests.mjnp_testing import assert_matches


def _check_same(actual: Any, expected: Any) -> None:
    """A poly1d as NumPy's (type, variable, coefficients' dtype and values), a tuple element by
    element, anything else as an array."""
    if isinstance(expected, np.poly1d):
        assert isinstance(actual, mjnp.poly1d), type(actual)
        assert actual.variable == expected.variable
        assert_matches(actual.coeffs, expected.coeffs)
    elif isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            _check_same(a, e)
    else:
        assert_matches(actual, expected)


def _both(fn: Callable[[Any], Any]) -> None:
    """`fn(numpy)` and `fn(mjnp)` agree, or raise the same exception type."""
    try:
        expected = fn(np)
    except Exception as err:  # NumPy's error is the expectation
        with pytest.raises(type(err)):
            fn(mjnp)
        return
    _check_same(fn(mjnp), expected)


# --- construction and printing --------------------------------------------------------------

CONSTRUCT: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "int": (([1, 2, 3],), {}),
    "leading-zeros": (([0, 0, 1.5, -2],), {}),
    "empty": (([],), {}),
    "all-zero": (([0, 0],), {}),
    "scalar": ((2.0,), {}),
    "int-scalar": ((7,), {}),
    "float32": ((np.array([1, 0, 2], np.float32),), {}),
    "float16": ((np.array([0.5, 1], np.float16),), {}),
    "uint8": ((np.array([0, 3, 1], np.uint8),), {}),
    "bool": (([True, False],), {}),
    "complex": (([1 + 2j, 0, 3j],), {}),
    "complex-real-part-zero": (([2j, -1j, 0.5],), {}),
    "negative": (([-1, -2, 0, -3],), {}),
    "minus-zero": (([1.0, -0.0, 2.0],), {}),
    "roots": (([1, 2],), {"r": True}),
    "complex-roots": (([1j, -1j],), {"r": True}),
    "no-roots": (([],), {"r": True}),
    "variable": (([1, 2, 3],), {"variable": "z"}),
    "long-name": (([3.25, -1, 0, 4],), {"variable": "lambda"}),
    "wraps": ((np.arange(1.0, 31.0) / 7,), {}),
    "big-powers": ((np.arange(1, 14),), {}),
    "small-and-large": (([1e-9, 123456.0, 1.00001],), {}),
    "2d": (([[1, 2], [3, 4]],), {}),
}


@pytest.mark.parametrize("case", list(CONSTRUCT), ids=list(CONSTRUCT))
def test_construction_matches_numpy(case):
    args, kwargs = CONSTRUCT[case]
    _both(lambda m: m.poly1d(*args, **kwargs))


@pytest.mark.parametrize("case", [c for c in CONSTRUCT if c != "2d"])
def test_str_and_repr_match_numpy(case):
    args, kwargs = CONSTRUCT[case]
    expected, got = np.poly1d(*args, **kwargs), mjnp.poly1d(*args, **kwargs)
    if case in ("roots", "complex-roots"):  # computed coefficients: compare exact ones only
        expected = np.poly1d(np.round(expected.coeffs, 12))
        got = mjnp.poly1d(np.round(np.asarray(got.coeffs), 12))
    assert str(got) == str(expected)
    assert repr(got) == repr(expected)


def test_str_after_setitem_keeps_numpy_layout():
    expected, got = np.poly1d([1.0, 2.0, 3.0]), mjnp.poly1d([1.0, 2.0, 3.0])
    for p in (expected, got):
        p[2] = 0.0  # a leading zero that construction would have trimmed
        p[5] = -1.5
    assert str(got) == str(expected)
    assert repr(got) == repr(expected)


def test_constructor_errors_and_copies():
    with pytest.raises(ValueError, match=r"mjnp\.poly1d: Polynomial must be 1d only"):
        mjnp.poly1d(np.ones((2, 2)))
    p = mjnp.poly1d([1.0, 2.0], variable="s")
    q = mjnp.poly1d(p)
    assert q is not p and q.coeffs is p.coeffs and q.variable == "s"
    assert mjnp.poly1d(p, variable="t").variable == "t"
    assert isinstance(p.coeffs, mjcore.Array)
    assert mjnp.poly1d.__hash__ is None


def test_attributes():
    expected, got = np.poly1d([2, 0, -8]), mjnp.poly1d([2, 0, -8])
    for name in ("coeffs", "c", "coef", "coefficients"):
        assert_matches(getattr(got, name), getattr(expected, name))
    assert got.order == got.o == expected.order == 2
    assert got.variable == "x"
    assert len(got) == len(expected) == 2
    np.testing.assert_allclose(np.sort(np.asarray(got.roots)), np.sort(expected.roots))
    np.testing.assert_allclose(np.sort(np.asarray(got.r)), np.sort(expected.r))
    assert [int(c) for c in got] == [int(c) for c in expected]
    assert_matches(np.asarray(got), np.asarray(expected))
    assert np.asarray(got, "float32").dtype == np.float32
    assert_matches(mjnp.asarray(got), np.asarray(expected))


def test_coeffs_setter():
    p = mjnp.poly1d([1, 2, 3])
    p.coeffs = p.coeffs  # NumPy allows setting the same array
    p.coeffs *= 2  # in place in NumPy; a same-shape, same-dtype array here
    assert_matches(p.coeffs, np.array([2, 4, 6]))
    with pytest.raises(AttributeError, match=r"mjnp\.poly1d: cannot set attribute coeffs"):
        p.coeffs = [1, 2]
    with pytest.raises(AttributeError, match="same shape"):
        p.coeffs = mjnp.array([1.0, 2.0, 3.0])
    with pytest.raises(AttributeError):
        p.variable = "y"
    with pytest.raises(AttributeError):
        p.order = 3


# --- arithmetic ---------------------------------------------------------------------------

P = [1, 2, 3]
Q = [2.0, -1.0]

OPS: dict[str, Callable[[Any], Any]] = {
    "mul-scalar": lambda m: m.poly1d(P) * 2,
    "rmul-scalar": lambda m: 2.5 * m.poly1d(P),
    "mul-numpy-scalar": lambda m: m.poly1d(np.array(P, np.float32)) * np.float64(2),
    "mul-float32-python": lambda m: m.poly1d(np.array(P, np.float32)) * 2.0,
    "mul-poly": lambda m: m.poly1d(P) * m.poly1d(Q),
    "mul-list": lambda m: m.poly1d(P) * [1, 1],
    "rmul-list": lambda m: [1, 1] * m.poly1d(P),
    "mul-0d-array": lambda m: m.poly1d(P) * m.asarray(2.0),
    "mul-zero": lambda m: m.poly1d(P) * 0,
    "add-poly": lambda m: m.poly1d(P) + m.poly1d(Q),
    "add-scalar": lambda m: m.poly1d(P) + 1,
    "radd-scalar": lambda m: 1.5 + m.poly1d(P),
    "radd-list": lambda m: [1, 1] + m.poly1d(P),
    "sub-poly": lambda m: m.poly1d(P) - m.poly1d(Q),
    "sub-self": lambda m: m.poly1d(P) - m.poly1d(P),
    "rsub-scalar": lambda m: 1 - m.poly1d(P),
    "rsub-list": lambda m: [1, 1, 1, 1] - m.poly1d(P),
    "neg": lambda m: -m.poly1d(Q),
    "pos": lambda m: +m.poly1d(Q),
    "pow-0": lambda m: m.poly1d(Q) ** 0,
    "pow-3": lambda m: m.poly1d(P) ** 3,
    "pow-float32": lambda m: m.poly1d(np.array(Q, np.float32)) ** 2,
    "pow-numpy-int": lambda m: m.poly1d(P) ** np.int64(2),
    "pow-negative": lambda m: m.poly1d(P) ** -1,
    "pow-fraction": lambda m: m.poly1d(P) ** 1.5,
    "pow-float-integer": lambda m: m.poly1d(P) ** 2.0,
    "pow-list": lambda m: m.poly1d(P) ** [2],
    "div-scalar": lambda m: m.poly1d(P) / 2,
    "rdiv-scalar": lambda m: 3 / m.poly1d(P),
    "div-poly": lambda m: m.poly1d(P) / m.poly1d(Q),
    "div-list": lambda m: m.poly1d(P) / [1, 1],
    "rdiv-list": lambda m: [1, 2, 3, 4] / m.poly1d(Q),
    "div-constant": lambda m: m.poly1d(P) / m.poly1d(2),
    "deriv": lambda m: m.poly1d(P).deriv(),
    "deriv-2": lambda m: m.poly1d(P).deriv(2),
    "deriv-0": lambda m: m.poly1d(P).deriv(0),
    "deriv-negative": lambda m: m.poly1d(P).deriv(-1),
    "deriv-constant": lambda m: m.poly1d(5).deriv(),
    "integ": lambda m: m.poly1d(P).integ(),
    "integ-float32": lambda m: m.poly1d(np.array(Q, np.float32)).integ(),
    "integ-k": lambda m: m.poly1d(P).integ(2, k=3),
    "integ-ks": lambda m: m.poly1d(P).integ(2, k=[1, 2]),
    "integ-0": lambda m: m.poly1d(P).integ(0),
    "integ-negative": lambda m: m.poly1d(P).integ(-1),
    "integ-short-k": lambda m: m.poly1d(P).integ(3, k=[1, 2]),
    "getitem": lambda m: m.poly1d(P)[0],
    "getitem-top": lambda m: m.poly1d(P)[2],
    "getitem-above": lambda m: m.poly1d(P)[5],
    "getitem-negative": lambda m: m.poly1d(Q)[-1],
    "call-scalar": lambda m: m.poly1d(P)(2),
    "call-float": lambda m: m.poly1d(P)(2.5),
    "call-float32-array": lambda m: m.poly1d(P)(m.asarray(np.array([1, 2], np.float32))),
    "call-numpy-array": lambda m: m.poly1d(Q)(np.arange(6.0).reshape(2, 3)),
    "call-complex": lambda m: m.poly1d(Q)(1j),
    "call-poly": lambda m: m.poly1d(P)(m.poly1d(Q)),
    "call-poly-int": lambda m: m.poly1d(P)(m.poly1d([1, 1])),
}


@pytest.mark.parametrize("case", list(OPS), ids=list(OPS))
def test_operations_match_numpy(case):
    _both(OPS[case])


@pytest.mark.parametrize(
    "op",
    [
        lambda a, p: a * p,
        lambda a, p: a + p,
        lambda a, p: a - p,
        lambda a, p: a / p,
    ],
    ids=["mul", "add", "sub", "div"],
)
def test_array_on_the_left_is_elementwise(op):
    # As with NumPy arrays, an array operand converts the poly1d to its coefficients.
    expected = op(np.array([1.0, 2.0, 4.0]), np.poly1d(P))
    got = op(mjnp.array([1.0, 2.0, 4.0]), mjnp.poly1d(P))
    assert_matches(got, expected)
    assert_matches(op(mjnp.asarray(2.0), mjnp.poly1d(P)), op(np.asarray(2.0), np.poly1d(P)))


def test_pow_errors_name_the_class():
    with pytest.raises(ValueError, match=r"mjnp\.poly1d: Power to non-negative integers only"):
        mjnp.poly1d(P) ** -1
    with pytest.raises(TypeError, match=r"mjnp\.poly1d: the power must be an integer"):
        mjnp.poly1d(P) ** 2.0


def test_equality():
    p = mjnp.poly1d([1, 2, 3])
    assert p == mjnp.poly1d([0, 1, 2, 3])
    assert p == mjnp.poly1d([1.0, 2.0, 3.0])
    assert not p != mjnp.poly1d([1, 2, 3])
    assert p != mjnp.poly1d([1, 2, 4])
    assert p != mjnp.poly1d([1, 2])
    assert (p == mjnp.poly1d([1, 2])) is False
    assert (p == [1, 2, 3]) is False  # NotImplemented both ways: identity
    assert p != 3
    assert np.poly1d([1, 2, 3]) != 3


def test_setitem_matches_numpy():
    expected, got = np.poly1d([1, 2, 3]), mjnp.poly1d([1, 2, 3])
    steps = [(0, 7), (2, -1), (4, 5), (1, 2.7)]
    for key, val in steps:
        expected[key] = val
        got[key] = val
        assert_matches(got.coeffs, expected.coeffs)
        assert got.order == expected.order
    with pytest.raises(ValueError, match=r"mjnp\.poly1d: Does not support negative powers"):
        got[-1] = 1
    with pytest.raises(ValueError):
        expected[-1] = 1


def test_setitem_rebinds_only_this_polynomial():
    p = mjnp.poly1d([1.0, 2.0])
    q = mjnp.poly1d(p)
    old = p.coeffs
    p[0] = 9.0
    assert_matches(p.coeffs, np.array([1.0, 9.0]))
    assert_matches(q.coeffs, np.array([1.0, 2.0]))  # NB: NumPy's q shares p's buffer
    assert_matches(old, np.array([1.0, 2.0]))


# --- the poly* functions with poly1d arguments ----------------------------------------------

FUNCTIONS: dict[str, Callable[[Any], Any]] = {
    "polyadd": lambda m: m.polyadd(m.poly1d(P), Q),
    "polyadd-right": lambda m: m.polyadd(P, m.poly1d(Q)),
    "polysub": lambda m: m.polysub(m.poly1d(P), m.poly1d(Q)),
    "polymul": lambda m: m.polymul(P, m.poly1d(Q)),
    "polymul-arrays": lambda m: m.polymul(P, Q),
    "polyder": lambda m: m.polyder(m.poly1d(P)),
    "polyder-0": lambda m: m.polyder(m.poly1d(P), 0),
    "polyint": lambda m: m.polyint(m.poly1d(P), 2),
    "polyint-0": lambda m: m.polyint(m.poly1d(P), 0),
    "polydiv": lambda m: m.polydiv(m.poly1d(P), Q),
    "polydiv-right": lambda m: m.polydiv(P, m.poly1d(Q)),
    "polyval-poly-coeffs": lambda m: m.polyval(m.poly1d(P), 1.5),
    "polyval-at-poly": lambda m: m.polyval([3, 0, 1], m.poly1d(5)),
    "polyval-both-poly": lambda m: m.polyval(m.poly1d(P), m.poly1d(Q)),
    "roots": lambda m: m.roots(m.poly1d([1.0, -3.0, 2.0])),
    "poly": lambda m: m.poly(m.poly1d([1.0, 2.0])),
}


@pytest.mark.parametrize("case", list(FUNCTIONS), ids=list(FUNCTIONS))
def test_polynomial_functions_return_poly1d_like_numpy(case):
    _both(FUNCTIONS[case])


# --- transformations ------------------------------------------------------------------------


def test_call_under_jit_grad_vmap():
    p, expected = mjnp.poly1d([1.0, -2.0, 0.5, 3.0]), np.poly1d([1.0, -2.0, 0.5, 3.0])
    xs = np.linspace(-2.0, 2.0, 5)
    assert_matches(mjcore.jit(p)(xs), expected(xs))
    assert_matches(mjcore.jit(lambda x: p(x))(1.5), expected(np.float64(1.5)))
    assert_matches(mjcore.vmap(p)(xs), expected(xs))
    for x in xs:
        assert_matches(mjcore.grad(p)(x), expected.deriv()(x))
        assert_matches(mjcore.grad(mjcore.grad(p))(x), expected.deriv(2)(x))
    assert_matches(mjcore.vmap(mjcore.grad(p))(xs), expected.deriv()(xs))


def test_grad_with_respect_to_coefficients():
    c = np.array([1.0, -2.0, 0.5])

    def value(coeffs, x):
        return mjnp.poly1d(coeffs)(x)

    x = 1.5
    assert_matches(mjcore.grad(value)(c, x), x ** np.arange(2, -1, -1))
    assert_matches(mjcore.jit(mjcore.grad(value))(c, x), x ** np.arange(2, -1, -1))

    def squared_at(coeffs, x):  # d/dc of (p*p)(x) = 2 p(x) x**k
        p = mjnp.poly1d(coeffs)
        return (p * p)(x) + p.deriv()(x)

    expected = 2 * np.polyval(c, x) * x ** np.arange(2, -1, -1) + np.array([2 * x, 1.0, 0.0])
    assert_matches(mjcore.grad(squared_at)(c, x), expected)


def test_vmap_over_coefficients_and_jit_of_arithmetic():
    cs = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]])
    got = mjcore.vmap(lambda c: mjnp.poly1d(c)(2.0))(cs)
    assert_matches(got, np.array([np.polyval(c, 2.0) for c in cs]))

    def composed(m, c):
        p = m.poly1d(c)
        return (p(p) + 2 * p - p.integ()).coeffs

    expected = np.stack([composed(np, c) for c in cs])
    assert_matches(mjcore.jit(lambda c: composed(mjnp, c))(cs[0]), expected[0])
    assert_matches(mjcore.vmap(lambda c: composed(mjnp, c))(cs), expected)


def test_traced_polynomials_print_their_tracer_and_compare_traced():
    seen = []

    def f(c):
        p = mjnp.poly1d(c)
        seen.append((repr(p), str(p)))
        return p == mjnp.poly1d(c), p != mjnp.poly1d(c)

    eq, ne = mjcore.jit(f)(np.array([1.0, 2.0]))
    assert bool(eq) and not bool(ne)
    assert seen[0][0].startswith("poly1d(") and "Tracer" in seen[0][0]
    assert seen[0][1] == seen[0][0]
