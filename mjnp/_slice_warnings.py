"""NumPy's Python-level RuntimeWarnings of reductions over empty or all-NaN slices: "Mean of
empty slice", "Degrees of freedom <= 0 for slice" and "All-NaN slice encountered", given
where NumPy's `_core/_methods.py` and `lib/_nanfunctions_impl.py` give them (docs/errors.md,
"Reductions over empty or all-NaN slices").

- A warning that the shapes decide (a reduction over no elements; `ddof` at least the number
  of elements per slice) is given whenever the function's Python runs: on every eager call,
  and once per trace under `jit` (the trace is where the shapes are known).
- A warning that values decide (NaNs, a `where=` mask) is given for concrete arrays on the
  CPU, where the host value is at hand; under a transformation the values are unknown (JAX
  gives no such warnings), and on an accelerator the check would fetch the result.

These are `warnings.warn` calls, so `numpy.errstate` does not govern them, as in NumPy; the
floating-point warnings of the divisions beside them are the error state's (`mjcore.fp_errors`).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from mjcore import dispatch, dtypes
from mjcore.array import Array
from mjcore.fp_errors import FP_QUIET, fp_state, warn_at_user_line

EMPTY_MEAN = "Mean of empty slice"
DOF = "Degrees of freedom <= 0 for slice"  # mean/var/std; nanvar/nanstd add a full stop
ALL_NAN = "All-NaN slice encountered"


def warn(message: str, times: int = 1) -> None:
    """Warn `message` (a RuntimeWarning) `times` times, at the user's line."""
    for _ in range(times):
        warn_at_user_line(message, RuntimeWarning)


class Quiet:
    """`with Quiet():` runs eager ops with every floating-point error ignored, as NumPy's
    nan-functions divide by their counts (`_divide_by_count`: NaN is the documented result)."""

    __slots__ = ("token",)

    def __enter__(self) -> None:
        self.token = fp_state.set(FP_QUIET)

    def __exit__(self, *exc: Any) -> None:
        fp_state.reset(self.token)


def host_value(x: Any) -> np.ndarray | None:
    """The host value of an eager Array on the CPU, else None (a tracer, an accelerator)."""
    if type(x) is Array and dispatch.on_cpu():
        return dispatch.array_value(x)
    return None


def shape_of(a: Any) -> tuple[int, ...] | None:
    """The shape of an array-like argument (Arrays and tracers by their aval), or None if
    NumPy cannot read one (the function then raises its own error)."""
    shape = getattr(a, "shape", None)
    if type(shape) is tuple:
        return shape
    try:
        return np.shape(a)
    except Exception:  # ragged lists and the like: the function raises NumPy's error
        return None


def _axes(shape: tuple[int, ...], axis: Any) -> tuple[int, ...] | None:
    """The reduced axes (None for an axis the function will reject with its own error)."""
    if axis is None:
        return tuple(range(len(shape)))
    try:
        return tuple(normalize_axis_tuple(axis, len(shape)))
    except Exception:
        return None


def _mask_counts(where: Any, shape: tuple[int, ...], axes: tuple[int, ...]) -> Any:
    """NumPy's per-slice counts under a concrete `where=` mask, or None (traced, invalid)."""
    if type(where) is Array:
        mask = host_value(where)
    elif isinstance(where, np.ndarray | bool | list | tuple):
        mask = np.asarray(where)
    else:  # a tracer: its values are not known here
        return None
    if mask is None or mask.dtype != np.bool_:
        return None
    try:
        return np.sum(np.broadcast_to(mask, shape), axis=axes, dtype=np.intp)
    except ValueError:
        return None


def _check_mean(
    a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: Any = False, **kw: Any
) -> bool:
    """NumPy's `_mean`: "Mean of empty slice" when some slice has no elements."""
    where = kw.get("where", True)
    shape = shape_of(a)
    if shape is None or (where is True and 0 not in shape):
        return False  # the common case: no empty slice is possible
    axes = _axes(shape, axis)
    if axes is None:
        return False
    if where is True:
        return math.prod(shape[ax] for ax in axes) == 0
    counts = _mask_counts(where, shape, axes)
    return counts is not None and bool(np.any(counts == 0))


