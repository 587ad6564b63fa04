"""Autodidax Part 1's primitives composed into a counter-based PRNG: JAX's `jax.random` with
threefry2x32 keys, drawing the same bits as JAX (with `jax_enable_x64`). Keys are raw
`uint32[2]` arrays (`PRNGKey`) or typed key arrays (`key`, `wrap_key_data`; see
`mjcore.random_keys`); every function takes both.

A key is data, not state: `split` and `fold_in` derive new keys and every sampler is a pure
function of its key, so all of them work under `jit`, `vmap` (over keys), `grad` and `scan`.
Bits follow JAX's default `jax_threefry_partitionable` scheme: element `i` of a draw of shape
`shape` hashes the 64-bit counter `i` (as two 32-bit words) with the key.

Every sampler of `jax.random` follows JAX's own sequence of key splits and bit draws, so the
same key gives the same values: transforms of uniform and normal draws (exponential, gumbel,
laplace, logistic, cauchy, ...), Gumbel-max `categorical`, `multivariate_normal` and
`orthogonal` through mjcore's linalg, and the rejection samplers (`gamma` and everything built
on it, `poisson`, `binomial`) as while_loops with JAX's exact key usage. `gamma` is
differentiable in its shape parameter by implicit reparameterisation, as in JAX.

NB: default dtypes are this project's (float64, int64, uint64), i.e. JAX's with x64 enabled.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from mjcore import dtypes, lax
from mjcore.api import vmap
from mjcore.array import Array
from mjcore.backend.lowering import lower_fun
from mjcore.batching import NOT_MAPPED, moveaxis_to
from mjcore.control_flow import fori_loop, scan, while_loop
from mjcore.core import Primitive, ShapedArray, Tracer, get_aval
from mjcore.jit import jit
from mjcore.lax.base import _check_shape as check_shape
from mjcore.lax.gather import GatherDimensionNumbers
from mjcore.random_keys import KeyArray, key_data, key_impl, wrap_key_data

__all__ = [
    "KeyArray",
    "PRNGKey",
    "ball",
    "bernoulli",
    "beta",
    "binomial",
    "bits",
    "categorical",
    "cauchy",
    "chisquare",
    "choice",
    "clone",
    "dirichlet",
    "double_sided_maxwell",
    "exponential",
    "f",
    "fold_in",
    "gamma",
    "generalized_normal",
    "geometric",
    "gumbel",
    "key",
    "key_data",
    "key_impl",
    "laplace",
    "loggamma",
    "logistic",
    "lognormal",
    "maxwell",
    "multinomial",
    "multivariate_normal",
    "normal",
    "orthogonal",
    "pareto",
    "permutation",
    "poisson",
    "rademacher",
    "randint",
    "rayleigh",
    "split",
    "t",
    "triangular",
    "truncated_normal",
    "uniform",
    "wald",
    "weibull_min",
    "wrap_key_data",
]

ArrayLike = Any
Shape = tuple[int, ...]

_U32 = np.dtype("uint32")
_U64 = np.dtype("uint64")
_I64 = np.dtype("int64")
_F32_ONE = np.float32(1)  # lognormal's default sigma, as JAX's


def _const(value: Any, dtype: np.dtype) -> Any:
    return lax.full((), value, dtype)


def _as_array(x: Any) -> Any:
    """Arrays and tracers as they are; anything else through NumPy (so it has an aval)."""
    return x if isinstance(x, Array | Tracer) else np.asarray(x)


def _shape_of(name: str, shape: Any) -> Shape:
    """`shape` as a tuple; an int is a 1-d shape, as JAX takes it."""
    if isinstance(shape, int | np.integer):
        shape = (shape,)
    return check_shape(f"mjcore.random.{name}", shape)


def _check_param_shapes(name: str, shape: Shape, *params: Any) -> None:
    """Parameters broadcast to `shape` without changing it (JAX's rule for sampler arguments)."""
    for p in params:
        pshape = get_aval(p).shape
        ok = len(pshape) <= len(shape) and all(
            d in (1, s) for d, s in zip(pshape, shape[len(shape) - len(pshape) :], strict=True)
        )
        if not ok:
            raise ValueError(
                f"{name}: parameter shapes must broadcast to the shape argument {shape}, "
                f"got a parameter of shape {pshape}"
            )


def _float_dtype(name: str, dtype: Any, kinds: str = "f") -> np.dtype:
    dtype = dtypes.canonicalize_dtype(float if dtype is None else dtype, name)
    if dtypes.kind(dtype) not in kinds:
        what = "a float" if kinds == "f" else "a float or complex"
        raise ValueError(f"{name}: dtype must be {what} dtype, got {dtype.name}")
    return dtype


# --- the threefry2x32 hash ------------------------------------------------------------------

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KEY_PARITY = 0x1BD11BDA  # Threefish's key-schedule constant


def _rotate_left(x: Any, r: int) -> Any:
    return lax.bitwise_or(
        lax.shift_left(x, _const(r, _U32)), lax.shift_right_logical(x, _const(32 - r, _U32))
    )


def _threefry_group(x1: Any, x2: Any, schedule: tuple, rotations: tuple, count: Any) -> tuple:
    """Four mix rounds, then a key injection; the schedule rotates for the next group."""
    for r in rotations:
        x1 = lax.add(x1, x2)
        x2 = lax.bitwise_xor(x1, _rotate_left(x2, r))
    s0, s1, s2 = schedule
    x1 = lax.add(x1, s1)
    x2 = lax.add(lax.add(x2, s2), count)
    return x1, x2, (s1, s2, s0)


def _threefry2x32(k1: Any, k2: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """Threefry-2x32 with 20 rounds (Salmon et al., 2011) of the counter words `x1`, `x2`
    under the key words `k1`, `k2`; elementwise, uint32 arithmetic wraps."""
    schedule = (k1, k2, lax.bitwise_xor(lax.bitwise_xor(k1, k2), _const(_KEY_PARITY, _U32)))
    x1, x2 = lax.add(x1, k1), lax.add(x2, k2)

    # Groups 0-3 as a loop over pairs (rolled, as JAX does on CPU: unrolled hashes that feed
    # one another make XLA's fusion, and compile time, blow up), then group 4.
    def pair(i: Any, carry: tuple) -> tuple:
        x1, x2, *sched = carry
        count = lax.add(
            lax.mul(lax.convert_element_type(i, _U32), _const(2, _U32)), _const(1, _U32)
        )
        x1, x2, sched = _threefry_group(x1, x2, tuple(sched), _ROTATIONS[0], count)
        count = lax.add(count, _const(1, _U32))
        x1, x2, sched = _threefry_group(x1, x2, sched, _ROTATIONS[1], count)
        return (x1, x2, *sched)

    x1, x2 = (lax.broadcast_to(x, _broadcast_shape(x1, x2)) for x in (x1, x2))
    x1, x2, *sched = fori_loop(0, 2, pair, (x1, x2, *schedule))
    x1, x2, _ = _threefry_group(x1, x2, tuple(sched), _ROTATIONS[0], _const(5, _U32))
    return x1, x2


def _broadcast_shape(x: Any, y: Any) -> Shape:
    return tuple(np.broadcast_shapes(get_aval(x).shape, get_aval(y).shape))


def _key_words(key: Any) -> tuple[Any, Any]:
    return (
        lax.reshape(lax.slice(key, (0,), (1,)), ()),
        lax.reshape(lax.slice(key, (1,), (2,)), ()),
    )


def _hash_counters(key: Any, shape: Shape) -> tuple[Any, Any]:
    """The hash of every element's flat index (a 64-bit counter), as two uint32 arrays."""
    counts = lax.reshape(lax.iota(_U64, math.prod(shape)), shape)
    hi = lax.convert_element_type(lax.shift_right_logical(counts, _const(32, _U64)), _U32)
    lo = lax.convert_element_type(counts, _U32)
    k1, k2 = _key_words(key)
    return _threefry2x32(k1, k2, hi, lo)


def _stack_words(w1: Any, w2: Any) -> Any:
    shape = get_aval(w1).shape
    return lax.concatenate([lax.reshape(w1, (*shape, 1)), lax.reshape(w2, (*shape, 1))], len(shape))


def _check_key(name: str, key: Any) -> Any:
    """The raw uint32[2] key of `key` (raw, or a typed key of shape ())."""
    if isinstance(key, KeyArray):
        if key.shape != ():
            raise ValueError(
                f"mjcore.random.{name}: accepts a single key, but was given a key array of "
                f"shape {key.shape} != (); map over keys with mjcore.vmap"
            )
        return key._data
    key = _as_array(key)
    aval = get_aval(key)
    if aval.dtype != _U32:
        raise TypeError(
            f"mjcore.random.{name}: a key must be a uint32 array of shape (2,), got dtype "
            f"{aval.dtype.name}; make keys with mjcore.random.PRNGKey(seed)"
        )
    if aval.shape != (2,):
        hint = " (map over a batch of keys with mjcore.vmap)" if aval.shape[-1:] == (2,) else ""
        raise ValueError(
            f"mjcore.random.{name}: a key must have shape (2,), got shape {aval.shape}{hint}"
        )
    return key


# --- keys -----------------------------------------------------------------------------------


@jit
def _seed(seed: Any) -> Any:
    dtype = get_aval(seed).dtype
    # A 64-bit seed is its two 32-bit words; narrower seeds have a zero high word (a shift by
    # 32 or more bits gives 0).
    hi = lax.convert_element_type(lax.shift_right_logical(seed, _const(32, dtype)), _U32)
    lo = lax.convert_element_type(seed, _U32)
    return lax.concatenate([lax.reshape(hi, (1,)), lax.reshape(lo, (1,))], 0)


def PRNGKey(seed: int | ArrayLike) -> Any:  # noqa: N802  (JAX's name)
    """A key (uint32[2]) from an integer seed, as `jax.random.PRNGKey` with threefry2x32.

    A Python int is read as int64 (its two 32-bit words make the key); integer arrays of 32
    bits or fewer give `[0, seed as uint32]`.

    Raises:
      TypeError: for a non-integer or non-scalar seed.
      OverflowError: for a Python int outside int64.
    """
    return _make_key("PRNGKey", seed)


def key(seed: int | ArrayLike, *, impl: str | None = None) -> KeyArray:
    """A typed key (shape (), dtype `key<fry>`) from an integer seed, as `jax.random.key`.

    Its data (`key_data`) is `PRNGKey(seed)`. Every sampler takes typed and raw keys alike and
    draws the same values from both; `split` and `fold_in` give typed keys for typed keys.
    """
    return wrap_key_data(_make_key("key", seed), impl=impl)


def clone(key: Any) -> Any:
    """`key` itself, as `jax.random.clone`: keys are immutable values here."""
    return key


def _make_key(name: str, seed: Any) -> Any:
    if isinstance(seed, int):
        if not -(2**63) <= seed < 2**63:
            raise OverflowError(f"mjcore.random.{name}: seed {seed} does not fit in int64")
        seed = np.int64(seed)
    seed = _as_array(seed)
    aval = get_aval(seed)
    if aval.ndim:
        raise TypeError(
            f"mjcore.random.{name}: accepts a scalar seed, got an array of shape {aval.shape}; "
            "map over seeds with mjcore.vmap"
        )
    if aval.dtype.kind not in "iu":
        raise TypeError(
            f"mjcore.random.{name}: the seed must be an integer, got dtype {aval.dtype.name}"
        )
    return _seed(seed)


@jit(static_argnums=(1,))
def _split(key: Any, shape: Shape) -> Any:
    return _stack_words(*_hash_counters(key, shape))


def split(key: ArrayLike, num: int | Sequence[int] = 2) -> Any:
    """`num` new keys (shape `(num, 2)`, or `(*num, 2)` for a tuple), as `jax.random.split`."""
    keys = _split(_check_key("split", key), _shape_of("split", num))
    return KeyArray(keys) if isinstance(key, KeyArray) else keys


@jit
def _fold_in(key: Any, data: Any) -> Any:
    k1, k2 = _key_words(key)
    return _stack_words(*_threefry2x32(k1, k2, _const(0, _U32), data))


def fold_in(key: ArrayLike, data: int | ArrayLike) -> Any:
    """A new key from `key` and a 32-bit integer `data`, as `jax.random.fold_in`.

    Integer arrays are taken modulo 2**32.

    Raises:
      OverflowError: for a Python int outside [0, 2**32).
      TypeError: for a non-scalar or non-integer `data`.
    """
    typed = isinstance(key, KeyArray)
    key = _check_key("fold_in", key)
    if isinstance(data, int):
        if not 0 <= data < 2**32:
            raise OverflowError(f"mjcore.random.fold_in: data {data} is out of bounds for uint32")
        data = np.uint32(data)
    data = _as_array(data)
    aval = get_aval(data)
    if aval.ndim or aval.dtype.kind not in "biu":
        raise TypeError(
            "mjcore.random.fold_in: data must be a scalar integer, got "
            f"{aval.dtype.name}{list(aval.shape)}; map over data with mjcore.vmap"
        )
    new_key = _fold_in(key, lax.convert_element_type(data, _U32))
    return KeyArray(new_key) if typed else new_key


# --- bits -----------------------------------------------------------------------------------


def _random_bits(key: Any, nbits: int, shape: Shape) -> Any:
    w1, w2 = _hash_counters(key, shape)
    udtype = np.dtype(f"uint{nbits}")
    if nbits == 64:
        hi = lax.shift_left(lax.convert_element_type(w1, _U64), _const(32, _U64))
        return lax.bitwise_or(hi, lax.convert_element_type(w2, _U64))
    return lax.convert_element_type(lax.bitwise_xor(w1, w2), udtype)


@jit(static_argnums=(1, 2))
def _bits(key: Any, shape: Shape, nbits: int) -> Any:
    return _random_bits(key, nbits, shape)


def bits(key: ArrayLike, shape: Sequence[int] = (), dtype: Any = np.uint64) -> Any:
    """Uniform random bits as unsigned integers, as `jax.random.bits` (uint64 by default, as
    JAX's with x64 enabled and as this project's other 64-bit defaults)."""
    key = _check_key("bits", key)
    dtype = dtypes.canonicalize_dtype(dtype, "mjcore.random.bits")
    if dtype.kind != "u":
        raise ValueError(
            f"mjcore.random.bits: dtype must be an unsigned integer dtype, got {dtype.name}"
        )
    return _bits(key, _shape_of("bits", shape), dtype.itemsize * 8)


# --- uniform and normal ---------------------------------------------------------------------


def _uniform_core(key: Any, minval: Any, maxval: Any, shape: Shape, dtype: np.dtype) -> Any:
    finfo = dtypes.finfo(dtype)
    nbits = finfo.bits
    udtype = np.dtype(f"uint{nbits}")
    # As JAX: a dtype with fewer than 8 mantissa bits (bfloat16) draws 8 random bits each.
    rng_bits = 8 if finfo.nmant < 8 else nbits
    bits = _random_bits(key, rng_bits, shape)
    if rng_bits != nbits:
        bits = lax.convert_element_type(bits, udtype)
    # Random mantissa bits under the exponent of 1.0 give a float in [1, 2); minus 1 is [0, 1).
    mantissa = lax.shift_right_logical(bits, _const(rng_bits - finfo.nmant, udtype))
    one_bits = _const(int(np.array(1.0, dtype).view(udtype)), udtype)
    floats = lax.sub(
        lax.bitcast_convert_type(lax.bitwise_or(mantissa, one_bits), dtype), _const(1.0, dtype)
    )
    minval = lax.broadcast_in_dim(minval, shape, _trailing_dims(minval, shape))
    maxval = lax.broadcast_in_dim(maxval, shape, _trailing_dims(maxval, shape))
    return lax.max(minval, lax.add(lax.mul(floats, lax.sub(maxval, minval)), minval))


def _trailing_dims(x: Any, shape: Shape) -> tuple[int, ...]:
    ndim = get_aval(x).ndim
    return tuple(range(len(shape) - ndim, len(shape)))


def _broadcast_param(x: Any, shape: Shape) -> Any:
    """Broadcast a parameter whose size-1 axes may need stretching (NumPy's rule)."""
    xshape = get_aval(x).shape
    if xshape == shape:
        return x
    keep = tuple(
        i for i, d in enumerate(xshape) if d != 1 or shape[len(shape) - len(xshape) + i] == 1
    )
    x = lax.reshape(x, tuple(xshape[i] for i in keep))
    return lax.broadcast_in_dim(x, shape, tuple(len(shape) - len(xshape) + i for i in keep))


@jit(static_argnums=(3, 4))
def _uniform(key: Any, minval: Any, maxval: Any, shape: Shape, dtype: np.dtype) -> Any:
    minval = _broadcast_param(lax.convert_element_type(minval, dtype), shape)
    maxval = _broadcast_param(lax.convert_element_type(maxval, dtype), shape)
    return _uniform_core(key, minval, maxval, shape, dtype)


def uniform(
    key: ArrayLike,
    shape: Sequence[int] = (),
    dtype: Any = float,
    minval: ArrayLike = 0.0,
    maxval: ArrayLike = 1.0,
) -> Any:
    """Uniform floats in [minval, maxval), as `jax.random.uniform`; differentiable in
    `minval` and `maxval`, which must broadcast to `shape`."""
    key = _check_key("uniform", key)
    dtype = _float_dtype("mjcore.random.uniform", dtype)
    shape = _shape_of("uniform", shape)
    minval, maxval = _as_param(minval, dtype), _as_param(maxval, dtype)
    _check_param_shapes("mjcore.random.uniform", shape, minval, maxval)
    return _uniform(key, minval, maxval, shape, dtype)


def _as_param(x: Any, dtype: np.dtype) -> Any:
    """Python scalars in the sampling dtype; arrays keep theirs (converted inside)."""
    if isinstance(x, bool | int | float | complex):
        return np.asarray(x, dtype)
    return _as_array(x)


def _normal_real(key: Any, shape: Shape, dtype: np.dtype) -> Any:
    # erf_inv of a uniform on (-1, 1); the open lower end keeps erf_inv finite.
    lo = _const(float(np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))), dtype)
    hi = _const(1.0, dtype)
    u = _uniform_core(key, lo, hi, shape, dtype)
    return lax.mul(_const(np.sqrt(2), dtype), lax.erf_inv(u))


