"""Matrix decompositions (JAX's `lax.linalg`): Cholesky, LU, QR, symmetric eigendecomposition,
SVD, triangular solves and the general eigenproblem, lowered to jaxlib's CPU LAPACK kernels.

Every primitive works on the two trailing axes; leading axes are batch axes, handed to the
LAPACK kernels as they are. Derivative rules are JAX's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mjcore.backend.custom_call import (
    char_attr,
    lapack_call,
    lapack_target,
    lowering_platform,
    solver_call,
)
from mjcore.backend.lowering import LoweringContext, lower_fun
from mjcore.batching import NOT_MAPPED, move_bdim, moveaxis_to
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.lax.arithmetic import add, div, mul, neg, sub
from mjcore.lax.base import (
    broadcast_in_dim,
    convert_element_type,
    full,
    select_n,
    transpose,
)
from mjcore.lax.comparison import eq, ge, ne
from mjcore.lax.complex import complex as make_complex
from mjcore.lax.complex import conj, real
from mjcore.lax.dot import dot_general
from mjcore.lax.reductions import reduce_sum
from mjcore.lax.slicing import slice_in_dim
from mjcore.lax.structural import broadcasted_iota, pad

ArrayLike = Any
_INEXACT = ("float32", "float64", "complex64", "complex128")


# --- helpers (lax compositions on the trailing matrix axes) --------------------------------


def _check_matrix(name: str, x: ShapedArray, square: bool = False) -> None:
    if x.ndim < 2:
        raise ValueError(f"{name}: expected an array of matrices (ndim >= 2), got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name}: expected square matrices, got shape {x.shape}")
    if x.dtype.name not in _INEXACT:
        raise TypeError(f"{name}: expected float32/64 or complex64/128, got {x.dtype.name}")


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype in (np.float32, np.complex64) else np.dtype(np.float64)


def _T(x: Any) -> Any:
    nd = get_aval(x).ndim
    return transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def _H(x: Any) -> Any:
    return conj(_T(x)) if get_aval(x).dtype.kind == "c" else _T(x)


def _mm(a: Any, b: Any) -> Any:
    """Batched matrix product over equal leading batch axes."""
    nd = get_aval(a).ndim
    batch = tuple(range(nd - 2))
    return dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _tri_mask(shape: tuple[int, ...], k: int, lower: bool) -> Any:
    rows = broadcasted_iota(np.int32, shape, len(shape) - 2)
    cols = broadcasted_iota(np.int32, shape, len(shape) - 1)
    shifted = add(rows, full(shape, k, np.int32))
    return ge(shifted, cols) if lower else ge(cols, sub(rows, full(shape, -k, np.int32)))


def _tril(x: Any, k: int = 0) -> Any:
    aval = get_aval(x)
    return select_n(_tri_mask(aval.shape, k, True), full(aval.shape, 0, aval.dtype), x)


def _triu(x: Any, k: int = 0) -> Any:
    aval = get_aval(x)
    return select_n(_tri_mask(aval.shape, k, False), full(aval.shape, 0, aval.dtype), x)


def _eye_like(shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """Identity matrices of `shape` (..., m, n)."""
    rows = broadcasted_iota(np.int32, shape, len(shape) - 2)
    cols = broadcasted_iota(np.int32, shape, len(shape) - 1)
    return convert_element_type(eq(rows, cols), dtype)


def _diagonal(x: Any) -> Any:
    """The main diagonal of square matrices (..., n, n) -> (..., n)."""
    aval = get_aval(x)
    return reduce_sum(mul(x, _eye_like(aval.shape, aval.dtype)), (aval.ndim - 1,))


def _diag_embed(d: Any, dtype: np.dtype) -> Any:
    """Diagonal matrices from vectors (..., n) -> (..., n, n)."""
    aval = get_aval(d)
    shape = (*aval.shape, aval.shape[-1])
    d = broadcast_in_dim(convert_element_type(d, dtype), shape, tuple(range(aval.ndim)))
    return mul(d, _eye_like(shape, dtype))


def _row(v: Any, n_rows: int) -> Any:
    """(..., n) -> (..., n_rows, n): `v` repeated down the rows (v[..., None, :])."""
    aval = get_aval(v)
    shape = (*aval.shape[:-1], n_rows, aval.shape[-1])
    return broadcast_in_dim(v, shape, (*range(aval.ndim - 1), aval.ndim))


def _col(v: Any, n_cols: int) -> Any:
    """(..., n) -> (..., n, n_cols): v[..., :, None]."""
    aval = get_aval(v)
    return broadcast_in_dim(v, (*aval.shape, n_cols), tuple(range(aval.ndim)))


def _nan_where_failed(info: Any, x: Any) -> Any:
    """`x` with each batch entry whose LAPACK `info` is nonzero replaced by NaNs (as JAX)."""
    aval = get_aval(x)
    batch = get_aval(info).ndim
    failed = broadcast_in_dim(ne(info, full((), 0, np.int32)), aval.shape, tuple(range(batch)))
    return select_n(failed, x, full(aval.shape, np.nan, aval.dtype))


def _lapack_lowering(
    ctx: LoweringContext,
    base: str,
    operands: list[Any],
    results: list[ShapedArray],
    attrs: dict[str, str],
    fixup: Any,
) -> list[Any]:
    """Emit one LAPACK call, then `fixup(*results)` (lax ops) to give the primitive's outputs."""
    batch_ndim = operands[0].aval.ndim - 2
    outs = solver_call(ctx.builder, base, operands, results, attrs, batch_ndim=batch_ndim)
    sub_ctx = LoweringContext(ctx.builder, [v.aval for v in outs], ctx.avals_out)
    return list(lower_fun(fixup, multiple_results=True)(sub_ctx, *outs))


