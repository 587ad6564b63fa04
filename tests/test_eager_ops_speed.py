"""The cheaper eager machinery of issue 18's reductions, products, logic and elementwise chains:
`fuse_eagerly`'s unrolled one-rule runners (Python floats straight to NumPy's ufunc, no error
collection for bool bodies, `rule.specialize`, 0-d results by `out=...`) and the direct NumPy
paths of count_nonzero, argmin/argmax, vdot/inner, norm, bincount and array_equal. Each gives
NumPy's bits, dtypes and warnings, binds nothing and compiles nothing for a new shape, and
jit/vmap/grad still agree with the eager result."""

from __future__ import annotations

import warnings

import numpy as onp
import pytest

import mjcore
import mjnp as np
from mjcore import core, eager_fusion
from mjcore.backend import compat
from mjcore.lax import host
from mjcore.lax.reductions import reduce_max_p, reduce_min_p, reduce_or_p, reduce_sum_p
from mjnp import _host_numpy

rng = onp.random.default_rng(18)


def _same(actual, expected, weak: bool = False) -> None:
    """Bit-for-bit equality of an mjnp result with NumPy's (values, dtype, shape)."""
    assert isinstance(actual, mjcore.Array), type(actual)
    e = onp.asarray(expected)
    a = onp.asarray(actual)
    assert a.dtype == e.dtype and a.shape == e.shape, (a.dtype, a.shape, e.dtype, e.shape)
    assert a.tobytes() == e.tobytes(), (a, e)
    assert actual.aval.weak_type is weak


@pytest.fixture
def counted(monkeypatch):
    """[compiles, binds] from now on: XLA compilations and primitive binds."""
    compiles: list[int] = []
    binds: list[object] = []
    real_compile = compat.compile_and_load
    real_bind = core.bind

    def counting_compile(*args, **kwargs):
        compiles.append(1)
        return real_compile(*args, **kwargs)

    def counting_bind(*args):
        binds.append(args[0])
        return real_bind(*args)

    monkeypatch.setattr(compat, "compile_and_load", counting_compile)
    monkeypatch.setattr(core, "bind", counting_bind)
    return compiles, binds


def _operands(shape, dtype):
    """A float array with NaN, infinities and signed zeros (or an int/bool one) of `shape`."""
    dtype = onp.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -9, 9, shape).astype(dtype)
    x = rng.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    specials = onp.array([onp.nan, onp.inf, -onp.inf, -0.0, 0.0], dtype)
    flat[: min(flat.size, 5)] = specials[: min(flat.size, 5)]
    return x


SHAPES = [(7, 9), (0, 3), (), (5,)]
DTYPES = ["float64", "float32", "int64", "int8", "bool"]


# --- operators and ufuncs: the one-rule runners ----------------------------------------------

