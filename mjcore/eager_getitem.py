"""`x[idx]` of a differentiated value on eager grad's tape, without the indexing front.

Eager `grad` (`mjcore.eager_vjp`) runs the user's Python on `VJPTracer`s. Indexing one with a
basic index (`t[2]`, `t[:, 1]`, `t[None, :, :]`) went through mjnp's general path: index
classification, a `slice` and a `squeeze` bound through the interpreter stack, each evaluated
and recorded by `process_primitive`, and the view link (~20 µs, where autograd takes ~4 µs).
`x[rows, cols]` with known index arrays on every axis (the fluid's `f[top, left]`) went through
`_point_getitem`'s checks, a device transfer of the stacked indices and a bound `gather`
(~60 µs).

Here, when the tracer belongs to the tape at the top of the stack and its primal is an Array
on the CPU:

- a basic index (Python ints, slices of ints, None, Ellipsis) takes NumPy's view of the host
  value as the primal, and records the linear equations the general path records (its
  traced body at this aval and index, cached: `slice`, `rev`, `squeeze`, `expand_dims`, ...),
  so the tape and the gradients are the general path's;
- one integer index array per axis, all of one shape and in bounds, takes NumPy's advanced
  indexing (the same elements as the `gather` host rule's `take`) and records the `gather`
  entry `_point_getitem` records, with the same indices and parameters.

Anything else (tracers of other transformations, index arrays among slices, out-of-bounds or
invalid indices, another platform) returns None, and the general path runs (and raises the
library's errors). See docs/eager.md, "Eager grad".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mjcore import core, dispatch
from mjcore.ad import LINEAR
from mjcore.array import Array, wrap_host
from mjcore.backend import client as backend
from mjcore.core import ShapedArray
from mjcore.eager_vjp import LinVar, VJPTracer
from mjcore.lax.gather import GatherDimensionNumbers, gather_p
from mjcore.partial_eval import trace_to_jaxpr

_state = core._state
_host_platform = dispatch._host_platform
_SLICE = object()  # marks a slice in an index key (slices are unhashable before Python 3.12)
_SLICE_BOUNDS = frozenset({int, type(None)})
_SCALAR_ENTRIES = frozenset({int, type(None), type(Ellipsis)})
_INT64 = np.dtype(np.int64)
_UINT64 = np.dtype(np.uint64)

# (aval, index key) -> the general path's equations at that aval and index, each
# (primitive, params, output aval), or None where the fast path does not apply; bounded
_PLANS: dict[Any, Any] = {}
_PLANS_SIZE = 4096
# number of axes -> the point gather's parameters (`_point_getitem`'s)
_GATHER_PARAMS: dict[int, dict[str, Any]] = {}


def _slice_key(e: slice) -> tuple[Any, ...] | None:
    """A slice's part of the cache key, or None for bounds that are not None or ints."""
    if (
        type(e.start) in _SLICE_BOUNDS
        and type(e.stop) in _SLICE_BOUNDS
        and type(e.step) in _SLICE_BOUNDS
    ):
        return (_SLICE, e.start, e.stop, e.step)
    return None


def getitem_on_tape(
    x: Any, idx: Any, general: Callable[[Any, Any], Any]
) -> tuple[Any, bool] | None:
    """`(x[idx], whether it is a view)` for a `VJPTracer` `x` on the tape at the top of the
    stack, or None where the general path must run. `general(x, idx)` is that path: traced
    once per (aval, index) to find the equations a basic index records."""
    if type(x) is not VJPTracer:
        return None
    var = x.var
    primal = x.primal
    platform = _host_platform
    if (
        var is None
        or type(primal) is not Array
        or _state.dynamic_trace is not None
        or _state.trace_stack[-1] is not x._trace.main
        or not platform
        or not platform[0]
        or backend.several_devices_in_use
        or _state.debug_nans
    ):
        return None
    t = type(idx)
    if t is tuple:
        key_entries = []
        arrays = 0
        for e in idx:
            te = type(e)
            if te is slice:
                entry = _slice_key(e)
                if entry is None:
                    return None
                key_entries.append(entry)
            elif te in _SCALAR_ENTRIES:
                key_entries.append(e)
            elif te is Array or te is np.ndarray:
                arrays += 1
            else:
                return None
        if arrays:
            if arrays != len(idx):
                return None
            out = _point(x, idx)
            return None if out is None else (out, False)
        key: Any = tuple(key_entries)
    elif t is slice:
        key = _slice_key(idx)
        if key is None:
            return None
    elif t in _SCALAR_ENTRIES:
        key = (t, idx)  # (`t[1]` apart from `t[1,]`, whose key is the tuple (1,))
    else:
        return None
    return _basic(x, idx, primal, var, key, general)


