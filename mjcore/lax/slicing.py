"""Slicing primitives: static `slice`, and `dynamic_slice` / `dynamic_update_slice` whose start
indices are traced scalars. Start indices follow XLA: each is clamped so the slice fits."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from mjcore.ad import Zero, instantiate, is_undefined_primal, linear_jvp
from mjcore.backend.hlo import i64_array
from mjcore.backend.lowering import LoweringContext
from mjcore.batching import NOT_MAPPED, moveaxis_to
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.dispatch import scalar_array
from mjcore.lax import arithmetic, host, host_vjp
from mjcore.lax.base import (
    broadcast_in_dim,
    broadcast_in_dim_p,
    broadcast_to,
    convert_element_type,
    expand_dims,
    full,
    select_n,
)
from mjcore.lax.comparison import ge, lt
from mjcore.lax.families import check_same_dtypes, convert
from mjcore.lax.structural import (
    broadcasted_iota,
    check_axes,
    normalize_axes,
    pad,
    pad_p,
    squeeze,
)

ArrayLike = Any
Shape = tuple[int, ...]


# --- slice ----------------------------------------------------------------------------------

slice_p = Primitive("slice")


def slice(  # noqa: A001  (the lax name, as in JAX)
    x: ArrayLike,
    start_indices: Sequence[int],
    limit_indices: Sequence[int],
    strides: Sequence[int] | None = None,
) -> Any:
    """`x[start:limit:stride]` along every axis, with static non-negative bounds."""
    return slice_p.bind1(
        x,
        start_indices=tuple(int(i) for i in start_indices),
        limit_indices=tuple(int(i) for i in limit_indices),
        strides=None if strides is None else tuple(int(s) for s in strides),
    )


@slice_p.def_abstract_eval
def _slice_abstract_eval(
    x: ShapedArray,
    *,
    start_indices: tuple[int, ...],
    limit_indices: tuple[int, ...],
    strides: tuple[int, ...] | None,
) -> ShapedArray:
    strides = (1,) * x.ndim if strides is None else strides
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        raise ValueError(
            f"slice: start_indices {start_indices}, limit_indices {limit_indices} and strides "
            f"{strides} need one entry per axis of the operand of shape {x.shape}"
        )
    for start, limit, stride, size in zip(
        start_indices, limit_indices, strides, x.shape, strict=True
    ):
        if not 0 <= start <= limit <= size or stride < 1:
            raise ValueError(
                f"slice: invalid slice start_indices={start_indices}, "
                f"limit_indices={limit_indices}, strides={strides} of an operand of shape "
                f"{x.shape}; need 0 <= start <= limit <= size and stride >= 1"
            )
    shape = tuple(
        -(-(limit - start) // stride)
        for start, limit, stride in zip(start_indices, limit_indices, strides, strict=True)
    )
    return ShapedArray(shape, x.dtype, x.weak_type)


@slice_p.def_lowering
def _slice_lowering(ctx: LoweringContext, x: Any, *, start_indices, limit_indices, strides):
    strides = (1,) * len(start_indices) if strides is None else strides
    return ctx.builder.op(
        "stablehlo.slice",
        [x],
        ctx.aval_out.strip_weak_type(),
        f"start_indices = {i64_array(start_indices)}, limit_indices = "
        f"{i64_array(limit_indices)}, strides = {i64_array(strides)}",
    )


linear_jvp(slice_p)


@slice_p.def_transpose
def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    # Zeros around the slice and between strided elements: a pad with interior padding.
    strides = (1,) * len(start_indices) if strides is None else strides
    config = []
    for start, stride, n, k in zip(
        start_indices, strides, x.aval.shape, get_aval(ct).shape, strict=True
    ):
        end = start + (k - 1) * stride + 1 if k else start
        config.append((start, n - end, stride - 1))
    value = host_vjp.host_value(ct)
    aval = get_aval(ct)
    if value is not None and host_vjp.within(pad_p, aval.dtype, x.aval.size):
        # pad's host rule, without a bind (its padding value: a zero of the dtype)
        out = host.pad(value, np.zeros((), aval.dtype), padding_config=tuple(config))
        return [host_vjp.wrap(out, out.shape, aval.update(weak_type=False))]
    return [pad(ct, full((), 0, aval.dtype), config)]


@slice_p.def_batching
def _slice_batching(vals, dims, *, start_indices, limit_indices, strides):
    (x,), (bdim,) = vals, dims
    axis_size = get_aval(x).shape[bdim]

    def insert(t: tuple[int, ...], v: int) -> tuple[int, ...]:
        return (*t[:bdim], v, *t[bdim:])

    return slice_p.bind1(
        x,
        start_indices=insert(start_indices, 0),
        limit_indices=insert(limit_indices, axis_size),
        strides=None if strides is None else insert(strides, 1),
    ), bdim


def slice_in_dim(x: ArrayLike, start: int, limit: int, axis: int) -> Any:
    """`slice` along one axis, keeping the others whole."""
    shape = get_aval(x).shape
    starts = [0] * len(shape)
    limits = list(shape)
    starts[axis], limits[axis] = start, limit
    return slice(x, starts, limits)


slice_p.def_host(
    lambda x, *, start_indices, limit_indices, strides: x[
        tuple(map(builtins.slice, start_indices, limit_indices, strides or (1,) * x.ndim))
    ]
)  # a view


# --- start indices of dynamic slices (shared by the two primitives below) ------------------


def _check_start_indices(name: str, operand: ShapedArray, indices: Sequence[ShapedArray]) -> None:
    if len(indices) != operand.ndim:
        raise TypeError(
            f"{name}: needs one start index per axis of the operand of shape {operand.shape}, "
            f"got {len(indices)}"
        )
    for aval in indices:
        if aval.ndim != 0 or aval.dtype.kind not in "iu":
            raise TypeError(
                f"{name}: start indices must be integer scalars, got "
                + ", ".join(a.str_short() for a in indices)
            )


def _lower_start_indices(ctx: LoweringContext, indices: Sequence[Any]) -> list[Any]:
    """StableHLO wants every start index of one type: convert mixed ones to a common type."""
    kinds = {v.aval.dtype for v in indices}
    if len(kinds) <= 1:
        return list(indices)
    common = np.result_type(*kinds)
    common = common if common.kind in "iu" else np.dtype("int64")
    return [convert(ctx.builder, v, common) for v in indices]


def _clamped_start(start: Any, max_start: int) -> Any:
    """`start` clamped into `[0, max_start]`, as XLA clamps dynamic slice starts."""
    dtype = get_aval(start).dtype
    if max_start > np.iinfo(dtype).max:
        start = convert_element_type(start, np.int64)  # a narrow type, widened losslessly
        dtype = np.dtype(np.int64)
    lowest = arithmetic.max(start, full((), 0, dtype))
    return arithmetic.min(lowest, full((), max_start, dtype))


def _shift_steps(clamped: Any, max_start: int) -> list[tuple[int, Any]]:
    """The binary digits of a start already clamped into `[0, max_start]`, high to low.

    Returns `(step, take)` pairs, `step` a power of two and `take` a boolean array of the
    shape of the start telling whether `step` is part of it; the steps taken sum to it.
    """
    remaining = clamped
    dtype = get_aval(remaining).dtype
    steps = []
    for bit in reversed(range(max_start.bit_length())):
        step = full((), 1 << bit, dtype)
        take = ge(remaining, step)
        steps.append((1 << bit, take))
        if bit:
            remaining = select_n(take, remaining, arithmetic.sub(remaining, step))
    return steps


def _select_per_example(take: Any, on_false: Any, on_true: Any) -> Any:
    """Per-example choice: `take` is a scalar or a vector over axis 0 of the cases."""
    shape = get_aval(on_false).shape
    if get_aval(take).ndim:
        take = broadcast_in_dim(take, shape, (0,))
    return select_n(take, on_false, on_true)


def _pad_axis(x: Any, axis: int, lo: int, hi: int) -> Any:
    aval = get_aval(x)
    if lo == hi == 0:
        return x
    config = [(0, 0, 0)] * aval.ndim
    config[axis] = (lo, hi, 0)
    return pad(x, full((), 0, aval.dtype), config)


def _batched_window(x: Any, axis: int, start: Any, size: int) -> Any:
    """`x[..., start:start + size, ...]` along `axis` with a start per example (axis 0).

    A barrel shifter: for each binary digit of the clamped start, from the highest, keep or
    shift the window left by that power of two, per example. Each stage trims what later
    stages cannot reach, so the work is O(size * log(n) + n) per example and line.
    """
    n = get_aval(x).shape[axis]
    max_start = n - size
    steps = _shift_steps(_clamped_start(start, max_start), max_start)
    if not steps:
        return x
    # Room for the largest combined shift: size + 2**len(steps) - 1 >= n elements.
    x = _pad_axis(x, axis, 0, size + (1 << len(steps)) - 1 - n)
    for step, take in steps:
        length = size + step - 1
        kept = slice_in_dim(x, 0, length, axis)
        shifted = slice_in_dim(x, step, step + length, axis)
        x = _select_per_example(take, kept, shifted)
    return x


def _batched_placement(update: Any, axis: int, start: Any, n: int) -> tuple[Any, Any]:
    """Place `update` at a per-example `start` along `axis` of a length-`n` axis.

    Returns the shifted update (zeros outside the window) and a boolean mask of the window,
    broadcastable against it. The update is barrel-shifted right as in `_batched_window`.
    """
    size = get_aval(update).shape[axis]
    max_start = n - size
    clamped = _clamped_start(start, max_start)
    for step, take in _shift_steps(clamped, max_start):
        kept = _pad_axis(update, axis, 0, step)
        shifted = _pad_axis(update, axis, step, 0)
        update = _select_per_example(take, kept, shifted)
    update = slice_in_dim(update, 0, n, axis)
    ndim = get_aval(update).ndim
    dtype = get_aval(clamped).dtype
    positions = broadcasted_iota(dtype, tuple(n if i == axis else 1 for i in range(ndim)), axis)
    clamped_aval = get_aval(clamped)
    if clamped_aval.ndim:
        # One start per example: line it up with axis 0 of the positions.
        clamped = broadcast_in_dim(clamped, clamped_aval.shape + (1,) * (ndim - 1), (0,))
    end = arithmetic.add(clamped, full((), size, dtype))
    mask = arithmetic.mul(ge(positions, clamped), lt(positions, end))
    return update, mask


# --- dynamic_slice --------------------------------------------------------------------------

dynamic_slice_p = Primitive("dynamic_slice")


def dynamic_slice(
    x: ArrayLike, start_indices: Sequence[ArrayLike], slice_sizes: Sequence[int]
) -> Any:
    """The block of `x` of shape `slice_sizes` starting at the traced `start_indices`.

    Each start is clamped into `[0, x.shape[i] - slice_sizes[i]]` so the block always fits.
    """
    # NB: JAX's lax.dynamic_slice first wraps negative starts once (adds the axis size); here
    # they clamp to 0, as in XLA. Callers such as mjnp indexing normalise negative indices.
    return dynamic_slice_p.bind1(x, *start_indices, slice_sizes=tuple(int(s) for s in slice_sizes))


@dynamic_slice_p.def_abstract_eval
def _dynamic_slice_abstract_eval(
    x: ShapedArray, *start_indices: ShapedArray, slice_sizes: Shape
) -> ShapedArray:
    _check_start_indices("dynamic_slice", x, start_indices)
    if len(slice_sizes) != x.ndim or any(
        not 0 <= k <= n for k, n in zip(slice_sizes, x.shape, strict=True)
    ):
        raise ValueError(
            f"dynamic_slice: slice_sizes {slice_sizes} must give a size between 0 and the "
            f"axis length for each axis of the operand of shape {x.shape}"
        )
    return ShapedArray(slice_sizes, x.dtype, x.weak_type)


@dynamic_slice_p.def_lowering
def _dynamic_slice_lowering(ctx: LoweringContext, x: Any, *start_indices: Any, slice_sizes):
    return ctx.builder.op(
        "stablehlo.dynamic_slice",
        [x, *_lower_start_indices(ctx, start_indices)],
        ctx.aval_out.strip_weak_type(),
        f"slice_sizes = {i64_array(slice_sizes)}",
    )


@dynamic_slice_p.def_jvp(symbolic_zeros=True)
def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    x, *start_indices = primals
    x_dot = tangents[0]
    out = dynamic_slice_p.bind1(x, *start_indices, slice_sizes=slice_sizes)
    if type(x_dot) is Zero:
        return out, None
    return out, dynamic_slice_p.bind1(x_dot, *start_indices, slice_sizes=slice_sizes)


@dynamic_slice_p.def_transpose
def _dynamic_slice_transpose(ct, x, *start_indices, slice_sizes):
    zeros = _zeros(x.aval.shape, x.aval.dtype)
    update = host_vjp.bind1(dynamic_update_slice_p, zeros, ct, *start_indices)
    return [update] + [None] * len(start_indices)


def _zeros(shape: Shape, dtype: np.dtype) -> Any:
    """`full(shape, 0, dtype)` for transpose rules: broadcast_in_dim's host rule without a
    bind where eager dispatch would run it (`host_vjp.bind1`)."""
    zero = scalar_array(0, dtype)
    if not shape:
        return zero
    return host_vjp.bind1(broadcast_in_dim_p, zero, shape=tuple(shape), broadcast_dimensions=())


@dynamic_slice_p.def_batching
def _dynamic_slice_batching(vals, dims, *, slice_sizes):
    x, *starts = vals
    x_bdim, *start_dims = dims
    axis_size = next(
        get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not NOT_MAPPED
    )
    zero = full((), 0, get_aval(starts[0]).dtype if starts else np.int32)
    if all(d is NOT_MAPPED for d in start_dims):
        starts.insert(x_bdim, zero)
        sizes = (*slice_sizes[:x_bdim], axis_size, *slice_sizes[x_bdim:])
        return dynamic_slice_p.bind1(x, *starts, slice_sizes=sizes), x_bdim
    # XLA has no batched dynamic_slice and mjcore no gather yet. Starts shared by the batch go
    # through one dynamic_slice; each axis with per-example starts then takes its window with
    # a barrel shifter of static slices and selects (see `_batched_window`): exact for every
    # dtype (no arithmetic on values) and O(log n) stages, unlike a one-hot contraction.
    x = moveaxis_to(x, x_bdim, 0, axis_size)
    shape = get_aval(x).shape[1:]
    shared = [s if d is NOT_MAPPED else zero for s, d in zip(starts, start_dims, strict=True)]
    sizes = tuple(
        k if d is NOT_MAPPED else n for k, n, d in zip(slice_sizes, shape, start_dims, strict=True)
    )
    if sizes != shape:
        x = dynamic_slice_p.bind1(x, zero, *shared, slice_sizes=(axis_size, *sizes))
    for axis, (start, d, size) in enumerate(zip(starts, start_dims, slice_sizes, strict=True)):
        if d is not NOT_MAPPED:
            x = _batched_window(x, axis + 1, start, size)
    return x, 0


@dynamic_slice_p.def_host
def _dynamic_slice_host(x: np.ndarray, *starts: np.ndarray, slice_sizes: Shape) -> np.ndarray:
    return x[_host_window(x.shape, starts, slice_sizes)]  # a view


def _host_window(shape: Shape, starts: Sequence[np.ndarray], sizes: Shape) -> tuple:
    """The slices of a dynamic window, each start clamped into [0, n - size] as XLA does."""
    out = []
    for start, n, k in zip(starts, shape, sizes, strict=True):
        s = min(max(int(start), 0), n - k)
        out.append(builtins.slice(s, s + k))
    return tuple(out)


# --- dynamic_update_slice -------------------------------------------------------------------

dynamic_update_slice_p = Primitive("dynamic_update_slice")


def dynamic_update_slice(
    x: ArrayLike, update: ArrayLike, start_indices: Sequence[ArrayLike]
) -> Any:
    """`x` with the block at the traced `start_indices` replaced by `update`.

    Starts are clamped as in `dynamic_slice`, so the whole update always lands inside `x`.
    """
    return dynamic_update_slice_p.bind1(x, update, *start_indices)


@dynamic_update_slice_p.def_abstract_eval
def _dynamic_update_slice_abstract_eval(
    x: ShapedArray, update: ShapedArray, *start_indices: ShapedArray
) -> ShapedArray:
    dtype = check_same_dtypes("dynamic_update_slice", (x, update))
    _check_start_indices("dynamic_update_slice", x, start_indices)
    if update.ndim != x.ndim or any(k > n for k, n in zip(update.shape, x.shape, strict=True)):
        raise ValueError(
            f"dynamic_update_slice: update of shape {update.shape} must have the rank of the "
            f"operand of shape {x.shape} and fit inside it"
        )
    return ShapedArray(x.shape, dtype, x.weak_type and update.weak_type)


@dynamic_update_slice_p.def_lowering
def _dynamic_update_slice_lowering(ctx: LoweringContext, x: Any, update: Any, *start_indices):
    return ctx.builder.op(
        "stablehlo.dynamic_update_slice",
        [x, update, *_lower_start_indices(ctx, start_indices)],
        ctx.aval_out.strip_weak_type(),
    )


@dynamic_update_slice_p.def_jvp(symbolic_zeros=True)
def _dynamic_update_slice_jvp(primals, tangents):
    x, update, *start_indices = primals
    x_dot, update_dot = tangents[:2]
    out = dynamic_update_slice_p.bind1(x, update, *start_indices)
    if type(x_dot) is Zero and type(update_dot) is Zero:
        return out, None
    return out, dynamic_update_slice_p.bind1(
        instantiate(x_dot), instantiate(update_dot), *start_indices
    )


@dynamic_update_slice_p.def_transpose
def _dynamic_update_slice_transpose(ct, x, update, *start_indices):
    update_aval = update.aval if is_undefined_primal(update) else get_aval(update)
    ct_x = ct_update = None
    if is_undefined_primal(x):
        zeros = _zeros(update_aval.shape, get_aval(ct).dtype)
        ct_x = host_vjp.bind1(dynamic_update_slice_p, ct, zeros, *start_indices)
    if is_undefined_primal(update):
        ct_update = host_vjp.bind1(
            dynamic_slice_p, ct, *start_indices, slice_sizes=update_aval.shape
        )
    return [ct_x, ct_update] + [None] * len(start_indices)


@dynamic_update_slice_p.def_batching
def _dynamic_update_slice_batching(vals, dims):
    x, update, *starts = vals
    x_bdim, update_bdim, *start_dims = dims
    axis_size = next(
        get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not NOT_MAPPED
    )
    x = moveaxis_to(x, x_bdim, 0, axis_size)
    update = moveaxis_to(update, update_bdim, 0, axis_size)
    if all(d is NOT_MAPPED for d in start_dims):
        zero = full((), 0, get_aval(starts[0]).dtype if starts else np.int32)
        return dynamic_update_slice_p.bind1(x, update, zero, *starts), 0
    # Per-example starts: shift the update into place along each axis with a barrel shifter
    # and select it into `x` through the product of the per-axis window masks (see
    # `_batched_placement`); exact for every dtype, O(log n) stages per axis.
    shape = get_aval(x).shape
    mask = None
    for axis, start in enumerate(starts, 1):
        if get_aval(update).shape[axis] == shape[axis]:
            continue  # the start clamps to 0 and the window is the whole axis
        update, window = _batched_placement(update, axis, start, shape[axis])
        mask = window if mask is None else arithmetic.mul(mask, window)
    if mask is None:
        return update, 0
    return select_n(broadcast_to(mask, shape), x, update), 0


@dynamic_update_slice_p.def_host
def _dynamic_update_slice_host(x: np.ndarray, update: np.ndarray, *starts: np.ndarray):
    out = x.copy()
    out[_host_window(x.shape, starts, update.shape)] = update
    return out


# --- one-axis helpers (JAX's *_in_dim wrappers) ----------------------------------------------


def _one_axis(name: str, x: ArrayLike, axis: int) -> int:
    """`axis` of `x` made non-negative, or an AxisError naming `name`."""
    shape = get_aval(x).shape
    (axis,) = normalize_axes(x, (int(axis),))
    check_axes(name, (axis,), shape)
    return axis


def _wrapped_start(index: ArrayLike, size: int, allow_negative: bool) -> Any:
    """A start index with a negative value counted from the end of an axis of `size`, as JAX's
    wrappers do (mjcore's `dynamic_slice` itself clamps negative starts to 0)."""
    if isinstance(index, int | np.integer) and not isinstance(index, bool | np.bool_):
        return int(index) + size if allow_negative and index < 0 else int(index)
    aval = get_aval(index)
    if aval.ndim != 0 or aval.dtype.kind not in "iu":
        raise TypeError(f"start index must be an integer scalar, got {aval.str_short()}")
    if not allow_negative or aval.dtype.kind == "u":
        return index
    dtype = aval.dtype
    if size > np.iinfo(dtype).max:
        index, dtype = convert_element_type(index, np.int64), np.dtype(np.int64)
    wrapped = arithmetic.add(index, full((), size, dtype))
    return select_n(lt(index, full((), 0, dtype)), index, wrapped)


def _starts_in_dim(start: Any, ndim: int, axis: int) -> list[Any]:
    """Start indices that are `start` on `axis` and zero (of its dtype) elsewhere."""
    zero = 0 if isinstance(start, int) else full((), 0, get_aval(start).dtype)
    return [start if i == axis else zero for i in range(ndim)]


def index_in_dim(x: ArrayLike, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """`x[..., index, ...]` on `axis` for a static integer `index` (negative counts from the
    end); keeps the axis with size 1 when `keepdims`.

    Raises:
      IndexError: if `index` is out of bounds for the axis.
    """
    axis = _one_axis("index_in_dim", x, axis)
    size = get_aval(x).shape[axis]
    index = int(index)
    wrapped = index + size if index < 0 else index
    if not 0 <= wrapped < size:
        raise IndexError(
            f"index_in_dim: index {index} is out of bounds for axis {axis} with size {size}"
        )
    out = slice_in_dim(x, wrapped, wrapped + 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_slice_in_dim(
    x: ArrayLike,
    start_index: ArrayLike,
    slice_size: int,
    axis: int = 0,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """`x[..., start:start + slice_size, ...]` on `axis` for a traced `start_index`.

    A negative start counts from the end (unless `allow_negative_indices` is False); then
    the start is clamped so the slice fits, as in `dynamic_slice`.
    """
    axis = _one_axis("dynamic_slice_in_dim", x, axis)
    shape = get_aval(x).shape
    start = _wrapped_start(start_index, shape[axis], allow_negative_indices)
    sizes = list(shape)
    sizes[axis] = int(slice_size)
    return dynamic_slice(x, _starts_in_dim(start, len(shape), axis), sizes)


def dynamic_index_in_dim(
    x: ArrayLike,
    index: ArrayLike,
    axis: int = 0,
    keepdims: bool = True,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """`x[..., index, ...]` on `axis` for a traced `index` (negative counts from the end, then
    clamped into range); keeps the axis with size 1 when `keepdims`."""
    axis = _one_axis("dynamic_index_in_dim", x, axis)
    out = dynamic_slice_in_dim(x, index, 1, axis, allow_negative_indices=allow_negative_indices)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice_in_dim(
    x: ArrayLike,
    update: ArrayLike,
    start_index: ArrayLike,
    axis: int,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """`x` with `update` written at the traced `start_index` of `axis` (0 on other axes).

    A negative start counts from the end (unless `allow_negative_indices` is False); then
    the start is clamped so the update fits, as in `dynamic_update_slice`.
    """
    axis = _one_axis("dynamic_update_slice_in_dim", x, axis)
    shape = get_aval(x).shape
    start = _wrapped_start(start_index, shape[axis], allow_negative_indices)
    return dynamic_update_slice(x, update, _starts_in_dim(start, len(shape), axis))


def dynamic_update_index_in_dim(
    x: ArrayLike,
    update: ArrayLike,
    index: ArrayLike,
    axis: int,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """`x` with the slice at the traced `index` of `axis` replaced by `update`, which has
    either the rank of `x` (size 1 on `axis`) or one axis less.

    Raises:
      ValueError: if the rank of `update` is neither that of `x` nor one less.
    """
    axis = _one_axis("dynamic_update_index_in_dim", x, axis)
    x_aval, update_aval = get_aval(x), get_aval(update)
    if update_aval.ndim == x_aval.ndim - 1:
        update = expand_dims(update, (axis,))
    elif update_aval.ndim != x_aval.ndim:
        raise ValueError(
            f"dynamic_update_index_in_dim: update of shape {update_aval.shape} must have the "
            f"rank of the operand of shape {x_aval.shape} or one less"
        )
    return dynamic_update_slice_in_dim(
        x, update, index, axis, allow_negative_indices=allow_negative_indices
    )


__all__ = [
    "dynamic_index_in_dim",
    "dynamic_slice",
    "dynamic_slice_in_dim",
    "dynamic_update_index_in_dim",
    "dynamic_update_slice",
    "dynamic_update_slice_in_dim",
    "index_in_dim",
    "slice",
    "slice_in_dim",
]
