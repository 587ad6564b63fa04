"""`mjnp.linalg`: NumPy's linear algebra, composed from the `mjcore.lax` decompositions.

Errors are NumPy's `LinAlgError` (the same class): for arrays of fewer than two dimensions or
non-square matrices, and, eagerly, for numerically failed decompositions (a singular matrix in
`inv`/`solve`, a matrix that is not positive definite in `cholesky`, eigenvalue or SVD
iterations that do not converge). NB: under a transformation (`jit`, `grad`, `vmap`) there are
no values to check, so a failed decomposition gives what XLA computes instead: infinities or
NaNs, as in JAX.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from mjcore import dtypes, lax
from mjcore.array import Array as _ConcreteArray
from mjcore.eager_fusion import fuse_eagerly
from mjnp import _matrix_products as _products
from mjnp._host_numpy import (
    PAIR_ELEMENTS,
    PRODUCT_ELEMENTS,
    attempt,
    bare,
    lapack_values,
    linalg_dtype_ok,
    linalg_ok,
    wrap,
)
from mjnp._manipulation import asarray_strong, moveaxis, normalize_axes, reject_list_axis
from mjnp._matrix_products import cross as main_cross
from mjnp._out import write_exact_out

ArrayLike = Any
Array = Any
LinAlgError = np.linalg.LinAlgError


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


# --- argument handling ----------------------------------------------------------------------


def _inexact(fname: str, a: ArrayLike) -> Array:
    """`a` in NumPy's linalg computation dtype: bool and integers go to float64; float16 (and
    other unsupported dtypes) raise TypeError, as NumPy does."""
    x = asarray_strong(f"linalg.{fname}", a)
    if x.dtype.kind in "biu":
        return lax.convert_element_type(x, np.float64)
    if x.dtype.name not in ("float32", "float64", "complex64", "complex128"):
        raise TypeError(f"mjnp.linalg.{fname}: array type {x.dtype.name} is unsupported in linalg")
    return x


def _check_stacked(fname: str, x: Array, square: bool = True) -> None:
    if x.ndim < 2:
        raise LinAlgError(
            f"mjnp.linalg.{fname}: {x.ndim}-dimensional array given. Array must be at least "
            "two-dimensional"
        )
    if square and x.shape[-1] != x.shape[-2]:
        raise LinAlgError(
            f"mjnp.linalg.{fname}: last 2 dimensions of the array must be square, got shape "
            f"{x.shape}"
        )


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype in (np.float32, np.complex64) else np.dtype(np.float64)


def _swap(x: Array) -> Array:
    return moveaxis(x, -1, -2)


def _conj_swap(x: Array) -> Array:
    x = _swap(x)
    return lax.conj(x) if x.dtype.kind == "c" else x


def _mm(a: Array, b: Array) -> Array:
    """Batched matrix product over equal leading axes."""
    nd = a.ndim
    batch = tuple(range(nd - 2))
    return lax.dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _diag(x: Array) -> Array:
    """Main diagonals (..., m, n) -> (..., min(m, n)).

    A strided slice of the flattened matrices: two view primitives, where `diagonal`'s
    gather is several eager operations (it dominated eager `det`, `solve` and `inv`).
    """
    *batch, m, n = x.shape
    k = min(m, n)
    flat = lax.reshape(x, (*batch, m * n))
    nb = len(batch)
    return lax.slice(
        flat, (0,) * (nb + 1), (*batch, (k - 1) * (n + 1) + 1 if k else 0), (1,) * nb + (n + 1,)
    )


def _eye(shape: tuple[int, ...], dtype: np.dtype) -> Array:
    rows = lax.broadcasted_iota(np.int32, shape, len(shape) - 2)
    cols = lax.broadcasted_iota(np.int32, shape, len(shape) - 1)
    return lax.convert_element_type(lax.eq(rows, cols), dtype)


def _is_concrete(x: Any) -> bool:
    return isinstance(x, _ConcreteArray)


def _plain(x: Any) -> bool:
    """None or a Python int or float (not a bool): a tolerance NumPy reads as mjnp does."""
    return x is None or type(x) in (int, float)


def _plain_axis(axis: Any) -> bool:
    """None, an int, or a tuple of ints (not bools): an axis NumPy's norm reads as mjnp's."""
    if axis is None or type(axis) is int:
        return True
    return type(axis) is tuple and all(type(i) is int for i in axis)


# Eager checks for numerically failed decompositions. The LAPACK kernels' `info` outputs are
# turned into NaNs by the lax lowerings (as JAX does), so a NaN the input did not hold marks a
# failure; LU's own failure mark is an exactly zero pivot. Under a transformation the values
# are unknown and nothing is checked.


def _check_nonsingular(fname: str, lu_: Array) -> None:
    """LinAlgError when U has an exactly zero pivot, as LAPACK's getrf reports (info > 0)."""
    if _is_concrete(lu_) and (np.diagonal(np.asarray(lu_), 0, -2, -1) == 0).any():
        raise LinAlgError(
            f"mjnp.linalg.{fname}: Singular matrix (an exactly zero pivot in its LU "
            "factorization); use mjnp.linalg.lstsq or pinv for a least-squares solution"
        )


