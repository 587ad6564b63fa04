"""The record behind every row of the primitive table (see tests/test_primitives.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Shape = tuple[int, ...]


@dataclass(frozen=True)
class PrimCase:
    """One primitive applied at one signature.

    Attributes:
      name: readable id, e.g. "sin".
      fun: the mjcore function under test, taking arrays (static params closed over).
      numpy_fun: the NumPy oracle with the same signature.
      shapes: one shape per array argument.
      dtypes: dtype names to test; each applies to all arguments unless `arg_dtypes` is set.
      domain: (low, high) for uniform float inputs, or a function (rng, shape, dtype) -> ndarray.
      diff_argnums: argument positions that are differentiable (checked by finite differences).
      batch_argnums: positions vmap may batch (defaults to all).
      linear: the function is linear in all arguments (transpose identity applies).
      rtol: relative tolerance override for value checks.
      smooth: second-order derivatives are checked.
    """

    name: str
    fun: Callable[..., Any]
    numpy_fun: Callable[..., Any]
    shapes: tuple[Shape, ...]
    dtypes: tuple[str, ...] = ("float32", "float64")
    domain: Any = (-2.0, 2.0)
    diff_argnums: tuple[int, ...] | None = None
    batch_argnums: tuple[int, ...] | None = None
    linear: bool = False
    rtol: float | None = None
    smooth: bool = True
    arg_dtypes: tuple[str | None, ...] | None = None  # None entries take the case dtype
    tags: tuple[str, ...] = field(default_factory=tuple)

    def make_args(self, rng: np.random.Generator, dtype: str) -> list[np.ndarray]:
        dts = [d or dtype for d in (self.arg_dtypes or (None,) * len(self.shapes))]
        return [
            sample(rng, shape, np.dtype(dt), self.domain)
            for shape, dt in zip(self.shapes, dts, strict=True)
        ]

    @property
    def differentiable_argnums(self) -> tuple[int, ...]:
        if self.diff_argnums is not None:
            return self.diff_argnums
        return tuple(range(len(self.shapes)))


def sample(rng: np.random.Generator, shape: Shape, dtype: np.dtype, domain: Any) -> np.ndarray:
    """Random inputs of a dtype inside a domain."""
    if callable(domain):
        return np.asarray(domain(rng, shape, dtype), dtype)
    low, high = domain
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        lo = max(int(low), np.iinfo(dtype).min)
        hi = min(int(high), np.iinfo(dtype).max)
        return rng.integers(lo, hi + 1, size=shape).astype(dtype)
    if dtype.kind == "c":
        real = rng.uniform(low, high, size=shape)
        imag = rng.uniform(low, high, size=shape)
        return (real + 1j * imag).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


# Tolerances by dtype, in one place.
RTOL = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-12, "complex64": 1e-5, "complex128": 1e-12}
ATOL = {"float16": 1e-2, "float32": 1e-6, "float64": 1e-12, "complex64": 1e-6, "complex128": 1e-12}


def tolerance(dtype: np.dtype, rtol: float | None = None) -> dict[str, float]:
    name = np.dtype(dtype).name
    return {"rtol": rtol or RTOL.get(name, 0), "atol": ATOL.get(name, 0)}
