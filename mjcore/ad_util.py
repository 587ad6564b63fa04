"""The values transformation rules and interpreters share (JAX's `ad_util`), below both the
interpreters (`ad`, `batching`) and the primitives (`lax`): symbolic zeros, undefined primals,
the unmapped batch dimension and the jvp of linear primitives. (Autodidax Parts 1 and 4.)"""

from __future__ import annotations

from typing import Any

from mjcore.core import Primitive, ShapedArray

NOT_MAPPED = None  # the batch dimension of a value that is not batched


class Zero:
    """A symbolic zero tangent: costs nothing until a rule needs it as an array."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short()})"


class UndefinedPrimal:
    """A linear input of a transpose rule: only its type is known (JAX's `UndefinedPrimal`)."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined_primal(x: Any) -> bool:
    """True for the linear (cotangent-receiving) inputs of a transpose rule."""
    return type(x) is UndefinedPrimal


# `Primitive.def_eager_vjp` markers for eager reverse mode (`mjcore.eager_vjp`): the primitive
# applied to the tangents of its differentiated operands and the values of the others is the
# tangent equation, recorded as is, without running the jvp rule.
LINEAR = "linear"  # linear in all its array operands together (add, reshape, concatenate)
MULTILINEAR = "multilinear"  # linear in each with the others fixed (mul, dot_general)
# A derivative of zero everywhere it exists (floor, sign, stop_gradient): the result is a
# value that carries no tangent, nothing is recorded.
CONSTANT = "constant"


def linear_jvp(primitive: Primitive) -> None:
    """A jvp rule for primitives linear in all their array operands (and the matching direct
    rule of eager reverse mode)."""
    primitive.def_eager_vjp(LINEAR)

    def jvp(primals: list[Any], tangents: list[Any], **params: Any):
        return primitive.bind(*primals, **params), primitive.bind(*tangents, **params)

    primitive.def_jvp(jvp)
