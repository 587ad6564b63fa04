"""Turning mjnp arguments into arrays of one dtype, by NumPy 2's rules (NEP 50).

Every mjnp function starts here: `asarray_arg` accepts what NumPy accepts as an array (mjnp
Arrays, tracers, NumPy arrays and scalars, Python scalars, nested lists and tuples) and
`promote_args` brings several such arguments to their common dtype. Python scalars are *weak*:
they take the dtype of the arrays they meet (`uint8_array + 3` stays uint8) and must fit it
(`uint8_array + 300` raises OverflowError, as in NumPy). The promotion rule itself lives in
`mjcore.dtypes.result_type`; this module applies it to values.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from mjcore import dtypes, lax
from mjcore.array import Array
from mjcore.core import Tracer
from mjcore.dispatch import device_put, scalar_array
from mjcore.dtypes import Casting
from mjcore.fp_errors import quiet_unless_eager
from mjcore.random_keys import KeyArray

ArrayLike = Any

_BOOL = np.dtype(bool)
_INT8 = np.dtype("int8")
_FLOAT16 = np.dtype("float16")
_FLOAT32 = np.dtype("float32")
_FLOAT64 = np.dtype("float64")

_PYTHON_SCALARS = (bool, int, float, complex)

# The smallest float dtype each integer (or bool) dtype casts to safely: the loop NumPy picks for
# a ufunc that only has floating loops (`np.sin(int8_array)` is float16).
_SMALLEST_SAFE_FLOAT: dict[np.dtype, np.dtype] = {
    np.dtype(name): dt
    for names, dt in (
        (("bool", "int8", "uint8"), _FLOAT16),
        (("int16", "uint16"), _FLOAT32),
        (("int32", "uint32", "int64", "uint64"), _FLOAT64),
    )
    for name in names
}


def is_arraylike(x: Any) -> bool:
    """Whether mjnp accepts `x` as an array: the types `asarray_arg` converts.

    Strings, bytes, None and arbitrary objects are not array-like, even though NumPy would wrap
    some of them in object or string arrays.
    """
    return (
        isinstance(x, Array | Tracer | np.ndarray | np.generic | list | tuple)
        or isinstance(x, _PYTHON_SCALARS)
        or (hasattr(x, "__array__") and not isinstance(x, str | bytes | KeyArray))
    )


def check_arraylike(fname: str, *args: Any) -> None:
    """Raise a TypeError naming `fname` if some argument is not array-like.

    Raises:
        TypeError: e.g. `mjnp.add: argument 1 of type str is not an array: 'a'`.
    """
    for i, x in enumerate(args):
        if not is_arraylike(x):
            raise _not_arraylike(fname, i, x)


def _not_arraylike(fname: str, i: int, x: Any) -> TypeError:
    return TypeError(
        f"mjnp.{fname}: argument {i} of type {type(x).__name__} is not an array: {x!r:.80}; "
        "expected an mjnp or NumPy array, a Python or NumPy scalar or a (nested) list of those"
    )


def asarray_arg(fname: str, x: ArrayLike) -> Any:
    """`x` as an mjnp Array or tracer, without changing its dtype.

    Arrays and tracers are returned as they are. Python scalars become weak 0-d arrays of their
    default dtype (bool, int64, float64, complex128); everything else converts as in
    `numpy.asarray`, and must have a supported dtype.

    Raises:
        TypeError: for values that are not arrays (strings, None, objects) and unsupported
            dtypes (object, str, datetime, longdouble).
        OverflowError: for a Python int outside int64.
        ValueError: for ragged nested sequences.
    """
    if isinstance(x, Array | Tracer):
        return x
    if type(x) in _PYTHON_SCALARS:
        dtype = dtypes.python_scalar_dtype(x)
        if type(x) is int:
            dtypes.check_python_int_range(x, dtype, f"mjnp.{fname}")
        return scalar_array(x, dtype, weak_type=True)
    check_arraylike(fname, x)
    if isinstance(x, list | tuple) and _contains_traced(x):
        return _stack_nested(fname, x)
    return _from_numpy(fname, x)


def _from_numpy(fname: str, x: Any) -> Array:
    """A device Array of the value NumPy makes of `x` (a strong dtype, as in `np.asarray`)."""
    try:
        value = np.asarray(x)
    except OverflowError as err:
        raise OverflowError(f"mjnp.{fname}: {err}") from err
    except ValueError as err:
        raise ValueError(f"mjnp.{fname}: cannot make an array of {x!r:.80}: {err}") from err
    if value.dtype == object and isinstance(x, list | tuple) and _has_big_int(x):
        raise OverflowError(f"mjnp.{fname}: Python integer out of bounds for int64 in {x!r:.80}")
    dtypes.canonicalize_dtype(value.dtype, f"mjnp.{fname}")  # TypeError for unsupported dtypes
    return device_put(value)


def _has_big_int(seq: list | tuple) -> bool:
    return any(
        _has_big_int(v) if isinstance(v, list | tuple) else type(v) is int and v.bit_length() > 63
        for v in seq
    )


def _contains_traced(seq: list | tuple) -> bool:
    return any(
        isinstance(v, Tracer) or (isinstance(v, list | tuple) and _contains_traced(v)) for v in seq
    )


def _stack_nested(fname: str, seq: list | tuple) -> Any:
    """A nested sequence holding tracers, stacked with `lax.concatenate`.

    Python scalars in the sequence count as strong arrays of their default dtype, as in NumPy's
    array coercion (`np.array([np.float32(1), 2.0])` is float64).
    """
    nested = _map_nested(fname, seq)
    shape = _nested_shape(fname, nested)
    leaves = _flatten_nested(nested)
    if not leaves:
        return _from_numpy(fname, seq)
    dtype, _ = dtypes.result_type(*leaves, fname=f"mjnp.{fname}")
    flat = lax.concatenate(
        [lax.expand_dims(lax.convert_element_type(v, dtype), (0,)) for v in leaves], 0
    )
    return lax.reshape(flat, shape)


def _map_nested(fname: str, seq: Any) -> Any:
    """The nested sequence as nested lists of arrays (Python scalars as strong arrays)."""
    if isinstance(seq, list | tuple):
        return [_map_nested(fname, v) for v in seq]
    return _from_numpy(fname, seq) if type(seq) in _PYTHON_SCALARS else asarray_arg(fname, seq)


def _flatten_nested(nested: Any) -> list[Any]:
    if isinstance(nested, list):
        return [leaf for v in nested for leaf in _flatten_nested(v)]
    return [nested]


def _nested_shape(fname: str, nested: Any) -> tuple[int, ...]:
    """The shape of nested lists of arrays (ValueError if ragged)."""
    if not isinstance(nested, list):
        return tuple(nested.shape)
    shapes = {_nested_shape(fname, v) for v in nested}
    if len(shapes) > 1:
        raise ValueError(
            f"mjnp.{fname}: setting an array element with a sequence; the nested sequence has an "
            f"inhomogeneous shape (parts of shapes {sorted(shapes)})"
        )
    return (len(nested), *(shapes.pop() if shapes else ()))


# --- promotion ------------------------------------------------------------------------------


def _arrays_and_dtype(fname: str, args: tuple[Any, ...]) -> tuple[list[Any], np.dtype, bool]:
    """Arguments as arrays (Python scalars kept as they are) and their NumPy 2 result type."""
    vals = []
    for i, x in enumerate(args):
        if type(x) in _PYTHON_SCALARS or isinstance(x, Array | Tracer):
            vals.append(x)
        elif is_arraylike(x):
            vals.append(asarray_arg(fname, x))
        else:
            raise _not_arraylike(fname, i, x)
    dtype, weak = dtypes.result_type(*vals, fname=f"mjnp.{fname}")
    # Python scalars alone give a strong result, as NumPy's `np.add(1, 2)` is a strong int64;
    # only weak arrays (from transformations of Python scalars) keep the weak type, as in JAX.
    weak = weak and any(type(x) not in _PYTHON_SCALARS for x in vals)
    return vals, dtype, weak


def _common_dtype(args: tuple[Any, ...]) -> np.dtype | None:
    """The dtype shared by arrays of one dtype and weak type, else None (the eager fast path:
    such arguments need no promotion at all)."""
    first = args[0]
    if type(first) is not Array and not isinstance(first, Tracer):
        return None
    aval = first.aval
    dtype, weak = aval.dtype, aval.weak_type
    for x in args[1:]:
        if type(x) is not Array and not isinstance(x, Tracer):
            return None
        a = x.aval
        if a.dtype != dtype or a.weak_type != weak:
            return None
    return dtype


_KIND_RANK = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}
_SCALAR_RANK = {bool: 0, int: 1, float: 2, complex: 3}


def _array_and_scalar(fname: str, args: tuple[Any, ...]) -> list[Any] | None:
    """Fast path for `array op python_scalar` when the array's dtype wins (NEP 50), else None."""
    if len(args) != 2:
        return None
    a, b = args
    swapped = False
    if type(a) in _PYTHON_SCALARS:
        a, b, swapped = b, a, True
    if type(b) not in _PYTHON_SCALARS or (type(a) is not Array and not isinstance(a, Tracer)):
        return None
    aval = a.aval
    if _SCALAR_RANK[type(b)] > _KIND_RANK[dtypes.kind(aval.dtype)]:
        return None
    if type(b) is int:
        dtypes.check_python_int_range(b, aval.dtype, f"mjnp.{fname}")
    c = scalar_array(b, aval.dtype, aval.weak_type)
    return [c, a] if swapped else [a, c]


