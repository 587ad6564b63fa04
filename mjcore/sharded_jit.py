"""Sharded jit: one program partitioned over a mesh's devices by XLA's SPMD partitioner.

`jit` calls come here (`call`) once shardings are in use (`mjcore.sharding.in_use`): when
the jitted function was given `in_shardings`/`out_shardings`, an argument is an Array made
of shards, or the traced program constrains a sharding. We lower the same jaxpr as for one
device, with a sharding attribute on each argument (its layout) and on each result that has a
requested layout: Shardy's `sdy.sharding` over the `sdy.mesh` declared in the module, or with
`jax_use_shardy_partitioner` off GSPMD's `mhlo.sharding` (`mjcore.shardy`). XLA partitions
the program, inserts the communication, and
chooses the layout of the other results, which we read back from the executable and name as
a `NamedSharding` over the mesh. Arguments that are not laid out on the mesh (ordinary
single-device Arrays, Python scalars, the function's constants) are replicated onto it.

See docs/sharding.md.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any

import numpy as np

from mjcore import core, shardy
from mjcore.api import ShapeDtypeStruct
from mjcore.array import Array
from mjcore.backend import client as backend
from mjcore.backend.lowering import lower_jaxpr
from mjcore.jaxpr import ClosedJaxpr
from mjcore.jit import install_sharded_jit
from mjcore.lax.sharding import constraint_shardings
from mjcore.sharded import ShardedArray, device_put_sharded
from mjcore.sharding import (
    GSPMDSharding,
    Mesh,
    NamedSharding,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
    named_sharding_candidates,
)
from mjcore.tree_util import tree_flatten, tree_unflatten

UNSHARDED = object()  # `call`'s answer when the call is an ordinary one-device call

# Per traced jaxpr: whether it constrains shardings, and its programs by layout.
_constrained: weakref.WeakKeyDictionary[ClosedJaxpr, bool] = weakref.WeakKeyDictionary()
_programs: weakref.WeakKeyDictionary[ClosedJaxpr, dict[Any, Any]] = weakref.WeakKeyDictionary()
_PROGRAMS_PER_JAXPR = 32

# Emptied with every other cache of executables (`mjcore.clear_caches`, the compile budget).
backend.clear_at_exit(_programs.clear)


def _has_constraint(closed: ClosedJaxpr) -> bool:
    out = _constrained.get(closed)
    if out is None:
        # (constraints to one device run on one device: no mesh to partition over)
        out = _constrained[closed] = any(
            isinstance(s, NamedSharding | GSPMDSharding) for s in constraint_shardings(closed.jaxpr)
        )
    return out


def check_shardings(fname: str, which: str, shardings: Any) -> None:
    """Raise TypeError unless `shardings` is None, a Sharding, or a pytree of those."""
    leaves, _ = tree_flatten(shardings, is_leaf=lambda s: s is None or isinstance(s, Sharding))
    for s in leaves:
        if s is not None and not isinstance(s, Sharding):
            hint = (
                " (wrap a PartitionSpec as NamedSharding(mesh, spec))"
                if isinstance(s, PartitionSpec)
                else ""
            )
            raise TypeError(
                f"jit({fname}): {which} must be Sharding objects (or None), got "
                f"{type(s).__name__}{hint}"
            )


def _per_leaf(spec: Any, tree_children: list[int], what: str, fname: str) -> list[Any]:
    """Broadcast `spec` (None, a Sharding, or a tuple with one entry per child, each a
    Sharding/None or a pytree of them) over the leaves; `tree_children[i]` counts child i's
    leaves."""
    n = sum(tree_children)
    if spec is None or isinstance(spec, Sharding):
        return [spec] * n
    leaves, _ = tree_flatten(spec, is_leaf=lambda s: s is None or isinstance(s, Sharding))
    if not isinstance(spec, tuple | list) and len(leaves) == n:
        return leaves  # a pytree of shardings matching the whole structure (a dict, ...)
    if isinstance(spec, tuple | list) and len(spec) == len(tree_children):
        out: list[Any] = []
        for sub, count in zip(spec, tree_children, strict=True):
            if sub is None or isinstance(sub, Sharding):
                out += [sub] * count
            else:
                leaves, _ = tree_flatten(sub, is_leaf=lambda s: s is None)
                if len(leaves) != count:
                    raise ValueError(
                        f"jit({fname}): {what} entry {sub!r} has {len(leaves)} shardings for "
                        f"an argument of {count} arrays"
                    )
                out += leaves
        return out
    raise ValueError(
        f"jit({fname}): {what} must be a Sharding, None, or a tuple with one entry per "
        f"{'argument' if what == 'in_shardings' else 'output'} ({len(tree_children)}); got "
        f"{spec!r}"
    )


def _mesh_of(fname: str, shardings: list[Sharding]) -> Mesh:
    """The mesh every multi-device sharding is over (its devices in one order).

    Raises:
      ValueError: for shardings over different devices (JAX's "incompatible devices")."""
    mesh = None
    for s in shardings:
        if isinstance(s, NamedSharding | GSPMDSharding):
            if mesh is None:
                mesh = s.mesh
            elif s.mesh._flat_devices != mesh._flat_devices:
                raise ValueError(
                    f"Received incompatible devices for jitted computation jit({fname}): "
                    f"{s} is over device ids {[d.id for d in s.mesh._flat_devices]} but "
                    f"{mesh} is over {[d.id for d in mesh._flat_devices]}; put every array on "
                    "one mesh (mjcore.device_put(x, NamedSharding(mesh, spec)))"
                )
    assert mesh is not None
    return mesh


def call(jitted: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run a jitted function partitioned over a mesh, or UNSHARDED when nothing about the
    call is sharded (the caller then runs it on one device)."""
    explicit = jitted._in_shardings is not None or jitted._out_shardings is not None
    entry, flat = jitted._entry_for(args, kwargs)
    if not entry.eager_ok:  # (constants that are tracers: the call is under a transformation)
        return UNSHARDED
    sharded_args = any(isinstance(x, ShardedArray) for x in flat)
    if not (explicit or sharded_args or _has_constraint(entry.closed)):
        return UNSHARDED
    program, in_shardings, _ = _program_for(jitted, entry, args, kwargs, flat)
    return tree_unflatten(entry.out_tree, _execute(program, entry, flat, in_shardings))


def lower(jitted: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The sharded `Lowered` of a call, or None when the call is not sharded."""
    explicit = jitted._in_shardings is not None or jitted._out_shardings is not None
    entry, flat = jitted._entry_for(args, kwargs)
    sharded_args = any(_layout_of(x) is not None for x in flat)
    if not (explicit or sharded_args or _has_constraint(entry.closed)) or not entry.eager_ok:
        return None
    text = _lowering(jitted, entry, args, kwargs, flat)[0]
    return ShardedLowered(text, jitted, args, kwargs)


class ShardedLowered:
    """The StableHLO of a sharded jit call (`jit(f).lower(x)`), with its sharding
    attributes (`sdy.sharding`, or `mhlo.sharding` with Shardy off) and partition count."""

    def __init__(self, text: str, jitted: Any, args: tuple[Any, ...], kwargs: dict[str, Any]):
        self._text = text
        self._jitted = jitted
        self._call = (args, kwargs)

    def as_text(self) -> str:
        return self._text

    def compile(self) -> Any:
        return _ShardedCompiled(self)


class _ShardedCompiled:
    def __init__(self, lowered: ShardedLowered):
        self._lowered = lowered
        args, kwargs = lowered._call
        entry, flat = lowered._jitted._entry_for(args, kwargs)
        self._program = _program_for(lowered._jitted, entry, args, kwargs, flat)[0]
        self._n_consts = len(entry.consts)

    def as_text(self) -> str:
        return self._lowered.as_text()

    @property
    def input_shardings(self) -> tuple[Sharding, ...]:
        """The layout of each argument leaf (flat), as compiled."""
        return self._program.in_shardings[self._n_consts :]

    @property
    def output_shardings(self) -> list[Sharding]:
        """The layout of each output leaf (flat): requested, or XLA's choice."""
        return list(self._program.out_shardings)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._lowered._jitted(*args, **kwargs)


def _layout_of(x: Any) -> Sharding | None:
    """The multi-device layout an argument brings (a ShardedArray's, or the sharding of a
    ShapeDtypeStruct given to `lower`), else None."""
    if isinstance(x, ShardedArray):
        return x._sharding
    if isinstance(x, ShapeDtypeStruct):
        return x.sharding
    return None


def _lowering(jitted: Any, entry: Any, args: Any, kwargs: Any, flat: list[Any]) -> tuple:
    fname = jitted._name
    closed = entry.closed
    n_consts = len(entry.consts)
    dyn_args, dyn_kwargs, _ = jitted._split(args, kwargs)
    counts = [len(tree_flatten(a)[0]) for a in dyn_args]
    explicit_in = _per_leaf(jitted._in_shardings, counts, "in_shardings", fname)
    explicit_in += [None] * (len(flat) - len(explicit_in))  # keyword arguments
    leaf_in: list[Sharding | None] = []
    for x, s in zip(flat, explicit_in, strict=True):
        own = _layout_of(x)
        if s is None:
            s = own
        elif own is not None and not own.is_equivalent_to(s, len(core.get_aval(x).shape)):
            raise ValueError(
                "Sharding passed to jit does not match the sharding on the respective arg. "
                f"Got jit sharding: {s},\narg sharding: {own} for arg type: "
                f"{core.get_aval(x).str_short()} (jit({fname})); pass the argument laid out "
                "as in_shardings says (mjcore.device_put(x, sharding)), or drop in_shardings"
            )
        leaf_in.append(None if isinstance(s, SingleDeviceSharding) else s)
    n_out = len(closed.out_avals)
    out_structure = tree_unflatten(entry.out_tree, list(range(n_out)))
    if isinstance(out_structure, tuple | list):
        out_counts = [len(tree_flatten(c)[0]) for c in out_structure]
    else:
        out_counts = [n_out]
    out_spec = jitted._out_shardings
    if isinstance(out_spec, tuple | list) and not isinstance(out_structure, tuple | list):
        out_spec = out_spec[0] if len(out_spec) == 1 else out_spec
    leaf_out = _per_leaf(out_spec, out_counts, "out_shardings", fname)
    leaf_out = [None if isinstance(s, SingleDeviceSharding) else s for s in leaf_out]
    constraints = constraint_shardings(closed.jaxpr)
    for which, given in (("in_shardings", leaf_in), ("out_shardings", leaf_out)):
        if any(isinstance(s, NamedSharding) and s.spec._unconstrained() for s in given):
            raise ValueError(
                f"jit({fname}): {which} cannot leave a dimension UNCONSTRAINED (an array's "
                "layout is fixed); use None (not split), or "
                "with_sharding_constraint(x, NamedSharding(mesh, P(..., P.UNCONSTRAINED)))"
            )
    known = [s for s in leaf_in + leaf_out if s is not None] + constraints
    if not any(isinstance(s, NamedSharding | GSPMDSharding) for s in known):
        raise ValueError(f"jit({fname}): the shardings name no mesh; use NamedSharding(mesh, spec)")
    mesh = _mesh_of(fname, known)
    in_avals = closed.in_avals
    replicated = NamedSharding(mesh, PartitionSpec())
    in_shardings: list[Sharding] = [replicated] * n_consts
    for i, (s, aval) in enumerate(zip(leaf_in, in_avals[n_consts:], strict=True)):
        if s is None:
            s = replicated
        elif isinstance(s, NamedSharding):
            s.check_shape(aval.shape, f"jit({fname}) argument {i} of shape {aval.str_short()}")
        in_shardings.append(s)
    for i, (s, aval) in enumerate(zip(leaf_out, closed.out_avals, strict=True)):
        if isinstance(s, NamedSharding):
            s.check_shape(aval.shape, f"jit({fname}) output {i} of shape {aval.str_short()}")
    # Shardy unless switched off, or a layout has no Shardy form (a GSPMDSharding: XLA's
    # choice for an earlier output that no spec over the mesh describes).
    use_shardy = shardy.enabled() and all(
        shardy.expressible(s) for s in [*in_shardings, *leaf_out, *constraints]
    )

    def attrs(module: Any) -> tuple[list[str | None], list[str | None]]:
        def attr(s: Sharding | None, ndim: int) -> str | None:
            if s is None:
                return None
            if use_shardy:
                return f"sdy.sharding = {shardy.sharding_attr(module, s, ndim, mesh)}"
            return f'mhlo.sharding = "{s._hlo_sharding_text(ndim)}"'

        if use_shardy:
            module.mesh_symbol(shardy.mesh_attr(mesh))  # the program's mesh is `@mesh`
        args = [attr(s, a.ndim) for s, a in zip(in_shardings, in_avals, strict=True)]
        outs = [attr(s, a.ndim) for s, a in zip(leaf_out, closed.out_avals, strict=True)]
        return args, outs

    lowered = lower_jaxpr(closed.jaxpr, entry.name, entry.donated, attrs, use_shardy)
    if lowered.host_callbacks:
        raise NotImplementedError(
            f"jit({fname}): host callbacks in a program partitioned over several devices are "
            "not supported yet"
        )
    head, rest = lowered.text.split(" {\n", 1)
    module_attrs = f"mhlo.num_partitions = {mesh.size} : i32, mhlo.num_replicas = 1 : i32"
    text = f"{head} attributes {{{module_attrs}}} {{\n{rest}"
    return text, mesh, in_shardings, leaf_out, use_shardy


def _program_for(jitted: Any, entry: Any, args: Any, kwargs: Any, flat: list[Any]) -> tuple:
    fname = jitted._name
    key = (
        jitted._in_shardings is None and jitted._out_shardings is None,
        tuple(x._sharding if isinstance(x, ShardedArray) else None for x in flat),
        _shardings_key(jitted._in_shardings),
        _shardings_key(jitted._out_shardings),
    )
    programs = _programs.get(entry.closed)
    if programs is None:
        programs = _programs[entry.closed] = {}
    found = programs.get(key)
    if found is None:
        text, mesh, in_shardings, leaf_out, use_shardy = _lowering(
            jitted, entry, args, kwargs, flat
        )
        program = backend.SpmdProgram(
            text,
            mesh._flat_devices,
            entry.closed.out_avals,
            leaf_out,
            lambda hlo, ndim: _name_sharding(fname, mesh, hlo, ndim),
            use_shardy,
        )
        program_in = tuple(in_shardings)
        if len(programs) >= _PROGRAMS_PER_JAXPR:
            programs.clear()
        found = programs[key] = (_Program(program, program_in), program_in, leaf_out)
    return found


def _shardings_key(s: Any) -> Any:
    if s is None or isinstance(s, Sharding):
        return s
    leaves, tree = tree_flatten(s, is_leaf=lambda x: x is None)
    return (tuple(leaves), tree)


class _Program:
    """A compiled sharded program and the layout of each of its arguments."""

    __slots__ = ("spmd", "in_shardings", "out_shardings", "const_bufs")

    def __init__(self, spmd: Any, in_shardings: tuple[Sharding, ...]):
        self.spmd = spmd
        self.in_shardings = in_shardings
        self.out_shardings = spmd.out_shardings
        # The function's constants, laid out on the first call (they never change).
        self.const_bufs: list[Any] | None = None


def _name_sharding(fname: str, mesh: Mesh, hlo: Any, ndim: int) -> Sharding:
    """The NamedSharding over `mesh` whose HLO sharding is `hlo` (XLA's choice for an
    output; None: XLA reported none, as for a one-device program)."""
    if hlo is None:
        return NamedSharding(mesh, PartitionSpec())
    for candidate in named_sharding_candidates(mesh, ndim):
        if backend.hlo_sharding_equals(candidate._hlo_sharding_text(ndim), hlo):
            return candidate
    # (XLA split a dimension over part of a mesh axis, say): its tile assignment as it is
    tiled = backend.hlo_tiling(hlo)
    if tiled is None:
        raise NotImplementedError(
            f"jit({fname}): XLA laid an output of rank {ndim} out as {hlo}, which mjcore "
            "cannot represent; pass out_shardings= to choose its layout"
        )
    return GSPMDSharding(mesh._flat_devices, *tiled, mesh=mesh)


def _execute(program: _Program, entry: Any, flat: list[Any], in_shardings: tuple) -> list[Array]:
    n_consts = len(entry.consts)
    if program.const_bufs is None:
        program.const_bufs = [
            _laid_out(c, s) for c, s in zip(entry.consts, in_shardings[:n_consts], strict=True)
        ]
    bufs = list(program.const_bufs)
    for x, s in zip(flat, in_shardings[n_consts:], strict=True):
        bufs.append(_laid_out(x, s))
    outs = program.spmd.run(bufs)
    return [
        ShardedArray(b, aval, s)
        for b, aval, s in zip(outs, entry.closed.out_avals, program.out_shardings, strict=True)
    ]


def _laid_out(x: Any, s: Sharding) -> Any:
    """`x`'s multi-device buffer laid out as `s` (moved through the host when it is not)."""
    if isinstance(x, ShardedArray) and x._sharding == s:
        return x._shards
    if not isinstance(x, Array):
        aval = core.get_aval(x)
        x = np.asarray(x, aval.dtype)
    out = device_put_sharded(x, s)
    return out._shards  # type: ignore[attr-defined]  # (a ShardedArray)


def run_closed(closed: ClosedJaxpr, name: str, args: list[Any]) -> list[Array] | None:
    """Eagerly run a const-free jaxpr that constrains shardings (a `pjit` applied under an
    eager transformation), partitioned over the mesh of its shardings; None if it does
    not constrain any and no argument is sharded."""
    if not (_has_constraint(closed) or any(isinstance(x, ShardedArray) for x in args)):
        return None
    jitted = _ClosedCall(closed, name)
    return call(jitted, tuple(args), {})  # type: ignore[no-any-return]


class _ClosedCall:
    """Just enough of a JittedFunction for `call`: a const-free jaxpr called flat."""

    _in_shardings = None
    _out_shardings = None

    def __init__(self, closed: ClosedJaxpr, name: str):
        self._name = name
        self._entry = _FlatEntry(closed, name)

    def _entry_for(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, list[Any]]:
        return self._entry, list(args)

    def _split(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, Any]:
        return args, {}, ()


class _FlatEntry:
    def __init__(self, closed: ClosedJaxpr, name: str):
        self.closed = closed
        self.consts: list[Any] = []
        self.name = name
        self.donated: tuple[bool, ...] = ()
        self.eager_ok = True
        n = len(closed.out_avals)
        self.out_tree = tree_flatten(list(range(n)))[1]


install_sharded_jit(sys.modules[__name__])
