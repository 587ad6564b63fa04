"""Gather and scatter primitives with XLA's dimension numbers: `gather` (linear in the operand,
its transpose is `scatter_add`) and the `scatter` family (set, add, mul, min, max).

The index vector of `indices` is always its last axis (JAX's convention). Gather clamps each
start index so that its slice fits (XLA); scatter skips a window that does not fit (XLA).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from mjcore import dtypes
from mjcore.ad import Zero, fused_rule_body, instantiate, is_undefined_primal
from mjcore.array import wrap_host
from mjcore.backend.hlo import FunctionBuilder, Value, i64_array, i64_list
from mjcore.backend.lowering import LoweringContext
from mjcore.batching import NOT_MAPPED, move_bdim, moveaxis_to
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.lax import arithmetic, host, host_vjp
from mjcore.lax.base import (
    broadcast_in_dim,
    broadcast_to,
    convert_element_type,
    full,
    select_n,
    zeros_like,
)
from mjcore.lax.bitwise import bitwise_and
from mjcore.lax.comparison import eq, ge, le
from mjcore.lax.families import check_same_dtypes
from mjcore.lax.reductions import reduce_and
from mjcore.lax.structural import broadcasted_iota

ArrayLike = Any
Shape = tuple[int, ...]


class GatherDimensionNumbers(NamedTuple):
    """XLA's gather dimension numbers (the index vector is the last axis of the indices).

    offset_dims: output axes holding the slice axes that are not collapsed (in order).
    collapsed_slice_dims: operand axes whose size-1 slice axis is dropped from the output.
    start_index_map: the operand axis that each entry of an index vector starts.
    operand_batching_dims / start_indices_batching_dims: paired axes along which the operand
      and the indices are batched together (each batch element indexes its own operand).
    """

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """XLA's scatter dimension numbers (the index vector is the last axis of the indices).

    update_window_dims: axes of `updates` that are window axes (the others are scatter axes,
      matching the batch axes of the indices in order).
    inserted_window_dims: operand axes that have no window axis (the window has size 1 there).
    scatter_dims_to_operand_dims: the operand axis that each entry of an index vector starts.
    operand_batching_dims / scatter_indices_batching_dims: paired batch axes, as for gather.
    """

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


def _int_tuples(fields: Sequence[Sequence[int]]) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(int(d) for d in f) for f in fields)


# --- index helpers shared by the rules ------------------------------------------------------


def _index_bounds(
    operand_shape: Shape, index_map: Sequence[int], window: Sequence[int], indices: Any
) -> tuple[Any, np.ndarray]:
    """Indices (widened if needed) and the largest valid start of each index-vector entry."""
    upper = np.array([operand_shape[d] - window[d] for d in index_map], np.int64)
    dtype = get_aval(indices).dtype
    if upper.size and int(upper.max()) > np.iinfo(dtype).max:
        indices, dtype = convert_element_type(indices, np.int64), np.dtype(np.int64)
    return indices, upper.astype(dtype)


def clamp_indices(
    operand_shape: Shape, indices: Any, index_map: Sequence[int], window: Sequence[int]
) -> Any:
    """Clamp each start so that its window fits, as XLA's gather does."""
    indices, upper = _index_bounds(operand_shape, index_map, window, indices)
    aval = get_aval(indices)
    lo = full(aval.shape, 0, aval.dtype)
    hi = broadcast_to(upper, aval.shape)
    return arithmetic.min(arithmetic.max(indices, lo), hi)


def in_bounds_mask(
    operand_shape: Shape, indices: Any, index_map: Sequence[int], window: Sequence[int]
) -> Any:
    """Boolean array of the batch shape of `indices`: does the whole window fit?"""
    indices, upper = _index_bounds(operand_shape, index_map, window, indices)
    aval = get_aval(indices)
    ok = bitwise_and(
        ge(indices, full(aval.shape, 0, aval.dtype)), le(indices, broadcast_to(upper, aval.shape))
    )
    return reduce_and(ok, (aval.ndim - 1,))


def _default_fill(dtype: np.dtype) -> Any:
    if dtypes.kind(dtype) in "fc":
        return np.nan
    if dtype.kind == "b":
        return True
    return np.iinfo(dtype).min if dtype.kind == "i" else np.iinfo(dtype).max


# --- gather ---------------------------------------------------------------------------------

gather_p = Primitive("gather")


