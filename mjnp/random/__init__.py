"""`mjnp.random`: NumPy's random sampling API, drawn by NumPy's generators (same seed, same
numbers as NumPy), returning mjnp arrays. See `mjnp.random._sampling` for how draws behave
under transformations (an error under `jit`; differentiable `normal`/`uniform`/`lognormal`).
"""

from __future__ import annotations

from typing import Any

import numpy as _np

from mjnp.random._sampling import (
    Generator,
    RandomStagingError,
    RandomState,
    _global,
    default_rng,
)

# Bit generators and seeding are NumPy's own: they make no arrays.
BitGenerator = _np.random.BitGenerator
SeedSequence = _np.random.SeedSequence
MT19937 = _np.random.MT19937
PCG64 = _np.random.PCG64
PCG64DXSM = _np.random.PCG64DXSM
Philox = _np.random.Philox
SFC64 = _np.random.SFC64
# (from `mtrand`, where NumPy's stubs declare them; the same objects)
get_bit_generator = _np.random.mtrand.get_bit_generator
set_bit_generator = _np.random.mtrand.set_bit_generator

# The module-level functions of NumPy's legacy API, on NumPy's global RandomState.
_LEGACY = [
    "beta", "binomial", "bytes", "chisquare", "choice", "dirichlet", "exponential", "f",
    "gamma", "geometric", "get_state", "gumbel", "hypergeometric", "laplace", "logistic",
    "lognormal", "logseries", "multinomial", "multivariate_normal", "negative_binomial",
    "noncentral_chisquare", "noncentral_f", "normal", "pareto", "permutation", "poisson",
    "power", "rand", "randint", "randn", "random", "random_integers", "random_sample", "ranf",
    "rayleigh", "sample", "seed", "set_state", "shuffle", "standard_cauchy",
    "standard_exponential", "standard_gamma", "standard_normal", "standard_t", "triangular",
    "uniform", "vonmises", "wald", "weibull", "zipf",
]  # fmt: skip


# Module-level aliases NumPy's RandomState has no method for.
_ALIASES = {"ranf": "random_sample", "sample": "random_sample"}


def _module_function(public_name: str) -> Any:
    name = _ALIASES.get(public_name, public_name)

    def function(*args: Any, **kwargs: Any) -> Any:
        return getattr(_global, name)(*args, **kwargs)

    special = getattr(type(_global), name, None)  # normal, uniform, choice, ... (documented)
    if callable(special):
        function.__doc__ = special.__doc__
    else:
        function.__doc__ = f"`numpy.random.{name}` on NumPy's global RandomState, as mjnp arrays."
    function.__name__ = function.__qualname__ = public_name
    function.__module__ = __name__
    return function


for _name in _LEGACY:
    globals()[_name] = _module_function(_name)
del _name

__all__ = [
    *_LEGACY,
    "BitGenerator",
    "Generator",
    "MT19937",
    "PCG64",
    "PCG64DXSM",
    "Philox",
    "RandomState",
    "RandomStagingError",
    "SFC64",
    "SeedSequence",
    "default_rng",
    "get_bit_generator",
    "set_bit_generator",
]
