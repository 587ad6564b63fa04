"""The eager NumPy paths of creation, manipulation and indexing functions (issue 18): on
concrete CPU Arrays they compute NumPy's result bit for bit (values, dtype, shape), bind no
primitive and compile nothing for a new shape; errors are mjnp's as before, and jit/vmap/grad
still agree with the eager result."""

from __future__ import annotations

import numpy as onp
import pytest

import mjcore
import mjnp as np
from mjcore import core
from mjnp import _creation, _ranges

F64 = onp.dtype("float64")


class _NoLax:
    """Stands in for a module's `lax`: any use means a primitive would be bound."""

    def __getattr__(self, name: str):
        raise AssertionError(f"lax.{name} used: the NumPy path did not run")


def _same(actual, expected) -> None:
    """Bit-for-bit equality of an mjnp result with NumPy's (values, dtype, shape)."""
    if isinstance(expected, tuple | list):
        assert isinstance(actual, tuple | list) and len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            _same(a, e)
        return
    assert isinstance(actual, mjcore.Array), type(actual)
    e = onp.asarray(expected)
    a = onp.asarray(actual)
    assert a.dtype == e.dtype and a.shape == e.shape, (a.dtype, a.shape, e.dtype, e.shape)
    assert a.tobytes() == e.tobytes(), (a, e)
    assert not actual.aval.weak_type


# --- creation -------------------------------------------------------------------------------

CREATION = [
    ("zeros", ((3, 4),), {}),
    ("zeros", (5,), {"dtype": onp.int8}),
    ("zeros", ((),), {}),
    ("zeros", ((0, 3),), {"dtype": bool}),
    ("ones", ((2, 3),), {"dtype": onp.complex64}),
    ("ones", (7,), {}),
    ("empty", ((2, 2),), {"dtype": onp.float32}),
    ("full", ((2, 3), 2.5), {}),
    ("full", ((4,), -0.0), {}),
    ("full", ((4,), onp.nan), {}),
    ("full", ((3,), 5), {}),
    ("full", ((3,), 300.7), {"dtype": onp.uint8}),
    ("full", ((2,), 2**63 + 5), {"dtype": onp.uint64}),
    ("full", ((2, 3), [1.0, 2.0, 3.0]), {}),
    ("arange", (100,), {}),
    ("arange", (0,), {}),
    ("arange", (-4,), {}),
    ("arange", (5, 0, -1), {}),
    ("arange", (-3, 7, 2), {}),
    ("arange", (0.5, 10.3, 0.7), {}),
    ("arange", (0, 1, 0.1), {}),
    ("arange", (5.5,), {}),
    ("arange", (-2.5, 3, 1), {}),
    ("arange", (3, -2.5, -0.25), {}),
    ("arange", (1e300, 1.7e308, 1e307), {}),
    ("arange", (10,), {"dtype": onp.float16}),
    ("arange", (0.1, 5.1, 0.5), {"dtype": onp.float32}),
    ("arange", (0, 300, 7), {"dtype": onp.uint8}),
    ("arange", (0, 5, 1.5), {"dtype": onp.int64}),
    ("eye", (3,), {}),
    ("eye", (4, 3, 1), {}),
    ("eye", (4, 4, -2), {"dtype": onp.int32}),
    ("eye", (3, 3, 10), {}),
    ("eye", (0,), {"dtype": bool}),
    ("identity", (4,), {"dtype": onp.float32}),
    ("linspace", (0, 1), {}),
    ("linspace", (0, 1, 5), {"endpoint": False}),
    ("linspace", (2, 3, 1), {}),
    ("linspace", (2, 3, 0), {}),
    ("linspace", (1, 10, 10), {"dtype": int}),
    ("linspace", (-5, 5.5, 7), {"axis": -1}),
    ("linspace", (0, 1, 4), {"dtype": onp.float32}),
    ("linspace", (0, 1, 3), {"dtype": complex}),
    ("linspace", (0, 1e-310, 5), {}),
    ("logspace", (0, 2, 5), {}),
    ("logspace", (1, 3, 4), {"base": 2.0}),
    ("logspace", (0.5, -2, 7), {"endpoint": False, "dtype": onp.float32}),
    ("geomspace", (1, 1000, 4), {}),
    ("geomspace", (-1, -1000, 5), {}),
    ("geomspace", (1, 256, 9), {"endpoint": False}),
    ("geomspace", (1, 1000, 4), {"dtype": int}),
]


