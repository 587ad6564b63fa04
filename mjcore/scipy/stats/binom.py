"""The binomial distribution, as `jax.scipy.stats.binom`."""

from __future__ import annotations

import numpy as np

import mjnp
from mjcore.scipy import special
from mjcore.scipy.stats._core import Array, ArrayLike, promote_inexact


def logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Log of the binomial probability mass (-inf outside [loc, loc + n])."""
    k, n, p, loc = promote_inexact("binom.logpmf", k, n, p, loc)
    y = k - loc
    comb = special.gammaln(n + 1) - (special.gammaln(y + 1) + special.gammaln(n - y + 1))
    log_linear = special.xlogy(y, p) + special.xlog1py(n - y, -p)
    log_probs = mjnp.where(
        ((y == 0) & (n == 0)) | (log_linear == 0), mjnp.zeros_like(y), comb + log_linear
    )
    return mjnp.where((k >= loc) & (k < loc + n + 1), log_probs, -np.inf)


def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Binomial probability mass."""
    return mjnp.exp(logpmf(k, n, p, loc))


__all__ = ["logpmf", "pmf"]
