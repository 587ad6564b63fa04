"""mjcore.scipy.special against jax.scipy.special (x64) as the oracle: values and dtypes in
float32 and float64 (0-d and n-d, special values) eagerly and under jit, first and second
derivatives against jax.grad, vmap against jax.vmap, and errors that name the function.

Tolerances: wrappers of one mjcore.lax primitive match JAX bit for bit (mjcore.lax's special
functions are JAX's own algorithms). Compositions run the same operations as JAX, but XLA may
fuse them differently under jit (FMA contraction, jnp.polyval's scan against an unrolled
Horner loop), so float64 values are compared at rtol 1e-13 and float32 at 4 ulp-ish (2e-6).
Derivatives add reverse-mode accumulation order: rtol 1e-12, 1e-10 for second order."""

from __future__ import annotations

import functools
import subprocess
import sys
from fractions import Fraction
from typing import Any, NamedTuple

import hypothesis.extra.numpy as hnp
import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as onp
import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st

import mjcore
import mjnp as np
from mjcore import lax

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)

sp = mjcore.scipy.special

RTOL = {"float32": 2e-6, "float64": 1e-13}
# float32 betainc and comb are ill-conditioned in their lgamma sums (betainc ~4e-5 from scipy,
# ours and JAX's alike), so XLA's fusion choices show.
FLOAT32_RTOL = {"betainc": 1e-4, "comb": 1e-5}
GRAD_RTOL, GRAD2_RTOL = 1e-12, 1e-10


class Special(NamedTuple):
    name: str
    domains: tuple[tuple[float, float], ...]  # one (low, high) per argument
    argnums: tuple[int, ...] = (0,)  # arguments JAX differentiates
    second: bool = True  # JAX has a second derivative in each of `argnums`


SPECIALS = [
    Special("expit", ((-8.0, 8.0),)),
    Special("logit", ((0.01, 0.99),)),
    Special("erf", ((-3.0, 3.0),)),
    Special("erfc", ((-3.0, 3.0),)),
    Special("erfinv", ((-0.95, 0.95),)),
    # Across the switch to the asymptotic series (x > 9.4 in float32, 26.6 in float64).
    Special("erfcx", ((-3.0, 40.0),)),
    Special("gammaln", ((0.1, 8.0),)),
    Special("loggamma", ((-2.0, 8.0),)),
    Special("gamma", ((-3.5, 6.0),)),
    Special("gammasgn", ((-5.0, 5.0),)),
    Special("digamma", ((0.1, 8.0),)),
    Special("factorial", ((0.0, 10.0),)),
    Special("i0", ((-15.0, 15.0),)),
    Special("i0e", ((-15.0, 15.0),)),
    Special("i1", ((-15.0, 15.0),)),
    Special("i1e", ((-15.0, 15.0),)),
    Special("ndtr", ((-6.0, 6.0),)),
    Special("ndtri", ((0.001, 0.999),)),
    # Across the three ranges: the series below -20 (-10), log(ndtr), -ndtr(-x) above 8 (5).
    Special("log_ndtr", ((-40.0, 12.0),)),
    Special("spence", ((0.01, 5.0),)),
    Special("entr", ((0.01, 3.0),)),
    Special("xlogy", ((-2.0, 2.0), (0.1, 5.0)), (0, 1)),
    Special("xlog1py", ((-2.0, 2.0), (-0.9, 5.0)), (0, 1)),
    Special("rel_entr", ((0.01, 3.0), (0.01, 3.0)), (0, 1)),
    Special("kl_div", ((0.01, 3.0), (0.01, 3.0)), (0, 1)),
    # Second order is checked in q alone (test_zeta_second_derivative): in x it compiles slowly.
    Special("zeta", ((1.2, 5.0), (0.3, 4.0)), (0, 1), second=False),
    # Across b = 8, where betaln switches to scipy's algdiv.
    Special("betaln", ((0.1, 20.0), (0.1, 20.0)), (0, 1)),
    Special("beta", ((0.1, 5.0), (0.1, 5.0)), (0, 1)),
    Special("poch", ((0.5, 4.0), (-0.5, 3.0)), (0, 1)),
    # JAX has no second derivative of igamma in a (igamma_grad_a has none).
    Special("gammainc", ((0.1, 6.0), (0.0, 9.0)), (0, 1), second=False),
    Special("gammaincc", ((0.1, 6.0), (0.0, 9.0)), (0, 1), second=False),
    # JAX differentiates betainc in x only (a and b raise: test_betainc_and_expn_derivatives).
    Special("betainc", ((0.5, 30.0), (0.5, 30.0), (0.02, 0.98)), (2,)),
    # Across expn's switch from series to continued fraction at 1 and Cephes' expi ranges.
    # JAX cannot differentiate exp1 (expn's nondiff n is a tracer there): test_exp1_derivative.
    Special("exp1", ((0.05, 40.0),), ()),
    Special("expi", ((-30.0, 80.0),)),
    Special("dawsn", ((-10.0, 10.0),)),
    Special("boxcox", ((0.1, 5.0), (-2.0, 2.0)), (0, 1)),
    Special("boxcox1p", ((-0.9, 5.0), (-2.0, 2.0)), (0, 1)),
    Special("comb", ((5.0, 30.0), (0.0, 5.0)), (0, 1)),
]
DTYPES = ["float32", "float64"]
# 0-d in float64 only: a separate compile per dtype and shape is what the test time goes on.
DTYPE_SHAPES = [("float32", (3, 4)), ("float64", ()), ("float64", (3, 4))]


def _ids(specs):
    return [s.name for s in specs]


def _args(spec: Special, dtype: str, shape: tuple[int, ...] = (3, 4), seed: int = 0):
    rng = onp.random.default_rng(seed)
    return [rng.uniform(lo, hi, size=shape).astype(dtype) for lo, hi in spec.domains]


def _both(name: str):
    return getattr(sp, name), getattr(jsp, name)


@functools.cache
def _jax_jit(name: str) -> Any:
    """JAX's `name` under one shared `jax.jit`: eagerly JAX compiles each operation of a
    composite function once per shape and dtype, dozens of small programs an oracle value;
    under jit, one. (JAX's eager and jitted values differ by fusion at most, within RTOL.)"""
    return jax.jit(getattr(jsp, name))


