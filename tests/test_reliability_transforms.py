"""Transformations check their inputs as JAX does: the same exception types (JAX x64 is run
on each case as the oracle) and messages that name the function and the fix."""

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
import mjnp as np
from mjcore.errors import ConcretizationTypeError, UnexpectedTracerError

jax.config.update("jax_enable_x64", True)


def _raises_like_jax(case, expected, match):
    """`case(jax, jnp)` raises `expected` (checked against JAX too) and `case(mjcore, np)`
    raises it with a message matching `match`."""
    with pytest.raises(expected):
        case(jax, jnp)
    with pytest.raises(expected, match=match):
        case(mjcore, np)


# name -> (case(T, N) with T the transformation module and N the numpy module, type, message)
ERROR_CASES = {
    "grad-float": (
        lambda T, N: T.grad(lambda x: float(x) * x)(2.0),
        TypeError,
        "float\\(\\) was called on a differentiated array",
    ),
    "jvp-float": (
        lambda T, N: T.jvp(lambda x: float(x) * x, (2.0,), (1.0,)),
        TypeError,
        "float\\(\\)",
    ),
    "linearize-float": (lambda T, N: T.linearize(lambda x: float(x) * x, 2.0), TypeError, "float"),
    "vjp-float": (lambda T, N: T.vjp(lambda x: float(x) * x, 2.0), TypeError, "float"),
    "jvp-complex()": (
        lambda T, N: T.jvp(lambda x: complex(x) * x, (2.0,), (1.0,)),
        TypeError,
        "complex\\(\\)",
    ),
    "grad-complex-output": (
        lambda T, N: T.grad(lambda x: x * 1j)(2.0),
        TypeError,
        "grad requires real-valued outputs .*got complex128.*holomorphic=True",
    ),
    "grad-holomorphic-real-input": (
        lambda T, N: T.grad(lambda x: x * x, holomorphic=True)(1.0),
        TypeError,
        "grad with holomorphic=True requires inputs with complex dtype, but got float64",
    ),
    "grad-holomorphic-real-output": (
        lambda T, N: T.grad(lambda x: N.abs(x), holomorphic=True)(1.0 + 1j),
        TypeError,
        "grad with holomorphic=True requires outputs with complex dtype, but got float64",
    ),
    "jacfwd-int": (
        lambda T, N: T.jacfwd(lambda x: x * 2.0)(N.arange(3)),
        TypeError,
        "jacfwd requires real-valued inputs .*got int64",
    ),
    "jacfwd-complex": (
        lambda T, N: T.jacfwd(lambda x: x * 2.0)(N.ones(2, complex)),
        TypeError,
        "jacfwd requires real-valued inputs .*got complex128",
    ),
    "jacrev-int": (
        lambda T, N: T.jacrev(lambda x: x * 2.0)(N.arange(3)),
        TypeError,
        "jacrev requires real- or complex-valued inputs .*got int64",
    ),
    "jacrev-complex-output": (
        lambda T, N: T.jacrev(lambda x: x * 1j)(N.ones(2)),
        TypeError,
        "jacrev requires real-valued outputs .*got complex128",
    ),
    "hessian-int": (
        lambda T, N: T.hessian(lambda x: (x * 2.0).sum())(N.arange(3)),
        TypeError,
        "jacfwd requires real-valued inputs .*got int64",
    ),
    "jvp-int-primal-float-tangent": (
        lambda T, N: T.jvp(lambda x: x * 2, (N.arange(3),), (N.ones(3),)),
        TypeError,
        "primal dtype int64 and so expected tangent dtype float0, but got tangent dtype float64",
    ),
    "jvp-float-primal-int-tangent": (
        lambda T, N: T.jvp(lambda x: x * 2, (N.ones(3),), (N.arange(3),)),
        TypeError,
        "expected tangent dtype float64, but got tangent dtype int64",
    ),
    "jvp-float32-primal-float64-tangent": (
        lambda T, N: T.jvp(lambda x: x * 2, (N.ones(3, N.float32),), (N.ones(3),)),
        TypeError,
        "expected tangent dtype float32, but got tangent dtype float64",
    ),
    "jit-static_argnums-out-of-range": (
        lambda T, N: T.jit(lambda x: x, static_argnums=(3,)),
        ValueError,
        "static_argnums=\\(3,\\), but only accepts 1 positional arguments",
    ),
    "jit-static_argnums-negative": (
        lambda T, N: T.jit(lambda x: x, static_argnums=(-2,)),
        ValueError,
        "static_argnums=\\(-2,\\), but only accepts 1 positional arguments",
    ),
    "jit-donate_argnums-out-of-range": (
        lambda T, N: T.jit(lambda x: x, donate_argnums=(3,))(N.ones(3)),
        ValueError,
        "donate_argnums=\\(3,\\), but only accepts 1 positional arguments",
    ),
    "jit-non-hashable-static": (
        lambda T, N: T.jit(lambda x, s: x, static_argnums=(1,))(1.0, [1, 2]),
        ValueError,
        "Non-hashable static arguments are not supported.*list",
    ),
    "fori_loop-int32-int64": (
        lambda T, N: T.lax.fori_loop(N.int32(0), N.int64(3), lambda i, c: c + i, 0),
        TypeError,
        "lower and upper must have equal dtypes, got int32 and int64",
    ),
    "jit-fori_loop-int32-int64": (
        lambda T, N: T.jit(lambda a, b: T.lax.fori_loop(a, b, lambda i, c: c + i, 0))(
            N.int32(0), N.int64(3)
        ),
        TypeError,
        "lower and upper must have equal dtypes, got int32 and int64",
    ),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_match_jax(name):
    case, expected, match = ERROR_CASES[name]
    _raises_like_jax(case, expected, match)


def test_float_of_differentiated_value_is_a_concretization_error():
    with pytest.raises(ConcretizationTypeError):
        mjcore.grad(lambda x: float(x) * x)(2.0)


# name -> function whose values JAX also computes (no error): what stays allowed
ALLOWED = {
    "grad-int()": lambda T, N: T.grad(lambda x: int(x) * x)(2.0),
    "grad-item": lambda T, N: T.grad(lambda x: x.item() * x)(2.0),
    "grad-if": lambda T, N: T.grad(lambda x: x * 2 if x > 0 else x)(2.0),
    "jvp-if": lambda T, N: T.jvp(lambda x: x * 2 if x > 0 else x, (2.0,), (1.0,)),
    "grad-float-of-stop_gradient": lambda T, N: T.grad(lambda x: float(T.lax.stop_gradient(x)) * x)(
        2.0
    ),
    "grad-holomorphic": lambda T, N: T.grad(lambda x: x * x, holomorphic=True)(1.0 + 1j),
    "jacfwd-holomorphic": lambda T, N: T.jacfwd(lambda x: x * x, holomorphic=True)(
        N.ones(2, complex)
    ),
    "jacrev-holomorphic": lambda T, N: T.jacrev(lambda x: x * x, holomorphic=True)(
        N.ones(2, complex)
    ),
    "jacrev-complex-input": lambda T, N: T.jacrev(lambda x: N.abs(x))(N.ones(2, complex)),
    "fori_loop-python-and-int32": lambda T, N: T.lax.fori_loop(
        0, N.int32(3), lambda i, c: c + i, N.int32(0)
    ),
}


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_allowed_cases_match_jax_values(name):
    got = ALLOWED[name](mjcore, np)
    want = ALLOWED[name](jax, jnp)
    for g, w in zip(jax.tree.leaves(want), mjcore.tree_util.tree_leaves(got), strict=True):
        onp.testing.assert_allclose(onp.asarray(w), onp.asarray(g))


# --- leaked tracers -------------------------------------------------------------------------

TRANSFORMS = {
    "jit": (lambda f: mjcore.jit(f)(np.arange(3.0)), "jit"),
    "grad": (lambda f: mjcore.grad(lambda x: f(x).sum())(np.arange(3.0)), "(jvp|[^']*grad)"),
    "vmap": (lambda f: mjcore.vmap(f)(np.ones((2, 3))), "vmap"),
    "jvp": (lambda f: mjcore.jvp(f, (np.arange(3.0),), (np.ones(3),)), "jvp"),
}
USES = {
    "t + 1": lambda t: t + 1,
    "np.sin(t)": lambda t: np.sin(t),
    "float(t[0])": lambda t: float(t[0]),
    "onp.asarray(t)": lambda t: onp.asarray(t),
    "int(t.sum())": lambda t: int(t.sum()),
}


@pytest.mark.parametrize("use", sorted(USES))
@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
def test_leaked_tracer_raises_unexpected_tracer_error(transform, use):
    run, description = TRANSFORMS[transform]
    store = []
    run(lambda x: (store.append(x), x)[1])
    with pytest.raises(UnexpectedTracerError, match=f"created by '{description}.*already finished"):
        USES[use](store[0])


# --- jax_debug_nans -------------------------------------------------------------------------


@pytest.fixture
def debug_nans():
    mjcore.config.update("jax_debug_nans", True)
    jax.config.update("jax_debug_nans", True)
    yield
    mjcore.config.update("jax_debug_nans", False)
    jax.config.update("jax_debug_nans", False)


def _nan_at_log(N):
    def f(x):
        y = N.sin(x) * 0.5
        return N.log(y - 2.0) + x

    return f


NAN_CASES = {
    "log": (lambda T, N: N.log(N.asarray(-1.0)), "log"),
    "div": (lambda T, N: N.asarray(0.0) / N.asarray(0.0), "div"),
    "sqrt-array": (lambda T, N: N.sqrt(N.asarray([1.0, -1.0])), "sqrt"),
    "jit": (lambda T, N: T.jit(_nan_at_log(N))(1.0), "log"),
    "nested-jit": (lambda T, N: T.jit(lambda x: T.jit(_nan_at_log(N))(x) * 2)(1.0), "log"),
    "grad": (lambda T, N: T.grad(lambda x: N.log(x - 2.0))(1.0), "log"),
    "vmap": (lambda T, N: T.vmap(N.log)(N.asarray([1.0, -1.0])), "log"),
}


@pytest.mark.parametrize("name", sorted(NAN_CASES))
def test_debug_nans_names_the_operation_as_jax(debug_nans, name):
    case, op = NAN_CASES[name]
    message = f"invalid value \\(nan\\) encountered in {op}"
    with pytest.raises(FloatingPointError, match=message):
        case(jax, jnp)
    with pytest.raises(FloatingPointError, match=message):
        case(mjcore, np)


def test_debug_nans_leaves_nan_free_and_nan_input_results(debug_nans):
    f = mjcore.jit(lambda x: np.log(x) + 1.0)
    onp.testing.assert_allclose(onp.asarray(f(2.0)), onp.log(2.0) + 1.0)
    # NB: a NaN that came in is not an operation's doing (JAX raises here too).
    assert onp.isnan(onp.asarray(np.asarray(onp.nan) + 1.0))
    assert onp.isinf(onp.asarray(np.log(np.asarray(0.0))))


def test_debug_nans_off_again_restores_silent_nans():
    mjcore.config.update("jax_debug_nans", True)
    mjcore.config.update("jax_debug_nans", False)
    assert onp.isnan(onp.asarray(np.log(np.asarray(-1.0))))
    assert onp.isnan(onp.asarray(mjcore.jit(np.log)(-1.0)))
