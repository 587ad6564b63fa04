"""Dtypes and NumPy 2 type promotion (NEP 50); grows from Autodidax part 1's `ShapedArray.dtype`.

Python scalars are *weak*: they contribute only their kind (bool < int < float < complex) to
promotion, so `int8_array + 1` stays int8 and `float32_array + 1.0` stays float32, exactly as in
NumPy 2. mjcore values carry a `weak_type` flag so that an array made from a Python scalar keeps
promoting like one. NumPy itself is the oracle: `tests/test_dtypes.py` checks every pair and
triple of supported dtypes and Python scalars against it.

bfloat16 (ml_dtypes' type, as `jax.numpy.bfloat16`) is supported too. It is not a NumPy dtype
(its `np.dtype.kind` is 'V' and NumPy cannot promote it with float16), so every promotion that
involves it follows JAX's lattice instead: any bool or integer with bfloat16 is bfloat16,
bfloat16 with float16 or float32 is float32, wider floats and complex win, and weak Python
scalars keep bfloat16 (a weak complex gives complex64). Code asking a dtype's kind should use
`kind(dtype)`, which reads 'f' for bfloat16 (`tests/test_bfloat16.py` checks against JAX).
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import ml_dtypes
import numpy as np

DTypeLike: TypeAlias = np.dtype[Any] | type[Any] | str
# NumPy's casting rules (`numpy.can_cast`); NumPy checks a given string at run time.
Casting: TypeAlias = Literal["no", "equiv", "safe", "same_kind", "same_value", "unsafe"]

SUPPORTED_DTYPES: tuple[np.dtype[Any], ...] = tuple(
    np.dtype(name)
    for name in (
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    )
)

# NB: not in SUPPORTED_DTYPES, which are NumPy's own dtypes (NumPy is their promotion oracle).
bfloat16: np.dtype[Any] = np.dtype(ml_dtypes.bfloat16)
ALL_DTYPES: tuple[np.dtype[Any], ...] = (*SUPPORTED_DTYPES, bfloat16)

default_int: np.dtype[Any] = np.dtype("int64")
default_float: np.dtype[Any] = np.dtype("float64")
default_complex: np.dtype[Any] = np.dtype("complex128")
_BOOL: np.dtype[Any] = np.dtype("bool")
_COMPLEX64: np.dtype[Any] = np.dtype("complex64")

# Maps dtypes, NumPy scalar types and Python types to the canonical instance, so the common case
# of `canonicalize_dtype` is one dict lookup. Equal dtypes such as int64 and longlong ('q') hash
# alike, so they hit here too and come back as the canonical object.
_CANONICAL: dict[Any, np.dtype[Any]] = {
    **{dt: dt for dt in ALL_DTYPES},
    **{dt.type: dt for dt in ALL_DTYPES},
    bool: _BOOL,
    int: default_int,
    float: default_float,
    complex: default_complex,
}

# Only these exact types are weak: NumPy 2 treats subclasses (IntEnum, np.float64) as strong.
_WEAK_SCALAR_DTYPES: dict[type, np.dtype[Any]] = {
    bool: _BOOL,
    int: default_int,
    float: default_float,
    complex: default_complex,
}

# Kinds ordered for weak promotion; signed and unsigned integers share a rank.
_KIND_RANK: dict[str, int] = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}
_DEFAULT_FOR_KIND: dict[str, np.dtype[Any]] = {
    "b": _BOOL,
    "i": default_int,
    "u": default_int,
    "f": default_float,
    "c": default_complex,
}

# The kind of every dtype: NumPy's, except 'f' for bfloat16 (whose NumPy kind is 'V').
_KINDS: dict[np.dtype[Any], str] = {**{dt: dt.kind for dt in SUPPORTED_DTYPES}, bfloat16: "f"}


def _bfloat16_promotion(other: np.dtype[Any]) -> np.dtype[Any]:
    # JAX's lattice: bool and integers sit below bfloat16 (through the weak float), float16 and
    # bfloat16 meet at float32, and wider floats and complex are above it.
    if other.kind in "biu" or other == bfloat16:
        return bfloat16
    if other.kind == "f" and other.itemsize <= 4:
        return _CANONICAL[np.dtype("float32")]
    return other


# 196 np.promote_types calls take well under a millisecond and make promotion a dict lookup.
_PROMOTION_TABLE: dict[tuple[np.dtype[Any], np.dtype[Any]], np.dtype[Any]] = {
    **{
        (a, b): _CANONICAL[np.promote_types(a, b)]
        for a in SUPPORTED_DTYPES
        for b in SUPPORTED_DTYPES
    },
    **{(bfloat16, b): _bfloat16_promotion(b) for b in ALL_DTYPES},
    **{(a, bfloat16): _bfloat16_promotion(a) for a in ALL_DTYPES},
}

_INT_BOUNDS: dict[np.dtype[Any], tuple[int, int]] = {
    dt: (
        (-(2 ** (8 * dt.itemsize - 1)), 2 ** (8 * dt.itemsize - 1) - 1)
        if dt.kind == "i"
        else (0, 2 ** (8 * dt.itemsize) - 1)
    )
    for dt in SUPPORTED_DTYPES
    if dt.kind in "iu"
}

_SHORT_NAMES: dict[np.dtype[Any], str] = {
    **{dt: "bool" if dt.kind == "b" else f"{dt.kind}{8 * dt.itemsize}" for dt in SUPPORTED_DTYPES},
    bfloat16: "bf16",
}

_HLO_NAMES: dict[np.dtype[Any], str] = {
    _BOOL: "i1",
    **{dt: f"i{8 * dt.itemsize}" for dt in SUPPORTED_DTYPES if dt.kind == "i"},
    **{dt: f"ui{8 * dt.itemsize}" for dt in SUPPORTED_DTYPES if dt.kind == "u"},
    **{dt: f"f{8 * dt.itemsize}" for dt in SUPPORTED_DTYPES if dt.kind == "f"},
    **{dt: f"complex<f{4 * dt.itemsize}>" for dt in SUPPORTED_DTYPES if dt.kind == "c"},
    bfloat16: "bf16",
}


def canonicalize_dtype(dtype: DTypeLike, fname: str = "mjnp") -> np.dtype[Any]:
    """Return the supported `np.dtype` that `dtype` names.

    Accepts `np.dtype` objects, NumPy scalar types (`np.float32`), the Python types `bool`, `int`,
    `float` and `complex` (bool, int64, float64, complex128) and strings (`'float32'`, `'f4'`).
    Non-native byte orders are accepted and mapped to native.

    Raises:
        TypeError: if `dtype` is not understood or is not in `SUPPORTED_DTYPES` (for example
            object, str, datetime or longdouble). `None` is rejected as well.
    """
    try:
        return _CANONICAL[dtype]
    except (KeyError, TypeError):  # TypeError: unhashable specs such as a list of fields
        pass
    # NB: np.dtype(None) is float64; here None is an error so that "no dtype given" is never
    # silently read as float64. Callers handle their own None defaults.
    if dtype is None:
        raise TypeError(f"{fname}: dtype None is not a data type; pass a dtype such as 'float32'")
    try:
        dt = np.dtype(dtype)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{fname}: data type {dtype!r} not understood") from err
    if not dt.isnative:
        dt = dt.newbyteorder("=")
    try:
        return _CANONICAL[dt]
    except KeyError:
        supported = ", ".join(d.name for d in ALL_DTYPES)
        raise TypeError(
            f"{fname}: dtype {dt!r} (from {dtype!r}) is not supported; use one of {supported}"
        ) from None


def is_python_scalar(x: Any) -> bool:
    """Whether `x` is a weak Python scalar: exactly a `bool`, `int`, `float` or `complex`.

    NumPy scalars such as `np.float32(1)` or `np.float64(1)` (a `float` subclass) are not, and
    neither are other subclasses such as `IntEnum` members: NumPy 2 treats those as strong.
    """
    return type(x) in _WEAK_SCALAR_DTYPES


def python_scalar_dtype(x: Any) -> np.dtype[Any]:
    """The default dtype of a Python `bool`, `int`, `float` or `complex` (subclasses included).

    Raises:
        TypeError: if `x` is not such a scalar, including NumPy scalars.
    """
    dt = _WEAK_SCALAR_DTYPES.get(type(x))
    if dt is not None:
        return dt
    # Subclasses such as IntEnum. bool cannot be subclassed, so the lookup above caught it, and
    # np.float64 and np.complex128 subclass float and complex but are NumPy scalars.
    if not isinstance(x, np.generic):
        for py_type in (int, float, complex):
            if isinstance(x, py_type):
                return _WEAK_SCALAR_DTYPES[py_type]
    raise TypeError(
        f"python_scalar_dtype: expected a Python bool, int, float or complex, got "
        f"{type(x).__name__} {x!r}"
    )


def kind(dtype: DTypeLike) -> str:
    """NumPy's `dtype.kind` ('b', 'i', 'u', 'f', 'c', ...), except 'f' for bfloat16 (NumPy
    says 'V'). Use it wherever a dtype's kind decides what to do. NumPy dtypes mjcore does not
    hold (object, str) give NumPy's kind; other dtype-likes are canonicalized first."""
    try:
        return _KINDS[dtype]  # type: ignore[index]
    except (KeyError, TypeError):
        pass
    if isinstance(dtype, np.dtype):
        return dtype.kind
    return _KINDS[canonicalize_dtype(dtype, "kind")]


