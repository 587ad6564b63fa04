"""The Array API inspection namespace, devices, copy semantics and DLPack export, against
NumPy 2 (values, dtypes, exception types) and the standard's wording where NumPy has no say."""

from __future__ import annotations

import copy

import numpy
import pytest

import mjcore
import mjnp

INFO = mjnp.__array_namespace_info__()
DEVICE = mjcore.devices()[0]
KINDS = [
    None,
    "bool",
    "signed integer",
    "unsigned integer",
    "integral",
    "real floating",
    "complex floating",
    "numeric",
    ("bool", "complex floating"),
]


def test_version_and_namespace():
    assert mjnp.__array_api_version__ == "2025.12"
    x = mjnp.asarray([1.0])
    assert x.__array_namespace__() is mjnp
    assert x.__array_namespace__(api_version="2025.12") is mjnp
    with pytest.raises(ValueError, match="unsupported Array API version"):
        x.__array_namespace__(api_version="2099.01")


def test_capabilities():
    caps = INFO.capabilities()
    assert caps == {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}


def test_devices_are_mjcore_devices():
    assert INFO.devices() == tuple(mjcore.devices())
    assert INFO.default_device() == DEVICE


def test_default_dtypes_match_numpy():
    expected = numpy.__array_namespace_info__().default_dtypes()
    assert INFO.default_dtypes() == expected
    assert INFO.default_dtypes(device=DEVICE) == expected


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_dtypes_match_numpy(kind):
    expected = numpy.__array_namespace_info__().dtypes(kind=kind)
    got = INFO.dtypes(kind=kind, device=DEVICE)
    assert list(got) == list(expected) and got == expected
    for dtype in got.values():
        assert mjnp.empty(1, dtype=dtype, device=DEVICE).dtype == dtype


def test_bad_kind_and_device():
    with pytest.raises(ValueError, match="unknown kind 'floating'"):
        INFO.dtypes(kind="floating")
    with pytest.raises(ValueError, match="unknown device 'gpu'"):
        INFO.dtypes(device="gpu")


# --- devices ---------------------------------------------------------------------------------


@pytest.mark.parametrize("device", [None, "cpu", DEVICE], ids=["none", "cpu", "object"])
def test_creation_accepts_devices(device):
    x = mjnp.zeros((2,), device=device)
    assert x.device == DEVICE
    assert mjnp.asarray([1, 2], device=device).device == DEVICE
    assert mjnp.astype(x, mjnp.float32, device=device).dtype == numpy.float32
    assert mjnp.fft.fftfreq(4, device=device).shape == (4,)


@pytest.mark.parametrize(
    "make",
    [
        lambda d: mjnp.zeros(2, device=d),
        lambda d: mjnp.arange(3, device=d),
        lambda d: mjnp.asarray([1.0], device=d),
        lambda d: mjnp.astype(mjnp.ones(2), mjnp.int8, device=d),
        lambda d: mjnp.from_dlpack(numpy.ones(2), device=d),
        lambda d: mjnp.ones(2).to_device(d),
    ],
)
def test_unknown_device_raises_value_error(make):
    with pytest.raises(ValueError, match="unknown device 'gpu'"):
        make("gpu")


def test_to_device():
    x = mjnp.asarray([1.0, 2.0])
    assert x.to_device(x.device) is x
    assert x.to_device("cpu", stream=None) is x
    with pytest.raises(ValueError, match="no streams"):
        x.to_device(DEVICE, stream=1)


def test_traced_values_report_the_default_device():
    def f(x):
        # Array API style: new arrays on the input's device, under every transformation.
        return x * mjnp.ones(x.shape, device=x.device)

    x = mjnp.asarray([1.0, 2.0])
    assert numpy.array_equal(mjcore.jit(f)(x), [1.0, 2.0])
    assert numpy.array_equal(mjcore.grad(lambda x: f(x).sum())(x), [1.0, 1.0])
    assert mjcore.vmap(f)(mjnp.ones((3, 2))).shape == (3, 2)


# --- copies are new handles --------------------------------------------------------------------

COPIES = {
    "asarray-copy": lambda x: mjnp.asarray(x, copy=True),
    "asarray-dtype-copy": lambda x: mjnp.asarray(x, dtype=x.dtype, copy=True),
    "array": lambda x: mjnp.array(x),
    "copy": lambda x: mjnp.copy(x),
    "method-copy": lambda x: x.copy(),
    "astype": lambda x: mjnp.astype(x, x.dtype),
    "method-astype": lambda x: x.astype(x.dtype),
    "reshape-copy": lambda x: mjnp.reshape(x, x.shape, copy=True),
    "from_dlpack-copy": lambda x: mjnp.from_dlpack(x, copy=True),
    "copy.copy": lambda x: copy.copy(x),
    "copy.deepcopy": lambda x: copy.deepcopy([x, x])[1],
}


@pytest.mark.parametrize("make_copy", COPIES.values(), ids=COPIES.keys())
def test_copy_does_not_see_later_writes(make_copy):
    x = mjnp.asarray([1.0, 2.0, 3.0])
    y = make_copy(x)
    x[0] = 9.0
    assert y is not x
    assert numpy.array_equal(y, [1.0, 2.0, 3.0])
    assert numpy.array_equal(x, [9.0, 2.0, 3.0])


