"""NumPy's `out=` argument: write a result into a given array, with NumPy's checks.

mjnp arrays are immutable values, so writing into `out` rebinds the handle `out` to the
(cast) result, as `x[idx] = v` does (`mjcore.core.rebind`). The handle then stays
differentiable: under `grad` or `jit`, an `out` computed inside the transformation holds the
traced result. A NumPy ndarray `out` is written in place (eagerly only, as it holds values).
Every function that takes `out=` calls `write_out` (or is wrapped by `ufunc_out`), so the
rules live here once.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, Literal, TypeAlias

import numpy as np

from mjcore import lax
from mjcore.array import Array as _Array
from mjcore.core import Tracer, get_aval, rebind
from mjcore.dtypes import Casting
from mjcore.eager_fusion import fuse_eagerly
from mjcore.errors import InPlaceUpdateError

ArrayLike = Any
Array = Any

# How a result may be cast to `out`'s dtype: NumPy's casting names, plus "writeback" for the
# functions (argmax, take, compress) that compute into a temporary of the result's dtype and
# copy back, so that NumPy requires `out`'s dtype to cast safely *to* the result's.
_CASTINGS = frozenset({"no", "equiv", "safe", "same_kind", "unsafe", "writeback"})
OutCasting: TypeAlias = Casting | Literal["writeback"]


def _check_cast(
    fname: str, result_dtype: np.dtype, out_dtype: np.dtype, casting: OutCasting
) -> None:
    if casting == "writeback":
        if not np.can_cast(out_dtype, result_dtype, "safe"):
            raise TypeError(
                f"mjnp.{fname}: cannot use out= of dtype {out_dtype}: the result has dtype "
                f"{result_dtype} and out's dtype must cast to it by the rule 'safe'; pass an "
                f"out of dtype {result_dtype}"
            )
    elif not np.can_cast(result_dtype, out_dtype, casting):
        raise TypeError(
            f"mjnp.{fname}: cannot cast the result from dtype {result_dtype} to out's dtype "
            f"{out_dtype} with casting rule {casting!r}; pass an out of dtype {result_dtype} "
            "or cast the result with .astype"
        )


def _fitted_shape(fname: str, result_shape: tuple[int, ...], out: Any, broadcast: bool) -> bool:
    """Whether the result must be broadcast to `out`'s shape; raises when it cannot fit."""
    out_shape = tuple(out.shape)
    if result_shape == out_shape:
        return False
    if broadcast:
        try:
            fits = np.broadcast_shapes(result_shape, out_shape) == out_shape
        except ValueError:
            fits = False
        if fits:
            return True
    raise ValueError(
        f"mjnp.{fname}: out= has shape {out_shape} but the result has shape {result_shape}; "
        f"pass an out of shape {result_shape}"
    )


def write_out(
    fname: str, out: Any, result: Array, casting: OutCasting = "unsafe", *, broadcast: bool = False
) -> Any:
    """`result`, or, with an `out` array, `out` holding `result` cast to `out`'s dtype.

    Args:
        fname: the public function's name, for error messages.
        out: None, an mjnp array (or traced value), whose handle is rebound to the result, or
            a NumPy ndarray, written in place.
        result: the function's result.
        casting: the rule NumPy applies to the cast (see `_CASTINGS`); "unsafe" for most
            non-ufunc functions, "same_kind" for ufuncs.
        broadcast: whether the result may broadcast to a larger `out` (as ufuncs do).

    Raises:
        ValueError: when the result's shape does not fit `out`'s.
        TypeError: when the cast breaks `casting`, when `out` is not an array, or when a
            concrete `out` would have to hold a traced result.
    """
    if out is None:
        return result
    if casting not in _CASTINGS:
        if not isinstance(casting, str):  # NumPy's TypeError, e.g. for casting=None
            raise TypeError(f"mjnp.{fname}: casting must be str, not {type(casting).__name__}")
        raise ValueError(
            f"mjnp.{fname}: casting must be one of 'no', 'equiv', 'safe', 'same_kind' or "
            f"'unsafe', got {casting!r}"
        )
    if not isinstance(out, _Array | Tracer | np.ndarray):
        raise TypeError(f"mjnp.{fname}: out= must be an array, got {type(out).__name__}")
    aval = get_aval(result)
    out_dtype = np.dtype(out.dtype)
    _check_cast(fname, aval.dtype, out_dtype, casting)
    if _fitted_shape(fname, aval.shape, out, broadcast):
        lead = len(out.shape) - len(aval.shape)
        result = lax.broadcast_in_dim(result, out.shape, range(lead, len(out.shape)))
    if isinstance(out, np.ndarray):
        # Eager only: a traced result has no values, and np.asarray says so.
        np.copyto(out, np.asarray(result), casting="unsafe")
        return out
    value = lax.convert_element_type(result, out_dtype)
    if type(value) is not type(out):
        where = f" traced by {value._trace.main.description}" if isinstance(value, Tracer) else ""
        raise InPlaceUpdateError(  # a TypeError; eager `grad` then traces the whole function
            f"mjnp.{fname}: out= is a {type(out).__name__} but the result is a "
            f"{type(value).__name__}{where}, and an array object cannot change its kind. "
            "Use the return value, or pass an out computed inside the transformation "
            "(for example from the traced inputs)."
        )
    rebind(out, value)
    return out


