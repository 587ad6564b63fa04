"""The logistic distribution, as `jax.scipy.stats.logistic`."""

from __future__ import annotations

import mjnp
from mjcore.scipy import special
from mjcore.scipy.stats._core import Array, ArrayLike, promote_inexact


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log of the logistic density, `-2 logaddexp(y/2, -y/2) - log(scale)`."""
    x, loc, scale = promote_inexact("logistic.logpdf", x, loc, scale)
    half = (x - loc) / scale / 2
    return -2 * mjnp.logaddexp(half, -half) - mjnp.log(scale)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Logistic density."""
    return mjnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Logistic CDF, `expit((x - loc) / scale)`."""
    x, loc, scale = promote_inexact("logistic.cdf", x, loc, scale)
    return special.expit((x - loc) / scale)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Logistic survival function."""
    x, loc, scale = promote_inexact("logistic.sf", x, loc, scale)
    return special.expit(-(x - loc) / scale)


def ppf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Logistic quantile function, `logit(q) * scale + loc`."""
    x, loc, scale = promote_inexact("logistic.ppf", x, loc, scale)
    return special.logit(x) * scale + loc


def isf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Logistic inverse survival function."""
    x, loc, scale = promote_inexact("logistic.isf", x, loc, scale)
    return -special.logit(x) * scale + loc


__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]
