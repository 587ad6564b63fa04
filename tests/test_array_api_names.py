"""Always-on Array API checks: every name the standard requires exists on mjnp, mjnp.linalg,
mjnp.fft, the Array type or the inspection namespace, with a signature that accepts every call
the standard allows, and gives NumPy 2's answer on a sample input.

The name list is ../shared/reference/array-api-names.txt when it is beside the repository,
else our copy in conformance/array_api_names.txt. Signatures come from conformance.signatures;
known gaps are strict xfails listed in conformance.xfails. The full test suite
(data-apis/array-api-tests) runs separately: see conformance/README.md.
"""

from __future__ import annotations

import math
import operator
import re
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import numpy
import pytest

import mjnp
from conformance import xfails
from conformance.array_api import read_xfails
from conformance.signatures import SIGNATURES, mismatches, params_of, parse
from tests.mjnp_testing import assert_matches

ROOT = Path(__file__).resolve().parents[1]
SHARED_NAMES = ROOT / ".." / "shared" / "reference" / "array-api-names.txt"
OUR_NAMES = ROOT / "conformance" / "array_api_names.txt"

# Section headings of the name list -> prefix of the qualified names in that section.
_SECTION_PREFIXES = (
    ("dtype object", "dtype."),
    ("inspection namespace", "info."),
    ("extension linalg", "linalg."),
    ("extension fft", "fft."),
    ("array object", "Array."),
)


def reference_names(path: Path) -> list[str]:
    """Qualified names (``sum``, ``linalg.svd``, ``Array.__add__``, ...) from a name list."""
    names, prefix = [], ""
    for line in path.read_text().splitlines():
        line = line.strip()
        if line.startswith("#"):
            heading = line.lstrip("# ")
            prefix = next((p for h, p in _SECTION_PREFIXES if heading.startswith(h)), "")
        elif line:
            names.append(prefix + line)
    return names


NAMES = reference_names(SHARED_NAMES if SHARED_NAMES.is_file() else OUR_NAMES)
Array = type(mjnp.asarray(0.0))
_INPLACE = re.compile(r"Array\.__i(\w+)__")


def _resolve(xp: Any, qualname: str) -> Any:
    """The object a qualified name denotes in namespace ``xp`` (mjnp or numpy)."""
    owner_name, _, name = qualname.rpartition(".")
    if owner_name == "info":
        return getattr(xp.__array_namespace_info__(), name)
    owner = {
        "": xp,
        "linalg": xp.linalg,
        "fft": xp.fft,
        "Array": type(xp.asarray(0.0)),
        "dtype": xp.float64,
    }[owner_name]
    return getattr(owner, name)


def _marks(qualname: str, *gaps: dict[str, str]) -> list[pytest.MarkDecorator]:
    for gap in (xfails.MISSING, *gaps):
        if qualname in gap:
            return [pytest.mark.xfail(reason=gap[qualname], strict=True)]
    return []


def _params(names: list[str], *gaps: dict[str, str]) -> list[Any]:
    return [pytest.param(n, id=n, marks=_marks(n, *gaps)) for n in names]


def test_name_list_copy_is_current():
    """conformance/array_api_names.txt is the fallback for CI without ../shared: keep it equal."""
    if not SHARED_NAMES.is_file():
        pytest.skip("../shared/reference is not beside this checkout")
    assert OUR_NAMES.read_text() == SHARED_NAMES.read_text()


def test_suite_xfails_carry_reasons():
    """conformance/xfails.txt parses: every entry is `<suite test id>  # <reason>`."""
    ids = read_xfails(ROOT / "conformance" / "xfails.txt")
    assert all(i.startswith("array_api_tests/") for i in ids)


@pytest.mark.parametrize("qualname", _params(NAMES))
def test_name_exists(qualname):
    inplace = _INPLACE.fullmatch(qualname)
    if inplace and not hasattr(Array, qualname.removeprefix("Array.")):
        # NB: 2025.12 lets `x op= y` fall back to `x = x op y`, which is how mjnp's immutable
        # arrays rebind; test_matches_numpy checks the value.
        assert hasattr(Array, f"__{inplace.group(1)}__")
        return
    _resolve(mjnp, qualname)


