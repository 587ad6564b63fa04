"""mjcore.dtypes against NumPy 2, which is the oracle for every promotion rule."""

import enum
import itertools
from typing import Any, NamedTuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mjcore import dtypes

SUPPORTED = dtypes.SUPPORTED_DTYPES
# One weak Python scalar per kind; small values, because NumPy 2 has no value-based casting left
# except the int range check tested separately.
PY_SCALARS: tuple[Any, ...] = (True, 1, 1.0, 1j)


class FakeAval(NamedTuple):
    """Stands in for an mjcore array, tracer or aval: a dtype and a weak flag."""

    dtype: np.dtype
    weak_type: bool


def _id(x: Any) -> str:
    if isinstance(x, np.dtype):
        return x.name
    if isinstance(x, FakeAval):
        return f"{x.dtype.name}{'-weak' if x.weak_type else ''}"
    return f"py{type(x).__name__}"


def _oracle_arg(x: Any) -> Any:
    # A weak mjcore value behaves like the Python scalar of its kind.
    if isinstance(x, FakeAval):
        return PY_SCALARS["bifc".index(x.dtype.kind.replace("u", "i"))] if x.weak_type else x.dtype
    return x


def _numpy_result_type(*args: Any) -> tuple[np.dtype, bool]:
    oracle_args = [_oracle_arg(a) for a in args]
    all_weak = all(type(a) in (bool, int, float, complex) for a in oracle_args)
    return np.result_type(*oracle_args), all_weak


def _mismatches(arg_tuples: Any) -> list[str]:
    bad = []
    for args in arg_tuples:
        got = dtypes.result_type(*args)
        want = _numpy_result_type(*args)
        if got != want:
            bad.append(f"{'-'.join(map(_id, args))}: got {got}, NumPy {want}")
    return bad


# ---------------------------------------------------------------------------------------------
# Tables of supported dtypes and their names.

NAME_CASES = [
    # dtype, short_name (jaxpr), hlo_name (StableHLO)
    ("bool", "bool", "i1"),
    ("int8", "i8", "i8"),
    ("int16", "i16", "i16"),
    ("int32", "i32", "i32"),
    ("int64", "i64", "i64"),
    ("uint8", "u8", "ui8"),
    ("uint16", "u16", "ui16"),
    ("uint32", "u32", "ui32"),
    ("uint64", "u64", "ui64"),
    ("float16", "f16", "f16"),
    ("float32", "f32", "f32"),
    ("float64", "f64", "f64"),
    ("complex64", "c64", "complex<f32>"),
    ("complex128", "c128", "complex<f64>"),
]


def test_supported_dtypes_table():
    assert [dt.name for dt in SUPPORTED] == [name for name, _, _ in NAME_CASES]
    assert all(isinstance(dt, np.dtype) for dt in SUPPORTED)
    assert (dtypes.default_int, dtypes.default_float, dtypes.default_complex) == (
        np.dtype("int64"),
        np.dtype("float64"),
        np.dtype("complex128"),
    )


@pytest.mark.parametrize("name,short,hlo", NAME_CASES, ids=[c[0] for c in NAME_CASES])
def test_names(name: str, short: str, hlo: str):
    assert dtypes.short_name(np.dtype(name)) == short
    assert dtypes.hlo_name(np.dtype(name)) == hlo


@pytest.mark.parametrize("dt", SUPPORTED, ids=_id)
def test_kind_predicates_match_numpy(dt: np.dtype):
    assert dtypes.dtype_kind(dt) == dt.kind
    assert dtypes.is_bool(dt) == (dt == np.bool_)
    assert dtypes.is_integer(dt) == np.issubdtype(dt, np.integer)
    assert dtypes.is_unsigned(dt) == np.issubdtype(dt, np.unsignedinteger)
    assert dtypes.is_floating(dt) == np.issubdtype(dt, np.floating)
    assert dtypes.is_complex(dt) == np.issubdtype(dt, np.complexfloating)
    assert dtypes.is_inexact(dt) == np.issubdtype(dt, np.inexact)


# ---------------------------------------------------------------------------------------------
# canonicalize_dtype

CANONICALIZE_CASES = [
    (np.dtype("float32"), "float32"),
    (np.float32, "float32"),
    ("float32", "float32"),
    ("f4", "float32"),
    (">f4", "float32"),
    ("e", "float16"),
    (np.bool_, "bool"),
    ("?", "bool"),
    (bool, "bool"),
    (int, "int64"),
    (float, "float64"),
    (complex, "complex128"),
    ("int", "int64"),
    (np.longlong, "int64"),
    (np.intc, "int32"),
    (np.uintp, "uint64"),
    ("c8", "complex64"),
    (np.complex128, "complex128"),
    (np.dtype("float64", metadata={"a": 1}), "float64"),
]