def _empty_lowering(ctx: LoweringContext, make: Any, *operands: Any) -> list[Any]:
    """Outputs for zero-sized operands, which the LAPACK kernels do not accept."""
    return list(lower_fun(make, multiple_results=True)(ctx, *operands))


def _batching_leading(prim: Primitive) -> None:
    """Batching for one-operand primitives: the vmapped axis becomes a leading batch axis."""

    def batching(vals, dims, **params):
        (x,), (bdim,) = vals, dims
        outs = prim.bind(move_bdim(x, bdim, 0), **params)
        return outs, [0] * len(outs) if prim.multiple_results else 0

    prim.def_batching(batching)


# --- cholesky -------------------------------------------------------------------------------

cholesky_p = Primitive("cholesky")


def cholesky(x: ArrayLike, *, symmetrize_input: bool = True) -> Any:
    """The lower Cholesky factor `L` of Hermitian positive-definite matrices (`x = L L^H`),
    as JAX's `lax.linalg.cholesky`. Matrices that are not positive definite give NaNs. With
    `symmetrize_input`, `(x + x^H) / 2` is factored, so the gradient is symmetric."""
    if symmetrize_input:
        x = symmetrize(x)
    return cholesky_p.bind1(x)


def symmetrize(x: ArrayLike) -> Any:
    """`(x + x^H) / 2`."""
    dtype = get_aval(x).dtype
    return div(add(x, _H(x)), full((), 2, dtype))


@cholesky_p.def_abstract_eval
def _cholesky_abstract_eval(x: ShapedArray) -> ShapedArray:
    _check_matrix("cholesky", x, square=True)
    return ShapedArray(x.shape, x.dtype)


@cholesky_p.def_lowering
def _cholesky_lowering(ctx: LoweringContext, x: Any) -> Any:
    aval = x.aval
    if aval.size == 0:
        return x
    info = ShapedArray(aval.shape[:-2], np.dtype(np.int32))
    (out,) = _lapack_lowering(
        ctx,
        "potrf",
        [x],
        [aval, info],
        {"uplo": char_attr("L")},
        lambda factor, info: [_nan_where_failed(info, _tril(factor))],
    )
    return out


@cholesky_p.def_jvp
def _cholesky_jvp(primals, tangents):
    # Forward-mode rule from https://arxiv.org/pdf/1602.07527.pdf (as JAX).
    (x,), (sigma_dot,) = primals, tangents
    L = cholesky_p.bind1(x)
    aval = get_aval(x)
    tmp = triangular_solve(
        L, sigma_dot, left_side=False, transpose_a=True, conjugate_a=True, lower=True
    )
    inner = triangular_solve(L, tmp, left_side=True, transpose_a=False, lower=True)
    # phi(X): the lower triangle with the diagonal halved.
    halves = add(full(aval.shape, 1, aval.dtype), _eye_like(aval.shape, aval.dtype))
    phi = div(_tril(inner), halves)
    return L, _mm(L, phi)


_batching_leading(cholesky_p)


@cholesky_p.def_host
def _cholesky_host(x: np.ndarray) -> np.ndarray:
    # Both are LAPACK's potrf on the lower triangle; a matrix that is not positive definite
    # becomes NaNs, as in the lowering, where NumPy raises for the whole stack.
    if x.size == 0:
        return x
    try:
        return np.linalg.cholesky(x)
    except np.linalg.LinAlgError:
        out = np.empty_like(x)
        for i in np.ndindex(x.shape[:-2]):
            try:
                out[i] = np.linalg.cholesky(x[i])
            except np.linalg.LinAlgError:
                out[i] = np.nan
        return out


# --- triangular_solve -----------------------------------------------------------------------

triangular_solve_p = Primitive("triangular_solve")


def triangular_solve(
    a: ArrayLike,
    b: ArrayLike,
    *,
    left_side: bool = False,
    lower: bool = False,
    transpose_a: bool = False,
    conjugate_a: bool = False,
    unit_diagonal: bool = False,
) -> Any:
    """Solve `op(a) x = b` (`left_side`) or `x op(a) = b` for `x`, where `a` is triangular
    (only its `lower` or upper triangle is read) and `op` transposes and/or conjugates, as
    JAX's `lax.linalg.triangular_solve`. `a` and `b` have equal leading batch axes."""
    if conjugate_a and not transpose_a and get_aval(a).dtype.kind == "c":
        a, conjugate_a = conj(a), False
    if get_aval(a).dtype.kind != "c":
        conjugate_a = False
    return triangular_solve_p.bind1(
        a,
        b,
        left_side=bool(left_side),
        lower=bool(lower),
        transpose_a=bool(transpose_a),
        conjugate_a=bool(conjugate_a),
        unit_diagonal=bool(unit_diagonal),
    )


