"""Eager execution of primitives. (Autodidax Part 3's `xla_call_impl`, specialised to single
primitives; and Part 1's NumPy impl rules, which it started from.)

On the CPU platform a primitive with a NumPy `host_rule` runs it on the host values of its
arguments when the call is small (`host_limit`); otherwise it is "jit of one primitive",
compiled once per (primitive, params, input avals), cached (bounded), and executed on device
buffers. See docs/eager.md.
"""

from __future__ import annotations

import cmath
import functools
import math
import operator
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from mjcore import core, dtypes
from mjcore.array import Array, new_object, wrap_buffer, wrap_host
from mjcore.backend import client as backend
from mjcore.backend.lowering import lower_primitive
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.errors import MissingRuleError
from mjcore.sharded import device_put_sharded
from mjcore.sharding import Sharding, SingleDeviceSharding
from mjcore.tree_util import tree_leaves, tree_map

# (primitive, input avals, params) -> (program, output avals); emptied when full, so that eager
# calls on ever new shapes (which go to XLA only when large) hold a bounded number of programs
_executables: dict[Any, tuple[backend.Program, list[ShapedArray]]] = {}
_EXECUTABLES_SIZE = 512
_compile_lock = threading.Lock()

_SCALAR_CACHE_SIZE = 4096
_scalar_buffers: dict[Any, Any] = {}


def _scalar_buffer(x: Any, aval: ShapedArray) -> Any:
    """Device buffers of Python scalars, cached: `x * 2.0` must not pay a transfer each call."""
    # -0.0 == 0.0 in a dict; keep the sign by keying on the type and repr-free tuple.
    key = (
        type(x),
        x,
        aval.dtype,
        math.copysign(1.0, x.real) if isinstance(x, float | complex) else 0,
    )
    buf = _scalar_buffers.get(key)
    if buf is None:
        if len(_scalar_buffers) >= _SCALAR_CACHE_SIZE:
            _scalar_buffers.clear()
        host = _convert_scalar(x, aval.dtype)
        buf = backend.device_put(host)
        if not _overflowed(x, host):
            _scalar_buffers[key] = buf
    return buf


def _convert_scalar(x: Any, dtype: np.dtype) -> np.ndarray:
    """`x` as `dtype`: eagerly under the user's error state, so that 70001 as float16 gives
    NumPy's 'overflow encountered in cast' (docs/errors.md); quietly while tracing."""
    if core._state.eager:
        return np.asarray(x, dtype)
    with np.errstate(over="ignore"):
        return np.asarray(x, dtype)


def _overflowed(x: Any, host: np.ndarray) -> bool:
    """Whether converting `x` overflowed (such values are not cached: every call warns)."""
    return dtypes.kind(host.dtype) in "fc" and not np.isfinite(host) and cmath.isfinite(x)


_scalar_arrays: dict[Any, tuple[Any, ShapedArray, np.ndarray]] = {}


@backend.clear_at_exit
def _clear_caches() -> None:
    _executables.clear()
    _scalar_buffers.clear()
    _scalar_arrays.clear()
    _host_plans.clear()
    _scalar_hosts.clear()


def scalar_array(value: Any, dtype: np.dtype, weak_type: bool = False) -> Array:
    """A 0-d Array holding a Python scalar as `dtype`.

    The buffer and aval are cached, the Array is not: a handle is rebindable (`x.fill(v)`,
    `x[...] = v`), so two calls must never share one, or filling `zeros(())` would change
    every later zero.
    """
    # The sign keeps -0.0 apart from 0.0, which compare (and hash) equal.
    sign = math.copysign(1.0, value.real) if isinstance(value, float | complex) else 0
    key = (type(value), value, sign, dtype, weak_type)
    cached = _scalar_arrays.get(key)
    if cached is None:
        if len(_scalar_arrays) >= _SCALAR_CACHE_SIZE:
            _scalar_arrays.clear()
        aval = ShapedArray((), dtype, weak_type)
        buf = _scalar_buffer(value, aval)
        # both values, shared by every Array of this scalar: the host path reads the view
        cached = (buf, aval, backend.to_numpy(buf))
        if not _overflowed(value, cached[2]):
            _scalar_arrays[key] = cached
    buf, aval, host = cached
    out = Array(buf, aval)
    out._npy = host
    return out


