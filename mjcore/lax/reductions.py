"""Reduction primitives: reduce_sum/max/min/prod/and/or over static axes (one
`stablehlo.reduce` each) and argmax/argmin with NumPy's tie and NaN rules."""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mjcore import core, dtypes
from mjcore.ad import Zero, def_transposed_jvp_vjp, fused_rule_body, jvp_flat
from mjcore.array import wrap_host
from mjcore.backend.hlo import FunctionBuilder, Value, i64_array
from mjcore.backend.lowering import LoweringContext, lower_jaxpr_body
from mjcore.batching import NOT_MAPPED, moveaxis_to
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.jaxpr import ClosedJaxpr, eval_jaxpr
from mjcore.lax import arithmetic, bitwise, host_vjp
from mjcore.lax.base import (
    broadcast_in_dim,
    convert_element_type,
    convert_element_type_p,
    full,
    reshape,
    transpose,
)
from mjcore.lax.base import reduce_sum as reduce_sum
from mjcore.lax.base import reduce_sum_p as reduce_sum_p
from mjcore.lax.comparison import eq, eq_p
from mjcore.lax.families import (
    bind_reduction,
    check_axes,
    kept_axes,
    monoid_reduction,
    normalize_axes,
    reduced_shape,
    scalar_constant,
)
from mjcore.lax.slicing import slice_in_dim
from mjcore.lax.structural import pad
from mjcore.partial_eval import trace_to_jaxpr
from mjcore.tree_util import tree_flatten, tree_unflatten

ArrayLike = Any
Shape = tuple[int, ...]


def _compare(b: FunctionBuilder, x: Value, y: Value, direction: str) -> Value:
    ctype = {"b": "UNSIGNED", "u": "UNSIGNED", "i": "SIGNED", "f": "FLOAT"}[
        dtypes.kind(x.aval.dtype)
    ]
    return b.op(
        "stablehlo.compare",
        [x, y],
        x.aval.update(dtype=np.dtype(bool), weak_type=False),
        f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
        f"compare_type = #stablehlo<comparison_type {ctype}>",
    )


def _lowest(dtype: np.dtype) -> Any:
    return (
        -np.inf
        if dtypes.kind(dtype) == "f"
        else (False if dtype.kind == "b" else np.iinfo(dtype).min)
    )


def _highest(dtype: np.dtype) -> Any:
    return (
        np.inf
        if dtypes.kind(dtype) == "f"
        else (True if dtype.kind == "b" else np.iinfo(dtype).max)
    )


def _all_ones(dtype: np.dtype) -> Any:
    return True if dtype.kind == "b" else (-1 if dtype.kind == "i" else np.iinfo(dtype).max)


# --- the monoid reductions ------------------------------------------------------------------


reduce_prod_p = monoid_reduction(
    "reduce_prod", "iufc", lambda dt: "stablehlo.multiply", lambda dt: 1, np.multiply
)
reduce_max_p = monoid_reduction(
    "reduce_max",
    "biuf",
    lambda dt: "stablehlo.or" if dt.kind == "b" else "stablehlo.maximum",
    _lowest,
    np.maximum,
)
reduce_min_p = monoid_reduction(
    "reduce_min",
    "biuf",
    lambda dt: "stablehlo.and" if dt.kind == "b" else "stablehlo.minimum",
    _highest,
    np.minimum,
)
reduce_and_p = monoid_reduction(
    "reduce_and", "biu", lambda dt: "stablehlo.and", _all_ones, np.bitwise_and
)
reduce_or_p = monoid_reduction(
    "reduce_or", "biu", lambda dt: "stablehlo.or", lambda dt: 0, np.bitwise_or
)
reduce_xor_p = monoid_reduction(
    "reduce_xor", "biu", lambda dt: "stablehlo.xor", lambda dt: 0, np.bitwise_xor
)


def reduce_prod(x: ArrayLike, axes: int | Sequence[int]) -> Any:
    """Product of `x` over `axes`."""
    return bind_reduction(reduce_prod_p, x, axes)


