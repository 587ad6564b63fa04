"""Meshes and shardings, as JAX's `jax.sharding`: which device holds which slice of an array.

A `Mesh` arranges devices in an n-d grid with named axes; a `PartitionSpec` says, per array
dimension, which mesh axes split it; a `NamedSharding` is the pair. XLA's SPMD partitioner
reads a sharding as an HLO sharding (`_hlo_sharding_text`): a tile assignment over the
*logical* device ids 0..n-1, which are positions in the mesh's flat device order (the device
assignment a program is compiled for). Everything here is plain Python; the jaxlib objects
that multi-device buffers carry are made from it in `mjcore.backend.client`.
"""

from __future__ import annotations

import itertools
import math
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from mjcore.backend import client as backend

Device = Any
Index = tuple[slice, ...]

__all__ = [
    "GSPMDSharding",
    "Mesh",
    "NamedSharding",
    "P",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "make_mesh",
]


class _Unconstrained:
    """`PartitionSpec.UNCONSTRAINED`: a dimension whose layout XLA chooses (in
    `with_sharding_constraint`; Shardy's open dimension `{?}`)."""

    def __repr__(self) -> str:
        return "UNCONSTRAINED"

    def __reduce__(self) -> str:
        return "UNCONSTRAINED"


UNCONSTRAINED = _Unconstrained()


class PartitionSpec(tuple):  # type: ignore[type-arg]
    """Per array dimension: None (not split), a mesh axis name, or a tuple of names (split by
    their product, major to minor), or `PartitionSpec.UNCONSTRAINED` (XLA chooses; only in
    `with_sharding_constraint`). Dimensions past the spec's length are not split."""

    UNCONSTRAINED = UNCONSTRAINED

    def __new__(cls, *partitions: None | str | Sequence[str] | _Unconstrained) -> PartitionSpec:
        parts: list[None | str | tuple[str, ...] | _Unconstrained] = []
        for p in partitions:
            if p is None or isinstance(p, str | _Unconstrained):
                parts.append(p)
            elif isinstance(p, tuple | list) and all(isinstance(a, str) for a in p):
                parts.append(tuple(p) if len(p) != 1 else p[0])
                if len(p) == 0:
                    parts[-1] = None
            else:
                raise TypeError(
                    "PartitionSpec entries must be None, a mesh axis name (str), a tuple of "
                    f"names or PartitionSpec.UNCONSTRAINED; got {p!r}"
                )
        return super().__new__(cls, parts)

    def __repr__(self) -> str:
        return f"PartitionSpec{tuple.__repr__(self)}"  # as JAX's: PartitionSpec('x',)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (PartitionSpec, tuple(self))

    def _unconstrained(self) -> tuple[int, ...]:
        """The dimensions whose layout is left to XLA."""
        return tuple(i for i, p in enumerate(self) if p is UNCONSTRAINED)

    def _axes(self, dim: int) -> tuple[str, ...]:
        """The mesh axes splitting dimension `dim` (none past the end)."""
        if dim >= len(self):
            return ()
        p = self[dim]
        if p is None or p is UNCONSTRAINED:
            return ()
        return (p,) if isinstance(p, str) else tuple(p)


P = PartitionSpec

_mesh_stack = threading.local()
# Set once a program or value uses a multi-device sharding (a ShardedArray was made, a
# sharding constraint traced, a jit given shardings): until then `jit` calls skip every
# sharding check.
in_use = False


