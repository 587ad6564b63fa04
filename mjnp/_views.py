"""Views: `a[1:3]`, `a[::3]`, `a[0]`, `a.real`, `a.imag`, `a.T`, `a.reshape(...)` share writes
with `a`, as NumPy's views share memory.

mjnp arrays are immutable values and in-place syntax rebinds a handle (`mjcore.core.rebind`).
A view is an ordinary array linked to its base by a recipe: `read` (the view's value from the
base's) and `write` (the base's value with the view's written into it). `mjcore.core.rebind`
calls `_written` after every in-place update, whatever its path (`v[i] = x`, `v.fill`,
`out=v`, `v.sort()`, ...): the write climbs to the root array, then every live view below the
root is read again, so `v = a[1:3]; v[:] = 7` changes `a`, and `a[1] = 9` changes `v`, as in
NumPy.

Making a view is on the hot path (`x.T`, `x[0]`, `x[1:]` take ~0.2 µs in NumPy) and writes
are rare, so a link costs one tuple and one weak reference, in two slots of the arrays
themselves (`Array._link`, `Array._children`): the view holds its base strongly, as NumPy's
`view.base` does, and the base holds its views weakly, in a list pruned of dead ones as it
grows. No callbacks, no global tables: a view and its entries go with the objects.

Under a transformation (`jit`, `vmap`, `grad`) views of traced values are linked too:
`v = x[1:3]; v[:] = 7` inside `jit` updates `x` as it does eagerly (the write is a functional
`x.at[1:3].set(7)` rebound to the handle `x`).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from mjcore import core, lax
from mjcore import dispatch as _dispatch
from mjcore.array import Array as _Array
from mjcore.array import new_object as _new_object
from mjcore.backend import client as _backend
from mjcore.core import Tracer
from mjcore.dispatch import host_view, host_view_of, wrap_host_view
from mjnp import _indexing, _manipulation
from mjnp._elementwise import imag as _elementwise_imag
from mjnp._elementwise import real as _elementwise_real

Array = Any


# --- recipes: read(base, arg) is the view's value; write(base, v, arg) the base's with v in it


def _getitem_read(base: Array, idx: Any) -> Array:
    return _indexing.getitem(base, idx)


def _getitem_write(base: Array, v: Array, idx: Any) -> Array:
    return _indexing.at(base)[idx].set(v)


def _real_read(base: Array, _: Any) -> Array:
    return lax.real(base)


def _real_write(base: Array, v: Array, _: Any) -> Array:
    return lax.complex(v, lax.imag(base))


def _imag_read(base: Array, _: Any) -> Array:
    return lax.imag(base)


def _imag_write(base: Array, v: Array, _: Any) -> Array:
    return lax.complex(lax.real(base), v)


def _perm(base: Array, perm: tuple[int, ...] | None) -> tuple[int, ...]:
    return tuple(range(base.ndim))[::-1] if perm is None else perm  # None: `x.T`


def _permute_read(base: Array, perm: tuple[int, ...] | None) -> Array:
    return lax.transpose(base, _perm(base, perm))


def _permute_write(base: Array, v: Array, perm: tuple[int, ...] | None) -> Array:
    slots = [0] * base.ndim
    for i, p in enumerate(_perm(base, perm)):
        slots[p] = i
    return lax.transpose(v, tuple(slots))


def _reshape_read(base: Array, shape: tuple[int, ...]) -> Array:
    return lax.reshape(base, shape)


def _reshape_write(base: Array, v: Array, _: Any) -> Array:
    return lax.reshape(v, base.shape)


# --- links ----------------------------------------------------------------------------------


class _Children:
    """A base's views, by weak reference; dead ones are dropped when the list doubles."""

    __slots__ = ("limit", "refs")

    def __init__(self) -> None:
        self.refs: list[weakref.ref] = []
        self.limit = 8

    def prune(self) -> None:
        # amortised O(1) a view: the list holds at most ~2x the live views (and 8)
        refs = self.refs
        n = len(refs)
        # One slice assignment: a view another thread appends meanwhile (past n) is kept.
        refs[:n] = [r for r in refs[:n] if r() is not None]
        self.limit = max(8, 2 * len(refs))

    def live(self) -> list[Any]:
        return [v for r in self.refs if (v := r()) is not None]


_weak = weakref.ref


def _linkable(x: Any) -> bool:
    """An Array, or a tracer: a view made under a transformation is linked too, so that a
    write through it reaches its base there as eagerly, never lost (issue 20)."""
    return type(x) is _Array or isinstance(x, Tracer)


