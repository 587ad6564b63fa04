"""Student's t distribution, as `jax.scipy.stats.t`."""

from __future__ import annotations

import numpy as np

import mjnp
from mjcore.scipy import special
from mjcore.scipy.stats._core import Array, ArrayLike, promote_inexact


def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Log of Student's t density with `df` degrees of freedom."""
    x, df, loc, scale = promote_inexact("t.logpdf", x, df, loc, scale)
    y = (x - loc) / scale
    half_df = df / 2
    normalize = (
        special.gammaln(half_df)
        + mjnp.log(scale * scale * np.pi * df) / 2
        - special.gammaln(half_df + 0.5)
    )
    return -(normalize + (half_df + 0.5) * mjnp.log1p(y * y / df))


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
    """Student's t density."""
    return mjnp.exp(logpdf(x, df, loc, scale))


__all__ = ["logpdf", "pdf"]