@pytest.mark.parametrize(("name", "args", "kwargs"), CREATION)
def test_creation_equals_numpy(name, args, kwargs):
    # mjnp's `empty` is zeros (NumPy's is uninitialised)
    expected = getattr(onp, name.replace("empty", "zeros"))(*args, **kwargs)
    _same(getattr(np, name)(*args, **kwargs), expected)


@pytest.mark.parametrize("args", [(0, 1, 5), (2, 3, 1), (0, 1, 0)])
def test_linspace_retstep_equals_numpy(args):
    y, step = np.linspace(*args, retstep=True)
    y_np, step_np = onp.linspace(*args, retstep=True)
    _same(y, y_np)
    _same(step, onp.asarray(step_np))


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like"])
@pytest.mark.parametrize(
    "kwargs", [{}, {"dtype": onp.int32}, {"shape": (4,)}, {"dtype": bool, "order": "C"}]
)
def test_like_equals_numpy(name, kwargs):
    x = onp.arange(6.0).reshape(2, 3)
    expected = getattr(onp, name.replace("empty", "zeros"))(x, **kwargs)
    _same(getattr(np, name)(np.asarray(x), **kwargs), expected)


@pytest.mark.parametrize("x", [onp.arange(6.0).reshape(2, 3), onp.arange(4, dtype=onp.int32)])
def test_full_like_equals_numpy(x):
    _same(np.full_like(np.asarray(x), 7.5), onp.full_like(x, 7.5))


CREATION_CALLS = {
    "zeros": lambda n: np.zeros((n, n + 1)),
    "ones": lambda n: np.ones(n, dtype=onp.float32),
    "empty": lambda n: np.empty((n,)),
    "full": lambda n: np.full((n, 2), 1.5),
    "zeros_like": lambda n: np.zeros_like(X_LIKE),
    "ones_like": lambda n: np.ones_like(X_LIKE, dtype=onp.int16),
    "full_like": lambda n: np.full_like(X_LIKE, 0.25),
    "arange": lambda n: np.arange(n),
    "arange_float": lambda n: np.arange(0.0, n, 0.5),
    "arange_range": lambda n: np.arange(2, n, 3),
    "eye": lambda n: np.eye(n, n + 2, 1),
    "identity": lambda n: np.identity(n),
    "linspace": lambda n: np.linspace(0, 1, n),
    "logspace": lambda n: np.logspace(0, 1, n),
    "geomspace": lambda n: np.geomspace(1, 7, n),
}
X_LIKE = np.asarray(onp.arange(12.0).reshape(3, 4))


@pytest.mark.parametrize("name", sorted(CREATION_CALLS))
def test_creation_binds_and_compiles_nothing(name, monkeypatch, compiles):
    monkeypatch.setattr(_creation, "lax", _NoLax())
    monkeypatch.setattr(_ranges, "lax", _NoLax())
    monkeypatch.setattr(_ranges, "ew", _NoLax())
    for n in (37, 38):  # new shapes
        out = CREATION_CALLS[name](n)
        assert isinstance(out, mjcore.Array)
    assert compiles[0] == 0


@pytest.mark.parametrize(
    ("call", "err"),
    [
        (lambda: np.zeros(-1), ValueError),
        (lambda: np.zeros((2, 3), dtype=object), TypeError),
        (lambda: np.ones((2, 3), order="X"), ValueError),
        (lambda: np.full((2,), 2**64), OverflowError),
        (lambda: np.arange(0, 5, 0), ZeroDivisionError),
        (lambda: np.arange(0.0, 5.0, 0.0), ZeroDivisionError),
        (lambda: np.arange(2**61), ValueError),
        (lambda: np.arange(0.0, float("inf")), ValueError),
        (lambda: np.arange(5, like=onp.zeros(1)), NotImplementedError),
        (lambda: np.eye(-1), ValueError),
        (lambda: np.eye(3, dtype="S3"), TypeError),
        (lambda: np.linspace(0, 1, -1), ValueError),
        (lambda: np.linspace(0, 1, 5, axis=1), onp.exceptions.AxisError),
        (lambda: np.zeros_like(X_LIKE, order="X"), ValueError),
        (lambda: np.geomspace(0, 1), ValueError),
    ],
)
def test_creation_errors_name_the_function(call, err):
    with pytest.raises(err, match="mjnp|array is too big"):
        call()


