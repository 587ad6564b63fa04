"""`with_sharding_constraint`: the identity on values that tells XLA's SPMD partitioner how an
intermediate must be laid out (JAX's `lax.with_sharding_constraint`).

Lowered as Shardy's `sdy.sharding_constraint` (or, with `jax_use_shardy_partitioner` off, as
XLA's `Sharding` custom call carrying an `mhlo.sharding` attribute), which the partitioner
reads and removes. Eagerly it lays the value out (`device_put`). Under a
transformation the constraint follows the value: tangents and cotangents get the same layout,
and a batched value gets the spec with an UNCONSTRAINED batch dimension inserted (as JAX's).
"""

from __future__ import annotations

from typing import Any

from mjcore import core, sharded, shardy
from mjcore import sharding as sharding_mod
from mjcore.ad import Zero
from mjcore.backend.lowering import LoweringContext
from mjcore.batching import NOT_MAPPED
from mjcore.core import Primitive, ShapedArray
from mjcore.sharded import device_put_sharded
from mjcore.sharding import NamedSharding, PartitionSpec, Sharding
from mjcore.tree_util import tree_flatten, tree_unflatten

sharding_constraint_p = Primitive("sharding_constraint")


def _resolve(s: Any) -> Sharding:
    if isinstance(s, Sharding):
        return s
    if isinstance(s, PartitionSpec):
        mesh = sharding_mod.current_mesh()
        if mesh is None:
            raise ValueError(
                f"with_sharding_constraint: a bare {s} needs a mesh: call it inside "
                "`with mesh:` or pass NamedSharding(mesh, spec)"
            )
        return NamedSharding(mesh, s)
    raise TypeError(
        "with_sharding_constraint: shardings must be Sharding objects (NamedSharding, "
        f"SingleDeviceSharding) or PartitionSpecs under `with mesh:`; got {type(s).__name__}"
    )


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """`x` (a pytree of arrays) unchanged in value, laid out as `shardings` says (one
    sharding for every leaf, or a pytree of them matching `x`).

    Raises:
      ValueError: when a leaf's shape does not fit its sharding (a dimension not divisible by
        its mesh axes, or fewer dimensions than the spec), naming the axis and shape.
    """
    leaves, tree = tree_flatten(x)
    if isinstance(shardings, Sharding | PartitionSpec):
        per_leaf = [shardings] * len(leaves)
    else:
        per_leaf, s_tree = tree_flatten(shardings, is_leaf=lambda s: s is None)
        if len(per_leaf) != len(leaves):
            raise ValueError(
                f"with_sharding_constraint: {len(per_leaf)} shardings ({s_tree}) for "
                f"{len(leaves)} arrays ({tree}); give one sharding or one per array"
            )
    sharding_mod.in_use = True
    outs = []
    for leaf, s in zip(leaves, per_leaf, strict=True):
        if s is None:
            outs.append(leaf)
            continue
        s = _resolve(s)
        aval = core.get_aval(leaf)
        if isinstance(s, NamedSharding):
            s.check_shape(aval.shape, "with_sharding_constraint")
        outs.append(sharding_constraint_p.bind1(leaf, sharding=s))
    return tree_unflatten(tree, outs)


@sharding_constraint_p.def_impl
def _sharding_constraint_impl(x: Any, *, sharding: Sharding) -> Any:
    if isinstance(sharding, NamedSharding) and sharding.spec._unconstrained():
        # Eagerly nothing is left to choose: an UNCONSTRAINED dimension stays whole.
        spec = [None if p is PartitionSpec.UNCONSTRAINED else p for p in sharding.spec]
        sharding = NamedSharding(sharding.mesh, PartitionSpec(*spec))
    return device_put_sharded(x, sharding)


sharded.install_constraint(with_sharding_constraint)


@sharding_constraint_p.def_abstract_eval
def _sharding_constraint_abstract_eval(aval: ShapedArray, *, sharding: Sharding) -> ShapedArray:
    return aval


@sharding_constraint_p.def_lowering
def _sharding_constraint_lowering(ctx: LoweringContext, x: Any, *, sharding: Sharding) -> Any:
    ndim = len(ctx.avals_in[0].shape)
    aval = ctx.avals_out[0].strip_weak_type()
    if ctx.module.shardy:
        attr = shardy.sharding_attr(ctx.module, sharding, ndim)
        return ctx.builder.op("sdy.sharding_constraint", [x], aval, f"sharding = {attr}")
    text = sharding._hlo_sharding_text(ndim)
    attrs = f'call_target_name = "Sharding", mhlo.sharding = "{text}"'
    open_dims = sharding.spec._unconstrained() if isinstance(sharding, NamedSharding) else ()
    if open_dims:  # (GSPMD's form of an UNCONSTRAINED dimension, as JAX writes it)
        attrs += f', backend_config = "unspecified_dims=[{",".join(map(str, open_dims))}]"'
    return ctx.builder.op("stablehlo.custom_call", [x], aval, attrs)


def _sharding_constraint_jvp(primals: list[Any], tangents: list[Any], *, sharding: Sharding):
    (x,), (x_dot,) = primals, tangents
    y = sharding_constraint_p.bind1(x, sharding=sharding)
    if type(x_dot) is Zero:
        return [y], [x_dot]
    return [y], [sharding_constraint_p.bind1(x_dot, sharding=sharding)]


sharding_constraint_p.def_jvp(_sharding_constraint_jvp, symbolic_zeros=True)


@sharding_constraint_p.def_transpose
def _sharding_constraint_transpose(ct: Any, x: Any, *, sharding: Sharding) -> list[Any]:
    if type(ct) is Zero:
        return [ct]
    return [sharding_constraint_p.bind1(ct, sharding=sharding)]


@sharding_constraint_p.def_batching
def _sharding_constraint_batching(vals: list[Any], dims: list[int | None], *, sharding: Sharding):
    (x,), (bdim,) = vals, dims
    if bdim is not NOT_MAPPED and isinstance(sharding, NamedSharding):
        ndim = len(core.get_aval(x).shape) - 1
        spec = list(sharding.spec) + [None] * (ndim - len(sharding.spec))
        spec.insert(bdim, PartitionSpec.UNCONSTRAINED)  # XLA lays it out (JAX's rule)
        sharding = NamedSharding(sharding.mesh, PartitionSpec(*spec))
    return sharding_constraint_p.bind1(x, sharding=sharding), bdim


def constraint_shardings(jaxpr: Any) -> list[Sharding]:
    """The shardings of the constraints in a jaxpr (and those it calls), in order."""
    out: list[Sharding] = []
    for eqn in jaxpr.eqns:
        if eqn.primitive is sharding_constraint_p:
            out.append(eqn.params["sharding"])
        elif eqn.primitive.name == "shard_map":  # its mesh (mjcore.shard_map)
            out.append(NamedSharding(eqn.params["mesh"], PartitionSpec()))
        for p in eqn.params.values():
            for sub in p if isinstance(p, tuple | list) else (p,):
                inner = getattr(sub, "jaxpr", None)
                inner = inner if inner is not None and hasattr(inner, "eqns") else sub
                if hasattr(inner, "eqns"):
                    out += constraint_shardings(inner)
    return out


__all__ = ["with_sharding_constraint"]
