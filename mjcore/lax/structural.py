"""Structural primitives: squeeze, iota, concatenate, pad and rev. They move or create elements
without arithmetic, so all but iota are linear in their array operands."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from mjcore import dtypes
from mjcore.ad import is_undefined_primal, linear_jvp
from mjcore.backend.hlo import i64_array
from mjcore.backend.lowering import LoweringContext
from mjcore.batching import NOT_MAPPED, move_bdim, moveaxis_to
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.lax import arithmetic, host, host_vjp
from mjcore.lax.base import broadcast_in_dim, full, reshape, reshape_cotangent, select_n
from mjcore.lax.families import check_axes as check_axes
from mjcore.lax.families import check_same_dtypes
from mjcore.lax.families import normalize_axes as normalize_axes

ArrayLike = Any
Shape = tuple[int, ...]


def _axes_after_batching(axes: tuple[int, ...], bdim: int) -> tuple[int, ...]:
    """The axes of a batched value (batch axis at `bdim`) that correspond to `axes`."""
    return tuple(a + (a >= bdim) for a in axes)


# --- squeeze --------------------------------------------------------------------------------

squeeze_p = Primitive("squeeze")


def squeeze(x: ArrayLike, dimensions: Sequence[int]) -> Any:
    """Remove the size-1 axes `dimensions` of `x`."""
    dimensions = tuple(sorted(normalize_axes(x, dimensions)))
    if not dimensions:
        return x
    return squeeze_p.bind1(x, dimensions=dimensions)


@squeeze_p.def_abstract_eval
def _squeeze_abstract_eval(x: ShapedArray, *, dimensions: tuple[int, ...]) -> ShapedArray:
    check_axes("squeeze", dimensions, x.shape)
    if any(x.shape[d] != 1 for d in dimensions):
        raise ValueError(
            f"squeeze: cannot remove dimensions {dimensions} of shape {x.shape}; only axes of "
            "size 1 can be squeezed"
        )
    shape = tuple(d for i, d in enumerate(x.shape) if i not in dimensions)
    return ShapedArray(shape, x.dtype, x.weak_type)


@squeeze_p.def_lowering
def _squeeze_lowering(ctx: LoweringContext, x: Any, *, dimensions: tuple[int, ...]) -> Any:
    return ctx.builder.op("stablehlo.reshape", [x], ctx.aval_out.strip_weak_type())


linear_jvp(squeeze_p)
squeeze_p.def_transpose(lambda ct, x, *, dimensions: [reshape_cotangent(ct, x.aval.shape)])
squeeze_p.def_host(lambda x, *, dimensions: x.reshape(_squeezed(x.shape, dimensions)))


def _squeezed(shape: Shape, dimensions: tuple[int, ...]) -> Shape:
    return tuple(d for i, d in enumerate(shape) if i not in dimensions)


@squeeze_p.def_batching
def _squeeze_batching(vals, dims, *, dimensions):
    (x,), (bdim,) = vals, dims
    out_bdim = bdim - sum(d < bdim for d in dimensions)
    return squeeze_p.bind1(x, dimensions=_axes_after_batching(dimensions, bdim)), out_bdim


# --- iota -----------------------------------------------------------------------------------

iota_p = Primitive("iota")


def iota(dtype: Any, size: int) -> Any:
    """`[0, 1, ..., size - 1]` as `dtype`."""
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int) -> Any:
    """An array of `shape` whose elements are their index along `dimension`."""
    dtype = dtypes.canonicalize_dtype(dtype, "iota")
    shape = tuple(int(d) for d in shape)
    return iota_p.bind1(dtype=dtype, shape=shape, dimension=int(dimension))


@iota_p.def_abstract_eval
def _iota_abstract_eval(*, dtype: np.dtype, shape: Shape, dimension: int) -> ShapedArray:
    if dtypes.kind(dtype) not in "iufc":
        raise TypeError(f"iota: dtype must be numeric, got {dtype.name}")
    if any(d < 0 for d in shape):
        raise ValueError(f"iota: negative dimensions are not allowed, got shape {shape}")
    if not 0 <= dimension < len(shape):
        raise np.exceptions.AxisError(f"iota: dimension {dimension} out of range for shape {shape}")
    return ShapedArray(shape, dtype)


@iota_p.def_lowering
def _iota_lowering(ctx: LoweringContext, *, dtype, shape, dimension):
    return ctx.builder.op("stablehlo.iota", [], ctx.aval_out, f"iota_dimension = {dimension} : i64")


@iota_p.def_host
def _iota_host(*, dtype: np.dtype, shape: Shape, dimension: int) -> np.ndarray:
    ramp = np.arange(shape[dimension], dtype=dtype)
    return np.broadcast_to(
        ramp.reshape([-1 if i == dimension else 1 for i in range(len(shape))]), shape
    )


@iota_p.def_jvp
def _iota_jvp(primals, tangents, **params):
    return iota_p.bind1(**params), None


@iota_p.def_batching
def _iota_batching(vals, dims, **params):
    # Unreachable through vmap (no operand can be batched); kept so the rule set is complete.
    return iota_p.bind1(**params), NOT_MAPPED


# --- concatenate ----------------------------------------------------------------------------

concatenate_p = Primitive("concatenate")


def concatenate(operands: Sequence[ArrayLike], dimension: int) -> Any:
    """Join `operands` along `dimension`; the other dimensions must agree."""
    operands = tuple(operands)
    if not operands:
        raise ValueError("concatenate: needs at least one operand")
    (dimension,) = normalize_axes(operands[0], (dimension,))
    return concatenate_p.bind1(*operands, dimension=dimension)


@concatenate_p.def_abstract_eval
def _concatenate_abstract_eval(*operands: ShapedArray, dimension: int) -> ShapedArray:
    if not operands:
        raise ValueError("concatenate: needs at least one operand")
    dtype = check_same_dtypes("concatenate", operands)
    first = operands[0].shape
    if not 0 <= dimension < len(first):
        raise np.exceptions.AxisError(
            f"concatenate: dimension {dimension} out of range for operands of shape {first}"
        )
    for aval in operands[1:]:
        s = aval.shape
        if len(s) != len(first) or s[:dimension] + s[dimension + 1 :] != (
            first[:dimension] + first[dimension + 1 :]
        ):
            raise ValueError(
                f"concatenate: operands must agree except along dimension {dimension}, got "
                "shapes " + ", ".join(str(a.shape) for a in operands)
            )
    size = sum(a.shape[dimension] for a in operands)
    shape = (*first[:dimension], size, *first[dimension + 1 :])
    return ShapedArray(shape, dtype, all(a.weak_type for a in operands))


@concatenate_p.def_lowering
def _concatenate_lowering(ctx: LoweringContext, *operands: Any, dimension: int) -> Any:
    return ctx.builder.op(
        "stablehlo.concatenate",
        list(operands),
        ctx.aval_out.strip_weak_type(),
        f"dimension = {dimension} : i64",
    )


linear_jvp(concatenate_p)
concatenate_p.def_host(lambda *xs, dimension: np.concatenate(xs, axis=dimension))


@concatenate_p.def_transpose
def _concatenate_transpose(ct, *operands, dimension):
    value = host_vjp.host_value(ct)
    if value is not None:  # slice's host rule (a view) for each part, without a bind
        return _concatenate_transpose_host(ct.aval, value, operands, dimension)
    from mjcore.lax.slicing import slice_in_dim  # (a cycle: slicing imports this module)

    cts, start = [], 0
    for x in operands:
        linear = is_undefined_primal(x)
        size = (x.aval if linear else get_aval(x)).shape[dimension]
        cts.append(slice_in_dim(ct, start, start + size, dimension) if linear else None)
        start += size
    return cts


def _concatenate_transpose_host(
    aval: ShapedArray, value: np.ndarray, operands: Sequence[Any], dimension: int
) -> list[Any]:
    lead = (slice(None),) * dimension
    shape = list(aval.shape)
    cts: list[Any] = []
    start = 0
    for x in operands:
        linear = is_undefined_primal(x)
        size = (x.aval if linear else get_aval(x)).shape[dimension]
        if linear:
            shape[dimension] = size
            part = value[(*lead, slice(start, start + size))]
            cts.append(host_vjp.wrap(part, tuple(shape), aval))
        else:
            cts.append(None)
        start += size
    return cts


@concatenate_p.def_batching
def _concatenate_batching(vals, dims, *, dimension):
    axis_size = next(
        get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not NOT_MAPPED
    )
    moved = [moveaxis_to(v, d, 0, axis_size) for v, d in zip(vals, dims, strict=True)]
    return concatenate_p.bind1(*moved, dimension=dimension + 1), 0


# --- pad ------------------------------------------------------------------------------------

pad_p = Primitive("pad")


def pad(
    x: ArrayLike, padding_value: ArrayLike, padding_config: Sequence[tuple[int, int, int]]
) -> Any:
    """Pad `x` with the scalar `padding_value`, XLA-style.

    `padding_config` holds one `(low, high, interior)` triple per axis: `interior` values go
    between neighbouring elements, then `low`/`high` at the ends; negative `low`/`high` crop.
    """
    config = tuple((int(lo), int(hi), int(interior)) for lo, hi, interior in padding_config)
    if isinstance(padding_value, bool | int | float | complex):
        padding_value = full((), padding_value, get_aval(x).dtype)
    return pad_p.bind1(x, padding_value, padding_config=config)


def _padded_size(size: int, lo: int, hi: int, interior: int) -> int:
    return lo + hi + size + max(size - 1, 0) * interior


@pad_p.def_abstract_eval
def _pad_abstract_eval(
    x: ShapedArray, padding_value: ShapedArray, *, padding_config: tuple[tuple[int, int, int], ...]
) -> ShapedArray:
    dtype = check_same_dtypes("pad", (x, padding_value))
    if padding_value.ndim != 0:
        raise TypeError(f"pad: padding_value must be a scalar, got shape {padding_value.shape}")
    if len(padding_config) != x.ndim:
        raise ValueError(
            f"pad: padding_config {padding_config} needs one (low, high, interior) triple per "
            f"axis of the operand of shape {x.shape}"
        )
    if any(interior < 0 for _, _, interior in padding_config):
        raise ValueError(f"pad: interior padding must be non-negative, got {padding_config}")
    shape = tuple(_padded_size(d, *c) for d, c in zip(x.shape, padding_config, strict=True))
    if any(d < 0 for d in shape):
        raise ValueError(
            f"pad: padding_config {padding_config} crops more than the operand of shape "
            f"{x.shape} holds (result shape {shape})"
        )
    return ShapedArray(shape, dtype, x.weak_type and padding_value.weak_type)


@pad_p.def_lowering
def _pad_lowering(ctx: LoweringContext, x: Any, padding_value: Any, *, padding_config) -> Any:
    lo, hi, interior = zip(*padding_config, strict=True) if padding_config else ((), (), ())
    return ctx.builder.op(
        "stablehlo.pad",
        [x, padding_value],
        ctx.aval_out.strip_weak_type(),
        f"edge_padding_low = {i64_array(lo)}, edge_padding_high = {i64_array(hi)}, "
        f"interior_padding = {i64_array(interior)}",
    )


linear_jvp(pad_p)
pad_p.def_host(host.pad)


@pad_p.def_transpose
def _pad_transpose(ct, x, padding_value, *, padding_config):
    from mjcore.lax import slicing
    from mjcore.lax.reductions import reduce_sum

    # Undo the edge padding (re-growing what negative padding cropped, with zeros), then take
    # every (interior + 1)-th element: what remains are the operand's positions.
    aval = get_aval(ct)
    unpad = tuple((-lo, -hi, 0) for lo, hi, _ in padding_config)
    # (the binds by `host_vjp.bind1`: without one where eager dispatch runs the host rules)
    unpadded = host_vjp.bind1(pad_p, ct, full((), 0, aval.dtype), padding_config=unpad)
    shape = get_aval(unpadded).shape
    ct_x = host_vjp.bind1(
        slicing.slice_p,
        unpadded,
        start_indices=(0,) * len(shape),
        limit_indices=tuple(int(n) for n in shape),
        strides=tuple(int(i) + 1 for _, _, i in padding_config),
    )
    ct_value = None
    if is_undefined_primal(padding_value):
        axes = tuple(range(aval.ndim))
        ct_value = arithmetic.sub(reduce_sum(ct, axes), reduce_sum(ct_x, axes))
    return [ct_x if is_undefined_primal(x) else None, ct_value]


@pad_p.def_batching
def _pad_batching(vals, dims, *, padding_config):
    (x, padding_value), (x_bdim, pv_bdim) = vals, dims
    config = ((0, 0, 0), *padding_config)
    if pv_bdim is NOT_MAPPED:
        return pad_p.bind1(move_bdim(x, x_bdim, 0), padding_value, padding_config=config), 0
    # One padding value per example: pad with any value, then select the padding positions
    # (found by padding a mask the same way) from the broadcast padding values.
    axis_size = get_aval(padding_value).shape[0]
    x = moveaxis_to(x, x_bdim, 0, axis_size)
    aval = get_aval(x)
    padded = pad_p.bind1(x, full((), 0, aval.dtype), padding_config=config)
    ones = full(aval.shape, True, np.dtype(bool))
    mask = pad_p.bind1(ones, full((), False, np.dtype(bool)), padding_config=config)
    shape = get_aval(padded).shape
    return select_n(mask, broadcast_in_dim(padding_value, shape, (0,)), padded), 0


# --- rev ------------------------------------------------------------------------------------

rev_p = Primitive("rev")


def rev(x: ArrayLike, dimensions: Sequence[int]) -> Any:
    """Reverse `x` along each axis in `dimensions`."""
    dimensions = tuple(sorted(normalize_axes(x, dimensions)))
    if not dimensions:
        return x
    return rev_p.bind1(x, dimensions=dimensions)


@rev_p.def_abstract_eval
def _rev_abstract_eval(x: ShapedArray, *, dimensions: tuple[int, ...]) -> ShapedArray:
    check_axes("rev", dimensions, x.shape)
    return x


@rev_p.def_lowering
def _rev_lowering(ctx: LoweringContext, x: Any, *, dimensions: tuple[int, ...]) -> Any:
    return ctx.builder.op(
        "stablehlo.reverse",
        [x],
        ctx.aval_out.strip_weak_type(),
        f"dimensions = {i64_array(dimensions)}",
    )


linear_jvp(rev_p)


@rev_p.def_transpose
def _rev_transpose(ct, x, *, dimensions):
    value = host_vjp.host_value(ct)
    if value is not None:  # rev's host rule (a view)
        return [host_vjp.wrap(np.flip(value, dimensions), ct.aval.shape, ct.aval)]
    return [rev(ct, dimensions)]


rev_p.def_host(lambda x, *, dimensions: np.flip(x, dimensions))  # a view


@rev_p.def_batching
def _rev_batching(vals, dims, *, dimensions):
    (x,), (bdim,) = vals, dims
    return rev_p.bind1(x, dimensions=_axes_after_batching(dimensions, bdim)), bdim


# --- roll -----------------------------------------------------------------------------------

roll_p = Primitive("roll")


def roll(x: ArrayLike, shift: int, axis: int) -> Any:
    """`x` rolled by the static `shift` along `axis` (`numpy.roll` along one axis).

    One primitive, not two slices and a concatenate: eager code runs one NumPy call, and its
    transpose (a roll back) is one more, where the slices' transposes pad and add.
    """
    shape = get_aval(x).shape
    (axis,) = normalize_axes(x, (axis,))
    if not 0 <= axis < len(shape):
        check_axes("roll", (axis,), shape)  # raises AxisError
    n = shape[axis]
    s = operator.index(shift) % n if n else 0
    if s == 0:
        return x
    return roll_p.bind1(x, shift=s, axis=axis)


@roll_p.def_abstract_eval
def _roll_abstract_eval(x: ShapedArray, *, shift: int, axis: int) -> ShapedArray:
    check_axes("roll", (axis,), x.shape)
    if not 0 < shift < x.shape[axis]:
        raise ValueError(f"roll: shift {shift} must be in (0, {x.shape[axis]}) for axis {axis}")
    return x


@roll_p.def_lowering
def _roll_lowering(ctx: LoweringContext, x: Any, *, shift: int, axis: int) -> Any:
    # The last `shift` elements, then the rest: two slices and a concatenate.
    b = ctx.builder
    aval = ctx.aval_out.strip_weak_type()
    n = aval.shape[axis]
    parts = []
    for lo, hi in ((n - shift, n), (0, n - shift)):
        starts = [0] * aval.ndim
        limits = list(aval.shape)
        starts[axis], limits[axis] = lo, hi
        shape = list(aval.shape)
        shape[axis] = hi - lo
        parts.append(
            b.op(
                "stablehlo.slice",
                [x],
                ShapedArray(tuple(shape), aval.dtype),
                f"start_indices = {i64_array(starts)}, limit_indices = {i64_array(limits)}, "
                f"strides = {i64_array([1] * aval.ndim)}",
            )
        )
    return b.op("stablehlo.concatenate", parts, aval, f"dimension = {axis} : i64")


linear_jvp(roll_p)


@roll_p.def_transpose
def _roll_transpose(ct, x, *, shift, axis):
    back = x.aval.shape[axis] - shift  # a roll back
    value = host_vjp.host_value(ct)
    if value is not None and host_vjp.within(roll_p, value.dtype, value.size):
        return [host_vjp.wrap(_roll_host(value, shift=back, axis=axis), value.shape, ct.aval)]
    return [roll_p.bind1(ct, shift=back, axis=axis)]


@roll_p.def_host
def _roll_host(x: np.ndarray, *, shift: int, axis: int) -> np.ndarray:
    # numpy.roll's result, without its ~10 µs of argument handling.
    n = x.shape[axis]
    lead = (slice(None),) * axis
    return np.concatenate((x[(*lead, slice(n - shift, n))], x[(*lead, slice(0, n - shift))]), axis)


@roll_p.def_batching
def _roll_batching(vals, dims, *, shift, axis):
    (x,), (bdim,) = vals, dims
    (axis,) = _axes_after_batching((axis,), bdim)
    return roll_p.bind1(x, shift=shift, axis=axis), bdim


# --- split / tile (helpers over slice and broadcast_in_dim) ---------------------------------


def split(operand: ArrayLike, sizes: Sequence[int], axis: int = 0) -> list[Any]:
    """`operand` cut along `axis` into consecutive pieces of `sizes` (which must sum to the
    axis length)."""
    from mjcore.lax.slicing import slice_in_dim

    shape = get_aval(operand).shape
    if not -len(shape) <= axis < len(shape):
        raise ValueError(f"split: axis {axis} is out of bounds for an operand of rank {len(shape)}")
    axis %= len(shape)
    sizes = tuple(int(s) for s in sizes)
    if any(s < 0 for s in sizes) or sum(sizes) != shape[axis]:
        raise ValueError(
            f"split: sizes must be non-negative and sum to the dimension size {shape[axis]} "
            f"of axis {axis}, got {sizes}"
        )
    starts = np.cumsum((0, *sizes))
    return [
        slice_in_dim(operand, int(a), int(b), axis)
        for a, b in zip(starts[:-1], starts[1:], strict=True)
    ]


def tile(operand: ArrayLike, reps: Sequence[int]) -> Any:
    """`operand` repeated `reps[i]` times along each dimension i (one rep per dimension)."""
    shape = get_aval(operand).shape
    reps = tuple(int(r) for r in reps)
    if len(reps) != len(shape):
        raise ValueError(
            f"tile: needs one repetition count per dimension; operand has rank {len(shape)} "
            f"but reps is {reps}"
        )
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repetition counts must be non-negative, got {reps}")
    interleaved = tuple(d for r, s in zip(reps, shape, strict=True) for d in (r, s))
    expanded = broadcast_in_dim(operand, interleaved, tuple(range(1, 2 * len(shape), 2)))
    return reshape(expanded, tuple(r * s for r, s in zip(reps, shape, strict=True)))


__all__ = [
    "broadcasted_iota",
    "concatenate",
    "iota",
    "pad",
    "rev",
    "split",
    "squeeze",
    "tile",
]
