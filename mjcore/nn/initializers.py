"""Weight initializers, as JAX's `nn.initializers`: each builder returns a function
`init(key, shape, dtype)` drawing from `mjcore.random`, which follows JAX's threefry bit for bit,
so the same key gives JAX's weights.

NB: the default dtype is this project's default float, float64 (JAX's with x64 enabled).
`out_sharding` is accepted for JAX's signature; only None is supported (one device).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

import mjnp
from mjcore import dtypes, random
from mjcore.array import Array

ArrayLike = Any
DTypeLike = Any
Axes = int | Sequence[int]

__all__ = [
    "Initializer",
    "constant",
    "delta_orthogonal",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "kaiming_normal",
    "kaiming_uniform",
    "lecun_normal",
    "lecun_uniform",
    "normal",
    "ones",
    "orthogonal",
    "truncated_normal",
    "uniform",
    "variance_scaling",
    "xavier_normal",
    "xavier_uniform",
    "zeros",
]

_FNAME = "mjcore.nn.initializers"
# The standard deviation of a standard normal truncated to (-2, 2), and of a standard complex
# normal with its modulus truncated at 2: variance_scaling divides them out.
_TRUNCATED_STDDEV = 0.87962566103423978
_COMPLEX_TRUNCATED_STDDEV = 0.95311164380491208


@runtime_checkable
class Initializer(Protocol):
    """What every builder here returns: `init(key, shape, dtype=None, out_sharding=None)`."""

    def __call__(
        self, key: Any, shape: Sequence[int], dtype: DTypeLike = None, out_sharding: Any = None
    ) -> Array: ...


def _dtype(name: str, dtype: DTypeLike) -> np.dtype:
    return dtypes.canonicalize_dtype(float if dtype is None else dtype, f"{_FNAME}.{name}")


def _check_sharding(name: str, out_sharding: Any) -> None:
    if out_sharding is not None:
        raise NotImplementedError(
            f"{_FNAME}.{name}: out_sharding is not supported (mjcore runs on one device); "
            f"got {out_sharding!r}"
        )


def _shape(name: str, shape: Any) -> tuple[int, ...]:
    items = (shape,) if isinstance(shape, int | np.integer) else shape
    try:
        return tuple(operator.index(d) for d in items)
    except TypeError as err:
        raise TypeError(
            f"{_FNAME}.{name}: shape must be a sequence of ints, got {shape!r}"
        ) from err


def zeros(
    key: Any, shape: Sequence[int], dtype: DTypeLike = None, out_sharding: Any = None
) -> Array:
    """An array of zeros; `key` is ignored."""
    _check_sharding("zeros", out_sharding)
    return mjnp.zeros(_shape("zeros", shape), _dtype("zeros", dtype))


def ones(
    key: Any, shape: Sequence[int], dtype: DTypeLike = None, out_sharding: Any = None
) -> Array:
    """An array of ones; `key` is ignored."""
    _check_sharding("ones", out_sharding)
    return mjnp.ones(_shape("ones", shape), _dtype("ones", dtype))


def constant(value: ArrayLike, dtype: DTypeLike = None) -> Initializer:
    """An initializer of arrays full of `value` (`dtype` is the initializer's default)."""

    def init(
        key: Any, shape: Sequence[int], dtype: DTypeLike = dtype, out_sharding: Any = None
    ) -> Array:
        _check_sharding("constant", out_sharding)
        return mjnp.full(_shape("constant", shape), value, _dtype("constant", dtype))

    return init


def uniform(scale: ArrayLike = 1e-2, dtype: DTypeLike = None) -> Initializer:
    """An initializer of uniform draws in `[0, scale)`."""

    def init(
        key: Any, shape: Sequence[int], dtype: DTypeLike = dtype, out_sharding: Any = None
    ) -> Array:
        _check_sharding("uniform", out_sharding)
        dtype = _dtype("uniform", dtype)
        return random.uniform(key, shape, dtype) * mjnp.asarray(scale, dtype)

    return init


def normal(stddev: ArrayLike = 1e-2, dtype: DTypeLike = None) -> Initializer:
    """An initializer of normal draws with mean 0 and standard deviation `stddev`."""

    def init(
        key: Any, shape: Sequence[int], dtype: DTypeLike = dtype, out_sharding: Any = None
    ) -> Array:
        _check_sharding("normal", out_sharding)
        dtype = _dtype("normal", dtype)
        return random.normal(key, shape, dtype) * mjnp.asarray(stddev, dtype)

    return init


def truncated_normal(
    stddev: ArrayLike = 1e-2,
    dtype: DTypeLike = None,
    lower: ArrayLike = -2.0,
    upper: ArrayLike = 2.0,
) -> Initializer:
    """An initializer of standard normal draws truncated to `(lower, upper)`, then multiplied by
    `stddev` (which is not corrected for the truncation)."""

    def init(
        key: Any, shape: Sequence[int], dtype: DTypeLike = dtype, out_sharding: Any = None
    ) -> Array:
        _check_sharding("truncated_normal", out_sharding)
        dtype = _dtype("truncated_normal", dtype)
        draws = random.truncated_normal(key, lower, upper, shape, dtype)
        return draws * mjnp.asarray(stddev, dtype)

    return init


def _axes_size(name: str, shape: tuple[int, ...], axes: Axes, what: str) -> int:
    items = (axes,) if isinstance(axes, int | np.integer) else tuple(axes)
    size = 1
    for ax in items:
        if not -len(shape) <= ax < len(shape):
            raise ValueError(f"{_FNAME}.{name}: {what} {axes!r} is out of range for shape {shape}")
        size *= shape[ax]
    return size


def _compute_fans(
    name: str, shape: tuple[int, ...], in_axis: Axes, out_axis: Axes, batch_axis: Axes
) -> tuple[float, float]:
    """Effective input and output sizes; axes in none of the three are a convolution's
    receptive field and multiply both."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(
            f"{_FNAME}.{name}: cannot compute fan-in and fan-out of a {len(shape)}-d shape "
            f"{shape} with the default in_axis=-2; pass in_axis explicitly or use a 2-d shape"
        )
    in_size = _axes_size(name, shape, in_axis, "in_axis")
    out_size = _axes_size(name, shape, out_axis, "out_axis")
    batch_size = _axes_size(name, shape, batch_axis, "batch_axis")
    if in_size * out_size * batch_size == 0:
        raise ValueError(f"{_FNAME}.{name}: cannot compute fans of the empty shape {shape}")
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return dtypes.finfo(dtype).dtype


def _complex_uniform(key: Any, shape: Sequence[int], dtype: np.dtype) -> Array:
    """Uniform draws on a disk in the complex plane, with mean 0 and variance 1."""
    key_r, key_theta = random.split(key)
    real = _real_dtype(dtype)
    r = mjnp.sqrt(2 * random.uniform(key_r, shape, real)).astype(dtype)
    theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(dtype)
    return r * mjnp.exp(1j * theta)


def _complex_truncated_normal(
    key: Any, upper: float, shape: Sequence[int], dtype: np.dtype
) -> Array:
    """Complex normal draws of variance 1 before their modulus is truncated at `upper`."""
    key_r, key_theta = random.split(key)
    real = _real_dtype(dtype)
    t = (1 - mjnp.exp(mjnp.asarray(-(upper**2), dtype))) * random.uniform(
        key_r, shape, real
    ).astype(dtype)
    r = mjnp.sqrt(-mjnp.log(1 - t))
    theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(dtype)
    return r * mjnp.exp(1j * theta)


_MODES = ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")
_DISTRIBUTIONS = ("truncated_normal", "normal", "uniform")


def variance_scaling(
    scale: ArrayLike,
    mode: str,
    distribution: str,
    in_axis: Axes = -2,
    out_axis: Axes = -1,
    batch_axis: Axes = (),
    dtype: DTypeLike = None,
) -> Initializer:
    """An initializer whose standard deviation is `sqrt(scale / n)`, as JAX's
    `nn.initializers.variance_scaling`.

    Args:
      scale: the variance factor (positive).
      mode: what `n` is: `"fan_in"`, `"fan_out"`, `"fan_avg"` (their mean) or `"fan_geo_avg"`
        (their geometric mean). Fans multiply the sizes of `in_axis` (or `out_axis`) by those
        of the axes in neither nor `batch_axis` (a convolution's receptive field).
      distribution: `"truncated_normal"` (at 2 standard deviations, rescaled to keep the
        variance), `"normal"`, or `"uniform"` (on an interval, or a disk for complex dtypes).
      in_axis, out_axis, batch_axis: an axis or a sequence of axes of the weight shape.
      dtype: the initializer's default dtype.

    Raises:
      ValueError: for an unknown `mode` or `distribution` (when the initializer is called, as
        in JAX), or a shape the fans cannot be computed for.
    """

    def init(
        key: Any, shape: Sequence[int], dtype: DTypeLike = dtype, out_sharding: Any = None
    ) -> Array:
        _check_sharding("variance_scaling", out_sharding)
        shape = _shape("variance_scaling", shape)
        dtype = _dtype("variance_scaling", dtype)
        fan_in, fan_out = _compute_fans("variance_scaling", shape, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denominator = fan_in
        elif mode == "fan_out":
            denominator = fan_out
        elif mode == "fan_avg":
            denominator = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denominator = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(
                f"{_FNAME}.variance_scaling: invalid mode {mode!r}; expected one of {_MODES}"
            )
        variance = mjnp.asarray(scale / denominator, dtype)
        complex_ = dtype.kind == "c"
        if distribution == "truncated_normal":
            if complex_:
                stddev = mjnp.sqrt(variance) / mjnp.asarray(_COMPLEX_TRUNCATED_STDDEV, dtype)
                return _complex_truncated_normal(key, 2, shape, dtype) * stddev
            stddev = mjnp.sqrt(variance) / mjnp.asarray(_TRUNCATED_STDDEV, dtype)
            return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * mjnp.sqrt(variance)
        if distribution == "uniform":
            if complex_:
                return _complex_uniform(key, shape, dtype) * mjnp.sqrt(variance)
            return random.uniform(key, shape, dtype, -1) * mjnp.sqrt(3 * variance)
        raise ValueError(
            f"{_FNAME}.variance_scaling: invalid distribution {distribution!r}; expected one of "
            f"{_DISTRIBUTIONS}"
        )

    return init


def glorot_uniform(
    in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: DTypeLike = None
) -> Initializer:
    """Glorot (Xavier) uniform: `variance_scaling(1.0, "fan_avg", "uniform")`."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def glorot_normal(
    in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: DTypeLike = None
) -> Initializer:
    """Glorot (Xavier) normal: `variance_scaling(1.0, "fan_avg", "truncated_normal")`."""
    return variance_scaling(
        1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis, dtype
    )


def lecun_uniform(
    in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: DTypeLike = None
) -> Initializer:
    """LeCun uniform: `variance_scaling(1.0, "fan_in", "uniform")`."""
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(
    in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: DTypeLike = None
) -> Initializer:
    """LeCun normal: `variance_scaling(1.0, "fan_in", "truncated_normal")`."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


def he_uniform(
    in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: DTypeLike = None
) -> Initializer:
    """He (Kaiming) uniform: `variance_scaling(2.0, "fan_in", "uniform")`."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(
    in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: DTypeLike = None
) -> Initializer:
    """He (Kaiming) normal: `variance_scaling(2.0, "fan_in", "truncated_normal")`."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def orthogonal(
    scale: ArrayLike = 1.0, column_axis: int = -1, dtype: DTypeLike = None
) -> Initializer:
    """An initializer of `scale` times a uniformly random matrix with orthonormal columns
    along `column_axis` (or orthonormal rows, if they are fewer), the other axes flattened
    into rows.

    Raises:
      ValueError: when called with a shape of fewer than 2 dimensions.
    """

    def init(
        key: Any, shape: Sequence[int], dtype: DTypeLike = dtype, out_sharding: Any = None
    ) -> Array:
        _check_sharding("orthogonal", out_sharding)
        shape = _shape("orthogonal", shape)
        dtype = _dtype("orthogonal", dtype)
        if len(shape) < 2:
            raise ValueError(
                f"{_FNAME}.orthogonal: requires a shape of at least 2 dimensions, got {shape}"
            )
        if not -len(shape) <= column_axis < len(shape):
            raise ValueError(
                f"{_FNAME}.orthogonal: column_axis {column_axis} is out of range for shape {shape}"
            )
        if 0 in shape:
            return mjnp.zeros(shape, dtype)
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        q = random.orthogonal(key, n_rows, (), dtype, n_cols)
        rest = tuple(np.delete(np.asarray(shape), column_axis).tolist())
        q = mjnp.moveaxis(mjnp.reshape(q, rest + (n_cols,)), -1, column_axis)
        return mjnp.asarray(scale, dtype) * q

    return init


def delta_orthogonal(
    scale: ArrayLike = 1.0, column_axis: int = -1, dtype: DTypeLike = None
) -> Initializer:
    """An initializer of delta-orthogonal convolution kernels (Xiao et al., 2018): zero but
    for an `orthogonal` matrix at the spatial centre.

    Raises:
      ValueError: when called with a shape that is not 3-, 4- or 5-d, or whose last axis
        (fan-out) is smaller than the one before (fan-in).
    """

    def init(
        key: Any, shape: Sequence[int], dtype: DTypeLike = dtype, out_sharding: Any = None
    ) -> Array:
        _check_sharding("delta_orthogonal", out_sharding)
        shape = _shape("delta_orthogonal", shape)
        dtype = _dtype("delta_orthogonal", dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError(
                f"{_FNAME}.delta_orthogonal: requires a 3-, 4- or 5-d shape, got {shape}"
            )
        if shape[-1] < shape[-2]:
            raise ValueError(
                f"{_FNAME}.delta_orthogonal: fan_in (shape[-2] = {shape[-2]}) must be at most "
                f"fan_out (shape[-1] = {shape[-1]})"
            )
        matrix = orthogonal(scale, column_axis, dtype)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return mjnp.zeros(shape, dtype).at[centre].set(matrix)

    return init