def gather(
    operand: ArrayLike,
    indices: ArrayLike,
    dimension_numbers: GatherDimensionNumbers | Sequence[Sequence[int]],
    slice_sizes: Sequence[int],
    *,
    mode: str = "clip",
    fill_value: Any = None,
) -> Any:
    """XLA's gather: for each index vector in `indices` (last axis), a slice of `operand`.

    Args:
      mode: "clip" (and "promise_in_bounds") clamps each start so its slice fits (XLA);
        "fill" (and "drop", as in JAX) returns `fill_value` (NaN for inexact dtypes, the
        lowest signed or highest unsigned integer, True) for slices that do not fit.
    """
    dnums = GatherDimensionNumbers(*_int_tuples(dimension_numbers))
    slice_sizes = tuple(int(s) for s in slice_sizes)
    out = gather_p.bind1(operand, indices, dimension_numbers=dnums, slice_sizes=slice_sizes)
    if mode in ("clip", "promise_in_bounds"):  # XLA's own gather clamps
        return out
    if mode not in ("fill", "drop"):
        raise ValueError(
            f"gather: mode must be 'clip', 'fill', 'drop' or 'promise_in_bounds', got {mode!r}"
        )
    operand_shape = get_aval(operand).shape
    mask = in_bounds_mask(operand_shape, indices, dnums.start_index_map, slice_sizes)
    out_aval = get_aval(out)
    batch_dims = [d for d in range(out_aval.ndim) if d not in dnums.offset_dims]
    mask = broadcast_in_dim(mask, out_aval.shape, batch_dims)
    fill = _default_fill(out_aval.dtype) if fill_value is None else fill_value
    return select_n(mask, full(out_aval.shape, fill, out_aval.dtype), out)


@gather_p.def_abstract_eval
def _gather_abstract_eval(
    operand: ShapedArray,
    indices: ShapedArray,
    *,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Shape,
) -> ShapedArray:
    dn = dimension_numbers
    if indices.dtype.kind not in "iu" or indices.ndim < 1:
        raise TypeError(
            "gather: indices must be an integer array whose last axis holds the index vectors, "
            f"got {indices.str_short()}"
        )
    if indices.shape[-1] != len(dn.start_index_map):
        raise TypeError(
            f"gather: the index vector length {indices.shape[-1]} must equal "
            f"len(start_index_map) = {len(dn.start_index_map)}"
        )
    if len(slice_sizes) != operand.ndim or any(
        not 0 <= k <= n for k, n in zip(slice_sizes, operand.shape, strict=True)
    ):
        raise TypeError(
            f"gather: slice_sizes {slice_sizes} need one size between 0 and the axis length per "
            f"axis of the operand of shape {operand.shape}"
        )
    dropped = (*dn.collapsed_slice_dims, *dn.operand_batching_dims)
    if len(set(dropped)) != len(dropped) or any(slice_sizes[d] > 1 for d in dropped):
        raise TypeError(
            f"gather: collapsed_slice_dims and operand_batching_dims {dropped} must be distinct "
            f"axes with slice size at most 1, got slice_sizes {slice_sizes}"
        )
    if len(dn.operand_batching_dims) != len(dn.start_indices_batching_dims) or any(
        operand.shape[o] != indices.shape[i]
        for o, i in zip(dn.operand_batching_dims, dn.start_indices_batching_dims, strict=False)
    ):
        raise TypeError(
            f"gather: batching dims {dn.operand_batching_dims} of the operand {operand.shape} "
            f"and {dn.start_indices_batching_dims} of the indices {indices.shape} must pair up"
        )
    offset_sizes = [slice_sizes[d] for d in range(operand.ndim) if d not in dropped]
    batch_shape = indices.shape[:-1]
    ndim = len(batch_shape) + len(offset_sizes)
    if len(dn.offset_dims) != len(offset_sizes) or list(dn.offset_dims) != sorted(
        set(dn.offset_dims)
    ):
        raise TypeError(
            f"gather: offset_dims {dn.offset_dims} must be increasing, one per kept slice axis "
            f"({len(offset_sizes)})"
        )
    if any(not 0 <= d < ndim for d in dn.offset_dims):
        raise TypeError(f"gather: offset_dims {dn.offset_dims} out of range for rank {ndim}")
    offsets = iter(offset_sizes)
    batch = iter(batch_shape)
    shape = [next(offsets) if d in dn.offset_dims else next(batch) for d in range(ndim)]
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _gather_attrs(dn: GatherDimensionNumbers, index_vector_dim: int, slice_sizes: Shape) -> str:
    fields = [
        ("offset_dims", dn.offset_dims),
        ("collapsed_slice_dims", dn.collapsed_slice_dims),
        ("operand_batching_dims", dn.operand_batching_dims),
        ("start_indices_batching_dims", dn.start_indices_batching_dims),
        ("start_index_map", dn.start_index_map),
    ]
    body = ", ".join(f"{k} = {i64_list(v)}" for k, v in fields if v)
    body = (
        f"{body}, index_vector_dim = {index_vector_dim}"
        if body
        else (f"index_vector_dim = {index_vector_dim}")
    )
    return (
        f"dimension_numbers = #stablehlo.gather<{body}>, indices_are_sorted = false, "
        f"slice_sizes = {i64_array(slice_sizes)}"
    )


