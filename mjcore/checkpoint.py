"""Autodidax Part 4's partial evaluation, rematerialising: `checkpoint` (alias `remat`) keeps
only a function's inputs for the backward pass and recomputes the rest, as JAX's ad_checkpoint."""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from mjcore import core
from mjcore.ad import Zero, instantiate, is_undefined_primal, jvp_jaxpr, transpose_closed
from mjcore.backend import client as backend
from mjcore.backend.hlo import Value
from mjcore.backend.lowering import LoweringContext, lower_jaxpr_body
from mjcore.batching import NOT_MAPPED, batch_jaxpr
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var, eval_jaxpr, hoist_consts
from mjcore.partial_eval import (
    PartialEvalTrace,
    PartialEvalTracer,
    dce_jaxpr,
    eqn_has_side_effects,
    trace_to_jaxpr,
)
from mjcore.tree_util import tree_flatten, tree_unflatten

# A policy says whether the outputs of one equation may be saved for the backward pass:
# policy(primitive, *avals_in, **params) -> bool. None saves nothing but the inputs.
Policy = Callable[..., bool] | None


def checkpoint(
    fun: Callable[..., Any] | None = None,
    *,
    prevent_cse: bool = True,
    policy: Policy = None,
    static_argnums: int | Sequence[int] = (),
) -> Any:
    """Make `fun` recompute its intermediate values on the backward pass, as `jax.checkpoint`.

    Differentiating `checkpoint(fun)` saves only the inputs of `fun` as residuals (plus what
    `policy` allows); the backward pass reruns `fun`'s forward computation from them. This
    trades compute for memory. Values are unchanged::

        def checkpoint(fun):
            return fun  # ... but grad(checkpoint(fun)) stores inputs, not intermediates

    Args:
      fun: the function; its arguments are arrays or pytrees of arrays.
      prevent_cse: keep XLA from merging the recomputation with the forward pass (an
        optimization barrier on the recomputation's inputs).
      policy: `policy(primitive, *avals_in, **params) -> bool` marks equations whose outputs
        may be saved instead of recomputed; see `checkpoint_policies`. None saves nothing.
      static_argnums: arguments that are not arrays (Python values the function branches on).

    `fun` is traced to a jaxpr when called, so Python control flow may only depend on static
    arguments.
    """
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    if fun is None:
        return functools.partial(
            checkpoint, prevent_cse=prevent_cse, policy=policy, static_argnums=static
        )
    name = getattr(fun, "__name__", type(fun).__name__)

    @functools.wraps(fun)
    def fun_remat(*args: Any, **kwargs: Any) -> Any:
        statics = {i % len(args): args[i] for i in static} if args else {}
        dyn_args = tuple(a for i, a in enumerate(args) if i not in statics)
        args_flat, in_tree = tree_flatten((dyn_args, kwargs))
        for x in args_flat:
            if not core.is_array_like(x):
                raise TypeError(
                    f"checkpoint({name}): arguments must be arrays or Python scalars, got "
                    f"{type(x).__name__}; mark it with static_argnums"
                )
        out_trees = []

        def flat_fun(*xs: Any) -> list[Any]:
            dyn, kw = tree_unflatten(in_tree, xs)
            it = iter(dyn)
            full = [statics[i] if i in statics else next(it) for i in range(len(args))]
            out_flat, out_tree = tree_flatten(fun(*full, **kw))
            for x in out_flat:
                if not core.is_array_like(x):
                    raise TypeError(
                        f"checkpoint({name}): the function returned a {type(x).__name__}; "
                        "return arrays (or pytrees of arrays)"
                    )
            out_trees.append(out_tree)
            return out_flat

        avals = [get_aval(x) for x in args_flat]
        closed = trace_to_jaxpr(flat_fun, avals, f"checkpoint({name})")
        call_jaxpr, consts = hoist_consts(closed)
        outs = checkpoint_p.bind(
            *consts,
            *args_flat,
            jaxpr=call_jaxpr,
            prevent_cse=prevent_cse,
            differentiated=False,
            policy=policy,
        )
        return tree_unflatten(out_trees[0], outs)

    return fun_remat


