"""Index tricks: `r_`, `c_`, `mgrid`, `ogrid`, `s_`, `index_exp`, `ndindex` and `ndenumerate`;
and the index generators `indices`, `tril_indices`, `triu_indices`, `diag_indices` (with their
`_from` forms), `mask_indices` and `ix_`.

NumPy's "index tricks" build arrays and index tuples with subscript syntax. `r_` and `c_` are
concatenations (`mjnp.concatenate`), so they work on traced values under `jit` and `vmap`;
`mgrid` and `ogrid` have value-dependent shapes, so their slice bounds must be concrete.
NB: mjnp has no matrix type: the matrix forms of NumPy (`r_['r', ...]`, `c_['c', ...]` and the
matrix-builder string `r_['a, b; c, d']`) give the values of NumPy's matrix as a 2-D array.
"""

from __future__ import annotations

import math
import operator
import sys
from collections.abc import Callable, Iterator, Sequence
from itertools import product
from typing import Any

import numpy as np

from mjcore import core, lax
from mjcore.array import Array as _Array
from mjcore.core import Tracer
from mjcore.dtypes import DTypeLike
from mjnp._creation import _dtype, arange, array, asarray, linspace
from mjnp._dtypes import ScalarType
from mjnp._joining import concatenate, stack
from mjnp._manipulation import asarray_strong, astype, reshape, swapaxes, transpose

ArrayLike = Any
Array = Any

_BOOL = np.dtype(bool)
_INT64 = np.dtype("int64")


# --- r_ and c_ ------------------------------------------------------------------------------


def _is_count(step: Any) -> bool:
    """Whether a slice step is complex: `5j` asks for 5 points, stop included."""
    return isinstance(step, complex | np.complexfloating)


def _slice_range(item: slice) -> Array:
    """`start:stop:step` as `arange`, or as `linspace` when the step is complex (`5j`)."""
    start = 0 if item.start is None else item.start
    step = 1 if item.step is None else item.step
    if _is_count(step):
        return linspace(start, item.stop, num=int(abs(step)))
    return arange(start, item.stop, step)


