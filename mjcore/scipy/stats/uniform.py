"""The uniform distribution on [loc, loc + scale], as `jax.scipy.stats.uniform`."""

from __future__ import annotations

import numpy as np

import mjnp
from mjcore.scipy.stats._core import Array, ArrayLike, promote_inexact


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log of the uniform density (-inf outside the interval)."""
    x, loc, scale = promote_inexact("uniform.logpdf", x, loc, scale)
    log_probs = -mjnp.log(scale) + mjnp.zeros_like(x)
    return mjnp.where((x > loc + scale) | (x < loc), -np.inf, log_probs)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Uniform density."""
    return mjnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Uniform CDF."""
    x, loc, scale = promote_inexact("uniform.cdf", x, loc, scale)
    inside = (x - loc) / scale
    return mjnp.where(x < loc, 0.0, mjnp.where(x > loc + scale, 1.0, inside))


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Uniform quantile function (NaN outside [0, 1])."""
    q, loc, scale = promote_inexact("uniform.ppf", q, loc, scale)
    return mjnp.where(mjnp.isnan(q) | (q < 0) | (q > 1), np.nan, loc + scale * q)


__all__ = ["cdf", "logpdf", "pdf", "ppf"]
