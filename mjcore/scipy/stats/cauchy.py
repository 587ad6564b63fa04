"""The Cauchy distribution, as `jax.scipy.stats.cauchy`."""

from __future__ import annotations

import numpy as np

import mjnp
from mjcore.scipy.stats._core import Array, ArrayLike, promote_inexact


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log of the Cauchy density."""
    x, loc, scale = promote_inexact("cauchy.logpdf", x, loc, scale)
    y = (x - loc) / scale
    return -(mjnp.log(np.pi * scale) + mjnp.log1p(y * y))


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Cauchy density."""
    return mjnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Cauchy CDF, `1/2 + arctan((x - loc) / scale) / pi`."""
    x, loc, scale = promote_inexact("cauchy.cdf", x, loc, scale)
    return 0.5 + mjnp.arctan((x - loc) / scale) / np.pi


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log of the Cauchy CDF."""
    return mjnp.log(cdf(x, loc, scale))


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Cauchy survival function, `cdf(-x)`."""
    x, loc, scale = promote_inexact("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log of the Cauchy survival function."""
    x, loc, scale = promote_inexact("cauchy.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Cauchy quantile function."""
    q, loc, scale = promote_inexact("cauchy.ppf", q, loc, scale)
    return mjnp.tan(np.pi * q - np.pi / 2) * scale + loc


def isf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Cauchy inverse survival function."""
    q, loc, scale = promote_inexact("cauchy.isf", q, loc, scale)
    return mjnp.tan(np.pi / 2 - np.pi * q) * scale + loc


__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