# Names whose signature is checked: all with a stub signature, except dtype.__eq__ (dtypes
# are NumPy's own objects) and in-place operators (see test_name_exists).
SIGNATURE_NAMES = [
    n for n in NAMES if n in SIGNATURES and not n.startswith("dtype.") and not _INPLACE.match(n)
]


def _def(source: str) -> Callable:
    namespace: dict[str, Any] = {}
    exec(f"def f{source}: pass", namespace)
    return namespace["f"]


# (standard signature, candidate signature, problems the checker must report)
CHECKER_CASES = [
    ("(x, /, *, axis=None)", "(a, axis=None, out=None)", []),
    ("(x, /, min=None, max=None)", "(a, a_min=None, a_max=None, *, min=None, max=None)", []),
    ("(x, /, *, axis=None)", "(x, /)", ["missing keyword 'axis'"]),
    ("(x, /, *, axis=None)", "(x, /, *, axis)", ["keyword 'axis' must be optional"]),
    ("(x, /, shape)", "(x, newshape)", ["positional parameter 1 is 'newshape', not 'shape'"]),
    ("(x, /)", "(x, y)", ["extra parameter 'y' must be optional"]),
    (
        "(*arrays)",
        "(arrays)",
        [
            "must take *arrays after 0 positional parameter(s)",
            "extra parameter 'arrays' must be optional",
        ],
    ),
]


@pytest.mark.parametrize("standard, candidate, problems", CHECKER_CASES)
def test_signature_checker(standard, candidate, problems):
    assert mismatches(parse(standard), params_of(_def(candidate))) == problems


@pytest.mark.parametrize("qualname", _params(SIGNATURE_NAMES, xfails.SIGNATURES))
def test_signature(qualname):
    problems = mismatches(parse(SIGNATURES[qualname]), params_of(_resolve(mjnp, qualname)))
    assert not problems, f"{qualname}: standard {SIGNATURES[qualname]}: {'; '.join(problems)}"


# --- differential samples against NumPy ------------------------------------------------------

F = numpy.array([[0.5, -1.5, 2.0], [3.0, -0.25, 1.0]])
F2 = numpy.array([[1.25, 2.0, -0.5], [-3.0, 0.75, 4.0]])
V = numpy.array([1.0, 2.0, 3.0])
P = numpy.array([0.1, 0.25, 0.5, 0.9])
G = numpy.array([1.5, 2.0, 3.0])
X3 = numpy.arange(24.0).reshape(2, 3, 4)
S = numpy.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])  # symmetric positive
T = numpy.array([[1.0, 2.0, 0.5], [0.0, 3.0, 1.0], [0.0, 0.0, -2.0]])  # distinct eigenvalues
C = numpy.array([1 + 2j, -0.5 + 0.25j, 3 - 1j, 0.5j])
I1 = numpy.array([[3, -2, 7], [0, 5, -4]])
I2 = numpy.array([[1, 6, -3], [2, 0, 5]])
R = numpy.array([3, 1, 3, 0, 1, 3])
SMALL = numpy.array([1, 2, 8, 64], dtype=numpy.int32)
SHIFT = numpy.array([0, 1, 2, 3], dtype=numpy.int32)
B1 = numpy.array([[True, False, True], [False, False, True]])
B2 = numpy.array([[True, True, False], [False, True, True]])


class Case(NamedTuple):
    """One sample: ``fun(xp)`` runs with xp = mjnp and xp = numpy and the results must match.

    ``oracle`` replaces ``fun`` for NumPy where NumPy lacks a spelling the standard has."""

    qualname: str
    tag: str
    fun: Callable[[Any], Any]
    oracle: Callable[[Any], Any] | None = None


def _a(xp: Any, x: Any) -> Any:
    return xp.asarray(x)


