"""Neural-network functions, as JAX's `nn` namespace: activations, softmax and friends,
`logsumexp`, `standardize` and `one_hot`, composed from mjnp and mjcore.lax operations so
that `grad`, `jvp`, `vmap` and `jit` apply to all of them, with JAX's derivatives at kinks.

NB: this is the one mjcore package that imports mjnp, an exception to "mjcore never imports
mjnp": like JAX's `nn`, written in JAX's NumPy layer, it is a library on top of the NumPy
namespace rather than part of the core, and it loads lazily on `mjcore.nn`, after mjnp. Not
included: `initializers`, `dot_product_attention` and the cuDNN scaled-matmul helpers.
"""

from mjcore.nn import initializers
from mjcore.nn._activations import (
    celu,
    elu,
    gelu,
    glu,
    hard_sigmoid,
    hard_silu,
    hard_swish,
    hard_tanh,
    identity,
    leaky_relu,
    log1mexp,
    log_sigmoid,
    mish,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    soft_sign,
    softplus,
    sparse_plus,
    sparse_sigmoid,
    squareplus,
    swish,
    tanh,
)
from mjcore.nn._attention import dot_product_attention
from mjcore.nn._normalization import log_softmax, logmeanexp, logsumexp, softmax, standardize
from mjcore.nn._one_hot import one_hot

__all__ = [
    "celu",
    "dot_product_attention",
    "elu",
    "gelu",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "identity",
    "initializers",
    "leaky_relu",
    "log1mexp",
    "log_sigmoid",
    "log_softmax",
    "logmeanexp",
    "logsumexp",
    "mish",
    "one_hot",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "sparse_plus",
    "sparse_sigmoid",
    "squareplus",
    "standardize",
    "swish",
    "tanh",
]