@triangular_solve_p.def_abstract_eval
def _triangular_solve_abstract_eval(a: ShapedArray, b: ShapedArray, *, left_side, **_: Any):
    _check_matrix("triangular_solve", a, square=True)
    _check_matrix("triangular_solve", b)
    if a.dtype != b.dtype:
        raise TypeError(f"triangular_solve: dtypes differ, {a.dtype.name} and {b.dtype.name}")
    m = b.shape[-2] if left_side else b.shape[-1]
    if a.shape[:-2] != b.shape[:-2] or a.shape[-1] != m:
        raise ValueError(
            f"triangular_solve: incompatible shapes {a.shape} and {b.shape} (left_side="
            f"{left_side}); batch axes must be equal"
        )
    return ShapedArray(b.shape, b.dtype)


@triangular_solve_p.def_lowering
def _triangular_solve_lowering(
    ctx: LoweringContext,
    a: Any,
    b: Any,
    *,
    left_side,
    lower,
    transpose_a,
    conjugate_a,
    unit_diagonal,
) -> Any:
    if a.aval.size == 0 or b.aval.size == 0:
        return ctx.builder.constant(0, ctx.aval_out)
    if lowering_platform() != "cpu":
        return _triangular_solve_native(
            ctx, a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal
        )
    attrs = {
        "side": char_attr("L" if left_side else "R"),
        "uplo": char_attr("L" if lower else "U"),
        "trans_x": char_attr(("C" if conjugate_a else "T") if transpose_a else "N"),
        "diag": char_attr("U" if unit_diagonal else "N"),
    }
    target = lapack_target("trsm", a.aval.dtype)
    (out,) = lapack_call(ctx.builder, target, [a, b], [b.aval], attrs, batch_ndim=a.aval.ndim - 2)
    return out


def _triangular_solve_native(
    ctx: LoweringContext,
    a: Any,
    b: Any,
    left_side: bool,
    lower: bool,
    transpose_a: bool,
    conjugate_a: bool,
    unit_diagonal: bool,
) -> Any:
    """StableHLO's own `triangular_solve` (cuBLAS trsm on a GPU), as JAX lowers it off the
    CPU; it conjugates only together with transposing, so a plain conjugate goes first."""
    if conjugate_a and not transpose_a and a.aval.dtype.kind == "c":
        a = lower_fun(conj)(LoweringContext(ctx.builder, [a.aval], [a.aval]), a)
    mode = ("ADJOINT" if conjugate_a else "TRANSPOSE") if transpose_a else "NO_TRANSPOSE"
    flag = {True: "true", False: "false"}
    attrs = (
        f"left_side = {flag[bool(left_side)]}, lower = {flag[bool(lower)]}, "
        f"transpose_a = #stablehlo<transpose {mode}>, "
        f"unit_diagonal = {flag[bool(unit_diagonal)]}"
    )
    return ctx.builder.op("stablehlo.triangular_solve", [a, b], b.aval, attrs)


@triangular_solve_p.def_jvp
def _triangular_solve_jvp(primals, tangents, **params):
    (a, b), (a_dot, b_dot) = primals, tangents
    ans = triangular_solve_p.bind1(a, b, **params)
    out_dot = triangular_solve_p.bind1(a, b_dot, **params)
    left_side, lower = params["left_side"], params["lower"]
    transpose_a, conjugate_a = params["transpose_a"], params["conjugate_a"]
    k = 1 if params["unit_diagonal"] else 0
    g_a = neg(_tril(a_dot, -k) if lower else _triu(a_dot, k))
    g_a = _T(g_a) if transpose_a else g_a
    g_a = conj(g_a) if conjugate_a else g_a
    m, n = get_aval(b).shape[-2:]

    def a_inverse(rhs: Any) -> Any:
        return triangular_solve_p.bind1(a, rhs, **params)

    # As JAX: order the solve and the product by cost.
    if left_side:
        term = a_inverse(_mm(g_a, ans)) if m > n else _mm(a_inverse(g_a), ans)
    else:
        term = a_inverse(_mm(ans, g_a)) if m < n else _mm(ans, a_inverse(g_a))
    return ans, add(out_dot, term)


@triangular_solve_p.def_transpose
def _triangular_solve_transpose(ct, a, b, **params):
    # Linear in b only (like div, swapped).
    ct_b = triangular_solve(
        a,
        ct,
        left_side=params["left_side"],
        lower=params["lower"],
        transpose_a=not params["transpose_a"],
        conjugate_a=params["conjugate_a"],
        unit_diagonal=params["unit_diagonal"],
    )
    return [None, ct_b]


@triangular_solve_p.def_batching
def _triangular_solve_batching(vals, dims, **params):
    (a, b), (a_bdim, b_bdim) = vals, dims
    size = next(
        get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not NOT_MAPPED
    )
    a, b = moveaxis_to(a, a_bdim, 0, size), moveaxis_to(b, b_bdim, 0, size)
    return triangular_solve_p.bind1(a, b, **params), 0


# --- lu -------------------------------------------------------------------------------------

lu_p = Primitive("lu", multiple_results=True)


def lu(x: ArrayLike) -> tuple[Any, Any, Any]:
    """LU decomposition with partial pivoting, as JAX's `lax.linalg.lu`.

    Returns `(lu, pivots, permutation)`: `lu` holds the unit-lower `L` below the diagonal and
    `U` on and above it; `pivots[i]` is the row swapped with row `i` (0-based, int32);
    `permutation` is the row order, so `x[..., permutation, :] == L @ U`.
    """
    lu_, pivots = lu_p.bind(x)
    return lu_, pivots, lu_pivots_to_permutation(pivots, get_aval(x).shape[-2])