_UNARY_DOMAINS = (
    (F, "abs atan asinh ceil cos cosh exp expm1 floor isfinite isinf isnan negative positive "
        "reciprocal round sign signbit sin sinh square tan tanh trunc"),
    (P, "acos asin atanh log log1p log2 log10 sqrt"),
    (G, "acosh"),
    (C, "conj real imag"),
    (I1, "bitwise_invert"),
    (B1, "logical_not"),
)  # fmt: skip
_BINARY_DOMAINS = (
    (F, F2, "add subtract multiply divide floor_divide remainder atan2 copysign hypot logaddexp "
            "maximum minimum nextafter equal not_equal greater greater_equal less less_equal"),
    (P, G[:1], "pow"),
    (I1, I2, "bitwise_and bitwise_or bitwise_xor"),
    (SMALL, SHIFT, "bitwise_left_shift bitwise_right_shift"),
    (B1, B2, "logical_and logical_or logical_xor"),
)  # fmt: skip


def _apply(name: str, operands: tuple, xp: Any) -> Any:
    return getattr(xp, name)(*(_a(xp, x) for x in operands))


ELEMENTWISE = [
    Case(name, "", partial(_apply, name, (x,)))
    for x, names in _UNARY_DOMAINS
    for name in names.split()
] + [
    Case(name, "", partial(_apply, name, (x, y)))
    for x, y, names in _BINARY_DOMAINS
    for name in names.split()
]

# dunder -> (operator, left operand, right operand, Python scalar for the reflected form)
_OPERATORS = {
    "add": (operator.add, F, F2, 2.5),
    "sub": (operator.sub, F, F2, 2.5),
    "mul": (operator.mul, F, F2, 2.5),
    "truediv": (operator.truediv, F, F2, 2.5),
    "floordiv": (operator.floordiv, F, F2, 2.5),
    "mod": (operator.mod, F, F2, 2.5),
    "pow": (operator.pow, P, G[:1], 2.0),
    "matmul": (operator.matmul, S, T, None),
    "and": (operator.and_, I1, I2, 6),
    "or": (operator.or_, I1, I2, 6),
    "xor": (operator.xor, I1, I2, 6),
    "lshift": (operator.lshift, SMALL, SHIFT, 3),
    "rshift": (operator.rshift, SMALL, SHIFT, 300),
}
_IN_PLACE = {
    "add": operator.iadd,
    "sub": operator.isub,
    "mul": operator.imul,
    "truediv": operator.itruediv,
    "floordiv": operator.ifloordiv,
    "mod": operator.imod,
    "pow": operator.ipow,
    "matmul": operator.imatmul,
    "and": operator.iand,
    "or": operator.ior,
    "xor": operator.ixor,
    "lshift": operator.ilshift,
    "rshift": operator.irshift,
}


def _operator(op: Callable, x: Any, y: Any, xp: Any) -> Any:
    return op(_a(xp, x), _a(xp, y))


def _in_place(op: Callable, x: Any, y: Any, xp: Any) -> Any:
    out = _a(xp, x.copy())
    out = op(out, _a(xp, y))
    return out


def _reflected(dunder: str, x: Any, y: Any, scalar: Any, xp: Any) -> Any:
    other = _a(xp, x) if scalar is None else scalar
    return getattr(_a(xp, y), f"__r{dunder}__")(other)


OPERATORS = (
    [
        Case(f"Array.__{d}__", "", partial(_operator, op, x, y))
        for d, (op, x, y, _) in _OPERATORS.items()
    ]
    + [
        Case(f"Array.__r{d}__", "", partial(_reflected, d, x, y, s))
        for d, (_, x, y, s) in _OPERATORS.items()
    ]
    + [
        Case(f"Array.__i{d}__", "", partial(_in_place, op, x, y))
        for d, op in _IN_PLACE.items()
        for _, x, y, _ in [_OPERATORS[d]]
    ]
    + [
        Case(f"Array.__{d}__", "", partial(_operator, getattr(operator, d), F, F2))
        for d in ("eq", "ne", "lt", "le", "gt", "ge")
    ]
)


def _setitem(xp: Any) -> Any:
    x = _a(xp, F.copy())
    x[0, 1:] = 7.0
    return x


def _info(xp: Any) -> Any:
    return xp.__array_namespace_info__()