def test_copy_under_jit_does_not_see_later_writes():
    def f(x):
        y = mjnp.asarray(x, copy=True)
        x[0] = 5.0
        return y, x

    y, x = mjcore.jit(f)(mjnp.ones(3))
    assert numpy.array_equal(y, [1.0, 1.0, 1.0]) and numpy.array_equal(x, [5.0, 1.0, 1.0])


NO_COPIES = {
    "asarray-nocopy": lambda x: mjnp.asarray(x, copy=False),
    "asarray-default": lambda x: mjnp.asarray(x),
    "astype-nocopy": lambda x: mjnp.astype(x, x.dtype, copy=False),
    "from_dlpack": lambda x: mjnp.from_dlpack(x),
    "from_dlpack-nocopy": lambda x: mjnp.from_dlpack(x, copy=False),
}


@pytest.mark.parametrize("share", NO_COPIES.values(), ids=NO_COPIES.keys())
def test_no_copy_is_the_same_array(share):
    # As in NumPy (and the suite's test_asarray_arrays): copy=False/None sees later writes.
    x = mjnp.asarray([1.0, 2.0])
    y = share(x)
    x[1] = 7.0
    assert numpy.array_equal(y, [1.0, 7.0])


@pytest.mark.parametrize(
    "call",
    [
        lambda xp: xp.asarray(xp.asarray([1.0]), dtype=xp.float32, copy=False),
        lambda xp: xp.asarray([1.0, 2.0], copy=False),
        lambda xp: xp.array(xp.asarray([1, 2]), dtype=xp.int8, copy=False),
    ],
)
def test_copy_false_raises_value_error_when_a_copy_is_needed(call):
    with pytest.raises(ValueError):
        call(numpy)
    with pytest.raises(ValueError, match="copy"):
        call(mjnp)


def test_from_dlpack_of_a_foreign_array():
    y = mjnp.from_dlpack(numpy.arange(3.0))
    assert numpy.array_equal(y, [0.0, 1.0, 2.0]) and y.device == DEVICE
    with pytest.raises(ValueError, match="copy=False is impossible"):
        mjnp.from_dlpack(numpy.arange(3.0), copy=False)
    with pytest.raises(TypeError, match="__dlpack__"):
        mjnp.from_dlpack([1, 2])


# --- DLPack export ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "float32", "complex128"])
@pytest.mark.parametrize("max_version", [None, (0, 8), (1, 0), (2, 0)], ids=str)
@pytest.mark.parametrize("copy", [None, True, False], ids=str)
def test_dunder_dlpack_round_trips(dtype, max_version, copy):
    value = numpy.arange(4).reshape(2, 2).astype(dtype)
    x = mjnp.asarray(value)
    capsule = x.__dlpack__(max_version=max_version, copy=copy, dl_device=(1, 0))
    assert type(capsule).__name__ == "PyCapsule"
    assert x.__dlpack_device__() == (1, 0)


def test_legacy_dlpack_gives_a_private_copy():
    """A consumer of the legacy (no `max_version`) protocol gets memory of its own."""

    class Legacy:
        def __init__(self, x):
            self.x = x

        def __dlpack__(self, stream=None):
            return self.x.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.x.__dlpack_device__()

    x = mjnp.asarray([1.0, 2.0])
    host = numpy.from_dlpack(Legacy(x))
    assert numpy.array_equal(host, [1.0, 2.0])
    assert not numpy.shares_memory(host, numpy.asarray(x))
    shared = numpy.from_dlpack(x)  # versioned: the cached host copy, flagged read-only
    assert numpy.shares_memory(shared, numpy.asarray(x)) and not shared.flags.writeable


def test_dlpack_to_another_device_raises_buffer_error():
    with pytest.raises(BufferError, match="only export to the CPU"):
        mjnp.ones(2).__dlpack__(dl_device=(2, 0))


# --- Array API keywords NumPy lacks ------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_sort_descending(axis):
    x = numpy.array([[3.0, -1.0, 3.0, numpy.nan], [0.5, 0.5, -2.0, 7.0]])
    expected = numpy.flip(numpy.sort(x, axis=axis), axis=0 if axis is None else axis)
    numpy.testing.assert_array_equal(
        mjnp.sort(mjnp.asarray(x), axis=axis, descending=True), expected
    )


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_argsort_descending_is_stable(axis):
    x = numpy.array([[3, 1, 3, 0, 1, 3], [2, 2, 2, 5, 5, 0]])
    n = x.shape[axis]
    # Stable descending order: ties keep their original order.
    expected = n - 1 - numpy.flip(numpy.argsort(numpy.flip(x, axis), axis, stable=True), axis)
    got = mjnp.argsort(mjnp.asarray(x), axis=axis, descending=True, stable=True)
    numpy.testing.assert_array_equal(got, expected)
    jitted = mjcore.jit(lambda a: mjnp.argsort(a, axis=axis, descending=True))(x)
    numpy.testing.assert_array_equal(jitted, expected)


@pytest.mark.parametrize("fname", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("dtype", [None, "float32", "float64"])
def test_fftfreq_dtype(fname, dtype):
    got = getattr(mjnp.fft, fname)(7, d=0.25, dtype=dtype)
    expected = getattr(numpy.fft, fname)(7, d=0.25)
    assert got.dtype == numpy.dtype(dtype or "float64")
    numpy.testing.assert_allclose(got, expected, rtol=1e-6)


def test_fftfreq_rejects_a_non_real_floating_dtype():
    with pytest.raises(ValueError, match="real floating-point dtype, got int32"):
        mjnp.fft.fftfreq(4, dtype=mjnp.int32)
