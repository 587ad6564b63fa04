"""mjcore.nn.initializers against JAX's `jax.nn.initializers` (x64) as the oracle: mjcore.random
draws JAX's bits, so with the same seed every initializer must give JAX's weights exactly, for
raw (`PRNGKey`) and typed (`key`) keys, real and complex dtypes, eagerly and under jit; plus the
fan computation and the errors for bad input."""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import numpy as onp
import pytest

import mjcore
import mjcore.random as mr
from mjcore.nn import initializers as init

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)


class Row(NamedTuple):
    name: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = {}  # never mutated
    shape: tuple[int, ...] = (4, 3, 5)

    @property
    def id(self) -> str:
        extra = ",".join(
            [repr(a) for a in self.args] + [f"{k}={v}" for k, v in self.kwargs.items()]
        )
        return f"{self.name}({extra}){self.shape}"

    def pair(self) -> tuple[Any, Any]:
        return (
            getattr(init, self.name)(*self.args, **self.kwargs),
            getattr(jax.nn.initializers, self.name)(*self.args, **self.kwargs),
        )


ROWS = [
    Row("constant", (-7,)),
    Row("uniform", (10.0,)),
    Row("normal", (5.0,)),
    Row("truncated_normal"),
    Row("truncated_normal", (2.0,), {"lower": -1.0, "upper": 3.0}),
    Row("glorot_uniform", shape=(6, 7)),
    Row("glorot_normal", (), {"in_axis": 0, "out_axis": (1, 2)}),
    Row("lecun_uniform", (), {"batch_axis": 0}),
    Row("he_uniform", shape=(3, 3, 2, 8)),
    Row("he_normal", shape=(3, 3, 2, 8)),
    Row("variance_scaling", (0.5, "fan_geo_avg", "uniform"), {"in_axis": (0, 1)}),
    Row("variance_scaling", (1.0, "fan_avg", "truncated_normal"), {"out_axis": -2, "in_axis": -1}),
    Row("variance_scaling", (1.0, "fan_in", "normal"), {"in_axis": 0}, shape=(7,)),
    Row("orthogonal"),
    Row("orthogonal", (2.0, 0), shape=(3, 5)),
    Row("orthogonal", (), shape=(6, 2)),
    Row("delta_orthogonal", (1.5,), shape=(3, 2, 4, 4)),
    Row("delta_orthogonal", shape=(2, 3, 3, 2, 3)),
]


def assert_equal(actual: Any, expected: Any) -> None:
    actual, expected = onp.asarray(actual), onp.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    onp.testing.assert_array_equal(actual, expected)


def test_same_key_same_weights_as_jax():
    """Every row with one key, rows alternating float32 and float64 (neighbouring rows of one
    initializer get both), in one jitted function per side: compilation is most of the cost,
    and one program for the table compiles much faster than one per row."""
    pairs = [row.pair() for row in ROWS]
    dtypes = ["float32" if i % 2 == 0 else "float64" for i in range(len(ROWS))]

    def table(side: int) -> Any:
        return lambda k: [
            p[side](k, row.shape, dtype) for p, row, dtype in zip(pairs, ROWS, dtypes, strict=True)
        ]

    expected = jax.jit(table(1))(jax.random.PRNGKey(3))
    actual = mjcore.jit(table(0))(mr.PRNGKey(3))
    for row, dtype, a, e in zip(ROWS, dtypes, actual, expected, strict=True):
        try:
            assert_equal(a, e)
        except AssertionError as err:
            raise AssertionError(f"{row.id} {dtype}: {err}") from err


EAGER_ROWS = [ROWS[1], ROWS[4], ROWS[14]]


@functools.cache
def _jax_eager_rows() -> dict[str, Any]:
    """JAX's weights of every EAGER_ROWS row from the typed key 3, as one JAX program (rather
    than one per row: compiling is most of the cost)."""
    pairs = [row.pair()[1] for row in EAGER_ROWS]
    outs = jax.jit(
        lambda k: [p(k, row.shape, "float32") for p, row in zip(pairs, EAGER_ROWS, strict=True)]
    )(jax.random.key(3))
    return {row.id: onp.asarray(o) for row, o in zip(EAGER_ROWS, outs, strict=True)}


@pytest.mark.parametrize("row", EAGER_ROWS, ids=lambda r: r.id)
def test_typed_and_raw_keys_eagerly(row: Row):
    mine, _ = row.pair()
    expected = _jax_eager_rows()[row.id]
    assert_equal(mine(mr.key(3), row.shape, "float32"), expected)
    assert_equal(mine(mr.PRNGKey(3), row.shape, "float32"), expected)


@pytest.mark.parametrize("name", ["zeros", "ones"])
def test_zeros_and_ones_ignore_the_key(name: str):
    for dtype in ["float32", "int32", "complex64", None]:
        expected = getattr(jax.nn.initializers, name)(jax.random.key(0), (2, 3), dtype)
        assert_equal(getattr(init, name)(None, (2, 3), dtype), expected)


