"""The chi-squared distribution, as `jax.scipy.stats.chi2`."""

from __future__ import annotations

import numpy as np

import mjnp
from mjcore.scipy import special
from mjcore.scipy.stats._core import Array, ArrayLike, promote_inexact


def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log of the chi-squared density with `df` degrees of freedom (-inf below `loc`)."""
    x, df, loc, scale = promote_inexact("chi2.logpdf", x, df, loc, scale)
    y = (x - loc) / scale
    half_df = df / 2
    kernel = (half_df - 1) * mjnp.log(y) - y / 2
    normalize = -(special.gammaln(half_df) + np.log(2.0) * df / 2)
    return mjnp.where(x < loc, -np.inf, normalize - mjnp.log(scale) + kernel)


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Chi-squared density."""
    return mjnp.exp(logpdf(x, df, loc, scale))


def cdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Chi-squared CDF, `gammainc(df / 2, (x - loc) / (2 scale))`."""
    x, df, loc, scale = promote_inexact("chi2.cdf", x, df, loc, scale)
    return special.gammainc(df / 2, mjnp.clip((x - loc) / (scale * 2), 0, np.inf))


def logcdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log of the chi-squared CDF."""
    return mjnp.log(cdf(x, df, loc, scale))


def sf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Chi-squared survival function."""
    x, df, loc, scale = promote_inexact("chi2.sf", x, df, loc, scale)
    return special.gammaincc(df / 2, mjnp.clip((x - loc) / (scale * 2), 0, np.inf))


def logsf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log of the chi-squared survival function."""
    return mjnp.log(sf(x, df, loc, scale))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