def to_buffer(x: Any) -> tuple[Any, ShapedArray]:
    """A device buffer and aval for any array-like argument of an eager primitive."""
    if type(x) is Array:
        return x._buf, x.aval
    aval = get_aval(x)
    if isinstance(x, Array):
        return x._buf, aval
    if isinstance(x, bool | int | float | complex):
        return _scalar_buffer(x, aval), aval
    return backend.device_put(np.asarray(x, aval.dtype)), aval


def device_put(x: Any, device: Any = None) -> Array:
    """Put an array-like value on `device` (None: the default device) as an Array. An Array
    already committed there is returned as it is; otherwise it is copied there and committed
    (operations with it run on that device). `device` may be a `mjcore.sharding.Sharding`:
    the result is then laid out over its devices (`mjcore.sharded`)."""
    if isinstance(device, SingleDeviceSharding):
        (device,) = device.device_set
    elif isinstance(device, Sharding):
        return device_put_sharded(x, device)
    if device is None:
        if isinstance(x, Array):
            return x
        buf, aval = to_buffer(x)
        return Array(buf, aval)
    if isinstance(x, Array):
        return Array(backend.copy_to_device(x._buf, x.aval, device), x.aval)
    aval = get_aval(x)
    return Array(backend.device_put(np.asarray(x, aval.dtype), device), aval)


def compiled_primitive(
    prim: Primitive, avals_in: tuple[ShapedArray, ...], params: dict[str, Any]
) -> tuple[backend.Program, list[ShapedArray]]:
    """The cached executable for one primitive application, compiling it on first use."""
    key = (prim, avals_in, tuple(params.items()))
    entry = _executables.get(key)
    if entry is None:
        with _compile_lock:
            entry = _executables.get(key)
            if entry is None:
                if prim.lowering_rule is None:
                    raise MissingRuleError(prim.name, "impl", "Eager evaluation", "lowering")
                avals_out = prim.abstract_eval(*avals_in, **params)
                text, host_callbacks = lower_primitive(prim, avals_in, avals_out, params)
                relower = functools.partial(lower_primitive, prim, avals_in, avals_out, params)
                program = backend.Program(text, avals_out, host_callbacks, relower=relower)
                if len(_executables) >= _EXECUTABLES_SIZE:
                    _executables.clear()
                entry = _executables[key] = (program, avals_out)
    return entry


