"""The memory-layout methods and attributes of mjnp arrays (mjnp/_array_bits.py) against NumPy:
`view`, `byteswap`, `flat`, `resize`, `tobytes`/`tofile`/`dump`/`dumps`, `strides`, `flags`
and `base`, with eager vs jit (and vmap) for the device computations."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import mjcore
import mjnp
from mjcore.errors import TracerArrayConversionError

_RNG = np.random.default_rng(0)


def _random_bits(dtype: str, shape: tuple[int, ...], bool_bytes: bool = False) -> np.ndarray:
    """Random bit patterns (NaN payloads and subnormals included) of `dtype`; bytes of 0 and 1
    only when `bool_bytes`, so that a bool view holds what a device bool can."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape)) * dtype.itemsize
    raw = _RNG.integers(0, 2 if bool_bytes or dtype.kind == "b" else 256, count, np.uint8)
    return raw.view(dtype).reshape(shape)


def _same_bits(actual, expected: np.ndarray) -> None:
    assert actual.dtype == expected.dtype.newbyteorder("="), (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert np.asarray(actual).tobytes() == expected.astype(actual.dtype).tobytes()


# --- view -----------------------------------------------------------------------------------

# (source dtype, shape, target dtype): same, smaller and larger item sizes, complex and bool.
VIEW_CASES = [
    ("float32", (2, 3), "int32"),
    ("float32", (2, 3), "uint8"),
    ("float32", (2, 4), "float64"),
    ("float64", (3,), "float16"),
    ("float64", (2, 2), "complex128"),
    ("int16", (4,), "float16"),
    ("int16", (2, 4), "uint64"),
    ("uint8", (2, 8), "complex64"),
    ("uint8", (3, 4), "bool"),
    ("bool", (2, 4), "int32"),
    ("bool", (6,), "int8"),
    ("complex64", (3,), "float32"),
    ("complex64", (2, 2), "complex128"),
    ("complex128", (2,), "int16"),
    ("complex128", (1, 2), "complex64"),
    ("int64", (), "float64"),
    ("int64", (0, 4), "int16"),
    ("float32", (3, 0), "float64"),
    ("float32", (2, 3), ">f4"),
    ("int32", (4,), ">i2"),
    ("uint16", (3,), "<u2"),
]


def _view_id(case) -> str:
    src, shape, dst = case
    return f"{src}-{shape}-{dst}"


@pytest.mark.parametrize("case", VIEW_CASES, ids=_view_id)
def test_view_matches_numpy_bits(case):
    src, shape, dst = case
    a = _random_bits(src, shape, bool_bytes="bool" in (src, dst))
    expected = a.view(dst)
    x = mjnp.asarray(a)
    if np.dtype(dst).isnative:
        _same_bits(x.view(dst), expected)
    else:  # NB: a non-native byte order gives NumPy's values in the native dtype
        np.testing.assert_array_equal(np.asarray(x.view(dst)), expected)
    assert np.asarray(mjcore.jit(lambda v: v.view(dst))(x)).tobytes() == (
        np.asarray(x.view(dst)).tobytes()
    )


@pytest.mark.parametrize(
    ("src", "dst", "in_axes"),
    [("float32", "uint8", 0), ("float64", "float32", 1), ("uint8", "int32", -1)],
)
def test_view_under_vmap_matches_loop(src, dst, in_axes):
    a = _random_bits(src, (2, 4, 8))
    out = mjcore.vmap(lambda v: v.view(dst), in_axes=in_axes)(mjnp.asarray(a))
    expected = np.stack([np.ascontiguousarray(s).view(dst) for s in np.moveaxis(a, in_axes, 0)])
    _same_bits(out, expected)


@pytest.mark.parametrize(
    ("shape", "src", "dst"),
    [((), "float32", "float64"), ((), "int16", "uint8"), ((3,), "float32", "float64"),
     ((0, 3), "float32", "complex128"), ((2, 5), "int8", "int16")],
)  # fmt: skip
def test_view_size_errors_match_numpy(shape, src, dst):
    a = np.zeros(shape, src)
    with pytest.raises(ValueError) as expected:
        a.view(dst)
    match = "0d array" if "0d" in str(expected.value) else "divisor"
    with pytest.raises(ValueError, match=match):
        mjnp.asarray(a).view(dst)


def test_view_without_dtype_is_an_equal_new_array():
    x = mjnp.arange(6.0).reshape(2, 3)
    for y in (x.view(), x.view(np.ndarray), x.view(type=mjnp.ndarray), x.view(x.dtype)):
        assert y is not x
        _same_bits(y, np.asarray(x))
    y = x.view()
    x[0, 0] = 9.0
    assert float(y[0, 0]) == 0.0


def test_view_type_errors():
    x = mjnp.zeros(3, "float32")
    with pytest.raises(ValueError, match="sub-type of ndarray"):
        np.zeros(3, "float32").view(type=list)
    with pytest.raises(ValueError, match="sub-type of ndarray"):
        x.view(type=list)
    with pytest.raises(TypeError, match=r"numpy.asarray\(x\).view\(matrix\)"):
        x.view(np.matrix)
    with pytest.raises(TypeError, match="not understood"):
        x.view("foo")
    with pytest.raises(TypeError, match="not supported"):
        x.view("U1")  # NB: NumPy views as a string dtype; mjnp has none


# --- byteswap -------------------------------------------------------------------------------

BYTESWAP_DTYPES = ["bool", "int8", "uint16", "int32", "float16", "float32", "float64", "int64"]
BYTESWAP_DTYPES += ["complex64", "complex128"]


@pytest.mark.parametrize("dtype", BYTESWAP_DTYPES)
def test_byteswap_matches_numpy(dtype):
    a = _random_bits(dtype, (2, 3))
    x = mjnp.asarray(a)
    out = x.byteswap()
    _same_bits(out, a.byteswap())
    assert out is not x
    _same_bits(mjcore.jit(lambda v: v.byteswap())(x), a.byteswap())
    _same_bits(mjcore.vmap(lambda v: v.byteswap(), in_axes=1)(x), a.byteswap().T)


def test_byteswap_inplace_rebinds():
    a = np.arange(4, dtype="int32")
    x = mjnp.asarray(a)
    assert x.byteswap(inplace=True) is x
    _same_bits(x, a.byteswap())

    def f(v):
        v.byteswap(True)
        return v

    _same_bits(mjcore.jit(f)(mjnp.asarray(a)), a.byteswap())


# --- flat -----------------------------------------------------------------------------------

FLAT_READS = [0, -1, 5, np.int64(3), slice(None), slice(1, 5, 2), slice(None, None, -1), [0, 5, 2],
              np.array([[0, 1], [4, 3]]), np.array([True, False] * 3), Ellipsis, 6, (1, 2), None,
              (3,), (), [True] * 6, np.True_]  # fmt: skip


@pytest.mark.parametrize("idx", FLAT_READS, ids=repr)
def test_flat_reads_match_numpy(idx):
    a = np.arange(6.0).reshape(2, 3)
    x = mjnp.asarray(a)
    try:
        expected = np.asarray(a.flat[idx])
    except IndexError:
        with pytest.raises(IndexError):
            x.flat[idx]
        return
    out = x.flat[idx]
    np.testing.assert_array_equal(np.asarray(out), expected)
    assert out.shape == expected.shape and out.dtype == expected.dtype
    if not isinstance(idx, np.ndarray) or idx.dtype != bool:
        jitted = mjcore.jit(lambda v: v.flat[idx])(x)
        np.testing.assert_array_equal(np.asarray(jitted), expected)


# (index, value) for `flat[index] = value` into uint8 zeros of shape (2, 3).
FLAT_WRITES = [
    (0, 7), (-1, 2.7), (np.int64(2), np.int64(300)), (1, np.array(2.7)), (1, 300), (1, -1),
    (1, [2]), (1, np.array([2])), (1, 1j), (1, np.nan), (6, 1),
    (slice(None), [1, 2, 3, 4]), (slice(0, 4), np.array([[1, 2], [3, 4]])), (slice(None), []),
    (slice(0, 2), 300), (slice(None), 1j), ([0, 4, 5], [7, 8]), ([0, 0], [1, 2]),
    (np.array([True, False] * 3), [5, 6]), (Ellipsis, 3), ([6], 1), ([], [1]),
]  # fmt: skip


@pytest.mark.parametrize(("idx", "value"), FLAT_WRITES, ids=repr)
def test_flat_writes_match_numpy(idx, value):
    a = np.zeros((2, 3), np.uint8)
    x = mjnp.asarray(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            a.flat[idx] = value
        except Exception as err:
            with pytest.raises(type(err)):
                x.flat[idx] = value
            return
    x.flat[idx] = value
    _same_bits(x, a)


def test_flat_write_under_jit_and_vmap():
    def f(v):
        v.flat[0] = -1.0
        v.flat[[1, 2]] = [7.0]
        return v

    a = np.arange(6.0).reshape(2, 3)
    expected = a.copy()
    expected.flat[0], expected.flat[[1, 2]] = -1.0, [7.0]
    _same_bits(mjcore.jit(f)(mjnp.asarray(a)), expected)
    _same_bits(mjcore.vmap(f)(mjnp.asarray(a)), np.array([expected[0]] * 2))


def test_flat_iterates_and_converts_as_numpy():
    a = np.arange(6, dtype="int16").reshape(3, 2)
    x = mjnp.asarray(a)
    assert len(x.flat) == len(a.flat) == 6
    assert [int(v) for v in x.flat] == [int(v) for v in a.flat]
    assert x.flat.base is x
    it = x.flat
    next(it)
    assert it.index == 1 and it.coords == (0, 1)
    assert np.asarray(x.flat).tolist() == a.ravel().tolist()
    assert np.asarray(x.flat, dtype="float32").dtype == np.float32
    copy = x.flat.copy()
    _same_bits(copy, a.flat.copy())
    x[0, 0] = 5
    assert int(copy[0]) == 0
    assert mjcore.jit(lambda v: sum(v.flat))(x).tolist() == 20
    assert mjcore.jit(lambda v: v.flat.copy())(x).shape == (6,)
    assert [int(v) for v in mjnp.asarray(np.int8(3)).flat] == [3]


def test_flat_assignment_fills_cyclically():
    a, x = np.zeros((2, 3)), mjnp.zeros((2, 3))
    a.flat = [1, 2]
    x.flat = [1, 2]
    _same_bits(x, a)


# --- resize ---------------------------------------------------------------------------------

# fmt: off
RESIZE_ARGS = [(), (None,), (4,), ((2, 4),), (2, 4), ([3, 1],), (np.int64(2),), (0,), ((),),
               ((1, 1, 3),), (-1,), ((2, -1),), (1.5,), ((2, 2), True), ("a",), ((2.0, 3),)]
# fmt: on


@pytest.mark.parametrize("args", RESIZE_ARGS, ids=repr)
@pytest.mark.parametrize("dtype", ["float32", "bool", "complex64"])
def test_resize_matches_numpy(args, dtype):
    a = (np.arange(6) % 3).astype(dtype).reshape(2, 3).copy()  # owning its data, as x does
    x = mjnp.asarray(a)
    try:
        a.resize(*args, refcheck=False)
    except Exception as err:
        with pytest.raises(type(err)):
            x.resize(*args)
        return
    assert x.resize(*args) is None
    _same_bits(x, a)


def test_resize_of_empty_to_scalar_and_under_jit():
    a, x = np.zeros(0, "int32"), mjnp.zeros(0, "int32")
    a.resize((), refcheck=False)
    x.resize(())
    _same_bits(x, a)

    def f(v):
        v.resize(2, 4)
        return v

    a = np.arange(6.0)
    expected = a.copy()
    expected.resize(2, 4)
    _same_bits(mjcore.jit(f)(mjnp.asarray(a)), expected)


def test_resize_ignores_refcheck():
    x = mjnp.arange(3)
    y = x
    x.resize(5, refcheck=True)  # NB: no views of device arrays, so nothing to check
    assert y.shape == (5,)


# --- host bytes -----------------------------------------------------------------------------


@pytest.mark.parametrize("order", ["C", "F", "A", "K", None, "Z"])
@pytest.mark.parametrize("dtype", ["float16", "bool", "complex128", "int64"])
def test_tobytes_matches_numpy(order, dtype):
    a = _random_bits(dtype, (2, 3))
    x = mjnp.asarray(a)
    try:
        expected = a.tobytes(order=order)
    except Exception as err:
        with pytest.raises(type(err)):
            x.tobytes(order=order)
        return
    assert x.tobytes(order=order) == expected


def test_tofile_dump_and_dumps_write_numpys_bytes(tmp_path):
    a = np.arange(6, dtype="float32").reshape(2, 3) / 3
    x = mjnp.asarray(a)
    for kwargs in ({}, {"sep": ","}, {"sep": " ", "format": "%.3f"}):
        a.tofile(tmp_path / "np.bin", **kwargs)
        x.tofile(tmp_path / "mj.bin", **kwargs)
        assert (tmp_path / "mj.bin").read_bytes() == (tmp_path / "np.bin").read_bytes()
    with open(tmp_path / "mj.bin", "wb") as f:
        x.tofile(f)
    assert (tmp_path / "mj.bin").read_bytes() == a.tobytes()
    a.dump(tmp_path / "np.pkl")
    x.dump(tmp_path / "mj.pkl")
    assert (tmp_path / "mj.pkl").read_bytes() == (tmp_path / "np.pkl").read_bytes()
    assert x.dumps() == a.dumps()
    np.testing.assert_array_equal(pickle.loads(x.dumps()), a)


@pytest.mark.parametrize(
    "method",
    [lambda v: v.tobytes(), lambda v: v.tofile("unused"), lambda v: v.dump("unused"),
     lambda v: v.dumps(), lambda v: np.asarray(v.flat)],
    ids=["tobytes", "tofile", "dump", "dumps", "asarray-flat"],
)  # fmt: skip
def test_host_methods_on_tracers_raise_numpys_conversion_error(method, tmp_path):
    with pytest.raises(TracerArrayConversionError, match="__array__"):
        mjcore.jit(method)(mjnp.zeros(3))


# --- strides, flags, base -------------------------------------------------------------------

LAYOUT_SHAPES = [(), (0,), (3,), (2, 3), (1, 3), (3, 1), (1, 1, 4), (4, 1, 1), (3, 0, 2), (2, 3, 4)]
# fmt: off
FLAG_ATTRS = ["c_contiguous", "f_contiguous", "owndata", "writeable", "aligned",
              "writebackifcopy", "contiguous", "fortran", "fnc", "forc", "behaved", "carray",
              "farray", "num"]
FLAG_KEYS = ["C", "F", "O", "W", "A", "X", "B", "CA", "FA", "FNC", "FORC", "CARRAY", "FARRAY",
             "FORTRAN", "ALIGNED", "OWNDATA", "BEHAVED", "WRITEABLE", "CONTIGUOUS",
             "C_CONTIGUOUS", "F_CONTIGUOUS", "WRITEBACKIFCOPY"]
# fmt: on


@pytest.mark.parametrize("shape", LAYOUT_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["int8", "float32", "complex128"])
def test_strides_flags_and_base_match_a_fresh_numpy_array(shape, dtype):
    a = np.zeros(shape, dtype)
    x = mjnp.zeros(shape, dtype)
    assert x.strides == a.strides
    for name in FLAG_ATTRS:
        assert getattr(x.flags, name) == getattr(a.flags, name), name
    for key in FLAG_KEYS:
        assert x.flags[key] == a.flags[key], key
    assert repr(x.flags) == repr(a.flags)
    assert x.base is None and a.base is None


def test_layout_attributes_under_jit():
    def f(v):
        assert v.strides == (24, 8) and v.base is None
        assert v.flags.c_contiguous and not v.flags["F"]
        return v

    mjcore.jit(f)(mjnp.zeros((2, 3)))


def test_flags_are_read_only_and_check_keys():
    flags = mjnp.zeros(3).flags
    for key in ("U", "c", "c_contiguous", "num", 0):
        with pytest.raises(KeyError, match="Unknown flag"):
            flags[key]
    with pytest.raises(AttributeError):
        flags.writeable = False
    with pytest.raises(TypeError, match="read-only"):
        flags["W"] = False
