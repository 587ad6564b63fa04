"""The NumPy face of `mjcore.Array` and of tracers: operators, methods and properties.

`SURFACE` maps each dunder, method and property name to its implementation; `mjnp/__init__.py`
passes it once to `mjcore.core.install_array_surface`, the single hook that installs it on
`Array` and `Tracer` alike, so traced values behave exactly like arrays. Every entry forwards
to the mjnp function of the same meaning, so there is no second implementation to keep in step.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from mjcore import lax
from mjcore.array import Array as _Array
from mjcore.core import Tracer
from mjcore.dispatch import host_getitem, host_view
from mjcore.dtypes import canonicalize_dtype
from mjnp import (
    _array_bits,
    _devices,
    _indexing,
    _joining,
    _linalg,
    _manipulation,
    _protocols,
    _reductions,
    _sorting,
    _statistics,
)
from mjnp import _elementwise as ew
from mjnp import _indexing_functions as _ixf

ArrayLike = Any
Array = Any

# Operands the operators accept; anything else gets NotImplemented, so that Python can try the
# other operand's reflected method (and `x == None` is False rather than an error).
_OPERAND_TYPES = (_Array, Tracer, np.ndarray, np.generic, bool, int, float, complex, list, tuple)


def _binary(fun: Callable[[Any, Any], Array]) -> Callable[[Array, Any], Array]:
    def method(self: Array, other: Any) -> Array:
        if not isinstance(other, _OPERAND_TYPES):
            return NotImplemented
        return fun(self, other)

    return method


def _reflected(fun: Callable[[Any, Any], Array]) -> Callable[[Array, Any], Array]:
    def method(self: Array, other: Any) -> Array:
        if not isinstance(other, _OPERAND_TYPES):
            return NotImplemented
        return fun(other, self)

    return method


def _pow(self: Array, other: Any, mod: Any = None) -> Array:
    if mod is not None or not isinstance(other, _OPERAND_TYPES):
        return NotImplemented
    # As ndarray.__pow__: `x ** 2` is `square(x)` (so bool ** 2 is int8, not int64) and
    # `x ** 0.5` is `sqrt(x)` for inexact x (it differs from `power` at -0.0 and -inf).
    if type(other) is int and other == 2:
        return ew.square(self)
    if type(other) is float and other == 0.5 and self.dtype.kind in "fc":
        return ew.sqrt(self)
    return ew.power(self, other)


def _rpow(self: Array, other: Any, mod: Any = None) -> Array:
    if mod is not None or not isinstance(other, _OPERAND_TYPES):
        return NotImplemented
    return ew.power(other, self)


def _round_method(self: Array, ndigits: int | None = None) -> Array:
    return ew.round(self, 0 if ndigits is None else ndigits)


def _reshape_method(self: Array, *shape: Any, order: str = "C", copy: bool | None = None):
    """`a.reshape(2, 3)` or `a.reshape((2, 3))`, as `numpy.ndarray.reshape`."""
    if len(shape) == 1 and not isinstance(shape[0], int | np.integer):
        shape = shape[0]
    if order == "C" and copy is None and type(shape) is tuple:
        out = host_view(self, "reshape", shape)  # eagerly on CPU, NumPy's view (docs/eager.md)
        if out is not None:
            return out
    return _manipulation.reshape(self, shape, order=order, copy=copy)


def _getitem(self: Array, idx: Any) -> Array:
    """`a[idx]`: a basic index eagerly on CPU is NumPy's view (docs/eager.md)."""
    out = host_getitem(self, idx)
    if out is not None:
        return out
    return _indexing.getitem(self, idx)


def _transpose_property(self: Array) -> Array:
    """`a.T`: eagerly on CPU, NumPy's view (docs/eager.md)."""
    out = host_view(self, "T")
    if out is not None:
        return out
    return _manipulation.transpose(self)


def _transpose_method(self: Array, *axes: Any) -> Array:
    """`a.transpose()`, `a.transpose(1, 0)` or `a.transpose((1, 0))`."""
    if not axes:
        return _manipulation.transpose(self)
    if len(axes) == 1 and not isinstance(axes[0], int | np.integer):
        return _manipulation.transpose(self, axes[0])
    return _manipulation.transpose(self, axes)


def _astype_method(
    self: Array,
    dtype: Any,
    order: str = "K",
    casting: str = "unsafe",
    subok: bool = True,
    copy: bool = True,
) -> Array:
    if casting != "unsafe":
        raise NotImplementedError(
            f"mjnp astype: only casting='unsafe' is supported, got {casting!r}"
        )
    if type(self) is _Array and not self.aval.weak_type:
        # A strong Array to another dtype: what `astype` computes, without its layers.
        dt = canonicalize_dtype(dtype, "mjnp.astype")
        if dt != self.aval.dtype:
            return lax.convert_element_type(self, dt)
    return _manipulation.astype(self, dtype, copy=copy)


def _flatten_method(self: Array, order: str = "C") -> Array:
    return _manipulation.ravel(self, order)


def _copy_method(self: Array, order: str = "C") -> Array:
    return _manipulation.copy(self, order)


def _compress_method(self: Array, condition: Any, axis: int | None = None, out: None = None):
    return _ixf.compress(condition, self, axis, out)


