"""Host callbacks (beyond Autodidax, as JAX's `callback.py` and `debugging.py`): primitives that
call a Python function on host NumPy values, eagerly and from compiled code.

`pure_callback_p` computes results (a pure function the compiler may drop when unused);
`debug_callback_p` has no results and a side effect (it is never dropped). Under `jit` both
lower to jaxlib's CPU Python-callback custom call (`backend.custom_call.python_callback`).

Both primitives carry their Python function in the `callback` parameter, as a flat function
of NumPy arrays: `pure_callback_p`'s returns a sequence of arrays, `debug_callback_p`'s
returns nothing. `vmap` wraps it (`_Sequential`, `_PerExample`) rather than the program.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mjcore import dtypes
from mjcore.backend import client as backend
from mjcore.backend.custom_call import python_callback
from mjcore.backend.hlo import Value
from mjcore.backend.lowering import LoweringContext
from mjcore.batching import NOT_MAPPED, moveaxis_to
from mjcore.core import Primitive, ShapedArray
from mjcore.lax.base import expand_dims
from mjcore.tree_util import PyTreeDef, tree_flatten, tree_unflatten

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all")


@dataclasses.dataclass(frozen=True)
class _FlatCallback:
    """The user's function as a function of flat NumPy arrays (the leaves of `in_tree`).

    Frozen dataclasses compare by value, so retracing the same program gives an equal
    parameter and a cache hit for the compiled program.
    """

    callback: Callable[..., Any]
    in_tree: PyTreeDef
    out_tree: PyTreeDef | None  # None for a debug callback, whose result is ignored

    def __call__(self, *flat_args: np.ndarray) -> Sequence[Any]:
        args, kwargs = tree_unflatten(self.in_tree, list(flat_args))
        out = self.callback(*args, **kwargs)
        if self.out_tree is None:
            return ()
        leaves, tree = tree_flatten(out)
        if tree != self.out_tree:
            raise RuntimeError(
                "pure_callback: the callback returned a value of structure "
                f"{tree}, but result_shape_dtypes has structure {self.out_tree}"
            )
        return leaves


def _check_results(outs: Sequence[Any], avals: Sequence[ShapedArray]) -> tuple[np.ndarray, ...]:
    """The callback's results as NumPy arrays, which must match `avals` exactly."""
    if len(outs) != len(avals):
        raise RuntimeError(
            f"pure_callback: the callback returned {len(outs)} arrays, but "
            f"result_shape_dtypes describes {len(avals)}"
        )
    checked = []
    for i, (x, aval) in enumerate(zip(outs, avals, strict=True)):
        x = np.asarray(x)
        if x.shape != aval.shape or x.dtype != aval.dtype:
            got = f"{x.dtype}{list(x.shape)}"
            raise RuntimeError(
                f"pure_callback: result {i} of the callback has shape and dtype {got}, but "
                f"result_shape_dtypes says {aval.dtype}{list(aval.shape)}. Return exactly "
                "that shape and dtype (e.g. np.asarray(y, dtype))."
            )
        checked.append(np.asarray(x, order="C"))  # NB: ascontiguousarray makes 0-d 1-d
    return tuple(checked)


@dataclasses.dataclass(frozen=True)
class _HostCall:
    """What runs on the host: the flat callback, its arguments copied off the device buffers
    (the callback may keep them), its results checked. An exception is also recorded, so that
    a compiled program raises it rather than XLA's text of it."""

    callback: Callable[..., Any]
    result_avals: tuple[ShapedArray, ...]

    def __call__(self, *args: np.ndarray) -> tuple[np.ndarray, ...]:
        try:
            outs = self.callback(*[np.array(a) for a in args])
            return _check_results(outs, self.result_avals)
        except BaseException as err:
            backend.record_callback_error(err)
            raise


def _host_values(args: Sequence[Any]) -> list[np.ndarray]:
    return [np.asarray(x) for x in args]


# --- pure_callback --------------------------------------------------------------------------

pure_callback_p = Primitive("pure_callback", multiple_results=True)


