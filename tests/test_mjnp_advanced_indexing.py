"""Advanced indexing, `x[idx] = v` and `x.at[idx]` (mjnp/_indexing.py) against NumPy and JAX."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import mjcore
import mjnp
from mjcore.errors import InPlaceUpdateError, NonConcreteBooleanIndexError
from mjcore.test_util import check_grads
from tests.mjnp_testing import SETTINGS, arrays, assert_matches, check_against_numpy, shapes


@st.composite
def advanced_indices(draw, shape):
    """Tuples mixing ints, slices, None, Ellipsis, integer arrays (sometimes out of range,
    sometimes not broadcastable), lists and boolean masks, following NumPy's index grammar."""
    entries = []
    axis = 0
    n_arrays = 0
    index_shape = draw(st.sampled_from([(), (2,), (3,), (2, 1), (0,)]))
    while axis < len(shape) and draw(st.integers(0, 4)):
        size = shape[axis]
        kind = draw(st.sampled_from(["array", "array", "list", "mask", "slice", "int", "none"]))
        if kind == "array":
            high = size + (draw(st.integers(0, 8)) == 0)
            seed = draw(st.integers(0, 2**16))
            rng = np.random.default_rng(seed)
            ishape = index_shape if draw(st.integers(0, 6)) else (2, 2)
            dtype = draw(st.sampled_from(["int32", "int64", "uint8"]))
            low = 0 if dtype == "uint8" else -size
            entries.append(rng.integers(low, max(high, low + 1), size=ishape).astype(dtype))
            n_arrays += 1
        elif kind == "list":
            entries.append(draw(st.lists(st.integers(-size, size - 1), max_size=3)) if size else [])
            n_arrays += 1
        elif kind == "mask":
            k = draw(st.integers(1, len(shape) - axis))
            rng = np.random.default_rng(draw(st.integers(0, 2**16)))
            entries.append(rng.random(shape[axis : axis + k]) < 0.5)
            axis += k - 1
        elif kind == "slice":
            entries.append(
                slice(
                    draw(st.none() | st.integers(-size, size)),
                    None,
                    draw(st.sampled_from([None, 1, 2, -1])),
                )
            )
        elif kind == "int":
            if not size:
                continue
            entries.append(draw(st.integers(-size, size - 1)))
        else:
            entries.append(None)
            continue
        axis += 1
    if draw(st.booleans()):
        entries.insert(draw(st.integers(0, len(entries))), Ellipsis)
    if draw(st.integers(0, 6)) == 0:
        entries.insert(draw(st.integers(0, len(entries))), draw(st.booleans()))
    if not n_arrays and not any(isinstance(e, np.ndarray | bool) for e in entries):
        entries.append(np.array([0, -1]))
    return tuple(entries)


def _np_get(x, idx):
    return x[idx]


def _mj_get(x, idx):
    return mjcore.device_put(x)[idx]


@SETTINGS
@given(x=arrays(shape=shapes(min_dims=1)), data=st.data())
def test_advanced_getitem_matches_numpy(x, data):
    idx = data.draw(advanced_indices(x.shape), label="idx")
    check_against_numpy(_mj_get, _np_get, x, idx)


@SETTINGS
@given(x=arrays(shape=shapes(min_dims=1), dtypes=("float32", "int16", "bool")), data=st.data())
def test_jit_with_traced_index_arrays_matches_numpy(x, data):
    idx = data.draw(advanced_indices(x.shape), label="idx")
    try:
        expected = x[idx]
    except IndexError:
        return
    traced = [i for i, e in enumerate(idx) if isinstance(e, np.ndarray) and e.dtype.kind in "iu"]

    def f(x, *arrays):
        entries = list(idx)
        for i, a in zip(traced, arrays, strict=True):
            entries[i] = a
        return mjnp.asarray(x)[tuple(entries)]

    assert_matches(mjcore.jit(f)(x, *(idx[i] for i in traced)), expected)


def _np_set(x, idx, v):
    out = np.array(x, copy=True)
    out[idx] = v
    return out


def _mj_set(x, idx, v):
    out = mjcore.device_put(x)
    handle = out
    out[idx] = v
    assert out is handle
    return out


@SETTINGS
@given(x=arrays(shape=shapes(min_dims=1), dtypes=("float64", "int32", "bool")), data=st.data())
def test_setitem_matches_numpy(x, data):
    idx = data.draw(advanced_indices(x.shape), label="idx")
    try:
        target = np.empty(x.shape)[idx].shape
    except IndexError:
        target = ()
    # Distinct positions only: NumPy keeps the last duplicate, XLA one of them.
    positions = np.arange(x.size).reshape(x.shape)
    try:
        taken = positions[idx].ravel()
        if len(np.unique(taken)) != taken.size:
            return
    except IndexError:
        pass
    vshape = data.draw(st.sampled_from([(), target, target[1:]]))
    v = np.random.default_rng(0).integers(-3, 4, size=vshape).astype(x.dtype)
    check_against_numpy(_mj_set, _np_set, x, idx, v)


