"""Autodidax Parts 1-2, user-facing: `jvp`, `vmap`, `make_jaxpr` and friends with pytrees."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from mjcore import core, tree_util
from mjcore.ad import Zero, jvp_flat, tangent_aval
from mjcore.batching import NOT_MAPPED, batch_jaxpr_like
from mjcore.core import ShapedArray, get_aval
from mjcore.jaxpr import ClosedJaxpr, eval_jaxpr
from mjcore.partial_eval import trace_to_jaxpr
from mjcore.tree_util import PyTreeDef, tree_flatten, tree_unflatten

# --- helpers --------------------------------------------------------------------------------


def _fun_name(fun: Callable[..., Any]) -> str:
    return getattr(fun, "__name__", type(fun).__name__)


def flatten_fun(
    fun: Callable[..., Any], in_tree: PyTreeDef
) -> tuple[Callable[..., list[Any]], list[PyTreeDef]]:
    """A flat version of `fun` and a cell that receives its output tree once it has run."""
    out_tree_store: list[PyTreeDef] = []

    def flat_fun(*flat_args: Any) -> list[Any]:
        args = tree_unflatten(in_tree, flat_args)
        out = fun(*args)
        flat_out, out_tree = tree_flatten(out)
        out_tree_store.append(out_tree)
        return flat_out

    return flat_fun, out_tree_store


def _check_array_leaves(fname: str, what: str, leaves: Sequence[Any]) -> None:
    for x in leaves:
        if not core.is_array_like(x):
            raise TypeError(
                f"{fname}: {what} must be arrays or Python scalars, got {type(x).__name__}: "
                f"{x!r:.80}"
            )


def _arg_names(fun: Callable[..., Any], in_tree: PyTreeDef, n: int) -> list[str] | None:
    """Readable names for the flat arguments of `fun` (for error messages)."""
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        return None
    children = in_tree.children()
    names: list[str] = []
    for i, child in enumerate(children):
        base = params[i] if i < len(params) else f"args[{i}]"
        k = child.num_leaves
        names.extend(
            [f"argument '{base}'"] * k
            if k == 1
            else [f"argument '{base}' (leaf {j})" for j in range(k)]
        )
    return names if len(names) == n else None


# --- jvp ------------------------------------------------------------------------------------


def jvp(
    fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]
) -> tuple[Any, Any]:
    """Forward-mode derivative: `(fun(*primals), d fun(primals) . tangents)`.

    `primals` and `tangents` are tuples (or lists) of pytrees of equal structure, shapes and
    dtypes, as in `jax.jvp`.
    """
    if not isinstance(primals, tuple | list) or not isinstance(tangents, tuple | list):
        raise TypeError(
            "jvp: primal and tangent arguments must be tuples or lists, got "
            f"{type(primals).__name__} and {type(tangents).__name__}"
        )
    primals_flat, in_tree = tree_flatten(tuple(primals))
    tangents_flat, in_tree2 = tree_flatten(tuple(tangents))
    if in_tree != in_tree2:
        raise TypeError(
            f"jvp: primal and tangent arguments must have the same tree structure; got "
            f"{in_tree} and {in_tree2}"
        )
    _check_array_leaves("jvp", "primal values", primals_flat)
    for p, t in zip(primals_flat, tangents_flat, strict=True):
        pa, ta = get_aval(p), get_aval(t)
        if pa.shape != ta.shape:
            raise ValueError(
                f"jvp: primal and tangent shapes must match, got {pa.shape} and {ta.shape}"
            )
    tangents_in = [
        t if tangent_aval(get_aval(p)).dtype.kind in "fc" else Zero(tangent_aval(get_aval(p)))
        for p, t in zip(primals_flat, tangents_flat, strict=True)
    ]
    flat_fun, out_tree = flatten_fun(fun, in_tree)
    primals_out, tangents_out = jvp_flat(flat_fun, primals_flat, tangents_in)
    tangents_out = [_instantiate_output(t) for t in tangents_out]
    return tree_unflatten(out_tree[0], primals_out), tree_unflatten(out_tree[0], tangents_out)


def _instantiate_output(t: Any) -> Any:
    from mjcore.ad import instantiate

    return instantiate(t)


# --- vmap -----------------------------------------------------------------------------------


def vmap(
    fun: Callable[..., Any],
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_size: int | None = None,
) -> Callable[..., Any]:
    """Vectorise `fun` over an axis of its inputs, as `jax.vmap`.

    `in_axes` is an int, None or a pytree prefix of the positional arguments; `out_axes`
    likewise for the outputs. Negative axes count from the end. `axis_size` is needed only
    when no input is batched.
    """
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    _check_axes_spec("in_axes", in_axes)
    _check_axes_spec("out_axes", out_axes)

    @functools.wraps(fun)
    def batched_fun(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError(
                f"vmap({_fun_name(fun)}): keyword arguments are not mapped; pass them "
                "positionally or close over them with functools.partial"
            )
        args_flat, in_tree = tree_flatten(args)
        _check_array_leaves(f"vmap({_fun_name(fun)})", "arguments", args_flat)
        axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                f"vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                f"positional arguments passed to the function, but got len(in_axes)="
                f"{len(in_axes)}, len(args)={len(args)}"
            )
        try:
            dims_flat = tree_util.broadcast_prefix(axes, args, is_leaf=lambda x: x is None)
        except ValueError as err:
            raise ValueError(f"vmap in_axes specification must be a tree prefix: {err}") from err
        dims_flat = [
            _canonical_axis(d, get_aval(x).ndim, "in_axes", x)
            for d, x in zip(dims_flat, args_flat, strict=True)
        ]
        size = _mapped_size(args_flat, dims_flat, axis_size, fun)
        flat_fun, out_tree = flatten_fun(fun, in_tree)
        vals_out, bdims_out = batch_jaxpr_like(flat_fun, args_flat, dims_flat, size)
        tree = out_tree[0]
        out_dims = tree_util.broadcast_prefix(
            out_axes, tree_unflatten(tree, vals_out), is_leaf=lambda x: x is None
        )
        outs = []
        for v, bd, od in zip(vals_out, bdims_out, out_dims, strict=True):
            outs.append(_move_out(v, bd, od, size, fun))
        return tree_unflatten(tree, outs)

    return batched_fun


def _check_axes_spec(name: str, spec: Any) -> None:
    for leaf in tree_util.tree_leaves(spec, is_leaf=lambda x: x is None):
        if leaf is not None and not isinstance(leaf, int):
            raise TypeError(
                f"vmap {name} must be an int, None, or a (nested) tuple of those; got {spec!r}"
            )


def _canonical_axis(d: int | None, ndim: int, name: str, x: Any) -> int | None:
    if d is None:
        return NOT_MAPPED
    if not -ndim <= d < ndim:
        raise ValueError(
            f"vmap was requested to map its argument along axis {d}, which implies that its "
            f"rank should be at least {max(d + 1, -d)}, but is only {ndim} (its shape is "
            f"{get_aval(x).shape})"
        )
    return d % ndim


def _mapped_size(
    args: Sequence[Any], dims: Sequence[int | None], axis_size: int | None, fun: Any
) -> int:
    sizes = {get_aval(x).shape[d] for x, d in zip(args, dims, strict=True) if d is not None}
    if axis_size is not None:
        sizes.add(axis_size)
    if not sizes:
        raise ValueError(
            f"vmap({_fun_name(fun)}) must have at least one non-None value in in_axes, or be "
            "given axis_size"
        )
    if len(sizes) > 1:
        detail = ", ".join(
            f"arg {i} of shape {get_aval(x).shape} mapped on axis {d}"
            for i, (x, d) in enumerate(zip(args, dims, strict=True))
            if d is not None
        )
        raise ValueError(
            f"vmap({_fun_name(fun)}) got inconsistent sizes for the mapped axes: {detail}"
            + (f", axis_size={axis_size}" if axis_size is not None else "")
        )
    return sizes.pop()


def _move_out(v: Any, bdim: int | None, out_axis: int | None, size: int, fun: Any) -> Any:
    from mjcore.batching import moveaxis_to

    if out_axis is None:
        if bdim is not NOT_MAPPED:
            raise ValueError(
                f"vmap({_fun_name(fun)}) has out_axes=None for an output that depends on a "
                "mapped input; only unbatched outputs can use out_axes=None"
            )
        return v
    ndim = get_aval(v).ndim + (1 if bdim is NOT_MAPPED else 0)
    if not -ndim <= out_axis < ndim:
        raise ValueError(f"vmap out_axes={out_axis} is out of range for an output of rank {ndim}")
    return moveaxis_to(v, bdim, out_axis % ndim, size)


# --- make_jaxpr -----------------------------------------------------------------------------


def make_jaxpr(
    fun: Callable[..., Any], static_argnums: int | Sequence[int] = ()
) -> Callable[..., ClosedJaxpr]:
    """A function returning the jaxpr of `fun` traced at the given arguments' shapes/dtypes."""
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def jaxpr_maker(*args: Any) -> ClosedJaxpr:
        dyn_args = [a for i, a in enumerate(args) if i not in static]

        def call(*dyn: Any) -> Any:
            it = iter(dyn)
            full = [a if i in static else next(it) for i, a in enumerate(args)]
            return fun(*full)

        args_flat, in_tree = tree_flatten(tuple(dyn_args))
        _check_array_leaves(f"make_jaxpr({_fun_name(fun)})", "arguments", args_flat)
        avals = [get_aval(x) for x in args_flat]
        flat_fun, _ = flatten_fun(call, in_tree)
        return trace_to_jaxpr(flat_fun, avals, f"make_jaxpr({_fun_name(fun)})")

    return jaxpr_maker


def eval_closed_jaxpr(closed: ClosedJaxpr, *args: Any) -> list[Any]:
    """Evaluate a closed jaxpr on arguments (under any active transformation)."""
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def shape_dtype(x: Any) -> ShapedArray:
    return get_aval(x)
