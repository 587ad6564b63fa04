"""`mjcore.scipy.linalg`: JAX's `jax.scipy.linalg`, over `mjcore.lax` linalg primitives.

Sits above mjnp (like `mjcore.nn`): it imports `mjnp` for the NumPy-level pieces it shares with
`mjnp.linalg` (`solve`, `inv`, `det`, `norm`). Decompositions follow SciPy's conventions as
JAX does: `cholesky` is upper by default, `lu` returns `(p, l, u)` with `a = p @ l @ u`, the
factorisations of `cho_factor`/`lu_factor` feed `cho_solve`/`lu_solve`. The `overwrite_*` and
`check_finite` arguments are accepted and ignored, as in JAX. Every function works under
`jit`, `vmap` and `grad`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import mjnp
from mjcore import dtypes, lax
from mjcore.api import vmap
from mjcore.control_flow import cond, custom_linear_solve, scan, switch

ArrayLike = Any
Array = Any


def _inexact(fname: str, *xs: ArrayLike) -> list[Array]:
    """The operands in their common inexact dtype (integers and bools become float64)."""
    arrays = [mjnp.asarray(x) for x in xs]
    dtype = np.result_type(*[x.dtype for x in arrays])
    if dtypes.kind(dtype) not in "fc":
        dtype = np.result_type(dtype, np.float64)
    return [lax.convert_element_type(x, dtype) for x in arrays]


def _square(fname: str, a: Array) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(
            f"mjcore.scipy.linalg.{fname}: expected a (batched) square matrix, got shape {a.shape}"
        )


def _swap(x: Array) -> Array:
    return mjnp.swapaxes(x, -1, -2)


def _trans_flags(fname: str, trans: Any) -> tuple[bool, bool]:
    """`trans` (0/'N', 1/'T', 2/'C') as (transpose_a, conjugate_a)."""
    if isinstance(trans, str | int | np.integer) and trans in (0, "N"):
        return False, False
    if isinstance(trans, str | int | np.integer) and trans in (1, "T"):
        return True, False
    if isinstance(trans, str | int | np.integer) and trans in (2, "C"):
        return True, True
    raise ValueError(
        f"mjcore.scipy.linalg.{fname}: invalid 'trans' value {trans!r}; use 0/'N', 1/'T' or 2/'C'"
    )


def _matrix_rhs(fname: str, a: Array, b: Array) -> tuple[Array, Array, bool]:
    """`a` and `b` broadcast to common batch axes, `b` as (..., n, k); whether `b` was 1-D."""
    vector = b.ndim == 1
    if vector:
        b = b[:, None]
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        raise ValueError(
            f"mjcore.scipy.linalg.{fname}: a of shape {a.shape} and b of shape "
            f"{b.shape if not vector else b.shape[:1]} do not match: b needs {a.shape[-1]} rows"
        )
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = mjnp.broadcast_to(a, (*batch, *a.shape[-2:]))
    b = mjnp.broadcast_to(b, (*batch, *b.shape[-2:]))
    return a, b, vector


# --- Cholesky --------------------------------------------------------------------------------


def cholesky(
    a: ArrayLike, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> Array:
    """Cholesky factor of a Hermitian positive-definite matrix, as `scipy.linalg.cholesky`:
    upper (`a = U^H U`) unless `lower`. A matrix that is not positive definite gives NaNs."""
    del overwrite_a, check_finite
    (a,) = _inexact("cholesky", a)
    _square("cholesky", a)
    # Only the `lower` (or upper) triangle is read, so the gradient lives there too, as in
    # SciPy's LAPACK call and JAX.
    factor = lax.cholesky(a if lower else mjnp.conj(_swap(a)), symmetrize_input=False)
    return factor if lower else mjnp.conj(_swap(factor))


def cho_factor(
    a: ArrayLike, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Array, bool]:
    """`(c, lower)` for `cho_solve`, as `scipy.linalg.cho_factor` (the other triangle of `c`
    holds zeros, as in JAX, where SciPy leaves whatever was there)."""
    return cholesky(a, lower, overwrite_a, check_finite), lower


def cho_solve(
    c_and_lower: tuple[ArrayLike, bool],
    b: ArrayLike,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> Array:
    """Solve `a x = b` given `cho_factor(a)`, as `scipy.linalg.cho_solve`."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    c, b = _inexact("cho_solve", c, b)
    _square("cho_solve", c)
    c, b, vector = _matrix_rhs("cho_solve", c, b)
    # lower: L L^H x = b; upper: U^H U x = b.
    y = lax.triangular_solve(
        c, b, left_side=True, lower=lower, transpose_a=not lower, conjugate_a=not lower
    )
    x = lax.triangular_solve(
        c, y, left_side=True, lower=lower, transpose_a=lower, conjugate_a=lower
    )
    return x[..., 0] if vector else x


