"""The Laplace distribution, as `jax.scipy.stats.laplace`."""

from __future__ import annotations

import mjnp
from mjcore.scipy.stats._core import Array, ArrayLike, promote_inexact


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log of the Laplace density."""
    x, loc, scale = promote_inexact("laplace.logpdf", x, loc, scale)
    return -(mjnp.abs(x - loc) / scale + mjnp.log(2 * scale))


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Laplace density."""
    return mjnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Laplace CDF."""
    x, loc, scale = promote_inexact("laplace.cdf", x, loc, scale)
    y = (x - loc) / scale
    return mjnp.where(y <= 0, 0.5 * mjnp.exp(y), 1 - 0.5 * mjnp.exp(-y))


__all__ = ["cdf", "logpdf", "pdf"]
