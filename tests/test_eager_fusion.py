"""Eager calls of mjnp functions replay their trace, cached per signature, on the host or as
one executable (mjcore.eager_fusion): the results, dtypes and errors are those of the unfused
function (NumPy is the oracle)."""

from __future__ import annotations

import numpy as onp
import pytest

import mjcore
import mjnp as np
from mjcore.eager_fusion import fuse_eagerly


def _traces(fused) -> int:
    return fused.__wrapped_fused__.trace_count


def test_fused_functions_match_numpy_and_compile_once_per_signature():
    x32 = onp.linspace(-2, 2, 12, dtype=onp.float32).reshape(3, 4)
    i8 = onp.arange(12, dtype=onp.int8).reshape(3, 4)
    before = _traces(np.sin), _traces(np.sum)
    for _ in range(3):
        for a in (x32, i8):
            for name in ("sin", "exp", "negative", "sum", "mean", "max", "argmax", "std"):
                got, want = getattr(np, name)(np.asarray(a)), getattr(onp, name)(a)
                assert got.dtype == want.dtype, name
                onp.testing.assert_allclose(onp.asarray(got), want, rtol=1e-5, err_msg=name)
            got, want = np.add(np.asarray(a), np.asarray(a)), onp.add(a, a)
            assert got.dtype == want.dtype
            onp.testing.assert_array_equal(onp.asarray(got), want)
    # float32 and int8, at most once each (other tests may have met these signatures)
    assert _traces(np.sin) - before[0] <= 2 and _traces(np.sum) - before[1] <= 2
    softplus = fuse_eagerly(lambda x: np.log1p(np.exp(x)))
    for _ in range(3):
        for a in (x32, i8):
            got, want = softplus(np.asarray(a)), onp.log1p(onp.exp(a))
            assert got.dtype == want.dtype
            onp.testing.assert_allclose(onp.asarray(got), want, rtol=1e-3)
    assert _traces(softplus) == 2


def test_static_keywords_and_scalar_operands():
    x = onp.arange(12.0, dtype=onp.float32).reshape(3, 4)
    for _ in range(2):
        for axis in (0, 1, (0, 1), None):
            got = np.sum(np.asarray(x), axis=axis, keepdims=True)
            want = onp.sum(x, axis=axis, keepdims=True)
            assert got.shape == want.shape and got.dtype == want.dtype
            onp.testing.assert_array_equal(onp.asarray(got), want)
        for s in (2.5, -1.0, 1j):
            got, want = np.multiply(np.asarray(x), s), onp.multiply(x, s)
            assert got.dtype == want.dtype
            onp.testing.assert_allclose(onp.asarray(got), want)
    # Python scalars alone give NumPy's strong dtypes, not a traced call's weak ones.
    for s in (1.5, 1j):
        out = np.add(s, s)
        assert out.dtype == onp.add(s, s).dtype and not out.weak_type


def test_static_keywords_are_keyed_by_type_and_value():
    # 1 == 1.0 == True as dict keys: a fused variant for axis=1 must not serve axis=1.0.
    x = np.asarray(onp.ones((2, 3)))
    for _ in range(2):
        onp.testing.assert_array_equal(onp.asarray(np.sum(x, axis=1)), [3.0, 3.0])
        with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
            np.sum(x, axis=1.0)
        onp.testing.assert_array_equal(onp.asarray(np.sum(x, axis=(1,))), [3.0, 3.0])
        with pytest.raises(TypeError):
            np.sum(x, axis=(1.0,))


def test_array_keywords_take_the_plain_path():
    x = onp.arange(6.0).reshape(2, 3)
    mask = onp.array([[True, False, True], [False, True, True]])
    for _ in range(2):
        got = np.sum(np.asarray(x), where=np.asarray(mask))
        assert float(got) == onp.sum(x, where=mask)
        out = np.zeros(3)
        assert np.sum(np.asarray(x), axis=0, out=out) is out
        onp.testing.assert_array_equal(onp.asarray(out), x.sum(0))


def test_value_checks_stay_eager():
    u8 = np.asarray(onp.arange(4, dtype=onp.uint8))
    for _ in range(3):
        with pytest.raises(OverflowError):
            np.add(u8, 300)  # NEP 50: the Python int's value matters
        with pytest.raises(ValueError, match="negative integer powers"):
            np.power(np.asarray(onp.arange(3)), np.asarray(onp.array([1, -1, 2])))


