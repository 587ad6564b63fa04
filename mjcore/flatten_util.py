"""`ravel_pytree`: a pytree of arrays as one flat vector, and back (JAX's `flatten_util`).

Not an Autodidax part: a small utility over `tree_util` and `mjcore.lax`, differentiable
because it is made of `convert_element_type`, `reshape`, `concatenate` and `split`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mjcore import dtypes, lax
from mjcore.core import get_aval
from mjcore.tree_util import PyTreeDef, tree_flatten, tree_unflatten

Shape = tuple[int, ...]


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """Ravel (flatten) a pytree of arrays and scalars into one 1-D array, as JAX's.

    Returns the concatenated, raveled leaves, in the promoted dtype of all of them (an empty
    float32 array for a tree without leaves), and a function mapping such a vector back to a
    pytree of the original structure, shapes and dtypes. When the leaves all have one dtype,
    the unravel function is dtype-polymorphic (it keeps the vector's dtype, so it works on
    tangents and cotangents of another dtype); otherwise it needs the vector in the promoted
    dtype and casts each piece back to its leaf's dtype.

    NB: the promoted dtype follows NumPy 2 (mjcore's promotion), which agrees with JAX's (x64)
    except where JAX's lattice differs, e.g. int64 with float32 gives float64 here, float32 in
    JAX.
    """
    leaves, treedef = tree_flatten(pytree)
    if not leaves:
        return lax.full((0,), 0, np.dtype(np.float32)), _Unravel(treedef, (), (), None, None)
    avals = [get_aval(x) for x in leaves]
    from_dtypes = tuple(a.dtype for a in avals)
    to_dtype = np.result_type(*from_dtypes)
    shapes = tuple(a.shape for a in avals)
    sizes = tuple(int(np.prod(s, dtype=np.int64)) for s in shapes)
    pieces = [
        lax.reshape(lax.convert_element_type(x, to_dtype), (n,))
        for x, n in zip(leaves, sizes, strict=True)
    ]
    flat = lax.concatenate(pieces, 0)
    if all(dt == to_dtype for dt in from_dtypes):
        return flat, _Unravel(treedef, sizes, shapes, None, None)
    return flat, _Unravel(treedef, sizes, shapes, from_dtypes, to_dtype)


@dataclass(frozen=True)
class _Unravel:
    """The unravel function: hashable and equal by value (as JAX's `HashablePartial`), so
    passing it to `jit` as a static argument or closing over it does not retrace."""

    treedef: PyTreeDef
    sizes: tuple[int, ...]
    shapes: tuple[Shape, ...]
    from_dtypes: tuple[np.dtype, ...] | None  # None: dtype-polymorphic (one input dtype)
    to_dtype: np.dtype | None

    def __call__(self, flat: Any) -> Any:
        aval = get_aval(flat)
        total = sum(self.sizes)
        if aval.shape != (total,):
            raise ValueError(
                f"ravel_pytree's unravel function expected an array of shape ({total},), got "
                f"shape {aval.shape}"
            )
        if not self.sizes:
            return tree_unflatten(self.treedef, [])
        if self.from_dtypes is not None and aval.dtype != self.to_dtype:
            raise TypeError(
                f"unravel function given array of dtype {aval.dtype}, but expected dtype "
                f"{self.to_dtype}"
            )
        chunks = lax.split(flat, self.sizes)
        leaves = [lax.reshape(c, s) for c, s in zip(chunks, self.shapes, strict=True)]
        if self.from_dtypes is not None:
            leaves = [_cast(x, dt) for x, dt in zip(leaves, self.from_dtypes, strict=True)]
        return tree_unflatten(self.treedef, leaves)


def _cast(x: Any, dtype: np.dtype) -> Any:
    """`x` as `dtype`; complex to real keeps the real part silently, as JAX's unravel does."""
    if dtypes.is_complex(get_aval(x).dtype) and not dtypes.is_complex(dtype):
        x = lax.real(x)
    return lax.convert_element_type(x, dtype)


__all__ = ["ravel_pytree"]
