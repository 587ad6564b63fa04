"""The Poisson distribution, as `jax.scipy.stats.poisson`."""

from __future__ import annotations

import numpy as np

import mjnp
from mjcore.scipy import special
from mjcore.scipy.stats._core import Array, ArrayLike, promote_inexact


def logpmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Log of the Poisson probability mass (-inf below `loc` and at non-integer `k`)."""
    k, mu, loc = promote_inexact("poisson.logpmf", k, mu, loc)
    x = k - loc
    log_probs = special.xlogy(x, mu) - special.gammaln(x + 1) - mu
    return mjnp.where((x < 0) | (mjnp.round(k) != k), -np.inf, log_probs)


def pmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Poisson probability mass."""
    return mjnp.exp(logpmf(k, mu, loc))


def cdf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Poisson CDF, `gammaincc(floor(k - loc) + 1, mu)`."""
    k, mu, loc = promote_inexact("poisson.cdf", k, mu, loc)
    x = k - loc
    return mjnp.where(x < 0, mjnp.zeros_like(x), special.gammaincc(mjnp.floor(1 + x), mu))


__all__ = ["cdf", "logpmf", "pmf"]