def link(base: Any, view: Any, read: Any, write: Any, arg: Any = None) -> Any:
    """Make `view` a view of `base` (both concrete arrays) and return it.

    `read(base, arg)` must give the view's value, and `write(base, v, arg)` the base's value
    with the view's value `v` written into it. Anything else (tracers, `view is base`, an array
    that is already a view) is returned as it is.
    """
    if view is base or not _linkable(view) or not _linkable(base):
        return view
    # getattr: an Array made without the view slots set reads as unlinked
    if getattr(view, "_link", None) is not None:
        return view
    return _link_new(base, view, read, write, arg)


def _link_new(base: Any, view: Any, read: Any, write: Any, arg: Any) -> Any:
    """`link` for a new Array `view` of an Array `base`. NB: `getitem` and `transposed`
    inline it (a frame is ~10% of `x.T`): keep the three alike."""
    view._link = (base, read, write, arg)
    children = getattr(base, "_children", None)  # None also for an Array made without it
    if children is None:
        children = base._children = _Children()
    refs = children.refs
    if len(refs) >= children.limit:
        children.prune()
    refs.append(_weak(view))
    return view


def is_view(x: Any) -> bool:
    """Whether `x` is a view of another array."""
    return _linkable(x) and getattr(x, "_link", None) is not None


def views_of(x: Any) -> list[Any]:
    """The live arrays made as views of `x` (not their own views)."""
    children = getattr(x, "_children", None) if _linkable(x) else None
    if children is None:
        return []
    return [v for v in children.live() if v._link is not None and v._link[0] is x]


def has_views(x: Any) -> bool:
    """Whether some live array is a view of `x`."""
    return bool(views_of(x))


def detach(x: Any) -> None:
    """Cut `x`'s links: it stops being a view, and its views become ordinary arrays."""
    if not _linkable(x):
        return
    for v in views_of(x):
        v._link = None
    x._link = None
    x._children = None


# True while a write is being propagated: the rebinds it makes are not new writes.
_propagating = [False]


def _written(handle: Any) -> None:
    """`rebind`'s hook: carry the new value of `handle` to its base and to every view."""
    if _propagating[0] or not _linkable(handle):
        return
    if getattr(handle, "_link", None) is None and getattr(handle, "_children", None) is None:
        return
    _propagating[0] = True
    try:
        node = handle
        while (entry := getattr(node, "_link", None)) is not None:
            base, _, write, arg = entry
            core.rebind(base, write(base, node, arg))
            node = base
        _refresh(node, handle)
    finally:
        _propagating[0] = False


def _refresh(base: Any, written: Any) -> None:
    """Read every live view below `base` again (`written` already holds its value)."""
    for child in views_of(base):
        if type(child) is not type(base):
            continue  # (a traced view of a concrete base, leaked past its trace: not written)
        if child is not written:
            _, read, _, arg = child._link
            core.rebind(child, read(base, arg))
        _refresh(child, written)


core.rebind_hooks.append(_written)


# --- the methods that make views ------------------------------------------------------------

_BASIC_TYPES = (int, np.integer, slice, type(None), type(Ellipsis))
_BASIC_ENTRY_TYPES = frozenset({int, slice, type(None), type(Ellipsis)})  # exact types


# `host_view_of`'s state, read inline by `getitem` and `transposed` (see there)
_trace_state = core._state
_host_platform = _dispatch._host_platform
_view_avals = _dispatch._view_avals
_VIEW_AVALS_SIZE = _dispatch._VIEW_AVALS_SIZE
_SLICE_BOUNDS = frozenset({int, type(None)})
_SCALAR_ENTRIES = frozenset({int, type(None), type(Ellipsis)})
_ShapedArray = core.ShapedArray
_ndarray = np.ndarray
_transposed_avals: dict[Any, Any] = {}  # aval -> the aval of its `x.T`; bounded


