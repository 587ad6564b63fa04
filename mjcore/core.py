"""Autodidax Part 1: primitives, the interpreter stack, tracers and abstract values."""

from __future__ import annotations

import functools
import operator
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np

from mjcore import dtypes
from mjcore.errors import (
    ConcretizationTypeError,
    InPlaceUpdateError,
    MissingRuleError,
    TracerArrayConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

# --- Abstract values ------------------------------------------------------------------------


# (shape, dtype, weak_type) -> the one ShapedArray with them
_interned: dict[tuple[Any, Any, Any], ShapedArray] = {}

_MAX_INTP = int(np.iinfo(np.intp).max)


def check_size(shape: tuple[int, ...], dtype: np.dtype) -> None:
    """NumPy's limits on an array's shape, with NumPy's ValueErrors: a dimension beyond
    the largest `intp`, or `size * itemsize` beyond it (XLA aborts the process there)."""
    nbytes = dtype.itemsize
    for d in shape:
        if d > _MAX_INTP:
            raise ValueError(f"Maximum allowed dimension exceeded (shape {shape}, {dtype})")
        if d > 0:  # as NumPy: an empty array's other dimensions still count
            nbytes *= d
    if nbytes > _MAX_INTP:
        raise ValueError(
            "array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum "
            f"possible size. (shape {shape}, {dtype})"
        )


def format_nbytes(nbytes: int) -> str:
    """A byte count as NumPy's MemoryError writes it: '72.8 TiB', '2.00 EiB', '100 bytes'."""
    units = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    unit = min(max(nbytes.bit_length() - 1, 1) // 10, len(units) - 1)
    value = nbytes / (1 << (10 * unit))
    if round(value) == 1024 and unit + 1 < len(units):
        unit, value = unit + 1, value / 1024
    if unit == 0:
        return f"{value:.0f} {units[0]}"
    return f"{value:#.3g} {units[unit]}" if round(value) < 1000 else f"{value:#.0f} {units[unit]}"


@functools.cache
def _memory_limit() -> int:
    """RAM plus swap: Linux refuses (overcommit heuristic) a single allocation beyond it, as
    NumPy's malloc then fails; 0 where it cannot be read."""
    try:
        with open("/proc/meminfo") as f:
            fields = dict(line.split(":", 1) for line in f)
        return sum(int(fields[k].split()[0]) * 1024 for k in ("MemTotal", "SwapTotal"))
    except (OSError, KeyError, ValueError):
        return 0


def check_allocation(shape: tuple[int, ...], dtype: Any) -> None:
    """NumPy's errors for creating an array of `shape` and `dtype`: ValueError for a shape
    NumPy cannot describe (`check_size`), MemoryError ("Unable to allocate 72.8 TiB for an
    array with shape (10000000000000,) and data type float64") beyond the host's memory."""
    dtype = np.dtype(dtype)
    check_size(shape, dtype)
    nbytes = dtype.itemsize
    for d in shape:
        nbytes *= d
    if nbytes < 1 << 30:  # the common case: no need to look at the machine
        return
    limit = _memory_limit()
    if limit and nbytes > limit:
        raise MemoryError(
            f"Unable to allocate {format_nbytes(nbytes)} for an array with shape {shape} and "
            f"data type {dtype}"
        )


class ShapedArray:
    """The abstract value of an array: shape, dtype and whether the dtype is weak.

    A weak type comes from a Python scalar: it yields to the other operand's dtype in NumPy 2
    promotion (NEP 50), e.g. `float32_array * 2.0` stays float32.

    Avals are interned: equal (shape, dtype, weak_type) give the same object, so equality and
    hashing are the identity's, done in C. Every dispatch cache is keyed by avals, and a
    Python-level `__hash__`/`__eq__` cost ~50-100 ns per aval on each eager call and jit call.
    """

    __slots__ = ("shape", "dtype", "weak_type")

    shape: tuple[int, ...]
    dtype: np.dtype
    weak_type: bool

    def __new__(cls, shape: Sequence[int], dtype: Any, weak_type: bool = False) -> ShapedArray:
        try:  # already normalised arguments (the common case): one dict lookup
            return _interned[(shape, dtype, weak_type)]
        except (KeyError, TypeError):  # new, or e.g. a list shape (unhashable)
            pass
        shape = tuple([d if type(d) is int else operator.index(d) for d in shape])
        key = (shape, np.dtype(dtype), bool(weak_type))
        aval = _interned.get(key)
        if aval is None:
            check_size(shape, key[1])  # once per distinct aval: interning makes it free
            aval = object.__new__(cls)
            aval.shape, aval.dtype, aval.weak_type = key
            # setdefault: of two threads creating one aval together, both get the first
            aval = _interned.setdefault(key, aval)
        return aval

    def __reduce__(self) -> tuple[Any, ...]:
        return (ShapedArray, (self.shape, self.dtype, self.weak_type))

    def __copy__(self) -> ShapedArray:
        return self

    def __deepcopy__(self, memo: Any) -> ShapedArray:
        return self

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def update(
        self,
        shape: Sequence[int] | None = None,
        dtype: Any = None,
        weak_type: bool | None = None,
    ) -> ShapedArray:
        """A copy with some fields replaced."""
        return ShapedArray(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
        )

    def strip_weak_type(self) -> ShapedArray:
        return self if not self.weak_type else ShapedArray(self.shape, self.dtype, False)

    def str_short(self) -> str:
        """Jaxpr notation: `f32[3,4]`."""
        return f"{dtypes.short_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.dtype.name}[{','.join(map(str, self.shape))}]{weak})"


# Mapping from Python types to functions producing their abstract values. `mjcore.array`
# registers the device-backed Array here.
pytype_aval_mappings: dict[type, Callable[[Any], ShapedArray]] = {}


def _python_scalar_aval(x: Any) -> ShapedArray:
    dtype = dtypes.python_scalar_dtype(x)
    if type(x) is int and not (-(2**63) <= x < 2**63):
        raise OverflowError(f"Python integer {x} out of bounds for int64")
    return ShapedArray((), dtype, weak_type=True)


def _numpy_aval(x: Any) -> ShapedArray:
    return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), False)


