"""First-order optimizers as `(init_fun, update_fun, get_params)` triples over pytrees, with
JAX's `jax.example_libraries.optimizers` API and update rules.

An optimizer is written for one array (`init(x0) -> state`, `update(i, g, state) -> state`,
`get_params(state) -> x`); the `optimizer` decorator lifts it to pytrees of arrays, keeping
the per-leaf states in an `OptimizerState` pytree (so it passes through `jit`, `fori_loop`
and `scan`). Step sizes are numbers or schedules `i -> step size`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import mjnp
from mjcore.tree_util import register_pytree_node, tree_flatten, tree_map, tree_unflatten

Array = Any
Params = Any
State = Any
Updates = Any
Schedule = Callable[[Any], Any]


class OptimizerState(NamedTuple):
    """Per-leaf optimizer states: `packed_state` (a tuple of flat state lists, the only
    pytree children), `tree_def` of the parameters and `subtree_defs` of each leaf's state
    (aux data)."""

    packed_state: Any
    tree_def: Any
    subtree_defs: Any


register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], *aux),
)


class Optimizer(NamedTuple):
    """`(init_fn, update_fn, params_fn)` over pytrees."""

    init_fn: Callable[[Params], OptimizerState]
    update_fn: Callable[[Any, Updates, OptimizerState], OptimizerState]
    params_fn: Callable[[OptimizerState], Params]


def optimizer(
    opt_maker: Callable[..., tuple[Callable, Callable, Callable]],
) -> Callable[..., Optimizer]:
    """Lift an optimizer written for single arrays to one over pytrees of arrays."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args: Any, **kwargs: Any) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree: Params) -> OptimizerState:
            x0_flat, tree = tree_flatten(x0_tree)
            flat_states = [tree_flatten(init(x0)) for x0 in x0_flat]
            states = tuple(s for s, _ in flat_states)
            subtrees = tuple(t for _, t in flat_states)
            return OptimizerState(states, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i: Any, grad_tree: Updates, opt_state: OptimizerState) -> OptimizerState:
            states_flat, tree, subtrees = opt_state
            grad_flat, tree2 = tree_flatten(grad_tree)
            if tree2 != tree:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not match "
                    f"the parameter tree structure with which it was initialized: parameter "
                    f"tree {tree} and grad tree {tree2}."
                )
            states = [tree_unflatten(t, s) for t, s in zip(subtrees, states_flat, strict=True)]
            new = [tree_flatten(update(i, g, s)) for g, s in zip(grad_flat, states, strict=True)]
            for subtree, (_, subtree2) in zip(subtrees, new, strict=True):
                if subtree2 != subtree:
                    raise TypeError(
                        "optimizer update function produced an output structure that did not "
                        f"match its input structure: input {subtree} and output {subtree2}."
                    )
            return OptimizerState(tuple(s for s, _ in new), tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state: OptimizerState) -> Params:
            states_flat, tree, subtrees = opt_state
            states = [tree_unflatten(t, s) for t, s in zip(subtrees, states_flat, strict=True)]
            return tree_unflatten(tree, [get_params(s) for s in states])

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


# --- optimizers ------------------------------------------------------------------------------


@optimizer
def sgd(step_size: Any) -> tuple[Callable, Callable, Callable]:
    """Stochastic gradient descent: `x -= step_size(i) * g`."""
    step_size = make_schedule(step_size)

    def init(x0: Array) -> State:
        return x0

    def update(i: Any, g: Array, x: State) -> State:
        return x - step_size(i) * g

    def get_params(x: State) -> Array:
        return x

    return init, update, get_params


@optimizer
def momentum(step_size: Any, mass: float) -> tuple[Callable, Callable, Callable]:
    """Heavy-ball momentum: `v = mass * v + g; x -= step_size(i) * v`."""
    step_size = make_schedule(step_size)

    def init(x0: Array) -> State:
        return x0, mjnp.zeros_like(x0)

    def update(i: Any, g: Array, state: State) -> State:
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity

    def get_params(state: State) -> Array:
        return state[0]

    return init, update, get_params


@optimizer
def nesterov(step_size: Any, mass: float) -> tuple[Callable, Callable, Callable]:
    """Nesterov's accelerated gradient: the step uses `mass * v + g` with the updated `v`."""
    step_size = make_schedule(step_size)

    def init(x0: Array) -> State:
        return x0, mjnp.zeros_like(x0)

    def update(i: Any, g: Array, state: State) -> State:
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity

    def get_params(state: State) -> Array:
        return state[0]

    return init, update, get_params


