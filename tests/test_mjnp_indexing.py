"""Basic indexing (mjnp/_indexing.py) against NumPy, with traced indices, under vmap and jvp."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import mjcore
import mjnp  # noqa: F401  (installs the array surface)
from tests.mjnp_testing import SETTINGS, arrays, assert_matches, check_against_numpy, shapes


def _getitem(x, idx):
    return x[idx]


def _mj_getitem(x, idx):
    return mjcore.device_put(x)[idx]


@SETTINGS
@given(x=arrays(), data=st.data())
def test_basic_indices_match_numpy(x, data):
    idx = data.draw(hnp.basic_indices(x.shape, allow_newaxis=True), label="idx")
    check_against_numpy(_mj_getitem, _getitem, x, idx)


@st.composite
def wild_slices(draw, size: int):
    """Slices with any bounds (out of range and negative included) and any nonzero step."""
    bound = st.none() | st.integers(-2 * size - 2, 2 * size + 2)
    step = st.none() | st.integers(-3, 3).filter(bool)
    return slice(draw(bound), draw(bound), draw(step))


@st.composite
def wild_indices(draw, shape):
    """Tuples of ints (sometimes out of range), wild slices, None and at most one Ellipsis,
    sometimes with more indices than axes."""
    entries = []
    for size in shape[: draw(st.integers(0, len(shape) + 1))]:
        kind = draw(st.sampled_from(["slice", "slice", "int", "none"]))
        if kind == "slice":
            entries.append(draw(wild_slices(size)))
        elif kind == "int":
            entries.append(draw(st.integers(-size - 1, size)))
        else:
            entries.append(None)
    if draw(st.booleans()):
        entries.insert(draw(st.integers(0, len(entries))), Ellipsis)
    if len(entries) < len(shape) + 1 and draw(st.integers(0, 5)) == 0:
        entries.append(0)  # possibly one index too many
    return tuple(entries) if len(entries) != 1 or draw(st.booleans()) else entries[0]


@SETTINGS
@given(x=arrays(shape=shapes(min_dims=1)), data=st.data())
def test_wild_indices_match_numpy(x, data):
    idx = data.draw(wild_indices(x.shape), label="idx")
    check_against_numpy(_mj_getitem, _getitem, x, idx)


def test_index_types():
    x = np.arange(24.0).reshape(2, 3, 4)
    for idx in [
        np.int8(1),
        np.uint64(1),
        np.array(1),
        mjcore.device_put(np.array(-1)),
        (Ellipsis, np.int32(-2)),
        (),
        Ellipsis,
        (slice(None), None, 1),
    ]:
        np_idx = np.asarray(idx) if isinstance(idx, mjcore.Array) else idx
        assert_matches(_mj_getitem(x, idx), x[np_idx])


# --- errors ---------------------------------------------------------------------------------

ERROR_CASES = [
    pytest.param((3,), 3, IndexError, "index 3 is out of bounds for axis 0 with size 3", id="oob"),
    pytest.param((3,), -4, IndexError, "out of bounds", id="oob-negative"),
    pytest.param((2, 3), (0, 0, 0), IndexError, "too many indices", id="too-many"),
    pytest.param((3,), (..., ...), IndexError, "single ellipsis", id="two-ellipses"),
    pytest.param((3,), 1.0, IndexError, "only integers, slices", id="float"),
    pytest.param((3,), "a", IndexError, "only integers, slices", id="str"),
    pytest.param((3,), slice(None, None, 0), ValueError, "step cannot be zero", id="step-0"),
    pytest.param((3,), [0, 3], IndexError, "index 3 is out of bounds", id="list-oob"),
    pytest.param((3,), np.array([-4]), IndexError, "out of bounds", id="array-oob"),
    pytest.param((3,), np.array([True, False]), IndexError, "boolean index did not", id="mask"),
    pytest.param((3, 2), ([0, 1], [0, 1, 1]), IndexError, "shape mismatch", id="broadcast"),
    pytest.param((3,), np.array([0.5]), IndexError, "only integers, slices", id="float-array"),
    pytest.param((3,), slice(0.5, 2), TypeError, "slice indices", id="float-slice"),
]


@pytest.mark.parametrize("shape,idx,exc,match", ERROR_CASES)
def test_indexing_errors(shape, idx, exc, match):
    with pytest.raises(exc, match=match):
        _mj_getitem(np.zeros(shape), idx)


def test_traced_slice_bound_is_an_index_error():
    with pytest.raises(IndexError, match="dynamic_slice"):
        mjcore.jit(lambda x, i: x[i:])(np.zeros(3), 1)


def test_static_index_is_checked_under_tracing():
    with pytest.raises(IndexError, match="out of bounds"):
        mjcore.jit(lambda x: x[5])(np.zeros(3))
    with pytest.raises(IndexError, match="out of bounds"):
        mjcore.vmap(lambda x: x[:, 3])(np.zeros((2, 3, 3)))


# --- traced indices -------------------------------------------------------------------------


@pytest.mark.parametrize("i", [0, 2, -1, -3])
def test_traced_integer_index(i):
    x = np.arange(12.0).reshape(3, 4)
    f = mjcore.jit(lambda x, i: x[i, 1:])
    assert_matches(f(x, i), x[i, 1:])
    g = mjcore.jit(lambda x, i: x[None, ..., i])
    assert_matches(g(x, np.int32(i)), x[None, ..., i])


def test_traced_index_is_clamped():
    # NB: the value of a traced index is unknown when NumPy would raise; it is clamped.
    x = np.arange(4.0)
    assert float(mjcore.jit(lambda x, i: x[i])(x, 10)) == 3.0
    assert float(mjcore.jit(lambda x, i: x[i])(x, -10)) == 0.0


def test_vmap_over_indices():
    x = np.arange(20.0).reshape(4, 5)
    idx = np.array([0, 3, -1, -4, 2])
    out = mjcore.vmap(lambda i: mjcore.device_put(x)[i, 1:3])(idx)
    assert_matches(out, np.stack([x[i, 1:3] for i in idx]))
    out = mjcore.vmap(lambda row, i: row[i])(x, idx[:4])
    assert_matches(out, np.stack([r[i] for r, i in zip(x, idx[:4], strict=True)]))


@pytest.mark.parametrize(
    "idx",
    [
        pytest.param((slice(None, None, -2), 1), id="rev-int"),
        pytest.param((Ellipsis, None, slice(1, None)), id="ellipsis-newaxis"),
        pytest.param((-1,), id="negative"),
        pytest.param((slice(3, 0, -1), slice(None, None, 2)), id="two-slices"),
    ],
)
def test_vmap_and_jvp_of_static_indexing(idx):
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((3, 5, 4))
    out = mjcore.vmap(lambda x: x[idx])(xs)
    assert_matches(out, np.stack([x[idx] for x in xs]))
    t = rng.standard_normal(xs.shape[1:])
    y, y_dot = mjcore.jvp(lambda x: x[idx], (xs[0],), (t,))
    assert_matches(y, xs[0][idx])
    assert_matches(y_dot, t[idx])


def test_jvp_with_traced_index():
    x = np.arange(6.0).reshape(2, 3)
    t = np.ones_like(x) * 2
    y, y_dot = mjcore.jvp(lambda v: mjcore.jit(lambda v, i: v[i])(v, -1), (x,), (t,))
    assert_matches(y, x[-1])
    assert_matches(y_dot, t[-1])