def reduce_max(x: ArrayLike, axes: int | Sequence[int]) -> Any:
    """Maximum of `x` over `axes`; NaN propagates. An empty reduction gives the lowest value."""
    return bind_reduction(reduce_max_p, x, axes)


def reduce_min(x: ArrayLike, axes: int | Sequence[int]) -> Any:
    """Minimum of `x` over `axes`; NaN propagates. An empty reduction gives the highest value."""
    return bind_reduction(reduce_min_p, x, axes)


def reduce_and(x: ArrayLike, axes: int | Sequence[int]) -> Any:
    """Logical (bool) or bitwise (integer) and of `x` over `axes`."""
    return bind_reduction(reduce_and_p, x, axes)


def reduce_or(x: ArrayLike, axes: int | Sequence[int]) -> Any:
    """Logical (bool) or bitwise (integer) or of `x` over `axes`."""
    return bind_reduction(reduce_or_p, x, axes)


def reduce_xor(x: ArrayLike, axes: int | Sequence[int]) -> Any:
    """Logical (bool: parity) or bitwise (integer) exclusive or of `x` over `axes`."""
    return bind_reduction(reduce_xor_p, x, axes)


def _chooser_jvp(prim: Primitive) -> None:
    """max/min: the tangent at the chosen elements, averaged over ties (as in JAX)."""

    def jvp(primals, tangents, *, axes):
        (x,), (x_dot,) = primals, tangents
        out = prim.bind1(x, axes=axes)
        aval = get_aval(x)
        chosen = eq(x, broadcast_in_dim(out, aval.shape, kept_axes(aval.ndim, axes)))
        weights = convert_element_type(chosen, get_aval(x_dot).dtype)
        total = reduce_sum_p.bind1(arithmetic.mul(x_dot, weights), axes=axes)
        return out, arithmetic.div(total, reduce_sum_p.bind1(weights, axes=axes))

    @fused_rule_body
    def vjp_body(ct, out, x, *, axes):
        # The transpose of the jvp's tangent equation: the weights are made only when needed.
        aval = get_aval(x)
        kept = kept_axes(aval.ndim, axes)
        chosen = eq(x, broadcast_in_dim(out, aval.shape, kept))
        weights = convert_element_type(chosen, aval.dtype)
        share = arithmetic.div(ct, reduce_sum_p.bind1(weights, axes=axes))
        return arithmetic.mul(broadcast_in_dim(share, aval.shape, kept), weights)

    def eager_vjp(ct, out, primals, linear, *, axes):
        (x,) = primals
        ct_x = _chooser_vjp_host(ct, out, x, axes)
        return [vjp_body(ct, out, x, axes=axes) if ct_x is None else ct_x]

    prim.def_jvp(jvp)
    prim.def_eager_vjp(eager_vjp)


def _chooser_vjp_host(ct: Any, out: Any, x: Any, axes: tuple[int, ...]) -> Any:
    """The vjp body of reduce_max/min on the host (`mjcore.lax.host_vjp`): the host rules
    of its primitives, in its order, where the fused body would run them."""
    ct_value = host_vjp.host_value(ct)
    if ct_value is None:
        return None
    out_value = host_vjp.operand_value(out)
    x_value = host_vjp.operand_value(x)
    if out_value is None or x_value is None:
        return None
    dtype = x_value.dtype
    size = x_value.size
    if not (
        ct_value.dtype == dtype
        and host_vjp.within(convert_element_type_p, _BOOL, size)
        and host_vjp.within(reduce_sum_p, dtype, size)
        and host_vjp.within(arithmetic.div_p, dtype, ct_value.size)
    ):
        return None
    shape = x_value.shape
    # The two broadcasts left to the ufuncs (NumPy's broadcasting): the same elementwise
    # operations on the same values, without np.broadcast_to's ~2 µs of Python.
    expanded = tuple(1 if d in axes else n for d, n in enumerate(shape))
    rule = host_vjp.rule
    chosen = rule(eq_p)(x_value, out_value.reshape(expanded))
    weights = rule(convert_element_type_p)(chosen, new_dtype=dtype, weak_type=False)
    share = rule(arithmetic.div_p)(ct_value, rule(reduce_sum_p)(weights, axes=axes))
    result = rule(arithmetic.mul_p)(share.reshape(expanded), weights)
    if result.dtype != dtype:  # the fused body would run XLA
        return None
    return wrap_host(result, ShapedArray(shape, dtype, False))


