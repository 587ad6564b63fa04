"""mjnp.random against numpy.random: the same seed gives the same numbers, dtypes and kinds of
result; draws are refused where they would be frozen (jit, control-flow bodies) and are
differentiable where NumPy's own computation is a reparameterisation."""

from __future__ import annotations

from typing import Any

import numpy
import pytest
from hypothesis import given
from hypothesis import strategies as st

import mjcore
import mjnp
from mjnp.random import RandomStagingError
from tests.differential_registry import differential
from tests.mjnp_testing import SETTINGS

# (function, args, kwargs) for every module-level sampler of NumPy's legacy API.
LEGACY_CALLS: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("rand", (), {}),
    ("rand", (2, 3), {}),
    ("randn", (4,), {}),
    ("randint", (0, 10), {"size": 5}),
    ("randint", (3,), {}),
    ("randint", (0, 200), {"size": 3, "dtype": "uint8"}),
    ("random", ((2, 2),), {}),
    ("random_sample", (3,), {}),
    ("ranf", (3,), {}),
    ("sample", (3,), {}),
    ("random_integers", (1, 6), {"size": 4}),
    ("uniform", (-1.0, 2.0), {"size": 3}),
    ("uniform", (), {}),
    ("normal", (1.0, 2.0, (2, 2)), {}),
    ("normal", ([0.0, 10.0], 1.0), {}),
    ("lognormal", (0.0, 0.5, 3), {}),
    ("standard_normal", (3,), {}),
    ("beta", (2.0, 3.0, 3), {}),
    ("binomial", (10, 0.3, 4), {}),
    ("chisquare", (2.0, 3), {}),
    ("dirichlet", ([1.0, 2.0, 3.0], 2), {}),
    ("exponential", (2.0, 3), {}),
    ("f", (2.0, 3.0, 3), {}),
    ("gamma", (2.0, 1.0, 3), {}),
    ("geometric", (0.3, 3), {}),
    ("gumbel", (0.0, 1.0, 3), {}),
    ("hypergeometric", (5, 4, 3, 3), {}),
    ("laplace", (0.0, 1.0, 3), {}),
    ("logistic", (0.0, 1.0, 3), {}),
    ("logseries", (0.5, 3), {}),
    ("multinomial", (10, [0.2, 0.3, 0.5], 2), {}),
    ("multivariate_normal", ([0.0, 1.0], [[1.0, 0.5], [0.5, 2.0]], 3), {}),
    ("negative_binomial", (5, 0.5, 3), {}),
    ("noncentral_chisquare", (3.0, 1.0, 3), {}),
    ("noncentral_f", (3.0, 4.0, 1.0, 3), {}),
    ("pareto", (3.0, 3), {}),
    ("poisson", (4.0, 5), {}),
    ("power", (3.0, 3), {}),
    ("rayleigh", (1.0, 3), {}),
    ("standard_cauchy", (3,), {}),
    ("standard_exponential", (3,), {}),
    ("standard_gamma", (2.0, 3), {}),
    ("standard_t", (3.0, 3), {}),
    ("triangular", (0.0, 1.0, 3.0, 3), {}),
    ("vonmises", (0.0, 1.0, 3), {}),
    ("wald", (1.0, 1.0, 3), {}),
    ("weibull", (2.0, 3), {}),
    ("zipf", (2.0, 3), {}),
    ("choice", (5, 3), {}),
    ("choice", ([1.5, 2.5, 3.5], 4), {"p": [0.2, 0.3, 0.5]}),
    ("permutation", (6,), {}),
]


def _assert_same_draw(got: Any, want: Any) -> None:
    if isinstance(want, numpy.ndarray):
        assert isinstance(got, mjcore.Array), type(got)
        assert got.dtype == want.dtype and got.shape == want.shape
        numpy.testing.assert_array_equal(numpy.asarray(got), want)
    else:  # NumPy's scalars come back as NumPy gives them
        assert type(got) is type(want) and got == want, (got, want)


