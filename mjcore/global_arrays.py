"""Global arrays from what each process holds (`mjcore.distributed`): each process gives its
own part (its rows of a batch, or its single-device arrays), and together the parts make one
Array laid out over every process's devices, as `jax.make_array_from_process_local_data` and
`jax.make_array_from_single_device_arrays`.

With one process these are `device_put` and an assembly of shards.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mjcore import dtypes
from mjcore.array import Array
from mjcore.backend import client as backend
from mjcore.core import ShapedArray, Tracer
from mjcore.sharded import ShardedArray, device_put_sharded, make_array_from_callback
from mjcore.sharding import Index, NamedSharding, Sharding, SingleDeviceSharding

__all__ = ["make_array_from_process_local_data", "make_array_from_single_device_arrays"]


def _check_sharding(fname: str, s: Any) -> Sharding:
    if not isinstance(s, Sharding):
        raise TypeError(
            f"{fname}: expected a Sharding (NamedSharding, SingleDeviceSharding), got "
            f"{type(s).__name__}"
        )
    return s


def _key(sl: slice) -> tuple[Any, Any]:
    return (sl.start, sl.stop)


def _process_slices(s: Sharding, dim: int, ndim: int) -> tuple[int, int] | None:
    """(index of this process's slices, number of distinct per-process slice sets) along
    `dim`, or None when the processes' slices there do not tile the dimension evenly (a
    non-uniform sharding: each process must then hold the whole dimension)."""
    if s.is_fully_addressable or s.is_fully_replicated:
        return 0, 1
    # a shape any device count divides: only the pattern of slices matters here
    probe = (s.num_devices,) * ndim
    per_process: dict[int, set[tuple[Any, Any]]] = {}
    every: set[tuple[Any, Any]] = set()
    for dev, idx in s.devices_indices_map(probe).items():
        per_process.setdefault(dev.process_index, set()).add(_key(idx[dim]))
        every.add(_key(idx[dim]))
    mine = frozenset(per_process[next(iter(s.addressable_devices)).process_index])
    if any(len(v) != len(mine) for v in per_process.values()):
        return None
    distinct = list({frozenset(v) for v in per_process.values()})
    if sum(len(v) for v in distinct) != len(every):
        return None
    return distinct.index(mine), len(distinct)


def _addressable_extent(s: Sharding, dim: int, global_shape: tuple[int, ...]) -> int:
    """How many indices along `dim` this process's devices hold together."""
    starts = {_key(i[dim]) for i in s.addressable_devices_indices_map(global_shape).values()}
    return s.shard_shape(global_shape)[dim] * len(starts)


def make_array_from_process_local_data(
    sharding: Sharding,
    local_data: Any,
    global_shape: Sequence[int] | None = None,
) -> Array:
    """The global Array laid out as `sharding` over every process's devices, of which this
    process gives `local_data`: the part its own devices hold, as
    `jax.make_array_from_process_local_data`.

    Along each dimension, `local_data` holds either the whole of `global_shape`'s extent
    (every process gives the same values there) or just the slices this process's devices
    hold, concatenated in order (e.g. process p's rows of a batch split over the processes).
    Without `global_shape`, each dimension's global extent is inferred as the local extent
    times the number of processes the sharding splits that dimension over.

    Raises:
      ValueError: when `local_data`'s shape matches neither the global extent nor this
        process's part in some dimension (naming the dimension and both sizes), or when
        `global_shape` cannot be inferred (a sharding not uniform over the processes).
    """
    fname = "make_array_from_process_local_data"
    s = _check_sharding(fname, sharding)
    if isinstance(local_data, Tracer):
        raise TypeError(f"{fname}: local_data must be concrete host data, not a traced value")
    data = np.asarray(local_data._value() if isinstance(local_data, Array) else local_data)
    data = data.astype(dtypes.canonicalize_dtype(data.dtype), copy=False)
    local_shape = data.shape
    if global_shape is not None:
        global_shape = tuple(int(d) for d in global_shape)
        if len(global_shape) != len(local_shape):
            raise ValueError(
                f"{fname}: global_shape {global_shape} has {len(global_shape)} dimensions "
                f"but local_data has shape {local_shape}"
            )
    if s.is_fully_addressable:  # one process (or a sharding over this process's devices)
        if global_shape is not None and global_shape != local_shape:
            raise ValueError(
                f"{fname}: on a single process (or a sharding over this process's devices "
                f"only), global_shape must be None or local_data.shape; got "
                f"global_shape={global_shape} and local_data.shape={local_shape}"
            )
        return device_put_sharded(data, s)
    if global_shape is None:
        inferred = []
        for dim, extent in enumerate(local_shape):
            found = _process_slices(s, dim, len(local_shape))
            if found is None:
                raise ValueError(
                    f"{fname}: cannot infer the global shape: {s} is not uniform over the "
                    f"processes along dimension {dim}; pass global_shape"
                )
            inferred.append(extent * found[1])
        global_shape = tuple(inferred)
    if isinstance(s, NamedSharding):
        s.check_shape(global_shape, fname)
    whole = []
    for dim, (extent, total) in enumerate(zip(local_shape, global_shape, strict=True)):
        whole.append(extent == total)
        if extent != total:
            mine = _addressable_extent(s, dim, global_shape)
            if extent != mine:
                raise ValueError(
                    f"{fname}: local_data has shape {local_shape}, but along dimension {dim} "
                    f"it must hold either the global extent {total} (global_shape="
                    f"{global_shape}) or this process's part, {mine}; got {extent}. Every "
                    "process must give data of the shape its devices' shards add up to."
                )
    index_map = s.addressable_devices_indices_map(global_shape)
    shard_shape = s.shard_shape(global_shape)
    # Per dimension, the distinct slice starts this process holds, in order: the k-th of them
    # is rows k*shard..(k+1)*shard of local_data.
    starts = [
        sorted({i[dim].start or 0 for i in index_map.values()}) for dim in range(len(global_shape))
    ]

    def local_part(index: Index) -> np.ndarray:
        pick = []
        for dim, sl in enumerate(index):
            if whole[dim]:
                pick.append(sl)
            else:
                k = starts[dim].index(sl.start or 0)
                pick.append(slice(k * shard_shape[dim], (k + 1) * shard_shape[dim]))
        return data[tuple(pick)]

    return make_array_from_callback(global_shape, s, local_part)


