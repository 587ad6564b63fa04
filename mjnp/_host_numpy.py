"""NumPy's own function on the host values of concrete eager CPU Arrays (issue 18): the one
place mjnp functions take their direct NumPy paths from.

Many mjnp functions bind several primitives eagerly (an `inv` is an LU custom call, two
triangular solves and ~20 small ops: ~300 µs for an 8x8 matrix against NumPy's ~5 µs; `take`
is a gather through dispatch; `zeros` a broadcast). When every array argument is a concrete
Array and nothing is traced on the CPU (`mjcore.dispatch.is_eager_host`), the function's NumPy
counterpart computes the result on the host values instead: NumPy's bits, dtypes and shapes,
nothing compiled or bound. Anything else (tracers under jit/grad/vmap, another device, large
operands, arguments NumPy would read differently, any error NumPy raises) takes the function's
general path, which computes the same values and raises mjnp's own errors.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from mjcore import dtypes
from mjcore.array import Array, wrap_host, wrap_host_value
from mjcore.core import ShapedArray
from mjcore.dispatch import array_value, is_eager_host

# Elements (of the largest operand or result) up to which a function runs NumPy: dispatch's
# limit for a general primitive's host rule (gathers, pads, reversals, sorts; docs/eager.md).
HOST_ELEMENTS = 1 << 15
# ... per operand for linear algebra: NumPy's LAPACK calls are the kernels XLA's CPU custom
# calls run: measured against `jit` of the mjnp function (loaded 2-core machine, one run),
# NumPy took 0.54-0.93x XLA's time for inv, svd and eigh of 64x64 to 256x256 float64.
LAPACK_ELEMENTS = 1 << 16
# Products stop at `dispatch.host_limit`'s bound for `dot_general` (2^15): NumPy's threaded
# BLAS lost badly on a loaded machine from 256x256 (matmul 18.6 ms against 0.6 ms).
PRODUCT_ELEMENTS = 1 << 15
# The product of two operands' sizes bounds a product's result (an outer-like `matmul` of
# (n, 1) and (1, n)) and its multiply-adds: past this, the general path's per-primitive
# bounds decide (its `dot_general` host rule is `np.dot`, so small matrices stay on NumPy).
PAIR_ELEMENTS = 1 << 20
_PLANS_SIZE = 1024
# NumPy computes on bfloat16 (ml_dtypes) through float32 with other roundings than XLA's, or
# not at all: bfloat16 takes the general paths (docs/eager.md, "bfloat16")
_BFLOAT16 = dtypes.bfloat16


def host_value(x: Any, limit: float | None = None) -> np.ndarray | None:
    """The read-only host value of `x` when it is a concrete Array of at most `limit`
    (default `HOST_ELEMENTS`) elements and the call runs eagerly on the CPU; else None."""
    if type(x) is not Array or not is_eager_host():
        return None
    size = _sizes.get(x.aval)
    if size is None:
        size = _size(x.aval)
    if size > (HOST_ELEMENTS if limit is None else limit) or x.aval.dtype is _BFLOAT16:
        return None
    return array_value(x)


# aval -> its number of elements (`ShapedArray.size` loops in Python), bounded
_sizes: dict[ShapedArray, int] = {}


def _size(aval: ShapedArray) -> int:
    if len(_sizes) >= _PLANS_SIZE:
        _sizes.clear()
    size = _sizes[aval] = aval.size
    return size


def host_values(*args: Any, limit: float | None = None) -> list[np.ndarray] | None:
    """The read-only host values of `args` when each is a strong concrete Array of at most
    `limit` (default `HOST_ELEMENTS`) elements and the call runs eagerly on the CPU, else
    None (the general path runs)."""
    if not is_eager_host():
        return None
    bound = HOST_ELEMENTS if limit is None else limit
    sizes = _sizes
    if len(args) == 1:  # unrolled: most calls have one array
        a = args[0]
        if type(a) is not Array:
            return None
        aval = a.aval
        size = sizes.get(aval)
        if size is None:
            size = _size(aval)
        if aval.weak_type or size > bound or aval.dtype is _BFLOAT16:
            return None
        return [array_value(a)]
    values = []
    for x in args:
        if type(x) is not Array:
            return None
        aval = x.aval
        size = sizes.get(aval)
        if size is None:
            size = _size(aval)
        if aval.weak_type or size > bound or aval.dtype is _BFLOAT16:
            return None
        values.append(array_value(x))
    return values


def lapack_values(*args: Any) -> list[np.ndarray] | None:
    """`host_values` up to `LAPACK_ELEMENTS` elements each (linear algebra)."""
    return host_values(*args, limit=LAPACK_ELEMENTS)


def host_size_ok(n: int) -> bool:
    """Whether a result of `n` elements made from Python values (no array arguments) is made
    by NumPy now: eagerly on the CPU, at most `HOST_ELEMENTS` elements."""
    return n <= HOST_ELEMENTS and is_eager_host()


def wrap(value: Any, weak_type: bool = False) -> Array:
    """An Array holding NumPy's result `value` (an ndarray, possibly a view of an operand's
    read-only host value, or a NumPy scalar); no device transfer until a compiled program
    needs it. Host values are never written in place, so a view shares them safely."""
    if type(value) is not np.ndarray:
        value = np.asarray(value)  # a NumPy scalar: a new array
    return wrap_host_value(value, weak_type)


def wrap_own(value: Any) -> Array:
    """`wrap` for results that should own their memory: an operand's read-only host value
    (or a view of one) that NumPy handed back as it is (`histogram`'s edges) is copied."""
    if type(value) is np.ndarray and not value.flags.writeable:
        value = value.copy()
    return wrap(value)


def numpy_call(fn: Callable[..., Any], x: Any, *args: Any, **kwargs: Any) -> Any:
    """`fn(value of x, *args, **kwargs)` as a strong Array (a tuple or list of them for a
    tuple or list result) when `x` has a host value (`host_value`); None otherwise, and where
    NumPy raises (the general path then raises mjnp's error). `args` and `kwargs` are what
    NumPy reads the same way as the general path (Python ints, tuples of them, None)."""
    v = host_value(x)
    if v is None:
        return None
    try:
        out = fn(v, *args, **kwargs)
    except (ValueError, TypeError, IndexError):
        return None
    if type(out) is tuple or type(out) is list:
        return type(out)(wrap(o) for o in out)
    return wrap(out)


def plain(*args: Any) -> bool:
    """Whether every argument is None, a Python int or a tuple or list of Python ints: static
    arguments (axes, counts, sections) that NumPy reads as the general path does."""
    for a in args:
        if a is None or type(a) is int:
            continue
        if type(a) is tuple or type(a) is list:
            for e in a:
                if type(e) is not int:
                    return False
            continue
        return False
    return True


def fused_handles(public: Callable[..., Any], fused: Callable[..., Any]) -> None:
    """Give `public`, a function that tries NumPy first and else calls the `fuse_eagerly`
    function `fused`, the latter's eager-fusion handles (tests and `uses_host` read them, as
    they read `mjnp.ufunc`'s)."""
    for attr, value in vars(fused).items():
        if attr.startswith(("__fused", "__wrapped_fused")):
            setattr(public, attr, value)


# dtypes NumPy's linalg computes in (bool and integers go to float64); others (float16,
# longdouble, object) take the general path, which raises mjnp's TypeError
LINALG_KINDS = frozenset("biu")
LINALG_DTYPES = frozenset(np.dtype(t) for t in ("float32", "float64", "complex64", "complex128"))


def linalg_dtype_ok(value: np.ndarray) -> bool:
    """Whether `value`'s dtype is one NumPy's linalg computes with as mjnp's does."""
    dt = value.dtype
    return dt.kind in LINALG_KINDS or dt in LINALG_DTYPES


def linalg_ok(value: np.ndarray, square: bool = True) -> bool:
    """Whether NumPy's linalg takes `value` as mjnp's does: a supported dtype, at least two
    dimensions, and square matrices where `square`. Otherwise the general path raises."""
    dt = value.dtype
    if dt.kind not in LINALG_KINDS and dt not in LINALG_DTYPES:
        return False
    shape = value.shape
    if len(shape) < 2:
        return False
    return not square or shape[-1] == shape[-2]


def bare(fn: Callable[..., Any]) -> Callable[..., Any]:
    """NumPy's function `fn` without its `__array_function__` dispatch (`fn._implementation`,
    which NumPy documents for this): the host values are plain ndarrays, which it would hand
    to that same implementation (~0.15-1.5 µs a call; ufuncs have none and stay as they are)."""
    return getattr(fn, "_implementation", fn)


def attempt(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """`fn(*args, **kwargs)`, or None where NumPy raises: the general path then runs and
    raises mjnp's own error (its message names the function and the fix) or, where mjnp's
    semantics differ from NumPy's failure (a NaN input to `cholesky`), computes its result."""
    try:
        return fn(*args, **kwargs)
    except Exception:  # noqa: BLE001  (any NumPy error: the general path decides)
        return None


# dtypes the products' host path takes: NumPy's result dtype is mjnp's for these
NUMERIC_DTYPES = frozenset(
    np.dtype(t)
    for t in (
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float32", "float64", "complex64", "complex128",
    )
)  # fmt: skip


def with_host_path(fused: Callable[..., Any], numpy_fn: Callable[..., Any], arrays: int = 2) -> Any:
    """`fused` (a `fuse_eagerly` function), with `numpy_fn` run first on the host values when
    its first `arrays` positional arguments are strong Arrays of `NUMERIC_DTYPES` of at most
    `PRODUCT_ELEMENTS` elements each (`PAIR_ELEMENTS` as the product of their sizes) and every
    other argument is a Python int or None: NumPy's bits without the fused call's ~2 µs.
    Anything else, or an argument NumPy rejects, runs `fused`, which raises mjnp's error. The
    two-Array call without keywords is inlined (it is most of the cost of `vdot` of two short
    vectors)."""
    numeric = NUMERIC_DTYPES
    numpy_fn = bare(numpy_fn)
    # (aval, aval) -> False where the two-Array call takes `fused`, else True, then the
    # result's aval once known (NumPy's result shape and dtype follow from the operands'); bounded
    pairs: dict[tuple[ShapedArray, ShapedArray], Any] = {}

    def host_pair(key: tuple[ShapedArray, ShapedArray]) -> bool:
        aa, ba = key
        ok = not (aa.weak_type or ba.weak_type) and aa.dtype in numeric and ba.dtype in numeric
        sizes = math.prod(aa.shape), math.prod(ba.shape)
        ok = ok and max(sizes) <= PRODUCT_ELEMENTS and sizes[0] * sizes[1] <= PAIR_ELEMENTS
        if len(pairs) >= _PLANS_SIZE:
            pairs.clear()
        pairs[key] = ok
        return ok

    @functools.wraps(fused)  # (copies the fused handles, `__wrapped_fused__`, too)
    def with_host(*args: Any, **kwargs: Any) -> Any:
        if len(args) == arrays == 2 and not kwargs:
            a, b = args
            if type(a) is Array and type(b) is Array and is_eager_host():
                key = (a.aval, b.aval)
                ok = pairs.get(key)
                if ok is None:
                    ok = host_pair(key)
                if ok:
                    try:
                        out = numpy_fn(array_value(a), array_value(b))
                    except Exception:  # noqa: BLE001  (the general path raises mjnp's error)
                        return fused(a, b)
                    if type(out) is not np.ndarray:
                        out = np.asarray(out)
                    if ok is True:
                        ok = pairs[key] = ShapedArray(out.shape, out.dtype)
                    return wrap_host(out, ok)
            return fused(*args)
        if len(args) >= arrays:
            for extra in args[arrays:]:
                if extra is not None and type(extra) is not int:
                    return fused(*args, **kwargs)
            for extra in kwargs.values():
                if extra is not None and type(extra) is not int:
                    return fused(*args, **kwargs)
            values = host_values(*args[:arrays])
            if (
                values is not None
                and all(v.dtype in numeric and v.size <= PRODUCT_ELEMENTS for v in values)
                and math.prod(v.size for v in values) <= PAIR_ELEMENTS
            ):
                out = attempt(numpy_fn, *values, *args[arrays:], **kwargs)
                if out is not None:
                    return wrap(out)
        return fused(*args, **kwargs)

    return with_host
