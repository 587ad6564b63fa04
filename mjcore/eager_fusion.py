"""Eager calls of a library function as one cached XLA executable.

An eager primitive costs one PJRT execute (~4 µs on CPU); the Python of a library function
around it (dtype promotion, axis normalisation, `bind` through the interpreter stack, several
primitives for one NumPy function) used to cost as much again. `fuse_eagerly(fun)` gives `fun`
a per-signature cache of its whole traced body, compiled once, exactly as `jit` would: an eager
call with positional Arrays (and Python floats) runs that one executable.

Only functions whose eager result is determined by their arguments' shapes and dtypes may use
it: a function that inspects values eagerly (raising IndexError for an out-of-bounds index, or
OverflowError for `uint8_array + 300`) would lose that check under tracing. Functions that
*need* values (a bool mask, `int(x)`) are safe: their trace raises a concretization error, the
signature is remembered as unfusable and the plain function runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from mjcore import core
from mjcore.array import Array, avals_and_buffers, new_object, wrap_buffer
from mjcore.core import ShapedArray
from mjcore.dispatch import to_buffer
from mjcore.errors import (
    ConcretizationTypeError,
    NonConcreteBooleanIndexError,
    TracerArrayConversionError,
    TracerIntegerConversionError,
)
from mjcore.jit import JittedFunction
from mjcore.tree_util import tree_unflatten

F = TypeVar("F", bound=Callable[..., Any])

_NEEDS_VALUES = (
    ConcretizationTypeError,
    TracerArrayConversionError,
    TracerIntegerConversionError,
    NonConcreteBooleanIndexError,
)

# Python floats and complexes beside an Array enter as weak-typed dynamic arguments, like `jit`
# traces them: their values never change a result's dtype or raise, and a weak array promotes
# as they do. Python ints can (NEP 50's OverflowError for `uint8_array + 300`, integer
# powers), so calls with ints take the plain path; so do calls with Python scalars only.
_WEAK_SCALAR_AVALS = {
    float: ShapedArray((), "float64", True),
    complex: ShapedArray((), "complex128", True),
}

_CACHE_SIZE = 64  # signatures per function
_KEYWORD_VARIANTS = 32  # keyword-argument combinations per function


class _NotStatic(Exception):
    pass


def _static_key(v: Any) -> Any:
    """A cache key for a configuration value that tells apart what `==` does not
    (`axis=1` from `axis=1.0` or `True`, `0.0` from `-0.0`); `_NotStatic` for anything else
    (arrays, lists: values, which would be baked into the executable)."""
    t = type(v)
    if v is None or t in (bool, int, str):
        return (t, v)
    if t is float:
        return (t, repr(v))
    if t is tuple:
        return (t, tuple(_static_key(e) for e in v))
    if isinstance(v, type | np.dtype):
        return (t, v)
    raise _NotStatic


def fuse_eagerly(fun: F) -> F:
    """`fun`, running as one cached executable when called eagerly with array arguments.

    Calls with keyword arguments, Python ints, NumPy arrays or tracers, and calls under any
    transformation, run `fun` itself, so every transformation sees its primitives as before.
    """
    jitted = JittedFunction(fun, (), (), (), _CACHE_SIZE)
    calls = jitted._flat_calls
    assert calls is not None
    unfusable: set[Any] = set()
    # Keyword arguments with hashable values (`axis=0`, `keepdims=True`, `dtype=...`) are
    # static: one fused function per combination, up to `_KEYWORD_VARIANTS` of them.
    with_keywords: dict[tuple[tuple[str, Any], ...], Callable[..., Any]] = {}
    state = core._state

    # The commonest case, one output and Array arguments only, keyed by the avals: what to
    # execute and the output's aval, with no attribute chains to walk.
    simple: dict[ShapedArray | tuple[ShapedArray, ...], tuple[Any, Any, ShapedArray]] = {}
    jitted._clear_hooks.extend((simple.clear, with_keywords.clear, unfusable.clear))

    @functools.wraps(fun)
    def fused(*args: Any, **kwargs: Any) -> Any:
        if not state.eager:
            return fun(*args, **kwargs)
        if not kwargs:
            try:
                if len(args) == 1:  # keyed by the aval itself: no tuple, no helper call
                    (a,) = args
                    execute, handlers, out_aval = simple[a.aval]
                    bufs = [a._buf]
                else:
                    key, bufs = avals_and_buffers(args)
                    execute, handlers, out_aval = simple[key]
            except (KeyError, AttributeError):  # not yet compiled; scalars; NumPy arrays
                pass
            else:
                try:
                    buf = execute(bufs).consume_with_handlers(handlers)[0]
                except Exception:  # noqa: BLE001  # e.g. a donated (deleted) buffer
                    return general(args)
                # `wrap_buffer` inlined: a frame is ~1% of an eager op on this path
                out = new_object(Array)
                out._buf = buf
                out.aval = out_aval
                return out
        return general(args, kwargs)

    def general(args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> Any:
        if kwargs:
            try:
                key = tuple((k, _static_key(v)) for k, v in kwargs.items())
            except _NotStatic:  # an array or a list among the values
                return fun(*args, **kwargs)
            variant = with_keywords.get(key)
            if variant is None:
                if len(with_keywords) >= _KEYWORD_VARIANTS:
                    return fun(*args, **kwargs)
                variant = with_keywords[key] = fuse_eagerly(functools.partial(fun, **kwargs))
            return variant(*args)
        avals = []
        scalars = False
        for a in args:
            if type(a) is Array:
                avals.append(a.aval)
            else:
                aval = _WEAK_SCALAR_AVALS.get(type(a))
                if aval is None:
                    return fun(*args)
                avals.append(aval)
                scalars = True
        if scalars and len(avals) == len([a for a in args if type(a) is not Array]):
            return fun(*args)  # Python scalars alone give strong dtypes: not a traced call's
        key = tuple(avals)
        entry = calls.get(key)
        if entry is None:
            if key in unfusable:
                return fun(*args)
            try:
                entry = jitted._entry_for(args, {})[0]
            except _NEEDS_VALUES:
                unfusable.add(key)
                return fun(*args)
            calls[key] = entry
        exe = entry._exe or jitted._executable(entry)
        program = exe.program
        direct = not program.host_callbacks  # else `Program.run` waits for the callbacks
        if direct and entry.single_output and not entry.const_bufs and not scalars:
            if len(simple) >= _CACHE_SIZE:
                simple.clear()
            simple[key[0] if len(key) == 1 else key] = (
                program.executable.execute_sharded,
                program.handlers,
                exe.out_avals[0],
            )
        if scalars:
            bufs = [a._buf if type(a) is Array else to_buffer(a)[0] for a in args]
        else:
            bufs = [a._buf for a in args]
        if entry.const_bufs:
            bufs = entry.const_bufs + bufs
        # `run`: it explains a donated buffer and waits for host callbacks
        outs = program.run(bufs)
        if entry.single_output:
            return wrap_buffer(outs[0], exe.out_avals[0])
        arrays = [wrap_buffer(b, a) for b, a in zip(outs, exe.out_avals, strict=True)]
        return tree_unflatten(entry.out_tree, arrays)

    fused.__wrapped_fused__ = jitted  # type: ignore[attr-defined]  # tests count traces
    fused.__fused_simple_calls__ = simple  # type: ignore[attr-defined]  # see `simple_calls`
    return fused  # type: ignore[return-value]


def simple_calls(
    fused: Callable[..., Any],
) -> dict[Any, tuple[Callable[[list[Any]], Any], Any, ShapedArray]]:
    """The fast-path cache of a `fuse_eagerly` function, for a caller-side front with a fixed
    signature (no `*args`/`**kwargs` to pack): the input aval (one argument) or tuple of avals
    (several) -> (PJRT execute, result handlers, output aval). Filled by `fused`'s calls;
    a miss means: call `fused`."""
    return fused.__fused_simple_calls__  # type: ignore[attr-defined,no-any-return]