def _check_converged(fname: str, message: str, result: Array, x: Array | None) -> None:
    """LinAlgError(message) when `result` has NaNs, unless the input `x` is given and is not
    finite (then NumPy returns the NaNs too)."""
    if not _is_concrete(result) or (x is not None and not _is_concrete(x)):
        return
    if np.isnan(np.asarray(result)).any() and (x is None or np.isfinite(np.asarray(x)).all()):
        raise LinAlgError(f"mjnp.linalg.{fname}: {message}")


def _check_finite(fname: str, x: Array) -> None:
    """LinAlgError for infinities or NaNs in a concrete input, which NumPy's eig rejects."""
    if _is_concrete(x) and not np.isfinite(np.asarray(x)).all():
        raise LinAlgError(f"mjnp.linalg.{fname}: Array must not contain infs or NaNs")


# --- decompositions -------------------------------------------------------------------------


def cholesky(a: ArrayLike, /, *, upper: bool = False) -> Array:
    """Cholesky factor, as `numpy.linalg.cholesky`.

    NB: the factor of `(a + a^H) / 2` is returned (as JAX), which is NumPy's result for the
    Hermitian input NumPy requires; eagerly on the CPU (`mjnp._host_numpy`) NumPy computes it
    from the lower (upper) triangle.

    Raises:
        LinAlgError: eagerly, when the matrix is not positive definite; under a transformation
            such a matrix gives NaNs instead.
    """
    vals = lapack_values(a)
    if vals is not None and linalg_ok(vals[0]):
        out = attempt(np.linalg.cholesky, vals[0], upper=bool(upper))
        if out is not None:
            return wrap(out)
    x = _inexact("cholesky", a)
    _check_stacked("cholesky", x)
    factor = lax.cholesky(x)
    _check_converged("cholesky", "Matrix is not positive definite", factor, x)
    return _conj_swap(factor) if upper else factor


def qr(a: ArrayLike, mode: str = "reduced") -> Any:
    """QR decomposition, as `numpy.linalg.qr` (modes "reduced", "complete", "r" and "raw").

    Mode "raw" returns `(h, tau)`: LAPACK geqrf's Householder reflectors and scale factors,
    `h` transposed (..., n, m) as NumPy's; like JAX's `geqrf`, it is not differentiable.
    """
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"mjnp.linalg.qr: unrecognized mode {mode!r}")
    vals = lapack_values(a)
    if vals is not None and linalg_ok(vals[0], square=False):
        out = attempt(np.linalg.qr, vals[0], mode)
        if out is not None:
            if mode in ("r", "raw"):
                return wrap(out) if mode == "r" else (wrap(out[0]), wrap(out[1]))
            return QRResult(wrap(out.Q), wrap(out.R))
    x = _inexact("qr", a)
    _check_stacked("qr", x, square=False)
    if mode == "raw":
        h, tau = lax.geqrf(x)
        return _swap(h), tau
    q, r = lax.qr(x, full_matrices=mode == "complete")
    if mode == "r":
        return r
    return QRResult(q, r)