remat = checkpoint


class checkpoint_policies:
    """Common `checkpoint` policies (as `jax.checkpoint_policies`)."""

    @staticmethod
    def nothing_saveable(prim: Primitive, *avals: ShapedArray, **params: Any) -> bool:
        """Save only the inputs: recompute everything (the default)."""
        return False

    @staticmethod
    def everything_saveable(prim: Primitive, *avals: ShapedArray, **params: Any) -> bool:
        """Save every residual: no recomputation (like not using checkpoint)."""
        return True

    @staticmethod
    def dots_saveable(prim: Primitive, *avals: ShapedArray, **params: Any) -> bool:
        """Save matrix products (`dot_general`), recompute the cheap elementwise work."""
        return prim.name == "dot_general"


# --- the checkpoint primitive ---------------------------------------------------------------

# Params: `jaxpr` (const-free ClosedJaxpr), `prevent_cse`, `differentiated` (this application
# is part of a derivative, so its inputs get an optimization barrier) and `policy`.
checkpoint_p = Primitive("checkpoint", multiple_results=True)


@checkpoint_p.def_impl
def _checkpoint_impl(*args: Any, jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


@checkpoint_p.def_abstract_eval
def _checkpoint_abstract_eval(
    *avals: ShapedArray, jaxpr: ClosedJaxpr, **_: Any
) -> list[ShapedArray]:
    for a, b in zip(avals, jaxpr.in_avals, strict=True):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise TypeError(f"checkpoint: argument {a.str_short()} does not match {b.str_short()}")
    return jaxpr.out_avals


@checkpoint_p.def_lowering
def _checkpoint_lowering(
    ctx: LoweringContext,
    *args: Value,
    jaxpr: ClosedJaxpr,
    prevent_cse: bool,
    differentiated: bool,
    policy: Policy,
) -> list[Value]:
    if prevent_cse and differentiated and args:
        # Without the barrier XLA would merge the recomputation with the forward pass.
        args = ctx.builder.op("stablehlo.optimization_barrier", list(args), [a.aval for a in args])
    return lower_jaxpr_body(ctx.builder, jaxpr.jaxpr, [], args)


@checkpoint_p.def_jvp(symbolic_zeros=True)
def _checkpoint_jvp(
    primals: list[Any],
    tangents: list[Any],
    *,
    jaxpr: ClosedJaxpr,
    prevent_cse: bool,
    differentiated: bool,
    policy: Policy,
) -> tuple[list[Any], list[Any]]:
    nonzeros = tuple(type(t) is not Zero for t in tangents)
    closed, out_nonzeros = jvp_jaxpr(jaxpr, nonzeros)
    call_jaxpr, consts = hoist_consts(closed)
    outs = checkpoint_p.bind(
        *consts,
        *primals,
        *(t for t in tangents if type(t) is not Zero),
        jaxpr=call_jaxpr,
        prevent_cse=prevent_cse,
        differentiated=True,
        policy=policy,
    )
    n = len(jaxpr.out_avals)
    nz_out = iter(outs[n:])
    tangents_out = [
        next(nz_out) if nz else Zero(a.strip_weak_type())
        for nz, a in zip(out_nonzeros, jaxpr.out_avals, strict=True)
    ]
    return outs[:n], tangents_out


@checkpoint_p.def_batching
def _checkpoint_batching(
    vals: list[Any], dims: list[int | None], *, jaxpr: ClosedJaxpr, **params: Any
) -> tuple[list[Any], list[int]]:
    axis_size = next(
        get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not NOT_MAPPED
    )
    call_jaxpr, consts = hoist_consts(batch_jaxpr(jaxpr, axis_size, tuple(dims)))
    outs = checkpoint_p.bind(*consts, *vals, jaxpr=call_jaxpr, **params)
    return outs, [0] * len(outs)


@checkpoint_p.def_transpose
def _checkpoint_transpose(
    cts: list[Any],
    *args: Any,
    jaxpr: ClosedJaxpr,
    prevent_cse: bool,
    differentiated: bool,
    policy: Policy,
) -> list[Any]:
    # The transposed jaxpr evaluates the non-linear equations forward first: the recomputation.
    undefined = tuple(is_undefined_primal(a) for a in args)
    call_jaxpr, consts = hoist_consts(transpose_closed(jaxpr, undefined))
    defined = [a for a, u in zip(args, undefined, strict=True) if not u]
    outs = iter(
        checkpoint_p.bind(
            *consts,
            *defined,
            *(instantiate(ct) for ct in cts),
            jaxpr=call_jaxpr,
            prevent_cse=prevent_cse,
            differentiated=True,
            policy=policy,
        )
    )
    return [next(outs) if u else None for u in undefined]


class _RematSplit(NamedTuple):
    """A checkpointed jaxpr split for partial evaluation.

    `known` maps known inputs to (known outputs, saved residuals); `unknown` maps (forwarded
    known inputs, saved residuals, unknown inputs) to unknown outputs, recomputing every known
    value it needs that the policy did not save. `forwarded` indexes the known inputs.
    """

    known: ClosedJaxpr
    unknown: ClosedJaxpr
    out_unknowns: list[bool]
    forwarded: list[int]
    num_saved: int


_split_cache: weakref.WeakKeyDictionary[ClosedJaxpr, dict[Any, _RematSplit]] = (
    weakref.WeakKeyDictionary()
)
backend.clear_at_exit(_split_cache.clear)


def _remat_split(closed: ClosedJaxpr, in_unknowns: tuple[bool, ...], policy: Policy) -> _RematSplit:
    cache = _split_cache.setdefault(closed, {})
    key = (in_unknowns, policy)
    hit = cache.get(key)
    if hit is None:
        hit = cache[key] = _remat_partial_eval(closed.jaxpr, in_unknowns, policy)
    return hit


def _remat_partial_eval(jaxpr: Jaxpr, in_unknowns: Sequence[bool], policy: Policy) -> _RematSplit:
    unknown = {v for v, u in zip(jaxpr.invars, in_unknowns, strict=True) if u}
    # Higher-order equations (scan, cond, pjit, checkpoint) with some unknown inputs are split
    # by their own rule; the residuals their known half makes are then recomputed like any
    # other known value.
    eqns = []
    for eqn in jaxpr.eqns:
        unks_in = [type(x) is Var and x in unknown for x in eqn.inputs]
        rule = eqn.primitive.partial_eval_jaxpr_rule
        split = rule(unks_in, eqn) if rule is not None and any(unks_in) else None
        if split is not None:
            eqn_known, eqn_unknown, _, _ = split
            eqns += [eqn_known, eqn_unknown]
            unknown.update(eqn_unknown.out_binders)
        else:
            eqns.append(eqn)
            if any(unks_in):
                unknown.update(eqn.out_binders)
    out_unknowns = [type(x) is Var and x in unknown for x in jaxpr.outs]
    # Walk back from the unknown outputs: known equations are recomputed unless saveable.
    # Side effects happen again in the recomputation too (a debug print shows twice), as in JAX.
    live = {x for x, u in zip(jaxpr.outs, out_unknowns, strict=True) if u and type(x) is Var}
    saved: dict[Var, None] = {}
    eqns_unknown = []
    for eqn in reversed(eqns):
        outs_live = [v for v in eqn.out_binders if v in live]
        if not outs_live and not eqn_has_side_effects(eqn):
            continue
        is_known = not any(v in unknown for v in eqn.out_binders)
        avals_in = [x.aval for x in eqn.inputs]
        if is_known and policy is not None and policy(eqn.primitive, *avals_in, **eqn.params):
            saved.update(dict.fromkeys(outs_live))
            continue
        eqns_unknown.append(eqn)
        live.update(x for x in eqn.inputs if type(x) is Var)
    eqns_unknown.reverse()
    known_in = [v for v, u in zip(jaxpr.invars, in_unknowns, strict=True) if not u]
    unknown_in = [v for v, u in zip(jaxpr.invars, in_unknowns, strict=True) if u]
    forwarded = [i for i, v in enumerate(known_in) if v in live]
    saved_vars = list(saved)
    known_outs = [x for x, u in zip(jaxpr.outs, out_unknowns, strict=True) if not u]
    known_eqns = [e for e in eqns if not any(v in unknown for v in e.out_binders)]
    known = dce_jaxpr(Jaxpr([], known_in, known_eqns, [*known_outs, *saved_vars]))
    unknown_outs = [x for x, u in zip(jaxpr.outs, out_unknowns, strict=True) if u]
    res_in = [known_in[i] for i in forwarded] + saved_vars
    unknown_jaxpr = Jaxpr([], [*res_in, *unknown_in], eqns_unknown, unknown_outs)
    return _RematSplit(
        ClosedJaxpr(known, []),
        ClosedJaxpr(unknown_jaxpr, []),
        out_unknowns,
        forwarded,
        len(saved_vars),
    )


@checkpoint_p.def_partial_eval
def _checkpoint_partial_eval(
    trace: PartialEvalTrace,
    tracers: list[PartialEvalTracer],
    *,
    jaxpr: ClosedJaxpr,
    prevent_cse: bool,
    differentiated: bool,
    policy: Policy,
) -> list[PartialEvalTracer]:
    split = _remat_split(jaxpr, tuple(not t.pval.is_known for t in tracers), policy)
    known_vals = [t.pval.const for t in tracers if t.pval.is_known]
    # The known half runs now, outside any checkpoint: only the unknown half is recomputed.
    outs = eval_jaxpr(split.known.jaxpr, [], *known_vals)
    n_known = len(outs) - split.num_saved
    residuals = [known_vals[i] for i in split.forwarded] + outs[n_known:]
    res_tracers = [trace.instantiate_const(trace.lift(r)) for r in residuals]
    unknown_in = [t for t in tracers if not t.pval.is_known]
    params = dict(jaxpr=split.unknown, prevent_cse=prevent_cse, differentiated=True, policy=policy)
    unknown_outs = iter(
        trace.stage_equation(
            checkpoint_p, [*res_tracers, *unknown_in], params, split.unknown.out_avals
        )
    )
    known_outs = iter(outs[:n_known])
    return [next(unknown_outs) if u else trace.lift(next(known_outs)) for u in split.out_unknowns]


def _checkpoint_partial_eval_jaxpr(
    unks_in: list[bool], eqn: JaxprEqn
) -> tuple[JaxprEqn, JaxprEqn, list[bool], list[Var]]:
    params = eqn.params
    split = _remat_split(params["jaxpr"], tuple(unks_in), params["policy"])
    ins_known = [x for x, u in zip(eqn.inputs, unks_in, strict=True) if not u]
    ins_unknown = [x for x, u in zip(eqn.inputs, unks_in, strict=True) if u]
    saved = [Var(a) for a in split.known.out_avals[len(split.known.out_avals) - split.num_saved :]]
    residuals = [ins_known[i] for i in split.forwarded] + saved
    outs = eqn.out_binders
    outs_known = [v for v, u in zip(outs, split.out_unknowns, strict=True) if not u]
    outs_unknown = [v for v, u in zip(outs, split.out_unknowns, strict=True) if u]
    eqn_known = JaxprEqn(
        checkpoint_p, ins_known, dict(params, jaxpr=split.known), outs_known + saved
    )
    eqn_unknown = JaxprEqn(
        checkpoint_p,
        residuals + ins_unknown,
        dict(params, jaxpr=split.unknown, differentiated=True),
        outs_unknown,
    )
    return eqn_known, eqn_unknown, split.out_unknowns, [r for r in residuals if type(r) is Var]


checkpoint_p.partial_eval_jaxpr_rule = _checkpoint_partial_eval_jaxpr
