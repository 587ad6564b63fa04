"""Helpers for programs run by several processes (`mjcore.distributed`), as JAX's
`jax.experimental.multihost_utils`: gather host data from every process, broadcast one
process's data to all, and a named barrier. Each is a jitted program over a mesh of
(processes, local devices), so XLA's collectives (gloo on the CPU) move the data.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

import mjnp
from mjcore import tree_util
from mjcore.array import Array
from mjcore.dispatch import devices, local_device_count, process_count, process_index
from mjcore.global_arrays import make_array_from_process_local_data
from mjcore.jit import jit
from mjcore.sharded import ShardedArray
from mjcore.sharding import Mesh, NamedSharding, PartitionSpec

__all__ = ["assert_equal", "broadcast_one_to_all", "process_allgather", "sync_global_devices"]


def _process_mesh() -> Mesh:
    """Every device in a (processes, local devices) grid, process 0's row first."""
    devs = sorted(devices(), key=lambda d: (d.process_index, d.id))
    grid = np.empty(len(devs), dtype=object)
    grid[:] = devs
    return Mesh(grid.reshape(process_count(), local_device_count()), ("processes", "local"))


def _identity(x: Any) -> Any:
    return x


def _sum_over_processes(x: Any) -> Any:
    return mjnp.sum(x, axis=0, dtype=x.dtype)


def _stacked(x: np.ndarray, mesh: Mesh) -> Array:
    """The global (processes, ...) array whose row p is process p's `x`."""
    return make_array_from_process_local_data(
        NamedSharding(mesh, PartitionSpec("processes")), x[None]
    )


def _host(x: Any) -> np.ndarray:
    return np.asarray(x._value() if isinstance(x, Array) else x)


def _allgather_one(x: Any, tiled: bool) -> np.ndarray:
    if isinstance(x, ShardedArray) and not x.is_fully_addressable:
        if not tiled:
            raise ValueError(
                "process_allgather: gathering a global array that spans other processes' "
                f"devices (here of shape {tuple(x.shape)}) supports only tiled=True"
            )
        replicated = NamedSharding(x.sharding.mesh, PartitionSpec())  # type: ignore[attr-defined]
        return np.asarray(jit(_identity, out_shardings=replicated)(x))
    host = _host(x)
    if process_count() == 1:
        return host if tiled else host[None]
    mesh = _process_mesh()
    if host.ndim == 0 or not tiled:
        stacked = _stacked(host, mesh)
    else:  # concatenated along axis 0: process p's rows come p-th
        stacked = make_array_from_process_local_data(
            NamedSharding(mesh, PartitionSpec("processes")), host
        )
    replicated = NamedSharding(mesh, PartitionSpec())
    return np.asarray(jit(_identity, out_shardings=replicated)(stacked))


def process_allgather(in_tree: Any, tiled: bool = False) -> Any:
    """Every process's value of each leaf of `in_tree`, as NumPy arrays, as
    `jax.experimental.multihost_utils.process_allgather`: stacked along a new axis 0 (process
    p's value at index p), or with `tiled=True` concatenated along axis 0. A global array that
    spans other processes' devices is gathered whole (`tiled=True` only).

    Every process must call it, with leaves of the same shapes and dtypes.

    Raises:
      ValueError: for a global array with `tiled=False`.
    """
    return tree_util.tree_map(lambda x: _allgather_one(x, tiled), in_tree)


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """Every leaf of `in_tree` as the source process (default: process 0) has it, in every
    process, as NumPy arrays; as `jax.experimental.multihost_utils.broadcast_one_to_all`.
    Every process must call it, with leaves of the same shapes and dtypes."""
    if process_count() == 1:
        return tree_util.tree_map(_host, in_tree)
    if is_source is None:
        is_source = process_index() == 0
    mesh = _process_mesh()
    replicated = NamedSharding(mesh, PartitionSpec())
    total = jit(_sum_over_processes, out_shardings=replicated)

    def one(x: Any) -> np.ndarray:
        host = _host(x)
        mine = host if is_source else np.zeros_like(host)
        return np.asarray(total(_stacked(mine, mesh)))

    return tree_util.tree_map(one, in_tree)


def assert_equal(in_tree: Any, fail_message: str = "") -> None:
    """Check that every process has the same values in `in_tree`, as
    `jax.experimental.multihost_utils.assert_equal`.

    Raises:
      AssertionError: naming `fail_message`, when some process's values differ.
    """

    def repeated(x: Any) -> np.ndarray:
        if isinstance(x, ShardedArray) and not x.is_fully_addressable:
            return _allgather_one(x, True)
        host = _host(x)
        return np.concatenate([np.atleast_1d(host)] * process_count())

    gathered = process_allgather(in_tree, tiled=True)
    expected = tree_util.tree_map(repeated, in_tree)
    same = tree_util.tree_map(
        lambda a, b: bool(np.all(np.equal(np.atleast_1d(a), b))), gathered, expected
    )
    if not all(tree_util.tree_leaves(same)):
        raise AssertionError(f"{fail_message}. Expected: {gathered}; got: {in_tree}.")


def sync_global_devices(name: str) -> None:
    """Wait until every process has called `sync_global_devices` with the same `name`, as
    `jax.experimental.multihost_utils.sync_global_devices` (a collective over every device).

    Raises:
      AssertionError: when the processes gave different names.
    """
    h = np.uint32(zlib.crc32(name.encode()))
    assert_equal(h, f"sync_global_devices name mismatch ('{name}')")
