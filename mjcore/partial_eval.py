"""Autodidax Part 2 (jaxprs): staging Python functions into jaxprs with an initial-style trace."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, cast

import numpy as np

from mjcore import core
from mjcore.core import Primitive, ShapedArray, Trace, Tracer, get_aval
from mjcore.jaxpr import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var


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

    def _rebind(self, new: JaxprTracer) -> None:
        # `core.rebind`: this object now stands for the variable of `new` in new's builder.
        trace = new._trace
        assert isinstance(trace, JaxprTrace)
        builder = trace.builder
        for key, tracer in list(builder.const_tracers.items()):
            if tracer is self:
                del builder.const_tracers[key]
        builder.tracer_to_var[id(self)] = builder.getvar(new)
        builder.tracers.append(self)
        self._trace, self._aval, self.debug_deps = trace, new._aval, new.debug_deps


_NO_DEPS: frozenset[str] = frozenset()


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

    def new_tracers_and_vars(
        self, trace: JaxprTrace, avals: Sequence[ShapedArray], deps: frozenset[str]
    ) -> tuple[list[JaxprTracer], list[Var]]:
        """A new tracer and its variable per aval (arguments, or an equation's outputs)."""
        tracers, variables = [], []
        tracer_to_var = self.tracer_to_var
        for a in avals:
            tracer = JaxprTracer(trace, a, deps)
            var = tracer_to_var[id(tracer)] = Var(a)
            tracers.append(tracer)
            variables.append(var)
        self.tracers.extend(tracers)
        return tracers, variables

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
        self, invars: Sequence[Var], out_tracers: Sequence[JaxprTracer]
    ) -> tuple[Jaxpr, list[Any]]:
        """The jaxpr (scalar constants inlined as literals, others hoisted) and its consts.

        `invars` are taken when tracing starts: an argument's tracer may be rebound later.
        """
        invars = list(invars)
        outvars: list[Any] = [self.getvar(t) for t in out_tracers]
        literals: dict[Atom, Literal] = {}
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
    # A tracer of an outer transformation stays a constvar: inlining its value would drop
    # what that transformation tracks (a tangent, a batch axis).
    return aval.ndim == 0 and not isinstance(val, Tracer)


def _literal_value(val: Any, aval: ShapedArray) -> Any:
    return np.asarray(val, aval.dtype)[()]


class JaxprTrace(Trace):
    __slots__ = ()

    @property
    def builder(self) -> JaxprBuilder:
        return self.main.global_data

    def new_arg(self, aval: ShapedArray, debug_name: str | None = None) -> JaxprTracer:
        deps = frozenset((debug_name,)) if debug_name else _NO_DEPS
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
        if primitive.staging_rule is not None:
            return primitive.staging_rule(self, tracers, **params)
        avals_out = primitive.abstract_eval(*[t._aval for t in tracers], **params)
        return self.stage_equation(primitive, tracers, params, avals_out)

    def stage_equation(
        self,
        primitive: Primitive,
        tracers: list[JaxprTracer],
        params: dict[str, Any],
        avals_out: Sequence[ShapedArray],
    ) -> list[JaxprTracer]:
        """Record one equation and return its output tracers."""
        # The hot loop of tracing: builder methods inlined, the one-input and one-output
        # cases without loops, and the equation built as a tuple without NamedTuple's
        # Python-level `__new__`.
        builder = self.main.global_data
        tracer_to_var = builder.tracer_to_var
        if len(tracers) == 1:
            (t,) = tracers
            inputs = [tracer_to_var[id(t)]]
            deps = t.debug_deps
        else:
            inputs = [tracer_to_var[id(t)] for t in tracers]
            deps = _NO_DEPS
            for t in tracers:
                d = t.debug_deps
                if d is not deps and d:
                    deps = d if not deps else deps | d
        if len(avals_out) == 1:
            (a,) = avals_out
            tracer = JaxprTracer(self, a, deps)
            var = tracer_to_var[id(tracer)] = Var(a)
            out_tracers = [tracer]
            outvars = [var]
            builder.tracers.append(tracer)
        else:
            out_tracers, outvars = builder.new_tracers_and_vars(self, avals_out, deps)
        builder.eqns.append(_new_tuple(JaxprEqn, (primitive, inputs, params, outvars)))
        return out_tracers


_new_tuple = tuple.__new__


