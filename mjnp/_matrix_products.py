"""NumPy's matrix and vector products in the main namespace: matmul, dot, vdot, inner, outer
(all via `lax.dot_general`), tensordot, vecdot, matvec, vecmat, kron, cross and einsum.

(`mjnp.linalg` holds the decompositions and solvers, and the `linalg` forms of these.)"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from mjcore import dtypes, lax
from mjcore.dtypes import DTypeLike
from mjcore.eager_fusion import fuse_eagerly
from mjcore.lax.dot import can_accumulate
from mjcore.lax.precision import canonicalize_precision
from mjnp._host_numpy import with_host_path
from mjnp._manipulation import moveaxis, normalize_axis
from mjnp._out import write_exact_out, write_out
from mjnp._promotion import asarray_arg, promote_args

ArrayLike = Any
Array = Any


def _contract(
    a: Array, b: Array, a_axis: int, b_axis: int, preferred: np.dtype | None = None
) -> Array:
    """`lax.dot_general` over one axis pair, no batch axes: free axes of `a`, then of `b`.

    Bool operands give `any(a & b)`, as NumPy's boolean products do.
    """
    return _dot_general(a, b, (((a_axis,), (b_axis,)), ((), ())), preferred)


def _dot_options(fname: str, precision: Any, preferred_element_type: Any) -> np.dtype | None:
    """JAX's `precision=` (validated; the CPU computes at full precision whatever it says) and
    `preferred_element_type=` (returned as a dtype) of the products."""
    canonicalize_precision(precision)
    if preferred_element_type is None:
        return None
    return dtypes.canonicalize_dtype(preferred_element_type, f"mjnp.{fname}")


def _dot_general(a: Array, b: Array, dims: Any, preferred: np.dtype | None) -> Array:
    """`lax.dot_general` giving `preferred` (JAX's `preferred_element_type`) if set: it
    accumulates in that dtype, after converting the operands when it is of another kind
    (an integer product wanted as floats, as JAX allows)."""
    if preferred is None:
        return lax.dot_general(a, b, dims)
    if a.dtype != b.dtype or not can_accumulate(a.dtype, preferred):
        a, b = lax.convert_element_type(a, preferred), lax.convert_element_type(b, preferred)
    return lax.dot_general(a, b, dims, preferred_element_type=preferred)


def _scaled(product: Array, preferred: np.dtype | None) -> Array:
    """A product computed without `dot_general` (a scalar operand), as `preferred`."""
    return product if preferred is None else lax.convert_element_type(product, preferred)


def _promote(
    fname: str, a: ArrayLike, b: ArrayLike, dtype: DTypeLike | None = None
) -> tuple[Array, Array]:
    """Both operands in their NumPy result dtype (or `dtype`, cast 'same_kind')."""
    a, b = promote_args(fname, a, b)
    if dtype is None:
        dt = a.dtype
    else:
        dt = dtypes.canonicalize_dtype(dtype, f"mjnp.{fname}")
        if not np.can_cast(a.dtype, dt, "same_kind"):
            raise TypeError(
                f"mjnp.{fname}: cannot cast the inputs from {a.dtype.name} to dtype={dt.name} "
                "with casting rule 'same_kind'; cast them with astype first"
            )
    # A strong result even for two Python scalars, as NumPy returns.
    return lax.convert_element_type(a, dt), lax.convert_element_type(b, dt)


@functools.partial(fuse_eagerly, fp_name="matmul")  # errors as NumPy's matmul ufunc
def matmul(
    x1: ArrayLike,
    x2: ArrayLike,
    /,
    out: Any = None,
    *,
    dtype: DTypeLike | None = None,
    precision: Any = None,
    preferred_element_type: DTypeLike | None = None,
) -> Array:
    """Matrix product with NumPy's `matmul` rules.

    A 1-D first (second) operand is a row (column) vector whose added axis is removed from the
    result; leading dimensions are batch dimensions and broadcast against each other. `out=`
    rebinds the given array, with the ufunc rules. `precision` and `preferred_element_type`
    are JAX's (`lax.dot_general`'s).
    """
    preferred = _dot_options("matmul", precision, preferred_element_type)
    result = _matmul(x1, x2, dtype, preferred)
    return write_out("matmul", out, result, "same_kind", broadcast=True)


# Eagerly on the CPU, NumPy's own function on the host values (`mjnp._host_numpy`).
matmul = with_host_path(matmul, np.matmul)


def _matmul(
    x1: ArrayLike, x2: ArrayLike, dtype: DTypeLike | None, preferred: np.dtype | None = None
) -> Array:
    a, b = _promote("matmul", x1, x2, dtype)
    for i, x in enumerate((a, b)):
        if x.ndim == 0:
            raise ValueError(
                f"mjnp.matmul: input operand {i} does not have enough dimensions (has 0, "
                "needs at least 1); use multiply (`*`) for scalars"
            )
    a_shape, b_shape = a.shape, b.shape
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    if a_vec or b_vec:
        # A vector operand contracts directly, with no unit axis added and squeezed: the
        # forms XLA (and the batching and transpose rules) handle best, e.g. under vmap.
        a_axis = a.ndim - 1
        b_axis = 0 if b_vec else b.ndim - 2
        if a_shape[a_axis] != b_shape[b_axis]:
            raise ValueError(
                f"mjnp.matmul: mismatch in the contracted dimension of operands of shapes "
                f"{a_shape} and {b_shape} (size {a_shape[a_axis]} is different from "
                f"{b_shape[b_axis]})"
            )
        return _contract(a, b, a_axis, b_axis, preferred)
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(
            f"mjnp.matmul: mismatch in the contracted dimension of operands of shapes {a_shape} "
            f"and {b_shape} (size {a.shape[-1]} is different from {b.shape[-2]})"
        )
    a_batch, b_batch = a.shape[:-2], b.shape[:-2]
    if not b_batch:
        # (..., n, k) @ (k, m): the batch axes of `a` are free axes, nothing to broadcast.
        result = _contract(a, b, a.ndim - 1, 0, preferred)
    elif not a_batch:
        # (n, k) @ (..., k, m) gives (n, ..., m): move n next to m instead of broadcasting `a`.
        result = _contract(a, b, 1, b.ndim - 2, preferred)
        nb = len(b_batch)
        result = lax.transpose(result, (*range(1, nb + 1), 0, nb + 1))
    else:
        try:
            batch = np.broadcast_shapes(a_batch, b_batch)
        except ValueError as err:
            raise ValueError(
                f"mjnp.matmul: the batch dimensions {a_batch} and {b_batch} of operands of "
                f"shapes {a_shape} and {b_shape} cannot be broadcast together"
            ) from err
        a = lax.broadcast_to(a, (*batch, *a.shape[-2:]))
        b = lax.broadcast_to(b, (*batch, *b.shape[-2:]))
        nb = len(batch)
        batch_dims = tuple(range(nb))
        result = _dot_general(a, b, (((nb + 1,), (nb,)), (batch_dims, batch_dims)), preferred)
    return result


@fuse_eagerly
def dot(
    a: ArrayLike,
    b: ArrayLike,
    out: Any = None,
    *,
    precision: Any = None,
    preferred_element_type: DTypeLike | None = None,
) -> Array:
    """Dot product with NumPy's `dot` rules.

    Scalars multiply; otherwise the last axis of `a` is contracted with the only axis of a 1-D
    `b`, or with the second-to-last axis of `b`, and the result has the free axes of `a` then
    those of `b`. As in NumPy, `out=` must have exactly the result's dtype and shape.
    `precision` and `preferred_element_type` are JAX's (`lax.dot_general`'s).
    """
    preferred = _dot_options("dot", precision, preferred_element_type)
    return write_exact_out("dot", out, _dot(a, b, preferred))


dot = with_host_path(dot, np.dot)


def _dot(a: ArrayLike, b: ArrayLike, preferred: np.dtype | None = None) -> Array:
    a, b = _promote("dot", a, b)
    if a.ndim == 0 or b.ndim == 0:
        return _scaled(lax.mul(a, b), preferred)
    b_axis = 0 if b.ndim == 1 else b.ndim - 2
    if a.shape[-1] != b.shape[b_axis]:
        raise ValueError(
            f"mjnp.dot: shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} "
            f"(dim {a.ndim - 1}) != {b.shape[b_axis]} (dim {b_axis})"
        )
    return _contract(a, b, a.ndim - 1, b_axis, preferred)


@fuse_eagerly
def vdot(
    a: ArrayLike,
    b: ArrayLike,
    /,
    *,
    precision: Any = None,
    preferred_element_type: DTypeLike | None = None,
) -> Array:
    """Dot product of the flattened arrays, conjugating `a`, as `numpy.vdot` (`precision` and
    `preferred_element_type` as JAX's)."""
    preferred = _dot_options("vdot", precision, preferred_element_type)
    a, b = _promote("vdot", a, b)
    if a.size != b.size:
        raise ValueError(
            f"mjnp.vdot: vectors have different lengths: {a.size} (shape {a.shape}) and "
            f"{b.size} (shape {b.shape})"
        )
    a = lax.reshape(a, (a.size,))
    b = lax.reshape(b, (b.size,))
    if dtypes.is_complex(a.dtype):
        a = lax.conj(a)
    return _contract(a, b, 0, 0, preferred)


vdot = with_host_path(vdot, np.vdot)


@fuse_eagerly
def inner(
    a: ArrayLike,
    b: ArrayLike,
    /,
    *,
    precision: Any = None,
    preferred_element_type: DTypeLike | None = None,
) -> Array:
    """Inner product over the last axes, as `numpy.inner` (scalars multiply; `precision` and
    `preferred_element_type` as JAX's)."""
    preferred = _dot_options("inner", precision, preferred_element_type)
    a, b = _promote("inner", a, b)
    if a.ndim == 0 or b.ndim == 0:
        return _scaled(lax.mul(a, b), preferred)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"mjnp.inner: shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} "
            f"(dim {a.ndim - 1}) != {b.shape[-1]} (dim {b.ndim - 1})"
        )
    return _contract(a, b, a.ndim - 1, b.ndim - 1, preferred)


