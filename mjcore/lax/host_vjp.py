"""Eager reverse mode on the host: transpose and vjp rules that compute their cotangents by
NumPy calls on host values (autograd's cost model) instead of binding primitives, each bind
being ~2-4 µs of dispatch for a NumPy call of ~0.5 µs. (Autodidax Part 1's NumPy impl rules,
called by the rules themselves.)

A rule's host path makes exactly the NumPy calls that the primitives it would bind make on the
host (their `host_rule`s, in the same order), so its cotangents are the same to the bit, and
it applies exactly where eager dispatch would run those host rules: nothing traced
(`dispatch.is_eager_host`), the cotangent an `Array` with a host value, the other operands
Arrays or NumPy constants (read as dispatch reads them), and sizes within
`dispatch.host_limit`. Anything else (tracers of an outer transformation, `jax_debug_nans`,
arrays on an accelerator or on one of several devices, large arrays) returns None here, and
the rule binds its primitives as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mjcore.array import Array, wrap_host
from mjcore.core import Primitive, ShapedArray, Tracer
from mjcore.dispatch import _apply_host, host_limit, is_eager_host
from mjcore.dispatch import host_value as host_value_of


def host_value(x: Any) -> np.ndarray | None:
    """The host value of `x` when a rule may compute on it by NumPy calls (an `Array`, nothing
    traced, the CPU platform), else None."""
    if type(x) is Array and is_eager_host():
        value = x._npy
        return x._value() if value is None else value
    return None


def operand_value(x: Any) -> np.ndarray | None:
    """The host value of one more operand of a rule whose cotangent `host_value` took (the
    state is checked once): an `Array`'s, or a NumPy array's or Python float's (a weak
    operand of a fused body's replay) as dispatch reads it; else None."""
    if type(x) is Array:
        value = x._npy
        return x._value() if value is None else value
    if type(x) is np.ndarray or type(x) is float or isinstance(x, np.generic):
        return host_value_of(x)[0]
    return None


def cotangent_and_operands(ct: Any, *operands: Any) -> list[np.ndarray] | None:
    """[ct's host value, each operand's] (`host_value`, `operand_value`) when all are there and
    share the cotangent's dtype (the dtypes the rule's primitives would see), else None."""
    ct_value = host_value(ct)
    if ct_value is None:
        return None
    values = [ct_value]
    for x in operands:
        value = operand_value(x)
        if value is None or value.dtype != ct_value.dtype:
            return None
        values.append(value)
    return values


def within(prim: Primitive, dtype: np.dtype, size: int) -> bool:
    """Whether eager dispatch runs `prim`'s host rule on a call whose largest operand or
    result has `size` elements and whose first operand has `dtype`."""
    key = (prim, dtype)
    limit = _limits.get(key)
    if limit is None:
        if len(_limits) >= _LIMITS_SIZE:
            _limits.clear()
        limit = _limits[key] = host_limit(prim, dtype)
    return size <= limit


# (primitive, dtype) -> `dispatch.host_limit`; bounded (a few primitives and dtypes are used)
_limits: dict[tuple[Primitive, np.dtype], float] = {}
_LIMITS_SIZE = 256


def rule(prim: Primitive) -> Callable[..., np.ndarray]:
    """`prim`'s host rule (for a primitive known to have one)."""
    host_rule = prim.host_rule
    assert host_rule is not None, prim.name
    return host_rule


def apply(prim: Primitive, *args: Any, **params: Any) -> Array | None:
    """`prim.bind(*args, **params)` where eager dispatch would run its host rule: that rule
    on the operands' host values (`dispatch._apply_host`, as the bind would), without the
    bind; None anywhere else."""
    if not is_eager_host():
        return None
    for x in args:
        if isinstance(x, Tracer):  # (a tracer outside its transformation: the bind reports it)
            return None
    out = _apply_host(prim, args, params)
    return None if out is None else out[0]


def bind1(prim: Primitive, *args: Any, **params: Any) -> Any:
    """`prim.bind1(*args, **params)`, by `apply` where that answers (the same result)."""
    out = apply(prim, *args, **params)
    return prim.bind1(*args, **params) if out is None else out


def wrap(value: np.ndarray, shape: tuple[int, ...], like: ShapedArray) -> Array:
    """An Array of `value`, a host result of `shape` with `like`'s dtype and weak type."""
    return wrap_host(value, ShapedArray(shape, like.dtype, like.weak_type))
