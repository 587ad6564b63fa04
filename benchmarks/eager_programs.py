"""Eager workloads written once against a NumPy-like namespace `xp`: the breadth ops (one
eager op each on float64[40,60]) and three small programs differentiated eagerly in the
style of autograd's examples (an RNN over characters, an EM-style mixture fit, a grid fluid).

Every function here is plain eager code: no `jit`. The programs run with `fw.grad` (mjcore's
or autograd's) on float64 data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

BREADTH_SHAPE = (40, 60)

# name -> (description, op(xp, x, aux)); aux holds the other operands, made by `breadth_data`.
BREADTH_OPS: dict[str, tuple[str, Callable[[Any, Any, dict[str, Any]], Any]]] = {
    "roll": ("`roll(x, 3, axis=1)`", lambda xp, x, a: xp.roll(x, 3, axis=1)),
    "scalar_mul": ("`x * 2.5`", lambda xp, x, a: x * 2.5),
    "scalar_add": ("`x + 1.5`", lambda xp, x, a: x + 1.5),
    "slice": ("`x[1:]`", lambda xp, x, a: x[1:]),
    "fancy_index": (
        "`x[idx, cols]` (two int arrays of 40)",
        lambda xp, x, a: x[a["idx"], a["cols"]],
    ),
    "sum": ("`sum(x)`", lambda xp, x, a: xp.sum(x)),
    "exp": ("`exp(x)`", lambda xp, x, a: xp.exp(x)),
    "dot": ("`x @ y`, y float64[60,40]", lambda xp, x, a: x @ a["y"]),
    "concatenate": ("`concatenate([x, x])`", lambda xp, x, a: xp.concatenate([x, x])),
    "reshape": ("`reshape(x, (60, 40))`", lambda xp, x, a: xp.reshape(x, (60, 40))),
    "astype": ("`x.astype(float32)`", lambda xp, x, a: x.astype(xp.float32)),
    "floor": ("`floor(x)`", lambda xp, x, a: xp.floor(x)),
    "mod": ("`mod(x, 3)`", lambda xp, x, a: xp.mod(x, 3)),
    "where": ("`where(x > 0, x, 0.)`", lambda xp, x, a: xp.where(x > 0, x, 0.0)),
    "transpose": ("`x.T`", lambda xp, x, a: x.T),
    "row": ("`x[0]`", lambda xp, x, a: x[0]),
    "max_axis": ("`max(x, axis=0)`", lambda xp, x, a: xp.max(x, axis=0)),
    "mean_axis": ("`mean(x, axis=1)`", lambda xp, x, a: xp.mean(x, axis=1)),
    "stack": ("`stack([x, x])`", lambda xp, x, a: xp.stack([x, x])),
    "clip": ("`clip(x, -0.5, 0.5)`", lambda xp, x, a: xp.clip(x, -0.5, 0.5)),
    "tanh": ("`tanh(x)`", lambda xp, x, a: xp.tanh(x)),
    "outer": (
        "`outer(u, v)`, u float64[40], v float64[60]",
        lambda xp, x, a: xp.outer(a["u"], a["v"]),
    ),
    "column": ("`x[:, 2]`", lambda xp, x, a: x[:, 2]),
    "cumsum": ("`cumsum(x, axis=1)`", lambda xp, x, a: xp.cumsum(x, axis=1)),
}


def breadth_data(put: Callable[[np.ndarray], Any]) -> tuple[Any, dict[str, Any]]:
    """x float64[40,60] and the other operands, put on the framework's device."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(BREADTH_SHAPE)
    aux = {
        "idx": put(rng.integers(0, 40, size=40)),
        "cols": put(rng.integers(0, 60, size=40)),
        "y": put(rng.standard_normal((60, 40))),
        "u": put(rng.standard_normal(40)),
        "v": put(rng.standard_normal(60)),
    }
    return put(x), aux


# --- An RNN over characters (autograd's examples/rnn.py) --------------------------------------

RNN_TEXT = "the quick brown fox jumps"
RNN_HIDDEN = 16


def _logsumexp(xp: Any, x: Any, axis: int) -> Any:
    m = xp.max(x, axis=axis, keepdims=True)
    return m + xp.log(xp.sum(xp.exp(x - m), axis=axis, keepdims=True))


def rnn_data() -> tuple[list[np.ndarray], np.ndarray]:
    """Initial parameters and the one-hot text, float64[len, vocab]."""
    vocab = sorted(set(RNN_TEXT))
    onehot = np.zeros((len(RNN_TEXT), len(vocab)))
    onehot[np.arange(len(RNN_TEXT)), [vocab.index(c) for c in RNN_TEXT]] = 1.0
    rng = np.random.default_rng(1)
    v, h = len(vocab), RNN_HIDDEN
    params = [
        0.1 * rng.standard_normal((v + h, h)),  # input and hidden -> hidden
        0.1 * rng.standard_normal(h),
        0.1 * rng.standard_normal((h, v)),  # hidden -> output
        0.1 * rng.standard_normal(v),
        0.1 * rng.standard_normal(h),  # initial hidden state
    ]
    return params, onehot


