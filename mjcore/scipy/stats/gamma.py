"""The gamma distribution, as `jax.scipy.stats.gamma`."""

from __future__ import annotations

import numpy as np

import mjnp
from mjcore.scipy import special
from mjcore.scipy.stats._core import Array, ArrayLike, promote_inexact


def logpdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log of the gamma density with shape `a` (-inf below `loc`)."""
    x, a, loc, scale = promote_inexact("gamma.logpdf", x, a, loc, scale)
    ok = x >= loc
    y = mjnp.where(ok, (x - loc) / scale, 1.0)
    log_probs = special.xlogy(a - 1, y) - y - (special.gammaln(a) + mjnp.log(scale))
    return mjnp.where(ok, log_probs, -np.inf)


def pdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Gamma density."""
    return mjnp.exp(logpdf(x, a, loc, scale))


def cdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Gamma CDF (the regularized lower incomplete gamma function)."""
    x, a, loc, scale = promote_inexact("gamma.cdf", x, a, loc, scale)
    return special.gammainc(a, mjnp.clip((x - loc) / scale, 0, np.inf))


def logcdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log of the gamma CDF."""
    return mjnp.log(cdf(x, a, loc, scale))


def sf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Gamma survival function (the regularized upper incomplete gamma function)."""
    x, a, loc, scale = promote_inexact("gamma.sf", x, a, loc, scale)
    y = (x - loc) / scale
    return mjnp.where(y < 0, mjnp.ones_like(y), special.gammaincc(a, y))


def logsf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log of the gamma survival function."""
    return mjnp.log(sf(x, a, loc, scale))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