def test_arange_of_nan_raises_as_before():
    with pytest.raises(ValueError, match="arange: cannot compute length"):
        np.arange(float("nan"))


def test_creation_device_argument_places_the_result():
    cpu = mjcore.devices("cpu")[0]
    for out in (np.zeros(3, device=cpu), np.arange(4, device="cpu"), np.eye(2, device=cpu)):
        assert out.device == cpu


def test_creation_under_jit_and_vmap_agrees_with_eager():
    def f(x):
        return (
            np.zeros((3, 4)) + x,
            np.arange(4) * x,
            np.eye(3, 4, 1) * x,
            np.linspace(0, 1, 5) * x,
            np.full((2,), 2.5) * x,
            np.ones_like(np.arange(3.0)) * x,
        )

    eager = f(np.asarray(1.5))
    _same(mjcore.jit(f)(np.asarray(1.5)), [onp.asarray(e) for e in eager])
    batched = mjcore.vmap(f)(np.asarray([1.5, 1.5]))
    for b, e in zip(batched, eager, strict=True):
        assert onp.array_equal(onp.asarray(b)[1], onp.asarray(e))
    grad = mjcore.grad(lambda x: np.sum(np.arange(4) * x) + np.sum(np.eye(2) * x))(2.0)
    assert float(grad) == 8.0  # 0 + 1 + 2 + 3, and the trace of eye(2)


# --- functions of arrays: the NumPy path against NumPy and against the general path ----------

_RNG = onp.random.default_rng(0)
A2 = _RNG.standard_normal((4, 6))
A2_NAN = onp.where(A2 > 1, onp.nan, onp.where(A2 < -1.2, onp.inf, A2))
A3 = _RNG.standard_normal((2, 1, 3))
V6 = _RNG.standard_normal(6).astype(onp.float32)
I2 = _RNG.integers(-6, 6, (4, 6))
IDX = onp.array([[0, 5, -1], [2, 2, 3]])
IDX32 = onp.array([1, 0, 3], dtype=onp.int32)
ALONG = _RNG.integers(0, 6, (4, 3))
E0 = onp.zeros((0, 3))
S0 = onp.asarray(2.5)

