"""Eager `grad` of a hot function as one compiled executable, keyed by what the function does.

Eager reverse mode runs each primitive of the forward pass, its jvp rule and the transposed
backward pass as separate XLA executions (a dozen for `sum(tanh(x * w) ** 2)`), which dominates
the time of a small eager `grad`. When the same function is differentiated eagerly again and
again (a training loop without `jit`), this module traces it to a jaxpr on each call, keys the
jaxpr by its *structure* (primitives, parameters, wiring, literals, avals; never by values:
arguments and closed-over arrays are inputs) and runs value-and-gradient of that structure as
one cached executable.

Semantics stay those of an eager call, because the function's Python runs on every call:
side effects happen each time, and closed-over arrays are read afresh. Only functions whose
trace does not need values can be fused; the first time a function looks at a value (`if x >
0`, `float(x)`, `print(x)`, a boolean mask) its trace fails, the call runs eagerly (so Python
side effects before that point happen twice, once) and the function is never traced again.

Thresholds keep one-off calls eager and cheap: a function is traced from its
`_TRACE_FROM_CALL`-th call on; a structure seen the first time is differentiated eagerly from
the traced jaxpr (the Python is not re-run) and compiled the second time it is seen; a function
that keeps producing new structures (e.g. a Python float literal that changes every call)
stops being traced after `_MAX_STRUCTURES` of them.
"""

from __future__ import annotations

import enum
import math
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mjcore import core
from mjcore.array import Array, wrap_buffer
from mjcore.backend import client as backend
from mjcore.core import ShapedArray, get_aval
from mjcore.dispatch import device_put
from mjcore.jaxpr import ClosedJaxpr, Jaxpr, Literal, eval_jaxpr
from mjcore.partial_eval import trace_to_jaxpr
from mjcore.tree_util import PyTreeDef, tree_flatten, tree_unflatten

_TRACE_FROM_CALL = 3
_MAX_STRUCTURES = 8
_CACHE_SIZE = 256


class _Unkeyable(Exception):
    """A parameter or literal with no structural key (a callable, an array): do not fuse."""


class _FunctionStats:
    __slots__ = ("calls", "structures", "fusable")

    def __init__(self) -> None:
        self.calls = 0
        self.structures = 0
        self.fusable = True


# Per code object (closures of one `def` share it; bound methods by their function).
_stats: weakref.WeakKeyDictionary[Any, _FunctionStats] = weakref.WeakKeyDictionary()
# structure key -> traced jaxpr (seen once) or the compiled value-and-grad (seen again)
_cache: OrderedDict[Any, Any] = OrderedDict()
_lock = threading.Lock()
backend.clear_at_exit(_cache.clear)
backend.clear_at_exit(_stats.clear)

# How many calls ran a compiled executable (for tests and benchmarks to check it is in use).
fused_calls = 0


def _identity(fun: Callable[..., Any]) -> Any:
    fun = getattr(fun, "__func__", fun)
    return getattr(fun, "__code__", fun)


def try_value_and_grad(
    fun: Callable[..., Any], args: tuple[Any, ...], argnums: tuple[int, ...]
) -> tuple[Any, tuple[Any, ...]] | None:
    """`(fun(*args), grads w.r.t. args[argnums])` through the fused path, or None to say
    "run the ordinary eager path" (not hot yet, not fusable, or not eager)."""
    state = core._state
    if not state.eager or state.speculating:
        return None
    try:
        ident = _identity(fun)
        stats = _stats.get(ident)
        if stats is None:
            stats = _stats[ident] = _FunctionStats()
    except TypeError:  # not weak-referenceable
        return None
    if not stats.fusable:
        return None
    stats.calls += 1
    if stats.calls < _TRACE_FROM_CALL:
        return None

    traced = _trace_for_grad(fun, args, argnums)
    if traced is None:
        return None
    closed, flat, in_tree, diff = traced
    if closed is None or not _scalar_inexact_output(closed):
        stats.fusable = False
        return None
    try:
        key = (in_tree, diff, _structure(closed.jaxpr))
    except _Unkeyable:
        stats.fusable = False
        return None

    consts = list(closed.consts)
    with _lock:
        cached = _cache.get(key)
        if cached is None:
            stats.structures += 1
            if stats.structures > _MAX_STRUCTURES:
                stats.fusable = False
            _cache[key] = closed.jaxpr
            if len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
        else:
            _cache.move_to_end(key)
            if isinstance(cached, Jaxpr):
                cached = _cache[key] = _Compiled(cached, consts, flat, diff)
    if cached is None:  # first sighting: differentiate the traced jaxpr eagerly
        outs = _value_and_grad_flat(closed.jaxpr, len(consts), diff)(*consts, *flat)
    else:
        global fused_calls
        fused_calls += 1
        outs = cached(consts, flat)
    value, grads = outs[0], outs[1:]
    return value, _unflatten_grads(args, argnums, diff, grads)


