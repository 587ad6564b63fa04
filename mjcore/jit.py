"""Autodidax Part 3: `jit` as an initial-style higher-order primitive (`pjit`) holding a jaxpr,
lowered to one StableHLO module, compiled once per signature and run on device buffers."""

from __future__ import annotations

import functools
import inspect
import threading
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from mjcore import ad, batching, core
from mjcore import partial_eval as pe
from mjcore import sharding as _sharding
from mjcore.ad import (
    UndefinedPrimal,
    Zero,
    instantiate,
    jvp_jaxpr,
    transpose_closed,
)
from mjcore.api_util import flatten_fun
from mjcore.array import Array, avals_and_buffers, new_object, wrap_buffer
from mjcore.backend import client as backend
from mjcore.backend.lowering import donation_plan, lower_jaxpr, lower_jaxpr_body
from mjcore.batching import NOT_MAPPED, batch_jaxpr
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.dispatch import device_put, to_buffer
from mjcore.jaxpr import ClosedJaxpr, JaxprEqn, Var, hoist_consts
from mjcore.partial_eval import partial_eval_closed, trace_to_jaxpr
from mjcore.tree_util import PyTreeDef, tree_flatten, tree_unflatten

DEFAULT_CACHE_SIZE = 256


# --- the pjit primitive ---------------------------------------------------------------------

pjit_p = Primitive("pjit", multiple_results=True)


def _pjit_abstract_eval(*avals: ShapedArray, jaxpr: ClosedJaxpr, name: str) -> list[ShapedArray]:
    expected = jaxpr.in_avals
    for a, b in zip(avals, expected, strict=True):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise TypeError(f"pjit {name}: argument {a.str_short()} does not match {b.str_short()}")
    return jaxpr.out_avals


pjit_p.def_abstract_eval(_pjit_abstract_eval)


class _Executable:
    """A compiled jaxpr: executes on buffers and wraps outputs as Arrays."""

    __slots__ = ("program", "out_avals", "text")

    def __init__(self, closed: ClosedJaxpr, name: str, donated: Sequence[bool] = ()):
        lowered = lower_jaxpr(closed.jaxpr, name, donated)
        self.text = lowered.text
        self.out_avals = closed.out_avals

        jaxpr = closed.jaxpr  # not `closed`: it keys `_compiled`, whose values are these

        def relower() -> tuple[str, Sequence[Any]]:
            again = lower_jaxpr(jaxpr, name, donated)
            return again.text, again.host_callbacks

        self.program = backend.Program(
            lowered.text, self.out_avals, lowered.host_callbacks, relower=relower
        )

    def __call__(self, bufs: list[Any]) -> list[Array]:
        outs = self.program.run(bufs)
        avals = self.out_avals
        if len(outs) == 1:
            return [wrap_buffer(outs[0], avals[0])]
        return [wrap_buffer(b, a) for b, a in zip(outs, avals, strict=True)]


_compiled: weakref.WeakKeyDictionary[ClosedJaxpr, _Executable] = weakref.WeakKeyDictionary()
_compile_lock = threading.Lock()


def compile_closed_jaxpr(closed: ClosedJaxpr, name: str) -> _Executable:
    """The executable of a const-free closed jaxpr, compiled on first use."""
    exe = _compiled.get(closed)
    if exe is None:
        with _compile_lock:
            exe = _compiled.get(closed)
            if exe is None:
                exe = _compiled[closed] = _Executable(closed, name)
    return exe


# `mjcore.sharded_jit` (programs partitioned over a mesh), installed by that module when it is
# imported (it sits above this one: it builds on `api`, which builds on `jit`); always before a
# sharding can exist, since `mjcore` imports it.
_sharded_jit: Any = None


def install_sharded_jit(module: Any) -> None:
    """Route calls made while shardings are in use through `module` (`mjcore.sharded_jit`)."""
    global _sharded_jit
    _sharded_jit = module


@pjit_p.def_impl
def _pjit_impl(*args: Any, jaxpr: ClosedJaxpr, name: str) -> list[Array]:
    if _sharding.in_use:
        outs = _sharded_jit.run_closed(jaxpr, name, list(args))
        if outs is not None:
            return outs
    exe = compile_closed_jaxpr(jaxpr, name)
    return exe([to_buffer(x)[0] for x in args])


