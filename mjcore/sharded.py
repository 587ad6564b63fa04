"""Arrays made of shards: an `Array` whose value lives as slices on several devices.

A `ShardedArray` holds jaxlib's multi-device buffer (one single-device buffer per device of
its sharding, in the sharding's device order) and its mjcore `Sharding`. Sharded jit
(`mjcore.sharded_jit`) takes and returns these buffers as they are.

Eager operations on a sharded Array gather it: its `_buf` (what eager dispatch runs on) is
the whole value on the default device, made on first use, and `np.asarray` / printing read
the whole value assembled on the host. Results of eager operations are therefore ordinary
single-device Arrays. That keeps every eager rule correct without a partitioned program per
operation; to keep a computation sharded, put it under `jit` (as JAX users do for speed).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from mjcore import core, dtypes
from mjcore import sharding as sharding_mod
from mjcore.array import Array, wrap_buffer
from mjcore.backend import client as backend
from mjcore.core import ShapedArray
from mjcore.sharding import Index, NamedSharding, Sharding, SingleDeviceSharding

Device = Any


class Shard(NamedTuple):
    """One device's part of an Array: `data` is its slice `index` of the whole, on `device`;
    `replica_id` counts the copies of the same slice (0 for the first)."""

    device: Device
    index: Index  # type: ignore[assignment]  # JAX's field name (shadows tuple.index)
    replica_id: int
    data: Array


class ShardedArray(Array):
    """An Array laid out over several devices as `.sharding` says."""

    __slots__ = ("_shards", "_sharding")

    def __init__(self, shards: Any, aval: ShapedArray, sharding: Sharding):
        super().__init__(None, aval)
        self._shards = shards  # jaxlib's multi-device buffer
        self._sharding = sharding
        sharding_mod.in_use = True

    @property
    def sharding(self) -> Sharding:
        return self._sharding

    @property
    def _buf(self) -> Any:
        """The whole value on the default device (uncommitted), for eager operations."""
        buf = self._dbuf
        if buf is None:
            buf = self._dbuf = backend.device_put(np.asarray(self._value()))
        return buf

    def _value(self) -> np.ndarray:
        host = self._npy
        if host is None:
            if self._shards.is_deleted():
                raise backend.deleted_error(self._shards)
            host = self._npy = backend.gather_to_numpy(
                self._shards, self._sharding, self.aval.shape, self.aval.dtype
            )
        return host

    @property
    def addressable_shards(self) -> list[Shard]:
        return _shards(self._shards, self._sharding, self.aval)

    @property
    def global_shards(self) -> list[Shard]:
        return self.addressable_shards

    @property
    def is_fully_replicated(self) -> bool:
        return self._sharding.is_fully_replicated

    @property
    def is_fully_addressable(self) -> bool:
        return self._sharding.is_fully_addressable

    def devices(self) -> set[Device]:
        return self._sharding.device_set

    def __repr__(self) -> str:
        if self.is_fully_addressable or self.is_fully_replicated:
            return super().__repr__()
        # Other processes hold the rest of the value (`mjcore.distributed`): JAX's summary.
        return f"Array(shape={self.aval.shape}, dtype={np.dtype(self.aval.dtype).name})"

    def __str__(self) -> str:
        if self.is_fully_addressable or self.is_fully_replicated:
            return super().__str__()
        return repr(self)

    @property
    def device(self) -> Sharding:  # type: ignore[override]
        """As JAX's: an array on several devices answers with its sharding."""
        return self._sharding

    def block_until_ready(self) -> ShardedArray:
        self._shards.block_until_ready()
        return self

    def is_deleted(self) -> bool:
        return bool(self._shards.is_deleted())


core.pytype_aval_mappings[ShardedArray] = operator.attrgetter("aval")


def _shards(buf: Any, s: Sharding, aval: ShapedArray) -> list[Shard]:
    index = s.devices_indices_map(aval.shape)
    shard_aval = ShapedArray(s.shard_shape(aval.shape), aval.dtype, aval.weak_type)
    seen: dict[Any, int] = {}
    out = []
    for dev, b in zip(s._addressable_assignment, backend.shards_of(buf), strict=True):
        idx = index[dev]
        key = tuple((sl.start, sl.stop) for sl in idx)
        replica = seen[key] = seen.get(key, -1) + 1
        out.append(Shard(dev, idx, replica, wrap_buffer(b, shard_aval)))
    return out


def array_sharding(x: Array) -> Sharding:
    """The sharding of a concrete Array (a single-device one for an ordinary Array)."""
    if isinstance(x, ShardedArray):
        return x._sharding
    buf = x._dbuf
    return SingleDeviceSharding(backend.buffer_device(buf) if buf is not None else backend.device())