def getitem(self: Array, idx: Any) -> Array:
    """`x[idx]`; a basic index (integers, slices, None, ...) gives a view of `x`, as in NumPy.

    An index that selects one element (every axis an integer) gives a scalar, not a view.
    """
    # Eagerly on CPU, NumPy's own view of the host value (docs/eager.md). This one frame does
    # what `host_basic_getitem`, `host_view_of`, `wrap_host` and `_link_new` do (keep them
    # alike): `x[1:]` takes ~0.15 µs in NumPy, and each Python frame ~0.1 µs more.
    platform = _host_platform
    if (
        type(self) is not _Array
        or not _trace_state.eager
        or not platform
        or not platform[0]
        or _backend.several_devices_in_use
    ):
        return _getitem(self, idx)
    t = type(idx)
    if t is tuple:
        b = _SLICE_BOUNDS
        for e in idx:
            te = type(e)
            if te is slice:
                if type(e.start) in b and type(e.stop) in b and type(e.step) in b:
                    continue
            elif te in _SCALAR_ENTRIES:
                continue
            return _getitem_arrays(self, idx, idx)
    elif t is slice:
        b = _SLICE_BOUNDS
        if not (type(idx.start) in b and type(idx.stop) in b and type(idx.step) in b):
            return _getitem(self, idx)
    elif t not in _SCALAR_ENTRIES:
        return _getitem_arrays(self, idx, (idx,))
    value = self._npy
    if value is None:
        value = self._value()
    try:
        out = value[idx]
    except (IndexError, ValueError, TypeError):
        return _getitem(self, idx)  # the general path raises mjnp's error
    aval = self.aval
    if type(out) is not _ndarray:  # a full integer index gives a NumPy scalar
        out = np.asarray(out)
    shape = out.shape
    if shape != aval.shape:
        key = (aval, shape)
        view_aval = _view_avals.get(key)
        if view_aval is None:
            if len(_view_avals) >= _VIEW_AVALS_SIZE:
                _view_avals.clear()
            view_aval = _view_avals[key] = _ShapedArray(shape, aval.dtype, aval.weak_type)
        aval = view_aval
    a = _new_object(_Array)
    a._dbuf = None
    a.aval = aval
    a._npy = out
    a._children = None
    if not shape and (t is not tuple or Ellipsis not in idx) and idx is not Ellipsis:
        # One element: a scalar, not a view. (`in` compares with ==: safe here, every entry
        # is an int, a slice, None or Ellipsis.)
        a._link = None
        return a
    a._link = (self, _getitem_read, _getitem_write, idx)
    children = self._children
    if children is None:
        children = self._children = _Children()
    refs = children.refs
    if len(refs) >= children.limit:
        children.prune()
    refs.append(_weak(a))
    return a


def _getitem_arrays(self: Array, idx: Any, entries: tuple[Any, ...]) -> Array:
    """`getitem` of an eager CPU Array with index arrays (NumPy's advanced indexing, a copy:
    no link) among basic entries, as `_getitem` computes it through `host_view`, in one frame
    (`x[rows, cols]`: ~0.8 µs less). Anything else goes to `_getitem`."""
    values = []
    b = _SLICE_BOUNDS
    for e in entries:
        te = type(e)
        if te is _Array:
            aval = e.aval
            if aval.dtype.kind not in "biu" or not aval.shape:
                return _getitem(self, idx)
            value = e._npy
            values.append(e._value() if value is None else value)
        elif te is _ndarray:
            if e.dtype.kind not in "biu" or not e.ndim:
                return _getitem(self, idx)
            values.append(e)
        elif te is slice:
            if not (type(e.start) in b and type(e.stop) in b and type(e.step) in b):
                return _getitem(self, idx)
            values.append(e)
        elif te in _SCALAR_ENTRIES:
            values.append(e)
        else:
            return _getitem(self, idx)
    value = self._npy
    if value is None:
        value = self._value()
    try:
        out = value[tuple(values)]
    except (IndexError, ValueError, TypeError):
        return _getitem(self, idx)  # the general path raises mjnp's error
    return wrap_host_view(out, self.aval)  # a copy: no link


def _getitem(self: Array, idx: Any) -> Array:
    """`getitem` past the basic host path: index arrays, tracers, other devices."""
    out = host_view(self, "getitem", idx)  # eagerly on CPU, NumPy's advanced indexing
    if out is None:
        out = _indexing.getitem(self, idx)
    if not _linkable(self) or not _linkable(out):
        return out
    entries = idx if type(idx) is tuple else (idx,)
    for e in entries:
        if type(e) not in _BASIC_ENTRY_TYPES and (
            not isinstance(e, _BASIC_TYPES) or isinstance(e, bool | np.bool_)
        ):
            return out  # advanced indexing copies
    if not out.aval.shape:
        for e in entries:
            if e is Ellipsis:
                break
        else:
            return out
    return link(self, out, _getitem_read, _getitem_write, idx)


def real(self: Array) -> Array:
    """`x.real`: a view of the real parts of a complex `x` (`x` itself for real `x`)."""
    out = _elementwise_real(self)
    if self.dtype.kind != "c":
        return out
    return link(self, out, _real_read, _real_write)