lu_pivots_to_permutation_p = Primitive("lu_pivots_to_permutation")


def lu_pivots_to_permutation(pivots: ArrayLike, permutation_size: int) -> Any:
    """The row order that LAPACK's successive row swaps `pivots` produce (int32)."""
    return lu_pivots_to_permutation_p.bind1(pivots, permutation_size=permutation_size)


@lu_pivots_to_permutation_p.def_abstract_eval
def _lu_pivots_to_permutation_abstract_eval(
    pivots: ShapedArray, *, permutation_size: int
) -> ShapedArray:
    if pivots.ndim < 1 or pivots.dtype != np.int32:
        raise TypeError(
            "lu_pivots_to_permutation: pivots must be an int32 array of at least one axis, got "
            f"{pivots.str_short()}"
        )
    if pivots.shape[-1] > permutation_size:
        raise ValueError(
            f"lu_pivots_to_permutation: {pivots.shape[-1]} pivots exceed permutation_size "
            f"{permutation_size}"
        )
    return ShapedArray((*pivots.shape[:-1], permutation_size), np.dtype(np.int32))


def _lu_pivots_to_permutation_loop(pivots: Any, *, permutation_size: int) -> Any:
    """The swaps as a fori_loop of lax ops (the lowering)."""
    # fori_loop imports the interpreters, which import mjcore.lax: a cycle at module level.
    from mjcore.control_flow import fori_loop

    p_aval = get_aval(pivots)
    batch, k = p_aval.shape[:-1], p_aval.shape[-1]
    shape = (*batch, permutation_size)
    nd = len(shape)
    iota_m = broadcasted_iota(np.int32, shape, nd - 1)
    iota_k = broadcasted_iota(np.int32, p_aval.shape, nd - 1)

    def pick(which: Any, values: Any) -> Any:
        return reduce_sum(
            select_n(which, full(get_aval(values).shape, 0, np.int32), values), (nd - 1,)
        )

    def body(i: Any, perm: Any) -> Any:
        i = convert_element_type(i, np.int32)
        i_k = broadcast_in_dim(i, p_aval.shape, ())
        i_m = broadcast_in_dim(i, shape, ())
        j = pick(eq(iota_k, i_k), pivots)
        at_i = eq(iota_m, i_m)
        at_j = eq(iota_m, broadcast_in_dim(j, shape, tuple(range(nd - 1))))
        perm_i = broadcast_in_dim(pick(at_i, perm), shape, tuple(range(nd - 1)))
        perm_j = broadcast_in_dim(pick(at_j, perm), shape, tuple(range(nd - 1)))
        return select_n(at_i, select_n(at_j, perm, perm_i), perm_j)

    if k == 0 or permutation_size == 0:
        return iota_m
    return fori_loop(np.int32(0), np.int32(k), body, iota_m)


lu_pivots_to_permutation_p.def_lowering(lower_fun(_lu_pivots_to_permutation_loop))


@lu_pivots_to_permutation_p.def_host
def _lu_pivots_to_permutation_host(pivots: np.ndarray, *, permutation_size: int) -> np.ndarray:
    # Eagerly a loop of k swaps over the flattened batch; as a lowered fori_loop, each eager
    # call would trace its body again (most of an eager det's time).
    k = pivots.shape[-1]
    batch = pivots.shape[:-1]
    perm = np.empty((*batch, permutation_size), np.int32)
    perm[...] = np.arange(permutation_size, dtype=np.int32)
    if perm.size == 0 or k == 0:  # nothing to swap (and reshape(-1, 0) is ambiguous)
        return perm
    flat = perm.reshape(-1, permutation_size)
    piv = pivots.reshape(-1, k)
    rows = np.arange(flat.shape[0])
    for i in range(k):
        j = piv[:, i]
        at_i = flat[:, i].copy()
        flat[:, i] = flat[rows, j]
        flat[rows, j] = at_i
    return perm


_batching_leading(lu_pivots_to_permutation_p)


@lu_pivots_to_permutation_p.def_jvp
def _lu_pivots_to_permutation_jvp(primals, tangents, **params):
    # An integer result has no tangent space.
    return lu_pivots_to_permutation_p.bind1(*primals, **params), None


@lu_p.def_abstract_eval
def _lu_abstract_eval(x: ShapedArray) -> list[ShapedArray]:
    _check_matrix("lu", x)
    k = min(x.shape[-2:])
    return [ShapedArray(x.shape, x.dtype), ShapedArray((*x.shape[:-2], k), np.dtype(np.int32))]


@lu_p.def_lowering
def _lu_lowering(ctx: LoweringContext, x: Any) -> list[Any]:
    aval = x.aval
    pivots_aval = ctx.avals_out[1]
    if aval.size == 0:
        return [x, ctx.builder.constant(0, pivots_aval)]
    info = ShapedArray(aval.shape[:-2], np.dtype(np.int32))

    def fixup(lu_: Any, ipiv: Any, info: Any) -> list[Any]:
        # LAPACK pivots count from 1; an exactly singular U (info > 0) is still a valid result.
        return [lu_, sub(ipiv, full(pivots_aval.shape, 1, np.int32))]

    return _lapack_lowering(ctx, "getrf", [x], [aval, pivots_aval, info], {}, fixup)


