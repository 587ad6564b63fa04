"""Utilities: floating-point error state, file I/O, number formatting, type helpers, memory
queries, `copyto`, and applying functions along axes (`apply_along_axis`, `apply_over_axes`,
`vectorize`, the last two through `mjcore.vmap`).

File I/O and formatting run NumPy on the host copy, then put results on the device.
`seterr`, `geterr`, `errstate` and friends are NumPy's: one error state governs NumPy and eager
mjnp alike (docs/errors.md; under `jit` nothing warns, as in JAX).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

import mjcore
from mjcore import vmap
from mjcore.array import Array as _Array
from mjcore.core import Tracer, rebind
from mjnp import _elementwise as ew
from mjnp import _manipulation
from mjnp._creation import asarray
from mjnp._function_objects import c_function
from mjnp._promotion import asarray_arg, cast_python_scalar

ArrayLike = Any
Array = Any

# --- floating-point error handling (NumPy's state, honoured by eager mjnp) ------------------

errstate = np.errstate  # the same object: one state for NumPy and mjnp


def seterr(
    all: str | None = None,  # noqa: A002  (NumPy's argument name)
    divide: str | None = None,
    over: str | None = None,
    under: str | None = None,
    invalid: str | None = None,
) -> dict[str, str]:
    """`numpy.seterr`: set NumPy's error handling, returning the old one; eager mjnp honours
    it (warn, raise, call, print, log, ignore; docs/errors.md), compiled code does not."""
    return np.seterr(all=all, divide=divide, over=over, under=under, invalid=invalid)


def geterr() -> dict[str, str]:
    """`numpy.geterr`: the error handling eager mjnp and NumPy follow (see `seterr`)."""
    return np.geterr()


def seterrcall(func: Any) -> Any:
    """`numpy.seterrcall`: the function ('call') or object ('log') eager mjnp reports to."""
    return np.seterrcall(func)


def geterrcall() -> Any:
    """`numpy.geterrcall`."""
    return np.geterrcall()


def setbufsize(size: int) -> int:
    """`numpy.setbufsize`: set NumPy's ufunc buffer size (scoped by `errstate`), returning the
    old one. NB: mjnp's computations run in XLA and use no such buffer."""
    return np.setbufsize(size)


def getbufsize() -> int:
    """`numpy.getbufsize` (see `setbufsize`)."""
    return np.getbufsize()


# --- file I/O (through NumPy on the host) ---------------------------------------------------


def _host(a: ArrayLike) -> Any:
    return np.asarray(a) if isinstance(a, _Array | Tracer) else a


def _device(value: Any) -> Any:
    return asarray(value) if isinstance(value, np.ndarray) else value


def save(file: Any, arr: ArrayLike, allow_pickle: bool = True) -> None:
    """`numpy.save` of the array's values (a `.npy` file NumPy can read)."""
    np.save(file, _host(arr), allow_pickle=allow_pickle)


def savez(file: Any, *args: ArrayLike, allow_pickle: bool = True, **kwds: ArrayLike) -> None:
    """`numpy.savez` of the arrays' values."""
    np.savez(
        file,
        *(_host(a) for a in args),
        allow_pickle=allow_pickle,
        **{k: _host(v) for k, v in kwds.items()},
    )


def savez_compressed(
    file: Any, *args: ArrayLike, allow_pickle: bool = True, **kwds: ArrayLike
) -> None:
    """`numpy.savez_compressed` of the arrays' values."""
    np.savez_compressed(
        file,
        *(_host(a) for a in args),
        allow_pickle=allow_pickle,
        **{k: _host(v) for k, v in kwds.items()},
    )


