"""Views: `a[1:3]`, `a[::3]`, `a[0]`, `a.real`, `a.imag`, `a.T`, `a.reshape(...)` share writes
with `a`, as NumPy's views share memory.

mjnp arrays are immutable values and in-place syntax rebinds a handle (`mjcore.core.rebind`).
A view is an ordinary array that this module links to its base with two functions: `read`
(the view's value from the base's) and `write` (the base's value with the view's written
into it). `mjcore.core.rebind` calls `_written` after every in-place update, whatever its path
(`v[i] = x`, `v.fill`, `out=v`, `v.sort()`, ...): the write climbs to the root array, then
every live view below the root is read again, so `v = a[1:3]; v[:] = 7` changes `a`, and
`a[1] = 9` changes `v`, as in NumPy.

Links are kept by weak reference, so a view costs nothing once it is gone; a view whose base
is gone is an ordinary array. Under a transformation (`jit`, `vmap`, `grad`) views of traced
values are linked too: `v = x[1:3]; v[:] = 7` inside `jit` updates `x` as it does eagerly
(the write is a functional `x.at[1:3].set(7)` rebound to the handle `x`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from mjcore import core, lax
from mjcore.array import Array as _Array
from mjcore.core import Tracer
from mjcore.dispatch import host_getitem, host_view
from mjnp import _indexing, _manipulation
from mjnp._elementwise import imag as _elementwise_imag
from mjnp._elementwise import real as _elementwise_real

Array = Any


class _Link:
    """How the view `view_ref()` follows its base `base_ref()`."""

    __slots__ = ("base_ref", "read", "view_ref", "write")

    def __init__(
        self,
        view_ref: weakref.ref,
        base_ref: weakref.ref,
        read: Callable[[Array], Array],
        write: Callable[[Array, Array], Array],
    ):
        self.view_ref = view_ref
        self.base_ref = base_ref
        self.read = read
        self.write = write


# id(view) -> its link; id(base) -> the ids of its live views. Entries leave with their
# objects (weak-reference callbacks), so the tables hold only live views.
_LINKS: dict[int, _Link] = {}
_CHILDREN: dict[int, set[int]] = {}
# True while a write is being propagated: the rebinds it makes are not new writes.
_propagating = [False]


def _forget(
    view_id: int,
    base_id: int,
    links: dict[int, _Link] = _LINKS,
    table: dict[int, set[int]] = _CHILDREN,
) -> None:
    # The tables are bound as defaults: at interpreter exit the callbacks outlive the globals.
    links.pop(view_id, None)
    children = table.get(base_id)
    if children is not None:
        children.discard(view_id)
        if not children:
            del table[base_id]


def _linkable(x: Any) -> bool:
    """An Array, or a tracer: a view made under a transformation is linked too, so that a
    write through it reaches its base there as eagerly, never lost (issue 20)."""
    return type(x) is _Array or isinstance(x, Tracer)


def link(
    base: Any,
    view: Any,
    read: Callable[[Array], Array],
    write: Callable[[Array, Array], Array],
) -> Any:
    """Make `view` a view of `base` (arrays or tracers) and return it.

    `read(base)` must give the view's value, and `write(base, v)` the base's value with the
    view's value `v` written into it. Anything else (tracers, `view is base`) is returned as
    it is.
    """
    if view is base or not _linkable(view) or not _linkable(base):
        return view
    view_id, base_id = id(view), id(base)
    if view_id in _LINKS:
        return view
    view_ref = weakref.ref(view, lambda _, v=view_id, b=base_id, forget=_forget: forget(v, b))
    base_ref = weakref.ref(base, lambda _, b=base_id, table=_CHILDREN: table.pop(b, None))
    _LINKS[view_id] = _Link(view_ref, base_ref, read, write)
    _CHILDREN.setdefault(base_id, set()).add(view_id)
    return view


def is_view(x: Any) -> bool:
    """Whether `x` is a live view of another array."""
    entry = _LINKS.get(id(x))
    return entry is not None and entry.base_ref() is not None


def has_views(x: Any) -> bool:
    """Whether some live array is a view of `x`."""
    return bool(_CHILDREN.get(id(x)))


def detach(x: Any) -> None:
    """Cut `x`'s links: it stops being a view, and its views become ordinary arrays."""
    entry = _LINKS.pop(id(x), None)
    if entry is not None:
        base = entry.base_ref()
        if base is not None:
            _forget(id(x), id(base))
    for child_id in _CHILDREN.pop(id(x), set()):
        _LINKS.pop(child_id, None)


