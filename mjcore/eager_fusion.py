"""Eager calls of a library function: traced once per signature, then run as one program.

An mjnp function is Python around a few primitives (dtype promotion, axis normalisation,
`bind` through the interpreter stack), which used to cost more than the arithmetic.
`fuse_eagerly(fun)` gives `fun` a per-signature cache of its traced body, exactly as `jit`
would, and an eager call with positional Arrays (and Python floats) replays that jaxpr:

- on the host, when every equation has a NumPy host rule and the call is small (on the CPU
  platform; `mjcore.dispatch.host_limit`): the rules run one after another on the host values,
  with no bind, no Python of `fun` and nothing compiled; results equal the op-by-op host path;
- otherwise as one compiled XLA executable (large arrays, or a primitive without host rule).

Only functions whose eager result is determined by their arguments' shapes and dtypes may use
it: a function that inspects values eagerly (raising IndexError for an out-of-bounds index, or
OverflowError for `uint8_array + 300`) would lose that check under tracing. Functions that
*need* values (a bool mask, `int(x)`) are safe: their trace raises a concretization error, the
signature is remembered as unfusable and the plain function runs. See docs/eager.md.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from mjcore import ad, core, dispatch, dtypes
from mjcore.array import Array, new_object, wrap_host
from mjcore.backend import client as backend
from mjcore.core import ShapedArray, Tracer
from mjcore.eager_vjp import VJPTrace, VJPTracer, eval_on_tape
from mjcore.errors import (
    ConcretizationTypeError,
    NonConcreteBooleanIndexError,
    TracerArrayConversionError,
    TracerIntegerConversionError,
)
from mjcore.fp_errors import (
    COLLECT,
    Collecting,
    all_ignored,
    collected,
    fp_state,
    report_collected,
    rerun_numpy,
    underflow_ignored,
)
from mjcore.jaxpr import Literal, eval_jaxpr, hoist_consts
from mjcore.jit import JittedFunction, compile_closed_jaxpr
from mjcore.lax.base import convert_element_type_p
from mjcore.lax.bitwise import is_finite
from mjcore.lax.reductions import reduce_and
from mjcore.partial_eval import trace_to_jaxpr
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
_WEAK_FLOAT = _WEAK_SCALAR_AVALS[float]
# their host values: NumPy scalars of the traced dtype, which every host rule accepts
_HOST_SCALAR_TYPES = {float: np.float64, complex: np.complex128}

# A Python int beside an inexact Array converts exactly to the Array's dtype when it is at
# most this large (2 ** (mantissa bits + 1)); then it computes as the float of equal value, so
# `fuse_eagerly(..., int_scalars=True)` functions take it as one (no value can raise).
_EXACT_INT_BOUND = {
    np.dtype(np.float16): 2**11,
    np.dtype(np.float32): 2**24,
    np.dtype(np.float64): 2**53,
    np.dtype(np.complex64): 2**24,
    np.dtype(np.complex128): 2**53,
}

_CACHE_SIZE = 64  # signatures per function
_KEYWORD_VARIANTS = 32  # keyword-argument combinations per function


class _NotStatic(Exception):
    pass


_MISS = object()  # no result from a fast path: take the general one

# dtypes of NumPy array arguments that eager grad's tape front converts to Arrays (as mjnp's
# argument conversion does); others (object, str, longdouble) take the function's own path
_NUMPY_ARG_DTYPES = frozenset(
    np.dtype(t)
    for t in (
        np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
        np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128,
    )
)  # fmt: skip


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


# Keyword values whose value and type tell combinations apart (not floats: 0.0 == -0.0),
# keyed as (items, types) without `_static_key`
_PLAIN_KEYWORD_TYPES = frozenset({int, bool, str, type(None)})


def _host_runnable(closed: Any) -> bool:
    """Whether every equation of a traced body runs its host rule at these avals."""
    if not dispatch.on_cpu():
        return False
    for eqn in closed.jaxpr.eqns:
        prim = eqn.primitive
        if prim.host_rule is None or prim.impl_rule is not None:
            return False
        sizes = [x.aval.size for x in eqn.inputs] + [v.aval.size for v in eqn.out_binders]
        dtype = eqn.inputs[0].aval.dtype if eqn.inputs else None
        if sizes and max(sizes) > dispatch.host_limit(prim, dtype):
            return False
        avals = [x.aval for x in eqn.inputs] + [v.aval for v in eqn.out_binders]
        if not dispatch.host_rule_exact(prim, avals):  # bfloat16: most rules are not XLA's
            return False
    return True


class _HostProgram:
    """A traced body as host rules over a flat environment: consts and literals, then the
    arguments, then each equation's results, addressed by position."""

    __slots__ = ("base", "n_args", "eqns", "steps", "outs", "out_avals", "n_env")

    def __init__(self, closed: Any, consts: list[Any]):
        jaxpr = closed.jaxpr
        n_consts = len(consts)
        base: list[Any] = [c._value() if isinstance(c, Array) else np.asarray(c) for c in consts]
        slot: dict[Any, int] = {}
        literals: list[tuple[Literal, int]] = []
        # slots: [consts..., literals..., args..., eqn results...]
        for eqn in jaxpr.eqns:
            for x in eqn.inputs:
                if type(x) is Literal:
                    literals.append((x, 0))
        for x in jaxpr.outs:
            if type(x) is Literal:
                literals.append((x, 0))
        for v in jaxpr.invars[:n_consts]:
            slot[v] = len(slot)
        lit_slot: dict[int, int] = {}
        for lit, _ in literals:
            lit_slot[id(lit)] = len(base)
            base.append(np.asarray(lit.val, lit.aval.dtype))
        n = len(base)
        for v in jaxpr.invars[n_consts:]:
            slot[v] = n
            n += 1
        eqns = []
        for eqn in jaxpr.eqns:
            ins = tuple(lit_slot[id(x)] if type(x) is Literal else slot[x] for x in eqn.inputs)
            outs = []
            for v in eqn.out_binders:
                slot[v] = n
                outs.append(n)
                n += 1
            prim = eqn.primitive
            eqns.append((prim.host_rule, eqn.params, ins, tuple(outs), prim.multiple_results))
        self.base = base
        self.n_args = len(jaxpr.invars) - n_consts
        self.eqns = eqns
        # What `run` calls per equation: the rule with its parameters bound, and its arity
        # (1 or 2 operands unrolled: no list built, no keywords expanded per call; 0 for
        # others; -1 for several results)
        self.steps = [
            (
                functools.partial(rule, **params) if params else rule,
                -1 if multiple else (len(ins) if 1 <= len(ins) <= 2 else 0),
                ins,
                outs,
            )
            for rule, params, ins, outs, multiple in eqns
        ]
        self.outs = [lit_slot[id(x)] if type(x) is Literal else slot[x] for x in jaxpr.outs]
        self.out_avals = [x.aval for x in jaxpr.outs]
        self.n_env = n

    def single_rule(self) -> tuple[Any, dict[str, Any], ShapedArray] | None:
        """(rule, params, output aval) when the body is one equation on the arguments in
        order with one result (`sin(x)`, `add(x, y)`): the commonest body, run without the
        environment."""
        if len(self.eqns) != 1 or self.base:
            return None
        rule, params, ins, outs, multiple = self.eqns[0]
        if multiple or ins != tuple(range(self.n_args)) or self.outs != list(outs):
            return None
        return rule, params, self.out_avals[0]

    def run(self, args: tuple[Any, ...]) -> list[Array] | None:
        """The results as Arrays, or None if a rule gave another dtype than traced (then the
        caller runs XLA, which computes what the trace says)."""
        env = self.base.copy()
        for a in args:
            if type(a) is Array:
                value = a._npy
                env.append(a._value() if value is None else value)
            else:
                env.append(_HOST_SCALAR_TYPES[type(a)](a))
        env.extend([None] * (self.n_env - len(env)))
        # under the user's NumPy error state, as `dispatch._apply_host` (docs/errors.md)
        for call, arity, ins, outs in self.steps:
            if arity == 1:
                env[outs[0]] = call(env[ins[0]])
            elif arity == 2:
                env[outs[0]] = call(env[ins[0]], env[ins[1]])
            elif arity == 0:
                env[outs[0]] = call(*[env[i] for i in ins])
            else:  # several results
                for i, r in zip(outs, call(*[env[i] for i in ins]), strict=True):
                    env[i] = r
        results = []
        for i, aval in zip(self.outs, self.out_avals, strict=True):
            r = env[i]
            if type(r) is not np.ndarray:  # NumPy gives scalars for 0-d results
                r = np.asarray(r)
            if r.dtype != aval.dtype:
                return None
            results.append(wrap_host(r, aval))
        return results