# (name, mjnp/NumPy call taking the module, the arrays as a tuple)
ARRAY_CASES = [
    ("take", lambda m, a: m.take(a[0], a[1]), (A2, IDX)),
    ("take_axis", lambda m, a: m.take(a[0], a[1], axis=1), (A2, IDX32)),
    ("take_int", lambda m, a: m.take(a[0], 7), (A2,)),
    ("take_wrap", lambda m, a: m.take(a[0], a[1], axis=0, mode="wrap"), (A2, IDX)),
    ("take_clip", lambda m, a: m.take(a[0], a[1], mode="clip"), (V6, IDX)),
    ("take_empty", lambda m, a: m.take(a[0], a[1], axis=0), (E0, IDX32[:0])),
    ("take_along_axis", lambda m, a: m.take_along_axis(a[0], a[1], axis=1), (A2, ALONG)),
    ("take_along_axis0", lambda m, a: m.take_along_axis(a[0], a[1], 0), (A2[:, :3], ALONG[:2] % 4)),
    ("take_along_none", lambda m, a: m.take_along_axis(a[0], a[1], None), (A2, IDX32)),
    ("repeat", lambda m, a: m.repeat(a[0], 2), (V6,)),
    ("repeat_axis", lambda m, a: m.repeat(a[0], [1, 0, 2, 1], axis=0), (A2,)),
    ("repeat_0d", lambda m, a: m.repeat(a[0], 3), (S0,)),
    ("tile", lambda m, a: m.tile(a[0], (3, 1)), (V6,)),
    ("tile_int", lambda m, a: m.tile(a[0], 2), (A3,)),
    ("tile_empty", lambda m, a: m.tile(a[0], (2, 0)), (A2,)),
    ("ravel", lambda m, a: m.ravel(a[0]), (A3,)),
    ("ravel_view", lambda m, a: m.ravel(a[0].T), (A2,)),
    ("squeeze", lambda m, a: m.squeeze(a[0]), (A3,)),
    ("squeeze_axis", lambda m, a: m.squeeze(a[0], axis=1), (A3,)),
    ("squeeze_none", lambda m, a: m.squeeze(a[0]), (A2,)),
    ("swapaxes", lambda m, a: m.swapaxes(a[0], 0, -1), (A3,)),
    ("moveaxis", lambda m, a: m.moveaxis(a[0], 0, -1), (A3,)),
    ("moveaxis_seq", lambda m, a: m.moveaxis(a[0], [0, 1], [2, 0]), (A3,)),
    ("flip", lambda m, a: m.flip(a[0], 0), (A2,)),
    ("flip_all", lambda m, a: m.flip(a[0]), (A3,)),
    ("flip_axes", lambda m, a: m.flip(a[0], (0, 2)), (A3,)),
    ("fliplr", lambda m, a: m.fliplr(a[0]), (A2,)),
    ("flipud", lambda m, a: m.flipud(a[0]), (V6,)),
    ("split", lambda m, a: m.split(a[0], 3, axis=1), (A2,)),
    ("split_points", lambda m, a: m.split(a[0], [1, 5, 3, 9]), (V6,)),
    ("array_split", lambda m, a: m.array_split(a[0], 4, axis=1), (A2,)),
    ("array_split_neg", lambda m, a: m.array_split(a[0], [-2]), (V6,)),
    ("pad", lambda m, a: m.pad(a[0], 1), (A2,)),
    ("pad_pairs", lambda m, a: m.pad(a[0], ((1, 0), (2, 3)), constant_values=-7), (I2,)),
    ("pad_value", lambda m, a: m.pad(a[0], (2, 1), constant_values=1.5), (V6,)),
    ("pad_edge", lambda m, a: m.pad(a[0], 2, mode="edge"), (A2,)),
    ("pad_wrap", lambda m, a: m.pad(a[0], [(5, 7)], mode="wrap"), (V6,)),
    ("pad_reflect", lambda m, a: m.pad(a[0], 3, mode="reflect"), (A2,)),
    ("pad_reflect_odd", lambda m, a: m.pad(a[0], 8, "reflect", reflect_type="odd"), (V6,)),
    ("pad_symmetric", lambda m, a: m.pad(a[0], ((1, 7), (0, 2)), mode="symmetric"), (A2,)),
    ("pad_nan", lambda m, a: m.pad(a[0], 1, constant_values=float("nan")), (A2,)),
    ("nonzero", lambda m, a: m.nonzero(a[0]), (I2,)),
    ("nonzero_bool", lambda m, a: m.nonzero(a[0] > 0), (A2,)),
    ("nonzero_empty", lambda m, a: m.nonzero(a[0]), (E0,)),
    ("nonzero_method", lambda m, a: a[0].nonzero(), (A3,)),
    ("where1", lambda m, a: m.where(a[0]), (I2,)),
    ("argwhere", lambda m, a: m.argwhere(a[0]), (I2,)),
    ("argwhere_0d", lambda m, a: m.argwhere(a[0]), (S0,)),
    ("flatnonzero", lambda m, a: m.flatnonzero(a[0]), (A2_NAN,)),
    ("meshgrid", lambda m, a: m.meshgrid(a[0], a[1]), (V6, IDX32)),
    ("meshgrid_ij", lambda m, a: m.meshgrid(a[0], a[1], a[0], indexing="ij"), (V6, IDX32)),
    ("meshgrid_sparse", lambda m, a: m.meshgrid(a[0], a[1], sparse=True), (A2, V6)),
    ("round", lambda m, a: m.round(a[0], 2), (A2_NAN,)),
    ("round0", lambda m, a: m.round(a[0]), (A2 * 3,)),
    ("round_f32", lambda m, a: m.round(a[0], 3), (V6,)),
    ("round_int_neg", lambda m, a: m.round(a[0], -1), (I2 * 7,)),
    ("round_int", lambda m, a: m.round(a[0], 1), (I2,)),
    ("around_bool", lambda m, a: m.around(a[0]), (I2 > 0,)),
    ("round_method", lambda m, a: a[0].round(1), (A2,)),
    ("trunc", lambda m, a: m.trunc(a[0]), (A2_NAN * 3,)),
    ("trunc_neg_zero", lambda m, a: m.trunc(a[0]), (onp.array([-0.0, -0.5, 0.5, -1e300]),)),
    ("trunc_int", lambda m, a: m.trunc(a[0]), (I2,)),
    ("fix", lambda m, a: m.fix(a[0]), (V6 * 4,)),
    ("square", lambda m, a: m.square(a[0]), (A2,)),
    ("square_f32", lambda m, a: m.square(a[0]), (V6,)),
    ("square_bool", lambda m, a: m.square(a[0]), (I2 > 0,)),
    ("square_complex", lambda m, a: m.square(a[0]), (A2 + 1j * A2[::-1],)),
    ("isnan", lambda m, a: m.isnan(a[0]), (A2_NAN,)),
    ("isinf", lambda m, a: m.isinf(a[0]), (A2_NAN.astype(onp.float32),)),
    ("isfinite", lambda m, a: m.isfinite(a[0]), (A2_NAN,)),
    ("isfinite_int", lambda m, a: m.isfinite(a[0]), (I2,)),
    ("isnan_complex", lambda m, a: m.isnan(a[0]), (A2_NAN + 1j,)),
    ("astype_int32", lambda m, a: a[0].astype(m.int32), (A2 * 1000,)),
    ("astype_uint8", lambda m, a: a[0].astype(m.uint8), (I2 + 6,)),
    ("astype_int8_wrap", lambda m, a: a[0].astype(m.int8), (I2 * 50,)),
    ("astype_bool", lambda m, a: a[0].astype(bool), (A2_NAN,)),
    ("nan_to_num", lambda m, a: m.nan_to_num(a[0]), (A2_NAN,)),
    ("nan_to_num_f32", lambda m, a: m.nan_to_num(a[0]), (A2_NAN.astype(onp.float32),)),
    (
        "nan_to_num_fills",
        lambda m, a: m.nan_to_num(a[0], nan=-1.0, posinf=9, neginf=-9.5),
        (A2_NAN,),
    ),
    ("nan_to_num_complex", lambda m, a: m.nan_to_num(a[0], nan=2.0), (A2_NAN + 1j * A2_NAN[::-1],)),
]
# calls whose NumPy path falls back to the general one, which raises mjnp's error
ARRAY_ERRORS = [
    ("take_oob", lambda m, a: m.take(a[0], a[1] + 30), (A2, IDX), IndexError),
    ("take_float", lambda m, a: m.take(a[0], a[1]), (A2, A2), TypeError),
    ("take_axis_oob", lambda m, a: m.take(a[0], a[1], axis=2), (A2, IDX), IndexError),
    ("take_empty_wrap", lambda m, a: m.take(a[0], a[1], mode="wrap"), (E0, IDX), IndexError),
    ("along_oob", lambda m, a: m.take_along_axis(a[0], a[1] + 6, 1), (A2, ALONG), IndexError),
    ("along_ndim", lambda m, a: m.take_along_axis(a[0], a[1], 1), (A2, IDX32), ValueError),
    ("repeat_neg", lambda m, a: m.repeat(a[0], -1), (V6,), ValueError),
    ("repeat_counts", lambda m, a: m.repeat(a[0], [1, 2]), (V6,), ValueError),
    ("tile_neg", lambda m, a: m.tile(a[0], (2, -1)), (V6,), ValueError),
    ("squeeze_size", lambda m, a: m.squeeze(a[0], axis=0), (A2,), ValueError),
    ("swapaxes_oob", lambda m, a: m.swapaxes(a[0], 0, 3), (A2,), onp.exceptions.AxisError),
    ("moveaxis_len", lambda m, a: m.moveaxis(a[0], [0, 1], [0]), (A3,), ValueError),
    ("flip_oob", lambda m, a: m.flip(a[0], 2), (A2,), onp.exceptions.AxisError),
    ("fliplr_1d", lambda m, a: m.fliplr(a[0]), (V6,), ValueError),
    ("split_unequal", lambda m, a: m.split(a[0], 4), (V6,), ValueError),
    ("split_0d", lambda m, a: m.split(a[0], 1), (S0,), onp.exceptions.AxisError),
    ("pad_neg", lambda m, a: m.pad(a[0], -1), (V6,), ValueError),
    ("pad_empty_edge", lambda m, a: m.pad(a[0], 1, mode="edge"), (E0,), ValueError),
    ("nonzero_0d", lambda m, a: m.nonzero(a[0]), (S0,), ValueError),
]