def _assert_close(got: Any, expected: Any, rtol: float, atol: float = 0.0) -> None:
    got, expected = onp.asarray(got), onp.asarray(expected)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    onp.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)


def _sum(x: Any) -> Any:
    """The sum of all elements (mjcore tracers have no methods without mjnp)."""
    if isinstance(x, jax.Array):
        return x.sum()
    return lax.reduce_sum(x, tuple(range(x.ndim)))


# --- values ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype,shape", DTYPE_SHAPES, ids=[f"{d}-{s}" for d, s in DTYPE_SHAPES])
@pytest.mark.parametrize("spec", SPECIALS, ids=_ids(SPECIALS))
def test_values_and_dtypes_match_jax(spec: Special, dtype: str, shape):
    args = _args(spec, dtype, shape)
    mj_f = getattr(sp, spec.name)
    if shape:
        expected = _jax_jit(spec.name)(*args)
    else:  # JAX's (3, 4) program (compiled by the float64-(3, 4) case) on broadcast scalars:
        # one JAX compile fewer per function (values as a 0-d program's, up to fusion: in RTOL).
        expected = onp.asarray(_jax_jit(spec.name)(*[onp.broadcast_to(a, (3, 4)) for a in args]))
        expected = expected[0, 0]
    assert onp.asarray(expected).dtype == onp.dtype(dtype)
    # Values near a zero of the function (spence at 1, entr at 1) get an absolute floor.
    rtol = FLOAT32_RTOL.get(spec.name, RTOL[dtype]) if dtype == "float32" else RTOL[dtype]
    atol = RTOL[dtype] * 1e-3
    if shape:  # 0-d under jit only: eagerly it would compile every op once more for 0-d avals
        _assert_close(mj_f(*args), expected, rtol, atol)
    _assert_close(mjcore.jit(mj_f)(*args), expected, rtol, atol)


SPECIAL_VALUES = onp.array([0.0, -0.0, 0.5, 1.0, -1.0, 2.0, -2.5, 30.0, onp.inf, -onp.inf, onp.nan])


# NB: JAX's exp1(inf) and expi(0), expi(+-inf) are NaN; ours are scipy's (0, -inf, inf, -0.0).
SCIPY_AT_SPECIAL_VALUES = {"exp1", "expi"}
# Eager JAX as the oracle: under jax.jit XLA contracts kl_div's `x log(x / y) - x + y` into an
# FMA, and kl_div(30, 30) is -3.6e-15 there where eagerly (and ours) it is 0.
EAGER_AT_SPECIAL_VALUES = {"kl_div"}


@pytest.mark.parametrize("spec", SPECIALS, ids=_ids(SPECIALS))
def test_special_values_match_jax(spec: Special):
    grids = onp.meshgrid(*[SPECIAL_VALUES] * len(spec.domains), indexing="ij")
    mj_f, jax_f = getattr(sp, spec.name), _jax_jit(spec.name)
    if spec.name in SCIPY_AT_SPECIAL_VALUES:
        jax_f = getattr(scipy.special, spec.name)
    elif spec.name in EAGER_AT_SPECIAL_VALUES:
        jax_f = getattr(jsp, spec.name)
    _assert_close(mj_f(*grids), jax_f(*grids), RTOL["float64"])


def test_tails_match_jax():
    # ndtri's far tail (z >= 8 for p < exp(-32)), erfcx at huge x, log_ndtr far below -20.
    p = onp.array([1e-300, 1e-100, 1e-20, 1e-15, 1 - 1e-15, 1 - 1e-10, 1e-5])
    _assert_close(sp.ndtri(p), jsp.ndtri(p), 1e-14)
    x = onp.array([1e3, 1e10, 1e200, -30.0, -1e3])
    _assert_close(sp.erfcx(x), jsp.erfcx(x), 1e-14)
    x = onp.array([-1e3, -200.0, -37.5, -20.0, -20.0001, 8.0, 8.0001, 40.0])
    for order in (0, 1, 3, 7):
        _assert_close(sp.log_ndtr(x, order), jsp.log_ndtr(x, order), 1e-14)
    # JAX's log(1 - ndtr(-x)) ~ -ndtr(-x) above 8 is only ~10% accurate near 8: scipy below.
    x = onp.array([-200.0, -20.0, -20.0001, -5.0, 0.0, 3.0])
    # Near -20 the 3-term asymptotic series is good to ~1e-11.
    onp.testing.assert_allclose(onp.asarray(sp.log_ndtr(x)), scipy.special.log_ndtr(x), 1e-10)


def test_values_agree_with_scipy():
    x = onp.linspace(0.05, 6.0, 13)
    # (log_ndtr is left out: JAX's log(ndtr(x)) loses digits as ndtr(x) nears 1.)
    for name in ["gammaln", "digamma", "erfcx", "ndtr", "spence", "i0", "i1", "entr"]:
        onp.testing.assert_allclose(
            onp.asarray(getattr(sp, name)(x)), getattr(scipy.special, name)(x), rtol=1e-12
        )
    a, b = x, x[::-1] * 3
    for name in ["betaln", "beta", "gammainc", "gammaincc", "xlogy", "rel_entr", "kl_div", "poch"]:
        # JAX's betaln keeps only two of cdflib's branches: below b = 8 it is lgamma sums,
        # good to ~1e-7 where they cancel.
        rtol = 1e-6 if name.startswith("beta") else 1e-12
        onp.testing.assert_allclose(
            onp.asarray(getattr(sp, name)(a, b)), getattr(scipy.special, name)(a, b), rtol=rtol
        )
    onp.testing.assert_allclose(
        onp.asarray(sp.betaln(1e6, 3e7)), scipy.special.betaln(1e6, 3e7), rtol=1e-13
    )


