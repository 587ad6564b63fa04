"""Autodidax Parts 1-2, user-facing: `jvp`, `vmap`, `make_jaxpr` and friends with pytrees."""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from mjcore import core, dtypes, eager_vjp, tree_util
from mjcore import sharding as sharding_mod
from mjcore.ad import (
    UndefinedPrimal,
    Zero,
    backward_pass,
    instantiate,
    jvp_flat,
    linearize_flat,
    tangent_aval,
    vjp_flat,
)
from mjcore.api_util import check_outputs, flatten_fun
from mjcore.array import Array
from mjcore.batching import NOT_MAPPED, batch_jaxpr_like, moveaxis_to
from mjcore.core import ShapedArray, get_aval
from mjcore.errors import InPlaceUpdateError, MissingRuleError
from mjcore.jaxpr import ClosedJaxpr, eval_jaxpr
from mjcore.jaxpr import eval_closed_jaxpr as eval_closed_jaxpr
from mjcore.jit import JittedFunction
from mjcore.lax import base
from mjcore.lax.base import full
from mjcore.lax.slicing import slice as lax_slice
from mjcore.partial_eval import trace_to_jaxpr
from mjcore.sharded import ShardedArray
from mjcore.sharding import NamedSharding, Sharding
from mjcore.tree_util import Partial, tree_flatten, tree_unflatten

# --- helpers --------------------------------------------------------------------------------


def _fun_name(fun: Callable[..., Any]) -> str:
    return getattr(fun, "__name__", type(fun).__name__)


def _check_array_leaves(fname: str, what: str, leaves: Sequence[Any]) -> None:
    for x in leaves:
        if not core.is_array_like(x):
            raise TypeError(
                f"{fname}: {what} must be arrays or Python scalars, got {type(x).__name__}: "
                f"{x!r:.80}"
            )


# --- jvp ------------------------------------------------------------------------------------


