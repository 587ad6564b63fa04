"""Views: `a[1:3]`, `a[::3]`, `a[0]`, `a.real`, `a.imag`, `a.T`, `a.reshape(...)` share writes
with `a`, as NumPy's views share memory.

The links, the propagation of writes and the eager host paths of `x[idx]` and `x.T` are
`mjcore.views`'; this module gives them NumPy's recipes (how a view reads its base, and how a
write through it updates the base) and makes the methods.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore import lax
from mjcore.dispatch import host_view
from mjcore.views import detach, has_views, is_view, link, views_of
from mjcore.views import getitem_method as _getitem_method
from mjcore.views import reshape_method as _reshape_method
from mjcore.views import transpose_method as _transpose_method
from mjnp import _indexing, _manipulation
from mjnp._elementwise import imag as _elementwise_imag
from mjnp._elementwise import real as _elementwise_real

__all__ = ["detach", "has_views", "is_view", "link", "views_of"]  # re-exported for mjnp

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


# --- the methods that make views ------------------------------------------------------------

_BASIC_TYPES = (int, np.integer, slice, type(None), type(Ellipsis))
_BASIC_ENTRY_TYPES = frozenset({int, slice, type(None), type(Ellipsis)})  # exact types


def _getitem(self: Array, idx: Any) -> Array:
    """`getitem` past the basic host path: index arrays, tracers, other devices."""
    out = host_view(self, "getitem", idx)  # eagerly on CPU, NumPy's advanced indexing
    if out is None:
        out = _indexing.getitem(self, idx)
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


# `x[idx]`: a basic index (integers, slices, None, ...) gives a view of `x`, as in NumPy; an
# index that selects one element (every axis an integer) gives a scalar, not a view
getitem = _getitem_method(_getitem, _getitem_read, _getitem_write)
# `x.T`: a view with the axes reversed
transposed = _transpose_method(_manipulation.transpose, _permute_read, _permute_write)


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
    nd = self.ndim
    perm = None if not axes else tuple(int(a) % nd for a in axes)
    return link(self, out, _permute_read, _permute_write, perm)


def swapaxes(self: Array, axis1: int, axis2: int) -> Array:
    """`x.swapaxes(i, j)`: a view with two axes interchanged."""
    out = _manipulation.swapaxes(self, axis1, axis2)
    perm = list(range(self.ndim))
    i, j = int(axis1) % self.ndim, int(axis2) % self.ndim
    perm[i], perm[j] = perm[j], perm[i]
    return link(self, out, _permute_read, _permute_write, tuple(perm))


def _reshaped(self: Array, out: Array) -> Array:
    return link(self, out, _reshape_read, _reshape_write, out.aval.shape)


def _reshape(self: Array, *shape: Any, order: str = "C", copy: bool | None = None) -> Array:
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


# eagerly on CPU, a reshape to Python ints is NumPy's, linked in one frame (mjcore.views)
reshape = _reshape_method(_reshape, _reshape_read, _reshape_write)
reshape.__doc__ = _reshape.__doc__


def ravel(self: Array, order: str = "C") -> Array:
    """`x.ravel()`: a view for an array that is not itself a view (see `reshape`)."""
    out = _manipulation.ravel(self, order)
    if order == "F" and self.ndim > 1 or is_view(self):
        return out
    return _reshaped(self, out)


def squeeze(self: Array, axis: Any = None) -> Array:
    """`x.squeeze()`: a view without the size-1 axes (or those in `axis`)."""
    return _reshaped(self, _manipulation.squeeze(self, axis))
