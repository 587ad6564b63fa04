"""`lax.padtype_to_pads`, `conv_general_shape_tuple`, `conv_transpose_shape_tuple` and
`reduce_window_shape_tuple` against `jax.lax`, and against the shapes the ops produce."""

import jax
import numpy as np
import pytest

from mjcore import lax

jax.config.update("jax_enable_x64", True)

PADS = [
    ((7, 8), (3, 2), (2, 3), "SAME"),
    ((7, 8), (3, 2), (2, 3), "VALID"),
    ((7, 8), (3, 4), (1, 3), "SAME_LOWER"),
    ((5,), (5,), (4,), "same"),
]


@pytest.mark.parametrize(("in_shape", "window", "strides", "padding"), PADS, ids=str)
def test_padtype_to_pads_matches_jax(in_shape, window, strides, padding):
    got = lax.padtype_to_pads(in_shape, window, strides, padding)
    want = jax.lax.padtype_to_pads(in_shape, window, strides, padding)
    assert [tuple(p) for p in got] == [tuple(int(v) for v in p) for p in want]


def test_padtype_to_pads_rejects_unknown_names():
    with pytest.raises(ValueError, match="padding must be"):
        lax.padtype_to_pads((4,), (2,), (1,), "FULL")


CONV = [
    ((2, 9, 10, 3), (3, 3, 3, 5), (1, 1), "SAME", ("NHWC", "HWIO", "NHWC")),
    ((2, 9, 10, 3), (3, 2, 3, 5), (2, 3), "VALID", ("NHWC", "HWIO", "NHWC")),
    ((2, 3, 9, 10), (5, 3, 3, 2), (2, 1), [(1, 0), (2, 2)], ("NCHW", "OIHW", "NCHW")),
    ((2, 3, 9), (5, 3, 4), (3,), "SAME", ("NCH", "OIH", "NCH")),
    ((4, 7, 2), (3, 2, 6), (2,), "VALID", ("NHC", "HIO", "NCH")),
]


@pytest.mark.parametrize(("lhs", "rhs", "strides", "padding", "dnums"), CONV, ids=str)
def test_conv_general_shape_tuple_matches_jax_and_the_op(lhs, rhs, strides, padding, dnums):
    got = lax.conv_general_shape_tuple(lhs, rhs, strides, padding, dnums)
    assert got == tuple(jax.lax.conv_general_shape_tuple(lhs, rhs, strides, padding, dnums))
    out = lax.conv_general_dilated(np.ones(lhs), np.ones(rhs), strides, padding, None, None, dnums)
    assert out.shape == got


CONV_T = [
    ((2, 9, 10, 3), (3, 3, 3, 5), (1, 1), "SAME", ("NHWC", "HWIO", "NHWC")),
    ((2, 9, 10, 3), (3, 2, 3, 5), (2, 3), "VALID", ("NHWC", "HWIO", "NHWC")),
    ((2, 9, 10, 3), (4, 2, 3, 5), (2, 2), "SAME", ("NHWC", "HWIO", "NHWC")),
    ((4, 7, 2), (3, 2, 6), (2,), "SAME", ("NHC", "HIO", "NHC")),
]


@pytest.mark.parametrize(("lhs", "rhs", "strides", "padding", "dnums"), CONV_T, ids=str)
def test_conv_transpose_shape_tuple_matches_jax_and_the_op(lhs, rhs, strides, padding, dnums):
    got = lax.conv_transpose_shape_tuple(lhs, rhs, strides, padding, dnums)
    assert got == tuple(jax.lax.conv_transpose_shape_tuple(lhs, rhs, strides, padding, dnums))
    out = lax.conv_transpose(np.ones(lhs), np.ones(rhs), strides, padding, dimension_numbers=dnums)
    assert out.shape == got


WINDOWS = [
    ((1, 9, 10, 3), (1, 3, 3, 1), (1, 2, 2, 1), "VALID", None, None),
    ((1, 9, 10, 3), (1, 3, 2, 1), (1, 2, 3, 1), "SAME", None, None),
    ((4, 7), (2, 3), (1, 2), [(1, 2), (0, 3)], (2, 1), (1, 2)),
]


@pytest.mark.parametrize(
    ("shape", "window", "strides", "padding", "base", "wdil"), WINDOWS, ids=str
)
def test_reduce_window_shape_tuple_matches_jax_and_the_op(
    shape, window, strides, padding, base, wdil
):
    pads = (
        lax.padtype_to_pads(shape, window, strides, padding)
        if isinstance(padding, str)
        else padding
    )
    got = lax.reduce_window_shape_tuple(shape, window, strides, pads, base, wdil)
    want = jax.lax.reduce_window_shape_tuple(shape, window, strides, pads, base, wdil)
    assert got == tuple(int(d) for d in want)
    out = lax.reduce_window(np.ones(shape), 0.0, lax.add, window, strides, pads, base, wdil)
    assert out.shape == got