@pytest.fixture
def general_path(monkeypatch):
    """A context switch: inside, mjnp's NumPy paths are off (the general path runs)."""
    from contextlib import contextmanager

    from mjnp import _host_numpy

    @contextmanager
    def general():
        with monkeypatch.context() as m:
            m.setattr(_host_numpy, "is_eager_host", lambda: False)
            yield

    return general


def _mj(arrays):
    return tuple(np.asarray(a) for a in arrays)


@pytest.fixture
def binds(monkeypatch):
    """The number of primitives bound so far (a list holding one count)."""
    count = [0]
    for name in ("bind", "bind1"):
        real = getattr(core.Primitive, name)

        def counting(self, *args, _real=real, **params):
            count[0] += 1
            return _real(self, *args, **params)

        monkeypatch.setattr(core.Primitive, name, counting)
    return count


@pytest.mark.parametrize(("name", "call", "arrays"), ARRAY_CASES, ids=[c[0] for c in ARRAY_CASES])
def test_numpy_path_equals_numpy_and_general_path(
    name, call, arrays, general_path, compiles, binds
):
    args = _mj(arrays)
    call(np, args)  # a fused body is traced on its first call
    binds[0] = 0
    fast = call(np, args)
    assert binds[0] == 0, "the NumPy path bound a primitive"
    assert compiles[0] == 0, "the NumPy path compiled something"
    _same(fast, call(onp, arrays))
    with general_path():
        general = call(np, _mj(arrays))
    fast = fast if isinstance(fast, tuple | list) else (fast,)
    general = general if isinstance(general, tuple | list) else (general,)
    for f, g in zip(fast, general, strict=True):
        assert f.aval == g.aval  # shape, dtype and weak type as before
        assert onp.asarray(f).tobytes() == onp.asarray(g).tobytes()


