"""Data types: the NumPy scalar types as dtype names, type promotion queries and constants, and
`ndarray`, NumPy's name for the array type (for isinstance: arrays and traced values).

The dtype objects are NumPy's own (`mjnp.float32 is numpy.float32`), so they work wherever NumPy
expects a dtype and compare equal to NumPy dtypes. Promotion follows NumPy 2 (NEP 50) through
`mjcore.dtypes.result_type`, which also understands mjnp's weak (Python-scalar) arrays.

`bfloat16` is ml_dtypes' type, as `jax.numpy.bfloat16`. NumPy does not know it as a floating
type, so `finfo`, `issubdtype` and `isdtype` answer for it as JAX's do (a real floating type,
ml_dtypes' machine limits), and every promotion that involves it is JAX's (docs/jax_api.md).
"""

from __future__ import annotations

import builtins
import math
from types import MappingProxyType
from typing import Any, Literal, cast

import ml_dtypes
import numpy as np

from mjcore import dtypes
from mjcore.array import Array
from mjcore.core import Tracer
from mjcore.dtypes import DTypeLike
from mjnp._creation import asarray, empty
from mjnp._function_objects import c_function
from mjnp._promotion import asarray_arg

ArrayLike = Any

# NB: the scalar types are NumPy's, so `mjnp.float32(3)` is a NumPy scalar, not an mjnp Array.
bool_ = np.bool_
bool = np.bool_  # noqa: A001  (NumPy 2's and the Array API's name)
int8 = np.int8
int16 = np.int16
int32 = np.int32
int64 = np.int64
uint8 = np.uint8
uint16 = np.uint16
uint32 = np.uint32
uint64 = np.uint64
float16 = np.float16
float32 = np.float32
float64 = np.float64
complex64 = np.complex64
complex128 = np.complex128
bfloat16 = ml_dtypes.bfloat16  # not NumPy's: JAX's name for ml_dtypes' type
int_ = np.int_
intp = np.intp
uint = np.uint
uintp = np.uintp
half = np.half
single = np.single
double = np.double
csingle = np.csingle
cdouble = np.cdouble
# The C-named aliases. NB: `longlong` and `ulonglong` are NumPy's distinct types of the same
# width as int64/uint64; mjnp arrays of them report the canonical dtype ('l', not 'q').
byte = np.byte
short = np.short
intc = np.intc
long = np.long
longlong = np.longlong
ubyte = np.ubyte
ushort = np.ushort
uintc = np.uintc
ulong = np.ulong
ulonglong = np.ulonglong
True_ = np.True_
False_ = np.False_

# NB: XLA has no 80-bit or 128-bit float, so mjnp holds no longdouble arrays: a longdouble dtype
# (`longdouble`, `clongdouble`, 'g', 'G') given to an mjnp function is refused with TypeError,
# rather than aliased to float64, which would pass dtype checks while silently losing the
# precision the name promises. The names are NumPy's scalar types, as `float64` is, so code that
# compares or inspects types (`dtype is np.longdouble`, `np.finfo(np.longdouble)`) still runs.
# NumPy's suite lists the tests that compute in longdouble as xfails
# (conformance/numpy_suite_xfails.txt).
longdouble = np.longdouble
clongdouble = np.clongdouble
# NB: NumPy's tables restricted to the dtypes mjnp holds on the device (no longdouble, object,
# str/bytes/datetime entries). `typecodes` is read-only (a mapping proxy, where NumPy's is a dict).
typecodes = MappingProxyType(
    {
        kind: "".join(c for c in codes if np.dtype(c) in dtypes.SUPPORTED_DTYPES)
        for kind, codes in cast("dict[str, str]", np.typecodes).items()
    }
)
ScalarType = (int, float, complex, builtins.bool) + tuple(
    t for t in np.ScalarType if issubclass(t, np.generic) and np.dtype(t) in dtypes.SUPPORTED_DTYPES
)
little_endian = np.little_endian


class _ArrayTypeMeta(type):
    # Traced values must pass `isinstance(x, mjnp.ndarray)` as concrete arrays do (as with
    # `jax.Array`), or user code that checks would change behaviour under `jit`.
    def __instancecheck__(cls, obj: object) -> builtins.bool:
        return isinstance(obj, Array | Tracer)

    def __subclasscheck__(cls, sub: type) -> builtins.bool:
        return issubclass(sub, Array | Tracer)


class ndarray(metaclass=_ArrayTypeMeta):
    """The mjnp array type, for `isinstance` checks and annotations: concrete arrays (mjcore's
    `Array`) and the values `jit`, `grad` and `vmap` trace are all instances.

    Calling it is `numpy.ndarray`'s low-level constructor, returning an mjnp array: without
    `buffer` it is `mjnp.empty(shape, dtype, order)`; with one, the array NumPy would view on
    the buffer (`offset`, `strides`, `order` as NumPy's), copied. NB: the result never aliases
    the buffer (mjnp arrays are immutable values), and is not an instance of a subclass.
    """

    def __new__(
        cls,
        shape: Any,
        dtype: Any = float,
        buffer: Any = None,
        offset: int = 0,
        strides: Any = None,
        order: Literal["K", "A", "C", "F"] | None = None,
    ) -> Any:
        if buffer is None and strides is None and offset == 0:
            return empty(shape, dtype, "C" if order is None else order)
        host = np.ndarray(shape, dtype, buffer, offset, strides, order)
        return asarray(host.copy())


