"""mjnp's further creation routines (mjnp/_matrices.py, _ranges.py, _window.py, the
from-existing-data part of _creation.py and the index generators of _index_tricks.py) against
NumPy, jit, vmap and JAX."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mjcore
import mjnp
from mjcore.errors import ConcretizationTypeError
from mjcore.test_util import check_grads
from tests.differential_registry import differential
from tests.mjnp_testing import ALL_DTYPES, SETTINGS, arrays, assert_matches, shapes
from tests.mjnp_testing import check_against_numpy as check

jax.config.update("jax_enable_x64", True)

SOME_DTYPES = ("bool", "int8", "uint8", "int32", "int64", "float16", "float32", "complex64")


@differential("tri")
@SETTINGS
@given(
    n=st.integers(-1, 4),
    m=st.one_of(st.none(), st.integers(0, 4)),
    k=st.integers(-5, 5),
    dtype=st.sampled_from([float, int, bool, "float32", "complex64"]),
)
def test_tri(n, m, k, dtype):
    check(mjnp.tri, np.tri, n, m, k, dtype)


@differential("diag", "diagflat", "tril", "triu")
@settings(SETTINGS, max_examples=20)
@given(x=arrays(ALL_DTYPES, shape=shapes(max_dims=3, max_side=4)), k=st.integers(-5, 5))
def test_tril_triu_diag(x, k):
    check(mjnp.tril, np.tril, x, k)
    check(mjnp.triu, np.triu, x, k)
    check(mjnp.diag, np.diag, x, k)
    check(mjnp.diagflat, np.diagflat, x, k)


@differential("vander")
@SETTINGS
@given(
    x=arrays(ALL_DTYPES, shape=shapes(max_dims=2, max_side=4)),
    n=st.one_of(st.none(), st.integers(-1, 5)),
    increasing=st.booleans(),
)
def test_vander(x, n, increasing):
    check(mjnp.vander, np.vander, x, n, increasing)


_ENDS = st.one_of(
    st.integers(-3, 3),
    st.floats(-3, 3),
    arrays(("float32", "float64", "int8"), shape=shapes(min_dims=1, max_dims=1, max_side=3)),
)


@differential("logspace")
@settings(SETTINGS, max_examples=15)
@given(
    start=_ENDS,
    stop=_ENDS,
    num=st.integers(0, 6),
    endpoint=st.booleans(),
    base=st.one_of(st.just(10.0), st.floats(0.5, 4), st.just([2.0, 3.0])),
    dtype=st.sampled_from([None, "float32", "complex128"]),
    axis=st.integers(-1, 1),
)
def test_logspace(start, stop, num, endpoint, base, dtype, axis):
    check(mjnp.logspace, np.logspace, start, stop, num, endpoint, base, dtype, axis)


_NONZERO_ENDS = st.one_of(
    st.sampled_from([1, -2, 0.5, 1000, -1e-3, 1j, -1 + 1j, 0]),
    arrays(("float32", "float64"), shape=(2,), domain=(0.5, 4)),
)


@differential("geomspace")
@settings(SETTINGS, max_examples=15)
@given(
    start=_NONZERO_ENDS,
    stop=_NONZERO_ENDS,
    num=st.integers(0, 6),
    endpoint=st.booleans(),
    dtype=st.sampled_from([None, "float32", "complex128"]),
    axis=st.integers(-1, 1),
)
def test_geomspace(start, stop, num, endpoint, dtype, axis):
    if dtype == "float32" and np.iscomplexobj(np.asarray(start) * np.asarray(stop)):
        dtype = None  # a complex sequence cast to a real dtype is a ComplexWarning in NumPy
    check(mjnp.geomspace, np.geomspace, start, stop, num, endpoint, dtype, axis)


@differential("meshgrid")
@SETTINGS
@given(
    xs=st.lists(arrays(SOME_DTYPES, shape=shapes(max_dims=2, max_side=3)), max_size=3),
    sparse=st.booleans(),
    indexing=st.sampled_from(["xy", "ij", "yx"]),
)
def test_meshgrid(xs, sparse, indexing):
    check(mjnp.meshgrid, np.meshgrid, *xs, sparse=sparse, indexing=indexing)


@differential("fromfunction", "indices")
@SETTINGS
@given(
    dims=st.lists(st.integers(0, 3), max_size=3).map(tuple),
    dtype=st.sampled_from([int, float, "int8"]),
    sparse=st.booleans(),
)
def test_indices_and_fromfunction(dims, dtype, sparse):
    check(mjnp.indices, np.indices, dims, dtype, sparse)
    if len(dims) == 2:
        f = lambda i, j, c: i * 2 + j - c  # noqa: E731
        check(mjnp.fromfunction, np.fromfunction, f, dims, dtype=dtype, c=1)


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
@pytest.mark.parametrize("M", [-1, 0, 1, 2, 5, 8, 4.5])
def test_windows(name, M):
    check(getattr(mjnp, name), getattr(np, name), M)


@pytest.mark.parametrize("M", [-1, 0, 1, 2, 7, 12])
@pytest.mark.parametrize("beta", [0.0, 0.5, 6.0, 14.0, 40.0])
def test_kaiser(M, beta):
    check(mjnp.kaiser, np.kaiser, M, beta)


@pytest.mark.parametrize(
    "name, args",
    [
        ("tril_indices", (4,)),
        ("tril_indices", (3, -1, 5)),
        ("triu_indices", (4, 1)),
        ("triu_indices", (0,)),
        ("tril_indices_from", (np.ones((3, 5)), 1)),
        ("triu_indices_from", (np.ones((4, 2)), -1)),
        ("triu_indices_from", (np.ones(3),)),
        ("diag_indices", (3,)),
        ("diag_indices", (4, 3)),
        ("diag_indices_from", (np.ones((3, 3, 3)),)),
        ("diag_indices_from", (np.ones((3, 2)),)),
        ("diag_indices_from", (np.ones(3),)),
        ("ix_", ([0, 1], [True, False, True], np.array([], dtype=np.float32))),
        ("ix_", (np.array([[1]]),)),
        ("ix_", ()),
    ],
)
def test_index_generators(name, args):
    check(getattr(mjnp, name), getattr(np, name), *args)


@pytest.mark.parametrize("k", [-1, 0, 2])
def test_mask_indices(k):
    check(mjnp.mask_indices, np.mask_indices, 4, mjnp.triu, k)
    expected = np.mask_indices(3, np.tril, k)
    for a, e in zip(mjnp.mask_indices(3, mjnp.tril, k), expected, strict=True):
        assert_matches(a, e)


@pytest.mark.parametrize(
    "name, args, kwargs",
    [
        ("asanyarray", ([1, 2.5],), {}),
        ("asanyarray", (np.int8(3),), {"dtype": "float32"}),
        ("ascontiguousarray", (3.0,), {}),
        ("ascontiguousarray", (np.ones((2, 3), np.int16),), {"dtype": "int8"}),
        ("asarray_chkfinite", ([1.0, 2.0],), {}),
        ("asarray_chkfinite", ([1.0, np.inf],), {}),
        ("asarray_chkfinite", ([1, 2],), {"dtype": "float32"}),
        ("require", (np.arange(3),), {"dtype": "float32", "requirements": ["C", "A", "O"]}),
        ("require", (np.arange(3),), {"requirements": "E"}),
        ("require", (np.arange(3),), {"requirements": ["Q"]}),
        ("frombuffer", (b"\x01\x02\x03\x04",), {"dtype": "uint8", "offset": 1}),
        ("frombuffer", (np.arange(4.0).tobytes(),), {"count": 2}),
        ("frombuffer", (b"\x01\x02\x03",), {"dtype": "int16"}),
        ("fromiter", (range(5), "int32"), {}),
        ("fromiter", ((0.5, 1.0, 1.5, 2.0), float), {"count": 3}),
        ("fromstring", ("1 2 3.5",), {"sep": " "}),
        ("fromstring", ("1,2",), {"dtype": int, "sep": ","}),
        ("fromstring", (b"\x01\x02",), {"dtype": "uint8"}),
    ],
)
def test_conversions(name, args, kwargs):
    check(getattr(mjnp, name), getattr(np, name), *args, **kwargs)


def test_require_rejects_unmeetable_flags():
    with pytest.raises(ValueError, match="writeable"):
        mjnp.require(np.ones(2), requirements="W")


def test_value_checks_need_concrete_values():
    with pytest.raises(ConcretizationTypeError):
        mjcore.jit(mjnp.asarray_chkfinite)(np.ones(2))
    with pytest.raises(ConcretizationTypeError):
        mjcore.jit(lambda m: mjnp.ix_(m))(np.array([True, False]))
    # Traced geomspace ends skip the zero check but compute the same values.
    out = mjcore.jit(lambda a, b: mjnp.geomspace(a, b, 4))(1.0, 1000.0)
    assert_matches(out, np.geomspace(1.0, 1000.0, 4))


# --- transformations ------------------------------------------------------------------------

# Functions of one (3, 4) float64 array; NumPy and JAX namespaces are drop-in for mjnp.
CASES = [
    pytest.param(lambda m: lambda x: m.tril(x, -1), id="tril"),
    pytest.param(lambda m: lambda x: m.triu(x, 1), id="triu"),
    pytest.param(lambda m: lambda x: m.diag(x, 1), id="diag-extract"),
    pytest.param(lambda m: lambda x: m.diag(x[0], -2), id="diag-build"),
    pytest.param(lambda m: lambda x: m.diagflat(x[:2], 1), id="diagflat"),
    pytest.param(lambda m: lambda x: m.vander(x[0], 5), id="vander"),
    pytest.param(lambda m: lambda x: m.logspace(x[0], x[1], 5, axis=1), id="logspace"),
    pytest.param(lambda m: lambda x: m.logspace(0.0, x[0], 3, base=2.0), id="logspace-base"),
    pytest.param(lambda m: lambda x: m.geomspace(x[0] ** 2 + 1, 3.0, 4), id="geomspace"),
    pytest.param(lambda m: lambda x: m.meshgrid(x[0], x[1, :3])[0], id="meshgrid"),
    pytest.param(lambda m: lambda x: m.meshgrid(x[0], x[1], indexing="ij")[1], id="meshgrid-ij"),
    pytest.param(lambda m: lambda x: m.kaiser(6, x[0, 0] ** 2 + 3.0), id="kaiser"),
    pytest.param(lambda m: lambda x: m.hanning(5) * x[0, 0], id="hanning"),
]


@pytest.mark.parametrize("make", CASES)
def test_jit_matches_eager(make):
    x = np.random.default_rng(2).standard_normal((3, 4))
    assert_matches(mjcore.jit(make(mjnp))(x), make(np)(x))


@pytest.mark.parametrize("make", CASES)
def test_vmap_matches_loop(make):
    examples = np.random.default_rng(0).standard_normal((2, 3, 4))
    out = mjcore.vmap(make(mjnp), in_axes=1)(np.moveaxis(examples, 0, 1))
    assert_matches(out, np.stack([make(np)(x) for x in examples]))


@pytest.mark.parametrize("make", CASES[:2] + [CASES[-1]])
def test_vmap_other_axes_and_empty_batch(make):
    examples = np.random.default_rng(4).standard_normal((3, 3, 4))
    expected = np.stack([make(np)(x) for x in examples])
    assert_matches(mjcore.vmap(make(mjnp))(examples), expected)
    out = mjcore.vmap(make(mjnp), in_axes=None, axis_size=2)(examples[0])
    assert_matches(out, np.stack([make(np)(examples[0])] * 2))
    empty = mjcore.vmap(make(mjnp))(examples[:0])
    assert (empty.shape, empty.dtype) == (expected[:0].shape, expected.dtype)


def _grads_inputs(make) -> tuple[np.ndarray, np.ndarray]:
    """The point and the cotangent of `test_grads_match_jax`."""
    x = np.random.default_rng(1).standard_normal((3, 4))
    return x, np.random.default_rng(3).standard_normal(np.shape(make(np)(x)))


@functools.cache
def _jax_vjps() -> list[np.ndarray]:
    """JAX's vjp of every case at its `_grads_inputs`, in one jax.jit (one compile, where
    JAX's eager vjps compile each operation of each case)."""
    makes = [case.values[0] for case in CASES]

    def every_case(inputs):
        pairs = zip(makes, inputs, strict=True)
        return [jax.vjp(make(jnp), x)[1](ct)[0] for make, (x, ct) in pairs]

    return jax.jit(every_case)([_grads_inputs(make) for make in makes])


@pytest.mark.parametrize("make", CASES)
def test_grads_match_jax(make):
    x, ct = _grads_inputs(make)
    # Under jit: one compilation per transformation instead of one per primitive.
    f = mjcore.jit(make(mjnp))
    check_grads(f, (x,), order=1, modes=("fwd", "rev"))
    _, mj_vjp = mjcore.vjp(f, x)
    expected = _jax_vjps()[next(i for i, c in enumerate(CASES) if c.values[0] is make)]
    np.testing.assert_allclose(np.asarray(mj_vjp(ct)[0]), np.asarray(expected), rtol=1e-9)
