"""JAX's `lax.associative_scan` (Autodidax's "compose, don't add a primitive"): Blelloch's
parallel prefix scan of any associative function, built from slice, concatenate and reshape so
every transformation works through it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mjcore.core import get_aval
from mjcore.lax.base import expand_dims, reshape
from mjcore.lax.slicing import slice as slice_
from mjcore.lax.structural import concatenate, rev
from mjcore.tree_util import tree_flatten, tree_unflatten

ArrayLike = Any


def _take(x: Any, axis: int, start: int, limit: int | None = None, stride: int = 1) -> Any:
    """`x[start:limit:stride]` along `axis` (limit None: to the end)."""
    shape = get_aval(x).shape
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    limit = shape[axis] if limit is None else limit
    starts[axis], limits[axis], strides[axis] = start, max(start, limit), stride
    return slice_(x, starts, limits, strides)


def _interleave(a: Any, b: Any, axis: int) -> Any:
    """`[a0, b0, a1, b1, ...]` along `axis`, where len(a) is len(b) or len(b) + 1.

    Stacking along a new axis and merging it moves values without arithmetic (JAX pads and
    adds, which turns -0.0 into 0.0).
    """
    na, nb = get_aval(a).shape[axis], get_aval(b).shape[axis]
    head = _take(a, axis, 0, nb) if na != nb else a
    pairs = concatenate([expand_dims(head, (axis + 1,)), expand_dims(b, (axis + 1,))], axis + 1)
    shape = list(get_aval(head).shape)
    shape[axis] = 2 * nb
    merged = reshape(pairs, shape)
    return concatenate([merged, _take(a, axis, nb)], axis) if na != nb else merged


def _scan(combine: Callable[[list[Any], list[Any]], list[Any]], elems: list[Any], axis: int):
    """Inclusive scan of the flat `elems` along `axis`, in O(log n) depth.

    The odd outputs are the scan of the combined adjacent pairs (by recursion); each even
    output after the first is an odd one combined with the next element.
    """
    n = get_aval(elems[0]).shape[axis]
    if n < 2:
        return elems
    pairs = combine(
        [_take(e, axis, 0, n - 1, 2) for e in elems], [_take(e, axis, 1, None, 2) for e in elems]
    )
    odd = _scan(combine, pairs, axis)
    if n % 2 == 0:
        odd_heads = [_take(e, axis, 0, get_aval(e).shape[axis] - 1) for e in odd]
    else:
        odd_heads = odd
    even_tails = combine(odd_heads, [_take(e, axis, 2, None, 2) for e in elems])
    even = [
        concatenate([_take(e, axis, 0, 1), tail], axis)
        for e, tail in zip(elems, even_tails, strict=True)
    ]
    return [_interleave(e, o, axis) for e, o in zip(even, odd, strict=True)]


def associative_scan(
    fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False, axis: int = 0
) -> Any:
    """Inclusive scan of the associative `fn` over `axis` of `elems`, as
    JAX's `lax.associative_scan` (Blelloch's parallel prefix algorithm, O(log n) depth).

    Its meaning, for one array (the k-th element combines the first k + 1)::

        out = [elems[0]]
        for x in elems[1:]:
            out.append(fn(out[-1], x))
        return stack(out)

    `elems` may be a pytree of arrays that share the size of `axis`; `fn(a, b)` takes and
    returns that structure, with `a` the earlier elements, and is applied to whole slices at
    once, so it must work elementwise along `axis`. With `reverse`, the scan runs from the end:
    `[..., fn(fn(z, y), x), fn(z, y), z]`.

    Args:
      fn: an associative function of two pytrees shaped like `elems`.
      elems: a pytree of arrays, each with an `axis` dimension of one size.
      reverse: scan from the last element towards the first.
      axis: the axis to scan over; negative counts from the end.

    Returns:
      A pytree of `elems`'s structure holding the running combinations.

    Raises:
      TypeError: when `fn` is not callable or returns a different structure.
      ValueError: when the arrays disagree on the size of `axis`, or `elems` has none.
      AxisError: when `axis` is out of range.
    """
    name = "associative_scan"
    if not callable(fn):
        raise TypeError(f"{name}: fn must be callable, got {fn!r}")
    leaves, treedef = tree_flatten(elems)
    if not leaves:
        raise ValueError(f"{name}: elems holds no arrays")
    shapes = [get_aval(x).shape for x in leaves]
    ndim = len(shapes[0])
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(
            f"{name}: axis {axis} out of range for elems of shape {shapes[0]}"
        )
    axis %= ndim
    if any(len(s) <= axis or s[axis] != shapes[0][axis] for s in shapes):
        raise ValueError(
            f"{name}: every array in elems needs one size along axis {axis}, got shapes "
            + ", ".join(str(s) for s in shapes)
        )

    def combine(a_leaves: list[Any], b_leaves: list[Any]) -> list[Any]:
        out = fn(tree_unflatten(treedef, a_leaves), tree_unflatten(treedef, b_leaves))
        out_leaves, out_tree = tree_flatten(out)
        if out_tree != treedef:
            raise TypeError(
                f"{name}: fn must return the structure of elems ({treedef}), got {out_tree}"
            )
        return out_leaves

    if reverse:
        leaves = [rev(x, (axis,)) for x in leaves]
    scanned = _scan(combine, leaves, axis)
    if reverse:
        scanned = [rev(x, (axis,)) for x in scanned]
    return tree_unflatten(treedef, scanned)


__all__ = ["associative_scan"]
