"""Views: arrays that share writes with their base, as NumPy's views share memory, and the eager
host paths that make them. (Autodidax has no views: its arrays are values; this is the
handle-level layer NumPy programs need on top.)

Arrays are immutable values and in-place syntax rebinds a handle (`core.rebind`). A view is an
ordinary array linked to its base by a recipe: `read(base, arg)` (the view's value from the
base's) and `write(base, v, arg)` (the base's value with the view's written into it); the
recipes are the library's (mjnp's indexing, transpose, reshape), passed in as functions.
`core.rebind` calls `_written` after every in-place update, whatever its path (`v[i] = x`,
`v.fill`, `out=v`, `v.sort()`, ...): the write climbs to the root array, then every live view
below the root is read again, so `v = a[1:3]; v[:] = 7` changes `a`, and `a[1] = 9` changes
`v`, as in NumPy.

Making a view is on the hot path (`x.T`, `x[0]`, `x[1:]` take ~0.2 µs in NumPy) and writes
are rare, so a link costs one tuple and one weak reference, in two slots of the arrays
themselves (`Array._link`, `Array._children`): the view holds its base strongly, as NumPy's
`view.base` does, and the base holds its views weakly, in a list pruned of dead ones as it
grows. No callbacks, no global tables: a view and its entries go with the objects.

Under a transformation (`jit`, `vmap`, `grad`) views of traced values are linked too:
`v = x[1:3]; v[:] = 7` inside `jit` updates `x` as it does eagerly (the write is a functional
`x.at[1:3].set(7)` rebound to the handle `x`).

Eagerly on the CPU, `getitem_method` and `transpose_method` make the view from NumPy's own view
of the host value, linked, in one Python frame (see docs/eager.md, "Views").
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from mjcore import core, dispatch
from mjcore.array import Array, new_object
from mjcore.backend import client as backend
from mjcore.core import ShapedArray, Tracer
from mjcore.eager_getitem import getitem_on_tape
from mjcore.eager_vjp import VJPTrace, VJPTracer

# read(base, arg) -> the view's value; write(base, v, arg) -> the base's value with v in it
Recipe = Callable[[Any, Any], Any]
WriteRecipe = Callable[[Any, Any, Any], Any]


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
    return type(x) is Array or isinstance(x, Tracer)


def link(base: Any, view: Any, read: Recipe, write: WriteRecipe, arg: Any = None) -> Any:
    """Make `view` a view of `base` and return it.

    `read(base, arg)` must give the view's value, and `write(base, v, arg)` the base's value
    with the view's value `v` written into it. Anything else (not an Array or tracer, `view is
    base`, an array that is already a view) is returned as it is.
    """
    if view is base or not _linkable(view) or not _linkable(base):
        return view
    # getattr: an Array made without the view slots set reads as unlinked
    if getattr(view, "_link", None) is not None:
        return view
    return _link_new(base, view, read, write, arg)


def _link_new(base: Any, view: Any, read: Any, write: Any, arg: Any) -> Any:
    """`link` for a new Array `view` of an Array `base`. NB: the methods that
    `getitem_method` and `transpose_method` make inline it (a frame is ~10% of `x.T`): keep
    the three alike."""
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


def view_count_bound(x: Any) -> int:
    """How many weak references `x` keeps to its views, dead ones included (for tests of
    the pruning: at most ~2x the live views, and 8)."""
    children = getattr(x, "_children", None) if _linkable(x) else None
    return 0 if children is None else len(children.refs)


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


# --- the eager host paths of `x[idx]` and `x.T` ---------------------------------------------

# `dispatch.host_view_of`'s state, read inline by the methods below (a frame is ~0.1 µs)
_trace_state = core._state
_host_platform = dispatch._host_platform
_view_avals = dispatch._view_avals
_new_view_aval = dispatch.new_view_aval
_VIEW_AVALS_SIZE = dispatch._VIEW_AVALS_SIZE
_SLICE_BOUNDS = frozenset({int, type(None)})
_SCALAR_ENTRIES = frozenset({int, type(None), type(Ellipsis)})
_ndarray = np.ndarray
_transposed_avals: dict[Any, Any] = {}  # aval -> the aval of its `x.T`; bounded
_scalar_avals: dict[Any, Any] = {}  # aval -> the aval of one of its elements; bounded
_asarray = np.asarray


def _on_tape() -> bool:
    """Whether eager grad's tape is the top of the stack, with no dynamic trace: an Array is
    a constant there, and indexing it is eager evaluation (`onehot[t]` in a differentiated
    loop), as a fused function's call on Arrays alone is (`mjcore.eager_fusion`)."""
    return (
        _trace_state.dynamic_trace is None and _trace_state.trace_stack[-1].trace_type is VJPTrace
    )


def getitem_method(
    general: Callable[[Any, Any], Any], read: Recipe, write: WriteRecipe
) -> Callable[[Any, Any], Any]:
    """`x[idx]` as a method: eagerly on the CPU, for a basic index (ints, slices of ints, None,
    Ellipsis), NumPy's view of the host value linked to `x` by `read`/`write` (a single
    element: an unlinked scalar); for index arrays among basic entries, NumPy's advanced
    indexing (a copy, unlinked). Everything else, and any index NumPy rejects, is
    `general(x, idx)` (which raises the library's error)."""

    def getitem_arrays(self: Any, idx: Any, entries: tuple[Any, ...]) -> Any:
        # index arrays (Arrays or ndarrays of ints or bools, with an axis) among basic entries
        values = []
        b = _SLICE_BOUNDS
        for e in entries:
            te = type(e)
            if te is Array:
                aval = e.aval
                if aval.dtype.kind not in "biu" or not aval.shape:
                    return general(self, idx)
                value = e._npy
                values.append(e._value() if value is None else value)
            elif te is _ndarray:
                if e.dtype.kind not in "biu" or not e.ndim:
                    return general(self, idx)
                values.append(e)
            elif te is slice:
                if not (type(e.start) in b and type(e.stop) in b and type(e.step) in b):
                    return general(self, idx)
                values.append(e)
            elif te in _SCALAR_ENTRIES:
                values.append(e)
            else:
                return general(self, idx)
        value = self._npy
        if value is None:
            value = self._value()
        try:
            out = value[tuple(values)]
        except (IndexError, ValueError, TypeError):
            return general(self, idx)  # the general path raises the library's error
        return dispatch.wrap_host_view(out, self.aval)  # a copy: no link

    def getitem(self: Any, idx: Any) -> Any:
        # One frame doing what `host_basic_getitem`, `host_view_of`, `wrap_host_view` and
        # `_link_new` do (keep them alike): `x[1:]` takes ~0.15 µs in NumPy, a frame ~0.1 µs.
        platform = _host_platform
        if (
            type(self) is not Array
            or not (_trace_state.eager or _on_tape())
            or not platform
            or not platform[0]
            or backend.several_devices_in_use
        ):
            if type(self) is VJPTracer:  # a differentiated value on eager grad's tape
                done = getitem_on_tape(self, idx, general)
                if done is not None:
                    out, view = done
                    return link(self, out, read, write, idx) if view else out
            return general(self, idx)
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
                return getitem_arrays(self, idx, idx)
        elif t is slice:
            b = _SLICE_BOUNDS
            if not (type(idx.start) in b and type(idx.stop) in b and type(idx.step) in b):
                return general(self, idx)
        elif t not in _SCALAR_ENTRIES:
            return getitem_arrays(self, idx, (idx,))
        value = self._npy
        if value is None:
            value = self._value()
        try:
            out = value[idx]
        except (IndexError, ValueError, TypeError):
            return general(self, idx)  # the general path raises the library's error
        aval = self.aval
        if type(out) is not _ndarray:
            # A full integer index gives a NumPy scalar: a 0-d array of it, unlinked (one
            # element is a scalar, not a view), its aval cached per base aval.
            scalar_aval = _scalar_avals.get(aval)  # keyed by the aval alone: no tuple to build
            if scalar_aval is None:
                if len(_scalar_avals) >= _VIEW_AVALS_SIZE:
                    _scalar_avals.clear()
                scalar_aval = _scalar_avals[aval] = ShapedArray((), aval.dtype, aval.weak_type)
            a = new_object(Array)
            a._dbuf = None
            a.aval = scalar_aval
            a._npy = _asarray(out)
            a._link = a._children = None
            return a
        shape = out.shape
        if shape != aval.shape:
            aval = _view_avals.get((aval, shape)) or _new_view_aval(aval, shape)
        a = new_object(Array)
        a._dbuf = None
        a.aval = aval
        a._npy = out
        a._children = None
        if not shape and (t is not tuple or Ellipsis not in idx) and idx is not Ellipsis:
            # One element: a scalar, not a view. (`in` compares with ==: safe here, every
            # entry is an int, a slice, None or Ellipsis.)
            a._link = None
            return a
        a._link = (self, read, write, idx)
        children = self._children
        if children is None:
            children = self._children = _Children()
        refs = children.refs
        if len(refs) >= children.limit:
            children.prune()
        refs.append(_weak(a))
        return a

    return getitem


def transpose_method(
    general: Callable[[Any], Any], read: Recipe, write: WriteRecipe
) -> Callable[[Any], Any]:
    """`x.T` as a method: a view with the axes reversed, linked to `x` by `read`/`write` (with
    `arg` None). Eagerly on the CPU, NumPy's `.T` of the host value; otherwise
    `general(x)`'s result (the library's transpose)."""

    def transposed(self: Any) -> Any:
        platform = _host_platform  # `host_view_of` inlined, as in `getitem_method`
        if (
            type(self) is not Array
            or not _trace_state.eager
            or not platform
            or not platform[0]
            or backend.several_devices_in_use
        ):
            out = dispatch.host_view_of(self, "T", None)
            if out is None:
                return link(self, general(self), read, write)
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
                t_aval = ShapedArray(value.shape, aval.dtype, aval.weak_type)
                _transposed_avals[aval] = t_aval
            out = new_object(Array)
            out._dbuf = None
            out.aval = t_aval
            out._npy = value
            out._children = None
        out._link = (self, read, write, None)  # `_link_new` inlined; None: x.T
        children = self._children
        if children is None:
            children = self._children = _Children()
        refs = children.refs
        if len(refs) >= children.limit:
            children.prune()
        refs.append(_weak(out))
        return out

    return transposed


def reshape_method(
    general: Callable[..., Any], read: Recipe, write: WriteRecipe
) -> Callable[..., Any]:
    """`x.reshape(shape)` as a method: eagerly on the CPU, for a C-order reshape (no `copy`) to
    Python ints (`x.reshape(-1)`, `x.reshape(2, 3)`, `x.reshape((2, 3))`), NumPy's reshape of
    the host value, linked to `x` by `read`/`write` (with `arg` the view's shape) unless `x`
    is itself a view (then unlinked, as `general` makes it). Everything else, and any shape
    NumPy rejects, is `general(x, *shape, order=order, copy=copy)`."""

    def reshape(self: Any, *shape: Any, order: str = "C", copy: Any = None) -> Any:
        # `host_view_of`, `wrap_host_view` and `_link_new` in one frame, as `getitem` above
        platform = _host_platform
        if (
            type(self) is not Array
            or order != "C"
            or copy is not None
            or not _trace_state.eager
            or not platform
            or not platform[0]
            or backend.several_devices_in_use
        ):
            return general(self, *shape, order=order, copy=copy)
        if len(shape) == 1 and type(shape[0]) is tuple:
            (shape,) = shape
        for d in shape:
            if type(d) is not int:
                return general(self, *shape, order=order, copy=copy)
        value = self._npy
        if value is None:
            value = self._value()
        try:
            out = value.reshape(shape)
        except (ValueError, TypeError):
            return general(self, shape, order=order, copy=copy)  # raises the library's error
        aval = self.aval
        new_shape = out.shape
        if new_shape != aval.shape:
            aval = _view_avals.get((aval, new_shape)) or _new_view_aval(aval, new_shape)
        a = new_object(Array)
        a._dbuf = None
        a.aval = aval
        a._npy = out
        a._children = None
        if self._link is not None:  # a reshape of a view is a copy (see mjnp's `reshape`)
            a._link = None
            return a
        a._link = (self, read, write, new_shape)
        children = self._children
        if children is None:
            children = self._children = _Children()
        refs = children.refs
        if len(refs) >= children.limit:
            children.prune()
        refs.append(_weak(a))
        return a

    return reshape


def host_view_call(fn: Callable[..., Any], x: Any, *args: Any) -> Any:
    """`fn(host value of x, *args)`, an unlinked Array of `x`'s dtype and weak type, for a
    NumPy function that returns a view of the value (`ndarray.squeeze`, `swapaxes`,
    `numpy.expand_dims`), where `x` is a concrete Array and the call runs eagerly on the CPU;
    None elsewhere and where NumPy raises (the caller's general path then raises its error).
    One frame: `dispatch.host_view_of`'s checks and `wrap_host_view`'s aval cache inlined."""
    platform = _host_platform
    if (
        type(x) is not Array
        or not _trace_state.eager
        or not platform
        or not platform[0]
        or backend.several_devices_in_use
    ):
        return None
    value = x._npy
    if value is None:
        value = x._value()
    try:
        out = fn(value, *args)
    except (ValueError, TypeError, IndexError):
        return None
    if type(out) is not _ndarray:
        out = np.asarray(out)
    aval = x.aval
    shape = out.shape
    if shape != aval.shape:
        aval = _view_avals.get((aval, shape)) or _new_view_aval(aval, shape)
    a = new_object(Array)
    a._dbuf = None
    a.aval = aval
    a._npy = out
    a._link = a._children = None
    return a