inner = with_host_path(inner, np.inner)


def outer(a: ArrayLike, b: ArrayLike, out: Any = None) -> Array:
    """Outer product of the flattened arrays, as `numpy.outer` (`out=` as for ufuncs)."""
    # `out` (also positional) is written here, never handed to the fused host call.
    result = _outer(a, b)
    return result if out is None else write_out("outer", out, result, "same_kind", broadcast=True)


@functools.partial(fuse_eagerly, host=np.outer)  # on the host: NumPy's one call
def _outer(a: ArrayLike, b: ArrayLike) -> Array:
    a, b = _promote("outer", a, b)
    shape = (a.size, b.size)
    a = lax.broadcast_in_dim(lax.reshape(a, (a.size,)), shape, (0,))
    b = lax.broadcast_in_dim(lax.reshape(b, (b.size,)), shape, (1,))
    return lax.mul(a, b)


# The eager-fusion handles of the fused body (tests and `uses_host` read them).
outer.__wrapped_fused__ = _outer.__wrapped_fused__  # type: ignore[attr-defined]
outer.__fused_runners__ = _outer.__fused_runners__  # type: ignore[attr-defined]


@fuse_eagerly
def tensordot(
    a: ArrayLike,
    b: ArrayLike,
    axes: Any = 2,
    *,
    precision: Any = None,
    preferred_element_type: DTypeLike | None = None,
) -> Array:
    """Sum products over the given axes, as `numpy.tensordot`: `axes=N` pairs the last N axes
    of `a` with the first N of `b`; a pair of sequences names the axes explicitly.
    `precision` and `preferred_element_type` are JAX's."""
    preferred = _dot_options("tensordot", precision, preferred_element_type)
    a, b = _promote("tensordot", a, b)
    a_axes: tuple[Any, ...]
    b_axes: tuple[Any, ...]
    if isinstance(axes, int | np.integer):
        # As NumPy: a's last n axes with b's first n; n <= 0 pairs none (an outer product).
        n = int(axes)
        a_axes, b_axes = tuple(range(-n, 0)), tuple(range(n))
    else:
        try:
            a_axes, b_axes = axes
        except (TypeError, ValueError) as err:
            raise TypeError(f"mjnp.tensordot: axes must be an int or a pair, got {axes!r}") from err
        a_axes = (a_axes,) if isinstance(a_axes, int | np.integer) else tuple(a_axes)
        b_axes = (b_axes,) if isinstance(b_axes, int | np.integer) else tuple(b_axes)
    if len(a_axes) != len(b_axes):
        raise ValueError("mjnp.tensordot: shape-mismatch for sum (axes of unequal length)")
    # Pair by pair, as NumPy checks: an axis out of range raises AxisError (an IndexError, as
    # NumPy's), unless an earlier pair's lengths already differ (ValueError).
    pairs = []
    for ax_a, ax_b in zip(a_axes, b_axes, strict=True):
        i = normalize_axis("mjnp.tensordot", ax_a, a.ndim, allow_bool=False)
        j = normalize_axis("mjnp.tensordot", ax_b, b.ndim, allow_bool=False)
        if a.shape[i] != b.shape[j]:
            raise ValueError(
                f"mjnp.tensordot: shape-mismatch for sum: {a.shape} axis {i} and {b.shape} axis {j}"
            )
        pairs.append((i, j))
    a_axes, b_axes = tuple(i for i, _ in pairs), tuple(j for _, j in pairs)
    if len(set(a_axes)) != len(a_axes) or len(set(b_axes)) != len(b_axes):
        raise ValueError(f"mjnp.tensordot: duplicate axes are not allowed, got axes={axes!r}")
    return _dot_general(a, b, ((a_axes, b_axes), ((), ())), preferred)


