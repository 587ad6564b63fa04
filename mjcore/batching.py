"""Autodidax Part 1 (vectorized batching with `vmap`): BatchTrace and its tracers."""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from mjcore import core

# The `name as name` imports are re-exports: rules import them from `batching` too.
from mjcore.ad_util import NOT_MAPPED as NOT_MAPPED
from mjcore.core import Primitive, ShapedArray, Trace, Tracer, get_aval
from mjcore.errors import MissingRuleError
from mjcore.jaxpr import ClosedJaxpr, eval_closed_jaxpr
from mjcore.lax.base import broadcast_batch as broadcast_batch
from mjcore.lax.base import move_bdim as move_bdim
from mjcore.partial_eval import trace_to_jaxpr


class BatchTracer(Tracer):
    """A batched value: `val` has an extra axis `batch_dim` of size `axis_size`."""

    __slots__ = ("val", "batch_dim")

    def __init__(self, trace: Trace, val: Any, batch_dim: int | None):
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim

    @property
    def aval(self) -> ShapedArray:
        aval = get_aval(self.val)
        if self.batch_dim is NOT_MAPPED:
            return aval
        shape = aval.shape[: self.batch_dim] + aval.shape[self.batch_dim + 1 :]
        return ShapedArray(shape, aval.dtype, aval.weak_type)

    def full_lower(self) -> Any:
        if self.batch_dim is NOT_MAPPED:
            return core.full_lower(self.val)
        return self


class BatchTrace(Trace):
    __slots__ = ()

    def pure(self, val: Any) -> BatchTracer:
        return BatchTracer(self, val, NOT_MAPPED)

    lift = pure

    @property
    def axis_size(self) -> int:
        return self.main.global_data

    def process_primitive(
        self, primitive: Primitive, tracers: list[BatchTracer], params: dict[str, Any]
    ) -> list[BatchTracer]:
        vals_in = [t.val for t in tracers]
        dims_in = [t.batch_dim for t in tracers]
        if all(d is NOT_MAPPED for d in dims_in):
            outs = primitive.bind(*vals_in, **params)
            outs = outs if primitive.multiple_results else [outs]
            return [BatchTracer(self, x, NOT_MAPPED) for x in outs]
        rule = primitive.batching_rule
        if rule is None:
            raise MissingRuleError(primitive.name, "batching", "vmap")
        if getattr(rule, "needs_axis_size", False):
            params = dict(params, axis_size=self.axis_size)
        vals_out, dims_out = rule(vals_in, dims_in, **params)
        if not primitive.multiple_results:
            vals_out, dims_out = [vals_out], [dims_out]
        return [BatchTracer(self, x, d) for x, d in zip(vals_out, dims_out, strict=True)]


def moveaxis_to(x: Any, src: int | None, dst: int, axis_size: int) -> Any:
    """`x` with its batch axis at `dst`, broadcasting it first if it is not batched."""
    if src is NOT_MAPPED:
        return broadcast_batch(x, axis_size, dst)
    return move_bdim(x, src, dst)


def batch_jaxpr_like(
    fun: Callable[..., list[Any]],
    vals_in: Sequence[Any],
    dims_in: Sequence[int | None],
    axis_size: int,
    out_dims: Sequence[int | None] | None = None,
) -> tuple[list[Any], list[int | None]]:
    """Run `fun` under a new batch trace on batched inputs (used by vmap and batching rules)."""
    with core.new_main(BatchTrace, axis_size, "vmap") as main:
        trace = BatchTrace(main)
        tracers = [
            BatchTracer(trace, v, d) if d is not NOT_MAPPED else v
            for v, d in zip(vals_in, dims_in, strict=True)
        ]
        outs = fun(*tracers)
        outs = [core.full_raise(trace, o) for o in outs]
        vals_out = [o.val for o in outs]
        bdims = [o.batch_dim for o in outs]
    if out_dims is None:
        return vals_out, bdims
    return [
        moveaxis_to(v, d, od, axis_size) if od is not NOT_MAPPED else v
        for v, d, od in zip(vals_out, bdims, out_dims, strict=True)
    ], list(out_dims)


# --- jaxpr-level batching (for pjit and the control-flow primitives) ---------------------

_batch_cache: weakref.WeakKeyDictionary[ClosedJaxpr, dict[Any, Any]] = weakref.WeakKeyDictionary()


def batch_jaxpr(closed: ClosedJaxpr, axis_size: int, dims: tuple[int | None, ...]) -> ClosedJaxpr:
    """A jaxpr over batched inputs (batch axes `dims`) with every output batched on axis 0."""
    cache = _batch_cache.setdefault(closed, {})
    key = (axis_size, dims)
    hit = cache.get(key)
    if hit is not None:
        return hit
    in_avals = []
    for a, d in zip(closed.in_avals, dims, strict=True):
        if d is NOT_MAPPED:
            in_avals.append(a)
        else:
            shape = list(a.shape)
            shape.insert(d, axis_size)
            in_avals.append(a.update(shape=shape))

    def fun(*args: Any) -> list[Any]:
        outs, _ = batch_jaxpr_like(
            functools.partial(eval_closed_jaxpr, closed),
            args,
            dims,
            axis_size,
            [0] * len(closed.out_avals),
        )
        return outs

    result = trace_to_jaxpr(fun, in_avals, "vmap")
    cache[key] = result
    return result