BINARY = [
    ("add", lambda m, a, b: a + b),
    ("sub", lambda m, a, b: a - b),
    ("mul", lambda m, a, b: a * b),
    ("div", lambda m, a, b: a / b),
    ("gt", lambda m, a, b: a > b),
    ("eq", lambda m, a, b: a == b),
    ("maximum", lambda m, a, b: m.maximum(a, b)),
    ("logical_and", lambda m, a, b: m.logical_and(a, b)),
    ("logical_or", lambda m, a, b: m.logical_or(a, b)),
    ("bitwise_and", lambda m, a, b: m.bitwise_and(a, b)),
    ("fmod", lambda m, a, b: m.fmod(a, b)),
    ("power", lambda m, a, b: m.power(a, b)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name,op", BINARY, ids=[b[0] for b in BINARY])
def test_binary_ops_equal_numpy_bit_for_bit(name, op, shape, dtype):
    a, b = _operands(shape, dtype), _operands(shape, dtype)
    with onp.errstate(all="ignore"):
        try:
            want = op(onp, a, b)
        except (TypeError, ValueError) as err:  # bool subtract, int ** -1: NumPy refuses
            with pytest.raises(type(err)):
                op(np, np.asarray(a), np.asarray(b))
            return
        for _ in range(2):  # the trace, then the replay
            _same(op(np, np.asarray(a), np.asarray(b)), want)


SCALARS = [1.5, -0.0, 2, 0, 7, 2**60, True, float("nan"), 1e308]


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int32", "uint8", "bool"])
@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
def test_python_scalars_stay_weak_as_in_numpy(scalar, dtype):
    # NEP 50: the Array's dtype wins over a Python float or int it can take; floats go to
    # NumPy's ufunc as they are
    a = _operands((4, 5), dtype)
    x = np.asarray(a)
    for op in (
        lambda m, u, s: u + s,
        lambda m, u, s: s * u,
        lambda m, u, s: u / s,
        lambda m, u, s: u > s,
        lambda m, u, s: s - u,
        lambda m, u, s: m.maximum(u, s),
    ):
        with onp.errstate(all="ignore"):
            try:
                want = op(onp, a, scalar)
            except (TypeError, OverflowError) as err:
                with pytest.raises(type(err)):
                    op(np, x, scalar)
                continue
            for _ in range(2):
                _same(op(np, x, scalar), want)


def test_a_weak_array_shares_a_python_floats_signature():
    # a weak 0-d float64 Array and a Python float key the same runner: both must work
    x = np.asarray(rng.standard_normal((3, 4)))
    weak = np.asarray(2.5) * 1.0  # a weak result? whichever: compare with NumPy's values
    want = onp.asarray(x) + 2.5
    _same(x + 2.5, want)
    got = x + weak
    assert onp.asarray(got).tobytes() == want.tobytes() and got.dtype == want.dtype


def test_zero_d_results_are_arrays():
    x = np.asarray(rng.standard_normal((6, 5)))
    X = onp.asarray(x)
    got = x.min() + x.max()
    _same(got, onp.asarray(X.min() + X.max()))
    _same(np.add(x.min(), 1.0), onp.asarray(X.min() + 1.0))
    _same(x.sum() * x.max(), onp.asarray(onp.add.reduce(X, axis=None, initial=0.0) * X.max()))


def test_the_one_rule_runners_run(counted):
    compiles, binds = counted
    x = np.asarray(rng.standard_normal((17, 3)))  # a shape no other test uses
    y = np.asarray(rng.standard_normal((17, 3)))
    b = x > 0
    calls = [
        lambda: x + y,
        lambda: x * 2,
        lambda: x / 2,
        lambda: 1.5 - x,
        lambda: np.abs(x),
        lambda: np.logical_and(b, y > 0),
        lambda: x.min() + x.max(),
        lambda: np.any(b),
        lambda: x + 1.0 * y - x / 2,
    ]
    for call in calls:
        call()  # traced at the new signatures (binds under the trace), compiled never
    assert compiles == []
    del binds[:]
    for call in calls:
        call()  # replayed: nothing bound
    assert compiles == [] and binds == []
    # one rule each, unrolled (the general one-rule runner has a loop)
    for fun, args in [
        (np.add, (x, y)),
        (np.divide, (x, 2.0)),
        (np.absolute, (x,)),
        (np.logical_and, (b, b)),
    ]:
        fun(*args)
        key = tuple(eager_fusion._arg_key(a) for a in args)
        run = fun.__fused_runners__[key[0] if len(key) == 1 else key]
        assert run.__qualname__.split(".")[0] in ("_one_rule_runner", "_two_argument_runner"), fun
        assert eager_fusion.uses_host(fun, *args)


def test_specialized_rules():
    f64, i32 = core.ShapedArray((3,), onp.float64), core.ShapedArray((3,), onp.int32)
    assert host.div.specialize([f64, f64]) is onp.divide
    assert host.div.specialize([i32, i32]) is None  # XLA's integer division: the rule
    assert host.rem.specialize([f64, f64]) is onp.fmod
    m = core.ShapedArray((4, 5), onp.float64)
    rule = reduce_max_p.host_rule
    for axes in [(0, 1), (1,), (0,)]:
        fn = rule.specialize([m], axes=axes)
        v = _operands((4, 5), "float64")
        _same(np.asarray(onp.asarray(fn(v))), onp.asarray(rule(v, axes=axes)))
    assert rule.specialize([core.ShapedArray((0, 5), onp.float64)], axes=(0,)) is None
    assert reduce_sum_p.host_rule.specialize([m], axes=(0,)) is None  # -0.0 + +0.0 differs
    b = core.ShapedArray((4,), onp.bool_)
    assert reduce_or_p.host_rule.specialize([b], axes=(0,)) is not None
    assert reduce_or_p.host_rule.specialize([core.ShapedArray((4,), onp.int8)], axes=(0,)) is None
    assert reduce_min_p.host_rule.specialize([m], axes=(1,)) is not None


@pytest.mark.parametrize("dtype", ["float64", "float32", "int16", "uint8", "bool"])
@pytest.mark.parametrize("shape", [(7, 9), (5,), ()], ids=str)
def test_max_min_any_all_equal_numpy(shape, dtype):
    a = _operands(shape, dtype)
    x = np.asarray(a)
    for axis in [None, 0, -1] if a.ndim else [None]:
        for name in ["max", "min"]:
            want = getattr(onp, name)(a, axis=axis)
            for _ in range(2):
                _same(getattr(np, name)(x, axis=axis), want)
                if axis is None:
                    _same(getattr(x, name)(), want)
        for name in ["any", "all"]:
            _same(getattr(np, name)(x, axis=axis), getattr(onp, name)(a, axis=axis))


def test_empty_max_raises_as_numpy():
    with pytest.raises(ValueError, match="zero-size|empty|identity"):
        np.max(np.asarray(onp.zeros((0, 3))))
    _same(np.max(np.asarray(onp.zeros((0, 3))), axis=1), onp.zeros((0,)))


# --- floating-point errors ---------------------------------------------------------------------


def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize(
    "op",
    [
        lambda m, x: x / 0,
        lambda m, x: x / 0.0,
        lambda m, x: m.divide(x, x - x),
        lambda m, x: m.fmod(x, 0.0),
        lambda m, x: x * 1e308 * 10.0,
        lambda m, x: m.power(x, 0.5),
        lambda m, x: m.logical_and(x > 0, x < 1),
        lambda m, x: x.max() - x.max(),
    ],
)
def test_warnings_and_errors_under_errstate_as_numpy(op):
    a = onp.array([[1.0, -2.0, 0.0], [onp.inf, 3.0, onp.nan]])
    x = np.asarray(a)
    for state in ["warn", "ignore"]:
        with onp.errstate(all=state):
            want = _warnings_of(lambda: op(onp, a))
            assert _warnings_of(lambda: op(np, x)) == want
            assert _warnings_of(lambda: op(np, x)) == want  # the replay
    with onp.errstate(all="raise"):
        try:
            op(onp, a)
        except FloatingPointError as err:
            with pytest.raises(FloatingPointError, match=str(err).split(" encountered")[0]):
                op(np, x)
        else:
            op(np, x)
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError, match="divide by zero"):
        np.asarray(onp.array([1.0, 2.0])) / 0


def test_integer_division_by_zero_still_warns():
    i = onp.array([3, -4, 0])
    for op in [
        lambda m, a: m.floor_divide(a, 0),
        lambda m, a: a / 0,
        lambda m, a: 0 / a,
        lambda m, a: 2 / a,
    ]:
        with onp.errstate(all="warn"):
            want = _warnings_of(lambda: op(onp, i))  # noqa: B023
            assert want
            assert _warnings_of(lambda: op(np, np.asarray(i))) == want  # noqa: B023
        with onp.errstate(all="raise"), pytest.raises(FloatingPointError):
            op(np, np.asarray(i))


# --- the direct NumPy paths -------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype", ["float64", "float32", "complex128", "int64", "int8", "uint16", "bool"]
)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_count_nonzero(shape, dtype):
    a = _operands(shape, dtype) if dtype != "complex128" else _operands(shape, "float64") * 1j
    x = np.asarray(a)
    _same(np.count_nonzero(x), onp.asarray(onp.count_nonzero(a)))
    if a.ndim:
        _same(np.count_nonzero(x, axis=0), onp.count_nonzero(a, axis=0))
    weak = np.asarray(2.0) * 0.0 if not shape else None
    if weak is not None:
        _same(np.count_nonzero(weak), onp.asarray(0))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "uint8", "bool"])
