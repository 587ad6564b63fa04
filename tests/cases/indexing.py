"""Rows for mjcore/lax/gather.py: gather and the scatter family, against loop-based NumPy
references of XLA's semantics (gather clamps starts; scatter drops windows that do not fit)."""

from __future__ import annotations

import numpy as np

from mjcore import lax as g
from tests.primitive_case import PrimCase

FLOATS = ("float32", "float64")


def np_gather(x, idx, dn, slice_sizes, mode="clip"):
    """XLA gather, one output element at a time."""
    dn = g.GatherDimensionNumbers(*dn)
    dropped = (*dn.collapsed_slice_dims, *dn.operand_batching_dims)
    offset_axes = [d for d in range(x.ndim) if d not in dropped]
    batch_shape = idx.shape[:-1]
    ndim = len(batch_shape) + len(offset_axes)
    sizes, batch = iter([slice_sizes[d] for d in offset_axes]), iter(batch_shape)
    shape = tuple(next(sizes) if d in dn.offset_dims else next(batch) for d in range(ndim))
    batch_out = [d for d in range(ndim) if d not in dn.offset_dims]
    out = np.zeros(shape, x.dtype)
    for o in np.ndindex(*shape):
        b = tuple(o[d] for d in batch_out)
        pos = [0] * x.ndim
        fits = True
        for k, d in enumerate(dn.start_index_map):
            i = int(idx[b][k])
            fits &= 0 <= i <= x.shape[d] - slice_sizes[d]
            pos[d] = int(np.clip(i, 0, x.shape[d] - slice_sizes[d]))
        for od, idim in zip(dn.operand_batching_dims, dn.start_indices_batching_dims, strict=True):
            pos[od] = b[idim]
        for k, d in enumerate(offset_axes):
            pos[d] += o[dn.offset_dims[k]]
        out[o] = x[tuple(pos)] if fits or mode == "clip" else 0
    return out


def np_scatter(x, idx, u, dn, combine):
    """XLA scatter applied in update order (so the last duplicate wins for a plain scatter)."""
    dn = g.ScatterDimensionNumbers(*dn)
    out = np.array(x, copy=True)
    dropped = (*dn.inserted_window_dims, *dn.operand_batching_dims)
    window_axes = [d for d in range(x.ndim) if d not in dropped]
    scatter_axes = [d for d in range(u.ndim) if d not in dn.update_window_dims]
    windows = [1] * x.ndim
    for k, d in enumerate(window_axes):
        windows[d] = u.shape[dn.update_window_dims[k]]
    for ui in np.ndindex(*u.shape):
        b = tuple(ui[d] for d in scatter_axes)
        pos = [0] * x.ndim
        fits = True
        for k, d in enumerate(dn.scatter_dims_to_operand_dims):
            pos[d] = int(idx[b][k])
            fits &= 0 <= pos[d] <= x.shape[d] - windows[d]
        for od, idim in zip(
            dn.operand_batching_dims, dn.scatter_indices_batching_dims, strict=True
        ):
            pos[od] = b[idim]
        for k, d in enumerate(window_axes):
            pos[d] += ui[dn.update_window_dims[k]]
        if fits:
            out[tuple(pos)] = combine(out[tuple(pos)], u[ui])
    return out


def _indices(high):
    """Floats in [-2, 2); integers in [-1, high], so some starts fall outside."""

    def domain(rng, shape, dtype):
        if np.dtype(dtype).kind in "iu":
            return rng.integers(-1, high + 1, size=shape)
        return rng.uniform(-2.0, 2.0, size=shape)

    return domain


def _unique_rows(n, k):
    """Distinct in-range starts along axis 0 for the (k, 1) indices, so the scatter result is
    deterministic; other arguments are uniform in [-2, 2)."""

    def domain(rng, shape, dtype):
        if tuple(shape) == (k, 1):
            return rng.permutation(n)[:k].reshape(shape)
        return rng.uniform(-2.0, 2.0, size=shape)

    return domain


ROWS = g.GatherDimensionNumbers((1,), (0,), (0,))
POINTS = g.GatherDimensionNumbers((), (0, 1), (0, 1))
WINDOWS = g.GatherDimensionNumbers((1, 2), (), (0, 1))
BATCHED = g.GatherDimensionNumbers((1,), (1,), (1,), (0,), (0,))
SROWS = g.ScatterDimensionNumbers((1,), (0,), (0,))
SPOINTS = g.ScatterDimensionNumbers((), (0, 1), (0, 1))
SWINDOWS = g.ScatterDimensionNumbers((1,), (0,), (0, 1))

_add = np.add
_mul = np.multiply


def _set(old, new):
    return new


