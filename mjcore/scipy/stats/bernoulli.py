"""The Bernoulli distribution, as `jax.scipy.stats.bernoulli`."""

from __future__ import annotations

import numpy as np

import mjnp
from mjcore.scipy import special
from mjcore.scipy.stats._core import Array, ArrayLike, promote_inexact


def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Log of the Bernoulli probability mass (-inf outside {loc, loc + 1})."""
    k, p, loc = promote_inexact("bernoulli.logpmf", k, p, loc)
    x = k - loc
    log_probs = special.xlogy(x, p) + special.xlog1py(1 - x, -p)
    return mjnp.where((x < 0) | (x > 1), -np.inf, log_probs)


def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Bernoulli probability mass."""
    return mjnp.exp(logpmf(k, p, loc))


def cdf(k: ArrayLike, p: ArrayLike) -> Array:
    """Bernoulli CDF (NaN for NaN inputs or `p` outside [0, 1])."""
    k, p = promote_inexact("bernoulli.cdf", k, p)
    bad = mjnp.isnan(k) | mjnp.isnan(p) | (p < 0) | (p > 1)
    inside = mjnp.where(k < 1, 1 - p, mjnp.ones_like(p))
    return mjnp.where(bad, np.nan, mjnp.where(k < 0, mjnp.zeros_like(p), inside))


def ppf(q: ArrayLike, p: ArrayLike) -> Array:
    """Bernoulli quantile function (NaN for arguments outside [0, 1])."""
    q, p = promote_inexact("bernoulli.ppf", q, p)
    bad = mjnp.isnan(q) | mjnp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
    return mjnp.where(bad, np.nan, mjnp.where(q <= 1 - p, mjnp.zeros_like(q), 1.0))


__all__ = ["cdf", "logpmf", "pmf", "ppf"]