def dtype_kind(dtype: DTypeLike) -> str:
    """The kind of a supported dtype: one of 'b', 'i', 'u', 'f', 'c' (see `kind`)."""
    return _KINDS[canonicalize_dtype(dtype, "dtype_kind")]


def finfo(dtype: DTypeLike) -> Any:
    """`np.finfo` of a floating (or complex) dtype; ml_dtypes' for bfloat16, which NumPy's
    `finfo` rejects. (Typed `Any`, as `np.finfo` of a dtype not known statically is.)"""
    if dtype == bfloat16 or dtype is ml_dtypes.bfloat16:
        return ml_dtypes.finfo(bfloat16)
    return np.finfo(dtype)


def is_bool(dtype: DTypeLike) -> bool:
    """Whether `dtype` is bool."""
    return kind(dtype) == "b"


def is_integer(dtype: DTypeLike) -> bool:
    """Whether `dtype` is a signed or unsigned integer (not bool), like `np.integer`."""
    return kind(dtype) in "iu"


def is_unsigned(dtype: DTypeLike) -> bool:
    """Whether `dtype` is an unsigned integer."""
    return kind(dtype) == "u"


def is_floating(dtype: DTypeLike) -> bool:
    """Whether `dtype` is a real floating type (bfloat16 included)."""
    return kind(dtype) == "f"