def _permute_rows(x: Any, permutation: Any) -> Any:
    """x[..., permutation, :] via a one-hot matrix product (batched permutations)."""
    x_aval, p_aval = get_aval(x), get_aval(permutation)
    m = x_aval.shape[-2]
    shape = (*p_aval.shape, m)
    onehot = eq(
        broadcast_in_dim(permutation, shape, tuple(range(p_aval.ndim))),
        broadcasted_iota(np.int32, shape, len(shape) - 1),
    )
    return _mm(convert_element_type(onehot, x_aval.dtype), x)


@lu_p.def_jvp
def _lu_jvp(primals, tangents):
    # De Hoog, Anderssen and Lukas, "Differentiation of matrix functionals using triangular
    # factorization" (as JAX's _lu_jvp_rule).
    (a,), (a_dot,) = primals, tangents
    lu_, pivots = lu_p.bind(a)
    aval = get_aval(a)
    *batch, m, n = aval.shape
    k = min(m, n)
    dtype = aval.dtype
    permutation = lu_pivots_to_permutation(pivots, m)
    x = _permute_rows(a_dot, permutation)
    nd = aval.ndim
    zero = full((), 0, dtype)
    l_pad = [(0, 0, 0)] * nd
    l_pad[-1] = (0, m - k, 0)
    l_mat = add(
        pad(_tril(slice_in_dim(lu_, 0, k, nd - 1), -1), zero, l_pad),
        _eye_like((*batch, m, m), dtype),
    )
    u_pad = [(0, 0, 0)] * nd
    u_pad[-2] = (0, n - k, 0)
    u_mat = pad(_triu(slice_in_dim(lu_, 0, k, nd - 2)), zero, u_pad)
    if n > k:
        corner = [(0, 0, 0)] * (nd - 2) + [(k, 0, 0), (k, 0, 0)]
        u_mat = add(u_mat, pad(_eye_like((*batch, n - k, n - k), dtype), zero, corner))
    la = triangular_solve(
        l_mat, x, left_side=True, transpose_a=False, lower=True, unit_diagonal=True
    )
    lau = triangular_solve(u_mat, la, left_side=False, transpose_a=False, lower=False)
    lu_dot = add(_mm(l_mat, _tril(lau, -1)), _mm(_triu(lau), u_mat))
    return [lu_, pivots], [lu_dot, None]


_batching_leading(lu_p)


# --- qr -------------------------------------------------------------------------------------

qr_p = Primitive("qr", multiple_results=True)


def qr(x: ArrayLike, *, full_matrices: bool = True) -> tuple[Any, Any]:
    """QR decomposition `x = q r` (Householder, via LAPACK geqrf and orgqr), as
    JAX's `lax.linalg.qr`. `q` is (..., m, m) and `r` (..., m, n) with `full_matrices`, else
    (..., m, k) and (..., k, n) with `k = min(m, n)`."""
    q, r = qr_p.bind(x, full_matrices=bool(full_matrices))
    return q, r


@qr_p.def_abstract_eval
def _qr_abstract_eval(x: ShapedArray, *, full_matrices: bool) -> list[ShapedArray]:
    _check_matrix("qr", x)
    *batch, m, n = x.shape
    k = m if full_matrices else min(m, n)
    return [ShapedArray((*batch, m, k), x.dtype), ShapedArray((*batch, k, n), x.dtype)]


@qr_p.def_lowering
def _qr_lowering(ctx: LoweringContext, x: Any, *, full_matrices: bool) -> list[Any]:
    aval = x.aval
    *batch, m, n = aval.shape
    k = min(m, n)
    q_aval, r_aval = ctx.avals_out
    if aval.size == 0:
        return _empty_lowering(
            ctx,
            lambda x: [_eye_like(q_aval.shape, aval.dtype), full(r_aval.shape, 0, aval.dtype)],
            x,
        )
    taus = ShapedArray((*batch, k), aval.dtype)
    orgqr = "ungqr" if aval.dtype.kind == "c" else "orgqr"
    a, tau = solver_call(ctx.builder, "geqrf", [x], [aval, taus], {}, batch_ndim=len(batch))
    sub_ctx = LoweringContext(ctx.builder, [aval], [r_aval])
    r = lower_fun(lambda a: _triu(slice_in_dim(a, 0, r_aval.shape[-2], aval.ndim - 2)))(sub_ctx, a)
    q_cols = q_aval.shape[-1]
    if q_cols != n:
        # orgqr needs the (m, q_cols) array whose first k columns hold the reflectors.
        sub_ctx = LoweringContext(ctx.builder, [aval], [q_aval])
        nd = aval.ndim

        def resize(a: Any) -> Any:
            if q_cols < n:
                return slice_in_dim(a, 0, q_cols, nd - 1)
            return pad(a, full((), 0, aval.dtype), [(0, 0, 0)] * (nd - 1) + [(0, q_cols - n, 0)])

        a = lower_fun(resize)(sub_ctx, a)
    (q,) = solver_call(ctx.builder, orgqr, [a, tau], [q_aval], {}, batch_ndim=len(batch))
    return [q, r]


