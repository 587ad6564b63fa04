"""mjcore.lax.conv_general_dilated against jax.lax (x64): values, gradients in both operands,
vmap over either or both operands, jit, the wrappers, and error messages."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import mjcore
from mjcore import lax

jax.config.update("jax_enable_x64", True)

# (id, lhs shape, rhs shape, keyword arguments): small shapes, each a different feature.
CONFIGS = [
    ("1d-valid", (2, 3, 7), (4, 3, 3), dict(window_strides=(1,), padding="VALID")),
    ("1d-same-stride2", (2, 3, 8), (2, 3, 3), dict(window_strides=(2,), padding="SAME")),
    (
        "2d-pads-strides-rhs-dilation",
        (2, 3, 6, 7),
        (4, 3, 2, 3),
        dict(window_strides=(2, 1), padding=((1, 2), (0, 1)), rhs_dilation=(1, 2)),
    ),
    (
        "2d-nhwc-lhs-dilation-negative-pad",
        (2, 5, 4, 3),
        (3, 2, 3, 2),
        dict(
            window_strides=(1, 2),
            padding=((2, -1), (1, 1)),
            lhs_dilation=(2, 1),
            dimension_numbers=("NHWC", "HWIO", "NHWC"),
        ),
    ),
    (
        "2d-same-lower",
        (1, 2, 5, 6),
        (3, 2, 2, 3),
        dict(window_strides=(2, 3), padding="SAME_LOWER", rhs_dilation=(2, 1)),
    ),
    (
        "3d-ncdhw",
        (1, 2, 4, 5, 3),
        (2, 2, 2, 3, 2),
        dict(window_strides=(1, 2, 1), padding=((0, 1), (1, 0), (1, 1)), rhs_dilation=(1, 1, 2)),
    ),
    (
        "2d-scrambled-dims",
        (5, 2, 3, 6),
        (2, 4, 3, 3),
        dict(
            window_strides=(1, 2),
            padding=((1, 0), (0, 0)),
            dimension_numbers=("HNCW", "WOHI", "CWHN"),
        ),
    ),
    (
        "2d-feature-groups",
        (2, 4, 5, 5),
        (6, 2, 2, 3),
        dict(window_strides=(1, 2), padding="SAME", feature_group_count=2),
    ),
    (
        "1d-depthwise-nwc",
        (2, 6, 3),
        (3, 1, 6),
        dict(
            window_strides=(2,),
            padding=((1, 1),),
            rhs_dilation=(2,),
            feature_group_count=3,
            dimension_numbers=("NWC", "WIO", "NWC"),
        ),
    ),
    (
        "2d-batch-groups",
        (4, 3, 5, 4),
        (4, 3, 2, 2),
        dict(window_strides=(1, 1), padding=((1, 0), (0, 1)), batch_group_count=2),
    ),
    (
        "1d-batch-groups-dilated",
        (6, 2, 5),
        (3, 2, 2),
        dict(window_strides=(2,), padding=((0, 1),), lhs_dilation=(2,), batch_group_count=3),
    ),
    ("0d", (3, 4), (5, 4), dict(window_strides=(), padding=())),
]
CONFIG_PARAMS = [pytest.param(s1, s2, kw, id=name) for name, s1, s2, kw in CONFIGS]


def _args(lhs_shape, rhs_shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(lhs_shape), rng.standard_normal(rhs_shape)


def _total(y):
    return lax.reduce_sum(y, tuple(range(y.ndim)))


def _close(actual, expected, rtol=1e-12):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=1e-12)


# The JAX oracles run under jax.jit: one compile per test, where JAX's eager mode compiles the
# convolution and every operation of its gradient on its own.
@pytest.mark.parametrize("lhs_shape,rhs_shape,kw", CONFIG_PARAMS)
def test_values_jit_and_grads_match_jax(lhs_shape, rhs_shape, kw):
    x, w = _args(lhs_shape, rhs_shape)
    out = lax.conv_general_dilated(x, w, **kw)
    # A random linear functional of the output makes every cotangent entry distinct.
    ct = np.random.default_rng(1).standard_normal(out.shape)

    def loss(a, b):
        return _total(lax.mul(lax.conv_general_dilated(a, b, **kw), ct))

    def jax_loss(a, b):
        return (jax.lax.conv_general_dilated(a, b, **kw) * ct).sum()

    expected, jax_grads = jax.jit(
        lambda a, b: (jax.lax.conv_general_dilated(a, b, **kw), jax.grad(jax_loss, (0, 1))(a, b))
    )(x, w)
    assert out.dtype == expected.dtype
    _close(out, expected)
    _close(mjcore.jit(lambda a, b: lax.conv_general_dilated(a, b, **kw))(x, w), out)
    grads = mjcore.grad(loss, argnums=(0, 1))(x, w)
    for g, jg in zip(grads, jax_grads, strict=True):
        _close(g, jg, rtol=1e-10)


@pytest.mark.parametrize("lhs_shape,rhs_shape,kw", CONFIG_PARAMS)
@pytest.mark.parametrize("in_axes", [(0, None), (None, 1), (2, 0)], ids=str)
def test_vmap_matches_jax_and_loop(lhs_shape, rhs_shape, kw, in_axes):
    size = 2
    shapes = []
    for shape, ax in zip((lhs_shape, rhs_shape), in_axes, strict=True):
        shapes.append(shape if ax is None else (*shape[:ax], size, *shape[ax:]))
    x, w = _args(*shapes, seed=2)
    out = mjcore.vmap(lambda a, b: lax.conv_general_dilated(a, b, **kw), in_axes=in_axes)(x, w)
    expected = jax.jit(jax.vmap(lambda a, b: jax.lax.conv_general_dilated(a, b, **kw), in_axes))(
        x, w
    )
    _close(out, expected)

    def example(arg, ax, i):
        return arg if ax is None else np.take(arg, i, axis=ax)

    loop = [
        lax.conv_general_dilated(example(x, in_axes[0], i), example(w, in_axes[1], i), **kw)
        for i in range(size)
    ]
    _close(out, np.stack([np.asarray(y) for y in loop]))


def test_vmap_of_grad_with_groups():
    x, w = _args((3, 2, 5, 4, 4), (2, 2, 2, 4), seed=3)
    kw = dict(window_strides=(1, 2), padding="SAME", feature_group_count=2)
    kw["dimension_numbers"] = ("NHWC", "HWIO", "NHWC")

    def loss(a, b):
        return _total(lax.integer_pow(lax.conv_general_dilated(a, b, **kw), 2))

    def jax_loss(a, b):
        return (jax.lax.conv_general_dilated(a, b, **kw) ** 2).sum()

    out = mjcore.jit(mjcore.vmap(mjcore.grad(loss, argnums=1), in_axes=(0, None)))(x, w)
    expected = jax.jit(jax.vmap(jax.grad(jax_loss, argnums=1), in_axes=(0, None)))(x, w)
    _close(out, expected)


def test_preferred_element_type_and_integers():
    x, w = _args((1, 2, 6), (3, 2, 2))
    out = lax.conv_general_dilated(
        x.astype(np.float32), w.astype(np.float32), (1,), "VALID", preferred_element_type="float64"
    )
    assert out.dtype == np.float64
    x32, w32 = (a.astype(np.float32).astype(np.float64) for a in (x, w))
    _close(out, jax.lax.conv_general_dilated(x32, w32, (1,), "VALID"))
    xi = np.arange(12, dtype=np.int8).reshape(1, 2, 6)
    wi = np.ones((3, 2, 2), np.int8)
    out = lax.conv_general_dilated(xi, wi, (2,), "SAME", preferred_element_type=np.int32)
    expected = jax.lax.conv_general_dilated(xi, wi, (2,), "SAME", preferred_element_type=np.int32)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), np.asarray(expected))


def test_dimension_numbers_canonical_form():
    dn = lax.conv_dimension_numbers((1, 5, 6, 3), (2, 3, 3, 4), ("NHWC", "HWIO", "NHWC"))
    assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert tuple(dn) == tuple(
        tuple(s)
        for s in jax.lax.conv_dimension_numbers(
            (1, 5, 6, 3), (2, 3, 3, 4), ("NHWC", "HWIO", "NHWC")
        )
    )
    x, w = _args((1, 5, 6, 3), (2, 3, 3, 4))
    _close(
        lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn),
        jax.lax.conv_general_dilated(
            x, w, (1, 1), "SAME", dimension_numbers=jax.lax.ConvDimensionNumbers(*dn)
        ),
    )


def test_empty_batch_and_empty_gradient():
    x, w = _args((0, 2, 5), (3, 2, 2))
    out = mjcore.vmap(lambda a: lax.conv_general_dilated(a, w, (1,), "VALID"))(x[None][:0])
    assert out.shape == (0, 0, 3, 4)
    g = mjcore.grad(lambda b: _total(lax.conv_general_dilated(x, b, (1,), "VALID")))(w)
    _close(g, np.zeros_like(w))


ERRORS = [
    ("feature dimension", ValueError, (2, 3, 5), (4, 2, 2), {}),
    ("multiple of the group count", ValueError, (2, 4, 5), (3, 2, 2), {"feature_group_count": 2}),
    ("batch_group_count \\(3\\) must divide", ValueError, (4, 2, 5), (3, 2, 2),
     {"batch_group_count": 3}),
    ("at most one", ValueError, (4, 4, 5), (4, 2, 2),
     {"feature_group_count": 2, "batch_group_count": 2}),
    ("same number of dimensions", TypeError, (2, 3, 5), (4, 3, 2, 2), {}),
    ("one entry per spatial dimension", ValueError, (2, 3, 5), (4, 3, 2),
     {"window_strides": (1, 1)}),
    ("must be positive", ValueError, (2, 3, 5), (4, 3, 2), {"rhs_dilation": (0,)}),
    ("padding must be 'SAME'", ValueError, (2, 3, 5), (4, 3, 2), {"padding": "FULL"}),
    ("string padding", ValueError, (2, 3, 5), (4, 3, 2), {"padding": "SAME", "lhs_dilation": (2,)}),
    ("crops more", ValueError, (2, 3, 5), (4, 3, 2), {"padding": ((-3, -3),)}),
    ("'N' and 'C' once each", TypeError, (2, 3, 5), (4, 3, 2),
     {"dimension_numbers": ("NWW", "OIW", "NCW")}),
    ("same spatial letters", TypeError, (2, 3, 5), (4, 3, 2),
     {"dimension_numbers": ("NCH", "OIW", "NCW")}),
]  # fmt: skip


@pytest.mark.parametrize(
    "match,error,lhs_shape,rhs_shape,kw", ERRORS, ids=[e[0].split(" ")[0] for e in ERRORS]
)
def test_errors_name_the_function_and_shapes(match, error, lhs_shape, rhs_shape, kw):
    kw = {"window_strides": (1,) * (len(lhs_shape) - 2), "padding": "VALID", **kw}
    x, w = np.zeros(lhs_shape), np.zeros(rhs_shape)
    with pytest.raises(error, match=f"conv_general_dilated: .*{match}"):
        lax.conv_general_dilated(x, w, **kw)


def test_bad_dimension_numbers_and_strides():
    x, w = np.zeros((2, 3, 5)), np.zeros((4, 3, 2))
    bad = lax.ConvDimensionNumbers((0, 1, 2), (0, 1, 3), (0, 1, 2))
    with pytest.raises(ValueError, match=r"rhs_spec \(0, 1, 3\) must be a permutation"):
        lax.conv_general_dilated(x, w, (1,), "SAME", dimension_numbers=bad)
    with pytest.raises(ValueError, match="conv_transpose: strides must have one entry"):
        lax.conv_transpose(x, w, (1, 1), "SAME", dimension_numbers=("NCH", "OIH", "NCH"))
    with pytest.raises(TypeError, match="conv_general_dilated: window_strides must be a seq"):
        lax.conv_general_dilated(x, w, (1.5,), "SAME")


def test_mismatched_feature_error_shows_shapes():
    with pytest.raises(ValueError, match=r"lhs shape \(2, 3, 5\) and rhs shape \(4, 2, 2\)"):
        lax.conv_general_dilated(np.zeros((2, 3, 5)), np.zeros((4, 2, 2)), (1,), "VALID")


def test_preferred_element_type_gradients():
    x, w = (a.astype(np.float32) for a in _args((2, 2, 6), (3, 2, 2)))
    kw = dict(window_strides=(2,), padding="SAME", preferred_element_type=np.float64)

    def loss(a, b):
        return _total(lax.integer_pow(lax.conv_general_dilated(a, b, **kw), 2))

    grads = mjcore.grad(loss, argnums=(0, 1))(x, w)
    jax_grads = jax.jit(
        jax.grad(lambda a, b: (jax.lax.conv_general_dilated(a, b, **kw) ** 2).sum(), (0, 1))
    )(x, w)
    for g, jg in zip(grads, jax_grads, strict=True):
        assert g.dtype == np.float32
        _close(g, jg, rtol=1e-6)


WRAPPERS = [
    ("conv-same", "conv", (2, 3, 5, 6), (4, 3, 2, 3), ((2, 1), "SAME"), {}),
    ("conv-valid-1d", "conv", (1, 2, 7), (3, 2, 3), ((3,), "VALID"), {}),
    (
        "general-padding",
        "conv_with_general_padding",
        (2, 3, 5, 6),
        (4, 3, 2, 3),
        ((1, 2), ((1, 0), (2, -1)), (2, 1), (1, 2)),
        {},
    ),
    ("transpose-same", "conv_transpose", (2, 5, 4, 3), (3, 2, 3, 4), ((2, 2), "SAME"), {}),
    (
        "transpose-valid-dilated-kernel",
        "conv_transpose",
        (1, 4, 2),
        (3, 3, 2),
        ((3,), "VALID"),
        {"rhs_dilation": (2,), "transpose_kernel": True},
    ),
    (
        "transpose-pairs",
        "conv_transpose",
        (1, 2, 4, 5),
        (3, 2, 2, 3),
        ((2, 1), ((1, 2), (0, 1))),
        {"dimension_numbers": ("NCHW", "OIHW", "NCHW")},
    ),
    (
        "transpose-consistent-pairs",
        "conv_transpose",
        (1, 4, 3, 2),
        (2, 3, 4, 2),
        ((2, 3), ((1, 0), (0, 1))),
        {"use_consistent_padding": True, "transpose_kernel": True},
    ),
]


@pytest.mark.parametrize(
    "name,lhs_shape,rhs_shape,args,kw", [pytest.param(*w[1:], id=w[0]) for w in WRAPPERS]
)
def test_wrappers_match_jax(name, lhs_shape, rhs_shape, args, kw):
    x, w = _args(lhs_shape, rhs_shape, seed=4)
    ours, theirs = getattr(lax, name), getattr(jax.lax, name)
    out = ours(x, w, *args, **kw)
    ct = np.random.default_rng(5).standard_normal(out.shape)
    expected, jax_grads = jax.jit(
        lambda a, b: (
            theirs(a, b, *args, **kw),
            jax.grad(lambda a, b: (theirs(a, b, *args, **kw) * ct).sum(), (0, 1))(a, b),
        )
    )(x, w)
    _close(out, expected)
    grads = mjcore.grad(lambda a, b: _total(lax.mul(ours(a, b, *args, **kw), ct)), (0, 1))(x, w)
    for g, jg in zip(grads, jax_grads, strict=True):
        _close(g, jg, rtol=1e-10)


def test_conv_transpose_errors():
    x, w = np.zeros((1, 2, 3, 4, 5, 6)), np.zeros((1, 2, 3, 4, 5, 6))
    with pytest.raises(ValueError, match="conv_transpose: no default dimension_numbers"):
        lax.conv_transpose(x, w, (1,) * 4, "SAME")
    x, w = np.zeros((1, 4, 2)), np.zeros((3, 2, 3))
    with pytest.raises(ValueError, match="conv_transpose: padding must be"):
        lax.conv_transpose(x, w, (2,), "SAME_LOWER", use_consistent_padding=True)
    with pytest.raises(ValueError, match="conv_general_dilated: string padding"):
        lax.conv_transpose(x, w, (2,), "SAME_LOWER")


def test_bool_and_complex_match_jax():
    rng = np.random.default_rng(6)
    xb, wb = rng.random((2, 3, 6)) < 0.3, rng.random((2, 3, 2)) < 0.3
    kw = dict(window_strides=(1,), padding="SAME")
    out = lax.conv_general_dilated(xb, wb, **kw)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, jax.lax.conv_general_dilated(xb, wb, **kw))
    x, w = (
        a + 1j * b
        for a, b in zip(_args((2, 3, 6), (2, 3, 2)), _args((2, 3, 6), (2, 3, 2), 7), strict=True)
    )
    ct = rng.standard_normal((2, 2, 6)) + 1j * rng.standard_normal((2, 2, 6))

    def f(a, b):
        return lax.conv_general_dilated(a, b, **kw)

    out, f_vjp = mjcore.vjp(f, x, w)
    expected, jax_vjp = jax.vjp(lambda a, b: jax.lax.conv_general_dilated(a, b, **kw), x, w)
    _close(out, expected)
    for g, jg in zip(f_vjp(ct), jax_vjp(ct), strict=True):
        _close(g, jg, rtol=1e-10)
