"""The Dirichlet distribution, as `jax.scipy.stats.dirichlet`."""

from __future__ import annotations

import numpy as np

import mjnp
from mjcore.scipy import special
from mjcore.scipy.stats._core import Array, ArrayLike, promote_inexact


def logpdf(x: ArrayLike, alpha: ArrayLike) -> Array:
    """Log of the Dirichlet density at `x` (entries along axis 0; the last entry may be left
    out, as `1 - sum`); -inf off the simplex."""
    x, alpha = promote_inexact("dirichlet.logpdf", x, alpha)
    if alpha.ndim != 1:
        raise ValueError(
            f"dirichlet.logpdf: alpha must be one-dimensional, got shape {alpha.shape}"
        )
    if x.ndim == 0 or x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError(
            "dirichlet.logpdf: x must have as many entries as alpha or one fewer along its "
            f"first axis, got x.shape={x.shape}, alpha.shape={alpha.shape}"
        )
    if x.shape[0] != alpha.shape[0]:
        x = mjnp.concatenate([x, 1 - mjnp.sum(x, axis=0, keepdims=True)], axis=0)
    normalize = mjnp.sum(special.gammaln(alpha)) - special.gammaln(mjnp.sum(alpha))
    alpha = mjnp.reshape(alpha, alpha.shape + (1,) * (x.ndim - 1))
    log_probs = mjnp.sum(special.xlogy(alpha - 1, x), axis=0) - normalize
    simplex = mjnp.all(x > 0, axis=0) & (mjnp.abs(mjnp.sum(x, axis=0) - 1) < 1e-6)
    return mjnp.where(simplex, log_probs, -np.inf)


def pdf(x: ArrayLike, alpha: ArrayLike) -> Array:
    """Dirichlet density."""
    return mjnp.exp(logpdf(x, alpha))


__all__ = ["logpdf", "pdf"]