_BOOL = np.dtype(bool)


_chooser_jvp(reduce_max_p)
_chooser_jvp(reduce_min_p)


@reduce_prod_p.def_jvp
def _reduce_prod_jvp(primals, tangents, *, axes):
    # Product rule on a balanced tree of pairwise products, as JAX does: exact when elements
    # are zero (no division by the product) and only O(log n) deep.
    (x,), (x_dot,) = primals, tangents
    out = reduce_prod_p.bind1(x, axes=axes)
    aval = get_aval(x)
    kept = kept_axes(aval.ndim, axes)
    out_shape = reduced_shape(aval.shape, axes)
    n = math.prod(aval.shape[a] for a in axes)
    if n == 0:
        return out, full(out_shape, 0, get_aval(x_dot).dtype)
    rows = (n, *out_shape)
    p = reshape(transpose(x, (*axes, *kept)), rows)
    t = reshape(transpose(x_dot, (*axes, *kept)), rows)
    while n > 1:
        half = (n + 1) // 2
        p1, p2 = slice_in_dim(p, 0, half, 0), slice_in_dim(p, half, n, 0)
        t1, t2 = slice_in_dim(t, 0, half, 0), slice_in_dim(t, half, n, 0)
        if n % 2:
            config = ((0, 1, 0),) + ((0, 0, 0),) * len(out_shape)
            p2 = pad(p2, full((), 1, get_aval(p2).dtype), config)
            t2 = pad(t2, full((), 0, get_aval(t2).dtype), config)
        p, t = (
            arithmetic.mul(p1, p2),
            arithmetic.add(arithmetic.mul(t1, p2), arithmetic.mul(p1, t2)),
        )
        n = half
    return out, reshape(t, out_shape)


def _reduce_prod_vjp_host(ct: Any, x: Any, *, axes: tuple[int, ...]) -> Any:
    """The transpose of `_reduce_prod_jvp`'s tree on the host (`host_vjp`): the tree's products
    by mul's host rule, then per level the cotangents `ct * p2` and `p1 * ct` (mul's
    transposes), the padded row dropped (pad's) and the halves joined (the slices' transposes:
    pads with +0.0, summed), so the jvp route's bits; None where its primitives would bind."""
    values = host_vjp.cotangent_and_operands(ct, x)
    if values is None:
        return None
    ct_value, x_value = values
    shape, dtype = x_value.shape, x_value.dtype
    n = math.prod(shape[a] for a in axes)
    if n == 0 or not host_vjp.within(arithmetic.mul_p, dtype, x_value.size):
        return None
    kept = kept_axes(len(shape), axes)
    out_shape = reduced_shape(shape, axes)
    perm = (*axes, *kept)
    multiply = host_vjp.rule(arithmetic.mul_p)
    p = x_value.transpose(perm).reshape((n, *out_shape))
    levels = []
    while n > 1:
        half = (n + 1) // 2
        p1, p2 = p[:half], p[half:n]
        if n % 2:
            p2 = np.concatenate([p2, np.ones((1, *out_shape), dtype)])
        levels.append((p1, p2, n))
        p = multiply(p1, p2)
        n = half
    c = ct_value.reshape((1, *out_shape))
    for p1, p2, n in reversed(levels):
        half = p1.shape[0]
        c1, c2 = multiply(c, p2), multiply(p1, c)
        # (+ 0.0: the slices' transposes are zero pads, summed; -0.0 becomes +0.0 as there)
        c = np.add(np.concatenate([c1, c2[: n - half]]), np.zeros((), dtype))
    c = c.reshape([shape[d] for d in perm]).transpose(np.argsort(perm))
    weak = ct.aval.weak_type and not levels  # (the slices' transposes pad with strong zeros)
    return host_vjp.wrap(np.ascontiguousarray(c), shape, ct.aval.update(weak_type=weak))