def pure_callback(
    callback: Callable[..., Any],
    result_shape_dtypes: Any,
    *args: Any,
    vmap_method: str | None = None,
    **kwargs: Any,
) -> Any:
    """Call a pure Python function on host values from traced or compiled code, as JAX's.

    Meaning::

        def pure_callback(callback, result_shape_dtypes, *args, **kwargs):
            return callback(*numpy_values(args), **numpy_values(kwargs))

    `callback` receives NumPy arrays (pytrees of them, as `args` and `kwargs` are) and returns
    a pytree of arrays matching `result_shape_dtypes` (objects with `.shape` and `.dtype`,
    e.g. `ShapeDtypeStruct`) exactly. Being pure, it may be called any number of times, or not
    at all when its results are unused.

    Restrictions: no `jvp`/`grad` (wrap it in `custom_jvp` or `custom_vjp`). Under `vmap`,
    `vmap_method` says how: "sequential" and "sequential_unrolled" call `callback` once per
    example; "expand_dims" calls it once with the batch axis leading on batched arguments
    and a size-1 axis on the others; "broadcast_all" broadcasts every argument to the batch.
    None raises when batched.

    Raises:
      ValueError: for an unknown `vmap_method`.
      RuntimeError: when the callback's results do not match `result_shape_dtypes`.
    """
    if vmap_method not in (*VMAP_METHODS, None):
        raise ValueError(
            f"pure_callback: vmap_method must be one of {list(VMAP_METHODS)} or None, got "
            f"{vmap_method!r}"
        )
    flat_args, in_tree = tree_flatten((args, kwargs))
    shape_dtypes, out_tree = tree_flatten(result_shape_dtypes)
    result_avals = tuple(
        ShapedArray(s.shape, dtypes.canonicalize_dtype(s.dtype, "pure_callback"))
        for s in shape_dtypes
    )
    outs = pure_callback_p.bind(
        *flat_args,
        callback=_FlatCallback(callback, in_tree, out_tree),
        result_avals=result_avals,
        vmap_method=vmap_method,
    )
    return tree_unflatten(out_tree, outs)


@pure_callback_p.def_impl
def _pure_callback_impl(
    *args: Any, callback: Any, result_avals: tuple[ShapedArray, ...], vmap_method: str | None
) -> list[np.ndarray]:
    return list(_HostCall(callback, result_avals)(*_host_values(args)))


@pure_callback_p.def_abstract_eval
def _pure_callback_abstract_eval(
    *avals: ShapedArray,
    callback: Any,
    result_avals: tuple[ShapedArray, ...],
    vmap_method: str | None,
) -> list[ShapedArray]:
    return list(result_avals)


@pure_callback_p.def_lowering
def _pure_callback_lowering(
    ctx: LoweringContext,
    *args: Value,
    callback: Any,
    result_avals: tuple[ShapedArray, ...],
    vmap_method: str | None,
) -> list[Value]:
    host = _HostCall(callback, result_avals)
    return python_callback(ctx.builder, host, args, result_avals, has_side_effect=False)


_NO_DERIVATIVES = (
    "pure_callback does not support differentiation ({}): the compiler cannot see into the "
    "Python function. Wrap the function that calls pure_callback in mjcore.custom_jvp (or "
    "mjcore.custom_vjp) and give its derivative rule there."
)


@pure_callback_p.def_jvp
def _pure_callback_jvp(primals: list[Any], tangents: list[Any], **params: Any) -> Any:
    raise ValueError(_NO_DERIVATIVES.format("jvp, grad"))


@pure_callback_p.def_transpose
def _pure_callback_transpose(cts: list[Any], *args: Any, **params: Any) -> Any:
    raise ValueError(_NO_DERIVATIVES.format("transposition"))


@dataclasses.dataclass(frozen=True)
class _Sequential:
    """A batched callback made of one call per example: batched arguments (batch axis 0) are
    sliced, the others passed whole, and each result is stacked."""

    callback: Callable[..., Any]
    batched: tuple[bool, ...]
    axis_size: int
    example_avals: tuple[ShapedArray, ...] | None  # None for a debug callback

    def __call__(self, *args: np.ndarray) -> Sequence[Any]:
        per_example = []
        for i in range(self.axis_size):
            sliced = [a[i] if b else a for a, b in zip(args, self.batched, strict=True)]
            outs = self.callback(*sliced)
            if self.example_avals is not None:
                per_example.append(_check_results(outs, self.example_avals))
        if self.example_avals is None:
            return ()
        return [
            np.stack([outs[k] for outs in per_example])
            if per_example
            else np.zeros((0, *a.shape), a.dtype)
            for k, a in enumerate(self.example_avals)
        ]


