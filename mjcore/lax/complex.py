"""Complex-number primitives: real, imag, conj and complex. All are linear (over the reals).

Transposes follow JAX: cotangents pair with tangents through `Re(sum(ct * t))`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore.ad import is_undefined_primal, linear_jvp, linear_transpose_rule
from mjcore.backend.lowering import LoweringContext
from mjcore.core import Primitive
from mjcore.lax import host
from mjcore.lax.arithmetic import neg
from mjcore.lax.base import unbroadcast, zeros_like
from mjcore.lax.families import elementwise

ArrayLike = Any


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"f{dtype.itemsize // 2}")


def _complex_dtype(dtype: np.dtype) -> np.dtype:
    if dtype.itemsize < 4:
        raise TypeError(
            f"complex needs float32 or float64 parts, got {dtype.name}; there is no complex "
            "type with smaller parts."
        )
    return np.dtype(f"c{dtype.itemsize * 2}")


# --- real -----------------------------------------------------------------------------------

real_p = Primitive("real")


def real(x: ArrayLike) -> Any:
    """Elementwise real part of a complex array, as the matching float dtype."""
    return real_p.bind1(x)


elementwise(real_p, "stablehlo.real", "c", out_dtype=_real_dtype)
real_p.def_host(lambda x: x.real)  # a view
linear_jvp(real_p)
linear_transpose_rule(real_p, lambda ct, aval: complex(ct, zeros_like(ct)))


# --- imag -----------------------------------------------------------------------------------

imag_p = Primitive("imag")


def imag(x: ArrayLike) -> Any:
    """Elementwise imaginary part of a complex array, as the matching float dtype."""
    return imag_p.bind1(x)


elementwise(imag_p, "stablehlo.imag", "c", out_dtype=_real_dtype)
imag_p.def_host(lambda x: x.imag)  # a view
linear_jvp(imag_p)
linear_transpose_rule(imag_p, lambda ct, aval: complex(zeros_like(ct), neg(ct)))


# --- conj -----------------------------------------------------------------------------------

conj_p = Primitive("conj")


def conj(x: ArrayLike) -> Any:
    """Elementwise complex conjugate; the identity on real floating input.

    NB: JAX's `lax.conj` turns real input into complex; this keeps the dtype, as `numpy.conj`.
    """
    return conj_p.bind1(x)


def _conj_lowering(ctx: LoweringContext, x):
    if x.aval.dtype.kind != "c":
        return x
    return ctx.builder.op("chlo.conj", [x], ctx.aval_out.strip_weak_type())


elementwise(conj_p, _conj_lowering, "fc")
_conjugate = host.ufunc(np.conjugate)
conj_p.def_host(lambda x: _conjugate(x) if x.dtype.kind == "c" else x)
linear_jvp(conj_p)
linear_transpose_rule(conj_p, lambda ct, aval: conj(ct))


# --- complex --------------------------------------------------------------------------------

complex_p = Primitive("complex")


def complex(x: ArrayLike, y: ArrayLike) -> Any:  # noqa: A001  (the lax name, as in JAX)
    """Elementwise `x + 1j * y` from float32 (or float64) parts, as complex64 (or complex128)."""
    return complex_p.bind1(x, y)


elementwise(complex_p, "stablehlo.complex", "f", out_dtype=_complex_dtype)
complex_p.def_host(host.complex_from_parts)
linear_jvp(complex_p)


@complex_p.def_transpose
def _complex_transpose(ct, x, y):
    return [
        unbroadcast(real(ct), x.aval) if is_undefined_primal(x) else None,
        unbroadcast(neg(imag(ct)), y.aval) if is_undefined_primal(y) else None,
    ]


__all__ = ["complex", "conj", "imag", "real"]
