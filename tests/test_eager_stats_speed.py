"""The direct NumPy paths of sorting, sets, histograms, statistics and FFT
(mjnp/_host_stats.py and mjnp/_host_numpy.py): on small eager CPU Arrays they give NumPy's
bits, dtypes and shapes, compile nothing, raise mjnp's errors as before, and leave jit, vmap
and grad as they were."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import mjcore
import mjnp
from mjcore import core
from mjcore.backend import compat
from mjnp import _host_numpy

rng = np.random.default_rng(0)
X = rng.standard_normal((5, 7))
TIES = np.array(
    [[2.0, -0.0, 1.0, 0.0, np.nan, 1.0, -np.inf], [0.0, 1.0, 1.0, -0.0, 2.0, np.nan, 0.5]]
)
INTS = rng.integers(0, 6, (4, 6))
V = rng.standard_normal(16)
W = rng.random((5, 7)) + 0.1
C = X + 1j * rng.standard_normal((5, 7))
NANS = np.where(rng.random((5, 7)) < 0.3, np.nan, X)
NANS[1] = np.nan  # an all-NaN row

# (name, function of (module, *arrays), NumPy arrays); a NumPy call that raises is not a case
CASES = [
    ("sort", lambda m, a: m.sort(a), [X]),
    ("sort_axis0_f32", lambda m, a: m.sort(a, axis=0), [X.astype(np.float32)]),
    ("sort_none_int", lambda m, a: m.sort(a, axis=None), [INTS]),
    ("sort_stable_ties", lambda m, a: m.sort(a, kind="stable"), [TIES]),
    ("sort_empty", lambda m, a: m.sort(a), [np.zeros((0, 3))]),
    ("sort_0d", lambda m, a: m.sort(a, axis=None), [np.array(3.0)]),
    ("argsort_stable_ties", lambda m, a: m.argsort(a, axis=1, stable=True), [TIES]),
    ("argsort_int_ties", lambda m, a: m.argsort(a, axis=0, kind="stable"), [INTS]),
    ("argsort_none", lambda m, a: m.argsort(a, axis=None, kind="stable"), [X]),
    ("unique", lambda m, a: m.unique(a), [INTS]),
    ("unique_all", lambda m, a: m.unique(a, True, True, True), [INTS]),
    ("unique_nan", lambda m, a: m.unique(a, return_counts=True), [TIES]),
    ("unique_nan_unequal", lambda m, a: m.unique(a, equal_nan=False), [TIES]),
    ("unique_inverse_0d", lambda m, a: m.unique(a, return_inverse=True), [np.array(2.5)]),
    ("unique_empty", lambda m, a: m.unique(a, True, True, True), [np.zeros(0)]),
    ("unique_bool", lambda m, a: m.unique(a, return_index=True), [INTS > 2]),
    ("histogram", lambda m, a: m.histogram(a), [V]),
    ("histogram_f32_range", lambda m, a: m.histogram(a, 5, (-1, 1)), [V.astype(np.float32)]),
    ("histogram_int", lambda m, a: m.histogram(a, bins=4), [INTS]),
    ("histogram_auto", lambda m, a: m.histogram(a, bins="auto"), [V]),
    (
        "histogram_edges_w",
        lambda m, a, e, w: m.histogram(a, e, weights=w, density=True),
        [V, np.array([-2.0, -0.5, 0.0, 1.0, 3.0]), np.abs(V)],
    ),  # fmt: skip
    ("histogram_density", lambda m, a: m.histogram(a, density=True), [V]),
    ("histogram_empty", lambda m, a: m.histogram(a), [np.zeros(0)]),
    ("unique_all_api", lambda m, a: tuple(m.unique_all(a)), [INTS]),
    ("unique_counts", lambda m, a: tuple(m.unique_counts(a)), [TIES]),
    ("unique_inverse", lambda m, a: tuple(m.unique_inverse(a)), [X]),
    ("isin", lambda m, a, b: m.isin(a, b), [INTS, INTS[0]]),
    ("isin_invert_nan", lambda m, a, b: m.isin(a, b, invert=True), [TIES, TIES[0]]),
    ("intersect1d", lambda m, a, b: m.intersect1d(a, b, return_indices=True), [INTS[0], INTS[1]]),
    ("union1d", lambda m, a, b: m.union1d(a, b), [TIES[0], TIES[1]]),
    ("setdiff1d", lambda m, a, b: m.setdiff1d(a, b), [INTS[0], INTS[1]]),
    ("setxor1d", lambda m, a, b: m.setxor1d(a, b), [X[0], X[0, :3]]),
    ("lexsort", lambda m, a, b: m.lexsort((a, b)), [INTS[0], INTS[1] > 2]),
    ("lexsort_axis0", lambda m, a, b: m.lexsort([a, b], axis=0), [TIES, TIES > 0]),
    ("sort_complex", lambda m, a: m.sort_complex(a), [INTS.astype(np.int8)]),
    ("histogram_bin_edges", lambda m, a: m.histogram_bin_edges(a, 6, (-2, 2)), [V]),
    ("histogram_bin_edges_fd", lambda m, a: m.histogram_bin_edges(a, "fd"), [V]),
    ("histogram2d", lambda m, a, b: m.histogram2d(a, b, 4), [V, V[::-1] ** 2]),
    (
        "histogram2d_w",
        lambda m, a, b, w: m.histogram2d(a, b, 3, [(-1, 1), (0, 2)], True, w),
        [V, V[::-1] ** 2, np.abs(V)],
    ),  # fmt: skip
    ("histogramdd", lambda m, a: m.histogramdd(a, 3)[0], [X.T]),
    ("histogramdd_edges", lambda m, a: tuple(m.histogramdd(a, 2)[1]), [X.T]),
    ("bincount", lambda m, a: m.bincount(a), [INTS.ravel()]),
    ("bincount_w", lambda m, a, w: m.bincount(a, w, minlength=9), [INTS.ravel(), W.ravel()[:24]]),
    ("bincount_bool", lambda m, a: m.bincount(a), [INTS.ravel() > 2]),
    ("searchsorted", lambda m, a, v: m.searchsorted(a, v), [np.sort(V), X]),
    (
        "searchsorted_right",
        lambda m, a, v: m.searchsorted(a, v, "right"),
        [np.sort(TIES[0]), TIES],
    ),  # fmt: skip
    ("searchsorted_int_0d", lambda m, a, v: m.searchsorted(a, v), [np.arange(5), np.array(3)]),
    ("count_nonzero", lambda m, a: m.count_nonzero(a), [INTS]),
    ("count_nonzero_axis", lambda m, a: m.count_nonzero(a, axis=(0,), keepdims=True), [TIES]),
    ("count_nonzero_c", lambda m, a: m.count_nonzero(a, axis=1), [C]),
    ("percentile", lambda m, a: m.percentile(a, 90), [X]),
    ("percentile_f32", lambda m, a: m.percentile(a, [10, 50.5], axis=1), [X.astype(np.float32)]),
    (
        "quantile_q_array",
        lambda m, a, q: m.quantile(a, q, axis=0, keepdims=True),
        [X, np.array([0.0, 0.3, 1.0])],
    ),  # fmt: skip
    ("quantile_methods", lambda m, a: m.quantile(a, 0.35, method="median_unbiased"), [INTS]),
    ("quantile_nearest", lambda m, a: m.quantile(a, 0.35, axis=1, method="nearest"), [INTS]),
    ("quantile_nan", lambda m, a: m.quantile(a, 0.5, axis=1), [TIES]),
    ("nanpercentile", lambda m, a: m.nanpercentile(a, 25, axis=1), [NANS]),
    ("nanquantile", lambda m, a: m.nanquantile(a, [0.2, 0.9]), [NANS]),
    ("median", lambda m, a: m.median(a, axis=1), [X]),
    ("median_nan", lambda m, a: m.median(a, axis=1, keepdims=True), [TIES]),
    ("median_int", lambda m, a: m.median(a), [INTS]),
    ("nanmedian", lambda m, a: m.nanmedian(a, axis=0), [NANS]),
    ("nanmean", lambda m, a: m.nanmean(a, axis=0), [NANS]),
    ("nanmean_all", lambda m, a: m.nanmean(a), [NANS.astype(np.float32)]),
    ("nanmean_int", lambda m, a: m.nanmean(a, axis=1), [INTS]),
    ("nanmean_c", lambda m, a: m.nanmean(a, axis=1), [C]),
    ("nansum", lambda m, a: m.nansum(a), [NANS]),
    ("nansum_axis", lambda m, a: m.nansum(a, axis=1, keepdims=True), [NANS.astype(np.float32)]),
    ("nansum_int", lambda m, a: m.nansum(a, axis=0), [INTS]),
    ("nanvar", lambda m, a: m.nanvar(a, axis=0), [NANS]),
    ("nanstd_ddof", lambda m, a: m.nanstd(a, axis=1, ddof=1), [NANS]),
    ("nanmax", lambda m, a: m.nanmax(a, axis=1), [NANS]),
    ("nanmin", lambda m, a: m.nanmin(a), [NANS.astype(np.float32)]),
    ("nanargmax", lambda m, a: m.nanargmax(a, axis=0), [NANS[[0, 2, 3]]]),
    ("nanargmin", lambda m, a: m.nanargmin(a), [NANS]),
    ("nanprod", lambda m, a: m.nanprod(a, axis=0), [NANS]),
    ("nancumsum", lambda m, a: m.nancumsum(a, axis=1), [NANS]),
    ("nancumprod", lambda m, a: m.nancumprod(a), [NANS.astype(np.float32)]),
    ("diff", lambda m, a: m.diff(a), [X]),
    ("diff_2_axis0", lambda m, a: m.diff(a, 2, axis=0), [INTS.astype(np.uint8)]),
    ("diff_bool", lambda m, a: m.diff(a), [INTS > 2]),
    ("ediff1d", lambda m, a: m.ediff1d(a), [X]),
    ("cov", lambda m, a: m.cov(a), [X]),
    ("cov_y_ddof", lambda m, a, b: m.cov(a, b, rowvar=False, ddof=2), [X, W]),
    ("corrcoef", lambda m, a: m.corrcoef(a), [X]),
    ("average", lambda m, a: m.average(a, axis=0), [X]),
    ("average_w", lambda m, a, w: m.average(a, axis=0, weights=w), [X, W[:, 0]]),
    ("average_w_full", lambda m, a, w: m.average(a, weights=w, returned=True), [INTS, INTS + 1.0]),
    ("argmax", lambda m, a: m.argmax(a, axis=1), [X]),
    ("argmax_nan", lambda m, a: m.argmax(a), [TIES]),
    ("argmin_keepdims", lambda m, a: m.argmin(a, axis=0, keepdims=True), [INTS]),
    ("argmin_f32", lambda m, a: m.argmin(a), [X.astype(np.float32)]),
    ("fft", lambda m, a: m.fft.fft(a), [V]),
    ("fft_n_axis", lambda m, a: m.fft.fft(a, 9, axis=0, norm="ortho"), [X]),
    ("fft_c64", lambda m, a: m.fft.fft(a), [C.astype(np.complex64)]),
    ("ifft", lambda m, a: m.fft.ifft(a, norm="forward"), [C]),
    ("rfft", lambda m, a: m.fft.rfft(a, axis=1), [X]),
    ("rfft_f32", lambda m, a: m.fft.rfft(a), [X.astype(np.float32)]),
    ("irfft", lambda m, a: m.fft.irfft(a, 12), [C]),
    ("hfft", lambda m, a: m.fft.hfft(a), [C]),
    ("ihfft", lambda m, a: m.fft.ihfft(a), [X]),
    ("fft2", lambda m, a: m.fft.fft2(a), [X]),
    ("fftshift", lambda m, a: m.fft.fftshift(a), [X]),
    ("ifftshift_axes", lambda m, a: m.fft.ifftshift(a, axes=(1,)), [C]),
    ("fftfreq", lambda m, a: m.fft.fftfreq(a.size, 0.1), [V]),
    ("rfftfreq", lambda m, a: m.fft.rfftfreq(a.size + 1, 2), [V]),
    ("fftn_s", lambda m, a: m.fft.fftn(a, s=(4, 8), axes=(0, 1)), [C]),
    ("ifftn", lambda m, a: m.fft.ifftn(a, axes=(0,)), [C]),
    ("rfftn", lambda m, a: m.fft.rfftn(a), [X]),
    ("irfftn", lambda m, a: m.fft.irfftn(a), [C]),
    ("rfft2", lambda m, a: m.fft.rfft2(a), [INTS]),
    ("irfft2", lambda m, a: m.fft.irfft2(a), [C]),
]


def _flat(out):
    return list(out) if isinstance(out, tuple) else [out]


def _host(a):
    return np.asarray(a)


@pytest.mark.parametrize(("name", "fun", "args"), CASES, ids=[c[0] for c in CASES])
def test_fast_path_gives_numpy_bits_and_the_general_paths_dtypes(name, fun, args, monkeypatch):
    with np.errstate(all="ignore"), _no_check():
        expected = _flat(fun(np, *args))
        fast = _flat(fun(mjnp, *[mjnp.asarray(a) for a in args]))
        monkeypatch.setattr(_host_numpy, "HOST_ELEMENTS", -1)  # every call takes the general path
        general = _flat(fun(mjnp, *[mjnp.asarray(a) for a in args]))
    assert len(fast) == len(expected) == len(general)
    for f, e, g in zip(fast, expected, general, strict=True):
        f, e, g = _host(f), np.asarray(e), _host(g)
        assert f.dtype == e.dtype == g.dtype, (f.dtype, e.dtype, g.dtype)
        assert f.shape == e.shape == g.shape, (f.shape, e.shape, g.shape)
        # NumPy's bits: the same bytes, NaNs and signed zeros included
        assert f.tobytes() == e.tobytes(), (f, e)
        np.testing.assert_allclose(g, e, rtol=1e-5 if e.dtype.itemsize <= 8 else 1e-12, atol=1e-5)


class _no_check:
    """Warnings may come (empty slices, all-NaN rows) and are compared elsewhere."""

    def __enter__(self):
        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


def _count_compiles(monkeypatch):
    compiles = []
    original = compat.compile_and_load

    def counting(*args, **kwargs):
        compiles.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(compat, "compile_and_load", counting)
    return compiles


WEIGHTS_11 = mjnp.asarray(rng.random(11) + 0.1)
FAST_CALLS = [
    lambda x, i: mjnp.sort(x, axis=0),
    lambda x, i: mjnp.argsort(x, axis=1),
    lambda x, i: mjnp.argsort(x, descending=True),
    lambda x, i: mjnp.unique(i, return_index=True, return_inverse=True, return_counts=True),
    lambda x, i: mjnp.histogram(x, bins=7),
    lambda x, i: mjnp.bincount(i.ravel()),
    lambda x, i: mjnp.searchsorted(x[0], x),
    lambda x, i: mjnp.count_nonzero(i, axis=0),
    lambda x, i: mjnp.percentile(x, [5, 95], axis=1),
    lambda x, i: mjnp.median(x, axis=0),
    lambda x, i: mjnp.nanmedian(x),
    lambda x, i: mjnp.nanmean(x, axis=1),
    lambda x, i: mjnp.nansum(x),
    lambda x, i: mjnp.nanstd(x, ddof=1),
    lambda x, i: mjnp.average(x, axis=1, weights=WEIGHTS_11),
    lambda x, i: mjnp.argmax(x, axis=0),
    lambda x, i: mjnp.argmin(x),
    lambda x, i: mjnp.fft.fft(x),
    lambda x, i: mjnp.fft.rfft2(x),
    lambda x, i: mjnp.fft.irfft(x, axis=0),
    lambda x, i: mjnp.fft.fftshift(x),
    lambda x, i: mjnp.fft.fftfreq(13),
    lambda x, i: mjnp.unique_counts(i),
    lambda x, i: mjnp.isin(x, x[0]),
    lambda x, i: mjnp.union1d(x[0], x[1]),
    lambda x, i: mjnp.lexsort((x[0], x[1])),
    lambda x, i: mjnp.partition(x, 3),
    lambda x, i: mjnp.argpartition(x, 3, axis=0),
    lambda x, i: mjnp.histogram2d(x[0], x[1], 5),
    lambda x, i: mjnp.histogram_bin_edges(x, 5),
    lambda x, i: mjnp.nanmax(x, axis=1),
    lambda x, i: mjnp.nanargmin(x),
    lambda x, i: mjnp.nanprod(x),
    lambda x, i: mjnp.nancumsum(x, axis=0),
    lambda x, i: mjnp.diff(x),
    lambda x, i: mjnp.ediff1d(x),
    lambda x, i: mjnp.cov(x),
    lambda x, i: mjnp.corrcoef(x),
]


def test_the_fast_path_binds_no_primitive_and_compiles_nothing(monkeypatch):
    # shapes no other test uses, so no cache holds them
    x = mjnp.asarray(rng.standard_normal((13, 11)))
    i = mjnp.asarray(rng.integers(0, 9, (13, 11)))
    compiles = _count_compiles(monkeypatch)
    binds = []
    original_bind = core.bind

    def counting_bind(*args):
        binds.append(args[0])
        return original_bind(*args)

    monkeypatch.setattr(core, "bind", counting_bind)
    for k, call in enumerate(FAST_CALLS):
        call(x, i)
        assert binds == [], k
    assert compiles == []
    # the counter sees the general path: every call binds primitives there
    monkeypatch.setattr(_host_numpy, "HOST_ELEMENTS", -1)
    for k, call in enumerate(FAST_CALLS):
        del binds[:]
        call(x, i)
        call(x, i)  # a fused body replays on its second call: it binds too
        assert binds, k


def test_results_do_not_share_an_operands_host_value():
    # NumPy's histogram returns the edges it was given, as they are
    edges = mjnp.asarray(np.array([-1.0, 0.0, 2.0]))
    _, out = mjnp.histogram(mjnp.asarray(V), edges)
    assert not np.shares_memory(np.asarray(out), np.asarray(edges))
    np.testing.assert_array_equal(np.asarray(out), np.asarray(edges))


def test_large_arrays_take_the_general_path():
    # above the host limit the compiled sort runs: the same values, whichever path
    x = rng.standard_normal(_host_numpy.HOST_ELEMENTS + 1)
    np.testing.assert_array_equal(np.asarray(mjnp.sort(mjnp.asarray(x))), np.sort(x))
    assert _host_numpy.host_values(mjnp.asarray(x)) is None


def test_weak_and_traced_arguments_take_the_general_path():
    weak = mjcore.jit(lambda v: v)(2.0)  # a weakly typed 0-d Array
    assert weak.aval.weak_type
    assert _host_numpy.host_values(weak) is None
    seen = []
    mjcore.jit(lambda v: seen.append(_host_numpy.host_values(v)) or v)(mjnp.asarray(X))
    assert seen == [None]
    assert _host_numpy.host_values(np.asarray(X)) is None  # a NumPy array is not an Array
    assert mjnp.sort(weak, axis=None).aval == mjnp.sort(mjnp.asarray(2.0), axis=None).aval


ERRORS = [
    (lambda: mjnp.sort(mjnp.asarray(X), kind="bogus"), ValueError, "mjnp.sort"),
    (lambda: mjnp.sort(mjnp.asarray(X), axis=2), np.exceptions.AxisError, None),
    (lambda: mjnp.argsort(mjnp.asarray(X), kind="stable", stable=True), ValueError, "mjnp.argsort"),
    (lambda: mjnp.histogram(mjnp.asarray(NANS)), ValueError, "mjnp.histogram"),
    (lambda: mjnp.histogram(mjnp.asarray(V), bins=0), ValueError, "mjnp.histogram"),
    (lambda: mjnp.histogram(mjnp.asarray(V), range=(1, 0)), ValueError, "mjnp.histogram"),
    (lambda: mjnp.bincount(mjnp.asarray(INTS.ravel() - 3)), ValueError, "mjnp.bincount"),
    (lambda: mjnp.bincount(mjnp.asarray(INTS)), ValueError, "mjnp.bincount"),
    (
        lambda: mjnp.searchsorted(mjnp.asarray(X), mjnp.asarray(V)),
        ValueError,
        "mjnp.searchsorted",
    ),  # fmt: skip
    (
        lambda: mjnp.searchsorted(mjnp.asarray(V), mjnp.asarray(V), "middle"),
        ValueError,
        "mjnp.searchsorted",
    ),  # fmt: skip
    (lambda: mjnp.argmax(mjnp.asarray(np.zeros((0, 3))), axis=0), ValueError, "mjnp.argmax"),
    (lambda: mjnp.percentile(mjnp.asarray(X), 150), ValueError, "mjnp.percentile"),
    (lambda: mjnp.quantile(mjnp.asarray(X), 0.5, method="bogus"), ValueError, "mjnp.quantile"),
    (
        lambda: mjnp.average(mjnp.asarray(X), weights=mjnp.asarray(X * 0)),
        ZeroDivisionError,
        "mjnp.average",
    ),  # fmt: skip
    (lambda: mjnp.count_nonzero(mjnp.asarray(X), axis=3), np.exceptions.AxisError, None),
    (lambda: mjnp.fft.fft(mjnp.asarray(V), 0), ValueError, "mjnp.fft.fft"),
    (lambda: mjnp.fft.fftfreq(0), ZeroDivisionError, "mjnp.fft.fftfreq"),
    (lambda: mjnp.fft.fftshift(mjnp.asarray(1.0)), ValueError, "mjnp.fft.fftshift"),
    (lambda: mjnp.nanargmax(mjnp.asarray(NANS), axis=1), ValueError, "mjnp.nanargmax"),
    (lambda: mjnp.nanmax(mjnp.asarray(np.zeros((0, 2)))), ValueError, None),
    (lambda: mjnp.partition(mjnp.asarray(X), 9), ValueError, "mjnp.partition"),
    (lambda: mjnp.lexsort([mjnp.asarray(X), mjnp.asarray(V)]), ValueError, "mjnp.lexsort"),
    (lambda: mjnp.diff(mjnp.asarray(1.0)), ValueError, "mjnp.diff"),
    (lambda: mjnp.ediff1d(mjnp.asarray(INTS > 2)), TypeError, "mjnp.ediff1d"),
    (lambda: mjnp.histogram2d(mjnp.asarray(V), mjnp.asarray(X)), ValueError, None),
    (lambda: mjnp.fft.rfft(mjnp.asarray(C)), TypeError, "mjnp.fft"),
    (lambda: mjnp.fft.fft(mjnp.asarray(V), norm="bogus"), ValueError, "mjnp.fft.fft"),
]


@pytest.mark.parametrize(("call", "error", "text"), ERRORS)
def test_errors_are_mjnps_as_on_the_general_path(call, error, text, monkeypatch):
    with pytest.raises(error) as fast:
        call()
    monkeypatch.setattr(_host_numpy, "HOST_ELEMENTS", -1)
    with pytest.raises(error) as general:
        call()
    assert str(fast.value) == str(general.value)
    if text is not None:
        assert text in str(fast.value)


def test_warnings_are_numpys_at_the_users_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mjnp.nanmean(mjnp.asarray(NANS), axis=1)
        mjnp.nanmedian(mjnp.asarray(NANS), axis=1)
        mjnp.nanvar(mjnp.asarray(NANS), axis=1)
        mjnp.median(mjnp.asarray(np.zeros(0)))
    messages = [str(w.message) for w in caught]
    assert "Mean of empty slice" in messages
    assert "All-NaN slice encountered" in messages
    assert "Degrees of freedom <= 0 for slice." in messages
    assert {w.filename for w in caught} == {__file__}
    with warnings.catch_warnings():  # an "error" filter raises them, after NumPy finished
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(RuntimeWarning, match="All-NaN slice encountered"):
            mjnp.nanmedian(mjnp.asarray(NANS), axis=1)


TRANSFORMED = [
    ("sort", lambda x: mjnp.sort(x, axis=0)),
    ("argsort", lambda x: mjnp.argsort(x, axis=1)),
    ("median", lambda x: mjnp.median(x, axis=1)),
    ("percentile", lambda x: mjnp.percentile(x, 30.0, axis=0)),
    ("nanmean", lambda x: mjnp.nanmean(x, axis=0)),
    ("nansum", lambda x: mjnp.nansum(x, axis=1)),
    ("nanstd", lambda x: mjnp.nanstd(x, axis=1)),
    ("average", lambda x: mjnp.average(x, axis=1, weights=mjnp.arange(1.0, 8.0))),
    ("argmax", lambda x: mjnp.argmax(x, axis=1)),
    ("searchsorted", lambda x: mjnp.searchsorted(mjnp.sort(x[0]), x)),
    ("unique_size", lambda x: mjnp.unique(mjnp.round(x), size=4)),
    ("count_nonzero", lambda x: mjnp.count_nonzero(x > 0, axis=0)),
    ("histogram", lambda x: mjnp.histogram(x, bins=4, range=(-2.0, 2.0))[0]),
    ("fft", lambda x: mjnp.fft.fft(x)),
    ("fftshift", lambda x: mjnp.fft.fftshift(x)),
    ("nanmax", lambda x: mjnp.nanmax(x, axis=0)),
    ("nanargmin", lambda x: mjnp.nanargmin(x, axis=1)),
    ("nancumsum", lambda x: mjnp.nancumsum(x, axis=1)),
    ("diff", lambda x: mjnp.diff(x, axis=0)),
    ("ediff1d", lambda x: mjnp.ediff1d(x)),
    ("cov", lambda x: mjnp.cov(x)),
    ("corrcoef", lambda x: mjnp.corrcoef(x)),
    ("isin", lambda x: mjnp.isin(x, x[0])),
    ("partition", lambda x: mjnp.partition(x, 2, axis=0)),
    ("lexsort", lambda x: mjnp.lexsort((x[0], x[1]))),
    ("histogram2d", lambda x: mjnp.histogram2d(x[0], x[1], 3, [(-2, 2), (-2, 2)])[0]),
    ("rfft2", lambda x: mjnp.fft.rfft2(x)),
]


@pytest.mark.parametrize(("name", "fun"), TRANSFORMED, ids=[t[0] for t in TRANSFORMED])
def test_jit_and_vmap_agree_with_the_eager_result(name, fun):
    x = mjnp.asarray(X)
    eager = np.asarray(fun(x))
    np.testing.assert_allclose(np.asarray(mjcore.jit(fun)(x)), eager, rtol=1e-12, atol=1e-12)
    batched = mjcore.vmap(fun)(mjnp.stack([x, x[::-1]]))
    np.testing.assert_allclose(np.asarray(batched)[0], eager, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        np.asarray(batched)[1], np.asarray(fun(x[::-1])), rtol=1e-12, atol=1e-12
    )


DIFFERENTIABLE = [
    ("sort", lambda x: mjnp.sort(x, axis=0)),
    ("median", lambda x: mjnp.median(x, axis=1)),
    ("percentile", lambda x: mjnp.percentile(x, [30.0, 90.0], axis=0)),
    ("nanmean", lambda x: mjnp.nanmean(x, axis=0)),
    ("nansum", lambda x: mjnp.nansum(x)),
    ("nanvar", lambda x: mjnp.nanvar(x, axis=1, ddof=1)),
    ("average", lambda x: mjnp.average(x, axis=0, weights=x[:, 0] ** 2)),
    ("fft", lambda x: mjnp.abs(mjnp.fft.fft(x))),
    ("irfft", lambda x: mjnp.fft.irfft(x, axis=0)),
    ("nanprod", lambda x: mjnp.nanprod(x, axis=0)),
    ("diff", lambda x: mjnp.diff(x, 2)),
    ("cov", lambda x: mjnp.cov(x)),
    ("corrcoef", lambda x: mjnp.corrcoef(x)),
]


@pytest.mark.parametrize(("name", "fun"), DIFFERENTIABLE, ids=[d[0] for d in DIFFERENTIABLE])
def test_grad_matches_finite_differences(name, fun):
    x = X.copy()
    cot = np.asarray(fun(mjnp.asarray(x)))
    weights = rng.standard_normal(cot.shape)

    def loss(v):
        return mjnp.sum(fun(v) * weights)

    g = np.asarray(mjcore.grad(loss)(mjnp.asarray(x)))
    eps = 1e-6
    for idx in [(0, 0), (2, 3), (4, 6)]:
        up, down = x.copy(), x.copy()
        up[idx] += eps
        down[idx] -= eps
        fd = (float(loss(mjnp.asarray(up))) - float(loss(mjnp.asarray(down)))) / (2 * eps)
        assert abs(g[idx] - fd) <= 1e-5 * max(1.0, abs(fd)), (idx, g[idx], fd)
