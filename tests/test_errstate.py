"""NumPy's floating-point error model in eager mjnp (issue 20 item 4; docs/errors.md).

`mjnp.errstate` is `numpy.errstate`: one state governs both. Each row of the table runs on NumPy
(the oracle) and on mjnp under the default state (warn), `all='raise'` and `all='ignore'`, and
the outcomes must agree: the RuntimeWarnings (class and exact text), or the exception type and
text, or nothing. Then the other modes ('call', 'log', 'print'), `jit` (never warns, as JAX),
calls large enough to run on XLA, and eager grad (against autograd).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import autograd
import autograd.numpy as anp
import numpy as onp
import pytest

import mjcore
import mjnp as np
from mjcore.backend import client as backend

A = onp.array
INF = onp.inf
NAN = onp.nan
# elements: beyond the host limits of primitives that XLA computes faster when large (sqrt,
# float64 sin, composed bodies); one-pass ufuncs (add) and NumPy's SIMD loops (float64 log)
# run on the host at every size (`mjcore.dispatch.host_limit`)
BIG = 1 << 19


def _a(xp: Any, *values: Any, dtype: Any = None) -> Any:
    return xp.asarray(A(values, dtype=dtype))


def _one_inf(n: int) -> onp.ndarray:
    x = onp.ones(n)
    x[n // 3] = INF
    return x


def _one(n: int, value: Any) -> onp.ndarray:
    x = onp.ones(n, onp.result_type(value))
    x[n // 3] = value
    return x


def _alternating(n: int, a: float, b: float) -> onp.ndarray:
    return onp.where(onp.arange(n) % 2 == 0, a, b)


def _set(a: Any, index: Any, value: Any) -> Any:
    a[index] = value
    return a


# (id, f(xp)): each computes one expression on NumPy or mjnp arrays.
CASES: list[tuple[str, Callable[[Any], Any]]] = [
    # divide by zero
    ("log(0)", lambda xp: xp.log(_a(xp, 0.0, 1.0))),
    ("log2(0)", lambda xp: xp.log2(_a(xp, 0.0))),
    ("log10(0)", lambda xp: xp.log10(_a(xp, 0.0))),
    ("log1p(-1)", lambda xp: xp.log1p(_a(xp, -1.0))),
    ("1/0", lambda xp: _a(xp, 1.0) / 0.0),
    ("reciprocal(0)", lambda xp: xp.reciprocal(_a(xp, 0.0))),
    ("power(0,-1)", lambda xp: xp.power(_a(xp, 0.0), -1.0)),
    ("float_power(0,-1)", lambda xp: xp.float_power(_a(xp, 0.0), -1)),
    ("arctanh(1)", lambda xp: xp.arctanh(_a(xp, 1.0))),
    ("floor_divide(1.,0.)", lambda xp: xp.floor_divide(_a(xp, 1.0), 0.0)),
    ("int floor_divide by 0", lambda xp: xp.floor_divide(_a(xp, 1, 2), _a(xp, 0, 1))),
    ("int remainder by 0", lambda xp: xp.remainder(_a(xp, 1, 2), _a(xp, 0, 1))),
    ("int true_divide 0/0", lambda xp: xp.divide(_a(xp, 1, 0), _a(xp, 0, 0))),
    ("complex 1/0", lambda xp: _a(xp, 1 + 1j) / 0),
    ("complex log(0)", lambda xp: xp.log(_a(xp, 0j))),
    ("0-d log(0)", lambda xp: xp.log(xp.asarray(0.0))),
    # invalid
    ("log(-1)", lambda xp: xp.log(_a(xp, -1.0))),
    ("sqrt(-1)", lambda xp: xp.sqrt(_a(xp, -1.0))),
    ("0/0", lambda xp: xp.divide(_a(xp, 0.0), _a(xp, 0.0))),
    ("inf-inf", lambda xp: xp.subtract(_a(xp, INF), _a(xp, INF))),
    ("inf*0", lambda xp: _a(xp, INF) * 0.0),
    ("sin(inf)", lambda xp: xp.sin(_a(xp, INF))),
    ("cos(inf)", lambda xp: xp.cos(_a(xp, INF))),
    ("tan(inf)", lambda xp: xp.tan(_a(xp, INF))),
    ("arcsin(2)", lambda xp: xp.arcsin(_a(xp, 2.0))),
    ("arccos(2)", lambda xp: xp.arccos(_a(xp, 2.0))),
    ("arccosh(0)", lambda xp: xp.arccosh(_a(xp, 0.0))),
    ("arctanh(2)", lambda xp: xp.arctanh(_a(xp, 2.0))),
    ("log1p(-2)", lambda xp: xp.log1p(_a(xp, -2.0))),
    ("power(-8,1/3)", lambda xp: xp.power(_a(xp, -8.0), 1 / 3)),
    ("fmod(1,0)", lambda xp: xp.fmod(_a(xp, 1.0), 0.0)),
    ("remainder(1,0)", lambda xp: xp.remainder(_a(xp, 1.0), 0.0)),
    ("divmod(1,0)", lambda xp: xp.divmod(_a(xp, 1.0), 0.0)),
    ("std with inf", lambda xp: xp.std(_a(xp, INF, 1.0))),
    # overflow
    ("exp(1000)", lambda xp: xp.exp(_a(xp, 1000.0))),
    ("exp2(2000)", lambda xp: xp.exp2(_a(xp, 2000.0))),
    ("expm1(1000)", lambda xp: xp.expm1(_a(xp, 1000.0))),
    ("sinh(1000)", lambda xp: xp.sinh(_a(xp, 1000.0))),
    ("cosh(1000)", lambda xp: xp.cosh(_a(xp, 1000.0))),
    ("1e300*1e300", lambda xp: _a(xp, 1e300) * 1e300),
    ("add overflow", lambda xp: xp.add(_a(xp, 1.7e308), _a(xp, 1.7e308))),
    ("square(1e200)", lambda xp: xp.square(_a(xp, 1e200))),
    ("power(10,400)", lambda xp: xp.power(_a(xp, 10.0), 400.0)),
    ("ldexp(1,2000)", lambda xp: xp.ldexp(_a(xp, 1.0), 2000)),
    ("float32 multiply", lambda xp: _a(xp, 1e30, dtype="f4") * _a(xp, 1e30, dtype="f4")),
    ("float32 + 1e300", lambda xp: _a(xp, 1.0, dtype="f4") + 1e300),
    ("hypot(1e308,1e308)", lambda xp: xp.hypot(_a(xp, 1e308), _a(xp, 1e308))),
    ("deg2rad(1e308)", lambda xp: xp.deg2rad(_a(xp, 1e308))),
    ("complex exp", lambda xp: xp.exp(_a(xp, 1000 + 1j))),
    ("sum overflow", lambda xp: xp.sum(_a(xp, 1.7e308, 1.7e308))),
    ("prod overflow", lambda xp: xp.prod(_a(xp, 1e200, 1e200))),
    ("cumsum overflow", lambda xp: xp.cumsum(_a(xp, 1.7e308, 1.7e308))),
    ("matmul overflow", lambda xp: _a(xp, [1e300]) @ _a(xp, [1e300])),
    ("dot overflow", lambda xp: xp.dot(_a(xp, 1e300), _a(xp, 1e300))),
    # underflow (ignored by default; raised under all='raise')
    ("1e-300*1e-300", lambda xp: _a(xp, 1e-300) * 1e-300),
    ("exp(-1000)", lambda xp: xp.exp(_a(xp, -1000.0))),
    # casts
    ("astype float32 overflow", lambda xp: _a(xp, 1e300).astype(xp.float32)),
    ("astype float16 overflow", lambda xp: _a(xp, 1e5).astype(xp.float16)),
    ("asarray float32 overflow", lambda xp: xp.asarray(A([1e300]), dtype=xp.float32)),
    ("array float16 overflow", lambda xp: xp.array([1e5], dtype=xp.float16)),
    ("astype int32 of nan", lambda xp: _a(xp, NAN).astype(xp.int32)),
    ("astype int64 of 1e30", lambda xp: _a(xp, 1e30).astype(xp.int64)),
    ("astype int8 of inf", lambda xp: _a(xp, INF).astype(xp.int8)),
    ("setitem float32 overflow", lambda xp: _set(xp.zeros(2, xp.float32), 0, 1e300)),
    ("pad float16 overflow", lambda xp: xp.pad(xp.zeros(2, xp.float16), 1, constant_values=1e10)),
    (
        "select float16 overflow",
        lambda xp: xp.select([_a(xp, True)], [xp.zeros(1, xp.float16)], 1e10),
    ),
    (
        "where float16 with 70001",
        lambda xp: xp.where(_a(xp, True, False), _a(xp, 1, 0, dtype="f2"), 70001),
    ),
    # no error: NumPy gives none either (NaN in, NaN out; composed bodies stay quiet)
    ("sin(1)", lambda xp: xp.sin(_a(xp, 1.0))),
    ("log(nan)", lambda xp: xp.log(_a(xp, NAN))),
    ("nan < 1", lambda xp: _a(xp, NAN) < 1.0),
    ("isnan", lambda xp: xp.isnan(_a(xp, NAN))),
    ("clip(nan)", lambda xp: xp.clip(_a(xp, NAN), 0, 1)),
    ("max with nan", lambda xp: xp.max(_a(xp, NAN, 1.0))),
    ("where with nan", lambda xp: xp.where(_a(xp, True), _a(xp, NAN), 0.0)),
    ("logaddexp(-inf,-inf)", lambda xp: xp.logaddexp(_a(xp, -INF), _a(xp, -INF))),
    ("logaddexp(inf,inf)", lambda xp: xp.logaddexp(_a(xp, INF), _a(xp, INF))),
    ("arctan2(0,0)", lambda xp: xp.arctan2(_a(xp, 0.0), _a(xp, 0.0))),
    ("sinc(0)", lambda xp: xp.sinc(_a(xp, 0.0, 1.0))),
    ("nan_to_num", lambda xp: xp.nan_to_num(_a(xp, NAN, INF))),
    ("rint(inf)", lambda xp: xp.rint(_a(xp, INF))),
    ("cbrt(-8)", lambda xp: xp.cbrt(_a(xp, -8.0))),
    ("heaviside(nan)", lambda xp: xp.heaviside(_a(xp, NAN, 0.0), 0.5)),
    ("tanh(1000)", lambda xp: xp.tanh(_a(xp, 1000.0))),
    ("astype float32 in range", lambda xp: _a(xp, 1.5).astype(xp.float32)),
    ("astype int32 in range", lambda xp: _a(xp, 2.5).astype(xp.int32)),
    # large calls, computed by XLA: checked for non-finite results
    ("large log(0)", lambda xp: xp.log(xp.asarray(onp.zeros(BIG)))),
    (
        "large add overflow",
        lambda xp: xp.asarray(onp.full(BIG, 1e308)) + xp.asarray(onp.full(BIG, 1e308)),
    ),
    ("large sqrt(-1)", lambda xp: xp.sqrt(xp.asarray(onp.full(BIG, -1.0)))),
    ("large logaddexp(-inf)", lambda xp: xp.logaddexp(xp.asarray(onp.full(BIG, -INF)), -INF)),
    ("large sin, finite", lambda xp: xp.sin(xp.asarray(onp.ones(BIG)))),
    ("large sin(inf)", lambda xp: xp.sin(xp.asarray(onp.full(BIG, INF)))),
    ("large sin, one inf", lambda xp: xp.sin(xp.asarray(_one_inf(BIG)))),
    ("large divmod(x,0)", lambda xp: xp.divmod(xp.asarray(onp.ones(BIG)), 0.0)),
    ("large complex sqrt", lambda xp: xp.sqrt(xp.asarray(onp.full(BIG, -1 + 0j)))),
    ("large float32 exp overflow", lambda xp: xp.exp(xp.asarray(onp.full(BIG, 100.0, "f4")))),
    # large reductions to one element, computed by XLA, whose result is tested on the host:
    # NumPy reports overflow and inf - inf; an infinity or NaN in the input reports nothing
    ("large float32 sum overflow", lambda xp: xp.sum(xp.asarray(onp.full(BIG, 3e38, "f4")))),
    ("large float32 mean overflow", lambda xp: xp.mean(xp.asarray(onp.full(BIG, 3e38, "f4")))),
    ("large sum inf and -inf", lambda xp: xp.sum(xp.asarray(_alternating(BIG, INF, -INF)))),
    ("large sum, one nan", lambda xp: xp.sum(xp.asarray(_one(BIG, NAN)))),
    ("large sum, one inf", lambda xp: xp.sum(xp.asarray(_one_inf(BIG)))),
    ("large sum, finite", lambda xp: xp.sum(xp.asarray(onp.ones(BIG)))),
    ("large complex sum, one inf", lambda xp: xp.sum(xp.asarray(_one(BIG, INF + 0j)))),
    (
        "large float32 dot overflow",
        lambda xp: xp.dot(
            xp.asarray(onp.full(BIG, 2e19, "f4")), xp.asarray(onp.full(BIG, 2e19, "f4"))
        ),
    ),
    # float16 sums and products accumulate in float32 (as NumPy's) and overflow in the final
    # rounding to float16, which NumPy reports as "in reduce", not "in cast"
    ("float16 sum overflow", lambda xp: xp.sum(xp.asarray(onp.full(30, 6e4, "f2")))),
    ("float16 prod overflow", lambda xp: xp.prod(xp.asarray(onp.full(3, 6e4, "f2")))),
    ("float16 row sums overflow", lambda xp: xp.sum(xp.asarray(onp.full((4, 8), 6e4, "f2")), 1)),
    ("large float16 sum overflow", lambda xp: xp.sum(xp.asarray(onp.full(BIG, 6e4, "f2")))),
    # ... and to many elements, tested by the program's own flags
    (
        "large row sums overflow",
        lambda xp: xp.sum(xp.asarray(onp.full((BIG // 8, 8), 3e38, "f4")), axis=1),
    ),
    # ... and by XLA op by op (no fused program, so no flag): the results are checked
    ("large nansum overflow", lambda xp: xp.nansum(xp.asarray(onp.full(BIG, 3e38, "f4")))),
    (
        "large average overflow",
        lambda xp: xp.average(xp.asarray(onp.full((BIG // 8, 8), 3e38, "f4")), axis=1),
    ),
]
STATES: list[dict[str, str]] = [{}, {"all": "raise"}, {"all": "ignore"}]


def outcome(f: Callable[[Any], Any], xp: Any, state: dict[str, str]) -> tuple[Any, ...]:
    """('ok', the set of (warning class, text)) or ('raise', exception type, text)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with onp.errstate(**state):
            try:
                result = f(xp)
                onp.asarray(result[0] if isinstance(result, tuple) else result)
            except Exception as err:  # noqa: BLE001  (the oracle's type is the check)
                return ("raise", type(err), str(err))
    return ("ok", frozenset((w.category, str(w.message)) for w in caught))


