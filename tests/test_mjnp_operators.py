"""The NumPy operator and method surface of mjnp arrays and tracers (mjnp/_array_surface.py)."""

from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import mjcore
import mjnp
from tests.mjnp_testing import SETTINGS, assert_matches

BINARY_OPERATORS = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "floordiv": operator.floordiv,
    "mod": operator.mod,
    "pow": operator.pow,
    "and": operator.and_,
    "or": operator.or_,
    "xor": operator.xor,
    "lshift": operator.lshift,
    "rshift": operator.rshift,
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}
UNARY_OPERATORS = {"neg": operator.neg, "pos": operator.pos, "abs": abs, "invert": operator.invert}
OPERAND_DTYPES = ("bool", "int8", "uint8", "int64", "float32", "float64", "complex64")


def _numpy(fun, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fun(*args)


def _values(seed: int, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Small positive values: every operator is defined on them for every dtype."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    return np.asarray(rng.integers(1, 4, size=shape), dtype)


def _check_operator(op, a, b):
    """`op` on mjnp arrays (or mixed operands) matches `op` on NumPy arrays, errors included."""
    mj_a = mjnp.asarray(a) if isinstance(a, np.ndarray) else a
    mj_b = mjnp.asarray(b) if isinstance(b, np.ndarray) else b
    try:
        expected = _numpy(op, a, b)
    except Exception as err:  # NumPy's exception type is the expectation
        base = next(t for t in type(err).__mro__ if t.__module__ == "builtins")
        with pytest.raises(base):
            op(mj_a, mj_b)
        return
    out = op(mj_a, mj_b)
    assert isinstance(out, mjcore.Array)
    assert_matches(out, expected)


@pytest.mark.parametrize("name", sorted(BINARY_OPERATORS))
@SETTINGS
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, min_side=0, max_side=3),
    dtypes=st.tuples(st.sampled_from(OPERAND_DTYPES), st.sampled_from(OPERAND_DTYPES)),
    seed=st.integers(0, 2**16),
)
def test_binary_operators_match_numpy(name, shapes, dtypes, seed):
    s1, s2 = shapes.input_shapes
    a, b = _values(seed, s1, dtypes[0]), _values(seed + 1, s2, dtypes[1])
    _check_operator(BINARY_OPERATORS[name], a, b)


@pytest.mark.parametrize("name", sorted(BINARY_OPERATORS))
@pytest.mark.parametrize("dtype", OPERAND_DTYPES)
def test_binary_operators_with_python_scalars(name, dtype):
    op = BINARY_OPERATORS[name]
    a = _values(0, (3,), dtype)
    for scalar in (True, 2, 2.0, 1j, 300):
        if name == "pow" and scalar == 300 and dtype.startswith("complex"):
            continue  # NB: overflowing complex powers are inf+nanj in XLA, inf+0j in NumPy
        _check_operator(op, a, scalar)  # __op__
        _check_operator(op, scalar, a)  # __rop__


@pytest.mark.parametrize("name", sorted(UNARY_OPERATORS))
@pytest.mark.parametrize("dtype", OPERAND_DTYPES)
def test_unary_operators(name, dtype):
    op = UNARY_OPERATORS[name]
    a = _values(0, (2, 3), dtype)
    try:
        expected = _numpy(op, a)
    except TypeError:
        with pytest.raises(TypeError):
            op(mjnp.asarray(a))
        return
    assert_matches(op(mjnp.asarray(a)), expected)