def jvp(
    fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]
) -> tuple[Any, Any]:
    """Forward-mode derivative: `(fun(*primals), d fun(primals) . tangents)`.

    `primals` and `tangents` are tuples (or lists) of pytrees of equal structure, shapes and
    dtypes, as in JAX's `jvp`.
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
        _check_tangent_dtype(pa, ta)
    tangents_in = [
        t
        if dtypes.kind(tangent_aval(get_aval(p)).dtype) in "fc"
        else Zero(tangent_aval(get_aval(p)))
        for p, t in zip(primals_flat, tangents_flat, strict=True)
    ]
    flat_fun, out_tree = flatten_fun(fun, in_tree, _fun_name(fun))
    primals_out, tangents_out = jvp_flat(flat_fun, primals_flat, tangents_in)
    tangents_out = [_instantiate_output(t) for t in tangents_out]
    return tree_unflatten(out_tree[0], primals_out), tree_unflatten(out_tree[0], tangents_out)


def _check_tangent_dtype(primal: ShapedArray, tangent: ShapedArray) -> None:
    """JAX's TypeError for a tangent whose dtype is not its primal's.

    NB: JAX wants float0 tangents for integer and boolean primals; integer and boolean
    tangents are accepted for them here too (they are ignored), a floating one raises.
    """
    if dtypes.is_inexact(primal.dtype):
        if tangent.dtype == primal.dtype:
            return
        expected = primal.dtype.name
    elif not dtypes.is_inexact(tangent.dtype):
        return
    else:
        expected = "float0"
    raise TypeError(
        "jvp: primal and tangent arguments do not match; dtypes must be equal, or in case of "
        "int/bool primal dtype the tangent dtype must be float0. Got primal dtype "
        f"{primal.dtype.name} and so expected tangent dtype {expected}, but got tangent dtype "
        f"{tangent.dtype.name} instead."
    )


def _check_real_dtypes(fname: str, what: str, avals: Sequence[ShapedArray], kinds: str) -> None:
    """JAX's TypeError for jacfwd/jacrev/grad inputs or outputs outside `kinds` ("f": real
    floating, "fc": inexact, "c": complex when holomorphic)."""
    for aval in avals:
        if dtypes.kind(aval.dtype) in kinds:
            continue
        if kinds == "c":
            raise TypeError(
                f"{fname} with holomorphic=True requires {what}s with complex dtype, but got "
                f"{aval.dtype.name}."
            )
        if kinds == "fc":
            raise TypeError(
                f"{fname} requires real- or complex-valued {what}s (input dtype that is a "
                f"sub-dtype of np.inexact), but got {aval.dtype.name}. If you want to use "
                "Boolean- or integer-valued inputs, use vjp."
            )
        direct = "mjcore.jvp" if fname == "jacfwd" else "mjcore.vjp"
        raise TypeError(
            f"{fname} requires real-valued {what}s ({what} dtype that is a sub-dtype of "
            f"np.floating), but got {aval.dtype.name}. For holomorphic differentiation, pass "
            f"holomorphic=True. For differentiation of non-holomorphic functions involving "
            f"complex {what}s or integer {what}s, use {direct} directly."
        )


def _check_grad_output(out: Any, has_aux: bool, holomorphic: bool) -> None:
    """JAX's TypeError for a complex output of `grad` without `holomorphic=True` (its
    gradient is not that of a real function), or a real one with it."""
    value = out[0] if has_aux else out
    if core.is_array_like(value):
        _check_real_dtypes("grad", "output", [get_aval(value)], "c" if holomorphic else "f")


def _instantiate_output(t: Any) -> Any:
    return instantiate(t)


# --- vmap -----------------------------------------------------------------------------------


def vmap(
    fun: Callable[..., Any],
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_size: int | None = None,
    axis_name: Any = None,
) -> Callable[..., Any]:
    """Vectorise `fun` over an axis of its inputs, as JAX's `vmap`.

    `in_axes` is an int, None or a pytree prefix of the positional arguments; `out_axes`
    likewise for the outputs. Negative axes count from the end. `axis_size` is needed only
    when no input is batched. `axis_name` names the mapped axis for collectives
    (`mjcore.lax.psum(x, axis_name)` and friends act across the batch).
    """
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    _check_axes_spec("in_axes", in_axes)
    _check_axes_spec("out_axes", out_axes)

    @functools.wraps(fun, updated=())
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
        flat_fun, out_tree = flatten_fun(fun, in_tree, _fun_name(fun))
        vals_out, bdims_out = batch_jaxpr_like(
            flat_fun, args_flat, dims_flat, size, axis_name=axis_name
        )
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

    @functools.wraps(fun, updated=())
    def jaxpr_maker(*args: Any) -> ClosedJaxpr:
        dyn_args = [a for i, a in enumerate(args) if i not in static]

        def call(*dyn: Any) -> Any:
            it = iter(dyn)
            full = [a if i in static else next(it) for i, a in enumerate(args)]
            return fun(*full)

        args_flat, in_tree = tree_flatten(tuple(dyn_args))
        _check_array_leaves(f"make_jaxpr({_fun_name(fun)})", "arguments", args_flat)
        avals = [get_aval(x) for x in args_flat]
        flat_fun, _ = flatten_fun(call, in_tree, _fun_name(call))
        return trace_to_jaxpr(flat_fun, avals, f"make_jaxpr({_fun_name(fun)})")

    return jaxpr_maker


# --- reverse mode ---------------------------------------------------------------------------


def linearize(fun: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """`(fun(*primals), f_jvp)` where `f_jvp(*tangents)` is the linear tangent map, evaluated
    from a jaxpr with the primal computation already done (as JAX's `linearize`)."""
    primals_flat, in_tree = tree_flatten(primals)
    _check_array_leaves(f"linearize({_fun_name(fun)})", "primal values", primals_flat)
    flat_fun, out_tree = flatten_fun(fun, in_tree, _fun_name(fun))
    primals_out, jaxpr, consts = linearize_flat(flat_fun, primals_flat)
    tree = out_tree[0]

    def f_jvp(*tangents: Any) -> Any:
        tangents_flat, tree2 = tree_flatten(tangents)
        if tree2 != in_tree:
            raise TypeError(
                f"linearize: tangents must have the structure of the primals, {in_tree}; "
                f"got {tree2}"
            )
        return tree_unflatten(tree, eval_jaxpr(jaxpr, consts, *tangents_flat))

    return tree_unflatten(tree, primals_out), f_jvp


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """`(fun(*primals), f_vjp)` (plus `aux` with `has_aux`); `f_vjp(ct)` returns one cotangent
    per primal argument, as JAX's `vjp`."""
    primals_flat, in_tree = tree_flatten(primals)
    _check_array_leaves(f"vjp({_fun_name(fun)})", "primal values", primals_flat)
    if has_aux:

        def fun_pair(*args: Any) -> Any:
            out = fun(*args)
            if not isinstance(out, tuple) or len(out) != 2:
                raise TypeError(
                    f"{_fun_name(fun)} was declared has_aux=True and must return a pair "
                    f"(output, aux), got {type(out).__name__}"
                )
            return out
    else:
        fun_pair = fun
    # aux leaves are extra outputs, so they leave the transformations as plain values; they
    # get zero cotangents.
    flat_fun, out_tree = flatten_fun(fun_pair, in_tree, _fun_name(fun_pair))
    if core._state.eager:  # nothing traced: record a tape while the Python runs once
        outs_flat, f_vjp_flat, residuals = eager_vjp.vjp_flat(flat_fun, primals_flat)
    else:
        outs_flat, f_vjp_flat, residuals = vjp_flat(flat_fun, primals_flat)
    if has_aux:
        tree, aux_tree = out_tree[0].children()
    else:
        tree, aux_tree = out_tree[0], None
    n_out = tree.num_leaves
    primals_out, aux_flat = outs_flat[:n_out], outs_flat[n_out:]
    aux_cts = [Zero(get_aval(a).strip_weak_type()) for a in aux_flat]

    out_shapes = [get_aval(p).shape for p in primals_out]

    def apply_vjp(residuals: list[Any], ct: Any) -> tuple[Any, ...]:
        cts_flat, ct_tree = tree_flatten(ct)
        if ct_tree != tree:
            raise TypeError(
                f"vjp: the cotangent must have the structure of the output, {tree}; got {ct_tree}"
            )
        for c, shape in zip(cts_flat, out_shapes, strict=True):
            if get_aval(c).shape != shape:
                raise ValueError(
                    f"vjp: cotangent of shape {get_aval(c).shape} for an output of shape {shape}"
                )
        cts_in = f_vjp_flat(residuals, *cts_flat, *aux_cts)
        cts_in = [instantiate(c) for c in cts_in]
        return tree_unflatten(in_tree, cts_in)

    # A pytree (the residuals are its children), as JAX's: f_vjp can be passed to `jit`.
    f_vjp = Partial(apply_vjp, residuals)
    out = tree_unflatten(tree, primals_out)
    if aux_tree is not None:  # (has_aux)
        return out, f_vjp, tree_unflatten(aux_tree, aux_flat)
    return out, f_vjp


def _all_arrays(xs: Sequence[Any]) -> bool:
    """Whether every element is an Array (so a tuple is its own list of pytree leaves)."""
    for x in xs:
        if type(x) is not Array:
            return False
    return True


def _argnums_tuple(argnums: int | Sequence[int]) -> tuple[int, ...]:
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _partial_args(
    fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict, argnums: tuple[int, ...]
) -> Callable[..., Any]:
    def f_partial(*dyn: Any) -> Any:
        full_args = list(args)
        for i, a in zip(argnums, dyn, strict=True):
            full_args[i] = a
        return fun(*full_args, **kwargs)

    return f_partial


def _eager_vjp_now(
    f_partial: Callable[..., Any], diff_args: tuple[Any, ...]
) -> tuple[Any, Callable[[Any], tuple[Any, ...]] | None] | None:
    """`vjp(f_partial, *diff_args)` for eager `grad` (nothing traced, every leaf of the
    differentiated arguments an Array, no aux), or None where those leaves are not all Arrays:
    the same output and cotangents, without the pytree handling of arguments that are their
    own leaves, the `Partial`, the cotangent's checks (`grad` makes it) and the residuals (the
    backward pass runs in this call, on the tape's values).

    `f_vjp` is None when the output is not a single leaf (`grad` then raises its TypeError).
    """
    leaves: Sequence[Any]
    if _all_arrays(diff_args):
        leaves, in_tree = diff_args, None
    else:  # (grad_rnn's list of parameters)
        leaves, in_tree = tree_flatten(diff_args)
        if not _all_arrays(leaves):
            return None
    tree_cell: list[Any] = []

    def flat_fun(*flat: Any) -> list[Any]:
        out = f_partial(*(flat if in_tree is None else tree_unflatten(in_tree, flat)))
        if isinstance(out, core.Tracer) or type(out) is Array:  # a leaf: its own flat list
            return [out]
        out_flat, tree = tree_flatten(out)  # as `flatten_fun`
        check_outputs(_fun_name(f_partial), out_flat)
        tree_cell.append(tree)
        return out_flat

    outs, back = eager_vjp.vjp_flat_now(flat_fun, leaves)
    if tree_cell:
        out = tree_unflatten(tree_cell[0], outs)
        if len(outs) != 1:
            return out, None
    else:
        out = outs[0]

    def f_vjp(ct: Any) -> tuple[Any, ...]:
        cts_in = back([ct])
        cts_in = [instantiate(c) for c in cts_in]
        return tuple(cts_in) if in_tree is None else tree_unflatten(in_tree, cts_in)

    return out, f_vjp


def value_and_grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[..., Any]:
    """`(fun(*args), grad(fun)(*args))` in one pass, as JAX's `value_and_grad`.

    Called eagerly (outside `jit`), the function's Python runs exactly once per call, op by
    op, and reverse mode records a tape of linear equations on the way (`mjcore.eager_vjp`):
    nothing is traced ahead or compiled as a whole (wrap the call in `mjcore.jit` for that).
    A function that fills a constant array in place (`out = zeros(n); out[i] = f(w)`) cannot
    run that way; after its eager run raises, it is traced as a whole and differentiated from
    its jaxpr, as under `jit` (its Python up to the failing line then runs twice).

    The output must be real, or complex with `holomorphic=True` (then the inputs must be
    complex too), as in JAX.
    """
    nums = _argnums_tuple(argnums)
    name = _fun_name(fun)

    @functools.wraps(fun, updated=())
    def checked_value_and_grad_fun(*args: Any, **kwargs: Any) -> Any:
        if holomorphic:
            diff = [args[i] for i in nums if -len(args) <= i < len(args)]
            avals = [get_aval(x) for x in tree_util.tree_leaves(diff) if core.is_array_like(x)]
            _check_real_dtypes("grad", "input", avals, "c")
        out, g = value_and_grad_fun(*args, **kwargs)
        _check_grad_output(out, has_aux, holomorphic)
        return out, g

    def value_and_grad_fun(*args: Any, **kwargs: Any) -> Any:
        n_args = len(args)
        for i in nums:
            if not -n_args <= i < n_args:
                raise TypeError(
                    f"grad({name}): argnums={argnums} but the function was called with only "
                    f"{n_args} positional arguments"
                )
        nums_pos = nums if nums == (0,) else tuple([i % n_args for i in nums])
        diff_args = tuple([args[i] for i in nums_pos])
        for leaf in diff_args if _all_arrays(diff_args) else tree_util.tree_leaves(diff_args):
            aval = get_aval(leaf) if core.is_array_like(leaf) else None
            if aval is not None and not dtypes.is_inexact(aval.dtype):
                raise TypeError(
                    f"grad({name}) requires real- or complex-valued inputs (a floating dtype), "
                    f"but got {aval.dtype.name}. Integer and boolean inputs have no gradient; "
                    "convert them with .astype(float) or use vjp."
                )
        f_partial = _partial_args(fun, args, kwargs, nums_pos)
        try:
            if has_aux:
                out, f_vjp, aux = vjp(f_partial, *diff_args, has_aux=True)
            else:
                now = _eager_vjp_now(f_partial, diff_args) if core._state.eager else None
                out, f_vjp = vjp(f_partial, *diff_args) if now is None else now
        except InPlaceUpdateError:
            # `x = zeros(n); x[i] = f(w)`: traced as a whole, `zeros(n)` is traced too.
            if has_aux or kwargs or core._state.trace_stack[-1].level:
                raise
            traced = eager_vjp.value_and_grad_by_tracing(fun, args, nums_pos)
            if traced is None:
                raise
            out, grads = traced
            return out, (grads[0] if isinstance(argnums, int) else grads)
        if not core.is_array_like(out):
            raise TypeError(
                f"grad({name}): the function must return a scalar array, got {type(out).__name__}"
            )
        aval = get_aval(out)
        if aval.shape != ():
            raise TypeError(
                f"grad({name}) is only defined for scalar-output functions, but the output "
                f"has shape {aval.shape}. Use vjp or jacrev for non-scalar outputs."
            )
        if not dtypes.is_inexact(aval.dtype):
            raise TypeError(
                f"grad({name}) requires a real-valued (floating) output, got {aval.dtype.name}"
            )
        if f_vjp is None:  # (`_eager_vjp_now`: an array-like pytree of several leaves)
            raise TypeError(
                f"grad({name}): the function must return a scalar array, got {type(out).__name__}"
            )
        grads = f_vjp(full((), 1, aval.dtype))
        g = grads[0] if isinstance(argnums, int) else grads
        return ((out, aux) if has_aux else out), g

    return checked_value_and_grad_fun


def grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[..., Any]:
    """The gradient of a scalar function with respect to `argnums`, as JAX's `grad`."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic)

    @functools.wraps(fun, updated=())
    def grad_fun(*args: Any, **kwargs: Any) -> Any:
        value, g = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return grad_fun


def _std_basis(leaves: Sequence[Any]) -> tuple[int, list[Any]]:
    """Columns of the identity, split per leaf and shaped (total, *leaf.shape)."""
    import numpy as np

    avals = [get_aval(x) for x in leaves]
    sizes = [a.size for a in avals]
    total = sum(sizes)
    dtype = np.result_type(*[a.dtype for a in avals]) if avals else np.float64
    eye = np.eye(total, dtype=dtype)
    out, start = [], 0
    for a, n in zip(avals, sizes, strict=True):
        out.append(eye[:, start : start + n].reshape((total, *a.shape)).astype(a.dtype))
        start += n
    return total, out


def _split_last_axis(x: Any, in_avals: Sequence[ShapedArray], lead_shape: tuple[int, ...]):
    """Split the trailing basis axis of a Jacobian column block per input leaf."""
    pieces, start = [], 0
    ndim = get_aval(x).ndim
    for a in in_avals:
        n = a.size
        starts = [0] * (ndim - 1) + [start]
        limits = [*get_aval(x).shape[:-1], start + n]
        piece = lax_slice(x, tuple(starts), tuple(limits))
        pieces.append(base.reshape(piece, (*lead_shape, *a.shape)))
        start += n
    return pieces


def jacfwd(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[..., Any]:
    """The Jacobian by forward mode: `vmap` of `jvp` over the standard basis.

    As in JAX, the inputs must be real floating, or complex with `holomorphic=True`.
    """
    nums = _argnums_tuple(argnums)

    def jac(*args: Any, **kwargs: Any) -> Any:
        dyn = tuple(args[i] for i in nums)
        f_partial = _partial_args(fun, args, kwargs, nums)
        dyn_leaves, dyn_tree = tree_flatten(dyn)
        in_avals = [get_aval(x) for x in dyn_leaves]
        _check_real_dtypes("jacfwd", "input", in_avals, "c" if holomorphic else "f")
        total, basis = _std_basis(dyn_leaves)
        aux_cell: list[Any] = []

        def pushfwd(*t_leaves: Any) -> Any:
            tangents = tree_unflatten(dyn_tree, t_leaves)
            if has_aux:

                def main(*d):
                    out, aux = f_partial(*d)
                    aux_cell.append(aux)
                    return out

                return jvp(main, dyn, tangents)[1]
            return jvp(f_partial, dyn, tangents)[1]

        out = vmap(pushfwd, out_axes=-1)(*basis)
        primal_out = f_partial(*dyn)
        if has_aux:
            primal_out, aux = primal_out
        out_leaves, out_tree = tree_flatten(out)
        prim_leaves = tree_util.tree_leaves(primal_out)
        per_out = []
        for o, p in zip(out_leaves, prim_leaves, strict=True):
            pieces = _split_last_axis(o, in_avals, get_aval(p).shape)
            blocks = tree_unflatten(dyn_tree, pieces)
            per_out.append(blocks[0] if isinstance(argnums, int) else blocks)
        result = tree_unflatten(out_tree, per_out)
        del total
        return (result, aux) if has_aux else result

    return jac


def jacrev(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[..., Any]:
    """The Jacobian by reverse mode: `vmap` of `vjp` over the output basis.

    As in JAX, the inputs must be inexact and the outputs real, or both complex with
    `holomorphic=True`.
    """
    nums = _argnums_tuple(argnums)

    def jac(*args: Any, **kwargs: Any) -> Any:
        dyn = tuple(args[i] for i in nums)
        f_partial = _partial_args(fun, args, kwargs, nums)
        in_avals = [get_aval(x) for x in tree_util.tree_leaves(dyn)]
        _check_real_dtypes("jacrev", "input", in_avals, "c" if holomorphic else "fc")
        if has_aux:
            out, f_vjp, aux = vjp(f_partial, *dyn, has_aux=True)
        else:
            out, f_vjp = vjp(f_partial, *dyn)
        out_leaves, out_tree = tree_flatten(out)
        out_avals = [get_aval(x) for x in out_leaves]
        _check_real_dtypes("jacrev", "output", out_avals, "c" if holomorphic else "f")
        total, basis = _std_basis(out_leaves)
        cts = vmap(lambda *c: f_vjp(tree_unflatten(out_tree, c)))(*basis)
        # cts: per dyn arg, leaves shaped (total, *in_shape) -> split rows per output leaf.
        ct_leaves, ct_tree = tree_flatten(cts)
        per_out: list[list[Any]] = [[] for _ in out_leaves]
        for c in ct_leaves:
            in_shape = get_aval(c).shape[1:]
            start = 0
            for k, o in enumerate(out_leaves):
                n = get_aval(o).size
                piece = lax_slice(c, (start,) + (0,) * len(in_shape), (start + n, *in_shape))
                per_out[k].append(base.reshape(piece, (*get_aval(o).shape, *in_shape)))
                start += n
        results = []
        for k in range(len(out_leaves)):
            blocks = tree_unflatten(ct_tree, per_out[k])
            results.append(blocks[0] if isinstance(argnums, int) else blocks)
        result = tree_unflatten(out_tree, results)
        del total
        return (result, aux) if has_aux else result

    return jac


def hessian(fun: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The Hessian: `jacfwd(jacrev(fun))`."""
    return jacfwd(jacrev(fun, argnums), argnums)


jacobian = jacrev  # JAX's name for the reverse-mode Jacobian: the same function object


def linear_transpose(
    fun: Callable[..., Any], *primals: Any, reduce_axes: Sequence[Any] = ()
) -> Callable[[Any], tuple[Any, ...]]:
    """The transpose of a linear function, as JAX's `linear_transpose`.

    `primals` give only the shapes and dtypes of `fun`'s arguments (their values are not
    used). The result `f_transpose(out_cotangent)` returns a tuple with one cotangent per
    argument, of the arguments' structures and dtypes: for linear `fun`,
    `f_transpose(ct)` equals `vjp(fun, *primals)[1](ct)`, without running `fun` forward.
    `fun` is traced and transposed once, here, so non-linearity is reported at this call.

    Raises:
      TypeError: if `fun` is not linear in its arguments (e.g. `sin(x)` or `x * x`), or its
        inputs and outputs are not all inexact (or all integer).
      NotImplementedError: for a non-empty `reduce_axes` (deprecated in JAX as well).
    """
    name = _fun_name(fun)
    fname = f"linear_transpose({name})"
    if reduce_axes:
        raise NotImplementedError(f"{fname}: the reduce_axes argument is not supported")
    primals_flat, in_tree = tree_flatten(primals)
    _check_array_leaves(fname, "primal values", primals_flat)
    in_avals = [get_aval(x).strip_weak_type() for x in primals_flat]
    flat_fun, out_tree_cell = flatten_fun(fun, in_tree, _fun_name(fun))
    closed = trace_to_jaxpr(flat_fun, in_avals, fname)
    out_tree = out_tree_cell[0]
    out_avals = [a.strip_weak_type() for a in closed.out_avals]
    kinds = [a.dtype for a in (*in_avals, *out_avals)]
    if not (all(map(dtypes.is_inexact, kinds)) or all(map(dtypes.is_integer, kinds))):
        raise TypeError(
            f"{fname}: linear_transpose only supports [float or complex] -> [float or complex] "
            f"and integer -> integer functions, but got {[a.str_short() for a in in_avals]} -> "
            f"{[a.str_short() for a in out_avals]}"
        )

    def transpose_flat(*cts: Any) -> list[Any]:
        args = [UndefinedPrimal(a) for a in in_avals]
        cts_in = backward_pass(closed.jaxpr, closed.consts, args, list(cts))
        return [instantiate(c) for c in cts_in]

    try:
        transposed = trace_to_jaxpr(transpose_flat, out_avals, f"transpose({name})")
    except MissingRuleError as err:
        if err.rule != "transpose":
            raise
        raise TypeError(
            f"{fname}: the function is not linear in its inputs: it applies "
            f"'{err.primitive_name}' to a value that depends on them, and '{err.primitive_name}'"
            " is not linear (it has no transpose rule)"
        ) from err
    except (TypeError, AssertionError) as err:
        raise TypeError(f"{fname}: the function is not linear in its inputs: {err}") from err

    def apply_transpose(consts: list[Any], out_cotangent: Any) -> tuple[Any, ...]:
        cts_flat, ct_tree = tree_flatten(out_cotangent)
        if ct_tree != out_tree:
            raise TypeError(
                f"{fname}: cotangent tree does not match the function's output: expected "
                f"{out_tree}, got {ct_tree}"
            )
        _check_array_leaves(fname, "cotangents", cts_flat)
        for ct, aval in zip(cts_flat, out_avals, strict=True):
            ct_aval = get_aval(ct)
            if ct_aval.shape != aval.shape or ct_aval.dtype != aval.dtype:
                raise TypeError(
                    f"{fname}: cotangent type does not match the function's output: expected "
                    f"{[a.str_short() for a in out_avals]}, got "
                    f"{[get_aval(c).str_short() for c in cts_flat]}"
                )
        outs = eval_jaxpr(transposed.jaxpr, consts, *cts_flat)
        return tree_unflatten(in_tree, outs)

    apply_transpose.__name__ = f"transpose({name})"
    # A pytree (the constants are its children), as JAX's: it can be passed to `jit`.
    return Partial(apply_transpose, list(transposed.consts))


# --- abstract evaluation --------------------------------------------------------------------


class ShapeDtypeStruct:
    """The shape, dtype and weak type of an array, with no value, as JAX's `ShapeDtypeStruct`.

    `eval_shape` returns these, and `eval_shape`, `make_jaxpr` and `jit(f).lower/trace`
    accept them in place of arrays. Instances are immutable and compare by value.

    Args:
      shape: a sequence of non-negative integers.
      dtype: a dtype-like (a NumPy dtype, scalar type or name).
      sharding: None, or the layout over devices (`mjcore.sharding`) that `jit(f).lower`
        lowers the argument with.
      weak_type: whether the dtype is weak, as a Python scalar's (see `ShapedArray`).
    """

    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    shape: tuple[int, ...]
    dtype: np.dtype
    weak_type: bool
    sharding: Any

    def __init__(
        self, shape: Sequence[int], dtype: Any, *, sharding: Any = None, weak_type: bool = False
    ) -> None:
        if dtype is None:
            raise ValueError("ShapeDtypeStruct: dtype must be specified")
        if sharding is not None and not isinstance(sharding, Sharding):
            raise TypeError(
                "ShapeDtypeStruct: sharding must be None or a Sharding (NamedSharding, "
                f"SingleDeviceSharding), got {type(sharding).__name__}"
            )
        shape = tuple(shape)
        for d in shape:
            if not isinstance(d, int | np.integer) or isinstance(d, bool) or d < 0:
                raise TypeError(
                    f"ShapeDtypeStruct: shape must be a sequence of non-negative integers, "
                    f"got {shape!r}"
                )
        object.__setattr__(self, "shape", tuple(int(d) for d in shape))
        object.__setattr__(self, "dtype", dtypes.canonicalize_dtype(dtype, "ShapeDtypeStruct"))
        object.__setattr__(self, "weak_type", bool(weak_type))
        if isinstance(sharding, NamedSharding):
            sharding.check_shape(self.shape, "ShapeDtypeStruct")
            sharding_mod.in_use = True  # `jit(f).lower(self)` is then partitioned
        object.__setattr__(self, "sharding", sharding)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"ShapeDtypeStruct is immutable: cannot set {name!r}")

    @classmethod
    def like(cls, x: Any) -> ShapeDtypeStruct:
        """The ShapeDtypeStruct of an array (or anything with `.shape` and `.dtype`)."""
        aval = _abstractify("ShapeDtypeStruct.like", x)
        # (only a multi-device layout is kept: one-device arrays compare equal to
        # eval_shape's results, which have none)
        sharding = x.sharding if isinstance(x, ShardedArray) else None
        return cls(aval.shape, aval.dtype, sharding=sharding, weak_type=aval.weak_type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ShapeDtypeStruct):
            return NotImplemented
        return (self.shape, self.dtype, self.weak_type, self.sharding) == (
            other.shape,
            other.dtype,
            other.weak_type,
            other.sharding,
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type, self.sharding))

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        sharding = f", sharding={self.sharding!r}" if self.sharding is not None else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak}{sharding})"

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError(
            f"{self!r} has no value: it describes an array for eval_shape, make_jaxpr and "
            "jit(f).lower/trace. Pass an array to compute with it."
        )


