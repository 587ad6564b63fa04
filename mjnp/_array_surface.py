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

from mjcore import dtypes, lax
from mjcore.array import Array as _Array
from mjcore.array import wrap_host
from mjcore.core import Tracer, get_aval, rebind
from mjcore.dispatch import array_value, host_plan, is_eager_host
from mjcore.dtypes import canonicalize_dtype
from mjcore.eager_fusion import fuse_eagerly
from mjcore.errors import InPlaceUpdateError
from mjcore.fp_errors import FP_RAISE, fp_state
from mjcore.lax.base import convert_element_type_p
from mjnp import (
    _array_bits,
    _devices,
    _indexing,
    _joining,
    _manipulation,
    _matrix_products,
    _protocols,
    _reductions,
    _sorting,
    _statistics,
    _sums_products_differences,
    _views,
)
from mjnp import _elementwise as ew
from mjnp import _indexing_functions as _ixf

ArrayLike = Any
Array = Any

# Operands the operators accept; anything else gets NotImplemented, so that Python can try the
# other operand's reflected method (and `x == None` is False rather than an error).
_OPERAND_TYPES = (_Array, Tracer, np.ndarray, np.generic, bool, int, float, complex, list, tuple)
# The commonest exact types, checked first: a set lookup, not ten subclass checks.
_EXACT_OPERAND_TYPES = frozenset({_Array, float, int, np.ndarray})


def _binary(fun: Callable[[Any, Any], Array]) -> Callable[[Array, Any], Array]:
    def method(self: Array, other: Any) -> Array:
        if type(other) not in _EXACT_OPERAND_TYPES and not isinstance(other, _OPERAND_TYPES):
            return NotImplemented
        return fun(self, other)

    return method


def _reflected(fun: Callable[[Any, Any], Array]) -> Callable[[Array, Any], Array]:
    def method(self: Array, other: Any) -> Array:
        if type(other) not in _EXACT_OPERAND_TYPES and not isinstance(other, _OPERAND_TYPES):
            return NotImplemented
        return fun(other, self)

    return method


def _inplace(fun: Callable[[Any, Any], Array], op: str) -> Callable[[Array, Any], Array]:
    """`x op= y` as NumPy's in-place ufunc call `fun(x, y, out=x)`: the result must keep `x`'s
    shape (no broadcasting of `x`) and cast to `x`'s dtype by 'same_kind'; the handle `x` (and
    every view of it) is rebound to it."""

    def method(self: Array, other: Any) -> Array:
        if not isinstance(other, _OPERAND_TYPES):
            return NotImplemented
        result = fun(self, other)
        aval, r_aval = get_aval(self), get_aval(result)
        if r_aval.shape != aval.shape:
            raise ValueError(
                f"mjnp: x {op}= y: non-broadcastable output operand with shape {aval.shape} "
                f"doesn't match the broadcast shape {r_aval.shape}; write x = x {op} y for a "
                "new array of the broadcast shape"
            )
        if r_aval.dtype != aval.dtype:
            if not np.can_cast(r_aval.dtype, aval.dtype, "same_kind"):
                raise TypeError(
                    f"mjnp: x {op}= y: cannot cast the result from dtype {r_aval.dtype} to x's "
                    f"dtype {aval.dtype} with casting rule 'same_kind'; write x = x {op} y for "
                    f"a new {r_aval.dtype} array"
                )
            result = lax.convert_element_type(result, aval.dtype, aval.weak_type)
        try:
            rebind(self, result)
        except InPlaceUpdateError:
            # A concrete `x` updated with a traced `y` cannot become a tracer: Python rebinds
            # the name `x` to the result instead (other names keep the old value).
            return result
        return self

    return method


def _sort_method(
    self: Array, axis: int = -1, kind: str | None = None, order: None = None, *, stable=None
) -> None:
    """`a.sort()` sorts `a` in place, as `numpy.ndarray.sort`: rebinds the handle."""
    rebind(self, _sorting.sort(self, axis, kind, order, stable=stable))


def _clip_method(self: Array, min: Any = None, max: Any = None, out: Any = None, **kwargs: Any):  # noqa: A002
    """`a.clip(min, max)`, as `numpy.ndarray.clip`: either bound may be left out."""
    return ew.clip(self, min, max, out, **kwargs)


def _partition_method(
    self: Array, kth: Any, axis: int = -1, kind: str = "introselect", order: None = None
) -> None:
    """`a.partition(kth)` in place, as `numpy.ndarray.partition`: rebinds the handle."""
    rebind(self, _sorting.partition(self, kth, axis, kind, order))