def test_promotion():
    ints = onp.arange(1, 5)  # int64: float64, as in JAX
    for name in ["gammaln", "expit", "erf", "i0e", "entr", "factorial"]:
        out = getattr(sp, name)(ints)
        assert out.dtype == onp.float64
        _assert_close(out, getattr(jsp, name)(ints), 1e-15)
    # NB: JAX makes int32 and bool float32; NumPy's rule (float64) is ours.
    assert sp.gammaln(onp.arange(1, 5, dtype=onp.int32)).dtype == onp.float64
    assert sp.erf(True).dtype == onp.float64
    # Python scalars are weak: they take a float32 array's dtype; alone they are float64.
    f32 = onp.linspace(0.5, 2.0, 4, dtype=onp.float32)
    assert sp.xlogy(2.0, f32).dtype == onp.float32
    assert sp.gammainc(f32, 3).dtype == onp.float32
    assert sp.polygamma(1, f32).dtype == onp.float32
    assert sp.zeta(2.0, 1.0).dtype == onp.float64
    assert sp.xlogy(f32, onp.ones(4)).dtype == onp.float64
    assert sp.logsumexp(f32, b=2).dtype == onp.float32
    # Broadcasting operands.
    col, row = onp.array([[0.5], [1.5], [3.0]]), onp.linspace(0.2, 3.0, 4)
    for name in ["xlogy", "rel_entr", "betaln", "poch", "gammainc", "zeta"]:
        mj_f, jax_f = _both(name)
        args = (col + 1.1, row) if name == "zeta" else (col, row)
        _assert_close(mj_f(*args), jax_f(*args), 1e-13)


@pytest.mark.parametrize("dtype", DTYPES)
def test_polygamma_multigammaln_bernoulli_match_jax(dtype: str):
    x = onp.linspace(0.3, 6.0, 12, dtype=dtype).reshape(3, 4)
    n = onp.array([0, 1, 2, 3])
    _assert_close(sp.polygamma(n, x), jsp.polygamma(n, x), RTOL[dtype])
    _assert_close(mjcore.jit(sp.polygamma)(2, x), jsp.polygamma(2, x), RTOL[dtype])
    for d in (1, 4):
        _assert_close(sp.multigammaln(x + 2, d), jsp.multigammaln(x + 2, d), RTOL[dtype])
    f = mjcore.jit(sp.multigammaln, static_argnums=1)
    _assert_close(f(x[0, 0] + 2, 4), jsp.multigammaln(x[0, 0] + 2, 4), RTOL[dtype])
    if dtype == "float64":  # bernoulli has no dtype argument
        # Exact rationals are the oracle: JAX's series is ~3e-6 off at B_4, scipy's ~2e-12.
        exact = _bernoulli_akiyama_tanigawa(300)
        for count in (0, 3, 4, 11, 40, 41, 60, 300):
            _assert_close(sp.bernoulli(count), exact[: count + 1], 1e-15)
        _assert_close(sp.bernoulli(300), scipy.special.bernoulli(300), 1e-11)
        _assert_close(sp.bernoulli(60)[42:], jsp.bernoulli(60)[42:], 1e-14)


def _bernoulli_akiyama_tanigawa(n: int) -> onp.ndarray:
    """B_0 .. B_n rounded once from exact rationals (B_1 = -1/2), inf past float64's range."""
    row, out = [], []
    for m in range(n + 1):
        row.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        out.append(row[0])
    out[1] = -out[1]  # the algorithm gives B_1 = +1/2
    with onp.errstate(over="ignore"):
        return onp.array([float(b) if abs(b) < 1e308 else onp.sign(b) * onp.inf for b in out])


# --- logsumexp, softmax, log_softmax --------------------------------------------------------

_RNG = onp.random.default_rng(7)
_A = _RNG.normal(size=(3, 4)) * 3
_B = _RNG.uniform(-1.0, 2.0, size=(3, 4))
_B[0, 1] = 0.0  # b == 0 excludes an element
_MASK = _RNG.uniform(size=(3, 4)) > 0.3
_MASK[:, 2] = False  # a column with nothing included

LSE_KWARGS = [
    {},
    {"axis": 0},
    {"axis": -1, "keepdims": True},
    {"axis": (0, 1)},
    {"axis": ()},
    {"b": onp.abs(_B)},
    {"b": _B, "axis": 1},
    {"b": _B, "axis": 0, "return_sign": True},
    {"b": 2.0, "keepdims": True},
    {"where": _MASK, "axis": 0},
    {"where": _MASK, "b": _B, "axis": 1, "return_sign": True},
    {"where": _MASK, "axis": None, "keepdims": True},
]


def _lse_id(kw: dict) -> str:
    return ",".join(f"{k}" if isinstance(v, onp.ndarray) else f"{k}={v}" for k, v in kw.items())


def _first(out: Any) -> Any:
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", LSE_KWARGS, ids=[_lse_id(k) for k in LSE_KWARGS])
def test_logsumexp_matches_jax(kw: dict, dtype: str):
    a = _A.astype(dtype)
    kw = {
        k: v.astype(dtype) if k == "b" and isinstance(v, onp.ndarray) else v for k, v in kw.items()
    }
    # JAX under jax.jit here and below: one compile instead of one per operation.
    expected = jax.jit(lambda a: jsp.logsumexp(a, **kw))(a)
    for got in (sp.logsumexp(a, **kw), mjcore.jit(lambda a: sp.logsumexp(a, **kw))(a)):
        if kw.get("return_sign"):
            _assert_close(got[1], expected[1], 0)
        _assert_close(_first(got), _first(expected), RTOL[dtype])
    if dtype == "float32":
        return
    # Gradients: in a (softmax-weighted, 0 where excluded) and in b.
    jax_grad = jax.jit(jax.grad(lambda a: _first(jsp.logsumexp(a, **kw)).sum()))(a)
    _assert_close(mjcore.grad(lambda a: _sum(_first(sp.logsumexp(a, **kw))))(a), jax_grad, 1e-13)
    if isinstance(kw.get("b"), onp.ndarray):
        rest = {k: v for k, v in kw.items() if k != "b"}
        jax_grad = jax.jit(jax.grad(lambda b: _first(jsp.logsumexp(a, b=b, **rest)).sum()))(kw["b"])
        got = mjcore.grad(lambda b: _sum(_first(sp.logsumexp(a, b=b, **rest))))(kw["b"])
        _assert_close(got, jax_grad, 1e-13)