# The abstract scalar types, for `issubdtype(x.dtype, mjnp.floating)`.
generic = np.generic
number = np.number
integer = np.integer
signedinteger = np.signedinteger
unsignedinteger = np.unsignedinteger
inexact = np.inexact
floating = np.floating
complexfloating = np.complexfloating

dtype = np.dtype
# NumPy's DType classes (`dtypes.Float64DType`, ...): `mjnp.dtype(...)` is NumPy's dtype, so its
# class is one of these.
dtype_classes = np.dtypes
iinfo = np.iinfo  # NB: rejects bfloat16 with NumPy's ValueError, as JAX's does


def _is_bfloat16(x: Any) -> builtins.bool:
    """Whether dtype-like `x` (a dtype, a scalar type or a name) or an array's dtype is
    bfloat16; False for anything that is not a dtype at all."""
    if x is bfloat16:
        return True
    if isinstance(x, str | np.dtype) or hasattr(x, "dtype"):
        try:
            return np.dtype(getattr(x, "dtype", x)) == dtypes.bfloat16
        except TypeError:
            return False
    return False


def finfo(dtype: Any) -> np.finfo:
    """Machine limits of a floating type, as `numpy.finfo`; bfloat16's are ml_dtypes' (as
    `jax.numpy.finfo`)."""
    if _is_bfloat16(dtype):
        return ml_dtypes.finfo(bfloat16)
    return np.finfo(dtype)


# The abstract types bfloat16 is a subtype of in JAX (NumPy sees it as a bare `generic`).
_BFLOAT16_SUPERTYPES = (np.floating, np.inexact, np.number, np.generic)


def issubdtype(arg1: Any, arg2: Any) -> builtins.bool:
    """Whether `arg1` is a subtype of `arg2` in NumPy's hierarchy, as `numpy.issubdtype`; as in
    JAX, bfloat16 is a floating type (`issubdtype(bfloat16, floating)` is True)."""
    if _is_bfloat16(arg1):
        return _is_bfloat16(arg2) or arg2 in _BFLOAT16_SUPERTYPES
    if _is_bfloat16(arg2):
        return False
    return np.issubdtype(arg1, arg2)


def isdtype(dtype: Any, kind: Any) -> builtins.bool:
    """Whether `dtype` is of `kind` (a dtype, a kind name or a tuple of them), as
    `numpy.isdtype`; as in JAX, bfloat16 is 'real floating' and 'numeric'."""
    if not _is_bfloat16(dtype):
        if isinstance(kind, tuple):  # NumPy checks every other entry
            return np.isdtype(dtype, tuple(k for k in kind if not _is_bfloat16(k)))
        return not _is_bfloat16(kind) and np.isdtype(dtype, kind)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _ISDTYPE_KINDS:
                raise ValueError(f"mjnp.isdtype: kind argument {k!r} is not a known kind name")
            if k in ("real floating", "numeric"):
                return True
        elif _is_bfloat16(k):
            return True
        elif not isinstance(k, np.dtype | type):
            raise TypeError(
                f"mjnp.isdtype: kind argument must be a dtype, a kind name or a tuple of them, "
                f"got {type(k).__name__}"
            )
    return False


_ISDTYPE_KINDS = frozenset(
    ("bool", "signed integer", "unsigned integer", "integral", "real floating",
     "complex floating", "numeric")
)  # fmt: skip

pi = math.pi
e = math.e
euler_gamma = float(np.euler_gamma)
inf = math.inf
nan = math.nan
newaxis = None


def _dtype_or_array(fname: str, x: Any) -> Any:
    """A dtype-like argument as it is; anything else as an array (for its dtype and weakness)."""
    if isinstance(x, np.dtype | type | str) or dtypes.is_python_scalar(x):
        return x
    return asarray_arg(fname, x)


def result_type(*arrays_and_dtypes: ArrayLike | DTypeLike) -> np.dtype:
    """The dtype of combining the arguments, as `numpy.result_type` (NumPy 2, NEP 50).

    Python scalars and weak mjnp arrays contribute only their kind: `result_type(int8, 1)` is
    int8 and `result_type(float32, 1.0)` is float32.

    Raises:
        ValueError: with no arguments.
        TypeError: for unsupported dtypes or values that are neither arrays nor dtypes.
    """
    args = [_dtype_or_array("result_type", x) for x in arrays_and_dtypes]
    return dtypes.result_type(*args, fname="mjnp.result_type")[0]


@c_function  # as NumPy's builtin: does not bind as a method
def promote_types(type1: DTypeLike, type2: DTypeLike) -> np.dtype:
    """The smallest dtype both dtypes cast to safely, as `numpy.promote_types`."""
    out = dtypes.promote_types(
        dtypes.canonicalize_dtype(type1, "mjnp.promote_types"),
        dtypes.canonicalize_dtype(type2, "mjnp.promote_types"),
    )
    # As NumPy: a (native) dtype promoted with itself keeps its metadata.
    if (
        isinstance(type1, np.dtype)
        and type1.metadata is not None
        and isinstance(type2, np.dtype)
        and type1 == type2 == out
        and type1.metadata == type2.metadata
        and type1.isnative
    ):
        return type1
    return out


def can_cast(
    from_: ArrayLike | DTypeLike, to: DTypeLike, casting: dtypes.Casting = "safe"
) -> builtins.bool:  # (`bool` is np.bool_ in this module)
    """Whether a cast can happen under the `casting` rule, as `numpy.can_cast`.

    `from_` is a dtype or an array; as in NumPy 2, Python scalars are not accepted.
    """
    if hasattr(from_, "dtype") and not isinstance(from_, type):
        from_ = from_.dtype
    return np.can_cast(from_, to, casting)
