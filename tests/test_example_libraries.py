"""`mjcore.example_libraries` (`optimizers`, `stax`) against JAX's `jax.example_libraries`
(x64): the same parameters from the same keys, the same outputs, gradients and optimizer
trajectories, eagerly, under jit and inside fori_loop."""

import pickle

import jax
import jax.example_libraries.optimizers as jopt
import jax.example_libraries.stax as jstax
import jax.numpy as jnp
import numpy as np
import pytest

import mjcore
import mjnp
from mjcore import random
from mjcore.example_libraries import optimizers as opt
from mjcore.example_libraries import stax

jax.config.update("jax_enable_x64", True)

RNG = np.random.default_rng(0)


def _close(got, want, rtol=1e-12, atol=1e-14):
    got_leaves, want_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


# --- optimizers ------------------------------------------------------------------------------

PARAMS = {"w": RNG.standard_normal((3, 2)), "b": [RNG.standard_normal(2), np.array(0.5)]}


def _loss(np_, p):
    return np_.sum(np_.tanh(p["w"]) ** 2) + np_.sum(np_.sin(p["b"][0]) * p["b"][1])


OPTIMIZERS = [
    ("sgd", (0.1,), {}),
    ("sgd-schedule", (), {"step_size": "exponential_decay"}),
    ("momentum", (0.1, 0.9), {}),
    ("nesterov", (0.05, 0.8), {}),
    ("adagrad", (0.1,), {}),
    ("adagrad-momentum", (0.1, 0.5), {}),
    ("rmsprop", (0.01,), {"gamma": 0.8}),
    ("rmsprop_momentum", (0.01,), {}),
    ("adam", (0.01,), {}),
    ("adam-schedule", (), {"step_size": "piecewise_constant"}),
    ("adamax", (0.02,), {"b1": 0.8}),
    ("sm3", (0.1,), {}),
]

SCHEDULES = {
    "exponential_decay": (0.1, 3, 0.5),
    "piecewise_constant": ([2, 4], [0.1, 0.05, 0.01]),
}


def _make(module, name, args, kwargs):
    kwargs = dict(kwargs)
    if isinstance(kwargs.get("step_size"), str):
        sched = kwargs["step_size"]
        kwargs["step_size"] = getattr(module, sched)(*SCHEDULES[sched])
    return getattr(module, name.split("-")[0])(*args, **kwargs)


@pytest.mark.parametrize(("name", "args", "kwargs"), OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_optimizer_trajectory_matches_jax(name, args, kwargs):
    init, update, get_params = _make(opt, name, args, kwargs)
    jinit, jupdate, jget_params = _make(jopt, name, args, kwargs)
    state, jstate = init(PARAMS), jinit(PARAMS)
    step = mjcore.jit(
        lambda i, s: update(i, mjcore.grad(lambda p: _loss(mjnp, p))(get_params(s)), s)
    )
    for i in range(6):
        # Eager and jitted steps alternate. Not for sm3: its state holds the parameter's shape
        # as ints, which jit traces, so its get_params cannot run under jit (JAX's neither).
        if i % 2 and name != "sm3":
            state = step(i, state)
        else:
            state = update(i, mjcore.grad(lambda p: _loss(mjnp, p))(get_params(state)), state)
        jstate = jupdate(i, jax.grad(lambda p: _loss(jnp, p))(jget_params(jstate)), jstate)
    _close(get_params(state), jget_params(jstate))
    assert isinstance(state, opt.OptimizerState)


@pytest.mark.parametrize("name", ["adam", "momentum", "rmsprop"])
def test_optimizer_in_fori_loop_matches_jax(name):
    # The optimizer state is the carry: a pytree node with aux data and one child.
    init, update, get_params = getattr(opt, name)(0.05, *(0.9,) * (name == "momentum"))
    jinit, jupdate, jget_params = getattr(jopt, name)(0.05, *(0.9,) * (name == "momentum"))

    def body(i, s):
        return update(i, mjcore.grad(lambda p: _loss(mjnp, p))(get_params(s)), s)

    def jbody(i, s):
        return jupdate(i, jax.grad(lambda p: _loss(jnp, p))(jget_params(s)), s)

    got = mjcore.lax.fori_loop(0, 5, body, init(PARAMS))
    want = jax.lax.fori_loop(0, 5, jbody, jinit(PARAMS))
    _close(get_params(got), jget_params(want))


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("constant", (0.3,)),
        ("exponential_decay", (0.1, 3, 0.5)),
        ("inverse_time_decay", (0.1, 3, 0.5)),
        ("inverse_time_decay", (0.1, 3, 0.5, True)),
        ("polynomial_decay", (0.1, 5, 0.01, 2.0)),
        ("piecewise_constant", ([2, 4], [0.1, 0.05, 0.01])),
    ],
)
def test_schedules_match_jax(name, args):
    ours, theirs = getattr(opt, name)(*args), getattr(jopt, name)(*args)
    for i in range(8):
        np.testing.assert_allclose(ours(i), theirs(i), rtol=1e-14)
    np.testing.assert_allclose(mjcore.jit(ours)(3), theirs(3), rtol=1e-14)


def test_l2_norm_and_clip_grads_match_jax():
    np.testing.assert_allclose(opt.l2_norm(PARAMS), jopt.l2_norm(PARAMS), rtol=1e-14)
    for max_norm in (0.5, 100.0):
        _close(opt.clip_grads(PARAMS, max_norm), jopt.clip_grads(PARAMS, max_norm))