# Eager grad: the tree's jvp linearized and transposed when a cotangent arrives (on the host,
# by NumPy calls; elsewhere as one program)
def_transposed_jvp_vjp(reduce_prod_p, _reduce_prod_vjp_host)


def _zero_tangent_jvp(prim: Primitive) -> None:
    def jvp(primals, tangents, **params):
        return prim.bind1(*primals, **params), None

    prim.def_jvp(jvp)


_zero_tangent_jvp(reduce_and_p)
_zero_tangent_jvp(reduce_or_p)
_zero_tangent_jvp(reduce_xor_p)


# --- argmax / argmin ------------------------------------------------------------------------


def _arg_chooser(name: str, direction: str, init: Callable[[np.dtype], Any]) -> Primitive:
    """argmax (direction GT) or argmin (LT): first occurrence wins, NaN beats every number."""
    prim = Primitive(name)

    def abstract_eval(x: ShapedArray, *, axis: int, index_dtype: np.dtype) -> ShapedArray:
        if dtypes.kind(x.dtype) not in "biuf":
            raise TypeError(f"{name} does not accept dtype {x.dtype.name}")
        if index_dtype.kind not in "iu":
            raise TypeError(f"{name}: index_dtype must be an integer type, got {index_dtype}")
        check_axes(name, (axis,), x.shape)
        if x.shape[axis] == 0:
            raise ValueError(
                f"{name}: attempt to get {name} of an empty sequence (axis {axis} of shape "
                f"{x.shape})"
            )
        return ShapedArray(reduced_shape(x.shape, (axis,)), index_dtype)

    def combine(b: FunctionBuilder, va: Value, ia: Value, vb: Value, ib: Value) -> list[Value]:
        # Pick (va, ia) iff it comes first in the order: NaN first, then by value in
        # `direction`, then by lower index. A total order, so XLA may combine in any order.
        pred = ShapedArray((), np.dtype(bool))

        def both(p: Value, q: Value) -> Value:
            return b.op("stablehlo.and", [p, q], pred)

        def either(p: Value, q: Value) -> Value:
            return b.op("stablehlo.or", [p, q], pred)

        better = _compare(b, va, vb, direction)
        same = _compare(b, va, vb, "EQ")
        if dtypes.kind(va.aval.dtype) == "f":
            a_nan, b_nan = _compare(b, va, va, "NE"), _compare(b, vb, vb, "NE")
            better = either(better, both(a_nan, b.op("stablehlo.not", [b_nan], pred)))
            same = either(same, both(a_nan, b_nan))
        pick_a = either(better, both(same, _compare(b, ia, ib, "LT")))
        return [
            b.op("stablehlo.select", [pick_a, va, vb], va.aval),
            b.op("stablehlo.select", [pick_a, ia, ib], ia.aval),
        ]

    def lowering(ctx: LoweringContext, x: Value, *, axis: int, index_dtype: np.dtype):
        b = ctx.builder
        dtype = x.aval.dtype
        indices = b.op(
            "stablehlo.iota",
            [],
            ShapedArray(x.aval.shape, index_dtype),
            f"iota_dimension = {axis} : i64",
        )
        value_scalar, index_scalar = ShapedArray((), dtype), ShapedArray((), index_dtype)
        region = b.region([value_scalar, index_scalar] * 2, combine)
        out = ctx.aval_out
        _, index = b.op(
            "stablehlo.reduce",
            [
                x,
                indices,
                scalar_constant(b, init(dtype), dtype),
                scalar_constant(b, 0, index_dtype),
            ],
            [out.update(dtype=dtype), out],
            f"dimensions = {i64_array((axis,))}",
            regions=[region],
        )
        return index

    def jvp(primals, tangents, *, axis, index_dtype):
        return prim.bind1(*primals, axis=axis, index_dtype=index_dtype), None

    def batching(vals, dims, *, axis, index_dtype):
        (x,), (bdim,) = vals, dims
        moved = axis + (axis >= bdim)
        out = prim.bind1(x, axis=moved, index_dtype=index_dtype)
        return out, bdim - (moved < bdim)

    def host(x: np.ndarray, *, axis: int, index_dtype: np.dtype) -> np.ndarray:
        # NumPy's argmax/argmin: first occurrence, and the first NaN wins, as in `combine`.
        pick = np.argmax if direction == "GT" else np.argmin
        return np.asarray(pick(x, axis=axis)).astype(index_dtype)

    prim.def_abstract_eval(abstract_eval)
    prim.def_lowering(lowering)
    prim.def_jvp(jvp)
    prim.def_batching(batching)
    prim.def_host(host)
    return prim


