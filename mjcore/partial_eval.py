"""Autodidax Part 2 (jaxprs): staging Python functions into jaxprs with an initial-style trace."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mjcore import core
from mjcore.core import Primitive, ShapedArray, Trace, Tracer, get_aval
from mjcore.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var


class JaxprTracer(Tracer):
    """A value in a jaxpr being built: only its abstract value is known."""

    __slots__ = ("_aval", "debug_deps")

    def __init__(self, trace: Trace, aval: ShapedArray, debug_deps: frozenset[str] = frozenset()):
        self._trace = trace
        self._aval = aval
        # Names of the traced function's arguments this value depends on (for error messages).
        self.debug_deps = debug_deps

    @property
    def aval(self) -> ShapedArray:
        return self._aval


class JaxprBuilder:
    """Collects equations and constants while a function is traced."""

    def __init__(self) -> None:
        self.eqns: list[JaxprEqn] = []
        self.tracer_to_var: dict[int, Var] = {}
        self.const_tracers: dict[int, JaxprTracer] = {}
        self.constvals: dict[Var, Any] = {}
        self.tracers: list[JaxprTracer] = []

    def new_tracer(
        self, trace: JaxprTrace, aval: ShapedArray, debug_deps: frozenset[str] = frozenset()
    ) -> JaxprTracer:
        tracer = JaxprTracer(trace, aval, debug_deps)
        self.tracers.append(tracer)
        return tracer

    def add_var(self, tracer: JaxprTracer) -> Var:
        assert id(tracer) not in self.tracer_to_var
        var = self.tracer_to_var[id(tracer)] = Var(tracer.aval)
        return var

    def getvar(self, tracer: JaxprTracer) -> Var:
        var = self.tracer_to_var.get(id(tracer))
        assert var is not None
        return var

    def add_const(self, tracer: JaxprTracer, val: Any) -> Var:
        var = self.add_var(tracer)
        self.const_tracers[id(val)] = tracer
        self.constvals[var] = val
        return var

    def build(
        self, in_tracers: Sequence[JaxprTracer], out_tracers: Sequence[JaxprTracer]
    ) -> tuple[Jaxpr, list[Any]]:
        """The jaxpr (scalar constants inlined as literals, others hoisted) and its consts."""
        invars = [self.getvar(t) for t in in_tracers]
        outvars: list[Any] = [self.getvar(t) for t in out_tracers]
        literals: dict[Var, Literal] = {}
        constvars, constvals = [], []
        for var, val in self.constvals.items():
            if _is_literal_candidate(val, var.aval):
                literals[var] = Literal(_literal_value(val, var.aval), var.aval)
            else:
                constvars.append(var)
                constvals.append(val)
        eqns = self.eqns
        if literals:
            eqns = [
                JaxprEqn(
                    e.primitive, [literals.get(x, x) for x in e.inputs], e.params, e.out_binders
                )
                for e in eqns
            ]
            outvars = [literals.get(x, x) for x in outvars]
        return Jaxpr(constvars, invars, eqns, outvars), constvals


def _is_literal_candidate(val: Any, aval: ShapedArray) -> bool:
    return aval.ndim == 0


def _literal_value(val: Any, aval: ShapedArray) -> Any:
    return np.asarray(val, aval.dtype)[()]


class JaxprTrace(Trace):
    __slots__ = ()

    @property
    def builder(self) -> JaxprBuilder:
        return self.main.global_data

    def new_arg(self, aval: ShapedArray, debug_name: str | None = None) -> JaxprTracer:
        deps = frozenset((debug_name,)) if debug_name else frozenset()
        tracer = self.builder.new_tracer(self, aval, deps)
        self.builder.add_var(tracer)
        return tracer

    def get_or_make_const_tracer(self, val: Any) -> JaxprTracer:
        tracer = self.builder.const_tracers.get(id(val))
        if tracer is None:
            tracer = self.builder.new_tracer(self, get_aval(val))
            self.builder.add_const(tracer, val)
        return tracer

    pure = lift = get_or_make_const_tracer

    def process_primitive(
        self, primitive: Primitive, tracers: list[JaxprTracer], params: dict[str, Any]
    ) -> list[JaxprTracer]:
        avals_in = [t.aval for t in tracers]
        avals_out = primitive.abstract_eval(*avals_in, **params)
        builder = self.builder
        inputs = [builder.getvar(t) for t in tracers]
        deps = frozenset().union(*(t.debug_deps for t in tracers)) if tracers else frozenset()
        out_tracers = [builder.new_tracer(self, a, deps) for a in avals_out]
        outvars = [builder.add_var(t) for t in out_tracers]
        builder.eqns.append(JaxprEqn(primitive, inputs, params, outvars))
        return out_tracers


def trace_to_jaxpr(
    fun: Callable[..., Sequence[Any]],
    in_avals: Sequence[ShapedArray],
    description: str = "make_jaxpr",
    debug_names: Sequence[str] | None = None,
) -> ClosedJaxpr:
    """Stage out a flat function of arrays into a closed jaxpr."""
    builder = JaxprBuilder()
    with core.new_dynamic_main(JaxprTrace, builder, description) as main:
        trace = JaxprTrace(main)
        names = debug_names or [None] * len(in_avals)
        tracers_in = [trace.new_arg(a, n) for a, n in zip(in_avals, names, strict=True)]
        outs = fun(*tracers_in)
        tracers_out = [core.full_raise(trace, out) for out in outs]
        jaxpr, consts = builder.build(tracers_in, tracers_out)
    return ClosedJaxpr(jaxpr, consts)