@pytest.mark.parametrize(
    "spec,name", CANONICALIZE_CASES, ids=[repr(c[0]) for c in CANONICALIZE_CASES]
)
def test_canonicalize_dtype(spec: Any, name: str):
    dt = dtypes.canonicalize_dtype(spec)
    assert dt == np.dtype(name)
    # The canonical instance itself, so `is` comparisons and dict lookups stay cheap.
    assert any(dt is s for s in SUPPORTED)


CANONICALIZE_ERRORS = [
    (object, "not supported"),
    (str, "not supported"),
    ("U", "not supported"),
    ("M8", "not supported"),
    ("m8[s]", "not supported"),
    (np.longdouble, "not supported"),
    (np.clongdouble, "not supported"),
    ("V8", "not supported"),
    ([("a", "f4")], "not supported"),
    ("foo", "not understood"),
    (3, "not understood"),
    (None, "None is not a data type"),
]


@pytest.mark.parametrize(
    "spec,what", CANONICALIZE_ERRORS, ids=[repr(c[0]) for c in CANONICALIZE_ERRORS]
)
def test_canonicalize_dtype_errors(spec: Any, what: str):
    with pytest.raises(TypeError, match=rf"^mjnp\.zeros: .*{what}") as info:
        dtypes.canonicalize_dtype(spec, "mjnp.zeros")
    if spec is not None:
        assert repr(spec) in str(info.value)


# ---------------------------------------------------------------------------------------------
# Python scalars


class _IntEnum(enum.IntEnum):
    A = 1


SCALAR_CASES = [
    # value, is weak, python_scalar_dtype
    (True, True, "bool"),
    (0, True, "int64"),
    (2**70, True, "int64"),
    (1.5, True, "float64"),
    (1j, True, "complex128"),
    (_IntEnum.A, False, "int64"),
    (np.float64(1.0), False, None),
    (np.float32(1.0), False, None),
    (np.bool_(True), False, None),
    (np.int64(1), False, None),
    (np.array(1.0), False, None),
    ("1", False, None),
]


@pytest.mark.parametrize("x,weak,name", SCALAR_CASES, ids=[repr(c[0]) for c in SCALAR_CASES])
def test_python_scalars(x: Any, weak: bool, name: str | None):
    assert dtypes.is_python_scalar(x) is weak
    if name is None:
        with pytest.raises(TypeError, match="python_scalar_dtype: expected a Python"):
            dtypes.python_scalar_dtype(x)
    else:
        assert dtypes.python_scalar_dtype(x) == np.dtype(name)


def test_scalar_subclasses_are_strong_as_in_numpy():
    # NumPy 2 treats only exact int/float/complex as weak; an IntEnum member promotes as int64.
    assert (np.ones(1, np.int8) + _IntEnum.A).dtype == np.int64
    assert dtypes.result_type(np.int8, _IntEnum.A) == (np.dtype("int64"), False)
    assert dtypes.result_type(np.float32, np.float64(1.0)) == (np.dtype("float64"), False)


# ---------------------------------------------------------------------------------------------
# Promotion: NumPy over every pair and triple of supported dtypes and Python scalars.

PAIRS = list(itertools.product(SUPPORTED, repeat=2))


@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a.name}-{b.name}" for a, b in PAIRS])
def test_promote_types(a: np.dtype, b: np.dtype):
    want = np.promote_types(a, b)
    assert dtypes.promote_types(a, b) == want
    assert dtypes.promote_types(a.name, b.type) == want
    assert (np.ones(1, a) + np.ones(1, b)).dtype == want
    assert dtypes.result_type(a, b) == (want, False)
    assert dtypes.result_type(np.ones(2, a), b.type(0)) == (want, False)


STRONG_WEAK = list(itertools.product(SUPPORTED, PY_SCALARS))


@pytest.mark.parametrize("dt,x", STRONG_WEAK, ids=[f"{d.name}-{_id(x)}" for d, x in STRONG_WEAK])
def test_result_type_with_python_scalar_matches_arithmetic(dt: np.dtype, x: Any):
    want = (np.ones(1, dt) + x).dtype
    assert want == np.result_type(dt, x)
    assert dtypes.result_type(dt, x) == (want, False)
    assert dtypes.result_type(x, np.ones(1, dt)) == (want, False)
    # An mjcore value carrying the scalar's weak dtype promotes exactly like the scalar.
    weak = FakeAval(dtypes.python_scalar_dtype(x), True)
    assert dtypes.result_type(weak, FakeAval(dt, False)) == (want, False)


