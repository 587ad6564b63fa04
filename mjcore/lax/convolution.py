"""`conv_general_dilated`: XLA's N-dimensional convolution with strides, padding, dilations and
feature/batch groups, a bilinear primitive like `dot_general` (Autodidax Part 1's primitives)."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from mjcore import dtypes
from mjcore.ad import Zero, is_undefined_primal
from mjcore.backend.custom_call import lowering_platform
from mjcore.backend.hlo import Value, i64_array
from mjcore.backend.lowering import LoweringContext, lower_fun
from mjcore.batching import NOT_MAPPED
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.lax.arithmetic import add, sub
from mjcore.lax.base import convert_element_type, full, reshape, transpose
from mjcore.lax.complex import complex as make_complex
from mjcore.lax.complex import imag, real
from mjcore.lax.dot import can_accumulate, matmul_precision, precision_attr
from mjcore.lax.families import check_same_dtypes, convert
from mjcore.lax.structural import rev

ArrayLike = Any
Dims = tuple[int, ...]
Padding = tuple[tuple[int, int], ...]


class ConvDimensionNumbers(NamedTuple):
    """Where each logical dimension of a convolution's operands and result lives.

    `lhs_spec` is `(batch, feature, spatial...)`, `rhs_spec` is
    `(out feature, in feature, spatial...)` and `out_spec` is `(batch, feature, spatial...)`,
    each a tuple of axis numbers.
    """

    lhs_spec: Dims
    rhs_spec: Dims
    out_spec: Dims


def conv_dimension_numbers(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], dimension_numbers: Any
) -> ConvDimensionNumbers:
    """Canonicalise `dimension_numbers` (None, a `ConvDimensionNumbers`, or three strings such
    as `('NHWC', 'HWIO', 'NHWC')`) to a `ConvDimensionNumbers` of axis tuples.

    In the string form, `N`/`C` name the batch and feature axes of lhs and output, `O`/`I` the
    output and input feature axes of rhs, and every other letter a spatial axis; spatial axes
    are ordered as they appear in the rhs string. None means `NCH...`, `OIH...`, `NCH...`.
    """
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        specs = ConvDimensionNumbers(*(tuple(int(d) for d in s) for s in dimension_numbers))
        for name, spec in zip(("lhs", "rhs", "out"), specs, strict=True):
            if sorted(spec) != list(range(len(lhs_shape))):
                raise ValueError(
                    f"conv_general_dilated: dimension_numbers.{name}_spec {spec} must be a "
                    f"permutation of the axes of lhs and rhs, of shapes {tuple(lhs_shape)} "
                    f"and {tuple(rhs_shape)}"
                )
        return specs
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(
            "conv_general_dilated: lhs and rhs must have the same number of dimensions, got "
            f"shapes {tuple(lhs_shape)} and {tuple(rhs_shape)}"
        )
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, list | tuple):
        raise TypeError(
            "conv_general_dilated: dimension_numbers must be None, a ConvDimensionNumbers or "
            f"a tuple of three strings, got {type(dimension_numbers).__name__}"
        )
    if len(dimension_numbers) != 3 or not all(isinstance(s, str) for s in dimension_numbers):
        raise TypeError(
            "conv_general_dilated: dimension_numbers must be three strings such as "
            f"('NCHW', 'OIHW', 'NCHW'), got {dimension_numbers!r}"
        )
    for i, spec in enumerate(dimension_numbers):
        if len(spec) != len(lhs_shape):
            raise TypeError(
                f"conv_general_dilated: dimension_numbers[{i}] = {spec!r} must have one letter "
                f"per dimension of lhs and rhs, of shapes {tuple(lhs_shape)} and "
                f"{tuple(rhs_shape)}"
            )
    return ConvDimensionNumbers(*_spec_permutations(tuple(dimension_numbers)))


def _spec_permutations(specs: tuple[str, str, str]) -> tuple[Dims, Dims, Dims]:
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (spec, (a, b)) in enumerate(zip(specs, pairs, strict=True)):
        if spec.count(a) != 1 or spec.count(b) != 1 or len(set(spec)) != len(spec):
            raise TypeError(
                f"conv_general_dilated: dimension_numbers[{i}] = {spec!r} must hold '{a}' and "
                f"'{b}' once each and no repeated letters"
            )
    spatial = [set(spec) - set(pair) for spec, pair in zip(specs, pairs, strict=True)]
    if not spatial[0] == spatial[1] == spatial[2]:
        raise TypeError(
            "conv_general_dilated: the three dimension_numbers strings must name the same "
            f"spatial letters, got {specs}"
        )
    rhs_spatial = [c for c in specs[1] if c not in "OI"]
    lhs_perm, rhs_perm, out_perm = (
        (spec.index(a), spec.index(b), *(spec.index(c) for c in rhs_spatial))
        for spec, (a, b) in zip(specs, pairs, strict=True)
    )
    return lhs_perm, rhs_perm, out_perm


def _dilate_dim(size: int, dilation: int) -> int:
    return 0 if size == 0 else 1 + dilation * (size - 1)


def _padtype_to_pads(
    in_shape: Sequence[int],
    window_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: str,
) -> list[tuple[int, int]]:
    """(low, high) pads for 'VALID', 'SAME' (odd padding extra at the end) or 'SAME_LOWER'
    (extra at the start); 'SAME' gives an output of size ceil(in / stride)."""
    mode = padding.upper()
    if mode == "VALID":
        return [(0, 0)] * len(in_shape)
    if mode not in ("SAME", "SAME_LOWER"):
        raise ValueError(
            f"conv_general_dilated: padding must be 'SAME', 'SAME_LOWER', 'VALID' or a "
            f"sequence of (low, high) pairs, got {padding!r}"
        )
    pads = []
    for size, window, stride in zip(in_shape, window_shape, window_strides, strict=True):
        out = -(-size // stride)
        total = max((out - 1) * stride + window - size, 0)
        small, big = total // 2, total - total // 2
        pads.append((small, big) if mode == "SAME" else (big, small))
    return pads


def _int_tuple(fname: str, name: str, values: Sequence[int], n: int) -> Dims:
    try:
        out = tuple(operator.index(v) for v in values)
    except TypeError as err:
        raise TypeError(f"{fname}: {name} must be a sequence of integers, got {values!r}") from err
    if len(out) != n:
        raise ValueError(
            f"{fname}: {name} must have one entry per spatial dimension ({n}), got {out}"
        )
    if any(v < 1 for v in out):
        raise ValueError(f"{fname}: {name} must be positive, got {out}")
    return out


# --- conv_general_dilated -------------------------------------------------------------------

conv_general_dilated_p = Primitive("conv_general_dilated")


def conv_general_dilated(
    lhs: ArrayLike,
    rhs: ArrayLike,
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """General N-dimensional convolution (JAX's `lax.conv_general_dilated`).

    Each output element is `sum(lhs_window * rhs)` over the input features and the window, as
    in XLA's `Conv`: the lhs is dilated by `lhs_dilation` (zeros between elements, a
    transposed convolution), padded by `padding`, then the rhs, dilated by `rhs_dilation`
    (atrous), slides over it with steps `window_strides`. No kernel flip (cross-correlation).

    Args:
      lhs, rhs: input and kernel, of the same rank `n + 2` and dtype.
      window_strides: `n` positive strides.
      padding: 'SAME', 'SAME_LOWER', 'VALID', or `n` (low, high) pairs (negative crops).
      lhs_dilation, rhs_dilation: `n` positive factors each, default 1.
      dimension_numbers: see `conv_dimension_numbers`; spatial axes pair up by rhs order.
      feature_group_count: split lhs features and rhs output features into this many groups.
      batch_group_count: split the lhs batch and rhs output features into this many groups.
      precision: a `Precision`, its string or a pair, validated as JAX does (CPU
        convolutions run at full precision whatever it says).
      preferred_element_type: the accumulation and result dtype.
    """
    lhs_shape, rhs_shape = get_aval(lhs).shape, get_aval(rhs).shape
    dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    n = len(lhs_shape) - 2
    if n < 0:
        raise ValueError(
            "conv_general_dilated: lhs and rhs need a batch and a feature dimension, got "
            f"shapes {lhs_shape} and {rhs_shape}"
        )
    window_strides = _int_tuple("conv_general_dilated", "window_strides", window_strides, n)
    lhs_dilation = _int_tuple(
        "conv_general_dilated",
        "lhs_dilation",
        (1,) * n if lhs_dilation is None else lhs_dilation,
        n,
    )
    rhs_dilation = _int_tuple(
        "conv_general_dilated",
        "rhs_dilation",
        (1,) * n if rhs_dilation is None else rhs_dilation,
        n,
    )
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ValueError(
                "conv_general_dilated: string padding is not supported with lhs_dilation "
                f"{lhs_dilation}; give explicit (low, high) pairs or use conv_transpose"
            )
        window = [
            _dilate_dim(rhs_shape[d], r)
            for d, r in zip(dnums.rhs_spec[2:], rhs_dilation, strict=True)
        ]
        in_shape = [lhs_shape[d] for d in dnums.lhs_spec[2:]]
        padding = _padtype_to_pads(in_shape, window, window_strides, padding)
    try:
        pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError) as err:
        raise ValueError(
            "conv_general_dilated: padding must be 'SAME', 'SAME_LOWER', 'VALID' or a "
            f"sequence of (low, high) integer pairs, got {padding!r}"
        ) from err
    if len(pads) != n:
        raise ValueError(
            f"conv_general_dilated: padding needs one (low, high) pair per spatial dimension "
            f"({n}), got {pads}"
        )
    if preferred_element_type is not None:
        preferred_element_type = dtypes.canonicalize_dtype(
            preferred_element_type, "conv_general_dilated"
        )
    return conv_general_dilated_p.bind1(
        lhs,
        rhs,
        window_strides=window_strides,
        padding=pads,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        dimension_numbers=dnums,
        feature_group_count=operator.index(feature_group_count),
        batch_group_count=operator.index(batch_group_count),
        precision=matmul_precision(precision),  # XLA:CPU computes at full precision always
        preferred_element_type=preferred_element_type,
    )


def _check_groups(
    lhs: ShapedArray,
    rhs: ShapedArray,
    dnums: ConvDimensionNumbers,
    feature_group_count: int,
    batch_group_count: int,
) -> None:
    shapes = f"for lhs shape {lhs.shape} and rhs shape {rhs.shape}"
    if feature_group_count < 1 or batch_group_count < 1:
        raise ValueError(
            "conv_general_dilated: feature_group_count and batch_group_count must be "
            f"positive, got {feature_group_count} and {batch_group_count}"
        )
    if feature_group_count > 1 and batch_group_count > 1:
        raise ValueError(
            "conv_general_dilated: at most one of feature_group_count and batch_group_count "
            f"may exceed 1, got {feature_group_count} and {batch_group_count}"
        )
    in_features = lhs.shape[dnums.lhs_spec[1]]
    kernel_in = rhs.shape[dnums.rhs_spec[1]]
    kernel_out = rhs.shape[dnums.rhs_spec[0]]
    if in_features % feature_group_count or in_features // feature_group_count != kernel_in:
        raise ValueError(
            f"conv_general_dilated: the lhs feature dimension ({in_features}) must equal the "
            f"rhs input feature dimension ({kernel_in}) times feature_group_count "
            f"({feature_group_count}) {shapes}"
        )
    groups = max(feature_group_count, batch_group_count)
    if kernel_out % groups:
        raise ValueError(
            f"conv_general_dilated: the rhs output feature dimension ({kernel_out}) must be a "
            f"multiple of the group count ({groups}) {shapes}"
        )
    batch = lhs.shape[dnums.lhs_spec[0]]
    if batch % batch_group_count:
        raise ValueError(
            f"conv_general_dilated: batch_group_count ({batch_group_count}) must divide the "
            f"lhs batch dimension ({batch}) {shapes}"
        )


@conv_general_dilated_p.def_abstract_eval
def _conv_general_dilated_abstract_eval(
    lhs: ShapedArray,
    rhs: ShapedArray,
    *,
    window_strides: Dims,
    padding: Padding,
    lhs_dilation: Dims,
    rhs_dilation: Dims,
    dimension_numbers: ConvDimensionNumbers,
    feature_group_count: int,
    batch_group_count: int,
    precision: Any = None,
    preferred_element_type: np.dtype | None,
) -> ShapedArray:
    dtype = check_same_dtypes("conv_general_dilated", (lhs, rhs))
    if lhs.ndim != rhs.ndim:
        raise ValueError(
            "conv_general_dilated: lhs and rhs must have the same number of dimensions, got "
            f"shapes {lhs.shape} and {rhs.shape}"
        )
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    for name, spec in zip(("lhs", "rhs", "out"), dimension_numbers, strict=True):
        if sorted(spec) != list(range(lhs.ndim)):
            raise ValueError(
                f"conv_general_dilated: dimension_numbers.{name}_spec {spec} must be a "
                f"permutation of the {lhs.ndim} axes"
            )
    _check_groups(lhs, rhs, dimension_numbers, feature_group_count, batch_group_count)
    if preferred_element_type is not None and not can_accumulate(dtype, preferred_element_type):
        raise TypeError(
            f"conv_general_dilated: preferred_element_type {preferred_element_type.name} cannot "
            f"hold products of {dtype.name} operands; use a dtype of the same kind"
        )
    spatial = []
    for i, (ld, rd) in enumerate(zip(lhs_spec[2:], rhs_spec[2:], strict=True)):
        lo, hi = padding[i]
        padded = _dilate_dim(lhs.shape[ld], lhs_dilation[i]) + lo + hi
        if padded < 0:
            raise ValueError(
                f"conv_general_dilated: padding {padding} crops more than spatial dimension "
                f"{i} of lhs shape {lhs.shape} holds"
            )
        window = _dilate_dim(rhs.shape[rd], rhs_dilation[i])
        spatial.append(max(0, (padded - window) // window_strides[i] + 1))
    shape = [0] * lhs.ndim
    shape[out_spec[0]] = lhs.shape[lhs_spec[0]] // batch_group_count
    shape[out_spec[1]] = rhs.shape[rhs_spec[0]]
    for d, size in zip(out_spec[2:], spatial, strict=True):
        shape[d] = size
    if preferred_element_type is None:
        return ShapedArray(tuple(shape), dtype, lhs.weak_type and rhs.weak_type)
    return ShapedArray(tuple(shape), preferred_element_type)


def _layout(spec: Dims, batch: str, feature: str) -> str:
    """`[b, f, 0, 1]`: StableHLO's compact form of one operand's dimension numbers."""
    names = [""] * len(spec)
    names[spec[0]], names[spec[1]] = batch, feature
    for i, d in enumerate(spec[2:]):
        names[d] = str(i)
    return "[" + ", ".join(names) + "]"


@conv_general_dilated_p.def_lowering
def _conv_general_dilated_lowering(
    ctx: LoweringContext,
    lhs: Value,
    rhs: Value,
    *,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    dimension_numbers,
    feature_group_count,
    batch_group_count,
    precision=None,
    preferred_element_type,
) -> Value:
    b = ctx.builder
    out = ctx.aval_out.strip_weak_type()
    if lowering_platform() == "cuda" and out.dtype.kind in "iub":
        raise NotImplementedError(
            f"conv_general_dilated: XLA's GPU backend has no {out.dtype} convolution (cuDNN "
            "convolves floating-point types); convert the operands to float32/float64, or run "
            "it on the CPU (x.to_device(mjcore.devices('cpu')[0]))"
        )
    if lowering_platform() == "cuda" and out.dtype.kind == "c":
        # XLA's GPU backend has no complex convolution: three real ones (Gauss's product), as
        # JAX lowers it on GPUs.
        params = dict(
            window_strides=window_strides,
            padding=padding,
            lhs_dilation=lhs_dilation,
            rhs_dilation=rhs_dilation,
            dimension_numbers=dimension_numbers,
            feature_group_count=feature_group_count,
            batch_group_count=batch_group_count,
            precision=precision,
            preferred_element_type=None,
        )
        sub_ctx = LoweringContext(
            b, [ShapedArray(v.aval.shape, out.dtype) for v in (lhs, rhs)], [out]
        )
        lhs, rhs = convert(b, lhs, out.dtype), convert(b, rhs, out.dtype)
        return lower_fun(lambda x, y: [_complex_conv(x, y, params)], multiple_results=True)(
            sub_ctx, lhs, rhs
        )[0]
    lhs, rhs = convert(b, lhs, out.dtype), convert(b, rhs, out.dtype)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    numbers = (
        f"{_layout(lhs_spec, 'b', 'f')}x{_layout(rhs_spec, 'o', 'i')}->"
        f"{_layout(out_spec, 'b', 'f')}"
    )
    n = len(window_strides)
    if n:
        pads = ", ".join(f"[{lo}, {hi}]" for lo, hi in padding)
        pad_attr = f"dense<[{pads}]> : tensor<{n}x2xi64>"
    else:
        pad_attr = "dense<> : tensor<0x2xi64>"
    attrs = (
        f"batch_group_count = {batch_group_count} : i64, "
        f"dimension_numbers = #stablehlo.conv<{numbers}>, "
        f"feature_group_count = {feature_group_count} : i64, "
        f"lhs_dilation = {i64_array(lhs_dilation)}, "
        f"padding = {pad_attr}, "
        f"rhs_dilation = {i64_array(rhs_dilation)}, "
        f"window_strides = {i64_array(window_strides)}{precision_attr(precision)}"
    )
    return b.op("stablehlo.convolution", [lhs, rhs], out, attrs)


def _complex_conv(lhs: Any, rhs: Any, params: dict[str, Any]) -> Any:
    """(x + iy) * (u + iv) with three real convolutions: k1 = (x + y) * u, k2 = x * (v - u),
    k3 = y * (u + v); the real part is k1 - k3, the imaginary part k1 + k2."""
    x, y, u, v = real(lhs), imag(lhs), real(rhs), imag(rhs)
    k1 = conv_general_dilated_p.bind1(add(x, y), u, **params)
    k2 = conv_general_dilated_p.bind1(x, sub(v, u), **params)
    k3 = conv_general_dilated_p.bind1(y, add(u, v), **params)
    return make_complex(sub(k1, k3), add(k1, k2))


@conv_general_dilated_p.def_jvp(symbolic_zeros=True)
def _conv_general_dilated_jvp(primals, tangents, **params):
    (lhs, rhs), (lhs_dot, rhs_dot) = primals, tangents
    out = conv_general_dilated_p.bind1(lhs, rhs, **params)
    terms = []
    if type(lhs_dot) is not Zero:
        terms.append(conv_general_dilated_p.bind1(lhs_dot, rhs, **params))
    if type(rhs_dot) is not Zero:
        terms.append(conv_general_dilated_p.bind1(lhs, rhs_dot, **params))
    return out, terms[0] if len(terms) == 1 else add(*terms)


def _reshape_axis_into(src: int, dst: int, x: Any) -> Any:
    """Merge axis `src` into axis `dst` (numbered with `src` removed) as its major part."""
    shape = get_aval(x).shape
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new_shape = [shape[i] for i in range(len(shape)) if i != src]
    new_shape[dst] *= shape[src]
    return reshape(transpose(x, tuple(perm)), new_shape)


def _reshape_axis_out_of(src: int, size: int, x: Any) -> Any:
    """Split axis `src` into `(size, rest)`."""
    shape = list(get_aval(x).shape)
    shape[src : src + 1] = [size, shape[src] // size]
    return reshape(x, shape)


def _swap_features(spec: Dims) -> Dims:
    return (spec[1], spec[0], *spec[2:])


# Transposition, like dot_general's, with the spatial structure on top. Ignoring space, the
# forward pass contracts [n, c] with [o, c] into [n, o]. With `k` a kernel tap, `y` an output
# position and `i` an lhs position, lhs[i] meets rhs[k] in out[y] exactly when
#     y * stride + k * rhs_dilation == i * lhs_dilation + pad_lo.
# * lhs cotangent: a convolution of ct (dilated by the strides) with the spatially reversed
#   kernel, in/out features swapped, striding by lhs_dilation. Reversal maps k to K - 1 - k, so
#   the low padding becomes (dilated K - 1) - pad_lo; the high padding makes the result as long
#   as lhs.
# * rhs cotangent: a convolution of lhs (batch and features swapped: features are contracted
#   over the batch) with ct as the kernel, dilated by the strides, striding by rhs_dilation; the
#   low padding is unchanged and the high one makes the result as long as the kernel.
# Groups trade places: feature groups of the forward pass are batch groups of the rhs
# cotangent and vice versa; the lhs cotangent is feature grouped in both cases, after moving
# the group factor from the kernel's output features to its input features.


def _transpose_lhs(ct: Any, lhs: ShapedArray, rhs: Any, params: dict[str, Any]) -> Any:
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    rhs_shape = get_aval(rhs).shape
    ct_shape = get_aval(ct).shape
    groups = max(params["feature_group_count"], params["batch_group_count"])
    if groups > 1:
        rhs = _reshape_axis_out_of(rhs_spec[0], groups, rhs)
        rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
    pads = []
    for i, (ld, rd, od) in enumerate(zip(lhs_spec[2:], rhs_spec[2:], out_spec[2:], strict=True)):
        window = _dilate_dim(rhs_shape[rd], params["rhs_dilation"][i])
        lo = window - 1 - params["padding"][i][0]
        length = _dilate_dim(lhs.shape[ld], params["lhs_dilation"][i]) + window - 1
        hi = length - _dilate_dim(ct_shape[od], params["window_strides"][i]) - lo
        pads.append((lo, hi))
    ct_dtype = get_aval(ct).dtype
    kernel = rev(rhs, rhs_spec[2:])
    if get_aval(kernel).dtype != ct_dtype:  # a preferred_element_type was given
        kernel = convert_element_type(kernel, ct_dtype)
    out = conv_general_dilated_p.bind1(
        ct,
        kernel,
        window_strides=params["lhs_dilation"],
        padding=tuple(pads),
        lhs_dilation=params["window_strides"],
        rhs_dilation=params["rhs_dilation"],
        dimension_numbers=ConvDimensionNumbers(out_spec, _swap_features(rhs_spec), lhs_spec),
        feature_group_count=groups,
        batch_group_count=1,
        precision=params.get("precision"),
        preferred_element_type=None,
    )
    if params["batch_group_count"] > 1:
        out = _reshape_axis_out_of(lhs_spec[1], groups, out)
        out = _reshape_axis_into(lhs_spec[1], lhs_spec[0], out)
    return convert_element_type(out, lhs.dtype)


def _transpose_rhs(ct: Any, lhs: Any, rhs: ShapedArray, params: dict[str, Any]) -> Any:
    if np.prod(get_aval(ct).shape) == 0:
        return Zero(rhs)
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    lhs_shape = get_aval(lhs).shape
    ct_shape = get_aval(ct).shape
    pads = []
    for i, (ld, rd, od) in enumerate(zip(lhs_spec[2:], rhs_spec[2:], out_spec[2:], strict=True)):
        lo = params["padding"][i][0]
        window = _dilate_dim(rhs.shape[rd], params["rhs_dilation"][i])
        length = _dilate_dim(ct_shape[od], params["window_strides"][i]) + window - 1
        hi = length - _dilate_dim(lhs_shape[ld], params["lhs_dilation"][i]) - lo
        pads.append((lo, hi))
    ct_dtype = get_aval(ct).dtype
    if get_aval(lhs).dtype != ct_dtype:
        lhs = convert_element_type(lhs, ct_dtype)
    out = conv_general_dilated_p.bind1(
        lhs,
        ct,
        window_strides=params["rhs_dilation"],
        padding=tuple(pads),
        lhs_dilation=params["lhs_dilation"],
        rhs_dilation=params["window_strides"],
        dimension_numbers=ConvDimensionNumbers(
            _swap_features(lhs_spec), _swap_features(out_spec), _swap_features(rhs_spec)
        ),
        feature_group_count=params["batch_group_count"],
        batch_group_count=params["feature_group_count"],
        precision=params.get("precision"),
        preferred_element_type=None,
    )
    return convert_element_type(out, rhs.dtype)


@conv_general_dilated_p.def_transpose
def _conv_general_dilated_transpose(ct, lhs, rhs, **params):
    if is_undefined_primal(lhs) and is_undefined_primal(rhs):
        raise TypeError("conv_general_dilated: cannot transpose a product of two linear inputs")
    if is_undefined_primal(lhs):
        return [_transpose_lhs(ct, lhs.aval, rhs, params), None]
    return [None, _transpose_rhs(ct, lhs, rhs.aval, params)]


@conv_general_dilated_p.def_batching
def _conv_general_dilated_batching(vals, dims, **params):
    (lhs, rhs), (lhs_bdim, rhs_bdim) = vals, dims
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    lhs_aval, rhs_aval = get_aval(lhs), get_aval(rhs)
    axis_size = lhs_aval.shape[lhs_bdim] if lhs_bdim is not NOT_MAPPED else rhs_aval.shape[rhs_bdim]
    if axis_size == 0:
        # Folding an empty batch into a feature or group count would make a count of zero.
        def unbatched(aval: ShapedArray, bdim: int | None) -> ShapedArray:
            if bdim is NOT_MAPPED:
                return aval
            return aval.update(shape=aval.shape[:bdim] + aval.shape[bdim + 1 :])

        out = _conv_general_dilated_abstract_eval(
            unbatched(lhs_aval, lhs_bdim), unbatched(rhs_aval, rhs_bdim), **params
        )
        return full((0, *out.shape), 0, out.dtype), 0
    if lhs_bdim is not NOT_MAPPED and rhs_bdim is not NOT_MAPPED:
        # Each example is its own group: the batch becomes the major part of the group index.
        if bgc > 1:
            lhs = _reshape_axis_into(lhs_bdim, lhs_spec[0], lhs)
            params = dict(params, batch_group_count=bgc * axis_size)
        else:
            lhs = _reshape_axis_into(lhs_bdim, lhs_spec[1], lhs)
            params = dict(params, feature_group_count=fgc * axis_size)
        rhs = _reshape_axis_into(rhs_bdim, rhs_spec[0], rhs)
        out = conv_general_dilated_p.bind1(lhs, rhs, **params)
        return _reshape_axis_out_of(out_spec[1], axis_size, out), out_spec[1]
    if lhs_bdim is not NOT_MAPPED:
        if bgc == 1:
            # More examples in the lhs batch.
            lhs = _reshape_axis_into(lhs_bdim, lhs_spec[0], lhs)
        else:
            # The lhs batch is group-major: put the vmapped axis inside each batch group.
            b = lhs_spec[0] + (lhs_bdim <= lhs_spec[0])
            lhs = _reshape_axis_out_of(b, bgc, lhs)
            lhs = _reshape_axis_into(lhs_bdim + (lhs_bdim > b), lhs_spec[0] + 1, lhs)
            lhs = _reshape_axis_into(lhs_spec[0], lhs_spec[0], lhs)
        out = conv_general_dilated_p.bind1(lhs, rhs, **params)
        return _reshape_axis_out_of(out_spec[0], axis_size, out), out_spec[0]
    groups = max(fgc, bgc)
    if groups == 1:
        # More kernels in the rhs output features.
        rhs = _reshape_axis_into(rhs_bdim, rhs_spec[0], rhs)
        out = conv_general_dilated_p.bind1(lhs, rhs, **params)
        return _reshape_axis_out_of(out_spec[1], axis_size, out), out_spec[1]
    # The kernel's output features are group-major: put the vmapped axis inside each group,
    # then take it out of each group of the output features.
    o = rhs_spec[0] + (rhs_bdim <= rhs_spec[0])
    rhs = _reshape_axis_out_of(o, groups, rhs)
    rhs = _reshape_axis_into(rhs_bdim + (rhs_bdim > o), rhs_spec[0] + 1, rhs)
    rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[0], rhs)
    out = conv_general_dilated_p.bind1(lhs, rhs, **params)
    f = out_spec[1]
    out = _reshape_axis_out_of(f, groups, out)
    out = _reshape_axis_out_of(f + 1, axis_size, out)
    return _reshape_axis_into(f, f + 1, out), f


# --- wrappers -------------------------------------------------------------------------------


def conv(
    lhs: ArrayLike,
    rhs: ArrayLike,
    window_strides: Sequence[int],
    padding: str,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """`conv_general_dilated` with default (NCH.../OIH...) dimension numbers and no dilation
    (JAX's `lax.conv`)."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def conv_with_general_padding(
    lhs: ArrayLike,
    rhs: ArrayLike,
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    lhs_dilation: Sequence[int] | None,
    rhs_dilation: Sequence[int] | None,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """`conv_general_dilated` with default dimension numbers
    (JAX's `lax.conv_with_general_padding`)."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def _conv_transpose_padding(window: int, stride: int, padding: Any) -> tuple[int, int]:
    """(low, high) padding of the dilated input of a transposed convolution, given the padding
    of the forward convolution it transposes ('SAME', 'VALID' or a (low, high) pair)."""
    if padding == "SAME":
        total = window + stride - 2
        low = window - 1 if stride > window - 1 else -(-total // 2)
    elif padding == "VALID":
        total = window + stride - 2 + max(window - stride, 0)
        low = window - 1
    elif isinstance(padding, tuple):
        low = window - padding[0] - 1
        total = low + window - padding[1] - 1
    else:
        raise ValueError(
            f"conv_transpose: padding must be 'SAME', 'VALID' or (low, high) pairs, got {padding!r}"
        )
    return low, total - low


_CONV_TRANSPOSE_LAYOUTS = {
    2: ("NC", "IO", "NC"),
    3: ("NHC", "HIO", "NHC"),
    4: ("NHWC", "HWIO", "NHWC"),
    5: ("NHWDC", "HWDIO", "NHWDC"),
}


def conv_transpose(
    lhs: ArrayLike,
    rhs: ArrayLike,
    strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    transpose_kernel: bool = False,
    precision: Any = None,
    preferred_element_type: Any = None,
    use_consistent_padding: bool = False,
) -> Any:
    """A transposed ("fractionally strided") convolution (JAX's `lax.conv_transpose`): the lhs
    is dilated by `strides` and convolved with stride 1.

    `padding` 'SAME' or 'VALID' (and, with `use_consistent_padding`, (low, high) pairs) names
    the padding of the forward convolution being transposed; otherwise pairs pad the dilated
    lhs directly. `dimension_numbers` defaults to TensorFlow's layout (`NHWC`, `HWIO`, `NHWC`
    for two spatial dimensions). `transpose_kernel` flips the kernel's spatial axes and swaps
    its feature axes, giving the gradient of `conv_general_dilated` with the same kernel.
    """
    lhs_shape, rhs_shape = get_aval(lhs).shape, get_aval(rhs).shape
    ndim = len(lhs_shape)
    if dimension_numbers is None:
        if ndim not in _CONV_TRANSPOSE_LAYOUTS:
            raise ValueError(
                f"conv_transpose: no default dimension_numbers for {ndim}-dimensional operands "
                f"(shapes {lhs_shape} and {rhs_shape}); pass dimension_numbers"
            )
        dimension_numbers = _CONV_TRANSPOSE_LAYOUTS[ndim]
    dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    n = ndim - 2
    strides = _int_tuple("conv_transpose", "strides", strides, n)
    rhs_dilation = _int_tuple(
        "conv_transpose", "rhs_dilation", (1,) * n if rhs_dilation is None else rhs_dilation, n
    )
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        windows = [
            _dilate_dim(rhs_shape[d], r)
            for d, r in zip(dnums.rhs_spec[2:], rhs_dilation, strict=True)
        ]
        per_dim = [padding] * n if isinstance(padding, str) else [tuple(p) for p in padding]
        padding = [
            _conv_transpose_padding(k, s, p)
            for k, s, p in zip(windows, strides, per_dim, strict=True)
        ]
    if transpose_kernel:
        rhs = rev(rhs, dnums.rhs_spec[2:])
        perm = list(range(ndim))
        perm[dnums.rhs_spec[0]], perm[dnums.rhs_spec[1]] = dnums.rhs_spec[1], dnums.rhs_spec[0]
        rhs = transpose(rhs, tuple(perm))
    return conv_general_dilated(
        lhs,
        rhs,
        (1,) * n,
        padding,
        strides,
        rhs_dilation,
        dnums,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


# --- shape helpers (JAX's lax.padtype_to_pads, conv_general_shape_tuple, ...) ----------------


def padtype_to_pads(
    in_shape: Sequence[int],
    window_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: str,
) -> list[tuple[int, int]]:
    """The (low, high) pads that 'VALID', 'SAME' or 'SAME_LOWER' padding means for windows
    of `window_shape` sliding by `window_strides` over `in_shape`, as JAX's.

    NB: an unknown padding name raises ValueError (JAX raises RuntimeError)."""
    return _padtype_to_pads(in_shape, window_shape, window_strides, padding)


def _spec_shapes(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], dimension_numbers: Any
) -> tuple[ConvDimensionNumbers, list[int], list[int]]:
    """The canonical dimension numbers, and both shapes in (batch/out, feature/in, spatial...)
    order."""
    dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    return (
        dnums,
        [int(lhs_shape[d]) for d in dnums.lhs_spec],
        [int(rhs_shape[d]) for d in dnums.rhs_spec],
    )


def _unpermute(out_trans: Sequence[int], out_spec: Dims) -> tuple[int, ...]:
    out = [0] * len(out_spec)
    for size, axis in zip(out_trans, out_spec, strict=True):
        out[axis] = int(size)
    return tuple(out)


def conv_general_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    dimension_numbers: Any,
) -> tuple[int, ...]:
    """The output shape of `conv_general_dilated` (no dilation, one group), as JAX's."""
    dnums, lhs, rhs = _spec_shapes(lhs_shape, rhs_shape, dimension_numbers)
    if isinstance(padding, str):
        padding = _padtype_to_pads(lhs[2:], rhs[2:], window_strides, padding)
    space = [
        max(0, (size + lo + hi - window) // stride + 1)
        for size, window, stride, (lo, hi) in zip(
            lhs[2:], rhs[2:], window_strides, padding, strict=True
        )
    ]
    return _unpermute((lhs[0], rhs[0], *space), dnums.out_spec)


def conv_transpose_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    dimension_numbers: Any,
) -> tuple[int, ...]:
    """The output shape of `conv_transpose` (no dilation), as JAX's."""
    dnums, lhs, rhs = _spec_shapes(lhs_shape, rhs_shape, dimension_numbers)
    if isinstance(padding, str):
        padding = [
            _conv_transpose_padding(k, s, padding)
            for k, s in zip(rhs[2:], window_strides, strict=True)
        ]
    space = [
        (size - 1) * stride - window + 2 + int(sum(pad))
        for size, window, stride, pad in zip(lhs[2:], rhs[2:], window_strides, padding, strict=True)
    ]
    return _unpermute((lhs[0], rhs[0], *space), dnums.out_spec)


__all__ = [
    "ConvDimensionNumbers",
    "conv",
    "conv_dimension_numbers",
    "conv_general_dilated",
    "conv_general_shape_tuple",
    "conv_transpose",
    "conv_transpose_shape_tuple",
    "conv_with_general_padding",
    "padtype_to_pads",
]
