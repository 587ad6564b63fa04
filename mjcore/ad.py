"""Autodidax Part 1 (forward-mode autodiff with `jvp`): JVPTrace with symbolic zero tangents."""

from __future__ import annotations

import functools
import weakref
from typing import Any

import numpy as np

from mjcore import core, dtypes

# The `name as name` imports are re-exports: rules and callers import them from `ad` too.
from mjcore.ad_util import CONSTANT as CONSTANT
from mjcore.ad_util import LINEAR as LINEAR
from mjcore.ad_util import MULTILINEAR as MULTILINEAR
from mjcore.ad_util import UndefinedPrimal as UndefinedPrimal
from mjcore.ad_util import Zero as Zero
from mjcore.ad_util import is_undefined_primal as is_undefined_primal
from mjcore.ad_util import linear_jvp as linear_jvp
from mjcore.core import Primitive, ShapedArray, Trace, Tracer, get_aval
from mjcore.dispatch import host_limit
from mjcore.errors import ConcretizationTypeError, MissingRuleError
from mjcore.jaxpr import ClosedJaxpr, Literal, Var, eval_closed_jaxpr
from mjcore.lax.base import add_any, full
from mjcore.partial_eval import PartialVal, partial_eval_flat, trace_to_jaxpr


def zeros_like_aval(aval: ShapedArray) -> Any:
    return full(aval.shape, 0, aval.dtype)


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

    def __float__(self) -> float:
        # As JAX: float() of a differentiated value would silently drop its derivative
        # (grad(lambda x: float(x) * x) would be 2x, not 4x); int() and bool() stay allowed.
        if type(self.tangent) is not Zero:
            raise ConcretizationTypeError(
                f"Abstract tracer value encountered where a concrete value is expected: float() "
                f"was called on a differentiated array {self.aval.str_short()} "
                f"({self._trace.main.description}). A Python float would lose its derivative. "
                "Fix: keep it an array, or take float(mjcore.lax.stop_gradient(x)) if its "
                "derivative should be zero."
            )
        return super().__float__()

    def __complex__(self) -> complex:
        if type(self.tangent) is not Zero:
            raise ConcretizationTypeError(
                f"Abstract tracer value encountered where a concrete value is expected: "
                f"complex() was called on a differentiated array {self.aval.str_short()} "
                f"({self._trace.main.description}). A Python complex would lose its derivative."
            )
        return super().__complex__()


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


# `mjcore.eager_fusion.fuse_eagerly`, installed by that module (it sits above this one: it
# builds on `jit`); until then a rule body runs primitive by primitive, with the same values.
_fuse_rule_body: Any = None


def install_rule_fuser(fuse: Any) -> None:
    """Make `fused_rule_body` replay rule bodies with `fuse` (`fuse_eagerly`)."""
    global _fuse_rule_body
    _fuse_rule_body = fuse


def fused_rule_body(fun: Any) -> Any:
    """`fun` (positional Arrays in, an Array out, static keywords) replayed as one program when
    called eagerly (`mjcore.eager_fusion.fuse_eagerly`): the backward pass of eager grad runs a
    direct rule's few primitives without a `bind` each. Traced calls run `fun` itself."""
    fused: list[Any] = []

    def call(*args: Any, **params: Any) -> Any:
        if not fused:
            if _fuse_rule_body is None:
                return fun(*args, **params)
            fused.append(_fuse_rule_body(fun))
        return fused[0](*args, **params)

    return call


def def_transposed_jvp_vjp(primitive: Primitive, host: Any = None) -> None:
    """Register, as eager reverse mode's direct rule of a primitive of one array operand, its
    jvp rule linearized at the operand and transposed when a cotangent arrives: a
    `fused_rule_body`, so an eager backward pass replays the primal and transposed equations
    as one program (on the host, no bind), and the forward pass only evaluates the primitive
    (its jvp rule may bind tens of primitives: reduce_prod's tree, cumprod's scan).

    `host(ct, x, **params)`, if given, is tried first: the same cotangent by NumPy calls on
    the host values, or None where the program must run. Operands above the primitive's host
    limit (`dispatch.host_limit`) run the equations one by one instead, as the jvp route would
    have in the forward pass: no program compiled per shape in the backward pass."""

    def vjp_fun(ct: Any, x: Any, **params: Any) -> Any:
        def apply(x: Any) -> list[Any]:
            return [primitive.bind1(x, **params)]

        _, f_vjp, residuals = vjp_flat(apply, [x])
        (x_bar,) = f_vjp(residuals, ct)
        return instantiate(x_bar)

    vjp_body = fused_rule_body(vjp_fun)

    def rule(ct: Any, out: Any, primals: list[Any], linear: list[Any], **params: Any) -> list:
        (x,) = primals
        x_bar = None if host is None else host(ct, x, **params)
        if x_bar is None:
            aval = get_aval(x)
            body = vjp_body if _host_sized(primitive, aval) else vjp_fun
            x_bar = body(ct, x, **params)
        return [x_bar]

    primitive.def_eager_vjp(rule)


