"""Autodidax Part 5: `cond` and `switch` as one higher-order primitive, `cond`, holding a closed
jaxpr per branch and taking the branch index first (as printed in "Understanding Jaxprs")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from mjcore import core, dtypes
from mjcore.ad import UndefinedPrimal, Zero, instantiate, jvp_jaxpr, transpose_closed
from mjcore.backend.lowering import LoweringContext, lower_jaxpr_body
from mjcore.batching import NOT_MAPPED, move_bdim
from mjcore.control_flow.common import (
    axis_size_of,
    batch_jaxpr,
    check_tree_and_types,
    def_compiled_impl,
    eval_closed,
    flatten_args,
    join_consts,
    stage_whole_equation,
    trace_fun,
    typematch,
)
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var, eval_jaxpr
from mjcore.lax import arithmetic
from mjcore.lax.base import broadcast_in_dim, convert_element_type, full, select_n
from mjcore.lax.comparison import ne
from mjcore.partial_eval import partial_eval_jaxpr, trace_to_jaxpr
from mjcore.tree_util import tree_unflatten

_INDEX_AVAL = ShapedArray((), np.dtype("int32"))

cond_p = Primitive("cond", multiple_results=True)
def_compiled_impl(cond_p)


def cond(
    pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any], *operands: Any
) -> Any:
    """Apply `true_fun` or `false_fun` to `operands`, staged so the choice happens at run time.

    Meaning, for a scalar `pred`::

        def cond(pred, true_fun, false_fun, *operands):
            if pred:
                return true_fun(*operands)
            else:
                return false_fun(*operands)

    Both functions are traced, and must return pytrees of one structure, shapes and dtypes.
    `pred` is a boolean or numeric scalar (nonzero is true). Under `vmap` with a batched
    predicate both branches run and the results are selected elementwise.

    Raises:
      TypeError: for a non-scalar or complex `pred`, non-callable branches, or branch outputs
        whose structures or types differ (naming the mismatching leaves).
    """
    if not (callable(true_fun) and callable(false_fun)):
        raise TypeError("cond: true_fun and false_fun must be callable")
    aval = _scalar_aval("cond", "pred", pred)
    if aval.dtype.kind != "b":
        if dtypes.kind(aval.dtype) not in "iuf":
            raise TypeError(f"cond: pred must be a boolean or real number, got {aval.dtype.name}")
        pred = ne(pred, full((), 0, aval.dtype))
    if core._state.jit_disabled and _is_concrete(pred):  # `disable_jit()`: plain Python
        return true_fun(*operands) if pred else false_fun(*operands)
    index = convert_element_type(pred, np.int32)
    return _bind_cond(index, (false_fun, true_fun), operands, "cond", ("false_fun", "true_fun"), 1)


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """Apply `branches[index]` to `operands`, staged so the choice happens at run time.

    Meaning, for a scalar integer `index`::

        def switch(index, branches, *operands):
            index = min(max(index, 0), len(branches) - 1)
            return branches[index](*operands)

    All branches are traced, and must return pytrees of one structure, shapes and dtypes.
    Under `vmap` with a batched index every branch runs and the results are selected.

    Raises:
      TypeError: for a non-scalar or non-integer index, non-callable branches, or branch
        outputs whose structures or types differ (naming the mismatching leaves).
      ValueError: for an empty sequence of branches.
    """
    try:
        branches = tuple(branches)
    except TypeError as err:
        raise TypeError(
            f"switch: branches must be a sequence of callables, got {type(branches).__name__}"
        ) from err
    if not branches:
        raise ValueError("switch: branches must be a non-empty sequence of callables")
    if not all(callable(b) for b in branches):
        raise TypeError("switch: branches must be a sequence of callables")
    aval = _scalar_aval("switch", "index", index)
    if not dtypes.is_integer(aval.dtype):
        raise TypeError(f"switch: index must be an integer scalar, got {aval.dtype.name}")
    if len(branches) == 1:
        return branches[0](*operands)
    if core._state.jit_disabled and _is_concrete(index):  # `disable_jit()`: plain Python
        return branches[min(max(int(index), 0), len(branches) - 1)](*operands)
    index = convert_element_type(index, np.int32)
    names = tuple(f"branch {i}" for i in range(len(branches)))
    return _bind_cond(index, branches, operands, "switch", names, 0)


def _is_concrete(x: Any) -> bool:
    return not isinstance(x, core.Tracer) or x.to_concrete_value() is not None


def _scalar_aval(fname: str, what: str, x: Any) -> ShapedArray:
    try:
        aval = get_aval(x)
    except TypeError as err:
        raise TypeError(
            f"{fname}: {what} must be a scalar array or Python scalar, got {type(x).__name__}"
        ) from err
    if aval.ndim != 0:
        raise TypeError(f"{fname}: {what} must be a scalar, got an array of shape {aval.shape}")
    return aval


def _bind_cond(
    index: Any,
    funs: Sequence[Callable[..., Any]],
    operands: tuple[Any, ...],
    fname: str,
    names: Sequence[str],
    reference: int,
) -> Any:
    ops_flat, in_tree = flatten_args(fname, "operands", operands)
    avals = [get_aval(x) for x in ops_flat]
    traced = [
        trace_fun(f, in_tree, avals, f"{fname} {name}") for f, name in zip(funs, names, strict=True)
    ]
    ref_closed, ref_tree = traced[reference]
    for i, (closed, tree) in enumerate(traced):
        if i != reference:
            check_tree_and_types(
                fname,
                f"the output of {names[reference]}",
                ref_tree,
                ref_closed.out_avals,
                f"the output of {names[i]}",
                tree,
                closed.out_avals,
                f"Revise {names[reference]} and/or {names[i]} so that all output types match.",
            )
    branches, consts = join_consts([closed for closed, _ in traced])
    outs = cond_p.bind(index, *consts, *ops_flat, branches=tuple(branches))
    return tree_unflatten(ref_tree, outs)


@cond_p.def_abstract_eval
def _cond_abstract_eval(
    index: ShapedArray, *avals: ShapedArray, branches: tuple[ClosedJaxpr, ...]
) -> list[ShapedArray]:
    if not typematch(index, _INDEX_AVAL):
        raise TypeError(f"cond: the branch index must be int32[], got {index.str_short()}")
    out_avals = branches[0].out_avals
    for b in branches:
        if len(b.in_avals) != len(avals) or not all(map(typematch, b.in_avals, avals)):
            raise TypeError(
                "cond: operands "
                + ", ".join(a.str_short() for a in avals)
                + " do not match the branch inputs "
                + ", ".join(a.str_short() for a in b.in_avals)
            )
        if len(b.out_avals) != len(out_avals) or not all(map(typematch, b.out_avals, out_avals)):
            raise TypeError("cond: branches have different output types")
    return [
        a.update(weak_type=all(b.out_avals[i].weak_type for b in branches))
        for i, a in enumerate(out_avals)
    ]


@cond_p.def_lowering
def _cond_lowering(ctx: LoweringContext, index: Any, *args: Any, branches):
    b = ctx.builder
    # NB: stablehlo.case runs the last branch for any out-of-range index, negative ones too;
    # clamping gives switch's semantics.
    lo = b.constant(0, _INDEX_AVAL)
    hi = b.constant(len(branches) - 1, _INDEX_AVAL)
    index = b.op("stablehlo.clamp", [lo, index, hi], _INDEX_AVAL)

    def region(branch: ClosedJaxpr) -> str:
        return b.region([], lambda inner: lower_jaxpr_body(inner, branch.jaxpr, [], args))

    out_avals = [a.strip_weak_type() for a in ctx.avals_out]
    return b.op("stablehlo.case", [index], out_avals, regions=[region(br) for br in branches])


def _cond_jvp(primals: list[Any], tangents: list[Any], *, branches):
    index, *ops = primals
    _, *ops_dot = tangents
    nonzeros = tuple(type(t) is not Zero for t in ops_dot)
    out_nz = tuple(
        any(nz) for nz in zip(*(jvp_jaxpr(br, nonzeros)[1] for br in branches), strict=True)
    )
    jaxprs, consts = join_consts([jvp_jaxpr(br, nonzeros, out_nz)[0] for br in branches])
    nz_dots = [t for t in ops_dot if type(t) is not Zero]
    outs = cond_p.bind(index, *consts, *ops, *nz_dots, branches=tuple(jaxprs))
    out_avals = branches[0].out_avals
    primals_out, nz_out = outs[: len(out_avals)], iter(outs[len(out_avals) :])
    tangents_out = [
        next(nz_out) if nz else Zero(a.strip_weak_type())
        for nz, a in zip(out_nz, out_avals, strict=True)
    ]
    return primals_out, tangents_out


cond_p.def_jvp(_cond_jvp, symbolic_zeros=True)


@cond_p.def_batching
def _cond_batching(vals: list[Any], dims: list[int | None], *, branches):
    axis_size = axis_size_of(vals, dims)
    index, *ops = vals
    index_dim, *op_dims = dims
    ops = [x if d is NOT_MAPPED else move_bdim(x, d, 0) for x, d in zip(ops, op_dims, strict=True)]
    in_batched = [d is not NOT_MAPPED for d in op_dims]
    if index_dim is NOT_MAPPED:
        out_batched = [
            any(b)
            for b in zip(
                *(batch_jaxpr(br, axis_size, in_batched, False)[1] for br in branches), strict=True
            )
        ]
        jaxprs, consts = join_consts(
            [batch_jaxpr(br, axis_size, in_batched, out_batched)[0] for br in branches]
        )
        outs = cond_p.bind(index, *consts, *ops, branches=tuple(jaxprs))
        return outs, [0 if b else NOT_MAPPED for b in out_batched]
    # A batched index: every branch runs on the whole batch, then each example picks its own
    # result. Valid because branches have no side effects.
    index = move_bdim(index, index_dim, 0)
    index = arithmetic.max(arithmetic.min(index, len(branches) - 1), 0)
    branch_outs = [
        eval_closed(batch_jaxpr(br, axis_size, in_batched, True)[0])(*ops) for br in branches
    ]
    outs = []
    for cases in zip(*branch_outs, strict=True):
        shape = get_aval(cases[0]).shape
        outs.append(select_n(broadcast_in_dim(index, shape, (0,)), *cases))
    return outs, [0] * len(outs)


# --- partial evaluation ---------------------------------------------------------------------


class _BranchSplit(NamedTuple):
    """The known and unknown halves of every branch, with one signature per half.

    Known branches map known operands to (known outputs, residual slots). Unknown branches map
    (forwarded known operands, residual slots, unknown operands) to unknown outputs.
    """

    known: tuple[ClosedJaxpr, ...]
    unknown: tuple[ClosedJaxpr, ...]
    out_unknowns: list[bool]
    forwarded: list[int]  # positions among the known operands
    slots: list[ShapedArray]


def _split_branches(branches: Sequence[ClosedJaxpr], in_unknowns: tuple[bool, ...]) -> _BranchSplit:
    """Partially evaluate every branch, joining their residuals (Autodidax `_join_jaxpr_res`).

    A residual that is a known operand is forwarded rather than returned. Computed residuals
    of equal type share one output slot across branches, so the known cond returns
    max-per-type rather than the sum of what the branches need; a branch fills the slots it
    does not use with zeros.
    """
    out_unknowns = [
        any(u)
        for u in zip(
            *(partial_eval_jaxpr(br.jaxpr, in_unknowns).out_unknowns for br in branches),
            strict=True,
        )
    ]
    pes = [partial_eval_jaxpr(br.jaxpr, in_unknowns, out_unknowns) for br in branches]
    n_known_out = out_unknowns.count(False)
    forwarded = sorted({s for pe in pes for s in pe.res_sources if s is not None})
    slots: list[ShapedArray] = []
    slot_of: list[list[int]] = []
    for pe in pes:
        taken: list[int] = []
        for x in pe.jaxpr_known.outs[n_known_out:]:
            aval = x.aval.strip_weak_type()
            j = next((j for j, s in enumerate(slots) if s == aval and j not in taken), None)
            if j is None:
                j = len(slots)
                slots.append(aval)
            taken.append(j)
        slot_of.append(taken)
    known_in_avals = [a for a, u in zip(branches[0].in_avals, in_unknowns, strict=True) if not u]
    known, unknown = [], []
    for pe, taken in zip(pes, slot_of, strict=True):
        known.append(_known_branch(pe.jaxpr_known, n_known_out, taken, slots, known_in_avals))
        # Unknown half: residual binders move to their joined positions; others are unused.
        res_binders = pe.jaxpr_unknown.invars[: len(pe.res_sources)]
        binders = [Var(known_in_avals[s]) for s in forwarded] + [Var(a) for a in slots]
        computed = iter(taken)
        for v, s in zip(res_binders, pe.res_sources, strict=True):
            pos = forwarded.index(s) if s is not None else len(forwarded) + next(computed)
            binders[pos] = v
        ju = pe.jaxpr_unknown
        invars = [*binders, *ju.invars[len(pe.res_sources) :]]
        unknown.append(ClosedJaxpr(Jaxpr([], invars, ju.eqns, ju.outs), []))
    return _BranchSplit(tuple(known), tuple(unknown), out_unknowns, forwarded, slots)


def _known_branch(
    jaxpr_known: Jaxpr,
    n_known_out: int,
    taken: list[int],
    slots: list[ShapedArray],
    in_avals: list[ShapedArray],
) -> ClosedJaxpr:
    def fun(*args: Any) -> list[Any]:
        outs = eval_jaxpr(jaxpr_known, [], *args)
        slot_vals: list[Any] = [None] * len(slots)
        for j, r in zip(taken, outs[n_known_out:], strict=True):
            slot_vals[j] = r
        zeros = [full(a.shape, 0, a.dtype) for a in slots]
        return [
            *outs[:n_known_out],
            *(z if v is None else v for v, z in zip(slot_vals, zeros, strict=True)),
        ]

    closed = trace_to_jaxpr(fun, in_avals, "partial_eval")
    assert not closed.consts, "known branches are built from const-free jaxprs"
    return closed


def _cond_partial_eval(trace: Any, tracers: list[Any], *, branches):
    index_t, *ops_t = tracers
    if not index_t.pval.is_known:
        return stage_whole_equation(trace, cond_p, tracers, dict(branches=branches))
    in_unknowns = tuple(not t.pval.is_known for t in ops_t)
    split = _split_branches(branches, in_unknowns)
    known_vals = [t.pval.const for t in ops_t if t.pval.is_known]
    n_known_out = split.out_unknowns.count(False)
    outs = []
    if n_known_out or split.slots:
        outs = cond_p.bind(index_t.pval.const, *known_vals, branches=split.known)
    known_outs, computed = outs[:n_known_out], outs[n_known_out:]
    unknown_outs = []
    if any(split.out_unknowns):
        residuals = [known_vals[i] for i in split.forwarded] + list(computed)
        res_tracers = [trace.instantiate_const(trace.lift(r)) for r in residuals]
        unknown_ops = [t for t in ops_t if not t.pval.is_known]
        unknown_outs = trace.stage_equation(
            cond_p,
            [trace.instantiate_const(index_t), *res_tracers, *unknown_ops],
            dict(branches=split.unknown),
            split.unknown[0].out_avals,
        )
    known_it, unknown_it = iter(known_outs), iter(unknown_outs)
    return [next(unknown_it) if u else trace.lift(next(known_it)) for u in split.out_unknowns]


cond_p.def_partial_eval(_cond_partial_eval)


def _cond_partial_eval_jaxpr(unks_in: list[bool], eqn: JaxprEqn):
    index_unknown, *ops_unknown = unks_in
    if index_unknown:
        return None
    split = _split_branches(eqn.params["branches"], tuple(ops_unknown))
    index, *ops = eqn.inputs
    ins_known = [x for x, u in zip(ops, ops_unknown, strict=True) if not u]
    ins_unknown = [x for x, u in zip(ops, ops_unknown, strict=True) if u]
    outs_known = [v for v, u in zip(eqn.out_binders, split.out_unknowns, strict=True) if not u]
    outs_unknown = [v for v, u in zip(eqn.out_binders, split.out_unknowns, strict=True) if u]
    computed = [Var(a) for a in split.slots]
    residuals = [ins_known[i] for i in split.forwarded] + computed
    eqn_known = JaxprEqn(
        cond_p, [index, *ins_known], dict(branches=split.known), [*outs_known, *computed]
    )
    eqn_unknown = JaxprEqn(
        cond_p, [index, *residuals, *ins_unknown], dict(branches=split.unknown), outs_unknown
    )
    res_vars = [x for x in [index, *residuals] if type(x) is Var]
    return eqn_known, eqn_unknown, split.out_unknowns, res_vars


cond_p.partial_eval_jaxpr_rule = _cond_partial_eval_jaxpr


@cond_p.def_transpose
def _cond_transpose(cts: list[Any], index: Any, *ops: Any, branches):
    if type(index) is UndefinedPrimal:
        raise TypeError("cond: the branch index cannot be a linear input")
    undefined = tuple(type(x) is UndefinedPrimal for x in ops)
    jaxprs, consts = join_consts([transpose_closed(br, undefined) for br in branches])
    defined = [x for x, u in zip(ops, undefined, strict=True) if not u]
    cts = [instantiate(ct) for ct in cts]
    outs = iter(cond_p.bind(index, *consts, *defined, *cts, branches=tuple(jaxprs)))
    return [None, *(next(outs) if u else None for u in undefined)]
