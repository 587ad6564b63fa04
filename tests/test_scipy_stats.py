"""`mjcore.scipy.stats` against `jax.scipy.stats` (x64) and `scipy.stats`: values (inside
and outside the support), gradients, jit and vmap."""

import functools

import jax
import jax.scipy.stats as jst
import numpy as np
import pytest
import scipy.stats as sst

import mjcore
import mjnp
from mjcore.scipy import stats as mst

jax.config.update("jax_enable_x64", True)

RNG = np.random.default_rng(0)
X = np.array([-1.5, -0.2, 0.0, 0.3, 0.9, 2.5, 7.0])
UNIT = np.array([0.0, 0.01, 0.2, 0.5, 0.77, 0.999, 1.0])
K = np.array([-1.0, 0.0, 1.0, 2.0, 3.0, 5.0, 2.5])

# (distribution, function, arguments, which parameters the gradient test varies)
CASES = [
    ("norm", "logpdf", (X, 0.3, 1.7)),
    ("norm", "pdf", (X, 0.3, 1.7)),
    ("norm", "cdf", (X, 0.3, 1.7)),
    ("norm", "logcdf", (X * 10, 0.3, 1.7)),
    ("norm", "sf", (X, 0.3, 1.7)),
    ("norm", "logsf", (X * 10, 0.3, 1.7)),
    ("norm", "ppf", (UNIT, 0.3, 1.7)),
    ("norm", "isf", (UNIT, 0.3, 1.7)),
    ("t", "logpdf", (X, 3.5, 0.2, 1.3)),
    ("t", "pdf", (X, 3.5)),
    ("gamma", "logpdf", (X, 2.5, -0.5, 1.5)),
    ("gamma", "pdf", (X, 2.5)),
    ("gamma", "cdf", (X, 2.5, -0.5, 1.5)),
    ("gamma", "logcdf", (X, 2.5)),
    ("gamma", "sf", (X, 2.5, -0.5, 1.5)),
    ("gamma", "logsf", (X, 2.5)),
    ("beta", "logpdf", (UNIT, 2.5, 1.5)),
    ("beta", "pdf", (X, 2.5, 1.5, -2.0, 5.0)),
    ("beta", "cdf", (UNIT, 2.5, 1.5)),
    ("beta", "logcdf", (UNIT[1:], 2.5, 1.5)),
    ("beta", "sf", (UNIT, 2.5, 1.5)),
    ("beta", "logsf", (UNIT[:-1], 2.5, 1.5)),
    ("poisson", "logpmf", (K, 2.3)),
    ("poisson", "pmf", (K, 2.3, 1.0)),
    ("poisson", "cdf", (K, 2.3)),
    ("bernoulli", "logpmf", (np.array([-1.0, 0.0, 1.0, 2.0]), 0.3)),
    ("bernoulli", "pmf", (np.array([0.0, 1.0]), 0.3)),
    ("bernoulli", "cdf", (np.array([-1.0, 0.0, 0.5, 1.0, 2.0]), 0.3)),
    ("bernoulli", "ppf", (UNIT, 0.3)),
    ("expon", "logpdf", (X, 0.1, 2.0)),
    ("expon", "pdf", (X,)),
    ("expon", "cdf", (X, 0.1, 2.0)),
    ("expon", "logcdf", (X[3:], 0.1, 2.0)),
    ("expon", "sf", (X, 0.1, 2.0)),
    ("expon", "logsf", (X, 0.1, 2.0)),
    ("expon", "ppf", (UNIT, 0.1, 2.0)),
    ("uniform", "logpdf", (X, -0.5, 2.0)),
    ("uniform", "pdf", (X, -0.5, 2.0)),
    ("uniform", "cdf", (X, -0.5, 2.0)),
    ("uniform", "ppf", (UNIT, -0.5, 2.0)),
    ("cauchy", "logpdf", (X, 0.2, 1.5)),
    ("cauchy", "pdf", (X, 0.2, 1.5)),
    ("cauchy", "cdf", (X, 0.2, 1.5)),
    ("cauchy", "logcdf", (X, 0.2, 1.5)),
    ("cauchy", "sf", (X, 0.2, 1.5)),
    ("cauchy", "logsf", (X, 0.2, 1.5)),
    ("cauchy", "ppf", (UNIT[1:-1], 0.2, 1.5)),
    ("cauchy", "isf", (UNIT[1:-1], 0.2, 1.5)),
    ("laplace", "logpdf", (X, 0.2, 1.5)),
    ("laplace", "pdf", (X, 0.2, 1.5)),
    ("laplace", "cdf", (X, 0.2, 1.5)),
    ("logistic", "logpdf", (X, 0.2, 1.5)),
    ("logistic", "pdf", (X, 0.2, 1.5)),
    ("logistic", "cdf", (X, 0.2, 1.5)),
    ("logistic", "sf", (X, 0.2, 1.5)),
    ("logistic", "ppf", (UNIT, 0.2, 1.5)),
    ("logistic", "isf", (UNIT, 0.2, 1.5)),
    ("binom", "logpmf", (K, 5.0, 0.3)),
    ("binom", "pmf", (K, 5.0, 0.3, 1.0)),
    ("geom", "logpmf", (K, 0.3)),
    ("geom", "pmf", (K, 0.3, -1.0)),
    ("chi2", "logpdf", (X, 3.0, -0.5, 2.0)),
    ("chi2", "pdf", (X[3:], 3.0)),
    ("chi2", "cdf", (X, 3.0, -0.5, 2.0)),
    ("chi2", "logcdf", (X[3:], 3.0)),
    ("chi2", "sf", (X, 3.0, -0.5, 2.0)),
    ("chi2", "logsf", (X[3:], 3.0)),
]
# Where SciPy's convention differs from JAX's (JAX is the oracle there, SciPy everywhere else):
# SciPy gives -inf/0 at non-integer k for the binomial and geometric, and its Bernoulli cdf
# and ppf use other conventions off the support.
NO_SCIPY = {
    ("bernoulli", "cdf"),
    ("bernoulli", "ppf"),
    ("poisson", "logpmf"),
    ("binom", "logpmf"),
    ("binom", "pmf"),
    ("geom", "logpmf"),
    ("geom", "pmf"),
}


