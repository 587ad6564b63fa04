"""Debugging from inside transformed and compiled code, as JAX's `jax.debug`: `callback` and
`print` run on the host with the runtime values (see `mjcore.callback`)."""

from __future__ import annotations

import builtins
import dataclasses
from collections.abc import Callable
from typing import Any

from mjcore.callback import debug_callback

__all__ = ["callback", "print"]


def callback(
    callback: Callable[..., Any], *args: Any, ordered: bool = False, **kwargs: Any
) -> None:
    """Call `callback(*args, **kwargs)` on host NumPy values for its side effect, as JAX's
    `jax.debug.callback`.

    Meaning::

        def callback(callback, *args, **kwargs):
            callback(*numpy_values(args), **numpy_values(kwargs))

    The call happens when the values are computed: at once in eager code, each time a
    compiled function runs under `jit` (never dropped, though it has no results). Under `jvp`
    and `grad` it sees only the primal values, once (in the forward pass); under `vmap` it is
    called once per example.

    NB: `ordered=True` is accepted but gives no extra guarantee: callbacks of one compiled
    program may run in any order that respects data dependencies (JAX threads a token).
    """
    del ordered
    debug_callback(callback, *args, **kwargs)


def print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:  # noqa: A001
    """Print `fmt.format(*args, **kwargs)` with the runtime values of arrays, as JAX's
    `jax.debug.print` (NumPy arrays are what `format` sees, so `{x}` shows `[0. 1. 2.]`).

    When it prints is as for `callback`.
    """
    callback(_Printer(fmt), *args, ordered=ordered, **kwargs)


@dataclasses.dataclass(frozen=True)
class _Printer:
    """The callback of `print`; equal for equal formats, so that a retraced program with the
    same prints reuses its compiled executable."""

    fmt: str

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        builtins.print(self.fmt.format(*args, **kwargs))
