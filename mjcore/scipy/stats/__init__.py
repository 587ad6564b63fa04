"""`mjcore.scipy.stats`: JAX's `jax.scipy.stats` distributions, one module each
(`mjcore.scipy.stats.norm.logpdf`, ...), written over `mjnp` and `mjcore.scipy.special`.

Sits above mjnp (like `mjcore.nn`). Arguments broadcast and promote as in NumPy 2, integers
compute in float64; every function is differentiable and works under `jit` and `vmap`.
"""

from mjcore.scipy.stats import (
    bernoulli,
    beta,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    geom,
    laplace,
    logistic,
    multivariate_normal,
    norm,
    poisson,
    t,
    uniform,
)

__all__ = [
    "bernoulli",
    "beta",
    "binom",
    "cauchy",
    "chi2",
    "dirichlet",
    "expon",
    "gamma",
    "geom",
    "laplace",
    "logistic",
    "multivariate_normal",
    "norm",
    "poisson",
    "t",
    "uniform",
]