@qr_p.def_jvp
def _qr_jvp(primals, tangents, *, full_matrices: bool):
    # See j-towns.github.io/papers/qr-derivative.pdf (as JAX's qr_jvp_rule).
    (x,), (dx,) = primals, tangents
    q, r = qr_p.bind(x, full_matrices=False)
    *_, m, n = get_aval(x).shape
    if m < n or (full_matrices and m != n):
        raise NotImplementedError(
            "qr: the derivative needs m >= n, and full_matrices=False unless x is square; got "
            f"shape {get_aval(x).shape}"
        )
    dx_rinv = triangular_solve(r, dx)
    qt_dx_rinv = _mm(_H(q), dx_rinv)
    lower_part = _tril(qt_dx_rinv, -1)
    do = sub(lower_part, _H(lower_part))
    dtype = get_aval(x).dtype
    if dtype.kind == "c":
        eye = _eye_like(get_aval(do).shape, dtype)
        imag_diag = sub(qt_dx_rinv, convert_element_type(real(qt_dx_rinv), dtype))
        do = add(do, mul(eye, imag_diag))
    dq = add(_mm(q, sub(do, qt_dx_rinv)), dx_rinv)
    dr = _mm(sub(qt_dx_rinv, do), r)
    return [q, r], [dq, dr]


_batching_leading(qr_p)


@qr_p.def_host
def _qr_host(x: np.ndarray, *, full_matrices: bool) -> list[np.ndarray]:
    # NumPy's qr is LAPACK's geqrf and orgqr/ungqr too, so the signs agree.
    if x.size == 0:
        q_aval, r_aval = _qr_abstract_eval(
            ShapedArray(x.shape, x.dtype), full_matrices=full_matrices
        )
        q = np.broadcast_to(np.eye(q_aval.shape[-2], q_aval.shape[-1], dtype=x.dtype), q_aval.shape)
        return [q, np.zeros(r_aval.shape, x.dtype)]
    q, r = np.linalg.qr(x, mode="complete" if full_matrices else "reduced")
    return [q, r]


# --- geqrf ----------------------------------------------------------------------------------

geqrf_p = Primitive("geqrf", multiple_results=True)


def geqrf(x: ArrayLike) -> tuple[Any, Any]:
    """LAPACK's Householder QR in its compact form, as JAX's `lax.linalg.geqrf`: returns
    `(a, taus)`, with `r` in the upper triangle of `a` (..., m, n), the Householder vectors below
    it (unit diagonal implied) and their scale factors `taus` (..., min(m, n)). Not
    differentiable (as in JAX); `qr` is."""
    a, taus = geqrf_p.bind(x)
    return a, taus


@geqrf_p.def_abstract_eval
def _geqrf_abstract_eval(x: ShapedArray) -> list[ShapedArray]:
    _check_matrix("geqrf", x)
    *batch, m, n = x.shape
    return [ShapedArray(x.shape, x.dtype), ShapedArray((*batch, min(m, n)), x.dtype)]


@geqrf_p.def_lowering
def _geqrf_lowering(ctx: LoweringContext, x: Any) -> list[Any]:
    aval = x.aval
    a_aval, taus_aval = ctx.avals_out
    if aval.size == 0:
        return _empty_lowering(ctx, lambda x: [x, full(taus_aval.shape, 0, aval.dtype)], x)
    return list(
        solver_call(ctx.builder, "geqrf", [x], [a_aval, taus_aval], {}, batch_ndim=aval.ndim - 2)
    )


@geqrf_p.def_jvp
def _geqrf_jvp(primals, tangents):
    raise NotImplementedError(
        "geqrf: Differentiation rule for 'geqrf' not implemented (as in JAX); differentiate "
        "lax.linalg.qr instead"
    )


_batching_leading(geqrf_p)


@geqrf_p.def_host
def _geqrf_host(x: np.ndarray) -> list[np.ndarray]:
    # NumPy's qr(mode='raw') is LAPACK's geqrf too; it returns the factor transposed (Fortran
    # order) and computes float32 in float64, so it runs in x's dtype, one matrix at a time.
    *batch, m, n = x.shape
    a = np.empty_like(x)
    taus = np.empty((*batch, min(m, n)), x.dtype)
    if x.size:
        for i in np.ndindex(*batch):
            h, tau = np.linalg.qr(x[i], mode="raw")
            a[i], taus[i] = h.T, tau
    return [a, taus]


# --- eigh -----------------------------------------------------------------------------------

eigh_p = Primitive("eigh", multiple_results=True)


def eigh(x: ArrayLike, *, lower: bool = True, symmetrize_input: bool = True) -> tuple[Any, Any]:
    """Eigendecomposition of Hermitian matrices, as JAX's `lax.linalg.eigh`: returns `(v, w)`
    with eigenvalues `w` ascending (real dtype) and eigenvectors in the columns of `v`. Only
    the `lower` (or upper) triangle is read unless `symmetrize_input`."""
    if symmetrize_input:
        x = symmetrize(x)
    v, w = eigh_p.bind(x, lower=bool(lower))
    return v, w


@eigh_p.def_abstract_eval
def _eigh_abstract_eval(x: ShapedArray, *, lower: bool) -> list[ShapedArray]:
    _check_matrix("eigh", x, square=True)
    return [ShapedArray(x.shape, x.dtype), ShapedArray(x.shape[:-1], _real_dtype(x.dtype))]