def _basic(
    x: VJPTracer, idx: Any, primal: Array, var: LinVar, key: Any, general: Callable
) -> tuple[Any, bool] | None:
    aval = primal.aval
    plan_key = (aval, key)
    plan = _PLANS.get(plan_key, _PLANS)
    if plan is _PLANS:
        plan = _plan(aval, idx, general)
        if len(_PLANS) >= _PLANS_SIZE:
            _PLANS.clear()
        _PLANS[plan_key] = plan
    if plan is None:
        return None
    eqns, out_aval = plan
    if not eqns:  # the whole array (`t[:]`, `t[...]`): the general path gives `t` itself
        return x, False
    value = primal._npy
    if value is None:
        value = primal._value()
    try:
        out = value[idx]
    except (IndexError, ValueError, TypeError):  # (the trace accepted it: not expected)
        return None
    if type(out) is not np.ndarray:  # a full integer index gives a NumPy scalar
        out = np.asarray(out)
    if out.shape != out_aval.shape:
        return None
    tape = x._trace.main.global_data
    for prim, params, v_aval in eqns:
        new = LinVar(v_aval)
        tape.append((prim, [var], params, [new]))
        var = new
    result = VJPTracer(x._trace, wrap_host(out, out_aval), var)
    # one element (every axis an int, no Ellipsis) is a scalar, not a view, as in NumPy
    view = bool(out_aval.shape) or (
        idx is Ellipsis or (type(idx) is tuple and any(e is Ellipsis for e in idx))
    )
    return result, view


def _plan(aval: ShapedArray, idx: Any, general: Callable) -> Any:
    """The equations `general(x, idx)` binds for an `x` of `aval` (one chain of linear
    primitives with direct rules) and the result's aval; None for anything else."""
    try:
        closed = trace_to_jaxpr(lambda v: [general(v, idx)], [aval], "getitem on the tape")
    except Exception:  # noqa: BLE001  # an index the general path rejects: it raises there
        return None
    jaxpr = closed.jaxpr
    if closed.consts or len(jaxpr.invars) != 1 or len(jaxpr.outs) != 1:
        return None
    prev = jaxpr.invars[0]
    eqns = []
    for eqn in jaxpr.eqns:
        prim = eqn.primitive
        if (
            prim.eager_vjp_rule is not LINEAR
            or len(eqn.inputs) != 1
            or eqn.inputs[0] is not prev
            or len(eqn.out_binders) != 1
        ):
            return None
        (prev,) = eqn.out_binders
        v_aval = prev.aval
        eqns.append(
            (prim, eqn.params, v_aval.update(weak_type=False) if v_aval.weak_type else v_aval)
        )
    if jaxpr.outs[0] is not prev:
        return None
    return eqns, jaxpr.outs[0].aval


def _point(x: VJPTracer, entries: tuple[Any, ...]) -> Any:
    """`x[i0, i1, ...]` with one known integer index array per axis, all of one shape and in
    bounds: the gather entry `mjnp._indexing._point_getitem` records; None otherwise."""
    primal: Array = x.primal
    aval = primal.aval
    shape = aval.shape
    nd = len(shape)
    if len(entries) != nd or not shape or 0 in shape:
        return None
    values = []
    batch = None
    for e in entries:
        if type(e) is Array:
            v = e._npy
            e = e._value() if v is None else v
        dt = e.dtype
        if dt.kind not in "iu" or dt == _UINT64 or e.size == 0:
            return None
        if batch is None:
            batch = e.shape
        elif e.shape != batch:
            return None
        values.append(e)
    # the indices as `_point_getitem` makes them: int64, negatives wrapped once, stacked on a
    # last axis (filled in place: `numpy.stack` costs ~3 µs of Python here)
    indices = np.empty((*batch, nd), _INT64)  # type: ignore[misc]
    columns = []
    for k, e in enumerate(values):
        column = indices[..., k]
        column[...] = e
        columns.append(column)
    try:  # every axis's bounds checked at once: an index past either end raises
        flat = np.ravel_multi_index(columns, shape)
    except ValueError:  # negative indices (or out of bounds)
        np.add(indices, shape, out=indices, where=indices < 0)
        try:
            flat = np.ravel_multi_index(columns, shape)
        except ValueError:
            return None  # out of bounds: the general path raises IndexError
    value = primal._npy
    if value is None:
        value = primal._value()
    out = value.take(flat)  # the gather's elements, as its host rule takes them
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    params = _GATHER_PARAMS.get(nd)
    if params is None:
        axes = tuple(range(nd))
        params = _GATHER_PARAMS[nd] = {
            "dimension_numbers": GatherDimensionNumbers((), axes, axes),
            "slice_sizes": (1,) * nd,
        }
    rule = gather_p.eager_vjp_rule
    if rule is None:  # (direct rules switched off: the general path's jvp route)
        return None
    out_aval = _aval_of(out.shape, aval.dtype, aval.weak_type)
    index_array = wrap_host(indices, _aval_of(indices.shape, _INT64, False))
    trace: Any = x._trace  # a VJPTrace (x is a VJPTracer)
    return trace._record(
        gather_p, rule, [x.var, None], [primal, index_array], wrap_host(out, out_aval), params
    )


_AVALS: dict[Any, ShapedArray] = {}  # (shape, dtype, weak type) -> its aval; bounded


def _aval_of(shape: tuple[int, ...], dtype: np.dtype, weak: bool) -> ShapedArray:
    key = (shape, dtype, weak)
    aval = _AVALS.get(key)
    if aval is None:
        if len(_AVALS) >= _PLANS_SIZE:
            _AVALS.clear()
        aval = _AVALS[key] = ShapedArray(shape, dtype, weak)
    return aval
