"""The few primitives the interpreters themselves need: converting, broadcasting, reshaping,
transposing, selecting and adding tangents. (Autodidax Part 1's "primitives used by rules".)"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from mjcore import dtypes
from mjcore.ad_util import (
    LINEAR,
    NOT_MAPPED,
    UndefinedPrimal,
    Zero,
    is_undefined_primal,
    linear_jvp,
)
from mjcore.array import Array, wrap_host
from mjcore.backend.hlo import i64_array
from mjcore.backend.lowering import LoweringContext
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.dispatch import scalar_array
from mjcore.lax import host, host_vjp
from mjcore.lax.families import (
    bind_reduction,
    elementwise,
    kept_axes,
    monoid_reduction,
    scalar_constant,
)

ArrayLike = Any
Shape = tuple[int, ...]


def _check_shape(name: str, shape: Sequence[int]) -> Shape:
    try:
        out = tuple(int(d) for d in shape)
    except TypeError as err:
        raise TypeError(f"{name}: shape must be a sequence of integers, got {shape!r}") from err
    if any(d < 0 for d in out):
        raise ValueError(f"{name}: negative dimensions are not allowed, got shape {out}")
    return out


# --- full (a helper, not a primitive) -------------------------------------------------------


def full(shape: Sequence[int], fill_value: Any, dtype: Any, weak_type: bool = False) -> Any:
    """An array of `shape` filled with a Python scalar."""
    dtype = np.dtype(dtype)
    scalar = scalar_array(fill_value, dtype, weak_type)
    shape = tuple(shape)
    if shape == ():
        return scalar
    return broadcast_in_dim(scalar, shape, ())


def zeros_like(x: ArrayLike) -> Any:
    aval = get_aval(x)
    return full(aval.shape, 0, aval.dtype)


# --- convert_element_type -------------------------------------------------------------------

convert_element_type_p = Primitive("convert_element_type")


def convert_element_type(x: ArrayLike, new_dtype: Any, weak_type: bool = False) -> Any:
    """Cast `x` to `new_dtype` (NumPy's `astype` semantics on the device)."""
    new_dtype = dtypes.canonicalize_dtype(new_dtype, "convert_element_type")
    aval = get_aval(x)
    if aval.dtype == new_dtype and aval.weak_type == weak_type:
        return x
    return convert_element_type_p.bind1(x, new_dtype=new_dtype, weak_type=bool(weak_type))


@convert_element_type_p.def_abstract_eval
def _convert_element_type_abstract_eval(
    x: ShapedArray, *, new_dtype: np.dtype, weak_type: bool
) -> ShapedArray:
    return ShapedArray(x.shape, new_dtype, weak_type)


convert_element_type_p.def_host(host.convert_element_type)


@convert_element_type_p.def_lowering
def _convert_element_type_lowering(ctx: LoweringContext, x: Any, *, new_dtype, weak_type):
    b = ctx.builder
    out = ctx.aval_out.strip_weak_type()
    src = x.aval.dtype
    if src == new_dtype:
        return x
    if new_dtype.kind == "b":
        # Any -> bool is `x != 0`, as in NumPy.
        zero = scalar_constant(b, 0, src, x.aval.shape)
        ctype = _compare_type(src)
        return b.op(
            "stablehlo.compare",
            [x, zero],
            out,
            f"comparison_direction = #stablehlo<comparison_direction NE>, "
            f"compare_type = #stablehlo<comparison_type {ctype}>",
        )
    if src.kind == "c" and new_dtype.kind != "c":
        # NumPy discards the imaginary part (with a ComplexWarning).
        x = b.op("stablehlo.real", [x], x.aval.update(dtype=np.dtype(f"f{src.itemsize // 2}")))
        if x.aval.dtype == new_dtype:
            return x
    if src.kind == "b":
        # Go through a small integer so bool -> float is 0/1.
        x = b.op("stablehlo.convert", [x], x.aval.update(dtype=np.dtype("uint8")))
    return b.op("stablehlo.convert", [x], out)


def _compare_type(dtype: np.dtype) -> str:
    return {"b": "UNSIGNED", "u": "UNSIGNED", "i": "SIGNED", "f": "FLOAT", "c": "FLOAT"}[
        dtypes.kind(dtype)
    ]


@convert_element_type_p.def_jvp
def _convert_element_type_jvp(primals, tangents, *, new_dtype, weak_type):
    (x,), (x_dot,) = primals, tangents
    y = convert_element_type_p.bind1(x, new_dtype=new_dtype, weak_type=weak_type)
    if not (dtypes.is_inexact(new_dtype) and dtypes.is_inexact(get_aval(x).dtype)):
        return y, None
    return y, convert_element_type_p.bind1(x_dot, new_dtype=new_dtype, weak_type=False)


@convert_element_type_p.def_batching
def _convert_element_type_batching(vals, dims, **params):
    return convert_element_type_p.bind1(*vals, **params), dims[0]


# --- broadcast_in_dim -----------------------------------------------------------------------

broadcast_in_dim_p = Primitive("broadcast_in_dim")


def broadcast_in_dim(
    x: ArrayLike, shape: Sequence[int], broadcast_dimensions: Sequence[int]
) -> Any:
    """Broadcast `x` into `shape`, operand dim i going to output dim broadcast_dimensions[i]."""
    shape = _check_shape("broadcast_in_dim", shape)
    broadcast_dimensions = tuple(int(d) for d in broadcast_dimensions)
    aval = get_aval(x)
    if aval.shape == shape and broadcast_dimensions == tuple(range(len(shape))):
        return x
    return broadcast_in_dim_p.bind1(x, shape=shape, broadcast_dimensions=broadcast_dimensions)


@broadcast_in_dim_p.def_abstract_eval
def _broadcast_in_dim_abstract_eval(x: ShapedArray, *, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != x.ndim:
        raise ValueError(
            f"broadcast_in_dim: broadcast_dimensions {broadcast_dimensions} must have one entry "
            f"per operand dimension of shape {x.shape}"
        )
    for i, d in enumerate(broadcast_dimensions):
        if not 0 <= d < len(shape) or x.shape[i] not in (1, shape[d]):
            raise ValueError(
                f"broadcast_in_dim: cannot broadcast operand of shape {x.shape} to {shape} "
                f"with broadcast_dimensions {broadcast_dimensions}"
            )
    if list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        raise ValueError(
            f"broadcast_in_dim: broadcast_dimensions must be strictly increasing, got "
            f"{broadcast_dimensions}"
        )
    return ShapedArray(shape, x.dtype, x.weak_type)


@broadcast_in_dim_p.def_lowering
def _broadcast_in_dim_lowering(ctx, x, *, shape, broadcast_dimensions):
    return ctx.builder.op(
        "stablehlo.broadcast_in_dim",
        [x],
        ctx.aval_out.strip_weak_type(),
        f"broadcast_dimensions = {i64_array(broadcast_dimensions)}",
    )


linear_jvp(broadcast_in_dim_p)


@broadcast_in_dim_p.def_host
def _broadcast_in_dim_host(x: np.ndarray, *, shape, broadcast_dimensions) -> np.ndarray:
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return np.broadcast_to(x.reshape(expanded), shape)  # a read-only view


@broadcast_in_dim_p.def_batching
def _broadcast_in_dim_batching(vals, dims, *, shape, broadcast_dimensions):
    (x,), (bdim,) = vals, dims
    x = move_bdim(x, bdim, 0)
    axis_size = get_aval(x).shape[0]
    new_shape = (axis_size, *shape)
    new_dims = (0, *(d + 1 for d in broadcast_dimensions))
    return broadcast_in_dim_p.bind1(x, shape=new_shape, broadcast_dimensions=new_dims), 0


# --- reduce_sum (beside broadcast_in_dim: each is the other's transpose) ---------------------

reduce_sum_p = monoid_reduction(
    "reduce_sum", "iufc", lambda dt: "stablehlo.add", lambda dt: 0, np.add
)


def reduce_sum(x: ArrayLike, axes: int | Sequence[int]) -> Any:
    """Sum of `x` over `axes`."""
    return bind_reduction(reduce_sum_p, x, axes)


linear_jvp(reduce_sum_p)


@reduce_sum_p.def_transpose
def _reduce_sum_transpose(ct, x, *, axes):
    shape = x.aval.shape
    kept = kept_axes(len(shape), axes)
    value = host_vjp.host_value(ct)
    if value is not None:  # broadcast_in_dim's host rule's values, at every size
        return [host_vjp.wrap(_broadcast_values(value, shape, kept), shape, ct.aval)]
    return [broadcast_in_dim(ct, shape, kept)]


def _broadcast_values(x: np.ndarray, shape: Shape, broadcast_dimensions: Shape) -> np.ndarray:
    """The values of `_broadcast_in_dim_host(x, ...)`: small results copied into a new array
    (~0.3 µs), larger ones its read-only view (np.broadcast_to's Python costs ~2 µs)."""
    if math.prod(shape) > _BROADCAST_COPY_LIMIT:
        return _broadcast_in_dim_host(x, shape=shape, broadcast_dimensions=broadcast_dimensions)
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    out = np.empty(shape, x.dtype)
    out[...] = x.reshape(expanded)
    return out


_BROADCAST_COPY_LIMIT = 1 << 12


# --- reshape --------------------------------------------------------------------------------

reshape_p = Primitive("reshape")


def reshape(x: ArrayLike, new_sizes: Sequence[int]) -> Any:
    """Row-major reshape to `new_sizes` (no -1 here; mjnp resolves it)."""
    new_sizes = _check_shape("reshape", new_sizes)
    if get_aval(x).shape == new_sizes:
        return x
    return reshape_p.bind1(x, new_sizes=new_sizes)


@reshape_p.def_abstract_eval
def _reshape_abstract_eval(x: ShapedArray, *, new_sizes):
    size = 1
    for d in new_sizes:
        size *= d
    if size != x.size:
        raise ValueError(f"cannot reshape array of shape {x.shape} into shape {new_sizes}")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


@reshape_p.def_lowering
def _reshape_lowering(ctx, x, *, new_sizes):
    return ctx.builder.op("stablehlo.reshape", [x], ctx.aval_out.strip_weak_type())


linear_jvp(reshape_p)
reshape_p.def_host(lambda x, *, new_sizes: x.reshape(new_sizes))


@reshape_p.def_batching
def _reshape_batching(vals, dims, *, new_sizes):
    (x,), (bdim,) = vals, dims
    x = move_bdim(x, bdim, 0)
    axis_size = get_aval(x).shape[0]
    return reshape_p.bind1(x, new_sizes=(axis_size, *new_sizes)), 0


# --- expand_dims ----------------------------------------------------------------------------

expand_dims_p = Primitive("expand_dims")


def expand_dims(x: ArrayLike, dimensions: Sequence[int]) -> Any:
    """Insert size-1 axes at the (output) positions `dimensions`."""
    dimensions = tuple(sorted(int(d) for d in dimensions))
    if not dimensions:
        return x
    return expand_dims_p.bind1(x, dimensions=dimensions)


@expand_dims_p.def_abstract_eval
def _expand_dims_abstract_eval(x: ShapedArray, *, dimensions):
    ndim = x.ndim + len(dimensions)
    if len(set(dimensions)) != len(dimensions) or any(not 0 <= d < ndim for d in dimensions):
        raise ValueError(f"expand_dims: invalid dimensions {dimensions} for shape {x.shape}")
    shape = list(x.shape)
    for d in dimensions:
        shape.insert(d, 1)
    return ShapedArray(shape, x.dtype, x.weak_type)


@expand_dims_p.def_lowering
def _expand_dims_lowering(ctx, x, *, dimensions):
    return ctx.builder.op("stablehlo.reshape", [x], ctx.aval_out.strip_weak_type())


linear_jvp(expand_dims_p)


def _expand_dims_host(x: Any, *, dimensions: tuple[int, ...]) -> Any:
    # a reshape: NumPy's view, as np.expand_dims gives, without its ~2 µs of axis checks
    # (the abstract evaluation has checked `dimensions`: sorted, distinct, in range)
    shape = list(x.shape)  # an ndarray or a NumPy scalar (a weak scalar operand)
    for d in dimensions:
        shape.insert(d, 1)
    return x.reshape(shape)


expand_dims_p.def_host(_expand_dims_host)


@expand_dims_p.def_batching
def _expand_dims_batching(vals, dims, *, dimensions):
    (x,), (bdim,) = vals, dims
    x = move_bdim(x, bdim, 0)
    return expand_dims_p.bind1(x, dimensions=tuple(d + 1 for d in dimensions)), 0


# --- transpose ------------------------------------------------------------------------------

transpose_p = Primitive("transpose")


def transpose(x: ArrayLike, permutation: Sequence[int]) -> Any:
    """Permute the axes of `x`: output axis i is input axis permutation[i]."""
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(len(permutation))):
        return x
    return transpose_p.bind1(x, permutation=permutation)


@transpose_p.def_abstract_eval
def _transpose_abstract_eval(x: ShapedArray, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise ValueError(
            f"transpose: permutation {permutation} is not a permutation of the axes of an array "
            f"of shape {x.shape}"
        )
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


@transpose_p.def_lowering
def _transpose_lowering(ctx, x, *, permutation):
    return ctx.builder.op(
        "stablehlo.transpose",
        [x],
        ctx.aval_out.strip_weak_type(),
        f"permutation = {i64_array(permutation)}",
    )


linear_jvp(transpose_p)
transpose_p.def_host(lambda x, *, permutation: x.transpose(permutation))


@transpose_p.def_batching
def _transpose_batching(vals, dims, *, permutation):
    (x,), (bdim,) = vals, dims
    x = move_bdim(x, bdim, 0)
    return transpose_p.bind1(x, permutation=(0, *(p + 1 for p in permutation))), 0


# --- moving batch axes (the batching interpreter's own uses of the primitives above) -------


def move_bdim(x: Any, src: int, dst: int) -> Any:
    """Move batch axis `src` of `x` to position `dst`."""
    if src == dst:
        return x
    ndim = get_aval(x).ndim
    perm = [i for i in range(ndim) if i != src]
    perm.insert(dst, src)
    return transpose(x, tuple(perm))


def broadcast_batch(x: Any, axis_size: int, dst: int) -> Any:
    """Materialise an unbatched value along a new batch axis `dst`."""
    aval = get_aval(x)
    shape = list(aval.shape)
    shape.insert(dst, axis_size)
    dims = tuple(i for i in range(len(shape)) if i != dst)
    return broadcast_in_dim(x, tuple(shape), dims)


# --- select_n -------------------------------------------------------------------------------

select_n_p = Primitive("select_n")


def select_n(which: ArrayLike, *cases: ArrayLike) -> Any:
    """Elementwise `cases[which]`; `which` is bool (two cases) or int32, scalar or full-shaped."""
    if not cases:
        raise ValueError("select_n needs at least one case")
    if len(cases) == 1:
        return cases[0]
    return select_n_p.bind1(which, *cases)


@select_n_p.def_abstract_eval
def _select_n_abstract_eval(which: ShapedArray, *cases: ShapedArray):
    if which.dtype.kind == "b":
        if len(cases) > 2:
            raise TypeError("select_n: a boolean selector allows at most two cases")
    elif which.dtype != np.dtype("int32"):
        raise TypeError(f"select_n: selector must be bool or int32, got {which.dtype}")
    first = cases[0]
    for c in cases[1:]:
        if c.shape != first.shape or c.dtype != first.dtype:
            raise TypeError(
                "select_n: cases must have one shape and dtype, got "
                + ", ".join(a.str_short() for a in cases)
            )
    if which.shape not in ((), first.shape):
        raise TypeError(
            f"select_n: selector shape {which.shape} must be () or the case shape {first.shape}"
        )
    return ShapedArray(first.shape, first.dtype, all(c.weak_type for c in cases))


@select_n_p.def_lowering
def _select_n_lowering(ctx, which, *cases):
    b = ctx.builder
    out = ctx.aval_out.strip_weak_type()
    pred_aval = which.aval.update(dtype=np.dtype("bool"), weak_type=False)
    if which.aval.dtype.kind == "b":
        return b.op("stablehlo.select", [which, cases[1], cases[0]], out)
    # Integer selector: a chain of selects, last case first.
    result = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        idx = scalar_constant(b, i, which.aval.dtype, which.aval.shape)
        pred = b.op(
            "stablehlo.compare",
            [which, idx],
            pred_aval,
            "comparison_direction = #stablehlo<comparison_direction EQ>, "
            "compare_type = #stablehlo<comparison_type SIGNED>",
        )
        result = b.op("stablehlo.select", [pred, cases[i], result], out)
    return result


@select_n_p.def_host
def _select_n_host(which: np.ndarray, *cases: np.ndarray) -> np.ndarray:
    if which.dtype.kind == "b":
        return np.asarray(np.where(which, cases[1], cases[0]))
    # As the lowering's chain of selects: an out-of-range selector picks the last case.
    result = cases[-1]
    for i in range(len(cases) - 2, -1, -1):
        result = np.where(np.equal(which, i), cases[i], result)
    return np.broadcast_to(result, cases[0].shape)


@select_n_p.def_jvp
def _select_n_jvp(primals, tangents):
    which, *cases = primals
    _, *case_dots = tangents
    return select_n_p.bind1(which, *cases), select_n_p.bind1(which, *case_dots)


@select_n_p.def_batching
def _select_n_batching(vals, dims):
    which, *cases = vals
    which_dim, *case_dims = dims
    axis_size = next(
        get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not NOT_MAPPED
    )
    batched = [(c, d) for c, d in zip(cases, case_dims, strict=True) if d is not NOT_MAPPED]
    if batched:
        c, d = batched[0]
        shape = get_aval(c).shape
        case_shape = shape[:d] + shape[d + 1 :]
    else:
        case_shape = get_aval(cases[0]).shape
    full_shape = (axis_size, *case_shape)
    cases = [_materialize(c, d, full_shape) for c, d in zip(cases, case_dims, strict=True)]
    if which_dim is NOT_MAPPED:
        if get_aval(which).ndim != 0:
            which = broadcast_in_dim(which, full_shape, tuple(range(1, len(full_shape))))
    else:
        which = move_bdim(which, which_dim, 0)
        if get_aval(which).ndim != len(full_shape):
            which = broadcast_in_dim(which, full_shape, (0,))
    return select_n_p.bind1(which, *cases), 0


def _materialize(x: Any, bdim: int | None, full_shape: Shape) -> Any:
    if bdim is NOT_MAPPED:
        return broadcast_in_dim(x, full_shape, tuple(range(1, len(full_shape))))
    return move_bdim(x, bdim, 0)


# --- add_any: tangent and cotangent accumulation -------------------------------------------

add_any_p = Primitive("add_any")


def add_any(x: Any, y: Any) -> Any:
    """Sum of two tangents of one type; symbolic zeros are absorbed."""
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    return add_any_p.bind1(x, y)


elementwise(add_any_p, "stablehlo.add")
linear_jvp(add_any_p)
add_any_p.def_host(host.ufunc(np.add))


def broadcast_to(x: Any, shape: Shape) -> Any:
    """NumPy-style broadcast of `x` to `shape` (trailing alignment)."""
    aval = get_aval(x)
    if aval.shape == shape:
        return x
    offset = len(shape) - aval.ndim
    return broadcast_in_dim(x, shape, tuple(range(offset, len(shape))))


# --- broadcast / full_like (helpers over broadcast_in_dim, as in JAX) -------------------------


def broadcast(operand: ArrayLike, sizes: Sequence[int]) -> Any:
    """`operand` with new leading axes of `sizes`: the result has shape `(*sizes, *shape)`."""
    sizes = _check_shape("broadcast", sizes)
    ndim = get_aval(operand).ndim
    return broadcast_in_dim(
        operand, (*sizes, *get_aval(operand).shape), range(len(sizes), len(sizes) + ndim)
    )


def full_like(
    x: ArrayLike, fill_value: ArrayLike, dtype: Any = None, shape: Sequence[int] | None = None
) -> Any:
    """An array like `x` (its shape and dtype, unless given) filled with the scalar
    `fill_value`, which may be traced. Weakly typed iff `x` is and no `dtype` is given.

    Raises:
      TypeError: if `fill_value` is not a scalar.
    """
    aval = get_aval(x)
    out_shape = aval.shape if shape is None else _check_shape("full_like", shape)
    weak_type = dtype is None and aval.weak_type
    out_dtype = aval.dtype if dtype is None else dtypes.canonicalize_dtype(dtype, "full_like")
    if type(fill_value) in (bool, int, float, complex):
        return full(out_shape, fill_value, out_dtype, weak_type)
    fill_aval = get_aval(fill_value)
    if fill_aval.ndim:
        raise TypeError(
            f"full_like: fill_value must be a scalar, got an array of shape {fill_aval.shape}"
        )
    fill = convert_element_type(fill_value, out_dtype, weak_type)
    return broadcast_in_dim(fill, out_shape, ())


# --- select / broadcast_to_rank / collapse / empty (helpers, as in JAX) ----------------------


def select(pred: ArrayLike, on_true: ArrayLike, on_false: ArrayLike) -> Any:
    """Elementwise `on_true` where the bool `pred` holds, else `on_false` (JAX's older API:
    `select_n(pred, on_false, on_true)`)."""
    if get_aval(pred).dtype.kind != "b":
        raise TypeError(f"select: pred must be bool, got {get_aval(pred).dtype.name}")
    return select_n(pred, on_false, on_true)


def broadcast_to_rank(x: ArrayLike, rank: int) -> Any:
    """`x` with leading axes of size 1 added until it has `rank` dimensions."""
    ndim = get_aval(x).ndim
    if rank < ndim:
        raise ValueError(f"broadcast_to_rank: x has rank {ndim}, more than the requested {rank}")
    if rank == ndim:
        return x
    return broadcast(x, (1,) * (rank - ndim))


def collapse(operand: ArrayLike, start_dimension: int, stop_dimension: int | None = None) -> Any:
    """`operand` with dimensions `start_dimension:stop_dimension` merged into one."""
    shape = get_aval(operand).shape
    ndim = len(shape)
    lo, hi, _ = slice(start_dimension, ndim if stop_dimension is None else stop_dimension).indices(
        ndim
    )
    if hi < lo:
        raise ValueError(
            f"collapse: stop_dimension {stop_dimension} comes before start_dimension "
            f"{start_dimension} for an operand of rank {ndim}"
        )
    size = int(np.prod(shape[lo:hi], dtype=np.int64))
    return reshape(operand, (*shape[:lo], size, *shape[hi:]))


def empty(shape: int | Sequence[int], dtype: Any) -> Any:
    """An array of `shape` and `dtype` whose values are unspecified.

    NB: JAX leaves the contents to the backend; here they are zeros.
    """
    shape = (shape,) if isinstance(shape, int | np.integer) else tuple(shape)
    return full(shape, 0, dtypes.canonicalize_dtype(dtype, "empty"))


__all__ = [
    "add_any",
    "broadcast",
    "broadcast_in_dim",
    "broadcast_to",
    "broadcast_to_rank",
    "collapse",
    "convert_element_type",
    "empty",
    "expand_dims",
    "full",
    "full_like",
    "reshape",
    "select",
    "select_n",
    "transpose",
    "zeros_like",
]


# --- transpose rules of the primitives above ------------------------------------------------


def unbroadcast(ct: Any, aval: ShapedArray) -> Any:
    """Sum a cotangent of a NumPy-broadcast result back to an operand's shape."""
    ct_aval = ct.aval if type(ct) is Array else get_aval(ct)
    ct_shape = ct_aval.shape
    if ct_shape == aval.shape:
        return ct
    lead = len(ct_shape) - aval.ndim
    dims = [*range(lead)] + [
        lead + i for i, d in enumerate(aval.shape) if d == 1 and ct_shape[lead + i] != 1
    ]
    return _sum_to_shape(ct, ct_aval, tuple(dims), aval.shape)


def _sum_to_shape(ct: Any, ct_aval: ShapedArray, axes: tuple[int, ...], shape: Shape) -> Any:
    """`reshape(reduce_sum(ct, axes), shape)` (sorted `axes`): on the host, by reduce_sum's and
    reshape's host rules (`host_vjp`), where dispatch would run reduce_sum's."""
    value = host_vjp.host_value(ct)
    if value is not None and host_vjp.within(reduce_sum_p, ct_aval.dtype, ct_aval.size):
        summed = reduce_sum_p.host_rule(value, axes=axes) if axes else value  # type: ignore[misc]
        return host_vjp.wrap(summed.reshape(shape), shape, ct_aval)
    return reshape(reduce_sum(ct, axes), shape)


def reshape_cotangent(ct: Any, shape: Shape) -> Any:
    """`reshape(ct, shape)` for transpose rules: on the host, reshape's host rule (a view)."""
    value = host_vjp.host_value(ct)
    if value is not None:
        aval = ct.aval
        return ct if aval.shape == shape else host_vjp.wrap(value.reshape(shape), shape, aval)
    return reshape(ct, shape)


def _convert_element_type_transpose(ct, x, *, new_dtype, weak_type):
    params = {"new_dtype": x.aval.dtype, "weak_type": False}
    out = host_vjp.apply(convert_element_type_p, ct, **params)
    return [convert_element_type_p.bind1(ct, **params) if out is None else out]


convert_element_type_p.def_transpose(_convert_element_type_transpose)


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    operand_shape = x.aval.shape
    new_dims = [d for d in range(len(shape)) if d not in broadcast_dimensions]
    expanded = [
        d for i, d in enumerate(broadcast_dimensions) if operand_shape[i] == 1 and shape[d] != 1
    ]
    return [_sum_to_shape(ct, get_aval(ct), tuple(sorted(new_dims + expanded)), operand_shape)]


broadcast_in_dim_p.def_transpose(_broadcast_in_dim_transpose)
reshape_p.def_transpose(lambda ct, x, *, new_sizes: [reshape_cotangent(ct, x.aval.shape)])
expand_dims_p.def_transpose(lambda ct, x, *, dimensions: [reshape_cotangent(ct, x.aval.shape)])


def _transpose_transpose(ct, x, *, permutation):
    inverse = tuple(int(i) for i in np.argsort(permutation))
    value = host_vjp.host_value(ct)
    if value is not None:  # transpose's host rule (a view)
        out = value.transpose(inverse)
        return [host_vjp.wrap(out, out.shape, ct.aval)]
    return [transpose(ct, inverse)]


transpose_p.def_transpose(_transpose_transpose)


def _select_n_transpose(ct, which, *cases):
    if type(which) is UndefinedPrimal:
        raise TypeError("select_n: the selector cannot be a linear input")
    out = _select_n_transpose_host(ct, which, cases)
    if out is not None:
        return out
    zeros = full(get_aval(ct).shape, 0, get_aval(ct).dtype)
    out = [None]
    for i, c in enumerate(cases):
        if type(c) is UndefinedPrimal:
            picks = [ct if j == i else zeros for j in range(len(cases))]
            out.append(select_n_p.bind1(which, *picks))
        else:
            out.append(None)
    return out


def _select_n_transpose_host(ct: Any, which: Any, cases: tuple[Any, ...]) -> list[Any] | None:
    """`_select_n_transpose` on the host (`host_vjp`): select_n's host rule per linear case,
    where dispatch would run it (and broadcast_in_dim's, always on the host, for the zeros)."""
    value = host_vjp.host_value(ct)
    if value is None:
        return None
    which_value = host_vjp.operand_value(which)
    if which_value is None or not host_vjp.within(select_n_p, which_value.dtype, value.size):
        return None
    zero = np.zeros((), value.dtype)  # `full`'s 0 (its scalar Array's value)
    shape = value.shape
    boolean = which_value.dtype.kind == "b"
    if not boolean and shape:  # (a bool selector's np.where broadcasts the 0-d zero itself)
        zero = _broadcast_in_dim_host(zero, shape=shape, broadcast_dimensions=())
    aval = ct.aval.update(weak_type=False)  # select_n of `ct` and the strong zeros
    out: list[Any] = [None]
    for i, c in enumerate(cases):
        if type(c) is not UndefinedPrimal:
            out.append(None)
            continue
        if boolean:  # `_select_n_host`'s np.where for the two cases
            r = np.where(which_value, value, zero) if i else np.where(which_value, zero, value)
            r = r if type(r) is np.ndarray else np.asarray(r)
        else:
            r = _select_n_host(which_value, *[value if j == i else zero for j in range(len(cases))])
        out.append(wrap_host(r, aval))
    return out


select_n_p.def_transpose(_select_n_transpose)
# Linear in its cases together (the selector, bool or int32, carries no tangent): eager grad
# records the select itself (no jvp rule), and its transpose skips the undifferentiated cases.
select_n_p.def_eager_vjp(LINEAR)


def _add_any_transpose(ct, x, y):
    return [unbroadcast(ct, v.aval) if is_undefined_primal(v) else None for v in (x, y)]


add_any_p.def_transpose(_add_any_transpose)


def _array_copy(self: Array) -> Array:
    # A new object with its own buffer: `x[i] = v` rebinds the object `x`, so a "copy" that is
    # `x` itself would follow the write (and die with `x` when it is donated).
    return convert_element_type_p.bind1(
        self, new_dtype=self.aval.dtype, weak_type=self.aval.weak_type
    )


Array.__copy__ = _array_copy  # type: ignore[method-assign]