def make_array_from_single_device_arrays(
    shape: Sequence[int],
    sharding: Sharding,
    arrays: Sequence[Array],
    *,
    dtype: Any = None,
) -> Array:
    """The global Array of `shape` laid out as `sharding`, made of `arrays`: one single-device
    Array per device of `sharding` that this process addresses, each holding that device's
    shard, as `jax.make_array_from_single_device_arrays` (no copies when each is already on
    its device).

    Raises:
      ValueError: for a wrong number of arrays, an array of the wrong shard shape or dtype,
        or arrays not on the sharding's devices of this process (naming them).
    """
    fname = "make_array_from_single_device_arrays"
    s = _check_sharding(fname, sharding)
    shape = tuple(int(d) for d in shape)
    if isinstance(s, NamedSharding):
        s.check_shape(shape, fname)
    arrays = list(arrays)
    local = s._addressable_assignment
    if len(arrays) != len(local):
        raise ValueError(
            f"{fname}: expected {len(local)} arrays, one per device of {s} that this process "
            f"addresses, got {len(arrays)}"
        )
    want = s.shard_shape(shape)
    by_device: dict[Any, Any] = {}
    first_dtype = None
    for k, x in enumerate(arrays):
        if not isinstance(x, Array) or isinstance(x, ShardedArray) or isinstance(x, Tracer):
            raise TypeError(
                f"{fname}: arrays[{k}] must be a concrete single-device Array (e.g. from "
                f"mjcore.device_put(x, device)), got {type(x).__name__}"
            )
        if tuple(x.shape) != want:
            raise ValueError(
                f"{fname}: arrays[{k}] has shape {tuple(x.shape)}, but the shard shape of "
                f"{s} for global shape {shape} is {want}"
            )
        x_dtype = np.dtype(x.dtype)
        if first_dtype is None:
            first_dtype = x_dtype
        elif x_dtype != first_dtype:
            raise ValueError(
                f"{fname}: arrays[{k}] has dtype {x_dtype} but arrays[0] has {first_dtype}; "
                "every shard must have one dtype"
            )
        buf = x._buf
        dev = backend.buffer_device(buf)
        if dev not in local or dev in by_device:
            raise ValueError(
                f"{fname}: arrays[{k}] is on {dev}, which is "
                + ("another array's device" if dev in by_device else "not a device of ")
                + ("" if dev in by_device else f"{s} that this process addresses ({local})")
            )
        by_device[dev] = buf
    if dtype is not None and np.dtype(dtype) != first_dtype:
        raise ValueError(f"{fname}: dtype={np.dtype(dtype)} but the arrays have {first_dtype}")
    aval = ShapedArray(shape, first_dtype if first_dtype is not None else np.dtype(dtype))
    if isinstance(s, SingleDeviceSharding):
        return arrays[0]
    # committed, as jaxlib's multi-device buffer requires (a committed copy is no copy)
    bufs = [backend.copy_to_device(by_device[d], aval, d) for d in local]
    return ShardedArray(backend.assemble(aval, s, bufs), aval, s)