def is_complex(dtype: DTypeLike) -> bool:
    """Whether `dtype` is a complex floating type."""
    return kind(dtype) == "c"


def is_inexact(dtype: DTypeLike) -> bool:
    """Whether `dtype` is real or complex floating, like `np.inexact` (bfloat16 included)."""
    return kind(dtype) in "fc"


def promote_types(a: DTypeLike, b: DTypeLike) -> np.dtype[Any]:
    """The smallest dtype both strong dtypes `a` and `b` cast to safely, as `np.promote_types`."""
    try:
        return _PROMOTION_TABLE[a, b]  # type: ignore[index]
    except (KeyError, TypeError):
        return _PROMOTION_TABLE[
            canonicalize_dtype(a, "promote_types"), canonicalize_dtype(b, "promote_types")
        ]


def _promote_strong(dts: list[np.dtype[Any]]) -> np.dtype[Any]:
    # np.result_type is not a left fold of promote_types, because mixing signed and unsigned ints
    # is not associative: result_type(int8, uint8, float16) is float16, not float32 as via
    # (int8, uint8) -> int16. NumPy instead promotes each dtype with the "most knowledgeable" one,
    # the highest type number (float16 is numbered last), and combines those results; see
    # PyArray_PromoteDTypeSequence in numpy/_core/src/multiarray/common_dtype.c.
    # With bfloat16 among them (numbered 256, so the main dtype) this is JAX's join: bfloat16
    # absorbs every bool and integer, and the floats above it form a chain.
    if len(dts) <= 2:
        return dts[0] if len(dts) == 1 else _PROMOTION_TABLE[dts[0], dts[1]]
    main = max(dts, key=lambda dt: dt.num)
    result = main
    for dt in dts:
        result = _PROMOTION_TABLE[result, _PROMOTION_TABLE[main, dt]]
    return result


def _weak_common(kind: str, strong: np.dtype[Any]) -> np.dtype[Any]:
    # A weak kind above the strong dtype's kind: NumPy's abstract Python DTypes pick the default
    # dtype of the kind, except that complex keeps a float's precision (there is no complex32,
    # so float16 goes to complex64 too).
    if kind == "c" and _KINDS[strong] == "f" and strong.itemsize <= 4:
        return _COMPLEX64
    return _DEFAULT_FOR_KIND[kind]


