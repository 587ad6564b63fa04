"""Autodidax Part 5, continued: `map`, a `scan` with no carry (optionally over `vmap`ped
batches), as JAX's `lax.map`."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from mjcore.api import vmap
from mjcore.control_flow.common import leaf_paths
from mjcore.control_flow.scan import scan
from mjcore.core import get_aval
from mjcore.lax.base import reshape
from mjcore.lax.slicing import slice_in_dim
from mjcore.lax.structural import concatenate
from mjcore.tree_util import tree_flatten, tree_map, tree_unflatten


def map(  # noqa: A001  (the lax name, as in JAX)
    f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None
) -> Any:
    """Apply `f` to each slice of `xs` along its leading axis and stack the results.

    Meaning::

        def map(f, xs, batch_size=None):
            return np.stack([f(x) for x in xs])

    `xs` and the results are pytrees of arrays, stacked leaf by leaf. Without `batch_size`
    this is a `scan`, so `f` is traced once and runs one slice at a time (less memory than
    `vmap`). With `batch_size`, `scan` runs `vmap(f)` over `batch_size` slices at a time and
    a final `vmap(f)` handles the remaining `len(xs) % batch_size` slices; `batch_size=0`
    means a single `vmap` over everything. Every transformation works.

    Raises:
      TypeError: if `f` is not callable.
      ValueError: if `batch_size` is negative, or the leaves of `xs` are scalars or disagree
        on their leading axis size (with `batch_size`; `scan` checks the other case).
    """
    if not callable(f):
        raise TypeError(f"map: f must be callable, got {type(f).__name__}")
    if batch_size is None:
        _, ys = scan(lambda _, x: ((), f(x)), (), xs)
        return ys
    batch_size = operator.index(batch_size)
    if batch_size < 0:
        raise ValueError(f"map: batch_size must be non-negative, got {batch_size}")
    leaves, tree = tree_flatten(xs)
    if not leaves:
        _, ys = scan(lambda _, x: ((), vmap(f)(x)), (), xs)
        return ys
    shapes = [get_aval(leaf).shape for leaf in leaves]
    sizes = {s[0] if s else None for s in shapes}
    if len(sizes) != 1 or None in sizes:
        described = ", ".join(f"xs{p}: {s}" for p, s in zip(leaf_paths(xs), shapes, strict=True))
        raise ValueError(
            f"map: every leaf of xs needs the same leading axis size to map over, got {described}"
        )
    n = shapes[0][0]  # (the one size)
    num_batches, remainder = (0, n) if batch_size == 0 else divmod(n, batch_size)
    if num_batches == 0:
        return vmap(f)(xs)
    whole = num_batches * batch_size
    scan_xs = tree_unflatten(
        tree,
        [
            reshape(slice_in_dim(leaf, 0, whole, 0), (num_batches, batch_size, *s[1:]))
            for leaf, s in zip(leaves, shapes, strict=True)
        ],
    )
    _, scan_ys = scan(lambda _, x: ((), vmap(f)(x)), (), scan_xs)

    def unbatch(y: Any) -> Any:
        shape = get_aval(y).shape
        return reshape(y, (shape[0] * shape[1], *shape[2:]))

    if not remainder:
        return tree_map(unbatch, scan_ys)
    remainder_xs = tree_unflatten(tree, [slice_in_dim(leaf, whole, n, 0) for leaf in leaves])
    remainder_ys = vmap(f)(remainder_xs)
    return tree_map(
        lambda y, r: concatenate([unbatch(y), r], 0),
        scan_ys,
        remainder_ys,
    )


__all__ = ["map"]