@pjit_p.def_lowering
def _pjit_lowering(ctx, *args, jaxpr: ClosedJaxpr, name: str):
    # Inline the callee: XLA would inline a private function anyway.
    return lower_jaxpr_body(ctx.builder, jaxpr.jaxpr, [], args)


# jvp and vmap of a jitted function transform its jaxpr, not the Python function: the results
# are cached on the jaxpr, so repeated calls neither retrace nor recompile.
def _pjit_jvp(primals: list[Any], tangents: list[Any], *, jaxpr: ClosedJaxpr, name: str):
    nonzeros = tuple(type(t) is not Zero for t in tangents)
    closed, out_nonzeros = jvp_jaxpr(jaxpr, nonzeros)
    call, consts = hoist_consts(closed)
    nz_tangents = [t for t in tangents if type(t) is not Zero]
    outs = pjit_p.bind(*consts, *primals, *nz_tangents, jaxpr=call, name=f"jvp({name})")
    n = len(jaxpr.out_avals)
    primals_out, nz_out = outs[:n], iter(outs[n:])
    tangents_out = [
        next(nz_out) if nz else Zero(a.strip_weak_type())
        for nz, a in zip(out_nonzeros, jaxpr.out_avals, strict=True)
    ]
    return primals_out, tangents_out


pjit_p.def_jvp(_pjit_jvp, symbolic_zeros=True)


def _pjit_batching(vals: list[Any], dims: list[int | None], *, jaxpr: ClosedJaxpr, name: str):
    axis_size = next(
        get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not NOT_MAPPED
    )
    closed = batch_jaxpr(jaxpr, axis_size, tuple(dims))
    call, consts = hoist_consts(closed)
    outs = pjit_p.bind(*consts, *vals, jaxpr=call, name=f"vmap({name})")
    return outs, [0] * len(outs)


pjit_p.def_batching(_pjit_batching)


# --- the user-facing jit --------------------------------------------------------------------


_LEAF_TREEDEF = tree_flatten(0)[1]


class _CacheEntry:
    __slots__ = (
        "closed",
        "consts",
        "out_tree",
        "name",
        "_exe",
        "eager_ok",
        "const_bufs",
        "single_output",
        "n_args",
        "donated",
    )

    def __init__(
        self,
        closed: ClosedJaxpr,
        consts: list[Any],
        out_tree: PyTreeDef,
        name: str,
        donated: tuple[bool, ...] = (),
    ):
        self.closed = closed  # const-free: consts are its leading arguments
        self.donated = donated  # per argument of `closed` (consts first), or () for none
        self.consts = consts
        self.out_tree = out_tree
        self.name = name
        self._exe: _Executable | None = None
        # Precomputed for the eager fast path: consts closed over from an outer transformation
        # (tracers) force the call through `bind`.
        self.eager_ok = not any(isinstance(c, core.Tracer) for c in consts)
        self.const_bufs = [c._buf for c in consts] if self.eager_ok else []
        self.single_output = out_tree == _LEAF_TREEDEF
        self.n_args = len(closed.in_avals) - len(consts)

    def run(self, exe: _Executable, flat: Sequence[Any]) -> list[Array]:
        """Eagerly, `exe` (this entry's executable, or one taking the same arguments) on the
        buffers of the flat arguments after the consts': its outputs as Arrays. The one
        "buffers, execute, wrap" sequence of `jit`'s and `fuse_eagerly`'s eager calls (the
        fastest paths of `__call__` inline it)."""
        bufs = [x._buf if type(x) is Array else to_buffer(x)[0] for x in flat]
        if self.const_bufs:
            bufs = self.const_bufs + bufs
        return exe(bufs)


class Lowered:
    """The StableHLO of a jitted function at one signature (`jit(f).lower(*args)`)."""

    def __init__(self, jitted: JittedFunction, entry: _CacheEntry):
        self._jitted = jitted
        self._entry = entry

    def as_text(self) -> str:
        return lower_jaxpr(self._entry.closed.jaxpr, self._entry.name, self._entry.donated).text

    def compile(self) -> Compiled:
        return Compiled(self._jitted, self._entry)