def _broadcast_pair(
    fname: str, a: Array, b: Array, a_core: int, b_core: int
) -> tuple[Array, Array]:
    """Broadcast the leading (loop) axes of `a` and `b`, keeping `a_core`/`b_core` core axes."""
    a_loop, b_loop = a.shape[: a.ndim - a_core], b.shape[: b.ndim - b_core]
    try:
        loop = np.broadcast_shapes(a_loop, b_loop)
    except ValueError as err:
        raise ValueError(
            f"mjnp.{fname}: operands could not be broadcast together with shapes {a.shape} and "
            f"{b.shape}"
        ) from err
    a = lax.broadcast_to(a, (*loop, *a.shape[a.ndim - a_core :]))
    b = lax.broadcast_to(b, (*loop, *b.shape[b.ndim - b_core :]))
    return a, b


def _conj_if_complex(x: Array) -> Array:
    return lax.conj(x) if dtypes.is_complex(x.dtype) else x


@fuse_eagerly
def vecdot(
    x1: ArrayLike,
    x2: ArrayLike,
    /,
    out: Any = None,
    *,
    axis: int = -1,
    dtype: DTypeLike | None = None,
) -> Array:
    """Dot product of vectors along `axis`, conjugating `x1`, as `numpy.vecdot` (`out=` as for
    ufuncs)."""
    a, b = _promote("vecdot", x1, x2, dtype)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("mjnp.vecdot: both inputs need at least one dimension")
    a = moveaxis(a, normalize_axis("mjnp.vecdot", axis, a.ndim, allow_bool=False), -1)
    b = moveaxis(b, normalize_axis("mjnp.vecdot", axis, b.ndim, allow_bool=False), -1)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"mjnp.vecdot: input operand 1 has a mismatch in its core dimension: {a.shape[-1]} "
            f"!= {b.shape[-1]}"
        )
    a, b = _broadcast_pair("vecdot", a, b, 1, 1)
    batch = tuple(range(a.ndim - 1))
    dims = (((a.ndim - 1,), (b.ndim - 1,)), (batch, batch))
    result = lax.dot_general(_conj_if_complex(a), b, dims)
    return write_out("vecdot", out, result, "same_kind", broadcast=True)