def _ids(case):
    return f"{case[0]}.{case[1]}"


@functools.cache
def _jax_jit(dist, fun, argnums=None):
    """`jax.scipy.stats.<dist>.<fun>` (or its gradient in `argnums`) under one shared
    `jax.jit`: eagerly JAX compiles each of its operations once per shape and dtype, dozens of
    small programs an oracle value; under jit, one."""
    f = getattr(getattr(jst, dist), fun)
    return jax.jit(f if argnums is None else jax.grad(f, argnums))


@functools.cache
def _jax_values(dist: str) -> dict[str, np.ndarray]:
    """JAX's values of every case of `dist` in CASES, by function name, from one `jax.jit`
    program for the distribution: one compile instead of one per case (the values are those of
    each case's own jitted program, bit for bit)."""
    cases = [(fun, args) for d, fun, args in CASES if d == dist]
    assert len({fun for fun, _ in cases}) == len(cases), "one case per (dist, fun)"
    outs = jax.jit(
        lambda all_args: [
            getattr(getattr(jst, dist), fun)(*args)
            for (fun, _), args in zip(cases, all_args, strict=True)
        ]
    )([args for _, args in cases])
    return {fun: np.asarray(out) for (fun, _), out in zip(cases, outs, strict=True)}


@pytest.mark.parametrize(("dist", "fun", "args"), CASES, ids=[_ids(c) for c in CASES])
def test_values_match_jax_and_scipy(dist, fun, args):
    got = getattr(getattr(mst, dist), fun)(*args)
    want = _jax_values(dist)[fun]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)
    if (dist, fun) not in NO_SCIPY:
        np.testing.assert_allclose(got, getattr(getattr(sst, dist), fun)(*args), rtol=1e-9)
    jitted = mjcore.jit(getattr(getattr(mst, dist), fun))(*args)
    # 1e-12: tan near pi/2 (cauchy.ppf at q -> 1) amplifies last-ulp differences in its input.
    np.testing.assert_allclose(jitted, got, rtol=1e-12, atol=1e-300)