def test_logsumexp_edge_cases_match_jax():
    cases = [
        onp.array([-onp.inf, -onp.inf]),
        onp.array([onp.inf, 1.0]),
        onp.array([onp.nan, 1.0]),
        onp.array([1000.0, 1000.0]),
        onp.zeros((0, 3)),
        onp.array(2.5),
    ]
    for a in cases:
        _assert_close(sp.logsumexp(a), jsp.logsumexp(a), 1e-15)
    _assert_close(
        sp.logsumexp(onp.zeros((0, 3)), axis=0), jsp.logsumexp(onp.zeros((0, 3)), axis=0), 0
    )
    # A negative sum is NaN, or -sign with return_sign.
    b = onp.array([1.0, -2.0])
    _assert_close(sp.logsumexp(onp.zeros(2), b=b), jsp.logsumexp(onp.zeros(2), b=b), 0)
    # The gradient stays finite at -inf entries and huge values (the max is held constant).
    a = onp.array([-onp.inf, 0.0, 1000.0])
    _assert_close(mjcore.grad(sp.logsumexp)(a), jax.grad(jsp.logsumexp)(a), 1e-15)


def test_logsumexp_second_derivative_and_vmap():
    a = _A
    mj_hess = mjcore.hessian(lambda a: sp.logsumexp(a, axis=1)[0])(a)
    jax_hess = jax.jit(jax.hessian(lambda a: jsp.logsumexp(a, axis=1)[0]))(a)
    _assert_close(mj_hess, jax_hess, GRAD2_RTOL, 1e-15)
    got = mjcore.vmap(lambda a, b: sp.logsumexp(a, b=b), in_axes=(1, None))(a, _B[:, 0])
    expected = jax.jit(jax.vmap(lambda a, b: jsp.logsumexp(a, b=b), in_axes=(1, None)))(a, _B[:, 0])
    _assert_close(got, expected, 1e-14)
    got = mjcore.vmap(lambda a, m: sp.logsumexp(a, where=m))(a, _MASK)
    expected = jax.jit(jax.vmap(lambda a, m: jsp.logsumexp(a, where=m)))(a, _MASK)
    _assert_close(got, expected, 1e-14)


@settings(max_examples=12, deadline=None)
@given(
    hnp.arrays(
        onp.float64,
        hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
        elements=st.floats(-50, 50),
    ),
    st.data(),
)
def test_logsumexp_random_shapes_and_axes(a, data):
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1))
    keepdims = data.draw(st.booleans())
    # Eagerly on the CPU the host rules keep subnormals, as NumPy does, where XLA's CPU code
    # (JAX, and `jit`) flushes them to zero (docs/eager.md): eager may differ from JAX by at most
    # a subnormal, so the absolute tolerance is the smallest normal float64 and no more.
    onp.testing.assert_allclose(
        onp.asarray(sp.logsumexp(a, axis=axis, keepdims=keepdims)),
        onp.asarray(jsp.logsumexp(a, axis=axis, keepdims=keepdims)),
        rtol=1e-14,
        atol=onp.finfo(onp.float64).tiny,
    )
    _assert_close(
        mjcore.jit(lambda a: sp.logsumexp(a, axis=axis, keepdims=keepdims))(a),
        jsp.logsumexp(a, axis=axis, keepdims=keepdims),
        1e-14,
    )


def test_logsumexp_of_a_subnormal_keeps_it_eagerly_and_flushes_under_jit():
    a = onp.array([2.22507386e-311])  # found by the property test above
    assert float(sp.logsumexp(a)) == float(scipy.special.logsumexp(a)) == 2.22507386e-311
    assert float(mjcore.jit(sp.logsumexp)(a)) == float(jsp.logsumexp(a)) == 0.0


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_matches_jax(name: str, axis, dtype: str):
    mj_f, jax_f = getattr(sp, name), getattr(jsp, name)
    a = _A.astype(dtype)
    # JAX under jax.jit here and below: one compile instead of one per operation.
    expected = jax.jit(lambda a: jax_f(a, axis=axis))(a)
    _assert_close(mj_f(a, axis=axis), expected, RTOL[dtype], RTOL[dtype] * 1e-3)
    _assert_close(mjcore.jit(lambda a: mj_f(a, axis=axis))(a), expected, RTOL[dtype], 1e-9)
    if dtype == "float32" or axis not in (None, -1):
        return
    w = onp.linspace(-1.0, 1.0, a.size).reshape(a.shape)  # a weighting: a non-trivial cotangent
    mj_grad = mjcore.grad(lambda a: _sum(lax.mul(mj_f(a, axis=axis), w)))(a)
    jax_grad = jax.jit(jax.grad(lambda a: (jax_f(a, axis=axis) * w).sum()))(a)
    _assert_close(mj_grad, jax_grad, GRAD_RTOL, 1e-15)
    mj_dd = mjcore.grad(
        lambda a: _sum(mjcore.grad(lambda a: _sum(lax.mul(mj_f(a, axis=axis), w)))(a))
    )(a)
    jax_dd = jax.jit(
        jax.grad(lambda a: jax.grad(lambda a: (jax_f(a, axis=axis) * w).sum())(a).sum())
    )(a)
    _assert_close(mj_dd, jax_dd, GRAD2_RTOL, 1e-13)
    got = mjcore.vmap(lambda a: mj_f(a, axis=0), in_axes=1)(a)
    _assert_close(got, jax.jit(jax.vmap(lambda a: jax_f(a, axis=0), in_axes=1))(a), 1e-14)


def test_softmax_special_values_match_jax():
    for a in [onp.array([onp.inf, 1.0]), onp.array([-onp.inf, 1.0]), onp.array([1e300, 1.0])]:
        for name in ["softmax", "log_softmax"]:
            mj_f, jax_f = _both(name)
            _assert_close(mj_f(a), jax_f(a), 1e-15)


# --- derivatives ----------------------------------------------------------------------------

GRAD_PARAMS = [
    pytest.param(spec, argnum, id=f"{spec.name}-arg{argnum}")
    for spec in SPECIALS
    for argnum in spec.argnums
]


def _loss(f, args, argnum):
    def loss(x):
        full = list(args)
        full[argnum] = x
        return _sum(f(*full))

    return loss