# The identity elements lose every comparison that matters: a row equal to them everywhere
# has its first occurrence at index 0, which is what the initial index says.
argmax_p = _arg_chooser("argmax", "GT", _lowest)
argmin_p = _arg_chooser("argmin", "LT", _highest)


def argmax(x: ArrayLike, axis: int, index_dtype: Any) -> Any:
    """Index of the largest element along `axis`: the first one among ties, as in NumPy, and
    the first NaN if there is one."""
    (axis,) = normalize_axes(x, (axis,))
    index_dtype = dtypes.canonicalize_dtype(index_dtype, "argmax")
    return argmax_p.bind1(x, axis=axis, index_dtype=index_dtype)


def argmin(x: ArrayLike, axis: int, index_dtype: Any) -> Any:
    """Index of the smallest element along `axis`: the first one among ties, as in NumPy, and
    the first NaN if there is one."""
    (axis,) = normalize_axes(x, (axis,))
    index_dtype = dtypes.canonicalize_dtype(index_dtype, "argmin")
    return argmin_p.bind1(x, axis=axis, index_dtype=index_dtype)


# --- reduce: any computation, any number of operands ----------------------------------------


class _Computation:
    """A reduction's computation traced on scalars, compared by its text and constants, so
    that eager calls with equal computations share one compiled executable."""

    __slots__ = ("closed", "_key")

    def __init__(self, closed: ClosedJaxpr):
        self.closed = closed
        consts = tuple(
            (a.dtype.str, a.shape, a.tobytes()) for a in (np.asarray(c) for c in closed.consts)
        )
        self._key = (str(closed.jaxpr), consts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Computation) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"_Computation({self.closed.jaxpr})"


reduce_p = Primitive("reduce", multiple_results=True)


