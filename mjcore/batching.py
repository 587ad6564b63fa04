"""Autodidax Part 1 (vectorized batching with `vmap`): BatchTrace and its tracers."""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from mjcore import core

# The `name as name` imports are re-exports: rules import them from `batching` too.
from mjcore.ad_util import NOT_MAPPED as NOT_MAPPED
from mjcore.core import Primitive, ShapedArray, Trace, Tracer, get_aval
from mjcore.errors import MissingRuleError
from mjcore.jaxpr import ClosedJaxpr, eval_closed_jaxpr
from mjcore.lax.base import broadcast_batch as broadcast_batch
from mjcore.lax.base import move_bdim as move_bdim
from mjcore.partial_eval import trace_to_jaxpr

_INHERIT = object()  # `batch_jaxpr_like`'s default axis name: the running rule's


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


class BatchAxis(NamedTuple):
    """A batch trace's global data: the mapped size and, under `vmap(..., axis_name=)`, the
    name collectives refer to it by (JAX's `AxisData`)."""

    size: int
    name: Any


class BatchTrace(Trace):
    __slots__ = ()

    def pure(self, val: Any) -> BatchTracer:
        return BatchTracer(self, val, NOT_MAPPED)

    lift = pure

    @property
    def axis_size(self) -> int:
        return self.main.global_data.size

    @property
    def axis_name(self) -> Any:
        return self.main.global_data.name

    def process_primitive(
        self, primitive: Primitive, tracers: list[BatchTracer], params: dict[str, Any]
    ) -> list[BatchTracer]:
        vals_in = [t.val for t in tracers]
        dims_in = [t.batch_dim for t in tracers]
        name = self.main.global_data.name
        if name is not None:
            if isinstance(primitive, AxisPrimitive) and name in primitive.axis_names(params):
                # A collective over this very axis: it acts across the batch.
                rule = primitive.collective_batching_rule
                if rule is None:
                    raise MissingRuleError(primitive.name, "collective batching", "vmap")
                vals_out, dims_out = rule(self.main.global_data, vals_in, dims_in, **params)
                if not primitive.multiple_results:
                    vals_out, dims_out = [vals_out], [dims_out]
                return [BatchTracer(self, x, d) for x, d in zip(vals_out, dims_out, strict=True)]
            with core.batching_axis_name(name):
                return self._process(primitive, vals_in, dims_in, params)
        return self._process(primitive, vals_in, dims_in, params)

    def _process(
        self,
        primitive: Primitive,
        vals_in: list[Any],
        dims_in: list[int | None],
        params: dict[str, Any],
    ) -> list[BatchTracer]:
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


class AxisPrimitive(Primitive):
    """A primitive over named axes, a collective (JAX's `AxisPrimitive`): `bind` resolves
    its `axis_name` param in the axis environment, so that the batch trace of
    `vmap(..., axis_name=)` handles it even when no operand is batched, and applies the
    `collective_batching` rule there: rule(batch_axis, vals, dims, **params)."""

    def __init__(self, name: str, *, multiple_results: bool = False):
        super().__init__(name, multiple_results=multiple_results)
        self.collective_batching_rule: Callable[..., Any] | None = None

    def def_collective_batching(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        self.collective_batching_rule = rule
        return rule

    @staticmethod
    def axis_names(params: dict[str, Any]) -> tuple[Any, ...]:
        return params["axis_name"]

    binds_named_axes = True

    def bind_with_axes(self, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
        """`core.bind` for a collective: the top trace is the highest of its operands' and
        of the batch traces its named axes belong to."""
        top = core.find_top_trace(args)
        device_names = {n for n, _ in params.get("axis_env", ())}
        for name in self.axis_names(params):
            frame = core.axis_frame(name)
            if frame is None and name in device_names:
                continue  # a staged collective of a shard_map, evaluated after its scope
            if frame is None:
                raise NameError(
                    f"unbound axis name: {name!r}. {self.name} over a named axis must run "
                    "inside mjcore.shard_map, mjcore.pmap or mjcore.vmap(..., axis_name=) "
                    f"that binds {name!r}"
                )
            main = frame.main
            if main is not None and main.trace is not None and main.level > top.main.level:
                top = main.trace
        tracers = [core.full_raise(top, x) for x in args]
        return [core.full_lower(x) for x in top.process_primitive(self, tracers, params)]


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
    axis_name: Any = _INHERIT,
) -> tuple[list[Any], list[int | None]]:
    """Run `fun` under a new batch trace on batched inputs (used by vmap and batching rules).

    `axis_name` names the batch axis for collectives; by default a batching rule's inner
    trace inherits the name of the batch trace running the rule (a jit or scan inside
    `vmap(..., axis_name=)` still sees its collectives over that axis).
    """
    if axis_name is _INHERIT:
        axis_name = core.current_batching_axis_name()
    with core.new_main(BatchTrace, BatchAxis(axis_size, axis_name), "vmap") as main:
        trace = BatchTrace(main)
        tracers = [
            BatchTracer(trace, v, d) if d is not NOT_MAPPED else v
            for v, d in zip(vals_in, dims_in, strict=True)
        ]
        if axis_name is None:
            outs = fun(*tracers)
        else:
            with core.extend_axis_env([core.AxisFrame(axis_name, axis_size, main)]):
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
    # The name of the batch axis (`vmap(..., axis_name=)`) decides how collectives batch.
    key = (axis_size, dims, core.current_batching_axis_name())
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