def _setflags(self: Array, write: Any = None, align: Any = None, uic: Any = None) -> None:
    """`a.setflags(...)`, as `numpy.ndarray.setflags`: mjnp arrays are always writeable
    (through rebinding), aligned and own no write-back copy, so only those settings are
    accepted."""
    if uic:
        raise ValueError("mjnp setflags: cannot set WRITEBACKIFCOPY flag to True")
    if write is not None and not write:
        raise NotImplementedError(
            "mjnp setflags: mjnp arrays cannot be made read-only (write=False); keep the array "
            "from being written instead, or use a numpy.ndarray"
        )


def _pow(self: Array, other: Any, mod: Any = None) -> Array:
    if mod is not None or not isinstance(other, _OPERAND_TYPES):
        return NotImplemented
    # As ndarray.__pow__: `x ** 2` is `square(x)` (so bool ** 2 is int8, not int64) and
    # `x ** 0.5` is `sqrt(x)` for inexact x (it differs from `power` at -0.0 and -inf).
    if type(other) is int and other == 2:
        return ew.square(self)
    if type(other) is float and other == 0.5 and dtypes.kind(self.dtype) in "fc":
        return ew.sqrt(self)
    return ew.power(self, other)


def _rpow(self: Array, other: Any, mod: Any = None) -> Array:
    if mod is not None or not isinstance(other, _OPERAND_TYPES):
        return NotImplemented
    return ew.power(other, self)


def _round_method(self: Array, ndigits: int | None = None) -> Array:
    return ew.round(self, 0 if ndigits is None else ndigits)


# target dtype -> its conversion, replayed eagerly (`fuse_eagerly`): a bounded table, one entry
# per supported dtype. ~1 µs less than binding the primitive (`x.astype(float32)` is ~3 µs).
_converters: dict[np.dtype, Callable[[Array], Array]] = {}


def _converter(dt: np.dtype) -> Callable[[Array], Array]:
    def astype(x: Array) -> Array:
        return convert_element_type_p.bind1(x, new_dtype=dt, weak_type=False)

    return fuse_eagerly(astype)


# (aval, target dtype) -> the result's aval where the conversion runs eagerly on the host (its
# host rule: NumPy's own cast, with XLA's saturation for floats out of an integer's range),
# else None
_host_casts: dict[tuple[Any, np.dtype], Any] = {}
_HOST_CASTS_SIZE = 1024


def _host_cast(x: Array, dt: np.dtype) -> Array | None:
    """`convert_element_type_p.bind1(x, new_dtype=dt, weak_type=False)` for a strong Array
    `x`, eagerly on CPU, as its host rule computes it (`ndarray.astype` for a float or complex
    target), without the fused runner; None where another path must convert."""
    if not is_eager_host():
        return None
    aval = x.aval
    key = (aval, dt)
    if key in _host_casts:
        out_aval = _host_casts[key]
    else:
        params = {"new_dtype": dt, "weak_type": False}
        avals_out, use_host = host_plan(convert_element_type_p, (aval,), params)
        out_aval = avals_out[0] if use_host else None
        if len(_host_casts) >= _HOST_CASTS_SIZE:
            _host_casts.clear()
        _host_casts[key] = out_aval
    if out_aval is None:
        return None
    value = array_value(x)
    kind = dtypes.kind(dt)
    if kind in "fc" and dtypes.kind(value.dtype) in "biuf":
        return wrap_host(value.astype(dt), out_aval)  # under the user's error state, as NumPy
    if kind == "i" and dt.itemsize >= 4 and value.dtype.kind == "f":
        # Float to int32/int64: NumPy's cast is the rule's result wherever it flags no error.
        # The conversion flags 'invalid' for NaN, infinities and every value whose truncation
        # is out of range (all that the rule saturates, but the range's ends, which it casts
        # alike), so one cast under FP_RAISE replaces the rule's range check (two comparisons
        # and an `all`: ~3 µs of ~5 on float64[40, 60]). On an error the rule runs, as before,
        # and warns or raises under the user's state. (int8/int16 and unsigned targets wrap
        # without a flag: the rule.)
        token = fp_state.set(FP_RAISE)
        try:
            out = value.astype(dt)
        except FloatingPointError:
            out = None
        finally:
            fp_state.reset(token)
        if out is not None:
            return wrap_host(out, out_aval)
    # the primitive's rule: XLA's saturation of floats out of an integer's range
    rule = convert_element_type_p.host_rule
    assert rule is not None  # (convert has a host rule)
    return wrap_host(rule(value, new_dtype=dt, weak_type=False), out_aval)