@jit(static_argnums=(1, 2))
def _normal(key: Any, shape: Shape, dtype: np.dtype) -> Any:
    if dtype.kind != "c":
        return _normal_real(key, shape, dtype)
    # Real and imaginary parts with variance 1/2 each, as JAX draws them.
    real_dtype = np.dtype(f"float{dtype.itemsize * 4}")
    key_re, key_im = _split_rows(key)
    z = lax.complex(
        _normal_real(key_re, shape, real_dtype), _normal_real(key_im, shape, real_dtype)
    )
    return lax.div(z, _const(np.sqrt(2), dtype))


def _split_rows(key: Any) -> tuple[Any, Any]:
    keys = _split(key, (2,))
    return lax.reshape(lax.slice(keys, (0, 0), (1, 2)), (2,)), lax.reshape(
        lax.slice(keys, (1, 0), (2, 2)), (2,)
    )


def normal(key: ArrayLike, shape: Sequence[int] = (), dtype: Any = float) -> Any:
    """Standard normal floats (or complex numbers), as `jax.random.normal`."""
    key = _check_key("normal", key)
    dtype = _float_dtype("mjcore.random.normal", dtype, "fc")
    return _normal(key, _shape_of("normal", shape), dtype)


# --- randint --------------------------------------------------------------------------------


def _clip_convert(x: Any, dtype: np.dtype) -> Any:
    """`x` (integer) in `dtype`, clipped to the values both dtypes hold instead of wrapping."""
    src = get_aval(x).dtype
    lo = max(np.iinfo(dtype).min, np.iinfo(src).min)
    hi = min(np.iinfo(dtype).max, np.iinfo(src).max)
    return lax.convert_element_type(_clip(x, lo, hi), dtype)


def _clip(x: Any, lo: int, hi: int) -> Any:
    dtype = get_aval(x).dtype
    return lax.min(lax.max(x, _const(lo, dtype)), _const(hi, dtype))


