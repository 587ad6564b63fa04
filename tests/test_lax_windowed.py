"""lax.reduce_window against jax.lax.reduce_window (x64): values over window, stride, padding
and dilation configurations, jvp and gradients (max pooling with ties), vmap, jit, errors."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
import mjnp as np
from mjcore import lax

jax.config.update("jax_enable_x64", True)


class Window(NamedTuple):
    shape: tuple[int, ...]
    window: tuple[int, ...]
    strides: tuple[int, ...] | None
    padding: str | tuple[tuple[int, int], ...]
    base_dilation: tuple[int, ...] | None = None
    window_dilation: tuple[int, ...] | None = None

    def args(self) -> tuple:
        return (self.window, self.strides, self.padding, self.base_dilation, self.window_dilation)

    @property
    def jax_can_transpose_max(self) -> bool:
        """JAX's max/min vjp rejects window dilation and negative padding."""
        negative = not isinstance(self.padding, str) and any(
            p < 0 for lh in self.padding for p in lh
        )
        return not negative and not any(d != 1 for d in self.window_dilation or ())


CONFIGS = {
    "1d-valid": Window((7,), (3,), (1,), "VALID"),
    "1d-same-stride2": Window((8,), (3,), (2,), "SAME"),
    "1d-same-lower": Window((6,), (4,), (3,), "SAME_LOWER"),
    "2d-pool": Window((6, 6), (2, 2), (2, 2), "VALID"),
    "2d-overlap-same": Window((5, 7), (3, 3), (2, 1), "SAME"),
    "2d-pairs": Window((4, 5), (2, 3), (1, 2), ((1, 2), (0, 1))),
    "2d-negative-pad": Window((5, 6), (2, 2), (1, 2), ((-1, 1), (2, -2))),
    "2d-base-dilation": Window((4, 5), (2, 3), (1, 2), ((1, 0), (1, 1)), (2, 1)),
    "2d-window-dilation": Window((6, 5), (2, 2), (1, 1), "SAME", None, (2, 2)),
    "3d-both-dilations": Window((3, 4, 5), (1, 2, 2), (1, 2, 1), "SAME", (1, 2, 1), (1, 1, 2)),
    "nchw-pool": Window((2, 3, 6, 6), (1, 1, 3, 3), (1, 1, 2, 2), "SAME"),
}
COMPUTATIONS = {
    "add": (lax.add, jax.lax.add, lambda dt: 0),
    "max": (lax.max, jax.lax.max, lambda dt: -onp.inf if dt.kind == "f" else onp.iinfo(dt).min),
    "min": (lax.min, jax.lax.min, lambda dt: onp.inf if dt.kind == "f" else onp.iinfo(dt).max),
}
CASES = [pytest.param(c, name, id=f"{c}-{name}") for c in COMPUTATIONS for name in CONFIGS]


def _data(shape, ties: bool, seed: int = 0) -> onp.ndarray:
    """Standard normal values, or small integers (as floats) so that windows hold ties."""
    rng = onp.random.default_rng(seed)
    if ties:
        return rng.integers(-1, 2, size=shape).astype(onp.float64)
    return rng.standard_normal(shape)


def _pair(comp: str, cfg: Window, dtype=onp.float64):
    mj_comp, jax_comp, identity = COMPUTATIONS[comp]
    init = identity(onp.dtype(dtype))

    def f(x):
        return lax.reduce_window(x, init, mj_comp, *cfg.args())

    def g(x):
        return jax.lax.reduce_window(x, onp.asarray(init, dtype), jax_comp, *cfg.args())

    return f, g


def _close(actual, expected, rtol=1e-12):
    actual, expected = onp.asarray(actual), onp.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    onp.testing.assert_allclose(actual, expected, rtol=rtol, atol=1e-12)


# --- values ---------------------------------------------------------------------------------


@pytest.mark.parametrize("comp,name", CASES)
def test_values_and_jit_match_jax(comp, name):
    cfg = CONFIGS[name]
    f, g = _pair(comp, cfg)
    x = _data(cfg.shape, ties=False)
    expected = g(x)
    _close(f(x), expected)
    _close(mjcore.jit(f)(x), expected)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32"])
@pytest.mark.parametrize("comp", list(COMPUTATIONS))
def test_other_dtypes_match_jax(comp, dtype):
    cfg = CONFIGS["2d-base-dilation"]
    f, g = _pair(comp, cfg, onp.dtype(dtype))
    x = onp.random.default_rng(1).integers(0, 50, size=cfg.shape).astype(dtype)
    _close(f(x), g(x), rtol=1e-6)