def imag(self: Array) -> Array:
    """`x.imag`: a view of the imaginary parts of a complex `x` (zeros for real `x`)."""
    out = _elementwise_imag(self)
    if self.dtype.kind != "c":
        return out
    return link(self, out, _imag_read, _imag_write)


def transposed(self: Array) -> Array:
    """`x.T`: a view with the axes reversed."""
    platform = _host_platform  # `host_view_of` inlined, as in `getitem`
    if (
        type(self) is not _Array
        or not _trace_state.eager
        or not platform
        or not platform[0]
        or _backend.several_devices_in_use
    ):
        out = host_view_of(self, "T", None)
        if out is None:
            return link(self, _manipulation.transpose(self), _permute_read, _permute_write)
    else:
        value = self._npy
        if value is None:
            value = self._value()
        value = value.T
        aval = self.aval
        t_aval = _transposed_avals.get(aval)  # keyed by the aval alone: ~0.1 µs less
        if t_aval is None:
            if len(_transposed_avals) >= _VIEW_AVALS_SIZE:
                _transposed_avals.clear()
            t_aval = _transposed_avals[aval] = _ShapedArray(value.shape, aval.dtype, aval.weak_type)
        aval = t_aval
        out = _new_object(_Array)
        out._dbuf = None
        out.aval = aval
        out._npy = value
        out._children = None
    out._link = (self, _permute_read, _permute_write, None)  # `_link_new` inlined; None: x.T
    children = self._children
    if children is None:
        children = self._children = _Children()
    refs = children.refs
    if len(refs) >= children.limit:
        children.prune()
    refs.append(_weak(out))
    return out


def matrix_transposed(self: Array) -> Array:
    """`x.mT`: a view with the last two axes swapped."""
    if self.ndim < 2:
        raise ValueError(f"matrix transpose with ndim < 2 is undefined (shape {self.shape})")
    return swapaxes(self, -1, -2)


def transpose(self: Array, *axes: Any) -> Array:
    """`x.transpose()`, `x.transpose(1, 0)` or `x.transpose((1, 0))`: a view."""
    if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], int | np.integer)):
        (axes,) = axes  # (a sequence, or None)
    out = _manipulation.transpose(self, axes if axes else None)
    if not _linkable(self):
        return out
    nd = self.ndim
    perm = None if not axes else tuple(int(a) % nd for a in axes)
    return link(self, out, _permute_read, _permute_write, perm)


def swapaxes(self: Array, axis1: int, axis2: int) -> Array:
    """`x.swapaxes(i, j)`: a view with two axes interchanged."""
    out = _manipulation.swapaxes(self, axis1, axis2)
    if not _linkable(self):
        return out
    perm = list(range(self.ndim))
    i, j = int(axis1) % self.ndim, int(axis2) % self.ndim
    perm[i], perm[j] = perm[j], perm[i]
    return link(self, out, _permute_read, _permute_write, tuple(perm))


def _reshaped(self: Array, out: Array) -> Array:
    if not _linkable(out):
        return out
    return link(self, out, _reshape_read, _reshape_write, out.aval.shape)


def reshape(self: Array, *shape: Any, order: str = "C", copy: bool | None = None) -> Array:
    """`x.reshape(2, 3)` or `x.reshape((2, 3))`, as `numpy.ndarray.reshape`.

    A C-order reshape of an array that is not itself a view is a view, as in NumPy.
    NB: a reshape of a view is a copy here (NumPy makes a view where the view's memory
    layout allows it).
    """
    if len(shape) == 1 and not isinstance(shape[0], int | np.integer):
        shape = shape[0]
    out = None
    if order == "C" and copy is None and type(shape) is tuple:
        out = host_view(self, "reshape", shape)
    if out is None:
        out = _manipulation.reshape(self, shape, order=order, copy=copy)
    if copy or order not in ("C", "A") or is_view(self):
        return out
    return _reshaped(self, out)


def ravel(self: Array, order: str = "C") -> Array:
    """`x.ravel()`: a view for an array that is not itself a view (see `reshape`)."""
    out = _manipulation.ravel(self, order)
    if order == "F" and self.ndim > 1 or is_view(self):
        return out
    return _reshaped(self, out)


def squeeze(self: Array, axis: Any = None) -> Array:
    """`x.squeeze()`: a view without the size-1 axes (or those in `axis`)."""
    return _reshaped(self, _manipulation.squeeze(self, axis))
