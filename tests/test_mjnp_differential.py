"""Hypothesis differential tests against NumPy for the functions the chapter tests leave out.

One table: name -> strategy drawing `(args, kwargs)` (NumPy arrays, Python values), and
optionally a runner `run(xp, *args, **kwargs)` for functions that need more than a call
(in-place ones, callables built from the namespace). Array arguments are handed to mjnp as mjnp
arrays. Results are compared structurally: arrays by dtype, shape and values within the
per-dtype tolerance; tuples and lists item by item; anything else (strings, dtypes, bools) by
type and equality. When NumPy raises, mjnp must raise the same exception type. Shapes come from
small pools, since every new shape and dtype compiles XLA executables.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mjnp
from tests.differential_registry import differential
from tests.mjnp_testing import arrays, assert_matches, cast_is_undefined

SETTINGS = settings(max_examples=6, deadline=None, derandomize=True)

DTYPES = ("bool", "int8", "uint8", "int64", "float16", "float32", "float64", "complex128")
NUMBERS = ("int8", "uint8", "int64", "float32", "float64", "complex128")
REALS = ("int8", "uint8", "int64", "float32", "float64")
INTS = ("int8", "int64", "uint8")
FLOATS = ("float32", "float64")
INEXACT = ("float32", "float64", "complex64", "complex128")
SHAPES = st.sampled_from([(), (0,), (4,), (2, 3), (3, 0), (2, 1, 3)])
NONEMPTY_SHAPES = st.sampled_from([(), (4,), (2, 3), (2, 1, 3)])
MATRIX_SHAPES = st.sampled_from([(3, 3), (2, 4), (0, 2), (2, 3, 3), (1, 1)])


def call(*args: Any, **kwargs: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    return args, kwargs


def axis_or_bad(draw: st.DrawFn, ndim: int) -> int:
    """A valid axis, or (rarely) one just out of range: NumPy raises AxisError."""
    return draw(st.integers(-ndim - 1, ndim)) if ndim else draw(st.sampled_from([0, -1]))


def _normal(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """Standard normal values (complex: both parts), for linear algebra."""
    x = rng.standard_normal(shape)
    if dtype.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _well_conditioned(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype):
    """Random square matrices plus n times the identity: invertible, modest condition number."""
    x = _normal(rng, shape, dtype)
    n = shape[-1]
    return (x + 2 * n * np.eye(n, dtype=dtype)).astype(dtype) if n else x


def _spd(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    x = _normal(rng, shape, dtype)
    n = shape[-1]
    return (x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n, dtype=dtype)).astype(dtype)


def normal(dtypes=INEXACT, shape=MATRIX_SHAPES):
    return arrays(dtypes, shape=shape, domain=_normal)


def square(dtypes=INEXACT, sizes=(0, 1, 3), batch=((), (2,)), domain=_well_conditioned):
    shape = st.tuples(st.sampled_from(batch), st.sampled_from(sizes)).map(
        lambda bn: (*bn[0], bn[1], bn[1])
    )
    return arrays(dtypes, shape=shape, domain=domain)


# --- runners for functions that take callables or work in place ---------------------------


def _in_place(fname: str) -> Callable[..., Any]:
    """Run an in-place function on a fresh array of the namespace and return that array."""

    def run(xp: Any, a: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        target = xp.array(a)  # a copy for NumPy, an mjnp array for mjnp
        getattr(xp, fname)(target, *args, **kwargs)
        return target

    return run


def _apply_along_axis(xp: Any, a: Any, axis: int) -> Any:
    return xp.apply_along_axis(lambda v: v[::-1] * 2, axis, a)


def _apply_over_axes(xp: Any, a: Any, axes: Any) -> Any:
    return xp.apply_over_axes(xp.sum, a, axes)


def _mask_indices(xp: Any, n: int, which: str, k: int) -> Any:
    return xp.mask_indices(n, getattr(xp, which), k)


def _piecewise(xp: Any, x: Any, constant: float) -> Any:
    x = xp.asarray(x)
    return xp.piecewise(x, [x < 0, x > 1], [lambda v: -v, lambda v: v * 2, constant])


def _select(xp: Any, x: Any, y: Any, default: Any) -> Any:
    x, y = xp.asarray(x), xp.asarray(y)
    return xp.select([x > 0, y > 0], [x, y * 2], default)


def _block(xp: Any, a: Any, b: Any, c: Any, nested: bool) -> Any:
    return xp.block([[a, b], [c]]) if nested else xp.block([a, b])


def _fromiter(xp: Any, values: list[Any], dtype: str, count: int) -> Any:
    return xp.fromiter(iter(values), dtype, count)


# --- strategies per function ----------------------------------------------------------------


@st.composite
def one_array(draw, dtypes=DTYPES, shape=SHAPES, **kwargs):
    return call(draw(arrays(dtypes, shape=shape)), **kwargs)


@st.composite
def array_and_axis(draw, dtypes=DTYPES, shape=NONEMPTY_SHAPES):
    x = draw(arrays(dtypes, shape=shape))
    return call(x, axis_or_bad(draw, x.ndim))


@st.composite
def array_like_creation(draw):
    x = draw(arrays(DTYPES, shape=SHAPES))
    dtype = draw(st.sampled_from([None, "int64", "float32", "complex128"]))
    return call(x, dtype=dtype)


@st.composite
def array_creation(draw):
    (x,), kwargs = draw(array_like_creation())
    return call(x, ndmin=draw(st.integers(0, 3)), **kwargs)


@st.composite
def chkfinite(draw):
    x = draw(arrays(FLOATS, shape=SHAPES))
    if x.size and draw(st.booleans()):
        x = x.copy()
        x.flat[0] = draw(st.sampled_from([np.nan, np.inf]))
    return call(x)


@st.composite
def require(draw):
    x = draw(arrays(DTYPES, shape=SHAPES))
    reqs = draw(st.lists(st.sampled_from(["C", "A", "O", "E", "C_CONTIGUOUS"]), max_size=2))
    return call(x, dtype=draw(st.sampled_from([None, "float64"])), requirements=reqs)


@st.composite
def printing(draw):
    x = draw(arrays(("bool", "int64", "float64", "complex128"), shape=SHAPES))
    return call(x, precision=draw(st.sampled_from([None, 3])))


@st.composite
def two_same_shape(draw, dtypes=DTYPES):
    x = draw(arrays(dtypes, shape=SHAPES))
    kind = draw(st.sampled_from(["same", "other", "broadcast"]))
    if kind == "same":
        y = x.copy()
    elif kind == "other":
        y = draw(arrays(dtypes, shape=st.just(x.shape)))
    else:
        y = x[..., :1] if x.ndim else np.stack([x, x])
    return x, y


@st.composite
def array_equal(draw):
    x, y = draw(two_same_shape(("int8", "float64", "complex128")))
    return call(x, y, equal_nan=draw(st.booleans()))


@st.composite
def array_equiv(draw):
    return call(*draw(two_same_shape()))


@st.composite
def window(draw):
    return call(draw(st.integers(-1, 7)))


@st.composite
def kaiser(draw):
    return call(draw(st.integers(-1, 7)), draw(st.sampled_from([0.0, 2.5, 14.0])))


@st.composite
def base_repr(draw):
    return call(
        draw(st.integers(-300, 300)), draw(st.integers(1, 37)), padding=draw(st.integers(0, 3))
    )


@st.composite
def binary_repr(draw):
    return call(draw(st.integers(-300, 300)), width=draw(st.sampled_from([None, 4, 12])))


@st.composite
def block(draw):
    nested = draw(st.booleans())
    if nested:
        r, c1, c2 = draw(st.integers(0, 2)), draw(st.integers(1, 2)), draw(st.integers(0, 2))
        a = draw(arrays(NUMBERS, shape=st.just((r, c1))))
        b = draw(arrays(NUMBERS, shape=st.sampled_from([(r, c2), (r + 1, c2)])))
        c = draw(arrays(NUMBERS, shape=st.just((1, c1 + c2))))
        return call(a, b, c, nested)
    a = draw(arrays(NUMBERS, shape=st.sampled_from([(2,), (0,), ()])))
    b = draw(arrays(NUMBERS, shape=st.sampled_from([(3,), (1,)])))
    return call(a, b, None, nested)


DTYPE_NAMES = st.sampled_from(
    ["bool", "int8", "uint16", "int64", "float16", "float64", "complex64"]
)


@st.composite
def can_cast(draw):
    casting = draw(st.sampled_from(["no", "equiv", "safe", "same_kind", "unsafe"]))
    return call(np.dtype(draw(DTYPE_NAMES)), np.dtype(draw(DTYPE_NAMES)), casting=casting)


@st.composite
def dtype_pair(draw):
    return call(np.dtype(draw(DTYPE_NAMES)), np.dtype(draw(DTYPE_NAMES)))


@st.composite
def result_type(draw):
    args = draw(
        st.lists(
            st.one_of(
                DTYPE_NAMES.map(np.dtype),
                arrays(DTYPES, shape=st.sampled_from([(), (2,)])),
                st.sampled_from([1, 2.5, 1j, True]),
            ),
            min_size=1,
            max_size=3,
        )
    )
    return call(*args)


@st.composite
def isdtype(draw):
    kind = draw(
        st.sampled_from(
            ["bool", "signed integer", "unsigned integer", "integral", "real floating",
             "complex floating", "numeric", ("integral", "real floating")]
        )
    )  # fmt: skip
    return call(np.dtype(draw(DTYPE_NAMES)), kind)


@st.composite
def issubdtype(draw):
    second = draw(
        st.one_of(DTYPE_NAMES, st.sampled_from([np.integer, np.floating, np.number, np.inexact]))
    )
    return call(draw(DTYPE_NAMES), second)


@st.composite
def min_scalar_type(draw):
    return call(draw(st.one_of(st.integers(-(2**40), 2**40), st.floats(-1e5, 1e5), st.booleans())))


@st.composite
def mintypecode(draw):
    chars = draw(st.lists(st.sampled_from("bhilqfdFDG?"), min_size=1, max_size=3))
    return call(chars, typeset=draw(st.sampled_from(["GDFgdf", "fd"])))


@st.composite
def typename(draw):
    return call(draw(st.sampled_from("S1?bBhHiIlLqQfdgFDGOVU")))


@st.composite
def common_type(draw):
    xs = draw(
        st.lists(arrays(("int8", "int64", "float16", "float32", "float64", "complex64"),
                        shape=st.just((2,))), min_size=1, max_size=3)
    )  # fmt: skip
    return call(*xs)


@st.composite
def choose(draw):
    n = draw(st.integers(1, 3))
    shape = draw(st.sampled_from([(), (4,), (2, 3), (0,)]))
    mode = draw(st.sampled_from(["raise", "wrap", "clip"]))
    idx = np.random.default_rng(draw(st.integers(0, 99))).integers(-1, n + 1, size=shape)
    choices = [draw(arrays(NUMBERS, shape=st.sampled_from([shape, shape[-1:]]))) for _ in range(n)]
    return call(idx, choices, mode=mode)


@st.composite
def clip(draw):
    x = draw(arrays(REALS, shape=SHAPES))
    lo = draw(st.one_of(st.none(), st.sampled_from([-1, 0.5]), arrays(REALS, shape=SHAPES)))
    hi = draw(st.one_of(st.sampled_from([2, 3.5]), arrays(REALS, shape=st.just(x.shape[-1:]))))
    return call(x, lo, hi)


@st.composite
def compress(draw):
    x = draw(arrays(DTYPES, shape=NONEMPTY_SHAPES))
    axis = draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.none()))
    n = x.size if axis is None else x.shape[axis]
    cond = draw(arrays(("bool",), shape=st.sampled_from([(n,), (max(n - 1, 0),), (n + 1,)])))
    return call(cond, x, axis=axis)


@st.composite
def extract(draw):
    x = draw(arrays(DTYPES, shape=SHAPES))
    return call(draw(arrays(("bool", "int8"), shape=st.just(x.shape))), x)


@st.composite
def cross(draw):
    n1, n2 = draw(st.sampled_from([(3, 3), (2, 3), (2, 2), (3, 4)]))
    a = draw(arrays(NUMBERS, shape=st.sampled_from([(n1,), (2, n1)])))
    b = draw(arrays(NUMBERS, shape=st.sampled_from([(n2,), (1, n2)])))
    return call(a, b, axis=draw(st.sampled_from([-1, 0, 2])))


@st.composite
def diag_indices(draw):
    return call(draw(st.integers(0, 4)), draw(st.integers(1, 3)))


@st.composite
def diag_indices_from(draw):
    return call(draw(arrays(DTYPES, shape=st.sampled_from([(3, 3), (2, 2, 2), (2, 3), (4,)]))))


@st.composite
def diagonal(draw):
    x = draw(arrays(DTYPES, shape=st.sampled_from([(3, 3), (2, 4), (2, 3, 2), (0, 2), (4,)])))
    nd = max(x.ndim, 2)
    axis1, axis2 = draw(st.integers(-nd, nd - 1)), draw(st.integers(-nd, nd - 1))
    return call(x, draw(st.integers(-3, 3)), axis1, axis2)


@st.composite
def digitize(draw):
    x = draw(arrays(REALS, shape=SHAPES))
    bins = np.sort(draw(arrays(("float64", "int64"), shape=st.sampled_from([(1,), (4,)]))))
    if draw(st.booleans()):
        bins = bins[::-1]
    return call(x, bins, right=draw(st.booleans()))


def _nonzero_halves(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype):
    x = rng.integers(1, 9, size=shape) * rng.choice([-1, 1], size=shape)
    return x if dtype.kind in "iu" else x / 2


@st.composite
def divmod_(draw):
    x = draw(arrays(("int8", "int64", "float32", "float64"), shape=SHAPES))
    y = draw(
        arrays(("int8", "int64", "float64"), shape=st.just(x.shape[-1:]), domain=_nonzero_halves)
    )
    return call(x, np.abs(y) if y.dtype.kind == "u" else y)


EINSUM = st.sampled_from(
    [("ij,jk->ik", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]), ("i,i", [(4,), (4,)]),
     ("ij->ji", [(2, 3)]), ("...i,...i->...", [(2, 3), (3,)]),
     ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]),
     ("ij,jk->ik", [(2, 3), (4, 4)])]
)  # fmt: skip


@st.composite
def einsum(draw):
    subscripts, shapes = draw(EINSUM)
    return call(subscripts, *[draw(arrays(NUMBERS, shape=st.just(s))) for s in shapes])


@st.composite
def einsum_path(draw):
    args, _ = draw(einsum())
    return call(*args, optimize=draw(st.sampled_from(["greedy", "optimal"])))


@st.composite
def eye(draw):
    return call(
        draw(st.integers(0, 4)),
        draw(st.sampled_from([None, 0, 2, 5])),
        k=draw(st.integers(-3, 3)),
        dtype=draw(st.sampled_from(["float64", "int8", "bool", "complex64"])),
    )


@st.composite
def identity(draw):
    return call(draw(st.integers(0, 4)), dtype=draw(st.sampled_from(["float64", "int8", "bool"])))


@st.composite
def fill_diagonal(draw):
    x = draw(arrays(REALS, shape=st.sampled_from([(3, 3), (5, 2), (2, 2, 2), (4,), (0, 0)])))
    val = draw(st.one_of(st.sampled_from([7, -1.5]), arrays(("int64",), shape=st.just((2,)))))
    return call(x, val, wrap=draw(st.booleans()))


@st.composite
def format_float(draw):
    x = draw(st.sampled_from([np.float64, np.float32, np.float16]))(
        draw(st.floats(-6e4, 6e4, width=16) | st.sampled_from([0.1, -2.5e-7, 6e4, np.inf]))
    )
    return call(
        x,
        precision=draw(st.sampled_from([None, 0, 3])),
        unique=draw(st.booleans()),
        trim=draw(st.sampled_from(["k", ".", "0", "-"])),
    )


@st.composite
def ldexp(draw):
    x = draw(arrays(("float16", "float32", "float64", "int8"), shape=SHAPES))
    return call(x, draw(arrays(("int8", "int32", "int64"), shape=st.just(x.shape[-1:]))))


@st.composite
def from_dlpack(draw):
    return call(draw(arrays(DTYPES, shape=SHAPES)))


@st.composite
def frombuffer(draw):
    x = draw(arrays(("int8", "int32", "float64"), shape=st.sampled_from([(4,), (6,)])))
    dtype = draw(st.sampled_from(["int8", "uint16", "float32", "float64"]))
    return call(x.tobytes(), dtype=dtype, count=draw(st.sampled_from([-1, 1, 2])),
                offset=draw(st.sampled_from([0, 4, 5])))  # fmt: skip


@st.composite
def fromiter(draw):
    values = draw(st.lists(st.integers(-100, 100), max_size=5))
    return call(values, draw(st.sampled_from(["int64", "float32", "int8"])),
                draw(st.sampled_from([-1, len(values), len(values) + 1])))  # fmt: skip


@st.composite
def fromstring(draw):
    values = draw(st.lists(st.integers(-100, 100), min_size=1, max_size=5))
    sep = draw(st.sampled_from([" ", ","]))
    return call(
        sep.join(map(str, values)), dtype=draw(st.sampled_from(["int64", "float64"])), sep=sep
    )


@st.composite
def anything(draw):
    return call(
        draw(
            st.one_of(
                arrays(DTYPES, shape=SHAPES),
                st.sampled_from([1, 2.5, 1j, True, "ab", [1, 2], (3.0,), None, np.float32(1)]),
            )
        )
    )


@st.composite
def size(draw):
    x = draw(arrays(DTYPES, shape=SHAPES))
    return call(x, draw(st.one_of(st.none(), st.integers(-x.ndim - 1, x.ndim))))


@st.composite
def shares_memory(draw):
    return call(draw(arrays(DTYPES, shape=NONEMPTY_SHAPES)), draw(st.booleans()))


def _shares_memory(fname: str) -> Callable[..., Any]:
    """`fname(a, a)` or `fname(a, copy of a)`, with `a` an array of the namespace."""

    def run(xp: Any, x: Any, same: bool) -> Any:
        a = xp.asarray(x)
        return getattr(xp, fname)(a, a if same else xp.array(a))

    return run


@st.composite
def ix_(draw):
    seqs = draw(
        st.lists(arrays(("int64", "bool", "int8"), shape=st.sampled_from([(0,), (3,), (2,)])),
                 min_size=1, max_size=3)
    )  # fmt: skip
    return call(*seqs)


@st.composite
def kron(draw):
    return call(
        draw(arrays(NUMBERS, shape=st.sampled_from([(), (2,), (2, 2), (0, 3)]))),
        draw(arrays(NUMBERS, shape=st.sampled_from([(3,), (1, 2), (2, 1, 2)]))),
    )


@st.composite
def mask_indices(draw):
    return call(
        draw(st.integers(0, 4)), draw(st.sampled_from(["triu", "tril"])), draw(st.integers(-2, 2))
    )


@st.composite
def matvec(draw):
    m, n = draw(st.sampled_from([(2, 3), (3, 3), (0, 2)]))
    a = draw(arrays(NUMBERS, shape=st.sampled_from([(m, n), (2, m, n)])))
    v = draw(arrays(NUMBERS, shape=st.sampled_from([(n,), (1, n), (n + 1,)])))
    return call(a, v)


@st.composite
def vecmat(draw):
    (a, v), _ = draw(matvec())
    return call(v, a)


@st.composite
def vecdot(draw):
    n = draw(st.sampled_from([0, 3]))
    a = draw(arrays(NUMBERS, shape=st.sampled_from([(n,), (2, n)])))
    b = draw(arrays(NUMBERS, shape=st.sampled_from([(n,), (1, n), (3, n)])))
    return call(a, b, axis=draw(st.sampled_from([-1, -1, 0])))


@st.composite
def piecewise(draw):
    return call(draw(arrays(("float32", "float64", "int64"), shape=SHAPES)), 0.5)


@st.composite
def place(draw):
    x = draw(arrays(REALS, shape=SHAPES))
    mask = draw(arrays(("bool",), shape=st.just(x.shape)))
    return call(x, mask, draw(arrays(("int64", "float64"), shape=st.sampled_from([(1,), (3,)]))))


@st.composite
def put(draw):
    x = draw(arrays(REALS, shape=NONEMPTY_SHAPES))
    ind = np.random.default_rng(draw(st.integers(0, 99))).integers(-x.size - 1, x.size + 1, size=2)
    v = draw(arrays(("int64", "float64"), shape=st.sampled_from([(1,), (2,)])))
    # put casts unsafely; a negative float into an unsigned array is undefined behaviour in C
    # (NumPy's result depends on the platform, mjnp saturates as XLA does), so avoid it.
    v = np.abs(v) if cast_is_undefined(v, x.dtype) else v
    return call(x, ind, v, mode=draw(st.sampled_from(["raise", "wrap", "clip"])))


@st.composite
def putmask(draw):
    x = draw(arrays(REALS, shape=SHAPES))
    mask = draw(arrays(("bool",), shape=st.sampled_from([x.shape, x.shape[-1:]])))
    return call(x, mask, draw(arrays(("int64", "float64"), shape=st.sampled_from([(1,), (3,)]))))


@st.composite
def along_axis(draw):
    x = draw(arrays(REALS, shape=st.sampled_from([(4,), (2, 3), (3, 0), (2, 1, 3)])))
    axis = draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)))
    n = x.size if axis is None else x.shape[axis]
    ishape = (
        (2,)
        if axis is None
        else tuple(2 if a == axis % x.ndim else s for a, s in enumerate(x.shape))
    )
    idx = np.random.default_rng(draw(st.integers(0, 99))).integers(-n, max(n, 1), size=ishape)
    return x, idx if n else idx * 0, axis


@st.composite
def take_along_axis(draw):
    x, idx, axis = draw(along_axis())
    return call(x, idx, axis=axis)


@st.composite
def put_along_axis(draw):
    x, idx, axis = draw(along_axis())
    return call(x, idx, draw(st.sampled_from([9, -0.5])), axis=axis)


COEFFS = arrays(("int64", "float64", "complex128"), shape=st.sampled_from([(1,), (3,), (4,)]))


@st.composite
def poly(draw):
    shape = st.sampled_from([(0,), (3,), (2, 2), (2, 3), (0, 0), ()])
    return call(draw(arrays(("int64", "float64", "complex128"), shape=shape)))


@st.composite
def polydiv(draw):
    v = draw(COEFFS)
    if v[0] == 0:
        v = v.copy()
        v[0] = 1
    return call(draw(COEFFS), v)


@st.composite
def polyfit(draw):
    n = draw(st.sampled_from([4, 6]))
    x = np.arange(n, dtype=np.float64) / 2 - 1
    y = draw(arrays(("float64", "int64"), shape=st.sampled_from([(n,), (n, 2)])))
    return call(x, y, draw(st.integers(0, 3)))


@st.composite
def roots(draw):
    p = draw(
        arrays(
            ("float64", "int64"), shape=st.sampled_from([(1,), (2,), (3,)]), domain=_nonzero_halves
        )
    )
    return call(p)


@st.composite
def ravel_multi_index(draw):
    dims = draw(st.sampled_from([(3, 4), (2, 3, 2), (5,)]))
    rng = np.random.default_rng(draw(st.integers(0, 99)))
    idx = tuple(rng.integers(-1, d + 1, size=3) for d in dims)
    return call(idx, dims, mode=draw(st.sampled_from(["raise", "wrap", "clip"])))


@st.composite
def unravel_index(draw):
    dims = draw(st.sampled_from([(3, 4), (2, 3, 2), (5,), ()]))
    size_ = int(np.prod(dims))
    rng = np.random.default_rng(draw(st.integers(0, 99)))
    return call(rng.integers(0, size_ + 1, size=draw(st.sampled_from([(), (3,)]))), dims)


@st.composite
def real_if_close(draw):
    x = draw(arrays(("float64", "complex128", "complex64"), shape=SHAPES))
    if x.dtype.kind == "c" and draw(st.booleans()):
        x = (x.real + 1e-15j).astype(x.dtype)
    return call(x, tol=draw(st.sampled_from([100, 1e-20])))


@st.composite
def select(draw):
    x = draw(arrays(REALS, shape=SHAPES))
    y = draw(arrays(REALS, shape=st.just(x.shape[-1:])))
    return call(x, y, draw(st.sampled_from([0, -1.5])))


@st.composite
def tensordot(draw):
    a = draw(arrays(NUMBERS, shape=st.sampled_from([(2, 3), (2, 3, 4), (3,)])))
    b = draw(arrays(NUMBERS, shape=st.sampled_from([(3, 4), (4, 3), (3,)])))
    axes = draw(st.sampled_from([0, 1, 2, ([1], [0]), ([-1], [0])]))
    return call(a, b, axes=axes)


@st.composite
def trace(draw):
    x = draw(arrays(NUMBERS, shape=st.sampled_from([(3, 3), (2, 4), (2, 3, 2), (0, 2)])))
    return call(x, offset=draw(st.integers(-2, 2)), axis1=draw(st.sampled_from([0, 1, -1])),
                axis2=draw(st.sampled_from([1, -2, 2])))  # fmt: skip


@st.composite
def tri_indices(draw):
    return call(
        draw(st.integers(0, 4)), k=draw(st.integers(-2, 2)), m=draw(st.sampled_from([None, 2, 5]))
    )


@st.composite
def tri_indices_from(draw):
    x = draw(arrays(("float64", "int8"), shape=st.sampled_from([(3, 3), (2, 4), (0, 0), (4,)])))
    return call(x, k=draw(st.integers(-2, 2)))


# --- linalg and fft -------------------------------------------------------------------------


@st.composite
def linalg_one(draw, domain=_well_conditioned, sizes=(0, 1, 3), dtypes=INEXACT + ("int64",)):
    return call(draw(square(dtypes, sizes=sizes, domain=domain)))


@st.composite
def linalg_non_square(draw):
    return call(draw(arrays(INEXACT, shape=MATRIX_SHAPES, domain=_normal)))


@st.composite
def cond(draw):
    ((x,), _) = draw(linalg_one(sizes=(1, 3)))
    return call(x, draw(st.sampled_from([None, 1, -1, 2, -2, np.inf, "fro", "nuc"])))


@st.composite
def solve(draw):
    a = draw(square())
    b = draw(
        arrays(
            (a.dtype.name,),  # a tuple: a bare string would be sampled letter by letter
            shape=st.sampled_from([a.shape[:-1] + (2,), a.shape[:-1] + (1,), a.shape[-1:]]),
            domain=_normal,
        )
    )
    return call(a, b)


@st.composite
def lstsq(draw):
    m, n = draw(st.sampled_from([(4, 2), (3, 3), (2, 4)]))
    a = draw(arrays(FLOATS + ("complex128",), shape=st.just((m, n)), domain=_normal))
    b = draw(arrays((a.dtype.name,), shape=st.sampled_from([(m,), (m, 2)]), domain=_normal))
    return call(a, b, rcond=None)


@st.composite
def matrix_norm(draw):
    x = draw(normal())
    return call(x, ord=draw(st.sampled_from(["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])),
                keepdims=draw(st.booleans()))  # fmt: skip


@st.composite
def matrix_power(draw):
    ((x,), _) = draw(linalg_one())
    return call(x, draw(st.integers(-2, 3)))


@st.composite
def matrix_rank(draw):
    x = draw(normal(FLOATS + ("complex128",)))
    if x.ndim >= 2 and x.shape[-1] > 1 and draw(st.booleans()):
        x = x.copy()
        x[..., -1] = x[..., 0]  # rank deficient
    return call(x)


@st.composite
def multi_dot(draw):
    dims = draw(st.sampled_from([(2, 3, 4), (3, 3, 3, 2), (4, 2, 3)]))
    ops = [
        draw(arrays(NUMBERS, shape=st.just((dims[i], dims[i + 1])))) for i in range(len(dims) - 1)
    ]
    if draw(st.booleans()):
        ops[0] = ops[0][0]  # a leading vector
    return call(ops)


@st.composite
def norm(draw):
    x = draw(
        arrays(
            INEXACT + ("int64",), shape=st.sampled_from([(4,), (2, 3), (2, 3, 2)]), domain=_normal
        )
    )
    kind = draw(st.sampled_from(["vector", "matrix", "none"]))
    if kind == "vector":
        return call(x, ord=draw(st.sampled_from([None, 1, 2, np.inf, -np.inf, 0, 3])),
                    axis=draw(st.integers(-x.ndim, x.ndim - 1)))  # fmt: skip
    if kind == "matrix" and x.ndim >= 2:
        return call(
            x, ord=draw(st.sampled_from([None, "fro", "nuc", 1, -1, 2, np.inf])), axis=(0, 1)
        )
    return call(x, keepdims=draw(st.booleans()))


@st.composite
def vector_norm(draw):
    x = draw(arrays(INEXACT + ("int64",), shape=SHAPES, domain=_normal))
    axis = draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.none()))
    return call(x, axis=axis, ord=draw(st.sampled_from([2, 1, np.inf, -np.inf, 0, 3])))


@st.composite
def linalg_outer(draw):
    return call(draw(arrays(NUMBERS, shape=st.sampled_from([(3,), (0,), (2, 2)]))),
                draw(arrays(NUMBERS, shape=st.sampled_from([(2,), (4,)]))))  # fmt: skip


@st.composite
def linalg_cross(draw):
    return call(draw(arrays(NUMBERS, shape=st.sampled_from([(3,), (2, 3), (2,)]))),
                draw(arrays(NUMBERS, shape=st.sampled_from([(3,), (1, 3)]))))  # fmt: skip


@st.composite
def linalg_matmul(draw):
    return call(draw(arrays(NUMBERS, shape=st.sampled_from([(3,), (2, 3), (2, 2, 3)]))),
                draw(arrays(NUMBERS, shape=st.sampled_from([(3,), (3, 2), (4, 2)]))))  # fmt: skip


@st.composite
def matrix_transpose(draw):
    return call(draw(arrays(DTYPES, shape=st.sampled_from([(2, 3), (2, 0, 3), (3,)]))))


@st.composite
def linalg_trace(draw):
    x = draw(arrays(NUMBERS, shape=st.sampled_from([(3, 3), (2, 4), (2, 3, 2), (3,)])))
    return call(x, offset=draw(st.integers(-2, 2)))


@st.composite
def tensorinv(draw):
    x = draw(
        arrays(
            FLOATS + ("complex128",), shape=st.sampled_from([(4, 2, 2), (2, 3, 6)]), domain=_normal
        )
    )
    x = x + 3 * np.eye(x.shape[0], dtype=x.dtype).reshape(x.shape) if x.shape[0] == 4 else x
    return call(x, ind=1)


@st.composite
def tensorsolve(draw):
    a = draw(arrays(FLOATS, shape=st.sampled_from([(2, 3, 6), (2, 2, 4)]), domain=_normal))
    a = a + 3 * np.eye(4, dtype=a.dtype).reshape(a.shape) if a.shape == (2, 2, 4) else a
    return call(
        a, draw(arrays((a.dtype.name,), shape=st.sampled_from([a.shape[:2], (5,)]), domain=_normal))
    )


@st.composite
def fftfreq(draw):
    return call(draw(st.integers(0, 6)), d=draw(st.sampled_from([1.0, 0.5, 3])))


@st.composite
def fftshift(draw):
    x = draw(arrays(NUMBERS, shape=SHAPES))
    axes = draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.none()))
    return call(x, axes=axes)


class Case(NamedTuple):
    args: st.SearchStrategy  # draws (args, kwargs)
    run: Callable[..., Any] | None = None  # run(xp, *args, **kwargs); default: xp.<name>
    compare: str = "values"  # or how a non-unique result is compared: see _compare
    xfail: str = ""  # a known mjnp difference from NumPy, still to fix


# Decompositions are unique only up to signs, phases and order; they are compared through
# NumPy's dtypes and shapes, their unique parts, and reconstruction.
CASES: dict[str, Case] = {
    "apply_along_axis": Case(array_and_axis(NUMBERS), _apply_along_axis),
    "apply_over_axes": Case(array_and_axis(NUMBERS), _apply_over_axes),
    "argwhere": Case(one_array()),
    "array": Case(array_creation()),
    "asarray": Case(array_like_creation()),
    "asanyarray": Case(array_like_creation()),
    "ascontiguousarray": Case(array_like_creation()),
    "asarray_chkfinite": Case(chkfinite()),
    "require": Case(require()),
    "array2string": Case(printing()),
    "array_repr": Case(printing()),
    "array_str": Case(printing()),
    "array_equal": Case(array_equal(), compare="bool0d"),
    "array_equiv": Case(array_equiv(), compare="bool0d"),
    "bartlett": Case(window()),
    "blackman": Case(window()),
    "hamming": Case(window()),
    "hanning": Case(window()),
    "kaiser": Case(kaiser()),
    "base_repr": Case(base_repr()),
    "binary_repr": Case(binary_repr()),
    "block": Case(block(), _block),
    "can_cast": Case(can_cast()),
    "promote_types": Case(dtype_pair()),
    "result_type": Case(result_type()),
    "isdtype": Case(isdtype()),
    "issubdtype": Case(issubdtype()),
    "min_scalar_type": Case(min_scalar_type()),
    "mintypecode": Case(mintypecode()),
    "typename": Case(typename()),
    "common_type": Case(common_type()),
    "choose": Case(choose()),
    "clip": Case(clip()),
    "compress": Case(compress()),
    "extract": Case(extract()),
    "cross": Case(cross()),
    "diag_indices": Case(diag_indices()),
    "diag_indices_from": Case(diag_indices_from()),
    "diagonal": Case(diagonal()),
    "digitize": Case(digitize()),
    "divmod": Case(divmod_()),
    "einsum": Case(einsum()),
    "einsum_path": Case(einsum_path()),
    "eye": Case(eye()),
    "identity": Case(identity()),
    "fill_diagonal": Case(fill_diagonal(), _in_place("fill_diagonal")),
    "flatnonzero": Case(one_array()),
    "nonzero": Case(one_array(shape=NONEMPTY_SHAPES)),
    "format_float_positional": Case(format_float()),
    "format_float_scientific": Case(format_float()),
    "frexp": Case(one_array(("float16", "float32", "float64", "int8", "bool"))),
    "modf": Case(one_array(("float16", "float32", "float64", "int8", "bool"))),
    "ldexp": Case(ldexp()),
    "from_dlpack": Case(from_dlpack()),
    "frombuffer": Case(frombuffer()),
    "fromiter": Case(fromiter(), _fromiter),
    "fromstring": Case(fromstring()),
    "iscomplexobj": Case(anything()),
    "isrealobj": Case(anything()),
    "isscalar": Case(anything()),
    "iterable": Case(anything()),
    "ndim": Case(anything()),
    "shape": Case(anything()),
    "size": Case(size()),
    "isfortran": Case(one_array(shape=NONEMPTY_SHAPES)),
    "may_share_memory": Case(shares_memory(), _shares_memory("may_share_memory")),
    "shares_memory": Case(shares_memory(), _shares_memory("shares_memory")),
    "ix_": Case(ix_()),
    "kron": Case(kron()),
    "mask_indices": Case(mask_indices(), _mask_indices),
    "matvec": Case(matvec()),
    "vecmat": Case(vecmat()),
    "vecdot": Case(vecdot()),
    "piecewise": Case(piecewise(), _piecewise),
    "place": Case(place(), _in_place("place")),
    "put": Case(put(), _in_place("put")),
    "putmask": Case(putmask(), _in_place("putmask")),
    "put_along_axis": Case(put_along_axis(), _in_place("put_along_axis")),
    "take_along_axis": Case(take_along_axis()),
    "poly": Case(poly()),
    "polydiv": Case(polydiv()),
    "polyfit": Case(polyfit()),
    "roots": Case(roots(), compare="sorted"),
    "ravel_multi_index": Case(ravel_multi_index()),
    "unravel_index": Case(unravel_index()),
    "real_if_close": Case(real_if_close()),
    "select": Case(select(), _select),
    "tensordot": Case(tensordot()),
    "trace": Case(trace()),
    "tril_indices": Case(tri_indices()),
    "triu_indices": Case(tri_indices()),
    "tril_indices_from": Case(tri_indices_from()),
    "triu_indices_from": Case(tri_indices_from()),
    "linalg.cholesky": Case(linalg_one(_spd)),
    "linalg.cond": Case(cond()),
    "linalg.cross": Case(linalg_cross()),
    "linalg.det": Case(linalg_one()),
    "linalg.diagonal": Case(linalg_trace()),
    "linalg.eig": Case(linalg_one(), compare="eig"),
    "linalg.eigh": Case(linalg_one(_spd), compare="eigh"),
    "linalg.eigvals": Case(linalg_one(), compare="sorted"),
    "linalg.eigvalsh": Case(linalg_one(_spd)),
    "linalg.inv": Case(linalg_one()),
    "linalg.lstsq": Case(lstsq()),
    "linalg.matmul": Case(linalg_matmul()),
    "linalg.matrix_norm": Case(matrix_norm()),
    "linalg.matrix_power": Case(matrix_power()),
    "linalg.matrix_rank": Case(matrix_rank()),
    "linalg.matrix_transpose": Case(matrix_transpose()),
    "linalg.multi_dot": Case(multi_dot()),
    "linalg.norm": Case(norm()),
    "linalg.outer": Case(linalg_outer()),
    "linalg.pinv": Case(linalg_non_square()),
    "linalg.qr": Case(linalg_non_square(), compare="abs"),
    "linalg.slogdet": Case(linalg_one()),
    "linalg.solve": Case(solve()),
    "linalg.svd": Case(linalg_non_square(), compare="svd"),
    "linalg.svdvals": Case(linalg_non_square()),
    "linalg.tensordot": Case(tensordot()),
    "linalg.tensorinv": Case(tensorinv()),
    "linalg.tensorsolve": Case(tensorsolve()),
    "linalg.trace": Case(linalg_trace()),
    "linalg.vecdot": Case(vecdot()),
    "linalg.vector_norm": Case(vector_norm()),
    "fft.fftfreq": Case(fftfreq()),
    "fft.rfftfreq": Case(fftfreq()),
    "fft.fftshift": Case(fftshift()),
    "fft.ifftshift": Case(fftshift()),
}

_RAW_INPUT = {"array", "asarray", "asanyarray", "ascontiguousarray", "asarray_chkfinite",
              "from_dlpack", "require", "isscalar", "iterable"}  # fmt: skip


def _function(xp: Any, name: str) -> Any:
    namespace, _, fname = name.rpartition(".")
    return getattr(getattr(xp, namespace) if namespace else xp, fname)


def _to_mjnp(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return mjnp.asarray(value)
    if isinstance(value, list) and any(isinstance(v, np.ndarray) for v in value):
        return [_to_mjnp(v) for v in value]
    return value


def _assert_same(actual: Any, expected: Any) -> None:
    """Arrays by dtype, shape and values; sequences item by item; the rest by type and value."""
    if isinstance(expected, np.ndarray | np.generic):
        assert hasattr(actual, "dtype"), (type(actual), expected)
        if expected.dtype.kind in "fc":
            actual_np = np.asarray(actual)
            nan = np.isnan(expected)
            np.testing.assert_array_equal(np.isnan(actual_np), nan)
        assert_matches(actual, expected)
    elif isinstance(expected, tuple | list):
        assert isinstance(actual, tuple | list), (type(actual), type(expected))
        assert len(actual) == len(expected), (len(actual), len(expected))
        for a, e in zip(actual, expected, strict=True):
            _assert_same(a, e)
    elif isinstance(expected, np.dtype):
        assert actual == expected, (actual, expected)
    else:
        assert type(actual) is type(expected), (type(actual), type(expected))
        assert actual == expected, (actual, expected)


def _as_np(values: Any) -> Any:
    return tuple(np.asarray(v) for v in values)


def _compare(kind: str, actual: Any, expected: Any, args: tuple[Any, ...]) -> None:
    if kind == "values":
        _assert_same(actual, expected)
        return
    if kind == "sorted":  # roots and eigenvalues: order unspecified
        got = np.asarray(actual)
        assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
        _assert_same(np.sort_complex(got), np.sort_complex(expected))
        return
    if kind == "bool0d":  # a Python bool, as NumPy's (a traced call gives a 0-d bool array)
        assert type(expected) is bool and actual is expected
        return
    # decompositions: same dtypes and shapes, then the unique parts
    got = _as_np(actual)
    assert [(g.dtype, g.shape) for g in got] == [(e.dtype, e.shape) for e in expected]
    a = np.asarray(args[0])
    if kind == "abs":  # qr: Q and R up to the signs of Q's columns and R's rows
        for g, e in zip(got, expected, strict=True):
            _assert_same(np.abs(g), np.abs(e))
    elif kind == "eigh":
        w, v = got
        _assert_same(w, expected[0])
        _assert_same(v @ (w[..., None] * np.conj(np.swapaxes(v, -1, -2))), a.astype(v.dtype))
    elif kind == "eig":
        w, v = got
        _assert_same(np.sort_complex(w), np.sort_complex(expected[0]))
        _assert_same(a.astype(v.dtype) @ v, v * w[..., None, :])
    elif kind == "svd":
        u, s, vh = got
        _assert_same(s, expected[1])
        k = s.shape[-1]
        _assert_same((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a.astype(u.dtype))
    else:
        raise AssertionError(f"unknown comparison {kind}")


@differential(*CASES)
@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=CASES[n].xfail))
        if CASES[n].xfail
        else n
        for n in sorted(CASES)
    ],
)
@SETTINGS
@given(data=st.data())
def test_matches_numpy(name, data):
    case = CASES[name]
    args, kwargs = data.draw(case.args, label="call")
    run = case.run or (lambda xp, *a, **k: _function(xp, name)(*a, **k))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            expected = run(np, *args, **kwargs)
        except Exception as err:  # NumPy's exception type is the expectation
            with pytest.raises(type(err)):
                mj_args = args if name in _RAW_INPUT else tuple(_to_mjnp(a) for a in args)
                run(mjnp, *mj_args, **kwargs)
            return
        mj_args = args if name in _RAW_INPUT else tuple(_to_mjnp(a) for a in args)
        actual = run(mjnp, *mj_args, **kwargs)
    _compare(case.compare, actual, expected, args)
