"""More NumPy-compatibility edge cases, with NumPy as the oracle: list and bool axes of
reductions, out-of-range Python ints in insert, piecewise, select and pad, fill_diagonal's
overflow message, and where's float16 overflow without a warning."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy
import pytest

import mjnp
from tests.mjnp_testing import check_like_numpy, numpy_outcome

NpOrMj = Any  # the numpy or the mjnp module


def _get(module: NpOrMj, name: str) -> Any:
    for part in name.split("."):
        module = getattr(module, part)
    return module


# --- 1. list and bool axes of reductions ----------------------------------------------------
# NumPy's ufunc reductions (and mean, std, var and the nan* functions, which pass `axis` on to
# one) read `axis` with the C multi-axis converter: a tuple or an int, so a list is a TypeError,
# as is a bool. median, quantile and friends normalize it in Python and take a list as a tuple.

X23 = numpy.arange(1.0, 7.0).reshape(2, 3)

AXIS_CALLS: dict[str, Callable[[NpOrMj, Any, Any], Any]] = {
    name: (lambda np, x, axis, name=name: _get(np, name)(x, axis=axis))
    for name in [
        "sum", "prod", "max", "min", "amax", "amin", "mean", "std", "var", "any", "all",
        "argmax", "argmin", "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanstd",
        "nanvar", "nanargmax", "nanargmin", "count_nonzero", "ptp", "cumsum", "squeeze",
        "median", "nanmedian", "average", "linalg.vector_norm", "linalg.norm",
        "cumulative_sum", "cumulative_prod",
    ]
}  # fmt: skip
AXIS_CALLS |= {
    "quantile": lambda np, x, axis: np.quantile(x, 0.5, axis=axis),
    "method_sum": lambda np, x, axis: x.sum(axis=axis),
    "method_mean": lambda np, x, axis: x.mean(axis=axis),
    "method_max": lambda np, x, axis: x.max(axis=axis),
    "method_std": lambda np, x, axis: x.std(axis=axis),
    "mean_int": lambda np, x, axis: np.mean(x.astype(np.int64), axis=axis),
    "sum_keepdims": lambda np, x, axis: np.sum(x, axis=axis, keepdims=True),
}

LIST_AND_BOOL_AXES = [[0], [1], [0, 1], [], [True], (True,), True, (False, 1), (0, True)]


@pytest.mark.parametrize("axis", LIST_AND_BOOL_AXES, ids=repr)
@pytest.mark.parametrize("name", sorted(AXIS_CALLS))
def test_list_and_bool_axis(name: str, axis: Any) -> None:
    call = AXIS_CALLS[name]
    check_like_numpy(lambda: call(numpy, X23, axis), lambda: call(mjnp, mjnp.asarray(X23), axis))


def test_list_axis_message() -> None:
    with pytest.raises(TypeError, match=r"mjnp\.sum: axis must be .* not a list .*axis=\(0,\)"):
        mjnp.sum(mjnp.ones((2, 3)), axis=[0])
    with pytest.raises(TypeError, match=r"mjnp\.mean: axis must be .* not a list"):
        mjnp.mean(mjnp.ones((2, 3)), axis=[0, 1])
    with pytest.raises(TypeError, match=r"mjnp\.linalg\.norm: axis must be .* not a list"):
        mjnp.linalg.norm(mjnp.ones((2, 3)), axis=[0])


# --- 2. out-of-range Python ints in insert, piecewise, select and pad ----------------------
# insert converts `values` as `np.array(values, dtype=arr.dtype)` and piecewise writes each
# constant as `y[cond] = v`: both raise OverflowError for 300 or -1 into uint8 (NEP 50), and
# make 2**70 True in bool and inf in float16. select makes a Python int an int64 (uint64,
# object) array: the default is cast unsafely (it wraps) and a choice under 'same_kind' (a
# TypeError for int64 into uint8, a wrap for int64 into int8). pad writes one or two constants
# as NumPy scalars (an int64 wraps into uint8 but overflows int8) and more as Python scalars.


INT_WRITE_CALLS: dict[str, Callable[[NpOrMj, Any, Any], Any]] = {
    "insert": lambda np, a, v: np.insert(a, 1, v),
    "insert_list": lambda np, a, v: np.insert(a, [1, 2], [1, v]),
    "insert_axis": lambda np, a, v: np.insert(a.reshape(1, 3), 1, v, axis=1),
    "piecewise": lambda np, a, v: np.piecewise(a, [a > 0], [v, 1]),
    "piecewise_callable": lambda np, a, v: np.piecewise(a, [a > 0], [lambda x: v, 1]),
    "piecewise_nothing_selected": lambda np, a, v: np.piecewise(a, [a > 5], [v]),
    "select_default": lambda np, a, v: np.select([a > 0], [a], v),
    "select_choice": lambda np, a, v: np.select([a > 0], [v], a),
    "select_choice_and_default": lambda np, a, v: np.select([a > 0], [v], 0),
    "pad": lambda np, a, v: np.pad(a, 1, constant_values=v),
    "pad_pair": lambda np, a, v: np.pad(a, 1, constant_values=(0, v)),
    "pad_per_axis": lambda np, a, v: np.pad(a.reshape(1, 3), 1, constant_values=((0, v), (1, 2))),
}
INT_WRITE_VALUES = [300, -1, 255, 70000, 2**63, 2**70, -(2**63) - 1, 1.5]
INT_WRITE_DTYPES = ["uint8", "int8", "uint16", "int64", "float16", "bool"]


def _fits(v: Any, dtype: str) -> bool:
    dt = numpy.dtype(dtype)
    return dt.kind in "iu" and numpy.iinfo(dt).min <= v <= numpy.iinfo(dt).max


INT_WRITE_CASES = [
    (name, dtype, v)
    for name in sorted(INT_WRITE_CALLS)
    for dtype in INT_WRITE_DTYPES
    for v in INT_WRITE_VALUES
    # NB: NumPy's select raises TypeError for any Python int choice into a uint result (it
    # turns the int into an int64 array first); mjnp writes a choice that fits, see below.
    if not (name.startswith("select_choice") and type(v) is int and _fits(v, dtype))
]


@pytest.mark.parametrize(("name", "dtype", "v"), INT_WRITE_CASES, ids=repr)
def test_write_python_int_like_numpy(name: str, dtype: str, v: Any) -> None:
    call = INT_WRITE_CALLS[name]
    a = numpy.array([0, 1, 2], dtype=dtype)
    check_like_numpy(lambda: call(numpy, a, v), lambda: call(mjnp, mjnp.asarray(a), v))


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "int8"])
def test_select_choice_that_fits_is_written(dtype: str) -> None:
    a = numpy.array([0, 1, 2], dtype=dtype)
    got = mjnp.select([mjnp.asarray(a) > 0], [3], mjnp.asarray(a))
    expected = numpy.select([a > 0], [numpy.array(3, dtype=dtype)], a)
    assert numpy.asarray(got).dtype == expected.dtype
    numpy.testing.assert_array_equal(numpy.asarray(got), expected)


@pytest.mark.parametrize(
    "value", [[1, 300], numpy.array(300), numpy.array([1.5, 3.0]), 300.0, 1j], ids=repr
)
@pytest.mark.parametrize("dtype", ["uint8", "int8", "float16"])
def test_insert_values_like_numpy(dtype: str, value: Any) -> None:
    a = numpy.array([0, 1, 2], dtype=dtype)
    check_like_numpy(
        lambda: numpy.insert(a, [1], value), lambda: mjnp.insert(mjnp.asarray(a), [1], value)
    )


@pytest.mark.parametrize(
    "cv",
    [numpy.array(300), numpy.array([0, 300]), [[1, 2], [3, 300]], ((300,), (0,)), 300.0,
     (-1, 2**63), 1e300, 1j],
    ids=repr,
)  # fmt: skip
@pytest.mark.parametrize("dtype", ["uint8", "int8", "float16", "complex64"])
def test_pad_constant_values_like_numpy(dtype: str, cv: Any) -> None:
    a = numpy.arange(4).reshape(2, 2).astype(dtype)
    check_like_numpy(
        lambda: numpy.pad(a, 1, constant_values=cv),
        lambda: mjnp.pad(mjnp.asarray(a), 1, constant_values=cv),
    )


def test_write_python_int_messages() -> None:
    a = mjnp.array([0, 1, 2], dtype="uint8")
    with pytest.raises(OverflowError, match=r"^mjnp\.insert: .*300.*uint8"):
        mjnp.insert(a, 1, 300)
    with pytest.raises(OverflowError, match=r"^mjnp\.piecewise: .*300.*uint8"):
        mjnp.piecewise(a, [a > 0], [300])
    with pytest.raises(TypeError, match=r"^mjnp\.select: .*300.*uint8.*'same_kind'"):
        mjnp.select([a > 0], [300], a)
    with pytest.raises(OverflowError, match=r"^mjnp\.pad: .*300.*int8"):
        mjnp.pad(a.astype("int8"), 1, constant_values=300)


def test_traced_pad_and_select_values() -> None:
    import mjcore

    a = numpy.array([0, 1, 2], dtype="uint8")
    got = mjcore.jit(lambda a, c: mjnp.pad(a, 1, constant_values=c))(a, numpy.array(300))
    numpy.testing.assert_array_equal(numpy.asarray(got), numpy.pad(a, 1, constant_values=300))
    got = mjcore.jit(lambda a: mjnp.select([a > 0], [a], 300))(a)
    numpy.testing.assert_array_equal(numpy.asarray(got), numpy.select([a > 0], [a], 300))


# --- 3. fill_diagonal converts its value as NumPy's `a.flat[...] = val` -------------------


@pytest.mark.parametrize("v", [300, -1, 2**70, 1.5, [1, 300], numpy.array(300), 1j], ids=repr)
@pytest.mark.parametrize("dtype", ["uint8", "int8", "float16", "bool"])
def test_fill_diagonal_python_scalar(dtype: str, v: Any) -> None:
    def call(np: NpOrMj) -> Any:
        a = np.zeros((2, 2), dtype=dtype)
        np.fill_diagonal(a, v)
        return a

    check_like_numpy(lambda: call(numpy), lambda: call(mjnp))


def test_fill_diagonal_overflow_message_names_function() -> None:
    a = mjnp.zeros((2, 2), dtype="uint8")
    with pytest.raises(OverflowError, match=r"^mjnp\.fill_diagonal: .*300.*uint8"):
        mjnp.fill_diagonal(a, 300)
    numpy.testing.assert_array_equal(numpy.asarray(a), numpy.zeros((2, 2)))


# --- 4. where: a Python scalar beyond float16 is inf, with NumPy's warning ---------------
# NumPy's where warns "overflow encountered in cast" here; so does mjnp, on every call (the
# overflowing scalar is not cached), and under errstate(over='raise') it raises as NumPy.


@pytest.mark.parametrize("v", [70001, -70001, 2**70, 1e300], ids=repr)
def test_where_float16_overflow_is_inf_with_numpys_warning(v: Any) -> None:
    cond = numpy.array([True, False, True])
    x = numpy.array([1, 0, 3], dtype="float16")
    expected, _ = numpy_outcome(lambda: numpy.where(cond, x, v))
    for _ in range(2):  # a cached scalar would warn only once
        with pytest.warns(RuntimeWarning, match="^overflow encountered in cast$"):
            got = numpy.asarray(mjnp.where(mjnp.asarray(cond), mjnp.asarray(x), v))
    assert got.dtype == expected.dtype
    numpy.testing.assert_array_equal(got, expected)
    with numpy.errstate(over="raise"):
        with pytest.raises(FloatingPointError, match="^overflow encountered in cast$"):
            numpy.where(cond, x, v)
        with pytest.raises(FloatingPointError, match="^overflow encountered in cast$"):
            mjnp.where(mjnp.asarray(cond), mjnp.asarray(x), v)


# --- 5. an axis given as an iterable of ints (a NumPy array, a range) ----------------------
# NumPy's Python-level functions read `axis` with normalize_axis_tuple, which iterates what is
# not an integer; its C-level and ufunc readers (and expand_dims) reject the same value.

_ITERABLE_AXES = [numpy.array([0]), numpy.array([1, 0]), range(1), numpy.array([[0]]), 1.5, "a"]

_AXIS_CALLS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "median": lambda np, a, ax: np.median(a, axis=ax),
    "nanmedian": lambda np, a, ax: np.nanmedian(a, axis=ax),
    "quantile": lambda np, a, ax: np.quantile(a, 0.25, axis=ax),
    "percentile": lambda np, a, ax: np.percentile(a, 75, axis=ax),
    "average": lambda np, a, ax: np.average(a, axis=ax),
    "flip": lambda np, a, ax: np.flip(a, axis=ax),
    "gradient": lambda np, a, ax: np.stack(np.gradient(a, axis=ax)),
    "moveaxis": lambda np, a, ax: np.moveaxis(a, ax, ax),
    "roll": lambda np, a, ax: np.roll(a, 1, axis=ax),
    "expand_dims": lambda np, a, ax: np.expand_dims(a, axis=ax),
    "nanmean": lambda np, a, ax: np.nanmean(a, axis=ax),
    "count_nonzero": lambda np, a, ax: np.count_nonzero(a, axis=ax),
    "sum": lambda np, a, ax: np.sum(a, axis=ax),
}


@pytest.mark.parametrize("name", sorted(_AXIS_CALLS))
@pytest.mark.parametrize("axis", _ITERABLE_AXES, ids=repr)
def test_axis_as_iterable_like_numpy(name: str, axis: Any) -> None:
    call = _AXIS_CALLS[name]
    a = numpy.arange(12.0).reshape(3, 4)
    check_like_numpy(lambda: call(numpy, a, axis), lambda: call(mjnp, mjnp.asarray(a), axis))