def _host_sized(primitive: Primitive, aval: ShapedArray) -> bool:
    """Whether eager dispatch runs `primitive`'s host rule on an operand of `aval` (its size
    within `dispatch.host_limit`)."""
    return aval.size <= host_limit(primitive, aval.dtype)


# --- Reverse mode (Autodidax Part 4): linearize, transpose, vjp ------------------------------


def linearize_flat(fun: Any, primals_in: list[Any]) -> tuple[list[Any], Any, list[Any]]:
    """Primal outputs, plus the linear jaxpr of the tangent map and its residual consts."""
    n = len(primals_in)
    pvals_in = [PartialVal.known(x) for x in primals_in] + [
        PartialVal.unknown(tangent_aval(get_aval(x))) for x in primals_in
    ]

    def fun_jvp(*primals_tangents: Any) -> list[Any]:
        primals, tangents_in = primals_tangents[:n], primals_tangents[n:]
        tangents = [
            t if is_differentiable(get_aval(p)) else Zero(tangent_aval(get_aval(p)))
            for p, t in zip(primals, tangents_in, strict=True)
        ]
        primals_out, tangents_out = jvp_flat(fun, list(primals), tangents)
        return [*primals_out, *(instantiate(t) for t in tangents_out)]

    def instantiate_tangents(n_out: int) -> list[bool]:
        # Primal outputs stay known; every tangent output is part of the linear jaxpr.
        return [False] * (n_out // 2) + [True] * (n_out // 2)

    jaxpr, pvals_out, consts = partial_eval_flat(fun_jvp, pvals_in, instantiate_tangents)
    m = len(pvals_out) // 2
    primals_out = []
    for pval in pvals_out[:m]:
        if not pval.is_known:
            raise AssertionError("linearize: a primal output depends on tangents")
        primals_out.append(pval.const)
    return primals_out, jaxpr, consts


def backward_pass(jaxpr: Any, consts: list[Any], args: list[Any], cts_out: list[Any]) -> list:
    """Transpose a linear jaxpr: cotangents of the `UndefinedPrimal` args from output ones.

    Equations with no undefined input (non-linear parts, e.g. of a jitted callee) are
    evaluated forward first; the rest are transposed in reverse order.
    """
    primal_env: dict[Any, Any] = {}
    ct_env: dict[Any, Any] = {}

    def read_primal(x: Any) -> Any:
        if type(x) is Literal:
            return x.val
        return primal_env.get(x, UndefinedPrimal(x.aval))

    def write_cotangent(x: Any, ct: Any) -> None:
        if type(x) is not Var or ct is None or type(ct) is Zero:
            return
        prev = ct_env.get(x)
        ct_env[x] = ct if prev is None else _add_cotangents(prev, ct)

    for v, val in zip(jaxpr.constvars, consts, strict=True):
        primal_env[v] = val
    for v, val in zip(jaxpr.invars, args, strict=True):
        if type(val) is not UndefinedPrimal:
            primal_env[v] = val
    linear_eqns = []
    for eqn in jaxpr.eqns:
        ins = [read_primal(x) for x in eqn.inputs]
        if any(type(x) is UndefinedPrimal for x in ins):
            linear_eqns.append(eqn)
        else:
            outs = core.bind(eqn.primitive, ins, eqn.params)
            for v, val in zip(eqn.out_binders, outs, strict=True):
                primal_env[v] = val
    for x, ct in zip(jaxpr.outs, cts_out, strict=True):
        write_cotangent(x, ct)
    for eqn in reversed(linear_eqns):
        cts = [ct_env.pop(v, None) for v in eqn.out_binders]
        if all(ct is None for ct in cts):
            continue
        rule = eqn.primitive.transpose_rule
        if rule is None:
            raise MissingRuleError(eqn.primitive.name, "transpose", "Reverse-mode differentiation")
        ins = [read_primal(x) for x in eqn.inputs]
        if eqn.primitive.multiple_results:
            cts = [
                Zero(v.aval.strip_weak_type()) if ct is None else ct
                for ct, v in zip(cts, eqn.out_binders, strict=True)
            ]
            cts_in = rule(cts, *ins, **eqn.params)
        else:
            cts_in = rule(cts[0], *ins, **eqn.params)
        for x, ct in zip(eqn.inputs, cts_in, strict=True):
            write_cotangent(x, ct)
    out = []
    for v, val in zip(jaxpr.invars, args, strict=True):
        if type(val) is UndefinedPrimal:
            ct = ct_env.get(v)
            out.append(Zero(val.aval) if ct is None else ct)
    return out


def _add_cotangents(x: Any, y: Any) -> Any:
    return add_any(x, y)


def vjp_flat(fun: Any, primals_in: list[Any]) -> tuple[list[Any], Any, list[Any]]:
    """Primal outputs, a function `f_vjp(residuals, *cts)` from output cotangents to input
    cotangents, and the residuals it takes (kept apart so that callers can pass them as
    pytree children, e.g. through `jit`)."""
    primals_out, jaxpr, consts = linearize_flat(fun, primals_in)
    undefined = [UndefinedPrimal(tangent_aval(get_aval(x))) for x in primals_in]

    def f_vjp(residuals: list[Any], *cts: Any) -> list[Any]:
        return backward_pass(jaxpr, residuals, undefined, list(cts))

    return primals_out, f_vjp, list(consts)


def linear_transpose_rule(primitive: Primitive, transpose: Any) -> None:
    """Register a transpose for a primitive linear in its only array operand."""

    def rule(ct: Any, x: Any, **params: Any) -> list[Any]:
        return [transpose(ct, x.aval, **params)]

    primitive.def_transpose(rule)


# --- jaxpr-level jvp and transpose (for pjit and the control-flow primitives) -------------

_jvp_cache: weakref.WeakKeyDictionary[ClosedJaxpr, dict[Any, Any]] = weakref.WeakKeyDictionary()
_transpose_cache: weakref.WeakKeyDictionary[ClosedJaxpr, dict[Any, Any]] = (
    weakref.WeakKeyDictionary()
)


def jvp_jaxpr(
    closed: ClosedJaxpr,
    nonzeros: tuple[bool, ...],
    instantiate: tuple[bool, ...] | None = None,
) -> tuple[ClosedJaxpr, list[bool]]:
    """A jaxpr computing (primals_out, nonzero tangents_out) from (primals, nonzero tangents).

    Outputs flagged in `instantiate` always get a tangent (zeros if it is symbolically zero),
    so that callers can give several jaxprs one output type (cond branches, loop carries).
    """
    key = (nonzeros, instantiate)
    cache = _jvp_cache.setdefault(closed, {})
    hit = cache.get(key)
    if hit is not None:
        return hit
    in_avals = closed.in_avals
    n = len(in_avals)
    out_nonzeros: list[bool] = []

    def fun(*args: Any) -> list[Any]:
        primals, nz_tangents = args[:n], iter(args[n:])
        tangents = [
            next(nz_tangents) if nz else Zero(a.strip_weak_type())
            for nz, a in zip(nonzeros, in_avals, strict=True)
        ]
        primals_out, tangents_out = jvp_flat(
            functools.partial(eval_closed_jaxpr, closed), list(primals), tangents
        )
        if instantiate is not None:
            tangents_out = [
                zeros_like_aval(t.aval) if inst and type(t) is Zero else t
                for t, inst in zip(tangents_out, instantiate, strict=True)
            ]
        out_nonzeros[:] = [type(t) is not Zero for t in tangents_out]
        return [*primals_out, *(t for t in tangents_out if type(t) is not Zero)]

    tangent_avals = [a.strip_weak_type() for a, nz in zip(in_avals, nonzeros, strict=True) if nz]
    jvp_closed = trace_to_jaxpr(fun, [*in_avals, *tangent_avals], "jvp")
    result = (jvp_closed, list(out_nonzeros))
    cache[key] = result
    return result


def transpose_closed(closed: ClosedJaxpr, undefined: tuple[bool, ...]) -> ClosedJaxpr:
    """A jaxpr mapping (defined args, output cotangents) to the undefined args' cotangents."""
    cache = _transpose_cache.setdefault(closed, {})
    hit = cache.get(undefined)
    if hit is not None:
        return hit
    in_avals = closed.in_avals
    defined_avals = [a for a, u in zip(in_avals, undefined, strict=True) if not u]
    ct_avals = [a.strip_weak_type() for a in closed.out_avals]
    n_def = len(defined_avals)

    def fun(*args: Any) -> list[Any]:
        defined, cts = iter(args[:n_def]), list(args[n_def:])
        full_args = [
            UndefinedPrimal(a.strip_weak_type()) if u else next(defined)
            for a, u in zip(in_avals, undefined, strict=True)
        ]
        cts_in = backward_pass(closed.jaxpr, closed.consts, full_args, cts)
        return [instantiate(c) for c in cts_in]

    result = trace_to_jaxpr(fun, [*defined_avals, *ct_avals], "transpose")
    cache[undefined] = result
    return result