@gather_p.def_lowering
def _gather_lowering(ctx: LoweringContext, operand, indices, *, dimension_numbers, slice_sizes):
    return ctx.builder.op(
        "stablehlo.gather",
        [operand, indices],
        ctx.aval_out.strip_weak_type(),
        _gather_attrs(dimension_numbers, indices.aval.ndim - 1, slice_sizes),
    )


@gather_p.def_jvp(symbolic_zeros=True)
def _gather_jvp(primals, tangents, *, dimension_numbers, slice_sizes):
    (operand, indices), (operand_dot, _) = primals, tangents
    params = dict(dimension_numbers=dimension_numbers, slice_sizes=slice_sizes)
    out = gather_p.bind1(operand, indices, **params)
    if type(operand_dot) is Zero:
        return out, None
    return out, gather_p.bind1(operand_dot, indices, **params)


@gather_p.def_eager_vjp
def _gather_vjp(ct, out, primals, linear, *, dimension_numbers, slice_sizes):
    # The transpose rule (the operand is the differentiated one: integer indices never are),
    # its clamp and scatter replayed as one program, or its host rules called directly.
    shape = linear[0].aval.shape
    ct_operand = _gather_vjp_host(ct, primals[1], shape, dimension_numbers, slice_sizes)
    if ct_operand is not None:
        return [ct_operand, None]
    ct_operand = _gather_vjp_body(
        ct,
        primals[1],
        shape=linear[0].aval.shape,
        dnums=tuple(dimension_numbers),
        slice_sizes=slice_sizes,
    )
    return [ct_operand, None]


@fused_rule_body
def _gather_vjp_body(ct, indices, *, shape, dnums, slice_sizes):
    dn = GatherDimensionNumbers(*dnums)
    clamped = clamp_indices(shape, indices, dn.start_index_map, slice_sizes)
    zeros = full(shape, 0, get_aval(ct).dtype)
    return scatter_add_p.bind1(zeros, clamped, ct, dimension_numbers=_scatter_dnums_of(dn))


def _gather_vjp_host(
    ct: Any, indices: Any, shape: Shape, dn: GatherDimensionNumbers, slice_sizes: Shape
) -> Any:
    """`_gather_vjp_body` on the host (`mjcore.lax.host_vjp`), where the body would run there:
    the clamp by integer ufuncs (exact), then scatter_add's host rule into zeros."""
    ct_value = host_vjp.host_value(ct)
    if ct_value is None:
        return None
    index_value = host_vjp.operand_value(indices)
    if index_value is None:
        return None
    dtype = ct_value.dtype
    size = math.prod(shape)
    if not host_vjp.within(scatter_add_p, dtype, max(ct_value.size, index_value.size, size)):
        return None
    ndim = len(shape)
    if (
        size
        and not dn.offset_dims
        and dn.collapsed_slice_dims == dn.start_index_map == tuple(range(ndim))
        and not dn.operand_batching_dims
    ):
        # One element per index vector (`x[rows, cols]`): the scatter rule's `np.add.at`
        # over the flat positions of the clamped vectors ('clip': XLA's clamp for windows of
        # one), the same additions in the same order, without its general bookkeeping.
        rows = index_value.T if index_value.ndim == 2 else np.moveaxis(index_value, -1, 0)
        flat = np.ravel_multi_index(tuple(rows), shape, mode="clip")
        out = np.zeros(size, dtype)
        np.add.at(out, flat, ct_value)
        return wrap_host(out.reshape(shape), ShapedArray(shape, dtype, False))
    upper = _clamp_bounds(shape, dn.start_index_map, slice_sizes, index_value.dtype)
    if upper is None:
        return None  # (`_index_bounds` widens the indices first)
    clamped = np.minimum(np.maximum(index_value, np.zeros((), upper.dtype)), upper)
    zeros = np.zeros(shape, dtype)
    scatter = host_vjp.rule(scatter_add_p)
    out = scatter(zeros, clamped, ct_value, dimension_numbers=_scatter_dnums_of(dn))
    if out.dtype != dtype:  # the body would run XLA
        return None
    return wrap_host(out, ShapedArray(shape, dtype, False))


@functools.lru_cache(maxsize=256)
def _clamp_bounds(
    shape: Shape, index_map: tuple[int, ...], window: Shape, dtype: np.dtype
) -> np.ndarray | None:
    """`_index_bounds`' largest valid starts as `dtype`, or None where they overflow it (read
    only: cached, as NumPy's iinfo costs microseconds)."""
    upper = np.array([shape[d] - window[d] for d in index_map], np.int64)
    if upper.size and int(upper.max()) > np.iinfo(dtype).max:
        return None
    upper = upper.astype(dtype)
    upper.flags.writeable = False
    return upper