AT_METHODS = [
    ("add", np.add.at),
    ("subtract", np.subtract.at),
    ("multiply", np.multiply.at),
    ("min", np.minimum.at),
    ("max", np.maximum.at),
]


@pytest.mark.parametrize("method,ufunc_at", AT_METHODS, ids=[m for m, _ in AT_METHODS])
def test_at_methods_accumulate_like_ufunc_at(method, ufunc_at):
    rng = np.random.default_rng(1)
    x = rng.integers(-4, 5, size=(4, 3)).astype(np.float64)
    idx = (np.array([0, 2, 0, -1]), slice(None))
    v = rng.integers(-4, 5, size=(4, 3)).astype(np.float64)
    expected = x.copy()
    ufunc_at(expected, idx, v)
    X = mjcore.device_put(x)
    assert_matches(getattr(X.at[idx], method)(v), expected)
    assert_matches(X, x)  # functional: x itself is unchanged


def test_at_set_get_divide_power():
    x = np.arange(1.0, 7.0).reshape(2, 3)
    X = mjcore.device_put(x)
    expected = x.copy()
    expected[:, [0, 2]] = -1.0
    assert_matches(X.at[:, [0, 2]].set(-1.0), expected)
    assert_matches(X.at[1, [True, False, True]].get(), x[1, [True, False, True]])
    expected = x.copy()
    expected[0, 1] /= 4.0
    assert_matches(X.at[0, 1].divide(4.0), expected)
    expected = x.copy()
    expected[1] **= 2.0
    assert_matches(X.at[1].power(2.0), expected)


def test_augmented_assignment_adds_once():
    # `x[idx] += v` is getitem, add, setitem: duplicates add once, as in NumPy.
    x = np.zeros(3)
    X = mjcore.device_put(x)
    X[[0, 0, 1]] += 1.0
    x[[0, 0, 1]] += 1.0
    assert_matches(X, x)


# --- transformations ------------------------------------------------------------------------


def test_jit_and_vmap_of_advanced_indexing():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4, 5))
    i = np.array([[0, 2], [1, -1]])
    f = lambda x, i: mjnp.asarray(x)[i, :, i[0]]  # noqa: E731
    assert_matches(mjcore.jit(f)(x, i), x[i, :, i[0]])
    xs = rng.standard_normal((2, 3, 4, 5))
    iss = np.array([[[0, 2], [1, 0]], [[2, 2], [-3, 1]]])
    for in_axes, args in [((0, 0), (xs, iss)), ((0, None), (xs, i)), ((None, 0), (x, iss))]:
        out = mjcore.vmap(f, in_axes=in_axes)(*args)
        per = [
            f(*(a[k] if ax == 0 else a for a, ax in zip(args, in_axes, strict=True)))
            for k in range(2)
        ]
        assert_matches(out, np.stack([np.asarray(p) for p in per]))


def test_vmap_of_at_set():
    xs = np.arange(12.0).reshape(3, 4)
    idx = np.array([3, 0, 1])
    vs = np.array([10.0, 20.0, 30.0])
    out = mjcore.vmap(lambda x, i, v: mjnp.asarray(x).at[i].set(v))(xs, idx, vs)
    expected = xs.copy()
    expected[np.arange(3), idx] = vs
    assert_matches(out, expected)


def test_traced_index_array_is_clamped():
    # NB: a traced index array's value is unknown when NumPy would raise; it is clamped.
    x = np.arange(4.0)
    out = mjcore.jit(lambda x, i: x[i])(x, np.array([10, -10, -1]))
    assert_matches(out, np.array([3.0, 0.0, 3.0]))


def test_boolean_mask_under_jit_raises():
    f = mjcore.jit(lambda x: x[x > 0])
    with pytest.raises(NonConcreteBooleanIndexError, match="mjnp.where"):
        f(np.arange(3.0))
    with pytest.raises(IndexError):
        f(np.arange(3.0))


def test_boolean_mask_under_grad_works():
    x = np.array([-1.0, 2.0, 3.0])
    g = mjcore.grad(lambda x: mjnp.sum(x[x > 0] ** 2))(x)
    assert_matches(g, np.array([0.0, 4.0, 6.0]))


def _jax_fill(x):
    for i in range(3):
        x = x.at[i].set(x[i] ** 2 + x[i + 1])
    x = x.at[jnp.array([3, 0])].add(jnp.sin(x[:2]))
    return jnp.sum(x * x)


def _mj_fill(x):
    x = mjnp.asarray(x) * 1.0
    for i in range(3):
        x[i] = x[i] ** 2 + x[i + 1]
    x = x.at[np.array([3, 0])].add(mjnp.sin(x[:2]))
    return mjnp.sum(x * x)


def _mj_fill_zeros(x):
    out = mjnp.zeros(4)
    for i in range(4):
        out[i] = x[i] * (i + 1)
    return mjnp.sum(out**2)