def test_functions_that_need_values_fall_back_and_are_remembered():
    calls = []

    def positive_part_sum(x):
        calls.append(1)
        if float(np.sum(x)) > 0:  # needs the value: the trace fails
            return np.sum(np.maximum(x, 0.0))
        return np.sum(x)

    fused = fuse_eagerly(positive_part_sum)
    for sign in (1.0, -1.0, 1.0):
        x = sign * onp.arange(1.0, 4.0)
        expected = onp.sum(onp.maximum(x, 0)) if x.sum() > 0 else x.sum()
        assert float(fused(np.asarray(x))) == expected
    assert len(calls) == 4  # one failed trace, then eager calls only
    assert _traces(fused) == 1


def test_transformations_see_the_primitives():
    def f(x):
        return np.sum(np.sin(x) * x)

    x = onp.linspace(0.1, 1.0, 5)
    for _ in range(2):
        f(np.asarray(x))
    expected = onp.cos(x) * x + onp.sin(x)
    onp.testing.assert_allclose(onp.asarray(mjcore.grad(f)(np.asarray(x))), expected)
    onp.testing.assert_allclose(
        onp.asarray(mjcore.vmap(mjcore.grad(f))(np.asarray(onp.stack([x, x])))),
        onp.stack([expected, expected]),
    )
    assert "sin" in str(mjcore.make_jaxpr(f)(np.asarray(x)))


def test_a_deleted_argument_is_explained():
    x = np.asarray(onp.arange(3.0))
    np.sin(np.asarray(onp.arange(3.0)))  # warm: the next call takes the cached path
    mjcore.jit(lambda x: x * 2, donate_argnums=0)(x)
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        np.sin(x)


# Multi-primitive functions fused for their eager calls:
# (name, arguments from (module, a, b), keyword arguments)
_MORE_FUSED = [
    ("where", lambda m, a, b: (a > 0.5, a, 0.25), {}),
    ("clip", lambda m, a, b: (a, 0.25, 0.75), {}),
    ("round", lambda m, a, b: (a * 10.0,), {}),
    ("isclose", lambda m, a, b: (a, b), {}),
    ("nan_to_num", lambda m, a, b: (m.where(a > 0.5, -m.inf, m.where(b > 0.7, m.nan, a)),), {}),
    ("cumsum", lambda m, a, b: (a,), {"axis": 1}),
    ("cumprod", lambda m, a, b: (a,), {}),
    ("diff", lambda m, a, b: (a,), {}),
    ("ptp", lambda m, a, b: (a,), {"axis": 0}),
    ("outer", lambda m, a, b: (a, b), {}),
    ("inner", lambda m, a, b: (a, b), {}),
    ("vdot", lambda m, a, b: (a, b), {}),
    ("kron", lambda m, a, b: (a, b), {}),
    ("tensordot", lambda m, a, b: (a, b.T), {"axes": 1}),
    ("cross", lambda m, a, b: (a[:, :3], b[:, :3]), {}),
    ("vecdot", lambda m, a, b: (a, b), {}),
    ("matvec", lambda m, a, b: (a[:, :3] @ b[:, :3].T, a[:, 0]), {}),
    ("vecmat", lambda m, a, b: (a[:, 0], a[:, :3] @ b[:, :3].T), {}),
    ("sinc", lambda m, a, b: (a,), {}),
    ("i0", lambda m, a, b: (a,), {}),
    ("angle", lambda m, a, b: (a - 0.5,), {}),
    ("real", lambda m, a, b: (a + 1j * b,), {}),
    ("imag", lambda m, a, b: (a + 1j * b,), {}),
    ("sort", lambda m, a, b: (a,), {"axis": 0}),
    ("argsort", lambda m, a, b: (a,), {}),
    ("linalg.vector_norm", lambda m, a, b: (a,), {"axis": 1}),
]


def _get(module, name):
    for part in name.split("."):
        module = getattr(module, part)
    return module


