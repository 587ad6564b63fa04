"""The exponential distribution, as `jax.scipy.stats.expon`."""

from __future__ import annotations

import numpy as np

import mjnp
from mjcore.scipy.stats._core import Array, ArrayLike, promote_inexact


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log of the exponential density (-inf below `loc`)."""
    x, loc, scale = promote_inexact("expon.logpdf", x, loc, scale)
    log_probs = -((x - loc) / scale + mjnp.log(scale))
    return mjnp.where(x < loc, -np.inf, log_probs)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Exponential density."""
    return mjnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Exponential CDF, `-expm1(-(x - loc) / scale)`."""
    x, loc, scale = promote_inexact("expon.cdf", x, loc, scale)
    neg = (loc - x) / scale
    return mjnp.where(x < loc, mjnp.zeros_like(neg), -mjnp.expm1(neg))


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log of the exponential survival function."""
    x, loc, scale = promote_inexact("expon.logsf", x, loc, scale)
    neg = (loc - x) / scale
    return mjnp.where(x < loc, mjnp.zeros_like(neg), neg)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Exponential survival function."""
    return mjnp.exp(logsf(x, loc, scale))


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log of the exponential CDF."""
    return mjnp.log1p(-sf(x, loc, scale))


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Exponential quantile function (NaN outside [0, 1])."""
    q, loc, scale = promote_inexact("expon.ppf", q, loc, scale)
    bad = mjnp.isnan(q) | (q < 0) | (q > 1)
    return mjnp.where(bad, np.nan, loc - scale * mjnp.log1p(-q))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
