"""shard_map and pmap: a per-device function over a mesh (Autodidax's higher-order primitives,
grown to XLA's SPMD partitioner as JAX's `shard_map` does).

`shard_map(f, mesh, in_specs, out_specs)(*xs)` means, in plain Python:

    shards = [split(x, spec, mesh) for x, spec in zip(xs, in_specs)]   # one block per device
    outs = [f(*blocks_of(device)) for device in mesh.devices.flat]     # collectives across
    return [concat(o, spec, mesh) for o, spec in zip(outs, out_specs)]  # blocks reassembled

`f` is traced once at the block shapes. The `shard_map` primitive carries its jaxpr and is
lowered as JAX lowers it: Shardy's `sdy.manual_computation` (the specs as its in/out
shardings, every mesh axis manual, the body its region), or with `jax_use_shardy_partitioner`
off each argument laid out as its spec says and cut into its block (`@Sharding` +
`@SPMDFullToShardShape` with manual sharding), the body, then the blocks reassembled
(`@SPMDShardToFullShape`); XLA's SPMD partitioner runs the body once per device and the
collectives (`mjcore.lax.psum`, ...) between them. `pmap` is a shard_map over a
one-axis mesh, as in JAX 0.10.

Restrictions: every mesh axis is manual (no partially automatic meshes); an output whose spec
leaves a mesh axis out must be the same on every device along it (not checked: `check_rep`
is accepted for JAX compatibility and ignored).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mjcore import core, shardy
from mjcore import sharding as sharding_mod
from mjcore.ad import UndefinedPrimal, Zero, backward_pass, instantiate, jvp_flat
from mjcore.api_util import flatten_fun
from mjcore.array import Array
from mjcore.backend import client
from mjcore.backend.lowering import LoweringContext, lower_jaxpr_body
from mjcore.batching import NOT_MAPPED, batch_jaxpr_like, move_bdim
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.jaxpr import ClosedJaxpr, JaxprEqn, Var, eval_jaxpr, hoist_consts
from mjcore.jit import jit
from mjcore.lax import arithmetic, parallel
from mjcore.lax.base import reshape
from mjcore.lax.sharding import with_sharding_constraint
from mjcore.partial_eval import partial_eval_closed, trace_to_jaxpr
from mjcore.sharded import device_put_sharded
from mjcore.sharding import Mesh, NamedSharding, PartitionSpec
from mjcore.tree_util import broadcast_prefix, tree_flatten, tree_unflatten

Specs = tuple[PartitionSpec, ...]


# --- specs and shapes -----------------------------------------------------------------------


def _spec_axes(spec: PartitionSpec, dim: int) -> tuple[str, ...]:
    return spec._axes(dim) if dim < len(spec) else ()


def _block_aval(aval: ShapedArray, spec: PartitionSpec, mesh: Mesh) -> ShapedArray:
    shape = tuple(
        d // math.prod(mesh.shape[a] for a in _spec_axes(spec, i)) for i, d in enumerate(aval.shape)
    )
    return aval.update(shape=shape)


def _global_aval(aval: ShapedArray, spec: PartitionSpec, mesh: Mesh) -> ShapedArray:
    shape = tuple(
        d * math.prod(mesh.shape[a] for a in _spec_axes(spec, i)) for i, d in enumerate(aval.shape)
    )
    return aval.update(shape=shape)


def _unmentioned(mesh: Mesh, spec: PartitionSpec) -> tuple[str, ...]:
    used = {a for i in range(len(spec)) for a in spec._axes(i)}
    return tuple(a for a in mesh.axis_names if a not in used)


def _frames(mesh: Mesh) -> list[core.AxisFrame]:
    return [core.AxisFrame(n, s, None, True) for n, s in mesh.shape.items()]


def _insert_none(spec: PartitionSpec, dim: int, ndim: int) -> PartitionSpec:
    """`spec` for a value with a new unsplit dimension at `dim` (`ndim`: the old rank)."""
    entries = list(spec) + [None] * (ndim - len(spec))
    entries.insert(dim, None)
    return PartitionSpec(*entries)


# --- the primitive --------------------------------------------------------------------------

shard_map_p = Primitive("shard_map", multiple_results=True)


@shard_map_p.def_abstract_eval
def _shard_map_abstract_eval(*avals, jaxpr, mesh, in_specs, out_specs):
    return [_global_aval(a, s, mesh) for a, s in zip(jaxpr.out_avals, out_specs, strict=True)]


@shard_map_p.def_lowering
def _shard_map_lowering(ctx: LoweringContext, *args, jaxpr, mesh, in_specs, out_specs):
    if ctx.module.shardy:
        return _sdy_manual_computation(
            ctx, *args, jaxpr=jaxpr, mesh=mesh, in_specs=in_specs, out_specs=out_specs
        )
    b = ctx.builder
    manual = '"{manual}"'
    blocks = []
    for x, spec, aval in zip(args, in_specs, jaxpr.in_avals, strict=True):
        text = NamedSharding(mesh, spec)._hlo_sharding_text(x.aval.ndim)
        x = b.op(
            "stablehlo.custom_call",
            [x],
            x.aval,
            f'call_target_name = "Sharding", mhlo.sharding = "{text}"',
        )
        blocks.append(
            b.op(
                "stablehlo.custom_call",
                [x],
                aval.strip_weak_type(),
                f'call_target_name = "SPMDFullToShardShape", mhlo.sharding = {manual}',
            )
        )
    outs = lower_jaxpr_body(b, jaxpr.jaxpr, [], blocks)
    results = []
    for y, spec, aval in zip(outs, out_specs, ctx.avals_out, strict=True):
        y = b.op(
            "stablehlo.custom_call",
            [y],
            y.aval,
            f'call_target_name = "Sharding", mhlo.sharding = {manual}',
        )
        text = NamedSharding(mesh, spec)._hlo_sharding_text(aval.ndim)
        results.append(
            b.op(
                "stablehlo.custom_call",
                [y],
                aval.strip_weak_type(),
                f'call_target_name = "SPMDShardToFullShape", mhlo.sharding = "{text}"',
            )
        )
    return results


def _sdy_manual_computation(ctx: LoweringContext, *args, jaxpr, mesh, in_specs, out_specs):
    """Shardy's `sdy.manual_computation`: the body runs per device on blocks laid out as the
    in/out specs say, every mesh axis manual (JAX's lowering)."""
    module = ctx.module

    def per_value(specs: Sequence[PartitionSpec], avals: Sequence[ShapedArray]) -> str:
        each = [
            shardy.tensor_sharding(module, NamedSharding(mesh, s), a.ndim, mesh)
            for s, a in zip(specs, avals, strict=True)
        ]
        return f"#sdy.sharding_per_value<[{', '.join(each)}]>"

    def body(fb: Any, *blocks: Any) -> list[Any]:
        return lower_jaxpr_body(fb, jaxpr.jaxpr, [], list(blocks))

    region = ctx.builder.region([a.strip_weak_type() for a in jaxpr.in_avals], body, "sdy.return")
    attrs = (
        f"in_shardings = {per_value(in_specs, [x.aval for x in args])}, "
        f"out_shardings = {per_value(out_specs, ctx.avals_out)}, "
        f"manual_axes = #sdy<manual_axes{{{shardy.axis_list(mesh.axis_names)}}}>"
    )
    outs = [a.strip_weak_type() for a in ctx.avals_out]
    return ctx.builder.op("sdy.manual_computation", list(args), outs, attrs, regions=[region])


@shard_map_p.def_impl
def _shard_map_impl(*args, jaxpr, mesh, in_specs, out_specs):
    # Eagerly, a shard_map is a program partitioned over its mesh (`mjcore.sharded_jit`).
    params = dict(jaxpr=jaxpr, mesh=mesh, in_specs=in_specs, out_specs=out_specs)
    return jit(lambda *xs: shard_map_p.bind(*xs, **params))(*args)


def _bind(
    args: Sequence[Any],
    closed: ClosedJaxpr,
    mesh: Mesh,
    in_specs: Sequence[PartitionSpec],
    out_specs: Sequence[PartitionSpec],
) -> list[Any]:
    """Bind a body with constants: they enter replicated, ahead of the arguments."""
    call, consts = hoist_consts(closed)
    return shard_map_p.bind(
        *consts,
        *args,
        jaxpr=call,
        mesh=mesh,
        in_specs=(PartitionSpec(),) * len(consts) + tuple(in_specs),
        out_specs=tuple(out_specs),
    )


def _trace_body(fun: Callable[..., list[Any]], avals: Sequence[ShapedArray], mesh: Mesh):
    with core.extend_axis_env(_frames(mesh)):
        return trace_to_jaxpr(fun, list(avals), "shard_map")


def _shard_map_jvp(
    primals: list[Any], tangents: list[Any], *, jaxpr: Any, mesh: Any, in_specs: Any, out_specs: Any
) -> Any:
    n = len(primals)
    nonzeros = [type(t) is not Zero for t in tangents]
    out_nonzeros: list[bool] = []

    def fun(*args: Any) -> list[Any]:
        ps, nz = list(args[:n]), iter(args[n:])
        ts = [
            next(nz) if z else Zero(a.strip_weak_type())
            for z, a in zip(nonzeros, jaxpr.in_avals, strict=True)
        ]
        outs, touts = jvp_flat(functools.partial(eval_jaxpr, jaxpr.jaxpr, jaxpr.consts), ps, ts)
        out_nonzeros[:] = [type(t) is not Zero for t in touts]
        return [*outs, *(t for t in touts if type(t) is not Zero)]

    t_avals = [a.strip_weak_type() for a, z in zip(jaxpr.in_avals, nonzeros, strict=True) if z]
    closed = _trace_body(fun, [*jaxpr.in_avals, *t_avals], mesh)
    t_specs = [s for s, z in zip(in_specs, nonzeros, strict=True) if z]
    nz_out_specs = [s for s, z in zip(out_specs, out_nonzeros, strict=True) if z]
    outs = _bind(
        [*primals, *(t for t in tangents if type(t) is not Zero)],
        closed,
        mesh,
        (*in_specs, *t_specs),
        (*out_specs, *nz_out_specs),
    )
    m = len(out_specs)
    nz_it = iter(outs[m:])
    avals = _shard_map_abstract_eval(jaxpr=jaxpr, mesh=mesh, in_specs=in_specs, out_specs=out_specs)
    touts = [
        next(nz_it) if z else Zero(a.strip_weak_type())
        for z, a in zip(out_nonzeros, avals, strict=True)
    ]
    return outs[:m], touts


shard_map_p.def_jvp(_shard_map_jvp, symbolic_zeros=True)


def _shard_map_transpose(cts, *args, jaxpr, mesh, in_specs, out_specs):
    undefined = [type(a) is UndefinedPrimal for a in args]
    defined_avals = [a for a, u in zip(jaxpr.in_avals, undefined, strict=True) if not u]
    ct_avals = [a.strip_weak_type() for a in jaxpr.out_avals]
    n_def = len(defined_avals)

    def fun(*xs: Any) -> list[Any]:
        defined, cts_in = iter(xs[:n_def]), list(xs[n_def:])
        # A psum transposes to a psum, so an output replicated over mesh axes carries its
        # cotangent once per device along them: share it out (JAX's check_rep=False rule).
        cts_in = [
            arithmetic.div(ct, math.prod(mesh.shape[a] for a in _unmentioned(mesh, s)))
            if get_aval(ct).dtype.kind in "fc"
            else ct
            for ct, s in zip(cts_in, out_specs, strict=True)
        ]
        full = [
            UndefinedPrimal(a.strip_weak_type()) if u else next(defined)
            for a, u in zip(jaxpr.in_avals, undefined, strict=True)
        ]
        outs = backward_pass(jaxpr.jaxpr, jaxpr.consts, full, cts_in)
        undefined_specs = [s for s, u in zip(in_specs, undefined, strict=True) if u]
        # An input replicated over mesh axes gets the cotangents of all its copies.
        return [
            parallel.psum(instantiate(ct), _unmentioned(mesh, s))
            if _unmentioned(mesh, s)
            else instantiate(ct)
            for ct, s in zip(outs, undefined_specs, strict=True)
        ]

    closed = _trace_body(fun, [*defined_avals, *ct_avals], mesh)
    defined = [a for a, u in zip(args, undefined, strict=True) if not u]
    def_specs = [s for s, u in zip(in_specs, undefined, strict=True) if not u]
    undef_specs = [s for s, u in zip(in_specs, undefined, strict=True) if u]
    outs = iter(
        _bind(
            [*defined, *(instantiate(c) for c in cts)],
            closed,
            mesh,
            (*def_specs, *out_specs),
            undef_specs,
        )
    )
    return [next(outs) if u else None for u in undefined]


shard_map_p.def_transpose(_shard_map_transpose)


@shard_map_p.def_batching
def _shard_map_batching(vals, dims, *, jaxpr, mesh, in_specs, out_specs):
    axis_size = next(
        get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not NOT_MAPPED
    )
    body_avals = [
        a if d is NOT_MAPPED else a.update(shape=(*a.shape[:d], axis_size, *a.shape[d:]))
        for a, d in zip(jaxpr.in_avals, dims, strict=True)
    ]

    def fun(*xs: Any) -> list[Any]:
        body = functools.partial(eval_jaxpr, jaxpr.jaxpr, jaxpr.consts)
        outs, _ = batch_jaxpr_like(body, list(xs), list(dims), axis_size, [0] * len(out_specs))
        return outs

    closed = _trace_body(fun, body_avals, mesh)
    new_in = tuple(
        s if d is NOT_MAPPED else _insert_none(s, d, a.ndim)
        for s, d, a in zip(in_specs, dims, jaxpr.in_avals, strict=True)
    )
    new_out = tuple(
        _insert_none(s, 0, a.ndim) for s, a in zip(out_specs, jaxpr.out_avals, strict=True)
    )
    outs = _bind(vals, closed, mesh, new_in, new_out)
    return outs, [0] * len(outs)


# --- partial evaluation: residuals leave the body as one block per device -------------------


def _split(jaxpr: ClosedJaxpr, mesh: Mesh, in_specs: Specs, out_specs: Specs, unks: tuple):
    """The known and unknown shard_maps of a body: (known body, its in/out specs, unknown
    body, its residual specs, pe). A residual the known body computes differs per device,
    so it leaves as a block of a new leading dimension split over every mesh axis."""
    known, unknown, pe = partial_eval_closed(jaxpr, unks)
    n_res = pe.num_computed_res
    n_known_out = len(known.out_avals) - n_res
    all_axes = PartitionSpec(tuple(mesh.axis_names))
    res_avals = known.out_avals[n_known_out:]

    def known_fun(*xs: Any) -> list[Any]:
        outs = eval_jaxpr(known.jaxpr, known.consts, *xs)
        res = [reshape(r, (1, *get_aval(r).shape)) for r in outs[n_known_out:]]
        return [*outs[:n_known_out], *res]

    known_closed = _trace_body(known_fun, known.in_avals, mesh)
    known_in = tuple(s for s, u in zip(in_specs, unks, strict=True) if not u)
    known_out = tuple(s for s, u in zip(out_specs, pe.out_unknowns, strict=True) if not u)
    known_out += (all_axes,) * n_res
    res_specs = tuple(all_axes if src is None else known_in[src] for src in pe.res_sources)
    n_all_res = len(pe.res_sources)
    computed_avals = iter(res_avals)
    unknown_avals = list(unknown.in_avals)
    for i, src in enumerate(pe.res_sources):
        if src is None:
            unknown_avals[i] = next(computed_avals).update(shape=(1, *unknown_avals[i].shape))

    def unknown_fun(*xs: Any) -> list[Any]:
        res = [
            reshape(x, get_aval(x).shape[1:]) if src is None else x
            for x, src in zip(xs[:n_all_res], pe.res_sources, strict=True)
        ]
        return eval_jaxpr(unknown.jaxpr, unknown.consts, *res, *xs[n_all_res:])

    unknown_closed = _trace_body(unknown_fun, unknown_avals, mesh)
    unknown_in = res_specs + tuple(s for s, u in zip(in_specs, unks, strict=True) if u)
    unknown_out = tuple(s for s, u in zip(out_specs, pe.out_unknowns, strict=True) if u)
    return known_closed, known_in, known_out, unknown_closed, unknown_in, unknown_out, pe


def _shard_map_partial_eval(trace, tracers, *, jaxpr, mesh, in_specs, out_specs):
    unks = tuple(not t.pval.is_known for t in tracers)
    k_jaxpr, k_in, k_out, u_jaxpr, u_in, u_out, pe = _split(jaxpr, mesh, in_specs, out_specs, unks)
    known_vals = [t.pval.const for t in tracers if t.pval.is_known]
    outs = _bind(known_vals, k_jaxpr, mesh, k_in, k_out)
    n_known = len(outs) - pe.num_computed_res
    residuals = pe.residuals(known_vals, outs[n_known:])
    res_tracers = [trace.instantiate_const(trace.lift(r)) for r in residuals]
    unknown_in = [t for t in tracers if not t.pval.is_known]
    call, consts = hoist_consts(u_jaxpr)
    const_tracers = [trace.instantiate_const(trace.lift(c)) for c in consts]
    params = dict(
        jaxpr=call,
        mesh=mesh,
        in_specs=(PartitionSpec(),) * len(consts) + u_in,
        out_specs=u_out,
    )
    in_tracers = [*const_tracers, *res_tracers, *unknown_in]
    avals = _shard_map_abstract_eval(*[t.aval for t in in_tracers], **params)
    unknown_outs = trace.stage_equation(shard_map_p, in_tracers, params, avals)
    known_it, unknown_it = iter(outs[:n_known]), iter(unknown_outs)
    return [next(unknown_it) if u else trace.lift(next(known_it)) for u in pe.out_unknowns]


shard_map_p.def_partial_eval(_shard_map_partial_eval)


def _shard_map_partial_eval_jaxpr(unks_in: list[bool], eqn: Any):
    p = eqn.params
    k_jaxpr, k_in, k_out, u_jaxpr, u_in, u_out, pe = _split(
        p["jaxpr"], p["mesh"], p["in_specs"], p["out_specs"], tuple(unks_in)
    )
    if k_jaxpr.consts or u_jaxpr.consts:
        return None  # constants in a split body: stage the whole equation instead
    ins_known = [x for x, u in zip(eqn.inputs, unks_in, strict=True) if not u]
    ins_unknown = [x for x, u in zip(eqn.inputs, unks_in, strict=True) if u]
    n_known = len(k_out) - pe.num_computed_res
    mesh = p["mesh"]
    computed = [
        Var(_global_aval(a, s, mesh))
        for a, s in zip(k_jaxpr.out_avals[n_known:], k_out[n_known:], strict=True)
    ]
    residuals = pe.residuals(ins_known, computed)
    outs_known = [v for v, u in zip(eqn.out_binders, pe.out_unknowns, strict=True) if not u]
    outs_unknown = [v for v, u in zip(eqn.out_binders, pe.out_unknowns, strict=True) if u]
    eqn_known = JaxprEqn(
        shard_map_p,
        ins_known,
        dict(jaxpr=k_jaxpr, mesh=mesh, in_specs=k_in, out_specs=k_out),
        outs_known + computed,
    )
    eqn_unknown = JaxprEqn(
        shard_map_p,
        residuals + ins_unknown,
        dict(jaxpr=u_jaxpr, mesh=mesh, in_specs=u_in, out_specs=u_out),
        outs_unknown,
    )
    return eqn_known, eqn_unknown, pe.out_unknowns, [r for r in residuals if type(r) is Var]


shard_map_p.partial_eval_jaxpr_rule = _shard_map_partial_eval_jaxpr


# --- the public functions -------------------------------------------------------------------


def _canonical_spec(spec: Any, what: str) -> PartitionSpec:
    if isinstance(spec, PartitionSpec):
        return spec
    if spec is None:
        return PartitionSpec()
    raise TypeError(f"shard_map {what} must be PartitionSpecs (P(...)); got {spec!r}")


def _specs_for(specs: Any, tree: Any, n: int, what: str) -> list[PartitionSpec]:
    """One spec per leaf: `specs` is a spec or a pytree prefix of specs (JAX's rule)."""
    if isinstance(specs, PartitionSpec) or specs is None:
        return [_canonical_spec(specs, what)] * n
    structure = tree_unflatten(tree, [0] * n)
    try:
        leaves = broadcast_prefix(
            specs, structure, is_leaf=lambda x: x is None or isinstance(x, PartitionSpec)
        )
    except ValueError as err:
        raise ValueError(
            f"shard_map {what} must be a pytree prefix of the {what[:-6]}s: {err}"
        ) from err
    return [_canonical_spec(s, what) for s in leaves]


def _check_spec(spec: PartitionSpec, mesh: Mesh, aval: ShapedArray, what: str) -> None:
    for i in range(len(spec)):
        for a in spec._axes(i):
            if a not in mesh.shape:
                raise ValueError(
                    f"shard_map {what} {spec} names the axis {a!r}, which the mesh lacks "
                    f"(mesh axes: {tuple(mesh.axis_names)})"
                )
    if len(spec) > aval.ndim:
        raise ValueError(
            f"shard_map {what} {spec} has {len(spec)} entries for a value of rank {aval.ndim} "
            f"(shape {aval.shape})"
        )
    for i, d in enumerate(aval.shape):
        n = math.prod(mesh.shape[a] for a in _spec_axes(spec, i))
        if d % n:
            raise ValueError(
                f"shard_map {what} {spec}: dimension {i} of shape {aval.shape} ({d}) is not "
                f"divisible by the size of mesh axes {_spec_axes(spec, i)} ({n})"
            )


def shard_map(
    f: Callable[..., Any],
    mesh: Mesh | None = None,
    in_specs: Any = None,
    out_specs: Any = None,
    check_rep: bool = True,
    check_vma: bool = True,
    **kwargs: Any,
) -> Callable[..., Any]:
    """Map `f` over blocks of its arguments, one block per device of `mesh` (JAX's
    `shard_map`; see the module docstring for its meaning and restrictions).

    Args:
      f: the per-device function; collectives over the mesh axis names work inside it.
      mesh: the devices and their axis names (`mjcore.sharding.Mesh`).
      in_specs: a PartitionSpec per argument (a pytree prefix of the arguments): which mesh
        axes split which dimension; axes left out replicate the argument over them.
      out_specs: likewise for the outputs: how the blocks are reassembled.
      check_rep, check_vma: accepted for compatibility; not checked.

    Raises:
      ValueError: a spec naming an axis the mesh lacks, or a dimension not divisible by
        the size of its mesh axes (naming the axis and shape).
    """
    del check_rep, check_vma, kwargs
    if not isinstance(mesh, Mesh):
        raise TypeError(f"shard_map requires a mesh= of type Mesh; got {type(mesh).__name__}")
    if out_specs is None:
        raise TypeError("shard_map requires out_specs= (a PartitionSpec per output)")

    sharding_mod.in_use = True  # jit now looks for programs over a mesh

    # Eager calls reuse the traced body and its jitted program, keyed as jit's cache is.
    cache: dict[Any, tuple[Any, Any, Any]] = {}  # -> (run, out tree, arg shardings)

    @functools.wraps(f)
    def mapped(*args: Any) -> Any:
        args_flat, in_tree = tree_flatten(args)
        avals = tuple(get_aval(x) for x in args_flat)
        eager = core._state.eager
        hit = cache.get((in_tree, avals)) if eager else None
        if hit is None:
            hit = _prepare(in_tree, avals)
            if eager:
                if len(cache) >= 64:  # bounded
                    cache.clear()
                cache[(in_tree, avals)] = hit
        run, out_tree, shardings = hit
        if eager:
            args_flat = [_laid_out(x, s) for x, s in zip(args_flat, shardings, strict=True)]
        return tree_unflatten(out_tree, list(run(*args_flat)))

    def _prepare(in_tree: Any, avals: tuple[ShapedArray, ...]) -> tuple[Any, Any, Any]:
        specs = _specs_for(in_specs, in_tree, len(avals), "in_specs")
        for i, (s, a) in enumerate(zip(specs, avals, strict=True)):
            _check_spec(s, mesh, a, f"in_specs[{i}]")
        block_avals = [
            _block_aval(a, s, mesh).strip_weak_type() for a, s in zip(avals, specs, strict=True)
        ]
        flat_fun, out_tree_box = flatten_fun(
            f, in_tree, f"shard_map({getattr(f, '__name__', 'f')})"
        )
        closed = _trace_body(flat_fun, block_avals, mesh)
        out_tree = out_tree_box[0]
        n_out = len(closed.out_avals)
        if callable(out_specs):  # pmap's: the specs follow from the output tree
            o_specs = list(out_specs(out_tree))
        else:
            o_specs = _specs_for(out_specs, out_tree, n_out, "out_specs")

        def run(*xs: Any) -> list[Any]:
            laid_out = [
                with_sharding_constraint(x, NamedSharding(mesh, s))
                for x, s in zip(xs, specs, strict=True)
            ]
            outs = _bind(laid_out, closed, mesh, specs, o_specs)
            return [
                with_sharding_constraint(o, NamedSharding(mesh, s))
                for o, s in zip(outs, o_specs, strict=True)
            ]

        shardings = [NamedSharding(mesh, s) for s in specs]
        return (jit(run) if core._state.eager else run), out_tree, shardings

    return mapped


def _laid_out(x: Any, s: NamedSharding) -> Any:
    """An eager argument laid out as its spec says, before the call (as JAX's shard_map): a
    host or one-device array would otherwise be an argument of the program replicated, put
    whole on every device and cut there (n copies of a pmapped batch per call), and a
    program compiled for it would not serve the next call's laid-out arrays."""
    if isinstance(x, np.ndarray) or (type(x) is Array and x.ndim):
        return device_put_sharded(x, s)
    return x  # (a sharded Array keeps its layout: the program reshards it; scalars: as given)


def pmap(
    fun: Callable[..., Any],
    axis_name: Any = None,
    *,
    in_axes: Any = 0,
    out_axes: Any = 0,
    devices: Sequence[Any] | None = None,
    **kwargs: Any,
) -> Callable[..., Any]:
    """Run `fun` once per device on slices of its arguments (JAX's `pmap`): the mapped axis
    (`in_axes`, as vmap's) must have one entry per device; collectives over `axis_name` act
    across them. As in JAX 0.10, a shard_map over a one-axis mesh of `devices` (default: the
    first n devices, n the mapped size)."""
    name = axis_name if axis_name is not None else "_pmap_axis"
    cache: dict[Any, tuple[Any, list[Any]]] = {}
    meshes: dict[tuple[Any, ...], Mesh] = {}

    @functools.wraps(fun)
    def mapped(*args: Any) -> Any:
        args_flat, in_tree = tree_flatten(args)
        axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
        dims = broadcast_prefix(axes, args, is_leaf=lambda x: x is None)
        sizes = {
            get_aval(x).shape[d] for x, d in zip(args_flat, dims, strict=True) if d is not None
        }
        if len(sizes) != 1:
            raise ValueError(
                f"pmap got inconsistent sizes for the mapped axis: {sorted(sizes)}"
                if sizes
                else "pmap needs at least one mapped argument (in_axes not all None)"
            )
        (n,) = sizes
        devs = list(devices) if devices is not None else client.devices()[:n]
        if len(devs) != n:
            raise ValueError(
                f"pmap: the mapped axis has size {n}, but {len(devs)} devices are available "
                f"({'devices=' if devices is not None else 'mjcore.devices()'}); map over at "
                "most that many"
            )
        mesh = meshes.get(tuple(devs))
        if mesh is None:
            if len(meshes) >= 64:  # bounded
                meshes.clear()
            mesh = meshes[tuple(devs)] = Mesh(np.array(devs, dtype=object), (name,))
        moved = [
            x if d is None else move_bdim(x, d % get_aval(x).ndim, 0)
            for x, d in zip(args_flat, dims, strict=True)
        ]
        specs = tuple(PartitionSpec() if d is None else PartitionSpec(name) for d in dims)
        flags = [d is not None for d in dims]

        def body(*xs: Any) -> Any:
            blocks = [
                reshape(x, get_aval(x).shape[1:]) if m else x
                for x, m in zip(xs, flags, strict=True)
            ]
            out = fun(*tree_unflatten(in_tree, blocks))
            out_flat, tree = tree_flatten(out)
            cache[key][1].append(tree)
            o_axes = broadcast_prefix(out_axes, out, is_leaf=_none)
            # out_axes None: the value is the same on every device, returned replicated.
            return [
                o if a is None else reshape(o, (1, *get_aval(o).shape))
                for o, a in zip(out_flat, o_axes, strict=True)
            ]

        def out_specs(flat_tree: Any) -> list[PartitionSpec]:
            tree = cache[key][1][-1]  # the body's own output tree, just traced
            leaves = tree_unflatten(tree, [0] * tree.num_leaves)
            o_axes = broadcast_prefix(out_axes, leaves, is_leaf=_none)
            return [PartitionSpec() if a is None else PartitionSpec(name) for a in o_axes]

        key = (in_tree, tuple(dims), tuple(devs))
        hit = cache.get(key)
        if hit is None:
            box: list[Any] = []
            mapped_body = shard_map(body, mesh=mesh, in_specs=specs, out_specs=out_specs)
            hit = (mapped_body, box)
            if len(cache) >= 64:  # bounded
                cache.clear()
            cache[key] = hit
        mapped_body, box = hit
        outs = mapped_body(*moved)
        out_tree = box[-1]
        o_axes = broadcast_prefix(out_axes, tree_unflatten(out_tree, outs), is_leaf=_none)
        outs = [_out_axis(o, a) for o, a in zip(outs, o_axes, strict=True)]
        return tree_unflatten(out_tree, outs)

    del kwargs
    return mapped


def _none(x: Any) -> bool:
    return x is None


def _out_axis(x: Any, axis: int | None) -> Any:
    """A pmap output (devices on axis 0) with the devices' axis at `axis` (None: replicated,
    no devices' axis)."""
    if axis is None:
        return x
    return move_bdim(x, 0, axis % get_aval(x).ndim)


__all__ = ["pmap", "shard_map"]