def value_and_grad_by_tracing(
    fun: Callable[..., Any], args: tuple[Any, ...], argnums: tuple[int, ...]
) -> tuple[Any, tuple[Any, ...]] | None:
    """`(fun(*args), grads)` from `fun` traced to a jaxpr and differentiated eagerly, or None
    when it cannot be traced (it needs values).

    The eager path's fallback for functions that fill a constant array in place
    (`x = zeros(n); x[i] = f(w)`): run eagerly under `grad`, `x` is a concrete array that
    cannot hold a traced value, but traced as a whole `zeros(n)` is itself traced.
    """
    traced = _trace_for_grad(fun, args, argnums)
    if traced is None or traced[0] is None or not _scalar_inexact_output(traced[0]):
        return None
    closed, flat, _, diff = traced
    consts = list(closed.consts)
    outs = _value_and_grad_flat(closed.jaxpr, len(consts), diff)(*consts, *flat)
    return outs[0], _unflatten_grads(args, argnums, diff, outs[1:])


def _trace_for_grad(
    fun: Callable[..., Any], args: tuple[Any, ...], argnums: tuple[int, ...]
) -> tuple[ClosedJaxpr | None, list[Any], PyTreeDef, tuple[int, ...]] | None:
    """`fun` traced speculatively at `args`' avals (None in place of the jaxpr if that
    failed), with the flat arguments, their tree and the leaves to differentiate; or None
    for arguments that are not traced as values (ints, NumPy arrays, other objects)."""
    n_args = len(args)
    if n_args <= 2 and all([type(a) is Array for a in args]):
        # The common case on every call of a hot eager grad: Array arguments, no pytrees to
        # flatten (~1.5 µs of the trace's ~13 µs of fixed cost).
        in_tree = _flat_trees.get(n_args) or _flat_tree(n_args)
        return _speculative_trace(fun, None, [a.aval for a in args]), list(args), in_tree, argnums
    flat, in_tree = tree_flatten(args)
    avals = []
    for i, x in enumerate(flat):
        if type(x) is Array:
            avals.append(x.aval)
        elif type(x) is float:
            avals.append(get_aval(x))
        elif type(x) is np.ndarray:
            flat[i] = device_put(x)
            avals.append(flat[i].aval)
        else:  # ints (value-dependent promotion), tracers, other objects
            return None
    diff = _diff_leaves(flat, args, argnums)
    return _speculative_trace(fun, in_tree, avals), flat, in_tree, diff


def _diff_leaves(
    flat: list[Any], args: tuple[Any, ...], argnums: tuple[int, ...]
) -> tuple[int, ...]:
    """Flat leaf positions of `args[argnums]`, in argnums order."""
    if len(flat) == len(args):  # every argument a leaf
        return argnums
    starts, pos = [], 0
    for a in args:
        starts.append(pos)
        pos += len(tree_flatten(a)[0])
    out = []
    for i in argnums:
        out.extend(range(starts[i], starts[i] + len(tree_flatten(args[i])[0])))
    return tuple(out)


def _unflatten_grads(
    args: tuple[Any, ...], argnums: tuple[int, ...], diff: tuple[int, ...], grads: list[Any]
) -> tuple[Any, ...]:
    if diff is argnums:  # every argument a leaf
        return tuple(grads)
    out, k = [], 0
    for i in argnums:
        leaves, tree = tree_flatten(args[i])
        out.append(tree_unflatten(tree, grads[k : k + len(leaves)]))
        k += len(leaves)
    return tuple(out)


_flat_trees: dict[int, PyTreeDef] = {}


def _flat_tree(n_args: int) -> PyTreeDef:
    """The tree of a tuple of n leaves (as `tree_flatten` gives for n Array arguments)."""
    tree = _flat_trees[n_args] = tree_flatten((0,) * n_args)[1]
    return tree


def _speculative_trace(
    fun: Callable[..., Any], in_tree: PyTreeDef | None, avals: Sequence[ShapedArray]
) -> ClosedJaxpr | None:
    """`fun` traced at `avals`, its arguments rebuilt from the leaves by `in_tree` (None:
    the leaves are the arguments); None if tracing failed."""

    def flat_fun(*leaves: Any) -> list[Any]:
        if in_tree is None:
            return [fun(*leaves)]
        return [fun(*tree_unflatten(in_tree, list(leaves)))]

    state = core._state
    state.speculating = True
    try:
        return trace_to_jaxpr(flat_fun, avals, "eager grad (fused)")
    except Exception:  # noqa: BLE001  # any failure: the eager call will raise it properly
        return None
    finally:
        state.speculating = False


def _scalar_inexact_output(closed: ClosedJaxpr) -> bool:
    (aval,) = closed.out_avals
    return aval.shape == () and aval.dtype.kind in "fc"


def _value_and_grad_flat(jaxpr: Jaxpr, n_consts: int, diff: tuple[int, ...]):
    from mjcore.api import vjp
    from mjcore.lax.base import full

    def value_and_grad_flat(*inputs: Any) -> list[Any]:
        consts, xs = list(inputs[:n_consts]), list(inputs[n_consts:])

        def f_of_diff(*d: Any) -> Any:
            full_args = list(xs)
            for i, v in zip(diff, d, strict=True):
                full_args[i] = v
            return eval_jaxpr(jaxpr, consts, *full_args)[0]

        out, f_vjp = vjp(f_of_diff, *[xs[i] for i in diff])
        return [out, *f_vjp(full((), 1, get_aval(out).dtype))]

    return value_and_grad_flat