def _finfo(info: Any) -> tuple:
    return (info.bits, float(info.eps), float(info.max), float(info.min),
            float(info.smallest_normal), numpy.dtype(info.dtype))  # fmt: skip


def _iinfo(info: Any) -> tuple:
    return (info.bits, int(info.max), int(info.min), numpy.dtype(info.dtype))


def _magnitudes(xp: Any, results: tuple) -> tuple:
    """Eigen-, singular- and QR factors are defined up to sign: compare magnitudes."""
    return tuple(xp.abs(r) for r in results)


def _zeros(dtype_name: str, xp: Any) -> Any:
    return xp.zeros(2, dtype=getattr(xp, dtype_name))


def _version(xp: Any) -> bool:
    return bool(re.fullmatch(r"\d{4}\.\d{2}", xp.__array_api_version__))


_DTYPES = "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64 complex64 "
_DTYPES += "complex128"

# fmt: off
OTHERS = [
    # version, constants, dtypes
    Case("__array_api_version__", "", _version),
    Case("e", "", lambda xp: xp.e),
    Case("inf", "", lambda xp: xp.inf),
    Case("nan", "", lambda xp: math.isnan(xp.nan)),
    Case("newaxis", "", lambda xp: _a(xp, V)[:, xp.newaxis]),
    Case("pi", "", lambda xp: xp.pi),
    *[Case(d, "", partial(_zeros, d)) for d in _DTYPES.split()],
    Case("dtype.__eq__", "", lambda xp: (_a(xp, P).dtype == xp.float64,
                                         xp.float32 == xp.float32, xp.float32 == xp.float64)),
    # creation
    Case("arange", "", lambda xp: xp.arange(1, 7, 2, dtype=xp.float32)),
    Case("asarray", "", lambda xp: xp.asarray([[1, 2], [3, 4]], dtype=xp.float32, copy=True)),
    Case("empty", "", lambda xp: (xp.empty((2, 3), dtype=xp.int32).shape,
                                  xp.empty((2, 3), dtype=xp.int32).dtype)),
    Case("empty_like", "", lambda xp: (xp.empty_like(_a(xp, F), dtype=xp.float32).shape,
                                       xp.empty_like(_a(xp, F), dtype=xp.float32).dtype)),
    Case("eye", "", lambda xp: xp.eye(3, 4, k=1, dtype=xp.int32)),
    Case("from_dlpack", "", lambda xp: xp.from_dlpack(_a(xp, F))),
    Case("full", "", lambda xp: xp.full((2, 3), 1.5)),
    Case("full_like", "", lambda xp: xp.full_like(_a(xp, F), 7, dtype=xp.int32)),
    Case("linspace", "", lambda xp: xp.linspace(0.0, 1.0, 5, endpoint=False)),
    Case("meshgrid", "", lambda xp: xp.meshgrid(_a(xp, V), _a(xp, P), indexing="ij")),
    Case("ones", "", lambda xp: xp.ones((2, 3), dtype=xp.complex64)),
    Case("ones_like", "", lambda xp: xp.ones_like(_a(xp, I1))),
    Case("tril", "", lambda xp: xp.tril(_a(xp, S), k=-1)),
    Case("triu", "", lambda xp: xp.triu(_a(xp, S), k=1)),
    Case("zeros", "", lambda xp: xp.zeros((3,), dtype=xp.uint8)),
    Case("zeros_like", "", lambda xp: xp.zeros_like(_a(xp, F), dtype=xp.bool)),
    # data types
    Case("astype", "", lambda xp: xp.astype(_a(xp, F), xp.int32, copy=True)),
    Case("can_cast", "", lambda xp: (xp.can_cast(xp.int32, xp.float64),
                                     xp.can_cast(xp.float64, xp.int32))),
    Case("finfo", "", lambda xp: _finfo(xp.finfo(xp.float32))),
    Case("iinfo", "", lambda xp: _iinfo(xp.iinfo(xp.int16))),
    Case("isdtype", "", lambda xp: (xp.isdtype(xp.float32, "real floating"),
                                    xp.isdtype(xp.int8, ("integral", "bool")),
                                    xp.isdtype(xp.complex64, "numeric"))),
    Case("result_type", "", lambda xp: xp.result_type(xp.int8, xp.float32, _a(xp, I1))),
    # elementwise functions that are not plain unary/binary
    Case("clip", "", lambda xp: xp.clip(_a(xp, F), min=-1.0, max=1.5)),
    Case("clip", "positional", lambda xp: xp.clip(_a(xp, F), -1.0, 1.5)),
    Case("round", "half-even", lambda xp: xp.round(_a(xp, numpy.array([0.5, 1.5, -2.5])))),
    # indexing
    Case("take", "", lambda xp: xp.take(_a(xp, F), _a(xp, [2, 0]), axis=1)),
    Case("take_along_axis", "", lambda xp: xp.take_along_axis(
        _a(xp, F), _a(xp, [[0, 2, 1], [1, 1, 0]]), axis=1)),
    # linear algebra
    Case("matmul", "", lambda xp: xp.matmul(_a(xp, X3), _a(xp, X3).mT)),
    Case("matrix_transpose", "", lambda xp: xp.matrix_transpose(_a(xp, X3))),
    Case("tensordot", "", lambda xp: xp.tensordot(_a(xp, F), _a(xp, X3[0]), axes=1)),
    Case("vecdot", "", lambda xp: xp.vecdot(_a(xp, F), _a(xp, F2), axis=0)),
    # manipulation
    Case("broadcast_arrays", "", lambda xp: xp.broadcast_arrays(_a(xp, F), _a(xp, V))),
    Case("broadcast_shapes", "", lambda xp: xp.broadcast_shapes((2, 1), (3,))),
    Case("broadcast_to", "", lambda xp: xp.broadcast_to(_a(xp, V), (2, 3))),
    Case("concat", "", lambda xp: xp.concat([_a(xp, F), _a(xp, F2)], axis=1)),
    Case("concat", "axis-none", lambda xp: xp.concat([_a(xp, F), _a(xp, V)], axis=None)),
    Case("expand_dims", "", lambda xp: xp.expand_dims(_a(xp, F), axis=1)),
    Case("flip", "", lambda xp: xp.flip(_a(xp, F), axis=1)),
    Case("moveaxis", "", lambda xp: xp.moveaxis(_a(xp, X3), 0, -1)),
    Case("permute_dims", "", lambda xp: xp.permute_dims(_a(xp, X3), (2, 0, 1))),
    Case("repeat", "", lambda xp: xp.repeat(_a(xp, F), 2, axis=0)),
    Case("reshape", "", lambda xp: xp.reshape(_a(xp, F), (3, 2), copy=None)),
    Case("roll", "", lambda xp: xp.roll(_a(xp, F), 1, axis=1)),
    Case("squeeze", "", lambda xp: xp.squeeze(_a(xp, F[:1]), axis=0)),
    Case("stack", "", lambda xp: xp.stack([_a(xp, F), _a(xp, F2)], axis=1)),
    Case("tile", "", lambda xp: xp.tile(_a(xp, F), (2, 1))),
    Case("unstack", "", lambda xp: xp.unstack(_a(xp, F), axis=1)),
    # searching
    Case("argmax", "", lambda xp: xp.argmax(_a(xp, F), axis=1, keepdims=True)),
    Case("argmin", "", lambda xp: xp.argmin(_a(xp, F), axis=0)),
    Case("count_nonzero", "", lambda xp: xp.count_nonzero(_a(xp, I1), axis=1)),
    Case("nonzero", "", lambda xp: xp.nonzero(_a(xp, I1))),
    Case("searchsorted", "", lambda xp: xp.searchsorted(_a(xp, V), _a(xp, [2.0, 0.5]),
                                                        side="right")),
    Case("where", "", lambda xp: xp.where(_a(xp, B1), _a(xp, F), _a(xp, F2))),
    # sets
    Case("isin", "", lambda xp: xp.isin(_a(xp, I1), _a(xp, [0, 7, 5]), invert=True)),
    Case("unique_all", "", lambda xp: xp.unique_all(_a(xp, R))),
    Case("unique_counts", "", lambda xp: xp.unique_counts(_a(xp, R))),
    Case("unique_inverse", "", lambda xp: xp.unique_inverse(_a(xp, R))),
    Case("unique_values", "", lambda xp: xp.unique_values(_a(xp, R))),
    # sorting (NumPy has no `descending`: its oracle flips a stable ascending sort)
    Case("argsort", "", lambda xp: xp.argsort(_a(xp, R), stable=True)),
    Case("argsort", "descending",
         lambda xp: xp.argsort(_a(xp, R), descending=True, stable=True),
         lambda np: len(R) - 1 - np.argsort(R[::-1], stable=True)[::-1]),
    Case("sort", "", lambda xp: xp.sort(_a(xp, F), axis=0)),
    Case("sort", "descending", lambda xp: xp.sort(_a(xp, F), axis=1, descending=True),
         lambda np: np.flip(np.sort(F, axis=1), axis=1)),
    # statistics
    Case("cumulative_prod", "", lambda xp: xp.cumulative_prod(_a(xp, F), axis=1,
                                                              include_initial=True)),
    Case("cumulative_sum", "", lambda xp: xp.cumulative_sum(_a(xp, I1), axis=0, dtype=xp.int32)),
    Case("max", "", lambda xp: xp.max(_a(xp, F), axis=0, keepdims=True)),
    Case("mean", "", lambda xp: xp.mean(_a(xp, F), axis=1)),
    Case("min", "", lambda xp: xp.min(_a(xp, F))),
    Case("prod", "", lambda xp: xp.prod(_a(xp, I1), axis=0, dtype=xp.int64)),
    Case("std", "", lambda xp: xp.std(_a(xp, F), correction=1)),
    Case("sum", "", lambda xp: xp.sum(_a(xp, I1.astype(numpy.int8)), axis=(0, 1))),
    Case("var", "", lambda xp: xp.var(_a(xp, F), axis=0, keepdims=True)),
    # utility
    Case("all", "", lambda xp: xp.all(_a(xp, B1), axis=0)),
    Case("any", "", lambda xp: xp.any(_a(xp, B1), axis=1, keepdims=True)),
    Case("diff", "", lambda xp: xp.diff(_a(xp, V), prepend=_a(xp, [0.0]))),
    Case("diff", "axis", lambda xp: xp.diff(_a(xp, F), axis=0, n=1)),
    # inspection
    Case("__array_namespace_info__", "", lambda xp: _info(xp).default_dtypes()),
    Case("info.capabilities", "", lambda xp: sorted(_info(xp).capabilities())[:2]),
    Case("info.default_device", "", lambda xp: _info(xp).default_device() in _info(xp).devices()),
    Case("info.default_dtypes", "", lambda xp: _info(xp).default_dtypes(device=None)),
    Case("info.devices", "", lambda xp: len(_info(xp).devices()) > 0),
    Case("info.dtypes", "", lambda xp: _info(xp).dtypes(kind="integral")),
    # linalg extension
    Case("linalg.cholesky", "", lambda xp: xp.linalg.cholesky(_a(xp, S), upper=True)),
    Case("linalg.cross", "", lambda xp: xp.linalg.cross(_a(xp, F), _a(xp, F2), axis=-1)),
    Case("linalg.det", "", lambda xp: xp.linalg.det(_a(xp, S))),
    Case("linalg.diagonal", "", lambda xp: xp.linalg.diagonal(_a(xp, X3), offset=1)),
    Case("linalg.eig", "", lambda xp: xp.linalg.eig(_a(xp, T)).eigenvalues),
    Case("linalg.eigh", "", lambda xp: _magnitudes(xp, xp.linalg.eigh(_a(xp, S)))),
    Case("linalg.eigvals", "", lambda xp: xp.linalg.eigvals(_a(xp, T))),
    Case("linalg.eigvalsh", "", lambda xp: xp.linalg.eigvalsh(_a(xp, S))),
    Case("linalg.inv", "", lambda xp: xp.linalg.inv(_a(xp, S))),
    Case("linalg.matmul", "", lambda xp: xp.linalg.matmul(_a(xp, S), _a(xp, T))),
    Case("linalg.matrix_norm", "", lambda xp: xp.linalg.matrix_norm(_a(xp, X3), keepdims=True,
                                                                    ord="fro")),
    Case("linalg.matrix_power", "", lambda xp: xp.linalg.matrix_power(_a(xp, S), 3)),
    Case("linalg.matrix_rank", "", lambda xp: xp.linalg.matrix_rank(_a(xp, X3[0]), rtol=1e-10)),
    Case("linalg.matrix_transpose", "", lambda xp: xp.linalg.matrix_transpose(_a(xp, X3))),
    Case("linalg.outer", "", lambda xp: xp.linalg.outer(_a(xp, V), _a(xp, P))),
    Case("linalg.pinv", "", lambda xp: xp.linalg.pinv(_a(xp, F), rtol=1e-12)),
    Case("linalg.qr", "", lambda xp: _magnitudes(xp, xp.linalg.qr(_a(xp, X3[0].T),
                                                                  mode="reduced"))),
    Case("linalg.slogdet", "", lambda xp: tuple(xp.linalg.slogdet(_a(xp, T)))),
    Case("linalg.solve", "", lambda xp: xp.linalg.solve(_a(xp, S), _a(xp, T))),
    Case("linalg.svd", "", lambda xp: _magnitudes(xp, xp.linalg.svd(_a(xp, F),
                                                                    full_matrices=False))),
    Case("linalg.svdvals", "", lambda xp: xp.linalg.svdvals(_a(xp, X3))),
    Case("linalg.tensordot", "", lambda xp: xp.linalg.tensordot(_a(xp, F), _a(xp, F2),
                                                                axes=([0], [0]))),
    Case("linalg.trace", "", lambda xp: xp.linalg.trace(_a(xp, X3), offset=1, dtype=xp.float32)),
    Case("linalg.vecdot", "", lambda xp: xp.linalg.vecdot(_a(xp, F), _a(xp, F2), axis=1)),
    Case("linalg.vector_norm", "", lambda xp: xp.linalg.vector_norm(_a(xp, F), axis=1,
                                                                    keepdims=True, ord=1)),
    # fft extension
    Case("fft.fft", "", lambda xp: xp.fft.fft(_a(xp, C), n=6, axis=-1, norm="ortho")),
    Case("fft.ifft", "", lambda xp: xp.fft.ifft(_a(xp, C), norm="forward")),
    Case("fft.fftn", "", lambda xp: xp.fft.fftn(_a(xp, X3), s=(2, 4), axes=(0, 2))),
    Case("fft.ifftn", "", lambda xp: xp.fft.ifftn(_a(xp, X3), axes=(1, 2), norm="backward")),
    Case("fft.rfft", "", lambda xp: xp.fft.rfft(_a(xp, P), n=5)),
    Case("fft.irfft", "", lambda xp: xp.fft.irfft(_a(xp, C), n=6)),
    Case("fft.rfftn", "", lambda xp: xp.fft.rfftn(_a(xp, X3), axes=(1, 2))),
    Case("fft.irfftn", "", lambda xp: xp.fft.irfftn(_a(xp, X3), s=(3, 6), axes=(1, 2))),
    Case("fft.hfft", "", lambda xp: xp.fft.hfft(_a(xp, C), n=6)),
    Case("fft.ihfft", "", lambda xp: xp.fft.ihfft(_a(xp, P))),
    Case("fft.fftfreq", "", lambda xp: xp.fft.fftfreq(8, d=0.5)),
    Case("fft.rfftfreq", "", lambda xp: xp.fft.rfftfreq(9, d=2.0)),
    Case("fft.fftshift", "", lambda xp: xp.fft.fftshift(_a(xp, X3), axes=(0, 2))),
    Case("fft.ifftshift", "", lambda xp: xp.fft.ifftshift(_a(xp, X3))),
    # array attributes and methods
    Case("Array.dtype", "", lambda xp: _a(xp, SMALL).dtype),
    Case("Array.device", "", lambda xp: xp.asarray(V, device=_a(xp, F).device)),
    Case("Array.mT", "", lambda xp: _a(xp, X3).mT),
    Case("Array.ndim", "", lambda xp: _a(xp, X3).ndim),
    Case("Array.shape", "", lambda xp: _a(xp, X3).shape),
    Case("Array.size", "", lambda xp: _a(xp, X3).size),
    Case("Array.T", "", lambda xp: _a(xp, F).T),
    Case("Array.__abs__", "", lambda xp: abs(_a(xp, F))),
    Case("Array.__neg__", "", lambda xp: -_a(xp, F)),
    Case("Array.__pos__", "", lambda xp: +_a(xp, I1)),
    Case("Array.__invert__", "", lambda xp: ~_a(xp, I1)),
    Case("Array.__bool__", "", lambda xp: bool(_a(xp, B1)[0, 0])),
    Case("Array.__int__", "", lambda xp: int(_a(xp, I1)[1, 2])),
    Case("Array.__float__", "", lambda xp: float(_a(xp, F)[0, 1])),
    Case("Array.__complex__", "", lambda xp: complex(_a(xp, C)[0])),
    Case("Array.__index__", "", lambda xp: [10, 20, 30][_a(xp, SHIFT)[2]]),
    Case("Array.__getitem__", "", lambda xp: _a(xp, X3)[1, ..., ::-2]),
    Case("Array.__setitem__", "", _setitem),
    Case("Array.__array_namespace__", "", lambda xp: _a(xp, F).__array_namespace__() is xp),
    Case("Array.__dlpack__", "", lambda xp: numpy.from_dlpack(_a(xp, F))),
    Case("Array.__dlpack_device__", "", lambda xp: tuple(map(int, _a(xp, F).__dlpack_device__()))),
    Case("Array.to_device", "", lambda xp: _a(xp, F).to_device(_a(xp, F).device)),
]
# fmt: on

