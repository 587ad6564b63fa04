"""mjnp shape manipulation (mjnp/_manipulation.py) against NumPy, under vmap and under jvp."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from numpy.exceptions import AxisError

import mjcore
import mjnp
from tests.differential_registry import differential
from tests.mjnp_testing import (
    ALL_DTYPES,
    SETTINGS,
    arrays,
    assert_matches,
    cast_is_undefined,
    check_against_numpy,
    shapes,
)


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@st.composite
def new_shapes(draw, size: int):
    """A shape of `size` elements (rank 0-4), sometimes with one -1 or an impossible entry."""
    if size == 0:
        shape = list(draw(shapes(min_dims=1)))
        shape[draw(st.integers(0, len(shape) - 1))] = 0
    else:
        shape, rest = [], size
        for _ in range(draw(st.integers(0, 3))):
            d = draw(st.sampled_from(_divisors(rest)))
            shape.append(d)
            rest //= d
        if rest != 1 or draw(st.booleans()):
            shape.insert(draw(st.integers(0, len(shape))), rest)
    twist = draw(st.sampled_from(["none", "unknown", "unknown", "wrong"]))
    if twist == "unknown" and shape:
        shape[draw(st.integers(0, len(shape) - 1))] = -1
    elif twist == "wrong":
        shape.append(2)
    return tuple(shape)


@differential("reshape")
@SETTINGS
@given(x=arrays(), data=st.data())
def test_reshape(x, data):
    shape = data.draw(new_shapes(x.size), label="shape")
    order = data.draw(st.sampled_from(["C", "F", "A"]), label="order")
    check_against_numpy(mjnp.reshape, np.reshape, x, shape, order=order)


@differential("ravel")
@SETTINGS
@given(x=arrays(), order=st.sampled_from(["C", "F", "A", "K"]))
def test_ravel(x, order):
    check_against_numpy(mjnp.ravel, np.ravel, x, order=order)


@differential("permute_dims", "transpose")
@SETTINGS
@given(x=arrays(), data=st.data())
def test_transpose(x, data):
    if data.draw(st.booleans(), label="default"):
        axes = None
    else:
        perm = data.draw(st.permutations(range(x.ndim)), label="perm")
        axes = tuple(a - x.ndim if data.draw(st.booleans()) else a for a in perm)
    check_against_numpy(mjnp.transpose, np.transpose, x, axes)
    check_against_numpy(mjnp.permute_dims, np.permute_dims, x, axes)


@differential("swapaxes")
@SETTINGS
@given(x=arrays(), data=st.data())
def test_swapaxes(x, data):
    ax = st.integers(-x.ndim - 1, x.ndim)  # one beyond each end: AxisError
    check_against_numpy(mjnp.swapaxes, np.swapaxes, x, data.draw(ax), data.draw(ax))


@differential("moveaxis")
@SETTINGS
@given(x=arrays(), data=st.data())
def test_moveaxis(x, data):
    k = data.draw(st.integers(0, x.ndim), label="k")
    src = data.draw(st.permutations(range(x.ndim)), label="src")[:k]
    dst = data.draw(st.permutations(range(x.ndim)), label="dst")[:k]
    if k == 1 and data.draw(st.booleans()):
        src, dst = src[0], -1 - dst[0]
    check_against_numpy(mjnp.moveaxis, np.moveaxis, x, src, dst)


@differential("expand_dims")
@SETTINGS
@given(x=arrays(), data=st.data())
def test_expand_dims(x, data):
    out_ndim = x.ndim + data.draw(st.integers(1, 3), label="n_new")
    k = out_ndim - x.ndim
    axes = data.draw(st.lists(st.integers(-out_ndim, out_ndim - 1), min_size=k, max_size=k))
    axis = axes[0] if k == 1 else tuple(axes)  # may repeat (ValueError in both)
    check_against_numpy(mjnp.expand_dims, np.expand_dims, x, axis)


@differential("squeeze")
@SETTINGS
@given(x=arrays(shape=shapes(max_side=2)), data=st.data())
def test_squeeze(x, data):
    if x.ndim == 0 or data.draw(st.booleans()):
        axis = None
    else:
        axis = tuple(sorted(set(data.draw(st.lists(st.integers(0, x.ndim - 1), max_size=3)))))
    check_against_numpy(mjnp.squeeze, np.squeeze, x, axis)


@st.composite
def broadcast_targets(draw, shape):
    """A shape `shape` broadcasts to, or (sometimes) one it does not."""
    target = [d if d != 1 else draw(st.integers(0, 3)) for d in shape]
    target = list(draw(shapes(max_dims=2))) + target
    if draw(st.integers(0, 4)) == 0 and target:
        target[draw(st.integers(0, len(target) - 1))] += 1
    return tuple(target)


@differential("broadcast_to")
@SETTINGS
@given(x=arrays(), data=st.data())
def test_broadcast_to(x, data):
    shape = data.draw(broadcast_targets(x.shape), label="shape")
    check_against_numpy(mjnp.broadcast_to, np.broadcast_to, x, shape)


@differential("astype", "copy")
@SETTINGS
@given(x=arrays(shape=shapes(max_dims=2)), dtype=st.sampled_from(ALL_DTYPES))
def test_astype_and_copy(x, dtype):
    assume(not cast_is_undefined(x, dtype))
    check_against_numpy(mjnp.astype, np.astype, x, dtype)
    check_against_numpy(mjnp.copy, np.copy, x)


@differential("atleast_1d")
@SETTINGS
@given(x=arrays(shape=shapes(max_dims=2)))
def test_atleast_1d(x):
    check_against_numpy(mjnp.atleast_1d, np.atleast_1d, x)


def test_atleast_1d_several():
    outs = mjnp.atleast_1d(1.0, np.zeros((2, 2)))
    assert isinstance(outs, tuple) and [o.shape for o in outs] == [(1,), (2, 2)]
    assert mjnp.atleast_1d() == ()


def test_python_scalar_inputs_give_strong_arrays():
    out = mjnp.reshape(2.0, (1,))
    assert out.dtype == np.float64 and not out.weak_type
    assert_matches(mjnp.reshape([[1, 2], [3, 4]], -1), np.reshape([[1, 2], [3, 4]], -1))


# --- errors ---------------------------------------------------------------------------------

ERROR_CASES = [
    pytest.param(mjnp.reshape, ((2, 3), (4,)), ValueError, r"\(2, 3\)", id="reshape-size"),
    pytest.param(mjnp.reshape, ((2, 3), (-1, -1)), ValueError, "one unknown", id="reshape-2x-1"),
    pytest.param(mjnp.reshape, ((2, 3), 1.5), TypeError, "integers", id="reshape-float"),
    pytest.param(mjnp.reshape, ((2, 3), (6,), "Z"), ValueError, "order", id="reshape-order"),
    pytest.param(mjnp.transpose, ((2, 3), (0,)), ValueError, "don't match", id="transpose-len"),
    pytest.param(mjnp.transpose, ((2, 3), (0, 0)), ValueError, "repeated", id="transpose-rep"),
    pytest.param(mjnp.transpose, ((2, 3), (0, 2)), AxisError, "out of bounds", id="transpose-ax"),
    pytest.param(mjnp.swapaxes, ((2, 3), 0, 2), AxisError, "out of bounds", id="swapaxes"),
    pytest.param(mjnp.squeeze, ((2, 1), 0), ValueError, "size not equal to one", id="squeeze"),
    pytest.param(mjnp.squeeze, ((2, 1), 2), AxisError, "out of bounds", id="squeeze-axis"),
    pytest.param(mjnp.expand_dims, ((3,), (0, 0)), ValueError, "duplicate", id="expand-rep"),
    pytest.param(mjnp.expand_dims, ((3,), 2), AxisError, "out of bounds", id="expand-axis"),
    pytest.param(mjnp.moveaxis, ((2, 3), (0, 1), 0), ValueError, "same number", id="moveaxis"),
    pytest.param(mjnp.broadcast_to, ((3,), (2,)), ValueError, "broadcast", id="broadcast"),
    pytest.param(mjnp.broadcast_to, ((3,), (-1, 3)), ValueError, "non-negative", id="bcast-neg"),
    pytest.param(mjnp.astype, ((3,), "object"), TypeError, "not supported", id="astype-object"),
]


@pytest.mark.parametrize("fun,args,exc,match", ERROR_CASES)
def test_manipulation_errors(fun, args, exc, match):
    shape, *rest = args
    with pytest.raises(exc, match=match):
        fun(np.zeros(shape), *rest)


# --- transformations ------------------------------------------------------------------------

VMAP_CASES = [
    pytest.param(lambda m: lambda x: m.reshape(x, (-1, 2)), id="reshape"),
    pytest.param(lambda m: lambda x: m.reshape(x, (2, 6), order="F"), id="reshape-F"),
    pytest.param(lambda m: lambda x: m.ravel(x), id="ravel"),
    pytest.param(lambda m: lambda x: m.transpose(x), id="transpose"),
    pytest.param(lambda m: lambda x: m.swapaxes(x, 0, -1), id="swapaxes"),
    pytest.param(lambda m: lambda x: m.moveaxis(x, 0, 1), id="moveaxis"),
    pytest.param(lambda m: lambda x: m.expand_dims(x, (0, 3)), id="expand_dims"),
    pytest.param(lambda m: lambda x: m.squeeze(m.expand_dims(x, 1), 1), id="squeeze"),
    pytest.param(lambda m: lambda x: m.broadcast_to(x, (2, 3, 4)), id="broadcast_to"),
    pytest.param(lambda m: lambda x: m.astype(x, "float32"), id="astype"),
]


@pytest.mark.parametrize("in_axis", [0, 2])
@pytest.mark.parametrize("make", VMAP_CASES)
def test_vmap_matches_loop(make, in_axis):
    examples = np.random.default_rng(0).standard_normal((5, 3, 4))
    out = mjcore.vmap(make(mjnp), in_axes=in_axis)(np.moveaxis(examples, 0, in_axis))
    expected = np.stack([make(np)(x) for x in examples])
    assert_matches(out, expected)


@pytest.mark.parametrize("make", VMAP_CASES)
def test_jit_matches_eager(make):
    x = np.random.default_rng(2).standard_normal((3, 4))
    assert_matches(mjcore.jit(make(mjnp))(x), make(np)(x))


@pytest.mark.parametrize("make", VMAP_CASES)
def test_jvp_is_the_same_linear_map(make):
    rng = np.random.default_rng(1)
    x, t = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    out, out_dot = mjcore.jvp(make(mjnp), (x,), (t,))
    assert_matches(out, make(np)(x))
    np.testing.assert_allclose(np.asarray(out_dot), make(np)(t).astype(out.dtype))
