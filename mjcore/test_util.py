"""Numerical derivative checks for users and tests, like `jax.test_util.check_grads`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mjcore.api import jvp, vjp
from mjcore.tree_util import tree_flatten, tree_map, tree_unflatten

_DEFAULT_EPS = {np.dtype("float32"): 2**-7, np.dtype("float64"): 2**-14}
_DEFAULT_TOL = {np.dtype("float32"): 2e-2, np.dtype("float64"): 1e-5}


def _dtype_of(tree: Any) -> np.dtype:
    leaves, _ = tree_flatten(tree)
    dts = [np.asarray(x).dtype for x in leaves]
    return np.dtype("float32") if any(d == np.float32 for d in dts) else np.dtype("float64")


def _random_like(rng: np.random.Generator, tree: Any) -> Any:
    def sample(x: Any) -> np.ndarray:
        dtype = np.asarray(x).dtype
        out = rng.standard_normal(np.shape(x))
        if dtype.kind == "c":
            out = out + 1j * rng.standard_normal(np.shape(x))
        return out.astype(dtype)

    return tree_map(sample, tree)


def _add(tree: Any, other: Any, scale: float) -> Any:
    return tree_map(lambda a, b: np.asarray(a) + scale * np.asarray(b), tree, other)


def _inner(a: Any, b: Any) -> float:
    """Re(sum(a * b)): the pairing of cotangents with tangents (no conjugation, as in JAX)."""
    la, _ = tree_flatten(a)
    lb, _ = tree_flatten(b)
    total = sum(
        np.sum(np.asarray(x, np.complex128) * np.asarray(y, np.complex128))
        for x, y in zip(la, lb, strict=True)
    )
    return float(np.real(total))


def _assert_close(name: str, actual: Any, expected: Any, tol: float) -> None:
    la, _ = tree_flatten(actual)
    lb, _ = tree_flatten(expected)
    for x, y in zip(la, lb, strict=True):
        x, y = np.asarray(x, np.complex128), np.asarray(y, np.complex128)
        if not np.allclose(x, y, rtol=tol, atol=tol):
            raise AssertionError(
                f"check_grads: {name} mismatch (tolerance {tol}):\nactual   {x}\nexpected {y}"
            )


def check_jvp(
    f: Callable[..., Any], args: Sequence[Any], eps: float, tol: float, rng: np.random.Generator
) -> None:
    """`jvp` against central finite differences along a random direction."""
    tangents = _random_like(rng, tuple(args))
    _, out_dot = jvp(f, tuple(args), tangents)
    plus = f(*_add(tuple(args), tangents, eps))
    minus = f(*_add(tuple(args), tangents, -eps))
    numerical = tree_map(lambda p, m: (np.asarray(p) - np.asarray(m)) / (2 * eps), plus, minus)
    _assert_close("jvp vs finite differences", out_dot, numerical, tol)


def check_vjp(
    f: Callable[..., Any], args: Sequence[Any], tol: float, rng: np.random.Generator
) -> None:
    """`vjp` against `jvp` through the identity <ct, J t> == <J^T ct, t>."""
    tangents = _random_like(rng, tuple(args))
    out, out_dot = jvp(f, tuple(args), tangents)
    ct = _random_like(rng, out)
    _, f_vjp = vjp(f, *args)
    cts_in = f_vjp(tree_unflatten(tree_flatten(out)[1], tree_flatten(ct)[0]))
    lhs = _inner(ct, out_dot)
    rhs = _inner(cts_in, tangents)
    if not np.isclose(lhs, rhs, rtol=tol, atol=tol):
        raise AssertionError(f"check_grads: vjp/jvp inner products differ: {lhs} vs {rhs}")


def check_grads(
    f: Callable[..., Any],
    args: Sequence[Any],
    order: int,
    modes: Sequence[str] = ("fwd", "rev"),
    atol: float | None = None,
    rtol: float | None = None,
    eps: float | None = None,
    seed: int = 0,
) -> None:
    """Check derivatives of `f` at `args` up to `order`, in forward and/or reverse mode.

    Forward mode is compared with central finite differences; reverse mode with forward mode
    through the inner-product identity. Higher orders differentiate the derivative maps.

    Raises:
      AssertionError: naming the check that failed and the values.
    """
    dtype = _dtype_of(args)
    eps = eps or _DEFAULT_EPS.get(dtype, 2**-14)
    tol = max(atol or 0, rtol or 0) or _DEFAULT_TOL.get(dtype, 1e-5)
    rng = np.random.default_rng(seed)
    for mode in modes:
        if mode not in ("fwd", "rev"):
            raise ValueError(f"check_grads: unknown mode {mode!r}; use 'fwd' and/or 'rev'")

    def check(fun: Callable[..., Any], level: int) -> None:
        if "fwd" in modes:
            check_jvp(fun, args, eps, tol, rng)
            if level > 1:
                t = _random_like(rng, tuple(args))
                check(lambda *xs: jvp(fun, xs, t)[1], level - 1)
        if "rev" in modes:
            check_vjp(fun, args, tol, rng)
            if level > 1:
                out = fun(*args)
                ct = _random_like(rng, out)
                check(lambda *xs: vjp(fun, *xs)[1](ct), level - 1)

    check(f, order)