def _scatter_dnums_of(dn: GatherDimensionNumbers) -> ScatterDimensionNumbers:
    return ScatterDimensionNumbers(
        dn.offset_dims,
        dn.collapsed_slice_dims,
        dn.start_index_map,
        dn.operand_batching_dims,
        dn.start_indices_batching_dims,
    )


@gather_p.def_transpose
def _gather_transpose(ct, operand, indices, *, dimension_numbers, slice_sizes):
    if is_undefined_primal(indices):
        raise TypeError("gather: the indices cannot be a linear input")
    shape = operand.aval.shape
    # The gather clamped its starts; scatter would drop the windows instead, so clamp first.
    clamped = clamp_indices(shape, indices, dimension_numbers.start_index_map, slice_sizes)
    zeros = full(shape, 0, get_aval(ct).dtype)
    dnums = _scatter_dnums_of(dimension_numbers)
    return [scatter_add_p.bind1(zeros, clamped, ct, dimension_numbers=dnums), None]


def _shift(dims: Sequence[int]) -> tuple[int, ...]:
    return tuple(d + 1 for d in dims)


@gather_p.def_batching
def _gather_batching(vals, dims, *, dimension_numbers, slice_sizes):
    (operand, indices), (operand_bdim, indices_bdim) = vals, dims
    dn = dimension_numbers
    if indices_bdim is NOT_MAPPED:
        # The batch becomes a leading slice axis of full size.
        operand = move_bdim(operand, operand_bdim, 0)
        new = GatherDimensionNumbers(
            (0, *_shift(dn.offset_dims)),
            _shift(dn.collapsed_slice_dims),
            _shift(dn.start_index_map),
            _shift(dn.operand_batching_dims),
            dn.start_indices_batching_dims,
        )
        sizes = (get_aval(operand).shape[0], *slice_sizes)
        return gather_p.bind1(operand, indices, dimension_numbers=new, slice_sizes=sizes), 0
    indices = move_bdim(indices, indices_bdim, 0)
    indices_aval = get_aval(indices)
    if indices_aval.shape[0] == 0:
        # An empty batch: XLA rejects size-1 slices of an empty batching axis.
        operand_aval = get_aval(operand)
        if operand_bdim is not NOT_MAPPED:
            shape = operand_aval.shape
            operand_aval = operand_aval.update(
                shape=shape[:operand_bdim] + shape[operand_bdim + 1 :]
            )
        out = _gather_abstract_eval(
            operand_aval,
            indices_aval.update(shape=indices_aval.shape[1:]),
            dimension_numbers=dn,
            slice_sizes=slice_sizes,
        )
        return full((0, *out.shape), 0, out.dtype), 0
    if operand_bdim is NOT_MAPPED:
        # A leading batch axis of the indices is a leading batch axis of the output.
        new = dn._replace(
            offset_dims=_shift(dn.offset_dims),
            start_indices_batching_dims=_shift(dn.start_indices_batching_dims),
        )
        return gather_p.bind1(operand, indices, dimension_numbers=new, slice_sizes=slice_sizes), 0
    operand = move_bdim(operand, operand_bdim, 0)
    new = GatherDimensionNumbers(
        _shift(dn.offset_dims),
        _shift(dn.collapsed_slice_dims),
        _shift(dn.start_index_map),
        (0, *_shift(dn.operand_batching_dims)),
        (0, *_shift(dn.start_indices_batching_dims)),
    )
    sizes = (1, *slice_sizes)
    return gather_p.bind1(operand, indices, dimension_numbers=new, slice_sizes=sizes), 0


gather_p.def_host(host.gather)


# --- the scatter family ---------------------------------------------------------------------


def _window_sizes(
    operand_shape: Shape, updates_shape: Shape, dn: ScatterDimensionNumbers
) -> tuple[int, ...]:
    """The window size along each operand axis (1 on inserted and batching axes)."""
    dropped = (*dn.inserted_window_dims, *dn.operand_batching_dims)
    windows = iter(updates_shape[d] for d in dn.update_window_dims)
    return tuple(1 if d in dropped else next(windows) for d in range(len(operand_shape)))


def _gather_dnums_of(dn: ScatterDimensionNumbers) -> GatherDimensionNumbers:
    return GatherDimensionNumbers(
        dn.update_window_dims,
        dn.inserted_window_dims,
        dn.scatter_dims_to_operand_dims,
        dn.operand_batching_dims,
        dn.scatter_indices_batching_dims,
    )