class Mesh:
    """Devices in an n-d grid whose axes have names (`Mesh(devices, ('x', 'y'))`).

    Usable as a context manager (`with mesh:`), which makes it the current mesh (for
    `with_sharding_constraint` given a bare `PartitionSpec`).
    """

    def __init__(self, devices: Any, axis_names: str | Sequence[str]):
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        axis_names = tuple(axis_names)
        arr = np.array(devices, dtype=object)  # (a copy: the caller's array may change)
        if arr.ndim != len(axis_names):
            raise ValueError(
                f"Mesh: devices.ndim == {arr.ndim} (shape {arr.shape}) must equal the number "
                f"of axis names, {len(axis_names)} ({axis_names})"
            )
        if any(not isinstance(a, str) for a in axis_names):
            raise TypeError(f"Mesh: axis names must be strings; got {axis_names}")
        if len(set(axis_names)) != len(axis_names):
            raise ValueError(f"Mesh: axis names must be unique; got {axis_names}")
        ids = [d.id for d in arr.flat]
        if len(set(ids)) != len(ids):
            raise ValueError(f"Mesh: a device appears twice in the mesh (device ids {ids})")
        arr.flags.writeable = False
        self.devices: np.ndarray = arr
        self.axis_names: tuple[str, ...] = axis_names
        self._key = (tuple(ids), arr.shape, axis_names)

    @property
    def shape(self) -> OrderedDict[str, int]:
        """Axis name -> size, in axis order."""
        return OrderedDict(zip(self.axis_names, self.devices.shape, strict=True))

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        return tuple(self.devices.shape)

    @property
    def shape_tuple(self) -> tuple[tuple[str, int], ...]:
        return tuple(self.shape.items())

    @property
    def size(self) -> int:
        return int(self.devices.size)

    @property
    def empty(self) -> bool:
        return self.size == 0

    @property
    def device_ids(self) -> np.ndarray:
        """The ids of the devices, in the mesh's shape."""
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def _flat_devices(self) -> tuple[Device, ...]:
        """The devices in mesh order: logical device i of an HLO sharding is this [i]."""
        return tuple(self.devices.flat)

    @property
    def local_devices(self) -> list[Device]:
        return list(self.devices.flat)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mesh) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        shape = ", ".join(f"'{n}': {s}" for n, s in self.shape.items())
        return f"Mesh(axis_sizes={{{shape}}}, device_ids={self.device_ids.tolist()})"

    def __enter__(self) -> Mesh:
        stack = _stack()
        stack.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _stack().pop()


def _stack() -> list[Mesh]:
    stack = getattr(_mesh_stack, "stack", None)
    if stack is None:
        stack = _mesh_stack.stack = []
    return stack  # type: ignore[no-any-return]


def current_mesh() -> Mesh | None:
    """The mesh of the innermost `with mesh:` block (None outside any)."""
    stack = _stack()
    return stack[-1] if stack else None


def make_mesh(
    axis_shapes: Sequence[int],
    axis_names: Sequence[str],
    devices: Sequence[Device] | None = None,
) -> Mesh:
    """A mesh of the given axis sizes over `devices` (default: all devices, in order).

    Raises:
      ValueError: when the axis sizes' product is not the number of devices.
    """
    axis_shapes = tuple(int(s) for s in axis_shapes)
    if devices is None:
        devices = backend.global_devices()  # every process's (`mjcore.distributed`)
    devices = list(devices)
    if math.prod(axis_shapes) != len(devices):
        raise ValueError(
            f"make_mesh: the axis sizes {axis_shapes} multiply to {math.prod(axis_shapes)}, "
            f"but there are {len(devices)} devices; choose sizes whose product is "
            f"{len(devices)} (or pass devices=)"
        )
    arr = np.empty(len(devices), object)
    arr[:] = devices
    return Mesh(arr.reshape(axis_shapes), tuple(axis_names))


class Sharding:
    """How an array's elements are laid out over devices (the base of the kinds below)."""

    @property
    def device_set(self) -> set[Device]:
        raise NotImplementedError

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        """The devices a program is compiled for, logical id order."""
        raise NotImplementedError

    @property
    def addressable_devices(self) -> set[Device]:
        """The devices this process holds shards on (one process: all; with several,
        `mjcore.distributed`, this process's)."""
        return {d for d in self.device_set if _is_local(d)}

    @property
    def _addressable_assignment(self) -> tuple[Device, ...]:
        """This process's devices among `_device_assignment`, in its order: the order of a
        multi-device buffer's shards here."""
        return tuple(d for d in self._device_assignment if _is_local(d))

    @property
    def is_fully_addressable(self) -> bool:
        return all(_is_local(d) for d in self.device_set)

    @property
    def is_fully_replicated(self) -> bool:
        raise NotImplementedError

    @property
    def num_devices(self) -> int:
        return len(self.device_set)

    @property
    def memory_kind(self) -> str | None:
        return None

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        raise NotImplementedError

    def devices_indices_map(self, global_shape: Sequence[int]) -> dict[Device, Index]:
        raise NotImplementedError

    def addressable_devices_indices_map(self, global_shape: Sequence[int]) -> dict[Device, Index]:
        return {d: i for d, i in self.devices_indices_map(global_shape).items() if _is_local(d)}

    def _hlo_sharding_text(self, ndim: int) -> str:
        raise NotImplementedError

    def is_equivalent_to(self, other: Sharding, ndim: int) -> bool:
        """Whether both put the same slices on the same devices for arrays of rank `ndim`."""
        return _layout(self, ndim) == _layout(other, ndim)


