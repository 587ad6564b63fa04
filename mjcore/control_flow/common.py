"""Autodidax Part 5 (control flow): what cond, while and scan share — tracing user functions to
closed jaxprs, checking their types, joining constants, and transforming sub-jaxprs."""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from mjcore import core, dtypes
from mjcore.api_util import flatten_fun
from mjcore.array import Array
from mjcore.backend import client as backend
from mjcore.backend.lowering import lower_primitive
from mjcore.batching import NOT_MAPPED, batch_jaxpr_like, moveaxis_to
from mjcore.core import ShapedArray, get_aval
from mjcore.dispatch import to_buffer
from mjcore.jaxpr import ClosedJaxpr, Jaxpr, Var, eval_jaxpr
from mjcore.lax.base import convert_element_type
from mjcore.partial_eval import trace_to_jaxpr
from mjcore.tree_util import (
    PyTreeDef,
    keystr,
    tree_flatten,
    tree_leaves_with_path,
    tree_unflatten,
)

# --- tracing user functions -----------------------------------------------------------------


def trace_fun(
    fun: Callable[..., Any], in_tree: PyTreeDef, in_avals: Sequence[ShapedArray], what: str
) -> tuple[ClosedJaxpr, PyTreeDef]:
    """Stage `fun(*tree_unflatten(in_tree, args))` into a closed jaxpr and its output tree."""
    flat_fun, out_tree_cell = flatten_fun(fun, in_tree, what)
    closed = trace_to_jaxpr(flat_fun, list(in_avals), what)
    return closed, out_tree_cell[0]


def flatten_args(fname: str, what: str, tree: Any) -> tuple[list[Any], PyTreeDef]:
    """Flatten a pytree of operands, insisting that the leaves are arrays."""
    leaves, treedef = tree_flatten(tree)
    for x in leaves:
        if not core.is_array_like(x):
            raise TypeError(
                f"{fname}: {what} must be arrays or Python scalars (or pytrees of them), got "
                f"{type(x).__name__}: {x!r:.80}"
            )
    return leaves, treedef


def split3(xs: Sequence[Any], n1: int, n2: int) -> tuple[list[Any], list[Any], list[Any]]:
    """`xs` cut into its first `n1` items, the next `n2`, and the rest (consts, carry, xs)."""
    return list(xs[:n1]), list(xs[n1 : n1 + n2]), list(xs[n1 + n2 :])


def hoist_consts(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Any]]:
    """Turn constvars into leading invars, so constants are passed as operands."""
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr([], [*j.constvars, *j.invars], j.eqns, j.outs), []), closed.consts


def eval_closed(closed: ClosedJaxpr) -> Callable[..., list[Any]]:
    return functools.partial(eval_jaxpr, closed.jaxpr, closed.consts)


def join_consts(branches: Sequence[ClosedJaxpr]) -> tuple[list[ClosedJaxpr], list[Any]]:
    """Closure-convert several jaxprs to one input signature (Autodidax `_join_jaxpr_consts`).

    Each result takes all the constants as leading arguments. A constant closed over by several
    jaxprs (the same object) is passed once.
    """
    consts: list[Any] = []
    slot: dict[int, int] = {}
    for b in branches:
        for c in b.consts:
            if id(c) not in slot:
                slot[id(c)] = len(consts)
                consts.append(c)
    joined = []
    for b in branches:
        binders = [Var(get_aval(c)) for c in consts]
        for v, c in zip(b.jaxpr.constvars, b.consts, strict=True):
            binders[slot[id(c)]] = v
        j = b.jaxpr
        joined.append(ClosedJaxpr(Jaxpr([], [*binders, *j.invars], j.eqns, j.outs), []))
    return joined, consts


def permute_jaxpr(jaxpr: Jaxpr, invars_order: Sequence[int], outs_order: Sequence[int]) -> Jaxpr:
    """The same computation with its inputs and outputs reordered (by old positions)."""
    return Jaxpr(
        jaxpr.constvars,
        [jaxpr.invars[i] for i in invars_order],
        jaxpr.eqns,
        [jaxpr.outs[i] for i in outs_order],
    )


def add_unused_invars(jaxpr: Jaxpr, avals: Sequence[ShapedArray], at: int) -> Jaxpr:
    """`jaxpr` taking extra arguments of `avals` at position `at` that it ignores."""
    invars = list(jaxpr.invars)
    invars[at:at] = [Var(a) for a in avals]
    return Jaxpr(jaxpr.constvars, invars, jaxpr.eqns, jaxpr.outs)


# --- messages about pytrees and types ---------------------------------------------------------


def leaf_paths(tree: Any) -> list[str]:
    """JAX-style key paths (`[0]`, `['w']`, `.field`, `[<flat index 0>]`) of the leaves of
    `tree`, in order: the registry's own key paths, so a node whose children are not its
    fields (an `OptimizerState`-like node with aux data) gets the right number of paths."""
    return [keystr(path) for path, _ in tree_leaves_with_path(tree)]