class _Compiled:
    """The value-and-grad executable of one structure, called straight on the buffers.

    The structure key fixes every input's aval, so a key hit needs no signature lookup: the
    call goes to PJRT directly (~2 µs less than through `JittedFunction.__call__`), or through
    the jitted function when an input is not an Array (a Python float) or execution fails
    (a deleted buffer, which the jitted call reports properly).
    """

    __slots__ = ("jitted", "execute", "handlers", "out_avals", "const_bufs")

    def __init__(self, jaxpr: Jaxpr, consts: list[Any], flat: list[Any], diff: tuple[int, ...]):
        from mjcore.jit import JittedFunction

        self.jitted = JittedFunction(_value_and_grad_flat(jaxpr, len(consts), diff), (), (), (), 4)
        entry, _ = self.jitted._entry_for((*consts, *flat), {})
        exe = self.jitted._executable(entry)
        program = exe.program
        # A program with host callbacks runs through `Program.run` (which waits for them).
        direct = entry.eager_ok and not program.host_callbacks
        self.execute = program.executable.execute_sharded if direct else None
        self.handlers = program.handlers
        self.out_avals = exe.out_avals
        self.const_bufs = entry.const_bufs

    def __call__(self, consts: list[Any], flat: list[Any]) -> list[Any]:
        execute = self.execute
        if execute is not None:
            try:
                bufs = self.const_bufs + [x._buf for x in consts] + [x._buf for x in flat]
            except AttributeError:  # a Python float or NumPy value among the inputs
                pass
            else:
                try:
                    outs = execute(bufs).consume_with_handlers(self.handlers)
                except Exception:  # noqa: BLE001  # e.g. a deleted buffer: the jitted call says so
                    pass
                else:
                    return [wrap_buffer(b, a) for b, a in zip(outs, self.out_avals, strict=True)]
        return list(self.jitted(*consts, *flat))


# --- structural keys ------------------------------------------------------------------------


def _structure(jaxpr: Jaxpr) -> tuple[Any, ...]:
    """A hashable key equal for jaxprs that compute the same function of their inputs."""
    # On every fused call's path: one flat list, variables numbered in a dict keyed by the Var
    # objects themselves (identity hash, in C).
    ids: dict[Any, int] = {}
    for v in jaxpr.constvars:
        ids[v] = len(ids)
    for v in jaxpr.invars:
        ids[v] = len(ids)
    key: list[Any] = [
        tuple([v.aval for v in jaxpr.constvars]),
        tuple([v.aval for v in jaxpr.invars]),
    ]
    append = key.append
    for prim, inputs, params, out_binders in jaxpr.eqns:
        append(prim)
        for x in inputs:
            append(("lit", x.aval, _value_key(x.val)) if type(x) is Literal else ids[x])
        append(None)  # separates inputs from the parameters
        if params:
            for k, p in params.items():
                append(k)
                append(_param_key(p))
        if len(out_binders) == 1:
            (v,) = out_binders
            append(1)
            ids[v] = len(ids)
            append(v.aval)
            continue
        append(len(out_binders))
        for v in out_binders:
            ids[v] = len(ids)
            append(v.aval)
    append(None)  # separates the equations from the outputs
    for x in jaxpr.outs:
        append(("lit", x.aval, _value_key(x.val)) if type(x) is Literal else ids[x])
    return tuple(key)


def _value_key(v: Any) -> Any:
    t = type(v)
    if t is float:  # NaN != NaN and -0.0 == 0.0 as dict keys: key floats by their bits
        return (t, v.hex())
    if t is complex:
        return (t, v.real.hex(), v.imag.hex())
    if t in (int, bool):
        return (t, v)
    if isinstance(v, np.generic | np.ndarray) and v.size <= 16:
        return (v.dtype, v.shape, v.tobytes())
    raise _Unkeyable


_INTS = "tuple of ints"


def _param_key(p: Any) -> Any:
    t = type(p)
    if p is None or t in (bool, int, str):
        return (t, p)  # typed: True == 1 == 1.0 as dict keys
    if t is float:
        return (t, math.copysign(1.0, p), repr(p))
    if t is tuple:
        for x in p:
            if type(x) is not int:
                break
        else:  # axes, shapes, permutations: ints alone need no per-element type tags
            return (_INTS, p)
    if isinstance(p, tuple):  # also NamedTuples of dimension numbers
        return (t, tuple([_param_key(x) for x in p]))
    if isinstance(p, enum.Enum):
        return p
    if isinstance(p, np.dtype | ShapedArray):
        return p
    if t is ClosedJaxpr and not p.consts:
        return ("closed_jaxpr", _structure(p.jaxpr))
    if t is Jaxpr:
        return ("jaxpr", _structure(p))
    if isinstance(p, np.generic):
        return _value_key(p)
    raise _Unkeyable