def test_loop_filling_an_array_under_grad_and_jit():
    x = np.array([0.5, -1.0, 2.0, 0.25])
    with jax.enable_x64(True):
        expected_value = float(_jax_fill(jnp.asarray(x)))
        expected_grad = np.asarray(jax.grad(_jax_fill)(jnp.asarray(x)))
    for f in [_mj_fill, mjcore.jit(_mj_fill)]:
        np.testing.assert_allclose(float(f(x)), expected_value, rtol=1e-12)
        np.testing.assert_allclose(mjcore.grad(f)(x), expected_grad, rtol=1e-12)
    np.testing.assert_allclose(mjcore.jit(mjcore.grad(_mj_fill))(x), expected_grad, rtol=1e-12)
    # A constant buffer filled with traced values: fine under jit (everything is staged) ...
    expected = np.sum((x * np.arange(1, 5)) ** 2)
    np.testing.assert_allclose(float(mjcore.jit(_mj_fill_zeros)(x)), expected)
    np.testing.assert_allclose(
        mjcore.grad(mjcore.jit(_mj_fill_zeros))(x), 2 * x * np.arange(1, 5) ** 2
    )
    # ... and under grad alone, which traces the whole function when `zeros` (a concrete
    # array while run eagerly) is filled with traced values.
    for _ in range(4):  # the eager fallback, then the fused path of a hot function
        np.testing.assert_allclose(
            mjcore.grad(_mj_fill_zeros)(x), 2 * x * np.arange(1, 5) ** 2, rtol=1e-12
        )
        value, g = mjcore.value_and_grad(_mj_fill_zeros)(mjnp.asarray(x))
        np.testing.assert_allclose(float(value), expected, rtol=1e-12)
        np.testing.assert_allclose(np.asarray(g), 2 * x * np.arange(1, 5) ** 2, rtol=1e-12)
    # Under vmap there is no such fallback: the error names the fix.
    with pytest.raises(InPlaceUpdateError, match=r"\.at\[idx\]\.set"):
        mjcore.vmap(_mj_fill_zeros_batched)(np.stack([x, x]))


def _mj_fill_zeros_batched(x):
    out = mjnp.zeros(4)
    for i in range(4):
        out[i] = x[i] * (i + 1)
    return out


GRAD_CASES = [
    pytest.param(lambda x: x[[0, 2, 2]], id="gather-dup"),
    pytest.param(lambda x: x[1:, [1, 0]], id="gather-mixed"),
    pytest.param(lambda x: mjnp.asarray(x).at[[0, 0], 1].add(x[1, 2] * 3.0), id="at-add"),
    pytest.param(lambda x: mjnp.asarray(x).at[:, [2, 0]].set(mjnp.sin(x[0, :2])), id="at-set"),
    pytest.param(lambda x: mjnp.asarray(x).at[[1, 2]].max(x[0] * 0.5), id="at-max"),
    pytest.param(lambda x: mjnp.asarray(x).at[0].multiply(3.0), id="at-multiply"),
]
JAX_GRAD_CASES = [
    (lambda x: x[jnp.array([0, 2, 2])]),
    (lambda x: x[1:, jnp.array([1, 0])]),
    (lambda x: x.at[jnp.array([0, 0]), 1].add(x[1, 2] * 3.0)),
    (lambda x: x.at[:, jnp.array([2, 0])].set(jnp.sin(x[0, :2]))),
    (lambda x: x.at[jnp.array([1, 2])].max(x[0] * 0.5)),
    (lambda x: x.at[0].multiply(3.0)),
]


@pytest.mark.parametrize("k", range(len(GRAD_CASES)), ids=[p.id for p in GRAD_CASES])
def test_gradients_match_numerics_and_jax(k):
    f = GRAD_CASES[k].values[0]
    x = np.random.default_rng(k).standard_normal((3, 3))
    check_grads(f, [x], order=1, modes=("fwd", "rev"))
    ct = np.random.default_rng(10 + k).standard_normal(np.shape(f(x)))
    _, f_vjp = mjcore.vjp(f, x)
    with jax.enable_x64(True):
        _, jax_vjp = jax.vjp(JAX_GRAD_CASES[k], jnp.asarray(x))
        expected = np.asarray(jax_vjp(jnp.asarray(ct))[0])
    np.testing.assert_allclose(np.asarray(f_vjp(ct)[0]), expected, rtol=1e-12, atol=1e-12)


def test_setitem_errors():
    x = mjcore.device_put(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="could not broadcast"):
        x[0] = np.ones(2)
    with pytest.raises(IndexError, match="out of bounds"):
        x[[0, 2]] = 1.0


def _fill_first(x, v):
    x[0] = v
    return x


def test_setitem_on_arguments_under_jit_and_vmap():
    x = np.arange(6.0).reshape(2, 3)
    expected = x.copy()
    expected[0] = -1.0
    # Under jit the argument's tracer is rebound; the caller's array is not touched.
    caller = mjcore.device_put(x)
    assert_matches(mjcore.jit(_fill_first)(caller, -1.0), expected)
    assert_matches(caller, x)
    out = mjcore.vmap(_fill_first, in_axes=(1, 0))(x, np.array([7.0, 8.0, 9.0]))
    assert_matches(out, np.stack([[7.0, 3.0], [8.0, 4.0], [9.0, 5.0]]))
    # Eagerly the caller's handle itself is updated, as with a NumPy array.
    assert _fill_first(caller, -1.0) is caller
    assert_matches(caller, expected)
