"""`dot_general`: XLA's generalised tensor contraction, with batch and contracting dimensions."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from mjcore import dtypes
from mjcore.ad import MULTILINEAR, Zero, is_undefined_primal
from mjcore.array import wrap_host
from mjcore.backend.hlo import Value, i64_list
from mjcore.backend.lowering import LoweringContext
from mjcore.batching import NOT_MAPPED, move_bdim
from mjcore.config import config
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.lax import host_vjp
from mjcore.lax.arithmetic import add
from mjcore.lax.base import convert_element_type, transpose
from mjcore.lax.families import check_same_dtypes, convert, scalar_constant
from mjcore.lax.precision import CanonicalPrecision, canonicalize_precision

ArrayLike = Any
Dims = tuple[int, ...]
DotDimensionNumbers = tuple[tuple[Dims, Dims], tuple[Dims, Dims]]

dot_general_p = Primitive("dot_general")


def dot_general(
    lhs: ArrayLike,
    rhs: ArrayLike,
    dimension_numbers: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """Contract `lhs` and `rhs` over paired contracting dimensions, batched over paired batch
    dimensions.

    `dimension_numbers` is `((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`.
    The result holds the batch dimensions, then the remaining dimensions of `lhs`, then those
    of `rhs`, each in order. `preferred_element_type` sets the result (and accumulation)
    dtype; by default it is the operands' dtype. Bool operands give `any(lhs & rhs)`.
    `precision` (a `Precision`, its string or a pair; None: the `jax_default_matmul_precision`
    flag's) goes to XLA, as JAX's: on GPUs the default runs float32 products at TF32
    precision, 'highest' at full float32. The CPU backend computes at full precision always.
    """
    (lc, rc), (lb, rb) = dimension_numbers
    numbers = ((_dims(lc), _dims(rc)), (_dims(lb), _dims(rb)))
    if preferred_element_type is not None:
        preferred_element_type = dtypes.canonicalize_dtype(preferred_element_type, "dot_general")
    return dot_general_p.bind1(
        lhs,
        rhs,
        dimension_numbers=numbers,
        precision=matmul_precision(precision),
        preferred_element_type=preferred_element_type,
    )


def matmul_precision(precision: Any) -> CanonicalPrecision:
    """`precision=` as the primitives' parameter: a pair of `Precision`s, or None for XLA's
    default; None takes the `jax_default_matmul_precision` flag's value."""
    pair = canonicalize_precision(precision)
    if pair is None:
        default = config.read("jax_default_matmul_precision")
        if default is not None:
            pair = canonicalize_precision(default)
    return pair


def precision_attr(precision: CanonicalPrecision) -> str:
    """StableHLO's `precision_config` for a pair of `Precision`s ('' for None)."""
    if precision is None:
        return ""
    return (
        ", precision_config = ["
        + ", ".join(f"#stablehlo<precision {p.name}>" for p in precision)
        + "]"
    )


def _dims(dims: Sequence[int]) -> Dims:
    return tuple(int(d) for d in dims)


def _free_dims(ndim: int, contracting: Dims, batch: Dims) -> Dims:
    return tuple(d for d in range(ndim) if d not in contracting and d not in batch)


def _check_dims(side: str, aval: ShapedArray, contracting: Dims, batch: Dims) -> None:
    dims = contracting + batch
    if any(not 0 <= d < aval.ndim for d in dims) or len(set(dims)) != len(dims):
        raise ValueError(
            f"dot_general: {side} contracting dimensions {contracting} and batch dimensions "
            f"{batch} must be distinct axes of the {side} operand of shape {aval.shape}"
        )


@dot_general_p.def_abstract_eval
def _dot_general_abstract_eval(
    lhs: ShapedArray,
    rhs: ShapedArray,
    *,
    dimension_numbers: DotDimensionNumbers,
    precision: CanonicalPrecision = None,
    preferred_element_type: np.dtype | None,
) -> ShapedArray:
    dtype = check_same_dtypes("dot_general", (lhs, rhs))
    (lc, rc), (lb, rb) = dimension_numbers
    _check_dims("lhs", lhs, lc, lb)
    _check_dims("rhs", rhs, rc, rb)
    for what, ld, rd in (("contracting", lc, rc), ("batch", lb, rb)):
        if [lhs.shape[d] for d in ld] != [rhs.shape[d] for d in rd]:
            raise ValueError(
                f"dot_general: {what} dimensions must pair up with equal sizes, got lhs "
                f"{ld} and rhs {rd} for shapes {lhs.shape} and {rhs.shape}"
            )
    if preferred_element_type is not None and not can_accumulate(dtype, preferred_element_type):
        raise TypeError(
            f"dot_general: preferred_element_type {preferred_element_type.name} cannot hold "
            f"products of {dtype.name} operands; use a dtype of the same kind"
        )
    shape = (
        *(lhs.shape[d] for d in lb),
        *(lhs.shape[d] for d in _free_dims(lhs.ndim, lc, lb)),
        *(rhs.shape[d] for d in _free_dims(rhs.ndim, rc, rb)),
    )
    if preferred_element_type is None:
        return ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)
    return ShapedArray(shape, preferred_element_type)