class AxisConcatenator:
    """Translates slices, scalars and arrays in a subscript into a concatenation along an axis.

    Follows `numpy.lib.index_tricks.AxisConcatenator`; use the instances `r_` and `c_`.
    """

    __slots__ = ("axis", "ndmin", "trans1d", "_name")

    def __init__(self, name: str, axis: int = 0, ndmin: int = 1, trans1d: int = -1) -> None:
        self._name = name
        self.axis = axis
        self.ndmin = ndmin
        self.trans1d = trans1d

    def _directive(self, item: str) -> tuple[int, int | None, int | None]:
        """A string directive: (axis, ndmin or None, trans1d or None)."""
        if "," in item:
            parts = item.split(",")
            try:
                axis, ndmin = (int(p) for p in parts[:2])
                trans1d = int(parts[2]) if len(parts) == 3 else None
            except ValueError as err:
                raise ValueError(
                    f"mjnp.{self._name}: unknown special directive {item!r}; expected "
                    "'axis', 'axis,ndmin' or 'axis,ndmin,trans1d' with integers"
                ) from err
            return axis, ndmin, trans1d
        try:
            return int(item), None, None
        except ValueError as err:
            raise ValueError(
                f"mjnp.{self._name}: unknown special directive {item!r}; expected 'r', 'c', "
                "'axis', 'axis,ndmin' or 'axis,ndmin,trans1d' with integers"
            ) from err

    def _from_string(self, key: str, gdict: dict[str, Any], ldict: dict[str, Any]) -> Array:
        """NumPy's matrix builder `r_['a, b; c, d']`: the named arrays of the caller, joined
        along the last axis within a row (`,` or spaces) and then along the first (`;`)."""
        rows = []
        for row in key.split(";"):
            blocks = []
            for name in row.replace(",", " ").split():
                if name in ldict:
                    blocks.append(ldict[name])
                elif name in gdict:
                    blocks.append(gdict[name])
                else:
                    raise NameError(
                        f"mjnp.{self._name}: name {name!r} in the matrix-builder string {key!r} "
                        "is not defined"
                    )
            rows.append(concatenate(blocks, axis=-1))
        return _matrix_values(f"mjnp.{self._name}", concatenate(rows, axis=0))

    def __getitem__(self, key: Any) -> Array:
        if isinstance(key, str):
            caller = sys._getframe(1)
            return self._from_string(key, caller.f_globals, caller.f_locals)
        if not isinstance(key, tuple):
            key = (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        matrix = None  # 'r' or 'c'
        objs, dtype_args = [], []
        for k, item in enumerate(key):
            if isinstance(item, str):
                if k != 0:
                    raise ValueError(
                        f"mjnp.{self._name}: special directives must be the first entry; got "
                        f"{item!r} at position {k}"
                    )
                if item in ("r", "c"):
                    matrix = item
                    continue
                axis, new_ndmin, new_trans1d = self._directive(item)
                ndmin = ndmin if new_ndmin is None else new_ndmin
                trans1d = trans1d if new_trans1d is None else new_trans1d
                continue
            if isinstance(item, slice):
                obj = _slice_range(item)
                if ndmin > 1:
                    obj = array(obj, copy=None, ndmin=ndmin)
                    if trans1d != -1:
                        obj = swapaxes(obj, -1, trans1d)
                dtype_args.append(obj.dtype)
            elif type(item) in ScalarType:
                # Python scalars stay weak in the promotion, as in NumPy.
                obj = item
                dtype_args.append(item)
            else:
                obj = asarray(item)
                item_ndim = obj.ndim
                obj = array(obj, copy=None, ndmin=ndmin)
                if trans1d != -1 and item_ndim < ndmin:
                    k2 = ndmin - item_ndim
                    k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
                    axes = list(range(ndmin))
                    obj = transpose(obj, axes[:k1] + axes[k2:] + axes[k1:k2])
                dtype_args.append(obj.dtype)
            objs.append(obj)
        if dtype_args:
            dtype = np.result_type(*dtype_args)
            objs = [array(obj, dtype, copy=None, ndmin=ndmin) for obj in objs]
        res = concatenate(tuple(objs), axis=axis)
        if matrix is not None:
            res = self._as_matrix(res, matrix)
        return res

    def _as_matrix(self, res: Array, matrix: str) -> Array:
        """The values of `numpy.matrix(res)`, transposed for 'c' on a 1-D result."""
        as_2d = _matrix_values(f"mjnp.{self._name}", res)
        return transpose(as_2d) if matrix == "c" and res.ndim == 1 else as_2d

    def __len__(self) -> int:
        return 0


def _matrix_values(fname: str, res: Array) -> Array:
    """`res` in the 2-D shape `numpy.matrix(res)` gives it: 0-d and 1-D become rows, and more
    dimensions drop their axes of length 0 and 1 if at most two remain."""
    shape = res.shape
    if res.ndim > 2:
        shape = tuple(d for d in shape if d > 1)
        if len(shape) > 2:
            raise ValueError(
                f"{fname}: shape too large to be a matrix: {res.shape} has more than two axes "
                "longer than 1"
            )
    if len(shape) < 2:
        shape = (1, *shape) if shape else (1, 1)
    return reshape(res, shape)


class RClass(AxisConcatenator):
    """Concatenation along the first axis by subscript, as `numpy.r_`.

    `r_[a, b, 0, 1:4, 0:1:5j]` joins arrays, scalars, `arange` slices and `linspace` slices
    (complex step: that many points, stop included). A first string directive sets the axis,
    the minimum dimension and where 1-D entries go: `'0,2'`, `'1,2,0'`, `'-1'`.
    A string alone, `r_['a, b; c, d']`, joins the caller's arrays named there into blocks.
    NB: `'r'`, `'c'` and the string form give a 2-D array, not a `numpy.matrix`.
    """

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("r_", 0)


class CClass(AxisConcatenator):
    """Concatenation along the last axis of at least 2-D entries, as `numpy.c_`.

    Short for `r_['-1,2,0', ...]`: 1-D entries become columns.
    """

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("c_", -1, ndmin=2, trans1d=0)


r_ = RClass()
c_ = CClass()


# --- mgrid and ogrid ------------------------------------------------------------------------


def _concrete(fname: str, bound: Any) -> Any:
    """A slice bound as a host value: an mjnp array becomes a NumPy scalar (or array)."""
    if isinstance(bound, _Array | Tracer):
        # The grid's shape depends on the bounds, so a traced one must have a known value.
        value = core.concrete_or_error(bound, f"mjnp.{fname} (a slice bound sets the shape)")
        return np.asarray(value)[()]
    return bound


class nd_grid:  # noqa: N801  (NumPy's name)
    """Dense or open mesh grids by subscript; use the instances `mgrid` and `ogrid`.

    Follows `numpy.lib.index_tricks.nd_grid`: `start:stop:step` is `arange(start, stop, step)`
    and a complex step `start:stop:5j` is `linspace(start, stop, 5)`.
    """

    __slots__ = ("sparse", "_name")

    def __init__(self, sparse: bool = False) -> None:
        self.sparse = sparse
        self._name = "ogrid" if sparse else "mgrid"

    def _not_a_slice(self, item: Any) -> AttributeError:
        # NB: AttributeError, as NumPy raises (it reads `item.step`).
        return AttributeError(
            f"mjnp.{self._name}: each index must be a slice with a stop, such as 0:5 or "
            f"0:1:5j; got {item!r}"
        )

    def __getitem__(self, key: Any) -> Array | tuple[Array, ...]:
        if isinstance(key, tuple | list):
            return self._grid(key)
        if not isinstance(key, slice):
            raise self._not_a_slice(key)
        start = 0 if key.start is None else _concrete(self._name, key.start)
        stop = _concrete(self._name, key.stop)
        step = _concrete(self._name, key.step)
        if not _is_count(step):
            return arange(start, stop, step)
        length = int(abs(step))
        typ = np.result_type(start, stop, abs(step))
        delta = (stop - start) / float(length - 1) if length != 1 else 1
        return arange(0, length, 1, dtype=typ) * delta + start

    def _grid(self, key: tuple[Any, ...] | list[Any]) -> Array | tuple[Array, ...]:
        sizes, starts, steps, num_list = [], [], [], [0]
        for item in key:
            if not isinstance(item, slice):
                raise self._not_a_slice(item)
            start = 0 if item.start is None else _concrete(self._name, item.start)
            stop = _concrete(self._name, item.stop)
            step = 1 if item.step is None else _concrete(self._name, item.step)
            try:
                if _is_count(step):
                    size = int(abs(step))
                    step = abs(step)
                    delta = (stop - start) / float(size - 1) if size != 1 else 1
                else:
                    size = math.ceil((stop - start) / step)
                    delta = step
            except TypeError as err:
                raise self._not_a_slice(item) from err
            sizes.append(size)
            starts.append(start)
            steps.append(delta)
            num_list += [start, stop, step]
        if min(sizes, default=0) < 0:
            raise ValueError(
                f"mjnp.{self._name}: negative dimensions are not allowed; the slices give sizes "
                f"{tuple(sizes)}"
            )
        typ = np.result_type(*num_list)
        if self.sparse:
            out = []
            for k, (size, start, delta) in enumerate(zip(sizes, starts, steps, strict=True)):
                shape = (1,) * k + (size,) + (1,) * (len(sizes) - k - 1)
                out.append(reshape(arange(size, dtype=typ) * delta + start, shape))
            return tuple(out)
        grid = indices(sizes, typ)
        if not sizes:
            return grid
        return stack(
            [
                astype(grid[k] * delta + start, typ)
                for k, (start, delta) in enumerate(zip(starts, steps, strict=True))
            ]
        )

    def __len__(self) -> int:
        return 0


class MGridClass(nd_grid):
    """A dense mesh grid by subscript, as `numpy.mgrid`: `mgrid[0:2, 0:3]` has shape (2, 2, 3).

    A complex step is a number of points with the stop included: `mgrid[-1:1:5j]`.
    The slice bounds must be concrete (not traced): they set the shape.
    """

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(sparse=False)


class OGridClass(nd_grid):
    """An open mesh grid by subscript, as `numpy.ogrid`: one array per slice, broadcastable.

    `ogrid[0:2, 0:3]` is a tuple of shapes (2, 1) and (1, 3); a single slice gives one array.
    The slice bounds must be concrete (not traced): they set the shape.
    """

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(sparse=True)


mgrid = MGridClass()
ogrid = OGridClass()


# --- s_ and index_exp -----------------------------------------------------------------------


class IndexExpression:
    """Index tuples by subscript, as `numpy.lib.index_tricks.IndexExpression`.

    `s_[1:3, ::2]` is `(slice(1, 3, None), slice(None, None, 2))`; `index_exp` always returns a
    tuple (`index_exp[2]` is `(2,)`, `s_[2]` is `2`).
    """

    __slots__ = ("maketuple",)

    def __init__(self, maketuple: bool) -> None:
        self.maketuple = maketuple

    def __getitem__(self, item: Any) -> Any:
        if self.maketuple and not isinstance(item, tuple):
            return (item,)
        return item


index_exp = IndexExpression(maketuple=True)
s_ = IndexExpression(maketuple=False)


# --- ndindex and ndenumerate ----------------------------------------------------------------


class ndindex:  # noqa: N801  (NumPy's name)
    """An iterator over the index tuples of a shape in C order, as `numpy.ndindex`.

    `ndindex(2, 3)` and `ndindex((2, 3))` yield `(0, 0), (0, 1), ..., (1, 2)`.

    Raises:
        ValueError: for a negative dimension.
    """

    def __init__(self, *shape: Any) -> None:
        if len(shape) == 1 and isinstance(shape[0], tuple):
            shape = shape[0]
        if min(shape, default=0) < 0:
            raise ValueError(
                f"mjnp.ndindex: negative dimensions are not allowed; got shape {shape}"
            )
        self._iter = product(*map(range, shape))

    def __iter__(self) -> ndindex:
        return self

    def __next__(self) -> tuple[int, ...]:
        return next(self._iter)


class ndenumerate:  # noqa: N801  (NumPy's name)
    """An iterator of `(index, value)` pairs over an array in C order, as `numpy.ndenumerate`.

    For a concrete array the values are NumPy scalars read from one host copy, as NumPy yields
    them. For a traced value (under `jit` or `vmap`) they are 0-d traced values `arr[index]`.
    """

    def __init__(self, arr: Any) -> None:
        if isinstance(arr, Tracer):
            traced: Any = arr
            self._traced: Iterator[tuple[tuple[int, ...], Any]] | None = (
                (index, traced[index]) for index in ndindex(traced.shape)
            )
        else:
            self._traced = None
            self._flat = np.asarray(arr).flat

    def __iter__(self) -> ndenumerate:
        return self

    def __next__(self) -> tuple[tuple[int, ...], Any]:
        if self._traced is not None:
            return next(self._traced)
        return self._flat.coords, next(self._flat)


# --- index generators -----------------------------------------------------------------------


def indices(
    dimensions: Sequence[int], dtype: DTypeLike = int, sparse: bool = False
) -> Array | tuple[Array, ...]:
    """An array of the indices of a grid (or one index array per axis), as `numpy.indices`."""
    dims = tuple(operator.index(d) for d in dimensions)
    dt = _dtype("indices", dtype)
    n = len(dims)
    grids = []
    for i, d in enumerate(dims):
        shape = tuple(d if j == i else 1 for j in range(n))
        idx = lax.reshape(lax.iota(dt, d), shape)
        grids.append(idx if sparse else lax.broadcast_to(idx, dims))
    if sparse:
        return tuple(grids)
    if not grids:
        return lax.full((0,), 0, dt)
    return lax.concatenate([lax.expand_dims(g, (0,)) for g in grids], 0)


def _host_indices(values: tuple[np.ndarray, ...]) -> tuple[Array, ...]:
    return tuple(asarray(v) for v in values)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """Row and column indices of the lower triangle, as `numpy.tril_indices`."""
    return _host_indices(np.tril_indices(n, k, m))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """Row and column indices of the upper triangle, as `numpy.triu_indices`."""
    return _host_indices(np.triu_indices(n, k, m))


def _shape_of(fname: str, arr: ArrayLike) -> tuple[int, ...]:
    if isinstance(arr, _Array | Tracer):
        return tuple(arr.shape)
    return tuple(asarray_strong(fname, arr).shape)


def tril_indices_from(arr: ArrayLike, k: int = 0) -> tuple[Array, Array]:
    """`tril_indices` for the shape of a 2-d `arr`, as `numpy.tril_indices_from`."""
    shape = _shape_of("tril_indices_from", arr)
    if len(shape) != 2:
        raise ValueError(f"mjnp.tril_indices_from: input array must be 2-d, got shape {shape}")
    return tril_indices(shape[-2], k=k, m=shape[-1])


def triu_indices_from(arr: ArrayLike, k: int = 0) -> tuple[Array, Array]:
    """`triu_indices` for the shape of a 2-d `arr`, as `numpy.triu_indices_from`."""
    shape = _shape_of("triu_indices_from", arr)
    if len(shape) != 2:
        raise ValueError(f"mjnp.triu_indices_from: input array must be 2-d, got shape {shape}")
    return triu_indices(shape[-2], k=k, m=shape[-1])


def diag_indices(n: int, ndim: int = 2) -> tuple[Array, ...]:
    """Indices of the main diagonal of an `ndim`-d array of side `n`, as `numpy.diag_indices`."""
    return _host_indices(np.diag_indices(n, ndim))


def diag_indices_from(arr: ArrayLike) -> tuple[Array, ...]:
    """`diag_indices` for the shape of `arr`, as `numpy.diag_indices_from`."""
    shape = _shape_of("diag_indices_from", arr)
    if len(shape) < 2:
        raise ValueError("mjnp.diag_indices_from: input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError(
            f"mjnp.diag_indices_from: All dimensions of input must be of equal length, got {shape}"
        )
    return diag_indices(shape[0], len(shape))


def mask_indices(n: int, mask_func: Callable[..., Any], k: int = 0) -> tuple[Array, ...]:
    """Indices where `mask_func(ones((n, n)), k)` is nonzero, as `numpy.mask_indices`.

    `mask_func` is called on an mjnp array (e.g. `mjnp.triu`); its result must be concrete.
    """
    ones = lax.full((operator.index(n),) * 2, 1, _INT64)
    mask = np.asarray(core.concrete_or_error(asarray(mask_func(ones, k)), "mjnp.mask_indices"))
    return _host_indices(np.nonzero(mask != 0))


def ix_(*args: ArrayLike) -> tuple[Array, ...]:
    """Open-mesh index arrays from 1-d sequences, as `numpy.ix_`.

    Boolean sequences become the indices of their True entries, so they must be concrete.
    """
    nd = len(args)
    out = []
    for k, a in enumerate(args):
        new = asarray_strong("ix_", a)
        if new.size == 0 and not isinstance(a, _Array | Tracer | np.ndarray):
            new = lax.convert_element_type(new, _INT64)
        if new.ndim != 1:
            raise ValueError("mjnp.ix_: Cross index must be 1 dimensional")
        if new.dtype == _BOOL:
            host = np.asarray(core.concrete_or_error(new, "mjnp.ix_"))
            new = asarray(np.nonzero(host)[0])
        out.append(lax.reshape(new, (1,) * k + (new.shape[0],) + (1,) * (nd - k - 1)))
    return tuple(out)