core.pytype_aval_mappings[ShapeDtypeStruct] = lambda x: ShapedArray(x.shape, x.dtype, x.weak_type)


def _abstractify(fname: str, x: Any) -> ShapedArray:
    """The aval of an array-like, or of anything with `.shape` and `.dtype` (a JAX array)."""
    if core.is_array_like(x):
        return get_aval(x)
    shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
    if shape is None or dtype is None:
        raise TypeError(
            f"{fname}: cannot interpret a value of type {type(x).__name__} as an abstract "
            f"array: it has no shape and dtype ({x!r:.80}). Pass arrays or ShapeDtypeStructs, "
            "and close over other values (e.g. with functools.partial)."
        )
    return ShapedArray(
        tuple(shape), dtypes.canonicalize_dtype(dtype, fname), getattr(x, "weak_type", False)
    )


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes of `fun(*args, **kwargs)`, computed without any FLOPs.

    As JAX's `eval_shape`: `fun` is traced abstractly (as `jit` would trace it), so::

        eval_shape(fun, *args) == tree_map(ShapeDtypeStruct.like, fun(*args))

    Every argument leaf is dynamic: an Array, NumPy array, Python scalar, ShapeDtypeStruct
    or anything with `.shape` and `.dtype`; close over static values with
    `functools.partial`.

    Returns:
      A pytree of `ShapeDtypeStruct` of the structure of `fun`'s output.

    Raises:
      TypeError: for an argument leaf that is not array-like.
    """
    fname = f"eval_shape({_fun_name(fun)})"
    flat, in_tree = tree_flatten((args, kwargs))
    avals = [_abstractify(fname, x) for x in flat]
    flat_fun, out_tree = flatten_fun(lambda a, kw: fun(*a, **kw), in_tree, fname)
    closed = trace_to_jaxpr(flat_fun, avals, fname)
    outs = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in closed.out_avals]
    return tree_unflatten(out_tree[0], outs)


def typeof(x: Any) -> ShapedArray:
    """The abstract value (`ShapedArray`) of an array, tracer or Python scalar, as JAX's
    `typeof`.

    Raises:
      TypeError: if `x` is not array-like.
    """
    if not core.is_array_like(x):
        raise TypeError(
            f"typeof: a value of type {type(x).__name__} is not an mjcore array: {x!r:.80}"
        )
    return get_aval(x)


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Context manager: inside it, operations on concrete values run eagerly even while `jit`
    or `make_jaxpr` traces, as JAX's `ensure_compile_time_eval`.

    Values computed from constants (not from the traced arguments) are then concrete inside a
    jitted function, so Python can branch on them or use them as shapes::

        @jit
        def f(x):
            with ensure_compile_time_eval():
                n = int(mjnp.sum(mjnp.arange(4)))  # 6, computed now
            return x * n

    Operations on traced values are still staged as usual.
    """
    with core.eval_context():
        yield


