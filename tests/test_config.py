"""`mjcore.config`: JAX's flag object for the flags that mean something here."""

import pytest

import mjcore
import mjnp as np


def test_x64_true_is_accepted_and_false_is_refused() -> None:
    mjcore.config.update("jax_enable_x64", True)
    assert mjcore.config.jax_enable_x64 is True
    with pytest.raises(ValueError, match="jax_enable_x64=False"):
        mjcore.config.update("jax_enable_x64", False)
    assert mjcore.config.read("jax_enable_x64") is True


def test_disable_jit_flag_runs_python_each_call() -> None:
    calls = []

    @mjcore.jit
    def f(x):
        calls.append(1)
        return x + 1

    f(np.ones(3))
    f(np.ones(3))
    assert len(calls) == 1
    mjcore.config.update("jax_disable_jit", True)
    try:
        f(np.ones(3))
        f(np.ones(3))
    finally:
        mjcore.config.update("jax_disable_jit", False)
    assert len(calls) == 3
    assert mjcore.config.jax_disable_jit is False


def test_unknown_flag_and_bad_values() -> None:
    with pytest.raises(AttributeError, match="unknown flag 'jax_nope'"):
        mjcore.config.update("jax_nope", 1)
    with pytest.raises(ValueError, match="must be a bool"):
        mjcore.config.update("jax_debug_nans", "maybe")
    with pytest.raises(AttributeError, match="config.update"):
        mjcore.config.jax_debug_nans = True