def can_accumulate(dtype: np.dtype, preferred: np.dtype) -> bool:
    """Whether `preferred` may hold sums of products of `dtype` values (also used by conv)."""
    if dtype.kind == "b":
        return preferred.kind in "biu"
    if dtype.kind in "iu":
        return preferred.kind in "iu"
    return dtypes.kind(preferred) == dtypes.kind(dtype)


@dot_general_p.def_lowering
def _dot_general_lowering(
    ctx: LoweringContext,
    lhs: Value,
    rhs: Value,
    *,
    dimension_numbers,
    precision=None,
    preferred_element_type,
) -> Value:
    b = ctx.builder
    out = ctx.aval_out.strip_weak_type()
    # Bool contracts as integers (a count of true products), then compares with zero.
    dtype = np.dtype(np.int32) if out.dtype.kind == "b" else out.dtype
    lhs, rhs = convert(b, lhs, dtype), convert(b, rhs, dtype)
    (lc, rc), (lb, rb) = dimension_numbers
    numbers = (
        f"#stablehlo.dot<lhs_batching_dimensions = {i64_list(lb)}, "
        f"rhs_batching_dimensions = {i64_list(rb)}, "
        f"lhs_contracting_dimensions = {i64_list(lc)}, "
        f"rhs_contracting_dimensions = {i64_list(rc)}>"
    )
    result = b.op(
        "stablehlo.dot_general",
        [lhs, rhs],
        out.update(dtype=dtype),
        f"dot_dimension_numbers = {numbers}{precision_attr(precision)}",
    )
    if out.dtype.kind != "b":
        return result
    zero = scalar_constant(b, 0, dtype, out.shape)
    return b.op(
        "stablehlo.compare",
        [result, zero],
        out,
        "comparison_direction = #stablehlo<comparison_direction NE>, "
        "compare_type = #stablehlo<comparison_type SIGNED>",
    )


_MATRIX_PRODUCT = (((1,), (0,)), ((), ()))


@dot_general_p.def_host
def _dot_general_host(
    lhs: np.ndarray,
    rhs: np.ndarray,
    *,
    dimension_numbers,
    precision=None,
    preferred_element_type,
) -> np.ndarray:
    # Batch, free and contracting axes gathered into one (batched) matrix product.
    # Converting first is exact for the integer and wider float types allowed, as in the
    # lowering; bool matmul is NumPy's any(lhs & rhs).
    if preferred_element_type is not None:
        lhs = lhs.astype(preferred_element_type, copy=False)
        rhs = rhs.astype(preferred_element_type, copy=False)
    if dimension_numbers == _MATRIX_PRODUCT and lhs.ndim == 2 and rhs.ndim == 2:
        return np.dot(lhs, rhs)  # `x @ y` of matrices: what the general path below computes
    plan = _dot_general_host_plan(lhs.shape, rhs.shape, dimension_numbers)
    return _planned_product(lhs, rhs, plan)


def _planned_product(lhs: np.ndarray, rhs: np.ndarray, plan: Any) -> np.ndarray:
    """The host rule's product by its plan (`_dot_general_host_plan`)."""
    lhs_order, lhs_matrix, rhs_order, rhs_matrix, batched, out_shape = plan
    a = lhs.transpose(lhs_order).reshape(lhs_matrix)
    b = rhs.transpose(rhs_order).reshape(rhs_matrix)
    # np.dot is the same BLAS product as matmul for matrices, without its overhead.
    out = np.matmul(a, b) if batched else np.dot(a, b)
    return out.reshape(out_shape)