def test_complex_variance_scaling():
    cases = [(d, t) for d in ("uniform", "normal", "truncated_normal") for t in ("c64", "c128")]

    def table(module: Any) -> Any:
        return lambda k: [
            module.variance_scaling(1.0, "fan_in", d)(k, (4, 5), f"complex{t[1:]}")
            for d, t in cases
        ]

    expected = jax.jit(table(jax.nn.initializers))(jax.random.PRNGKey(1))
    for a, e in zip(mjcore.jit(table(init))(mr.PRNGKey(1)), expected, strict=True):
        assert_equal(a, e)


def test_default_dtypes():
    # The builder's dtype is the default; the call's dtype overrides it; float64 without either.
    assert init.normal()(mr.PRNGKey(0), (2,)).dtype == onp.float64
    assert init.normal(dtype="float32")(mr.PRNGKey(0), (2,)).dtype == onp.float32
    assert init.he_normal(dtype="float32")(mr.PRNGKey(0), (2, 2), "float64").dtype == onp.float64
    assert init.constant(1, dtype="float16")(None, (2,)).dtype == onp.float16


def test_under_jit_and_vmap_over_keys():
    he = init.he_uniform()
    eager = he(mr.PRNGKey(5), (3, 4), "float32")
    jitted = mjcore.jit(lambda k: he(k, (3, 4), "float32"))(mr.PRNGKey(5))
    assert_equal(jitted, eager)
    keys = mr.split(mr.PRNGKey(0), 3)
    batched = mjcore.vmap(lambda k: he(k, (3, 4), "float32"))(keys)
    expected = jax.vmap(lambda k: jax.nn.initializers.he_uniform()(k, (3, 4), "float32"))(
        jax.random.split(jax.random.PRNGKey(0), 3)
    )
    assert_equal(batched, expected)


def test_orthogonal_is_orthogonal_and_empty_shapes_are_zeros():
    w = onp.asarray(init.orthogonal(scale=2.0)(mr.PRNGKey(0), (3, 4, 6)))
    flat = w.reshape(12, 6)
    onp.testing.assert_allclose(flat.T @ flat, 4 * onp.eye(6), atol=1e-12)
    assert_equal(init.orthogonal()(mr.PRNGKey(0), (0, 3)), onp.zeros((0, 3)))
    assert isinstance(init.orthogonal(), init.Initializer)
    assert isinstance(init.zeros, init.Initializer)


def test_aliases_are_the_same_functions():
    assert init.xavier_uniform is init.glorot_uniform
    assert init.xavier_normal is init.glorot_normal
    assert init.kaiming_uniform is init.he_uniform
    assert init.kaiming_normal is init.he_normal


def test_every_public_name_of_jax_is_here():
    jax_names = {n for n in dir(jax.nn.initializers) if not n.startswith("_")}
    assert jax_names == set(init.__all__)


KEY = mr.PRNGKey(0)
ERRORS = [
    (
        lambda: init.glorot_uniform()(KEY, (5,)),
        ValueError,
        r"variance_scaling: cannot compute fan-in and fan-out of a 1-d shape \(5,\)",
    ),
    (
        lambda: init.variance_scaling(1.0, "fan_max", "normal")(KEY, (2, 2)),
        ValueError,
        "variance_scaling: invalid mode 'fan_max'",
    ),
    (
        lambda: init.variance_scaling(1.0, "fan_in", "cauchy")(KEY, (2, 2)),
        ValueError,
        "variance_scaling: invalid distribution 'cauchy'",
    ),
    (
        lambda: init.lecun_normal(in_axis=3)(KEY, (2, 2)),
        ValueError,
        r"in_axis 3 is out of range for shape \(2, 2\)",
    ),
    (lambda: init.he_normal()(KEY, (0, 2)), ValueError, r"fans of the empty shape \(0, 2\)"),
    (
        lambda: init.orthogonal()(KEY, (4,)),
        ValueError,
        r"orthogonal: requires a shape of at least 2 dimensions, got \(4,\)",
    ),
    (
        lambda: init.orthogonal(column_axis=2)(KEY, (4, 4)),
        ValueError,
        "column_axis 2 is out of range",
    ),
    (
        lambda: init.delta_orthogonal()(KEY, (3, 3)),
        ValueError,
        r"delta_orthogonal: requires a 3-, 4- or 5-d shape, got \(3, 3\)",
    ),
    (
        lambda: init.delta_orthogonal()(KEY, (3, 4, 2)),
        ValueError,
        r"fan_in \(shape\[-2\] = 4\) must be at most fan_out",
    ),
    (lambda: init.normal()(KEY, (2,), "int32"), ValueError, "dtype must be a float"),
    (
        lambda: init.zeros(KEY, (2,), out_sharding="x"),
        NotImplementedError,
        "zeros: out_sharding is not supported",
    ),
    (
        lambda: init.variance_scaling(1.0, "fan_in", "normal")(KEY, "ab"),
        TypeError,
        "variance_scaling: shape must be a sequence of ints",
    ),
]


@pytest.mark.parametrize("call,exc,match", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors_name_the_function(call: Any, exc: type, match: str):
    with pytest.raises(exc, match=match):
        call()