def test_pack_unpack_round_trip_through_pickle():
    init, update, get_params = opt.adam(0.1)
    state = update(0, PARAMS, init(PARAMS))
    unpacked = opt.unpack_optimizer_state(state)
    restored = opt.pack_optimizer_state(pickle.loads(pickle.dumps(unpacked)))
    _close(get_params(restored), get_params(state))
    _close(get_params(update(1, PARAMS, restored)), get_params(update(1, PARAMS, state)))
    with pytest.raises(TypeError, match="pytree of JoinPoints"):
        opt.pack_optimizer_state([1.0])


def test_optimizer_errors():
    init, update, _ = opt.sgd(0.1)
    with pytest.raises(TypeError, match="did not match the parameter tree"):
        update(0, [1.0], init(PARAMS))
    with pytest.raises(TypeError, match="make_schedule"):
        opt.sgd(np.ones(3))
    with pytest.raises(ValueError, match="one shorter"):
        opt.piecewise_constant([1, 2], [0.1])


# --- stax ------------------------------------------------------------------------------------


def _nets(m):
    """The same networks built from `m` (ours or JAX's stax), with their input shapes."""
    return {
        "mlp": (
            m.serial(m.Dense(8), m.Relu, m.Dense(4), m.Tanh, m.Dense(3), m.LogSoftmax),
            (5, 6),
        ),
        "conv": (
            m.serial(
                m.Conv(4, (3, 3), padding="SAME"),
                m.BatchNorm(),
                m.Relu,
                m.MaxPool((2, 2), (2, 2)),
                m.Conv(3, (2, 2), strides=(1, 2)),
                m.Elu,
                m.AvgPool((2, 1)),
                m.Flatten,
                m.Dense(2),
                m.Softmax,
            ),
            (2, 8, 9, 3),
        ),
        "conv-transpose": (
            m.serial(
                m.ConvTranspose(2, (3, 3), strides=(2, 2), padding="SAME"),
                m.Sigmoid,
                m.SumPool((2, 2), padding="SAME"),
                m.Softplus,
            ),
            (2, 4, 5, 3),
        ),
        "conv1d-transpose": (
            m.serial(m.Conv1DTranspose(3, (2,), strides=(2,)), m.Gelu, m.LeakyRelu),
            (2, 5, 2),
        ),
        "residual": (
            m.serial(
                m.FanOut(2),
                m.parallel(m.serial(m.Dense(6), m.Selu), m.Identity),
                m.FanInSum,
                m.FanOut(3),
                m.parallel(m.Dense(2), m.Dense(3), m.Exp),
                m.FanInConcat(),
                m.BatchNorm(axis=0, center=False),
            ),
            (4, 6),
        ),
        "shape-dependent": (
            m.serial(m.shape_dependent(lambda s: m.Dense(s[-1] * 2)), m.Tanh),
            (3, 4),
        ),
    }


NETS = list(_nets(stax))


@pytest.mark.parametrize("name", NETS)
def test_stax_network_matches_jax(name):
    (init, apply), in_shape = _nets(stax)[name]
    (jinit, japply), _ = _nets(jstax)[name]
    out_shape, params = init(random.PRNGKey(7), in_shape)
    jout_shape, jparams = jinit(jax.random.PRNGKey(7), in_shape)
    assert tuple(out_shape) == tuple(jout_shape)
    _close(params, jparams, rtol=0, atol=0)  # JAX's exact weights from the same key
    x = RNG.standard_normal(in_shape)
    # JAX's output and gradient in one jax.jit: one compile, where eagerly every layer's
    # operations (and their derivatives) compile on their own.
    jy, want = jax.jit(
        lambda p, x: (japply(p, x), jax.grad(lambda p: jnp.sum(japply(p, x) ** 2))(p))
    )(jparams, x)
    y = apply(params, x)
    _close(y, jy, rtol=1e-11, atol=1e-13)
    assert y.shape == tuple(out_shape)
    _close(mjcore.jit(apply)(params, x), y, rtol=1e-12, atol=1e-14)
    got = mjcore.grad(lambda p: mjnp.sum(apply(p, x) ** 2))(params)
    _close(got, want, rtol=1e-9, atol=1e-12)


def test_stax_vmap_over_examples_matches_jax():
    (init, apply), _ = _nets(stax)["mlp"]
    (jinit, japply), _ = _nets(jstax)["mlp"]
    _, params = init(random.PRNGKey(1), (-1, 6))
    _, jparams = jinit(jax.random.PRNGKey(1), (-1, 6))
    xs = RNG.standard_normal((4, 6))
    _close(mjcore.vmap(apply, (None, 0))(params, xs), jax.vmap(japply, (None, 0))(jparams, xs))


def test_dropout_matches_jax():
    init, apply = stax.serial(stax.Dense(5), stax.Dropout(0.7), stax.Relu)
    jinit, japply = jstax.serial(jstax.Dense(5), jstax.Dropout(0.7), jstax.Relu)
    _, params = init(random.PRNGKey(0), (3, 4))
    _, jparams = jinit(jax.random.PRNGKey(0), (3, 4))
    x = RNG.standard_normal((3, 4))
    got = apply(params, x, rng=random.PRNGKey(5))
    _close(got, jax.jit(japply)(jparams, x, rng=jax.random.PRNGKey(5)))
    eval_apply = stax.Dropout(0.7, mode="test")[1]
    _close(eval_apply((), x, rng=random.PRNGKey(5)), x)
    with pytest.raises(ValueError, match="requires apply_fun to be called with a PRNG key"):
        stax.Dropout(0.5)[1]((), x)