def _batch_axis_first(
    vals: list[Any], dims: list[int | None], axis_size: int
) -> tuple[list[Any], tuple[bool, ...]]:
    """Batched values with their batch axis first (unbatched ones as they are), and which."""
    batched = tuple(d is not NOT_MAPPED for d in dims)
    moved = [
        moveaxis_to(v, d, 0, axis_size) if d is not NOT_MAPPED else v
        for v, d in zip(vals, dims, strict=True)
    ]
    return moved, batched


def _pure_callback_batching(
    vals: list[Any],
    dims: list[int | None],
    *,
    callback: Any,
    result_avals: tuple[ShapedArray, ...],
    vmap_method: str | None,
    axis_size: int,
) -> tuple[list[Any], list[int]]:
    if vmap_method is None:
        raise NotImplementedError(
            "pure_callback under vmap needs a vmap_method: one of 'sequential', "
            "'sequential_unrolled', 'expand_dims' or 'broadcast_all' "
            "(pure_callback(f, shapes, *args, vmap_method=...)); got vmap_method=None."
        )
    batched_avals = tuple(a.update(shape=(axis_size, *a.shape)) for a in result_avals)
    if vmap_method in ("sequential", "sequential_unrolled"):
        # NB: JAX's "sequential" is a `lax.map` over the batch in the program; we loop on the
        # host, which calls the callback with the same values, once per example, in order.
        vals, batched = _batch_axis_first(vals, dims, axis_size)
        callback = _Sequential(callback, batched, axis_size, tuple(result_avals))
    elif vmap_method == "expand_dims":
        vals = [
            expand_dims(v, (0,)) if d is NOT_MAPPED else moveaxis_to(v, d, 0, axis_size)
            for v, d in zip(vals, dims, strict=True)
        ]
    else:  # broadcast_all
        vals = [moveaxis_to(v, d, 0, axis_size) for v, d in zip(vals, dims, strict=True)]
    outs = pure_callback_p.bind(
        *vals, callback=callback, result_avals=batched_avals, vmap_method=vmap_method
    )
    return outs, [0] * len(outs)


_pure_callback_batching.needs_axis_size = True  # type: ignore[attr-defined]
pure_callback_p.def_batching(_pure_callback_batching)


# --- debug_callback -------------------------------------------------------------------------

debug_callback_p = Primitive("debug_callback", multiple_results=True)
debug_callback_p.has_side_effect = True


def debug_callback(callback: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Bind `debug_callback_p` (see `mjcore.debug.callback`)."""
    flat_args, in_tree = tree_flatten((args, kwargs))
    debug_callback_p.bind(*flat_args, callback=_FlatCallback(callback, in_tree, None))


@debug_callback_p.def_impl
def _debug_callback_impl(*args: Any, callback: Any) -> list[Any]:
    callback(*_host_values(args))
    return []


@debug_callback_p.def_abstract_eval
def _debug_callback_abstract_eval(*avals: Any, callback: Any) -> list[ShapedArray]:
    return []


@debug_callback_p.def_lowering
def _debug_callback_lowering(ctx: LoweringContext, *args: Value, callback: Any) -> list[Value]:
    return python_callback(ctx.builder, _HostCall(callback, ()), args, (), has_side_effect=True)


@debug_callback_p.def_jvp
def _debug_callback_jvp(
    primals: list[Any], tangents: list[Any], *, callback: Any
) -> tuple[list[Any], list[Any]]:
    # Only the primal values are shown: the callback runs once, where the primal is computed
    # (under `grad`, in the forward pass).
    debug_callback_p.bind(*primals, callback=callback)
    return [], []


def _debug_callback_batching(
    vals: list[Any], dims: list[int | None], *, callback: Any, axis_size: int
) -> tuple[list[Any], list[int]]:
    # As in JAX, the callback sees one example at a time.
    vals, batched = _batch_axis_first(vals, dims, axis_size)
    debug_callback_p.bind(*vals, callback=_Sequential(callback, batched, axis_size, None))
    return [], []


_debug_callback_batching.needs_axis_size = True  # type: ignore[attr-defined]
debug_callback_p.def_batching(_debug_callback_batching)