@pytest.mark.parametrize(("name", "args", "kwargs"), LEGACY_CALLS, ids=lambda v: str(v))
def test_module_functions_draw_as_numpy(name: str, args: tuple, kwargs: dict) -> None:
    numpy.random.seed(1234)
    want = getattr(numpy.random, name)(*args, **kwargs)
    numpy.random.seed(1234)
    got = getattr(mjnp.random, name)(*args, **kwargs)
    _assert_same_draw(got, want)


def test_every_numpy_random_name_exists() -> None:
    missing = [n for n in numpy.random.__all__ if not hasattr(mjnp.random, n)]
    assert missing == []
    assert set(numpy.random.__all__) <= set(mjnp.random.__all__)


def test_global_state_is_numpys() -> None:
    numpy.random.seed(7)
    first = mjnp.random.rand(2)
    second = numpy.random.rand(2)  # the stream continues where mjnp left it
    numpy.random.seed(7)
    numpy.testing.assert_array_equal(numpy.asarray(first), numpy.random.rand(2))
    numpy.testing.assert_array_equal(second, numpy.random.rand(2))
    state = mjnp.random.get_state()
    a = mjnp.random.randn(3)
    mjnp.random.set_state(state)
    numpy.testing.assert_array_equal(numpy.asarray(a), numpy.asarray(mjnp.random.randn(3)))
    assert isinstance(mjnp.random.bytes(4), bytes)


GENERATOR_CALLS: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("random", (3,), {}),
    ("random", (), {}),
    ("integers", (0, 10, 5), {}),
    ("integers", (0, 10, 4), {"dtype": "int32", "endpoint": True}),
    ("normal", (1.0, 2.0, 3), {}),
    ("standard_normal", ((2, 2),), {"dtype": "float32"}),
    ("uniform", (0.0, 5.0, 3), {}),
    ("exponential", (1.0, 3), {}),
    ("poisson", (3.0, 3), {}),
    ("choice", (10, 3), {"replace": False}),
    ("permutation", (5,), {}),
    ("permuted", (numpy.arange(6).reshape(2, 3),), {"axis": 1}),
    ("multivariate_normal", ([0.0, 0.0], numpy.eye(2), 2), {}),
]


@pytest.mark.parametrize(("name", "args", "kwargs"), GENERATOR_CALLS, ids=lambda v: str(v))
def test_generator_methods_draw_as_numpy(name: str, args: tuple, kwargs: dict) -> None:
    want = getattr(numpy.random.default_rng(42), name)(*args, **kwargs)
    got = getattr(mjnp.random.default_rng(42), name)(*args, **kwargs)
    _assert_same_draw(got, want)


def test_generators_and_seeding_objects() -> None:
    seq = mjnp.random.SeedSequence(5)
    assert seq is not None and mjnp.random.PCG64 is numpy.random.PCG64
    g = mjnp.random.Generator(mjnp.random.PCG64(3))
    _assert_same_draw(g.random(2), numpy.random.Generator(numpy.random.PCG64(3)).random(2))
    assert mjnp.random.default_rng(g) is g
    _assert_same_draw(
        mjnp.random.default_rng(numpy.random.default_rng(9)).random(2),
        numpy.random.default_rng(9).random(2),
    )
    rs = mjnp.random.RandomState(3)
    _assert_same_draw(rs.randn(2, 2), numpy.random.RandomState(3).randn(2, 2))
    assert "Generator" in repr(g)


def test_mjnp_array_arguments() -> None:
    loc = mjnp.asarray([0.0, 10.0, 20.0])
    got = mjnp.random.default_rng(0).normal(loc, mjnp.ones(3))
    _assert_same_draw(got, numpy.random.default_rng(0).normal(numpy.asarray(loc), numpy.ones(3)))
    p = mjnp.asarray([0.1, 0.2, 0.7])
    got = mjnp.random.default_rng(1).choice(3, 5, p=p)
    _assert_same_draw(got, numpy.random.default_rng(1).choice(3, 5, p=numpy.asarray(p)))


