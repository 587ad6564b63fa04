"""Rows for mjcore/lax/structural.py and slicing.py."""

from __future__ import annotations

import numpy as np

from mjcore import lax
from tests.primitive_case import PrimCase

FLOATS = ("float32", "float64")


def _xla_pad(x, padding_value, config):
    """XLA's pad: interior padding, then edge padding where negative amounts crop."""
    out = np.asarray(x)
    for axis, (lo, hi, interior) in enumerate(config):
        n = out.shape[axis]
        shape = list(out.shape)
        shape[axis] = n + max(n - 1, 0) * interior
        spread = np.full(shape, padding_value, out.dtype)
        index = [slice(None)] * out.ndim
        index[axis] = slice(None, None, interior + 1)
        spread[tuple(index)] = out
        width = [(0, 0)] * out.ndim
        width[axis] = (max(lo, 0), max(hi, 0))
        spread = np.pad(spread, width, constant_values=padding_value)
        index[axis] = slice(max(-lo, 0), spread.shape[axis] - max(-hi, 0))
        out = spread[tuple(index)]
    return out


def _clamp_starts(shape, starts, sizes):
    return [int(np.clip(s, 0, n - k)) for s, n, k in zip(starts, shape, sizes, strict=True)]


def _np_dynamic_slice(x, starts, sizes):
    starts = _clamp_starts(x.shape, starts, sizes)
    return x[tuple(slice(s, s + k) for s, k in zip(starts, sizes, strict=True))]


def _np_dynamic_update_slice(x, update, starts):
    starts = _clamp_starts(x.shape, starts, update.shape)
    out = np.array(x, copy=True)
    out[tuple(slice(s, s + k) for s, k in zip(starts, update.shape, strict=True))] = update
    return out


def _values_and_starts(rng, shape, dtype):
    """Floats in [-2, 2); integers in [-2, 7), so starts also fall outside and get clamped."""
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        low = 0 if np.dtype(dtype).kind == "u" else -2
        return rng.integers(low, 7, size=shape)
    return rng.uniform(-2.0, 2.0, size=shape)


CASES = [
    PrimCase(
        "squeeze",
        lambda x: lax.squeeze(x, (1, 3)),
        lambda x: np.squeeze(x, (1, 3)),
        ((3, 1, 4, 1),),
        FLOATS + ("int32", "bool"),
        linear=True,
    ),
    PrimCase(
        "squeeze-negative",
        lambda x: lax.squeeze(x, (0, -1)),
        lambda x: np.squeeze(x, (0, -1)),
        ((1, 3, 1),),
        FLOATS,
        linear=True,
    ),
    PrimCase(
        "iota",
        lambda x: lax.add(x, lax.iota(x.dtype, 5)),
        lambda x: x + np.arange(5, dtype=x.dtype),
        ((5,),),
        FLOATS + ("int32", "uint8"),
        domain=(0, 5),
    ),
    PrimCase(
        "broadcasted_iota",
        lambda x: lax.mul(x, lax.broadcasted_iota(x.dtype, (3, 4), 1)),
        lambda x: x * np.broadcast_to(np.arange(4, dtype=x.dtype), (3, 4)),
        ((3, 4),),
        FLOATS + ("int64",),
        linear=True,
    ),
    PrimCase(
        "concatenate",
        lambda x, y, z: lax.concatenate([x, y, z], 1),
        lambda x, y, z: np.concatenate([x, y, z], 1),
        ((2, 3), (2, 1), (2, 4)),
        FLOATS + ("int32", "bool"),
        linear=True,
    ),
    PrimCase(
        "concatenate-negative",
        lambda x, y: lax.concatenate([x, y], -1),
        lambda x, y: np.concatenate([x, y], -1),
        ((3,), (2,)),
        FLOATS,
        linear=True,
    ),
    PrimCase(
        "pad",
        lambda x, v: lax.pad(x, v, ((1, 2, 0), (0, 1, 2))),
        lambda x, v: _xla_pad(x, v, ((1, 2, 0), (0, 1, 2))),
        ((3, 4), ()),
        FLOATS + ("int32", "bool"),
        linear=True,
    ),
    PrimCase(
        "pad-negative",
        lambda x, v: lax.pad(x, v, ((-1, 1, 1), (2, -3, 0))),
        lambda x, v: _xla_pad(x, v, ((-1, 1, 1), (2, -3, 0))),
        ((4, 5), ()),
        FLOATS,
        linear=True,
    ),
    PrimCase(
        "rev",
        lambda x: lax.rev(x, (0, 2)),
        lambda x: np.flip(x, (0, 2)),
        ((2, 3, 4),),
        FLOATS + ("int32",),
        linear=True,
    ),
    PrimCase(
        "roll",
        lambda x: lax.roll(x, 2, 1),
        lambda x: np.roll(x, 2, 1),
        ((2, 3, 4),),
        FLOATS + ("int32", "bool"),
        linear=True,
    ),
    PrimCase(
        "roll-negative",
        lambda x: lax.roll(x, -1, -1),
        lambda x: np.roll(x, -1, -1),
        ((3, 5),),
        FLOATS,
        linear=True,
    ),
    PrimCase(
        "slice",
        lambda x: lax.slice(x, (1, 0), (3, 5)),
        lambda x: x[1:3, 0:5],
        ((4, 5),),
        FLOATS + ("int32", "bool"),
        linear=True,
    ),
    PrimCase(
        "slice-strided",
        lambda x: lax.slice(x, (0, 1, 1), (2, 4, 5), (1, 2, 3)),
        lambda x: x[0:2, 1:4:2, 1:5:3],
        ((2, 4, 5),),
        FLOATS,
        linear=True,
    ),
    PrimCase(
        "dynamic_slice",
        lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)),
        lambda x, i, j: _np_dynamic_slice(x, (i, j), (2, 3)),
        ((5, 6), (), ()),
        ("int32",) + FLOATS,
        domain=_values_and_starts,
        arg_dtypes=(None, "int32", "int32"),
        diff_argnums=(0,),
    ),
    PrimCase(
        "dynamic_slice-mixed-starts",
        lambda x, i, j, k: lax.dynamic_slice(x, (i, j, k), (3, 2, 1)),
        lambda x, i, j, k: _np_dynamic_slice(x, (i, j, k), (3, 2, 1)),
        ((3, 4, 9), (), (), ()),
        ("bool",) + FLOATS,
        domain=_values_and_starts,
        arg_dtypes=(None, "int64", "uint8", "int32"),
        diff_argnums=(0,),
    ),
    PrimCase(
        "dynamic_update_slice",
        lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)),
        lambda x, u, i, j: _np_dynamic_update_slice(x, u, (i, j)),
        ((5, 6), (2, 3), (), ()),
        ("int32",) + FLOATS,
        domain=_values_and_starts,
        arg_dtypes=(None, None, "int32", "int32"),
        diff_argnums=(0, 1),
    ),
    PrimCase(
        "dynamic_update_slice-mixed-starts",
        lambda x, u, i, j, k: lax.dynamic_update_slice(x, u, (i, j, k)),
        lambda x, u, i, j, k: _np_dynamic_update_slice(x, u, (i, j, k)),
        ((3, 4, 9), (3, 1, 2), (), (), ()),
        ("bool",) + FLOATS,
        domain=_values_and_starts,
        arg_dtypes=(None, None, "int64", "uint8", "int32"),
        diff_argnums=(0, 1),
    ),
]