@fuse_eagerly
def matvec(
    x1: ArrayLike, x2: ArrayLike, /, out: Any = None, *, dtype: DTypeLike | None = None
) -> Array:
    """Matrix-vector product over the last axes, broadcasting the rest, as `numpy.matvec`
    (`out=` as for ufuncs)."""
    a, b = _promote("matvec", x1, x2, dtype)
    if a.ndim < 2 or b.ndim < 1 or a.shape[-1] != b.shape[-1]:
        raise ValueError(f"mjnp.matvec: mismatch in core dimensions: {a.shape} and {b.shape}")
    a, b = _broadcast_pair("matvec", a, b, 2, 1)
    batch = tuple(range(b.ndim - 1))
    result = lax.dot_general(a, b, (((a.ndim - 1,), (b.ndim - 1,)), (batch, batch)))
    return write_out("matvec", out, result, "same_kind", broadcast=True)


@fuse_eagerly
def vecmat(
    x1: ArrayLike, x2: ArrayLike, /, out: Any = None, *, dtype: DTypeLike | None = None
) -> Array:
    """Vector-matrix product (conjugating the vector), as `numpy.vecmat` (`out=` as for
    ufuncs)."""
    a, b = _promote("vecmat", x1, x2, dtype)
    if b.ndim < 2 or a.ndim < 1 or a.shape[-1] != b.shape[-2]:
        raise ValueError(f"mjnp.vecmat: mismatch in core dimensions: {a.shape} and {b.shape}")
    a, b = _broadcast_pair("vecmat", a, b, 1, 2)
    batch = tuple(range(a.ndim - 1))
    dims = (((a.ndim - 1,), (b.ndim - 2,)), (batch, batch))
    result = lax.dot_general(_conj_if_complex(a), b, dims)
    return write_out("vecmat", out, result, "same_kind", broadcast=True)