def _convert_all(fname: str, vals: list[Any], dtype: np.dtype, weak: bool) -> list[Any]:
    out = []
    for x in vals:
        if type(x) in _PYTHON_SCALARS:
            if type(x) is int:
                dtypes.check_python_int_range(x, dtype, f"mjnp.{fname}")
            out.append(scalar_array(x, dtype, weak))
        elif x.dtype != dtype:
            out.append(lax.convert_element_type(x, dtype, weak_type=weak))
        else:
            out.append(x)
    return out


def promote_args(fname: str, *args: ArrayLike) -> list[Any]:
    """`args` as arrays of their common dtype under NumPy 2 promotion (NEP 50).

    Python scalars are weak: they contribute only their kind and become arrays of the result
    dtype. The results are weak (weak-typed arrays, promoting like Python scalars) only when
    every argument is weak and at least one is a weak array, as made by transforming a
    function at Python scalars; Python scalars alone give strong arrays, as in NumPy.

    Raises:
        TypeError: for arguments that are not arrays.
        OverflowError: for a Python int that does not fit the integer result dtype, e.g.
            `promote_args("add", uint8_array, 300)`, as NumPy raises.
    """
    if _common_dtype(args) is not None:
        return list(args)
    fast = _array_and_scalar(fname, args)
    if fast is not None:
        return fast
    vals, dtype, weak = _arrays_and_dtype(fname, args)
    return _convert_all(fname, vals, dtype, weak)