@eigh_p.def_lowering
def _eigh_lowering(ctx: LoweringContext, x: Any, *, lower: bool) -> list[Any]:
    aval = x.aval
    v_aval, w_aval = ctx.avals_out
    if aval.size == 0:
        return [x, ctx.builder.constant(0, w_aval)]
    info = ShapedArray(aval.shape[:-2], np.dtype(np.int32))
    base = "heevd" if aval.dtype.kind == "c" else "syevd"
    attrs = {"mode": char_attr("V"), "uplo": char_attr("L" if lower else "U")}

    def fixup(v: Any, w: Any, info: Any) -> list[Any]:
        return [_nan_where_failed(info, v), _nan_where_failed(info, w)]

    return _lapack_lowering(ctx, base, [x], [v_aval, w_aval, info], attrs, fixup)


@eigh_p.def_jvp
def _eigh_jvp(primals, tangents, *, lower: bool):
    (a,), (a_dot,) = primals, tangents
    v, w_real = eigh_p.bind(a, lower=lower)
    aval = get_aval(a)
    dtype = aval.dtype
    n = aval.shape[-1]
    w = convert_element_type(w_real, dtype)
    eye = _eye_like(aval.shape, dtype)
    # The reciprocal eigenvalue gaps off the diagonal, zero on it (no NaNs from 1/0).
    gaps = sub(_row(w, n), _col(w, n))
    f_mat = sub(div(full(aval.shape, 1, dtype), add(eye, gaps)), eye)
    vdag_adot_v = _mm(_mm(_H(v), a_dot), v)
    dv = _mm(v, mul(f_mat, vdag_adot_v))
    dw = _diagonal(vdag_adot_v)
    dw = real(dw) if dtype.kind == "c" else dw
    return [v, w_real], [dv, dw]


_batching_leading(eigh_p)


# --- svd ------------------------------------------------------------------------------------

svd_p = Primitive("svd", multiple_results=True)


def svd(x: ArrayLike, *, full_matrices: bool = True, compute_uv: bool = True) -> Any:
    """Singular value decomposition `x = u diag(s) vh`, as JAX's `lax.linalg.svd`: returns
    `(u, s, vh)`, or `s` alone without `compute_uv`; singular values descend."""
    outs = svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))
    if not compute_uv:
        return outs[0]
    s, u, vh = outs
    return u, s, vh


@svd_p.def_abstract_eval
def _svd_abstract_eval(x: ShapedArray, *, full_matrices: bool, compute_uv: bool):
    _check_matrix("svd", x)
    *batch, m, n = x.shape
    k = min(m, n)
    s = ShapedArray((*batch, k), _real_dtype(x.dtype))
    if not compute_uv:
        return [s]
    u_cols, vt_rows = (m, n) if full_matrices else (k, k)
    return [
        s,
        ShapedArray((*batch, m, u_cols), x.dtype),
        ShapedArray((*batch, vt_rows, n), x.dtype),
    ]


@svd_p.def_lowering
def _svd_lowering(ctx: LoweringContext, x: Any, *, full_matrices: bool, compute_uv: bool):
    aval = x.aval
    *batch, m, n = aval.shape
    k = min(m, n)
    if aval.size == 0:

        def empty(x: Any) -> list[Any]:
            outs = [full(ctx.avals_out[0].shape, 0, ctx.avals_out[0].dtype)]
            return outs + [_eye_like(a.shape, a.dtype) for a in ctx.avals_out[1:]]

        return _empty_lowering(ctx, empty, x)
    s_aval = ctx.avals_out[0]
    u_cols, vt_rows = (m, n) if full_matrices else (k, k)
    u_aval = ShapedArray((*batch, m, u_cols), aval.dtype)
    vt_aval = ShapedArray((*batch, vt_rows, n), aval.dtype)
    info = ShapedArray(tuple(batch), np.dtype(np.int32))
    mode = ("A" if full_matrices else "S") if compute_uv else "N"

    def fixup(a: Any, s: Any, u: Any, vt: Any, info: Any) -> list[Any]:
        outs = [_nan_where_failed(info, s)]
        if compute_uv:
            outs += [_nan_where_failed(info, u), _nan_where_failed(info, vt)]
        return outs

    return _lapack_lowering(
        ctx, "gesdd", [x], [aval, s_aval, u_aval, vt_aval, info], {"mode": char_attr(mode)}, fixup
    )


