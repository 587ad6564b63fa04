"""The normal distribution, as `jax.scipy.stats.norm`."""

from __future__ import annotations

import numpy as np

import mjnp
from mjcore.scipy import special
from mjcore.scipy.stats._core import Array, ArrayLike, promote_inexact


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log of the normal probability density."""
    x, loc, scale = promote_inexact("norm.logpdf", x, loc, scale)
    scale_sq = scale * scale
    return (mjnp.log(2 * np.pi * scale_sq) + (x - loc) ** 2 / scale_sq) / -2


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Normal probability density."""
    return mjnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Normal cumulative distribution function."""
    x, loc, scale = promote_inexact("norm.cdf", x, loc, scale)
    return special.ndtr((x - loc) / scale)


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log of the normal CDF, accurate in the far left tail (`log_ndtr`)."""
    x, loc, scale = promote_inexact("norm.logcdf", x, loc, scale)
    return special.log_ndtr((x - loc) / scale)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Normal survival function `1 - cdf`, computed as `cdf(-x)`."""
    x, loc, scale = promote_inexact("norm.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log of the normal survival function."""
    x, loc, scale = promote_inexact("norm.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Normal quantile function (inverse CDF)."""
    q, loc, scale = promote_inexact("norm.ppf", q, loc, scale)
    return special.ndtri(q) * scale + loc


def isf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Inverse survival function."""
    q, loc, scale = promote_inexact("norm.isf", q, loc, scale)
    return ppf(1 - q, loc, scale)


__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