@pytest.mark.parametrize("x,y", list(itertools.product(PY_SCALARS, repeat=2)))
def test_result_type_all_weak(x: Any, y: Any):
    want = np.result_type(x, y)
    assert dtypes.result_type(x, y) == (want, True)
    assert dtypes.result_type(x) == (np.result_type(x), True)
    weak_x = FakeAval(dtypes.python_scalar_dtype(x), True)
    assert dtypes.result_type(weak_x, y) == (want, True)


def test_result_type_all_tuples_up_to_four():
    # Exhaustive, because NumPy's n-ary promotion is not a fold of the binary one (see the
    # int8-uint8-float16 row below) and 105k cases take well under a second.
    universe = (*SUPPORTED, *PY_SCALARS)
    args = itertools.chain.from_iterable(
        itertools.product(universe, repeat=n) for n in (1, 2, 3, 4)
    )
    assert _mismatches(args) == []


# Spot checks of the rules in words, so a failure above has a readable counterpart.
RULE_CASES = [
    ((np.int8, 1), "int8"),
    ((np.float32, 1.0), "float32"),
    ((np.uint8, True), "uint8"),
    ((np.int8, 1.0), "float64"),
    ((np.bool_, 1), "int64"),
    ((np.float32, 1j), "complex64"),
    ((np.float16, 1j), "complex64"),
    ((np.int32, 1j), "complex128"),
    ((np.float64, 1j), "complex128"),
    ((np.int8, 1, 2.0), "float64"),
    ((np.float16, 1j, 2.0), "complex64"),
    # Strong dtypes promote first: the weak float does not lift int8 + float16 to float64.
    ((np.int8, 1.0, np.float16), "float16"),
    ((np.uint8, 1, np.int8), "int16"),
    # Not a fold of promote_types: NumPy promotes each dtype with float16 (the most
    # "knowledgeable"), so int8 + uint8 -> int16 never happens here.
    ((np.int8, np.uint8, np.float16), "float16"),
    ((np.int8, np.uint16, np.float32), "float32"),
    ((np.int16, np.uint16, np.complex64), "complex64"),
]


@pytest.mark.parametrize(
    "args,name", RULE_CASES, ids=["-".join(map(_id, a)) for a, _ in RULE_CASES]
)
def test_result_type_rules(args: tuple[Any, ...], name: str):
    assert np.result_type(*args) == np.dtype(name)
    assert dtypes.result_type(*args) == (np.dtype(name), False)


_arg = st.one_of(
    st.sampled_from(SUPPORTED),
    st.sampled_from(PY_SCALARS),
    st.builds(lambda dt, n: np.zeros(n, dt), st.sampled_from(SUPPORTED), st.integers(0, 2)),
    st.builds(lambda dt: dt.type(0), st.sampled_from(SUPPORTED)),
    st.builds(lambda dt: FakeAval(dt, False), st.sampled_from(SUPPORTED)),
    # Weak mjcore values always hold their kind's default dtype.
    st.builds(lambda x: FakeAval(dtypes.python_scalar_dtype(x), True), st.sampled_from(PY_SCALARS)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_arg, min_size=1, max_size=6))
def test_result_type_matches_numpy_hypothesis(args: list[Any]):
    assert dtypes.result_type(*args) == _numpy_result_type(*args)


def test_result_type_weak_value_contributes_only_its_kind():
    # A weak float32 (say, from a float32 context) still promotes like a Python float.
    weak_f32 = FakeAval(np.dtype("float32"), True)
    assert dtypes.result_type(np.int8, weak_f32) == (np.dtype("float64"), False)
    assert dtypes.result_type(np.float16, weak_f32) == (np.dtype("float16"), False)
    assert dtypes.result_type(weak_f32) == (np.dtype("float64"), True)


RESULT_TYPE_ERRORS = [
    ((None,), TypeError, r"mjnp\.add: cannot determine a dtype for NoneType"),
    (("x", 1), TypeError, r"mjnp\.add: data type 'x' not understood"),
    ((np.ones(1, np.longdouble), 1), TypeError, r"mjnp\.add: dtype .*float128.* not supported"),
    ((np.float32, object), TypeError, r"mjnp\.add: .*not supported"),
    ((), ValueError, r"mjnp\.add: at least one array or dtype is required"),
]


@pytest.mark.parametrize(
    "args,exc,match", RESULT_TYPE_ERRORS, ids=["none", "bad-str", "longdouble", "object", "empty"]
)
def test_result_type_errors(args: tuple[Any, ...], exc: type[Exception], match: str):
    with pytest.raises(exc, match=match):
        dtypes.result_type(*args, fname="mjnp.add")


