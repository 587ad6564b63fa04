"""mjnp/_utilities.py and mjnp/_printing.py against NumPy: I/O round trips, type helpers,
copyto, apply_along_axis / apply_over_axes / vectorize (eager, jit, grad), error state."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import mjcore
import mjnp
from mjcore.array import Array
from mjcore.test_util import check_grads
from tests.differential_registry import differential
from tests.mjnp_testing import SETTINGS, arrays, assert_matches, shapes


@SETTINGS
@given(x=arrays(shape=shapes(max_dims=3)))
def test_save_load_round_trip(x):
    buf = io.BytesIO()
    mjnp.save(buf, mjnp.asarray(x))
    buf.seek(0)
    out = mjnp.load(buf)
    assert isinstance(out, Array)
    assert_matches(out, x)


def test_savez_and_text_io(tmp_path):
    a, b = np.arange(6.0).reshape(2, 3), np.array([1, 2], np.int32)
    for save in (mjnp.savez, mjnp.savez_compressed):
        path = tmp_path / f"{save.__name__}.npz"
        save(path, mjnp.asarray(a), b=mjnp.asarray(b))
        with mjnp.load(path) as data:
            assert sorted(data) == ["arr_0", "b"]
            assert_matches(data["arr_0"], a)
            assert_matches(data["b"], b)
    text = tmp_path / "a.txt"
    mjnp.savetxt(text, mjnp.asarray(a))
    assert_matches(mjnp.loadtxt(text), np.loadtxt(text))
    assert_matches(mjnp.genfromtxt(text), np.genfromtxt(text))
    raw = tmp_path / "a.bin"
    a.tofile(raw)
    assert_matches(mjnp.fromfile(raw), np.fromfile(raw))


@pytest.mark.parametrize("num", [0, 5, -5, 255, 2**40])
def test_number_formatting(num):
    assert mjnp.binary_repr(num) == np.binary_repr(num)
    assert mjnp.binary_repr(mjnp.asarray(num), width=48) == np.binary_repr(num, width=48)
    assert mjnp.base_repr(num, 7, padding=2) == np.base_repr(num, 7, padding=2)


def test_type_helpers():
    f32, i8, c64 = (np.zeros(2, d) for d in ("float32", "int8", "complex64"))
    for arrays_ in ((f32,), (f32, i8), (f32, c64), (i8,)):
        assert mjnp.common_type(*map(mjnp.asarray, arrays_)) is np.common_type(*arrays_)
    assert mjnp.mintypecode(["f", "d"]) == np.mintypecode(["f", "d"])
    assert mjnp.typename("d") == np.typename("d")
    for value in (300, -1, 1.5, np.array([1, 2])):
        assert mjnp.min_scalar_type(mjnp.asarray(value)) == np.min_scalar_type(value)


def test_memory_queries():
    x, y = mjnp.asarray([1.0]), mjnp.asarray([1.0])
    assert mjnp.shares_memory(x, x) and mjnp.may_share_memory(x, x)
    assert not mjnp.shares_memory(x, y) and not mjnp.may_share_memory(x, y)
    h = np.arange(4)
    assert mjnp.shares_memory(h, h[1:]) == np.shares_memory(h, h[1:])
    assert mjnp.isfortran(mjnp.asarray(np.ones((2, 2), order="F"))) is False
    assert mjnp.isfortran(np.ones((2, 2), order="F")) is True


@differential("copyto")
@SETTINGS
@given(
    dst=arrays(("float32", "int32", "float64"), shape=st.sampled_from([(3,), (2, 3)])),
    src=arrays(("int8", "float64", "bool"), shape=st.sampled_from([(), (3,), (1, 3)])),
    use_where=st.booleans(),
)
def test_copyto(dst, src, use_where):
    where = (np.arange(dst.size).reshape(dst.shape) % 2 == 0) if use_where else True
    expected = dst.copy()
    try:
        np.copyto(expected, src, where=where)
    except Exception as err:
        with pytest.raises(type(err)):
            mjnp.copyto(mjnp.asarray(dst), src, where=where)
        return
    handle = mjnp.asarray(dst)
    assert mjnp.copyto(handle, mjnp.asarray(src), where=where) is None
    assert_matches(handle, expected)


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
@pytest.mark.parametrize(
    ("fun", "np_fun"),
    [
        (mjnp.sum, np.sum),
        (lambda v: mjnp.stack([v.min(), v.max()]), lambda v: np.stack([v.min(), v.max()])),
        (lambda v: mjnp.outer(v, v), lambda v: np.outer(v, v)),
    ],
)
def test_apply_along_axis(fun, np_fun, axis):
    x = np.arange(24.0).reshape(2, 3, 4) ** 1.5
    expected = np.apply_along_axis(np_fun, axis, x)
    assert_matches(mjnp.apply_along_axis(fun, axis, x), expected)
    jitted = mjcore.jit(lambda a: mjnp.apply_along_axis(fun, axis, a))
    np.testing.assert_allclose(np.asarray(jitted(x)), expected, rtol=1e-12)
    with pytest.raises(ValueError):
        mjnp.apply_along_axis(fun, 0, np.zeros((3, 0)))


def test_apply_over_axes_and_gradient():
    x = np.arange(24.0).reshape(2, 3, 4)
    for axes in ([0, 2], 1, [-1]):
        assert_matches(mjnp.apply_over_axes(mjnp.sum, x, axes), np.apply_over_axes(np.sum, x, axes))
    check_grads(lambda a: mjnp.apply_along_axis(lambda v: mjnp.sin(v) @ v, 1, a), (x / 10,), 1)


def test_vectorize():
    x, y = np.linspace(-1, 1, 6).reshape(2, 3), np.array([0.5, 1.0, 2.0])

    def f(a, b):
        return mjnp.where(a > b, a - b, a + b)

    vf = mjnp.vectorize(f)
    assert_matches(vf(x, y), np.vectorize(lambda a, b: a - b if a > b else a + b)(x, y))
    dot = mjnp.vectorize(lambda a, b: mjnp.sum(a * b), signature="(n),(n)->()")
    assert_matches(
        dot(x, y), np.vectorize(lambda a, b: np.sum(a * b), signature="(n),(n)->()")(x, y)
    )
    scaled = mjnp.vectorize(lambda a, scale: a * scale, excluded={1})
    assert_matches(scaled(x, 3.0), x * 3.0)
    assert_matches(mjcore.jit(vf)(x, y), vf(x, y))
    check_grads(lambda a: vf(a, y), (x,), 1)
    with pytest.raises(ValueError):
        mjnp.vectorize(f, signature="(n->()")


def test_error_state_keeps_numpy_settings():
    old = mjnp.seterr(all="ignore")
    try:
        assert mjnp.geterr() == np.geterr() == {k: "ignore" for k in old}
        with mjnp.errstate(divide="raise"):
            assert np.geterr()["divide"] == "raise"
            # one state governs both (docs/errors.md): mjnp raises where NumPy does
            with pytest.raises(FloatingPointError, match="^divide by zero encountered in divide$"):
                mjnp.divide(mjnp.asarray(1.0), 0.0)
        assert np.isinf(float(mjnp.divide(mjnp.asarray(1.0), 0.0)))  # ignored again
    finally:
        mjnp.seterr(**old)
    assert mjnp.geterrcall() is np.geterrcall()


def test_bufsize_is_numpy_setting_scoped_by_errstate():
    default = np.getbufsize()
    with mjnp.errstate():
        assert mjnp.setbufsize(4096) == default
        assert mjnp.getbufsize() == np.getbufsize() == 4096
    assert mjnp.getbufsize() == default
    for bad in (-1, 4, 5, 10**8):  # NumPy's ValueErrors: negative, too small, not x16, too big
        with pytest.raises(ValueError):
            np.setbufsize(bad)
        with pytest.raises(ValueError):
            mjnp.setbufsize(bad)
    assert mjnp.getbufsize() == default


def test_printing_functions_match_numpy():
    x = np.array([[1e-8, 1.0], [np.pi, -2.5]])
    a = mjnp.asarray(x)
    assert mjnp.array2string(a, precision=3) == np.array2string(x, precision=3)
    assert mjnp.array_repr(a) == np.array_repr(x) == repr(a)
    assert mjnp.array_str(a, suppress_small=True) == np.array_str(x, suppress_small=True)
    assert np.array2string(a) == np.array2string(x)  # dispatched through __array_function__
    assert mjnp.format_float_positional(mjnp.asarray(np.pi), precision=4) == "3.1416"
    assert mjnp.format_float_scientific(np.float32(1.5e-7)) == np.format_float_scientific(
        np.float32(1.5e-7)
    )
    with mjnp.printoptions(precision=2):
        assert mjnp.get_printoptions()["precision"] == 2
        assert repr(a) == repr(x)