def test_bool_max_and_min():
    x = onp.random.default_rng(2).random((5, 6)) < 0.3
    for mj_comp, jax_comp, init in ((lax.max, jax.lax.max, False), (lax.min, jax.lax.min, True)):
        out = lax.reduce_window(x, init, mj_comp, (2, 3), (1, 2), "SAME")
        expected = jax.lax.reduce_window(x, init, jax_comp, (2, 3), (1, 2), "SAME")
        _close(out, expected)


def test_rank_zero_and_empty_operands():
    assert float(lax.reduce_window(onp.float64(2.5), 0.0, lax.add, ())) == 2.5
    empty = lax.reduce_window(onp.zeros((0, 4)), -onp.inf, lax.max, (1, 2))
    assert empty.shape == (0, 3)
    short = lax.reduce_window(onp.ones((2, 4)), 0.0, lax.add, (3, 2))
    assert short.shape == (0, 3)
    g = mjcore.grad(lambda x: np.sum(lax.reduce_window(x, -onp.inf, lax.max, (3, 2))))
    _close(g(onp.ones((2, 4))), onp.zeros((2, 4)))


@pytest.mark.parametrize("comp", ["max", "min"])
def test_non_identity_init_joins_every_window(comp):
    mj_comp, jax_comp, identity = COMPUTATIONS[comp]
    cfg = CONFIGS["2d-pairs"]
    x = _data(cfg.shape, ties=False)

    def f(x):
        return np.sum(lax.reduce_window(x, 0.25, mj_comp, *cfg.args()) ** 2)

    def g(x):
        return jnp.sum(jax.lax.reduce_window(x, 0.25, jax_comp, *cfg.args()) ** 2)

    def g_monoid(x):
        # What JAX's generic path computes, in a form JAX can differentiate in reverse mode.
        out = jax.lax.reduce_window(x, identity(x.dtype), jax_comp, *cfg.args())
        return jnp.sum(jax_comp(out, 0.25) ** 2)

    _close(f(x), g(x))
    _close(mjcore.grad(f)(x), jax.grad(g_monoid)(x))


# --- derivatives ----------------------------------------------------------------------------


def _loss_pair(f, g, ct):
    def loss(x):
        return np.sum(f(x) * ct)

    def jax_loss(x):
        return jnp.sum(g(x) * ct)

    return loss, jax_loss


@pytest.mark.parametrize("comp,name", CASES)
def test_jvp_and_grad_match_jax(comp, name):
    cfg = CONFIGS[name]
    f, g = _pair(comp, cfg)
    x = _data(cfg.shape, ties=False)
    rng = onp.random.default_rng(3)
    t = rng.standard_normal(cfg.shape)
    out, out_dot = mjcore.jvp(f, (x,), (t,))
    loss, jax_loss = _loss_pair(f, g, rng.standard_normal(jax.eval_shape(g, x).shape))
    # JAX has no vjp for max/min with window dilation or negative padding; its forward-mode
    # Jacobian gives the same gradient there.
    jax_grad = jax.grad if comp == "add" or cfg.jax_can_transpose_max else jax.jacfwd
    # The oracles in one jax.jit: one compile, where eagerly each operation compiles.
    (expected, expected_dot), expected_grad = jax.jit(
        lambda x, t: (jax.jvp(g, (x,), (t,)), jax_grad(jax_loss)(x))
    )(x, t)
    _close(out, expected)
    _close(out_dot, expected_dot)
    _close(mjcore.grad(loss)(x), expected_grad)
    _close(mjcore.jit(mjcore.grad(loss))(x), expected_grad)


TIE_CASES = [p for p in CASES if p.values[0] == "add" or CONFIGS[p.values[1]].jax_can_transpose_max]


@pytest.mark.parametrize("comp,name", TIE_CASES)
def test_derivatives_with_ties_match_jax_reverse_mode(comp, name):
    # On ties JAX's vjp (select_and_scatter_add with `ge`) picks the first maximal element of
    # each window; its jvp leaves the choice to XLA's reduction order. Ours picks the first in
    # both, so both match JAX's reverse-mode Jacobian.
    cfg = CONFIGS[name]
    f, g = _pair(comp, cfg)
    x = _data(cfg.shape, ties=True)
    rng = onp.random.default_rng(5)
    t = rng.standard_normal(cfg.shape)
    loss, jax_loss = _loss_pair(f, g, rng.standard_normal(jax.eval_shape(g, x).shape))
    # The oracles in one jax.jit: one compile, where eagerly each operation compiles.
    jacobian, expected_grad = jax.jit(lambda x: (jax.jacrev(g)(x), jax.grad(jax_loss)(x)))(x)
    _, out_dot = mjcore.jvp(f, (x,), (t,))
    _close(out_dot, onp.tensordot(onp.asarray(jacobian), t, axes=len(cfg.shape)))
    _close(mjcore.grad(loss)(x), expected_grad)