def _scatter_abstract_eval(name: str, kinds: str) -> Callable[..., ShapedArray]:
    def abstract_eval(
        operand: ShapedArray,
        indices: ShapedArray,
        updates: ShapedArray,
        *,
        dimension_numbers: ScatterDimensionNumbers,
    ) -> ShapedArray:
        dn = dimension_numbers
        dtype = check_same_dtypes(name, (operand, updates))
        if dtypes.kind(dtype) not in kinds:
            raise TypeError(f"{name} does not accept dtype {dtype.name}")
        if indices.dtype.kind not in "iu" or indices.ndim < 1:
            raise TypeError(
                f"{name}: indices must be an integer array whose last axis holds the index "
                f"vectors, got {indices.str_short()}"
            )
        if indices.shape[-1] != len(dn.scatter_dims_to_operand_dims):
            raise TypeError(
                f"{name}: the index vector length {indices.shape[-1]} must equal "
                f"len(scatter_dims_to_operand_dims) = {len(dn.scatter_dims_to_operand_dims)}"
            )
        dropped = (*dn.inserted_window_dims, *dn.operand_batching_dims)
        if len(dn.update_window_dims) + len(dropped) != operand.ndim or len(set(dropped)) != len(
            dropped
        ):
            raise TypeError(
                f"{name}: update_window_dims {dn.update_window_dims}, inserted_window_dims "
                f"{dn.inserted_window_dims} and operand_batching_dims "
                f"{dn.operand_batching_dims} must account for each of the {operand.ndim} "
                "operand axes once"
            )
        scatter_shape = tuple(
            n for d, n in enumerate(updates.shape) if d not in dn.update_window_dims
        )
        windows = _window_sizes(operand.shape, updates.shape, dn)
        if scatter_shape != indices.shape[:-1] or any(
            w > n for w, n in zip(windows, operand.shape, strict=True)
        ):
            raise TypeError(
                f"{name}: updates of shape {updates.shape} do not fit indices of shape "
                f"{indices.shape} and an operand of shape {operand.shape} with {dn}"
            )
        return ShapedArray(operand.shape, dtype, operand.weak_type)

    return abstract_eval