@functools.lru_cache(maxsize=512)
def _dot_general_host_plan(lhs_shape: Dims, rhs_shape: Dims, dimension_numbers: Any) -> Any:
    """The host rule's axis orders and shapes: batch, free and contracting axes gathered into
    one (batched) matrix product. Cached: eager code (and its backward pass) multiplies arrays
    of a few shapes many times, and working these out costs several times a small product."""
    (lc, rc), (lb, rb) = dimension_numbers
    lf, rf = _free_dims(len(lhs_shape), lc, lb), _free_dims(len(rhs_shape), rc, rb)
    batch = [lhs_shape[d] for d in lb]
    lhs_free, rhs_free = [lhs_shape[d] for d in lf], [rhs_shape[d] for d in rf]
    k = math.prod(lhs_shape[d] for d in lc)
    return (
        (*lb, *lf, *lc),
        (*batch, math.prod(lhs_free), k),
        (*rb, *rc, *rf),
        (*batch, k, math.prod(rhs_free)),
        bool(batch),
        (*batch, *lhs_free, *rhs_free),
    )


@dot_general_p.def_jvp(symbolic_zeros=True)
def _dot_general_jvp(primals, tangents, **params):
    (lhs, rhs), (lhs_dot, rhs_dot) = primals, tangents
    out = dot_general_p.bind1(lhs, rhs, **params)
    terms = []
    if type(lhs_dot) is not Zero:
        terms.append(dot_general_p.bind1(lhs_dot, rhs, **params))
    if type(rhs_dot) is not Zero:
        terms.append(dot_general_p.bind1(lhs, rhs_dot, **params))
    return out, terms[0] if len(terms) == 1 else add(*terms)


dot_general_p.def_eager_vjp(MULTILINEAR)


def _transpose_lhs(
    ct: Any, lhs: ShapedArray, rhs: Any, dimension_numbers, swap_ans: bool, precision=None
):
    """The cotangent of `lhs` given the known `rhs` (JAX's `_dot_general_transpose_lhs`).

    `ct` is laid out as (batch, lhs free, rhs free), or (batch, rhs free, lhs free) when the
    operands were swapped to transpose the rhs. Contract it with `rhs` over the rhs free
    dimensions, then permute the result (batch, lhs free, lhs contracting in rhs order) back.
    """
    ct_value = host_vjp.host_value(ct)
    if ct_value is not None:
        out = _transpose_lhs_host(ct_value, lhs, rhs, dimension_numbers, swap_ans)
        if out is not None:
            return out
    rhs_aval = get_aval(rhs)
    numbers, permutation, swapped = _transpose_lhs_plan(
        lhs.ndim, rhs_aval.ndim, dimension_numbers, swap_ans
    )
    ct_dtype = get_aval(ct).dtype
    if rhs_aval.dtype != ct_dtype:  # a preferred_element_type was given
        rhs = convert_element_type(rhs, ct_dtype)
    if swapped is not None:  # an outer product already in the operand's layout
        out = dot_general_p.bind1(
            rhs, ct, dimension_numbers=swapped, precision=precision, preferred_element_type=None
        )
        return convert_element_type(out, lhs.dtype)
    out = dot_general_p.bind1(
        ct, rhs, dimension_numbers=numbers, precision=precision, preferred_element_type=None
    )
    if permutation is not None:
        out = transpose(out, permutation)
    return convert_element_type(out, lhs.dtype)