@pytest.mark.parametrize("axis", [0, 1])
def test_array_permutation_choice_and_shuffle(axis: int) -> None:
    host = numpy.arange(12.0).reshape(3, 4)
    x = mjnp.asarray(host)
    _assert_same_draw(
        mjnp.random.default_rng(2).permutation(x, axis=axis),
        numpy.random.default_rng(2).permutation(host, axis=axis),
    )
    _assert_same_draw(
        mjnp.random.default_rng(2).choice(x, 5, axis=axis),
        numpy.random.default_rng(2).choice(host, 5, axis=axis),
    )
    y, want = mjnp.asarray(host), host.copy()
    mjnp.random.default_rng(4).shuffle(y, axis=axis)
    numpy.random.default_rng(4).shuffle(want, axis=axis)
    _assert_same_draw(y, want)
    numpy.random.seed(3)
    want = numpy.random.permutation(host)
    numpy.random.seed(3)
    _assert_same_draw(mjnp.random.permutation(x), want)
    z, want = mjnp.asarray(host), host.copy()
    numpy.random.seed(8)
    mjnp.random.shuffle(z)
    numpy.random.seed(8)
    numpy.random.shuffle(want)
    _assert_same_draw(z, want)


def test_array_errors() -> None:
    with pytest.raises(ValueError, match="permutation"):
        mjnp.random.default_rng(0).permutation(mjnp.asarray(1.0))
    with pytest.raises(TypeError, match="shuffle"):
        mjnp.random.shuffle(mjnp.asarray(1.0))
    with pytest.raises(ValueError, match="choice"):
        mjnp.random.default_rng(0).choice(mjnp.asarray(1.0))


def _standard_normals(seed: int, n: int) -> numpy.ndarray:
    return numpy.random.default_rng(seed).standard_normal(n)


def test_normal_uniform_lognormal_are_differentiable() -> None:
    z = _standard_normals(0, 5)

    def normal_sum(mu: Any, sigma: Any) -> Any:
        return mjnp.sum(mjnp.random.default_rng(0).normal(mu, sigma, size=5))

    d_mu, d_sigma = mjcore.grad(normal_sum, argnums=(0, 1))(1.0, 2.0)
    numpy.testing.assert_allclose(float(d_mu), 5.0)
    numpy.testing.assert_allclose(float(d_sigma), z.sum(), rtol=1e-12)
    value = mjcore.jit(lambda mu: mu)(0.0)  # jit itself is fine beside an eager draw
    assert float(value) == 0.0

    def lognormal_mean(m: Any) -> Any:
        return mjnp.mean(mjnp.random.default_rng(0).lognormal(m, 0.5, size=5))

    numpy.testing.assert_allclose(
        float(mjcore.grad(lognormal_mean)(0.3)), numpy.mean(numpy.exp(0.3 + 0.5 * z)), rtol=1e-12
    )
    u = numpy.random.default_rng(5).random(4)

    def uniform_sum(lo: Any, hi: Any) -> Any:
        return mjnp.sum(mjnp.random.default_rng(5).uniform(lo, hi, size=4))

    d_lo, d_hi = mjcore.grad(uniform_sum, argnums=(0, 1))(1.0, 3.0)
    numpy.testing.assert_allclose([float(d_lo), float(d_hi)], [4 - u.sum(), u.sum()], rtol=1e-12)
    # The values match NumPy's own draw.
    _, tangent = mjcore.jvp(
        lambda lo: mjnp.random.default_rng(5).uniform(lo, 3.0, size=4), (1.0,), (1.0,)
    )
    numpy.testing.assert_allclose(numpy.asarray(tangent), 1 - u, rtol=1e-12)
    primal = mjcore.jvp(lambda m: mjnp.random.default_rng(0).normal(m, 2.0), (1.0,), (1.0,))[0]
    numpy.testing.assert_allclose(float(primal), numpy.random.default_rng(0).normal(1.0, 2.0))


def test_vmap_shares_one_draw_across_the_batch() -> None:
    locs = numpy.array([0.0, 100.0, 200.0])
    got = mjcore.vmap(lambda m: mjnp.random.default_rng(3).normal(m, 1.0, size=2))(locs)
    z = _standard_normals(3, 2)
    numpy.testing.assert_allclose(numpy.asarray(got), locs[:, None] + z, rtol=1e-12)
    rows = mjcore.vmap(lambda r: mjnp.random.default_rng(1).permutation(r))(
        mjnp.arange(6.0).reshape(2, 3)
    )
    perm = numpy.random.default_rng(1).permutation(3)
    numpy.testing.assert_array_equal(numpy.asarray(rows), numpy.arange(6.0).reshape(2, 3)[:, perm])