def promote_args_wrapping(fname: str, *args: ArrayLike) -> list[Any]:
    """`promote_args`, except that a Python int out of range of the integer result dtype wraps.

    This is NumPy's `where` (and `choose`): it makes each Python int an int64 array (uint64
    from 2**63 on) marked weak, so the int does not change the result dtype, then casts it
    unsafely: `np.where(c, uint8_array, 300)` is uint8 with 44 where `c` is False.

    Raises:
        OverflowError: for a Python int outside both int64 and uint64, as NumPy raises.
    """
    if not any(type(x) is int for x in args):
        return promote_args(fname, *args)
    vals, dtype, weak = _arrays_and_dtype(fname, args)
    if dtype.kind in "iu":
        vals = [_wrapped_int(fname, x, dtype) if type(x) is int else x for x in vals]
    return _convert_all(fname, vals, dtype, weak)


def _wrapped_int(fname: str, value: int, dtype: np.dtype) -> int:
    """Python int `value` as NumPy casts `np.asarray(value)` (int64 or uint64) to `dtype`."""
    if not -(2**63) <= value < 2**64:
        raise OverflowError(
            f"mjnp.{fname}: Python integer {value} out of bounds for int64 and uint64"
        )
    return int(np.asarray(value).astype(dtype))


def promote_args_inexact(fname: str, *args: ArrayLike) -> list[Any]:
    """`promote_args`, then bool and integer results go to float64.

    This is NumPy's `true_divide` rule (int8 / int8 is float64) and the rule of `mean`;
    float16 / int8 stays float16.
    """
    common = _common_dtype(args)
    if common is not None and dtypes.kind(common) in "fc":
        return list(args)
    vals, dtype, weak = _arrays_and_dtype(fname, args)
    if dtype.kind in "biu":
        dtype = _FLOAT64
    return _convert_all(fname, vals, dtype, weak)