CASES = [
    PrimCase(
        "gather-rows",
        lambda x, i: g.gather(x, i, ROWS, (1, 4)),
        lambda x, i: np_gather(x, i, ROWS, (1, 4)),
        ((3, 4), (5, 1)),
        FLOATS + ("int32", "bool"),
        domain=_indices(3),
        arg_dtypes=(None, "int32"),
        diff_argnums=(0,),
        linear=True,
    ),
    PrimCase(
        "gather-points",
        lambda x, i: g.gather(x, i, POINTS, (1, 1)),
        lambda x, i: np_gather(x, i, POINTS, (1, 1)),
        ((3, 4), (2, 3, 2)),
        FLOATS,
        domain=_indices(4),
        arg_dtypes=(None, "int64"),
        diff_argnums=(0,),
        linear=True,
    ),
    PrimCase(
        "gather-windows",
        lambda x, i: g.gather(x, i, WINDOWS, (2, 3)),
        lambda x, i: np_gather(x, i, WINDOWS, (2, 3)),
        ((4, 5), (3, 2)),
        FLOATS,
        domain=_indices(4),
        arg_dtypes=(None, "uint8"),
        diff_argnums=(0,),
        linear=True,
    ),
    PrimCase(
        "gather-batching-dims",
        lambda x, i: g.gather(x, i, BATCHED, (1, 1, 3)),
        lambda x, i: np_gather(x, i, BATCHED, (1, 1, 3)),
        ((2, 4, 3), (2, 1)),
        FLOATS,
        domain=_indices(3),
        arg_dtypes=(None, "int32"),
        diff_argnums=(0,),
        linear=True,
    ),
    PrimCase(
        "gather-fill",
        lambda x, i: g.gather(x, i, ROWS, (1, 4), mode="fill", fill_value=-1),
        lambda x, i: np.where(
            np.all((i >= 0) & (i <= 2), -1)[:, None], np_gather(x, i, ROWS, (1, 4)), -1
        ).astype(x.dtype),
        ((3, 4), (5, 1)),
        FLOATS + ("int32",),
        domain=_indices(3),
        arg_dtypes=(None, "int32"),
        diff_argnums=(0,),
    ),
    PrimCase(
        "scatter_add-rows",
        lambda x, i, u: g.scatter_add(x, i, u, SROWS),
        lambda x, i, u: np_scatter(x, i, u, SROWS, _add),
        ((3, 4), (5, 1), (5, 4)),
        FLOATS + ("int32",),
        domain=_indices(3),
        arg_dtypes=(None, "int32", None),
        diff_argnums=(0, 2),
        linear=True,
    ),
    PrimCase(
        "scatter_add-points",
        lambda x, i, u: g.scatter_add(x, i, u, SPOINTS),
        lambda x, i, u: np_scatter(x, i, u, SPOINTS, _add),
        ((3, 4), (2, 3, 2), (2, 3)),
        FLOATS,
        domain=_indices(4),
        arg_dtypes=(None, "int64", None),
        diff_argnums=(0, 2),
        linear=True,
    ),
    PrimCase(
        "scatter_add-windows-clip",
        lambda x, i, u: g.scatter_add(x, i, u, SWINDOWS, mode="clip"),
        lambda x, i, u: np_scatter(
            x, np.stack([np.clip(i[:, 0], 0, 3), np.clip(i[:, 1], 0, 3)], -1), u, SWINDOWS, _add
        ),
        ((4, 5), (3, 2), (3, 2)),
        FLOATS,
        domain=_indices(4),
        arg_dtypes=(None, "int32", None),
        diff_argnums=(0, 2),
        linear=True,
    ),
    PrimCase(
        "scatter_mul-rows",
        lambda x, i, u: g.scatter_mul(x, i, u, SROWS),
        lambda x, i, u: np_scatter(x, i, u, SROWS, _mul),
        ((3, 4), (5, 1), (5, 4)),
        FLOATS + ("int32",),
        domain=_indices(3),
        arg_dtypes=(None, "int32", None),
        diff_argnums=(0,),
    ),
    PrimCase(
        "scatter_min-rows",
        lambda x, i, u: g.scatter_min(x, i, u, SROWS),
        lambda x, i, u: np_scatter(x, i, u, SROWS, np.minimum),
        ((3, 4), (5, 1), (5, 4)),
        FLOATS + ("int32",),
        domain=_indices(3),
        arg_dtypes=(None, "int32", None),
        diff_argnums=(0, 2),
        smooth=False,
    ),
    PrimCase(
        "scatter_max-points",
        lambda x, i, u: g.scatter_max(x, i, u, SPOINTS),
        lambda x, i, u: np_scatter(x, i, u, SPOINTS, np.maximum),
        ((3, 4), (2, 3, 2), (2, 3)),
        FLOATS + ("bool",),
        domain=_indices(4),
        arg_dtypes=(None, "int32", None),
        diff_argnums=(0, 2),
        smooth=False,
    ),
    PrimCase(
        "scatter-rows",
        lambda x, i, u: g.scatter(x, i, u, SROWS),
        lambda x, i, u: np_scatter(x, i, u, SROWS, _set),
        ((5, 4), (3, 1), (3, 4)),
        FLOATS + ("int32", "bool"),
        domain=_unique_rows(5, 3),
        arg_dtypes=(None, "int32", None),
        diff_argnums=(0, 2),
    ),
]
