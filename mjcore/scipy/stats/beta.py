"""The beta distribution, as `jax.scipy.stats.beta`."""

from __future__ import annotations

import numpy as np

import mjnp
from mjcore.scipy import special
from mjcore.scipy.stats._core import Array, ArrayLike, promote_inexact


def logpdf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Array:
    """Log of the beta density (-inf outside [loc, loc + scale], NaN for non-positive
    parameters)."""
    x, a, b, loc, scale = promote_inexact("beta.logpdf", x, a, b, loc, scale)
    y = (x - loc) / scale
    log_linear = special.xlogy(a - 1, y) + special.xlog1py(b - 1, -y)
    log_probs = -special.betaln(a, b) + log_linear - mjnp.log(scale)
    result = mjnp.where((x > loc + scale) | (x < loc), -np.inf, log_probs)
    return mjnp.where((a <= 0) | (b <= 0) | (scale <= 0), np.nan, result)


def pdf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Array:
    """Beta density."""
    return mjnp.exp(logpdf(x, a, b, loc, scale))


def cdf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Array:
    """Beta CDF (the regularized incomplete beta function)."""
    x, a, b, loc, scale = promote_inexact("beta.cdf", x, a, b, loc, scale)
    return special.betainc(a, b, mjnp.clip((x - loc) / scale, 0, 1))


def logcdf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Array:
    """Log of the beta CDF."""
    return mjnp.log(cdf(x, a, b, loc, scale))


def sf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Beta survival function."""
    x, a, b, loc, scale = promote_inexact("beta.sf", x, a, b, loc, scale)
    return special.betainc(b, a, 1 - mjnp.clip((x - loc) / scale, 0, 1))


def logsf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Array:
    """Log of the beta survival function."""
    return mjnp.log(sf(x, a, b, loc, scale))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