def trace_to_jaxpr(
    fun: Callable[..., Sequence[Any]],
    in_avals: Sequence[ShapedArray],
    description: str = "make_jaxpr",
    debug_names: Sequence[str] | None = None,
) -> ClosedJaxpr:
    """Stage out a flat function of arrays into a closed jaxpr."""
    builder = JaxprBuilder()
    with core.new_dynamic_main(JaxprTrace, builder, description) as main:
        trace = cast(JaxprTrace, main.trace)  # (the main's trace type)
        if debug_names:
            tracers_in = [trace.new_arg(a, n) for a, n in zip(in_avals, debug_names, strict=True)]
            invars = [builder.getvar(t) for t in tracers_in]
        else:  # every eager grad and jit trace starts here: no per-argument `new_arg` calls
            tracers_in, invars = builder.new_tracers_and_vars(trace, in_avals, _NO_DEPS)
        outs = fun(*tracers_in)
        tracers_out = [core.full_raise(trace, out) for out in outs]
        jaxpr, consts = builder.build(invars, tracers_out)
    # The builder keeps every tracer, and each tracer its trace, main and so the builder: a
    # cycle per trace that only the GC would free (its collections cost ~10% of a small eager
    # grad). Built, the jaxpr no longer needs them.
    builder.tracers.clear()
    return ClosedJaxpr(jaxpr, consts)


# --- Partial evaluation (Autodidax Part 4) --------------------------------------------------


class PartialVal:
    """A value that is either known (`const`) or unknown (only its `aval`)."""

    __slots__ = ("aval", "const")

    def __init__(self, aval: ShapedArray, const: Any):
        self.aval = aval
        self.const = const

    @classmethod
    def known(cls, val: Any) -> PartialVal:
        return cls(get_aval(val), val)

    @classmethod
    def unknown(cls, aval: ShapedArray) -> PartialVal:
        return cls(aval, None)

    @property
    def is_known(self) -> bool:
        return self.const is not None


class LambdaBindingRecipe:
    __slots__ = ()


class ConstRecipe:
    __slots__ = ("val",)

    def __init__(self, val: Any):
        self.val = val


class JaxprEqnRecipe:
    """An unknown equation: inputs are tracers, outputs are referenced weakly by their tracers."""

    __slots__ = ("prim", "tracers_in", "params", "avals_out", "tracer_refs_out")

    def __init__(self, prim, tracers_in, params, avals_out, tracer_refs_out):
        self.prim = prim
        self.tracers_in = tracers_in
        self.params = params
        self.avals_out = avals_out
        self.tracer_refs_out = tracer_refs_out


class PartialEvalTracer(Tracer):
    __slots__ = ("pval", "recipe")  # (Tracer has `__weakref__`)

    def __init__(self, trace: Trace, pval: PartialVal, recipe: Any):
        self._trace = trace
        self.pval = pval
        self.recipe = recipe

    @property
    def aval(self) -> ShapedArray:
        return self.pval.aval

    def _rebind(self, new: PartialEvalTracer) -> None:
        # Recipes refer to their output tracers weakly, by identity: a rebound handle would
        # lose its equation. (Users see these tracers only inside partial evaluation.)
        raise TypeError(
            "In-place update `x[idx] = v` is not supported on partial-evaluation tracers; "
            "write `x = x.at[idx].set(v)` instead."
        )

    def full_lower(self) -> Any:
        if self.pval.is_known:
            return core.full_lower(self.pval.const)
        return self

    def to_concrete_value(self) -> Any:
        if not self.pval.is_known:
            return None
        c = self.pval.const
        if isinstance(c, Tracer):
            return c.to_concrete_value()
        return getattr(c, "to_concrete_value", lambda: np.asarray(c))()