@pytest.mark.parametrize("spec,argnum", GRAD_PARAMS)
def test_grad_and_second_derivative_match_jax(spec: Special, argnum: int):
    args = _args(spec, "float64", seed=1)
    mj_f, jax_f = _both(spec.name)
    mj_loss, jax_loss = _loss(mj_f, args, argnum), _loss(jax_f, args, argnum)
    x = args[argnum]
    # JAX under jit: one compile of both derivatives (the second order's program computes the
    # first) instead of one per operation and aval, or one per order.
    if not spec.second:
        _assert_close(mjcore.grad(mj_loss)(x), jax.jit(jax.grad(jax_loss))(x), GRAD_RTOL)
        return
    jax_d, jax_dd = jax.jit(
        lambda x: (jax.grad(jax_loss)(x), jax.grad(lambda x: jax.grad(jax_loss)(x).sum())(x))
    )(x)
    _assert_close(mjcore.grad(mj_loss)(x), jax_d, GRAD_RTOL)
    # Under jit: one compile of the second-order program instead of one per op and aval.
    mj_dd = mjcore.jit(mjcore.grad(lambda x: _sum(mjcore.grad(mj_loss)(x))))(x)
    # An absolute floor: erfcx'' = 2 erfcx + 2x erfcx' cancels O(1) terms to ~1e-5 at large x.
    _assert_close(mj_dd, jax_dd, GRAD2_RTOL, 1e-13)


def test_zeta_second_derivative():
    s, q = onp.array([1.5, 3.0, 4.5]), onp.array([0.5, 2.0, 3.5])

    def mj_d(q):
        return _sum(mjcore.grad(lambda q: _sum(sp.zeta(s, q)))(q))

    def jax_d(q):
        return jax.grad(lambda q: jsp.zeta(s, q).sum())(q).sum()

    _assert_close(mjcore.jit(mjcore.grad(mj_d))(q), jax.jit(jax.grad(jax_d))(q), GRAD2_RTOL)


def test_derivatives_at_zero_follow_jax():
    # JAX's custom rules: xlogy(0, y) has derivative log(y) in x (-inf at y == 0); entr's
    # derivative at 0 is inf; rel_entr's is 0 where p == 0.
    for name, x, y in [("xlogy", 0.0, 0.0), ("xlogy", 0.0, 2.0), ("xlog1py", 0.0, -1.0)]:
        mj_f, jax_f = _both(name)
        for argnums in (0, 1):
            got = mjcore.grad(mj_f, argnums=argnums)(x, y)
            _assert_close(got, jax.grad(jax_f, argnums=argnums)(x, y), 0)
    p = onp.array([0.0, 0.0, 1.0, 2.0])
    q = onp.array([0.0, 1.0, 0.0, 3.0])
    for name in ["rel_entr", "kl_div"]:
        for argnums in (0, 1):
            got = mjcore.grad(lambda p, q, n=name: _sum(getattr(sp, n)(p, q)), argnums)(p, q)
            expected = jax.grad(lambda p, q, n=name: getattr(jsp, n)(p, q).sum(), argnums)(p, q)
            _assert_close(got, expected, 1e-15)
    x = onp.array([0.0, 0.5, 1.0])
    _assert_close(mjcore.vmap(mjcore.grad(sp.entr))(x), jax.vmap(jax.grad(jsp.entr))(x), 1e-15)
    x = onp.array([0.0, 1e-300, 1e-20, 0.5, 1.0])
    got = mjcore.jit(mjcore.grad(lambda x: _sum(sp.ndtri(x))))(x)
    _assert_close(got, jax.jit(jax.grad(lambda x: jsp.ndtri(x).sum()))(x), 1e-14)
    x = onp.array([-1e3, -30.0, -20.0, 0.0, 8.0, 12.0])
    got = mjcore.jit(mjcore.grad(lambda x: _sum(sp.log_ndtr(x))))(x)
    _assert_close(got, jax.jit(jax.grad(lambda x: jsp.log_ndtr(x).sum()))(x), 1e-13)


def test_polygamma_derivative_and_zeta_value_under_jvp():
    x = onp.linspace(0.3, 4.0, 6)
    got = mjcore.grad(lambda x: _sum(sp.polygamma(2, x)))(x)
    _assert_close(got, jax.jit(jax.grad(lambda x: jsp.polygamma(2, x).sum()))(x), GRAD_RTOL)
    # As JAX, the primal computed alongside zeta's derivative is the series' value.
    s, q = onp.array([1.5, 3.0]), onp.array([0.5, 2.0])
    mj_out = mjcore.jvp(sp.zeta, (s, q), (onp.ones(2), onp.zeros(2)))
    jax_out = jax.jvp(jsp.zeta, (s, q), (onp.ones(2), onp.zeros(2)))
    for got, expected in zip(mj_out, jax_out, strict=True):
        _assert_close(got, expected, 1e-13)


def test_grad_composition_under_jit_and_vmap():
    def f(x, sp):
        y = sp.gammaln(x) + sp.erf(x) * sp.expit(x) + sp.xlogy(x, x + 1.0)
        return y + sp.log_ndtr(-x) + sp.logsumexp(x)

    x = onp.linspace(0.5, 4.0, 8)
    expected = jax.jit(jax.grad(lambda x: f(jnp.asarray(x), jsp).sum()))(x)
    got = mjcore.jit(mjcore.grad(lambda x: np.sum(f(x, sp))))(x)
    _assert_close(got, expected, GRAD_RTOL)


# --- vmap -----------------------------------------------------------------------------------

VMAP_PARAMS = [
    pytest.param(spec, axes, id=f"{spec.name}-{axes}")
    for spec in SPECIALS
    for axes in ([1] if len(spec.domains) == 1 else [(0,) + (None,) * (len(spec.domains) - 1)])
]


@pytest.mark.parametrize("spec,axes", VMAP_PARAMS)
def test_vmap_matches_jax(spec: Special, axes):
    in_axes = axes if isinstance(axes, tuple) else (axes,)
    args = [
        a if ax is not None else a[0]
        for a, ax in zip(_args(spec, "float64", (3, 4), seed=3), in_axes, strict=True)
    ]
    mj_f, jax_f = _both(spec.name)
    # jax.jit: one compile of the batched function, not one per operation
    expected = jax.jit(jax.vmap(jax_f, in_axes=in_axes))(*args)
    _assert_close(mjcore.vmap(mj_f, in_axes=in_axes)(*args), expected, 1e-13)


