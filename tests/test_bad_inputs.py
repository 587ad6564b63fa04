"""A table of bad inputs: each row calls an mjnp function (or method) with an invalid argument,
and mjnp must raise NumPy's exception type, with NumPy itself as the oracle at test time
(issue 20). A NumPy-private exception class (`UFuncTypeError`, ...) is matched by its public
base (`TypeError`)."""

from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest

import mjnp


def A(xp):  # noqa: N802  (a short name keeps the table readable)
    return xp.arange(6.0).reshape(2, 3)


ROWS = [
    ("reshape", lambda xp: A(xp).reshape(4, 2)),
    ("reshape-neg", lambda xp: A(xp).reshape(-1, -1)),
    ("transpose-axes", lambda xp: xp.transpose(A(xp), (0, 0))),
    ("sum-axis", lambda xp: xp.sum(A(xp), axis=2)),
    ("sum-dup-axis", lambda xp: xp.sum(A(xp), axis=(0, 0))),
    ("mean-float-axis", lambda xp: xp.mean(A(xp), axis=1.0)),
    ("concat-ndim", lambda xp: xp.concatenate([A(xp), xp.zeros(3)])),
    ("concat-empty", lambda xp: xp.concatenate([])),
    ("stack-shapes", lambda xp: xp.stack([xp.zeros(2), xp.zeros(3)])),
    ("add-shapes", lambda xp: xp.add(xp.zeros(2), xp.zeros(3))),
    ("matmul-shapes", lambda xp: xp.matmul(xp.zeros((2, 3)), xp.zeros((2, 3)))),
    ("matmul-0d", lambda xp: xp.matmul(xp.zeros(()), xp.zeros(3))),
    ("dot-shapes", lambda xp: xp.dot(xp.zeros(2), xp.zeros(3))),
    ("getitem-oob", lambda xp: A(xp)[5]),
    ("getitem-toomany", lambda xp: A(xp)[0, 0, 0]),
    ("getitem-float", lambda xp: A(xp)[1.0]),
    ("getitem-mask-shape", lambda xp: A(xp)[xp.asarray([True, False, True])]),
    ("setitem-shape", lambda xp: A(xp).__setitem__(slice(None), xp.zeros(4))),
    ("take-oob", lambda xp: xp.take(xp.arange(3), 5)),
    ("zeros-neg", lambda xp: xp.zeros(-1)),
    ("zeros-float", lambda xp: xp.zeros(2.5)),
    ("zeros-dtype", lambda xp: xp.zeros(2, dtype="foo")),
    ("arange-zero-step", lambda xp: xp.arange(0, 5, 0)),
    ("linspace-neg", lambda xp: xp.linspace(0, 1, -1)),
    ("eye-float", lambda xp: xp.eye(2.5)),
    ("full-shape", lambda xp: xp.full((2, -2), 1)),
    ("split-uneven", lambda xp: xp.split(xp.arange(5), 2)),
    ("repeat-neg", lambda xp: xp.repeat(xp.arange(3), -1)),
    ("tile-float", lambda xp: xp.tile(xp.arange(3), 1.5)),
    ("squeeze-non1", lambda xp: xp.squeeze(A(xp), axis=0)),
    ("expand-dims-oob", lambda xp: xp.expand_dims(A(xp), 5)),
    ("moveaxis-oob", lambda xp: xp.moveaxis(A(xp), 3, 0)),
    ("swapaxes-oob", lambda xp: xp.swapaxes(A(xp), 0, 4)),
    ("broadcast-to", lambda xp: xp.broadcast_to(xp.zeros(3), (2, 4))),
    ("argmax-empty", lambda xp: xp.argmax(xp.zeros(0))),
    ("max-empty", lambda xp: xp.max(xp.zeros(0))),
    ("min-empty-axis", lambda xp: xp.min(xp.zeros((0, 2)), axis=0)),
    ("sort-axis", lambda xp: xp.sort(A(xp), axis=3)),
    ("argsort-kind", lambda xp: xp.argsort(A(xp), kind="foo")),
    ("searchsorted-side", lambda xp: xp.searchsorted(xp.arange(3), 1, side="middle")),
    ("clip-both", lambda xp: xp.clip(A(xp))),
    ("where-one-arg-x", lambda xp: xp.where(A(xp) > 0, 1)),
    ("bitwise-float", lambda xp: xp.bitwise_and(xp.zeros(2), 1)),
    ("invert-float", lambda xp: xp.invert(xp.zeros(2))),
    ("shift-float", lambda xp: xp.left_shift(xp.zeros(2), 1)),
    ("isnan-str", lambda xp: xp.isnan("a")),
    ("sqrt-str", lambda xp: xp.sqrt("a")),
    ("astype-bad", lambda xp: A(xp).astype("foo")),
    ("diag-3d", lambda xp: xp.diag(xp.zeros((2, 2, 2)))),
    ("trace-1d", lambda xp: xp.trace(xp.zeros(3))),
    ("inv-nonsquare", lambda xp: xp.linalg.inv(xp.zeros((2, 3)))),
    ("inv-singular", lambda xp: xp.linalg.inv(xp.zeros((2, 2)))),
    ("solve-shapes", lambda xp: xp.linalg.solve(xp.eye(2), xp.zeros(3))),
    ("cholesky-nonpd", lambda xp: xp.linalg.cholesky(-xp.eye(2))),
    ("det-1d", lambda xp: xp.linalg.det(xp.zeros(3))),
    ("norm-ord", lambda xp: xp.linalg.norm(A(xp), ord="foo")),
    ("fft-n0", lambda xp: xp.fft.fft(xp.zeros(4), n=0)),
    ("fft-norm", lambda xp: xp.fft.fft(xp.zeros(4), norm="foo")),
    ("pad-mode", lambda xp: xp.pad(xp.zeros(3), 1, mode="foo")),
    ("pad-neg", lambda xp: xp.pad(xp.zeros(3), -1)),
    ("cumsum-axis", lambda xp: xp.cumsum(A(xp), axis=2)),
    ("diff-n", lambda xp: xp.diff(xp.zeros(3), n=-1)),
    ("percentile-q", lambda xp: xp.percentile(xp.zeros(3), 150)),
    ("quantile-method", lambda xp: xp.quantile(xp.zeros(3), 0.5, method="foo")),
    ("histogram-bins", lambda xp: xp.histogram(xp.zeros(3), bins=-1)),
    ("bincount-neg", lambda xp: xp.bincount(xp.asarray([-1, 2]))),
    ("bincount-float", lambda xp: xp.bincount(xp.asarray([1.0, 2.0]))),
    ("unravel-oob", lambda xp: xp.unravel_index(10, (2, 3))),
    ("ravel-multi-oob", lambda xp: xp.ravel_multi_index((5, 0), (2, 3))),
    ("interp-shapes", lambda xp: xp.interp(1.0, xp.zeros(3), xp.zeros(2))),
    ("convolve-empty", lambda xp: xp.convolve(xp.zeros(0), xp.zeros(3))),
    ("einsum-bad", lambda xp: xp.einsum("ij,jk->ik", xp.zeros((2, 3)), xp.zeros((2, 3)))),
    (
        "tensordot-axes",
        lambda xp: xp.tensordot(xp.zeros((2, 3)), xp.zeros((2, 3)), axes=([1], [1, 0])),
    ),
    ("iadd-broadcast", lambda xp: A(xp).__iadd__(xp.zeros((2, 2, 3)))),
    ("fill-array", lambda xp: A(xp).fill(xp.zeros(2))),
    ("item-oob", lambda xp: A(xp).item(10)),
    ("int-of-array", lambda xp: int(A(xp))),
    ("len-0d", lambda xp: len(xp.asarray(1.0))),
    ("iter-0d", lambda xp: iter(xp.asarray(1.0))),
    ("bool-array", lambda xp: bool(A(xp))),
    ("index-float-array", lambda xp: operator.index(xp.asarray(1.5))),
    ("maximum-reduce-empty", lambda xp: xp.maximum.reduce([])),
    ("frombuffer-size", lambda xp: xp.frombuffer(b"abc", dtype=xp.float64)),
    ("choose-oob", lambda xp: xp.choose(xp.asarray([3]), [xp.zeros(1), xp.ones(1)])),
    ("put-oob", lambda xp: xp.arange(3).put(5, 1)),
    ("kron-str", lambda xp: xp.kron("a", 1)),
    ("result-type-none", lambda xp: xp.result_type()),
    ("can-cast-bad", lambda xp: xp.can_cast(1.5, "foo")),
    ("array-ragged", lambda xp: xp.array([[1, 2], [3]])),
    ("divmod-shapes", lambda xp: xp.divmod(xp.zeros(2), xp.zeros(3))),
    ("roll-axis", lambda xp: xp.roll(xp.zeros(3), 1, axis=2)),
    ("flip-axis", lambda xp: xp.flip(xp.zeros(3), axis=1)),
    ("rot90-axes", lambda xp: xp.rot90(A(xp), axes=(0, 0))),
    ("triu-1d-k", lambda xp: xp.triu(xp.zeros(()))),
    ("outer-str", lambda xp: xp.outer("a", "b")),
    ("unique-axis", lambda xp: xp.unique(A(xp), axis=3)),
    ("var-ddof-str", lambda xp: xp.var(A(xp), ddof="a")),
    ("round-decimals-float", lambda xp: xp.round(A(xp), 1.5)),
    ("nonzero-0d", lambda xp: xp.nonzero(xp.asarray(1.0))),
    ("resize-neg", lambda xp: xp.resize(xp.zeros(3), -1)),
    ("delete-oob", lambda xp: xp.delete(xp.zeros(3), 5)),
    ("insert-oob", lambda xp: xp.insert(xp.zeros(3), 5, 1)),
]