def check_tree_and_types(
    fname: str,
    what1: str,
    tree1: PyTreeDef,
    avals1: Sequence[ShapedArray],
    what2: str,
    tree2: PyTreeDef,
    avals2: Sequence[ShapedArray],
    suffix: str,
) -> None:
    """TypeError naming the leaves where two typed pytrees differ (weak types may differ)."""
    if tree1 != tree2:
        raise TypeError(
            f"{fname}: {what1} and {what2} must have the same pytree structure, but "
            f"{what1} is {tree1} and {what2} is {tree2}. {suffix}"
        )
    paths = leaf_paths(tree_unflatten(tree1, list(range(len(avals1)))))
    diffs = [
        f"  * {what1}{_at(p)} has type {a1.str_short()} but {what2}{_at(p)} has type "
        f"{a2.str_short()}"
        for p, a1, a2 in zip(paths, avals1, avals2, strict=True)
        if not typematch(a1, a2)
    ]
    if diffs:
        raise TypeError(
            f"{fname}: {what1} and {what2} must have equal types (shapes and dtypes), but they "
            "differ:\n" + ";\n".join(diffs) + f".\n{suffix}"
        )


def _at(path: str) -> str:
    return f" at {path}" if path else ""


def typematch(a: ShapedArray, b: ShapedArray) -> bool:
    """Equal types up to weak typing."""
    return a.shape == b.shape and a.dtype == b.dtype


def promote_weak_carry(
    init: Sequence[Any], in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray]
) -> tuple[list[Any], bool]:
    """Cast weakly typed initial carries (Python scalars) to the dtype the body returns.

    `fori_loop(0, n, lambda i, x: x + 0.5, 0)` starts with a weak int and returns floats;
    as in JAX the initial value is promoted instead of failing the carry type check.
    """
    out, changed = [], False
    for x, a_in, a_out in zip(init, in_avals, out_avals, strict=True):
        if a_in.weak_type and a_in.shape == a_out.shape and a_in.dtype != a_out.dtype:
            new_dtype, _ = dtypes.result_type(a_in, a_out)
            if new_dtype != a_in.dtype:
                x = convert_element_type(x, new_dtype, weak_type=a_out.weak_type)
                changed = True
        out.append(x)
    return out, changed


# --- transforming sub-jaxprs ----------------------------------------------------------------


def batch_jaxpr(
    closed: ClosedJaxpr,
    axis_size: int,
    in_batched: Sequence[bool],
    instantiate: Sequence[bool] | bool,
) -> tuple[ClosedJaxpr, list[bool]]:
    """Batch `closed` with batched inputs and outputs on axis 0.

    Returns the batched jaxpr and which outputs are batched: those that depend on a batched
    input, and those forced by `instantiate` (broadcast along the batch axis).
    """
    n_out = len(closed.out_avals)
    inst = [instantiate] * n_out if isinstance(instantiate, bool) else list(instantiate)
    in_avals = [
        a.update(shape=(axis_size, *a.shape)) if b else a
        for a, b in zip(closed.in_avals, in_batched, strict=True)
    ]
    out_batched: list[bool] = []

    def fun(*args: Any) -> list[Any]:
        dims = [0 if b else NOT_MAPPED for b in in_batched]
        outs, bdims = batch_jaxpr_like(eval_closed(closed), args, dims, axis_size)
        out_batched[:] = [d is not NOT_MAPPED or i for d, i in zip(bdims, inst, strict=True)]
        return [
            moveaxis_to(o, d, 0, axis_size) if b else o
            for o, d, b in zip(outs, bdims, out_batched, strict=True)
        ]

    batched = trace_to_jaxpr(fun, in_avals, "vmap")
    return batched, list(out_batched)


def axis_size_of(vals: Sequence[Any], dims: Sequence[int | None]) -> int:
    return next(
        get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not NOT_MAPPED
    )


def stage_whole_equation(
    trace: Any, primitive: core.Primitive, tracers: list[Any], params: dict[str, Any]
) -> list[Any]:
    """Partial evaluation's default: every output unknown, known inputs become residuals."""
    tracers_in = [trace.instantiate_const(t) for t in tracers]
    avals_out = primitive.abstract_eval(*[t.aval for t in tracers_in], **params)
    return trace.stage_equation(primitive, tracers_in, params, avals_out)


# --- eager evaluation -----------------------------------------------------------------------

# Compiled programs of eager control flow, keyed by the lowered module's text (and host
# callbacks). Every call traces
# fresh jaxprs, so a key holding them (as for first-order primitives) would miss every time
# and keep one executable per call alive; the text is a content address (constants are
# operands, not part of it), so repeated calls reuse one executable. Least recently used
# entries are evicted.
_CACHE_SIZE = 256
_programs: OrderedDict[Any, backend.Program] = OrderedDict()
_compile_lock = threading.Lock()
backend.clear_at_exit(_programs.clear)


def def_compiled_impl(primitive: core.Primitive) -> None:
    """Eager `impl`: run the primitive's own lowering as a one-equation module."""

    def impl(*args: Any, **params: Any) -> list[Array]:
        bufs, avals = [], []
        for x in args:
            buf, aval = to_buffer(x)
            bufs.append(buf)
            avals.append(aval)
        avals_out = primitive.abstract_eval(*avals, **params)
        text, host_callbacks = lower_primitive(primitive, avals, avals_out, params)
        # The same text calling other host callbacks is another program.
        key = (text, tuple(avals_out), host_callbacks)
        with _compile_lock:
            program = _programs.get(key)
            if program is None:
                relower = functools.partial(lower_primitive, primitive, avals, avals_out, params)
                program = _programs[key] = backend.Program(
                    text, avals_out, host_callbacks, relower=relower
                )
                if len(_programs) > _CACHE_SIZE:
                    _programs.popitem(last=False)
            else:
                _programs.move_to_end(key)
        outs = program.run(bufs)
        return [Array(b, a) for b, a in zip(outs, avals_out, strict=True)]

    primitive.def_impl(impl)