def reduce(
    operands: Any,
    init_values: Any,
    computation: Callable[[Any, Any], Any],
    dimensions: Sequence[int],
) -> Any:
    """Reduce `operands` over `dimensions` with `computation`, as JAX's `lax.reduce`.

    Meaning, for one operand and one reduced axis (pytrees of operands reduce together, and
    `computation` then maps two such pytrees of scalars to one)::

        acc = init_value
        for x in operand (along the axis): acc = computation(acc, x)

    `computation` must be associative and commutative with `init_values` its identity: XLA
    combines in any order. `lax.add`, `lax.mul`, `lax.max`, `lax.min` and the bitwise
    `and`/`or`/`xor` with their identities use the dedicated reductions (as in JAX).

    Raises:
      ValueError: if `operands` and `init_values` differ in structure.
      TypeError: if `computation` does not return their structure and types.
      NotImplementedError: if `computation` closes over traced values (as in JAX).
    """
    flat_ops, tree = tree_flatten(operands)
    flat_inits, init_tree = tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(
            "reduce: operands must have the same tree structure as init_values: "
            f"{tree} vs. {init_tree}"
        )
    dims = tuple(operator.index(d) for d in dimensions)
    if len(flat_ops) == 1:
        reducer = _monoidmonoid_reduction(computation, flat_inits[0], get_aval(flat_ops[0]).dtype)
        if reducer is not None:
            return tree_unflatten(tree, [reducer(flat_ops[0], dims) if dims else flat_ops[0]])
    op_avals = [get_aval(x) for x in flat_ops]
    inits = []
    for init, aval in zip(flat_inits, op_avals, strict=True):
        init_aval = get_aval(init)
        if init_aval.dtype != aval.dtype and init_aval.weak_type:
            init = convert_element_type(init, aval.dtype)
        inits.append(init)
    scalars = [ShapedArray((), a.dtype) for a in op_avals]
    n = len(flat_ops)

    def flat_computation(*xs: Any) -> list[Any]:
        out = computation(tree_unflatten(tree, xs[:n]), tree_unflatten(tree, xs[n:]))
        out_flat, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise TypeError(
                f"reduce: computation must return the structure of the operands ({tree}), "
                f"got {out_tree}"
            )
        return out_flat

    closed = trace_to_jaxpr(flat_computation, scalars * 2, "reduce computation")
    if [(a.shape, a.dtype) for a in closed.out_avals] != [(a.shape, a.dtype) for a in scalars]:
        raise TypeError(
            "reduce: computation must return scalars of the operand dtypes "
            f"{[a.str_short() for a in scalars]}, got "
            f"{[a.str_short() for a in closed.out_avals]}"
        )
    if any(isinstance(c, core.Tracer) for c in closed.consts):
        raise NotImplementedError("reduce: the computation cannot close over traced values")
    outs = reduce_p.bind(*flat_ops, *inits, computation=_Computation(closed), dimensions=dims)
    return tree_unflatten(tree, outs)


def _monoidmonoid_reduction(
    computation: Any, init: Any, dtype: np.dtype
) -> Callable[[Any, tuple[int, ...]], Any] | None:
    """The dedicated reduction for `computation` when `init` is its (concrete) identity."""
    if isinstance(init, core.Tracer) or get_aval(init).shape != ():
        return None
    intlike = dtype.kind in "biu"
    table: list[tuple[Any, Callable[..., Any], Any, bool]] = [
        (arithmetic.add, reduce_sum, 0, True),
        (arithmetic.mul, reduce_prod, 1, True),
        (arithmetic.max, reduce_max, _lowest(dtype), True),
        (arithmetic.min, reduce_min, _highest(dtype), True),
        (bitwise.bitwise_or, reduce_or, 0, intlike),
        (bitwise.bitwise_and, reduce_and, _all_ones(dtype) if intlike else 0, intlike),
        (bitwise.bitwise_xor, reduce_xor, 0, intlike),
    ]
    value = np.asarray(init)
    for op, reducer, identity, allowed in table:
        if computation is op and allowed:
            return reducer if bool(np.equal(value, np.asarray(identity, value.dtype))) else None
    return None


@reduce_p.def_abstract_eval
def _reduce_abstract_eval(
    *avals: ShapedArray, computation: _Computation, dimensions: tuple[int, ...]
) -> list[ShapedArray]:
    n = len(avals) // 2
    ops, inits = avals[:n], avals[n:]
    shape = ops[0].shape
    if any(a.shape != shape for a in ops):
        raise TypeError(f"reduce: operands must have one shape, got {[a.shape for a in ops]}")
    for op, init in zip(ops, inits, strict=True):
        if init.shape != () or init.dtype != op.dtype:
            raise TypeError(
                f"reduce: init values must be scalars of the operand dtypes, got "
                f"{init.str_short()} for an operand of {op.dtype.name}"
            )
    check_axes("reduce", dimensions, shape)
    out_shape = reduced_shape(shape, dimensions)
    return [ShapedArray(out_shape, op.dtype, op.weak_type) for op in ops]


