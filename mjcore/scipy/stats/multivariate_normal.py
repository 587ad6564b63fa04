"""The multivariate normal distribution, as `jax.scipy.stats.multivariate_normal`."""

from __future__ import annotations

import numpy as np

import mjnp
from mjcore import lax
from mjcore.scipy.stats._core import Array, ArrayLike, promote_inexact


def logpdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike, allow_singular: None = None) -> Array:
    """Log density at `x` (..., n) of N(mean, cov): `cov` a (batched) matrix, or a scalar
    variance shared by all coordinates; a scalar `mean` makes it univariate."""
    if allow_singular is not None:
        raise NotImplementedError("multivariate_normal.logpdf: allow_singular is not supported")
    x, mean, cov = promote_inexact("multivariate_normal.logpdf", x, mean, cov)
    if mean.ndim == 0:
        return -((x - mean) ** 2) / cov / 2 - (np.log(2 * np.pi) + mjnp.log(cov)) / 2
    n = mean.shape[-1]
    y = x - mean
    if cov.ndim == 0:
        quad = mjnp.einsum("...i,...i->...", y, y)
        return -quad / cov / 2 - n / 2 * (np.log(2 * np.pi) + mjnp.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError(
            f"multivariate_normal.logpdf: cov of shape {cov.shape} does not match mean of shape "
            f"{mean.shape}; it needs trailing shape ({n}, {n})"
        )
    chol = lax.cholesky(cov)
    batch = np.broadcast_shapes(chol.shape[:-2], y.shape[:-1])
    chol_b = mjnp.broadcast_to(chol, (*batch, n, n))
    y_b = mjnp.broadcast_to(y, (*batch, n))[..., None]
    z = lax.triangular_solve(chol_b, y_b, left_side=True, lower=True)[..., 0]
    log_det = mjnp.sum(mjnp.log(mjnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return -mjnp.einsum("...i,...i->...", z, z) / 2 - n / 2 * np.log(2 * np.pi) - log_det


def pdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike) -> Array:
    """Multivariate normal density."""
    return mjnp.exp(logpdf(x, mean, cov))


__all__ = ["logpdf", "pdf"]