@jit(static_argnums=(3, 4))
def _randint(key: Any, minval: Any, maxval: Any, shape: Shape, dtype: np.dtype) -> Any:
    nbits = dtype.itemsize * 8
    udtype = np.dtype(f"uint{nbits}")
    # A maxval above dtype's range (randint(key, s, 0, 256, uint8)) allows dtype's maximum.
    top = min(np.iinfo(dtype).max, np.iinfo(get_aval(maxval).dtype).max)
    maxval_above = lax.gt(maxval, _const(top, get_aval(maxval).dtype))
    minval = _broadcast_param(_clip_convert(minval, dtype), shape)
    maxval = _broadcast_param(_clip_convert(maxval, dtype), shape)
    maxval_above = _broadcast_param(maxval_above, shape)
    key_hi, key_lo = _split_rows(key)
    higher, lower = _random_bits(key_hi, nbits, shape), _random_bits(key_lo, nbits, shape)
    # An empty range returns minval; a span that wraps to 0 leaves the offset unreduced.
    one = lax.full(shape, 1, udtype)
    span = lax.convert_element_type(lax.sub(maxval, minval), udtype)
    span = lax.select_n(lax.le(maxval, minval), span, one)
    span = lax.select_n(
        lax.bitwise_and(maxval_above, lax.gt(maxval, minval)), span, lax.add(span, one)
    )
    # The offset is (higher * 2**nbits + lower) mod span, from residues that cannot overflow.
    multiplier = lax.rem(_const(2 ** (nbits // 2), udtype), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher, span), multiplier), lax.rem(lower, span))
    return lax.add(minval, lax.convert_element_type(lax.rem(offset, span), dtype))


def _int_param(name: str, x: Any) -> Any:
    if isinstance(x, bool | int):
        if not -(2**63) <= x < 2**63:
            raise OverflowError(f"mjcore.random.{name}: bound {x} does not fit in int64")
        return np.asarray(x, _I64)
    x = _as_array(x)
    if get_aval(x).dtype.kind not in "iu":
        x = lax.convert_element_type(x, _I64)
    return x


def randint(
    key: ArrayLike,
    shape: Sequence[int],
    minval: ArrayLike,
    maxval: ArrayLike,
    dtype: Any = int,
) -> Any:
    """Uniform integers in [minval, maxval), as `jax.random.randint` (a modulus of 2*nbits
    random bits, so slightly biased when the span is not a power of two). Bounds are clipped
    to `dtype`'s range; an empty range gives `minval`."""
    key = _check_key("randint", key)
    dtype = dtypes.canonicalize_dtype(int if dtype is None else dtype, "mjcore.random.randint")
    if dtype.kind not in "iu":
        raise TypeError(f"mjcore.random.randint: dtype must be an integer dtype, got {dtype.name}")
    shape = _shape_of("randint", shape)
    minval, maxval = _int_param("randint", minval), _int_param("randint", maxval)
    _check_param_shapes("mjcore.random.randint", shape, minval, maxval)
    info = np.iinfo(dtype)
    if info.bits >= 32:
        return _randint(key, minval, maxval, shape, dtype)
    # Narrow dtypes are drawn in int32 (less bias), with bounds wrapped then clipped to dtype.
    i32 = np.dtype("int32")
    minval = _clip(lax.convert_element_type(minval, i32), int(info.min), int(info.max))
    maxval = _clip(lax.convert_element_type(maxval, i32), int(info.min), int(info.max) + 1)
    return lax.convert_element_type(_randint(key, minval, maxval, shape, i32), dtype)


# --- bernoulli ------------------------------------------------------------------------------


@jit(static_argnums=(2,))
def _bernoulli(key: Any, p: Any, shape: Shape) -> Any:
    dtype = get_aval(p).dtype
    return lax.lt(_uniform_core(key, _const(0.0, dtype), _const(1.0, dtype), shape, dtype), p)


def bernoulli(key: ArrayLike, p: ArrayLike = 0.5, shape: Sequence[int] | None = None) -> Any:
    """Booleans that are True with probability `p`, as `jax.random.bernoulli` (mode "low").

    `shape` defaults to `p`'s shape; the draw is `uniform(key, shape, p.dtype) < p`.
    """
    key = _check_key("bernoulli", key)
    p = _as_array(p)
    dtype = get_aval(p).dtype
    if dtypes.kind(dtype) != "f":
        raise TypeError(
            f"mjcore.random.bernoulli: the probability p must have a float dtype, got {dtype.name}"
        )
    if shape is None:
        shape = get_aval(p).shape
    else:
        shape = _shape_of("bernoulli", shape)
        _check_param_shapes("mjcore.random.bernoulli", shape, p)
    return _bernoulli(key, p, shape)


# --- permutation and choice -----------------------------------------------------------------


@jit(static_argnums=(2, 3))
def _shuffle(key: Any, x: Any, axis: int, independent: bool) -> Any:
    # Sort by fresh random 32-bit keys, repeated until collisions are negligible (a static
    # round count, as in JAX). Without `independent`, one key per position along `axis`
    # permutes whole slices.
    shape = get_aval(x).shape
    key_shape = shape if independent else (shape[axis],)
    rounds = math.ceil(3 * np.log(max(1, math.prod(key_shape))) / np.log(2**32 - 1))
    for _ in range(rounds):
        key, subkey = _split_rows(key)
        sort_keys = _random_bits(subkey, 32, key_shape)
        if not independent:
            sort_keys = lax.broadcast_in_dim(sort_keys, shape, (axis,))
        _, x = lax.sort([sort_keys, x], dimension=axis, is_stable=True, num_keys=1)
    return x


def _axis(name: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"mjcore.random.{name}: axis {axis} is out of bounds for {ndim} dims")
    return axis % ndim


def permutation(
    key: ArrayLike, x: int | ArrayLike, axis: int = 0, independent: bool = False
) -> Any:
    """A shuffled `arange(x)` for an integer `x`, or `x` shuffled along `axis` (each 1-D
    slice on its own if `independent`), as `jax.random.permutation`."""
    key = _check_key("permutation", key)
    x = _as_array(x)
    aval = get_aval(x)
    if aval.ndim == 0:
        if aval.dtype.kind not in "iu":
            raise TypeError(
                "mjcore.random.permutation: x must be an integer or at least 1-dimensional, "
                f"got {aval.dtype.name}[]"
            )
        return _shuffle(key, lax.iota(_I64, int(x)), 0, True)
    axis = _axis("permutation", axis, aval.ndim)
    return _shuffle(key, x, axis, bool(independent) or aval.ndim == 1)


def _take(arr: Any, ind: Any, axis: int) -> Any:
    """`numpy.take(arr, ind, axis)` for in-range integer indices."""
    shape = get_aval(arr).shape
    ind_shape = get_aval(ind).shape
    ndim_out = len(shape) - 1 + len(ind_shape)
    offset_dims = tuple(d for d in range(ndim_out) if not axis <= d < axis + len(ind_shape))
    dnums = GatherDimensionNumbers(offset_dims, (axis,), (axis,))
    slice_sizes = tuple(1 if d == axis else n for d, n in enumerate(shape))
    return lax.gather(arr, lax.reshape(ind, (*ind_shape, 1)), dnums, slice_sizes)


def _searchsorted_left(sorted_1d: Any, values: Any) -> Any:
    """For each value, how many entries of the non-decreasing `sorted_1d` are below it."""
    vshape = get_aval(values).shape
    (n,) = get_aval(sorted_1d).shape
    below = lax.lt(
        lax.broadcast_in_dim(sorted_1d, (*vshape, n), (len(vshape),)),
        lax.broadcast_in_dim(values, (*vshape, n), tuple(range(len(vshape)))),
    )
    return lax.reduce_sum(lax.convert_element_type(below, _I64), (len(vshape),))


def choice(
    key: ArrayLike,
    a: int | ArrayLike,
    shape: Sequence[int] = (),
    replace: bool = True,
    p: ArrayLike | None = None,
    axis: int = 0,
) -> Any:
    """Random entries of `a` along `axis` (of `arange(a)` for an integer), as
    `jax.random.choice`.

    With `p`, entries are drawn with those probabilities: by inverting the cumulative sum
    (with replacement) or by the Gumbel top-k trick (without).

    Raises:
      ValueError: for an empty population, more draws than entries without replacement, or
        `p` of the wrong shape.
    """
    key = _check_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"mjcore.random.choice: shape must be a sequence, got {shape!r}")
    shape = _shape_of("choice", shape)
    arr = _as_array(a)
    aval = get_aval(arr)
    if aval.ndim == 0:
        if aval.dtype.kind not in "iu":
            raise TypeError(
                f"mjcore.random.choice: a must be an integer or an array, got {aval.dtype.name}[]"
            )
        n_inputs = int(arr)
    else:
        axis = _axis("choice", axis, aval.ndim)
        n_inputs = aval.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return lax.full(shape, 0, aval.dtype)
    if n_inputs <= 0:
        raise ValueError(
            "mjcore.random.choice: a must be greater than 0 unless no samples are taken"
        )
    if not replace and n_draws > n_inputs:
        raise ValueError(
            f"mjcore.random.choice: cannot take a larger sample (size {n_draws}) than the "
            f"population (size {n_inputs}) when replace=False"
        )
    if p is None and replace:
        ind = randint(key, shape, 0, n_inputs)
    elif p is None:
        population = n_inputs if aval.ndim == 0 else arr
        perm = permutation(key, population, axis)
        pshape = get_aval(perm).shape
        limit = tuple(n_draws if d == axis else n for d, n in enumerate(pshape))
        result = lax.slice(perm, (0,) * len(pshape), limit)
        return _choice_reshape(result, aval, shape, axis)
    else:
        ind = _weighted_indices(key, p, n_inputs, shape, n_draws, replace)
    result = ind if aval.ndim == 0 else _take(arr, ind, axis)
    return _choice_reshape(result, aval, shape, axis)


def _choice_reshape(result: Any, aval: Any, shape: Shape, axis: int) -> Any:
    if aval.ndim == 0:
        return lax.reshape(result, shape)
    return lax.reshape(result, (*aval.shape[:axis], *shape, *aval.shape[axis + 1 :]))


def _weighted_indices(
    key: Any, p: Any, n_inputs: int, shape: Shape, n_draws: int, replace: bool
) -> Any:
    p = _as_array(p)
    p_aval = get_aval(p)
    if dtypes.kind(p_aval.dtype) not in "fc":
        p = lax.convert_element_type(p, np.dtype("float64"))
    if p_aval.shape != (n_inputs,):
        raise ValueError(
            "mjcore.random.choice: p must be None or a 1-D vector with the same size as "
            f"a.shape[axis]; p has shape {p_aval.shape} and a.shape[axis] is {n_inputs}"
        )
    dtype = get_aval(p).dtype
    if replace:
        p_cuml = lax.cumsum(p)
        total = lax.reshape(lax.slice(p_cuml, (n_inputs - 1,), (n_inputs,)), ())
        u = uniform(key, shape, dtype)
        r = lax.mul(total, lax.sub(_const(1.0, dtype), u))
        return _searchsorted_left(p_cuml, r)
    # Gumbel top-k: the n_draws largest of log(p) + Gumbel noise (ties to the lower index).
    tiny = float(dtypes.finfo(dtype).tiny)
    u = uniform(key, (n_inputs,), dtype, tiny, 1.0)
    g = lax.add(lax.neg(lax.log(lax.neg(lax.log(u)))), lax.log(p))
    _, order = lax.sort([lax.neg(g), lax.iota(_I64, n_inputs)], is_stable=True, num_keys=1)
    return lax.slice(order, (0,), (n_draws,))


# --- shared helpers for the samplers --------------------------------------------------------


def _param_shape(name: str, shape: Any, *params: Any) -> Shape:
    """`shape`, or the broadcast shape of the parameters when it is None (JAX's rule)."""
    if shape is None:
        try:
            return tuple(np.broadcast_shapes(*(get_aval(p).shape for p in params)))
        except ValueError as err:
            raise ValueError(
                f"mjcore.random.{name}: parameter shapes "
                f"{[get_aval(p).shape for p in params]} do not broadcast together"
            ) from err
    shape = _shape_of(name, shape)
    _check_param_shapes(f"mjcore.random.{name}", shape, *params)
    return shape


def _check_safe_cast(name: str, dtype: np.dtype, *params: Any) -> None:
    """Float parameters must not be wider than the sampling dtype (JAX's `safe_to_cast`);
    Python scalars and integers always are."""
    for p in params:
        if isinstance(p, bool | int | float):
            continue
        pdtype = get_aval(_as_array(p)).dtype
        if pdtype.kind == "c" or (
            dtypes.kind(pdtype) == "f" and np.promote_types(pdtype, dtype) != dtype
        ):
            raise ValueError(
                f"mjcore.random.{name}: cannot safely cast a parameter of dtype {pdtype.name} "
                f"to the sampling dtype {dtype.name}; pass dtype={pdtype.name} or cast it"
            )


def _param(x: Any) -> Any:
    """A parameter as an array: Python scalars as float64 (JAX's weak x64 scalars)."""
    if isinstance(x, bool | int | float):
        return np.asarray(x, np.float64)
    return _as_array(x)


def _row(x: Any, i: int) -> Any:
    """`x[i]`."""
    shape = get_aval(x).shape
    return lax.reshape(lax.slice(x, (i, *(0,) * (len(shape) - 1)), (i + 1, *shape[1:])), shape[1:])


def _split_n(key: Any, n: int) -> list[Any]:
    keys = _split(key, (n,))
    return [_row(keys, i) for i in range(n)]


def _unif(key: Any, shape: Shape, dtype: np.dtype, lo: Any = 0.0, hi: Any = 1.0) -> Any:
    """`uniform(key, shape, dtype, lo, hi)` for Python-scalar or array bounds."""
    lo = lax.convert_element_type(_param(lo), dtype)
    hi = lax.convert_element_type(_param(hi), dtype)
    return _uniform_core(
        key, _broadcast_param(lo, shape), _broadcast_param(hi, shape), shape, dtype
    )


def _finfo(dtype: np.dtype, name: str) -> float:
    return float(getattr(dtypes.finfo(dtype), name))


# --- simple transforms of uniform and normal ------------------------------------------------


@jit(static_argnums=(1, 2))
def _exponential(key: Any, shape: Shape, dtype: np.dtype) -> Any:
    # 1 - u moves log's argument to (0, 1].
    return lax.neg(lax.log1p(lax.neg(_unif(key, shape, dtype))))


def exponential(key: ArrayLike, shape: Sequence[int] = (), dtype: Any = float) -> Any:
    """Standard exponential floats (density `exp(-x)` on x >= 0), as
    `jax.random.exponential`: `-log1p(-uniform)`."""
    key = _check_key("exponential", key)
    dtype = _float_dtype("mjcore.random.exponential", dtype)
    return _exponential(key, _shape_of("exponential", shape), dtype)


def _gumbel_bits_highest(key: Any, shape: Shape) -> Any:
    """JAX's float32 "highest" Gumbel: 64 random bits read as a fixed-point number in (0, 1)
    of full float32 precision near both ends."""
    both = _random_bits(key, 32, (2, *shape))
    b_hi, b_lo = (_row(both, i) for i in (0, 1))
    n_hi, n_lo = lax.bitwise_not(b_hi), lax.bitwise_not(b_lo)
    # 1 - bits in 64-bit fixed point: the low word's +1 carries into the high word on overflow.
    carry = lax.convert_element_type(lax.eq(n_lo, _const(0xFFFFFFFF, _U32)), _U32)
    n_hi, n_lo = lax.add(n_hi, carry), lax.add(n_lo, _const(1, _U32))
    flip = lax.lt(b_hi, _const(1 << 31, _U32))
    hi, lo = lax.select_n(flip, n_hi, b_hi), lax.select_n(flip, n_lo, b_lo)
    x = _fixed_point_to_float32(hi, lo)
    low_end = lax.neg(lax.log(lax.neg(lax.log1p(lax.neg(x)))))
    high_end = lax.neg(lax.log(lax.neg(lax.log(x))))
    return lax.select_n(flip, high_end, low_end)


def _clz32(x: Any) -> Any:
    """Leading zero bits of uint32 `x` (32 for 0): smear the top bit down, count the ones."""
    for s in (1, 2, 4, 8, 16):
        x = lax.bitwise_or(x, lax.shift_right_logical(x, _const(s, _U32)))
    return lax.sub(_const(32, _U32), lax.population_count(x))


def _fixed_point_to_float32(hi: Any, lo: Any) -> Any:
    """The float32 nearest below the 64-bit fixed-point fraction `hi:lo` (JAX's
    `_safe_int_to_float`)."""
    finfo = dtypes.finfo(np.float32)
    hiclz, loclz = _clz32(hi), _clz32(lo)
    hi_empty = lax.eq(hiclz, _const(32, _U32))
    mantissa = lax.bitwise_or(
        lax.shift_left(hi, hiclz),
        lax.select_n(
            hi_empty,
            lax.shift_right_logical(lo, lax.sub(_const(32, _U32), hiclz)),
            lax.shift_left(lo, loclz),
        ),
    )
    mantissa = lax.shift_right_logical(mantissa, _const(32 - finfo.nmant - 1, _U32))
    mantissa = lax.bitwise_and(mantissa, _const((1 << finfo.nmant) - 1, _U32))
    lead = lax.select_n(hi_empty, hiclz, lax.add(_const(32, _U32), loclz))
    exp = lax.shift_left(lax.sub(_const(-finfo.minexp, _U32), lead), _const(finfo.nmant, _U32))
    exp = lax.bitwise_and(exp, _const((1 << 30) - (1 << (finfo.nmant - 1)), _U32))
    return lax.bitcast_convert_type(lax.bitwise_or(exp, mantissa), np.dtype("float32"))


@jit(static_argnums=(1, 2, 3))
def _gumbel(key: Any, shape: Shape, dtype: np.dtype, mode: str) -> Any:
    if dtype == np.float32 and mode == "highest":
        return _gumbel_bits_highest(key, shape)
    if mode in ("high", "highest"):
        # Two uniforms give the low end of (0, 1/2) more resolution than one.
        both = _unif(key, (2, *shape), dtype)
        high, low = (_row(both, i) for i in (0, 1))
        fine = lax.add(
            lax.add(high, lax.mul(_const(2.0 ** -dtypes.finfo(dtype).nmant, dtype), low)),
            _const(_finfo(dtype, "tiny"), dtype),
        )
        x = lax.select_n(lax.ge(high, _const(0.5, dtype)), fine, high)
        return lax.neg(lax.log(lax.neg(lax.log1p(lax.neg(x)))))
    u = _unif(key, shape, dtype, _finfo(dtype, "tiny"), 1.0)
    return lax.neg(lax.log(lax.neg(lax.log(u))))


def _gumbel_mode(name: str, mode: str | None) -> str:
    mode = "low" if mode is None else mode
    if mode not in ("highest", "high", "low"):
        raise ValueError(
            f"mjcore.random.{name}: mode must be 'low', 'high' or 'highest', got {mode!r}"
        )
    return mode


def gumbel(
    key: ArrayLike, shape: Sequence[int] = (), dtype: Any = float, mode: str | None = None
) -> Any:
    """Standard Gumbel floats (density `exp(-(x + exp(-x)))`), as `jax.random.gumbel`:
    `-log(-log(uniform))`. `mode` "high" (and "highest" for float32) spends more random bits
    on the tail; the default is "low", as JAX's default configuration."""
    key = _check_key("gumbel", key)
    dtype = _float_dtype("mjcore.random.gumbel", dtype)
    return _gumbel(key, _shape_of("gumbel", shape), dtype, _gumbel_mode("gumbel", mode))


@jit(static_argnums=(1, 2))
def _laplace(key: Any, shape: Shape, dtype: np.dtype) -> Any:
    lo = float(np.asarray(-1.0, dtype) + dtypes.finfo(dtype).epsneg)
    u = _unif(key, shape, dtype, lo, 1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def laplace(key: ArrayLike, shape: Sequence[int] = (), dtype: Any = float) -> Any:
    """Standard Laplace floats (density `exp(-|x|) / 2`), as `jax.random.laplace`."""
    key = _check_key("laplace", key)
    dtype = _float_dtype("mjcore.random.laplace", dtype)
    return _laplace(key, _shape_of("laplace", shape), dtype)


@jit(static_argnums=(1, 2))
def _logistic(key: Any, shape: Shape, dtype: np.dtype) -> Any:
    x = _unif(key, shape, dtype, _finfo(dtype, "tiny"), 1.0)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


def logistic(key: ArrayLike, shape: Sequence[int] = (), dtype: Any = float) -> Any:
    """Standard logistic floats (density `e^-x / (1 + e^-x)^2`), as `jax.random.logistic`."""
    key = _check_key("logistic", key)
    dtype = _float_dtype("mjcore.random.logistic", dtype)
    return _logistic(key, _shape_of("logistic", shape), dtype)


@jit(static_argnums=(1, 2))
def _cauchy(key: Any, shape: Shape, dtype: np.dtype) -> Any:
    u = _unif(key, shape, dtype, _finfo(dtype, "eps"), 1.0)
    return lax.tan(lax.mul(_const(np.pi, dtype), lax.sub(u, _const(0.5, dtype))))


def cauchy(key: ArrayLike, shape: Sequence[int] = (), dtype: Any = float) -> Any:
    """Standard Cauchy floats (density proportional to `1 / (x^2 + 1)`), as
    `jax.random.cauchy`: `tan(pi * (u - 1/2))`."""
    key = _check_key("cauchy", key)
    dtype = _float_dtype("mjcore.random.cauchy", dtype)
    return _cauchy(key, _shape_of("cauchy", shape), dtype)


@jit(static_argnums=(1, 2))
def _rademacher(key: Any, shape: Shape, dtype: np.dtype) -> Any:
    f64 = np.dtype("float64")
    heads = lax.convert_element_type(lax.lt(_unif(key, shape, f64), _const(0.5, f64)), dtype)
    return lax.sub(lax.mul(_const(2, dtype), heads), _const(1, dtype))


def rademacher(key: ArrayLike, shape: Sequence[int] = (), dtype: Any = int) -> Any:
    """-1 or +1 with equal probability (int64 by default), as `jax.random.rademacher`."""
    key = _check_key("rademacher", key)
    dtype = dtypes.canonicalize_dtype(int if dtype is None else dtype, "mjcore.random.rademacher")
    return _rademacher(key, _shape_of("rademacher", shape), dtype)


def _maxwell_core(key: Any, shape: Shape, dtype: np.dtype) -> Any:
    z = _normal_real(key, (*shape, 3), dtype)
    return lax.sqrt(lax.reduce_sum(lax.mul(z, z), (len(shape),)))


@jit(static_argnums=(1, 2))
def _maxwell(key: Any, shape: Shape, dtype: np.dtype) -> Any:
    return _maxwell_core(key, shape, dtype)


def maxwell(key: ArrayLike, shape: Sequence[int] = (), dtype: Any = float) -> Any:
    """Maxwell floats (density proportional to `x^2 exp(-x^2 / 2)`), as
    `jax.random.maxwell`: the norm of three standard normals."""
    key = _check_key("maxwell", key)
    dtype = _float_dtype("mjcore.random.maxwell", dtype)
    return _maxwell(key, _shape_of("maxwell", shape), dtype)


def _result_dtype(dtype: np.dtype, *params: Any) -> np.dtype:
    """`dtype` promoted with the float parameters' dtypes (Python scalars are weak)."""
    for p in params:
        if not isinstance(p, bool | int | float):
            pdtype = get_aval(p).dtype
            if dtypes.kind(pdtype) in "fc":
                dtype = np.promote_types(dtype, pdtype)
    return dtype


@jit(static_argnums=(3, 4))
def _double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Shape, dtype: np.dtype) -> Any:
    maxwell_key, rademacher_key = _split_rows(key)
    maxwell_rvs = _maxwell_core(maxwell_key, shape, dtype)
    random_sign = _rademacher(rademacher_key, shape, dtype)
    out_dtype = np.promote_types(
        dtype, np.promote_types(get_aval(loc).dtype, get_aval(scale).dtype)
    )
    x = lax.convert_element_type(lax.mul(random_sign, maxwell_rvs), out_dtype)
    return lax.add(
        lax.mul(x, lax.convert_element_type(scale, out_dtype)),
        lax.convert_element_type(loc, out_dtype),
    )


def double_sided_maxwell(
    key: ArrayLike,
    loc: ArrayLike,
    scale: ArrayLike,
    shape: Sequence[int] = (),
    dtype: Any = float,
) -> Any:
    """Double-sided Maxwell floats `loc + scale * z` with `z` of density proportional to
    `z^2 exp(-z^2 / 2)`, as `jax.random.double_sided_maxwell`.

    As JAX's, the result has shape `shape + broadcast(loc, scale).shape`, where an empty
    `shape` stands for the parameters' shape.
    """
    key = _check_key("double_sided_maxwell", key)
    dtype = _float_dtype("mjcore.random.double_sided_maxwell", dtype)
    shape = _shape_of("double_sided_maxwell", shape)
    loc_a, scale_a = _param(loc), _param(scale)
    params_shape = tuple(np.broadcast_shapes(get_aval(loc_a).shape, get_aval(scale_a).shape))
    shape = (*(shape or params_shape), *params_shape)
    # Python scalars are weak: they take the sampling dtype.
    loc_a = _as_param(loc, dtype) if isinstance(loc, bool | int | float) else loc_a
    scale_a = _as_param(scale, dtype) if isinstance(scale, bool | int | float) else scale_a
    return _double_sided_maxwell(key, loc_a, scale_a, shape, dtype)


@jit(static_argnums=(3, 4))
def _weibull_min(key: Any, scale: Any, inv_c: Any, shape: Shape, dtype: np.dtype) -> Any:
    u = _unif(key, shape, dtype)
    out_dtype = np.promote_types(
        dtype, np.promote_types(get_aval(scale).dtype, get_aval(inv_c).dtype)
    )
    x = lax.convert_element_type(lax.neg(lax.log1p(lax.neg(u))), out_dtype)
    y = lax.pow(x, lax.convert_element_type(inv_c, out_dtype))
    return lax.mul(y, lax.convert_element_type(scale, out_dtype))


def weibull_min(
    key: ArrayLike,
    scale: ArrayLike,
    concentration: ArrayLike,
    shape: Sequence[int] = (),
    dtype: Any = float,
) -> Any:
    """Weibull floats `scale * (-log1p(-u)) ** (1 / concentration)`, as
    `jax.random.weibull_min`; the result broadcasts `shape` with the parameters."""
    key = _check_key("weibull_min", key)
    dtype = _float_dtype("mjcore.random.weibull_min", dtype)
    shape = _shape_of("weibull_min", shape)
    # 1 / concentration in the parameter's own precision (float64 for a Python scalar), as
    # JAX computes it before promoting.
    conc = _param(concentration)
    inv_c = lax.div(lax.full((), 1, get_aval(conc).dtype), conc)
    if isinstance(concentration, bool | int | float):
        inv_c = lax.convert_element_type(inv_c, dtype)
    scale_a = _as_param(scale, dtype) if isinstance(scale, bool | int | float) else _as_array(scale)
    return _weibull_min(key, scale_a, inv_c, shape, dtype)


@jit(static_argnums=(2, 3))
def _pareto(key: Any, b: Any, shape: Shape, dtype: np.dtype) -> Any:
    e = _exponential(key, shape, dtype)
    return lax.exp(lax.div(e, lax.convert_element_type(b, dtype)))


def pareto(
    key: ArrayLike, b: ArrayLike, shape: Sequence[int] | None = None, dtype: Any = float
) -> Any:
    """Pareto floats (density `b / x^(b + 1)` on x >= 1), as `jax.random.pareto`:
    `exp(exponential / b)`; differentiable in `b`."""
    key = _check_key("pareto", key)
    dtype = _float_dtype("mjcore.random.pareto", dtype)
    _check_safe_cast("pareto", dtype, b)
    b = _as_param(b, dtype)
    return _pareto(key, b, _param_shape("pareto", shape, b), dtype)


@jit(static_argnums=(2, 3))
def _geometric(key: Any, p: Any, shape: Shape, dtype: np.dtype) -> Any:
    fdtype = get_aval(p).dtype
    u = _unif(key, shape, fdtype)
    u = lax.select_n(lax.eq(u, _const(0.0, fdtype)), u, lax.full(shape, 1.0, fdtype))
    log_one_minus_p = _broadcast_param(lax.log1p(lax.neg(p)), shape)
    g = lax.add(lax.floor(lax.div(lax.log(u), log_one_minus_p)), _const(1.0, fdtype))
    return lax.convert_element_type(g, dtype)


def geometric(
    key: ArrayLike, p: ArrayLike, shape: Sequence[int] | None = None, dtype: Any = int
) -> Any:
    """Geometric integers (trials up to the first success, P(k) = p (1 - p)^(k - 1)), as
    `jax.random.geometric`: `floor(log(u) / log1p(-p)) + 1`."""
    key = _check_key("geometric", key)
    dtype = dtypes.canonicalize_dtype(int if dtype is None else dtype, "mjcore.random.geometric")
    if dtype.kind not in "iu":
        raise ValueError(
            f"mjcore.random.geometric: dtype must be an integer dtype, got {dtype.name}"
        )
    p = _param(p)
    if dtypes.kind(get_aval(p).dtype) not in "fc":
        p = lax.convert_element_type(p, np.dtype("float64"))
    return _geometric(key, p, _param_shape("geometric", shape, p), dtype)


@jit(static_argnums=(2, 3))
def _rayleigh(key: Any, scale: Any, shape: Shape, dtype: np.dtype) -> Any:
    u = _unif(key, shape, dtype)
    scale = _broadcast_param(lax.convert_element_type(scale, dtype), shape)
    return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), _const(-2, dtype))))