class PartialEvalTrace(Trace):
    """Evaluates what is known now; records what depends on unknown inputs."""

    __slots__ = ()

    def new_arg(self, pval: PartialVal) -> PartialEvalTracer:
        return PartialEvalTracer(self, pval, LambdaBindingRecipe())

    def lift(self, val: Any) -> PartialEvalTracer:
        return PartialEvalTracer(self, PartialVal.known(val), None)

    pure = lift

    def instantiate_const(self, tracer: PartialEvalTracer) -> PartialEvalTracer:
        if tracer.pval.is_known:
            return PartialEvalTracer(
                self, PartialVal.unknown(tracer.aval), ConstRecipe(tracer.pval.const)
            )
        return tracer

    def process_primitive(
        self, primitive: Primitive, tracers: list[PartialEvalTracer], params: dict[str, Any]
    ) -> list[Any]:
        if all(t.pval.is_known for t in tracers):
            outs = core.bind(primitive, [t.pval.const for t in tracers], params)
            return [self.lift(o) for o in outs]
        rule = primitive.partial_eval_rule
        if rule is not None:
            return rule(self, tracers, **params)
        tracers_in = [self.instantiate_const(t) for t in tracers]
        avals_in = [t.aval for t in tracers_in]
        avals_out = primitive.abstract_eval(*avals_in, **params)
        return self.stage_equation(primitive, tracers_in, params, avals_out)

    def stage_equation(
        self,
        primitive: Primitive,
        tracers_in: list[PartialEvalTracer],
        params: dict[str, Any],
        avals_out: Sequence[ShapedArray],
    ) -> list[PartialEvalTracer]:
        """Record an unknown equation and return its (unknown) output tracers."""
        tracers_out = [
            PartialEvalTracer(self, PartialVal.unknown(aval), None) for aval in avals_out
        ]
        eqn = JaxprEqnRecipe(
            primitive, tracers_in, params, list(avals_out), [weakref.ref(t) for t in tracers_out]
        )
        for t in tracers_out:
            t.recipe = eqn
        return tracers_out


def partial_eval_flat(
    fun: Callable[..., Sequence[Any]],
    pvals_in: Sequence[PartialVal],
    instantiate: Sequence[bool] | Callable[[int], Sequence[bool]] | None = None,
) -> tuple[Jaxpr, list[PartialVal], list[Any]]:
    """Run `fun` on partially known inputs: known outputs are computed, unknown ones become
    a jaxpr of the unknown inputs (with the residuals it needs as constvars).

    `instantiate` forces outputs into the jaxpr; it may be a function of the output count.
    """
    with core.new_main(PartialEvalTrace, None, "linearize") as main:
        trace = PartialEvalTrace(main)
        tracers_in = [trace.new_arg(pval) for pval in pvals_in]
        outs = fun(*tracers_in)
        tracers_out = [core.full_raise(trace, out) for out in outs]
        if callable(instantiate):
            instantiate = instantiate(len(tracers_out))
        if instantiate is not None:
            tracers_out = [
                trace.instantiate_const(t) if inst else t
                for t, inst in zip(tracers_out, instantiate, strict=True)
            ]
        pvals_out = [t.pval for t in tracers_out]
        unk_tracers_in = [t for t in tracers_in if not t.pval.is_known]
        unk_tracers_out = [t for t in tracers_out if not t.pval.is_known]
        jaxpr, consts = tracers_to_jaxpr(unk_tracers_in, unk_tracers_out)
    return jaxpr, pvals_out, consts


def tracers_to_jaxpr(
    tracers_in: list[PartialEvalTracer], tracers_out: list[PartialEvalTracer]
) -> tuple[Jaxpr, list[Any]]:
    """Build the jaxpr of the unknown computation from the recipes reachable from outputs."""
    tracer_to_var: dict[int, Var] = {id(t): Var(t.aval) for t in tracers_in}
    constvar_to_val: dict[Var, Any] = {}
    constid_to_var: dict[int, Var] = {}
    processed_eqns: set[int] = set()
    eqns: list[JaxprEqn] = []
    for t in _toposort(tracers_out):
        recipe = t.recipe
        if isinstance(recipe, LambdaBindingRecipe):
            assert id(t) in tracer_to_var, "an unknown input was not declared"
        elif isinstance(recipe, ConstRecipe):
            val = recipe.val
            var = constid_to_var.get(id(val))
            if var is None:
                var = constid_to_var[id(val)] = Var(t.aval)
                constvar_to_val[var] = val
            tracer_to_var[id(t)] = var
        elif isinstance(recipe, JaxprEqnRecipe):
            if id(recipe) not in processed_eqns:
                ins: list[Atom] = [tracer_to_var[id(x)] for x in recipe.tracers_in]
                outs = [Var(aval) for aval in recipe.avals_out]
                for ref, var in zip(recipe.tracer_refs_out, outs, strict=True):
                    out_tracer = ref()
                    if out_tracer is not None:
                        tracer_to_var[id(out_tracer)] = var
                eqns.append(JaxprEqn(recipe.prim, ins, recipe.params, outs))
                processed_eqns.add(id(recipe))
        else:
            raise TypeError(f"unknown recipe {recipe!r}")
    constvars, constvals = list(constvar_to_val), list(constvar_to_val.values())
    invars = [tracer_to_var[id(t)] for t in tracers_in]
    outvars: list[Any] = [tracer_to_var[id(t)] for t in tracers_out]
    jaxpr = Jaxpr(constvars, invars, eqns, outvars)
    return inline_scalar_consts(jaxpr, constvals)