def array_shards(x: Array) -> list[Shard]:
    """The shards of a concrete Array (one, the whole, for an ordinary Array)."""
    if isinstance(x, ShardedArray):
        return x.addressable_shards
    s = array_sharding(x)
    (dev,) = s.device_set
    return [Shard(dev, tuple(slice(None) for _ in x.shape), 0, x)]


# (declared in Array's TYPE_CHECKING block)
Array.sharding = property(  # type: ignore[method-assign, assignment]
    array_sharding, doc="The layout over devices: for an ordinary Array, one device."
)
Array.addressable_shards = property(  # type: ignore[method-assign, assignment]
    array_shards,
    doc="The per-device parts (`.data`, `.index`, `.device`): for an ordinary Array, one.",
)


def wrap_sharded(buf: Any, aval: ShapedArray, s: Sharding) -> Array:
    """An Array over the multi-device buffer `buf` laid out as `s`."""
    return ShardedArray(buf, aval, s)


def _check_sharding(fname: str, s: Any) -> Sharding:
    if not isinstance(s, Sharding):
        raise TypeError(
            f"{fname}: expected a Sharding (NamedSharding, SingleDeviceSharding) or a device, "
            f"got {type(s).__name__}"
        )
    return s


def device_put_sharded(x: Any, s: Sharding) -> Array:
    """`x` laid out as sharding `s` (`mjcore.device_put(x, sharding)`).

    Raises:
      ValueError: when `x`'s shape does not fit `s` (a dimension not divisible by its mesh
        axes, or fewer dimensions than the spec).
    """
    s = _check_sharding("device_put", s)
    if isinstance(x, core.Tracer):
        return _constrain_tracer(x, s)
    if isinstance(x, ShardedArray) and x._sharding == s:
        return x
    if isinstance(x, Array):
        value, aval = np.asarray(x._value()), x.aval
    else:
        aval = core.get_aval(x)
        value = np.asarray(x, aval.dtype)
        if value.dtype != dtypes.canonicalize_dtype(value.dtype):
            value = value.astype(dtypes.canonicalize_dtype(value.dtype))
    if isinstance(s, SingleDeviceSharding):
        (dev,) = s.device_set
        return wrap_buffer(backend.device_put(value, dev), aval)  # committed to `dev`
    if isinstance(s, NamedSharding):
        s.check_shape(aval.shape, "device_put")
    return ShardedArray(backend.put_sharded(value, s, aval), aval, s)


def _no_constraint(x: Any, s: Sharding) -> Any:
    raise NotImplementedError("device_put of a traced value to a sharding needs mjcore.lax")


# `lax.with_sharding_constraint`, installed by `mjcore.lax.sharding` (which builds on this
# module): a traced value put to a sharding is constrained to it.
_constrain_tracer: Callable[[Any, Sharding], Any] = _no_constraint


def install_constraint(fun: Callable[[Any, Sharding], Any]) -> None:
    """Make `device_put(tracer, sharding)` call `fun` (`lax.with_sharding_constraint`)."""
    global _constrain_tracer
    _constrain_tracer = fun


def make_array_from_callback(
    shape: Sequence[int], sharding: Sharding, data_callback: Callable[[Index], Any]
) -> Array:
    """An Array of `shape` laid out as `sharding`, each device's shard being
    `data_callback(index)` for its index (a tuple of slices), as `jax.make_array_from_callback`.

    Raises:
      ValueError: when a callback's result has the wrong shape, or `shape` does not fit.
    """
    shape = tuple(int(d) for d in shape)
    s = _check_sharding("make_array_from_callback", sharding)
    if isinstance(s, NamedSharding):
        s.check_shape(shape, "make_array_from_callback")
    index = s.devices_indices_map(shape)
    want = s.shard_shape(shape)
    bufs = []
    dtype = None
    for dev in s._addressable_assignment:  # (other processes make their own shards)
        piece = data_callback(index[dev])
        piece = np.asarray(piece._value() if isinstance(piece, Array) else piece)
        piece = piece.astype(dtypes.canonicalize_dtype(piece.dtype), copy=False)
        if piece.shape != want:
            raise ValueError(
                f"make_array_from_callback: the callback returned shape {piece.shape} for index "
                f"{index[dev]} on {dev}, but the shard shape of {s} for global shape {shape} "
                f"is {want}"
            )
        if dtype is None:
            dtype = piece.dtype
        elif piece.dtype != dtype:
            raise ValueError(
                f"make_array_from_callback: the callback returned dtype {piece.dtype} on {dev} "
                f"but {dtype} before; every shard must have one dtype"
            )
        bufs.append(backend.device_put(np.ascontiguousarray(piece), dev))
    aval = ShapedArray(shape, np.dtype(dtype))
    if isinstance(s, SingleDeviceSharding):
        return wrap_buffer(bufs[0], aval)
    return ShardedArray(backend.assemble(aval, s, bufs), aval, s)
