"""Windowed reductions (Autodidax's reduce_sum grown a sliding window): reduce_window_sum, _max
and _min, one `stablehlo.reduce_window` each, behind JAX's `lax.reduce_window`."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mjcore import dtypes
from mjcore.ad import linear_jvp
from mjcore.backend.hlo import i64_array
from mjcore.backend.lowering import LoweringContext
from mjcore.core import Primitive, ShapedArray, Tracer, get_aval
from mjcore.lax import arithmetic, host
from mjcore.lax.base import full, select_n
from mjcore.lax.comparison import eq
from mjcore.lax.families import scalar_constant
from mjcore.lax.reductions import _highest, _lowest
from mjcore.lax.slicing import slice as slice_
from mjcore.lax.structural import pad

ArrayLike = Any
Shape = tuple[int, ...]
Padding = tuple[tuple[int, int], ...]


def _dilate(size: int, dilation: int) -> int:
    """The extent of `size` elements with `dilation - 1` holes between neighbours."""
    return 0 if size == 0 else (size - 1) * dilation + 1


def _check_lengths(name: str, shape: Shape, **params: Sequence[Any]) -> None:
    for label, values in params.items():
        if len(values) != len(shape):
            raise ValueError(
                f"{name}: {label} {tuple(values)} needs one entry per axis of the operand of "
                f"shape {shape}, got {len(values)}"
            )


def _window_shape(
    name: str,
    shape: Shape,
    window_dimensions: Shape,
    window_strides: Shape,
    padding: Padding,
    base_dilation: Shape,
    window_dilation: Shape,
) -> Shape:
    """The output shape of a windowed reduction, after checking its parameters against `shape`."""
    sizes = {
        "window_dimensions": window_dimensions,
        "window_strides": window_strides,
        "base_dilation": base_dilation,
        "window_dilation": window_dilation,
    }
    _check_lengths(name, shape, padding=padding, **sizes)
    for label, values in sizes.items():
        if any(v < 1 for v in values):
            raise ValueError(f"{name}: {label} must be positive, got {values}")
    out = []
    for d, w, s, (lo, hi), bd, wd in zip(
        shape,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
        strict=True,
    ):
        padded = _dilate(d, bd) + lo + hi
        if padded < 0:
            raise ValueError(
                f"{name}: padding {padding} crops more than the operand of shape {shape} holds"
            )
        out.append(max(0, (padded - _dilate(w, wd)) // s + 1))
    return tuple(out)


def _windowed(
    name: str,
    kinds: str,
    hlo_op: Callable[[np.dtype], str],
    identity: Callable[[np.dtype], Any],
    numpy_ufunc: np.ufunc,
) -> Primitive:
    """A windowed reduction with its abstract_eval, lowering, batching and host rules
    (`numpy_ufunc` is the combiner in NumPy).

    `hlo_op(dtype)` names the StableHLO combiner and `identity(dtype)` its identity, which
    also fills the padding and the holes of base dilation.
    """
    prim = Primitive(name)

    def abstract_eval(x: ShapedArray, **window: Any) -> ShapedArray:
        if dtypes.kind(x.dtype) not in kinds:
            raise TypeError(f"{name} does not accept dtype {x.dtype.name}")
        return ShapedArray(_window_shape(name, x.shape, **window), x.dtype, x.weak_type)

    def lowering(
        ctx: LoweringContext,
        x: Any,
        *,
        window_dimensions: Shape,
        window_strides: Shape,
        padding: Padding,
        base_dilation: Shape,
        window_dilation: Shape,
    ) -> Any:
        b = ctx.builder
        dtype = x.aval.dtype
        scalar = ShapedArray((), dtype)
        op = hlo_op(dtype)
        region = b.region([scalar, scalar], lambda rb, acc, y: [rb.op(op, [acc, y], scalar)])
        attrs = f"window_dimensions = {i64_array(window_dimensions)}"
        if window_dimensions:  # a rank-0 operand takes no further window attributes
            rows = ", ".join(f"[{lo}, {hi}]" for lo, hi in padding)
            attrs += (
                f", window_strides = {i64_array(window_strides)}"
                f", base_dilations = {i64_array(base_dilation)}"
                f", window_dilations = {i64_array(window_dilation)}"
                f", padding = dense<[{rows}]> : tensor<{len(padding)}x2xi64>"
            )
        return b.op(
            "stablehlo.reduce_window",
            [x, scalar_constant(b, identity(dtype), dtype)],
            ctx.aval_out.strip_weak_type(),
            attrs,
            regions=[region],
        )

    def batching(vals, dims, **window):
        # The batch axis gets a window of one element: no stride, padding or dilation.
        (x,), (bdim,) = vals, dims
        unit = {k: (0, 0) if k == "padding" else 1 for k in window}
        batched = {k: (*v[:bdim], unit[k], *v[bdim:]) for k, v in window.items()}
        return prim.bind1(x, **batched), bdim

    prim.def_abstract_eval(abstract_eval)
    prim.def_lowering(lowering)
    prim.def_batching(batching)
    prim.def_host(host.reduce_window(numpy_ufunc, identity))
    return prim


reduce_window_sum_p = _windowed(
    "reduce_window_sum", "iufc", lambda dt: "stablehlo.add", lambda dt: 0, np.add
)
reduce_window_max_p = _windowed(
    "reduce_window_max",
    "biuf",
    lambda dt: "stablehlo.or" if dt.kind == "b" else "stablehlo.maximum",
    _lowest,
    np.maximum,
)
reduce_window_min_p = _windowed(
    "reduce_window_min",
    "biuf",
    lambda dt: "stablehlo.and" if dt.kind == "b" else "stablehlo.minimum",
    _highest,
    np.minimum,
)


# --- reduce_window_sum is linear ------------------------------------------------------------

linear_jvp(reduce_window_sum_p)


@reduce_window_sum_p.def_transpose
def _reduce_window_sum_transpose(
    ct, x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation
):
    # Each input element receives the sum of the cotangents of the windows covering it: pad
    # the cotangent (strides become holes) and sum it over the same window, striding by the
    # base dilation so only the real input positions are visited (JAX's transpose rule).
    in_shape, ct_shape = x.aval.shape, get_aval(ct).shape
    config = []
    for d, w, s, (lo, _), bd, wd, n in zip(
        in_shape,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
        ct_shape,
        strict=True,
    ):
        before = _dilate(w, wd) - lo - 1
        after = _dilate(d, bd) + _dilate(w, wd) - 1 - _dilate(n, s) - before
        config.append((before, after, s - 1))
    padded = pad(ct, 0, config)
    ones = (1,) * len(in_shape)
    x_bar = reduce_window_sum_p.bind1(
        padded,
        window_dimensions=window_dimensions,
        window_strides=base_dilation,
        padding=((0, 0),) * len(in_shape),
        base_dilation=ones,
        window_dilation=window_dilation,
    )
    return [x_bar]


# --- reduce_window_max / _min choose an element -----------------------------------------------


def _window_views(
    x: Any,
    fill: Any,
    out_shape: Shape,
    *,
    window_dimensions: Shape,
    window_strides: Shape,
    padding: Padding,
    base_dilation: Shape,
    window_dilation: Shape,
) -> list[Any]:
    """One strided slice of the padded, dilated `x` per offset in the window, in row-major
    window order: view k holds, for every output position, the k-th element of its window."""
    if 0 in out_shape:
        return []
    config = [(lo, hi, bd - 1) for (lo, hi), bd in zip(padding, base_dilation, strict=True)]
    if any(c != (0, 0, 0) for c in config):
        x = pad(x, fill, config)
    views = []
    for offset in itertools.product(*(range(w) for w in window_dimensions)):
        starts = [k * wd for k, wd in zip(offset, window_dilation, strict=True)]
        limits = [
            start + (n - 1) * s + 1
            for start, n, s in zip(starts, out_shape, window_strides, strict=True)
        ]
        views.append(slice_(x, starts, limits, window_strides))
    return views


def _chooser_jvp(prim: Primitive, fill: Callable[[np.dtype], Any]) -> None:
    """max/min: each output's tangent is that of the first chosen element in its window.

    JAX gives the whole cotangent of a window to its first maximal (minimal) element in
    row-major window order (`select_and_scatter_add` with `ge`); this rule picks that element's
    tangent, so jvp and vjp agree with JAX even on ties. It is built from pad, slice and
    select_n (one slice per window offset), so it transposes and batches with no rules of
    its own.
    """

    def jvp(primals, tangents, **window):
        (x,), (x_dot,) = primals, tangents
        out = prim.bind1(x, **window)
        aval = get_aval(x)
        if not dtypes.is_inexact(aval.dtype):
            return out, None
        out_shape = get_aval(out).shape
        x_views = _window_views(x, fill(aval.dtype), out_shape, **window)
        t_views = _window_views(x_dot, 0, out_shape, **window)
        out_dot = full(out_shape, 0, get_aval(x_dot).dtype)
        # Last offset first, so an earlier matching element overwrites a later one.
        for x_view, t_view in reversed(list(zip(x_views, t_views, strict=True))):
            out_dot = select_n(eq(x_view, out), out_dot, t_view)
        return out, out_dot

    prim.def_jvp(jvp)


_chooser_jvp(reduce_window_max_p, _lowest)
_chooser_jvp(reduce_window_min_p, _highest)


# --- the public entry point -----------------------------------------------------------------


def _concrete_scalar(x: Any) -> Any:
    """The value of `x` as a NumPy scalar, or None while it is traced."""
    if isinstance(x, Tracer):
        value = x.to_concrete_value()
        return None if value is None else np.asarray(value)
    return np.asarray(x)


def _int_tuple(name: str, label: str, values: Sequence[int]) -> Shape:
    try:
        return tuple(int(v) for v in values)
    except TypeError as err:
        raise TypeError(f"{name}: {label} must be a sequence of integers, got {values!r}") from err


def _normalize_padding(
    padding: str | Sequence[tuple[int, int]],
    shape: Shape,
    window_dimensions: Shape,
    window_strides: Shape,
    window_dilation: Shape,
) -> Padding:
    """(low, high) pairs per axis; 'SAME' pads so that the output has ceil(size / stride)
    elements, the odd one at the end ('SAME_LOWER': at the start), as `lax.padtype_to_pads`."""
    name = "reduce_window"
    if isinstance(padding, str):
        kind = padding.upper()
        if kind == "VALID":
            return ((0, 0),) * len(shape)
        if kind not in ("SAME", "SAME_LOWER"):
            raise ValueError(
                f"{name}: padding must be 'SAME', 'SAME_LOWER', 'VALID' or a sequence of "
                f"(low, high) pairs, got {padding!r}"
            )
        pads = []
        for d, w, s, wd in zip(
            shape, window_dimensions, window_strides, window_dilation, strict=True
        ):
            total = max(0, (-(-d // s) - 1) * s + _dilate(w, wd) - d)
            small, large = total // 2, total - total // 2
            pads.append((small, large) if kind == "SAME" else (large, small))
        return tuple(pads)
    try:
        pairs = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"{name}: padding must be 'SAME', 'SAME_LOWER', 'VALID' or a sequence of "
            f"(low, high) pairs, got {padding!r}"
        ) from err
    _check_lengths(name, shape, padding=pairs)
    return pairs


def reduce_window(
    operand: ArrayLike,
    init_value: ArrayLike,
    computation: Callable[[Any, Any], Any],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None = None,
    padding: str | Sequence[tuple[int, int]] = "VALID",
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> Any:
    """Reduce every window of `operand` with `computation`, as JAX's `lax.reduce_window`.

    The operand is dilated (`base_dilation - 1` holes between neighbours), padded, then a
    window of `window_dimensions` (spread by `window_dilation`) slides over it by
    `window_strides`; padding and holes count as `init_value`.

    Args:
      operand: the array to reduce.
      init_value: a scalar; the identity of `computation` (0, or the lowest/highest value of
        the dtype), or for max/min any scalar, which then joins every window.
      computation: `mjcore.lax.add`, `mjcore.lax.max` or `mjcore.lax.min`.
      window_dimensions: the window's size along each axis.
      window_strides: the step between windows along each axis (default 1).
      padding: 'VALID' (none), 'SAME' / 'SAME_LOWER' (as many outputs as ceil(size /
        stride)), or one (low, high) pair per axis; negative entries crop.
      base_dilation, window_dilation: dilation factors per axis (default 1).

    Returns:
      One element per window, of `operand`'s dtype.

    Raises:
      NotImplementedError: for any other `computation`, a pytree `operand`, or `lax.add` with
        an init_value that is not a concrete zero.
      ValueError: when a window parameter does not have one entry per axis, or is not
        positive.
    """
    name = "reduce_window"
    if isinstance(operand, list | tuple | dict):
        raise NotImplementedError(f"{name}: pytree operands are not supported; pass one array")
    if computation is arithmetic.add:
        prim, identity = reduce_window_sum_p, None
    elif computation is arithmetic.max:
        prim, identity = reduce_window_max_p, _lowest
    elif computation is arithmetic.min:
        prim, identity = reduce_window_min_p, _highest
    else:
        raise NotImplementedError(
            f"{name}: computation {getattr(computation, '__name__', computation)!r} is not "
            "supported; use mjcore.lax.add, mjcore.lax.max or mjcore.lax.min"
        )
    aval = get_aval(operand)
    shape = aval.shape
    window_dimensions = _int_tuple(name, "window_dimensions", window_dimensions)
    ones = (1,) * len(window_dimensions)
    params = {
        "window_strides": ones if window_strides is None else window_strides,
        "base_dilation": ones if base_dilation is None else base_dilation,
        "window_dilation": ones if window_dilation is None else window_dilation,
    }
    window = {k: _int_tuple(name, k, v) for k, v in params.items()}
    _check_lengths(name, shape, window_dimensions=window_dimensions, **window)
    pads = _normalize_padding(
        padding, shape, window_dimensions, window["window_strides"], window["window_dilation"]
    )
    _window_shape(name, shape, window_dimensions, padding=pads, **window)
    init_aval = get_aval(init_value)
    if init_aval.ndim != 0:
        raise ValueError(f"{name}: init_value must be a scalar, got shape {init_aval.shape}")
    init = _concrete_scalar(init_value)
    if identity is None and (init is None or not bool(init == 0)):
        raise NotImplementedError(
            f"{name}: lax.add needs init_value 0 (got {init_value!r}); add any other "
            "initial value to the result"
        )
    out = prim.bind1(operand, window_dimensions=window_dimensions, padding=pads, **window)
    if identity is None or (
        init is not None
        and bool(
            init <= identity(aval.dtype) if identity is _lowest else init >= identity(aval.dtype)
        )
    ):
        return out
    # max and min are idempotent: an init_value that joins every window (and fills its padding)
    # joins the result once.
    return computation(out, init_value)


def reduce_window_shape_tuple(
    operand_shape: Sequence[int],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> tuple[int, ...]:
    """The output shape of `reduce_window` with explicit (low, high) `padding`, as JAX's."""
    n = len(operand_shape)
    base = (1,) * n if base_dilation is None else base_dilation
    wdil = (1,) * n if window_dilation is None else window_dilation
    return tuple(
        (_dilate(int(size), b) + lo + hi - _dilate(int(w), d)) // s + 1
        for size, w, s, (lo, hi), b, d in zip(
            operand_shape, window_dimensions, window_strides, padding, base, wdil, strict=True
        )
    )


__all__ = ["reduce_window", "reduce_window_shape_tuple"]