def _transpose_lhs_host(
    ct: np.ndarray, lhs: ShapedArray, rhs: Any, dimension_numbers: Any, swap_ans: bool
) -> Any:
    """`_transpose_lhs` on the host (`mjcore.lax.host_vjp`), all of one dtype: the host rules
    of the product and the transpose it binds, or None where dispatch would not run them."""
    rhs_value = host_vjp.operand_value(rhs)
    dtype = lhs.dtype
    if rhs_value is None or ct.dtype != dtype or rhs_value.dtype != dtype:
        return None  # (a preferred_element_type was given: converts first)
    shape = lhs.shape
    if not host_vjp.within(dot_general_p, dtype, max(ct.size, rhs_value.size, math.prod(shape))):
        return None
    rhs_first, plan, permutation = _transpose_lhs_host_plan(
        ct.shape, shape, rhs_value.shape, dimension_numbers, swap_ans
    )
    if rhs_first:
        out = _planned_product(rhs_value, ct, plan)
    else:
        out = _planned_product(ct, rhs_value, plan)
        if permutation is not None:
            out = out.transpose(permutation)  # transpose's host rule (a view)
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    if out.dtype != dtype:  # dispatch would run XLA (see `dispatch._apply_host`)
        return None
    # `convert_element_type(out, lhs.dtype)` drops a weak type
    return wrap_host(out, ShapedArray(shape, dtype, False))


@functools.lru_cache(maxsize=512)
def _transpose_lhs_host_plan(
    ct_shape: Dims, lhs_shape: Dims, rhs_shape: Dims, dimension_numbers: Any, swap_ans: bool
) -> tuple[bool, Any, tuple[int, ...] | None]:
    """(whether `rhs` is the product's first operand, the host rule's plan of the product
    `_transpose_lhs` binds, its final permutation). The host rule's matrix-product case,
    `np.dot(lhs, rhs)`, is its general plan's product too: identity transposes and reshapes
    are views of the same layout."""
    numbers, permutation, swapped = _transpose_lhs_plan(
        len(lhs_shape), len(rhs_shape), dimension_numbers, swap_ans
    )
    if swapped is not None:
        return True, _dot_general_host_plan(rhs_shape, ct_shape, swapped), None
    return False, _dot_general_host_plan(ct_shape, rhs_shape, numbers), permutation


@functools.lru_cache(maxsize=512)
def _transpose_lhs_plan(
    lhs_ndim: int, rhs_ndim: int, dimension_numbers: Any, swap_ans: bool
) -> tuple[Any, tuple[int, ...] | None, Any]:
    """`_transpose_lhs`'s dimension numbers and final permutation (None for none), which
    depend only on the ranks and the original numbers (cached: eager reverse mode transposes
    the same products on every call, and two `argsort`s cost more than the product of small
    matrices)."""
    (lc, rc), (lb, rb) = dimension_numbers
    lhs_free = _free_dims(lhs_ndim, lc, lb)
    rhs_free = _free_dims(rhs_ndim, rc, rb)
    nb = len(lb)
    if swap_ans:
        ct_rhs_free = tuple(range(nb, nb + len(rhs_free)))
    else:
        ct_rhs_free = tuple(range(nb + len(lhs_free), nb + len(lhs_free) + len(rhs_free)))
    numbers = ((ct_rhs_free, tuple(rhs_free)), (tuple(range(nb)), tuple(rb)))
    lc_by_rhs = [lc[i] for i in np.argsort(rc)]
    permutation = tuple(int(i) for i in np.argsort([*lb, *lhs_free, *lc_by_rhs]))
    # Without batch or contracting dimensions the product is an outer product, whose every
    # element is one multiplication: `rhs x ct` is `ct x rhs` transposed, exactly. When that
    # order is the operand's layout, it saves the transpose (the weights of a matrix-vector
    # product, in reverse mode).
    swapped = None
    if not nb and not numbers[0][0] and permutation != tuple(range(len(permutation))):
        n_ct_free = len(lhs_free)  # ct is (lhs free): the other operand has no free dims
        n_rhs_free = len(permutation) - n_ct_free
        # out2 = (rhs free, ct free): out1's axis j is out2's axis `to2[j]`
        to2 = [n_rhs_free + j for j in range(n_ct_free)] + list(range(n_rhs_free))
        if [to2[p] for p in permutation] == list(range(len(permutation))):
            swapped = (((), ()), ((), ()))
    identity = permutation == tuple(range(len(permutation)))
    return numbers, None if identity else permutation, swapped


@dot_general_p.def_transpose
def _dot_general_transpose(
    ct, lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type
):
    if is_undefined_primal(lhs) and is_undefined_primal(rhs):
        raise TypeError("dot_general: cannot transpose a product of two linear inputs")
    if is_undefined_primal(lhs):
        ct_lhs = _transpose_lhs(ct, lhs.aval, rhs, dimension_numbers, False, precision)
        return [ct_lhs, None]
    (lc, rc), (lb, rb) = dimension_numbers
    swapped = ((rc, lc), (rb, lb))
    return [None, _transpose_lhs(ct, rhs.aval, lhs, swapped, True, precision)]