def test_vmap_of_grad_matches_jax():
    x = onp.linspace(-3.0, 3.0, 7)
    for name in ["erfcx", "logit", "ndtr", "log_ndtr", "i1e", "gamma"]:
        mj_f, jax_f = _both(name)
        arg = (x + 3.5) / 7 if name == "logit" else x
        _assert_close(
            mjcore.vmap(mjcore.grad(mj_f))(arg), jax.jit(jax.vmap(jax.grad(jax_f)))(arg), GRAD_RTOL
        )


# --- errors and wiring ----------------------------------------------------------------------


def test_errors_name_the_function():
    with pytest.raises(TypeError, match=r"mjcore.scipy.special.gammaln: requires ndarray"):
        sp.gammaln([1.0, 2.0])
    with pytest.raises(TypeError, match=r"mjcore.scipy.special.xlogy: .* position 1"):
        sp.xlogy(1.0, "a")
    with pytest.raises(TypeError, match=r"mjcore.scipy.special.erf: complex inputs"):
        sp.erf(onp.ones(2, onp.complex128))
    with pytest.raises(ValueError, match=r"mjcore.scipy.special.logsumexp: axis 2 is out"):
        sp.logsumexp(onp.ones((2, 3)), axis=2)
    with pytest.raises(ValueError, match=r"mjcore.scipy.special.softmax: repeated axis"):
        sp.softmax(onp.ones((2, 3)), axis=(0, 0))
    with pytest.raises(TypeError, match=r"mjcore.scipy.special.log_softmax: axis must be"):
        sp.log_softmax(onp.ones((2, 3)), axis=1.5)
    with pytest.raises(ValueError, match=r"mjcore.scipy.special.logsumexp: .*broadcast"):
        sp.logsumexp(onp.ones((2, 3)), b=onp.ones(2))
    with pytest.raises(ValueError, match=r"mjcore.scipy.special.polygamma: argument n must"):
        sp.polygamma(1.0, 2.0)
    with pytest.raises(NotImplementedError, match=r"mjcore.scipy.special.zeta: the Riemann"):
        sp.zeta(2.0)
    with pytest.raises(NotImplementedError, match=r"mjcore.scipy.special.factorial: exact"):
        sp.factorial(3, exact=True)
    for name in ["ndtr", "ndtri", "log_ndtr", "spence"]:
        with pytest.raises(TypeError, match=rf"mjcore.scipy.special.{name}: x.dtype=int64"):
            getattr(sp, name)(onp.arange(3))
        with pytest.raises(TypeError, match=rf"mjcore.scipy.special.{name}: x.dtype=float16"):
            getattr(sp, name)(onp.ones(3, onp.float16))
    with pytest.raises(TypeError, match=r"mjcore.scipy.special.log_ndtr: series_order must"):
        sp.log_ndtr(1.0, series_order=2.0)
    with pytest.raises(ValueError, match=r"mjcore.scipy.special.log_ndtr: series_order must"):
        sp.log_ndtr(1.0, series_order=31)
    with pytest.raises(ValueError, match=r"mjcore.scipy.special.bernoulli: n must be"):
        sp.bernoulli(-1)
    with pytest.raises(TypeError, match=r"mjcore.scipy.special.multigammaln: d must be"):
        mjcore.jit(sp.multigammaln)(2.0, 3)
    with pytest.raises(TypeError, match=r"mjcore.scipy.special.bernoulli: n must be"):
        mjcore.jit(sp.bernoulli)(3)


def test_public_names_match_jax():
    for name in sp.__all__:
        assert hasattr(jsp, name), name
        assert getattr(sp, name).__doc__, name


