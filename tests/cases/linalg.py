"""Rows for mjcore/lax/linalg.py. Decompositions whose factors have a sign (or phase) freedom
are normalised the same way in mjcore and in the NumPy oracle, so values compare exactly and
the derivatives are those of a well-defined function."""

from __future__ import annotations

import numpy as np

from mjcore import lax
from tests.primitive_case import PrimCase

FLOATS = ("float32", "float64")


def _mm(a, b):
    nd = a.ndim
    batch = tuple(range(nd - 2))
    return lax.dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _t(x):
    nd = x.ndim
    return lax.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def _eye(shape, dtype):
    rows = lax.broadcasted_iota(np.int32, shape, len(shape) - 2)
    cols = lax.broadcasted_iota(np.int32, shape, len(shape) - 1)
    return lax.convert_element_type(lax.eq(rows, cols), dtype)


def _spd(x):
    """x x^T + n I: symmetric positive definite, well conditioned."""
    n = x.shape[-1]
    return lax.add(_mm(x, _t(x)), lax.mul(_eye(x.shape, x.dtype), lax.full(x.shape, n, x.dtype)))


def _np_spd(x):
    n = x.shape[-1]
    return x @ np.swapaxes(x, -1, -2) + n * np.eye(n, dtype=x.dtype)


def _first_row_signs(v):
    """Multiply each column by the sign of its first entry (lax)."""
    nd = v.ndim
    first = lax.slice_in_dim(v, 0, 1, nd - 2)
    return lax.mul(v, lax.broadcast_in_dim(lax.sign(first), v.shape, tuple(range(nd))))


def _np_first_row_signs(v):
    return v * np.sign(v[..., :1, :])


def _diag_signs_q(q, r):
    """q with column j times sign(r[j, j]) (so r has a positive diagonal)."""
    k = r.shape[-2]
    d = lax.reduce_sum(
        lax.mul(lax.slice_in_dim(r, 0, k, r.ndim - 1), _eye((*r.shape[:-2], k, k), r.dtype)),
        (r.ndim - 1,),
    )
    s = lax.sign(d)
    return lax.mul(q, lax.broadcast_in_dim(s, q.shape, (*range(q.ndim - 2), q.ndim - 1)))


def _np_diag_signs_q(q, r):
    k = r.shape[-2]
    d = np.diagonal(r[..., :k, :k], axis1=-2, axis2=-1)
    return q * np.sign(d)[..., None, :]


def _np_geqrf(a):
    """LAPACK geqrf's (a, taus) through NumPy's qr(mode='raw'), one matrix at a time in a's
    dtype (NumPy returns the factor transposed)."""
    *batch, m, n = a.shape
    out, taus = np.empty_like(a), np.empty((*batch, min(m, n)), a.dtype)
    for i in np.ndindex(*batch):
        h, tau = np.linalg.qr(a[i], mode="raw")
        out[i], taus[i] = h.T, tau
    return out, taus


def _np_lu(a):
    """LAPACK getrf semantics in NumPy: (lu, pivots, permutation), partial pivoting."""
    a = np.array(a, dtype=np.float64 if a.dtype == np.float64 else a.dtype)
    *batch, m, n = a.shape
    lus, pivs, perms = [], [], []
    for mat in a.reshape(-1, m, n):
        mat = mat.copy()
        perm = np.arange(m, dtype=np.int32)
        piv = []
        for j in range(min(m, n)):
            p = j + int(np.argmax(np.abs(mat[j:, j])))
            piv.append(p)
            mat[[j, p]] = mat[[p, j]]
            perm[[j, p]] = perm[[p, j]]
            if mat[j, j] != 0:
                mat[j + 1 :, j] /= mat[j, j]
                mat[j + 1 :, j + 1 :] -= np.outer(mat[j + 1 :, j], mat[j, j + 1 :])
        lus.append(mat)
        pivs.append(np.array(piv, np.int32))
        perms.append(perm)
    k = min(m, n)
    return (
        np.stack(lus).reshape(*batch, m, n) if lus else a,
        np.stack(pivs).reshape(*batch, k) if pivs else np.zeros((*batch, k), np.int32),
        np.stack(perms).reshape(*batch, m) if perms else np.zeros((*batch, m), np.int32),
    )


def _well_conditioned_triangular(rng, shape, dtype):
    """Entries in [-1, 1]; square matrices get a diagonal of magnitude 2 to 3."""
    x = rng.uniform(-1, 1, size=shape)
    n = shape[-1]
    if shape[-2] != n:
        return x
    diag = rng.uniform(2, 3, size=(*shape[:-2], n)) * rng.choice([-1, 1], size=(*shape[:-2], n))
    return x + np.eye(n) * (diag[..., None, :] - x * np.eye(n))


def _tri(lower):
    return lambda x: np.tril(x) if lower else np.triu(x)


def _np_solve_tri(a, b, left_side, lower, transpose_a, unit_diagonal):
    a = _tri(lower)(a)
    if unit_diagonal:
        n = a.shape[-1]
        a = a * (1 - np.eye(n)) + np.eye(n)
    op = np.swapaxes(a, -1, -2) if transpose_a else a
    if left_side:
        return np.linalg.solve(op, b).astype(b.dtype)
    return np.swapaxes(
        np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2)), -1, -2
    ).astype(b.dtype)


