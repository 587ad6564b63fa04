"""The geometric distribution (support 1, 2, ...), as `jax.scipy.stats.geom`."""

from __future__ import annotations

import numpy as np

import mjnp
from mjcore.scipy import special
from mjcore.scipy.stats._core import Array, ArrayLike, promote_inexact


def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Log of the geometric probability mass (-inf at `k - loc <= 0`)."""
    k, p, loc = promote_inexact("geom.logpmf", k, p, loc)
    x = k - loc
    log_probs = special.xlog1py(x - 1, -p) + mjnp.log(p)
    return mjnp.where(x <= 0, -np.inf, log_probs)


def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Geometric probability mass."""
    return mjnp.exp(logpmf(k, p, loc))


__all__ = ["logpmf", "pmf"]