class NpzFile(Mapping):
    """The arrays of a `.npz` file, put on the device as they are read (as `numpy.lib.npyio.
    NpzFile`: a mapping and a context manager)."""

    def __init__(self, npz: Any):
        self._npz = npz
        self.files = npz.files

    def __getitem__(self, key: str) -> Array:
        return _device(self._npz[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)

    def close(self) -> None:
        self._npz.close()

    def __enter__(self) -> NpzFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """`numpy.load`, with arrays put on the device (`.npz` files give an `NpzFile`)."""
    value = np.load(file, *args, **kwargs)
    if isinstance(value, np.lib.npyio.NpzFile):
        return NpzFile(value)
    return _device(value)


def savetxt(fname: Any, X: ArrayLike, *args: Any, **kwargs: Any) -> None:  # noqa: N803
    """`numpy.savetxt` of the array's values."""
    np.savetxt(fname, _host(X), *args, **kwargs)


def loadtxt(fname: Any, *args: Any, **kwargs: Any) -> Any:
    """`numpy.loadtxt`, then onto the device."""
    return _device(np.loadtxt(fname, *args, **kwargs))


def genfromtxt(fname: Any, *args: Any, **kwargs: Any) -> Any:
    """`numpy.genfromtxt`, then onto the device (structured and masked results are not
    supported: mjnp has no such arrays)."""
    return _device(np.genfromtxt(fname, *args, **kwargs))


@c_function  # as NumPy's builtin: does not bind as a method
def fromfile(file: Any, dtype: Any = float, count: int = -1, sep: str = "", offset: int = 0,
             *, like: None = None) -> Array:  # fmt: skip
    """`numpy.fromfile`, then onto the device."""
    return _device(np.fromfile(file, dtype=dtype, count=count, sep=sep, offset=offset))


# --- numbers and types ----------------------------------------------------------------------


def binary_repr(num: int, width: int | None = None) -> str:
    """`numpy.binary_repr` (an mjnp 0-d integer array counts as its value)."""
    return np.binary_repr(int(num), width)


def base_repr(number: int, base: int = 2, padding: int = 0) -> str:
    """`numpy.base_repr` (an mjnp 0-d integer array counts as its value)."""
    return np.base_repr(int(number), base, padding)


def typename(char: str) -> str:
    """`numpy.typename`."""
    return np.typename(char)


def mintypecode(typechars: Any, typeset: str = "GDFgdf", default: str = "d") -> str:
    """`numpy.mintypecode`; mjnp arrays in `typechars` count by their dtype."""
    chars = [t.dtype.char if isinstance(t, _Array | Tracer) else t for t in typechars]
    return np.mintypecode(chars, typeset, default)


def common_type(*arrays: ArrayLike) -> type:
    """`numpy.common_type`: the inexact scalar type of the arrays' dtypes (ints count as
    float64)."""
    return np.common_type(*(np.empty(0, asarray_arg("common_type", a).dtype) for a in arrays))


def min_scalar_type(a: ArrayLike, /) -> np.dtype:
    """`numpy.min_scalar_type` (value-dependent for 0-d arrays, so their value is read)."""
    return np.min_scalar_type(_host(a))


# --- memory ---------------------------------------------------------------------------------


def shares_memory(a: Any, b: Any, /, max_work: int | None = None) -> bool:
    """Whether `a` and `b` share memory. NB: mjnp arrays are immutable values, so only an
    array and itself "share memory"; NumPy arrays are asked NumPy."""
    if isinstance(a, _Array | Tracer) or isinstance(b, _Array | Tracer):
        return a is b
    return bool(np.shares_memory(a, b, max_work=max_work))


def may_share_memory(a: Any, b: Any, /, max_work: int | None = None) -> bool:
    """As `shares_memory` (bounds are never looser for immutable values)."""
    if isinstance(a, _Array | Tracer) or isinstance(b, _Array | Tracer):
        return a is b
    return bool(np.may_share_memory(a, b, max_work=max_work))


def isfortran(a: ArrayLike) -> bool:
    """False: mjnp arrays have no memory layout to speak of, and present themselves as C
    ordered. NumPy arrays are asked NumPy."""
    if isinstance(a, _Array | Tracer):
        return False
    return bool(np.isfortran(a))


def show_config() -> None:
    """NumPy's build configuration (`numpy.show_config`), then mjnp's backend."""
    np.show_config()
    print(f"mjnp backend: XLA via PJRT, devices: {mjcore.devices()}")


def info(
    object: Any = None, maxwidth: int = 76, output: Any = None, toplevel: str = "mjnp"
) -> None:  # noqa: A002
    """`numpy.info`: help on an object (its docstring and signature)."""
    np.info(object, maxwidth=maxwidth, output=output, toplevel=toplevel)


# --- copyto ---------------------------------------------------------------------------------


def copyto(dst: Any, src: ArrayLike, casting: str = "same_kind", where: ArrayLike = True) -> None:
    """Copy `src` into `dst` where `where` holds, as `numpy.copyto`.

    An mjnp destination is rebound to the updated value (arrays are immutable); a NumPy
    destination is written in place.

    Raises:
        TypeError: when `src` cannot be cast to `dst`'s dtype under `casting` (a Python
            scalar first takes the dtype NEP 50 gives it: 1.5 into uint8 is a TypeError).
        OverflowError: for a Python int out of range of `dst`'s integer dtype, whatever
            `casting` and `where` are, as NumPy raises.
    """
    if isinstance(dst, np.ndarray):
        np.copyto(dst, _host(src), casting=casting, where=_host(where))
        return
    if not isinstance(dst, _Array | Tracer):
        raise TypeError(f"mjnp.copyto: dst must be an array, got {type(dst).__name__}")
    if type(src) in (bool, int, float, complex):
        # Checked before `where`, as NumPy raises even where nothing is written.
        src = cast_python_scalar("copyto", src, dst.dtype, casting)
    source = asarray_arg("copyto", src)
    if not np.can_cast(source.dtype, dst.dtype, casting):
        raise TypeError(
            f"mjnp.copyto: Cannot cast array data from dtype('{source.dtype}') to "
            f"dtype('{dst.dtype}') according to the rule '{casting}'"
        )
    value = _fit("copyto", _manipulation.astype(source, dst.dtype), dst.shape)
    if where is not True:
        mask = _fit("copyto", asarray_arg("copyto", where), dst.shape)
        if mask.dtype != np.dtype(bool):
            raise TypeError("mjnp.copyto: where must be a boolean array")
        value = ew.where(mask, value, dst)
    rebind(dst, value)


def _fit(fname: str, x: Array, shape: tuple[int, ...]) -> Array:
    """Broadcast for assignment: as NumPy, leading size-1 axes beyond `shape`'s rank drop."""
    extra = x.ndim - len(shape)
    if extra > 0 and all(d == 1 for d in x.shape[:extra]):
        x = _manipulation.reshape(x, x.shape[extra:])
    return _manipulation.broadcast_to(x, shape)


# --- applying functions along axes ----------------------------------------------------------


def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: ArrayLike, *args: Any,
                     **kwargs: Any) -> Array:  # fmt: skip
    """`func1d` applied to every 1-d slice along `axis`, as `numpy.apply_along_axis`, batched
    with `mjcore.vmap` (so `func1d` is traced once, and must be traceable).

    Raises:
        ValueError: when an iteration dimension is 0, as NumPy.
    """
    arr = asarray_arg("apply_along_axis", arr)
    axis = _manipulation.normalize_axis("apply_along_axis", axis, arr.ndim)
    moved = _manipulation.moveaxis(arr, axis, -1)
    batch = moved.shape[:-1]
    if any(d == 0 for d in batch):
        raise ValueError("mjnp.apply_along_axis: Cannot apply_along_axis when any iteration "
                         "dimensions are 0")  # fmt: skip
    flat = _manipulation.reshape(moved, (-1, moved.shape[-1]))
    out = vmap(lambda v: asarray(func1d(v, *args, **kwargs)))(flat)
    res_shape = out.shape[1:]
    out = _manipulation.reshape(out, batch + res_shape)
    # The result's own axes replace `axis`.
    order = list(range(len(batch)))
    res_axes = list(range(len(batch), len(batch) + len(res_shape)))
    return _manipulation.transpose(out, order[:axis] + res_axes + order[axis:])


