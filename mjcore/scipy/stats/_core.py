"""What the distributions share: argument promotion to one inexact dtype."""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore import dtypes, lax
from mjnp._promotion import promote_args

ArrayLike = Any
Array = Any


def promote_inexact(fname: str, *args: ArrayLike) -> list[Array]:
    """`args` in their common dtype (NumPy 2 promotion, Python scalars weak), made inexact:
    integer and bool arguments compute in float64, as JAX's `promote_args_inexact` (x64)."""
    arrays = promote_args(f"scipy.stats.{fname}", *args)
    dtype = arrays[0].dtype
    if dtypes.kind(dtype) not in "fc":
        return [lax.convert_element_type(x, np.dtype(np.float64)) for x in arrays]
    return arrays
