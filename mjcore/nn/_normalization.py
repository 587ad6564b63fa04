"""Reductions over an axis from JAX's `nn` namespace: softmax, log_softmax, logsumexp,
logmeanexp and standardize.

Each subtracts the maximum before exponentiating so large inputs do not overflow. The maximum
is a constant to differentiation (a `stop_gradient`, or `softmax`'s custom JVP, as in JAX), so
the gradient does not flow through the argmax and stays finite where all inputs are equal.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal, overload

import numpy as np

import mjnp
from mjcore import lax
from mjcore.array import Array
from mjcore.custom_derivatives import custom_jvp
from mjcore.nn._arrays import asarray, jax_inexact_dtype, promote_inexact, reduction_axes

ArrayLike = Any
Axis = int | tuple[int, ...] | None


def _float_input(fname: str, x: ArrayLike, allow_bool: bool = False) -> Array:
    """`x` in JAX's float dtype for it; bool is refused unless `allow_bool` (JAX subtracts
    bools for a maximum in softmax and log_softmax, and cannot)."""
    x = asarray(fname, x)
    if x.dtype == np.bool_ and not allow_bool:
        raise TypeError(f"mjcore.nn.{fname}: bool input is not supported; use x.astype(float)")
    return lax.convert_element_type(x, jax_inexact_dtype(x.dtype), x.weak_type)


def _mask(where: ArrayLike | None) -> ArrayLike:
    return True if where is None else where


def log_softmax(x: ArrayLike, axis: Axis = -1, where: ArrayLike | None = None) -> Array:
    """`x - logsumexp(x, axis, keepdims=True)`, as JAX's `nn.log_softmax`.

    Args:
      x: the logits.
      axis: an int, a tuple of ints, or None for all axes.
      where: optional mask of the elements to include; masked-out outputs are -inf.

    An input of +inf makes the whole slice NaN, as in JAX.
    """
    x = _float_input("log_softmax", x)
    axes = reduction_axes("log_softmax", axis, x.ndim)
    x_max = mjnp.max(x, axes, where=_mask(where), initial=-np.inf, keepdims=True)
    x_safe = x if where is None else mjnp.where(where, x, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    shifted_logsumexp = mjnp.log(
        mjnp.sum(mjnp.exp(shifted), axes, where=_mask(where), keepdims=True)
    )
    result = shifted - shifted_logsumexp
    if where is not None:
        return mjnp.where(where, result, -np.inf)
    return result


# The axes and the mask are not differentiated (the mask may still be a tracer, e.g. under vmap).
@partial(custom_jvp, nondiff_argnums=(1, 2))
def _softmax(x: Array, axes: tuple[int, ...], where: ArrayLike | None) -> Array:
    mask = _mask(where)
    x_max = mjnp.max(x, axes, where=mask, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else mjnp.where(where, x, -np.inf)
    unnormalized = mjnp.exp(x_safe - x_max)
    result = unnormalized / mjnp.sum(unnormalized, axes, where=mask, keepdims=True)
    if where is not None:
        result = mjnp.where(where, result, 0)
    return result


@_softmax.defjvp
def _softmax_jvp(axes, where, primals, tangents):
    (x,), (x_dot,) = primals, tangents
    y = _softmax(x, axes, where)
    return y, y * (x_dot - mjnp.sum(y * x_dot, axes, where=_mask(where), keepdims=True))


def softmax(x: ArrayLike, axis: Axis = -1, where: ArrayLike | None = None) -> Array:
    """`exp(x) / sum(exp(x), axis)`, computed stably, as JAX's `nn.softmax`.

    Args:
      x: the logits.
      axis: an int, a tuple of ints, or None for all axes; the outputs sum to 1 over them.
      where: optional mask of the elements to include; masked-out outputs are 0.

    Differentiated by its own JVP `y * (x_dot - sum(y * x_dot))`, as in JAX, so the gradient
    does not pass through the subtracted maximum. An input of +inf makes the slice NaN.
    """
    x = _float_input("softmax", x)
    axes = reduction_axes("softmax", axis, x.ndim)
    return _softmax(x, axes, where)


@overload
def logsumexp(
    a: ArrayLike,
    axis: Axis = None,
    b: ArrayLike | None = None,
    keepdims: bool = False,
    return_sign: Literal[False] = False,
    where: ArrayLike | None = None,
) -> Array: ...
@overload
def logsumexp(
    a: ArrayLike,
    axis: Axis = None,
    b: ArrayLike | None = None,
    keepdims: bool = False,
    *,
    return_sign: Literal[True],
    where: ArrayLike | None = None,
) -> tuple[Array, Array]: ...
@overload
def logsumexp(
    a: ArrayLike,
    axis: Axis = None,
    b: ArrayLike | None = None,
    keepdims: bool = False,
    return_sign: bool = False,
    where: ArrayLike | None = None,
) -> Array | tuple[Array, Array]: ...


def logsumexp(
    a: ArrayLike,
    axis: Axis = None,
    b: ArrayLike | None = None,
    keepdims: bool = False,
    return_sign: bool = False,
    where: ArrayLike | None = None,
) -> Array | tuple[Array, Array]:
    """`log(sum(b * exp(a), axis))`, computed stably, as JAX's `nn.logsumexp`.

    Args:
      a: the input.
      axis: an int, a tuple of ints, or None (the default) for all axes.
      b: optional scale factors, broadcastable to `a`'s shape; a zero excludes its element.
      keepdims: keep the reduced axes with size 1.
      return_sign: also return the sign of the sum, and the log of its absolute value.
      where: optional mask of the elements to include.

    Returns:
      The result, or `(result, sign)` with `return_sign=True`. Without `return_sign`, a negative
      sum gives NaN.
    """
    if where is not None:
        a = mjnp.where(where, asarray("logsumexp", a), 0)
    if b is not None:
        a, b = promote_inexact("logsumexp", a, b)
        a = mjnp.where(b != 0, a, -np.inf)
    else:
        (a,) = promote_inexact("logsumexp", a)
    axes = reduction_axes("logsumexp", axis, a.ndim)
    real = mjnp.real(a) if a.dtype.kind == "c" else a
    amax = mjnp.max(real, axes, keepdims=keepdims, where=_mask(where), initial=-np.inf)
    # A non-finite maximum (all -inf, or an inf) is not subtracted: the sum then gives the
    # right inf, -inf or NaN by itself.
    amax = lax.stop_gradient(mjnp.where(mjnp.isfinite(amax), amax, 0))
    amax_with_dims = amax if keepdims else mjnp.expand_dims(amax, axes)
    exp_a = mjnp.exp(a - amax_with_dims.astype(a.dtype))
    if b is not None:
        exp_a = exp_a * b
    sumexp = mjnp.sum(exp_a, axes, keepdims=keepdims, where=_mask(where))
    sign = mjnp.sign(sumexp)
    if return_sign or a.dtype.kind != "c":
        sumexp = mjnp.abs(sumexp)
    out = mjnp.log(sumexp) + amax.astype(sumexp.dtype)
    if return_sign:
        return out, sign
    if b is not None and out.dtype.kind != "c":
        out = mjnp.where(sign < 0, np.asarray(np.nan, out.dtype), out)
    return out


def logmeanexp(
    x: ArrayLike,
    axis: Axis = None,
    where: ArrayLike | None = None,
    keepdims: bool = False,
) -> Array:
    """`logsumexp(x, axis) - log(n)`, the log of the mean of `exp(x)`, as JAX's
    `nn.logmeanexp`; `n` counts the elements reduced (those where `where` is true)."""
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    x = asarray("logmeanexp", x)
    axes = reduction_axes("logmeanexp", axis, x.ndim)
    ones = mjnp.ones(x.shape, lse.dtype)
    count = mjnp.sum(ones, axes, where=_mask(where), keepdims=keepdims)
    return lse - mjnp.log(count)


def standardize(
    x: ArrayLike,
    axis: Axis = -1,
    mean: ArrayLike | None = None,
    variance: ArrayLike | None = None,
    epsilon: ArrayLike = 1e-5,
    where: ArrayLike | None = None,
    *,
    algorithm: str = "fast",
) -> Array:
    """`(x - mean) / sqrt(variance + epsilon)` over `axis`, as JAX's `nn.standardize`.

    Args:
      x: the input.
      axis: an int, a tuple of ints, or None for all axes (default: the last).
      mean, variance: used instead of the statistics of `x` when given.
      epsilon: added to the variance.
      where: optional mask of the elements the statistics use.
      algorithm: how the variance is computed: `"fast"` as `mean(x**2) - mean(x)**2`
        (clipped at 0), `"stable"` as `mean((x - mean(x))**2)`.

    Raises:
      ValueError: for an unknown `algorithm`.
    """
    if algorithm not in ("fast", "stable"):
        raise ValueError(
            f"mjcore.nn.standardize: unknown algorithm {algorithm!r}; expected 'fast' or 'stable'"
        )
    x = _float_input("standardize", x, allow_bool=True)
    mean = None if mean is None else asarray("standardize", mean)
    variance = None if variance is None else asarray("standardize", variance)
    axes = reduction_axes("standardize", axis, x.ndim)
    mask = _mask(where)
    if mean is None:
        mean = mjnp.mean(x, axes, keepdims=True, where=mask)
    if variance is None:
        if algorithm == "stable":
            variance = mjnp.mean(mjnp.square(x - mean), axes, keepdims=True, where=mask)
        else:
            variance = mjnp.mean(mjnp.square(x), axes, keepdims=True, where=mask)
            # The one-pass formula can go slightly negative; rsqrt must not see that.
            variance = mjnp.maximum(variance - mjnp.square(mean), 0)
    return (x - mean) * lax.rsqrt(variance + epsilon)