def apply_over_axes(func: Callable[[Any, int], Any], a: ArrayLike, axes: Any) -> Array:
    """`func(a, axis)` applied for each axis in turn, keeping dimensions, as
    `numpy.apply_over_axes`.

    Raises:
        ValueError: when `func` returns neither the same rank nor one less.
    """
    val = asarray_arg("apply_over_axes", a)
    n = val.ndim
    for axis in np.atleast_1d(np.asarray(axes)).tolist():
        axis = axis + n if axis < 0 else axis
        res = func(val, axis)
        if res.ndim == val.ndim:
            val = res
        elif res.ndim == val.ndim - 1:
            val = _manipulation.expand_dims(res, axis)
        else:
            raise ValueError(
                "mjnp.apply_over_axes: function is not returning an array of the correct shape"
            )
    return val


_DIMENSION = r"\w+"
_CORE_DIMS = rf"\((?:{_DIMENSION}(?:,{_DIMENSION})*)?\)"
_SIGNATURE = rf"^{_CORE_DIMS}(?:,{_CORE_DIMS})*->{_CORE_DIMS}(?:,{_CORE_DIMS})*$"


def _parse_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    signature = signature.replace(" ", "")
    if not re.match(_SIGNATURE, signature):
        raise ValueError(f"mjnp.vectorize: not a valid gufunc signature: {signature}")
    ins, outs = signature.split("->")
    parse = lambda s: [tuple(re.findall(_DIMENSION, d)) for d in re.findall(_CORE_DIMS, s)]  # noqa: E731
    return parse(ins), parse(outs)