def test_float32_stays_float32_like_jax():
    x = X.astype(np.float32)
    for dist in ("norm", "cauchy", "logistic"):
        got, want = getattr(mst, dist).logpdf(x, 0.5), getattr(jst, dist).logpdf(x, 0.5)
        assert got.dtype == want.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-6)


# Gradients with respect to every argument, at points inside the support.
GRAD_CASES = [
    ("norm", "logpdf", (0.7, 0.3, 1.7)),
    ("norm", "logcdf", (-3.0, 0.3, 1.7)),
    ("norm", "ppf", (0.3, 0.3, 1.7)),
    ("t", "logpdf", (0.7, 3.5, 0.2, 1.3)),
    ("gamma", "logpdf", (1.7, 2.5, -0.5, 1.5)),
    ("gamma", "cdf", (1.7, 2.5)),
    ("beta", "logpdf", (0.3, 2.5, 1.5)),
    ("beta", "cdf", (0.3, 2.5, 1.5), (0,)),  # betainc: x only, in JAX too
    ("poisson", "logpmf", (3.0, 2.3)),
    ("bernoulli", "logpmf", (1.0, 0.3)),
    ("expon", "logpdf", (1.7, 0.1, 2.0)),
    ("uniform", "logpdf", (0.7, -0.5, 2.0)),
    ("cauchy", "logpdf", (0.7, 0.2, 1.5)),
    ("laplace", "logpdf", (0.7, 0.2, 1.5)),
    ("logistic", "cdf", (0.7, 0.2, 1.5)),
    ("binom", "logpmf", (2.0, 5.0, 0.3)),
    ("geom", "logpmf", (3.0, 0.3)),
    ("chi2", "logpdf", (1.7, 3.0, -0.5, 2.0)),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[_ids(c) for c in GRAD_CASES])
def test_gradients_match_jax(case):
    dist, fun, args = case[:3]
    argnums = case[3] if len(case) > 3 else tuple(range(len(args)))
    got = mjcore.grad(getattr(getattr(mst, dist), fun), argnums)(*args)
    want = _jax_jit(dist, fun, argnums)(*args)
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-9, atol=1e-12)


COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]])
MVN_CASES = [
    ("matrix-cov", (RNG.standard_normal((4, 3)), np.array([0.1, -0.2, 0.3]), COV)),
    ("batched-cov", (RNG.standard_normal((2, 3)), np.zeros(3), np.stack([COV, 2 * COV]))),
    ("scalar-cov", (RNG.standard_normal((4, 3)), np.ones(3), 0.7)),
    ("univariate", (X, 0.2, 1.3)),
]