def _is_local(d: Device) -> bool:
    """Whether this process addresses device `d` (with `mjcore.distributed`, other
    processes' devices are in meshes and shardings too)."""
    return bool(d.process_index == d.client.process_index())


def _layout(s: Sharding, ndim: int) -> tuple[Any, ...]:
    # A shape divisible by any mesh axis product: the map then determines the sharding.
    probe = (math.factorial(8) * 2,) * ndim if s.num_devices > 1 else (1,) * ndim
    m = s.devices_indices_map(probe)
    return tuple(sorted((d.id, tuple((sl.start, sl.stop) for sl in idx)) for d, idx in m.items()))


class SingleDeviceSharding(Sharding):
    """The whole array on one device."""

    def __init__(self, device: Device, *, memory_kind: str | None = None):
        self._device = device
        self._memory_kind = memory_kind

    @property
    def device_set(self) -> set[Device]:
        return {self._device}

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        return (self._device,)

    @property
    def is_fully_replicated(self) -> bool:
        return True

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(global_shape)

    def devices_indices_map(self, global_shape: Sequence[int]) -> dict[Device, Index]:
        return {self._device: tuple(slice(None) for _ in global_shape)}

    def _hlo_sharding_text(self, ndim: int) -> str:
        return "{replicated}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SingleDeviceSharding) and other._device == self._device

    def __hash__(self) -> int:
        return hash(("single", self._device))

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._device!r})"


