"""Neural-network layers as `(init_fun, apply_fun)` pairs, with JAX's
`jax.example_libraries.stax` API: `init_fun(rng, input_shape) -> (output_shape, params)`,
`apply_fun(params, inputs, **kwargs) -> outputs`. Combinators (`serial`, `parallel`,
`FanOut`, ...) build networks from layers. Weights are drawn as JAX's (same key, same
initializers), so a network initialises to JAX's exact parameters.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

import mjnp
from mjcore import lax, random
from mjcore.nn import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)
from mjcore.nn.initializers import glorot_normal, normal, ones, zeros

Layer = tuple[Callable[..., Any], Callable[..., Any]]

# JAX's aliases.
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax

# Default initializers (module-level, as the defaults are shared objects in JAX too).
_GLOROT_NORMAL = glorot_normal()
_NORMAL = normal()
_NORMAL_TINY = normal(1e-6)


def Dense(out_dim: int, W_init: Any = _GLOROT_NORMAL, b_init: Any = _NORMAL) -> Layer:  # noqa: N802, N803  (JAX's names)
    """Fully connected layer: `inputs @ W + b`."""

    def init_fun(rng: Any, input_shape: tuple[int, ...]) -> tuple[Any, Any]:
        output_shape = (*input_shape[:-1], out_dim)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params  # noqa: N806
        return mjnp.dot(inputs, W) + b

    return init_fun, apply_fun


def GeneralConv(  # noqa: N802  (JAX's name)
    dimension_numbers: tuple[str, str, str],
    out_chan: int,
    filter_shape: tuple[int, ...],
    strides: tuple[int, ...] | None = None,
    padding: Any = "VALID",
    W_init: Any = None,  # noqa: N803
    b_init: Any = _NORMAL_TINY,
) -> Layer:
    """Convolution layer with the layouts of `dimension_numbers` (lhs, rhs, out specs)."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))  # noqa: N806

    def init_fun(rng: Any, input_shape: tuple[int, ...]) -> tuple[Any, Any]:
        spatial = iter(filter_shape)
        kernel_shape = [
            out_chan
            if c == "O"
            else input_shape[lhs_spec.index("C")]
            if c == "I"
            else next(spatial)
            for c in rhs_spec
        ]
        output_shape = lax.conv_general_shape_tuple(
            input_shape, kernel_shape, strides, padding, dimension_numbers
        )
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params  # noqa: N806
        out = lax.conv_general_dilated(
            inputs, W, strides, padding, one, one, dimension_numbers=dimension_numbers
        )
        return out + b

    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(  # noqa: N802  (JAX's name)
    dimension_numbers: tuple[str, str, str],
    out_chan: int,
    filter_shape: tuple[int, ...],
    strides: tuple[int, ...] | None = None,
    padding: Any = "VALID",
    W_init: Any = None,  # noqa: N803
    b_init: Any = _NORMAL_TINY,
) -> Layer:
    """Transposed convolution layer with the layouts of `dimension_numbers`."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))  # noqa: N806

    def init_fun(rng: Any, input_shape: tuple[int, ...]) -> tuple[Any, Any]:
        spatial = iter(filter_shape)
        kernel_shape = [
            out_chan
            if c == "O"
            else input_shape[lhs_spec.index("C")]
            if c == "I"
            else next(spatial)
            for c in rhs_spec
        ]
        output_shape = lax.conv_transpose_shape_tuple(
            input_shape, kernel_shape, strides, padding, dimension_numbers
        )
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params  # noqa: N806
        out = lax.conv_transpose(inputs, W, strides, padding, dimension_numbers=dimension_numbers)
        return out + b

    return init_fun, apply_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(  # noqa: N802  (JAX's name)
    axis: Any = (0, 1, 2),
    epsilon: float = 1e-5,
    center: bool = True,
    scale: bool = True,
    beta_init: Any = zeros,
    gamma_init: Any = ones,
) -> Layer:
    """Batch normalization over `axis` (statistics of the batch itself; no running averages),
    with learned shift `beta` (`center`) and scale `gamma` (`scale`)."""
    axis = (axis,) if np.isscalar(axis) else tuple(axis)

    def init_fun(rng: Any, input_shape: tuple[int, ...]) -> tuple[Any, Any]:
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params: Any, x: Any, **kwargs: Any) -> Any:
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(mjnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[ed] * z + beta[ed]
        if center:
            return z + beta[ed]
        if scale:
            return gamma[ed] * z
        return z

    return init_fun, apply_fun


def elementwise(fun: Callable[..., Any], **fun_kwargs: Any) -> Layer:
    """A parameterless layer applying `fun(inputs, **fun_kwargs)`."""

    def init_fun(rng: Any, input_shape: tuple[int, ...]) -> tuple[Any, Any]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(mjnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(mjnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pooling_layer(
    reducer: Callable[[Any, Any], Any], init_val: float, rescaler: Any = None
) -> Callable[..., Layer]:
    def PoolingLayer(  # noqa: N802  (JAX's name)
        window_shape: tuple[int, ...],
        strides: tuple[int, ...] | None = None,
        padding: Any = "VALID",
        spec: str | None = None,
    ) -> Layer:
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        non_spatial = (
            (0, len(window_shape) + 1) if spec is None else (spec.index("N"), spec.index("C"))
        )
        for i in sorted(non_spatial):
            window_shape = (*window_shape[:i], 1, *window_shape[i:])
            strides = (*strides[:i], 1, *strides[i:])

        def init_fun(rng: Any, input_shape: tuple[int, ...]) -> tuple[Any, Any]:
            pads = lax.padtype_to_pads(input_shape, window_shape, strides, padding)
            ones_ = (1,) * len(window_shape)
            out_shape = lax.reduce_window_shape_tuple(
                input_shape, window_shape, strides, pads, ones_, ones_
            )
            return out_shape, ()

        def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
            out = lax.reduce_window(inputs, init_val, reducer, window_shape, strides, padding)
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun

    return PoolingLayer


def _normalize_by_window_size(
    dims: tuple[int, ...], strides: tuple[int, ...], padding: Any
) -> Callable[..., Any]:
    def rescale(outputs: Any, inputs: Any, spec: str | None) -> Any:
        non_spatial = (0, inputs.ndim - 1) if spec is None else (spec.index("N"), spec.index("C"))
        spatial_shape = tuple(inputs.shape[i] for i in range(inputs.ndim) if i not in non_spatial)
        window_sizes = lax.reduce_window(
            mjnp.ones(spatial_shape, dtype=inputs.dtype), 0.0, lax.add, dims, strides, padding
        )
        for i in sorted(non_spatial):
            window_sizes = mjnp.expand_dims(window_sizes, i)
        return outputs / window_sizes

    return rescale


MaxPool = _pooling_layer(lax.max, -np.inf)
SumPool = _pooling_layer(lax.add, 0.0)
AvgPool = _pooling_layer(lax.add, 0.0, _normalize_by_window_size)


def _flatten() -> Layer:
    def init_fun(rng: Any, input_shape: tuple[int, ...]) -> tuple[Any, Any]:
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return mjnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = _flatten()  # a layer, as in JAX (not a constructor)


def _identity() -> Layer:
    def init_fun(rng: Any, input_shape: tuple[int, ...]) -> tuple[Any, Any]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return inputs

    return init_fun, apply_fun


Identity = _identity()


def FanOut(num: int) -> Layer:  # noqa: N802  (JAX's name)
    """Copies its input `num` times (for `parallel`)."""

    def init_fun(rng: Any, input_shape: tuple[int, ...]) -> tuple[Any, Any]:
        return [input_shape] * num, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return [inputs] * num

    return init_fun, apply_fun


def _fan_in_sum() -> Layer:
    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        return input_shape[0], ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return sum(inputs)

    return init_fun, apply_fun


FanInSum = _fan_in_sum()


def FanInConcat(axis: int = -1) -> Layer:  # noqa: N802  (JAX's name)
    """Concatenates its inputs along `axis`."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        first = input_shape[0]
        return (*first[:ax], size, *first[ax + 1 :]), ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return mjnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate: float, mode: str = "train") -> Layer:  # noqa: N802  (JAX's name)
    """Dropout, as JAX's stax: in 'train' mode keeps each input with probability `rate` (NB:
    `rate` is the keep probability, as in JAX) and scales kept ones by `1 / rate`; needs
    `apply_fun(params, inputs, rng=key)`."""

    def init_fun(rng: Any, input_shape: tuple[int, ...]) -> tuple[Any, Any]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.get("rng")
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. That "
                "is, instead of `apply_fun(params, inputs)`, call it like "
                "`apply_fun(params, inputs, rng=key)` where `key` is a PRNG key (e.g. from "
                "`mjcore.random.key`)."
            )
        if mode == "train":
            keep = random.bernoulli(rng, rate, inputs.shape)
            return mjnp.where(keep, inputs / rate, 0)
        return inputs

    return init_fun, apply_fun