@pytest.mark.parametrize(("name", "args"), MVN_CASES, ids=[c[0] for c in MVN_CASES])
def test_multivariate_normal_matches_jax_and_scipy(name, args):
    got = mst.multivariate_normal.logpdf(*args)
    # JAX's oracles under jit: one compile each instead of one per operation.
    np.testing.assert_allclose(got, _jax_jit("multivariate_normal", "logpdf")(*args), rtol=1e-12)
    np.testing.assert_allclose(
        mst.multivariate_normal.pdf(*args),
        _jax_jit("multivariate_normal", "pdf")(*args),
        rtol=1e-12,
    )
    if name in ("matrix-cov", "scalar-cov", "univariate"):
        want = sst.multivariate_normal.logpdf(args[0], args[1], args[2])
        np.testing.assert_allclose(got, want, rtol=1e-10)
    argnums = (0, 1, 2)
    got_g = mjcore.grad(lambda *a: mjnp.sum(mst.multivariate_normal.logpdf(*a)), argnums)(*args)
    want_g = jax.jit(
        jax.grad(lambda *a: jax.numpy.sum(jst.multivariate_normal.logpdf(*a)), argnums)
    )(*args)
    for g, w in zip(got_g, want_g, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_multivariate_normal_errors():
    with pytest.raises(ValueError, match="does not match mean"):
        mst.multivariate_normal.logpdf(np.zeros(3), np.zeros(3), np.eye(2))
    with pytest.raises(NotImplementedError, match="allow_singular"):
        mst.multivariate_normal.logpdf(np.zeros(3), np.zeros(3), np.eye(3), allow_singular=True)


DIRICHLET_X = np.array([[0.2, 0.5], [0.3, 0.1], [0.5, 0.4]])


@pytest.mark.parametrize(
    "x", [DIRICHLET_X, DIRICHLET_X[:2], DIRICHLET_X[:, 0], np.array([0.5, 0.6, -0.1])], ids=str
)
def test_dirichlet_matches_jax(x):
    alpha = np.array([1.5, 2.0, 0.7])
    np.testing.assert_allclose(
        mst.dirichlet.logpdf(x, alpha), _jax_jit("dirichlet", "logpdf")(x, alpha), rtol=1e-12
    )
    np.testing.assert_allclose(
        mst.dirichlet.pdf(x, alpha), _jax_jit("dirichlet", "pdf")(x, alpha), rtol=1e-12
    )
    if x.ndim == 1 and x.shape[0] == 3 and (x > 0).all():
        np.testing.assert_allclose(mst.dirichlet.logpdf(x, alpha), sst.dirichlet.logpdf(x, alpha))
        got = mjcore.grad(mst.dirichlet.logpdf, (0, 1))(x, alpha)
        want = _jax_jit("dirichlet", "logpdf", (0, 1))(x, alpha)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-12)


def test_dirichlet_errors():
    with pytest.raises(ValueError, match="alpha must be one-dimensional"):
        mst.dirichlet.logpdf(np.ones(3) / 3, np.ones((3, 1)))
    with pytest.raises(ValueError, match="as many entries as alpha"):
        mst.dirichlet.logpdf(np.ones(5) / 5, np.ones(3))


VMAP_CASES = [
    ("norm", "logpdf", (X, 0.3, 1.7)),
    ("gamma", "cdf", (X, 2.5, -0.5, 1.5)),
    ("beta", "logpdf", (UNIT, 2.5, 1.5)),
    ("poisson", "logpmf", (K, 2.3)),
    ("binom", "logpmf", (K, 5.0, 0.3)),
    ("chi2", "sf", (X, 3.0, -0.5, 2.0)),
]


@pytest.mark.parametrize(("dist", "fun", "args"), VMAP_CASES, ids=[_ids(c) for c in VMAP_CASES])
def test_vmap_over_parameters_matches_jax(dist, fun, args):
    x, first, *rest = args
    params = np.array([first, first * 1.3, first * 0.6])
    got = mjcore.vmap(lambda p: getattr(getattr(mst, dist), fun)(x, p, *rest))(params)
    want = jax.jit(jax.vmap(lambda p: getattr(getattr(jst, dist), fun)(x, p, *rest)))(params)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)


def test_module_layout_mirrors_jax():
    import mjcore.scipy.stats.norm as norm_module

    assert norm_module.logpdf is mst.norm.logpdf
    for dist in mst.__all__:
        ours = set(getattr(mst, dist).__all__)
        theirs = {n for n in dir(getattr(jst, dist)) if not n.startswith("_")}
        assert ours <= theirs, (dist, ours - theirs)
