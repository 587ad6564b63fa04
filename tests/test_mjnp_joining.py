"""mjnp joining, splitting and rearranging (mjnp/_joining.py) against NumPy, jit, vmap and JAX."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.exceptions import AxisError

import mjcore
import mjnp
from mjcore.errors import ConcretizationTypeError
from mjcore.test_util import check_grads
from tests.differential_registry import differential
from tests.mjnp_testing import ALL_DTYPES, SETTINGS, arrays, assert_matches, shapes
from tests.mjnp_testing import check_against_numpy as check

jax.config.update("jax_enable_x64", True)

SOME_DTYPES = ("bool", "int8", "uint8", "int32", "int64", "float16", "float32", "complex64")


@st.composite
def joinable(draw, max_arrays=3):
    """Arrays that agree except along one axis (sometimes not), with dtypes of their own."""
    base = list(draw(shapes(max_dims=3, max_side=3)))
    n = draw(st.integers(0, max_arrays))
    axis = draw(st.integers(0, len(base) - 1)) if base else 0
    out = []
    for _ in range(n):
        shape = list(base)
        if shape:
            shape[axis] = draw(st.integers(0, 3))
        if draw(st.integers(0, 9)) == 0:
            shape = shape[1:]  # a rank mismatch now and then
        out.append(draw(arrays(SOME_DTYPES, shape=tuple(shape))))
    return out


@differential("append", "concat", "concatenate")
@SETTINGS
@given(arrs=joinable(), data=st.data())
def test_concatenate(arrs, data):
    ndim = arrs[0].ndim if arrs else 1
    axis = data.draw(st.one_of(st.none(), st.integers(-ndim - 1, ndim)), label="axis")
    dtype = data.draw(st.sampled_from([None, "float32", "int8", "complex128"]), label="dtype")
    casting = data.draw(st.sampled_from(["same_kind", "unsafe", "safe", "no"]), label="casting")
    check(mjnp.concatenate, np.concatenate, arrs, axis=axis, dtype=dtype, casting=casting)
    check(mjnp.concat, np.concat, arrs, axis=axis)
    check(mjnp.append, np.append, *arrs[:2], axis=axis) if len(arrs) >= 2 else None


@differential("column_stack", "dstack", "hstack", "row_stack", "stack", "unstack", "vstack")
@settings(SETTINGS, max_examples=20)
@given(x=arrays(SOME_DTYPES, shape=shapes(max_dims=3, max_side=3)), data=st.data())
def test_stack_family(x, data):
    n = data.draw(st.integers(1, 3), label="n")
    y = x * 2
    dtype2 = np.dtype(data.draw(st.sampled_from(SOME_DTYPES), label="dtype2"))
    y = (y.real if dtype2.kind != "c" else y).astype(dtype2)
    arrs = [x, y, x][:n]
    axis = data.draw(st.integers(-x.ndim - 2, x.ndim + 1), label="axis")
    check(mjnp.stack, np.stack, arrs, axis=axis)
    for name in ("hstack", "vstack", "dstack", "column_stack"):
        check(getattr(mjnp, name), getattr(np, name), arrs)
    with pytest.warns(DeprecationWarning, match="row_stack"):
        check(mjnp.row_stack, np.row_stack, arrs)
    check(mjnp.unstack, np.unstack, x, axis=axis)


def test_stack_dtype_casting_and_errors():
    a, b = np.ones(2, np.float32), np.arange(2)
    check(mjnp.stack, np.stack, [a, b], dtype="int32")
    check(mjnp.stack, np.stack, [a, b], dtype="int32", casting="unsafe")
    check(mjnp.hstack, np.hstack, [a, b], dtype="float32", casting="same_kind")
    check(mjnp.stack, np.stack, [a, np.ones(3)])
    check(mjnp.stack, np.stack, [])
    check(mjnp.concatenate, np.concatenate, [np.float64(1), np.float64(2)])
    with pytest.raises(TypeError, match="sequence"):
        mjnp.vstack(x for x in [a, a])


@pytest.mark.parametrize(
    "arrays",
    [
        pytest.param([[np.ones((2, 2)), np.zeros((2, 1))], [np.ones((1, 3))]], id="2x2-blocks"),
        pytest.param([1, np.arange(2, dtype=np.int8)], id="scalar-and-vector"),
        pytest.param([[1, 2], [3, 4]], id="nested-scalars"),
        pytest.param(np.float32(3), id="scalar"),
        pytest.param([[[np.ones((1, 2))]], [[np.ones((1, 2))]]], id="depth-3"),
        pytest.param([[1, 2], 3], id="mismatched-depth"),
        pytest.param([[]], id="empty-list"),
        pytest.param([(1, 2)], id="tuple"),
        pytest.param([np.ones((2, 2)), np.ones((3, 3))], id="mismatched-shapes"),
    ],
)
def test_block(arrays):
    check(mjnp.block, np.block, arrays)


@differential("array_split", "dsplit", "hsplit", "split", "vsplit")
@SETTINGS
@given(x=arrays(SOME_DTYPES, shape=shapes(min_dims=0, max_dims=3, max_side=5)), data=st.data())
def test_split_family(x, data):
    axis = data.draw(st.integers(-x.ndim - 1, x.ndim), label="axis")
    sections = data.draw(
        st.one_of(
            st.integers(-1, 4),
            st.lists(st.integers(-6, 6), max_size=3),
            st.lists(st.integers(0, 5), max_size=3).map(np.array),
        ),
        label="indices_or_sections",
    )
    check(mjnp.split, np.split, x, sections, axis=axis)
    check(mjnp.array_split, np.array_split, x, sections, axis=axis)
    for name in ("hsplit", "vsplit", "dsplit"):
        check(getattr(mjnp, name), getattr(np, name), x, sections)


@differential("repeat", "tile")
@SETTINGS
@given(x=arrays(ALL_DTYPES, shape=shapes(max_dims=3, max_side=3)), data=st.data())
def test_tile_and_repeat(x, data):
    reps = data.draw(
        st.one_of(st.integers(0, 3), st.lists(st.integers(0, 3), max_size=4).map(tuple)),
        label="reps",
    )
    check(mjnp.tile, np.tile, x, reps)
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim - 1, x.ndim)), label="axis")
    n = x.size if axis is None or not -x.ndim <= axis < x.ndim else x.shape[axis]
    repeats = data.draw(
        st.one_of(
            st.integers(0, 3),
            st.lists(st.integers(0, 3), min_size=n, max_size=n),
            st.lists(st.integers(-1, 3), max_size=3),
        ),
        label="repeats",
    )
    check(mjnp.repeat, np.repeat, x, repeats, axis=axis)
    check(lambda a: mjnp.asarray(a).repeat(2), lambda a: a.repeat(2), x)


@differential("flip", "fliplr", "flipud", "matrix_transpose", "roll", "rollaxis", "rot90")
@SETTINGS
@given(x=arrays(ALL_DTYPES, shape=shapes(max_dims=3, max_side=4)), data=st.data())
def test_flip_roll_rot90(x, data):
    nd = x.ndim
    axis = data.draw(
        st.one_of(
            st.none(),
            st.integers(-nd - 1, nd),
            st.lists(st.integers(-nd, max(nd - 1, 0)), max_size=2).map(tuple),
        ),
        label="axis",
    )
    check(mjnp.flip, np.flip, x, axis)
    check(mjnp.fliplr, np.fliplr, x)
    check(mjnp.flipud, np.flipud, x)
    shift = data.draw(
        st.one_of(st.integers(-7, 7), st.lists(st.integers(-7, 7), max_size=2).map(tuple)),
        label="shift",
    )
    check(mjnp.roll, np.roll, x, shift, axis=axis)
    k = data.draw(st.integers(-5, 5), label="k")
    axes = data.draw(
        st.lists(st.integers(-nd - 1, nd), min_size=1, max_size=3).map(tuple), label="axes"
    )
    check(mjnp.rot90, np.rot90, x, k, axes)
    check(
        mjnp.rollaxis,
        np.rollaxis,
        x,
        data.draw(st.integers(-nd - 1, nd)),
        data.draw(st.integers(-nd - 2, nd + 1)),
    )
    if nd >= 2:
        check(mjnp.matrix_transpose, np.matrix_transpose, x)


_PAD_MODES = [
    "constant",
    "edge",
    "reflect",
    "symmetric",
    "wrap",
    "empty",
    "linear_ramp",
    "maximum",
    "minimum",
    "mean",
    "median",
]


@differential("pad")
@settings(SETTINGS, max_examples=20)
@given(x=arrays(ALL_DTYPES, shape=shapes(max_dims=3, max_side=3)), data=st.data())
def test_pad(x, data):
    mode = data.draw(st.sampled_from(_PAD_MODES), label="mode")
    pairs = st.one_of(
        st.integers(0, 6),
        st.tuples(st.integers(0, 6), st.integers(0, 6)),
        st.lists(
            st.tuples(st.integers(-1, 6), st.integers(0, 6)), min_size=x.ndim, max_size=x.ndim
        ),
    )
    width = data.draw(pairs, label="pad_width")
    kwargs = {}
    values = st.one_of(st.integers(0, 5), st.tuples(st.integers(0, 5), st.floats(-2, 5)))
    if mode == "constant" and data.draw(st.booleans(), label="values"):
        kwargs["constant_values"] = data.draw(values, label="constant_values")
    if mode in ("reflect", "symmetric"):
        kwargs["reflect_type"] = data.draw(st.sampled_from(["even", "odd"]), label="reflect_type")
    if mode == "linear_ramp" and data.draw(st.booleans(), label="values"):
        kwargs["end_values"] = data.draw(values, label="end_values")
    if mode in ("maximum", "minimum", "mean", "median") and data.draw(st.booleans(), label="stat"):
        kwargs["stat_length"] = data.draw(pairs, label="stat_length")
    if x.dtype.kind == "c" and mode in ("maximum", "minimum", "median"):
        return  # NumPy orders complex numbers lexicographically; mjnp's max is not there yet
    if mode == "empty":  # values are undefined: compare zeroed results
        check(
            lambda *a: mjnp.zeros_like(mjnp.pad(*a)),
            lambda *a: np.zeros_like(np.pad(*a)),
            x,
            width,
            mode,
        )
        return
    check(mjnp.pad, np.pad, x, width, mode, **kwargs)


@pytest.mark.parametrize(
    "args, kwargs, exc",
    [
        pytest.param((np.ones(3), 1, "bogus"), {}, ValueError, id="unknown-mode"),
        pytest.param((np.ones(3), 1, "edge"), {"constant_values": 1}, ValueError, id="bad-kwarg"),
        pytest.param((np.ones(3), 1.5), {}, TypeError, id="float-width"),
        pytest.param((np.ones(3), -1), {}, ValueError, id="negative-width"),
        pytest.param((np.ones((0, 2)), 1, "edge"), {}, ValueError, id="extend-empty"),
        pytest.param((np.ones(3), ((1, 2), (3, 4))), {}, ValueError, id="too-many-widths"),
    ],
)
def test_pad_errors(args, kwargs, exc):
    with pytest.raises(exc):
        np.pad(*args, **kwargs)
    with pytest.raises(exc):
        mjnp.pad(*args, **kwargs)


@pytest.mark.parametrize("mode", ["maximum", "minimum"])
@pytest.mark.parametrize("width", [0, 1])
@pytest.mark.parametrize("stat_length", [0, (1, 0)])
def test_pad_zero_stat_length(mode, width, stat_length):
    # NumPy checks stat_length on every axis, also where nothing is padded.
    match = "stat_length of 0 yields no value for padding"
    with pytest.raises(ValueError, match=match):
        np.pad([1.0, 2.0], width, mode, stat_length=stat_length)
    with pytest.raises(ValueError, match=match):
        mjnp.pad([1.0, 2.0], width, mode, stat_length=stat_length)


@pytest.mark.parametrize(
    "pad_width", [{-2: (1, 3)}, {0: (5, 2)}, {0: (5, 2), -1: (3, 4)}, {1: 5}, {}]
)
@pytest.mark.parametrize("mode", ["constant", "edge", "maximum"])
def test_pad_dict_pad_width(pad_width, mode):
    # NumPy 2.3: a dict maps axes to a width or a (before, after) pair; other axes get 0.
    x = np.arange(60.0).reshape(3, 4, 5)
    assert_matches(mjnp.pad(x, pad_width, mode), np.pad(x, pad_width, mode))


@differential("delete", "insert", "resize")
@SETTINGS
@given(x=arrays(SOME_DTYPES, shape=shapes(max_dims=3, max_side=4)), data=st.data())
def test_resize_delete_insert(x, data):
    new_shape = data.draw(st.lists(st.integers(-1, 4), max_size=3).map(tuple), label="new_shape")
    check(mjnp.resize, np.resize, x, new_shape)
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim - 1, x.ndim)), label="axis")
    obj = data.draw(
        st.one_of(
            st.integers(-5, 5),
            st.lists(st.integers(-5, 5), max_size=3),
            st.builds(slice, st.integers(-3, 3), st.integers(-3, 3), st.sampled_from([1, 2, -1])),
        ),
        label="obj",
    )
    check(mjnp.delete, np.delete, x, obj, axis=axis)
    values = data.draw(st.sampled_from([7, [5, 6], [[1], [2]]]), label="values")
    check(mjnp.insert, np.insert, x, obj, values, axis=axis)


@differential("trim_zeros")
@SETTINGS
@given(
    x=arrays(("int8", "float32", "bool"), shape=shapes(max_dims=3, max_side=4)),
    trim=st.sampled_from(["fb", "f", "b", "B", "x"]),
    data=st.data(),
)
def test_trim_zeros(x, trim, data):
    x = np.where(np.random.default_rng(0).random(x.shape) < 0.5, 0, x).astype(x.dtype)
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim - 1, x.ndim)), label="axis")
    check(mjnp.trim_zeros, np.trim_zeros, x, trim, axis)


@differential("atleast_2d", "atleast_3d", "broadcast_arrays", "broadcast_shapes")
@SETTINGS
@given(data=st.data())
def test_broadcast_and_atleast(data):
    xs = [data.draw(arrays(SOME_DTYPES, shape=shapes(max_dims=3, max_side=2))) for _ in range(3)]
    check(mjnp.broadcast_arrays, np.broadcast_arrays, *xs)
    shapes_in = [x.shape for x in xs]
    try:
        expected = np.broadcast_shapes(*shapes_in)
    except ValueError:
        with pytest.raises(ValueError):
            mjnp.broadcast_shapes(*shapes_in)
    else:
        assert mjnp.broadcast_shapes(*shapes_in) == expected
    check(mjnp.atleast_2d, np.atleast_2d, xs[0])
    check(mjnp.atleast_3d, np.atleast_3d, xs[0])
    check(mjnp.atleast_3d, np.atleast_3d, *xs)


def test_python_scalars_give_strong_arrays():
    assert mjnp.stack([1.0, 2.0]).dtype == np.float64
    out = mjnp.concatenate([np.ones(1, np.float32), [2.0]])
    assert out.dtype == np.float64
    assert (mjnp.tile(2.0, 2) + np.float32(1)).dtype == np.float64


# --- transformations ------------------------------------------------------------------------

# Functions of one (3, 4) float64 array, for the jit, vmap and gradient tables; the NumPy and
# JAX namespaces are drop-in for mjnp.
CASES = [
    pytest.param(lambda m: lambda x: m.concatenate([x, 2 * x], axis=1), id="concatenate"),
    pytest.param(lambda m: lambda x: m.concatenate([x, x], axis=None), id="concatenate-flat"),
    pytest.param(lambda m: lambda x: m.stack([x, x * x], axis=-1), id="stack"),
    pytest.param(lambda m: lambda x: m.hstack([x, x]), id="hstack"),
    pytest.param(lambda m: lambda x: m.vstack([x, x[0]]), id="vstack"),
    pytest.param(lambda m: lambda x: m.dstack([x, x]), id="dstack"),
    pytest.param(lambda m: lambda x: m.column_stack([x[:, 0], x]), id="column_stack"),
    pytest.param(lambda m: lambda x: m.block([[x, x], [x, x]]), id="block"),
    pytest.param(lambda m: lambda x: m.append(x, x[0], axis=None), id="append"),
    pytest.param(lambda m: lambda x: m.split(x, [1, 3], axis=1)[1], id="split"),
    pytest.param(lambda m: lambda x: m.array_split(x, 3, axis=1)[0], id="array_split"),
    pytest.param(lambda m: lambda x: m.hsplit(x, 2)[1], id="hsplit"),
    pytest.param(lambda m: lambda x: m.unstack(x, axis=1)[2], id="unstack"),
    pytest.param(lambda m: lambda x: m.tile(x, (2, 1, 2)), id="tile"),
    pytest.param(lambda m: lambda x: m.repeat(x, 2, axis=0), id="repeat"),
    pytest.param(lambda m: lambda x: m.repeat(x, np.array([1, 0, 2, 3]), axis=1), id="repeat-each"),
    pytest.param(lambda m: lambda x: m.flip(x, 1), id="flip"),
    pytest.param(lambda m: lambda x: m.fliplr(x), id="fliplr"),
    pytest.param(lambda m: lambda x: m.roll(x, 5), id="roll-flat"),
    pytest.param(lambda m: lambda x: m.roll(x, (1, -1), axis=(0, 1)), id="roll"),
    pytest.param(lambda m: lambda x: m.rot90(x, 1), id="rot90"),
    pytest.param(lambda m: lambda x: m.rot90(x, 3), id="rot90-3"),
    pytest.param(lambda m: lambda x: m.rollaxis(x, 1), id="rollaxis"),
    pytest.param(lambda m: lambda x: m.pad(x, ((1, 2), (0, 3))), id="pad-constant"),
    pytest.param(lambda m: lambda x: m.pad(x, 2, "edge"), id="pad-edge"),
    pytest.param(lambda m: lambda x: m.pad(x, ((5, 1), (2, 6)), "reflect"), id="pad-reflect"),
    pytest.param(lambda m: lambda x: m.pad(x, ((5, 1), (2, 6)), "symmetric"), id="pad-symmetric"),
    pytest.param(lambda m: lambda x: m.pad(x, ((5, 1), (2, 6)), "wrap"), id="pad-wrap"),
    pytest.param(
        lambda m: lambda x: m.pad(x, ((5, 1), (2, 9)), "reflect", reflect_type="odd"),
        id="pad-reflect-odd",
    ),
    pytest.param(lambda m: lambda x: m.pad(x, ((2, 1), (2, 3)), "linear_ramp"), id="pad-ramp"),
    pytest.param(lambda m: lambda x: m.pad(x, 2, "mean", stat_length=2), id="pad-mean"),
    pytest.param(lambda m: lambda x: m.pad(x, ((1, 0), (2, 1)), "median"), id="pad-median"),
    pytest.param(lambda m: lambda x: m.pad(x, ((1, 2), (3, 0)), "maximum"), id="pad-maximum"),
    pytest.param(lambda m: lambda x: m.resize(x, (5, 3)), id="resize"),
    pytest.param(lambda m: lambda x: m.delete(x, np.array([0, 2]), axis=1), id="delete"),
    pytest.param(lambda m: lambda x: m.insert(x, np.array([1, 5]), x[0, :2]), id="insert"),
    pytest.param(lambda m: lambda x: m.broadcast_arrays(x, x[0])[1], id="broadcast_arrays"),
    pytest.param(lambda m: lambda x: m.atleast_3d(x), id="atleast_3d"),
    pytest.param(lambda m: lambda x: m.matrix_transpose(x), id="matrix_transpose"),
]


@pytest.mark.parametrize("make", CASES)
def test_jit_matches_eager(make):
    x = np.random.default_rng(2).standard_normal((3, 4))
    assert_matches(mjcore.jit(make(mjnp))(x), make(np)(x))


@pytest.mark.parametrize("make", CASES)
def test_vmap_matches_loop(make):
    examples = np.random.default_rng(0).standard_normal((2, 3, 4))
    out = mjcore.vmap(make(mjnp), in_axes=2)(np.moveaxis(examples, 0, 2))
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
    np.testing.assert_allclose(np.asarray(mj_vjp(ct)[0]), np.asarray(expected), rtol=1e-12)


def test_roll_with_traced_shift():
    x = np.arange(10.0).reshape(2, 5)
    roll = mjcore.jit(lambda x, s: mjnp.roll(x, s, axis=1))
    for s in (-7, -1, 0, 3, 12):
        assert_matches(roll(x, s), np.roll(x, s, axis=1))
    out = mjcore.vmap(lambda s: mjnp.roll(x, s))(np.array([0, 1, -3]))
    assert_matches(out, np.stack([np.roll(x, s) for s in (0, 1, -3)]))


def test_pad_callable_mode_is_not_implemented():
    with pytest.raises(NotImplementedError, match="callable"):
        mjnp.pad(np.ones(3), 1, lambda *a: None)


def test_pad_with_traced_constant():
    pad = mjcore.jit(lambda x, c: mjnp.pad(x, ((1, 0), (2, 1)), constant_values=c))
    x = np.ones((2, 2))
    assert_matches(pad(x, 3.0), np.pad(x, ((1, 0), (2, 1)), constant_values=3.0))
    check_grads(lambda c: mjnp.pad(x, 1, constant_values=c), (2.0,), order=1)


def test_value_dependent_shapes_need_concrete_values():
    counts = np.array([1, 2, 0])
    with pytest.raises(ConcretizationTypeError, match="repeats"):
        mjcore.jit(lambda x, r: mjnp.repeat(x, r))(np.ones(3), counts)
    assert_matches(
        mjcore.jit(lambda x: mjnp.repeat(x, counts))(np.ones(3)), np.repeat(np.ones(3), counts)
    )
    with pytest.raises(ConcretizationTypeError):
        mjcore.jit(mjnp.trim_zeros)(np.array([0.0, 1.0]))
    with pytest.raises(AxisError):
        mjnp.concatenate([np.ones(2)], axis=1)


@pytest.mark.parametrize("fname", ["concatenate", "stack"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.bool_, np.complex64])
def test_joining_arrays_of_one_aval_matches_numpy(fname, dtype):
    """Lists of Arrays of one aval join without promotion (the eager fast path): NumPy's
    values, dtypes and axis errors, eagerly and closed over under jit."""
    xs = [np.arange(i, i + 12).reshape(3, 4).astype(dtype) for i in range(3)]
    ms = [mjnp.asarray(a) for a in xs]
    f, nf = getattr(mjnp, fname), getattr(np, fname)
    extra = fname == "stack"
    for axis in range(-2 - extra, 2 + extra):
        for seq in (ms[:2], tuple(ms)):
            want = nf([np.asarray(a) for a in seq], axis)
            got = f(seq, axis)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(np.asarray(got), want)
            jitted = mjcore.jit(lambda seq=seq, axis=axis: f(seq, axis))()
            np.testing.assert_array_equal(np.asarray(jitted), want)
    with pytest.raises(AxisError):
        f(ms, 2 + extra)
    with pytest.raises(AxisError):
        nf(xs, 2 + extra)
    # weak-typed or mixed arguments take the general path and promote as NumPy does
    other = np.linspace(0, 1, 12).reshape(3, 4)
    mixed = f([ms[0], mjnp.asarray(other)], 0)
    want = nf([xs[0], other], 0)
    assert mixed.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(mixed), want)
    weak = f([mjnp.asarray(1.5)[None], mjnp.asarray(2.5)[None]], 0)
    assert weak.dtype == np.float64


@pytest.mark.parametrize("dtype", [np.float64, np.int8, np.bool_])
def test_roll_by_int_along_int_axis_matches_numpy(dtype):
    x = (np.arange(24).reshape(2, 3, 4) % 5).astype(dtype)
    m = mjnp.asarray(x)
    for axis in (-3, -1, 0, 2):
        for shift in (-7, -1, 0, 1, 3, 4, 25):
            got = mjnp.roll(m, shift, axis=axis)
            want = np.roll(x, shift, axis=axis)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(np.asarray(got), want)
    with pytest.raises(AxisError):
        mjnp.roll(m, 1, axis=3)
    empty = mjnp.roll(m[:, :0], 2, axis=1)
    np.testing.assert_array_equal(np.asarray(empty), np.roll(x[:, :0], 2, 1))
