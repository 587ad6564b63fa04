"""Shardy attributes for mjcore's shardings (XLA's `sdy` dialect, which replaces GSPMD's
`mhlo.sharding` strings).

A program over a mesh declares the mesh once at module level (`sdy.mesh @mesh = <["x"=4,
"y"=2]>`) and names, per array dimension, the mesh axes that split it
(`#sdy.sharding<@mesh, [{"x"}, {}]>`); an axis the sharding does not name replicates the
array over it. Device ids in those attributes are logical (0..n-1, the mesh's flat device
order), as in the HLO shardings of `mjcore.sharding`: the program is compiled for the mesh's
devices in that order, so no `device_ids=` list is needed. `jax_use_shardy_partitioner`
(`mjcore.config`) chooses Shardy (the default) or GSPMD's attributes.
"""

from __future__ import annotations

from collections.abc import Sequence

from mjcore.backend.hlo import ModuleBuilder
from mjcore.config import config
from mjcore.sharding import Mesh, NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding

__all__ = ["axis_list", "enabled", "expressible", "mesh_attr", "sharding_attr", "tensor_sharding"]


def enabled() -> bool:
    """Whether programs over several devices are lowered to Shardy (the config flag)."""
    return bool(config.read("jax_use_shardy_partitioner"))


def expressible(s: Sharding | None) -> bool:
    """Whether `s` has a Shardy form here: a NamedSharding, or one device's whole array
    (replicated over the program's mesh). A GSPMDSharding (a tile assignment no spec over
    its mesh describes) has none, and its program is lowered with GSPMD's attributes."""
    return s is None or isinstance(s, NamedSharding | SingleDeviceSharding)


def _quote(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def axis_list(names: Sequence[str]) -> str:
    """`"x", "y"`: mesh axis names as Shardy's attributes list them."""
    return ", ".join(_quote(a) for a in names)


def mesh_attr(mesh: Mesh) -> str:
    """`#sdy.mesh<["x"=4, "y"=2]>`: the mesh's axes and sizes, in order."""
    axes = ", ".join(f"{_quote(a)}={n}" for a, n in mesh.shape.items())
    return f"#sdy.mesh<[{axes}]>"


def _dims(spec: PartitionSpec, ndim: int) -> str:
    """`{"x"}, {}, {?}`: per dimension its axes (closed: XLA adds none), or `{?}` for an
    UNCONSTRAINED one (open: XLA chooses)."""
    open_dims = spec._unconstrained()
    return ", ".join(
        "{?}" if d in open_dims else "{" + axis_list(spec._axes(d)) + "}" for d in range(ndim)
    )


def tensor_sharding(module: ModuleBuilder, s: Sharding, ndim: int, mesh: Mesh | None) -> str:
    """`<@mesh, [{"x"}, {}]>` for a value of rank `ndim` laid out as `s` (declaring its mesh
    in `module`); a one-device sharding is replicated over `mesh` (the program's, or the
    module's first)."""
    if isinstance(s, NamedSharding):
        s._check_rank(ndim)
        return f"<@{module.mesh_symbol(mesh_attr(s.mesh))}, [{_dims(s.spec, ndim)}]>"
    if isinstance(s, SingleDeviceSharding):
        symbol = module.mesh_symbol(mesh_attr(mesh)) if mesh is not None else _first(module)
        return f"<@{symbol}, [{', '.join(['{}'] * ndim)}]>"
    raise NotImplementedError(f"Shardy lowering: {s} has no Shardy form (expressible())")


def _first(module: ModuleBuilder) -> str:
    if not module.meshes:
        raise AssertionError("Shardy lowering of a one-device sharding needs a mesh declared")
    return next(iter(module.meshes.values()))


def sharding_attr(module: ModuleBuilder, s: Sharding, ndim: int, mesh: Mesh | None = None) -> str:
    """`#sdy.sharding<@mesh, [...]>` (see `tensor_sharding`)."""
    return "#sdy.sharding" + tensor_sharding(module, s, ndim, mesh)