@pytest.mark.parametrize("name,make_args,kwargs", _MORE_FUSED, ids=[c[0] for c in _MORE_FUSED])
def test_more_functions_run_fused_and_match_numpy(name, make_args, kwargs, monkeypatch):
    rng = onp.random.default_rng(0)
    a, b = rng.random((3, 7)), rng.random((3, 7))
    fused = _get(np, name)
    if name == "where":  # one-argument where is nonzero (value-dependent): its 3-argument body
        fused = np._elementwise._where
    if name in ("sort", "argsort", "diff"):  # NumPy's own function first on small eager Arrays
        module = np._sorting if "sort" in name else np._sums_products_differences
        fused = getattr(module, "_" + name)  # ... then this fused body
    assert hasattr(fused, "__wrapped_fused__"), f"mjnp.{name} is not fused"
    args = make_args(np, np.asarray(a), np.asarray(b))
    want = _get(onp, name)(*make_args(onp, a, b), **kwargs)
    fused(*args, **kwargs)  # traced for this signature (and compiled, unless on the host)
    binds = []
    real_bind = mjcore.core.bind
    monkeypatch.setattr(mjcore.core, "bind", lambda *xs: binds.append(xs[0]) or real_bind(*xs))
    for _ in range(2):
        got = fused(*args, **kwargs)
        assert got.dtype == want.dtype and got.shape == want.shape
        onp.testing.assert_allclose(onp.asarray(got), want, rtol=1e-12, atol=1e-15)
    # Replayed from the cached trace: no primitive went through bind (op by op, each would).
    assert binds == []


@pytest.mark.parametrize("dtype", [onp.float64, onp.float32, onp.float16, onp.complex128])
def test_python_ints_beside_inexact_arrays_fuse_and_match_numpy(dtype):
    """An int the array's dtype holds exactly fuses as the equal float (one trace); larger
    ints take the plain path; results equal NumPy's bit for bit either way."""
    xn = onp.array([[-7.5, -0.0, 0.0, 2.5], [onp.nan, onp.inf, -onp.inf, 3.0]]).astype(dtype)
    x = np.asarray(xn)
    names = ["add", "subtract", "multiply", "divide", "greater", "less_equal", "equal"]
    if dtype != onp.complex128:
        names += ["maximum", "minimum", "mod", "remainder", "floor_divide"]
    for name in names:
        for s in (3, -2, 0, 2**11 + 1, 2**53 + 1):
            for args, nargs in (((x, s), (xn, s)), ((s, x), (s, xn))):
                for _ in range(2):
                    with onp.errstate(all="ignore"):
                        want = getattr(onp, name)(*nargs)
                    got = getattr(np, name)(*args)
                    assert got.dtype == want.dtype, (name, s)
                    assert onp.array_equal(onp.asarray(got), want, equal_nan=True), (name, s)
                    signs = onp.signbit(onp.asarray(got).real), onp.signbit(want.real)
                    assert onp.array_equal(*signs), (name, s)
    if dtype == onp.complex128:
        return
    before = _traces(np.mod)
    for _ in range(3):
        np.mod(x, 5)
        np.mod(x, 5.0)
    assert _traces(np.mod) - before <= 1  # 5 and 5.0 share one signature


def test_remainder_runs_numpy_whole_on_the_host():
    from mjcore.eager_fusion import uses_host

    x = np.asarray(onp.linspace(-5, 5, 24).reshape(4, 6))
    np.mod(x, 3.0)
    assert uses_host(np.mod, x, 3.0)
    onp.testing.assert_array_equal(onp.asarray(np.mod(x, 3)), onp.mod(onp.asarray(x), 3))
    # a float32 array and a weak float: NumPy's dtype is the trace's
    x32 = np.asarray(onp.linspace(-5, 5, 24, dtype=onp.float32))
    got = np.floor_divide(x32, 0.7)
    assert got.dtype == onp.float32
    onp.testing.assert_array_equal(onp.asarray(got), onp.floor_divide(onp.asarray(x32), 0.7))
    # under a transformation the traced body runs, with its derivative
    g = mjcore.grad(lambda a: np.sum(np.mod(a, 3)))(x)
    onp.testing.assert_array_equal(onp.asarray(g), onp.ones((4, 6)))