def test_the_table_covers_each_kind() -> None:
    assert len(CASES) >= 40
    with onp.errstate(all="ignore"):  # kinds NumPy raises under all='raise'
        kinds = set()
        for _, f in CASES:
            out = outcome(f, onp, {"all": "raise"})
            if out[0] == "raise":
                kinds.add(out[2].split(" encountered")[0])
    assert kinds == {"divide by zero", "invalid value", "overflow", "underflow"}


@pytest.mark.parametrize("state", STATES, ids=["warn", "raise", "ignore"])
@pytest.mark.parametrize(("name", "f"), CASES, ids=[c[0] for c in CASES])
def test_errors_as_numpy(name: str, f: Callable[[Any], Any], state: dict[str, str]) -> None:
    assert outcome(f, np, state) == outcome(f, onp, state)


def test_overflow_warns_after_many_keyword_combinations() -> None:
    # A function's fused keyword variants are bounded: past the bound the oldest goes (the
    # calls of a new combination used to run op by op, and an XLA-run sum then warned nothing,
    # so whether `sum(x, axis=1)` warned depended on the calls made before it).
    small = np.ones((2, 3, 4, 5), "f4")
    for axis in range(4):
        for keepdims in (False, True):
            for dtype in (None, "f4", "f8", "c8", "c16"):
                np.sum(small, axis=axis, keepdims=keepdims, dtype=dtype)
    # (a combination no other test uses, so it is new here)
    rows = lambda xp: xp.sum(xp.asarray(onp.full((BIG // 8, 8), 3e38, "f4")), axis=-1)  # noqa: E731
    assert outcome(rows, np, {}) == outcome(rows, onp, {}) != ("ok", frozenset())


def test_errstate_is_numpys() -> None:
    assert np.errstate is onp.errstate
    with np.errstate(divide="raise"):
        assert onp.geterr()["divide"] == "raise"
        with pytest.raises(FloatingPointError, match="^divide by zero encountered in log$"):
            np.log(np.zeros(2))
    old = np.seterr(invalid="raise")
    try:
        assert np.geterr() == onp.geterr()
        with pytest.raises(FloatingPointError, match="^invalid value encountered in sqrt$"):
            np.sqrt(np.asarray(-1.0))
    finally:
        np.seterr(**old)


# The other modes, each on a lone ufunc (its host rule is NumPy's), a renamed one (log2 runs
# lax's log: reported as log2), large calls (on the host, and on XLA: sqrt) and a composed body.
MODE_CASES = [
    "log(0)",
    "log2(0)",
    "reciprocal(0)",
    "square(1e200)",
    "large log(0)",
    "large sqrt(-1)",
    "divmod(1,0)",
]


@pytest.mark.parametrize("name", MODE_CASES)
def test_call_mode_as_numpy(name: str) -> None:
    f = dict(CASES)[name]
    calls: dict[Any, list[Any]] = {onp: [], np: []}
    for xp in (onp, np):
        with onp.errstate(all="call", call=lambda *a, xp=xp: calls[xp].append(a)):
            f(xp)
    assert calls[np] == calls[onp] != []


@pytest.mark.parametrize("name", MODE_CASES)
def test_log_mode_as_numpy(name: str) -> None:
    f = dict(CASES)[name]

    class Log:
        def __init__(self) -> None:
            self.lines: list[str] = []

        def write(self, line: str) -> None:
            self.lines.append(line)

    logs = {onp: Log(), np: Log()}
    for xp in (onp, np):
        with onp.errstate(all="log", call=logs[xp]):
            f(xp)
    assert logs[np].lines == logs[onp].lines != []


def test_print_mode_as_numpy(capfd: pytest.CaptureFixture[str]) -> None:
    printed = {}
    for xp in (onp, np):
        with onp.errstate(all="print"):
            dict(CASES)["log2(0)"](xp)
            dict(CASES)["square(1e200)"](xp)
        printed[xp] = capfd.readouterr()
    assert printed[np] == printed[onp]
    assert "Warning: divide by zero encountered in log2" in printed[onp].err


def test_warnings_name_the_users_line_and_repeat() -> None:
    # Python's default filter shows a warning once per line: mjnp's name the caller's line.
    for _ in range(2):  # nothing cached stops the second call's warning
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            np.log2(np.zeros(2))
            np.logaddexp(np.asarray(onp.full(BIG, 1.0)), onp.inf) * 0.0
        assert [str(w.message) for w in caught] == [
            "divide by zero encountered in log2",
            "invalid value encountered in multiply",
        ]
        assert caught[0].filename == __file__


def test_nothing_warns_under_jit() -> None:
    # As JAX: compiled code sets no flags (`jax_debug_nans` is JAX's tool for that).
    with warnings.catch_warnings(), onp.errstate(all="raise"):
        warnings.simplefilter("error")
        out = mjcore.jit(lambda x: np.log(x) + np.exp(x * 1000.0))(np.zeros(3))
        onp.testing.assert_array_equal(onp.asarray(out), onp.full(3, -onp.inf))
        mjcore.jit(lambda x: x.astype(np.int32))(np.asarray([onp.nan]))


def test_vmap_outside_jit_computes_eagerly_and_warns() -> None:
    with pytest.warns(RuntimeWarning, match="^divide by zero encountered in log$"):
        mjcore.vmap(np.log)(np.zeros(3))


# Eager grad: the forward pass warns as NumPy's forward would; the backward pass adds no kind
# of warning that autograd (NumPy's own gradients) does not give.
GRAD_CASES: list[tuple[str, Callable[[Any], Callable[[Any], Any]], float]] = [
    ("log", lambda m: m.log, 0.0),
    ("log1p", lambda m: m.log1p, -1.0),
    ("exp", lambda m: m.exp, 1000.0),
    ("abs", lambda m: m.abs, 0.0),
    ("sin", lambda m: m.sin, 1.0),
    ("tanh", lambda m: m.tanh, 1000.0),
    ("arcsin", lambda m: m.arcsin, 1.0),
    ("x/(x-1)", lambda m: lambda x: x / (x - 1.0), 1.0),
    ("where(x>0, log(x), 0)", lambda m: lambda x: m.where(x > 0, m.log(x), 0.0), -1.0),
    ("sum(square)", lambda m: lambda x: m.sum(m.square(x)), 1e200),
    ("logaddexp(x, x)", lambda m: lambda x: m.logaddexp(x, x), -onp.inf),
    ("sqrt(x*x)", lambda m: lambda x: m.sqrt(x * x), 1e-200),
]


def _kinds(messages: set[str]) -> set[str]:
    return {m.split(" encountered")[0] for m in messages}


def _record(f: Callable[[], Any]) -> set[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f()
    return {str(w.message) for w in caught if w.category is RuntimeWarning}


@pytest.mark.parametrize(("name", "f", "x"), GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_eager_grad_warns_as_numpy_forward_and_autograd(
    name: str, f: Callable[[Any], Any], x: float
) -> None:
    forward = _record(lambda: f(onp)(onp.asarray(x)))
    got = _record(lambda: mjcore.grad(f(np))(x))
    assert forward <= got, (forward, got)  # NumPy's forward warnings, by name
    oracle = _record(lambda: autograd.grad(f(anp))(x))
    assert _kinds(got) <= _kinds(oracle) | _kinds(forward), (got, oracle)


FINITENESS_VALUES = [0.0, -0.0, 1.5, -2.0, 6e4, 1e-45, 1e-310, 3e38, 1e300, INF, -INF, NAN, -NAN]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64"])
@pytest.mark.parametrize("shape", [(), (1,), (3,)], ids=str)
def test_the_host_finiteness_test_is_numpys_isfinite(dtype: str, shape: tuple[int, ...]) -> None:
    # `backend.all_finite` decides whether an XLA-run eager result is re-run for warnings;
    # one float element is tested by its exponent bits, others by NumPy
    with onp.errstate(all="ignore"):
        values = [onp.full(shape, v).astype(dtype) for v in FINITENESS_VALUES]
    for v in values:
        x = mjcore.device_put(v)
        got = backend.all_finite(x._buf, v.dtype, v.size)
        assert got is bool(onp.isfinite(v).all()), (dtype, v)
