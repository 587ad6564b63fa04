"""`optimization_barrier`: the identity on a pytree that the compiler may not move computation
across (StableHLO's op of that name). Autodidax Part 1's primitives, grown to one JAX keeps for
controlling rematerialisation. Every rule is the identity, applied to the whole group."""

from __future__ import annotations

from typing import Any, TypeVar

from mjcore import core
from mjcore.ad import UndefinedPrimal, Zero, instantiate
from mjcore.backend.lowering import LoweringContext
from mjcore.core import Primitive, ShapedArray
from mjcore.tree_util import tree_flatten, tree_unflatten

T = TypeVar("T")

optimization_barrier_p = Primitive("optimization_barrier", multiple_results=True)


def optimization_barrier(operand: T, /) -> T:
    """`operand` (a pytree of arrays), unchanged in value; the compiler evaluates everything
    it depends on before anything that uses the result."""
    leaves, tree = tree_flatten(operand)
    for x in leaves:
        if not core.is_array_like(x):
            raise TypeError(
                f"optimization_barrier: leaves must be arrays, got {type(x).__name__}: {x!r:.80}"
            )
    if not leaves:
        return operand
    return tree_unflatten(tree, optimization_barrier_p.bind(*leaves))


@optimization_barrier_p.def_impl
def _optimization_barrier_impl(*args: Any) -> list[Any]:
    # Eagerly there is nothing to reorder.
    return list(args)


optimization_barrier_p.def_host(lambda *xs: list(xs))


@optimization_barrier_p.def_abstract_eval
def _optimization_barrier_abstract_eval(*avals: ShapedArray) -> list[ShapedArray]:
    return list(avals)


@optimization_barrier_p.def_lowering
def _optimization_barrier_lowering(ctx: LoweringContext, *args: Any) -> Any:
    avals = [a.strip_weak_type() for a in ctx.avals_out]
    outs = ctx.builder.op("stablehlo.optimization_barrier", list(args), avals)
    return outs if isinstance(outs, list) else [outs]


def _optimization_barrier_jvp(primals: list[Any], tangents: list[Any]):
    primals_out = optimization_barrier_p.bind(*primals)
    nonzero = [t for t in tangents if type(t) is not Zero]
    barred = iter(optimization_barrier_p.bind(*nonzero) if nonzero else [])
    return primals_out, [t if type(t) is Zero else next(barred) for t in tangents]


optimization_barrier_p.def_jvp(_optimization_barrier_jvp, symbolic_zeros=True)


@optimization_barrier_p.def_transpose
def _optimization_barrier_transpose(cts: list[Any], *args: Any) -> list[Any]:
    outs = optimization_barrier_p.bind(*[instantiate(ct) for ct in cts])
    return [ct if type(x) is UndefinedPrimal else None for x, ct in zip(args, outs, strict=True)]


@optimization_barrier_p.def_batching
def _optimization_barrier_batching(vals: list[Any], dims: list[int | None]):
    return optimization_barrier_p.bind(*vals), list(dims)


__all__ = ["optimization_barrier"]