def _written(handle: Any) -> None:
    """`rebind`'s hook: carry the new value of `handle` to its base and to every view."""
    if _propagating[0]:
        return
    key = id(handle)
    if key not in _LINKS and key not in _CHILDREN:
        return
    _propagating[0] = True
    try:
        node = handle
        while (entry := _LINKS.get(id(node))) is not None:
            base = entry.base_ref()
            if base is None:
                break
            core.rebind(base, entry.write(base, node))
            node = base
        _refresh(node, handle)
    finally:
        _propagating[0] = False


def _refresh(base: Any, written: Any) -> None:
    """Read every live view below `base` again (`written` already holds its value)."""
    for child_id in list(_CHILDREN.get(id(base), ())):
        entry = _LINKS.get(child_id)
        child = entry.view_ref() if entry is not None else None
        if child is None or type(child) is not type(base):
            continue  # (a traced view of a concrete base, leaked past its trace: not written)
        if child is not written:
            core.rebind(child, entry.read(base))
        _refresh(child, written)


core.rebind_hooks.append(_written)


# --- the methods that make views ------------------------------------------------------------

_BASIC_TYPES = (int, np.integer, slice, type(None), type(Ellipsis))


def getitem(self: Array, idx: Any) -> Array:
    """`x[idx]`; a basic index (integers, slices, None, ...) gives a view of `x`, as in NumPy.

    An index that selects one element (every axis an integer) gives a scalar, not a view.
    """
    out = host_getitem(self, idx)  # eagerly on CPU, NumPy's own view (docs/eager.md)
    if out is None:
        out = _indexing.getitem(self, idx)
    if not _linkable(self):
        return out
    entries = idx if type(idx) is tuple else (idx,)
    for e in entries:
        if not isinstance(e, _BASIC_TYPES) or isinstance(e, bool | np.bool_):
            return out  # advanced indexing copies
    if out.ndim == 0 and not any(e is Ellipsis for e in entries):
        return out
    return link(
        self,
        out,
        lambda base: _indexing.getitem(base, idx),
        lambda base, v: _indexing.at(base)[idx].set(v),
    )


def real(self: Array) -> Array:
    """`x.real`: a view of the real parts of a complex `x` (`x` itself for real `x`)."""
    out = _elementwise_real(self)
    if self.dtype.kind != "c":
        return out
    return link(self, out, lax.real, lambda base, v: lax.complex(v, lax.imag(base)))


def imag(self: Array) -> Array:
    """`x.imag`: a view of the imaginary parts of a complex `x` (zeros for real `x`)."""
    out = _elementwise_imag(self)
    if self.dtype.kind != "c":
        return out
    return link(self, out, lax.imag, lambda base, v: lax.complex(lax.real(base), v))


def _permuted(self: Array, out: Array, perm: tuple[int, ...]) -> Array:
    slots = [0] * len(perm)  # a Python loop: argsort of a short tuple costs ~3 µs
    for i, p in enumerate(perm):
        slots[p] = i
    inverse = tuple(slots)
    return link(
        self,
        out,
        lambda base: lax.transpose(base, perm),
        lambda base, v: lax.transpose(v, inverse),
    )


def transposed(self: Array) -> Array:
    """`x.T`: a view with the axes reversed."""
    out = host_view(self, "T")
    if out is None:
        out = _manipulation.transpose(self)
    return _permuted(self, out, tuple(range(self.ndim))[::-1])


def matrix_transposed(self: Array) -> Array:
    """`x.mT`: a view with the last two axes swapped."""
    if self.ndim < 2:
        raise ValueError(f"matrix transpose with ndim < 2 is undefined (shape {self.shape})")
    return swapaxes(self, -1, -2)


def transpose(self: Array, *axes: Any) -> Array:
    """`x.transpose()`, `x.transpose(1, 0)` or `x.transpose((1, 0))`: a view."""
    if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], int | np.integer)):
        axes = axes[0]
    out = _manipulation.transpose(self, axes if axes else None)
    if not _linkable(self):
        return out
    nd = self.ndim
    perm = tuple(range(nd))[::-1] if not axes else tuple(int(a) % nd for a in axes)
    return _permuted(self, out, perm)


def swapaxes(self: Array, axis1: int, axis2: int) -> Array:
    """`x.swapaxes(i, j)`: a view with two axes interchanged."""
    out = _manipulation.swapaxes(self, axis1, axis2)
    if not _linkable(self):
        return out
    perm = list(range(self.ndim))
    i, j = int(axis1) % self.ndim, int(axis2) % self.ndim
    perm[i], perm[j] = perm[j], perm[i]
    return _permuted(self, out, tuple(perm))


def _reshaped(self: Array, out: Array) -> Array:
    shape = self.shape
    return link(
        self,
        out,
        lambda base: lax.reshape(base, out.shape),
        lambda base, v: lax.reshape(v, shape),
    )


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