def test_scipy_loads_lazily():
    code = (
        "import sys, mjcore; assert 'mjcore.scipy' not in sys.modules; "
        "assert 'scipy' in mjcore.__all__; "
        "print(float(mjcore.scipy.special.erf(0.5)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert float(out) == pytest.approx(scipy.special.erf(0.5), rel=1e-15)


@pytest.mark.parametrize("x", [0.0, -0.0, 0.7, -2.5])
def test_bessel_i0_i1_derivatives_are_the_recurrences_at_zero_too(x):
    # i0' = i1 and i1' = (i0 + i2) / 2 (scipy as the oracle). At 0 JAX's i0 has slope 1 and
    # second derivative 1.5: its `abs` slope at 0 is not cancelled there.
    d_i0 = float(mjcore.grad(sp.i0)(x))
    d2_i0 = float(mjcore.grad(mjcore.grad(sp.i0))(x))
    d_i1 = float(mjcore.grad(sp.i1)(x))
    onp.testing.assert_allclose(d_i0, scipy.special.i1(x), rtol=1e-13, atol=1e-15)
    half_sum = (scipy.special.i0(x) + scipy.special.iv(2, x)) / 2
    onp.testing.assert_allclose(d2_i0, half_sum, rtol=1e-13)
    onp.testing.assert_allclose(d_i1, half_sum, rtol=1e-13)


# --- betainc, the exponential integrals, dawsn, boxcox and comb against scipy ---------------


def _rel_err(got: Any, expected: onp.ndarray) -> float:
    got = onp.asarray(got).astype(onp.float64)
    keep = onp.isfinite(expected) & (expected != 0)
    return float(onp.max(onp.abs(got[keep] - expected[keep]) / onp.abs(expected[keep])))


def _new_functions(a, b, x, lmbda, N, k, n, xn):
    """Every new function at once: one jit compile for test_new_functions_agree_with_scipy."""
    return {
        "betainc": sp.betainc(a, b, x[: a.size]),
        "exp1": sp.exp1(x),
        "expi": sp.expi(x),
        "dawsn": sp.dawsn(x),
        "boxcox": sp.boxcox(lax.abs(x), lmbda),
        "boxcox1p": sp.boxcox1p(x, lmbda),
        "comb": sp.comb(N, k),
        "comb_repetition": sp.comb(N, k, repetition=True),
        "expn": sp.expn(n, xn),
    }


def test_new_functions_agree_with_scipy():
    rng = onp.random.default_rng(11)
    a, b = rng.uniform(0.05, 60.0, (2, 400))
    # Large and tiny a, b (continued-fraction length), x near 0.
    a = onp.concatenate([a, [500.0, 1e4, 0.01, 2.0]])
    b = onp.concatenate([b, [700.0, 2e4, 0.02, 3.0]])
    x = onp.concatenate([rng.uniform(0.0, 1.0, 400), [0.41, 0.333, 0.5, 1e-8]])
    special_x = onp.array([0.0, 1e-300, 1e-10, 1.0, 700.0, 800.0, onp.inf, onp.nan])
    x = onp.concatenate([x, onp.linspace(-60.0, 60.0, 241), -x[:404], special_x, -special_x])
    lmbda = rng.choice([-2.0, 0.0, 1e-9, 1.5, 3.0], x.size)
    N, k = onp.array([-1.0, 0.0, 3.0, 10.0, 52.0, 300.0])[:, None], onp.array([-1, 0, 2, 5, 52])
    n = onp.array([0, 1, 2, 3, 7, 30, 4999, 5000, 6000])[:, None]
    xn = onp.array([0.0, 1e-6, 0.3, 1.0, 1.0001, 4.0, 30.0, 600.0, onp.inf, -1.0, onp.nan])
    got = mjcore.jit(_new_functions)(a, b, x, lmbda, N, k, n, xn)
    got = {name: onp.asarray(v) for name, v in got.items()}
    big = scipy.special.betainc(a[400:], b[400:], x[400:404])
    # a, b in the hundreds and thousands: lgamma sums of ~1e5 cancel to 2.4e-11 (JAX's 9e-12).
    onp.testing.assert_allclose(got["betainc"][400:], big, rtol=1e-10)
    got["betainc"] = got["betainc"][:400]
    with onp.errstate(all="ignore"):
        # Max relative errors: betainc 3e-13 (JAX's 3.2e-13: the prefactor is an exp of
        # lgamma sums that cancel), exp1 2.6e-15, dawsn 1.2e-14, expi 2.4e-14 (at its zero
        # 0.3725), expn 4.6e-15, comb 2e-13 for 300 choose 52, boxcox 4e-16.
        expected = {
            "betainc": scipy.special.betainc(a[:400], b[:400], x[:400]),
            "exp1": scipy.special.exp1(x),
            "expi": scipy.special.expi(x),
            "dawsn": scipy.special.dawsn(x),
            "boxcox": scipy.special.boxcox(abs(x), lmbda),
            "boxcox1p": scipy.special.boxcox1p(x, lmbda),
            "comb": scipy.special.comb(N, k),
            "expn": scipy.special.expn(n, xn),
        }
    # boxcox1p: 4e-14 near x = -1, where scipy takes pow and we (as JAX) expm1(lmbda log1p(x)).
    rtols = {"betainc": 1e-12, "expi": 5e-14, "dawsn": 5e-14, "comb": 1e-12, "boxcox1p": 1e-13}
    for name, value in expected.items():
        onp.testing.assert_allclose(got[name], value, rtol=rtols.get(name, 1e-14), err_msg=name)
    # NB: with repetition scipy gives NaN for N < 0 (or k < 0); JAX and we give 0.
    _assert_close(got["comb_repetition"], jsp.comb(N, k, repetition=True), 1e-12)
    # Integer orders: as NumPy promotion, float64.
    _assert_close(sp.expn(n[:3, 0], 0.5), scipy.special.expn(n[:3, 0], 0.5), 1e-15)


def test_new_functions_float32_agree_with_scipy():
    x = onp.concatenate([onp.linspace(-40.0, 40.0, 81), onp.geomspace(1e-6, 80.0, 40)])
    x = x.astype(onp.float32)
    # exp1 and expi lose ~20 ulp near x = 1 to cancellation in the series (JAX's likewise).
    for name, rtol in [("exp1", 4e-6), ("expi", 4e-6), ("dawsn", 5e-7)]:
        arg = x[x > 0] if name == "exp1" else x
        got = mjcore.jit(getattr(sp, name))(arg)
        assert onp.asarray(got).dtype == onp.float32
        assert _rel_err(got, getattr(scipy.special, name)(arg.astype(float))) < rtol, name
    grid = onp.meshgrid([0.5, 3.0, 12.0], [0.7, 4.0], onp.linspace(0.05, 0.95, 7), indexing="ij")
    got = mjcore.jit(sp.betainc)(*(v.astype(onp.float32) for v in grid))
    assert onp.asarray(got).dtype == onp.float32
    expected = scipy.special.betainc(*(v.astype(onp.float32).astype(float) for v in grid))
    assert _rel_err(got, expected) < 1e-5


def _jit_grad(f):
    return mjcore.jit(mjcore.grad(lambda x: _sum(f(x))))


def test_betainc_expn_exp1_derivatives():
    a, b = onp.array([0.7, 2.0, 9.0, 25.0]), onp.array([3.0, 0.6, 12.0, 20.0])
    x = onp.array([0.2, 0.9, 0.45, 0.6])
    for argnums in (0, 1):
        with pytest.raises(ValueError, match="not supported"):
            jax.grad(lambda *v: jsp.betainc(*v).sum(), argnums)(a, b, x)
        with pytest.raises(ValueError, match=r"mjcore.scipy.special.betainc: the derivative"):
            mjcore.grad(lambda *v: _sum(sp.betainc(*v)), argnums)(a, b, x)
    tangent = onp.linspace(-1.0, 2.0, 4)
    got = mjcore.jit(lambda x, t: mjcore.jvp(lambda x: sp.betainc(a, b, x), (x,), (t,)))(x, tangent)
    expected = jax.jvp(lambda x: jsp.betainc(a, b, x), (x,), (tangent,))
    for g, e in zip(got, expected, strict=True):
        _assert_close(g, e, 1e-12)
    # Central differences (step 1e-6: truncation ~1e-12, rounding ~1e-10 relative).
    h = 1e-6
    central = (scipy.special.betainc(a, b, x + h) - scipy.special.betainc(a, b, x - h)) / (2 * h)
    onp.testing.assert_allclose(onp.asarray(got[1]), central * tangent, rtol=1e-7)
    # expn: d/dx E_n = -E_{n-1}, also at n = 0 (E_{-1} = exp(-x) (1 + 1/x) / x), where JAX's
    # derivative is NaN; n is not differentiable.
    n = onp.array([0.0, 1.0, 2.0, 5.0, 30.0])
    x = onp.array([0.5, 0.5, 2.0, 3.0, 0.8])
    got = _jit_grad(lambda x: sp.expn(n, x))(x)
    expected = jax.grad(lambda x: jsp.expn(n, x).sum())(x)
    _assert_close(got[1:], expected[1:], 1e-13)
    assert onp.isnan(expected[0])
    onp.testing.assert_allclose(float(got[0]), -onp.exp(-0.5) * (1 + 1 / 0.5) / 0.5, rtol=1e-15)
    with pytest.raises(ValueError, match=r"mjcore.scipy.special.expn: the derivative"):
        mjcore.grad(lambda n: _sum(sp.expn(n, x)))(n)
    # exp1' = -exp(-x) / x, exp1'' = exp(-x) (1 + 1/x) / x; JAX cannot trace jax.grad(exp1).
    x = onp.array([0.05, 0.7, 1.0, 3.0, 40.0])
    _assert_close(mjcore.jit(mjcore.vmap(mjcore.grad(sp.exp1)))(x), -onp.exp(-x) / x, 1e-15)
    second = mjcore.jit(mjcore.vmap(mjcore.grad(mjcore.grad(sp.exp1))))(x)
    _assert_close(second, onp.exp(-x) * (1 + 1 / x) / x, 1e-14)
    # exp1, expi and dawsn against central differences of scipy.
    x = onp.array([-20.0, -1.0, 0.3, 1.7, 5.0, 70.0])
    for name in ["exp1", "expi", "dawsn"]:
        arg = abs(x) if name == "exp1" else x
        f = getattr(scipy.special, name)
        central = (f(arg + 1e-6 * abs(arg)) - f(arg - 1e-6 * abs(arg))) / (2e-6 * abs(arg))
        got = _jit_grad(getattr(sp, name))(arg)
        onp.testing.assert_allclose(onp.asarray(got), central, rtol=1e-6)


def test_loops_under_vmap_and_jit_match_a_python_loop():
    # betainc and expn run while loops that freeze each element once it converges: the
    # batched loop (vmap of the loop, mapped predicate) gives each element its own answer.
    # (3, 4) float64 operands reuse the eager compiles of the table tests.
    # Eager and jit are each compared with themselves: small eager calls run NumPy's host rules
    # (betainc's log1p), which may differ from XLA's kernels by ulps (docs/eager.md; XLA's
    # log1p(-0.356) is 3 ulp from the true value, NumPy's 0).
    a, b, x = _args(SPECIALS[_ids(SPECIALS).index("betainc")], "float64", seed=4)
    row = mjcore.jit(sp.betainc)
    looped = onp.stack([onp.asarray(row(a[i], b[i], x[i])) for i in range(3)])
    eager_looped = onp.stack([onp.asarray(sp.betainc(a[i], b[i], x[i])) for i in range(3)])
    _assert_close(mjcore.jit(mjcore.vmap(sp.betainc))(a, b, x), looped, 1e-15)
    _assert_close(mjcore.vmap(sp.betainc)(a, b, x), eager_looped, 1e-15)
    _assert_close(mjcore.jit(sp.betainc)(a, b, x), looped, 1e-15)
    _assert_close(sp.betainc(a, b, x), eager_looped, 1e-15)
    n = onp.array([1.0, 2.0, 3.0, 6.0])
    x = onp.array([[0.1, 0.9, 1.2, 8.0], [3.0, 0.5, 40.0, 1.0], [1e-3, 2.0, 0.99, 1.01]])
    row = mjcore.jit(sp.expn)
    looped = onp.stack([onp.asarray(row(n, r)) for r in x])
    eager_looped = onp.stack([onp.asarray(sp.expn(n, r)) for r in x])
    batched = mjcore.vmap(sp.expn, in_axes=(None, 0))
    _assert_close(mjcore.jit(batched)(n, x), looped, 1e-15)
    _assert_close(batched(n, x), eager_looped, 1e-15)


def test_new_functions_refuse_complex():
    z = onp.ones(2, onp.complex128)
    for name, args in [("betainc", (1.0, 1.0, z)), ("expn", (1, z)), ("exp1", (z,))]:
        with pytest.raises(TypeError, match=rf"mjcore.scipy.special.{name}: complex inputs"):
            getattr(sp, name)(*args)
    for name in ["expi", "dawsn"]:
        with pytest.raises(TypeError, match=rf"mjcore.scipy.special.{name}: complex inputs"):
            getattr(sp, name)(z)
    for name in ["boxcox", "boxcox1p", "comb"]:
        with pytest.raises(TypeError, match=rf"mjcore.scipy.special.{name}: complex inputs"):
            getattr(sp, name)(z, 1.0)
    with pytest.raises(TypeError, match="positional"):
        sp.comb(3.0, 2.0, True)  # keyword-only, as JAX


def test_eager_calls_run_as_one_executable(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every public function is fused: after the first call of a signature, an eager call runs
    # one cached executable and binds no primitive (op by op, betainc would bind hundreds).
    a, b, x = (np.asarray(v) for v in (onp.full(4, 2.0), onp.full(4, 3.0), onp.linspace(0, 1, 4)))
    for name in sp.__all__:
        assert hasattr(getattr(sp, name), "__wrapped_fused__"), name
    cases = [(sp.betainc, (a, b, x)), (sp.exp1, (x + 0.5,)), (sp.gammaln, (a,))]
    for fun, args in cases:
        fun(*args)
    binds: list[Any] = []
    real_bind = mjcore.core.bind
    monkeypatch.setattr(mjcore.core, "bind", lambda *xs: binds.append(xs[0]) or real_bind(*xs))
    got = [fun(*args) for fun, args in cases]
    assert binds == []
    onp.testing.assert_allclose(
        onp.asarray(got[0]), scipy.special.betainc(2.0, 3.0, onp.linspace(0, 1, 4)), rtol=1e-13
    )