def test_draws_are_refused_where_they_would_be_frozen() -> None:
    with pytest.raises(RandomStagingError, match=r"mjnp\.random\.rand .*jit.*argument"):
        mjcore.jit(lambda x: x + mjnp.random.rand())(1.0)
    with pytest.raises(RandomStagingError, match=r"mjnp\.random\.normal"):
        mjcore.jit(lambda x: mjnp.random.default_rng(0).normal(x))(1.0)
    with pytest.raises(RandomStagingError, match=r"mjnp\.random\.shuffle"):
        mjcore.jit(lambda x: mjnp.random.shuffle(x))(mjnp.arange(3.0))

    def body(carry: Any, _: Any) -> Any:
        return carry + mjnp.random.standard_normal(), None

    with pytest.raises(RandomStagingError, match="standard_normal"):
        mjcore.scan(body, 0.0, None, length=3)
    with pytest.raises(RandomStagingError, match="uniform"):
        mjcore.cond(True, lambda: mjnp.random.uniform(), lambda: 0.0)
    assert issubclass(RandomStagingError, TypeError)


def test_traced_parameters_of_other_distributions_are_refused() -> None:
    with pytest.raises(RandomStagingError, match=r"mjnp\.random\.poisson: a traced argument"):
        mjcore.grad(lambda lam: mjnp.sum(mjnp.random.poisson(lam, 3) * lam))(2.0)
    with pytest.raises(RandomStagingError, match=r"exponential: a traced argument"):
        mjcore.vmap(lambda s: mjnp.random.default_rng(0).exponential(s))(numpy.ones(2))


@differential(*sorted({f"random.{name}" for name, _, _ in LEGACY_CALLS}), "random.seed")
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), case=st.sampled_from(LEGACY_CALLS))
def test_drawn_seeds_give_numpys_draws(seed: int, case: tuple) -> None:
    name, args, kwargs = case
    numpy.random.seed(seed)
    want = getattr(numpy.random, name)(*args, **kwargs)
    mjnp.random.seed(seed)
    _assert_same_draw(getattr(mjnp.random, name)(*args, **kwargs), want)


@differential("random.default_rng")
@SETTINGS
@given(seed=st.integers(0, 2**63), case=st.sampled_from(GENERATOR_CALLS))
def test_drawn_generator_seeds_give_numpys_draws(seed: int, case: tuple) -> None:
    name, args, kwargs = case
    want = getattr(numpy.random.default_rng(seed), name)(*args, **kwargs)
    _assert_same_draw(getattr(mjnp.random.default_rng(seed), name)(*args, **kwargs), want)


@differential("random.get_state", "random.set_state", "random.bytes",
              "random.get_bit_generator", "random.set_bit_generator")  # fmt: skip
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 8))
def test_drawn_state_round_trips(seed: int, n: int) -> None:
    mjnp.random.seed(seed)
    state = mjnp.random.get_state()
    assert mjnp.random.bytes(n) == numpy.random.RandomState(seed).bytes(n)
    mjnp.random.set_state(state)
    assert mjnp.random.bytes(n) == numpy.random.RandomState(seed).bytes(n)
    bit_generator = mjnp.random.get_bit_generator()
    assert bit_generator is numpy.random.get_bit_generator()
    mjnp.random.set_bit_generator(bit_generator)


@differential("random.shuffle")
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), shape=st.lists(st.integers(1, 4), min_size=1, max_size=3))
def test_drawn_shuffles_match_numpy(seed: int, shape: list[int]) -> None:
    want = numpy.arange(float(numpy.prod(shape))).reshape(shape)
    got = mjnp.asarray(want)
    numpy.random.seed(seed)
    numpy.random.shuffle(want)
    numpy.random.seed(seed)
    mjnp.random.shuffle(got)
    _assert_same_draw(got, want)