@pytest.mark.parametrize(
    "dtype", [onp.int8, onp.int16, onp.int32, onp.int64, onp.uint8, onp.uint32, onp.uint64]
)
def test_integer_arrays_with_python_ints_run_one_numpy_call(dtype, monkeypatch):
    """mod/floor_divide of an integer array and a Python int its dtype holds: NumPy's values
    and dtype (division by zero gives 0) from one NumPy call, no primitive bound; an int out
    of the dtype's range raises NumPy's error."""
    from mjcore import core

    info = onp.iinfo(dtype)
    xn = onp.array([info.min, info.min + 1, 0, 1, 7, info.max - 1, info.max], dtype)
    x = np.asarray(xn)
    ints = [0, 1, 3, 7, 100, int(info.max), int(info.min)]
    if info.min < 0:
        ints += [-1, -3, -100]
    bound = []
    real_bind = core.bind
    monkeypatch.setattr(core, "bind", lambda p, a, k: bound.append(p) or real_bind(p, a, k))
    for name in ("mod", "remainder", "floor_divide"):
        for s in ints:
            for args, nargs in (((x, s), (xn, s)), ((s, x), (s, xn))):
                with onp.errstate(all="ignore"):
                    want = getattr(onp, name)(*nargs)
                got = getattr(np, name)(*args)
                assert got.dtype == want.dtype, (name, s)
                onp.testing.assert_array_equal(onp.asarray(got), want, err_msg=f"{name} {s}")
    assert bound == []
    monkeypatch.undo()
    for s in (int(info.max) + 1, int(info.min) - 1):
        with pytest.raises(OverflowError):
            onp.mod(xn, s)
        with pytest.raises(OverflowError):
            np.mod(x, s)


def test_integer_mod_by_python_int_under_eager_grad():
    """The index arithmetic of an eagerly differentiated function (mod of floor(x) by an
    int) takes the one-call path too, and the gradient is unchanged."""
    xn = onp.linspace(-3.7, 9.2, 12)

    def f(v):
        i = np.mod(np.floor(v).astype(int), 5)
        return np.sum(v * v * i)

    g = mjcore.grad(f)(np.asarray(xn))
    onp.testing.assert_allclose(onp.asarray(g), 2 * xn * onp.mod(onp.floor(xn).astype(int), 5))


def test_where_runs_numpy_whole_on_the_host_with_the_traced_dtype():
    rng = onp.random.default_rng(1)
    xn = rng.standard_normal((5, 6)).astype(onp.float32)
    xn[0, 0] = onp.nan
    yn = rng.standard_normal((6,))
    x, y = np.asarray(xn), np.asarray(yn)
    cases = [
        ((x > 0, x, 0.0), (xn > 0, xn, 0.0)),  # a weak float: float32, as in NumPy
        ((x, x, y), (xn, xn, yn)),  # a float condition (NaN is true), broadcast, promoted
        ((x > 0, np.asarray(2.5), x), (xn > 0, onp.asarray(2.5), xn)),  # a 0-d float64
        ((x > 0, x, -0.0), (xn > 0, xn, -0.0)),
    ]
    for args, nargs in cases:
        for _ in range(3):
            got, want = np.where(*args), onp.where(*nargs)
            assert got.dtype == want.dtype and got.shape == want.shape
            assert onp.array_equal(onp.asarray(got), want, equal_nan=True)
            assert onp.array_equal(onp.signbit(onp.asarray(got)), onp.signbit(want))


def test_outer_runs_numpy_whole_on_the_host_with_the_traced_dtype():
    a32 = onp.linspace(-1, 1, 5, dtype=onp.float32)
    b64 = onp.linspace(0, 3, 4).reshape(2, 2)
    i8 = onp.arange(-3, 3, dtype=onp.int8)
    for a, b in ((a32, b64), (a32, a32), (i8, onp.array([True, False])), (i8, i8)):
        ma = np.asarray(a)
        mb = np.asarray(b)
        for _ in range(3):
            got, want = np.outer(ma, mb), onp.outer(a, b)
            assert got.dtype == want.dtype and got.shape == want.shape
            onp.testing.assert_array_equal(onp.asarray(got), want)


def test_python_scalars_alone_do_not_take_a_weak_arrays_signature():
    # A weak-typed float64 Array has the signature a Python float has beside an Array; Python
    # floats alone give NumPy's strong float64 (NEP 50), whatever ran before (this once
    # leaked between test files: `np.add(1.5, 1.5)` came out weak after `np.add(w, w)`).
    w = mjcore.lax.add(2.0, 2.0)
    assert w.aval.weak_type
    assert np.add(w, w).aval.weak_type  # the (weak, weak) signature is now cached
    assert np.where(w, w, w).aval.weak_type  # and (weak, weak, weak)
    f32 = onp.ones(2, onp.float32)
    for got, want in [
        (np.add(1.5, 1.5), onp.add(1.5, 1.5)),
        (np.where(1.0, 1.5, 2.5), onp.where(1.0, 1.5, 2.5)),
    ]:
        assert not got.aval.weak_type
        assert (got * np.asarray(f32)).dtype == (want * f32).dtype == onp.float64
        onp.testing.assert_array_equal(onp.asarray(got), want)