def rayleigh(
    key: ArrayLike, scale: ArrayLike, shape: Sequence[int] | None = None, dtype: Any = float
) -> Any:
    """Rayleigh floats (density proportional to `x exp(-x^2 / (2 scale^2))`), as
    `jax.random.rayleigh`: `scale * sqrt(-2 log(u))`."""
    key = _check_key("rayleigh", key)
    dtype = _float_dtype("mjcore.random.rayleigh", dtype)
    _check_safe_cast("rayleigh", dtype, scale)
    scale = _as_param(scale, dtype)
    return _rayleigh(key, scale, _param_shape("rayleigh", shape, scale), dtype)


@jit(static_argnums=(2, 3))
def _wald(key: Any, mean: Any, shape: Shape, dtype: np.dtype) -> Any:
    k1, k2 = _split_rows(key)
    mean = _broadcast_param(lax.convert_element_type(mean, dtype), shape)
    v = _normal_real(k1, shape, dtype)
    z = _unif(k2, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(lax.add(lax.mul(lax.mul(4.0, mean), y), lax.mul(mean_sq, y_sq)))
    x = lax.sub(
        lax.add(mean, lax.div(lax.mul(mean_sq, y), 2.0)),
        lax.mul(lax.div(mean, 2.0), sqrt_term),
    )
    return lax.select_n(lax.le(z, lax.div(mean, lax.add(mean, x))), lax.div(mean_sq, x), x)


def wald(
    key: ArrayLike, mean: ArrayLike, shape: Sequence[int] | None = None, dtype: Any = float
) -> Any:
    """Wald (inverse Gaussian) floats with the given mean and unit shape, as
    `jax.random.wald` (Michael, Schucany and Haas's transformation of a normal)."""
    key = _check_key("wald", key)
    dtype = _float_dtype("mjcore.random.wald", dtype)
    _check_safe_cast("wald", dtype, mean)
    mean = _as_param(mean, dtype)
    return _wald(key, mean, _param_shape("wald", shape, mean), dtype)


@jit(static_argnums=(4, 5))
def _triangular(key: Any, left: Any, mode: Any, right: Any, shape: Shape, dtype: np.dtype) -> Any:
    left, mode, right = (
        _broadcast_param(lax.convert_element_type(x, dtype), shape) for x in (left, mode, right)
    )
    width = lax.sub(right, left)
    fc = lax.div(lax.sub(mode, left), width)
    u = _unif(key, shape, dtype)
    out1 = lax.add(left, lax.sqrt(lax.mul(lax.mul(u, width), lax.sub(mode, left))))
    out2 = lax.sub(right, lax.sqrt(lax.mul(lax.mul(lax.sub(1.0, u), width), lax.sub(right, mode))))
    return lax.select_n(lax.lt(u, fc), out2, out1)


def triangular(
    key: ArrayLike,
    left: ArrayLike,
    mode: ArrayLike,
    right: ArrayLike,
    shape: Sequence[int] | None = None,
    dtype: Any = float,
) -> Any:
    """Triangular floats on [left, right] with peak at `mode`, as `jax.random.triangular`
    (inverse CDF of one uniform)."""
    key = _check_key("triangular", key)
    dtype = _float_dtype("mjcore.random.triangular", dtype)
    _check_safe_cast("triangular", dtype, left, mode, right)
    left, mode, right = (_as_param(x, dtype) for x in (left, mode, right))
    shape = _param_shape("triangular", shape, left, mode, right)
    return _triangular(key, left, mode, right, shape, dtype)


@jit(static_argnums=(2, 3))
def _lognormal(key: Any, sigma: Any, shape: Shape, dtype: np.dtype) -> Any:
    return lax.exp(lax.mul(_normal(key, shape, dtype), lax.convert_element_type(sigma, dtype)))


def lognormal(
    key: ArrayLike,
    sigma: ArrayLike = _F32_ONE,
    shape: Sequence[int] | None = None,
    dtype: Any = float,
) -> Any:
    """Log-normal floats `exp(sigma * normal)` (complex dtypes too), as
    `jax.random.lognormal`."""
    key = _check_key("lognormal", key)
    dtype = _float_dtype("mjcore.random.lognormal", dtype, "fc")
    _check_safe_cast("lognormal", dtype, sigma)
    sigma = _as_param(sigma, dtype)
    return _lognormal(key, sigma, _param_shape("lognormal", shape, sigma), dtype)


# --- categorical ----------------------------------------------------------------------------


@jit(static_argnums=(2, 3, 4, 5, 6))
def _categorical(
    key: Any, logits: Any, shape: Shape, batch_shape: Shape, axis: int, replace: bool, mode: str
) -> Any:
    aval = get_aval(logits)
    ndim = aval.ndim
    prefix = shape[: len(shape) - len(batch_shape)]
    if replace:
        # Gumbel-max: the argmax of logits plus Gumbel noise, one draw per output element.
        logits_shape = list(shape[len(shape) - len(batch_shape) :])
        logits_shape.insert(axis, aval.shape[axis])
        g = _gumbel(key, (*prefix, *logits_shape), aval.dtype, mode)
        x = lax.add(g, lax.reshape(logits, (1,) * len(prefix) + aval.shape))
        return lax.argmax(x, len(prefix) + axis, _I64)
    # Gumbel top-k: the k largest of one noisy copy of the logits, without replacement.
    noisy = lax.add(logits, _gumbel(key, aval.shape, aval.dtype, mode))
    k = math.prod(prefix)
    perm = (*(d for d in range(ndim) if d != axis), axis)
    _, indices = lax.top_k(lax.transpose(noisy, perm), k)
    indices = lax.transpose(indices, (ndim - 1, *range(ndim - 1)))
    return lax.reshape(indices, shape)


def categorical(
    key: ArrayLike,
    logits: ArrayLike,
    axis: int = -1,
    shape: Sequence[int] | None = None,
    replace: bool = True,
    mode: str | None = None,
) -> Any:
    """Indices drawn from the categorical distributions `softmax(logits, axis)`, as
    `jax.random.categorical`: the Gumbel-max trick (int64 indices), or the Gumbel top-k trick
    without replacement (int32 indices, as JAX's `top_k` gives).

    `shape` defaults to `logits.shape` without `axis`; leading extra dimensions draw
    independent samples.

    Raises:
      ValueError: for a bad `axis` or `shape`, an integer `logits` dtype, or more draws
        without replacement than categories.
    """
    key = _check_key("categorical", key)
    logits = _as_array(logits)
    aval = get_aval(logits)
    _float_dtype("mjcore.random.categorical", aval.dtype)
    if aval.ndim == 0:
        raise ValueError("mjcore.random.categorical: logits must have at least one axis")
    axis = _axis("categorical", axis, aval.ndim)
    batch_shape = aval.shape[:axis] + aval.shape[axis + 1 :]
    if shape is None:
        shape = batch_shape
    else:
        shape = _shape_of("categorical", shape)
        ok = len(batch_shape) <= len(shape) and all(
            d in (1, s)
            for d, s in zip(batch_shape, shape[len(shape) - len(batch_shape) :], strict=True)
        )
        if not ok:
            raise ValueError(
                f"mjcore.random.categorical: shape {shape} must end with a shape that the "
                f"logits' batch shape {batch_shape} broadcasts to"
            )
    if not replace:
        k = math.prod(shape[: len(shape) - len(batch_shape)])
        if k > aval.shape[axis]:
            raise ValueError(
                f"mjcore.random.categorical: number of samples without replacement ({k}) "
                f"cannot exceed the number of categories ({aval.shape[axis]})"
            )
    mode = _gumbel_mode("categorical", mode)
    return _categorical(key, logits, shape, batch_shape, axis, bool(replace), mode)


# --- multivariate normal and random matrices ------------------------------------------------


def _last_axis_diagonal(x: Any) -> Any:
    """The diagonal of the (square) last two axes: a strided slice of their flattening."""
    *batch, k, _ = get_aval(x).shape
    flat = lax.reshape(x, (*batch, k * k))
    nb = len(batch)
    return lax.slice(flat, (0,) * (nb + 1), (*batch, k * k), (1,) * nb + (k + 1,))


def _swap_last(x: Any) -> Any:
    nd = get_aval(x).ndim
    return lax.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


@jit(static_argnums=(3, 4, 5))
def _multivariate_normal(
    key: Any, mean: Any, cov: Any, shape: Shape, dtype: np.dtype, method: str
) -> Any:
    n = get_aval(mean).shape[-1]
    if method == "svd":
        u, s, _ = lax.svd(cov)
        factor = lax.mul(u, lax.expand_dims(lax.sqrt(s), (get_aval(s).ndim - 1,)))
    elif method == "eigh":
        v, w = lax.eigh(cov)
        factor = lax.mul(v, lax.expand_dims(lax.sqrt(w), (get_aval(w).ndim - 1,)))
    else:
        factor = lax.cholesky(cov)
    z = _normal_real(key, (*shape, n), dtype)
    out_dtype = np.promote_types(get_aval(factor).dtype, dtype)
    factor = lax.convert_element_type(factor, out_dtype)
    z = lax.convert_element_type(z, out_dtype)
    if get_aval(factor).ndim == 2:
        # einsum('ij,...j->...i') as JAX lowers it: z's last axis against factor's columns.
        y = lax.dot_general(z, factor, (([len(shape)], [1]), ([], [])))
    else:
        factor = _broadcast_param(factor, (*shape, n, n))
        batch = tuple(range(len(shape)))
        y = lax.dot_general(factor, z, (([len(shape) + 1], [len(shape)]), (batch, batch)))
    out_dtype = np.promote_types(get_aval(mean).dtype, out_dtype)
    return lax.add(
        lax.convert_element_type(mean, out_dtype), lax.convert_element_type(y, out_dtype)
    )


def multivariate_normal(
    key: ArrayLike,
    mean: ArrayLike,
    cov: ArrayLike,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    method: str = "cholesky",
) -> Any:
    """Multivariate normal vectors `mean + factor @ normal`, as
    `jax.random.multivariate_normal`, with `factor` from `method`: 'cholesky' (default),
    'eigh' or 'svd' (the latter two allow singular covariances).

    `mean` is `(..., n)` and `cov` `(..., n, n)`; the result is `shape + (n,)`, with `shape`
    defaulting to their broadcast batch shape. `dtype` defaults to `mean`'s (promoted with
    `cov`'s) float dtype.

    Raises:
      ValueError: for a bad method, dtype or shapes.
    """
    key = _check_key("multivariate_normal", key)
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError(
            "mjcore.random.multivariate_normal: method must be one of 'svd', 'eigh' and "
            f"'cholesky', got {method!r}"
        )
    mean, cov = _as_array(mean), _as_array(cov)
    pdtype = np.promote_types(get_aval(mean).dtype, get_aval(cov).dtype)
    if dtypes.kind(pdtype) not in "fc":
        pdtype = np.dtype("float64")
    mean, cov = lax.convert_element_type(mean, pdtype), lax.convert_element_type(cov, pdtype)
    dtype = pdtype if dtype is None else dtype
    dtype = _float_dtype("mjcore.random.multivariate_normal", dtype)
    mshape, cshape = get_aval(mean).shape, get_aval(cov).shape
    name = "mjcore.random.multivariate_normal"
    if len(mshape) < 1:
        raise ValueError(f"{name}: requires mean.ndim >= 1, got mean.ndim == {len(mshape)}")
    if len(cshape) < 2:
        raise ValueError(f"{name}: requires cov.ndim >= 2, got cov.ndim == {len(cshape)}")
    n = mshape[-1]
    if cshape[-2:] != (n, n):
        raise ValueError(
            f"{name}: requires cov.shape == (..., n, n) for n={n}, but got cov.shape == {cshape}"
        )
    batch = tuple(np.broadcast_shapes(mshape[:-1], cshape[:-2]))
    if shape is None:
        shape = batch
    else:
        shape = _shape_of("multivariate_normal", shape)
        _check_param_shapes(name, shape, np.empty(mshape[:-1], bool), np.empty(cshape[:-2], bool))
    return _multivariate_normal(key, mean, cov, shape, dtype, method)


@jit(static_argnums=(1, 2, 3, 4))
def _orthogonal(key: Any, n: int, m: int, shape: Shape, dtype: np.dtype) -> Any:
    z = _normal(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = lax.qr(z, full_matrices=False)
    d = _last_axis_diagonal(r)
    x = lax.mul(q, lax.expand_dims(lax.sign(d), (len(shape),)))
    return _swap_last(x) if n < m else x


def orthogonal(
    key: ArrayLike, n: int, shape: Sequence[int] = (), dtype: Any = float, m: int | None = None
) -> Any:
    """Random `(*shape, n, m)` matrices with orthonormal rows or columns (whichever are
    fewer), uniform over the orthogonal (unitary, for complex) group, as
    `jax.random.orthogonal`: the signed QR factor of a normal matrix (Mezzadri, 2007)."""
    key = _check_key("orthogonal", key)
    dtype = _float_dtype("mjcore.random.orthogonal", dtype, "fc")
    n = _static_int("orthogonal", "n", n)
    m = n if m is None else _static_int("orthogonal", "m", m)
    return _orthogonal(key, n, m, _shape_of("orthogonal", shape), dtype)


def _static_int(name: str, arg: str, x: Any) -> int:
    if isinstance(x, Tracer):
        raise TypeError(
            f"mjcore.random.{name}: {arg} must be a concrete integer (it sets the output "
            "shape), got a traced value"
        )
    try:
        value = operator.index(x)
    except TypeError as err:
        raise TypeError(f"mjcore.random.{name}: {arg} must be an integer, got {x!r}") from err
    if value < 0:
        raise ValueError(f"mjcore.random.{name}: {arg} must be nonnegative, got {value}")
    return value


# --- gamma and its relatives ----------------------------------------------------------------


def _gamma_one(key: Any, alpha: Any, log_space: bool) -> Any:
    """One Gamma(alpha) draw (or its log) by Marsaglia and Tsang's rejection method, with
    JAX's exact sequence of keys so the draws match bit for bit."""
    dtype = get_aval(alpha).dtype
    zero, one = _const(0.0, dtype), _const(1.0, dtype)
    # alpha < 1 is boosted: Gamma(alpha) ~ Gamma(alpha + 1) * Uniform ** (1 / alpha).
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select_n(boost_mask, lax.add(alpha, one), alpha)
    d = lax.sub(alpha, 1.0 / 3.0)
    c = lax.div(_const(1.0 / 3.0, dtype), lax.sqrt(d))

    def cond_fn(state: tuple) -> Any:
        _, x_sq, v, u = state
        squeeze = lax.ge(u, lax.sub(one, lax.mul(0.0331, lax.mul(x_sq, x_sq))))
        log_test = lax.ge(
            lax.log(u),
            lax.add(lax.mul(x_sq, 0.5), lax.mul(d, lax.add(lax.sub(one, v), lax.log(v)))),
        )
        return lax.bitwise_and(squeeze, log_test)

    def next_xv(state: tuple) -> tuple:
        key, subkey = _split_rows(state[0])
        x = _normal_real(subkey, (), dtype)
        return key, x, lax.add(one, lax.mul(x, c))

    def body_fn(state: tuple) -> tuple:
        key, x_key, u_key = _split_n(state[0], 3)
        _, x, v = while_loop(
            lambda s: lax.le(s[2], zero), next_xv, (x_key, zero, _const(-1.0, dtype))
        )
        u = _unif(u_key, (), dtype)
        return key, lax.mul(x, x), lax.mul(lax.mul(v, v), v), u

    key, subkey = _split_rows(key)
    # The initial state makes cond_fn true, so the body runs at least once.
    _, _, v, _ = while_loop(cond_fn, body_fn, (key, zero, one, _const(2.0, dtype)))
    if log_space:
        log_samples = lax.neg(_exponential(subkey, (), dtype))
        no_boost = lax.bitwise_or(boost_mask, lax.eq(log_samples, zero))
        log_boost = lax.select_n(no_boost, lax.mul(log_samples, lax.div(one, alpha_orig)), zero)
        return lax.add(lax.add(lax.log(d), lax.log(v)), log_boost)
    samples = lax.sub(one, _unif(subkey, (), dtype))
    boost = lax.select_n(boost_mask, lax.pow(samples, lax.div(one, alpha_orig)), one)
    return lax.mul(lax.mul(d, v), boost)


random_gamma_p = Primitive("random_gamma")


def _random_gamma(key: Any, a: Any, log_space: bool) -> Any:
    """Gamma(a) draws (or their logs), one per element of `a`; `key` is one key, or a batch of
    keys leading `a`'s shape (one per leading slice)."""
    return random_gamma_p.bind1(key, a, log_space=bool(log_space))


@random_gamma_p.def_abstract_eval
def _random_gamma_abstract_eval(key: ShapedArray, a: ShapedArray, *, log_space: bool) -> Any:
    return ShapedArray(a.shape, a.dtype)


def _random_gamma_lowering_fun(key: Any, a: Any, *, log_space: bool) -> Any:
    # As JAX: each key splits into one key per element of its slice of `a`, and one flat vmap
    # over all elements runs the rejection loop (so batches compile to JAX's program).
    kshape, ashape = get_aval(key).shape[:-1], get_aval(a).shape
    n, n_keys = math.prod(ashape[len(kshape) :]), math.prod(kshape)
    if n * n_keys == 0:
        return a
    keys = vmap(lambda k: _split(k, (n,)))(lax.reshape(key, (n_keys, 2)))
    keys = lax.reshape(keys, (n_keys * n, 2))
    alphas = lax.reshape(a, (n_keys * n,))
    samples = vmap(lambda k, alpha: _gamma_one(k, alpha, log_space))(keys, alphas)
    return lax.reshape(samples, ashape)


random_gamma_p.def_lowering(lower_fun(_random_gamma_lowering_fun))


@random_gamma_p.def_batching
def _random_gamma_batching(vals: Any, dims: Any, *, log_space: bool) -> Any:
    (key, a), (key_bdim, a_bdim) = vals, dims
    size = next(
        get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not NOT_MAPPED
    )
    key, a = moveaxis_to(key, key_bdim, 0, size), moveaxis_to(a, a_bdim, 0, size)
    return _random_gamma(key, a, log_space), 0


@random_gamma_p.def_jvp
def _random_gamma_jvp(primals: Any, tangents: Any, *, log_space: bool) -> Any:
    # Implicit reparameterisation: d sample / d a = -(dF/da) / (dF/dx) for the Gamma CDF F.
    (key, a), (_, a_dot) = primals, tangents
    sample = _random_gamma(key, a, log_space)
    if log_space:
        # d log(x) = dx / x; exp(log x) may round to 0, which becomes the smallest normal.
        x = lax.exp(sample)
        dtype = get_aval(x).dtype
        x = lax.select_n(lax.eq(x, _const(0.0, dtype)), x, lax.full_like(x, _finfo(dtype, "tiny")))
        grad = lax.div(lax.random_gamma_grad(a, x), x)
    else:
        grad = lax.random_gamma_grad(a, sample)
    return sample, lax.mul(a_dot, grad)


@jit(static_argnums=(2, 3, 4))
def _gamma(key: Any, a: Any, shape: Shape, dtype: np.dtype, log_space: bool) -> Any:
    a = _broadcast_param(lax.convert_element_type(a, dtype), shape)
    return _random_gamma(key, a, log_space)


def _gamma_args(name: str, key: Any, a: Any, shape: Any, dtype: Any) -> tuple:
    key = _check_key(name, key)
    dtype = _float_dtype(f"mjcore.random.{name}", dtype)
    a = _as_param(a, dtype)
    return key, a, _param_shape(name, shape, a), dtype


def gamma(
    key: ArrayLike, a: ArrayLike, shape: Sequence[int] | None = None, dtype: Any = float
) -> Any:
    """Gamma(a, 1) floats (density proportional to `x^(a - 1) e^-x`), as
    `jax.random.gamma`: Marsaglia and Tsang's rejection loop per element; differentiable in
    `a` by implicit reparameterisation (`lax.random_gamma_grad`). `shape` defaults to
    `a.shape`."""
    key, a, shape, dtype = _gamma_args("gamma", key, a, shape, dtype)
    return _gamma(key, a, shape, dtype, False)


def loggamma(
    key: ArrayLike, a: ArrayLike, shape: Sequence[int] | None = None, dtype: Any = float
) -> Any:
    """The log of Gamma(a, 1) draws, computed in log space (accurate for small `a`, where
    the draws themselves underflow), as `jax.random.loggamma`; differentiable in `a`."""
    key, a, shape, dtype = _gamma_args("loggamma", key, a, shape, dtype)
    return _gamma(key, a, shape, dtype, True)


@jit(static_argnums=(2, 3))
def _chisquare(key: Any, df: Any, shape: Shape, dtype: np.dtype) -> Any:
    half_df = lax.div(lax.convert_element_type(df, dtype), 2.0)
    return lax.mul(lax.exp(_gamma(key, half_df, shape, dtype, True)), 2.0)


def chisquare(
    key: ArrayLike, df: ArrayLike, shape: Sequence[int] | None = None, dtype: Any = float
) -> Any:
    """Chi-square floats with `df` degrees of freedom, as `jax.random.chisquare`:
    `2 exp(loggamma(df / 2))`; differentiable in `df`."""
    key = _check_key("chisquare", key)
    dtype = _float_dtype("mjcore.random.chisquare", dtype)
    _check_safe_cast("chisquare", dtype, df)
    df = _as_param(df, dtype)
    return _chisquare(key, df, _param_shape("chisquare", shape, df), dtype)


@jit(static_argnums=(3, 4))
def _f(key: Any, dfnum: Any, dfden: Any, shape: Shape, dtype: np.dtype) -> Any:
    dfnum = lax.convert_element_type(dfnum, dtype)
    dfden = lax.convert_element_type(dfden, dtype)
    key_dfd, key_dfn = _split_rows(key)
    num = lax.div(_chisquare(key_dfn, dfnum, shape, dtype), dfnum)
    den = lax.div(_chisquare(key_dfd, dfden, shape, dtype), dfden)
    return lax.div(num, den)


def f(
    key: ArrayLike,
    dfnum: ArrayLike,
    dfden: ArrayLike,
    shape: Sequence[int] | None = None,
    dtype: Any = float,
) -> Any:
    """F-distributed floats, the ratio of two scaled chi-squares, as `jax.random.f`."""
    key = _check_key("f", key)
    dtype = _float_dtype("mjcore.random.f", dtype)
    _check_safe_cast("f", dtype, dfnum, dfden)
    dfnum, dfden = _as_param(dfnum, dtype), _as_param(dfden, dtype)
    return _f(key, dfnum, dfden, _param_shape("f", shape, dfnum, dfden), dtype)


@jit(static_argnums=(2, 3))
def _t(key: Any, df: Any, shape: Shape, dtype: np.dtype) -> Any:
    df = lax.convert_element_type(df, dtype)
    key_n, key_g = _split_rows(key)
    n = _normal_real(key_n, shape, dtype)
    half_df = lax.div(df, 2.0)
    g = _gamma(key_g, half_df, shape, dtype, False)
    return lax.mul(n, lax.sqrt(lax.div(half_df, g)))


def t(key: ArrayLike, df: ArrayLike, shape: Sequence[int] | None = None, dtype: Any = float) -> Any:
    """Student's t floats with `df` degrees of freedom, as `jax.random.t`:
    `normal * sqrt(df / 2 / gamma(df / 2))`."""
    key = _check_key("t", key)
    dtype = _float_dtype("mjcore.random.t", dtype)
    _check_safe_cast("t", dtype, df)
    df = _as_param(df, dtype)
    return _t(key, df, _param_shape("t", shape, df), dtype)


@jit(static_argnums=(3, 4))
def _beta(key: Any, a: Any, b: Any, shape: Shape, dtype: np.dtype) -> Any:
    a = lax.convert_element_type(a, dtype)
    b = lax.convert_element_type(b, dtype)
    key_a, key_b = _split_rows(key)
    log_gamma_a = _gamma(key_a, a, shape, dtype, True)
    log_gamma_b = _gamma(key_b, b, shape, dtype, True)
    # gamma_a / (gamma_a + gamma_b), scaled by the larger so that neither underflows.
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a_scaled = lax.exp(lax.sub(log_gamma_a, log_max))
    gamma_b_scaled = lax.exp(lax.sub(log_gamma_b, log_max))
    return lax.div(gamma_a_scaled, lax.add(gamma_a_scaled, gamma_b_scaled))


def beta(
    key: ArrayLike,
    a: ArrayLike,
    b: ArrayLike,
    shape: Sequence[int] | None = None,
    dtype: Any = float,
) -> Any:
    """Beta(a, b) floats, as `jax.random.beta`: two log-space gamma draws; differentiable in
    `a` and `b`."""
    key = _check_key("beta", key)
    dtype = _float_dtype("mjcore.random.beta", dtype)
    _check_safe_cast("beta", dtype, a, b)
    a, b = _as_param(a, dtype), _as_param(b, dtype)
    return _beta(key, a, b, _param_shape("beta", shape, a, b), dtype)


@jit(static_argnums=(2, 3))
def _dirichlet(key: Any, alpha: Any, shape: Shape, dtype: np.dtype) -> Any:
    alpha = lax.convert_element_type(alpha, dtype)
    n = get_aval(alpha).shape[-1]
    # Log-space gammas, normalised by a softmax: small alphas would underflow otherwise.
    x = _gamma(key, alpha, (*shape, n), dtype, True)
    axis = len(shape)
    x_max = lax.stop_gradient(lax.expand_dims(lax.reduce_max(x, (axis,)), (axis,)))
    unnormalized = lax.exp(lax.sub(x, x_max))
    return lax.div(unnormalized, lax.expand_dims(lax.reduce_sum(unnormalized, (axis,)), (axis,)))


def dirichlet(
    key: ArrayLike, alpha: ArrayLike, shape: Sequence[int] | None = None, dtype: Any = float
) -> Any:
    """Dirichlet(alpha) vectors, as `jax.random.dirichlet`: the softmax of log-space gamma
    draws. `alpha` is `(..., n)`; the result is `shape + (n,)` with `shape` defaulting to
    `alpha.shape[:-1]`. Differentiable in `alpha`."""
    key = _check_key("dirichlet", key)
    dtype = _float_dtype("mjcore.random.dirichlet", dtype)
    alpha = _as_param(alpha, dtype)
    ashape = get_aval(alpha).shape
    if not ashape:
        raise ValueError("mjcore.random.dirichlet: requires alpha.ndim >= 1, got alpha.ndim == 0")
    if shape is None:
        shape = ashape[:-1]
    else:
        shape = _shape_of("dirichlet", shape)
        _check_param_shapes("mjcore.random.dirichlet", shape, np.empty(ashape[:-1], bool))
    return _dirichlet(key, alpha, shape, dtype)


def _generalized_normal_core(key: Any, p: Any, shape: Shape, dtype: np.dtype) -> Any:
    key_g, key_r = _split_rows(key)
    # 1 / p in p's own precision (float64 for a Python scalar), as JAX computes it.
    inv_p = lax.div(lax.full((), 1, get_aval(p).dtype), p)
    g = _gamma(key_g, inv_p, shape, dtype, False)
    r = _rademacher(key_r, shape, dtype)
    return lax.mul(r, lax.pow(g, lax.convert_element_type(inv_p, dtype)))


@jit(static_argnums=(2, 3))
def _generalized_normal(key: Any, p: Any, shape: Shape, dtype: np.dtype) -> Any:
    return _generalized_normal_core(key, p, shape, dtype)


def generalized_normal(
    key: ArrayLike, p: ArrayLike, shape: Sequence[int] = (), dtype: Any = float
) -> Any:
    """Generalized normal floats (density proportional to `exp(-|x|^p)`), as
    `jax.random.generalized_normal`: `rademacher * gamma(1 / p) ** (1 / p)`."""
    key = _check_key("generalized_normal", key)
    dtype = _float_dtype("mjcore.random.generalized_normal", dtype)
    p = _param(p)
    return _generalized_normal(key, p, _param_shape("generalized_normal", shape, p), dtype)


@jit(static_argnums=(2, 3, 4))
def _ball(key: Any, p: Any, d: int, shape: Shape, dtype: np.dtype) -> Any:
    k1, k2 = _split_rows(key)
    g = _generalized_normal_core(k1, p, (*shape, d), dtype)
    e = _exponential(k2, shape, dtype)
    p_dtype = lax.convert_element_type(p, dtype)
    norm = lax.add(lax.reduce_sum(lax.pow(lax.abs(g), p_dtype), (len(shape),)), e)
    inv_p = lax.convert_element_type(lax.div(lax.full((), 1, get_aval(p).dtype), p), dtype)
    return lax.div(g, lax.expand_dims(lax.pow(norm, inv_p), (len(shape),)))


def ball(
    key: ArrayLike, d: int, p: float = 2, shape: Sequence[int] = (), dtype: Any = float
) -> Any:
    """Points uniform in the unit Lp ball of dimension `d`, shape `shape + (d,)`, as
    `jax.random.ball` (generalized normals scaled by an exponential)."""
    key = _check_key("ball", key)
    dtype = _float_dtype("mjcore.random.ball", dtype)
    d = _static_int("ball", "d", d)
    p = _param(p)
    if get_aval(p).ndim:
        raise ValueError(f"mjcore.random.ball: p must be a scalar, got shape {get_aval(p).shape}")
    if dtypes.kind(get_aval(p).dtype) not in "fc":
        p = lax.convert_element_type(p, np.dtype("float64"))
    return _ball(key, p, d, _shape_of("ball", shape), dtype)


# --- truncated normal -----------------------------------------------------------------------


@jit(static_argnums=(3, 4))
def _truncated_normal(key: Any, lower: Any, upper: Any, shape: Shape, dtype: np.dtype) -> Any:
    sqrt2 = _const(np.sqrt(2), dtype)
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)
    a = lax.erf(lax.div(lower, sqrt2))
    b = lax.erf(lax.div(upper, sqrt2))
    u = _uniform_core(key, _broadcast_param(a, shape), _broadcast_param(b, shape), shape, dtype)
    out = lax.mul(sqrt2, lax.erf_inv(u))
    # Clamp to the open interval (lower, upper): rounding, or drawing `a` itself, could reach
    # the bounds.
    inf = _const(np.inf, dtype)
    lo = lax.nextafter(lax.stop_gradient(lower), lax.broadcast_to(inf, get_aval(lower).shape))
    hi = lax.nextafter(
        lax.stop_gradient(upper), lax.broadcast_to(lax.neg(inf), get_aval(upper).shape)
    )
    return lax.min(hi, lax.max(lo, out))


def truncated_normal(
    key: ArrayLike,
    lower: ArrayLike,
    upper: ArrayLike,
    shape: Sequence[int] | None = None,
    dtype: Any = float,
) -> Any:
    """Standard normal floats truncated to the open interval (lower, upper), as
    `jax.random.truncated_normal` (inverse CDF of a uniform between the bounds' CDFs);
    differentiable in the bounds. `shape` defaults to their broadcast shape."""
    key = _check_key("truncated_normal", key)
    dtype = _float_dtype("mjcore.random.truncated_normal", dtype)
    lower, upper = _as_param(lower, dtype), _as_param(upper, dtype)
    shape = _param_shape("truncated_normal", shape, lower, upper)
    return _truncated_normal(key, lower, upper, shape, dtype)


# --- poisson and binomial -------------------------------------------------------------------


def _any(x: Any) -> Any:
    return lax.reduce_or(x, tuple(range(get_aval(x).ndim)))


def _poisson_knuth(key: Any, lam: Any, shape: Shape, dtype: np.dtype) -> Any:
    # Knuth: count uniforms until their product drops below exp(-lam).
    f32 = np.dtype("float32")
    neg_lam = lax.neg(lam)

    def body_fn(carry: tuple) -> tuple:
        i, k, rng, log_prod = carry
        rng, subkey = _split_rows(rng)
        k = lax.select_n(lax.gt(log_prod, neg_lam), k, lax.add(k, _const(1, dtype)))
        u = _unif(subkey, shape, f32)
        return lax.add(i, _const(1, _I64)), k, rng, lax.add(log_prod, lax.log(u))

    def cond_fn(carry: tuple) -> Any:
        return _any(lax.gt(carry[3], neg_lam))

    init = (_const(0, _I64), lax.full(shape, 0, dtype), key, lax.full(shape, 0.0, f32))
    k = while_loop(cond_fn, body_fn, init)[1]
    return lax.sub(k, _const(1, dtype))


def _poisson_rejection(key: Any, lam: Any, shape: Shape, dtype: np.dtype) -> Any:
    # Hormann's transformed rejection (PTRS).
    fdtype = get_aval(lam).dtype
    log_lam = lax.log(lam)
    b = lax.add(0.931, lax.mul(2.53, lax.sqrt(lam)))
    a = lax.add(-0.059, lax.mul(0.02483, b))
    inv_alpha = lax.add(1.1239, lax.div(1.1328, lax.sub(b, 3.4)))
    v_r = lax.sub(0.9277, lax.div(3.6224, lax.sub(b, 2.0)))

    def body_fn(carry: tuple) -> tuple:
        k_out, accepted, key = carry
        key, subkey_0, subkey_1 = _split_n(key, 3)
        u = lax.sub(_unif(subkey_0, shape, fdtype), 0.5)
        v = _unif(subkey_1, shape, fdtype)
        u_shifted = lax.sub(0.5, lax.abs(u))
        k = lax.floor(
            lax.add(lax.add(lax.mul(lax.add(lax.div(lax.mul(2.0, a), u_shifted), b), u), lam), 0.43)
        )
        s = lax.log(
            lax.div(lax.mul(v, inv_alpha), lax.add(lax.div(a, lax.mul(u_shifted, u_shifted)), b))
        )
        t = lax.sub(lax.add(lax.neg(lam), lax.mul(k, log_lam)), lax.lgamma(lax.add(k, 1.0)))
        accept1 = lax.bitwise_and(lax.ge(u_shifted, 0.07), lax.le(v, v_r))
        reject = lax.bitwise_or(
            lax.lt(k, 0.0), lax.bitwise_and(lax.lt(u_shifted, 0.013), lax.gt(v, u_shifted))
        )
        accept = lax.bitwise_or(accept1, lax.bitwise_and(lax.bitwise_not(reject), lax.le(s, t)))
        return lax.select_n(accept, k_out, k), lax.bitwise_or(accepted, accept), key

    def cond_fn(carry: tuple) -> Any:
        return _any(lax.bitwise_not(carry[1]))

    init = (lax.full(shape, -1.0, fdtype), lax.full(shape, False, np.dtype(bool)), key)
    return lax.convert_element_type(while_loop(cond_fn, body_fn, init)[0], dtype)


@jit(static_argnums=(2, 3))
def _poisson(key: Any, lam: Any, shape: Shape, dtype: np.dtype) -> Any:
    # Knuth's method below lam = 10, transformed rejection above (as TensorFlow and NumPy);
    # both loops run on the same key, each on a harmless lam where the other is used.
    use_knuth = lax.bitwise_or(lax.ne(lam, lam), lax.lt(lam, 10.0))
    lam_knuth = lax.select_n(use_knuth, lax.full_like(lam, 0.0), lam)
    lam_rejection = lax.select_n(use_knuth, lam, lax.full_like(lam, 1e5))
    result = lax.select_n(
        use_knuth,
        _poisson_rejection(key, lam_rejection, shape, dtype),
        _poisson_knuth(key, lam_knuth, shape, dtype),
    )
    return lax.select_n(lax.eq(lam, 0.0), result, lax.full(shape, 0, dtype))


def poisson(
    key: ArrayLike, lam: ArrayLike, shape: Sequence[int] | None = None, dtype: Any = int
) -> Any:
    """Poisson(lam) integers (int64 by default), as `jax.random.poisson`: `lam` is taken in
    float32 (as JAX does), Knuth's method for lam < 10, Hormann's transformed rejection
    above. `shape` defaults to `lam.shape`."""
    key = _check_key("poisson", key)
    dtype = dtypes.canonicalize_dtype(int if dtype is None else dtype, "mjcore.random.poisson")
    if dtype.kind not in "iu":
        raise TypeError(f"mjcore.random.poisson: dtype must be an integer dtype, got {dtype.name}")
    lam = _param(lam)
    shape = _param_shape("poisson", shape, lam)
    lam = _broadcast_param(lax.convert_element_type(lam, np.dtype("float32")), shape)
    return _poisson(key, lam, shape, dtype)


_STIRLING_TAIL = np.array(
    [
        0.0810614667953272,
        0.0413406959554092,
        0.0276779256849983,
        0.02079067210376509,
        0.0166446911898211,
        0.0138761288230707,
        0.0118967099458917,
        0.0104112652619720,
        0.00925546218271273,
        0.00833056343336287,
    ]
)


def _stirling_approx_tail(k: Any) -> Any:
    """log(k!) minus its Stirling approximation: tabulated for k <= 9, else a series (of the
    clamped k, exactly as JAX evaluates it)."""
    dtype = get_aval(k).dtype
    use_tail_values = lax.le(k, 9.0)
    k = lax.clamp(_const(0.0, dtype), k, _const(9.0, dtype))
    kp1 = lax.add(k, 1.0)
    kp1sq = lax.mul(kp1, kp1)
    approx = lax.div(
        lax.sub(1.0 / 12, lax.div(lax.sub(1.0 / 360, lax.div(1.0 / 1260, kp1sq)), kp1sq)), kp1
    )
    table = lax.convert_element_type(_STIRLING_TAIL, dtype)
    tail = _take(table, lax.convert_element_type(lax.floor(k), np.dtype("int32")), 0)
    return lax.select_n(use_tail_values, approx, tail)


def _binomial_inversion(key: Any, count: Any, prob: Any, shape: Shape, dtype: np.dtype) -> Any:
    # Count geometric waiting times until their sum passes `count`.
    fdtype = get_aval(prob).dtype
    log1minusprob = lax.log1p(lax.neg(prob))

    def body_fn(carry: tuple) -> tuple:
        num_geom, geom_sum, key = carry
        subkey, key = _split_rows(key)
        active = lax.le(geom_sum, count)
        num_geom_out = lax.select_n(active, num_geom, lax.add(num_geom, 1.0))
        u = _unif(subkey, shape, fdtype)
        geom = lax.ceil(lax.div(lax.log(u), log1minusprob))
        return num_geom_out, lax.add(geom_sum, geom), key

    def cond_fn(carry: tuple) -> Any:
        return _any(lax.le(carry[1], count))

    zeros = lax.full(shape, 0.0, fdtype)
    k = while_loop(cond_fn, body_fn, (zeros, zeros, key))[0]
    return lax.convert_element_type(lax.sub(k, 1.0), dtype)


def _btrs(key: Any, count: Any, prob: Any, shape: Shape, dtype: np.dtype) -> Any:
    # Hormann's transformed rejection with squeeze (BTRS).
    fdtype = get_aval(prob).dtype
    stddev = lax.sqrt(lax.mul(lax.mul(count, prob), lax.sub(1.0, prob)))
    b = lax.add(1.15, lax.mul(2.53, stddev))
    a = lax.add(lax.add(-0.0873, lax.mul(0.0248, b)), lax.mul(0.01, prob))
    c = lax.add(lax.mul(count, prob), 0.5)
    v_r = lax.sub(0.92, lax.div(4.2, b))
    r = lax.div(prob, lax.sub(1.0, prob))
    alpha = lax.mul(lax.add(2.83, lax.div(5.1, b)), stddev)
    m = lax.floor(lax.mul(lax.add(count, 1.0), prob))
    st = _stirling_approx_tail

    def body_fn(carry: tuple) -> tuple:
        k_out, accepted, key = carry
        key, subkey_0, subkey_1 = _split_n(key, 3)
        u = _unif(subkey_0, shape, fdtype)
        v = _unif(subkey_1, shape, fdtype)
        u = lax.sub(u, 0.5)
        us = lax.sub(0.5, lax.abs(u))
        accept1 = lax.bitwise_and(lax.ge(us, 0.07), lax.le(v, v_r))
        k = lax.floor(lax.add(lax.mul(lax.add(lax.div(lax.mul(2.0, a), us), b), u), c))
        reject = lax.bitwise_or(lax.lt(k, 0.0), lax.gt(k, count))
        v = lax.log(lax.div(lax.mul(v, alpha), lax.add(lax.div(a, lax.mul(us, us)), b)))
        cm1 = lax.add(lax.sub(count, m), 1.0)
        ck1 = lax.add(lax.sub(count, k), 1.0)
        ub = lax.mul(lax.add(m, 0.5), lax.log(lax.div(lax.add(m, 1.0), lax.mul(r, cm1))))
        ub = lax.add(ub, lax.mul(lax.add(count, 1.0), lax.log(lax.div(cm1, ck1))))
        ub = lax.add(
            ub, lax.mul(lax.add(k, 0.5), lax.log(lax.div(lax.mul(r, ck1), lax.add(k, 1.0))))
        )
        ub = lax.add(lax.add(ub, st(m)), st(lax.sub(count, m)))
        ub = lax.sub(lax.sub(ub, st(k)), st(lax.sub(count, k)))
        accept = lax.bitwise_or(accept1, lax.bitwise_and(lax.bitwise_not(reject), lax.le(v, ub)))
        return lax.select_n(accept, k_out, k), lax.bitwise_or(accepted, accept), key

    def cond_fn(carry: tuple) -> Any:
        return _any(lax.bitwise_not(carry[1]))

    init = (lax.full(shape, -1.0, fdtype), lax.full(shape, False, np.dtype(bool)), key)
    return lax.convert_element_type(while_loop(cond_fn, body_fn, init)[0], dtype)


@jit(static_argnums=(3, 4))
def _binomial(key: Any, count: Any, prob: Any, shape: Shape, dtype: np.dtype) -> Any:
    # Inversion for count * min(p, 1 - p) <= 10, BTRS above (as TensorFlow Probability); both
    # loops run on the same key.
    fdtype = get_aval(prob).dtype
    count = _broadcast_param(lax.convert_element_type(count, fdtype), shape)
    prob = _broadcast_param(prob, shape)
    nan, inf = lax.full(shape, np.nan, dtype), lax.full(shape, np.inf, dtype)
    p_lt_half = lax.lt(prob, 0.5)
    q = lax.select_n(p_lt_half, lax.sub(1.0, prob), prob)
    count_nan_or_neg = lax.bitwise_or(lax.ne(count, count), lax.lt(count, 0.0))
    count_inf = lax.eq(lax.abs(count), np.inf)
    q_is_nan = lax.ne(q, q)
    q_l_0 = lax.lt(q, 0.0)
    q = lax.select_n(lax.bitwise_or(q_is_nan, q_l_0), q, lax.full_like(q, 0.01))
    use_inversion = lax.bitwise_or(count_nan_or_neg, lax.le(lax.mul(count, q), 10.0))
    count = lax.floor(count)
    count_inv = lax.select_n(use_inversion, lax.full_like(count, 0.0), count)
    count_btrs = lax.select_n(use_inversion, count, lax.full_like(count, 1e4))
    q_btrs = lax.select_n(use_inversion, q, lax.full_like(q, 0.5))
    samples = lax.select_n(
        use_inversion,
        _btrs(key, count_btrs, q_btrs, shape, dtype),
        _binomial_inversion(key, count_inv, q, shape, dtype),
    )
    # NaN for a NaN or negative q or count, inf for an infinite count.
    invalid = lax.bitwise_or(lax.bitwise_or(q_l_0, q_is_nan), count_nan_or_neg)
    samples = lax.select_n(invalid, samples, nan)
    samples = lax.select_n(lax.bitwise_and(count_inf, lax.bitwise_not(invalid)), samples, inf)
    kept = lax.bitwise_or(lax.bitwise_or(p_lt_half, count_nan_or_neg), q_is_nan)
    kept = lax.bitwise_or(kept, count_inf)
    return lax.select_n(kept, lax.sub(lax.convert_element_type(count, dtype), samples), samples)


def binomial(
    key: ArrayLike,
    n: ArrayLike,
    p: ArrayLike,
    shape: Sequence[int] | None = None,
    dtype: Any = float,
) -> Any:
    """Binomial(n, p) counts as floats, as `jax.random.binomial`: geometric-sum inversion
    for small `n * min(p, 1 - p)`, BTRS above. NaN for a NaN or negative `n` or invalid `p`,
    inf for an infinite `n`. `shape` defaults to the broadcast shape of `n` and `p`."""
    key = _check_key("binomial", key)
    dtype = _float_dtype("mjcore.random.binomial", dtype)
    n, p = _param(n), _param(p)
    if dtypes.kind(get_aval(p).dtype) not in "f":
        p = lax.convert_element_type(p, np.dtype("float64"))
    shape = _param_shape("binomial", shape, n, p)
    return _binomial(key, n, p, shape, dtype)


def multinomial(
    key: ArrayLike,
    n: ArrayLike,
    p: ArrayLike,
    *,
    shape: Sequence[int] | None = None,
    dtype: Any = float,
    unroll: int | bool = 1,
) -> Any:
    """Multinomial counts of `n` trials over the outcomes on `p`'s last axis, as
    `jax.random.multinomial`: a scan of conditional binomials, one key per outcome.

    `shape` (the full result shape, last axis the outcomes) defaults to `p.shape`; `n`
    broadcasts to `shape[:-1]`.

    NB: `unroll` is accepted for JAX's signature; the scan is not unrolled.
    """
    del unroll
    key = _check_key("multinomial", key)
    dtype = _float_dtype("mjcore.random.multinomial", dtype)
    n, p = _param(n), _param(p)
    pdtype = np.promote_types(get_aval(n).dtype, get_aval(p).dtype)
    if dtypes.kind(pdtype) != "f":
        pdtype = np.dtype("float64")
    n, p = lax.convert_element_type(n, pdtype), lax.convert_element_type(p, pdtype)
    if get_aval(p).ndim == 0:
        raise ValueError("mjcore.random.multinomial: p must have at least one axis")
    shape = get_aval(p).shape if shape is None else _shape_of("multinomial", shape)
    _check_param_shapes("mjcore.random.multinomial", shape[:-1], n)
    _check_param_shapes("mjcore.random.multinomial", shape, p)
    return _multinomial(key, n, p, shape, dtype)


@jit(static_argnums=(3, 4))
def _multinomial(key: Any, n: Any, p: Any, shape: Shape, dtype: np.dtype) -> Any:
    n = _broadcast_param(n, shape[:-1])
    p = _broadcast_param(p, shape)
    nd = len(shape)
    p = lax.transpose(p, (nd - 1, *range(nd - 1)))
    remaining = lax.cumsum(p, 0, reverse=True)
    ratios = lax.div(
        p, lax.select_n(lax.eq(remaining, 0.0), remaining, lax.full_like(remaining, 1.0))
    )
    keys = _split(key, (shape[-1],))
    fdtype = get_aval(n).dtype

    def step(remainder: Any, ratio_key: tuple) -> tuple:
        ratio, k = ratio_key
        ratio = lax.clamp(_const(0.0, fdtype), ratio, _const(1.0, fdtype))
        count = _binomial(k, remainder, ratio, get_aval(ratio).shape, fdtype)
        return lax.sub(remainder, count), count

    _, counts = scan(step, n, (ratios, keys))
    return lax.convert_element_type(lax.transpose(counts, (*range(1, nd), 0)), dtype)