def _trsm_row(name, a_shape, b_shape, dtypes=FLOATS, **params):
    return PrimCase(
        f"triangular_solve-{name}",
        lambda a, b: lax.triangular_solve(a, b, **params),
        lambda a, b: _np_solve_tri(
            a,
            b,
            params.get("left_side", False),
            params.get("lower", False),
            params.get("transpose_a", False),
            params.get("unit_diagonal", False),
        ),
        (a_shape, b_shape),
        dtypes,
        domain=_well_conditioned_triangular,
        rtol=1e-4,
        smooth=False,
    )


CASES = [
    PrimCase(
        "cholesky",
        lambda x: lax.cholesky(_spd(x)),
        lambda x: np.linalg.cholesky(_np_spd(x)),
        ((2, 3, 3),),
        FLOATS,
        rtol=1e-4,
        smooth=False,
    ),
    _trsm_row("left-lower", (2, 3, 3), (2, 3, 2), left_side=True, lower=True),
    _trsm_row(
        "right-upper-transposed",
        (3, 3),
        (2, 3),
        ("float64",),
        left_side=False,
        lower=False,
        transpose_a=True,
    ),
    _trsm_row(
        "left-unit-transposed",
        (4, 4),
        (4, 1),
        ("float64",),
        left_side=True,
        lower=True,
        transpose_a=True,
        unit_diagonal=True,
    ),
    PrimCase(
        "lu-square",
        lambda x: lax.lu(x)[0],
        lambda x: _np_lu(x)[0],
        ((2, 3, 3),),
        FLOATS,
        rtol=1e-4,
        smooth=False,
    ),
    PrimCase(
        "lu-wide",
        lambda x: lax.lu(x)[0],
        lambda x: _np_lu(x)[0],
        ((3, 4),),
        ("float64",),
        rtol=1e-4,
        smooth=False,
    ),
    PrimCase(
        "lu-tall-permutation",
        lambda x: lax.lu(x)[2],
        lambda x: _np_lu(x)[2],
        ((4, 3),),
        ("float64",),
        smooth=False,
    ),
    PrimCase(  # lu_pivots_to_permutation over a batch (its host rule loops over swaps)
        "lu-batched-permutation",
        lambda x: lax.lu(x)[2],
        lambda x: _np_lu(x)[2],
        ((3, 5, 4),),
        FLOATS,
        smooth=False,
    ),
    PrimCase(
        "qr-q",
        lambda x: (lambda q, r: _diag_signs_q(q, r))(*lax.qr(x, full_matrices=False)),
        lambda x: _np_diag_signs_q(*np.linalg.qr(x)),
        ((2, 4, 3),),
        FLOATS,
        rtol=1e-4,
        smooth=False,
    ),
    PrimCase(  # not differentiable, as JAX's geqrf
        "geqrf-a",
        lambda x: lax.geqrf(x)[0],
        lambda x: _np_geqrf(x)[0],
        ((2, 4, 3),),
        FLOATS,
        rtol=1e-4,
        diff_argnums=(),
        smooth=False,
    ),
    PrimCase(
        "geqrf-taus",
        lambda x: lax.geqrf(x)[1],
        lambda x: _np_geqrf(x)[1],
        ((3, 5),),
        FLOATS,
        rtol=1e-4,
        diff_argnums=(),
        smooth=False,
    ),
    PrimCase(
        "qr-r-square",
        lambda x: lax.qr(x, full_matrices=True)[1],
        lambda x: np.linalg.qr(x)[1],
        ((3, 3),),
        ("float64",),
        rtol=1e-4,
        smooth=False,
        domain=lambda rng, shape, dtype: rng.uniform(-2, 2, size=shape) + 3 * np.eye(3),
    ),
    PrimCase(
        "eigh-vectors",
        lambda x: _first_row_signs(lax.eigh(_spd(x))[0]),
        lambda x: _np_first_row_signs(np.linalg.eigh(_np_spd(x))[1]),
        ((2, 3, 3),),
        FLOATS,
        rtol=1e-3,
        smooth=False,
    ),
    PrimCase(
        "eigh-values",
        lambda x: lax.eigh(lax.symmetrize(x))[1],
        lambda x: np.linalg.eigvalsh((x + np.swapaxes(x, -1, -2)) / 2),
        ((3, 3),),
        ("float64",),
        rtol=1e-4,
        smooth=False,
    ),
    PrimCase(
        "svd-values",
        lambda x: lax.svd(x, compute_uv=False),
        lambda x: np.linalg.svd(x, compute_uv=False),
        ((2, 4, 3),),
        FLOATS,
        rtol=1e-4,
        smooth=False,
    ),
    PrimCase(
        "svd-u-tall",
        lambda x: _first_row_signs(lax.svd(x, full_matrices=False)[0]),
        lambda x: _np_first_row_signs(np.linalg.svd(x, full_matrices=False)[0]),
        ((4, 3),),
        ("float64",),
        rtol=1e-3,
        smooth=False,
    ),
    PrimCase(
        "svd-vh-wide",
        lambda x: _t(_first_row_signs(_t(lax.svd(x, full_matrices=False)[2]))),
        lambda x: np.swapaxes(
            _np_first_row_signs(np.swapaxes(np.linalg.svd(x, full_matrices=False)[2], -1, -2)),
            -1,
            -2,
        ),
        ((2, 3, 4),),
        ("float64",),
        rtol=1e-3,
        smooth=False,
    ),
    PrimCase(
        "eig-values-real",
        lambda x: lax.real(lax.eig(_spd(x), compute_eigenvectors=False)),
        lambda x: np.real(np.linalg.eigvals(_np_spd(x))),
        ((3, 3),),
        ("float64",),
        rtol=1e-6,
        smooth=False,
    ),
]