class NamedSharding(Sharding):
    """An array split over a `Mesh` as a `PartitionSpec` says.

    Raises (at construction):
      ValueError: for a spec naming an axis the mesh lacks, or a mesh axis used twice.
    """

    def __init__(self, mesh: Mesh, spec: PartitionSpec, *, memory_kind: str | None = None):
        if not isinstance(mesh, Mesh):
            raise TypeError(f"NamedSharding: mesh must be a Mesh; got {type(mesh).__name__}")
        if not isinstance(spec, PartitionSpec):
            if isinstance(spec, tuple | list) or spec is None:
                spec = PartitionSpec(*(spec or ()))
            else:
                raise TypeError(
                    f"NamedSharding: spec must be a PartitionSpec; got {type(spec).__name__}"
                )
        self.mesh = mesh
        self.spec = spec
        self._memory_kind = memory_kind
        # (on every sharded call's path: comparisons, and per-shape slices of device_put)
        self._key = (mesh, _normalized(spec))
        self._indices: dict[tuple[int, ...], dict[Device, Index]] = {}
        seen: set[str] = set()
        for dim in range(len(spec)):
            for axis in spec._axes(dim):
                if axis not in mesh.shape:
                    raise ValueError(
                        f"Resource axis: {axis} of {spec} is not found in mesh: {mesh.axis_names}."
                    )
                if axis in seen:
                    raise ValueError(
                        "A single NamedSharding spec specification can map every mesh axis to "
                        f"at most one positional dimension, but {spec} has duplicate entries "
                        f"for `{axis}`"
                    )
                seen.add(axis)

    @property
    def device_set(self) -> set[Device]:
        return set(self.mesh.devices.flat)

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        return self.mesh._flat_devices

    @property
    def num_devices(self) -> int:
        return self.mesh.size

    @property
    def is_fully_replicated(self) -> bool:
        sizes = self.mesh.shape
        return all(sizes[a] == 1 for d in range(len(self.spec)) for a in self.spec._axes(d))

    def _check_rank(self, ndim: int) -> None:
        if len(self.spec) > ndim:
            raise ValueError(
                f"Sharding {self} is only valid for values of rank at least {len(self.spec)}, "
                f"but was applied to a value of rank {ndim}"
            )

    def _tiles(self, ndim: int) -> list[int]:
        sizes = self.mesh.shape
        return [math.prod(sizes[a] for a in self.spec._axes(d)) for d in range(ndim)]

    def check_shape(self, global_shape: Sequence[int], what: str = "an argument") -> None:
        """Raise ValueError unless `global_shape` fits: rank at least the spec's, and each
        split dimension divisible by its mesh axes' product."""
        global_shape = tuple(global_shape)
        self._check_rank(len(global_shape))
        tiles_per_dim = self._tiles(len(global_shape))
        for dim, (size, tiles) in enumerate(zip(global_shape, tiles_per_dim, strict=True)):
            if size % tiles:
                axes = self.spec._axes(dim)
                raise ValueError(
                    f"{what} was given the sharding of {self}, which implies that the global "
                    f"size of its dimension {dim} should be divisible by {tiles} (mesh axes "
                    f"{axes}), but it is equal to {size} (full shape: {global_shape})"
                )

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        self.check_shape(global_shape, "shard_shape")
        tiles = self._tiles(len(global_shape))
        return tuple(s // t for s, t in zip(global_shape, tiles, strict=True))

    def _tile_assignment(self, ndim: int) -> tuple[list[int], np.ndarray, int]:
        """(tile counts per dimension, logical device ids shaped tiles + [replicas], replicas).

        The mesh's logical ids are transposed so that the axes splitting dimension 0 come
        first (in spec order), then those of dimension 1, ..., then the unused axes, whose
        product is the replication count (XLA's `last_tile_dim_replicate`)."""
        self._check_rank(ndim)
        names = self.mesh.axis_names
        used = [a for d in range(ndim) for a in self.spec._axes(d)]
        unused = [a for a in names if a not in used]
        ids = np.arange(self.mesh.size).reshape(self.mesh.devices.shape)
        perm = [names.index(a) for a in used + unused]
        tiles = self._tiles(ndim)
        replicas = self.mesh.size // max(1, math.prod(tiles))
        return tiles, ids.transpose(perm).reshape(tiles + [replicas]), replicas

    def devices_indices_map(self, global_shape: Sequence[int]) -> dict[Device, Index]:
        global_shape = tuple(global_shape)
        known = self._indices.get(global_shape)
        if known is None:
            if len(self._indices) >= 64:  # bounded
                self._indices.clear()
            known = self._indices[global_shape] = self._compute_indices(global_shape)
        return dict(known)  # (the caller's to change)

    def _compute_indices(self, global_shape: tuple[int, ...]) -> dict[Device, Index]:
        shard = self.shard_shape(global_shape)
        tiles, assignment, _ = self._tile_assignment(len(global_shape))
        flat = self.mesh._flat_devices
        out: dict[Device, Index] = {}
        for pos in np.ndindex(assignment.shape):
            index = tuple(
                slice(None) if t == 1 else slice(p * n, (p + 1) * n)
                for p, n, t in zip(pos[:-1], shard, tiles, strict=True)
            )
            out[flat[assignment[pos]]] = index
        # As JAX's: in the mesh's device order.
        return {d: out[d] for d in flat}

    def _hlo_sharding_text(self, ndim: int) -> str:
        tiles, assignment, replicas = self._tile_assignment(ndim)
        if math.prod(tiles) == 1:
            return "{replicated}"
        dims = tiles + [replicas] if replicas > 1 else tiles
        ids = ",".join(str(int(i)) for i in assignment.flat)
        suffix = " last_tile_dim_replicate" if replicas > 1 else ""
        return f"{{devices=[{','.join(map(str, dims))}]{ids}{suffix}}}"

    def with_spec(self, spec: PartitionSpec) -> NamedSharding:
        return NamedSharding(self.mesh, spec)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NamedSharding) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"


def _normalized(spec: PartitionSpec) -> tuple[Any, ...]:
    """The spec without trailing Nones (P('x', None) == P('x') as shardings)."""
    parts = list(spec)
    while parts and parts[-1] is None:
        parts.pop()
    return tuple(parts)


def iter_shard_indices(
    sharding: Sharding, global_shape: Sequence[int]
) -> Iterator[tuple[Device, Index]]:
    """(device, index) per device, in the sharding's device-assignment order."""
    m = sharding.devices_indices_map(global_shape)
    for d in sharding._device_assignment:
        yield d, m[d]


def named_sharding_candidates(mesh: Mesh, ndim: int) -> Iterator[NamedSharding]:
    """Every NamedSharding over `mesh` for rank `ndim` that names only mesh axes of size > 1
    (each layout once), fewest split axes first: to name the layout XLA chose for an output."""
    axes = [a for a, n in mesh.shape.items() if n > 1]
    choices = []
    for placement in itertools.product(range(-1, ndim), repeat=len(axes)):
        groups: list[list[str]] = [[] for _ in range(ndim)]
        for a, d in zip(axes, placement, strict=True):
            if d >= 0:
                groups[d].append(a)
        choices.append((sum(p >= 0 for p in placement), groups))
    choices.sort(key=lambda c: c[0])
    for _, groups in choices:
        for orders in itertools.product(*(itertools.permutations(g) for g in groups)):
            spec = [None if not o else (o[0] if len(o) == 1 else tuple(o)) for o in orders]
            while spec and spec[-1] is None:
                spec.pop()
            yield NamedSharding(mesh, PartitionSpec(*spec))


