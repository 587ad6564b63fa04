"""Interim NumPy host rules for a few primitives, until every primitive has its own `def_host`
beside its other rules (issue 18, part 1). Each is installed only where the primitive has no
host rule yet, so the primitive's own rule always wins; drop this module when they land."""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore.core import Primitive
from mjcore.lax import (
    arithmetic,
    base,
    bitwise,
    comparison,
    reductions,
    slicing,
    structural,
    transcendental,
)


def _convert_element_type_host(x: np.ndarray, *, new_dtype: np.dtype, weak_type: bool) -> Any:
    if new_dtype == np.bool_:
        return x != 0
    if x.dtype.kind == "c" and new_dtype.kind != "c":
        x = x.real  # as NumPy's astype, without its ComplexWarning
    return x.astype(new_dtype)


def _broadcast_in_dim_host(
    x: np.ndarray, *, shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...]
) -> Any:
    expanded = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        expanded[dst] = x.shape[src]
    return np.broadcast_to(x.reshape(expanded), shape)


def _slice_host(
    x: np.ndarray,
    *,
    start_indices: tuple[int, ...],
    limit_indices: tuple[int, ...],
    strides: tuple[int, ...] | None,
) -> Any:
    steps = strides or (1,) * x.ndim
    return x[
        tuple(slice(a, b, s) for a, b, s in zip(start_indices, limit_indices, steps, strict=True))
    ]


def _select_n_host(which: np.ndarray, *cases: np.ndarray) -> Any:
    if which.dtype == np.bool_:
        return np.where(which, cases[1], cases[0])
    return np.choose(which, cases)


def _div_host(x: np.ndarray, y: np.ndarray) -> Any:
    if x.dtype.kind in "iu":  # C division, rounding toward zero
        q = np.floor_divide(x, y)
        inexact = np.not_equal(np.remainder(x, y), 0) & (np.less(x, 0) ^ np.less(y, 0))
        return q + inexact.astype(q.dtype)
    return np.divide(x, y)


def _reduce_max_host(x: np.ndarray, *, axes: tuple[int, ...]) -> Any:
    if x.size == 0:  # XLA's identity; NumPy raises (mjnp checks before it gets here)
        kind = x.dtype.kind
        lowest = -np.inf if kind == "f" else (False if kind == "b" else np.iinfo(x.dtype).min)
        return np.max(x, axes, initial=lowest)
    return np.max(x, axes)


_RULES: list[tuple[Primitive, Any]] = [
    (transcendental.sin_p, np.sin),
    (transcendental.exp_p, np.exp),
    (transcendental.tanh_p, np.tanh),
    (arithmetic.floor_p, np.floor),
    (transcendental.cos_p, np.cos),
    (transcendental.log_p, np.log),
    (transcendental.sqrt_p, np.sqrt),
    (arithmetic.abs_p, np.abs),
    (arithmetic.div_p, _div_host),
    (arithmetic.rem_p, np.fmod),
    (arithmetic.clamp_p, lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi)),
    (comparison.eq_p, np.equal),
    (comparison.ne_p, np.not_equal),
    (comparison.ge_p, np.greater_equal),
    (comparison.le_p, np.less_equal),
    (bitwise.bitwise_and_p, np.bitwise_and),
    (bitwise.bitwise_or_p, np.bitwise_or),
    (bitwise.bitwise_xor_p, np.bitwise_xor),
    (bitwise.bitwise_not_p, np.invert),
    (arithmetic.neg_p, np.negative),
    (arithmetic.add_p, np.add),
    (arithmetic.sub_p, np.subtract),
    (arithmetic.mul_p, np.multiply),
    (arithmetic.max_p, np.maximum),
    (arithmetic.min_p, np.minimum),
    (comparison.gt_p, np.greater),
    (comparison.lt_p, np.less),
    (base.select_n_p, _select_n_host),
    (base.convert_element_type_p, _convert_element_type_host),
    (base.broadcast_in_dim_p, _broadcast_in_dim_host),
    (base.reshape_p, lambda x, *, new_sizes: x.reshape(new_sizes)),
    (base.expand_dims_p, lambda x, *, dimensions: np.expand_dims(x, dimensions)),
    (base.transpose_p, lambda x, *, permutation: x.transpose(permutation)),
    (structural.squeeze_p, lambda x, *, dimensions: x.squeeze(dimensions)),
    (structural.rev_p, lambda x, *, dimensions: np.flip(x, dimensions)),
    (structural.concatenate_p, lambda *xs, dimension: np.concatenate(xs, dimension)),
    (slicing.slice_p, _slice_host),
    (reductions.reduce_sum_p, lambda x, *, axes: np.sum(x, axes, x.dtype)),
    (reductions.reduce_max_p, _reduce_max_host),
]

for _prim, _rule in _RULES:
    if _prim.host_rule is None:
        _prim.def_host(_rule)