def _arg_key(a: Any) -> Any:
    """An argument's part of a signature: its aval (Arrays and Python floats/complexes)."""
    if type(a) is Array:
        return a.aval
    return _WEAK_SCALAR_AVALS[type(a)]  # KeyError for anything else


def _tape_body(entry: Any, fp_name: str | None) -> tuple[Any, ...]:
    """How a fused function's traced body replays on eager grad's tape: (primitive, params,
    whether to collect floating-point errors, jaxpr, consts, out tree (None: one result),
    plans, positions).

    The primitive is set (and the jaxpr None) when the body is one equation on the arguments
    with one result; `positions` then says which argument each operand is (None: the
    arguments in order), and `plans` is its `VJPTrace.apply_host` plan, or None. For a longer
    body, `plans` has one plan (or None) per equation, for `eval_on_tape`."""
    jaxpr = entry.closed.jaxpr
    out_tree = None if entry.single_output else entry.out_tree
    collect = fp_name is not None
    if len(jaxpr.eqns) == 1 and not entry.consts and out_tree is None:
        (eqn,) = jaxpr.eqns
        prim = eqn.primitive
        invars = list(jaxpr.invars)
        inputs = list(eqn.inputs)
        if (
            not prim.multiple_results
            and not prim.binds_named_axes
            and list(eqn.out_binders) == list(jaxpr.outs)
            and all(type(x) is not Literal and x in invars for x in inputs)
        ):
            ufunc = getattr(prim.host_rule, "numpy_function", None)
            # a lone NumPy ufunc of the function's name reports its own errors
            collect = collect and getattr(ufunc, "__name__", None) != fp_name
            plan = _host_step(prim, eqn, ufunc)
            if inputs == invars:
                return prim, eqn.params, collect, None, (), None, plan, None
            if plan is not None:  # `square(x)`: mul(x, x)
                positions = tuple([invars.index(x) for x in inputs])
                return prim, eqn.params, collect, None, (), None, plan, positions
    plans = [
        None
        if eqn.primitive.multiple_results or eqn.primitive.binds_named_axes
        else _host_step(
            eqn.primitive, eqn, getattr(eqn.primitive.host_rule, "numpy_function", None)
        )
        for eqn in jaxpr.eqns
    ]
    return None, None, collect, jaxpr, entry.consts, out_tree, plans, None