for _t in (bool, int, float, complex):
    pytype_aval_mappings[_t] = _python_scalar_aval
pytype_aval_mappings[np.ndarray] = _numpy_aval
for _dt in dtypes.ALL_DTYPES:
    pytype_aval_mappings[_dt.type] = _numpy_aval


def get_aval(x: Any) -> ShapedArray:
    """The abstract value of a tracer, Array, NumPy array or Python scalar."""
    if isinstance(x, Tracer):
        return x.aval
    handler = pytype_aval_mappings.get(type(x))
    if handler is not None:
        return handler(x)
    for t in type(x).__mro__[1:]:
        handler = pytype_aval_mappings.get(t)
        if handler is not None:
            return handler(x)
    raise TypeError(f"Value of type {type(x).__name__} is not a valid mjnp array: {x!r:.100}")


def is_array_like(x: Any) -> bool:
    """True for values `get_aval` accepts."""
    if isinstance(x, Tracer) or type(x) in pytype_aval_mappings:
        return True
    return any(t in pytype_aval_mappings for t in type(x).__mro__[1:])


# --- Primitives -----------------------------------------------------------------------------


class Primitive:
    """A named operation with rules for each interpreter.

    Rules (JAX's conventions): `impl(*arrays, **params)`, `abstract_eval(*avals, **params)`,
    `jvp(primals, tangents, **params)`, `transpose(ct, *args, **params)`,
    `batching(args, dims, **params)`, `lowering(ctx, *operands, **params)`. Arrays are
    positional; static parameters are keyword-only and hashable.
    """

    # Collectives (`mjcore.batching.AxisPrimitive`) resolve their named axes in `bind`.
    binds_named_axes = False

    def __init__(self, name: str, *, multiple_results: bool = False):
        self.name = name
        self.multiple_results = multiple_results
        self.impl_rule: Callable[..., Any] | None = None
        self.abstract_eval_rule: Callable[..., Any] | None = None
        self.jvp_rule: Callable[..., Any] | None = None
        # A jvp rule that handles `ad.Zero` tangents itself (otherwise zeros are instantiated).
        self.jvp_symbolic_zeros = False
        self.transpose_rule: Callable[..., Any] | None = None
        # Eager reverse mode's direct rule (`mjcore.eager_vjp`), or None for the general
        # jvp-then-transpose route: `ad.LINEAR` / `ad.MULTILINEAR` (the application itself,
        # with tangents in place of the differentiated operands, is its tangent equation; the
        # transpose rule is its vjp), or rule(ct, out, primals, linear, **params) -> operand
        # cotangents, where linear[i] has the tangent `aval` of a differentiated operand and
        # is None for the others (which get None). `ad.CONSTANT`: a zero derivative, nothing
        # recorded. A primitive of several results gets `ct` and `out` as lists (sort).
        self.eager_vjp_rule: Any = None
        self.batching_rule: Callable[..., Any] | None = None
        self.lowering_rule: Callable[..., Any] | None = None
        self.partial_eval_rule: Callable[..., Any] | None = None
        # Splits one equation of a jaxpr into known and unknown equations (higher-order
        # primitives only): rule(unknowns_in, eqn) -> (eqn_known, eqn_unknown, unknowns_out,
        # residual_vars), or None to stage the whole equation as unknown.
        self.partial_eval_jaxpr_rule: Callable[..., Any] | None = None
        # How a jaxpr-building trace stages an application whose params are not yet jaxprs
        # (custom_jvp/custom_vjp hold Python callables until staged): rule(trace, tracers,
        # **params) -> out tracers, usually via `trace.stage_equation` with jaxpr params.
        self.staging_rule: Callable[..., Any] | None = None
        # An application does something besides computing its outputs (a debug print), so
        # it is kept even when nothing reads them (see `partial_eval.dce_jaxpr`).
        self.has_side_effect = False
        # NumPy implementation for eager evaluation on the CPU platform: host_rule(*ndarrays,
        # **params) -> ndarray (a list for multiple_results), with exactly abstract_eval's
        # shapes and dtypes. It must not write its inputs; it may return views of them (Arrays
        # are immutable). Dispatch chooses per call between it and the compiled lowering.
        self.host_rule: Callable[..., Any] | None = None

    def __repr__(self) -> str:
        return self.name

    def bind(self, *args: Any, **params: Any) -> Any:
        """Apply the primitive through the current interpreter stack."""
        outs = bind(self, args, params)
        return outs if self.multiple_results else outs[0]

    def bind1(self, *args: Any, **params: Any) -> Any:
        """`bind` for a single-result primitive."""
        return bind(self, args, params)[0]

    def def_impl(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        self.impl_rule = rule
        return rule

    def def_host(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        self.host_rule = rule
        return rule

    def def_abstract_eval(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        self.abstract_eval_rule = rule
        return rule

    def def_jvp(
        self, rule: Callable[..., Any] | None = None, *, symbolic_zeros: bool = False
    ) -> Any:
        def register(f: Callable[..., Any]) -> Callable[..., Any]:
            self.jvp_rule = f
            self.jvp_symbolic_zeros = symbolic_zeros
            return f

        return register if rule is None else register(rule)

    def def_transpose(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        self.transpose_rule = rule
        return rule

    def def_eager_vjp(self, rule: Any) -> Any:
        """Register eager reverse mode's direct rule (see `eager_vjp_rule` above and
        docs/extending.md); without one, eager `grad` runs the jvp rule and transposes."""
        self.eager_vjp_rule = rule
        return rule

    def def_batching(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        self.batching_rule = rule
        return rule

    def def_lowering(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        self.lowering_rule = rule
        return rule

    def def_partial_eval(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        self.partial_eval_rule = rule
        return rule

    def abstract_eval(self, *avals: ShapedArray, **params: Any) -> list[ShapedArray]:
        """Output avals as a list, whatever the rule returns."""
        rule = self.abstract_eval_rule
        if rule is None:
            raise MissingRuleError(
                self.name, "abstract_eval", "Abstract evaluation (jit, make_jaxpr, grad)"
            )
        out = rule(*avals, **params)
        return list(out) if self.multiple_results else [out]

    def impl(self, *args: Any, **params: Any) -> list[Any]:
        """Eager evaluation, outputs as a list: the `impl` rule on Arrays if there is one, else
        the lowering compiled (see `mjcore.dispatch.apply_primitive`)."""
        return _default_impl(self, args, params)


def _no_default_impl(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    raise RuntimeError("mjcore's backend dispatch was not installed (import mjcore first)")


# `mjcore.dispatch` installs eager XLA execution here: "jit of one primitive".
_default_impl: Callable[[Primitive, Sequence[Any], dict[str, Any]], list[Any]] = _no_default_impl


def set_default_impl(impl: Callable[[Primitive, Sequence[Any], dict[str, Any]], list[Any]]) -> None:
    """Install the eager evaluator of primitives (`mjcore.dispatch` does at import)."""
    global _default_impl
    _default_impl = impl


# --- The interpreter stack ------------------------------------------------------------------


class MainTrace:
    """One interpreter on the stack: its level, trace type and global data (e.g. axis size)."""

    __slots__ = ("level", "trace_type", "global_data", "description", "alive", "trace")
    trace: Trace  # (None once popped, to break the main <-> trace cycle)

    def __init__(self, level: int, trace_type: type[Trace], global_data: Any, description: str):
        self.level = level
        self.trace_type = trace_type
        self.global_data = global_data
        self.description = description
        self.alive = True
        # Traces hold nothing but their main, so one instance serves every bind at this level.
        self.trace = trace_type(self)

    def __repr__(self) -> str:
        return f"MainTrace({self.level}, {self.trace_type.__name__}, {self.description})"


class _TraceState(threading.local):
    """Per-thread interpreter stack, so threads can trace and run functions independently."""

    def __init__(self) -> None:
        self.trace_stack: list[MainTrace] = [MainTrace(0, EvalTrace, None, "eager evaluation")]
        self.dynamic_trace: MainTrace | None = None
        # Nothing traced in this thread (only eager evaluation on the stack, no dynamic main):
        # kept by the pushes and pops below so that dispatch tests one attribute, not two
        # and a length (~40 vs ~150 ns on every eager call).
        self.eager = True
        # Set by `mjcore.disable_jit()`: jitted functions run their Python op by op.
        self.jit_disabled = False
        # Set by the `jax_debug_nans` flag: eager operations go through `EvalTrace`, which
        # checks their outputs (so the eager fast paths pay nothing while it is off).
        self.debug_nans = False
        # Named axes in scope, innermost last (see `extend_axis_env`).
        self.axis_env: list[AxisFrame] = []
        # The axis name of the named batch trace whose batching rule is running, so that a
        # jaxpr it batches (jit, scan, cond inside `vmap(..., axis_name=)`) keeps the name.
        self.batching_axis_name: Any = None


def staging_description() -> str | None:
    """What stages out the functions called now (`jit(f)`, a control-flow body), or None
    when nothing does: their values are then computed, not recorded."""
    main = _state.dynamic_trace
    return None if main is None else main.description


def _nothing_traced(state: _TraceState) -> bool:
    """The value of `state.eager` after any push, pop or flag change: only eager evaluation
    on the stack, no dynamic main, jit not disabled."""
    return (
        len(state.trace_stack) == 1
        and state.dynamic_trace is None
        and not state.jit_disabled
        and not state.debug_nans
    )


@contextmanager
def new_main(
    trace_type: type[Trace], global_data: Any = None, description: str = ""
) -> Iterator[MainTrace]:
    """Push a new interpreter on the stack for the duration of a transformation."""
    state = _state
    stack = state.trace_stack
    main = MainTrace(len(stack), trace_type, global_data, description or trace_type.__name__)
    stack.append(main)
    state.eager = False
    try:
        yield main
    finally:
        stack.pop()
        state.eager = _nothing_traced(state)
        main.alive = False
        # main <-> trace is a cycle: without this only the GC frees them
        main.trace = None  # type: ignore[assignment]


class new_dynamic_main:  # noqa: N801  # used like the generator context managers beside it
    """Push a main trace that also catches operations on non-tracers (initial-style staging).

    A class rather than a generator context manager: every jit trace enters one, and
    `contextlib`'s machinery costs more than the push and pop.
    """

    __slots__ = ("main", "prev")

    def __init__(
        self, trace_type: type[Trace], global_data: Any = None, description: str = ""
    ) -> None:
        stack = _state.trace_stack
        self.main = MainTrace(
            len(stack), trace_type, global_data, description or trace_type.__name__
        )

    def __enter__(self) -> MainTrace:
        state = _state
        state.trace_stack.append(self.main)
        self.prev, state.dynamic_trace = state.dynamic_trace, self.main
        state.eager = False
        return self.main

    def __exit__(self, *exc: Any) -> None:
        state = _state
        state.dynamic_trace = self.prev
        stack = state.trace_stack
        stack.pop()
        state.eager = _nothing_traced(state)
        self.main.alive = False
        # main <-> trace is a cycle: without this only the GC frees them
        self.main.trace = None  # type: ignore[assignment]


@contextmanager
def eval_context() -> Iterator[None]:
    """Evaluate operations on non-tracers eagerly, even while a jit or make_jaxpr trace is
    active (JAX's `core.eval_context`): the dynamic main stops catching them."""
    state = _state
    prev = state.dynamic_trace
    state.dynamic_trace = None
    state.eager = _nothing_traced(state)
    try:
        yield
    finally:
        state.dynamic_trace = prev
        state.eager = _nothing_traced(state)


def set_jit_disabled(disabled: bool) -> bool:
    """Set the flag behind `mjcore.disable_jit` for this thread; returns the previous value.

    While it is set, `eager` is off as well, so that no eager fast path (a jitted function's
    cached executable, a fused mjnp function or gradient) runs: everything goes op by op.
    """
    state = _state
    prev = state.jit_disabled
    state.jit_disabled = disabled
    state.eager = _nothing_traced(state)
    return prev


def set_debug_nans(enabled: bool) -> None:
    """Set the flag behind `jax_debug_nans` for this thread (see `EvalTrace`)."""
    state = _state
    state.debug_nans = enabled
    state.eager = _nothing_traced(state)


class AxisFrame(NamedTuple):
    """A named mapped axis in scope (JAX's axis environment): `vmap(..., axis_name=)` binds
    one to its batch trace (`main`); pmap and shard_map bind device axes (`main` None), whose
    collectives are staged into the jaxpr and lowered to XLA's."""

    name: Any
    size: int
    main: MainTrace | None
    # Device axes of one SPMD program (shard_map) rather than replicas (pmap): collectives
    # then name devices by global id over a channel.
    spmd: bool = False


@contextmanager
def extend_axis_env(frames: Sequence[AxisFrame]) -> Iterator[None]:
    """Bring named axes into scope for collectives (`mjcore.lax.psum` and friends)."""
    env = _state.axis_env
    env.extend(frames)
    try:
        yield
    finally:
        del env[len(env) - len(frames) :]


def axis_frame(name: Any) -> AxisFrame | None:
    """The innermost axis named `name` in scope, or None."""
    for frame in reversed(_state.axis_env):
        if frame.name == name:
            return frame
    return None


def device_axis_frames() -> list[AxisFrame]:
    """The device axes in scope (pmap's, shard_map's), outermost first."""
    return [f for f in _state.axis_env if f.main is None]


@contextmanager
def batching_axis_name(name: Any) -> Iterator[None]:
    """Run a batching rule of the batch trace named `name` (see `_TraceState`)."""
    state = _state
    prev, state.batching_axis_name = state.batching_axis_name, name
    try:
        yield
    finally:
        state.batching_axis_name = prev


def current_batching_axis_name() -> Any:
    return _state.batching_axis_name


class Trace:
    """Interprets primitives applied to its tracers."""

    __slots__ = ("main",)

    def __init__(self, main: MainTrace):
        self.main = main

    def pure(self, val: Any) -> Any:
        raise NotImplementedError

    def lift(self, val: Any) -> Any:
        raise NotImplementedError

    def process_primitive(
        self, primitive: Primitive, tracers: list[Any], params: dict[str, Any]
    ) -> list[Any]:
        raise NotImplementedError


class EvalTrace(Trace):
    """The bottom of the stack: run primitives on concrete values."""

    __slots__ = ()

    def pure(self, val: Any) -> Any:
        return val

    lift = pure

    def process_primitive(
        self, primitive: Primitive, tracers: list[Any], params: dict[str, Any]
    ) -> list[Any]:
        outs = primitive.impl(*tracers, **params)
        if _state.debug_nans:
            _check_nans(primitive, tracers, params, outs)
        return outs


def _has_nan(x: Any) -> bool:
    if isinstance(x, Tracer):
        return False
    try:
        kind = dtypes.kind(get_aval(x).dtype)
    except TypeError:  # not an array (a static value)
        return False
    return kind in "fc" and bool(np.isnan(np.asarray(x)).any())


def _check_nans(
    primitive: Primitive, args: Sequence[Any], params: dict[str, Any], outs: Sequence[Any]
) -> None:
    """`jax_debug_nans`: FloatingPointError for an operation that made a NaN from NaN-free
    inputs. A jitted call's jaxpr is rerun op by op to name the operation, as JAX does."""
    if not any(_has_nan(x) for x in outs) or any(_has_nan(x) for x in args):
        return
    closed = params.get("jaxpr") if primitive.name == "pjit" else None
    if closed is not None:
        from mjcore.jaxpr import eval_jaxpr  # function-local: jaxpr imports this module

        eval_jaxpr(closed.jaxpr, closed.consts, *args)  # raises at the first NaN
        raise FloatingPointError(
            f"invalid value (nan) encountered in {params.get('name', 'jit')}. Because "
            "jax_debug_nans is set, the function was run again op by op to find the operation "
            "that made it, but none did: the compiled program differs there (e.g. fused or "
            "reordered arithmetic). Check the function with mjcore.disable_jit()."
        )
    raise FloatingPointError(f"invalid value (nan) encountered in {primitive.name}")


_state = _TraceState()


def find_top_trace(xs: Sequence[Any]) -> Trace:
    """The trace of the highest-level tracer among `xs` (or the dynamic trace, or eval)."""
    top_main = _state.trace_stack[0]
    for x in xs:
        if isinstance(x, Tracer):
            main = x._trace.main
            if main.level > top_main.level:
                top_main = main
    dyn = _state.dynamic_trace
    if dyn is not None and dyn.level > top_main.level:
        top_main = dyn
    return top_main.trace


def full_raise(trace: Trace, val: Any) -> Any:
    """Bring `val` into `trace`: box non-tracers, lift lower-level tracers."""
    if not isinstance(val, Tracer):
        return trace.pure(val)
    main = val._trace.main
    if main is trace.main:
        return val
    if not main.alive:
        raise UnexpectedTracerError(_leak_message(val))
    if main.level < trace.main.level:
        return trace.lift(val)
    if main.level > trace.main.level:
        raise UnexpectedTracerError(_leak_message(val))
    raise UnexpectedTracerError(
        f"Encountered a tracer of '{main.description}' at the level of another transformation "
        f"'{trace.main.description}'; a tracer leaked between transformations."
    )


def check_alive(tracer: Tracer) -> None:
    """UnexpectedTracerError for a tracer whose transformation has finished (a leaked one)."""
    if not tracer._trace.main.alive:
        raise UnexpectedTracerError(_leak_message(tracer))


def _leak_message(tracer: Tracer) -> str:
    return (
        f"Encountered an unexpected tracer {tracer.aval.str_short()} created by "
        f"'{tracer._trace.main.description}', which has already finished. A tracer escaped "
        "its transformation, e.g. stored in a global, a closure or an object attribute "
        "during tracing. Return values out of transformed functions instead."
    )


def full_lower(val: Any) -> Any:
    return val.full_lower() if isinstance(val, Tracer) else val


def bind(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    """Apply `prim` to `args` through the interpreter stack; always returns a list."""
    state = _state
    if state.eager:
        # Eager fast path: nothing is being traced.
        if prim.impl_rule is None:
            return _default_impl(prim, args, params)
        return prim.impl(*args, **params)
    if prim.binds_named_axes:  # a collective: its named axis may outrank its operands
        return prim.bind_with_axes(args, params)  # type: ignore[attr-defined]  # AxisPrimitive
    dyn = state.dynamic_trace
    if dyn is not None and state.trace_stack[-1] is dyn:
        # Staging fast path (make_jaxpr, jit): the dynamic main is the top of the stack, so no
        # tracer outranks it; its own tracers need no raising.
        trace = dyn.trace
        tracers = [
            x if isinstance(x, Tracer) and x._trace.main is dyn else full_raise(trace, x)
            for x in args
        ]
        outs = trace.process_primitive(prim, tracers, params)
        return [x.full_lower() if isinstance(x, Tracer) else x for x in outs]
    if dyn is None:
        # The eager grad path (`mjcore.eager_vjp`): no tracer in, or only tracers of the top
        # of the stack. `find_top_trace` would pick eager evaluation, or the top, and
        # `full_raise` has nothing to check.
        top = state.trace_stack[-1]
        traced = False
        for x in args:
            if isinstance(x, Tracer):
                if x._trace.main is not top:
                    break
                traced = True
        else:
            if traced:
                trace = top.trace
                tracers = [x if isinstance(x, Tracer) else trace.pure(x) for x in args]
                outs = trace.process_primitive(prim, tracers, params)
            else:
                if prim.impl_rule is None:
                    outs = _default_impl(prim, args, params)
                else:
                    outs = prim.impl(*args, **params)
                if state.debug_nans:
                    _check_nans(prim, args, params, outs)
            return [x.full_lower() if isinstance(x, Tracer) else x for x in outs]
    top_trace = find_top_trace(args)
    tracers = [full_raise(top_trace, arg) for arg in args]
    outs = top_trace.process_primitive(prim, tracers, params)
    return [full_lower(out) for out in outs]


# --- Tracers --------------------------------------------------------------------------------


class Tracer:
    """A value flowing through a transformation; looks like an Array to user code.

    The NumPy operator and method surface is installed on this class and on `Array` by
    `install_array_surface` (called by `mjnp` at import).
    """

    # weak-referenceable: mjnp links a view made under a transformation to its base, so that
    # a write through it reaches the base as eagerly (mjcore/views.py)
    __slots__ = ("_trace", "__weakref__", "_link", "_children")  # (the links: mjcore.views)
    __array_priority__ = 1000
    __hash__ = None  # type: ignore[assignment]  # arrays are unhashable, as in NumPy

    _trace: Trace

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    def full_lower(self) -> Any:
        return self

    def to_concrete_value(self) -> Any:
        """The concrete value behind the tracer, or None when it is abstract."""
        return None

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return self.aval.ndim

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    def __len__(self) -> int:
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def __iter__(self) -> Iterator[Any]:
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.aval.shape[0]))  # type: ignore[index]

    def __bool__(self) -> bool:
        return bool(concrete_or_error(self, "bool()"))

    def __int__(self) -> int:
        return int(concrete_or_error(self, "int()"))

    def __float__(self) -> float:
        return float(concrete_or_error(self, "float()"))

    def __complex__(self) -> complex:
        return complex(concrete_or_error(self, "complex()"))

    def __index__(self) -> int:
        check_alive(self)
        value = self.to_concrete_value()
        if value is None:
            raise TracerIntegerConversionError(
                f"The __index__() method was called on a traced array {self.aval.str_short()}"
                f" ({self._trace.main.description}). A traced value cannot be used as a Python"
                " integer (range(), list index, shape). Make the argument static, e.g."
                " `jit(f, static_argnums=...)`."
            )
        return operator_index(value)

    def item(self, *args: Any) -> Any:
        return np.asarray(concrete_or_error(self, ".item()")).item(*args)

    def tolist(self) -> Any:
        return np.asarray(concrete_or_error(self, ".tolist()")).tolist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        # NB: raises even when the value is concrete (a jvp primal): NumPy computing on the
        # value would silently drop what the transformation tracks (a zero gradient).
        check_alive(self)
        raise TracerArrayConversionError(
            f"The numpy.ndarray conversion method __array__() was called on a traced array "
            f"{self.aval.str_short()} ({self._trace.main.description}). NumPy functions "
            "cannot run on traced values: use the mjnp function of the same name "
            "(`import mjnp as np`) or move the conversion out of the transformed function."
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}<{self.aval.str_short()}>"


def operator_index(value: Any) -> int:
    arr = np.asarray(value)
    if arr.ndim != 0 or not (dtypes.is_integer(arr.dtype) or dtypes.is_bool(arr.dtype)):
        raise TypeError("only integer scalar arrays can be converted to a scalar index")
    return int(arr)


def concrete_or_error(x: Any, operation: str) -> Any:
    """The concrete value of `x`, or a ConcretizationTypeError explaining the fix."""
    if not isinstance(x, Tracer):
        return x
    check_alive(x)
    value = x.to_concrete_value()
    if value is None:
        raise ConcretizationTypeError(
            f"Abstract tracer value encountered where a concrete value is expected: {operation} "
            f"was called on a traced array {x.aval.str_short()}"
            f"{_tracer_origin(x)} ({x._trace.main.description}). Its value is not known while "
            "tracing, so Python control flow (if/while), bool(), int() and float() cannot use "
            "it. Fix: mark the argument static with `jit(f, static_argnums=...)` / "
            "`static_argnames=...`, or use `mjcore.cond` / `mjnp.where` for value-dependent "
            "choices."
        )
    return value


def _tracer_origin(x: Tracer) -> str:
    deps = sorted(getattr(x, "debug_deps", ()))
    return f" that depends on {', '.join(deps)}" if deps else ""


# --- The array surface hook -----------------------------------------------------------------

# Classes that receive the NumPy operator/method surface (Tracer, and Array when registered).
array_classes: list[type] = [Tracer]
_installed_surface: dict[str, Any] = {}


def register_array_class(cls: type) -> None:
    """Make `cls` receive the NumPy surface (now and when it is installed later)."""
    array_classes.append(cls)
    for name, impl in _installed_surface.items():
        setattr(cls, name, impl)


def install_array_surface(surface: dict[str, Any]) -> None:
    """The single hook that gives Array and Tracer their NumPy operators and methods.

    `mjnp` calls it once at import with a mapping from dunder/method names to functions (or
    properties); keeping it in one place keeps tracers indistinguishable from arrays.
    """
    _installed_surface.update(surface)
    for cls in array_classes:
        for name, impl in surface.items():
            setattr(cls, name, impl)


# --- In-place syntax ------------------------------------------------------------------------


# Slots that belong to the object, not to the value it holds: a rebind keeps them.
_HANDLE_SLOTS = frozenset({"__weakref__", "_link", "_children"})


def rebind(handle: Any, new: Any) -> None:
    """Make the object `handle` hold the value `new`: how `x[idx] = v` updates `x` in place.

    Values stay immutable; only the handle changes, so every transformation sees a functional
    update. It works when `new` is of the same kind as `handle` (an Array, or a tracer of the
    same type), which holds in eager code and for arrays computed inside a transformation.
    Classes with more to update than their slots define `_rebind(new)`.

    Raises:
        InPlaceUpdateError: (a TypeError) when `new` is a different kind of value, e.g. a
            constant `zeros(n)` filled with values traced by `vmap`; then write
            `x = x.at[idx].set(v)`.
    """
    if handle is new:
        return
    cls = type(handle)
    if type(new) is not cls:
        where = f" traced by {new._trace.main.description}" if isinstance(new, Tracer) else ""
        raise InPlaceUpdateError(
            f"In-place update `x[idx] = v`: x is a {_kind(handle)} but the updated value is a "
            f"{_kind(new)}{where}, and an object cannot change its kind. mjnp arrays are "
            "immutable values: write `x = x.at[idx].set(v)` instead."
        )
    custom = getattr(cls, "_rebind", None)
    if custom is not None:
        custom(handle, new)
    else:
        for klass in cls.__mro__:
            for name in klass.__dict__.get("__slots__", ()):
                if name in _HANDLE_SLOTS:
                    continue  # the handle's own identity, not its value
                try:
                    setattr(handle, name, getattr(new, name))
                except AttributeError:  # a lazily set slot (a cache) unset on `new`
                    if hasattr(handle, name):
                        delattr(handle, name)
    for hook in rebind_hooks:
        hook(handle)


# Called with each handle `rebind` has updated: the views (`mjcore/views.py`) listen here, so
# that a write through any in-place path reaches the arrays the handle is a view of, or views of it.
rebind_hooks: list[Callable[[Any], None]] = []


def _kind(x: Any) -> str:
    return type(x).__name__ if isinstance(x, Tracer) else f"concrete {type(x).__name__}"