class GSPMDSharding(Sharding):
    """A layout given directly as XLA's tile assignment over a device assignment: what an
    output of a partitioned program is when no PartitionSpec over its mesh describes it
    (XLA may split a dimension over part of a mesh axis). As JAX's `GSPMDSharding`.

    Args:
      devices: the device assignment (logical device i is `devices[i]`).
      tile_dims: tiles per array dimension, then (when `replicate_last`) the replicas.
      tile_devices: logical device ids, row-major over `tile_dims`.
      replicate_last: whether the last entry of `tile_dims` counts replicas.
      mesh: the mesh of the program that made it (over the same devices, in the same order),
        which programs taking it as an argument are partitioned over.
    """

    def __init__(
        self,
        devices: Sequence[Device],
        tile_dims: Sequence[int],
        tile_devices: Sequence[int],
        replicate_last: bool,
        mesh: Mesh | None = None,
    ):
        self._devices = tuple(devices)
        self._tile_dims = tuple(int(d) for d in tile_dims)
        self._tile_devices = tuple(int(i) for i in tile_devices)
        self._replicate_last = bool(replicate_last)
        self.mesh = mesh if mesh is not None else Mesh(np.array(self._devices), ("devices",))
        if math.prod(self._tile_dims) != len(self._devices) or sorted(self._tile_devices) != list(
            range(len(self._devices))
        ):
            raise ValueError(
                f"GSPMDSharding: tile assignment {self._tile_dims} over ids "
                f"{self._tile_devices} does not cover the {len(self._devices)} devices"
            )

    @property
    def device_set(self) -> set[Device]:
        return set(self._devices)

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        return self._devices

    @property
    def is_fully_replicated(self) -> bool:
        tiles = self._tile_dims[:-1] if self._replicate_last else self._tile_dims
        return math.prod(tiles) == 1

    def _array_tiles(self, ndim: int) -> tuple[int, ...]:
        tiles = self._tile_dims[:-1] if self._replicate_last else self._tile_dims
        if len(tiles) != ndim:
            raise ValueError(
                f"GSPMDSharding {self._hlo_sharding_text(ndim)} is for rank {len(tiles)}, "
                f"not {ndim}"
            )
        return tiles

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        tiles = self._array_tiles(len(global_shape))
        for dim, (size, t) in enumerate(zip(global_shape, tiles, strict=True)):
            if size % t:
                raise ValueError(
                    f"GSPMDSharding: dimension {dim} of shape {tuple(global_shape)} is not "
                    f"divisible by its {t} tiles"
                )
        return tuple(s // t for s, t in zip(global_shape, tiles, strict=True))

    def devices_indices_map(self, global_shape: Sequence[int]) -> dict[Device, Index]:
        shard = self.shard_shape(global_shape)
        tiles = self._array_tiles(len(global_shape))
        ids = np.array(self._tile_devices).reshape(self._tile_dims)
        out: dict[Device, Index] = {}
        for pos in np.ndindex(ids.shape):
            index = tuple(
                slice(None) if t == 1 else slice(p * n, (p + 1) * n)
                for p, n, t in zip(pos[: len(tiles)], shard, tiles, strict=True)
            )
            out[self._devices[ids[pos]]] = index
        return {d: out[d] for d in self._devices}

    def _hlo_sharding_text(self, ndim: int) -> str:
        if self.is_fully_replicated:
            return "{replicated}"
        dims = ",".join(map(str, self._tile_dims))
        ids = ",".join(map(str, self._tile_devices))
        suffix = " last_tile_dim_replicate" if self._replicate_last else ""
        return f"{{devices=[{dims}]{ids}{suffix}}}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GSPMDSharding) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple[Any, ...]:
        return (
            tuple(d.id for d in self._devices),
            self._tile_dims,
            self._tile_devices,
            self._replicate_last,
        )

    def __repr__(self) -> str:
        ndim = len(self._tile_dims) - (1 if self._replicate_last else 0)
        return f"GSPMDSharding({self._hlo_sharding_text(ndim)})"