@reduce_p.def_lowering
def _reduce_lowering(
    ctx: LoweringContext, *args: Value, computation: _Computation, dimensions: tuple[int, ...]
) -> list[Value]:
    b = ctx.builder
    n = len(args) // 2
    scalars = [ShapedArray((), a.dtype) for a in ctx.avals_in[:n]]
    closed = computation.closed

    def body(rb: FunctionBuilder, *xs: Value) -> list[Value]:
        consts = [rb.constant(np.asarray(c), get_aval(c).strip_weak_type()) for c in closed.consts]
        return lower_jaxpr_body(rb, closed.jaxpr, consts, xs)

    region = b.region(scalars * 2, body)
    outs = b.op(
        "stablehlo.reduce",
        list(args),
        [a.strip_weak_type() for a in ctx.avals_out],
        f"dimensions = {i64_array(dimensions)}",
        regions=[region],
    )
    return outs if isinstance(outs, list) else [outs]


def _reduce_jvp(
    primals: list[Any],
    tangents: list[Any],
    *,
    computation: _Computation,
    dimensions: tuple[int, ...],
) -> tuple[list[Any], list[Any]]:
    # As JAX: reduce a balanced tree of halves with the computation itself, which jvp can see
    # through (log depth); the init values are taken to be identities, with no tangent.
    n = len(primals) // 2
    ops, inits = primals[:n], primals[n:]
    shape = get_aval(ops[0]).shape
    kept = kept_axes(len(shape), dimensions)
    kept_shape = tuple(shape[d] for d in kept)
    size = math.prod(shape[d] for d in dimensions)
    perm = (*dimensions, *kept)

    def flatten(x: Any) -> Any:
        return reshape(transpose(x, perm), (size, *kept_shape))

    def flatten_tangent(t: Any) -> Any:
        if type(t) is Zero:
            return Zero(t.aval.update(shape=(size, *kept_shape)))
        return flatten(t)

    combine = functools.partial(eval_jaxpr, computation.closed.jaxpr, computation.closed.consts)
    no_pad = ((0, 0, 0),) * len(kept_shape)

    def tree(*xs: Any) -> list[Any]:
        xs_list = list(xs)
        m = size
        while m > 1:
            m1 = (m + 1) // 2
            lo = [slice_in_dim(x, 0, m1, 0) for x in xs_list]
            hi = [slice_in_dim(x, m1, m, 0) for x in xs_list]
            if m - m1 != m1:
                hi = [pad(h, i, ((0, 1, 0), *no_pad)) for h, i in zip(hi, inits, strict=True)]
            xs_list = combine(*lo, *hi)
            m = m1
        if m == 0:
            return [broadcast_in_dim(i, kept_shape, ()) for i in inits]
        return [reshape(x, kept_shape) for x in xs_list]

    return jvp_flat(tree, [flatten(x) for x in ops], [flatten_tangent(t) for t in tangents[:n]])


reduce_p.def_jvp(_reduce_jvp, symbolic_zeros=True)


@reduce_p.def_batching
def _reduce_batching(
    vals: list[Any],
    dims: list[int | None],
    *,
    computation: _Computation,
    dimensions: tuple[int, ...],
) -> tuple[list[Any], list[int | None]]:
    n = len(vals) // 2
    if any(d is not NOT_MAPPED for d in dims[n:]):
        raise NotImplementedError("reduce: batched init_values are not supported (as in JAX)")
    size = next(get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not None)
    ops = [moveaxis_to(v, d, 0, size) for v, d in zip(vals[:n], dims[:n], strict=True)]
    moved = tuple(d + 1 for d in dimensions)
    outs = reduce_p.bind(*ops, *vals[n:], computation=computation, dimensions=moved)
    return outs, [0] * n


__all__ = [
    "argmax",
    "argmin",
    "reduce",
    "reduce_and",
    "reduce_max",
    "reduce_min",
    "reduce_or",
    "reduce_prod",
    "reduce_sum",
    "reduce_xor",
]