def test_argmin_argmax(dtype):
    a = _operands((6, 7), dtype)
    x = np.asarray(a)
    for name in ["argmin", "argmax"]:
        for axis in [None, 0, 1, -1]:
            for keepdims in [False, True]:
                want = getattr(onp, name)(a, axis=axis, keepdims=keepdims)
                _same(getattr(np, name)(x, axis=axis, keepdims=keepdims), want)
        _same(getattr(x, name)(), onp.asarray(getattr(a, name)()))
        with pytest.raises(ValueError, match="empty"):
            getattr(np, name)(np.asarray(onp.zeros((0, 3), dtype)))
        with pytest.raises(onp.exceptions.AxisError):
            getattr(np, name)(x, axis=2)
    if dtype == "float64":  # a weak Array: the same strong int64 indices
        weak = mjcore.lax.convert_element_type(x, onp.float64, weak_type=True)
        assert weak.aval.weak_type
        for name in ["argmin", "argmax"]:
            _same(getattr(np, name)(weak), onp.asarray(getattr(onp, name)(a)))
            _same(getattr(np, name)(weak, axis=1), getattr(onp, name)(a, axis=1))


@pytest.mark.parametrize(
    "dtype_a,dtype_b",
    [
        ("float64", "float64"),
        ("float32", "float64"),
        ("int64", "float32"),
        ("complex128", "float64"),
        ("bool", "bool"),
        ("int8", "int8"),
    ],
)
def test_vdot_inner_dot(dtype_a, dtype_b):
    a = _operands((11,), dtype_a) + (1j if dtype_a.startswith("complex") else 0)
    b = _operands((11,), dtype_b)
    a, b = onp.nan_to_num(a), onp.nan_to_num(b)
    for name in ["vdot", "inner", "dot"]:
        want = onp.asarray(getattr(onp, name)(a, b))
        for _ in range(2):
            _same(getattr(np, name)(np.asarray(a), np.asarray(b)), want)
    m = onp.nan_to_num(_operands((4, 11), dtype_a))
    _same(np.inner(np.asarray(m), np.asarray(b)), onp.inner(m, b))
    with pytest.raises(ValueError):
        np.vdot(np.asarray(a), np.asarray(b[:5]))


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex64", "int32", "bool"])
def test_norm(dtype):
    a = (
        onp.nan_to_num(_operands((6, 5), dtype))
        if dtype != "complex64"
        else (rng.standard_normal((6, 5)) + 1j * rng.standard_normal((6, 5))).astype(dtype)
    )
    x = np.asarray(a)
    for kw in [{}, {"ord": "fro"}, {"axis": 1}, {"ord": 1, "axis": 0}, {"keepdims": True}]:
        _same(np.linalg.norm(x, **kw), onp.asarray(onp.linalg.norm(a, **kw)))
    _same(np.linalg.norm(np.asarray(onp.array([onp.nan, 1.0]))), onp.asarray(onp.nan))
    with pytest.raises(ValueError, match="norm order"):
        np.linalg.norm(x, ord="bad")


