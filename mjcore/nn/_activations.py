"""Elementwise activation functions, as JAX's `nn` namespace defines them.

Each is composed from mjnp and mjcore.lax operations, so every transformation applies. Where
JAX fixes a derivative at a kink with a custom JVP (`relu` and `relu6` at 0 and 6, `log1mexp`)
so do we; elsewhere the derivative at a kink is whatever the composition gives, which is JAX's
because the composition is JAX's (e.g. `leaky_relu`'s slope at 0 is 1, `celu`'s is 1 as the
mean of `maximum`'s and `minimum`'s tie rules).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import mjnp
from mjcore import lax
from mjcore.array import Array
from mjcore.custom_derivatives import custom_jvp
from mjcore.nn._arrays import asarray, jax_inexact_dtype, promote_inexact, reduction_axes
from mjcore.nn._arrays import require_float as _require_float

ArrayLike = Any


def identity(x: ArrayLike) -> Array:
    """The argument unchanged (as an array), as JAX's `nn.identity`."""
    return asarray("identity", x)


@custom_jvp
def _relu(x: Array) -> Array:
    return mjnp.maximum(x, 0)


# The derivative at 0 is 0, as in JAX (see "Numerical influence of ReLU'(0) on backpropagation").
_relu.defjvps(lambda g, ans, x: lax.select_n(x > 0, lax.full_like(g, 0), g))


def relu(x: ArrayLike) -> Array:
    """Rectified linear unit `max(x, 0)`, as JAX's `nn.relu`; its derivative at 0 is 0.

    Integer inputs keep their dtype.
    """
    return _relu(asarray("relu", x))


@custom_jvp
def _relu6(x: Array) -> Array:
    return mjnp.minimum(mjnp.maximum(x, 0), 6.0)


_relu6.defjvps(lambda g, ans, x: lax.select_n((x > 0) & (x < 6), lax.full_like(g, 0), g))


def relu6(x: ArrayLike) -> Array:
    """`min(max(x, 0), 6)`, as JAX's `nn.relu6`; its derivative at 0 and at 6 is 0."""
    return _relu6(asarray("relu6", x))


def sigmoid(x: ArrayLike) -> Array:
    """Logistic sigmoid `1 / (1 + exp(-x))`, as JAX's `nn.sigmoid`.

    Raises:
        TypeError: for bool or integer `x`, as in JAX.
    """
    x = asarray("sigmoid", x)
    _require_float("sigmoid", x)
    return lax.logistic(x)


def log_sigmoid(x: ArrayLike) -> Array:
    """`log(sigmoid(x)) = -softplus(-x)`, as JAX's `nn.log_sigmoid`.

    Raises:
        TypeError: for bool `x` (it cannot be negated), as in JAX.
    """
    x = asarray("log_sigmoid", x)
    if x.dtype == np.bool_:
        raise TypeError("mjcore.nn.log_sigmoid: bool input is not supported; use x.astype(float)")
    return -softplus(-x)


@custom_jvp
def _softplus(x: Array) -> Array:
    return mjnp.logaddexp(x, lax.full_like(x, 0))


def _replace_inf(x: Array) -> Array:
    return mjnp.where(mjnp.isinf(x), 0, x)


# JAX's rule for `logaddexp(x, 0)`, `exp(x - out)`: the composition would differentiate
# `abs(x - 0)` and lose the second derivative at 0.
_softplus.defjvps(lambda g, ans, x: g * mjnp.exp(_replace_inf(x) - _replace_inf(ans)))


def softplus(x: ArrayLike) -> Array:
    """`log(1 + exp(x))`, computed stably as `logaddexp(x, 0)`, as JAX's `nn.softplus`."""
    (x, _) = promote_inexact("softplus", x, 0)
    return _softplus(x)


def sparse_plus(x: ArrayLike) -> Array:
    """0 for `x <= -1`, `(x + 1)**2 / 4` between, `x` for `x >= 1`, as JAX's `nn.sparse_plus`."""
    x = asarray("sparse_plus", x)
    return mjnp.where(x <= -1.0, 0.0, mjnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x: ArrayLike) -> Array:
    """`clip((x + 1) / 2, 0, 1)`, the derivative of `sparse_plus`, as JAX's `nn.sparse_sigmoid`."""
    x = asarray("sparse_sigmoid", x)
    # NB: max then min, as JAX's `clip` composes it, so the derivative at -1 and 1 is 1/4.
    return 0.5 * mjnp.minimum(mjnp.maximum(x + 1.0, 0.0), 2.0)


def soft_sign(x: ArrayLike) -> Array:
    """`x / (|x| + 1)`, as JAX's `nn.soft_sign`."""
    (x, _) = promote_inexact("soft_sign", x, 1)
    return x / (mjnp.abs(x) + 1)


def silu(x: ArrayLike) -> Array:
    """`x * sigmoid(x)` (SiLU, also called swish), as JAX's `nn.silu`.

    Raises:
        TypeError: for bool or integer `x`, as in JAX.
    """
    x = asarray("silu", x)
    _require_float("silu", x)
    return x * lax.logistic(x)


swish = silu


def mish(x: ArrayLike) -> Array:
    """`x * tanh(softplus(x))`, as JAX's `nn.mish`."""
    (x, _) = promote_inexact("mish", x, 0)
    return x * mjnp.tanh(softplus(x))