def _weak(arrays):
    """The arrays as mjnp Arrays, weakly typed but for bools (as Python scalars' results)."""
    out = []
    for a in _mj(arrays):
        if a.dtype.kind in "fci":
            a = mjcore.lax.convert_element_type(a, a.dtype, weak_type=True)
            assert a.aval.weak_type
        out.append(a)
    return tuple(out)


@pytest.mark.parametrize(("name", "call", "arrays"), ARRAY_CASES, ids=[c[0] for c in ARRAY_CASES])
def test_numpy_path_keeps_the_general_paths_weak_types(name, call, arrays, general_path):
    fast = call(np, _weak(arrays))
    with general_path():
        general = call(np, _weak(arrays))
    fast = fast if isinstance(fast, tuple | list) else (fast,)
    general = general if isinstance(general, tuple | list) else (general,)
    for f, g in zip(fast, general, strict=True):
        assert f.aval == g.aval
        assert onp.asarray(f).tobytes() == onp.asarray(g).tobytes()


@pytest.mark.parametrize(
    ("name", "call", "arrays", "err"), ARRAY_ERRORS, ids=[c[0] for c in ARRAY_ERRORS]
)
def test_numpy_path_errors_are_the_general_paths(name, call, arrays, err, general_path):
    with pytest.raises(err) as fast:
        call(np, _mj(arrays))
    with general_path(), pytest.raises(err) as general:
        call(np, _mj(arrays))
    assert str(fast.value) == str(general.value)