def test_bincount():
    i = rng.integers(0, 12, 50)
    w = rng.standard_normal(50)
    _same(np.bincount(np.asarray(i)), onp.bincount(i))
    _same(np.bincount(np.asarray(i), minlength=20), onp.bincount(i, minlength=20))
    _same(np.bincount(np.asarray(i), np.asarray(w)), onp.bincount(i, w))
    _same(np.bincount(np.asarray(i.astype(onp.uint8))), onp.bincount(i.astype(onp.uint8)))
    _same(np.bincount(np.asarray(i.reshape(5, 10)).ravel()), onp.bincount(i))
    with pytest.raises(ValueError, match="negative"):
        np.bincount(np.asarray(onp.array([1, -1, 2])))
    with pytest.raises(TypeError):
        np.bincount(np.asarray(onp.array([1.0, 2.0])))


def test_array_equal():
    a = _operands((4, 5), "float64")
    b = a.copy()
    b[1, 2] += 1.0
    for x, y in [(a, a), (a, b), (a, a[:3]), (a.astype(onp.float32), a)]:
        for equal_nan in [False, True]:
            want = onp.array_equal(x, y, equal_nan=equal_nan)
            got = np.array_equal(np.asarray(x), np.asarray(y), equal_nan=equal_nan)
            assert type(got) is bool and got == want, (x.dtype, y.dtype, equal_nan)
    i = onp.arange(6)
    assert np.array_equal(np.asarray(i), np.asarray(i.astype(onp.float64))) is True
    assert np.array_equal(np.asarray(i), np.asarray(i), equal_nan=True) is True