@fuse_eagerly
def kron(a: ArrayLike, b: ArrayLike) -> Array:
    """Kronecker product, as `numpy.kron`."""
    a, b = promote_args("kron", a, b)
    nd = max(a.ndim, b.ndim)
    a = lax.reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = lax.reshape(b, (1,) * (nd - b.ndim) + b.shape)
    shape = tuple(d for pair in zip(a.shape, b.shape, strict=True) for d in pair)
    a_b = lax.broadcast_in_dim(a, shape, tuple(range(0, 2 * nd, 2)))
    b_b = lax.broadcast_in_dim(b, shape, tuple(range(1, 2 * nd, 2)))
    prod = lax.mul(a_b, b_b) if a.dtype.kind != "b" else lax.bitwise_and(a_b, b_b)
    out = lax.reshape(prod, tuple(x * y for x, y in zip(a.shape, b.shape, strict=True)))
    return lax.convert_element_type(out, out.dtype)


@fuse_eagerly
def cross(
    a: ArrayLike,
    b: ArrayLike,
    axisa: int = -1,
    axisb: int = -1,
    axisc: int = -1,
    axis: int | None = None,
) -> Array:
    """Cross product of 2- or 3-component vectors, as `numpy.cross`."""
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = _promote("cross", a, b)
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError("mjnp.cross: At least one array has zero dimension")
    x = moveaxis(x, normalize_axis("mjnp.cross", axisa, x.ndim), -1)
    y = moveaxis(y, normalize_axis("mjnp.cross", axisb, y.ndim), -1)
    if x.shape[-1] not in (2, 3) or y.shape[-1] not in (2, 3):
        raise ValueError(
            "mjnp.cross: incompatible dimensions for cross product (dimension must be 2 or 3)"
        )
    loop = np.broadcast_shapes(x.shape[:-1], y.shape[:-1])

    def comp(v: Array, i: int) -> Array:
        if i >= v.shape[-1]:
            return lax.full(loop, 0, v.dtype)
        c = lax.squeeze(lax.slice_in_dim(v, i, i + 1, v.ndim - 1), (v.ndim - 1,))
        return lax.broadcast_to(c, loop)

    x0, x1, x2 = (comp(x, i) for i in range(3))
    y0, y1, y2 = (comp(y, i) for i in range(3))
    z = lax.sub(lax.mul(x0, y1), lax.mul(x1, y0))
    if x.shape[-1] == 2 and y.shape[-1] == 2:
        return z
    cx = lax.sub(lax.mul(x1, y2), lax.mul(x2, y1))
    cy = lax.sub(lax.mul(x2, y0), lax.mul(x0, y2))
    out = lax.concatenate([lax.expand_dims(c, (len(loop),)) for c in (cx, cy, z)], len(loop))
    return moveaxis(out, -1, normalize_axis("mjnp.cross", axisc, out.ndim))