def eigh(a: ArrayLike, UPLO: str = "L") -> EighResult:  # noqa: N803  (NumPy's name)
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices, as `numpy.linalg.eigh`;
    only the `UPLO` triangle is read (LinAlgError eagerly if the iteration fails to converge;
    NaNs under a transformation)."""
    if UPLO not in ("L", "U", "l", "u"):
        raise ValueError(f"mjnp.linalg.eigh: UPLO argument must be 'L' or 'U', got {UPLO!r}")
    UPLO = UPLO.upper()  # noqa: N806  (NumPy accepts 'l' and 'u')
    vals = lapack_values(a)
    if vals is not None and linalg_ok(vals[0]):
        out = attempt(np.linalg.eigh, vals[0], UPLO)
        if out is not None:
            return EighResult(wrap(out.eigenvalues), wrap(out.eigenvectors))
    x = _inexact("eigh", a)
    _check_stacked("eigh", x)
    v, w = lax.eigh(x, lower=UPLO == "L", symmetrize_input=False)
    _check_converged("eigh", "Eigenvalues did not converge", w, x)
    return EighResult(w, v)


def eigvalsh(a: ArrayLike, UPLO: str = "L") -> Array:  # noqa: N803  (NumPy's name)
    """Eigenvalues of Hermitian matrices, as `numpy.linalg.eigvalsh`."""
    if UPLO in ("L", "U", "l", "u"):
        vals = lapack_values(a)
        if vals is not None and linalg_ok(vals[0]):
            out = attempt(np.linalg.eigvalsh, vals[0], UPLO.upper())
            if out is not None:
                return wrap(out)
    return eigh(a, UPLO).eigenvalues


def _real_if_all_real(w: Array, v: Array | None) -> tuple[Array, Array | None]:
    """NumPy returns real eigenvalues (and vectors) for a real input when all eigenvalues
    are real. NB: that depends on values, so under a transformation the result stays
    complex."""
    if not _is_concrete(w) or (v is not None and not _is_concrete(v)):
        return w, v
    if np.any(np.imag(np.asarray(w)) != 0):
        return w, v
    return lax.real(w), None if v is None else lax.real(v)


def eig(a: ArrayLike, /) -> EigResult:
    """Eigenvalues and right eigenvectors of general square matrices, as `numpy.linalg.eig`.

    Not differentiable (as in JAX); `eigvals` is.

    Raises:
        LinAlgError: eagerly, for infinities or NaNs in `a` and when the iteration fails to
            converge (NaNs under a transformation).
    """
    vals = lapack_values(a)
    if vals is not None and linalg_ok(vals[0]):
        out = attempt(np.linalg.eig, vals[0])
        if out is not None:
            return EigResult(wrap(out.eigenvalues), wrap(out.eigenvectors))
    x = _inexact("eig", a)
    _check_stacked("eig", x)
    _check_finite("eig", x)
    w, v = lax.eig(x)
    _check_converged("eig", "Eigenvalues did not converge", w, None)
    if x.dtype.kind != "c":
        w, v = _real_if_all_real(w, v)
    return EigResult(w, v)


def eigvals(a: ArrayLike, /) -> Array:
    """Eigenvalues of general square matrices, as `numpy.linalg.eigvals` (errors as `eig`)."""
    vals = lapack_values(a)
    if vals is not None and linalg_ok(vals[0]):
        out = attempt(np.linalg.eigvals, vals[0])
        if out is not None:
            return wrap(out)
    x = _inexact("eigvals", a)
    _check_stacked("eigvals", x)
    _check_finite("eigvals", x)
    w = lax.eig(x, compute_eigenvectors=False)
    _check_converged("eigvals", "Eigenvalues did not converge", w, None)
    if x.dtype.kind != "c":
        w, _ = _real_if_all_real(w, None)
    return w


def svd(
    a: ArrayLike, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False
) -> Any:
    """Singular value decomposition, as `numpy.linalg.svd`.

    NB: `hermitian=True` is accepted and computes the general SVD (same singular values).

    Raises:
        LinAlgError: eagerly, when the iteration fails to converge, which NaNs in `a` also
            cause, as in NumPy (NaNs under a transformation).
    """
    if not hermitian:  # NumPy's hermitian SVD is eigh-based: mjnp computes the general one
        vals = lapack_values(a)
        if vals is not None and linalg_ok(vals[0], square=False):
            out = attempt(np.linalg.svd, vals[0], bool(full_matrices), bool(compute_uv))
            if out is not None:
                if not compute_uv:
                    return wrap(out)
                return SVDResult(wrap(out.U), wrap(out.S), wrap(out.Vh))
    x = _inexact("svd", a)
    _check_stacked("svd", x, square=False)
    del hermitian
    if not compute_uv:
        s = lax.svd(x, compute_uv=False)
        _check_converged("svd", "SVD did not converge", s, None)
        return s
    u, s, vh = lax.svd(x, full_matrices=bool(full_matrices))
    _check_converged("svd", "SVD did not converge", s, None)
    return SVDResult(u, s, vh)


def svdvals(x: ArrayLike, /) -> Array:
    """Singular values, descending, as `numpy.linalg.svdvals`."""
    return svd(x, compute_uv=False)


# --- LU-based: det, slogdet, solve, inv -----------------------------------------------------


def _lu_parts(x: Array) -> tuple[Array, Array, Array, Array]:
    """(diagonal of U, permutation parity as +-1, lu, permutation)."""
    lu_, pivots, permutation = lax.lu(x)
    swaps = lax.ne(pivots, lax.broadcasted_iota(np.int32, pivots.shape, pivots.ndim - 1))
    n_swaps = lax.reduce_sum(lax.convert_element_type(swaps, np.int32), (pivots.ndim - 1,))
    odd = lax.eq(
        lax.rem(n_swaps, lax.full(n_swaps.shape, 2, np.int32)), lax.full(n_swaps.shape, 1, np.int32)
    )
    parity = lax.select_n(odd, lax.full(odd.shape, 1, x.dtype), lax.full(odd.shape, -1, x.dtype))
    return _diag(lu_), parity, lu_, permutation


def det(a: ArrayLike) -> Array:
    """Determinant, as `numpy.linalg.det` (via LU)."""
    vals = lapack_values(a)
    if vals is not None and linalg_ok(vals[0]):
        out = attempt(np.linalg.det, vals[0])
        if out is not None:
            return wrap(out)
    x = _inexact("det", a)
    _check_stacked("det", x)
    diag, parity, _, _ = _lu_parts(x)
    return lax.mul(parity, lax.reduce_prod(diag, (diag.ndim - 1,)))


def slogdet(a: ArrayLike) -> SlogdetResult:
    """Sign (or phase) and natural log of the absolute determinant, as
    `numpy.linalg.slogdet`."""
    vals = lapack_values(a)
    if vals is not None and linalg_ok(vals[0]):
        out = attempt(np.linalg.slogdet, vals[0])
        if out is not None:
            return SlogdetResult(wrap(out.sign), wrap(out.logabsdet))
    x = _inexact("slogdet", a)
    _check_stacked("slogdet", x)
    diag, parity, _, _ = _lu_parts(x)
    absdiag = lax.abs(diag)
    logabs = lax.reduce_sum(lax.log(absdiag), (diag.ndim - 1,))
    if x.dtype.kind == "c":
        unit = lax.select_n(
            lax.eq(absdiag, lax.full(absdiag.shape, 0, absdiag.dtype)),
            lax.div(diag, lax.convert_element_type(absdiag, x.dtype)),
            lax.full(diag.shape, 0, x.dtype),
        )
    else:
        unit = lax.sign(diag)
    sign = lax.mul(parity, lax.reduce_prod(unit, (diag.ndim - 1,)))
    return SlogdetResult(sign, logabs)


def _permute_rows(b: Array, permutation: Array) -> Array:
    """b[..., permutation, :] for batched permutations (a one-hot product keeps it linear)."""
    m = b.shape[-2]
    shape = (*permutation.shape, m)
    onehot = lax.eq(
        lax.broadcast_in_dim(permutation, shape, tuple(range(permutation.ndim))),
        lax.broadcasted_iota(np.int32, shape, len(shape) - 1),
    )
    return _mm(lax.convert_element_type(onehot, b.dtype), b)


def _lu_solve(fname: str | None, x: Array, b: Array) -> Array:
    """Solve x @ out = b for square x (..., n, n) and b (..., n, k) with equal batch axes;
    LinAlgError eagerly when x is singular, unless `fname` is None (then infs or NaNs)."""
    _, _, lu_, permutation = _lu_parts(x)
    if fname is not None:
        _check_nonsingular(fname, lu_)
    pb = _permute_rows(b, permutation)
    y = lax.triangular_solve(lu_, pb, left_side=True, lower=True, unit_diagonal=True)
    return lax.triangular_solve(lu_, y, left_side=True, lower=False)


def _result_inexact(*xs: Array) -> np.dtype:
    return np.result_type(*[x.dtype for x in xs])


def solve(a: ArrayLike, b: ArrayLike) -> Array:
    """Solve `a @ x = b`, as `numpy.linalg.solve`: `b` is a vector only when 1-D, otherwise
    a stack of matrices; batch axes broadcast.

    Raises:
        LinAlgError: for a singular `a` (an exactly zero pivot), eagerly; under a
            transformation it gives infinities or NaNs instead.
    """
    vals = lapack_values(a, b)
    if (
        vals is not None
        and linalg_ok(vals[0])
        and vals[1].ndim
        and linalg_dtype_ok(vals[1])
        # batch axes that broadcast may make a large result: bounded by the operands' product
        and (
            vals[1].ndim == 1
            or vals[0].shape[:-2] == vals[1].shape[:-2]
            or vals[0].size * vals[1].size <= PAIR_ELEMENTS
        )
    ):
        out = attempt(np.linalg.solve, vals[0], vals[1])
        if out is not None:
            return wrap(out)
    x, rhs = _inexact("solve", a), _inexact("solve", b)
    _check_stacked("solve", x)
    dtype = _result_inexact(x, rhs)
    x, rhs = lax.convert_element_type(x, dtype), lax.convert_element_type(rhs, dtype)
    n = x.shape[-1]
    vector = rhs.ndim == 1
    if vector:
        rhs = lax.reshape(rhs, (rhs.shape[0], 1))
    if rhs.shape[-2] != n:
        raise ValueError(
            f"mjnp.linalg.solve: a of shape {x.shape} and b of shape {rhs.shape} do not match: "
            f"b needs {n} rows"
        )
    try:
        batch = np.broadcast_shapes(x.shape[:-2], rhs.shape[:-2])
    except ValueError as err:
        raise ValueError(
            f"mjnp.linalg.solve: batch shapes of a {x.shape} and b {rhs.shape} do not broadcast"
        ) from err
    x = lax.broadcast_to(x, (*batch, n, n))
    rhs = lax.broadcast_to(rhs, (*batch, *rhs.shape[-2:]))
    out = _lu_solve("solve", x, rhs)
    return lax.reshape(out, out.shape[:-1]) if vector else out


def inv(a: ArrayLike) -> Array:
    """Matrix inverse, as `numpy.linalg.inv`.

    Raises:
        LinAlgError: for a singular matrix (an exactly zero pivot), eagerly; under a
            transformation it gives infinities or NaNs instead.
    """
    vals = lapack_values(a)
    if vals is not None and linalg_ok(vals[0]):
        out = attempt(np.linalg.inv, vals[0])
        if out is not None:
            return wrap(out)
    x = _inexact("inv", a)
    _check_stacked("inv", x)
    return _lu_solve("inv", x, _eye(x.shape, x.dtype))


def matrix_power(a: ArrayLike, n: int) -> Array:
    """`a` to the integer power `n` by repeated squaring, as `numpy.linalg.matrix_power`."""
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError("mjnp.linalg.matrix_power: exponent must be an integer") from err
    vals = lapack_values(a)
    if (
        vals is not None
        and dtypes.kind(vals[0].dtype) in "biufc"
        and vals[0].ndim >= 2
        and vals[0].shape[-1] == vals[0].shape[-2]
        and (n >= 0 or linalg_ok(vals[0]))
        and vals[0].size <= PRODUCT_ELEMENTS  # (NumPy's matmul: the products' bound)
    ):
        out = attempt(np.linalg.matrix_power, vals[0], n)
        if out is not None:
            # NumPy's n == 1 returns its input: copied, as a new array
            return wrap(out.copy() if out is vals[0] else out)
    x = asarray_strong("linalg.matrix_power", a)
    _check_stacked("matrix_power", x)
    if n == 0:
        return lax.broadcast_to(_eye(x.shape[-2:], x.dtype), x.shape)
    if n < 0:
        x, n = inv(x), -n
    result = None
    while n:
        if n & 1:
            result = x if result is None else _products.matmul(result, x)
        n >>= 1
        if n:
            x = _products.matmul(x, x)
    return result


# --- SVD-based: lstsq, pinv, matrix_rank, cond, norms ---------------------------------------


def _rtol_default(x: Array) -> float:
    return builtins.max(x.shape[-2:]) * float(dtypes.finfo(_real_dtype(x.dtype)).eps)


def matrix_rank(
    A: ArrayLike,
    tol: ArrayLike | None = None,
    hermitian: bool = False,
    *,
    rtol: Any = None,  # noqa: N803
) -> Array:
    """Rank by counting singular values above a tolerance, as `numpy.linalg.matrix_rank`."""
    if not hermitian and _plain(tol) and _plain(rtol):
        vals = lapack_values(A)
        if vals is not None and linalg_dtype_ok(vals[0]):
            out = attempt(np.linalg.matrix_rank, vals[0], tol, rtol=rtol)
            if out is not None:
                return wrap(out)
    from mjnp import count_nonzero, greater, multiply
    from mjnp import max as amax

    x = _inexact("matrix_rank", A)
    if x.ndim < 2:
        return lax.convert_element_type(
            lax.reduce_or(lax.ne(x, lax.full(x.shape, 0, x.dtype)), tuple(range(x.ndim))), np.int64
        )
    s = svdvals(x)
    if tol is None:
        factor: Any  # (a float, or rtol as an Array)
        factor = _rtol_default(x) if rtol is None else asarray_strong("linalg.matrix_rank", rtol)
        if rtol is not None:
            factor = lax.expand_dims(factor, (factor.ndim,)) if factor.ndim else factor
        tol_ = multiply(amax(s, axis=-1, keepdims=True, initial=0.0), factor)
    else:
        t = asarray_strong("linalg.matrix_rank", tol)
        tol_ = lax.expand_dims(t, (t.ndim,)) if t.ndim else t
    return count_nonzero(greater(s, tol_), axis=-1)


def pinv(a: ArrayLike, rcond: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Array:
    """Moore-Penrose pseudo-inverse via the SVD, as `numpy.linalg.pinv`."""
    if not hermitian and _plain(rcond) and _plain(rtol):
        vals = lapack_values(a)
        if vals is not None and linalg_ok(vals[0], square=False):
            # rtol=None is NumPy's unset rtol here (mjnp cannot tell them apart): rcond 1e-15
            kwargs = {} if rtol is None else {"rtol": rtol}
            out = attempt(np.linalg.pinv, vals[0], rcond, **kwargs)
            if out is not None:
                return wrap(out)
    from mjnp import asarray, greater, multiply, where
    from mjnp import max as amax

    x = _inexact("pinv", a)
    _check_stacked("pinv", x, square=False)
    if x.shape[-1] * x.shape[-2] == 0:
        # As NumPy: empty matrices give an empty result in the input's own dtype.
        raw = asarray_strong("linalg.pinv", a)
        return lax.full((*raw.shape[:-2], raw.shape[-1], raw.shape[-2]), 0, raw.dtype)
    if rcond is not None and rtol is not None:
        raise ValueError("mjnp.linalg.pinv: `rtol` and `rcond` can't be both set.")
    cutoff_factor = rcond if rcond is not None else rtol
    if cutoff_factor is None:
        cutoff_factor = 1e-15 if rtol is None and rcond is None else _rtol_default(x)
    factor = asarray(cutoff_factor)
    if factor.ndim:
        factor = lax.expand_dims(factor, (factor.ndim,))
    u, s, vh = svd(x, full_matrices=False)
    cutoff = multiply(amax(s, axis=-1, keepdims=True, initial=0.0), factor)
    large = greater(s, cutoff)
    safe = where(large, s, 1)
    s_inv = where(large, lax.div(lax.full(s.shape, 1, s.dtype), safe), 0)
    s_inv = lax.convert_element_type(s_inv, x.dtype)
    scaled = lax.mul(
        _conj_swap(vh),
        lax.broadcast_in_dim(
            s_inv, (*s.shape[:-1], vh.shape[-1], s.shape[-1]), (*range(s.ndim - 1), s.ndim)
        ),
    )
    return _mm(scaled, _conj_swap(u))


def lstsq(a: ArrayLike, b: ArrayLike, rcond: Any = None) -> tuple[Array, Array, Array, Array]:
    """Least-squares solution of `a @ x = b`, as `numpy.linalg.lstsq`: returns
    `(x, residuals, rank, s)`.

    NB: residuals are empty when the rank is below `n` or `m <= n`, which needs the rank's
    value: under a transformation the residuals are always computed (as in JAX).
    """
    if _plain(rcond):
        vals = lapack_values(a, b)
        if (
            vals is not None
            and vals[0].ndim == 2
            and vals[1].ndim in (1, 2)
            and linalg_dtype_ok(vals[0])
            and linalg_dtype_ok(vals[1])
        ):
            out = attempt(np.linalg.lstsq, vals[0], vals[1], rcond)
            if out is not None:
                sol, residuals, rank, s = out
                return wrap(sol), wrap(residuals), wrap(np.int32(rank)), wrap(s)
    from mjnp import sum as asum

    x, rhs = _inexact("lstsq", a), _inexact("lstsq", b)
    if x.ndim != 2:
        raise LinAlgError(f"mjnp.linalg.lstsq: a must be two-dimensional, got shape {x.shape}")
    if rhs.ndim not in (1, 2):
        raise LinAlgError(f"mjnp.linalg.lstsq: b must be one- or two-dimensional, got {rhs.shape}")
    m, n = x.shape
    if rhs.shape[0] != m:
        raise LinAlgError(f"mjnp.linalg.lstsq: Incompatible dimensions {x.shape} and {rhs.shape}")
    dtype = _result_inexact(x, rhs)
    x, rhs = lax.convert_element_type(x, dtype), lax.convert_element_type(rhs, dtype)
    vector = rhs.ndim == 1
    rhs2 = lax.reshape(rhs, (m, 1)) if vector else rhs
    if rcond is None:
        rcond = float(dtypes.finfo(_real_dtype(dtype)).eps) * builtins.max(m, n)
    if x.size == 0:
        from mjnp import zeros

        sol = zeros((n, rhs2.shape[1]), dtype)
        s = zeros((0,), _real_dtype(dtype))
        rank = lax.convert_element_type(lax.full((), 0, np.int32), np.int32)
        res = asum(
            lax.mul(rhs2, lax.conj(rhs2)) if dtype.kind == "c" else lax.mul(rhs2, rhs2),
            axis=0,
        )
        res = lax.convert_element_type(
            lax.real(res) if dtype.kind == "c" else res, _real_dtype(dtype)
        )
        if not (n == 0 and m > 0):  # rank 0 < n, or m <= n: no residuals, as NumPy
            res = lax.slice_in_dim(res, 0, 0, 0)
        sol = lax.reshape(sol, (n,)) if vector else sol
        return sol, res, rank, s
    from mjnp import greater, where

    # One SVD gives the solution, the rank and `s`. x = V ((U^H b) / S), in this order: the
    # pseudo-inverse first (V S^-1 U^H, then @ b) loses ~10x more in float32.
    u, s, vh = svd(x, full_matrices=False)
    large = greater(s, lax.mul(s[0], lax.full((), rcond, s.dtype)))
    rhs_shape = (s.shape[0], rhs2.shape[1])
    large_b = lax.broadcast_in_dim(large, rhs_shape, (0,))
    s_b = lax.broadcast_in_dim(lax.convert_element_type(where(large, s, 1), dtype), rhs_shape, (0,))
    zero = lax.full((), 0, dtype)

    def solve_svd(rhs: Array) -> Array:
        u_r = _mm(_conj_swap(u), rhs)
        return _mm(_conj_swap(vh), where(large_b, lax.div(u_r, s_b), zero))

    sol = solve_svd(rhs2)
    # One step of iterative refinement: XLA's gesdd factors are a few ulp from LAPACK's gelsd
    # path in NumPy, which float32 `a @ x == b` checks at 1e-6 notice.
    sol = lax.add(sol, solve_svd(lax.sub(rhs2, _mm(x, sol))))
    rank = lax.convert_element_type(asum(large), np.int32)
    resid = lax.sub(_products.matmul(x, sol), rhs2)
    sq = lax.real(lax.mul(resid, lax.conj(resid))) if dtype.kind == "c" else lax.mul(resid, resid)
    residuals = asum(sq, axis=0)
    if _is_concrete(rank) and not (int(np.asarray(rank)) == n and m > n):
        residuals = lax.slice_in_dim(residuals, 0, 0, 0)
    sol = lax.reshape(sol, (n,)) if vector else sol
    return sol, residuals, rank, s


def cond(x: ArrayLike, p: Any = None) -> Array:
    """Condition number, as `numpy.linalg.cond` (inf for a singular matrix)."""
    if p is None or type(p) in (int, float, str):
        vals = lapack_values(x)
        if vals is not None and linalg_ok(vals[0], square=p not in (None, 2, -2)):
            out = attempt(np.linalg.cond, vals[0], p)
            if out is not None:
                return wrap(out)
    a = _inexact("cond", x)
    _check_stacked("cond", a, square=p not in (None, 2, -2))
    if a.size == 0 and a.shape[-2] * a.shape[-1] == 0:
        raise LinAlgError("mjnp.linalg.cond: cond is not defined on empty arrays")
    if p in (None, 2, -2):
        s = svdvals(a)
        first, last = (
            lax.slice_in_dim(s, 0, 1, s.ndim - 1),
            lax.slice_in_dim(s, s.shape[-1] - 1, s.shape[-1], s.ndim - 1),
        )
        ratio = lax.div(first, last) if p != -2 else lax.div(last, first)
        result = lax.reshape(ratio, ratio.shape[:-1])
    else:
        inverse = _lu_solve(None, a, _eye(a.shape, a.dtype))
        result = lax.mul(norm(a, p, axis=(-2, -1)), norm(inverse, p, axis=(-2, -1)))
    return _singular_to_inf(result, a)


@fuse_eagerly  # one replayed call eagerly, where its five operations would each dispatch
def _singular_to_inf(result: Array, a: Array) -> Array:
    # As NumPy: a NaN from a singular matrix (0/0 singular values, or an inverse of NaNs), not
    # from a NaN input, is an infinite condition.
    from mjnp import any as aany
    from mjnp import isnan, logical_and, logical_not, where

    singular = logical_and(isnan(result), logical_not(aany(isnan(a), axis=(-2, -1))))
    return where(singular, np.inf, result)


def _norm_axes(fname: str, axis: Any, ndim: int) -> tuple[int, ...]:
    """`axis` as NumPy's `linalg.norm` reads it: a tuple, whose entries go to a ufunc reduction
    (so a bool is a TypeError), or one integer (a bool counts as an int); a list is a TypeError.

    NB: NumPy calls `int(axis)` on a non-tuple, so it also takes a float; mjnp does not.
    """
    reject_list_axis(fname, axis)
    if not isinstance(axis, tuple):
        axis = operator.index(axis)
    return normalize_axes(fname, axis, ndim, allow_bool=False)


@fuse_eagerly
def vector_norm(
    x: ArrayLike,
    /,
    *,
    axis: Any = None,
    keepdims: bool = False,
    ord: Any = 2,  # noqa: A002
) -> Array:
    """Vector norm over `axis` (all axes by default), as `numpy.linalg.vector_norm`."""
    from mjnp import abs as aabs
    from mjnp import count_nonzero, power, sqrt
    from mjnp import max as amax
    from mjnp import min as amin
    from mjnp import sum as asum

    a = asarray_strong("linalg.vector_norm", x)
    if a.dtype.kind in "biu":
        a = lax.convert_element_type(a, np.float64)
    if axis is None:
        shape = a.shape
        a = lax.reshape(a, (a.size,))
        axes: tuple[int, ...] = (0,)
    else:
        axes = _norm_axes("mjnp.linalg.vector_norm", axis, a.ndim)
        shape = None
    mag = aabs(a)
    if ord == 2:
        out = sqrt(asum(lax.mul(mag, mag), axis=axes, keepdims=keepdims))
    elif ord == np.inf:
        # initial=0, as NumPy: the inf-norm of an empty vector is 0 (magnitudes are >= 0).
        out = amax(mag, axis=axes, keepdims=keepdims, initial=0)
    elif ord == -np.inf:
        out = amin(mag, axis=axes, keepdims=keepdims)
    elif ord == 0:
        out = lax.convert_element_type(count_nonzero(mag, axis=axes, keepdims=keepdims), mag.dtype)
    elif ord == 1:
        out = asum(mag, axis=axes, keepdims=keepdims)
    else:
        p = float(ord)
        out = power(asum(power(mag, p), axis=axes, keepdims=keepdims), 1.0 / p)
    if axis is None and keepdims:
        out = lax.reshape(out, (1,) * len(shape))
    return out


def matrix_norm(x: ArrayLike, /, *, keepdims: bool = False, ord: Any = "fro") -> Array:  # noqa: A002
    """Matrix norm over the last two axes, as `numpy.linalg.matrix_norm`."""
    a = asarray_strong("linalg.matrix_norm", x)
    _check_stacked("matrix_norm", a, square=False)
    return norm(a, ord, axis=(-2, -1), keepdims=keepdims)


_numpy_norm = bare(np.linalg.norm)


def norm(x: ArrayLike, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Array:  # noqa: A002
    """Vector or matrix norm, as `numpy.linalg.norm`."""
    if (ord is None or type(ord) in (int, float, str)) and _plain_axis(axis):
        vals = lapack_values(x)
        if vals is not None and vals[0].dtype.kind in "biufc":
            try:
                out = _numpy_norm(vals[0], ord, axis, bool(keepdims))
            except Exception:  # noqa: BLE001  (any NumPy error: the general path decides)
                pass
            else:
                return wrap(out)
    from mjnp import abs as aabs
    from mjnp import amax, amin
    from mjnp import sum as asum

    a = asarray_strong("linalg.norm", x)
    if a.dtype.kind in "biu":
        a = lax.convert_element_type(a, np.float64)
    if axis is None:
        if ord is None:
            out = vector_norm(a, ord=2)
            return lax.reshape(out, (1,) * a.ndim) if keepdims else out
        if a.ndim == 1:
            return vector_norm(a, axis=0, ord=ord, keepdims=keepdims)
        if a.ndim != 2:
            raise ValueError("mjnp.linalg.norm: improper number of dimensions to norm")
        axis = (0, 1)
    axes = _norm_axes("mjnp.linalg.norm", axis, a.ndim)
    if len(axes) == 1:
        if isinstance(ord, str):
            raise ValueError(f"mjnp.linalg.norm: invalid norm order {ord!r} for vectors")
        return vector_norm(a, axis=axes, ord=2 if ord is None else ord, keepdims=keepdims)
    if len(axes) != 2:
        raise ValueError("mjnp.linalg.norm: improper number of dimensions to norm")
    row, col = axes
    if ord in (None, "fro", "f"):
        out = vector_norm(a, axis=axes, ord=2, keepdims=keepdims)
        return out
    if ord in (2, -2, "nuc"):
        moved = moveaxis(a, (row, col), (-2, -1))
        s = svdvals(_inexact("norm", moved))
        if ord == "nuc":
            out = asum(s, axis=-1)
        else:
            out = (amax if ord == 2 else amin)(s, axis=-1)
    elif ord in (1, -1):
        sums = asum(aabs(a), axis=row)
        ax = col - (col > row)
        out = amax(sums, axis=ax, initial=0) if ord == 1 else amin(sums, axis=ax)
    elif ord in (np.inf, -np.inf):
        sums = asum(aabs(a), axis=col)
        ax = row - (row > col)
        out = amax(sums, axis=ax, initial=0) if ord == np.inf else amin(sums, axis=ax)
    else:
        raise ValueError(f"mjnp.linalg.norm: invalid norm order {ord!r} for matrices")
    if keepdims:
        shape = list(a.shape)
        shape[row] = shape[col] = 1
        out = lax.reshape(out, tuple(shape))
    return out


# --- products and tensor helpers ------------------------------------------------------------


def multi_dot(arrays: Sequence[ArrayLike], *, out: Any = None) -> Array:
    """Chained matrix product, as `numpy.linalg.multi_dot` (first and last may be 1-D; `out=`
    as for `dot`)."""
    arrays = [asarray_strong("linalg.multi_dot", a) for a in arrays]
    if len(arrays) < 2:
        raise ValueError("mjnp.linalg.multi_dot: expecting at least two arrays")
    for i, x in enumerate(arrays):
        want = (1, 2) if i in (0, len(arrays) - 1) else (2,)
        if x.ndim not in want:
            raise ValueError(
                f"mjnp.linalg.multi_dot: array {i} has {x.ndim} dimensions; the first and last "
                "may be 1-D or 2-D, the others must be 2-D"
            )
    result = arrays[0]
    for x in arrays[1:]:
        result = _products.dot(result, x)
    return write_exact_out("linalg.multi_dot", out, result)


def tensorinv(a: ArrayLike, ind: int = 2) -> Array:
    """Inverse of an N-d array for `tensordot`, as `numpy.linalg.tensorinv`."""
    x = asarray_strong("linalg.tensorinv", a)
    if ind <= 0:
        raise ValueError(f"mjnp.linalg.tensorinv: invalid ind argument {ind}")
    old = x.shape
    prod = int(np.prod(old[:ind]))
    inv_shape = (*old[ind:], *old[:ind])
    rest = int(np.prod(old[ind:]))
    if prod != rest:
        raise LinAlgError(
            f"mjnp.linalg.tensorinv: a.shape[:ind] and a.shape[ind:] must have equal products, "
            f"got shape {old} with ind={ind}"
        )
    return lax.reshape(inv(lax.reshape(x, (prod, rest))), inv_shape)


def tensorsolve(a: ArrayLike, b: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """Solve `tensordot(a, x, axes=b.ndim) = b` for x, as `numpy.linalg.tensorsolve`."""
    x = asarray_strong("linalg.tensorsolve", a)
    rhs = asarray_strong("linalg.tensorsolve", b)
    if axes is not None:
        axes = normalize_axes("mjnp.linalg.tensorsolve", list(axes), x.ndim, "axes")
        rest = [k for k in range(x.ndim) if k not in axes]
        x = lax.transpose(x, (*rest, *axes))
    sol_shape = x.shape[-(x.ndim - rhs.ndim) :] if x.ndim > rhs.ndim else ()
    prod = int(np.prod(sol_shape))
    if int(np.prod(x.shape[: x.ndim - len(sol_shape)])) != prod:
        raise LinAlgError(
            f"mjnp.linalg.tensorsolve: input arrays must satisfy prod(a.shape[b.ndim:]) == "
            f"prod(a.shape[:b.ndim]), got {x.shape} and {rhs.shape}"
        )
    sol = solve(lax.reshape(x, (prod, prod)), lax.reshape(rhs, (prod,)))
    return lax.reshape(sol, sol_shape)


def cross(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Array:
    """Cross product of 3-element vectors, as `numpy.linalg.cross`."""
    a, b = asarray_strong("linalg.cross", x1), asarray_strong("linalg.cross", x2)
    if a.shape[axis] != 3 or b.shape[axis] != 3:
        raise ValueError(
            f"mjnp.linalg.cross: both input arrays must be (arrays of) 3-dimensional vectors, "
            f"got shapes {a.shape} and {b.shape} along axis {axis}"
        )
    return main_cross(a, b, axis=axis)


def outer(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """Outer product of two vectors, as `numpy.linalg.outer` (1-D inputs only)."""
    a, b = asarray_strong("linalg.outer", x1), asarray_strong("linalg.outer", x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(
            f"mjnp.linalg.outer: input arrays must be one-dimensional, got {a.ndim}-d and "
            f"{b.ndim}-d"
        )
    return _products.outer(a, b)


def diagonal(x: ArrayLike, /, *, offset: int = 0) -> Array:
    """Diagonals of the last two axes, as `numpy.linalg.diagonal`."""
    from mjnp import diagonal as main_diagonal

    return main_diagonal(x, offset, -2, -1)


def trace(x: ArrayLike, /, *, offset: int = 0, dtype: Any = None) -> Array:
    """Traces over the last two axes, as `numpy.linalg.trace`."""
    from mjnp import trace as main_trace

    return main_trace(x, offset, -2, -1, dtype)


def matrix_transpose(x: ArrayLike, /) -> Array:
    """Swap the last two axes, as `numpy.linalg.matrix_transpose`."""
    a = asarray_strong("linalg.matrix_transpose", x)
    if a.ndim < 2:
        raise ValueError(
            f"mjnp.linalg.matrix_transpose: input array must be at least 2-dimensional, got "
            f"{a.ndim}-d"
        )
    return _swap(a)


def tensordot(x1: ArrayLike, x2: ArrayLike, /, *, axes: Any = 2) -> Array:
    """`numpy.linalg.tensordot` (the main namespace's with keyword-only `axes`)."""
    return _products.tensordot(x1, x2, axes=axes)


def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Array:
    """`numpy.linalg.vecdot`: conjugated dot product over `axis`, broadcasting the rest."""
    return _products.vecdot(x1, x2, axis=axis)


def matmul(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """`numpy.linalg.matmul`."""
    return _products.matmul(x1, x2)
