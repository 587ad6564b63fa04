"""Eager execution of primitives: each one is "jit of one primitive", compiled once per
(primitive, params, input avals), cached, and executed directly on device buffers.
(Autodidax Part 3's `xla_call_impl`, specialised to single primitives.)
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from mjcore import core
from mjcore.array import Array, wrap_buffer
from mjcore.backend import client as backend
from mjcore.backend.lowering import lower_primitive
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.errors import MissingRuleError

# (primitive, input avals, params) -> (program, output avals)
_executables: dict[Any, tuple[backend.Program, list[ShapedArray]]] = {}
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
        # NB: inf without NumPy's 'overflow encountered in cast' warning (where(c, float16_array,
        # 70000)): mjnp does not warn on floating-point errors, and the cache would warn once.
        with np.errstate(over="ignore"):
            host = np.asarray(x, aval.dtype)
        buf = _scalar_buffers[key] = backend.device_put(host)
    return buf


_scalar_arrays: dict[Any, tuple[Any, ShapedArray]] = {}


@backend.clear_at_exit
def _clear_caches() -> None:
    _executables.clear()
    _scalar_buffers.clear()
    _scalar_arrays.clear()


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
        cached = _scalar_arrays[key] = (_scalar_buffer(value, aval), aval)
    return Array(*cached)


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
    (operations with it run on that device)."""
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
                program = backend.Program(text, avals_out, host_callbacks)
                entry = _executables[key] = (program, avals_out)
    return entry


def apply_primitive(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    """Run `prim` eagerly on device buffers; results are device Arrays."""
    if prim.impl_rule is not None:
        return _apply_impl_rule(prim, args, params)
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
    return [wrap_buffer(b, a) for b, a in zip(outs, avals_out, strict=True)]


def _apply_impl_rule(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    """A primitive's own Python `impl` rule: it gets Arrays, and what it returns (NumPy arrays,
    scalars) becomes Arrays."""
    arrays = [x if type(x) is Array else device_put(x) for x in args]
    out = prim.impl_rule(*arrays, **params)  # type: ignore[misc]
    outs = list(out) if prim.multiple_results else [out]
    return [x if isinstance(x, Array | core.Tracer) else device_put(x) for x in outs]


core.set_default_impl(apply_primitive)


def devices(backend_name: str | None = None) -> list[Any]:
    """The devices of a platform ('cpu', 'gpu'/'cuda'; None: the default platform), as
    `jax.devices`.

    Raises:
      RuntimeError: for a platform that is not available.
    """
    return backend.devices(backend_name)


# --- device introspection, as JAX's (one process; a client per platform) --------------------


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
    """The number of devices, over all processes (here: those of this process)."""
    _check_backend("device_count", backend)
    return len(devices(backend))


def local_device_count(backend: str | None = None) -> int:
    """The number of devices this process can address."""
    _check_backend("local_device_count", backend)
    return len(devices(backend))


def local_devices(process_index: int | None = None, backend: str | None = None) -> list[Any]:
    """The devices of process `process_index` (default: this one, the only one).

    Raises:
      ValueError: for a process index other than 0.
    """
    _check_backend("local_devices", backend)
    if process_index not in (None, 0):
        raise ValueError(
            f"mjcore.local_devices: unknown process_index {process_index}; there is one "
            "process, index 0"
        )
    return devices(backend)


def process_index(backend: str | None = None) -> int:
    """The index of this process among all processes: always 0."""
    _check_backend("process_index", backend)
    return 0


def process_count(backend: str | None = None) -> int:
    """The number of processes: always 1 (mjcore is single-process)."""
    _check_backend("process_count", backend)
    return 1


def current_device() -> Any:
    """The device new arrays go to now (the default device, or `default_device`'s)."""
    return backend.device()


def device_of(x: Array) -> Any:
    """The device holding Array `x`."""
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
    from mjcore.tree_util import tree_map

    return tree_map(lambda x: np.asarray(x) if isinstance(x, Array) else x, tree)


def block_until_ready(tree: Any) -> Any:
    """Wait until every Array leaf of a pytree is computed; returns the tree."""
    from mjcore.tree_util import tree_leaves

    for x in tree_leaves(tree):
        if isinstance(x, Array):
            x.block_until_ready()
    return tree
