"""Eager reverse mode: a tape of linear equations recorded while the function runs once.

`vjp` of a function called outside any transformation runs the function's Python exactly once,
op by op, on `VJPTracer`s that carry each value and the linear variable of its tangent. Each
primitive applied to a tracked value runs its jvp rule with the concrete primals and
`LinearTracer` tangents: the primal part of the rule is evaluated at once, and the linear part
(what depends on the tangents) is appended to a flat tape of equations. The backward pass walks
the tape in reverse through the primitives' transpose rules.

This is Autodidax's linearize-then-transpose (JVPTrace over partial evaluation, a linear
jaxpr, `backward_pass`) with the middle layers fused away: no partial-evaluation tracers or
recipes, no toposort, no jaxpr. The equations recorded are the ones partial evaluation would
stage, so every rule sees what it saw before. Primitives with a partial-evaluation rule of
their own (control flow, `pjit`, `checkpoint`, custom derivatives) hit with tangents are
partially evaluated one equation at a time by that rule, and their linear jaxpr becomes one
tape entry transposed by `ad.backward_pass`.

Primitives with a direct rule (`Primitive.eager_vjp_rule`) skip the jvp rule: they are
evaluated and record one entry (see `VJPTrace._direct`). Nothing is compiled here beyond what
eager evaluation compiles: each primitive's executable, and for mjnp calls on undifferentiated
values (replayed fused, as in plain eager code) their traced body's; on the CPU, only for large
arrays or primitives without a host rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mjcore import core, dtypes
from mjcore.ad import (
    CONSTANT,
    LINEAR,
    MULTILINEAR,
    UndefinedPrimal,
    Zero,
    backward_pass,
    instantiate,
    tangent_aval,
)
from mjcore.array import Array, new_object, wrap_host
from mjcore.backend import client as backend
from mjcore.core import MainTrace, Primitive, ShapedArray, Trace, Tracer, get_aval
from mjcore.dispatch import _CHEAP_HOST_LIMIT as _HOST_SUM_LIMIT
from mjcore.dispatch import (
    FP_QUIET,
    _apply_host,
    _host_platform,
    device_put,
    fp_state,
    host_value,
    on_cpu,
)
from mjcore.errors import ConcretizationTypeError, MissingRuleError
from mjcore.jaxpr import Literal, eval_jaxpr
from mjcore.lax.base import add_any, add_any_p, full
from mjcore.partial_eval import PartialVal, partial_eval_flat, trace_to_jaxpr
from mjcore.tree_util import tree_flatten, tree_unflatten


class LinVar:
    """A linear variable of the tape: the tangent (and later cotangent) of one value.

    A `dead` variable is the zero tangent of a value that does not depend on the
    differentiated inputs, handed to jvp rules that take no symbolic zeros: what it flows into
    is not recorded, and no cotangent is kept for it (where linearize would instantiate zeros
    and run the rule's products with them).
    """

    __slots__ = ("aval", "dead")

    def __init__(self, aval: ShapedArray, dead: bool = False):
        self.aval = aval
        self.dead = dead

    def __repr__(self) -> str:
        return f"LinVar({self.aval.str_short()})"


# A tape entry: (primitive or _JAXPR or _VJP, inputs (LinVars or concrete values), params, out
# LinVars). A `_JAXPR` entry's params are (linear jaxpr, its consts); its inputs are all LinVars.
# A `_VJP` entry (a primitive's direct rule) has one output (a tuple of them for a primitive of
# several results); its inputs are LinVars or None (an operand not differentiated) and its
# params (rule, primals, primal output, the params).
_JAXPR = object()
_VJP = object()
Entry = tuple[Any, list[Any], Any, list[LinVar]]


# --- forward: the tracers -------------------------------------------------------------------


class VJPTracer(Tracer):
    """A value of the eagerly differentiated function: its primal and its tangent's variable
    (None for values that do not depend on the differentiated inputs)."""

    __slots__ = ("primal", "var")

    def __init__(self, trace: Trace, primal: Any, var: LinVar | None):
        self._trace = trace
        self.primal = primal
        self.var = var

    @property
    def aval(self) -> ShapedArray:
        p = self.primal
        try:  # an Array or a tracer
            return p.aval
        except AttributeError:
            return get_aval(p)

    def full_lower(self) -> Any:
        # An untracked value is just its primal: eager code paths see a plain Array again.
        return self.primal if self.var is None else self

    def to_concrete_value(self) -> Any:
        p = self.primal
        if isinstance(p, Tracer):
            return p.to_concrete_value()
        return getattr(p, "to_concrete_value", lambda: np.asarray(p))()

    def _check_no_derivative(self, conversion: str) -> None:
        # As JAX (and `ad.JVPTracer`): float()/complex() of a differentiated value would
        # silently drop its derivative; int() and bool() stay allowed.
        if self.var is not None:
            core.check_alive(self)
            raise ConcretizationTypeError(
                f"Abstract tracer value encountered where a concrete value is expected: "
                f"{conversion} was called on a differentiated array {self.aval.str_short()} "
                f"({self._trace.main.description}). A Python number would lose its derivative. "
                "Fix: keep it an array, or take float(mjcore.lax.stop_gradient(x)) if its "
                "derivative should be zero."
            )

    def __float__(self) -> float:
        self._check_no_derivative("float()")
        return super().__float__()

    def __complex__(self) -> complex:
        self._check_no_derivative("complex()")
        return super().__complex__()


class VJPTrace(Trace):
    """Runs each primitive's jvp rule on concrete primals and linear tangents (a JVPTrace
    whose tangents are recorded, not computed)."""

    __slots__ = ()

    def pure(self, val: Any) -> VJPTracer:
        return VJPTracer(self, val, None)

    lift = pure

    def process_primitive(
        self, primitive: Primitive, tracers: list[VJPTracer], params: dict[str, Any]
    ) -> list[VJPTracer]:
        primals = [t.primal for t in tracers]
        for t in tracers:
            if t.var is not None:
                break
        else:  # nothing tracked in: plain evaluation, nothing recorded
            outs = core.bind(primitive, primals, params)
            return [VJPTracer(self, x, None) for x in outs]
        direct = primitive.eager_vjp_rule
        if direct is not None:
            if not primitive.multiple_results:
                return [self._direct(primitive, direct, tracers, primals, params)]
            return self._direct_multiple(primitive, direct, tracers, primals, params)
        rule = primitive.jvp_rule
        if rule is None:
            # The message of linearize's jvp: the rule reverse mode lacks is the jvp rule.
            raise MissingRuleError(primitive.name, "jvp", "Forward-mode differentiation (jvp)")
        state = core._state
        eager = state.eager
        # The interpreter of this rule's tangents (pushed inline, not by `core.new_main`:
        # this runs for every primitive applied to a tracked value).
        stack = state.trace_stack
        main = MainTrace(len(stack), LinearTrace, self.main.global_data, _LINEAR)
        stack.append(main)
        try:
            lin = main.trace
            if primitive.jvp_symbolic_zeros:
                tangents = [
                    Zero(tangent_aval(t.aval)) if t.var is None else LinearTracer(lin, t.var)
                    for t in tracers
                ]
            else:
                tangents = [
                    LinearTracer(lin, _dead(t.aval) if t.var is None else t.var) for t in tracers
                ]
            primals_out, tangents_out = rule(primals, tangents, **params)
        finally:
            _pop_main(main, state, eager)
        if not primitive.multiple_results and not isinstance(primals_out, (list, tuple)):
            return [self._out(primals_out, tangents_out, lin)]
        return [self._out(x, t, lin) for x, t in zip(primals_out, tangents_out, strict=True)]

    def _direct(
        self,
        primitive: Primitive,
        rule: Any,
        tracers: list[VJPTracer],
        primals: list[Any],
        params: dict[str, Any],
    ) -> VJPTracer:
        """Evaluate `primitive` and record its direct vjp entry (`Primitive.eager_vjp_rule`):
        no jvp rule, no tangent interpreter, no coefficient computed before it is needed."""
        for p in primals:
            if isinstance(p, Tracer) or core._state.debug_nans:
                (out,) = core.bind(primitive, primals, params)
                break
        else:  # concrete primals: eager evaluation, as `bind` would choose, without its search
            outs = None
            if primitive.impl_rule is None and primitive.host_rule is not None:
                outs = _apply_host(primitive, primals, params)  # `impl`'s first choice
            (out,) = primitive.impl(*primals, **params) if outs is None else outs
        return self._record(primitive, rule, [t.var for t in tracers], primals, out, params)

    def _direct_multiple(
        self,
        primitive: Primitive,
        rule: Any,
        tracers: list[VJPTracer],
        primals: list[Any],
        params: dict[str, Any],
    ) -> list[VJPTracer]:
        """`_direct` for a primitive of several results (sort): one entry for them all, whose
        rule takes the results and their cotangents (None where none flows) as lists."""
        outs: list[Any]
        if core._state.debug_nans or any(isinstance(p, Tracer) for p in primals):
            outs = core.bind(primitive, primals, params)
        else:
            on_host = None
            if primitive.impl_rule is None and primitive.host_rule is not None:
                on_host = _apply_host(primitive, primals, params)
            outs = primitive.impl(*primals, **params) if on_host is None else on_host
        out_vars, results = [], []
        for out in outs:
            aval = out.aval
            if dtypes.kind(aval.dtype) in "fc":
                var = LinVar(aval.update(weak_type=False) if aval.weak_type else aval)
                results.append(VJPTracer(self, out, var))
            else:  # an integer or boolean result carries nothing: a dead variable
                var = LinVar(aval, True)
                results.append(VJPTracer(self, out, None))
            out_vars.append(var)
        linear = [t.var for t in tracers]
        self.main.global_data.append((_VJP, linear, (rule, primals, tuple(outs), params), out_vars))
        return results

    def _record(
        self,
        primitive: Primitive,
        rule: Any,
        linear: list[LinVar | None],
        primals: list[Any],
        out: Any,
        params: dict[str, Any],
    ) -> VJPTracer:
        """The tracer of `out`, the value of `primitive` at `primals`, with its direct vjp
        entry recorded (`linear`: the operands' variables, None where not differentiated)."""
        aval = out.aval  # (an Array, or a tracer of an outer transformation)
        if dtypes.kind(aval.dtype) not in "fc" or rule is CONSTANT:
            return VJPTracer(self, out, None)  # an integer or boolean result, a constant: nothing
        var = new_object(LinVar)  # `LinVar(aval)`, strong, without the __init__ frame
        var.aval = aval.update(weak_type=False) if aval.weak_type else aval
        var.dead = False
        tape = self.main.global_data
        if rule is LINEAR:
            if len(linear) == 1:  # reshape, roll, slice, ...: the operand is differentiated
                ins = linear
            else:
                ins = [p if v is None else v for v, p in zip(linear, primals, strict=True)]
            tape.append((primitive, ins, params, [var]))
        elif rule is MULTILINEAR:
            # One linear equation per differentiated operand, the others fixed, and their sum.
            tracked = [i for i, v in enumerate(linear) if v is not None]
            parts = [var] if len(tracked) == 1 else [LinVar(var.aval) for _ in tracked]
            for i, part in zip(tracked, parts, strict=True):
                ins = list(primals)
                ins[i] = linear[i]
                tape.append((primitive, ins, params, [part]))
            if len(parts) > 1:
                _add_all(tape, parts, var)
        else:
            tape.append((_VJP, linear, (rule, primals, out, params), [var]))
        t = new_object(VJPTracer)  # `VJPTracer(self, out, var)` without the __init__ frame
        t._trace = self
        t.primal = out
        t.var = var
        return t

    def apply_host(
        self,
        primitive: Primitive,
        args: Sequence[Any],
        params: dict[str, Any],
        plan: tuple[Any, dict[str, Any] | None, ShapedArray],
    ) -> Any:
        """`primitive.bind(*args, **params)` on this tape, for a primitive whose host rule
        runs at the arguments' avals (`plan`: the host rule, or the NumPy function it calls,
        its keyword parameters or None, the output aval): the host rule on the primals' host
        values straight away, without `bind`, `process_primitive`, `impl` and the host plan's
        lookup, and the direct rule's entry recorded (a fused function's body, `tanh(x)`,
        `x * y`: `mjcore.eager_fusion`). `args` are this trace's tracers, Arrays and Python
        floats or complexes; anything else, another platform, a differentiated operand of a
        primitive without a direct rule, or a result of another dtype than planned takes
        `process_primitive` (the same value, by `dispatch`'s choice).

        Returns the result (a tracer, or the Array where nothing differentiated flows in).
        """
        host_rule, kw, out_aval = plan
        primals: list[Any] = []
        linear: list[LinVar | None] = []
        vals: list[Any] = []
        tracked = False
        platform = _host_platform
        ok = bool(platform) and platform[0] and not backend.several_devices_in_use
        for a in args:
            if type(a) is VJPTracer:
                v = a.var
                if v is not None:
                    tracked = True
                a = a.primal
            else:
                v = None
            primals.append(a)
            linear.append(v)
            if type(a) is Array:
                value = a._npy
                vals.append(a._value() if value is None else value)
            else:
                scalar = _HOST_SCALARS.get(type(a))
                if scalar is not None:
                    vals.append(scalar(a))
                elif type(a) is np.ndarray or isinstance(a, np.generic):
                    # a constant of the body (`mod`'s zero): read as dispatch reads it
                    vals.append(host_value(a)[0])
                else:  # a tracer of another transformation, an int, ...
                    ok = False
        rule = primitive.eager_vjp_rule
        if ok and (rule is not None or not tracked) and not core._state.debug_nans:
            # under the user's NumPy error state, as `dispatch._apply_host`
            r = host_rule(*vals) if kw is None else host_rule(*vals, **kw)
            if type(r) is not np.ndarray:  # NumPy gives scalars for 0-d results
                r = np.asarray(r)
            if r.dtype == out_aval.dtype:
                out = wrap_host(r, out_aval)
                if not tracked:  # eager evaluation: nothing recorded
                    return out
                rec = self._record(primitive, rule, linear, primals, out, params)
                return rec if rec.var is not None else out  # (an integer result: a value)
        tracers = [a if type(a) is VJPTracer else VJPTracer(self, a, None) for a in args]
        (res,) = self.process_primitive(primitive, tracers, params)
        return res.primal if res.var is None else res

    def _out(self, x: Any, t: Any, lin: Trace) -> VJPTracer:
        """The tracer of one result: a tangent not linear in the inputs (a Zero, a constant,
        a dead variable, an integer) carries nothing."""
        var = t.var if type(t) is LinearTracer and t._trace is lin else None
        if var is not None and (var.dead or dtypes.kind(_aval(x).dtype) not in "fc"):
            var = None
        return VJPTracer(self, x, var)


class LinearTracer(Tracer):
    """A tangent inside one jvp rule: only its variable (and so its type) is known."""

    __slots__ = ("var",)

    def __init__(self, trace: Trace, var: LinVar):
        self._trace = trace
        self.var = var

    @property
    def aval(self) -> ShapedArray:
        return self.var.aval


class LinearTrace(Trace):
    """Records the tangent side of a jvp rule on the tape (partial evaluation's unknowns)."""

    __slots__ = ()

    def pure(self, val: Any) -> Any:
        return val  # a known value: a constant of the equations that use it

    lift = pure

    def process_primitive(
        self, primitive: Primitive, tracers: list[Any], params: dict[str, Any]
    ) -> list[Any]:
        tape = self.main.global_data
        if primitive.partial_eval_rule is not None:
            return self._partial_eval(primitive, tracers, params, tape)
        ins, avals = [], []
        live = False
        for x in tracers:
            if type(x) is LinearTracer:
                var = x.var
                ins.append(var)
                avals.append(var.aval)
                live = live or not var.dead
            else:
                ins.append(x)
                avals.append(_aval(x))
        avals_out = _abstract_eval(primitive, avals, params)
        if not live:  # linear in zero tangents only: a zero, nothing to record
            return [LinearTracer(self, LinVar(a, True)) for a in avals_out]
        outs = [LinVar(a) for a in avals_out]
        tape.append((primitive, ins, params, outs))
        return [LinearTracer(self, v) for v in outs]

    def _partial_eval(
        self, primitive: Primitive, tracers: list[Any], params: dict[str, Any], tape: list[Entry]
    ) -> list[Any]:
        """A higher-order primitive with tangents among its operands: its own partial-eval
        rule splits it, and the unknown (linear) part becomes one jaxpr entry of the tape."""
        pvals = [
            PartialVal.unknown(x.var.aval) if type(x) is LinearTracer else PartialVal.known(x)
            for x in tracers
        ]
        jaxpr, pvals_out, consts = partial_eval_flat(
            lambda *xs: core.bind(primitive, xs, params), pvals
        )
        ins = [x.var for x in tracers if type(x) is LinearTracer]
        outs: list[Any] = []
        out_vars: list[LinVar] = []
        for pval in pvals_out:
            if pval.is_known:
                outs.append(pval.const)
            else:
                var = LinVar(pval.aval)
                out_vars.append(var)
                outs.append(LinearTracer(self, var))
        tape.append((_JAXPR, ins, (jaxpr, consts), out_vars))
        return outs


_LINEAR = "eager grad/vjp (tangents)"

# Python scalars beside arrays on the tape's host path: NumPy scalars of the weak type's dtype,
# as eager fusion's host programs take them
_HOST_SCALARS: dict[type, Any] = {float: np.float64, complex: np.complex128}


def eval_on_tape(
    trace: VJPTrace, jaxpr: Any, args: Sequence[Any], plans: Sequence[Any] | None = None
) -> list[Any]:
    """`eval_jaxpr(jaxpr, [], *args)` under `trace` (the top of the stack, no dynamic trace):
    each equation as `bind` would apply it there, without `bind`'s search of the stack.

    A library function's traced body (`mjcore.eager_fusion`) replays this way on the tape: the
    same primitives, with the same parameters, as its Python would bind op by op. `plans`, if
    given, holds one `VJPTrace.apply_host` plan (or None) per equation.
    """
    env: dict[Any, Any] = dict(zip(jaxpr.invars, args, strict=True))
    for k, eqn in enumerate(jaxpr.eqns):
        ins = [env[x] if type(x) is not Literal else x.val for x in eqn.inputs]
        prim = eqn.primitive
        if plans is not None:
            plan = plans[k]
            if plan is not None:
                (v,) = eqn.out_binders
                env[v] = trace.apply_host(prim, ins, eqn.params, plan)
                continue
        for x in ins:
            if type(x) is VJPTracer and x.var is not None:
                break
        else:  # nothing tracked in: eager evaluation
            ins = [x.primal if type(x) is VJPTracer else x for x in ins]
            outs = core.bind(prim, ins, eqn.params)
            for v, x in zip(eqn.out_binders, outs, strict=True):
                env[v] = x
            continue
        if prim.binds_named_axes:
            outs = core.bind(prim, ins, eqn.params)
        else:
            tracers = [x if type(x) is VJPTracer else VJPTracer(trace, x, None) for x in ins]
            outs = trace.process_primitive(prim, tracers, eqn.params)
        for v, x in zip(eqn.out_binders, outs, strict=True):
            env[v] = x.primal if type(x) is VJPTracer and x.var is None else x
    return [env[x] if type(x) is not Literal else x.val for x in jaxpr.outs]


def _add_all(tape: list[Entry], parts: list[LinVar], out: LinVar) -> None:
    """Record `out = parts[0] + parts[1] + ...` (add_any equations)."""
    acc = parts[0]
    for k, v in enumerate(parts[1:], 1):
        dst = out if k == len(parts) - 1 else LinVar(out.aval)
        tape.append((add_any_p, [acc, v], {}, [dst]))
        acc = dst


def _dead(aval: ShapedArray) -> LinVar:
    """The zero tangent of an untracked value, for a jvp rule without symbolic zeros."""
    return LinVar(tangent_aval(aval), True)


def _pop_main(main: MainTrace, state: Any, eager: bool) -> None:
    """Pop `main`, restoring `state.eager` as it was before the push (`eager`)."""
    state.trace_stack.pop()
    state.eager = eager
    main.alive = False
    main.trace = None  # type: ignore[assignment]  # (popped: see MainTrace.trace)


def _aval(x: Any) -> ShapedArray:
    """`get_aval` with the commonest case (an Array or a tracer: an `aval` attribute) first."""
    try:
        return x.aval
    except AttributeError:
        return get_aval(x)


# (primitive, input avals, params) -> output avals, for the tangent equations: the same few
# equations are recorded on every call of a differentiated function. Bounded: cleared when full.
_AVALS_OUT: dict[Any, list[ShapedArray]] = {}
_AVALS_OUT_SIZE = 4096


def _abstract_eval(
    primitive: Primitive, avals: list[ShapedArray], params: dict[str, Any]
) -> list[ShapedArray]:
    try:
        key = (primitive, *avals, *params.items())
        out = _AVALS_OUT.get(key)
    except TypeError:  # an unhashable parameter
        return primitive.abstract_eval(*avals, **params)
    if out is None:
        out = primitive.abstract_eval(*avals, **params)
        if len(_AVALS_OUT) >= _AVALS_OUT_SIZE:
            _AVALS_OUT.clear()
        _AVALS_OUT[key] = out
    return out


# --- the entry point ------------------------------------------------------------------------


def _forward(
    fun: Callable[..., Sequence[Any]], primals_in: Sequence[Any]
) -> tuple[list[Entry], list[LinVar | None], list[ShapedArray], list[Any], list[LinVar | None]]:
    """Run `fun` once on tracers of `primals_in`, recording its tape: (the tape, the inputs'
    variables and tangent avals, the primal outputs, the outputs' variables)."""
    tape: list[Entry] = []
    # `core.new_main`, pushed inline: its generator's machinery is a fixed cost of every call
    state = core._state
    stack = state.trace_stack
    main = MainTrace(len(stack), VJPTrace, tape, "eager grad/vjp")
    stack.append(main)
    state.eager = False
    try:
        trace = main.trace
        in_vars: list[LinVar | None] = []
        in_avals: list[ShapedArray] = []
        tracers = []
        for x in primals_in:
            aval = get_aval(x)
            t_aval = tangent_aval(aval)
            var = LinVar(t_aval) if dtypes.kind(aval.dtype) in "fc" else None
            in_vars.append(var)
            in_avals.append(t_aval)
            tracers.append(VJPTracer(trace, x, var))
        outs = fun(*tracers)
        primals_out, out_vars = [], []
        for x in outs:
            x = core.full_raise(trace, x)
            primals_out.append(x.primal)
            out_vars.append(x.var)
    finally:  # as `core.new_main`'s exit
        stack.pop()
        state.eager = core._nothing_traced(state)
        main.alive = False
        main.trace = None  # type: ignore[assignment]  # (main <-> trace: a cycle)
    return tape, in_vars, in_avals, primals_out, out_vars


def vjp_flat(
    fun: Callable[..., Sequence[Any]], primals_in: Sequence[Any]
) -> tuple[list[Any], Callable[..., list[Any]], list[Any]]:
    """Eager `ad.vjp_flat`: primal outputs, `f_vjp(residuals, *cts)` and its residuals.

    `fun`'s Python runs once, here. The residuals are the arrays the backward pass reads;
    `f_vjp` uses the values passed in their place (e.g. tracers of a `jit` it is called in).
    """
    tape, in_vars, in_avals, primals_out, out_vars = _forward(fun, primals_in)
    residuals = _residuals(tape)

    def f_vjp(res: list[Any], *cts: Any) -> list[Any]:
        env = None
        if any(a is not b for a, b in zip(res, residuals, strict=True)):
            # Other values in the residuals' places (tracers of a `jit` f_vjp is passed to).
            env = {id(a): b for a, b in zip(residuals, res, strict=True)}
        return backward(tape, in_vars, in_avals, out_vars, list(cts), env)

    return primals_out, f_vjp, residuals


def vjp_flat_now(
    fun: Callable[..., Sequence[Any]], primals_in: Sequence[Any]
) -> tuple[list[Any], Callable[[list[Any]], list[Any]]]:
    """`vjp_flat` for a backward pass run on the tape's own values (eager `grad`): primal
    outputs and `f_vjp(cts)`. No residuals are collected (a walk over the whole tape):
    nothing can be passed in their place."""
    tape, in_vars, in_avals, primals_out, out_vars = _forward(fun, primals_in)

    def f_vjp(cts: list[Any]) -> list[Any]:
        return backward(tape, in_vars, in_avals, out_vars, cts)

    return primals_out, f_vjp


def _residuals(tape: list[Entry]) -> list[Any]:
    """The arrays the tape's equations read, each once, in tape order."""
    seen: set[int] = set()
    out = []
    array_types = _array_types()
    for prim, ins, params, _ in tape:
        if prim is _VJP:
            res = params[2]
            vals = [*params[1], *res] if type(res) is tuple else [*params[1], res]
        else:
            vals = params[1] if prim is _JAXPR else ins
        for x in vals:
            if type(x) is not LinVar and isinstance(x, array_types):
                if id(x) not in seen:
                    seen.add(id(x))
                    out.append(x)
    return out


_ARRAY_TYPES: tuple[type, ...] | None = None


def _array_types() -> tuple[type, ...]:
    global _ARRAY_TYPES
    if _ARRAY_TYPES is None:
        _ARRAY_TYPES = (Array, np.ndarray, core.Tracer)
    return _ARRAY_TYPES


# --- backward -------------------------------------------------------------------------------


def backward(
    tape: list[Entry],
    in_vars: list[LinVar | None],
    in_avals: list[ShapedArray],
    out_vars: list[LinVar | None],
    cts_out: list[Any],
    env: dict[int, Any] | None = None,
) -> list[Any]:
    """Input cotangents (`Zero` where none flows) from output ones, transposing the tape.

    `env` maps ids of residuals to values to read in their place.
    """
    add_any = _add_cotangents
    ct_env: dict[LinVar, Any] = {}
    undefined: dict[ShapedArray, UndefinedPrimal] = {}

    def write(v: LinVar, ct: Any) -> None:
        if v.dead:
            return
        prev = ct_env.get(v)
        ct_env[v] = ct if prev is None else add_any(prev, ct)

    for v, ct in zip(out_vars, cts_out, strict=True):
        if v is not None and ct is not None and type(ct) is not Zero:
            write(v, ct)
    for prim, ins, params, outs in reversed(tape):
        if len(outs) == 1:
            ct = ct_env.pop(outs[0], None)
            if ct is None:
                continue
            cts = [ct]
        else:
            cts = [ct_env.pop(v, None) for v in outs]
            if all(c is None for c in cts):
                continue
        if prim is _VJP:
            rule, primals, out, ps = params
            if env is not None:
                primals = [env.get(id(x), x) for x in primals]
                if type(out) is tuple:
                    out = tuple([env.get(id(x), x) for x in out])
                else:
                    out = env.get(id(out), out)
            if type(out) is tuple:  # several results: their cotangents as a list
                cts_in = rule(cts, out, primals, ins, **ps)
            else:
                cts_in = rule(ct, out, primals, ins, **ps)
            for x, ct in zip(ins, cts_in, strict=True):
                if x is not None and ct is not None and type(ct) is not Zero:
                    prev = ct_env.get(x)
                    ct_env[x] = ct if prev is None else add_any(prev, ct)
            continue
        if prim is _JAXPR:
            jaxpr, consts = params
            if env is not None:
                consts = [env.get(id(c), c) for c in consts]
            cts = [Zero(v.aval) if c is None else c for v, c in zip(outs, cts, strict=True)]
            cts_in = backward_pass(jaxpr, consts, [UndefinedPrimal(v.aval) for v in ins], cts)
        else:
            rule = prim.transpose_rule
            if rule is None:
                raise MissingRuleError(prim.name, "transpose", "Reverse-mode differentiation")
            args = []
            for x in ins:
                if type(x) is LinVar:
                    u = undefined.get(x.aval)
                    if u is None:  # one per type: rules only read its aval
                        u = undefined[x.aval] = UndefinedPrimal(x.aval)
                    args.append(u)
                else:
                    args.append(x if env is None else env.get(id(x), x))
            if prim.multiple_results:
                cts = [Zero(v.aval) if c is None else c for c, v in zip(cts, outs, strict=True)]
                cts_in = rule(cts, *args, **params)
            else:
                cts_in = rule(cts[0], *args, **params)
        if prim is _JAXPR:
            for v, ct in zip(ins, cts_in, strict=True):
                if ct is not None and type(ct) is not Zero:
                    write(v, ct)
        else:
            for x, ct in zip(ins, cts_in, strict=True):  # `write`, inlined: the hot loop
                if type(x) is LinVar and ct is not None and type(ct) is not Zero and not x.dead:
                    prev = ct_env.get(x)
                    ct_env[x] = ct if prev is None else add_any(prev, ct)
    out = []
    for v, aval in zip(in_vars, in_avals, strict=True):
        ct = None if v is None else ct_env.get(v)
        out.append(Zero(aval) if ct is None else ct)
    return out


def _add_cotangents(x: Any, y: Any) -> Any:
    """`add_any(x, y)`: two cotangents of one value summed. Two host Arrays of one type (the
    commonest case on the CPU: ~190 sums per grad_rnn call) are summed by one NumPy call, not
    a primitive bound (~5 µs of dispatch each); anything else binds add_any."""
    if type(x) is Array and type(y) is Array:
        vx = x._npy
        vy = y._npy
        aval = x.aval
        if (
            vx is not None
            and vy is not None
            and (y.aval is aval or y.aval == aval)
            and vx.size <= _HOST_SUM_LIMIT  # (the ndarray's, in C: the aval's is a loop)
            and on_cpu()
        ):
            token = fp_state.set(FP_QUIET)  # inf + -inf: NaN without a warning, as XLA
            try:
                r = np.add(vx, vy)
            finally:
                fp_state.reset(token)
            if type(r) is not np.ndarray:  # NumPy gives scalars for 0-d results
                r = np.asarray(r)
            return wrap_host(r, aval)
    return add_any(x, y)


# --- the in-place fallback ------------------------------------------------------------------


def value_and_grad_by_tracing(
    fun: Callable[..., Any], args: tuple[Any, ...], argnums: tuple[int, ...]
) -> tuple[Any, tuple[Any, ...]] | None:
    """`(fun(*args), grads w.r.t. args[argnums])` from `fun` traced to a jaxpr as a whole and
    differentiated eagerly, or None when it cannot be traced (it needs values).

    Eager `grad`'s answer to a function that fills a constant array in place (`x = zeros(n);
    x[i] = f(w)`): run eagerly, `x` is a concrete Array that cannot hold a tracked value, and
    its eager run raised `InPlaceUpdateError`; traced as a whole, `zeros(n)` is traced too.
    Only that failed run and this trace run the Python; nothing is compiled as a whole.
    """
    flat, in_tree = tree_flatten(args)
    avals = []
    for i, x in enumerate(flat):
        if type(x) is Array or type(x) is float:
            avals.append(get_aval(x))
        elif type(x) is np.ndarray:
            flat[i] = device_put(x)
            avals.append(flat[i].aval)
        else:  # ints (value-dependent promotion), tracers, other objects
            return None
    starts, pos = [], 0
    for a in args:
        starts.append(pos)
        pos += len(tree_flatten(a)[0])
    diff: list[int] = []
    for i in argnums:
        diff.extend(range(starts[i], starts[i] + len(tree_flatten(args[i])[0])))

    def flat_fun(*leaves: Any) -> list[Any]:
        return [fun(*tree_unflatten(in_tree, list(leaves)))]

    try:
        closed = trace_to_jaxpr(flat_fun, avals, "eager grad (traced)")
    except Exception:  # noqa: BLE001  # it needs values: the eager error is the one to raise
        return None
    (aval,) = closed.out_avals
    if aval.shape != () or dtypes.kind(aval.dtype) not in "fc":
        return None
    jaxpr, consts = closed.jaxpr, list(closed.consts)

    def f_of_diff(*d: Any) -> list[Any]:
        full_args = list(flat)
        for i, v in zip(diff, d, strict=True):
            full_args[i] = v
        return eval_jaxpr(jaxpr, consts, *full_args)

    (out,), f_vjp, res = vjp_flat(f_of_diff, [flat[i] for i in diff])
    grads = f_vjp(res, full((), 1, get_aval(out).dtype))
    grads = [instantiate(g) for g in grads]
    out_grads, k = [], 0
    for i in argnums:
        leaves, tree = tree_flatten(args[i])
        out_grads.append(tree_unflatten(tree, grads[k : k + len(leaves)]))
        k += len(leaves)
    return out, tuple(out_grads)