def inline_scalar_consts(jaxpr: Jaxpr, consts: list[Any]) -> tuple[Jaxpr, list[Any]]:
    """Replace scalar constvars by literals (as `make_jaxpr` does)."""
    literals: dict[Atom, Literal] = {}
    constvars, constvals = [], []
    for var, val in zip(jaxpr.constvars, consts, strict=True):
        if var.aval.ndim == 0 and not isinstance(val, Tracer):
            literals[var] = Literal(_literal_value(val, var.aval), var.aval)
        else:
            constvars.append(var)
            constvals.append(val)
    if not literals:
        return jaxpr, consts
    eqns = [
        JaxprEqn(e.primitive, [literals.get(x, x) for x in e.inputs], e.params, e.out_binders)
        for e in jaxpr.eqns
    ]
    outs = [literals.get(x, x) if type(x) is Var else x for x in jaxpr.outs]
    return Jaxpr(constvars, jaxpr.invars, eqns, outs), constvals


def _toposort(out_nodes: list[PartialEvalTracer]) -> list[PartialEvalTracer]:
    """Tracers in dependency order (parents first), iteratively to avoid recursion limits."""

    def parents(t: PartialEvalTracer) -> list[PartialEvalTracer]:
        return t.recipe.tracers_in if isinstance(t.recipe, JaxprEqnRecipe) else []

    order: list[PartialEvalTracer] = []
    visited: set[int] = set()
    for root in out_nodes:
        stack: list[tuple[PartialEvalTracer, bool]] = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in visited:
                continue
            visited.add(id(node))
            stack.append((node, True))
            for p in reversed(parents(node)):
                if id(p) not in visited:
                    stack.append((p, False))
    return order


# --- Partial evaluation of jaxprs -----------------------------------------------------------


def partial_eval_jaxpr(
    jaxpr: Jaxpr, in_unknowns: Sequence[bool], instantiate: Sequence[bool] | None = None
) -> PartialEvalResult:
    """Split a const-free jaxpr into a known part and an unknown part (see PartialEvalResult).

    Only residuals the unknown side reads are kept, and known inputs it reads are forwarded
    instead of being returned by the known side.
    """
    assert not jaxpr.constvars
    unknown: dict[Var, bool] = {}
    residuals: dict[Var, None] = {}  # ordered set

    def is_unknown(x: Any) -> bool:
        return type(x) is Var and unknown[x]

    for v, unk in zip(jaxpr.invars, in_unknowns, strict=True):
        unknown[v] = unk
    eqns_known, eqns_unknown = [], []
    for eqn in jaxpr.eqns:
        unks_in = [is_unknown(x) for x in eqn.inputs]
        rule = eqn.primitive.partial_eval_jaxpr_rule
        split = rule(unks_in, eqn) if rule is not None and any(unks_in) else None
        if split is not None:
            eqn1, eqn2, unks_out, res = split
            eqns_known.append(eqn1)
            eqns_unknown.append(eqn2)
            for r in res:
                residuals[r] = None
            for v, u in zip(eqn.out_binders, unks_out, strict=True):
                unknown[v] = u
        elif any(unks_in):
            for x, u in zip(eqn.inputs, unks_in, strict=True):
                if type(x) is Var and not u:
                    residuals[x] = None
            eqns_unknown.append(eqn)
            for v in eqn.out_binders:
                unknown[v] = True
        else:
            eqns_known.append(eqn)
            for v in eqn.out_binders:
                unknown[v] = False
    out_unknowns = [is_unknown(x) for x in jaxpr.outs]
    if instantiate is not None:
        for x, unk, inst in zip(jaxpr.outs, list(out_unknowns), instantiate, strict=True):
            if inst and not unk and type(x) is Var:
                residuals[x] = None
        out_unknowns = [u or inst for u, inst in zip(out_unknowns, instantiate, strict=True)]
    res_vars = list(residuals)
    known_in = [v for v, u in zip(jaxpr.invars, in_unknowns, strict=True) if not u]
    # Residuals that are known inputs are forwarded by the caller rather than returned.
    known_in_pos = {v: i for i, v in enumerate(known_in)}
    computed_res = [v for v in res_vars if v not in known_in_pos]
    res_sources = [known_in_pos.get(v) for v in res_vars]
    known_outs = [x for x, u in zip(jaxpr.outs, out_unknowns, strict=True) if not u]
    jaxpr_known = dce_jaxpr(Jaxpr([], known_in, eqns_known, [*known_outs, *computed_res]))
    unknown_in = [v for v, u in zip(jaxpr.invars, in_unknowns, strict=True) if u]
    # Fresh binders for residuals: a var may not be bound twice in one jaxpr's scope.
    res_binders = [Var(v.aval) for v in res_vars]
    rename = dict(zip(res_vars, res_binders, strict=True))
    unknown_outs = [
        rename.get(x, x) if type(x) is Var else x
        for x, u in zip(jaxpr.outs, out_unknowns, strict=True)
        if u
    ]
    eqns_unknown = [
        JaxprEqn(
            e.primitive,
            [rename.get(x, x) if type(x) is Var else x for x in e.inputs],
            e.params,
            e.out_binders,
        )
        for e in eqns_unknown
    ]
    jaxpr_unknown = Jaxpr([], [*res_binders, *unknown_in], eqns_unknown, unknown_outs)
    return PartialEvalResult(jaxpr_known, jaxpr_unknown, out_unknowns, res_sources)