def _host_step(prim: Any, eqn: Any, ufunc: Any) -> tuple[Any, Any, ShapedArray] | None:
    """`VJPTrace.apply_host`'s plan for one equation: (the host rule, or the NumPy ufunc it
    calls, its keyword parameters or None, the output aval) where `dispatch` runs its host
    rule at these avals; else None."""
    if prim.impl_rule is not None or prim.host_rule is None:
        return None
    avals_in = tuple([x.aval for x in eqn.inputs])
    avals_out, use_host = dispatch.host_plan(prim, avals_in, eqn.params)
    if not use_host:
        return None
    if ufunc is not None:  # `host.ufunc`'s rule is the ufunc and a 0-d check, done after
        return ufunc, None, avals_out[0]
    return prim.host_rule, eqn.params or None, avals_out[0]


def _int_as_float(args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """Two arguments, an inexact Array and a Python int it holds exactly, with the int as the
    equal float (see `_EXACT_INT_BOUND`); None for anything else."""
    a, b = args
    if type(b) is int and type(a) is Array:
        bound = _EXACT_INT_BOUND.get(a.aval.dtype)
        if bound is not None and -bound <= b <= bound:
            return a, float(b)
    elif type(a) is int and type(b) is Array:
        bound = _EXACT_INT_BOUND.get(b.aval.dtype)
        if bound is not None and -bound <= a <= bound:
            return float(a), b
    return None


def _host_with_int(
    host: Callable[..., Any], a: Any, b: Any, result: np.dtype | None = None
) -> Array | None:
    """`host(a, b)` (one NumPy function) for an integer Array and a Python int that its dtype
    holds, on the host; None for anything else.

    NumPy's semantics are mjnp's here (NEP 50: the Array's dtype, the int's value), so one
    NumPy call stands for the traced body, which a Python int would otherwise run op by op
    (`mod(i, n)` on an index array: ~6 primitives). An int out of the dtype's range, which
    NumPy and mjnp reject (or, comparing, compare exactly), takes the general path.
    `result`: the result's dtype for every integer dtype (bool for a comparison, float64 for
    `divide`), or None: the Array's dtype.
    """
    if type(a) is Array and type(b) is int:
        arr, n = a, b
    elif type(b) is Array and type(a) is int:
        arr, n = b, a
    else:
        return None
    aval = arr.aval
    bounds = _INT_BOUNDS.get(aval.dtype)
    if (
        bounds is None
        or aval.weak_type
        or not bounds[0] <= n <= bounds[1]
        or (_SIZES.get(aval) or _size(aval)) > dispatch._HOST_LIMIT
        or not dispatch.on_cpu()
    ):
        return None
    value = arr._npy
    if value is None:
        value = arr._value()
    # under the user's NumPy error state: division by zero gives 0 and warns, as in NumPy
    r = host(value, n) if arr is a else host(n, value)
    if type(r) is not np.ndarray:  # NumPy gives scalars for 0-d results
        r = np.asarray(r)
    if result is not None:
        if r.dtype != result:
            return None
        key = (aval.shape, result)
        out_aval = _RESULT_AVALS.get(key)
        if out_aval is None:
            if len(_RESULT_AVALS) >= _CACHE_SIZE:
                _RESULT_AVALS.clear()
            out_aval = _RESULT_AVALS[key] = ShapedArray(aval.shape, result)
        return wrap_host(r, out_aval)
    if r.dtype != aval.dtype:
        return None
    return wrap_host(r, aval)


_SIZES: dict[ShapedArray, int] = {}  # aval -> size (`ShapedArray.size` loops), bounded


def _size(aval: ShapedArray) -> int:
    if len(_SIZES) >= _CACHE_SIZE:
        _SIZES.clear()
    size = _SIZES[aval] = aval.size
    return size


def _int_result(ufunc: Any) -> np.dtype | None:
    """The dtype a binary NumPy ufunc gives for integers when it is not theirs (bool for a
    comparison, float64 for `divide`), else None (the integer operand's dtype)."""
    if not isinstance(ufunc, np.ufunc) or ufunc.nin != 2:
        return None
    int64 = np.dtype(np.int64)
    try:
        out = ufunc.resolve_dtypes((int64, int64, None))[-1]
    except TypeError:  # no integer loop
        return None
    return None if out == int64 else out


# (shape, dtype) -> strong aval: `_host_with_int`'s results of a fixed dtype, bounded
_RESULT_AVALS: dict[tuple[tuple[int, ...], np.dtype], ShapedArray] = {}

# integer dtype -> (least, greatest) value: the Python ints `_host_with_int` takes
_INT_BOUNDS = {
    np.dtype(t): (int(np.iinfo(t).min), int(np.iinfo(t).max))
    for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
}


# The trace whose calls replay on eager grad's tape (`on_tape`); tests set another type to
# run every function's Python op by op there instead.
_TAPE_TRACE: type = VJPTrace


def fuse_eagerly(
    fun: F,
    *,
    int_scalars: bool = False,
    host: Callable[..., Any] | None = None,
    fp_name: str | None = None,
    int_host: Callable[..., Any] | None = None,
) -> F:
    """`fun`, replayed from its cached trace when called eagerly with array arguments (see
    the module docstring).

    Calls with keyword arguments, Python ints, NumPy arrays or tracers, and calls under any
    transformation, run `fun` itself, so every transformation sees its primitives as before.

    Args:
        fun: the library function.
        int_scalars: for a binary function whose result depends on a Python int operand only
            through its value converted to the other operand's dtype (arithmetic, comparisons):
            an int that an inexact Array's dtype holds exactly is taken as the equal float.
        host: the one NumPy function that `fun` computes (`numpy.remainder`), run on the host
            values in place of the traced body's host rules when those would run; its result
            must have the traced dtype, else the traced body runs.
        fp_name: for a NumPy ufunc, its name: the call's floating-point errors are reported
            as that one ufunc's (`mjcore.fp_errors`), whichever rules or XLA computed it.
        int_host: the NumPy ufunc `fun` is for an integer Array and a Python int that its
            dtype holds (NEP 50: the Array's dtype, or bool for a comparison; `i + 1`,
            `i > 5`), run on the host value as `host` is for those (`host` wins if given);
            other calls are untouched.
    """
    jitted = JittedFunction(fun, (), (), (), _CACHE_SIZE)
    unfusable: set[Any] = set()
    if host is not None:
        int_host = host
    int_result = _int_result(int_host)
    # Keyword arguments with hashable values (`axis=0`, `keepdims=True`, `dtype=...`) are
    # static: one fused function per combination, up to `_KEYWORD_VARIANTS` of them.
    with_keywords: dict[tuple[tuple[str, Any], ...], Callable[..., Any]] = {}
    state = core._state
    # signature (the aval of a single argument, else the tuple of `_arg_key`s) -> runner
    runners: dict[Any, Callable[[tuple[Any, ...]], Any]] = {}
    # signature (the primals' avals) -> (body jaxpr, consts, out tree, single output), or None
    # where tracing needs values: the body replayed on eager grad's tape (`on_tape`)
    tape_bodies: dict[Any, Any] = {}
    jitted._clear_hooks.extend(
        (runners.clear, with_keywords.clear, unfusable.clear, tape_bodies.clear)
    )

    # NumPy's ufunc of that name decides which floating-point errors a call meets
    numpy_ufunc = getattr(np, fp_name, None) if fp_name is not None else None
    # (not for a keyword variant, `partial(fun, dtype=...)`: NumPy would run without them)
    if not isinstance(numpy_ufunc, np.ufunc) or isinstance(fun, functools.partial):
        numpy_ufunc = None

    def call(*args: Any, **kwargs: Any) -> Any:  # `fun` op by op, eagerly
        if fp_name is None:
            return fun(*args, **kwargs)
        with Collecting(fp_name, None if kwargs else numpy_ufunc, args):
            return fun(*args, **kwargs)

    @functools.wraps(fun)
    def fused(*args: Any, **kwargs: Any) -> Any:
        if not state.eager:
            top = state.trace_stack[-1]
            if state.dynamic_trace is not None or top.trace_type is not _TAPE_TRACE:
                return traced(args, kwargs)
            for a in args:
                if isinstance(a, Tracer):
                    return taped(top, args, kwargs)
            # under eager grad's tape, nothing tracked: eager evaluation (the tape sees
            # nothing of it), replayed as one
        if not kwargs:
            n_args = len(args)
            run = None
            if n_args == 1:  # the commonest signatures, keyed without a helper call
                (a,) = args
                if type(a) is Array:
                    run = runners.get(a.aval)
            elif n_args == 2:
                a, b = args
                ta = type(a)
                tb = type(b)
                if ta is Array and tb is Array:  # the commonest: two Arrays (`x + y`)
                    run = runners.get((a.aval, b.aval))
                else:
                    if (int_scalars or int_host is not None) and tb is int and ta is Array:
                        # `x / 2`, `i + 1`: inlined, as below
                        bound = _EXACT_INT_BOUND.get(a.aval.dtype)
                        if int_scalars and bound is not None and -bound <= b <= bound:
                            b = float(b)
                            tb = float
                            args = (a, b)
                        elif bound is None and int_host is not None:  # `i + 1`, `i > 5`
                            r = _host_with_int(int_host, a, b, int_result)
                            if r is not None:
                                return r
                    if (int_scalars or int_host is not None) and (ta is int or tb is int):
                        as_float = _int_as_float(args) if int_scalars else None
                        if as_float is not None:
                            args = as_float
                            a, b = args
                            ta = type(a)
                            tb = type(b)
                        elif int_host is not None:
                            r = _host_with_int(int_host, a, b, int_result)
                            if r is not None:
                                return r
                    # Python scalars alone are no Array's signature: they give strong dtypes
                    # (`general`), where weak Arrays of the same key give weak ones.
                    if ta is Array or tb is Array:
                        run = runners.get(
                            (
                                a.aval if ta is Array else _WEAK_SCALAR_AVALS.get(ta),
                                b.aval if tb is Array else _WEAK_SCALAR_AVALS.get(tb),
                            )
                        )
            elif any(type(a) is Array for a in args):
                try:
                    run = runners.get(tuple([_arg_key(a) for a in args]))
                except KeyError:  # not an Array or Python float
                    pass
            if run is not None:
                return run(args)
            return general(args)
        return general(args, kwargs)

    def taped(top: core.MainTrace, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A call on eager grad's tape (`top`) with a tracer among the arguments."""
        if kwargs:
            variant = keyword_variant(kwargs)
            if variant is not None:
                return variant(*args)
        else:
            out = on_tape(top, args)
            if out is not _MISS:
                return out
        return traced(args, kwargs)

    def traced(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """`fun` itself, under a transformation."""
        if fp_name is None:
            return fun(*args, **kwargs)
        # eager grad's forward pass runs host rules on tracers' values: report them as
        # this ufunc's (under jit, nothing runs and nothing is collected)
        with Collecting(fp_name):
            return fun(*args, **kwargs)

    def keyword_variant(kwargs: dict[str, Any]) -> Callable[..., Any] | None:
        """The fused `partial(fun, **kwargs)` for static keyword values, or None."""
        types = tuple(map(type, kwargs.values()))
        if _PLAIN_KEYWORD_TYPES.issuperset(types):  # `axis=0, keepdims=True`: keyed in C
            key: Any = (tuple(kwargs.items()), types)
        else:
            try:
                key = tuple((k, _static_key(v)) for k, v in kwargs.items())
            except _NotStatic:  # an array or a list among the values
                return None
        variant = with_keywords.get(key)
        if variant is None:
            if len(with_keywords) >= _KEYWORD_VARIANTS:
                # the oldest combination goes (bounded): refusing new ones would send their
                # calls op by op, where XLA-run primitives skip the fused finiteness flags
                # (NumPy's overflow warnings would depend on what ran before)
                del with_keywords[next(iter(with_keywords))]
            variant = with_keywords[key] = fuse_eagerly(
                functools.partial(fun, **kwargs), fp_name=fp_name
            )
        return variant

    def on_tape(top: core.MainTrace, args: tuple[Any, ...]) -> Any:
        """`fun(*args)` on eager grad's tape (`top`), as its traced body at the primals'
        signature: the primitives its Python would bind, without running its Python
        (promotion, axis checks); `_MISS` where the signature cannot be traced."""
        # The commonest signatures (tracers of this tape, Arrays, Python floats) keyed in one
        # loop; anything else takes the loop below.
        key_list = []
        for a in args:
            t = type(a)
            if t is VJPTracer:
                p = a.primal
                if type(p) is not Array or a._trace.main is not top:
                    break
                key_list.append(p.aval)
            elif t is Array:
                key_list.append(a.aval)
            elif t is float:
                key_list.append(_WEAK_FLOAT)
            else:
                break
        else:
            key = tuple(key_list)
            body = tape_bodies.get(key)
            if body is not None:
                return replay(top, body, args)
        primals = []
        converted = False
        for a in args:
            t = type(a)
            if t is VJPTracer:
                if a._trace.main is not top:
                    return _MISS
                a = a.primal
                if type(a) is not Array:  # a tracer of another transformation
                    return _MISS
            elif t is np.ndarray or isinstance(a, np.generic):  # (`x - np.log(2.0)`)
                if a.dtype not in _NUMPY_ARG_DTYPES:
                    return _MISS
                # copied to an Array, as the function's own argument conversion does (a NumPy
                # scalar: a strong 0-d array, NEP 50); on the CPU a host copy (`ndarray - t`:
                # no transfer, the buffer made if ever needed)
                if dispatch.on_cpu():
                    a = wrap_host(*dispatch.host_value(a))
                else:
                    a = dispatch.device_put(a)
                converted = True
            primals.append(a)
        if converted:
            args = tuple(
                p if type(a) is np.ndarray or isinstance(a, np.generic) else a
                for a, p in zip(args, primals, strict=True)
            )
        if int_scalars and len(args) == 2 and int in (type(primals[0]), type(primals[1])):
            as_float = _int_as_float(tuple(primals))
            if as_float is None:
                return _MISS
            args = tuple(p if type(a) is int else a for a, p in zip(args, as_float, strict=True))
            primals = list(as_float)
        try:
            key = tuple([_arg_key(a) for a in primals])
        except KeyError:  # a Python int, a NumPy array
            return _MISS
        body = tape_bodies.get(key, _MISS)
        if body is _MISS:
            try:
                entry = jitted._entry_for(tuple(primals), {})[0]
            except _NEEDS_VALUES:
                body = None
            else:
                body = _tape_body(entry, fp_name)
            if len(tape_bodies) >= _CACHE_SIZE:
                tape_bodies.clear()
            tape_bodies[key] = body
        if body is None:
            return _MISS
        return replay(top, body, args)

    def replay(top: core.MainTrace, body: tuple[Any, ...], args: tuple[Any, ...]) -> Any:
        """A traced body (`_tape_body`) replayed on the tape `top` with `args`."""
        prim, params, collect, jaxpr, consts, out_tree, plan, positions = body
        trace: VJPTrace = top.trace  # type: ignore[assignment]  # the caller checked trace_type
        if prim is not None and plan is not None:  # one equation, run by its host rule
            if positions is not None:
                args = tuple([args[i] for i in positions])
            if collect:
                with Collecting(fp_name):  # type: ignore[arg-type]
                    return trace.apply_host(prim, args, params, plan)
            return trace.apply_host(prim, args, params, plan)
        if prim is not None:  # one equation on the arguments in order, one result
            tracers = [a if type(a) is VJPTracer else VJPTracer(trace, a, None) for a in args]
            if collect:
                with Collecting(fp_name):  # type: ignore[arg-type]
                    (out,) = trace.process_primitive(prim, tracers, params)
            else:  # the host rule is this ufunc: its errors are its own
                (out,) = trace.process_primitive(prim, tracers, params)
            return out.primal if out.var is None else out
        if collect:  # the host rules' errors reported as this ufunc's, as op by op
            with Collecting(fp_name):  # type: ignore[arg-type]
                outs = eval_on_tape(trace, jaxpr, [*consts, *args], plan)
        else:
            outs = eval_on_tape(trace, jaxpr, [*consts, *args], plan)
        return outs[0] if out_tree is None else tree_unflatten(out_tree, outs)

    def general(args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> Any:
        if kwargs:
            variant = keyword_variant(kwargs)
            if variant is None:
                return call(*args, **kwargs)
            return variant(*args)
        try:
            avals = tuple([_arg_key(a) for a in args])
        except KeyError:  # a Python int, a NumPy array, a tracer
            return call(*args)
        if all(type(a) is not Array for a in args):
            return call(*args)  # Python scalars alone give strong dtypes: not a traced call's
        if avals in unfusable:
            return call(*args)
        try:
            entry = jitted._entry_for(args, {})[0]
        except _NEEDS_VALUES:
            if len(unfusable) >= _CACHE_SIZE:
                unfusable.clear()
            unfusable.add(avals)
            return call(*args)
        if len(runners) >= _CACHE_SIZE:
            runners.clear()
        run = _runner(entry)
        runners[avals[0] if len(avals) == 1 else avals] = run
        return run(args)

    def _runner(entry: Any) -> Callable[[tuple[Any, ...]], Any]:
        """What runs one signature: its host program, or its XLA executable."""
        out_tree = entry.out_tree
        single = entry.single_output
        if _host_runnable(entry.closed):
            program = _HostProgram(entry.closed, entry.consts)
            one = program.single_rule()
            # With `host`: the whole body as its one NumPy function; Python scalars go in as
            # they came, which NumPy takes as weak (NEP 50), as the trace did.
            host_scalars = host is not None and single and one is None
            if host_scalars:
                one = (host, {}, program.out_avals[0])
            if one is not None and single:
                rule, params, out_aval = one
                jaxpr = entry.closed.jaxpr
                avals_in = [  # the operands of the one rule, or of `host`: the arguments
                    x.aval
                    for x in (
                        jaxpr.invars[len(entry.consts) :] if host_scalars else jaxpr.eqns[0].inputs
                    )
                ]
                rule, kw = _direct_rule(rule, params, avals_in)
                # A lone NumPy ufunc of the function's name reports its own errors (no cost),
                # and bools meet none (`logical_and(b, c)`: `bitwise_and`).
                collect = (
                    fp_name is not None
                    and getattr(rule, "__name__", None) != fp_name
                    and not _all_bool([*avals_in, out_aval])
                )
                # A NumPy ufunc takes Python floats as weak (NEP 50), as the trace did (the
                # one equation's operands have one dtype): no NumPy scalar made per call.
                raw = host_scalars or isinstance(rule, np.ufunc)
                if kw is None and not collect and len(avals_in) in (1, 2):
                    fallback = functools.partial(_run_compiled, jitted, entry)
                    return _one_rule_runner(rule, out_aval, raw, len(avals_in), fallback)

                def run_host(args: tuple[Any, ...]) -> Any:  # noqa: F811  # one equation
                    vals = []
                    for a in args:
                        if type(a) is Array:
                            value = a._npy
                            vals.append(a._value() if value is None else value)
                        elif raw:
                            vals.append(a)
                        else:
                            vals.append(_HOST_SCALAR_TYPES[type(a)](a))
                    if collect:  # `Collecting` inlined (see `fp_errors.collected`)
                        raised = collected()
                        start = len(raised)
                        token = fp_state.set(COLLECT)
                        try:
                            r = rule(*vals) if kw is None else rule(*vals, **kw)
                        except BaseException:
                            fp_state.reset(token)
                            del raised[start:]
                            raise
                        fp_state.reset(token)
                        if len(raised) > start:
                            report_collected(raised, start, fp_name, numpy_ufunc, args)  # type: ignore[arg-type]
                    else:  # under the user's NumPy error state
                        r = rule(*vals) if kw is None else rule(*vals, **kw)
                    if type(r) is not np.ndarray:  # NumPy gives scalars for 0-d results
                        r = np.asarray(r)
                    if r.dtype != out_aval.dtype:
                        return _run_compiled(jitted, entry, args)
                    a = new_object(Array)  # `wrap_host` inlined
                    a._dbuf = None
                    a.aval = out_aval
                    a._npy = r
                    a._link = a._children = None
                    return a

                return run_host

            def run_host(args: tuple[Any, ...]) -> Any:
                if fp_name is None:
                    outs = program.run(args)
                else:  # `Collecting` inlined (see `fp_errors.collected`)
                    raised = collected()
                    start = len(raised)
                    token = fp_state.set(COLLECT)
                    try:
                        outs = program.run(args)
                    except BaseException:
                        fp_state.reset(token)
                        del raised[start:]
                        raise
                    fp_state.reset(token)
                    if len(raised) > start:
                        report_collected(raised, start, fp_name, numpy_ufunc, args)
                if outs is None:  # a rule's dtype differs from the trace's: XLA instead
                    return run_xla(args)
                return outs[0] if single else tree_unflatten(out_tree, outs)

            def run_xla(args: tuple[Any, ...]) -> Any:
                return _run_compiled(jitted, entry, args)

            scalar_op = _scalar_ufunc(entry) if single and host is None else None
            if scalar_op is not None:
                return _scalar_ufunc_runner(*scalar_op, fp_name, run_host)
            return run_host
        return _checked_runner(jitted, entry, fp_name, numpy_ufunc)

    fused.__wrapped_fused__ = jitted  # type: ignore[attr-defined]  # tests count traces
    fused.__fused_runners__ = runners  # type: ignore[attr-defined]  # tests look at the paths
    return fused  # type: ignore[return-value]


def _scalar_ufunc(entry: Any) -> tuple[np.ufunc, int, ShapedArray] | None:
    """(the NumPy ufunc, the scalar's position, the result's aval) when a traced body of two
    arguments, an Array and a weak scalar, is the scalar's conversion to the Array's dtype and
    one ufunc's rule on the two (`float32_array * 0.5`, `x > 0` of float32); else None. NumPy
    takes a Python scalar as weak (NEP 50): it converts it to the Array's dtype and applies
    the ufunc, which is that body, warnings included ("overflow encountered in cast")."""
    jaxpr = entry.closed.jaxpr
    if entry.consts or len(jaxpr.eqns) != 2 or len(jaxpr.invars) != 2 or len(jaxpr.outs) != 1:
        return None
    conv, op = jaxpr.eqns
    if conv.primitive is not convert_element_type_p or op.primitive.multiple_results:
        return None
    (scalar,) = conv.inputs
    (converted,) = conv.out_binders
    if type(scalar) is Literal or scalar not in jaxpr.invars:
        return None
    if not scalar.aval.weak_type or scalar.aval.shape or len(op.inputs) != 2:
        return None
    position = jaxpr.invars.index(scalar)
    array = jaxpr.invars[1 - position]
    if list(op.inputs) != ([converted, array] if position == 0 else [array, converted]):
        return None
    if list(op.out_binders) != list(jaxpr.outs) or op.primitive.host_rule is None:
        return None
    if op.primitive.impl_rule is not None:
        return None
    fn, kw = _direct_rule(op.primitive.host_rule, op.params, [x.aval for x in op.inputs])
    if kw is not None or not isinstance(fn, np.ufunc):
        return None
    return fn, position, jaxpr.outs[0].aval


def _scalar_ufunc_runner(
    fn: np.ufunc,
    position: int,
    out_aval: ShapedArray,
    fp_name: str | None,
    general: Callable[[tuple[Any, ...]], Any],
) -> Callable[[tuple[Any, ...]], Any]:
    """The host runner of a `_scalar_ufunc` body: `fn` on the Array's host value and the
    Python scalar as it is, under the user's error state where `fn` is the function's own
    ufunc (else `general`, the body's host program); a weak 0-d Array in the scalar's place
    (NumPy would take it as strong), or a result of another dtype, also runs `general`."""
    if fp_name is not None and fn.__name__ != fp_name:
        return general
    dtype = out_aval.dtype

    def run_host(args: tuple[Any, ...]) -> Any:
        a, b = args
        if position == 1:
            s = b
            if type(s) is Array:
                return general(args)
            value = a._npy
            r = fn(a._value() if value is None else value, s)
        else:
            s = a
            if type(s) is Array:
                return general(args)
            value = b._npy
            r = fn(s, b._value() if value is None else value)
        if type(r) is not np.ndarray:
            r = np.asarray(r)
        if r.dtype is not dtype and r.dtype != dtype:
            return general(args)
        a = new_object(Array)  # `wrap_host` inlined
        a._dbuf = None
        a.aval = out_aval
        a._npy = r
        a._link = a._children = None
        return a

    return run_host


def _array_out() -> bool:
    """Whether NumPy's ufuncs take `out=...` (NumPy >= 2.3): a 0-d result comes back as an
    array, not as a NumPy scalar that `np.asarray` must convert again (~0.15 µs)."""
    try:
        return type(np.add(np.zeros(()), 1.0, out=...)) is np.ndarray
    except TypeError:
        return False


_ARRAY_OUT = _array_out()


def _direct_rule(
    rule: Callable[..., Any], params: dict[str, Any], avals_in: list[ShapedArray]
) -> tuple[Callable[..., Any], dict[str, Any] | None]:
    """What a one-equation body calls, and its keyword parameters (None: none): the NumPy
    function itself where the host rule is one (`host.ufunc`: a frame less) or names one for
    these operands (`rule.specialize(avals_in, **params)`: `div` of floats is `np.divide`),
    else the rule and its parameters."""
    direct = getattr(rule, "numpy_function", None)
    if direct is not None:
        return direct, None
    specialize = getattr(rule, "specialize", None)
    if specialize is not None and avals_in:
        direct = specialize(avals_in, **params)
        if direct is not None:
            return direct, None
    return rule, params or None


def _all_bool(avals: list[ShapedArray]) -> bool:
    """Whether every aval is bool: NumPy's bool loops (logical, bitwise, comparisons) raise no
    floating-point flags, so there is nothing to collect."""
    return all(a.dtype.kind == "b" for a in avals)


def _one_rule_runner(
    rule: Callable[..., Any],
    out_aval: ShapedArray,
    raw: bool,
    n_args: int,
    fallback: Callable[[tuple[Any, ...]], Any],
) -> Callable[[tuple[Any, ...]], Any]:
    """A host runner for a body that is one call `rule(*values)` on its one or two arguments,
    under the user's error state: the general one-rule runner unrolled (no list, no loop, no
    parameters), since it is every eager ufunc call's and operator's. `raw`: Python scalars
    go to `rule` as they are (a NumPy ufunc takes them as weak), else as NumPy scalars of the
    traced dtype. `fallback` runs the compiled body where the rule gives another dtype."""
    if out_aval.ndim == 0 and isinstance(rule, np.ufunc) and _ARRAY_OUT:
        rule = functools.partial(rule, out=...)  # a 0-d array, not a scalar to convert
    if n_args == 2:
        return _two_argument_runner(rule, out_aval, raw, fallback)
    dtype = out_aval.dtype

    if n_args == 1:  # the signature's one argument is an Array (`fused` keys no other)

        def run_host(args: tuple[Any, ...]) -> Any:
            (a,) = args
            value = a._npy
            r = rule(a._value() if value is None else value)
            if type(r) is not np.ndarray:  # NumPy gives scalars for 0-d results
                r = np.asarray(r)
            if r.dtype is not dtype and r.dtype != dtype:
                return fallback(args)
            a = new_object(Array)  # `wrap_host` inlined
            a._dbuf = None
            a.aval = out_aval
            a._npy = r
            a._link = a._children = None
            return a

        return run_host
    raise ValueError(f"_one_rule_runner: {n_args} arguments (one or two are unrolled)")


def _two_argument_runner(
    rule: Callable[..., Any],
    out_aval: ShapedArray,
    raw: bool,
    fallback: Callable[[tuple[Any, ...]], Any],
) -> Callable[[tuple[Any, ...]], Any]:
    """`_one_rule_runner` of two arguments."""
    dtype = out_aval.dtype
    to_host = _HOST_SCALAR_TYPES

    def run_host(args: tuple[Any, ...]) -> Any:
        a, b = args
        # (a weak 0-d Array and a Python float share a signature: either may come)
        if type(a) is Array:
            va = a._npy
            if va is None:
                va = a._value()
        else:
            va = a if raw else to_host[type(a)](a)
        if type(b) is Array:
            vb = b._npy
            if vb is None:
                vb = b._value()
        else:
            vb = b if raw else to_host[type(b)](b)
        r = rule(va, vb)
        if type(r) is not np.ndarray:
            r = np.asarray(r)
        if r.dtype is not dtype and r.dtype != dtype:
            return fallback(args)
        a = new_object(Array)
        a._dbuf = None
        a.aval = out_aval
        a._npy = r
        a._link = a._children = None
        return a

    return run_host


def _checked_runner(
    jitted: JittedFunction, entry: Any, fp_name: str | None, numpy_ufunc: Any
) -> Callable[[tuple[Any, ...]], Any]:
    """An XLA-run signature that reports NumPy's floating-point errors on the CPU: XLA sets
    no flags, so an inexact result with an infinity or NaN (the only results a warning can
    come with, underflow aside) has its body re-run by the host rules under the user's error
    state, results discarded, to raise NumPy's warnings (docs/errors.md).

    Whether large results are finite is computed by the compiled program itself: a second
    executable of the body returns one more bool per float result (`_with_finite_flags`),
    which XLA computes as it writes the result (a test on the host reads it again: ~80 µs a
    float32[1e6], a third of the add). One-element results (a sum's) are tested on the host
    after the plain executable, by their bits (`backend.all_finite`): ~3 µs, where the
    flagged program's second kernel and tuple output cost ~15 µs on a float32[1e6] sum.
    Under an error state that ignores everything, or off the CPU, the plain executable runs."""
    program: list[_HostProgram | None] = []
    flagged: list[Any] = []
    tested: list[int] = []  # the indices of the inexact results

    def run(args: tuple[Any, ...]) -> Any:
        if not dispatch.on_cpu() or all_ignored():
            return _run_compiled(jitted, entry, args)
        if not flagged:
            avals = entry.closed.out_avals
            tested.extend(i for i, a in enumerate(avals) if dtypes.kind(a.dtype) in "fc")
            scalars = all(avals[i].size <= 1 for i in tested)
            flagged.append(None if scalars else _with_finite_flags(entry))  # after `tested`
        if flagged[0] is None:  # one-element or complex results: tested on the host
            outs = entry.run(entry._exe or jitted._executable(entry), args)
            finite = True
            for i in tested:
                aval = outs[i].aval
                if not backend.all_finite(outs[i]._dbuf, aval.dtype, aval.size):
                    finite = False
                    break
            out = outs[0] if entry.single_output else tree_unflatten(entry.out_tree, outs)
        else:
            out, finite = _run_flagged(flagged[0], entry, args)
        if finite and underflow_ignored():
            return out
        if numpy_ufunc is not None and rerun_numpy(numpy_ufunc, args):
            return out
        if not program:
            runnable = all(
                e.primitive.host_rule is not None and e.primitive.impl_rule is None
                for e in entry.closed.jaxpr.eqns
            )
            program.append(_HostProgram(entry.closed, entry.consts) if runnable else None)
        if program[0] is not None:
            if fp_name is None:
                program[0].run(args)
            else:
                with Collecting(fp_name):
                    program[0].run(args)
        return out

    return run


def _with_finite_flags(entry: Any) -> Any:
    """The executable of `entry`'s body with one more output per float result: whether it
    is all finite (`reduce_and(is_finite(y))`); None when a result is complex (no
    `is_finite` for those)."""
    closed = entry.closed
    out_avals = closed.out_avals
    if any(a.dtype.kind == "c" for a in out_avals):
        return None
    floats = [i for i, a in enumerate(out_avals) if dtypes.kind(a.dtype) == "f"]

    def body(*args: Any) -> list[Any]:
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
        return [
            *outs,
            *[reduce_and(is_finite(outs[i]), tuple(range(outs[i].ndim))) for i in floats],
        ]

    flagged = trace_to_jaxpr(body, closed.in_avals, f"jit({entry.name})")
    call, consts = hoist_consts(flagged)
    if consts:  # (the body of a const-free jaxpr and two primitives close over nothing)
        return None
    return compile_closed_jaxpr(call, entry.name)


def _run_flagged(exe: Any, entry: Any, args: tuple[Any, ...]) -> tuple[Any, bool]:
    """`_run_compiled` by the flagged executable: (the results, whether all are finite)."""
    outs = entry.run(exe, args)
    n = len(entry.closed.out_avals)
    finite = all(backend.read_bool(flag._dbuf) for flag in outs[n:])
    if entry.single_output:
        return outs[0], finite
    return tree_unflatten(entry.out_tree, outs[:n]), finite


def _run_compiled(jitted: JittedFunction, entry: Any, args: tuple[Any, ...]) -> Any:
    """One signature's traced body as its compiled executable (compiled on first use)."""
    outs = entry.run(entry._exe or jitted._executable(entry), args)
    return outs[0] if entry.single_output else tree_unflatten(entry.out_tree, outs)


def uses_host(fused: Callable[..., Any], *args: Any) -> bool:
    """Whether an eager call `fused(*args)` of a `fuse_eagerly` function (positional Array
    or Python float arguments) replays its trace on the host (for tests)."""
    key = tuple([_arg_key(a) for a in args])
    run = fused.__fused_runners__.get(key[0] if len(key) == 1 else key)  # type: ignore[attr-defined]
    return run is not None and run.__name__ == "run_host"


ad.install_rule_fuser(fuse_eagerly)