class vectorize:  # noqa: N801  (NumPy's name)
    """A function of scalars (or of core dimensions given by `signature`) mapped over the
    broadcast loop dimensions of its arguments, as `numpy.vectorize`.

    Called eagerly (no argument is being traced), it is `numpy.vectorize` on host copies of
    the arguments: `pyfunc` runs once per element with NumPy scalars (once per core slice
    with NumPy arrays, given `signature`), so Python control flow on an element works, and
    `otypes`, `excluded`, `cache` and `signature` behave as NumPy's; the results come back as
    mjnp arrays. NB: under a transformation (`jit`, `grad`, `vmap`, ...) `pyfunc` is instead
    traced once on the whole batch and mapped with `mjcore.vmap`, so there it must be written
    with mjnp operations (no Python branching on values); `otypes` and `cache` are ignored
    there and `excluded` arguments are passed through unchanged.
    """

    def __init__(
        self,
        pyfunc: Callable[..., Any],
        otypes: Any = None,
        doc: str | None = None,
        excluded: Any = None,
        cache: bool = False,
        signature: str | None = None,
    ):
        self.pyfunc = pyfunc
        self.otypes = otypes
        self.excluded = set(excluded or ())
        self.signature = signature
        self._core = _parse_signature(signature) if signature is not None else None
        self.__doc__ = doc if doc is not None else getattr(pyfunc, "__doc__", None)
        # NumPy's own vectorize validates otypes/signature now and runs the eager calls.
        self._host = np.vectorize(
            pyfunc, otypes=otypes, doc=doc, excluded=excluded, cache=cache, signature=signature
        )
        if hasattr(pyfunc, "__name__"):
            self.__name__ = pyfunc.__name__

    @property
    def otypes(self) -> Any:
        """The output type codes (None: from the first call); settable, as NumPy's."""
        return self._host.otypes if "_host" in self.__dict__ else self.__dict__.get("_otypes")

    @otypes.setter
    def otypes(self, value: Any) -> None:
        # NumPy's vectorize reads `otypes` at each call, so a later assignment counts.
        self.__dict__["_otypes"] = value
        if "_host" in self.__dict__:
            self._host.otypes = value

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        positions = [i for i in range(len(args)) if i not in self.excluded]
        names = [k for k in kwargs if k not in self.excluded]
        traced = any(isinstance(args[i], Tracer) for i in positions) or any(
            isinstance(kwargs[k], Tracer) for k in names
        )
        if not traced:
            return self._call_eagerly(positions, names, args, kwargs)
        mapped = [asarray_arg("vectorize", args[i]) for i in positions]
        mapped += [asarray_arg("vectorize", kwargs[k]) for k in names]
        if self._core is None:
            core_dims: Sequence[tuple[str, ...]] = [()] * len(mapped)
        else:
            core_dims = self._core[0]
            if len(core_dims) != len(mapped):
                raise TypeError(
                    f"mjnp.vectorize: wrong number of positional arguments: expected "
                    f"{len(core_dims)}, got {len(mapped)}"
                )
        loop_shapes = []
        for x, dims in zip(mapped, core_dims, strict=True):
            if x.ndim < len(dims):
                raise ValueError(
                    f"mjnp.vectorize: input with shape {x.shape} has fewer dimensions than the "
                    f"core dimensions {dims} of signature {self.signature}"
                )
            loop_shapes.append(x.shape[: x.ndim - len(dims)])
        loop = np.broadcast_shapes(*loop_shapes)
        mapped = [
            _manipulation.broadcast_to(x, loop + x.shape[x.ndim - len(d) :])
            for x, d in zip(mapped, core_dims, strict=True)
        ]

        def call(*vals: Any) -> Any:
            full_args = list(args)
            full_kwargs = dict(kwargs)
            for i, v in zip(positions, vals[: len(positions)], strict=True):
                full_args[i] = v
            for k, v in zip(names, vals[len(positions) :], strict=True):
                full_kwargs[k] = v
            return self.pyfunc(*full_args, **full_kwargs)

        fun = call
        for _ in loop:
            fun = vmap(fun)
        return fun(*mapped)

    def _call_eagerly(
        self, positions: list[int], names: list[str], args: tuple, kwargs: dict[str, Any]
    ) -> Any:
        host_args = list(args)
        host_kwargs = dict(kwargs)
        for i in positions:
            host_args[i] = _to_host(args[i])
        for k in names:
            host_kwargs[k] = _to_host(kwargs[k])
        result = self._host(*host_args, **host_kwargs)
        if isinstance(result, tuple):
            return tuple(asarray_arg("vectorize", r) for r in result)
        return asarray_arg("vectorize", result)


def _to_host(x: Any) -> Any:
    """An mjnp array as a NumPy array (what `numpy.vectorize` iterates); anything else as is."""
    return np.asarray(x) if isinstance(x, _Array) else x