def tanh(x: ArrayLike) -> Array:
    """Hyperbolic tangent, as JAX's `nn.tanh` (JAX's `numpy.tanh`).

    NB: integers take JAX's float dtype (int32 gives float32), not NumPy's.
    """
    x = asarray("tanh", x)
    return mjnp.tanh(lax.convert_element_type(x, jax_inexact_dtype(x.dtype), x.weak_type))


def elu(x: ArrayLike, alpha: ArrayLike = 1.0) -> Array:
    """`x` for `x > 0`, else `alpha * (exp(x) - 1)`, as JAX's `nn.elu`."""
    x = asarray("elu", x)
    # The inner where keeps expm1 off large positive x, whose inf would poison the gradient.
    return mjnp.where(x > 0, x, alpha * mjnp.expm1(mjnp.where(x > 0, 0.0, x)))


def leaky_relu(x: ArrayLike, negative_slope: ArrayLike = 1e-2) -> Array:
    """`x` for `x >= 0`, else `negative_slope * x`, as JAX's `nn.leaky_relu` (slope 1 at 0)."""
    x = asarray("leaky_relu", x)
    return mjnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x: ArrayLike) -> Array:
    """`x` clipped to [-1, 1], as JAX's `nn.hard_tanh` (slope 1 at -1 and 1).

    Integer inputs keep their dtype.
    """
    x = asarray("hard_tanh", x)
    return mjnp.where(x > 1, 1, mjnp.where(x < -1, -1, x))


def celu(x: ArrayLike, alpha: ArrayLike = 1.0) -> Array:
    """`max(x, 0) + alpha * (exp(min(x, 0) / alpha) - 1)`, as JAX's `nn.celu`."""
    x = asarray("celu", x)
    return mjnp.maximum(x, 0.0) + alpha * mjnp.expm1(mjnp.minimum(x, 0.0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x: ArrayLike) -> Array:
    """Scaled ELU `scale * elu(x, alpha)` with the self-normalising constants, as JAX's
    `nn.selu`."""
    return _SELU_SCALE * elu(asarray("selu", x), _SELU_ALPHA)


def gelu(x: ArrayLike, approximate: bool = True) -> Array:
    """Gaussian error linear unit, as JAX's `nn.gelu`.

    With `approximate=True` (the default) this is the tanh approximation
    `x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x**3)))`; otherwise `x/2 * erfc(-x/sqrt(2))`.
    """
    (x,) = promote_inexact("gelu", x)
    if approximate:
        sqrt_2_over_pi = np.asarray(math.sqrt(2 / math.pi), x.dtype)
        cdf = 0.5 * (1.0 + mjnp.tanh(sqrt_2_over_pi * (x + 0.044715 * x**3)))
        return x * cdf
    sqrt_half = np.asarray(math.sqrt(0.5), x.dtype)
    return lax.convert_element_type(0.5 * x * lax.erfc(-x * sqrt_half), x.dtype)


def glu(x: ArrayLike, axis: int = -1) -> Array:
    """Gated linear unit `a * sigmoid(b)`, where `a, b` are the halves of `x` along `axis`, as
    JAX's `nn.glu`.

    Raises:
        AxisError: if `axis` is out of range.
        ValueError: if the size of `axis` is odd.
        TypeError: for bool or integer `x`.
    """
    x = asarray("glu", x)
    (ax,) = reduction_axes("glu", axis, x.ndim)
    size = x.shape[ax]
    if size % 2:
        raise ValueError(
            f"mjcore.nn.glu: the size of axis {axis} must be divisible by 2, got shape {x.shape}"
        )
    _require_float("glu", x)
    x1, x2 = mjnp.split(x, 2, ax)
    return x1 * lax.logistic(x2)


def hard_sigmoid(x: ArrayLike) -> Array:
    """`relu6(x + 3) / 6`, as JAX's `nn.hard_sigmoid`."""
    return relu6(asarray("hard_sigmoid", x) + 3.0) / 6.0


def hard_silu(x: ArrayLike) -> Array:
    """`x * hard_sigmoid(x)` (also called hard swish), as JAX's `nn.hard_silu`."""
    x = asarray("hard_silu", x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def squareplus(x: ArrayLike, b: ArrayLike = 4) -> Array:
    """`(x + sqrt(x**2 + b)) / 2`, a smooth relu, as JAX's `nn.squareplus`."""
    x = asarray("squareplus", x)
    if x.dtype == np.bool_:
        # JAX squares a bool into int32 before adding `b` (so it lands in float32 for b=4).
        x = lax.convert_element_type(x, np.int32)
    x, b = promote_inexact("squareplus", x, b)
    return (x + mjnp.sqrt(mjnp.square(x) + b)) / 2


@custom_jvp
def _log1mexp(x: Array) -> Array:
    # Mächler's switch at log 2: each branch is accurate on its own side.
    return mjnp.where(x < math.log(2.0), mjnp.log(-mjnp.expm1(-x)), mjnp.log1p(-mjnp.exp(-x)))


_log1mexp.defjvps(lambda g, ans, x: g / mjnp.expm1(x))


def log1mexp(x: ArrayLike) -> Array:
    """`log(1 - exp(-x))`, computed stably, as JAX's `nn.log1mexp` (undefined for `x < 0`)."""
    x = asarray("log1mexp", x)
    if x.dtype == np.bool_:
        raise TypeError("mjcore.nn.log1mexp: bool input is not supported; use x.astype(float)")
    (x,) = promote_inexact("log1mexp", x)
    return _log1mexp(x)