# --- naming ---------------------------------------------------------------------------------


def named_call(fun: Callable[..., Any], *, name: str | None = None) -> Callable[..., Any]:
    """`fun`, staged as a sub-jaxpr named `name` (default `fun.__name__`), as JAX's
    `named_call`.

    Called eagerly it runs `fun` directly. Under `jit`, `make_jaxpr` or another
    transformation, a call with array arguments becomes one `pjit` equation with
    `name=name`, so the name shows in jaxprs; every transformation applies to it as to any
    jitted function. Calls with non-array arguments run `fun` directly.

    NB: JAX only pushes `name` on its name stack (op metadata); mjcore has no name stack, so
    the name goes on a sub-jaxpr instead. Values and derivatives are the same.
    """
    if not callable(fun):
        raise TypeError(f"named_call: expected a callable, got {type(fun).__name__}")
    staged = JittedFunction(fun, (), (), (), 64)
    staged._name = _fun_name(fun) if name is None else str(name)

    @functools.wraps(fun)
    def named_fun(*args: Any, **kwargs: Any) -> Any:
        if core._state.eager or not all(
            map(core.is_array_like, tree_util.tree_leaves((args, kwargs)))
        ):
            return fun(*args, **kwargs)
        return staged(*args, **kwargs)

    return named_fun