def test_the_direct_paths_bind_nothing_and_compile_nothing(counted, monkeypatch):
    compiles, binds = counted
    x = np.asarray(rng.standard_normal((19, 3)))  # shapes no other test uses
    v = np.asarray(rng.standard_normal(23))
    i = np.asarray(rng.integers(0, 5, 29))
    calls = [
        lambda: np.count_nonzero(x),
        lambda: np.argmin(x),
        lambda: np.argmax(x, axis=1),
        lambda: np.vdot(v, v),
        lambda: np.inner(v, v),
        lambda: np.linalg.norm(x),
        lambda: np.bincount(i),
        lambda: np.array_equal(x, x),
    ]
    for k, call in enumerate(calls):
        call()
        assert binds == [] and compiles == [], k
    # the counter sees the general path (every call binds there)
    monkeypatch.setattr(_host_numpy, "HOST_ELEMENTS", -1)
    monkeypatch.setattr(_host_numpy, "LAPACK_ELEMENTS", -1)
    monkeypatch.setattr(_host_numpy, "PRODUCT_ELEMENTS", -1)
    for k, call in enumerate(calls[:3] + calls[5:]):
        del binds[:]
        call()
        call()
        assert binds, k


# --- transformations are unchanged ---------------------------------------------------------------


def test_jit_vmap_grad_agree_with_eager():
    x = np.asarray(rng.standard_normal((5, 4)))
    y = np.asarray(rng.standard_normal((5, 4)))
    v = np.asarray(rng.standard_normal(4))
    funs = [
        lambda a, b: a + 1.0 * b - a / 2,
        lambda a, b: a.min() + a.max(),
        lambda a, b: np.linalg.norm(a),
        lambda a, b: np.vdot(a[0], b[0]),
        lambda a, b: np.inner(a[1], b[1]),
        lambda a, b: np.logical_and(a > 0, b > 0),
        lambda a, b: np.count_nonzero(a > 0),
        lambda a, b: np.argmin(a),
        lambda a, b: np.argmax(a, axis=1),
    ]
    for k, f in enumerate(funs):
        eager = onp.asarray(f(x, y))
        jitted = onp.asarray(mjcore.jit(f)(x, y))
        onp.testing.assert_allclose(jitted, eager, rtol=1e-14, err_msg=str(k))
        assert jitted.dtype == eager.dtype, k
        batched = mjcore.vmap(f)(np.stack([x, 2 * x]), np.stack([y, y]))
        onp.testing.assert_allclose(onp.asarray(batched[0]), eager, rtol=1e-14, err_msg=str(k))
        second = onp.asarray(f(2 * x, y))
        onp.testing.assert_allclose(onp.asarray(batched[1]), second, rtol=1e-14, err_msg=str(k))
    # gradients against central differences
    for f in [
        lambda a: np.linalg.norm(a),
        lambda a: a.min() + a.max(),
        lambda a: np.vdot(a, v * a),
        lambda a: np.sum(a + 1.0 * a - a / 2),
    ]:
        a0 = onp.asarray(x[0])
        g = onp.asarray(mjcore.grad(f)(x[0]))
        jg = onp.asarray(mjcore.jit(mjcore.grad(f))(x[0]))
        onp.testing.assert_allclose(g, jg, rtol=1e-13)
        eps = 1e-6
        for j in range(a0.size):
            e = onp.zeros_like(a0)
            e[j] = eps
            fd = (float(f(np.asarray(a0 + e))) - float(f(np.asarray(a0 - e)))) / (2 * eps)
            assert abs(fd - g[j]) < 1e-5, (j, fd, g[j])


# --- an integer Array and a Python int: one NumPy call (`int_host`) -------------------------

