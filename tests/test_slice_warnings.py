"""NumPy's Python-level RuntimeWarnings of reductions over empty or all-NaN slices
(mjnp/_slice_warnings.py, docs/errors.md): "Mean of empty slice", "Degrees of freedom <= 0
for slice", "All-NaN slice encountered".

Each row of the table runs on NumPy (the oracle) and on mjnp, under the default error state,
`errstate(all='ignore')` and `errstate(all='raise')`: the warnings (class and text, in order),
the value and dtype, or the exception type and text, must agree. Then: the warning names the
caller's line; under `jit` a shape-decided warning is given at trace time and a value-decided
one never; integer and complex inputs; `where=`, `keepdims`, `out=`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as onp
import pytest

import mjcore
import mjnp as np

NAN = onp.nan


def _a(xp: Any, values: Any, dtype: Any = None) -> Any:
    return xp.asarray(onp.asarray(values, dtype=dtype))


ALLNAN_2D = [[NAN, NAN, NAN], [1.0, NAN, 2.0], [NAN, NAN, NAN]]

# (id, f(xp)): each computes one expression on NumPy or mjnp arrays.
CASES: list[tuple[str, Callable[[Any], Any]]] = [
    # mean: the shape decides
    ("mean([])", lambda xp: xp.mean(_a(xp, []))),
    ("mean((0,3), axis=0)", lambda xp: xp.mean(xp.zeros((0, 3)), axis=0)),
    ("mean((0,3), axis=1)", lambda xp: xp.mean(xp.zeros((0, 3)), axis=1)),
    ("mean((3,0), axis=1)", lambda xp: xp.mean(xp.zeros((3, 0)), axis=1)),
    ("mean((0,0), axis=1)", lambda xp: xp.mean(xp.zeros((0, 0)), axis=1)),
    ("mean int []", lambda xp: xp.mean(_a(xp, [], "int64"))),
    ("mean f32 keepdims", lambda xp: xp.mean(xp.zeros((2, 0), "float32"), 1, keepdims=True)),
    ("mean nonempty", lambda xp: xp.mean(_a(xp, [1.0, 2.0]))),
    # mean: a where= mask decides
    ("mean where none", lambda xp: xp.mean(_a(xp, [1.0, 2.0]), where=_a(xp, [False, False]))),
    (
        "mean where row",
        lambda xp: xp.mean(
            _a(xp, [[1.0, 2.0], [3.0, 4.0]]), axis=1, where=_a(xp, [[True, True], [False, False]])
        ),
    ),
    # var/std: ddof against the elements per slice
    ("var([])", lambda xp: xp.var(_a(xp, []))),
    ("var([1.], ddof=1)", lambda xp: xp.var(_a(xp, [1.0]), ddof=1)),
    ("std([1., 2.], ddof=3)", lambda xp: xp.std(_a(xp, [1.0, 2.0]), ddof=3)),
    ("std int ddof=2", lambda xp: xp.std(_a(xp, [1, 2]), ddof=2)),
    ("var correction=2", lambda xp: xp.var(_a(xp, [1.0, 2.0]), correction=2)),
    ("var axis=0 ddof=2", lambda xp: xp.var(xp.ones((2, 3)), axis=0, ddof=2)),
    ("var axis=1 ddof=2", lambda xp: xp.var(xp.ones((2, 3)), axis=1, ddof=2)),
    ("var ddof=1 ok", lambda xp: xp.var(_a(xp, [1.0, 3.0]), ddof=1)),
    ("std complex ddof=1", lambda xp: xp.std(_a(xp, [1 + 1j]), ddof=1)),
    (
        "var where ddof=1",
        lambda xp: xp.var(
            _a(xp, [[1.0, 2.0], [3.0, 4.0]]),
            axis=1,
            ddof=1,
            where=_a(xp, [[True, True], [True, False]]),
        ),
    ),
    ("median([])", lambda xp: xp.median(_a(xp, []))),
    ("median (1,1,0) axis=2", lambda xp: xp.median(xp.zeros((1, 1, 0)), axis=2)),
    ("average([])", lambda xp: xp.average(_a(xp, []))),
    # nanmean: NaN counts decide; the division itself is quiet
    ("nanmean all-NaN", lambda xp: xp.nanmean(_a(xp, [NAN, NAN]))),
    ("nanmean all-NaN f32", lambda xp: xp.nanmean(_a(xp, [NAN], "float32"))),
    ("nanmean all-NaN column", lambda xp: xp.nanmean(_a(xp, [[NAN, 1.0], [NAN, 2.0]]), axis=0)),
    ("nanmean complex all-NaN", lambda xp: xp.nanmean(_a(xp, [complex(NAN, 0)]))),
    ("nanmean (0,3) axis=0", lambda xp: xp.nanmean(xp.zeros((0, 3)), axis=0)),
    ("nanmean (0,3) axis=1", lambda xp: xp.nanmean(xp.zeros((0, 3)), axis=1)),
    ("nanmean (0,0) axis=1", lambda xp: xp.nanmean(xp.zeros((0, 0)), axis=1)),
    ("nanmean int []", lambda xp: xp.nanmean(_a(xp, [], "int64"))),
    ("nanmean no NaN", lambda xp: xp.nanmean(_a(xp, [1.0, NAN]))),
    (
        "nanmean where",
        lambda xp: xp.nanmean(
            _a(xp, [[1.0, NAN], [3.0, 4.0]]), axis=1, where=_a(xp, [[False, True], [True, True]])
        ),
    ),
    # nanvar/nanstd: "...slice." with a full stop; quiet divisions
    ("nanvar all-NaN", lambda xp: xp.nanvar(_a(xp, [NAN, NAN]))),
    ("nanstd all-NaN", lambda xp: xp.nanstd(_a(xp, [NAN, NAN]))),
    ("nanvar ddof=2", lambda xp: xp.nanvar(_a(xp, [1.0, 2.0, NAN]), ddof=2)),
    ("nanvar []", lambda xp: xp.nanvar(_a(xp, []))),
    ("nanvar ddof >= size", lambda xp: xp.nanvar(_a(xp, [1.0, 2.0]), ddof=2)),
    ("nanvar int ddof=2", lambda xp: xp.nanvar(_a(xp, [1, 2]), ddof=2)),
    ("nanstd keepdims", lambda xp: xp.nanstd(_a(xp, ALLNAN_2D), axis=1, keepdims=True)),
    ("nanstd complex all-NaN", lambda xp: xp.nanstd(_a(xp, [complex(NAN, 1)]))),
    (
        "nanvar where",
        lambda xp: xp.nanvar(
            _a(xp, [[1.0, NAN], [3.0, 4.0]]), axis=1, where=_a(xp, [[False, True], [True, True]])
        ),
    ),
    # nanmin/nanmax: a NaN in the result
    ("nanmin all-NaN", lambda xp: xp.nanmin(_a(xp, [NAN, NAN]))),
    ("nanmax all-NaN rows", lambda xp: xp.nanmax(_a(xp, ALLNAN_2D), axis=1)),
    ("nanmax f16 all-NaN", lambda xp: xp.nanmax(_a(xp, [NAN], "float16"))),
    ("nanmin complex all-NaN", lambda xp: xp.nanmin(_a(xp, [complex(NAN, 0)]))),
    ("nanmin list", lambda xp: xp.nanmin([NAN, NAN])),
    ("nanmax scalar", lambda xp: xp.nanmax(NAN)),
    ("nanmax initial", lambda xp: xp.nanmax(_a(xp, [NAN, NAN]), initial=1.0)),
    ("nanmin int", lambda xp: xp.nanmin(_a(xp, [1, 2]))),
    ("nanmin some NaN", lambda xp: xp.nanmin(_a(xp, [1.0, NAN]))),
    ("nanargmax all-NaN", lambda xp: xp.nanargmax(_a(xp, [NAN, NAN]))),
    # nanmedian/nanquantile/nanpercentile: once per all-NaN slice
    ("nanmedian all-NaN", lambda xp: xp.nanmedian(_a(xp, [NAN, NAN]))),
    ("nanmedian all-NaN rows", lambda xp: xp.nanmedian(_a(xp, ALLNAN_2D), axis=1)),
    ("nanmedian all-NaN None", lambda xp: xp.nanmedian(xp.full((3, 4), NAN))),
    ("nanmedian tuple axis", lambda xp: xp.nanmedian(xp.full((3, 4, 2), NAN), axis=(0, 2))),
    ("nanmedian (0,3) axis=0", lambda xp: xp.nanmedian(xp.zeros((0, 3)), axis=0)),
    ("nanmedian (0,3) axis=1", lambda xp: xp.nanmedian(xp.zeros((0, 3)), axis=1)),
    ("nanmedian int", lambda xp: xp.nanmedian(_a(xp, [3, 1, 2]))),
    (
        "nanmedian complex rows",
        lambda xp: xp.nanmedian(
            _a(xp, [[NAN, NAN, NAN], [3 + 1j, NAN, 1 + 2j], [2j, 1, NAN]], "complex128"), axis=1
        ),
    ),
    ("nanmedian complex64 all-NaN", lambda xp: xp.nanmedian(_a(xp, [NAN, NAN], "complex64"))),
    ("nanpercentile all-NaN", lambda xp: xp.nanpercentile(_a(xp, [NAN, NAN]), 50)),
    (
        "nanquantile all-NaN rows",
        lambda xp: xp.nanquantile(_a(xp, ALLNAN_2D), [0.5, 0.25], axis=1),
    ),
    (
        "nanquantile weighted rows",
        lambda xp: xp.nanquantile(
            _a(xp, ALLNAN_2D), 0.5, axis=1, method="inverted_cdf", weights=xp.ones((3, 3))
        ),
    ),
    (
        "quantile zero weights",
        lambda xp: xp.quantile(
            _a(xp, [1.0, 2.0]), 0.5, method="inverted_cdf", weights=_a(xp, [0.0, 0.0])
        ),
    ),
    ("nanpercentile (0,3) axis=0", lambda xp: xp.nanpercentile(xp.zeros((0, 3)), 40, axis=0)),
    ("nanpercentile (0,3) None", lambda xp: xp.nanpercentile(xp.zeros((0, 3)), 40)),
    ("nanpercentile (0,3) axis=1", lambda xp: xp.nanpercentile(xp.zeros((0, 3)), 40, axis=1)),
    (
        "nanpercentile int (0,3)",
        lambda xp: xp.nanpercentile(xp.zeros((0, 3), "int64"), 40, axis=0),
    ),
]


def _outcome(f: Callable[[], Any]) -> tuple[Any, list[tuple[type, str]]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result: Any = onp.asarray(f())
        except Exception as e:
            result = (type(e), str(e).removeprefix("mjnp.").split(": ", 1)[-1])
    return result, [(w.category, str(w.message)) for w in caught]


def _same_result(got: Any, want: Any) -> None:
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and got[0] is want[0], (got, want)
        return
    assert isinstance(got, onp.ndarray), got
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    onp.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("state", ["default", "ignore", "raise"])
@pytest.mark.parametrize("name,f", CASES, ids=[c[0] for c in CASES])
def test_warnings_values_and_errors_match_numpy(name, f, state):
    kwargs = {} if state == "default" else {"all": state}
    with onp.errstate(**kwargs):
        want = _outcome(lambda: f(onp))
        got = _outcome(lambda: f(np))
    assert got[1] == want[1], f"{name}: warnings {got[1]} != NumPy's {want[1]}"
    _same_result(got[0], want[0])


def test_out_argument_keeps_the_warning():
    x = onp.array([[NAN, NAN], [1.0, 2.0]])
    for fname in ("nanmin", "nanmax", "nanmean"):
        out_np, out_mj = onp.zeros(2), np.zeros(2)
        want = _outcome(lambda: getattr(onp, fname)(x, axis=1, out=out_np))  # noqa: B023
        got = _outcome(lambda: getattr(np, fname)(np.asarray(x), axis=1, out=out_mj))  # noqa: B023
        assert got[1] == want[1], fname
        onp.testing.assert_array_equal(onp.asarray(out_mj), out_np)


def test_the_warning_names_the_callers_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.mean(np.zeros((0,)))
        np.nanvar(np.asarray([NAN]))
        np.nanmax(np.asarray([NAN]))
        np.nanmedian(np.asarray([[NAN, NAN]]), axis=1)
        np.var(np.asarray([1.0]), ddof=1)
    assert len(caught) >= 5
    assert {w.filename for w in caught} == {__file__}


def test_errors_are_warnings_under_an_error_filter():
    # NumPy's warnings are Python warnings: an "error" filter turns them into exceptions
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(RuntimeWarning, match="All-NaN slice encountered"):
            np.nanmin(np.asarray([NAN]))
        with pytest.raises(RuntimeWarning, match="Mean of empty slice"):
            np.mean(np.zeros(0))


def test_under_jit_the_shape_decided_warnings_come_at_trace_time_only():
    mean = mjcore.jit(lambda x: np.mean(x, axis=0))
    var = mjcore.jit(lambda x: np.var(x, ddof=3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mean(np.zeros((0, 2)))
        var(np.ones(3))
    assert [str(w.message) for w in caught] == [
        "Mean of empty slice",
        "Degrees of freedom <= 0 for slice",
    ]
    with warnings.catch_warnings(record=True) as caught:  # cached: no trace, no warning
        warnings.simplefilter("always")
        onp.testing.assert_array_equal(onp.asarray(mean(np.zeros((0, 2)))), [NAN, NAN])
        var(np.ones(3))
    assert caught == []


@pytest.mark.parametrize(
    "fname", ["nanmean", "nanvar", "nanstd", "nanmin", "nanmax", "nanmedian", "nanquantile"]
)
def test_value_decided_warnings_are_not_given_under_transformations(fname):
    f = getattr(np, fname)
    if fname == "nanquantile":
        call = lambda x: f(x, 0.5, axis=-1)  # noqa: E731
    else:
        call = lambda x: f(x, axis=-1)  # noqa: E731
    x = np.asarray([[NAN, NAN], [1.0, 2.0]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        jitted = onp.asarray(mjcore.jit(call)(x))
        mapped = onp.asarray(mjcore.vmap(call)(x))
    assert caught == []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        eager = onp.asarray(call(x))
    onp.testing.assert_array_equal(jitted, eager)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = onp.stack([onp.asarray(call(row)) for row in x])
    onp.testing.assert_array_equal(mapped, rows)
    assert len(caught) == 1, "the eager call warns once (one all-NaN row)"


def test_vmap_sees_the_per_example_shape():
    # mean over each row of a (3, 0) batch: each example is empty, as NumPy's mean of a row
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = mjcore.vmap(np.mean)(np.zeros((3, 0)))
    # (the division's floating-point warning follows: vmap outside jit computes eagerly)
    assert [str(w.message) for w in caught][:1] == ["Mean of empty slice"]
    onp.testing.assert_array_equal(onp.asarray(out), [NAN] * 3)


def test_fused_functions_stay_fused():
    # the check wraps the fused function: its attributes (and the one-trace replay) survive
    for f in (np.mean, np.var, np.std):
        assert hasattr(f, "__wrapped_fused__")
    x = np.asarray(onp.arange(6.0).reshape(2, 3))
    before = np.mean.__wrapped_fused__.trace_count
    for _ in range(3):
        np.mean(x)
    assert np.mean.__wrapped_fused__.trace_count - before <= 1


@pytest.mark.parametrize("fname", ["nanmean", "nanvar", "nanstd"])
@pytest.mark.parametrize("dtype", [bool, onp.int64, onp.int8])
def test_nan_moments_of_inexact_input_refuse_exact_dtype_and_out(fname, dtype):
    x = onp.array([[1.0, NAN], [2.0, 3.0]])
    for kwargs_np, kwargs_mj in (
        ({"dtype": dtype}, {"dtype": dtype}),
        ({"out": onp.empty(2, dtype)}, {"out": np.empty(2, dtype)}),
    ):
        with pytest.raises(TypeError) as want:
            getattr(onp, fname)(x, axis=1, **kwargs_np)
        with pytest.raises(TypeError, match=str(want.value)):
            getattr(np, fname)(np.asarray(x), axis=1, **kwargs_mj)