def _matrix_transpose(self: Array) -> Array:
    if self.ndim < 2:
        raise ValueError(f"matrix transpose with ndim < 2 is undefined (shape {self.shape})")
    return _manipulation.swapaxes(self, -1, -2)


def _array_namespace(self: Array, /, *, api_version: str | None = None) -> Any:
    if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12", "2025.12"):
        raise ValueError(f"mjnp: unsupported Array API version {api_version!r}")
    return sys.modules["mjnp"]


SURFACE: dict[str, Any] = {
    # Arithmetic operators and their reflections.
    "__add__": _binary(ew.add),
    "__radd__": _reflected(ew.add),
    "__sub__": _binary(ew.subtract),
    "__rsub__": _reflected(ew.subtract),
    "__mul__": _binary(ew.multiply),
    "__rmul__": _reflected(ew.multiply),
    "__truediv__": _binary(ew.true_divide),
    "__rtruediv__": _reflected(ew.true_divide),
    "__floordiv__": _binary(ew.floor_divide),
    "__rfloordiv__": _reflected(ew.floor_divide),
    "__mod__": _binary(ew.remainder),
    "__rmod__": _reflected(ew.remainder),
    "__divmod__": _binary(ew.divmod),
    "__rdivmod__": _reflected(ew.divmod),
    "__pow__": _pow,
    "__rpow__": _rpow,
    "__matmul__": _binary(_linalg.matmul),
    "__rmatmul__": _reflected(_linalg.matmul),
    # Bit operators.
    "__and__": _binary(ew.bitwise_and),
    "__rand__": _reflected(ew.bitwise_and),
    "__or__": _binary(ew.bitwise_or),
    "__ror__": _reflected(ew.bitwise_or),
    "__xor__": _binary(ew.bitwise_xor),
    "__rxor__": _reflected(ew.bitwise_xor),
    "__lshift__": _binary(ew.left_shift),
    "__rlshift__": _reflected(ew.left_shift),
    "__rshift__": _binary(ew.right_shift),
    "__rrshift__": _reflected(ew.right_shift),
    "__invert__": ew.invert,
    # Unary operators.
    "__neg__": ew.negative,
    "__pos__": ew.positive,
    "__abs__": ew.absolute,
    "__round__": _round_method,
    # Comparisons (reflections are Python's swapped operators).
    "__eq__": _binary(ew.equal),
    "__ne__": _binary(ew.not_equal),
    "__lt__": _binary(ew.less),
    "__le__": _binary(ew.less_equal),
    "__gt__": _binary(ew.greater),
    "__ge__": _binary(ew.greater_equal),
    # Indexing.
    "__getitem__": _getitem,
    "__setitem__": _indexing.setitem,
    "fill": _indexing.fill,
    "at": property(_indexing.at),
    "take": _ixf.take,
    "put": _ixf.put,
    "choose": _ixf.choose,
    "compress": _compress_method,
    "diagonal": _ixf.diagonal,
    "trace": _ixf.trace,
    "nonzero": _ixf.nonzero,
    "searchsorted": _ixf.searchsorted,
    # Properties.
    "T": property(_transpose_property),
    "mT": property(_matrix_transpose),
    "device": property(_devices.device),
    "real": property(ew.real),
    "imag": property(ew.imag),
    # NumPy's dispatch protocols (mjnp/_protocols.py).
    "__array_ufunc__": _protocols.array_ufunc,
    "__array_function__": _protocols.array_function,
    "__dlpack__": _protocols.dlpack,
    "__dlpack_device__": _protocols.dlpack_device,
    # Methods.
    "__array_namespace__": _array_namespace,
    "to_device": _devices.to_device,
    "astype": _astype_method,
    "reshape": _reshape_method,
    "transpose": _transpose_method,
    "ravel": _manipulation.ravel,
    "flatten": _flatten_method,
    "squeeze": _manipulation.squeeze,
    "swapaxes": _manipulation.swapaxes,
    "copy": _copy_method,
    "sum": _reductions.sum,
    "prod": _reductions.prod,
    "mean": _reductions.mean,
    "max": _reductions.max,
    "min": _reductions.min,
    "argmax": _reductions.argmax,
    "argmin": _reductions.argmin,
    "all": _reductions.all,
    "any": _reductions.any,
    "dot": _linalg.dot,
    "round": ew.round,
    "clip": ew.clip,
    "conj": ew.conjugate,
    "conjugate": ew.conjugate,
    "repeat": _joining.repeat,
    # NB: `sort` and `partition` return the result (arrays are immutable); NumPy's sort in place.
    "sort": _sorting.sort,
    "argsort": _sorting.argsort,
    "partition": _sorting.partition,
    "argpartition": _sorting.argpartition,
    "cumsum": _statistics.cumsum,
    "cumprod": _statistics.cumprod,
    "var": _statistics.var,
    "std": _statistics.std,
    "ptp": _statistics.ptp,
    # Bits, bytes and memory layout (mjnp/_array_bits.py).
    "view": _array_bits.view,
    "byteswap": _array_bits.byteswap,
    "flat": _array_bits.flat,
    "resize": _array_bits.resize,
    "tobytes": _array_bits.tobytes,
    "tofile": _array_bits.tofile,
    "dump": _array_bits.dump,
    "dumps": _array_bits.dumps,
    "strides": _array_bits.strides,
    "flags": _array_bits.flags,
    "base": _array_bits.base,
}