INT_OPS = [
    lambda m, a, n: a + n,
    lambda m, a, n: n - a,
    lambda m, a, n: a * n,
    lambda m, a, n: a > n,
    lambda m, a, n: n <= a,
    lambda m, a, n: a == n,
    lambda m, a, n: a != n,
    lambda m, a, n: m.maximum(a, n),
    lambda m, a, n: m.minimum(n, a),
    lambda m, a, n: a & n,
    lambda m, a, n: n ^ a,
    lambda m, a, n: a % n,
    lambda m, a, n: a / n,
    lambda m, a, n: n / a,
]


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "uint64", "bool"])
@pytest.mark.parametrize("n", [0, 3, -1, 100, 127, 200, 300, -129, 2**63 - 1, 2**64], ids=repr)
@pytest.mark.parametrize("shape", [(6, 7), (), (0, 2)], ids=str)
def test_integer_arrays_with_python_ints(shape, n, dtype):
    # in the dtype's range: NumPy's call (wrapping as NumPy does); outside: the general
    # path, which compares exactly or raises NumPy's OverflowError
    a = _operands(shape, dtype)
    x = np.asarray(a)
    for op in INT_OPS:
        with onp.errstate(all="ignore"):
            try:
                want = op(onp, a, n)
            except (OverflowError, TypeError, ZeroDivisionError) as err:
                with pytest.raises(type(err)):
                    op(np, x, n)
                continue
            for _ in range(2):
                _same(op(np, x, n), want)


def test_integer_arrays_with_python_ints_bind_nothing(counted):
    compiles, binds = counted
    i = np.asarray(rng.integers(-5, 5, (13, 7)).astype(onp.int32))
    for op in INT_OPS:
        op(np, i, 3)
    assert compiles == [] and binds == []
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        i + 2**40  # out of int32's range: the general path (NumPy's OverflowError)
    assert (i > 2**40).dtype == onp.bool_  # ... which compares exactly
    assert not onp.asarray(i > 2**40).any()


# --- a narrower Array and a Python float: NumPy's ufunc with the float as it is ---------------


@pytest.mark.parametrize("dtype", ["float32", "float16", "complex64"])
def test_narrow_arrays_with_python_scalars(dtype, counted):
    compiles, binds = counted
    a = (_operands((5, 3), "float32") * (1 + 1j if dtype == "complex64" else 1)).astype(dtype)
    x = np.asarray(a)
    ops = [
        lambda m, u, s: u * s,
        lambda m, u, s: s - u,
        lambda m, u, s: u / s,
        lambda m, u, s: u > s,
        lambda m, u, s: m.maximum(u, s),
        lambda m, u, s: u == s,
    ]
    for s in [0.5, 0.1, -0.0, 3, 1e300, float("nan"), 1e-300, 2.5 + 1j]:
        for op in ops:
            with onp.errstate(all="ignore"):
                try:
                    want = op(onp, a, s)
                except TypeError as err:  # complex ordering
                    with pytest.raises(type(err)):
                        op(np, x, s)
                    continue
                for _ in range(2):
                    _same(op(np, x, s), want)
            if dtype == "complex64" or type(s) is complex:
                continue  # (NumPy's complex ordering warns at NaN; mjnp's composed one never)
            with onp.errstate(all="warn"):  # NumPy's own warnings ("overflow ... in cast")
                assert _warnings_of(lambda: op(np, x, s)) == _warnings_of(lambda: op(onp, a, s))  # noqa: B023
    assert compiles == []
    del binds[:]
    x * 0.5  # noqa: B018
    assert binds == []
    run = np.multiply.__fused_runners__[(x.aval, eager_fusion._arg_key(0.5))]
    assert run.__qualname__.startswith("_scalar_ufunc_runner")
    # a weak 0-d Array has the Python float's signature, but NumPy would take it as strong:
    # the body's host program runs
    weak = mjcore.lax.convert_element_type(np.asarray(0.5), onp.float64, weak_type=True)
    assert weak.aval == eager_fusion._arg_key(0.5)
    got = x * weak
    assert got.dtype == x.dtype
    assert onp.asarray(got).tobytes() == onp.asarray(x * 0.5).tobytes()
