"""Collectives over named axes (JAX's `lax.parallel`): psum, pmean, pmax, pmin, all_gather,
psum_scatter, all_to_all, ppermute, axis_index.

A named axis is bound by `vmap(..., axis_name=)` (the collective then acts across the batch,
through its `collective_batching` rule), or by `pmap`/`shard_map` (it is staged into the jaxpr
and lowered to StableHLO's collectives with the replica groups of the device axes in scope).
Each primitive's rules sit together below; transposes follow JAX: psum's is psum (a psum is a
psum followed by a broadcast to every member), all_gather <-> psum_scatter, all_to_all <-> the
all_to_all back, ppermute <-> the inverse permutation.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from mjcore import core
from mjcore.ad import linear_jvp
from mjcore.backend.hlo import FunctionBuilder, Value
from mjcore.backend.lowering import LoweringContext
from mjcore.batching import NOT_MAPPED, AxisPrimitive, BatchAxis, move_bdim
from mjcore.core import ShapedArray, get_aval
from mjcore.lax import arithmetic
from mjcore.lax.base import broadcast_in_dim, convert_element_type, full, reshape, transpose
from mjcore.lax.comparison import eq
from mjcore.lax.reductions import reduce_max, reduce_min, reduce_sum
from mjcore.lax.slicing import slice_in_dim
from mjcore.lax.structural import concatenate, iota, squeeze
from mjcore.tree_util import tree_map

ArrayLike = Any
AxisName = Any
AxisEnv = tuple[tuple[Any, int], ...]  # device axes: (name, size), mesh order


# --- the axis environment -------------------------------------------------------------------


def _names(axis_name: AxisName) -> tuple[Any, ...]:
    return tuple(axis_name) if isinstance(axis_name, tuple | list) else (axis_name,)


def _frame(name: Any, fn: str) -> core.AxisFrame:
    frame = core.axis_frame(name)
    if frame is None:
        raise NameError(
            f"unbound axis name: {name!r}. mjcore.lax.{fn} over a named axis must run inside "
            f"mjcore.shard_map, mjcore.pmap or mjcore.vmap(..., axis_name=) that binds {name!r}"
        )
    return frame


def axis_size(axis_name: AxisName) -> int:
    """The number of members of the named axis (or axes: the product of their sizes)."""
    return math.prod(_frame(n, "axis_size").size for n in _names(axis_name))


def _single(axis_name: AxisName, fn: str) -> tuple[Any]:
    names = _names(axis_name)
    if len(names) != 1:
        raise NotImplementedError(f"mjcore.lax.{fn}: one axis name at a time, got {names}")
    _frame(names[0], fn)
    return names


def _device_env() -> AxisEnv:
    """The device axes in scope (shard_map's mesh axes), as a collective's `axis_env` param:
    its lowering needs them after the scope has closed (a jaxpr lowered or transposed
    later)."""
    return tuple((f.name, f.size) for f in core.device_axis_frames())


def _replica_groups(names: Sequence[Any], env: AxisEnv) -> list[list[int]]:
    """The groups of devices that a collective over `names` combines, as logical device ids
    (mesh positions, row-major over the mesh axes `env`); within a group, members are in
    the row-major order of `names`, the order all_gather stacks them in."""
    all_names = [n for n, _ in env]
    sizes = [s for _, s in env]
    ids = np.arange(math.prod(sizes)).reshape(sizes)
    pos = [all_names.index(n) for n in names]
    rest = [i for i in range(len(sizes)) if i not in pos]
    groups = np.transpose(ids, rest + pos).reshape(-1, math.prod(sizes[i] for i in pos))
    return groups.tolist()


def _collective_attrs(groups: list[list[int]]) -> str:
    # Devices are partitions of one SPMD program: named by global id, over a channel.
    n, m = len(groups), len(groups[0])
    body = ", ".join("[" + ", ".join(str(v) for v in g) + "]" for g in groups)
    return (
        f"replica_groups = dense<[{body}]> : tensor<{n}x{m}xi64>, "
        "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids"
    )


def _check_device_axes(names: Sequence[Any], env: AxisEnv, fn: str) -> None:
    device_names = {n for n, _ in env}
    for n in names:
        if n not in device_names:
            raise NameError(
                f"unbound axis name: {n!r}: mjcore.lax.{fn} can only be compiled inside "
                "mjcore.shard_map or mjcore.pmap over a mesh axis of that name"
            )


def _over_leaves(fn: Any) -> Any:
    """Apply a collective to every array of a pytree, as JAX's collectives do."""

    @functools.wraps(fn)
    def wrapper(x: Any, *args: Any, **kwargs: Any) -> Any:
        if core.is_array_like(x):
            return fn(x, *args, **kwargs)
        return tree_map(lambda leaf: fn(leaf, *args, **kwargs), x)

    return wrapper


# --- psum, pmax, pmin -----------------------------------------------------------------------


def _allreduce(name: str, hlo_op: str, reducer: Any, if_unmapped: Any) -> AxisPrimitive:
    prim = AxisPrimitive(name)

    @prim.def_abstract_eval
    def abstract_eval(
        x: ShapedArray, *, axis_name: tuple[Any, ...], axis_env: AxisEnv
    ) -> ShapedArray:
        return x

    @prim.def_lowering
    def lowering(
        ctx: LoweringContext, x: Value, *, axis_name: tuple[Any, ...], axis_env: AxisEnv
    ) -> Value:
        _check_device_axes(axis_name, axis_env, name)
        b = ctx.builder
        scalar = ShapedArray((), x.aval.dtype)
        op = (
            hlo_op
            if x.aval.dtype.kind != "b"
            else {"maximum": "or", "minimum": "and"}.get(hlo_op, "or")
        )
        region = b.region(
            [scalar, scalar], lambda rb, a, y: [rb.op(f"stablehlo.{op}", [a, y], scalar)]
        )
        attrs = _collective_attrs(_replica_groups(axis_name, axis_env))
        return b.op("stablehlo.all_reduce", [x], x.aval, attrs, regions=[region])

    @prim.def_batching
    def batching(vals, dims, *, axis_name, axis_env):
        (x,), (bdim,) = vals, dims
        return prim.bind1(x, axis_name=axis_name, axis_env=axis_env), bdim

    @prim.def_collective_batching
    def collective_batching(axis: BatchAxis, vals, dims, *, axis_name, axis_env):
        (x,), (bdim,) = vals, dims
        out = if_unmapped(x, axis.size) if bdim is NOT_MAPPED else reducer(x, bdim)
        rest = tuple(n for n in axis_name if n != axis.name)
        return (prim.bind1(out, axis_name=rest, axis_env=axis_env) if rest else out), NOT_MAPPED

    return prim


psum_p = _allreduce("psum", "add", reduce_sum, lambda x, n: arithmetic.mul(x, n))
pmax_p = _allreduce("pmax", "maximum", reduce_max, lambda x, n: x)
pmin_p = _allreduce("pmin", "minimum", reduce_min, lambda x, n: x)

linear_jvp(psum_p)


@psum_p.def_transpose
def _psum_transpose(ct, x, *, axis_name, axis_env):
    # A psum is a sum and a broadcast to every member; the broadcast transposes to a sum.
    return [psum_p.bind1(ct, axis_name=axis_name, axis_env=axis_env)]


def _chooser_jvp(prim: AxisPrimitive) -> None:
    """pmax/pmin: the tangent of the chosen members, averaged over ties (as reduce_max)."""

    def jvp(primals, tangents, *, axis_name, axis_env):
        (x,), (x_dot,) = primals, tangents
        out = prim.bind1(x, axis_name=axis_name, axis_env=axis_env)
        weights = convert_element_type(eq(x, out), get_aval(x_dot).dtype)
        total = psum_p.bind1(arithmetic.mul(x_dot, weights), axis_name=axis_name, axis_env=axis_env)
        return out, arithmetic.div(
            total, psum_p.bind1(weights, axis_name=axis_name, axis_env=axis_env)
        )

    prim.def_jvp(jvp)


_chooser_jvp(pmax_p)
_chooser_jvp(pmin_p)


@_over_leaves
def psum(x: ArrayLike, axis_name: AxisName) -> Any:
    """Sum of `x` over the members of the named axis (or axes), given to every member."""
    names = _names(axis_name)
    for n in names:
        _frame(n, "psum")
    return psum_p.bind1(x, axis_name=names, axis_env=_device_env())


@_over_leaves
def pmax(x: ArrayLike, axis_name: AxisName) -> Any:
    """Maximum of `x` over the members of the named axis (or axes), given to every member."""
    names = _names(axis_name)
    for n in names:
        _frame(n, "pmax")
    return pmax_p.bind1(x, axis_name=names, axis_env=_device_env())


@_over_leaves
def pmin(x: ArrayLike, axis_name: AxisName) -> Any:
    """Minimum of `x` over the members of the named axis (or axes), given to every member."""
    names = _names(axis_name)
    for n in names:
        _frame(n, "pmin")
    return pmin_p.bind1(x, axis_name=names, axis_env=_device_env())


@_over_leaves
def pmean(x: ArrayLike, axis_name: AxisName) -> Any:
    """Mean of `x` over the members of the named axis (or axes), given to every member."""
    n = axis_size(axis_name)
    total = psum(x, axis_name)
    if get_aval(total).dtype.kind in "iub":  # as JAX: integers average to a float
        total = convert_element_type(total, np.dtype(np.float64))
    return arithmetic.div(total, n)


# --- all_gather -----------------------------------------------------------------------------

all_gather_p = AxisPrimitive("all_gather")


@_over_leaves
def all_gather(x: ArrayLike, axis_name: AxisName, *, axis: int = 0, tiled: bool = False) -> Any:
    """Every member's `x`, stacked along a new axis `axis` (or concatenated along `axis` when
    `tiled`), given to every member."""
    names = _single(axis_name, "all_gather")
    ndim = get_aval(x).ndim
    limit = ndim if tiled else ndim + 1
    if not -limit <= axis < limit:
        raise ValueError(
            f"mjcore.lax.all_gather: axis {axis} is out of bounds for an operand of rank "
            f"{ndim}{' (tiled)' if tiled else ''}"
        )
    return all_gather_p.bind1(
        x,
        axis_name=names,
        axis_env=_device_env(),
        axis_size=axis_size(names),
        all_gather_dimension=axis % limit,
        tiled=bool(tiled),
    )


@all_gather_p.def_abstract_eval
def _all_gather_abstract_eval(x, *, axis_name, axis_env, axis_size, all_gather_dimension, tiled):
    shape = list(x.shape)
    if tiled:
        shape[all_gather_dimension] *= axis_size
    else:
        shape.insert(all_gather_dimension, axis_size)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


@all_gather_p.def_lowering
def _all_gather_lowering(ctx, x, *, axis_name, axis_env, axis_size, all_gather_dimension, tiled):
    _check_device_axes(axis_name, axis_env, "all_gather")
    b = ctx.builder
    if not tiled:
        shape = list(x.aval.shape)
        shape.insert(all_gather_dimension, 1)
        x = b.op("stablehlo.reshape", [x], ShapedArray(tuple(shape), x.aval.dtype))
    attrs = f"all_gather_dim = {all_gather_dimension} : i64, " + _collective_attrs(
        _replica_groups(axis_name, axis_env)
    )
    return b.op("stablehlo.all_gather", [x], ctx.aval_out.strip_weak_type(), attrs)


linear_jvp(all_gather_p)


@all_gather_p.def_transpose
def _all_gather_transpose(ct, x, *, axis_name, axis_env, axis_size, all_gather_dimension, tiled):
    return [
        psum_scatter_p.bind1(
            ct,
            axis_name=axis_name,
            axis_env=axis_env,
            axis_size=axis_size,
            scatter_dimension=all_gather_dimension,
            tiled=tiled,
        )
    ]


@all_gather_p.def_batching
def _all_gather_batching(
    vals, dims, *, axis_name, axis_env, axis_size, all_gather_dimension, tiled
):
    (x,), (bdim,) = vals, dims
    x = move_bdim(x, bdim, 0)
    out = all_gather_p.bind1(
        x,
        axis_name=axis_name,
        axis_env=axis_env,
        axis_size=axis_size,
        all_gather_dimension=all_gather_dimension + 1,
        tiled=tiled,
    )
    return out, 0


@all_gather_p.def_collective_batching
def _all_gather_collective_batching(
    axis, vals, dims, *, axis_name, axis_env, axis_size, all_gather_dimension, tiled
):
    (x,), (bdim,) = vals, dims
    if bdim is NOT_MAPPED:
        x, bdim = _broadcast_members(x, axis.size), 0
    out = move_bdim(x, bdim, all_gather_dimension)
    if tiled:
        out = _fold(out, all_gather_dimension)
    return out, NOT_MAPPED


def _broadcast_members(x: Any, n: int) -> Any:
    aval = get_aval(x)
    return broadcast_in_dim(x, (n, *aval.shape), tuple(range(1, aval.ndim + 1)))


def _fold(x: Any, axis: int) -> Any:
    """Merge axes `axis` and `axis + 1` (major, minor)."""
    shape = list(get_aval(x).shape)
    shape[axis : axis + 2] = [shape[axis] * shape[axis + 1]]
    return reshape(x, tuple(shape))


def _split(x: Any, axis: int, n: int) -> Any:
    """Split axis `axis` into (n, rest), major first."""
    shape = list(get_aval(x).shape)
    shape[axis : axis + 1] = [n, shape[axis] // n]
    return reshape(x, tuple(shape))


# --- psum_scatter ---------------------------------------------------------------------------

psum_scatter_p = AxisPrimitive("psum_scatter")


@_over_leaves
def psum_scatter(
    x: ArrayLike, axis_name: AxisName, *, scatter_dimension: int = 0, tiled: bool = False
) -> Any:
    """The psum of `x`, scattered: member i gets block i of dimension `scatter_dimension`
    (index i when not `tiled`, whose size must then equal the axis size)."""
    names = _single(axis_name, "psum_scatter")
    n = axis_size(names)
    shape = get_aval(x).shape
    if not -len(shape) <= scatter_dimension < len(shape):
        raise ValueError(
            f"mjcore.lax.psum_scatter: scatter_dimension {scatter_dimension} is out of bounds "
            f"for an operand of shape {shape}"
        )
    dim = scatter_dimension % len(shape)
    if tiled and shape[dim] % n:
        raise ValueError(
            f"mjcore.lax.psum_scatter: dimension {dim} of shape {shape} ({shape[dim]}) must be "
            f"divisible by the size of axis {names[0]!r} ({n})"
        )
    if not tiled and shape[dim] != n:
        raise ValueError(
            f"mjcore.lax.psum_scatter: dimension {dim} of shape {shape} ({shape[dim]}) must "
            f"equal the size of axis {names[0]!r} ({n}); pass tiled=True to scatter blocks"
        )
    return psum_scatter_p.bind1(
        x,
        axis_name=names,
        axis_env=_device_env(),
        axis_size=n,
        scatter_dimension=dim,
        tiled=bool(tiled),
    )


@psum_scatter_p.def_abstract_eval
def _psum_scatter_abstract_eval(x, *, axis_name, axis_env, axis_size, scatter_dimension, tiled):
    shape = list(x.shape)
    if tiled:
        shape[scatter_dimension] //= axis_size
    else:
        del shape[scatter_dimension]
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


@psum_scatter_p.def_lowering
def _psum_scatter_lowering(ctx, x, *, axis_name, axis_env, axis_size, scatter_dimension, tiled):
    _check_device_axes(axis_name, axis_env, "psum_scatter")
    b = ctx.builder
    dtype = x.aval.dtype
    scalar = ShapedArray((), dtype)
    op = "stablehlo.or" if dtype.kind == "b" else "stablehlo.add"
    region = b.region([scalar, scalar], lambda rb, a, y: [rb.op(op, [a, y], scalar)])
    shape = list(x.aval.shape)
    shape[scatter_dimension] //= axis_size
    attrs = f"scatter_dimension = {scatter_dimension} : i64, " + _collective_attrs(
        _replica_groups(axis_name, axis_env)
    )
    out = b.op(
        "stablehlo.reduce_scatter",
        [x],
        ShapedArray(tuple(shape), dtype),
        attrs,
        regions=[region],
    )
    if not tiled:
        out = b.op("stablehlo.reshape", [out], ctx.aval_out.strip_weak_type())
    return out


linear_jvp(psum_scatter_p)


@psum_scatter_p.def_transpose
def _psum_scatter_transpose(ct, x, *, axis_name, axis_env, axis_size, scatter_dimension, tiled):
    return [
        all_gather_p.bind1(
            ct,
            axis_name=axis_name,
            axis_env=axis_env,
            axis_size=axis_size,
            all_gather_dimension=scatter_dimension,
            tiled=tiled,
        )
    ]


@psum_scatter_p.def_batching
def _psum_scatter_batching(vals, dims, *, axis_name, axis_env, axis_size, scatter_dimension, tiled):
    (x,), (bdim,) = vals, dims
    out = psum_scatter_p.bind1(
        move_bdim(x, bdim, 0),
        axis_name=axis_name,
        axis_env=axis_env,
        axis_size=axis_size,
        scatter_dimension=scatter_dimension + 1,
        tiled=tiled,
    )
    return out, 0


@psum_scatter_p.def_collective_batching
def _psum_scatter_collective_batching(
    axis, vals, dims, *, axis_name, axis_env, axis_size, scatter_dimension, tiled
):
    (x,), (bdim,) = vals, dims
    total = arithmetic.mul(x, axis.size) if bdim is NOT_MAPPED else reduce_sum(x, bdim)
    if tiled:
        total = _split(total, scatter_dimension, axis.size)
    return total, scatter_dimension


# --- all_to_all -----------------------------------------------------------------------------

all_to_all_p = AxisPrimitive("all_to_all")


@_over_leaves
def all_to_all(
    x: ArrayLike,
    axis_name: AxisName,
    split_axis: int,
    concat_axis: int,
    *,
    tiled: bool = False,
) -> Any:
    """Member i sends block j of `split_axis` to member j, and concatenates what it receives
    along `concat_axis` in member order. Not `tiled`: `split_axis` (of the axis's size) is
    removed and the received blocks are stacked along a new axis at `concat_axis`."""
    names = _single(axis_name, "all_to_all")
    n = axis_size(names)
    shape = get_aval(x).shape
    ndim = len(shape)
    for label, a, limit in (
        ("split_axis", split_axis, ndim),
        ("concat_axis", concat_axis, ndim),
    ):
        if not -limit <= a < limit:
            raise ValueError(
                f"mjcore.lax.all_to_all: {label} {a} is out of bounds for shape {shape}"
            )
    split_axis, concat_axis = split_axis % ndim, concat_axis % ndim
    if tiled and shape[split_axis] % n:
        raise ValueError(
            f"mjcore.lax.all_to_all: split_axis {split_axis} of shape {shape} "
            f"({shape[split_axis]}) must be divisible by the size of axis {names[0]!r} ({n})"
        )
    if not tiled:
        if shape[split_axis] != n:
            raise ValueError(
                f"mjcore.lax.all_to_all: split_axis {split_axis} of shape {shape} "
                f"({shape[split_axis]}) must equal the size of axis {names[0]!r} ({n})"
            )
        # As JAX: a new unit axis at concat_axis, the tiled exchange, then split_axis dropped.
        if split_axis < concat_axis:
            concat_axis += 1
            x = reshape(x, shape[:concat_axis] + (1,) + shape[concat_axis:])
        elif concat_axis < split_axis:
            x = reshape(x, shape[:concat_axis] + (1,) + shape[concat_axis:])
            split_axis += 1
    out = all_to_all_p.bind1(
        x,
        axis_name=names,
        axis_env=_device_env(),
        axis_size=n,
        split_axis=split_axis,
        concat_axis=concat_axis,
    )
    if not tiled and split_axis != concat_axis:
        out = squeeze(out, (split_axis,))
    return out


@all_to_all_p.def_abstract_eval
def _all_to_all_abstract_eval(x, *, axis_name, axis_env, axis_size, split_axis, concat_axis):
    shape = list(x.shape)
    shape[split_axis] //= axis_size
    shape[concat_axis] *= axis_size
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


@all_to_all_p.def_lowering
def _all_to_all_lowering(ctx, x, *, axis_name, axis_env, axis_size, split_axis, concat_axis):
    _check_device_axes(axis_name, axis_env, "all_to_all")
    attrs = (
        f"split_dimension = {split_axis} : i64, concat_dimension = {concat_axis} : i64, "
        f"split_count = {axis_size} : i64, "
        + _collective_attrs(_replica_groups(axis_name, axis_env))
    )
    return ctx.builder.op("stablehlo.all_to_all", [x], ctx.aval_out.strip_weak_type(), attrs)


linear_jvp(all_to_all_p)


@all_to_all_p.def_transpose
def _all_to_all_transpose(ct, x, *, axis_name, axis_env, axis_size, split_axis, concat_axis):
    return [
        all_to_all_p.bind1(
            ct,
            axis_name=axis_name,
            axis_env=axis_env,
            axis_size=axis_size,
            split_axis=concat_axis,
            concat_axis=split_axis,
        )
    ]


@all_to_all_p.def_batching
def _all_to_all_batching(vals, dims, *, axis_name, axis_env, axis_size, split_axis, concat_axis):
    (x,), (bdim,) = vals, dims
    out = all_to_all_p.bind1(
        move_bdim(x, bdim, 0),
        axis_name=axis_name,
        axis_env=axis_env,
        axis_size=axis_size,
        split_axis=split_axis + 1,
        concat_axis=concat_axis + 1,
    )
    return out, 0


@all_to_all_p.def_collective_batching
def _all_to_all_collective_batching(
    axis, vals, dims, *, axis_name, axis_env, axis_size, split_axis, concat_axis
):
    (x,), (bdim,) = vals, dims
    n = axis.size
    x = _broadcast_members(x, n) if bdim is NOT_MAPPED else move_bdim(x, bdim, 0)
    # x[j, ...]: member j's operand. Member i's result: the blocks i of every member's
    # split_axis, concatenated in member order along concat_axis.
    x = _split(x, split_axis + 1, n)  # x[j, ..., i, block, ...]
    ndim = get_aval(x).ndim
    perm = list(range(ndim))
    i_axis = split_axis + 1
    # Bring i to the front and put j just before the block of concat_axis.
    rest = [a for a in perm if a not in (0, i_axis)]  # member dims, split one as `block`
    c = concat_axis  # rest[k] is member dimension k (the split one now its block)
    order = [i_axis] + rest[:c] + [0] + rest[c:]
    y = transpose(x, tuple(order))
    return _fold(y, 1 + c), 0


# --- ppermute -------------------------------------------------------------------------------

ppermute_p = AxisPrimitive("ppermute")


@_over_leaves
def ppermute(x: ArrayLike, axis_name: AxisName, perm: Sequence[tuple[int, int]]) -> Any:
    """Member `src` sends `x` to member `dst` for each pair of `perm`; members that receive
    nothing get zeros."""
    names = _single(axis_name, "ppermute")
    n = axis_size(names)
    pairs = tuple((int(s), int(d)) for s, d in perm)
    srcs, dsts = [s for s, _ in pairs], [d for _, d in pairs]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(
            f"mjcore.lax.ppermute: sources and destinations must be unique, got {list(pairs)}"
        )
    if any(not 0 <= v < n for v in srcs + dsts):
        raise ValueError(
            f"mjcore.lax.ppermute: perm {list(pairs)} names a member outside axis "
            f"{names[0]!r} of size {n}"
        )
    return ppermute_p.bind1(x, axis_name=names, axis_env=_device_env(), perm=pairs)


@ppermute_p.def_abstract_eval
def _ppermute_abstract_eval(x, *, axis_name, axis_env, perm):
    return x


@ppermute_p.def_lowering
def _ppermute_lowering(ctx, x, *, axis_name, axis_env, perm):
    _check_device_axes(axis_name, axis_env, "ppermute")
    groups = _replica_groups(axis_name, axis_env)
    pairs = [[group[s], group[d]] for group in groups for s, d in perm]
    body = ", ".join(f"[{s}, {d}]" for s, d in pairs)
    attrs = (
        f"source_target_pairs = dense<[{body}]> : tensor<{len(pairs)}x2xi64>, "
        "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>"
    )
    if not pairs:
        return ctx.builder.constant(0, x.aval)
    return ctx.builder.op("stablehlo.collective_permute", [x], x.aval, attrs)


linear_jvp(ppermute_p)


@ppermute_p.def_transpose
def _ppermute_transpose(ct, x, *, axis_name, axis_env, perm):
    return [
        ppermute_p.bind1(
            ct, axis_name=axis_name, axis_env=axis_env, perm=tuple((d, s) for s, d in perm)
        )
    ]


@ppermute_p.def_batching
def _ppermute_batching(vals, dims, *, axis_name, axis_env, perm):
    (x,), (bdim,) = vals, dims
    return ppermute_p.bind1(x, axis_name=axis_name, axis_env=axis_env, perm=perm), bdim


@ppermute_p.def_collective_batching
def _ppermute_collective_batching(axis, vals, dims, *, axis_name, axis_env, perm):
    (x,), (bdim,) = vals, dims
    n = axis.size
    x = _broadcast_members(x, n) if bdim is NOT_MAPPED else move_bdim(x, bdim, 0)
    source = {d: s for s, d in perm}
    aval = get_aval(x)
    zero = full((1, *aval.shape[1:]), 0, aval.dtype)
    pieces = [
        slice_in_dim(x, source[d], source[d] + 1, 0) if d in source else zero for d in range(n)
    ]
    return concatenate(pieces, 0), 0


# --- axis_index -----------------------------------------------------------------------------

axis_index_p = AxisPrimitive("axis_index")


def axis_index(axis_name: AxisName) -> Any:
    """This member's index along the named axis (int32); over several axes, the row-major
    index over them."""
    names = _names(axis_name)
    for n in names:
        _frame(n, "axis_index")
    return axis_index_p.bind1(axis_name=names, axis_env=_device_env())


@axis_index_p.def_abstract_eval
def _axis_index_abstract_eval(*, axis_name, axis_env):
    return ShapedArray((), np.dtype(np.int32))


@axis_index_p.def_lowering
def _axis_index_lowering(
    ctx: LoweringContext, *, axis_name: tuple[Any, ...], axis_env: AxisEnv
) -> Value:
    _check_device_axes(axis_name, axis_env, "axis_index")
    b: FunctionBuilder = ctx.builder
    u32 = ShapedArray((), np.dtype(np.uint32))
    i32 = ShapedArray((), np.dtype(np.int32))
    device = b.op("stablehlo.convert", [b.op("stablehlo.partition_id", [], u32)], i32)
    names = [n for n, _ in axis_env]
    sizes = [s for _, s in axis_env]
    out = None
    for name in axis_name:
        i = names.index(name)
        stride, size = math.prod(sizes[i + 1 :]), sizes[i]
        idx = b.op("stablehlo.divide", [device, b.constant(stride, i32)], i32)
        idx = b.op("stablehlo.remainder", [idx, b.constant(size, i32)], i32)
        if out is None:
            out = idx
        else:
            out = b.op("stablehlo.multiply", [out, b.constant(size, i32)], i32)
            out = b.op("stablehlo.add", [out, idx], i32)
    assert out is not None
    return out


@axis_index_p.def_jvp
def _axis_index_jvp(primals, tangents, *, axis_name, axis_env):
    # No operands, so nothing to differentiate; kept for the rule table's completeness.
    out = axis_index_p.bind1(axis_name=axis_name, axis_env=axis_env)
    return out, full((), 0, np.dtype(np.int32))


@axis_index_p.def_batching
def _axis_index_batching(vals, dims, *, axis_name, axis_env):
    return axis_index_p.bind1(axis_name=axis_name, axis_env=axis_env), NOT_MAPPED


@axis_index_p.def_collective_batching
def _axis_index_collective_batching(axis, vals, dims, *, axis_name, axis_env):
    names = axis_name
    here = iota(np.dtype(np.int32), axis.size)
    rest = tuple(n for n in names if n != axis.name)
    if not rest:
        return here, 0
    # Row-major over `names`: the outer axes' index times the inner axes' size, plus ours.
    pos = names.index(axis.name)
    inner = math.prod(_frame(n, "axis_index").size for n in names[pos + 1 :])
    out = arithmetic.mul(here, inner)
    before, after = names[:pos], names[pos + 1 :]
    if before:
        outer = axis_index_p.bind1(axis_name=before, axis_env=axis_env)
        outer = arithmetic.mul(outer, inner * axis.size)
        out = arithmetic.add(out, outer)
    if after:
        out = arithmetic.add(out, axis_index_p.bind1(axis_name=after, axis_env=axis_env))
    return out, 0


__all__ = [
    "all_gather",
    "all_to_all",
    "axis_index",
    "axis_size",
    "pmax",
    "pmean",
    "pmin",
    "ppermute",
    "psum",
    "psum_scatter",
]
