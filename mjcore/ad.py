"""Autodidax Part 1 (forward-mode autodiff with `jvp`): JVPTrace with symbolic zero tangents."""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore import core, dtypes
from mjcore.core import Primitive, ShapedArray, Trace, Tracer, get_aval
from mjcore.errors import MissingRuleError


class Zero:
    """A symbolic zero tangent: costs nothing until a rule needs it as an array."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short()})"


def zeros_like_aval(aval: ShapedArray) -> Any:
    from mjcore.lax import base

    return base.full(aval.shape, 0, aval.dtype)


def instantiate(tangent: Any) -> Any:
    """Turn a symbolic zero into an array of zeros (other tangents pass through)."""
    if type(tangent) is Zero:
        return zeros_like_aval(tangent.aval)
    return tangent


def tangent_aval(primal_aval: ShapedArray) -> ShapedArray:
    """Tangents of inexact values share their type; others have no tangent space."""
    return primal_aval.update(weak_type=False)


def is_differentiable(aval: ShapedArray) -> bool:
    return dtypes.is_inexact(aval.dtype)


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace: Trace, primal: Any, tangent: Any):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self) -> ShapedArray:
        return get_aval(self.primal)

    def to_concrete_value(self) -> Any:
        p = self.primal
        if isinstance(p, Tracer):
            return p.to_concrete_value()
        return getattr(p, "to_concrete_value", lambda: np.asarray(p))()


class JVPTrace(Trace):
    __slots__ = ()

    def pure(self, val: Any) -> JVPTracer:
        return JVPTracer(self, val, Zero(tangent_aval(get_aval(val))))

    lift = pure

    def process_primitive(
        self, primitive: Primitive, tracers: list[JVPTracer], params: dict[str, Any]
    ) -> list[JVPTracer]:
        primals_in = [t.primal for t in tracers]
        tangents_in = [t.tangent for t in tracers]
        if all(type(t) is Zero for t in tangents_in):
            # Symbolic zeros in, symbolic zeros out: no derivative work at all.
            outs = primitive.bind(*primals_in, **params)
            outs = outs if primitive.multiple_results else [outs]
            return [JVPTracer(self, x, Zero(tangent_aval(get_aval(x)))) for x in outs]
        rule = primitive.jvp_rule
        if rule is None:
            raise MissingRuleError(primitive.name, "jvp", "Forward-mode differentiation (jvp)")
        if not primitive.jvp_symbolic_zeros:
            tangents_in = [instantiate(t) for t in tangents_in]
        primals_out, tangents_out = rule(primals_in, tangents_in, **params)
        if not primitive.multiple_results and not isinstance(primals_out, list | tuple):
            primals_out, tangents_out = [primals_out], [tangents_out]
        out = []
        for x, t in zip(primals_out, tangents_out, strict=True):
            aval = get_aval(x)
            if t is None or not is_differentiable(aval):
                t = Zero(tangent_aval(aval))
            out.append(JVPTracer(self, x, t))
        return out


def jvp_flat(fun: Any, primals: list[Any], tangents: list[Any]) -> tuple[list[Any], list[Any]]:
    """Forward-mode derivative of a flat function; tangents may be `Zero`s."""
    with core.new_main(JVPTrace, None, "jvp") as main:
        trace = JVPTrace(main)
        tracers_in = [JVPTracer(trace, x, t) for x, t in zip(primals, tangents, strict=True)]
        outs = fun(*tracers_in)
        tracers_out = [core.full_raise(trace, x) for x in outs]
        primals_out = [t.primal for t in tracers_out]
        tangents_out = [t.tangent for t in tracers_out]
    return primals_out, tangents_out


def linear_jvp(primitive: Primitive) -> None:
    """A jvp rule for primitives linear in all their array operands."""

    def jvp(primals: list[Any], tangents: list[Any], **params: Any):
        return primitive.bind(*primals, **params), primitive.bind(*tangents, **params)

    primitive.def_jvp(jvp)