def _public(exc: type[BaseException]) -> type[BaseException]:
    """`exc`, or its nearest base that NumPy or Python makes public."""
    for klass in exc.__mro__:
        if klass.__module__ in ("builtins", "numpy.exceptions", "numpy.linalg"):
            return klass
    return Exception


def _raised(xp, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call(xp)
        except Exception as err:  # noqa: BLE001  (the type is what the table compares)
            return type(err)
    return None


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_bad_input_raises_numpys_exception(row):
    _, call = row
    expected = _raised(np, call)
    actual = _raised(mjnp, call)
    if expected is None:
        assert actual is None, f"NumPy accepts this input; mjnp raised {actual}"
    else:
        assert actual is not None, f"NumPy raises {expected.__name__}; mjnp raised nothing"
        assert issubclass(actual, _public(expected)), (actual, expected)


# --- generated rows: every reduction with a bad axis, every binary ufunc with shapes that do
# not broadcast, every unary ufunc with a string ------------------------------------------

_REDUCTIONS = [
    "sum",
    "prod",
    "mean",
    "std",
    "var",
    "max",
    "min",
    "argmax",
    "argmin",
    "all",
    "any",
    "cumsum",
    "cumprod",
    "nansum",
    "nanprod",
    "nanmean",
    "nanstd",
    "nanvar",
    "nanmax",
    "nanmin",
    "median",
    "ptp",
    "count_nonzero",
    "sort",
    "argsort",
]
_BAD_AXES = {"axis5": 5, "axis-neg": -3, "axis-float": 1.0, "axis-dup": (0, 0)}
_BINARY_UFUNCS = sorted(
    n
    for n in dir(np)
    if isinstance(getattr(np, n), np.ufunc)
    and getattr(np, n).nin == 2
    and getattr(np, n).signature is None
    and hasattr(mjnp, n)
)
_UNARY_UFUNCS = sorted(
    n
    for n in dir(np)
    if isinstance(getattr(np, n), np.ufunc) and getattr(np, n).nin == 1 and hasattr(mjnp, n)
)


def _reduction_row(name, axis):
    return lambda xp: getattr(xp, name)(A(xp), axis=axis)


def _binary_row(name):
    # Integer operands, so that the shapes (not a dtype) are what is wrong for every ufunc.
    return lambda xp: getattr(xp, name)(xp.ones(2, dtype=int), xp.ones(3, dtype=int))


def _binary_out_row(name):
    return lambda xp: getattr(xp, name)(xp.ones(3, dtype=int), 2, out=xp.zeros(2))


def _unary_row(name):
    return lambda xp: getattr(xp, name)("abc")


def _unary_out_row(name):
    return lambda xp: getattr(xp, name)(xp.ones(3), out=xp.zeros((2, 2)))


GENERATED = (
    [(f"{n}-{k}", _reduction_row(n, v)) for n in _REDUCTIONS for k, v in _BAD_AXES.items()]
    + [(f"{n}-shapes", _binary_row(n)) for n in _BINARY_UFUNCS]
    + [(f"{n}-out-shape", _binary_out_row(n)) for n in _BINARY_UFUNCS]
    + [(f"{n}-str", _unary_row(n)) for n in _UNARY_UFUNCS]
    + [(f"{n}-out-shape", _unary_out_row(n)) for n in _UNARY_UFUNCS]
)


@pytest.mark.parametrize("row", GENERATED, ids=[r[0] for r in GENERATED])
def test_generated_bad_input_raises_numpys_exception(row):
    test_bad_input_raises_numpys_exception(row)


def test_the_table_has_at_least_300_rows():
    assert len(ROWS) + len(GENERATED) >= 300