def _astype_method(
    self: Array,
    dtype: Any,
    order: str = "K",
    casting: dtypes.Casting = "unsafe",
    subok: bool = True,
    copy: bool = True,
) -> Array:
    """`a.astype(dtype)`, as `numpy.ndarray.astype`, with NumPy's casting rules."""
    if casting not in _CASTINGS:
        raise ValueError(
            "mjnp astype: casting must be one of 'no', 'equiv', 'safe', 'same_kind', or "
            f"'unsafe', got {casting!r}"
        )
    if casting != "unsafe":
        target = np.dtype(_dtypes_canonical(dtype))
        if not np.can_cast(self.dtype, target, casting):
            raise TypeError(
                f"mjnp astype: Cannot cast array data from {self.dtype!r} to {target!r} "
                f"according to the rule {casting!r}; pass casting='unsafe' to convert anyway"
            )
    if type(self) is _Array and not self.aval.weak_type:
        # A strong Array to another dtype: what `astype` computes, without its layers.
        dt = canonicalize_dtype(dtype, "mjnp.astype")
        if dt != self.aval.dtype:
            out = _host_cast(self, dt)
            if out is not None:
                return out
            convert = _converters.get(dt)
            if convert is None:
                convert = _converters[dt] = _converter(dt)
            return convert(self)
    return _manipulation.astype(self, dtype, copy=copy)


_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def _dtypes_canonical(dtype: Any) -> Any:
    return dtypes.canonicalize_dtype(dtype, "mjnp astype")


def _flatten_method(self: Array, order: str = "C") -> Array:
    out = _manipulation.ravel(self, order)
    return _manipulation.new_handle(out) if out is self else out  # always a copy, as NumPy's


def _copy_method(self: Array, order: str = "C") -> Array:
    return _manipulation.copy(self, order)


def _compress_method(self: Array, condition: Any, axis: int | None = None, out: None = None):
    return _ixf.compress(condition, self, axis, out)


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
    "__matmul__": _binary(_matrix_products.matmul),
    "__rmatmul__": _reflected(_matrix_products.matmul),
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
    # In-place operators (NumPy's `x op= y` writes into x: a rebinding of the handle here).
    "__iadd__": _inplace(ew.add, "+"),
    "__isub__": _inplace(ew.subtract, "-"),
    "__imul__": _inplace(ew.multiply, "*"),
    "__itruediv__": _inplace(ew.true_divide, "/"),
    "__ifloordiv__": _inplace(ew.floor_divide, "//"),
    "__imod__": _inplace(ew.remainder, "%"),
    "__ipow__": _inplace(ew.power, "**"),
    "__imatmul__": _inplace(_matrix_products.matmul, "@"),
    "__iand__": _inplace(ew.bitwise_and, "&"),
    "__ior__": _inplace(ew.bitwise_or, "|"),
    "__ixor__": _inplace(ew.bitwise_xor, "^"),
    "__ilshift__": _inplace(ew.left_shift, "<<"),
    "__irshift__": _inplace(ew.right_shift, ">>"),
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
    "__getitem__": _views.getitem,
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
    "T": property(_views.transposed),
    "mT": property(_views.matrix_transposed),
    "device": property(_devices.device),
    "real": property(_views.real),
    "imag": property(_views.imag),
    # NumPy's dispatch protocols (mjnp/_protocols.py).
    "__array_ufunc__": _protocols.array_ufunc,
    "__array_function__": _protocols.array_function,
    "__dlpack__": _protocols.dlpack,
    "__dlpack_device__": _protocols.dlpack_device,
    # Methods.
    "__array_namespace__": _array_namespace,
    "to_device": _devices.to_device,
    "astype": _astype_method,
    "reshape": _views.reshape,
    "transpose": _views.transpose,
    "ravel": _views.ravel,
    "flatten": _flatten_method,
    "squeeze": _views.squeeze,
    "swapaxes": _views.swapaxes,
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
    "dot": _matrix_products.dot,
    "round": ew.round,
    "clip": _clip_method,
    "conj": ew.conjugate,
    "conjugate": ew.conjugate,
    "repeat": _joining.repeat,
    "sort": _sort_method,
    "argsort": _sorting.argsort,
    "partition": _partition_method,
    "setflags": _setflags,
    "argpartition": _sorting.argpartition,
    "cumsum": _sums_products_differences.cumsum,
    "cumprod": _sums_products_differences.cumprod,
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
