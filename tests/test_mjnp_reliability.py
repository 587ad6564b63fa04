"""No silently wrong values: in-place methods, views, fresh results and edge values, each a
regression test that runs the same program on NumPy and on mjnp and compares (issue 20)."""

from __future__ import annotations

import gc
import warnings

import numpy as np
import pytest

import mjcore
import mjnp
from tests.mjnp_testing import assert_matches


def _both(program):
    """`program(xp)` on NumPy and on mjnp: the two results, as a pair."""
    return program(np), program(mjnp)


def _check(program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected, actual = _both(program)
    if isinstance(expected, tuple):
        assert len(expected) == len(actual)
        for e, a in zip(expected, actual, strict=True):
            assert_matches(a, e)
    else:
        assert_matches(actual, expected)


# --- in-place methods -----------------------------------------------------------------------


def _sort_in_place(xp):
    a = xp.asarray([3.0, 1.0, 2.0, -1.0])
    r = a.sort()
    assert r is None
    return a


def _sort_axis0(xp):
    a = xp.asarray([[3, 1], [1, 2], [2, 0]])
    a.sort(axis=0)
    return a


def _partition_in_place(xp):
    a = xp.asarray([5.0, 1.0, 4.0, 2.0, 3.0])
    a.partition(2)
    return a[2]  # the one value NumPy's partition fixes


def _fill_in_place(xp):
    a = xp.zeros((2, 2))
    a.fill(3)
    return a


def _put_in_place(xp):
    a = xp.arange(5)
    a.put([0, 2], [9, 8])
    return a


def _resize_in_place(xp):
    a = xp.arange(4.0)
    a.resize(2, 3)
    return a


def _iadd_alias(xp):
    a = xp.asarray([1.0, 2.0])
    b = a
    a += 1
    a *= b
    return a, b


def _iop_keeps_dtype(xp):
    a = xp.zeros(3, dtype=xp.float32)
    a += xp.ones(3)  # float64 cast back into float32 ('same_kind')
    a -= 0.5
    i = xp.arange(4)
    i //= 2
    i <<= 1
    return a, i


@pytest.mark.parametrize(
    "program",
    [
        _sort_in_place,
        _sort_axis0,
        _partition_in_place,
        _fill_in_place,
        _put_in_place,
        _resize_in_place,
        _iadd_alias,
        _iop_keeps_dtype,
    ],
    ids=lambda f: f.__name__.lstrip("_"),
)
def test_in_place_methods_write_the_array(program):
    _check(program)


def test_in_place_operator_errors_match_numpy():
    for xp in (np, mjnp):
        a = xp.zeros(3)
        with pytest.raises(ValueError, match="non-broadcastable output operand"):
            a += xp.ones((2, 3))
        i = xp.arange(3)
        with pytest.raises(TypeError):
            i += 1.5
        with pytest.raises(TypeError):
            i /= 2


def test_in_place_operators_under_transformations():
    def f(x):
        y = x
        y += 1.0
        y *= x  # y is x: squares it
        acc = mjnp.zeros(3)
        acc += y  # a constant updated with a traced value: the name is rebound
        return acc.sum() + x.sum()

    x = np.arange(3.0)
    expected = ((x + 1) ** 2).sum() * 2
    assert float(f(mjnp.asarray(x))) == expected
    assert float(mjcore.jit(f)(x)) == expected
    np.testing.assert_allclose(mjcore.grad(f)(x), 4 * (x + 1))
    np.testing.assert_allclose(mjcore.vmap(f)(np.stack([x, x])), [expected, expected])


def test_sort_method_under_transformations():
    def f(x):
        x.sort()
        return x

    x = np.array([3.0, 1.0, 2.0])
    np.testing.assert_array_equal(mjcore.jit(f)(x), np.sort(x))
    np.testing.assert_array_equal(mjcore.vmap(f)(np.stack([x, -x])), np.sort(np.stack([x, -x])))
    np.testing.assert_array_equal(mjcore.grad(lambda x: f(x)[0])(x), [0.0, 1.0, 0.0])


def test_resize_refuses_views_as_numpy():
    for xp in (np, mjnp):
        a = xp.arange(4.0)
        v = a[1:]
        with pytest.raises(ValueError, match="does not own its data"):
            v.resize(5)
        with pytest.raises(ValueError, match="referenc"):
            a.resize(5)
        a.resize(6, refcheck=False)
        assert a.shape == (6,)


def test_setflags():
    a = mjnp.arange(3)
    a.setflags(write=True, align=True)
    with pytest.raises(ValueError):
        a.setflags(uic=True)
    with pytest.raises(NotImplementedError, match="read-only"):
        a.setflags(write=False)


# --- writes through views -------------------------------------------------------------------


def _slice_view(xp):
    a = xp.arange(6.0)
    v = a[1:3]
    v[:] = 7
    return a, v


def _base_write_reaches_view(xp):
    a = xp.arange(6.0)
    v = a[1:3]
    a[1] = 9
    return a, v


def _strided_view_mask(xp):
    a = xp.arange(7.0)
    a[::3][xp.asarray([True, False, True])] = -1
    return a


def _row_view(xp):
    a = xp.arange(6).reshape(2, 3)
    r = a[0]
    r[1] = 50
    r += 1
    return a, r


def _view_of_view(xp):
    a = xp.arange(10.0)
    v = a[2:8]
    w = v[1::2]
    w[...] = 0
    u = a[3:5]  # a sibling view sees the write too
    return a, v, w, u


def _imag_view(xp):
    y = xp.asarray([1 + 2j, 3 + 4j])
    y.imag[0] = 0
    y.real[1] = -3
    return y


def _transpose_view(xp):
    m = xp.arange(6).reshape(2, 3)
    t = m.T
    t[0, 1] = 50
    s = m.swapaxes(0, 1)
    s[2, 0] = -2
    return m, t


def _transpose_3d_view(xp):
    a = xp.zeros((2, 3, 4))
    t = a.T
    t[1, 2, 0] = -1
    u = a.transpose(1, 2, 0)
    u[0, 3, 1] = -2
    w = a[0].T  # a view of a view
    w[0] = 7
    a[1, 1, 1] = 9  # reaches t, u and a[0]'s views
    return a, t, u, w


def _reshape_view(xp):
    a = xp.arange(6.0)
    b = a.reshape(2, 3)
    b[1] = 5
    r = a.ravel()
    r[0] = -1
    return a, b


def _iteration_rows(xp):
    a = xp.zeros((3, 2))
    for i, row in enumerate(a):
        row[:] = i
    return a


def _clip_out_overlap(xp):
    a = xp.arange(5.0)
    xp.clip(a[:-1], 1, 3, out=a[1:])
    return a


def _ufunc_out_view(xp):
    a = xp.zeros((2, 3))
    xp.add(xp.ones(3), 2, out=a[1])
    return a


def _ellipsis_0d_view(xp):
    a = xp.asarray(1.5)
    v = a[...]
    v[...] = 3
    return a


def _scalar_is_no_view(xp):
    a = xp.arange(3.0)
    s = a[1]  # one element: a scalar, not a view
    a[1] = 10
    return xp.asarray(s), a


def _advanced_index_copies(xp):
    a = xp.arange(5.0)
    c = a[[1, 2]]
    c[0] = 100
    m = a[a > 2]
    m[:] = -1
    return a, c


def _copy_is_independent(xp):
    a = xp.arange(4.0)
    c = a[1:3].copy()
    c[0] = 9
    f = a.reshape(2, 2).flatten()
    f[0] = 7
    return a, c, f


@pytest.mark.parametrize(
    "program",
    [
        _slice_view,
        _base_write_reaches_view,
        _strided_view_mask,
        _row_view,
        _view_of_view,
        _imag_view,
        _transpose_view,
        _transpose_3d_view,
        _reshape_view,
        _iteration_rows,
        _clip_out_overlap,
        _ufunc_out_view,
        _ellipsis_0d_view,
        _scalar_is_no_view,
        _advanced_index_copies,
        _copy_is_independent,
    ],
    ids=lambda f: f.__name__.lstrip("_"),
)
def test_views_share_writes_as_numpy(program):
    _check(program)


def test_views_are_forgotten_with_their_arrays():
    from mjnp import _views

    a = mjnp.arange(6.0)
    views = [a[i:] for i in range(1, 6)]
    live = _views.views_of(a)
    assert len(live) == 5 and all(_views.is_view(v) for v in views)
    assert all(v is w for v, w in zip(live, views, strict=True))
    del views, live
    gc.collect()
    assert _views.views_of(a) == [] and not _views.has_views(a)
    for i in range(1000):  # dead views are dropped as new ones come: the list stays small
        a[i % 5 :]
    assert len(a._children.refs) <= 16
    kept = [a[i % 5 :] for i in range(100)]
    assert len(_views.views_of(a)) == 100 and len(a._children.refs) <= 2 * 100 + 8
    del kept
    v = mjnp.arange(3.0)[1:]
    v[0] = 5  # the view holds its base (NumPy's `v.base`): the write still works
    np.testing.assert_array_equal(v, [5.0, 2.0])


# --- results are new arrays -----------------------------------------------------------------

_FRESH_CALLS = [
    ("concatenate", lambda xp, a: xp.concatenate([a])),
    ("concatenate-empty", lambda xp, a: xp.concatenate([a, xp.zeros((0, 3))])),
    ("hstack", lambda xp, a: xp.hstack([a])),
    ("vstack", lambda xp, a: xp.vstack([a])),
    ("column_stack", lambda xp, a: xp.column_stack([a])),
    ("block", lambda xp, a: xp.block(a)),
    ("block-list", lambda xp, a: xp.block([a])),
    ("pad", lambda xp, a: xp.pad(a, 0)),
    ("roll", lambda xp, a: xp.roll(a, 0)),
    ("clip", lambda xp, a: a.clip(None, None)),
    ("round-int", lambda xp, a: xp.round(a.astype(int))),
    ("flatten-1d", lambda xp, a: a[0].copy().flatten()),
    ("meshgrid", lambda xp, a: xp.meshgrid(a[0])[0]),
    ("array", lambda xp, a: xp.array(a)),
    ("copy", lambda xp, a: a.copy()),
    ("astype-copy", lambda xp, a: a.astype(a.dtype, copy=True)),
    ("asfortranarray", lambda xp, a: xp.asfortranarray(a)),
]


@pytest.mark.parametrize("call", _FRESH_CALLS, ids=[c[0] for c in _FRESH_CALLS])
def test_results_do_not_alias_inputs(call):
    _, fun = call

    def program(xp):
        a = xp.arange(6.0).reshape(2, 3)
        b = fun(xp, a)
        b[(0,) * b.ndim] = 100
        return a

    _check(program)


# --- values ---------------------------------------------------------------------------------


_VALUE_CASES = [
    ("cov-complex-y", lambda xp: xp.cov(xp.asarray([1.0, 2, 3]), xp.asarray([1j, 2, 4j]))),
    ("nanmedian-inf", lambda xp: xp.nanmedian(xp.asarray([[np.inf, np.nan], [np.nan, np.nan]]), 0)),
    ("nanmedian-pair-infs", lambda xp: xp.nanmedian(xp.asarray([[1.0, 2], [np.inf, -np.inf]]), 1)),
    (
        "nanmedian-rows",
        lambda xp: xp.nanmedian(xp.asarray([[1.0, 2, np.nan, 4], [np.nan] * 4, [3, 1, 2, 9]]), 1),
    ),
    (
        "nanmedian-keepdims",
        lambda xp: xp.nanmedian(xp.asarray([[1.0, np.nan, 3]]), 1, keepdims=True),
    ),
    ("nanmedian-float32", lambda xp: xp.nanmedian(xp.asarray([1, np.nan, 2], dtype=np.float32))),
    ("nanvar-ddof", lambda xp: xp.nanvar(xp.asarray([1, 2, np.nan]), ddof=2)),
    ("nanstd-ddof", lambda xp: xp.nanstd(xp.asarray([[1, 2, np.nan], [1, 2, 3]]), axis=1, ddof=2)),
    ("var-ddof", lambda xp: xp.var(xp.asarray([1.0, 2.0]), ddof=2)),
    ("power-0j", lambda xp: xp.power(xp.asarray(0j), 1.385 - 1.085j)),
    (
        "power-0j-table",
        lambda xp: xp.power(
            xp.zeros(7, complex), xp.asarray([2, -1, 0, 1j, -1 + 1j, 0.5, np.inf], complex)
        ),
    ),
    ("power-complex-broadcast", lambda xp: xp.power(xp.asarray([0j, 1 + 1j]), 0.5j)),
    ("reciprocal-0j", lambda xp: xp.reciprocal(xp.asarray([0j, -0j, complex(-0.0, 0)]))),
    (
        "reciprocal-complex",
        lambda xp: xp.reciprocal(
            xp.asarray([np.inf + 0j, complex(np.nan, 0), 1e308 + 1e308j, 1 + 2j, -2j, 3 - 1j])
        ),
    ),
]


@pytest.mark.parametrize("case", _VALUE_CASES, ids=[c[0] for c in _VALUE_CASES])
def test_edge_values_match_numpy(case):
    _check(case[1])


def test_complex_power_and_reciprocal_gradients():
    # The zero-base branch does not poison the gradient elsewhere.
    g = mjcore.grad(lambda t: mjnp.real(mjnp.power(mjnp.asarray([0j, 1 + 1j]), t)).sum())(2.0)
    expected = np.real((1 + 1j) ** 2 * np.log(1 + 1j))
    np.testing.assert_allclose(g, expected, rtol=1e-12)
    h = mjcore.grad(lambda x: mjnp.real(mjnp.reciprocal(x * (1 + 1j))))(2.0)
    np.testing.assert_allclose(h, -np.real(1 / ((1 + 1j) * 4)), rtol=1e-12)
