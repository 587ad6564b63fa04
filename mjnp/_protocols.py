"""NumPy's dispatch protocols on `Array` and tracers: `__array_ufunc__`, `__array_function__`,
`__dlpack__`/`__dlpack_device__`, and `from_dlpack`.

The rule: a ufunc (`numpy.sin(x)`) on an mjnp array or a traced value runs the mjnp ufunc of
the same name. A NumPy *function* (`numpy.sum`, `numpy.atleast_1d`, ...) runs the mjnp
function of the same name only when a traced value (under `jit`, `grad` or `vmap`) is among
its arguments, so NumPy code stays differentiable and jittable; on concrete arrays it is
NumPy's own function on the host values and returns NumPy's result (an ndarray), exactly as
for a `jax.Array`, so foreign code that hands mjnp arrays to NumPy (SciPy's optimizers, whose
compiled code needs ndarrays) works. `out=` with an mjnp destination keeps the mjnp path, which
rebinds it. A ufunc, or a NumPy function given a traced value, that mjnp lacks returns
NotImplemented, which NumPy turns into a TypeError: a traced value never silently falls back
to a host computation.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from mjcore.array import Array as _Array
from mjcore.core import Tracer
from mjcore.dispatch import dlpack_device as _dlpack_device
from mjcore.dispatch import to_dlpack as _to_dlpack
from mjnp._devices import check_device
from mjnp._function_objects import c_function
from mjnp._manipulation import new_handle
from mjnp._out import write_out, write_outs

ArrayLike = Any
Array = Any

# `ufunc.reduce` and `ufunc.accumulate` as mjnp reductions and scans.
_REDUCTIONS = {
    "add": "sum",
    "multiply": "prod",
    "maximum": "max",
    "minimum": "min",
    "fmax": "nanmax",
    "fmin": "nanmin",
    "logical_and": "all",
    "logical_or": "any",
}
_ACCUMULATIONS = {"add": "cumsum", "multiply": "cumprod"}
_UFUNC_KWARGS = frozenset({"out"})
_REDUCE_KWARGS = frozenset({"out", "axis", "dtype", "keepdims", "initial", "where"})


def _mjnp() -> Any:
    return sys.modules["mjnp"]


def _handled(value: Any) -> bool:
    """Operand types the protocols accept: mjnp arrays, tracers, NumPy arrays and scalars."""
    return isinstance(value, _Array | Tracer | np.ndarray | np.generic | int | float | complex)


# exact types `_handled` accepts, tested first
_EXACT_HANDLED = frozenset({_Array, np.ndarray, float, int, complex, np.float64})
# NumPy ufunc -> the mjnp function of its name (bounded: one entry per ufunc)
_ufunc_functions: dict[np.ufunc, Any] = {}


def _with_out(name: str, result: Any, out: tuple[Any, ...] | None) -> Any:
    """`result` written to the `out=` tuple NumPy passes, by the ufunc rules."""
    if out is None:
        return result
    if isinstance(result, tuple):
        return write_outs(name, out, result, "same_kind")
    return write_out(name, out[0], result, "same_kind", broadcast=True)


def array_ufunc(self: Array, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """`numpy.<ufunc>(..., mjnp array, ...)` as the mjnp function of the same name.

    Supports the `__call__`, `reduce`, `accumulate` and `outer` methods and the `out=` keyword
    (which rebinds mjnp outputs in place); anything else returns NotImplemented.
    """
    if method == "__call__" and not kwargs:
        # The commonest call, `ndarray - x` or `numpy.sin(x)`: checked without generators
        # (NumPy's binary operators with an mjnp operand on the right come here).
        for x in inputs:
            if type(x) not in _EXACT_HANDLED and not _handled(x):
                return NotImplemented
        fun = _ufunc_functions.get(ufunc)
        if fun is None:
            fun = getattr(_mjnp(), ufunc.__name__, None)
            if fun is None:
                return NotImplemented
            _ufunc_functions[ufunc] = fun
        return fun(*inputs)
    if not all(_handled(x) for x in inputs):
        return NotImplemented
    out = kwargs.get("out")
    if out is not None and not isinstance(out, tuple):
        out = (out,)
    if out is not None and not all(isinstance(o, _Array | Tracer | np.ndarray) for o in out):
        return NotImplemented
    mjnp = _mjnp()
    name = ufunc.__name__
    if method == "__call__":
        fun = getattr(mjnp, name, None)
        if fun is None or set(kwargs) - _UFUNC_KWARGS:
            return NotImplemented
        return _with_out(name, fun(*inputs), out)
    if method == "outer":
        fun = getattr(mjnp, name, None)
        if fun is None or set(kwargs) - _UFUNC_KWARGS or len(inputs) != 2:
            return NotImplemented
        a, b = (mjnp.asarray(x) for x in inputs)
        a = mjnp.reshape(a, a.shape + (1,) * b.ndim)
        return _with_out(name, fun(a, b), out)
    if method == "reduce":
        fun = getattr(mjnp, _REDUCTIONS.get(name, ""), None)
        if fun is None or set(kwargs) - _REDUCE_KWARGS:
            return NotImplemented
        options = {k: v for k, v in kwargs.items() if k != "out"}
        options.setdefault("axis", 0)
        if name.startswith("logical_"):
            options.pop("dtype", None)
        if name in ("maximum", "minimum", "fmax", "fmin"):
            options.pop("dtype", None)
        return _with_out(name, fun(inputs[0], **options), out)
    if method == "accumulate":
        fun = getattr(mjnp, _ACCUMULATIONS.get(name, ""), None)
        if fun is None or set(kwargs) - {"out", "axis", "dtype"}:
            return NotImplemented
        options = {k: v for k, v in kwargs.items() if k != "out"}
        options.setdefault("axis", 0)
        return _with_out(name, fun(inputs[0], **options), out)
    return NotImplemented


def _mjnp_function(func: Any) -> Any:
    """The mjnp function standing for a NumPy function (same name, same submodule), or None."""
    module = getattr(func, "__module__", "") or ""
    namespace = _mjnp()
    for sub in ("linalg", "fft"):
        if module.startswith(f"numpy.{sub}"):
            namespace = getattr(namespace, sub, None)
            break
    fun = getattr(namespace, getattr(func, "__name__", ""), None)
    return fun if callable(fun) and not isinstance(fun, type) else None


def _to_host(value: Any) -> Any:
    """`value` with every concrete mjnp array in it (in lists, tuples and dicts) replaced by
    its host ndarray."""
    if isinstance(value, _Array):
        return np.asarray(value)
    if isinstance(value, list | tuple) and not hasattr(value, "_fields"):
        return type(value)(_to_host(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_host(v) for k, v in value.items()}
    return value


def array_function(
    self: Array, func: Any, types: tuple[type, ...], args: tuple[Any, ...], kwargs: dict
) -> Any:
    """`numpy.<function>(..., mjnp array, ...)`: with a traced value among the arguments (or an
    mjnp `out=`), the mjnp function of the same name, or NotImplemented (NumPy then raises
    TypeError) when mjnp has none; on concrete arrays only, NumPy's own function on the host
    values (see the module docstring for why)."""
    if not all(issubclass(t, _Array | Tracer | np.ndarray) for t in types):
        return NotImplemented
    if not any(issubclass(t, Tracer) for t in types) and not isinstance(kwargs.get("out"), _Array):
        return func(*_to_host(args), **_to_host(kwargs))
    fun = _mjnp_function(func)
    if fun is None:
        return NotImplemented
    return fun(*args, **kwargs)


# --- DLPack ---------------------------------------------------------------------------------

_DLPACK_CPU = 1


def dlpack(
    self: Array,
    *,
    stream: Any = None,
    max_version: tuple[int, int] | None = None,
    dl_device: Any = None,
    copy: bool | None = None,
) -> Any:
    """A DLPack capsule of the host copy of the array (CPU device), per the 2023.12 protocol:
    a versioned, read-only capsule for a consumer that passes `max_version >= (1, 0)`, else a
    legacy (0.x) capsule.

    NB: the export never shares the device buffer, so no consumer can write to an mjnp array.
    A versioned capsule shares the cached, read-only host copy; a legacy capsule cannot carry
    the read-only flag, so it gets its own writable copy of the host value. `copy=False` is
    accepted for both, since the host value is itself a copy. Traced values raise.

    An array on a GPU exports a capsule of device memory (DLPack device type kDLCUDA) holding
    a copy of it, so the consumer never shares the array's own buffer; `dl_device=(1, 0)`
    asks for the host copy instead.

    Raises:
        BufferError: for a `dl_device` other than the CPU, `(1, 0)`, or the array's own.
    """
    own = dlpack_device(self)
    if dl_device is not None and tuple(dl_device) not in ((_DLPACK_CPU, 0), own):
        raise BufferError(
            f"mjnp: __dlpack__ can only export to the CPU (1, 0) or the array's device {own}, "
            f"got device {dl_device}"
        )
    if own[0] != _DLPACK_CPU and (dl_device is None or tuple(dl_device) == own):
        if copy is False:
            raise BufferError("mjnp: __dlpack__ of a GPU array always copies; use copy=None")
        return _to_dlpack(self.__copy__(), stream)
    host = np.asarray(self)  # raises a tracer conversion error under transformations
    if max_version is None or max_version[0] < 1:
        return np.array(host).__dlpack__(stream=stream)
    return host.__dlpack__(stream=stream, max_version=max_version, copy=copy)


def dlpack_device(self: Array) -> tuple[int, int]:
    """`(kDLCPU, 0)` for a CPU array (exports go through the host copy); `(kDLCUDA, ordinal)`
    for a GPU array."""
    if isinstance(self, _Array):
        return _dlpack_device(self)
    return (_DLPACK_CPU, 0)


@c_function  # as NumPy's builtin: does not bind as a method
def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Array:
    """An mjnp array from any object with `__dlpack__`, as `numpy.from_dlpack` (the data is
    copied to the device). An mjnp array is returned as it is, or as a new array object with
    `copy=True`.

    Raises:
        ValueError: for `copy=False` with a foreign object, since moving its data to the device
            copies it; for an unknown `device`.
        TypeError: for an object without `__dlpack__`.
    """
    check_device("from_dlpack", device)
    if isinstance(x, _Array | Tracer):
        return new_handle(x) if copy else x
    if copy is False:
        raise ValueError(
            "mjnp.from_dlpack: copy=False is impossible for a "
            f"{type(x).__name__}: its data must be copied to the device; use copy=None"
        )
    if not hasattr(x, "__dlpack__"):
        raise TypeError(
            f"mjnp.from_dlpack: expected an object with __dlpack__, got {type(x).__name__}"
        )
    return _mjnp().asarray(np.from_dlpack(x), device=device)