def test_matmul_and_divmod_and_round():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(3.0)
    assert_matches(mjnp.asarray(a) @ b, a @ b)
    assert_matches(a @ mjnp.asarray(b), a @ b)
    x = np.array([7, -7, 5])
    q, r = divmod(mjnp.asarray(x), 3)
    assert_matches(q, x // 3)
    assert_matches(r, x % 3)
    q, r = divmod(-7.5, mjnp.asarray([2.0, -2.0]))
    assert_matches(q, np.array([-7.5 // 2, -7.5 // -2]))
    assert_matches(round(mjnp.asarray([1.5, 2.5, -0.5])), np.round([1.5, 2.5, -0.5]))
    assert_matches(round(mjnp.asarray([1.25, 2.75]), 1), np.round([1.25, 2.75], 1))


def test_pow_half_is_sqrt_like_numpy():
    x = np.array([-0.0, 4.0, -np.inf, np.inf], np.float32)
    with np.errstate(invalid="ignore"):
        assert_matches(mjnp.asarray(x) ** 0.5, x**0.5)
    assert_matches(mjnp.asarray(x) ** 2, x**2)
    with pytest.raises(ValueError, match="negative integer powers"):
        mjnp.asarray([1, 2]) ** -1


def test_numpy_operands_defer_to_mjnp():
    x = mjnp.asarray([1.0, 2.0, 3.0], dtype=np.float32)
    a = np.array([1.0, 2.0, 3.0])
    for out, expected in [
        (a * x, a * np.asarray(x)),
        (a + x, a + np.asarray(x)),
        (a < x, a < np.asarray(x)),
        (np.float32(2) * x, np.float32(2) * np.asarray(x)),
        (np.float64(2) - x, np.float64(2) - np.asarray(x)),
        (np.int8(2) ** x, np.int8(2) ** np.asarray(x)),
    ]:
        assert isinstance(out, mjcore.Array)
        assert_matches(out, expected)


def test_comparisons_with_non_arrays():
    x = mjnp.asarray([1, 2])
    assert (x == None) is False  # noqa: E711  (the operator itself is under test)
    assert (x != "a") is True
    assert (x == object()) is False
    with pytest.raises(TypeError):
        x < None  # noqa: B015  (the operator itself is under test)
    with pytest.raises(TypeError):
        x + "a"
    with pytest.raises(TypeError):
        "a" * x
    assert_matches(x == [1, 3], np.array([True, False]))
    assert_matches((1, 2) + x, np.array([2, 4]))


def test_errors_from_operators():
    with pytest.raises(ValueError, match=r"mjnp.add: .* shapes \(2,\) \(3,\)"):
        mjnp.ones(2) + mjnp.ones(3)
    with pytest.raises(OverflowError, match="300 out of bounds for uint8"):
        mjnp.asarray([1, 2], np.uint8) + 300
    with pytest.raises(TypeError, match="boolean subtract"):
        mjnp.asarray([True]) - True
    with pytest.raises(TypeError, match="boolean negative"):
        -mjnp.asarray([True])
    with pytest.raises(TypeError, match="mjnp.bitwise_and"):
        mjnp.ones(2) & 1


def test_in_place_operators_rebind():
    # As NumPy's: `x op= y` writes into the object x, so every name bound to it sees the write.
    x = mjnp.asarray([1.0, 2.0])
    y = x
    x += 1
    x *= 2
    a = np.asarray([1.0, 2.0])
    b = a
    a += 1
    a *= 2
    assert_matches(x, a)
    assert_matches(y, b)


# --- methods and properties -----------------------------------------------------------------


def test_methods_and_properties_match_numpy():
    a = np.arange(6.0).reshape(2, 3) - 2.5
    x = mjnp.asarray(a)
    cases = [
        (x.reshape(3, 2), a.reshape(3, 2)),
        (x.reshape((3, 2)), a.reshape((3, 2))),
        (x.reshape(-1), a.reshape(-1)),
        (x.transpose(), a.transpose()),
        (x.transpose(1, 0), a.transpose(1, 0)),
        (x.transpose((1, 0)), a.transpose((1, 0))),
        (x.T, a.T),
        (x.mT, a.mT),
        (x.astype(np.int32), a.astype(np.int32)),
        (x.astype("complex64"), a.astype("complex64")),
        (x.sum(), a.sum()),
        (x.sum(axis=0), a.sum(axis=0)),
        (x.mean(1), a.mean(1)),
        (x.max(), a.max()),
        (x.min(axis=1, keepdims=True), a.min(axis=1, keepdims=True)),
        (x.prod(), a.prod()),
        (x.argmax(), a.argmax()),
        (x.argmin(axis=0), a.argmin(axis=0)),
        (x.all(), a.all()),
        (x.any(axis=1), a.any(axis=1)),
        (x.ravel(), a.ravel()),
        (x.flatten(), a.flatten()),
        (x.reshape(1, 2, 3).squeeze(), a.reshape(1, 2, 3).squeeze()),
        (x.swapaxes(0, 1), a.swapaxes(0, 1)),
        (x.copy(), a.copy()),
        (x.round(), a.round()),
        (x.clip(-1, 1), a.clip(-1, 1)),
        (x.clip(min=0), a.clip(min=0)),
        (x.conj(), a.conj()),
        (x.real, a.real),
        (x.imag, a.imag),
        (x.dot(np.ones(3)), a.dot(np.ones(3))),
        (x[1], a[1]),
        (x[:, ::-1], a[:, ::-1]),
    ]
    for out, expected in cases:
        assert_matches(out, expected)
    z = mjnp.asarray([1 + 2j, 3 - 4j])
    assert_matches(z.real, np.array([1.0, 3.0]))
    assert_matches(z.imag, np.array([2.0, -4.0]))
    assert_matches(z.conjugate(), np.array([1 - 2j, 3 + 4j]))
    assert x.__array_namespace__() is mjnp
    with pytest.raises(ValueError, match="ndim < 2"):
        _ = mjnp.ones(3).mT


# --- tracers --------------------------------------------------------------------------------


def _program(x):
    return x * 2 + mjnp.sin(x) - 1 / (1 + x**2) + abs(-x) // 0.5 + (x > 0.3) * x


def _numpy_program(x):
    return x * 2 + np.sin(x) - 1 / (1 + x**2) + abs(-x) // 0.5 + (x > 0.3) * x


def test_operators_under_vmap():
    x = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    assert_matches(mjcore.vmap(_program)(x), _numpy_program(x))
    assert_matches(mjcore.vmap(_program, in_axes=1, out_axes=1)(x), _numpy_program(x))
    out = mjcore.vmap(lambda r: r.sum() * r.T + r[0])(x.reshape(3, 2, 2))
    expected = np.stack([r.sum() * r.T + r[0] for r in x.reshape(3, 2, 2)])
    assert_matches(out, expected)


def test_operators_under_jvp():
    x = np.array([0.1, 0.5, 2.0])
    t = np.array([1.0, 0.5, -1.0])
    primal, tangent = mjcore.jvp(lambda a: a * 2 + mjnp.sin(a), (x,), (t,))
    assert_matches(primal, x * 2 + np.sin(x))
    assert_matches(tangent, (2 + np.cos(x)) * t)
    primal, tangent = mjcore.jvp(lambda a: (a**3 - 1 / a) @ a, (x,), (t,))
    assert_matches(primal, (x**3 - 1 / x) @ x)
    assert_matches(tangent, ((3 * x**2 + 1 / x**2) * x + (x**3 - 1 / x)) @ t)


def test_operators_under_jit_and_composition():
    x = np.linspace(-1.0, 1.0, 8)
    assert_matches(mjcore.jit(_program)(x), _numpy_program(x))
    grad = mjcore.vmap(mjcore.grad(lambda a: mjnp.sin(a) * a**2))(x)
    assert_matches(grad, np.cos(x) * x**2 + 2 * x * np.sin(x))


def test_tracers_get_the_same_surface_as_arrays():
    surface = [
        name
        for name in ("__add__", "__rmatmul__", "__getitem__", "reshape", "sum", "T", "real")
        if not hasattr(mjcore.core.Tracer, name) or not hasattr(mjcore.Array, name)
    ]
    assert surface == []

    def f(x):
        assert isinstance(x, mjcore.core.Tracer)
        return x.reshape(2, 2).T.sum(axis=0) + x.mean()

    x = np.arange(8.0).reshape(2, 4)
    expected = np.stack([r.reshape(2, 2).T.sum(axis=0) + r.mean() for r in x])
    assert_matches(mjcore.vmap(f)(x), expected)