class Compiled:
    """A compiled jitted function at one signature; call it with arguments of that signature."""

    def __init__(self, jitted: JittedFunction, entry: _CacheEntry):
        self._jitted = jitted
        self._entry = entry
        self._exe = jitted._executable(entry)

    def as_text(self) -> str:
        return self._exe.text

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._jitted(*args, **kwargs)


class JittedFunction:
    """A function staged out to XLA: traced once per signature, compiled once, cached (LRU)."""

    def __init__(
        self,
        fun: Callable[..., Any],
        static_argnums: Sequence[int],
        static_argnames: Sequence[str],
        donate_argnums: Sequence[int],
        cache_size: int,
    ):
        self._fun = fun
        self._name = getattr(fun, "__name__", type(fun).__name__)
        self._signature = _signature(fun)
        _check_argnums_in_range(self._name, self._signature, "static_argnums", static_argnums)
        _check_argnums_in_range(self._name, self._signature, "donate_argnums", donate_argnums)
        self._static_argnums = frozenset(
            _resolve_static(fun, self._signature, static_argnums, static_argnames)
        )
        self._static_argnames = frozenset(static_argnames) | frozenset(
            _names_of(self._signature, self._static_argnums)
        )
        self._donate_argnums = frozenset(
            _resolve_donate(self._name, self._signature, donate_argnums, self._static_argnums)
        )
        self._cache: OrderedDict[Any, _CacheEntry] = OrderedDict()
        # Calls with positional Array arguments only (the common case) skip pytree flattening:
        # keyed by the tuple of avals. Entries also live in `_cache`, which owns eviction.
        self._flat_calls: dict[tuple[ShapedArray, ...], _CacheEntry] | None = (
            {} if not (self._static_argnums or self._donate_argnums) else None
        )
        # Of those, the const-free single-output ones, with what to execute ready to call;
        # keyed by the aval itself for one argument.
        self._simple: dict[Any, tuple[Any, Any, ShapedArray, Any]] | None = (
            {} if self._flat_calls is not None else None
        )
        self._cache_size = cache_size
        self._in_shardings: Any = None
        self._out_shardings: Any = None
        self._lock = threading.RLock()
        self.trace_count = 0
        self.compile_count = 0
        # Caches kept beside this function's own (by `mjcore.eager_fusion`), emptied with them.
        self._clear_hooks: list[Callable[[], None]] = []
        functools.update_wrapper(self, fun, updated=())
        _live_jitted.add(self)

    # -- signature handling ------------------------------------------------------------------
    def _split(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, Any]:
        statics: list[tuple[int | str, Any]] = []
        dyn_args = []
        for i, a in enumerate(args):
            if i in self._static_argnums:
                statics.append((i, _check_hashable(self._name, i, a)))
            else:
                dyn_args.append(a)
        dyn_kwargs = {}
        for k in sorted(kwargs):
            if k in self._static_argnames:
                statics.append((k, _check_hashable(self._name, k, kwargs[k])))
            else:
                dyn_kwargs[k] = kwargs[k]
        return tuple(dyn_args), dyn_kwargs, tuple(statics)

    def _merge(self, statics: tuple[Any, ...], dyn_args: Sequence[Any], dyn_kwargs: dict) -> Any:
        static_pos = {k: v for k, v in statics if isinstance(k, int)}
        static_kw = {k: v for k, v in statics if isinstance(k, str)}
        n = len(dyn_args) + len(static_pos)
        it = iter(dyn_args)
        args = [static_pos[i] if i in static_pos else next(it) for i in range(n)]
        return self._fun(*args, **dyn_kwargs, **static_kw)

    # -- tracing and caching -----------------------------------------------------------------
    def _entry_for(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        if kwargs or self._static_argnums:
            dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
            flat, in_tree = tree_flatten((dyn_args, dyn_kwargs))
            key_tree: Any = (in_tree, statics)
        else:
            # Common case: positional array arguments only; (args, {}) flattens to the same
            # leaves in the same order, so only the key differs.
            dyn_args, dyn_kwargs, statics = args, {}, ()
            flat, key_tree = tree_flatten(args)
        avals = []
        for x in flat:
            if type(x) is Array:
                avals.append(x.aval)
            else:
                try:
                    avals.append(get_aval(x))
                except TypeError as err:
                    raise TypeError(
                        f"jit({self._name}): arguments must be arrays or Python scalars, got "
                        f"{type(x).__name__}; mark it static with static_argnums/"
                        "static_argnames if it is a configuration value"
                    ) from err
        key = (key_tree, tuple(avals))
        cache = self._cache
        entry = cache.get(key)
        if entry is None:
            with self._lock:
                entry = cache.get(key)
                if entry is None:
                    in_tree = tree_flatten((dyn_args, dyn_kwargs))[1]
                    entry = self._trace(flat, in_tree, avals, statics, dyn_args, dyn_kwargs)
                    if entry.eager_ok:
                        cache[key] = entry
                        if len(cache) > self._cache_size:
                            cache.popitem(last=False)
                            if self._flat_calls:
                                self._flat_calls.clear()
                            if self._simple:
                                self._simple.clear()
        elif len(cache) > 1:
            cache.move_to_end(key)
        if (
            self._flat_calls is not None
            and not kwargs
            and entry.eager_ok
            and len(flat) == len(args)
            and all(type(x) is Array for x in flat)
        ):
            self._flat_calls[key[1]] = entry
        return entry, flat

    def _trace(self, flat, in_tree, avals, statics, dyn_args, dyn_kwargs) -> _CacheEntry:
        self.trace_count += 1
        flat_fun, out_tree_cell = flatten_fun(
            lambda a, kw: self._merge(statics, a, kw), in_tree, f"jit({self._name})"
        )
        names = _debug_names(self._signature, dyn_args, dyn_kwargs, len(flat))
        closed = trace_to_jaxpr(flat_fun, avals, f"jit({self._name})", names)
        call, consts = hoist_consts(closed)
        consts = [c if isinstance(c, core.Tracer | Array) else _device_put(c) for c in consts]
        donated = self._donated_leaves(statics, dyn_args, avals)
        if donated:
            donated = (False,) * len(consts) + donated
        return _CacheEntry(call, consts, out_tree_cell[0], self._name, donated)

    def _donated_leaves(self, statics, dyn_args, avals) -> tuple[bool, ...]:
        """Which flat arguments are donated, or () when none is."""
        if not self._donate_argnums:
            return ()
        static_pos = {k for k, _ in statics if isinstance(k, int)}
        flags: list[bool] = []
        i = 0
        for a in dyn_args:
            while i in static_pos:
                i += 1
            flags += [i in self._donate_argnums] * len(tree_flatten(a)[0])
            i += 1
        flags += [False] * (len(avals) - len(flags))  # keyword arguments are not donated
        # NB: unlike JAX, 0-d arguments are never donated: reusing them saves nothing, and
        # Python scalars share cached device buffers that donation would delete.
        donated = tuple(f and a.ndim > 0 for f, a in zip(flags, avals, strict=True))
        return donated if any(donated) else ()

    def _executable(self, entry: _CacheEntry) -> _Executable:
        exe = entry._exe
        if exe is None:
            with self._lock:
                if entry._exe is None:
                    self.compile_count += 1
                    if entry.donated:
                        # Not shared through `compile_closed_jaxpr`: a jaxpr bound by `pjit`
                        # (under a transformation) runs without donation.
                        _warn_unused_donations(entry)
                        entry._exe = _Executable(entry.closed, entry.name, entry.donated)
                    else:
                        entry._exe = compile_closed_jaxpr(entry.closed, entry.name)
                exe = entry._exe
        return exe

    # -- calling -----------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        sharding_checked = False
        if _sharding.in_use and core._state.eager and not core._state.jit_disabled:
            # Shardings exist in this process: the call may be partitioned over a mesh.
            sharding_checked = True
            out = _sharded_jit.call(self, args, kwargs)
            if out is not _sharded_jit.UNSHARDED:
                return out
        simple = self._simple
        if simple is not None and not kwargs:
            # Fastest path: Array arguments, one output, no constants, no transformation.
            try:
                if len(args) == 1:  # keyed by the aval itself: no tuple, no helper call
                    (a,) = args
                    execute, handlers, out_aval, program = simple[a.aval]
                    bufs = [a._buf]
                else:
                    key, bufs = avals_and_buffers(args)
                    execute, handlers, out_aval, program = simple[key]
            except (KeyError, AttributeError):
                pass
            else:
                if core._state.eager:
                    try:
                        buf = execute(bufs).consume_with_handlers(handlers)[0]
                    except Exception:  # e.g. a donated (deleted) buffer: run explains it
                        return Array(program.run(bufs)[0], out_aval)
                    # `wrap_buffer` inlined: a frame is ~1% of a small jitted call
                    out = new_object(Array)
                    out._dbuf = buf
                    out.aval = out_aval
                    out._npy = None
                    out._link = out._children = None
                    return out
        flat_calls = self._flat_calls
        if flat_calls is not None and not kwargs:
            # Every argument a concrete Array, outside any transformation.
            entry = flat_calls.get(tuple([a.aval for a in args if type(a) is Array]))
            if entry is not None and entry.n_args == len(args) and core._state.eager:
                exe = entry._exe or self._executable(entry)
                bufs = [a._buf for a in args]
                if entry.const_bufs:
                    bufs = entry.const_bufs + bufs
                program = exe.program
                # `run`: it explains a donated buffer and waits for host callbacks
                outs = program.run(bufs)
                if entry.single_output:
                    cacheable = not entry.const_bufs and not program.host_callbacks
                    if cacheable and self._simple is not None:
                        if len(self._simple) >= self._cache_size:
                            self._simple.clear()
                        avals = tuple([a.aval for a in args])
                        self._simple[avals[0] if len(avals) == 1 else avals] = (
                            program.executable.execute_sharded,
                            program.handlers,
                            exe.out_avals[0],
                            program,
                        )
                    return wrap_buffer(outs[0], exe.out_avals[0])
                outs = [wrap_buffer(b, a) for b, a in zip(outs, exe.out_avals, strict=True)]
                return tree_unflatten(entry.out_tree, outs)
        if core._state.jit_disabled:  # `disable_jit()` turns the fast paths above off too
            return self._fun(*args, **kwargs)
        entry, flat = self._entry_for(args, kwargs)
        if _sharding.in_use and core._state.eager and not sharding_checked:
            # (tracing may have just constrained the first sharding of the process)
            out = _sharded_jit.call(self, args, kwargs)
            if out is not _sharded_jit.UNSHARDED:
                return out
        if entry.eager_ok and core._state.eager:
            # Eager fast path: straight to the executable, no bind.
            exe = entry._exe or self._executable(entry)
            if entry.donated:
                _drop_host_views(entry, flat)
            outs = entry.run(exe, flat)
        else:
            outs = pjit_p.bind(*entry.consts, *flat, jaxpr=entry.closed, name=entry.name)
        return tree_unflatten(entry.out_tree, outs)

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        """Trace (if needed) and lower for these arguments; `.as_text()` gives StableHLO."""
        self._entry_for(args, kwargs)  # (tracing may constrain the first sharding)
        if _sharding.in_use:
            lowered = _sharded_jit.lower(self, args, kwargs)
            if lowered is not None:
                return lowered  # type: ignore[no-any-return]
        entry, _ = self._entry_for(args, kwargs)
        return Lowered(self, entry)

    def trace(self, *args: Any, **kwargs: Any) -> ClosedJaxpr:
        """The (const-hoisted) jaxpr this function runs for these arguments."""
        entry, _ = self._entry_for(args, kwargs)
        return entry.closed

    def clear_cache(self) -> None:
        """Drop this function's traced jaxprs and executables (the next call retraces)."""
        with self._lock:
            self._cache.clear()
            if self._flat_calls:
                self._flat_calls.clear()
            if self._simple:
                self._simple.clear()
            for hook in self._clear_hooks:
                hook()

    def cache_size(self) -> int:
        return len(self._cache)

    def __repr__(self) -> str:
        return f"<jit-compiled function {self._name}>"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        # Support decorating methods.
        return self if obj is None else functools.partial(self, obj)


_live_jitted: weakref.WeakSet[JittedFunction] = weakref.WeakSet()


def _device_put(x: Any) -> Array:
    return device_put(x)


def _drop_host_views(entry: _CacheEntry, flat: list[Any]) -> None:
    # A cached NumPy view of a buffer holds an external reference to it, and PJRT does not
    # donate a buffer that has one (it leaves the argument alone and allocates the output).
    for x, d in zip(flat, entry.donated[len(entry.consts) :], strict=True):
        if d and type(x) is Array:
            x._buf  # noqa: B018  # a host-computed value goes to the device before its view goes
            x._npy = None


def _warn_unused_donations(entry: _CacheEntry) -> None:
    closed = entry.closed
    plan = donation_plan(closed.in_avals, closed.out_avals, entry.donated)
    if plan.unused:
        unused = ", ".join(closed.in_avals[i].str_short() for i in plan.unused)
        warnings.warn(
            f"jit({entry.name}): some donated buffers were not usable: {unused}. No output "
            "has the same size, so these arguments are not donated (they stay valid).",
            stacklevel=4,
        )


def _resolve_donate(
    fname: str,
    sig: inspect.Signature | None,
    donate_argnums: Sequence[int],
    static_argnums: frozenset[int],
) -> list[int]:
    nums = []
    for i in donate_argnums:
        if not isinstance(i, int) or isinstance(i, bool):
            raise TypeError(
                f"jit({fname}): donate_argnums must be integers, got {type(i).__name__} {i!r}"
            )
        if i < 0:
            params = list(sig.parameters.values()) if sig is not None else []
            if sig is None or any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
                raise ValueError(
                    f"jit({fname}): negative donate_argnums {i} needs a function with a fixed "
                    "number of positional parameters; use a non-negative index"
                )
            i += len(params)
        if i in static_argnums:
            raise ValueError(
                f"jit({fname}): argument {i} is both static and donated; static arguments are "
                "not buffers, so drop it from donate_argnums or from static_argnums"
            )
        nums.append(i)
    return nums


def _signature(fun: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def _names_of(sig: inspect.Signature | None, argnums: frozenset[int]) -> list[str]:
    if sig is None:
        return []
    params = list(sig.parameters.values())
    return [
        params[i].name
        for i in argnums
        if i < len(params) and params[i].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    ]


def _resolve_static(
    fun: Callable[..., Any],
    sig: inspect.Signature | None,
    static_argnums: Sequence[int],
    static_argnames: Sequence[str],
) -> list[int]:
    nums = [int(i) for i in static_argnums]
    if sig is not None:
        params = list(sig.parameters.values())
        n = len(params)
        has_varargs = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)
        resolved = []
        for i in nums:
            if i < 0:
                if has_varargs:
                    raise ValueError(
                        f"jit: negative static_argnums {i} needs a function without *args"
                    )
                i += n
            resolved.append(i)
        nums = resolved
        for name in static_argnames:
            for i, p in enumerate(params):
                if p.name == name and p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD:
                    nums.append(i)
    return nums


def _check_hashable(fname: str, which: Any, value: Any) -> Any:
    try:
        hash(value)
    except TypeError as err:
        # ValueError, as JAX raises ("Non-hashable static arguments are not supported").
        raise ValueError(
            f"Non-hashable static arguments are not supported: jit({fname}) got static "
            f"argument {which!r} of type {type(value).__name__}, {value!r:.80}. Static "
            "arguments key the compilation cache: pass a tuple instead of a list, or make the "
            "argument dynamic."
        ) from err
    return value


def _check_argnums_in_range(
    fname: str, sig: inspect.Signature | None, which: str, argnums: Sequence[int]
) -> None:
    """JAX's ValueError, at `jit(...)`, for argnums beyond a function's positional
    parameters (unknowable when it takes *args or has no signature)."""
    if sig is None:
        return
    params = list(sig.parameters.values())
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return
    n = sum(
        p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for p in params
    )
    if any(type(i) is int and not -n <= i < n for i in argnums):
        raise ValueError(
            f"Jitted function has {which}={tuple(argnums)}, but only accepts {n} positional "
            f"arguments (jit({fname}))."
        )


def _debug_names(
    sig: inspect.Signature | None, args: tuple[Any, ...], kwargs: dict[str, Any], n: int
) -> list[str] | None:
    params = list(sig.parameters) if sig is not None else []
    names: list[str] = []
    for i, a in enumerate(args):
        base = params[i] if i < len(params) else f"args[{i}]"
        k = len(tree_flatten(a)[0])
        names.extend([f"argument '{base}'"] * k)
    for key, v in kwargs.items():
        names.extend([f"argument '{key}'"] * len(tree_flatten(v)[0]))
    return names if len(names) == n else None


def jit(
    fun: Callable[..., Any] | None = None,
    *,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    donate_argnums: int | Sequence[int] = (),
    cache_size: int = DEFAULT_CACHE_SIZE,
    in_shardings: Any = None,
    out_shardings: Any = None,
) -> Any:
    """Compile `fun` with XLA, as JAX's `jit`.

    The function is traced to a jaxpr once per (argument pytree structure, shapes, dtypes and
    weak types, static argument values), lowered to one StableHLO module and compiled; later
    calls with the same signature run the cached executable directly on device buffers.

    Args:
      static_argnums / static_argnames: arguments treated as compile-time constants (must be
        hashable); a new value retraces.
      donate_argnums: positional arguments whose buffers the computation may reuse for its
        outputs, saving memory and copies (every array leaf of a pytree argument is donated).
        A donated array is matched, as in JAX, to an output of the same shape and dtype (or
        else of the same size); after the call it is deleted, and using it raises
        `RuntimeError: Array has been deleted`. A donated array that no output can reuse
        stays valid, with a warning. Donation applies to direct calls only: under another
        transformation (or inside another jit) the arguments are left alone. 0-d arrays are
        never donated.
      cache_size: how many signatures to keep compiled (least recently used are evicted).
      in_shardings / out_shardings: the layout over devices (`mjcore.sharding`) of the
        arguments / outputs: a Sharding for all, or a tuple with one per positional argument
        / output (None: taken from the argument, or chosen by XLA for an output). The program
        is then partitioned over the mesh by XLA (`mjcore.sharded_jit`); so it is when an
        argument is an Array made of shards or the function constrains a sharding.

    Python control flow on traced values raises `ConcretizationTypeError`; use static
    arguments or `mjcore.cond`-style primitives instead.
    """
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    donate = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums)
    if cache_size < 1:
        raise ValueError(f"jit: cache_size must be at least 1, got {cache_size}")

    def wrap(f: Callable[..., Any]) -> JittedFunction:
        if not callable(f):
            raise TypeError(f"jit: expected a callable, got {type(f).__name__}")
        jitted = JittedFunction(f, nums, names, donate, cache_size)
        if in_shardings is not None or out_shardings is not None:
            _sharded_jit.check_shardings(jitted._name, "in_shardings", in_shardings)
            _sharded_jit.check_shardings(jitted._name, "out_shardings", out_shardings)
            jitted._in_shardings, jitted._out_shardings = in_shardings, out_shardings
            _sharding.in_use = True
        return jitted

    return wrap if fun is None else wrap(fun)


@contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Context manager: inside it, `jit`-decorated functions run their Python op by op, as
    JAX's `disable_jit`.

    Values are concrete inside a jitted function then, so `print(x)`, `if x > 0:` and
    `float(x)` work (for debugging). Control flow (`cond`, `switch`, `while_loop`, `scan`,
    `fori_loop`) runs as Python loops and branches when its inputs are concrete, and mjnp
    functions run primitive by primitive. `make_jaxpr` and `jit(f).lower` still trace. The
    setting is per thread and is restored on exit, also when an exception leaves the block.

    Args:
      disable: False re-enables jit inside an outer `disable_jit()` block.
    """
    prev = core.set_jit_disabled(bool(disable))
    try:
        yield
    finally:
        core.set_jit_disabled(prev)


def clear_caches() -> None:
    """Drop every cache of traced jaxprs and compiled executables, as JAX's `clear_caches`.

    That is each jitted function's signature cache, the executables of eagerly run primitives
    and control flow, and the jaxprs `jvp`, `vmap`, partial evaluation, transposition and
    `checkpoint` derive from jitted functions. Later calls retrace and recompile; arrays and
    `Compiled` objects already made stay valid.
    """
    backend.clear_caches()


# --- reverse mode: partial evaluation and transposition of pjit -----------------------------


def _pjit_partial_eval(trace: Any, tracers: list[Any], *, jaxpr: ClosedJaxpr, name: str):
    in_unknowns = tuple(not t.pval.is_known for t in tracers)
    known, unknown, pe = partial_eval_closed(jaxpr, in_unknowns)
    known_vals = [t.pval.const for t in tracers if t.pval.is_known]
    outs = pjit_p.bind(*known_vals, jaxpr=known, name=name)
    n_known = len(outs) - pe.num_computed_res
    known_outs = outs[:n_known]
    residuals = pe.residuals(known_vals, outs[n_known:])
    res_tracers = [trace.instantiate_const(trace.lift(r)) for r in residuals]
    unknown_in = [t for t in tracers if not t.pval.is_known]
    unknown_outs = trace.stage_equation(
        pjit_p, [*res_tracers, *unknown_in], dict(jaxpr=unknown, name=name), unknown.out_avals
    )
    known_it, unknown_it = iter(known_outs), iter(unknown_outs)
    return [next(unknown_it) if u else trace.lift(next(known_it)) for u in pe.out_unknowns]


pjit_p.def_partial_eval(_pjit_partial_eval)


def _pjit_partial_eval_jaxpr(unks_in: list[bool], eqn: Any):
    closed = eqn.params["jaxpr"]
    name = eqn.params["name"]
    known, unknown, pe = partial_eval_closed(closed, tuple(unks_in))
    ins_known = [x for x, u in zip(eqn.inputs, unks_in, strict=True) if not u]
    ins_unknown = [x for x, u in zip(eqn.inputs, unks_in, strict=True) if u]
    n_known = len(known.out_avals) - pe.num_computed_res
    computed = [Var(a) for a in known.out_avals[n_known:]]
    residuals = pe.residuals(ins_known, computed)
    outs_known = [v for v, u in zip(eqn.out_binders, pe.out_unknowns, strict=True) if not u]
    outs_unknown = [v for v, u in zip(eqn.out_binders, pe.out_unknowns, strict=True) if u]
    eqn_known = JaxprEqn(pjit_p, ins_known, dict(jaxpr=known, name=name), outs_known + computed)
    eqn_unknown = JaxprEqn(
        pjit_p, residuals + ins_unknown, dict(jaxpr=unknown, name=name), outs_unknown
    )
    return eqn_known, eqn_unknown, pe.out_unknowns, [r for r in residuals if type(r) is Var]


pjit_p.partial_eval_jaxpr_rule = _pjit_partial_eval_jaxpr


def _pjit_transpose(cts: list[Any], *args: Any, jaxpr: ClosedJaxpr, name: str):
    undefined = tuple(type(a) is UndefinedPrimal for a in args)
    closed = transpose_closed(jaxpr, undefined)
    call, consts = hoist_consts(closed)
    defined = [a for a, u in zip(args, undefined, strict=True) if not u]
    cts = [instantiate(c) for c in cts]
    outs = iter(pjit_p.bind(*consts, *defined, *cts, jaxpr=call, name=f"transpose({name})"))
    return [next(outs) if u else None for u in undefined]


pjit_p.def_transpose(_pjit_transpose)


@backend.clear_at_exit
def _clear_jit_caches() -> None:
    for f in list(_live_jitted):
        f.clear_cache()
    for cache in (
        _compiled,
        ad._jvp_cache,
        batching._batch_cache,
        pe._pe_cache,
        ad._transpose_cache,
    ):
        cache.clear()