def rnn_loss(xp: Any, params: list[Any], onehot: Any) -> Any:
    """Negative log-likelihood of each next character, the hidden state carried along."""
    w_hid, b_hid, w_out, b_out, h0 = params
    hidden = h0
    loss = 0.0
    for t in range(onehot.shape[0] - 1):
        hidden = xp.tanh(xp.concatenate([onehot[t], hidden]) @ w_hid + b_hid)
        out = hidden @ w_out + b_out
        logprob = out - _logsumexp(xp, out, 0)
        loss = loss - xp.sum(logprob * onehot[t + 1])
    return loss


# --- EM-style fit of a Gaussian mixture (autograd's examples/gmm.py) --------------------------

GMM_POINTS, GMM_COMPONENTS, GMM_STEPS = 100, 3, 3


def gmm_data() -> tuple[list[np.ndarray], np.ndarray]:
    rng = np.random.default_rng(2)
    centres = np.array([[-2.0, 0.0], [2.0, 1.0], [0.0, -2.0]])
    x = centres[rng.integers(0, 3, GMM_POINTS)] + 0.5 * rng.standard_normal((GMM_POINTS, 2))
    params = [
        rng.standard_normal((GMM_COMPONENTS, 2)),  # means
        np.zeros((GMM_COMPONENTS, 2)),  # log standard deviations
        np.zeros(GMM_COMPONENTS),  # logits of the weights
    ]
    return params, x


def gmm_log_likelihood(xp: Any, params: list[Any], x: Any) -> Any:
    means, log_std, logits = params
    log_weights = logits - _logsumexp(xp, logits, 0)
    diff = (x[:, None, :] - means[None, :, :]) / xp.exp(log_std)[None, :, :]
    log_pdf = -0.5 * xp.sum(diff**2, axis=2) - xp.sum(log_std, axis=1) - np.log(2 * np.pi)
    return xp.sum(_logsumexp(xp, log_pdf + log_weights, 1))


def gmm_fit(grad: Callable[..., Any], xp: Any, params: list[Any], x: Any) -> list[Any]:
    """A few gradient-ascent steps on the log-likelihood (the M step by gradients)."""
    g = grad(lambda p: gmm_log_likelihood(xp, p, x))
    for _ in range(GMM_STEPS):
        step = g(params)
        params = [p + 0.01 * s for p, s in zip(params, step, strict=True)]
    return params


# --- A grid fluid (autograd's examples/fluidsim/fluidsim.py) ----------------------------------

FLUID_GRID, FLUID_STEPS, FLUID_PROJECT_ITERS = 16, 3, 5


def fluid_data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Initial velocity (vx and vy stacked), smoke and the target smoke."""
    rng = np.random.default_rng(3)
    n = FLUID_GRID
    velocity = 0.5 * rng.standard_normal((2, n, n))
    yy, xx = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    smoke = np.exp(-((yy - n / 2) ** 2 + (xx - n / 2) ** 2) / 8.0)
    target = np.roll(smoke, 3, axis=1)
    return velocity, smoke, target


def _project(xp: Any, vx: Any, vy: Any) -> tuple[Any, Any]:
    """Make the velocity field divergence-free (a few Jacobi iterations)."""
    h = 1.0 / vx.shape[0]
    div = (
        -0.5
        * h
        * (
            xp.roll(vx, -1, axis=0)
            - xp.roll(vx, 1, axis=0)
            + xp.roll(vy, -1, axis=1)
            - xp.roll(vy, 1, axis=1)
        )
    )
    p = xp.zeros(vx.shape)
    for _ in range(FLUID_PROJECT_ITERS):
        p = (
            div
            + xp.roll(p, 1, axis=0)
            + xp.roll(p, -1, axis=0)
            + xp.roll(p, 1, axis=1)
            + xp.roll(p, -1, axis=1)
        ) / 4.0
    vx = vx - 0.5 * (xp.roll(p, -1, axis=0) - xp.roll(p, 1, axis=0)) / h
    vy = vy - 0.5 * (xp.roll(p, -1, axis=1) - xp.roll(p, 1, axis=1)) / h
    return vx, vy


def _advect(xp: Any, f: Any, vx: Any, vy: Any) -> Any:
    """Move `f` along the velocity: bilinear interpolation at the back-traced points."""
    rows, cols = f.shape
    cell_ys, cell_xs = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    center_ys = xp.ravel(cell_ys - vy)
    center_xs = xp.ravel(cell_xs - vx)
    top = xp.floor(center_ys).astype(int)
    left = xp.floor(center_xs).astype(int)
    bottom_w = center_ys - top
    right_w = center_xs - left
    top, bottom = xp.mod(top, rows), xp.mod(top + 1, rows)
    left, right = xp.mod(left, cols), xp.mod(left + 1, cols)
    flat = (1 - bottom_w) * ((1 - right_w) * f[top, left] + right_w * f[top, right]) + bottom_w * (
        (1 - right_w) * f[bottom, left] + right_w * f[bottom, right]
    )
    return xp.reshape(flat, (rows, cols))


def fluid_loss(xp: Any, velocity: Any, smoke: Any, target: Any) -> Any:
    """Squared distance of the smoke after a few steps from the target."""
    vx, vy = velocity[0], velocity[1]
    for _ in range(FLUID_STEPS):
        vx, vy = _advect(xp, vx, vx, vy), _advect(xp, vy, vx, vy)
        vx, vy = _project(xp, vx, vy)
        smoke = _advect(xp, smoke, vx, vy)
    return xp.sum((smoke - target) ** 2)
