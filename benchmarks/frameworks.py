"""Each contender's namespace and transformations behind one record, so that a workload is
written once for mjnp and JAX (and NumPy/autograd where they apply).

When an mjcore transformation lands (`mjcore.jit`, `mjcore.grad`, ...), the workloads that need
it start measuring mjnp with no change here: `load` looks the feature up by name.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from benchmarks.harness import Unavailable

# Transformations a workload may need, looked up on `mjcore` and then `mjcore.lax` (where JAX
# keeps `fori_loop` and `scan`).
FEATURES = ("jit", "grad", "value_and_grad", "vmap", "fori_loop", "scan")


class Framework(NamedTuple):
    """A contender's NumPy-like namespace `xp` and its transformations (None when missing)."""

    name: str
    xp: Any
    put: Callable[[np.ndarray], Any]  # host array -> an array of this framework, on its device
    block: Callable[[Any], Any]  # wait for every array in a pytree, return it
    tree_map: Callable[..., Any]
    jit: Callable[..., Any] | None = None
    grad: Callable[..., Any] | None = None
    value_and_grad: Callable[..., Any] | None = None
    vmap: Callable[..., Any] | None = None
    fori_loop: Callable[..., Any] | None = None
    scan: Callable[..., Any] | None = None


def load(name: str, needs: tuple[str, ...] = ()) -> Framework:
    """The framework `name` ("mjnp", "jax", "jax64" (x64 on), "numpy", "autograd"), or
    `Unavailable` when it does not import or lacks one of the transformations in `needs`."""
    fw = _LOADERS[name]()
    for feature in needs:
        if getattr(fw, feature) is None:
            owner = "mjcore" if name == "mjnp" else name
            raise Unavailable(f"needs {owner}.{feature}")
    return fw


def is_installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def mjnp_status() -> str | None:
    """Why `import mjnp` cannot be benchmarked yet, or None when it can."""
    spec = importlib.util.find_spec("mjnp")
    if spec is None:
        return "no module mjnp"
    if spec.origin is None:
        # A directory without __init__.py imports as an empty namespace package.
        return "mjnp has no __init__.py yet"
    return None


@functools.cache
def _mjnp() -> Framework:
    status = mjnp_status()
    if status is not None:
        raise Unavailable(status)
    try:
        mjnp = importlib.import_module("mjnp")
    except Exception as err:
        raise Unavailable(f"mjnp does not import: {type(err).__name__}: {err}") from err
    import mjcore

    features = {f: getattr(mjcore, f, None) or getattr(mjcore.lax, f, None) for f in FEATURES}
    leaves = mjcore.tree_util.tree_leaves

    def block(tree: Any) -> Any:
        for leaf in leaves(tree):
            leaf.block_until_ready()
        return tree

    return Framework(
        "mjnp",
        mjnp,
        mjcore.device_put,
        getattr(mjcore, "block_until_ready", block),
        mjcore.tree_util.tree_map,
        **features,
    )


@functools.cache
def _jax_float32() -> Framework:
    import jax

    # Compare like with like: mjcore runs on the CPU, and these workloads are float32.
    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_enable_x64", False)
    return _jax_framework()


def _jax() -> Framework:
    fw = _jax_float32()
    if fw.xp.zeros(()).dtype.itemsize == 8:
        # `load("jax64")` turned x64 on for the rest of the process: float32 workloads must run
        # before it (the registry puts the float64 workloads last).
        raise Unavailable("JAX's x64 mode is on: run float32 workloads before float64 ones")
    return fw


@functools.cache
def _jax64() -> Framework:
    """JAX with x64 on, for the float64 workloads (named "jax" in their tables).

    x64 is a process-wide flag of JAX's, so loading this turns it on for the rest of the
    run; `load("jax")` refuses from then on rather than measure float64 as float32.
    """
    import jax

    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_enable_x64", True)
    return _jax_framework()


def _jax_framework() -> Framework:
    import jax
    import jax.numpy as jnp

    return Framework(
        "jax",
        jnp,
        jax.device_put,
        jax.block_until_ready,
        jax.tree_util.tree_map,
        jit=jax.jit,
        grad=jax.grad,
        value_and_grad=jax.value_and_grad,
        vmap=jax.vmap,
        fori_loop=jax.lax.fori_loop,
        scan=jax.lax.scan,
    )


def _nested_map(f: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    """tree_map over nested lists and tuples, enough for the parameter lists used here."""
    if isinstance(tree, list | tuple):
        return type(tree)(_nested_map(f, *xs) for xs in zip(tree, *rest, strict=True))
    return f(tree, *rest)


def _identity(tree: Any) -> Any:
    return tree


@functools.cache
def _numpy() -> Framework:
    return Framework("numpy", np, np.asarray, _identity, _nested_map)


@functools.cache
def _autograd() -> Framework:
    if not is_installed("autograd"):
        raise Unavailable("autograd is not installed")
    autograd = importlib.import_module("autograd")
    anp = importlib.import_module("autograd.numpy")
    return Framework(
        "autograd",
        anp,
        np.asarray,
        _identity,
        _nested_map,
        grad=autograd.grad,
        value_and_grad=autograd.value_and_grad,
    )


_LOADERS: dict[str, Callable[[], Framework]] = {
    "mjnp": _mjnp,
    "jax": _jax,
    "jax64": _jax64,
    "numpy": _numpy,
    "autograd": _autograd,
}