@dot_general_p.def_batching
def _dot_general_batching(vals, dims, *, dimension_numbers, precision=None, preferred_element_type):
    (lhs, rhs), (lhs_bdim, rhs_bdim) = vals, dims
    (lc, rc), (lb, rb) = dimension_numbers
    params = {"precision": precision, "preferred_element_type": preferred_element_type}

    def shift(ds: Dims, bdim: int) -> Dims:
        return tuple(d + (d >= bdim) for d in ds)

    if lhs_bdim is not NOT_MAPPED and rhs_bdim is not NOT_MAPPED:
        # Both batched: the vmapped axis becomes a new leading batch dimension.
        lhs, rhs = move_bdim(lhs, lhs_bdim, 0), move_bdim(rhs, rhs_bdim, 0)
        numbers = ((shift(lc, 0), shift(rc, 0)), ((0, *shift(lb, 0)), (0, *shift(rb, 0))))
        return dot_general_p.bind1(lhs, rhs, dimension_numbers=numbers, **params), 0
    if lhs_bdim is not NOT_MAPPED:
        # One side batched: the vmapped axis is one more free dimension of that side, so it
        # lands in the output among that side's free dimensions, in order; no transposes.
        lc, lb = shift(lc, lhs_bdim), shift(lb, lhs_bdim)
        free = _free_dims(get_aval(lhs).ndim, lc, lb)
        out_bdim = len(lb) + free.index(lhs_bdim)
    else:
        rc, rb = shift(rc, rhs_bdim), shift(rb, rhs_bdim)
        free = _free_dims(get_aval(rhs).ndim, rc, rb)
        lhs_free = get_aval(lhs).ndim - len(lc) - len(lb)
        out_bdim = len(rb) + lhs_free + free.index(rhs_bdim)
    numbers = ((lc, rc), (lb, rb))
    return dot_general_p.bind1(lhs, rhs, dimension_numbers=numbers, **params), out_bdim


def dot(
    lhs: ArrayLike,
    rhs: ArrayLike,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """Vector-vector, matrix-vector or matrix-matrix product (JAX's `lax.dot`): the last axis
    of `lhs` contracts with the first of `rhs`; both must have rank 1 or 2. Use
    `dot_general` for anything else."""
    lhs_shape, rhs_shape = get_aval(lhs).shape, get_aval(rhs).shape
    if not (1 <= len(lhs_shape) <= 2 and 1 <= len(rhs_shape) <= 2) or (
        lhs_shape[-1] != rhs_shape[0]
    ):
        raise ValueError(
            "lax.dot: dimension_numbers must be specified when not performing simple "
            "un-batched matrix-matrix, matrix-vector, or vector-vector products (use "
            f"lax.dot_general); got lhs_shape={lhs_shape} rhs_shape={rhs_shape}"
        )
    numbers = (((len(lhs_shape) - 1,), (0,)), ((), ()))
    return dot_general(lhs, rhs, numbers, precision, preferred_element_type)


def batch_matmul(lhs: ArrayLike, rhs: ArrayLike, precision: Any = None) -> Any:
    """Matrix product over the last two dimensions, batched over all the leading ones (which
    must agree). `precision` as `dot_general`'s."""
    lhs_shape, rhs_shape = get_aval(lhs).shape, get_aval(rhs).shape
    ndim = len(lhs_shape)
    if ndim != len(rhs_shape) or ndim < 2:
        raise ValueError(
            "batch_matmul: lhs and rhs must have one rank of at least 2, got shapes "
            f"{lhs_shape} and {rhs_shape}"
        )
    if lhs_shape[:-2] != rhs_shape[:-2]:
        raise ValueError(
            f"batch_matmul: batch dimensions must match, got shapes {lhs_shape} and {rhs_shape}"
        )
    batch = tuple(range(ndim - 2))
    return dot_general(lhs, rhs, (((ndim - 1,), (ndim - 2,)), (batch, batch)), precision)


__all__ = ["batch_matmul", "dot", "dot_general"]