def _float_loop_dtype(args: tuple[Any, ...], dtype: np.dtype) -> np.dtype:
    if dtype.kind not in "biu":
        return dtype
    floats = [
        _SMALLEST_SAFE_FLOAT[dtype]
        if type(x) in _PYTHON_SCALARS or getattr(x, "weak_type", False)
        else _SMALLEST_SAFE_FLOAT[x.dtype]
        for x in args
    ]
    return dtypes.result_type(*floats)[0]


def promote_args_float(fname: str, *args: ArrayLike) -> list[Any]:
    """`args` in the result dtype of a NumPy ufunc with only floating (and complex) loops.

    NumPy picks the first loop every input casts to safely, so bool, int8 and uint8 go to
    float16, int16 and uint16 to float32 and wider integers to float64: `np.sin(int8_array)` is
    float16 and `np.arctan2(int8_array, uint8_array)` is float16 (not float32 via int16). A
    Python int takes the integer dtype it promotes to (`np.arctan2(bool_array, 1)` is float64).
    """
    common = _common_dtype(args)
    if common is not None and dtypes.kind(common) in "fc":
        return list(args)
    vals, dtype, weak = _arrays_and_dtype(fname, args)
    return _convert_all(fname, vals, _float_loop_dtype(tuple(vals), dtype), weak)


def promote_args_numeric(fname: str, *args: ArrayLike) -> list[Any]:
    """`promote_args`, then a bool result goes to int8.

    For NumPy ufuncs with integer but no boolean loops (power, floor_divide, remainder, square,
    left_shift, ...): `bool_array ** bool_array` is int8.
    """
    common = _common_dtype(args)
    if common is not None and common != _BOOL:  # one dtype already: nothing to promote
        return list(args)
    vals, dtype, weak = _arrays_and_dtype(fname, args)
    if dtype == _BOOL:
        dtype = _INT8
    return _convert_all(fname, vals, dtype, weak)


# --- writing a Python scalar into an array of a given dtype ---------------------------------


def cast_python_scalar(fname: str, value: Any, dtype: np.dtype, casting: Casting) -> np.ndarray:
    """Python scalar `value` as a 0-d NumPy array of `dtype`, converted as NumPy's `copyto`
    converts it under `casting` (and so `full`, `full_like` and `ndarray.fill`, with 'unsafe').

    An int, float or complex is weak (NEP 50): it first becomes the dtype promotion gives it
    against `dtype` (`dtype` itself for an int into an integer dtype, float64 for a float into
    one, int64 for an int into bool), and must fit that dtype, whatever `casting` says; then that
    dtype casts to `dtype` under `casting`, with NumPy's own result for an unsafe cast
    (`full(3, 300.0, dtype=uint8)` is 44 on the host as in NumPy). A bool is a strong bool.

    Raises:
        OverflowError: for an int out of range of the promoted integer dtype (300 into uint8,
            2**70 into int64), as NumPy raises even under casting='unsafe'.
        TypeError: when the cast is not allowed under `casting` (a float into uint8 under
            'same_kind', an int into bool), and for any conversion under casting='equiv'.
    """
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError(
            f"mjnp.{fname}: casting must be one of 'no', 'equiv', 'safe', 'same_kind', or "
            f"'unsafe', got {casting!r}"
        )
    weak_dtype = _BOOL if type(value) is bool else np.result_type(value, dtype)
    if casting == "equiv" and type(value) is not bool and np.asarray(value).dtype != weak_dtype:
        # NumPy's copyto: converting the scalar at all is not an 'equiv' cast.
        raise TypeError(
            f"mjnp.{fname}: cannot cast Python {type(value).__name__} {value!r} to {dtype} "
            "under the casting rule 'equiv'"
        )
    # NumPy's floating-point warnings when eager (docs/errors.md); NB: none on dropping an
    # imaginary part.
    with quiet_unless_eager(), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        try:
            host = np.asarray(value, dtype=weak_dtype)
        except OverflowError as err:
            raise OverflowError(
                f"mjnp.{fname}: cannot convert {value!r} to {weak_dtype}: {err}"
            ) from err
        if not np.can_cast(weak_dtype, dtype, casting):
            raise TypeError(
                f"mjnp.{fname}: cannot cast Python {type(value).__name__} {value!r} (as "
                f"{weak_dtype}) to {dtype} according to the rule {casting!r}"
            )
        return host.astype(dtype)
