"""NumPy-compatibility edge cases, with NumPy as the oracle: fftfreq's `n` check, bool axes,
axis 0 / -1 on 0-d arrays, and out-of-range Python ints written into small integer arrays."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy
import pytest

import mjnp
from tests.mjnp_testing import check_like_numpy

NpOrMj = Any  # the numpy or the mjnp module


# --- 1. fft.fftfreq / rfftfreq: n must be a Python or NumPy integer ---------------------------

FREQ_N = [3, 3.0, 3.5, numpy.int64(3), numpy.float64(3.0), True, False, 0, -1, "3", None]


@pytest.mark.parametrize("fname", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("n", FREQ_N, ids=repr)
def test_fftfreq_n(fname: str, n: Any) -> None:
    check_like_numpy(lambda: getattr(numpy.fft, fname)(n), lambda: getattr(mjnp.fft, fname)(n))


@pytest.mark.parametrize("fname", ["fftfreq", "rfftfreq"])
def test_fftfreq_float_n_message_names_function(fname: str) -> None:
    with pytest.raises(ValueError, match=rf"mjnp\.fft\.{fname}: n should be an integer"):
        getattr(mjnp.fft, fname)(3.0)


# --- 2. bool axes: TypeError where NumPy's C axis converters reject them ---------------------

X23 = numpy.arange(1.0, 7.0).reshape(2, 3)

# name -> call(np, x, axis); x is a (2, 3) float64 array of the module's kind.
BOOL_AXIS_CALLS: dict[str, Callable[[NpOrMj, Any, Any], Any]] = {
    name: (lambda np, x, axis, name=name: getattr(np, name)(x, axis=axis))
    for name in [
        # ufunc reductions and NumPy's Python wrappers over them: TypeError in NumPy
        "sum", "prod", "mean", "max", "min", "amax", "amin", "all", "any", "std", "var",
        "nansum", "nanprod", "nanmean", "nanmax", "nanmin", "nanstd", "nanvar",
        "count_nonzero", "ptp",
        # single-axis C functions: TypeError in NumPy
        "argmax", "argmin", "nanargmax", "nanargmin", "cumsum", "cumprod", "nancumsum",
        "nancumprod", "cumulative_sum", "cumulative_prod", "argsort", "squeeze",
        "trapezoid", "unwrap",
        # Python-level functions (normalize_axis_index): NumPy takes the bool as an int
        "median", "average", "flip", "sort", "expand_dims", "diff", "nanmedian",
        "gradient",
    ]
}  # fmt: skip
BOOL_AXIS_CALLS |= {
    "take": lambda np, x, axis: np.take(x, [0], axis=axis),
    "compress": lambda np, x, axis: np.compress([True], x, axis=axis),
    "repeat": lambda np, x, axis: np.repeat(x, 2, axis=axis),
    "concatenate": lambda np, x, axis: np.concatenate([x, x], axis=axis),
    "stack": lambda np, x, axis: np.stack([x, x], axis=axis),
    "argpartition": lambda np, x, axis: np.argpartition(x, 1, axis=axis),
    "partition": lambda np, x, axis: np.partition(x, 1, axis=axis),
    "transpose": lambda np, x, axis: np.transpose(x, (axis, 0)),
    "swapaxes": lambda np, x, axis: np.swapaxes(x, axis, 0),
    "moveaxis": lambda np, x, axis: np.moveaxis(x, axis, 0),
    "vecdot": lambda np, x, axis: np.vecdot(x, x, axis=axis),
    "tensordot": lambda np, x, axis: np.tensordot(x, x, axes=([axis], [axis])),
    "quantile": lambda np, x, axis: np.quantile(x, 0.5, axis=axis),
    "average_weights": lambda np, x, axis: np.average(x, axis, np.ones(3)),
    "packbits": lambda np, x, axis: np.packbits(x.astype(numpy.uint8), axis=axis),
    "method_sum": lambda np, x, axis: x.sum(axis=axis),
    "method_argmax": lambda np, x, axis: x.argmax(axis=axis),
}


@pytest.mark.parametrize("axis", [True, False, (True,)], ids=repr)
@pytest.mark.parametrize("name", sorted(BOOL_AXIS_CALLS))
def test_bool_axis(name: str, axis: Any) -> None:
    call = BOOL_AXIS_CALLS[name]
    check_like_numpy(lambda: call(numpy, X23, axis), lambda: call(mjnp, mjnp.asarray(X23), axis))


def test_bool_axis_is_rejected_for_reductions() -> None:
    # Guards against the table silently matching only because both sides accept bools.
    with pytest.raises(TypeError, match=r"mjnp\.sum: axis must be an integer, not a bool"):
        mjnp.sum(mjnp.ones((2, 3)), axis=True)
    with pytest.raises(TypeError, match=r"mjnp\.argmax"):
        mjnp.argmax(mjnp.ones((2, 3)), axis=False)


# --- 3. axis 0 / -1 on a 0-d array --------------------------------------------------------

ZERO_D_CALLS: dict[str, Callable[[NpOrMj, Any, int], Any]] = {
    name: (lambda np, x, axis, name=name: getattr(np, name)(x, axis=axis))
    for name in [
        "argmax", "argmin", "nanargmax", "nanargmin", "cumsum", "cumprod", "nancumsum",
        "nancumprod", "cumulative_sum", "ptp", "squeeze", "sum", "max", "count_nonzero",
        "argsort", "sort", "mean",
    ]
}  # fmt: skip
ZERO_D_CALLS |= {
    "argmax_keepdims": lambda np, x, axis: np.argmax(x, axis=axis, keepdims=True),
    "cumsum_float32": lambda np, x, axis: np.cumsum(x, axis=axis, dtype=numpy.float32),
    "take_scalar": lambda np, x, axis: np.take(x, 0, axis=axis),
    "take_list": lambda np, x, axis: np.take(x, [0, -1], axis=axis),
    "take_out_of_bounds": lambda np, x, axis: np.take(x, 1, axis=axis),
    "compress": lambda np, x, axis: np.compress([True], x, axis=axis),
    "argpartition": lambda np, x, axis: np.argpartition(x, 0, axis=axis),
    "squeeze_tuple": lambda np, x, axis: np.squeeze(x, axis=(axis,)),
    "method_cumsum": lambda np, x, axis: x.cumsum(axis=axis),
}


@pytest.mark.parametrize("dtype", ["float64", "int8", "bool"])
@pytest.mark.parametrize("axis", [0, -1, 1, -2])
@pytest.mark.parametrize("name", sorted(ZERO_D_CALLS))
def test_zero_d_axis(name: str, axis: int, dtype: str) -> None:
    call = ZERO_D_CALLS[name]
    x = numpy.asarray(5, dtype=dtype)
    check_like_numpy(lambda: call(numpy, x, axis), lambda: call(mjnp, mjnp.asarray(x), axis))


# --- 4. out-of-range Python ints written into uint8 / int8 arrays (NEP 50) ----------------


def _setitem(a: Any, index: Any, v: Any) -> Any:
    a[index] = v
    return a


# name -> call(np, a, v) returning the updated a; a is [0, 1, 2] of the module's kind.
WRITE_CALLS: dict[str, Callable[[NpOrMj, Any, Any], Any]] = {
    "put": lambda np, a, v: (np.put(a, [0], v), a)[1],
    "put_no_indices": lambda np, a, v: (np.put(a, [], v), a)[1],
    "put_list": lambda np, a, v: (np.put(a, [0, 1], [1, v]), a)[1],
    "method_put": lambda np, a, v: (a.put([0], v), a)[1],
    "place": lambda np, a, v: (np.place(a, a > 0, v), a)[1],
    "putmask": lambda np, a, v: (np.putmask(a, a > 0, v), a)[1],
    "put_along_axis": lambda np, a, v: (np.put_along_axis(a, np.asarray([0]), v, axis=0), a)[1],
    "setitem": lambda np, a, v: _setitem(a, 0, v),
    "setitem_slice": lambda np, a, v: _setitem(a, slice(1, None), v),
    "setitem_list": lambda np, a, v: _setitem(a, slice(None, 2), [1, v]),
    "setitem_fancy": lambda np, a, v: _setitem(a, [0, 1], v),
    "setitem_mask": lambda np, a, v: _setitem(a, numpy.array([True, False, True]), v),
}

# NumPy arrays wrap (an unsafe cast), except in putmask and place (a safe cast, TypeError).
# NB: NumPy scalars are left out: NumPy's int8 `x[i] = numpy.int64(300)` raises but its uint8
# one wraps, a quirk mjnp does not copy (both wrap here).
WRITE_VALUES = [300, -1, 127, 128, -129, 255, 1.5, 300.0, 2**70, numpy.array(300)]


@pytest.mark.parametrize("v", WRITE_VALUES, ids=repr)
@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize("name", sorted(WRITE_CALLS))
def test_write_python_int_out_of_range(name: str, dtype: str, v: Any) -> None:
    call = WRITE_CALLS[name]
    check_like_numpy(
        lambda: call(numpy, numpy.array([0, 1, 2], dtype=dtype), v),
        lambda: call(mjnp, mjnp.array([0, 1, 2], dtype=dtype), v),
    )


def test_put_overflow_message_names_function() -> None:
    a = mjnp.array([0, 1, 2], dtype="uint8")
    with pytest.raises(OverflowError, match=r"mjnp\.put: .*300"):
        mjnp.put(a, [0], 300)
    numpy.testing.assert_array_equal(numpy.asarray(a), [0, 1, 2])  # left unchanged


# --- 5. Python scalars into a dtype by copyto's rules: copyto, full, full_like ------------
# A weak int, float or complex first takes its NEP 50 dtype against the destination's, which
# must hold it (300 into uint8 is an OverflowError, even under casting='unsafe'); that dtype
# then casts under `casting` (1.5 into uint8 is a TypeError under 'same_kind'; full's unsafe
# cast makes 300.0 into uint8 44, as NumPy's C cast does).

SCALAR_VALUES = [300, -1, 255, -129, 2**70, 1.5, 300.0, -1.0, 1e300, 1j, True]
SCALAR_DTYPES = ["uint8", "int8", "uint16", "float16", "bool"]


def _copyto(np: NpOrMj, dtype: str, v: Any, **kwargs: Any) -> Any:
    dst = np.zeros(3, dtype=dtype)
    np.copyto(dst, v, **kwargs)
    return dst


@pytest.mark.parametrize("v", SCALAR_VALUES, ids=repr)
@pytest.mark.parametrize("dtype", SCALAR_DTYPES)
def test_copyto_python_scalar(dtype: str, v: Any) -> None:
    check_like_numpy(lambda: _copyto(numpy, dtype, v), lambda: _copyto(mjnp, dtype, v))


@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe"])
@pytest.mark.parametrize("v", [3, 300, 1.5, 1j, True], ids=repr)
@pytest.mark.parametrize("dtype", ["uint8", "float32", "bool"])
def test_copyto_python_scalar_casting(dtype: str, v: Any, casting: str) -> None:
    check_like_numpy(
        lambda: _copyto(numpy, dtype, v, casting=casting),
        lambda: _copyto(mjnp, dtype, v, casting=casting),
    )


@pytest.mark.parametrize("where", [False, [True, False, True]], ids=repr)
def test_copyto_overflow_even_where_nothing_is_written(where: Any) -> None:
    dst = mjnp.zeros(3, dtype="uint8")
    with pytest.raises(OverflowError, match=r"mjnp\.copyto: .*300.*uint8"):
        mjnp.copyto(dst, 300, where=mjnp.asarray(where))
    with pytest.raises(TypeError, match=r"mjnp\.copyto: .*1\.5.*uint8.*'same_kind'"):
        mjnp.copyto(dst, 1.5, where=mjnp.asarray(where))
    numpy.testing.assert_array_equal(numpy.asarray(dst), [0, 0, 0])


@pytest.mark.parametrize("v", SCALAR_VALUES, ids=repr)
@pytest.mark.parametrize("dtype", SCALAR_DTYPES)
def test_full_python_scalar(dtype: str, v: Any) -> None:
    check_like_numpy(lambda: numpy.full(3, v, dtype=dtype), lambda: mjnp.full(3, v, dtype=dtype))
    like = numpy.zeros((), dtype=dtype)
    check_like_numpy(
        lambda: numpy.full_like(like, v), lambda: mjnp.full_like(mjnp.asarray(like), v)
    )


def test_full_overflow_message_names_function() -> None:
    with pytest.raises(OverflowError, match=r"mjnp\.full: .*300.*uint8"):
        mjnp.full(3, 300, dtype="uint8")


# --- 6. where and clip with Python ints beyond a small integer dtype ----------------------
# NumPy's where makes a Python int an int64 (uint64 from 2**63) array that does not change the
# result dtype, then casts it unsafely: it wraps. NumPy's clip drops a Python int bound beyond
# the dtype's range (it clips nothing), but a bound on the wrong side still raises.

BIG_INTS = [300, -1, -129, 70000, 2**63, 2**64 - 1, 2**64, -(2**63) - 1, 1.5, 1e300]
COND = numpy.array([True, False, True])


@pytest.mark.parametrize("v", BIG_INTS, ids=repr)
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "uint16", "float16", "bool"])
def test_where_python_int_wraps(dtype: str, v: Any) -> None:
    x = numpy.array([1, 0, 3], dtype=dtype)
    for call in (
        lambda np, x: np.where(np.asarray(COND), x, v),
        lambda np, x: np.where(np.asarray(COND), v, x),
        lambda np, x: np.where(np.asarray(COND), v, 1),
    ):
        check_like_numpy(lambda: call(numpy, x), lambda: call(mjnp, mjnp.asarray(x)))  # noqa: B023


@pytest.mark.parametrize("bounds", [(0, 300), (-1, None), (None, 70000), (-129, 2**70),
                                    (300, None), (None, -1), (0, -1), (2**70, None), (0, 300.0),
                                    (-1, 2), (1, 255)], ids=repr)  # fmt: skip
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "uint16", "bool"])
def test_clip_python_int_bounds(dtype: str, bounds: tuple[Any, Any]) -> None:
    x = numpy.array([1, 0, 3], dtype=dtype)
    lo, hi = bounds
    check_like_numpy(lambda: numpy.clip(x, lo, hi), lambda: mjnp.clip(mjnp.asarray(x), lo, hi))


def test_where_and_clip_under_jit() -> None:
    import mjcore

    x = numpy.array([1, 0, 3], dtype="uint8")
    got = mjcore.jit(lambda c, x: mjnp.where(c, x, 300) + mjnp.clip(x, -1, 300))(COND, x)
    numpy.testing.assert_array_equal(
        numpy.asarray(got), numpy.where(COND, x, 300) + numpy.clip(x, -1, 300)
    )


# --- 7. tuple axes on 0-d (and other) arrays ----------------------------------------------
# cumulative_sum/prod take a 1-tuple axis (NumPy's ufunc.accumulate does) and raise ValueError
# for several; nanargmax/nanargmin of a float array check a tuple axis through all() first
# (AxisError, duplicate ValueError) and only then reject it; unwrap of a 0-d array is a
# ValueError whatever the axis. (NumPy's cumulative_sum with include_initial=True and a tuple axis
# fails on a 2-d array with an internal TypeError, a NumPy bug mjnp does not copy.)

TUPLE_AXIS_CALLS: dict[str, Callable[[NpOrMj, Any, Any], Any]] = {
    name: (lambda np, x, axis, name=name: getattr(np, name)(x, axis=axis))
    for name in ["cumulative_sum", "cumulative_prod", "nanargmax", "nanargmin", "unwrap"]
}


@pytest.mark.parametrize("axis", [(0,), (-1,), (1,), (), (0, 0), 0, 1], ids=repr)
@pytest.mark.parametrize("shape", [(), (2, 3)], ids=repr)
@pytest.mark.parametrize("dtype", ["float64", "int8"])
@pytest.mark.parametrize("name", sorted(TUPLE_AXIS_CALLS))
def test_tuple_axis(name: str, dtype: str, shape: tuple[int, ...], axis: Any) -> None:
    call = TUPLE_AXIS_CALLS[name]
    x = numpy.arange(numpy.prod(shape, dtype=int)).reshape(shape).astype(dtype)
    check_like_numpy(lambda: call(numpy, x, axis), lambda: call(mjnp, mjnp.asarray(x), axis))


def test_cumulative_sum_multiple_axes_message() -> None:
    with pytest.raises(ValueError, match=r"mjnp\.cumulative_sum: accumulate does not allow"):
        mjnp.cumulative_sum(mjnp.ones((2, 3)), axis=(0, 1))


# --- 8. Array.fill ------------------------------------------------------------------------
# NumPy's fill converts a scalar as numpy.asarray(value, dtype) does (so 300 and 300.0 into
# uint8 raise OverflowError, 1.5 into int8 is 1, 1j into a real dtype is a TypeError) and
# casts a 0-d array unsafely. NB: as for setitem, NumPy scalars out of range are left out
# (NumPy's int8 fill(numpy.int64(300)) raises but its uint8 one wraps; both wrap here).

FILL_VALUES = [300, -1, 127, 1.5, 300.0, 1e300, 1j, 2**70, True, float("nan"),
               numpy.float64(2.5), numpy.array(1.5), numpy.array(2.5, numpy.float32)]  # fmt: skip


def _fill(np: NpOrMj, shape: tuple[int, ...], dtype: str, v: Any) -> Any:
    a = np.zeros(shape, dtype=dtype)
    a.fill(v)
    return a


@pytest.mark.parametrize("v", FILL_VALUES, ids=repr)
@pytest.mark.parametrize("dtype", ["uint8", "int8", "float16", "complex64", "int64"])
def test_fill(dtype: str, v: Any) -> None:
    check_like_numpy(lambda: _fill(numpy, (2,), dtype, v), lambda: _fill(mjnp, (2,), dtype, v))


@pytest.mark.parametrize("shape", [(), (2, 3), (0,)], ids=repr)
def test_fill_shapes(shape: tuple[int, ...]) -> None:
    check_like_numpy(
        lambda: _fill(numpy, shape, "float32", 7), lambda: _fill(mjnp, shape, "float32", 7)
    )


def test_fill_messages_and_no_change_on_error() -> None:
    a = mjnp.array([1, 2], dtype="uint8")
    with pytest.raises(OverflowError, match=r"mjnp\.fill: .*300.*uint8"):
        a.fill(300)
    with pytest.raises(ValueError, match=r"mjnp\.fill: value must be a scalar"):
        a.fill(mjnp.array([1]))
    numpy.testing.assert_array_equal(numpy.asarray(a), [1, 2])


def test_fill_under_transformations() -> None:
    import mjcore

    def f(x: Any, v: Any) -> Any:
        x.fill(v)
        return x

    x = numpy.arange(3.0)
    numpy.testing.assert_array_equal(numpy.asarray(mjcore.jit(f)(x, 2.5)), [2.5, 2.5, 2.5])
    got = mjcore.vmap(f)(numpy.ones((2, 3)), numpy.array([4.0, 5.0]))
    numpy.testing.assert_array_equal(numpy.asarray(got), [[4.0] * 3, [5.0] * 3])
    assert float(mjcore.grad(lambda v: f(v * mjnp.ones(3), 2 * v).sum())(1.0)) == 6.0

    def filled_constant(v: Any) -> Any:  # as setitem: fine under jit, an error under vmap
        z = mjnp.zeros(3)
        z.fill(v)
        return z

    numpy.testing.assert_array_equal(numpy.asarray(mjcore.jit(filled_constant)(1.0)), [1.0] * 3)
    with pytest.raises(TypeError, match="x.at"):
        mjcore.vmap(filled_constant)(numpy.ones(2))


# --- 9. choose with Python ints among the choices: weak, and they wrap as in where ---------


@pytest.mark.parametrize("v", [300, -1, 2**63, 1.5, 7], ids=repr)
@pytest.mark.parametrize("dtype", ["uint8", "int8", "bool"])
def test_choose_python_scalar_choice(dtype: str, v: Any) -> None:
    x = numpy.array([1, 0, 1], dtype=dtype)
    which = numpy.array([0, 1, 0])
    check_like_numpy(
        lambda: numpy.choose(which, [x, v]),
        lambda: mjnp.choose(mjnp.asarray(which), [mjnp.asarray(x), v]),
    )
