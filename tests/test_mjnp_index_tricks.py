"""mjnp index tricks (`r_`, `c_`, `mgrid`, `ogrid`, `s_`, `index_exp`, `ndindex`, `ndenumerate`),
the C-named scalar types, `ndarray` and `exceptions`, against NumPy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy
import pytest

import mjcore
import mjnp
from mjcore.errors import ConcretizationTypeError
from tests.mjnp_testing import assert_matches, check_against_numpy

_A = numpy.array([[0, 1, 2], [3, 4, 5]])
_U8 = numpy.array([1, 2], dtype=numpy.uint8)


def _run(xp: Any, case: Callable[[Any, Callable[[Any], Any]], Any]) -> Any:
    """A case on namespace `xp`, with its arrays made by `xp.asarray`."""
    return case(xp, xp.asarray)


# Each case is `f(xp, asarray)`: the same subscript on numpy and on mjnp.
CONCAT_CASES = {
    "r_-arrays-scalars": lambda xp, a: xp.r_[a([1, 2, 3]), 0, 0, a([4, 5, 6])],
    "r_-linspace-list-ints": lambda xp, a: xp.r_[-1:1:6j, [0] * 3, 5, 6],
    "r_-arange-float-step": lambda xp, a: xp.r_[0:1:0.25, 7],
    "r_-open-start": lambda xp, a: xp.r_[:3, 10:7:-1],
    "r_-axis-'-1'": lambda xp, a: xp.r_["-1", a(_A), a(_A)],
    "r_-'0,2'": lambda xp, a: xp.r_["0,2", [1, 2, 3], [4, 5, 6]],
    "r_-'0,2,0'": lambda xp, a: xp.r_["0,2,0", [1, 2, 3], [4, 5, 6]],
    "r_-'1,2,0'": lambda xp, a: xp.r_["1,2,0", [1, 2, 3], [4, 5, 6]],
    "r_-'0,3,-2'": lambda xp, a: xp.r_["0,3,-2", [1, 2, 3], [4, 5, 6]],
    "r_-'0,2,0'-slice": lambda xp, a: xp.r_["0,2,0", 0:3, [4, 5, 6]],
    "r_-'1,2'-slices": lambda xp, a: xp.r_["1,2", 0:3, 1:4],
    "r_-'r'": lambda xp, a: xp.r_["r", [1, 2, 3], [4, 5, 6]],
    "r_-'c'": lambda xp, a: xp.r_["c", [1, 2, 3], [4, 5, 6]],
    "r_-'r'-3d-squeezes": lambda xp, a: xp.r_["r", xp.zeros((1, 3, 1))],
    "r_-weak-int-uint8": lambda xp, a: xp.r_[a(_U8), 3],
    "r_-float32-scalar-weak-float": lambda xp, a: xp.r_[numpy.float32(1), 1.5],
    "r_-bools": lambda xp, a: xp.r_[True, False],
    "r_-bool-int": lambda xp, a: xp.r_[True, 2],
    "r_-complex": lambda xp, a: xp.r_[a(numpy.ones(2, numpy.complex64)), 1.5],
    "r_-0d-array": lambda xp, a: xp.r_[a(numpy.float32(2)), a(numpy.arange(2, dtype=numpy.int8))],
    "c_-columns": lambda xp, a: xp.c_[a([1, 2, 3]), a([4, 5, 6])],
    "c_-rows-scalars": lambda xp, a: xp.c_[a([[1, 2, 3]]), 0, 0, a([[4, 5, 6]])],
    "c_-slices": lambda xp, a: xp.c_[0:3, 1:2:3j],
    "c_-2d": lambda xp, a: xp.c_[a(_A), a(_A.astype(numpy.float32))],
    "c_-'r'": lambda xp, a: xp.c_["r", [1, 2, 3], [4, 5, 6]],
    # errors: NumPy's exception types
    "r_-empty": lambda xp, a: xp.r_[()],
    "r_-directive-only": lambda xp, a: xp.r_["0", ()],
    "r_-unknown-directive": lambda xp, a: xp.r_["x", 1],
    "r_-bad-directive-pair": lambda xp, a: xp.r_["0,", 1],
    "r_-late-directive": lambda xp, a: xp.r_[1, "0"],
    "r_-axis-out-of-range": lambda xp, a: xp.r_["2", a(_A)],
    "r_-0d-concatenate": lambda xp, a: xp.r_["0,0", 1, 2],
    "r_-'r'-too-large": lambda xp, a: xp.r_["r", xp.zeros((2, 2, 2))],
    "r_-zero-step": lambda xp, a: xp.r_[0:1:0],
    "r_-300-into-uint8": lambda xp, a: xp.r_[a(_U8), 300],
}

GRID_CASES = {
    "mgrid-2d": lambda xp, a: xp.mgrid[0:5, 0:4],
    "mgrid-linspace": lambda xp, a: xp.mgrid[-1:1:5j],
    "mgrid-arange": lambda xp, a: xp.mgrid[3:0:-1],
    "mgrid-open-stop": lambda xp, a: xp.mgrid[0:],
    "mgrid-complex-and-int": lambda xp, a: xp.mgrid[0:1:3j, 0:2],
    "mgrid-3d-float": lambda xp, a: xp.mgrid[0:3:0.5, 1:2:0.25, -2:2:3j],
    "mgrid-float32-bound": lambda xp, a: xp.mgrid[0 : numpy.float32(1) : 0.25, 0:2],
    "mgrid-float32-bound-1d": lambda xp, a: xp.mgrid[0 : numpy.float32(1) : 0.25],
    "mgrid-complex64-step": lambda xp, a: xp.mgrid[0 : 4 : numpy.complex64(3j)],
    "mgrid-int8-bounds": lambda xp, a: xp.mgrid[numpy.int8(0) : numpy.int8(4), 0:2],
    "mgrid-0j": lambda xp, a: xp.mgrid[0:5:0j, 0:2],
    "mgrid-1j": lambda xp, a: xp.mgrid[0:5:1j, 0:2],
    "mgrid-negative-1j": lambda xp, a: xp.mgrid[0:5:-1j],
    "mgrid-empty-tuple": lambda xp, a: xp.mgrid[()],
    "mgrid-one-slice-tuple": lambda xp, a: xp.mgrid[0:3,],
    "mgrid-array-bound": lambda xp, a: xp.mgrid[0 : a(3), 0:2],
    "ogrid-2d": lambda xp, a: xp.ogrid[0:5, 0:3],
    "ogrid-linspace": lambda xp, a: xp.ogrid[-1:1:5j],
    "ogrid-float32-complex": lambda xp, a: xp.ogrid[0 : numpy.float32(1) : 0.25, 0:2:5j],
    "ogrid-empty-tuple": lambda xp, a: xp.ogrid[()],
    "ogrid-one-slice-tuple": lambda xp, a: xp.ogrid[0:3,],
    # errors: NumPy's exception types
    "mgrid-negative-size": lambda xp, a: xp.mgrid[5:0, 0:2],
    "mgrid-int": lambda xp, a: xp.mgrid[1],
    "mgrid-ints": lambda xp, a: xp.mgrid[1, 2],
    "mgrid-no-stop-in-tuple": lambda xp, a: xp.mgrid[0:, 0:2],
    "mgrid-zero-step": lambda xp, a: xp.mgrid[0:5:0, 0:2],
    "mgrid-zero-step-1d": lambda xp, a: xp.mgrid[0:5:0],
    "ogrid-zero-float-step": lambda xp, a: xp.ogrid[0:5:0.0, 0:1],
}


@pytest.mark.parametrize("case", list(CONCAT_CASES.values()), ids=list(CONCAT_CASES))
def test_r_c_match_numpy(case: Callable[..., Any]) -> None:
    result = check_against_numpy(lambda: _run(mjnp, case), lambda: _run(numpy, case))
    if result is not None:
        assert isinstance(result, mjnp.ndarray)


@pytest.mark.parametrize("case", list(GRID_CASES.values()), ids=list(GRID_CASES))
def test_grids_match_numpy(case: Callable[..., Any]) -> None:
    result = check_against_numpy(lambda: _run(mjnp, case), lambda: _run(numpy, case))
    for r in result if isinstance(result, tuple) else [result] * (result is not None):
        assert isinstance(r, mjnp.ndarray)


ERROR_CASES = [
    ("r_", lambda: mjnp.r_[1, "0"], ValueError, "must be the first entry"),
    ("r_", lambda: mjnp.r_["x", 1], ValueError, "unknown special directive 'x'"),
    ("r_", lambda: mjnp.r_["1,y", 1], ValueError, "unknown special directive '1,y'"),
    ("r_", lambda: mjnp.r_["undefined_name"], NameError, "'undefined_name'"),
    ("r_", lambda: mjnp.r_["r", mjnp.zeros((2, 2, 2))], ValueError, "too large to be a matrix"),
    ("mgrid", lambda: mjnp.mgrid[5:0, 0:2], ValueError, "negative dimensions"),
    ("mgrid", lambda: mjnp.mgrid[1, 2], AttributeError, "must be a slice"),
    ("ogrid", lambda: mjnp.ogrid[0:, 0:2], AttributeError, "must be a slice with a stop"),
    ("ndindex", lambda: mjnp.ndindex(2, -1), ValueError, "negative dimensions"),
]


@pytest.mark.parametrize(
    "fun, error, match",
    [row[1:] for row in ERROR_CASES],
    ids=[f"{row[0]}-{row[3]}" for row in ERROR_CASES],
)
def test_errors(fun: Callable[[], Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        fun()


def _built_from_strings(xp: Any, a: Any, b: Any, v: Any) -> tuple[Any, Any]:
    # The matrix-builder strings name the caller's variables: these arguments.
    return xp.r_["a, b; b a"], xp.r_["v v"]


def test_matrix_builder_string_reads_caller_names() -> None:
    blocks = (numpy.array([[1, 2], [3, 4]]), numpy.array([[5], [6]]), numpy.array([1.0, 2.0]))
    got = _built_from_strings(mjnp, *map(mjnp.asarray, blocks))
    want = _built_from_strings(numpy, *blocks)
    for g, w in zip(got, want, strict=True):
        assert isinstance(g, mjnp.ndarray)
        assert_matches(g, w)


def test_r_c_under_jit_and_vmap() -> None:
    x, y = numpy.arange(3.0), numpy.ones(2, numpy.float32)
    f = mjcore.jit(lambda a, b: mjnp.r_[a, 0, b, 1:3])
    assert_matches(f(mjnp.asarray(x), mjnp.asarray(y)), numpy.r_[x, 0, y, 1:3])
    g = mjcore.jit(lambda a: mjnp.c_[a, 2 * a])
    assert_matches(g(mjnp.asarray(x)), numpy.c_[x, 2 * x])
    batch = numpy.arange(6).reshape(2, 3)
    h = mjcore.vmap(lambda a: mjnp.r_["0,2", a, -a])
    assert_matches(h(mjnp.asarray(batch)), numpy.stack([numpy.r_["0,2", r, -r] for r in batch]))


def test_grid_bounds_must_be_concrete() -> None:
    with pytest.raises(ConcretizationTypeError, match="mjnp.mgrid"):
        mjcore.jit(lambda n: mjnp.mgrid[0:n])(mjnp.asarray(3))


def test_s_and_index_exp() -> None:
    for expr in (numpy.s_, numpy.index_exp):
        mj_expr = mjnp.s_ if expr is numpy.s_ else mjnp.index_exp
        for key in [slice(1, 3), 2, (slice(None, None, 2), None, Ellipsis), ()]:
            assert mj_expr[key] == expr[key]
    x = mjnp.arange(12).reshape(3, 4)
    assert_matches(x[mjnp.s_[1:, ::2]], numpy.arange(12).reshape(3, 4)[1:, ::2])


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (2, 1, 2)], ids=str)
def test_ndindex_and_ndenumerate(shape: tuple[int, ...]) -> None:
    assert list(mjnp.ndindex(shape)) == list(numpy.ndindex(shape))
    assert list(mjnp.ndindex(*shape)) == list(numpy.ndindex(*shape))
    x = numpy.arange(numpy.prod(shape), dtype=numpy.float32).reshape(shape)
    got, want = list(mjnp.ndenumerate(mjnp.asarray(x))), list(numpy.ndenumerate(x))
    assert got == want
    assert [type(v) for _, v in got] == [type(v) for _, v in want]
    assert list(mjnp.ndenumerate(x.tolist())) == list(numpy.ndenumerate(x.tolist()))


def test_ndenumerate_traced_yields_0d_values() -> None:
    x = numpy.arange(4.0).reshape(2, 2)

    def weighted(a: Any) -> Any:
        return mjnp.stack([v * (i + 2 * j) for (i, j), v in mjnp.ndenumerate(a)])

    want = numpy.array([v * (i + 2 * j) for (i, j), v in numpy.ndenumerate(x)])
    assert_matches(mjcore.jit(weighted)(mjnp.asarray(x)), want)


SCALAR_TYPE_NAMES = [
    "byte",
    "short",
    "intc",
    "long",
    "longlong",
    "ubyte",
    "ushort",
    "uintc",
    "ulong",
    "ulonglong",
]


@pytest.mark.parametrize("name", SCALAR_TYPE_NAMES)
def test_scalar_type_aliases_are_numpys(name: str) -> None:
    t = getattr(mjnp, name)
    assert t is getattr(numpy, name)
    assert_matches(mjnp.arange(3, dtype=t), numpy.arange(3, dtype=t))
    assert_matches(mjnp.asarray(numpy.ones(2, t)) + 1, numpy.ones(2, t) + 1)


def test_bool_scalars_typecodes_scalartype_endianness() -> None:
    assert mjnp.True_ is numpy.True_ and mjnp.False_ is numpy.False_
    assert mjnp.little_endian == numpy.little_endian
    assert set(mjnp.typecodes) == set(numpy.typecodes)
    assert dict(mjnp.typecodes) == {
        "Character": "",
        "Integer": "bhilqnp",
        "UnsignedInteger": "BHILQNP",
        "Float": "efd",
        "Complex": "FD",
        "AllInteger": "bBhHiIlLqQnNpP",
        "AllFloat": "efdFD",
        "Datetime": "",
        "All": "?bhilqnpBHILQNPefdFD",
    }
    assert set(mjnp.ScalarType) <= set(numpy.ScalarType)
    assert {int, float, complex, bool, numpy.float32, numpy.longlong} <= set(mjnp.ScalarType)
    assert not {str, bytes, numpy.longdouble, numpy.datetime64} & set(mjnp.ScalarType)
    for t in mjnp.ScalarType:
        assert mjnp.asarray(t(1)).dtype == numpy.asarray(t(1)).dtype


def test_ndarray_isinstance() -> None:
    assert isinstance(mjnp.arange(3), mjnp.ndarray)
    assert isinstance(mjnp.asarray(1.0), mjnp.ndarray)
    assert not isinstance(numpy.arange(3), mjnp.ndarray)
    assert issubclass(mjcore.Array, mjnp.ndarray) and not issubclass(numpy.ndarray, mjnp.ndarray)
    seen = []
    mjcore.jit(lambda a: seen.append(isinstance(a, mjnp.ndarray)) or a)(mjnp.arange(3))
    mjcore.grad(lambda a: seen.append(isinstance(a, mjnp.ndarray)) or a)(1.0)
    mjcore.vmap(lambda a: seen.append(isinstance(a, mjnp.ndarray)) or a)(mjnp.arange(3))
    assert seen == [True, True, True]  # traced values are arrays too, as with jax.Array
    made = mjnp.ndarray((2, 3))  # NumPy's constructor (issue 23): an mjnp array of that shape
    assert isinstance(made, mjnp.ndarray) and made.shape == (2, 3) and made.dtype == numpy.float64


def test_exceptions_module_is_numpys() -> None:
    for name in mjnp.exceptions.__all__:
        assert getattr(mjnp.exceptions, name) is getattr(numpy.exceptions, name)
    assert set(numpy.exceptions.__all__) <= set(mjnp.exceptions.__all__)
    with pytest.raises(mjnp.exceptions.AxisError):
        mjnp.sum(mjnp.zeros((2, 3)), axis=2)
    with pytest.raises(mjnp.exceptions.AxisError):
        mjnp.concatenate([mjnp.zeros(2)], axis=1)


NEW_NAMES = [
    "r_",
    "c_",
    "s_",
    "index_exp",
    "mgrid",
    "ogrid",
    "ndindex",
    "ndenumerate",
    *SCALAR_TYPE_NAMES,
    "True_",
    "False_",
    "typecodes",
    "ScalarType",
    "little_endian",
    "ndarray",
    "exceptions",
]


def test_new_names_exported() -> None:
    assert set(NEW_NAMES) <= set(mjnp.__all__)
    assert set(NEW_NAMES) <= set(dir(numpy))
    assert len(mjnp.__all__) == len(set(mjnp.__all__))
