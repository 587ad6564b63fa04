"""mjcore.nn against JAX's `jax.nn` (x64) as the oracle: values and dtypes eagerly and under jit
(float16/32/64, integer and Python scalar inputs, 0-d and empty shapes, infinities and NaN),
first and second derivatives including at the kinks, vmap, numerical gradient checks, and the
errors for bad input."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as onp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mjcore
import mjcore.nn as nn
import mjnp as np
from mjcore.test_util import check_grads

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)

# The oracle runs under jax.jit: one compilation per function rather than one per operation
# keeps this file fast (eager JAX dominated its run time).
oracle = jax.jit

RTOL = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-13}
GRAD_RTOL = {"float32": 1e-5, "float64": 1e-12}


def assert_matches(actual: Any, expected: Any, rtol: float | None = None) -> None:
    """Same dtype and shape, values equal up to `rtol` (NaN where NaN, infinities exact)."""
    actual, expected = onp.asarray(actual), onp.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    tol = RTOL.get(str(actual.dtype), 0.0) if rtol is None else rtol
    onp.testing.assert_allclose(actual, expected, rtol=tol, atol=tol, equal_nan=True)


# --- the elementwise activations ------------------------------------------------------------


class Act(NamedTuple):
    name: str
    kwargs: dict[str, Any]
    kinks: tuple[float, ...] = ()  # points where the derivative is defined by convention
    smooth: tuple[float, float] = (-3.0, 3.0)  # an interval free of kinks, for check_grads

    @property
    def id(self) -> str:
        extra = ",".join(f"{k}={v}" for k, v in self.kwargs.items())
        return f"{self.name}({extra})" if extra else self.name

    def mj(self) -> Callable[[Any], Any]:
        return lambda x: getattr(nn, self.name)(x, **self.kwargs)

    def mj_jit(self) -> Callable[[Any], Any]:
        # One jitted function per row, so tests of the same shape share its compilation.
        return _JITTED.setdefault(("mj", self.id), mjcore.jit(self.mj()))

    def jax(self) -> Callable[[Any], Any]:
        return _JITTED.setdefault(
            ("jax", self.id), jax.jit(lambda x: getattr(jax.nn, self.name)(x, **self.kwargs))
        )


_JITTED: dict[tuple[str, str], Callable[[Any], Any]] = {}


ACTS = [
    Act("identity", {}),
    Act("relu", {}, kinks=(0.0,), smooth=(0.1, 3.0)),
    Act("relu6", {}, kinks=(0.0, 6.0), smooth=(0.1, 5.9)),
    Act("sigmoid", {}),
    Act("log_sigmoid", {}),
    Act("softplus", {}),
    Act("sparse_plus", {}, kinks=(-1.0, 1.0), smooth=(-0.9, 0.9)),
    Act("sparse_sigmoid", {}, kinks=(-1.0, 1.0), smooth=(-0.9, 0.9)),
    Act("soft_sign", {}, kinks=(0.0,), smooth=(0.1, 3.0)),
    Act("silu", {}),
    Act("mish", {}),
    Act("tanh", {}),
    Act("gelu", {}),
    Act("gelu", {"approximate": False}),
    Act("elu", {}, kinks=(0.0,), smooth=(-3.0, -0.1)),
    Act("leaky_relu", {}, kinks=(0.0,), smooth=(-3.0, -0.1)),
    Act("celu", {}, kinks=(0.0,), smooth=(-3.0, -0.1)),
    Act("selu", {}, kinks=(0.0,), smooth=(-3.0, -0.1)),
    Act("hard_tanh", {}, kinks=(-1.0, 1.0), smooth=(-0.9, 0.9)),
    Act("hard_sigmoid", {}, kinks=(-3.0, 3.0), smooth=(-2.9, 2.9)),
    Act("hard_silu", {}, kinks=(-3.0, 3.0), smooth=(-2.9, 2.9)),
    Act("squareplus", {}),
    Act("log1mexp", {}, smooth=(0.2, 3.0)),
]
ACT_IDS = [a.id for a in ACTS]
# Non-default parameters: checked for values and derivatives only.
PARAM_ACTS = ACTS + [
    Act("elu", {"alpha": 0.5}, kinks=(0.0,), smooth=(-3.0, -0.1)),
    Act("leaky_relu", {"negative_slope": 0.2}, kinks=(0.0,), smooth=(0.1, 3.0)),
    Act("celu", {"alpha": 2.0}, kinks=(0.0,), smooth=(-3.0, -0.1)),
    Act("squareplus", {"b": 0.5}),
]
PARAM_ACT_IDS = [a.id for a in PARAM_ACTS]
FLOATS = ["float16", "float32", "float64"]
# Shapes per dtype: 0-d, empty and 2-d between them, without compiling every combination.
SHAPES = {"float32": [(0,), (3, 4)], "float64": [(), (3, 4)]}


def _points(act: Act, shape: tuple[int, ...], dtype: str, seed: int = 0) -> onp.ndarray:
    rng = onp.random.default_rng(seed)
    low = 0.05 if act.name == "log1mexp" else -8.0
    return rng.uniform(low, 8.0, size=shape).astype(dtype)


# Every elementwise test uses shape (3, 4) (or 0-d, or empty) so that the eagerly compiled
# kernels are shared between rows: compilation is most of this file's run time.
SPECIAL = onp.array(
    [-onp.inf, onp.inf, onp.nan, 0.0, -0.0, 1e30, -1e30, 6.0, -1.0, 1.0, 3.0, -3.0]
).reshape(3, 4)


def test_every_public_function_of_jax_nn_is_here_or_listed_as_left_out():
    left_out = {
        "scaled_matmul",
        "scaled_dot_general",
        "get_scaled_dot_general_config",
    }
    jax_names = {n for n in dir(jax.nn) if not n.startswith("_")}
    assert jax_names - left_out == set(nn.__all__)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("act", PARAM_ACTS, ids=PARAM_ACT_IDS)
def test_activation_values_and_dtype(act: Act, dtype: str):
    """Under jit, and for float64 also eagerly and under vmap. (Eager dispatch is jit of one
    primitive, with the same dtype rules: float32 eagerly would only add compilations.)"""
    for shape in SHAPES[dtype]:
        x = _points(act, shape, dtype)
        expected = act.jax()(x)
        if dtype == "float64" or shape != (3, 4):
            assert_matches(act.mj()(x), expected)
        if shape == (3, 4):
            assert_matches(act.mj_jit()(x), expected)
            if dtype == "float64":
                transposed = onp.asarray(expected).T
                assert_matches(mjcore.vmap(act.mj(), in_axes=1)(x), transposed)


@pytest.mark.parametrize("act", ACTS, ids=ACT_IDS)
def test_activation_float16(act: Act):
    x = _points(act, (3, 4), "float16")
    assert_matches(act.mj()(x), act.jax()(x))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_float16(name: str):
    x = _logits((3, 4), "float16")
    assert_matches(getattr(nn, name)(x, axis=0), getattr(jax.nn, name)(x, axis=0), 4e-3)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("act", ACTS, ids=ACT_IDS)
def test_activation_special_values(act: Act, dtype: str):
    x = SPECIAL.astype(dtype)
    with onp.errstate(all="ignore"):
        expected = act.jax()(x)
    if dtype == "float64":
        assert_matches(act.mj()(x), expected)
    assert_matches(act.mj_jit()(x), expected)


NON_FLOATS = [
    onp.arange(-4, 8, dtype=onp.int32).reshape(3, 4),
    onp.arange(-4, 8, dtype=onp.int64).reshape(3, 4),
    onp.arange(12).reshape(3, 4) % 3 == 0,
]


@pytest.mark.parametrize(
    "x", NON_FLOATS, ids=lambda x: type(x).__name__ + str(onp.asarray(x).dtype)
)
@pytest.mark.parametrize("act", ACTS, ids=ACT_IDS)
def test_activation_integer_and_scalar_inputs(act: Act, x: Any):
    """Result dtypes follow JAX (int32 -> float32, relu keeps integers); where JAX refuses an
    input (sigmoid of an int, log_sigmoid of a bool) we raise the same exception type."""
    try:
        with onp.errstate(all="ignore"):
            expected = act.jax()(x)
    except (TypeError, ValueError) as err:
        with pytest.raises(type(err), match=f"mjcore.nn.{getattr(nn, act.name).__name__}"):
            act.mj()(x)
        return
    assert_matches(act.mj()(x), expected)


def _grad_points(act: Act, dtype: str) -> onp.ndarray:
    """12 points as a (3, 4) array: the kinks, either side of them, and a spread over the
    smooth interval and beyond."""
    pts = list(act.kinks) + [p + d for p in act.kinks for d in (-0.25, 0.25)]
    if act.name != "log1mexp":
        pts += [-7.0, -0.5, 0.0, 2.5]
    pts += list(onp.linspace(*act.smooth, 12 - len(pts)))
    return onp.array(pts, dtype).reshape(3, 4)


@pytest.mark.parametrize(
    "act,dtype",
    [(a, "float64") for a in PARAM_ACTS] + [(a, "float32") for a in ACTS if a.kinks],
    ids=[f"{a.id}-float64" for a in PARAM_ACTS] + [f"{a.id}-float32" for a in ACTS if a.kinks],
)
def test_activation_derivatives_match_jax_including_kinks(act: Act, dtype: str):
    """grad and grad(grad) under vmap (and jit), and pointwise at the kinks, against jax.grad."""
    pts = _grad_points(act, dtype)
    rtol = GRAD_RTOL[dtype]
    d1 = [jax.grad(act.jax()), mjcore.grad(act.mj())]
    d2 = [jax.grad(jax.grad(act.jax())), mjcore.grad(mjcore.grad(act.mj()))]

    def vmap2(f, vmap=mjcore.vmap):
        return vmap(vmap(f))

    # JAX's first and second derivatives at every point in one compile; the kinks are the
    # first points, so their pointwise oracles are entries of these arrays.
    e1, e2 = oracle(lambda x: (vmap2(d1[0], jax.vmap)(x), vmap2(d2[0], jax.vmap)(x)))(pts)
    for i, p in enumerate(pts.flat[: len(act.kinks)]):
        assert_matches(d1[1](p), onp.asarray(e1).flat[i], rtol)
        assert_matches(d2[1](p), onp.asarray(e2).flat[i], rtol)
    assert_matches(vmap2(d1[1])(pts), e1, rtol)
    if dtype == "float64":
        assert_matches(mjcore.jit(vmap2(d2[1]))(pts), e2, rtol)


@pytest.mark.parametrize(
    "name,point,expected",
    [
        ("relu", 0.0, 0.0),
        ("relu6", 0.0, 0.0),
        ("relu6", 6.0, 0.0),
        ("leaky_relu", 0.0, 1.0),
        ("hard_tanh", 1.0, 1.0),
        ("hard_tanh", -1.0, 1.0),
        ("hard_sigmoid", 3.0, 0.0),
        ("celu", 0.0, 1.0),
        ("sparse_sigmoid", 1.0, 0.25),
    ],
)
def test_kink_derivatives_are_jaxs_conventions(name: str, point: float, expected: float):
    """The conventions spelled out, so a change in the oracle cannot hide a change here."""
    assert float(mjcore.grad(getattr(nn, name))(point)) == expected
    assert float(jax.grad(getattr(jax.nn, name))(point)) == expected


@pytest.mark.parametrize("act", ACTS, ids=ACT_IDS)
def test_activation_numerical_gradients(act: Act):
    x = onp.linspace(*act.smooth, 12).reshape(3, 4)
    check_grads(act.mj(), (x,), order=2, modes=("fwd", "rev"))


def test_aliases_are_the_same_functions():
    assert nn.swish is nn.silu
    assert nn.hard_swish is nn.hard_silu


def test_python_scalars_are_weak():
    assert_matches(nn.softplus(2), jax.nn.softplus(2))
    assert_matches(nn.hard_tanh(2), jax.nn.hard_tanh(2))
    with pytest.raises(TypeError, match="mjcore.nn.sigmoid"):
        nn.sigmoid(2)
    out = nn.relu(3.0) + onp.float32(1)
    assert out.dtype == onp.float32


# --- glu ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape,axis,dtype",
    [
        ((6,), -1, "float32"),
        ((4, 3), 0, "float64"),
        ((2, 4, 2), 1, "float64"),
        ((0, 2), 1, "float64"),
    ],
)
def test_glu(shape: tuple[int, ...], axis: int, dtype: str):
    x = onp.random.default_rng(0).normal(size=shape).astype(dtype)
    assert_matches(nn.glu(x, axis), jax.nn.glu(x, axis))
    assert_matches(mjcore.jit(nn.glu, static_argnums=1)(x, axis), jax.nn.glu(x, axis))
    w = onp.random.default_rng(1).normal(size=jax.nn.glu(x, axis).shape)
    assert_matches(
        mjcore.grad(lambda x: np.sum(nn.glu(x, axis) * w))(x),
        oracle(jax.grad(lambda x: jnp.sum(jax.nn.glu(x, axis) * w)))(x),
        GRAD_RTOL[dtype],
    )
    if x.size:
        check_grads(lambda x: nn.glu(x, axis), (x.astype("float64"),), order=2)


# --- softmax, log_softmax -------------------------------------------------------------------

AXES = [((5,), -1), ((3, 4), 0), ((3, 4), 1), ((3, 4), None), ((2, 3, 4), (0, 2)), ((), None)]


def _logits(shape: tuple[int, ...], dtype: str, seed: int = 0) -> onp.ndarray:
    return (onp.random.default_rng(seed).normal(size=shape) * 3).astype(dtype)


def _mask(shape: tuple[int, ...], seed: int = 2) -> onp.ndarray:
    m = onp.random.default_rng(seed).uniform(size=shape) < 0.7
    return m


@pytest.mark.parametrize("dtype,masked", [("float32", False), ("float64", True)])
@pytest.mark.parametrize("shape,axis", AXES, ids=str)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_values(name: str, shape, axis, dtype: str, masked: bool):
    x = _logits(shape, dtype)
    where = _mask(shape) if masked else None
    expected = oracle(lambda x: getattr(jax.nn, name)(x, axis=axis, where=where))(x)
    got = getattr(nn, name)(x, axis=axis, where=where)
    assert_matches(got, expected, 4 * RTOL[dtype])
    if dtype == "float64":
        jitted = mjcore.jit(lambda x, w: getattr(nn, name)(x, axis=axis, where=w))(x, where)
        assert_matches(jitted, expected, 4 * RTOL[dtype])


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_special_values(name: str):
    rows = onp.array(
        [
            [0.0, -onp.inf, 1.0],
            [-onp.inf, -onp.inf, -onp.inf],
            [onp.inf, 0.0, 1.0],
            [onp.nan, 0.0, 1.0],
            [1e300, 1e300, 0.0],
        ]
    )
    with onp.errstate(all="ignore"):
        expected = getattr(jax.nn, name)(rows)
    assert_matches(getattr(nn, name)(rows), expected)


GRAD_AXES = [((5,), -1), ((3, 4), 0), ((2, 3, 4), (0, 2)), ((), None)]


@pytest.mark.parametrize("dtype,masked", [("float32", False), ("float64", True)])
@pytest.mark.parametrize("shape,axis", GRAD_AXES, ids=str)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_gradients(name: str, shape, axis, dtype: str, masked: bool):
    x = _logits(shape, dtype)
    w = onp.random.default_rng(3).normal(size=shape).astype(dtype)
    where = _mask(shape) if masked else None
    mj_f, jax_f = getattr(nn, name), getattr(jax.nn, name)

    def mj_loss(x):
        y = mj_f(x, axis=axis, where=where)
        return np.sum(np.where(np.isfinite(y), y, 0) * w)

    def jax_loss(x):
        y = jax_f(x, axis=axis, where=where)
        return jnp.sum(jnp.where(jnp.isfinite(y), y, 0) * w)

    rtol = 10 * GRAD_RTOL[dtype]
    assert_matches(mjcore.grad(mj_loss)(x), oracle(jax.grad(jax_loss))(x), rtol)
    if dtype == "float64" and shape in ((5,), (3, 4)):
        assert_matches(mjcore.hessian(mj_loss)(x), oracle(jax.hessian(jax_loss))(x), rtol)


def test_softmax_gradient_is_stable_at_equal_logits():
    """The custom JVP keeps the gradient finite and exact where every logit is equal."""
    x = onp.zeros(4)
    want_rev, want_fwd = oracle(
        lambda x: (jax.jacrev(jax.nn.softmax)(x), jax.jacfwd(jax.nn.softmax)(x))
    )(x)
    assert_matches(mjcore.jacrev(nn.softmax)(x), want_rev)
    assert_matches(mjcore.jacfwd(nn.softmax)(x), want_fwd)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_vmap_and_check_grads(name: str):
    x = _logits((4, 5), "float64")
    where = _mask((4, 5))
    mj_f, jax_f = getattr(nn, name), getattr(jax.nn, name)
    assert_matches(
        mjcore.vmap(lambda r: mj_f(r))(x), jax.vmap(lambda r: jax_f(r))(x), RTOL["float64"]
    )
    # The mask batched too (a traced non-differentiable argument of the custom JVP).
    got = mjcore.vmap(lambda r, m: mj_f(r, where=m), in_axes=(1, 1))(x, where)
    want = jax.vmap(lambda r, m: jax_f(r, where=m), in_axes=(1, 1))(x, where)
    assert_matches(got, want, RTOL["float64"])
    check_grads(lambda x: mj_f(x, axis=0), (x,), order=2, modes=("fwd", "rev"))


@settings(max_examples=5, deadline=None, derandomize=True)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
    data=st.data(),
)
def test_softmax_random_shapes_and_axes(shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = _logits(shape, "float64", seed=len(shape))
    want_softmax, want_lse = oracle(
        lambda x: (
            jax.nn.softmax(x, axis=axis),
            jax.nn.logsumexp(x, axis=axis, keepdims=True),
        )
    )(x)
    assert_matches(nn.softmax(x, axis=axis), want_softmax, 1e-12)
    assert_matches(nn.logsumexp(x, axis=axis, keepdims=True), want_lse, 1e-12)


# --- logsumexp, logmeanexp ------------------------------------------------------------------

LSE_CASES = [
    ((5,), None, {}),
    ((3, 4), 0, {}),
    ((3, 4), 1, {"keepdims": True}),
    ((2, 3, 4), (0, 2), {}),
    ((), None, {}),
    ((0, 3), 1, {}),
    ((0, 3), 0, {}),
    ((3, 4), 1, {"b": "pos"}),
    ((3, 4), 1, {"b": "signed"}),
    ((3, 4), 1, {"b": "signed", "return_sign": True}),
    ((3, 4), None, {"where": True}),
    ((3, 4), 0, {"where": True, "keepdims": True}),
]


def _lse_kwargs(shape, kw: dict[str, Any], dtype: str) -> dict[str, Any]:
    out = dict(kw)
    rng = onp.random.default_rng(5)
    if out.get("b") == "pos":
        out["b"] = rng.uniform(0.0, 2.0, size=shape).astype(dtype)
        out["b"].flat[0] = 0.0
    elif out.get("b") == "signed":
        out["b"] = rng.normal(size=shape).astype(dtype)
    if out.get("where"):
        out["where"] = _mask(shape)
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,axis,kw", LSE_CASES, ids=str)
def test_logsumexp_values(shape, axis, kw, dtype: str):
    x = _logits(shape, dtype)
    kw = _lse_kwargs(shape, kw, dtype)
    expected = oracle(lambda x: jax.nn.logsumexp(x, axis=axis, **kw))(x)
    assert_matches(nn.logsumexp(x, axis=axis, **kw), expected, 4 * RTOL[dtype])
    if dtype == "float64":
        jitted = mjcore.jit(lambda x: nn.logsumexp(x, axis=axis, **kw))(x)
        assert_matches(jitted, expected, 4 * RTOL[dtype])
    if "return_sign" not in kw and "b" not in kw:
        want = oracle(lambda x: jax.nn.logmeanexp(x, axis=axis, **kw))(x)
        assert_matches(nn.logmeanexp(x, axis=axis, **kw), want, 4 * RTOL[dtype])


@pytest.mark.parametrize("shape,axis,kw", [c for c in LSE_CASES if 0 not in c[0]], ids=str)
def test_logsumexp_gradients(shape, axis, kw):
    x = _logits(shape, "float64")
    kw = _lse_kwargs(shape, kw, "float64")
    first = (lambda r: r[0]) if kw.get("return_sign") else (lambda r: r)

    def mj_loss(x):
        return np.sum(np.sin(first(nn.logsumexp(x, axis=axis, **kw))))

    def jax_loss(x):
        return jnp.sum(jnp.sin(first(jax.nn.logsumexp(x, axis=axis, **kw))))

    assert_matches(mjcore.grad(mj_loss)(x), oracle(jax.grad(jax_loss))(x), 1e-11)
    if "b" in kw or "where" in kw:
        assert_matches(mjcore.hessian(mj_loss)(x), oracle(jax.hessian(jax_loss))(x), 1e-10)
    else:
        check_grads(mj_loss, (x,), order=2, modes=("fwd", "rev"))


def test_logsumexp_special_values_and_vmap():
    rows = onp.array(
        [
            [-onp.inf, -onp.inf],
            [onp.inf, 0.0],
            [onp.inf, onp.inf],
            [onp.nan, 0.0],
            [1e308, 1e308],
            [-onp.inf, 0.0],
        ]
    )
    with onp.errstate(all="ignore"):
        expected = jax.nn.logsumexp(rows, axis=1)
    assert_matches(nn.logsumexp(rows, axis=1), expected)
    assert_matches(mjcore.vmap(nn.logsumexp)(rows), jax.vmap(jax.nn.logsumexp)(rows))
    # A zero scale excludes its -inf or +inf element; b that sums negative gives NaN.
    b = onp.array([[0.0, 1.0], [0.0, 1.0], [1.0, -1.0], [1.0, 1.0], [1.0, -1.0], [0.0, -1.0]])
    with onp.errstate(all="ignore"):
        expected = jax.nn.logsumexp(rows, axis=1, b=b)
        expected_signed = jax.nn.logsumexp(rows, axis=1, b=b, return_sign=True)
    assert_matches(nn.logsumexp(rows, axis=1, b=b), expected)
    for got, want in zip(
        nn.logsumexp(rows, axis=1, b=b, return_sign=True), expected_signed, strict=True
    ):
        assert_matches(got, want)


@pytest.mark.parametrize(
    "x", [onp.array([1, 2, 3], onp.int32), onp.array([1, 2], onp.int64), onp.array([True])]
)
def test_logsumexp_integer_inputs(x):
    b = onp.array(2.0, onp.float32)
    want = oracle(lambda x: (jax.nn.logsumexp(x), jax.nn.logmeanexp(x), jax.nn.logsumexp(x, b=b)))(
        x
    )
    assert_matches(nn.logsumexp(x), want[0])
    assert_matches(nn.logmeanexp(x), want[1])
    assert_matches(nn.logsumexp(x, b=b), want[2])


# --- standardize ----------------------------------------------------------------------------

STD_CASES = [
    ((5,), -1, {}),
    ((3, 4), 0, {}),
    ((3, 4), None, {"algorithm": "stable"}),
    ((2, 3, 4), (0, 2), {"epsilon": 0.1}),
    ((3, 4), 1, {"where": True}),
    ((3, 4), 1, {"mean": 0.5, "variance": 2.0}),
    ((3, 4), 1, {"where": True, "algorithm": "stable"}),
]


@pytest.mark.parametrize("dtype", ["float64"])
@pytest.mark.parametrize("shape,axis,kw", STD_CASES, ids=str)
def test_standardize(shape, axis, kw, dtype: str):
    x = _logits(shape, dtype)
    kw = dict(kw)
    if kw.get("where"):
        kw["where"] = _mask(shape)
    expected = oracle(lambda x: jax.nn.standardize(x, axis=axis, **kw))(x)
    rtol = 20 * RTOL[dtype]
    assert_matches(nn.standardize(x, axis=axis, **kw), expected, rtol)
    assert_matches(mjcore.jit(lambda x: nn.standardize(x, axis=axis, **kw))(x), expected, rtol)
    if dtype == "float64":
        w = onp.random.default_rng(4).normal(size=shape)
        got = mjcore.grad(lambda x: np.sum(nn.standardize(x, axis=axis, **kw) * w))(x)
        want = oracle(jax.grad(lambda x: jnp.sum(jax.nn.standardize(x, axis=axis, **kw) * w)))(x)
        assert_matches(got, want, 1e-10)
        check_grads(lambda x: nn.standardize(x, axis=axis, **kw), (x,), order=2)


def test_standardize_integer_float16_float32_input_and_vmap():
    x = onp.arange(12, dtype=onp.int32).reshape(3, 4)
    assert_matches(nn.standardize(x), jax.nn.standardize(x))
    x32 = _logits((3, 4), "float32")
    for kw in STD_CASES[1][2], STD_CASES[2][2]:
        assert_matches(nn.standardize(x32, **kw), jax.nn.standardize(x32, **kw), 4e-5)
    x16 = _logits((3, 4), "float16")
    assert_matches(nn.standardize(x16), jax.nn.standardize(x16), 1e-2)
    assert_matches(nn.logsumexp(x16, axis=1), jax.nn.logsumexp(x16, axis=1), 1e-2)
    xf = _logits((3, 4), "float64")
    assert_matches(mjcore.vmap(nn.standardize)(xf), jax.vmap(jax.nn.standardize)(xf), 1e-12)


# --- one_hot --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "idx_dtype,axis,dtype",
    [
        ("int64", -1, None),
        ("int32", 0, "float32"),
        ("uint8", 1, "int32"),
        ("int64", -2, "bool"),
        ("int32", 2, None),
    ],
    ids=str,
)
def test_one_hot(idx_dtype: str, axis: int, dtype):
    x = onp.array([[0, 1, 4], [2, 3, 200]], idx_dtype)  # 4 and 200 are out of range
    expected = oracle(lambda x: jax.nn.one_hot(x, 4, dtype=dtype, axis=axis))(x)
    assert_matches(nn.one_hot(x, 4, dtype=dtype, axis=axis), expected)
    f = mjcore.jit(lambda x: nn.one_hot(x, 4, dtype=dtype, axis=axis))
    assert_matches(f(x), expected)


def test_one_hot_negative_scalar_empty_and_vmap():
    for x in [onp.array([-1, 0, 2]), onp.array(1), onp.zeros((0, 2), onp.int64), 2]:
        assert_matches(nn.one_hot(x, 3), jax.nn.one_hot(x, 3))
    assert_matches(nn.one_hot(onp.array([1, 2]), 0), jax.nn.one_hot(onp.array([1, 2]), 0))
    x = onp.array([[0, 1], [2, 0]])
    assert_matches(
        mjcore.vmap(lambda r: nn.one_hot(r, 3), in_axes=1)(x),
        jax.vmap(lambda r: jax.nn.one_hot(r, 3), in_axes=1)(x),
    )
    # The encoding is a constant factor under differentiation.
    g = mjcore.grad(lambda s: np.sum(nn.one_hot(onp.array([1, 1, 0]), 2) * s))(2.0)
    assert float(g) == 3.0


# --- errors ---------------------------------------------------------------------------------

ERRORS = [
    (lambda: nn.one_hot(onp.array([0.0, 1.0]), 3), TypeError, "one_hot: indices must have"),
    (lambda: nn.one_hot(onp.array([True]), 3), TypeError, "one_hot: indices must have"),
    (lambda: nn.one_hot(onp.array([0]), 2.5), TypeError, "one_hot: num_classes must be an int"),
    (lambda: nn.one_hot(onp.array([0]), -1), ValueError, "one_hot: num_classes must be >= 0"),
    (lambda: nn.one_hot(onp.array([0]), 3, axis=2), onp.exceptions.AxisError, "one_hot"),
    (lambda: nn.one_hot(onp.array([0]), 3, axis=None), TypeError, "one_hot: axis must be"),
    (lambda: nn.softmax(onp.ones(3), axis=1), onp.exceptions.AxisError, "nn.softmax"),
    (lambda: nn.softmax(onp.ones(3), axis=1.5), TypeError, "softmax: axis must be"),
    (lambda: nn.softmax(onp.ones((2, 2)), axis=(0, 0)), ValueError, "softmax: repeated axis"),
    (lambda: nn.softmax(1.0), ValueError, "nn.softmax"),
    (lambda: nn.softmax(onp.array([True])), TypeError, "softmax: bool input"),
    (lambda: nn.log_softmax(onp.ones(3), axis=-2), IndexError, "nn.log_softmax"),
    (lambda: nn.logsumexp(onp.ones(3), axis=3), ValueError, "nn.logsumexp"),
    (lambda: nn.logmeanexp(onp.ones(3), axis=3), ValueError, "nn.logsumexp"),
    (lambda: nn.standardize(onp.ones(3), algorithm="exact"), ValueError, "unknown algorithm"),
    (lambda: nn.standardize(onp.ones(3), axis=2), ValueError, "nn.standardize"),
    (lambda: nn.glu(onp.ones(3)), ValueError, "glu: the size of axis -1 must be divisible"),
    (lambda: nn.glu(onp.ones((2, 4)), axis=2), IndexError, "nn.glu"),
    (lambda: nn.glu(onp.ones(4, onp.int32)), TypeError, "glu: requires a floating-point"),
    (lambda: nn.sigmoid(onp.ones(3, onp.int64)), TypeError, "sigmoid: requires a floating"),
    (lambda: nn.silu(2), TypeError, "silu: requires a floating-point input, got int64"),
    (lambda: nn.relu([1.0, 2.0]), TypeError, "relu: expected an array or a scalar, got list"),
    (lambda: nn.gelu("x"), TypeError, "gelu: expected an array or a scalar, got str"),
    (lambda: nn.log_sigmoid(onp.array([True])), TypeError, "log_sigmoid: bool input"),
]


@pytest.mark.parametrize("call,exc,match", ERRORS, ids=[e[2] for e in ERRORS])
def test_errors_name_the_function(call: Callable[[], Any], exc: type, match: str):
    with pytest.raises(exc, match=match):
        call()


def test_one_hot_refuses_traced_num_classes():
    with pytest.raises(TypeError, match="one_hot: num_classes must be a concrete int"):
        mjcore.jit(lambda x, n: nn.one_hot(x, n))(onp.array([0]), 3)


# --- wiring ---------------------------------------------------------------------------------


def test_nn_loads_lazily():
    code = (
        "import sys, mjcore\n"
        "assert 'mjcore.nn' not in sys.modules\n"
        "assert 'nn' in mjcore.__all__\n"
        "import mjnp\n"
        "assert 'mjcore.nn' not in sys.modules\n"
        "assert float(mjcore.nn.relu(2.0)) == 2.0\n"
        "assert 'mjcore.nn' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
