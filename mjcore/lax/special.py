"""Special functions (Autodidax Part 1's elementwise primitives, grown to `erf_inv`). Lowered to
`chlo.*` ops, which XLA expands with the same polynomial approximations JAX uses, so results
match JAX's bit for bit."""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore.core import Primitive, get_aval
from mjcore.lax.arithmetic import mul
from mjcore.lax.base import full
from mjcore.lax.families import elementwise
from mjcore.lax.transcendental import exp

ArrayLike = Any


# --- erf_inv --------------------------------------------------------------------------------

erf_inv_p = Primitive("erf_inv")


def erf_inv(x: ArrayLike) -> Any:
    """Elementwise inverse error function on [-1, 1] (`scipy.special.erfinv`)."""
    return erf_inv_p.bind1(x)


elementwise(erf_inv_p, "chlo.erf_inv", "f")


@erf_inv_p.def_jvp
def _erf_inv_jvp(primals, tangents):
    # d/dx erfinv(x) = sqrt(pi) / 2 * exp(erfinv(x) ** 2)
    (x,), (x_dot,) = primals, tangents
    y = erf_inv(x)
    scale = full((), np.sqrt(np.pi) / 2, get_aval(y).dtype)
    return y, mul(x_dot, mul(scale, exp(mul(y, y))))


__all__ = ["erf_inv"]