def write_exact_out(fname: str, out: Any, result: Array) -> Any:
    """`write_out` as NumPy's `dot` and `multi_dot` take `out=`: it must have exactly the
    result's dtype, or NumPy raises ValueError (not a casting TypeError)."""
    dtype = getattr(out, "dtype", None)
    if out is not None and dtype is not None and np.dtype(dtype) != get_aval(result).dtype:
        raise ValueError(
            f"mjnp.{fname}: out= must have the result's dtype {get_aval(result).dtype}, got "
            f"dtype {dtype}; NumPy does not cast here"
        )
    return write_out(fname, out, result, "no")


def write_outs(fname: str, out: Any, results: tuple[Array, ...], casting: OutCasting) -> Any:
    """`write_out` for a function with several results: `out` is None or a tuple with one
    array (or None) per result, as for NumPy's multi-output ufuncs."""
    if out is None:
        return results
    if not isinstance(out, tuple):
        raise TypeError(
            f"mjnp.{fname}: out= must be a tuple of {len(results)} arrays (or None), one per "
            f"result; got {type(out).__name__}"
        )
    if len(out) != len(results):
        raise ValueError(
            f"mjnp.{fname}: out= must have exactly one entry per result ({len(results)}), "
            f"got {len(out)}"
        )
    return tuple(
        write_out(fname, o, r, casting, broadcast=True) if o is not None else r
        for o, r in zip(out, results, strict=True)
    )


def ufunc_out(
    fun: Callable[..., Any] | None = None,
    *,
    fuse: bool = True,
    int_scalars: bool = False,
    host: Callable[..., Any] | None = None,
    int_host: Callable[..., Any] | None = None,
) -> Callable[..., Any]:
    """Give an elementwise function NumPy's ufunc keyword `out=`, with the ufunc rules: the
    result is cast 'same_kind' and broadcast to `out`'s shape; `out` may also be a tuple with
    one entry per result (None entries are left alone).

    With `fuse` (the default), eager calls on arrays run as one cached executable
    (`mjcore.eager_fusion`); pass `fuse=False` for a function that checks values eagerly.
    `int_scalars`, `host` and `int_host` are `fuse_eagerly`'s: Python ints an inexact array
    holds exactly fuse as floats; `host` is the NumPy function the body computes, run whole on
    the host; `int_host` the NumPy ufunc run for an integer array and a Python int it holds.
    """
    if fun is None:
        return functools.partial(
            ufunc_out, fuse=fuse, int_scalars=int_scalars, host=host, int_host=int_host
        )
    signature = inspect.signature(fun)
    parameters = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None)
        for name in ("out", "dtype")
        if name not in signature.parameters
    ]
    takes_dtype = "dtype" in signature.parameters

    @functools.wraps(fun)
    def wrapped(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        if not takes_dtype and kwargs.get("dtype") is not None:
            args = _cast_to_loop(fun.__name__, args, kwargs.pop("dtype"))
        elif not takes_dtype:
            kwargs.pop("dtype", None)
        result = fun(*args, **kwargs)
        if out is None:
            return result
        if isinstance(result, tuple):  # divmod, frexp, modf
            return write_outs(fun.__name__, out, result, "same_kind")
        if isinstance(out, tuple):
            if len(out) != 1:
                raise ValueError(
                    f"mjnp.{fun.__name__}: out= must have exactly one entry per result (1), "
                    f"got {len(out)}"
                )
            (out,) = out
        return write_out(fun.__name__, out, result, "same_kind", broadcast=True)

    wrapped.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*signature.parameters.values(), *parameters]
    )
    if not fuse:
        return wrapped
    return fuse_eagerly(
        wrapped, int_scalars=int_scalars, host=host, fp_name=fun.__name__, int_host=int_host
    )


def _cast_to_loop(fname: str, args: tuple[Any, ...], dtype: Any) -> tuple[Any, ...]:
    """The ufunc keyword `dtype=`: the operands cast to the loop NumPy's ufunc of that name
    picks for output dtype `dtype` (inputs cast 'same_kind'; NumPy's errors when none fits)."""
    reference = getattr(np, fname, None)
    if not isinstance(reference, np.ufunc):
        raise TypeError(f"mjnp.{fname}: got an unexpected keyword argument 'dtype'")
    if len(args) != reference.nin:
        raise TypeError(f"mjnp.{fname}: expected {reference.nin} operands, got {len(args)}")
    operands = [
        a if type(a) in (bool, int, float, complex) or hasattr(a, "dtype") else np.asarray(a)
        for a in args
    ]
    # Python scalars stay weak (NEP 50): NumPy resolves them by their type.
    in_dtypes = [
        type(a) if type(a) in (bool, int, float, complex) else np.dtype(a.dtype) for a in operands
    ]
    out_dtype = np.dtype(dtype)
    loop = reference.resolve_dtypes(
        (*in_dtypes, *(None,) * reference.nout),
        signature=(*(None,) * reference.nin, *(out_dtype,) * reference.nout),
        casting="same_kind",
    )
    return tuple(
        lax.convert_element_type(a, dt)
        for a, dt in zip(operands, loop[: reference.nin], strict=True)
    )