def serial(*layers: Layer) -> Layer:
    """The layers one after another; each gets its own split of the key."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers, strict=True)

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        for fun, param, layer_rng in zip(apply_funs, params, rngs, strict=True):
            inputs = fun(param, inputs, rng=layer_rng, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """The layers side by side, the k-th applied to the k-th of a sequence of inputs (use
    with `FanOut` and `FanInSum`/`FanInConcat`)."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers, strict=True)

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        rngs = random.split(rng, nlayers)
        results = [init(r, s) for init, r, s in zip(init_funs, rngs, input_shape, strict=True)]
        return tuple(s for s, _ in results), tuple(p for _, p in results)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        return [
            f(p, x, rng=r, **kwargs)
            for f, p, x, r in zip(apply_funs, params, inputs, rngs, strict=True)
        ]

    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[Any], Layer]) -> Layer:
    """A layer built from the input shape by `make_layer(input_shape)`."""

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, Any]:
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun


__all__ = [
    "AvgPool",
    "BatchNorm",
    "Conv",
    "Conv1DTranspose",
    "ConvTranspose",
    "Dense",
    "Dropout",
    "Elu",
    "Exp",
    "FanInConcat",
    "FanInSum",
    "FanOut",
    "Flatten",
    "Gelu",
    "GeneralConv",
    "GeneralConvTranspose",
    "Identity",
    "LeakyRelu",
    "LogSoftmax",
    "MaxPool",
    "Relu",
    "Selu",
    "Sigmoid",
    "Softmax",
    "Softplus",
    "SumPool",
    "Tanh",
    "elementwise",
    "glorot",
    "logsoftmax",
    "parallel",
    "randn",
    "serial",
    "shape_dependent",
]
