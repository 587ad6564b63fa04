"""Autodidax Part 5 grown into implicit differentiation: `custom_linear_solve` as a higher-order
primitive holding matvec and solve jaxprs, and `custom_root` on `custom_jvp` (JAX's
lax/control_flow/solves)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from mjcore.ad import UndefinedPrimal, Zero, instantiate, jvp_flat, tangent_aval, transpose_closed
from mjcore.backend.lowering import LoweringContext, lower_jaxpr_body
from mjcore.batching import NOT_MAPPED, move_bdim, moveaxis_to
from mjcore.control_flow.common import (
    axis_size_of,
    batch_jaxpr,
    def_compiled_impl,
    eval_closed,
    flatten_args,
    hoist_consts,
    typematch,
)
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.custom_derivatives import closure_convert, custom_jvp
from mjcore.jaxpr import ClosedJaxpr
from mjcore.lax import arithmetic
from mjcore.partial_eval import trace_to_jaxpr
from mjcore.tree_util import PyTreeDef, tree_flatten, tree_map, tree_unflatten


def _trace_linear(
    fname: str,
    what: str,
    fun: Callable[[Any], Any],
    tree: PyTreeDef,
    avals: Sequence[ShapedArray],
    has_aux: bool,
) -> tuple[ClosedJaxpr, list[Any], PyTreeDef | None]:
    """Trace `fun(x)` for `x` of `tree`/`avals` into a jaxpr with hoisted constants, checking
    that it returns (its first output, with `has_aux`) a value of the same structure and types.

    Returns the jaxpr (constants as leading inputs), the constants, and the aux tree."""
    cell: list[Any] = []

    def flat(*xs: Any) -> list[Any]:
        out = fun(tree_unflatten(tree, xs))
        if has_aux:
            if not isinstance(out, tuple | list) or len(out) != 2:
                raise TypeError(
                    f"{fname}: with has_aux=True, {what} must return a pair (solution, aux), "
                    f"got {type(out).__name__}"
                )
            out, aux = out
        else:
            aux = None
        x_flat, x_tree = tree_flatten(out)
        aux_flat, aux_tree = tree_flatten(aux)
        cell[:] = [x_tree, aux_tree]
        return [*x_flat, *aux_flat]

    closed = trace_to_jaxpr(flat, list(avals), f"{fname} {what}")
    x_tree, aux_tree = cell
    n = len(avals)
    out_avals = closed.out_avals[:n]
    if x_tree != tree or not all(map(typematch, out_avals, avals)):
        got = ", ".join(a.str_short() for a in closed.out_avals[: x_tree.num_leaves])
        want = ", ".join(a.str_short() for a in avals)
        raise TypeError(
            f"{fname}: {what} must return a value of the structure and types of b ({tree}: "
            f"{want}), got {x_tree}: {got}"
        )
    hoisted, consts = hoist_consts(closed)
    return hoisted, consts, aux_tree if has_aux else None


# --- custom_linear_solve --------------------------------------------------------------------


class _SolveJaxprs(NamedTuple):
    """The jaxprs a linear solve carries; each takes its constants first, then a vector.

    `matvec` maps x to A x. `solve` maps b to x (then any aux outputs). `transpose_solve`
    solves Aᵀ x = b; it is None when reverse mode was not made possible.
    """

    matvec: ClosedJaxpr
    solve: ClosedJaxpr
    transpose_solve: ClosedJaxpr | None


linear_solve_p = Primitive("custom_linear_solve", multiple_results=True)
def_compiled_impl(linear_solve_p)


def custom_linear_solve(
    matvec: Callable[[Any], Any],
    b: Any,
    solve: Callable[[Callable[[Any], Any], Any], Any],
    transpose_solve: Callable[[Callable[[Any], Any], Any], Any] | None = None,
    symmetric: bool = False,
    has_aux: bool = False,
) -> Any:
    """Solve `matvec(x) == b` with `solve`, differentiating implicitly, as JAX's
    `lax.custom_linear_solve`.

    Meaning (the derivatives never look inside `solve`)::

        x = solve(matvec, b)             # (x, aux) with has_aux
        # d x = solve(matvec, d b - (d matvec)(x))
        # reverse mode: b_bar = transpose_solve(vecmat, x_bar), vecmat = matvec transposed

    Args:
      matvec: a linear function; `b`'s structure in and out.
      b: the right-hand side, a pytree of arrays.
      solve: `solve(matvec, b)` returns x with `matvec(x) == b`.
      transpose_solve: `transpose_solve(vecmat, b)` solving the transposed system; needed
        for reverse mode unless `symmetric`.
      symmetric: the operator is symmetric, so `solve` serves as `transpose_solve`.
      has_aux: `solve` (and `transpose_solve`) return `(x, aux)`; aux has zero derivative.

    Returns:
      x (and aux with `has_aux`).

    Raises:
      TypeError: if `matvec` or `solve` does not map `b`'s structure and types to themselves.
    """
    fname = "custom_linear_solve"
    b_flat, tree = flatten_args(fname, "b", b)
    avals = [get_aval(x).strip_weak_type() for x in b_flat]
    matvec_jaxpr, mv_consts, _ = _trace_linear(fname, "matvec", matvec, tree, avals, False)
    solve_jaxpr, s_consts, aux_tree = _trace_linear(
        fname, "solve", lambda x: solve(matvec, x), tree, avals, has_aux
    )
    if symmetric:
        transpose_solve = solve
    ts_consts: list[Any]
    if transpose_solve is None:
        ts_jaxpr, ts_consts = None, []
    else:
        vecmat = _vecmat(matvec_jaxpr, mv_consts, tree)
        ts_jaxpr, ts_consts, ts_aux_tree = _trace_linear(
            fname, "transpose_solve", lambda x: transpose_solve(vecmat, x), tree, avals, has_aux
        )
        if ts_aux_tree != aux_tree:
            raise TypeError(
                f"{fname}: solve and transpose_solve must return aux of the same structure, "
                f"got {aux_tree} and {ts_aux_tree}"
            )
    outs = linear_solve_p.bind(
        *mv_consts,
        *s_consts,
        *ts_consts,
        *b_flat,
        jaxprs=_SolveJaxprs(matvec_jaxpr, solve_jaxpr, ts_jaxpr),
        const_lengths=(len(mv_consts), len(s_consts), len(ts_consts)),
    )
    x = tree_unflatten(tree, outs[: len(b_flat)])
    if aux_tree is None:
        return x
    return x, tree_unflatten(aux_tree, outs[len(b_flat) :])


def _vecmat(matvec: ClosedJaxpr, consts: Sequence[Any], tree: PyTreeDef) -> Callable[[Any], Any]:
    n = len(consts)
    nb = len(matvec.in_avals) - n
    transposed = transpose_closed(matvec, (False,) * n + (True,) * nb)

    def vecmat(y: Any) -> Any:
        y_flat, _ = tree_flatten(y)
        return tree_unflatten(tree, eval_closed(transposed)(*consts, *y_flat))

    return vecmat


def _split_operands(
    args: Sequence[Any], const_lengths: tuple[int, int, int]
) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
    n_mv, n_s, n_ts = const_lengths
    i, j, k = n_mv, n_mv + n_s, n_mv + n_s + n_ts
    return list(args[:i]), list(args[i:j]), list(args[j:k]), list(args[k:])


@linear_solve_p.def_abstract_eval
def _linear_solve_abstract_eval(
    *avals: ShapedArray, jaxprs: _SolveJaxprs, const_lengths: tuple[int, int, int]
) -> list[ShapedArray]:
    _, _, _, b = _split_operands(avals, const_lengths)
    x_avals = jaxprs.solve.out_avals[: len(b)]
    if not all(map(typematch, b, x_avals)):
        raise TypeError("custom_linear_solve: the solve jaxpr does not match b's types")
    return list(jaxprs.solve.out_avals)


@linear_solve_p.def_lowering
def _linear_solve_lowering(
    ctx: LoweringContext, *args: Any, jaxprs: _SolveJaxprs, const_lengths: tuple[int, int, int]
) -> list[Any]:
    # The solve runs as is: matvec and transpose_solve only matter to differentiation.
    _, s_consts, _, b = _split_operands(args, const_lengths)
    return lower_jaxpr_body(ctx.builder, jaxprs.solve.jaxpr, [], [*s_consts, *b])


def _linear_solve_jvp(
    primals: list[Any],
    tangents: list[Any],
    *,
    jaxprs: _SolveJaxprs,
    const_lengths: tuple[int, int, int],
) -> tuple[list[Any], list[Any]]:
    params = {"jaxprs": jaxprs, "const_lengths": const_lengths}
    mv_consts, s_consts, ts_consts, _ = _split_operands(primals, const_lengths)
    mv_dots, _, _, b_dots = _split_operands(tangents, const_lengths)
    outs = linear_solve_p.bind(*primals, **params)
    nb = len(b_dots)
    x, aux = outs[:nb], outs[nb:]
    aux_dots = [Zero(tangent_aval(get_aval(a))) for a in aux]
    # A x = b  =>  A dx = db - dA x: the same solve applied to another right-hand side.
    if any(type(t) is not Zero for t in mv_dots):
        x_zeros = [Zero(tangent_aval(get_aval(v))) for v in x]
        _, mv_dot_x = jvp_flat(eval_closed(jaxprs.matvec), [*mv_consts, *x], [*mv_dots, *x_zeros])
        rhs = [_sub_tangents(db, dax) for db, dax in zip(b_dots, mv_dot_x, strict=True)]
    else:
        rhs = list(b_dots)
    if all(type(t) is Zero for t in rhs):
        return outs, [*(Zero(tangent_aval(get_aval(v))) for v in x), *aux_dots]
    rhs = [instantiate(t) for t in rhs]
    x_dot = linear_solve_p.bind(*mv_consts, *s_consts, *ts_consts, *rhs, **params)[:nb]
    return outs, [*x_dot, *aux_dots]


def _sub_tangents(a: Any, b: Any) -> Any:
    if type(b) is Zero:
        return a
    if type(a) is Zero:
        return arithmetic.neg(b)
    return arithmetic.sub(a, b)


linear_solve_p.def_jvp(_linear_solve_jvp, symbolic_zeros=True)


@linear_solve_p.def_transpose
def _linear_solve_transpose(
    cts: list[Any], *args: Any, jaxprs: _SolveJaxprs, const_lengths: tuple[int, int, int]
) -> list[Any]:
    mv_consts, s_consts, ts_consts, b = _split_operands(args, const_lengths)
    if any(type(c) is UndefinedPrimal for c in [*mv_consts, *s_consts, *ts_consts]):
        raise TypeError(
            "custom_linear_solve: the solution is linear only in b, not in the values matvec "
            "or solve close over"
        )
    if jaxprs.transpose_solve is None:
        raise TypeError(
            "transpose_solve required for backwards mode automatic differentiation of "
            "custom_linear_solve (pass transpose_solve=..., or symmetric=True)"
        )
    nb = len(b)
    n_mv = len(mv_consts)
    vecmat = transpose_closed(jaxprs.matvec, (False,) * n_mv + (True,) * nb)
    ct_x = [instantiate(ct) for ct in cts[:nb]]
    outs = linear_solve_p.bind(
        *mv_consts,
        *ts_consts,
        *s_consts,
        *ct_x,
        jaxprs=_SolveJaxprs(vecmat, jaxprs.transpose_solve, jaxprs.solve),
        const_lengths=(n_mv, len(ts_consts), len(s_consts)),
    )
    b_bar = [ct if type(v) is UndefinedPrimal else None for v, ct in zip(b, outs[:nb], strict=True)]
    return [None] * (len(args) - nb) + b_bar


@linear_solve_p.def_batching
def _linear_solve_batching(
    vals: list[Any],
    dims: list[int | None],
    *,
    jaxprs: _SolveJaxprs,
    const_lengths: tuple[int, int, int],
) -> tuple[list[Any], list[int | None]]:
    axis_size = axis_size_of(vals, dims)
    nb = len(vals) - sum(const_lengths)
    n_consts = len(vals) - nb
    # Constants keep their batching; every b (hence x) is batched, at axis 0.
    consts = [
        v if d is NOT_MAPPED else move_bdim(v, d, 0)
        for v, d in zip(vals[:n_consts], dims[:n_consts], strict=True)
    ]
    b = [
        moveaxis_to(v, d, 0, axis_size)
        for v, d in zip(vals[n_consts:], dims[n_consts:], strict=True)
    ]
    batched = [d is not NOT_MAPPED for d in dims[:n_consts]]
    mv_bat, s_bat, ts_bat, _ = _split_operands([*batched, *[True] * nb], const_lengths)

    def batch(closed: ClosedJaxpr, consts_batched: list[bool]) -> ClosedJaxpr:
        return batch_jaxpr(closed, axis_size, [*consts_batched, *[True] * nb], True)[0]

    ts = jaxprs.transpose_solve
    new = _SolveJaxprs(
        batch(jaxprs.matvec, mv_bat),
        batch(jaxprs.solve, s_bat),
        None if ts is None else batch(ts, ts_bat),
    )
    outs = linear_solve_p.bind(*consts, *b, jaxprs=new, const_lengths=const_lengths)
    return outs, [0] * len(outs)


# --- custom_root ----------------------------------------------------------------------------


def custom_root(
    f: Callable[[Any], Any],
    initial_guess: Any,
    solve: Callable[[Callable[[Any], Any], Any], Any],
    tangent_solve: Callable[[Callable[[Any], Any], Any], Any],
    has_aux: bool = False,
) -> Any:
    """Find a root of `f` with `solve`, differentiating implicitly, as JAX's `lax.custom_root`.

    Meaning (the derivatives never look inside `solve`)::

        x = solve(f, initial_guess)      # (x, aux) with has_aux; f(x) == 0
        # f(x(θ), θ) = 0  =>  dx = -(∂f/∂x)⁻¹ (∂f/∂θ) dθ, computed as
        # dx = -tangent_solve(lambda v: ∂f/∂x · v, ∂f/∂θ · dθ)

    `θ` are the values `f` closes over. `tangent_solve(g, y)` solves the linear `g(x) = y`
    (e.g. `lambda g, y: y / g(1.0)` for scalars); it must be linear in `y` for reverse mode.
    The solution has no derivative with respect to `initial_guess`; aux has none at all.
    """
    _, guess_tree = tree_flatten(initial_guess)
    # Every function is closure-converted, so the values it closes over (tracers of enclosing
    # transformations) reach the custom_jvp function as arguments rather than leaking into it.
    f_conv, f_consts = closure_convert(f, initial_guess)

    def f_at(consts: Sequence[Any]) -> Callable[[Any], Any]:
        return lambda x: f_conv(x, *consts)

    def linearized(x: Any, consts: Sequence[Any]) -> Callable[[Any], Any]:
        """v -> ∂f/∂x(x) · v."""
        x_flat, x_tree = tree_flatten(x)

        def f_of_x(*xs: Any) -> list[Any]:
            return tree_flatten(f_conv(tree_unflatten(x_tree, xs), *consts))[0]

        def apply(v: Any) -> Any:
            _, out_dot = jvp_flat(f_of_x, x_flat, tree_flatten(v)[0])
            return tree_unflatten(x_tree, [instantiate(t) for t in out_dot])

        return apply

    solve_conv, s_consts = closure_convert(lambda x0: solve(f_at(f_consts), x0), initial_guess)
    ls_conv, ls_consts = closure_convert(
        lambda x, y: tangent_solve(linearized(x, f_consts), y), initial_guess, initial_guess
    )

    @custom_jvp
    def root(fc: tuple[Any, ...], sc: tuple[Any, ...], lc: tuple[Any, ...], guess: Any) -> Any:
        return solve_conv(guess, *sc)

    @root.defjvp
    def root_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
        fc, sc, lc, guess = primals
        fc_dot = tangents[0]
        out = root(fc, sc, lc, guess)
        sol, aux = out if has_aux else (out, None)
        sol_tree = tree_flatten(sol)[1]
        if sol_tree != guess_tree:
            raise TypeError(
                f"custom_root: solve must return a solution of the structure of initial_guess "
                f"({guess_tree}), got {sol_tree}"
            )

        def f_of_consts(*cs: Any) -> list[Any]:
            return tree_flatten(f_conv(sol, *cs))[0]

        _, rhs_flat = jvp_flat(f_of_consts, list(fc), list(fc_dot))
        rhs = tree_unflatten(sol_tree, [instantiate(r) for r in rhs_flat])
        sol_dot = tree_map(arithmetic.neg, ls_conv(sol, rhs, *lc))
        if not has_aux:
            return sol, sol_dot
        aux_dot = tree_map(lambda a: Zero(tangent_aval(get_aval(a))), aux)
        return (sol, aux), (sol_dot, aux_dot)

    return root(tuple(f_consts), tuple(s_consts), tuple(ls_consts), initial_guess)