# ---------------------------------------------------------------------------------------------
# Python int range: NumPy 2 raises instead of wrapping.

INT_DTYPES = [dt for dt in SUPPORTED if dt.kind in "iu"]


def _numpy_raises_overflow(value: int, dt: np.dtype) -> bool:
    try:
        np.ones(1, dt) + value
    except OverflowError:
        return True
    return False


def _range_cases() -> list[tuple[int, np.dtype]]:
    cases = []
    for dt in INT_DTYPES:
        info = np.iinfo(dt)
        lo, hi = int(info.min), int(info.max)
        cases += [(v, dt) for v in (lo - 1, lo, 0, hi, hi + 1, 2**100, -(2**100))]
    return cases


RANGE_CASES = _range_cases()


@pytest.mark.parametrize("value,dt", RANGE_CASES, ids=[f"{dt.name}-{v}" for v, dt in RANGE_CASES])
def test_check_python_int_range_matches_numpy(value: int, dt: np.dtype):
    if _numpy_raises_overflow(value, dt):
        # NumPy words the int64 range differently ("Python int too large to convert to C
        # long"); ours is uniform.
        with pytest.raises(OverflowError, match=rf"^f: Python integer {value} out of bounds for"):
            dtypes.check_python_int_range(value, dt, "f")
    else:
        dtypes.check_python_int_range(value, dt, "f")


def test_uint8_plus_300_wording_matches_numpy():
    msg = "Python integer 300 out of bounds for uint8"
    with pytest.raises(OverflowError, match=msg):
        np.array([1], np.uint8) + 300
    with pytest.raises(OverflowError, match=rf"^mjnp\.add: {msg}$"):
        dtypes.check_python_int_range(300, np.dtype("uint8"), "mjnp.add")
    with pytest.raises(OverflowError, match=rf"^mjnp\.add: {msg}$"):
        dtypes.check_python_int_range(300, "u1", "mjnp.add")


@pytest.mark.parametrize("dt", ["bool", "float16", "float32", "complex64"])
def test_check_python_int_range_ignores_non_integer_dtypes(dt: str):
    # float32 + 2**70 is fine in NumPy; bool + int promotes to int64 before any check.
    dtypes.check_python_int_range(2**70, np.dtype(dt), "f")


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(INT_DTYPES), st.integers(-(2**65), 2**65))
def test_check_python_int_range_hypothesis(dt: np.dtype, value: int):
    if _numpy_raises_overflow(value, dt):
        with pytest.raises(OverflowError):
            dtypes.check_python_int_range(value, dt, "f")
    else:
        dtypes.check_python_int_range(value, dt, "f")


COERCE_CASES = [
    (1, "uint8"),
    (-1, "int8"),
    (2**63, "uint64"),
    (True, "float32"),
    (1.5, "int8"),
    (-1.5, "int32"),
    (1.5, "bool"),
    (2**70, "float32"),
    (1e300, "float32"),
    (1j, "complex64"),
]


@pytest.mark.parametrize("x,name", COERCE_CASES, ids=[f"{c[0]!r}-{c[1]}" for c in COERCE_CASES])
def test_coerce_python_scalar_matches_numpy(x: Any, name: str):
    with np.errstate(over="ignore"):
        want = np.asarray(x, dtype=name)
        got = dtypes.coerce_python_scalar(x, name, "f")
    assert got.dtype == want.dtype and got.shape == ()
    np.testing.assert_array_equal(got, want)


COERCE_ERRORS = [
    (300, "uint8", OverflowError, r"^f: Python integer 300 out of bounds for uint8$"),
    (2**63, "int64", OverflowError, r"^f: Python integer 9223372036854775808 out of bounds"),
    (float("inf"), "int8", OverflowError, r"^f: cannot convert inf to int8"),
    (float("nan"), "int8", ValueError, r"^f: cannot convert nan to int8"),
    (1j, "float64", TypeError, r"^f: cannot convert 1j to float64"),
]


@pytest.mark.parametrize(
    "x,name,exc,match", COERCE_ERRORS, ids=[f"{c[0]!r}-{c[1]}" for c in COERCE_ERRORS]
)
def test_coerce_python_scalar_errors(x: Any, name: str, exc: type[Exception], match: str):
    with pytest.raises(exc):
        np.asarray(x, dtype=name)  # NumPy raises the same type, without naming a function
    with pytest.raises(exc, match=match):
        dtypes.coerce_python_scalar(x, name, "f")
