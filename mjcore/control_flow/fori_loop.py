"""Autodidax Part 5, continued: `fori_loop`, a counted loop built on `scan` (static bounds, so
reverse mode works) or on `while_loop` (traced bounds)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mjcore import core, dtypes
from mjcore.control_flow.scan import scan
from mjcore.control_flow.while_loop import while_loop
from mjcore.core import Tracer, get_aval
from mjcore.lax import arithmetic
from mjcore.lax.base import convert_element_type
from mjcore.lax.comparison import lt


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any) -> Any:
    """Apply `body_fun(i, val)` for `i` from `lower` up to `upper`, staged as one loop.

    Meaning::

        def fori_loop(lower, upper, body_fun, init_val):
            val = init_val
            for i in range(lower, upper):
                val = body_fun(i, val)
            return val

    With bounds known while tracing (Python ints, or concrete arrays) the loop is a `scan` of
    `max(upper - lower, 0)` steps, and every transformation works including reverse mode.
    With traced bounds it is a `while_loop`, which reverse mode does not support. The carry
    must keep its structure, shapes and dtypes (see `while_loop`).

    Raises:
      TypeError: if a bound is not an integer scalar, the traced bounds' dtypes differ, or the
        body changes the carry type.
    """
    if not callable(body_fun):
        raise TypeError(f"fori_loop: body_fun must be callable, got {type(body_fun).__name__}")
    lo, hi = _static_bound(lower), _static_bound(upper)
    _common_index_dtype(lower, upper)  # as JAX: int32 and int64 bounds raise, known or not
    if lo is not None and hi is not None:
        if hi <= lo and core._state.jit_disabled:  # a Python scan cannot be empty
            return init_val

        def scan_body(carry: Any, _: Any) -> tuple[Any, None]:
            i, val = carry
            return (arithmetic.add(i, 1), body_fun(i, val)), None

        (_, result), _ = scan(scan_body, (lo, init_val), None, length=max(hi - lo, 0))
        return result
    lower, upper = _common_index_dtype(lower, upper)

    def cond_fun(carry: Any) -> Any:
        i, stop, _ = carry
        return lt(i, stop)

    def while_body(carry: Any) -> Any:
        i, stop, val = carry
        return arithmetic.add(i, 1), stop, body_fun(i, val)

    _, _, result = while_loop(cond_fun, while_body, (lower, upper, init_val))
    return result


def _static_bound(x: Any) -> int | None:
    """The bound as a Python int if it is known while tracing, else None."""
    value = x.to_concrete_value() if isinstance(x, Tracer) else x
    if value is None:
        _check_index_aval(get_aval(x))
        return None
    arr = np.asarray(value)
    _check_index_aval(get_aval(arr))
    return int(arr)


def _check_index_aval(aval: Any) -> None:
    if aval.ndim != 0 or not dtypes.is_integer(aval.dtype):
        raise TypeError(
            f"fori_loop: lower and upper must be integer scalars, got {aval.str_short()}"
        )


def _common_index_dtype(lower: Any, upper: Any) -> tuple[Any, Any]:
    # As in JAX: equal dtypes, except that a weak (Python) int takes the other bound's dtype.
    lo, hi = get_aval(lower), get_aval(upper)
    if lo.dtype == hi.dtype:
        return lower, upper
    if lo.weak_type and not hi.weak_type:
        return convert_element_type(lower, hi.dtype), upper
    if hi.weak_type and not lo.weak_type:
        return lower, convert_element_type(upper, lo.dtype)
    raise TypeError(
        "fori_loop: lower and upper must have equal dtypes, got "
        f"{lo.dtype.name} and {hi.dtype.name}"
    )