@svd_p.def_jvp
def _svd_jvp(primals, tangents, *, full_matrices: bool, compute_uv: bool):
    (a,), (da,) = primals, tangents
    s, u, vt = svd_p.bind(a, full_matrices=False, compute_uv=True)
    if compute_uv and full_matrices:
        raise NotImplementedError(
            "svd: the derivative is implemented for full_matrices=False only (as in JAX)"
        )
    aval = get_aval(a)
    dtype = aval.dtype
    *batch, m, n = aval.shape
    k = min(m, n)
    ut, v = _H(u), _H(vt)
    ds_mat = _mm(_mm(ut, da), v)
    ds = _diagonal(ds_mat)
    ds = real(ds) if dtype.kind == "c" else ds
    if not compute_uv:
        return [s], [ds]
    sq = (*batch, k, k)
    s_row, s_col = _row(s, k), _col(s, k)
    s_diffs = mul(add(s_row, s_col), sub(s_row, s_col))
    real_dtype = _real_dtype(dtype)
    eye = _eye_like(sq, real_dtype)
    f_mat = sub(div(full(sq, 1, real_dtype), add(s_diffs, eye)), eye)
    s_row_c = convert_element_type(s_row, dtype)
    s_col_c = convert_element_type(s_col, dtype)
    dss = mul(s_row_c, ds_mat)
    sds = mul(s_col_c, ds_mat)
    s_zeros = convert_element_type(eq(s, full(get_aval(s).shape, 0, real_dtype)), real_dtype)
    s_inv = sub(div(full(get_aval(s).shape, 1, real_dtype), add(s, s_zeros)), s_zeros)
    s_inv_mat = _diag_embed(s_inv, dtype)
    half = full(sq, 0.5, dtype)
    dudv_diag = mul(mul(half, sub(ds_mat, _H(ds_mat))), s_inv_mat)
    f_c = convert_element_type(f_mat, dtype)
    du = _mm(u, add(mul(f_c, add(dss, _H(dss))), dudv_diag))
    dv = _mm(v, mul(f_c, add(sds, _H(sds))))
    if m > n:
        dav = _mm(da, v)
        du = add(du, div(sub(dav, _mm(u, _mm(ut, dav))), convert_element_type(_row(s, m), dtype)))
    if n > m:
        dahu = _mm(_H(da), u)
        dv = add(dv, div(sub(dahu, _mm(v, _mm(vt, dahu))), convert_element_type(_row(s, n), dtype)))
    return [s, u, vt], [ds, du, _H(dv)]


_batching_leading(svd_p)


# --- eig ------------------------------------------------------------------------------------

eig_p = Primitive("eig", multiple_results=True)


def eig(x: ArrayLike, *, compute_eigenvectors: bool = True) -> Any:
    """Eigenvalues `w` and right eigenvectors `v` (columns, unit length) of general square
    matrices, complex-valued, via LAPACK geev: `(w, v)`, or `w` alone. As in JAX, only the
    eigenvalues are differentiable."""
    outs = eig_p.bind(x, compute_eigenvectors=bool(compute_eigenvectors))
    return tuple(outs) if compute_eigenvectors else outs[0]


@eig_p.def_abstract_eval
def _eig_abstract_eval(x: ShapedArray, *, compute_eigenvectors: bool) -> list[ShapedArray]:
    _check_matrix("eig", x, square=True)
    c = np.dtype(np.complex64) if x.dtype in (np.float32, np.complex64) else np.dtype(np.complex128)
    w = ShapedArray(x.shape[:-1], c)
    return [w, ShapedArray(x.shape, c)] if compute_eigenvectors else [w]


@eig_p.def_lowering
def _eig_lowering(ctx: LoweringContext, x: Any, *, compute_eigenvectors: bool) -> list[Any]:
    aval = x.aval
    if aval.size == 0:
        return [ctx.builder.constant(0, a) for a in ctx.avals_out]
    w_aval = ctx.avals_out[0]
    v_aval = ShapedArray(aval.shape, w_aval.dtype)
    info = ShapedArray(aval.shape[:-2], np.dtype(np.int32))
    attrs = {"compute_left": char_attr("N"), "compute_right": char_attr("V")}
    fixup: Callable[..., list[Any]]  # (the outputs of geev: 4 complex, 5 real)
    if aval.dtype.kind == "c":
        results = [w_aval, v_aval, v_aval, info]

        def fixup(w: Any, vl: Any, vr: Any, info: Any) -> list[Any]:
            outs = [w, vr] if compute_eigenvectors else [w]
            return [_nan_where_failed(info, o) for o in outs]

    else:
        real_w = ShapedArray(aval.shape[:-1], aval.dtype)
        results = [real_w, real_w, v_aval, v_aval, info]

        def fixup(wr: Any, wi: Any, vl: Any, vr: Any, info: Any) -> list[Any]:
            outs = [make_complex(wr, wi), vr] if compute_eigenvectors else [make_complex(wr, wi)]
            return [_nan_where_failed(info, o) for o in outs]

    return _lapack_lowering(ctx, "geev", [x], results, attrs, fixup)


@eig_p.def_jvp
def _eig_jvp(primals, tangents, *, compute_eigenvectors: bool):
    if compute_eigenvectors:
        raise NotImplementedError(
            "eig: the derivatives of eigenvectors are not implemented, only eigenvalues (as in "
            "JAX); use eig(x, compute_eigenvectors=False) or mjnp.linalg.eigvals"
        )
    # JAX's eigenvalue derivative: dw = diag(v^{-1} dA v), with v^{-1} applied through LU.
    (a,), (a_dot,) = primals, tangents
    w, v = eig_p.bind(a, compute_eigenvectors=True)
    dtype = get_aval(v).dtype
    a_dot = convert_element_type(a_dot, dtype)
    lu_, _, permutation = lu(v)
    rhs = _permute_rows(_mm(a_dot, v), permutation)
    y = triangular_solve(lu_, rhs, left_side=True, lower=True, unit_diagonal=True)
    vinv_adot_v = triangular_solve(lu_, y, left_side=True, lower=False)
    return [w], [_diagonal(vinv_adot_v)]


_batching_leading(eig_p)


__all__ = [
    "cholesky",
    "eig",
    "eigh",
    "geqrf",
    "lu",
    "lu_pivots_to_permutation",
    "qr",
    "svd",
    "symmetrize",
    "triangular_solve",
]