def result_type(*args: Any, fname: str = "mjnp") -> tuple[np.dtype[Any], bool]:
    """The dtype and weak flag of combining `args`, following NumPy 2's `np.result_type`.

    Each argument is a Python scalar (weak), a dtype-like (strong), a NumPy array or scalar
    (strong), or any object with a `dtype` and an optional `weak_type` attribute (weak when
    `weak_type` is true), which is how mjcore arrays, tracers and avals take part.

    Strong dtypes promote as in `np.result_type`, which for three or more is not always a chain
    of `promote_types`: (int8, uint8, float16) gives float16. Weak arguments contribute only
    their kind (bool < int < float < complex): if it is no higher than the strong result's kind
    the strong dtype wins, otherwise the result is that kind's default dtype (complex64 for
    float16 and float32 with a weak complex). With no strong argument the result is the default
    dtype of the highest weak kind, and it is weak.

    Returns:
        `(dtype, weak_type)`.

    Raises:
        TypeError: if an argument is neither of the above or has an unsupported dtype.
        ValueError: if no arguments are given, as `np.result_type` does.
    """
    if not args:
        raise ValueError(f"{fname}: at least one array or dtype is required")
    strongs: list[np.dtype[Any]] = []
    weak_rank = -1
    weak_kind = "b"
    for arg in args:
        weak_dt = _WEAK_SCALAR_DTYPES.get(type(arg))
        if weak_dt is None:
            if isinstance(arg, np.dtype | type | str):
                dt = canonicalize_dtype(arg, fname)
            elif hasattr(arg, "dtype"):
                dt = canonicalize_dtype(arg.dtype, fname)
                if getattr(arg, "weak_type", False):
                    weak_dt = dt
            elif isinstance(arg, bool | int | float | complex):
                dt = python_scalar_dtype(arg)  # a subclass such as IntEnum: strong, as in NumPy
            else:
                raise TypeError(
                    f"{fname}: cannot determine a dtype for {type(arg).__name__} {arg!r}; "
                    "expected an array, a Python scalar or a dtype"
                )
        if weak_dt is not None:
            rank = _KIND_RANK[weak_dt.kind]
            if rank > weak_rank:
                weak_rank, weak_kind = rank, weak_dt.kind
        else:
            strongs.append(dt)
    if not strongs:
        return _DEFAULT_FOR_KIND[weak_kind], True
    strong = _promote_strong(strongs)
    if weak_rank <= _KIND_RANK[_KINDS[strong]]:
        return strong, False
    return _weak_common(weak_kind, strong), False


def check_python_int_range(value: int, dtype: DTypeLike, fname: str) -> None:
    """Check that Python int `value` fits integer `dtype`, as NumPy 2 does for weak ints.

    NumPy raises for `np.array([1], np.uint8) + 300` instead of wrapping. Non-integer dtypes
    accept any int (a float32 array plus 2**70 is fine), so they are not checked.

    Raises:
        OverflowError: with NumPy's wording, e.g. "Python integer 300 out of bounds for uint8".
    """
    dt = canonicalize_dtype(dtype, fname)
    bounds = _INT_BOUNDS.get(dt)
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        raise OverflowError(f"{fname}: Python integer {value} out of bounds for {dt.name}")


def coerce_python_scalar(x: Any, dtype: DTypeLike, fname: str) -> np.ndarray:
    """Convert Python scalar `x` to a 0-d NumPy array of `dtype`, as `np.asarray(x, dtype)` does.

    Floats convert to integer dtypes by truncation, as in NumPy. Errors are NumPy's, with `fname`
    added; ints are range-checked first because NumPy words an int64 overflow differently
    ("Python int too large to convert to C long").

    Raises:
        OverflowError: if an int does not fit an integer `dtype`, or an infinite float is
            converted to an integer dtype.
        ValueError: if a NaN is converted to an integer dtype.
        TypeError: if `dtype` is unsupported, or a complex is converted to a real dtype.
    """
    dt = canonicalize_dtype(dtype, fname)
    if type(x) is not bool and isinstance(x, int):
        check_python_int_range(x, dt, fname)
    try:
        return np.asarray(x, dtype=dt)
    except (TypeError, ValueError, OverflowError) as err:
        raise type(err)(f"{fname}: cannot convert {x!r} to {dt.name}: {err}") from err


def short_name(dtype: DTypeLike) -> str:
    """The dtype's name in printed jaxprs, as in JAX: bool, i32, u8, f32, c64 and so on."""
    return _SHORT_NAMES[canonicalize_dtype(dtype, "short_name")]


def hlo_name(dtype: DTypeLike) -> str:
    """The StableHLO element type: i1 for bool, i8, ui8, f32, complex<f32> and so on."""
    return _HLO_NAMES[canonicalize_dtype(dtype, "hlo_name")]