def test_take_under_transformations_agrees_with_eager():
    x, i = np.asarray(A2), np.asarray(IDX)
    eager = np.take(x, i, axis=1)
    assert onp.array_equal(onp.asarray(mjcore.jit(lambda x: np.take(x, i, axis=1))(x)), eager)
    batched = mjcore.vmap(lambda x: np.take(x, i, axis=0))(x)
    assert onp.array_equal(onp.asarray(batched), onp.asarray(eager))
    along = mjcore.jit(lambda x: np.take_along_axis(x, np.asarray(ALONG), 1))(x)
    assert onp.array_equal(onp.asarray(along), onp.take_along_axis(A2, ALONG, 1))
    g = mjcore.grad(lambda x: np.sum(np.take(x, i) * 2.0))(x)
    expected = onp.zeros(A2.size)
    onp.add.at(expected, IDX.ravel() % A2.size, 2.0)
    assert onp.array_equal(onp.asarray(g).ravel(), expected)


# --- transformations of the functions with NumPy paths: unchanged, agreeing with eager ------

LINEAR = [
    ("flip", lambda m, x: m.flip(x, 1)),
    ("fliplr", lambda m, x: m.fliplr(x)),
    ("tile", lambda m, x: m.tile(x, (2, 1))),
    ("repeat", lambda m, x: m.repeat(x, 2, axis=0)),
    ("squeeze", lambda m, x: m.squeeze(x[None], 0)),
    ("swapaxes", lambda m, x: m.swapaxes(x, 0, 1)),
    ("moveaxis", lambda m, x: m.moveaxis(x, 0, 1)),
    ("pad", lambda m, x: m.pad(x, 1, mode="reflect")),
    ("split", lambda m, x: m.split(x, 2, axis=1)[1]),
    ("array_split", lambda m, x: m.array_split(x, 4, axis=1)[0]),
    ("take", lambda m, x: m.take(x, IDX % 6, axis=1)),
    ("take_along_axis", lambda m, x: m.take_along_axis(x, ALONG, 1)),
    ("meshgrid", lambda m, x: m.meshgrid(x[0], x[1])[1]),
    ("square", lambda m, x: m.square(x)),
]
NONDIFF = [
    ("round", lambda m, x: m.round(x, 1)),
    ("trunc", lambda m, x: m.trunc(x * 3)),
    ("isnan", lambda m, x: m.isnan(m.log(x))),
    ("nonzero_take", lambda m, x: m.take(x, m.flatnonzero(x > 0))),
]


@pytest.mark.parametrize(("name", "f"), LINEAR + NONDIFF, ids=[c[0] for c in LINEAR + NONDIFF])
def test_jit_and_vmap_agree_with_eager(name, f):
    x = np.asarray(A2)
    eager = f(np, x)
    _same(eager, f(onp, A2))
    if name == "nonzero_take":  # a value-dependent shape: eager only
        return
    jitted = mjcore.jit(lambda x: f(np, x))(x)
    batch = np.asarray(onp.stack([A2, 2 * A2]))
    batched = mjcore.vmap(lambda x: f(np, x))(batch)
    expected = onp.stack([onp.asarray(eager), onp.asarray(f(np, np.asarray(2 * A2)))])
    if name == "round":
        # XLA's compiled `x * 10 / 10` may differ from NumPy's by an ulp (as before the NumPy
        # path: the general eager path computed NumPy's steps too)
        onp.testing.assert_allclose(onp.asarray(jitted), onp.asarray(eager), rtol=1e-15)
        onp.testing.assert_allclose(onp.asarray(batched), expected, rtol=1e-15)
        return
    _same(jitted, onp.asarray(eager))
    _same(batched, expected)


@pytest.mark.parametrize(("name", "f"), LINEAR, ids=[c[0] for c in LINEAR])
def test_grad_agrees_with_jax(name, f):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    w = onp.asarray(f(onp, A2)) * 0 + onp.arange(onp.asarray(f(onp, A2)).size).reshape(
        onp.shape(f(onp, A2))
    )
    g = mjcore.grad(lambda x: np.sum(f(np, x) * w))(np.asarray(A2))
    expected = jax.grad(lambda x: jnp.sum(f(jnp, x) * w))(A2)
    onp.testing.assert_allclose(onp.asarray(g), onp.asarray(expected), rtol=1e-13, atol=0)
