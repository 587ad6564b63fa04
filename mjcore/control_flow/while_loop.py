"""Autodidax Part 5, continued: `while_loop` as the higher-order primitive `while`, holding a
closed jaxpr for the predicate and one for the body (constants are leading operands)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from mjcore import core
from mjcore.ad import Zero, instantiate, jvp_jaxpr
from mjcore.backend.lowering import LoweringContext, lower_jaxpr_body
from mjcore.batching import NOT_MAPPED, move_bdim, moveaxis_to
from mjcore.control_flow.common import (
    add_unused_invars,
    axis_size_of,
    batch_jaxpr,
    check_tree_and_types,
    def_compiled_impl,
    eval_closed,
    flatten_args,
    hoist_consts,
    permute_jaxpr,
    promote_weak_carry,
    split3,
    stage_whole_equation,
    trace_fun,
    typematch,
)
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.dispatch import device_put
from mjcore.errors import ConcretizationTypeError
from mjcore.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var
from mjcore.lax.base import broadcast_in_dim, select_n
from mjcore.lax.reductions import reduce_or
from mjcore.partial_eval import dce_jaxpr, partial_eval_jaxpr, trace_to_jaxpr
from mjcore.tree_util import PyTreeDef, tree_structure, tree_unflatten

_PRED_AVAL = ShapedArray((), np.dtype("bool"))

while_p = Primitive("while", multiple_results=True)
def_compiled_impl(while_p)


def while_loop(
    cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any
) -> Any:
    """Repeat `body_fun` while `cond_fun` holds, staged as one loop.

    Meaning::

        def while_loop(cond_fun, body_fun, init_val):
            val = init_val
            while cond_fun(val):
                val = body_fun(val)
            return val

    The carry `val` is a pytree whose structure, shapes and dtypes `body_fun` must preserve
    (a weakly typed initial value such as a Python scalar is promoted to the body's dtype).
    `cond_fun` returns a boolean scalar. Under `vmap` with a batched predicate the loop runs
    until every example is done, and finished examples keep their values.

    `jvp`, `vmap` and `linearize` work; reverse mode (`grad`, `vjp`) does not, because the
    number of iterations is unknown when the backward pass is built: use `scan`, or
    `fori_loop` with static (Python int) bounds.

    Raises:
      TypeError: if the body changes the carry's structure or types (naming the leaves), or
        `cond_fun` does not return a boolean scalar.
    """
    if not (callable(cond_fun) and callable(body_fun)):
        raise TypeError("while_loop: cond_fun and body_fun must be callable")
    init_flat, in_tree = flatten_args("while_loop", "init_val", init_val)
    if core._state.jit_disabled:  # `disable_jit()`: a Python loop while values are concrete
        try:
            val = tree_unflatten(in_tree, [_as_array(x) for x in init_flat])
            while cond_fun(val):
                val = body_fun(val)
            return val
        except ConcretizationTypeError:
            pass  # e.g. a predicate batched by vmap: stage the loop after all
    body, init_flat = _trace_body(body_fun, init_flat, in_tree)
    carry_avals = [get_aval(x) for x in init_flat]
    args_tree = tree_structure((tree_unflatten(in_tree, init_flat),))
    cond, cond_tree = trace_fun(cond_fun, args_tree, carry_avals, "while_loop cond_fun")
    if cond_tree.num_leaves != 1 or not typematch(cond.out_avals[0], _PRED_AVAL):
        got = ", ".join(a.str_short() for a in cond.out_avals)
        raise TypeError(f"while_loop: cond_fun must return a boolean scalar, got ({got})")
    cond_jaxpr, cond_consts = hoist_consts(cond)
    body_jaxpr, body_consts = hoist_consts(body)
    outs = while_p.bind(
        *cond_consts,
        *body_consts,
        *init_flat,
        cond_jaxpr=cond_jaxpr,
        body_jaxpr=body_jaxpr,
        cond_nconsts=len(cond_consts),
        body_nconsts=len(body_consts),
    )
    return tree_unflatten(in_tree, outs)


def _as_array(x: Any) -> Any:
    return x if isinstance(x, core.Tracer) else device_put(x)


def _trace_body(
    body_fun: Callable[[Any], Any], init_flat: list[Any], in_tree: PyTreeDef
) -> tuple[ClosedJaxpr, list[Any]]:
    """Trace `carry -> carry`, promoting weak initial carries, and check the carry type."""

    def trace(init: list[Any]) -> tuple[ClosedJaxpr, PyTreeDef, list[ShapedArray]]:
        avals = [get_aval(x) for x in init]
        args_tree = tree_structure((tree_unflatten(in_tree, init),))
        closed, out_tree = trace_fun(body_fun, args_tree, avals, "while_loop body_fun")
        return closed, out_tree, avals

    closed, out_tree, avals = trace(init_flat)
    if out_tree == in_tree:
        init_flat, changed = promote_weak_carry(init_flat, avals, closed.out_avals)
        if changed:
            closed, out_tree, avals = trace(init_flat)
    check_tree_and_types(
        "while_loop",
        "the input carry",
        in_tree,
        avals,
        "the carry output",
        out_tree,
        closed.out_avals,
        "Revise body_fun so that the carry output has the structure, shapes and dtypes of "
        "init_val.",
    )
    return closed, init_flat


def _check_inputs(jaxpr: ClosedJaxpr, avals: Sequence[ShapedArray], what: str) -> None:
    if len(jaxpr.in_avals) != len(avals) or not all(map(typematch, jaxpr.in_avals, avals)):
        raise TypeError(f"while: operands do not match the inputs of {what}")


@while_p.def_abstract_eval
def _while_abstract_eval(
    *avals: ShapedArray, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts
) -> list[ShapedArray]:
    cc, bc, init = split3(avals, cond_nconsts, body_nconsts)
    _check_inputs(cond_jaxpr, [*cc, *init], "cond_jaxpr")
    _check_inputs(body_jaxpr, [*bc, *init], "body_jaxpr")
    if len(cond_jaxpr.out_avals) != 1 or not typematch(cond_jaxpr.out_avals[0], _PRED_AVAL):
        raise TypeError("while: cond_jaxpr must return one boolean scalar")
    outs = body_jaxpr.out_avals
    if len(outs) != len(init) or not all(map(typematch, outs, init)):
        raise TypeError("while: body_jaxpr must return the carry type")
    return [
        a.update(weak_type=a.weak_type and o.weak_type) for a, o in zip(init, outs, strict=True)
    ]


@while_p.def_lowering
def _while_lowering(
    ctx: LoweringContext, *args: Any, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts
):
    b = ctx.builder
    cc, bc, init = split3(args, cond_nconsts, body_nconsts)
    carry_avals = [a.strip_weak_type() for a in ctx.avals_out]

    # Regions read the constants from the enclosing function instead of carrying them.
    def cond_region(inner: Any, *carry: Any) -> list[Any]:
        return lower_jaxpr_body(inner, cond_jaxpr.jaxpr, [], [*cc, *carry])

    def body_region(inner: Any, *carry: Any) -> list[Any]:
        return lower_jaxpr_body(inner, body_jaxpr.jaxpr, [], [*bc, *carry])

    regions = [b.region(carry_avals, cond_region), b.region(carry_avals, body_region)]
    return b.op("stablehlo.while", init, carry_avals, regions=regions)


def _while_jvp(
    primals: list[Any], tangents: list[Any], *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts
):
    cc, bc, init = split3(primals, cond_nconsts, body_nconsts)
    _, bc_dot, init_dot = split3(tangents, cond_nconsts, body_nconsts)
    bc_nz = [type(t) is not Zero for t in bc_dot]
    # Fixed point: a carry has a nonzero tangent if its initial value does, or if the body
    # gives it one from a nonzero input.
    carry_nz = [type(t) is not Zero for t in init_dot]
    while True:
        _, out_nz = jvp_jaxpr(body_jaxpr, tuple(bc_nz + carry_nz))
        new_nz = [a or b for a, b in zip(carry_nz, out_nz, strict=True)]
        if new_nz == carry_nz:
            break
        carry_nz = new_nz
    body_jvp, jvp_consts = hoist_consts(
        jvp_jaxpr(body_jaxpr, tuple(bc_nz + carry_nz), tuple(carry_nz))[0]
    )
    # Inputs (jvp consts, bc, carry, bc_dot, carry_dot) -> (jvp consts, bc, bc_dot; carry,
    # carry_dot), the while's (consts; carry) layout.
    n0, nb, nk, nbd = len(jvp_consts), len(bc), len(init), sum(bc_nz)
    nkd = sum(carry_nz)
    order = [
        *range(n0 + nb),
        *range(n0 + nb + nk, n0 + nb + nk + nbd),
        *range(n0 + nb, n0 + nb + nk),
        *range(n0 + nb + nk + nbd, n0 + nb + nk + nbd + nkd),
    ]
    body = permute_jaxpr(body_jvp.jaxpr, order, range(nk + nkd))
    dot_avals = [
        a.strip_weak_type() for a, nz in zip(body_jaxpr.out_avals, carry_nz, strict=True) if nz
    ]
    cond = add_unused_invars(cond_jaxpr.jaxpr, dot_avals, len(cond_jaxpr.in_avals))
    outs = while_p.bind(
        *cc,
        *jvp_consts,
        *bc,
        *(t for t in bc_dot if type(t) is not Zero),
        *init,
        *(instantiate(t) for t, nz in zip(init_dot, carry_nz, strict=True) if nz),
        cond_jaxpr=ClosedJaxpr(cond, []),
        body_jaxpr=ClosedJaxpr(body, []),
        cond_nconsts=cond_nconsts,
        body_nconsts=n0 + nb + nbd,
    )
    primals_out, nz_out = outs[:nk], iter(outs[nk:])
    tangents_out = [
        next(nz_out) if nz else Zero(a.strip_weak_type())
        for nz, a in zip(carry_nz, body_jaxpr.out_avals, strict=True)
    ]
    return primals_out, tangents_out


while_p.def_jvp(_while_jvp, symbolic_zeros=True)


@while_p.def_batching
def _while_batching(
    vals: list[Any], dims: list[int | None], *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts
):
    axis_size = axis_size_of(vals, dims)
    vals = [v if d is NOT_MAPPED else move_bdim(v, d, 0) for v, d in zip(vals, dims, strict=True)]
    cc_b, bc_b, carry_b = split3([d is not NOT_MAPPED for d in dims], cond_nconsts, body_nconsts)
    # Fixed point on which carries are batched; a batched predicate batches them all.
    while True:
        _, out_b = batch_jaxpr(body_jaxpr, axis_size, bc_b + carry_b, False)
        new_b = [a or b for a, b in zip(carry_b, out_b, strict=True)]
        if new_b == carry_b:
            _, (pred_b,) = batch_jaxpr(cond_jaxpr, axis_size, cc_b + carry_b, False)
            if not pred_b or all(carry_b):
                break
            new_b = [True] * len(carry_b)
        carry_b = new_b
    cc, bc, init = split3(vals, cond_nconsts, body_nconsts)
    init = [
        moveaxis_to(x, NOT_MAPPED, 0, axis_size) if b and d is NOT_MAPPED else x
        for x, b, d in zip(init, carry_b, dims[cond_nconsts + body_nconsts :], strict=True)
    ]
    if not pred_b:
        cond_b, ccc = hoist_consts(batch_jaxpr(cond_jaxpr, axis_size, cc_b + carry_b, False)[0])
        body_b, bcc = hoist_consts(batch_jaxpr(body_jaxpr, axis_size, bc_b + carry_b, carry_b)[0])
        outs = while_p.bind(
            *ccc,
            *cc,
            *bcc,
            *bc,
            *init,
            cond_jaxpr=cond_b,
            body_jaxpr=body_b,
            cond_nconsts=len(ccc) + len(cc),
            body_nconsts=len(bcc) + len(bc),
        )
        return outs, [0 if b else NOT_MAPPED for b in carry_b]
    # Batched predicate: loop while any example is live; finished examples keep their carry.
    cond_b = batch_jaxpr(cond_jaxpr, axis_size, cc_b + carry_b, True)[0]
    body_b = batch_jaxpr(body_jaxpr, axis_size, bc_b + carry_b, True)[0]
    nc, nb = len(cc), len(bc)

    def new_cond(*args: Any) -> list[Any]:
        (pred,) = eval_closed(cond_b)(*args)
        return [reduce_or(pred, (0,))]

    def new_body(*args: Any) -> list[Any]:
        cc_, bc_, carry = split3(args, nc, nb)
        (pred,) = eval_closed(cond_b)(*cc_, *carry)
        new = eval_closed(body_b)(*bc_, *carry)
        return [
            select_n(broadcast_in_dim(pred, get_aval(old).shape, (0,)), old, x)
            for old, x in zip(carry, new, strict=True)
        ]

    carry_avals = [get_aval(x) for x in init]
    cc_avals, bc_avals = [get_aval(x) for x in cc], [get_aval(x) for x in bc]
    cond_j, ccc = hoist_consts(trace_to_jaxpr(new_cond, [*cc_avals, *carry_avals], "vmap"))
    body_j, bcc = hoist_consts(
        trace_to_jaxpr(new_body, [*cc_avals, *bc_avals, *carry_avals], "vmap")
    )
    outs = while_p.bind(
        *ccc,
        *cc,
        *bcc,
        *cc,
        *bc,
        *init,
        cond_jaxpr=cond_j,
        body_jaxpr=body_j,
        cond_nconsts=len(ccc) + nc,
        body_nconsts=len(bcc) + nc + nb,
    )
    return outs, [0] * len(outs)


# --- partial evaluation: known carries run in a loop of their own -----------------------------


class _WhileSplit(NamedTuple):
    in_unknowns: list[bool]  # per operand, after the carry fixed point
    carry_unknowns: list[bool]
    known_params: dict[str, Any]


def _split_while(unks_in: Sequence[bool], params: dict[str, Any]) -> _WhileSplit | None:
    """The loop over the known carries alone, or None when nothing useful is known.

    As in JAX, the unknown carries are computed by the whole loop (recomputing the known ones):
    enough for linearize, while reverse mode stops at the transpose rule.
    """
    cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
    nc, nb = params["cond_nconsts"], params["body_nconsts"]
    cc_uk, bc_uk, carry_uk = split3(list(unks_in), nc, nb)
    if any(cc_uk):
        return None
    while True:
        out_uk = partial_eval_jaxpr(body_jaxpr.jaxpr, bc_uk + carry_uk).out_unknowns
        new_uk = [a or b for a, b in zip(carry_uk, out_uk, strict=True)]
        if new_uk == carry_uk:
            break
        carry_uk = new_uk
    (pred_uk,) = partial_eval_jaxpr(cond_jaxpr.jaxpr, cc_uk + carry_uk).out_unknowns
    if pred_uk or all(carry_uk):
        return None
    pe = partial_eval_jaxpr(body_jaxpr.jaxpr, bc_uk + carry_uk, carry_uk)
    jk = pe.jaxpr_known
    body_known = dce_jaxpr(Jaxpr([], jk.invars, jk.eqns, jk.outs[: carry_uk.count(False)]))
    cj = dce_jaxpr(cond_jaxpr.jaxpr)  # reads no unknown carry now
    keep = [True] * nc + [not u for u in carry_uk]
    cond_known = Jaxpr([], [v for v, k in zip(cj.invars, keep, strict=True) if k], cj.eqns, cj.outs)
    known_params = dict(
        cond_jaxpr=ClosedJaxpr(cond_known, []),
        body_jaxpr=ClosedJaxpr(body_known, []),
        cond_nconsts=nc,
        body_nconsts=bc_uk.count(False),
    )
    return _WhileSplit(cc_uk + bc_uk + carry_uk, carry_uk, known_params)


def _while_partial_eval(trace: Any, tracers: list[Any], **params: Any):
    split = _split_while([not t.pval.is_known for t in tracers], params)
    if split is None:
        return stage_whole_equation(trace, while_p, tracers, params)
    known_vals = [t.pval.const for t, u in zip(tracers, split.in_unknowns, strict=True) if not u]
    known_outs = iter(while_p.bind(*known_vals, **split.known_params))
    all_outs = stage_whole_equation(trace, while_p, tracers, params)
    return [
        out if u else trace.lift(next(known_outs))
        for out, u in zip(all_outs, split.carry_unknowns, strict=True)
    ]


while_p.def_partial_eval(_while_partial_eval)


def _while_partial_eval_jaxpr(unks_in: list[bool], eqn: JaxprEqn):
    split = _split_while(unks_in, eqn.params)
    if split is None:
        return None
    ins_known = [x for x, u in zip(eqn.inputs, split.in_unknowns, strict=True) if not u]
    outs_known = [v for v, u in zip(eqn.out_binders, split.carry_unknowns, strict=True) if not u]
    eqn_known = JaxprEqn(while_p, ins_known, split.known_params, outs_known)
    outs_all = [
        v if u else Var(v.aval) for v, u in zip(eqn.out_binders, split.carry_unknowns, strict=True)
    ]
    eqn_unknown = JaxprEqn(while_p, eqn.inputs, eqn.params, outs_all)
    residuals = [x for x, u in zip(eqn.inputs, unks_in, strict=True) if not u and type(x) is Var]
    return eqn_known, eqn_unknown, split.carry_unknowns, residuals


while_p.partial_eval_jaxpr_rule = _while_partial_eval_jaxpr


@while_p.def_transpose
def _while_transpose(cts: list[Any], *args: Any, **params: Any):
    raise ValueError(
        "Reverse-mode differentiation (grad, vjp) does not work for while_loop, or for "
        "fori_loop with traced bounds: the number of iterations is unknown when the backward "
        "pass is built. Use mjcore.scan, or fori_loop with static (Python int) bounds."
    )