def _scatter_attrs(dn: ScatterDimensionNumbers, index_vector_dim: int) -> str:
    fields = [
        ("update_window_dims", dn.update_window_dims),
        ("inserted_window_dims", dn.inserted_window_dims),
        ("input_batching_dims", dn.operand_batching_dims),
        ("scatter_indices_batching_dims", dn.scatter_indices_batching_dims),
        ("scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims),
    ]
    parts = [f"{k} = {i64_list(v)}" for k, v in fields if v]
    parts.append(f"index_vector_dim = {index_vector_dim}")
    return (
        "indices_are_sorted = false, scatter_dimension_numbers = "
        f"#stablehlo.scatter<{', '.join(parts)}>, unique_indices = false"
    )


def _scatter_lowering(combine: Callable[[np.dtype], str | None]) -> Callable[..., Value]:
    """`combine(dtype)` names the StableHLO op merging old and new values (None: replace)."""

    def lowering(ctx: LoweringContext, operand, indices, updates, *, dimension_numbers):
        b = ctx.builder
        scalar = ShapedArray((), operand.aval.dtype)
        op = combine(scalar.dtype)

        def body(rb: FunctionBuilder, old: Value, new: Value) -> list[Value]:
            return [new if op is None else rb.op(op, [old, new], scalar)]

        return b.op(
            "stablehlo.scatter",
            [operand, indices, updates],
            ctx.aval_out.strip_weak_type(),
            _scatter_attrs(dimension_numbers, indices.aval.ndim - 1),
            regions=[b.region([scalar, scalar], body)],
        )

    return lowering


def _scatter_batching(prim: Primitive) -> Callable[..., tuple[Any, int]]:
    def batching(vals, dims, *, dimension_numbers):
        operand, indices, updates = vals
        operand_bdim, indices_bdim, updates_bdim = dims
        dn = dimension_numbers
        axis_size = next(
            get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not NOT_MAPPED
        )
        operand = moveaxis_to(operand, operand_bdim, 0, axis_size)
        updates = moveaxis_to(updates, updates_bdim, 0, axis_size)
        if axis_size == 0:
            return operand, 0
        if indices_bdim is NOT_MAPPED:
            # The batch is a leading window axis of the updates, over the whole operand axis.
            new = ScatterDimensionNumbers(
                (0, *_shift(dn.update_window_dims)),
                _shift(dn.inserted_window_dims),
                _shift(dn.scatter_dims_to_operand_dims),
                _shift(dn.operand_batching_dims),
                dn.scatter_indices_batching_dims,
            )
        else:
            indices = move_bdim(indices, indices_bdim, 0)
            new = ScatterDimensionNumbers(
                _shift(dn.update_window_dims),
                _shift(dn.inserted_window_dims),
                _shift(dn.scatter_dims_to_operand_dims),
                (0, *_shift(dn.operand_batching_dims)),
                (0, *_shift(dn.scatter_indices_batching_dims)),
            )
        return prim.bind1(operand, indices, updates, dimension_numbers=new), 0

    return batching


def _scatter_family(name: str, kinds: str, combine: Callable[[np.dtype], str | None]) -> Primitive:
    """A scatter primitive with its abstract_eval, lowering and batching rules."""
    prim = Primitive(name)
    prim.def_abstract_eval(_scatter_abstract_eval(name, kinds))
    prim.def_lowering(_scatter_lowering(combine))
    prim.def_batching(_scatter_batching(prim))
    return prim


def _bind_scatter(
    prim: Primitive,
    operand: ArrayLike,
    indices: ArrayLike,
    updates: ArrayLike,
    dimension_numbers: ScatterDimensionNumbers | Sequence[Sequence[int]],
    mode: str,
) -> Any:
    dnums = ScatterDimensionNumbers(*_int_tuples(dimension_numbers))
    if mode == "clip":
        shape = get_aval(operand).shape
        windows = _window_sizes(shape, get_aval(updates).shape, dnums)
        indices = clamp_indices(shape, indices, dnums.scatter_dims_to_operand_dims, windows)
    elif mode not in ("drop", "fill", "promise_in_bounds"):  # XLA's own scatter drops
        raise ValueError(
            f"{prim.name}: mode must be 'drop', 'clip', 'fill' or 'promise_in_bounds', got {mode!r}"
        )
    return prim.bind1(operand, indices, updates, dimension_numbers=dnums)


# --- scatter_add ----------------------------------------------------------------------------

scatter_add_p = _scatter_family("scatter_add", "iufc", lambda dt: "stablehlo.add")


def scatter_add(
    operand: ArrayLike,
    indices: ArrayLike,
    updates: ArrayLike,
    dimension_numbers: ScatterDimensionNumbers | Sequence[Sequence[int]],
    *,
    mode: str = "drop",
) -> Any:
    """`operand` plus each window of `updates` at its start in `indices` (duplicates add up).

    `mode="drop"` skips windows that do not fit (XLA); `mode="clip"` clamps their starts first.
    """
    return _bind_scatter(scatter_add_p, operand, indices, updates, dimension_numbers, mode)


@scatter_add_p.def_jvp(symbolic_zeros=True)
def _scatter_add_jvp(primals, tangents, *, dimension_numbers):
    (operand, indices, updates), (operand_dot, _, updates_dot) = primals, tangents
    out = scatter_add_p.bind1(operand, indices, updates, dimension_numbers=dimension_numbers)
    if type(operand_dot) is Zero and type(updates_dot) is Zero:
        return out, None
    out_dot = scatter_add_p.bind1(
        instantiate(operand_dot),
        indices,
        instantiate(updates_dot),
        dimension_numbers=dimension_numbers,
    )
    return out, out_dot


def _gather_updates(x: Any, indices: Any, updates_shape: Shape, dn: ScatterDimensionNumbers):
    """The values of `x` that each update element lands on; 0 for dropped windows."""
    windows = _window_sizes(get_aval(x).shape, updates_shape, dn)
    return gather(x, indices, _gather_dnums_of(dn), windows, mode="fill", fill_value=0)


@scatter_add_p.def_transpose
def _scatter_add_transpose(ct, operand, indices, updates, *, dimension_numbers):
    if is_undefined_primal(indices):
        raise TypeError("scatter_add: the indices cannot be a linear input")
    ct_operand = ct if is_undefined_primal(operand) else None
    ct_updates = None
    if is_undefined_primal(updates):
        ct_updates = _gather_updates_body(
            ct, indices, updates_shape=updates.aval.shape, dnums=tuple(dimension_numbers)
        )
    return [ct_operand, None, ct_updates]


@fused_rule_body
def _gather_updates_body(ct, indices, *, updates_shape, dnums):
    # Replayed as one program in an eager backward pass (on the host: the host rules of the
    # fill-mode gather's masks, gather and select, without a bind each).
    return _gather_updates(ct, indices, updates_shape, ScatterDimensionNumbers(*dnums))


scatter_add_p.def_host(host.scatter(np.add))


# --- scatter_mul ----------------------------------------------------------------------------

scatter_mul_p = _scatter_family("scatter_mul", "iufc", lambda dt: "stablehlo.multiply")


def scatter_mul(
    operand: ArrayLike,
    indices: ArrayLike,
    updates: ArrayLike,
    dimension_numbers: ScatterDimensionNumbers | Sequence[Sequence[int]],
    *,
    mode: str = "drop",
) -> Any:
    """`operand` times each window of `updates` at its start in `indices` (duplicates too).

    `mode="drop"` skips windows that do not fit (XLA); `mode="clip"` clamps their starts first.
    """
    return _bind_scatter(scatter_mul_p, operand, indices, updates, dimension_numbers, mode)


@scatter_mul_p.def_jvp(symbolic_zeros=True)
def _scatter_mul_jvp(primals, tangents, *, dimension_numbers):
    (operand, indices, updates), (operand_dot, _, updates_dot) = primals, tangents
    out = scatter_mul_p.bind1(operand, indices, updates, dimension_numbers=dimension_numbers)
    if type(updates_dot) is not Zero:
        # NB: as in JAX; d(out)/d(updates) needs products over the other duplicates.
        raise NotImplementedError(
            "scatter_mul: differentiation with respect to the updates is not implemented; "
            "differentiate with respect to the operand only, or write the product with "
            "exp(scatter_add(..., log(updates)))"
        )
    if type(operand_dot) is Zero:
        return out, None
    ones = full(get_aval(operand).shape, 1, get_aval(operand).dtype)
    factor = scatter_mul_p.bind1(ones, indices, updates, dimension_numbers=dimension_numbers)
    return out, arithmetic.mul(operand_dot, factor)


@scatter_mul_p.def_transpose
def _scatter_mul_transpose(ct, operand, indices, updates, *, dimension_numbers):
    if is_undefined_primal(indices) or is_undefined_primal(updates):
        raise TypeError("scatter_mul: only the operand can be a linear input")
    return [
        scatter_mul_p.bind1(ct, indices, updates, dimension_numbers=dimension_numbers),
        None,
        None,
    ]


scatter_mul_p.def_host(host.scatter(np.multiply))


# --- scatter_min / scatter_max --------------------------------------------------------------

scatter_min_p = _scatter_family(
    "scatter_min",
    "biuf",
    lambda dt: "stablehlo.and" if dt.kind == "b" else "stablehlo.minimum",
)
scatter_max_p = _scatter_family(
    "scatter_max",
    "biuf",
    lambda dt: "stablehlo.or" if dt.kind == "b" else "stablehlo.maximum",
)


def scatter_min(
    operand: ArrayLike,
    indices: ArrayLike,
    updates: ArrayLike,
    dimension_numbers: ScatterDimensionNumbers | Sequence[Sequence[int]],
    *,
    mode: str = "drop",
) -> Any:
    """`operand` with each window of `updates` at its start in `indices`, by elementwise min.

    `mode="drop"` skips windows that do not fit (XLA); `mode="clip"` clamps their starts first.
    """
    return _bind_scatter(scatter_min_p, operand, indices, updates, dimension_numbers, mode)


def scatter_max(
    operand: ArrayLike,
    indices: ArrayLike,
    updates: ArrayLike,
    dimension_numbers: ScatterDimensionNumbers | Sequence[Sequence[int]],
    *,
    mode: str = "drop",
) -> Any:
    """`operand` with each window of `updates` at its start in `indices`, by elementwise max.

    `mode="drop"` skips windows that do not fit (XLA); `mode="clip"` clamps their starts first.
    """
    return _bind_scatter(scatter_max_p, operand, indices, updates, dimension_numbers, mode)


def _extremal_jvp(prim: Primitive) -> Callable[..., Any]:
    """JAX's rule: the tangent of each result is the mean of the tangents of the inputs that
    attain it (the operand element and every update landing there)."""

    def jvp(primals, tangents, *, dimension_numbers):
        (operand, indices, updates), (operand_dot, _, updates_dot) = primals, tangents
        dn = dimension_numbers
        out = prim.bind1(operand, indices, updates, dimension_numbers=dn)
        if type(operand_dot) is Zero and type(updates_dot) is Zero:
            return out, None
        dtype = get_aval(out).dtype
        updates_shape = get_aval(updates).shape
        at_updates = _gather_updates(out, indices, updates_shape, dn)
        won = eq(updates, at_updates)
        kept = eq(operand, out)
        one_u = full(updates_shape, 1, dtype)
        zero_u = full(updates_shape, 0, dtype)
        one_o = full(get_aval(out).shape, 1, dtype)
        zero_o = full(get_aval(out).shape, 0, dtype)
        refs = scatter_add_p.bind1(
            select_n(kept, zero_o, one_o),
            indices,
            select_n(won, zero_u, one_u),
            dimension_numbers=dn,
        )
        refs_at_updates = _gather_updates(refs, indices, updates_shape, dn)
        # Where nothing is referenced the coefficient is unused; divide by 1 there instead.
        safe = select_n(eq(refs_at_updates, zero_u), refs_at_updates, one_u)
        updates_coef = select_n(won, zero_u, arithmetic.div(one_u, safe))
        operand_coef = select_n(kept, zero_o, arithmetic.div(one_o, refs))
        out_dot = scatter_add_p.bind1(
            arithmetic.mul(operand_coef, instantiate(operand_dot)),
            indices,
            arithmetic.mul(updates_coef, instantiate(updates_dot)),
            dimension_numbers=dn,
        )
        return out, out_dot

    return jvp


scatter_min_p.def_jvp(_extremal_jvp(scatter_min_p), symbolic_zeros=True)
scatter_max_p.def_jvp(_extremal_jvp(scatter_max_p), symbolic_zeros=True)


scatter_min_p.def_host(host.scatter(np.minimum))
scatter_max_p.def_host(host.scatter(np.maximum))


# --- scatter (replace) ----------------------------------------------------------------------

scatter_p = _scatter_family("scatter", "biufc", lambda dt: None)


def scatter(
    operand: ArrayLike,
    indices: ArrayLike,
    updates: ArrayLike,
    dimension_numbers: ScatterDimensionNumbers | Sequence[Sequence[int]],
    *,
    mode: str = "drop",
) -> Any:
    """`operand` with each window of `updates` written at its start in `indices`.

    With duplicate starts one of the updates wins (the last, on CPU).

    `mode="drop"` skips windows that do not fit (XLA); `mode="clip"` clamps their starts first.
    """
    return _bind_scatter(scatter_p, operand, indices, updates, dimension_numbers, mode)


@scatter_p.def_jvp(symbolic_zeros=True)
def _scatter_jvp(primals, tangents, *, dimension_numbers):
    # JAX's rule: scatter distinct ids to learn which update wins each element, then express
    # value and tangent as scatter_adds of masked inputs, so they agree on duplicates.
    (operand, indices, updates), (operand_dot, _, updates_dot) = primals, tangents
    dn = dimension_numbers
    if type(operand_dot) is Zero and type(updates_dot) is Zero:
        return scatter_p.bind1(operand, indices, updates, dimension_numbers=dn), None
    operand_shape = get_aval(operand).shape
    updates_shape = get_aval(updates).shape
    scatter_dims = [d for d in range(len(updates_shape)) if d not in dn.update_window_dims]
    ids_shape = tuple(n if d in scatter_dims else 1 for d, n in enumerate(updates_shape))
    count = int(np.prod([updates_shape[d] for d in scatter_dims], dtype=np.int64))
    id_dtype = np.dtype(np.int32 if count < 2**31 - 1 else np.int64)
    ids = _row_major_iota(id_dtype, ids_shape, scatter_dims)
    ids = broadcast_to(arithmetic.add(ids, full(ids_shape, 1, id_dtype)), updates_shape)
    scattered = scatter_p.bind1(
        full(operand_shape, 0, id_dtype), indices, ids, dimension_numbers=dn
    )
    winners = _gather_updates(scattered, indices, updates_shape, dn)
    untouched = eq(scattered, full(operand_shape, 0, id_dtype))
    won = eq(ids, winners)

    def masked(x, mask):
        x = instantiate(x)
        return select_n(mask, full(get_aval(x).shape, 0, get_aval(x).dtype), x)

    out = scatter_add_p.bind1(
        masked(operand, untouched), indices, masked(updates, won), dimension_numbers=dn
    )
    out_dot = scatter_add_p.bind1(
        masked(operand_dot, untouched), indices, masked(updates_dot, won), dimension_numbers=dn
    )
    return out, out_dot


def _row_major_iota(dtype: np.dtype, shape: Shape, dims: Sequence[int]) -> Any:
    """0, 1, 2, ... in row-major order over the axes `dims` of `shape` (others have size 1)."""
    total = full(shape, 0, dtype)
    stride = 1
    for d in reversed(dims):
        term = broadcasted_iota(dtype, shape, d)
        if stride != 1:
            term = arithmetic.mul(term, full(shape, stride, dtype))
        total = arithmetic.add(total, term)
        stride *= shape[d]
    return total


scatter_p.def_host(host.scatter(None))


# --- scatter_sub (scatter_add of the negated updates) ---------------------------------------


def scatter_sub(
    operand: ArrayLike,
    scatter_indices: ArrayLike,
    updates: ArrayLike,
    dimension_numbers: ScatterDimensionNumbers | Sequence[Sequence[int]],
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | None = None,
) -> Any:
    """`operand` minus each window of `updates` at its start in `scatter_indices`.

    The same values as JAX's `scatter_sub` primitive (x - u == x + (-u) exactly, wrapping
    for unsigned integers), so it shares scatter_add's rules. The sortedness and uniqueness
    hints are accepted and unused. `mode` None means "drop".
    """
    del indices_are_sorted, unique_indices
    negated = arithmetic.sub(zeros_like(updates), updates)
    return scatter_add(
        operand, scatter_indices, negated, dimension_numbers, mode="drop" if mode is None else mode
    )


__all__ = [
    "GatherDimensionNumbers",
    "ScatterDimensionNumbers",
    "clamp_indices",
    "gather",
    "in_bounds_mask",
    "scatter",
    "scatter_add",
    "scatter_max",
    "scatter_min",
    "scatter_mul",
    "scatter_sub",
]
