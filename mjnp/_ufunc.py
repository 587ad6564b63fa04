"""NumPy's ufunc objects: `mjnp.add`, `mjnp.maximum`, `mjnp.sin`, ... with `reduce`,
`accumulate`, `outer`, `at` and `reduceat`, and NumPy's attributes (`nin`, `nout`, `nargs`,
`identity`, `ntypes`, `types`, `signature`).

A `ufunc` wraps the namespace's function, so calling it is that function's call: the class is
a `functools.partial` with no bound arguments, whose C call adds no Python frame. (Like NumPy's
ufuncs, and unlike functions, it does not bind as a method when stored on a class.) The methods
are compositions of mjnp functions, so they work under every transformation: the reorderable
reductions are mjnp's reductions (`add.reduce` is `sum`, `maximum.accumulate` is a cumulative
max), and any other binary ufunc folds left to right with `mjcore.scan`, as NumPy's loop does.
The attributes are read from NumPy's ufunc of the same name.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from mjcore import lax
from mjcore.control_flow.scan import scan
from mjcore.core import rebind
from mjnp import _reductions as red
from mjnp._indexing import at as _at
from mjnp._indexing import getitem
from mjnp._manipulation import asarray_strong, moveaxis, normalize_axis, reshape
from mjnp._out import write_out
from mjnp._sums_products_differences import cumprod, cumsum

Array = Any

# Reductions that are mjnp's own (faster, and with NumPy's dtype rules), by ufunc name.
_REDUCE: dict[str, Callable[..., Any]] = {
    "add": red.sum,
    "multiply": red.prod,
    "maximum": red.max,
    "minimum": red.min,
    "logical_and": red.all,
    "logical_or": red.any,
}
_ACCUMULATE = {
    "maximum": lax.cummax,
    "minimum": lax.cummin,
}
# Ufuncs whose `at` is a scatter (duplicate indices combine, as NumPy's unbuffered `at`).
_AT = {"add": "add", "multiply": "multiply", "maximum": "max", "minimum": "min"}


class ufunc(functools.partial):  # noqa: N801  (NumPy's name)
    """A NumPy ufunc: call it as the function, or use its methods (see the module docstring).

    Attributes follow `numpy.ufunc`: `nin`, `nout`, `nargs`, `identity`, `ntypes`, `types`,
    `signature` (None but for the generalized ufuncs `matmul`, `vecdot`, ...) and `__name__`.
    """

    # (set on each instance by __new__)
    __name__: str
    __qualname__: str
    __wrapped__: Callable[..., Any]
    nin: int
    nout: int
    nargs: int
    identity: Any
    ntypes: int
    types: list[str]
    signature: str | None

    def __new__(cls, fun: Callable[..., Any], name: str) -> ufunc:
        self = super().__new__(cls, fun)
        reference = getattr(np, name)
        self.__name__ = self.__qualname__ = reference.__name__
        self.__doc__ = fun.__doc__
        self.__wrapped__ = fun
        # The eager-fusion handles of the wrapped function (tests and `uses_host` read them).
        for attr, value in getattr(fun, "__dict__", {}).items():
            if attr.startswith(("__fused", "__wrapped_fused")):
                setattr(self, attr, value)
        self.nin = reference.nin
        self.nout = reference.nout
        self.nargs = reference.nargs
        self.identity = reference.identity
        self.ntypes = reference.ntypes
        self.types = reference.types
        self.signature = reference.signature  # None but for matmul and the vector products
        return self

    def __repr__(self) -> str:
        return f"<ufunc '{self.__name__}'>"

    def __reduce__(self) -> Any:  # pickled by name, as NumPy's
        return (getattr, (_namespace(), self.__name__))

    # --- methods ---------------------------------------------------------------------------

    def _binary(self, method: str) -> None:
        if self.signature is not None:
            raise ValueError(f"Reduction not defined on ufunc with signature ({method})")
        if self.nin != 2:
            raise ValueError(f"{method} only supported for binary functions")
        if self.nout != 1:
            raise ValueError(f"{method} only supported for functions returning a single value")

    def reduce(
        self,
        array: Any,
        axis: Any = 0,
        dtype: Any = None,
        out: Any = None,
        keepdims: bool = False,
        initial: Any = np._NoValue,
        where: Any = True,
    ) -> Array:
        """Apply the ufunc along `axis` (several axes, or all for None, where reorderable),
        as `numpy.ufunc.reduce`."""
        self._binary("reduce")
        x = asarray_strong(self.__name__, array)
        name = self.__name__
        axes = _reduce_axes(name, axis, x.ndim)
        if len(axes) > 1 and name not in _REDUCE and self.identity is None:
            raise ValueError(
                f"reduction operation '{name}' is not reorderable, so at most one axis may be "
                "specified"
            )
        empty = any(x.shape[a] == 0 for a in axes)
        if initial is np._NoValue:
            initial = self.identity if where is True or self.identity is not None else None
        if empty and initial is None:
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
        fast = _REDUCE.get(name)
        if fast is not None:
            kw: dict[str, Any] = {"keepdims": keepdims}
            if dtype is not None and name in ("add", "multiply"):
                kw["dtype"] = dtype
            if where is not True:
                kw["where"] = where
            if initial is not None and initial is not np._NoValue and name != "logical_and":
                if name not in ("logical_or",):
                    kw["initial"] = initial
            result = fast(x, axis=axes, **kw)
            if dtype is not None:
                result = lax.convert_element_type(result, np.dtype(dtype))
        else:
            if where is not True:
                raise NotImplementedError(
                    f"mjnp {name}.reduce: where= is supported only for add, multiply, maximum, "
                    "minimum, logical_and and logical_or"
                )
            result = x
            for ax in sorted(axes, reverse=True):
                result = self._fold(result, ax, dtype, initial, accumulate=False)
            if keepdims:
                result = reshape(
                    result, tuple(1 if i in axes else d for i, d in enumerate(x.shape))
                )
        return write_out(f"{name}.reduce", out, result)

    def accumulate(self, array: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Array:
        """The running results of the ufunc along `axis`, as `numpy.ufunc.accumulate`."""
        self._binary("accumulate")
        name = self.__name__
        x = asarray_strong(name, array)
        if x.ndim == 0:
            raise TypeError("cannot accumulate on a scalar")
        ax = normalize_axis(f"{name}.accumulate", axis, x.ndim, allow_bool=False)
        if name in ("add", "multiply"):  # with NumPy's upcast of small integers and bool
            cumulative = cumsum if name == "add" else cumprod
            return write_out(f"{name}.accumulate", out, cumulative(x, axis=ax, dtype=dtype))
        target = np.dtype(dtype) if dtype is not None else _result_dtype(self, x)
        if name in _ACCUMULATE and x.shape[ax]:
            result = _ACCUMULATE[name](lax.convert_element_type(x, target), ax)
        else:
            result = self._fold(x, ax, target, None, accumulate=True)
        return write_out(f"{name}.accumulate", out, result)

    def _fold(self, x: Array, ax: int, dtype: Any, initial: Any, *, accumulate: bool) -> Array:
        """NumPy's loop: `acc = op(acc, x[i])` left to right along `ax` (by `mjcore.scan`)."""
        target = np.dtype(dtype) if dtype is not None else _result_dtype(self, x)
        moved = lax.convert_element_type(moveaxis(x, ax, 0), target)
        n = moved.shape[0]
        if initial is not None and not accumulate:
            first = lax.full(moved.shape[1:], initial, target)
            rest = moved
        elif n == 0:
            return lax.convert_element_type(moveaxis(moved, 0, ax), target)
        else:
            first = lax.squeeze(lax.slice_in_dim(moved, 0, 1, 0), (0,))
            rest = lax.slice_in_dim(moved, 1, n, 0)

        if rest.shape[0] == 0:  # nothing to fold in (and no zero-length scan)
            return moveaxis(lax.expand_dims(first, (0,)), 0, ax) if accumulate else first

        def step(acc: Array, item: Array) -> tuple[Array, Array]:
            new = lax.convert_element_type(self(acc, item), target)
            return new, new

        last, running = scan(step, first, rest)
        if not accumulate:
            return last
        running = lax.concatenate([lax.expand_dims(first, (0,)), running], 0)
        return moveaxis(running, 0, ax)

    def outer(self, A: Any, B: Any, /, **kwargs: Any) -> Array:  # noqa: N803  (NumPy's names)
        """`ufunc(A[..., None, ...], B)` for every pair of elements, as `numpy.ufunc.outer`."""
        self._binary("outer")
        a = asarray_strong(self.__name__, A)
        b = asarray_strong(self.__name__, B)
        return self(reshape(a, a.shape + (1,) * b.ndim), b, **kwargs)

    def at(self, a: Any, indices: Any, b: Any = None, /) -> None:
        """Apply the ufunc at `a[indices]` unbuffered (repeated indices apply again), as
        `numpy.ufunc.at`; rebinds the handle `a`, as mjnp's in-place syntax does."""
        name = self.__name__
        if self.nin == 2 and b is None:
            raise ValueError(f"second operand needed for ufunc {name}")
        if self.nin == 1 and b is not None:
            raise ValueError(f"second operand provided when ufunc is unary: {name}")
        x = asarray_strong(name, a)
        scatter = _AT.get(name)
        if scatter is not None:
            values = self(getitem(x, indices), b)  # NumPy's result dtype and casting checks
            del values
            new = getattr(_at(x)[indices], scatter)(b)
        else:
            entries = _index_entries(indices)
            operand = None if b is None else asarray_strong(name, b)
            per_entry = operand is not None and operand.ndim > 0 and operand.size == len(entries)
            flat_b = reshape(operand, (-1,)) if per_entry else operand
            new = x
            for k, idx in enumerate(entries):
                current = getitem(new, idx)
                if flat_b is None:
                    value = self(current)
                else:
                    value = self(current, getitem(flat_b, k) if per_entry else flat_b)
                new = _at(new)[idx].set(lax.convert_element_type(value, x.dtype))
        rebind(a, new)

    def reduceat(
        self, array: Any, indices: Any, axis: int = 0, dtype: Any = None, out: Any = None
    ) -> Array:
        """Reductions over the slices `indices[i]:indices[i+1]` along `axis` (the element at
        `indices[i]` where the next index is not larger), as `numpy.ufunc.reduceat`. The
        indices must be known (not traced)."""
        self._binary("reduceat")
        name = self.__name__
        x = asarray_strong(name, array)
        ax = normalize_axis(f"{name}.reduceat", axis, x.ndim, allow_bool=False)
        idx = np.asarray(indices)
        if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
            raise TypeError(f"mjnp {name}.reduceat: indices must be a 1-D integer sequence")
        n = x.shape[ax]
        for i in idx:
            if not 0 <= i < n:
                raise IndexError(f"index {i} out-of-bounds in {name}.reduceat [0, {n})")
        target = np.dtype(dtype) if dtype is not None else _result_dtype(self, x)
        pieces = []
        for k, start in enumerate(idx):
            stop = int(idx[k + 1]) if k + 1 < len(idx) else n
            if stop <= start:
                stop = int(start) + 1
                piece = lax.slice_in_dim(x, int(start), stop, ax)
                pieces.append(lax.convert_element_type(piece, target))
            else:
                piece = lax.slice_in_dim(x, int(start), stop, ax)
                pieces.append(self.reduce(piece, axis=ax, dtype=target, keepdims=True))
        if not pieces:
            shape = list(x.shape)
            shape[ax] = 0
            return write_out(f"{name}.reduceat", out, lax.full(tuple(shape), 0, target))
        return write_out(f"{name}.reduceat", out, lax.concatenate(pieces, ax))


def _namespace() -> Any:
    import mjnp  # noqa: PLC0415  (a cycle: mjnp builds its ufuncs from this module)

    return mjnp


def _result_dtype(u: ufunc, x: Array) -> np.dtype:
    """The dtype `u(x, x)` gives (NumPy's accumulate and fold keep it)."""
    probe = lax.full((), 0, x.dtype)
    return np.dtype(u(probe, probe).dtype)


def _reduce_axes(name: str, axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    out = tuple(normalize_axis(f"{name}.reduce", a, ndim, allow_bool=False) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError("duplicate value in 'axis'")
    return out


def _index_entries(indices: Any) -> list[Any]:
    """The single positions an advanced `indices` names, in order (each applied in turn)."""
    if isinstance(indices, tuple):
        arrays = [np.asarray(i) for i in indices]
        if all(a.dtype.kind in "iu" for a in arrays):
            b = np.broadcast_arrays(*arrays)
            return [tuple(int(c[k]) for c in b) for k in np.ndindex(b[0].shape)]
        return [indices]
    arr = np.asarray(indices) if not isinstance(indices, slice) else None
    if arr is not None and arr.dtype.kind in "iu":
        return [int(i) for i in arr.reshape(-1)]
    return [indices]