def _check_var(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    ddof: Any = 0,
    keepdims: Any = False,
    **kw: Any,
) -> bool:
    """NumPy's `_var`: "Degrees of freedom <= 0 for slice" when `ddof` >= some slice's
    element count."""
    correction = kw.get("correction", np._NoValue)
    if correction is not np._NoValue:
        if ddof != 0:
            return False  # the function raises NumPy's ValueError first
        ddof = correction
    if not isinstance(ddof, int | float | np.integer | np.floating):
        return False  # an array ddof (a tracer under jit): not decided here
    where = kw.get("where", True)
    shape = shape_of(a)
    if shape is None or (where is True and ddof <= 0 and 0 not in shape):
        return False  # the common case: every slice has an element and ddof <= 0
    axes = _axes(shape, axis)
    if axes is None:
        return False
    if where is True:
        return bool(ddof >= math.prod(shape[ax] for ax in axes))
    counts = _mask_counts(where, shape, axes)
    return bool(counts is not None and np.any(ddof >= counts))


def checked(
    check: Callable[..., bool],
    numpy_fun: Callable[..., Any],
    message: str,
    n_safe: int,
    unsafe: frozenset[str],
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give NumPy's warnings of `numpy_fun` where `check` of the arguments says NumPy warns.

    For fused functions (their bodies run once per signature): the arguments are passed on
    exactly as given, so the call fuses as before, and the wrapper carries the fused
    function's attributes. In the rare case that warns, NumPy's function is run on the host
    values (empty or tiny slices) and its warnings, in its order and with its texts ("invalid
    value encountered in scalar divide"), are re-issued at the user's line; the call itself
    then runs with its floating-point errors ignored. Without host values (under `jit`) the
    one Python-level warning `message` is given. A non-empty Array with at most `n_safe`
    positional arguments and none of the keywords `unsafe` cannot warn: it is not checked.
    """

    def wrap(fun: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fun)
        def call(*args: Any, **kwargs: Any) -> Any:
            # the common calls (`mean(x, axis=0)` of a non-empty Array) cannot warn
            if (
                args
                and type(args[0]) is Array
                and len(args) <= n_safe
                and 0 not in args[0].aval.shape
                and (not kwargs or unsafe.isdisjoint(kwargs))
            ):
                return fun(*args, **kwargs)
            if check(*args, **kwargs):
                if _numpy_warnings(numpy_fun, args, kwargs):
                    with Quiet():
                        return fun(*args, **kwargs)
                warn(message)
            return fun(*args, **kwargs)

        return call

    return wrap


def _host_arg(x: Any) -> Any:
    if type(x) is Array:
        return dispatch.array_value(x)
    if hasattr(x, "aval"):  # a tracer
        raise _NoHostValue
    return x


class _NoHostValue(Exception):
    pass


def _numpy_warnings(numpy_fun: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> bool:
    """Run `numpy_fun` on the arguments' host values for its warnings alone, re-issued at the
    user's line (a FloatingPointError of the user's error state propagates, after the warnings
    NumPy gave before it); False when there are no host values or NumPy cannot run it."""
    try:
        values = [_host_arg(a) for a in args]
        kw = {k: None if k == "out" else _host_arg(v) for k, v in kwargs.items()}
    except _NoHostValue:
        return False
    error: FloatingPointError | None = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            numpy_fun(*values, **kw)
        except FloatingPointError as e:
            error = e
        except Exception:  # a dtype or an argument NumPy lacks: warn as NumPy's code says
            return False
    for w in caught:  # outside the recording block
        warn_at_user_line(str(w.message), w.category)
    if error is not None:
        raise error
    return True


# mean(a, axis, dtype, out, keepdims, *, where); var(a, axis, dtype, out, ddof, ...)
check_mean = checked(_check_mean, np.mean, EMPTY_MEAN, 5, frozenset({"where"}))
_VAR_UNSAFE = frozenset({"ddof", "where", "correction"})
check_var = checked(_check_var, np.var, DOF, 4, _VAR_UNSAFE)
check_std = checked(_check_var, np.std, DOF, 4, _VAR_UNSAFE)


def count_zeros(count: Any) -> int:
    """How many entries of a concrete per-slice count array are zero (0 for a tracer or an
    accelerator's array, whose values are not looked at)."""
    value = host_value(count)
    if value is None:
        return 0
    return int(np.count_nonzero(value == 0))


def count_true(flags: Any) -> int:
    """How many entries of a concrete bool array are true (0 for a tracer, an accelerator)."""
    value = host_value(flags)
    return 0 if value is None else int(np.count_nonzero(value))


def any_nonpositive(count: Any) -> bool:
    """Whether a concrete per-slice degrees-of-freedom array has an entry <= 0."""
    value = host_value(count)
    return value is not None and bool((value <= 0).any())


def any_nan(result: Any) -> bool:
    """Whether a concrete inexact result holds a NaN (NumPy's test after `fmin.reduce`)."""
    value = host_value(result)
    return value is not None and dtypes.kind(value.dtype) in "fc" and bool(np.isnan(value).any())