# --- triangular solves -----------------------------------------------------------------------


def solve_triangular(
    a: ArrayLike,
    b: ArrayLike,
    trans: Any = 0,
    lower: bool = False,
    unit_diagonal: bool = False,
    overwrite_b: bool = False,
    debug: Any = None,
    check_finite: bool = True,
) -> Array:
    """Solve `op(a) x = b` for triangular `a`, as `scipy.linalg.solve_triangular` (`trans`:
    0/'N' for `a`, 1/'T' for its transpose, 2/'C' for its conjugate transpose)."""
    del overwrite_b, debug, check_finite
    transpose_a, conjugate_a = _trans_flags("solve_triangular", trans)
    a, b = _inexact("solve_triangular", a, b)
    _square("solve_triangular", a)
    a, b, vector = _matrix_rhs("solve_triangular", a, b)
    x = lax.triangular_solve(
        a,
        b,
        left_side=True,
        lower=lower,
        transpose_a=transpose_a,
        conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal,
    )
    return x[..., 0] if vector else x


# --- LU --------------------------------------------------------------------------------------


def lu_factor(
    a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Array, Array]:
    """`(lu, piv)` as `scipy.linalg.lu_factor`: `L` (unit diagonal) below and `U` on and above
    the diagonal of `lu`; `piv[i]` is the row swapped with row `i` (int32, as JAX's)."""
    del overwrite_a, check_finite
    (a,) = _inexact("lu_factor", a)
    if a.ndim < 2:
        raise ValueError(f"mjcore.scipy.linalg.lu_factor: expected a matrix, got shape {a.shape}")
    lu_, pivots, _ = lax.lu(a)
    return lu_, pivots


