"""Autodidax Part 5, continued: `scan` as the higher-order primitive `scan`, a loop of static
length over the leading axis of its inputs; lowered to a while loop of dynamic slices."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from mjcore import core
from mjcore.ad import UndefinedPrimal, Zero, backward_pass, instantiate, jvp_jaxpr, zeros_like_aval
from mjcore.backend.hlo import i64_array
from mjcore.backend.lowering import LoweringContext, lower_jaxpr_body
from mjcore.batching import NOT_MAPPED, move_bdim, moveaxis_to
from mjcore.control_flow.common import (
    axis_size_of,
    batch_jaxpr,
    check_tree_and_types,
    def_compiled_impl,
    flatten_args,
    hoist_consts,
    leaf_paths,
    permute_jaxpr,
    promote_weak_carry,
    split3,
    trace_fun,
    typematch,
)
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var
from mjcore.lax.base import add_any, reshape
from mjcore.lax.slicing import slice_in_dim
from mjcore.lax.structural import concatenate
from mjcore.partial_eval import partial_eval_jaxpr, trace_to_jaxpr
from mjcore.tree_util import PyTreeDef, tree_map, tree_structure, tree_unflatten

scan_p = Primitive("scan", multiple_results=True)
def_compiled_impl(scan_p)


def scan(
    f: Callable[[Any, Any], tuple[Any, Any]],
    init: Any,
    xs: Any = None,
    length: int | None = None,
    reverse: bool = False,
) -> tuple[Any, Any]:
    """Loop `f` over the leading axis of `xs`, threading a carry and stacking the outputs.

    Meaning::

        def scan(f, init, xs, length=None, reverse=False):
            if xs is None:
                xs = [None] * length
            carry = init
            ys = []
            for x in (reversed(xs) if reverse else xs):
                carry, y = f(carry, x)
                ys.append(y)
            if reverse:
                ys.reverse()
            return carry, np.stack(ys)

    `xs` and the outputs `y` are pytrees of arrays (stacked leaf by leaf); `length` is needed
    only when `xs` is None. `f` must return the carry with the structure, shapes and dtypes
    of `init` (a weakly typed initial value such as a Python scalar is promoted). Every
    transformation works, including reverse mode: the backward pass is a scan in the
    opposite direction over residuals saved by the forward one.

    Raises:
      TypeError: if `f` changes the carry's structure or types (naming the leaves) or does not
        return a pair.
      ValueError: if `xs` leaves are scalars or disagree on (or with `length` about) their
        leading axis size.
    """
    if not callable(f):
        raise TypeError(f"scan: f must be callable, got {type(f).__name__}")
    init_flat, init_tree = flatten_args("scan", "init", init)
    xs_flat, xs_tree = flatten_args("scan", "xs", xs)
    length = _scan_length(xs, xs_flat, length)
    if core._state.jit_disabled:  # `disable_jit()`: a Python loop
        return _scan_in_python(f, init, xs_flat, xs_tree, length, reverse)
    x_avals = [get_aval(x) for x in xs_flat]
    x_avals = [a.update(shape=a.shape[1:]) for a in x_avals]

    def body(carry: Any, x: Any) -> tuple[Any, Any]:
        out = f(carry, x)
        if not isinstance(out, tuple | list) or len(out) != 2:
            raise TypeError(
                f"scan: f must return a pair (carry, y), got {type(out).__name__}: {out!r:.80}"
            )
        return tuple(out)

    def trace(init_vals: list[Any]) -> tuple[ClosedJaxpr, PyTreeDef, PyTreeDef, list[Any]]:
        avals = [get_aval(x) for x in init_vals]
        args_tree = tree_structure((tree_unflatten(init_tree, init_vals), xs))
        closed, out_tree = trace_fun(body, args_tree, [*avals, *x_avals], "scan f")
        carry_tree, y_tree = out_tree.children()
        return closed, carry_tree, y_tree, avals

    closed, carry_tree, y_tree, carry_avals = trace(init_flat)
    n = len(init_flat)
    if carry_tree == init_tree:
        init_flat, changed = promote_weak_carry(init_flat, carry_avals, closed.out_avals[:n])
        if changed:
            closed, carry_tree, y_tree, carry_avals = trace(init_flat)
    check_tree_and_types(
        "scan",
        "the input carry",
        init_tree,
        carry_avals,
        "the carry output",
        carry_tree,
        closed.out_avals[: carry_tree.num_leaves],
        "Revise f so that the carry output has the structure, shapes and dtypes of init.",
    )
    jaxpr, consts = hoist_consts(closed)
    outs = scan_p.bind(
        *consts,
        *init_flat,
        *xs_flat,
        jaxpr=jaxpr,
        length=length,
        reverse=bool(reverse),
        num_consts=len(consts),
        num_carry=n,
        linear=(False,) * (len(consts) + n + len(xs_flat)),
    )
    return tree_unflatten(init_tree, outs[:n]), tree_unflatten(y_tree, outs[n:])


def _scan_in_python(
    f: Callable[[Any, Any], tuple[Any, Any]],
    init: Any,
    xs_flat: list[Any],
    xs_tree: PyTreeDef,
    length: int,
    reverse: bool,
) -> tuple[Any, Any]:
    """`scan` as the Python loop of its docstring (under `disable_jit()`)."""
    if length == 0:
        raise ValueError(
            "scan: a zero-length scan is not supported in disable_jit() mode because the "
            "output type is unknown"
        )
    carry, ys = init, []
    for i in reversed(range(length)) if reverse else range(length):
        x = [reshape(slice_in_dim(v, i, i + 1, 0), get_aval(v).shape[1:]) for v in xs_flat]
        carry, y = f(carry, tree_unflatten(xs_tree, x))
        ys.append(y)
    if reverse:
        ys.reverse()

    def stack(*leaves: Any) -> Any:
        return concatenate([reshape(y, (1, *get_aval(y).shape)) for y in leaves], 0)

    return carry, tree_map(stack, *ys)


def _scan_length(xs: Any, xs_flat: list[Any], length: Any) -> int:
    paths = leaf_paths(xs)
    sizes = []
    for x, path in zip(xs_flat, paths, strict=True):
        aval = get_aval(x)
        if aval.ndim == 0:
            raise ValueError(
                f"scan: xs{path} is a scalar ({aval.str_short()}); every leaf of xs needs a "
                "leading axis to scan over"
            )
        sizes.append(aval.shape[0])
    if length is not None:
        try:
            length = operator.index(length)
        except TypeError as err:
            raise TypeError(f"scan: length must be an int, got {length!r}") from err
        if length < 0:
            raise ValueError(f"scan: length must be nonnegative, got {length}")
        if any(s != length for s in sizes):
            raise ValueError(
                f"scan: got length={length} but the leading axis sizes of xs are {sizes}"
            )
        return length
    if not sizes:
        raise ValueError("scan: got no xs to scan over and no length; pass length=...")
    if len(set(sizes)) > 1:
        detail = ", ".join(f"xs{p}: {s}" for p, s in zip(paths, sizes, strict=True))
        raise ValueError(f"scan: the leaves of xs have different leading axis sizes ({detail})")
    return sizes[0]


def _stacked(aval: ShapedArray, length: int) -> ShapedArray:
    return aval.update(shape=(length, *aval.shape))


def _unstacked(aval: ShapedArray) -> ShapedArray:
    return aval.update(shape=aval.shape[1:])


@scan_p.def_abstract_eval
def _scan_abstract_eval(
    *avals: ShapedArray, jaxpr, length, reverse, num_consts, num_carry, linear
) -> list[ShapedArray]:
    consts, init, xs = split3(avals, num_consts, num_carry)
    if any(x.ndim == 0 or x.shape[0] != length for x in xs):
        raise TypeError(f"scan: every xs operand needs a leading axis of size {length}")
    expected = [*consts, *init, *map(_unstacked, xs)]
    if len(jaxpr.in_avals) != len(expected) or not all(map(typematch, jaxpr.in_avals, expected)):
        raise TypeError("scan: operands do not match the body's inputs")
    carry_out, ys = jaxpr.out_avals[:num_carry], jaxpr.out_avals[num_carry:]
    if not all(map(typematch, carry_out, init)) or len(carry_out) != len(init):
        raise TypeError("scan: the body must return the carry type")
    return [
        *(
            a.update(weak_type=a.weak_type and o.weak_type)
            for a, o in zip(init, carry_out, strict=True)
        ),
        *(_stacked(y, length) for y in ys),
    ]


# --- lowering: a while loop over an iteration counter ---------------------------------------

# The counter is int64, the dtype of a Python int index: `fori_loop(0, n, ...)` carries such an
# index, and XLA merges two counters that start, step and are typed alike into one.
_COUNTER = ShapedArray((), np.dtype("int64"))


@scan_p.def_lowering
def _scan_lowering(
    ctx: LoweringContext, *args: Any, jaxpr, length, reverse, num_consts, num_carry, linear
):
    b = ctx.builder
    consts, init, xs = split3(args, num_consts, num_carry)
    carry_avals = [a.strip_weak_type() for a in ctx.avals_out[:num_carry]]
    ys_avals = [a.strip_weak_type() for a in ctx.avals_out[num_carry:]]
    if length == 0:
        return [*init, *(b.constant(np.zeros(a.shape, a.dtype), a) for a in ys_avals)]
    loop_avals = [_COUNTER, *carry_avals, *ys_avals]

    def cond_region(inner: Any, i: Any, *rest: Any) -> list[Any]:
        return [
            inner.op(
                "stablehlo.compare",
                [i, inner.constant(length, _COUNTER)],
                ShapedArray((), np.dtype("bool")),
                "comparison_direction = #stablehlo<comparison_direction LT>, "
                "compare_type = #stablehlo<comparison_type SIGNED>",
            )
        ]

    def body_region(inner: Any, i: Any, *rest: Any) -> list[Any]:
        carry, ys = rest[:num_carry], rest[num_carry:]
        t = i
        if reverse:
            t = inner.op("stablehlo.subtract", [inner.constant(length - 1, _COUNTER), i], _COUNTER)
        zero = inner.constant(0, _COUNTER)
        x_t = [_lower_take(inner, x, t, zero) for x in xs]
        outs = lower_jaxpr_body(inner, jaxpr.jaxpr, [], [*consts, *carry, *x_t])
        new_ys = [
            _lower_put(inner, y, y_t, t, zero) for y, y_t in zip(ys, outs[num_carry:], strict=True)
        ]
        i_next = inner.op("stablehlo.add", [i, inner.constant(1, _COUNTER)], _COUNTER)
        return [i_next, *outs[:num_carry], *new_ys]

    init_ys = [b.constant(0, a) for a in ys_avals]
    regions = [b.region(loop_avals, cond_region), b.region(loop_avals, body_region)]
    outs = b.op(
        "stablehlo.while", [b.constant(0, _COUNTER), *init, *init_ys], loop_avals, regions=regions
    )
    return outs[1:]


def _lower_take(b: Any, xs: Any, t: Any, zero: Any) -> Any:
    """`xs[t]` for a traced scalar `t`."""
    aval = xs.aval.strip_weak_type()
    block = aval.update(shape=(1, *aval.shape[1:]))
    x = b.op(
        "stablehlo.dynamic_slice",
        [xs, t, *[zero] * (aval.ndim - 1)],
        block,
        f"slice_sizes = {i64_array(block.shape)}",
    )
    return b.op("stablehlo.reshape", [x], _unstacked(block))


def _lower_put(b: Any, ys: Any, y: Any, t: Any, zero: Any) -> Any:
    """`ys` with `ys[t] = y` for a traced scalar `t`."""
    aval = ys.aval
    block = b.op("stablehlo.reshape", [y], aval.update(shape=(1, *aval.shape[1:])))
    return b.op("stablehlo.dynamic_update_slice", [ys, block, t, *[zero] * (aval.ndim - 1)], aval)


# --- jvp ------------------------------------------------------------------------------------


def _scan_jvp(
    primals: list[Any],
    tangents: list[Any],
    *,
    jaxpr,
    length,
    reverse,
    num_consts,
    num_carry,
    linear,
):
    nc, nk = num_consts, num_carry
    consts, init, xs = split3(primals, nc, nk)
    consts_dot, init_dot, xs_dot = split3(tangents, nc, nk)
    const_nz = [type(t) is not Zero for t in consts_dot]
    xs_nz = [type(t) is not Zero for t in xs_dot]
    carry_nz = [type(t) is not Zero for t in init_dot]
    while True:  # fixed point: which carries have nonzero tangents
        _, out_nz = jvp_jaxpr(jaxpr, tuple(const_nz + carry_nz + xs_nz))
        new_nz = [a or b for a, b in zip(carry_nz, out_nz[:nk], strict=True)]
        if new_nz == carry_nz:
            break
        carry_nz = new_nz
    ny = len(jaxpr.out_avals) - nk
    closed, out_nz = jvp_jaxpr(
        jaxpr, tuple(const_nz + carry_nz + xs_nz), tuple(carry_nz + [False] * ny)
    )
    body, jvp_consts = hoist_consts(closed)
    n0, ncd, nkd, nxd = len(jvp_consts), sum(const_nz), sum(carry_nz), sum(xs_nz)
    nx = len(xs)
    nyd = sum(out_nz[nk:])
    # Inputs (jvp consts | consts, carry, xs | their nonzero tangents) regrouped as scan
    # (consts, carry, xs) groups; outputs (carry, ys | carry_dot, ys_dot) likewise.
    p = n0  # start of primals
    d = n0 + nc + nk + nx  # start of tangents
    in_order = [
        *range(n0 + nc),
        *range(d, d + ncd),
        *range(p + nc, p + nc + nk),
        *range(d + ncd, d + ncd + nkd),
        *range(p + nc + nk, p + nc + nk + nx),
        *range(d + ncd + nkd, d + ncd + nkd + nxd),
    ]
    out_order = [
        *range(nk),
        *range(nk + ny, nk + ny + nkd),
        *range(nk, nk + ny),
        *range(nk + ny + nkd, nk + ny + nkd + nyd),
    ]
    body = ClosedJaxpr(permute_jaxpr(body.jaxpr, in_order, out_order), [])
    c_lin, k_lin, x_lin = split3(list(linear), nc, nk)
    new_linear = [False] * n0 + c_lin + [True] * ncd + k_lin + [True] * nkd + x_lin + [True] * nxd
    outs = scan_p.bind(
        *jvp_consts,
        *consts,
        *(t for t in consts_dot if type(t) is not Zero),
        *init,
        *(instantiate(t) for t, nz in zip(init_dot, carry_nz, strict=True) if nz),
        *xs,
        *(t for t in xs_dot if type(t) is not Zero),
        jaxpr=body,
        length=length,
        reverse=reverse,
        num_consts=n0 + nc + ncd,
        num_carry=nk + nkd,
        linear=tuple(new_linear),
    )
    carry, carry_dot, ys, ys_dot = (
        outs[:nk],
        iter(outs[nk : nk + nkd]),
        outs[nk + nkd : nk + nkd + ny],
        iter(outs[nk + nkd + ny :]),
    )
    out_avals = _scan_abstract_eval(
        *map(get_aval, primals),
        jaxpr=jaxpr,
        length=length,
        reverse=reverse,
        num_consts=nc,
        num_carry=nk,
        linear=linear,
    )
    tangents_out = [
        next(carry_dot if i < nk else ys_dot) if nz else Zero(a.strip_weak_type())
        for i, (nz, a) in enumerate(zip(carry_nz + out_nz[nk:], out_avals, strict=True))
    ]
    return [*carry, *ys], tangents_out


scan_p.def_jvp(_scan_jvp, symbolic_zeros=True)


# --- vmap -----------------------------------------------------------------------------------


@scan_p.def_batching
def _scan_batching(
    vals: list[Any],
    dims: list[int | None],
    *,
    jaxpr,
    length,
    reverse,
    num_consts,
    num_carry,
    linear,
):
    nc, nk = num_consts, num_carry
    axis_size = axis_size_of(vals, dims)
    consts, init, xs = split3(vals, nc, nk)
    c_dims, k_dims, x_dims = split3(dims, nc, nk)
    # The body sees batch axis 0 everywhere: axis 1 of the stacked xs and ys.
    consts = [
        c if d is NOT_MAPPED else move_bdim(c, d, 0) for c, d in zip(consts, c_dims, strict=True)
    ]
    xs = [x if d is NOT_MAPPED else move_bdim(x, d, 1) for x, d in zip(xs, x_dims, strict=True)]
    const_b = [d is not NOT_MAPPED for d in c_dims]
    xs_b = [d is not NOT_MAPPED for d in x_dims]
    carry_b = [d is not NOT_MAPPED for d in k_dims]
    while True:  # fixed point: which carries are batched
        _, out_b = batch_jaxpr(jaxpr, axis_size, const_b + carry_b + xs_b, False)
        new_b = [a or b for a, b in zip(carry_b, out_b[:nk], strict=True)]
        if new_b == carry_b:
            break
        carry_b = new_b
    ny = len(jaxpr.out_avals) - nk
    closed, out_b = batch_jaxpr(jaxpr, axis_size, const_b + carry_b + xs_b, carry_b + [False] * ny)
    body, body_consts = hoist_consts(closed)
    init = [
        moveaxis_to(x, d, 0, axis_size) if b else x
        for x, d, b in zip(init, k_dims, carry_b, strict=True)
    ]
    outs = scan_p.bind(
        *body_consts,
        *consts,
        *init,
        *xs,
        jaxpr=body,
        length=length,
        reverse=reverse,
        num_consts=len(body_consts) + nc,
        num_carry=nk,
        linear=(False,) * len(body_consts) + tuple(linear),
    )
    out_dims = [0 if b else NOT_MAPPED for b in carry_b] + [
        1 if b else NOT_MAPPED for b in out_b[nk:]
    ]
    return outs, out_dims


# --- partial evaluation: residuals become stacked outputs of the known scan -----------------


class _ScanSplit(NamedTuple):
    """A scan split into a known scan and an unknown one.

    The known scan returns (known carries, known ys, stacked residuals). The unknown scan
    takes consts (known consts it reads, unknown consts), carries (unknown ones) and xs
    (stacked residuals, known xs it reads, unknown xs).
    """

    in_unknowns: list[bool]  # per operand, after the carry fixed point
    out_unknowns: list[bool]
    known_params: dict[str, Any]
    unknown_params: dict[str, Any]
    const_res: list[int]  # positions among the known operands
    xs_res: list[int]
    stacked_res_avals: list[ShapedArray]


def _split_scan(unks_in: Sequence[bool], params: dict[str, Any]) -> _ScanSplit:
    jaxpr, length = params["jaxpr"], params["length"]
    nc, nk = params["num_consts"], params["num_carry"]
    const_uk, carry_uk, xs_uk = split3(list(unks_in), nc, nk)
    while True:  # fixed point: which carries are unknown
        out_uk = partial_eval_jaxpr(jaxpr.jaxpr, const_uk + carry_uk + xs_uk).out_unknowns
        new_uk = [a or b for a, b in zip(carry_uk, out_uk[:nk], strict=True)]
        if new_uk == carry_uk:
            break
        carry_uk = new_uk
    in_uk = const_uk + carry_uk + xs_uk
    ny = len(jaxpr.out_avals) - nk
    pe = partial_eval_jaxpr(jaxpr.jaxpr, in_uk, carry_uk + [False] * ny)
    n_kc, n_kk = const_uk.count(False), carry_uk.count(False)
    # Residuals: known consts and xs are passed through as they are; computed residuals and
    # known carries (which change every iteration) are stacked by the known scan.
    const_res, xs_res, carry_res = [], [], []
    const_binders, stacked_binders, xs_binders = [], [], []
    computed_binders = []
    n_res = len(pe.res_sources)
    res_binders = pe.jaxpr_unknown.invars[:n_res]
    for v, s in zip(res_binders, pe.res_sources, strict=True):
        if s is None:
            computed_binders.append(v)
        elif s < n_kc:
            const_res.append(s)
            const_binders.append(v)
        elif s < n_kc + n_kk:
            carry_res.append(s)
            stacked_binders.append(v)
        else:
            xs_res.append(s)
            xs_binders.append(v)
    jk = pe.jaxpr_known
    known_body = Jaxpr([], jk.invars, jk.eqns, [*jk.outs, *(jk.invars[s] for s in carry_res)])
    n_known_out = pe.out_unknowns.count(False)
    stacked_avals = [_stacked(x.aval, length) for x in known_body.outs[n_known_out:]]
    c_lin, k_lin, x_lin = split3(list(params["linear"]), nc, nk)
    known_params = dict(
        jaxpr=ClosedJaxpr(known_body, []),
        length=length,
        reverse=params["reverse"],
        num_consts=n_kc,
        num_carry=n_kk,
        linear=tuple(lin for lin, u in zip(params["linear"], in_uk, strict=True) if not u),
    )
    ju = pe.jaxpr_unknown
    unk_in = ju.invars[n_res:]
    n_uc, n_uk = const_uk.count(True), carry_uk.count(True)
    unknown_body = Jaxpr(
        [],
        [
            *const_binders,
            *unk_in[:n_uc],
            *unk_in[n_uc : n_uc + n_uk],
            *computed_binders,
            *stacked_binders,
            *xs_binders,
            *unk_in[n_uc + n_uk :],
        ],
        ju.eqns,
        ju.outs,
    )
    unknown_linear = (
        [False] * len(const_res)
        + [lin for lin, u in zip(c_lin, const_uk, strict=True) if u]
        + [lin for lin, u in zip(k_lin, carry_uk, strict=True) if u]
        + [False] * (len(stacked_avals) + len(xs_res))
        + [lin for lin, u in zip(x_lin, xs_uk, strict=True) if u]
    )
    unknown_params = dict(
        jaxpr=ClosedJaxpr(unknown_body, []),
        length=length,
        reverse=params["reverse"],
        num_consts=len(const_res) + n_uc,
        num_carry=n_uk,
        linear=tuple(unknown_linear),
    )
    return _ScanSplit(
        in_uk,
        list(pe.out_unknowns),
        known_params,
        unknown_params,
        const_res,
        [s - n_kc - n_kk for s in xs_res],
        stacked_avals,
    )


def _scan_partial_eval(trace: Any, tracers: list[Any], **params: Any):
    split = _split_scan([not t.pval.is_known for t in tracers], params)
    known_vals = [t.pval.const for t, u in zip(tracers, split.in_unknowns, strict=True) if not u]
    n_known_out = split.out_unknowns.count(False)
    outs = []
    if n_known_out or split.stacked_res_avals:
        outs = scan_p.bind(*known_vals, **split.known_params)
    known_outs, stacked = outs[:n_known_out], outs[n_known_out:]
    nc, nk = params["num_consts"], params["num_carry"]
    n_kc = split.in_unknowns[:nc].count(False)
    n_kk = split.in_unknowns[nc : nc + nk].count(False)
    known_xs = known_vals[n_kc + n_kk :]

    def res(vals: Sequence[Any]) -> list[Any]:
        return [trace.instantiate_const(trace.lift(v)) for v in vals]

    unknown = [
        trace.instantiate_const(t) for t, u in zip(tracers, split.in_unknowns, strict=True) if u
    ]
    n_uc = split.in_unknowns[:nc].count(True)
    n_uk = split.in_unknowns[nc : nc + nk].count(True)
    unknown_in = [
        *res([known_vals[s] for s in split.const_res]),
        *unknown[: n_uc + n_uk],
        *res(stacked),
        *res([known_xs[s] for s in split.xs_res]),
        *unknown[n_uc + n_uk :],
    ]
    avals_out = scan_p.abstract_eval(*[t.aval for t in unknown_in], **split.unknown_params)
    unknown_outs = trace.stage_equation(scan_p, unknown_in, split.unknown_params, avals_out)
    known_it, unknown_it = iter(known_outs), iter(unknown_outs)
    return [next(unknown_it) if u else trace.lift(next(known_it)) for u in split.out_unknowns]


scan_p.def_partial_eval(_scan_partial_eval)


def _scan_partial_eval_jaxpr(unks_in: list[bool], eqn: JaxprEqn):
    split = _split_scan(unks_in, eqn.params)
    nc, nk = eqn.params["num_consts"], eqn.params["num_carry"]
    ins_known = [x for x, u in zip(eqn.inputs, split.in_unknowns, strict=True) if not u]
    ins_unknown = [x for x, u in zip(eqn.inputs, split.in_unknowns, strict=True) if u]
    n_kc = split.in_unknowns[:nc].count(False)
    n_kk = split.in_unknowns[nc : nc + nk].count(False)
    n_uc = split.in_unknowns[:nc].count(True)
    n_uk = split.in_unknowns[nc : nc + nk].count(True)
    outs_known = [v for v, u in zip(eqn.out_binders, split.out_unknowns, strict=True) if not u]
    outs_unknown = [v for v, u in zip(eqn.out_binders, split.out_unknowns, strict=True) if u]
    stacked = [Var(a) for a in split.stacked_res_avals]
    eqn_known = JaxprEqn(scan_p, ins_known, split.known_params, [*outs_known, *stacked])
    const_res = [ins_known[s] for s in split.const_res]
    xs_res = [ins_known[n_kc + n_kk + s] for s in split.xs_res]
    eqn_unknown = JaxprEqn(
        scan_p,
        [
            *const_res,
            *ins_unknown[: n_uc + n_uk],
            *stacked,
            *xs_res,
            *ins_unknown[n_uc + n_uk :],
        ],
        split.unknown_params,
        outs_unknown,
    )
    # Known carries made unknown by the fixed point are read by the unknown scan, too.
    promoted = [
        x for x, u0, u in zip(eqn.inputs, unks_in, split.in_unknowns, strict=True) if u and not u0
    ]
    residuals = [x for x in [*const_res, *stacked, *xs_res, *promoted] if type(x) is Var]
    return eqn_known, eqn_unknown, split.out_unknowns, residuals


scan_p.partial_eval_jaxpr_rule = _scan_partial_eval_jaxpr


# --- transpose: a scan in the other direction -----------------------------------------------


@scan_p.def_transpose
def _scan_transpose(
    cts: list[Any], *args: Any, jaxpr, length, reverse, num_consts, num_carry, linear
):
    nc, nk = num_consts, num_carry
    consts, init, xs = split3(args, nc, nk)
    const_lin = [type(c) is UndefinedPrimal for c in consts]
    xs_lin = [type(x) is UndefinedPrimal for x in xs]
    # Carries of a linear scan are linear; one that is defined here (e.g. an instantiated zero
    # tangent) is treated as linear too, and its cotangent dropped.
    res_c = [c for c, lin in zip(consts, const_lin, strict=True) if not lin]
    res_x = [x for x, lin in zip(xs, xs_lin, strict=True) if not lin]
    lin_c_avals = [c.aval for c in consts if type(c) is UndefinedPrimal]
    carry_avals = [a.strip_weak_type() for a in jaxpr.in_avals[nc : nc + nk]]
    lin_x_avals = [_unstacked(x.aval) for x in xs if type(x) is UndefinedPrimal]
    y_avals = [a.strip_weak_type() for a in jaxpr.out_avals[nk:]]
    n_lc, n_rc = len(lin_c_avals), len(res_c)

    def body_transpose(*args: Any) -> list[Any]:
        res_c_, ct_c_acc, ct_carry, rest = (
            args[:n_rc],
            args[n_rc : n_rc + n_lc],
            args[n_rc + n_lc : n_rc + n_lc + nk],
            args[n_rc + n_lc + nk :],
        )
        res_x_, ct_y = rest[: len(res_x)], rest[len(res_x) :]
        rc, rx = iter(res_c_), iter(res_x_)
        lc, lx = iter(lin_c_avals), iter(lin_x_avals)
        primals = [
            *(UndefinedPrimal(next(lc)) if lin else next(rc) for lin in const_lin),
            *(UndefinedPrimal(a) for a in carry_avals),
            *(UndefinedPrimal(next(lx)) if lin else next(rx) for lin in xs_lin),
        ]
        cts_in = backward_pass(jaxpr.jaxpr, [], primals, [*ct_carry, *ct_y])
        ct_c, ct_k, ct_x = split3(cts_in, n_lc, nk)
        return [
            *(add_any(acc, c) for acc, c in zip(ct_c_acc, ct_c, strict=True)),
            *map(instantiate, ct_k),
            *map(instantiate, ct_x),
        ]

    in_avals = [
        *(get_aval(c) for c in res_c),
        *lin_c_avals,
        *carry_avals,
        *(_unstacked(get_aval(x)) for x in res_x),
        *y_avals,
    ]
    body, body_consts = hoist_consts(trace_to_jaxpr(body_transpose, in_avals, "transpose"))
    ct_carry, ct_ys = cts[:nk], cts[nk:]
    outs = scan_p.bind(
        *body_consts,
        *res_c,
        *(zeros_like_aval(a) for a in lin_c_avals),
        *map(instantiate, ct_carry),
        *res_x,
        *map(instantiate, ct_ys),
        jaxpr=body,
        length=length,
        reverse=not reverse,
        num_consts=len(body_consts) + n_rc,
        num_carry=n_lc + nk,
        linear=(
            (False,) * (len(body_consts) + n_rc)
            + (True,) * (n_lc + nk)
            + (False,) * len(res_x)
            + (True,) * len(ct_ys)
        ),
    )
    ct_consts, ct_init, ct_xs = iter(outs[:n_lc]), outs[n_lc : n_lc + nk], iter(outs[n_lc + nk :])
    return [
        *(next(ct_consts) if lin else None for lin in const_lin),
        *(ct if type(x) is UndefinedPrimal else None for x, ct in zip(init, ct_init, strict=True)),
        *(next(ct_xs) if lin else None for lin in xs_lin),
    ]