def test_max_pool_gradient_goes_to_first_maximum():
    # JAX (select_and_scatter_add with `ge`) gives each window's cotangent to its first
    # maximal element in row-major window order; overlapping windows add up.
    x = onp.ones((4, 4))
    x[1, 1] = x[2, 3] = 2.0

    def loss(x):
        return np.sum(lax.reduce_window(x, -onp.inf, lax.max, (2, 2), (1, 1), "VALID"))

    def jax_loss(x):
        return jnp.sum(jax.lax.reduce_window(x, -onp.inf, jax.lax.max, (2, 2), (1, 1), "VALID"))

    grad = onp.asarray(mjcore.grad(loss)(x))
    expected = onp.zeros((4, 4))
    expected[1, 1], expected[2, 3] = 4.0, 2.0  # the maxima of four and of two windows
    expected[0, 2] = expected[2, 0] = expected[2, 1] = 1.0  # all-ones windows: top-left
    _close(grad, expected)
    _close(grad, jax.grad(jax_loss)(x))


@pytest.mark.parametrize("comp", list(COMPUTATIONS))
def test_second_order_matches_jax(comp):
    cfg = CONFIGS["2d-overlap-same"]
    f, g = _pair(comp, cfg)
    x = _data(cfg.shape, ties=False)
    t = onp.random.default_rng(4).standard_normal(cfg.shape)

    def hvp(loss, grad, jvp):
        return jvp(grad(loss), (x,), (t,))[1]

    actual = hvp(lambda x: np.sum(np.sin(f(x))), mjcore.grad, mjcore.jvp)
    expected = hvp(lambda x: jnp.sum(jnp.sin(g(x))), jax.grad, jax.jvp)
    _close(actual, expected)


# --- vmap -----------------------------------------------------------------------------------


@pytest.mark.parametrize("in_axis", [0, 1, -1])
@pytest.mark.parametrize("comp", list(COMPUTATIONS))
def test_vmap_matches_loop(comp, in_axis):
    cfg = CONFIGS["3d-both-dilations"]
    f, _ = _pair(comp, cfg)
    xs = onp.stack([_data(cfg.shape, ties=True, seed=i) for i in range(3)], axis=in_axis)
    out = mjcore.vmap(f, in_axes=in_axis)(xs)
    expected = onp.stack([onp.asarray(f(onp.take(xs, i, in_axis))) for i in range(3)])
    _close(out, expected)

    def loss(x):
        return np.sum(np.sin(f(x)))

    grads = mjcore.vmap(mjcore.grad(loss), in_axes=in_axis)(xs)
    expected_grads = onp.stack(
        [onp.asarray(mjcore.grad(loss)(onp.take(xs, i, in_axis))) for i in range(3)]
    )
    _close(grads, expected_grads)


# --- errors ---------------------------------------------------------------------------------


def test_errors_name_the_function_and_shapes():
    x = onp.ones((4, 5))
    with pytest.raises(ValueError, match=r"reduce_window: window_strides \(1,\).*shape \(4, 5\)"):
        lax.reduce_window(x, 0.0, lax.add, (2, 2), (1,))
    with pytest.raises(ValueError, match=r"reduce_window: window_dimensions \(2,\).*\(4, 5\)"):
        lax.reduce_window(x, 0.0, lax.add, (2,))
    with pytest.raises(ValueError, match=r"reduce_window: padding \(\(0, 0\),\).*\(4, 5\)"):
        lax.reduce_window(x, 0.0, lax.add, (2, 2), None, ((0, 0),))
    with pytest.raises(ValueError, match=r"reduce_window: window_dimensions must be positive"):
        lax.reduce_window(x, 0.0, lax.add, (0, 2))
    with pytest.raises(ValueError, match=r"reduce_window: padding \(\(-5, 0\), \(0, 0\)\) crops"):
        lax.reduce_window(x, 0.0, lax.add, (1, 1), None, ((-5, 0), (0, 0)))
    with pytest.raises(ValueError, match="reduce_window: padding must be 'SAME'"):
        lax.reduce_window(x, 0.0, lax.add, (2, 2), None, "FULL")
    with pytest.raises(NotImplementedError, match="reduce_window: computation 'mul'"):
        lax.reduce_window(x, 1.0, lax.mul, (2, 2))
    with pytest.raises(NotImplementedError, match="reduce_window: lax.add needs init_value 0"):
        lax.reduce_window(x, 1.0, lax.add, (2, 2))
    with pytest.raises(ValueError, match="reduce_window: init_value must be a scalar"):
        lax.reduce_window(x, onp.zeros(2), lax.max, (2, 2))
    with pytest.raises(TypeError, match="reduce_window_max does not accept dtype complex128"):
        lax.reduce_window(x.astype(complex), -onp.inf, lax.max, (2, 2))