def lu_solve(
    lu_and_piv: tuple[ArrayLike, ArrayLike],
    b: ArrayLike,
    trans: int = 0,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> Array:
    """Solve `op(a) x = b` given `lu_factor(a)`, as `scipy.linalg.lu_solve` (`trans` 0, 1 or
    2 for `a`, its transpose or its conjugate transpose)."""
    del overwrite_b, check_finite
    if trans not in (0, 1, 2):
        raise ValueError(f"mjcore.scipy.linalg.lu_solve: 'trans' must be 0, 1 or 2, got {trans!r}")
    lu_, piv = lu_and_piv
    lu_, b = _inexact("lu_solve", lu_, b)
    _square("lu_solve", lu_)
    n = lu_.shape[-1]
    perm = lax.lu_pivots_to_permutation(mjnp.asarray(piv), n)
    lu_, b, vector = _matrix_rhs("lu_solve", lu_, b)
    perm = mjnp.broadcast_to(perm, (*lu_.shape[:-2], n))
    if trans == 0:  # P a = L U: a x = b <=> L U x = P b
        x = mjnp.take_along_axis(b, perm[..., None], axis=-2)
        x = lax.triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
        x = lax.triangular_solve(lu_, x, left_side=True, lower=False)
    else:  # a^T x = b <=> U^T L^T P x = b
        conj = trans == 2
        x = lax.triangular_solve(
            lu_, b, left_side=True, lower=False, transpose_a=True, conjugate_a=conj
        )
        x = lax.triangular_solve(
            lu_,
            x,
            left_side=True,
            lower=True,
            unit_diagonal=True,
            transpose_a=True,
            conjugate_a=conj,
        )
        x = mjnp.take_along_axis(x, mjnp.argsort(perm, axis=-1)[..., None], axis=-2)
    return x[..., 0] if vector else x


def lu(
    a: ArrayLike, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Array, ...]:
    """`(p, l, u)` with `a = p @ l @ u`, or `(p @ l, u)` with `permute_l`, as
    `scipy.linalg.lu` (`l` is unit lower trapezoidal, `u` upper trapezoidal)."""
    del overwrite_a, check_finite
    (a,) = _inexact("lu", a)
    if a.ndim < 2:
        raise ValueError(f"mjcore.scipy.linalg.lu: expected a matrix, got shape {a.shape}")
    m, n = a.shape[-2:]
    k = min(m, n)
    lu_, _, perm = lax.lu(a)
    l_ = mjnp.tril(lu_[..., :, :k], -1) + mjnp.eye(m, k, dtype=a.dtype)
    u = mjnp.triu(lu_[..., :k, :])
    # a[perm] = l @ u, so a = p @ l @ u with p[perm[i], i] = 1.
    p = mjnp.swapaxes(mjnp.asarray(perm[..., :, None] == mjnp.arange(m), a.dtype), -1, -2)
    if permute_l:
        return mjnp.matmul(p, l_), u
    return p, l_, u


# --- QR, eigh, SVD, Schur-free helpers ---------------------------------------------------------


def qr(
    a: ArrayLike,
    overwrite_a: bool = False,
    lwork: Any = None,
    mode: str = "full",
    pivoting: bool = False,
    check_finite: bool = True,
) -> tuple[Array, ...]:
    """QR decomposition, as `scipy.linalg.qr`: `mode` 'full' (`(q, r)`, q square),
    'economic' (reduced `(q, r)`) or 'r' (`(r,)`, a 1-tuple as SciPy returns)."""
    del overwrite_a, lwork, check_finite
    if pivoting:
        raise NotImplementedError("mjcore.scipy.linalg.qr: pivoting=True is not supported")
    if mode not in ("full", "economic", "r"):
        raise ValueError(
            f"mjcore.scipy.linalg.qr: unsupported mode {mode!r}; use 'full', 'economic' or 'r'"
        )
    (a,) = _inexact("qr", a)
    q, r = lax.qr(a, full_matrices=mode == "full")
    return (r,) if mode == "r" else (q, r)


def eigh(
    a: ArrayLike,
    b: ArrayLike | None = None,
    lower: bool = True,
    eigvals_only: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    type: int = 1,  # noqa: A002  (SciPy's name)
    check_finite: bool = True,
    subset_by_index: Any = None,
    subset_by_value: Any = None,
    driver: Any = None,
) -> Any:
    """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix, as `scipy.linalg.eigh`
    with JAX's restrictions: no generalized problem (`b`), no `subset_by_value`."""
    del overwrite_a, overwrite_b, check_finite, driver
    if type != 1:
        raise NotImplementedError("mjcore.scipy.linalg.eigh: only type=1 is supported")
    if b is not None:
        raise NotImplementedError("mjcore.scipy.linalg.eigh: only b=None is supported")
    if subset_by_value is not None:
        raise NotImplementedError("mjcore.scipy.linalg.eigh: subset_by_value is not supported")
    (a,) = _inexact("eigh", a)
    _square("eigh", a)
    v, w = lax.eigh(a, lower=lower)
    if subset_by_index is not None:
        lo, hi = subset_by_index
        w, v = w[..., lo : hi + 1], v[..., lo : hi + 1]
    return w if eigvals_only else (w, v)


def svd(
    a: ArrayLike,
    full_matrices: bool = True,
    compute_uv: bool = True,
    overwrite_a: bool = False,
    check_finite: bool = True,
    lapack_driver: str = "gesdd",
) -> Any:
    """Singular value decomposition `(u, s, vh)` (or `s` alone), as `scipy.linalg.svd`."""
    del overwrite_a, check_finite, lapack_driver
    (a,) = _inexact("svd", a)
    return mjnp.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def polar(
    a: ArrayLike,
    side: str = "right",
    *,
    method: str = "svd",
    eps: Any = None,
    max_iterations: Any = None,
) -> tuple[Array, Array]:
    """Polar decomposition `(u, p)`: `a = u p` (`side='right'`) or `a = p u` ('left'), with
    `u` unitary and `p` Hermitian positive semi-definite, computed from the SVD.

    NB: JAX's default method is QDWH iteration; this always uses the SVD (`method='qdwh'` is
    accepted and gives the same factors up to rounding)."""
    del eps, max_iterations
    if side not in ("right", "left"):
        raise ValueError(f"mjcore.scipy.linalg.polar: side must be 'right' or 'left', got {side!r}")
    if method not in ("svd", "qdwh"):
        raise ValueError(f"mjcore.scipy.linalg.polar: unknown method {method!r}")
    (a,) = _inexact("polar", a)
    u_svd, s, vh = mjnp.linalg.svd(a, full_matrices=False)
    unitary = mjnp.matmul(u_svd, vh)
    if side == "right":
        p = mjnp.matmul(mjnp.conj(_swap(vh)) * s[..., None, :], vh)
    else:
        p = mjnp.matmul(u_svd * s[..., None, :], mjnp.conj(_swap(u_svd)))
    return unitary, p


# --- thin wrappers over mjnp.linalg ----------------------------------------------------------


def inv(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """Matrix inverse, as `scipy.linalg.inv` (`mjnp.linalg.inv`)."""
    del overwrite_a, check_finite
    (a,) = _inexact("inv", a)
    _square("inv", a)
    return mjnp.linalg.inv(a)


def det(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """Determinant, as `scipy.linalg.det` (`mjnp.linalg.det`)."""
    del overwrite_a, check_finite
    (a,) = _inexact("det", a)
    _square("det", a)
    return mjnp.linalg.det(a)


_ASSUME_A = ("gen", "general", "sym", "symmetric", "her", "hermitian", "pos", "positive definite")


def solve(
    a: ArrayLike,
    b: ArrayLike,
    lower: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    debug: bool = False,
    check_finite: bool = True,
    assume_a: str = "gen",
) -> Array:
    """Solve `a x = b`, as `scipy.linalg.solve`: `assume_a='pos'` uses a Cholesky
    factorisation of the `lower` (or upper) triangle; the other structures use LU, as JAX."""
    del overwrite_a, overwrite_b, debug, check_finite
    if assume_a not in _ASSUME_A:
        raise ValueError(
            f"mjcore.scipy.linalg.solve: unknown assume_a {assume_a!r}; use one of {_ASSUME_A}"
        )
    a, b = _inexact("solve", a, b)
    _square("solve", a)
    if assume_a not in ("pos", "positive definite"):
        return mjnp.linalg.solve(a, b)
    # As JAX: the factorisation (of the `lower` or upper triangle) is a constant, and the
    # solve is a custom linear solve with the full `a` as its operator, so the gradient is
    # that of `a^-1 b` and the factor is reused by the backward pass.
    factors = cho_factor(lax.stop_gradient(a), lower=lower)

    def matvec(x: Array) -> Array:
        return mjnp.matmul(a, x[..., None])[..., 0]

    def custom_solve(rhs: Array) -> Array:
        return custom_linear_solve(
            matvec, rhs, solve=lambda _, x: cho_solve(factors, x), symmetric=True
        )

    if a.ndim == b.ndim + 1:
        return custom_solve(b)
    return vmap(custom_solve, b.ndim - 1, max(a.ndim, b.ndim) - 1)(b)


def block_diag(*arrs: ArrayLike) -> Array:
    """Block-diagonal matrix of the given arrays, as `scipy.linalg.block_diag` (scalars and
    1-D arrays are 1-row blocks)."""
    if not arrs:
        return mjnp.zeros((1, 0))
    blocks = [mjnp.atleast_2d(mjnp.asarray(x)) for x in arrs]
    for i, x in enumerate(blocks):
        if x.ndim > 2:
            raise ValueError(
                f"mjcore.scipy.linalg.block_diag: argument {i} has {x.ndim} dimensions; blocks "
                "must have at most 2"
            )
    dtype = np.result_type(*[x.dtype for x in blocks])
    n_cols = sum(x.shape[1] for x in blocks)
    rows, start = [], 0
    for x in blocks:
        rows.append(
            mjnp.pad(mjnp.asarray(x, dtype), ((0, 0), (start, n_cols - start - x.shape[1])))
        )
        start += x.shape[1]
    return mjnp.concatenate(rows, axis=0)


def toeplitz(c: ArrayLike, r: ArrayLike | None = None) -> Array:
    """Toeplitz matrix with first column `c` and first row `r` (default `conj(c)`; `r[0]` is
    ignored), as `scipy.linalg.toeplitz` for 1-D inputs; batched inputs give batched
    matrices, as JAX's."""
    c = mjnp.asarray(c)
    if r is None:
        r = mjnp.conj(c)
    r = mjnp.asarray(r)
    c, r = mjnp.atleast_1d(c), mjnp.atleast_1d(r)
    dtype = np.result_type(c.dtype, r.dtype)
    c, r = mjnp.asarray(c, dtype), mjnp.asarray(r, dtype)
    # Entry (i, j) is c[i - j] below the diagonal and r[j - i] above it: index into
    # [r[:0:-1], c] (length n + m - 1) at i - j + (m - 1).
    vals = mjnp.concatenate([mjnp.flip(r[..., 1:], -1), c], axis=-1)
    n, m = c.shape[-1], r.shape[-1]
    idx = mjnp.arange(n)[:, None] - mjnp.arange(m)[None, :] + (m - 1)
    return vals[..., idx]


def hilbert(n: int) -> Array:
    """The `n` by `n` Hilbert matrix `1 / (i + j + 1)`, as `scipy.linalg.hilbert`."""
    i = mjnp.arange(n, dtype=np.float64)
    return 1.0 / (i[:, None] + i[None, :] + 1.0)


# --- expm ------------------------------------------------------------------------------------

# Padé coefficients (Higham 2005), in the order JAX and SciPy use.
_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (
        17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0,
        110880.0, 3960.0, 90.0, 1.0,
    ),
    13: (
        64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
        129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
        40840800.0, 960960.0, 16380.0, 182.0, 1.0,
    ),
}  # fmt: skip


def _pade(order: int, a: Array) -> tuple[Array, Array]:
    """`(U, V)` of the degree-`order` Padé approximant, `exp(a) ~ (V - U)^-1 (V + U)`."""
    b = _PADE[order]
    ident = mjnp.eye(a.shape[-1], dtype=a.dtype)
    powers = [ident, mjnp.matmul(a, a)]  # even powers: I, A^2, A^4, ...
    if order == 13:
        a4 = mjnp.matmul(powers[1], powers[1])
        a6 = mjnp.matmul(a4, powers[1])
        a2 = powers[1]
        u_inner = mjnp.matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
        u = mjnp.matmul(a, u_inner + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
        v_inner = mjnp.matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2)
        v = v_inner + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * ident
        return u, v
    for _ in range(2, order // 2 + 1):
        powers.append(mjnp.matmul(powers[-1], powers[1]))
    u_sum = sum(b[2 * k + 1] * powers[k] for k in range(len(powers)))
    v = sum(b[2 * k] * powers[k] for k in range(len(powers)))
    return mjnp.matmul(a, u_sum), v


def _expm2(a: Array, upper_triangular: bool, max_squarings: int) -> Array:
    norm = mjnp.linalg.norm(a, 1)
    conds: tuple[float, ...]
    orders: tuple[int, ...]
    if a.dtype in (np.float64, np.complex128):
        maxnorm, conds, orders = 5.371920351148152, (
            1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001,
            2.097847961257068e000,
        ), (3, 5, 7, 9, 13)  # fmt: skip
    else:
        maxnorm, conds = 3.925724783138660, (4.258730016922831e-001, 1.880152677804762e000)
        orders = (3, 5, 7)
    n_squarings = mjnp.maximum(0.0, mjnp.floor(mjnp.log2(norm / maxnorm)))
    scaled = a / mjnp.asarray(2.0**n_squarings, a.dtype)
    idx = mjnp.digitize(norm, mjnp.asarray(conds, norm.dtype))
    u, v = switch(idx, [lambda x, o=o: _pade(o, x) for o in orders], scaled)
    p, q = u + v, -u + v
    if upper_triangular:
        r = solve_triangular(q, p)
    else:
        r = mjnp.linalg.solve(q, p)

    def square(c: Array, i: Array) -> tuple[Array, None]:
        return cond(i < n_squarings, lambda x: mjnp.matmul(x, x), lambda x: x, c), None

    r, _ = scan(square, r, mjnp.arange(max_squarings, dtype=n_squarings.dtype))
    return cond(n_squarings > max_squarings, lambda x: mjnp.full_like(x, np.nan), lambda x: x, r)


def expm(a: ArrayLike, *, upper_triangular: bool = False, max_squarings: int = 16) -> Array:
    """Matrix exponential by Padé approximation with scaling and squaring (Higham 2005), as
    JAX's `jax.scipy.linalg.expm`: the same approximant orders and thresholds, and NaNs when
    more than `max_squarings` squarings would be needed. Batched over leading axes."""
    (a,) = _inexact("expm", a)
    _square("expm", a)
    if a.ndim > 2:
        batch = a.shape[:-2]
        flat = mjnp.reshape(a, (-1, *a.shape[-2:]))
        out = vmap(lambda x: _expm2(x, upper_triangular, max_squarings))(flat)
        return mjnp.reshape(out, (*batch, *a.shape[-2:]))
    return _expm2(a, upper_triangular, max_squarings)


__all__ = [
    "block_diag",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "det",
    "eigh",
    "expm",
    "hilbert",
    "inv",
    "lu",
    "lu_factor",
    "lu_solve",
    "polar",
    "qr",
    "solve",
    "solve_triangular",
    "svd",
    "toeplitz",
]
