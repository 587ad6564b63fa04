"""`stop_gradient`: the identity with a zero derivative (Autodidax Part 1's primitives, plus
the one JAX keeps in `ad_util`). A primitive so that jaxprs remember it: differentiating a
staged function later must still see the cut."""

from __future__ import annotations

from typing import Any, TypeVar

from mjcore import dtypes
from mjcore.ad_util import CONSTANT
from mjcore.backend.lowering import LoweringContext
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.tree_util import tree_map

T = TypeVar("T")

stop_gradient_p = Primitive("stop_gradient")


def stop_gradient(x: T) -> T:
    """The identity on a pytree of arrays, treated as a constant by differentiation.

    Every floating or complex leaf goes through the `stop_gradient` primitive, whose tangent
    is zero under `jvp`, so `grad`, `vjp` and `linearize` see no dependence on it, at every
    level of nesting. Other leaves (integers, booleans) have no tangent and pass through.

    Args:
      x: an array or a pytree of arrays.

    Returns:
      `x`, unchanged in value.
    """
    return tree_map(_stop_leaf, x)


def _stop_leaf(x: Any) -> Any:
    if not dtypes.is_inexact(get_aval(x).dtype):
        return x
    return stop_gradient_p.bind1(x)


@stop_gradient_p.def_impl
def _stop_gradient_impl(x: Any) -> Any:
    return x


stop_gradient_p.def_host(lambda x: x)


@stop_gradient_p.def_abstract_eval
def _stop_gradient_abstract_eval(x: ShapedArray) -> ShapedArray:
    return x


@stop_gradient_p.def_lowering
def _stop_gradient_lowering(ctx: LoweringContext, x: Any) -> Any:
    # Free: the output is the input's SSA value.
    return x


@stop_gradient_p.def_jvp
def _stop_gradient_jvp(primals, tangents):
    # Rebinding on the primal (not returning it) cuts the tangents of outer jvp levels too,
    # when the primal is itself a tracer of an enclosing differentiation.
    (x,) = primals
    return stop_gradient_p.bind1(x), None


stop_gradient_p.def_eager_vjp(CONSTANT)  # eager grad: evaluated, nothing recorded


@stop_gradient_p.def_batching
def _stop_gradient_batching(vals, dims):
    (x,), (bdim,) = vals, dims
    return stop_gradient_p.bind1(x), bdim


__all__ = ["stop_gradient"]