@optimizer
def adagrad(step_size: Any, momentum: float = 0.9) -> tuple[Callable, Callable, Callable]:
    """Adagrad (Duchi et al.) with momentum on the scaled gradient."""
    step_size = make_schedule(step_size)

    def init(x0: Array) -> State:
        return x0, mjnp.zeros_like(x0), mjnp.zeros_like(x0)

    def update(i: Any, g: Array, state: State) -> State:
        x, g_sq, m = state
        g_sq = g_sq + mjnp.square(g)
        g_sq_inv_sqrt = mjnp.where(g_sq > 0, 1.0 / mjnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m

    def get_params(state: State) -> Array:
        return state[0]

    return init, update, get_params


@optimizer
def rmsprop(
    step_size: Any, gamma: float = 0.9, eps: float = 1e-8
) -> tuple[Callable, Callable, Callable]:
    """RMSProp: steps scaled by a running root mean square of the gradients."""
    step_size = make_schedule(step_size)

    def init(x0: Array) -> State:
        return x0, mjnp.zeros_like(x0)

    def update(i: Any, g: Array, state: State) -> State:
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + mjnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / mjnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    def get_params(state: State) -> Array:
        return state[0]

    return init, update, get_params


@optimizer
def rmsprop_momentum(
    step_size: Any, gamma: float = 0.9, eps: float = 1e-8, momentum: float = 0.9
) -> tuple[Callable, Callable, Callable]:
    """RMSProp with momentum on the scaled steps."""
    step_size = make_schedule(step_size)

    def init(x0: Array) -> State:
        return x0, mjnp.zeros_like(x0), mjnp.zeros_like(x0)

    def update(i: Any, g: Array, state: State) -> State:
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + mjnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / mjnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    def get_params(state: State) -> Array:
        return state[0]

    return init, update, get_params


@optimizer
def adam(
    step_size: Any, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
) -> tuple[Callable, Callable, Callable]:
    """Adam (Kingma and Ba) with bias-corrected moment estimates."""
    step_size = make_schedule(step_size)

    def init(x0: Array) -> State:
        return x0, mjnp.zeros_like(x0), mjnp.zeros_like(x0)

    def update(i: Any, g: Array, state: State) -> State:
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * mjnp.square(g) + b2 * v
        m_hat = m / (1 - mjnp.asarray(b1, m.dtype) ** (i + 1))
        v_hat = v / (1 - mjnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * m_hat / (mjnp.sqrt(v_hat) + eps), m, v

    def get_params(state: State) -> Array:
        return state[0]

    return init, update, get_params


@optimizer
def adamax(
    step_size: Any, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
) -> tuple[Callable, Callable, Callable]:
    """AdaMax, Adam's infinity-norm variant."""
    step_size = make_schedule(step_size)

    def init(x0: Array) -> State:
        return x0, mjnp.zeros_like(x0), mjnp.zeros_like(x0)

    def update(i: Any, g: Array, state: State) -> State:
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = mjnp.maximum(b2 * u, mjnp.abs(g))
        return x - (step_size(i) / (1 - b1 ** (i + 1))) * m / (u + eps), m, u

    def get_params(state: State) -> Array:
        return state[0]

    return init, update, get_params


@optimizer
def sm3(step_size: Any, momentum: float = 0.9) -> tuple[Callable, Callable, Callable]:
    """SM3 (Anil et al.): memory-efficient adaptive steps, one accumulator per axis slice."""
    step_size = make_schedule(step_size)

    def without(seq: Any, j: int) -> tuple[int, ...]:
        return tuple(k for k in seq if k != j)

    def init(x0: Array) -> State:
        x_shape = mjnp.shape(x0)
        x0 = mjnp.atleast_1d(x0)
        vs = [mjnp.zeros(size, dtype=x0.dtype) for size in x0.shape]
        return x0, mjnp.zeros_like(x0), vs, x_shape

    def update(i: Any, g: Array, state: State) -> State:
        x, m, vs, x_shape = state
        # Each axis accumulator, broadcast along the other axes of g.
        vs = [mjnp.expand_dims(v, without(range(g.ndim), j)) for j, v in enumerate(vs)]
        accum = functools.reduce(mjnp.minimum, vs) + mjnp.square(g)
        accum_inv_sqrt = mjnp.where(accum > 0, 1.0 / mjnp.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        vs = [accum.max(without(range(x.ndim), j)) for j in range(x.ndim)]
        return x, m, vs, x_shape

    def get_params(state: State) -> Array:
        x, _, _, x_shape = state
        return x.reshape(x_shape)

    return init, update, get_params


# --- schedules -------------------------------------------------------------------------------


def constant(step_size: Any) -> Schedule:
    """The schedule `i -> step_size`."""

    def schedule(i: Any) -> Any:
        return step_size

    return schedule


def exponential_decay(step_size: Any, decay_steps: Any, decay_rate: Any) -> Schedule:
    """`i -> step_size * decay_rate ** (i / decay_steps)`."""

    def schedule(i: Any) -> Any:
        return step_size * decay_rate ** (i / decay_steps)

    return schedule


def inverse_time_decay(
    step_size: Any, decay_steps: Any, decay_rate: Any, staircase: bool = False
) -> Schedule:
    """`i -> step_size / (1 + decay_rate * i / decay_steps)` (floored ratio if `staircase`)."""
    if staircase:

        def schedule(i: Any) -> Any:
            return step_size / (1 + decay_rate * mjnp.floor(i / decay_steps))

    else:

        def schedule(i: Any) -> Any:
            return step_size / (1 + decay_rate * i / decay_steps)

    return schedule


def polynomial_decay(
    step_size: Any, decay_steps: Any, final_step_size: Any, power: float = 1.0
) -> Schedule:
    """From `step_size` to `final_step_size` over `decay_steps` steps, as `(1 - t) ** power`."""

    def schedule(step_num: Any) -> Any:
        step_num = mjnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """`values[k]` for steps past `k` of the `boundaries` (one fewer than values)."""
    boundaries = mjnp.array(boundaries)
    values = mjnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("piecewise_constant: boundaries and values must be sequences")
    if boundaries.shape[0] != values.shape[0] - 1:
        raise ValueError(
            "piecewise_constant: boundaries length must be one shorter than values length, "
            f"got {boundaries.shape[0]} and {values.shape[0]}"
        )

    def schedule(i: Any) -> Any:
        return values[mjnp.sum(i > boundaries)]

    return schedule


def make_schedule(scalar_or_schedule: Any) -> Schedule:
    """A schedule from a schedule (returned as is) or a scalar (a constant schedule)."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if mjnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(
        f"make_schedule: expected a scalar or a callable schedule, got "
        f"{type(scalar_or_schedule).__name__} of shape {mjnp.shape(scalar_or_schedule)}"
    )


# --- utilities -------------------------------------------------------------------------------


def l2_norm(tree: Any) -> Array:
    """The l2 norm of all the leaves of `tree`, as one vector."""
    leaves, _ = tree_flatten(tree)
    return mjnp.sqrt(sum(mjnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree: Any, max_norm: Any) -> Any:
    """`grad_tree` scaled down so that its `l2_norm` is at most `max_norm`."""
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: mjnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
    """Marks where one leaf's optimizer state sits in an unpacked state tree (a pytree leaf)."""

    def __init__(self, subtree: Any) -> None:
        self.subtree = subtree

    def __iter__(self) -> Any:
        # Iterable, so that pickling libraries can walk into the state.
        return iter((self.subtree,))


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """An `OptimizerState` as a pytree of `JoinPoint`s shaped like the parameters, each
    holding that parameter's state (for saving, e.g. with pickle)."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = [tree_unflatten(t, s) for t, s in zip(subtree_defs, states_flat, strict=True)]
    return tree_unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """The inverse of `unpack_optimizer_state`."""
    sentinels, tree_def = tree_flatten(marked_pytree)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise TypeError(
            "pack_optimizer_state: expected a pytree of JoinPoints, as unpack_optimizer_state "
            "returns"
        )
    flat = [tree_flatten(s.subtree) for s in sentinels]
    return OptimizerState(tuple(s for s, _ in flat), tree_def, tuple(t for _, t in flat))


__all__ = [
    "JoinPoint",
    "Optimizer",
    "OptimizerState",
    "adagrad",
    "adam",
    "adamax",
    "clip_grads",
    "constant",
    "exponential_decay",
    "inverse_time_decay",
    "l2_norm",
    "make_schedule",
    "momentum",
    "nesterov",
    "optimizer",
    "pack_optimizer_state",
    "piecewise_constant",
    "polynomial_decay",
    "rmsprop",
    "rmsprop_momentum",
    "sgd",
    "sm3",
    "unpack_optimizer_state",
]