class PartialEvalResult(NamedTuple):
    """The halves of a partially evaluated jaxpr.

    `jaxpr_known` maps known inputs to (known outputs, computed residuals); `jaxpr_unknown`
    maps (residuals, unknown inputs) to unknown outputs. `res_sources[i]` is the index of the
    known input that residual i forwards, or None when jaxpr_known computes it (in order).
    """

    jaxpr_known: Jaxpr
    jaxpr_unknown: Jaxpr
    out_unknowns: list[bool]
    res_sources: list[int | None]

    @property
    def num_computed_res(self) -> int:
        return sum(s is None for s in self.res_sources)

    def residuals(self, known_inputs: Sequence[Any], computed: Sequence[Any]) -> list[Any]:
        """Assemble residual values from forwarded known inputs and computed ones."""
        it = iter(computed)
        return [next(it) if s is None else known_inputs[s] for s in self.res_sources]


def has_side_effects(jaxpr: Jaxpr) -> bool:
    """Whether running `jaxpr` has a side effect: a side-effecting primitive in it or in a
    jaxpr held by one of its equations (a jit, cond, scan or loop body)."""
    hit = _effects_cache.get(jaxpr)
    if hit is None:
        hit = _effects_cache[jaxpr] = any(eqn_has_side_effects(e) for e in jaxpr.eqns)
    return hit


_effects_cache: weakref.WeakKeyDictionary[Jaxpr, bool] = weakref.WeakKeyDictionary()


def eqn_has_side_effects(eqn: JaxprEqn) -> bool:
    """Whether applying `eqn` has a side effect (see `has_side_effects`)."""
    if eqn.primitive.has_side_effect:
        return True
    for p in eqn.params.values():
        for x in p if isinstance(p, tuple | list) else (p,):
            if isinstance(x, ClosedJaxpr):
                x = x.jaxpr
            if isinstance(x, Jaxpr) and has_side_effects(x):
                return True
    return False


def dce_jaxpr(jaxpr: Jaxpr, used_outputs: Sequence[bool] | None = None) -> Jaxpr:
    """Drop equations whose outputs are not needed, unless they have side effects."""
    outs = (
        jaxpr.outs
        if used_outputs is None
        else [x for x, u in zip(jaxpr.outs, used_outputs, strict=True) if u]
    )
    live: set[Var] = {x for x in outs if type(x) is Var}
    new_eqns = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.out_binders) or eqn_has_side_effects(eqn):
            new_eqns.append(eqn)
            live.update(x for x in eqn.inputs if type(x) is Var)
    new_eqns.reverse()
    return Jaxpr(jaxpr.constvars, jaxpr.invars, new_eqns, list(outs))


# --- cached partial evaluation of closed jaxprs (for pjit and checkpoint) ------------------

_pe_cache: weakref.WeakKeyDictionary[ClosedJaxpr, dict[Any, Any]] = weakref.WeakKeyDictionary()


def partial_eval_closed(closed: ClosedJaxpr, in_unknowns: tuple[bool, ...]) -> Any:
    """Known and unknown halves of a const-free jaxpr (cached, so their compiles are reused)."""
    assert not closed.consts
    cache = _pe_cache.setdefault(closed, {})
    hit = cache.get(in_unknowns)
    if hit is None:
        pe = partial_eval_jaxpr(closed.jaxpr, in_unknowns)
        hit = cache[in_unknowns] = (
            ClosedJaxpr(pe.jaxpr_known, []),
            ClosedJaxpr(pe.jaxpr_unknown, []),
            pe,
        )
    return hit