def _numpy_cross(
    a: np.ndarray,
    b: np.ndarray,
    axisa: int = -1,
    axisb: int = -1,
    axisc: int = -1,
    axis: Any = None,
) -> np.ndarray:
    """`numpy.cross` of 3-vectors; 2-vectors (which NumPy 2 deprecates, with a warning) and
    bad axes raise, so mjnp's general path computes them or raises its error."""
    if axis is not None:
        axisa = axisb = axisc = axis
    if a.shape[axisa] != 3 or b.shape[axisb] != 3:
        raise ValueError("not 3-vectors")
    return np.cross(a, b, axisa, axisb, axisc)


cross = with_host_path(cross, _numpy_cross)


# --- einsum ---------------------------------------------------------------------------------


def _parse_einsum(
    fname: str, subscripts: str, shapes: list[tuple[int, ...]]
) -> tuple[list[list[str]], list[str]]:
    """Input and output label lists, with each ellipsis expanded to private labels."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        lhs, out = subscripts.split("->")
        explicit = True
    else:
        lhs, out, explicit = subscripts, "", False
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(
            f"mjnp.{fname}: {len(terms)} operand subscripts for {len(shapes)} operands"
        )
    ell_ndim = 0
    inputs = []
    for term, shape in zip(terms, shapes, strict=True):
        if "." in term and term.count("...") != 1 or term.replace("...", "").count("."):
            raise ValueError(f"mjnp.{fname}: invalid ellipsis in subscripts {subscripts!r}")
        named = term.replace("...", "")
        if not all(c.isalpha() for c in named):
            raise ValueError(f"mjnp.{fname}: invalid subscript characters in {subscripts!r}")
        n_ell = len(shape) - len(named)
        if ("..." in term and n_ell < 0) or ("..." not in term and n_ell != 0):
            raise ValueError(
                f"mjnp.{fname}: operand of shape {shape} does not match subscripts {term!r}"
            )
        ell_ndim = max(ell_ndim, n_ell)
        ell = [chr(0x100 + ell_ndim - n_ell + i) for i in range(n_ell)] if "..." in term else []
        labels: list[str] = []
        for part_i, part in enumerate(term.split("...")):
            if part_i == 1:
                labels += ell
            labels += list(part)
        inputs.append(labels)
    ell_labels = [chr(0x100 + i) for i in range(ell_ndim)]
    if explicit:
        if out.replace("...", "").count(".") or not all(
            c.isalpha() for c in out.replace("...", "")
        ):
            raise ValueError(f"mjnp.{fname}: invalid output subscripts {out!r}")
        output: list[str] = []
        for part_i, part in enumerate(out.split("...")):
            if part_i == 1:
                output += ell_labels
            output += list(part)
        everywhere = {c for labels in inputs for c in labels}
        for c in output:
            if c not in everywhere:
                raise ValueError(f"mjnp.{fname}: output subscript {c!r} does not appear in inputs")
        if len(set(output)) != len(output):
            raise ValueError(f"mjnp.{fname}: output subscripts repeat a label in {out!r}")
    else:
        counts: dict[str, int] = {}
        for labels in inputs:
            for c in labels:
                counts[c] = counts.get(c, 0) + 1
        output = ell_labels + sorted(c for c, k in counts.items() if k == 1 and c not in ell_labels)
    return inputs, output


def _einsum_diagonals(x: Array, labels: list[str]) -> tuple[Array, list[str]]:
    """Take diagonals over labels repeated within one operand."""
    # a cycle: _indexing_functions -> _joining -> _statistics -> this module (not all of mjnp)
    from mjnp._indexing_functions import diagonal

    while len(set(labels)) != len(labels):
        c = next(c for c in labels if labels.count(c) > 1)
        i = labels.index(c)
        j = labels.index(c, i + 1)
        x = diagonal(x, 0, i, j)
        labels = [lab for k, lab in enumerate(labels) if k not in (i, j)] + [c]
    return x, labels


def _einsum_sum(x: Array, labels: list[str], keep: set[str]) -> tuple[Array, list[str]]:
    axes = tuple(i for i, c in enumerate(labels) if c not in keep)
    if not axes:
        return x, labels
    x = lax.reduce_or(x, axes) if x.dtype.kind == "b" else lax.reduce_sum(x, axes)
    return x, [c for c in labels if c in keep]


def _einsum_pair(
    a: Array,
    la: list[str],
    b: Array,
    lb: list[str],
    keep: set[str],
    preferred: np.dtype | None = None,
) -> tuple[Array, list[str]]:
    shared = [c for c in la if c in lb]
    batch = [c for c in shared if c in keep]
    contract = [c for c in shared if c not in keep]
    dims = (
        (tuple(la.index(c) for c in contract), tuple(lb.index(c) for c in contract)),
        (tuple(la.index(c) for c in batch), tuple(lb.index(c) for c in batch)),
    )
    out = _dot_general(a, b, dims, preferred)
    labels = batch + [c for c in la if c not in shared] + [c for c in lb if c not in shared]
    return out, labels


def einsum(
    subscripts: str,
    *operands: ArrayLike,
    out: Any = None,
    dtype: DTypeLike | None = None,
    order: str = "K",
    casting: dtypes.Casting = "safe",
    optimize: Any = False,
    precision: Any = None,
    preferred_element_type: DTypeLike | None = None,
) -> Array:
    """Einstein summation, as `numpy.einsum` (string subscripts, with ellipses).

    Operands are contracted pairwise with `lax.dot_general`, left to right, or in the order
    NumPy's `einsum_path` chooses for `optimize` (True, "greedy", "optimal" or an explicit
    path). Size-1 axes broadcast against their label's size. `out=` rebinds the given array
    (the result casts to it by `casting`). `precision` and `preferred_element_type` are
    JAX's: each pairwise contraction accumulates in, and the result has, that dtype.
    """
    preferred = _dot_options("einsum", precision, preferred_element_type)
    result = _einsum(subscripts, operands, dtype, optimize, preferred)
    return write_out("einsum", out, result, casting)


def _einsum(
    subscripts: str,
    operands: tuple[ArrayLike, ...],
    dtype: DTypeLike | None,
    optimize: Any,
    preferred: np.dtype | None = None,
) -> Array:
    if not isinstance(subscripts, str):
        raise TypeError("mjnp.einsum: only the string form of subscripts is supported")
    if not operands:
        raise ValueError("mjnp.einsum: no operands given")
    arrays = promote_args("einsum", *operands)
    if dtype is not None:
        dt = dtypes.canonicalize_dtype(dtype, "mjnp.einsum")
        arrays = [lax.convert_element_type(x, dt) for x in arrays]
    else:
        arrays = [lax.convert_element_type(x, x.dtype) for x in arrays]
    inputs, output = _parse_einsum("einsum", subscripts, [x.shape for x in arrays])
    sizes: dict[str, int] = {}
    for x, labels in zip(arrays, inputs, strict=True):
        for c, d in zip(labels, x.shape, strict=True):
            if sizes.get(c, 1) not in (1, d) and d != 1:
                raise ValueError(
                    f"mjnp.einsum: size of label {c!r} differs between operands "
                    f"({sizes[c]} and {d})"
                )
            sizes[c] = max(sizes.get(c, 1), d) if d != 0 and sizes.get(c) != 0 else 0
    ops = []
    for x, labels in zip(arrays, inputs, strict=True):
        x = lax.broadcast_to(x, tuple(sizes[c] for c in labels))
        ops.append(_einsum_diagonals(x, labels))
    path = _einsum_order(subscripts, arrays, optimize)

    def needed(exclude: list[int]) -> set[str]:
        keep = set(output)
        for k, (_, labels) in enumerate(ops):
            if k not in exclude:
                keep.update(labels)
        return keep

    # Sum out labels private to one operand before any contraction.
    ops = [_einsum_sum(x, labels, needed([k])) for k, (x, labels) in enumerate(ops)]
    for step in map(sorted, path):
        group = [ops[k] for k in step]
        keep = needed(step)
        x, labels = group[0]
        if len(group) == 1:
            x, labels = _einsum_sum(x, labels, keep)
        for g in range(1, len(group)):
            y, ly = group[g]
            rest = keep | {c for _, lz in group[g + 1 :] for c in lz}
            x, labels = _einsum_pair(x, labels, y, ly, rest, preferred)
        ops = [op for k, op in enumerate(ops) if k not in step] + [(x, labels)]
    while len(ops) > 1:
        (x, lx), (y, ly) = ops[0], ops[1]
        ops = ops[2:]
        ops = [_einsum_pair(x, lx, y, ly, needed([]), preferred), *ops]
    x, labels = ops[0]
    x, labels = _einsum_sum(x, labels, set(output))
    return _scaled(lax.transpose(x, tuple(labels.index(c) for c in output)), preferred)


def _einsum_order(subscripts: str, arrays: list[Array], optimize: Any) -> list[tuple[int, ...]]:
    """The contraction path: NumPy's choice for `optimize`, else none (left to right)."""
    if optimize is False or optimize is None or len(arrays) < 3:
        return []
    if isinstance(optimize, list | tuple) and optimize and optimize[0] == "einsum_path":
        return [tuple(step) for step in optimize[1:]]
    path, _ = einsum_path(subscripts, *arrays, optimize="greedy" if optimize is True else optimize)
    return [tuple(step) for step in path[1:]]


def einsum_path(
    subscripts: str, *operands: ArrayLike, optimize: Any = "greedy"
) -> tuple[list, str]:
    """The contraction order and its cost report, as `numpy.einsum_path`.

    Only shapes and dtypes matter, so this asks NumPy about empty stand-ins of the operands.
    """
    stand_ins = []
    for x in operands:
        x = asarray_arg("einsum_path", x)
        stand_ins.append(np.broadcast_to(np.zeros((), x.dtype), x.shape))
    return np.einsum_path(subscripts, *stand_ins, optimize=optimize)