def apply_primitive(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    """Run `prim` eagerly: its host rule on host values when small (on CPU), else its
    compiled lowering on device buffers. Results are Arrays."""
    if prim.impl_rule is not None:
        return _apply_impl_rule(prim, args, params)
    if prim.host_rule is not None:
        outs = _apply_host(prim, args, params)
        if outs is not None:
            return outs
    bufs = []
    avals = []
    for x in args:
        if type(x) is Array:
            bufs.append(x._buf)
            avals.append(x.aval)
        else:
            buf, aval = to_buffer(x)
            bufs.append(buf)
            avals.append(aval)
    program, avals_out = compiled_primitive(prim, tuple(avals), params)
    outs = program.run(bufs)
    results = [wrap_buffer(b, a) for b, a in zip(outs, avals_out, strict=True)]
    if prim.host_rule is not None and any(dtypes.kind(a.dtype) in "fc" for a in avals_out):
        _report_fp_errors(prim, args, params, results)
    return results


def _report_fp_errors(
    prim: Primitive, args: Sequence[Any], params: dict[str, Any], results: list[Array]
) -> None:
    """NumPy's floating-point warnings (or errors) for a primitive XLA computed eagerly: its
    one-primitive program has no finiteness flag (a fused body's has, `eager_fusion`), so on
    the CPU, under an error state that does not ignore everything, a float result holding an
    inf or a NaN re-runs the primitive's host rule on the operands for its errors alone, and
    NumPy decides (a NaN passed in warns nothing; `inf - inf` does)."""
    if not on_cpu() or all_ignored():
        return
    rule = prim.host_rule
    assert rule is not None
    for r in results:
        if dtypes.kind(r.aval.dtype) in "fc" and not np.isfinite(r._value()).all():
            rerun_numpy(lambda *values: rule(*values, **params), tuple(args))
            return


# --- host execution (CPU platform) --------------------------------------------------------------

# Primitives whose host rule is a NumPy view or a copy without arithmetic: NumPy is never slower
# than a compiled program for them, at any size.
_ALWAYS_HOST = frozenset(
    {"reshape", "transpose", "squeeze", "expand_dims", "slice", "broadcast_in_dim", "rev"}
)
# Elements (of the largest operand or result) up to which the host rule runs; above it, XLA's
# kernels win. Measured on this CPU (AVX-512; docs/eager.md, "Choosing host or XLA"): NumPy's
# one-pass ufuncs and max/min reductions are as fast as or faster than the compiled primitive
# at every size (add, less, max, float32 and float64, 2^18 to 4e6 elements: 0.1-0.9x XLA's
# time), and so are its SIMD loops for float32 sin, exp, log and float64 exp, log (0.1-1.0x
# up to 1e7 elements; float32 tanh 0.4-1.4x). float32 sin/cos still go to XLA above the limit:
# there the fast kernel (lax/kernels, within half an ulp) is what eager promises and tests
# (tests/test_fast_trig.py: eager == jit == vmap on large arrays), NumPy's SIMD loop is not.
# XLA's sums win from ~2^19 (float32 at 1e6: NumPy's pairwise sum 1.2x XLA's time, 1.5x at
# 4e6), float64 sin and tanh from ~2^16 (tanh at 4e6: 2.8x), `where` from ~2^15 (NumPy's
# select branches per element: 2x at 2^16).
_HOST_LIMIT = 1 << 15
# bfloat16 (ml_dtypes): NumPy computes many ufuncs on bfloat16 through float32 with other
# roundings than XLA's (and some not at all), so eager bfloat16 runs XLA's lowering except for
# these primitives, whose host rules move, select or compare values without rounding, or round
# once a float32 result that is exact (a sum, difference or product of two bfloat16s: rounding
# it once is the correctly rounded result, which XLA's CPU computes too).
# tests/test_bfloat16.py checks each bit for bit against XLA.
_BFLOAT16 = dtypes.bfloat16
_BFLOAT16_HOST = frozenset(
    {
        "reshape", "transpose", "squeeze", "expand_dims", "slice", "broadcast_in_dim", "rev",
        "concatenate", "pad", "select_n", "dynamic_slice", "gather",
        "eq", "ne", "lt", "le", "gt", "ge", "neg", "abs", "sign", "max", "min", "clamp",
        "add", "sub", "mul", "add_any", "reduce_max", "reduce_min", "floor", "ceil",
    }
)  # fmt: skip
_CHEAP_HOST_LIMIT = 1 << 18
_CHEAP = frozenset(
    {
        "select_n", "clamp", "round", "concatenate", "pad", "iota", "convert_element_type",
        "reduce_sum", "reduce_prod",
    }
)  # fmt: skip
# one pass over memory, no faster compiled: the host rule at every size
_STREAMING = frozenset(
    {
        "add", "sub", "mul", "neg", "abs", "sign", "max", "min", "floor", "ceil",
        "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not", "xor",
        "reduce_max", "reduce_min", "reduce_and", "reduce_or", "add_any",
    }
)  # fmt: skip
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
# primitive -> the dtypes whose NumPy loop (SIMD) is as fast as XLA's at every size
_STREAMING_DTYPES = {
    "tanh": frozenset({_F32}),
    "exp": frozenset({_F32, _F64}),
    "log": frozenset({_F32, _F64}),
}
_SELECT_HOST_LIMIT = 1 << 15
_HOST_PLANS_SIZE = 4096

# (primitive, input avals[, params]) -> (output avals, whether the host rule runs); bounded
_host_plans: dict[Any, tuple[list[ShapedArray], bool]] = {}
_host_platform: list[bool] = []  # [whether the device is the CPU], known after the first call


def host_limit(prim: Primitive, dtype: np.dtype | None = None) -> float:
    """Elements (largest operand or result) up to which eager `prim` on operands of `dtype`
    (its first operand's; None: any) runs its host rule on the CPU."""
    name = prim.name
    if dtype == _BFLOAT16 and name not in _BFLOAT16_HOST:
        return 0  # (host_vjp's rules ask here too: no NumPy arithmetic on bfloat16)
    if name in _ALWAYS_HOST or name in _STREAMING:
        return math.inf
    dtypes = _STREAMING_DTYPES.get(name)
    if dtypes is not None and dtype in dtypes:
        return math.inf
    if name in _CHEAP:
        return _SELECT_HOST_LIMIT if name == "select_n" else _CHEAP_HOST_LIMIT
    return _HOST_LIMIT


def host_rule_exact(prim: Primitive, avals: Sequence[Any]) -> bool:
    """Whether `prim`'s host rule gives XLA's bits at `avals`: always, except for bfloat16,
    where only the rules of `_BFLOAT16_HOST` do."""
    return prim.name in _BFLOAT16_HOST or all(a.dtype != dtypes.bfloat16 for a in avals)


def on_cpu() -> bool:
    """Whether the device is the CPU, whose buffers are host memory (host rules may run)."""
    if not _host_platform:
        _host_platform.append(backend.device().platform == "cpu")
    # Host values have no device: once arrays are committed to one of several devices,
    # every eager op runs where its arguments live (committing clears the plan cache).
    return _host_platform[0] and not backend.several_devices_in_use


def host_plan(
    prim: Primitive, avals_in: tuple[ShapedArray, ...], params: dict[str, Any]
) -> tuple[list[ShapedArray], bool]:
    """(output avals, whether the host rule runs) for one application, cached (bounded)."""
    key = (prim, avals_in, tuple(params.items())) if params else (prim, avals_in)
    plan = _host_plans.get(key)
    if plan is None:
        avals_out = prim.abstract_eval(*avals_in, **params)
        largest = max(a.size for a in (*avals_in, *avals_out)) if avals_in or avals_out else 0
        dtype = avals_in[0].dtype if avals_in else None
        use_host = on_cpu() and prim.host_rule is not None and largest <= host_limit(prim, dtype)
        use_host = use_host and host_rule_exact(prim, (*avals_in, *avals_out))
        if len(_host_plans) >= _HOST_PLANS_SIZE:
            _host_plans.clear()
        plan = _host_plans[key] = (avals_out, use_host)
    return plan


# NumPy's floating-point error state (a context variable) and a quiet value of it: host rules
# run under the user's state (docs/errors.md); `FP_QUIET` is for internals that must not warn.
from mjcore.fp_errors import FP_QUIET, all_ignored, fp_state, rerun_numpy  # noqa: E402, F401

_scalar_hosts: dict[Any, np.ndarray] = {}


def _host_scalar(x: Any, aval: ShapedArray) -> np.ndarray:
    """The read-only 0-d host value of a Python scalar as `aval`'s dtype (cached)."""
    sign = math.copysign(1.0, x.real) if isinstance(x, float | complex) else 0
    key = (type(x), x, aval.dtype, sign)
    value = _scalar_hosts.get(key)
    if value is None:
        if len(_scalar_hosts) >= _SCALAR_CACHE_SIZE:
            _scalar_hosts.clear()
        # under the user's error state: NumPy's 'overflow encountered in cast' for 70001 as
        # float16; such a value is not cached, so that every call warns, as NumPy's does
        value = np.array(x, aval.dtype)
        value.flags.writeable = False
        if not _overflowed(x, value):
            _scalar_hosts[key] = value
    return value


def host_value(x: Any) -> tuple[np.ndarray, ShapedArray]:
    """A read-only host value and the aval of a non-Array eager argument (a Python scalar, or
    a NumPy array, which is copied: it may be written later)."""
    aval = get_aval(x)
    if isinstance(x, Array):  # a subclass
        return x._value(), aval
    if isinstance(x, bool | int | float | complex):
        return _host_scalar(x, aval), aval
    value = np.array(x, aval.dtype)
    value.flags.writeable = False
    return value, aval


def _apply_host(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> list[Any] | None:
    """`prim`'s host rule on the host values of `args`, or None where XLA runs it instead.

    An Array's `_npy`, when set, is read directly: `_value()` (a donation check and a
    read-only check, ~0.4 µs) is needed only to make it, and a donated Array has none.
    """
    n_args = len(args)
    if n_args == 1 and type(args[0]) is Array:  # the commonest cases, unrolled
        (x,) = args
        avals_out, use_host = host_plan(prim, (x.aval,), params)
        if not use_host:
            return None
        vx = x._npy
        vals = [x._value() if vx is None else vx]
    elif n_args == 2 and type(args[0]) is Array and type(args[1]) is Array:
        x, y = args
        avals_out, use_host = host_plan(prim, (x.aval, y.aval), params)
        if not use_host:
            return None
        vx = x._npy
        vy = y._npy
        vals = [x._value() if vx is None else vx, y._value() if vy is None else vy]
    else:
        avals_in = []
        vals = []
        for x in args:
            if type(x) is Array:
                avals_in.append(x.aval)
                vals.append(x)
            else:
                value, aval = host_value(x)
                avals_in.append(aval)
                vals.append(value)
        avals_out, use_host = host_plan(prim, tuple(avals_in), params)
        if not use_host:
            return None
        vals = [x._value() if type(x) is Array else x for x in vals]
    # Under NumPy's current error state, which is the user's (`mjnp.errstate` is NumPy's):
    # NumPy's warnings, or FloatingPointError, exactly where NumPy gives them (docs/errors.md).
    out = prim.host_rule(*vals, **params)  # type: ignore[misc]
    if not prim.multiple_results:
        (aval,) = avals_out
        if type(out) is not np.ndarray:  # NumPy gives scalars for 0-d results
            out = np.asarray(out)
        if out.dtype != aval.dtype:
            return None  # see below
        return [wrap_host(out, aval)]
    results = []
    for r, aval in zip(out, avals_out, strict=True):
        if type(r) is not np.ndarray:
            r = np.asarray(r)
        if r.dtype != aval.dtype:
            # A Python scalar operand promotes as a 0-d array in NumPy (float32 + 2.0 is
            # float64 there) where lax casts the scalar first: XLA computes it as lax does.
            return None
        results.append(wrap_host(r, aval))
    return results


_VIEW_AVALS_SIZE = 4096
_view_avals: dict[tuple[ShapedArray, tuple[int, ...]], ShapedArray] = {}  # bounded
_INDEX_ENTRY_TYPES = frozenset({int, type(None), type(Ellipsis)})
_SLICE_BOUND_TYPES = frozenset({int, type(None)})


def _is_basic_entry(e: Any) -> bool:
    t = type(e)
    if t in _INDEX_ENTRY_TYPES:
        return True
    if t is slice:  # unrolled: a generator over the bounds costs ~0.5 µs
        b = _SLICE_BOUND_TYPES
        return type(e.start) in b and type(e.stop) in b and type(e.step) in b
    return False


def _is_index_array(e: Any) -> bool:
    """An Array or ndarray of integers or bools with at least one axis: an index array of
    NumPy's advanced indexing (0-d ones, which NumPy treats as scalars, take the general
    path)."""
    t = type(e)
    if t is Array:
        aval = e.aval
        return aval.dtype.kind in "biu" and len(aval.shape) > 0
    return t is np.ndarray and e.dtype.kind in "biu" and e.ndim > 0


def _index_value(e: Any) -> Any:
    if type(e) is Array:
        value = e._npy
        return e._value() if value is None else value
    return e


def host_basic_getitem(x: Any, idx: Any) -> Array | None:
    """`x[idx]` for a basic index only (an int, a slice of ints, None, Ellipsis, or a tuple of
    those), checked inline: NumPy's view of the host value, as `host_view` gives it. None for
    any other index, or where `host_view` gives None. `x[1:]` costs ~1 µs over NumPy's."""
    t = type(idx)
    if t is int:
        pass
    elif t is slice:
        b = _SLICE_BOUND_TYPES
        if not (type(idx.start) in b and type(idx.stop) in b and type(idx.step) in b):
            return None
    elif t is tuple:
        b = _SLICE_BOUND_TYPES
        for e in idx:
            te = type(e)
            if te is slice:
                if type(e.start) in b and type(e.stop) in b and type(e.step) in b:
                    continue
            elif te in _INDEX_ENTRY_TYPES:
                continue
            return None
    elif t not in _INDEX_ENTRY_TYPES:
        return None
    return host_view_of(x, "getitem", idx)


def host_getitem(x: Any, idx: Any) -> Array | None:
    """`host_view(x, "getitem", idx)`, with the basic indexes checked inline
    (`host_basic_getitem`)."""
    out = host_basic_getitem(x, idx)
    return host_view(x, "getitem", idx) if out is None else out


def host_view(x: Any, op: str, arg: Any = None) -> Array | None:
    """A view-making method of an eager Array run by NumPy on its host value, the way NumPy
    takes ~0.1-0.3 µs for it: `op` is "T" (`x.T`), "reshape" (`x.reshape(arg)`, a tuple of
    Python ints) or "getitem" (`x[arg]`: Python ints, slices of ints, None, Ellipsis, and index
    arrays of integers or bools, for which NumPy's advanced indexing copies). None where the
    general path must run: another argument, a traced or non-CPU call, or an index or shape
    NumPy rejects (the general path raises mjnp's error).

    The result has `x`'s dtype and weak type, as every view does.
    """
    if op == "getitem":
        t = type(arg)
        if t is slice:
            b = _SLICE_BOUND_TYPES
            if not (type(arg.start) in b and type(arg.stop) in b and type(arg.step) in b):
                return None
        elif t is tuple:
            for e in arg:  # a loop, not all(generator): ~0.3 µs less
                if not _is_basic_entry(e):
                    entries = []
                    for e in arg:
                        if _is_basic_entry(e):
                            entries.append(e)
                        elif _is_index_array(e):
                            entries.append(_index_value(e))
                        else:
                            return None
                    arg = tuple(entries)
                    break
        elif not _is_basic_entry(arg):
            if not _is_index_array(arg):
                return None
            arg = _index_value(arg)
    elif op == "reshape":
        for d in arg:
            if type(d) is not int:
                return None
    return host_view_of(x, op, arg)


_trace_state = core._state


def is_eager_host() -> bool:
    """Whether an operation called now runs eagerly (nothing traced) on the CPU platform,
    where host rules may compute it on NumPy values (`host_plan` says whether one does)."""
    platform = _host_platform  # `on_cpu()` inlined: this is on hot paths
    return _trace_state.eager and (
        (platform[0] if platform else on_cpu()) and not backend.several_devices_in_use
    )


def array_value(x: Array) -> np.ndarray:
    """The read-only host value of Array `x` (for an operation `is_eager_host` runs there): its
    host result as it is, or the zero-copy view of its device buffer."""
    value = x._npy
    return x._value() if value is None else value


def host_view_of(x: Any, op: str, arg: Any) -> Array | None:
    """`host_view` once `arg` is known to be of a kind NumPy takes (any arg for "T")."""
    platform = _host_platform  # `on_cpu()` inlined: a frame is a tenth of `x.T`
    if (
        type(x) is not Array
        or not _trace_state.eager
        or not (platform[0] if platform else on_cpu())
        or backend.several_devices_in_use
    ):
        return None
    value = x._npy
    if value is None:
        value = x._value()
    try:
        if op == "T":
            out = value.T
        elif op == "reshape":
            out = value.reshape(arg)
        else:
            out = value[arg]
    except (IndexError, ValueError, TypeError):
        return None
    return wrap_host_view(out, x.aval)


def new_view_aval(aval: ShapedArray, shape: tuple[int, ...]) -> ShapedArray:
    """The aval of a view of `shape` of an array of `aval`, added to the bounded cache that
    the view paths read inline first (`_view_avals.get((aval, shape)) or new_view_aval(...)`:
    a ShapedArray is always true), so that a hit costs no call."""
    if len(_view_avals) >= _VIEW_AVALS_SIZE:
        _view_avals.clear()
    found = _view_avals[(aval, shape)] = ShapedArray(shape, aval.dtype, aval.weak_type)
    return found


def wrap_host_view(out: Any, aval: ShapedArray) -> Array:
    """An unlinked Array over the host value `out` (a view or a result of NumPy's indexing of
    an array of `aval`): its aval from a bounded cache keyed by (aval, shape)."""
    if type(out) is not np.ndarray:  # a full integer index gives a NumPy scalar
        out = np.asarray(out)
    shape = out.shape
    if shape != aval.shape:
        # (aval, shape) hashes cheaper than ShapedArray's interning key (a dtype): ~0.3 µs
        aval = _view_avals.get((aval, shape)) or new_view_aval(aval, shape)
    a = new_object(Array)  # `wrap_host` inlined
    a._dbuf = None
    a.aval = aval
    a._npy = out
    a._link = a._children = None
    return a


def _apply_impl_rule(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    """A primitive's own Python `impl` rule: it gets Arrays, and what it returns (NumPy arrays,
    scalars) becomes Arrays."""
    arrays = [x if type(x) is Array else device_put(x) for x in args]
    out = prim.impl_rule(*arrays, **params)  # type: ignore[misc]
    outs = list(out) if prim.multiple_results else [out]
    return [x if isinstance(x, Array | core.Tracer) else device_put(x) for x in outs]


core.set_default_impl(apply_primitive)


def devices(backend_name: str | None = None) -> list[Any]:
    """The devices of a platform ('cpu', 'gpu'/'cuda'; None: the default platform) over all
    processes (`mjcore.distributed`), as `jax.devices`.

    Raises:
      RuntimeError: for a platform that is not available.
    """
    return backend.global_devices(backend_name)


# --- device introspection, as JAX's (one process; a client per platform) --------------------


_backend_module = backend  # (the functions below take a parameter named `backend`)


def _check_backend(fname: str, name: Any) -> None:
    if name is None:
        return
    try:
        backend.get_backend(name)
    except RuntimeError as err:
        raise RuntimeError(f"mjcore.{fname}: {str(err).removeprefix('mjcore: ')}") from None


def default_backend() -> str:
    """The platform name of the default backend: 'gpu' (CUDA) or 'cpu', as JAX names them."""
    return str(backend.device().platform)


def default_device(device: Any) -> Any:
    """A context manager under which new arrays (and operations on uncommitted arrays) go to
    `device` (None: the usual default), as `jax.default_device`.

    Raises:
      ValueError: for an object that is not a device of a started platform.
    """
    return backend.default_device(device)


def device_count(backend: str | None = None) -> int:
    """The number of devices, over all processes."""
    _check_backend("device_count", backend)
    return len(devices(backend))


def local_device_count(backend: str | None = None) -> int:
    """The number of devices this process can address."""
    _check_backend("local_device_count", backend)
    return len(_backend_module.devices(backend))


def local_devices(process_index: int | None = None, backend: str | None = None) -> list[Any]:
    """The devices of process `process_index` (default: this one).

    Raises:
      ValueError: for a process index that names no process.
    """
    _check_backend("local_devices", backend)
    if process_index is None:
        return _backend_module.devices(backend)
    count = process_count(backend)
    try:
        index = operator.index(process_index)
    except TypeError:
        index = -1
    if not 0 <= index < count:
        raise ValueError(
            f"mjcore.local_devices: unknown process_index {process_index!r}; the processes "
            f"are 0 to {count - 1}"
        )
    return [d for d in devices(backend) if d.process_index == index]


def process_index(backend: str | None = None) -> int:
    """The index of this process among all processes (0 unless `mjcore.distributed` joined
    it to others)."""
    _check_backend("process_index", backend)
    return _backend_module.get_backend(backend).process_index


def process_count(backend: str | None = None) -> int:
    """The number of processes (1 unless `mjcore.distributed` joined this one to others)."""
    _check_backend("process_count", backend)
    return len({d.process_index for d in devices(backend)})


def current_device() -> Any:
    """The device new arrays go to now (the default device, or `default_device`'s)."""
    return backend.device()


def device_of(x: Array) -> Any:
    """The device holding Array `x` (an Array made of shards: its sharding, as in JAX)."""
    if type(x) is not Array and hasattr(x, "_shards"):  # (mjcore.sharded.ShardedArray)
        return x.sharding
    return backend.buffer_device(x._buf)


def all_devices() -> list[Any]:
    """The devices of every started platform, the default platform's first."""
    return [d for b in backend.backends().values() for d in b.devices]


def dlpack_device(x: Array) -> tuple[int, int]:
    """(DLPack device type, index) of the memory holding Array `x`."""
    return backend.dlpack_device(x._buf)


def to_dlpack(x: Array, stream: int | None = None) -> Any:
    """A DLPack capsule of `x`'s device memory (no copy; callers pass a copy)."""
    return backend.to_dlpack(x._buf, stream)


def device_get(tree: Any) -> Any:
    """Copy every Array leaf of a pytree to the host as a NumPy array."""
    return tree_map(lambda x: np.asarray(x) if isinstance(x, Array) else x, tree)


def block_until_ready(tree: Any) -> Any:
    """Wait until every Array leaf of a pytree is computed; returns the tree."""
    if type(tree) is Array:  # one array, the commonest tree: no flattening
        return tree.block_until_ready()
    for x in tree_leaves(tree):
        if isinstance(x, Array):
            x.block_until_ready()
    return tree