CASES = ELEMENTWISE + OPERATORS + OTHERS


def _case_id(case: Case) -> str:
    return f"{case.qualname}-{case.tag}" if case.tag else case.qualname


def test_every_name_has_a_case():
    assert sorted(set(NAMES) - {c.qualname for c in CASES}) == []


def test_xfail_lists_name_real_cases():
    unknown = {*xfails.MISSING, *xfails.SIGNATURES} - set(NAMES)
    unknown |= set(xfails.VALUES) - {_case_id(c) for c in CASES}
    assert sorted(unknown) == []


def assert_same(actual: Any, expected: Any) -> None:
    """mjnp's result has NumPy's structure, types, dtypes and (within tolerance) values."""
    if isinstance(expected, tuple | list):
        assert isinstance(actual, tuple | list), f"expected a sequence, got {type(actual)}"
        assert len(actual) == len(expected)
        if hasattr(expected, "_fields"):
            assert getattr(actual, "_fields", None) == expected._fields
        for a, e in zip(actual, expected, strict=True):
            assert_same(a, e)
    elif isinstance(expected, dict):
        assert isinstance(actual, dict) and actual.keys() == expected.keys()
        for key, e in expected.items():
            assert_same(actual[key], e)
    elif isinstance(expected, numpy.ndarray | numpy.generic):
        assert_matches(actual, expected)
    elif isinstance(expected, numpy.dtype | type):
        assert numpy.dtype(actual) == numpy.dtype(expected)
    else:
        assert type(actual) is type(expected) and actual == expected, (actual, expected)


def _case_param(case: Case) -> Any:
    marks = _marks(case.qualname)
    if _case_id(case) in xfails.VALUES:
        marks = [pytest.mark.xfail(reason=xfails.VALUES[_case_id(case)], strict=True)]
    return pytest.param(case, id=_case_id(case), marks=marks)


@pytest.mark.parametrize("case", [_case_param(c) for c in CASES])
def test_matches_numpy(case):
    with warnings.catch_warnings(), numpy.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        expected = (case.oracle or case.fun)(numpy)
    assert_same(case.fun(mjnp), expected)
