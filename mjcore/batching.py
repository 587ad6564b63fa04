"""Autodidax Part 1 (vectorized batching with `vmap`): BatchTrace and its tracers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mjcore import core
from mjcore.core import Primitive, ShapedArray, Trace, Tracer, get_aval
from mjcore.errors import MissingRuleError

NOT_MAPPED = None  # the batch dimension of a value that is not batched


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


def move_bdim(x: Any, src: int | None, dst: int) -> Any:
    """Move batch axis `src` of `x` to position `dst`."""
    from mjcore.lax import base

    if src == dst:
        return x
    ndim = get_aval(x).ndim
    perm = [i for i in range(ndim) if i != src]
    perm.insert(dst, src)
    return base.transpose(x, tuple(perm))


def broadcast_batch(x: Any, axis_size: int, dst: int) -> Any:
    """Materialise an unbatched value along a new batch axis `dst`."""
    from mjcore.lax import base

    aval = get_aval(x)
    shape = list(aval.shape)
    shape.insert(dst, axis_size)
    dims = tuple(i for i in range(len(shape)) if i != dst)
    return base.broadcast_in_dim(x, tuple(shape), dims)


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
