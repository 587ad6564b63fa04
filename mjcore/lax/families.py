"""Family helpers that fill in the routine rules of primitives (elementwise ops and friends)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mjcore import dtypes
from mjcore.ad_util import NOT_MAPPED
from mjcore.backend.hlo import FunctionBuilder, Value, i64_array
from mjcore.backend.lowering import LoweringContext
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.dispatch import scalar_array

ArrayLike = Any
Shape = tuple[int, ...]


# --- Shapes ---------------------------------------------------------------------------------


def broadcast_shapes(name: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy broadcasting of shapes, with an error naming the primitive."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, d in enumerate(s, ndim - len(s)):
            if d != 1:
                if out[i] != 1 and out[i] != d:
                    raise ValueError(
                        f"{name}: operands could not be broadcast together with shapes "
                        + " ".join(str(tuple(x)) for x in shapes)
                    )
                out[i] = d
            elif out[i] == 1:
                out[i] = d
    return tuple(out)


def check_same_dtypes(name: str, avals: Sequence[ShapedArray]) -> np.dtype:
    dtype = avals[0].dtype
    for a in avals[1:]:
        if a.dtype != dtype:
            raise TypeError(
                f"{name} requires arguments of one dtype, got "
                + ", ".join(a.dtype.name for a in avals)
                + "; convert with mjcore.lax.convert_element_type (mjnp promotes automatically)."
            )
    return dtype


_PYTHON_SCALARS = (bool, int, float, complex)


def promote_python_scalars(*args: Any) -> tuple[Any, ...]:
    """Give Python scalars the dtype of the array operands (weakly typed), as JAX's `lax` does.

    `lax.mul(float32_array, 2.0)` then multiplies two float32 values; full NumPy promotion
    between arrays is mjnp's job.
    """
    scalars = _PYTHON_SCALARS
    for a in args:
        if type(a) in scalars:
            break
    else:
        return args
    dtype = None
    for a in args:
        if type(a) not in scalars:
            dtype = get_aval(a).dtype
            break
    if dtype is None:
        return args
    return tuple(scalar_array(a, dtype, True) if type(a) in _PYTHON_SCALARS else a for a in args)


# --- Lowering helpers -----------------------------------------------------------------------


def broadcast_to_shape(b: FunctionBuilder, x: Value, shape: tuple[int, ...]) -> Value:
    """Emit a NumPy-style broadcast of `x` to `shape` (no-op if it already has it)."""
    if x.aval.shape == shape:
        return x
    offset = len(shape) - x.aval.ndim
    return b.op(
        "stablehlo.broadcast_in_dim",
        [x],
        x.aval.update(shape=shape),
        f"broadcast_dimensions = {i64_array(range(offset, len(shape)))}",
    )


def convert(b: FunctionBuilder, x: Value, dtype: np.dtype) -> Value:
    if x.aval.dtype == dtype:
        return x
    return b.op("stablehlo.convert", [x], x.aval.update(dtype=dtype, weak_type=False))


def scalar_constant(b: FunctionBuilder, value: Any, dtype: np.dtype, shape=()) -> Value:
    """A constant of `dtype` filled with `value`, of the given shape."""
    return b.constant(np.asarray(value, dtype), ShapedArray(shape, dtype))


def elementwise_lowering(
    hlo_op: str | Callable[..., Value], attrs: str | None = None
) -> Callable[..., Value]:
    """Lowering for an elementwise op: broadcast operands to the output shape, then emit."""

    def lowering(ctx: LoweringContext, *args: Value, **params: Any) -> Value:
        b = ctx.builder
        shape = ctx.aval_out.shape
        args = tuple(broadcast_to_shape(b, x, shape) for x in args)
        if callable(hlo_op):
            return hlo_op(ctx, *args, **params)
        return b.op(hlo_op, list(args), ctx.aval_out.strip_weak_type(), attrs)

    return lowering


# --- Abstract evaluation and batching -------------------------------------------------------


def elementwise_abstract_eval(
    name: str,
    allowed_kinds: str | None = None,
    out_dtype: Callable[[np.dtype], np.dtype] | None = None,
) -> Callable[..., ShapedArray]:
    """Broadcast shapes, require one dtype (of an allowed kind), weak iff all operands weak."""

    def abstract_eval(*avals: ShapedArray, **params: Any) -> ShapedArray:
        first = avals[0]
        if (
            out_dtype is None
            and (allowed_kinds is None or dtypes.kind(first.dtype) in allowed_kinds)
            and _all_equal(first, avals)
        ):
            # One aval throughout (the common case after mjnp's promotion): the output's aval
            # is the input's, and avals are immutable, so share the object.
            return first
        dtype = check_same_dtypes(name, avals)
        if allowed_kinds is not None and dtypes.kind(dtype) not in allowed_kinds:
            raise TypeError(
                f"{name} does not accept dtype {dtype.name}; it needs "
                + _kind_names(allowed_kinds)
                + "."
            )
        shape = broadcast_shapes(name, *(a.shape for a in avals))
        weak = all(a.weak_type for a in avals)
        if out_dtype is not None:
            dtype, weak = out_dtype(dtype), False
        return ShapedArray(shape, dtype, weak)

    return abstract_eval


def _all_equal(first: ShapedArray, avals: tuple[ShapedArray, ...]) -> bool:
    # A loop, not all(generator): this is on every traced elementwise op's path.
    for a in avals:
        if a is not first and a != first:
            return False
    return True


def _kind_names(kinds: str) -> str:
    names = {"b": "bool", "i": "signed integer", "u": "unsigned integer", "f": "floating"}
    names["c"] = "complex"
    return " or ".join(names[k] for k in kinds)


def elementwise_batching(prim: Primitive) -> Callable[..., tuple[Any, int]]:
    """Batching for NumPy-broadcasting elementwise ops: batch axes go to the front."""

    def batching(vals: Sequence[Any], dims: Sequence[int | None], **params: Any):
        from mjcore.lax.base import expand_dims, move_bdim  # lax.base builds on this module

        ndim = max(
            (np.ndim(v) - (d is not NOT_MAPPED) for v, d in zip(vals, dims, strict=True)),
            default=0,
        )
        moved = []
        for v, d in zip(vals, dims, strict=True):
            if d is NOT_MAPPED:
                moved.append(v)
            else:
                v = move_bdim(v, d, 0)
                rank = np.ndim(v) - 1
                if rank < ndim:
                    # Align trailing dimensions, as NumPy broadcasting would without the batch.
                    v = expand_dims(v, tuple(range(1, 1 + ndim - rank)))
                moved.append(v)
        return prim.bind(*moved, **params), 0

    return batching


def elementwise(
    prim: Primitive,
    hlo_op: str | Callable[..., Value],
    allowed_kinds: str | None = None,
    out_dtype: Callable[[np.dtype], np.dtype] | None = None,
) -> None:
    """Give an elementwise primitive its abstract_eval, batching and lowering rules."""
    prim.def_abstract_eval(elementwise_abstract_eval(prim.name, allowed_kinds, out_dtype))
    prim.def_batching(elementwise_batching(prim))
    prim.def_lowering(elementwise_lowering(hlo_op))


# --- Axes and monoid reductions ------------------------------------------------------------


def normalize_axes(x: ArrayLike, axes: int | Sequence[int]) -> tuple[int, ...]:
    """`axes` as a tuple with negative entries counted from the end of `x`'s shape.

    Out-of-range entries are left alone so that the primitive's abstract_eval reports them.
    """
    ndim = get_aval(x).ndim
    if type(axes) is int:  # the common case, without the general loop (this is on hot paths)
        return (axes + ndim if -ndim <= axes < 0 else axes,)
    axes = (axes,) if isinstance(axes, int | np.integer) else axes
    return tuple([int(a) + ndim if -ndim <= int(a) < 0 else int(a) for a in axes])


def check_axes(name: str, axes: tuple[int, ...], shape: Shape) -> None:
    """Raise AxisError unless `axes` are distinct, in-range axes of `shape`."""
    ndim = len(shape)
    for a in axes:
        if not 0 <= a < ndim:
            raise np.exceptions.AxisError(
                f"{name}: axes {axes} out of range for an array of shape {shape}"
            )
    if len(axes) > 1 and len(set(axes)) != len(axes):
        raise ValueError(f"{name}: repeated axis in {axes}")


def reduced_shape(shape: Shape, axes: tuple[int, ...]) -> Shape:
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def kept_axes(ndim: int, axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(i for i in range(ndim) if i not in axes)


def _array_out() -> dict[str, Any]:
    """`out=...` where NumPy's ufunc methods take it (NumPy >= 2.3): a full reduction then
    gives a 0-d array, not a NumPy scalar to convert again (~0.15 µs); else nothing."""
    try:
        np.add.reduce(np.zeros(1), axis=None, out=...)
    except TypeError:
        return {}
    return {"out": ...}


_ARRAY_OUT = _array_out()


def monoid_reduction(
    name: str,
    kinds: str,
    hlo_op: Callable[[np.dtype], str],
    identity: Callable[[np.dtype], Any],
    numpy_ufunc: np.ufunc,
) -> Primitive:
    """A reduction primitive with its abstract_eval, lowering, batching and host rules.

    `hlo_op(dtype)` names the StableHLO combiner, `identity(dtype)` its identity element and
    `numpy_ufunc` the same combiner in NumPy.
    """
    prim = Primitive(name)

    def abstract_eval(x: ShapedArray, *, axes: tuple[int, ...]) -> ShapedArray:
        if dtypes.kind(x.dtype) not in kinds:
            raise TypeError(f"{name} does not accept dtype {x.dtype.name}")
        check_axes(name, axes, x.shape)
        return ShapedArray(reduced_shape(x.shape, axes), x.dtype, x.weak_type)

    def lowering(ctx: LoweringContext, x: Value, *, axes: tuple[int, ...]) -> Value:
        b = ctx.builder
        dtype = x.aval.dtype
        scalar = ShapedArray((), dtype)
        op = hlo_op(dtype)
        region = b.region([scalar, scalar], lambda rb, acc, y: [rb.op(op, [acc, y], scalar)])
        return b.op(
            "stablehlo.reduce",
            [x, scalar_constant(b, identity(dtype), dtype)],
            ctx.aval_out.strip_weak_type(),
            f"dimensions = {i64_array(axes)}",
            regions=[region],
        )

    def batching(vals, dims, *, axes):
        (x,), (bdim,) = vals, dims
        moved = tuple(a + (a >= bdim) for a in axes)
        return prim.bind1(x, axes=moved), bdim - sum(a < bdim for a in moved)

    def host(x: np.ndarray, *, axes: tuple[int, ...]) -> np.ndarray:
        # The identity as `initial`, as in the lowering: empty reductions give it, and a sum
        # starts from +0.0 as XLA's does.
        out = numpy_ufunc.reduce(x, axis=axes, dtype=x.dtype, initial=identity(x.dtype))
        return out if type(out) is np.ndarray else np.asarray(out)

    def specialize(avals_in: list[ShapedArray], *, axes: tuple[int, ...]) -> Any:
        # max/min (and bool and/or/xor) of a non-empty operand: the identity as `initial`
        # changes nothing, and NumPy keeps the dtype, so the plain reduce is the rule
        (x,) = avals_in
        if x.size == 0 or not (numpy_ufunc in (np.maximum, np.minimum) or x.dtype.kind == "b"):
            return None
        if len(axes) < x.ndim:
            return functools.partial(numpy_ufunc.reduce, axis=axes)
        return functools.partial(numpy_ufunc.reduce, axis=None, **_ARRAY_OUT)

    host.specialize = specialize  # type: ignore[attr-defined]  # (see `lax.host`)

    prim.def_abstract_eval(abstract_eval)
    prim.def_lowering(lowering)
    prim.def_batching(batching)
    prim.def_host(host)
    return prim


def bind_reduction(prim: Primitive, x: ArrayLike, axes: int | Sequence[int]) -> Any:
    axes = tuple(sorted(normalize_axes(x, axes)))
    if not axes:
        return x
    return prim.bind1(x, axes=axes)
